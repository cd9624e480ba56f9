"""A plot of a sweep: one metric over one parameter (a line per value of a second one)."""
from __future__ import annotations


def plot_sweep(frame, metric="total_cycles", x=None, hue=None, path=None, ax=None):
    """Draw ``metric`` against column ``x`` (e.g. "param.tile_k"), one line per value of
    ``hue``; save to ``path`` if given. Needs matplotlib (pip install "pypto-sim[plot]").
    Failed points (an error) are left out. Returns the matplotlib Axes."""
    try:
        import matplotlib
        if path is not None and ax is None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError('plot_sweep needs matplotlib: pip install "pypto-sim[plot]"') from None
    if x is None:
        params = [c for c in frame.columns if c.startswith(("param.", "override."))]
        if not params:
            raise ValueError("the sweep has no parameter column to plot against")
        x = params[0]
    ok = frame[frame["error"].isna()] if "error" in frame else frame
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    groups = [(None, ok)] if hue is None else list(ok.groupby(hue))
    for value, part in groups:
        part = part.sort_values(x)
        ax.plot(part[x], part[metric], marker="o", label=None if hue is None else f"{hue} = {value}")
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    if hue is not None:
        ax.legend()
    ax.grid(True, alpha=0.3)
    if path is not None:
        ax.figure.tight_layout()
        ax.figure.savefig(path, dpi=100)
    return ax
