"""SYNCALL's participant sets and what A2/A3 issues for each (pto-isa 3186c381,
include/pto/npu/a2a3/SyncAll.hpp SYNCALL_IMPL; flag ids from include/pto/common/type.hpp).

core_type 'aiv' (SyncCoreType::AIVOnly): every AIV runs ffts_cross_core_sync(PIPE_MTE3, mode 0,
SYNC_AIV_ONLY_ALL = 14) and wait_flag_dev(14): one hop. 'aic' (AICOnly): every AIC, on
SYNC_AIC_FLAG = 11 from PIPE_FIX: one hop. 'mix': each AIV signals its AIC (mode 2,
SYNC_AIV_FLAG = 12), the AICs sync (mode 0, 11), each AIC signals its AIVs (mode 2,
SYNC_AIC_AIV_FLAG = 13): three hops. Each hop is one CROSS_CORE_SET_FLAG and one
CROSS_CORE_WAIT_FLAG; all of it after a pipe_barrier(PIPE_ALL).

Soft mode (include/pto/common/syncall_soft.hpp SYNCALL_SOFT_ATOMIC_BARRIER, A2/A3): each
participant reads the int32 counter in GM (ld_dev), adds 1 to it (st_atomic), and polls it
(ld_dev, back to back) until it reaches soft_target of what it read; soft_release is when the
first poll to see it returns.

Plain integers and tuples, so that the compiled engine can import them as constants.
"""
KINDS = ("aiv", "aic", "mix")
KIND_AIV, KIND_AIC, KIND_MIX = 0, 1, 2
FLAG_IDS = ((14,), (11,), (11, 12, 13))        # by kind: the FFTS flags the header uses
HOPS = (1, 1, 3)                               # by kind: set -> wait hops to the release


def participates(kind: int, unit: int) -> bool:
    """Whether unit (0 the AIC, 1 and 2 the AIVs) takes part in a SYNCALL of kind."""
    return kind == KIND_MIX or (kind == KIND_AIC) == (unit == 0)


def soft_target(before: int, total: int) -> int:
    """SYNCALL_SOFT_ATOMIC_BARRIER's target: (before / totalBlocks + 1) * totalBlocks in int32
    arithmetic (C++'s division truncates toward zero)."""
    quotient = abs(before) // total * (1 if before >= 0 else -1)
    return (quotient + 1) * total


def soft_release(first_poll: int, reached: int, poll: int) -> int:
    """The cycle a unit whose polls of the counter issue at first_poll, first_poll + poll, ...
    (each a LOAD of latency poll, issued as the previous returns) goes on when the counter
    reached its target at cycle reached: the first poll issued at or after it, returned."""
    polls = max(0, -(-(reached - first_poll) // poll))
    return first_poll + (polls + 1) * poll
