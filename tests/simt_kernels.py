"""Lane (SIMT) kernels that more than one test file runs (kernels need a real source file):
the article's vector_add, the two barrier kernels, the manual-pipeline matmul, and CORPUS,
race-free kernels as source text for the make_kernels fixture."""
import numpy as np

import pypto_sim as pto

# race-free lane kernels as source: test_modes.py runs them in both modes, test_fast_engine.py
# on both engines
CORPUS = """
@pto.kernel
def staged(src, out, n):
    lid = pto.get_local_id()
    i = pto.get_global_id()
    shared = pto.alloc_local(128)
    if lid < 128:
        pto.store(shared + lid, pto.load(src + (i % n)))
    pto.barrier_block()
    pto.store(out + i, pto.load(shared + (lid * 7) % 128) * 2.0)

@pto.kernel
def divergent(src, out, n):
    i = pto.get_global_id()
    if i >= n:
        return
    x = pto.load(src + i)
    acc = 0.0
    for k in range(i % 5):
        if x > 0.5:
            acc = acc + pto.exp(x * 0.1)
            continue
        acc = acc - x
        if acc < -2.0:
            break
    j = 0
    while j < 3 and acc < 10.0:
        acc = acc * 1.5 + 0.25
        j += 1
    out[i] = acc if i % 2 == 0 else pto.sqrt(abs(acc))

@pto.kernel
def softmax_rows(x, y, cols):
    row = pto.get_block_id()
    t = pto.alloc_local(4 * 64)
    m = pto.alloc_local(4)
    e = pto.alloc_local(4 * 64)
    pto.async_load(t, x + row * 4 * cols, rows=4, cols=cols, stride=cols)
    pto.trowmax(m, t, 4, cols)
    pto.trowexpand(e, m, 4, cols)
    pto.tsub(e, t, e, 4 * cols)
    pto.texp(e, e, 4 * cols)
    pto.trowsum(m, e, 4, cols)
    pto.trowexpand(t, m, 4, cols)
    pto.tdiv(e, e, t, 4 * cols)
    pto.store(y + row * 4 * cols, e, rows=4, cols=cols, stride=cols)
    pto.wait_all()
"""


@pto.kernel
def vector_add(a, b, o, n):
    """The article's vector_add: o[i] = a[i] * 1.0 + b[i] for i < n."""
    i = pto.get_global_id()
    if i < n:
        a_val = pto.load(a + i)
        b_val = pto.load(b + i)
        pto.fma(o + i, a_val, 1.0, b_val)


@pto.kernel
def share_warp_barrier(src, out):
    """Lanes 0-127 stage src in shared memory; after a warp barrier() every lane reads
    shared[lid % 128], which warps other than its own may not have written yet."""
    lid = pto.get_local_id()
    shared = pto.alloc_local(128)
    if lid < 128:
        pto.store(shared + lid, pto.load(src + lid))
    pto.barrier()
    pto.store(out + lid, pto.load(shared + lid % 128))


@pto.kernel
def share_block_barrier(src, out):
    """share_warp_barrier with barrier_block(): every lane reads what was staged."""
    lid = pto.get_local_id()
    shared = pto.alloc_local(128)
    if lid < 128:
        pto.store(shared + lid, pto.load(src + lid))
    pto.barrier_block()
    pto.store(out + lid, pto.load(shared + lid % 128))


def make_matmul(depth, tm, tn, tk, in_dtype=pto.float32):
    """The manual-pipeline matmul kernel: a tm x tn block of C per block, K in tk slices,
    A and B slices loaded in two stages that overlap the MMA when depth > 1."""
    @pto.kernel
    def matmul_tile(A, B, C, M, N, K, tile_m, tile_n, tile_k):
        row0 = pto.get_block_id(1) * tile_m
        col0 = pto.get_block_id(0) * tile_n
        C_tile = pto.alloc_local(tm * tn)
        with pto.pipeline(depth=depth) as pl:
            for k0 in pl.range(0, K, tile_k):
                with pl.stage("load_a"):
                    A_tile = pto.alloc_local(tm * tk, in_dtype)
                    pto.async_load(A_tile, A + row0 * K + k0, rows=tile_m, cols=tile_k, stride=K)
                with pl.stage("load_b"):
                    B_tile = pto.alloc_local(tk * tn, in_dtype)
                    pto.async_load(B_tile, B + k0 * N + col0, rows=tile_k, cols=tile_n, stride=N)
                with pl.stage("compute", after=("load_a", "load_b")):
                    pto.wait_all()
                    pto.mma(C_tile, A_tile, B_tile, tile_m, tile_n, tile_k)
        pl.run()
        pto.store(C + row0 * N + col0, C_tile, rows=tile_m, cols=tile_n, stride=N)
    return matmul_tile


def run_matmul(depth, M, N, K, tm, tn, tk, dtype=np.float32, seed=0):
    """Profile make_matmul on random M x K and K x N inputs; returns (profile, C, numpy's
    float64 product)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    d_a = pto.alloc_tensor(a.nbytes, dtype=a.dtype)
    d_b = pto.alloc_tensor(b.nbytes, dtype=b.dtype)
    d_c = pto.alloc_tensor(M * N * 4)
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, b)
    in_dtype = pto.float16 if dtype == np.float16 else pto.float32
    prof = pto.profile(make_matmul(depth, tm, tn, tk, in_dtype), grid=(N // tn, M // tm, 1), block=(32, 1, 1),
                       args=(d_a, d_b, d_c, M, N, K, tm, tn, tk))
    c = d_c.numpy().reshape(M, N)
    return prof, c, a.astype(np.float64) @ b.astype(np.float64)
