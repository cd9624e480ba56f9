"""RMS norm in PTO-ISA's vocabulary on the vector cores: y = x * rsqrt(mean(x^2) + eps) per row
(no weight), float32 and float16 (computed in float32), checked against numpy, as pypto-lib's
rms_norm (row_sum, rsqrt, row_expand_mul) computes it.

Run: python examples/rms_norm.py
"""
import sys

import numpy as np

import pypto_sim as pto
from row_kernels import ROWS, report, run

EPS = 1e-6


def make_rms_norm(F16):
    """The kernel for float16 data (F16) or float32 data."""

    @pto.kernel
    def rms_norm(X, Y, C, inv_c):
        with pto.vector():
            r0 = (pto.get_block_id() * 2 + pto.get_subblock_id()) * ROWS
            x = pto.alloc_tile(ROWS, C, pto.float32, loc=pto.Vec)
            sq = pto.alloc_tile(ROWS, C, pto.float32, loc=pto.Vec)
            red = pto.alloc_tile(ROWS, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
            if F16:
                h = pto.alloc_tile(ROWS, C, pto.float16, loc=pto.Vec)
                pto.tload(h, X + r0 * C)
                pto.tcvt(x, h)
            else:
                pto.tload(x, X + r0 * C)
            pto.tmul(sq, x, x)
            pto.trowsum(red, sq)
            pto.tmuls(red, red, inv_c)
            pto.tadds(red, red, EPS)
            pto.trsqrt(red, red)
            pto.trowexpand(sq, red)
            pto.tmul(x, x, sq)
            if F16:
                pto.tcvt(h, x)
                pto.tstore(Y + r0 * C, h)
            else:
                pto.tstore(Y + r0 * C, x)

    return rms_norm


def reference(x):
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS)


def main():
    ok = True
    for dtype in (pto.float32, pto.float16):
        y, want, prof = run(make_rms_norm(dtype == pto.float16), reference, 256, 512, dtype, (512, 1 / 512))
        ok &= report("rms norm", y, want, prof, dtype)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
