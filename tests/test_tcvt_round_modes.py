"""TCVT's rounding as A2/A3's TCvt.hpp runs it (pto-isa include/pto/npu/a2a3/TCvt.hpp at
3186c381; pypto_sim/isa/cvt_modes.py has the table): a pair without a mode's intrinsic runs
its switch's default:, a pair with one intrinsic ignores the mode, float32 -> float32 rounds
to an integral value. Each case is a tiny kernel (TLOAD, TCVT, TSTORE of 8 elements) and
hand-worked numbers."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim import dtypes
from pypto_sim.isa import cvt_modes

KERNEL = '''
@pto.kernel
def k(X, Y):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            x = pto.alloc_tile(1, 32, pto.SRC, loc=pto.Vec, valid=(1, 8))
            y = pto.alloc_tile(1, 32, pto.DST, loc=pto.Vec, valid=(1, 8))
            pto.tload(x, X)
            pto.tcvt(y, x, mode="MODE")
            pto.tstore(Y, y)
'''


def host(name):
    """The host dtype of a tensor of dtype name (bfloat16 tensors take and give float32)."""
    return np.dtype(np.float32 if name == "bfloat16" else name)


def convert(make_kernels, src, dst, mode, xs, sat=None):
    """xs (8 values of src) through TCVT src -> dst in mode (and SaturationMode sat when
    given: "on" or "off"); dst's 8 values as float64."""
    call = f'mode="{mode}"' + (f', sat="{sat}"' if sat else "")
    mod = make_kernels(KERNEL.replace("SRC", src).replace("DST", dst).replace('mode="MODE"', call))
    x = np.array(xs, host(src))
    X = pto.alloc_tensor(8 * dtypes.BY_NAME[src].itemsize, getattr(pto, src))
    Y = pto.alloc_tensor(8 * dtypes.BY_NAME[dst].itemsize, getattr(pto, dst))
    pto.memcpy_h2d(X, x)
    pto.launch(mod.k, grid=(1,), args=(X, Y))
    pto.sync()
    y = np.empty(8, host(dst))
    pto.memcpy_d2h(y, Y)
    return y.astype(np.float64)


TO_INT = [2.25, 2.75, -2.25, 4.125, 2.5, -2.5, 3.5, -3.5]     # exact in float16 and bfloat16
TRUNCATED = [2, 2, -2, 4, 2, -2, 3, -3]


@pytest.mark.parametrize("src, dst", [("float32", "int32"), ("float32", "int16"), ("float16", "int32"),
                                      ("float16", "int16"), ("float16", "int8"), ("bfloat16", "int32")])
def test_odd_to_an_integer_is_the_switchs_default_trunc(make_kernels, src, dst):
    """A float to an integer has no CAST_ODD intrinsic; odd runs the switch's default:, trunc:
    TCvt.hpp:195-196 `default: vconv_f322s32z` (float32 -> int32), 223-224 vconv_f322s16z,
    317-319 `case CAST_TRUNC: default: vconv_f162s32z`, 356-357 vconv_f162s16z, 447-448
    vconv_f162s8z, 660-661 vconv_bf162s32z. 2.75 -> 2 and -2.25 -> -2 (round to odd would give
    3 and -3); the ties 2.5, -2.5 -> 2, -2; 3.5 -> 3."""
    assert convert(make_kernels, src, dst, "odd", TO_INT).tolist() == TRUNCATED
    assert cvt_modes.rounding(src, dst, "odd") == "trunc"
    assert cvt_modes.honoured(src, dst) == ("rint", "round", "floor", "ceil", "trunc")


def test_odd_float16_to_uint8_is_trunc(make_kernels):
    """TCvt.hpp:589-590 `default: vconv_f162u8z`: 2.25, 2.75, 4.125, 2.5, 3.5 -> 2, 2, 4, 2, 3."""
    xs = [2.25, 2.75, 4.125, 2.5, 3.5, 0.75, 7.5, 1.0]
    assert convert(make_kernels, "float16", "uint8", "odd", xs).tolist() == [2, 2, 4, 2, 3, 0, 7, 1]


def test_odd_float32_to_bfloat16_is_rint(make_kernels):
    """TCvt.hpp:293-294 `default: vconv_f322bf16r` (GenCastCallFp32ToBf16 has no CAST_ODD case).
    bfloat16 keeps 7 mantissa bits, spacing 2^-7 above 1: 1 + 2^-10 -> 1 (odd: 1 + 2^-7); the tie
    1 + 2^-8 -> 1 (even); the tie 1 + 3 * 2^-8 -> 1 + 2^-6 (even; odd: 1 + 2^-7)."""
    xs = [1 + 2.0**-10, 1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 2.0**-10), 1.0, 2.0, 0.0, -4.0]
    want = [1.0, 1.0, 1 + 2.0**-6, -1.0, 1.0, 2.0, 0.0, -4.0]
    assert convert(make_kernels, "float32", "bfloat16", "odd", xs).tolist() == want


# int16 -> float16: float16's spacing is 2 from 2048, 4 from 4096; the ties go to even
INT16_XS = [2049, 2051, 4097, -2049, 4098, 4102, 1, -7]
INT16_RINT = [2048, 2052, 4096, -2048, 4096, 4104, 1, -7]


def test_odd_int16_to_float16_is_the_unsuffixed_intrinsic_rint(make_kernels):
    """TCvt.hpp:688-689 `default: vconv_s162f16`, the intrinsic AscendC's Cast runs for CAST_NONE
    (asc-devkit kernel_operator_vec_vconv_impl.h:489-492), which rounds to nearest even where
    precision is lost (asc-devkit precision_conversion.md, CAST_NONE). 2049 -> 2048 (odd: 2050),
    2051 -> 2052 (odd: 2050), 4097 -> 4096 (odd: 4100), 4102 -> 4104 (the tie, even)."""
    assert convert(make_kernels, "int16", "float16", "odd", INT16_XS).tolist() == INT16_RINT


def test_odd_int32_to_float32_is_the_unsuffixed_intrinsic_rint(make_kernels):
    """TCvt.hpp:716-717 `default: vconv_s322f32` (AscendC's CAST_NONE intrinsic,
    kernel_operator_vec_vconv_impl.h:114-117: rint where precision is lost). float32's spacing is
    2 from 2^24, 4 from 2^25: 2^24 + 1 -> 2^24 (odd: 2^24 + 2), 2^24 + 3 -> 2^24 + 4 (odd:
    2^24 + 2), 2^25 + 3 -> 2^25 + 4 (precision_conversion.md's own example)."""
    xs = [2**24 + 1, 2**24 + 3, 2**25 + 3, -(2**24 + 1), 2**25 + 1, 7, -7, 0]
    want = [2**24, 2**24 + 4, 2**25 + 4, -(2**24), 2**25, 7, -7, 0]
    assert convert(make_kernels, "int32", "float32", "odd", xs).tolist() == want


@pytest.mark.parametrize("mode", dtypes.CVT_MODES)
def test_int32_to_float16_ignores_the_mode(make_kernels, mode):
    """TCvt.hpp:792-794 `set_deqscale(static_cast<half>(1.0)); ... vconv_deq(...)`: the mode is
    never read (AscendC's Cast.md: "roundMode does not take effect"), so every mode gives one
    result, rounded to nearest even (pypto_sim's choice; docs/aicore.md, the tcvt row)."""
    assert convert(make_kernels, "int32", "float16", mode, INT16_XS).tolist() == INT16_RINT


@pytest.mark.parametrize("mode, want", [
    ("rint", [0.0, -0.0, 2.0, -2.0, 4.0, -0.0, 2.0**70, 3.0]),
    ("round", [1.0, -1.0, 3.0, -3.0, 4.0, -0.0, 2.0**70, 3.0]),
    ("floor", [0.0, -1.0, 2.0, -3.0, 3.0, -1.0, 2.0**70, 2.0]),
    ("ceil", [1.0, -0.0, 3.0, -2.0, 4.0, -0.0, 2.0**70, 3.0]),
    ("trunc", [0.0, -0.0, 2.0, -2.0, 3.0, -0.0, 2.0**70, 2.0]),
    ("odd", [0.0, -0.0, 2.0, -2.0, 4.0, -0.0, 2.0**70, 3.0]),
])
def test_float32_to_float32_rounds_to_an_integral_value(make_kernels, mode, want):
    """float32 -> float32 (GenCastCallFp32ToFp32, TCvt.hpp:123-142, vconv_f322f32r/a/f/c/z)
    rounds to an integer and stays float32 (AscendC precision_conversion.md "float -> float":
    0.5 gives 0 by RINT, FLOOR, TRUNC and 1 by CEIL, ROUND); odd runs the default:,
    vconv_f322f32r (line 139-140). A zero result keeps the source's sign (IEEE roundToIntegral)."""
    xs = [0.5, -0.5, 2.5, -2.5, 3.5, -0.25, 2.0**70, 2.75]
    got = convert(make_kernels, "float32", "float32", mode, xs)
    assert got.tolist() == want
    assert np.signbit(got).tolist() == np.signbit(want).tolist()


def test_honoured_modes_per_pair():
    """The table's summary, as docs/aicore.md states it: every mode on float32 -> float16; all
    but odd on the pairs with five intrinsics; none on the exact pairs and int32 -> float16."""
    assert cvt_modes.honoured("float32", "float16") == dtypes.CVT_MODES
    for pair in (("float32", "bfloat16"), ("float32", "float32"), ("int16", "float16"), ("int32", "float32"),
                 ("float16", "uint8")):
        assert cvt_modes.honoured(*pair) == ("rint", "round", "floor", "ceil", "trunc"), pair
    for pair in (("float16", "float32"), ("bfloat16", "float32"), ("int16", "float32"), ("int32", "int16"),
                 ("uint8", "float16"), ("int8", "float16")):
        assert {cvt_modes.rounding(*pair, m) for m in dtypes.CVT_MODES} == {"exact"}, pair
    assert {cvt_modes.rounding("int32", "float16", m) for m in dtypes.CVT_MODES} == {"rint"}
    assert cvt_modes.intrinsic("float32", "int32", "odd") == "vconv_f322s32z"
    assert cvt_modes.intrinsic("int16", "float16", "odd") == "vconv_s162f16"


OUT_OF_RANGE = [40000.0, -40000.0, 300.0, -300.0, 70000.0, 1.0, 0.0, -1.0]


@pytest.mark.parametrize("src, dst, wrapped", [
    # the low bits: 40000 - 65536 = -25536, 65536 - 40000 = 25536; 300 - 256 = 44, 256 - 300 = -44;
    # 70000 - 65536 = 4464 (int16), 70000 = 0x11170 -> 0x70 = 112 (int8), 300 = 0x12C -> 0x2C = 44 (uint8)
    ("float32", "int16", [-25536, 25536, 300, -300, 4464, 1, 0, -1]),
    ("int32", "int16", [-25536, 25536, 300, -300, 4464, 1, 0, -1]),
    ("float16", "int8", [None, None, 44, -44, None, 1, 0, -1]),
    ("float16", "uint8", [None, None, 44, 212, None, 1, 0, 255]),
])
def test_a_narrowing_tcvt_without_sat_truncates_as_tcvt_dst_src_mode_does(make_kernels, src, dst, wrapped):
    """TCVT(dst, src, mode) runs SaturationMode::OFF for the narrowing pairs (TCvt.hpp
    kIsNarrowingCvt, lines 1216-1227; the overload at 1311-1323): pto.tcvt without sat keeps the
    low bits there, as sat="off" does, where sat="on" clamps (pto-isa's tcvt gen_data.py builds
    the on-device golden so). float16 holds neither 40000 nor 70000 exactly, so those are
    left out of the float16 rows (None)."""
    xs = [x if w is not None else 1.0 for x, w in zip(OUT_OF_RANGE, wrapped)]
    want = [w if w is not None else 1 for w in wrapped]
    assert convert(make_kernels, src, dst, "rint", xs).tolist() == want
    assert convert(make_kernels, src, dst, "rint", xs, sat="off").tolist() == want
    info = np.iinfo(dst)
    clamped = np.clip(np.array(xs), info.min, info.max).tolist()
    assert convert(make_kernels, src, dst, "rint", xs, sat="on").tolist() == clamped


def test_a_widening_or_float_to_int32_tcvt_without_sat_saturates(make_kernels):
    """Every pair outside kIsNarrowingCvt runs SaturationMode::ON without sat: float32 3e9 to
    int32 is int32's largest, 2147483647, not its low bits."""
    got = convert(make_kernels, "float32", "int32", "rint", [3e9, -3e9, 1, 0, 0, 0, 0, 0])
    assert got[:3].tolist() == [2147483647, -2147483648, 1]
