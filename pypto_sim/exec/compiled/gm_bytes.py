"""GM (simulated HBM) bytes in the executor: each element in its dtype's little-endian bytes,
GM_KIND and GM_MBITS (isa_constants.py, from dtypes.DType.encoding) say how. gm_load /
gm_store serve the lane
loads, stores and atomics and the tile kernels' GM reads and writes, init_set / init_get
initcheck's bitmap. exec/gm.py is the numpy twin (and says how GM is addressed).
"""
import math

import numpy as np
from numba import njit

from .isa_constants import DT_FLOAT32, GM_KIND, GM_MBITS, ITEMSIZE
from .jit_options import NO_REFCOUNT
from .scalars import bits_f64, f64_bits

@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def ieee_decode(u, bits, mb):
    """The float64 value of u, the bits of an IEEE binary float of `bits` bits with mb mantissa
    bits (at most float64's widths): a normal number's bits are moved into float64's places, and
    so are a 16-bit NaN's payload bits: float16's as numpy's float16 -> float64 does, bfloat16's
    as its float32 -> float64 does (the quiet bit set, as gm_load of a float32 NaN; ieee_encode
    gives them back); another format's NaN is float64's quiet NaN."""
    eb = bits - 1 - mb
    emax = (np.int64(1) << eb) - 1
    bias = (np.int64(1) << (eb - 1)) - 1
    sign = (u >> np.uint64(bits - 1)) & np.uint64(1)
    e = np.int64((u >> np.uint64(mb)) & np.uint64(emax))
    m = u & np.uint64((np.int64(1) << mb) - 1)
    if e == emax and m != 0 and bits == 16:
        if mb != 10:                                   # bfloat16: quiet, as float32 -> float64
            m |= np.uint64(1) << np.uint64(mb - 1)
        return np.uint64((sign << np.uint64(63)) | np.uint64(0x7FF0000000000000)
                         | (m << np.uint64(52 - mb))).view(np.float64)
    if e == emax:
        v = math.inf if m == 0 else math.nan
    elif e == 0:
        v = math.ldexp(np.float64(m), 1 - bias - mb)      # zero or subnormal
    else:
        return np.uint64((sign << np.uint64(63)) | (np.uint64(e - bias + 1023) << np.uint64(52))
                         | (m << np.uint64(52 - mb))).view(np.float64)
    return -v if sign else v


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def ieee_encode(x, bits, mb):
    """The bits of x, a value of the IEEE binary format of `bits` bits with mb mantissa bits
    (NaN: float16 keeps the payload's top 10 bits, 1 when they are 0, as numpy's astype does,
    bfloat16 its top 7 with the quiet bit, as float64 -> float32 and the top half do; the other
    formats give the quiet NaN with x's sign)."""
    eb = bits - 1 - mb
    emax = (np.int64(1) << eb) - 1
    bias = (np.int64(1) << (eb - 1)) - 1
    b = np.float64(x).view(np.uint64)
    sign = (b >> np.uint64(63)) << np.uint64(bits - 1)
    e64 = np.int64((b >> np.uint64(52)) & np.uint64(0x7FF))
    if e64 == 0x7FF:
        if (b << np.uint64(12)) == 0:
            return sign | np.uint64(emax << mb)                       # infinity
        if bits == 16:
            payload = (b >> np.uint64(52 - mb)) & np.uint64((np.int64(1) << mb) - 1)
            if mb != 10:                               # bfloat16: float32's top half, quiet
                payload |= np.uint64(1) << np.uint64(mb - 1)
            return sign | np.uint64(emax << mb) | (payload if payload else np.uint64(1))
        return sign | np.uint64(emax << mb) | np.uint64(np.int64(1) << (mb - 1))
    e = e64 - 1023 + bias
    if e >= 1:
        return sign | np.uint64(e << mb) | ((b >> np.uint64(52 - mb)) & np.uint64((np.int64(1) << mb) - 1))
    return sign | np.uint64(np.int64(math.ldexp(abs(x), mb + bias - 1)))     # zero, subnormal


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def gm_read_bits(data, byte, size):
    """The size (1, 2, 4 or 8) bytes from data[byte] as an unsigned int (little-endian). Byte
    by byte with the size spelled out: a loop over size, or array views, were 5-20x slower."""
    u = np.uint64(data[byte])
    if size == 1:
        return u
    u |= np.uint64(data[byte + 1]) << np.uint64(8)
    if size == 2:
        return u
    u |= (np.uint64(data[byte + 2]) << np.uint64(16)) | (np.uint64(data[byte + 3]) << np.uint64(24))
    if size == 4:
        return u
    return u | (np.uint64(data[byte + 4]) << np.uint64(32)) | (np.uint64(data[byte + 5]) << np.uint64(40)) \
        | (np.uint64(data[byte + 6]) << np.uint64(48)) | (np.uint64(data[byte + 7]) << np.uint64(56))


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def gm_write_bits(data, byte, size, u):
    """Write the low size (1, 2, 4 or 8) bytes of u at data[byte] (little-endian)."""
    data[byte] = np.uint8(u & np.uint64(0xFF))
    if size >= 2:
        data[byte + 1] = np.uint8((u >> np.uint64(8)) & np.uint64(0xFF))
    if size >= 4:
        data[byte + 2] = np.uint8((u >> np.uint64(16)) & np.uint64(0xFF))
        data[byte + 3] = np.uint8((u >> np.uint64(24)) & np.uint64(0xFF))
    if size == 8:
        for k in range(4, 8):
            data[byte + k] = np.uint8((u >> np.uint64(8 * k)) & np.uint64(0xFF))


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def gm_load(data, byte, dt):
    """The register word of the dtype-dt element whose bytes start at data[byte]: its value as
    a float64 (exact for every dtype), or an int64's own bits (dtypes.word_of). float32 first
    (the most common), then ints and floats by their encoding, each in a function of its own
    (one function with every path ran 5-10x slower)."""
    if dt == DT_FLOAT32:
        return np.float64(np.uint32(gm_read_bits(data, byte, 4)).view(np.float32))
    if GM_KIND[dt] != 0:
        return gm_load_int(data, byte, dt)
    return gm_load_float(data, byte, dt)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def gm_load_int(data, byte, dt):
    """gm_load of a two's complement (GM_KIND 1) or unsigned (2) int dtype."""
    size = ITEMSIZE[dt]
    u = gm_read_bits(data, byte, size)
    if GM_KIND[dt] == 2:
        return np.float64(u)
    v = np.int64(u)
    if size == 8:
        return bits_f64(v)                        # an int64 word is its bits (dtypes.word_of)
    if size < 8 and v >= np.int64(1) << (size * 8 - 1):
        v -= np.int64(1) << (size * 8)
    return np.float64(v)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def gm_load_float(data, byte, dt):
    """gm_load of an IEEE float dtype (GM_KIND 0, GM_MBITS mantissa bits)."""
    size = ITEMSIZE[dt]
    u = gm_read_bits(data, byte, size)
    if size == 8 and GM_MBITS[dt] == 52:
        return np.uint64(u).view(np.float64)
    return ieee_decode(u, size * 8, GM_MBITS[dt])


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def gm_bits(dt, x):
    """The bits (uint64, little end first) that hold x, a register word of dtype dt, in GM."""
    size = ITEMSIZE[dt]
    if GM_KIND[dt] == 0:
        mb = GM_MBITS[dt]
        if size == 4 and mb == 23:
            return np.uint64(np.float32(x).view(np.uint32))
        if size == 8 and mb == 52:
            return np.float64(x).view(np.uint64)
        return ieee_encode(x, size * 8, mb)
    if size == 8:
        return np.uint64(f64_bits(x))              # an int64 word is its bits (dtypes.word_of)
    return np.int64(x).view(np.uint64)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def gm_store(data, byte, dt, x):
    """Write x, a register word of dtype dt (round_to's result), as the element whose bytes start at
    data[byte]."""
    gm_write_bits(data, byte, ITEMSIZE[dt], gm_bits(dt, x))


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def init_set(init, byte):
    """initcheck: mark the element starting at HBM byte `byte` written (exec/gm.py)."""
    init[byte >> 3] |= np.uint8(1 << (byte & 7))


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def init_get(init, byte):
    """initcheck: 1 if the element starting at HBM byte `byte` was written, else 0."""
    return (init[byte >> 3] >> (byte & 7)) & 1
