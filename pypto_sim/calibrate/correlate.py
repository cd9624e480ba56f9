"""Correlation of simulated and measured cycles over a set of kernels, as Accel-Sim's
correlator (util/plotting/plot-correlation.py) reports it."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from .rows import CalibrationError


@dataclass(frozen=True)
class KernelPoint:
    """One kernel: simulated and measured cycles, error (simulated - measured) and its ratio."""

    kernel: str
    simulated: float
    measured: float

    @property
    def error(self) -> float:
        return self.simulated - self.measured

    @property
    def relative_error(self) -> float:
        """(simulated - measured) / measured."""
        return self.error / self.measured if self.measured else math.inf


class Correlation:
    """Agreement of simulated and measured cycles.

    ``r``: Pearson correlation coefficient (Accel-Sim's "Correl"); ``mae``: mean absolute error
    in cycles; ``mape``: mean absolute percentage error, % of measured (Accel-Sim's "MAE" /
    "Err"); ``max_ape``: the largest |relative error|, % of measured; ``nmse``:
    root-mean-square error over the mean measured value (what Accel-Sim prints as NMSE);
    ``agg_err``: sum |error| / sum measured, %; ``n``; ``rows``: one
    :class:`KernelPoint` per kernel. ``save_plot(path)`` draws the scatter plot."""

    def __init__(self, points):
        self.rows = list(points)
        self.n = len(self.rows)
        sim = [p.simulated for p in self.rows]
        hw = [p.measured for p in self.rows]
        n = self.n
        self.mae = sum(abs(p.error) for p in self.rows) / n
        self.mape = 100 * sum(abs(p.relative_error) for p in self.rows) / n
        self.max_ape = 100 * max(abs(p.relative_error) for p in self.rows)
        self.nmse = math.sqrt(sum(p.error ** 2 for p in self.rows) / n) / (sum(hw) / n)
        self.agg_err = 100 * sum(abs(p.error) for p in self.rows) / sum(hw)
        if n >= 2:
            ms, mh = sum(sim) / n, sum(hw) / n
            cov = sum((s - ms) * (h - mh) for s, h in zip(sim, hw))
            vs = sum((s - ms) ** 2 for s in sim)
            vh = sum((h - mh) ** 2 for h in hw)
            self.r = cov / math.sqrt(vs * vh) if vs and vh else (1.0 if sim == hw else math.nan)
        else:
            self.r = math.nan

    def __str__(self):
        lines = [f"{'kernel':32s} {'simulated':>12s} {'measured':>12s} {'error':>9s}"]
        for p in self.rows:
            lines.append(f"{p.kernel:32s} {p.simulated:>12.0f} {p.measured:>12.0f} "
                         f"{100 * p.relative_error:>8.1f}%")
        lines.append(f"n={self.n}  r={self.r:.4f}  MAE={self.mae:.1f} cycles  MAPE={self.mape:.2f}%  "
                     f"NMSE={self.nmse:.4f}  aggregate error={self.agg_err:.2f}%")
        return "\n".join(lines)

    __repr__ = __str__

    def save_plot(self, path, title=None):
        """Write a log-log scatter of measured (x) against simulated (y) cycles with the y = x
        line and the statistics in the legend (matplotlib, Agg backend). Returns the path."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise CalibrationError("save_plot needs matplotlib", hint="pip install pypto-sim[plot]") from None
        fig, ax = plt.subplots(figsize=(5.5, 5.5))
        hw = [p.measured for p in self.rows]
        sim = [p.simulated for p in self.rows]
        lo, hi = min(hw + sim), max(hw + sim)
        ax.plot([lo, hi], [lo, hi], color="tab:red", alpha=0.6, lw=1, label="simulated = measured")
        ax.scatter(hw, sim, s=28, alpha=0.7,
                   label=f"r={self.r:.3f}  MAPE={self.mape:.1f}%  NMSE={self.nmse:.3f}")
        for p in self.rows[:40]:
            ax.annotate(p.kernel, (p.measured, p.simulated), fontsize=6, alpha=0.7,
                        xytext=(3, 3), textcoords="offset points")
        if lo > 0:
            ax.set_xscale("log")
            ax.set_yscale("log")
            lim = (lo / 1.25, hi * 1.25)
        else:
            pad = 0.05 * (hi - lo or 1)
            lim = (lo - pad, hi + pad)
        ax.set_xlim(*lim)
        ax.set_ylim(*lim)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel("measured cycles")
        ax.set_ylabel("simulated cycles")
        ax.set_title(title or f"correlation over {self.n} kernels")
        ax.legend(loc="upper left", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        path = Path(path)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return path


def _as_pairs(values, what):
    if isinstance(values, dict):
        return [(str(k), float(v)) for k, v in values.items()]
    items = list(values)
    out = []
    for i, v in enumerate(items):
        if isinstance(v, (tuple, list)) and len(v) == 2:
            out.append((str(v[0]), float(v[1])))
        else:
            total = getattr(v, "total_cycles", v)
            out.append((getattr(v, "kernel_name", f"kernel{i}"), float(total)))
    return out


def correlate(simulated, measured) -> Correlation:
    """Correlate simulated and measured cycles over a set of kernels. Each argument is a dict
    ``{kernel: cycles}``, a list of (kernel, cycles) pairs, or a list of cycles / Profiles in
    the same order as the other. Dicts are matched by kernel name (kernels in only one of them
    are an error); lists by position. Measured cycles must be positive."""
    sim, hw = _as_pairs(simulated, "simulated"), _as_pairs(measured, "measured")
    if isinstance(simulated, dict) and isinstance(measured, dict):
        missing = sorted(set(simulated) ^ set(measured))
        if missing:
            raise CalibrationError(f"correlate: kernels in only one of simulated / measured: {missing}")
        hw_by = dict(hw)
        points = [KernelPoint(k, s, hw_by[k]) for k, s in sim]
    else:
        if len(sim) != len(hw):
            raise CalibrationError(f"correlate: {len(sim)} simulated values but {len(hw)} measured")
        points = [KernelPoint(k if not k.startswith("kernel") else hk, s, h)
                  for (k, s), (hk, h) in zip(sim, hw)]
    if not points:
        raise CalibrationError("correlate: no kernels")
    bad = [p.kernel for p in points if not p.measured > 0]
    if bad:
        raise CalibrationError(f"correlate: measured cycles must be positive ({bad})")
    return Correlation(points)
