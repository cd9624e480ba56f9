"""numba-cuda's launch forms: ``kernel[grid, block](*args)`` and ``kernel.forall(n)(*args)``.

``pto.kernel`` makes a :class:`LaunchableKernel`, a frontend Kernel with these two forms (the
frontend does not import the runtime, so they live here).

- ``kernel[grid, block]`` is a launch configuration; calling it launches the kernel with the
  arguments, as ``pto.launch(kernel, grid=grid, block=block, args=args)`` does. grid and block
  are ints or 1- to 3-tuples.
- ``kernel.forall(n, tpb=0)`` is the configuration covering n lanes (numba's ``forall``):
  ``tpb`` lanes per block (0: 256, or n rounded up to a whole warp when that is fewer) and
  ``ceil(n / tpb)`` blocks. The kernel guards ``i < n`` itself, as in numba. ``forall(0)``
  launches nothing; a negative n is a ValueError.
- As in numba, a host numpy array argument is copied to a device tensor (named after the
  kernel's parameter), the launch runs at once, and the array gets the tensor's contents back
  when it has run. With device tensors only, the launch is queued and returns at once.
"""
from __future__ import annotations

import numpy as np

import functools

from ..errors import ArgumentError
from ..frontend.kernel import Kernel
from .api import launch, queue_launch
from .device import current_device
from .names import launch_owned

DEFAULT_TPB = 256        # forall's lanes per block when tpb=0: 8 warps


class LaunchConfig:
    """A kernel with its grid and block: call it with the kernel's arguments to launch."""

    def __init__(self, kernel, grid, block):
        self.kernel, self.grid, self.block = kernel, grid, block

    def __call__(self, *args):
        """Launch; returns the LaunchHandle (None for a forall of no lanes)."""
        if self.grid is None:
            return None
        if not any(isinstance(a, np.ndarray) for a in args):
            # a temporary (kernel[g, b](pto.to_device(x))) lives until the launch has run
            owned = launch_owned(args, held=_star_call_refs())
            return queue_launch(self.kernel, self.grid, self.block, args, owned)
        params = list(self.kernel.params) + [f"argument {i}" for i in range(len(self.kernel.params), len(args))]
        device = tuple(_on_device(a, p) if isinstance(a, np.ndarray) else a for a, p in zip(args, params))
        handle = launch(self.kernel, grid=self.grid, block=self.block, args=device)
        handle.result()
        for host, tensor, param in zip(args, device, params):
            if not isinstance(host, np.ndarray):
                continue
            if host.flags.writeable:
                current_device().memcpy_d2h(host, tensor)
                continue
            result = np.empty_like(host)               # a read-only array: did the kernel write it?
            current_device().memcpy_d2h(result, tensor)
            if result.tobytes() != np.ascontiguousarray(host).tobytes():
                raise ArgumentError(
                    f"{self.kernel.name}[...]: the kernel wrote '{param}', but the numpy array passed for it is "
                    "read-only (its writeable flag is off), so its results could not be copied back",
                    kernel=self.kernel.name,
                    hint="pass a writeable array (host.copy()), or a device tensor (pto.to_device(host)) and "
                         "read it with .numpy()")
        return handle

    def __repr__(self):
        return f"<{self.kernel.name}[grid={self.grid}, block={self.block}]>"


class _TensorProbe:
    """Stands in for a device tensor while _star_call_refs counts references."""
    is_device_tensor = True
    base = None


class _CallProbe:
    """Called as LaunchConfig is (``obj(*args)``): the smallest ``held`` that makes
    launch_owned see a temporary argument as one."""

    def __call__(self, *args):
        return next((held for held in range(8) if launch_owned(args, held)), 0)


@functools.lru_cache(maxsize=None)
def _star_call_refs() -> int:
    """The references ``kernel[grid, block](...)``'s call adds to each argument beyond
    ``launch(args=...)``'s (the caller's and the call machinery's; the interpreter decides how
    many), measured once on a temporary passed the same way."""
    return _CallProbe()(_TensorProbe())


def _on_device(host, name):
    """A device tensor holding a copy of host, named after the parameter it is passed as."""
    if host.size == 0:
        raise ArgumentError(f"the numpy array passed as '{name}' is empty (shape {host.shape}); a device "
                            "tensor holds at least one element", hint="pass an array of at least one element")
    host_c = np.ascontiguousarray(host)
    tensor = current_device().alloc_tensor(host_c.nbytes, host_c.dtype, name)
    current_device().memcpy_h2d(tensor, host_c)
    if host_c.ndim == 2:
        tensor.shape = host_c.shape
    return tensor


class LaunchableKernel(Kernel):
    """A @pto.kernel with numba's launch forms (module docstring)."""

    def __getitem__(self, config):
        """``kernel[grid, block]``: a LaunchConfig."""
        if not isinstance(config, tuple) or len(config) != 2:
            raise ArgumentError(f"{self.name}[...] takes [grid, block], for example {self.name}[4, 128]")
        return LaunchConfig(self, config[0], config[1])

    def forall(self, ntasks, tpb=0):
        """The launch configuration covering ``ntasks`` lanes: ``tpb`` lanes per block (0: 256,
        or ntasks rounded up to a whole warp when that is fewer), ceil(ntasks / tpb) blocks."""
        if isinstance(ntasks, bool) or not isinstance(ntasks, (int, np.integer)):
            raise ArgumentError(f"forall(ntasks): the number of lanes must be a whole number, not "
                                f"{type(ntasks).__name__} {ntasks!r}", hint="e.g. kernel.forall(n)(...)")
        if ntasks < 0:
            raise ArgumentError(f"Can't create ForAll with negative task count: {ntasks}")
        if tpb < 0:
            raise ArgumentError(f"forall(tpb={tpb}): lanes per block must be positive (or 0 to choose)")
        if ntasks == 0:
            return LaunchConfig(self, None, None)
        block = tpb or min(DEFAULT_TPB, -(-ntasks // 32) * 32)
        return LaunchConfig(self, (-(-ntasks // block),), (block,))


def kernel(fn=None, *, sync="auto", aiv_ratio=2):
    """Decorator: compile a Python function into a PTO kernel (see docs/quickstart.md).

    ``@pto.kernel`` or ``@pto.kernel(sync="manual")``: tile kernels on the real AI core order
    their pipes by data by default (``"auto"``, as PTO-Auto); with ``"manual"`` only
    set_flag / wait_flag (and pipe_barrier) order them, as on hardware (docs/aicore.md).
    Besides pto.launch, the kernel launches as numba's do: ``kernel[grid, block](*args)`` and
    ``kernel.forall(n)(*args)`` (runtime/launcher.py). ``aiv_ratio=1`` runs the vector sections
    on AIV0 alone (CANN's KERNEL_TYPE_MIX_AIC_1_1: the AIC's cross-core flags pair with it only)."""
    if fn is None:
        return lambda f: LaunchableKernel(f, sync=sync, aiv_ratio=aiv_ratio)
    return LaunchableKernel(fn, sync=sync, aiv_ratio=aiv_ratio)
