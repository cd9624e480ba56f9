"""Run one sweep point: build its case, simulate it on its own device and machine, and
return its row. Runs in a point runner's child process (runner.py), or in the driver itself
for ``engine="serial", timeout=None``."""
from __future__ import annotations

import contextvars
import time
import traceback

import numpy as np
from ..errors import SweepError
from ..runtime.device import reset_device
from ..timing.machine import use_machine
from ..timing.progress import quiet_launches
from ..runtime.api import launch
from .case import SweepCase

# error_kind of a row: why it has an error (None: it has none)
RAISED = "raised"        # the factory, the kernel or the check raised: rerunning gives the same
TIMEOUT = "timeout"      # it ran past the per-point timeout and was stopped
DIED = "died"            # its process died (os._exit, a crash, killed): twice in a row
RERUN_ON_RESUME = (TIMEOUT, DIED)


def base_row(point: dict) -> dict:
    """The columns every row of a point has: param.*, override.*, key and identity."""
    row = {f"param.{k}": v for k, v in point["params"].items()}
    row.update({f"override.{k}": v for k, v in point["overrides"].items()})
    row["key"] = point["key"]
    row["identity"] = point.get("identity")
    return row


def error_row(point: dict, kind: str, message: str, wall_s: float) -> dict:
    """A row for a point that produced no result: ``error`` says why, ``error_kind`` is
    TIMEOUT or DIED (a resume runs it again) or RAISED."""
    row = base_row(point)
    row.update(total_cycles=None, check=None, wall_s=wall_s, error=message, error_kind=kind)
    return row


def run_point(factory, point: dict, machine, label=None) -> dict:
    """One row: the point's parameters and overrides, its metrics, and ``error`` (None, or the
    exception's text): a point whose factory, kernel or check raises, or whose factory returns
    something other than a SweepCase, is a row, not a lost sweep. ``factory`` is the function;
    ``machine`` the base Machine; ``label`` how errors name the factory ('file.py:function')."""
    ctx = contextvars.copy_context()
    if label is None:
        label = f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', factory)}"
    return ctx.run(_run_in_context, factory, point, machine, label)


def checked_case(case, label: str, params: dict) -> SweepCase:
    """The factory's result if it is a SweepCase whose outputs and check can be used, else a
    SweepError naming the factory, the point's parameters and what it returned."""
    where = f"the factory {label}, called with {params}"
    hint = ("return pto.SweepCase(kernel, grid, block, args, outputs={name: tensor}, "
            "check=callable) from it (docs/sweeps.md)")
    if not isinstance(case, SweepCase):
        shown = repr(case)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise SweepError(f"{where}, returned {shown} ({type(case).__name__}), not a pto.SweepCase",
                         hint=hint)
    if not isinstance(case.outputs, dict):
        raise SweepError(f"{where}, returned a SweepCase whose outputs is a "
                         f"{type(case.outputs).__name__}, not a dict {{name: device tensor}}", hint=hint)
    if case.check is not None and not callable(case.check):
        raise SweepError(f"{where}, returned a SweepCase whose check {case.check!r} is not "
                         "callable (nor None)", hint=hint)
    return case


def _run_in_context(factory, point, base, label):
    quiet_launches()            # the sweep's own line reports progress
    row = base_row(point)
    start = time.perf_counter()
    try:
        m = base.with_overrides(point["overrides"]) if point["overrides"] else base
        use_machine(m)          # in this point's copied context only
        reset_device(m)
        case = checked_case(factory(**point["params"]), label, point["params"])
        prof = launch(case.kernel, grid=case.grid, block=case.block, args=case.args,
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
        row["error_kind"] = None
    except Exception as exc:                      # the point's failure is its row
        row.setdefault("total_cycles", None)
        row["error"] = f"{type(exc).__name__}: {exc}"
        row["error_kind"] = RAISED
        row["traceback"] = traceback.format_exc(limit=4)
    row["wall_s"] = time.perf_counter() - start
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
