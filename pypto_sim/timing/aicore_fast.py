"""The AI core on the compiled event loop (exec/compiled/aicore_engine.py), driven from here.

``LaunchSimulation.run`` uses it for AI-core kernels without checks, outside the debugger
(``why_not_aicore_fast``); it gives the SimPy model's records, cycles, values and errors
(tests/test_aicore_fast.py). This module decodes each instruction once into the engine's
tables (from the same TileLayout the SimPy model and the executor decode by), sizes and grows
the engine's arrays, replays the tile values in SimPy's order after the timing run, and turns
what the engine reports into the simulation's records and errors. When the engine meets a
fault to report it stops, and the launch runs again under SimPy, which reports it.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import BY_CODE
from ..exec import gm
from ..exec.syncall_rounds import SyncallRounds, participant_counts
from ..exec.gm_index_ops import GM_INDEX_FAMILIES
from ..ir.program import C_DST, C_DTYPE, C_OP, MAX_SRCS, register_sources
from ..isa import FAMILIES, PIPES
from ..isa.syncall_modes import HOPS
from .aicore_pipes import AICorePipes
from .aicore_replay import replay_table, replay_values
from .aicore_tables import SYNC_KINDS
from .fast import EVENTS_PER_CALL, finished_records, flushed_records, grown, rebuilt_table, start_slots
from .records import FIELDS, ROWS_PER_CHUNK, PcTotals, RecordColumns

SCALAR_FAMILIES = ("control", "alu", "id", "warp", "alloc", "check")
LOG_ROWS = 4096          # first capacity of the log of dispatched tile instructions


def why_not_aicore_fast(sim) -> str | None:
    """Why the compiled engine cannot run this AI-core launch (None: it can)."""
    if not hasattr(sim.ex, "aicore_engine_run"):
        return "this executor module has no compiled event loop"
    if sim.keep_warp_states:
        return "the debugger steps the SimPy model"
    if sim.checks:
        return "the checks run in the SimPy model"
    for pc, spec in enumerate(sim.pc_spec):
        if spec.family in SCALAR_FAMILIES:
            if sim.pc_pipe[pc] >= len(PIPES) - 1:
                return f"{spec.name} on pipe {PIPES[sim.pc_pipe[pc]]}"
        elif spec.family == "tile_sync":
            if spec.name == "SYNCALL_SOFT":
                return ("SYNCALL_SOFT's release depends on the GM counter's value (soft mode polls it), which "
                        "the compiled loop does not read: the SimPy model runs it")
            if spec.name not in SYNC_KINDS:
                return f"{spec.name} runs in the SimPy model"
        elif spec.family == "comm_signal":
            return (f"{spec.name}: the communication signals' GM values decide when a TWAIT goes on (it polls "
                    "them) and what a TTEST answers, which the compiled loop does not read: the SimPy model runs it")
        elif spec.family == "scalar_mem":
            return (f"{spec.name}: the scalar unit's own UB and GM accesses, through its DataCache, run in the "
                    "SimPy model")
        elif not spec.is_tile:
            return f"{spec.name} ({spec.family}) runs in the SimPy model"
        elif spec.family in GM_INDEX_FAMILIES:
            return f"{spec.name} reads or writes GM at addresses its index tile holds (the SimPy model runs it)"
    return None


def run_aicore_fast(sim) -> bool:
    """Run AI-core launch sim on the compiled event loop: True when it ran to the end; raises
    the launch's cycle limit or deadlock; False when it met a fault that the SimPy model must
    report (nothing was written: the caller then runs SimPy)."""
    sim.engine_used = "fast"
    sim.progress = sim.launch_progress()
    engine = AICoreFastEngine(sim)
    with sim.progress:
        outcome = engine.run()
    if outcome == "done":
        return True
    if outcome == "limit":
        raise sim.limit_error(int(engine.st[sim.ex.S_UNFINISHED]), engine.positions())
    if outcome == "deadlock":
        raise sim.deadlock_error(engine.stuck())
    sim.record_columns = sim.pc_totals = None
    sim.end_time = 0
    return False


class AICoreFastEngine:
    """One AI-core launch on the compiled event loop."""

    def __init__(self, sim):
        self.sim = sim
        ex = self.ex = sim.ex
        m, prog, enc = sim.m, sim.prog, sim.enc
        code = enc.code
        gx, gy, gz = sim.grid
        n_blocks = gx * gy * gz
        slots = self.slots = min(m.cores, n_blocks)
        units = 3 * slots
        pipes = self.pipes = AICorePipes(sim, slots)
        self.tables = pipes.tables
        self.replay = None               # the values replay's table, made when first needed
        self.local_words = max(prog.local_words, 1)
        acfg = self.acfg = pipes.acfg
        acfg[ex.AK_SLOTS] = slots
        acfg[ex.AK_N_BLOCKS] = n_blocks
        acfg[ex.AK_GX:ex.AK_GZ + 1] = sim.grid
        acfg[ex.AK_BX:ex.AK_BZ + 1] = sim.block
        acfg[ex.AK_WIDTH] = m.issue_width
        acfg[ex.AK_RECORD] = 1 if sim.record else 0
        acfg[ex.AK_MAX_CYCLES] = sim.max_cycles if sim.max_cycles is not None else 1 << 62
        acfg[ex.AK_PORTS] = units
        max_ii = max(sim.pc_ii) if sim.pc_ii else 1
        acfg[ex.AK_BOOK_ROOM] = 4 * (2 + max_ii) + 8
        n_regs = max(enc.n_regs, 1)
        seed = np.zeros((n_regs, 32), np.float64)
        for arg in prog.args:
            if arg.reg is not None:
                seed[prog.n_lane_slots + arg.reg.index, :] = sim.scalars[arg.name]
        self.seed = seed
        depth = 1 + sum(1 for ins in prog.instrs if ins.op in ("IF", "LOOP"))
        fam_index = {name: i for i, name in enumerate(FAMILIES)}
        self.pcs = dict(
            code=code, imm=enc.imm,
            pc_fam=np.array([fam_index[f] for f in sim.pc_family], np.int64),
            pc_op=code[:, C_OP].astype(np.int64).copy(),
            pc_ii=np.array(sim.pc_ii, np.int64),
            pc_srcs=register_sources(code),
            pc_dst=code[:, C_DST].astype(np.int64).copy())
        self.st = np.zeros(ex.N_AST, np.int64)
        heap = 4 * units + 64
        self.ht = np.zeros(heap, np.int64)
        self.hk = np.zeros(heap, np.int64)
        self.hv = np.zeros((heap, 2), np.int64)
        table = 1 << max(12, int(4 * (int(acfg[ex.AK_BOOK_ROOM]) * units + 64)).bit_length())
        self.keys = np.full(table, -1, np.int64)
        self.vals = np.zeros(table, np.int64)
        self.keys2 = np.full(table, -1, np.int64)      # the engine prunes through it
        self.vals2 = np.zeros(table, np.int64)
        self.regs = np.zeros((units, n_regs, 32), np.float64)
        self.ready = np.zeros((units, n_regs), np.int64)
        self.producer = np.full((units, n_regs), -1, np.int64)
        self.wst = np.zeros((units, 5), np.int64)
        self.stacks = np.zeros((units, depth, 7), np.int64)
        self.uv = np.zeros((units, ex.N_UV), np.int64)
        self.uv[:, ex.U_PHASE] = ex.PH_DONE
        self.bv = np.zeros((slots, ex.N_BV), np.int64)
        self.bx = np.zeros((slots, ex.N_BX), np.int64)
        self.rec = np.zeros((ROWS_PER_CHUNK if sim.record else 1, len(FIELDS)), np.int64)
        self.columns = RecordColumns()
        self._stores = None
        self.totals = np.zeros((len(code), 4), np.int64)
        self.lg_i = np.zeros((LOG_ROWS, ex.N_LG), np.int64)
        self.lg_v = np.zeros((LOG_ROWS, MAX_SRCS + 4), np.float64)
        self.ctx = np.zeros(10, np.int64)
        self.info = np.zeros(8, np.int64)
        self.pend_idx = np.zeros(32, np.int64)
        self.pend_val = np.zeros(32, np.float64)
        self.l1 = np.zeros(1, np.float64)
        self.waiters = np.zeros(max(3, units), np.int64)
        self.entry = np.array(prog.unit_entry, np.int64)     # each unit's own program
        # SYNCALL's rounds by kind (exec/syncall_rounds.py, timing/aicore_syncall.py) and the log of
        # each completed round's last arrival
        hop = m.latency("CROSS_CORE_SET_FLAG") + m.latency("CROSS_CORE_WAIT_FLAG")
        self.syncall = SyncallRounds(participant_counts(prog.unit_entry, sim.grid), [h * hop for h in HOPS])
        self.syncall.sl = np.zeros((4 * units + 8, ex.N_SL), np.int64)
        start_slots(ex, self.st, self.ht, self.hk, self.hv, slots)

    def _call(self, budget):
        ex, p, q = self.ex, self.pcs, self.pipes
        t = self.tables
        return ex.aicore_engine_run(
            budget, q.acfg, q.af, self.st, self.ht, self.hk, self.hv, self.keys, self.vals,
            self.keys2, self.vals2,
            p["code"], p["imm"], p["pc_fam"], p["pc_op"], q.pc_pipe, q.pc_lat, p["pc_ii"],
            p["pc_srcs"], p["pc_dst"], t.tp, t.tf, t.fm_i, t.fm_f, t.ov, self.seed, self.regs,
            self.ready, self.producer, self.wst, self.stacks, self.uv, self.bv, self.bx, q.pf,
            q.pd, q.fh, q.tl, q.fl, q.qb, q.qh, q.qn, q.fb, q.fhd, q.fn, q.cb, q.chd, q.cn,
            *q.hz, *q.ak, *q.l2_links, *q.lk, q.l2.state, q.l2.link, q.l2_first,
            self.sim.hbm, self.sim.tbase, self.sim.tcount, self.sim.tbytes, q.routes, self.rec,
            self.totals, self.lg_i, self.lg_v, self.ctx, self.info, self.pend_idx, self.pend_val,
            self.l1, q.shape, q.hz_out, q.out, self.waiters, self.entry, self.syncall.sa,
            self.syncall.sl)

    def run(self):
        """Run the launch's timing; returns (status, total cycles) where status is 'done',
        'limit' or 'fallback' (the caller then runs the SimPy model). Values are replayed
        here for 'done' and 'limit'."""
        ex, st, sim = self.ex, self.st, self.sim
        while True:
            status = self._call(EVENTS_PER_CALL)
            sim.progress.update(int(st[ex.S_BLOCKS_DONE]), f"cycle {int(st[ex.S_NOW])}")
            if 2 * int(st[ex.S_SA_N]) > len(self.syncall.sl):
                self.syncall.sl = grown(self.syncall.sl, 2 * len(self.syncall.sl))
            if status == ex.ENG_YIELD:
                continue
            if status == ex.ENG_GROW:
                self._grow(int(st[ex.S_GROW]))
                continue
            break
        if status == ex.ENG_FALLBACK:
            return "fallback"
        sim.grid_barrier = self.syncall_rounds()
        if sim.record:
            sim.record_columns, self.rec = finished_records(ex, st, self.rec, self.columns), None
        else:
            sim.pc_totals = PcTotals.from_array(self.totals)
        sim.end_time = int(st[ex.S_END_TIME])
        self.pipes.finish(sim)
        unfinished = int(st[ex.S_UNFINISHED])
        if status == ex.ENG_LIMIT:
            self.replay_values(before=int(sim.max_cycles))
            return "limit"
        self.replay_values()
        if unfinished:
            return "deadlock"
        return "done"

    def syncall_rounds(self):
        """The launch's SYNCALL rounds as the SimPy model leaves them (GridBarrier's
        SyncallRounds): each completed round's release and last arrival, by kind, for the bubbles
        report (runtime/launch.py)."""
        self.syncall.logged(int(self.st[self.ex.S_SA_N]))
        return self.syncall

    def positions(self):
        """(block id, unit, pc) of every unfinished unit, in order."""
        ex = self.ex
        return sorted((int(self.bv[g // 3, ex.B_BLOCK]), g % 3, int(self.wst[g, 0]))
                      for g in np.nonzero(self.uv[:, ex.U_PHASE] != ex.PH_DONE)[0].tolist())

    def stuck(self):
        """(block id, unit, pc it waits at or None) of every unfinished unit, in order."""
        ex = self.ex
        out = []
        for g in np.nonzero(self.uv[:, ex.U_PHASE] != ex.PH_DONE)[0].tolist():
            at = int(self.uv[g, ex.U_WAITING_AT])
            out.append((int(self.bv[g // 3, ex.B_BLOCK]), g % 3, at if at >= 0 else None))
        return sorted(out, key=lambda s: (s[0], s[1]))

    # ---------------------------------------------------------------- values
    def replay_values(self, before=None):
        """The tile values, in SimPy's order: each logged operation reads its sources at its
        start and writes its result at its completion; events at one cycle in the order the
        SimPy model created them (dispatch order, a read before its write). ``before``: only
        the events before that cycle (a launch stopped at its cycle limit)."""
        sim, ex = self.sim, self.ex
        n = int(self.st[ex.S_LOG_N])
        if n == 0:
            return
        lg, vals = self.lg_i[:n], self.lg_v[:n]
        pcs = lg[:, ex.LG_PC]
        stores = self.store_pcs()
        if sim.hbm_init is not None:                # initcheck's record, made at dispatch
            slot_of = self.tables.tp[:, ex.TP_SLOT]
            # marking is idempotent: each distinct store window once (a kernel's stores mostly
            # rewrite the same workspace windows)
            windows = set(map(tuple, lg[stores[pcs]][:, [ex.LG_PC, ex.LG_RUNS, ex.LG_RUN, ex.LG_OFF,
                                                         ex.LG_STRIDE]].tolist()))
            for pc, rows, cols, off, stride in sorted(windows):
                item = BY_CODE[int(sim.enc.code[pc, C_DTYPE])].itemsize
                gm.init_mark_window(sim.hbm_init, int(sim.tbase[slot_of[pc]]) + off * item, rows,
                                    cols * item, stride * item)
        if not sim.values:
            return
        if self.replay is None:
            self.replay = replay_table(sim)
        gx, gy, gz = sim.grid
        replay_values(sim, ex, lg, vals, *self.replay, self.local_words, gx * gy * gz, before)

    def store_pcs(self):
        """A bool per pc: a tile store (initcheck marks what it writes); computed once."""
        if self._stores is None:
            self._stores = np.array([spec.family == "tile_store" for spec in self.sim.pc_spec], bool)
        return self._stores

    def _drop_unread_log(self):
        """With values off the log is read back only for initcheck's stores: keep those rows
        (in order) and drop the rest, so the log does not grow with the launch."""
        ex, n = self.ex, int(self.st[self.ex.S_LOG_N])
        keep = np.nonzero(self.store_pcs()[self.lg_i[:n, ex.LG_PC]])[0] \
            if self.sim.hbm_init is not None else np.zeros(0, np.int64)
        self.lg_i[:len(keep)] = self.lg_i[keep]
        self.lg_v[:len(keep)] = self.lg_v[keep]
        self.st[ex.S_LOG_N] = len(keep)

    # ---------------------------------------------------------------- growing buffers
    def _grow(self, what):
        ex = self.ex
        if what == ex.GROW_HEAP:
            n = len(self.ht) * 2
            self.ht, self.hk, self.hv = (grown(a, n) for a in (self.ht, self.hk, self.hv))
        elif what == ex.GROW_RECORDS:
            self.rec = flushed_records(ex, self.st, self.rec, self.columns)
        elif what == ex.GROW_LOG:
            if not self.sim.values:
                self._drop_unread_log()
            if 2 * (int(self.st[ex.S_LOG_N]) + 4) > len(self.lg_i):
                n = 2 * len(self.lg_i)
                self.lg_i, self.lg_v = grown(self.lg_i, n), grown(self.lg_v, n)
        else:                                               # GROW_TABLE
            self.keys, self.vals, used = rebuilt_table(ex, self.keys, self.vals, int(self.st[ex.S_NOW]),
                                                       int(self.acfg[ex.AK_PORTS]),
                                                       int(self.acfg[ex.AK_BOOK_ROOM]))
            self.keys2, self.vals2 = np.full(len(self.keys), -1, np.int64), np.zeros(len(self.keys), np.int64)
            self.st[ex.S_TABLE_USED] = used
