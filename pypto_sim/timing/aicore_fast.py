"""The AI core on the compiled event loop (exec/aicore_engine_template.py), driven from here.

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
from ..exec.aicore_tiles import layout_of
from ..exec.tile_effects import window
from ..ir.program import C_AUX, C_DST, C_DTYPE, C_OP, C_SRC, MAX_SRCS
from ..isa import FAMILIES, PIPES
from .fast import EVENTS_PER_CALL, grown, link_arrays, rebuilt_table, start_slots
from .aicore_replay import replay_table, replay_values
from .l2 import L2Cache
from .records import FIELDS, PcTotals

SCALAR_FAMILIES = ("control", "alu", "id", "warp", "alloc")
FLAG_QUEUE = 64          # set_flags pending per (src, dst, event); more: the SimPy model runs
CROSS_QUEUE = 64
TILE_KINDS = {"tile_load": "LOAD", "tile_store": "STORE", "tile_move": "MOVE", "tile_mma": "MMA"}
SYNC_KINDS = {"SET_FLAG": "SET_FLAG", "WAIT_FLAG": "WAIT_FLAG", "PIPE_BARRIER": "PIPE_BARRIER",
              "CROSS_CORE_SET_FLAG": "CC_SET", "CROSS_CORE_WAIT_FLAG": "CC_WAIT"}
ROUTES = ("gm_to_l1", "gm_to_ub", "l1_to_gm", "ub_to_gm", "fix")


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
            if spec.name not in SYNC_KINDS:
                return f"{spec.name} runs in the SimPy model"
        elif spec.is_tile:
            if layout_of(sim, pc).tiles is None:
                return f"{spec.name} at pc {pc} names a tile by address"
        else:
            return f"{spec.name} ({spec.family}) runs in the SimPy model"
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
    sim.record_array = sim.pc_totals = None
    sim.end_time = 0
    return False


class AICoreTables:
    """The engine's per-instruction tables of one launch: tp (ints), tf (floats), the vector
    formula rows (fm_i, fm_f), and the distinct hazard ranges with their overlaps (ov)."""

    def __init__(self, sim):
        ex, m, code = sim.ex, sim.m, sim.enc.code
        n = len(code)
        self.tp = np.zeros((n, ex.N_TP), np.int64)
        self.tf = np.zeros((n, ex.N_TF), np.float64)
        self.tp[:, ex.TP_NJ] = -1
        self.tp[:, ex.TP_MSJ] = -1
        self.ranges: dict = {}
        fm_i, fm_f = [], []
        self.flag_events = self.cross_events = 1
        for pc, spec in enumerate(sim.pc_spec):
            row, frow = self.tp[pc], self.tf[pc]
            if spec.family == "tile_sync":
                kind = SYNC_KINDS[spec.name]
                row[ex.TP_KIND] = getattr(ex, "AK_" + kind)
                aux = [int(x) for x in code[pc, C_AUX:C_AUX + 3]]
                if kind in ("SET_FLAG", "WAIT_FLAG"):
                    row[ex.TP_SRC], row[ex.TP_DST], row[ex.TP_EVENT] = aux
                    self.flag_events = max(self.flag_events, aux[2] + 1)
                elif kind == "PIPE_BARRIER":
                    row[ex.TP_PIPEARG] = aux[0]
                else:
                    row[ex.TP_CCEVENT] = aux[0]
                    row[ex.TP_PIPEARG] = aux[1] if kind == "CC_SET" else 0
                    self.cross_events = max(self.cross_events, aux[0] + 1)
                continue
            if not (spec.is_tile and spec.family != "tile_sync"):
                continue
            self._tile(sim, pc, spec, row, frow, fm_i, fm_f)
        self.fm_i = np.array(fm_i or [[0, 0]], np.int64).reshape(-1, 2)
        self.fm_f = np.array(fm_f or [[0.0, 0.0]], np.float64).reshape(-1, 2)
        lo = np.array([r[0] for r in self.ranges] or [0], np.int64)
        hi = np.array([r[1] for r in self.ranges] or [0], np.int64)
        self.ov = ((lo[None, :] < hi[:, None]) & (lo[:, None] < hi[None, :])).astype(np.int8)
        del m

    def _range(self, words):
        return self.ranges.setdefault(words, len(self.ranges))

    def _tile(self, sim, pc, spec, row, frow, fm_i, fm_f):
        ex, m, code = sim.ex, sim.m, sim.enc.code
        layout = layout_of(sim, pc)
        view, reads, writes, data = layout.tiles
        roles, named = layout.roles, layout.named
        fam = spec.family
        kind = TILE_KINDS.get(fam, "VEC")
        if fam == "tile_store" and data.buf.space == "Acc":
            kind = "STORE_ACC"
        row[ex.TP_KIND] = getattr(ex, "AK_" + kind)
        dst = view.get(roles.dst)
        if roles.shape == ("n",):
            row[ex.TP_NJ] = named["n"]
            row[ex.TP_ITEM] = dst.buf.dtype.itemsize
            row[ex.TP_DSTCOLS] = dst.cols
        else:
            row[ex.TP_RJ], row[ex.TP_CJ] = named[roles.shape[0]], named[roles.shape[1]]
            row[ex.TP_ITEM] = data.buf.dtype.itemsize
        row[ex.TP_DITEM] = data.buf.dtype.itemsize
        views = list(view.values())
        if len(views) > 4:
            raise AssertionError(f"{spec.name}: more than four tiles")
        row[ex.TP_NVIEWS] = len(views)
        mask = view.get(roles.mask) if roles.mask else None
        for i, v in enumerate(views):
            row[ex.TP_VIEWS + 3 * i:ex.TP_VIEWS + 3 * i + 3] = (v.rows, v.cols, v is mask)
        if roles.mask:
            row[ex.TP_MSJ] = named["mstride"]
        row[ex.TP_BOUNDED] = roles.bounded
        row[ex.TP_DATA_R], row[ex.TP_DATA_C] = data.rows, data.cols
        if dst is not None:
            row[ex.TP_DST_R], row[ex.TP_DST_C] = dst.rows, dst.cols
        if fam in ("tile_load", "tile_store"):
            row[ex.TP_GMJ], row[ex.TP_STRJ] = named[roles.gm], named["stride"]
            row[ex.TP_SLOT] = int(code[pc, C_AUX])
            row[ex.TP_ITEM] = BY_CODE[int(code[pc, C_DTYPE])].itemsize
            mat = data.buf.space == "Mat"
            if fam == "tile_load":
                row[ex.TP_ROUTE] = ex.ROUTE_GM_TO_L1 if mat else ex.ROUTE_GM_TO_UB
                frow[ex.TF_BW] = m.gm_to_l1_bytes_per_cycle if mat else m.gm_to_ub_bytes_per_cycle
            else:
                row[ex.TP_ROUTE] = ex.ROUTE_L1_TO_GM if mat else ex.ROUTE_UB_TO_GM
                frow[ex.TF_BW] = m.l1_to_gm_bytes_per_cycle if mat else m.ub_to_gm_bytes_per_cycle
                row[ex.TP_ACC_BYTES] = data.buf.dtype.itemsize
        elif fam == "tile_move":
            src = view["src"]
            row[ex.TP_ROWJ], row[ex.TP_COLJ] = named["row"], named["col"]
            row[ex.TP_SRC_R], row[ex.TP_SRC_C] = src.rows, src.cols
            frow[ex.TF_BW] = {"Left": m.l1_to_l0a_bytes_per_cycle, "Right": m.l1_to_l0b_bytes_per_cycle,
                              "Bias": m.l1_to_bias_bytes_per_cycle,
                              "Mat": m.l0c_to_l1_bytes_per_cycle}[writes[0].buf.space]
        elif fam == "tile_mma":
            a, b = view["a"], view["b"]
            row[ex.TP_MJ], row[ex.TP_NNJ], row[ex.TP_KJ] = named["m"], named["n"], named["k"]
            row[ex.TP_A_R], row[ex.TP_A_C], row[ex.TP_B_R], row[ex.TP_B_C] = a.rows, a.cols, b.rows, b.cols
            item = data.buf.dtype.itemsize     # timing/aicore_costs.matmul_cycles, once
            row[ex.TP_KTILE] = (m.cost_term(spec.name, "k_tile") * 2 // item if item <= 2
                                else m.cost_term(spec.name, "k_tile_f32"))
            frow[ex.TF_PER] = m.cost_term(spec.name, "per_repeat_f32" if item == 4 else "per_repeat")
        else:
            self._vector(m, spec.name, data.buf.dtype.name, row, frow, fm_i, fm_f, ex)
        ranges_r = [self._range(v.words()) for v in reads]
        ranges_w = [self._range(v.words()) for v in writes]
        if len(ranges_r) > 6 or len(ranges_w) > 2:
            raise AssertionError(f"{spec.name}: too many tiles for the engine's tables")
        row[ex.TP_NR], row[ex.TP_NW] = len(ranges_r), len(ranges_w)
        row[ex.TP_READS:ex.TP_READS + len(ranges_r)] = ranges_r
        row[ex.TP_WRITES:ex.TP_WRITES + len(ranges_w)] = ranges_w
        row[ex.TP_MAXJ] = len(named)

    @staticmethod
    def _vector(m, name, dtype, row, frow, fm_i, fm_f, ex):
        """A vector op's costs (timing/aicore_costs.vector_op_cycles): its rows of the formula
        table in lookup order, and the head/slope/tail model when no row fits."""
        table = m.vector_formulas
        row[ex.TP_FSTART] = len(fm_i)
        for d in (dtype, "any"):
            for (op, dt, cols), (slope, bias) in table.items():
                if op == name and dt == d and cols != "*":
                    fm_i.append([0, int(cols)])
                    fm_f.append([slope, bias])
            if (name, d, "*") in table:
                fm_i.append([0, -1])
                fm_f.append(list(table[(name, d, "*")]))
        row[ex.TP_FN] = len(fm_i) - row[ex.TP_FSTART]
        t = m.instructions[name]
        row[ex.TP_HEAD] = t.extra.get("head", t.latency)
        row[ex.TP_TAIL] = int(t.extra.get("tail", 0))
        row[ex.TP_RB] = t.extra.get("repeat_bytes", 1)
        frow[ex.TF_PER] = float(t.extra.get("per_repeat", 0.0))
        row[ex.TP_UNALIGNED] = int(t.extra.get("unaligned_floor", 0))


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
        tables = self.tables = AICoreTables(sim)
        self.replay = None               # the values replay's table, made when first needed
        self.local_words = max(prog.local_words, 1)
        acfg = np.zeros(ex.N_ACFG, np.int64)
        acfg[ex.AK_SLOTS] = slots
        acfg[ex.AK_N_BLOCKS] = n_blocks
        acfg[ex.AK_GX:ex.AK_GZ + 1] = sim.grid
        acfg[ex.AK_BX:ex.AK_BZ + 1] = sim.block
        acfg[ex.AK_WIDTH] = m.issue_width
        acfg[ex.AK_RECORD] = 1 if sim.record else 0
        acfg[ex.AK_MAX_CYCLES] = sim.max_cycles if sim.max_cycles is not None else 1 << 62
        acfg[ex.AK_AUTO] = 1 if prog.sync == "auto" else 0
        acfg[ex.AK_DEPTH] = m.pipe_queue_depth
        acfg[ex.AK_HAS_L2] = 1 if sim.l2 is not None else 0
        acfg[ex.AK_PORTS] = units
        max_ii = max(sim.pc_ii) if sim.pc_ii else 1
        acfg[ex.AK_BOOK_ROOM] = 4 * (2 + max_ii) + 8
        # the engine's own L2 (the simulation's stays untouched until the run is done)
        if sim.l2 is None:                              # unused arrays of the right types
            self.l2 = L2Cache(128, 128, zip(sim.tbase, np.zeros_like(sim.tcount)))
        else:
            self.l2 = L2Cache(m.l2_bytes, m.l2_line_bytes, zip(sim.tbase, sim.tcount))
        self.l2_first = np.array([self.l2.first_line(b) for b in sim.tbase], np.int64)
        if sim.l2 is not None:
            acfg[ex.AK_L2_MISS_EXTRA] = m.l2_miss_extra_latency
            acfg[ex.AK_LINE_BYTES] = m.l2_line_bytes
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
        n_regs = max(enc.n_regs, 1)
        seed = np.zeros((n_regs, 32), np.float64)
        for arg in prog.args:
            if arg.reg is not None:
                seed[prog.n_lane_slots + arg.reg.index, :] = sim.scalars[arg.name]
        self.seed = seed
        depth = 1 + sum(1 for ins in prog.instrs if ins.op in ("IF", "LOOP"))
        fam_index = {name: i for i, name in enumerate(FAMILIES)}
        P = len(PIPES)
        E, X = tables.flag_events, tables.cross_events
        R = max(len(tables.ranges), 1)
        self.pcs = dict(
            code=code, imm=enc.imm,
            pc_fam=np.array([fam_index[f] for f in sim.pc_family], np.int64),
            pc_op=code[:, C_OP].astype(np.int64).copy(),
            pc_pipe=np.array(sim.pc_pipe, np.int64), pc_lat=np.array(sim.pc_lat, np.int64),
            pc_ii=np.array(sim.pc_ii, np.int64),
            pc_srcs=code[:, C_SRC:C_SRC + MAX_SRCS].astype(np.int64).copy(),
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
        self.pipes = [np.zeros((units, P), np.int64) for _ in range(5)]     # pf pd fh tl fl
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
        self.rec = np.zeros((65536 if sim.record else 1, len(FIELDS)), np.int64)
        self.chunks = []
        self.totals = np.zeros((len(code), 4), np.int64)
        self.lg_i = np.zeros((4096, ex.N_LG), np.int64)
        self.lg_v = np.zeros((4096, MAX_SRCS + 4), np.float64)
        self.ctx = np.zeros(10, np.int64)
        self.info = np.zeros(8, np.int64)
        self.pend_idx = np.zeros(32, np.int64)
        self.pend_val = np.zeros(32, np.float64)
        self.l1 = np.zeros(1, np.float64)
        self.shape = np.zeros(8, np.int64)
        self.hz_out = np.zeros(3, np.int64)
        self.out = np.zeros(5, np.int64)
        self.waiters = np.zeros(3, np.int64)
        start_slots(ex, self.st, self.ht, self.hk, self.hv, slots)

    def _call(self, budget):
        ex, p = self.ex, self.pcs
        pf, pd, fh, tl, fl = self.pipes
        l2 = self.l2
        return ex.aicore_engine_run(
            budget, self.acfg, self.af, self.st, self.ht, self.hk, self.hv, self.keys, self.vals,
            self.keys2, self.vals2,
            p["code"], p["imm"], p["pc_fam"], p["pc_op"], p["pc_pipe"], p["pc_lat"], p["pc_ii"],
            p["pc_srcs"], p["pc_dst"], self.tables.tp, self.tables.tf, self.tables.fm_i,
            self.tables.fm_f, self.tables.ov, self.seed, self.regs, self.ready, self.producer,
            self.wst, self.stacks, self.uv, self.bv, self.bx, pf, pd, fh, tl, fl, self.qb, self.qh,
            self.qn, self.fb, self.fhd, self.fn, self.cb, self.chd, self.cn, *self.hz, *self.ak,
            *self.l2_links, *self.lk, l2.state, l2.link, self.l2_first,
            self.sim.hbm, self.sim.tbase, self.sim.tcount, self.sim.tbytes, self.routes, self.rec,
            self.totals, self.lg_i, self.lg_v, self.ctx, self.info, self.pend_idx, self.pend_val,
            self.l1, self.shape, self.hz_out, self.out, self.waiters)

    def run(self):
        """Run the launch's timing; returns (status, total cycles) where status is 'done',
        'limit' or 'fallback' (the caller then runs the SimPy model). Values are replayed
        here for 'done' and 'limit'."""
        ex, st, sim = self.ex, self.st, self.sim
        while True:
            status = self._call(EVENTS_PER_CALL)
            sim.progress.update(int(st[ex.S_BLOCKS_DONE]), f"cycle {int(st[ex.S_NOW])}")
            if status == ex.ENG_YIELD:
                continue
            if status == ex.ENG_GROW:
                self._grow(int(st[ex.S_GROW]))
                continue
            break
        if status == ex.ENG_FALLBACK:
            return "fallback"
        if sim.record:
            self.chunks.append(self.rec[:st[ex.S_REC_N]])
            sim.record_array = np.concatenate(self.chunks) if len(self.chunks) > 1 else self.chunks[0].copy()
            self.chunks = []
        else:
            sim.pc_totals = PcTotals.from_array(self.totals)
        sim.end_time = int(st[ex.S_END_TIME])
        if sim.l2 is not None:
            sim.l2 = self.l2
            sim.aicore_stats.l2_hits, sim.aicore_stats.l2_misses = self.l2.hits, self.l2.misses
        for route, extra in zip(ROUTES, self.routes.tolist()):
            sim.aicore_stats.add_route(route, extra)
        unfinished = int(st[ex.S_UNFINISHED])
        if status == ex.ENG_LIMIT:
            self.replay_values(before=int(sim.max_cycles))
            return "limit"
        self.replay_values()
        if unfinished:
            return "deadlock"
        return "done"

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
        stores = np.array([sim.pc_spec[pc].family == "tile_store" for pc in range(len(sim.pc_spec))])
        if sim.hbm_init is not None:                # initcheck's record, made at dispatch
            slot_of = self.tables.tp[:, ex.TP_SLOT]
            for pc, rows, cols, off, stride in lg[stores[pcs]][:, [ex.LG_PC, ex.LG_ROWS, ex.LG_COLS,
                                                                   ex.LG_OFF, ex.LG_STRIDE]].tolist():
                window(sim.hbm_init, int(sim.tbase[slot_of[pc]]) + off, rows, cols, stride)[...] = 1
        if not sim.values:
            return
        if self.replay is None:
            self.replay = replay_table(sim)
        gx, gy, gz = sim.grid
        replay_values(sim, ex, lg, vals, *self.replay, self.local_words, gx * gy * gz, before)

    # ---------------------------------------------------------------- growing buffers
    def _grow(self, what):
        ex = self.ex
        if what == ex.GROW_HEAP:
            n = len(self.ht) * 2
            self.ht, self.hk, self.hv = (grown(a, n) for a in (self.ht, self.hk, self.hv))
        elif what == ex.GROW_RECORDS:
            self.chunks.append(self.rec[:self.st[ex.S_REC_N]].copy())
            self.rec = np.zeros((min(2 * len(self.rec), 1 << 20), len(FIELDS)), np.int64)
            self.st[ex.S_REC_N] = 0
        elif what == ex.GROW_LOG:
            n = 2 * len(self.lg_i)
            self.lg_i, self.lg_v = grown(self.lg_i, n), grown(self.lg_v, n)
        else:                                               # GROW_TABLE
            self.keys, self.vals, used = rebuilt_table(ex, self.keys, self.vals, int(self.st[ex.S_NOW]),
                                                       int(self.acfg[ex.AK_PORTS]),
                                                       int(self.acfg[ex.AK_BOOK_ROOM]))
            self.keys2, self.vals2 = np.full(len(self.keys), -1, np.int64), np.zeros(len(self.keys), np.int64)
            self.st[ex.S_TABLE_USED] = used
