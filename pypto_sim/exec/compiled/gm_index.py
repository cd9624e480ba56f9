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
def _element(u, tcols, tpitch, c0):
    """The GM element (from the table's element 0) of the table's element u: u itself in an ND
    table (tcols 0), else logical (u // tcols, u % tcols) of an NZ table tcols wide, its c0-wide
    column blocks tpitch elements apart (MGatherNZGmOffset / MScatterNZGmOffset)."""
    if tcols == 0:
        return u
    r = u // tcols
    c = u - r * tcols
    return (c // c0) * tpitch + r * c0 + c % c0


@njit(cache=True, error_model="numpy")
def gm_index_gather(out, idx, hbm, table, rows, cols, size, stride, oob, elem, tcols, tpitch, dt):
    """MGATHER's read of GM into out (rows x cols, row-major), the table's element 0 at byte
    table: elem 0 (Coalesce::Row) takes row idx[r] (stride elements apart) as out's row r,
    elem 1 (Coalesce::Elem) element idx[e] as out[e]; a dropped index (GatherOOB::Zero) gives
    zeros. size is the table's rows (Row) or elements (Elem), the cap of the oob policy.
    tcols > 0: an NZ table of tcols columns (tpitch: _element); a row (stride c0 elements
    after the last) is then cols / c0 runs of c0, tpitch apart."""
    item = ITEMSIZE[dt]
    c0 = 32 // item
    if elem != 0:
        for e in range(rows * cols):
            u = _remap(idx[e], size, oob)
            if u < 0:
                out[e] = 0.0
            else:
                gm_gather(out[e:e + 1], hbm, table + _element(u, tcols, tpitch, c0) * item, 1, 1, 1, dt)
        return
    runs, run, pitch = (cols // c0, c0, tpitch) if tcols > 0 else (1, cols, stride)
    for r in range(rows):
        u = _remap(idx[r], size, oob)
        if u < 0:
            out[r * cols:(r + 1) * cols] = 0.0
        else:
            gm_gather(out[r * cols:(r + 1) * cols], hbm, table + u * stride * item, pitch, runs, run, dt)


@njit(cache=True, error_model="numpy")
def gm_index_scatter(hbm, table, vals, idx, rows, cols, size, stride, oob, elem, atomic, tcols, tpitch, dt):
    """MSCATTER's write of GM: vals (rows x cols, row-major) to the table (element 0 at byte
    table) in index order, so a repeated index keeps its last value: elem 0 (Coalesce::Row)
    row r to row idx[r] (rows stride elements apart), elem 1 (Coalesce::Elem) vals[e] to element
    idx[e]; a dropped index (ScatterOOB::Skip) writes nothing; atomic 1 adds each value to GM's
    in dtype dt (gm_scatter_mode's ATOMIC_ADD: floats rounded to dt, integers wrapping). tcols
    > 0: an NZ table, as gm_index_gather's."""
    item = ITEMSIZE[dt]
    c0 = 32 // item
    mode = STORE_ATOMIC_ADD if atomic != 0 else 0
    if elem != 0:
        for e in range(rows * cols):
            u = _remap(idx[e], size, oob)
            if u >= 0:
                gm_scatter_mode(hbm, table + _element(u, tcols, tpitch, c0) * item, 1, vals[e:e + 1], 1, 1, dt,
                                mode)
        return
    runs, run, pitch = (cols // c0, c0, tpitch) if tcols > 0 else (1, cols, stride)
    for r in range(rows):
        u = _remap(idx[r], size, oob)
        if u >= 0:
            gm_scatter_mode(hbm, table + u * stride * item, pitch, vals[r * cols:(r + 1) * cols], runs, run, dt,
                            mode)
