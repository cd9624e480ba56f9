"""The tile_sort family's value kernel (TSORT32, TMRGSORT, TMRGSORT_LISTS, TGATHER), beside the
other tile kernels (tiles.py).
"""
import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy")
def _pair_before(v, i, w, j):
    """TSORT32's order (pto-isa cpu/TSort32.hpp): value descending, equal values by index."""
    return v > w or (v == w and i < j)


@njit(cache=True, error_model="numpy")
def tile_sort(l1, dst, src, idx, src1, mode, k, rows, cols):
    """The tile_sort family (isa/44_sort.toml) on float64 words; every source word is read
    before dst is written. mode 0 TSORT32: each run of 32 words of each row of src (rows of
    cols words) with idx's words (row pitch k, 0 for one index row) insertion-sorted (stable)
    into (value, index) pairs, 2 x cols words a row. mode 1 TMRGSORT: each whole group of 4
    blocks of k words of the cols words of src merged by value (a later block wins only when
    strictly greater) into dst at the group's place. mode 2 TMRGSORT_LISTS: the sorted pairs of
    src (k words) and src1 (cols - k) merged into dst, src first on ties. mode 3 TGATHER: the
    words of each row whose column pattern k selects (1 P0101, 2 P1010, 3 P0001, 4 P0010,
    5 P0100, 6 P1000, 7 P1111), packed into dst one after another across rows."""
    if mode == 0:
        out = np.empty(rows * 2 * cols, np.float64)
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
                    out[r * 2 * cols + 2 * (j0 + t)] = vals[t]
                    out[r * 2 * cols + 2 * (j0 + t) + 1] = ids[t]
        for e in range(rows * 2 * cols):
            l1[dst + e] = out[e]
    elif mode == 1:
        group = 4 * k
        n = (cols // group) * group
        out = np.empty(max(n, 1), np.float64)
        for g in range(0, n, group):
            at = np.zeros(4, np.int64)
            for o in range(0, group, 2):
                pick = -1
                best = 0.0
                for b in range(4):
                    if at[b] < k:
                        v = l1[src + g + b * k + at[b]]
                        if pick < 0 or v > best:
                            pick, best = b, v
                w = src + g + pick * k + at[pick]
                out[g + o], out[g + o + 1] = l1[w], l1[w + 1]
                at[pick] += 2
        for e in range(n):
            l1[dst + e] = out[e]
    elif mode == 2:
        out = np.empty(max(cols, 1), np.float64)
        a, b = 0, 0
        for o in range(0, cols, 2):
            if b >= cols - k or (a < k and not l1[src1 + b] > l1[src + a]):
                out[o], out[o + 1] = l1[src + a], l1[src + a + 1]
                a += 2
            else:
                out[o], out[o + 1] = l1[src1 + b], l1[src1 + b + 1]
                b += 2
        for e in range(cols):
            l1[dst + e] = out[e]
    else:
        out = np.empty(max(rows * cols, 1), np.float64)
        n = 0
        for r in range(rows):
            for c in range(cols):
                if _gather_selects(k, c):
                    out[n] = l1[src + r * cols + c]
                    n += 1
        for e in range(n):
            l1[dst + e] = out[e]


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
