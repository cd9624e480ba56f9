"""Benchmark (run by hand, not a test): simulated against published kernel results, with the
statistics of issue 24 (benchmarks/accuracy.py) and pto-isa's Perf-Sim beside ours.

    python benchmarks/published.py [--gemm 1536,3072,6144,7680] [--fa 1024,...,32768]
                                   [--topk 4800,3456,2304,4800h] [--conv 8,16,24,32,40] [--add 1,2,3,4]
                                   [--copy UB1,UB2,UB3,UB5,UB6,L11,L12,L14,L15] [--no-gemm-ar]
                                   [--values auto|on|off] [--json PATH]
                                   [--markdown PATH]

1. The A3 GEMM of pto-isa's kernels/manual/a2a3/gemm_performance (README.md): 24 cores as its
   4 x 6 grid (each owns a C block of m / 4 x n / 6 and walks its tiles M, N, then K), fp16 in
   and fp32 out, B in GM as DN (B^T row-major, gen_data's is_btrans), base tile [128, 256, 64],
   stepK 4 (L1 holds four K steps of A and B, double buffered; L0A/L0B ping-pong), manual flags
   as in gemm_performance_kernel.cpp (A's and B's loads on MTE2 -> MTE1 events 0 and 1, each
   TEXTRACT waiting for its own). Printed: the
   simulated and published time and TFLOP/s, and the AIC's TMATMUL (M), TEXTRACT (MTE1), TLOAD
   (MTE2) and TSTORE (FIX) busy shares beside the published ratios.
2. The compute GEMM of pto-isa's kernels/manual/a2a3/gemm_ar (examples/gemm_ar_compute.py,
   M=5416 K=6144 N=1408 on 24 AIC blocks, 910B), in the GEMM table.
3. The 910B2 flash attention of pto-isa's kernels/manual/common/flash_atten (README.md): HEAD
   128, S0 = S1, one head (the published TFLOP/s equal 4 S^2 D / time), simulated with
   examples/flash_atten_a3.py, the port of that kernel (fa_performance_kernel.cpp: CUBE_S0 128,
   TILE_S1 256, QK preload 4, 8-slot cube-vector FIFOs, 1 x 32 statistics; S0 / 128 blocks).
4. The A3 topk of pto-isa's kernels/manual/a2a3/topk (README.md; examples/topk.py, 48 vector
   cores, [rows, 1024] float32 rows 1280 apart, top 1000), checked against gen_data.py's golden,
   with the AIVs' V, scalar, MTE2 and MTE3 busy shares beside the published aiv_*_ratio; row
   "4800h" is the published half row (float16, topk 1008).
5. The A3 conv2d_forward of pto-isa's kernels/manual/a2a3/conv2d_forward (README.md;
   examples/conv2d_forward.py: 3 x 3, pad 1, implicit GEMM with TIMG2COL, 24 cores as 4 x 6, base
   128 x 256 x 48, stepK 3), checked against gen_data.py's golden, with the AIC's TMATMUL (M),
   TLOAD (MTE2), TEXTRACT + TIMG2COL (MTE1) and TSTORE (FIX) busy shares beside the published
   ones; rows are named by X's C1.

6. The Add of CANN's Ascend C tuning sample (asc-devkit add_high_performance, README measured on
   Atlas A2 training products; examples/add_high_performance.py): z = x + y on 8192 x 8192 half,
   cases 1 (one AIV, 8 KiB DataCopy's) to 4 (48 AIVs, 32 KiB, double buffered), with the AIVs'
   V, scalar, MTE2 and MTE3 shares beside the published aiv_*_ratio: a vector kernel that is
   nothing but its transfers, so its rows check TLOAD and TSTORE. Values are off (auto); the
   tests check them on smaller shapes.
7. The DataCopy streams of CANN's Ascend C sample data_copy (asc-devkit, README measured on
   Atlas A2/A3; examples/data_copy.py, benchmarks/published_copy.py): a [12288, 12288] half
   matrix read GM -> UB by 48 AIVs or GM -> L1 by 24 AICs in tiles of 128-byte to 2 KiB rows,
   once, 4 times whole or 4 times a quarter at a time: the HBM link, the L2's reuse and line
   fills, and each core's path, with the MTE2 ratio and L2 read hit rate where published.

Values (checked against numpy on a sample of rows) are on up to VALUES_UP_TO and off above
(``--values auto``), where their replay would dominate the run; values=False gives the same
cycles. Every machine-table number comes from per-instruction sources; nothing here is fitted to
the published kernel times: they are the validation. The relative errors are printed as measured.
Perf-Sim's error (PERFSIM_US, one core, per-core work of the same launch) is printed beside ours on
the GEMM, FA, topk and conv2d rows it runs.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import add_high_performance  # noqa: E402
import conv2d_forward  # noqa: E402
import flash_atten_a3  # noqa: E402
import gemm_ar_compute  # noqa: E402
import topk  # noqa: E402
from accuracy import Row, summaries  # noqa: E402
from published_copy import PUBLISHED_COPY, copy_key, copy_markdown, copy_rows  # noqa: E402

import pypto_sim as pto  # noqa: E402

BM, BN, BK, STEPK = 128, 256, 64, 4
KL1 = BK * STEPK                      # K columns of A (rows of B) per L1 tile
CORES = 24
M_GROUPS = 4                          # InitGMOffsets' mIter: the README's 4 x 6 grouping on 24 cores

# pto-isa kernels/manual/a2a3/gemm_performance/README.md (A3, 24 cores): m=k=n -> time (ms)
# and the TMATMUL / TEXTRACT / TLOAD / TSTORE ratios (%)
PUBLISHED_GEMM = {1536: (0.0388, 54.5, 42.2, 72.2, 7.7), 3072: (0.2067, 79.0, 62.0, 90.9, 5.8),
                  6144: (1.5060, 86.7, 68.1, 95.2, 3.1), 7680: (3.1680, 80.6, 63.0, 98.4, 2.4)}
# pto-isa kernels/manual/a2a3/gemm_ar/README.md, "Compute-only" on 910B (host-timed launch):
# 368.1 us for M=5416 K=6144 N=1408
PUBLISHED_GEMM_AR_US = 368.1
# pto-isa kernels/manual/common/flash_atten/README.md (910B2, HEAD 128, S0 = S1): seq -> (us, TFLOP/s)
PUBLISHED_FA = {1024: (20.960, 25.61), 2048: (32.461, 66.16), 4096: (88.902, 96.62),
                8192: (292.626, 117.42), 16384: (909.058, 151.19), 32768: (3262.645, 168.50)}
# pto-isa kernels/manual/a2a3/topk/README.md (A3, 48 vector cores, validCol 1024, cols 1280; float
# topk 1000, half ("h") topk 1008): rows -> (task_duration us, aiv_vec / aiv_scalar / aiv_mte2 /
# aiv_mte3 ratio %)
PUBLISHED_TOPK = {"4800": (324.106, 94.0, 3.2, 11.7, 10.4), "3456": (238.819, 91.5, 4.6, 12.3, 10.5),
                  "2304": (161.375, 88.7, 6.0, 12.4, 10.1), "4800h": (326.886, 93.7, 2.4, 11.5, 9.6)}
TOPK_PIPES = ("V", "S", "MTE2", "MTE3")
# CANN asc-devkit add_high_performance/README.md (Atlas A2 training products; 8192 x 8192 half):
# case -> (Task Duration us, aiv_vec / aiv_scalar / aiv_mte2 / aiv_mte3 ratio %)
PUBLISHED_ADD = {1: (6909.6, 11.0, 3.3, 87.3, 37.8), 2: (306.58, 5.3, 2.8, 72.5, 18.3),
                 3: (268.5, 4.9, 1.1, 70.5, 21.9), 4: (264.02, 5.0, 1.1, 97.3, 33.0)}
# pto-isa kernels/manual/a2a3/conv2d_forward/README.md (A3, 24 cores, fp16 in): X's C1 ->
# (X = [4, C1, H, W, 16], N = K's second dim x 16, time us, TMATMUL / TLOAD / TEXTRACT / TSTORE %)
PUBLISHED_CONV = {8: ((4, 8, 8, 48), 96 * 16, 32.2, 52.9, 43.9, 59.4, 5.6),
                  16: ((4, 16, 12, 64), 192 * 16, 147.3, 86.1, 75.1, 57.3, 4.0),
                  24: ((4, 24, 12, 96), 288 * 16, 470.9, 89.3, 78.8, 61.6, 2.8),
                  32: ((4, 32, 16, 96), 384 * 16, 1097.9, 90.8, 80.4, 61.1, 2.1),
                  40: ((4, 40, 15, 128), 480 * 16, 2131.2, 91.3, 80.7, 62.4, 1.7)}
CONV_PIPES = ("M", "MTE2", "MTE1", "FIX")
# pto-isa's own Perf-Sim (built from pto-isa commit ecb6c303, run on one core: the per-core work of
# the published launch), simulated us at 1.85 GHz. GEMM and FA: /work/shared/tools/ptoisa-perfsim
# (it segfaults on FA 4096); topk and conv2d: benchmarks/perfsim/build.sh (total cycles / 1850)
PERFSIM_US = {("GEMM", "1536"): 30.35, ("GEMM", "3072"): 201.19, ("GEMM", "6144"): 1567.8,
              ("GEMM", "7680"): 3056.5, ("FA", "1024"): 21.08, ("FA", "2048"): 38.13,
              ("TOPK", "4800"): 81.65, ("TOPK", "3456"): 58.84, ("TOPK", "2304"): 39.29, ("TOPK", "4800h"): 81.59,
              ("CONV", "8"): 17.61, ("CONV", "16"): 130.02, ("CONV", "24"): 425.20, ("CONV", "32"): 996.26,
              ("CONV", "40"): 1937.16}
# sizes run with values on under --values auto (above them values=False)
VALUES_UP_TO = {"GEMM": 3072, "FA": 4096, "TOPK": 4800, "CONV": 16, "ADD": 0}
PIPES = ("M", "MTE1", "MTE2", "FIX")
GEMM_AR = "gemm_ar"


@pto.kernel
def l1_step(A, B, acc, a_l1, b_l1, a_l0_0, b_l0_0, a_l0_1, b_l0_1, m0, n0, k0, K, N, p):
    """ProcessKIteration's TLOAD stage (kIter % stepKa == 0) into L1 buffer p (A 128 x 256,
    B 256 x 256), each load flagging MTE1 on its own event (0 for A, 1 for B), then the four K
    steps of 64 that read the buffer through L0 ping-pong (events 0, 1) and the cube."""
    pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, p)       # L1 buffer p is free
    pto.tload(a_l1, A + m0 * K + k0, stride=K)
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
    pto.tload(b_l1, B + n0 * K + k0, stride=K, layout=pto.DN)      # B is DN: B^T row-major
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 1)
    k_sub(acc, a_l1, b_l1, a_l0_0, b_l0_0, k0, 0, 0, p)
    k_sub(acc, a_l1, b_l1, a_l0_1, b_l0_1, k0, 1, 1, p)
    k_sub(acc, a_l1, b_l1, a_l0_0, b_l0_0, k0, 2, 0, p)
    k_sub(acc, a_l1, b_l1, a_l0_1, b_l0_1, k0, 3, 1, p)


@pto.kernel
def k_sub(acc, a_l1, b_l1, a_l0, b_l0, k0, s, ev, p):
    """K step s (of STEPK) of the L1 tile at k0, through L0 buffer ev: the first step waits for
    A's load before its TEXTRACT and for B's before B's; the last frees L1 buffer p."""
    pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, ev)         # L0 buffer ev is free
    if s == 0:
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
    pto.textract(a_l0, a_l1, 0, s * BK)
    if s == 0:
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 1)
    pto.textract(b_l0, b_l1, s * BK, 0)
    if s == STEPK - 1:
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, p)    # L1 buffer p may be refilled
    pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, ev)
    pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, ev)
    if k0 + s == 0:
        pto.tmatmul(acc, a_l0, b_l0)
    else:
        pto.tmatmul_acc(acc, a_l0, b_l0)
    pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, ev)


@pto.kernel(sync="manual")
def gemm_performance(A, B, C, M, N, K):
    """RunGemmE2E: block b owns the C block [M / 4, N / (grid / 4)] at m group b % 4 and n group
    b // 4 (InitGMOffsets: mIter = m / singleCoreM = 4; on 24 cores the README's 4 x 6 grouping)
    and walks its base tiles i (M), j (N), then K, as the source's three loops."""
    with pto.cube():
        single_m = M // M_GROUPS
        single_n = N // (pto.get_grid_dim() // M_GROUPS)
        m_base = (pto.get_block_id() % M_GROUPS) * single_m
        n_base = (pto.get_block_id() // M_GROUPS) * single_n
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
        for i in range(single_m // BM):
            for j in range(single_n // BN):
                m0 = m_base + i * BM
                n0 = n_base + j * BN
                for k0 in range(0, K, 2 * KL1):
                    l1_step(A, B, acc, a_l1_0, b_l1_0, a_l0_0, b_l0_0, a_l0_1, b_l0_1, m0, n0, k0, K, N, 0)
                    l1_step(A, B, acc, a_l1_1, b_l1_1, a_l0_0, b_l0_0, a_l0_1, b_l0_1, m0, n0, k0 + KL1, K, N,
                            1)
                pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
                pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
                pto.tstore(C + m0 * N + n0, acc, stride=N)
                pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 0)    # acc is free for the next tile
                pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)


def check_gemm_shape(m, k, n, cores=CORES):
    """ValueError unless the source's core grid and tiles divide m x k x n: m into 4 groups of
    128-row tiles, n into cores / 4 groups of 256-column tiles, k into pairs of 256-deep L1 tiles."""
    if cores % M_GROUPS or m % (M_GROUPS * BM) or n % (cores // M_GROUPS * BN) or k % (2 * KL1):
        raise ValueError(f"gemm_performance on {cores} cores needs m a multiple of {M_GROUPS * BM}, n of "
                         f"{cores // M_GROUPS * BN} and k of {2 * KL1} (a {M_GROUPS} x {cores // M_GROUPS} "
                         f"core grid of base {BM} x {BN} tiles, two L1 buffers of K {KL1}); got m={m} k={k} n={n}")


def run_gemm(n, values=True, seed=0):
    """(sample check ok, or None with values off; profile; wall seconds) for m = k = n."""
    check_gemm_shape(n, n, n)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    A = pto.alloc_tensor(a.nbytes, pto.float16)
    B = pto.alloc_tensor(b.nbytes, pto.float16)
    C = pto.alloc_tensor(n * n * 4, pto.float32)
    pto.memcpy_h2d(A, a)
    pto.memcpy_h2d(B, np.ascontiguousarray(b.T))      # DN, as gen_data.py writes x2_gm
    t0 = time.perf_counter()
    prof = pto.profile(gemm_performance, grid=(CORES,), args=(A, B, C, n, n, n), values=values)
    wall = time.perf_counter() - t0
    if not values:
        return None, prof, wall
    c = np.empty((n, n), np.float32)
    pto.memcpy_d2h(c, C)
    rows = rng.choice(n, 16, replace=False)         # check a sample of rows against numpy
    ref = a[rows].astype(np.float32) @ b.astype(np.float32)
    return bool(np.allclose(c[rows], ref, rtol=1e-3, atol=1e-2)), prof, wall


def values_for(table, size, mode):
    """Whether a row runs with values: --values on / off, or auto (up to VALUES_UP_TO)."""
    return mode == "on" or (mode == "auto" and size <= VALUES_UP_TO[table])


def _us(prof):
    """The simulated time a published Task Duration is compared with."""
    return prof.task_duration_us()


def _check(ok):
    return "off" if ok is None else ("yes" if ok else "NO")


def gemm_rows(sizes, gemm_ar, mode):
    """Run the GEMM rows and print them; returns [(Row, extra)] with extra the JSON's other fields."""
    if not sizes and not gemm_ar:
        return []
    print("\nGEMM (24 cores, fp16 in, base 128x256x64, stepK 4): simulated | published; Perf-Sim per core")
    print(f"{'m=k=n':>8} {'time us':>16} {'TFLOP/s':>14} {'err':>7} {'Perf-Sim':>8}  {'M %':>10} "
          f"{'MTE1 %':>10} {'MTE2 %':>10} {'FIX %':>10}  {'values':>6} {'wall s':>6}")
    out = []
    runs = [(n, 2 * n ** 3, PUBLISHED_GEMM[n][0] * 1e3, PUBLISHED_GEMM[n][1:]) for n in sizes]
    if gemm_ar:
        m, k, n = gemm_ar_compute.M, gemm_ar_compute.K, gemm_ar_compute.N
        runs.append((GEMM_AR, 2 * m * k * n, PUBLISHED_GEMM_AR_US, None))
    for size, flops, pub_us, pub_shares in runs:
        t0 = time.perf_counter()
        if size == GEMM_AR:
            # values only with --values on: its 5504 x 6144 x 1536 is larger than the auto limit
            ok, prof = gemm_ar_compute.run(values=mode == "on")
        else:
            ok, prof, _ = run_gemm(size, values_for("GEMM", size, mode))
        wall = time.perf_counter() - t0
        sim_us = _us(prof)
        sh = prof.pipe_shares("AIC")
        shares = {p: (100 * sh[p], pub) for p, pub in zip(PIPES, pub_shares)} if pub_shares else {}
        row = Row("GEMM", str(size), sim_us, pub_us, shares, PERFSIM_US.get(("GEMM", str(size))))
        cells = "  ".join(f"{100 * sh[p]:>4.1f} | {shares[p][1]:>4.1f}" if p in shares else
                          f"{100 * sh[p]:>4.1f} |  -  " for p in PIPES)
        other = f"{100 * row.other_error:>+7.1f}%" if row.other_us else f"{'-':>8}"
        print(f"{size:>8} {sim_us:>7.1f} | {pub_us:>6.1f} {flops / sim_us / 1e6:>6.1f} | "
              f"{flops / pub_us / 1e6:>5.1f} {100 * row.error:>+6.1f}% {other}  {cells}  "
              f"{_check(ok):>6} {wall:>6.1f}")
        out.append((row, {"tflops": flops / sim_us / 1e6, "published_tflops": flops / pub_us / 1e6,
                          "simulated_shares": {p: 100 * sh[p] for p in PIPES}, "cycles": prof.total_cycles,
                          "values_ok": ok, "wall_s": wall}))
    return out


def fa_rows(sizes, mode):
    """Run the flash-attention rows and print them; returns [(Row, extra)]."""
    if not sizes:
        return []
    print("\nFlash attention (910B2, HEAD 128, S0 = S1, one head; pto-isa's kernel ported): simulated | "
          "published; Perf-Sim per core")
    print(f"{'seq':>8} {'time us':>18} {'TFLOP/s':>16} {'err':>7} {'Perf-Sim':>8}  {'values':>6} {'wall s':>6}")
    out = []
    for s in sizes:
        values = values_for("FA", s, mode)
        t0 = time.perf_counter()
        o, want, prof = flash_atten_a3.run(s, values=values)
        wall = time.perf_counter() - t0
        ok = bool(np.allclose(o, want, rtol=1e-2, atol=2e-3)) if values else None
        sim_us = _us(prof)
        pub_us, pub_tf = PUBLISHED_FA[s]
        flops = 4 * s * s * flash_atten_a3.HEAD
        row = Row("FA", str(s), sim_us, pub_us, {}, PERFSIM_US.get(("FA", str(s))))
        other = f"{100 * row.other_error:>+7.1f}%" if row.other_us else f"{'-':>8}"
        print(f"{s:>8} {sim_us:>8.2f} | {pub_us:>7.2f} {flops / sim_us / 1e6:>7.2f} | {pub_tf:>6.2f} "
              f"{100 * row.error:>+6.1f}% {other}  {_check(ok):>6} {wall:>6.1f}")
        out.append((row, {"tflops": flops / sim_us / 1e6, "published_tflops": pub_tf,
                          "cycles": prof.total_cycles, "values_ok": ok, "wall_s": wall}))
    return out


def _aiv_row(table, name, prof, published, ok, wall, unit="AIV"):
    """Print one row of a vector-core table (time, and V / S / MTE2 / MTE3 busy shares of
    ``unit`` beside the published aiv_*_ratio); return (Row, extra)."""
    sim_us = _us(prof)
    pub_us, *pub_shares = published
    sh = prof.pipe_shares(unit)
    shares = {p: (100 * sh[p], pub) for p, pub in zip(TOPK_PIPES, pub_shares)}
    row = Row(table, str(name), sim_us, pub_us, shares, PERFSIM_US.get((table, str(name))))
    cells = "  ".join(f"{shares[p][0]:>4.1f} | {shares[p][1]:>4.1f}" for p in TOPK_PIPES)
    print(f"{name:>8} {sim_us:>8.2f} | {pub_us:>7.2f} {100 * row.error:>+6.1f}% {_err(row.other_error):>8}  "
          f"{cells}  {_check(ok):>6} {wall:>6.1f}")
    return row, {"simulated_shares": {p: 100 * sh[p] for p in TOPK_PIPES}, "cycles": prof.total_cycles,
                 "values_ok": ok, "wall_s": wall}


def _aiv_header(title):
    print(title)
    print(f"{'':>8} {'time us':>18} {'err':>7} {'Perf-Sim':>8}  {'V %':>11} {'S %':>11} {'MTE2 %':>11} {'MTE3 %':>11}  "
          f"{'values':>6} {'wall s':>6}")


def topk_rows(sizes, mode):
    """Run the topk rows and print them; returns [(Row, extra)]."""
    if not sizes:
        return []
    _aiv_header("\nTopk (A3, 48 vector cores, [rows, 1024] float32 -> top 1000, h: float16 -> top 1008): "
                "simulated | published; AIV busy shares; rows:")
    out = []
    for n in sizes:
        rows, dtype = int(n.rstrip("h")), ("float16" if n.endswith("h") else "float32")
        values = values_for("TOPK", rows, mode)
        t0 = time.perf_counter()
        got_v, got_i, prof = topk.run(rows, values=values, dtype=dtype)
        wall = time.perf_counter() - t0
        ok = None
        if values:
            _, _, want_v, want_i = topk.golden(rows, dtype=dtype)
            ok = bool(np.array_equal(got_v, want_v) and np.array_equal(got_i, want_i))
        out.append(_aiv_row("TOPK", n, prof, PUBLISHED_TOPK[n], ok, wall))
    return out


def add_rows(cases, mode):
    """Run the Add cases of CANN's Ascend C tuning sample and print them; returns [(Row, extra)].
    Case 1 runs on one AIV (blockDim 1), so its shares are AIV0's."""
    if not cases:
        return []
    _aiv_header("\nAdd (A2, Ascend C add_high_performance, 8192 x 8192 half): simulated | published; "
                "AIV busy shares; case:")
    out = []
    for case in cases:
        t0 = time.perf_counter()
        ok, prof = add_high_performance.run(case, values=values_for("ADD", case, mode))
        wall = time.perf_counter() - t0
        unit = "AIV0" if add_high_performance.CASES[case][0] == 1 else "AIV"
        out.append(_aiv_row("ADD", case, prof, PUBLISHED_ADD[case], ok, wall, unit))
    return out


def conv_rows(sizes, mode):
    """Run the conv2d_forward rows (by X's C1) and print them; returns [(Row, extra)]."""
    if not sizes:
        return []
    print("\nconv2d_forward (A3, 24 cores, fp16, 3 x 3 pad 1, base 128x256x48, stepK 3): simulated | published; "
          "AIC busy shares")
    print(f"{'X':>18} {'N':>5} {'time us':>18} {'err':>7} {'Perf-Sim':>8}  {'M %':>11} {'MTE2 %':>11} {'MTE1 %':>11} "
          f"{'FIX %':>11}  {'values':>6} {'wall s':>6}")
    out = []
    for c1 in sizes:
        (b, _, h, w), n, pub_us, *pub_shares = PUBLISHED_CONV[c1]
        values = values_for("CONV", c1, mode)
        t0 = time.perf_counter()
        err, prof = conv2d_forward.run(b, c1, h, w, n, values=values)
        wall = time.perf_counter() - t0
        ok = None if err is None else err <= conv2d_forward.TOLERANCE
        sim_us = _us(prof)
        sh = prof.pipe_shares("AIC")
        shares = {p: (100 * sh[p], pub) for p, pub in zip(CONV_PIPES, pub_shares)}
        row = Row("CONV", str(c1), sim_us, pub_us, shares, PERFSIM_US.get(("CONV", str(c1))))
        cells = "  ".join(f"{shares[p][0]:>4.1f} | {shares[p][1]:>4.1f}" for p in CONV_PIPES)
        name = f"[{b},{c1},{h},{w},16]"
        print(f"{name:>18} {n:>5} {sim_us:>8.1f} | {pub_us:>7.1f} {100 * row.error:>+6.1f}% "
              f"{_err(row.other_error):>8}  {cells}  "
              f"{_check(ok):>6} {wall:>6.1f}")
        out.append((row, {"x": [b, c1, h, w, 16], "n": n, "cycles": prof.total_cycles, "values_ok": ok,
                          "simulated_shares": {p: 100 * sh[p] for p in CONV_PIPES}, "wall_s": wall}))
    return out


def print_statistics(results, stats):
    """The per-table and overall statistics, then the TFLOP/s ordering of each kernel's sizes."""
    print("\nStatistics (error = simulated / published - 1; Perf-Sim: pto-isa ecb6c303, one core)")
    for name, st in stats.items():
        r = "-" if st["r"] is None else f"{st['r']:.4f}"
        pts = "  ".join(f"{p} {v:.1f}" for p, v in st["max_abs_points"].items())
        print(f"{name:>8}: n={st['n']}  MAPE {st['mape']:.1f}%  max |error| {st['max_abs_error']:.1f}%  "
              f"r {r}" + (f"  max |share - published| (points): {pts}" if pts else ""))
        if st["other_rows"]:
            print(f"{'':>10}on the {len(st['other_rows'])} rows Perf-Sim covers ({', '.join(st['other_rows'])}): "
                  f"MAPE ours {st['mape_common']:.1f}%, Perf-Sim {st['other_mape_common']:.1f}%")
    for table in ("GEMM", "FA"):
        rows = [(r, x) for r, x in results if r.table == table and r.name != GEMM_AR]
        if len(rows) > 1:
            sim_order = [int(r.name) for r, x in sorted(rows, key=lambda rx: rx[1]["tflops"])]
            pub_order = [int(r.name) for r, x in sorted(rows, key=lambda rx: rx[1]["published_tflops"])]
            print(f"{table}: sizes ordered by TFLOP/s, simulated {sim_order}, published {pub_order} "
                  f"({'same' if sim_order == pub_order else 'different'})")


def _commit():
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def write_json(path, results, stats, meta):
    """The rows (with the extra figures) and the statistics as JSON, for docs to cite."""
    rows = []
    for row, extra in results:
        rows.append({"table": row.table, "name": row.name, "simulated_us": row.simulated_us,
                     "published_us": row.published_us, "error_pct": 100 * row.error,
                     "shares": {p: {"simulated": s, "published": pub} for p, (s, pub) in row.shares.items()},
                     "points": row.points, "perfsim_us": row.other_us,
                     "perfsim_error_pct": None if row.other_us is None else 100 * row.other_error, **extra})
    Path(path).write_text(json.dumps({**meta, "rows": rows, "statistics": stats}, indent=1) + "\n")


def _cell(x, fmt):
    return "-" if x is None else format(x, fmt)


def _err(e):
    return "-" if e is None else f"{100 * e:+.1f}%"


def markdown(results, stats, meta):
    """The rows and statistics as the Markdown tables docs/performance.md shows."""
    lines = [f"Generated by `python benchmarks/published.py --markdown` at {meta['commit']}, {meta['date']}; "
             f"machine {meta['machine']}, {meta['clock_ghz']} GHz.", "",
             "| GEMM | simulated us | published us | error | Perf-Sim error | TFLOP/s sim / pub "
             "| M % sim / pub | MTE1 % | MTE2 % | FIX % | values |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    tables = {row.table for row, _ in results}
    if "GEMM" not in tables:
        lines = lines[:2]
    for row, x in results:
        if row.table != "GEMM":
            continue
        sh = x["simulated_shares"]
        pipes = " | ".join(f"{sh[p]:.1f} / {row.shares[p][1]:.1f}" if p in row.shares else f"{sh[p]:.1f} / -"
                           for p in PIPES)
        name = f"{row.name}^3" if row.name != GEMM_AR else "gemm_ar 5416x6144x1408"
        lines.append(f"| {name} | {row.simulated_us:.1f} | {row.published_us:.1f} | {100 * row.error:+.1f}% | "
                     f"{_err(row.other_error)} | "
                     f"{x['tflops']:.1f} / {x['published_tflops']:.1f} | {pipes} | {_check(x['values_ok'])} |")
    if "FA" in tables:
        lines += ["", "| FA seq | simulated us | published us | error | Perf-Sim error | TFLOP/s sim / pub "
                  "| values |", "|---|---|---|---|---|---|---|"]
    for row, x in results:
        if row.table == "FA":
            lines.append(f"| {row.name} | {row.simulated_us:.2f} | {row.published_us:.2f} | {100 * row.error:+.1f}% | "
                         f"{_err(row.other_error)} | "
                         f"{x['tflops']:.2f} / {x['published_tflops']:.2f} | {_check(x['values_ok'])} |")
    for table, first in (("TOPK", "topk rows"), ("ADD", "Add case")):
        if table in tables:
            lines += ["", f"| {first} | simulated us | published us | error | Perf-Sim error | V % sim / pub "
                      "| S % | MTE2 % | MTE3 % | values |", "|---|---|---|---|---|---|---|---|---|---|"]
        for row, x in results:
            if row.table == table:
                pipes = " | ".join(f"{row.shares[p][0]:.1f} / {row.shares[p][1]:.1f}" for p in TOPK_PIPES)
                lines.append(f"| {row.name} | {row.simulated_us:.2f} | {row.published_us:.2f} | "
                             f"{100 * row.error:+.1f}% | {_err(row.other_error)} | {pipes} | "
                             f"{_check(x['values_ok'])} |")
    if "CONV" in tables:
        lines += ["", "| conv2d X (N) | simulated us | published us | error | Perf-Sim error | M % sim / pub "
                  "| MTE2 % | MTE1 % | FIX % | values |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row, x in results:
        if row.table == "CONV":
            pipes = " | ".join(f"{row.shares[p][0]:.1f} / {row.shares[p][1]:.1f}" for p in CONV_PIPES)
            lines.append(f"| {x['x']} ({x['n']}) | {row.simulated_us:.1f} | {row.published_us:.1f} | "
                         f"{100 * row.error:+.1f}% | {_err(row.other_error)} | {pipes} | {_check(x['values_ok'])} |")
    lines += copy_markdown(results)
    lines += ["", "| rows | n | MAPE | max abs error | r | max abs share - published (points) "
              "| rows Perf-Sim covers | MAPE there: ours / Perf-Sim |", "|---|---|---|---|---|---|---|---|"]
    for name, st in stats.items():
        pts = ", ".join(f"{p} {v:.1f}" for p, v in st["max_abs_points"].items()) or "-"
        common = (f"{st['mape_common']:.1f}% / {st['other_mape_common']:.1f}%" if st["other_rows"] else "-")
        lines.append(f"| {name} | {st['n']} | {st['mape']:.1f}% | {st['max_abs_error']:.1f}% | "
                     f"{_cell(st['r'], '.4f')} | {pts} | {len(st['other_rows'])} | {common} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--gemm", default=",".join(map(str, PUBLISHED_GEMM)),
                        help="m=k=n sizes of gemm_performance (default: every published one)")
    parser.add_argument("--fa", default=",".join(map(str, PUBLISHED_FA)),
                        help="sequence lengths of flash attention (default: every published one)")
    parser.add_argument("--topk", default=",".join(map(str, PUBLISHED_TOPK)),
                        help="rows of topk, h for the half row (default: every published row)")
    parser.add_argument("--conv", default=",".join(map(str, PUBLISHED_CONV)),
                        help="conv2d_forward rows by X's C1 (default: every published one)")
    parser.add_argument("--add", default=",".join(map(str, PUBLISHED_ADD)),
                        help="cases of the Ascend C Add tuning sample (default: 1 to 4)")
    parser.add_argument("--copy", default=",".join(f"{p}{s}" for p, s in PUBLISHED_COPY),
                        help="scenarios of the Ascend C data_copy sample (default: every one run)")
    parser.add_argument("--no-gemm-ar", action="store_true", help="leave out gemm_ar's compute GEMM")
    parser.add_argument("--values", choices=("auto", "on", "off"), default="auto",
                        help=f"auto: values on up to {VALUES_UP_TO}, values=False above (same cycles)")
    parser.add_argument("--json", metavar="PATH", help="write the rows and statistics here")
    parser.add_argument("--markdown", metavar="PATH", help="write them as docs/performance.md's tables here")
    ns = parser.parse_args(argv)
    t0 = time.perf_counter()
    load0 = os.getloadavg()
    m = pto.machine()
    print(f"machine {m.name}; simulated time = msprof's Task Duration, (cycles + task_overhead_cycles "
          f"{m.task_overhead_cycles}) / {m.clock_ghz} GHz; values: {ns.values} "
          f"(auto: on up to GEMM {VALUES_UP_TO['GEMM']}, FA {VALUES_UP_TO['FA']}, topk "
          f"{VALUES_UP_TO['TOPK']}, conv C1 {VALUES_UP_TO['CONV']}; gemm_ar and Add off; "
          "values=False above, same cycles)")
    gemm = [int(x) for x in ns.gemm.split(",") if x]
    fa = [int(x) for x in ns.fa.split(",") if x]
    tk = [x for x in ns.topk.split(",") if x]
    cv = [int(x) for x in ns.conv.split(",") if x]
    ad = [int(x) for x in ns.add.split(",") if x]
    cp = [copy_key(x) for x in ns.copy.split(",") if x]
    for what, sizes, published in (("--gemm", gemm, PUBLISHED_GEMM), ("--fa", fa, PUBLISHED_FA),
                                   ("--topk", tk, PUBLISHED_TOPK), ("--conv", cv, PUBLISHED_CONV),
                                   ("--add", ad, PUBLISHED_ADD), ("--copy", cp, PUBLISHED_COPY)):
        unknown = [x for x in sizes if x not in published]
        if unknown:
            parser.error(f"{what}: no published result for {unknown} (published: {list(published)})")
    if not (gemm or fa or tk or cv or ad or cp or not ns.no_gemm_ar):
        parser.error("no rows to run")
    results = gemm_rows(gemm, not ns.no_gemm_ar, ns.values)
    results += fa_rows(fa, ns.values)
    results += topk_rows(tk, ns.values)
    results += conv_rows(cv, ns.values)
    results += add_rows(ad, ns.values)
    results += copy_rows(cp)
    stats = summaries(r for r, _ in results)
    print_statistics(results, stats)
    wall = time.perf_counter() - t0
    load1 = os.getloadavg()
    print(f"\nwall time {wall:.1f} s on {os.cpu_count()} cores; load average at start "
          f"{load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f}, at end {load1[0]:.2f} / {load1[1]:.2f} / "
          f"{load1[2]:.2f} (1 / 5 / 15 min)")
    meta = {"commit": _commit(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": m.name, "clock_ghz": m.clock_ghz, "values": ns.values, "values_up_to": VALUES_UP_TO,
            "wall_s": wall, "cpu_count": os.cpu_count(), "loadavg_start": load0, "loadavg_end": load1}
    if ns.json:
        write_json(ns.json, results, stats, meta)
        print(f"wrote {ns.json}")
    if ns.markdown:
        Path(ns.markdown).write_text(markdown(results, stats, meta))
        print(f"wrote {ns.markdown}")


if __name__ == "__main__":
    main()
