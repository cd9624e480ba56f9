"""pto.tput and pto.tget: pto-isa's remote transfers as A2/A3 builds them (include/pto/comm/a2a3/
TPut.hpp, TGet.hpp at pto-isa 3186c381; isa/59_comm_transfers.toml; frontend/comm_transfers.py).

Each is header code over instructions the table has: TLOAD (MTE2) of a chunk of the source into a
UB staging tile, TSTORE (MTE3) of it to the destination, flags MTE2 -> MTE3 and MTE3 -> MTE2 and
pipe_barrier(PIPE_ALL). The costs below are the table's (latency_tables/ascend910b.toml): a TLOAD
of B bytes into UB is 307 + ceil(B / 58.6) cycles (gm_to_ub_bytes_per_cycle), a TSTORE from UB 153
+ ceil(B / 109.4) (ub_to_gm_bytes_per_cycle), ALLOC_LOCAL, PIPE_BARRIER, SET_FLAG and WAIT_FLAG one
scalar cycle each. A 64 x 64 float32 slice is 16384 bytes (TLOAD 307 + 280 = 587, TSTORE 153 + 150
= 303); a 16 x 64 float32 chunk is 4096 bytes (TLOAD 307 + 70 = 377, TSTORE 153 + 38 = 191).
"""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.runtime.device import DEFAULT_BLOCK

from aicore_runs import host_copy, tiles_then_call
from engine_compare import assert_engines_agree

MTE2, MTE3 = 3, 4          # the pipes' numbers in the records' aux (ir PIPES)


@pto.kernel
def put_fits(D, S):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(64, 64, pto.float32, loc=pto.Vec)
            pto.tput(D, S, t)


@pto.kernel
def get_four_chunks(D, S):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tget(D, S, t, rows=64, cols=64)


@pto.kernel(sync="manual")
def four_chunks_as_the_header_writes_them(D, S):
    """TGET_IMPL's chunked path for a 64 x 64 slice and a 16 x 64 tile, written out: four
    TgetTransferOnce."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            for r in (0, 16, 32, 48):
                pto.tload(t, S + r * 64)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
                pto.pipe_barrier(pto.PIPE_ALL)
                pto.tstore(D + r * 64, t)
                pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
                pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)


@pto.kernel
def get_three_ping_pong(D, S):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            b = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tget(D, S, a, rows=48, cols=64, pong=b)


@pto.kernel
def get_three_one_tile(D, S):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tget(D, S, a, rows=48, cols=64)


@pto.kernel
def put_eight_halved(D, S):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tput(D, S, t, rows=128, cols=64)


@pto.kernel
def put_irregular_strided(D, S):
    """A 37 x 24 slice of S (rows 40 apart) to D (rows 32 apart) through a 16 x 16 tile of a
    DYNAMIC valid region: 3 x 2 chunks, the last row and column chunks partial."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 16, pto.int32, loc=pto.Vec, valid=(16, 16))
            pto.tput(D, S, t, rows=37, cols=24, dst_stride=32, src_stride=40, atomic="add")


def _ops(kernel, args):
    """(op, flag pipes and event) of the kernel's records but the section's bookkeeping."""
    return [(i.op, tuple(i.aux)) if i.op in ("SET_FLAG", "WAIT_FLAG") else i.op
            for i in kernel.program_for(args).instrs if i.op not in ("EXIT", "ALLOC_LOCAL")]


def _once(event=0):
    """TputTransferOnce / TgetTransferOnce's records."""
    return ["TLOAD", ("SET_FLAG", (MTE2, MTE3, event)), ("WAIT_FLAG", (MTE2, MTE3, event)), "PIPE_BARRIER",
            "TSTORE", ("SET_FLAG", (MTE3, MTE2, event)), ("WAIT_FLAG", (MTE3, MTE2, event))]


def test_a_slice_that_fits_the_tile_is_one_tload_and_one_tstore():
    """TPUT_IMPL's fits path: TLOAD, flag MTE2 -> MTE3, TSTORE, flag MTE3 -> MTE2, no barrier.
    64 x 64 float32: ALLOC_LOCAL (1) + TLOAD 587 + TSTORE 303 = 891 cycles; D holds S."""
    s = np.arange(64 * 64, dtype=np.float32)
    d, src = pto.to_device(np.zeros_like(s)), pto.to_device(s)
    assert _ops(put_fits, (d, src)) == ["TLOAD", ("SET_FLAG", (MTE2, MTE3, 0)), ("WAIT_FLAG", (MTE2, MTE3, 0)),
                                        "TSTORE", ("SET_FLAG", (MTE3, MTE2, 0)), ("WAIT_FLAG", (MTE3, MTE2, 0))]
    prof = pto.profile(put_fits, grid=(1,), args=(d, src))
    assert prof.total_cycles == 1 + 587 + 303
    np.testing.assert_array_equal(host_copy(d, s.shape, np.float32), s)


def test_a_larger_slice_moves_chunk_by_chunk_as_the_header_writes_it():
    """64 rows through a 16-row tile: four chunks (fewer than 8: no halving), each
    TgetTransferOnce. The records, values and cycles are those of the header's code written
    out by hand, on both engines: per chunk TLOAD 377, the barrier 1, TSTORE 191, the next TLOAD
    waiting for the TSTORE (MTE3 -> MTE2): 1 + 4 x (377 + 1 + 191) = 2277."""
    s = np.arange(64 * 64, dtype=np.float32)
    d, src = pto.to_device(np.zeros_like(s)), pto.to_device(s)
    assert _ops(get_four_chunks, (d, src)) == _once() * 4
    mine = pto.profile(get_four_chunks, grid=(1,), args=(d, src)).total_cycles
    np.testing.assert_array_equal(host_copy(d, s.shape, np.float32), s)
    theirs = pto.profile(four_chunks_as_the_header_writes_them, grid=(1,), args=(d, src)).total_cycles
    assert mine == theirs == 1 + 4 * (377 + 1 + 191)
    assert_engines_agree(get_four_chunks, (d, src), (1,), DEFAULT_BLOCK)


def test_a_pong_tile_overlaps_each_chunks_tload_with_the_previous_tstore():
    """TGET(dst, src, pingTile, pongTile), 48 rows in 16-row chunks: chunk 0 into a; chunk 1's
    TLOAD into b is issued with chunk 0's TSTORE (ProcessChunk), chunk 2 into a with chunk 1's
    TSTORE; Flush stores chunk 2. Events: EVENT_ID0 for a, EVENT_ID1 for b. Cycles: two
    ALLOC_LOCAL, then the TLOADs back to back but for the barrier and the TSTORE issued before
    each (2 x 1), the barrier before each TSTORE (3 x 1), the last TSTORE: 2 + 3 x 377 + 2 + 3 +
    191 = 1329; one tile (three TransferOnce) takes 1 + 3 x (377 + 1 + 191) = 1708."""
    s = np.arange(48 * 64, dtype=np.float32) - 7
    d, src = pto.to_device(np.zeros_like(s)), pto.to_device(s)
    w = ("WAIT_FLAG", (MTE2, MTE3, 0))
    assert _ops(get_three_ping_pong, (d, src)) == [
        "TLOAD", ("SET_FLAG", (MTE2, MTE3, 0)),
        w, "PIPE_BARRIER", "TSTORE", "TLOAD", ("SET_FLAG", (MTE3, MTE2, 0)), ("SET_FLAG", (MTE2, MTE3, 1)),
        ("WAIT_FLAG", (MTE3, MTE2, 0)),
        ("WAIT_FLAG", (MTE2, MTE3, 1)), "PIPE_BARRIER", "TSTORE", "TLOAD", ("SET_FLAG", (MTE3, MTE2, 1)),
        ("SET_FLAG", (MTE2, MTE3, 0)), ("WAIT_FLAG", (MTE3, MTE2, 1)),
        w, "PIPE_BARRIER", "TSTORE", ("SET_FLAG", (MTE3, MTE2, 0)), ("WAIT_FLAG", (MTE3, MTE2, 0))]
    assert pto.profile(get_three_ping_pong, grid=(1,), args=(d, src)).total_cycles == 2 + 3 * 377 + 2 + 3 + 191
    np.testing.assert_array_equal(host_copy(d, s.shape, np.float32), s)
    assert pto.profile(get_three_one_tile, grid=(1,), args=(d, src)).total_cycles == 1 + 3 * (377 + 1 + 191)
    assert_engines_agree(get_three_ping_pong, (d, src), (1,), DEFAULT_BLOCK)


def test_eight_whole_tile_chunks_each_go_as_two_overlapping_halves():
    """128 rows through a whole 16 x 64 tile of even rows: 8 chunks (8 to 16:
    canUseIntraTilePingPong), each TputIntraPingPongOneChunk: the tile's two 8-row halves bound
    once (TSUBVIEW each), then per chunk half 0's TLOAD, half 1's TLOAD issued with half 0's
    TSTORE, the flush of half 1. D holds S; racecheck sees no race; both engines agree."""
    s = np.arange(128 * 64, dtype=np.float32) * 0.5
    d, src = pto.to_device(np.zeros_like(s)), pto.to_device(s)
    chunk = ["TLOAD", ("SET_FLAG", (MTE2, MTE3, 0)),
             ("WAIT_FLAG", (MTE2, MTE3, 0)), "PIPE_BARRIER", "TSTORE", "TLOAD", ("SET_FLAG", (MTE3, MTE2, 0)),
             ("SET_FLAG", (MTE2, MTE3, 1)), ("WAIT_FLAG", (MTE3, MTE2, 0)),
             ("WAIT_FLAG", (MTE2, MTE3, 1)), "PIPE_BARRIER", "TSTORE", ("SET_FLAG", (MTE3, MTE2, 1)),
             ("WAIT_FLAG", (MTE3, MTE2, 1))]
    assert _ops(put_eight_halved, (d, src)) == ["TSUBVIEW", "TSUBVIEW"] + chunk * 8
    pto.launch(put_eight_halved, grid=(1,), args=(d, src), check="all")
    np.testing.assert_array_equal(host_copy(d, s.shape, np.float32), s)
    assert_engines_agree(put_eight_halved, (d, src), (1,), DEFAULT_BLOCK)


def test_partial_chunks_strides_and_atomic_add():
    """A 37 x 24 int32 slice, S's rows 40 apart, D's 32 apart, through a 16 x 16 tile of DYNAMIC
    valid region: row chunks 16, 16, 5 by column chunks 16, 8 (six TransferOnce, the tile's valid
    region set to each chunk). atomic='add': D[r, c] = 100 + S[r, c] inside the slice, 100
    elsewhere."""
    s = np.arange(40 * 40, dtype=np.int32).reshape(40, 40)
    d0 = np.full((40, 32), 100, np.int32)
    d, src = pto.to_device(d0), pto.to_device(s)
    assert _ops(put_irregular_strided, (d, src)) == _once() * 6
    pto.launch(put_irregular_strided, grid=(1,), args=(d, src), check="all")
    want = d0.copy()
    want[:37, :24] += s[:37, :24]
    np.testing.assert_array_equal(host_copy(d, (40, 32), np.int32), want)


@pytest.mark.parametrize("tiles, call, message", [
    ({"t": "pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)"}, "pto.tput(A, A, t, rows=100, cols=64)",
     "pto.tput: the 100 x 64 slice does not divide into 't''s static 16 x 64 chunks (\"TPUT chunked: shape3 must "
     "be divisible by tile ValidRow when ValidRow is static\""),
    ({"t": "pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)"}, "pto.tget(A, A, t, rows=8, cols=64)",
     "so include/pto/comm/a2a3/TGet.hpp moves it in one TLOAD of the tile"),
    ({"t": "pto.alloc_tile(16, 64, pto.float32, loc=pto.Mat)"}, "pto.tput(A, A, t)",
     "must be a RowMajor Vec tile"),
    ({"t": "pto.alloc_tile(16, 64, pto.float16, loc=pto.Vec)"}, "pto.tput(A, A, t)",
     "holds float32 but the staging tile 't' holds float16"),
    ({"t": "pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)"}, "pto.tput(A, A, t, atomic='max')",
     "atomic must be None or 'add'"),
    ({"t": "pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)", "u": "pto.alloc_tile(8, 64, pto.float32)"},
     "pto.tput(A, A, t, rows=64, cols=64, pong=u)", "must have the same type and dimensions"),
    ({"t": "pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)", "h": "pto.tsubview(t, 0, 0, 16, 64)"},
     "pto.tput(A, A, t, rows=64, cols=64, pong=h)", "overlap in UB"),
])
def test_bad_calls_are_compile_errors_naming_the_rule(make_kernels, tiles, call, message):
    """Each refusal cites the header's or TLOAD's rule and says what to do."""
    tiles_then_call(make_kernels, tiles, call, message)


def test_a_transfer_outside_the_vector_section_is_refused(make_kernels):
    """The staging tile is in UB: cube code cannot stage through it."""
    mod = make_kernels("\n@pto.kernel\ndef bad(A):\n    with pto.cube():\n"
                       "        t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Mat)\n"
                       "        pto.tget(A, A, t)\n")
    with pytest.raises(pto.CompileError, match="it is vector-core code"):
        mod.bad.program_for((pto.alloc_tensor(4096),))


def test_tget_has_no_atomic_form(make_kernels):
    """TGET_IMPL takes no AtomicType: atomic= is not an argument of pto.tget."""
    with pytest.raises(pto.CompileError, match="atomic"):
        tiles_then_call(make_kernels, {"t": "pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)"},
                        "pto.tget(A, A, t, atomic='add')", None)
