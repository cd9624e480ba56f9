"""pto-isa's st cases of TAND, TANDS, TOR, TORS, TXOR, TXORS, TNOT, TSHL, TSHLS, TSHR, TSHRS,
TREM, TREMS, TFMOD, TFMODS, TABS, TNEG, TMIN (float, int32, half), TMINS and TMAXS
(tests/cpu/st/testcase/tand, tands, tor, tors, txor, txors, tnot, tshl, tshls, tshr, tshrs,
trem, trems, tfmod, tfmods, tabs, tneg, tmin, tmins, tmaxs at 3186c381), every TEST_F, in the
AI-core API as their kernels write them: TLOAD, the op, TSTORE, with set_flag / wait_flag only
where the kernel has them (TABS, TMINS; the others run in sync="auto", which orders the pipes as
the flags would). TNOT loads a 60 x 55 / 64 x 60 valid region into src and dst tiles of their
own shapes; TREM, TREMS, TFMOD and TFMODS write a dst tile wider than the data (64 x 512 with
valid 64 x 64); TSHLS / TSHRS pass the valid shape as the tile shape. The kernel's scalar (read
from GM as scalar[0], a T) is a kernel argument here: an AI-core kernel reads no GM element on
its scalar unit. Each golden is its gen_data.py's, in numpy (seed 19, one generator per case);
each tolerance its main.cpp's (ResultCmp(golden, out, 0.001), TMINS 0.0001, over main.cpp's
byte-sized vectors). The TNOT cases 4 - 7 compare uint32 / uint16 outputs with files
gen_data.py writes as int32 / int16: the port views gen_data's arrays as main.cpp's type.

Cases A2/A3 refuses, ported as the refusal (the kernel does not compile):
TABSTest.case_int32_, case_int16_, case_int8_64x64_64x64_64x64 (TABS_IMPL is TUNARY_IMPL with
floatOnly: "TUNARY: Invalid data type", include/pto/npu/a2a3/TUnaryOp.hpp lines 265-269 and
426-428; TABS.md: "For A3, TileData::DType must be one of: float or half"),
TREMTest.case_half_16x256_16x256 and case_half_32x512_16x256 ("Fix: TREM supports only float and
int32 element types.", TRem.hpp line 177), TREMSTest.case_int16_ and case_half_ (TRemS.hpp line
155), TFMODTest.case_half_ (TFmod.hpp line 70), TFMODSTest.case_int32_, case_int16_ and case_half_
(TFmodS.hpp line 73), and every case_bf16_* (TABS, TNEG = TMULS(dst, src, -1) (TMulS.hpp line 52), TMIN
(TMin.hpp line 62), TMINS (TMins.hpp line 52), TMAXS (TMaxS.hpp line 53), TREM, TREMS, TFMOD,
TFMODS: none of their A2/A3 static_asserts lists bfloat16; main.cpp builds
these only with CPU_SIM_BFLOAT_ENABLED).

Differences from the kernels, as pypto_sim's API has no such operand: TXOR(dst, src0, src1, tmp),
TXORS(dst, src, scalar, tmp), TREM(dst, src0, src1, tmp) and TREMS(dst, src, scalar, tmp) take
A2/A3's scratch tile (TXor.hpp line 51: XOR = AND(NOT(AND(a, b)), OR(a, b)) with OR in tmp;
TRem.hpp line 203, TRemS.hpp line 148); pypto_sim's txor / txors / trem / trems have no tmp, so
the ports call them without it (the value of dst is the same; tmp's writes are not modelled).

A2/A3's TShiftCheck (TBitwiseSOp.hpp line 37) asserts dst's valid rows equal src's valid
columns, a typo for rows; it is a PTO_ASSERT, compiled out without _DEBUG (include/pto/common/
debug.h lines 32-36), so TSHLSTest / TSHRSTest.case_int32_16x256_16x256_16x256 runs on a release
build (a _DEBUG build would trap on 16 != 256); the port expects the release build's value.

Not ported: none.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import result_cmp, run_kernel

# ----------------------------------------------------------------------------- kernels

# TAND, TOR, TSHL, TSHR, TMIN (and TXOR without its tmp): three rows x cols tiles, no flags
BINARY = """
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile({r}, {c}, pto.{dt})
            b = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(a, A)
            pto.tload(b, B)
            pto.{op}(dst, a, b)
            pto.tstore(O, dst)
"""

# TANDS, TORS, TXORS, TSHLS, TSHRS, TMAXS: src and dst tiles, the scalar a kernel argument
SCALAR = """
@pto.kernel
def k(S, O, scalar):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(src, S)
            pto.{op}(dst, src, scalar)
            pto.tstore(O, dst)
"""

# TREM / TFMOD: rows x cols sources, a dr x dc dst with valid (rows, cols) (runTRem / runTFmod)
REM_BINARY = """
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile({r}, {c}, pto.{dt})
            b = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt}, valid=({r}, {c}))
            pto.tload(a, A, stride={c})
            pto.tload(b, B, stride={c})
            pto.{op}(dst, a, b)
            pto.tstore(O, dst, stride={c})
"""

# TREMS / TFMODS: a rows x cols src, a dr x dc dst with valid (rows, cols) (runTRems / runTFmods)
REM_SCALAR = """
@pto.kernel
def k(S, O, scalar):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt}, valid=({r}, {c}))
            pto.tload(src, S, stride={c})
            pto.{op}(dst, src, scalar)
            pto.tstore(O, dst, stride={c})
"""

# TNOT: src sr x sc and dst dr x dc tiles, both with the GM's vr x vc as their valid region
TNOT = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({sr}, {sc}, pto.{dt}, valid=({vr}, {vc}))
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt}, valid=({vr}, {vc}))
            pto.tload(src, S, stride={vc})
            pto.tnot(dst, src)
            pto.tstore(O, dst, stride={vc})
"""

# TNEG: src, dst, no flags (runTNeg)
TNEG = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(src, S)
            pto.tneg(dst, src)
            pto.tstore(O, dst)
"""

# TABS: src, dst, with the kernel's MTE2 -> V and V -> MTE3 flags (runTAbs)
TABS = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tabs(dst, src)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

# TMINS: as TABS, the scalar a kernel argument (runTMins)
TMINS = """
@pto.kernel
def k(S, O, scalar):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tmins(dst, src, scalar)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


def _arg(x, dt):
    """The scalar as the kernel's T: an int for integer tiles, a float (exact in dt) else."""
    return int(x) if np.dtype(dt).kind in "iu" else float(x)


# ----------------------------------------------------------------------------- TAND, TOR, TXOR, TSHL, TSHR, TMIN

BIN_GOLDEN = {"tand": np.bitwise_and, "tor": np.bitwise_or, "txor": np.bitwise_xor,
              "tshl": np.left_shift, "tshr": np.right_shift, "tmin": np.minimum}

# (op, dtype, rows, cols) of each TEST_F: global = tile = valid
BIN_CASES = {
    "TAND.case_int16_64x64": ("tand", "int16", 64, 64),
    "TAND.case_int32_16x256": ("tand", "int32", 16, 256),
    "TAND.case_int32_32x32": ("tand", "int32", 32, 32),
    "TAND.case_int32_77x96": ("tand", "int32", 77, 96),
    "TAND.case_int32_8x64": ("tand", "int32", 8, 64),
    "TAND.case_uint32_64x64": ("tand", "uint32", 64, 64),
    "TAND.case_uint32_16x32": ("tand", "uint32", 16, 32),
    "TAND.case_uint32_12x128": ("tand", "uint32", 12, 128),
    "TAND.case_uint32_4x64": ("tand", "uint32", 4, 64),
    "TOR.case_int16_64x64": ("tor", "int16", 64, 64),
    "TOR.case_int32_16x256": ("tor", "int32", 16, 256),
    "TOR.case_int32_64x64": ("tor", "int32", 64, 64),
    "TOR.case_int32_77x96": ("tor", "int32", 77, 96),
    "TOR.case_int32_32x32": ("tor", "int32", 32, 32),
    "TOR.case_uint32_64x64": ("tor", "uint32", 64, 64),
    "TOR.case_uint32_16x32": ("tor", "uint32", 16, 32),
    "TOR.case_uint32_77x96": ("tor", "uint32", 77, 96),
    "TOR.case_uint32_32x64": ("tor", "uint32", 32, 64),
    "TXOR.case_int16_64x64": ("txor", "int16", 64, 64),
    "TXOR.case_int32_16x256": ("txor", "int32", 16, 256),
    "TSHL.case_int16_64x64": ("tshl", "int16", 64, 64),
    "TSHL.case_int32_16x256": ("tshl", "int32", 16, 256),
    "TSHR.case_int16_64x64": ("tshr", "int16", 64, 64),
    "TSHR.case_int32_16x256": ("tshr", "int32", 16, 256),
    "TMIN.case_float_64x64": ("tmin", "float32", 64, 64),
    "TMIN.case_int32_64x64": ("tmin", "int32", 64, 64),
    "TMIN.case_half_16x256": ("tmin", "float16", 16, 256),
}


@pytest.mark.parametrize("case", BIN_CASES)
def test_binary(make_kernels, case):
    """gen_data.py (seed 19): input1, input2 randint(1, 10) of rows x cols as the dtype; golden
    input1 op input2 in the dtype (&, |, ^, <<, >>, np.minimum; 9 << 9 fits int16), zero past
    the valid region (which is the tile). ResultCmp(golden, out, 0.001) over fileSize (bytes)
    elements; every value is exact, so out equals the golden."""
    op, dt, r, c = BIN_CASES[case]
    rng = np.random.RandomState(19)
    a = rng.randint(1, 10, size=[r, c]).astype(dt)
    b = rng.randint(1, 10, size=[r, c]).astype(dt)
    golden = BIN_GOLDEN[op](a, b).astype(dt)
    out, = run_kernel(make_kernels(BINARY.format(r=r, c=c, dt=dt, op=op)).k, [a, b], [((r, c), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


# ----------------------------------------------------------------------------- TANDS, TORS, TXORS, TSHLS, TSHRS, TMAXS

SCALAR_GOLDEN = {"tands": np.bitwise_and, "tors": np.bitwise_or, "txors": np.bitwise_xor,
                 "tshls": np.left_shift, "tshrs": np.right_shift, "tmaxs": np.maximum}

SCALAR_CASES = {
    "TANDS.case_int16_64x64": ("tands", "int16", 64, 64),
    "TANDS.case_int32_64x64": ("tands", "int32", 64, 64),
    "TANDS.case_int32_16x256": ("tands", "int32", 16, 256),
    "TANDS.case_int32_77x96": ("tands", "int32", 77, 96),
    "TANDS.case_int32_1x32": ("tands", "int32", 1, 32),
    "TANDS.case_uint32_32x32": ("tands", "uint32", 32, 32),
    "TANDS.case_uint32_8x64": ("tands", "uint32", 8, 64),
    "TANDS.case_uint32_128x128": ("tands", "uint32", 128, 128),
    "TANDS.case_uint32_16x32": ("tands", "uint32", 16, 32),
    "TORS.case_int16_64x64": ("tors", "int16", 64, 64),
    "TORS.case_int32_64x64": ("tors", "int32", 64, 64),
    "TORS.case_int32_16x256": ("tors", "int32", 16, 256),
    "TORS.case_int32_77x96": ("tors", "int32", 77, 96),
    "TORS.case_int32_8x32": ("tors", "int32", 8, 32),
    "TORS.case_uint32_32x32": ("tors", "uint32", 32, 32),
    "TORS.case_uint32_16x64": ("tors", "uint32", 16, 64),
    "TORS.case_uint32_12x128": ("tors", "uint32", 12, 128),
    "TORS.case_uint32_64x64": ("tors", "uint32", 64, 64),
    "TXORS.case_int32_64x64": ("txors", "int32", 64, 64),
    "TXORS.case_int16_64x64": ("txors", "int16", 64, 64),
    "TSHLS.case_int16_64x64": ("tshls", "int16", 64, 64),
    "TSHLS.case_int32_16x256": ("tshls", "int32", 16, 256),
    "TSHRS.case_int16_64x64": ("tshrs", "int16", 64, 64),
    "TSHRS.case_int32_16x256": ("tshrs", "int32", 16, 256),
    "TMAXS.case_float_64x64": ("tmaxs", "float32", 64, 64),
    "TMAXS.case_int32_64x64": ("tmaxs", "int32", 64, 64),
    "TMAXS.case_int16_64x64": ("tmaxs", "int16", 64, 64),
    "TMAXS.case_half_16x256": ("tmaxs", "float16", 16, 256),
}


@pytest.mark.parametrize("case", SCALAR_CASES)
def test_tile_scalar(make_kernels, case):
    """gen_data.py (seed 19): input1 randint(1, 10) of rows x cols as the dtype, then the scalar
    randint(1, 10) of [1, 1] as the dtype; golden input1 op scalar in the dtype (zero past the
    valid region, which is the tile). A2/A3 takes all of these dtypes: TANDS / TORS are
    TEXPANDS + TAND / TOR (TBitwiseSOp.hpp lines 99-120; TEXPANDS takes 1-, 2- and 4-byte
    integers, TExpandS.hpp line 144), TXORS is TORS, TANDS, TNOT, TAND (line 123), TSHLS /
    TSHRS take int32, int16, uint32, uint16 (TShiftCheck, line 24), TMAXS int32, int16, half,
    float (TMaxS.hpp line 53). ResultCmp(golden, out, 0.001) over fileSize elements."""
    op, dt, r, c = SCALAR_CASES[case]
    rng = np.random.RandomState(19)
    x = rng.randint(1, 10, size=[r, c]).astype(dt)
    scalar = rng.randint(1, 10, size=[1, 1]).astype(dt)
    golden = SCALAR_GOLDEN[op](x, scalar).astype(dt)
    kernel = make_kernels(SCALAR.format(r=r, c=c, dt=dt, op=op)).k
    out, = run_kernel(kernel, [x], [((r, c), dt)], _arg(scalar[0, 0], dt))
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


# ----------------------------------------------------------------------------- TNOT

# TEST_F(TNOTTest, case_i): test_tnot<T, sTRows, sTCols, dTRows, dTCols, validRows, validCols>;
# gen_data.py's dtype (the file's) and main.cpp's T
TNOT_CASES = {
    "case_0": ("int32", "int32", 64, 64, 64, 64, 60, 55),
    "case_1": ("int16", "int16", 64, 64, 64, 64, 60, 55),
    "case_2": ("int32", "int32", 64, 64, 96, 96, 64, 60),
    "case_3": ("int16", "int16", 64, 64, 96, 96, 64, 60),
    "case_4": ("int32", "uint32", 64, 64, 64, 64, 60, 55),
    "case_5": ("int16", "uint16", 64, 64, 64, 64, 60, 55),
    "case_6": ("int32", "uint32", 96, 96, 96, 96, 64, 60),
    "case_7": ("int16", "uint16", 96, 96, 64, 64, 64, 60),
}


@pytest.mark.parametrize("case", TNOT_CASES)
def test_tnot(make_kernels, case):
    """gen_data.py (seed 19): input1 randint(1, 10) of validRows x validCols as gen_data's dtype,
    golden np.bitwise_not of it; main.cpp reads both files as its T (cases 4 - 7: the unsigned
    type of the same size, so the same bits). The kernel loads the dense valid x valid GM
    tensor into an sTRows x sTCols src tile, writes TNOT into a dTRows x dTCols dst tile (valid
    shapes equal, tile shapes not) and stores the valid region. ResultCmp(golden, out, 0.001)
    over fileSize (bytes) elements."""
    gen_dt, dt, sr, sc, dr, dc, vr, vc = TNOT_CASES[case]
    rng = np.random.RandomState(19)
    x = rng.randint(1, 10, size=[vr, vc]).astype(gen_dt)
    golden = np.bitwise_not(x).astype(gen_dt).view(dt)
    kernel = make_kernels(TNOT.format(sr=sr, sc=sc, dr=dr, dc=dc, vr=vr, vc=vc, dt=dt)).k
    out, = run_kernel(kernel, [x.view(dt)], [((vr, vc), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


# ----------------------------------------------------------------------------- TREM, TFMOD, TREMS, TFMODS

# (op, dtype, dst tile rows, cols, valid rows, cols) of each TEST_F that A2/A3 compiles
REM_CASES = {
    "TREM.case_float_64x64_64x64": ("trem", "float32", 64, 64, 64, 64),
    "TREM.case_float_64x512_64x64": ("trem", "float32", 64, 512, 64, 64),
    "TFMOD.case_float_64x64_64x64": ("tfmod", "float32", 64, 64, 64, 64),
    "TFMOD.case_float_64x512_64x64": ("tfmod", "float32", 64, 512, 64, 64),
    "TREMS.case_float_64x64_64x64": ("trems", "float32", 64, 64, 64, 64),
    "TREMS.case_int32_64x64_64x64": ("trems", "int32", 64, 64, 64, 64),
    "TREMS.case_float_64x512_64x64": ("trems", "float32", 64, 512, 64, 64),
    "TREMS.case_int32_64x512_64x64": ("trems", "int32", 64, 512, 64, 64),
    "TFMODS.case_float_64x64_64x64": ("tfmods", "float32", 64, 64, 64, 64),
    "TFMODS.case_float_64x512_64x64": ("tfmods", "float32", 64, 512, 64, 64),
}

# Python's % (numpy's remainder: the sign of the divisor) and C's fmod (the sign of the dividend)
REM_GOLDEN = {"trem": np.remainder, "trems": np.remainder, "tfmod": np.fmod, "tfmods": np.fmod}


@pytest.mark.parametrize("case", REM_CASES)
def test_remainders(make_kernels, case):
    """gen_data.py (seed 19): input1 randint(-100, 100) of valid rows x cols as the dtype, then
    input2 the same (TREM, TFMOD) or the scalar randint(-100, 100) of [1, 1] (TREMS, TFMODS),
    zeros of the divisor set to 1; golden input1 % divisor (Python's floor remainder, as
    A2/A3's a - floor(a / b) * b with the sign fixed to b's, TRem.hpp line 19) or
    np.fmod(input1, divisor) (A2/A3's truncating a - trunc(a / b) * b, TFmod.hpp lines
    23-32, TFmodS.hpp lines 24-33). The dst tile is
    dst rows x cols with the valid region's data; ResultCmp(golden, out, 0.001) over the dst
    tile's byte count of elements (main.cpp's fileSize: kDRows * kDCols * sizeof(T))."""
    op, dt, dr, dc, r, c = REM_CASES[case]
    rng = np.random.RandomState(19)
    a = rng.randint(-100, 100, size=[r, c]).astype(dt)
    if op in ("trem", "tfmod"):
        b = rng.randint(-100, 100, size=[r, c]).astype(dt)
    else:
        b = rng.randint(-100, 100, size=[1, 1]).astype(dt)
    b[b == 0] = 1
    golden = REM_GOLDEN[op](a, b).astype(dt)
    if op in ("trem", "tfmod"):
        kernel = make_kernels(REM_BINARY.format(r=r, c=c, dr=dr, dc=dc, dt=dt, op=op)).k
        out, = run_kernel(kernel, [a, b], [((r, c), dt)])
    else:
        kernel = make_kernels(REM_SCALAR.format(r=r, c=c, dr=dr, dc=dc, dt=dt, op=op)).k
        out, = run_kernel(kernel, [a], [((r, c), dt)], _arg(b[0, 0], dt))
    assert result_cmp(golden, out, 0.001, compared=dr * dc * np.dtype(dt).itemsize)


# ----------------------------------------------------------------------------- TABS, TNEG, TMINS

@pytest.mark.parametrize("dt, rows, cols", [("float32", 64, 64), ("float16", 16, 256)],
                         ids=["case_float_64x64_64x64_64x64", "case_half_16x256_16x256_16x256"])
def test_tabs(make_kernels, dt, rows, cols):
    """TABSTest's float and half cases. gen_data.py (seed 19): input1 randint(-10, 10) as the
    dtype; golden np.abs of it. ResultCmp(golden, out, 0.001) over fileSize elements."""
    rng = np.random.RandomState(19)
    x = rng.randint(-10, 10, size=[rows, cols]).astype(dt)
    golden = np.abs(x).astype(dt)
    out, = run_kernel(make_kernels(TABS.format(r=rows, c=cols, dt=dt)).k, [x], [((rows, cols), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)


@pytest.mark.parametrize("dt, rows, cols", [("float32", 64, 64), ("int32", 64, 64), ("int16", 64, 64),
                                             ("float16", 16, 256)],
                         ids=["case_float_64x64_64x64_64x64", "case_int32_64x64_64x64_64x64",
                              "case_int16_64x64_64x64_64x64", "case_half_16x256_16x256_16x256"])
def test_tneg(make_kernels, dt, rows, cols):
    """TNEGTest. gen_data.py (seed 19): input1 randint(1, 10) as the dtype; golden -input1 in the
    dtype (A2/A3's TNEG is TMULS(dst, src, -1), TUnaryOp.hpp line 449, which takes int32, int16,
    half and float). ResultCmp(golden, out, 0.001) over fileSize elements."""
    rng = np.random.RandomState(19)
    x = rng.randint(1, 10, size=[rows, cols]).astype(dt)
    golden = (-x).astype(dt)
    out, = run_kernel(make_kernels(TNEG.format(r=rows, c=cols, dt=dt)).k, [x], [((rows, cols), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


TMINS_CASES = {"case_float_64x64_64x64_64x64": ("float32", 64, 64), "case_int32_64x64_64x64_64x64": ("int32", 64, 64),
               "case_int16_64x64_64x64_64x64": ("int16", 64, 64), "case_half_64x64_64x64_64x64": ("float16", 64, 64),
               "case_half_16x256_16x256_16x256": ("float16", 16, 256)}


@pytest.mark.parametrize("case", TMINS_CASES)
def test_tmins(make_kernels, case):
    """TMINSTest. gen_data.py (seed 19): int16 / int32 input1 randint(1, 10) and the scalar
    randint(1, 10) of [1]; float / half input1 uniform(-13.033, 101.011) and the scalar the same,
    as the dtype; golden np.minimum(input1, scalar) in the dtype. ResultCmp(golden, out, 0.0001)
    over fileSize elements (a minimum is exact)."""
    dt, rows, cols = TMINS_CASES[case]
    rng = np.random.RandomState(19)
    if dt in ("int16", "int32"):
        x = rng.randint(1, 10, size=[rows, cols]).astype(dt)
        scalar = rng.randint(1, 10, size=[1]).astype(dt)
    else:
        x = rng.uniform(low=-13.033, high=101.011, size=[rows, cols]).astype(dt)
        scalar = rng.uniform(low=-13.033, high=101.011, size=[1]).astype(dt)
    golden = np.minimum(x, scalar).astype(dt)
    kernel = make_kernels(TMINS.format(r=rows, c=cols, dt=dt)).k
    out, = run_kernel(kernel, [x], [((rows, cols), dt)], _arg(scalar[0], dt))
    assert result_cmp(golden, out, 0.0001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


# ----------------------------------------------------------------------------- what A2/A3 refuses

def _refused(op, dt, rows, cols):
    """The kernel source and its GM tensors for a refused case, as its kernel writes it."""
    if op == "tabs":
        return TABS.format(r=rows, c=cols, dt=dt), 2, False
    if op == "tneg":
        return TNEG.format(r=rows, c=cols, dt=dt), 2, False
    if op == "tmin":
        return BINARY.format(r=rows, c=cols, dt=dt, op=op), 3, False
    if op == "tmins":
        return TMINS.format(r=rows, c=cols, dt=dt), 2, True
    if op == "tmaxs":
        return SCALAR.format(r=rows, c=cols, dt=dt, op=op), 2, True
    raise AssertionError(op)


# (op, dtype, the kernel's tile or dst rows, cols, valid rows, cols)
REFUSED = {
    "TABS.case_int32_64x64_64x64_64x64": ("tabs", "int32", 64, 64, 64, 64),
    "TABS.case_int16_64x64_64x64_64x64": ("tabs", "int16", 64, 64, 64, 64),
    "TABS.case_int8_64x64_64x64_64x64": ("tabs", "int8", 64, 64, 64, 64),
    "TABS.case_bf16_16x256_16x256_16x256": ("tabs", "bfloat16", 16, 256, 16, 256),
    "TNEG.case_bf16_16x256_16x256_16x256": ("tneg", "bfloat16", 16, 256, 16, 256),
    "TMIN.case_bf16_16x256_16x256_16x256": ("tmin", "bfloat16", 16, 256, 16, 256),
    "TMINS.case_bf16_64x64_64x64_64x64": ("tmins", "bfloat16", 64, 64, 64, 64),
    "TMINS.case_bf16_16x256_16x256_16x256": ("tmins", "bfloat16", 16, 256, 16, 256),
    "TMAXS.case_bf16_16x256_16x256_16x256": ("tmaxs", "bfloat16", 16, 256, 16, 256),
    "TREM.case_half_16x256_16x256": ("trem", "float16", 16, 256, 16, 256),
    "TREM.case_half_32x512_16x256": ("trem", "float16", 32, 512, 16, 256),
    "TREM.case_bf16_16x256_16x256": ("trem", "bfloat16", 16, 256, 16, 256),
    "TREM.case_bf16_32x256_16x256": ("trem", "bfloat16", 32, 256, 16, 256),
    "TREMS.case_int16_64x64_64x64": ("trems", "int16", 64, 64, 64, 64),
    "TREMS.case_half_16x256_16x256": ("trems", "float16", 16, 256, 16, 256),
    "TREMS.case_int16_64x512_64x64": ("trems", "int16", 64, 512, 64, 64),
    "TREMS.case_half_32x512_16x256": ("trems", "float16", 32, 512, 16, 256),
    "TREMS.case_bf16_16x256_16x256": ("trems", "bfloat16", 16, 256, 16, 256),
    "TREMS.case_bf16_32x256_16x256": ("trems", "bfloat16", 32, 256, 16, 256),
    "TFMOD.case_half_16x256_16x256": ("tfmod", "float16", 16, 256, 16, 256),
    "TFMOD.case_half_32x512_16x256": ("tfmod", "float16", 32, 512, 16, 256),
    "TFMOD.case_bf16_16x256_16x256": ("tfmod", "bfloat16", 16, 256, 16, 256),
    "TFMOD.case_bf16_32x256_16x256": ("tfmod", "bfloat16", 32, 256, 16, 256),
    "TFMODS.case_int32_64x64_64x64": ("tfmods", "int32", 64, 64, 64, 64),
    "TFMODS.case_int16_64x64_64x64": ("tfmods", "int16", 64, 64, 64, 64),
    "TFMODS.case_half_16x256_16x256": ("tfmods", "float16", 16, 256, 16, 256),
    "TFMODS.case_int32_64x512_64x64": ("tfmods", "int32", 64, 512, 64, 64),
    "TFMODS.case_int16_64x512_64x64": ("tfmods", "int16", 64, 512, 64, 64),
    "TFMODS.case_half_32x512_16x256": ("tfmods", "float16", 32, 512, 16, 256),
    "TFMODS.case_bf16_16x256_16x256": ("tfmods", "bfloat16", 16, 256, 16, 256),
    "TFMODS.case_bf16_32x256_16x256": ("tfmods", "bfloat16", 32, 256, 16, 256),
}


@pytest.mark.parametrize("case", REFUSED)
def test_the_dtypes_a2a3_refuses(make_kernels, case):
    """The cases whose dtype A2/A3's headers refuse (the module docstring cites each
    static_assert): TABS of integers (A2/A3's TABS is floatOnly TUNARY_IMPL), half TREM /
    TFMOD, int16 and half TREMS, int32, int16 and half TFMODS, and every bfloat16 case. The
    kernel does not compile; pypto_sim says which dtypes the instruction takes."""
    op, dt, dr, dc, r, c = REFUSED[case]
    if op in ("trem", "tfmod"):
        source, n_tensors, scalar = REM_BINARY.format(r=r, c=c, dr=dr, dc=dc, dt=dt, op=op), 3, False
    elif op in ("trems", "tfmods"):
        source, n_tensors, scalar = REM_SCALAR.format(r=r, c=c, dr=dr, dc=dc, dt=dt, op=op), 2, True
    else:
        source, n_tensors, scalar = _refused(op, dt, r, c)
    kernel = make_kernels(source).k
    args = tuple(pto.alloc_tensor(dr * dc * 4, getattr(pto, dt)) for _ in range(n_tensors))
    if scalar:
        args += (1,)
    with pytest.raises(pto.CompileError, match=rf"pto.{op} needs tiles of one dtype among .*got {dt}"):
        kernel.program_for(args)
