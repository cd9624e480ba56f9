"""The concatenation families' kernels (TCONCAT, TCONCAT_IDX, TCONCAT_DSTIDX; isa/49_concat.toml):
A2/A3's TConcat.hpp TConcatImpl and TConcatIdx, row by row. The replay's generated family dispatch
calls them (exec/family_source.py)."""
from numba import njit

from .isa_constants import GM_KIND, ITEMSIZE


@njit(cache=True, error_model="numpy")
def tile_concat(l1, dst, src0, src1, rows, cols, c0, dpitch, s0pitch, s1pitch, dt):
    """dst's rows x cols in TConcatImpl's order: every row's copy of src0's first c0 columns,
    rounded up to whole 32-byte blocks (its words past c0 in the last block come along, as
    copy_ubuf_to_ubuf moves blocks), then every row's cols - c0 columns of src1 at column c0,
    rounded up to whole blocks too when c0 is a whole number of them, else element by element
    (the scalar loop). A source that shares words with dst reads what the copies before wrote."""
    per_block = 32 // ITEMSIZE[dt]
    c1 = cols - c0
    n0 = -(-c0 // per_block) * per_block
    whole = c0 % per_block == 0
    n1 = -(-c1 // per_block) * per_block if whole else c1
    for r in range(rows):
        row = l1[src0 + r * s0pitch:src0 + r * s0pitch + n0].copy()
        l1[dst + r * dpitch:dst + r * dpitch + n0] = row
    for r in range(rows):
        if whole:
            row = l1[src1 + r * s1pitch:src1 + r * s1pitch + n1].copy()
            l1[dst + r * dpitch + c0:dst + r * dpitch + c0 + n1] = row
        else:
            for j in range(n1):
                l1[dst + r * dpitch + c0 + j] = l1[src1 + r * s1pitch + j]


@njit(cache=True)
def _wrap(x, idt):
    """x as the index dtype idt holds it (two's complement or unsigned, ITEMSIZE[idt] bytes)."""
    bits = 8 * ITEMSIZE[idt]
    x = x & ((1 << bits) - 1)
    if GM_KIND[idt] == 1 and x >= (1 << (bits - 1)):
        x -= 1 << bits
    return x


@njit(cache=True)
def _moved(n, item, per_repeat):
    """The elements TConcatIdx's two vcopies move for a count n > 0: n's repeats but the last
    whole, the last under SetContinuousMask(ceil(n * item / copy item)) in 16-bit (1- and
    2-byte data) or 32-bit copy elements, at most a repeat's."""
    ce = 4 if item == 4 else 2
    reps = -(-n // per_repeat)
    return (reps - 1) * per_repeat + min(-(-(n * item) // ce) * ce, 256) // item


@njit(cache=True)
def _counts(l1, at, idt):
    """A count of TConcatIdx line 136: the index word / sizeof(idxType), as an unsigned."""
    return (int(l1[at]) // ITEMSIZE[idt]) % (1 << 32)


@njit(cache=True, error_model="numpy")
def tile_concat_idx(l1, dst, src0, src1, dst_idx, src0_idx, src1_idx, rows, cols, dpitch, s0pitch, s1pitch,
                    dipitch, i0pitch, i1pitch, idt, dt):
    """TCONCAT_IDX / TCONCAT_DSTIDX (dst_idx -1 without it): A2/A3's TConcatIdx row by row. Returns
    -1, or before writing anything the fault of the first row that has one: 2 * row + (0 src0,
    1 src1) for a count of 0 a vcopy would take as repeat 0 - 1 (src0's, or src1's when n0 is a
    whole number of blocks), 2 * (rows + row) + side for a vcopy whose whole repeats reach past
    dst's row or the source's (a count past one repeat: the last repeat's mask is the count)."""
    item = ITEMSIZE[dt]
    per_block, per_repeat = 32 // item, 256 // item
    for r in range(rows):
        n0 = min(_counts(l1, src0_idx + r * i0pitch, idt), cols)
        n1 = min(_counts(l1, src1_idx + r * i1pitch, idt), cols - n0)
        if n0 == 0:
            return 2 * r
        if n1 == 0 and n0 % per_block == 0:
            return 2 * r + 1
        k0 = _moved(n0, item, per_repeat)
        if k0 > dpitch or k0 > s0pitch:
            return 2 * (rows + r)
        if n0 % per_block == 0 and (n0 + _moved(n1, item, per_repeat) > dpitch
                                    or _moved(n1, item, per_repeat) > s1pitch):
            return 2 * (rows + r) + 1
    for r in range(rows):
        a = _counts(l1, src0_idx + r * i0pitch, idt)
        b = _counts(l1, src1_idx + r * i1pitch, idt)
        if dst_idx >= 0:
            t, w = _wrap((a + b) % (1 << 32), idt), _wrap(cols, idt)
            l1[dst_idx + r * dipitch] = _wrap((t if t < w else w) * ITEMSIZE[idt], idt)
        n0 = min(a, cols)
        n1 = min(b, cols - n0)
        k0 = _moved(n0, item, per_repeat)
        row = l1[src0 + r * s0pitch:src0 + r * s0pitch + k0].copy()
        l1[dst + r * dpitch:dst + r * dpitch + k0] = row
        if n0 % per_block == 0:
            k1 = _moved(n1, item, per_repeat)
            row = l1[src1 + r * s1pitch:src1 + r * s1pitch + k1].copy()
            l1[dst + r * dpitch + n0:dst + r * dpitch + n0 + k1] = row
        else:
            for j in range(n1):
                l1[dst + r * dpitch + n0 + j] = l1[src1 + r * s1pitch + j]
    return -1
