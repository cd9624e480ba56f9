"""Peak memory of the 6144^3 GEMM (issue 22; run by hand, not a test).

    python benchmarks/gemm_memory.py [--n 6144] [--trace]

pto-isa's A3 GEMM kernel of benchmarks/published.py on 24 cores, ``values=False``, fp16 A and B
and fp32 C of n x n. Steps, each printed with the process's resident memory (RSS, from
/proc/self/statm) and its peak so far (``resource.getrusage(RUSAGE_SELF).ru_maxrss``):

1. import pypto_sim and compile the executor module (a 512^3 GEMM on 24 cores);
2. allocate the three tensors and copy A and B in 256-row pieces (no full host temporary);
3. ``pto.profile(..., values=False)``: its wall time, the simulated cycles, the peak RSS;
4. after the call: the memory the Profile keeps (its records' columns, dtype and bytes).

With --trace, the launch runs under tracemalloc (slower): its exact peak of traced memory (numpy
arrays report to tracemalloc) and, from a thread that snapshots whenever the traced memory rises
10 MB above the highest seen, the largest allocation sites at the highest snapshot taken (a
close lower bound of the peak's breakdown: a peak inside one numpy call can be missed).
"""
import argparse
import os
import resource
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import published  # noqa: E402

import pypto_sim as pto  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    """Resident set size of this process now, in MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2 ** 20


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def step(name):
    """Print one step's RSS now and peak so far."""
    print(f"  {name:<52} RSS {rss_mb():>7,.0f} MB   peak {peak_rss_mb():>7,.0f} MB", flush=True)


def tensors(n):
    """The GEMM's three device tensors; A and B filled with random fp16 in 256-row pieces."""
    rng = np.random.default_rng(0)
    A = pto.alloc_tensor(n * n * 2, pto.float16)
    B = pto.alloc_tensor(n * n * 2, pto.float16)
    C = pto.alloc_tensor(n * n * 4, pto.float32)
    rows = 256
    for d in (A, B):
        for r in range(0, n, rows):
            piece = rng.standard_normal((min(rows, n - r), n)).astype(np.float16)
            pto.memcpy_h2d(d[r * n:r * n + piece.size], piece)
    return A, B, C


class PeakWatcher:
    """A thread that keeps the tracemalloc snapshot taken at the highest traced memory seen."""

    def __init__(self, margin=10 << 20, every=0.002):
        self.margin, self.every = margin, every
        self.best, self.snapshot = 0, None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            cur = tracemalloc.get_traced_memory()[0]
            if cur > self.best + self.margin:
                self.best, self.snapshot = cur, tracemalloc.take_snapshot()
            time.sleep(self.every)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def top(snapshot, n=12):
    """The n largest allocation sites of a snapshot, as printed lines."""
    stats = snapshot.statistics("lineno")
    root = str(Path(pto.__file__).resolve().parents[1]) + os.sep
    out = []
    for s in stats[:n]:
        fr = s.traceback[0]
        out.append(f"    {s.size / 2 ** 20:>7.1f} MB  {s.count:>7,} blocks  "
                   f"{fr.filename.replace(root, '')}:{fr.lineno}")
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=6144, help="m = k = n (a multiple of 1536: the 4 x 6 core grid of 128 x 256 tiles)")
    parser.add_argument("--trace", action="store_true", help="tracemalloc breakdown (slower)")
    ns = parser.parse_args()
    n = ns.n
    published.check_gemm_shape(n, n, n)
    print(f"GEMM {n}^3, pto-isa's A3 kernel, {published.CORES} cores, values=False")
    step("imported")
    warm = tensors(1536)           # the smallest m = k = n the source's 4 x 6 core grid divides
    pto.profile(published.gemm_performance, grid=(published.CORES,), args=(*warm, 1536, 1536, 1536),
                values=False)
    for t in warm:
        t.free()
    del warm
    step("executor compiled (a 1536^3 GEMM run and freed)")
    A, B, C = tensors(n)
    step(f"three {n}^2 tensors in HBM")
    if ns.trace:
        tracemalloc.start()
    start = time.perf_counter()
    if ns.trace:
        with PeakWatcher() as watch:
            prof = pto.profile(published.gemm_performance, grid=(published.CORES,),
                               args=(A, B, C, n, n, n), values=False)
    else:
        prof = pto.profile(published.gemm_performance, grid=(published.CORES,),
                           args=(A, B, C, n, n, n), values=False)
    wall = time.perf_counter() - start
    step("after pto.profile")
    rec = prof.records
    kept = sum(getattr(rec, f).nbytes for f in rec.__dataclass_fields__)
    print(f"  pto.profile wall time {wall:.2f} s; {prof.total_cycles:,} cycles; {len(rec):,} records")
    print(f"  records kept: {kept / 2 ** 20:.1f} MB ("
          + ", ".join(f"{f} {getattr(rec, f).dtype}" for f in rec.__dataclass_fields__) + ")")
    if ns.trace:
        cur, peak = tracemalloc.get_traced_memory()
        print(f"  tracemalloc during pto.profile: peak {peak / 2 ** 20:,.1f} MB, "
              f"after {cur / 2 ** 20:,.1f} MB")
        if watch.snapshot is not None:
            print(f"  largest sites at the highest snapshot ({watch.best / 2 ** 20:,.1f} MB traced):")
            print("\n".join(top(watch.snapshot)))
        print("  largest sites after the call (what the Profile keeps):")
        print("\n".join(top(tracemalloc.take_snapshot(), 6)))


if __name__ == "__main__":
    main()
