"""pto.tprefetch against A2/A3's TPrefetch.hpp (pto-isa 3186c381) where a kernel author would
push it: kernel-argument slice shapes, strides the header takes, run-time valid regions, the
L2 (partial overlap, another core's prefetch, eviction), a slice past the tensor's end, a GM race
with a TSTORE, and random shapes against the header re-derived in numpy (`header_dst`).

The header (TPREFETCH_IMPL / TPrefetchCopySlice / TPrefetchDoCopy): a rows x cols slice whose
bytes fit the tile's Rows x Cols is one TLoadInstrGm2ub of rows bursts; otherwise one per chunk
of at most Rows rows x Cols columns, row chunks outer, each to dst's first word, gm gap (st3 -
colChunk) * sizeof, ub gap 0, so a DMA's n-element rows land ceil(n * sizeof / 32) * 32 bytes
apart. Costs (latency_tables/ascend910b.toml): TLOAD's 307 + ceil(bytes / 58.6), less the L2's
150-cycle miss extra when every 512-byte line hits.
"""
import math
import random
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.runtime.device import DEFAULT_BLOCK
from pypto_sim.timing.machine import machine_in_effect

from aicore_runs import compile_error_at, host_copy
from engine_compare import assert_engines_agree, both_executors, error_outcomes, tensor_values


def _tensor(values, dtype):
    t = pto.alloc_tensor(values.nbytes, dtype)
    pto.memcpy_h2d(t, values)
    return t


def _prefetches(kernel, args):
    return [ins for ins in kernel.program_for(args).instrs if ins.op == "TPREFETCH"]


@pto.kernel
def shape_args(X, O, r, c):
    """rows and cols are kernel arguments: the kernel is specialised on their values."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(2, 16, pto.float16, loc=pto.Vec)
            pto.tprefetch(d, X, rows=r, cols=c)
            pto.tstore(O, d)


def test_kernel_argument_rows_and_cols_specialise_the_kernel():
    """X = 0 .. 63 float16. r, c = 3, 20 (120 bytes > the 2 x 16 tile's 64): four DMAs, (rows
    0-1, cols 0-15), (rows 0-1, cols 16-19), (row 2, cols 0-15), (row 2, cols 16-19), each to
    dst's start; the 4-column rows (8 bytes) land 32 bytes = 16 elements apart. In order: dst =
    X[0:32]; elements 0-3 = 16..19, 16-19 = 36..39; elements 0-15 = 40..55; elements 0-3 = 56..59.
    Row 0: 56..59, 44..55; row 1: 36..39, 24..35. r, c = 2, 16 (64 bytes: fits): one DMA of 32-byte
    rows, dst = X[0:32]. The header takes the GlobalTensor's shape at run time; here a kernel
    argument decides it at launch, as an alloc_tile shape's does."""
    x = _tensor(np.arange(64, dtype=np.float16), pto.float16)
    o = pto.alloc_tensor(64, pto.float16)
    assert len(_prefetches(shape_args, (x, o, 3, 20))) == 4
    assert len(_prefetches(shape_args, (x, o, 2, 16))) == 1
    pto.launch(shape_args, grid=(1,), args=(x, o, 3, 20), check="all")
    want = np.array([np.r_[56:60, 44:56], np.r_[36:40, 24:36]], np.float16)
    np.testing.assert_array_equal(host_copy(o, (2, 16), np.float16), want)
    pto.launch(shape_args, grid=(1,), args=(x, o, 2, 16), check="all")
    np.testing.assert_array_equal(host_copy(o, (2, 16), np.float16), np.arange(32, dtype=np.float16).reshape(2, 16))


@pto.kernel
def overlapping_rows(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(2, 16, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, X, rows=4, cols=32, stride=16)
            pto.tstore(O, d)


@pto.kernel
def overlapping_rows_run_time(X, O, s):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(2, 16, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, X, rows=4, cols=32, stride=s)
            pto.tstore(O, d)


def test_a_stride_shorter_than_the_slice_rows_but_not_than_any_dma_is_the_headers():
    """A 4 x 32 float32 slice, rows 16 elements apart (a GlobalTensor whose rows overlap), into a
    2 x 16 tile: 512 bytes > 128, so chunks of 2 rows x 16 columns, each with gm gap (16 - 16) x 4
    = 0, which the header issues. Chunk (r, c) reads X[16 r + c ..] and X[16 (r + 1) + c ..]; the
    last, (2, 16), reads 48..63 and 64..79, and its 64-byte rows fill dst: row 0 = 48..63, row 1 =
    64..79. A constant stride compiles as the same stride at run time runs."""
    x = _tensor(np.arange(80, dtype=np.float32), pto.float32)
    o = pto.alloc_tensor(128, pto.float32)
    want = np.arange(48, 80, dtype=np.float32).reshape(2, 16)
    for kernel, extra in ((overlapping_rows, ()), (overlapping_rows_run_time, (16,))):
        assert len(_prefetches(kernel, (x, o, *extra))) == 4
        pto.launch(kernel, grid=(1,), args=(x, o, *extra), check="all")
        np.testing.assert_array_equal(host_copy(o, (2, 16), np.float32), want)


@pto.kernel
def short_stride_fits(A):
    with pto.vector():
        d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
        pto.tprefetch(d, A, rows=2, cols=8, stride=4)


def test_a_stride_shorter_than_a_fitting_slices_rows_is_refused():
    """2 x 8 fits the 64-element tile: one DMA of 8-element rows, gm gap (4 - 8) x 4 < 0."""
    compile_error_at(short_stride_fits, (pto.alloc_tensor(256, pto.float32),),
                     "stride 4 is shorter than a row of 8 elements", "pto.tprefetch(d, A, rows=2, cols=8, stride=4)")


@pto.kernel
def run_time_valid(A, n):
    with pto.vector():
        d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, valid=(n, 16))
        pto.tprefetch(d, A)


def test_a_default_slice_from_a_run_time_valid_region_asks_for_rows():
    """rows defaults to dst's valid rows, here a run-time value: the error says so and asks
    for rows= (the call passes no rows to blame)."""
    err = compile_error_at(run_time_valid, (pto.alloc_tensor(256, pto.float32), 2),
                           "rows not given, and the valid rows of 'd' (the default) is a value computed while the "
                           "kernel runs", "pto.tprefetch(d, A)")
    assert "pass rows=" in err.hint


@pto.kernel(sync="manual")
def prefetch_then_load_at(X, O, off):
    """Prefetch X's first 16 x 64 float32, wait for MTE2, TLOAD 16 x 64 from X + off."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, X)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.tload(x, X + off)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(O, x)


def _cycles(prof, inst):
    return [e.end - e.start for e in prof.timeline if e.inst == inst]


def test_a_tload_half_over_the_prefetched_lines_pays_the_miss():
    """16 x 64 float32 = 4096 bytes = 8 lines of 512; ceil(4096 / 58.6) = 70. The prefetch misses
    its 8 lines (307 + 70 = 377). A TLOAD from element 512 (byte 2048) covers lines 4..11: 4 hit,
    4 miss, so not every line hits and it costs 377 too; the TSTORE of O write-allocates 8 lines:
    hits 4, misses 8 + 4 + 8 = 20. From element 0 all 8 hit: 307 - 150 + 70 = 227, hits 8, misses
    8 + 8 = 16. Both engines agree."""
    x = _tensor(np.arange(2048, dtype=np.float32), pto.float32)
    o = pto.alloc_tensor(4096, pto.float32)
    for off, load, hits, misses in ((512, 377, 4, 20), (0, 227, 8, 16)):
        prof = pto.profile(prefetch_then_load_at, grid=(1,), args=(x, o, off))
        assert (_cycles(prof, "TPREFETCH"), _cycles(prof, "TLOAD")) == ([377], [load])
        assert (prof.aicore_stats.l2_hits, prof.aicore_stats.l2_misses) == (hits, misses)
        np.testing.assert_array_equal(host_copy(o, (1024,), np.float32), np.arange(off, off + 1024, dtype=np.float32))
        assert_engines_agree(prefetch_then_load_at, (x, o, off), (1,), DEFAULT_BLOCK)


@pto.kernel(sync="manual")
def warm_for_the_next_core(X, Z, O):
    """Block 0 prefetches X; block 1 TLOADs Z twice, one after the other, then X."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            if pto.get_block_id() == 0:
                pto.tprefetch(d, X)
            else:
                pto.tload(d, Z)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
                pto.tload(d, Z + 1024)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
                pto.tload(d, X)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
                pto.tstore(O, d)


def test_another_cores_prefetch_warms_the_shared_l2():
    """The L2 is the chip's: block 0's prefetch (377 cycles from its start, a few cycles in)
    has X's 8 lines in it before block 1, after two 377-cycle loads of Z, loads X: that TLOAD
    hits every line, 227 cycles; Z's loads miss, 377 each. Hits 8; misses 8 (prefetch) + 16 (Z)
    + 8 (the TSTORE) = 32. Both engines agree."""
    x = _tensor(np.arange(1024, dtype=np.float32), pto.float32)
    z = _tensor(np.arange(2048, dtype=np.float32), pto.float32)
    o = pto.alloc_tensor(4096, pto.float32)
    prof = pto.profile(warm_for_the_next_core, grid=(2,), args=(x, z, o))
    assert (_cycles(prof, "TPREFETCH"), _cycles(prof, "TLOAD")) == ([377], [377, 377, 227])
    assert (prof.aicore_stats.l2_hits, prof.aicore_stats.l2_misses) == (8, 32)
    assert_engines_agree(warm_for_the_next_core, (x, z, o), (2,), DEFAULT_BLOCK)


@pto.kernel(sync="manual")
def evicted(X, Z, O):
    """Prefetch X (8 lines), TLOAD Z (8 other lines), TLOAD X, each after the one before."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, X)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.tload(x, Z)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.tload(x, X)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(O, x)


@pytest.mark.parametrize("l2_bytes, last_load", [(16 * 512, 227), (12 * 512, 377)])
def test_a_prefetch_evicted_by_a_later_tload_no_longer_hits(l2_bytes, last_load):
    """An L2 of 16 lines holds X's 8 and Z's 8: the TLOAD of X hits, 227. Of 12 lines, Z's
    load evicts X's 4 least recently used lines (0..3): the TLOAD of X misses line 0, 377. Both
    engines agree."""
    x = _tensor(np.arange(1024, dtype=np.float32), pto.float32)
    z = _tensor(np.arange(1024, dtype=np.float32), pto.float32)
    o = pto.alloc_tensor(4096, pto.float32)
    small = pto.machine().with_overrides({"l2.l2_bytes": l2_bytes}, source="test: a small L2")
    with machine_in_effect(small):
        prof = pto.profile(evicted, grid=(1,), args=(x, z, o))
        assert (_cycles(prof, "TPREFETCH"), _cycles(prof, "TLOAD")) == ([377], [377, last_load])
        assert_engines_agree(evicted, (x, z, o), (1,), DEFAULT_BLOCK)


@pto.kernel
def past_the_end(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(2, 16, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, X, rows=4, cols=16)
            pto.tstore(O, d)


def test_a_slice_past_the_tensors_end_is_an_out_of_bounds_error_at_its_line():
    """X has 63 elements; the 4 x 16 slice is two DMAs of 2 x 16, the second reading elements
    32..63: element 63 is past the end. The same OutOfBoundsError, naming TPREFETCH and the line,
    on both engines, both executors and in functional mode."""
    x = _tensor(np.arange(63, dtype=np.float32), pto.float32)
    o = pto.alloc_tensor(128, pto.float32)
    outcomes = error_outcomes(past_the_end, (x, o))
    assert {err for err, _text in outcomes.values()} == {pto.OutOfBoundsError}
    text, = {text for _err, text in outcomes.values()}
    line = Path(__file__).read_text().splitlines().index("            pto.tprefetch(d, X, rows=4, cols=16)") + 1
    assert f"TPREFETCH at line {line} " in text
    assert "rows=2 cols=16 stride=16 from element 32 reach element 63 of" in text and "which has 63" in text


@pto.kernel(sync="manual")
def store_then_prefetch(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            y = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            pto.texpands(y, 2.0)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(X, y)
            pto.tprefetch(d, X)


def test_a_prefetch_of_gm_a_tstore_writes_without_a_flag_is_a_race():
    """The prefetch reads X on MTE2 while the TSTORE may still write it on MTE3: dst may hold
    either, a read-after-write race on GM, as a TLOAD's would be."""
    x = _tensor(np.arange(64, dtype=np.float32), pto.float32)
    with pytest.raises(pto.RaceError, match="read-after-write race on GM tensor") as err:
        pto.launch(store_then_prefetch, grid=(1,), args=(x, pto.alloc_tensor(256, pto.float32)), check="race")
        pto.sync()
    assert "TPREFETCH at line" in str(err.value) and "TSTORE at line" in str(err.value)


def header_dst(x, fill, off, rows, cols, stride, tile_rows, tile_cols, item):
    """dst's elements after TPREFETCH_IMPL of the rows x cols slice at x[off], rows stride
    apart, into a tile holding fill: the header's DMAs in order, each to dst's start, rows
    ceil(n * item / 32) * 32 bytes apart."""
    dst = fill.copy().reshape(-1)

    def dma(r0, c0, nr, nc):
        pitch = math.ceil(nc * item / 32) * 32 // item
        for i in range(nr):
            start = off + (r0 + i) * stride + c0
            dst[i * pitch:i * pitch + nc] = x[start:start + nc]
    if rows * cols <= tile_rows * tile_cols:
        dma(0, 0, rows, cols)
    else:
        for r in range(0, rows, tile_rows):
            for c in range(0, cols, tile_cols):
                dma(r, c, min(rows - r, tile_rows), min(cols - c, tile_cols))
    return dst.reshape(tile_rows, tile_cols)


RANDOM_KERNEL = """
@pto.kernel
def k(X, F, O, s, o):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile({tr}, {tc}, pto.{dt}, loc=pto.Vec)
            pto.tload(d, F)
            pto.tprefetch(d, X + o, rows={rows}, cols={cols}, stride={stride})
            pto.tstore(O, d)
"""


def test_random_shapes_match_the_header_in_every_executor_and_mode(make_kernels):
    """24 random slices (1-, 2- and 4-byte dtypes; tiles of 1..5 rows x 1..4 32-byte blocks;
    slices up to 3x the tile each way; strides == cols or longer, constant or a kernel argument;
    offsets) over a tile holding a fill: timing and functional mode, numba and reference
    executors hold header_dst's words; every fourth case the two engines agree. A slice that fits
    but whose single DMA would overrun the tile is skipped (a CompileError, tests/test_tprefetch.py)."""
    rng = random.Random(54)
    ran = 0
    while ran < 24:
        dt = rng.choice(["int8", "uint8", "int16", "float16", "float32", "int32"])
        item = np.dtype(dt).itemsize
        tr, tc = rng.randint(1, 5), 32 // item * rng.randint(1, 4)
        rows, cols = rng.randint(1, 3 * tr), rng.randint(1, 3 * tc)
        pitch = math.ceil(cols * item / 32) * 32 // item
        if rows * cols <= tr * tc and (rows - 1) * pitch + cols > tr * tc:
            continue
        stride, off = cols + rng.choice([0, rng.randint(1, 40)]), rng.randint(0, 50)
        run_time = rng.random() < 0.5
        kernel = make_kernels(RANDOM_KERNEL.format(tr=tr, tc=tc, dt=dt, rows=rows, cols=cols,
                                                   stride="s" if run_time else stride)).k
        n = off + (rows - 1) * stride + cols
        x = (np.arange(n) % 100 + 1).astype(dt)
        fill = np.full((tr, tc), 7 if dt == "uint8" else -7, dt)
        pdt = getattr(pto, dt)
        args = (_tensor(x, pdt), _tensor(fill, pdt), pto.alloc_tensor(fill.nbytes, pdt), stride, off)
        want = header_dst(x, fill, off, rows, cols, stride, tr, tc, item)
        for way, image in both_executors(kernel, (1,), args).items():
            got = tensor_values(image, args[2]).reshape(tr, tc)
            assert np.array_equal(got, want), (way, dt, tr, tc, rows, cols, stride, off, run_time)
        if ran % 4 == 0:
            assert_engines_agree(kernel, args, (1,), DEFAULT_BLOCK)
        ran += 1
