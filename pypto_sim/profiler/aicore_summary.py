"""Per-unit pipeline summary of an AI-core kernel, in the shape of pto-isa Perf-Sim's
``<op>_pipeline_summary.csv`` (docs/costmodel/perf-sim-user-guide.md): one row per AI core
and unit (AIC, AIV0, AIV1) with total, active and busy cycles and the busy cycles of each pipe.

- total_cycles: the kernel's total cycles;
- active_start_cycle / active_end_cycle: the unit's first issue and last completion (Perf-Sim:
  "first and last non-zero-duration event of this unit"; every record here lasts >= 1 cycle);
- active_cycles: active_end_cycle - active_start_cycle;
- busy_cycles: cycles in which any of its pipes (the scalar unit's too) was busy;
- <pipe>_cycles: cycles with an operation of that pipe in flight, from its issue to its
  completion (the union of those intervals, as every busy figure here and in the timeline,
  pipe_utilization and the trace counts it; a scalar instruction is in flight for its latency).
MTE2 is split as Perf-Sim splits it: mte2_aic (GM -> L1) and mte2_aiv (GM -> UB).
"""
from __future__ import annotations

import numpy as np

from ..isa import PIPES, PTO_PIPE_SHORT
from ..errors import ArgumentError
from .tables import RowTable, write_csv
from ..exec.aicore_tiles import UNIT_NAMES as UNITS
from .intervals import union_cycles

# pto-isa@3186c381 docs/costmodel/perf-sim-user-guide.md "pipeline_summary.csv" (the header of
# include/pto/costmodel/perf_sim/reporter_dot_impl.inl)
PERF_SIM_COLUMNS = ("op_name", "core_id", "unit", "total_cycles", "active_start_cycle",
                    "active_end_cycle", "active_cycles", "busy_cycles",
                    "scalar_cycles", "mte2_aic_cycles", "mte2_aiv_cycles", "mte1_cycles", "cube_cycles",
                    "fixp_cycles", "vec_cycles", "mte3_cycles")
SHORT_HEADS = {"active_start_cycle": "start", "active_end_cycle": "end"}
# the PTO name of each pipe column of a unit
PIPE_COLUMNS = {"load": "mte2", "mte1": "mte1", "mma": "cube", "fix": "fixp", "vector": "vec",
                "store": "mte3"}
SHARE_NAMES = {"MTE2": "load", "MTE1": "mte1", "M": "mma", "FIX": "fix", "V": "vector", "MTE3": "store",
               "S": "scalar"}


def summary_rows(prof) -> list:
    """The Perf-Sim rows of a profile of an AI-core kernel (one per core and unit that ran)."""
    rec = prof.records
    pipes = prof.record_pipes
    scalar = PIPES.index("scalar")
    rows = []
    if not len(rec):
        return rows
    for core in np.unique(rec.core).tolist():
        for unit, uname in enumerate(UNITS):
            on = (rec.core == core) & (rec.warp == unit)
            if not on.any():
                continue
            start, end = int(rec.issue[on].min()), int(rec.complete[on].max())
            row = {"op_name": prof.kernel_name, "core_id": int(core), "unit": uname,
                   "total_cycles": int(prof.total_cycles), "active_start_cycle": start,
                   "active_end_cycle": end, "active_cycles": end - start}
            sc = on & (pipes == scalar)
            row["scalar_cycles"] = union_cycles(rec.issue[sc], rec.complete[sc])
            for pipe, col in PIPE_COLUMNS.items():
                sel = on & (pipes == PIPES.index(pipe))
                cycles = union_cycles(rec.issue[sel], rec.complete[sel])
                if col == "mte2":
                    row["mte2_aic_cycles"] = cycles if unit == 0 else 0
                    row["mte2_aiv_cycles"] = cycles if unit else 0
                else:
                    row[f"{col}_cycles"] = cycles
            row["busy_cycles"] = union_cycles(rec.issue[on], rec.complete[on])
            rows.append({k: row[k] for k in PERF_SIM_COLUMNS})
    return rows


# the pipes in the order PTO lists a unit's (PIPE_S, PIPE_MTE2, PIPE_MTE1, PIPE_M, PIPE_FIX,
# PIPE_V, PIPE_MTE3)
PIPE_ORDER = ("scalar", "load", "mte1", "mma", "fix", "vector", "store", "sfu")
PIPE_COLUMNS_PER_PIPE = ("op_name", "core_id", "unit", "pipe", "operations", "active_start_cycle",
                         "active_end_cycle", "busy_cycles")


def pipe_rows(prof) -> list:
    """One row per AI core, unit and PTO pipe (S, MTE2, ...) that ran an operation:
    its operations, first start, last completion and busy cycles (the union of its operations'
    start-to-completion intervals, as ``summary_rows``)."""
    rec, pipes = prof.records, prof.record_pipes
    rows = []
    for core in np.unique(rec.core).tolist():
        for unit, uname in enumerate(UNITS):
            on = (rec.core == core) & (rec.warp == unit)
            for pipe in PIPE_ORDER:
                p = PIPES.index(pipe)
                sel = on & (pipes == p)
                if not sel.any():
                    continue
                busy = union_cycles(rec.issue[sel], rec.complete[sel])
                rows.append({"op_name": prof.kernel_name, "core_id": int(core), "unit": uname,
                             "pipe": PTO_PIPE_SHORT.get(pipe, pipe), "operations": int(sel.sum()),
                             "active_start_cycle": int(rec.issue[sel].min()),
                             "active_end_cycle": int(rec.complete[sel].max()),
                             "busy_cycles": int(busy)})
    return rows


def _table_lines(cols, rows, min_width) -> list:
    """A right-aligned text table of rows' cols under their short headings (SHORT_HEADS)."""
    heads = [SHORT_HEADS.get(c, c.replace("_cycles", "")) for c in cols]
    widths = [max(len(h), min_width) for h in heads]
    lines = ["  ".join(h.rjust(w) for h, w in zip(heads, widths))]
    return lines + ["  ".join(str(r[c]).rjust(w) for c, w in zip(cols, widths)) for r in rows]


class PipeWindows(RowTable):
    """Per AI core, unit and PTO pipe: operations, first start, last completion and busy
    cycles (``pipeline_summary(per="pipe")``); a read-only list of plain row dicts."""

    def to_csv(self, path):
        """Write the rows as CSV; returns the path."""
        return write_csv(path, PIPE_COLUMNS_PER_PIPE, self.rows)

    def __str__(self):
        return "\n".join(_table_lines(PIPE_COLUMNS_PER_PIPE[1:], self.rows, 9))

    __repr__ = __str__


class PipelineSummary(RowTable):
    """Per-unit pipeline summary (Perf-Sim's columns): a read-only list of plain row dicts, one
    per core and unit (``json.dumps`` takes it); printing shows a table with each pipe's share
    of the kernel's cycles, the L2's hits and misses and the cycles transfers waited for
    shared bandwidth (L2 / HBM)."""

    def __init__(self, rows, stats=None):
        super().__init__(rows)
        self.stats = stats

    def to_csv(self, path):
        """Write the rows as CSV in Perf-Sim's column order; returns the path."""
        return write_csv(path, PERF_SIM_COLUMNS, self.rows)

    def __str__(self):
        lines = _table_lines(PERF_SIM_COLUMNS[1:], self.rows, 7)
        if self.stats is not None:
            s = self.stats
            total = s.l2_hits + s.l2_misses
            lines.append(f"L2: {s.l2_hits} hits, {s.l2_misses} misses of {total} line accesses"
                         + (f" ({100 * s.l2_hits / total:.1f}% hits)" if total else ""))
            if s.route_wait:
                lines.append("cycles transfers waited for shared L2/HBM bandwidth beyond their own "
                             "path's: " + ", ".join(f"{k} {v}" for k, v in sorted(s.route_wait.items())))
        return "\n".join(lines)

    __repr__ = __str__


def pipe_shares(prof, unit="AIC") -> dict:
    """{PTO pipe name: busy cycles / total cycles}, averaged over the cores on which ``unit``
    ("AIC", "AIV0", "AIV1" or "AIV" for both) ran."""
    if unit not in ("AIC", "AIV0", "AIV1", "AIV"):
        raise ArgumentError(f"pipe_shares: unit={unit!r} is not a unit of the AI core",
                            hint="give 'AIC', 'AIV0', 'AIV1' or 'AIV' (both vector cores)")
    rows = [r for r in summary_rows(prof) if r["unit"] == unit or (unit == "AIV" and r["unit"] != "AIC")]
    if not rows:
        return {}
    total = sum(r["total_cycles"] for r in rows) or 1
    out = {}
    for name, pipe in SHARE_NAMES.items():
        if pipe == "load":
            busy = sum(r["mte2_aic_cycles"] + r["mte2_aiv_cycles"] for r in rows)
        elif pipe == "scalar":
            busy = sum(r["scalar_cycles"] for r in rows)
        else:
            busy = sum(r[f"{PIPE_COLUMNS[pipe]}_cycles"] for r in rows)
        out[name] = float(busy / total)
    return out
