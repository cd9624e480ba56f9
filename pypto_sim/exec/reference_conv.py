"""The numpy twin of exec/compiled/conv.py's tile_trans_conv (TTRANS_CONV, isa/42_layout.toml:
A2/A3's TTrans.hpp TTransImplConvTile): each form as a reshape and transpose of numpy arrays.
reference_tiles.py imports it into TILE_KERNELS."""
from __future__ import annotations

import numpy as np


def tile_trans_conv(l1, dst, src, rows, cols, form, n, c, hw, c0, dn):
    """TTRANS_CONV: form 0 transposes rows blocks of c0 x hw words to hw x c0, form 1 hw x c0 to
    c0 x hw; forms 2 / 3 move source n's c1hw x c0 words to run n of dst's c1hw rows of dn x c0
    (3: runs n..dn zeroed, the groups dn x c1hw x c0 words apart in both tiles); form 4 takes an
    n x c x d x hw source to (d, c1, hw, dn, c0), zero past c and n (TTrans.hpp lines 405-901)."""
    if form <= 1:
        blocks = l1[src:src + rows * cols].reshape(rows, c0, hw) if form == 0 else \
            l1[src:src + rows * cols].reshape(rows, hw, c0)
        l1[dst:dst + rows * cols] = blocks.transpose(0, 2, 1).ravel()
        return
    if form <= 3:
        m, g = cols // c0, rows // n
        gs = dn * m * c0
        out = l1[dst:dst + g * gs].copy().reshape(g, m, dn, c0)
        for gg in range(g):
            block = l1[src + gg * gs:src + gg * gs + n * m * c0].reshape(n, m, c0)
            out[gg, :, :n, :] = block.transpose(1, 0, 2)
            if form == 3:
                out[gg, :, n:, :] = 0.0
        l1[dst:dst + g * gs] = out.ravel()
        return
    c1 = -(-c // c0)
    d = rows // (n * c1)
    grid = np.zeros((dn, c1 * c0, d, hw))
    grid[:n, :c] = l1[src:src + n * c * d * hw].reshape(n, c, d, hw)
    out = grid.reshape(dn, c1, c0, d, hw).transpose(3, 1, 4, 0, 2)
    l1[dst:dst + out.size] = out.ravel()
