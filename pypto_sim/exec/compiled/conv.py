"""The TIMG2COL value kernel (isa/35_aicore.toml) and TTRANS_CONV's (isa/42_layout.toml), beside
the other tile kernels (tiles.py).
"""
import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy")
def tile_img2col(out, l1, src, c0, rows, cols, pos, fmatrix, pads, conv):
    """out[r * cols + c] = element (pos_m + r, pos_k + c) of the img2col matrix of the NC1HWC0
    feature map in l1 from word src (one pixel's c0 channels a row, rows c0 words apart), as
    pto-isa's CPU simulation computes it (include/pto/cpu/TImg2col.hpp): row m is output pixel
    (m // out_w, m % out_w), column k is (c1, kh, kw, c0) = (k // (fh fw c0), ...); a tap in the
    padding, a row past out_h x out_w or a c1 past the channel count reads 0. The operands are
    packed as isa/35_aicore.toml's TIMG2COL record says."""
    pos_m, pos_k = pos & 0xFFFF, pos >> 16
    fw, fh = fmatrix & 0xFFFF, fmatrix >> 16
    pl, pr, pt, pb = pads & 0xFF, (pads >> 8) & 0xFF, (pads >> 16) & 0xFF, pads >> 24
    kw_n, kh_n = conv & 0xF, (conv >> 4) & 0xF
    sw, sh, dw, dh = (conv >> 8) & 0xF, (conv >> 12) & 0xF, (conv >> 16) & 0xF, (conv >> 20) & 0xF
    c1_n = conv >> 24
    out_h = (fh + pt + pb - dh * (kh_n - 1) - 1) // sh + 1
    out_w = (fw + pl + pr - dw * (kw_n - 1) - 1) // sw + 1
    kc = c0 * kh_n * kw_n
    for r in range(rows):
        m = pos_m + r
        orow, ocol = m // out_w, m % out_w
        for c in range(cols):
            k = pos_k + c
            c1 = k // kc
            tap = (k % kc) // c0
            ih = orow * sh + (tap // kw_n) * dh - pt
            iw = ocol * sw + (tap % kw_n) * dw - pl
            v = 0.0
            if m < out_h * out_w and c1 < c1_n and 0 <= ih < fh and 0 <= iw < fw:
                v = l1[src + ((c1 * fh + ih) * fw + iw) * c0 + k % c0]
            out[r * cols + c] = v


@njit(cache=True, error_model="numpy")
def tile_trans_conv(l1, dst, src, rows, cols, form, n, c, hw, c0, dn):
    """TTRANS_CONV (isa/42_layout.toml): the words A2/A3's TTrans.hpp TTransImplConvTile leaves in
    dst, by the header's address arithmetic (every source word is read before dst is written).
    form 0 (G)NCHW -> (G)NC1HWC0 and 1 its reverse: rows blocks of cols = c0 x hw words, each
    transposed (c0 x hw -> hw x c0, 1: hw x c0 -> c0 x hw); form 2 NC1HWC0 -> FRACTAL_Z and 3
    GNC1HWC0 -> FRACTAL_Z: rows = g x n sources of cols = c1hw x c0 words, source n's row i to
    dst row i's n-th c0 run (dn = N1 x N0 runs a row; both tiles' groups dn x c1hw x c0 words
    apart), 3 also zeroing runs n..dn; form 4 NCDHW -> FRACTAL_Z_3D: n x c x (rows / (n c1))
    x hw into (d, c1, hw, dn, c0), c past c and n past n zero."""
    out = np.zeros(0, np.float64)
    if form <= 1:
        out = np.empty(rows * cols, np.float64)
        for b in range(rows):
            for k in range(c0):
                for p in range(hw):
                    if form == 0:
                        out[b * cols + p * c0 + k] = l1[src + b * cols + k * hw + p]
                    else:
                        out[b * cols + k * hw + p] = l1[src + b * cols + p * c0 + k]
        for e in range(rows * cols):
            l1[dst + e] = out[e]
    elif form <= 3:
        m = cols // c0
        g = rows // n
        gs = dn * m * c0
        out = np.empty(g * gs, np.float64)
        for e in range(g * gs):
            out[e] = l1[dst + e]
        for gg in range(g):
            for nn in range(dn):
                if nn >= n and form == 2:
                    continue
                for i in range(m):
                    for j in range(c0):
                        x = l1[src + gg * gs + nn * m * c0 + i * c0 + j] if nn < n else 0.0
                        out[gg * gs + i * dn * c0 + nn * c0 + j] = x
        for e in range(g * gs):
            l1[dst + e] = out[e]
    else:
        c1 = (c + c0 - 1) // c0
        d = rows // (n * c1)
        total = d * c1 * hw * dn * c0
        out = np.zeros(total, np.float64)
        for dd in range(d):
            for nn in range(n):
                for ch in range(c):
                    for p in range(hw):
                        at = (((dd * c1 + ch // c0) * hw + p) * dn + nn) * c0 + ch % c0
                        out[at] = l1[src + (nn * c + ch) * d * hw + dd * hw + p]
        for e in range(total):
            l1[dst + e] = out[e]
