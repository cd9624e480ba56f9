"""Element types of tensors, buffers and lane values.

Values are held in float64 words inside the simulator (registers, HBM and L1 words): every
float32, float16 and int32 value is exactly representable there. Each instruction rounds its
result to its dtype, so the stored word is always a value of that dtype.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    """A pypto_sim element type: its name, numpy dtype, size in bytes and executor code."""

    name: str
    code: int
    itemsize: int
    numpy: np.dtype
    is_float: bool

    def __repr__(self) -> str:
        return f"pto.{self.name}"

    def __str__(self) -> str:
        return self.name


float32 = DType("float32", 0, 4, np.dtype(np.float32), True)
float16 = DType("float16", 1, 2, np.dtype(np.float16), True)
int32 = DType("int32", 2, 4, np.dtype(np.int32), False)
bool_ = DType("bool", 3, 1, np.dtype(np.bool_), False)

ALL = (float32, float16, int32, bool_)
BY_NAME = {d.name: d for d in ALL}
BY_CODE = {d.code: d for d in ALL}
TENSOR_DTYPES = (float32, float16, int32)


def as_dtype(value) -> DType:
    """Return the DType for a pto dtype, a numpy dtype or type, or a name such as 'float32'.

    Raises TypeError naming the value and the accepted dtypes otherwise.
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in BY_NAME:
        return BY_NAME[value]
    try:
        npd = np.dtype(value)
    except TypeError:
        npd = None
    if npd is not None:
        for d in ALL:
            if d.numpy == npd:
                return d
    names = ", ".join(d.name for d in TENSOR_DTYPES)
    raise TypeError(f"unsupported dtype {value!r}: pypto_sim supports {names}")


def promote(a: DType, b: DType) -> DType:
    """The result dtype of a binary operation, as Python/numpy would choose for lane values.

    bool < int32 < float16 < float32, except int32 with float16 gives float32 (no int32 value
    is lost).
    """
    if a == b:
        return a
    if float32 in (a, b):
        return float32
    if float16 in (a, b):
        return float32 if int32 in (a, b) else float16
    return int32


def round_scalar(value, dtype: DType):
    """A Python number as a value of dtype, in Python terms: floats rounded to nearest (ties
    to even) with IEEE overflow to +-inf, integers wrapped to two's complement, bools 0/1.
    Kernel literals and scalar arguments go through this, so they compute as numpy would."""
    if dtype.is_float:
        with np.errstate(over="ignore"):
            return float(dtype.numpy.type(value))
    if dtype == bool_:
        return bool(value)
    v = int(value)
    bits = 8 * dtype.itemsize
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v
