"""Tensors of int8, uint8, int16, bfloat16, int64, float64 and bool at the host/device boundary.

Kernels load int8/uint8/int16 as int32 and bfloat16 as float32 lane values, and store them
back wrapped / rounded as numpy's astype would; float64 and int64 tensors copy in and out
exactly, and a kernel that would compute on them is a clear CompileError (no unit does)."""
import numpy as np
import pytest

import pypto_sim as pto

BF16_CASES = np.array([1.0, 1.00390625, 1.01171875, 3.14159, -2.5, 1e38, 3.4e38, -3.4e38,
                       np.inf, np.nan, 1e-40, -0.0, 65504.0, 1.0e-38], np.float32)


def bf16_reference(x):
    """bfloat16 rounding written with numpy bit operations on float32 (ties to even)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    lsb = (u >> 16) & 1
    r = ((u + 0x7FFF + lsb) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), r)


@pytest.mark.parametrize("dtype,np_dtype", [(pto.int8, np.int8), (pto.uint8, np.uint8),
                                            (pto.int16, np.int16), (pto.int64, np.int64),
                                            (pto.float64, np.float64)])
def test_memcpy_round_trips(dtype, np_dtype):
    info = np.iinfo(np_dtype) if np.dtype(np_dtype).kind in "iu" else None
    if info is not None:
        lo, hi = info.min, info.max
        host = np.array([lo, hi, 0, 1, lo + 1, hi - 1], np_dtype)
    else:
        host = np.array([np.pi, -0.0, np.inf, 1e-310, np.finfo(np.float64).max, np.nan])
    d = pto.alloc_tensor(host.nbytes, dtype=dtype)
    pto.memcpy_h2d(d, host)
    out = d.numpy()
    assert out.dtype == np.dtype(np_dtype)
    np.testing.assert_array_equal(out, host)


def test_bfloat16_tensors_round_on_the_way_in():
    d = pto.alloc_tensor(2 * len(BF16_CASES), dtype=pto.bfloat16)
    pto.memcpy_h2d(d, BF16_CASES)
    out = d.numpy()
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, bf16_reference(BF16_CASES))
    assert out[1] == 1.0 and out[2] == 1.015625        # a tie to even, then a round up
    assert np.isposinf(out[6]) and np.isneginf(out[7])


@pto.kernel
def narrow_math(a8, u8, s16, bf, o, n):
    i = pto.get_global_id()
    if i < n:
        a8[i] = a8[i] * 3 + 1
        u8[i] = u8[i] + 200
        s16[i] = s16[i] * 300
        o[i] = bf[i] * 3.0
        bf[i] = bf[i] * 3.0


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_kernels_widen_loads_and_wrap_or_round_stores(mode):
    rng = np.random.default_rng(4)
    n = len(BF16_CASES)
    a8 = rng.integers(-128, 128, n).astype(np.int8)
    u8 = rng.integers(0, 256, n).astype(np.uint8)
    s16 = rng.integers(-32768, 32768, n).astype(np.int16)
    tensors = []
    for host, dt in ((a8, pto.int8), (u8, pto.uint8), (s16, pto.int16), (BF16_CASES, pto.bfloat16)):
        d = pto.alloc_tensor(host.size * dt.itemsize, dtype=dt)
        pto.memcpy_h2d(d, host)
        tensors.append(d)
    o = pto.alloc_tensor(4 * n)
    pto.launch(narrow_math, grid=(1, 1, 1), block=(32, 1, 1), args=(*tensors, o, n), mode=mode)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(tensors[0].numpy(), (a8.astype(np.int32) * 3 + 1).astype(np.int8))
        np.testing.assert_array_equal(tensors[1].numpy(), (u8.astype(np.int32) + 200).astype(np.uint8))
        np.testing.assert_array_equal(tensors[2].numpy(), (s16.astype(np.int32) * 300).astype(np.int16))
        loaded = bf16_reference(BF16_CASES)
        np.testing.assert_array_equal(o.numpy(), loaded * np.float32(3))
        np.testing.assert_array_equal(tensors[3].numpy(), bf16_reference(loaded * np.float32(3)))


@pto.kernel
def use_float64(x, o):
    i = pto.get_global_id()
    o[i] = x[i] * 2.0


def test_a_kernel_computes_float64_and_stores_it_rounded_to_float32():
    """x[i] * 2.0 is a float64 product (a Python float literal adopts the float64 operand's
    dtype); the store to the float32 tensor rounds it once: x = 1 + 2**-30 gives 2 + 2**-29 in
    float64, which float32 (24 bits) rounds to 2.0; x = 1.5 gives 3.0 exactly."""
    host = np.array([1 + 2.0**-30, 1.5] * 16)
    x = pto.to_device(host)
    o = pto.alloc_tensor(4 * 32)
    pto.launch(use_float64, grid=(1, 1, 1), block=(32, 1, 1), args=(x, o))
    np.testing.assert_array_equal(o.numpy(), np.array([2.0, 3.0] * 16, np.float32))


def test_int64_and_float64_tensors_hold_every_value_bit_for_bit():
    """HBM holds each element in its dtype's bytes: int64 past 2**53 (a float64 word rounded
    2**53 + 1 to 2**53 and was refused) and the extremes, float64 -0.0, a subnormal and NaNs
    with payloads and either sign come back with the bits they went in with."""
    ints = np.array([2**53 + 1, -(2**53) - 1, 2**63 - 1, -2**63, 2**60 + 3, -1], np.int64)
    d = pto.alloc_tensor(ints.nbytes, dtype=pto.int64)
    pto.memcpy_h2d(d, ints)
    assert d.numpy().tobytes() == ints.tobytes()
    bits = np.array([0x7FF0000000000001, 0xFFF8DEADBEEF0001, 0x7FF4000000000000,
                     0x8000000000000000, 0x0000000000000001, 0x7FEFFFFFFFFFFFFF], np.uint64)
    floats = bits.view(np.float64)           # signalling / payload NaNs, -0.0, min subnormal, max
    f = pto.alloc_tensor(floats.nbytes, dtype=pto.float64)
    pto.memcpy_h2d(f, floats)
    assert f.numpy().view(np.uint64).tolist() == bits.tolist()


def test_dtype_mismatches_are_named():
    d = pto.alloc_tensor(8, dtype=pto.int8)
    with pytest.raises(pto.LaunchError, match="holds int8"):
        pto.memcpy_h2d(d, np.zeros(8, np.uint8))
    with pytest.raises(pto.CompileError, match="alloc_local"):
        pto.launch(_int8_tile, grid=(1, 1, 1), block=(32, 1, 1), args=(d,))


@pto.kernel
def _int8_tile(a):
    t = pto.alloc_local(8, dtype=pto.int8)
    pto.async_load(t, a, 8)


@pto.kernel
def pick(m, x, o, n):
    i = pto.get_global_id()
    if i < n:
        if m[i]:
            o[i] = x[i] > 2.0
        else:
            o[i] = not m[i]
        pto.fma(o + n + i, x[i], 1.0, -1.0)


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_bool_tensors_load_and_store_as_bool_lane_values(mode):
    """A bool tensor (numba's bool arrays) copies in and out as numpy bools and kernels load
    its elements as bool lane values and store bools (non-zero is True). m = T F T T F T F T,
    x = 0..7: where m, o = x > 2 (lanes 0, 2: False; 3, 5, 7: True); elsewhere not m = True.
    The fma x * 1 - 1 stored to a bool is False only for x = 1."""
    m = np.array([1, 0, 1, 1, 0, 1, 0, 1], bool)
    d_m, d_x, d_o = pto.to_device(m), pto.to_device(np.arange(8, dtype=np.float32)), pto.alloc_tensor(16, pto.bool_)
    assert d_m.dtype == pto.bool_ and d_m.nbytes == 8
    pto.launch(pick, grid=(1,), block=(32,), args=(d_m, d_x, d_o, 8), mode=mode)
    out = d_o.numpy()
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out[:8], [0, 1, 0, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(out[8:], np.arange(8) != 1)
    np.testing.assert_array_equal(d_m.numpy(), m)
