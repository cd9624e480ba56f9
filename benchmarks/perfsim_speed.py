"""Wall time of pto.profile on the ports Perf-Sim also runs (docs/performance.md, session 40):
the whole launch, every core, values off, warm numba cache; each kernel twice, the second run
reported. Perf-Sim's own walls come from its timer (benchmarks/perfsim/build.sh and
../shared/tools/ptoisa-perfsim).

Run:  python benchmarks/perfsim_speed.py
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
sys.path.insert(0, os.path.dirname(__file__))

import pypto_sim as pto  # noqa: E402
import conv2d_forward  # noqa: E402
import published  # noqa: E402
import topk  # noqa: E402


def gemm(n=7680):
    """published.py's gemm_performance at n^3 on 24 cores; returns the profile."""
    a, b = pto.alloc_tensor(n * n * 2, pto.float16), pto.alloc_tensor(n * n * 2, pto.float16)
    c = pto.alloc_tensor(n * n * 4, pto.float32)
    return pto.profile(published.gemm_performance, grid=(published.CORES,), args=(a, b, c, n, n, n), values=False)


def conv(batch=4, c1=40, h=15, w=128, n=7680):
    """conv2d_forward at X = [batch, c1, h, w, 16], N = n on batch x 6 AICs; returns the profile."""
    x = pto.alloc_tensor(batch * c1 * h * w * 16 * 2, pto.float16)
    wt = pto.alloc_tensor(c1 * 144 * n * 2, pto.float16)
    y = pto.alloc_tensor(batch * h * w * n * 2, pto.float16)
    return pto.profile(conv2d_forward.conv2d_forward, grid=(batch * conv2d_forward.N_CORES,),
                       args=(x, wt, y, c1, h, w, n), values=False)


def top(rows=4800):
    """examples/topk.py's float32 kernel on rows of zeros (the cycles do not depend on the
    values, which are off), 24 AI cores' 48 AIVs; returns the profile."""
    out = pto.alloc_tensor(rows * topk.TOPK * 4, pto.float32)
    index = pto.alloc_tensor(rows * topk.TOPK * 4, pto.int32)
    src = pto.alloc_tensor(rows * topk.COLS * 4, pto.float32)
    in_idx = pto.alloc_tensor(topk.VALID_COL * 4, pto.uint32)
    return pto.profile(topk.topk, grid=(topk.BLOCK_DIM // 2,), args=(out, index, src, in_idx, rows // topk.BLOCK_DIM),
                       values=False)


def main():
    for name, run in (("GEMM 7680^3", gemm), ("conv2d C1 40", conv), ("topk 4800", top)):
        for _ in range(2):
            t0 = time.perf_counter()
            prof = run()
            wall = time.perf_counter() - t0
        units = len(prof.pipeline_summary())
        print(f"{name:>14}: {wall:6.2f} s for {units} units; {len(prof.records.pc):>9,} records; "
              f"{prof.total_cycles:,} cycles")


if __name__ == "__main__":
    main()
