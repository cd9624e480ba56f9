"""Element types of tensors, buffers and lane values.

Values are held in float64 words inside the simulator's registers, L1 and tile memories:
every float64, float32, float16, int32 and uint32 value is exactly representable there, as
itself. An int64 value is not (beyond 2**53 a float64 rounds it), so an int64 word holds the
int64's own 64 bits read as a float64 (a bit cast, ``word_of`` / ``value_of``): exact for every
int64. Each instruction rounds its result to its dtype, so the stored word is always a value of
that dtype.
Simulated HBM holds each element in its own dtype's little-endian bytes (``encoding``;
exec/gm.py and the executor's gm_load / gm_store read and write them).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import ArgumentError

from . import minifloats


@dataclass(frozen=True)
class DType:
    """A pypto_sim element type: its name, numpy dtype (the host array type; float32 for
    bfloat16, which numpy lacks), size in bytes on the device, executor code, and
    ``compute``: the name of the register dtype kernels compute it in ("" when no unit of the
    core computes it), and
    ``encoding``: how an element's ``itemsize`` bytes in HBM hold it (little-endian):
    ``"float:M"`` an IEEE binary float with M mantissa bits (the rest of the bits after the
    sign are the exponent), ``"int"`` two's complement, ``"uint"`` unsigned, ``"mini:F"`` the
    codes of pypto_sim.minifloats' format F (``values_per_element`` of them a byte: 2 for
    the fp4 pair types)."""

    name: str
    code: int
    itemsize: int
    numpy: np.dtype
    is_float: bool
    compute: str = ""
    encoding: str = "int"
    values_per_element: int = 1

    @property
    def minifloat(self):
        """The minifloats format of an 8-bit or 4-bit float dtype (None for the others)."""
        if not self.encoding.startswith("mini:"):
            return None
        return minifloats.FORMATS[self.encoding.split(":")[1]]

    @property
    def compute_dtype(self) -> "DType | None":
        """The register dtype loads of this dtype produce (None: no unit computes it)."""
        return BY_NAME.get(self.compute) if self.compute else None

    def __repr__(self) -> str:
        return f"pto.{self.name}"

    def __str__(self) -> str:
        return self.name


float32 = DType("float32", 0, 4, np.dtype(np.float32), True, "float32", "float:23")
float16 = DType("float16", 1, 2, np.dtype(np.float16), True, "float16", "float:10")
int32 = DType("int32", 2, 4, np.dtype(np.int32), False, "int32", "int")
bool_ = DType("bool", 3, 1, np.dtype(np.bool_), False, "bool", "uint")
# memory-only dtypes: tensors hold them; kernels load them as int32 / float32 lane values and
# store them back rounded (bfloat16) or wrapped (int8, uint8, int16), as numpy's astype would
int8 = DType("int8", 4, 1, np.dtype(np.int8), False, "int32", "int")
uint8 = DType("uint8", 5, 1, np.dtype(np.uint8), False, "int32", "uint")
int16 = DType("int16", 6, 2, np.dtype(np.int16), False, "int32", "int")
bfloat16 = DType("bfloat16", 7, 2, np.dtype(np.float32), True, "float32", "float:7")
# float64 and int64 are lane values (per-lane kernels compute them, as numba-cuda's double and
# int64), never tile elements: A2/A3's vector units list no 64-bit type (TILE_DTYPES)
int64 = DType("int64", 8, 8, np.dtype(np.int64), False, "int64", "int")
float64 = DType("float64", 9, 8, np.dtype(np.float64), True, "float64", "float:52")
# uint16 is memory-only as int8 (its values fit int32); uint32 lane values are registers of
# their own, with C's unsigned arithmetic: every result wraps modulo 2**32 (a C / CUDA uint32,
# what numba-cuda stores to a uint32 array), and an int32 operand converts to uint32 first
uint16 = DType("uint16", 10, 2, np.dtype(np.uint16), False, "int32", "uint")
uint32 = DType("uint32", 11, 4, np.dtype(np.uint32), False, "uint32", "uint")

# A5's 8-bit and 4-bit floats (pypto_sim/minifloats.py has their bits), as pto-isa names them
# (float8_e4m3_t ...; the fp4 types are pairs, two values a byte). Storage only: tensors hold
# them in their own bytes, host arrays give their values as float32 (exact; written rounded to
# nearest by the format's rules) or their bytes as uint8. pypto_sim's AI core is A2/A3's, which
# neither loads, converts nor multiplies them (TCVT.md, TLOAD.md, TMATMUL.md: A5 only).
float8_e4m3 = DType("float8_e4m3", 12, 1, np.dtype(np.float32), True, "", "mini:float8_e4m3")
float8_e5m2 = DType("float8_e5m2", 13, 1, np.dtype(np.float32), True, "", "mini:float8_e5m2")
hifloat8 = DType("hifloat8", 14, 1, np.dtype(np.float32), True, "", "mini:hifloat8")
float4_e2m1x2 = DType("float4_e2m1x2", 15, 1, np.dtype(np.float32), True, "", "mini:float4_e2m1", 2)
float4_e1m2x2 = DType("float4_e1m2x2", 16, 1, np.dtype(np.float32), True, "", "mini:float4_e1m2", 2)
MINIFLOATS = (float8_e4m3, float8_e5m2, hifloat8, float4_e2m1x2, float4_e1m2x2)

ALL = (float32, float16, int32, bool_, int8, uint8, int16, bfloat16, int64, float64, uint16, uint32,
       *MINIFLOATS)
BY_NAME = {d.name: d for d in ALL}
# other spellings of the minifloats: pto-isa's C++ names, torch's and ml_dtypes' (whose host
# arrays as_dtype recognises by these names)
ALIASES = {"float8_e4m3_t": float8_e4m3, "float8_e4m3fn": float8_e4m3, "float8_e5m2_t": float8_e5m2,
           "hifloat8_t": hifloat8, "float4_e2m1x2_t": float4_e2m1x2, "float4_e2m1fn_x2": float4_e2m1x2,
           "float4_e2m1fn": float4_e2m1x2, "float4_e1m2x2_t": float4_e1m2x2}
BY_CODE = {d.code: d for d in ALL}
INT4_NAMES = ("int4b_t", "int4", "int4b")    # pto-isa's and ml_dtypes' names of the int4 not built
REGISTER_DTYPES = (float32, float16, int32, bool_, uint32, float64, int64)   # lane values' dtypes
TILE_DTYPES = (float32, float16, int32)
TENSOR_DTYPES = (float32, float16, int32, int8, uint8, int16, uint16, uint32, bfloat16, int64,
                 float64, bool_, *MINIFLOATS)
MEMORY_ONLY = (int8, uint8, int16, uint16, bfloat16)     # loaded and stored by kernels
WORD_BITS = (int64,)     # dtypes whose register word is their bits read as a float64 (word_of)


def as_dtype(value) -> DType:
    """Return the DType for a pto dtype, a numpy dtype or type, or a name such as 'float32'.

    Raises TypeError naming the value and the accepted dtypes otherwise.
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in BY_NAME:
        return BY_NAME[value]
    if isinstance(value, str) and value in ALIASES:
        return ALIASES[value]
    if getattr(value, "name", None) == "bfloat16" or str(value) == "bfloat16":
        return bfloat16                                  # ml_dtypes' bfloat16, if in use
    try:
        npd = np.dtype(value)
    except TypeError:
        npd = None
    if npd is not None:
        if npd.name in ALIASES:                          # ml_dtypes' float8_e4m3fn, ...
            return ALIASES[npd.name]
        if BY_NAME.get(npd.name) in MINIFLOATS:          # ml_dtypes' float8_e5m2
            return BY_NAME[npd.name]
        for d in ALL:
            if d.numpy == npd and d.name == npd.name:    # not bfloat16, the minifloats (float32 hosts)
                return d
    if str(getattr(value, "name", value)) in INT4_NAMES:
        raise ArgumentError(f"unsupported dtype {value!r}: pypto_sim has no int4 dtype (pto-isa's "
                        "int4b_t); A2/A3 converts S4 only from and to float16 (pto-isa TCVT.md), "
                        "the matmul's int4 is not built either; hold int4 values in int8")
    names = ", ".join(d.name for d in TENSOR_DTYPES)
    raise ArgumentError(f"unsupported dtype {value!r}: pypto_sim supports {names}")


def round_bfloat16(x: float) -> float:
    """x rounded to the nearest bfloat16 (ties to even, through float32), as a Python float."""
    with np.errstate(over="ignore"):
        f = np.float32(x)
    if f != f:
        return float(f)
    u = int(np.array(f).view(np.uint32))
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return float(np.array(u, np.uint32).view(np.float32))


def promote(a: DType, b: DType) -> DType:
    """The result dtype of a binary operation, as Python/numpy would choose for lane values.

    bool < int32 < uint32 < int64 < float16 < float32 < float64, except int32 or uint32 with
    float16 gives float32 (no int32 value is lost) and int64 with float16 or float32 gives
    float64 (numba-cuda's rule: no float narrower than double holds an int64); int32 with uint32
    is uint32, and either with int64 is int64, as C's usual arithmetic conversions make them (a
    CUDA kernel's `u + i`, `i + l`).
    """
    if a == b:
        return a
    if float64 in (a, b):
        return float64
    if int64 in (a, b):
        other = b if a == int64 else a
        return float64 if other.is_float else int64
    if float32 in (a, b):
        return float32
    if float16 in (a, b):
        return float32 if (int32 in (a, b) or uint32 in (a, b)) else float16
    if uint32 in (a, b):
        return uint32
    return int32


def round_scalar(value, dtype: DType):
    """A Python number as a value of dtype, in Python terms: floats rounded to nearest (ties
    to even) with IEEE overflow to +-inf, integers wrapped to two's complement, bools 0/1.
    Kernel literals and scalar arguments go through this, so they compute as numpy would."""
    if dtype == bfloat16:
        return round_bfloat16(value)
    if dtype.minifloat is not None:                      # ties to even (hifloat8: away)
        fmt = dtype.minifloat
        return float(fmt.values[int(minifloats.encode([float(value)], fmt)[0])])
    if dtype.is_float:
        with np.errstate(over="ignore"):
            return float(dtype.numpy.type(value))
    if dtype == bool_:
        return bool(value)
    v = int(value)
    bits = 8 * dtype.itemsize
    v &= (1 << bits) - 1
    if dtype.encoding == "uint":
        return v
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def float_to_integer(x: float, dtype: DType) -> int:
    """A float converted to an integer dtype as the executors' conversions do: NaN 0, truncated
    toward zero, saturated to the range of int32 and int64, and for the narrower and unsigned
    types clamped to about int64's range and then wrapped (round_scalar's low bits)."""
    if math.isnan(x):
        return 0
    if dtype in (int32, int64):
        bits = 8 * dtype.itemsize - 1
        lo, hi = -(1 << bits), (1 << bits) - 1
        return hi if x >= hi else lo if x <= lo else math.trunc(x)
    return round_scalar(math.trunc(max(min(x, 9.2e18), -9.2e18)), dtype)


def word_of(value, dtype: DType) -> float:
    """The register / L1 word that holds value (a value of dtype): the value itself as a
    float64, except an int64, whose word is its two's complement bits read as a float64."""
    if dtype in WORD_BITS:
        return float(np.array(int(value), np.int64).view(np.float64))
    return float(value)


def value_of(word: float, dtype: DType):
    """The value a register / L1 word of dtype holds (word_of's inverse): a Python int for
    int64 (its bits), else the float itself."""
    if dtype in WORD_BITS:
        return int(np.array(word, np.float64).view(np.int64))
    return word


def words_as_values(words: np.ndarray, dtype: DType) -> np.ndarray:
    """An array of register / L1 words of dtype as a numpy array of dtype's values (value_of
    for every word: an int64 word's bits, every other word converted)."""
    if dtype in WORD_BITS:
        return np.ascontiguousarray(words, np.float64).view(np.int64).copy()
    return np.asarray(words).astype(dtype.numpy)


def host_words(host: np.ndarray, dtype: DType) -> np.ndarray:
    """A host array's elements as the float64 values a kernel's loads of a dtype tensor see
    (rounded to bfloat16 for bfloat16 tensors; int64 values beyond 2**53 rounded)."""
    flat = host.reshape(-1)
    if dtype == bfloat16:
        f = np.ascontiguousarray(flat.astype(np.float32))
        u = f.view(np.uint32).astype(np.uint64)
        r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
        return np.where(np.isnan(f), f, r).astype(np.float64)
    return flat.astype(dtype.numpy).astype(np.float64)


# TCVT's rounding modes, in the order the mode operand numbers them (PTO-ISA RoundMode
# CAST_RINT, CAST_ROUND, CAST_FLOOR, CAST_CEIL, CAST_TRUNC, CAST_ODD; exec/lane.py generates
# the executor's CVT_* constants from it)
CVT_MODES = ("rint", "round", "floor", "ceil", "trunc", "odd")
# A2/A3's TCVT conversions, and the rounding each mode gets on each: pypto_sim/isa/cvt_modes.py
# TCVT's SaturationMode (pto-isa TCVT.md): "on" (the default here, A2/A3's native saturating
# conversion) clamps a narrow integer result to its range; "off" wraps it as pto-isa's CPU
# simulation's static_cast does. The mode operand carries OFF as mode + CVT_SAT_OFF.
CVT_SAT_MODES = ("on", "off")
CVT_SAT_OFF = 8
# float32 -> float32 rounds to an integral float32 (vconv_f322f32*: isa/cvt_modes.py INTEGRAL);
# the mode operand carries it as + CVT_INTEGRAL
CVT_INTEGRAL = 16
# A5's conversions of the minifloats (pto-isa docs/isa/TCVT.md, "Supported Conversions", A5
# column: FP32 -> FP8_E4M3, FP8_E5M2, H8; FP16 -> H8; BF16 -> FP4_E1M2X2, FP4_E2M1X2;
# FP8_E4M3, FP8_E5M2, H8 -> FP32; FP4_E1M2X2, FP4_E2M1X2 -> BF16). A2/A3 has none of them.
CVT_PAIRS_A5 = {"float8_e4m3": ("float32",), "float8_e5m2": ("float32",), "hifloat8": ("float32",),
                "float4_e2m1x2": ("bfloat16",), "float4_e1m2x2": ("bfloat16",)}
CVT_TO_A5 = {"float8_e4m3": ("float32",), "float8_e5m2": ("float32",), "hifloat8": ("float32", "float16"),
             "float4_e2m1x2": ("bfloat16",), "float4_e1m2x2": ("bfloat16",)}


def a5_only(dtype: DType) -> str:
    """Why a minifloat dtype cannot be loaded, converted or computed here, as the rest of a
    sentence that names it (pypto_sim's AI core is A2/A3's, and these are A5 types)."""
    return (f"is an A5 type (pto-isa TCVT.md: A5 converts {' and '.join(CVT_TO_A5[dtype.name])} to "
            f"it and it to {' and '.join(CVT_PAIRS_A5[dtype.name])}); pypto_sim's AI core is A2/A3's "
            f"(Ascend 910B/910C, every machine in latency_tables/), which neither loads, converts "
            f"nor computes it (TLOAD.md, TCVT.md, TMATMUL.md list it for A5 only)")
