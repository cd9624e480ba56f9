"""Benchmark (run by hand, not a test): a 1024 x 1024 x 1024 float32 GEMM with 128 x 128 x 64
tiles, double-buffered, simulated with values and cycles on the default machine.

    python benchmarks/gemm.py [--size 1024] [--depth 2]

Prints wall time, simulated cycles, the simulated TFLOP/s against the table's cube peak, and
checks C against numpy.
"""
import argparse
import time

import numpy as np

import pypto_sim as pto

TM, TN, TK = 128, 128, 64


def make_gemm(depth):
    @pto.kernel
    def gemm(A, B, C, M, N, K):
        row0 = pto.get_block_id(1) * TM
        col0 = pto.get_block_id(0) * TN
        C_tile = pto.alloc_local(TM * TN)
        with pto.pipeline(depth=depth) as pl:
            for k0 in pl.range(0, K, TK):
                with pl.stage("load_a"):
                    A_tile = pto.alloc_local(TM * TK)
                    pto.async_load(A_tile, A + row0 * K + k0, rows=TM, cols=TK, stride=K)
                with pl.stage("load_b"):
                    B_tile = pto.alloc_local(TK * TN)
                    pto.async_load(B_tile, B + k0 * N + col0, rows=TK, cols=TN, stride=N)
                with pl.stage("compute", after=("load_a", "load_b")):
                    pto.wait_all()
                    pto.mma(C_tile, A_tile, B_tile, TM, TN, TK)
        pto.store(C + row0 * N + col0, C_tile, rows=TM, cols=TN, stride=N)
    return gemm


def cube_peak_tflops(machine, input_bytes=4):
    """The table's MMA peak: 16x16xk_tile MACs per repeat, per_repeat cycles, all cores."""
    k_tile = machine.cost_term("MMA", "k_tile_f32" if input_bytes == 4 else "k_tile")
    per = machine.cost_term("MMA", "per_repeat_f32" if input_bytes == 4 else "per_repeat")
    flops_per_cycle = 2 * 16 * 16 * k_tile / per
    return flops_per_cycle * machine.cores * machine.clock_ghz * 1e9 / 1e12


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--depth", type=int, default=2)
    ns = parser.parse_args()
    n = ns.size
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    d_a, d_b, d_c = (pto.alloc_tensor(n * n * 4) for _ in range(3))
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, b)
    kernel = make_gemm(ns.depth)
    m = pto.machine()
    # warm the numba cache and the compiler outside the timed region
    pto.profile(make_gemm(ns.depth), grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_b, d_c, TM, TN, TK))
    start = time.perf_counter()
    prof = pto.profile(kernel, grid=(n // TN, n // TM, 1), block=(32, 1, 1), args=(d_a, d_b, d_c, n, n, n))
    wall = time.perf_counter() - start
    c = d_c.numpy().reshape(n, n)
    ok = np.allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    seconds = prof.total_cycles / (m.clock_ghz * 1e9)
    tflops = 2 * n ** 3 / seconds / 1e12
    peak = cube_peak_tflops(m)
    util = prof.pipe_utilization()
    print(f"GEMM {n}^3 float32, tiles {TM}x{TN}x{TK}, depth {ns.depth}, machine {m.name}")
    print(f"  wall time           {wall:.2f} s  ({prof.stats['warp_instructions']} warp-instructions)")
    print(f"  simulated cycles    {prof.total_cycles}  ({seconds * 1e6:.1f} us at {m.clock_ghz} GHz)")
    print(f"  simulated TFLOP/s   {tflops:.1f} of a float32 cube peak of {peak:.1f} ({100 * tflops / peak:.0f}%)")
    print(f"  pipes busy          load {util['load']:.0%}, mma {util['mma']:.0%}, store {util['store']:.0%}")
    print(f"  C matches numpy     {ok}")


if __name__ == "__main__":
    main()
