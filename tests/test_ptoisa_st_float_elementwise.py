"""pto-isa's st cases of TADD, TSUB, TMUL, TMAX, TMULS and TSEL on float, half and int32 tiles, of TEXP,
TSQRT and TRSQRT on float and half, and of TCOLMAX (tests/cpu/st/testcase/tadd, tsub, tmul,
tmax, tmuls, tsel, texp, tsqrt, trsqrt, tcolmax at 3186c381), in the AI-core API as their kernels write them: TLOAD, the op, TSTORE of
full tiles (TSQRT also in place, dst = src, as its isInPlace cases assign both tiles one
address). Each golden is its gen_data.py's, in numpy (seed 19, one generator per case); each
tolerance its main.cpp's (ResultCmp(golden, out, eps) over the byte-sized vectors).

TMULS's int16 case4 is here with the others. The int16 cases of the binary ops, the refused
TMULS case7 - case9 and TSEL case7 - case15 are in tests/test_ptoisa_st_integers.py (the
kernels of both: tests/ptoisa_st.py). Not ported: the
bf16 cases (case_bf16_*), which main.cpp builds only with PTO_CPU_SIM_ENABLE_BF16 /
CPU_SIM_BFLOAT_ENABLED, as test_ptoisa_st_integers.py leaves TCMPTest.case_bf16_uint32.
TCOLSUMTest: tests/test_ptoisa_st_tcolsum.py; TMATMULTest: tests/test_ptoisa_st_tmatmul.py.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import BINARY, TMULS, TSEL, result_cmp, run_kernel, tsel_golden


UNARY = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = {dst}
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.{op}(dst, src)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

# main.cpp's TEST_Fs: case_float_64x64_..., case_int32_64x64_..., case_half_16x256_...
BINARY_SHAPES = {"float32": (64, 64), "int32": (64, 64), "float16": (16, 256)}
BINARY_GOLDEN = {"tadd": np.add, "tsub": np.subtract, "tmul": np.multiply, "tmax": np.maximum}


@pytest.mark.parametrize("dt", BINARY_SHAPES)
@pytest.mark.parametrize("op", BINARY_GOLDEN)
def test_binary(make_kernels, op, dt):
    """gen_data.py: input1, input2 = randint(1, 10) of rows x cols as dt; golden = the op of
    the two in dt (exact: sums, differences, products and maxima of 1..9 are integers every
    one of these dtypes holds). ResultCmp(golden, out, 0.001)."""
    r, c = BINARY_SHAPES[dt]
    rng = np.random.RandomState(19)
    a = rng.randint(1, 10, size=[r, c]).astype(dt)
    b = rng.randint(1, 10, size=[r, c]).astype(dt)
    golden = BINARY_GOLDEN[op](a, b).astype(dt)
    kernel = make_kernels(BINARY.format(r=r, c=c, dt=dt, op=op)).k
    out, = run_kernel(kernel, [a, b], [((r, c), np.dtype(dt))])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


# (op, dt, rows, cols, in place, eps) of each TEST_F (main.cpp) and its gen_data.py
UNARY_CASES = {
    "TEXP.case_float_64x64": ("texp", "float32", 64, 64, False, 0.001),
    "TEXP.case_half_64x64": ("texp", "float16", 64, 64, False, 0.001),
    "TEXP.case_half_32x32": ("texp", "float16", 32, 32, False, 0.001),
    "TEXP.case_float_32x32": ("texp", "float32", 32, 32, False, 0.001),
    "TEXP.case_float_32x16": ("texp", "float32", 32, 16, False, 0.001),
    "TSQRT.case_float_inPlace_True": ("tsqrt", "float32", 64, 64, True, 0.0001),
    "TSQRT.case_float_inPlace_False": ("tsqrt", "float32", 64, 64, False, 0.0001),
    "TSQRT.case_half_inPlace_True": ("tsqrt", "float16", 64, 64, True, 0.001),
    "TSQRT.case_half_inPlace_False": ("tsqrt", "float16", 64, 64, False, 0.001),
    "TRSQRT.case_float_64x64": ("trsqrt", "float32", 64, 64, False, 0.001),
    "TRSQRT.case_half_64x64": ("trsqrt", "float16", 64, 64, False, 0.001),
}


def _unary_data(op, dt, r, c):
    """gen_data.py's input and golden: TEXP and TSQRT take random() of [0, 1) as dt and
    compute np.exp / np.sqrt in dt; TRSQRT takes uniform(0.1, 10.0) as dt and computes
    1.0 / np.sqrt(x) element by element (a float64 quotient of dt's root, stored as dt)."""
    rng = np.random.RandomState(19)
    if op == "trsqrt":
        x = rng.uniform(0.1, 10.0, size=(r, c)).astype(dt)
        golden = np.zeros([r, c]).astype(dt)
        golden[:, :] = 1.0 / np.sqrt(x)
        return x, golden
    x = rng.random_sample(size=(r, c)).astype(dt)
    return x, (np.exp(x) if op == "texp" else np.sqrt(x)).astype(dt)


@pytest.mark.parametrize("case", UNARY_CASES)
def test_unary(make_kernels, case):
    """TEXP / TSQRT / TRSQRT of gen_data.py's input against its golden with main.cpp's eps
    (TSQRT: 0.0001 for float, 0.001 for half; the others 0.001)."""
    op, dt, r, c, in_place, eps = UNARY_CASES[case]
    x, golden = _unary_data(op, dt, r, c)
    dst = "src" if in_place else f"pto.alloc_tile({r}, {c}, pto.{dt})"
    kernel = make_kernels(UNARY.format(r=r, c=c, dt=dt, op=op, dst=dst)).k
    out, = run_kernel(kernel, [x], [((r, c), np.dtype(dt))])
    assert result_cmp(golden, out, eps, compared=golden.nbytes)


TCOLMAX = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile(1, {c}, pto.{dt})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tcolmax(dst, src)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

# TCOLMAXTest's TEST_Fs: case_float_64x64_..., case_half_16x256_...
TCOLMAX_CASES = {"case_float_64x64": ("float32", 64, 64), "case_half_16x256": ("float16", 16, 256)}


@pytest.mark.parametrize("case", TCOLMAX_CASES)
def test_tcolmax(make_kernels, case):
    """gen_data.py: input randint(-16, 16) of rows x cols as dt; golden[0, j] = max of column
    j. ResultCmp(golden, out, 0.001)."""
    dt, r, c = TCOLMAX_CASES[case]
    rng = np.random.RandomState(19)
    x = rng.randint(low=-16, high=16, size=[r, c]).astype(dt)
    golden = x.max(axis=0, keepdims=True)
    kernel = make_kernels(TCOLMAX.format(r=r, c=c, dt=dt)).k
    out, = run_kernel(kernel, [x], [((1, c), np.dtype(dt))])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


@pytest.mark.parametrize("dt", ["int8", "uint8"])
def test_a2a3_tcolmax_refuses_8_bit_tiles(make_kernels, dt):
    """TCOLMAXTest.case_int8_64x64 and case_uint8_64x64 run on pto-isa's CPU simulation only:
    A2/A3's TColReduceCheck takes half, float, int16 and int32 ("Fix: TCOLREDUCE input data
    type is not supported by this instruction.", include/pto/npu/a2a3/TColReduceOps.hpp), and
    so does pypto_sim: the kernel does not compile."""
    kernel = make_kernels(TCOLMAX.format(r=64, c=64, dt=dt)).k
    with pytest.raises(pto.CompileError, match=rf"among float32, float16, int32, int16, got {dt}"):
        kernel.program_for((pto.alloc_tensor(64 * 64, dt), pto.alloc_tensor(64, dt)))


# TMulsParams(name, dtype, rows, cols) of gen_data.py (seed 23)
TMULS_CASES = {"case1": ("float32", 32, 64), "case2": ("float16", 63, 64), "case3": ("int32", 31, 128),
               "case4": ("int16", 15, 192), "case5": ("float32", 7, 448), "case6": ("float32", 256, 16)}


@pytest.mark.parametrize("case", TMULS_CASES)
def test_tmuls(make_kernels, case):
    """gen_data.py: input uniform(-8, 8) of rows x cols as dt, the scalar uniform(-8, 8) as dt
    (written as a float32, which the kernel's launcher converts back to dt); golden
    input * scalar in dt. ResultCmp(golden, out, 0.001)."""
    dt, r, c = TMULS_CASES[case]
    rng = np.random.RandomState(23)
    x = rng.uniform(low=-8, high=8, size=(r, c)).astype(dt)
    scalar = rng.uniform(low=-8, high=8, size=(1, 1)).astype(dt)
    golden = (x * scalar[0, 0]).astype(dt)
    kernel = make_kernels(TMULS.format(r=r, c=c, dt=dt)).k
    arg = int(scalar[0, 0]) if dt.startswith("int") else float(scalar[0, 0])
    out, = run_kernel(kernel, [x], [((r, c), np.dtype(dt))], arg)
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)


TSEL_FLOAT_CASES = {"case1": ("float32", 128), "case2": ("float32", 32), "case3": ("float32", 160),
                    "case4": ("float16", 128), "case5": ("float16", 32), "case6": ("float16", 160)}


@pytest.mark.parametrize("case", TSEL_FLOAT_CASES)
def test_tsel(make_kernels, case):
    """TSELTest.case1 - case6 (2 x 128, 32, 160 float and half). gen_data.py (seed 19): input0,
    input1 rand(rows * cols) as dt, the mask randint(0, 255) bytes, ceil(cols / 8) a row;
    golden element (i, j * 8 + k) input0's where bit k of mask byte (i, j) is set, else
    input1's. ResultCmp(golden, out, 0.001); a select is exact, so out equals the golden."""
    dt, cols = TSEL_FLOAT_CASES[case]
    rows = 2
    rng = np.random.RandomState(19)
    a = rng.rand(rows * cols).astype(dt)
    b = rng.rand(rows * cols).astype(dt)
    mask_cols = (cols + 7) // 8
    mask = rng.randint(0, 255, size=rows * mask_cols, dtype=np.uint8)
    golden = tsel_golden(mask, a, b, rows, cols)
    mc = -(-mask_cols // 32) * 32
    mask_gm = np.zeros((rows, mc), np.uint8)
    mask_gm[:, :mask_cols] = mask.reshape(rows, mask_cols)
    kernel = make_kernels(TSEL.format(r=rows, c=cols, mc=mc, dt=dt)).k
    out, = run_kernel(kernel, [mask_gm, a.reshape(rows, cols), b.reshape(rows, cols)], [((rows, cols), np.dtype(dt))])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out.ravel(), golden)
