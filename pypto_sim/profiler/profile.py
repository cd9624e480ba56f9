"""The Profile of one simulated launch: total cycles, cycle breakdown, timeline, utilisation."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..isa import PIPES
from ..timing.model import LaunchSimulation
from ..timing.records import STALL_CAUSES


@dataclass(frozen=True)
class TimelineEntry:
    """One warp-instruction: when it issued and completed, where, and why it waited."""

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

    def __str__(self):
        return f"Cycle {self.cycle}: Lane {self.lane}: {self.inst}"


class CycleBreakdown:
    """Cycles per instruction kind. Columns: count (warp-instructions), busy (issue to
    completion, summed), stall (cycles waited before issue, summed), share of busy cycles."""

    def __init__(self, rows, total_cycles):
        self.rows = rows
        self.total_cycles = total_cycles

    def __getitem__(self, name):
        return self.rows[name.upper()]

    def __contains__(self, name):
        return name.upper() in self.rows

    def items(self):
        return self.rows.items()

    def as_dict(self) -> dict:
        """{instruction: {"count", "busy_cycles", "stall_cycles", "pipe"}}"""
        return {k: dict(v) for k, v in self.rows.items()}

    def __str__(self):
        total_busy = sum(r["busy_cycles"] for r in self.rows.values()) or 1
        lines = [f"{'instruction':16s} {'pipe':7s} {'count':>8s} {'busy cycles':>12s} "
                 f"{'stall cycles':>12s} {'share':>7s}"]
        for name, r in sorted(self.rows.items(), key=lambda kv: -kv[1]["busy_cycles"]):
            lines.append(f"{name:16s} {r['pipe']:7s} {r['count']:>8d} {r['busy_cycles']:>12d} "
                         f"{r['stall_cycles']:>12d} {100 * r['busy_cycles'] / total_busy:>6.1f}%")
        lines.append(f"total cycles: {self.total_cycles}")
        return "\n".join(lines)

    __repr__ = __str__


class Profile:
    """What one launch did on the simulated NPU.

    ``total_cycles``; ``cycle_breakdown()``; ``timeline`` (TimelineEntry list, issue order);
    ``pipe_utilization()``; ``records`` (raw numpy columns); ``stats`` (simulation speed).
    """

    def __init__(self, kernel_name, program, machine, grid, block, total_cycles, records,
                 pc_pipe, pc_name, wall_seconds):
        self.kernel_name = kernel_name
        self.program = program
        self.machine = machine
        self.grid = grid
        self.block = block
        self.total_cycles = total_cycles
        self.records = records
        self._pc_pipe = pc_pipe
        self._pc_name = pc_name
        self.wall_seconds = wall_seconds

    @property
    def warp_instructions(self) -> int:
        return len(self.records)

    @property
    def stats(self) -> dict:
        """Simulation speed, as GPGPU-Sim reports it."""
        secs = max(self.wall_seconds, 1e-9)
        return {"warp_instructions": self.warp_instructions, "simulated_cycles": self.total_cycles,
                "wall_seconds": self.wall_seconds,
                "warp_instructions_per_second": self.warp_instructions / secs,
                "simulated_cycles_per_second": self.total_cycles / secs}

    def cycle_breakdown(self) -> CycleBreakdown:
        """Cycles per instruction kind (printing it shows a table)."""
        rec = self.records
        rows = {}
        names = np.array(self._pc_name, dtype=object)[rec.pc] if len(rec) else []
        busy = rec.complete - rec.issue
        for name in sorted(set(names)):
            sel = names == name
            pcs = rec.pc[sel]
            rows[name] = {"count": int(sel.sum()), "busy_cycles": int(busy[sel].sum()),
                          "stall_cycles": int(rec.stall[sel].sum()),
                          "pipe": PIPES[self._pc_pipe[int(pcs[0])]]}
        return CycleBreakdown(rows, self.total_cycles)

    @property
    def timeline(self) -> list:
        """Every warp-instruction, ordered by issue cycle (ties: block, warp)."""
        rec = self.records
        order = np.lexsort((rec.warp, rec.block, rec.issue))
        out = []
        for i in order:
            pc = int(rec.pc[i])
            w = int(rec.warp[i])
            out.append(TimelineEntry(
                cycle=int(rec.issue[i]), lane=lane_ranges(int(rec.mask[i]), w), inst=self._pc_name[pc],
                warp=w, block=int(rec.block[i]), core=int(rec.core[i]),
                pipe=PIPES[self._pc_pipe[pc]], start=int(rec.issue[i]), end=int(rec.complete[i]),
                stall=STALL_CAUSES[int(rec.cause[i])] if rec.stall[i] else "none",
                stall_cycles=int(rec.stall[i]), line=self.program.instrs[pc].line, pc=pc))
        return out

    def pipe_utilization(self) -> dict:
        """Per pipe: the fraction of cycles in which it had an operation in flight (issue to
        completion), over the cores that ran something and the kernel's total cycles."""
        rec = self.records
        pipes = np.array(self._pc_pipe, dtype=np.int64)[rec.pc] if len(rec) else np.zeros(0, np.int64)
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

    def busy_intervals(self, pipe: str, core=None, block=None) -> list:
        """Merged [start, end) intervals in which ``pipe`` had an operation in flight."""
        rec = self.records
        pipes = np.array(self._pc_pipe, dtype=np.int64)[rec.pc] if len(rec) else np.zeros(0, np.int64)
        sel = pipes == PIPES.index(pipe)
        if core is not None:
            sel &= rec.core == core
        if block is not None:
            sel &= rec.block == block
        return merge_intervals(rec.issue[sel], rec.complete[sel])

    def report(self) -> str:
        """A short text report: totals, rate, breakdown."""
        s = self.stats
        head = (f"kernel {self.kernel_name} on {self.machine.name}: grid={self.grid} block={self.block}\n"
                f"total cycles: {self.total_cycles} ({self.total_cycles / (self.machine.clock_ghz * 1e3):.2f} us "
                f"at {self.machine.clock_ghz} GHz), {s['warp_instructions']} warp-instructions, "
                f"simulated at {s['warp_instructions_per_second']:,.0f} warp-instr/s")
        return head + "\n" + str(self.cycle_breakdown())

    def __repr__(self):
        return f"<Profile {self.kernel_name}: {self.total_cycles} cycles, {self.warp_instructions} warp-instructions>"


def merge_intervals(starts, ends) -> list:
    """Sorted, merged [start, end) intervals."""
    order = np.argsort(starts, kind="stable")
    merged = []
    for s, e in zip(starts[order].tolist(), ends[order].tolist()):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [tuple(iv) for iv in merged]


def busy_cycles(starts, ends) -> int:
    """Cycles covered by the union of [start, end) intervals."""
    return sum(e - s for s, e in merge_intervals(starts, ends))


def lane_ranges(mask: int, warp: int) -> str:
    """Block-local lane ids of a warp's active mask as ranges: '0-31', '0-15', '3,8-11'."""
    parts, lane = [], 0
    while lane < 32:
        if (mask >> lane) & 1:
            start = lane
            while lane + 1 < 32 and (mask >> (lane + 1)) & 1:
                lane += 1
            a, b = warp * 32 + start, warp * 32 + lane
            parts.append(str(a) if a == b else f"{a}-{b}")
        lane += 1
    return ",".join(parts) or "-"


def run_launch(device, pending, record=True) -> Profile:
    """Simulate one queued launch on its machine; results land in the device's HBM."""
    prog = pending.program
    tensors, scalars, names = [], {}, []
    for arg, value, name in zip(prog.args, pending.args, pending.names):
        if arg.kind == "tensor":
            tensors.append((value.word_base, value.count, value.byte_addr))
            names.append(name or value.name or arg.name)
        else:
            scalars[arg.name] = value
    start = time.perf_counter()
    sim = LaunchSimulation(prog, prog.encode(), pending.grid, pending.block, tensors, scalars,
                           device.hbm.words, pending.machine, pending.kernel.name, names,
                           record=record, max_cycles=pending.max_cycles, checks=pending.checks,
                           hbm_init=device.hbm.init)
    total = sim.run()
    wall = time.perf_counter() - start
    return Profile(pending.kernel.name, prog, pending.machine, pending.grid, pending.block, total,
                   sim.records(), sim.pc_pipe, sim.pc_name, wall)
