"""pto-isa's st cases of TCVT (tests/cpu/st/testcase/tcvt at 3186c381) on the types A2/A3 has,
in the AI-core API as tcvt_kernel.cpp's runTCVT writes them: TLOAD, TCVT(dst, src,
RoundMode::CAST_RINT, saturation), TSTORE of M x N tiles. Each golden is its gen_data.py's
gen_golden, in numpy (seed 19, one generator per case: the input uniform(lo + 5, hi - 5) over
the source type's limits; with SatMode ON clipped to the destination's; np.rint; astype to the
destination), each tolerance main.cpp's (ResultCmp(golden, out, 0.001f) over the byte-sized
vectors).

Cases A2/A3 refuses, ported as the refusal (TCVT.md "Supported Conversions", A2A3 column):
case5 int16 -> int32, case11 int8 -> float32, case12 float32 -> uint8, case16
float32 -> uint16, case17 uint16 -> float32, case18 int32 -> uint16, case19 uint16 -> int32.

case1, case4, case6 (float32 -> int32, SaturationMode OFF, 128 x 128, 32 x 512, 4 x 4096: 64 KiB
tiles, two of them in A2/A3's 192 KiB UB): the input spans +-3.4e38, so every element is past
int32; their golden is numpy's astype, x86's "integer indefinite" int32 min for either sign,
which is what pto-isa's CPU simulation's static_cast gives and so pypto_sim's sat='off' (the
convention of its narrow-integer OFF path). With SaturationMode ON positive values would give
int32 max (case10 and test_tcvt_float_to_int32_off_differs_from_on below).

Cases A2/A3 cannot run, ported as the refusal: case20 - case23 (float32 <-> int4b_t): A2/A3
converts S4 only from and to FP16 (TCVT.md), and pypto_sim has no int4 dtype, which says so.
Elsewhere: case24 - case31 (fp4): tests/test_ptoisa_st_minifloats.py.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import result_cmp, run_kernel

TCVT = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({m}, {n}, pto.{src})
            dst = pto.alloc_tile({m}, {n}, pto.{dst})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tcvt(dst, src, mode="rint", sat="{sat}")
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

# case: (source, destination, M, N, SaturationMode) of gen_data.py's TCvtParams / main.cpp's TEST_F
CASES = {"case1": ("float32", "int32", 128, 128, "off"), "case4": ("float32", "int32", 32, 512, "off"),
         "case6": ("float32", "int32", 4, 4096, "off"), "case2": ("int32", "float32", 256, 64, "off"), "case3": ("float32", "int16", 16, 32, "off"),
         "case7": ("int16", "float32", 64, 64, "off"), "case8": ("float32", "float16", 64, 64, "off"),
         "case9": ("float16", "uint8", 64, 64, "off"), "case10": ("int32", "float32", 64, 64, "on"),
         "case13": ("int32", "int16", 64, 64, "on"), "case14": ("float16", "int8", 32, 32, "on"),
         "case15": ("float16", "uint8", 64, 64, "on")}


def limits(dtype):
    """gen_data.py get_limits: the type's iinfo / finfo range."""
    return np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else np.finfo(dtype)


@pytest.mark.parametrize("case", CASES)
def test_tcvt(make_kernels, case):
    """TCVTTest.<case>: gen_golden of gen_data.py - input uniform(lo + 5, hi - 5) of M x N cast
    to the source type; decoded to float32; with SatMode ON clipped to the destination's
    range; np.rint; astype to the destination (float16 out of range: inf; float16 -> uint8
    with OFF: x86's conversion through int32, low 8 bits, which is pypto_sim's sat='off')."""
    src, dst, m, n, sat = CASES[case]
    rng = np.random.RandomState(19)
    lo, hi = limits(src).min, limits(src).max
    x = rng.uniform(lo + 5, hi - 5, size=[m, n]).astype(src)
    values = x.astype(np.float32)
    if sat == "on":
        values = np.clip(values, limits(dst).min, limits(dst).max)
    with np.errstate(all="ignore"):
        golden = np.rint(values).astype(dst)
    kernel = make_kernels(TCVT.format(m=m, n=n, src=src, dst=dst, sat=sat)).k
    out, = run_kernel(kernel, [x], [((m, n), np.dtype(dst))])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


REFUSED = {"case5": ("int16", "int32", "off"), "case11": ("int8", "float32", "on"),
           "case12": ("float32", "uint8", "on"),
           "case16": ("float32", "uint16", "off"), "case17": ("uint16", "float32", "off"),
           "case18": ("int32", "uint16", "on"), "case19": ("uint16", "int32", "on")}


@pytest.mark.parametrize("case", REFUSED)
def test_a2a3_refuses_the_pairs_it_lacks(make_kernels, case):
    """The cases whose pair TCVT.md's A2A3 column does not list do not compile; the message
    names the pair and A2/A3."""
    src, dst, sat = REFUSED[case]
    kernel = make_kernels(TCVT.format(m=64, n=64, src=src, dst=dst, sat=sat)).k
    tensors = (pto.alloc_tensor(64 * 64 * 4, getattr(pto, src)), pto.alloc_tensor(64 * 64 * 4, getattr(pto, dst)))
    with pytest.raises(pto.CompileError, match=rf"pto.tcvt: {src} -> {dst} is not a conversion of A2/A3"):
        kernel.program_for(tensors)


@pytest.mark.parametrize("case", ["case20", "case21", "case22", "case23"])
def test_int4_cases_are_refused_naming_a2a3(case):
    """TCVTTest.case20 - case23 convert float32 <-> int4b_t: pto-isa's name for the type is a
    TypeError saying that pypto_sim has no int4 and that A2/A3 converts S4 only from and to
    float16 (so float32 <-> int4 is no A2/A3 conversion either)."""
    with pytest.raises(TypeError, match=r"int4b_t.*no int4 dtype.*A2/A3 converts S4 only from and to float16"):
        pto.alloc_tensor(64 * 64, "int4b_t")


def test_tcvt_float_to_int32_off_differs_from_on(make_kernels):
    """float32 -> int32 by SaturationMode: 3e9, -3e9, inf, -inf, NaN, 2.5, -2.5 give, with ON,
    int32 max, int32 min, max, min, 0, 2, -2 (rint: ties to even); with OFF (x86's static_cast)
    int32 min for each of the first five (x86's integer indefinite) and 2, -2."""
    x = np.array([[3e9, -3e9, np.inf, -np.inf, np.nan, 2.5, -2.5, 0.0]], np.float32)
    lo, hi = -2**31, 2**31 - 1
    for sat, golden in (("on", [hi, lo, hi, lo, 0, 2, -2, 0]), ("off", [lo, lo, lo, lo, lo, 2, -2, 0])):
        kernel = make_kernels(TCVT.format(m=1, n=8, src="float32", dst="int32", sat=sat)).k
        out, = run_kernel(kernel, [x], [((1, 8), np.dtype(np.int32))])
        assert out.ravel().tolist() == golden, sat
