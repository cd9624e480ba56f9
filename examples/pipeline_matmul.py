# pypto/examples/pipeline_matmul.py -- the article's second program: a tiled matrix multiply
# with a manual software pipeline (double buffering), run at depth=1 and depth=2.
import numpy as np

import pypto_sim as pto


def make_matmul(depth):
    """The tiled matmul of API.md at a given pipeline depth (depth=1 is the serial baseline)."""
    @pto.kernel
    def matmul_tile(A, B, C, M, N, K, tile_m, tile_n, tile_k):
        row0 = pto.get_block_id(1) * tile_m                 # this block's output tile
        col0 = pto.get_block_id(0) * tile_n
        C_tile = pto.alloc_local(tile_m * tile_n)           # accumulator, starts at zero
        with pto.pipeline(depth=depth) as pl:
            for k0 in pl.range(0, K, tile_k):               # iterations that may overlap
                with pl.stage("load_a"):
                    A_tile = pto.alloc_local(tile_m * tile_k)
                    pto.async_load(A_tile, A + row0 * K + k0, rows=tile_m, cols=tile_k, stride=K)
                with pl.stage("load_b"):                    # no `after`: may overlap load_a
                    B_tile = pto.alloc_local(tile_k * tile_n)
                    pto.async_load(B_tile, B + k0 * N + col0, rows=tile_k, cols=tile_n, stride=N)
                with pl.stage("compute", after=("load_a", "load_b")):
                    pto.wait_all()                          # wait for this iteration's loads
                    pto.mma(C_tile, A_tile, B_tile, tile_m, tile_n, tile_k)
        pl.run()
        pto.store(C + row0 * N + col0, C_tile, rows=tile_m, cols=tile_n, stride=N)
    return matmul_tile


TILE_M, TILE_N, TILE_K = 64, 64, 32
M, N, K = 256, 128, 1024                 # K is many times the tile: a load-heavy shape

rng = np.random.default_rng(0)
a = rng.standard_normal((M, K)).astype(np.float32)
b = rng.standard_normal((K, N)).astype(np.float32)
d_a, d_b, d_c = pto.alloc_tensor(a.nbytes), pto.alloc_tensor(b.nbytes), pto.alloc_tensor(M * N * 4)
pto.memcpy_h2d(d_a, a)
pto.memcpy_h2d(d_b, b)
grid = (N // TILE_N, M // TILE_M, 1)
args = (d_a, d_b, d_c, M, N, K, TILE_M, TILE_N, TILE_K)

# the reference in float64: numpy's float32 matmul rounds differently on different CPUs
# (its BLAS kernels sum in different orders), the exact product does not
ref = a.astype(np.float64) @ b.astype(np.float64)
cycles = {}
for depth in (1, 2):
    prof = pto.profile(make_matmul(depth), grid=grid, block=(32, 1, 1), args=args)
    c = np.empty((M, N), np.float32)
    pto.memcpy_d2h(c, d_c)
    assert np.allclose(c, ref, rtol=1e-4, atol=1e-3), np.abs(c - ref).max()
    cycles[depth] = prof.total_cycles
    util = prof.pipe_utilization()
    print(f"depth={depth}: {prof.total_cycles} cycles, load pipe busy {util['load']:.0%}, "
          f"mma pipe busy {util['mma']:.0%} of the time; C matches numpy "
          f"(max |err| {np.abs(c - ref).max():.2e})")

print(f"pypto: pipeline_matmul {M}x{N}x{K} passed; depth=2 speed-up over depth=1: "
      f"{cycles[1] / cycles[2]:.2f}x ({100 * (1 - cycles[2] / cycles[1]):.0f}% fewer cycles)")
print(prof.cycle_breakdown())
