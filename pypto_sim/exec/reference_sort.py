"""The tile_sort family's numpy kernel (TSORT32, TMRGSORT, TMRGSORT_LISTS, TGATHER, TGATHER_IDX,
TSCATTER*: isa/44_sort.toml), the reference executor's twin of exec/compiled/sort.py, written
to be obviously correct; reference_tiles.py lists it with the other tile kernels."""
from __future__ import annotations

import numpy as np

from ..isa.sort_modes import (AXIS_COL, BLOCK_BYTES, EXHAUSTED, GATHER_BLOCKS, INDEXED, MODE_F16, SCATTER,
                              STRUCT_BYTES, TO_F32_BITS, TO_I32_BITS, block_words)
from ..isa.tile_roles import gather_picks, gather_selects
from .reference_values import word_pitch, words_grid


def _gather_mask(pattern, cols):
    """The columns MaskPattern code `pattern` selects (isa.tile_roles.gather_selects)."""
    return np.array([gather_selects(pattern, c) for c in range(cols)], bool)


def _merge(lists, exhausted=False):
    """Merge sorted lists of (value, index) pairs: each step takes the head of the first list
    whose value no earlier list's head exceeds (TMrgSort.hpp's strict compare); with exhausted,
    the merge stops after the pair that empties its list."""
    at, out = [0] * len(lists), []
    while True:
        live = [b for b in range(len(lists)) if at[b] < len(lists[b])]
        if not live:
            return np.array(out, np.float64).ravel()
        best = live[0]
        for b in live[1:]:
            if lists[b][at[b]][0] > lists[best][at[best]][0]:
                best = b
        out.append(lists[best][at[best]])
        at[best] += 1
        if exhausted and at[best] == len(lists[best]):
            return np.array(out, np.float64).ravel()


def _f32_of_bits(words):
    """The float32 words (as float64) whose bits are the low 32 bits of the integer words: a
    signalling NaN pattern comes back quiet (bit 22 set), as the float32 -> float64 conversion
    makes it (exec/compiled/sort.py's module note)."""
    u = np.asarray(np.asarray(words, np.float64).astype(np.int64) & 0xFFFFFFFF, np.uint32)
    with np.errstate(invalid="ignore"):
        return u.view(np.float32).astype(np.float64)


def bits_of_f32(words):
    """The int32 words (as float64) whose bits are those of the float32 words."""
    with np.errstate(invalid="ignore"):
        return np.asarray(words, np.float64).astype(np.float32).view(np.int32).astype(np.float64)


def _structure(v, i, width):
    """(v, i) as one structure of `width` words: float32 (v, then the float32 whose bits are
    i's), or float16 (v, 0, then the float16 words whose bits are i's low and high 16 bits)."""
    if width == 2:
        return [v, float(_f32_of_bits([i])[0])]
    u = np.array([int(i) & 0xFFFFFFFF], np.uint32).view(np.uint16)       # little end first
    return [v, 0.0, *u.view(np.float16).astype(np.float64)]


def _int32_of_halves(words):
    """The int32 elements of float16 words read as their bits, two words (low first) each."""
    return np.asarray(words, np.float64).astype(np.float16).view(np.int32).astype(np.float64)


def _first_outside(index, bound) -> int:
    """The flat position of the first of the index grid's words outside [0, bound), or -1."""
    bad = np.flatnonzero(~((index >= 0) & (index < bound)))
    return int(bad[0]) if len(bad) else -1


def tile_sort(l1, dst, src, idx, src1, src2, src3, tmp, mode, k, k1, k2, rows, cols, dcols, spitch, dpitch):
    """The tile_sort family (isa/44_sort.toml) in numpy: TSORT32 (mode & 3 == 0) by an insertion
    sort on (value descending, index ascending), which places a NaN where it arrives (nothing
    compares before or after it); TMRGSORT (1) by _merge, TMRGSORT_LISTS (2) by _merge of its four
    lists (k, k1, k2, cols - k - k1 - k2 words) into tmp, whose first dcols words dst gets; TGATHER (3) by a
    boolean mask over src's rows spitch words apart (<= 0: cols), or with AXIS_COL the rows the
    pattern picks into dst's rows dpitch apart, or with INDEXED (TGATHER_IDX) src's words the
    index tile names, or with GATHER_BLOCKS (TGATHERB) src's 32-byte blocks at the offsets' bytes; the
    other mode bits as isa/sort_modes.py states them. Every source word is
    read before dst is written. Returns -1, or the position of the first index INDEXED refuses."""
    op, width = mode & 3, STRUCT_BYTES // (2 if mode & MODE_F16 else 4)
    if mode & SCATTER:
        return _scatter(l1, dst, src, idx, mode, k, rows, cols, spitch, dpitch)
    if mode & GATHER_BLOCKS:
        return _gather_blocks(l1, dst, src, idx, mode, k, rows, cols, spitch, dpitch)
    if mode & INDEXED:
        index = words_grid(l1, idx, rows, cols, dpitch)       # dst and the indices: one row pitch
        bad = _first_outside(index, spitch)
        if bad >= 0:
            return bad
        picked = l1[src + index.astype(np.int64)]
        dp = word_pitch(dpitch, cols)
        for i in range(rows):
            l1[dst + i * dp:dst + i * dp + cols] = picked[i]
        return -1
    if op == 0:
        out = []
        for r in range(rows):
            v, i = l1[src + r * cols:src + (r + 1) * cols], l1[idx + r * k:idx + r * k + cols]
            for j0 in range(0, cols, 32):
                run = []                 # insertion sort: a stable sort that defines NaN's place
                for p in zip(v[j0:j0 + 32], i[j0:j0 + 32]):
                    at = len(run)
                    while at and (p[0] > run[at - 1][0] or (p[0] == run[at - 1][0] and p[1] < run[at - 1][1])):
                        at -= 1
                    run.insert(at, p)
                out.extend(x for p in run for x in _structure(p[0], p[1], width))
        l1[dst:dst + len(out)] = out
    elif op == 1:
        n = cols // (4 * k) * (4 * k)
        structs = l1[src:src + n].reshape(-1, width)
        per = k // width
        out = [_merge([structs[g + b * per:g + (b + 1) * per] for b in range(4)])
               for g in range(0, len(structs), 4 * per)]
        if out:
            l1[dst:dst + n] = np.concatenate(out)
    elif op == 2:
        sizes = (k, k1, k2, cols - k - k1 - k2)
        lists = [l1[at:at + n].reshape(-1, width) for at, n in zip((src, src1, src2, src3), sizes) if n > 0]
        out = _merge(lists, bool(mode & EXHAUSTED))
        l1[tmp:tmp + len(out)] = out
        l1[dst:dst + dcols] = l1[tmp:tmp + dcols].copy()
    elif mode & AXIS_COL:
        times = gather_picks(k)
        offset = next(r for r in range(times) if gather_selects(k, r))
        grid = words_grid(l1, src, rows * times, cols, spitch)[offset::times].ravel().copy()
        if mode & TO_I32_BITS:
            grid = bits_of_f32(grid)
        elif mode & TO_F32_BITS:
            grid = _f32_of_bits(grid)
        dp = word_pitch(dpitch, cols)
        for i in range(rows):
            l1[dst + i * dp:dst + i * dp + cols] = grid[i * cols:(i + 1) * cols]
    else:
        grid = words_grid(l1, src, rows, cols, spitch)
        if mode & MODE_F16:
            grid = _int32_of_halves(grid.ravel()).reshape(rows, cols // 2)
        out = grid[:, _gather_mask(k, grid.shape[1])].ravel().copy()
        if mode & TO_I32_BITS:
            out = bits_of_f32(out)
        elif mode & TO_F32_BITS:
            out = _f32_of_bits(out)
        l1[dst:dst + len(out)] = out
    return -1


def _scatter(l1, dst, src, idx, mode, k, rows, cols, spitch, dpitch):
    """TSCATTER's forms (isa/sort_modes.py SCATTER) in numpy: src's grid read, dst zeroed, the
    grid written where the indices or the pattern (1..6) put it."""
    grid = words_grid(l1, src, rows, cols, spitch)
    if mode & INDEXED:
        index = words_grid(l1, idx, rows, cols, k)
        bad = _first_outside(index, dpitch)
        if bad >= 0:
            return bad
        l1[dst:dst + dpitch] = 0.0
        for i, j in np.ndindex(rows, cols):            # in order: the last write wins
            l1[dst + int(index[i, j])] = grid[i, j]
        return -1
    dp = word_pitch(dpitch, cols)
    times = gather_picks(k)
    offset = next(c for c in range(times) if gather_selects(k, c))
    l1[dst:dst + (rows * times if mode & AXIS_COL else rows) * dp] = 0.0
    for i in range(rows):
        if mode & AXIS_COL:
            at = dst + (times * i + offset) * dp
            l1[at:at + cols] = grid[i]
        else:
            l1[dst + i * dp + offset:dst + i * dp + offset + times * cols:times] = grid[i]
    return -1


def _gather_blocks(l1, dst, src, idx, mode, k, rows, cols, spitch, dpitch):
    """TGATHERB (GATHER_BLOCKS, isa/sort_modes.py) in numpy: the offsets' grid checked (each a
    whole 32-byte block inside src's spitch words), then each row's blocks read and written."""
    b = block_words(mode)
    item, blocks = BLOCK_BYTES // b, cols // b
    offsets = words_grid(l1, idx, rows, blocks, k).astype(np.int64)
    bad = np.flatnonzero(((offsets < 0) | (offsets % BLOCK_BYTES != 0) | (offsets // item + b > spitch)).ravel())
    if len(bad):
        row, col = divmod(int(bad[0]), blocks)
        return row * cols + col
    picked = l1[src + (offsets // item)[:, :, None] + np.arange(b)].reshape(rows, blocks * b)
    for i in range(rows):
        l1[dst + i * dpitch:dst + i * dpitch + blocks * b] = picked[i]
    return -1
