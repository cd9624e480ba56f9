"""Layer norm in PTO-ISA's vocabulary on the vector cores: y = (x - mean) / sqrt(var + eps)
per row (no affine), float32 and float16 (computed in float32), checked against numpy.

    mean  = rowsum(x) / C                    trowsum, tmuls
    d     = x - mean                         trowexpand, tsub
    var   = rowsum(d * d) / C                tmul, trowsum, tmuls
    y     = d * rsqrt(var + eps)             tadds, trsqrt, trowexpand, tmul

Run: python examples/layer_norm.py
"""
import sys

import numpy as np

import pypto_sim as pto
from row_kernels import ROWS, report, run

EPS = 1e-5


def make_layer_norm(F16):
    """The kernel for float16 data (F16) or float32 data."""

    @pto.kernel
    def layer_norm(X, Y, C, inv_c):
        with pto.vector():
            r0 = (pto.get_block_id() * 2 + pto.get_subblock_id()) * ROWS
            x = pto.alloc_tile(ROWS, C, pto.float32, loc=pto.Vec)
            sq = pto.alloc_tile(ROWS, C, pto.float32, loc=pto.Vec)
            wide = pto.alloc_tile(ROWS, C, pto.float32, loc=pto.Vec)
            red = pto.alloc_tile(ROWS, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
            if F16:
                h = pto.alloc_tile(ROWS, C, pto.float16, loc=pto.Vec)
                pto.tload(h, X + r0 * C)
                pto.tcvt(x, h)
            else:
                pto.tload(x, X + r0 * C)
            pto.trowsum(red, x)
            pto.tmuls(red, red, inv_c)           # mean
            pto.trowexpand(wide, red)
            pto.tsub(x, x, wide)                 # d = x - mean
            pto.tmul(sq, x, x)
            pto.trowsum(red, sq)
            pto.tmuls(red, red, inv_c)           # var
            pto.tadds(red, red, EPS)
            pto.trsqrt(red, red)
            pto.trowexpand(wide, red)
            pto.tmul(x, x, wide)
            if F16:
                pto.tcvt(h, x)
                pto.tstore(Y + r0 * C, h)
            else:
                pto.tstore(Y + r0 * C, x)

    return layer_norm


def reference(x):
    d = x - x.mean(axis=1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=1, keepdims=True) + EPS)


def main():
    ok = True
    for dtype in (pto.float32, pto.float16):
        y, want, prof = run(make_layer_norm(dtype == pto.float16), reference, 256, 512, dtype, (512, 1 / 512))
        ok &= report("layer norm", y, want, prof, dtype)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
