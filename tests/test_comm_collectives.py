"""pto.tbroadcast, pto.comm_tgather, pto.comm_tscatter and pto.treduce: pto-isa's collectives as
A2/A3 builds them (include/pto/comm/a2a3/TBroadCast.hpp, TGather.hpp, TScatter.hpp, TReduce.hpp
at pto-isa 3186c381; isa/61_comm_collectives.toml; frontend/comm_collectives.py), over the ranks
of a pto.parallel_group (frontend/comm_group.py). The kernels are sync="manual": only the
header's flags order the pipes, and check="all" finds no race.

Each is header code over instructions the table has. The costs below are the table's
(latency_tables/ascend910b.toml): a TLOAD of B bytes into UB is 307 + ceil(B / 58.6) cycles, of
which the MTE2 queue is held ceil(B / 58.6) (the next transfer starts then, transfers retire in
order); a TSTORE from UB 153 + ceil(B / 109.4), the MTE3 queue held ceil(B / 109.4); ALLOC_LOCAL
one scalar cycle; TADD (no row in pto-isa's formula table: the CCE mock's vadd) head 10 when V is
idle + ceil(2.11 a 256-byte repeat), its tail 14 paid at the next sync on V (a set_flag). A 64 x
64 float32 slice is 16384 bytes (TLOAD 307 + 280 = 587, TSTORE 153 + 150 = 303, MTE3 held 150);
a 16 x 64 float32 chunk 4096 bytes (TLOAD 307 + 70 = 377, MTE2 held 70; TSTORE 153 + 38 = 191,
MTE3 held 38); TADD of 16 x 64 float32 (16 repeats): 10 + ceil(33.76) = 44.
"""
import re

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.ir.printer import format_instr
from pypto_sim.runtime.device import DEFAULT_BLOCK

from aicore_runs import host_copy, tiles_then_call
from engine_compare import assert_engines_agree

MTE2, MTE3, V = 3, 4, 1          # the pipes' numbers in the records' aux (ir PIPES)
N = 4096                         # elements of one rank's 64 x 64 float32 buffer


@pto.kernel(sync="manual")
def broadcast_fits(W, S):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(64, 64, pto.float32, loc=pto.Vec)
            pto.tbroadcast(pto.parallel_group((W, W + N), 0), S, t)


@pto.kernel(sync="manual")
def broadcast_chunks(W, S):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tbroadcast(pto.parallel_group((W, W + N), 0), S, t, rows=64, cols=64)


@pto.kernel(sync="manual")
def broadcast_chunks_as_the_header_writes_them(W, S):
    """TBROADCAST_IMPL's chunked path for a 64 x 64 slice, a 16 x 64 tile and two ranks, written
    out: four TbroadcastChunkTransfer."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            for r in (0, 16, 32, 48):
                pto.tload(t, S + r * 64)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
                pto.tstore(W + r * 64, t)
                pto.tstore(W + N + r * 64, t)
                pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
                pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)


@pto.kernel(sync="manual")
def broadcast_ping_pong(W, S):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            u = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tbroadcast(pto.parallel_group([W + r * N for r in range(2)], 0), S, t, rows=64, cols=64, pong=u)


@pto.kernel(sync="manual")
def gather_fits(W, D):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.comm.tgather(pto.parallel_group((W, W + N), 1), D, t)


@pto.kernel(sync="manual")
def gather_ping_pong(W, D):
    """Three ranks' 50 x 40 slices (rows 64 apart) through two 16 x 64 tiles of DYNAMIC valid
    region 16 x 32: per rank row chunks 16, 16, 16, 2 by column chunks 32, 8."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec, valid=(16, 32))
            b = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec, valid=(16, 32))
            me = pto.get_block_id()
            g = pto.parallel_group([W + r * N for r in range(3)], me)
            pto.comm.tgather(g, D + me * 150 * 48, a, rows=50, cols=40, src_stride=64, dst_stride=48, pong=b)


@pto.kernel(sync="manual")
def scatter_chunks(S, W):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec, valid=(16, 32))
            g = pto.parallel_group([W + r * N for r in range(3)], 2)
            pto.comm.tscatter(g, S, a, rows=50, cols=40, src_stride=48, dst_stride=64)


@pto.kernel(sync="manual")
def reduce_fits(W, D):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            b = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.treduce(pto.parallel_group((W, W + N), 0), D, a, b, "sum")


@pto.kernel(sync="manual")
def reduce_three(W, D):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            b = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.treduce(pto.parallel_group((W, W + N, W + 2 * N), 1), D, a, b, "sum")


@pto.kernel(sync="manual")
def reduce_three_ping_pong(W, D):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            b = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            c = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.treduce(pto.parallel_group((W, W + N, W + 2 * N), 1), D, a, b, "sum", pong=c)


@pto.kernel(sync="manual")
def reduce_max_run_time_root(W, D):
    """Each block the root of its own reduction of the three ranks' 40 x 64 int32 slices into
    its 40 rows of D, through 16 x 64 tiles of DYNAMIC valid region: chunks of 16, 16, 8 rows."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            me = pto.get_block_id()
            a = pto.alloc_tile(16, 64, pto.int32, loc=pto.Vec, valid=(16, 64))
            b = pto.alloc_tile(16, 64, pto.int32, loc=pto.Vec, valid=(16, 64))
            c = pto.alloc_tile(16, 64, pto.int32, loc=pto.Vec, valid=(16, 64))
            g = pto.parallel_group([W + r * N for r in range(3)], me)
            pto.treduce(g, D + me * 40 * 64, a, b, "max", rows=40, cols=64, pong=c)


@pto.kernel(sync="manual")
def reduce_min_run_time_root(W, D):
    """reduce_max_run_time_root's min, with one recv tile."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            me = pto.get_block_id()
            a = pto.alloc_tile(16, 64, pto.int32, loc=pto.Vec, valid=(16, 64))
            b = pto.alloc_tile(16, 64, pto.int32, loc=pto.Vec, valid=(16, 64))
            g = pto.parallel_group([W + r * N for r in range(3)], me)
            pto.treduce(g, D + me * 40 * 64, a, b, "min", rows=40, cols=64)


def _ops(kernel, args):
    """(op, flag pipes and event) of the kernel's records but the section's bookkeeping."""
    return [(i.op, tuple(i.aux)) if i.op in ("SET_FLAG", "WAIT_FLAG") else i.op
            for i in kernel.program_for(args).instrs if i.op not in ("EXIT", "ALLOC_LOCAL")]


def _moves(kernel, args):
    """(op, 'tensor[offset]') of the kernel's TLOADs and TSTOREs, in order."""
    prog = kernel.program_for(args)
    return [(i.op, re.search(r"\w+\[\w+\]", format_instr(prog, pc)).group()) for pc, i in enumerate(prog.instrs)
            if i.op in ("TLOAD", "TSTORE")]


def sw(src, dst, event=0):
    """A set_flag / wait_flag pair."""
    return [("SET_FLAG", (src, dst, event)), ("WAIT_FLAG", (src, dst, event))]


def test_a_broadcast_that_fits_is_one_tload_and_a_tstore_per_rank():
    """TBROADCAST_IMPL's fitting path: TLOAD, MTE2 -> MTE3, then per rank TSTORE, MTE3 -> MTE2;
    no barrier. 64 x 64 float32 to two ranks: ALLOC_LOCAL 1 + TLOAD 587, rank 0's TSTORE holds
    MTE3 150 cycles, rank 1's starts then and lands 303 later: 1 + 587 + 150 + 303 = 1041."""
    s = np.arange(N, dtype=np.float32)
    w, src = pto.to_device(np.zeros(2 * N, np.float32)), pto.to_device(s)
    assert _ops(broadcast_fits, (w, src)) == ["TLOAD", *sw(MTE2, MTE3), "TSTORE", *sw(MTE3, MTE2),
                                              "TSTORE", *sw(MTE3, MTE2)]
    assert pto.profile(broadcast_fits, grid=(1,), args=(w, src)).total_cycles == 1 + 587 + 150 + 303
    np.testing.assert_array_equal(host_copy(w, (2, N), np.float32), [s, s])


def test_a_larger_broadcast_moves_chunk_by_chunk_as_the_header_writes_it():
    """64 rows through a 16-row tile to two ranks: four TbroadcastChunkTransfer (TLOAD, MTE2 ->
    MTE3, a TSTORE per rank, MTE3 -> MTE2), the records, values and cycles of the header's code
    written out by hand, on both engines: per chunk TLOAD 377, rank 0's TSTORE holding MTE3 38,
    rank 1's landing 191 later, the next TLOAD waiting for it: 1 + 4 x (377 + 38 + 191) = 2425."""
    s = np.arange(N, dtype=np.float32) - 9
    w, src = pto.to_device(np.zeros(2 * N, np.float32)), pto.to_device(s)
    assert _ops(broadcast_chunks, (w, src)) == ["TLOAD", *sw(MTE2, MTE3), "TSTORE", "TSTORE", *sw(MTE3, MTE2)] * 4
    mine = pto.profile(broadcast_chunks, grid=(1,), args=(w, src)).total_cycles
    np.testing.assert_array_equal(host_copy(w, (2, N), np.float32), [s, s])
    theirs = pto.profile(broadcast_chunks_as_the_header_writes_them, grid=(1,), args=(w, src)).total_cycles
    assert mine == theirs == 1 + 4 * (377 + 38 + 191)
    assert_engines_agree(broadcast_chunks, (w, src), (1,), DEFAULT_BLOCK)


def test_a_pong_tile_overlaps_each_chunks_tload_with_the_previous_chunks_tstores():
    """TBROADCAST(group, src, ping, pong), 4 chunks of 16 rows to two ranks
    (TbroadcastPingPongProcessChunk / Epilogue, no barrier; ping EVENT_ID0, pong EVENT_ID1).
    Cycles: after two ALLOC_LOCAL, chunk 0's TLOAD 2..379, chunk 1's 72..449 (issued once 0's 70
    cycles of bytes are); chunk 0's TSTOREs 379..570 and 417..608, chunk 1's 455..646 and
    493..684; chunk 2's TLOAD waits for chunk 0's TSTOREs (MTE3 -> MTE2, event 0): 608..985,
    chunk 3's for chunk 1's (event 1): 684..1061; chunk 2's TSTOREs 985.. and 1023.., chunk 3's
    1061.. and 1099..1290 = 1099 + 191. One tile takes 2425."""
    s = np.arange(N, dtype=np.float32) * 3
    w, src = pto.to_device(np.zeros(2 * N, np.float32)), pto.to_device(s)

    def step(here, there):
        return [("WAIT_FLAG", (MTE2, MTE3, there)), "TSTORE", "TSTORE", "TLOAD", ("SET_FLAG", (MTE3, MTE2, there)),
                ("SET_FLAG", (MTE2, MTE3, here)), ("WAIT_FLAG", (MTE3, MTE2, there))]
    assert _ops(broadcast_ping_pong, (w, src)) == [
        "TLOAD", ("SET_FLAG", (MTE2, MTE3, 0)), *step(1, 0), *step(0, 1), *step(1, 0),
        ("WAIT_FLAG", (MTE2, MTE3, 1)), "TSTORE", "TSTORE", *sw(MTE3, MTE2, 1)]
    pto.launch(broadcast_ping_pong, grid=(1,), args=(w, src), check="all")
    np.testing.assert_array_equal(host_copy(w, (2, N), np.float32), [s, s])
    assert pto.profile(broadcast_ping_pong, grid=(1,), args=(w, src)).total_cycles == 1099 + 191
    assert_engines_agree(broadcast_ping_pong, (w, src), (1,), DEFAULT_BLOCK)


def test_a_gather_that_fits_goes_rank_by_rank():
    """TgatherSimple: per rank TLOAD of its tensor, MTE2 -> MTE3, TSTORE to dst's rows r * 16..,
    MTE3 -> MTE2; the root (1) changes nothing but the assert. 16 x 64 float32 from two ranks:
    1 + 2 x (377 + 191) = 1137."""
    x = np.arange(2 * N, dtype=np.float32).reshape(2, N)
    w, d = pto.to_device(x), pto.to_device(np.zeros(2 * 1024, np.float32))
    assert _ops(gather_fits, (w, d)) == ["TLOAD", *sw(MTE2, MTE3), "TSTORE", *sw(MTE3, MTE2)] * 2
    assert _moves(gather_fits, (w, d)) == [("TLOAD", "W[0]"), ("TSTORE", "D[0]"), ("TLOAD", "W[4096]"),
                                           ("TSTORE", "D[1024]")]
    assert pto.profile(gather_fits, grid=(1,), args=(w, d)).total_cycles == 1 + 2 * (377 + 191)
    np.testing.assert_array_equal(host_copy(d, (2, 1024), np.float32), x[:, :1024])


def test_gather_ping_pong_runs_over_every_ranks_chunks_and_scatter_undoes_it():
    """The ping-pong gather: one TgatherPingPongState over rank 0's 8 chunks, then rank 1's, then
    rank 2's (24 ProcessChunk, one Epilogue: 24 TLOADs, 24 TSTOREs), rank r's 50 x 40 slice at
    dst row 50 r (dst rows 48 apart); run by each of three blocks into a dst of its own (its
    run-time root checked by a CHECK), check="all" clean. The scatter of the gathered tensor
    with one tile (rank by rank, 8 chunks each: TLOAD, flags, TSTORE, flags) gives the slices
    back; the words around them keep their values."""
    x = np.arange(3 * N, dtype=np.float32).reshape(3, 64, 64) % 1013
    w, d = pto.to_device(x), pto.to_device(np.full((3, 150, 48), -1, np.float32))
    ops = _ops(gather_ping_pong, (w, d))
    assert "CHECK" in ops and (ops.count("TLOAD"), ops.count("TSTORE")) == (24, 24)
    pto.launch(gather_ping_pong, grid=(3,), args=(w, d), check="all")
    got = host_copy(d, (3, 150, 48), np.float32)
    np.testing.assert_array_equal(got[:, :, :40], [x[:, :50, :40].reshape(150, 40)] * 3)
    assert (got[:, :, 40:] == -1).all()
    back = pto.to_device(np.full((3, 64, 64), 7, np.float32))
    assert _ops(scatter_chunks, (d, back)) == ["TLOAD", *sw(MTE2, MTE3), "TSTORE", *sw(MTE3, MTE2)] * 24
    pto.launch(scatter_chunks, grid=(1,), args=(d, back), check="all")
    want = np.full((3, 64, 64), 7, np.float32)
    want[:, :50, :40] = x[:, :50, :40]
    np.testing.assert_array_equal(host_copy(back, (3, 64, 64), np.float32), want)
    assert_engines_agree(gather_ping_pong, (w, d), (3,), DEFAULT_BLOCK)


def test_a_reduce_that_fits():
    """TreduceSimple, two ranks, root 0: TLOAD of the root's tensor into acc, MTE2 -> V; TLOAD of
    rank 1's into recv, MTE2 -> V on event 1, TADD(acc, acc, recv), V -> MTE2; V -> MTE3, TSTORE,
    MTE3 -> MTE2. Cycles: two ALLOC_LOCAL, acc's TLOAD from 2, recv's from 2 + 70 landing at
    72 + 377 = 449, TADD 44, its tail 14 at the set_flag, TSTORE 191: 449 + 44 + 14 + 191 = 698."""
    x = np.arange(2 * N, dtype=np.float32).reshape(2, N) % 97
    w, d = pto.to_device(x), pto.to_device(np.zeros(1024, np.float32))
    assert _ops(reduce_fits, (w, d)) == ["TLOAD", *sw(MTE2, V), "TLOAD", *sw(MTE2, V, 1), "TADD", *sw(V, MTE2),
                                         *sw(V, MTE3), "TSTORE", *sw(MTE3, MTE2)]
    assert pto.profile(reduce_fits, grid=(1,), args=(w, d)).total_cycles == 449 + 44 + 14 + 191
    np.testing.assert_array_equal(host_copy(d, (1024,), np.float32), x[0, :1024] + x[1, :1024])


def test_reduce_skips_the_root_and_ping_pong_overlaps_the_next_tload_with_the_op():
    """Three ranks, root 1: acc takes rank 1's slice, then ranks 0 and 2 in order
    (detail::GetRemoteRank). One recv tile: the second remote TLOAD waits for the first TADD
    (V -> MTE2): 449 + 44 + 14 + 377 + 44 + 14 + 191 = 1133. With pong= (TreduceSimplePingPong):
    both remote TLOADs are issued at once on events 1 and 2 (three ALLOC_LOCAL: acc from 3, the
    ping tile from 73, the pong tile from 143 landing at 520), the first TADD 450..494 and its
    tail, the second TADD from 520: 520 + 44 + 14 + 191 = 769."""
    x = np.arange(3 * N, dtype=np.float32).reshape(3, N) % 89
    w, d = pto.to_device(x), pto.to_device(np.zeros(1024, np.float32))
    order = [("TLOAD", "W[4096]"), ("TLOAD", "W[0]"), ("TLOAD", "W[8192]"), ("TSTORE", "D[0]")]
    assert _moves(reduce_three, (w, d)) == _moves(reduce_three_ping_pong, (w, d)) == order
    assert _ops(reduce_three_ping_pong, (w, d)) == [
        "TLOAD", ("SET_FLAG", (MTE2, V, 0)), "TLOAD", ("SET_FLAG", (MTE2, V, 1)), ("WAIT_FLAG", (MTE2, V, 0)),
        "TLOAD", ("SET_FLAG", (MTE2, V, 2)), ("WAIT_FLAG", (MTE2, V, 1)), "TADD", *sw(V, MTE2),
        ("WAIT_FLAG", (MTE2, V, 2)), "TADD", *sw(V, MTE3), "TSTORE", *sw(MTE3, MTE2)]
    want = x[1, :1024] + x[0, :1024] + x[2, :1024]
    for kernel, cycles in ((reduce_three, 449 + 44 + 14 + 377 + 44 + 14 + 191), (reduce_three_ping_pong, 769)):
        assert pto.profile(kernel, grid=(1,), args=(w, d)).total_cycles == cycles
        np.testing.assert_array_equal(host_copy(d, (1024,), np.float32), want)
    assert_engines_agree(reduce_three_ping_pong, (w, d), (1,), DEFAULT_BLOCK)


@pytest.mark.parametrize("kernel, op", [(reduce_max_run_time_root, "TMAX"), (reduce_min_run_time_root, "TMIN")],
                         ids=["max_ping_pong", "min"])
def test_chunked_reduce_with_a_run_time_root(kernel, op):
    """Three blocks, each the root of the same three ranks (ParallelGroup's root = the block):
    its root checked by a CHECK, chunks of 16, 16 and 8 rows (the tiles' valid regions set chunk
    by chunk), the root's slice in acc, the two others picked by selects on the run-time root
    (two for the root, one for each remote rank); every block's 40 rows of D hold the elementwise
    max (ping-pong form) or min (one recv tile). check="all" clean, both engines agree."""
    rng = np.random.default_rng(7)
    x = rng.integers(-1000, 1000, size=(3, 64, 64), dtype=np.int32)
    w, d = pto.to_device(x), pto.to_device(np.zeros((3, 40, 64), np.int32))
    ops = _ops(kernel, (w, d))
    assert ops.count("CHECK") == 1 and ops.count("SELECT") == 4
    assert (ops.count("TLOAD"), ops.count(op), ops.count("TSTORE")) == (9, 6, 3)
    pto.launch(kernel, grid=(3,), args=(w, d), check="all")
    want = (x.max(0) if op == "TMAX" else x.min(0))[:40]
    np.testing.assert_array_equal(host_copy(d, (3, 40, 64), np.int32), [want] * 3)
    assert_engines_agree(kernel, (w, d), (3,), DEFAULT_BLOCK)


T16 = "pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)"
G2 = "pto.parallel_group((A, A + 16), 0)"


@pytest.mark.parametrize("tiles, call, message", [
    ({"t": T16}, "pto.tbroadcast((A, A + 16), A, t)",
     "pto.tbroadcast: group is a pto.parallel_group, the ranks' pointers and the calling rank's index"),
    ({"t": T16}, "pto.tbroadcast(A, A, t)",
     "pto.tbroadcast: group must be a pto.parallel_group(tensors, root) (pto-isa's ParallelGroup), got the pointer"),
    ({"t": "pto.alloc_tile(16, 16, pto.float16, loc=pto.Vec)"}, f"pto.comm_tgather({G2}, A, t)",
     "'A' holds float32 but the staging tile 't' holds float16 (\"TileData element type must match"),
    ({"t": T16}, "pto.tbroadcast(pto.parallel_group((A, A + 16), 2), A, t)",
     "the group's root is 2 but it has 2 ranks (the header's PTO_ASSERT: \"rootIdx must be in range [0, nranks)!\")"),
    ({"t": T16}, f"pto.tbroadcast({G2}, A, t, rows=8)",
     "the 8 x 16 slice fits 't' (valid 16 x 16), so include/pto/comm/a2a3/TBroadCast.hpp moves it in one TLOAD"),
    ({"t": T16}, "pto.tbroadcast(pto.parallel_group((A,), 0), A, t, rows=32)",
     "with one rank in the group, so include/pto/comm/a2a3/TBroadCast.hpp moves the 32 x 16 slice in one TLOAD"),
    ({"t": T16}, f"pto.comm_tscatter({G2}, A, t, rows=40)",
     "the 40 x 16 slice does not divide into 't''s static 16 x 16 chunks (\"TSCATTER chunked: per-rank DIM_3 must "
     "be divisible by tile ValidRow when static\""),
    ({"t": T16}, f"pto.comm_tgather({G2}, A, t, cols=24)",
     "(\"TGATHER chunked: DIM_4 must be divisible by tile ValidCol when static\""),
    ({"a": T16, "b": T16}, f"pto.treduce({G2}, A, a, b, 'prod')", "op must be 'sum', 'max' or 'min'"),
    ({"a": "pto.alloc_tile(16, 32, pto.uint8, loc=pto.Vec)", "b": "pto.alloc_tile(16, 32, pto.uint8, loc=pto.Vec)"},
     "pto.treduce(pto.parallel_group((A, A + 16), 0), A, a, b, 'sum')", "op 'sum' is TADD (detail::ReduceTiles), "
     "which takes float32, float16, int32, int16 tiles, not uint8"),
    ({"a": T16, "b": "pto.tsubview(a, 0, 0, 16, 16)"}, f"pto.treduce({G2}, A, a, b, 'sum')",
     "the acc tile 'a' and the recv tile 'b' overlap in UB (TREDUCE keeps different data in each at once)"),
    ({"a": T16, "b": T16, "c": "pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)"},
     f"pto.treduce({G2}, A, a, b, 'max', rows=32, pong=c)",
     "the acc tile 'a' and the pong tile 'c' must have the same type and dimensions (the header takes them as "
     "TileData& of one type)"),
    ({"t": T16}, "pto.tbroadcast(pto.parallel_group((), 0), A, t)",
     "the group has no rank (the collectives' PTO_ASSERT: \"ParallelGroup size must be greater than 0!\")"),
    ({"t": T16}, "pto.tbroadcast(pto.parallel_group((A, 3), 0), A, t)",
     "pto.parallel_group: rank 1's entry must point into a device tensor (GM), got the int 3"),
    ({"t": T16}, "pto.tbroadcast(pto.parallel_group((A, t), 0), A, t)",
     "rank 1's entry must point into a device tensor (GM), got the tile 't'"),
    ({"t": T16}, "pto.tbroadcast(pto.parallel_group(A, 0), A, t)",
     "pto.parallel_group: the tensors are written in the call, one pointer per rank, not 'A'"),
    ({"t": T16}, "pto.tbroadcast(pto.parallel_group([A + r for r in range(pto.get_block_id())], 0), A, t)",
     "the comprehension's range() takes constants"),
    ({"t": T16}, "pto.tbroadcast(pto.parallel_group((A, A), 0.0), A, t)",
     "root must be an integer (the calling rank's index), got float32"),
])
def test_bad_calls_are_compile_errors_naming_the_rule(make_kernels, tiles, call, message):
    """Each refusal cites the header's static_assert / PTO_ASSERT (or TLOAD's) and says what to do."""
    tiles_then_call(make_kernels, tiles, call, message)


def test_a_run_time_root_picks_a_rank_of_one_tensor_only(make_kernels):
    """TREDUCE with a run-time root reads parallelGroup[rootIdx], a select among the ranks'
    offsets, so the group's pointers must point into one tensor; a constant root may take any."""
    src = ("\n@pto.kernel\ndef k(A, B, D):\n    with pto.vector():\n"
           "        a = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)\n"
           "        b = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)\n"
           "        pto.treduce(pto.parallel_group((A, B), ROOT), D, a, b, 'sum')\n")
    args = tuple(pto.alloc_tensor(1024) for _ in range(3))
    make_kernels(src.replace("ROOT", "1")).k.program_for(args)
    with pytest.raises(pto.CompileError, match="the rank it picks is a select among the group's pointers, which must "
                                               "then point into one tensor; they point into A, B"):
        make_kernels(src.replace("ROOT", "pto.get_block_id()")).k.program_for(args)


def test_a_run_time_root_outside_the_group_stops_the_kernel(make_kernels):
    """The headers' PTO_ASSERT on rootIdx, for a root known at run time: a CHECK, which block 2
    of three (root 2 of a two-rank group) fails with an OutOfBoundsError naming the rule."""
    mod = make_kernels("\n@pto.kernel\ndef k(A):\n    with pto.vector():\n"
                       "        if pto.get_subblock_id() == 0:\n"
                       "            t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)\n"
                       "            pto.comm.tgather(pto.parallel_group((A, A + 256), pto.get_block_id()), "
                       "A + 1024 + pto.get_block_id() * 512, t)\n")
    a = pto.to_device(np.zeros(4096, np.float32))
    with pytest.raises(pto.OutOfBoundsError, match=r"0 <= the group's root <= 1 fails \(2 is outside \[0, 1\]\)"):
        pto.launch(mod.k, grid=(3,), args=(a,))
        pto.sync()


def test_a_collective_outside_the_vector_section_is_refused(make_kernels):
    """The staging tiles are in UB: cube code cannot stage through them."""
    mod = make_kernels("\n@pto.kernel\ndef bad(A):\n    with pto.cube():\n"
                       "        t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Mat)\n"
                       f"        pto.tbroadcast({G2}, A, t)\n")
    with pytest.raises(pto.CompileError, match="it is vector-core code"):
        mod.bad.program_for((pto.alloc_tensor(4096),))


def test_an_empty_slice_issues_nothing(make_kernels):
    """pto-isa's EmptyRows cases: with 0 rows every header returns before its first record."""
    for call in (f"pto.tbroadcast({G2}, A, t, rows=0)", f"pto.comm_tgather({G2}, A, t, rows=0)",
                 f"pto.comm_tscatter({G2}, A, t, rows=0)", f"pto.treduce({G2}, A, t, u, 'min', rows=0)"):
        mod = make_kernels("\n@pto.kernel\ndef k(A):\n    with pto.vector():\n"
                           f"        t = {T16}\n        u = {T16}\n        {call}\n")
        assert _ops(mod.k, (pto.alloc_tensor(1024),)) == []


def test_pto_comm_names_the_collectives_as_pto_isa_does(make_kernels):
    """pto.comm holds pto-isa's communication names: pto.comm.tgather is the collective
    (pto.comm_tgather), pto.tgather stays the tile instruction; pto.comm.tput is pto.tput. A
    kernel argument giving pto.comm.tgather's rows specialises the kernel, as for pto.tput."""
    assert pto.comm.tgather is pto.comm_tgather and pto.comm.tscatter is pto.comm_tscatter
    assert pto.comm.tbroadcast is pto.tbroadcast and pto.comm.treduce is pto.treduce
    assert pto.comm.tput is pto.tput and pto.comm.parallel_group is pto.parallel_group
    assert pto.tgather is not pto.comm_tgather and "TGATHER" in {s.name for s in pto.tgather.specs}
    mod = make_kernels("\n@pto.kernel\ndef k(W, D, R):\n    with pto.vector():\n"
                       "        t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)\n"
                       "        pto.comm.tgather(pto.parallel_group((W, W + 512), 0), D, t, rows=R)\n")
    w, d = pto.to_device(np.arange(1024, dtype=np.float32)), pto.to_device(np.zeros(1024, np.float32))
    assert _ops(mod.k, (w, d, 32)).count("TLOAD") == 4
    pto.launch(mod.k, grid=(1,), args=(w, d, 32))
    np.testing.assert_array_equal(host_copy(d, (1024,), np.float32), np.arange(1024, dtype=np.float32))


def test_a_one_rank_broadcast_is_the_root_copying_to_itself(make_kernels):
    """TBROADCAST_IMPL's `nranks == 1` path: TLOAD of the whole src (the tile's valid region must
    be the slice's, whatever its size), MTE2 -> MTE3, TSTORE to parallelGroup[rootIdx], MTE3 ->
    MTE2; a 32 x 16 slice through the 32 x 16 tile."""
    mod = make_kernels("\n@pto.kernel(sync='manual')\ndef k(S, W):\n    with pto.vector():\n"
                       "        if pto.get_subblock_id() == 0:\n"
                       "            t = pto.alloc_tile(32, 16, pto.float32, loc=pto.Vec)\n"
                       "            pto.tbroadcast(pto.parallel_group([W + 64], 0), S, t)\n")
    s = np.arange(512, dtype=np.float32)
    src, w = pto.to_device(s), pto.to_device(np.zeros(640, np.float32))
    assert _ops(mod.k, (src, w)) == ["TLOAD", *sw(MTE2, MTE3), "TSTORE", *sw(MTE3, MTE2)]
    pto.launch(mod.k, grid=(1,), args=(src, w), check="all")
    np.testing.assert_array_equal(host_copy(w, (640,), np.float32), np.r_[np.zeros(64, np.float32), s, np.zeros(64)])
