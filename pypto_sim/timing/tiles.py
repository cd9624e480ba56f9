"""Tile instructions in the timing model: block-level operations that warp 0 of a block
dispatches to a pipe and that run there asynchronously.

A tile operation starts when its pipe takes it (pipes are in order), when the tiles it reads
have been written (RAW), when the tiles it writes are no longer being read or written
(WAR/WAW), and after the operations of the pipeline stages it comes ``after``. Those hazards
are tracked on L1 word ranges, so a multi-buffered pipeline overlaps exactly as far as its
buffers allow, and ``depth=1`` serialises. Costs:

- TLOAD / TSTORE: latency + the bytes' transfer on the core's HBM link and the chip
  (the same bandwidth model as lane loads and stores); the pipe is held for the instruction's
  issue_interval per request, so DMA requests pipeline behind each other on the link. With an
  L2 in the machine table (timing/l2.py) a load's lines that hit cross the L2's chip link
  instead of HBM's, and a load that hits every line saves l2_miss_extra_latency; stores
  allocate their lines too, and those that hit stay in the write-back L2 (docs/timing.md, "L2");
- MMA: latency + ceil(m/16) * ceil(k/k_tile) * ceil(n/16) repeats * per_repeat (k_tile and
  per_repeat for float16 inputs, the _f32 variants for float32), holding the pipe throughout;
- vector tile ops: latency + ceil(ceil(bytes / repeat_bytes) * per_repeat), holding the pipe.

The fixed part ("latency") is the launch's per-pc latency: the table's, less the saving of a
fusion rule when the operation is the second of a fused pair (timing/fusion.py).

Values are computed by the lane executor's tile kernels at the cycle the operation completes.
"""
from __future__ import annotations

import math

from ..dtypes import BY_CODE
from ..isa import PIPES
from ..ir.program import C_AUX, C_DTYPE, C_SRC
from ..exec.aicore_tiles import (short_stride_error, tile_bounds_error, transfer_past_tensor_error,
                                 transfer_size_error)
from ..exec.functional import deadlock_on_flag
from ..exec.gm import window_elements
from ..exec.isa_codes import tile_dims
from .peaks import vector_cycles


class TileRange:
    """Completion times (and the instructions) of the last write and last read of an L1 range."""

    __slots__ = ("lo", "hi", "write_done", "read_done", "write_pc", "read_pc")

    def __init__(self, lo, hi):
        self.lo, self.hi, self.write_done, self.read_done = lo, hi, 0, 0
        self.write_pc = self.read_pc = -1


class TileEngine:
    """Per-block tile state: hazards on L1 ranges, stage completion times, event flags."""

    def __init__(self):
        self.ranges: list = []
        self.done = 0                     # completion of every tile op dispatched so far
        self.stage_done: dict = {}        # stage tag -> (completion of its ops so far, pc)
        self.pipe_done = [0] * len(PIPES)  # per pipe: completion of its last op
        self.flags: dict = {}             # (src, dst, event) -> list of fire times
        self.flag_hold = [0] * len(PIPES)  # per pipe: ops after a wait_flag start no earlier

    def _overlapping(self, lo, hi):
        for r in self.ranges:
            if r.lo < hi and lo < r.hi:
                yield r

    def ready_time(self, reads, writes):
        """(earliest start allowed by RAW/WAR/WAW hazards on these (lo, hi) word ranges, the
        binding hazard's kind 'raw' or 'war', the pc of the instruction it waits for)."""
        t, kind, pc = 0, None, -1
        for lo, hi in reads:
            for r in self._overlapping(lo, hi):
                if r.write_done > t:
                    t, kind, pc = r.write_done, "raw", r.write_pc
        for lo, hi in writes:
            for r in self._overlapping(lo, hi):
                if r.write_done > t:
                    t, kind, pc = r.write_done, "raw", r.write_pc
                if r.read_done > t:
                    t, kind, pc = r.read_done, "war", r.read_pc
        return t, kind, pc

    def record(self, reads, writes, complete, pipe, tag, pc):
        for lo, hi in reads:
            r = self._range(lo, hi)
            if complete >= r.read_done:
                r.read_done, r.read_pc = complete, pc
        for lo, hi in writes:
            r = self._range(lo, hi)
            if complete >= r.write_done:
                r.write_done, r.write_pc = complete, pc
        self.done = max(self.done, complete)
        self.pipe_done[pipe] = max(self.pipe_done[pipe], complete)
        if tag and complete >= self.stage_done.get(tag, (0, -1))[0]:
            self.stage_done[tag] = (complete, pc)

    def _range(self, lo, hi):
        for r in self.ranges:
            if r.lo == lo and r.hi == hi:
                return r
        r = TileRange(lo, hi)
        self.ranges.append(r)
        return r

    def after_time(self, after_mask):
        """(completion of the operations of the stages in after_mask, bit i = stage tag i+1,
        and the pc of the last of them)."""
        t, pc, tag = 0, -1, 1
        while after_mask:
            if after_mask & 1:
                done, last = self.stage_done.get(tag, (0, -1))
                if done > t:
                    t, pc = done, last
            after_mask >>= 1
            tag += 1
        return t, pc


def mma_cycles(machine, m, n, k, a_is_f32, latency=None):
    """Cycles of one MMA: latency + repeats x cycles per repeat (the cube formula).
    ``latency`` overrides the table's fixed part (a fused MMA's)."""
    k_tile = machine.cost_term("MMA", "k_tile_f32" if a_is_f32 else "k_tile")
    per = machine.cost_term("MMA", "per_repeat_f32" if a_is_f32 else "per_repeat")
    repeats = math.ceil(m / 16) * math.ceil(k / k_tile) * math.ceil(n / 16)
    fixed = machine.latency("MMA") if latency is None else latency
    return fixed + int(math.ceil(repeats * per - 1e-9))


def _operand(code, imm, regs, pc, j):
    r = code[pc, C_SRC + j]
    return imm[pc, j] if r < 0 else regs[r, 0]


def dispatch(sim, pc, core, blk, w, ws, now):
    """Warp 0 hands tile instruction pc to its pipe at cycle now. Schedules the values at
    completion; returns (start, complete, bytes moved, stall cause name, the pc waited for)."""
    spec, m, eng = sim.pc_spec[pc], sim.m, blk.tiles
    code, imm, prog = sim.enc.code, sim.enc.imm, sim.prog
    vals = [_operand(code, imm, ws.regs, pc, j) for j in range(len(spec.value_operands))]
    slot, tag, after = (int(x) for x in code[pc, C_AUX:C_AUX + 3])
    pipe = sim.pc_pipe[pc]
    reads, writes, fam = [], [], spec.family
    buf = sim.buffer_at

    def tile(j):
        """(first word, buffer, words) of tile operand j: the words its shape operands cover
        (isa_codes.tile_dims, the functional runner's table too), each positive on its own
        (-1 x -1 is not one word), within the operand's alloc_local buffer."""
        dims = tile_dims(spec)[j]
        if not dims:
            raise AssertionError(f"{spec.name}: operand {j} has no shape in isa_codes._TILE_DIMS")
        sizes = tuple((spec.value_operands[d].name, int(vals[d])) for d in dims)
        extent = math.prod(v for _, v in sizes)
        base = int(vals[j])
        lo, hi, b = buf(base)
        if b is None or base + extent > hi or extent <= 0 or any(v <= 0 for _, v in sizes):
            # name the kernel's variable (the alloc_local buffer), and the operand it was
            raise tile_bounds_error(sim.kernel_name, prog, pc, spec.value_operands[j].name, b, base, extent, lo,
                                    hi, blk.coords, w, sizes)
        return base, b, extent

    moved = 0
    if fam in ("tile_load", "tile_store"):
        t_j, h_j = (0, 1) if fam == "tile_load" else (1, 0)
        rows, cols, stride = (int(v) for v in vals[2:5])
        if rows <= 0 or cols <= 0:
            raise transfer_size_error(sim.kernel_name, prog, pc, rows, cols, blk.coords, w)
        if rows > 1 and stride < cols:      # the class the functional runner and the AI core raise
            raise short_stride_error(sim.kernel_name, prog, pc, rows, cols, stride, sim.tensor_names[slot],
                                     blk.coords, w)
        base, b, _ = tile(t_j)
        off = int(vals[h_j])
        last = off + (rows - 1) * stride + cols
        if off < 0 or last > sim.tcount[slot] or rows <= 0 or cols <= 0:
            raise transfer_past_tensor_error(sim.kernel_name, prog, pc, rows, cols, stride, off,
                                             sim.tensor_names[slot], int(sim.tcount[slot]), blk.coords, w)
        (writes if fam == "tile_load" else reads).append((base, base + rows * cols))
        # bytes that cross the HBM link: the tensor's elements (a store may round to a narrower dtype)
        moved = rows * cols * BY_CODE[int(code[pc, C_DTYPE])].itemsize
    elif fam == "tile_mma":
        mm, nn, kk = (int(v) for v in vals[3:6])
        (c, _, cn), (a, ab, an), (bb_, _, bn) = tile(0), tile(1), tile(2)
        reads += [(a, a + an), (bb_, bb_ + bn), (c, c + cn)]
        writes.append((c, c + cn))
    elif fam == "tile_alu":
        tiles = [j for j, o in enumerate(spec.value_operands) if o.kind == "tile"]
        n = int(vals[[o.name for o in spec.value_operands].index("n")])
        for j in tiles:
            base, b, _ = tile(j)
            (writes if j == 0 else reads).append((base, base + n))
            if j == 0 and spec.reads_dst:
                reads.append((base, base + n))
        moved = n * b.dtype.itemsize
    elif fam == "tile_col_reduce":
        rows, cols = int(vals[2]), int(vals[3])
        sbase, b, _ = tile(1)
        dbase, _, _ = tile(0)
        reads.append((sbase, sbase + rows * cols))
        writes.append((dbase, dbase + cols))
        moved = rows * cols * b.dtype.itemsize
    elif fam in ("tile_expand_op", "tile_col_expand_op"):
        rows, cols = int(vals[3]), int(vals[4])
        vlen = rows if fam == "tile_expand_op" else cols
        dbase, b, _ = tile(0)
        abase, _, _ = tile(1)
        vbase, _, _ = tile(2)
        reads += [(abase, abase + rows * cols), (vbase, vbase + vlen)]
        writes.append((dbase, dbase + rows * cols))
        moved = rows * cols * b.dtype.itemsize
    elif fam == "tile_col_expand":
        rows, cols = int(vals[2]), int(vals[3])
        dbase, b, _ = tile(0)
        sbase, _, _ = tile(1)
        reads.append((sbase, sbase + cols))
        writes.append((dbase, dbase + rows * cols))
        moved = rows * cols * b.dtype.itemsize
    elif fam in ("tile_reduce", "tile_expand"):
        rows, cols = int(vals[2]), int(vals[3])
        big, small = (1, 0) if fam == "tile_reduce" else (0, 1)
        bbase, b, _ = tile(big)
        sbase, _, _ = tile(small)
        if fam == "tile_reduce":
            reads.append((bbase, bbase + rows * cols))
            writes.append((sbase, sbase + rows))
        else:
            reads.append((sbase, sbase + rows))
            writes.append((bbase, bbase + rows * cols))
        moved = rows * cols * b.dtype.itemsize

    hazard, kind, hazard_pc = eng.ready_time(reads, writes)
    after_t, after_pc = eng.after_time(after)
    start = max(now, core.pipe_free[pipe], hazard, after_t, eng.flag_hold[pipe])
    # the binding constraint, for bubble reports: what this operation waited for
    cause, cause_pc = "none", -1
    if start > now:
        if start == hazard:
            cause, cause_pc = ("tile_raw" if kind == "raw" else "tile_war"), hazard_pc
        elif start == after_t:
            cause, cause_pc = "after", after_pc
        elif start == eng.flag_hold[pipe]:
            cause = "flag"
        else:
            cause = "pipe"
    fixed = sim.pc_lat[pc]              # the table's latency, less a fusion rule's saving
    if fam == "tile_load":
        core.pipe_free[pipe] = start + sim.pc_ii[pc]
        rows, cols, stride = (int(v) for v in vals[2:5])
        gm = (slot, int(vals[1]), rows, cols, stride, moved // max(rows * cols, 1))
        saving, hbm_bytes = sim.l2_touch(gm, read=True)
        complete = start + fixed - saving + sim._transfer(core, moved, start, read=True,
                                                            hbm_bytes=hbm_bytes)
    elif fam == "tile_store":
        core.pipe_free[pipe] = start + sim.pc_ii[pc]
        rows, cols, stride = (int(v) for v in vals[2:5])
        _, hbm_bytes = sim.l2_touch((slot, int(vals[0]), rows, cols, stride, moved // max(rows * cols, 1)),
                                    read=False)
        complete = start + fixed + sim._transfer(core, moved, start, read=False, hbm_bytes=hbm_bytes)
    elif fam == "tile_mma":
        complete = start + mma_cycles(m, mm, nn, kk, ab.dtype.itemsize == 4, latency=fixed)
        core.pipe_free[pipe] = complete
    else:
        complete = start + vector_cycles(m, spec.name, moved, latency=fixed)
        core.pipe_free[pipe] = complete
    if sim.checks:
        hbm_reads = None
        if fam == "tile_load" and sim.checks.init:
            rows, cols, stride = (int(v) for v in vals[2:5])
            item = moved // max(rows * cols, 1)
            hbm_reads = window_elements(int(vals[1]), rows, cols, stride) * item + int(sim.tbase[slot])
        sim.checks.tile_access(pc, blk, reads, writes, blk.tile_seq, now, hbm_reads)
    blk.tile_seq += 1
    core.tile_spans[pipe].append((start, core.pipe_free[pipe]))   # lane ops keep out
    eng.record(reads, writes, complete, pipe, tag, pc)
    sim.schedule_tile_effect(pc, vals, slot, complete - now, blk)
    return start, complete, moved, cause, cause_pc


def flag(sim, pc, blk, now):
    """SET_FLAG / WAIT_FLAG at dispatch: flags fire when the source pipe has drained."""
    src, dst, event = (int(x) for x in sim.enc.code[pc, C_AUX:C_AUX + 3])
    eng = blk.tiles
    key = (src, dst, event)
    if sim.pc_name[pc] == "SET_FLAG":
        eng.flags.setdefault(key, []).append(max(now, eng.pipe_done[src]))
        return
    pending = eng.flags.get(key)
    if not pending:
        raise deadlock_on_flag(sim.kernel_name, sim.prog, pc, key)
    eng.flag_hold[dst] = max(eng.flag_hold[dst], pending.pop(0))
