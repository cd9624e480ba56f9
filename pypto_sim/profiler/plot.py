"""Plots of a launch: a pipeline Gantt chart, per-pipe utilisation and idle time by cause.

matplotlib is an optional extra (``pip install "pypto-sim[plot]"``). The figure is drawn with
matplotlib's object API and the Agg canvas, never pyplot, so it needs no display and leaves
the caller's matplotlib backend and figures alone.
"""
from __future__ import annotations

import math
import numbers
from pathlib import Path

import numpy as np

from ..arguments import whole_number
from ..errors import ArgumentError, ProfileError
from ..isa import PIPES, PTO_PIPE_SHORT
from .aicore_bubbles import PTO_ORDER, aicore_active_cycles
from .aicore_summary import PIPE_ORDER, UNITS
from ..output_files import output_path, write_file
from .intervals import merge_intervals

PIPE_COLORS = {"scalar": "#7f7f7f", "vector": "#2ca02c", "sfu": "#9467bd", "load": "#1f77b4",
               "store": "#ff7f0e", "mma": "#d62728", "mte1": "#17becf", "fix": "#8c564b"}


def _matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("save_plot needs matplotlib, an optional extra: "
                          "pip install pypto-sim[plot]  (or: pip install matplotlib)") from None
    return Figure, FigureCanvasAgg


def image_path(path, what, error, formats) -> tuple:
    """(the Path written, its format) for an image at ``path``: the format is the extension's
    (one of ``formats``, matplotlib's; else ArgumentError naming them); a path without one gets
    ".png", as matplotlib's savefig does. Checked with files.output_path (a directory is
    ``error``) before anything is drawn or written."""
    target = output_path(path, what, error, example="plot.png")
    if not target.suffix:
        target = output_path(target.with_name(target.name + ".png"), what, error, example="plot.png")
    fmt = target.suffix[1:].lower()
    if fmt not in formats:
        raise ArgumentError(f"{what}: cannot write a {target.suffix!r} image ({path}); the formats "
                            f"are {', '.join(sorted(formats))}",
                            hint=f"give a path ending in one of them, e.g. {target.with_suffix('.png')}")
    return target, fmt


def plot_path(path) -> Path:
    """The Path save_plot(prof, path) would write, refused (ArgumentError, ProfileError) as
    save_plot refuses it, without a profile: for a caller that checks its paths up front."""
    _Figure, FigureCanvasAgg = _matplotlib()
    return image_path(path, "save_plot", ProfileError, FigureCanvasAgg.get_supported_filetypes())[0]


def save_plot(prof, path, max_cores=8, dpi=100) -> Path:
    """Write a PNG (or any format matplotlib knows by the extension; none: ".png" is added)
    with three panels: the Gantt chart of busy intervals per core x pipe (the first
    ``max_cores`` cores that ran blocks), the utilisation of each pipe over the cores' active
    windows, and the pipes' idle cycles by cause (the largest causes of the bubble report,
    leaving out idle at end). Returns the path written. The arguments, the path and the
    profile are checked before anything is drawn; the image is written beside the target and
    then moved onto it (pypto_sim/output_files.py), so a failure leaves a file already there as it was."""
    Figure, FigureCanvasAgg = _matplotlib()
    max_cores = whole_number(max_cores, "save_plot: max_cores", least=1)
    if isinstance(dpi, bool) or not isinstance(dpi, numbers.Real) or not (dpi > 0 and math.isfinite(dpi)):
        raise ArgumentError(f"save_plot: dpi must be a number of dots per inch above 0, not {dpi!r}",
                            hint="e.g. dpi=100 (the default) or 200")
    path, fmt = image_path(path, "save_plot", ProfileError, FigureCanvasAgg.get_supported_filetypes())
    windows = prof.active_windows()
    cores = sorted(windows)[:max_cores]
    rows = []                       # (label, colour, busy intervals) with work, top to bottom
    if getattr(prof.program, "aicore", False):
        rows = _unit_rows(prof, cores)
    else:
        for c in cores:
            for p in PIPES:
                spans = prof.busy_intervals(p, core=c)
                if spans:
                    rows.append((f"core {c} {p}", PIPE_COLORS[p], spans))
    height = 3.2 + 0.28 * max(len(rows), 4)
    fig = Figure(figsize=(12, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(2, 2, height_ratios=[max(len(rows), 4) * 0.28, 2.6],
                            width_ratios=[1, 1.5])
    gantt = fig.add_subplot(grid[0, :])
    for y, (_label, colour, busy) in enumerate(rows):
        gantt.broken_barh([(s, e - s) for s, e in busy], (y - 0.4, 0.8), facecolors=colour)
    gantt.set_yticks(range(len(rows)))
    gantt.set_yticklabels([label for label, _c, _b in rows], fontsize=8)
    gantt.invert_yaxis()
    gantt.set_xlim(0, max(prof.total_cycles, 1))
    gantt.set_xlabel("cycle")
    more = len(windows) - len(cores)
    gantt.set_title(f"{prof.kernel_name} on {prof.machine.name}: {prof.total_cycles} cycles, "
                    f"grid={tuple(prof.grid)} "
                    + ("one AI core a block" if getattr(prof.program, "aicore", False)
                       else f"block={tuple(prof.block)}")
                    + (f" (first {len(cores)} of {len(windows)} cores)" if more > 0 else ""),
                    fontsize=10)
    gantt.grid(axis="x", alpha=0.3)

    bars = fig.add_subplot(grid[1, 0])
    if getattr(prof.program, "aicore", False):
        names, values = _unit_utilisation(prof)
        colours = [_pipe_color(n) for n in names]
    else:
        util = prof.pipe_utilization(window="active")
        names, values = list(PIPES), [100 * util[p] for p in PIPES]
        colours = [PIPE_COLORS[p] for p in PIPES]
    bars.bar(names, values, color=colours)
    for x, v in enumerate(values):
        bars.text(x, v + 1, f"{v:.0f}%", ha="center", fontsize=8)
    bars.set_ylim(0, 115)
    bars.tick_params(axis="x", labelsize=8, labelrotation=30)
    bars.set_ylabel("% of active cycles")
    bars.set_title("pipe utilisation (busy / active window)", fontsize=10)

    causes = fig.add_subplot(grid[1, 1])
    top = sorted((r for r in prof.bubbles().by_cause() if r[2] not in ("end", "idle")),
                 key=lambda r: -r[3])[:8]
    labels = [f"{p}: {text}" for p, text, _k, _c, _g in top]
    causes.barh(range(len(top)), [r[3] for r in top], color=[_pipe_color(r[0]) for r in top])
    causes.set_yticks(range(len(top)))
    causes.set_yticklabels([t if len(t) <= 52 else t[:49] + "..." for t in labels], fontsize=7)
    causes.invert_yaxis()
    causes.set_xlabel("idle cycles (all cores)")
    causes.set_title("idle cycles by cause (largest, without idle at end)", fontsize=10)

    return write_file(path, lambda f: fig.savefig(f, format=fmt, dpi=dpi), "save_plot", binary=True)


def _pipe_color(label):
    """The colour of a bubble row's pipe: a PIPES name, or an AI-core "unit PTO-pipe" label."""
    if label in PIPE_COLORS:
        return PIPE_COLORS[label]
    short = label.split(" ")[-1]
    return PIPE_COLORS[next(p for p, name in PTO_PIPE_SHORT.items() if name == short)]


def _unit_rows(prof, cores) -> list:
    """(label "core c AIC MTE2", colour, busy intervals) of each unit and PTO pipe of an
    AI-core kernel that had work on cores, in PTO's pipe order."""
    rec, pipes = prof.records, prof.record_pipes
    names = prof.pipe_names
    rows = []
    for c in cores:
        for w, unit in enumerate(UNITS):
            on = (rec.core == c) & (rec.warp == w)
            for p in PIPE_ORDER:
                sel = on & (pipes == PIPES.index(p))
                if np.any(sel):
                    rows.append((f"core {c} {unit} {names[PIPES.index(p)]}", PIPE_COLORS[p],
                                 merge_intervals(rec.issue[sel], rec.complete[sel])))
    return rows


def _unit_utilisation(prof):
    """(["AIC MTE2", ...], [% busy]) of each unit's PTO pipes (not S): busy cycles over
    the active windows of the cores on which the unit used the pipe, summed over the cores."""
    busy: dict = {}
    for r in prof.pipeline_summary(per="pipe"):
        if r["pipe"] != "S":
            label = f"{r['unit']} {r['pipe']}"
            busy[label] = busy.get(label, 0) + r["busy_cycles"]
    active = aicore_active_cycles(prof)
    names = sorted(busy, key=lambda k: (UNITS.index(k.split()[0]), PTO_ORDER.index(k.split()[1])))
    return names, [100 * busy[n] / max(active.get(n, 0), 1) for n in names]
