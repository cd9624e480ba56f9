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

from ..errors import NPUUnavailableError

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


def _backend(name):
    found = npu_backends()
    if not found:
        raise NPUUnavailableError("no NPU backend is installed, so profile_on_npu cannot run on "
                                  "hardware", hint=_HOW)
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
    says how to profile in simulation and how to calibrate from hardware measurements."""
    run = _backend(backend)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    result = run(kernel, grid=grid, block=block, args=args)
    missing = [a for a in ("total_cycles", "cycle_breakdown", "timeline") if not hasattr(result, a)]
    if missing:
        raise NPUUnavailableError(f"the NPU backend returned {type(result).__name__}, which lacks "
                                  f"{', '.join(missing)}", hint="a backend returns a Profile-shaped "
                                  "result: total_cycles, cycle_breakdown() and timeline")
    return result
