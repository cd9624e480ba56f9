"""The instruction-level debugger: step a simulated launch warp-instruction by warp-instruction.

The debugger drives the ordinary timing model (``LaunchSimulation``) from outside, one SimPy
event at a time with ``sim.step()``; the model itself has no debugger hooks, so a launch that is
not being debugged runs exactly as fast as before. Each event issues at most one
warp-instruction, so the records the model appends (``sim.rows``) arrive in simulated time
order and the debugger can describe each one right after it issued, while the warp's registers
still hold the operands it used.

Stepping back is deterministic replay: the run started from a snapshot of HBM, and the model
is deterministic (SimPy orders events by time, priority and id), so restoring the snapshot,
rebuilding the simulation and stepping to an earlier count reproduces that exact state.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

from ..arguments import whole_number
from ..errors import ArgumentError, UseAfterFreeError
from ..profiler.profile import Profile
from ..runtime.device import DEFAULT_BLOCK as LAUNCH_BLOCK, current_device
from ..runtime.memory import root_of
from ..runtime.names import launch_labels, launch_scope
from ..timing import machine as machine_mod
from ..timing.model import LaunchSimulation
from .aicore_session import AICoreDebugContext
from .describe import Describer
from .breakpoints import BreakpointList, checked_instruction, checked_line
from .inspect import InspectMixin
from ..timing.records import LaunchRecords

_PROFILE_PARAMS = inspect.signature(Profile).parameters   # built as run_launch builds it
DEFAULT_GRID = (1, 1, 1)
DEFAULT_BLOCK = (256, 1, 1)      # the article's block


@dataclass
class Breakpoint:
    """Stop after a warp-instruction that matches every condition given (None: any).

    ``line``: source line; ``inst``: instruction name (``LOAD``); ``warp``/``block``: where it
    ran; ``cycle``: the first instruction issuing at or after that cycle (fires once).
    """

    id: int
    line: int | None = None
    inst: str | None = None
    cycle: int | None = None
    warp: int | None = None
    block: int | None = None
    hits: int = 0
    hit_at: int | None = None     # cycle breakpoints: the instruction count when it fired

    def matches(self, row, sim) -> bool:
        """True when record row (timing.records.FIELDS) satisfies this breakpoint."""
        block, warp, _core, pc, issue = row[:5]
        if self.cycle is not None and (self.hit_at is not None or issue < self.cycle):
            return False
        if self.line is not None and sim.prog.instrs[pc].line != self.line:
            return False
        # a fused pair's second instruction answers to its own name and to "FIRST+SECOND"
        if self.inst is not None and self.inst not in (sim.pc_name[pc], sim.pc_spec[pc].name):
            return False
        if self.warp is not None and warp != self.warp:
            return False
        return self.block is None or block == self.block

    def __str__(self):
        conds = [f"{k}={getattr(self, k)!r}" for k in ("line", "inst", "cycle", "warp", "block")
                 if getattr(self, k) is not None]
        return f"breakpoint {self.id} ({', '.join(conds)})"


class DebugContext(InspectMixin, BreakpointList):
    """A kernel launch paused in the instruction-level debugger (made by ``debug_kernel``).

    Run it with ``step(n)``, ``continue_()`` and ``step_back(n)``; stop it with ``break_at``;
    read it with ``inspect_l1``, ``lane_values``, ``tensor``, ``inspect_alloc_local`` and
    ``get_instruction_timeline()``. ``echo`` (default True) prints what each step executes.
    """

    def __init__(self, kernel, args=(), grid=None, block=None, machine=None, echo=True,
                 max_cycles=None, check=None, launch=None):
        # launch: (device, pending) of queued_launch, when debug_kernel has queued it already
        self.device, pending = launch or queued_launch(kernel, args, grid, block, machine,
                                                       max_cycles, check)
        if getattr(pending.program, "aicore", False):
            raise ArgumentError(f"DebugContext steps lane kernels; '{kernel.name}' is an AI-core "
                                "kernel (typed tiles, units AIC/AIV0/AIV1)", kernel=kernel.name,
                                hint="debug it with pto.debug.debug_kernel(kernel, args=...), "
                                     "which gives its AICoreDebugContext")
        self.kernel = kernel
        self.program = pending.program
        self.grid, self.block, self.machine = pending.grid, pending.block, pending.machine
        self._tensors, self._scalars, self._names, self._tensor_args = [], {}, [], []
        for arg, value, name in zip(self.program.args, pending.args, pending.names):
            if arg.kind == "tensor":
                self._tensors.append((value.byte_addr, value.count, value.byte_addr))
                self._names.append(name or value.name or arg.name)
                self._tensor_args.append((arg.name, value))
            else:
                self._scalars[arg.name] = value
        self.launch_args = pending.args
        # the caller's tensors, held while the session lives: a `del` of one (its finalizer)
        # would otherwise free memory the paused kernel still writes
        self._held = tuple(a for a in (args if isinstance(args, (tuple, list)) else (args,))
                           if getattr(a, "is_device_tensor", False))
        self._hbm = self.device.hbm.data
        # the state every replay starts from: the bytes (and initcheck's bits) of the memory the
        # launch's tensors own, all a kernel can touch (bounds are always checked); the rest of
        # HBM is the host's, which a replay leaves as it is
        self._spans = _owned_spans(pending.args)
        self._snapshot = [self._hbm[lo:hi].copy() for lo, hi in self._spans]
        # as run_launch: the launch's cycle limit and checks, and initcheck's written-words map
        self._hbm_init = getattr(self.device.hbm, "init", None)
        self._init_snapshot = None if self._hbm_init is None else \
            [self._hbm_init[lo >> 3:hi >> 3].copy() for lo, hi in self._spans]
        self._extra = {"max_cycles": getattr(pending, "max_cycles", None)}
        if hasattr(pending, "checks"):
            self._extra.update(checks=pending.checks, hbm_init=self._hbm_init)
        self.echo = echo
        self._init_breakpoints()
        self.finished = False
        self.device.debug_sessions.add(self)     # its tensors are in use while it is paused
        self._build()
        self._say(f"-- debugging {kernel.name} grid={self.grid} block={self.block} on "
                  f"{self.machine.name}: paused before the first instruction")

    # ---------------------------------------------------------------- the simulation
    def _build(self):
        """A fresh simulation from the snapshot's HBM contents, paused before anything ran."""
        self.sim = LaunchSimulation(self.program, self.program.encode(), self.grid, self.block,
                                    self._tensors, self._scalars, self._hbm, self.machine,
                                    self.kernel.name, self._names, record=True,
                                    keep_warp_states=True, **self._extra)
        self.sim.start()
        self.describer = Describer(self.sim)
        self.error = None
        self.finished = False
        self.total_cycles = None

    def _say(self, text):
        if self.echo:
            print(text)

    def _run(self, stop, echo=False) -> list:
        """Process events until stop(k) is true for a newly issued record k, or the kernel
        ends; return the indices of the records issued. Errors propagate (and are kept)."""
        if self.error is not None:
            raise self.error
        self._follow_hbm()
        sim, rows, issued = self.sim, self.sim.rows, []
        while not self.finished:
            before = len(rows)
            try:
                alive = sim.step()
                if not alive:
                    # only events past the cycle limit (or none) are left: end as run() does,
                    # so finish() reports the limit
                    self.total_cycles = sim.run_to_end()
                    self.finished = True
            except Exception as err:
                self.error = err
                raise
            if self.finished:
                self._say(f"-- {self.kernel.name} finished at cycle {self.total_cycles} "
                          f"({len(rows)} warp-instructions)")
                break
            new = range(before, len(rows))
            issued.extend(new)
            if echo:
                for k in new:
                    self._print_row(k)
            if any([stop(k) for k in new]):
                break
        return issued

    def _print_row(self, k):
        ws = self.sim.warp_state(int(self.sim.rows[k][0]), int(self.sim.rows[k][1]))
        for line in self.describer.lines(self.sim.rows[k], ws.regs):
            print(line)

    def _profile(self, rows, total) -> Profile:
        extra = {"pc_lat": self.sim.pc_lat} if "pc_lat" in _PROFILE_PARAMS else {}
        return Profile(self.kernel.name, self.program, self.machine, self.grid, self.block, total,
                       LaunchRecords.from_rows(rows), self.sim.pc_pipe, self.sim.pc_name, 0.0,
                       **extra)

    def _entry(self, k):
        return self._profile(self.sim.rows[k:k + 1], self.cycle).timeline[0]

    # ---------------------------------------------------------------- running
    def step(self, n: int = 1) -> list:
        """Execute the next ``n`` warp-instructions in simulated time order, printing one line
        per active lane range of each (``[Lane 0-31] LOAD d_a[0..31] -> L1[2] (128 bytes)``).

        Returns their TimelineEntry objects. When the kernel ends first, returns what ran and
        says so; kernel errors (OutOfBoundsError, DeadlockError) propagate and the state at
        the fault stays inspectable (``step_back`` still works).
        """
        n = whole_number(n, "step: n", least=0, hint="step(n) runs n >= 0 warp-instructions "
                         "forward; step_back(n) goes back")
        if self.finished:
            self._say(f"-- {self.kernel.name} has finished (cycle {self.total_cycles}); "
                      "step_back() or restart() to run it again")
            return []
        target = len(self.sim.rows) + n
        if n == 0:
            return []
        issued = self._run(lambda k: k + 1 >= target, echo=self.echo)
        return [self._entry(k) for k in issued]

    def continue_(self):
        """Run until a breakpoint hits (it stops right after the matching warp-instruction,
        which is printed) or the kernel ends. Returns the TimelineEntry that hit, or None."""
        if self.finished:
            self._say(f"-- {self.kernel.name} has finished (cycle {self.total_cycles})")
            return None
        hit = []

        def stop(k):
            row = self.sim.rows[k]
            bps = [bp for bp in self.breakpoints.values() if bp.matches(row, self.sim)]
            for bp in bps:
                bp.hits += 1
                if bp.cycle is not None:
                    bp.hit_at = k + 1
            if bps:
                hit.append((k, bps))
                if self.echo:
                    print(f"-- {', '.join(str(bp) for bp in bps)} hit")
                    self._print_row(k)
            return bool(bps)

        if not self.breakpoints and self.error is None:
            self._run_to_end()
        else:
            self._run(stop)
        return self._entry(hit[0][0]) if hit else None

    def _follow_hbm(self):
        """When the host allocated since and HBM grew into a new array (which holds what the
        kernel wrote so far), go on there: the same instructions replayed onto it."""
        if self.device.hbm.data is not self._hbm:
            self._replay(len(self.sim.rows))

    def _run_to_end(self):
        """No breakpoints: let SimPy run freely (as fast as a launch)."""
        self._follow_hbm()
        sim = self.sim
        try:
            self.total_cycles = sim.run_to_end()
            self.finished = True
        except Exception as err:
            self.error = err
            raise
        self._say(f"-- {self.kernel.name} finished at cycle {self.total_cycles} "
                  f"({len(sim.rows)} warp-instructions)")

    def step_back(self, n: int = 1) -> list:
        """Undo the last ``n`` warp-instructions by deterministic replay: restore HBM from the
        snapshot taken at ``debug_kernel``, rebuild the simulation and run it to ``count - n``
        instructions. Returns the undone TimelineEntry objects (in execution order)."""
        n = whole_number(n, "step_back: n", least=0, hint="step_back(n) undoes n >= 0 "
                         "warp-instructions; step(n) goes forward")
        count = len(self.sim.rows)
        target = max(count - n, 0)
        undone = [self._entry(k) for k in range(target, count)]
        self._replay(target)
        self._say(f"-- back to {target} warp-instructions (cycle {self.cycle})")
        return undone

    def restart(self):
        """Back to the start: HBM as it was at ``debug_kernel``, nothing executed."""
        self._replay(0)
        self._say("-- restarted: paused before the first instruction")

    def _replay(self, target: int):
        freed = [a for a in self.launch_args if getattr(a, "freed", False)]
        if freed:
            raise UseAfterFreeError(
                f"tensor '{freed[0].name}' of this launch was freed: replaying '{self.kernel.name}' would "
                "write into memory that is no longer its", tensor=freed[0].name, kernel=self.kernel.name,
                hint="keep the launch's tensors until the debug session is done with them")
        self._hbm = self.device.hbm.data
        self._hbm_init = getattr(self.device.hbm, "init", None)
        for (lo, hi), words in zip(self._spans, self._snapshot):
            self._hbm[lo:hi] = words
        if self._hbm_init is not None:
            for (lo, hi), bits in zip(self._spans, self._init_snapshot):
                self._hbm_init[lo >> 3:hi >> 3] = bits
        if "hbm_init" in self._extra:
            self._extra["hbm_init"] = self._hbm_init
        self._build()
        for bp in self.breakpoints.values():
            if bp.hit_at is not None and bp.hit_at > target:
                bp.hit_at = None                     # re-arm a cycle breakpoint not yet reached
        if target:
            self._run(lambda k: k + 1 >= target)
        assert len(self.sim.rows) == target, "replay diverged: the model is not deterministic"

    # ---------------------------------------------------------------- breakpoints
    def break_at(self, line=None, inst=None, cycle=None, warp=None, block=None) -> int:
        """Add a breakpoint; returns its id. It stops ``continue_()`` right after a
        warp-instruction matching every condition given: ``line`` (source line of the kernel's
        file), ``inst`` (instruction name such as ``"LOAD"``), ``warp`` and ``block`` (where it
        ran), ``cycle`` (the first instruction issuing at or after that cycle; fires once)."""
        if all(v is None for v in (line, inst, cycle, warp, block)):
            raise ArgumentError("break_at() needs at least one of line, inst, cycle, warp, block")
        if cycle is not None:
            cycle = whole_number(cycle, "break_at: cycle", least=0)
        if warp is not None:
            warps = self.sim.warps_per_block
            warp = whole_number(warp, "break_at: warp", least=0, below=warps,
                                hint=f"a block of {self.block} has {warps} warps: give the warp "
                                     f"of the block, 0..{warps - 1}")
        if inst is not None:
            inst = checked_instruction(inst)
        if line is not None:
            line = checked_line(self.program, line)
        if block is not None:
            block = self._block_id(block)
        return self._add_breakpoint(lambda bp_id: Breakpoint(bp_id, line, inst, cycle, warp, block))

    # ---------------------------------------------------------------- where we are
    @property
    def cycle(self) -> int:
        """The current simulated cycle (once finished: the kernel's total cycles)."""
        if self.finished:
            return int(self.total_cycles)
        return self.sim.now

    @property
    def count(self) -> int:
        """Warp-instructions executed so far."""
        return len(self.sim.rows)

    @property
    def pc(self):
        """The pc of the most recently executed warp-instruction (None before the first)."""
        return int(self.sim.rows[-1][3]) if self.sim.rows else None

    @property
    def line(self):
        """The source line of the most recently executed warp-instruction (or None)."""
        return None if self.pc is None else self.program.instrs[self.pc].line

    @property
    def done(self) -> bool:
        """True once the kernel has ended: finished, or stopped by an error (``error``)."""
        return self.finished or self.error is not None

    def get_instruction_timeline(self) -> list:
        """The warp-instructions executed so far, ordered by issue cycle (ties: block, warp):
        TimelineEntry objects with ``.cycle``, ``.lane`` (``'0-31'``), ``.inst``, ``.warp``,
        ``.block``, ``.core``, ``.pipe``, ``.start``, ``.end``, ``.stall`` (the cause of any
        wait before issue), ``.stall_cycles``, ``.line`` and ``.pc``."""
        return self.profile().timeline

    def profile(self) -> Profile:
        """A Profile of what ran so far; once finished it equals ``pto.profile`` of the launch."""
        total = self.total_cycles if self.finished else self.cycle
        return self._profile(self.sim.rows, total)

    def __repr__(self):
        state = ("finished" if self.finished else f"stopped by {type(self.error).__name__}"
                 if self.error is not None else "paused")
        where = "" if self.pc is None else (
            f", last pc {self.pc} (line {self.line}: "
            f"{self.program.source_lines.get(self.line, '').strip()})")
        return (f"<DebugContext {self.kernel.name} grid={self.grid} block={self.block}: {state} "
                f"at cycle {self.cycle}, {self.count} warp-instructions{where}, "
                f"{len(self.breakpoints)} breakpoints>")


def _owned_spans(args) -> list:
    """[(lo, hi)] byte ranges of the allocations the launch's tensor arguments live in (a
    view's root's), whole 8-byte words (allocations are 512-byte aligned), each once."""
    roots = {}
    for a in args:
        if hasattr(a, "byte_addr") and hasattr(a, "nbytes"):
            root = root_of(a)
            roots[id(root)] = (root.byte_addr, root.byte_addr + -(-root.nbytes // 8) * 8)
    return sorted(roots.values())


def queued_launch(kernel, args=(), grid=None, block=None, machine=None, max_cycles=None,
                  check=None):
    """(device, pending launch): the launch validated and compiled exactly as ``pto.launch``
    does, after the device's earlier launches ran, taken off the queue for the debugger to
    run. grid/block default to the kernel's last launch's, else (1, 1, 1) and the article's
    block (an AI-core kernel: launch()'s default block, its block being one AI core)."""
    last = getattr(kernel, "last_launch", None)
    if grid is None:
        grid = last[0] if last else DEFAULT_GRID
    if block is None:
        block = last[1] if last else LAUNCH_BLOCK if getattr(kernel, "aicore", False) else DEFAULT_BLOCK
    device = current_device()
    device.sync()                            # earlier launches first, as a launch would
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    with machine_mod.machine_in_effect(machine_mod.resolve_machine(machine) if machine else None):
        extra = {k: v for k, v in (("max_cycles", max_cycles), ("check", check)) if v is not None}
        device.launch(kernel, grid, block, args, names=launch_labels(kernel, args, launch_scope()),
                      **extra)
        return device, device.queue.pop()


def debug_kernel(kernel, args=(), grid=None, block=None, machine=None, echo=True,
                 max_cycles=None, check=None) -> DebugContext | AICoreDebugContext:
    """Load a kernel launch into the instruction-level debugger, paused before its first
    instruction, and return its DebugContext (an AICoreDebugContext for a kernel of typed
    tiles on the AI core: its stops are each unit's instructions at the cycle they execute).

    ``grid``/``block`` default to those of the kernel's last ``pto.launch``/``pto.profile``,
    else grid=(1, 1, 1), block=(256, 1, 1) (the article's block). ``machine`` (a name, a path
    or a Machine) defaults to the active machine. Queued launches run first (as for a launch);
    the debugged run then works on the device's HBM, which is snapshotted for ``step_back``.
    ``echo=False`` silences the printed lines. ``max_cycles``: the cycle limit, as for
    ``pto.launch`` (SimulationLimitError past it); ``check``: the kernel checks, as for
    ``pto.launch`` (``"racecheck"``, ``"initcheck"``, ``"synccheck"``, ``"all"``).
    """
    launch = queued_launch(kernel, args, grid, block, machine, max_cycles, check)
    if getattr(launch[1].program, "aicore", False):
        return AICoreDebugContext(kernel, *launch, echo=echo)
    return DebugContext(kernel, args=args, echo=echo, launch=launch)
