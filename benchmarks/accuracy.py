"""The statistics of benchmarks/published.py (issue 24): simulated against published kernel times,
per table and overall, and another simulator's figures beside ours on the rows it covers.

Pure arithmetic on numbers already measured (nothing here simulates). The signed error, MAPE,
max |error| and Pearson r are pypto_sim.calibrate.correlate's; this module adds the per-pipe
busy-share differences in percentage points and the comparison with a second simulator on the
rows both cover.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from pypto_sim.calibrate.correlate import KernelPoint, correlate


@dataclass(frozen=True)
class Row:
    """One published result: its table ("GEMM", "FA"), its name in the table (the size), the
    simulated and published time in us, the busy share of each pipe as {pipe: (simulated %,
    published %)} (empty when nothing was published) and another simulator's time in us for
    the same kernel (None where it has no figure)."""

    table: str
    name: str
    simulated_us: float
    published_us: float
    shares: dict = field(default_factory=dict)
    other_us: float | None = None

    @property
    def key(self) -> str:
        """The row's name across tables, e.g. "GEMM 1536"."""
        return f"{self.table} {self.name}"

    @property
    def error(self) -> float:
        """Signed relative error of the simulated time: simulated / published - 1."""
        return KernelPoint(self.key, self.simulated_us, self.published_us).relative_error

    @property
    def other_error(self) -> float | None:
        """The other simulator's signed relative error, or None."""
        if self.other_us is None:
            return None
        return KernelPoint(self.key, self.other_us, self.published_us).relative_error

    @property
    def points(self) -> dict:
        """Per pipe, simulated minus published busy share in percentage points."""
        return {pipe: sim - pub for pipe, (sim, pub) in self.shares.items()}


def _finite(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def summary(rows) -> dict:
    """Statistics of a set of rows (a table, or all of them):

    - ``n``, ``mape`` (%), ``max_abs_error`` (%), ``r`` (Pearson r of simulated against published
      time; None for fewer than two rows or a constant column);
    - ``max_abs_points``: per pipe, the largest |simulated - published| share in points over the
      rows that publish that pipe's share;
    - ``other_rows``: the rows the other simulator covers, with ``mape_common`` (ours) and
      ``other_mape_common`` (its) over exactly those rows (None when it covers none)."""
    rows = list(rows)
    corr = correlate([(r.key, r.simulated_us) for r in rows], [(r.key, r.published_us) for r in rows])
    worst = {}
    for r in rows:
        for pipe, pts in r.points.items():
            worst[pipe] = max(worst.get(pipe, 0.0), abs(pts))
    common = [r for r in rows if r.other_us is not None]
    out = {"n": corr.n, "mape": corr.mape, "max_abs_error": corr.max_ape, "r": _finite(corr.r),
           "max_abs_points": worst, "other_rows": [r.key for r in common],
           "mape_common": None, "other_mape_common": None}
    if common:
        out["mape_common"] = correlate([(r.key, r.simulated_us) for r in common],
                                       [(r.key, r.published_us) for r in common]).mape
        out["other_mape_common"] = correlate([(r.key, r.other_us) for r in common],
                                             [(r.key, r.published_us) for r in common]).mape
    return out


def summaries(rows) -> dict:
    """{table: summary(rows of that table)} in the order tables first appear, then
    "overall": summary(all rows)."""
    rows = list(rows)
    tables = list(dict.fromkeys(r.table for r in rows))
    out = {t: summary([r for r in rows if r.table == t]) for t in tables}
    out["overall"] = summary(rows)
    return out
