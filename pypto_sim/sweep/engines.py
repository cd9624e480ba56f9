"""The engines that run a sweep's points: serial (one point runner, or this process) and
Dask (an embedded LocalCluster, a scheduler address, or a Client), where each worker runs its
points in its own point runners, so a point that hangs or dies costs only its own row."""
from __future__ import annotations

import contextlib
import os
import queue
import sys
import time
import types
import uuid

from ..errors import SweepError
from .runner import PointRunner
from .worker import DIED, error_row, run_point
from ..runtime.warm import compiled_in_this_process, warm

PLUGIN = "pypto-sweep-runners"


def run_serial(ref, fn, points, machine, timeout, collect):
    """Each point in turn: in a point runner (killed and replaced past ``timeout`` or when a
    point kills it) or, for ``timeout=None``, in this process (debuggers work)."""
    if timeout is None:
        for point in points:
            collect(run_point(fn, point, machine, ref.label))
        return
    with PointRunner() as runner:
        for point in points:
            collect(runner.run(ref, point, machine, timeout))


def _dask():
    try:
        from dask import distributed
    except ImportError:
        raise ImportError('pto.sweep(engine=...) runs on Dask: pip install "pypto-sim[sweep]" '
                          '(or use engine="serial")') from None
    return distributed


def _runner_pool_class(distributed):
    class RunnerPool(distributed.WorkerPlugin):
        """Idle point runners of one Dask worker (one per thread that has run a point);
        closed when the plugin is removed at the end of the sweep or the worker closes."""

        name = PLUGIN

        def setup(self, worker):
            self.idle = queue.SimpleQueue()

        def teardown(self, worker):
            while True:
                try:
                    self.idle.get_nowait().close()
                except queue.Empty:
                    return

        def run(self, ref, point, machine, timeout):
            try:
                runner = self.idle.get_nowait()
            except queue.Empty:
                runner = PointRunner()
            try:
                return runner.run(ref, point, machine, timeout)
            finally:
                self.idle.put(runner)
    return RunnerPool


def run_on_worker(ref, point, machine, timeout):
    """A Dask task: the point's row from one of this worker's point runners."""
    from distributed import get_worker
    return get_worker().plugins[PLUGIN].run(ref, point, machine, timeout)


@contextlib.contextmanager
def _script_hidden():
    """While the embedded cluster lives, its worker processes start (and restart) without
    re-running the user's script: multiprocessing's spawn would execute ``__main__`` in each
    worker, restarting an unguarded sweep there. The workers only need pypto_sim."""
    real = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = real


def run_on_dask(ref, points, machine, engine, workers, timeout, collect):
    """Submit one task per point and hand each finished row to collect(), in completion
    order. A task lost with its worker (KilledWorker, a worker that vanished) is an error row."""
    distributed = _dask()
    # compile the numba executor here first (runtime/warm.py), unless this process already has:
    # the point runners then load it from the on-disk cache instead of each compiling it
    if not compiled_in_this_process():
        warm()
    with contextlib.ExitStack() as stack:
        if engine is None:
            stack.enter_context(_script_hidden())
            n = workers or os.cpu_count() or 1
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                worker_class=distributed.Nanny))
            client = stack.enter_context(distributed.Client(cluster))
        elif isinstance(engine, str):
            client = stack.enter_context(distributed.Client(engine))
        elif isinstance(engine, distributed.Client):
            client = engine
        else:
            raise SweepError(f"engine {engine!r} is not 'serial', None, a scheduler address or "
                             "a dask.distributed.Client")
        client.register_plugin(_runner_pool_class(distributed)(), name=PLUGIN)
        stack.callback(_unregister, client)
        run_id = uuid.uuid4().hex[:12]              # keys unique per sweep: never a cached result
        futures = {client.submit(run_on_worker, ref, p, machine, timeout,
                                 key=f"pto-sweep-{run_id}-{i}", pure=False): p
                   for i, p in enumerate(points)}
        start = time.perf_counter()
        try:
            for future in distributed.as_completed(futures):
                try:
                    row = future.result()
                except SweepError:
                    raise
                except Exception as exc:            # KilledWorker: the worker died under it
                    row = error_row(futures[future], DIED, f"{type(exc).__name__}: {exc}",
                                    time.perf_counter() - start)
                collect(row)
        except BaseException:
            client.cancel(list(futures))
            raise


def _unregister(client):
    with contextlib.suppress(Exception):
        client.unregister_worker_plugin(PLUGIN)
