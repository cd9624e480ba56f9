"""Row softmax in PTO-ISA's vocabulary on the vector cores of the real AI core, float32 and
float16 (computed in float32), checked against numpy:

    x      <- X[rows]                tload (MTE2)          [tcvt to float32 for float16 data]
    m      <- max over each row      trowmax (V)
    x      <- exp(x - m)             trowexpandexpdif
    s      <- sum over each row      trowsum
    y      <- x / s                  trowexpanddiv         [tcvt back to float16]
    Y[rows] <- y                     tstore (MTE3)

The tile instructions of one vector core run in order on V; sync="auto" (the default) orders
the load, the vector ops and the store by their data. Run: python examples/softmax.py
"""
import sys

import numpy as np

import pypto_sim as pto
from row_kernels import ROWS, report, run


def make_softmax(F16):
    """The kernel for float16 data (F16) or float32 data."""

    @pto.kernel
    def softmax(X, Y, C):
        with pto.vector():
            r0 = (pto.get_block_id() * 2 + pto.get_subblock_id()) * ROWS
            x = pto.alloc_tile(ROWS, C, pto.float32, loc=pto.Vec)
            red = pto.alloc_tile(ROWS, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
            if F16:
                h = pto.alloc_tile(ROWS, C, pto.float16, loc=pto.Vec)
                pto.tload(h, X + r0 * C)
                pto.tcvt(x, h)
            else:
                pto.tload(x, X + r0 * C)
            pto.trowmax(red, x)
            pto.trowexpandexpdif(x, x, red)
            pto.trowsum(red, x)
            pto.trowexpanddiv(x, x, red)
            if F16:
                pto.tcvt(h, x)
                pto.tstore(Y + r0 * C, h)
            else:
                pto.tstore(Y + r0 * C, x)

    return softmax


def reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    ok = True
    for dtype in (pto.float32, pto.float16):
        y, want, prof = run(make_softmax(dtype == pto.float16), reference, 256, 256, dtype, (256,))
        ok &= report("softmax", y, want, prof, dtype)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
