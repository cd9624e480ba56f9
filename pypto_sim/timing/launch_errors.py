"""The errors a lane launch ends with, built from the simulation's program and tables: a lane
out of bounds, a block barrier nobody can complete, the cycle limit. Each names the kernel,
the line and what to do (the AI core's deadlocks: timing/aicore.py)."""
from __future__ import annotations

from ..errors import DeadlockError, OutOfBoundsError, SimulationLimitError
from ..ir.program import C_AUX
from ..isa.run_time_checks import check_error
from ..exec.aicore_tiles import UNIT_NAMES



def cycle_limit(sim, unfinished: int, where=()) -> SimulationLimitError:
    """A launch still running at its cycle limit, with unfinished warps. where lists (block
    id, warp, pc) of each unfinished warp (a unit of an AI core), in order: the instruction it
    would issue next or waits at (EXIT when it only waits for its stores or pipes). The error's
    line is the first warp's; the message names every line warps are at, the busiest first."""
    at: dict = {}                  # line -> the warps there
    first = None
    for block_id, w, pc in where:
        line = sim.prog.instrs[pc].line if 0 <= pc < len(sim.prog.instrs) else None
        first = line if first is None else first
        at.setdefault((line, pc >= 0 and sim.prog.instrs[pc].op == "EXIT"), []).append(
            f"block {block_id} {UNIT_NAMES[w] if sim.aicore else f'warp {w}'}")
    places = []
    for (line, ends), who in sorted(at.items(), key=lambda kv: -len(kv[1]))[:4]:
        what = ("the end of the kernel, waiting for its stores or pipes" if ends else
                f"`{sim.prog.source_lines.get(line, '').strip()}`")
        places.append(f"line {line} ({what}): {', '.join(who[:3])}"
                      + (f" and {len(who) - 3} more" if len(who) > 3 else ""))
    more = f"; and {len(at) - 4} more lines" if len(at) > 4 else ""
    kind = ("unit" if sim.aicore else "warp") + ("" if unfinished == 1 else "s")
    return SimulationLimitError(
        f"the kernel was still running after the cycle limit of {sim.max_cycles} "
        f"cycles ({unfinished} {kind} unfinished" + (f", at {'; '.join(places)}{more})" if places else ")"),
        kernel=sim.kernel_name, file=sim.prog.file,
        line=first if first is not None else sim.prog.first_line, limit=sim.max_cycles,
        hint="raise the limit (max_cycles=...) or look for a loop that never ends"
             + (f" (line {first})" if first is not None else ""))


def lane_out_of_bounds(sim, pc, blk, w, info) -> OutOfBoundsError:
    """Lane info = (lane, offset, count) of instruction pc went past its tensor, L1 buffer or
    local array."""
    lane, offset, count = int(info[0]), int(info[1]), int(info[2])
    ins = sim.prog.instrs[pc]
    if sim.pc_family[pc] == "check":
        unit = UNIT_NAMES[w] if sim.aicore else f"warp {w}, lane {lane}"
        return check_error(ins, info, f"{unit} of block {blk.coords}", kernel=sim.kernel_name,
                           file=sim.prog.file, block=blk.coords, warp=w, lane=None if sim.aicore else lane)
    if sim.pc_family[pc] == "local":
        return OutOfBoundsError(
            f"{ins.op} out of bounds: block {blk.coords}, warp {w}, lane {lane} (local id "
            f"{w * 32 + lane}) indexed {ins.comment}[{offset}] but the local array "
            f"'{ins.comment}' has {count} elements (valid 0..{count - 1})",
            kernel=sim.kernel_name, file=sim.prog.file, line=ins.line, block=blk.coords,
            warp=w, lane=lane, offset=offset, count=count, tensor=ins.comment,
            hint="keep the index within the array, or make the array larger")
    target = ins.comment or "memory"
    kind = "L1 buffer" if sim.pc_mem[pc] == "l1" else "tensor"
    if kind == "tensor":
        tensor = sim.tensor_names[int(sim.enc.code[pc, C_AUX])]
        if tensor and tensor != target:
            kind = f"tensor {tensor} passed as"
    return OutOfBoundsError(
        f"{ins.op} out of bounds: block {blk.coords}, warp {w}, lane {lane} (local id "
        f"{w * 32 + lane}) accessed {target}[{offset}] but the {kind} '{target}' has "
        f"{count} elements (valid 0..{count - 1})",
        kernel=sim.kernel_name, file=sim.prog.file, line=ins.line, block=blk.coords, warp=w,
        lane=lane, offset=offset, count=count, tensor=target,
        hint="guard the access with a bounds check such as `if i < n:`, or allocate more")


def barrier_deadlock(sim, stuck) -> DeadlockError:
    """Events ran out with warps waiting at barrier_block(); stuck lists (block id, warp, pc
    it waits at or None), in order."""
    waiting = []
    for block_id, w, pc in stuck:
        if pc is not None:
            line = sim.prog.instrs[pc].line
            text = sim.prog.source_lines.get(line, "").strip()
            waiting.append(f"block {block_id} warp {w} waits at line {line} ({text})")
    first = next((pc for _b, _w, pc in stuck if pc is not None), None)
    line = sim.prog.instrs[first].line if first is not None else None
    return DeadlockError(
        "barrier_block() can never complete: " + "; ".join(waiting[:8])
        + (f" (and {len(waiting) - 8} more)" if len(waiting) > 8 else ""),
        kernel=sim.kernel_name, file=sim.prog.file, line=line,
        hint="every warp of the block that is still running must reach the same barrier_block(); "
             "do not put it inside a branch that only some warps take")
