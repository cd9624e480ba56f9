"""The AI core's flag errors, as both executors raise them (exec/aicore_functional.py, the
SimPy model in timing/aicore.py): a wait_flag no set_flag precedes, a cross-core flag's counter
overflowing, and units waiting for each other forever (of one AI core, or at a SYNCALL of the
launch)."""
from __future__ import annotations

from ..errors import DeadlockError
from ..ir.program import C_AUX, UNIT_NAMES
from ..isa import PIPES, PTO_PIPE_NAMES
from ..isa.syncall_modes import KINDS
from .comm_signals import deadlock_text

SYNCALL_UNITS = {"aiv": "AIV", "aic": "AIC", "mix": "AIC and AIV"}


def unset_flag_error(ctx, pc, unit, coords, key) -> DeadlockError:
    """A wait_flag of unit with no set_flag before it: its queue would wait forever."""
    src, dst, event = key
    return DeadlockError(
        f"wait_flag({PTO_PIPE_NAMES[PIPES[src]]}, {PTO_PIPE_NAMES[PIPES[dst]]}, {event}) on "
        f"{UNIT_NAMES[unit]} of block {coords} has no set_flag before it: the "
        f"{PTO_PIPE_NAMES[PIPES[dst]]} queue would wait forever", kernel=ctx.kernel_name,
        file=ctx.prog.file, line=ctx.prog.instrs[pc].line, block=coords, warp=unit, unit=UNIT_NAMES[unit],
        hint="set the flag earlier (real kernels pre-arm reverse flags before the loop and "
             "drain them after it)")


def cross_flag_overflow(ctx, pc, unit, coords, to, limit) -> DeadlockError:
    """The error of a cross_core_set_flag (pc, of unit) that would leave more than `limit`
    signals of its flag id to unit `to` untaken: A2/A3's 4-bit counter of a flag id holds 15,
    and a 16th set overflows it (the machine table's [aicore] cross_core_flag_limit)."""
    ins = ctx.prog.instrs[pc]
    event = int(ctx.enc.code[pc, C_AUX])
    return DeadlockError(
        f"cross_core_set_flag({event}) at line {ins.line} on {UNIT_NAMES[unit]} of block {coords} would be "
        f"signal {limit + 1} of flag {event} to {UNIT_NAMES[to]} that no cross_core_wait_flag has taken: "
        f"the flag's 4-bit counter holds {limit}, and A2/A3 raises an exception when it overflows or "
        "hangs (CANN's CrossCoreSetFlag constraint)", kernel=ctx.kernel_name, file=ctx.prog.file,
        line=ins.line, block=coords, warp=unit, unit=UNIT_NAMES[unit], lane=None,
        hint=f"have {UNIT_NAMES[to]} signal back (a reverse cross_core_set_flag this unit waits for) "
             f"before setting flag {event} again, so that at most {limit} signals are ever pending")


def cross_core_deadlock(ctx, stuck) -> DeadlockError:
    """The error of an AI core whose units wait for each other forever: stuck lists (block
    coords, unit, pc it waits at or None). A unit at a cross_core_wait_flag waits for a signal;
    one at any other instruction (a block barrier) for units that finished without reaching it.
    Its .block, .warp and .unit are the first waiting unit's."""
    waiting = []
    for block, unit, pc in stuck:
        if pc is None:
            continue
        ins = ctx.prog.instrs[pc]
        if ins.op == "CROSS_CORE_WAIT_FLAG":
            who = "both AIVs" if unit == 0 else "the AIC"
            waiting.append(f"block {block} {UNIT_NAMES[unit]} waits at line {ins.line} (cross_core_wait_flag"
                           f"({int(ctx.enc.code[pc, C_AUX])})) for a signal from {who} that never comes")
        elif ins.op == "SYNCALL":
            kind = KINDS[int(ctx.enc.code[pc, C_AUX])]
            waiting.append(f"block {block} {UNIT_NAMES[unit]} waits at line {ins.line} (pto.syncall('{kind}')) "
                           f"for every {SYNCALL_UNITS[kind]} of the launch, and one finished or waits elsewhere "
                           "without arriving")
        elif ins.op == "SYNCALL_SOFT":
            kind = KINDS[int(ctx.enc.code[pc, C_AUX])]
            waiting.append(f"block {block} {UNIT_NAMES[unit]} polls at line {ins.line} (pto.syncall('{kind}', "
                           f"workspace={ins.comment})) for a count the counter never reaches: fewer units arrive "
                           "than used_cores counts, or the counter did not start at a multiple of it (on the "
                           "device the poll gives up after 1,000,000 reads, SYNCALL_SOFT_MAX_POLL_ITERATIONS, and "
                           "the kernel runs on unsynchronised)")
        elif ins.op == "TWAIT":
            waiting.append(deadlock_text(ctx, block, unit, pc))
        else:
            waiting.append(f"block {block} {UNIT_NAMES[unit]} waits at line {ins.line} ({ins.op}) "
                           "for units that finished without reaching it")
    block, unit, first = next(((b, u, pc) for b, u, pc in stuck if pc is not None), (None, None, None))
    more = f" (and {len(waiting) - 6} more)" if len(waiting) > 6 else ""
    return DeadlockError(
        "cross-core deadlock: " + "; ".join(waiting[:6]) + more, kernel=ctx.kernel_name,
        file=ctx.prog.file, line=ctx.prog.instrs[first].line if first is not None else None,
        block=block, warp=unit, unit=UNIT_NAMES[unit] if unit is not None else None,
        hint=_hint(ctx, stuck))


def _hint(ctx, stuck) -> str:
    """What to do: pair the flags and syncalls; for a TWAIT, find the notify it misses."""
    ops = {ctx.prog.instrs[pc].op for _b, _u, pc in stuck if pc is not None}
    flags = ("every cross_core_wait_flag(id) needs a cross_core_set_flag(id) on the other side (on the AIC: one "
             "from each AIV); every participant of a pto.syncall must reach it as often as the others")
    if "TWAIT" not in ops:
        return flags
    signals = ("a pto.twait needs a pto.tnotify (or another write) of a unit still running that makes its comparison "
               "true: check the signal's offset, value and cmp against it; with more blocks than AI cores a waiting "
               "block holds its core, and a notifier that never gets one never runs")
    return signals if ops == {"TWAIT"} else f"{flags}; {signals}"
