"""pto.sweep: fan the points out on an engine, collect the rows, write and resume a table."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .points import expand_points
from .worker import factory_name, run_point


def _pandas():
    try:
        import pandas as pd
    except ImportError:
        raise ImportError('pto.sweep returns a pandas DataFrame: pip install "pypto-sim[sweep]"') from None
    return pd


def sweep(factory, params=None, machine_overrides=None, engine=None, machine=None, out=None,
          resume=False, workers=None, progress=None):
    """Run ``factory`` at every point of ``params`` x ``machine_overrides`` and return a
    DataFrame, one row per point: ``param.*``, ``override.*``, ``total_cycles``,
    ``simulated_us``, ``warp_instructions``, ``busy.<instruction>`` and ``pipe_busy.<pipe>``
    cycles, ``check`` (the case's check verdict), ``wall_s`` and ``error`` (None, or why the
    point failed: its row stays, the sweep goes on).

    ``params``: {name: [values]} (the cartesian product) or a list of dicts; likewise
    ``machine_overrides`` ({"instruction.TLOAD.latency": [...], "memory.hbm_chip_bytes_per_cycle":
    [...]}, applied with Machine.with_overrides). ``engine``: None (a dask LocalCluster of
    ``workers`` processes, default one per core), ``"serial"`` (in this process), a scheduler
    address ``"tcp://host:8786"`` or a ``dask.distributed.Client``. ``out``: a .parquet (or
    .csv) path written as rows arrive; with ``resume=True`` the points already in it are
    skipped, so a killed driver loses nothing. ``machine``: the base table (default: the
    active machine)."""
    pd = _pandas()
    points = expand_points(params, machine_overrides)
    done_rows = []
    if out is not None and resume and Path(out).exists():
        done = _read(pd, out)
        keys = set(done["key"]) if "key" in done else set()
        done_rows = done.to_dict("records")
        points = [p for p in points if p["key"] not in keys]
    machine_name = _machine_name(machine)
    show = progress if progress is not None else (sys.stderr.isatty() and not os.environ.get("CI"))
    rows = list(done_rows)
    start = time.perf_counter()

    def collect(row):
        rows.append(row)
        if out is not None:
            _write(pd, rows, out)
        if show:
            n = len(rows) - len(done_rows)
            sys.stderr.write(f"\rsweep: {n}/{len(points)} points, {time.perf_counter() - start:.1f} s")
            sys.stderr.flush()

    if engine == "serial":
        for point in points:
            collect(run_point(factory, point, machine_name))
    else:
        from .engines import run_on_dask
        run_on_dask(factory_name(factory), points, machine_name, engine, workers, collect)
    if show:
        sys.stderr.write("\n")
    frame = pd.DataFrame(rows)
    order = {p["key"]: i for i, p in enumerate(expand_points(params, machine_overrides))}
    if len(frame):
        frame = frame.iloc[sorted(range(len(frame)), key=lambda i: order.get(frame["key"].iloc[i], 1 << 30))]
        frame = frame.reset_index(drop=True)
    return frame


def _machine_name(machine):
    if machine is None:
        from ..timing.machine import machine as active
        m = active()
        return str(m.path)
    return str(machine)


def _read(pd, path):
    path = Path(path)
    return pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)


def _write(pd, rows, path):
    """Write all rows so far, atomically (a killed driver leaves the previous table whole)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    frame = pd.DataFrame(rows)
    if path.suffix == ".csv":
        frame.to_csv(tmp, index=False)
    else:
        frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)
