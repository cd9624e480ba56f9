"""Run one sweep point: build its case, simulate it on its own device and machine, and
return its row. Runs in the driver (serial engine) or in a Dask worker process."""
from __future__ import annotations

import contextvars
import importlib
import time
import traceback

import numpy as np

METRIC_COLUMNS = ("total_cycles", "simulated_us", "warp_instructions", "check", "wall_s", "error")


def resolve_factory(factory):
    """'module:function' -> the function (workers import it; kernels do not pickle)."""
    if callable(factory):
        return factory
    module, _, name = str(factory).partition(":")
    if not module or not name:
        raise ValueError(f"factory {factory!r} must be 'module:function'")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def factory_name(factory) -> str:
    """The 'module:function' text of a factory (a string, or a module-level function)."""
    if isinstance(factory, str):
        return factory
    module, qual = getattr(factory, "__module__", None), getattr(factory, "__qualname__", "")
    if not module or "<" in qual or module == "__main__":
        raise ValueError(f"the factory {factory!r} is not importable as 'module:function'; define "
                         "it at module level in an importable module, or pass engine='serial'")
    return f"{module}:{qual}"


def run_point(factory, point: dict, machine_name=None) -> dict:
    """One row: the point's parameters and overrides, its metrics, and ``error`` (None, or the
    exception's text) — a point whose kernel raises is a row, not a lost sweep."""
    ctx = contextvars.copy_context()
    return ctx.run(_run_in_context, factory, point, machine_name)


def _run_in_context(factory, point, machine_name):
    from ..runtime import device as device_mod
    from ..timing import machine as machine_mod
    row = {f"param.{k}": v for k, v in point["params"].items()}
    row.update({f"override.{k}": v for k, v in point["overrides"].items()})
    row["key"] = point["key"]
    start = time.perf_counter()
    try:
        base = machine_mod.resolve_machine(machine_name) if machine_name else machine_mod.machine()
        m = base.with_overrides(point["overrides"]) if point["overrides"] else base
        machine_mod._ACTIVE.set(m)
        device_mod._DEVICE.set(device_mod.Device(m))
        case = resolve_factory(factory)(**point["params"])
        import pypto_sim as pto
        prof = pto.launch(case.kernel, grid=case.grid, block=case.block, args=case.args,
                          mode=case.mode).result()
        cycles = getattr(prof, "total_cycles", None)
        row["total_cycles"] = cycles
        row["simulated_us"] = cycles / (m.clock_ghz * 1e3) if cycles is not None else None
        row["warp_instructions"] = int(prof.stats["warp_instructions"])
        if cycles is not None:
            for name, r in prof.cycle_breakdown().items():
                row[f"busy.{name}"] = r["busy_cycles"]
                key = f"pipe_busy.{r['pipe']}"           # summed over the pipe's instructions
                row[key] = row.get(key, 0) + r["busy_cycles"]
        verdict = None
        if case.check is not None:
            outputs = {name: t.numpy() for name, t in case.outputs.items()}
            verdict = bool(case.check(outputs))
        row["check"] = verdict
        row["error"] = None
    except Exception as exc:                      # the point's failure is its row
        row.setdefault("total_cycles", None)
        row["error"] = f"{type(exc).__name__}: {exc}"
        row["traceback"] = traceback.format_exc(limit=4)
    row["wall_s"] = time.perf_counter() - start
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
