"""Benchmark (run by hand, not a test): a 64-point sweep of the tiled GEMM
(examples/sweep_gemm_tiles.py's factory) serially and on a 2-worker Dask LocalCluster.

    python benchmarks/sweep.py

Prints the serial and Dask wall times, the speed-up, the cluster's start-up time and the
cost per point of the Dask path over serial.
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import pypto_sim as pto                                    # noqa: E402

PARAMS = {"tile": [32, 64], "tile_k": [16, 32, 64, 128], "depth": [1, 2]}
OVERRIDES = {"memory.hbm_chip_bytes_per_cycle": [973, 1946, 3892, 7784]}
FACTORY = "sweep_gemm_tiles:gemm_case"


def main():
    pto.sweep(FACTORY, params={"tile": [32]}, engine="serial")          # warm caches
    start = time.perf_counter()
    serial = pto.sweep(FACTORY, params=PARAMS, machine_overrides=OVERRIDES, engine="serial")
    t_serial = time.perf_counter() - start

    from dask.distributed import Client, LocalCluster
    start = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    client.submit(lambda: 1).result()
    t_start = time.perf_counter() - start
    start = time.perf_counter()
    dask = pto.sweep(FACTORY, params=PARAMS, machine_overrides=OVERRIDES, engine=client)
    t_dask = time.perf_counter() - start
    start = time.perf_counter()                        # again: the workers have imported everything
    pto.sweep(FACTORY, params=PARAMS, machine_overrides=OVERRIDES, engine=client)
    t_warm = time.perf_counter() - start
    client.close()
    cluster.close()
    n = len(serial)
    same = (serial.sort_values("key")["total_cycles"].tolist()
            == dask.sort_values("key")["total_cycles"].tolist())
    print(f"{n} points of the {PARAMS} x {OVERRIDES} GEMM sweep")
    print(f"  serial            {t_serial:.2f} s ({t_serial / n * 1e3:.0f} ms a point)")
    print(f"  dask, 2 workers   {t_dask:.2f} s ({t_dask / n * 1e3:.0f} ms a point, cluster "
          f"already up)  speed-up {t_serial / t_dask:.2f}x")
    print(f"  dask, warm workers {t_warm:.2f} s  speed-up {t_serial / t_warm:.2f}x (the workers had "
          f"imported pypto_sim and loaded the executor in the first sweep)")
    print(f"  cluster start-up  {t_start:.2f} s (LocalCluster of 2 processes, first task done)")
    print(f"  per-point cost of the dask path over serial, per worker: "
          f"{(2 * t_dask - t_serial) / n * 1e3:.0f} ms")
    print(f"  same cycles at every point: {same}")


if __name__ == "__main__":
    main()
