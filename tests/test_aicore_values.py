"""Values of the AI core's instructions on special values (signed zeros, subnormals, the
extremes, inf and NaN), against numpy: moves copy words exactly, the fixpipe and TCVT round
to nearest even (overflow to inf), and the cube accumulates in float64 and rounds once to
float32 (docs/aicore.md: more exact than the hardware's float32 accumulation)."""
import numpy as np

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
