"""The host API functions of API.md, bound to the current device of this context."""
from __future__ import annotations

import inspect

from .. import dtypes
from .device import current_device


def _caller_names(values):
    """Variable names the caller used for these values (for messages and the debugger)."""
    frame = inspect.currentframe()
    try:
        while frame is not None and frame.f_globals.get("__name__", "").startswith("pypto_sim"):
            frame = frame.f_back
        if frame is None:
            return tuple(None for _ in values)
        local = frame.f_locals
        out = []
        for v in values:
            found = None
            if getattr(v, "is_device_tensor", False):
                for k, obj in local.items():
                    if obj is v:
                        found = k
                        break
            out.append(found)
        return tuple(out)
    finally:
        del frame


def alloc_tensor(nbytes, dtype=dtypes.float32):
    """Allocate ``nbytes`` of simulated HBM holding ``dtype`` elements; returns a DeviceTensor."""
    return current_device().alloc_tensor(nbytes, dtype)


class Tensor:
    """``with pto.Tensor(nbytes, dtype=...) as d:`` a device tensor that, on exit, waits for the
    queued kernels that use it and then frees it."""

    def __init__(self, nbytes, dtype=dtypes.float32):
        self.tensor = current_device().alloc_tensor(nbytes, dtype)

    def __enter__(self):
        return self.tensor

    def __exit__(self, *exc):
        dev = self.tensor.device
        if dev.pending_for(self.tensor):
            dev.sync()
        self.tensor.free()
        return False


def memcpy_h2d(dst, host_array):
    """Copy a host numpy array into a device tensor (sizes and dtypes must match)."""
    current_device().memcpy_h2d(dst, host_array)


def memcpy_d2h(host_array, src):
    """Copy a device tensor into a host numpy array, after the kernels that write it finish."""
    current_device().memcpy_d2h(host_array, src)


def launch(kernel, grid=(1, 1, 1), block=(32, 1, 1), args=()):
    """Queue ``kernel`` on the device stream and return at once (a LaunchHandle).

    The kernel is compiled and its arguments checked now; it runs at the next ``sync()``, or
    when a memcpy or ``pto.Tensor`` exit needs its results.
    """
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    return current_device().launch(kernel, grid, block, args, names=_caller_names(args))


def sync():
    """Wait for every queued kernel (run them all, in order)."""
    current_device().sync()


def profile(kernel, grid=(1, 1, 1), block=(32, 1, 1), args=()):
    """Run ``kernel`` on the simulated NPU now (after anything queued) and return its Profile."""
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    dev = current_device()
    handle = dev.launch(kernel, grid, block, args, names=_caller_names(args))
    return handle.result()
