"""An endless kernel run to its cycle limit (run by hand, not a test): CPU per simulated
cycle and memory growth, AI core against the lane path (issue 22).

    python benchmarks/endless.py [--cycles 1000000]

The AI-core kernel's AIC counts for ever on its scalar unit; the lane kernel's lanes add for ever. Both are
launched with pto.launch (no records) and max_cycles; printed: CPU seconds per million
simulated cycles and the peak resident memory growth of the run.
"""
import argparse
import resource
import time

import pypto_sim as pto


@pto.kernel(sync="manual")
def aicore_forever(A, n):
    """The AIC's scalar unit counts to n (n large: until the cycle limit), then loads a tile."""
    with pto.cube():
        m = pto.alloc_tile(128, 64, pto.float16, loc=pto.Mat)
        i = 0
        while i < n:
            i = i + 1
        pto.tload(m, A)


@pto.kernel
def lane_forever(x, n):
    """Every lane adds n times (n large: until the cycle limit)."""
    i = 0
    v = 0.0
    while i < n:
        v = v + 1.0
        i = i + 1
    pto.store(x + pto.get_global_id(), v)


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(kernel, args, cycles, **launch):
    """(CPU seconds per million cycles, peak RSS growth MB) of one launch to the limit."""
    rss0 = peak_rss_mb()
    cpu0 = time.process_time()
    try:
        pto.launch(kernel, args=args, max_cycles=cycles, **launch)
        pto.sync()
    except pto.SimulationLimitError:
        pass
    cpu = time.process_time() - cpu0
    return cpu / (cycles / 1e6), peak_rss_mb() - rss0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=1_000_000)
    ns = parser.parse_args()
    A = pto.alloc_tensor(128 * 64 * 2, pto.float16)
    x = pto.alloc_tensor(32 * 4, pto.float32)
    run(aicore_forever, (A, 10 ** 9), 10_000, grid=(1,))          # warm-up: compile
    run(lane_forever, (x, 10 ** 9), 10_000, grid=(1,), block=(32,))
    for name, kernel, args, launch in (("AI core", aicore_forever, (A, 10 ** 9), dict(grid=(1,))),
                                       ("lane", lane_forever, (x, 10 ** 9), dict(grid=(1,), block=(32,)))):
        cpu, rss = run(kernel, args, ns.cycles, **launch)
        print(f"{name:8} {cpu:6.2f} CPU s per million cycles, peak RSS +{rss:.0f} MB")


if __name__ == "__main__":
    main()
