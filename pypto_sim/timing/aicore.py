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
  repeats; an elementwise op on a ColMajor column at its row-major reshape) + per_row per
  row (the row reductions' reducing repeat), and the op's
  tail at the next sync on V, which keeps V busy.
The formulas themselves are in aicore_costs.py.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import DeadlockError
from ..exec.aicore_tiles import TileOp, cross_core_deadlock, operands, unset_flag_error
from ..isa import PIPES
from .aicore_costs import drain_cycles, matmul_cycles, vector_op_cycles
from .aicore_races import AICoreRaces, race_check
from .records import CAUSE
from .tiles import TileEngine

UNIT_NAMES = ("AIC", "AIV0", "AIV1")
N_UNITS = 3
P = len(PIPES)
ALL = -1
ACC_SPACE = "Acc"


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


def dispatch(sim, pc, blk, w, ws, now):
    """Unit w hands tile instruction pc to its pipe at cycle now. Schedules the read at the
    start and the write at the completion (unless the launch skips values); returns (start,
    complete, bytes, cause, cause pc)."""
    ai, m = blk.aicore, sim.m
    unit = ai.units[w]
    op = TileOp(sim, pc, operands(sim, pc, ws.regs), ai.array(w), w, blk.coords)
    pipe = sim.pc_pipe[pc]
    fam, name = op.fam, op.spec.name
    fixed = sim.pc_lat[pc]
    reads, writes, gm, nbytes = op.reads, op.writes, op.gm, op.nbytes
    stats = sim.aicore_stats

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
        space = op.data.buf.space
        bw = m.gm_to_l1_bytes_per_cycle if space == "Mat" else m.gm_to_ub_bytes_per_cycle
        route = "gm_to_l1" if space == "Mat" else "gm_to_ub"
        complete = start + _dma(sim, blk, w, gm, nbytes, bw, fixed, start, route, read=True)
    elif fam == "tile_store" and op.data.buf.space == ACC_SPACE:
        rows, cols = op.shape
        drain = drain_cycles(m, rows, cols, op.data.buf.dtype.itemsize)
        sim.aicore_mem.lookup(sim, gm, read=False)
        hbm = sim.aicore_mem.book(sim, nbytes, start, write=True)
        busy = max(int(math.ceil(drain - 1e-9)), hbm)
        stats.add_route("fix", busy - int(math.ceil(drain - 1e-9)))
        complete = start + fixed + busy
    elif fam == "tile_store":
        route = "l1_to_gm" if op.data.buf.space == "Mat" else "ub_to_gm"
        bw = m.l1_to_gm_bytes_per_cycle if route == "l1_to_gm" else m.ub_to_gm_bytes_per_cycle
        complete = start + _dma(sim, blk, w, gm, nbytes, bw, fixed, start, route, read=False)
    elif fam == "tile_move":
        bw = {"Left": m.l1_to_l0a_bytes_per_cycle, "Right": m.l1_to_l0b_bytes_per_cycle,
              "Bias": m.l1_to_bias_bytes_per_cycle, "Mat": m.l0c_to_l1_bytes_per_cycle}[writes[0].buf.space]
        complete = start + fixed + int(math.ceil(nbytes / bw - 1e-9))
    elif fam == "tile_mma":
        mm, nn, kk = op.mkn
        complete = start + matmul_cycles(m, name, mm, nn, kk, op.data.buf.dtype.itemsize, fixed)
    else:
        idle = unit.starts_empty(pipe, start)    # the pipeline is empty: the op pays its head
        data = op.data.buf.dtype
        cycles, tail = vector_op_cycles(m, name, data, op.shape[0], op.shape[1], data.itemsize, idle,
                                        elementwise=fam == "tile_alu")
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
    # ---- values (the executor's): read at the start, written at the completion
    if sim.values:
        box = {}
        sim._schedule_effect(start - now, lambda: box.__setitem__("v", op.read()))
        sim._schedule_effect(complete - now, lambda: op.write(box.pop("v")))
    op.mark_written(sim.hbm_init)       # initcheck: a store's elements count as written
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
        raise unset_flag_error(sim, pc, w, blk.coords, key)
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
    return cross_core_deadlock(sim, stuck)


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
