"""The concatenation family's kernel (TCONCAT; isa/49_concat.toml): A2/A3's TConcat.hpp
TConcatImpl, row by row. The replay's generated family dispatch calls it (exec/family_source.py)."""
from numba import njit

from .isa_constants import ITEMSIZE


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
