"""Scalar arithmetic every compiled module shares: bit casts, fused multiply-add, the rounding of
a float64 to each dtype, 32-bit wrapping, Python's mod and floordiv, and exp within float32's
rounding (exp_f32_near).
"""
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

from .isa_constants import (DT_BFLOAT16, DT_BOOL, DT_FLOAT16, DT_FLOAT32, DT_FLOAT64, DT_INT16, DT_INT32,
                            DT_INT64, DT_INT8, DT_UINT16, DT_UINT32, DT_UINT8, INT_SEM_INT32, INT_SEM_INT64)

ST_OK = 0
ST_OOB = 1


@intrinsic
def f64_bits(typingctx, x):
    """The IEEE bits of float64 x as an int64 (a bit cast, no conversion)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))
    return types.int64(types.float64), codegen


@intrinsic
def bits_f64(typingctx, x):
    """The float64 whose IEEE bits are int64 x (a bit cast, no conversion)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.int64), codegen


@intrinsic
def fused_fma(typingctx, a, b, c):
    """a * b + c with one rounding (LLVM's llvm.fma.f64: the FMA instruction, or libm's exact
    fma where the host has none), as CUDA's fma(double) and a contracted a * b + c compute it."""
    def codegen(context, builder, signature, args):
        f64 = context.get_value_type(types.float64)
        fn = builder.module.declare_intrinsic("llvm.fma", [f64], ir.FunctionType(f64, [f64] * 3))
        operands = [context.cast(builder, v, t, types.float64) for v, t in zip(args, signature.args)]
        return builder.call(fn, operands)
    return types.float64(a, b, c), codegen


@njit(cache=True, error_model="numpy")
def f64_to_i64(x):
    """A float64 converted to int64 as the GPU's cvt.rzi.s64.f64 does: truncated toward zero,
    saturated to int64's range, NaN 0."""
    if x != x:
        return np.int64(0)
    if x >= 9.223372036854775807e18:                 # 2**63: past int64's largest value
        return np.int64(9223372036854775807)
    if x <= -9.223372036854775807e18:                # -2**63 is int64's smallest value
        return np.int64(-9223372036854775807 - 1)
    return np.int64(x)


@njit(cache=True, error_model="numpy")
def cast_word(dt, w, int_sem):
    """CAST: the register word w of a source of semantics int_sem (INT_SEM_INT64: an int64's
    bits; INT_SEM_INT32: a 32-bit integer's value; else a float's) converted to dtype code dt,
    as C converts: an int64 to float32 rounds once (not through float64), to a narrower integer
    keeps the low bits, as an int32 / uint32 to int32 does (a uint32 past int32's range wraps,
    as numpy's astype; a float saturates); a float to int64 is f64_to_i64; an int32 / uint32 /
    bool to int64 keeps its value."""
    if int_sem == INT_SEM_INT32 and dt == DT_INT32:
        return np.float64(wrap_i32(np.int64(w)))
    if int_sem == INT_SEM_INT64:
        v = f64_bits(w)
        if dt == DT_INT64:
            return w
        if dt == DT_FLOAT32:
            return np.float64(np.float32(v))
        if dt == DT_FLOAT64:
            return np.float64(v)
        if dt == DT_BOOL:
            return 1.0 if v != 0 else 0.0
        if dt == DT_FLOAT16:
            return round_f16(np.float64(v))            # past 65520 either way: inf
        return round_to(dt, np.float64(wrap_i32(v)))   # low 32 bits, then narrower wraps
    if dt == DT_INT64:
        return bits_f64(f64_to_i64(w))
    return round_to(dt, w)


@njit(cache=True, error_model="numpy")
def int64_word(dt, v):
    """The register word of an int64-semantics result v: its bits for an int64 result, the
    0 / 1 itself for a condition (a compare of int64 operands)."""
    if dt == DT_INT64:
        return bits_f64(np.int64(v))
    return np.float64(v)


@njit(cache=True, error_model="numpy")
def round_f16(x):
    """Round a float64 to the nearest float16 value (ties to even), returned as float64."""
    if x != x or x == 0.0 or math.isinf(x):
        return x
    ax = abs(x)
    if ax >= 65520.0:
        return math.copysign(math.inf, x)
    # ax = m 2^e with 0.5 <= m < 1 (frexp; a subnormal double gives e = -1022 here, which
    # changes nothing below): float16's spacing there is q = 2^max(e - 11, -24), and ax / q
    # is exact, so ax * (1 / q) is the same number (no frexp, ldexp or division)
    qe = max(((f64_bits(ax) >> 52) & 0x7FF) - 1033, -24)
    return math.copysign(np.rint(ax * bits_f64((1023 - qe) << 52)) * bits_f64((1023 + qe) << 52), x)


@njit(cache=True, error_model="numpy")
def wrap_i32(v):
    """Wrap an int64 to int32 two's complement."""
    v = v & 0xFFFFFFFF
    if v >= 0x80000000:
        v -= 0x100000000
    return v


@njit(cache=True, error_model="numpy")
def int_pow(base, exp):
    """Integer base ** exp as A2/A3's TPowICore computes it (include/pto/npu/a2a3/TPow.hpp), on
    the int32s of both: exp 0 gives 1 (0 ** 0 too), base 0 gives 0, base 1 gives 1, base -1
    gives -1 or 1 by exp's parity, another base to a negative exp gives 0; else square and
    multiply, each product wrapping to int32."""
    b, e = wrap_i32(np.int64(base)), wrap_i32(np.int64(exp))
    if e == 0:
        return np.int64(1)
    if b == 0 or b == 1:
        return b
    if b == -1:
        return np.int64(-1) if e & 1 else np.int64(1)
    if e < 0:
        return np.int64(0)
    r = np.int64(1)
    while e != 0:
        if e & 1:
            r = wrap_i32(r * b)
        e >>= 1
        b = wrap_i32(b * b)
    return r


@njit(cache=True, error_model="numpy")
def round_bf16(x):
    """Round to the nearest bfloat16 value (through float32, ties to even), as float64."""
    f = np.float64(np.float32(x))
    if f != f or f == 0.0 or math.isinf(f):
        return f
    af = abs(f)
    m, e = math.frexp(af)
    q = math.ldexp(1.0, max(e - 8, -133))
    r = np.rint(af / q) * q
    if r >= 3.4028236692093846e38:             # 2**128: past bfloat16's largest finite value
        return math.copysign(math.inf, f)
    return math.copysign(r, f)


@njit(cache=True, error_model="numpy")
def wrap_bits(x, bits, signed):
    """An integer-valued float64 wrapped to a bits-wide two's complement (or unsigned) int."""
    if x != x:
        return 0.0
    v = np.int64(max(min(x, 9.2e18), -9.2e18)) & ((np.int64(1) << bits) - 1)
    if signed and v >= (np.int64(1) << (bits - 1)):
        v -= np.int64(1) << bits
    return np.float64(v)


@njit(cache=True, error_model="numpy")
def round_to(dt, x):
    """Round a float64 result to dtype code dt: the stored word is a value of that dtype.

    Float to int32 truncates toward zero and saturates; NaN gives 0. Stores to int8, uint8,
    int16 and uint16 wrap (as numpy's astype), and so does every uint32 result (C's unsigned
    arithmetic: an int32 result, or -1, becomes its value modulo 2**32); to bfloat16 round to
    nearest even.
    """
    if dt == DT_FLOAT32:
        return np.float64(np.float32(x))
    if dt == DT_FLOAT16:
        return round_f16(x)
    if dt == DT_INT8:
        return wrap_bits(x, 8, True)
    if dt == DT_UINT8:
        return wrap_bits(x, 8, False)
    if dt == DT_INT16:
        return wrap_bits(x, 16, True)
    if dt == DT_UINT16:
        return wrap_bits(x, 16, False)
    if dt == DT_UINT32:
        return wrap_bits(x, 32, False)
    if dt == DT_BFLOAT16:
        return round_bf16(x)
    if dt == DT_INT64 or dt == DT_FLOAT64:
        return x                                    # a float64, or an int64 word (its bits)
    if dt == DT_INT32:
        if x != x:
            return 0.0
        if x >= 2147483647.0:
            return 2147483647.0
        if x <= -2147483648.0:
            return -2147483648.0
        return np.float64(math.trunc(x))
    return 1.0 if x != 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def py_mod(a, b):
    """a % b for floats as numpy computes it (npy_divmod): fmod, moved to the sign of b; a
    zero remainder takes b's sign."""
    mod = np.fmod(a, b)
    if b == 0.0:
        return mod
    if mod != 0.0:
        if (b < 0.0) != (mod < 0.0):
            mod += b
    else:
        mod = math.copysign(0.0, b)
    return mod


@njit(cache=True, error_model="numpy")
def py_floordiv(a, b):
    """a // b for floats as numpy computes it (npy_divmod): (a - fmod(a, b)) / b, moved down
    when the remainder's sign differs from b's, snapped to the nearest integer; a zero
    quotient takes the sign of a / b."""
    if b == 0.0:
        return a / b
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0.0 and (b < 0.0) != (mod < 0.0):
        div -= 1.0
    if div != 0.0:
        floordiv = np.floor(div)
        if div - floordiv > 0.5:
            floordiv += 1.0
        return floordiv
    return math.copysign(0.0, a / b)


# exp_near's constants: 1 / ln 2, fdlibm's ln 2 split in two (LN2_HI has its low 32 bits
# zero, so k * LN2_HI is exact for |k| < 2^20), 1.5 * 2^52 (adding it rounds to an integer
# and leaves it in the low bits), and the margin exp_f32_near allows between exp_near and
# libm's exp (each within 2^-50 of e^x; libm's exp is within 1 ulp, 2^-52)
EXP_LOG2E = 1.4426950408889634
EXP_LN2_HI = 6.93147180369123816490e-01
EXP_LN2_LO = 1.90821492927058770002e-10
EXP_SHIFTER = 6755399441055744.0
EXP_MARGIN = 2.0**-40


@njit(cache=True, error_model="numpy", inline="always")
def exp_near(x):
    """e^x within 2^-50 relative for |x| <= 700 (x is clamped there), without branches or
    calls: x = k ln 2 + r with |r| <= ln 2 / 2 (Cody and Waite's reduction), e^r by its Taylor
    polynomial to r^12 (truncation below 2^-52), times 2^k built in float64's exponent bits."""
    x = min(max(x, -700.0), 700.0)
    t = x * EXP_LOG2E + EXP_SHIFTER
    k = t - EXP_SHIFTER
    r = (x - k * EXP_LN2_HI) - k * EXP_LN2_LO
    p = 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    scale = np.int64((np.float64(t).view(np.int64) + 1023) << 52)
    return p * scale.view(np.float64)


@njit(cache=True, error_model="numpy", inline="always")
def exp_f32_near(x):
    """(float32(exp(x)) as float64, 0), libm's exp rounded to float32, when exp_near vouches
    for it: every number within EXP_MARGIN of exp_near(x) rounds to that one float32, and
    libm's exp(x) is among them (both within 2^-50 of e^x), so it rounds there too; else
    (x, 1): the caller computes libm's exp itself (|x| > 700, NaN, or e^x within the margin
    of a float32 rounding point, about one x in 2^15)."""
    y = exp_near(x)
    lo = np.float32(y - y * EXP_MARGIN)
    unsure = (lo != np.float32(y + y * EXP_MARGIN)) | (not (abs(x) <= 700.0))
    return np.float64(lo), np.int8(unsure)


@njit(cache=True, error_model="numpy", inline="always")
def row_pitch(pitch, cols):
    """The words from one row of a tile operand to the next: its pitch operand, or cols when that
    is 0 or less (a dense tile, or a record without the operand)."""
    return cols if pitch <= 0 else pitch
