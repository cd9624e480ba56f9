"""Peak memory of a large timing-mode launch (run by hand, not a test).

    python benchmarks/memory.py [--elements 16777216] [--launch]

Profiles vector_add over N elements (blocks of 256) with values and cycles and prints the
wall time, the simulation rate and the peak resident memory of the whole process (which also
holds the three tensors in HBM's bytes and the initcheck bitmap of HBM). With --launch it
runs pto.launch instead, which keeps per-instruction totals, not the records.
"""
import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

import pypto_sim as pto

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import vector_add  # noqa: E402


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--elements", type=int, default=1 << 24)
    parser.add_argument("--launch", action="store_true", help="pto.launch: totals, no records")
    ns = parser.parse_args()
    n = ns.elements
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    a = np.arange(n, dtype=np.float32)
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, a)
    del a
    before = peak_rss_mb()
    start = time.perf_counter()
    run = pto.launch if ns.launch else pto.profile
    prof = run(vector_add, grid=((n + 255) // 256, 1, 1), block=(256, 1, 1), args=(d_a, d_b, d_o, n))
    if ns.launch:
        prof = prof.result()
    wall = time.perf_counter() - start
    out = d_o.numpy()
    assert out[n - 1] == 2 * (n - 1) and out[0] == 0.0
    rows = prof.stats["warp_instructions"]
    kept = "per-instruction totals (pto.launch)" if ns.launch else "full per-instruction records"
    print(f"vector_add of {n:,} elements, timing mode, {kept}")
    print(f"  wall time        {wall:.2f} s ({rows:,} warp-instructions, {rows / wall:,.0f} per second)")
    print(f"  simulated cycles {prof.total_cycles:,}")
    print(f"  peak RSS         {peak_rss_mb():,.0f} MB for the process "
          f"({before:,.0f} MB before the launch: tensors and HBM)")


if __name__ == "__main__":
    main()
