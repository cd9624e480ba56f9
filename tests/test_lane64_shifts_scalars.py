"""int64 shifts in lane kernels and numpy scalar launch arguments (issue 25).

Shifts on int64 values are C's (numba-cuda's) on the GPU: the result wraps modulo 2**64 and a
count outside 0..63 is clamped as PTX's shl / shr clamp it (0, or -1 for a negative x >> n),
as the int32 shifts clamp at 32. A numpy scalar argument keeps its dtype (np.int64 an int64
held as its bits, so 2**53 + 1 stays exact; np.float16 a float16; np.bool_ a bool). The
executor differential of SHL / SHR on int64 words is test_lane64.py's INT64_ALU (every ALU
instruction whose dtypes list int64).
"""
from __future__ import annotations

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim import dtypes

I64_MIN = -2**63


@pto.kernel
def shifts(a, s, o, n):
    i = pto.get_global_id()
    if i < n:
        o[i] = a[i] << s[i]
        o[n + i] = a[i] >> s[i]


# (x, count, x << count, x >> count), each derived by hand
SHIFT_CASES = [
    (1, 40, 2**40, 0),                       # past int32's width: 2**40 = 1099511627776
    (-3, 63, I64_MIN, -1),                   # -3's low bit lands in the sign bit; -3 >> 63 = -1
    (2**62, 1, I64_MIN, 2**61),              # 2**63 wraps to int64 min
    (2**53 + 1, 1, 2**54 + 2, 2**52),        # exact past 2**53 (a double would give 2**54)
    (I64_MIN, 64, 0, -1),                    # count 64: clamped, sign fill for >>
    (5, 65, 0, 0),
    (-5, 100, 0, -1),
    (7, -1, 0, 0),                           # a negative count is a huge unsigned one on PTX
    (-1, 0, -1, -1),
    (0x7FFF_FFFF_FFFF_FFFF, 32, -2**32, 2**31 - 1),   # (2**63 - 1) << 32 keeps the low 31 ones
]


def test_int64_shifts_wrap_and_clamp_as_c():
    """x << n and x >> n on int64 lanes against SHIFT_CASES' hand-derived values."""
    x = np.array([c[0] for c in SHIFT_CASES], np.int64)
    s = np.array([c[1] for c in SHIFT_CASES], np.int64)
    n = len(SHIFT_CASES)
    d_x, d_s = pto.to_device(x), pto.to_device(s)
    d_o = pto.alloc_tensor(2 * n * 8, pto.int64)
    shifts[1, 32](d_x, d_s, d_o, n)
    out = d_o.numpy()
    assert out[:n].tolist() == [c[2] for c in SHIFT_CASES]
    assert out[n:].tolist() == [c[3] for c in SHIFT_CASES]


def test_int64_shift_by_an_int32_literal_is_int64():
    """`x << 40` with an int64 x and an int32 literal is an int64 shift (promotion, as numba
    types it): 3 << 40 = 3298534883328, which int32 would have made 0."""
    @pto.kernel
    def k(a, o):
        o[0] = a[0] << 40
        o[1] = (a[0] << 61) >> 61           # 3 << 61 = 0x6000...0; >> 61 sign-fills: 3

    d_a = pto.to_device(np.array([3], np.int64))
    d_o = pto.alloc_tensor(16, pto.int64)
    k[1, 32](d_a, d_o)
    assert d_o.numpy().tolist() == [3 << 40, 3]


def _shift_chain(make_kernels, k, dtype):
    source = ("@pto.kernel\ndef chain(a, o):\n    i = pto.get_lane_id()\n    x = a[i]\n"
              + "    x = x << 1\n" * k + "    o[i] = x\n")
    kernel = make_kernels(source).chain
    host = np.arange(32, dtype=dtype)
    out = pto.to_device(np.zeros(32, dtype))
    prof = pto.profile(kernel, grid=(1, 1, 1), block=(32, 1, 1), args=(pto.to_device(host), out))
    np.testing.assert_array_equal(out.numpy(), host << k)
    return prof.total_cycles


def test_dependent_int64_shifts_cost_latency_64(make_kernels):
    """On the default machine SHL has latency 7 and, on 64-bit values, latency_64 = 2 x 7 = 14
    (assumed: two dependent 32-bit halves, the table's note). Three dependent shifts add
    3 x 7 = 21 cycles to an int32 kernel and 3 x 14 = 42 to an int64 one."""
    assert pto.machine().lane_timing("SHL", wide=True) == (14, 2)
    assert pto.machine().lane_timing("SHR", wide=True) == (14, 2)
    assert _shift_chain(make_kernels, 3, np.int32) - _shift_chain(make_kernels, 0, np.int32) == 21
    assert _shift_chain(make_kernels, 3, np.int64) - _shift_chain(make_kernels, 0, np.int64) == 42


# ---------------------------------------------------------------- numpy scalar arguments

@pto.kernel
def scalar_out(o, v):
    o[0] = v


@pytest.mark.parametrize("value, dtype", [
    (np.int64(2**53 + 1), pto.int64),                 # exact: a double would round it to 2**53
    (np.int64(-2**63), pto.int64),
    (np.int64(2**63 - 1), pto.int64),
    (np.uint32(4294967295), pto.uint32),
    (np.int32(-7), pto.int32),
    (np.int16(-300), pto.int32),                      # narrow ints: int32 lane values
    (np.uint16(65535), pto.int32),
    (np.float64(0.1), pto.float64),                   # 0.1 as a double, not float32's 0.1
    (np.float32(0.1), pto.float32),
    (np.float16(0.1), pto.float16),                   # 0.0999755859375
])
def test_numpy_scalar_arguments_keep_their_dtype(value, dtype):
    """A numpy scalar argument stored to a tensor of its own dtype comes back unchanged: its
    signature dtype is the scalar's, and an int64's register word holds its 64 bits."""
    d_o = pto.alloc_tensor(8, dtype)
    sig = scalar_out.signature_of((d_o, value))
    assert sig[1] == ("scalar", dtype)
    scalar_out[1, 32](d_o, value)
    out = d_o.numpy()[0]
    if dtype.is_float:
        assert out.dtype == dtype.numpy and out == value
    else:
        assert int(out) == int(value)


def test_numpy_bool_argument_is_a_bool():
    """np.bool_ is a bool scalar: `pto.select(flag, 5, 9)` picks 5 for True, 9 for False."""
    @pto.kernel
    def k(o, flag):
        o[0] = pto.select(flag, 5, 9)

    d_o = pto.alloc_tensor(4, pto.int32)
    assert k.signature_of((d_o, np.bool_(True)))[1] == ("scalar", dtypes.bool_)
    k[1, 32](d_o, np.bool_(True))
    assert d_o.numpy()[0] == 5
    k[1, 32](d_o, np.bool_(False))
    assert d_o.numpy()[0] == 9


def test_int64_argument_arithmetic_is_exact():
    """n + i with np.int64 n = 2**53 + 1 and i = 0..3 gives 2**53 + 1 + i exactly (in a
    double, 2**53 + 1 is 2**53 and every odd sum would be off by one)."""
    @pto.kernel
    def k(o, n):
        i = pto.get_global_id()
        if i < 4:
            o[i] = n + i

    d_o = pto.alloc_tensor(32, pto.int64)
    k[1, 32](d_o, np.int64(2**53 + 1))
    assert d_o.numpy().tolist() == [2**53 + 1 + i for i in range(4)]


def test_python_int_past_int32_says_to_pass_int64():
    """A Python int argument is an int32; one past its range is a LaunchError whose hint
    names np.int64."""
    d_o = pto.alloc_tensor(8, pto.int64)
    with pytest.raises(pto.LaunchError, match="does not fit in int32") as info:
        scalar_out.signature_of((d_o, 2**40))
    assert "np.int64" in str(info.value)


def test_uint64_argument_is_refused():
    """Kernels have no uint64 values: an np.uint64 argument is a LaunchError naming it."""
    d_o = pto.alloc_tensor(8, pto.int64)
    with pytest.raises(pto.LaunchError, match="uint64"):
        scalar_out.signature_of((d_o, np.uint64(5)))
