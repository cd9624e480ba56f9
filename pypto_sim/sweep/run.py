"""pto.sweep: check the sweep, fan its points out on an engine, collect the rows, write and
resume a table."""
from __future__ import annotations

from .. import _version
from ..errors import SweepError
from ..settings import settings
from ..timing.progress import Progress
from .factory import factory_ref, refuse_nested_sweep
from .identity import machine_digest, point_identity
from .points import expand_points
from .results import ResultsFile
from .worker import RERUN_ON_RESUME
from .engines import run_on_dask, run_serial
from ..timing.machine import Machine, machine as active, resolve_machine

DEFAULT_TIMEOUT_S = 600.0


def _pandas():
    try:
        import pandas as pd
    except ImportError:
        raise ImportError('pto.sweep returns a pandas DataFrame: pip install "pypto-sim[sweep]"') from None
    return pd


def sweep(factory, params=None, machine_overrides=None, engine=None, machine=None, out=None,
          resume=False, workers=None, progress=None, timeout=DEFAULT_TIMEOUT_S):
    """Run ``factory`` at every point of ``params`` x ``machine_overrides`` and return a
    DataFrame, one row per point: ``param.*``, ``override.*``, ``total_cycles``,
    ``simulated_us``, ``warp_instructions``, ``busy.<instruction>`` and ``pipe_busy.<pipe>``
    cycles, ``check`` (the case's check verdict), ``wall_s``, ``error`` (None, or why the
    point failed: its row stays, the sweep goes on), ``error_kind`` (None, "raised",
    "timeout" or "died"), ``key`` (the point) and ``identity`` (a hash of all that decides
    its result).

    ``factory``: ``"module:function"``, ``"path/to/file.py:function"`` or a function defined
    at the top level of a .py file; it is loaded here first (a SweepError if it cannot be).
    ``params``: {name: values} (the cartesian product; values a list, tuple, range or 1-D
    numpy array of bool/int/float/str, or one such scalar) or a list of dicts; likewise
    ``machine_overrides`` ({"instruction.TLOAD.latency": [...], ...}, applied with
    Machine.with_overrides and checked by the table loader's rules before any point runs).
    ``engine``: None (a Dask LocalCluster of ``workers`` processes, default one per core),
    ``"serial"`` (one point after another), a scheduler address ``"tcp://host:8786"`` or a
    ``dask.distributed.Client``. ``timeout``: seconds one point may run before its process
    is stopped and its row says so (default 600; None: no limit, and ``engine="serial"`` then
    runs the points in this process). A point that kills its process is run once more in a
    fresh one, then is an error row. ``out``: a .parquet or .csv path written as rows
    arrive, locked against a second sweep; an existing file is continued only with
    ``resume=True`` and only if a sweep wrote it (else a SweepError, the file untouched):
    that reuses the rows whose identity (factory and its code, params, overrides, base
    machine table and its contents, package version) matches a point and runs the rest.
    ``machine``: the base table, name, path or Machine (default: the active
    machine). ``progress``: None (one line over the points on a terminal after two seconds, as
    the progress setting says, docs/settings.md), True (always) or False (never). If every
    point fails, a SweepError gives the first error (its ``frame`` holds the rows)."""
    refuse_nested_sweep()
    pd = _pandas()
    if timeout is not None and not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
                                    and timeout > 0):
        raise SweepError(f"timeout={timeout!r} must be a number of seconds > 0, or None (no limit)")
    if not (engine is None or engine == "serial" or not isinstance(engine, str) or "://" in engine):
        raise SweepError(f"engine {engine!r} is not 'serial', None, a scheduler address "
                         "('tcp://host:8786') or a dask.distributed.Client")
    ref, fn = factory_ref(factory)
    points = expand_points(params, machine_overrides)
    base = _base_machine(machine)
    _check_overrides(base, points)
    digest = machine_digest(base)
    for p in points:
        p["identity"] = point_identity(ref, p["params"], p["overrides"], base.name, digest,
                                       _version.__version__)
    if out is None:
        return _finish(pd, _run(pd, ref, fn, points, base, engine, workers, timeout, progress,
                                None, []), points)
    with ResultsFile(out, resume) as results:
        return _finish(pd, _run(pd, ref, fn, points, base, engine, workers, timeout, progress,
                                results, results.read(pd).to_dict("records")), points)


def _run(pd, ref, fn, points, base, engine, workers, timeout, progress, results, kept):
    """Run the points not already done (rows in ``kept`` with their identity and a result);
    every row of ``kept`` stays in the file. Returns the current points' rows."""
    done = {}
    for row in kept:
        if row.get("identity") and row.get("error_kind") not in RERUN_ON_RESUME:
            done[row["identity"]] = row
    current = [done[p["identity"]] for p in points if p["identity"] in done]
    todo = [p for p in points if p["identity"] not in done]
    # the file keeps every row it had, except those this sweep recomputes
    redo = {p["identity"] for p in todo}
    rows = [r for r in kept if r.get("identity") not in redo]
    bar = Progress("sweep", len(todo), unit="points", setting=settings().progress, enabled=progress)
    new = []

    def collect(row):
        new.append(row)
        current.append(row)
        if results is not None:
            results.write(pd, rows + new)
        bar.update(len(new))

    if todo:
        with bar:
            if engine == "serial":
                run_serial(ref, fn, todo, base, timeout, collect)
            else:
                run_on_dask(ref, todo, base, engine, workers, timeout, collect)
    return current


def _finish(pd, rows, points):
    """The rows as a frame in the points' order; a SweepError if every point failed."""
    order = {p["identity"]: i for i, p in enumerate(points)}
    rows = sorted(rows, key=lambda r: order[r["identity"]])
    frame = pd.DataFrame(rows).reset_index(drop=True)
    errors = [r.get("error") for r in rows if isinstance(r.get("error"), str)]
    if rows and len(errors) == len(rows):
        raise SweepError(f"every point failed ({len(rows)} of {len(rows)}); the first: {errors[0]}",
                         hint="see the rows' error and traceback columns (this error's .frame)",
                         frame=frame)
    return frame


def _base_machine(machine):
    if machine is None:
        return active()
    if isinstance(machine, Machine):
        return machine
    return resolve_machine(machine)


def _check_overrides(base, points):
    """Apply every distinct set of overrides once here, so a bad one (a key no table has, a
    bandwidth of 0) is a MachineError before any point runs."""
    seen = set()
    for p in points:
        key = repr(sorted(p["overrides"].items()))
        if p["overrides"] and key not in seen:
            seen.add(key)
            base.with_overrides(p["overrides"])
