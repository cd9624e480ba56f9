"""TLOAD's and TSTORE's GM copies: gm_gather reads a window of GM elements into a buffer of
values, gm_scatter (gm_scatter_add, gm_scatter_mode: a store's atomic add and ReLU) writes one,
each element in its dtype's bytes (gm_bytes.py) but through typed views where a dtype allows, so
that the loops vectorise."""
import numpy as np
from numba import njit

from .isa_constants import DT_FLOAT32, DT_INT32, GM_KIND, GM_MBITS, ITEMSIZE
from .scalars import round_to, wrap_i32
from .gm_bytes import gm_load, gm_store, ieee_decode, ieee_encode
from ...isa.store_modes import ATOMIC_ADD as STORE_ATOMIC_ADD, RELU as STORE_RELU


@njit(cache=True, error_model="numpy")
def gm_gather(out, hbm, src, stride, rows, cols, dt):
    """out[r * cols + c] = the dtype-dt GM element (r * stride + c) after the one at byte src:
    TLOAD's read of GM. float32, the 2-byte floats and the integers of 1, 2 and 4 bytes read
    through one typed view of the region (an element's bytes are aligned to its size: tensors
    start on 512 bytes); other dtypes element by element (gm_load)."""
    item = ITEMSIZE[dt]
    span = ((rows - 1) * stride + cols) * item
    if dt == DT_FLOAT32:
        f32 = hbm[src:src + span].view(np.float32)
        for r in range(rows):
            o_, s_ = out[r * cols:(r + 1) * cols], f32[r * stride:r * stride + cols]
            for c in range(cols):
                o_[c] = s_[c]
    elif item == 2 and GM_KIND[dt] == 0:
        half_gather(out, hbm[src:src + span].view(np.uint16), stride, rows, cols, GM_MBITS[dt])
    elif (GM_KIND[dt] == 1 or GM_KIND[dt] == 2) and item <= 4:
        int_gather(out, hbm[src:src + span], stride, rows, cols, item, GM_KIND[dt] == 1)
    else:
        for r in range(rows):
            row = src + r * stride * item
            for c in range(cols):
                out[r * cols + c] = gm_load(hbm, row + c * item, dt)


@njit(cache=True, error_model="numpy")
def int_gather(out, region, stride, rows, cols, item, signed):
    """gm_gather of an integer dtype of item (1, 2 or 4) bytes, two's complement when signed:
    through one typed view of the region (as gm_load_int reads each), a loop a view type so
    that each vectorises (element by element, gm_load's bytes, an int8 TLOAD ran 7x slower
    than a float16 one of twice its bytes)."""
    if item == 1:
        if signed:
            _copy_rows(out, region.view(np.int8), stride, rows, cols)
        else:
            _copy_rows(out, region, stride, rows, cols)
    elif item == 2:
        if signed:
            _copy_rows(out, region.view(np.int16), stride, rows, cols)
        else:
            _copy_rows(out, region.view(np.uint16), stride, rows, cols)
    elif signed:
        _copy_rows(out, region.view(np.int32), stride, rows, cols)
    else:
        _copy_rows(out, region.view(np.uint32), stride, rows, cols)


@njit(cache=True, error_model="numpy")
def _copy_rows(out, src, stride, rows, cols):
    """out[r * cols + c] = src[r * stride + c] as float64 (an integer of at most 32 bits is exact)."""
    for r in range(rows):
        o_, s_ = out[r * cols:(r + 1) * cols], src[r * stride:r * stride + cols]
        for c in range(cols):
            o_[c] = np.float64(s_[c])


@njit(cache=True, error_model="numpy")
def half_gather(out, u16, stride, rows, cols, mb):
    """out[r * cols + c] = the value of the 2-byte float u16[r * stride + c] (mb mantissa bits:
    10 float16, 7 bfloat16): a bfloat16 through float32's bits; a finite float16 (subnormals
    and zeros too) through float32's bits as well, its exponent field kept: the float32 whose
    bits are the float16's magnitude bits shifted up by 13 is that value times 2^-112, exactly
    (a float16 subnormal lands on a float32 subnormal), so the product with 2^112 is exact.
    Both in loops without branches (they vectorise: the float16 loop counts, not flags,
    exponent fields of all ones); then those float16 infinities and NaNs again by
    ieee_decode, where there are any."""
    if mb == 7:
        for r in range(rows):
            o_, s_ = out[r * cols:(r + 1) * cols], u16[r * stride:r * stride + cols]
            for c in range(cols):
                o_[c] = np.float64(np.uint32(np.uint32(s_[c]) << np.uint32(16)).view(np.float32))
        return
    special = 0
    for r in range(rows):
        o_, s_ = out[r * cols:(r + 1) * cols], u16[r * stride:r * stride + cols]
        for c in range(cols):
            u = np.uint32(s_[c])
            magnitude = np.float64(np.uint32((u & np.uint32(0x7FFF)) << np.uint32(13)).view(np.float32)) * 2.0**112
            o_[c] = -magnitude if u & np.uint32(0x8000) else magnitude
            special += (u & np.uint32(0x7C00)) == np.uint32(0x7C00)
    if special:
        for r in range(rows):
            for c in range(cols):
                u = u16[r * stride + c]
                if ((u >> 10) & 0x1F) == 0x1F:
                    out[r * cols + c] = ieee_decode(np.uint64(u), 16, mb)


@njit(cache=True, error_model="numpy")
def half_scatter(u16, stride, buf, rows, cols):
    """u16[r * stride + c] = the float16 bits of buf[r * cols + c] (a float16 value), as
    ieee_encode gives them: a normal number's in a loop without branches, then zeros,
    subnormals, infinities and NaNs (and numbers below float16's normal range) again by
    ieee_encode, where there are any."""
    words = buf.view(np.uint64)
    special = 0
    for r in range(rows):
        d_, w_ = u16[r * stride:r * stride + cols], words[r * cols:(r + 1) * cols]
        for c in range(cols):
            b = w_[c]
            e64 = np.int64((b >> np.uint64(52)) & np.uint64(0x7FF))
            e = e64 - 1008                         # float16's biased exponent
            special |= (e < 1) | (e64 == 0x7FF)
            u = ((b >> np.uint64(48)) & np.uint64(0x8000)) | np.uint64(e << 10) | \
                ((b >> np.uint64(42)) & np.uint64(0x3FF))
            d_[c] = np.uint16(u & np.uint64(0xFFFF))
    if special:
        for r in range(rows):
            for c in range(cols):
                e64 = (words[r * cols + c] >> np.uint64(52)) & np.uint64(0x7FF)
                if e64 <= 1008 or e64 == 0x7FF:
                    u16[r * stride + c] = np.uint16(ieee_encode(buf[r * cols + c], 16, 10) & np.uint64(0xFFFF))


@njit(cache=True, error_model="numpy")
def gm_scatter(hbm, dst, stride, buf, rows, cols, dt):
    """The GM element (r * stride + c) after the one at byte dst = buf[r * cols + c] (values of
    dtype dt): TSTORE's write of GM (float32 through a typed view, as gm_gather reads it)."""
    item = ITEMSIZE[dt]
    if dt == DT_FLOAT32:
        f32 = hbm[dst:dst + ((rows - 1) * stride + cols) * item].view(np.float32)
        for r in range(rows):
            d_, b_ = f32[r * stride:r * stride + cols], buf[r * cols:(r + 1) * cols]
            for c in range(cols):
                d_[c] = np.float32(b_[c])
        return
    if item == 2 and GM_KIND[dt] == 0 and GM_MBITS[dt] == 10:
        half_scatter(hbm[dst:dst + ((rows - 1) * stride + cols) * item].view(np.uint16), stride, buf, rows, cols)
        return
    if (GM_KIND[dt] == 1 or GM_KIND[dt] == 2) and item <= 4:
        region = hbm[dst:dst + ((rows - 1) * stride + cols) * item]
        if item == 1:
            _int_rows(region, stride, buf, rows, cols)
        elif item == 2:
            _int_rows(region.view(np.uint16), stride, buf, rows, cols)
        else:
            _int_rows(region.view(np.uint32), stride, buf, rows, cols)
        return
    for r in range(rows):
        row = dst + r * stride * item
        for c in range(cols):
            gm_store(hbm, row + c * item, dt, buf[r * cols + c])


@njit(cache=True, error_model="numpy")
def _int_rows(dst, stride, buf, rows, cols):
    """dst[r * stride + c] = the low bytes of the integer buf[r * cols + c] (dst an unsigned view
    of 1, 2 or 4 bytes an element): gm_bits' two's complement bits, kept as gm_write_bits keeps
    them, through a typed view as gm_gather reads them."""
    for r in range(rows):
        d_, b_ = dst[r * stride:r * stride + cols], buf[r * cols:(r + 1) * cols]
        for c in range(cols):
            d_[c] = np.int64(b_[c])


@njit(cache=True, error_model="numpy")
def gm_scatter_add(hbm, dst, stride, buf, rows, cols, dt):
    """TSTORE's atomic add (isa/store_modes.py ATOMIC_ADD): the GM element (r * stride + c)
    after the one at byte dst becomes itself + buf[r * cols + c] in dtype dt, integers
    wrapping (the CPU simulation's `data[offset] += summand`)."""
    item = ITEMSIZE[dt]
    for r in range(rows):
        row = dst + r * stride * item
        for c in range(cols):
            at = row + c * item
            old, v = gm_load(hbm, at, dt), buf[r * cols + c]
            if dt == DT_INT32:
                total = np.float64(wrap_i32(np.int64(old) + np.int64(v)))
            else:                        # floats round to dt; int16 / int8 wrap (round_to)
                total = round_to(dt, old + v)
            gm_store(hbm, at, dt, total)


@njit(cache=True, error_model="numpy")
def gm_scatter_mode(hbm, dst, stride, buf, rows, cols, dt, mode):
    """TSTORE's write of GM by its mode (isa/store_modes.py): RELU (2) first makes each value of
    buf that is not positive 0 (in place), then ATOMIC_ADD (1) adds them to GM's
    (gm_scatter_add), else gm_scatter writes them."""
    if mode & STORE_RELU:
        for e in range(rows * cols):
            if not buf[e] > 0.0:
                buf[e] = 0.0
    if mode & STORE_ATOMIC_ADD:
        gm_scatter_add(hbm, dst, stride, buf, rows, cols, dt)
    else:
        gm_scatter(hbm, dst, stride, buf, rows, cols, dt)
