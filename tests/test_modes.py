"""Functional-only mode and timing mode agree on every value for race-free kernels: a shared
corpus of kernels runs in both (as PyMTL3 runs one test class against two models)."""
import numpy as np
import pytest

import pypto_sim as pto

from simt_kernels import CORPUS, make_matmul, vector_add

@pytest.fixture
def corpus(make_kernels):
    return make_kernels(CORPUS)


def test_vector_add_agrees(corpus):
    rng = np.random.default_rng(0)
    a, b = rng.random(1000, dtype=np.float32), rng.random(1000, dtype=np.float32)
    outs = []
    for mode in ("timing", "functional"):
        d_a, d_b, d_o = (pto.alloc_tensor(1024 * 4) for _ in range(3))
        pto.memcpy_h2d(d_a, np.pad(a, (0, 24)))
        pto.memcpy_h2d(d_b, np.pad(b, (0, 24)))
        pto.profile(vector_add, grid=(4, 1, 1), block=(256, 1, 1), args=(d_a, d_b, d_o, 1000), mode=mode)
        outs.append(d_o.numpy())
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0][:1000], a + b)


@pytest.mark.parametrize("kernel", ["staged", "divergent"])
def test_lane_kernels_agree(corpus, kernel):
    n = 300
    src = np.random.default_rng(1).random(n, dtype=np.float32)
    outs, counts = [], []
    for mode in ("timing", "functional"):
        d_src, d_out = pto.alloc_tensor(n * 4), pto.alloc_tensor(512 * 4)
        pto.memcpy_h2d(d_src, src)
        prof = pto.profile(getattr(corpus, kernel), grid=(2, 1, 1), block=(256, 1, 1),
                           args=(d_src, d_out, n), mode=mode)
        outs.append(d_out.numpy())
        counts.append(prof.warp_instructions)
    assert np.array_equal(outs[0], outs[1])
    assert counts[0] == counts[1]          # the same warp-instructions, with and without timing
    assert np.isfinite(outs[0][:n]).all()


def test_tile_kernels_agree(corpus):
    rows, cols = 16, 64
    x = np.random.default_rng(2).standard_normal((rows, cols)).astype(np.float32)
    outs = []
    for mode in ("timing", "functional"):
        d_x, d_y = pto.alloc_tensor(x.nbytes), pto.alloc_tensor(x.nbytes)
        pto.memcpy_h2d(d_x, x)
        pto.profile(corpus.softmax_rows, grid=(rows // 4, 1, 1), block=(32, 1, 1), args=(d_x, d_y, cols), mode=mode)
        outs.append(d_y.numpy().reshape(rows, cols))
    assert np.array_equal(outs[0], outs[1])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(outs[0], e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("depth", [1, 2])
def test_pipelined_matmul_agrees(depth):
    M, N, K, t = 64, 32, 256, 32
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    outs = []
    for mode in ("timing", "functional"):
        d_a, d_b, d_c = pto.alloc_tensor(a.nbytes), pto.alloc_tensor(b.nbytes), pto.alloc_tensor(M * N * 4)
        pto.memcpy_h2d(d_a, a)
        pto.memcpy_h2d(d_b, b)
        pto.profile(make_matmul(depth, t, t, t), grid=(N // t, M // t, 1), block=(32, 1, 1),
                    args=(d_a, d_b, d_c, M, N, K, t, t, t), mode=mode)
        outs.append(d_c.numpy())
    assert np.array_equal(outs[0], outs[1])
    np.testing.assert_allclose(outs[0].reshape(M, N), a @ b, rtol=1e-4, atol=1e-4)


def test_functional_mode_errors(corpus, make_kernels):
    """Bounds, block-barrier deadlocks and endless loops are caught in functional mode too."""
    mod = make_kernels("""
@pto.kernel
def unguarded(a, o):
    i = pto.get_global_id()
    pto.store(o + i, pto.load(a + i))

@pto.kernel
def half(o):
    lid = pto.get_local_id()
    if lid < 32:
        pto.barrier_block()
    pto.store(o + lid, 1.0)

@pto.kernel
def forever(o):
    x = 0
    while True:
        x += 1
""")
    d_a, d_o = pto.alloc_tensor(40 * 4), pto.alloc_tensor(64 * 4)
    with pytest.raises(pto.OutOfBoundsError, match=r"warp 1, lane 8 \(local id 40\) accessed a\[40\]"):
        pto.profile(mod.unguarded, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o), mode="functional")
    with pytest.raises(pto.DeadlockError, match="warp 0 waits at line"):
        pto.profile(mod.half, grid=(1, 1, 1), block=(64, 1, 1), args=(d_o,), mode="functional")
    with pytest.raises(pto.SimulationLimitError, match="executed 1000 instructions"):
        pto.profile(mod.forever, grid=(1, 1, 1), block=(32, 1, 1), args=(d_o,), mode="functional", max_cycles=1000)
    with pytest.raises(pto.LaunchError, match="needs mode='timing'"):
        pto.launch(mod.half, grid=(1, 1, 1), block=(64, 1, 1), args=(d_o,), mode="functional", check="racecheck")


def test_pypto_check_leaves_functional_launches_running_and_says_so(monkeypatch):
    """docs/checking.md: PYPTO_CHECK=all checks an unmodified program. A functional launch in
    it runs (bounds checks only) with a CheckSkippedWarning naming the kernel, instead of the
    LaunchError an explicit check= gets; its timing launches are still checked."""
    from pypto_sim.errors import CheckSkippedWarning
    monkeypatch.setenv("PYPTO_CHECK", "all")
    n = 256
    x = np.arange(n, dtype=np.float32)
    d_a, d_b, d_o = pto.alloc_tensor(n * 4), pto.alloc_tensor(n * 4), pto.alloc_tensor(n * 4)
    pto.memcpy_h2d(d_a, x)
    pto.memcpy_h2d(d_b, x)
    with pytest.warns(CheckSkippedWarning, match="vector_add.*functional"):
        pto.launch(vector_add, grid=(1, 1, 1), block=(n, 1, 1), args=(d_a, d_b, d_o, n), mode="functional")
        pto.sync()
    out = np.empty(n, np.float32)
    pto.memcpy_d2h(out, d_o)
    np.testing.assert_array_equal(out, 2 * x)
    handle = pto.launch(vector_add, grid=(1, 1, 1), block=(n, 1, 1), args=(d_a, d_b, d_o, n))
    pto.sync()
    assert handle.result().total_cycles > 0


TILE_OVERRUNS = """
@pto.kernel
def loads(A, C, r, c):
    T1 = pto.alloc_local(16)
    T2 = pto.alloc_local(16)
    pto.async_load(T2, A, rows=4, cols=4, stride=4)
    pto.async_load(T1, A + 16, rows=r, cols=c, stride=c)
    pto.wait_all()
    pto.store(C, T2, rows=4, cols=4, stride=4)
    pto.wait_all()

@pto.kernel
def product(A, C, m, k):
    At = pto.alloc_local(16)
    Bt = pto.alloc_local(16)
    Ct = pto.alloc_local(16)
    pto.async_load(At, A, rows=4, cols=4, stride=4)
    pto.async_load(Bt, A, rows=4, cols=4, stride=4)
    pto.wait_all()
    pto.mma(Ct, At, Bt, m, 4, k)
    pto.wait_all()
"""


@pytest.mark.parametrize("mode", ["timing", "functional"])
@pytest.mark.parametrize("kernel, args, message", [
    ("loads", (5, 4), r"TLOAD out of bounds: .*tile 'T1' \(dst of tload\) covers \[0, 20\) but its allocation is "
                      r"\[0, 16\)"),
    ("product", (4, 5), r"MMA out of bounds: .*tile 'At' \(a of mma\) covers \[0, 20\) but its allocation is "
                        r"\[0, 16\)"),
    ("product", (0, 4), r"MMA out of bounds: .*tile 'Ct' \(c of mma\) would cover m x n = 0 x 4 words: m must be "
                        r"at least 1"),
    ("loads", (4, 4), r"TLOAD out of bounds: .*rows=4 cols=4 stride=4 from element 16 reaches element 31 of 'A', which "
                      r"has 16 elements"),
])
def test_a_tile_operand_past_its_buffer_stops_both_modes_alike(make_kernels, mode, kernel, args, message):
    """alloc_local(16) holds 16 float32 words: a 5 x 4 load into T1 (20 words) or a k = 5 mma
    reading 4 x 5 of At would run into the next buffer, and m = 0 covers nothing; A holds 16
    elements, so a 4 x 4 load from element 16 reads past it. Each stops the instruction with the
    same OutOfBoundsError in both modes (functional mode checked only the block's L1 area: it
    overwrote T2 and multiplied past At without a word); C, which the first store would write,
    keeps its zeros."""
    k = getattr(make_kernels(TILE_OVERRUNS), kernel)
    A, C = pto.alloc_tensor(64 if args == (4, 4) else 256), pto.alloc_tensor(64)
    pto.memcpy_h2d(A, np.arange(A.nbytes // 4, dtype=np.float32))
    pto.memcpy_h2d(C, np.zeros(16, np.float32))
    with pytest.raises(pto.OutOfBoundsError, match=message):
        pto.launch(k, grid=(1,), block=(32,), args=(A, C, *args), mode=mode)
        pto.sync()
    out = np.ones(16, np.float32)
    pto.memcpy_d2h(out, C)
    assert not out.any()


NEGATIVE_SIZES = """
@pto.kernel
def negative(A, C, m, n):
    a_t = pto.alloc_local(16)
    c_t = pto.alloc_local(16)
    pto.async_load(a_t, A, 64)
    pto.mma(c_t, a_t, a_t, m, m, m)
    pto.texp(c_t, a_t, n)
    pto.store(C, c_t, 64)
"""


@pytest.mark.parametrize("mode", ["timing", "functional"])
@pytest.mark.parametrize("m, n, message", [
    (-1, 16, r"MMA out of bounds: block \(0, 0, 0\), warp 0: tile 'c_t' \(c of mma\) would cover m x n = -1 x -1 "
             r"words: m and n must be at least 1"),
    (-2, 16, r"MMA out of bounds: .*'c_t' \(c of mma\) would cover m x n = -2 x -2 words: m and n must be"),
    (2, -1, r"TEXP out of bounds: block \(0, 0, 0\), warp 0: tile 'c_t' \(dst of texp\) would cover n = -1 words: "
            r"n must be at least 1"),
])
def test_each_tile_size_must_be_positive_on_its_own(make_kernels, mode, m, n, message):
    """The words a tile operand covers are the product of its sizes (mma's c: m x n), but a
    product is no bound check: m = n = k = -1 gives m * n = 1 word, which fits c_t's 16, and
    -2 x -2 = 4 too; the mma must still stop, as m = 0 does, before it computes anything (numpy
    raised its own ValueError 'negative dimensions not allowed' from the tile kernel). So each
    size is checked on its own, in both modes with the same OutOfBoundsError naming the
    instruction's line, the block, the warp and the sizes. The same holds for a vector tile op's
    single size: texp with n = -1 (functional mode took -1 words for 'not a tile operand')."""
    k = make_kernels(NEGATIVE_SIZES).negative
    A, C = pto.to_device(np.ones(16, np.float32)), pto.alloc_tensor(64)
    with pytest.raises(pto.OutOfBoundsError, match=message) as err:
        pto.launch(k, grid=(1,), block=(32,), args=(A, C, m, n), mode=mode)
        pto.sync()
    assert (err.value.line, err.value.block, err.value.warp) == (8 if m < 0 else 9, (0, 0, 0), 0)
    assert err.value.sizes == ({"m": m, "n": m} if m < 0 else {"n": n})
