"""The tile_sort family's value kernel (TSORT32, TMRGSORT, TMRGSORT_LISTS, TGATHER), beside the
other tile kernels (tiles.py).

A (value, index) structure is 8 bytes, as A2/A3's vbitsort writes it: two float32 words, the
value and the float32 whose bits are the index's 32 bits, or four float16 words (mode bit
MODE_F16): the value, 0, then the index's low and high 16 bits, each word the float16 whose
bits they are (gm_bytes' ieee_decode / ieee_encode, which keep a float16 NaN pattern's payload in
the float64 word). So the bytes a TSTORE writes are the device's, and TGATHER reads an index
back as an int32 by its bits (TO_I32_BITS, or the int32 view of float16 pairs). The sorts and
merges copy words unchanged.

float32 bits <-> word goes through float32 as gm_bytes' float32 load and store do (f32_of_bits,
bits_of_f32): a NaN's payload is kept, but a signalling NaN pattern (exponent all ones, bit 22
clear, mantissa not 0: int32 2139095041..2143289343 or -8388607..-4194305) comes back with bit
22 set, as the float32 -> float64 conversion quiets it (gm_load of a float32 does the same): a
limit of float64 words, not the device's (which moves all 32 bits).
"""
import numpy as np
from numba import njit

from ...isa.sort_modes import (AXIS_COL, BLOCK_BYTES, EXHAUSTED, GATHER_BLOCKS, INDEXED, MODE_F16, SCATTER,
                                STRUCT_BYTES, TO_F32_BITS, TO_I32_BITS, block_words as _block_words_py)
from .gm_bytes import ieee_decode, ieee_encode
from .scalars import row_pitch, wrap_i32


@njit(cache=True, error_model="numpy")
def f32_of_bits(i):
    """The float32 word (as float64) whose bits are the low 32 bits of the integer word i (see
    the module's note on signalling NaNs)."""
    return np.float64(np.uint32(np.int64(i) & 0xFFFFFFFF).view(np.float32))


@njit(cache=True, error_model="numpy")
def bits_of_f32(x):
    """The int32 word (as float64) whose bits are those of the float32 word x."""
    return np.float64(wrap_i32(np.int64(np.float32(x).view(np.uint32))))


@njit(cache=True, error_model="numpy")
def _pair_before(v, i, w, j):
    """TSORT32's order (pto-isa cpu/TSort32.hpp): value descending, equal values by index."""
    return v > w or (v == w and i < j)


@njit(cache=True, error_model="numpy")
def _put_structure(out, at, v, i, width):
    """Write (v, i) as one structure of `width` words at out[at] (the module's layouts)."""
    out[at] = v
    if width == 2:
        out[at + 1] = f32_of_bits(i)
    else:
        u = np.int64(i) & 0xFFFFFFFF
        out[at + 1] = 0.0
        out[at + 2] = ieee_decode(np.uint64(u & 0xFFFF), 16, 10)
        out[at + 3] = ieee_decode(np.uint64(u >> 16), 16, 10)


@njit(cache=True, error_model="numpy")
def tile_sort(l1, dst, src, idx, src1, src2, src3, tmp, mode, k, k1, k2, rows, cols, dcols, spitch, dpitch):
    """The tile_sort family (isa/44_sort.toml) on float64 words; every source word is read
    before dst is written. mode & 3 picks the instruction; mode & MODE_F16 marks float16 words
    (structures of 4 words, or TGATHER's int32 view of word pairs). mode 0 TSORT32: each run of
    32 values of each row of src (rows of cols words) with idx's words (row pitch k, 0 for one
    index row) insertion-sorted (stable) into structures, 2 or 4 x cols words a row. mode 1
    TMRGSORT: each whole group of 4 blocks of k words of the cols words of src merged by value (a
    later block wins only when strictly greater) into dst at the group's place. mode 2
    TMRGSORT_LISTS: the sorted structures of src, src1, src2 and src3 (k, k1, k2 and
    cols - k - k1 - k2 words) merged into tmp (_merge_lists), then tmp's first dcols words copied
    to dst. mode 3 TGATHER: the words of each row whose column pattern k selects
    (1 P0101, 2 P1010, 3 P0001, 4 P0010, 5 P0100, 6 P1000, 7 P1111), packed into dst one after
    another across rows; with MODE_F16 the same over the row's cols / 2 int32 elements, each two
    half words' bits (low first). Then TO_I32_BITS: each picked float32 word becomes the int32 of
    its bits (bits_of_f32); TO_F32_BITS: each picked int32 word the float32 of its bits
    (f32_of_bits). spitch: TGATHER's src row pitch (<= 0: cols, dense). With AXIS_COL (GATHER_COL)
    TGATHER copies rows: dst row i (dpitch words apart, <= 0: cols) = the cols words of src row
    _gather_row(k, i), for i < rows. With INDEXED (TGATHER_IDX) dst's (i, j) is src's word
    idx(i, j), the rows of both dpitch words apart; an index outside [0, spitch)
    refuses the operation. SCATTER: TSCATTER's forms; GATHER_BLOCKS: TGATHERB's (isa/sort_modes.py). Returns -1, or the
    position i * cols + j of the first index refused (nothing is then written)."""
    op = mode & 3
    if mode & SCATTER:
        return _scatter(l1, dst, src, idx, mode, k, rows, cols, spitch, dpitch)
    if mode & GATHER_BLOCKS:
        return _gather_blocks(l1, dst, src, idx, mode, k, rows, cols, spitch, dpitch)
    if mode & INDEXED:
        return _gather_indexed(l1, dst, src, idx, rows, cols, spitch, dpitch)
    width = STRUCT_BYTES // (2 if mode & MODE_F16 else 4)     # words a structure
    if op == 0:
        out = np.empty(rows * width * cols, np.float64)
        vals = np.empty(32, np.float64)
        ids = np.empty(32, np.float64)
        for r in range(rows):
            for j0 in range(0, cols, 32):
                m = min(32, cols - j0)
                for t in range(m):
                    v, i = l1[src + r * cols + j0 + t], l1[idx + r * k + j0 + t]
                    p = t
                    while p > 0 and _pair_before(v, i, vals[p - 1], ids[p - 1]):
                        vals[p], ids[p] = vals[p - 1], ids[p - 1]
                        p -= 1
                    vals[p], ids[p] = v, i
                for t in range(m):
                    _put_structure(out, r * width * cols + width * (j0 + t), vals[t], ids[t], width)
        for e in range(rows * width * cols):
            l1[dst + e] = out[e]
    elif op == 1:
        group = 4 * k
        n = (cols // group) * group
        out = np.empty(max(n, 1), np.float64)
        for g in range(0, n, group):
            at = np.zeros(4, np.int64)
            for o in range(0, group, width):
                pick = -1
                best = 0.0
                for b in range(4):
                    if at[b] < k:
                        v = l1[src + g + b * k + at[b]]
                        if pick < 0 or v > best:
                            pick, best = b, v
                w = src + g + pick * k + at[pick]
                for q in range(width):
                    out[g + o + q] = l1[w + q]
                at[pick] += width
        for e in range(n):
            l1[dst + e] = out[e]
    elif op == 2:
        _merge_lists(l1, dst, src, src1, src2, src3, tmp, (mode & EXHAUSTED) != 0, k, k1, k2, cols - k - k1 - k2,
                     dcols, width)
    elif mode & AXIS_COL:
        sp, dp = row_pitch(spitch, cols), row_pitch(dpitch, cols)
        out = np.empty(max(rows * cols, 1), np.float64)
        for i in range(rows):
            s0 = src + _gather_row(k, i) * sp
            for c in range(cols):
                w = l1[s0 + c]
                if mode & TO_I32_BITS:
                    w = bits_of_f32(w)
                elif mode & TO_F32_BITS:
                    w = f32_of_bits(w)
                out[i * cols + c] = w
        for i in range(rows):
            for c in range(cols):
                l1[dst + i * dp + c] = out[i * cols + c]
    else:
        out = np.empty(max(rows * cols, 1), np.float64)
        n = 0
        pairs = (mode & MODE_F16) != 0
        sp = row_pitch(spitch, cols)                  # src's row pitch (TGATHER's srcRepeatStride)
        for r in range(rows):
            for c in range(cols // 2 if pairs else cols):
                if _gather_selects(k, c):
                    if pairs:
                        lo = np.int64(ieee_encode(l1[src + r * sp + 2 * c], 16, 10))
                        hi = np.int64(ieee_encode(l1[src + r * sp + 2 * c + 1], 16, 10))
                        w = np.float64(wrap_i32(lo | (hi << 16)))
                    else:
                        w = l1[src + r * sp + c]
                    if mode & TO_I32_BITS:
                        w = bits_of_f32(w)
                    elif mode & TO_F32_BITS:
                        w = f32_of_bits(w)
                    out[n] = w
                    n += 1
        for e in range(n):
            l1[dst + e] = out[e]
    return np.int64(-1)


@njit(cache=True, error_model="numpy")
def _merge_lists(l1, dst, s0, s1, s2, s3, tmp, exhausted, n0, n1, n2, n3, dcols, width):
    """TMRGSORT_LISTS (A2/A3 TMrgSort.hpp): the lists of n0..n3 words at s0..s3 merged by value,
    descending, each step taking the head of the first list whose value no later list's head
    exceeds (cpu/TMrgSort.hpp's strict compare: the lower list wins a tie), into tmp (vmrgsort4);
    with `exhausted`, stopping after the structure that empties its list. Then tmp's first
    dcols words are copied to dst (MovUb2Ub): all sources are read before tmp is written."""
    total = n0 + n1 + n2 + n3
    out = np.empty(max(total, 1), np.float64)
    base = np.array([s0, s1, s2, s3], np.int64)
    size = np.array([n0, n1, n2, n3], np.int64)
    at = np.zeros(4, np.int64)
    o = 0
    while o < total:
        pick = -1
        best = 0.0
        for b in range(4):
            if at[b] < size[b]:
                v = l1[base[b] + at[b]]
                if pick < 0 or v > best:
                    pick, best = b, v
        for q in range(width):
            out[o + q] = l1[base[pick] + at[pick] + q]
        at[pick] += width
        o += width
        if exhausted and at[pick] >= size[pick]:
            break
    for e in range(o):
        l1[tmp + e] = out[e]
    for e in range(dcols):
        l1[dst + e] = l1[tmp + e]


@njit(cache=True, error_model="numpy")
def _first_outside(l1, idx, rows, cols, pitch, bound):
    """The position i * cols + j of the first index of the rows x cols at word idx (rows pitch
    words apart) outside [0, bound), or -1: what TGATHER_IDX and TSCATTER_IDX refuse."""
    for i in range(rows):
        for j in range(cols):
            x = l1[idx + i * pitch + j]
            if not (x >= 0 and x < bound):
                return np.int64(i * cols + j)
    return np.int64(-1)


@njit(cache=True, error_model="numpy")
def _gather_indexed(l1, dst, src, idx, rows, cols, bound, pitch):
    """TGATHER_IDX (tile_sort's INDEXED): every index checked, then dst's (i, j) = l1[src +
    idx(i, j)], both at row pitch `pitch`; -1, or the position of the first index outside
    [0, bound)."""
    ip = dp = row_pitch(pitch, cols)
    bad = _first_outside(l1, idx, rows, cols, ip, bound)
    if bad >= 0:
        return bad
    out = np.empty(max(rows * cols, 1), np.float64)
    for i in range(rows):
        for j in range(cols):
            out[i * cols + j] = l1[src + np.int64(l1[idx + i * ip + j])]
    for i in range(rows):
        for j in range(cols):
            l1[dst + i * dp + j] = out[i * cols + j]
    return np.int64(-1)


_block_words = njit(cache=True)(_block_words_py)


@njit(cache=True, error_model="numpy")
def _gather_blocks(l1, dst, src, idx, mode, k, rows, cols, spitch, dpitch):
    """TGATHERB (tile_sort's GATHER_BLOCKS, isa/sort_modes.py): every byte offset checked (a whole
    32-byte block inside src's spitch words), then dst's row i, block j = the block of src at
    idx(i, j); -1, or the position i * cols + j of the first offset refused."""
    b = _block_words(mode)
    item = BLOCK_BYTES // b
    blocks = cols // b
    for i in range(rows):
        for j in range(blocks):
            x = np.int64(l1[idx + i * k + j])
            if x < 0 or x % BLOCK_BYTES != 0 or x // item + b > spitch:
                return np.int64(i * cols + j)
    out = np.empty(max(rows * blocks * b, 1), np.float64)
    for i in range(rows):
        for j in range(blocks):
            at = src + np.int64(l1[idx + i * k + j]) // item
            for e in range(b):
                out[(i * blocks + j) * b + e] = l1[at + e]
    for i in range(rows):
        for e in range(blocks * b):
            l1[dst + i * dpitch + e] = out[i * blocks * b + e]
    return np.int64(-1)


@njit(cache=True, error_model="numpy")
def _scatter(l1, dst, src, idx, mode, k, rows, cols, spitch, dpitch):
    """TSCATTER (tile_sort's SCATTER, isa/sort_modes.py): dst zeroed, then src's words spread
    over it by the index tile (INDEXED: every index checked against dpitch, dst's words, before
    anything is written; -1 or the first refused position) or by mask pattern k (1..6)."""
    sp = row_pitch(spitch, cols)
    if mode & INDEXED:
        ip = row_pitch(k, cols)
        bad = _first_outside(l1, idx, rows, cols, ip, dpitch)
        if bad >= 0:
            return bad
        for e in range(dpitch):
            l1[dst + e] = 0.0
        for i in range(rows):
            for j in range(cols):
                l1[dst + np.int64(l1[idx + i * ip + j])] = l1[src + i * sp + j]
        return np.int64(-1)
    dp = row_pitch(dpitch, cols)
    times = _gather_row(k, 1) - _gather_row(k, 0)    # the pattern's period (P1111 is a TMOV_V2V)
    for e in range((rows * times if mode & AXIS_COL else rows) * dp):
        l1[dst + e] = 0.0
    for i in range(rows):
        for j in range(cols):
            if mode & AXIS_COL:
                l1[dst + _gather_row(k, i) * dp + j] = l1[src + i * sp + j]
            else:
                l1[dst + i * dp + _gather_row(k, j)] = l1[src + i * sp + j]
    return np.int64(-1)


@njit(cache=True, error_model="numpy")
def _gather_row(pattern, i):
    """The row of the i-th pick of MaskPattern `pattern` (GetStrideByMask, constants.hpp: P0101
    2i, P1010 2i + 1, P0001 .. P1000 4i + 0 .. 3, P1111 i)."""
    if pattern == 1 or pattern == 2:
        return 2 * i + pattern - 1
    if 3 <= pattern <= 6:
        return 4 * i + pattern - 3
    return i


@njit(cache=True, error_model="numpy")
def _gather_selects(pattern, c):
    """Whether MaskPattern `pattern` (1..7, P0101 .. P1111) selects column c (cpu/TGather.hpp
    MaskSelect)."""
    if pattern == 1:
        return c % 2 == 0
    if pattern == 2:
        return c % 2 == 1
    if 3 <= pattern <= 6:
        return c % 4 == pattern - 3
    return True
