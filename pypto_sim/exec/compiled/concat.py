"""The concatenation family's kernel (TCONCAT; isa/49_concat.toml): A2/A3's TConcat.hpp
TConcatImpl, row by row. The replay's generated family dispatch calls it (exec/family_source.py)."""
import numpy as np
from numba import njit

from .isa_constants import ITEMSIZE


@njit(cache=True, error_model="numpy")
def tile_concat(l1, dst, src0, src1, rows, cols, c0, dpitch, s0pitch, s1pitch, dt):
    """dst's rows x cols: src0's first c0 columns, rounded up to whole 32-byte blocks (its
    words past c0 in the last block come along, as copy_ubuf_to_ubuf moves blocks), then src1's
    cols - c0 columns at column c0, rounded up to whole blocks too when c0 is a whole number
    of blocks (else exactly those, as the scalar loop copies). Every source word is read
    before dst is written."""
    per_block = 32 // ITEMSIZE[dt]
    c1 = cols - c0
    n0 = -(-c0 // per_block) * per_block
    n1 = -(-c1 // per_block) * per_block if c0 % per_block == 0 else c1
    first = np.empty(rows * n0, np.float64)
    second = np.empty(rows * n1, np.float64)
    for r in range(rows):
        first[r * n0:(r + 1) * n0] = l1[src0 + r * s0pitch:src0 + r * s0pitch + n0]
        second[r * n1:(r + 1) * n1] = l1[src1 + r * s1pitch:src1 + r * s1pitch + n1]
    for r in range(rows):
        l1[dst + r * dpitch:dst + r * dpitch + n0] = first[r * n0:(r + 1) * n0]
        l1[dst + r * dpitch + c0:dst + r * dpitch + c0 + n1] = second[r * n1:(r + 1) * n1]
