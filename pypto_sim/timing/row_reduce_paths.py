"""pto-isa's fast fp32 row reductions as machine-table data (a table's [row_reduce_fp32]).

On A2/A3, TROWSUM / TROWMAX / TROWMIN of a float32 source whose static shape is all valid and
one of four shapes, into a DN column, do not run the generic TRowReduceInstr (n - 1 binary
passes and a vcadd a row) but a short tree of CCE intrinsics (TryOptimizeFP32Reduce,
include/pto/npu/a2a3/TRowReduceOps.hpp). The table holds that tree and the intrinsics' costs:

    [row_reduce_fp32.shapes]  "RxC" = { steps = [["group", repeats], ["binary", repeats], ...] }
    [row_reduce_fp32.ops]     OP = { group = "<intrinsic>", binary = "<intrinsic>" }
    [row_reduce_fp32.cce]     <intrinsic> = { head, slope, tail }

and ``price`` turns them into one tile instruction's cost the way pto-isa's CCE mock charges
the sequence (cce_costmodel_core.hpp EstimateLinearCycles; pto_costmodel_pipe_barrier): each
step costs slope x repeats; a step after a pipe_barrier(PIPE_V) pays its head (the barrier
empties the V queue), the barrier settles the step before it's tail and costs the machine's
PIPE_BARRIER latency. The first step's head and the last step's tail are the instruction's
head and tail, which the AI core charges as it does every vector op's (head only when V is
idle, tail at the next sync on V).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import MachineError

STEP_KINDS = ("group", "binary")      # TRowReduceOp's GroupReduceInstrImpl and BinInstrImpl
_CCE_KEYS = ("head", "slope", "tail")


@dataclass(frozen=True)
class FastRowReduce:
    """One fast path's cost: head (first step's, only when V is idle), body (every cycle from
    the first step's repeats to the end of the last step's repeats) and tail (the last
    step's, settled at the next sync on V); steps are (intrinsic, repeats) in issue order."""

    head: int
    body: int
    tail: int
    steps: tuple


def parse(path, section, isa) -> dict:
    """Validate a table's [row_reduce_fp32] section; return {"shapes": {(rows, cols): steps},
    "ops": {OP: {kind: intrinsic}}, "cce": {intrinsic: (head, slope, tail)}} ({} when absent).
    Raises MachineError naming the file and entry."""
    if not section:
        return {}
    where = f"{path}: [row_reduce_fp32"
    if set(section) != {"shapes", "ops", "cce"}:
        raise MachineError(f"{where}] must have exactly the sub-tables shapes, ops and cce",
                           hint="see latency_tables/ascend910b.toml [row_reduce_fp32.*]")
    cce = {}
    for name, entry in section["cce"].items():
        _need_source(f"{where}.cce] {name}", entry, _CCE_KEYS)
        values = tuple(entry[k] for k in _CCE_KEYS)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values) or values[1] < 1:
            raise MachineError(f"{where}.cce] {name}: head, slope and tail must be whole cycles "
                               f"(slope >= 1), not {values}")
        cce[name] = values
    ops = {}
    for op, entry in section["ops"].items():
        _need_source(f"{where}.ops] {op}", entry, STEP_KINDS)
        if op not in isa.by_name or isa.by_name[op].family != "tile_reduce":
            raise MachineError(f"{where}.ops] {op} is not a row reduction of the ISA (family tile_reduce)")
        for kind in STEP_KINDS:
            if entry[kind] not in cce:
                raise MachineError(f"{where}.ops] {op}: {kind} = {entry[kind]!r} names no [row_reduce_fp32.cce] entry")
        ops[op] = {kind: entry[kind] for kind in STEP_KINDS}
    shapes = {}
    for key, entry in section["shapes"].items():
        _need_source(f"{where}.shapes] {key}", entry, ("steps",))
        try:
            rows, cols = (int(x) for x in key.split("x"))
        except ValueError:
            raise MachineError(f"{where}.shapes] {key!r} must be ROWSxCOLS, e.g. \"32x256\"") from None
        steps = entry["steps"]
        ok = isinstance(steps, list) and steps and all(
            isinstance(s, list) and len(s) == 2 and s[0] in STEP_KINDS and isinstance(s[1], int)
            and not isinstance(s[1], bool) and s[1] >= 1 for s in steps)
        if not ok or rows < 1 or cols < 1:
            raise MachineError(f"{where}.shapes] {key}: steps must be a list of [kind, repeats] with kind "
                               f"one of {STEP_KINDS} and repeats >= 1, not {steps!r}")
        shapes[(rows, cols)] = tuple((kind, reps) for kind, reps in steps)
    return {"shapes": shapes, "ops": ops, "cce": cce}


def _need_source(where, entry, keys):
    if not isinstance(entry, dict) or set(entry) != set(keys) | {"source"} or not str(entry["source"]).strip():
        raise MachineError(f"{where} must be {{ {', '.join(f'{k} = ...' for k in keys)}, source = \"...\" }}",
                           hint="every number names its source")


def price(table: dict, name: str, dtype: str, rows: int, cols: int, barrier: int):
    """The FastRowReduce of op ``name`` on a float32 rows x cols source, or None when the
    table sends that op, dtype and shape down the generic path. ``barrier``: the cycles of one
    pipe_barrier(PIPE_V) (the machine's PIPE_BARRIER latency)."""
    if not table or dtype != "float32" or name not in table["ops"]:
        return None
    steps = table["shapes"].get((rows, cols))
    if steps is None:
        return None
    intrinsics = tuple((table["ops"][name][kind], reps) for kind, reps in steps)
    costs = [table["cce"][intr] for intr, _reps in intrinsics]
    body = 0
    for i, ((_intr, reps), (head, slope, tail)) in enumerate(zip(intrinsics, costs)):
        if i:      # the pipe_barrier before this step: the last step's tail, itself, this head
            body += costs[i - 1][2] + barrier + head
        body += slope * reps
    return FastRowReduce(costs[0][0], body, costs[-1][2], intrinsics)
