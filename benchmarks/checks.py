"""Benchmark (run by hand, not a test): what the checks cost, measured side by side.

    python benchmarks/checks.py [--n 65536] [--repeat 5]

vector_add and the shared-buffer kernel in timing mode: without bounds checks (the executor
rebuilt with them compiled out; only here), as shipped (memcheck always on), and with
racecheck, initcheck and all checks. Reports median CPU times (this process) and ratios.
"""
import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import pypto_sim as pto

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import vector_add  # noqa: E402  (shared with the other benchmark scripts)
from pypto_sim.exec.lane import executor
from pypto_sim.runtime.launch import run_launch
from pypto_sim.runtime.device import current_device


@pto.kernel
def staged(src, out, n):
    lid = pto.get_local_id()
    i = pto.get_global_id()
    shared = pto.alloc_local(256)
    if i < n:
        pto.store(shared + lid, pto.load(src + i))
    pto.barrier_block()
    if i < n:
        pto.store(out + i, pto.load(shared + (255 - lid)))


def timed(kernel, grid, args, check=None, ex=None, repeat=5):
    dev = current_device()
    times = []
    for _ in range(repeat):
        handle = dev.launch(kernel, grid, (256, 1, 1), args, check=check)
        pending = dev.queue.pop()
        start = time.process_time()     # CPU time: less sensitive to other tenants
        run_launch(dev, pending, record=False, executor_module=ex)
        times.append(time.process_time() - start)
        del handle
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=65536)
    parser.add_argument("--repeat", type=int, default=5)
    ns = parser.parse_args()
    n = ns.n
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    for d in (d_a, d_b):
        pto.memcpy_h2d(d, np.random.rand(n).astype(np.float32))
    grid = (-(-n // 256), 1, 1)
    unchecked = executor(bounds_check=False)
    rows = []
    for name, kernel, args in (("vector_add", vector_add, (d_a, d_b, d_o, n)),
                               ("staged (alloc_local + barrier_block)", staged, (d_a, d_o, n))):
        variants = (("none", None, unchecked), ("memcheck", None, None), ("race", "racecheck", None),
                    ("init", "initcheck", None), ("all", "all", None))
        samples = {v[0]: [] for v in variants}
        order = random.Random(0)
        for _ in range(ns.repeat):            # interleaved rounds: drift hits every variant alike
            for label, check, ex in order.sample(variants, len(variants)):   # and no fixed order
                samples[label].append(timed(kernel, grid, args, check=check, ex=ex, repeat=1))
        med = {k: statistics.median(v) for k, v in samples.items()}
        rows.append((name, med["none"], med["memcheck"], med["race"], med["init"], med["all"]))
    print(f"n = {n} elements, grid {grid}, block 256, medians of {ns.repeat} interleaved rounds (seconds)")
    print(f"{'kernel':38s} {'no bounds':>9s} {'memcheck':>9s} {'race':>9s} {'init':>9s} {'all':>9s}"
          f" {'memcheck/none':>13s} {'race/memcheck':>13s}")
    for name, base, shipped, race, init, every in rows:
        print(f"{name:38s} {base:9.3f} {shipped:9.3f} {race:9.3f} {init:9.3f} {every:9.3f}"
              f" {shipped / base:13.3f} {race / shipped:13.3f}")


if __name__ == "__main__":
    main()
