"""Timing of every AI-core pipe, on tiny kernels with cycle counts computed by hand from
tests/machines/simple.toml ([aicore], [l2] and the instruction entries):

    TLOAD 16x16 fp16 GM->Mat (MTE2): 100 + 512 B / 64 B/cycle (gm_to_l1; HBM 64, L2 256)  = 108
        (MTE2 takes its next transfer once the 512 / 64 = 8 cycles of bytes are issued)
    ... the same lines again, all L2 hits: 100 - 40 (l2_miss_extra) + 512 / 64           =  68
        (from 8 cycles after the first; it retires in order, with the first)
    TEXTRACT 16x16 fp16 Mat->Left (MTE1): 1 + 512 / 128 (l1_to_l0a)                       =   5
    TEXTRACT 16x16 fp16 Mat->Right (MTE1): 1 + 512 / 64 (l1_to_l0b)                       =   9
    TMATMUL 16x16x16 fp16 (M): 20 + 1 * ceil(16/16) * ceil(16/16) * ceil(16/16)            =  21
    TSTORE 16x16 fp32 Acc->GM (FIX): 100 + 16 * max(4, 4 * 16 / 128) + 2 * (odd(2) - 1)   = 164
    TLOAD 16x16 fp32 GM->Vec (MTE2): 100 + 1024 / 32 (gm_to_ub)                            = 132
    TADDS 16x16 fp32 (V): 10 (head: V was idle) + 16 rows x 1 repeat (a 64-byte row pays
        a whole 256-byte repeat) * per_repeat 1                                           =  26
    TSTORE 16x16 fp32 Vec->GM (MTE3): 50 + 1024 / 32 (ub_to_gm)                            =  82
"""
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.profiler.memory_counters import memory_counters
from pypto_sim.timing.machine import machine_in_effect


@pto.kernel(sync="manual")
def cube_chain(A, C):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        a = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        b = pto.alloc_tile(16, 16, pto.float16, loc=pto.Right)
        c = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tload(m, A)
        pto.tload(m, A)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.textract(a, m)
        pto.textract(b, m)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(c, a, b)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(C, c)


@pto.kernel(sync="manual")
def vector_chain(X, Y):
    with pto.vector():
        x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        pto.tload(x, X + pto.get_subblock_id() * 256)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 1)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 1)
        pto.tadds(x, x, 1.0)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 2)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 2)
        pto.tstore(Y + pto.get_subblock_id() * 256, x)


def slow_hbm(m):
    """m with HBM's chip link cut to 16 B/cycle, slower than any unit's own link."""
    return m.with_overrides({"memory.hbm_chip_bytes_per_cycle": 16.0},
                            source="test: HBM slower than the unit's link")


def ops(prof, unit=0):
    return [(e.inst, e.start, e.end) for e in prof.timeline if e.warp == unit and e.pipe != "S"]


def test_the_cube_path_pipe_by_pipe(simple_machine):
    """MTE2 -> MTE1 -> M -> FIX, each operation starting when the flag before it fires. The
    second TLOAD starts when the first's bytes are issued (s1 + 8) and its data, a hit at 68
    cycles, would land at s1 + 76; it retires in order, at the first's completion (s1 + 108)."""
    A = pto.alloc_tensor(512, pto.float16)
    pto.memcpy_h2d(A, np.ones((16, 16), np.float16))
    C = pto.alloc_tensor(1024, pto.float32)
    prof = pto.profile(cube_chain, grid=(1,), args=(A, C))
    (l1, s1, e1), (l2, s2, e2), (x1, s3, e3), (x2, s4, e4), (mm, s5, e5), (st, s6, e6) = ops(prof)
    assert (l1, l2, x1, x2, mm, st) == ("TLOAD", "TLOAD", "TEXTRACT", "TEXTRACT", "TMATMUL", "TSTORE_ACC")
    assert e1 - s1 == 108 and s2 == s1 + 8 and e2 == e1        # pipelined on MTE2; retired in order
    assert s3 == e2 and e3 - s3 == 5 and s4 == e3 and e4 - s4 == 9
    assert s5 == e4 and e5 - s5 == 21
    assert s6 == e5 and e6 - s6 == 164
    assert prof.total_cycles == e6
    # the loads touch one 512-byte line (a miss, then a hit); the store allocates its two
    assert (prof.aicore_stats.l2_hits, prof.aicore_stats.l2_misses) == (1, 3)
    out = np.empty((16, 16), np.float32)
    pto.memcpy_d2h(out, C)
    assert np.all(out == 16.0)


def test_the_vector_path_on_both_vector_cores(simple_machine):
    """MTE2 -> V -> MTE3 on AIV0 and AIV1, in parallel: each has its own pipes and UB."""
    X = pto.alloc_tensor(2048, pto.float32)
    pto.memcpy_h2d(X, np.arange(512, dtype=np.float32))
    Y = pto.alloc_tensor(2048, pto.float32)
    prof = pto.profile(vector_chain, grid=(1,), args=(X, Y))
    for unit in (1, 2):
        (ld, s1, e1), (add, s2, e2), (st, s3, e3) = ops(prof, unit)
        assert (ld, add, st) == ("TLOAD", "TADDS", "TSTORE")
        assert e1 - s1 == 132 and s2 == e1 and e2 - s2 == 26 and s3 == e2 and e3 - s3 == 82
    assert ops(prof, 1)[0][1] == ops(prof, 2)[0][1]
    out = np.empty(512, np.float32)
    pto.memcpy_d2h(out, Y)
    np.testing.assert_array_equal(out, np.arange(512, dtype=np.float32) + 1)


@pto.kernel(sync="manual")
def column_mul(X):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            c = pto.alloc_tile(64, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
            pto.tmul(c, c, c)


@pto.kernel(sync="manual")
def narrow_rows_mul(X):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            r = pto.alloc_tile(64, 8, pto.float32, loc=pto.Vec)
            pto.tmul(r, r, r)


def test_an_elementwise_op_on_a_column_is_priced_at_its_row_major_reshape(simple_machine):
    """A2/A3's elementwise ops take row-major tiles only (pto-isa a2a3 TMul.hpp), so a kernel
    TRESHAPEs a [64, 1] ColMajor column into a [1, 64] row first (pto-isa's flash attention,
    pto_macro_fa_softmax.hpp): one row of 64 fp32 = 256 B = 1 repeat. A row-major [64, 8]
    tile keeps its 64 rows of 32 B, each a (masked) repeat of its own (TBinOp.hpp
    Bin1LNormModeSmall). tests/machines/simple.toml TMUL: head 10 (= latency, V idle), 1 a
    repeat, no unaligned floor:
        TMUL [64, 1] ColMajor fp32: 10 + 1 x 1  = 11
        TMUL [64, 8] fp32:          10 + 64 x 1 = 74"""
    X = pto.alloc_tensor(4, pto.float32)
    (name, s, e), = ops(pto.profile(column_mul, grid=(1,), args=(X,)), 1)
    assert name == "TMUL" and e - s == 11
    (name, s, e), = ops(pto.profile(narrow_rows_mul, grid=(1,), args=(X,)), 1)
    assert name == "TMUL" and e - s == 74


@pto.kernel(sync="manual")
def unflagged(A, C):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        a = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        pto.tload(m, A)
        pto.textract(a, m)


@pto.kernel
def unflagged_auto(A, C):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        a = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        pto.tload(m, A)
        pto.textract(a, m)


def test_manual_mode_lets_pipes_overlap_that_auto_mode_orders(simple_machine):
    """Without a flag, manual sync starts TEXTRACT as soon as it is issued (one scalar cycle
    after TLOAD); auto sync holds it until the TLOAD completed (a RAW on tile m)."""
    A = pto.alloc_tensor(512, pto.float16)
    manual = ops(pto.profile(unflagged, grid=(1,), args=(A, A)))
    auto_prof = pto.profile(unflagged_auto, grid=(1,), args=(A, A))
    auto = ops(auto_prof)
    assert manual[1][1] == manual[0][1] + 1
    assert auto[1][1] == auto[0][2]
    tex = next(e for e in auto_prof.timeline if e.inst == "TEXTRACT")
    assert tex.stall == "tile_raw"


def test_pipe_barrier_all_waits_for_every_pipe_of_the_unit(simple_machine, make_kernels):
    """PIPE_BARRIER(PIPE_ALL) holds the scalar unit until every pipe of the cube unit is done:
    it issues when the TLOAD (108 cycles, the table in this file's docstring) completes and
    takes its one scalar cycle, so TEXTRACT (Mat -> Left, 5 cycles) starts one cycle after
    the TLOAD's end, where in manual mode without the barrier it would start one cycle after
    the TLOAD's issue (test_manual_mode_lets_pipes_overlap_that_auto_mode_orders)."""
    mod = make_kernels('''
@pto.kernel(sync="manual")
def k(A, C):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        a = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        pto.tload(m, A)
        pto.pipe_barrier(pto.PIPE_ALL)
        pto.textract(a, m)
''')
    A = pto.alloc_tensor(512, pto.float16)
    (_, s1, e1), (_, s2, e2) = ops(pto.profile(mod.k, grid=(1,), args=(A, A)))
    assert e1 - s1 == 108 and s2 == e1 + 1 and e2 - s2 == 5


def test_a_unit_ends_when_its_last_instruction_does(simple_machine, make_kernels):
    """The kernel's total is when its last instruction completes, so no unit is busy longer
    than the kernel lasts: ALLOC_LOCAL takes cycle 0; TLOAD 16x16 fp16 GM -> Mat takes 108
    cycles (this file's docstring) from cycle 1; PIPE_BARRIER(PIPE_ALL) issues when it is done
    (109) and takes its scalar cycle; EXIT issues at 110 and takes one (EXIT's latency 1), so
    the total is 111 and the AIC's active and busy cycles are at most that. (The unit used to
    retire at EXIT's issue, a cycle before its record ended.)"""
    mod = make_kernels('''
@pto.kernel(sync="manual")
def k(A):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        pto.tload(m, A)
        pto.pipe_barrier(pto.PIPE_ALL)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(512, pto.float16),))
    last = max(prof.timeline, key=lambda e: e.end)
    assert (last.inst, last.start, last.end) == ("EXIT", 110, 111)
    assert prof.total_cycles == 111
    row = prof.pipeline_summary()[0]
    assert row["busy_cycles"] <= row["active_cycles"] <= row["total_cycles"] == 111


def test_a_cross_core_flag_fires_when_the_signalling_units_pipes_are_done(simple_machine, make_kernels):
    """The AIV's load starts after the AIC's FIX store (164 cycles) plus the wait's cycle."""
    mod = make_kernels('''
@pto.kernel
def k(A, C):
    with pto.cube():
        c = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tstore(C, c)
        pto.cross_core_set_flag(3)
    with pto.vector():
        v = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        pto.cross_core_wait_flag(3)
        pto.tload(v, C)
''')
    C = pto.alloc_tensor(1024, pto.float32)
    prof = pto.profile(mod.k, grid=(1,), args=(C, C))
    store = next(e for e in prof.timeline if e.inst == "TSTORE_ACC")
    waits = [e for e in prof.timeline if e.inst == "CROSS_CORE_WAIT_FLAG"]
    loads = [e for e in prof.timeline if e.inst == "TLOAD"]
    assert store.end - store.start == 164
    assert all(w.start == store.end and w.stall == "cross_core" for w in waits)
    assert all(ld.start == store.end + 1 for ld in loads)


def test_a_full_pipe_queue_holds_the_scalar_unit(simple_machine, make_kernels):
    """pipe_queue_depth = 16: each 16 KiB TLOAD takes 100 + 16384 / 64 = 356 cycles, MTE2
    taking the next one when its 256 cycles of bytes are issued, while the scalar loop issues
    one every 7 cycles; a queued load counts until it completes, so the 17th is issued only when
    the first has completed, the 18th when the second has."""
    mod = make_kernels('''
@pto.kernel(sync="manual")
def k(A, C):
    with pto.cube():
        m = pto.alloc_tile(128, 64, pto.float16, loc=pto.Mat)
        for i in range(18):
            pto.tload(m, A + i * 8192)
''')
    A = pto.alloc_tensor(18 * 16384, pto.float16)
    prof = pto.profile(mod.k, grid=(1,), args=(A, A))
    loads = [e for e in prof.timeline if e.inst == "TLOAD"]
    assert [e.end - e.start for e in loads] == [356] * 18          # distinct lines: all misses
    assert all(b.start == a.start + 256 for a, b in zip(loads, loads[1:]))
    # a tile op's record starts at its start; stall_cycles is how long it sat in its queue
    issued = [e.start - e.stall_cycles for e in loads]
    assert issued[16] == loads[0].end and issued[17] == loads[1].end
    assert issued[15] < loads[0].end                                 # 16 fit in the queue


def test_the_cycle_limit_names_the_line_the_unit_is_at(simple_machine, make_kernels):
    """The AIC loops far too long; the error names the instruction it would issue next, not
    the kernel's first line. Its scalar issues one TLOAD every 6 cycles (the loop's compare,
    branch, TLOAD, add, continue and jump take one cycle each) from cycle 5 (after the
    ALLOC_LOCAL, `i = 0`, LOOP, compare and branch at 0-4); the first 16 KiB load misses in
    L2, 100 + 16384 / 64 = 356 cycles (until 361), the others hit, 100 - 40 + 256 = 316 each,
    each starting when the one before has issued its 256 cycles of bytes: load k >= 1 starts at
    5 + 256 k and completes at 321 + 256 k. The queue holds 16 until they complete, so from the
    17th on the scalar waits at the tload until a load completes, issues it, and spends the
    next 5 cycles on `i = i + 1` (+1) and the `while` (+2 .. +5). At 5000 = 321 + 256 x 18 + 71
    it waits at the tload; at 5187 = 321 + 256 x 19 + 2 it is at the `while`'s compare. AIV0
    and AIV1 have no section: they do not run."""
    mod = make_kernels('''
@pto.kernel(sync="manual")
def k(A, n):
    with pto.cube():
        m = pto.alloc_tile(128, 64, pto.float16, loc=pto.Mat)
        i = 0
        while i < n:
            pto.tload(m, A)
            i = i + 1
''')
    src = Path(mod.__file__).read_text().splitlines()
    tload, loop = (next(i + 1 for i, t in enumerate(src) if text in t) for text in ("pto.tload", "while"))
    A = pto.alloc_tensor(16384, pto.float16)
    loads = [e for e in pto.profile(mod.k, grid=(1,), args=(A, 20)).timeline if e.inst == "TLOAD"]
    assert [e.end for e in loads] == [361] + [321 + 256 * j for j in range(1, 20)]
    assert [e.start - e.stall_cycles for e in loads[15:18]] == [5 + 15 * 6, 361, 577]
    for limit, line in ((5000, tload), (5187, loop)):
        with pytest.raises(pto.SimulationLimitError) as info:
            pto.profile(mod.k, grid=(1,), args=(A, 10**6), max_cycles=limit)
        assert info.value.line == line
        assert f"(1 unit unfinished, at line {line} (`{src[line - 1].strip()}`): block 0 AIC)" in str(info.value)


@pto.kernel(sync="manual")
def store_twice(Y):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
            pto.texpands(x, 2.0)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(Y, x)
            pto.pipe_barrier(pto.PIPE_MTE3)
            pto.tstore(Y, x)


def test_a_store_to_lines_the_l2_holds_does_not_reach_hbm(simple_machine):
    """The L2 is write-back (docs/timing.md, "L2"): a TSTORE 16x16 fp32 (1024 B, two 512-byte
    lines) on simple.toml with HBM's chip link cut to 16 B/cycle:
    first store, both lines missed: 50 + max(1024 / 32 (ub_to_gm), 1024 / 16 (HBM))   = 114;
    the same window again after the barrier, both lines held: HBM moves nothing, the L2's
    chip link 1024 / 256 = 4 cycles: 50 + max(1024 / 32, 4)                             =  82
    (a write-through L2 would charge the second store HBM's 64 cycles again: 114)."""
    with machine_in_effect(slow_hbm(simple_machine)):
        Y = pto.alloc_tensor(1024, pto.float32)
        prof = pto.profile(store_twice, grid=(1,), args=(Y,))
    stores = [(s, e) for inst, s, e in ops(prof, 1) if inst == "TSTORE"]
    assert [e - s for s, e in stores] == [114, 82]
    assert (prof.aicore_stats.l2_hits, prof.aicore_stats.l2_misses) == (2, 2)
    out = np.empty(256, np.float32)
    pto.memcpy_d2h(out, Y)
    assert np.all(out == 2.0)


@pto.kernel(sync="manual")
def four_pieces_of_one_line(X):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            x = pto.alloc_tile(1, 32, pto.float32, loc=pto.Vec)
            for i in range(4):
                pto.tload(x, X + i * 32)


def test_a_load_that_misses_a_line_brings_the_whole_line_from_hbm(simple_machine):
    """docs/timing.md, "L2": four TLOADs of 1 x 32 fp32 (128 B) read the four pieces of one
    512-byte line, on simple.toml with HBM's chip link cut to 16 B/cycle. The first misses and
    HBM fills the line, 512 B: its transfer holds MTE2 max(128 / 32 (gm_to_ub), 128 / 256 (L2),
    512 / 16 (HBM)) = 32 cycles (charging only its own 128 B would take 8); the other three hit
    and hold it max(128 / 32, 128 / 256) = 4 each, so the loads start 32, 4 and 4 cycles apart.
    HBM moves 512 bytes in all, the loads 512: three hits, one miss."""
    with machine_in_effect(slow_hbm(simple_machine)):
        X = pto.alloc_tensor(512, pto.float32)
        prof = pto.profile(four_pieces_of_one_line, grid=(1,), args=(X,))
    starts = [s for inst, s, _e in ops(prof, 1) if inst == "TLOAD"]
    assert [b - a for a, b in zip(starts, starts[1:])] == [32, 4, 4]
    assert (prof.aicore_stats.l2_hits, prof.aicore_stats.l2_misses) == (3, 1)
    hbm = next(c for c in memory_counters(prof) if c.name == "HBM bytes/cycle")
    assert round(hbm.bytes("read")) == 512
