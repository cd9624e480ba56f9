"""``pto.profile_on_npu``: run a kernel on real hardware through a backend plugin.

A backend is registered by a package as an entry point in the group ``pypto_sim.npu_backends``:

    [project.entry-points."pypto_sim.npu_backends"]
    my_board = "my_package.backend:profile"

The entry point loads to a callable ``profile(kernel, grid, block, args)`` (or an object with
such a ``profile`` method) that runs the kernel on the device and returns a Profile-shaped
result: ``total_cycles``, ``cycle_breakdown()`` and ``timeline`` like ``pto.profile``'s.
"""
from __future__ import annotations

from importlib import metadata

from ..arguments import launch_dims
from ..errors import ArgumentError, NPUUnavailableError

GROUP = "pypto_sim.npu_backends"

_HOW = ("To profile in simulation, use pto.profile(kernel, grid=..., block=..., args=...) (the "
        "simulated NPU; its cycles come from the active latency table). To calibrate that table "
        "from hardware measurements: run `pypto-sim microbench --machine ascend910b -o rows.csv` to "
        "write the microbenchmark kernels' rows, time the same kernels on the NPU and put its cycle "
        "counts in the cycles column, then `pypto-sim calibrate rows.csv --base ascend910b -o "
        "my_npu.toml` and pto.use_machine('my_npu.toml') (docs/calibration.md). To run on hardware "
        f"here, install a backend plugin that registers an entry point in the group '{GROUP}'.")


def npu_backends() -> dict:
    """{name: entry point} of the installed hardware backends (group pypto_sim.npu_backends)."""
    try:
        eps = metadata.entry_points(group=GROUP)
    except TypeError:                      # Python < 3.10 style
        eps = metadata.entry_points().get(GROUP, [])
    return {ep.name: ep for ep in eps}


def _checked(kernel, grid, block, args, backend):
    """(grid, block, args) of a profile_on_npu call as three-dimensional tuples and a tuple, or the
    ArgumentError of the first argument it cannot use: kernel, grid, block, args, backend."""
    if not getattr(kernel, "is_pto_kernel", False):
        raise ArgumentError(f"profile_on_npu: kernel={kernel!r} ({type(kernel).__name__}) is not a @pto.kernel "
                            f"function", hint="decorate the function with @pto.kernel and pass it")
    grid, block = launch_dims(grid, "grid", kernel.name), launch_dims(block, "block", kernel.name)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    if len(args) != len(kernel.params):
        raise ArgumentError(f"profile_on_npu: args= has {len(args)} values but kernel '{kernel.name}' takes "
                            f"{len(kernel.params)} ({', '.join(kernel.params)})", kernel=kernel.name,
                            hint="pass args=(...) with one value per parameter")
    if backend is not None and not isinstance(backend, str):
        raise ArgumentError(f"profile_on_npu: backend={backend!r} ({type(backend).__name__}) is not the name "
                            f"of an installed backend", kernel=kernel.name,
                            hint="leave backend= out (the first installed backend) or give its entry-point name")
    return grid, block, args


def _backend(name):
    found = npu_backends()
    if not found:
        asked = f" (backend={name!r} was asked for)" if name is not None else ""
        raise NPUUnavailableError(f"no NPU backend is installed, so profile_on_npu cannot run on "
                                  f"hardware{asked}", hint=_HOW)
    if name is None:
        name = sorted(found)[0]
    if name not in found:
        raise NPUUnavailableError(f"no NPU backend named {name!r}; installed: {', '.join(sorted(found))}",
                                  hint=_HOW)
    try:
        backend = found[name].load()
    except Exception as exc:              # a broken plugin must not look like a missing one
        raise NPUUnavailableError(f"the NPU backend {name!r} failed to load: {exc}", hint=_HOW) from exc
    return getattr(backend, "profile", backend)


def profile_on_npu(kernel, grid=(1, 1, 1), block=(32, 1, 1), args=(), backend=None):
    """Run ``kernel`` on real hardware through a backend plugin and return its profile
    (``total_cycles``, ``cycle_breakdown()``, ``timeline``, as ``pto.profile`` returns).
    ``backend`` picks one of several installed backends by entry-point name (default: the
    first by name). Raises pto.NPUUnavailableError when no backend is installed; the message
    says how to profile in simulation and how to calibrate from hardware measurements. The
    arguments are checked first, as pto.profile checks them: a pto.ArgumentError names the one it
    cannot use, whether or not a backend is installed."""
    grid, block, args = _checked(kernel, grid, block, args, backend)
    run = _backend(backend)
    result = run(kernel, grid=grid, block=block, args=args)
    missing = [a for a in ("total_cycles", "cycle_breakdown", "timeline") if not hasattr(result, a)]
    if missing:
        raise NPUUnavailableError(f"the NPU backend returned {type(result).__name__}, which lacks "
                                  f"{', '.join(missing)}", hint="a backend returns a Profile-shaped "
                                  "result: total_cycles, cycle_breakdown() and timeline")
    return result
