"""pto-isa's st suite TMatmulLayoutTest (tests/cpu/st/testcase/tmatmul_layout/main.cpp at
3186c381), both TESTs, in the AI-core API. They are CPU-tile tests (FillAll / SetValue on the
tiles, the expected values by ComputeExpected's loops, EXPECT_FLOAT_EQ over every element): here
the tiles' values come from GM through Mat tiles (TLOAD, then TMOV to Left / Right, TEXTRACT to
Bias), the results go back with TSTORE from Acc, and the expected values are main.cpp's formula
in numpy. Every product and sum is a small multiple of 0.5, exact in float32, so out equals the
expected values.

- AcceptsExplicitRowMajorLeftTileEncoding: a float32 16 x 16 Left tile spelled out as
  Tile<TileType::Left, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::RowMajor, 512>, which
  is A2/A3's TileLeft (include/pto/common/pto_tile.hpp lines 1716-1718, under
  PTO_NPU_ARCH_A2A3; the CPU simulation's own TileLeft is ColMajor, lines 1726-1730): pypto_sim's
  Left tile is that tile. TMATMUL(dst, lhs, rhs), then TMATMUL_ACC(accOut, accIn, lhs, rhs) with
  accIn all 1.0. A2/A3's TMATMUL_ACC_IMPL accumulates into cOut and never reads cIn
  (include/pto/npu/a2a3/TMatmul.hpp lines 169-181), so on the device the accumulator is one tile:
  here accIn's 1.0 are put in the Acc tile by a matmul (identity @ all-ones) and TMATMUL_ACC(acc,
  acc, lhs, rhs) adds to them (pypto_sim refuses a different cIn: tests/test_ptoisa_st_tmatmul.py).
- CoversGemvAndBiasVariants: TGEMV, TGEMV_ACC (accIn all 1.0) and TGEMV_BIAS (bias[c] = c) of
  a 16 x 16 lhs. The CPU simulation's TGEMV multiplies every valid row of lhs, but A2/A3's
  TGEMV_IMPL / TGEMV_ACC_IMPL / TGEMV_BIAS_IMPL issue the mad with m = 1 (TMatmul.hpp lines
  109-155): only row 0 of the result is computed on the device. The port multiplies lhs's row 0
  (a Left tile of valid (1, 16), as pypto_sim's tgemv requires) and checks row 0 of main.cpp's
  expected values; that the 16-row form is refused is checked too.

Kernels run sync="manual" with the flags a device kernel needs (MTE2 -> MTE1 -> M -> FIX), in
mode="timing" under check=("sync", "race") and in mode="functional".

Not ported: nothing."""
import numpy as np
import pytest

import pypto_sim as pto

RUNS = [("timing", ("sync", "race")), ("functional", None)]

# operands' Mat tiles loaded, moved to L0, the identity @ all-ones matmul that fills the
# accumulator with 1.0; {body} then multiplies and stores
KERNEL = """
@pto.kernel(sync="manual")
def k(L, R, I, J, BIAS, O0, O1, O2):
    with pto.cube():
        l_mat = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat, valid=({m}, 16))
        r_mat = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        i_mat = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat, valid=({m}, 16))
        j_mat = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        b_mat = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat, valid=(1, 16))
        lhs = pto.alloc_tile(16, 16, pto.float32, loc=pto.Left, valid=({m}, 16))
        ident = pto.alloc_tile(16, 16, pto.float32, loc=pto.Left, valid=({m}, 16))
        rhs = pto.alloc_tile(16, 16, pto.float32, loc=pto.Right)
        ones = pto.alloc_tile(16, 16, pto.float32, loc=pto.Right)
        bias = pto.alloc_tile(1, 16, pto.float32, loc=pto.Bias)
        c0 = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc, valid=({m}, 16))
        c1 = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc, valid=({m}, 16))
        c2 = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc, valid=({m}, 16))
        pto.tload(l_mat, L)
        pto.tload(r_mat, R)
        pto.tload(i_mat, I)
        pto.tload(j_mat, J)
        pto.tload(b_mat, BIAS)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.tmov(lhs, l_mat)
        pto.tmov(rhs, r_mat)
        pto.tmov(ident, i_mat)
        pto.tmov(ones, j_mat)
        pto.textract(bias, b_mat)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.{mm}(c1, ident, ones)
{body}
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(O0, c0)
        pto.tstore(O1, c1)
        pto.tstore(O2, c2)
"""

MATMUL_BODY = """        pto.tmatmul(c0, lhs, rhs)
        pto.tmatmul_acc(c1, c1, lhs, rhs)
        pto.tmatmul_bias(c2, lhs, rhs, bias)"""
GEMV_BODY = """        pto.tgemv(c0, lhs, rhs)
        pto.tgemv_acc(c1, c1, lhs, rhs)
        pto.tgemv_bias(c2, lhs, rhs, bias)"""


def operands(diag, off):
    """main.cpp's tiles: lhs[r, c] = r + c + 1, rhs[r, c] = diag if r == c else off (16 x 16
    float32), the identity and all-ones matrices that make accIn's 1.0, and bias[c] = c."""
    r, c = np.indices((16, 16))
    lhs = (r + c + 1).astype(np.float32)
    rhs = np.where(r == c, diag, off).astype(np.float32)
    return lhs, rhs, np.eye(16, dtype=np.float32), np.ones((16, 16), np.float32), np.arange(16, dtype=np.float32)


def run(kernel, inputs, out_shape, mode, check):
    """Launch kernel(*inputs, O0, O1, O2) on one AI core (outputs float32 zeros of out_shape);
    returns the three outputs."""
    tensors = []
    for a in (*inputs, *(np.zeros(out_shape, np.float32) for _ in range(3))):
        t = pto.alloc_tensor(a.nbytes, getattr(pto, a.dtype.name))
        pto.memcpy_h2d(t, np.ascontiguousarray(a))
        tensors.append(t)
    pto.launch(kernel, grid=(1,), args=tuple(tensors), mode=mode, check=check)
    pto.sync()
    outs = []
    for t in tensors[len(inputs):]:
        o = np.empty(out_shape, np.float32)
        pto.memcpy_d2h(o, t)
        outs.append(o)
    return outs


@pytest.mark.parametrize("mode, check", RUNS, ids=[m for m, _ in RUNS])
def test_accepts_explicit_row_major_left_tile_encoding(make_kernels, mode, check):
    """TMatmulLayoutTest.AcceptsExplicitRowMajorLeftTileEncoding: dst = lhs @ rhs and accOut =
    accIn + lhs @ rhs (ComputeExpected: value = acc[r, c] + sum over k of lhs[r, k] * rhs[k, c]),
    rhs 1.5 on the diagonal and 0.5 off it. TMATMUL_BIAS of the same operands (bias[c] = c) is
    stored too: expected lhs @ rhs + bias, the third matmul form on this Left tile."""
    lhs, rhs, ident, ones, bias = operands(1.5, 0.5)
    kernel = make_kernels(KERNEL.format(m=16, mm="tmatmul", body=MATMUL_BODY)).k
    dst, acc_out, with_bias = run(kernel, (lhs, rhs, ident, ones, bias), (16, 16), mode, check)
    expected = lhs.astype(np.float64) @ rhs.astype(np.float64)
    np.testing.assert_array_equal(dst, expected.astype(np.float32))
    np.testing.assert_array_equal(acc_out, (1.0 + expected).astype(np.float32))
    np.testing.assert_array_equal(with_bias, (expected + bias).astype(np.float32))


@pytest.mark.parametrize("mode, check", RUNS, ids=[m for m, _ in RUNS])
def test_covers_gemv_and_bias_variants(make_kernels, mode, check):
    """TMatmulLayoutTest.CoversGemvAndBiasVariants: rhs 2.0 on the diagonal and 1.0 off it;
    gemv = lhs @ rhs, gemvAcc = accIn + lhs @ rhs, gemvBias = lhs @ rhs + bias
    (CpuTileTestUtils::ComputeMatmulExpected), row 0 of each: A2/A3's TGEMV computes m = 1."""
    lhs, rhs, ident, ones, bias = operands(2.0, 1.0)
    kernel = make_kernels(KERNEL.format(m=1, mm="tgemv", body=GEMV_BODY)).k
    gemv, gemv_acc, gemv_bias = run(kernel, (lhs[:1], rhs, ident[:1], ones, bias), (1, 16), mode, check)
    expected = (lhs.astype(np.float64) @ rhs.astype(np.float64))[:1]
    np.testing.assert_array_equal(gemv, expected.astype(np.float32))
    np.testing.assert_array_equal(gemv_acc, (1.0 + expected).astype(np.float32))
    np.testing.assert_array_equal(gemv_bias, (expected + bias).astype(np.float32))


def test_gemv_of_a_16_row_lhs_is_refused(make_kernels):
    """CoversGemvAndBiasVariants as the CPU simulation runs it, TGEMV of a Left tile of 16 valid
    rows, would on A2/A3 compute row 0 only (TGEMV_IMPL's mad with m = 1, TMatmul.hpp line 119):
    pypto_sim refuses the form rather than leave rows 1..15 of the result undefined."""
    kernel = make_kernels(KERNEL.format(m=16, mm="tmatmul", body=GEMV_BODY)).k
    tensors = tuple(pto.alloc_tensor(16 * 16 * 4, pto.float32) for _ in range(8))
    with pytest.raises(pto.CompileError, match="TGEMV multiplies one row"):
        kernel.program_for(tensors)
