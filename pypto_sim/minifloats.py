"""The 8-bit and 4-bit float formats as bits: every code's value, and a value's code.

pto-isa's A5 types (docs/isa/TCVT.md, TMATMUL_MX.md, TEXTRACT.md, TMOV.md name them
``float8_e4m3_t``, ``float8_e5m2_t``, ``hifloat8_t``, ``float4_e2m1x2_t``, ``float4_e1m2x2_t``):

- float8_e4m3: OCP FP8 E4M3 ("e4m3fn": bias 7, no infinity, S.1111.111 is NaN, largest 448),
  as A5's FP8 and ml_dtypes.float8_e4m3fn hold it;
- float8_e5m2: OCP FP8 E5M2 (bias 15, IEEE infinities and NaNs, largest 57344);
- hifloat8: Huawei's HiF8 (Luo et al., "Ascend HiFloat8 Format for Deep Learning", arXiv
  2409.16626): a sign, a prefix-coded dot field D (``0000`` denormal, ``0001`` D=0, ``001``
  D=1, ``01`` D=2, ``10`` D=3, ``11`` D=4), D exponent bits in sign-magnitude with an implicit
  leading 1 (|E| in [2^(D-1), 2^D - 1]), and the rest mantissa (3, 3, 3, 2, 1 bits);
  denormals 2^(M-23); 0x00 zero, 0x80 NaN, 0x6F / 0xEF +-infinity (E = 15, M = 1), largest
  finite 2^15;
- float4_e2m1 / float4_e1m2: the two halves of pto-isa's ``float4_e2m1x2_t`` /
  ``float4_e1m2x2_t`` bytes (element 2i in the low nibble, 2i+1 in the high one, as
  include/pto/cpu/MXTypes.hpp GetProperDataPart and tcvt's gen_data.py pack_fp4 order them),
  with MXTypes.hpp's exponent bias 1: e2m1 is OCP MX FP4 (largest 6), e1m2's largest 1.75.
  Neither has an infinity or a NaN.

Rounding (``encode``): to nearest, ties to even (the OCP formats, ml_dtypes' astype, TCVT's
CAST_RINT), or ties away from zero for hifloat8 (the HiF8 paper's rounding, "TA", and
en_dtypes' hifloat8, which pto-isa's ttrans gen_data.py uses: "hifloat8 only support round
half to away"). A value past the largest finite one: with ``saturate`` the largest finite
value of its sign; without, what the format does (float8_e5m2 and hifloat8 infinity,
float8_e4m3 NaN, the fp4 formats the largest finite value: they have nothing else), each
from the halfway point past the largest value as IEEE 754 rounds overflow (hifloat8: from
40960, halfway to the 1.5 * 2^15 its infinity code would be). NaN encodes as the format's NaN
with NaN's sign (hifloat8: 0x80, its only NaN), a negative zero as the sign bit and zero
(hifloat8: 0x00, its 0x80 being NaN). The fp4 formats have no NaN: pypto_sim encodes NaN as
+0 (0x0), a choice: nothing public says what A5 gives, and ml_dtypes' float4_e2m1fn gives a
zero of the opposite sign (0x8 for +NaN, 0x0 for -NaN).

pto-isa's CPU simulation differs (include/pto/cpu/MXTypes.hpp, Hifloat8.hpp at 3186c381): its
float8 types read every exponent as a normal number (no NaN or infinity: e4m3's 0x7F reads
480) and encode by truncating the mantissa; its hifloat8 table gives the
D = 0 and D = 1 codes 5 and 4 mantissa bits (the spec: 3), so e.g. 0x18 reads 3.0, not 0.5,
and 0x0F 1.21875, not 1.875.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MiniFloat:
    """One small float format: its name, width in bits, exponent and mantissa widths and bias
    (hifloat8: 0, its fields vary), whether all-ones exponents mean infinity / NaN as IEEE's
    (``ieee``), the code of its NaN (-1 if none) and ``ties``: "even" or "away"."""

    name: str
    bits: int
    exp_bits: int
    man_bits: int
    bias: int
    ieee: bool
    nan_code: int
    ties: str = "even"

    @property
    def is_hifloat8(self) -> bool:
        """Whether this is HiF8 (its fields vary with the dot code)."""
        return self.name == "hifloat8"

    @property
    def values(self) -> np.ndarray:
        """float64 value of every code 0 .. 2**bits - 1 (NaN codes NaN)."""
        return _table(self)

    @property
    def max_finite(self) -> float:
        """The largest finite value."""
        v = self.values
        return float(np.nanmax(np.where(np.isinf(v), np.nan, v)))


FLOAT8_E4M3 = MiniFloat("float8_e4m3", 8, 4, 3, 7, False, 0x7F)
FLOAT8_E5M2 = MiniFloat("float8_e5m2", 8, 5, 2, 15, True, 0x7E)
HIFLOAT8 = MiniFloat("hifloat8", 8, 0, 0, 0, False, 0x80, ties="away")
FLOAT4_E2M1 = MiniFloat("float4_e2m1", 4, 2, 1, 1, False, -1)
FLOAT4_E1M2 = MiniFloat("float4_e1m2", 4, 1, 2, 1, False, -1)
FORMATS = {f.name: f for f in (FLOAT8_E4M3, FLOAT8_E5M2, HIFLOAT8, FLOAT4_E2M1, FLOAT4_E1M2)}


def _binary_value(fmt: MiniFloat, code: int) -> float:
    """The value of code in a sign / exponent / mantissa format (OCP FP8, FP4)."""
    sign = -1.0 if code >> (fmt.bits - 1) else 1.0
    e = (code >> fmt.man_bits) & ((1 << fmt.exp_bits) - 1)
    m = code & ((1 << fmt.man_bits) - 1)
    top = (1 << fmt.exp_bits) - 1
    if fmt.ieee and e == top:
        return sign * np.inf if m == 0 else np.nan
    if not fmt.ieee and fmt.nan_code >= 0 and (code & ~(1 << (fmt.bits - 1))) == fmt.nan_code:
        return np.nan                                  # e4m3fn: S.1111.111
    if e == 0:
        return sign * m * 2.0 ** (1 - fmt.bias - fmt.man_bits)
    return sign * (1 + m / (1 << fmt.man_bits)) * 2.0 ** (e - fmt.bias)


def _hifloat8_value(code: int) -> float:
    """The value of a HiF8 byte (arXiv 2409.16626, its Table 1 and equations (1), (2))."""
    sign = -1.0 if code & 0x80 else 1.0
    payload = code & 0x7F
    if payload >> 3 == 0:                              # dot 0000: zero / NaN / denormal
        m = payload & 0x7
        if m == 0:
            return np.nan if code & 0x80 else 0.0
        return sign * 2.0 ** (m - 23)
    if payload >> 5:                                   # dot 01, 10, 11: D = 2, 3, 4
        d = payload >> 5
        d = {1: 2, 2: 3, 3: 4}[d]
        rest, rest_bits = payload & 0x1F, 5
    elif payload >> 4:                                 # dot 001: D = 1
        d, rest, rest_bits = 1, payload & 0xF, 4
    else:                                              # dot 0001: D = 0
        d, rest, rest_bits = 0, payload & 0x7, 3
    man_bits = rest_bits - d
    e_field, m = rest >> man_bits, rest & ((1 << man_bits) - 1)
    if d:
        magnitude = (1 << (d - 1)) | (e_field & ((1 << (d - 1)) - 1))
        e = -magnitude if e_field >> (d - 1) else magnitude
    else:
        e = 0
    if d == 4 and e == 15 and m == 1:
        return sign * np.inf
    return sign * (1 + m / (1 << man_bits)) * 2.0 ** e


@functools.lru_cache(maxsize=None)
def _table(fmt: MiniFloat) -> np.ndarray:
    """Every code's value, computed once per format (read-only)."""
    codes = range(1 << fmt.bits)
    if fmt.is_hifloat8:
        vals = [_hifloat8_value(c) for c in codes]
    else:
        vals = [_binary_value(fmt, c) for c in codes]
    out = np.array(vals, np.float64)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=None)
def _ladder(fmt: MiniFloat):
    """The non-negative finite values in increasing order with their codes, one virtual step
    past the largest (the next value its exponent would give; code -1): rounding picks
    between neighbours on this ladder."""
    v = _table(fmt)
    sign_bit = 1 << (fmt.bits - 1)
    codes = [c for c in range(sign_bit) if np.isfinite(v[c])]
    codes.sort(key=lambda c: v[c])
    mags = [v[c] for c in codes]
    top = codes[-1]
    # the step past the largest: HiF8's infinity code as a number (E = 15, M = 1: 1.5 * 2^15),
    # the binary formats' next mantissa (e4m3's NaN code, e5m2's infinity as numbers)
    mags.append(1.5 * 2.0 ** 15 if fmt.is_hifloat8 else mags[-1] + _binary_step(fmt, top))
    codes.append(-1)
    return np.array(mags, np.float64), np.array(codes, np.int64)


def _binary_step(fmt: MiniFloat, code: int) -> float:
    e = (code >> fmt.man_bits) & ((1 << fmt.exp_bits) - 1)
    return 2.0 ** (max(e, 1) - fmt.bias - fmt.man_bits)


def decode(codes, fmt: MiniFloat) -> np.ndarray:
    """float64 values of an array of codes (integers 0 .. 2**bits - 1) of fmt."""
    return _table(fmt)[np.asarray(codes, np.int64) & ((1 << fmt.bits) - 1)]


def encode(values, fmt: MiniFloat, saturate: bool = False) -> np.ndarray:
    """The codes (uint8) of fmt nearest to values (rounded as the module docstring says;
    saturate: a value past the largest finite one, or an infinity, becomes the largest finite
    value of its sign)."""
    x = np.asarray(values, np.float64).reshape(-1)
    mags, codes = _ladder(fmt)
    sign_bit = 1 << (fmt.bits - 1)
    a = np.abs(x)
    hi = np.searchsorted(mags, np.where(np.isnan(a), 0.0, a), side="left").clip(1, len(mags) - 1)
    lo = hi - 1
    above, below = mags[hi] - a, a - mags[lo]
    if fmt.ties == "away":
        take_hi = above <= below
    else:
        lo_even = (codes[lo] & 1) == 0
        take_hi = (above < below) | ((above == below) & ~lo_even)
    idx = np.where(a <= mags[0], 0, np.where(take_hi, hi, lo))
    idx = np.where(a >= mags[-1], len(mags) - 1, idx)  # at or past the virtual step
    out = codes[idx]
    overflow = out < 0
    largest = codes[-2]
    if saturate or not (fmt.ieee or fmt.is_hifloat8 or fmt.nan_code >= 0):
        out = np.where(overflow, largest, out)         # the fp4 formats saturate always
    elif fmt.is_hifloat8 or fmt.ieee:
        inf_code = int(np.flatnonzero(np.isposinf(_table(fmt)))[0])
        out = np.where(overflow, inf_code, out)
    else:
        out = np.where(overflow, fmt.nan_code, out)    # e4m3: no infinity
    negative = np.signbit(x) & ~np.isnan(x)
    if fmt.is_hifloat8:
        negative &= out != 0                           # no negative zero: 0x80 is NaN
    out = np.where(negative, out | sign_bit, out)
    if fmt.nan_code >= 0:
        nan = fmt.nan_code | (sign_bit if not fmt.is_hifloat8 else 0)
        out = np.where(np.isnan(x), np.where(np.signbit(x), nan, fmt.nan_code), out)
    else:
        out = np.where(np.isnan(x), 0, out)            # fp4: no NaN, so +0 (the module docstring)
    return out.astype(np.uint8)


def pack4(codes) -> np.ndarray:
    """Bytes holding pairs of 4-bit codes: code 2i in the low nibble of byte i, 2i+1 in the
    high one (an odd count pads a zero)."""
    c = np.asarray(codes, np.uint8).reshape(-1)
    if c.size % 2:
        c = np.append(c, np.uint8(0))
    return ((c[1::2] << 4) | (c[0::2] & 0xF)).astype(np.uint8)


def unpack4(raw) -> np.ndarray:
    """The 4-bit codes of bytes raw, two a byte, low nibble first (pack4's inverse)."""
    r = np.asarray(raw, np.uint8).reshape(-1)
    return np.stack([r & 0xF, r >> 4], axis=1).reshape(-1)
