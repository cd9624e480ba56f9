"""examples/gemm_ar_compute.py: pto-isa gemm_ar's compute GEMM as benchmarks/published.py runs it,
at a size where every tile can be counted by hand."""
import collections
import sys
from pathlib import Path

import numpy as np

import pypto_sim as pto

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import gemm_ar_compute  # noqa: E402


def test_tiles_are_split_over_blocks_as_gemm_ar_splits_them_and_c_is_the_product():
    """M = N = 300 pad to 384 x 512: 3 x 2 = 6 tiles of 128 x 256 on 4 blocks. Each block gets
    6 // 4 = 1 tile and the first 6 % 4 = 2 blocks one more (GEMM_AR_BLOCK_TILE_COUNT): blocks
    0-3 store 2, 2, 1, 1 tiles. K = 512 is one pass of the loop (two L1 panels of 256, eight
    K steps: one tmatmul and seven tmatmul_acc per tile). C, float16 from the float32
    accumulator, is numpy's product in the valid 300 x 300 and zero in the padding; the flags
    order every pipe hand-over (check="race" finds nothing; without the wait for B's load,
    it names the TEXTRACT of b_l1_0)."""
    m = k = n = 300
    k = 512
    rng = np.random.default_rng(1)
    a = np.zeros((384, k), np.float16)
    b = np.zeros((k, 512), np.float16)
    a[:m] = rng.standard_normal((m, k)).astype(np.float16)
    b[:, :n] = rng.standard_normal((k, n)).astype(np.float16)
    A = pto.alloc_tensor(a.nbytes, pto.float16)
    B = pto.alloc_tensor(b.nbytes, pto.float16)
    C = pto.alloc_tensor(384 * 512 * 2, pto.float16)
    pto.memcpy_h2d(A, a)
    pto.memcpy_h2d(B, np.ascontiguousarray(b.T))       # the kernel reads B as DN (B^T row-major)
    prof = pto.profile(gemm_ar_compute.gemm_ar_compute, grid=(4,), args=(A, B, C, 384, 512, k),
                       check="race")
    per_block = collections.Counter((e.block, e.inst) for e in prof.timeline)
    assert [per_block[(blk, "TSTORE_ACC")] for blk in range(4)] == [2, 2, 1, 1]
    assert [per_block[(blk, "TMATMUL")] for blk in range(4)] == [2, 2, 1, 1]
    assert [per_block[(blk, "TMATMUL_ACC")] for blk in range(4)] == [14, 14, 7, 7]
    c = np.empty((384, 512), np.float16)
    pto.memcpy_d2h(c, C)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=5e-2)
    assert not c[m:].any() and not c[:, n:].any()
