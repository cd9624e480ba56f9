"""The dequantization family's kernel (TDEQUANT, TDEQUANT_S8; isa/50_quant.toml): A2/A3's
TDequant.hpp, row by row. The replay's generated family dispatch calls it
(exec/family_source.py)."""
import numpy as np
from numba import njit



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
