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


def _element(u, tcols, tpitch, c0):
    """The GM element of the table's element u: u (ND, tcols 0), or NZ logical (u // tcols,
    u % tcols) at (c // c0) * tpitch + r * c0 + c % c0."""
    if not tcols:
        return u
    r, c = divmod(u, tcols)
    return (c // c0) * tpitch + r * c0 + c % c0


def _runs(elem, rows, cols, stride, tcols, tpitch, c0):
    """(moves, (runs, run, pitch) of one move, elements a move covers, elements between moves'
    first elements): one element a move (elem), else a row of cols, ND or NZ."""
    if elem:
        return rows * cols, (1, 1, 1), 1
    return rows, ((cols // c0, c0, tpitch) if tcols else (1, cols, stride)), cols


def gm_index_gather(out, idx, hbm, table, rows, cols, size, stride, oob, elem, tcols, tpitch, dt):
    """MGATHER's read of GM into out: row idx[r] of the table as out's row r (elem 0), or
    element idx[e] as out[e] (elem 1); a dropped index gives zeros; tcols > 0 an NZ table."""
    item = dtypes.BY_CODE[int(dt)].itemsize
    c0 = 32 // item
    moves, (runs, run, pitch), width = _runs(elem, rows, cols, stride, tcols, tpitch, c0)
    for k in range(moves):
        u = _used(idx[k], size, oob)
        piece = np.zeros(width)
        if u is not None:
            first = _element(u, tcols, tpitch, c0) if elem else u * stride
            gm_gather(piece, hbm, table + first * item, pitch, runs, run, dt)
        out[k * width:(k + 1) * width] = piece


def gm_index_scatter(hbm, table, vals, idx, rows, cols, size, stride, oob, elem, atomic, tcols, tpitch, dt):
    """MSCATTER's write of GM in index order: vals' row r to row idx[r] (elem 0), or vals[e]
    to element idx[e] (elem 1); a dropped index writes nothing; atomic 1 adds in dtype dt;
    tcols > 0 an NZ table."""
    item = dtypes.BY_CODE[int(dt)].itemsize
    c0 = 32 // item
    mode = store_modes.ATOMIC_ADD if atomic else 0
    moves, (runs, run, pitch), width = _runs(elem, rows, cols, stride, tcols, tpitch, c0)
    for k in range(moves):
        u = _used(idx[k], size, oob)
        if u is not None:
            first = _element(u, tcols, tpitch, c0) if elem else u * stride
            gm_scatter_mode(hbm, table + first * item, pitch, np.array(vals[k * width:(k + 1) * width], np.float64),
                            runs, run, dt, mode)


GM_INDEX_KERNELS = {"tile_gm_gather": gm_index_gather, "tile_gm_scatter": gm_index_scatter}
