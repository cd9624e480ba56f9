"""The fused add / sub, ReLU and down-conversion family's kernel (TADDRELUCONV, TSUBRELUCONV;
isa/52_relu_conv.toml): A2/A3's TAddReluConv.hpp / TSubReluConv.hpp, one vaddreluconv_* /
vsubreluconv_* a row; and the fused add, dequantization and ReLU's (TADDDEQRELU;
isa/53_add_deq_relu.toml): TAddDeqRelu.hpp's AddDeqReluComputeBlock. The replay's generated
family dispatch calls them (exec/family_source.py)."""
import numpy as np
from numba import njit

from .isa_constants import CVT_RINT, OP_TSUBRELUCONV
from .scalars import round_f16, round_to, wrap_i32
from .sort import bits_of_f32
from .tiles import round_mode

# TAddDeqRelu.hpp's DEQ_SHIFT_RIGHT_17_BIT and DEQ_SHIFT_LEFT_17_BIT
DEQ_SHIFT_RIGHT = 1.0 / 131072.0
DEQ_SHIFT_LEFT = 131072.0


@njit(cache=True, error_model="numpy")
def tile_relu_conv(op, l1, dst, src0, src1, rows, cols, dpitch, pitch0, pitch1, sdt, dt):
    """dst[r, c] = round_mode(dt, max(0, s), RINT) with s = src0[r, c] + src1[r, c] (TSUBRELUCONV:
    minus) rounded to the sources' dtype sdt (float32 / float16 to nearest even, int16 wrapped);
    a NaN or a non-positive s gives +0. Every source word is read before dst is written."""
    out = np.empty(rows * cols, np.float64)
    sign = -1.0 if op == OP_TSUBRELUCONV else 1.0
    for r in range(rows):
        for c in range(cols):
            s = round_to(sdt, l1[src0 + r * pitch0 + c] + sign * l1[src1 + r * pitch1 + c])
            out[r * cols + c] = round_mode(dt, s if s > 0.0 else 0.0, CVT_RINT)
    for r in range(rows):
        l1[dst + r * dpitch:dst + r * dpitch + cols] = out[r * cols:(r + 1) * cols]


@njit(cache=True, error_model="numpy")
def tile_add_deq_relu(l1, dst, src0, src1, tmp, scale, rows, cols, dpitch, pitch0, pitch1, tpitch):
    """TADDDEQRELU as AddDeqReluComputeBlock leaves every word of rows x cols: x = float32 of
    the int32 wrapped src0 + src1 (to nearest even), y = ((x * 2^-17) * scale) * 2^17, each
    product rounded to float32, into src0 as its bits; tmp 0; z = y where y > 0 or NaN, else +0
    (vmax), into src1 as its bits; dst = float16(z) to nearest even. Each element's two source
    words are read before any of its four words is written (the tiles share none)."""
    s = np.float32(scale)
    for r in range(rows):
        for c in range(cols):
            a, b = src0 + r * pitch0 + c, src1 + r * pitch1 + c
            t = wrap_i32(np.int64(l1[a]) + np.int64(l1[b]))
            y = np.float32(np.float32(np.float32(t) * np.float32(DEQ_SHIFT_RIGHT)) * s)
            y = np.float32(y * np.float32(DEQ_SHIFT_LEFT))
            z = y if (y > 0.0 or y != y) else np.float32(0.0)
            l1[a] = bits_of_f32(np.float64(y))
            l1[tmp + r * tpitch + c] = 0.0
            l1[b] = bits_of_f32(np.float64(z))
            l1[dst + r * dpitch + c] = round_f16(np.float64(z))
