"""The reference executor's tile kernels: the same names, signatures and effects as the numba
executor's (``compiled/tiles.py``, ``compiled/reductions.py``, ...), in plain numpy. Tiles are
row-major runs of words in the block's L1 area; ``reference.py`` re-exports every kernel,
because the reference module stands in for the numba executor module in a simulation
(``executor_module=``)."""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..isa import load_isa, store_modes
from ..isa.tile_roles import FAMILY_ROLES, KERNEL_FAMILIES
from . import gm
from .reference_concat import tile_concat, tile_concat_idx
from .reference_conv import tile_trans_conv
from .reference_relu_conv import tile_add_deq_relu, tile_relu_conv
from .reference_sort import tile_sort
from .reference_values import evaluate, round_mode, tile_store_quant, to_dtype, word_pitch, words_grid, wrap_int32


def _integer(dt) -> bool:
    """Whether dtype code dt computes by the table's int expressions (every integer dtype but
    bool), each result then wrapped to dt by to_dtype."""
    d = dtypes.BY_CODE[int(dt)]
    return not d.is_float and d != dtypes.bool_


def tile_convert(l1, dst, src, count, dt, mode):
    """TCVT: dst[e] = round_mode(dt, src[e], mode)."""
    l1[dst:dst + count] = [round_mode(dt, v, mode) for v in l1[src:src + count]]


# ---------------------------------------------------------------- tile instructions
# The same signatures and effects as the numba executor's tile kernels; tiles are row-major
# runs of words in the block's L1 area.

def _gm_elements(byte0, rows, cols, stride, dt):
    """Byte addresses of rows x cols dtype-dt GM elements from byte0, rows stride apart."""
    return gm.window_elements(0, rows, cols, stride) * dtypes.BY_CODE[dt].itemsize + byte0


def tile_load(l1, dst, hbm, src, rows, cols, stride, dt):
    """async_load: rows x cols dtype-dt elements from HBM (element 0 at byte src, rows
    ``stride`` elements apart) into a dense tile."""
    l1[dst:dst + rows * cols] = gm.load(hbm, _gm_elements(src, rows, cols, stride, dt),
                                        dtypes.BY_CODE[dt])


def tile_store(hbm, dst, l1, src, rows, cols, stride, dt):
    """A dense rows x cols tile into HBM (element 0 at byte dst, rows ``stride`` elements
    apart), each value rounded to dt."""
    values = [to_dtype(dt, x) for x in l1[src:src + rows * cols]]
    gm.store(hbm, _gm_elements(dst, rows, cols, stride, dt), dtypes.BY_CODE[dt], values)


def gm_gather(out, hbm, src, stride, rows, cols, dt):
    """TLOAD's read of GM: out = the rows x cols dtype-dt elements from byte src, rows stride
    elements apart."""
    out[:rows * cols] = gm.load(hbm, _gm_elements(src, rows, cols, stride, dt), dtypes.BY_CODE[dt])


def gm_scatter(hbm, dst, stride, buf, rows, cols, dt):
    """TSTORE's write of GM: the dense rows x cols block buf (values of dtype dt) to the
    elements from byte dst, rows stride elements apart."""
    gm.store(hbm, _gm_elements(dst, rows, cols, stride, dt), dtypes.BY_CODE[dt], buf[:rows * cols])


def gm_scatter_mode(hbm, dst, stride, buf, rows, cols, dt, mode):
    """TSTORE's write of GM by its mode (isa/store_modes.py): RELU makes each value that is not
    positive 0 (buf in place), then ATOMIC_ADD adds the values to GM's in dtype dt (integers
    wrap: to_dtype's int32 saturates, so int32 sums wrap here), else gm_scatter."""
    d = dtypes.BY_CODE[dt]
    values = np.asarray(buf[:rows * cols], np.float64)
    if mode & store_modes.RELU:
        values[:] = [x if x > 0.0 else 0.0 for x in values]
    if not mode & store_modes.ATOMIC_ADD:
        gm_scatter(hbm, dst, stride, values, rows, cols, dt)
        return
    where = _gm_elements(dst, rows, cols, stride, dt)
    old = gm.load(hbm, where, d)
    if d == dtypes.int32:
        total = [float(wrap_int32(int(a) + int(b))) for a, b in zip(old, values)]
    else:
        total = [to_dtype(dt, float(a) + float(b)) for a, b in zip(old, values)]
    gm.store(hbm, where, d, np.asarray(total, np.float64))


def tile_mma(l1, c_base, a_base, b_base, m, n, k, dt):
    """C[m,n] += A[m,k] @ B[k,n] on dense tiles: tile_matmul accumulating into C."""
    out = np.empty(m * n)
    tile_matmul(out, l1, c_base, n, a_base, k, b_base, n, m, n, k, 1, 0, dt)
    tile_scatter(l1, c_base, n, out, m, n)


def tile_elementwise(op, l1, dst, a, b, scalar, use_scalar, count, dt):
    """dst[e] = the table's expression of (a[e], b[e] or scalar, dst[e]'s old value)."""
    spec = load_isa().by_opcode[int(op)]
    is_int = _integer(dt)
    out = []
    for e in range(count):
        y = scalar if use_scalar else (l1[b + e] if b >= 0 else 0.0)
        old = float(l1[dst + e])
        c = old if not is_int else (old if math.isfinite(old) else 0.0)
        out.append(to_dtype(dt, evaluate(spec, l1[a + e], y, c, is_int, dt)))
    l1[dst:dst + count] = out


def _fold(op, l1, dst, src, rows, cols, init, dt, per_col, spitch=0):
    """dst[i] = fold of the table's expression along row i (or, per_col, down column i) of src,
    each partial result rounded to dt (integers: integer semantics, wrapped); init only for an
    empty line. Where the partial result and the next element are both NaN, the partial
    result's NaN stays, in both executors: which of two NaNs an add keeps is the hardware add's
    operand order, which numba and numpy do not fix. src's rows lie spitch words apart (<= 0:
    cols, dense)."""
    spec = load_isa().by_opcode[int(op)]
    is_int = _integer(dt)
    grid = words_grid(l1, src, rows, cols, spitch)
    out = []
    for line in (grid.T if per_col else grid):
        acc = init if len(line) == 0 else line[0]
        for x in line[1:]:
            if not is_int and math.isnan(acc) and math.isnan(x):
                continue          # two NaNs: the partial result's stays
            acc = to_dtype(dt, evaluate(spec, acc, x, 0.0, is_int, dt))
        out.append(to_dtype(dt, acc))
    l1[dst:dst + len(out)] = out


def tile_row_reduce(op, l1, dst, src, rows, cols, init, dt):
    """dst[r] = fold over src[r, :] in column order (TROWSUM, TROWMAX, ...)."""
    _fold(op, l1, dst, src, rows, cols, init, dt, False)


def tile_col_reduce(op, l1, dst, src, rows, cols, init, dt):
    """dst[c] = fold over src[:, c] in row order (TCOLSUM, TCOLMAX, ...)."""
    _fold(op, l1, dst, src, rows, cols, init, dt, True)


def tile_row_reduce_pitched(op, l1, dst, src, rows, cols, dpitch, spitch, init, dt):
    """tile_row_reduce of src's rows spitch words apart (<= 0: cols) into element (r, 0) of a
    RowMajor dst, dpitch words apart by row (dpitch <= 1: a dense column)."""
    if dpitch <= 1:
        return _fold(op, l1, dst, src, rows, cols, init, dt, False, spitch)
    sp = word_pitch(spitch, cols)
    for r in range(rows):
        _fold(op, l1, dst + r * dpitch, src + r * sp, 1, cols, init, dt, False)


def tile_col_reduce_tmp(op, l1, dst, src, rows, cols, tmp, is_binary, tpitch, spitch, init, dt):
    """spitch > 0 (the AI core's typed tiles): nothing for an empty region, TCOLSUM's pairwise
    tree through tmp when is_binary > 0, else A2/A3's copy of row 0 and fold of the rows after
    it (tile_col_reduce_a2a3); spitch <= 0 (the article's dense tiles): the fold in row order."""
    if spitch <= 0:
        return _fold(op, l1, dst, src, rows, cols, init, dt, True, spitch)
    if rows <= 0 or cols <= 0:
        return None
    if is_binary > 0:
        return tile_col_reduce_pairs(op, l1, dst, src, tmp, rows, cols, tpitch, spitch, dt)
    return tile_col_reduce_a2a3(op, l1, dst, src, rows, cols, spitch, init, dt)


def block_words(cols, dt):
    """cols elements of dt in whole 32-byte blocks (pto_copy_ubuf_to_ubuf's lenBurst)."""
    per = 32 // dtypes.BY_CODE[int(dt)].itemsize
    return -(-cols // per) * per


def copy_blocks(l1, dst, src, cols, dt):
    """One burst of pto_copy_ubuf_to_ubuf: src's cols elements in whole 32-byte blocks to dst,
    all read before any is written."""
    n = block_words(cols, dt)
    l1[dst:dst + n] = l1[src:src + n].copy()


def tile_col_reduce_a2a3(op, l1, dst, src, rows, cols, sp, init, dt):
    """A2/A3's sequential column reduction (TColReduceOps.hpp l.54-71, TColSum.hpp l.61-82,
    147-153): src row 0 into dst in whole 32-byte blocks, then dst = op(dst, src row i) for
    rows i = 1.., each over the cols valid columns and reading dst's words as they are then
    (a dst that is a later row of src holds the partial result at its turn)."""
    spec = load_isa().by_opcode[int(op)]
    is_int = _integer(dt)
    copy_blocks(l1, dst, src, cols, dt)
    for i in range(1, rows):
        for c in range(cols):
            acc, x = l1[dst + c], l1[src + i * sp + c]
            if is_int or not (math.isnan(acc) and math.isnan(x)):      # two NaNs: the partial result's stays
                l1[dst + c] = to_dtype(dt, evaluate(spec, acc, x, 0.0, is_int, dt))


def tile_col_reduce_pairs(op, l1, dst, src, tmp, rows, cols, tpitch, spitch, dt):
    """TCOLSUM's binary tree (isBinary = true, A2/A3's BinarySum in TColSum.hpp): pairs of
    rows into tmp, an odd last row into tmp row 0, then pairs of tmp rows in place until one is
    left; dst = tmp row 0. Each row add is a vadd: tile_elementwise over cols words. The copies
    (one row: dst = src row 0; the last: dst = tmp row 0) move whole 32-byte blocks."""
    def add_rows(out, x, y):
        tile_elementwise(op, l1, out, x, y, 0.0, False, cols, dt)
    if rows == 1:
        return copy_blocks(l1, dst, src, cols, dt)
    for i in range(rows // 2):
        add_rows(tmp + i * tpitch, src + 2 * i * spitch, src + (2 * i + 1) * spitch)
    if rows % 2:
        add_rows(tmp, tmp, src + (rows - 1) * spitch)
    cnt = rows // 2
    while cnt > 1:
        for i in range(cnt // 2):
            add_rows(tmp + i * tpitch, tmp + 2 * i * tpitch, tmp + (2 * i + 1) * tpitch)
        if cnt % 2:
            add_rows(tmp, tmp, tmp + (cnt - 1) * tpitch)
        cnt //= 2
    return copy_blocks(l1, dst, tmp, cols, dt)


def tile_cmp(op, l1, dst, a, b, scalar, use_scalar, mode, rows, cols, mstride, dt):
    """TCMP / TCMPS: the packed predicate mask, one bit per element, LSB first in each byte."""
    spec = load_isa().by_opcode[int(op)]
    is_int = _integer(dt)
    nbytes = (cols + 7) // 8
    for r in range(rows):
        bits = [evaluate(spec, l1[a + r * cols + c], scalar if use_scalar else l1[b + r * cols + c],
                         mode, is_int, dt) != 0 for c in range(cols)]
        for w in range(nbytes):
            l1[dst + r * mstride + w] = float(sum(1 << k for k, on in enumerate(bits[8 * w:8 * w + 8]) if on))


def tile_sel(op, l1, dst, mask, a, b, scalar, use_scalar, rows, cols, mstride, mbits, dpitch, apitch, bpitch, dt):
    """TSEL / TSELS: the table's select by each element's mask bit (bit c % mb of mask element
    c // mb of the row, mb = mbits or 8), rounded to dt, over rows x cols, dst's, a's and b's rows
    dpitch, apitch, bpitch words apart (<= 0: cols); the words past cols are left alone."""
    spec, is_int, mb = load_isa().by_opcode[int(op)], _integer(dt), 8 if mbits <= 0 else mbits
    dp, ap, bp, out = *(word_pitch(p, cols) for p in (dpitch, apitch, bpitch)), np.empty((rows, cols))
    for r in range(rows):
        for c in range(cols):
            bit = (int(l1[mask + r * mstride + c // mb]) >> (c % mb)) & 1
            y = scalar if use_scalar else l1[b + r * bp + c]
            out[r, c] = to_dtype(dt, evaluate(spec, l1[a + r * ap + c], y, bit, is_int, dt))
    for r in range(rows):
        l1[dst + r * dp:dst + r * dp + cols] = out[r]


def tile_tri(l1, dst, diagonal, upper, rows, cols, dpitch):
    """TTRI: numpy's tril / triu of a rows x cols region of ones, k = diagonal, its rows dpitch
    words apart (<= 0: cols)."""
    ones = np.ones((rows, cols))
    tri = np.triu(ones, diagonal) if upper else np.tril(ones, diagonal)
    dp = word_pitch(dpitch, cols)
    for r in range(rows):
        l1[dst + r * dp:dst + r * dp + cols] = tri[r]


def tile_ci(l1, dst, start, descending, cols, dt):
    """TCI: numpy's start + arange(cols), negated when descending is 1, start - arange(cols)
    when it is 2 (TCI_S), cast to dt (numpy's integer casts keep the low bits, as the int
    lanes' adds wrap)."""
    seq = int(start) + np.arange(cols, dtype=np.int64)
    if int(descending) == 2:
        seq = int(start) - np.arange(cols, dtype=np.int64)
    elif descending:
        seq = -seq
    l1[dst:dst + cols] = seq.astype(dtypes.BY_CODE[int(dt)].numpy)


def tile_part(op, l1, dst, full, part, rows, cols, prows, pcols, pitch, dt):
    """TPARTADD & co. as A2/A3's TPartInstr sequences them, over dst's valid rows x cols: part
    shorter in rows, the operator on its rows (a full, b part) then full's remaining whole rows
    copied; narrower in columns, full's whole rows copied then the operator on part's region (a
    part, b dst); neither, the operator (a full, b part)."""
    def op_rows(a, b, n_rows, n_cols):
        for r in range(n_rows):
            tile_elementwise(op, l1, dst + r * pitch, a + r * pitch, b + r * pitch, 0.0, False, n_cols, dt)

    def copy_rows(first, last):
        l1[dst + first * pitch:dst + last * pitch] = l1[full + first * pitch:full + last * pitch].copy()
    if prows < rows and pcols == cols:
        op_rows(full, part, prows, cols)
        copy_rows(prows, rows)
    elif pcols < cols:
        copy_rows(0, rows)
        op_rows(part, dst, prows, pcols)
    else:
        op_rows(full, part, rows, cols)


def tile_part_arg(op, l1, dst, dsti, s0, i0, s1, i1, rows0, cols0, rows1, cols1, dp, dip, p0, ip0, p1, ip1,
                  dt):
    """TPARTARGMAX / TPARTARGMIN as A2/A3's TPartArgInstr sequences them: one column count and
    different rows, the compares (the table's expression, a src0, b src1: src0's value and
    index where it holds) over the shorter source's rows, then the longer one's other rows
    copied; narrower columns, the wider source copied, then the compares over the smaller
    region; one region, the compares. A copy moves whole rows between tiles of one pitch, a
    row's valid columns between others."""
    spec = load_isa().by_opcode[int(op)]

    def copy(to, src, first, last, cols, tp, sp):
        if tp == sp:
            l1[to + first * tp:to + last * tp] = l1[src + first * sp:src + last * sp].copy()
            return
        for r in range(first, last):
            l1[to + r * tp:to + r * tp + cols] = l1[src + r * sp:src + r * sp + cols].copy()

    def select(rows, cols):
        a, b = words_grid(l1, s0, rows, cols, p0), words_grid(l1, s1, rows, cols, p1)
        x, y = words_grid(l1, i0, rows, cols, ip0), words_grid(l1, i1, rows, cols, ip1)
        first = np.array([[bool(evaluate(spec, u, v, 0.0, False, dt)) for u, v in zip(ra, rb)]
                          for ra, rb in zip(a, b)], bool).reshape(rows, cols)
        vals, idxs = np.where(first, a, b), np.where(first, x, y)
        for r in range(rows):
            l1[dst + r * dp:dst + r * dp + cols] = vals[r]
            l1[dsti + r * dip:dsti + r * dip + cols] = idxs[r]
    rows, cols = min(rows0, rows1), min(cols0, cols1)
    big = (s1, i1, rows1, cols1, p1, ip1) if (rows0 < rows1 or cols0 < cols1) else (s0, i0, rows0, cols0, p0, ip0)
    if cols0 == cols1 and rows0 != rows1:
        select(rows, cols)
        copy(dst, big[0], rows, big[2], big[3], dp, big[4])
        copy(dsti, big[1], rows, big[2], big[3], dip, big[5])
        return
    if cols0 != cols1:
        copy(dst, big[0], 0, big[2], big[3], dp, big[4])
        copy(dsti, big[1], 0, big[2], big[3], dip, big[5])
    select(rows, cols)


def tile_pair_reduce(op, l1, dst, src, rows, cols, dpitch, spitch, dt):
    """TPAIRREDUCESUM: dst[r, k] = the table's expression of (src[r, 2k], src[r, 2k + 1]) for
    k < cols // 2, rounded to dt; two NaNs keep the first. dst's other words are left."""
    spec = load_isa().by_opcode[int(op)]
    half = cols // 2
    grid = words_grid(l1, src, rows, 2 * half, spitch)
    out = [[to_dtype(dt, a if (a != a and b != b) else evaluate(spec, a, b, 0.0, False, dt))
            for a, b in zip(row[0::2], row[1::2])] for row in grid]
    for r in range(rows):
        l1[dst + r * dpitch: dst + r * dpitch + half] = out[r]


def tile_dequant(l1, dst, src, scale, offset, rows, cols, dpitch, spitch, ppitch):
    """TDEQUANT: dst[r, c] = (src[r, c] - offset[r]) * scale[r], in float32 (numpy's float32
    subtract and multiply round each result once), the parameters one a row at ppitch."""
    x = words_grid(l1, src, rows, cols, spitch).astype(np.float32)
    o = np.array([l1[offset + r * ppitch] for r in range(rows)], np.float32).reshape(rows, 1)
    s = np.array([l1[scale + r * ppitch] for r in range(rows)], np.float32).reshape(rows, 1)
    with np.errstate(all="ignore"):
        out = (x - o) * s
    for r in range(rows):
        l1[dst + r * dpitch: dst + r * dpitch + cols] = out[r]


def tile_quant(l1, dst, src, scale, offset, tmp, rows, cols, dpitch, spitch):
    """TQUANT / TQUANT_ASYM (offset >= 0) pass by pass, as TQuant.hpp runs them: tmp the last
    vbrcb's broadcasts (30 repeats at a time from 256 rows on); src *=
    scale (+= offset) in numpy's float32; the int32s (round_mode: rint, saturated, NaN 0) into
    tmp at src's row pitch as the float32 of their bits; their float16s (round_mode) over src's
    words from r * PadColsSrc / 2, packed by numpy's views; dst their int8 / uint8."""
    rint, i32, f16 = dtypes.CVT_MODES.index("rint"), dtypes.int32.code, dtypes.float16.code
    out_dt = dtypes.uint8.code if offset >= 0 else dtypes.int8.code
    reps, par = -(-rows // 8), offset if offset >= 0 else scale
    chunk = 30 if rows >= 256 else max(reps, 1)
    for first in range(0, reps, chunk):
        n = 8 * min(chunk, reps - first)
        l1[tmp:tmp + 8 * n] = np.repeat(l1[par + 8 * first:par + 8 * first + n], 8)
    x = words_grid(l1, src, rows, cols, spitch).astype(np.float32)
    with np.errstate(all="ignore"):
        x = x * l1[scale:scale + rows].astype(np.float32).reshape(rows, 1)
        if offset >= 0:
            x = x + l1[offset:offset + rows].astype(np.float32).reshape(rows, 1)
    ints = np.array([round_mode(i32, v, rint) for v in x.ravel()]).reshape(rows, cols)
    halves = np.array([round_mode(f16, v, rint) for v in ints.ravel()]).reshape(rows, cols)
    half_pitch, words = -(-spitch // 16) * 8, -(-cols // 2)
    for r in range(rows):
        l1[src + r * spitch:src + r * spitch + cols] = x[r]
        l1[tmp + r * spitch:tmp + r * spitch + cols] = ints[r].astype(np.int64).astype(np.int32).view(np.float32)
    for r in range(rows):
        lo = src + r * half_pitch
        packed = l1[lo:lo + words].astype(np.float32).view(np.uint16)    # little-endian: low half first
        packed[:cols] = halves[r].astype(np.float16).view(np.uint16)
        l1[lo:lo + words] = packed.view(np.float32)
    for r in range(rows):
        l1[dst + r * dpitch:dst + r * dpitch + cols] = [round_mode(out_dt, v, rint) for v in halves[r]]


def tile_fillpad(l1, dst, src, pad, rows, cols, spitch, drows, dcols):
    """TFILLPAD*: a drows x dcols grid of pad with src's rows x cols valid region (row pitch
    spitch) copied into its top-left corner."""
    grid = np.full((drows, dcols), pad)
    grid[:rows, :cols] = words_grid(l1, src, rows, cols, spitch) if rows else 0
    l1[dst:dst + drows * dcols] = grid.ravel()


def tile_arg_reduce(op, l1, dst, src, rows, cols, dpitch, spitch, val, vpitch, dt, per_col):
    """TROWARG* / TCOLARG*: along each row (column), a running best that starts at the first
    element and moves to a later one only when the table's compare (element, best) holds, as
    pto-isa's CPU simulation does (include/pto/cpu/TReduceIdx.hpp at 3186c381, lines 112-119
    and 160-168). Every compare with NaN is false: a NaN first keeps index 0 whatever follows,
    a later NaN never wins, an all-NaN line gives 0. src's rows spitch words apart (<= 0: cols);
    TROWARG*'s results dpitch apart (<= 1: a column). val >= 0: the kept elements into val
    too, TROWARG*'s vpitch apart (<= 1: a column)."""
    spec = load_isa().by_opcode[int(op)]
    grid = words_grid(l1, src, rows, cols, spitch)
    lines = grid.T if per_col else grid
    out, kept = [], []
    for line in lines:
        best, at = line[0], 0
        for j, x in enumerate(line[1:], start=1):
            if evaluate(spec, x, best, 0.0, _integer(dt), dt):
                best, at = x, j
        out.append(float(at))
        kept.append(float(best))
    step = 1 if per_col or dpitch <= 1 else dpitch
    for i, x in enumerate(out):
        l1[dst + i * step] = x
    if val >= 0:
        step = 1 if per_col or vpitch <= 1 else vpitch
        for i, x in enumerate(kept):
            l1[val + i * step] = x


def tile_trans(l1, dst, src, rows, cols, spitch, dpitch):
    """TTRANS: numpy's transpose of src's rows x cols (row pitch spitch) into dst (pitch dpitch)."""
    grid = words_grid(l1, src, rows, cols, spitch).T.copy() if rows else None
    for c in range(cols):
        l1[dst + c * dpitch:dst + c * dpitch + rows] = grid[c]


def tile_row_arg(op, l1, dst, src, rows, cols, dpitch, spitch, val, vpitch, dt):
    """TROWARGMAX / TROWARGMIN: the column index of each row's kept element (and, val >= 0,
    the element)."""
    tile_arg_reduce(op, l1, dst, src, rows, cols, dpitch, spitch, val, vpitch, dt, False)


def tile_col_arg(op, l1, dst, src, rows, cols, dpitch, spitch, val, vpitch, dt):
    """TCOLARGMAX / TCOLARGMIN: the row index of each column's kept element (and, val >= 0,
    the element)."""
    tile_arg_reduce(op, l1, dst, src, rows, cols, dpitch, spitch, val, vpitch, dt, True)


def _expand_op(op, l1, dst, a, v, rows, cols, dpitch, apitch, dt, per_col):
    """dst[r, c] = the table's expression of (a[r, c], v[c] if per_col else v[r]), rounded to
    dt; dst's and a's rows dpitch and apitch words apart (<= 0: cols, dense)."""
    spec = load_isa().by_opcode[int(op)]
    is_int = _integer(dt)
    dp, ap = word_pitch(dpitch, cols), word_pitch(apitch, cols)
    out = np.empty((rows, cols))
    for r in range(rows):
        for c in range(cols):
            y = l1[v + c] if per_col else l1[v + r]
            out[r, c] = to_dtype(dt, evaluate(spec, l1[a + r * ap + c], y, 0.0, is_int, dt))
    for r in range(rows):
        l1[dst + r * dp:dst + r * dp + cols] = out[r]


def tile_col_expand_op(op, l1, dst, a, v, rows, cols, dpitch, apitch, dt):
    """dst[r, c] = the table's expression of (a[r, c], v[c]), rounded to dt."""
    _expand_op(op, l1, dst, a, v, rows, cols, dpitch, apitch, dt, True)


def tile_row_expand_op(op, l1, dst, a, v, rows, cols, dpitch, apitch, dt):
    """dst[r, c] = the table's expression of (a[r, c], v[r]), rounded to dt."""
    _expand_op(op, l1, dst, a, v, rows, cols, dpitch, apitch, dt, False)


def tile_col_expand(l1, dst, src, rows, cols):
    """dst[r, c] = src[c]: numpy's broadcast of src's first row over rows rows."""
    l1[dst:dst + rows * cols] = np.broadcast_to(l1[src:src + cols].copy(), (rows, cols)).ravel()


def tile_row_expand(l1, dst, src, rows, cols):
    """dst[r, c] = src[r]."""
    for r in range(rows):
        l1[dst + r * cols: dst + (r + 1) * cols] = l1[src + r]


def tile_row_expand_pitched(l1, dst, src, rows, cols, spitch):
    """tile_row_expand from element (r, 0) of a RowMajor src, spitch words apart by row
    (spitch <= 1: a dense column)."""
    if spitch <= 1:
        return tile_row_expand(l1, dst, src, rows, cols)
    for r in range(rows):
        tile_row_expand(l1, dst + r * cols, src + r * spitch, 1, cols)


# ---------------------------------------------------------------- typed tiles (the AI core)
def tile_gather(out, src_arr, src, spitch, rows, cols, dt):
    """out = the rows x cols elements of src_arr from word src, rows spitch apart, each
    rounded to dt (dt < 0: as they are)."""
    for r in range(rows):
        row = src_arr[src + r * spitch: src + r * spitch + cols]
        out[r * cols:(r + 1) * cols] = row if dt < 0 else [to_dtype(dt, x) for x in row]


def img2col_fields(pos, fmatrix, pads, conv):
    """TIMG2COL's packed operands (isa/35_aicore.toml) as a dict of named fields."""
    return {"pos_m": pos & 0xFFFF, "pos_k": pos >> 16, "fmap_w": fmatrix & 0xFFFF, "fmap_h": fmatrix >> 16,
            "pad_left": pads & 0xFF, "pad_right": (pads >> 8) & 0xFF, "pad_top": (pads >> 16) & 0xFF,
            "pad_bottom": pads >> 24, "filter_w": conv & 0xF, "filter_h": (conv >> 4) & 0xF,
            "stride_w": (conv >> 8) & 0xF, "stride_h": (conv >> 12) & 0xF, "dilation_w": (conv >> 16) & 0xF,
            "dilation_h": (conv >> 20) & 0xF, "c1": conv >> 24}


def tile_img2col(out, l1, src, c0, rows, cols, pos, fmatrix, pads, conv):
    """out (rows x cols, dense) = the window at (pos_m, pos_k) of the img2col matrix of the
    NC1HWC0 feature map at word src of l1 (c1 planes of fmap_h x fmap_w pixels, c0 words each),
    written as pto-isa's CPU simulation states it (include/pto/cpu/TImg2col.hpp CalculateValue):
    zero-padded, then each output pixel's taps in (c1, kh, kw, c0) order."""
    f = img2col_fields(int(pos), int(fmatrix), int(pads), int(conv))
    fmap = np.zeros((f["c1"], f["fmap_h"] + f["pad_top"] + f["pad_bottom"],
                     f["fmap_w"] + f["pad_left"] + f["pad_right"], c0))
    plane = np.asarray(l1[src:src + f["c1"] * f["fmap_h"] * f["fmap_w"] * c0], np.float64)
    fmap[:, f["pad_top"]:f["pad_top"] + f["fmap_h"], f["pad_left"]:f["pad_left"] + f["fmap_w"]] = \
        plane.reshape(f["c1"], f["fmap_h"], f["fmap_w"], c0)
    fh, fw, sh, sw = f["filter_h"], f["filter_w"], f["stride_h"], f["stride_w"]
    dh, dw = f["dilation_h"], f["dilation_w"]
    out_h = (fmap.shape[1] - dh * (fh - 1) - 1) // sh + 1
    out_w = (fmap.shape[2] - dw * (fw - 1) - 1) // sw + 1
    cols_of = f["c1"] * fh * fw * c0
    matrix = np.zeros((out_h * out_w, cols_of))
    for orow in range(out_h):
        for ocol in range(out_w):
            taps = [fmap[:, orow * sh + kh * dh, ocol * sw + kw * dw, :] for kh in range(fh) for kw in range(fw)]
            matrix[orow * out_w + ocol] = np.stack(taps, axis=1).reshape(-1)    # (c1, tap, c0)
    window = np.zeros((rows, cols))
    m0, k0 = f["pos_m"], f["pos_k"]
    part = matrix[m0:m0 + rows, k0:k0 + cols]
    window[:part.shape[0], :part.shape[1]] = part
    out[:rows * cols] = window.reshape(-1)


def tile_scatter(dst_arr, dst, dpitch, buf, rows, cols):
    """The dense rows x cols block buf into dst_arr from word dst, rows dpitch apart."""
    for r in range(rows):
        dst_arr[dst + r * dpitch: dst + r * dpitch + cols] = buf[r * cols:(r + 1) * cols]


def tile_matmul(out, l1, c, cpitch, a, apitch, b, bpitch, m, n, k, init, bias, dt):
    """out = the exact init + A @ B rounded once to dt (float32: nearest, ties to even; int32:
    the integer sum, wrapped); init: 0, the accumulator C (1) or the bias row (2). A NaN or inf
    among an element's terms: the float64 sum in order (IEEE's NaN / inf, in any order; which
    NaN: _ieee_in_order's rule)."""
    def grid(base, pitch, rows, cols):
        return np.array([l1[base + r * pitch: base + r * pitch + cols] for r in range(rows)]).reshape(rows, cols)
    A, B = grid(a, apitch, m, k), grid(b, bpitch, k, n)
    start = grid(c, cpitch, m, n) if init == 1 else \
        np.tile(l1[bias:bias + n], (m, 1)) if init == 2 else np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            terms = [float(start[i, j])] + [float(x) * float(y) for x, y in zip(A[i], B[:, j])]
            if dt == dtypes.int32.code:           # int8 products: an exact integer sum, wrapped
                total = sum(int(t) for t in terms)
                out[i * n + j] = float((total + 2**31) % 2**32 - 2**31)
            elif not all(math.isfinite(t) for t in terms):
                out[i * n + j] = to_dtype(dt, _ieee_in_order(float(start[i, j]), A[i], B[:, j]))
            else:
                out[i * n + j] = _nearest_float32(terms)


def _ieee_in_order(start, row, col):
    """start + sum of row[p] * col[p] in p order, as IEEE arithmetic gives it, with the numba
    executor's rule for NaNs (exec/compiled/matmul.py nan_in_order): a product of two NaNs is
    its first factor's; a NaN partial result stays; a NaN term replaces a number."""
    acc = start
    with np.errstate(all="ignore"):
        for x, y in zip(row, col):
            if math.isnan(acc):
                break
            x, y = float(x), float(y)
            t = x if math.isnan(x) else y if math.isnan(y) else x * y
            acc = t if math.isnan(t) else acc + t
    return acc


def _nearest_float32(terms):
    """The float32 nearest the exact sum of terms, ties to even, past the largest float32
    (2^128 - 2^104) to infinity from 2^128 - 2^103 on (IEEE's overflow): math.fsum gives the
    float64 nearest the sum, and the fsum of the terms less that value the sign of the rest."""
    s = math.fsum(terms)
    rest = math.fsum(terms + [-s])
    sign, s, rest = (-1.0, -s, -rest) if s < 0 else (1.0, s, rest)
    f = np.float32(s)
    if float(f) == s:
        return sign * s
    below = f if float(f) < s else np.nextafter(f, np.float32(0))
    above = np.nextafter(below, np.float32(np.inf))
    mid = (float(below) + (2.0**128 if np.isinf(above) else float(above))) / 2
    if s == mid and rest == 0:                                   # an exact tie: to even
        up = int(below.view(np.uint32)) % 2 == 1
    else:
        up = s > mid or (s == mid and rest > 0)
    return sign * float(above if up else below)


# every kernel by its name (the numba executor's names: reference.py re-exports them)
TILE_KERNELS = {**{name: fn for name, fn in list(globals().items())
                   if name.startswith(("tile_", "gm_")) and callable(fn)},        # and the imported ones:
                **{fn.__name__: fn for fn in (tile_sort, tile_concat, tile_concat_idx, tile_trans_conv,
                                                tile_relu_conv, tile_add_deq_relu, tile_store_quant)}}
# each value family's kernel: its descriptor's (isa/tile_roles.py), and the families whose values the executors
# compute by hand (tile_move, TEXTRACT / TMOV on the AI core: a gather from the source window, scattered into
# the destination; tile_mma: the article's MMA, over tile_matmul; tile_alu: the ALU's elementwise ops)
TILE_FAMILY_KERNELS = {"tile_load": tile_load, "tile_store": tile_store, "tile_mma": tile_mma,
                       "tile_alu": tile_elementwise, "tile_move": tile_gather,
                       **{fam: TILE_KERNELS[FAMILY_ROLES[fam].kernel] for fam in KERNEL_FAMILIES}}
