"""The numpy twins of exec/compiled/concat.py's kernels: tile_concat (TCONCAT) and
tile_concat_idx (TCONCAT_IDX, TCONCAT_DSTIDX; isa/49_concat.toml: A2/A3's TConcat.hpp
TConcatIdx, lines 108-181, row by row). reference_tiles.py imports them into TILE_KERNELS."""
from __future__ import annotations

from .. import dtypes


def _wrap(x: int, idt: int) -> int:
    """x as the index dtype idt holds it (two's complement or unsigned)."""
    d = dtypes.BY_CODE[int(idt)]
    bits = 8 * d.itemsize
    x &= (1 << bits) - 1
    if d.encoding == "int" and x >= 1 << (bits - 1):
        x -= 1 << bits
    return x


def _moved(n: int, item: int, per_repeat: int) -> int:
    """The elements the two vcopies of a count n > 0 move (lines 148-160): n's repeats but the
    last whole, the last under SetContinuousMask(ceil(n * item / copy item)), at most a repeat."""
    ce = 4 if item == 4 else 2
    reps = -(-n // per_repeat)
    return (reps - 1) * per_repeat + min(-(-(n * item) // ce) * ce, 256) // item


def _count(l1, at, idt) -> int:
    """Line 136: the index word / sizeof(idxType), unsigned (a negative word is a huge count)."""
    return (int(l1[at]) // dtypes.BY_CODE[int(idt)].itemsize) % (1 << 32)


def tile_concat_idx(l1, dst, src0, src1, dst_idx, src0_idx, src1_idx, rows, cols, dpitch, s0pitch, s1pitch,
                    dipitch, i0pitch, i1pitch, idt, dt):
    """TCONCAT_IDX / TCONCAT_DSTIDX (dst_idx -1 without it). Returns -1, or before writing
    anything the first row's fault: 2 * row + (0 src0, 1 src1) for a count of 0 a vcopy would
    take as repeat 0 - 1, 2 * (rows + row) + side for a vcopy reaching past dst's row or the
    source's (exec/compiled/concat.py's)."""
    item = dtypes.BY_CODE[int(dt)].itemsize
    per_block, per_repeat = 32 // item, 256 // item
    counts = [(_count(l1, src0_idx + r * i0pitch, idt), _count(l1, src1_idx + r * i1pitch, idt))
              for r in range(rows)]
    for r, (a, b) in enumerate(counts):
        n0 = min(a, cols)
        if n0 == 0:
            return 2 * r
        if min(b, cols - n0) == 0 and n0 % per_block == 0:
            return 2 * r + 1
        k0, k1 = _moved(n0, item, per_repeat), _moved(min(b, cols - n0), item, per_repeat)
        if k0 > dpitch or k0 > s0pitch:
            return 2 * (rows + r)
        if n0 % per_block == 0 and (n0 + k1 > dpitch or k1 > s1pitch):
            return 2 * (rows + r) + 1
    for r in range(rows):
        a = _count(l1, src0_idx + r * i0pitch, idt)
        b = _count(l1, src1_idx + r * i1pitch, idt)
        if dst_idx >= 0:
            t, w = _wrap((a + b) % (1 << 32), idt), _wrap(cols, idt)
            l1[dst_idx + r * dipitch] = _wrap(min(t, w) * dtypes.BY_CODE[int(idt)].itemsize, idt)
        n0 = min(a, cols)
        n1 = min(b, cols - n0)
        d = dst + r * dpitch
        k0 = _moved(n0, item, per_repeat)
        l1[d:d + k0] = l1[src0 + r * s0pitch:src0 + r * s0pitch + k0].copy()
        if n0 % per_block == 0:
            k1 = _moved(n1, item, per_repeat)
            l1[d + n0:d + n0 + k1] = l1[src1 + r * s1pitch:src1 + r * s1pitch + k1].copy()
        else:
            for j in range(n1):
                l1[d + n0 + j] = l1[src1 + r * s1pitch + j]
    return -1


def tile_concat(l1, dst, src0, src1, rows, cols, c0, dpitch, s0pitch, s1pitch, dt):
    """TCONCAT in TConcatImpl's order: every row's src0 copy (its first c0 columns in whole
    32-byte blocks), then every row's src1 copy of cols - c0 at column c0, in whole blocks when
    c0 is a whole number of them, else element by element; a source sharing dst's words reads
    what the earlier copies wrote."""
    per_block = 32 // dtypes.BY_CODE[int(dt)].itemsize
    n0 = -(-c0 // per_block) * per_block
    whole = c0 % per_block == 0
    n1 = -(-(cols - c0) // per_block) * per_block if whole else cols - c0
    for r in range(rows):
        l1[dst + r * dpitch: dst + r * dpitch + n0] = l1[src0 + r * s0pitch: src0 + r * s0pitch + n0].copy()
    for r in range(rows):
        if whole:
            l1[dst + r * dpitch + c0: dst + r * dpitch + c0 + n1] = \
                l1[src1 + r * s1pitch: src1 + r * s1pitch + n1].copy()
        else:
            for j in range(n1):
                l1[dst + r * dpitch + c0 + j] = l1[src1 + r * s1pitch + j]
