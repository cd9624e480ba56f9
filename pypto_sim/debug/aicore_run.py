"""An AI-core launch as the debugger sees it: every instruction of every unit in execution
order, and the machine's state at any of them.

The launch runs once, on the compiled event loop (timing/aicore_fast.py), exactly as
``pto.launch`` runs it: its records say when each instruction executed (a tile instruction:
the cycle it started on its pipe; a scalar or flag instruction: the cycle the scalar unit
issued it) and its log of dispatched tile operations holds what the values replay needs
(timing/aicore_replay.py). The state at a stop is that replay cut at the stop: the events
(each operation reads its sources at its start and writes its result at its completion) in
SimPy's order up to the stop, replayed from the HBM snapshot taken before the run. So a tile
instruction's inputs read as they are when it executes, and nothing in the normal path
changes or slows: only the debugger cuts the replay.

Pipe queues and flag states come from the records alone (what each unit had dispatched, and
which set_flags and wait_flags it had issued, by the stop's cycle).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import LaunchError, PtoError
from ..exec.blas import single_threaded_blas, uses_matmul
from ..ir.program import C_AUX
from ..profiler.aicore_bubbles import UNITS, pipe_name
from ..profiler.profile import Profile
from ..runtime.launch import simulation_for
from ..timing.aicore_fast import AICoreFastEngine, why_not_aicore_fast
from ..timing.aicore_replay import event_order, replay_events, replay_table


@dataclass(frozen=True)
class QueuedOp:
    """A tile operation a unit has dispatched to a pipe and that has not completed: ``state``
    is ``"running"`` (started on the pipe) or ``"waiting"`` (in the pipe's queue)."""
    inst: str
    line: int
    pc: int
    dispatched: int
    start: int
    end: int
    state: str

    def __str__(self):
        return (f"{self.inst} (line {self.line}) {self.state}: dispatched at {self.dispatched}, "
                f"runs {self.start}-{self.end}")


@dataclass(frozen=True)
class FlagState:
    """One flag of a unit at a stop. ``kind`` ``"flag"``: set_flag/wait_flag(src, dst, event)
    between two of the unit's pipes; ``"cross_core"``: cross_core_set_flag(event) from unit
    ``src`` of the same AI core to this one (``dst``). ``set``: set_flags its scalar unit has
    issued; ``fired``: those whose source pipe(s) had completed what was queued before them
    by the stop's cycle (the flag rule; records' completions); ``waited``: waits issued.
    ``pending`` = set - fired: issued, not fired yet; a wait beyond ``fired`` holds its pipe."""
    kind: str
    src: str
    dst: str
    event: int
    set: int
    fired: int
    waited: int

    @property
    def pending(self) -> int:
        """Set_flags issued whose source pipe has not reached them yet."""
        return self.set - self.fired

    def __str__(self):
        what = (f"flag (PIPE_{self.src}, PIPE_{self.dst}, {self.event})" if self.kind == "flag"
                else f"cross-core flag {self.event} from {self.src}")
        text = f"{what}: set {self.set} (fired {self.fired}), waited {self.waited}"
        if self.waited > self.fired:
            held = f"PIPE_{self.dst}" if self.kind == "flag" else "the scalar unit"
            text += f": {held} held until it fires"
        return text


class AICoreRun:
    """One AI-core launch, run once, read at any position of its execution order."""

    def __init__(self, device, pending):
        self.pending, self.prog = pending, pending.program
        hbm = device.hbm.data
        self.snapshot = hbm.copy()                 # every state replay starts from it
        self.init_snapshot = _copy(device.hbm.init)
        self.error = None
        self.values_error = None                   # why values cannot be shown, else None
        checked = None
        if pending.checks:
            # the checks run in the SimPy model: a check error ends the run where it happened,
            # and HBM is left as that launch leaves it (the stores before the error landed)
            words, init = self.snapshot.copy(), _copy(device.hbm.init)
            sim = simulation_for(pending, words, init, record=True)
            try:
                sim.run()
            except PtoError as err:
                checked = (sim, err)
                _land(device, words, init)
        # the compiled engine's run gives the log the values are replayed from (after a check
        # error, on a copy: HBM holds the checked run's stores)
        records, total = self._run(device, pending, device.hbm.data if checked is None else self.snapshot.copy())
        if checked is not None:
            records, total = self._failed(*checked)
        self.records, self.total = records, total
        self.profile = Profile(pending.kernel.name, self.prog, pending.machine, pending.grid, pending.block,
                               total, records, self.sim.pc_pipe, self.sim.pc_name, 0.0, pc_lat=self.sim.pc_lat)
        rec = records
        self.block, self.unit, self.core, self.pc = (np.asarray(c, np.int64) for c in
                                                     (rec.block, rec.warp, rec.core, rec.pc))
        self.start = np.asarray(rec.issue, np.int64)
        self.end = np.asarray(rec.complete, np.int64)
        self.tile = np.array(self.sim.pc_tile, bool)[self.pc] if len(self.pc) else np.zeros(0, bool)
        # a tile operation's record holds its start; its scalar unit dispatched it stall cycles before
        self.dispatched = np.where(self.tile, self.start - np.asarray(rec.stall, np.int64), self.start)
        self.order = np.lexsort((self.unit, self.block, self.start))   # Profile.timeline's order
        self.timeline = self.profile.timeline
        self.pipe = np.array(self.sim.pc_pipe, np.int64)[self.pc] if len(self.pc) else np.zeros(0, np.int64)
        self._cache = {}
        if self.values_error is None:
            self._link_log()

    # ---------------------------------------------------------------- the run
    def _run(self, device, pending, hbm):
        """The launch on the compiled event loop, on the HBM bytes hbm (the device's: its
        outputs land there, as after a launch); (records, total cycles)."""
        prog = self.prog
        init = device.hbm.init if hbm is device.hbm.data else _copy(self.init_snapshot)
        sim = self.sim = simulation_for(pending, hbm, init, record=True, checks=frozenset(), values=True)
        why = why_not_aicore_fast(sim)
        if why is not None:         # the state at a stop is a replay of the compiled loop's log
            raise LaunchError(f"the AI-core debugger cannot step kernel '{pending.kernel.name}': {why}, and the "
                              "debugger replays the compiled event loop's log", kernel=pending.kernel.name,
                              hint="run it with pto.launch or pto.profile (the SimPy model runs it), and read its "
                                   "timeline and bubbles there")
        engine = self.engine = AICoreFastEngine(sim)
        sim.engine_used = "fast"
        with single_threaded_blas(uses_matmul(prog)) as sim.blas:
            outcome = engine.run()
        self.blas = sim.blas
        if outcome == "fallback":
            # a fault: the SimPy model reports it, from the snapshot, the engine's log up to it
            # stays; HBM is left as that launch leaves it (the stores before the fault landed)
            words, init = self.snapshot.copy(), _copy(self.init_snapshot)
            fault = simulation_for(pending, words, init, record=True, checks=frozenset(), engine="simpy")
            try:
                fault.run()
            except PtoError as err:
                if hbm is device.hbm.data:
                    _land(device, words, init)
                return self._failed(fault, err)
            raise AssertionError("the compiled engine stopped at a fault that SimPy did not report")
        if outcome == "limit":
            self.error = sim.limit_error(int(engine.st[sim.ex.S_UNFINISHED]), engine.positions())
        elif outcome == "deadlock":
            self.error = sim.deadlock_error(engine.stuck())
        return sim.records(), int(sim.end_time)

    def _failed(self, sim, err):
        """A SimPy run that raised err: its records up to the error, which the compiled
        engine's log (the same operations in the same order, up to there at least) covers."""
        self.sim, self.error = sim, err
        return sim.records(), sim.now

    def _link_log(self):
        """Each tile record's entry in the engine's log (the same operations, in each unit's
        dispatch order), and where its read falls in the replay's event order."""
        ex, engine = self.sim.ex, self.engine
        n = int(engine.st[ex.S_LOG_N])
        self.lg, self.lv = engine.lg_i[:n], engine.lg_v[:n]
        self.table = engine.replay or (replay_table(self.sim) if n else None)
        self.events = event_order(ex, self.lg)
        times = np.concatenate([self.lg[:, ex.LG_START], self.lg[:, ex.LG_COMPLETE]])
        self.event_times = times[self.events]
        self.read_pos = np.zeros(n, np.int64)
        self.read_pos[self.events[self.events < n]] = np.nonzero(self.events < n)[0]
        queues = {}
        for i, (block, g) in enumerate(zip(self.lg[:, ex.LG_BLOCK].tolist(), self.lg[:, ex.LG_G].tolist())):
            queues.setdefault((block, g % 3), []).append(i)
        self.log_of = np.full(len(self.pc), -1, np.int64)
        taken = {}
        for r in np.nonzero(self.tile)[0].tolist():
            key = (int(self.block[r]), int(self.unit[r]))
            k = taken.get(key, 0)
            taken[key] = k + 1
            mine = queues.get(key, [])
            if k >= len(mine) or int(self.lg[mine[k], ex.LG_PC]) != int(self.pc[r]):
                self.values_error = (f"the compiled engine's log does not cover the run up to its "
                                     f"{type(self.error).__name__}, so tile values cannot be shown")
                return
            self.log_of[r] = mine[k]

    # ---------------------------------------------------------------- state at a position
    def cut(self, pos) -> int:
        """How many replay events come before the instruction at execution position pos
        (None: the end): a tile operation's own read; a scalar or flag instruction's cycle."""
        if pos is None:               # the end; a run that failed: the start of its error's cycle
            return len(self.events) if self.error is None else \
                int(np.searchsorted(self.event_times, self.total, side="left"))
        r = int(self.order[pos])
        if self.log_of[r] >= 0:
            return int(self.read_pos[self.log_of[r]])
        return int(np.searchsorted(self.event_times, self.start[r], side="left"))

    def memories(self, pos):
        """(hbm bytes, unit memories, memory row per block) as they are at position pos."""
        if self.values_error is not None:
            raise PtoError(f"{self.pending.kernel.name}: {self.values_error}")
        cut = self.cut(pos)
        if cut not in self._cache:
            hbm = self.snapshot.copy()
            gx, gy, gz = self.pending.grid
            mem = mem_row = None
            if self.table is not None:
                self.sim.blas = self.blas
                with single_threaded_blas(self.blas):
                    mem, mem_row = replay_events(self.sim, self.sim.ex, self.lg, self.lv, self.table,
                                                 max(self.prog.local_words, 1), gx * gy * gz,
                                                 self.events[:cut], hbm, keep=True)
            self._cache = {cut: (hbm, mem, mem_row)}       # one state kept: the stop's
        return self._cache[cut]

    # ---------------------------------------------------------------- queues and flags
    def pipe_queues(self, block, unit, cycle) -> dict:
        """Pipe name -> the unit's operations dispatched by cycle and not completed, in order."""
        sel = np.nonzero(self.tile & (self.block == block) & (self.unit == unit)
                         & (self.dispatched <= cycle) & (self.end > cycle))[0]
        out = {}
        for r in sel.tolist():
            pc = int(self.pc[r])
            out.setdefault(pipe_name(int(self.pipe[r])), []).append(QueuedOp(
                self.sim.pc_name[pc], self.prog.instrs[pc].line, pc, int(self.dispatched[r]),
                int(self.start[r]), int(self.end[r]), "running" if self.start[r] <= cycle else "waiting"))
        return out

    def flag_states(self, block, unit, pos, cycle) -> list:
        """The unit's flags before the instruction at position pos executes (None: at the end),
        at its cycle: the set_flag / wait_flag and cross-core signals issued before it in
        execution order, and which sets had fired by cycle."""
        code, names = self.sim.enc.code, self.sim.pc_name
        executed = np.zeros(len(self.pc), bool)
        executed[self.order[:pos] if pos is not None else self.order] = True
        done: dict = {}                  # (unit, pipe or -1) -> latest completion queued so far
        counts: dict = {}

        def count(key, j, by=1):
            counts.setdefault(key, [0, 0, 0])[j] += by
        for r in np.nonzero(self.block == block)[0].tolist():      # record order: dispatch order
            pc, w = int(self.pc[r]), int(self.unit[r])
            name = names[pc]
            if self.tile[r]:
                for key in ((w, int(self.pipe[r])), (w, -1)):
                    done[key] = max(done.get(key, -1), int(self.end[r]))
                continue
            if not executed[r]:
                continue
            if name in ("SET_FLAG", "WAIT_FLAG") and w == unit:
                src, dst, event = (int(x) for x in code[pc, C_AUX:C_AUX + 3])
                key = ("flag", pipe_name(src), pipe_name(dst), event)
                if name == "WAIT_FLAG":
                    count(key, 2)
                else:
                    count(key, 0)
                    count(key, 1, int(max(int(self.dispatched[r]), done.get((w, src), -1)) <= cycle))
            elif name == "CROSS_CORE_SET_FLAG" and unit in self.prog.cross_partners(w):
                pipe = int(code[pc, C_AUX + 1])
                key = ("cross_core", UNITS[w], UNITS[unit], int(code[pc, C_AUX]))
                count(key, 0)
                count(key, 1, int(max(int(self.dispatched[r]), done.get((w, pipe if pipe >= 0 else -1), -1))
                                  <= cycle))
            elif name == "CROSS_CORE_WAIT_FLAG" and w == unit:
                for src in self.prog.cross_partners(w):      # a wait takes one from each source
                    count(("cross_core", UNITS[src], UNITS[unit], int(code[pc, C_AUX])), 2)
        return [FlagState(*key, *n) for key, n in sorted(counts.items())]


def _land(device, words, init):
    """Leave the device's HBM (and initcheck's bits) as a failed run left its copy."""
    device.hbm.data[:] = words
    if init is not None and device.hbm.init is not None:
        device.hbm.init[:] = init


def _copy(array):
    return None if array is None else array.copy()
