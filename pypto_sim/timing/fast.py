"""The compiled event loop of the timing model (exec/compiled/timing.py), driven from here.

``LaunchSimulation.run`` uses it for kernels of lane instructions only (with or without the
race, init and sync checks), outside the debugger; everything else runs under SimPy. Both
give the same records, cycles, values and errors (tests/test_fast_engine.py and
tests/test_fast_engine_fuzz.py): the compiled loop numbers and orders its events exactly as
SimPy does. ``PYPTO_TIMING_ENGINE=simpy`` (pto.Settings.timing_engine) forces the SimPy
model (for instance to compare), ``fast`` to insist on the compiled one.

This module owns the engine's arrays: it sizes them, grows them when the engine says a
buffer is full, shows progress between calls, and turns the engine's results into what
LaunchSimulation reports (records, total cycles, the kernel's errors).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..errors import LaunchError
from ..exec import gm
from ..ir.program import C_DST, C_OP, block_coords, register_sources
from ..isa import FAMILIES
from .records import CAUSE, FIELDS, ROWS_PER_CHUNK, PcTotals, RecordColumns

ENGINES = ("auto", "simpy", "fast")     # pto.Settings.timing_engine (PYPTO_TIMING_ENGINE)
EVENTS_PER_CALL = 250_000          # between progress redraws
_MEM_CODE = {None: 0, "hbm": 1, "l1": 2}


def initial_sizes(warps: int, book_room: int, slots: int) -> dict:
    """First capacities of the engine's growable buffers (they double when full): heap events,
    pending commits, record rows, booking-table entries (a power of two)."""
    return dict(heap=4 * warps + 64, commits=2 * warps + 64, rows=ROWS_PER_CHUNK,
                table=1 << max(12, int(4 * (book_room * slots + 64)).bit_length()))


def link_arrays(ex, cores):
    """Empty HBM links (the chip's, then each core's read and write link) as link_book
    keeps them: busy-interval starts, ends and counts."""
    n = 1 + 2 * cores
    return (np.zeros((n, ex.LINK_INTERVALS), np.float64), np.zeros((n, ex.LINK_INTERVALS), np.float64),
            np.zeros(n, np.int64))


def engine_setting(value=None) -> str:
    """The timing engine to use: the argument (the launch's settings), else 'auto'."""
    value = value or "auto"
    if value not in ENGINES:
        raise LaunchError(f"timing engine {value!r} (PYPTO_TIMING_ENGINE): choose one of {ENGINES}")
    return value


def why_not_fast(sim) -> str | None:
    """Why the compiled engine cannot run this launch (None: it can)."""
    if not hasattr(sim.ex, "engine_run"):
        return "this executor module has no compiled event loop"
    if sim.keep_warp_states:
        return "the debugger steps the SimPy model"
    if any(spec.is_tile for spec in sim.pc_spec):
        return "tile instructions run in the SimPy model"
    return None


class FastEngine:
    """One launch on the compiled event loop."""

    def __init__(self, sim):
        self.sim = sim
        ex = sim.ex
        self.ex = ex
        _check_cause_codes(ex)
        m, prog, enc = sim.m, sim.prog, sim.enc
        code = enc.code
        wpb = sim.warps_per_block
        gx, gy, gz = sim.grid
        n_blocks = gx * gy * gz
        per_core = min(m.warp_slots_per_core // wpb, m.l1_bytes // max(sim.block_l1, 1))
        self.slots = min(per_core * m.cores, n_blocks)
        slots, warps = self.slots, self.slots * wpb
        max_ii = max(sim.pc_ii) if sim.pc_ii else 1
        cfg = np.zeros(ex.N_CFG, np.int64)
        cfg[ex.K_CORES] = m.cores
        cfg[ex.K_WPB] = wpb
        cfg[ex.K_LANES] = sim.block_lanes
        cfg[ex.K_GX:ex.K_GZ + 1] = sim.grid
        cfg[ex.K_BX:ex.K_BZ + 1] = sim.block
        cfg[ex.K_WIDTH] = m.issue_width
        cfg[ex.K_STORE_LAT] = sim.store_latency
        cfg[ex.K_N_BLOCKS] = n_blocks
        cfg[ex.K_SECTOR] = m.sector_bytes
        cfg[ex.K_RECORD] = 1 if sim.record else 0
        cfg[ex.K_MAX_CYCLES] = sim.max_cycles if sim.max_cycles is not None else 1 << 62
        cfg[ex.K_SLOTS] = slots
        cfg[ex.K_BOOK_ROOM] = 2 * wpb * (1 + max_ii) + 8      # bookings one event may add
        checks = sim.checks
        cfg[ex.K_RACE] = 1 if checks and checks.race else 0
        cfg[ex.K_INIT] = 1 if checks and checks.init else 0
        cfg[ex.K_SYNC] = 1 if checks and checks.sync else 0
        cfg[ex.K_HBM_SHIFT] = checks.hbm_shift if checks else 0
        self.cfg = cfg
        n_regs = max(enc.n_regs, 1)
        seed = np.zeros((n_regs, 32), np.float64)
        for arg in prog.args:
            if arg.reg is not None:
                seed[prog.n_lane_slots + arg.reg.index, :] = sim.scalars[arg.name]
        depth = 1 + sum(1 for ins in prog.instrs if ins.op in ("IF", "LOOP"))
        fam_index = {name: i for i, name in enumerate(FAMILIES)}
        self.pcs = dict(
            code=code, imm=enc.imm,
            pc_fam=np.array([fam_index[f] for f in sim.pc_family], np.int64),
            pc_op=code[:, C_OP].astype(np.int64).copy(),
            pc_pipe=np.array(sim.pc_pipe, np.int64), pc_lat=np.array(sim.pc_lat, np.int64),
            pc_ii=np.array(sim.pc_ii, np.int64),
            pc_srcs=register_sources(code),
            pc_dst=code[:, C_DST].astype(np.int64).copy(),
            pc_mem=np.array([_MEM_CODE[k] for k in sim.pc_mem], np.int64))
        sizes = initial_sizes(warps, int(cfg[ex.K_BOOK_ROOM]), slots)
        heap, commits = sizes["heap"], sizes["commits"]
        self.st = np.zeros(ex.N_ST, np.int64)
        self.ht = np.zeros(heap, np.int64)
        self.hk = np.zeros(heap, np.int64)
        self.hv = np.zeros((heap, 2), np.int64)
        self.keys = np.full(sizes["table"], -1, np.int64)
        self.vals = np.zeros(sizes["table"], np.int64)
        self.lk_s, self.lk_e, self.lk_n = link_arrays(ex, m.cores)
        self.bw = np.array([sim.read_bw, sim.write_bw, sim.chip_bw], np.float64)
        self.seed = seed
        self.regs = np.zeros((warps, n_regs, 32), np.float64)
        self.ready = np.zeros((warps, n_regs), np.int64)
        self.producer = np.full((warps, n_regs), -1, np.int64)
        self.wst = np.zeros((warps, 5), np.int64)
        self.stacks = np.zeros((warps, depth, 7), np.int64)
        self.wv = np.zeros((warps, ex.N_WV), np.int64)
        self.wv[:, ex.W_PHASE] = ex.PH_DONE
        self.bv = np.zeros((slots, ex.N_BV), np.int64)
        self.waitq = np.zeros((slots, wpb), np.int64)
        self.rel = np.zeros((slots, wpb), np.int64)
        self.l1 = np.zeros((slots, max(prog.local_words, 1)), np.float64)
        self.hbm_init = sim.hbm_init if sim.hbm_init is not None else gm.init_new(len(sim.hbm))
        self.cm_idx = np.zeros((commits, 32), np.int64)
        self.cm_val = np.zeros((commits, 32), np.float64)
        self.cm_n = np.zeros(commits, np.int64)
        self.cm_tgt = np.zeros((commits, ex.N_CM), np.int64)
        self.cm_free = np.arange(commits, dtype=np.int64)
        self.st[ex.S_COMMIT_FREE] = commits
        self.rec = np.zeros((sizes["rows"] if sim.record else 1, len(FIELDS)), np.int64)
        self.columns = RecordColumns()
        self.ctx = np.zeros(10, np.int64)
        self.info = np.zeros(8, np.int64)
        self.pend_idx = np.zeros(32, np.int64)
        self.pend_val = np.zeros(32, np.float64)
        self.wfault = np.zeros((warps, ex.N_WFAULT), np.int64)
        self.totals = np.zeros((len(code), 4), np.int64)       # PcTotals, without records
        if cfg[ex.K_RACE]:             # racecheck's shadows (KernelChecks keeps the same)
            self.hbm_shadow = checks.hbm_shadow
            self.l1_shadow = np.full((slots, max(prog.local_words, 1), ex.SHADOW_COLS), -1, np.int64)
        else:
            self.hbm_shadow = np.zeros((1, ex.SHADOW_COLS), np.int64)
            self.l1_shadow = np.zeros((1, 1, ex.SHADOW_COLS), np.int64)
        start_slots(ex, self.st, self.ht, self.hk, self.hv, slots)

    # ---------------------------------------------------------------- running
    def run(self) -> int:
        """Run the launch; return total cycles (records go to the simulation)."""
        ex, st, sim = self.ex, self.st, self.sim
        while True:
            status = ex.engine_run(EVENTS_PER_CALL, self.cfg, st, self.ht, self.hk, self.hv,
                                   self.keys, self.vals, self.lk_s, self.lk_e, self.lk_n, self.bw, self.pcs["code"],
                                   self.pcs["imm"], self.pcs["pc_fam"], self.pcs["pc_op"],
                                   self.pcs["pc_pipe"], self.pcs["pc_lat"], self.pcs["pc_ii"],
                                   self.pcs["pc_srcs"], self.pcs["pc_dst"], self.pcs["pc_mem"],
                                   self.seed, self.regs, self.ready, self.producer, self.wst,
                                   self.stacks, self.wv, self.bv, self.waitq, self.rel, self.l1,
                                   sim.hbm, self.hbm_init, sim.tbase, sim.tcount, sim.tbytes,
                                   self.cm_idx, self.cm_val, self.cm_n, self.cm_tgt, self.cm_free,
                                   self.rec, self.ctx, self.info, self.pend_idx, self.pend_val,
                                   self.hbm_shadow, self.l1_shadow, self.wfault, self.totals)
            sim.progress.update(int(st[ex.S_BLOCKS_DONE]), f"cycle {int(st[ex.S_NOW])}")
            if status == ex.ENG_YIELD:
                continue
            if status == ex.ENG_GROW:
                self._grow(int(st[ex.S_GROW]))
                continue
            break
        if sim.record:
            sim.record_columns, self.rec = finished_records(ex, st, self.rec, self.columns), None
        else:
            sim.pc_totals = PcTotals.from_array(self.totals)
        sim.end_time = int(st[ex.S_END_TIME])
        if status == ex.ENG_FAULT:
            self._flush_commits()
            raise self._error(int(st[ex.S_FAULT_G]))
        unfinished = int(st[ex.S_UNFINISHED])
        if unfinished:
            if status == ex.ENG_LIMIT:
                raise sim.limit_error(unfinished, self._positions())
            raise sim.deadlock_error(self._stuck())
        return sim.end_time

    def _error(self, g):
        """The error warp g's process failed with (its wfault row says which)."""
        ex, sim = self.ex, self.sim
        wpb = sim.warps_per_block
        f = [int(x) for x in self.wfault[g]]
        block_id, w = int(self.bv[g // wpb, ex.B_BLOCK]), g % wpb
        blk = SimpleNamespace(id=block_id, coords=block_coords(block_id, sim.grid))
        kind, pc, cycle = f[ex.F_KIND], f[ex.F_PC], f[ex.F_CYCLE]
        if kind == ex.FK_OOB:
            return sim._oob(pc, blk, w, np.array([f[ex.F_LANE], f[ex.F_WORD], f[ex.F_COUNT], f[ex.F_HI]]))
        if kind == ex.FK_RACE:
            sim.checks.report[:] = f[ex.F_REPORT:ex.F_REPORT + 8]
            space = "hbm" if f[ex.F_SPACE] == _MEM_CODE["hbm"] else "l1"
            return sim.checks._race(pc, blk, w, bool(f[ex.F_WRITE]), space, cycle)
        if kind == ex.FK_UNINIT:
            return sim.checks._uninit(pc, blk, w, f[ex.F_LANE], f[ex.F_WORD], cycle)
        if kind == ex.FK_SYNC_BARRIER:
            return sim.checks.partial_barrier_error(pc, block_id, w, f[ex.F_MASK], f[ex.F_ALIVE])
        waiting = [q for q in range(wpb) if f[ex.F_WAITING] >> q & 1]
        return sim.checks.early_exit_error(block_id, w, waiting, f[ex.F_WAIT_PC])

    def _stuck(self):
        """(block id, warp, pc it waits at or None) of every unfinished warp, in order."""
        ex, wpb = self.ex, self.sim.warps_per_block
        out = []
        for g in np.nonzero(self.wv[:, ex.W_PHASE] != ex.PH_DONE)[0].tolist():
            waiting = self.wv[g, ex.W_PHASE] == ex.PH_BARRIER
            out.append((int(self.bv[g // wpb, ex.B_BLOCK]), g % wpb,
                        int(self.wst[g, 0]) if waiting else None))
        return sorted(out, key=lambda s: (s[0], s[1]))

    def _positions(self):
        """(block id, warp, pc) of every unfinished warp, in order: a warp's state row holds
        the pc it issues next, waits at (a barrier) or ended at (EXIT, retiring)."""
        ex, wpb = self.ex, self.sim.warps_per_block
        out = [(int(self.bv[g // wpb, ex.B_BLOCK]), g % wpb, int(self.wst[g, 0]))
               for g in np.nonzero(self.wv[:, ex.W_PHASE] != ex.PH_DONE)[0].tolist()]
        return sorted(out)

    def _flush_commits(self):
        """A fault: what was issued before it lands (the pending commits, in their order)."""
        ex = self.ex
        n = int(self.st[ex.S_HEAP_N])
        pending = [(int(self.hk[i]), int(self.hv[i, 1])) for i in range(n)
                   if self.hv[i, 0] == ex.EV_COMMIT]
        for _key, slot in sorted(pending):
            idx = self.cm_idx[slot, :self.cm_n[slot]]
            vals = self.cm_val[slot, :self.cm_n[slot]]
            if self.cm_tgt[slot, ex.L_TGT] < 0:
                ex.commit_gm(self.sim.hbm, idx, vals, len(idx), self.cm_tgt[slot, ex.L_DTYPE])
            else:
                self.l1[self.cm_tgt[slot, ex.L_TGT], idx] = vals

    # ---------------------------------------------------------------- growing buffers
    def _grow(self, what):
        ex = self.ex
        if what == ex.GROW_HEAP:
            n = len(self.ht) * 2
            self.ht = grown(self.ht, n)
            self.hk = grown(self.hk, n)
            self.hv = grown(self.hv, n)
        elif what == ex.GROW_RECORDS:
            self.rec = flushed_records(ex, self.st, self.rec, self.columns)
        elif what == ex.GROW_COMMITS:
            old = len(self.cm_n)
            n = 2 * old
            self.cm_idx = grown(self.cm_idx, n)
            self.cm_val = grown(self.cm_val, n)
            self.cm_n = grown(self.cm_n, n)
            self.cm_tgt = grown(self.cm_tgt, n)
            free = int(self.st[ex.S_COMMIT_FREE])
            cm_free = np.zeros(n, np.int64)
            cm_free[:free] = self.cm_free[:free]
            cm_free[free:free + old] = np.arange(old, n)
            self.cm_free = cm_free
            self.st[ex.S_COMMIT_FREE] = free + old
        else:                                               # GROW_TABLE
            self.keys, self.vals, used = rebuilt_table(ex, self.keys, self.vals, int(self.st[ex.S_NOW]),
                                                       int(self.cfg[ex.K_CORES]),
                                                       int(self.cfg[ex.K_BOOK_ROOM]))
            self.st[ex.S_TABLE_USED] = used


def start_slots(ex, st, ht, hk, hv, slots):
    """SimPy's start(): one process per core slot, numbered as SimPy numbers them (at cycle 0,
    all URGENT, in order: a sorted array, so already a heap), then run()'s limit marker."""
    ht[:slots] = 0
    hk[:slots] = ex.URGENT * int(ex.PRIO_SHIFT) + np.arange(slots)
    hv[:slots, 0] = ex.EV_SLOT
    hv[:slots, 1] = np.arange(slots)
    st[ex.S_SEQ] = st[ex.S_HEAP_N] = slots
    st[ex.S_LIMIT_KEY] = ex.URGENT * int(ex.PRIO_SHIFT) + slots


def flushed_records(ex, st, rec, columns):
    """The engine's record buffer is full: its rows go to columns (RecordColumns) and the
    buffer is emptied for reuse, doubled while below ROWS_PER_CHUNK rows (so one event's rows
    always fit); returns the buffer to use next."""
    columns.add(rec[:st[ex.S_REC_N]])
    st[ex.S_REC_N] = 0
    if len(rec) < ROWS_PER_CHUNK:
        rec = np.zeros((min(2 * len(rec), ROWS_PER_CHUNK), rec.shape[1]), np.int64)
    return rec


def finished_records(ex, st, rec, columns):
    """The launch is over: the buffer's last rows go to columns, and all rows come back as
    LaunchRecords (the caller drops its buffer)."""
    columns.add(rec[:st[ex.S_REC_N]])
    return columns.records()


def grown(a, n):
    """a, grown to n rows (zeros after its own)."""
    out = np.zeros((n,) + a.shape[1:], a.dtype)
    out[:len(a)] = a
    return out


def rebuilt_table(ex, keys, vals, now, ports, room):
    """The booking table without its past entries, doubled until what is left and the room
    one event may add fill at most a quarter of it: (keys, vals, entries used)."""
    size = len(keys)
    while True:
        new_keys = np.full(size, -1, np.int64)
        new_vals = np.zeros(size, np.int64)
        used = ex.table_rebuild(keys, vals, new_keys, new_vals, now, ports)
        if 4 * (used + room) <= size:
            return new_keys, new_vals, used
        size *= 2


def _check_cause_codes(ex):
    """The engine's cause numbers are records.py's (one list of causes)."""
    for name in ("none", "operand", "pipe", "issue", "barrier", "barrier_block"):
        assert getattr(ex, "CA_" + name.upper()) == CAUSE[name], name
