"""Values of the AI core's instructions on special values (signed zeros, subnormals, the
extremes, inf and NaN), against numpy: moves copy words exactly, the fixpipe and TCVT round
to nearest even (overflow to inf), and the cube accumulates in float64 and rounds once to
float32 (docs/aicore.md: more exact than the hardware's float32 accumulation); TCVT's other
rounding modes on hand-worked cases."""
import numpy as np
import pytest

import pypto_sim as pto

SPECIAL_F16 = np.array([0.0, -0.0, 1.0, -1.0, 65504.0, -65504.0, 6e-8, -6e-8, 2.0**-14,
                        np.inf, -np.inf, np.nan, 0.5, 3.0, -2.5, 1000.0], np.float16)


def dev(array, dtype):
    t = pto.alloc_tensor(array.nbytes, dtype)
    pto.memcpy_h2d(t, array)
    return t


def host(t, shape, dtype):
    out = np.empty(shape, dtype)
    pto.memcpy_d2h(out, t)
    return out


def same(got, want):
    np.testing.assert_array_equal(got, want)
    keep = ~np.isnan(want.astype(np.float64))
    np.testing.assert_array_equal(np.signbit(got) & keep, np.signbit(want) & keep)


@pto.kernel
def moves(A, Bias, Out, Acc16, Acc32, Mov16):
    """Every cube-side move and the three matmuls on one 16 x 16 problem."""
    m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
    mb = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
    a = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
    b = pto.alloc_tile(16, 16, pto.float16, loc=pto.Right)
    bias = pto.alloc_tile(1, 16, pto.float32, loc=pto.Bias)
    c = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
    m16 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
    pto.tload(m, A)
    pto.tload(mb, Bias)
    pto.textract(a, m)
    pto.tmov(b, m)
    pto.textract(bias, mb)
    pto.tmatmul(c, a, b)
    pto.tmatmul_acc(c, a, b)
    pto.tstore(Acc32, c)
    pto.tmatmul_bias(c, a, b, bias)
    pto.tstore(Acc16, c)
    pto.tmov(m16, c)
    pto.tstore(Mov16, m16)
    pto.tstore(Out, m)


def test_moves_copy_exactly_and_the_cube_rounds_once():
    rng = np.random.default_rng(5)
    a = rng.choice(SPECIAL_F16, (16, 16)).astype(np.float16)
    a[np.arange(16), np.arange(16)] = SPECIAL_F16
    bias = np.zeros((16, 16), np.float32)
    bias[0] = [np.inf, -np.inf, np.nan, -0.0, 1e38, -1e38, 1.0, 2.0, 0.0, 1e-45, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    out = pto.alloc_tensor(512, pto.float16)
    acc16 = pto.alloc_tensor(512, pto.float16)
    acc32 = pto.alloc_tensor(1024, pto.float32)
    mov16 = pto.alloc_tensor(512, pto.float16)
    args = (dev(a, pto.float16), dev(bias, pto.float32), out, acc16, acc32, mov16)
    pto.launch(moves, grid=(1,), args=args)
    same(host(out, (16, 16), np.float16), a)
    with np.errstate(all="ignore"):
        prod = a.astype(np.float64) @ a.astype(np.float64)
        same(host(acc32, (16, 16), np.float32), (prod + prod.astype(np.float32)).astype(np.float32))
        biased = (prod + bias[0].astype(np.float64)).astype(np.float32)
        same(host(acc16, (16, 16), np.float16), biased.astype(np.float16))
        same(host(mov16, (16, 16), np.float16), biased.astype(np.float16))


@pto.kernel
def convert(X, Y):
    with pto.vector():
        x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        y = pto.alloc_tile(16, 16, pto.float16, loc=pto.Vec)
        half = pto.get_subblock_id() * 256
        pto.tload(x, X + half, stride=16)
        pto.tcvt(y, x)
        pto.tstore(Y + half, y)


def test_tcvt_rounds_float32_to_float16_to_nearest_even_with_overflow_to_inf():
    x = np.array([0.0, -0.0, 65504.0, 65519.0, 65520.0, -70000.0, 1e-8, 6e-8, 1 + 2.0**-11,
                  1 + 3 * 2.0**-11, np.inf, -np.inf, np.nan, 3.4e38, 0.1, -0.3] * 32, np.float32)
    X = dev(x, pto.float32)
    Y = pto.alloc_tensor(1024, pto.float16)
    pto.launch(convert, grid=(1,), args=(X, Y))
    with np.errstate(over="ignore"):
        same(host(Y, (512,), np.float16), x.astype(np.float16))


@pto.kernel
def to_bf16(X, Y):
    with pto.vector():
        x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        y = pto.alloc_tile(16, 16, pto.bfloat16, loc=pto.Vec)
        half = pto.get_subblock_id() * 256
        pto.tload(x, X + half)
        pto.tcvt(y, x)
        pto.tstore(Y + half, y)


def test_tcvt_rounds_float32_to_bfloat16_to_nearest_even():
    """bfloat16 keeps float32's exponent: 3.4e38 stays finite, 1 + 2^-8 is a tie that rounds
    to even (1.0), 1 + 3 * 2^-8 rounds up; NaN and infinities pass through."""
    from pypto_sim.dtypes import host_words
    x = np.array([0.0, -0.0, 1 + 2.0**-8, 1 + 3 * 2.0**-8, 3.4e38, -1e-40, np.inf, -np.inf, np.nan,
                  0.1, -0.3, 65520.0, 1e30, 2.5, -7.75, 1e-3] * 32, np.float32)
    X = dev(x, pto.float32)
    Y = pto.alloc_tensor(1024, pto.bfloat16)
    pto.launch(to_bf16, grid=(1,), args=(X, Y))
    got = np.empty(512, np.float32)
    pto.memcpy_d2h(got, Y)
    same(got, host_words(x, pto.bfloat16).astype(np.float32))


CVT_CASES = {   # x: {mode: float16 result}, each worked by hand (float16 has 10 mantissa bits)
    1 + 2.0**-11: {"rint": 1.0, "round": 1 + 2.0**-10, "floor": 1.0, "ceil": 1 + 2.0**-10,
                   "trunc": 1.0, "odd": 1 + 2.0**-10},            # the tie between 1 and 1 + 2^-10
    -(1 + 2.0**-11): {"rint": -1.0, "round": -(1 + 2.0**-10), "floor": -(1 + 2.0**-10),
                      "ceil": -1.0, "trunc": -1.0, "odd": -(1 + 2.0**-10)},
    70000.0: {"rint": np.inf, "round": np.inf, "floor": 65504.0, "ceil": np.inf,
              "trunc": 65504.0, "odd": 65504.0},                   # past the largest finite, 65504
    -70000.0: {"rint": -np.inf, "round": -np.inf, "floor": -np.inf, "ceil": -65504.0,
               "trunc": -65504.0, "odd": -65504.0},
    1e-8: {"rint": 0.0, "round": 0.0, "floor": 0.0, "ceil": 2.0**-24, "trunc": 0.0,
           "odd": 2.0**-24},                                       # below the least subnormal 2^-24
}
# float32 -> int32 has no CAST_ODD: TCvt.hpp's GenCastCallFp32ToInt32 runs its default:,
# vconv_f322s32z (trunc), for it
INT_CASES = {2.5: {"rint": 2, "round": 3, "floor": 2, "ceil": 3, "trunc": 2, "odd": 2},
             -2.5: {"rint": -2, "round": -3, "floor": -3, "ceil": -2, "trunc": -2, "odd": -2},
             3.5: {"rint": 4, "round": 4, "floor": 3, "ceil": 4, "trunc": 3, "odd": 3},
             3e9: {m: 2**31 - 1 for m in ("rint", "round", "floor", "ceil", "trunc", "odd")},
             float("nan"): {m: 0 for m in ("rint", "round", "floor", "ceil", "trunc", "odd")}}


@pytest.mark.parametrize("mode", ["rint", "round", "floor", "ceil", "trunc", "odd"])
def test_tcvt_rounds_by_each_mode_of_pto_isas_roundmode(make_kernels, mode):
    """float32 -> float16 and float32 -> int32 in each RoundMode, on ties, overflow, values
    below the least subnormal, saturation and NaN; the expected results are worked by hand
    (float32 -> int32 "odd" is trunc: A2/A3 has no vconv_f322s32o)."""
    mod = make_kernels('''
@pto.kernel
def k(X, H, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            x = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec, valid=(1, 8))
            h = pto.alloc_tile(1, 16, pto.float16, loc=pto.Vec, valid=(1, 8))
            i = pto.alloc_tile(1, 16, pto.int32, loc=pto.Vec, valid=(1, 8))
            pto.tload(x, X)
            pto.tcvt(h, x, mode="MODE")
            pto.tstore(H, h)
            pto.tload(x, X + 8)
            pto.tcvt(i, x, mode="MODE")
            pto.tstore(I, i)
'''.replace("MODE", mode))
    xs = np.zeros(16, np.float32)
    xs[:5] = list(CVT_CASES)
    xs[8:13] = list(INT_CASES)
    X = pto.alloc_tensor(64, pto.float32)
    H, I = pto.alloc_tensor(16, pto.float16), pto.alloc_tensor(32, pto.int32)
    pto.memcpy_h2d(X, xs)
    pto.launch(mod.k, grid=(1,), args=(X, H, I))
    pto.sync()
    h, i = np.empty(8, np.float16), np.empty(8, np.int32)
    pto.memcpy_d2h(h, H)
    pto.memcpy_d2h(i, I)
    np.testing.assert_array_equal(h[:5].astype(np.float64), [CVT_CASES[x][mode] for x in CVT_CASES])
    np.testing.assert_array_equal(i[:5], [INT_CASES[x][mode] for x in INT_CASES])


@pytest.mark.parametrize("call, message", [
    ("pto.tcvt(h, b)", r"tcvt: bfloat16 -> float16 is not a conversion of A2/A3; bfloat16 converts to "
                       r"float32, int32"),
    ('pto.tcvt(h, x, mode="nearest")', r"mode must be one of 'rint', 'round', 'floor', 'ceil', 'trunc', 'odd'"),
])
def test_tcvt_names_conversions_and_modes_a2a3_lacks(make_kernels, call, message):
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(f'''
@pto.kernel
def k(X):
    with pto.vector():
        x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        h = pto.alloc_tile(16, 16, pto.float16, loc=pto.Vec)
        b = pto.alloc_tile(16, 16, pto.bfloat16, loc=pto.Vec)
        {call}
''').k.program_for((pto.alloc_tensor(256),))
