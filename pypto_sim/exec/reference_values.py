"""The reference executor's value semantics: how one number becomes a value of a dtype
(``to_dtype``), TCVT's rounding modes (``round_mode``), and the ISA table's scalar expressions
(``evaluate``). Shared by the reference lane executor (``reference.py``) and its tile kernels
(``reference_tiles.py``); written to be obviously correct, as the rest of the reference."""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from .. import dtypes
from ..ir.program import INT_SEM_INT32, INT_SEM_INT64
from ..isa import store_modes

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1


def py_mod(a, b):
    """a % b for floats, exactly numpy's (npy_remainder): Python's sign convention."""
    with np.errstate(all="ignore"):
        return float(np.remainder(np.float64(a), np.float64(b)))


def py_floordiv(a, b):
    """a // b for floats, exactly numpy's (npy_floor_divide)."""
    with np.errstate(all="ignore"):
        return float(np.floor_divide(np.float64(a), np.float64(b)))


def fused_fma(a, b, c):
    """a * b + c rounded once to float64 (IEEE fusedMultiplyAdd): the exact value of finite
    operands as a fraction, rounded to nearest even by float(); an exact zero takes a * b + c's
    sign (then a * b is exact), non-finite operands give a * b + c's inf or NaN."""
    a, b, c = float(a), float(b), float(c)
    with np.errstate(all="ignore"):
        plain = float(np.float64(a) * np.float64(b) + np.float64(c))
    if not all(math.isfinite(v) for v in (a, b, c)):
        return plain
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return plain
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


def libm_exp(x):
    """e**x from the C library's exp (Python's math.exp), as the numba executor's np.exp
    computes it (numpy's own float64 exp may differ in the last bit); inf past the range."""
    x = float(x)
    if math.isnan(x):
        return x
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def libm_log(x):
    """log(x) from the C library's log, with IEEE's results where Python raises: NaN below
    zero, -inf at zero; a NaN argument is the result, as the numba executor's np.log gives it."""
    x = float(x)
    if math.isnan(x):
        return x                       # a NaN passes through, its sign with it, as np.log's does
    if x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    return math.log(x)


class _LibmNumpy:
    """numpy for the table's expressions, but exp and log from the C library (libm_exp,
    libm_log): a float64 result then matches the numba executor's bit for bit."""

    exp = staticmethod(libm_exp)
    log = staticmethod(libm_log)

    def __getattr__(self, name):
        return getattr(np, name)


def wrap_int32(v):
    """Wrap a Python int to int32 two's complement."""
    return (int(v) - INT32_MIN) % 2**32 + INT32_MIN


def int_pow(base, exp):
    """Integer base ** exp as A2/A3's TPowICore computes it (include/pto/npu/a2a3/TPow.hpp) on
    the int32s of both: 1 for exp 0; 0 and 1 for those bases; -1 or 1 for base -1 by exp's
    parity; 0 for a negative exp; else the power wrapped to int32 (each product wraps, so the
    whole does)."""
    b, e = wrap_int32(base), wrap_int32(exp)
    if e == 0:
        return 1
    if b in (0, 1):
        return b
    if b == -1:
        return -1 if e & 1 else 1
    if e < 0:
        return 0
    return wrap_int32(pow(b, e, 2**32))


def wrap_int64(v):
    """Wrap a Python int to int64 two's complement."""
    return (int(v) + 2**63) % 2**64 - 2**63


def float_to_int64(x):
    """A float converted to int64 as the GPU's cvt.rzi.s64.f64 does: truncated toward zero,
    saturated to int64's range, NaN 0 (dtypes.float_to_integer)."""
    return dtypes.float_to_integer(x, dtypes.int64)


def cast_word(dt, word, int_sem):
    """CAST: the register word of a source of semantics int_sem (INT_SEM_INT64: an int64's bits;
    INT_SEM_INT32: a 32-bit integer's value; else a float's) converted to dtype code dt,
    returned as dt's register word (dtypes.word_of); C's conversions, each rounding once: an
    integer to int32 keeps its low 32 bits, a float saturates."""
    int64 = dtypes.int64
    if int_sem == INT_SEM_INT32 and dt == dtypes.int32.code:
        return float(wrap_int32(int(word)))
    if int_sem == INT_SEM_INT64:
        v = dtypes.value_of(word, int64)
        if dt == int64.code:
            return float(word)
        with np.errstate(all="ignore"):
            if dt == dtypes.float32.code:
                return float(np.float32(np.int64(v)))          # one rounding, as C's (float)
            if dt in (dtypes.float64.code, dtypes.float16.code):
                return to_dtype(dt, float(v))
        if dt == dtypes.bool_.code:
            return 1.0 if v != 0 else 0.0
        return to_dtype(dt, float(wrap_int32(v)))               # low 32 bits, then narrower
    if dt == int64.code:
        return dtypes.word_of(float_to_int64(float(word)), int64)
    return to_dtype(dt, word)


def to_dtype(dt, x):
    """Round the number x to a value of dtype code dt, returned as the float64 register word."""
    x = float(x)
    with np.errstate(all="ignore"):
        if dt == dtypes.float32.code:
            return float(np.float32(x))
        if dt == dtypes.float16.code:
            return float(np.float16(x))
        if dt == dtypes.bfloat16.code:
            return dtypes.round_bfloat16(x)
        if dt in (dtypes.int8.code, dtypes.uint8.code, dtypes.int16.code, dtypes.uint16.code,
                  dtypes.uint32.code, dtypes.int32.code):    # wrap, or saturate to int32 (numba's)
            return float(dtypes.float_to_integer(x, dtypes.BY_CODE[dt]))
        if dt in (dtypes.int64.code, dtypes.float64.code):
            return x
    return 1.0 if x != 0 else 0.0


CVT_MODES = dtypes.CVT_MODES


def _neighbour(dt, v, up):
    """The next value of float dtype dt after v (a value of dt) toward +inf (up) or -inf."""
    if dt == dtypes.bfloat16.code:              # bfloat16 = the high half of a float32
        bits = int(np.float32(v).view(np.uint32)) >> 16
        bits += 1 if (up == (v >= 0)) and not (v == 0 and not up) else -1
        if v == 0:
            bits = 0x0001 if up else 0x8001
        return float(np.uint32(bits << 16).view(np.float32))
    t = np.float16 if dt == dtypes.float16.code else np.float32
    return float(np.nextafter(t(v), t(np.inf if up else -np.inf)))


def _last_bit(dt, v):
    """The last mantissa bit of v's encoding in float dtype dt."""
    if dt == dtypes.float16.code:
        return int(np.float16(v).view(np.uint16)) & 1
    bits = int(np.float32(v).view(np.uint32))
    return (bits >> 16) & 1 if dt == dtypes.bfloat16.code else bits & 1


def _integer(x, name):
    """The finite x rounded to an integer by the TCVT mode called name."""
    lo, hi = math.floor(x), math.ceil(x)
    if lo == hi:
        return lo
    return {"rint": hi if (x - lo > 0.5 or (x - lo == 0.5 and lo % 2)) else lo,
            "round": (hi if x > 0 else lo) if x - lo == 0.5 else (lo if x - lo < 0.5 else hi),
            "floor": lo, "ceil": hi, "trunc": lo if x > 0 else hi,
            "odd": lo if lo % 2 else hi}[name]


def _narrow(dt, r, wrap):
    """An integral r (or NaN / inf) as integer dtype dt (int32, int16, int8, uint8) by TCVT's
    SaturationMode (pto-isa include/pto/cpu/TCvt.hpp): ON clamps to dt's range, NaN 0; OFF is
    x86's static_cast<D>(double): through int32 (int64 for uint8), low bits kept; past that
    range, inf or NaN x86's integer indefinite (int32 min: -2**31 as int32, 0 in 8 or 16 bits)."""
    d = dtypes.BY_CODE[dt]
    info = np.iinfo(d.numpy)
    if not wrap:
        return 0.0 if math.isnan(r) else float(min(max(r, int(info.min)), int(info.max)))
    limit = 9.2e18 if d == dtypes.uint8 else 2.0**31            # int64's range, as numba clamps
    if not -limit <= r < limit:
        return 0.0 if d == dtypes.uint8 else float(dtypes.round_scalar(-2**31, d))
    return to_dtype(dt, r)


def round_mode(dt, x, mode):
    """TCVT: x rounded to dtype code dt by mode (CVT_MODES), from dt's two neighbours of x.
    mode + dtypes.CVT_SAT_OFF: SaturationMode::OFF (an integer result wraps, _narrow);
    + dtypes.CVT_INTEGRAL: x rounded to an integral value by mode, a zero keeping x's sign
    (float32 -> float32, vconv_f322f32*)."""
    x = float(x)
    wrap = bool(int(mode) & dtypes.CVT_SAT_OFF)
    integral = bool(int(mode) & dtypes.CVT_INTEGRAL)
    mode = int(mode) % dtypes.CVT_SAT_OFF
    name = CVT_MODES[mode]
    if integral:
        return to_dtype(dt, math.copysign(_integer(x, name), x) if math.isfinite(x) else x)
    if dt in (dtypes.int16.code, dtypes.int8.code, dtypes.uint8.code) or (wrap and dt == dtypes.int32.code):
        return _narrow(dt, float(_integer(x, name)) if math.isfinite(x) else x, wrap)
    if math.isnan(x) or math.isinf(x):
        return to_dtype(dt, x)
    if dt == dtypes.int32.code:
        return to_dtype(dt, _integer(x, name))
    if name == "rint" or dt not in (dtypes.float32.code, dtypes.float16.code, dtypes.bfloat16.code):
        return to_dtype(dt, x)
    n = to_dtype(dt, x)                         # the nearest (even), maybe inf
    if n == x:
        return n
    lo, hi = (_neighbour(dt, n, False), n) if n > x else (n, _neighbour(dt, n, True))
    top = {dtypes.float16.code: 65504.0, dtypes.bfloat16.code: 3.3895313892515355e38}.get(
        dt, 3.4028234663852886e38)
    if name == "round":
        if math.isinf(lo) or math.isinf(hi):    # past the largest finite: inf from half an ulp on
            half = (top - _neighbour(dt, top, False)) / 2
            return math.copysign(math.inf if abs(x) >= top + half else top, x)
        d_lo, d_hi = x - lo, hi - x
        return (hi if x > 0 else lo) if d_lo == d_hi else (lo if d_lo < d_hi else hi)
    if name == "floor":
        return lo
    if name == "ceil":
        return hi
    if name == "trunc":
        return lo if x > 0 else hi
    if math.isinf(lo) or math.isinf(hi):        # odd: the largest finite (its last bit is 1)
        return math.copysign(top, x)
    return lo if _last_bit(dt, lo) else hi


_EVAL_GLOBALS = {"__builtins__": {}, "np": _LibmNumpy(), "math": math, "abs": abs,
                 "py_mod": py_mod, "py_floordiv": py_floordiv, "fused_fma": fused_fma,
                 "round_to": to_dtype, "int_pow": int_pow}


@functools.lru_cache(maxsize=None)
def _compiled(text):
    return compile(text, "<isa expression>", "eval")


def evaluate(spec, a, b, c, int_sem, dt):
    """One lane of spec's scalar semantics, unrounded: the table's int or float expression
    (int_sem: ir.program's INT_SEM_*; a true int_sem other than INT_SEM_INT64 wraps to int32;
    an INT_SEM_INT64 caller passes the operands' values, not their words; dt: the result's
    dtype code, read by a float expression that rounds an intermediate, round_to(dt, a * b)).

    An instruction without the requested expression has no defined result; like the numba
    executor it gives 0 (int) or NaN (float). The compiler never emits that.
    """
    if int_sem:
        if spec.int_expr is None:
            return 0
        wide = int_sem == INT_SEM_INT64
        env = {"a": int(a), "b": int(b), "c": int(c), "bits": 64 if wide else 32}
        wrap = wrap_int64 if wide else wrap_int32
        return wrap(eval(_compiled(spec.int_expr), _EVAL_GLOBALS, env))
    if spec.float_expr is None:
        return math.nan
    env = {"a": np.float64(a), "b": np.float64(b), "c": np.float64(c), "dt": dt}
    with np.errstate(all="ignore"):
        return float(eval(_compiled(spec.float_expr), _EVAL_GLOBALS, env))


def word_pitch(pitch, cols):
    """A tile operand's words from row to row: its pitch operand, or cols when that is 0 or less."""
    return cols if pitch <= 0 else pitch


def words_grid(l1, src, rows, cols, pitch):
    """A copy of the rows x cols elements from word src, rows pitch words apart (<= 0: cols)."""
    pitch = word_pitch(pitch, cols)
    return np.array([l1[src + r * pitch:src + r * pitch + cols] for r in range(rows)]).reshape(rows, cols)


def tile_store_quant(buf, n, scale, mode):
    """A TSTORE_ACC's scalar pre-stage quantization (isa/store_modes.py QUANT) of the n values of
    buf in place: store_modes.quantize (the one statement of it) of each by the float32 scale, a
    float16 result (DEQF16) then rounded to float16 (numpy's, nearest even)."""
    with np.errstate(all="ignore"):
        out = np.array([store_modes.quantize(float(x), scale, mode) for x in buf[:n]], np.float64)
        buf[:n] = out.astype(np.float16).astype(np.float64) if mode & store_modes.QUANT_F16 else out


def tile_store_quant_words(buf, rows, cols, mem, fp, vdeq):
    """A TSTORE_FP's vector pre-stage quantization (isa/store_modes.py QUANT_VECTOR) of the rows x
    cols values of buf (row-major) in place: column c's by the quant word at mem[fp + c] (the
    Scaling tile's word c, its int64 bits in a float64 slot), decoded by store_modes.decode_word,
    through store_modes.quantize; vdeq (VDEQF16) takes the word's scale only, a float16 result
    rounded to float16 (numpy's)."""
    words = np.ascontiguousarray(mem[fp:fp + cols]).view(np.int64)
    with np.errstate(all="ignore"):
        for c in range(cols):
            scale, offset, mode = store_modes.decode_word(int(words[c]))
            mode = store_modes.QUANT_F16 if vdeq else mode
            col = np.array([store_modes.quantize(float(x), scale, mode, offset)
                            for x in buf[c:rows * cols:cols]], np.float64)
            f16 = mode & store_modes.QUANT_F16
            buf[c:rows * cols:cols] = col.astype(np.float16).astype(np.float64) if f16 else col
