"""Correlation of simulated and measured cycles over a set of kernels, as Accel-Sim's
correlator (util/plotting/plot-correlation.py) reports it."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..output_files import write_file
from ..profiler.plot import image_path
from .rows import CalibrationError, positive_cycles


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
        line and the statistics in the legend (matplotlib, Agg backend). Returns the path written
        (without an extension: ``path`` + ".png"); a file already there is replaced atomically."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            from matplotlib.backend_bases import FigureCanvasBase
        except ImportError:
            raise CalibrationError("save_plot needs matplotlib", hint="pip install pypto-sim[plot]") from None
        # the path is checked before anything is drawn (a directory is a CalibrationError)
        path, fmt = image_path(path, "Correlation.save_plot", CalibrationError,
                               FigureCanvasBase.get_supported_filetypes())
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
        try:      # written beside the target, then moved onto it: never a half-written image
            return write_file(path, lambda f: fig.savefig(f, format=fmt, dpi=120), "Correlation.save_plot",
                              CalibrationError, binary=True)
        finally:
            plt.close(fig)


def _cycles(value, kernel, what) -> float:
    """A kernel's cycles as a float (rows.positive_cycles), the error naming the kernel and
    which side (simulated / measured)."""
    return positive_cycles(value, f"correlate: {what} cycles of kernel {kernel!r}", _HINT)


_HINT = ("give each kernel's total cycles (or a Profile): a finite number > 0; leave out a "
         "kernel that was not measured or did not run")


def _as_pairs(values, what):
    if isinstance(values, dict):
        return [(str(k), _cycles(v, k, what)) for k, v in values.items()]
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise CalibrationError(f"correlate: {what} must be a dict or a list, not {type(values).__name__}",
                               hint="pass {kernel: cycles}, a list of (kernel, cycles) pairs, or a list "
                                    "of cycles / Profiles")
    items = list(values)
    out = []
    for i, v in enumerate(items):
        if isinstance(v, (tuple, list)) and len(v) == 2:
            out.append((str(v[0]), _cycles(getattr(v[1], "total_cycles", v[1]), v[0], what)))
        else:
            total = getattr(v, "total_cycles", v)
            name = getattr(v, "kernel_name", f"kernel{i}")
            out.append((name, _cycles(total, name, what)))
    return out


def correlate(simulated, measured) -> Correlation:
    """Correlate simulated and measured cycles over a set of kernels. Each argument is a dict
    ``{kernel: cycles}``, a list of (kernel, cycles) pairs, or a list of cycles / Profiles in
    the same order as the other. Dicts are matched by kernel name (kernels in only one of them
    are an error); lists by position. Cycles, simulated and measured, must be finite numbers
    > 0 (NaN, inf, 0, negative or non-numbers are a CalibrationError naming the kernel)."""
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
    return Correlation(points)
