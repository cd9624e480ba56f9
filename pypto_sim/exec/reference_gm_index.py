"""The reference executor's indexed GM transfers: the numpy twins of exec/compiled/gm_index.py
(MGATHER, MGATHER_ELEM, MSCATTER, MSCATTER_ELEM; isa/54_gm_index.toml), with the same names,
signatures and effects, over the reference's GM copies (reference_tiles.gm_gather and
gm_scatter_mode) and isa/gm_index_modes.remap."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..isa import store_modes
from ..isa.gm_index_modes import UNDEFINED, remap
from .reference_tiles import gm_gather, gm_scatter_mode


def _used(word, cap, oob):
    """The index a transfer uses for index word `word`, or None when it drops it."""
    u, moves = remap(int(word), int(cap), int(oob))
    return u if moves else None


def gm_index_fault(idx, n, cap, oob):
    """The position of the first of the n index words idx whose uint32 value is at or past cap
    when oob is UNDEFINED, else -1."""
    if oob != UNDEFINED:
        return -1
    over = [e for e in range(n) if (int(idx[e]) & 0xFFFFFFFF) >= cap]
    return over[0] if over else -1


def gm_index_gather(out, idx, hbm, table, rows, cols, size, stride, oob, elem, dt):
    """MGATHER's read of GM into out: row idx[r] of the table as out's row r (elem 0), or
    element idx[e] as out[e] (elem 1); a dropped index gives zeros."""
    item = dtypes.BY_CODE[int(dt)].itemsize
    runs, run, pitch = (rows * cols, 1, 1) if elem else (rows, cols, stride)
    for k in range(runs):
        u = _used(idx[k], size, oob)
        piece = np.zeros(run)
        if u is not None:
            gm_gather(piece, hbm, table + u * pitch * item, pitch, 1, run, dt)
        out[k * run:(k + 1) * run] = piece


def gm_index_scatter(hbm, table, vals, idx, rows, cols, size, stride, oob, elem, atomic, dt):
    """MSCATTER's write of GM in index order: vals' row r to row idx[r] (elem 0), or vals[e]
    to element idx[e] (elem 1); a dropped index writes nothing; atomic 1 adds in dtype dt."""
    item = dtypes.BY_CODE[int(dt)].itemsize
    mode = store_modes.ATOMIC_ADD if atomic else 0
    runs, run, pitch = (rows * cols, 1, 1) if elem else (rows, cols, stride)
    for k in range(runs):
        u = _used(idx[k], size, oob)
        if u is not None:
            gm_scatter_mode(hbm, table + u * pitch * item, pitch, np.array(vals[k * run:(k + 1) * run], np.float64),
                            1, run, dt, mode)


GM_INDEX_KERNELS = {"tile_gm_gather": gm_index_gather, "tile_gm_scatter": gm_index_scatter}
