"""The tile instructions' value kernels: the vector families' element loops (through the
generated alu_float / alu_int and its per-opcode float loops), conversions and expansions, and
the tile copies (tile_gather / tile_scatter). The GM copies are gm_copy.py's, the reductions
reductions.py's.
"""
import math

import numpy as np
from numba import njit

from .isa_constants import (CVT_CEIL, CVT_FLOOR, CVT_INTEGRAL, CVT_RINT, CVT_ROUND, CVT_SAT_OFF, CVT_TRUNC, DT_BFLOAT16,
                            DT_FLOAT16, DT_FLOAT32, DT_INT32, DT_UINT8, GM_KIND, INT_SEM, ITEMSIZE)
from .scalars import round_f16, round_to, row_pitch, wrap_bits, wrap_i32
from .alu import alu_float, alu_int, elementwise_float, expand_float
from .gm_bytes import gm_load, gm_store
from .matmul import tile_matmul
from ...isa.store_modes import QUANT_F16 as STORE_QUANT_F16, decode_word as _decode_word_py, quantize as _quantize_py

_quantize = njit(cache=True, error_model="numpy")(_quantize_py)
_decode_word = njit(cache=True, error_model="numpy")(_decode_word_py)

# ---------------------------------------------------------------- tile instructions
# Tiles are row-major runs of words in the block's L1 area (``l1``); the timing model calls
# these at the cycle the instruction completes on its pipe.

@njit(cache=True, error_model="numpy")
def tile_load(l1, dst, hbm, src, rows, cols, stride, dt):
    """async_load: rows x cols dtype-dt elements from HBM (element 0 at byte src, rows
    ``stride`` elements apart) into a dense tile."""
    item = ITEMSIZE[dt]
    for r in range(rows):
        for c in range(cols):
            l1[dst + r * cols + c] = gm_load(hbm, src + (r * stride + c) * item, dt)


@njit(cache=True, error_model="numpy")
def tile_store(hbm, dst, l1, src, rows, cols, stride, dt):
    """Tile store: a dense rows x cols tile into HBM (element 0 at byte dst, rows ``stride``
    elements apart), rounded to dt."""
    item = ITEMSIZE[dt]
    for r in range(rows):
        for c in range(cols):
            gm_store(hbm, dst + (r * stride + c) * item, dt, round_to(dt, l1[src + r * cols + c]))


@njit(cache=True, error_model="numpy")
def tile_store_quant(buf, n, scale, mode):
    """A TSTORE_ACC's scalar pre-stage quantization (isa/store_modes.py QUANT) of the n values of
    buf in place: isa/store_modes.quantize (the one statement of it) of each by the float32 scale,
    a float16 result (DEQF16) then rounded to float16, as gm_store writes values of its dtype."""
    for e in range(n):
        v = _quantize(buf[e], scale, mode)
        buf[e] = round_f16(v) if mode & STORE_QUANT_F16 else v


@njit(cache=True, error_model="numpy")
def tile_store_quant_words(buf, rows, cols, mem, fp, vdeq):
    """A TSTORE_FP's vector pre-stage quantization (isa/store_modes.py QUANT_VECTOR) of the rows x
    cols values of buf (row-major) in place: column c's by the quant word at mem[fp + c] (the
    Scaling tile's word c; a float64 slot holding the int64's bits), decoded by
    store_modes.decode_word, through store_modes.quantize, as tile_store_quant; vdeq (VDEQF16)
    takes the word's scale only, to float16."""
    for c in range(cols):
        scale, offset, mode = _decode_word(np.float64(mem[fp + c]).view(np.int64))
        if vdeq:
            mode = STORE_QUANT_F16
        for r in range(rows):
            e = r * cols + c
            v = _quantize(buf[e], scale, mode, offset)
            buf[e] = round_f16(v) if mode & STORE_QUANT_F16 else v


# TCVT's rounding modes CVT_RINT ... CVT_ODD and CVT_SAT_OFF (SaturationMode::OFF, added to
# the mode operand) are isa_constants.py's, numbered from dtypes.CVT_MODES / CVT_SAT_OFF


@njit(cache=True, error_model="numpy")
def _float_format(dt):
    """(mantissa bits, least normal exponent, largest finite value) of float dtype code dt."""
    if dt == DT_FLOAT16:
        return 10, -14, 65504.0
    if dt == DT_BFLOAT16:
        return 7, -126, 3.3895313892515355e38
    return 23, -126, 3.4028234663852886e38


@njit(cache=True, error_model="numpy")
def _integral(x, mode):
    """x rounded to an integer by mode (ties to even for CVT_RINT, away from zero for CVT_ROUND)."""
    if mode == CVT_RINT:
        f = np.floor(x)
        d = x - f
        if d > 0.5 or (d == 0.5 and np.fmod(f, 2.0) != 0.0):
            return f + 1.0
        return f
    if mode == CVT_ROUND:
        return math.copysign(np.floor(abs(x) + 0.5), x)
    if mode == CVT_FLOOR:
        return np.floor(x)
    if mode == CVT_CEIL:
        return np.ceil(x)
    if mode == CVT_TRUNC:
        return np.trunc(x)
    f = np.floor(x)                               # CVT_ODD: an inexact value goes to the odd one
    if f == x or np.fmod(f, 2.0) != 0.0:
        return f
    return f + 1.0


@njit(cache=True, error_model="numpy")
def round_mode(dt, x, mode):
    """x rounded to dtype code dt by TCVT's mode: to nearest even (CVT_RINT, what every other
    store does: round_to), nearest with ties away, toward -inf, +inf or zero, or to odd (an
    inexact result takes the neighbour whose last mantissa bit is 1). A result past the
    largest finite value is inf for the nearest modes and toward that infinity, else the
    largest finite value (IEEE 754's directed overflow). To int32, int16, int8 and uint8: the
    integer by mode, saturated (SaturationMode::ON); NaN gives 0 (as round_to's stores)."""
    if INT_SEM[dt] == 1 and dt != DT_INT32:      # int16, int8, uint8: saturated (narrow_int)
        return narrow_int(dt, _integral(x, mode) if math.isfinite(x) else x, False)
    if x != x or math.isinf(x):
        return round_to(dt, x)
    if dt == DT_INT32:
        return round_to(dt, _integral(x, mode))
    if mode == CVT_RINT or not (dt == DT_FLOAT32 or dt == DT_FLOAT16 or dt == DT_BFLOAT16) or x == 0.0:
        return round_to(dt, x)
    p, emin, top = _float_format(dt)
    e = math.frexp(x)[1]
    ulp = math.ldexp(1.0, max(e - 1, emin) - p)     # the spacing of dt's values around x
    r = math.copysign(abs(_integral(x / ulp, mode)) * ulp, x)    # a zero keeps x's sign
    if abs(r) > top:
        if mode == CVT_ROUND or (mode == CVT_FLOOR and x < 0) or (mode == CVT_CEIL and x > 0):
            return math.copysign(math.inf, x)
        return math.copysign(top, x)
    return r


@njit(cache=True, error_model="numpy")
def narrow_int(dt, r, wrap):
    """An integral (or NaN / inf) r as a value of the integer dtype dt (int32, int16, int8,
    uint8) by TCVT's SaturationMode, as pto-isa's CPU simulation converts
    (include/pto/cpu/TCvt.hpp at 3186c381, TCvt_Impl and convert_value): ON clamps to dt's
    range (NaN gives 0); OFF is C++'s static_cast<D>(double) as x86 executes it: through int32
    (int32, int16, int8; int64 for uint8) and the low bits kept; a value past that range, inf
    or NaN is x86's "integer indefinite" (the top bit alone: int32 min, 0 in 8 or 16 bits)."""
    bits = 8 * ITEMSIZE[dt]
    signed = GM_KIND[dt] == 1
    if not wrap:
        if r != r:
            return 0.0
        lo = -np.float64(np.int64(1) << (bits - 1)) if signed else 0.0
        hi = np.float64((np.int64(1) << (bits - 1 if signed else bits)) - 1)
        return min(max(r, lo), hi) + 0.0         # + 0.0: an integer has no -0
    limit = 9.2e18 if dt == DT_UINT8 else 2147483648.0
    if not (-limit <= r < limit):                # NaN too
        return wrap_bits(-limit, bits, signed) if dt != DT_UINT8 else 0.0
    return wrap_bits(r, bits, signed)


@njit(cache=True, error_model="numpy")
def tile_convert(l1, dst, src, count, dt, mode):
    """TCVT: dst[e] = src[e] rounded to dt by mode (round_mode); sources are read first.
    mode + CVT_SAT_OFF: SaturationMode::OFF, an integer result wraps (narrow_int); + CVT_INTEGRAL:
    src[e] rounded to an integral value by mode, a zero keeping its sign (float32 -> float32)."""
    out = np.empty(count, np.float64)
    if mode & CVT_INTEGRAL:
        mode &= CVT_SAT_OFF - 1
        for e in range(count):
            x = l1[src + e]
            out[e] = round_to(dt, math.copysign(_integral(x, mode), x) if math.isfinite(x) else x)
        for e in range(count):
            l1[dst + e] = out[e]
        return
    if mode >= CVT_SAT_OFF:
        mode -= CVT_SAT_OFF
        if INT_SEM[dt] == 1:
            for e in range(count):
                x = l1[src + e]
                out[e] = narrow_int(dt, _integral(x, mode) if math.isfinite(x) else x, True)
            for e in range(count):
                l1[dst + e] = out[e]
            return
    if mode == CVT_RINT and dt == DT_FLOAT16:    # round_mode is round_to's round_f16 there
        for e in range(count):
            out[e] = round_f16(l1[src + e])
    elif mode == CVT_RINT and INT_SEM[dt] == 0:  # round_mode is round_to there
        for e in range(count):
            out[e] = round_to(dt, l1[src + e])
    else:
        for e in range(count):
            out[e] = round_mode(dt, l1[src + e], mode)
    for e in range(count):
        l1[dst + e] = out[e]


@njit(cache=True, error_model="numpy")
def tile_mma(l1, c_base, a_base, b_base, m, n, k, dt):
    """The article's MMA: C[m,n] += A[m,k] @ B[k,n] on dense row-major tiles; the AI core's
    TMATMUL_ACC semantics (tile_matmul), written back over C."""
    out = np.empty(m * n, np.float64)
    tile_matmul(out, l1, c_base, n, a_base, k, b_base, n, m, n, k, 1, 0, dt)
    tile_scatter(l1, c_base, n, out, m, n)


@njit(cache=True, error_model="numpy")
def tile_elementwise(op, l1, dst, a, b, scalar, use_scalar, count, dt):
    """dst[e] = op(a[e], b[e] or scalar, dst[e]) for e < count; unary ops ignore the second
    operand, and only the reads_dst ops (TMULADDDST, TAXPY, ...) use the third, dst's old value.

    Every source word is read before dst is written, like the reference: a dst that partially
    overlaps a source (e.g. dst = a + 1) must see the sources' old values, so the results go
    through a buffer (writing in place let element e read element e-1's new value).
    """
    out = np.empty(count, np.float64)
    if INT_SEM[dt] == 0 and elementwise_float(op, l1, dst, a, b, scalar, use_scalar, count, dt, out):
        pass                             # the opcode's own loop (exec/tile_loops.py)
    else:
        for e in range(count):
            y = scalar if use_scalar else (l1[b + e] if b >= 0 else 0.0)
            old = l1[dst + e]            # dst's old value: `c` of TMULADDDST, TAXPY, ...
            if INT_SEM[dt] == 1:         # integer tiles: integer semantics, wrapped to dt
                c = np.int64(old) if math.isfinite(old) else np.int64(0)
                out[e] = round_to(dt, np.float64(wrap_i32(alu_int(op, np.int64(l1[a + e]), np.int64(y), c))))
            else:
                out[e] = round_to(dt, alu_float(op, l1[a + e], y, old, dt))
    for e in range(count):
        l1[dst + e] = out[e]


@njit(cache=True, error_model="numpy")
def tile_cmp(op, l1, dst, a, b, scalar, use_scalar, mode, rows, cols, mstride, dt):
    """TCMP / TCMPS: bit (c % 8) of byte dst[r * mstride + c // 8] = the table's compare of
    a[r, c] with b[r, c] (or scalar) in mode; bits past cols are 0. Sources are read first."""
    nbytes = (cols + 7) // 8
    out = np.zeros(rows * nbytes, np.float64)
    for r in range(rows):
        for c in range(cols):
            x = l1[a + r * cols + c]
            y = scalar if use_scalar else l1[b + r * cols + c]
            if INT_SEM[dt] == 1:
                hit = alu_int(op, np.int64(x), np.int64(y), np.int64(mode)) != 0
            else:
                hit = alu_float(op, x, y, np.float64(mode), dt) != 0.0
            if hit:
                out[r * nbytes + c // 8] += np.float64(1 << (c % 8))
    for r in range(rows):
        for w in range(nbytes):
            l1[dst + r * mstride + w] = out[r * nbytes + w]


@njit(cache=True, error_model="numpy")
def tile_sel(op, l1, dst, mask, a, b, scalar, use_scalar, rows, cols, mstride, mbits, dpitch, apitch, bpitch, dt):
    """TSEL / TSELS: dst[r, c] = the table's select of a[r, c] and b[r, c] (or scalar) by bit
    (c % mb) of mask[r * mstride + c // mb], mb the mask element's bits (mbits; <= 0: 8),
    rounded to dt, over rows x cols, dst's, a's and b's rows dpitch, apitch, bpitch words apart
    (<= 0: cols); every source is read first."""
    mb = 8 if mbits <= 0 else mbits
    dp, ap, bp = row_pitch(dpitch, cols), row_pitch(apitch, cols), row_pitch(bpitch, cols)
    out = np.empty(rows * cols, np.float64)
    for r in range(rows):
        for c in range(cols):
            bit = (np.int64(l1[mask + r * mstride + c // mb]) >> (c % mb)) & 1
            x = l1[a + r * ap + c]
            y = scalar if use_scalar else l1[b + r * bp + c]
            if INT_SEM[dt] == 1:
                out[r * cols + c] = round_to(dt, np.float64(wrap_i32(alu_int(op, np.int64(x), np.int64(y), bit))))
            else:
                out[r * cols + c] = round_to(dt, alu_float(op, x, y, np.float64(bit), dt))
    for r in range(rows):
        for c in range(cols):
            l1[dst + r * dp + c] = out[r * cols + c]


@njit(cache=True, error_model="numpy")
def tile_tri(l1, dst, diagonal, upper, rows, cols, dpitch):
    """TTRI: dst[r, c] = 1 where c <= r + diagonal (lower) or c >= r + diagonal (upper), else 0,
    over the rows x cols valid region, dst's rows dpitch words apart (<= 0: cols); the columns
    past it are left alone (TTri.hpp masks each row to validCol)."""
    dp = row_pitch(dpitch, cols)
    for r in range(rows):
        for c in range(cols):
            inside = (c >= r + diagonal) if upper else (c <= r + diagonal)
            l1[dst + r * dp + c] = 1.0 if inside else 0.0


@njit(cache=True, error_model="numpy")
def tile_ci(l1, dst, start, descending, cols, dt):
    """TCI: dst[k] = start + k for k < cols, negated when descending is 1 (A2/A3's vector
    path: vadds, then vmuls by -1), start - k when it is 2 (TCI_S, the scalar loop), wrapped to
    dt's bits as its int lanes add."""
    bits = 8 * ITEMSIZE[dt]
    signed = GM_KIND[dt] == 1
    s = np.int64(start)
    for k in range(cols):
        v = s + k
        if descending == 2:
            v = s - k
        elif descending:
            v = -v
        l1[dst + k] = wrap_bits(np.float64(v), bits, signed)


@njit(cache=True, error_model="numpy")
def tile_fillpad(l1, dst, src, pad, rows, cols, spitch, drows, dcols):
    """TFILLPAD*: dst[r, c] (drows x dcols) = src[r * spitch + c] inside the rows x cols valid
    region, pad elsewhere; every source word is read before dst is written (dst may be src)."""
    out = np.empty(drows * dcols, np.float64)
    for r in range(drows):
        for c in range(dcols):
            out[r * dcols + c] = l1[src + r * spitch + c] if (r < rows and c < cols) else pad
    for e in range(drows * dcols):
        l1[dst + e] = out[e]


@njit(cache=True, error_model="numpy")
def tile_trans(l1, dst, src, rows, cols, spitch, dpitch):
    """TTRANS: dst[c * dpitch + r] = src[r * spitch + c] over rows x cols; every source word
    is read before dst is written."""
    out = np.empty(rows * cols, np.float64)
    for r in range(rows):
        for c in range(cols):
            out[c * rows + r] = l1[src + r * spitch + c]
    for c in range(cols):
        for r in range(rows):
            l1[dst + c * dpitch + r] = out[c * rows + r]


@njit(cache=True, error_model="numpy")
def _expand_op(op, l1, dst, a, v, rows, cols, dpitch, apitch, dt, per_col):
    """dst[r, c] = op(a[r, c], v[c] if per_col else v[r]) by the table's expression, rounded
    to dt (integers wrap); dst's and a's rows dpitch and apitch words apart (<= 0: cols, dense);
    every source word is read before dst is written (dst may be a)."""
    dp, ap = row_pitch(dpitch, cols), row_pitch(apitch, cols)
    out = np.empty(rows * cols, np.float64)
    if not (INT_SEM[dt] == 0 and expand_float(op, l1, a, v, rows, cols, ap, dt, per_col, out)):
        for r in range(rows):
            for c in range(cols):
                x = l1[a + r * ap + c]
                y = l1[v + c] if per_col else l1[v + r]
                if INT_SEM[dt] == 1:
                    out[r * cols + c] = round_to(dt, np.float64(wrap_i32(alu_int(op, np.int64(x), np.int64(y), 0))))
                else:
                    out[r * cols + c] = round_to(dt, alu_float(op, x, y, 0.0, dt))
    for r in range(rows):
        for c in range(cols):
            l1[dst + r * dp + c] = out[r * cols + c]


@njit(cache=True, error_model="numpy")
def tile_col_expand_op(op, l1, dst, a, v, rows, cols, dpitch, apitch, dt):
    """dst[r, c] = op(a[r, c], v[c]): one value per column (TCOLEXPAND*), rows at the tiles'
    pitches (_expand_op)."""
    _expand_op(op, l1, dst, a, v, rows, cols, dpitch, apitch, dt, True)


@njit(cache=True, error_model="numpy")
def tile_row_expand_op(op, l1, dst, a, v, rows, cols, dpitch, apitch, dt):
    """dst[r, c] = op(a[r, c], v[r]): one value per row (TROWEXPAND*), rows at the tiles'
    pitches (_expand_op)."""
    _expand_op(op, l1, dst, a, v, rows, cols, dpitch, apitch, dt, False)


@njit(cache=True, error_model="numpy")
def tile_col_expand(l1, dst, src, rows, cols):
    """dst[r, c] = src[c]: broadcast the first row of src down the rows (src is read first)."""
    row = l1[src:src + cols].copy()
    for r in range(rows):
        for c in range(cols):
            l1[dst + r * cols + c] = row[c]


@njit(cache=True, error_model="numpy")
def tile_row_expand(l1, dst, src, rows, cols):
    """dst[r, c] = src[r]: broadcast one value per row across the row."""
    for r in range(rows):
        v = l1[src + r]
        for c in range(cols):
            l1[dst + r * cols + c] = v


@njit(cache=True, error_model="numpy")
def tile_row_expand_pitched(l1, dst, src, rows, cols, spitch):
    """tile_row_expand from element (r, 0) of a RowMajor src, spitch words apart by row
    (spitch <= 1: a dense column), row by row."""
    if spitch > 1:
        for r in range(rows):
            tile_row_expand(l1, dst + r * cols, src + r * spitch, 1, cols)
    else:
        tile_row_expand(l1, dst, src, rows, cols)


# ---------------------------------------------------------------- typed tiles (the AI core)
# A typed tile is rows x cols elements ``pitch`` words apart by row (a tsubview window's pitch
# is its tile's). The AI core reads an operation's sources when it starts and writes its
# destination when it completes, so these kernels either gather (read into a dense buffer)
# or scatter (write a dense buffer); the timing model runs the two at their own cycles and the
# functional runner back to back.

@njit(cache=True, error_model="numpy")
def tile_gather(out, src_arr, src, spitch, rows, cols, dt):
    """out[r * cols + c] = src_arr[src + r * spitch + c], rounded to dtype code dt (dt < 0:
    as it is). TLOAD's read of GM (spitch = the row stride), TSTORE's and TEXTRACT's / TMOV's
    read of a tile (dt: the destination's dtype when the copy converts)."""
    for r in range(rows):
        row = src + r * spitch
        if dt < 0:                  # through row slices: indices numba knows are not negative
            o_, s_ = out[r * cols:(r + 1) * cols], src_arr[row:row + cols]
            for c in range(cols):
                o_[c] = s_[c]
        else:
            for c in range(cols):
                out[r * cols + c] = round_to(dt, src_arr[row + c])


@njit(cache=True, error_model="numpy")
def tile_scatter(dst_arr, dst, dpitch, buf, rows, cols):
    """dst_arr[dst + r * dpitch + c] = buf[r * cols + c]: a gathered (or computed) dense block
    lands in a tile, or in GM rows dpitch apart."""
    for r in range(rows):
        d_, b_ = dst_arr[dst + r * dpitch:dst + r * dpitch + cols], buf[r * cols:(r + 1) * cols]
        for c in range(cols):
            d_[c] = b_[c]
