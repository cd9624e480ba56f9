"""The debugger on an AI-core kernel: steps in execution order, per unit (docs/debugging.md).

A stop is an instruction of one unit (AIC, AIV0, AIV1 of core c) at the cycle it executes: a
tile instruction when it starts on its pipe (PIPE_MTE2, PIPE_V, ...), a scalar or flag
instruction when its unit's scalar unit issues it. At a stop the state is as it is then:
tiles in every space and HBM hold what every event before it left (an operation reads its
sources when it starts, writes its result when it completes), so the stopped instruction's
inputs read as it will read them. The launch runs once, up front (debug/aicore_run.py), so
stepping back is free. Lane kernels have their own debugger (debug/session.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arguments import whole_number
from ..dtypes import words_as_values
from ..errors import ArgumentError, ProfileError
from ..exec import gm
from ..ir.program import C_AUX
from ..isa import PIPES
from ..profiler.aicore_bubbles import UNITS, pipe_name
from .aicore_run import AICoreRun
from .breakpoints import BreakpointList, checked_instruction, checked_line
from .describe import Describer

PIPE_BY_NAME = {pipe_name(p): p for p in range(len(PIPES)) if p != PIPES.index("sfu")}
FLAG_INSTS = ("SET_FLAG", "WAIT_FLAG")
CROSS_INSTS = ("CROSS_CORE_SET_FLAG", "CROSS_CORE_WAIT_FLAG")
CUBE_SPACES = ("Mat", "Left", "Right", "Acc", "Bias", "Scaling")


@dataclass
class AICoreBreakpoint:
    """Stop at an instruction matching every condition given (None: any): ``line``, ``inst``
    (PTO name), ``pipe`` (a PIPES index), ``flag`` ((src pipe, dst pipe, event) of a
    set_flag/wait_flag, or a cross-core flag's event id), ``unit`` (0 AIC, 1 AIV0, 2 AIV1),
    ``core``, ``block``, ``cycle`` (the first instruction executing at or after it: it fires
    once, and again after stepping back before it)."""
    id: int
    line: int | None = None
    inst: str | None = None
    pipe: int | None = None
    flag: object = None
    unit: int | None = None
    core: int | None = None
    block: int | None = None
    cycle: int | None = None
    hits: int = 0

    def __str__(self):
        conds = []
        for k in ("line", "inst", "pipe", "flag", "unit", "core", "block", "cycle"):
            v = getattr(self, k)
            if v is not None:
                if k == "flag" and isinstance(v, tuple):       # (src pipe, dst pipe, event)
                    conds.append(f"flag=(PIPE_{pipe_name(v[0])}, PIPE_{pipe_name(v[1])}, {v[2]})")
                    continue
                v = pipe_name(v) if k == "pipe" else UNITS[v] if k == "unit" else v
                conds.append(f"{k}={v!r}")
        return f"breakpoint {self.id} ({', '.join(conds)})"


class AICoreDebugContext(BreakpointList):
    """An AI-core kernel launch in the debugger (made by ``debug_kernel``), paused before its
    first instruction. ``step(n, unit=, core=)``, ``continue_()``, ``step_back(n)``,
    ``break_at(line=, inst=, pipe=, flag=, unit=, core=, block=, cycle=)``; at a stop
    ``inspect(tile)``, ``tensor(t)``, ``pipe_queues()``, ``flags()`` and ``where()``."""

    def __init__(self, kernel, device, pending, echo=True):
        self.kernel, self.device, self.echo = kernel, device, echo
        self.program = pending.program
        self.grid, self.block, self.machine = pending.grid, pending.block, pending.machine
        self._tensor_args = [(arg.name, value) for arg, value in zip(self.program.args, pending.args)
                             if arg.kind == "tensor"]
        self.run = AICoreRun(device, pending)
        self.describer = Describer(self.run.sim)
        self.pos = -1                       # the execution position of the stop (-1: before all)
        self._init_breakpoints()
        cores = len(set(self.run.core.tolist()))
        self._say(f"-- debugging {kernel.name} grid={self.grid} on {self.machine.name}: "
                  f"{cores} AI core{'s' if cores != 1 else ''} (units AIC, AIV0, AIV1); "
                  "paused before the first instruction")

    def _say(self, text):
        if self.echo:
            print(text)

    # ---------------------------------------------------------------- where we are
    @property
    def done(self) -> bool:
        """True once the run is over: stepped past its last instruction, or stopped by ``error``."""
        return self.pos >= len(self.run.order)

    @property
    def finished(self) -> bool:
        """True once stepped past the last instruction of a run that ended without an error
        (a run stopped by one is ``done`` but not finished, as the lane debugger has it)."""
        return self.done and self.run.error is None

    @property
    def error(self):
        """The kernel error the run ended with, once stepped to it (else None)."""
        return self.run.error if self.done else None

    @property
    def total_cycles(self):
        """The launch's total cycles once finished (else None)."""
        return self.run.total if self.finished else None

    def _record(self):
        return None if self.pos < 0 or self.done else int(self.run.order[self.pos])

    def _error_unit(self):
        """The unit index the error stopped (its ``unit`` field), once stopped by one, else None."""
        name = getattr(self.error, "fields", {}).get("unit") if self.error is not None else None
        return UNITS.index(name) if name in UNITS else None

    def _error_block(self):
        """The block id the error stopped (its ``block`` field: an id or grid coordinates)."""
        block = self.error.fields.get("block") if self.error is not None else None
        if isinstance(block, tuple):
            gx, gy, _gz = self.grid
            block = block[0] + gx * (block[1] + gy * block[2])
        return block if isinstance(block, int) else None

    @property
    def cycle(self) -> int:
        """The cycle the stopped instruction executes (0 before the first; the run's last cycle
        once done)."""
        r = self._record()
        if r is None:
            return self.run.total if self.done else 0
        return int(self.run.start[r])

    @property
    def count(self) -> int:
        """Instructions executed before the stop (the stopped one is about to execute)."""
        return max(0, min(self.pos, len(self.run.order)))

    @property
    def entry(self):
        """The stopped instruction's TimelineEntry (None before the first and once finished)."""
        return None if self._record() is None else self.run.timeline[self.pos]

    @property
    def unit(self):
        """The stopped instruction's unit (``"AIC"``, ``"AIV0"``, ``"AIV1"``), the unit an error
        stopped, or None."""
        r = self._record()
        if r is None:
            u = self._error_unit()
            return None if u is None else UNITS[u]
        return UNITS[int(self.run.unit[r])]

    @property
    def pc(self):
        """The stopped instruction's pc (or None)."""
        r = self._record()
        return None if r is None else int(self.run.pc[r])

    @property
    def line(self):
        """The stopped instruction's source line, the line an error stopped at, or None."""
        if self.pc is None:
            return self.error.line if self.error is not None else None
        return self.program.instrs[self.pc].line

    def stop_line(self, pos=None) -> str:
        """The instruction at an execution position as a step prints it: where it runs (core,
        unit, PTO pipe), what it is, and when: ``[core 0 AIV0 V] TROWMAX ... ; cycle 844, ...``."""
        pos = self.pos if pos is None else pos
        r = int(self.run.order[pos])
        pc = int(self.run.pc[r])
        who = f"[core {int(self.run.core[r])} {UNITS[int(self.run.unit[r])]} {pipe_name(int(self.run.pipe[r]))}]"
        text = self.describer.listing_text(pc)
        when = f"cycle {int(self.run.start[r])}"
        if self.run.tile[r]:
            when += f" (dispatched {int(self.run.dispatched[r])}, done {int(self.run.end[r])})"
        return f"{who} {text:<40s} ; {when}, block {int(self.run.block[r])}, line {self.program.instrs[pc].line}"

    # ---------------------------------------------------------------- moving
    def _finish(self):
        """Go past the last instruction: say so, and raise the kernel's error if it had one."""
        self.pos = len(self.run.order)
        if self.run.error is not None:
            self._say(f"-- {self.kernel.name} stopped by {type(self.run.error).__name__}")
            raise self.run.error
        self._say(f"-- {self.kernel.name} finished at cycle {self.run.total} "
                  f"({len(self.run.order)} instructions)")

    def _positions(self, unit=None, core=None):
        """The execution positions after the stop, of the unit/core given."""
        run = self.run
        order = run.order
        ok = np.ones(len(order), bool)
        if unit is not None:
            ok &= run.unit[order] == unit
        if core is not None:
            ok &= run.core[order] == core
        ok[:self.pos + 1] = False
        return np.nonzero(ok)[0]

    def step(self, n: int = 1, unit=None, core=None) -> list:
        """Go to the n-th next instruction (of ``unit``, ``"AIC"``/``"AIV0"``/``"AIV1"``, and
        ``core`` when given), printing each one stopped at; returns their TimelineEntry objects.
        Past the last one the kernel finishes (its error, if it had one, is raised)."""
        n = whole_number(n, "step: n", least=0, hint="step(n) goes n >= 0 instructions forward; "
                         "step_back(n) goes back")
        unit, core = self._ran(self._unit(unit), "step"), self._ran_on("step", "core", self._core(core))
        if self.done:
            if self.error is not None:
                raise self.error
            self._say(f"-- {self.kernel.name} has finished (cycle {self.run.total}); step_back() "
                      "or restart() to look again")
            return []
        ahead = self._positions(unit, core)[:n]
        out = []
        for p in ahead.tolist():
            self.pos = p
            self._say(self.stop_line())
            out.append(self.run.timeline[p])
        if len(ahead) < n:
            self._finish()
        return out

    def continue_(self):
        """Go to the next instruction a breakpoint matches (printed; returns its
        TimelineEntry) or to the end (returns None)."""
        if self.done:
            if self.error is not None:
                raise self.error
            self._say(f"-- {self.kernel.name} has finished (cycle {self.run.total})")
            return None
        ahead = self._positions()
        hit = np.zeros(len(ahead), bool)
        matched = {}
        for bp in self.breakpoints.values():
            m = self._matches(bp, ahead)
            matched[bp.id] = m
            hit |= m
        if not hit.any():
            self._finish()
            return None
        k = int(np.argmax(hit))
        bps = [bp for bp in self.breakpoints.values() if matched[bp.id][k]]
        for bp in bps:
            bp.hits += 1
        self.pos = int(ahead[k])
        self._say(f"-- {', '.join(str(bp) for bp in bps)} hit")
        self._say(self.stop_line())
        return self.run.timeline[self.pos]

    def step_back(self, n: int = 1) -> list:
        """Go back n instructions (the state at every stop is replayed from the run, so going
        back costs nothing); returns the entries gone back over, in execution order."""
        n = whole_number(n, "step_back: n", least=0, hint="step_back(n) goes back n >= 0 "
                         "instructions; step(n) goes forward")
        before = min(self.pos, len(self.run.order))          # positions before the stop
        target = before - n if 0 < n <= before else (-1 if n else self.pos)
        # paused at an instruction means it has not executed: going back un-executes target ..
        undone = [self.run.timeline[p] for p in range(max(target, 0), before)]
        self.pos = target
        self._say(f"-- back at {self.stop_line()}" if target >= 0 else "-- back before the first instruction")
        return undone

    def restart(self):
        """Back to before the first instruction."""
        self.pos = -1
        self._say("-- restarted: paused before the first instruction")

    # ---------------------------------------------------------------- breakpoints
    def break_at(self, line=None, inst=None, pipe=None, flag=None, unit=None, core=None, block=None,
                 cycle=None) -> int:
        """Add a breakpoint; returns its id. ``continue_()`` stops at the next instruction, at
        the cycle it executes, matching every condition given: ``line`` (a source line),
        ``inst`` (``"TROWMAX"``), ``pipe`` (``"PIPE_V"``, ``"V"``, ``pto.PIPE_MTE2``), ``flag``
        (``(src pipe, dst pipe, event)``: that set_flag / wait_flag; an int: that cross-core
        flag's set and wait), ``unit`` (``"AIC"``, ``"AIV0"``, ``"AIV1"``), ``core``, ``block``,
        ``cycle`` (the first instruction executing at or after it)."""
        if all(v is None for v in (line, inst, pipe, flag, unit, core, block, cycle)):
            raise ArgumentError("break_at() needs at least one of line, inst, pipe, flag, unit, core, "
                                "block, cycle")
        if line is not None:
            line = checked_line(self.program, line)
        if inst is not None:
            inst = checked_instruction(inst)
            ran = sorted({self.run.sim.pc_name[pc] for pc in set(self.run.pc.tolist())})
            if inst not in ran and inst not in {self.program.instrs[pc].op for pc in set(self.run.pc.tolist())}:
                raise ArgumentError(f"break_at(inst={inst!r}): '{self.kernel.name}' runs no {inst}, so the "
                                    f"breakpoint could never stop", hint=f"its instructions: {', '.join(ran)}")
        if flag is not None:
            flag = (whole_number(flag, "break_at: flag", least=0) if isinstance(flag, int)
                    else tuple(self._pipe(p) for p in flag[:2]) + (whole_number(flag[2], "flag event", least=0),)
                    if isinstance(flag, (tuple, list)) and len(flag) == 3 else None)
            if flag is None:
                raise ArgumentError("break_at(flag=...): give (src pipe, dst pipe, event id) of a "
                                    "set_flag/wait_flag, or a cross-core flag's event id")
        pipe = self._ran_on("break_at", "pipe", None if pipe is None else self._pipe(pipe))
        unit, core = self._ran(self._unit(unit), "break_at"), self._ran_on("break_at", "core", self._core(core))
        block = self._ran_on("break_at", "block",
                             None if block is None else whole_number(block, "break_at: block", least=0))
        cycle = None if cycle is None else whole_number(cycle, "break_at: cycle", least=0)
        return self._add_breakpoint(
            lambda bp_id: AICoreBreakpoint(bp_id, line, inst, pipe, flag, unit, core, block, cycle))

    def _matches(self, bp, positions) -> np.ndarray:
        """Which of the execution positions bp matches."""
        run = self.run
        rec = run.order[positions]
        pcs = run.pc[rec]
        ok = np.ones(len(positions), bool)
        for value, column in ((bp.unit, run.unit), (bp.core, run.core), (bp.block, run.block),
                              (bp.pipe, run.pipe)):
            if value is not None:
                ok &= column[rec] == value
        if bp.cycle is not None:                # the first instruction executing at or after it
            at = np.nonzero(run.start[run.order] >= bp.cycle)[0]
            ok &= positions == (at[0] if len(at) else -1)
        names = run.sim.pc_name
        for k in np.nonzero(ok)[0].tolist():
            pc = int(pcs[k])
            ins = self.program.instrs[pc]
            if bp.line is not None and ins.line != bp.line:
                ok[k] = False
            elif bp.inst is not None and bp.inst not in (names[pc], ins.op):
                ok[k] = False
            elif bp.flag is not None:
                kinds = FLAG_INSTS if isinstance(bp.flag, tuple) else CROSS_INSTS
                ok[k] = names[pc] in kinds and self._flag_of(pc) == bp.flag
        return ok

    def _flag_of(self, pc):
        """(src, dst, event) of a set/wait_flag; the event id of a cross-core flag instruction."""
        code = self.run.sim.enc.code
        if self.run.sim.pc_name[pc] in FLAG_INSTS:
            return tuple(int(x) for x in code[pc, C_AUX:C_AUX + 3])
        return int(code[pc, C_AUX])

    # ---------------------------------------------------------------- names
    def _unit(self, unit):
        if unit is None:
            return None
        if unit in UNITS:
            return UNITS.index(unit)
        raise ArgumentError(f"unit={unit!r}: an AI core's units are {', '.join(UNITS)}")

    def _ran(self, unit, call):
        """unit (an index, or None), refused when it ran no instruction: a step or breakpoint
        on it could never stop."""
        if unit is not None and not (self.run.unit == unit).any():
            ran = ", ".join(UNITS[u] for u in sorted(set(self.run.unit.tolist()))) or "none"
            raise ArgumentError(f"{call}(unit={UNITS[unit]!r}): {UNITS[unit]} runs no instruction of "
                                f"'{self.kernel.name}'", hint=f"the units that run: {ran}")
        return unit

    def _ran_on(self, call, what, value):
        """value (a core, block or pipe index, or None), refused when no instruction ran there:
        a step or breakpoint on it could never stop."""
        ran = getattr(self.run, what)
        if value is not None and not (ran == value).any():
            name = pipe_name if what == "pipe" else str
            there = ", ".join(name(int(v)) for v in sorted(set(ran.tolist()))) or "none"
            given = repr(name(value)) if what == "pipe" else value
            raise ArgumentError(f"{call}({what}={given}): no instruction of '{self.kernel.name}' runs on "
                                f"{what} {name(value)}", hint=f"the {what}s that run: {there}")
        return value

    def _core(self, core):
        return None if core is None else whole_number(core, "core", least=0, below=self.machine.cores,
                                                      hint=f"the machine has {self.machine.cores} AI cores")

    @staticmethod
    def _pipe(pipe):
        name = str(pipe).upper()
        name = name[len("PIPE_"):] if name.startswith("PIPE_") else name
        if name not in PIPE_BY_NAME:
            raise ArgumentError(f"pipe={pipe!r}: the AI core's pipes are "
                                f"{', '.join('PIPE_' + p for p in PIPE_BY_NAME)}")
        return PIPE_BY_NAME[name]

    # ---------------------------------------------------------------- reading the state
    def _where(self, unit, block):
        """(block, unit index) for the state calls: the stop's unless given."""
        r = self._record()
        stopped_unit, stopped_block = ((int(self.run.unit[r]), int(self.run.block[r])) if r is not None else
                                       (self._error_unit(), self._error_block()))
        u = self._unit(unit) if unit is not None else (stopped_unit if stopped_unit is not None else 0)
        n_blocks = self.grid[0] * self.grid[1] * self.grid[2]
        b = whole_number(block, "block", least=0, below=n_blocks, hint=f"the grid has {n_blocks} blocks") \
            if block is not None else (stopped_block if stopped_block is not None else 0)
        return b, u

    def pipe_queues(self, unit=None, block=None) -> dict:
        """The unit's pipes at the stop's cycle (default: the stopped unit): pipe name ->
        QueuedOp list of what it dispatched and is not done (``running`` or ``waiting``)."""
        b, u = self._where(unit, block)
        return self.run.pipe_queues(b, u, self.cycle)

    def flags(self, unit=None, block=None) -> list:
        """The unit's flags before the stopped instruction executes (default: the stopped unit):
        FlagState per (src pipe, dst pipe, event) and per cross-core flag and source unit."""
        b, u = self._where(unit, block)
        return self.run.flag_states(b, u, None if self.done else max(self.pos, 0), self.cycle)

    def where(self, unit=None, block=None) -> str:
        """The stop, the unit's pipe queues and its flags, as text (``print(ctx.where())``)."""
        b, u = self._where(unit, block)
        err = self.error
        head = (self.stop_line() if self._record() is not None else
                f"stopped by {type(err).__name__} at line {err.line}" + (f" on {self.unit}" if self.unit else "")
                + f": {str(err).splitlines()[0]}" if err is not None else
                "finished" if self.finished else "before the first instruction")
        lines = [head, f"{UNITS[u]} of block {b} at cycle {self.cycle}:"]
        queues = self.pipe_queues(UNITS[u], b)
        for pipe in queues:
            lines.append(f"  PIPE_{pipe} queue:")
            lines += [f"    {op}" for op in queues[pipe]]
        if not queues:
            lines.append("  every pipe queue is empty")
        lines += [f"  {f}" for f in self.flags(UNITS[u], b)] or ["  no flag set or waited yet"]
        return "\n".join(lines)

    def inspect(self, tile: str, unit=None, block=None) -> np.ndarray:
        """Tile ``tile`` (its variable name) as it is at the stop, a (rows, cols) array of its
        dtype: values after every event before the stop, so the stopped instruction's inputs
        read as it reads them. A Vec tile lives in each vector core's UB: ``unit`` "AIV0" or
        "AIV1" (default: the stopped unit when it is a vector core, else AIV0); the cube's
        spaces (Mat, Left, Right, Acc, Bias, Scaling) are the AIC's. An int64 tile (TSTORE_FP's
        quant words) reads as the words' bits (dtypes.words_as_values). ``block``: default the
        stop's."""
        buf = next((b for b in self.program.buffers if b.name == tile and b.rows), None)
        if buf is None:
            known = ", ".join(f"{b.name} ({b.space})" for b in self.program.buffers if b.rows) or "none"
            raise ArgumentError(f"kernel '{self.program.kernel}' has no tile '{tile}' (tiles: {known})")
        b, u = self._where(unit, block)
        if buf.space in CUBE_SPACES:
            if unit is not None and u != 0:
                raise ArgumentError(f"tile '{tile}' is in {buf.space}, the AIC's: inspect it with unit='AIC'")
            u = 0
        elif unit is None and u == 0:
            u = 1
        elif u == 0:
            raise ArgumentError(f"tile '{tile}' is in Vec (a vector core's UB): give unit='AIV0' or 'AIV1'")
        _hbm, mem, mem_row = self.run.memories(None if self.done else max(self.pos, 0))
        words = buf.offset + buf.element_words()
        if mem is None or mem_row[b] < 0:
            values = np.zeros(len(words))
        else:
            values = mem[mem_row[b], 1 if u == 2 else 0][words]
        return words_as_values(values, buf.dtype).reshape(buf.rows, buf.cols)   # int64: the words' bits

    def tensor(self, t) -> np.ndarray:
        """A tensor argument's contents at the stop (its DeviceTensor, variable or parameter
        name): a store's values are there once it completes."""
        alloc = next((a for p, a in self._tensor_args if t is a or t == p or (isinstance(t, str) and t == a.name)
                      or getattr(t, "alloc", None) is a), None)
        if alloc is None:
            names = ", ".join(p for p, _a in self._tensor_args)
            raise ArgumentError(f"{t!r} is not a tensor argument of this launch (tensors: {names})")
        hbm, _mem, _row = self.run.memories(None if self.done else max(self.pos, 0))
        return gm.decode(hbm[alloc.byte_addr:alloc.byte_addr + alloc.nbytes], alloc.dtype).copy()

    def get_instruction_timeline(self) -> list:
        """TimelineEntry of every instruction executed or executing at the stop, in execution
        order (units: ``.lane`` the unit name, ``.pipe`` the PTO pipe)."""
        run = self.run
        upto = len(run.order) if self.done else self.pos + 1
        return run.timeline[:max(upto, 0)]

    def profile(self):
        """The launch's Profile (the whole run; it ran once, up front). A launch that stopped
        at a fault has none, as ``pto.profile`` of it has none: its operations in flight would
        end after the cycle it stopped at, so no total would agree with its timeline."""
        err = self.run.error
        if err is not None:
            raise ProfileError(f"'{self.kernel.name}' stopped at cycle {self.run.total} with "
                               f"{type(err).__name__}, so it has no profile: "
                               f"{str(err).splitlines()[0]}", kernel=self.kernel.name,
                               hint="the session still shows what ran: get_instruction_timeline(), "
                                    "inspect(tile), pipe_queues(), where(); fix the fault for a profile")
        return self.run.profile

    def __repr__(self):
        state = ("finished" if self.finished else f"stopped by {type(self.error).__name__}" if self.done
                 else "paused")
        r = self._record()
        where = "" if r is None else f" at {self.unit} of core {int(self.run.core[r])}, line {self.line}"
        return (f"<AICoreDebugContext {self.kernel.name} grid={self.grid}: {state} at cycle {self.cycle}"
                f"{where}, {len(self.breakpoints)} breakpoints>")
