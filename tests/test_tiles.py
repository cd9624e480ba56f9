"""Tiles and the manual pipeline: values against numpy, hand-computed cycles, overlap.

Hand-computed tests use tests/machines/simple.toml: TLOAD 100 + bytes / 32 B per cycle (core
link; the chip moves 64), TSTORE 50 + bytes / 32, MMA 6 + repeats (1 cycle per 16x16x16 repeat
for float16 inputs, 2 per 16x16x8 repeat for float32), scalar-unit instructions 1 cycle.
"""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.timing.machine import machine_in_effect

from simt_kernels import make_matmul, run_matmul

# ---------------------------------------------------------------- hand-computed cycles
ONE_LOAD = """
@pto.kernel
def one_load(a, o):
    t = pto.alloc_local(64)
    pto.async_load(t, a, 256)
    pto.wait_all()
    pto.store(o, t, 256)
"""


def _tile_tensors(n, dtype=np.float32, seed=0):
    host = np.random.default_rng(seed).standard_normal(n).astype(dtype)
    d_in = pto.alloc_tensor(host.nbytes, dtype=host.dtype)
    d_out = pto.alloc_tensor(host.nbytes, dtype=host.dtype)
    pto.memcpy_h2d(d_in, host)
    return host, d_in, d_out


def test_one_async_load(make_kernels, simple_machine):
    """ALLOC_LOCAL issues at 0, so TLOAD at 1: 64 float32 = 256 bytes take 256 / 32 = 8 cycles on
    the core link (4 on the chip): complete at 1 + 100 + 8 = 109. WAIT_ALL waits until 109,
    the tile store is dispatched at 110 and completes at 110 + 50 + 8 = 168, when warp 0
    retires: 168 cycles."""
    host, d_in, d_out = _tile_tensors(64)
    prof = pto.profile(make_kernels(ONE_LOAD).one_load, grid=(1, 1, 1), block=(32, 1, 1),
                       args=(d_in, d_out))
    ops = {e.inst: (e.start, e.end) for e in prof.timeline}
    assert ops["TLOAD"] == (1, 109)
    assert ops["WAIT_ALL"][0] == 109
    assert ops["TSTORE"] == (110, 168)
    assert prof.total_cycles == 168
    assert np.array_equal(d_out.numpy(), host)


ONE_MMA = """
@pto.kernel
def one_mma(a, o):
    x = pto.alloc_local(256, DTYPE)
    c = pto.alloc_local(256)
    pto.async_load(x, a, 256 * SIZE)
    pto.mma(c, x, x, 16, 16, 16)
    pto.wait_all()
    pto.store(o, c, 1024)
DTYPE = pto.{dtype}
SIZE = {size}
"""


@pytest.mark.parametrize("dtype,size,mma_cycles", [("float32", 4, 6 + 2 * 2), ("float16", 2, 6 + 1)])
def test_one_mma(make_kernels, simple_machine, dtype, size, mma_cycles):
    """A 16x16x16 MMA is 6 cycles of head plus its repeats: float16 inputs are one 16x16x16
    repeat at 1 cycle; float32 inputs are ceil(16/8) = 2 repeats of 16x16x8 at 2 cycles each.
    The MMA waits for the load of its inputs: TLOAD at 2 completes at 2 + 100 + bytes / 32."""
    k = make_kernels(ONE_MMA.format(dtype=dtype, size=size)).one_mma
    x = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float16 if size == 2 else np.float32)
    d_x = pto.alloc_tensor(x.nbytes, dtype=x.dtype)
    d_o = pto.alloc_tensor(1024)
    pto.memcpy_h2d(d_x, x)
    prof = pto.profile(k, grid=(1, 1, 1), block=(32, 1, 1), args=(d_x, d_o))
    ops = {e.inst: (e.start, e.end) for e in prof.timeline}
    load_end = 2 + 100 + 256 * size // 32
    assert ops["TLOAD"] == (2, load_end)
    assert ops["MMA"] == (load_end, load_end + mma_cycles)
    xf = x.astype(np.float64)
    assert np.allclose(d_o.numpy().reshape(16, 16), xf @ xf, rtol=1e-5)


TWO_STAGE = """
@pto.kernel
def two_stage(a, o):
    acc = pto.alloc_local(256)
    with pto.pipeline(depth=DEPTH) as pl:
        for k in pl.range(0, 4, 1):
            with pl.stage("load"):
                x = pto.alloc_local(256)
                pto.async_load(x, a + k * 256, 1024)
            with pl.stage("compute", after="load"):
                pto.wait_all()
                pto.mma(acc, x, x, 16, 16, 16)
    pto.wait_all()
    pto.store(o, acc, 1024)
DEPTH = {depth}
"""


@pytest.mark.parametrize("depth", [1, 2])
def test_two_stage_pipeline_of_four_iterations(make_kernels, simple_machine, depth):
    """Each load takes 100 + 1024 / 32 = 132 cycles, each float32 16x16x16 MMA 10. The rules:
    MMA k starts when load k and MMA k-1 are done (RAW on x and on acc, same pipe); load k
    starts when MMA k - depth has finished reading the copy of x it reuses (WAR), and no
    earlier than its dispatch; and the core link moves one load's bytes at a time.
    depth=1: load k+1 starts when MMA k ends, so nothing overlaps: 4 x (132 + 10) cycles of
    tile work back to back. depth=2: loads k and k+1 are in flight together; load k+2 waits
    only for MMA k."""
    x = np.random.default_rng(2).standard_normal((4, 16, 16)).astype(np.float32)
    d_x = pto.alloc_tensor(x.nbytes)
    d_o = pto.alloc_tensor(1024)
    pto.memcpy_h2d(d_x, x)
    prof = pto.profile(make_kernels(TWO_STAGE.format(depth=depth)).two_stage, grid=(1, 1, 1),
                       block=(32, 1, 1), args=(d_x, d_o))
    loads = [(e.start, e.end) for e in prof.timeline if e.inst == "TLOAD"]
    mmas = [(e.start, e.end) for e in prof.timeline if e.inst == "MMA"]
    assert all(end - start == 10 for start, end in mmas)
    for k in range(4):
        assert mmas[k][0] == max(loads[k][1], mmas[k - 1][1] if k else 0)
        if k >= depth:
            assert loads[k][0] == mmas[k - depth][1]
    if depth == 1:
        assert all(end - start == 132 for start, end in loads)
        assert mmas[3][1] - loads[0][0] == 4 * (132 + 10)
    else:
        assert loads[1][0] < loads[0][1]                 # two loads in flight
        assert loads[1][1] == loads[0][0] + 100 + 64     # the second queues on the link
    xf = x.astype(np.float64)
    assert np.allclose(d_o.numpy().reshape(16, 16), sum(m @ m for m in xf), rtol=1e-5)


# ---------------------------------------------------------------- the matmul
@pytest.mark.parametrize("M,N,K,tm,tn,tk", [(32, 32, 32, 32, 32, 32), (64, 96, 256, 32, 32, 32),
                                            (48, 16, 512, 16, 16, 16), (16, 80, 160, 16, 16, 32),
                                            (128, 64, 1024, 64, 32, 64)])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_pipelined_matmul_matches_numpy(M, N, K, tm, tn, tk, depth):
    """Square and non-square shapes, K many times the tile, every depth: C == A @ B (float32,
    rtol 1e-4)."""
    _, c, ref = run_matmul(depth, M, N, K, tm, tn, tk)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)


def test_float16_inputs_accumulate_in_float32():
    """float16 A and B tiles, float32 C: products summed in float32 (here exactly, in float64)."""
    _, c, ref = run_matmul(2, 32, 32, 128, 16, 16, 32, dtype=np.float16)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3)


def _overlaps(a, b):
    return any(s1 < e2 and s2 < e1 for s1, e1 in a for s2, e2 in b)


def test_double_buffering_overlaps_loads_with_mma():
    """A load-heavy shape (K = 32 tiles): depth=2 takes at least 15% fewer cycles than depth=1,
    because in every block the load pipe and the MMA pipe are busy at the same time at depth=2
    and never at depth=1 (each load waits for the MMA that reads the buffer it overwrites)."""
    p1, c1, ref = run_matmul(1, 64, 64, 1024, 32, 32, 32)
    p2, c2, _ = run_matmul(2, 64, 64, 1024, 32, 32, 32)
    np.testing.assert_allclose(c2, ref, rtol=1e-4, atol=1e-4)
    assert p2.total_cycles <= 0.85 * p1.total_cycles, (p1.total_cycles, p2.total_cycles)
    for block in range(4):
        assert not _overlaps(p1.busy_intervals("load", block=block), p1.busy_intervals("mma", block=block))
        assert _overlaps(p2.busy_intervals("load", block=block), p2.busy_intervals("mma", block=block))


# ---------------------------------------------------------------- the article's own form
@pto.kernel
def article_matmul_tile(A, B, C, M, N, K, tile_m, tile_n, tile_k):
    # the article's kernel with its offsets defined: one block per tile_m rows of A, the whole of
    # K and N in one tile, so every tile is contiguous bytes
    offset_a = pto.get_block_id() * tile_m * K
    offset_b = 0
    offset_c = pto.get_block_id() * tile_m * N
    with pto.pipeline() as pl:
        with pl.stage("load_a"):
            A_tile = pto.alloc_local(16 * 48)
            pto.async_load(A_tile, A + offset_a, tile_m * tile_k * 4)
        with pl.stage("load_b", after="load_a"):
            B_tile = pto.alloc_local(48 * 32)
            pto.async_load(B_tile, B + offset_b, tile_k * tile_n * 4)
        with pl.stage("compute", after="load_b"):
            pto.wait_all()
            C_tile = pto.alloc_local(16 * 32)
            pto.mma(C_tile, A_tile, B_tile, tile_m, tile_n, tile_k)
        with pl.stage("store", after="compute"):
            pto.store(C + offset_c, C_tile, tile_m * tile_n * 4)
        pl.run()


def test_article_form_runs_and_gives_the_product():
    """Contiguous-bytes async_load and store, one tile per block, `after="load_a"` chains and
    pl.run() inside the with block: the product is right, and the chain orders the stages."""
    M, N, K, tm = 64, 32, 48, 16
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    d_a, d_b, d_c = pto.alloc_tensor(a.nbytes), pto.alloc_tensor(b.nbytes), pto.alloc_tensor(M * N * 4)
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, b)
    prof = pto.profile(article_matmul_tile, grid=(M // tm, 1, 1), block=(32, 1, 1),
                       args=(d_a, d_b, d_c, M, N, K, tm, N, K))
    np.testing.assert_allclose(d_c.numpy().reshape(M, N), a @ b, rtol=1e-4, atol=1e-4)
    blk0 = {e.inst + str(i): (e.start, e.end) for i, e in enumerate(
        [e for e in prof.timeline if e.block == 0 and e.inst in ("TLOAD", "MMA", "TSTORE")])}
    (la, lb, mm, st) = blk0.values()
    assert la[1] <= lb[0] and lb[1] <= mm[0] and mm[1] <= st[0]


# ---------------------------------------------------------------- L1 accounting
def test_pipeline_buffers_count_against_l1_before_any_data_moves():
    """Every alloc_local in pl.range has depth copies: a 3-deep pipeline of two 128x256 float32
    tiles needs 3 x 2 x 128 KiB of L1, more than a core's 512 KiB: L1CapacityError at launch."""
    k = make_matmul(3, 128, 128, 256)
    d_a, d_b, d_c = (pto.alloc_tensor(128 * 512 * 4) for _ in range(3))
    pto.memcpy_h2d(d_c, np.full(128 * 512, 5.0, np.float32))
    with pytest.raises(pto.L1CapacityError) as err:
        pto.launch(k, grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_b, d_c, 128, 128, 512, 128, 128, 256))
    assert "A_tile" in str(err.value) and "B_tile" in str(err.value)
    assert err.value.requested > err.value.free == 524288
    assert np.all(d_c.numpy() == 5.0)


def test_tile_out_of_bounds_names_the_tensor():
    """A strided load that runs past the end of its tensor is an OutOfBoundsError at dispatch."""
    k = make_matmul(2, 16, 16, 16)
    d_a, d_b, d_c = (pto.alloc_tensor(16 * 16 * 4) for _ in range(3))
    with pytest.raises(pto.OutOfBoundsError, match=r"reaches element 495 of 'A', which has 256 elements"):
        pto.launch(k, grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_b, d_c, 16, 16, 32, 16, 16, 16))
        pto.sync()


def test_pipeline_matmul_example_runs(capsys, monkeypatch):
    """examples/pipeline_matmul.py checks C against numpy and prints both depths' cycles (run
    as __main__ in this process: a process spent a second importing; raising fails the test)."""
    import runpy
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parent.parent / "examples" / "pipeline_matmul.py"
    monkeypatch.setattr(sys, "argv", [str(script)])
    runpy.run_path(str(script), run_name="__main__")
    stdout = capsys.readouterr().out
    assert "depth=1:" in stdout and "depth=2:" in stdout and "speed-up" in stdout


FLAGS = """
@pto.kernel
def flags(a, o):
    x = pto.alloc_local(64)
    y = pto.alloc_local(64)
    pto.tadds(x, x, 1.0, 64)
    if USE_FLAGS:
        pto.set_flag("vector", "load", 0)
        pto.wait_flag("vector", "load", 0)
    pto.async_load(y, a, 256)
    pto.wait_all()
    pto.store(o, y, 256)
USE_FLAGS = {use}
"""


@pytest.mark.parametrize("use", [False, True])
def test_event_flags_order_two_pipes_by_hand(make_kernels, simple_machine, use):
    """The vector op and the load touch different tiles, so nothing orders them: the load
    starts at once. With set_flag(vector -> load) / wait_flag, the load waits until the vector
    pipe has finished (TADDS: 10 + ceil(256 / 256) x 1 = 11 cycles)."""
    host, d_in, d_out = _tile_tensors(64)
    prof = pto.profile(make_kernels(FLAGS.format(use=use)).flags, grid=(1, 1, 1),
                       block=(32, 1, 1), args=(d_in, d_out))
    ops = {e.inst: (e.start, e.end) for e in prof.timeline}
    tadds, tload = ops["TADDS"], ops["TLOAD"]
    assert tadds[1] - tadds[0] == 11
    if use:
        assert tload[0] == tadds[1]
    else:
        assert tload[0] < tadds[1]
    assert np.array_equal(d_out.numpy(), host)


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_wait_flag_without_set_flag_is_a_deadlock(make_kernels, mode):
    """A wait_flag that no set_flag precedes would stall its pipe forever: DeadlockError, in
    functional mode too (which ran such a kernel to its end)."""
    mod = make_kernels("""
@pto.kernel
def lonely(a):
    y = pto.alloc_local(64)
    pto.wait_flag("mma", "load", 3)
    pto.async_load(y, a, 256)
""")
    d = pto.alloc_tensor(256)
    with pytest.raises(pto.DeadlockError, match=r"wait_flag\('mma', 'load', 3\) has no set_flag"):
        pto.launch(mod.lonely, grid=(1, 1, 1), block=(32, 1, 1), args=(d,), mode=mode)
        pto.sync()


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_an_elementwise_tile_op_without_n_covers_dsts_elements(make_kernels, mode):
    """pto.tadd(dst, a, b, n=None): n left out is all of dst's elements, as tcvt's (it was a
    CompileError naming an internal class): 8 floats 0..7 doubled by tadd(t, t, t), then
    tmuls(t, t, 0.5) and texp(t, t) without n give exp(0..7) in float32."""
    mod = make_kernels('''
@pto.kernel
def k(x, y):
    t = pto.alloc_local(8, pto.float32)
    pto.async_load(t, x, nbytes=32)
    pto.wait_all()
    pto.tadd(t, t, t)
    pto.tmuls(t, t, 0.5)
    pto.texp(t, t)
    pto.store(y, t, nbytes=32)
    pto.wait_all()
''')
    x = np.arange(8, dtype=np.float32)
    dx, dy = pto.alloc_tensor(32, pto.float32), pto.alloc_tensor(32, pto.float32)
    pto.memcpy_h2d(dx, x)
    pto.launch(mod.k, grid=(1,), block=(32,), args=(dx, dy), mode=mode)
    got = np.empty(8, np.float32)
    pto.memcpy_d2h(got, dy)
    np.testing.assert_allclose(got, np.exp(x), rtol=2e-7)


@pytest.mark.parametrize("mode", ["timing", "functional"])
@pytest.mark.parametrize("rounding, want", [
    ("rint", [0, 2, 2, 0, -2, 3, -3, 7]),       # nearest, ties to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2
    ("round", [1, 2, 3, -1, -2, 3, -3, 7]),     # nearest, ties away from zero
    ("floor", [0, 1, 2, -1, -2, 2, -4, 7]),
    ("ceil", [1, 2, 3, 0, -1, 3, -3, 7]),
    ("trunc", [0, 1, 2, 0, -1, 2, -3, 7]),
])
def test_tcvt_converts_alloc_local_tiles(make_kernels, mode, rounding, want):
    """pto.tcvt on the article's alloc_local tiles (Triton's layer norm converts this way):
    float32 [0.5, 1.5, 2.5, -0.5, -1.5, 2.75, -3.25, 7] to int32 by each rounding mode, the
    expected integers worked out by hand (the comment of each row says how ties go)."""
    mod = make_kernels(f'''
@pto.kernel
def cvt(x, y):
    a = pto.alloc_local(8, pto.float32)
    b = pto.alloc_local(8, pto.int32)
    pto.async_load(a, x, nbytes=32)
    pto.wait_all()
    pto.tcvt(b, a, mode="{rounding}")
    pto.store(y, b, nbytes=32)
    pto.wait_all()
''')
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.75, -3.25, 7], np.float32)
    dx, dy = pto.alloc_tensor(x.nbytes, pto.float32), pto.alloc_tensor(32, pto.int32)
    pto.memcpy_h2d(dx, x)
    pto.launch(mod.cvt, grid=(1,), block=(32,), args=(dx, dy), mode=mode)
    got = np.empty(8, np.int32)
    pto.memcpy_d2h(got, dy)
    assert got.tolist() == want


def test_tcvt_on_alloc_local_tiles_refuses_what_a2a3_cannot_convert(make_kernels):
    """int32 -> int32 is not one of A2/A3's conversions (TCVT.md lists I32 -> FP32, FP16
    only): a CompileError naming both dtypes."""
    mod = make_kernels('''
@pto.kernel
def cvt(x):
    a = pto.alloc_local(8, pto.int32)
    b = pto.alloc_local(8, pto.int32)
    pto.tcvt(b, a)
''')
    with pytest.raises(pto.CompileError, match="int32 -> int32 is not a conversion"):
        mod.cvt.program_for((pto.alloc_tensor(32),))


STORE_TWICE = """
@pto.kernel
def store_twice(a, o):
    t = pto.alloc_local(64)
    pto.async_load(t, a, 256)
    pto.wait_all()
    pto.store(o, t, 256)
    pto.wait_all()
    pto.store(o, t, 256)
"""


def test_a_tile_store_to_a_line_the_l2_holds_does_not_reach_hbm(make_kernels, simple_machine):
    """The L2 is write-back (docs/timing.md, "L2"); simple.toml with HBM's chip link cut to
    16 B/cycle. 64 float32 = 256 bytes, inside one 512-byte line of o:
    the first TSTORE misses the line, which HBM takes whole (its write-back):
    50 + max(256 / 32 (core link), 512 / 16 (HBM))                                     = 82;
    the second, after wait_all, finds it: HBM moves nothing, the L2's chip link 256 / 256 = 1:
    50 + max(256 / 32, 1)                                                              = 58
    (a write-through L2 would charge the second HBM's 256 / 16 = 16 cycles: 66)."""
    slow = simple_machine.with_overrides({"memory.hbm_chip_bytes_per_cycle": 16.0},
                                         source="test: HBM slower than the core link")
    with machine_in_effect(slow):
        host, d_in, d_out = _tile_tensors(64)
        prof = pto.profile(make_kernels(STORE_TWICE).store_twice, grid=(1, 1, 1), block=(32, 1, 1),
                           args=(d_in, d_out))
    stores = [e.end - e.start for e in prof.timeline if e.inst == "TSTORE"]
    assert stores == [82, 58]
    out = np.empty(64, np.float32)
    pto.memcpy_d2h(out, d_out)
    np.testing.assert_array_equal(out, host)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "uint32", "float16", "int32"])
def test_a_tile_store_into_a_tensor_of_another_dtype_is_refused(make_kernels, dtype):
    """store(O, t, 32) of a float32 tile into a tensor of another dtype: MTE3 copies bytes, as
    async_load's MTE2 does (which refuses the pair already), so it is a CompileError at the
    line; -300.0 went into an int8 tensor as -44, silently."""
    mod = make_kernels('''
@pto.kernel
def k(A, O):
    t = pto.alloc_local(8)
    pto.async_load(t, A, 32)
    pto.store(O, t, 32)
''')
    args = (pto.alloc_tensor(32), pto.alloc_tensor(8 * np.dtype(dtype).itemsize, getattr(pto, dtype)))
    with pytest.raises(pto.CompileError, match=f"store: the tile 't' holds float32 but 'O' holds {dtype}; "
                                               "the store pipe") as info:
        mod.k.program_for(args)
    assert info.value.line == 7
