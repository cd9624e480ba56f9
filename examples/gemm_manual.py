"""A double-buffered fp16 GEMM on the real AI core, in PTO-ISA's vocabulary, with manual sync.

C[M, N] (float32) = A[M, K] (float16) @ B[K, N] (float16). Each AI core computes one
128 x 256 tile of C (base tile [128, 256, 64], as pto-isa's gemm_performance kernel):

    GM --TLOAD (MTE2)--> L1 (Mat) --TEXTRACT (MTE1)--> L0A / L0B --TMATMUL (M)--> L0C (Acc)
       <--TSTORE (FIX)------------------------------------------------------------'

L1 and L0 are ping-ponged (two buffers each), and the reverse flags are pre-armed before the
K loop and drained after it, as in pto-isa's kernels/manual/a2a3/gemm_performance:
MTE1 -> MTE2 says "this L1 buffer is free again", M -> MTE1 "this L0 buffer is free again".

Run:  python examples/gemm_manual.py [M N K]
"""
import sys

import numpy as np

import pypto_sim as pto

BM, BN, BK = 128, 256, 64


@pto.kernel
def k_step(A, B, acc, a_l1, b_l1, a_l0, b_l0, m0, n0, k0, K, N, ev):
    """One K step on buffer pair `ev` (0 ping, 1 pong)."""
    pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, ev)      # L1 buffer ev is free
    pto.tload(a_l1, A + m0 * K + k0, stride=K)
    pto.tload(b_l1, B + k0 * N + n0, stride=N)
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, ev)       # ... and now holds step k0
    pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, ev)
    pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, ev)         # L0 buffer ev is free
    pto.textract(a_l0, a_l1)
    pto.textract(b_l0, b_l1)
    pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, ev)       # L1 buffer ev may be refilled
    pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, ev)
    pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, ev)
    if k0 == 0:
        pto.tmatmul(acc, a_l0, b_l0)
    else:
        pto.tmatmul_acc(acc, a_l0, b_l0)
    pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, ev)          # L0 buffer ev may be refilled


@pto.kernel(sync="manual")
def gemm(A, B, C, M, N, K):
    with pto.cube():
        tiles_n = N // BN
        m0 = (pto.get_block_id() // tiles_n) * BM
        n0 = (pto.get_block_id() % tiles_n) * BN
        a_l1_0 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Mat)
        a_l1_1 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Mat)
        b_l1_0 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Mat)
        b_l1_1 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Mat)
        a_l0_0 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Left)
        a_l0_1 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Left)
        b_l0_0 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Right)
        b_l0_1 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(BM, BN, pto.float32, loc=pto.Acc)
        # pre-arm the reverse flags: both buffers of L1 and of L0 start free
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        for k0 in range(0, K, 2 * BK):
            k_step(A, B, acc, a_l1_0, b_l1_0, a_l0_0, b_l0_0, m0, n0, k0, K, N, 0)
            k_step(A, B, acc, a_l1_1, b_l1_1, a_l0_1, b_l0_1, m0, n0, k0 + BK, K, N, 1)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(C + m0 * N + n0, acc, stride=N)
        # drain the reverse flags
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)


def run(M=512, N=512, K=512, kernel=gemm, check=None, seed=0, mode="timing", values=True):
    """Run the GEMM on random data; return (C, reference, profile). mode="functional": values
    only, no cycles; values=False: cycles only, C is not computed."""
    if M % BM or N % BN or K % (2 * BK):
        raise ValueError(f"M, N, K must be multiples of {BM}, {BN}, {2 * BK}")
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    with pto.Tensor(a.nbytes, pto.float16) as A, pto.Tensor(b.nbytes, pto.float16) as B, \
            pto.Tensor(c.nbytes, pto.float32) as C:
        pto.memcpy_h2d(A, a)
        pto.memcpy_h2d(B, b)
        pto.memcpy_h2d(C, c)
        prof = pto.profile(kernel, grid=((M // BM) * (N // BN),), args=(A, B, C, M, N, K), check=check,
                           mode=mode, values=values)
        pto.memcpy_d2h(c, C)
    reference = a.astype(np.float32) @ b.astype(np.float32)
    return c, reference, prof


def main(argv):
    M, N, K = (int(x) for x in argv[1:4]) if len(argv) >= 4 else (512, 512, 512)
    c, reference, prof = run(M, N, K)
    err = float(np.max(np.abs(c - reference)))
    print(f"GEMM {M}x{N}x{K} fp16 -> fp32 on {(M // BM) * (N // BN)} AI cores: "
          f"max |C - numpy| = {err:.2e} ({'ok' if np.allclose(c, reference, rtol=1e-3, atol=1e-3) else 'WRONG'})")
    print(prof.pipeline_summary())
    shares = prof.pipe_shares(unit="AIC")
    print("AIC busy share of the kernel's cycles: " +
          ", ".join(f"{p} {100 * shares[p]:.1f}%" for p in ("MTE2", "MTE1", "M", "FIX")))
    return 0 if np.allclose(c, reference, rtol=1e-3, atol=1e-3) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
