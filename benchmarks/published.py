"""Benchmark (run by hand, not a test): simulated against published kernel results.

    python benchmarks/published.py [--gemm 1536,3072,6144] [--fa 1024,2048,4096,8192]

1. The A3 GEMM of pto-isa's kernels/manual/a2a3/gemm_performance (README.md): 24 cores, fp16 in
   and fp32 out, base tile [128, 256, 64], stepK 4 (L1 holds four K steps of A and B, double
   buffered; L0A/L0B ping-pong), manual flags as in gemm_performance_kernel.cpp. Printed: the
   simulated and published time and TFLOP/s, and the AIC's TMATMUL (M), TEXTRACT (MTE1), TLOAD
   (MTE2) and TSTORE (FIX) busy shares beside the published ratios.
2. The 910B2 flash attention of pto-isa's kernels/manual/common/flash_atten (README.md): HEAD
   128, S0 = S1, one head (the published TFLOP/s equal 4 S^2 D / time), as
   examples/flash_attention.py computes it.

Every machine-table number comes from per-instruction sources; nothing here is fitted to the
published kernel times: they are the validation. The relative errors are printed as measured.
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import flash_attention  # noqa: E402

import pypto_sim as pto  # noqa: E402

BM, BN, BK, STEPK = 128, 256, 64, 4
KL1 = BK * STEPK                      # K columns of A (rows of B) per L1 tile
CORES = 24

# pto-isa kernels/manual/a2a3/gemm_performance/README.md (A3, 24 cores): m=k=n -> time (ms)
# and the TMATMUL / TEXTRACT / TLOAD / TSTORE ratios (%)
PUBLISHED_GEMM = {1536: (0.0388, 54.5, 42.2, 72.2, 7.7), 3072: (0.2067, 79.0, 62.0, 90.9, 5.8),
                  6144: (1.5060, 86.7, 68.1, 95.2, 3.1), 7680: (3.1680, 80.6, 63.0, 98.4, 2.4)}
# pto-isa kernels/manual/common/flash_atten/README.md (910B2, HEAD 128, S0 = S1): seq -> (us, TFLOP/s)
PUBLISHED_FA = {1024: (20.960, 25.61), 2048: (32.461, 66.16), 4096: (88.902, 96.62),
                8192: (292.626, 117.42), 16384: (909.058, 151.19), 32768: (3262.645, 168.50)}


@pto.kernel
def l1_step(A, B, acc, a_l1, b_l1, a_l0_0, b_l0_0, a_l0_1, b_l0_1, m0, n0, k0, K, N, p):
    """Load one L1 tile pair (A 128 x 256, B 256 x 256) into buffer p, then run its four K
    steps of 64 through L0 ping-pong (events 0, 1) and the cube."""
    pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, p)       # L1 buffer p is free
    pto.tload(a_l1, A + m0 * K + k0, stride=K)
    pto.tload(b_l1, B + k0 * N + n0, stride=N)
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, p)
    pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, p)
    k_sub(acc, a_l1, b_l1, a_l0_0, b_l0_0, k0, 0, 0)
    k_sub(acc, a_l1, b_l1, a_l0_1, b_l0_1, k0, 1, 1)
    k_sub(acc, a_l1, b_l1, a_l0_0, b_l0_0, k0, 2, 0)
    k_sub(acc, a_l1, b_l1, a_l0_1, b_l0_1, k0, 3, 1)
    pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, p)        # L1 buffer p may be refilled


@pto.kernel
def k_sub(acc, a_l1, b_l1, a_l0, b_l0, k0, s, ev):
    """K step s (of STEPK) of the L1 tile at k0, through L0 buffer ev."""
    pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, ev)         # L0 buffer ev is free
    pto.textract(a_l0, a_l1, 0, s * BK)
    pto.textract(b_l0, b_l1, s * BK, 0)
    pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, ev)
    pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, ev)
    if k0 + s == 0:
        pto.tmatmul(acc, a_l0, b_l0)
    else:
        pto.tmatmul_acc(acc, a_l0, b_l0)
    pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, ev)


@pto.kernel(sync="manual")
def gemm_performance(A, B, C, M, N, K):
    with pto.cube():
        tiles_n = N // BN
        a_l1_0 = pto.alloc_tile(BM, KL1, pto.float16, loc=pto.Mat)
        a_l1_1 = pto.alloc_tile(BM, KL1, pto.float16, loc=pto.Mat)
        b_l1_0 = pto.alloc_tile(KL1, BN, pto.float16, loc=pto.Mat)
        b_l1_1 = pto.alloc_tile(KL1, BN, pto.float16, loc=pto.Mat)
        a_l0_0 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Left)
        a_l0_1 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Left)
        b_l0_0 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Right)
        b_l0_1 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(BM, BN, pto.float32, loc=pto.Acc)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        for t in range(pto.get_block_id(), (M // BM) * tiles_n, pto.get_grid_dim()):
            m0 = (t // tiles_n) * BM
            n0 = (t % tiles_n) * BN
            for k0 in range(0, K, 2 * KL1):
                l1_step(A, B, acc, a_l1_0, b_l1_0, a_l0_0, b_l0_0, a_l0_1, b_l0_1, m0, n0, k0, K, N, 0)
                l1_step(A, B, acc, a_l1_1, b_l1_1, a_l0_0, b_l0_0, a_l0_1, b_l0_1, m0, n0, k0 + KL1, K, N, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.tstore(C + m0 * N + n0, acc, stride=N)
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 0)    # acc is free for the next tile
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)


def run_gemm(n, seed=0):
    """(C, reference sample check ok, profile, wall seconds) for m = k = n."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    A = pto.alloc_tensor(a.nbytes, pto.float16)
    B = pto.alloc_tensor(b.nbytes, pto.float16)
    C = pto.alloc_tensor(n * n * 4, pto.float32)
    pto.memcpy_h2d(A, a)
    pto.memcpy_h2d(B, b)
    t0 = time.perf_counter()
    prof = pto.profile(gemm_performance, grid=(CORES,), args=(A, B, C, n, n, n))
    wall = time.perf_counter() - t0
    c = np.empty((n, n), np.float32)
    pto.memcpy_d2h(c, C)
    rows = rng.choice(n, 16, replace=False)         # check a sample of rows against numpy
    ref = a[rows].astype(np.float32) @ b.astype(np.float32)
    return bool(np.allclose(c[rows], ref, rtol=1e-3, atol=1e-2)), prof, wall


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gemm", default="1536,3072,6144")
    parser.add_argument("--fa", default="1024,2048,4096,8192")
    ns = parser.parse_args()
    clock = pto.machine().clock_ghz * 1e9
    errors = []
    print(f"machine {pto.machine().name}; simulated time = cycles / {pto.machine().clock_ghz} GHz")
    print("\nGEMM (A3, 24 cores, fp16 -> fp32, base 128x256x64, stepK 4): simulated | published")
    print(f"{'m=k=n':>6} {'time us':>16} {'TFLOP/s':>14} {'err':>7}  {'M %':>10} {'MTE1 %':>10} "
          f"{'MTE2 %':>10} {'FIX %':>10}  {'ok':>3} {'wall s':>7}")
    for n in (int(x) for x in ns.gemm.split(",") if x):
        ok, prof, wall = run_gemm(n)
        sim_us = prof.total_cycles / clock * 1e6
        pub_ms, mm, ext, ld, st = PUBLISHED_GEMM[n]
        flops = 2 * n ** 3
        sh = prof.pipe_shares("AIC")
        err = sim_us / (pub_ms * 1e3) - 1
        errors.append(("GEMM", n, err, flops / (sim_us * 1e-6) / 1e12, flops / (pub_ms * 1e-3) / 1e12))
        print(f"{n:>6} {sim_us:>7.1f} | {pub_ms * 1e3:>6.1f} {flops / sim_us / 1e6:>6.1f} | "
              f"{flops / pub_ms / 1e9:>5.1f} {100 * err:>+6.1f}%  {100 * sh['M']:>4.1f} | {mm:>4.1f} "
              f"{100 * sh['MTE1']:>4.1f} | {ext:>4.1f} {100 * sh['MTE2']:>4.1f} | {ld:>4.1f} "
              f"{100 * sh['FIX']:>4.1f} | {st:>4.1f}  {'yes' if ok else 'NO':>3} {wall:>7.1f}")
    print("\nFlash attention (910B2, HEAD 128, S0 = S1, one head): simulated | published")
    print(f"{'seq':>6} {'time us':>18} {'TFLOP/s':>16} {'err':>7}  {'ok':>3} {'wall s':>7}")
    for s in (int(x) for x in ns.fa.split(",") if x):
        t0 = time.perf_counter()
        out, want, prof = flash_attention.run(s)
        wall = time.perf_counter() - t0
        ok = bool(np.allclose(out, want, rtol=1e-2, atol=2e-3))
        sim_us = prof.total_cycles / clock * 1e6
        pub_us, pub_tf = PUBLISHED_FA[s]
        flops = 4 * s * s * flash_attention.D
        err = sim_us / pub_us - 1
        errors.append(("FA", s, err, flops / (sim_us * 1e-6) / 1e12, pub_tf))
        print(f"{s:>6} {sim_us:>8.2f} | {pub_us:>7.2f} {flops / sim_us / 1e6:>7.2f} | {pub_tf:>6.2f} "
              f"{100 * err:>+6.1f}%  {'yes' if ok else 'NO':>3} {wall:>7.1f}")
    for kind in ("GEMM", "FA"):
        rows = [e for e in errors if e[0] == kind]
        if len(rows) > 1:
            sim_order = [r[1] for r in sorted(rows, key=lambda r: r[3])]
            pub_order = [r[1] for r in sorted(rows, key=lambda r: r[4])]
            print(f"{kind}: sizes ordered by TFLOP/s, simulated {sim_order}, published {pub_order} "
                  f"({'same' if sim_order == pub_order else 'different'})")


if __name__ == "__main__":
    main()
