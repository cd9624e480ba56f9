"""AI-core bubbles: each idle stretch of each unit's PTO pipe and its true cause, one hand-built
kernel per cause (profiler/aicore_bubbles.py). The expected stretches follow from the timing
rules (docs/aicore.md, exec/compiled/aicore_steps.py) and the machine table
(latency_tables/ascend910b.toml), applied to the other instructions' records."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.profiler.intervals import union_cycles

HERE = Path(__file__).read_text().splitlines()
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def line_of(marker):
    """The line of this file whose comment is ``# marker``."""
    return next(i + 1 for i, text in enumerate(HERE) if text.rstrip().endswith("# " + marker))


@pto.kernel(sync="manual")
def flag_handoff(X, Y):
    with pto.vector():
        x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        y = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.tload(x, X)  # H-LOAD
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)  # H-SET-V
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)  # H-WAIT-V
        pto.tadds(y, x, 1.0)  # H-ADDS
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)  # H-SET
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)  # H-WAIT
        pto.tstore(Y, y)


@pto.kernel
def cross_handoff(X, Y):
    with pto.cube():
        a = pto.alloc_tile(64, 64, pto.float16, loc=pto.Mat)
        pto.tload(a, X)  # C-LOAD
        pto.cross_core_set_flag(0)  # C-SET
    with pto.vector():
        y = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.cross_core_wait_flag(0)  # C-WAIT
        pto.tload(y, Y)


@pto.kernel(sync="manual")
def queue_fill(X):
    with pto.cube():
        a = pto.alloc_tile(64, 64, pto.float16, loc=pto.Mat)
        a0 = pto.alloc_tile(64, 64, pto.float16, loc=pto.Left)
        for _ in range(20):
            pto.tload(a, X)  # Q-LOAD
        pto.tmov(a0, a)


@pto.kernel
def scalar_between(X, Y, n):
    with pto.vector():
        x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.tload(x, X)
        pto.tadds(x, x, 1.0)
        k = 0
        for i in range(n):
            k = k + i * 3
        pto.tadds(x, x, 2.0)
        pto.tstore(Y + (k - k), x)


@pto.kernel(sync="manual")
def barrier_between(X, Y):
    with pto.vector():
        x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        y = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.tload(x, X)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.tadd(y, x, x)
        pto.pipe_barrier(pto.PIPE_V)  # B-BARRIER
        pto.tadd(x, y, y)


@pto.kernel
def data_wait(X, Y):
    with pto.vector():
        x = pto.alloc_tile(64, 128, pto.float32, loc=pto.Vec)
        y = pto.alloc_tile(64, 128, pto.float32, loc=pto.Vec)
        pto.tload(x, X + pto.get_block_id() * 64 * 128 * 2 + pto.get_subblock_id() * 64 * 128)  # D-LOAD
        pto.tadds(y, x, 1.0)
        pto.tstore(Y, y)


def _tensor(n, dtype=pto.float32):
    t = pto.alloc_tensor(n * dtype.itemsize, dtype)
    pto.memcpy_h2d(t, np.zeros(n, dtype.numpy))
    return t


def _ops(prof, unit, name, core=0):
    """(dispatch, start, complete) of each `name` record of the unit on a core, in order."""
    rec = prof.records
    sel = (rec.core == core) & (rec.warp == unit) & (np.array(prof.pc_name)[rec.pc] == name)
    return [(int(i - s), int(i), int(c)) for i, s, c in zip(rec.issue[sel], rec.stall[sel], rec.complete[sel])]


def _stretches(prof, unit, pipe, kind=None, core=0):
    return [b for b in prof.bubbles(unit=unit, pipe=pipe, core=core) if kind is None or b.kind == kind]


@pytest.fixture(scope="module")
def handoff():
    return pto.profile(flag_handoff, grid=(1,), args=(_tensor(1024), _tensor(1024)))


def test_flag_wait_names_its_wait_flag_the_flag_and_the_set_flag_and_instruction_that_released_it(handoff):
    """MTE3 of AIV0 runs one TSTORE: the scalar unit hands it over at its dispatch d, and
    wait_flag(PIPE_V, PIPE_MTE3, 0) holds it until the set_flag fires: when V has finished
    the TADDS queued before it (priced by its [formulas] row, pto-isa formula_params.csv, which
    leaves no separate tail to pay). So [d, TADDS completion) is one flag stretch naming both
    lines and the TADDS."""
    (d, start, _), = _ops(handoff, 1, "TSTORE")
    (_, _, adds_done), = _ops(handoff, 1, "TADDS")
    assert start == adds_done > d
    flag, = _stretches(handoff, "AIV0", "MTE3", "flag")
    assert (flag.start, flag.end) == (d, adds_done)
    assert flag.line == line_of("H-WAIT") and flag.inst == "WAIT_FLAG"
    assert flag.text == (f"flag wait: wait_flag(PIPE_V, PIPE_MTE3, 0) at line {line_of('H-WAIT')}, released "
                         f"by set_flag at line {line_of('H-SET')} after TADDS at line {line_of('H-ADDS')}")


def test_nothing_after_a_pipes_last_operation_is_its_idle_tail(handoff):
    """V's last operation is the TADDS; the core's active window ends when the last TSTORE
    completes: V's idle tail is [TADDS completion, that end) - one stretch, cause nothing."""
    (_, _, adds_done), = _ops(handoff, 1, "TADDS")
    end = handoff.active_windows()[0][1]
    tail = _stretches(handoff, "AIV0", "V", "idle")[-1]
    assert (tail.start, tail.end) == (adds_done, end)
    assert tail.text == "nothing: no more work for this pipe (idle tail)"


def test_a_load_released_flag_wait_ends_with_the_loads_l2_miss_and_its_bytes_over_its_gm_path(handoff):
    """The TADDS waits (wait_flag MTE2 -> V) for the TLOAD of 16 x 64 float32 = 4096 bytes.
    Its last ceil(4096 / 58.6) = 70 cycles (gm_to_ub_bytes_per_cycle) move its bytes over the
    unit's GM -> UB path: GM bandwidth. Both AIVs load the same lines at the same cycle: the
    first (AIV0) misses in L2 and pays l2_miss_extra_latency = 150 cycles just before them; AIV1
    finds the lines in L2 (no miss stretch). Nothing else shares the chip's links: no L2/HBM
    bandwidth stretch."""
    assert handoff.machine.l2_miss_extra_latency == 150
    for unit, w, missed in (("AIV0", 1, True), ("AIV1", 2, False)):
        (_, _, done), = _ops(handoff, w, "TLOAD")
        gm = [b for b in _stretches(handoff, unit, "V", "bandwidth")]
        assert [(b.start, b.end) for b in gm] == [(done - 70, done)]
        assert gm[0].text == f"GM bandwidth: TLOAD at line {line_of('H-LOAD')} moving its bytes over its unit's GM path"
        miss = _stretches(handoff, unit, "V", "l2_miss")
        assert [(b.start, b.end) for b in miss] == ([(done - 220, done - 70)] if missed else [])


def test_cross_core_wait_names_the_unit_and_line_that_set_it():
    """AIV0's only MTE2 operation comes after cross_core_wait_flag(0), which the AIC's
    cross_core_set_flag(0) fires once the AIC's queued TLOAD completes. So AIV0's scalar unit
    waits from the cycle after its wait was reached to that completion, and its MTE2 idles
    for it: one cross-core stretch ending at the AIC TLOAD's completion."""
    prof = pto.profile(cross_handoff, grid=(1,), args=(_tensor(4096, pto.float16), _tensor(1024)))
    (_, _, aic_done), = _ops(prof, 0, "TLOAD")
    cc, = _stretches(prof, "AIV0", "MTE2", "cross_core")
    assert cc.end == aic_done
    assert cc.text == (f"cross-core flag 0 (cross_core_wait_flag at line {line_of('C-WAIT')}): set by this "
                       f"core's AIC at line {line_of('C-SET')}")
    assert cc.line == line_of("C-WAIT")


def test_full_pipe_queue_holds_the_scalar_unit_and_so_the_other_pipes():
    """pipe_queue_depth = 16: TLOADs 17..20 each wait for a place in MTE2's queue, i.e. for
    TLOADs 1..4 to complete, holding the AIC's scalar unit; the TMOV after them is dispatched
    late and MTE1 idles. So MTE1's queue stretches end at the completions of TLOADs 1..4 (the
    second, an L2 hit started when the first's bytes were issued, retires with the first: one
    stretch ends at both)."""
    prof = pto.profile(queue_fill, grid=(1,), args=(_tensor(4096, pto.float16),))
    assert prof.machine.pipe_queue_depth == 16
    loads = _ops(prof, 0, "TLOAD")
    assert len(loads) == 20
    queue = _stretches(prof, "AIC", "MTE1", "queue")
    done = [c for _, _, c in loads[:4]]
    assert done[0] == done[1] and [b.end for b in queue] == sorted(set(done))
    assert all(f"TLOAD at line {line_of('Q-LOAD')} waited to enter it" in b.text for b in queue)
    assert all(b.text.startswith("full pipe queue: AIC's PIPE_MTE2 queue") for b in queue)


def test_the_scalar_unit_between_two_vector_ops():
    """Between the two TADDS, AIV0's scalar unit runs a 200-iteration loop; the second TADDS
    does not wait on its pipe (its tile was written long before), so V's whole gap between
    them - from the first's completion to the second's start (= its dispatch) - is the scalar
    unit."""
    prof = pto.profile(scalar_between, grid=(1,), args=(_tensor(1024), _tensor(1024), 200))
    (_, _, first_done), (d2, s2, _) = _ops(prof, 1, "TADDS")
    assert d2 == s2
    gap = [b for b in _stretches(prof, "AIV0", "V") if first_done <= b.start < s2]
    assert {b.kind for b in gap} == {"scalar"}
    assert sum(b.cycles for b in gap) == s2 - first_done


def test_a_pipe_barrier_holds_its_pipe_as_a_barrier_not_as_a_flag():
    """pipe_barrier(PIPE_V) makes the second TADD wait for the first to complete, tail and all
    (docs/aicore.md: a sync pays the pending tail). V's gap between them is the barrier's,
    naming its line; it is not the wait_flag of the MTE2 -> V flag, which fired before the
    first TADD started (the gap used to be blamed on it, the barrier sharing the flags' hold)."""
    prof = pto.profile(barrier_between, grid=(1,), args=(_tensor(1024), _tensor(1024)))
    (_, _, first_done), (_, s2, _) = _ops(prof, 1, "TADD")
    assert s2 > first_done
    gap = [b for b in _stretches(prof, "AIV0", "V") if first_done <= b.start < s2]
    assert [(b.kind, b.line) for b in gap] == [("barrier", line_of("B-BARRIER"))]
    assert sum(b.cycles for b in gap) == s2 - first_done
    second = [e for e in prof.timeline if e.inst == "TADD" and e.warp == 1][1]
    assert second.stall == "barrier"


def test_data_wait_under_auto_sync_and_shared_l2_hbm_bandwidth():
    """sync="auto": the TADDS reads the tile the TLOAD writes, so from its dispatch d it waits
    for the TLOAD's completion c: data, ending with the TLOAD's transfer. 24 cores x 2 AIVs
    load 32 KiB each at once from distinct lines, 48 x 58.6 bytes a cycle asked of HBM's 805.5:
    the links are booked first come first served, so the last core's AIV1 waits for them. Its
    TLOAD's last cycles beyond its latency (307, a miss) and its bytes over its own path
    (ceil(32768 / 58.6) = 560) are waits for the chip's shared L2 / HBM links: L2/HBM
    bandwidth."""
    cores = 24
    prof = pto.profile(data_wait, grid=(cores,), args=(_tensor(cores * 2 * 64 * 128), _tensor(64 * 128)))
    last = cores - 1
    (d, start, _), = _ops(prof, 2, "TADDS", last)
    (_, load_start, c), = _ops(prof, 2, "TLOAD", last)
    assert start == c
    pipe_side = [b for b in _stretches(prof, "AIV1", "V", core=last) if b.start >= d and b.end <= c]
    assert sum(b.cycles for b in pipe_side) == c - d
    data = [b for b in pipe_side if b.kind == "data"]
    assert data and all(b.text == f'data (sync="auto"): TLOAD at line {line_of("D-LOAD")} writes a tile it reads'
                        for b in data)
    shared = c - load_start - 307 - math.ceil(32768 / 58.6)
    assert shared > 0
    hbm = [b for b in pipe_side if b.text.startswith("L2/HBM bandwidth")]
    assert [(b.start, b.end) for b in hbm] == [(c - shared, c)]


def _check_idle_adds_up(prof):
    """For each core, unit and pipe it used: its stretches and its busy cycles tile the core's
    active window."""
    rec, tile = prof.records, np.asarray(prof.pc_is_tile, bool)[prof.records.pc]
    report = prof.bubbles()
    for core, (w0, w1) in prof.active_windows().items():
        for unit, name in enumerate(("AIC", "AIV0", "AIV1")):
            on = tile & (rec.core == core) & (rec.warp == unit)
            for p in np.unique(prof.record_pipes[on]).tolist():
                sel = on & (prof.record_pipes == p)
                busy = union_cycles(rec.issue[sel], rec.complete[sel])
                idle = sum(b.cycles for b in report if b.unit == name and b.core == core and b.pipe == _pto(p))
                assert idle + busy == w1 - w0, (core, name, p)


def _pto(p):
    from pypto_sim.profiler.aicore_bubbles import pipe_name
    return pipe_name(p)


def _example(name):
    sys.path.insert(0, str(EXAMPLES))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(EXAMPLES))


@pytest.fixture(scope="module")
def flash():
    return _example("flash_attention").run(256, values=False)[2]


def test_each_causes_share_adds_up_to_each_pipes_idle_time(flash, handoff):
    """Every idle cycle of every pipe of every unit gets exactly one cause: per core, unit and
    pipe, busy cycles + the stretches = the core's active window; per unit and pipe, the
    causes' cycles = the idle cycles the report prints."""
    for prof in (flash, handoff):
        _check_idle_adds_up(prof)
        report = prof.bubbles()
        for label, entry in report.summary().items():
            assert sum(c["cycles"] for c in entry["causes"]) == entry["idle_cycles"]


def test_flash_attention_load_pipes_idle_first_on_the_cross_core_waits(flash):
    """The cube waits for the vector cores' P (cross-core flag 1) and the vector cores for
    S and PV (flags 0, 2): on every unit's MTE2 the largest cause is a cross-core wait."""
    summary = flash.bubbles().summary()
    for unit in ("AIC", "AIV0", "AIV1"):
        first = summary[f"{unit} MTE2"]["causes"][0]
        assert first["kind"] == "cross_core", (unit, first)
    assert summary["AIC MTE2"]["causes"][0]["cause"].startswith(
        "cross-core flag 1 (cross_core_wait_flag at line 36): set by this core's AIV")


def test_gemm_manual_flag_waits_name_the_wait_flag_lines_and_their_set_flags():
    """examples/gemm_manual.py: TEXTRACT (line 33) is held by wait_flag(MTE2, MTE1) at line 31
    until set_flag at line 30 fires after the TLOAD at line 29; TMATMUL by wait_flag(MTE1, M)
    at line 37, released by set_flag at line 36 after the TEXTRACT at line 34. Line 32's wait
    (M -> MTE1) is in the report only when it is the later of TEXTRACT's two flags."""
    prof = _example("gemm_manual").run(256, 256, 256, values=False)[2]
    texts = {b.text for b in prof.bubbles(unit="AIC", pipe="MTE1") if b.kind == "flag"}
    assert ("flag wait: wait_flag(PIPE_MTE2, PIPE_MTE1, 0) at line 31, released by set_flag at line 30 "
            "after TLOAD at line 29") in texts
    assert all(" at line 31, " in t or " at line 32, " in t for t in texts)
    m_texts = {b.text for b in prof.bubbles(unit="AIC", pipe="M") if b.kind == "flag"}
    assert ("flag wait: wait_flag(PIPE_MTE1, PIPE_M, 0) at line 37, released by set_flag at line 36 "
            "after TEXTRACT at line 34") in m_texts


def test_unknown_pipe_or_unit_names_the_valid_ones(handoff):
    with pytest.raises(pto.ArgumentError, match=r"one of \('MTE2', 'MTE1', 'M', 'FIX', 'V', 'MTE3'\)"):
        handoff.bubbles(pipe="load")
    with pytest.raises(pto.ArgumentError, match=r"unit must be one of \('AIC', 'AIV0', 'AIV1'\)"):
        handoff.bubbles(unit="AIV")


def test_the_timeline_and_breakdown_of_an_ai_core_kernel_speak_units_and_pto_pipes(handoff):
    """Each timeline entry of the flag hand-off names its unit (the AIVs run the vector
    section) and its PTO pipe; the cycle breakdown names the PTO pipes too, and the report's
    header the AI core's units, not a lane block."""
    tl = handoff.timeline
    store = next(e for e in tl if e.inst == "TSTORE" and e.warp == 1)
    assert (store.lane, store.unit, store.pipe) == ("AIV0", "AIV0", "MTE3")
    assert str(store) == f"Cycle {store.cycle}: AIV0: TSTORE"
    assert {e.pipe for e in tl if e.inst == "TADDS"} == {"V"}
    assert {e.pipe for e in tl if e.inst == "WAIT_FLAG"} == {"S"}
    bd = handoff.cycle_breakdown()
    assert (bd["TLOAD"]["pipe"], bd["TADDS"]["pipe"]) == ("MTE2", "V")
    assert "TSTORE           MTE3" in str(bd)
    head = handoff.report().splitlines()[0]
    assert head.endswith("grid=(1, 1, 1) one AI core a block (AIC, AIV0, AIV1)") and "block=(" not in head


def test_core_balance_of_an_ai_core_kernel_has_a_column_per_unit_and_pto_pipe(flash):
    """Core balance splits each AI core's busy cycles by unit and PTO pipe, the same numbers
    as pipeline_summary(per="pipe") (no merged "load" or "vector" column)."""
    balance = flash.core_balance()
    per_pipe = {(r["core_id"], r["unit"], r["pipe"]): r["busy_cycles"] for r in flash.pipeline_summary(per="pipe")}
    for row in balance:
        assert "load_cycles" not in row and "vector_cycles" not in row
        for (core, unit, pipe), busy in per_pipe.items():
            if core == row["core_id"]:
                assert row[f"{unit.lower()}_{pipe.lower()}_cycles"] == busy
    assert "AIC MTE2" in str(balance) and "AIV1 MTE3" in str(balance)


def test_the_gap_between_two_blocks_on_one_core_is_nothing_to_run_not_an_instruction():
    """48 blocks on 24 AI cores: each core runs two, one after the other. AIV0's V pipe idles
    from its block-0 TADDS to its block-1 TADDS. AIV0's scalar unit issued its last block-0
    instruction long before the TADDS completed (it only queues the tile operations), so from
    that completion it has nothing to run until its core's block 0 ends (its units' TSTOREs
    drained) and block 1 starts: one stretch of cause nothing, from the TADDS's completion to
    the unit's first issue of block 1."""
    cores = 24
    prof = pto.profile(data_wait, grid=(2 * cores,), args=(_tensor(2 * cores * 2 * 64 * 128), _tensor(64 * 128)))
    rec = prof.records
    mine = (rec.core == 0) & (rec.warp == 1)
    blocks = np.unique(rec.block[mine]).tolist()
    assert len(blocks) == 2
    first_issue = int(rec.issue[mine & (rec.block == blocks[1])].min())
    between = [b for b in _stretches(prof, "AIV0", "V", "idle") if b.end == first_issue]
    assert len(between) == 1
    assert between[0].text == "nothing: the unit waited for its block's other units or the next block"
    adds = mine & (rec.block == blocks[0]) & (np.array(prof.pc_name)[rec.pc] == "TADDS")
    assert between[0].start == int(rec.complete[adds][0])


def test_the_report_is_plain_data_json_pickle_pandas_and_csv_take(handoff, tmp_path):
    """The AI-core report is a read-only list of plain dicts with a unit: json and pickle
    round-trip it, to_pandas has a unit column, bubbles.csv a unit column after core_id."""
    import json
    import pickle
    report = handoff.bubbles(unit="AIV0")
    assert json.loads(json.dumps(report)) == list(report)
    again = pickle.loads(pickle.dumps(report))
    assert list(again) == list(report) and str(again) == str(report) and again.unit == "AIV0"
    frame = report.to_pandas()
    assert set(frame["unit"]) == {"AIV0"} and frame["cycles"].sum() == report.idle_cycles
    head = handoff.export_csv(tmp_path)["bubbles"].read_text().splitlines()[0]
    assert head.startswith("core_id,unit,pipe,start_cycle")


def test_the_plot_draws_a_row_per_core_unit_and_pto_pipe(flash, tmp_path):
    """The Gantt chart of an AI-core kernel has one row per core, unit and PTO pipe with work
    (PIPE_S included), each with that pipe's merged busy intervals (their cycles are its busy
    cycles in pipeline_summary(per="pipe")); the utilisation bars are per unit and pipe."""
    from pypto_sim.profiler.plot import _unit_rows, _unit_utilisation
    rows = {label: spans for label, _colour, spans in _unit_rows(flash, [0, 1])}
    per_pipe = flash.pipeline_summary(per="pipe")
    assert set(rows) == {f"core {r['core_id']} {r['unit']} {r['pipe']}" for r in per_pipe}
    for r in per_pipe:
        if r["pipe"] != "S":
            spans = rows[f"core {r['core_id']} {r['unit']} {r['pipe']}"]
            assert sum(e - s for s, e in spans) == r["busy_cycles"]
    names, values = _unit_utilisation(flash)
    assert names[:4] == ["AIC MTE2", "AIC MTE1", "AIC M", "AIC FIX"] and "AIV1 MTE3" in names
    assert all(0 < v <= 100 for v in values)
    assert flash.save_plot(tmp_path / "fa.png").stat().st_size > 0
