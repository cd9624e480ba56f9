"""Per-source-line hotspots and per-core balance.

Hotspots are msprof's code hotspot map / ``code_exe.csv`` for a simulated launch: for each
source line of the kernel, how many warp-instructions it issued, over how many lanes, the
cycles they were in flight (issue to completion, summed) and the cycles they waited before
issuing. Core balance is msprof's Occupancy view: each core's active window and busy cycles,
and the spread between the busiest and the least busy core (above 10% of the busiest, msprof
suggests retuning the tiling or the grid).
"""
from __future__ import annotations

import numpy as np

from ..isa import PIPES, PTO_PIPE_SHORT
from ..arguments import whole_number
from .tables import RowTable
from .aicore_summary import PIPE_ORDER, UNITS
from .intervals import union_cycles

IMBALANCE_THRESHOLD = 0.10     # msprof Occupancy: max-min above 10% is worth tuning


class Hotspots(RowTable):
    """Per source line: ``file``, ``line``, ``source``, ``executions`` (warp-instructions),
    ``lane_executions``, ``busy_cycles``, ``stall_cycles``, ``instructions``. A read-only list
    of plain row dicts (``json.dumps`` takes it), ordered by busy cycles; ``hotspots[line]``
    gives one row; printing shows a table."""

    KEY = "line"

    def __init__(self, rows, kernel_name, aicore=False):
        super().__init__(rows)
        self.kernel_name = kernel_name
        self.aicore = aicore            # an AI-core kernel's rows: instructions of units, no lanes

    def _missing(self, line) -> str:
        return f"line {line} issued no instruction in kernel {self.kernel_name}"

    @property
    def lines(self) -> list:
        return [r["line"] for r in self.rows]

    def top(self, n=10) -> "Hotspots":
        """The n busiest lines."""
        n = whole_number(n, "top: n", least=0)
        return Hotspots(self.rows[:n], self.kernel_name, self.aicore)

    def __str__(self):
        total = sum(r["busy_cycles"] for r in self.rows) or 1
        lanes = "" if self.aicore else f" {'lanes':>8s}"
        out = [f"hotspots of {self.kernel_name}: cycles in flight per source line",
               f"{'line':>6s} {'executions':>10s}{lanes} {'busy cycles':>12s} {'share':>6s} "
               f"{'stall cycles':>12s}  {'instructions':24s} source"]
        for r in self.rows:
            lanes = "" if self.aicore else f" {r['lane_executions']:>8d}"
            out.append(f"{r['line']:>6d} {r['executions']:>10d}{lanes} "
                       f"{r['busy_cycles']:>12d} {100 * r['busy_cycles'] / total:>5.1f}% "
                       f"{r['stall_cycles']:>12d}  {' '.join(r['instructions'])[:24]:24s} {r['source']}")
        return "\n".join(out)

    __repr__ = __str__


def compute_hotspots(prof) -> Hotspots:
    totals = prof.totals
    issued = np.nonzero(totals.count)[0]
    if not len(issued):
        return Hotspots([], prof.kernel_name, bool(getattr(prof.program, "aicore", False)))
    lines = np.asarray(prof.pc_line, np.int64)[issued]
    uniq, inv = np.unique(lines, return_inverse=True)

    def per_line(values):
        return np.bincount(inv, weights=values[issued], minlength=len(uniq)).astype(np.int64)
    execs, lanes = per_line(totals.count), per_line(totals.lanes)
    busy, stall = per_line(totals.busy), per_line(totals.stall)
    insts: dict = {}
    for pc in issued.tolist():
        insts.setdefault(prof.pc_line[pc], []).append(prof.pc_name[pc])
    src = prof.program.source_lines
    rows = [{"file": prof.program.file, "line": int(ln), "source": src.get(int(ln), "").strip(),
             "executions": int(execs[k]), "lane_executions": int(lanes[k]),
             "busy_cycles": int(busy[k]), "stall_cycles": int(stall[k]),
             "instructions": sorted(set(insts.get(int(ln), [])))}
            for k, ln in enumerate(uniq.tolist())]
    rows.sort(key=lambda r: (-r["busy_cycles"], r["line"]))
    return Hotspots(rows, prof.kernel_name, bool(getattr(prof.program, "aicore", False)))


class CoreBalance(RowTable):
    """Per core that ran blocks: ``core_id``, ``blocks``, ``warp_instructions``,
    ``active_start_cycle``, ``active_end_cycle``, ``active_cycles``, ``busy_cycles`` (some pipe
    busy) and ``<pipe>_cycles`` (AI-core kernels: ``<unit>_<PTO pipe>_cycles``, e.g.
    ``aic_mte2_cycles``, ``aiv0_v_cycles``); a read-only list of plain row dicts (``json.dumps`` takes it;
    ``balance[core]`` gives one row). ``spread`` = (max - min) / max of the active cycles;
    ``imbalanced`` when the spread is above 10% (msprof's Occupancy rule); ``idle_cores``."""

    KEY = "core_id"

    def __init__(self, rows, machine_cores, kernel_name):
        super().__init__(rows)
        self.machine_cores = machine_cores
        self.kernel_name = kernel_name
        active = [r["active_cycles"] for r in self]
        self.max_cycles = max(active, default=0)
        self.min_cycles = min(active, default=0)
        self.spread = (self.max_cycles - self.min_cycles) / self.max_cycles if self.max_cycles else 0.0
        self.imbalanced = self.spread > IMBALANCE_THRESHOLD
        self.idle_cores = machine_cores - len(self)

    def _missing(self, core) -> str:
        return f"core {core} ran no block of kernel {self.kernel_name}"

    def __str__(self):
        used = _pipe_columns(self.rows)
        wide = max([8] + [len(h) for _, h in used])
        count = "instrs" if any(" " in h for _, h in used) else "warp-instr"      # AI core: units
        out = [f"core balance of {self.kernel_name}: {len(self.rows)} of {self.machine_cores} cores ran "
               f"blocks; active cycles max {self.max_cycles}, min {self.min_cycles}, spread "
               f"{100 * self.spread:.1f}%"
               + (" > 10%: imbalanced (msprof Occupancy rule): rebalance the grid or the tiling"
                  if self.imbalanced else " (balanced: within 10%)"),
               f"{'core':>5s} {'blocks':>6s} {count:>10s} {'active':>8s} {'busy':>8s} "
               + " ".join(f"{h:>{wide}s}" for _, h in used)]
        for r in self.rows:
            out.append(f"{r['core_id']:>5d} {r['blocks']:>6d} {r['warp_instructions']:>10d} "
                       f"{r['active_cycles']:>8d} {r['busy_cycles']:>8d} "
                       + " ".join(f"{r.get(k, 0):>{wide}d}" for k, _ in used))
        return "\n".join(out)

    __repr__ = __str__


def compute_core_rows(prof) -> list:
    """One dict per core that ran something (the pipeline_summary.csv columns)."""
    rec = prof.records
    windows = prof.active_windows()
    busy = prof.busy_by_core()
    rows = []
    for core in sorted(windows):
        sel = rec.core == core
        w0, w1 = windows[core]
        row = {"op_name": prof.kernel_name, "core_id": core, "total_cycles": prof.total_cycles,
               "active_start_cycle": w0, "active_end_cycle": w1, "active_cycles": w1 - w0,
               "busy_cycles": busy[core]["any"], "blocks": int(len(np.unique(rec.block[sel]))),
               "warp_instructions": int(sel.sum())}
        if getattr(prof.program, "aicore", False):
            row.update(_unit_pipe_cycles(prof, core))
        else:
            for p in PIPES:
                row[f"{p}_cycles"] = busy[core][p]
        rows.append(row)
    return rows


def _unit_pipe_cycles(prof, core) -> dict:
    """{"aic_mte2_cycles": busy cycles, ...}: an AI core's busy cycles per unit and PTO pipe
    (the union of its operations' start-to-completion intervals), in PTO's order."""
    rec, pipes = prof.records, prof.record_pipes
    out = {}
    for w, unit in enumerate(UNITS):
        on = (rec.core == core) & (rec.warp == w)
        for name in PIPE_ORDER:
            sel = on & (pipes == PIPES.index(name))
            if sel.any():
                key = f"{unit.lower()}_{PTO_PIPE_SHORT[name].lower()}_cycles"
                out[key] = union_cycles(rec.issue[sel], rec.complete[sel])
    return out


_FIXED = ("total_cycles", "active_start_cycle", "active_end_cycle", "active_cycles", "busy_cycles")


def _pipe_columns(rows) -> list:
    """(key, heading) of each pipe column a row has and some row uses, in the rows' order:
    "load" for a lane kernel's load_cycles, "AIC MTE2" for an AI core's aic_mte2_cycles."""
    keys = []
    for r in rows:
        keys += [k for k in r if k.endswith("_cycles") and k not in _FIXED and k not in keys]
    used = [k for k in keys if any(r.get(k, 0) for r in rows)]
    out = []
    for k in used:
        parts = k[:-len("_cycles")].split("_")
        out.append((k, f"{parts[0].upper()} {parts[1].upper()}" if len(parts) == 2 else parts[0]))
    return out


def compute_core_balance(prof) -> CoreBalance:
    return CoreBalance(compute_core_rows(prof), prof.machine.cores, prof.kernel_name)
