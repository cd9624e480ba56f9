"""The communication signals' enums and rules as pto-isa defines them (include/pto/comm/comm_types.hpp
NotifyOp, WaitCmp; include/pto/comm/a2a3/TWait.hpp's loop constants, at 3186c381): plain integers,
tuples and one comparison, which the frontend (the builtins' names), the executors and the timing
model share (isa/58_comm_signals.toml)."""

CMPS = ("eq", "ne", "gt", "ge", "lt", "le")           # WaitCmp: EQ = 0, NE, GT, GE, LT, LE = 5
CMP_TEXT = ("==", "!=", ">", ">=", "<", "<=")
OPS = ("atomic_add", "set")                            # NotifyOp: AtomicAdd = 0, Set = 1
OP_ADD, OP_SET = 0, 1
SPIN_LIMIT = 100_000_000     # TWait.hpp kMaxSpinCount: its PTO_ASSERT fires at the spin after it
FENCE_INTERVAL = 64          # TWait.hpp kFenceInterval: pipe_barrier(PIPE_ALL) every 64th failed spin


def satisfied(value: int, cmp: int, target: int) -> bool:
    """CompareSignalRuntime (TWait.hpp) / TestCompareSignal (TTest.hpp): value <cmp> target."""
    if cmp == 0:
        return value == target
    if cmp == 1:
        return value != target
    if cmp == 2:
        return value > target
    if cmp == 3:
        return value >= target
    if cmp == 4:
        return value < target
    return value <= target
