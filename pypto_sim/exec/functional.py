"""Functional-only mode: the same IR through the same executor, with no timing.

The whole grid runs inside numba (``run_grid``): each block runs its warps one after another,
each until it reaches a ``barrier_block()`` or the end; when every warp of the block is at the
barrier they all go on. Stores land at once and tile instructions run at once, in program order, on warp 0. For a
race-free kernel this computes exactly what the timing model computes (the shared corpus in
tests/test_modes.py runs in both), much faster; racy kernels can differ, as they can on
hardware from run to run. Bounds are checked as in timing mode.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import DeadlockError, OutOfBoundsError, SimulationLimitError
from ..ir.program import C_AUX, block_coords
from ..isa import PIPES, load_isa
from ..isa.run_time_checks import check_error
from .aicore_tiles import (buffer_at, buffer_spans, short_stride_error, tile_bounds_error, transfer_past_tensor_error,
                           transfer_size_error)
from .isa_codes import tile_dims
from .jit_clock import rate_text, run_clock
from .lane import executor

@dataclass
class FunctionalProfile:
    """What a functional-mode launch reports: no cycles, only how much it executed and how fast."""

    kernel_name: str
    grid: tuple
    block: tuple
    warp_instructions: int
    wall_seconds: float              # the run's own time, numba's compiling taken out
    compile_seconds: float = 0.0     # numba compiling (or loading) the executor during the run
    total_cycles = None
    mode = "functional"

    @property
    def stats(self) -> dict:
        """Simulation speed: warp-instructions per second."""
        secs = max(self.wall_seconds, 1e-9)
        return {"warp_instructions": self.warp_instructions, "wall_seconds": self.wall_seconds,
                "compile_seconds": self.compile_seconds,
                "warp_instructions_per_second": self.warp_instructions / secs}

    def report(self) -> str:
        s = self.stats
        return (f"kernel {self.kernel_name} (functional mode, no timing): grid={self.grid} "
                f"block={self.block}, {s['warp_instructions']} warp-instructions at "
                f"{rate_text(s['warp_instructions_per_second'], self.compile_seconds)}")

    def cycle_breakdown(self):
        raise TypeError("functional mode measures no cycles; profile with mode='timing' for them")


SLICE_SECONDS = 0.2
LANE_HBM = ("LOAD", "STORE", "FMA_STORE")
# the block-wide barriers (voting ones too): every live warp (AI-core unit) of the block meets
BLOCK_BARRIERS = ("BARRIER_BLOCK", "BARRIER_BLOCK_COUNT", "BARRIER_BLOCK_AND", "BARRIER_BLOCK_OR")
LANE_L1 = ("LOAD_L1", "STORE_L1")


def memory_space(spec) -> str | None:
    """Where a lane memory instruction goes: "hbm", "l1" (the block's L1: LOAD_L1, STORE_L1
    and the _L1 atomics) or None for an instruction that touches no lane memory."""
    if spec.name in LANE_HBM:
        return "hbm"
    if spec.name in LANE_L1:
        return "l1"
    if spec.family == "atomic":
        return "l1" if spec.name.endswith("_L1") else "hbm"
    return None


def run_functional(prog, encoded, grid, block, tensors, scalars, hbm, hbm_init, kernel_name,
                   tensor_names, max_instructions) -> FunctionalProfile:
    """Run a launch functionally; results land in hbm. Raises the kernel's errors."""
    ex = executor()
    code, imm = encoded.code, encoded.imm
    tbase = np.array([t[0] for t in tensors] or [0], np.int64)
    tcount = np.array([t[1] for t in tensors] or [0], np.int64)
    tbytes = np.array([t[2] for t in tensors] or [0], np.int64)
    depth = 1 + sum(1 for ins in prog.instrs if ins.op in ("IF", "LOOP"))
    info = np.zeros(8, np.int64)
    seed_regs = np.zeros((max(encoded.n_regs, 1), 32), np.float64)
    for arg in prog.args:
        if arg.reg is not None:
            seed_regs[prog.n_lane_slots + arg.reg.index, :] = scalars[arg.name]
    out = np.zeros(12, np.int64)
    # each alloc_local buffer's words (a tile operand must lie in one copy of one)
    spans = np.array([(lo, hi, b.count) for lo, hi, b in buffer_spans(prog)] or [(0, 0, 1)], np.int64)
    with run_clock() as clock:
        executed = _run_slices(ex, prog, code, imm, seed_regs, grid, block, hbm, hbm_init, tbase,
                               tcount, tbytes, depth, max_instructions, out, spans)
    status, block_id, w, pc = (int(x) for x in out[:4])
    if status != ex.RUN_EXIT:
        coords = block_coords(block_id, grid)
        info[:7] = out[5:12]
        if status == ex.RUN_BARRIER:
            line = prog.instrs[pc].line
            raise DeadlockError(
                f"barrier_block() can never complete: in block {coords} warp {w} waits at line "
                f"{line} but other warps of the block finished without reaching it",
                kernel=kernel_name, file=prog.file, line=line,
                hint="every warp of the block must reach each barrier_block()")
        if status == ex.RUN_FLAG:
            raise deadlock_on_flag(kernel_name, prog, pc, tuple(int(x) for x in encoded.code[pc, C_AUX:C_AUX + 3]))
        raise _error(status, prog, kernel_name, tensor_names, coords, w, pc, info,
                     max_instructions, tcount)
    return FunctionalProfile(kernel_name, grid, block, executed, clock.run_seconds,
                             compile_seconds=clock.compile_seconds)


def _run_slices(ex, prog, code, imm, seed_regs, grid, block, hbm, hbm_init, tbase, tcount, tbytes,
                depth, max_instructions, out, spans) -> int:
    """Run the grid's blocks in time slices; returns the warp-instructions executed (``out``
    holds the status)."""
    n_blocks = grid[0] * grid[1] * grid[2]
    grid_a, block_a = np.array(grid, np.int64), np.array(block, np.int64)
    first, chunk, executed = 0, 1, 0
    while first < n_blocks:
        # slices of about SLICE_SECONDS each: Python gets control back often enough for
        # Ctrl-C to stop a long launch within a second. The first slice is one block (a block
        # can be long: 16 of the Ctrl-C test's blocks ran 25 s before Python saw the signal);
        # the slices then grow at most 4x a time towards SLICE_SECONDS
        t0 = time.perf_counter()
        ex.run_grid(code, imm, seed_regs, grid_a, block_a, hbm, hbm_init, tbase, tcount, tbytes,
                    prog.local_words, depth, max_instructions, first, first + chunk, out, spans)
        executed += int(out[4])
        if out[0] != ex.RUN_EXIT:
            break
        first += chunk
        took = time.perf_counter() - t0
        chunk = max(1, min(chunk * 4, int(chunk * SLICE_SECONDS / took))) if took > 0 else chunk * 4
    return executed


def deadlock_on_flag(kernel, prog, pc, key):
    """The DeadlockError of a wait_flag (src pipe, dst pipe, event) = key at pc that no set_flag
    precedes (the article's tile API; the timing model's and the functional runner's)."""
    src, dst, event = key
    return DeadlockError(
        f"wait_flag({PIPES[src]!r}, {PIPES[dst]!r}, {event}) has no set_flag before it: the "
        f"{PIPES[dst]} pipe would wait forever", kernel=kernel, file=prog.file,
        line=prog.instrs[pc].line,
        hint="issue the matching pto.set_flag(src_pipe, dst_pipe, event) earlier in the kernel")


def _tile_out_of_buffer(prog, kernel_name, coords, w, pc, info) -> OutOfBoundsError:
    """A tile operand (info: pc, operand, first word, extent, its shape operands' values) outside its
    alloc_local buffer."""
    spec = load_isa()[prog.instrs[pc].op]
    j, base, extent = int(info[1]), int(info[2]), int(info[3])
    sizes = tuple((spec.value_operands[d].name, int(info[4 + i])) for i, d in enumerate(tile_dims(spec)[j]))
    lo, hi, buf = buffer_at(buffer_spans(prog), base)
    return tile_bounds_error(kernel_name, prog, pc, spec.value_operands[j].name, buf, base, extent, lo, hi,
                             coords, w, sizes)


def _transfer_fault(prog, kernel_name, tensor_names, coords, w, pc, info, tcount):
    """A tile transfer's fault other than its tile's (info[1], exec/compiled/functional.py's
    TF_*), as the timing model reports it: no rows or columns, a stride shorter than a row, or a
    window past its tensor."""
    ex = executor()
    kind = int(info[1])
    rows, cols, stride, off, slot = (int(x) for x in info[2:7])
    if kind == ex.TF_EMPTY:
        return transfer_size_error(kernel_name, prog, pc, rows, cols, coords, w)
    tensor = tensor_names[int(prog.instrs[pc].aux[0])] if kind == ex.TF_STRIDE else tensor_names[slot]
    if kind == ex.TF_STRIDE:
        return short_stride_error(kernel_name, prog, pc, rows, cols, stride, tensor, coords, w)
    return transfer_past_tensor_error(kernel_name, prog, pc, rows, cols, stride, off, tensor, int(tcount[slot]),
                                      coords, w)


def _error(status, prog, kernel_name, tensor_names, coords, w, pc, info, budget, tcount):
    ins = prog.instrs[pc]
    if status == 2 and load_isa()[ins.op].family == "check":
        lane = int(info[0])
        return check_error(ins, info, f"warp {w}, lane {lane} of block {coords}", kernel=kernel_name,
                           file=prog.file, block=coords, warp=w, lane=lane)
    if status == 2:
        lane, offset, count = int(info[0]), int(info[1]), int(info[2])
        target = ins.comment or "memory"
        kind = ""
        if memory_space(load_isa()[ins.op]) == "hbm" and ins.aux and 0 <= int(ins.aux[0]) < len(tensor_names):
            tensor = tensor_names[int(ins.aux[0])]      # as the launch names it (runtime/names.py)
            if tensor and tensor != target:
                kind = f"the tensor {tensor} passed as "
        return OutOfBoundsError(
            f"{ins.op} out of bounds: block {coords}, warp {w}, lane {lane} (local id "
            f"{w * 32 + lane}) accessed {target}[{offset}] but {kind}'{target}' has {count} elements "
            f"(valid 0..{count - 1})", kernel=kernel_name, file=prog.file, line=ins.line,
            block=coords, warp=w, lane=lane, offset=offset, count=count, tensor=target,
            hint="guard the access with a bounds check such as `if i < n:`, or allocate more")
    if status == 3 and int(info[1]) >= 0:
        return _tile_out_of_buffer(prog, kernel_name, coords, w, pc, info)
    if status == 3:
        return _transfer_fault(prog, kernel_name, tensor_names, coords, w, pc, info, tcount)
    return SimulationLimitError(
        f"warp {w} of block {coords} executed {budget} instructions without finishing",
        kernel=kernel_name, file=prog.file, line=ins.line, limit=budget,
        hint="raise the limit (max_cycles=..., also the functional mode's instruction budget) "
             "or look for a loop that never ends")
