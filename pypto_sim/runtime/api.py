"""The host API functions of API.md, bound to the current device of this context."""
from __future__ import annotations

import ast
import linecache

from .. import dtypes
from .device import DEFAULT_BLOCK, current_device
from .names import launch_labels, launch_owned, launch_scope, scope_of, user_frame
import numpy as np


def _named(tensor):
    """``tensor`` named after the variable the caller assigns it to, remembering in which
    function that name was given (runtime/names.py)."""
    frame = user_frame()
    try:
        tensor.alloc.name = _assigned_name(frame)
        tensor.alloc.scope = scope_of(frame)
    finally:
        del frame
    return tensor


def _assigned_name(frame):
    """The variable the call in ``frame`` assigns its result to (`d_a = pto.alloc_tensor(...)`,
    `with pto.Tensor(...) as d_a:`), read from the call site's source line, or None.

    Read from source text, never from frame locals: the runtime must not hold references to
    the user's tensors (reading f_locals would keep them alive in the frame's snapshot).
    """
    if frame is None:
        return None
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    text = line.strip()
    indent = len(line) - len(line.lstrip())
    col = _call_column(frame)
    if text.endswith(":"):
        text += " pass"
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return None
    # `d_a = pto.alloc_tensor(n); d_o = pto.alloc_tensor(m)`: the statement holding the call
    stmt = next((st for st in body if col is not None
                 and st.col_offset <= col - indent < st.end_col_offset), body[0] if body else None)
    if stmt is None:
        return None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and col is not None
            and isinstance(stmt.targets[0], ast.Tuple) and isinstance(stmt.value, ast.Tuple)
            and len(stmt.targets[0].elts) == len(stmt.value.elts)):
        # `d_a, d_b = pto.alloc_tensor(...), pto.alloc_tensor(...)`: the element being evaluated
        for target, value in zip(stmt.targets[0].elts, stmt.value.elts):
            if isinstance(target, ast.Name) and value.col_offset <= col - indent < value.end_col_offset:
                return target.id
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    if isinstance(stmt, ast.With) and len(stmt.items) == 1 and isinstance(stmt.items[0].optional_vars, ast.Name):
        return stmt.items[0].optional_vars.id
    return None


def _call_column(frame):
    """Column of the call being executed in frame (Python 3.11+), or None."""
    try:
        positions = list(frame.f_code.co_positions())
        return positions[frame.f_lasti // 2][2]
    except (AttributeError, IndexError):
        return None


def alloc_tensor(nbytes, dtype=dtypes.float32):
    """Allocate ``nbytes`` of simulated HBM holding ``dtype`` elements; returns a DeviceTensor."""
    return _named(current_device().alloc_tensor(nbytes, dtype))


def to_device(host_array):
    """A new device tensor holding a copy of a host numpy array, of the array's dtype (numba's
    ``cuda.to_device``); a 2-D array gives a 2-D tensor (runtime/memory.py, 2-D views). ``pto.launch(k, args=(d_o, pto.to_device(x)))`` is safe: a tensor only
    the launch references lives until the launch has run. An ml_dtypes fp4 array gives a
    float4_e2m1x2 tensor of half its count (two values a byte)."""
    host = np.ascontiguousarray(host_array)
    per = dtypes.as_dtype(host.dtype).values_per_element   # ml_dtypes' float4_e2m1fn: 2 a byte
    tensor = _named(current_device().alloc_tensor(-(-host.nbytes // per), host.dtype))
    current_device().memcpy_h2d(tensor, host)
    if host.ndim == 2:
        # a[r, c] in kernels, d[i:j, k:l] views (runtime/memory.py, 2-D views)
        tensor.shape = (host.shape[0], host.shape[1] // per)
    return tensor


class Tensor:
    """``with pto.Tensor(nbytes, dtype=...) as d:`` a device tensor that, on exit, waits for the
    queued kernels that use it and then frees it."""

    def __init__(self, nbytes, dtype=dtypes.float32):
        self.tensor = _named(current_device().alloc_tensor(nbytes, dtype))

    def __enter__(self):
        return self.tensor

    def __exit__(self, *exc):
        dev = self.tensor.device
        if dev.pending_for(self.tensor):
            dev.sync()
        if not self.tensor._finalizer.alive:       # freed inside the block: nothing left to do
            return False
        self.tensor.free()
        return False


def memcpy_h2d(dst, host_array):
    """Copy a host numpy array into a device tensor (sizes and dtypes must match, and the
    shape too for a 2-D tensor: pto.to_device of a 2-D array, a 2-D view)."""
    current_device().memcpy_h2d(dst, host_array)


def memcpy_d2h(host_array, src):
    """Copy a device tensor into a host numpy array, after the kernels that write it finish."""
    current_device().memcpy_d2h(host_array, src)


def launch(kernel, grid=(1, 1, 1), block=DEFAULT_BLOCK, args=(), check=None, max_cycles=None,
           mode="timing", timeline=False, max_work=None, values=True):
    """Queue ``kernel`` on the device stream and return at once (a LaunchHandle).

    The kernel is compiled and its arguments checked now; it runs at the next ``sync()``, or
    when a memcpy or ``pto.Tensor`` exit needs its results. ``check``: "racecheck",
    "initcheck", "synccheck", "all" or a tuple of them (default: $PYPTO_CHECK; bounds are
    always checked). ``max_cycles``: stop with SimulationLimitError past this many cycles
    (default $PYPTO_MAX_CYCLES or 20 million). ``mode="functional"``: compute the values only,
    without timing (much faster; docs/performance.md). ``timeline=True``: keep the
    per-instruction records, so that ``result()``'s profile has the timeline, bubbles and
    traces (pto.profile always keeps them); by default a launch keeps per-instruction totals
    only (total cycles, cycle breakdown, hotspots), which is cheaper for large grids.
    ``max_work``: refuse (LaunchError) a launch whose estimated warp-instructions (warps in
    the grid x instructions of the kernel) exceed it (default $PYPTO_MAX_WORK or 10**9, about
    ten minutes of timing simulation): a typo such as grid=(2**31, 1, 1) is an error that
    says how big it is, not hours of silence. ``values=False``: time the tile instructions
    without computing their values (the same cycles and records, faster; tile results in
    device memory are left as they were); a LaunchError when a memory read of the kernel
    could see a skipped value (runtime/skip_values.py).

    A tensor in ``args`` that nothing else references (``args=(d_o, pto.to_device(x))``)
    lives until the launch has run, then is freed; a tensor the program holds and frees or
    ``del``s while the launch is pending is a UseAfterFreeError at the next sync
    (runtime/names.py: launch_owned).
    """
    owned = launch_owned(args)          # before anything here takes a reference to them
    return queue_launch(kernel, grid, block, args, owned, check=check, max_cycles=max_cycles, mode=mode,
                        timeline=timeline, max_work=max_work, values=values)


def queue_launch(kernel, grid, block, args, owned, **options):
    """``launch`` once the temporaries it keeps alive (``owned``) are known: numba's
    ``kernel[grid, block](*args)`` finds them itself (runtime/launcher.py), as its call holds
    each argument by more references than ``launch(args=...)`` does."""
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    names = launch_labels(kernel, args, launch_scope())
    return current_device().launch(kernel, grid, block, args, names=names, owned=owned, **options)


def sync():
    """Wait for every queued kernel (run them all, in order). The first that fails raises its
    error and the ones queued after it are not run (Device.sync)."""
    current_device().sync()


def profile(kernel, grid=(1, 1, 1), block=DEFAULT_BLOCK, args=(), check=None, max_cycles=None,
            mode="timing", max_work=None, values=True):
    """Run ``kernel`` on the simulated NPU now (after anything queued) and return its Profile
    (a FunctionalProfile, without cycles, for mode="functional"). ``check``, ``max_cycles``,
    ``mode``, ``max_work`` and ``values`` as for launch()."""
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    dev = current_device()
    names = launch_labels(kernel, args, launch_scope())
    handle = dev.launch(kernel, grid, block, args, names=names, check=check, max_cycles=max_cycles, mode=mode,
                        timeline=True, max_work=max_work, values=values)
    return handle.result()
