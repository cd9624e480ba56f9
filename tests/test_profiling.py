"""Profiles: bubbles with their causes, hotspots, core balance, CSV exports, Chrome traces,
plots and the pypto-sim profile/trace/machine diff commands.

The pipelined matmul is tests/simt_kernels.py's (64 x 64 x 256 float32, 32 x 32 x 32 tiles:
4 blocks on 4 cores of the default machine, each 256 / 32 = 8 iterations of two TLOADs and
one MMA). Hand-derived bubble counts use a smaller pipeline on tests/machines/simple.toml.
"""
import csv
import importlib.util
import inspect
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.cli import machine_diff, main
from pypto_sim.isa import PIPES
from pypto_sim.profiler.collect import collect_profiles
from pypto_sim.profiler.export import BUBBLE_COLUMNS, CODE_COLUMNS, INSTR_COLUMNS, SUMMARY_COLUMNS
from pypto_sim.profiler.trace import slices_of, validate_trace
from pypto_sim.timing.machine import resolve_machine
from simt_kernels import make_matmul, run_matmul

ROOT = Path(__file__).resolve().parent.parent
K, TILE = 256, 32
BLOCKS, ITERATIONS = (64 // TILE) * (64 // TILE), K // TILE      # 4 blocks of 8 iterations
# a float32 32x32x32 MMA on the fixture's machine (latency_tables/ascend910b.toml MMA, its head
# set to pto-isa's mock 6): 6 + per_repeat_f32 2 * ceil(32/16) * ceil(32/k_tile_f32 8) *
# ceil(32/16) repeats = 6 + 2 * 16 = 38
MMA_CYCLES = 6 + 2 * (32 // 16) * (32 // 8) * (32 // 16)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def matmul():
    """{depth: Profile} of the pipelined matmul at depth 1 and 2, on the default machine
    without its L2 and with pto-isa's mock MMA head of 6 (MMA_CYCLES below)."""
    from pypto_sim.timing import machine as machine_mod
    base = machine_mod.resolve_machine("ascend910b").without_l2()
    token = machine_mod._ACTIVE.set(base.with_overrides({"instruction.MMA.latency": 6},
                                                        source="pto-isa mock MMA head (test)"))
    try:
        out = {}
        for depth in (1, 2):
            prof, c, ref = run_matmul(depth, 64, 64, K, TILE, TILE, TILE)
            np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)
            out[depth] = prof
        return out
    finally:
        machine_mod._ACTIVE.reset(token)


VECTOR_ADD = """
@pto.kernel
def vector_add(a, b, o, n):
    i = pto.get_global_id()
    if i < n:
        a_val = pto.load(a + i)
        b_val = pto.load(b + i)
        pto.fma(o + i, a_val, 1.0, b_val)
"""
# line numbers in the generated file (line 1 is `import pypto_sim as pto`)
LINE_ID, LINE_IF, LINE_LOAD_A, LINE_LOAD_B, LINE_FMA = 5, 6, 7, 8, 9


def _vector_add(make_kernels, n=1024, grid=4, block=256):
    k = make_kernels(VECTOR_ADD).vector_add
    a = np.arange(n, dtype=np.float32)
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, a)
    prof = pto.profile(k, grid=(grid, 1, 1), block=(block, 1, 1), args=(d_a, d_b, d_o, n))
    assert np.array_equal(d_o.numpy(), 2 * a)
    return prof


# ---------------------------------------------------------------- Chrome traces
def test_trace_validates_against_the_trace_event_format(matmul, tmp_path):
    """The file is JSON in the Object Format; every event has its phase's required keys;
    complete events nest on each track; flows are paired s/f (same id, cat, name, start first,
    bound to a slice); every process (core) and track (pipe, warp) is named."""
    prof = matmul[2]
    path = prof.save_trace(tmp_path / "matmul.json")
    doc = json.loads(path.read_text())
    assert validate_trace(doc) == []
    events = doc["traceEvents"]
    assert {e["ph"] for e in events} == {"M", "X", "s", "f"}
    for e in slices_of(doc):
        assert {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"} <= set(e)
        assert e["args"]["line"] in prof.program.source_lines
    assert doc["displayTimeUnit"] in ("ms", "ns")
    assert doc["otherData"]["time_unit"] == "1 trace microsecond = 1 cycle"
    # named tracks: one process per core, per-pipe and per-warp threads
    procs = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert procs == {"core 0", "core 1", "core 2", "core 3"}
    assert {"load (MTE2)", "mma (cube)", "store (MTE3)", "scalar", "block 0 warp 0"} <= threads
    # one complete event per warp-instruction on its pipe track and on its warp track
    assert len(slices_of(doc)) == 2 * len(prof.records)
    assert len(slices_of(doc, cat="mma")) == BLOCKS * ITERATIONS
    # flow arrows for dependencies: data not loaded (RAW), buffer not free (WAR), operands
    starts = [e for e in events if e["ph"] == "s"]
    ends = [e for e in events if e["ph"] == "f"]
    assert len(starts) == len(ends) == doc["otherData"]["flows"] > 0
    assert {e["name"] for e in starts} >= {"tile_raw", "operand"}
    assert all(e["bp"] == "e" for e in ends)
    assert sorted(e["id"] for e in starts) == sorted(e["id"] for e in ends)
    # a flow into an MMA starts on a load track: the MMA waited for the TLOAD of its tile
    by_id = {e["id"]: e for e in starts}
    tid_name = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    mma_tids = {e["tid"] for e in slices_of(doc, cat="mma")}
    into_mma = [by_id[e["id"]] for e in ends if e["tid"] in mma_tids]
    assert into_mma and all(tid_name[s["tid"]].startswith("load (MTE2)") for s in into_mma)


def test_trace_validator_finds_what_viewers_reject():
    """The validator is not vacuous: overlapping slices on one track, an unpaired or unbound
    flow, an unnamed track and a metadata event without its argument are all reported."""
    x = {"ph": "X", "name": "A", "cat": "c", "pid": 1, "tid": 2}
    doc = {"traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "core 0"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {}},
        dict(x, ts=0, dur=10), dict(x, ts=5, dur=10),
        {"ph": "s", "id": 7, "cat": "dep", "name": "n", "ts": 50, "pid": 1, "tid": 2},
        {"ph": "Q", "name": "?", "pid": 1, "tid": 2, "ts": 0}]}
    errors = "\n".join(validate_trace(doc))
    assert "overlaps another" in errors
    assert "flow 7: needs exactly one 's' and one 'f'" in errors
    assert "needs args.name" in errors and "no thread_name" in errors
    assert "unknown or missing ph 'Q'" in errors
    assert validate_trace({"events": []}) == ["the top level must be an object with a 'traceEvents' list"]


def _overlap(a, b):
    return any(s1 < s2 + d2 and s2 < s1 + d1 for s1, d1 in a for s2, d2 in b)


def test_trace_shows_load_and_mma_overlapping_at_depth_2(matmul):
    """On every core, at depth=2 a TLOAD and an MMA are in flight at the same time in the
    trace; at depth=1 never (each load waits for the MMA that reads its buffer)."""
    for depth, expect in ((1, False), (2, True)):
        doc = matmul[depth].trace(warps=False)
        assert validate_trace(doc) == []
        for pid in range(1, 5):
            loads = [(e["ts"], e["dur"]) for e in slices_of(doc, "TLOAD") if e["pid"] == pid]
            mmas = [(e["ts"], e["dur"]) for e in slices_of(doc, "MMA") if e["pid"] == pid]
            assert len(loads) == 2 * ITERATIONS and len(mmas) == ITERATIONS
            assert _overlap(loads, mmas) is expect, (depth, pid)


def test_trace_in_microseconds_at_the_clock(matmul):
    prof = matmul[2]
    doc = prof.trace(time_unit="us", flows=False)
    assert validate_trace(doc) == [] and doc["displayTimeUnit"] == "ns"
    last = max(e["ts"] + e["dur"] for e in slices_of(doc))
    assert last == pytest.approx(prof.total_cycles / (prof.machine.clock_ghz * 1e3), abs=1 / 4096)
    with pytest.raises(ValueError, match="time_unit"):
        prof.trace(time_unit="ms")


COPY = """
@pto.kernel
def copy(a, o):
    i = pto.get_lane_id()
    x = pto.load(a + i)
    pto.store(o + i, x)
"""


def _copy_profile(make_kernels):
    """One warp copying 32 float32 on tests/machines/simple.toml."""
    k = make_kernels(COPY).copy
    d_a, d_o = pto.alloc_tensor(128), pto.alloc_tensor(128)
    pto.memcpy_h2d(d_a, np.arange(32, dtype=np.float32))
    return pto.profile(k, grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_o))


def test_trace_of_a_tiny_copy_has_hand_derived_events(make_kernels, simple_machine, tmp_path):
    """On the simple machine (one issue per cycle; LANE_ID 1 cycle; LOAD 100 + bytes/32;
    STORE 50 + bytes/32): LANE_ID issues at 0 and completes at 1; the LOAD of a + i needs i,
    issues at 1 and moves 32 x 4 = 128 bytes: 100 + 4 = 104 cycles, done at 105; the STORE
    waits for x (operand, issue 105, ready since 2: 103 stall cycles) and takes 50 + 4 = 54,
    done at 159; EXIT issues at 106 and completes at 107, under the STORE on the warp track,
    so there it goes to the track's second row. One flow arrow from the middle of the LOAD
    (53) to the middle of the STORE (132). In microseconds at 1.85 GHz (1850 cycles per us,
    times in steps of 1/4096 us): the STORE starts at round(105 * 4096 / 1850) / 4096 =
    232 / 4096 us and ends at round(159 * 4096 / 1850) / 4096 = 352 / 4096 us."""
    prof = _copy_profile(make_kernels)
    path = prof.save_trace(tmp_path / "copy.json")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    assert validate_trace(doc) == []
    tracks = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert sorted(tracks.values()) == ["block 0 warp 0", "block 0 warp 0 #2", "load (MTE2)",
                                       "scalar", "store (MTE3)"]
    got = sorted((tracks[e["tid"]], e["name"], e["ts"], e["dur"]) for e in slices_of(doc))
    assert got == sorted([("scalar", "LANE_ID", 0, 1), ("load (MTE2)", "LOAD", 1, 104),
                          ("store (MTE3)", "STORE", 105, 54), ("scalar", "EXIT", 106, 1),
                          ("block 0 warp 0", "LANE_ID", 0, 1), ("block 0 warp 0", "LOAD", 1, 104),
                          ("block 0 warp 0", "STORE", 105, 54),
                          ("block 0 warp 0 #2", "EXIT", 106, 1)])
    store = slices_of(doc, "STORE", "store")[0]["args"]
    assert store == {"pc": 2, "line": 7, "source": "pto.store(o + i, x)", "block": 0, "warp": 0,
                     "lanes": "0-31", "issue_cycle": 105, "complete_cycle": 159,
                     "stall_cycles": 103, "stall": "operand", "waited_for": "LOAD at line 6",
                     "bytes": 128}
    assert "stall" not in slices_of(doc, "LANE_ID", "scalar")[0]["args"]
    flows = sorted((e["ph"], tracks[e["tid"]], e["ts"]) for e in doc["traceEvents"] if e["ph"] in "sf")
    assert flows == [("f", "store (MTE3)", 132), ("s", "load (MTE2)", 53)]
    us = prof.trace(time_unit="us")
    s = slices_of(us, "STORE", "store")[0]
    assert (s["ts"], s["ts"] + s["dur"]) == (232 / 4096, 352 / 4096)


def test_trace_is_the_same_whatever_the_chunk_size(make_kernels, monkeypatch):
    """The writer renders events CHUNK rows at a time; chunks of 1, 3 and 7 rows (every
    boundary inside tracks, slices and flow ids) give the same events as one big chunk, on a
    vector_add of 4 blocks of 2 warps (its loads overlap, so pipes have several rows)."""
    from pypto_sim.profiler import trace
    prof = _vector_add(make_kernels, n=256, grid=4, block=64)

    def events(doc):
        return sorted(json.dumps(e, sort_keys=True) for e in doc["traceEvents"])
    whole = prof.trace()
    assert validate_trace(whole) == [] and whole["otherData"]["flows"] > 0
    assert any(e["args"]["name"].endswith("#2") for e in whole["traceEvents"]
               if e["name"] == "thread_name")
    for size in (1, 3, 7):
        monkeypatch.setattr(trace, "CHUNK", size)
        assert events(prof.trace()) == events(whole)


def test_row_text_is_exact_json_padded_outside_strings():
    """rowtext renders integers right-aligned, dyadic fractions as exact decimals (3/4096 =
    0.000732421875, 4097/4096 = 1.000244140625), strings JSON-escaped, and leaves out fields whose
    ``show`` is False; padding is spaces between tokens, so json.loads reads the values."""
    from pypto_sim.profiler.rowtext import Rows
    rows = Rows(3).text("[").number(np.array([0, 7, 12345])).text(",") \
        .dyadic(np.array([3, 4097, 0]), 12).text(",") \
        .string(['a"b', "", "\u00e9"], np.array([0, 1, 2])) \
        .text(",1", show=np.array([True, False, True])).text("]").array()
    lines = [bytes(r).decode("ascii") for r in rows]
    assert len({len(line) for line in lines}) == 1 and all(line.endswith("\n") for line in lines)
    assert "0.000732421875" in lines[0] and "1.000244140625" in lines[1]
    assert [json.loads(line) for line in lines] == [[0, 3 / 4096, 'a"b', 1],
                                                   [7, 4097 / 4096, ""],
                                                   [12345, 0, "\u00e9", 1]]


def test_bubbles_of_a_tiny_copy_are_hand_derived(make_kernels, simple_machine):
    """The copy above (active window 0..159). load pipe: idle [0,1) before the LOAD, which
    waited for nothing, its warp issuing LANE_ID (instruction order), and idle at end
    [105,159). store pipe: [0,105) ended by the STORE waiting on the LOAD; the LOAD's fixed
    latency ends at 1 + 100 = 101, so [0,101) is the operand wait and [101,105) the HBM
    transfer. scalar pipe: [1,106) ended by EXIT, which did not wait: charged to its warp's
    latest wait still going on, the STORE's, split the same way at 101; idle at end [107,159)."""
    prof = _copy_profile(make_kernels)
    got = [(b.pipe, b.start, b.end, b.kind) for b in prof.bubbles()]
    assert got == [("scalar", 1, 101, "operand"), ("scalar", 101, 106, "hbm"),
                   ("scalar", 107, 159, "end"), ("load", 0, 1, "order"), ("load", 105, 159, "end"),
                   ("store", 0, 101, "operand"), ("store", 101, 105, "hbm")]
    store = prof.bubbles(pipe="store")
    assert store.waiting_on("LOAD") == 105 and store.idle_cycles == 105
    assert store.by_cause() == [("store", "waiting on LOAD at line 6", "operand", 101, 1),
                                ("store", "HBM bandwidth: waiting on LOAD at line 6", "hbm", 4, 1)]


# ---------------------------------------------------------------- bubbles
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


def line_of(source: str, text: str) -> int:
    """The line of ``text`` in the file make_kernels writes (its line 1 imports pypto_sim)."""
    return 2 + next(i for i, line in enumerate(source.split("\n")) if text in line)


@pytest.mark.parametrize("depth", [1, 2])
def test_bubbles_blame_mma_idle_time_on_loads_and_depth_2_shrinks_it(make_kernels, simple_machine, depth):
    """Four iterations of TLOAD (1 KiB) then MMA (float32 16x16x16) on tests/machines/simple.toml:
    a TLOAD takes 100 cycles of latency, then moves 1024 B over the 32 B/cycle core link (32
    cycles; one load's bytes at a time); an MMA takes 6 + 2 * 2 = 10 (tests/test_tiles.py
    derives both and the pipeline's rules). Let s be the first TLOAD's issue (the scalar setup
    before it) and w0 = 0 the window's start. A gap of the MMA pipe that ends at an MMA waiting
    on TLOAD k is "operand" up to TLOAD k's issue + 100 and "HBM bandwidth" after it.

    depth=1: TLOAD k issues when MMA k-1 ends, so each MMA waits a whole load: the first gap
    is s + 100 operand and 32 HBM, each of the other three 100 operand and 32 HBM: operand
    s + 400, HBM 4 * 32 = 128. The load pipe idles while MMA k-1 still reads x (depth cause):
    3 gaps of 10 = 30.
    depth=2 (times from s): TLOAD 0 ends at 132, TLOAD 1 (issued before 32) queues on the link
    and ends at 132 + 32 = 164; MMA 0 runs 132-142, MMA 1 164-174; TLOAD 2 issues at 142
    (MMA 0 freed its buffer) and ends at 142 + 132 = 274; TLOAD 3 issues at 174, its bytes
    wait for TLOAD 2's, ends at 274 + 32 = 306; MMA 2 runs 274-284, MMA 3 306-316. MMA gaps:
    [0, s + 132]: s + 100 operand, 32 HBM; [142, 164]: TLOAD 1's 100 cycles ended before 142,
    22 HBM; [174, 274]: operand to 142 + 100 = 242, 68, then 32 HBM; [284, 306]: 22 HBM.
    Operand s + 168, HBM 32 + 22 + 32 + 22 = 108; the load pipe is never idle for want of a
    buffer (TLOAD 2 issues while TLOAD 1 is in flight): depth 0."""
    source = TWO_STAGE.format(depth=depth)
    d_x, d_o = pto.alloc_tensor(4 * 1024), pto.alloc_tensor(1024)
    prof = pto.profile(make_kernels(source).two_stage, grid=(1, 1, 1), block=(32, 1, 1), args=(d_x, d_o))
    s = next(e.start for e in prof.timeline if e.inst == "TLOAD")
    assert prof.active_windows()[0][0] == 0
    report = prof.bubbles()
    operand, hbm, depth_cycles = {1: (s + 400, 128, 30), 2: (s + 168, 108, 0)}[depth]
    assert report.cycles(kind="operand", inst="TLOAD", pipe="mma") == operand
    assert report.cycles(kind="hbm", inst="TLOAD", pipe="mma") == hbm
    assert report.waiting_on("TLOAD", pipe="mma") == operand + hbm
    assert report.cycles(kind="depth", pipe="load") == report.cycles(kind="depth") == depth_cycles
    # the causes name the instruction and its line, and the table says so
    tload, mma = line_of(source, "pto.async_load"), line_of(source, "pto.mma")
    assert report.by_cause(pipe="mma")[0] == ("mma", f"waiting on TLOAD at line {tload}", "operand",
                                              operand, 4 if depth == 1 else 2)
    text = str(report)
    assert f"HBM bandwidth: waiting on TLOAD at line {tload}" in text
    assert ("pipeline depth (no free buffer): MMA at line %d still reads it" % mma in text) is (depth == 1)


def test_bubbles_and_busy_cycles_tile_each_active_window(matmul):
    """For each core and each pipe it used: busy cycles + bubbles = the core's active window,
    and no bubble overlaps an interval in which the pipe was busy."""
    for prof in matmul.values():
        windows, busy = prof.active_windows(), prof.busy_by_core()
        report = prof.bubbles()
        for core, (w0, w1) in windows.items():
            for pipe in PIPES:
                if not busy[core][pipe]:
                    continue
                gaps = [b for b in report if b.core == core and b.pipe == pipe]
                assert busy[core][pipe] + sum(b.cycles for b in gaps) == w1 - w0
                intervals = prof.busy_intervals(pipe, core=core)
                assert not _overlap([(s, e - s) for s, e in intervals],
                                    [(b.start, b.cycles) for b in gaps])


def test_bubbles_of_a_lane_kernel(make_kernels):
    """vector_add: the store pipe waits for the loads (their latency and their transfer)."""
    prof = _vector_add(make_kernels)
    store = prof.bubbles(pipe="store")
    assert store.waiting_on("LOAD") > 0.9 * store.idle_cycles
    assert all(b.line == LINE_LOAD_B for b in store if b.inst == "LOAD")
    assert prof.bubbles(core=0).idle_cycles * 4 == prof.bubbles().idle_cycles
    with pytest.raises(ValueError, match="pipe must be one of"):
        prof.bubbles(pipe="cube")


def test_a_gap_is_charged_to_the_wait_that_spans_it_not_to_a_later_one_cycle_stall(make_kernels):
    """One block of 64 lanes (2 warps) of vector_add: warp 0's scalar pipe idles ~300 cycles
    while its FMA_STORE waits for the second LOAD; the ENDIF that ends the gap waited one cycle
    for the issue port (the other warp took it), which charged the whole gap to the issue port.
    The report charges it to the LOAD, as with one warp, and the issue port gets no gap of
    more than one cycle."""
    prof = _vector_add(make_kernels, n=64, grid=1, block=64)
    scalar = prof.bubbles(pipe="scalar")
    assert scalar.waiting_on("LOAD") > 0.5 * scalar.idle_cycles
    assert all(b.end - b.start <= 1 for b in scalar if "issue port" in b.text)


# ---------------------------------------------------------------- hotspots and balance
def test_hotspots_name_the_lines_of_vector_add(make_kernels):
    """1024 elements in 4 blocks of 256 lanes = 32 warps: each load line issues 32
    warp-instructions over 1024 lanes; the two loads are the hottest lines."""
    prof = _vector_add(make_kernels)
    hot = prof.hotspots()
    assert set(hot.lines) == {LINE_ID, LINE_IF, LINE_LOAD_A, LINE_LOAD_B, LINE_FMA}
    assert set(hot.lines[:2]) == {LINE_LOAD_A, LINE_LOAD_B}
    row = hot[LINE_LOAD_A]
    assert row["source"] == "a_val = pto.load(a + i)" and row["instructions"] == ["LOAD"]
    assert row["executions"] == 32 and row["lane_executions"] == 1024
    assert row["busy_cycles"] > 32 * pto.machine().latency("LOAD")
    assert sum(r["executions"] for r in hot) == len(prof.records)
    text = str(hot.top(3))
    assert "a_val = pto.load(a + i)" in text and "b_val = pto.load(b + i)" in text


def test_core_balance_flags_a_core_with_twice_the_work(make_kernels, simple_machine):
    """The simple machine has 2 cores of 8 warp slots: blocks of 256 lanes fill a core, so
    3 blocks run as 2 on core 0 (one after the other) and 1 on core 1: a spread near 50%."""
    balance = _vector_add(make_kernels, n=768, grid=3).core_balance()
    assert [r["blocks"] for r in balance] == [2, 1]
    assert balance.imbalanced and 0.4 < balance.spread < 0.6
    assert "imbalanced (msprof Occupancy rule)" in str(balance)
    even = _vector_add(make_kernels, n=512, grid=2).core_balance()
    assert not even.imbalanced and even.spread == 0.0 and even.idle_cores == 0


def test_pipe_utilization_over_active_windows(matmul):
    """A pipe's utilisation is its busy cycles over the cores' active windows; at depth 2 the
    matmul keeps its loads back to back, so the load pipe is the busiest, and it uses no
    vector pipe."""
    prof = matmul[2]
    busy, windows = prof.busy_by_core(), prof.active_windows()
    util = prof.pipe_utilization(window="active")
    active = sum(b - a for a, b in windows.values())
    assert util["load"] == pytest.approx(sum(busy[c]["load"] for c in windows) / active)
    assert util["load"] == max(util.values()) and util["vector"] == 0.0
    with pytest.raises(ValueError):
        prof.pipe_utilization(window="all")


# ---------------------------------------------------------------- CSV exports
def _read(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def test_csv_exports_parse_with_the_expected_columns(matmul, tmp_path):
    prof = matmul[1]
    paths = prof.export_csv(tmp_path / "csv")
    assert sorted(p.name for p in paths.values()) == ["bubbles.csv", "code_exe.csv",
                                                     "instr_exe.csv", "pipeline_summary.csv"]
    cols, rows = _read(paths["instr_exe"])
    assert tuple(cols) == INSTR_COLUMNS
    assert len(rows) == len(np.unique(prof.records.pc))
    assert sum(int(r["call_count"]) for r in rows) == len(prof.records)
    mma = next(r for r in rows if r["instr"] == "MMA")
    mma_line = make_matmul.__code__.co_firstlineno + next(
        i for i, line in enumerate(inspect.getsource(make_matmul).split("\n")) if "pto.mma(" in line)
    calls = BLOCKS * ITERATIONS
    assert (mma["pipe"], mma["line"], mma["call_count"], mma["cycles"]) == ("mma", str(mma_line), str(calls),
                                                                          str(calls * MMA_CYCLES))
    assert mma["detail"].startswith("MMA C_tile, A_tile, B_tile")
    cols, rows = _read(paths["code_exe"])
    assert tuple(cols) == CODE_COLUMNS
    assert {r["code"].rsplit(":", 1)[1] for r in rows} == {str(ln) for ln in prof.hotspots().lines}
    assert all(r["code"].startswith(prof.program.file) for r in rows)
    cols, rows = _read(paths["pipeline_summary"])
    assert tuple(cols) == SUMMARY_COLUMNS
    assert [r["core_id"] for r in rows] == ["0", "1", "2", "3"]
    for r in rows:
        core = int(r["core_id"])
        assert int(r["active_end_cycle"]) - int(r["active_start_cycle"]) == int(r["active_cycles"])
        assert int(r["mma_cycles"]) == sum(e - s for s, e in prof.busy_intervals("mma", core=core))
        assert int(r["total_cycles"]) == prof.total_cycles
    cols, rows = _read(paths["bubbles"])
    assert tuple(cols) == BUBBLE_COLUMNS and len(rows) == len(prof.bubbles())


# ---------------------------------------------------------------- plots
def test_plot_renders_a_png(matmul, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib.image
    path = matmul[2].save_plot(tmp_path / "matmul.png")
    assert path.read_bytes()[:8] == PNG_SIGNATURE and path.stat().st_size > 20_000
    height, width = matplotlib.image.imread(path).shape[:2]
    assert width >= 1000 and height >= 500


def test_plot_without_matplotlib_says_how_to_install(matmul, tmp_path, monkeypatch):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"pip install pypto-sim\[plot\]"):
        matmul[1].save_plot(tmp_path / "x.png")


# ---------------------------------------------------------------- collection and cost
def test_collect_profiles_sees_every_launch_and_profiles_stay_lazy(make_kernels):
    """Inside collect_profiles() every launch's Profile is collected (launch + sync and
    pto.profile); outside, none. A new Profile has computed no analysis (profiling costs
    no more than running)."""
    with collect_profiles() as profiles:
        prof = _vector_add(make_kernels)
    assert profiles == [prof] and prof._cache == {}
    _vector_add(make_kernels)
    assert len(profiles) == 1


# ---------------------------------------------------------------- command line
@pytest.fixture
def cli(capsys, monkeypatch):
    """The command run through cli.main in this process from the repository root (a process
    per command spent a second on imports; test_cli.py runs the module's entry point): its
    exit code, stdout and stderr as ``returncode``, ``stdout``, ``stderr``."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", list(sys.argv))        # a script run sets its own argv

    def run(*args):
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)
    return run


def test_cli_profile_writes_trace_csv_and_plot(tmp_path, cli):
    pytest.importorskip("matplotlib")
    trace, plot, out = tmp_path / "t.json", tmp_path / "p.png", tmp_path / "csv"
    r = cli("profile", "examples/pipeline_matmul.py", "--trace", str(trace), "--csv", str(out),
             "--plot", str(plot), "--top", "3")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("[launch ") == 2          # depth=1 and depth=2
    assert "waiting on TLOAD at line 22" in r.stdout and "hotspots of matmul_tile" in r.stdout
    assert "core balance of matmul_tile" in r.stdout
    assert validate_trace(json.loads(trace.read_text())) == []
    assert plot.read_bytes()[:8] == PNG_SIGNATURE
    assert (out / "instr_exe.csv").exists() and (out / "pipeline_summary.csv").exists()


def test_cli_trace_and_errors(tmp_path, cli):
    trace = tmp_path / "va.json"
    r = cli("trace", "examples/vector_add.py", "-o", str(trace), "--time-unit", "us")
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout and "ui.perfetto.dev" in r.stdout
    doc = json.loads(trace.read_text())
    assert validate_trace(doc) == [] and doc["otherData"]["kernel"] == "vector_add"
    r = cli("profile", "examples/vector_add.py", "--kernel", "nope")
    assert r.returncode == 1 and "ran no timed launch of kernel 'nope'" in r.stderr
    assert "vector_add" in r.stderr


def test_cli_refuses_to_write_over_its_inputs_and_checks_every_path_before_the_run(tmp_path, cli):
    """The output of `trace -o`, `profile --trace` and `calibrate -o` cannot be the script or
    the rows the command reads (each was replaced without a word); a --csv folder that is a
    file and a --plot format matplotlib lacks are refused before the script runs, so nothing
    (no trace) is written and the inputs are as they were."""
    script = tmp_path / "va.py"
    script.write_text((ROOT / "examples" / "vector_add.py").read_text())
    before = script.read_text()
    for argv in (("trace", str(script), "-o", str(script)), ("profile", str(script), "--trace", str(script))):
        r = cli(*argv)
        assert r.returncode == 1 and "that is the file this command reads" in r.stderr
        assert script.read_text() == before and "vector_add" not in r.stdout
    rows = tmp_path / "rows.csv"
    rows.write_text("benchmark,instruction,size,cycles,machine,notes\n")
    r = cli("calibrate", str(rows), "-o", str(rows))
    assert r.returncode == 1 and "that is the file this command reads" in r.stderr
    assert rows.read_text() == "benchmark,instruction,size,cycles,machine,notes\n"
    (tmp_path / "afile").write_text("x")
    trace = tmp_path / "t.json"
    r = cli("profile", str(script), "--trace", str(trace), "--csv", str(tmp_path / "afile"))
    assert r.returncode == 1 and "must be a folder" in r.stderr and not trace.exists() and not r.stdout
    if importlib.util.find_spec("matplotlib"):
        r = cli("profile", str(script), "--trace", str(trace), "--plot", str(tmp_path / "plot.out"))
        assert r.returncode == 1 and "cannot write a '.out' image" in r.stderr and not trace.exists()


def test_cli_machine_diff(cli):
    r = cli("machine", "diff", "ascend910b", "tests/machines/simple.toml")
    assert r.returncode == 0, r.stderr
    assert "entries differ" in r.stdout
    lines = r.stdout.splitlines()
    assert any(line.split()[:1] == ["cores"] and line.split()[1:3] == ["24", "2"] for line in lines)
    assert any(line.split()[:1] == ["TLOAD.latency"] for line in lines)
    m = resolve_machine("ascend910b")
    assert "0 entries differ" in machine_diff(m, m)


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_a_warp_retires_once_every_result_it_computed_is_ready(make_kernels, monkeypatch, engine):
    """`j = i * 3 + 1`, never used: GLOBAL_ID issues at 0 (latency 2), MUL at 2 when i is ready
    (latency 7), ADD at 9 (latency 7), EXIT at 10; the warp retires when the ADD's result is
    ready, so the kernel takes 16 cycles (it ended at 10, before its own ADD, and the vector
    pipe came out busy 140% of the kernel)."""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    k = make_kernels("""
@pto.kernel
def dead(a):
    i = pto.get_global_id()
    j = i * 3 + 1
""").dead
    prof = pto.profile(k, grid=(1, 1, 1), block=(32, 1, 1), args=(pto.alloc_tensor(128),))
    assert [(e.inst, e.start, e.end) for e in prof.timeline] == [("GLOBAL_ID", 0, 2), ("MUL", 2, 9),
                                                                 ("ADD", 9, 16), ("EXIT", 10, 11)]
    assert prof.total_cycles == 16
    assert prof.pipe_utilization()["vector"] == 14 / 16


# ---------------------------------------------------------------- what a launch keeps
TOTALS_KERNELS = """
@pto.kernel
def staged(src, out, n):
    lid = pto.get_local_id()
    i = pto.get_global_id()
    shared = pto.alloc_local(256)
    if i < n:
        pto.store(shared + lid, pto.load(src + i) * 2.0)
    pto.barrier_block()
    if i < n and lid % 3 != 0:
        out[i] = pto.load(shared + (255 - lid)) + pto.exp(pto.load(src + i))
"""


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_launch_keeps_totals_and_profile_keeps_the_timeline(make_kernels, monkeypatch, engine):
    """pto.launch keeps per-pc totals only (the compiled engine sums them as it goes, SimPy's
    come from its rows): total cycles, warp-instructions, the cycle breakdown and hotspots
    equal pto.profile's of the same launch; the timeline is a ProfileError that says how to
    get it, and launch(timeline=True) has it."""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    k = make_kernels(TOTALS_KERNELS).staged
    n = 3000
    d_src, d_out = pto.alloc_tensor(n * 4), pto.alloc_tensor(n * 4)
    pto.memcpy_h2d(d_src, np.linspace(-1, 1, n).astype(np.float32))
    args = (d_src, d_out, n)
    grid = (-(-n // 256), 1, 1)
    full = pto.profile(k, grid=grid, block=(256, 1, 1), args=args)
    light = pto.launch(k, grid=grid, block=(256, 1, 1), args=args).result()
    assert full.has_timeline and not light.has_timeline
    assert light.total_cycles == full.total_cycles
    assert light.warp_instructions == full.warp_instructions == len(full.records)
    assert light.cycle_breakdown().as_dict() == full.cycle_breakdown().as_dict()
    assert light.hotspots().rows == full.hotspots().rows
    for name in ("count", "lanes", "busy", "stall"):
        assert np.array_equal(getattr(light.totals, name), getattr(full.totals, name))
    with pytest.raises(pto.ProfileError, match="per-instruction") as err:
        light.timeline
    assert "timeline=True" in err.value.hint
    kept = pto.launch(k, grid=grid, block=(256, 1, 1), args=args, timeline=True).result()
    assert len(kept.timeline) == full.warp_instructions


def test_collectors_ask_every_launch_for_its_timeline(make_kernels):
    """Under collect_profiles() (pypto-sim profile), launches keep their records."""
    k = make_kernels(TOTALS_KERNELS).staged
    d_src, d_out = pto.alloc_tensor(256 * 4), pto.alloc_tensor(256 * 4)
    pto.memcpy_h2d(d_src, np.ones(256, np.float32))
    with collect_profiles() as profiles:
        pto.launch(k, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_out, 256))
        pto.sync()
    assert profiles[0].has_timeline and len(profiles[0].timeline) == profiles[0].warp_instructions
