"""The tile instructions' value kernels (appended to the generated executor module by
pypto_sim.exec.lane after the lane template; the names they use - round_to, wrap_i32,
alu_float, alu_int, DT_INT32 - are that module's)."""
import math

import numpy as np
from numba import njit

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
def gm_gather(out, hbm, src, stride, rows, cols, dt):
    """out[r * cols + c] = the dtype-dt GM element (r * stride + c) after the one at byte src:
    TLOAD's read of GM. float32, int32 and the 2-byte floats read through one typed view of
    the region (an element's bytes are aligned to its size: tensors start on 512 bytes);
    other dtypes element by element (gm_load)."""
    item = ITEMSIZE[dt]
    span = ((rows - 1) * stride + cols) * item
    if dt == DT_FLOAT32:
        f32 = hbm[src:src + span].view(np.float32)
        for r in range(rows):
            for c in range(cols):
                out[r * cols + c] = f32[r * stride + c]
    elif dt == DT_INT32:
        i32 = hbm[src:src + span].view(np.int32)
        for r in range(rows):
            for c in range(cols):
                out[r * cols + c] = i32[r * stride + c]
    elif item == 2 and GM_KIND[dt] == 0:
        u16 = hbm[src:src + span].view(np.uint16)
        for r in range(rows):
            for c in range(cols):
                out[r * cols + c] = half_decode(u16[r * stride + c], GM_MBITS[dt])
    else:
        for r in range(rows):
            row = src + r * stride * item
            for c in range(cols):
                out[r * cols + c] = gm_load(hbm, row + c * item, dt)


@njit(cache=True, error_model="numpy")
def half_decode(u, mb):
    """The float64 value of a 2-byte float's bits u (mb mantissa bits: 10 float16, 7
    bfloat16): a normal float16 and every bfloat16 through float32's bits."""
    if mb == 7:
        return np.float64(np.uint32(np.uint32(u) << np.uint32(16)).view(np.float32))
    e = (u >> 10) & 0x1F
    if e == 0 or e == 0x1F:
        return ieee_decode(np.uint64(u), 16, mb)
    bits = ((np.uint32(u) & np.uint32(0x8000)) << np.uint32(16)) | \
        (np.uint32(e + 112) << np.uint32(23)) | ((np.uint32(u) & np.uint32(0x3FF)) << np.uint32(13))
    return np.float64(np.uint32(bits).view(np.float32))


@njit(cache=True, error_model="numpy")
def gm_scatter(hbm, dst, stride, buf, rows, cols, dt):
    """The GM element (r * stride + c) after the one at byte dst = buf[r * cols + c] (values of
    dtype dt): TSTORE's write of GM (float32 through a typed view, as gm_gather reads it)."""
    item = ITEMSIZE[dt]
    if dt == DT_FLOAT32:
        f32 = hbm[dst:dst + ((rows - 1) * stride + cols) * item].view(np.float32)
        for r in range(rows):
            for c in range(cols):
                f32[r * stride + c] = np.float32(buf[r * cols + c])
        return
    for r in range(rows):
        row = dst + r * stride * item
        for c in range(cols):
            gm_store(hbm, row + c * item, dt, buf[r * cols + c])


# TCVT's rounding modes, in the order of the frontend's mode names (PTO-ISA RoundMode:
# CAST_RINT, CAST_ROUND, CAST_FLOOR, CAST_CEIL, CAST_TRUNC, CAST_ODD)
CVT_RINT, CVT_ROUND, CVT_FLOOR, CVT_CEIL, CVT_TRUNC, CVT_ODD = 0, 1, 2, 3, 4, 5


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
    largest finite value (IEEE 754's directed overflow). To int32: the integer by mode,
    saturated; NaN gives 0 (as round_to's stores)."""
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
def tile_convert(l1, dst, src, count, dt, mode):
    """TCVT: dst[e] = src[e] rounded to dt by mode (round_mode); sources are read first."""
    out = np.empty(count, np.float64)
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
    for e in range(count):
        y = scalar if use_scalar else (l1[b + e] if b >= 0 else 0.0)
        old = l1[dst + e]                # dst's old value: `c` of TMULADDDST, TAXPY, ...
        if dt == DT_INT32:               # int32 tiles: integer semantics, wrapping
            c = np.int64(old) if math.isfinite(old) else np.int64(0)
            out[e] = np.float64(wrap_i32(alu_int(op, np.int64(l1[a + e]), np.int64(y), c)))
        else:
            out[e] = round_to(dt, alu_float(op, l1[a + e], y, old))
    for e in range(count):
        l1[dst + e] = out[e]


@njit(cache=True, error_model="numpy")
def _fold(op, l1, dst, src, rows, cols, init, dt, per_col):
    """dst[i] = op-fold along row i (or, per_col, down column i) of src in order, every partial
    result rounded to dt (np.add.accumulate's order; int32 wraps); init only for an empty
    line. Every source word is read before dst is written."""
    n_out, n_in = (cols, rows) if per_col else (rows, cols)
    out = np.empty(n_out, np.float64)
    for i in range(n_out):
        acc = init if n_in == 0 else (l1[src + i] if per_col else l1[src + i * cols])
        for j in range(1, n_in):
            x = l1[src + j * cols + i] if per_col else l1[src + i * cols + j]
            if dt == DT_INT32:
                acc = np.float64(wrap_i32(alu_int(op, np.int64(acc), np.int64(x), 0)))
            else:
                acc = round_to(dt, alu_float(op, acc, x, 0.0))
        out[i] = round_to(dt, acc)
    for i in range(n_out):
        l1[dst + i] = out[i]


@njit(cache=True, error_model="numpy")
def tile_row_reduce(op, l1, dst, src, rows, cols, init, dt):
    """dst[r] = op-fold over src[r, :] in column order (TROWSUM, TROWMAX, ...)."""
    _fold(op, l1, dst, src, rows, cols, init, dt, False)


@njit(cache=True, error_model="numpy")
def tile_col_reduce(op, l1, dst, src, rows, cols, init, dt):
    """dst[c] = op-fold over src[:, c] in row order (TCOLSUM, TCOLMAX, ...)."""
    _fold(op, l1, dst, src, rows, cols, init, dt, True)


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
            if dt == DT_INT32:
                hit = alu_int(op, np.int64(x), np.int64(y), np.int64(mode)) != 0
            else:
                hit = alu_float(op, x, y, np.float64(mode)) != 0.0
            if hit:
                out[r * nbytes + c // 8] += np.float64(1 << (c % 8))
    for r in range(rows):
        for w in range(nbytes):
            l1[dst + r * mstride + w] = out[r * nbytes + w]


@njit(cache=True, error_model="numpy")
def tile_sel(op, l1, dst, mask, a, b, scalar, use_scalar, rows, cols, mstride, dt):
    """TSEL / TSELS: dst[r, c] = the table's select of a[r, c] and b[r, c] (or scalar) by bit
    (c % 8) of mask[r * mstride + c // 8], rounded to dt; every source is read first."""
    out = np.empty(rows * cols, np.float64)
    for r in range(rows):
        for c in range(cols):
            bit = (np.int64(l1[mask + r * mstride + c // 8]) >> (c % 8)) & 1
            x = l1[a + r * cols + c]
            y = scalar if use_scalar else l1[b + r * cols + c]
            if dt == DT_INT32:
                out[r * cols + c] = np.float64(wrap_i32(alu_int(op, np.int64(x), np.int64(y), bit)))
            else:
                out[r * cols + c] = round_to(dt, alu_float(op, x, y, np.float64(bit)))
    for e in range(rows * cols):
        l1[dst + e] = out[e]


@njit(cache=True, error_model="numpy")
def tile_tri(l1, dst, diagonal, upper, rows, cols):
    """TTRI: dst[r, c] = 1 where c <= r + diagonal (lower) or c >= r + diagonal (upper), else 0."""
    for r in range(rows):
        for c in range(cols):
            inside = (c >= r + diagonal) if upper else (c <= r + diagonal)
            l1[dst + r * cols + c] = 1.0 if inside else 0.0


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
def tile_arg_reduce(op, l1, dst, src, rows, cols, dt, per_col):
    """TROWARG* (per_col False): dst[r] = the column index of the element of row r the table's
    compare keeps; TCOLARG* (per_col True): dst[c] = the row index in column c. An element
    replaces the best so far only when compare(element, best) holds, so the first of equals
    wins, a later NaN never does, and a NaN first keeps index 0 whatever follows (every
    compare with it is false): pto-isa's CPU simulation, include/pto/cpu/TReduceIdx.hpp at
    3186c381, lines 112-119 (by column) and 160-168 (by row). Indices are int32 words."""
    n_out, n_in = (cols, rows) if per_col else (rows, cols)
    out = np.zeros(n_out, np.float64)
    for i in range(n_out):
        best = l1[src + i] if per_col else l1[src + i * cols]
        for j in range(1, n_in):
            x = l1[src + j * cols + i] if per_col else l1[src + i * cols + j]
            if dt == DT_INT32:
                hit = alu_int(op, np.int64(x), np.int64(best), 0) != 0
            else:
                hit = alu_float(op, x, best, 0.0) != 0.0
            if hit:
                best = x
                out[i] = j
    for i in range(n_out):
        l1[dst + i] = out[i]


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
def tile_row_arg(op, l1, dst, src, rows, cols, dt):
    """TROWARGMAX / TROWARGMIN: dst[r] = the column index row r's compare keeps."""
    tile_arg_reduce(op, l1, dst, src, rows, cols, dt, False)


@njit(cache=True, error_model="numpy")
def tile_col_arg(op, l1, dst, src, rows, cols, dt):
    """TCOLARGMAX / TCOLARGMIN: dst[c] = the row index column c's compare keeps."""
    tile_arg_reduce(op, l1, dst, src, rows, cols, dt, True)


@njit(cache=True, error_model="numpy")
def _expand_op(op, l1, dst, a, v, rows, cols, dt, per_col):
    """dst[r, c] = op(a[r, c], v[c] if per_col else v[r]) by the table's expression, rounded
    to dt (int32 wraps); every source word is read before dst is written (dst may be a)."""
    out = np.empty(rows * cols, np.float64)
    for r in range(rows):
        for c in range(cols):
            x = l1[a + r * cols + c]
            y = l1[v + c] if per_col else l1[v + r]
            if dt == DT_INT32:
                out[r * cols + c] = np.float64(wrap_i32(alu_int(op, np.int64(x), np.int64(y), 0)))
            else:
                out[r * cols + c] = round_to(dt, alu_float(op, x, y, 0.0))
    for e in range(rows * cols):
        l1[dst + e] = out[e]


@njit(cache=True, error_model="numpy")
def tile_col_expand_op(op, l1, dst, a, v, rows, cols, dt):
    """dst[r, c] = op(a[r, c], v[c]): one value per column (TCOLEXPAND*)."""
    _expand_op(op, l1, dst, a, v, rows, cols, dt, True)


@njit(cache=True, error_model="numpy")
def tile_row_expand_op(op, l1, dst, a, v, rows, cols, dt):
    """dst[r, c] = op(a[r, c], v[r]): one value per row (TROWEXPAND*)."""
    _expand_op(op, l1, dst, a, v, rows, cols, dt, False)


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
        if dt < 0:
            for c in range(cols):
                out[r * cols + c] = src_arr[row + c]
        else:
            for c in range(cols):
                out[r * cols + c] = round_to(dt, src_arr[row + c])


@njit(cache=True, error_model="numpy")
def tile_scatter(dst_arr, dst, dpitch, buf, rows, cols):
    """dst_arr[dst + r * dpitch + c] = buf[r * cols + c]: a gathered (or computed) dense block
    lands in a tile, or in GM rows dpitch apart."""
    for r in range(rows):
        row = dst + r * dpitch
        for c in range(cols):
            dst_arr[row + c] = buf[r * cols + c]


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def tile_matmul(out, l1, c, cpitch, a, apitch, b, bpitch, m, n, k, init, bias, dt):
    """TMATMUL* / TGEMV* (and the article's MMA): out[i * n + j] = the exact value of
    init[i, j] + sum over p of a[i, p] * b[p, j], rounded once to dt (float32: to nearest,
    ties to even; int32 wraps). init is 0 (init == 0), the accumulator's old c[i, j] (init ==
    1, the _ACC forms) or bias[j] (init == 2, the _BIAS forms). A NaN or an infinity among the
    terms gives what IEEE arithmetic gives in any order (NaN for inf * 0 or inf - inf).

    An exact sum does not depend on the order it is taken in, so this kernel (a float64 sum
    over p in order, then matmul_finish) and the BLAS product that exec/aicore_tiles.py uses
    for large finite tiles give the same bits. Every product of the cube's input dtypes
    (float16, bfloat16, float32, int8) is exact in float64, so a fused multiply-add changes
    nothing and the compiler may use one ("contract"). A and B are first packed into dense
    arrays (windows of pitched tiles), then four rows at a time share each row of B."""
    A = np.empty(m * k)
    B = np.empty(k * n)
    for r in range(m):
        for p in range(k):
            A[r * k + p] = l1[a + r * apitch + p]
    for p in range(k):
        for j in range(n):
            B[p * n + j] = l1[b + p * bpitch + j]
    start = np.empty(m * n)
    for r in range(m):
        for j in range(n):
            start[r * n + j] = l1[c + r * cpitch + j] if init == 1 else l1[bias + j] if init == 2 else 0.0
    acc = np.empty((4, n))
    sums = np.empty(m * n)
    for i in range(0, m, 4):
        rows = min(4, m - i)
        for r in range(4):
            for j in range(n):
                acc[r, j] = start[(i + r) * n + j] if r < rows else 0.0
        # rows past m repeat row i's products (a valid row) and are not kept
        a0 = i * k
        a1 = (i + 1 if rows > 1 else i) * k
        a2 = (i + 2 if rows > 2 else i) * k
        a3 = (i + 3 if rows > 3 else i) * k
        _matmul_rows(acc, A, a0, a1, a2, a3, B, n, k)
        for r in range(rows):
            for j in range(n):
                sums[(i + r) * n + j] = acc[r, j]
    matmul_finish(out, sums, A, B, start, m, n, k, dt)


@njit(cache=True, error_model="numpy")
def matmul_finish(out, sums, A, B, start, m, n, k, dt):
    """out = the float64 sums of a matmul (start + A @ B, A m x k and B k x n dense, summed in
    any order) rounded to dt as the exact sums would round. A float64 sum of k + 1 terms is
    within (k + 2) 2^-53 of the sum of their magnitudes, bounded here by |start| + (the row's
    sum of |A|) x (the column's largest |B|); where the whole interval rounds to one float32
    that is the result, else the exact sum decides (_exact_float32). int32 results are exact
    already (int8 products, far below 2^53) and wrap. The cube accumulates into float32 or
    int32 only (dt is one of them)."""
    if dt == DT_INT32:
        for e in range(m * n):
            out[e] = np.float64(wrap_i32(np.int64(sums[e]))) if math.isfinite(sums[e]) else 0.0
        return
    rowabs = np.zeros(m)
    colmax = np.zeros(n)
    rowbit = np.full(m, 2000)          # the lowest set bit among each row of A, as an exponent
    colbit = np.full(n, 2000)          # ... among each column of B
    a_bits, b_bits, s_bits = A.view(np.int64), B.view(np.int64), start.view(np.int64)
    for r in range(m):
        for p in range(k):
            rowabs[r] += abs(A[r * k + p])
            rowbit[r] = min(rowbit[r], _lowest_bit(a_bits[r * k + p]))
    for p in range(k):
        for j in range(n):
            colmax[j] = max(colmax[j], abs(B[p * n + j]))
            colbit[j] = min(colbit[j], _lowest_bit(b_bits[p * n + j]))
    start_bit = 2000
    for e in range(m * n):
        start_bit = min(start_bit, _lowest_bit(s_bits[e]))
    # every term of element (r, j) is a multiple of 2^(rowbit + colbit), and start of
    # 2^start_bit: while the sum of their magnitudes stays below 2^53 times the smaller, every
    # partial sum is exact in float64, in any order, and s is the exact sum
    rowlim = np.empty(m)
    collim = np.empty(n)
    for r in range(m):
        rowlim[r] = math.ldexp(1.0, max(-1000, min(1000, rowbit[r] + 26)))
    for j in range(n):
        collim[j] = math.ldexp(1.0, max(-1000, min(1000, colbit[j] + 27)))
    start_lim = math.ldexp(1.0, max(-1000, min(1000, start_bit + 53)))
    gamma = (k + 2) * 2.0**-53 * 1.01
    settled = np.empty(m * n, np.bool_)
    for r in range(m):
        for j in range(n):
            e = r * n + j
            s = sums[e]
            total = abs(start[e]) + rowabs[r] * colmax[j]
            near = np.float32(s)
            out[e] = np.float64(near)
            exact = total < min(rowlim[r] * collim[j], start_lim)
            # else s is within bound of the exact sum: settled when both ends round alike
            bound = total * gamma + abs(s) * 2.0**-52
            settled[e] = exact | ((np.float32(s - bound) == near) & (np.float32(s + bound) == near))
    terms = np.empty(k + 1)
    partials = np.empty(k + 1)
    for e in range(m * n):             # the rare element whose bound straddles a rounding point
        if not settled[e] and math.isfinite(sums[e]):
            r, j = e // n, e % n
            terms[0] = start[e]
            for p in range(k):
                terms[p + 1] = A[r * k + p] * B[p * n + j]
            out[e] = _exact_float32(terms, k + 1, partials)


@njit(cache=True, error_model="numpy")
def _exact_float32(terms, count, partials):
    """The exact sum of terms[:count] (Shewchuk's non-overlapping partials, as Python's
    math.fsum) rounded to the nearest float32, ties to even: the float64 hi nearest the sum
    rounds as the sum does unless hi is a float32 midpoint, where the sign of the rest decides."""
    used = 0
    for i in range(count):
        x = terms[i]
        j = 0
        for q in range(used):
            y = partials[q]
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                partials[j] = lo
                j += 1
            x = hi
        partials[j] = x
        used = j + 1
    hi = partials[used - 1] if used else 0.0
    rest = 0.0
    q = used - 1
    while q > 0:
        q -= 1
        x, y = hi, partials[q]
        hi = x + y
        rest = y - (hi - x)
        if rest != 0.0:
            break                      # the smaller partials cannot change rest's sign
    f = np.float32(hi)
    fv = _float32_value(f, hi)
    if fv == hi or rest == 0.0:
        return np.float64(f)
    other = np.nextafter(f, np.float32(np.inf) if hi > fv else np.float32(-np.inf))
    ov = _float32_value(other, hi)
    if fv + ov != 2.0 * hi:
        return np.float64(f)           # hi is not halfway between two float32 values
    return np.float64(other) if (rest > 0.0) == (ov > fv) else np.float64(f)


@njit(cache=True, error_model="numpy")
def _float32_value(f, near):
    """float32 f as a number; an infinity counts as 2^128 (with near's sign), where the float32
    after the largest would be, so overflow rounds as IEEE says (ties at 2^128 - 2^103)."""
    if math.isinf(f):
        return math.copysign(2.0**128, near)
    return np.float64(f)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _matmul_rows(acc, A, a0, a1, a2, a3, B, n, k):
    """Four rows of a matmul: acc[r, j] += A[a_r + p] * B[p * n + j] for p in order (one
    accumulator array, so the vectorised loop needs few run-time overlap checks)."""
    for p in range(k):
        x0, x1, x2, x3 = A[a0 + p], A[a1 + p], A[a2 + p], A[a3 + p]
        row = p * n
        for j in range(n):
            y = B[row + j]
            acc[0, j] += x0 * y
            acc[1, j] += x1 * y
            acc[2, j] += x2 * y
            acc[3, j] += x3 * y


# trailing zeros of a 64-bit power of two by de Bruijn multiplication
TRAILING_ZEROS = np.array([0, 1, 2, 53, 3, 7, 54, 27, 4, 38, 41, 8, 34, 55, 48, 28, 62, 5, 39, 46,
                           44, 42, 22, 9, 24, 35, 59, 56, 49, 18, 29, 11, 63, 52, 6, 26, 37, 40, 33,
                           47, 61, 45, 43, 21, 23, 58, 17, 10, 51, 25, 36, 32, 60, 20, 57, 16, 50, 31,
                           19, 15, 30, 14, 13, 12], np.int64)


@njit(cache=True, error_model="numpy")
def _lowest_bit(bits):
    """The exponent of the lowest set bit of the float64 whose IEEE bits are ``bits`` (x = odd *
    2^that); 2000 for zero, 1000 for NaN and infinities (never exact)."""
    field = (bits >> 52) & 0x7FF
    frac = bits & 0xFFFFFFFFFFFFF
    if field == 0x7FF:
        return 1000
    if field == 0:
        if frac == 0:
            return 2000
        mant, base = frac, -1074
    else:
        mant, base = frac | 0x10000000000000, field - 1075
    low = np.uint64(mant & -mant)
    return base + TRAILING_ZEROS[np.int64((low * np.uint64(0x022FDD63CC95386D)) >> np.uint64(58))]
