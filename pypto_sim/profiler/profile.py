"""The Profile of one simulated launch: total cycles, cycle breakdown, timeline, utilisation,
and (computed only when asked, in the sibling modules) bubbles, hotspots, core balance, CSV
exports, Chrome traces and plots."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property

import numpy as np

from ..isa import PIPES, PTO_PIPE_NAMES, PTO_PIPE_SHORT, load_isa
from ..exec.jit_clock import rate_text
from ..arguments import whole_number
from ..errors import ArgumentError, ProfileError
from ..timing.records import STALL_CAUSES, LaunchRecords, PcTotals
from ..exec.aicore_tiles import UNIT_NAMES as AICORE_UNITS
from .aicore_bubbles import PTO_ORDER, aicore_bubbles, pipe_name
from .aicore_summary import PipelineSummary, PipeWindows, pipe_rows, pipe_shares, summary_rows
from .breakdown import CycleBreakdown, breakdown_rows
from .bubbles import BubbleReport, compute_bubbles
from .deps import find_producers, previous_in_warp
from .export import export_csv
from .hotspots import compute_core_balance, compute_hotspots
from .intervals import busy_cycles, lane_ranges, merge_intervals, union_cycles
from .msprof import OpSummary, task_duration_us
from .plot import save_plot
from .roofline import Roofline
from .tables import to_dataframe
from .trace import build_trace, save_trace


@dataclass(frozen=True)
class TimelineEntry:
    """One warp-instruction: when it issued and completed, where, and why it waited. In an
    AI-core kernel one instruction of a unit: ``unit`` (and ``lane``) is the unit (AIC, AIV0,
    AIV1), ``warp`` its index (0, 1, 2) and ``pipe`` its PTO pipe (S, MTE2, ...)."""

    cycle: int
    lane: str
    inst: str
    warp: int
    block: int
    core: int
    pipe: str
    start: int
    end: int
    stall: str
    stall_cycles: int
    line: int
    pc: int

    @property
    def unit(self):
        """The AI-core unit that ran it ("AIC", "AIV0", "AIV1"); None in a lane kernel."""
        return self.lane if self.lane in AICORE_UNITS else None

    def __str__(self):
        who = self.lane if self.lane in AICORE_UNITS else f"Lane {self.lane}"
        return f"Cycle {self.cycle}: {who}: {self.inst}"


class Timeline(list):
    """The timeline: a plain list of TimelineEntry in issue order, with ``to_pandas()`` (one
    row per warp-instruction, the entries' fields as columns; needs pandas)."""

    def to_pandas(self):
        """A DataFrame with one row per entry (needs pandas)."""
        return to_dataframe([asdict(e) for e in self])


class Profile:
    """What one launch did on the simulated NPU.

    ``total_cycles``; ``cycle_breakdown()``; ``timeline`` (TimelineEntry list, issue order);
    ``pipe_utilization()``; ``busy_intervals()``; ``bubbles()``; ``hotspots()``;
    ``core_balance()``; ``export_csv(dir)``; ``save_trace(path)``; ``save_plot(path)``;
    AI-core kernels: ``pipeline_summary()``, ``op_summary()`` (msprof), ``roofline()``;
    ``records`` (raw numpy columns); ``stats`` (simulation speed).

    Construction only stores the records: every analysis is computed when first asked for
    (and cached), so profiling costs no more than running.
    """

    def __init__(self, kernel_name, program, machine, grid, block, total_cycles, records,
                 pc_pipe, pc_name, wall_seconds, pc_lat=None, totals=None):
        self.kernel_name = kernel_name
        self.program = program
        self.machine = machine
        self.grid = grid
        self.block = block
        self.total_cycles = total_cycles
        self._records = records
        self._totals = totals
        self._pc_pipe = pc_pipe
        self._pc_name = pc_name
        self._pc_lat = pc_lat
        self.wall_seconds = wall_seconds      # the simulation's own time
        self.compile_seconds = 0.0            # numba compiling during the launch (not in the rate)
        self._cache = {}
        self.aicore_stats = None     # AI-core kernels: L2 hits/misses, shared-bandwidth waits
        self.syncall_last = None     # and SYNCALL's rounds: per kind, each round's last arrival
        self.l2 = None               # {"hits", "misses"}: L2 line accesses of the tile DMA

    # ---------------------------------------------------------------- what the run kept
    @property
    def records(self) -> LaunchRecords:
        """The per warp-instruction records (numpy columns, in issue order). Kept by
        pto.profile; a pto.launch keeps them only with timeline=True."""
        if self._records is None:
            raise ProfileError(
                f"this profile of '{self.kernel_name}' kept per-instruction totals only (it came "
                f"from pto.launch): the timeline, pipe utilisation, bubbles, core balance, CSVs "
                f"and traces need the per-instruction records",
                kernel=self.kernel_name,
                hint="use pto.profile(...), or pto.launch(..., timeline=True), or run the program "
                     "under `pypto-sim profile`")
        return self._records

    @property
    def has_timeline(self) -> bool:
        """True when the per-instruction records were kept."""
        return self._records is not None

    @cached_property
    def totals(self) -> PcTotals:
        """Per-pc totals: count, lanes, busy and stall cycles (always kept)."""
        if self._totals is None:
            self._totals = PcTotals.from_records(self._records, len(self._pc_name))
        return self._totals

    # ---------------------------------------------------------------- per-pc and per-record facts
    @property
    def pc_name(self) -> list:
        """Instruction name of each pc."""
        return self._pc_name

    def pc_pipe_index(self, pc) -> int:
        """Index in PIPES of the pipe instruction pc runs on (uniform ALU ops: scalar)."""
        return self._pc_pipe[pc]

    def pc_latency(self, pc) -> int:
        """Latency of instruction pc in the machine table (the scalar unit's for uniform ops)."""
        if self._pc_lat is not None:
            return self._pc_lat[pc]
        return self.machine.latency(self._pc_name[pc])

    @cached_property
    def pc_line(self) -> list:
        """Source line of each pc."""
        return [ins.line for ins in self.program.instrs]

    @cached_property
    def pc_is_tile(self) -> list:
        """True for tile operations (block-level, asynchronous on their pipe)."""
        isa = load_isa()
        # a fused pair's second instruction is named "FIRST+SECOND": its kind is SECOND's
        specs = [isa[name.rsplit("+", 1)[-1]] for name in self._pc_name]
        return [s.is_tile and s.family != "tile_sync" for s in specs]

    @cached_property
    def record_pipes(self) -> np.ndarray:
        """Pipe index (into PIPES) of each record."""
        rec = self.records
        return np.array(self._pc_pipe, dtype=np.int64)[rec.pc] if len(rec) else np.zeros(0, np.int64)

    def producers(self) -> np.ndarray:
        """For each record, the index of the record it waited for (-1: none); see deps.py."""
        if "producers" not in self._cache:
            self._cache["producers"] = find_producers(self)
        return self._cache["producers"]

    def previous_in_warp(self) -> np.ndarray:
        if "prev" not in self._cache:
            self._cache["prev"] = previous_in_warp(self)
        return self._cache["prev"]

    def active_windows(self) -> dict:
        """{core: (first issue, last completion)} for every core that ran something."""
        if "windows" not in self._cache:
            rec = self.records
            out = {}
            if len(rec):
                cores, inv = np.unique(rec.core, return_inverse=True)
                first = np.full(len(cores), np.iinfo(np.int64).max)
                last = np.zeros(len(cores), np.int64)
                np.minimum.at(first, inv, rec.issue)
                np.maximum.at(last, inv, rec.complete)
                out = {int(c): (int(a), int(b)) for c, a, b in zip(cores, first, last)}
            self._cache["windows"] = out
        return self._cache["windows"]

    def busy_by_core(self) -> dict:
        """{core: {pipe: cycles with an operation of that pipe in flight, "any": cycles with
        any}} for every core that ran something."""
        if "busy" not in self._cache:
            rec, pipes = self.records, self.record_pipes
            out = {}
            for core in self.active_windows():
                on = rec.core == core
                row = {p: union_cycles(rec.issue[on & (pipes == i)], rec.complete[on & (pipes == i)])
                       for i, p in enumerate(PIPES)}
                row["any"] = union_cycles(rec.issue[on], rec.complete[on])
                out[core] = row
            self._cache["busy"] = out
        return self._cache["busy"]

    @property
    def warp_instructions(self) -> int:
        return self.totals.warp_instructions

    @property
    def stats(self) -> dict:
        """Simulation speed, as GPGPU-Sim reports it: the rates divide by ``wall_seconds``,
        the simulation's own time; ``compile_seconds`` (numba compiling or loading the
        executor and the event loop, on a process's first launches) is not part of it."""
        secs = max(self.wall_seconds, 1e-9)
        return {"warp_instructions": self.warp_instructions, "simulated_cycles": self.total_cycles,
                "wall_seconds": self.wall_seconds, "compile_seconds": self.compile_seconds,
                "warp_instructions_per_second": self.warp_instructions / secs,
                "simulated_cycles_per_second": self.total_cycles / secs}

    @property
    def pipe_names(self) -> tuple:
        """The name of each pipe of PIPES in this kernel's reports: PTO's (S, MTE2, ...:
        isa.PTO_PIPE_SHORT) for an AI-core kernel, PIPES' own for a lane kernel."""
        if getattr(self.program, "aicore", False):
            return tuple(PTO_PIPE_SHORT.get(p, p) for p in PIPES)
        return PIPES

    def cycle_breakdown(self) -> CycleBreakdown:
        """Cycles per instruction kind (printing it shows a table; ``json.dumps`` takes it). An
        FMA with a pointer destination counts under FMA (its compute) and STORE (its write),
        as the article's profile lists them; see breakdown.py."""
        totals = self.totals
        issued = np.nonzero(totals.count)[0].tolist()
        rows = breakdown_rows([self._pc_name[pc] for pc in issued],
                              [self.pipe_names[self._pc_pipe[pc]] for pc in issued],
                              [self.pc_latency(pc) for pc in issued],
                              totals.count[issued], totals.busy[issued], totals.stall[issued],
                              compute_pipe=load_isa()["FMA"].pipe)
        return CycleBreakdown(rows, self.total_cycles, totals.warp_instructions)

    @property
    def timeline(self) -> Timeline:
        """Every warp-instruction, ordered by issue cycle (ties: block, warp): a list of
        TimelineEntry (``to_pandas()`` gives a DataFrame)."""
        rec = self.records
        order = np.lexsort((rec.warp, rec.block, rec.issue))
        out = []
        pipes = self.pipe_names
        aicore = getattr(self.program, "aicore", False)
        for i in order:
            pc = int(rec.pc[i])
            w = int(rec.warp[i])
            out.append(TimelineEntry(
                cycle=int(rec.issue[i]), lane=AICORE_UNITS[w] if aicore else lane_ranges(int(rec.mask[i]), w),
                inst=self._pc_name[pc], warp=w, block=int(rec.block[i]), core=int(rec.core[i]),
                pipe=pipes[self._pc_pipe[pc]], start=int(rec.issue[i]), end=int(rec.complete[i]),
                stall=STALL_CAUSES[int(rec.cause[i])] if rec.stall[i] else "none",
                stall_cycles=int(rec.stall[i]), line=self.program.instrs[pc].line, pc=pc))
        return Timeline(out)

    def pipe_utilization(self, window="kernel") -> dict:
        """Per pipe: the fraction of cycles in which it had an operation in flight (issue to
        completion), over the cores that ran something. ``window="kernel"``: of the kernel's
        total cycles on each of those cores; ``window="active"``: of each core's own active
        window (first issue to last completion), which discounts cores that finished early.
        AI-core kernels: per unit and PTO pipe that ran something ("AIC MTE2", "AIV0 V",
        "AIC S", ...), in unit and PTO order."""
        if window not in ("kernel", "active"):
            raise ArgumentError(f"pipe_utilization: window must be 'kernel' or 'active', not {window!r}")
        if getattr(self.program, "aicore", False):
            return self._unit_utilization(window)
        if window == "active":
            busy, windows = self.busy_by_core(), self.active_windows()
            denom = sum(b - a for a, b in windows.values()) or 1
            return {p: sum(busy[c][p] for c in windows) / denom for p in PIPES}
        rec = self.records
        pipes = self.record_pipes
        cores = np.unique(rec.core)
        denom = max(self.total_cycles, 1) * max(len(cores), 1)
        out = {}
        for i, pipe in enumerate(PIPES):
            busy = 0
            for core in cores:
                sel = (pipes == i) & (rec.core == core)
                busy += busy_cycles(rec.issue[sel], rec.complete[sel])
            out[pipe] = busy / denom
        return out

    def _unit_utilization(self, window) -> dict:
        """pipe_utilization of an AI-core kernel: {"AIC MTE2": fraction, ...}."""
        rec, pipes = self.records, self.record_pipes
        windows = self.active_windows()
        denom = (sum(b - a for a, b in windows.values()) if window == "active"
                 else max(self.total_cycles, 1) * len(windows)) or 1
        busy: dict = {}
        for w, p in sorted(set(zip(rec.warp.tolist(), pipes.tolist()))):
            label = f"{AICORE_UNITS[w]} {pipe_name(p)}"
            for core in windows:
                sel = (rec.core == core) & (rec.warp == w) & (pipes == p)
                busy[label] = busy.get(label, 0) + busy_cycles(rec.issue[sel], rec.complete[sel])
        order = sorted(busy, key=lambda k: (AICORE_UNITS.index(k.split()[0]), PTO_ORDER.index(k.split()[1])))
        return {k: busy[k] / denom for k in order}

    def busy_intervals(self, pipe: str, core=None, block=None, unit=None) -> list:
        """Merged [start, end) intervals in which ``pipe`` had an operation in flight. AI-core
        kernels: ``pipe`` is a PTO pipe ("MTE2" or "PIPE_MTE2", ...) and ``unit`` ("AIC",
        "AIV0", "AIV1"; None: every unit) narrows it to one unit's."""
        rec = self.records
        pipes = self.record_pipes
        aicore = getattr(self.program, "aicore", False)
        if aicore:
            names = {}
            for i, p in enumerate(PIPES):
                if p in PTO_PIPE_SHORT:
                    names[PTO_PIPE_NAMES[p]] = names[PTO_PIPE_SHORT[p]] = i
            if not isinstance(pipe, str) or pipe not in names:
                raise ArgumentError(f"busy_intervals: pipe of an AI-core kernel must be a PTO pipe, one "
                                    f"of {tuple(PTO_PIPE_SHORT.values())}, not "
                                    f"{pipe!r}", hint="e.g. busy_intervals('MTE2', unit='AIC')")
            if unit is not None and unit not in AICORE_UNITS:
                raise ArgumentError(f"busy_intervals: unit must be one of {AICORE_UNITS}, not {unit!r}",
                                    hint="AIC is the cube unit, AIV0 / AIV1 the vector units")
            sel = pipes == names[pipe]
            if unit is not None:
                sel &= rec.warp == AICORE_UNITS.index(unit)
        else:
            if pipe not in PIPES:
                raise ArgumentError(f"busy_intervals: pipe must be one of {PIPES}, not {pipe!r}")
            if unit is not None:
                raise ArgumentError("busy_intervals: unit= is for AI-core kernels (AIC, AIV0, AIV1); "
                                    f"'{self.kernel_name}' is a lane kernel", hint="leave unit out")
            sel = pipes == PIPES.index(pipe)
        core = self._core_arg(core, "busy_intervals")
        if block is not None:
            n_blocks = int(np.prod(self.grid))
            block = whole_number(block, "busy_intervals: block", least=0, below=n_blocks,
                                 hint=f"the grid {self.grid} has linear block ids 0..{n_blocks - 1}")
        if core is not None:
            sel &= rec.core == core
        if block is not None:
            sel &= rec.block == block
        return merge_intervals(rec.issue[sel], rec.complete[sel])

    def _core_arg(self, core, call):
        """``core`` checked against the machine's cores (None: every core)."""
        if core is None:
            return None
        return whole_number(core, f"{call}: core", least=0, below=self.machine.cores,
                            hint=f"{self.machine.name} has cores 0..{self.machine.cores - 1}; "
                                 f"core_balance() lists the ones that ran blocks")

    # ---------------------------------------------------------------- analyses (lazy)
    def bubbles(self, pipe=None, core=None, unit=None):
        """Pipeline bubbles: each idle gap of each pipe inside each core's active window,
        attributed to its cause (the instruction and line waited for, HBM bandwidth, pipeline
        depth, wait_all, barrier, ...), summed per cause; printing shows a table per pipe.
        ``pipe`` ("load", "mma", ...) and ``core`` narrow the report. See bubbles.py. AI-core
        kernels: per unit and PTO pipe, ``pipe`` "MTE2", "MTE1", "M", "FIX", "V", "MTE3" and
        ``unit`` "AIC", "AIV0", "AIV1" narrow it; see aicore_bubbles.py."""
        if getattr(self.program, "aicore", False):
            return aicore_bubbles(self, pipe, self._core_arg(core, "bubbles"), unit)
        if pipe is not None and pipe not in PIPES:
            raise ArgumentError(f"bubbles: pipe must be one of {PIPES}, not {pipe!r}")
        if unit is not None:
            raise ArgumentError("bubbles: unit= is for AI-core kernels (AIC, AIV0, AIV1); "
                                f"'{self.kernel_name}' is a lane kernel", hint="narrow it with pipe= and core=")
        core = self._core_arg(core, "bubbles")
        if "bubbles" not in self._cache:
            self._cache["bubbles"] = compute_bubbles(self)
        busy, windows = self.busy_by_core(), self.active_windows()
        active = {p: sum(b - a for c, (a, b) in windows.items() if busy[c][p] and core in (None, c))
                  for p in PIPES}
        return BubbleReport(self._cache["bubbles"], active, pipe=pipe, core=core)

    def hotspots(self):
        """Per source line: executions (warp-instructions), lanes, busy cycles, stall cycles,
        the instructions it compiled to; busiest first (printing shows a table)."""
        if "hotspots" not in self._cache:
            self._cache["hotspots"] = compute_hotspots(self)
        return self._cache["hotspots"]

    def core_balance(self):
        """Per core: blocks, active window, busy cycles per pipe; the max-min spread of active
        cycles and whether it exceeds msprof's 10% Occupancy rule (printing shows a table)."""
        return compute_core_balance(self)

    def export_csv(self, directory, prefix="") -> dict:
        """Write instr_exe.csv (per instruction), code_exe.csv (per source line),
        pipeline_summary.csv (per core; AI-core kernels: per core and unit) and bubbles.csv
        into ``directory`` (created if needed), and for AI-core kernels msprof's op_summary.csv;
        return their paths. Files of these names already there are replaced (each atomically:
        never half-written); a failure leaves them as they were (docs/profiling.md, "Output
        files")."""
        return export_csv(self, directory, prefix)

    def trace(self, time_unit="cycle", warps=True, flows=True, counters=True,
              bucket_cycles=None) -> dict:
        """The Chrome trace event JSON of the launch as a dict (see ``save_trace``)."""
        return build_trace(self, time_unit=time_unit, warps=warps, flows=flows, counters=counters,
                           bucket_cycles=bucket_cycles)

    def save_trace(self, path, time_unit="cycle", warps=True, flows=True, counters=True,
                   bucket_cycles=None):
        """Write a Chrome trace event JSON file that opens in Perfetto and chrome://tracing:
        one process per core, one track per pipe and per warp, a complete event per
        warp-instruction, flow arrows from each operation waited for to its waiter.
        AI-core kernels: one track per unit (AIC, AIV0, AIV1) and per PTO pipe of each unit,
        flow arrows from each set_flag to the operation its wait_flag held and from each
        cross-core signal to the wait that took it, and (``counters``) GM / L2 / HBM
        bytes-per-cycle counter tracks in buckets of ``bucket_cycles``.
        ``time_unit="cycle"`` (default): 1 trace microsecond = 1 cycle; ``"us"``: real time at
        the machine's clock. Returns the path. A file already at ``path`` is replaced
        atomically; bad arguments or a failure leave it as it was (docs/profiling.md, "Output
        files")."""
        return save_trace(self, path, time_unit=time_unit, warps=warps, flows=flows,
                          counters=counters, bucket_cycles=bucket_cycles)

    def save_plot(self, path, max_cores=8):
        """Write a pipeline Gantt chart, per-pipe utilisation and idle cycles by cause as an
        image (PNG by the extension; without one ".png" is added) and return the path written.
        A file already there is replaced atomically. Needs matplotlib: pip install
        pypto-sim[plot]."""
        return save_plot(self, path, max_cores=max_cores)

    def pipeline_summary(self, per="unit"):
        """Per AI core and unit (AIC, AIV0, AIV1): total cycles, active start / end / cycles,
        busy cycles and the busy cycles of each pipe, in pto-isa Perf-Sim's
        pipeline_summary.csv columns, with the L2's hits and misses (AI-core kernels; printing
        shows a table; ``to_csv(path)``, ``to_pandas()``). ``per="pipe"``: one row per core,
        unit and PTO pipe (PIPE_MTE2, ...) with its operations, first start, last completion
        and busy cycles."""
        self._require_aicore("pipeline_summary")
        if per == "pipe":
            return PipeWindows(pipe_rows(self))
        if per != "unit":
            raise ArgumentError(f"pipeline_summary: per must be 'unit' or 'pipe', not {per!r}")
        return PipelineSummary(summary_rows(self), self.aicore_stats)

    def op_summary(self):
        """msprof's op_summary (PipeUtilization metrics) of an AI-core kernel: one row per AI
        core and unit that ran a tile operation, then a kernel total row, with msprof's column
        names (Task Duration(us), aicore_time(us), aic_total_cycles, aic_mac_ratio, ...,
        aiv_vec_ratio, ...): each ratio is the pipe's busy cycles over the unit's cycles. See
        profiler/msprof.py; ``to_csv(path)``, ``to_pandas()``, printing shows a table."""
        self._require_aicore("op_summary")
        return OpSummary.of(self)

    def roofline(self, threshold=0.5):
        """The kernel against the machine's roofs: cube and vector FLOPs (from its matmul and
        vector operations' shapes), GM bytes moved, arithmetic intensity, attained FLOP/s, the
        cube, vector and GM bandwidth roofs (each derived from the machine table and named)
        and the bound: "cube", "vector", "GM bandwidth", or "latency/sync" when the nearest
        roof explains less than ``threshold`` of the kernel's cycles. See profiler/roofline.py."""
        self._require_aicore("roofline")
        return Roofline.of(self, threshold)

    def pipe_shares(self, unit="AIC") -> dict:
        """{"MTE2", "MTE1", "M", "FIX", "V", "MTE3", "S": busy cycles / total cycles} of ``unit``
        ("AIC", "AIV0", "AIV1", "AIV"), averaged over the AI cores it ran on."""
        self._require_aicore("pipe_shares")
        return pipe_shares(self, unit)

    def task_duration_us(self) -> float:
        """msprof's Task Duration of an AI-core kernel, in microseconds: the kernel's cycles plus
        the machine's ``task_overhead_cycles`` (dispatching the task and its response end,
        measured on the device), at the clock. Compare it, not total_cycles, with a published
        Task Duration."""
        self._require_aicore("task_duration_us")
        return task_duration_us(self)

    def _require_aicore(self, what):
        if not getattr(self.program, "aicore", False):
            raise ProfileError(f"{what}() describes AI-core kernels (typed tiles, cube / vector "
                               f"units); '{self.kernel_name}' is a lane kernel", kernel=self.kernel_name,
                               hint="use cycle_breakdown() and pipe_utilization() for lane kernels")

    def report(self) -> str:
        """A short text report: totals, rate, breakdown."""
        s = self.stats
        aicore = getattr(self.program, "aicore", False)
        shape = "one AI core a block (AIC, AIV0, AIV1)" if aicore else f"block={self.block}"
        what = "instructions (of the units)" if aicore else "warp-instructions"
        head = (f"kernel {self.kernel_name} on {self.machine.name}: grid={self.grid} {shape}\n"
                f"total cycles: {self.total_cycles} ({self.total_cycles / (self.machine.clock_ghz * 1e3):.2f} us "
                f"at {self.machine.clock_ghz} GHz), {s['warp_instructions']} {what}, "
                f"simulated at {rate_text(s['warp_instructions_per_second'], self.compile_seconds)}")
        return head + "\n" + str(self.cycle_breakdown())

    def __repr__(self):
        if getattr(self.program, "aicore", False):
            return (f"<Profile {self.kernel_name}: {self.total_cycles} cycles, {self.warp_instructions} "
                    f"instructions of the AI cores' units (AIC, AIV0, AIV1)>")
        return f"<Profile {self.kernel_name}: {self.total_cycles} cycles, {self.warp_instructions} warp-instructions>"
