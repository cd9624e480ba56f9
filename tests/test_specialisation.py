"""Kernels specialised on the scalar arguments that size their buffers.

``alloc_local(tile_m * tile_k)`` with tile sizes passed as arguments (API.md's tiled matmul)
compiles once per distinct set of those values; other scalars stay runtime registers."""
import re
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto

API_MD = Path(__file__).resolve().parents[2] / "shared" / "API.md"

# API.md's "Tiles and the manual pipeline" kernel, verbatim (kept here too, so the test runs
# where shared/ is not beside the checkout; test_the_copy_is_verbatim compares them)
MATMUL = '''
@pto.kernel
def matmul_tile(A, B, C, M, N, K, tile_m, tile_n, tile_k):
    row0 = pto.get_block_id(1) * tile_m                 # this block's output tile
    col0 = pto.get_block_id(0) * tile_n
    C_tile = pto.alloc_local(tile_m * tile_n)           # accumulator, starts at zero
    with pto.pipeline(depth=2) as pl:                   # depth 2 = double buffering
        for k0 in pl.range(0, K, tile_k):               # iterations that may overlap
            with pl.stage("load_a"):
                A_tile = pto.alloc_local(tile_m * tile_k)
                pto.async_load(A_tile, A + row0 * K + k0, rows=tile_m, cols=tile_k, stride=K)
            with pl.stage("load_b"):                    # no `after`: may overlap load_a
                B_tile = pto.alloc_local(tile_k * tile_n)
                pto.async_load(B_tile, B + k0 * N + col0, rows=tile_k, cols=tile_n, stride=N)
            with pl.stage("compute", after=("load_a", "load_b")):
                pto.wait_all()
                pto.mma(C_tile, A_tile, B_tile, tile_m, tile_n, tile_k)
    pl.run()
    pto.store(C + row0 * N + col0, C_tile, rows=tile_m, cols=tile_n, stride=N)
'''


def test_the_copy_is_verbatim():
    if API_MD.exists():
        text = API_MD.read_text()
        assert MATMUL.strip() in text


def _matmul(kernel, m, n, k, tm, tn, tk):
    rng = np.random.default_rng(m + n + k + tm)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    d_a, d_b, d_c = pto.alloc_tensor(a.nbytes), pto.alloc_tensor(b.nbytes), pto.alloc_tensor(m * n * 4)
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, b)
    args = (d_a, d_b, d_c, m, n, k, tm, tn, tk)
    prof = pto.profile(kernel, grid=(n // tn, m // tm, 1), block=(32, 1, 1), args=args)
    c = np.empty((m, n), np.float32)
    pto.memcpy_d2h(c, d_c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    return prof, args


@pytest.mark.parametrize("depth", [1, 2])
def test_the_api_md_matmul_runs_verbatim(make_kernels, depth):
    mod = make_kernels(MATMUL.replace("depth=2", f"depth={depth}"))
    prof, args = _matmul(mod.matmul_tile, 128, 64, 256, 32, 32, 16)
    listing = mod.matmul_tile.asm(grid=(2, 4, 1), args=args)
    assert "; specialised on tile_m=32, tile_n=32, tile_k=16" in listing
    assert re.search(r"M: int32 \(s\d+\)", listing)          # M stays a runtime scalar


def test_one_program_per_distinct_size(make_kernels):
    mod = make_kernels(MATMUL)
    kernel = mod.matmul_tile
    _matmul(kernel, 128, 64, 256, 32, 32, 16)
    _matmul(kernel, 128, 64, 128, 32, 32, 16)       # other M, N, K: the same program
    assert len(kernel._programs) == 1
    _matmul(kernel, 128, 64, 256, 64, 32, 32)       # other tiles: a second program
    assert len(kernel._programs) == 2


def test_only_sizing_parameters_are_specialised(make_kernels):
    mod = make_kernels('''
@pto.kernel
def k(a, n, rows, cols):
    width = cols * 2
    t = pto.alloc_local(rows * width)
    i = pto.get_global_id()
    if i < n:
        pto.store(a + i, 1.0)
''')
    assert mod.k.size_params == {"rows", "cols"}
