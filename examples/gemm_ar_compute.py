"""The compute GEMM of pto-isa's GEMM + AllReduce example, ported as written.

pto-isa kernels/manual/a2a3/gemm_ar (gemm_compute_kernel.cpp, gemm_ar_config.h, README.md): each
rank computes C = A B with A [M, K] and B [K, N] float16, C float16 (the fixpipe converts the
float32 accumulator), M = 5416, K = 6144, N = 1408 padded to 5504 x 1536: 43 x 6 = 258 output
tiles of 128 x 256 on 24 AIC blocks. As gemm_compute_kernel.cpp does it:

- block b takes a contiguous range of linear tile ids, floor(258 / 24) = 10 or one more for the
  first 258 % 24 = 18 blocks (GEMM_AR_BLOCK_START_TILE / _TILE_COUNT);
- the linear id is swizzled: row mi = id // 6, and odd rows run their six N tiles backwards
  (SwizzleTileIndex), so neighbouring tiles share B's columns;
- per tile: the four flags are set at the start and waited at the end (the pipeline drains
  between tiles), the K loop loads an L1 panel of stepK = 4 K steps of A (128 x 256) and B
  (256 x 256) into one of two L1 buffers (MTE2 -> MTE1 events 0 for A and 1 for B), extracts
  each 64-wide K step into L0A / L0B ping-pong (events 0, 1) and accumulates on the cube; the
  tile is stored as float16 and a pipe_barrier(PIPE_ALL) waits for it before the next tile.

B is in GM as DN (B^T row-major, N x K), as pto-isa keeps it: a B panel load reads 256 runs of
512 bytes, one per column of the panel (isa/gm_layouts.py).

Not ported: the enqueue of each tile id for the communication kernel (two scalar GM stores and a dcci) has
no counterpart: compute-only has no consumer, and pypto_sim's AI-core units have no scalar GM
stores.

    python examples/gemm_ar_compute.py [M K N]
"""
import sys

import numpy as np

import pypto_sim as pto

BM, BK, BN, STEPK = 128, 64, 256, 4
KL1 = BK * STEPK                      # K columns of A (rows of B) per L1 panel
CORES = 24
M, K, N = 5416, 6144, 1408            # gemm_ar_config.h (CONFIG_G_M / _K / _N)


@pto.kernel
def k_iter(acc, a_l1, b_l1, a_l0, b_l0, kk, s, ev, p):
    """K step s of the L1 panel in buffer p (kk = the tile's K step number), through L0
    buffer ev (ProcessKIteration after its TLOAD)."""
    pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, ev)
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
    if kk == 0:
        pto.tmatmul(acc, a_l0, b_l0)
    else:
        pto.tmatmul_acc(acc, a_l0, b_l0)
    pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, ev)


@pto.kernel
def panel(A, B, acc, a_l1, b_l1, a_l0_0, b_l0_0, a_l0_1, b_l0_1, m0, n0, k0, K, N, p):
    """Load the L1 panel at K column k0 into buffer p (A, then B, each with its own event),
    then run its four K steps."""
    pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, p)
    pto.tload(a_l1, A + m0 * K + k0, stride=K)
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
    pto.tload(b_l1, B + n0 * K + k0, stride=K, layout=pto.DN)
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 1)
    kk = k0 // BK
    k_iter(acc, a_l1, b_l1, a_l0_0, b_l0_0, kk, 0, 0, p)
    k_iter(acc, a_l1, b_l1, a_l0_1, b_l0_1, kk + 1, 1, 1, p)
    k_iter(acc, a_l1, b_l1, a_l0_0, b_l0_0, kk + 2, 2, 0, p)
    k_iter(acc, a_l1, b_l1, a_l0_1, b_l0_1, kk + 3, 3, 1, p)


@pto.kernel(sync="manual")
def gemm_ar_compute(A, B, C, MP, NP, K):
    """C[MP, NP] (float16) = A[MP, K] @ B (float16; B[K, NP] as DN: B^T [NP, K] row-major), MP
    a multiple of 128, NP of 256, K of 256 (G_K_LOOP % G_STEP_KA == 0: whole L1 panels, taken
    alternately from buffers 0 and 1 as mte2DBFlag toggles), as GemmComputeKernel on
    pto.get_grid_dim() AIC blocks."""
    with pto.cube():
        n_tiles = NP // BN
        total = (MP // BM) * n_tiles
        blocks = pto.get_grid_dim()
        b = pto.get_block_id()
        base = total // blocks
        rem = total % blocks
        start = b * base + rem
        count = base
        if b < rem:
            start = b * (base + 1)
            count = base + 1
        a_l1_0 = pto.alloc_tile(BM, KL1, pto.float16, loc=pto.Mat)
        a_l1_1 = pto.alloc_tile(BM, KL1, pto.float16, loc=pto.Mat)
        b_l1_0 = pto.alloc_tile(KL1, BN, pto.float16, loc=pto.Mat)
        b_l1_1 = pto.alloc_tile(KL1, BN, pto.float16, loc=pto.Mat)
        a_l0_0 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Left)
        a_l0_1 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Left)
        b_l0_0 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Right)
        b_l0_1 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(BM, BN, pto.float32, loc=pto.Acc)
        for t in range(start, start + count):
            mi = t // n_tiles
            ni = t % n_tiles
            if mi % 2 == 1:
                ni = n_tiles - 1 - ni                     # SwizzleTileIndex: odd rows reversed
            m0 = mi * BM
            n0 = ni * BN
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pairs = K // (2 * KL1) * (2 * KL1)
            for k0 in range(0, pairs, 2 * KL1):
                panel(A, B, acc, a_l1_0, b_l1_0, a_l0_0, b_l0_0, a_l0_1, b_l0_1, m0, n0, k0, K, NP, 0)
                panel(A, B, acc, a_l1_1, b_l1_1, a_l0_0, b_l0_0, a_l0_1, b_l0_1, m0, n0, k0 + KL1, K, NP, 1)
            if pairs < K:                                 # an odd number of panels: the last on buffer 0
                panel(A, B, acc, a_l1_0, b_l1_0, a_l0_0, b_l0_0, a_l0_1, b_l0_1, m0, n0, pairs, K, NP, 0)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.tstore(C + m0 * NP + n0, acc, stride=NP)
            pto.pipe_barrier(pto.PIPE_ALL)


def padded(x, mult):
    """x rounded up to a multiple of mult (gemm_ar_config.h's AlignUp)."""
    return -(-x // mult) * mult


def run(m=M, k=K, n=N, cores=CORES, seed=0, values=True):
    """Run the kernel on random data padded as gemm_ar's main.cpp pads it (zero rows of A and
    columns of B); return (sample check ok or None when values=False, profile). K is not padded
    (gemm_ar_config.h's G_K = G_ORIG_K): it must be a positive multiple of 256 (its static_asserts
    G_K_LOOP % G_STEP_KA == 0 and G_K_LOOP >= G_STEP_KA)."""
    if k < KL1 or k % KL1 or m < 1 or n < 1:
        raise pto.ArgumentError(f"gemm_ar_compute needs M, N >= 1 and K a positive multiple of {KL1}, "
                                f"got M={m} K={k} N={n}", kernel="gemm_ar_compute",
                                hint=f"K is not padded (gemm_ar_config.h: G_K = G_ORIG_K, static_assert "
                                f"G_K_LOOP % G_STEP_KA == 0): zero-pad A's columns and B's rows to a "
                                f"multiple of {KL1}")
    mp, np_ = padded(m, BM), padded(n, BN)
    rng = np.random.default_rng(seed)
    a = np.zeros((mp, k), np.float16)
    b = np.zeros((k, np_), np.float16)
    a[:m] = rng.standard_normal((m, k)).astype(np.float16)
    b[:, :n] = rng.standard_normal((k, n)).astype(np.float16)
    A = pto.alloc_tensor(a.nbytes, pto.float16)
    B = pto.alloc_tensor(b.nbytes, pto.float16)
    C = pto.alloc_tensor(mp * np_ * 2, pto.float16)
    pto.memcpy_h2d(A, a)
    pto.memcpy_h2d(B, np.ascontiguousarray(b.T))       # DN
    prof = pto.profile(gemm_ar_compute, grid=(cores,), args=(A, B, C, mp, np_, k), values=values)
    if not values:
        return None, prof
    c = np.empty((mp, np_), np.float16)
    pto.memcpy_d2h(c, C)
    rows = rng.choice(m, min(m, 16), replace=False)     # a sample of rows against numpy
    ref = a[rows].astype(np.float32) @ b.astype(np.float32)
    return bool(np.allclose(c[rows].astype(np.float32), ref, rtol=1e-2, atol=5e-2)), prof


def main(argv):
    m, k, n = (int(x) for x in argv[1:4]) if len(argv) > 3 else (M, K, N)
    ok, prof = run(m, k, n, values=len(argv) > 3)
    us = prof.total_cycles / (prof.machine.clock_ghz * 1e3)
    check = "not computed" if ok is None else ("ok" if ok else "WRONG")
    print(f"gemm_ar compute {m}x{k}x{n} on {CORES} AIC blocks: {prof.total_cycles} cycles = {us:.1f} us "
          f"at {prof.machine.clock_ghz} GHz, {2 * m * k * n / us / 1e6:.1f} TFLOP/s; values {check}")


if __name__ == "__main__":
    main(sys.argv)
