"""Benchmark (run by hand, not a test): the real AI core's kernels.

    python benchmarks/aicore.py [--repeat 3]

1. Speed: wall time to simulate examples/gemm_manual.py at 512^3 and examples/flash_attention.py
   at S=1024 (values and cycles; best of --repeat runs after one warm-up run).
2. Buffering: the manual GEMM with L1 and L0 single-buffered (one buffer pair, so each TLOAD
   waits for the TEXTRACT of the step before) against the example's ping-pong, at 1024^3 on
   the default machine (32 output tiles on 24 AI cores), with the L2's hit rate.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import flash_attention  # noqa: E402
import gemm_manual  # noqa: E402
from gemm_manual import BK, BM, BN, k_step  # noqa: E402

import pypto_sim as pto  # noqa: E402


@pto.kernel(sync="manual")
def gemm_single(A, B, C, M, N, K):
    """examples/gemm_manual.py with one L1 buffer pair and one L0 buffer pair."""
    with pto.cube():
        tiles_n = N // BN
        m0 = (pto.get_block_id() // tiles_n) * BM
        n0 = (pto.get_block_id() % tiles_n) * BN
        a_l1 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Mat)
        b_l1 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Mat)
        a_l0 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Left)
        b_l0 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(BM, BN, pto.float32, loc=pto.Acc)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        for k0 in range(0, K, BK):
            k_step(A, B, acc, a_l1, b_l1, a_l0, b_l0, m0, n0, k0, K, N, 0)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(C + m0 * N + n0, acc, stride=N)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)


def best_wall(fn, repeat):
    fn()                                  # warm-up: numba cache, kernel compile
    walls = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
    return min(walls), max(walls)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    ns = parser.parse_args()
    lo, hi = best_wall(lambda: gemm_manual.run(512, 512, 512), ns.repeat)
    print(f"gemm_manual 512^3:        {lo:.2f} s (best of {ns.repeat}; worst {hi:.2f} s)")
    lo, hi = best_wall(lambda: flash_attention.run(1024), ns.repeat)
    print(f"flash_attention S=1024:   {lo:.2f} s (best of {ns.repeat}; worst {hi:.2f} s)")
    for name, kernel in (("single-buffered", gemm_single), ("double-buffered", gemm_manual.gemm)):
        c, ref, prof = gemm_manual.run(1024, 1024, 1024, kernel=kernel)
        ok = abs(c - ref).max() < 1e-2
        shares = prof.pipe_shares("AIC")
        s = prof.aicore_stats
        print(f"GEMM 1024^3 {name}: {prof.total_cycles} cycles, "
              f"{2 * 1024 ** 3 / (prof.total_cycles / (prof.machine.clock_ghz * 1e9)) / 1e12:.1f} TFLOP/s, "
              f"AIC busy MTE2 {100 * shares['MTE2']:.0f}% MTE1 {100 * shares['MTE1']:.0f}% "
              f"M {100 * shares['M']:.0f}% FIX {100 * shares['FIX']:.0f}%, "
              f"L2 hits {100 * s.l2_hits / max(s.l2_hits + s.l2_misses, 1):.0f}%, C ok: {ok}")


if __name__ == "__main__":
    main()
