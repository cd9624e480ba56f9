"""Benchmark (run by hand, not a test): what the checks cost, measured side by side.

    python benchmarks/checks.py [--n 65536] [--repeat 5]

vector_add and the shared-buffer kernel in timing mode: without bounds checks (a child process
whose executor is compiled without them: isa_constants.BOUNDS_CHECK set False before any
compiled module is imported; only here), as
shipped (memcheck always on), and with racecheck, initcheck and all checks. Reports median CPU
times of the launch alone (each process's own) and ratios; the variants are interleaved round by
round, a child process per unchecked sample.
"""
import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import pypto_sim as pto

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import vector_add  # noqa: E402  (shared with the other benchmark scripts)
from pypto_sim.exec.compiled import isa_constants
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


def timed(kernel, grid, args, check=None, repeat=5):
    dev = current_device()
    times = []
    for _ in range(repeat):
        handle = dev.launch(kernel, grid, (256, 1, 1), args, check=check)
        pending = dev.queue.pop()
        start = time.process_time()     # CPU time: less sensitive to other tenants
        run_launch(dev, pending, record=False)
        times.append(time.process_time() - start)
        del handle
    return statistics.median(times)


KERNELS = {"vector_add": vector_add, "staged (alloc_local + barrier_block)": staged}


def kernel_args(name, n):
    """The kernel's launch arguments over fresh tensors of n random float32s."""
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    for d in (d_a, d_b):
        pto.memcpy_h2d(d, np.random.rand(n).astype(np.float32))
    return (d_a, d_b, d_o, n) if KERNELS[name] is vector_add else (d_a, d_o, n)


def unchecked_sample(name, n):
    """One launch's CPU seconds in a child process whose executor has no bounds checks (its
    first, compiling launch is not counted)."""
    child = subprocess.run([sys.executable, __file__, "--child", name, "--n", str(n)],
                           capture_output=True, text=True, check=True)
    return json.loads(child.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=65536)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", help=argparse.SUPPRESS)      # one unchecked sample (internal)
    ns = parser.parse_args()
    n = ns.n
    grid = (-(-n // 256), 1, 1)
    if ns.child:
        isa_constants.BOUNDS_CHECK = False      # before executor() imports the compiled modules
        args = kernel_args(ns.child, n)
        timed(KERNELS[ns.child], grid, args, repeat=1)               # compiles or loads the cache
        print(json.dumps(timed(KERNELS[ns.child], grid, args, repeat=1)))
        return
    rows = []
    for name, kernel in KERNELS.items():
        args = kernel_args(name, n)
        variants = (("none", "unchecked"), ("memcheck", None), ("race", "racecheck"),
                    ("init", "initcheck"), ("all", "all"))
        samples = {v[0]: [] for v in variants}
        order = random.Random(0)
        for _ in range(ns.repeat):            # interleaved rounds: drift hits every variant alike
            for label, check in order.sample(variants, len(variants)):   # and no fixed order
                samples[label].append(unchecked_sample(name, n) if check == "unchecked"
                                      else timed(kernel, grid, args, check=check, repeat=1))
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
