"""The 8-bit and 4-bit floats (pypto_sim/minifloats.py, dtypes float8_e4m3, float8_e5m2,
hifloat8, float4_e2m1x2, float4_e1m2x2): every code's value and the rounding of values to
codes, each against a reference written apart from it - ml_dtypes (float8_e4m3fn, float8_e5m2,
float4_e2m1fn) for the OCP formats, en_dtypes' hifloat8 (the package pto-isa's ttrans
gen_data.py uses) and the HiF8 paper's fields enumerated here for hifloat8, pto-isa's
gen_data.py (tests/cpu/st/testcase/tcvt) for float4_e1m2 - then tensors holding them, their
host round trip, and A2/A3's refusals."""
import en_dtypes
import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim import minifloats as mf

OCP = [(mf.FLOAT8_E4M3, ml_dtypes.float8_e4m3fn), (mf.FLOAT8_E5M2, ml_dtypes.float8_e5m2),
       (mf.FLOAT4_E2M1, ml_dtypes.float4_e2m1fn)]


def ml_values(fmt, ml_type):
    """ml_dtypes' value of each of fmt's codes (its 4-bit type holds one code a byte)."""
    return np.arange(1 << fmt.bits, dtype=np.uint8).view(ml_type).astype(np.float64)


def same_values(a, b):
    """Equal values, zeros of equal sign, NaN where the other is NaN."""
    return (np.array_equal(a, b, equal_nan=True)
            and np.array_equal(np.signbit(a) & ~np.isnan(a), np.signbit(b) & ~np.isnan(b)))


@pytest.mark.parametrize("fmt, ml_type", OCP, ids=[f.name for f, _ in OCP])
def test_every_code_decodes_as_ml_dtypes_does(fmt, ml_type):
    """All 256 (16) codes: values, signed zeros, infinities and NaNs as ml_dtypes has them.
    Hand-derived landmarks: e4m3's 0x7E = 2^(15-7) * 1.75 = 448 is the largest, 0x7F NaN;
    e5m2's 0x7B = 2^15 * 1.75 = 57344, 0x7C inf; e2m1's 0x7 = 2^(3-1) * 1.5 = 6; the smallest
    subnormals 2^(1-7-3) = 2^-9, 2^(1-15-2) = 2^-16 and 2^(1-1-1) = 0.5."""
    got = mf.decode(np.arange(1 << fmt.bits), fmt)
    assert same_values(got, ml_values(fmt, ml_type))
    assert fmt.max_finite == {"float8_e4m3": 448.0, "float8_e5m2": 57344.0, "float4_e2m1": 6.0}[fmt.name]
    assert got[1] == {"float8_e4m3": 2.0 ** -9, "float8_e5m2": 2.0 ** -16, "float4_e2m1": 0.5}[fmt.name]


def probe_values(fmt, ml_type, seed):
    """Values that exercise rounding: random ones across the format's range and below its
    smallest normal, every code's value, every midpoint between neighbouring codes (the ties),
    values just either side of each midpoint, and the special values."""
    rng = np.random.RandomState(seed)
    v = ml_values(fmt, ml_type)
    finite = np.unique(v[np.isfinite(v)])
    mids = (finite[:-1] + finite[1:]) / 2
    top = np.array([fmt.max_finite * 1.0625, fmt.max_finite * 1.125, fmt.max_finite * 1.25, fmt.max_finite * 4])
    x = np.concatenate([rng.standard_normal(20000) * fmt.max_finite / 3, rng.standard_normal(5000) * finite[2],
                        finite, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf), top, -top,
                        [np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 1e-30, -1e-30]])
    return x.astype(np.float32)


@pytest.mark.parametrize("fmt, ml_type", OCP, ids=[f.name for f, _ in OCP])
def test_rounding_to_each_ocp_format_matches_ml_dtypes(fmt, ml_type):
    """float32 values to codes as ml_dtypes' astype rounds them: to nearest, ties to even, the
    format's overflow (e4m3 NaN, e5m2 inf, e2m1 the largest value), underflow to signed zero.
    Hand-derived ties: e4m3 464 = (448 + 480) / 2 goes to 448 (0x7E, even; 480 is the NaN
    code's place); e5m2 61440 = (57344 + 65536) / 2 to inf (57344 is 0x7B, odd); e2m1 5 = (4 +
    6) / 2 to 4 (0x6, even), 0.25 to 0 and 0.75 to 1 (0x2, even)."""
    x = probe_values(fmt, ml_type, 5)
    want = x.astype(ml_type).view(np.uint8)
    assert np.array_equal(mf.encode(x, fmt), want)
    tie = {"float8_e4m3": (464.0, 0x7E), "float8_e5m2": (61440.0, 0x7C), "float4_e2m1": (5.0, 0x6)}[fmt.name]
    assert mf.encode([tie[0]], fmt)[0] == tie[1]


def test_nan_to_a_format_without_nan():
    """fp4 has no NaN: pypto_sim writes +0 for NaN of either sign (minifloats' docstring: a
    choice, nothing public says what A5 gives)."""
    for fmt in (mf.FLOAT4_E2M1, mf.FLOAT4_E1M2):
        assert list(mf.encode([np.nan, -np.nan], fmt)) == [0, 0]


def test_saturation_clamps_to_the_largest_finite_value():
    """saturate=True (TCVT's SaturationMode ON): past the largest finite value, and an
    infinity, give the largest value of its sign - e4m3 0x7E / 0xFE (448), e5m2 0x7B / 0xFB
    (57344), hifloat8 0x6E / 0xEE (2^15); NaN stays NaN."""
    x = [1e6, -1e6, np.inf, -np.inf]
    for fmt, hi in ((mf.FLOAT8_E4M3, 0x7E), (mf.FLOAT8_E5M2, 0x7B), (mf.HIFLOAT8, 0x6E)):
        assert list(mf.encode(x, fmt, saturate=True)) == [hi, hi | 0x80, hi, hi | 0x80]
        assert np.isnan(mf.decode(mf.encode([np.nan], fmt, saturate=True), fmt)[0])


# ---------------------------------------------------------------- hifloat8
def hif8_reference():
    """{code: value} of HiF8 built from its fields (arXiv 2409.16626, Table 1), the other way
    round from minifloats' decoder: for each dot code D (prefix 0001, 001, 01, 10, 11 for D =
    0..4) and each exponent E with |E| in [2^(D-1), 2^D - 1] (E = 0 for D = 0), written as
    a sign bit and |E| without its leading 1, and each mantissa M of 3, 3, 3, 2, 1 bits:
    value 2^E * (1 + M / 2^m). Denormals (prefix 0000) 2^(M - 23) for M = 1..7; 0x00 zero,
    0x80 NaN; E = 15 with M = 1 is infinity. Both signs."""
    table = {0x00: 0.0, 0x80: np.nan}
    for m in range(1, 8):
        table[m], table[0x80 | m] = 2.0 ** (m - 23), -(2.0 ** (m - 23))
    dots = {0: (0b0001, 4, 3), 1: (0b001, 3, 3), 2: (0b01, 2, 3), 3: (0b10, 2, 2), 4: (0b11, 2, 1)}
    for d, (prefix, width, m_bits) in dots.items():
        exps = [0] if d == 0 else [s * e for s in (1, -1) for e in range(1 << (d - 1), 1 << d)]
        for e in exps:
            e_field = 0 if d == 0 else ((1 << (d - 1)) if e < 0 else 0) | (abs(e) - (1 << (d - 1)))
            for m in range(1 << m_bits):
                code = (prefix << (7 - width)) | (e_field << m_bits) | m
                value = np.inf if (d == 4 and e == 15 and m == 1) else 2.0 ** e * (1 + m / (1 << m_bits))
                table[code], table[0x80 | code] = value, -value
    return table


def test_hifloat8_every_code_decodes_as_its_fields_say():
    """All 256 codes against hif8_reference (which covers each code once: 256 entries).
    Landmarks by hand: 0x08 = 1.0 (D=0), 0x10 = 2.0 and 0x18 = 0.5 (D=1, E=+1, -1), 0x20 =
    4.0 (D=2, E=2), 0x6E = 2^15 (D=4, E=15, M=0) the largest, 0x6F inf, 0x01 = 2^-22."""
    ref = hif8_reference()
    assert sorted(ref) == list(range(256))
    want = np.array([ref[c] for c in range(256)])
    assert same_values(mf.decode(np.arange(256), mf.HIFLOAT8), want)
    got = mf.decode([0x08, 0x10, 0x18, 0x20, 0x6E, 0x6F, 0x01], mf.HIFLOAT8)
    assert list(got) == [1.0, 2.0, 0.5, 4.0, 2.0 ** 15, np.inf, 2.0 ** -22]


def test_hifloat8_every_code_round_trips_and_ties_go_away_from_zero():
    """encode(decode(c)) == c for all 256 codes (0x80, NaN, to itself). Rounding is to nearest
    with ties away from zero (the HiF8 paper's TA): 1.0625 (between 1.0 and 1.125) -> 1.125
    (0x09), -1.0625 -> 0x89; 2^-23 (half the smallest denormal) -> 2^-22 (0x01), 2^-24 -> 0
    and -2^-24 -> 0x00 (no negative zero: 0x80 is NaN); 40960 = (2^15 + 1.5 * 2^15) / 2 ->
    inf (0x6F), just below it 2^15 (0x6E); -0.0 -> 0x00."""
    codes = np.arange(256)
    assert np.array_equal(mf.encode(mf.decode(codes, mf.HIFLOAT8), mf.HIFLOAT8), codes)
    x = [1.0625, -1.0625, 2.0 ** -23, 2.0 ** -24, -(2.0 ** -24), 40960.0, 40959.0, -0.0]
    assert list(mf.encode(x, mf.HIFLOAT8)) == [0x09, 0x89, 0x01, 0x00, 0x00, 0x6F, 0x6E, 0x00]


def test_hifloat8_codes_and_rounding_match_en_dtypes():
    """en_dtypes.hifloat8 (a C++ implementation apart from minifloats): all 256 codes decode
    to its values, and rounding random values over 2^-25 .. 2^17 of both signs, every code's
    value, every midpoint between neighbours and either side of it, and the specials gives its
    codes - ties away from zero, >= 40960 to inf (0x6F), below 2^-23 to +0, NaN to 0x80."""
    ref = np.arange(256, dtype=np.uint8).view(en_dtypes.hifloat8).astype(np.float64)
    assert same_values(mf.decode(np.arange(256), mf.HIFLOAT8), ref)
    rng = np.random.RandomState(7)
    finite = np.unique(np.abs(ref[np.isfinite(ref)]))
    mids = (finite[:-1] + finite[1:]) / 2
    x = np.concatenate([np.exp2(rng.uniform(-25, 17, 20000)), -np.exp2(rng.uniform(-25, 17, 2000)), finite,
                        mids, -mids, np.nextafter(mids, 0), np.nextafter(mids, np.inf),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 40960, 49152, 1e30, 2.0 ** -23, 2.0 ** -24]])
    x = x.astype(np.float32)
    assert np.array_equal(mf.encode(x, mf.HIFLOAT8), x.astype(en_dtypes.hifloat8).view(np.uint8))


def test_hifloat8_rounds_every_value_to_a_nearest_code():
    """Random values over HiF8's range: the code found is at least as near as both of its
    ladder neighbours (no code is nearer), and of two equally near the larger magnitude."""
    rng = np.random.RandomState(3)
    x = np.concatenate([np.exp2(rng.uniform(-24, 16, 20000)), -np.exp2(rng.uniform(-24, 16, 2000))])
    got = mf.decode(mf.encode(x, mf.HIFLOAT8), mf.HIFLOAT8)
    finite = np.unique(np.abs(mf.HIFLOAT8.values[np.isfinite(mf.HIFLOAT8.values)]))
    small = np.abs(x) < 40960
    best = np.abs(finite[None, :] - np.abs(x[small])[:, None]).min(axis=1)
    assert np.array_equal(np.abs(np.abs(got[small]) - np.abs(x[small])), best)


# ---------------------------------------------------------------- fp4 against pto-isa's gen_data
def gen_data_mx_to_double(raw, exp_bits, man_bits, bias):
    """pto-isa tests/cpu/st/testcase/tcvt/gen_data.py mx_to_double at 3186c381 (its MXTypes.hpp
    decoder in Python), as written there."""
    import struct
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


@pytest.mark.parametrize("fmt, fields", [(mf.FLOAT4_E2M1, (2, 1, 1)), (mf.FLOAT4_E1M2, (1, 2, 1))],
                         ids=["e2m1", "e1m2"])
def test_fp4_codes_decode_as_pto_isa_gen_data(fmt, fields):
    """All 16 codes of each fp4 format as pto-isa's own decoder gives them (e1m2: bias 1, so
    0x7 = 2^0 * 1.75 = 1.75 is its largest, 0x1 = 0.25 its smallest), and every value
    round-trips through encode."""
    want = np.array([gen_data_mx_to_double(c, *fields) for c in range(16)])
    assert same_values(mf.decode(np.arange(16), fmt), want)
    assert np.array_equal(mf.encode(want, fmt), np.arange(16))
    assert fmt.max_finite == {"float4_e2m1": 6.0, "float4_e1m2": 1.75}[fmt.name]


def test_fp4_pairs_pack_low_nibble_first():
    """pack4 as gen_data.py's pack_fp4: byte i = (code[2i+1] << 4) | code[2i]; unpack4 undoes
    it: codes 1, 2, 3, 4 -> bytes 0x21, 0x43."""
    assert list(mf.pack4([1, 2, 3, 4])) == [0x21, 0x43]
    assert list(mf.unpack4([0x21, 0x43])) == [1, 2, 3, 4]


# ---------------------------------------------------------------- tensors
MINIS = [pto.float8_e4m3, pto.float8_e5m2, pto.hifloat8, pto.float4_e2m1x2, pto.float4_e1m2x2]


@pytest.mark.parametrize("dtype", MINIS, ids=str)
def test_tensor_bytes_round_trip_exactly(dtype):
    """Every byte value written raw (a uint8 host array) reads back the same bytes, and reads as
    the float32 values decode gives (two a byte for the fp4 pairs, low nibble first); writing
    those values back gives the same bytes (NaN codes to the format's NaN)."""
    raw = np.arange(256, dtype=np.uint8)
    t = pto.alloc_tensor(256, dtype)
    pto.memcpy_h2d(t, raw)
    back = np.empty(256, np.uint8)
    pto.memcpy_d2h(back, t)
    assert np.array_equal(back, raw)
    fmt = dtype.minifloat
    codes = mf.unpack4(raw) if fmt.bits == 4 else raw
    values = t.numpy()
    assert values.dtype == np.float32 and values.shape == (256 * dtype.values_per_element,)
    assert same_values(values.astype(np.float64), mf.decode(codes, fmt))
    u = pto.alloc_tensor(256, dtype)
    pto.memcpy_h2d(u, values)
    pto.memcpy_d2h(back, u)
    nan = np.isnan(mf.decode(codes, fmt))
    again = mf.unpack4(back) if fmt.bits == 4 else back
    assert np.array_equal(again[~nan], codes[~nan])
    assert np.all(np.isnan(mf.decode(again[nan], fmt)))


def test_tensor_of_float32_values_is_rounded_as_ml_dtypes():
    """memcpy_h2d of float32 values into a float8_e4m3 tensor rounds them as ml_dtypes'
    astype (1.0 -> 0x38, -2.5 -> 0xC2, 500 -> NaN 0x7F, 0.3 -> 0.3125 = 0x2A); an ml_dtypes
    array goes in and comes out as itself."""
    x = np.array([1.0, -2.5, 448.0, 500.0, -0.0, 1e-9, 0.3, 2.0 ** -9], np.float32)
    t = pto.alloc_tensor(8, pto.float8_e4m3)
    pto.memcpy_h2d(t, x)
    raw = np.empty(8, np.uint8)
    pto.memcpy_d2h(raw, t)
    assert np.array_equal(raw, x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8))
    assert list(raw[[0, 1, 3, 6]]) == [0x38, 0xC2, 0x7F, 0x2A]
    m = np.array([1, -2, 57344], np.float32).astype(ml_dtypes.float8_e5m2)
    u = pto.alloc_tensor(3, "float8_e5m2")
    pto.memcpy_h2d(u, m)
    out = np.empty(3, ml_dtypes.float8_e5m2)
    pto.memcpy_d2h(out, u)
    assert np.array_equal(out.view(np.uint8), m.view(np.uint8))
    assert pto.alloc_tensor(4, ml_dtypes.float8_e4m3fn).dtype == pto.float8_e4m3


def test_a_fp4_pair_tensor_takes_two_values_a_byte():
    """A 4-byte float4_e2m1x2 tensor holds 8 values: 0.5, 1, 1.5, 2, 3, 4, 6, -6 are codes 1..7
    and 0xF, packed 0x21, 0x43, 0x65, 0xF7; 4 float32 values are the wrong count, named."""
    t = pto.alloc_tensor(4, pto.float4_e2m1x2)
    x = np.array([0.5, 1, 1.5, 2, 3, 4, 6, -6], np.float32)
    pto.memcpy_h2d(t, x)
    raw = np.empty(4, np.uint8)
    pto.memcpy_d2h(raw, t)
    assert list(raw) == [0x21, 0x43, 0x65, 0xF7]
    assert np.array_equal(t.numpy(), x)
    with pytest.raises(pto.LaunchError, match=r"float4_e2m1x2 tensor of n bytes takes n \* 2 float32 values"):
        pto.memcpy_h2d(t, np.zeros(4, np.float32))


# ---------------------------------------------------------------- A2/A3 refuses them
A5_MESSAGE = r"is an A5 type .*pypto_sim's AI core is A2/A3's \(Ascend 910B/910C"


@pytest.mark.parametrize("dtype", ["float8_e4m3", "hifloat8", "float4_e2m1x2"])
def test_a2a3_tiles_refuse_the_a5_types(make_kernels, dtype):
    """A Vec tile of an A5 type does not compile (A2/A3's TLOAD, TCVT and TMATMUL list none of
    them: TLOAD.md, TCVT.md, TMATMUL.md); the message names the machine and A5's conversions."""
    kernel = make_kernels(f"""
@pto.kernel
def k(X, O):
    with pto.vector():
        t = pto.alloc_tile(1, 32, pto.{dtype})
        pto.tload(t, X)
        pto.tstore(O, t)
""").k
    with pytest.raises(pto.CompileError, match=A5_MESSAGE):
        kernel.program_for((pto.alloc_tensor(32, dtype), pto.alloc_tensor(32, dtype)))


def test_lane_loads_refuse_the_a5_types(make_kernels):
    """pto.load of a float8_e5m2 tensor: the same refusal, naming the tensor."""
    kernel = make_kernels("""
@pto.kernel
def k(X, O):
    i = pto.get_global_id()
    pto.store(O + i, pto.load(X + i))
""").k
    with pytest.raises(pto.CompileError, match=r"pto.load: 'X' holds float8_e5m2, which is an A5 type"):
        kernel.program_for((pto.alloc_tensor(32, pto.float8_e5m2), pto.alloc_tensor(128, pto.float32)))


LANE_FORMS = {"store": "O[i] = 1.0", "augmented store": "O[i] += 1.0",
              "fma to memory": "pto.fma(O + i, 1.0, 2.0, 3.0)",
              "cast": "X[i] = pto.cast(X[i], pto.{dtype})", "constant cast": "X[i] = pto.cast(0.3, pto.{dtype})",
              "local array": "t = pto.local_array(4, pto.{dtype})"}


@pytest.mark.parametrize("dtype", ["float8_e4m3", "float8_e5m2", "hifloat8", "float4_e2m1x2", "float4_e1m2x2"])
@pytest.mark.parametrize("form", LANE_FORMS)
def test_lane_kernels_refuse_the_a5_types_in_every_form(make_kernels, form, dtype):
    """A2/A3's lane (vector / scalar) code has no 8-bit or 4-bit float: storing to such a
    tensor, updating it, a fused multiply-add into it, converting a value to the format (even
    a constant, which would otherwise silently compute with the format's rounding) or a local
    array of it is a
    CompileError that names A2/A3 and A5's conversions, never values."""
    kernel = make_kernels(f"""
@pto.kernel
def k(X, O):
    i = pto.get_global_id()
    {LANE_FORMS[form].format(dtype=dtype)}
""").k
    with pytest.raises(pto.CompileError, match=A5_MESSAGE):
        kernel.program_for((pto.alloc_tensor(128, pto.float32), pto.alloc_tensor(32, dtype)))


def test_to_device_takes_ml_dtypes_arrays():
    """pto.to_device of an ml_dtypes float8_e5m2 array gives a float8_e5m2 tensor of its bytes;
    of a 2 x 4 float4_e2m1fn array (one value a byte in ml_dtypes) a 2 x 2 float4_e2m1x2 tensor
    (two values a byte) holding the same values."""
    x = np.array([1.5, -3, 0.25, 57344], np.float32)
    t = pto.to_device(x.astype(ml_dtypes.float8_e5m2))
    assert (t.dtype, t.size) == (pto.float8_e5m2, 4)
    assert np.array_equal(t.numpy(), x)
    f = np.array([[0.5, 1, 1.5, 2], [3, 4, 6, -6]], np.float32)
    u = pto.to_device(f.astype(ml_dtypes.float4_e2m1fn))
    assert (u.dtype, u.shape, u.nbytes) == (pto.float4_e2m1x2, (2, 2), 4)
    assert np.array_equal(u.numpy(), f)


def test_a_2d_view_of_a_fp4_tensor_reads_its_pairs():
    """A 2 x 4 float4_e2m1x2 tensor (8 values a row) viewed [0:2, 1:3]: columns 1 and 2, each
    two values - values 2..5 of each row."""
    f = np.arange(16, dtype=np.float32).reshape(2, 8) % 7 - 3          # -3 .. 3: all e2m1 values
    t = pto.to_device(f.astype(ml_dtypes.float4_e2m1fn))
    assert t.shape == (2, 4)
    np.testing.assert_array_equal(t[0:2, 1:3].numpy(), f[:, 2:6])


def test_a_python_number_as_a_minifloat_value_rounds_as_the_format():
    """dtypes.round_scalar (kernel literals and scalars): 464 -> 448 in float8_e4m3 (a tie to
    even), 1.0625 -> 1.125 in hifloat8 (a tie away), 5.0 -> 4.0 in float4_e2m1x2."""
    from pypto_sim import dtypes
    assert dtypes.round_scalar(464.0, pto.float8_e4m3) == 448.0
    assert dtypes.round_scalar(1.0625, pto.hifloat8) == 1.125
    assert dtypes.round_scalar(5.0, pto.float4_e2m1x2) == 4.0


def test_en_dtypes_hifloat8_arrays_go_in_and_out():
    """An en_dtypes hifloat8 array (the type pto-isa's gen_data.py writes) gives a hifloat8
    tensor of its bytes and reads back as itself."""
    x = np.array([1, -2, 0.5, 32768, 2.0 ** -22], np.float32).astype(en_dtypes.hifloat8)
    t = pto.to_device(x)
    assert t.dtype == pto.hifloat8
    back = np.empty(5, en_dtypes.hifloat8)
    pto.memcpy_d2h(back, t)
    assert np.array_equal(back.view(np.uint8), x.view(np.uint8))
