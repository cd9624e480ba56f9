"""The real AI core in the timing model (docs/aicore.md): one block of an AI-core kernel is
one AI core, three units that each run the program on their own scalar unit - unit 0 the AIC
(cube core: L1, L0A/L0B/L0C, bias table; pipes MTE2, MTE1, M, FIX), units 1 and 2 the AIVs
(vector cores: UB each; pipes MTE2, V, MTE3).

Every unit has one in-order queue per pipe; the scalar unit hands each tile instruction to
its pipe at issue. An operation starts when its pipe has finished the one before it, when the
pipe's flag waits are satisfied and, with ``sync="auto"``, when the tiles it reads and writes
are no longer being written or read by another pipe (PTO-Auto's data ordering, as Perf-Sim's
TileDepTracker). With ``sync="manual"`` nothing but flags orders two pipes. An operation reads
its sources when it starts and writes its destination when it completes, so a missing flag
gives the stale value the hardware would; ``check="race"`` reports it (AICoreRaces).

Costs (machine table; sources there):
- TLOAD GM -> Mat / Vec (MTE2): latency + bytes over the unit's GM->L1 / GM->UB link, the L2's
  chip link and, for the lines that miss in L2, HBM's chip link; latency less the L2's miss
  extra when every line hits (timing/l2.py).
- TSTORE Vec / Mat -> GM (MTE3): latency + bytes over the UB->GM / L1->GM link and HBM.
- TSTORE Acc -> GM (FIX): the fixpipe drain drain_fixed + m * (max(drain_row, bytes_c * n /
  drain_bw) + drain_penalty * (odd part of ceil(n / n0) - 1)), n0 = drain_c0_bytes / bytes_c;
  at least the bytes' time on HBM.
- TEXTRACT / TMOV Mat -> Left / Right / Bias (MTE1): latency + bytes / the L1->L0A / L0B / BT
  bandwidth; TMOV Acc -> Mat (FIX): latency + bytes / the L0C->L1 bandwidth.
- TMATMUL* (M): latency + cpr * ceil(m/16) * ceil(k/k0) * ceil(n/16), k0 = 32 bytes of A's
  dtype, cpr = per_repeat (per_repeat_f32 for float32 inputs).
- vector ops (V): the machine's [formulas] row (pto-isa formula_params.csv: round(slope *
  rows * cols + bias) by op, dtype and cols) when there is one, else head (only when V is
  empty as the op starts: the previous op completed before it, or a sync on V came between
  them) + per_repeat per 256-byte repeat (+ unaligned_floor for rows that are not whole
  repeats), and the op's tail at the next sync on V, which keeps V busy.
The formulas themselves are in aicore_costs.py.
"""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import BY_CODE, host_words
from ..errors import DeadlockError, OutOfBoundsError
from ..isa import PIPES
from .aicore_costs import drain_cycles, matmul_cycles, vector_op_cycles
from .aicore_races import AICoreRaces, race_check
from .records import CAUSE
from .tiles import TileEngine, effect as vector_effect

UNIT_NAMES = ("AIC", "AIV0", "AIV1")
N_UNITS = 3
P = len(PIPES)
ALL = -1
MAX_MKN = 4095
ACC_SPACE = "Acc"


# the mask families' operand positions: (data view, mask view or None, rows operand; cols and
# the mask's row stride follow it)
MASK_LAYOUT = {"tile_cmp": (1, 0, 4), "tile_sel": (2, 1, 4), "tile_tri": (0, None, 3)}


class Unit:
    """One AIC or AIV: its pipes' queues and flags."""

    def __init__(self, index):
        self.index = index
        self.pipe_free = [0] * P     # when each pipe takes its next operation (in order)
        self.pipe_done = [0] * P     # completion of the last operation on each pipe
        self.flag_hold = [0] * P     # operations after a wait_flag start no earlier
        self.flags: dict = {}        # (src, dst, event) -> [(fire time, vector clock), ...]
        self.tail = [0] * P          # a vector op's tail, paid at the next sync on its pipe
        self.flushed = [True] * P    # a sync emptied the pipe since its last operation
        self.queued = [[] for _ in range(P)]   # per pipe: completions of the ops in its queue

    def queue_slot(self, pipe, t, depth) -> int:
        """The first cycle >= t at which pipe's queue has room for one more operation (the
        scalar unit stalls while it is full)."""
        q = self.queued[pipe]
        while q and q[0] <= t:
            q.pop(0)
        if len(q) >= depth:
            t = q[len(q) - depth]
            del q[:len(q) - depth + 1]
        return t

    def done(self) -> int:
        return max(self.pipe_done)

    def drained(self, pipe) -> int:
        """When everything queued on pipe (every pipe for ALL) is done, tails included. Called
        by a sync: it pays the pending tails, which keep the pipe busy, and empties the pipe, so
        its next operation pays its head again (pto-isa trace.hpp FlushPendingTail charges the
        tail and clears the pipe's queue)."""
        pipes = range(P) if pipe == ALL else (pipe,)
        t = max(self.pipe_done[p] + self.tail[p] for p in pipes)
        for p in pipes:
            if self.tail[p]:
                self.pipe_done[p] += self.tail[p]
                self.pipe_free[p] = max(self.pipe_free[p], self.pipe_done[p])
                self.tail[p] = 0
            self.flushed[p] = True
        return t

    def starts_empty(self, pipe, start) -> bool:
        """True when an operation starting at ``start`` finds the pipe empty, so it pays its
        head: a sync emptied the pipe since its last operation, or the last one had completed
        before this one starts (the pipeline drained in the gap)."""
        return self.flushed[pipe] or start > self.pipe_free[pipe]


class AICoreState:
    """Per block (one AI core): the units, the AIV1's UB, data hazards (auto sync), cross-core
    signals and, with check="race", the happens-before record."""

    def __init__(self, env, blk, race):
        self.env = env
        self.units = [Unit(i) for i in range(N_UNITS)]
        # units 0 and 1 share blk.l1 (AIC spaces and AIV0's UB are at different words); the
        # AIV1's UB is the same words of its own array
        self.arrays = (blk.l1, blk.l1, np.zeros_like(blk.l1))
        self.hazards = (TileEngine(), TileEngine())     # by array: blk.l1, AIV1's
        self.cross: dict = {}        # (to unit, event, from unit) -> [(fire time, clock), ...]
        self.cross_event = env.event()
        self.race = AICoreRaces() if race else None

    def array(self, unit):
        return self.arrays[unit]

    def hazard_engine(self, unit):
        return self.hazards[1 if unit == 2 else 0]

    def signal(self):
        event, self.cross_event = self.cross_event, self.env.event()
        event.succeed()


def _operand(code, imm, regs, pc, j):
    from ..ir.program import C_SRC
    r = code[pc, C_SRC + j]
    return imm[pc, j] if r < 0 else regs[r, 0]


class TileView:
    """A typed tile as the engine sees it: its buffer, word base, shape and row pitch, and the
    tile that owns its words (itself, or the tile a treshape / tsubview view looks into)."""

    __slots__ = ("buf", "base", "rows", "cols", "pitch", "slot", "root")

    def __init__(self, sim, word, what, pc, blk, unit, slot=-1):
        if slot >= 0:                     # the operand names its tile (views share words)
            b = sim.prog.buffers[slot]
            lo = b.offset
        else:
            lo, _hi, b = sim.buffer_at(int(word))
        if b is None or b.rows == 0:
            raise OutOfBoundsError(f"{sim.pc_name[pc]}: {what} is not a typed tile",
                                   kernel=sim.kernel_name, file=sim.prog.file,
                                   line=sim.prog.instrs[pc].line, block=blk.coords, warp=unit)
        self.buf, self.base, self.rows, self.cols, self.pitch = b, lo, b.rows, b.cols, b.row_pitch
        self.slot = sim.prog.buffers.index(b) if slot < 0 else slot
        root = self.slot
        while sim.prog.buffers[root].alias_of >= 0:
            root = sim.prog.buffers[root].alias_of
        self.root = root

    def grid(self, arr):
        """The tile's rows x cols elements in arr, as a writable numpy view."""
        if self.pitch == self.cols:
            return arr[self.base:self.base + self.rows * self.cols].reshape(self.rows, self.cols)
        return np.lib.stride_tricks.as_strided(arr[self.base:], (self.rows, self.cols),
                                               (self.pitch * arr.strides[0], arr.strides[0]))

    def words(self):
        """[lo, hi) of the words the tile's elements lie in (a window's also holds others)."""
        return self.base, self.base + (self.rows - 1) * self.pitch + self.cols

    def region(self):
        """(lo, hi, rows, cols, pitch): the elements, as the race check compares them."""
        return self.base, self.base + (self.rows - 1) * self.pitch + self.cols, self.rows, self.cols, self.pitch


def dispatch(sim, pc, blk, w, ws, now):
    """Unit w hands tile instruction pc to its pipe at cycle now. Schedules the read at the
    start and the write at the completion; returns (start, complete, bytes, cause, cause pc)."""
    ai, m = blk.aicore, sim.m
    unit = ai.units[w]
    spec = sim.pc_spec[pc]
    code, imm = sim.enc.code, sim.enc.imm
    vals = [_operand(code, imm, ws.regs, pc, j) for j in range(len(spec.value_operands))]
    iv = [int(v) if math.isfinite(v) else 0 for v in vals]
    from ..ir.program import C_AUX, C_DTYPE
    slot = int(code[pc, C_AUX])
    dt = BY_CODE[int(code[pc, C_DTYPE])]
    pipe = sim.pc_pipe[pc]
    arr = ai.array(w)
    fam, name = spec.family, spec.name
    fixed = sim.pc_lat[pc]
    reads, writes = [], []         # tile views read / written (hazards, races)
    gm = None                      # (slot, offset, rows, cols, stride, is_write, itemsize)

    def fault(msg, hint):
        return OutOfBoundsError(f"{name} at line {sim.prog.instrs[pc].line} on {UNIT_NAMES[w]} of "
                                f"block {blk.coords}: {msg}", kernel=sim.kernel_name,
                                file=sim.prog.file, line=sim.prog.instrs[pc].line, block=blk.coords,
                                warp=w, lane=None, hint=hint)

    tile_slots = sim.pc_tiles[pc]

    def view(j, what):
        return TileView(sim, iv[j], what, pc, blk, w, tile_slots[j] if j < len(tile_slots) else -1)

    def extent(t, rows, cols, what):
        if not (1 <= rows <= t.rows and 1 <= cols <= t.cols):
            raise fault(f"{what} of {rows} x {cols} does not fit tile '{t.buf.name}' ({t.rows} x "
                        f"{t.cols})", "keep valid=(rows, cols) within the tile's shape")

    def gm_check(off, rows, cols, stride):
        last = off + (rows - 1) * stride + cols
        if off < 0 or last > sim.tcount[slot]:
            raise fault(f"rows={rows} cols={cols} stride={stride} from element {off} reach element "
                        f"{last - 1} of '{sim.tensor_names[slot]}', which has {sim.tcount[slot]}",
                        "check the offsets, the stride and the tile's valid region against the tensor")
        return (int(sim.tbase[slot]) + off + np.arange(rows)[:, None] * stride + np.arange(cols)).ravel()

    stats = sim.aicore_stats
    if fam == "tile_load":
        t = view(0, "the destination")
        rows, cols, stride = iv[2], iv[3], iv[4]
        extent(t, rows, cols, "the load")
        idx = gm_check(iv[1], rows, cols, stride)
        nbytes = rows * cols * dt.itemsize
        writes.append(t)
        gm = (slot, iv[1], rows, cols, stride, False, dt.itemsize)
        bw = m.gm_to_l1_bytes_per_cycle if t.buf.space == "Mat" else m.gm_to_ub_bytes_per_cycle
        route = "gm_to_l1" if t.buf.space == "Mat" else "gm_to_ub"

        def compute():
            return sim.hbm[idx].reshape(rows, cols).copy()

        def commit(data):
            t.grid(arr)[:rows, :cols] = data
    elif fam == "tile_store":
        t = view(1, "the source")
        rows, cols, stride = iv[2], iv[3], iv[4]
        extent(t, rows, cols, "the store")
        idx = gm_check(iv[0], rows, cols, stride)
        nbytes = rows * cols * dt.itemsize
        reads.append(t)
        gm = (slot, iv[0], rows, cols, stride, True, dt.itemsize)
        route = "fix" if name == "TSTORE_ACC" else ("l1_to_gm" if t.buf.space == "Mat" else "ub_to_gm")
        bw = {"l1_to_gm": m.l1_to_gm_bytes_per_cycle, "ub_to_gm": m.ub_to_gm_bytes_per_cycle}.get(route)
        init = sim.hbm_init

        def compute():
            with np.errstate(over="ignore"):        # float32 -> float16 overflows to inf
                return host_words(t.grid(arr)[:rows, :cols].ravel(), dt)

        def commit(data):
            sim.hbm[idx] = data
            if init is not None:
                init[idx] = 1
    elif fam == "tile_move":
        d, s = view(0, "the destination"), view(1, "the source")
        rows, cols, r0, c0 = iv[2], iv[3], iv[4], iv[5]
        extent(d, rows, cols, "the copy")
        if r0 < 0 or c0 < 0 or r0 + rows > s.rows or c0 + cols > s.cols:
            raise fault(f"the window at ({r0}, {c0}) of {rows} x {cols} is outside '{s.buf.name}' "
                        f"({s.rows} x {s.cols})", "keep row + rows and col + cols within the source")
        reads.append(s)
        writes.append(d)
        nbytes = rows * cols * s.buf.dtype.itemsize
        bw = {"Left": m.l1_to_l0a_bytes_per_cycle, "Right": m.l1_to_l0b_bytes_per_cycle,
              "Bias": m.l1_to_bias_bytes_per_cycle, "Mat": m.l0c_to_l1_bytes_per_cycle}[d.buf.space]
        to = d.buf.dtype

        def compute():
            # the executor's strided copy (tile_load) with the source's row pitch
            win = np.empty(rows * cols, np.float64)
            sim.ex.tile_load(win, 0, arr, s.base + r0 * s.pitch + c0, rows, cols, s.pitch)
            if name == "TMOV_ACC":
                with np.errstate(over="ignore"):
                    win = host_words(win, to)
            return win.reshape(rows, cols)

        def commit(data):
            d.grid(arr)[:rows, :cols] = data
    elif fam == "tile_mma":
        c, a, b = view(0, "acc"), view(1, "left"), view(2, "right")
        mm, nn, kk = iv[3], iv[4], iv[5]
        for v, what in ((mm, "m"), (nn, "n"), (kk, "k")):
            if not 1 <= v <= MAX_MKN:
                raise fault(f"{what} = {v} is outside [1, {MAX_MKN}]", f"{name} takes m, k, n in [1, 4095]")
        extent(a, mm, kk, "left")
        extent(b, kk, nn, "right")
        extent(c, mm, nn, "the result")
        reads += [a, b] + ([c] if spec.reads_dst else [])       # _ACC reads the accumulator
        bias = view(6, "bias") if len(spec.value_operands) > 6 else None
        if bias is not None:
            reads.append(bias)
        writes.append(c)
        nbytes = 0
        out = c.buf.dtype

        def compute():
            with np.errstate(all="ignore"):          # inf * 0 is NaN, as on the cube
                res = a.grid(arr)[:mm, :kk] @ b.grid(arr)[:kk, :nn]
                if spec.reads_dst:
                    res = res + c.grid(arr)[:mm, :nn]
                elif bias is not None:
                    res = res + bias.grid(arr)[0, :nn]
                if out.is_float:
                    return res.astype(np.float32).astype(np.float64)
            return ((res.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.float64)

        def commit(data):
            c.grid(arr)[:mm, :nn] = data
    else:                                               # vector ops: dst is operand 0
        tiles = [j for j, o in enumerate(spec.value_operands) if o.kind == "tile"]
        views = [view(j, spec.value_operands[j].name) for j in tiles]
        writes.append(views[0])
        reads += views[1:] + ([views[0]] if spec.reads_dst else [])
        if fam == "tile_alu":
            n = iv[-1]
            for v in views:
                if n > v.rows * v.cols:
                    raise fault(f"{n} elements exceed tile '{v.buf.name}' ({v.rows} x {v.cols})",
                                "keep the valid rows within the tile")
            data = views[1] if len(views) > 1 else views[0]
            shape = (-(-n // views[0].cols), views[0].cols)
            nbytes = n * views[0].buf.dtype.itemsize            # dst's (TCVT converts)
        elif fam in MASK_LAYOUT:
            d, mk, r = MASK_LAYOUT[fam]
            data, mask, shape = views[d], (views[mk] if mk is not None else None), (iv[r], iv[r + 1])
            for v in views:          # a mask holds iv[r + 2] (mstride) bytes a row
                if shape[0] * (iv[r + 2] if v is mask else shape[1]) > v.rows * v.cols:
                    raise fault(f"{shape[0]} x {shape[1]} elements exceed tile '{v.buf.name}' "
                                f"({v.rows} x {v.cols})", "keep the valid rows within the tile")
        else:                   # operand j of the data, operand k of the rows (cols follow)
            j, k = {"tile_col_reduce": (1, 2), "tile_expand_op": (0, 3), "tile_col_expand_op": (0, 3),
                    "tile_reduce": (1, 2), "tile_fillpad": (0, 6), "tile_row_arg": (1, 2),
                    "tile_col_arg": (1, 2), "tile_trans": (1, 2)}.get(fam, (0, 2))
            data, shape = views[j], (iv[k], iv[k + 1])
        if fam != "tile_alu":
            nbytes = shape[0] * shape[1] * data.buf.dtype.itemsize
        run = vector_effect(sim, pc, vals, slot, blk, l1=arr)
        lo, hi = views[0].words()

        def compute():
            saved = arr[lo:hi].copy()
            run()
            result = arr[lo:hi].copy()
            arr[lo:hi] = saved
            return result

        def commit(data):
            arr[lo:hi] = data

    # ---- when does it start?
    hazard, kind, hazard_pc = 0, None, -1
    eng = ai.hazard_engine(w)
    ranges_r = [v.words() for v in reads]
    ranges_w = [v.words() for v in writes]
    if sim.prog.sync == "auto":
        hazard, kind, hazard_pc = eng.ready_time(ranges_r, ranges_w)
    start = max(now, unit.pipe_free[pipe], unit.flag_hold[pipe], hazard)
    cause, cause_pc = "none", -1
    if start > now:
        if start == hazard:
            cause, cause_pc = ("tile_raw" if kind == "raw" else "tile_war"), hazard_pc
        elif start == unit.flag_hold[pipe]:
            cause = "flag"
        else:
            cause = "pipe"
    # ---- how long does it take?
    if fam == "tile_load":
        complete = start + _dma(sim, blk, w, gm, nbytes, bw, fixed, start, route, read=True)
    elif fam == "tile_store" and name == "TSTORE_ACC":
        drain = drain_cycles(m, rows, cols, t.buf.dtype.itemsize)
        sim.aicore_mem.lookup(sim, gm, read=False)
        hbm = sim.aicore_mem.book(sim, nbytes, start, write=True)
        busy = max(int(math.ceil(drain - 1e-9)), hbm)
        stats.add_route("fix", busy - int(math.ceil(drain - 1e-9)))
        complete = start + fixed + busy
    elif fam == "tile_store":
        complete = start + _dma(sim, blk, w, gm, nbytes, bw, fixed, start, route, read=False)
    elif fam == "tile_move":
        complete = start + fixed + int(math.ceil(nbytes / bw - 1e-9))
    elif fam == "tile_mma":
        complete = start + matmul_cycles(m, name, mm, nn, kk, a.buf.dtype.itemsize, fixed)
    else:
        idle = unit.starts_empty(pipe, start)    # the pipeline is empty: the op pays its head
        cycles, tail = vector_op_cycles(m, name, data.buf.dtype, shape[0], shape[1],
                                        data.buf.dtype.itemsize, idle)
        complete = start + cycles
        unit.tail[pipe] = tail
    unit.pipe_free[pipe] = complete
    unit.pipe_done[pipe] = max(unit.pipe_done[pipe], complete)
    unit.flushed[pipe] = False
    unit.queued[pipe].append(complete)
    if sim.prog.sync == "auto":
        eng.record(ranges_r, ranges_w, complete, pipe, 0, pc)
    if ai.race is not None:
        race_check(sim, ai, blk, w, pipe, pc, reads, writes, gm)
    # ---- values: read at the start, written at the completion
    box = {}
    sim._schedule_effect(start - now, lambda: box.__setitem__("v", compute()))
    sim._schedule_effect(complete - now, lambda: commit(box.pop("v")))
    return start, complete, nbytes, cause, cause_pc


def _dma(sim, blk, w, gm, nbytes, bw, fixed, start, route, read):
    """Cycles of a GM transfer: fixed latency (less the L2 miss extra when every line hits)
    plus the bytes' time on the unit's link, L2 and HBM."""
    mem = sim.aicore_mem
    latency_saving, hit_fraction = mem.lookup(sim, gm, read)
    unit_link = mem.unit_link(blk.core.index, w, read)
    done = sim.links.link_book(sim.ak_s, sim.ak_e, sim.ak_n, unit_link, np.float64(start),
                               nbytes / bw, np.float64(sim.env.now))
    nominal = int(math.ceil(nbytes / bw - 1e-9))
    own = int(math.ceil(done - start - 1e-9))
    shared = mem.book(sim, nbytes, start, write=not read, hit_fraction=hit_fraction)
    busy = max(own, shared)
    sim.aicore_stats.add_route(route, busy - nominal)
    return fixed - latency_saving + busy


# ---------------------------------------------------------------- flags
def set_or_wait_flag(sim, pc, blk, w, now):
    """SET_FLAG / WAIT_FLAG of unit w at dispatch: a flag fires when the source pipe has
    finished what was queued before it; a wait holds the destination pipe until then."""
    from ..ir.program import C_AUX
    src, dst, event = (int(x) for x in sim.enc.code[pc, C_AUX:C_AUX + 3])
    unit, race = blk.aicore.units[w], blk.aicore.race
    key = (src, dst, event)
    if sim.pc_name[pc] == "SET_FLAG":
        vc = race.carry(w, src) if race is not None else None
        fire = max(now, unit.drained(src), unit.flag_hold[src])
        unit.flags.setdefault(key, []).append((fire, vc))
        return
    pending = unit.flags.get(key)
    if not pending:
        from ..isa import PTO_PIPE_NAMES
        raise DeadlockError(
            f"wait_flag({PTO_PIPE_NAMES[PIPES[src]]}, {PTO_PIPE_NAMES[PIPES[dst]]}, {event}) on "
            f"{UNIT_NAMES[w]} of block {blk.coords} has no set_flag before it: the "
            f"{PTO_PIPE_NAMES[PIPES[dst]]} queue would wait forever", kernel=sim.kernel_name,
            file=sim.prog.file, line=sim.prog.instrs[pc].line,
            hint="set the flag earlier (real kernels pre-arm reverse flags before the loop and "
                 "drain them after it)")
    fire, vc = pending.pop(0)
    unit.flag_hold[dst] = max(unit.flag_hold[dst], fire)
    if race is not None:
        race.join(w, dst, vc)


def pipe_barrier(sim, pc, blk, w, now):
    """PIPE_BARRIER: later operations on the pipe (every pipe for PIPE_ALL) start after the
    earlier ones on it (on every pipe) have completed; returns when the scalar may go on."""
    from ..ir.program import C_AUX
    pipe = int(sim.enc.code[pc, C_AUX])
    unit = blk.aicore.units[w]
    if pipe == ALL:
        done = unit.drained(ALL)
        unit.flag_hold = [max(h, done) for h in unit.flag_hold]
        if blk.aicore.race is not None:
            blk.aicore.race.barrier_all(w)
        return max(now, done)
    unit.flag_hold[pipe] = max(unit.flag_hold[pipe], unit.drained(pipe))
    return now


def cross_core_set(sim, pc, blk, w, now):
    """CROSS_CORE_SET_FLAG: fires when the unit's queued operations (on the given pipe, or on
    every pipe) are done; from the AIC to both AIVs, from an AIV to the AIC."""
    from ..ir.program import C_AUX
    event, pipe = int(sim.enc.code[pc, C_AUX]), int(sim.enc.code[pc, C_AUX + 1])
    ai = blk.aicore
    unit = ai.units[w]
    fire = max(now, unit.drained(pipe))
    vc = ai.race.carry(w, pipe) if ai.race is not None else None
    targets = (1, 2) if w == 0 else (0,)
    for to in targets:
        ai.cross.setdefault((to, event, w), []).append((fire, vc))
    ai.signal()


def cross_core_ready(blk, w, event):
    """True when unit w's cross_core_wait_flag(event) has what it waits for."""
    cross = blk.aicore.cross
    sources = (1, 2) if w == 0 else (0,)
    return all(cross.get((w, event, s)) for s in sources)


def cross_core_take(blk, w, event) -> int:
    """Consume the signals unit w waited for; return when the last of them fired."""
    ai = blk.aicore
    sources = (1, 2) if w == 0 else (0,)
    fire = 0
    for s in sources:
        t, vc = ai.cross[(w, event, s)].pop(0)
        fire = max(fire, t)
        if ai.race is not None:
            ai.race.join(w, ALL, vc)
    return fire


def sync_at_issue(sim, pc, blk, w, now):
    """A flag instruction of unit w at issue: set/wait flags and cross-core signals (a
    cross-core wait and pipe_barrier(PIPE_ALL) were handled before issue by the model)."""
    name = sim.pc_name[pc]
    if name in ("SET_FLAG", "WAIT_FLAG"):
        set_or_wait_flag(sim, pc, blk, w, now)
    elif name == "CROSS_CORE_SET_FLAG":
        cross_core_set(sim, pc, blk, w, now)


def deadlock_error(sim, stuck) -> DeadlockError:
    """The error of an AI-core launch whose events ran out with units still waiting: stuck
    lists (block id, unit, pc it waits at or None)."""
    from ..ir.program import C_AUX
    waiting = []
    for block_id, w, pc in stuck:
        if pc is None:
            continue
        line = sim.prog.instrs[pc].line
        event = int(sim.enc.code[pc, C_AUX])
        who = "both AIVs" if w == 0 else "the AIC"
        waiting.append(f"block {block_id} {UNIT_NAMES[w]} waits at line {line} "
                       f"(cross_core_wait_flag({event})) for a signal from {who} that never comes")
    first = next((pc for _b, _w, pc in stuck if pc is not None), None)
    return DeadlockError(
        "cross-core deadlock: " + "; ".join(waiting[:6]) + (f" (and {len(waiting) - 6} more)" if len(waiting) > 6 else ""),
        kernel=sim.kernel_name, file=sim.prog.file,
        line=sim.prog.instrs[first].line if first is not None else None,
        hint="every cross_core_wait_flag(id) needs a cross_core_set_flag(id) on the other side "
             "(on the AIC: one from each AIV)")


def wait_before_issue(sim, pc, blk, w, ws, t, cause):
    """Before unit w issues sync instruction pc: a cross-core wait holds the scalar until
    the other unit(s) signalled; a pipe_barrier(PIPE_ALL) until the unit's pipes drained.
    A generator (the SimPy process yields from it); returns (t, cause)."""
    from ..ir.program import C_AUX
    name = sim.pc_name[pc]
    if name == "CROSS_CORE_WAIT_FLAG":
        event = int(sim.enc.code[pc, C_AUX])
        if not cross_core_ready(blk, w, event):
            ws.note_stall(CAUSE["cross_core"], -1)
            ws.waiting_at = pc
            while not cross_core_ready(blk, w, event):
                yield blk.aicore.cross_event
            ws.waiting_at = None
        fire = cross_core_take(blk, w, event)
        t = max(t, sim.env.now)
        if fire > t:
            t, cause = fire, CAUSE["cross_core"]
    elif name == "PIPE_BARRIER":
        done = pipe_barrier(sim, pc, blk, w, int(sim.env.now))
        if done > t:
            t, cause = done, CAUSE["flag"]
    return t, cause
