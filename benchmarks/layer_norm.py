"""Benchmark (run by hand, not a test): a row-wise layer norm, compared with the HBM
bandwidth bound.

- ``--kind lane``: the lane (SIMT) model, one block of 256 lanes per row, the mean and
  variance reduced through L1 with barrier_block() (x read three times, y written once);
- ``--kind tile``: tile instructions, TILE_ROWS rows per block, the row tiles of a block
  double-buffered in a pipeline (x read once, y written once).

    python benchmarks/layer_norm.py [--kind tile] [--rows 4096] [--cols 1024]

Written with pto.load / pto.store / alloc_local only (no SIMT extras), so it can be compared
with older checkouts as docs/performance.md's before/after figures were.
"""
import argparse
import time

import numpy as np

import pypto_sim as pto

THREADS = 256


@pto.kernel
def block_sum(red, t, acc):
    """Thread t's acc summed over the block into red[0] (a tree through L1; inlined)."""
    pto.store(red + t, acc)
    pto.barrier_block()
    s = THREADS // 2
    while s > 0:
        if t < s:
            pto.store(red + t, pto.load(red + t) + pto.load(red + t + s))
        pto.barrier_block()
        s = s // 2


@pto.kernel
def layer_norm(x, y, cols, eps):
    row = pto.get_block_id()
    t = pto.get_local_id()
    red = pto.alloc_local(THREADS)
    acc = 0.0
    for c in range(t, cols, THREADS):
        acc = acc + pto.load(x + row * cols + c)
    block_sum(red, t, acc)
    mean = pto.load(red) / cols
    pto.barrier_block()
    acc = 0.0
    for c in range(t, cols, THREADS):
        d = pto.load(x + row * cols + c) - mean
        acc = acc + d * d
    block_sum(red, t, acc)
    inv = pto.rsqrt(pto.load(red) / cols + eps)
    for c in range(t, cols, THREADS):
        pto.store(y + row * cols + c, (pto.load(x + row * cols + c) - mean) * inv)


TILE_ROWS = 8
ROWS_PER_BLOCK = 64


@pto.kernel
def layer_norm_tiles(x, y, cols, inv_cols, eps):
    """ROWS_PER_BLOCK rows per block in tiles of TILE_ROWS rows, two tiles in flight."""
    base = pto.get_block_id() * ROWS_PER_BLOCK * cols
    with pto.pipeline(depth=2) as pl:
        for r0 in pl.range(0, ROWS_PER_BLOCK, TILE_ROWS):
            with pl.stage("load"):
                t = pto.alloc_local(TILE_ROWS * cols)
                pto.async_load(t, x + base + r0 * cols, rows=TILE_ROWS, cols=cols, stride=cols)
            with pl.stage("norm", after="load"):
                wide = pto.alloc_local(TILE_ROWS * cols)
                red = pto.alloc_local(TILE_ROWS)
                pto.trowsum(red, t, TILE_ROWS, cols)
                pto.tmuls(red, red, inv_cols, TILE_ROWS)
                pto.trowexpand(wide, red, TILE_ROWS, cols)
                pto.tsub(t, t, wide, TILE_ROWS * cols)
                pto.tmul(wide, t, t, TILE_ROWS * cols)
                pto.trowsum(red, wide, TILE_ROWS, cols)
                pto.tmuls(red, red, inv_cols, TILE_ROWS)
                pto.tadds(red, red, eps, TILE_ROWS)
                pto.tsqrt(red, red, TILE_ROWS)
                pto.trowexpand(wide, red, TILE_ROWS, cols)
                pto.tdiv(t, t, wide, TILE_ROWS * cols)
                pto.store(y + base + r0 * cols, t, rows=TILE_ROWS, cols=cols, stride=cols)
    pl.run()
    pto.wait_all()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--kind", choices=("lane", "tile"), default="lane")
    ns = parser.parse_args()
    rows, cols = ns.rows, ns.cols
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    d_x, d_y = pto.alloc_tensor(x.nbytes), pto.alloc_tensor(x.nbytes)
    pto.memcpy_h2d(d_x, x)
    if ns.kind == "lane":
        kernel, grid, block, args = layer_norm, (rows, 1, 1), (THREADS, 1, 1), (d_x, d_y, cols, 1e-5)
        reads = 3
    else:
        kernel, grid, block = layer_norm_tiles, (rows // ROWS_PER_BLOCK, 1, 1), (32, 1, 1)
        args, reads = (d_x, d_y, cols, 1.0 / cols, 1e-5), 1
    pto.launch(kernel, grid=(1, 1, 1), block=block, args=args)
    pto.sync()                                           # compile and warm the engine
    m = pto.machine()
    start = time.perf_counter()
    result = pto.launch(kernel, grid=grid, block=block, args=args).result()
    wall = time.perf_counter() - start
    y = np.empty_like(x)
    pto.memcpy_d2h(y, d_y)
    mean = x.mean(axis=1, keepdims=True)
    want = (x - mean) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    ok = np.allclose(y, want, rtol=1e-3, atol=1e-4)
    traffic = (reads + 1) * x.nbytes          # x read `reads` times, y written once
    bound = traffic / m.hbm_chip_bytes_per_cycle
    print(f"layer norm ({ns.kind}) {rows} x {cols} float32, {grid[0]} blocks of {block[0]} lanes, "
          f"machine {m.name}")
    print(f"  wall time          {wall:.2f} s")
    print(f"  simulated cycles   {result.total_cycles}  ({result.total_cycles / (m.clock_ghz * 1e3):.1f} us)")
    print(f"  HBM bound          {bound:.0f} cycles ({traffic / 2**20:.0f} MiB at "
          f"{m.hbm_chip_bytes_per_cycle:.0f} B/cycle): {result.total_cycles / bound:.2f}x the bound")
    print(f"  y matches numpy    {ok}")


if __name__ == "__main__":
    main()
