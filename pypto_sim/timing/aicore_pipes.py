"""The AI cores' timing state as arrays, and the calls into the step functions that own its
rules (exec/compiled/aicore_steps.py: tile_dispatch, queue_slot, unit_drained, reset_units;
exec/compiled/aicore_sync.py: the flag, barrier and cross-core steps).

Both drivers keep their state here and change it only through those steps: the compiled event
loop (timing/aicore_fast.py passes the arrays to aicore_engine_run) and the SimPy model
(timing/aicore.py calls the methods below, one step per call). So each timing rule of the AI
core is written once; the drivers differ only in how they order events (SimPy's queue, or the
compiled heap that replays it) and in what the SimPy model adds around a step: the race check,
the values (exec/aicore_tiles.TileOp) and the errors it reports.

Arrays are indexed by core slot p and by unit g = 3 * p + w (w: 0 the AIC, 1 and 2 the AIVs).
"""
from __future__ import annotations

import numpy as np

from ..isa import PIPES
from .aicore_tables import AICoreTables
from .fast import link_arrays
from .l2 import L2Cache
from .records import CAUSE, why_code

FLAG_QUEUE = 64          # set_flags pending per (src, dst, event) before a queue grows
CROSS_QUEUE = 64
ROUTES = ("gm_to_l1", "gm_to_ub", "l1_to_gm", "ub_to_gm", "fix")
CAUSE_NAME = {code: name for name, code in CAUSE.items()}


class AICoreStats:
    """Per launch: L2 hits and misses, and the cycles transfers lost to shared bandwidth (L2,
    HBM) beyond their own path's, by route."""

    def __init__(self):
        self.l2_hits = self.l2_misses = 0
        self.route_wait: dict = {}

    def add_route(self, route, extra):
        if extra > 0:
            self.route_wait[route] = self.route_wait.get(route, 0) + int(extra)


def unrolled(ring, head):
    """Ring buffers (queues along the last axis, each starting at its head) copied into rings
    of twice the capacity that start at index 0 (the caller sets the heads to 0)."""
    cap = ring.shape[-1]
    grown = np.zeros(ring.shape[:-1] + (2 * cap,), ring.dtype)
    idx = (head[..., None] + np.arange(cap)) % cap
    grown[..., :cap] = np.take_along_axis(ring, idx, axis=-1)
    return grown


class AICorePipes:
    """One launch's AI-core timing state: per unit its pipes (free, done, flag hold, pending
    tail, emptied), in-order queues and flags; per block slot its cross-core signals and
    hazard ranges; the unit GM links, the L2 and the chip links; the bandwidth waits by route."""

    def __init__(self, sim, slots):
        ex, m = sim.links, sim.m         # the compiled module (sim.ex may be the reference executor)
        self.sim, self.ex, self.slots = sim, ex, slots
        units = 3 * slots
        tables = self.tables = AICoreTables(sim, ex)
        acfg = np.zeros(ex.N_ACFG, np.int64)
        acfg[ex.AK_AUTO] = 1 if sim.prog.sync == "auto" else 0
        acfg[ex.AK_DEPTH] = m.pipe_queue_depth
        acfg[ex.AK_CC_LIMIT] = m.cross_core_flag_limit
        acfg[ex.AK_AIVS] = self.aivs = sim.prog.aiv_ratio
        acfg[ex.AK_HAS_L2] = 1 if sim.l2 is not None else 0
        # the launch's own L2 (the simulation's stays untouched until the run is done)
        if sim.l2 is None:                              # unused arrays of the right types
            self.l2 = L2Cache(128, 128, zip(sim.tbase, np.zeros_like(sim.tcount)))
        else:
            self.l2 = L2Cache(m.l2_bytes, m.l2_line_bytes, zip(sim.tbase, sim.tcount))
            acfg[ex.AK_L2_MISS_EXTRA] = m.l2_miss_extra_latency
            acfg[ex.AK_LINE_BYTES] = m.l2_line_bytes
        self.l2_first = np.array([self.l2.first_line(b) for b in sim.tbase], np.int64)
        self.acfg = acfg
        af = np.zeros(ex.N_AF, np.float64)
        if sim.l2 is not None:
            af[ex.AF_L2_BW] = m.l2_chip_bytes_per_cycle
        af[ex.AF_HBM_BW] = m.hbm_chip_bytes_per_cycle
        if m.has_aicore:
            af[ex.AF_DRAIN_C0] = m.drain_c0_bytes
            af[ex.AF_DRAIN_ROW] = m.drain_row_cycles
            af[ex.AF_DRAIN_BW] = m.drain_bytes_per_cycle
            af[ex.AF_DRAIN_PEN] = m.drain_penalty_cycles
            af[ex.AF_DRAIN_FIXED] = m.drain_fixed_cycles
        self.af = af
        P = len(PIPES)
        E, X = tables.flag_events, tables.cross_events
        R = max(len(tables.ranges), 1)
        self.pc_pipe = np.array(sim.pc_pipe, np.int64)
        self.pc_lat = np.array(sim.pc_lat, np.int64)
        self.pf, self.pd, self.tl, self.fl = (np.zeros((units, P), np.int64) for _ in range(4))
        self.fh = np.zeros((units, 2, P), np.int64)     # aicore_steps.HOLD_FLAG / HOLD_BARRIER
        qcap = m.pipe_queue_depth + 1
        self.qb = np.zeros((units, P, qcap), np.int64)
        self.qh = np.zeros((units, P), np.int64)
        self.qn = np.zeros((units, P), np.int64)
        self.fb = np.zeros((units, P, P, E, FLAG_QUEUE), np.int64)
        self.fhd = np.zeros((units, P, P, E), np.int64)
        self.fn = np.zeros((units, P, P, E), np.int64)
        self.cb = np.zeros((slots, 3, X, 3, CROSS_QUEUE), np.int64)
        self.chd = np.zeros((slots, 3, X, 3), np.int64)
        self.cn = np.zeros((slots, 3, X, 3), np.int64)
        self.hz = [np.zeros((slots, 2), np.int64), np.zeros((slots, 2, R), np.int64),
                   np.zeros((slots, 2, R), np.int64)] + [np.zeros((slots, 2, R), np.int64) for _ in range(4)]
        n_links = 2 * 3 * m.cores
        self.ak = (np.zeros((n_links, ex.LINK_INTERVALS), np.float64),
                   np.zeros((n_links, ex.LINK_INTERVALS), np.float64), np.zeros(n_links, np.int64))
        self.l2_links = link_arrays(ex, 0)
        self.lk = link_arrays(ex, m.cores)
        self.routes = np.zeros(ex.N_ROUTES, np.int64)
        self.shape = np.zeros(11, np.int64)       # tile_shape's decode (exec/compiled/aicore_steps.py)
        self.hz_out = np.zeros(3, np.int64)
        self.out = np.zeros(8, np.int64)

    # ---------------------------------------------------------------- the SimPy model's steps
    def reset_block(self, p):
        """A block starts on core slot p."""
        hz_n, _ord, hz_has = self.hz[:3]
        self.ex.reset_units(p, self.pf, self.pd, self.fh, self.tl, self.fl, self.qn, self.fn,
                            self.cn, hz_n, hz_has)

    def dispatch(self, pc, p, w, regs, now):
        """Unit w of the block on slot p hands tile instruction pc to its pipe at cycle now
        (regs: the unit's registers). Returns (start, complete, bytes, cause name, cause pc,
        its record's ``why`` beyond the scalar unit's cause: records.why_code's l2_missed,
        shared_wait and hbm_read_bytes)."""
        ex, t, sim = self.ex, self.tables, self.sim
        if not ex.tile_shape(t.tp, sim.enc.code, sim.enc.imm, regs, pc, sim.tcount, self.shape):
            raise AssertionError(f"pc {pc}: the step functions refuse operands the executor took")
        ak_s, ak_e, ak_n = self.ak
        l2_s, l2_e, l2_n = self.l2_links
        lk_s, lk_e, lk_n = self.lk
        ex.tile_dispatch(3 * p + w, p, w, p, pc, now, now, t.tp, t.tf, t.fm_i, t.fm_f, self.shape,
                         self.acfg, self.af, self.pc_pipe, self.pc_lat, self.pf, self.pd, self.fh,
                         self.tl, self.fl, self.qb, self.qh, self.qn, t.ov, *self.hz, ak_s, ak_e,
                         ak_n, l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, self.l2.state, self.l2.link,
                         self.l2_first, sim.tbase, self.routes, self.hz_out, self.out)
        start, complete, nbytes, cause, cause_pc, missed, shared, hbm = (int(x) for x in self.out)
        return start, complete, nbytes, CAUSE_NAME[cause], cause_pc, why_code(0, missed, shared, hbm)

    def scalar_hazard(self, pc, p, w) -> tuple:
        """sync="auto": (the cycle unit w's scalar UB access pc may happen, cause name, the pc it
        waits for) on the block on slot p: after the tile operations in flight on its tile (a read
        after their writes, a write after their reads and writes)."""
        hz_n, hz_ord, _has, hz_wd, hz_rd, hz_wpc, hz_rpc = self.hz
        one = np.array([self.tables.scalar_ranges[pc]], np.int64)
        self.ex.scalar_hazard(p, w, one, self.sim.pc_name[pc] == "SST_UB", self.tables.ov,
                              hz_n, hz_ord, hz_wd, hz_rd, hz_wpc, hz_rpc, self.hz_out)
        t, cause, cause_pc = (int(x) for x in self.hz_out)
        return t, CAUSE_NAME[cause], cause_pc

    def queue_slot(self, p, w, pipe, t):
        """The first cycle >= t at which the pipe's queue has room for one more operation."""
        return int(self.ex.queue_slot(self.qb, self.qh, self.qn, 3 * p + w, pipe, t,
                                      int(self.acfg[self.ex.AK_DEPTH])))

    def drained(self, p, w, pipe):
        """When everything queued on the unit's pipe (every pipe for -1) is done (a sync: the
        pending tails are paid and the pipes count as emptied)."""
        return int(self.ex.unit_drained(self.pf, self.pd, self.tl, self.fl, 3 * p + w, pipe))

    def set_flag(self, p, w, src, dst, event, now):
        """SET_FLAG of unit w at issue (the flag's queue grows when full)."""
        g = 3 * p + w
        while not self.ex.set_flag_step(self.pf, self.pd, self.tl, self.fl, self.fh, self.fb,
                                        self.fhd, self.fn, g, src, dst, event, now):
            self.fb = unrolled(self.fb, self.fhd)
            self.fhd[...] = 0

    def flag_release(self, p, w, src, dst, event) -> int:
        """WAIT_FLAG of unit w before issue: when a wait on PIPE_S lets the scalar unit go on
        (its oldest set_flag's fire), -1 when the wait does not hold the scalar unit."""
        return int(self.ex.flag_release(self.fb, self.fhd, self.fn, 3 * p + w, src, dst, event))

    def wait_flag(self, p, w, src, dst, event) -> bool:
        """WAIT_FLAG of unit w at issue; False when no set_flag is pending."""
        return bool(self.ex.wait_flag_step(self.fh, self.fb, self.fhd, self.fn, 3 * p + w, src,
                                           dst, event))

    def barrier(self, p, w, pipe, now):
        """PIPE_BARRIER of unit w before issue; when the scalar unit may go on."""
        return int(self.ex.barrier_step(self.pf, self.pd, self.tl, self.fl, self.fh, 3 * p + w,
                                        pipe, now))

    def cross_set(self, p, w, event, pipe, now):
        """CROSS_CORE_SET_FLAG of unit w at issue (the signal queues grow when full)."""
        while not self.ex.cross_set_step(self.pf, self.pd, self.tl, self.fl, self.cb, self.chd,
                                         self.cn, 3 * p + w, p, w, event, pipe, now, self.aivs):
            self.cb = unrolled(self.cb, self.chd)
            self.chd[...] = 0

    def cross_pending(self, p, to, event, w) -> int:
        """Signals of unit w's flag `event` to unit `to` that no wait has taken yet."""
        return int(self.cn[p, to, event, w])

    def cross_ready(self, p, w, event) -> bool:
        """True when unit w's cross_core_wait_flag(event) has a signal from each source."""
        return bool(self.ex.cross_ready(self.cn, p, w, event, self.aivs))

    def cross_take(self, p, w, event) -> int:
        """Consume the signals unit w waited for; when the last of them fired."""
        return int(self.ex.cross_take(self.cb, self.chd, self.cn, p, w, event, self.aivs))

    def finish(self, sim):
        """The launch ran: its L2 and the bandwidth waits by route go to the simulation."""
        if sim.l2 is not None:
            sim.l2 = self.l2
            sim.aicore_stats.l2_hits, sim.aicore_stats.l2_misses = self.l2.hits, self.l2.misses
        for route, extra in zip(ROUTES, self.routes.tolist()):
            sim.aicore_stats.add_route(route, extra)
