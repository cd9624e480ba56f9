"""examples/gemm_manual.py with its buffers and flags in two tile groups (pto.tile_group).

C[M, N] (float32) = A[M, K] (float16) @ B[K, N] (float16); each AI core computes one
128 x 256 tile of C:

    GM --TLOAD (MTE2)--> L1 (Mat) --TEXTRACT (MTE1)--> L0A / L0B --TMATMUL (M)--> L0C (Acc)
       <--TSTORE (FIX)------------------------------------------------------------'

`l1` double-buffers the L1 tiles of A and B (filled by MTE2, read by MTE1), `l0` the L0A / L0B
tiles (filled by MTE1, read by M). Each group's next / ready / take / release is one
WAIT_FLAG / SET_FLAG / WAIT_FLAG / SET_FLAG, the pre-arming happens where the group is created
and the draining at the end of `with pto.cube():`: the compiled kernel is gemm_manual's, flag
for flag (tests/test_tile_group.py checks the records and the cycle count). The K loop calls
k_step twice per iteration because a group's buffer is chosen at compile time: an iteration
must use a multiple of depth buffers.

Run:  python examples/gemm_tile_group.py [M N K]
"""
import sys

import numpy as np

import pypto_sim as pto
from gemm_manual import BK, BM, BN, run as run_gemm

DEPTH = 2


@pto.kernel
def k_step(A, B, acc, l1, l0, m0, n0, k0, K, N):
    """One K step on the next buffers of l1 and l0."""
    a_l1, b_l1 = l1.next()               # waits until MTE1 has read this L1 buffer
    pto.tload(a_l1, A + m0 * K + k0, stride=K)
    pto.tload(b_l1, B + k0 * N + n0, stride=N)
    l1.ready(a_l1)
    l1.take(a_l1)
    a_l0, b_l0 = l0.next()               # waits until M has read this L0 buffer
    pto.textract(a_l0, a_l1)
    pto.textract(b_l0, b_l1)
    l1.release(a_l1)
    l0.ready(a_l0)
    l0.take(a_l0)
    if k0 == 0:
        pto.tmatmul(acc, a_l0, b_l0)
    else:
        pto.tmatmul_acc(acc, a_l0, b_l0)
    l0.release(a_l0)


@pto.kernel(sync="manual")
def gemm(A, B, C, M, N, K):
    with pto.cube():
        tiles_n = N // BN
        m0 = (pto.get_block_id() // tiles_n) * BM
        n0 = (pto.get_block_id() % tiles_n) * BN
        l1 = pto.tile_group(DEPTH, (BM, BK, pto.float16, pto.Mat), (BK, BN, pto.float16, pto.Mat),
                            producer=pto.PIPE_MTE2, consumer=pto.PIPE_MTE1)
        l0 = pto.tile_group(DEPTH, (BM, BK, pto.float16, pto.Left), (BK, BN, pto.float16, pto.Right),
                            producer=pto.PIPE_MTE1, consumer=pto.PIPE_M)
        acc = pto.alloc_tile(BM, BN, pto.float32, loc=pto.Acc)
        for k0 in range(0, K, DEPTH * BK):
            k_step(A, B, acc, l1, l0, m0, n0, k0, K, N)
            k_step(A, B, acc, l1, l0, m0, n0, k0 + BK, K, N)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(C + m0 * N + n0, acc, stride=N)


def run(M=512, N=512, K=512, check=None, seed=0, mode="timing", values=True):
    """Run this GEMM on random data (gemm_manual's driver); return (C, reference, profile)."""
    return run_gemm(M, N, K, kernel=gemm, check=check, seed=seed, mode=mode, values=values)


def main(argv):
    M, N, K = (int(x) for x in argv[1:4]) if len(argv) >= 4 else (512, 512, 512)
    c, reference, prof = run(M, N, K)
    ok = np.allclose(c, reference, rtol=1e-3, atol=1e-3)
    print(f"GEMM {M}x{N}x{K} fp16 -> fp32 with tile groups: max |C - numpy| = "
          f"{float(np.max(np.abs(c - reference))):.2e} ({'ok' if ok else 'WRONG'})")
    print(prof.pipeline_summary())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
