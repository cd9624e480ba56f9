"""The numpy twins of exec/compiled/relu_conv.py's kernels: tile_relu_conv (TADDRELUCONV,
TSUBRELUCONV; isa/52_relu_conv.toml, A2/A3's TAddReluConv.hpp / TSubReluConv.hpp) and
tile_add_deq_relu (TADDDEQRELU; isa/53_add_deq_relu.toml, TAddDeqRelu.hpp).
reference_tiles.py imports them into TILE_KERNELS."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..isa import load_isa
from .reference_sort import bits_of_f32
from .reference_values import round_mode, words_grid


def tile_relu_conv(op, l1, dst, src0, src1, rows, cols, dpitch, pitch0, pitch1, sdt, dt):
    """dst = convert(max(0, src0 +/- src1)): the sum (TADDRELUCONV) or difference in the sources'
    dtype sdt (numpy's float32 / float16 arithmetic rounds to nearest even, int16 wraps), a NaN
    or a value not above 0 replaced by +0, then each rounded to dt to nearest even (TCVT's rint:
    saturated to int8, past float16's range inf)."""
    src_np = dtypes.BY_CODE[int(sdt)].numpy
    a = words_grid(l1, src0, rows, cols, pitch0).astype(src_np)
    b = words_grid(l1, src1, rows, cols, pitch1).astype(src_np)
    sub = load_isa().by_opcode[int(op)].name == "TSUBRELUCONV"
    with np.errstate(all="ignore"):
        s = (a - b if sub else a + b).astype(np.float64)
    s = np.where(s > 0.0, s, 0.0)
    rint = dtypes.CVT_MODES.index("rint")
    out = [[round_mode(dt, x, rint) for x in row] for row in s.reshape(rows, cols)]
    for r in range(rows):
        l1[dst + r * dpitch: dst + r * dpitch + cols] = out[r]


def tile_add_deq_relu(l1, dst, src0, src1, tmp, scale, rows, cols, dpitch, pitch0, pitch1, tpitch):
    """TADDDEQRELU op by op over rows x cols, as AddDeqReluComputeBlock runs them: tmp = src0 +
    src1 wrapped to int32; src0 = its float32 (numpy's, to nearest even) times 2^-17, scale and
    2^17 in numpy's float32 (each product rounded), as the int32s of its bits; tmp = 0; src1 =
    vmax of it and 0 (a NaN kept), as bits; dst = that to float16 (to nearest even)."""
    a = words_grid(l1, src0, rows, cols, pitch0).astype(np.int64)
    b = words_grid(l1, src1, rows, cols, pitch1).astype(np.int64)
    t = ((a + b + 2**31) % 2**32 - 2**31).astype(np.float32)
    with np.errstate(all="ignore"):
        y = (t * np.float32(1.0 / 131072.0)) * np.float32(scale) * np.float32(131072.0)
    z = np.where((y > 0) | np.isnan(y), y, np.float32(0.0))
    ybits, zbits = bits_of_f32(y), bits_of_f32(z)
    for r in range(rows):
        l1[src0 + r * pitch0: src0 + r * pitch0 + cols] = ybits[r]
        l1[tmp + r * tpitch: tmp + r * tpitch + cols] = 0.0
        l1[src1 + r * pitch1: src1 + r * pitch1 + cols] = zbits[r]
        l1[dst + r * dpitch: dst + r * dpitch + cols] = z[r].astype(np.float16).astype(np.float64)
