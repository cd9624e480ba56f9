# pypto/examples/sweep_gemm_tiles.py -- a design-space sweep: which tile shape and pipeline
# depth make the tiled GEMM fastest, and how much a faster HBM would help.
#
#   python examples/sweep_gemm_tiles.py            # on a local Dask cluster (one worker per core)
#   python examples/sweep_gemm_tiles.py --serial   # in this process
#
#   pypto-sim sweep examples/sweep_gemm_tiles.toml -o results.parquet   # its smaller TOML spec
#
# Each point builds its kernel and inputs in the worker from plain parameters (a kernel object
# does not pickle), runs it cycle by cycle, checks C against numpy and returns one row.
import argparse

import numpy as np

import pypto_sim as pto

SIZE = 256


@pto.kernel
def gemm(A, B, C, M, N, K, tile_m, tile_n, tile_k, depth):
    row0 = pto.get_block_id(1) * tile_m
    col0 = pto.get_block_id(0) * tile_n
    C_tile = pto.alloc_local(tile_m * tile_n)
    with pto.pipeline(depth=depth) as pl:
        for k0 in pl.range(0, K, tile_k):
            with pl.stage("load_a"):
                A_tile = pto.alloc_local(tile_m * tile_k)
                pto.async_load(A_tile, A + row0 * K + k0, rows=tile_m, cols=tile_k, stride=K)
            with pl.stage("load_b"):
                B_tile = pto.alloc_local(tile_k * tile_n)
                pto.async_load(B_tile, B + k0 * N + col0, rows=tile_k, cols=tile_n, stride=N)
            with pl.stage("compute", after=("load_a", "load_b")):
                pto.wait_all()
                pto.mma(C_tile, A_tile, B_tile, tile_m, tile_n, tile_k)
    pl.run()
    pto.store(C + row0 * N + col0, C_tile, rows=tile_m, cols=tile_n, stride=N)


def gemm_case(tile=64, tile_k=32, depth=2):
    """One point: a SIZE^3 float32 GEMM with square tile x tile output tiles."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((SIZE, SIZE)).astype(np.float32)
    b = rng.standard_normal((SIZE, SIZE)).astype(np.float32)
    d_a, d_b, d_c = (pto.alloc_tensor(a.nbytes) for _ in range(3))
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, b)
    want = a @ b
    return pto.SweepCase(
        gemm, grid=(SIZE // tile, SIZE // tile, 1), block=(32, 1, 1),
        args=(d_a, d_b, d_c, SIZE, SIZE, SIZE, tile, tile, tile_k, depth), outputs={"C": d_c},
        check=lambda out: np.allclose(out["C"].reshape(SIZE, SIZE), want, rtol=1e-4, atol=1e-3))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--serial", action="store_true", help="run in this process")
    parser.add_argument("--plot", metavar="PNG", help="save a plot of cycles over tile_k")
    ns = parser.parse_args(argv)
    frame = pto.sweep(gemm_case,           # workers load it from this file (hence the main guard)
                      params={"tile": [32, 64, 128], "tile_k": [32, 64], "depth": [1, 2]},
                      machine_overrides={"memory.hbm_chip_bytes_per_cycle": [973, 1946]},
                      engine="serial" if ns.serial else None)
    assert frame["error"].isna().all(), frame[frame["error"].notna()]["error"].tolist()
    assert frame["check"].all(), "a point computed a wrong C"
    cols = ["param.tile", "param.tile_k", "param.depth", "override.memory.hbm_chip_bytes_per_cycle",
            "total_cycles", "simulated_us"]
    print(frame.sort_values("total_cycles")[cols].to_string(index=False))
    best = frame.loc[frame["total_cycles"].idxmin()]
    print(f"pypto: sweep_gemm_tiles: {len(frame)} points, every C matches numpy; best: tile "
          f"{best['param.tile']}, tile_k {best['param.tile_k']}, depth {best['param.depth']} at "
          f"{best['override.memory.hbm_chip_bytes_per_cycle']} B/cycle: {best['total_cycles']} cycles")
    if ns.plot:
        from pypto_sim.sweep import plot_sweep
        plot_sweep(frame[frame["override.memory.hbm_chip_bytes_per_cycle"] == 973],
                   x="param.tile_k", hue="param.tile", path=ns.plot)


if __name__ == "__main__":
    main()
