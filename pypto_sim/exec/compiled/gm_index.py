"""The indexed GM transfers' value kernels (isa/54_gm_index.toml MGATHER, MGATHER_ELEM, MSCATTER,
MSCATTER_ELEM; A2/A3 include/pto/npu/a2a3/MGather.hpp, MScatter.hpp): an index tile's words
(read as uint32) pick rows or elements of a GM table, remapped by the oob policy
(isa/gm_index_modes.py), through the GM copies of tiles.py. exec/gm_index_ops.py calls them
for both timing engines' decode; exec/reference_gm_index.py holds their numpy twins.
"""
import numpy as np
from numba import njit

from .isa_constants import ITEMSIZE
from .gm_copy import gm_gather, gm_scatter_mode
from ...isa.gm_index_modes import UNDEFINED, remap as _remap_py
from ...isa.store_modes import ATOMIC_ADD as STORE_ATOMIC_ADD

_policy = njit(cache=True)(_remap_py)


@njit(cache=True, error_model="numpy")
def _remap(word, cap, oob):
    """mgather_remap / mscatter_remap of the index word against cap (isa/gm_index_modes.remap,
    the one statement of the policies): the index used, or -1 when the policy drops it."""
    u, moves = _policy(word, cap, oob)
    return np.int64(u) if moves else np.int64(-1)


@njit(cache=True, error_model="numpy")
def gm_index_fault(idx, n, cap, oob):
    """The position of the first of the n index words idx whose uint32 value is at or past cap
    when oob is UNDEFINED (the device would read or write past the table), else -1."""
    if oob != UNDEFINED:
        return np.int64(-1)
    for e in range(n):
        if (np.int64(idx[e]) & 0xFFFFFFFF) >= cap:
            return np.int64(e)
    return np.int64(-1)


@njit(cache=True, error_model="numpy")
def gm_index_gather(out, idx, hbm, table, rows, cols, size, stride, oob, elem, dt):
    """MGATHER's read of GM into out (rows x cols, row-major), the table's element 0 at byte
    table: elem 0 (Coalesce::Row) takes row idx[r] (stride elements apart) as out's row r,
    elem 1 (Coalesce::Elem) element idx[e] as out[e]; a dropped index (GatherOOB::Zero) gives
    zeros. size is the table's rows (Row) or elements (Elem), the cap of the oob policy."""
    item = ITEMSIZE[dt]
    if elem != 0:
        for e in range(rows * cols):
            u = _remap(idx[e], size, oob)
            if u < 0:
                out[e] = 0.0
            else:
                gm_gather(out[e:e + 1], hbm, table + u * item, 1, 1, 1, dt)
        return
    for r in range(rows):
        u = _remap(idx[r], size, oob)
        if u < 0:
            out[r * cols:(r + 1) * cols] = 0.0
        else:
            gm_gather(out[r * cols:(r + 1) * cols], hbm, table + u * stride * item, stride, 1, cols, dt)


@njit(cache=True, error_model="numpy")
def gm_index_scatter(hbm, table, vals, idx, rows, cols, size, stride, oob, elem, atomic, dt):
    """MSCATTER's write of GM: vals (rows x cols, row-major) to the table (element 0 at byte
    table) in index order, so a repeated index keeps its last value: elem 0 (Coalesce::Row)
    row r to row idx[r] (rows stride elements apart), elem 1 (Coalesce::Elem) vals[e] to element
    idx[e]; a dropped index (ScatterOOB::Skip) writes nothing; atomic 1 adds each value to GM's
    in dtype dt (gm_scatter_mode's ATOMIC_ADD: floats rounded to dt, integers wrapping)."""
    item = ITEMSIZE[dt]
    mode = STORE_ATOMIC_ADD if atomic != 0 else 0
    if elem != 0:
        for e in range(rows * cols):
            u = _remap(idx[e], size, oob)
            if u >= 0:
                gm_scatter_mode(hbm, table + u * item, 1, vals[e:e + 1], 1, 1, dt, mode)
        return
    for r in range(rows):
        u = _remap(idx[r], size, oob)
        if u >= 0:
            gm_scatter_mode(hbm, table + u * stride * item, stride, vals[r * cols:(r + 1) * cols], 1, cols, dt,
                            mode)
