"""The Dask engine: an embedded LocalCluster, a scheduler address, or a Client."""
from __future__ import annotations

import os
import uuid


def _dask():
    try:
        from dask import distributed
    except ImportError:
        raise ImportError('pto.sweep(engine=...) runs on Dask: pip install "pypto-sim[sweep]" '
                          '(or use engine="serial")') from None
    return distributed


def run_on_dask(factory, points, machine_name, engine, workers, collect):
    """Submit one task per point (retried on another worker if its worker dies) and hand
    each finished row to collect(), in completion order."""
    distributed = _dask()
    # compile (or load) the numba executor here first: the workers then find it in the
    # on-disk cache instead of each compiling it for ~30 s
    from ..exec.lane import executor
    executor()
    cluster = client = None
    if engine is None:
        n = workers or os.cpu_count() or 1
        # workers start with spawn (fork would copy numba's state): a fresh interpreter each
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None,
                                           worker_class=distributed.Nanny)
        client = distributed.Client(cluster)
    elif isinstance(engine, str):
        client = distributed.Client(engine)
    else:
        client = engine
    try:
        from .worker import run_point
        run_id = uuid.uuid4().hex[:12]              # keys unique per sweep: never a cached result
        futures = [client.submit(run_point, factory, p, machine_name, key=f"pto-sweep-{run_id}-{i}",
                                 pure=False, retries=2)
                   for i, p in enumerate(points)]
        for future in distributed.as_completed(futures):
            collect(future.result())
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
        elif isinstance(engine, str):
            client.close()
