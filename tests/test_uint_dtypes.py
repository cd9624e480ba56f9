"""uint16 and uint32: tensors, lane values with C's unsigned arithmetic, a uint32 atomic_add,
AI-core tiles, and integer arithmetic on narrow-integer vector tiles.

Every expected value is numpy's on the same dtypes: numpy's uint32 arithmetic wraps modulo
2**32 as C's (and numba-cuda's stores to a uint32 array) does, so `a + b` of two uint32 arrays
is the kernel's `a[i] + b[i]`; narrow tiles compute as pto-isa's CPU simulation writes them,
`dst[idx] = src0[idx] + src1[idx]` (include/pto/cpu/TAdd.hpp at 3186c381) in C++, whose
conversion of the int result back to int16_t keeps it modulo 2**16 (numpy's astype)."""
import numpy as np
import pytest

import pypto_sim as pto

U32_SPECIAL = np.array([0, 1, 2**31 - 1, 2**31, 2**32 - 2, 2**32 - 1], np.uint32)


def device(host, dtype):
    """A device tensor holding host's elements as dtype."""
    d = pto.alloc_tensor(host.nbytes, dtype=dtype)
    pto.memcpy_h2d(d, host)
    return d


@pytest.mark.parametrize("dtype,np_dtype", [(pto.uint16, np.uint16), (pto.uint32, np.uint32)])
def test_memcpy_round_trips_every_special_value(dtype, np_dtype):
    """0, 1, max and max - 1, and the value with only the top bit set, come back bit for bit
    (each element is its dtype's little-endian bytes in HBM)."""
    top = np.iinfo(np_dtype).max
    host = np.array([0, 1, top, top - 1, (top >> 1) + 1], np_dtype)
    d = device(host, dtype)
    out = d.numpy()
    assert out.dtype == np.dtype(np_dtype)
    np.testing.assert_array_equal(out, host)
    assert bytes(d.numpy().view(np.uint8)) == host.tobytes()


@pto.kernel
def u32_math(a, b, add, sub, mul, div, mod, mn, shr, lt, neg):
    i = pto.get_global_id()
    x = a[i]
    y = b[i]
    add[i] = x + y
    sub[i] = x - y
    mul[i] = x * y
    div[i] = x // (y | 1)
    mod[i] = x % (y | 1)
    mn[i] = min(x, y)
    shr[i] = x >> 3
    lt[i] = x < -1          # C: -1 converts to 4294967295, so only x == 2**32 - 1 is not below
    neg[i] = 0 - x


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_uint32_lane_arithmetic_wraps_as_c_does(mode):
    """Random uint32 pairs and every pair of the special values 0, 1, 2**31 - 1, 2**31,
    2**32 - 2, 2**32 - 1 (wraparound both ways), against numpy's uint32 operators:
    x + y, x - y and x * y modulo 2**32; // and % unsigned (y | 1 keeps the divisor nonzero);
    min; a logical right shift; x < -1 true for every x but 2**32 - 1; 0 - x = 2**32 - x."""
    rng = np.random.default_rng(7)
    sx, sy = np.meshgrid(U32_SPECIAL, U32_SPECIAL)
    a = np.concatenate([sx.ravel(), rng.integers(0, 2**32, 28, dtype=np.uint64).astype(np.uint32)])
    b = np.concatenate([sy.ravel(), rng.integers(0, 2**32, 28, dtype=np.uint64).astype(np.uint32)])
    n = len(a)                                            # 64: two warps
    outs = [device(np.zeros(n, np.uint32), pto.uint32) for _ in range(8)]
    lt = device(np.zeros(n, np.int32), pto.int32)
    neg = device(np.zeros(n, np.uint32), pto.uint32)
    pto.launch(u32_math, grid=(1, 1, 1), block=(n, 1, 1),
               args=(device(a, pto.uint32), device(b, pto.uint32), *outs[:7], lt, neg), mode=mode)
    odd = b | np.uint32(1)
    expect = [a + b, a - b, a * b, a // odd, a % odd, np.minimum(a, b), a >> np.uint32(3)]
    for got, want in zip(outs, expect):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(lt.numpy(), (a < np.uint32(2**32 - 1)).astype(np.int32))
    np.testing.assert_array_equal(neg.numpy(), np.uint32(0) - a)


@pto.kernel
def u16_math(a, out, n):
    i = pto.get_global_id()
    if i < n:
        out[i] = a[i] * 3 + 65535


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_uint16_loads_widen_and_stores_wrap(mode):
    """uint16 loads as an int32 lane value (every uint16 fits) and stores modulo 2**16:
    (x * 3 + 65535) mod 2**16 = 3x - 1 mod 2**16, numpy's uint16 result for x = 0 (65535),
    1 (2), 21845 (65534), 21846 (1) and 65535 (65532)."""
    a = np.array([0, 1, 21845, 21846, 65535], np.uint16)
    out = device(np.zeros(5, np.uint16), pto.uint16)
    pto.launch(u16_math, grid=(1, 1, 1), block=(32, 1, 1), args=(device(a, pto.uint16), out, 5), mode=mode)
    np.testing.assert_array_equal(out.numpy(), [65535, 2, 65534, 1, 65532])


@pto.kernel
def u32_to_signed(u, as_i32, as_cast, as_i8, n):
    i = pto.get_global_id()
    if i < n:
        as_i32[i] = u[i]                      # a uint32 value stored into int32: converted
        as_cast[i] = pto.cast(u[i], pto.int32)
        as_i8[i] = u[i]


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_uint32_value_converts_to_signed_integers_by_its_low_bits(mode):
    """C's (int32_t)u and numpy's astype keep the low bits: 2**32 - 8 -> -8, 2**31 -> -2**31,
    2**32 - 1 -> -1, 5 -> 5 into int32 (a store or pto.cast); into int8 the low byte: 248 -> -8,
    0, 255 -> -1, 5. (A float converts to int32 by saturation: the uint32 did too, giving
    2147483647.)"""
    u = np.array([2**32 - 8, 2**31, 2**32 - 1, 5], np.uint32)
    outs = [device(np.zeros(4, dt), pdt) for dt, pdt in ((np.int32, pto.int32), (np.int32, pto.int32),
                                                          (np.int8, pto.int8))]
    pto.launch(u32_to_signed, grid=(1, 1, 1), block=(32, 1, 1), args=(device(u, pto.uint32), *outs, 4), mode=mode)
    np.testing.assert_array_equal(outs[0].numpy(), [-8, -2**31, -1, 5])
    np.testing.assert_array_equal(outs[1].numpy(), [-8, -2**31, -1, 5])
    np.testing.assert_array_equal(outs[2].numpy(), [-8, 0, -1, 5])


@pto.kernel
def folded_casts(o):
    o[0] = pto.cast(300, pto.int8)
    o[1] = pto.cast(pto.cast(4294967288, pto.uint32), pto.int32)
    o[2] = pto.cast(3e9, pto.int32)
    o[3] = pto.cast(-300.7, pto.int32)


def test_constant_casts_fold_as_the_run_time_cast_converts():
    """A cast of a constant folds to what CAST gives at run time: 300 -> int8 keeps its low
    byte (44; it stayed 300), a uint32 2**32 - 8 -> int32 its low bits (-8; it was a compile
    error), a float 3e9 -> int32 saturates (2147483647) and -300.7 truncates toward zero."""
    o = device(np.zeros(4, np.int32), pto.int32)
    pto.launch(folded_casts, grid=(1, 1, 1), block=(1, 1, 1), args=(o,))
    np.testing.assert_array_equal(o.numpy(), [44, -8, 2**31 - 1, -300])


@pto.kernel
def u32_atomic(counts, old, bins):
    i = pto.get_global_id()
    old[i] = pto.atomic_add(counts + bins[i], 1)


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_uint32_atomic_add_counts_and_wraps(mode):
    """numba-cuda's uint32 atomic_add test as a histogram: 64 threads each add 1 to bin
    i % 4 of a uint32 array whose bins start at 0, 5, 2**32 - 16 and 2**32 - 1; each bin gets
    16 adds, so they end at 16, 21, 0 (wrapped exactly to zero) and 15 (wrapped past zero).
    Each old value returned is a distinct one of bin's start + 0 .. 15 modulo 2**32."""
    start = np.array([0, 5, 2**32 - 16, 2**32 - 1], np.uint32)
    counts = device(start, pto.uint32)
    old = device(np.zeros(64, np.uint32), pto.uint32)
    bins = np.arange(64, dtype=np.int32) % 4
    pto.launch(u32_atomic, grid=(1, 1, 1), block=(64, 1, 1), args=(counts, old, device(bins, pto.int32)),
               mode=mode)
    np.testing.assert_array_equal(counts.numpy(), start + np.uint32(16))
    got = old.numpy()
    for k in range(4):
        want = np.sort(start[k] + np.arange(16, dtype=np.uint32))
        np.testing.assert_array_equal(np.sort(got[bins == k]), want)


@pto.kernel
def u32_scalar(a, out, s):
    i = pto.get_global_id()
    out[i] = a[i] + s


def test_a_numpy_uint32_scalar_argument_is_a_uint32_value():
    """np.uint32(2**32 - 1) is a uint32 scalar as numba-cuda types it: a[i] + (2**32 - 1) is
    a[i] - 1 modulo 2**32 (0 -> 2**32 - 1, 1 -> 0, 7 -> 6)."""
    out = device(np.zeros(3, np.uint32), pto.uint32)
    pto.launch(u32_scalar, grid=(1, 1, 1), block=(3, 1, 1),
               args=(device(np.array([0, 1, 7], np.uint32), pto.uint32), out, np.uint32(2**32 - 1)))
    np.testing.assert_array_equal(out.numpy(), [2**32 - 1, 0, 6])


TILE_OPS = """
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 32, pto.{dt})
            b = pto.alloc_tile(16, 32, pto.{dt})
            d = pto.alloc_tile(16, 32, pto.{dt})
            pto.tload(a, A)
            pto.tload(b, B)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.{op}(d, a, b)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, d)
"""


def run_tile_op(make_kernels, op, dt, a, b):
    """O = op(A, B) on 16 x 32 Vec tiles of dt, on one AI core."""
    kernel = make_kernels(TILE_OPS.format(op=op, dt=dt)).k
    out = device(np.zeros((16, 32), dt), getattr(pto, dt))
    pto.launch(kernel, grid=(1,), args=(device(a, getattr(pto, dt)), device(b, getattr(pto, dt)), out))
    pto.sync()
    return out.numpy().reshape(16, 32)


@pytest.mark.parametrize("op,np_op", [("tadd", np.add), ("tsub", np.subtract), ("tmul", np.multiply),
                                      ("tmax", np.maximum), ("tmin", np.minimum)])
def test_int16_vector_tiles_wrap_as_pto_isa_cpu_does(make_kernels, op, np_op):
    """int16 TADD / TSUB / TMUL / TMAX / TMIN (A2/A3 lists int16 for each: docs/isa/TADD.md
    ... TMIN.md, "Implementation checks (A2A3)"): random int16 tiles with a row of the special
    pairs (-32768, -1), (32767, 1), (-32768, 32767), (0, -32768), ... against numpy's int16
    operators, which wrap modulo 2**16 (32767 + 1 = -32768, -32768 * -1 = -32768)."""
    rng = np.random.default_rng(3)
    a = rng.integers(-32768, 32768, (16, 32)).astype(np.int16)
    b = rng.integers(-32768, 32768, (16, 32)).astype(np.int16)
    a[0, :8] = [-32768, 32767, -32768, 0, 32767, -1, 1, 0]
    b[0, :8] = [-1, 1, 32767, -32768, 32767, -1, -32768, 0]
    with np.errstate(over="ignore"):
        want = np_op(a, b)
    np.testing.assert_array_equal(run_tile_op(make_kernels, op, "int16", a, b), want)


@pytest.mark.parametrize("dt", ["uint16", "uint32", "int8", "uint8"])
def test_narrow_tiles_load_and_store_bit_for_bit(make_kernels, dt):
    """TLOAD / TSTORE of uint16 and uint32 Vec tiles (TLOAD.md: `uint16_t`, `uint32_t` among
    TileData::DType) and int8 / uint8: TOR of a tile with itself is the tile (TOR.md: 1-, 2- and
    4-byte integers), so every value, 0 and max included, comes back unchanged."""
    info = np.iinfo(dt)
    rng = np.random.default_rng(5)
    a = rng.integers(info.min, int(info.max) + 1, (16, 32), dtype=np.int64).astype(dt)
    a[0, :4] = [info.min, info.max, 0, 1]
    np.testing.assert_array_equal(run_tile_op(make_kernels, "tor", dt, a, a), a)


@pytest.mark.parametrize("dt", ["uint16", "uint32", "int8"])
def test_bitwise_tiles_on_unsigned_and_narrow_integers(make_kernels, dt):
    """TXOR on uint16 / uint32 / int8 tiles (TXOR.md: `uint8_t` ... `int32_t`): numpy's ^,
    with max ^ 0 = max and max ^ max = 0 among the cases."""
    info = np.iinfo(dt)
    rng = np.random.default_rng(6)
    a = rng.integers(info.min, int(info.max) + 1, (16, 32), dtype=np.int64).astype(dt)
    b = rng.integers(info.min, int(info.max) + 1, (16, 32), dtype=np.int64).astype(dt)
    a[0, :2] = b[0, 1] = info.max
    b[0, 0] = 0
    np.testing.assert_array_equal(run_tile_op(make_kernels, "txor", dt, a, b), a ^ b)


@pytest.mark.parametrize("dt, pad", [("uint16", "max"), ("uint16", "min"), ("uint32", "max"),
                                     ("uint32", "zero")])
def test_tfillpad_pads_unsigned_tiles_with_their_extremes(make_kernels, dt, pad):
    """TFILLPAD_EXPAND of a 5 x 10 valid region of an 8 x 32 tile into a 16 x 32 tile: the
    region is copied, the rest is PadValue::Max (65535 / 4294967295), Min (0) or Zero
    (TFILLPAD.md: the type's greatest / least value for integers; 1-, 2- or 4-byte elements)."""
    x = (np.arange(8 * 32, dtype=np.int64) * 40503 + 2**31).astype(dt).reshape(8, 32)
    kernel = make_kernels(f"""
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(8, 32, pto.{dt}, valid=(5, 10))
            d = pto.alloc_tile(16, 32, pto.{dt})
            pto.tload(s, X, stride=32)
            pto.tfillpad_expand(d, s, pad="{pad}")
            pto.tstore(O, d)
""").k
    out = device(np.zeros((16, 32), dt), getattr(pto, dt))
    pto.launch(kernel, grid=(1,), args=(device(x, getattr(pto, dt)), out))
    pto.sync()
    fill = {"max": np.iinfo(dt).max, "min": 0, "zero": 0}[pad]
    want = np.full((16, 32), fill, dt)
    want[:5, :10] = x[:5, :10]
    np.testing.assert_array_equal(out.numpy().reshape(16, 32), want)


TCVT = """
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(1, {c}, pto.{src})
            d = pto.alloc_tile(1, {c}, pto.{dst})
            pto.tload(s, X)
            pto.tcvt(d, s, mode="{mode}"{sat})
            pto.tstore(O, d)
"""


def run_tcvt(make_kernels, x, src, dst, mode, sat):
    """dst = tcvt(src tile holding x) on one AI core: 1 x 32 tiles (whole 32-byte rows for
    every dtype) holding x repeated; the first len(x) results."""
    kernel = make_kernels(TCVT.format(c=32, src=src, dst=dst, mode=mode,
                                      sat="" if sat is None else f', sat="{sat}"')).k
    out = device(np.zeros(32, dst), getattr(pto, dst))
    with np.errstate(invalid="ignore"):
        host = np.resize(np.asarray(x, np.float64), 32).astype(src)
    pto.launch(kernel, grid=(1,), args=(device(host, getattr(pto, src)), out))
    pto.sync()
    return out.numpy()[:len(x)]


F32_TO_I16 = [0.5, 1.5, -2.5, 32767.4, 32768.0, 40000.0, -40000.0, np.inf, -np.inf, np.nan, 3e9, -3e9,
              65537.0, 2.5, -0.5, 100.7]


@pytest.mark.parametrize("sat, want", [
    (None, [0, 2, -2, 32767, -32768, -25536, 25536, 0, 0, 0, 0, 0, 1, 2, 0, 101]),
    ("on", [0, 2, -2, 32767, 32767, 32767, -32768, 32767, -32768, 0, 32767, -32768, 32767, 2, 0, 101]),
    ("off", [0, 2, -2, 32767, -32768, -25536, 25536, 0, 0, 0, 0, 0, 1, 2, 0, 101])])
def test_tcvt_float32_to_int16_by_saturation_mode(make_kernels, sat, want):
    """float32 -> int16 (TCVT.md: an A2A3 pair), mode rint (ties to even: 0.5 -> 0, 1.5 -> 2,
    -2.5 -> -2, 2.5 -> 2). SaturationMode ON clamps to [-32768, 32767], NaN 0. Without sat it
    is OFF, as TCVT(dst, src, mode) runs a narrowing pair (TCvt.hpp kIsNarrowingCvt).
    OFF is pto-isa's CPU simulation's static_cast<int16_t>(double) on x86 (TCvt.hpp): through
    int32, keeping the low 16 bits - 32768 -> -32768, 40000 -> 40000 - 65536 = -25536, -40000 ->
    25536, 65537 -> 1 - and 0 for what int32 cannot hold (inf, NaN, +-3e9: x86's
    0x80000000, whose low 16 bits are 0)."""
    got = run_tcvt(make_kernels, F32_TO_I16, "float32", "int16", "rint", sat)
    np.testing.assert_array_equal(got, np.array(want, np.int16))


@pytest.mark.parametrize("sat, want", [("on", [255, 0, 255, 255, 0, 7]), ("off", [44, 255, 255, 0, 0, 7])])
def test_tcvt_float16_to_uint8_truncates_then_saturates_or_wraps(make_kernels, sat, want):
    """float16 -> uint8 (an A2A3 pair), mode trunc: 300 -> 300, -1 -> -1, 255.9 -> 255,
    256 -> 256, -0.9 -> 0, 7.9 -> 7; ON clamps to [0, 255]; OFF keeps the low 8 bits (C++
    through int64): 300 -> 44, -1 -> 255, 256 -> 0."""
    got = run_tcvt(make_kernels, [300.0, -1.0, 255.9, 256.0, -0.9, 7.9], "float16", "uint8", "trunc", sat)
    np.testing.assert_array_equal(got, np.array(want, np.uint8))


def test_tcvt_narrow_integers_to_float16_and_int32_to_int16(make_kernels):
    """int8 -> float16 and uint8 -> float16 are exact (-128, 127, 0, 255); int32 -> int16
    saturates with sat='on' (70000 -> 32767, -70000 -> -32768) and wraps with sat='off' and
    without sat, TCVT(dst, src, mode)'s OFF for this narrowing pair (TCvt.hpp kIsNarrowingCvt)
    (70000 - 65536 = 4464, -70000 + 131072 = 61072 - 65536 = -4464)."""
    np.testing.assert_array_equal(run_tcvt(make_kernels, [-128, 127, 0, -1] * 8, "int8", "float16", "rint", None),
                                  np.array([-128, 127, 0, -1] * 8, np.float16))
    np.testing.assert_array_equal(run_tcvt(make_kernels, [255, 0, 128, 1] * 8, "uint8", "float16", "rint", None),
                                  np.array([255, 0, 128, 1] * 8, np.float16))
    x = [70000, -70000, 5, -5] * 2
    np.testing.assert_array_equal(run_tcvt(make_kernels, x, "int32", "int16", "rint", "on"),
                                  np.array([32767, -32768, 5, -5] * 2, np.int16))
    for sat in ("off", None):
        np.testing.assert_array_equal(run_tcvt(make_kernels, x, "int32", "int16", "rint", sat),
                                      np.array([4464, -4464, 5, -5] * 2, np.int16))


def test_tcvt_refuses_a_pair_a2a3_lacks_and_a_bad_saturation_mode(make_kernels):
    """int16 -> int8 is not an A2A3 conversion (TCVT.md: I16 -> FP16, FP32); sat takes 'on' or
    'off' only."""
    for src, dst, sat, message in (("int16", "int8", None, r"int16 -> int8 is not a conversion of A2/A3"),
                                   ("float32", "int16", "maybe", r"sat must be 'on' or 'off'")):
        kernel = make_kernels(TCVT.format(c=32, src=src, dst=dst, mode="rint",
                                          sat="" if sat is None else f', sat="{sat}"')).k
        with pytest.raises(pto.CompileError, match=message):
            kernel.program_for((pto.alloc_tensor(128, getattr(pto, src)), pto.alloc_tensor(128, getattr(pto, dst))))
