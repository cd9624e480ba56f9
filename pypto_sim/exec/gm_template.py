"""GM (simulated HBM) bytes in the executor: each element in its dtype's little-endian bytes,
GM_KIND and GM_MBITS (generated from dtypes.DType.encoding by pypto_sim.exec.lane) say how.
Appended to the lane executor after lane_template.py; gm_load / gm_store serve the lane
loads, stores and atomics and the tile kernels' GM reads and writes, init_set / init_get
initcheck's bitmap. exec/gm.py is the numpy twin (and says how GM is addressed)."""
import math

import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy", _nrt=False)
def ieee_decode(u, bits, mb):
    """The float64 value of an IEEE binary float of `bits` bits with mb mantissa bits."""
    eb = bits - 1 - mb
    emax = (np.int64(1) << eb) - 1
    bias = (np.int64(1) << (eb - 1)) - 1
    neg = (u >> np.uint64(bits - 1)) & np.uint64(1)
    e = np.int64((u >> np.uint64(mb)) & np.uint64(emax))
    m = np.int64(u & np.uint64((np.int64(1) << mb) - 1))
    if e == emax:
        v = math.inf if m == 0 else math.nan
    elif e == 0:
        v = math.ldexp(np.float64(m), 1 - bias - mb)
    else:
        v = math.ldexp(np.float64(m + (np.int64(1) << mb)), e - bias - mb)
    return -v if neg else v


@njit(cache=True, error_model="numpy", _nrt=False)
def ieee_encode(x, bits, mb):
    """The bits of x, a value of the IEEE binary format of `bits` bits with mb mantissa bits
    (NaN: the quiet NaN with x's sign, as numpy's astype gives)."""
    eb = bits - 1 - mb
    emax = (np.int64(1) << eb) - 1
    bias = (np.int64(1) << (eb - 1)) - 1
    sign = (np.uint64(1) << np.uint64(bits - 1)) if math.copysign(1.0, x) < 0.0 else np.uint64(0)
    if x != x:
        return sign | np.uint64(emax << mb) | np.uint64(np.int64(1) << (mb - 1))
    ax = abs(x)
    if math.isinf(ax):
        return sign | np.uint64(emax << mb)
    if ax == 0.0:
        return sign
    m, e = math.frexp(ax)                      # ax = m * 2**e, 0.5 <= m < 1
    biased = e - 1 + bias
    if biased >= 1:
        frac = np.int64(math.ldexp(m * 2.0 - 1.0, mb))
        return sign | np.uint64(biased << mb) | np.uint64(frac)
    return sign | np.uint64(np.int64(math.ldexp(ax, mb + bias - 1)))     # subnormal


@njit(cache=True, error_model="numpy", _nrt=False)
def gm_read_bits(data, byte, size):
    """The size bytes from data[byte] as an unsigned int (little-endian)."""
    u = np.uint64(0)
    for k in range(size):
        u |= np.uint64(data[byte + k]) << np.uint64(8 * k)
    return u


@njit(cache=True, error_model="numpy", _nrt=False)
def gm_load(data, byte, dt):
    """The value of the dtype-dt element whose bytes start at data[byte], as float64 (exact
    for every dtype; int64 beyond 2**53 rounds, but no unit computes int64)."""
    size = ITEMSIZE[dt]
    u = gm_read_bits(data, byte, size)
    kind = GM_KIND[dt]
    if kind == 0:
        mb = GM_MBITS[dt]
        if size == 4 and mb == 23:
            return np.float64(np.uint32(u).view(np.float32))
        if size == 8 and mb == 52:
            return np.uint64(u).view(np.float64)
        return ieee_decode(u, size * 8, mb)
    if kind == 1:
        if size == 8:
            return np.float64(np.uint64(u).view(np.int64))
        v = np.int64(u)
        if v >= np.int64(1) << (size * 8 - 1):
            v -= np.int64(1) << (size * 8)
        return np.float64(v)
    return np.float64(u)


@njit(cache=True, error_model="numpy", _nrt=False)
def gm_bits(dt, x):
    """The bits (uint64, little end first) that hold x, a value of dtype dt, in GM."""
    size = ITEMSIZE[dt]
    if GM_KIND[dt] == 0:
        mb = GM_MBITS[dt]
        if size == 4 and mb == 23:
            return np.uint64(np.float32(x).view(np.uint32))
        if size == 8 and mb == 52:
            return np.float64(x).view(np.uint64)
        return ieee_encode(x, size * 8, mb)
    return np.int64(x).view(np.uint64)


@njit(cache=True, error_model="numpy", _nrt=False)
def gm_store(data, byte, dt, x):
    """Write x, a value of dtype dt (round_to's result), as the element whose bytes start at
    data[byte]."""
    size = ITEMSIZE[dt]
    u = gm_bits(dt, x)
    for k in range(size):
        data[byte + k] = np.uint8((u >> np.uint64(8 * k)) & np.uint64(0xFF))


@njit(cache=True, error_model="numpy", _nrt=False)
def init_set(init, byte):
    """initcheck: mark the element starting at HBM byte `byte` written (exec/gm.py)."""
    init[byte >> 3] |= np.uint8(1 << (byte & 7))


@njit(cache=True, error_model="numpy", _nrt=False)
def init_get(init, byte):
    """initcheck: 1 if the element starting at HBM byte `byte` was written, else 0."""
    return (init[byte >> 3] >> (byte & 7)) & 1
