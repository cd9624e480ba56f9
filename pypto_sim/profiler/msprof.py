"""msprof's op_summary of an AI-core kernel: the per-pipe ratios its PipeUtilization metrics
give, under msprof's column names.

msprof (CANN's profiler) writes ``op_summary_*.csv``, one row per operator; with
``--aic-metrics=PipeUtilization`` its AI-core fields are, in this order (Ascend/msprof
``analysis/csrc/application/summary/op_summary_assembler.cpp``, whose unit test checks this
header; hiascend "op_summary (Operator Details)", atlasprofiling_16_0067)::

    Task Duration(us), aicore_time(us), aic_total_cycles, aic_mac_time(us), aic_mac_ratio,
    aic_scalar_time(us), aic_scalar_ratio, aic_mte1_time(us), aic_mte1_ratio,
    aic_mte2_time(us), aic_mte2_ratio, aic_fixpipe_time(us), aic_fixpipe_ratio,
    aic_icache_miss_rate, aiv_time(us), aiv_total_cycles, aiv_vec_time(us), aiv_vec_ratio,
    aiv_scalar_time(us), aiv_scalar_ratio, aiv_mte2_time(us), aiv_mte2_ratio,
    aiv_mte3_time(us), aiv_mte3_ratio, aiv_icache_miss_rate, cube_utilization(%)

and before them ``Op Name``, ``Task Type`` (AI_CORE, AI_VECTOR_CORE, MIX_AIC) and ``Block Dim``.
msprof defines each ratio as "the ratio of cycles taken to execute <pipe> instructions to the
total cycles" (hiascend PipeUtilization, atlasopdev_16_0099). Here, from the profile's records:

- a unit's total cycles (``aic_total_cycles``, ``aiv_total_cycles``): its active window, from
  its first issue to its last completion (``pipeline_summary()``'s ``active_cycles``), the
  cycles it ran the task;
- ``<pipe>_ratio``: the pipe's busy cycles / the unit's total cycles, busy being the union of
  its operations' start-to-completion intervals (``pipeline_summary()``'s ``<pipe>_cycles``;
  a scalar instruction's is its latency). mac is PIPE_M, fixpipe PIPE_FIX, vec PIPE_V;
- ``<...>_time(us)``: cycles at the machine's clock; ``Task Duration(us)``: the kernel's
  total cycles plus the machine's ``task_overhead_cycles`` at the clock (``task_duration_us``:
  msprof's Task Duration also holds scheduling the task to the accelerator and its response
  end, which the machine table gives as measured on the device);
- the kernel total row (msprof's one row per operator): cycles summed over the units of a
  side, times averaged per unit (``aicore_time(us)`` = summed ``aic_total_cycles`` / AIC units
  / clock, as msprof's aicore_time is per core), ratios = summed busy / summed total cycles.

A row is one AI core's unit that ran an operation on one of its pipes (the vector units of a
cube kernel do not run: they have none), or, in a kernel of scalar code alone, one that ran
scalar instructions; ``core_id`` and ``unit`` (not msprof's)
name it, and the other side's fields are None (N/A in the CSV, as msprof writes them). Not
modelled, so left out: ``aic_icache_miss_rate``, ``aiv_icache_miss_rate`` (no instruction
cache) and ``cube_utilization(%)``.
"""
from __future__ import annotations

from .aicore_summary import summary_rows
from .tables import RowTable, write_csv

# (msprof's pipe name, pipeline_summary's column) of each side
AIC_PIPES = (("mac", "cube_cycles"), ("scalar", "scalar_cycles"), ("mte1", "mte1_cycles"),
             ("mte2", "mte2_aic_cycles"), ("fixpipe", "fixp_cycles"))
AIV_PIPES = (("vec", "vec_cycles"), ("scalar", "scalar_cycles"), ("mte2", "mte2_aiv_cycles"),
             ("mte3", "mte3_cycles"))
SIDES = {"aic": ("aicore_time(us)", AIC_PIPES), "aiv": ("aiv_time(us)", AIV_PIPES)}


def side_columns(side) -> tuple:
    """msprof's columns of one side ("aic" or "aiv"), in its order."""
    time_col, pipes = SIDES[side]
    cols = [time_col, f"{side}_total_cycles"]
    for name, _ in pipes:
        cols += [f"{side}_{name}_time(us)", f"{side}_{name}_ratio"]
    return tuple(cols)


OP_SUMMARY_COLUMNS = (("Op Name", "Task Type", "Task Duration(us)", "Block Dim", "core_id", "unit")
                      + side_columns("aic") + side_columns("aiv"))


def _side_values(side, rows, mhz) -> dict:
    """The fields of one side from pipeline_summary rows of its units (None if there are
    none): cycles summed, times per unit, ratios of the sums."""
    cols = side_columns(side)
    if not rows:
        return dict.fromkeys(cols)
    total = sum(r["active_cycles"] for r in rows)
    n = len(rows)
    out = {cols[0]: total / n / mhz, cols[1]: total}
    for name, col in SIDES[side][1]:
        busy = sum(r[col] for r in rows)
        out[f"{side}_{name}_time(us)"] = busy / n / mhz
        out[f"{side}_{name}_ratio"] = busy / total if total else 0.0
    return out


def task_duration_us(prof) -> float:
    """msprof's Task Duration of an AI-core kernel's profile, in microseconds: its total cycles
    (the last unit's end) plus the machine's task_overhead_cycles (the task's dispatch and
    response, outside the cores), at the machine's clock."""
    m = prof.machine
    return (prof.total_cycles + m.task_overhead_cycles) / (m.clock_ghz * 1e3)


def _ran_a_pipe(row) -> bool:
    """True when a unit's pipeline_summary row shows an operation on one of its pipes."""
    return any(row[col] for _, col in AIC_PIPES + AIV_PIPES if col != "scalar_cycles")


def op_summary_rows(prof) -> list:
    """The op_summary rows of a profile of an AI-core kernel (module docstring)."""
    mhz = prof.machine.clock_ghz * 1e3
    ran = summary_rows(prof)
    # the units that ran pipe work; a kernel of scalar code alone ran none, and its units'
    # scalar rows are then its only figures (msprof gives their time and scalar ratio)
    units = [r for r in ran if _ran_a_pipe(r)] or ran
    aic = [r for r in units if r["unit"] == "AIC"]
    aiv = [r for r in units if r["unit"] != "AIC"]
    # the kind of task: by the units that ran pipe work, else by the units the kernel has code
    # for (a cube-only kernel with no pipe work was labelled AI_VECTOR_CORE)
    entries = tuple(getattr(prof.program, "unit_entry", ()))
    cube = bool(aic) or (not units and len(entries) > 0 and entries[0] >= 0)
    vector = bool(aiv) or (not units and any(e >= 0 for e in entries[1:]))
    task_type = "MIX_AIC" if cube and vector else ("AI_CORE" if cube else "AI_VECTOR_CORE")
    head = {"Op Name": prof.kernel_name, "Task Type": task_type,
            "Block Dim": int(prof.grid[0] * prof.grid[1] * prof.grid[2]),
            "Task Duration(us)": task_duration_us(prof)}
    rows = []
    for r in units:
        side = "aic" if r["unit"] == "AIC" else "aiv"
        other = "aiv" if side == "aic" else "aic"
        rows.append({**head, "core_id": r["core_id"], "unit": r["unit"],
                     **_side_values(side, [r], mhz), **_side_values(other, [], mhz)})
    rows.append({**head, "core_id": None, "unit": "total", **_side_values("aic", aic, mhz),
                 **_side_values("aiv", aiv, mhz)})
    return [{c: row[c] for c in OP_SUMMARY_COLUMNS} for row in rows]


class OpSummary(RowTable):
    """msprof's op_summary of one launch (module docstring): a read-only list of plain row
    dicts, one per AI core and unit that ran, then the kernel total row (``unit`` "total");
    ``to_csv(path)`` writes msprof's column names, ``to_pandas()`` gives a DataFrame, printing
    shows the ratios per unit."""

    WHAT = "op_summary row"

    @classmethod
    def of(cls, prof) -> "OpSummary":
        table = cls(op_summary_rows(prof))
        table.kernel_name = prof.kernel_name
        table.total_cycles = int(prof.total_cycles)
        table.clock_ghz = prof.machine.clock_ghz
        table.task_overhead_cycles = int(prof.machine.task_overhead_cycles)
        return table

    @property
    def total(self) -> dict:
        """The kernel total row."""
        return list.__getitem__(self, -1)

    def to_csv(self, path):
        """Write the rows as CSV with msprof's column names (None as N/A); returns the path."""
        return write_csv(path, OP_SUMMARY_COLUMNS, self.rows)

    def __str__(self):
        t = self.total
        lines = [f"op_summary of {t['Op Name']}: {t['Task Type']}, block dim {t['Block Dim']}, "
                 f"task duration {t['Task Duration(us)']:.3f} us "
                 f"({self.total_cycles} cycles + {self.task_overhead_cycles} of dispatch and response, "
                 f"at {self.clock_ghz} GHz)"]
        names = ("mac", "scalar", "mte1", "mte2", "fixpipe", "vec", "mte3")
        lines.append(f"{'core':>5s} {'unit':>5s} {'time(us)':>9s} {'cycles':>8s} "
                     + " ".join(f"{n:>7s}" for n in names))
        for r in self.rows:
            for side in ("aic", "aiv"):
                time_col = SIDES[side][0]
                if r[time_col] is None:
                    continue
                core = "all" if r["core_id"] is None else str(r["core_id"])
                unit = side.upper() if r["unit"] == "total" else r["unit"]
                cells = [f"{r[f'{side}_{n}_ratio']:>7.3f}" if f"{side}_{n}_ratio" in r else f"{'-':>7s}"
                         for n in names]
                lines.append(f"{core:>5s} {unit:>5s} {r[time_col]:>9.3f} "
                             f"{r[f'{side}_total_cycles']:>8d} " + " ".join(cells))
        return "\n".join(lines)

    __repr__ = __str__
