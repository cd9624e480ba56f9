"""The vector unit's reductions on float64 words: the row and column folds (TROWSUM ...
TCOLPROD, TCOLSUM's pairwise tree), over a source whose rows lie a pitch apart, and the index
reductions (TROWARG*, TCOLARG*). Split from exec/compiled/tiles.py, which keeps the moves,
conversions and elementwise ops these build on."""
import numpy as np
from numba import njit

from .alu import alu_float, alu_int, fold_float
from .isa_constants import INT_SEM, ITEMSIZE
from .scalars import round_to, row_pitch, wrap_i32
from .tiles import tile_elementwise


@njit(cache=True, error_model="numpy")
def _fold(op, l1, dst, src, rows, cols, spitch, init, dt, per_col):
    """dst[i] = op-fold along row i (or, per_col, down column i) of src in order, every partial
    result rounded to dt (np.add.accumulate's order; integers wrap); src's rows spitch words
    apart (<= 0: cols, dense); init only for an empty line. Every source word is read before
    dst is written."""
    sp = row_pitch(spitch, cols)
    n_out = cols if per_col else rows
    out = np.empty(n_out, np.float64)
    if INT_SEM[dt] == 1 or not fold_float(op, l1, src, rows, cols, sp, init, dt, per_col, out):
        _fold_generic(op, l1, src, rows, cols, sp, init, dt, per_col, out)
    for i in range(n_out):
        l1[dst + i] = out[i]


@njit(cache=True, error_model="numpy")
def _fold_generic(op, l1, src, rows, cols, sp, init, dt, per_col, out):
    """_fold's results in out, every element through alu_float / alu_int and round_to."""
    n_out, n_in = (cols, rows) if per_col else (rows, cols)
    for i in range(n_out):
        acc = init if n_in == 0 else (l1[src + i] if per_col else l1[src + i * sp])
        for j in range(1, n_in):
            x = l1[src + j * sp + i] if per_col else l1[src + i * sp + j]
            if INT_SEM[dt] == 1:
                acc = round_to(dt, np.float64(wrap_i32(alu_int(op, np.int64(acc), np.int64(x), 0))))
            elif not (acc != acc and x != x):    # two NaNs: the partial result's stays
                acc = round_to(dt, alu_float(op, acc, x, 0.0, dt))
        out[i] = round_to(dt, acc)


@njit(cache=True, error_model="numpy")
def tile_row_reduce(op, l1, dst, src, rows, cols, init, dt):
    """dst[r] = op-fold over src[r, :] in column order (TROWSUM, TROWMAX, ...), dense."""
    _fold(op, l1, dst, src, rows, cols, 0, init, dt, False)


@njit(cache=True, error_model="numpy")
def tile_col_reduce(op, l1, dst, src, rows, cols, init, dt):
    """dst[c] = op-fold over src[:, c] in row order (TCOLSUM, TCOLMAX, ...), dense."""
    _fold(op, l1, dst, src, rows, cols, 0, init, dt, True)


@njit(cache=True, error_model="numpy")
def tile_row_reduce_pitched(op, l1, dst, src, rows, cols, dpitch, spitch, init, dt):
    """tile_row_reduce of src's rows spitch words apart (<= 0: cols) into element (r, 0) of a
    RowMajor dst, dpitch words apart by row (dpitch <= 1: a dense column), row by row: row r
    reads only its own row, so this equals all rows at once even when dst and src share words."""
    sp = row_pitch(spitch, cols)
    if dpitch > 1:
        for r in range(rows):
            _fold(op, l1, dst + r * dpitch, src + r * sp, 1, cols, sp, init, dt, False)
    else:
        _fold(op, l1, dst, src, rows, cols, sp, init, dt, False)


@njit(cache=True, error_model="numpy")
def tile_col_reduce_tmp(op, l1, dst, src, rows, cols, tmp, is_binary, tpitch, spitch, init, dt):
    """A column reduction of src's rows spitch words apart. spitch > 0, the AI core's typed
    tiles (the compiler sets the tile's row pitch), run as A2/A3 runs them: nothing for an
    empty region (TCOLSUM_IMPL, TCOLMAX_IMPL, ...: validRow or validCol 0 returns), TCOLSUM's
    pairwise tree through tmp when is_binary > 0 (tile_col_reduce_pairs), else
    tile_col_reduce_a2a3. spitch <= 0, the article's dense tiles: the fold in row order, every
    source word read before dst is written."""
    if spitch <= 0:
        _fold(op, l1, dst, src, rows, cols, spitch, init, dt, True)
    elif rows > 0 and cols > 0:
        if is_binary > 0:
            tile_col_reduce_pairs(op, l1, dst, src, tmp, rows, cols, tpitch, spitch, dt)
        else:
            tile_col_reduce_a2a3(op, l1, dst, src, rows, cols, spitch, init, dt)


@njit(cache=True, error_model="numpy")
def block_words(cols, dt):
    """cols elements of dtype dt rounded up to whole 32-byte blocks: the elements A2/A3's
    pto_copy_ubuf_to_ubuf(dst, src, 1, lenBurst, 0, 0) moves, lenBurst = ceil(validCol *
    sizeof(T) / 32) (TColSum.hpp l.61 and 147, TColReduceOps.hpp l.54)."""
    per = 32 // ITEMSIZE[dt]
    return (cols + per - 1) // per * per


@njit(cache=True, error_model="numpy")
def copy_blocks(l1, dst, src, cols, dt):
    """pto_copy_ubuf_to_ubuf of one burst: src's first cols elements in whole 32-byte blocks
    into dst (the words past cols up to the block's end too), all read before any is written."""
    n = block_words(cols, dt)
    l1[dst:dst + n] = l1[src:src + n].copy()


@njit(cache=True, error_model="numpy")
def _fold_step(op, acc, x, dt):
    """One vadd / vmax / vmin / vmul lane: acc op x rounded to dt (integers wrap); where both
    are NaN the partial result's stays (_fold_generic's rule)."""
    if INT_SEM[dt] == 1:
        return round_to(dt, np.float64(wrap_i32(alu_int(op, np.int64(acc), np.int64(x), 0))))
    if acc != acc and x != x:
        return acc
    return round_to(dt, alu_float(op, acc, x, 0.0, dt))


@njit(cache=True, error_model="numpy")
def tile_col_reduce_a2a3(op, l1, dst, src, rows, cols, sp, init, dt):
    """TCOLSUM / TCOLMAX / TCOLMIN / TCOLPROD without the pairwise tree, in A2/A3's order
    (ColReduceInstr, TColReduceOps.hpp l.54-71; TColSum, TColSum.hpp l.147-153, 61-82): src
    row 0 copied into dst in whole 32-byte blocks (copy_blocks), then for each row i >= 1 one
    op(dst, dst, src row i) over the cols valid columns, reading dst's live words: a dst that
    is row k of src itself holds the partial result when row k's turn comes. Where no row
    i >= 1 lies in dst's words and dst is src's row 0 or apart from it, that is the fold of
    the rows as read (_fold, its fast path); one row is the copy alone, its words as they are."""
    n = block_words(cols, dt)
    copy_blocks(l1, dst, src, cols, dt)
    apart0 = dst == src or dst + n <= src or dst >= src + n
    if rows > 1 and apart0 and (dst + cols <= src + sp or dst >= src + (rows - 1) * sp + cols):
        _fold(op, l1, dst, src, rows, cols, sp, init, dt, True)
        return
    for i in range(1, rows):
        for c in range(cols):
            l1[dst + c] = _fold_step(op, l1[dst + c], l1[src + i * sp + c], dt)


@njit(cache=True, error_model="numpy")
def tile_col_reduce_pairs(op, l1, dst, src, tmp, rows, cols, tpitch, spitch, dt):
    """TCOLSUM(dst, src, tmp, isBinary = true) as A2/A3's BinarySum (TColSum.hpp), one row vadd
    (tile_elementwise) at a time: tmp row i = src rows 2i op 2i + 1, an odd last row into tmp
    row 0, the same on tmp's cnt rows in place while cnt > 1; dst = tmp row 0 (tpitch, spitch:
    tmp's and src's row pitches). One row: dst = src row 0. Both copies move whole 32-byte
    blocks (copy_blocks; TColSum.hpp l.63-64 and 77): the words of the last block past cols
    come from src's row 0, or tmp's, as they are."""
    if rows == 1:
        copy_blocks(l1, dst, src, cols, dt)
        return
    for i in range(rows // 2):
        tile_elementwise(op, l1, tmp + i * tpitch, src + 2 * i * spitch, src + (2 * i + 1) * spitch, 0.0, False, cols,
                         dt)
    if rows % 2 == 1:
        tile_elementwise(op, l1, tmp, tmp, src + (rows - 1) * spitch, 0.0, False, cols, dt)
    cnt = rows // 2
    while cnt > 1:
        for i in range(cnt // 2):
            tile_elementwise(op, l1, tmp + i * tpitch, tmp + 2 * i * tpitch, tmp + (2 * i + 1) * tpitch, 0.0, False,
                             cols, dt)
        if cnt % 2 == 1:
            tile_elementwise(op, l1, tmp, tmp, tmp + (cnt - 1) * tpitch, 0.0, False, cols, dt)
        cnt //= 2
    copy_blocks(l1, dst, tmp, cols, dt)


@njit(cache=True, error_model="numpy")
def tile_arg_reduce(op, l1, dst, src, rows, cols, dpitch, spitch, val, vpitch, dt, per_col):
    """TROWARG* (per_col False): dst[r] = the column index of the element of row r the table's
    compare keeps; TCOLARG* (per_col True): dst[c] = the row index in column c. An element
    replaces the best so far only when compare(element, best) holds, so the first of equals
    wins, a later NaN never does, and a NaN first keeps index 0 whatever follows (every
    compare with it is false): pto-isa's CPU simulation, include/pto/cpu/TReduceIdx.hpp at
    3186c381, lines 112-119 (by column) and 160-168 (by row). Indices are int32 words. src's
    rows lie spitch words apart (<= 0: cols); TROWARG*'s results dpitch apart (<= 1: a column).
    val >= 0 (the value-and-index form): the kept element itself into val too, TROWARG*'s
    vpitch words apart (<= 1: a column), TCOLARG*'s along val's first row."""
    sp = row_pitch(spitch, cols)
    dp = 1 if dpitch <= 1 or per_col else dpitch
    vp = 1 if vpitch <= 1 or per_col else vpitch
    n_out, n_in = (cols, rows) if per_col else (rows, cols)
    out = np.zeros(n_out, np.float64)
    kept = np.empty(n_out, np.float64)
    for i in range(n_out):
        best = l1[src + i] if per_col else l1[src + i * sp]
        for j in range(1, n_in):
            x = l1[src + j * sp + i] if per_col else l1[src + i * sp + j]
            if INT_SEM[dt] == 1:
                hit = alu_int(op, np.int64(x), np.int64(best), 0) != 0
            else:
                hit = alu_float(op, x, best, 0.0, dt) != 0.0
            if hit:
                best = x
                out[i] = j
        kept[i] = best
    for i in range(n_out):
        l1[dst + i * dp] = out[i]
    if val >= 0:
        for i in range(n_out):
            l1[val + i * vp] = kept[i]


@njit(cache=True, error_model="numpy")
def tile_row_arg(op, l1, dst, src, rows, cols, dpitch, spitch, val, vpitch, dt):
    """TROWARGMAX / TROWARGMIN: dst[r] = the column index row r's compare keeps (val[r] = the
    element, when val >= 0)."""
    tile_arg_reduce(op, l1, dst, src, rows, cols, dpitch, spitch, val, vpitch, dt, False)


@njit(cache=True, error_model="numpy")
def tile_col_arg(op, l1, dst, src, rows, cols, dpitch, spitch, val, vpitch, dt):
    """TCOLARGMAX / TCOLARGMIN: dst[c] = the row index column c's compare keeps (val[c] = the
    element, when val >= 0)."""
    tile_arg_reduce(op, l1, dst, src, rows, cols, dpitch, spitch, val, vpitch, dt, True)


@njit(cache=True, error_model="numpy")
def tile_pair_reduce(op, l1, dst, src, rows, cols, dpitch, spitch, dt):
    """TPAIRREDUCESUM (A2/A3's vcpadd a row): dst[r, k] = op(src[r, 2k], src[r, 2k + 1]) for
    k < cols // 2, rows dpitch / spitch words apart, each result rounded to dt; where both
    are NaN the first one's stays (as the folds keep the partial result's). Every source word
    is read before dst is written."""
    half = cols // 2
    out = np.empty(rows * half, np.float64)
    for r in range(rows):
        for k in range(half):
            a = l1[src + r * spitch + 2 * k]
            b = l1[src + r * spitch + 2 * k + 1]
            out[r * half + k] = round_to(dt, a if (a != a and b != b) else alu_float(op, a, b, 0.0, dt))
    for r in range(rows):
        for k in range(half):
            l1[dst + r * dpitch + k] = out[r * half + k]
