"""Benchmark (run by hand, not a test): an int8 GEMM whose epilogue dequantizes each output
channel by its own scale through the fixpipe (W8A8 with per-channel VDEQF16), on 24 AI cores.

    python benchmarks/quant_gemm.py [--m 768] [--n 1024] [--k 4096] [--repeat 3] [--engine fast|simpy]
                                    [--values off]

C[M, N] (float16) = VDEQF16(A[M, K] (int8) @ B[K, N] (int8), per-column quant words Q[N]): each
AI core computes one 128 x 256 tile of C with examples/gemm_manual.py's K step (L1 and L0
ping-pong, base tile [128, 256, 64] in int8), TLOADs its 256 quant words into a Mat tile,
`tmov`s them into the Scaling tile (TMOV_M2S) and stores the int32 Acc with
`pto.tstore(C, acc, quant=fp)` (TSTORE_FP). The warm-up's values are checked against numpy (the
int32 product is exact; each column's float32 scale has 10 mantissa bits, so its quant word
holds it exactly). Printed: the best wall time of --repeat profiles after the warm-up (values
computed, or with --values off the timing alone), tile instructions, cycles and instructions
per second, on the engine --engine names (PYPTO_TIMING_ENGINE; the default, auto, is the
compiled event loop where it can run the launch: --engine fast refuses one it cannot).
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))
import pypto_sim as pto  # noqa: E402
from gemm_manual import k_step  # noqa: E402  (one K step, its flags and ping-pong: dtype-free)

BM, BN, BK = 128, 256, 64


@pto.kernel(sync="manual")
def quant_gemm(A, B, Q, C, M, N, K):
    """C = VDEQF16(A @ B) by Q's word per column; one 128 x 256 tile of C per AI core."""
    with pto.cube():
        tiles_n = N // BN
        m0 = (pto.get_block_id() // tiles_n) * BM
        n0 = (pto.get_block_id() % tiles_n) * BN
        a_l1_0 = pto.alloc_tile(BM, BK, pto.int8, loc=pto.Mat)
        a_l1_1 = pto.alloc_tile(BM, BK, pto.int8, loc=pto.Mat)
        b_l1_0 = pto.alloc_tile(BK, BN, pto.int8, loc=pto.Mat)
        b_l1_1 = pto.alloc_tile(BK, BN, pto.int8, loc=pto.Mat)
        q_mat = pto.alloc_tile(1, BN, pto.int64, loc=pto.Mat)
        fp = pto.alloc_tile(1, BN, pto.int64, loc=pto.Scaling)
        a_l0_0 = pto.alloc_tile(BM, BK, pto.int8, loc=pto.Left)
        a_l0_1 = pto.alloc_tile(BM, BK, pto.int8, loc=pto.Left)
        b_l0_0 = pto.alloc_tile(BK, BN, pto.int8, loc=pto.Right)
        b_l0_1 = pto.alloc_tile(BK, BN, pto.int8, loc=pto.Right)
        acc = pto.alloc_tile(BM, BN, pto.int32, loc=pto.Acc)
        pto.tload(q_mat, Q + n0)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_FIX, 0)
        pto.tmov(fp, q_mat)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        for k0 in range(0, K, 2 * BK):
            k_step(A, B, acc, a_l1_0, b_l1_0, a_l0_0, b_l0_0, m0, n0, k0, K, N, 0)
            k_step(A, B, acc, a_l1_1, b_l1_1, a_l0_1, b_l0_1, m0, n0, k0 + BK, K, N, 1)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(C + m0 * N + n0, acc, stride=N, quant=fp)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)


def inputs(m, n, k, seed=0):
    """(a, b, scales, words): int8 operands and each column's float32 scale of 10 mantissa bits
    with its quant word (the scale's bits in bits 31:0, offset and sign 0)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    scales = np.float32((1.0 + rng.integers(0, 1024, n) / 1024.0) * 2.0 ** rng.integers(-20, -12, n))
    return a, b, scales, scales.view(np.uint32).astype(np.int64)


def reference(a, b, scales):
    """The float16 result as the fixpipe computes it: float32(acc) x scale, rounded to float32,
    saturated to +-65504, then to float16 (the int32 product is exact in float64 while
    K x 128 x 128 < 2^53)."""
    acc = a.astype(np.float64) @ b.astype(np.float64)
    return np.clip((acc.astype(np.float32) * scales).astype(np.float32), -65504, 65504).astype(np.float16)


def run(data, values=True):
    """One profile of the launch on data (inputs()); returns (profile, C as float16)."""
    a, b, _scales, words = data
    (m, k), n = a.shape, b.shape[1]
    if m % BM or n % BN or k % (2 * BK):
        raise pto.ArgumentError(f"quant_gemm needs M a multiple of {BM}, N of {BN}, K of {2 * BK}, got "
                                f"M={m} N={n} K={k}", kernel="quant_gemm", hint="pad the operands with zeros")
    with pto.Tensor(a.nbytes, pto.int8) as A, pto.Tensor(b.nbytes, pto.int8) as B, \
            pto.Tensor(words.nbytes, pto.int64) as Q, pto.Tensor(m * n * 2, pto.float16) as C:
        pto.memcpy_h2d(A, a)
        pto.memcpy_h2d(B, b)
        pto.memcpy_h2d(Q, words)
        prof = pto.profile(quant_gemm, grid=((m // BM) * (n // BN),), args=(A, B, Q, C, m, n, k), values=values)
        c = np.empty((m, n), np.float16)
        pto.memcpy_d2h(c, C)
    return prof, c


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=768)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engine", choices=("fast", "simpy"), default=None)
    ap.add_argument("--values", choices=("on", "off"), default="on")
    ns = ap.parse_args()
    if ns.engine:
        os.environ["PYPTO_TIMING_ENGINE"] = ns.engine
    data = inputs(ns.m, ns.n, ns.k)
    prof, c = run(data)                                     # warm-up: numba's cache, the kernel's compile
    ok = np.array_equal(c.view(np.uint16), reference(*data[:3]).view(np.uint16))
    best = None
    for _ in range(ns.repeat):
        t0 = time.perf_counter()
        prof, _c = run(data, values=ns.values == "on")
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    names = np.array(prof.pc_name)[prof.records.pc].astype(str)
    tiles = int(np.char.startswith(names, "T").sum())
    print(f"quant_gemm {ns.m}x{ns.n}x{ns.k} int8 -> VDEQF16 float16 on {(ns.m // BM) * (ns.n // BN)} AI cores, "
          f"engine {ns.engine or 'auto'}, values {ns.values}: warm-up's values {'equal numpy' if ok else 'DIFFER from numpy'}; "
          f"{prof.total_cycles:,} cycles; best of {ns.repeat}: {best:.3f} s, {tiles:,} tile instructions, "
          f"{tiles / best:,.0f} a second")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
