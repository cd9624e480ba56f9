"""The real AI core in the timing model (docs/aicore.md): one block of an AI-core kernel is
one AI core, three units that each run their own program (Program.unit_entry) on their own
scalar unit - unit 0 the AIC
(cube core: L1, L0A/L0B/L0C, bias table; pipes MTE2, MTE1, M, FIX, and MTE3 for a Mat tile's
store), units 1 and 2 the AIVs
(vector cores: UB each; pipes MTE2, V, MTE3).

Every unit has one in-order queue per pipe; the scalar unit hands each tile instruction to
its pipe at issue. An operation starts when its pipe has finished the one before it, when the
pipe's flag waits are satisfied (a wait_flag to PIPE_S holds the scalar unit itself, so
nothing the unit issues after it starts before its set_flag fires) and, with
``sync="auto"``, when the tiles it reads and writes are no longer being written or read by
another pipe (PTO-Auto's data ordering, as Perf-Sim's
TileDepTracker). With ``sync="manual"`` nothing but flags orders two pipes. An operation reads
its sources when it starts and writes its destination when it completes, so a missing flag
gives the stale value the hardware would; ``check="race"`` reports it (AICoreRaces).

The rules below are the step functions of exec/compiled/aicore_steps.py (tile_dispatch) and
exec/compiled/aicore_sync.py (the flag, barrier and cross-core steps) over the arrays of
timing/aicore_pipes.py, which both this SimPy model and the compiled event loop call; this module adds what only the SimPy model
does around them: the SimPy processes' waits, the values, the race check and the errors.

Costs (machine table; sources there):
- TLOAD GM -> Mat / Vec (MTE2): latency + bytes over the unit's GM->L1 / GM->UB link, the L2's
  chip link and, for the lines that miss in L2, HBM's chip link; latency less the L2's miss
  extra when every line hits (timing/l2.py). Each TPREFETCH record (one DMA of the header's) is
  a TLOAD into Vec of its bytes (family tile_load), its lines kept in the L2 as a TLOAD's.
- TSTORE Vec / Mat -> GM (MTE3): latency + bytes over the UB->GM / L1->GM link and HBM.
- Both transfers hold their pipe only while their bytes are issued (the next transfer starts
  then; the data lands a latency later) and retire in order: a transfer completes no earlier
  than the one before it on its pipe.
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
  row (the row reductions' reducing repeat) + per_element per element (a scalar loop's), and the op's tail at the next sync on V, which
  keeps V busy. A row reduction that takes pto-isa's fast fp32 tree (the table's
  [row_reduce_fp32], timing/row_reduce_paths.py) costs that tree's steps instead.
"""
from __future__ import annotations

import numpy as np

from ..errors import DeadlockError, UninitializedReadError
from ..exec.aicore_flag_errors import cross_core_deadlock, cross_flag_overflow, unset_flag_error
from ..exec import gm, gm_index_ops
from ..exec.scalar_memory import DataCache
from ..exec.aicore_tiles import GM_ADD, GM_READ, GM_WRITE, UNIT_NAMES, TileOp, operands
from ..ir.program import C_AUX, block_coords
from ..isa import PIPES, PTO_PIPE_NAMES
from .aicore_races import (SOFT_COLUMN, AICoreRaces, late_gm_check, late_gm_dispatch, race_check,
                           syncall_arrive, syncall_pass)
from .aicore_scalar_memory import check_dma
from .aicore_signals import signal_columns
from .aicore_syncall import land_soft_add
from ..exec.syncall_rounds import check_soft_count
from ..isa.syncall_modes import soft_release, soft_target
from .checks import flag_lines, never_waited_error
from .records import CAUSE

N_UNITS = len(UNIT_NAMES)
ALL = -1
SCALAR = PIPES.index("scalar")      # PIPE_S: a wait_flag to it holds the scalar unit


class AICoreState:
    """Per block (one AI core) in the SimPy model: its core slot (the row of the launch's
    AICorePipes its units use), its units' memories (units 0 and 1 share blk.l1: AIC spaces
    and AIV0's UB are at different words; the AIV1's UB is the same words of its own array),
    its cross-core event, its units' DataCaches (exec/scalar_memory.py) and, with check="race",
    the happens-before record and the vector clocks that travel with its flags and cross-core
    signals."""

    def __init__(self, sim, blk, race):
        self.env = sim.env
        self.p = blk.core.index
        self.arrays = (blk.l1, blk.l1, np.zeros_like(blk.l1))
        self.cross_event = sim.env.event()
        self.caches = tuple(DataCache(sim.hbm) for _ in range(N_UNITS))
        self.race = AICoreRaces(signal_columns(sim)) if race else None
        self.flag_clocks: dict = {}      # (unit, src, dst, event) -> clocks, oldest first
        self.cross_clocks: dict = {}     # (to unit, event, from unit) -> clocks, oldest first
        self.syncall_clocks: dict = {}   # (kind, round) -> the clocks its participants here arrived with
        sim.aicore_pipes.reset_block(self.p)

    def array(self, unit):
        return self.arrays[unit]

    def signal(self):
        event, self.cross_event = self.cross_event, self.env.event()
        event.succeed()


def dispatch(sim, pc, blk, w, ws, now):
    """Unit w hands tile instruction pc to its pipe at cycle now. Schedules the read at the
    start and the write at the completion (unless the launch skips values); returns (start,
    complete, bytes, cause, cause pc, why: the scalar unit's cause, the load's L2 miss and
    shared-bandwidth wait as records.why_code packs them)."""
    ai = blk.aicore
    # the executor decodes the operands: a fault is reported here, before any state changes
    op = TileOp(sim, pc, operands(sim, pc, ws.regs), ai.array(w), w, blk.coords)
    start, complete, nbytes, cause, cause_pc, why = sim.aicore_pipes.dispatch(pc, ai.p, w, ws.regs, now)
    why += ws.cause                     # records.why_code: the scalar unit's wait before it
    late = None
    if ai.race is not None:
        race_check(sim, ai, blk, w, sim.pc_pipe[pc], pc, *op.race_views(), op.gm)
        check_dma(sim, blk, w, pc, op.gm)           # against the DataCaches' dirty lines
        if op.index is not None:
            late = late_gm_dispatch(sim, ai, w, sim.pc_pipe[pc], pc)
    if sim.checks and sim.checks.init:
        missing = op.first_unwritten(sim.hbm_init)
        if missing is not None:
            raise uninitialised_load(sim, pc, blk, w, op.gm[0], missing, now)
    # ---- values (the executor's): read at the start, written at the completion
    if sim.values:
        box = {}

        def read():
            v = op.read()
            if op.index is not None:
                gm_index_checks(sim, blk, w, pc, op, late)
            box["v"] = v
        sim._schedule_effect(start - now, read)
        # (no value when the read faulted: the launch stops, and its write never lands)
        sim._schedule_effect(complete - now, lambda: op.write(box.pop("v")) if "v" in box else None)
    op.mark_written(sim.hbm_init)       # initcheck: a store's elements count as written
    return start, complete, nbytes, cause, cause_pc, why


def gm_index_checks(sim, blk, w, pc, op, late):
    """check="race" / "initcheck" of an MGATHER / MSCATTER as it reads its index tile (its GM
    elements, gm_index_ops.gm_accesses: the table's, op.touched, and the GM -> L1 forms' indices
    and scratch, are known from then): racecheck compares them with the other GM accesses, with
    the clocks of its dispatch (late_gm_check); initcheck reports the first element a gather
    reads (its indices, then its table's), or an atomic='add' scatter adds to, that was never
    written, as a TLOAD's or a tstore(atomic='add')'s (a scatter's, and the element form's
    scratch, count as written at its write, gm_index_ops.write)."""
    if not sim.checks:
        return
    accesses = gm_index_ops.gm_accesses(op)
    kinds = {"read": GM_READ, "write": GM_WRITE, "add": GM_ADD}
    if late is not None:
        late_gm_check(sim, blk.aicore, blk, w, sim.pc_pipe[pc], pc, late,
                      [(slot, elements, item, kinds[kind]) for slot, elements, item, kind in accesses])
    if not sim.checks.init:
        return
    for slot, elements, item, kind in accesses:
        if kind != "write" and len(elements):
            bad = np.nonzero(~gm.init_test(sim.hbm_init, elements * item + int(sim.tbase[slot])))[0]
            if len(bad):
                raise uninitialised_load(sim, pc, blk, w, slot, int(elements[bad[0]]), sim.env.now)


def uninitialised_load(sim, pc, blk, w, slot, element, now):
    """initcheck: a TLOAD of unit w reads element `element` of tensor slot, never written (or
    a tstore(atomic='add') adds to it)."""
    ins = sim.prog.instrs[pc]
    line, tensor = ins.line, sim.tensor_names[slot]
    load = ins.op == "TLOAD" or ins.op.startswith("MGATHER")
    what = "reads" if load else "(atomic='add') adds to"
    return UninitializedReadError(
        f"initcheck: {ins.op} at line {line} (block {blk.coords} {UNIT_NAMES[w]}, cycle {now}) {what} "
        f"{tensor}[{element}], which was never written", kernel=sim.kernel_name, file=sim.prog.file,
        line=line, block=blk.coords, warp=w, unit=UNIT_NAMES[w], lane=None, word=element,
        hint="copy data in with pto.memcpy_h2d first, or write the elements (a tstore, an earlier "
             "kernel) before " + ("loading them" if load else "adding to them (zeros, for a sum)"))


def unmatched_aicore_flags(sim, blk):
    """synccheck at a block's end: a unit's set_flag no wait_flag took (on hardware the event
    stays set into the next kernel) is a SyncCheckError naming the unit, pipes and event; so
    is a cross-core signal no cross_core_wait_flag took."""
    pending = sim.aicore_pipes.fn[3 * blk.core.index:3 * blk.core.index + 3]
    for w, src, dst, event in zip(*np.nonzero(pending)):
        names = [PTO_PIPE_NAMES[PIPES[int(x)]] for x in (src, dst)]
        raise never_waited_error(
            sim, f"set_flag(pto.{names[0]}, pto.{names[1]}, {int(event)}) of {UNIT_NAMES[int(w)]} in block "
            f"{blk.coords}", int(pending[w, src, dst, event]),
            flag_lines(sim.prog, "SET_FLAG", (int(src), int(dst), int(event))),
            "pair every set_flag with a wait_flag on the same pipes and event (pre-armed flags are waited "
            "for at the end, as pto-isa's kernels do)", block=blk.coords, warp=int(w), unit=UNIT_NAMES[int(w)])
    # a cross-core signal no cross_core_wait_flag took: the receiving unit's counter for the
    # event stays set into the next kernel, as a set_flag's does
    signals = sim.aicore_pipes.cn[blk.aicore.p]
    for to, event, frm in zip(*np.nonzero(signals)):
        raise never_waited_error(
            sim, f"cross_core_set_flag({int(event)}) of {UNIT_NAMES[int(frm)]} to {UNIT_NAMES[int(to)]} in block "
            f"{blk.coords}", int(signals[to, event, frm]), flag_lines(sim.prog, "CROSS_CORE_SET_FLAG", (int(event),)),
            f"have {UNIT_NAMES[int(to)]} take each signal with pto.cross_core_wait_flag({int(event)}) (an AIC's "
            "signal goes to both AIVs of the core)", block=blk.coords, warp=int(frm), unit=UNIT_NAMES[int(frm)])


# ---------------------------------------------------------------- flags
def set_or_wait_flag(sim, pc, blk, w, now):
    """SET_FLAG / WAIT_FLAG of unit w at dispatch: a flag fires when the source pipe has
    finished what was queued before it; a wait holds the destination pipe until then, a wait
    on PIPE_S the scalar unit (wait_before_issue), so everything the unit issues after it is
    ordered after the set_flag's source (racecheck joins its clocks into every queue of the
    unit, as a cross-core wait's)."""
    src, dst, event = (int(x) for x in sim.enc.code[pc, C_AUX:C_AUX + 3])
    ai, pipes = blk.aicore, sim.aicore_pipes
    race = ai.race
    key = (w, src, dst, event)
    if sim.pc_name[pc] == "SET_FLAG":
        if race is not None:
            ai.flag_clocks.setdefault(key, []).append(race.carry(w, src))
        pipes.set_flag(ai.p, w, src, dst, event, now)
        return
    if not pipes.wait_flag(ai.p, w, src, dst, event):
        raise unset_flag_error(sim, pc, w, blk.coords, (src, dst, event))
    if race is not None:
        race.join(w, ALL if dst == SCALAR else dst, ai.flag_clocks[key].pop(0))


def pipe_barrier(sim, pc, blk, w, now):
    """PIPE_BARRIER: later operations on the pipe (every pipe for PIPE_ALL) start after the
    earlier ones on it (on every pipe) have completed; returns when the scalar may go on."""
    pipe = int(sim.enc.code[pc, C_AUX])
    ai = blk.aicore
    done = sim.aicore_pipes.barrier(ai.p, w, pipe, now)
    if pipe == ALL and ai.race is not None:
        ai.race.barrier_all(w)
    return done


def cross_core_set(sim, pc, blk, w, now):
    """CROSS_CORE_SET_FLAG: fires when the unit's queued operations (on the given pipe, or on
    every pipe) are done; from the AIC to its AIVs, from an AIV to the AIC (Program.cross_partners)."""
    event, pipe = int(sim.enc.code[pc, C_AUX]), int(sim.enc.code[pc, C_AUX + 1])
    ai = blk.aicore
    limit = sim.m.cross_core_flag_limit
    for to in sim.prog.cross_partners(w):
        if sim.aicore_pipes.cross_pending(ai.p, to, event, w) >= limit:
            raise cross_flag_overflow(sim, pc, w, blk.coords, to, limit)
    if ai.race is not None:
        vc = ai.race.carry(w, pipe)
        for to in sim.prog.cross_partners(w):
            ai.cross_clocks.setdefault((to, event, w), []).append(vc)
    sim.aicore_pipes.cross_set(ai.p, w, event, pipe, now)
    ai.signal()


def cross_core_take(sim, blk, w, event) -> int:
    """Consume the signals unit w waited for; return when the last of them fired."""
    ai = blk.aicore
    if ai.race is not None:
        for s in sim.prog.cross_partners(w):
            ai.race.join(w, ALL, ai.cross_clocks[(w, event, s)].pop(0))
    return sim.aicore_pipes.cross_take(ai.p, w, event)


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
    return cross_core_deadlock(sim, [(block_coords(b, sim.grid), u, pc) for b, u, pc in stuck])


def wait_before_issue(sim, pc, blk, w, ws, t, cause):
    """Before unit w issues sync instruction pc: a cross-core wait holds the scalar until
    the other unit(s) signalled; a pipe_barrier(PIPE_ALL) until the unit's pipes drained; a
    wait_flag(src, PIPE_S) until its set_flag fires (exec/compiled/aicore_sync.flag_release).
    A generator (the SimPy process yields from it); returns (t, cause)."""
    name = sim.pc_name[pc]
    if name == "CROSS_CORE_WAIT_FLAG":
        event = int(sim.enc.code[pc, C_AUX])
        pipes, p = sim.aicore_pipes, blk.aicore.p
        if not pipes.cross_ready(p, w, event):
            ws.note_stall(CAUSE["cross_core"], -1)
            ws.waiting_at = pc
            while not pipes.cross_ready(p, w, event):
                yield blk.aicore.cross_event
            ws.waiting_at = None
        fire = cross_core_take(sim, blk, w, event)
        t = max(t, sim.env.now)
        if fire > t:
            t, cause = fire, CAUSE["cross_core"]
    elif name == "SYNCALL":
        t, cause = yield from syncall(sim, pc, blk, w, ws, t, cause)
    elif name == "SYNCALL_SOFT":
        t, cause = yield from syncall_soft(sim, pc, blk, w, ws, t, cause)
    elif name == "PIPE_BARRIER":
        done = pipe_barrier(sim, pc, blk, w, int(sim.env.now))
        if done > t:
            t, cause = done, CAUSE["barrier"]
    elif name == "WAIT_FLAG":
        src, dst, event = (int(x) for x in sim.enc.code[pc, C_AUX:C_AUX + 3])
        fire = sim.aicore_pipes.flag_release(blk.aicore.p, w, src, dst, event)
        if fire > t:
            t, cause = fire, CAUSE["flag"]
    return t, cause


def syncall(sim, pc, blk, w, ws, t, cause):
    """SYNCALL of unit w before issue (timing/aicore_syncall.py): drain the unit's pipes, arrive,
    wait for the round's last participant; returns (t, cause) with the round's release. With
    check="race" the unit's clocks join those its core's participants arrived with, and know the
    round completed (which orders GM accesses between cores: aicore_races.py syncall_pass)."""
    kind = int(sim.enc.code[pc, C_AUX])
    ai, grid = blk.aicore, sim.grid_barrier
    arrival = max(t, sim.aicore_pipes.barrier(ai.p, w, ALL, int(sim.env.now)))
    rnd = grid.arrive(kind, arrival, (blk.id, w, pc))
    if ai.race is not None:
        syncall_arrive(sim, ai, w, kind, rnd)
    if grid.release(kind, rnd) is None:
        ws.note_stall(CAUSE["syncall"], -1)
        ws.waiting_at = pc
        while grid.release(kind, rnd) is None:
            yield grid.event
        ws.waiting_at = None
    if ai.race is not None:
        syncall_pass(sim, ai, w, kind, rnd)
    t = max(t, sim.env.now)
    release = grid.release(kind, rnd)
    if release > t:
        t, cause = release, CAUSE["syncall"]
    return t, cause


def syncall_soft(sim, pc, blk, w, ws, t, cause):
    """SYNCALL_SOFT of unit w before issue (isa/syncall_modes.py, syncall_soft.hpp): drain the
    unit's pipes; at that cycle read the counter (ld_dev) and so the target; its add (st_atomic,
    after the read returns) lands a LOAD and an ATOM_ADD latency later, when the polls begin;
    the unit goes on when the first poll issued once the counter reached the target returns
    (soft_release). Racecheck orders its accesses as a round of the kind's soft column, the
    target's multiple of the count."""
    env, grid, ai = sim.env, sim.grid_barrier, blk.aicore
    kind, address, total = grid.soft.operands(sim.enc, pc, ws.regs)
    check_soft_count(sim, pc, w, blk.coords, total)
    arrival = max(t, sim.aicore_pipes.barrier(ai.p, w, ALL, int(env.now)))
    ws.note_stall(CAUSE["syncall"], -1)
    ws.waiting_at = pc
    if arrival > env.now:                  # the read sees what landed by its cycle
        yield env.timeout(arrival - env.now)
    if sim.checks and sim.checks.init and not gm.init_test(sim.hbm_init, np.array([address]))[0]:
        raise uninitialised_counter(sim, pc, blk, w, address, arrival)
    target = soft_target(grid.soft.value(address), total)
    poll = sim.m.latency("LOAD")
    first_poll = arrival + poll + sim.m.latency("ATOM_ADD")
    sim._schedule_effect(first_poll - env.now, lambda: land_soft_add(sim, address))
    column, rnd = SOFT_COLUMN + kind, target // total - 1
    if ai.race is not None:
        syncall_arrive(sim, ai, w, column, rnd)
    yield env.timeout(first_poll - env.now)
    while grid.soft.value(address) < target:
        yield grid.soft_event
    ws.waiting_at = None
    if ai.race is not None:
        syncall_pass(sim, ai, w, column, rnd)
    release = soft_release(first_poll, int(env.now), poll)
    t = max(t, int(env.now))
    if release > t:
        t, cause = release, CAUSE["syncall"]
    return t, cause


def uninitialised_counter(sim, pc, blk, w, address, cycle):
    """initcheck: a soft SYNCALL reads a counter that was never written."""
    ins = sim.prog.instrs[pc]
    slot = int(sim.enc.code[pc, C_AUX + 1])
    element = (address - int(sim.tbase[slot])) // 4
    return UninitializedReadError(
        f"initcheck: pto.syncall at line {ins.line} (block {blk.coords} {UNIT_NAMES[w]}, cycle {cycle}) reads its "
        f"counter {sim.tensor_names[slot]}[{element}], which was never written", kernel=sim.kernel_name,
        file=sim.prog.file, line=ins.line, block=blk.coords, warp=w, unit=UNIT_NAMES[w], lane=None, word=element,
        hint="zero the workspace before its first use (pto.memcpy_h2d of zeros), as syncall_soft.hpp requires")
