# pypto/examples/softmax_tiles.py -- a row softmax over L1 tiles, checked against numpy.
#
# Each block owns TILE_ROWS consecutive rows of the matrix. Warp 0 of the block issues the tile
# instructions; each runs asynchronously on its pipe (the DMA load on the load pipe, the vector
# ops on the vector pipe, the store on the store pipe) and starts as soon as the tiles it reads
# have been written, so the chain below needs no waits until the final wait_all:
#
#   x_tile  <- x[rows]                    async_load   (HBM -> L1, rows `n_cols` apart)
#   row_red <- max over each row          trowmax
#   wide    <- row_red broadcast per row  trowexpand
#   x_tile  <- exp(x_tile - wide)         tsub, texp   (max-subtracted: exp never overflows)
#   row_red <- sum over each row          trowsum
#   wide    <- row_red broadcast per row  trowexpand
#   x_tile  <- x_tile / wide              tdiv
#   y[rows] <- x_tile                     store        (L1 -> HBM)
#   wait_all()                            the block is done when its store has landed
import numpy as np

import pypto_sim as pto


@pto.kernel
def softmax_rows(x, y, tile_rows, n_cols):
    """Row softmax of a matrix of n_cols float32 columns, tile_rows rows per block (the
    kernel is specialised on tile_rows and n_cols, which size its tiles)."""
    row0 = pto.get_block_id() * tile_rows              # this block's first row
    x_tile = pto.alloc_local(tile_rows * n_cols)      # the block's rows, row-major
    wide = pto.alloc_local(tile_rows * n_cols)        # one value per row, broadcast
    row_red = pto.alloc_local(tile_rows)              # one value per row
    pto.async_load(x_tile, x + row0 * n_cols, rows=tile_rows, cols=n_cols, stride=n_cols)
    pto.trowmax(row_red, x_tile, tile_rows, n_cols)
    pto.trowexpand(wide, row_red, tile_rows, n_cols)
    pto.tsub(x_tile, x_tile, wide, tile_rows * n_cols)
    pto.texp(x_tile, x_tile, tile_rows * n_cols)
    pto.trowsum(row_red, x_tile, tile_rows, n_cols)
    pto.trowexpand(wide, row_red, tile_rows, n_cols)
    pto.tdiv(x_tile, x_tile, wide, tile_rows * n_cols)
    pto.store(y + row0 * n_cols, x_tile, rows=tile_rows, cols=n_cols, stride=n_cols)
    pto.wait_all()


def softmax_reference(x):
    """Row softmax in float64 numpy (max-subtracted), as float32."""
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def softmax_on_device(x, tile_rows, profile=False):
    """Softmax of the float32 matrix x on the simulated NPU, one block per tile_rows rows.

    Returns y, or (y, profile) with profile=True. x's row count must divide by tile_rows.
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    m, n = x.shape
    if m % tile_rows:
        raise ValueError(f"{m} rows do not split into tiles of {tile_rows} rows")
    y = np.zeros_like(x)
    d_x, d_y = pto.alloc_tensor(x.nbytes), pto.alloc_tensor(y.nbytes)
    pto.memcpy_h2d(d_x, x)
    grid, block = (m // tile_rows, 1, 1), (32, 1, 1)
    if profile:
        prof = pto.profile(softmax_rows, grid=grid, block=block, args=(d_x, d_y, tile_rows, n))
    else:
        pto.launch(softmax_rows, grid=grid, block=block, args=(d_x, d_y, tile_rows, n))
    pto.memcpy_d2h(y, d_y)
    return (y, prof) if profile else y


def main():
    m, n, tile_rows = 64, 128, 8
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((m, n)) * 4.0).astype(np.float32)
    x[3, :] += 80.0                       # large values: exp(x) alone would overflow float32
    y, prof = softmax_on_device(x, tile_rows, profile=True)
    want = softmax_reference(x)
    err = float(np.max(np.abs(y - want)))
    assert np.allclose(y, want, rtol=1e-5, atol=1e-6), f"softmax differs from numpy by {err:.3g}"
    assert np.allclose(y.sum(axis=1), 1.0, rtol=1e-5)
    print(f"pypto: softmax {m}x{n} float32 ({m // tile_rows} blocks of {tile_rows} rows) passed "
          f"(max |y - numpy| = {err:.3g})")
    print(prof.report())


if __name__ == "__main__":
    main()
