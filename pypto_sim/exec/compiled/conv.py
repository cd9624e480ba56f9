"""The TIMG2COL value kernel (isa/35_aicore.toml), beside the other tile kernels (tiles.py).
"""
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
