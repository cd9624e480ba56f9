"""pto.tprefetch: pto-isa's TPREFETCH into a Vec tile as A2/A3 builds it (include/pto/npu/a2a3/
TPrefetch.hpp at pto-isa 3186c381; isa/57_prefetch.toml; frontend/prefetch_builtins.py).

The header copies a rows x cols GM slice (rows `stride` elements apart) to the start of dst: one
TLoadInstrGm2ub when the slice's bytes fit the tile's Rows x Cols, else one per chunk of at most
Rows rows x Cols columns, row chunks outer, each to dst's first word. copy_gm_to_ubuf_align with
ub gap 0 fills whole 32-byte blocks a burst, so a DMA's rows of n elements land
ceil(n * sizeof / 32) * 32 bytes apart. Each DMA is one TPREFETCH record, priced as a TLOAD of its
bytes (latency_tables/ascend910b.toml: TLOAD's latency 307 + ceil(B / gm_to_ub_bytes_per_cycle
58.6), less l2_miss_extra_latency 150 when every L2 line it reads hits), and the L2 keeps the
lines it reads, so a later TLOAD of them hits. pto-isa has no on-device st suite of TPREFETCH
(tests/npu/a2a3 has only tprefetch_async, the SDMA form); its CPU suite's tile-to-tile form is
the CPU simulation's only and is not built here.
"""
import math

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.runtime.device import DEFAULT_BLOCK

from aicore_runs import compile_error_at, host_copy, tiles_then_call
from engine_compare import assert_engines_agree, both_executors, same_words, tensor_values


@pto.kernel(sync="manual")
def fits(X, O):
    """A 4 x 8 float32 slice (128 bytes, rows 32 elements apart) into a 4 x 16 tile (256 bytes)."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            pto.texpands(d, -1.0)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
            pto.tprefetch(d, X, rows=4, cols=8, stride=32)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(O, d)


@pto.kernel(sync="manual")
def chunked(X, O):
    """A 3 x 20 float16 slice (120 bytes, dense) into a 2 x 16 tile (64 bytes)."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(2, 16, pto.float16, loc=pto.Vec)
            pto.tprefetch(d, X, rows=3, cols=20)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(O, d)


@pto.kernel
def run_time_stride(X, O, s, off):
    """An 8 x 24 float32 slice at X + off, rows s apart (both run-time values), into a 4 x 16 tile."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, X + off, rows=8, cols=24, stride=s)
            pto.tstore(O, d)


@pto.kernel(sync="manual")
def prefetch_then_load(P, X, O):
    """Prefetch P's first 16 x 64 float32 (4096 bytes) into d, wait for MTE2 to drain, TLOAD
    X's into x (the same bytes when P is X)."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, P)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.tload(x, X)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(O, x)


@pto.kernel(sync="manual")
def read_unflagged(X, O):
    """A V op reads the prefetched tile with no MTE2 -> V flag between them."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            y = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, X)
            pto.tadds(y, d, 1.0)  # RACE
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, y)


@pto.kernel
def read_auto(X, O):
    """The same under sync="auto" (the default)."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            y = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, X)
            pto.tadds(y, d, 1.0)
            pto.tstore(O, y)


@pto.kernel
def prefetch_only(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, X)


@pto.kernel
def load_only(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            pto.tload(d, X)


@pto.kernel
def refused_mat(A):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        pto.tprefetch(m, A)


@pto.kernel
def refused_run_time_rows(A):
    with pto.vector():
        d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
        for i in range(pto.cast(A[0], pto.int32)):
            pto.tprefetch(d, A, rows=i + 1)


@pto.kernel
def refused_overflow(A):
    with pto.vector():
        d = pto.alloc_tile(2, 16, pto.float32, loc=pto.Vec)
        pto.tprefetch(d, A, rows=16, cols=2)


def _tensor(values, dtype):
    t = pto.alloc_tensor(values.nbytes, dtype)
    pto.memcpy_h2d(t, values)
    return t


def _prefetches(kernel, args):
    return [ins for ins in kernel.program_for(args).instrs if ins.op == "TPREFETCH"]


def test_a_slice_that_fits_is_one_dma_to_the_tiles_start():
    """X = 0, 1, 2, ... as rows of 32; the slice is rows 0..3, columns 0..7 (128 bytes <= the
    tile's 256: isFits). One DMA of 4 bursts of 32 bytes, landing 32 bytes (8 elements) apart:
    dst's elements 0..31 are 0..7, 32..39, 64..71, 96..103, so tile row 0 = [0..7, 32..39], row 1 =
    [64..71, 96..103]; rows 2 and 3 keep texpands' -1."""
    x = _tensor(np.arange(128, dtype=np.float32), pto.float32)
    o = pto.alloc_tensor(64 * 4, pto.float32)
    assert len(_prefetches(fits, (x, o))) == 1
    pto.launch(fits, grid=(1,), args=(x, o), check="all")
    want = np.full((4, 16), -1.0, np.float32)
    want[0] = np.r_[0:8, 32:40]
    want[1] = np.r_[64:72, 96:104]
    np.testing.assert_array_equal(host_copy(o, (4, 16), np.float32), want)


def test_a_larger_slice_is_copied_chunk_by_chunk_each_to_the_tiles_start():
    """X = 0 .. 59 as 3 rows of 20 float16 (120 bytes > the 2 x 16 tile's 64): chunks of at most
    2 rows x 16 columns, row chunks outer: (rows 0-1, cols 0-15), (rows 0-1, cols 16-19),
    (row 2, cols 0-15), (row 2, cols 16-19), four DMAs, each to dst's element 0. A 16-column
    chunk's rows are 32 bytes, so they land as the tile's rows; a 4-column chunk's 8-byte rows
    land 32 bytes (16 elements) apart. In order: dst = X[0:2, 0:16]; elements 0-3 = X[0, 16:20]
    = 16..19 and 16-19 = X[1, 16:20] = 36..39; elements 0-15 = X[2, 0:16] = 40..55; elements 0-3
    = X[2, 16:20] = 56..59. Row 0: 56..59, 44..55; row 1: 36..39, 24..35."""
    x = _tensor(np.arange(60, dtype=np.float16), pto.float16)
    o = pto.alloc_tensor(32 * 2, pto.float16)
    assert [ins.comment.split("(")[1] for ins in _prefetches(chunked, (x, o))] == [
        "DMA 1 of 4: rows 0.., cols 0..)", "DMA 2 of 4: rows 0.., cols 16..)",
        "DMA 3 of 4: rows 2.., cols 0..)", "DMA 4 of 4: rows 2.., cols 16..)"]
    pto.launch(chunked, grid=(1,), args=(x, o), check="all")
    want = np.array([np.r_[56:60, 44:56], np.r_[36:40, 24:36]], np.float16)
    np.testing.assert_array_equal(host_copy(o, (2, 16), np.float16), want)


def test_a_run_time_stride_and_offset_place_each_chunk():
    """X = 0 .. 271, off = 16, s = 32: slice element (r, c) = 16 + 32 r + c; 768 bytes > the
    tile's 256: DMAs (rows 0-3, cols 0-15), (rows 0-3, cols 16-23), (rows 4-7, cols 0-15), (rows
    4-7, cols 16-23), the scalar unit adding r * s + c to the offset. The 8-column chunks' rows are
    32 bytes, so they fill dst's elements 0..31 in order. Row 0 = 16 + 32 x 4 + 16 + 0..7 =
    160..167 then 192..199; row 1 = 224..231, 256..263; rows 2 and 3 the third DMA's: 16 + 32 x 6
    + 0..15 = 208..223 and 240..255. The compiled loop agrees with SimPy."""
    x = _tensor(np.arange(272, dtype=np.float32), pto.float32)
    o = pto.alloc_tensor(256, pto.float32)
    pto.launch(run_time_stride, grid=(1,), args=(x, o, 32, 16), check="all")
    want = np.array([np.r_[160:168, 192:200], np.r_[224:232, 256:264], np.r_[208:224], np.r_[240:256]], np.float32)
    np.testing.assert_array_equal(host_copy(o, (4, 16), np.float32), want)
    assert_engines_agree(run_time_stride, (x, o, 32, 16), (1,), DEFAULT_BLOCK)


def test_both_executors_and_both_modes_write_the_same_bytes():
    """The chunked case in timing and functional mode, numba and reference executors: the
    same HBM bytes, O as the previous test derives."""
    x = _tensor(np.arange(60, dtype=np.float16), pto.float16)
    o = pto.alloc_tensor(32 * 2, pto.float16)
    images = list(both_executors(chunked, (1,), (x, o)).values())
    for image in images[1:]:
        same_words(image, images[0], "the four runs")
    np.testing.assert_array_equal(tensor_values(images[0], o)[:16], np.r_[56:60, 44:56])


def test_a_prefetch_moves_special_values_bit_for_bit():
    """NaN payloads, infinities, -0.0 and a subnormal, float32 and float16: the prefetched tile
    stored back holds the same bits, but for a signalling float32 NaN, which comes back quieted
    (0x7F812345 -> 0x7FC12345) as from a TLOAD: a tile holds its values as float64."""
    f32 = np.array([np.nan, -np.inf, np.inf, -0.0, 1e-45, 3.0, -2.5, 0.0] * 8, np.float32)
    f32.view(np.uint32)[0] = 0x7FC12345
    f32.view(np.uint32)[8] = 0x7F812345
    want32 = f32.copy()
    want32.view(np.uint32)[8] = 0x7FC12345
    f16 = np.array([np.nan, -np.inf, np.inf, -0.0, 6e-8, 3.0, -2.5, 0.0] * 8, np.float16)
    f16.view(np.uint16)[0] = 0x7E01
    for values, want, kernel in ((f32, want32, copy_f32), (f16, f16, copy_f16)):
        dtype = getattr(pto, values.dtype.name)
        x, o = _tensor(values, dtype), pto.alloc_tensor(values.nbytes, dtype)
        pto.launch(kernel, grid=(1,), args=(x, o), check="all")
        assert host_copy(o, (64,), values.dtype).tobytes() == want.tobytes()


@pto.kernel
def copy_f32(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            pto.tprefetch(d, X)
            pto.tstore(O, d)


@pto.kernel
def copy_f16(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 16, pto.float16, loc=pto.Vec)
            pto.tprefetch(d, X)
            pto.tstore(O, d)


def _load_record(prof):
    entry, = [e for e in prof.timeline if e.inst == "TLOAD" and e.lane == "AIV0"]
    return entry


def test_a_tload_after_a_prefetch_of_its_bytes_hits_in_the_l2():
    """16 x 64 float32 = 4096 bytes, ceil(4096 / 58.6) = 70 cycles of bytes. The prefetch of X
    misses (307 + 70 = 377 cycles) and leaves X's lines in the L2, so the TLOAD of X after it
    takes 307 - 150 + 70 = 227 cycles; after a prefetch of another tensor Z the TLOAD misses:
    377. (MTE2 -> S orders the TLOAD after the prefetch has landed.)"""
    m = pto.machine()
    nbytes = 16 * 64 * 4
    transfer = math.ceil(nbytes / m.gm_to_ub_bytes_per_cycle)
    assert (m.latency("TPREFETCH"), m.latency("TLOAD"), m.l2_miss_extra_latency, transfer) == (307, 307, 150, 70)
    x = _tensor(np.arange(1024, dtype=np.float32), pto.float32)
    z = _tensor(np.arange(1024, dtype=np.float32), pto.float32)
    o = pto.alloc_tensor(nbytes, pto.float32)
    warm = pto.profile(prefetch_then_load, grid=(1,), args=(x, x, o))
    pre, = [e for e in warm.timeline if e.inst == "TPREFETCH"]
    assert pre.end - pre.start == 377
    load = _load_record(warm)
    assert load.end - load.start == 227
    cold = pto.profile(prefetch_then_load, grid=(1,), args=(z, x, o))
    load = _load_record(cold)
    assert load.end - load.start == 377
    np.testing.assert_array_equal(host_copy(o, (1024,), np.float32), np.arange(1024, dtype=np.float32))


@pytest.mark.parametrize("case", ["l2 hit", "chunked", "fits"])
def test_the_compiled_loop_runs_it_and_agrees_with_simpy(case):
    """Cycles, records, HBM bytes on the compiled event loop and on SimPy (assert_engines_agree
    requires the fast run to have used the compiled loop): the L2 case with the same tensor (a
    hit), the chunked and the fitting case."""
    x = _tensor(np.arange(1024, dtype=np.float32), pto.float32)
    h = _tensor(np.arange(60, dtype=np.float16), pto.float16)
    o, oh = pto.alloc_tensor(4096, pto.float32), pto.alloc_tensor(64, pto.float16)
    kernel, args = {"l2 hit": (prefetch_then_load, (x, x, o)), "chunked": (chunked, (h, oh)),
                    "fits": (fits, (x, o))}[case]
    assert_engines_agree(kernel, args, (1,), DEFAULT_BLOCK)


def test_racecheck_sees_a_v_op_reading_the_prefetched_tile_without_a_flag():
    """sync="manual" with no MTE2 -> V flag: the TADDS reads d while the prefetch writes it, a
    RaceError naming both; sync="auto" orders them (no report), y = X + 1."""
    x = _tensor(np.arange(64, dtype=np.float32), pto.float32)
    o = pto.alloc_tensor(256, pto.float32)
    with pytest.raises(pto.RaceError, match="TPREFETCH") as err:
        pto.launch(read_unflagged, grid=(1,), args=(x, o), check="race")
        pto.sync()
    assert "TADDS" in str(err.value)
    pto.launch(read_auto, grid=(1,), args=(x, o), check="race")
    np.testing.assert_array_equal(host_copy(o, (64,), np.float32), np.arange(64, dtype=np.float32) + 1)


def test_initcheck_reports_a_tload_of_never_written_gm_but_not_a_prefetch():
    """X is allocated and never written: a TLOAD of it is an UninitializedReadError; the
    prefetch is not reported (the device only warms its cache; dst is temporary)."""
    x, o = pto.alloc_tensor(256, pto.float32), pto.alloc_tensor(256, pto.float32)
    pto.launch(prefetch_only, grid=(1,), args=(x, o), check="initcheck")
    pto.sync()
    with pytest.raises(pto.UninitializedReadError, match="TLOAD"):
        pto.launch(load_only, grid=(1,), args=(x, o), check="initcheck")
        pto.sync()


def test_a_mat_destination_is_refused_at_its_line():
    """A2/A3's TPREFETCH copies into a UB tile only (TPrefetchDoCopy's TLoadInstrGm2ub)."""
    err = compile_error_at(refused_mat, (pto.alloc_tensor(512, pto.float16),),
                           "tile 'm' is in Mat (L1) but TPREFETCH takes dst in Vec", "pto.tprefetch(m, A)")
    assert "TPrefetch.hpp" in str(err)


def test_a_slice_shape_known_only_at_run_time_is_refused():
    """The DMA count is decided when compiling (the header's from its GlobalTensor's shape): a
    run-time rows is not built."""
    compile_error_at(refused_run_time_rows, (pto.alloc_tensor(512, pto.float32),),
                     "pto.tprefetch: rows must be a positive integer known at compile time",
                     "pto.tprefetch(d, A, rows=i + 1)")


def test_a_fitting_slice_whose_dma_would_overrun_the_tile_is_refused():
    """16 x 2 float32 = 128 bytes fits the 2 x 16 tile's 128, so the header issues one DMA; its
    8-byte rows land 32 bytes apart, reaching element 15 x 8 + 2 = 122 of a 32-element tile."""
    compile_error_at(refused_overflow, (pto.alloc_tensor(512, pto.float32),),
                     "the DMA would write past the tile's end", "pto.tprefetch(d, A, rows=16, cols=2)")


@pytest.mark.parametrize("tile, call, message", [
    ("pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec)", "pto.tprefetch(d, A)",
     "tile 'd' holds int32 but 'A' holds float32"),
    ("pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)", "pto.tprefetch(d, A, rows=2, cols=8, stride=4)",
     "stride 4 is shorter than a row of 8 elements"),
    ("pto.alloc_tile(16, 8, pto.float32, loc=pto.Vec, layout=pto.ColMajor)", "pto.tprefetch(d, A)",
     "'d' is not a RowMajor tile"),
])
def test_operands_the_build_does_not_take_are_compile_errors_at_the_call(make_kernels, tile, call, message):
    """Not built: a GM dtype other than the tile's, a ColMajor tile; a constant stride shorter
    than a row is the header's negative gm gap."""
    tiles_then_call(make_kernels, {"d": tile}, call, message)
