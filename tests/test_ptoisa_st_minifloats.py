"""pto-isa's st cases on the 8-bit and 4-bit floats (tests/cpu/st/testcase/tcvt and ttrans at
3186c381): TCVTTest.case24 .. case31 (float32 <-> float4_e2m1x2_t, float4_e1m2x2_t, with
SaturationMode OFF and ON) and TTRANSTest.case_hifloat8, in the AI-core API as their kernels
write them.

A2/A3 runs none of them: its TLOAD, TCVT and TTRANS take no fp4 or hifloat8 tile (TLOAD.md's
A2A3 dtypes; TCVT.md: FP4 and H8 conversions are A5's, and A5 converts fp4 from and to bf16
only; TTRANS.md: 1-byte TTRANS is uint8 / int8). pypto_sim's AI core is A2/A3's, so each kernel
is ported as that refusal. They run on pto-isa's CPU simulation only, and their goldens follow
it, not the formats: gen_data.py's golden of fp4 -> float32 is rint of the decoded value and
of float32 -> fp4 the truncating MXTypes.hpp quantizer of rint(x) (TCvt.hpp convert_value
rounds every fp4 <-> float pair to an integer first), so not even an exact A5 conversion would
meet them; what is ported of their data is the storage: each fp4 case's input, generated as
gen_data.py does, is held by a pypto_sim fp4 tensor and reads back as gen_data.py's own decoder
reads it. TTRANSTest.case_hifloat8's input (randint(1, 5) as en_dtypes' hifloat8) likewise.
"""
import struct

import en_dtypes
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim import minifloats as mf

TCVT = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(64, 64, pto.{src})
            dst = pto.alloc_tile(64, 64, pto.{dst})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tcvt(dst, src, mode="rint", sat="{sat}")
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

# (case, dst, src, SaturationMode) of main.cpp's TEST_Fs 24 .. 31 (test_tcvt<D, S, 64, 64, 64, 64, sat>)
CASES = [(24, "float4_e2m1x2", "float32", "off"), (25, "float32", "float4_e2m1x2", "off"),
         (26, "float4_e2m1x2", "float32", "on"), (27, "float32", "float4_e2m1x2", "on"),
         (28, "float4_e1m2x2", "float32", "off"), (29, "float32", "float4_e1m2x2", "off"),
         (30, "float4_e1m2x2", "float32", "on"), (31, "float32", "float4_e1m2x2", "on")]
A5_MESSAGE = r"float4_e\dm\dx2 is an A5 type .* pypto_sim's AI core is A2/A3's"


@pytest.mark.parametrize("case, dst, src, sat", CASES, ids=[f"case{c[0]}" for c in CASES])
def test_a2a3_refuses_tcvt_fp4_cases(make_kernels, case, dst, src, sat):
    """TCVTTest.case24 .. case31: the 64 x 64 fp4 tile (src or dst) does not compile on A2/A3;
    the message names the A5 conversions (bf16 <-> fp4)."""
    kernel = make_kernels(TCVT.format(src=src, dst=dst, sat=sat)).k
    tensors = (pto.alloc_tensor(64 * 64 * 4, getattr(pto, src)), pto.alloc_tensor(64 * 64 * 4, getattr(pto, dst)))
    with pytest.raises(pto.CompileError, match=A5_MESSAGE):
        kernel.program_for(tensors)


# ---------------------------------------------------------------- gen_data.py's fp4 data
def gen_data_mx_from_double(value, exp_bits, man_bits, bias):
    """gen_data.py mx_from_double (MXTypes.hpp's quantizer: the mantissa truncated), as
    written there."""
    if value == 0.0:
        return 0
    bits = struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    sign = (bits >> 63) & 1
    exponent = (bits >> 52) & 0x7FF
    mantissa = bits & ((1 << 52) - 1)
    out_exp = out_man = 0
    if exponent - 1023 > ((1 << exp_bits) - 2):
        if exponent == 0x7FF:
            out_exp = (1 << exp_bits) - 1
            out_man = mantissa & 1
    if exponent > 0:
        out_man = mantissa >> (52 - man_bits)
        out_exp = exponent + bias - 1023
        if out_exp < 0:
            out_man = (out_man | (1 << man_bits)) >> (1 - out_exp)
            out_exp = 0
    else:
        return 0
    return ((sign << (exp_bits + man_bits)) | ((out_exp & ((1 << exp_bits) - 1)) << man_bits)
            | (out_man & ((1 << man_bits) - 1))) & 0xF


def gen_data_mx_to_double(raw, exp_bits, man_bits, bias):
    """gen_data.py mx_to_double, as written there."""
    mantissa = raw & ((1 << man_bits) - 1)
    exponent = (raw >> man_bits) & ((1 << exp_bits) - 1)
    sign = (raw >> (exp_bits + man_bits)) & 1
    if exponent > 0 or man_bits == 0:
        bits = (sign << 63) | ((exponent + 1023 - bias) << 52) | (mantissa << (52 - man_bits))
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if raw == 0:
        return 0.0
    if raw == (1 << (exp_bits + man_bits)):
        return -0.0
    i = man_bits - 1
    while i >= 0 and ((mantissa >> i) & 1) == 0:
        i -= 1
    bits = (sign << 63) | ((1023 - bias + 1 + (i - man_bits)) << 52) | ((mantissa & ((1 << i) - 1)) << (52 - i))
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


FP4 = {"float4_e2m1x2": ((2, 1, 1), (-6.0, 6.0)), "float4_e1m2x2": ((1, 2, 1), (-4.0, 3.5))}


@pytest.mark.parametrize("case, dst, src, sat", [c for c in CASES if c[2] != "float32"],
                         ids=[f"case{c[0]}" for c in CASES if c[2] != "float32"])
def test_tcvt_fp4_case_inputs_read_back_as_gen_data_decodes_them(case, dst, src, sat):
    """The input of TCVTTest.case25, 27, 29, 31 as gen_data.py makes it (seed 19: uniform(lo +
    0.5, hi - 0.5) of 64 x 64 in float32 with gen_data's FP4_LIMITS, quantized by
    mx_from_double, packed two a byte low nibble first by pack_fp4) written to a pypto_sim fp4
    tensor as those bytes: it holds 2048 bytes, and reads back as gen_data's decode_fp4 of the
    codes, value for value (ResultCmp at 0.001 with nothing wrong)."""
    from ptoisa_st import result_cmp
    fields, (lo, hi) = FP4[src]
    rng = np.random.RandomState(19)
    data = rng.uniform(lo + 0.5, hi - 0.5, size=[64, 64]).astype(np.float32)
    codes = np.array([gen_data_mx_from_double(v, *fields) for v in data.ravel()], np.uint8)
    packed = ((codes[1::2] << 4) | (codes[0::2] & 0xF)).astype(np.uint8)      # pack_fp4
    golden = np.array([gen_data_mx_to_double(int(c), *fields) for c in codes], np.float32)
    t = pto.alloc_tensor(packed.nbytes, getattr(pto, src))
    pto.memcpy_h2d(t, packed)
    assert t.size == 2048
    got = t.numpy()
    assert result_cmp(golden, got, 0.001) and np.array_equal(got, golden)


# ---------------------------------------------------------------- TTRANS hifloat8
TTRANS = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(128, 128, pto.hifloat8)
            dst = pto.alloc_tile(128, 128, pto.hifloat8)
            tmp = pto.alloc_tile(128, 128, pto.hifloat8)
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.ttrans(dst, src, tmp)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


def test_a2a3_refuses_ttrans_hifloat8(make_kernels):
    """TTRANSTest.case_hifloat8 (128 x 128): A2/A3's TTRANS moves uint8 / int8 as its 1-byte
    types (TTRANS.md) and loads no hifloat8 tile, so the kernel does not compile."""
    kernel = make_kernels(TTRANS).k
    tensors = (pto.alloc_tensor(128 * 128, pto.hifloat8), pto.alloc_tensor(128 * 128, pto.hifloat8))
    with pytest.raises(pto.CompileError, match=r"hifloat8 is an A5 type .*pypto_sim's AI core is A2/A3's"):
        kernel.program_for(tensors)


def test_ttrans_hifloat8_input_is_held_in_its_own_bytes():
    """TTRANSTest.case_hifloat8's input as its gen_data.py makes it (seed 19: randint(1, 5) of
    128 x 128 .astype(en_dtypes.hifloat8)), written to a hifloat8 tensor as those bytes and as
    float32 values alike: one byte an element, the codes of 1, 2, 3, 4 by HiF8's fields - 1.0 =
    D0 (dot 0001, M 000): 0x08; 2.0 = D1 E+1 (001 0 000): 0x10; 3.0 = D1 E+1 M 100: 0x14;
    4.0 = D2 E+2 (01 00 000): 0x20 - reading back exactly; the golden, x1_gm.transpose(), is
    the transposed bytes (what the refused kernel would store)."""
    rng = np.random.RandomState(19)
    x1 = rng.randint(1, 5, [128, 128]).astype(en_dtypes.hifloat8)
    raw = x1.view(np.uint8).ravel()
    code = {1.0: 0x08, 2.0: 0x10, 3.0: 0x14, 4.0: 0x20}
    values = x1.astype(np.float32)
    assert np.array_equal(raw, np.vectorize(code.get)(values.ravel()).astype(np.uint8))
    for host in (raw, values):
        t = pto.alloc_tensor(raw.size, pto.hifloat8)
        pto.memcpy_h2d(t, host)
        back = np.empty(raw.size, np.uint8)
        pto.memcpy_d2h(back, t)
        assert np.array_equal(back, raw)
        assert np.array_equal(t.numpy(), values.ravel())
    golden = x1.transpose().copy().view(np.uint8)
    assert np.array_equal(golden, raw.reshape(128, 128).T)
    assert np.array_equal(mf.decode(list(code.values()), mf.HIFLOAT8), list(code))
