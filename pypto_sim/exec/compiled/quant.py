"""The quantization families' kernels (TDEQUANT, TDEQUANT_S8, TQUANT, TQUANT_ASYM;
isa/50_quant.toml): A2/A3's TDequant.hpp and TQuant.hpp, row by row. The replay's generated
family dispatch calls them (exec/family_source.py)."""
import numpy as np
from numba import njit

from .gm_bytes import ieee_decode, ieee_encode
from .isa_constants import CVT_RINT, DT_FLOAT16, DT_INT32, DT_INT8, DT_UINT8
from .tiles import round_mode

# TRowExpandBinOp.hpp's norm mode for 256 rows and more: vbrcb broadcasts 30 repeats (240 rows)
# of the parameter at a time into the first words of tmp
BRCB_REPEAT_MAX = 30


@njit(cache=True, error_model="numpy")
def tile_dequant(l1, dst, src, scale, offset, rows, cols, dpitch, spitch, ppitch):
    """dst[r, c] = (src[r, c] - offset[r * ppitch]) * scale[r * ppitch] over rows x cols,
    the difference and the product each rounded to float32 (vadds of -offset, then vmuls).
    Every source word is read before dst is written."""
    out = np.empty(rows * cols, np.float64)
    for r in range(rows):
        o = l1[offset + r * ppitch]
        s = l1[scale + r * ppitch]
        for c in range(cols):
            out[r * cols + c] = np.float64(np.float32(np.float32(l1[src + r * spitch + c] - o) * s))
    for r in range(rows):
        l1[dst + r * dpitch:dst + r * dpitch + cols] = out[r * cols:(r + 1) * cols]


@njit(cache=True, error_model="numpy")
def quant_broadcast(l1, tmp, par, rows):
    """TRowExpandBin's vbrcb (TRowExpandBinOp.hpp): the parameter's words (one a row, from
    word par) each copied into 8 words of tmp, 8 rows a repeat for ceil(rows / 8) repeats, into
    tmp's first words at once, or 30 repeats at a time from 256 rows on (the norm mode's loop,
    each round over the last's words: its path for Rows >= 256 and validRow >= 256, and a tile
    of 256 valid rows has 256 rows or more)."""
    reps = (rows + 7) // 8
    chunk = BRCB_REPEAT_MAX if rows >= 256 else reps
    first = 0
    while first < reps:
        n = min(chunk, reps - first) * 8
        for k in range(n):
            w = l1[par + first * 8 + k]
            for j in range(8):
                l1[tmp + 8 * k + j] = w
        first += chunk


@njit(cache=True, error_model="numpy")
def tile_quant(l1, dst, src, scale, offset, tmp, rows, cols, dpitch, spitch):
    """TQUANT (offset -1: INT8_SYM into int8) and TQUANT_ASYM (into uint8) over rows x cols of
    src (row pitch spitch, its Cols), as TQuant.hpp's passes leave every word: src[r, c] *=
    scale[r] (+= offset[r]) in float32; tmp's words the last vbrcb (quant_broadcast), then word
    r * spitch + c the int32 x = rint(src[r, c]) (saturated, NaN 0) as the float32 of its bits;
    dst[r, c] = the int8 / uint8 rint of float16(x), saturated (TCVT's round_mode); src's words
    from r * PadColsSrc / 2 (PadColsSrc: spitch rounded up to 16) the row's float16 halves, two
    to a word, low half first (an odd row's last word keeps its high half). Row r's halves lie
    in words of rows r and before, after their values were read, so row by row is pass by pass."""
    asym = offset >= 0
    quant_broadcast(l1, tmp, offset if asym else scale, rows)
    dt = DT_UINT8 if asym else DT_INT8
    half_pitch = (spitch + 15) // 16 * 8
    h = np.empty(max(cols, 1), np.float64)
    for r in range(rows):
        s = l1[scale + r]
        o = l1[offset + r] if asym else 0.0
        for c in range(cols):
            e = src + r * spitch + c
            x = np.float64(np.float32(l1[e] * s))
            if asym:
                x = np.float64(np.float32(x + o))
            l1[e] = x
            i = round_mode(DT_INT32, x, CVT_RINT)
            l1[tmp + r * spitch + c] = ieee_decode(np.uint64(np.int64(i) & 0xFFFFFFFF), 32, 23)
            h[c] = round_mode(DT_FLOAT16, i, CVT_RINT)
            l1[dst + r * dpitch + c] = round_mode(dt, h[c], CVT_RINT)
        w0 = src + r * half_pitch
        for k in range((cols + 1) // 2):
            lo = ieee_encode(h[2 * k], 16, 10)
            if 2 * k + 1 < cols:
                hi = ieee_encode(h[2 * k + 1], 16, 10)
            else:
                hi = ieee_encode(l1[w0 + k], 32, 23) >> np.uint64(16)
            l1[w0 + k] = ieee_decode((hi << np.uint64(16)) | lo, 32, 23)
