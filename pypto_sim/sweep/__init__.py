"""Design-space sweeps: one simulation per point of a grid of kernel parameters and machine
overrides, serially or on Dask workers, as a table (docs/sweeps.md).

``pto.sweep(factory, params={...}, machine_overrides={...})`` returns a pandas DataFrame
with one row per point. ``factory`` is ``"module:function"``, ``"path/to/file.py:function"``
or a top-level function: called with a point's parameters (in a point runner process, so a
point that hangs or dies is an error row), it returns a :class:`SweepCase`: the kernel, its
grid, block and arguments (device tensors it allocates) and an optional ``check(outputs)``.
"""
from .case import SweepCase
from .plot import plot_sweep
from .points import expand_points
from .run import sweep

__all__ = ["SweepCase", "expand_points", "plot_sweep", "sweep"]
