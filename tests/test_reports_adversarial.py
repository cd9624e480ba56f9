"""An adversarial reading of the reports of tiny AI-core launches, as an Ascend user who knows
msprof and Perf-Sim reads them (docs/profiling.md "msprof-shaped reports", "Bubbles of an
AI-core kernel", "AI-core traces"; pypto_sim/profiler/).

Each kernel is a handful of instructions under sync="manual" with explicit flags, so every
figure follows by hand from the machine table (latency_tables/ascend910b.toml; the formulas
of docs/latency_tables.md): a TLOAD of B bytes into UB takes TLOAD's latency 307 +
ceil(B / gm_to_ub_bytes_per_cycle 58.6) cycles when its L2 lines miss (the first load of a
tensor), of which the last l2_miss_extra_latency 150 before its bytes are the miss; a TSTORE
from UB takes 153 + ceil(B / ub_to_gm_bytes_per_cycle 109.4); a vector op of the formula table
round(slope x elements + bias) (pto-isa formula_params.csv); a set_flag fires when its source
pipe has drained, and the destination pipe's next operation starts then. msprof's Task
Duration is the kernel's cycles plus task_overhead_cycles (920), at 1.85 GHz.

The expected numbers are computed from the table's entries in each test, so a changed entry
changes both sides; only the scalar unit's dispatch cycles (where the first tile operation
starts) are read from the records.
"""
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.profiler.trace import validate_trace
from pypto_sim.runtime.device import DEFAULT_BLOCK

from engine_compare import assert_engines_agree

HERE = Path(__file__).read_text().splitlines()
DOCS = Path(__file__).resolve().parent.parent / "docs"


def line_of(marker):
    """The line of this file whose comment is ``# marker``."""
    return next(i + 1 for i, text in enumerate(HERE) if text.rstrip().endswith("# " + marker))


@pto.kernel(sync="manual")
def copy_flagged(X, Y):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tload(x, X)  # R-LOAD
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)  # R-SET
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)  # R-WAIT
            pto.tstore(Y, x)


@pto.kernel(sync="manual")
def vector_waits_on_load(X, Y):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            y = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            z = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.tload(x, X)
            pto.texpands(z, 2.0)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)  # V-SET
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)  # V-WAIT
            pto.tadds(y, x, 1.0)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(Y, y)


@pto.kernel(sync="manual")
def scalar_only(X):
    with pto.vector():
        k = 0
        for i in range(4):
            k = k + i * 3


@pto.kernel(sync="manual")
def cube_extract(A):
    with pto.cube():
        a1 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        a0 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        pto.tload(a1, A)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.textract(a0, a1)


@pto.kernel(sync="manual")
def never_set(X, Y):
    with pto.vector():
        x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.tload(x, X)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)  # N-WAIT
        pto.tstore(Y, x)


def _tensor(n, dtype=pto.float32):
    t = pto.alloc_tensor(n * dtype.itemsize, dtype)
    pto.memcpy_h2d(t, np.arange(n).astype(dtype.numpy))
    return t


def _one(prof, inst, unit="AIV0", core=0):
    entry, = [e for e in prof.timeline if e.inst == inst and e.lane == unit and e.core == core]
    return entry


def _load_cycles(m, nbytes):
    """A cold TLOAD into UB: (its cycles, the miss part, the bytes part)."""
    transfer = math.ceil(nbytes / m.gm_to_ub_bytes_per_cycle)
    return m.latency("TLOAD") + transfer, m.l2_miss_extra_latency, transfer


def _store_cycles(m, nbytes):
    return m.latency("TSTORE") + math.ceil(nbytes / m.ub_to_gm_bytes_per_cycle)


def _summary_row(table, core, unit, pipe=None):
    return next(r for r in table if (r["core_id"], r["unit"]) == (core, unit)
                and (pipe is None or r["pipe"] == pipe))


@pytest.fixture(scope="module")
def copy_prof():
    return pto.profile(copy_flagged, grid=(1,), args=(_tensor(1024), _tensor(1024)))


def test_a_flag_chained_load_and_store_report_the_loads_cycles_as_the_stores_bubble(copy_prof):
    """16 x 64 float32 = 4096 B. TLOAD (cold L2): 307 + ceil(4096 / 58.6) = 377 cycles from its
    start s; the set_flag fires when MTE2 drains, so the TSTORE starts at s + 377 and takes
    153 + ceil(4096 / 109.4) = 191: the kernel ends at s + 568. MTE3's idle time before the
    TSTORE, from the TSTORE's dispatch d, is the TLOAD's remaining cycles s + 377 - d, all
    charged to the TLOAD: the flag (released by line R-SET after line R-LOAD) up to the miss,
    then the L2 miss 150, then its bytes 70. Busy plus bubbles tile each pipe's window.
    op_summary: one AIV0 row (AIV1 runs no pipe work), aiv_total_cycles = s + 568, mte2 ratio
    377 / that, mte3 191 / that, vec 0; Task Duration = (s + 568 + 920) / 1850 us."""
    p, m = copy_prof, copy_prof.machine
    load, miss, transfer = _load_cycles(m, 4096)
    store = _store_cycles(m, 4096)
    assert (load, miss, transfer, store) == (377, 150, 70, 191)
    tl, ts = _one(p, "TLOAD"), _one(p, "TSTORE")
    s, d = tl.start, ts.start - ts.stall_cycles
    assert (tl.end, ts.start, ts.end) == (s + load, s + load, s + load + store)
    end = s + load + store
    assert p.total_cycles == end
    causes = {b.kind: b for b in p.bubbles(unit="AIV0", pipe="MTE3") if b.start >= d}
    assert sorted(causes) == ["bandwidth", "flag", "l2_miss"]
    assert (causes["flag"].start, causes["flag"].end) == (d, s + load - transfer - miss)
    assert causes["l2_miss"].cycles == miss and causes["bandwidth"].cycles == transfer
    assert causes["flag"].text == (f"flag wait: wait_flag(PIPE_MTE2, PIPE_MTE3, 0) at line {line_of('R-WAIT')}, "
                                   f"released by set_flag at line {line_of('R-SET')} after TLOAD at line "
                                   f"{line_of('R-LOAD')}")
    for pipe, busy in (("MTE2", load), ("MTE3", store)):
        report = p.bubbles(unit="AIV0", pipe=pipe)
        assert report.idle_cycles + busy == end
        assert sum(b.cycles for b in report) == report.idle_cycles
    table = p.op_summary()
    assert [(r["core_id"], r["unit"]) for r in table] == [(0, "AIV0"), (None, "total")]
    row = table[0]
    assert row["Task Type"] == "AI_VECTOR_CORE" and row["aiv_total_cycles"] == end
    assert row["aiv_mte2_ratio"] == pytest.approx(load / end)
    assert row["aiv_mte3_ratio"] == pytest.approx(store / end)
    assert row["aiv_vec_ratio"] == 0
    assert row["Task Duration(us)"] == pytest.approx((end + 920) / 1850) == p.task_duration_us()
    per_pipe = p.pipeline_summary(per="pipe")
    assert _summary_row(per_pipe, 0, "AIV0", "MTE2")["busy_cycles"] == load
    assert _summary_row(per_pipe, 0, "AIV0", "MTE3")["busy_cycles"] == store
    util = p.pipe_utilization()
    shares = p.pipe_shares("AIV0")
    assert util["AIV0 MTE2"] == pytest.approx(load / end) == shares["MTE2"]
    assert util["AIV0 MTE3"] == pytest.approx(store / end) == shares["MTE3"]


def test_the_trace_loads_and_its_slices_flows_and_tracks_are_as_the_docs_say(copy_prof, tmp_path):
    """save_trace writes JSON that json.load reads and validate_trace passes; in cycles and in
    microseconds no slice has a negative duration and no two slices of one track overlap; the
    pipe tracks are named "<unit> <PTO pipe>" (docs/profiling.md: AIV0 MTE2, AIV0 MTE3, AIV0 S),
    and the one flag handoff is one arrow from the set_flag's slice on AIV0 S to the TSTORE's
    slice on AIV0 MTE3 (the operation its wait_flag held)."""
    for unit in ("cycle", "us"):
        doc = json.loads(Path(copy_prof.save_trace(tmp_path / f"t_{unit}.json", time_unit=unit)).read_text())
        assert validate_trace(doc) == []
        events = doc["traceEvents"]
        names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name" and e["pid"] == 1}
        slices = {}
        for e in events:
            if e["ph"] == "X":
                assert e["dur"] >= 0, e
                slices.setdefault(e["tid"], []).append(e)
        for tid, track in slices.items():
            track.sort(key=lambda e: e["ts"])
            for a, b in zip(track, track[1:]):
                assert a["ts"] + a["dur"] <= b["ts"], (names[tid], a["name"], b["name"])
        assert {"AIV0 S", "AIV0 MTE2", "AIV0 MTE3"} <= set(names.values())
        start, = [e for e in events if e["ph"] == "s"]
        finish, = [e for e in events if e["ph"] == "f"]
        assert start["cat"] == finish["cat"] == "flag" and start["id"] == finish["id"]
        assert (names[start["tid"]], names[finish["tid"]]) == ("AIV0 S", "AIV0 MTE3")

        def held(e):
            return next(x["name"] for x in slices[e["tid"]] if x["ts"] <= e["ts"] < x["ts"] + x["dur"])
        assert (held(start), held(finish)) == ("SET_FLAG", "TSTORE")


def test_a_vector_op_waits_on_the_load_while_an_independent_one_overlaps_it():
    """TEXPANDS (its own tile) runs on V while the TLOAD is on MTE2: the two pipes overlap, so
    the unit's busy cycles are the union, not the sum. The TADDS after wait_flag(MTE2 -> V)
    starts when the TLOAD completes (s + 377), takes round(0.0156 x 1024 + 25) = 41 cycles
    (formula_params.csv TADDS fp32 cols 64), and the TSTORE after V -> MTE3 starts at its end:
    the kernel ends at s + 377 + 41 + 191. V's idle time between the TEXPANDS and the TADDS is
    the TLOAD's (flag line V-WAIT, then its miss and bytes)."""
    prof = pto.profile(vector_waits_on_load, grid=(1,), args=(_tensor(1024), _tensor(1024)))
    m = prof.machine
    load, miss, transfer = _load_cycles(m, 4096)
    adds = m.formula_value(*m.vector_formulas[("TADDS", "float32", 64)], 1024)
    assert adds == round(0.0156 * 1024 + 25) == 41
    tl, ex, ad, st = (_one(prof, i) for i in ("TLOAD", "TEXPANDS", "TADDS", "TSTORE"))
    s = tl.start
    assert tl.start < ex.start < ex.end < tl.end == s + load == ad.start
    assert (ad.end, st.start, st.end) == (s + load + adds, s + load + adds, s + load + adds + _store_cycles(m, 4096))
    row = _summary_row(prof.pipeline_summary(), 0, "AIV0")
    assert row["mte2_aiv_cycles"] == load and row["vec_cycles"] == (ex.end - ex.start) + adds
    assert row["busy_cycles"] == row["active_cycles"] == prof.total_cycles
    waits = [b for b in prof.bubbles(unit="AIV0", pipe="V") if ex.end <= b.start and b.end <= ad.start]
    assert [b.kind for b in waits] == ["flag", "l2_miss", "bandwidth"]
    assert (waits[0].start, waits[-1].end) == (ex.end, s + load)
    assert waits[0].line == line_of("V-WAIT") and "after TLOAD" in waits[0].text


def test_a_unit_that_runs_no_pipe_work_has_no_op_summary_row_and_no_bubbles(copy_prof):
    """AIV1 of copy_flagged skips the branch: it runs its scalar branch and its EXIT and
    nothing on a pipe. It has a Perf-Sim row (its active window and scalar cycles, the same
    in every report) but no op_summary row (msprof's rows are the units that ran the task's
    pipes) and no bubbles (pipes a unit never used have none)."""
    p = copy_prof
    row = _summary_row(p.pipeline_summary(), 0, "AIV1")
    assert row["busy_cycles"] == row["scalar_cycles"] > 0
    assert all(row[c] == 0 for c in ("mte2_aiv_cycles", "vec_cycles", "mte3_cycles"))
    assert not [r for r in p.op_summary() if r["unit"] == "AIV1"]
    assert len(p.bubbles(unit="AIV1")) == 0
    assert p.pipe_utilization()["AIV1 S"] * p.total_cycles == pytest.approx(row["scalar_cycles"])


def test_a_kernel_of_scalar_code_alone_reports_its_units_time_and_scalar_ratio():
    """scalar_only runs only scalar instructions on both vector units: its pipeline_summary
    rows have busy = scalar = active cycles (the loop keeps the scalar unit busy throughout)
    and pipe_utilization gives AIV0 S 1.0. msprof would report aiv_time and an
    aiv_scalar_ratio of 1 for such a kernel; an adversarial run found op_summary with no unit
    row and a total row of N/A only (its units were dropped for running no pipe other than
    PIPE_S). Now a row per unit: aiv_total_cycles = the unit's active cycles, aiv_scalar_ratio
    = scalar / active cycles, the other ratios 0."""
    prof = pto.profile(scalar_only, grid=(1,), args=(_tensor(64),))
    perf = prof.pipeline_summary()
    table = prof.op_summary()
    assert [(r["core_id"], r["unit"]) for r in table] == [(0, "AIV0"), (0, "AIV1"), (None, "total")]
    for r in table:
        units = perf if r["unit"] == "total" else [_summary_row(perf, 0, r["unit"])]
        active = sum(u["active_cycles"] for u in units)
        assert r["aiv_total_cycles"] == active > 0
        assert r["aiv_scalar_ratio"] == pytest.approx(sum(u["scalar_cycles"] for u in units) / active) == 1.0
        assert r["aiv_time(us)"] == pytest.approx(active / len(units) / 1850)
        assert r["aiv_vec_ratio"] == r["aiv_mte2_ratio"] == r["aiv_mte3_ratio"] == 0
        assert r["Task Type"] == "AI_VECTOR_CORE"
    assert prof.pipe_utilization()["AIV0 S"] == 1.0


def test_a_block_that_waited_for_a_free_core_charges_no_stall_to_its_first_instruction():
    """25 blocks of copy_flagged on the 24 AI cores: one core runs two, the second starting
    when the first ends (its AIV0's TSTORE completes). That block was waiting for a core, not
    its first instruction for anything: the ALLOC_LOCAL (AIV0) and the EXIT (AIV1) that open
    it issue when it starts and stall 0 cycles (an adversarial run found each charged the whole
    wait, 419 cycles with cause "none", in the timeline, hotspots, instr_exe.csv and the trace).
    The compiled engine and SimPy agree on every record. The reports still see the gap: the
    core's window spans both blocks, and op_summary's row of
    that AIV0 counts both blocks' busy cycles over it."""
    prof = pto.profile(copy_flagged, grid=(25,), args=(_tensor(1024), _tensor(1024)))
    m = prof.machine
    assert m.cores == 24
    rec = prof.records
    core = int(np.bincount(rec.core[rec.pc == 0]).argmax())
    entries = [e for e in prof.timeline if e.core == core]
    blocks = sorted({e.block for e in entries})
    assert len(blocks) == 2
    first_end = max(e.end for e in entries if e.block == blocks[0])
    openers = [min((e for e in entries if e.block == blocks[1] and e.lane == u), key=lambda e: e.start)
               for u in ("AIV0", "AIV1")]
    assert [(e.inst, e.start, e.stall_cycles) for e in openers] == [("ALLOC_LOCAL", first_end, 0),
                                                                    ("EXIT", first_end, 0)]
    alloc_line = prof.program.instrs[openers[0].pc].line
    assert prof.hotspots()[alloc_line]["stall_cycles"] == 0
    assert prof.cycle_breakdown()["ALLOC_LOCAL"]["stall_cycles"] == 0
    row = _summary_row(prof.op_summary(), core, "AIV0")
    assert row["aiv_total_cycles"] == max(e.end for e in entries)
    loads = [e for e in entries if e.inst == "TLOAD"]
    assert row["aiv_mte2_ratio"] == pytest.approx(sum(e.end - e.start for e in loads) / row["aiv_total_cycles"])
    assert row["Block Dim"] == 25 and len(prof.op_summary()) == 24 + 1
    assert_engines_agree(copy_flagged, (_tensor(1024), _tensor(1024)), (25, 1, 1), DEFAULT_BLOCK)


def test_a_deadlocked_flag_is_a_typed_error_naming_kernel_line_unit_and_flag():
    """wait_flag(PIPE_MTE2, PIPE_MTE3, 0) with no set_flag before it would hold MTE3 forever:
    pto.profile raises DeadlockError (no report) naming the kernel, the wait_flag's line, the
    unit and block, the flag, and what to do."""
    with pytest.raises(pto.DeadlockError) as info:
        pto.profile(never_set, grid=(1,), args=(_tensor(1024), _tensor(1024)))
    text = str(info.value)
    assert "'never_set'" in text and f":{line_of('N-WAIT')}:" in text
    assert "wait_flag(PIPE_MTE2, PIPE_MTE3, 0)" in text and re.search(r"on AIV[01] of block", text)
    assert "hint:" in text


def test_the_trace_track_names_the_docs_quote_are_the_traces():
    """docs/aicore.md ("Profiles", save_trace) and docs/profiling.md quote AI-core track names;
    each must be a track of a trace with that unit and pipe (an adversarial run found
    docs/aicore.md naming "AIC PIPE_MTE1" and "AIV0 PIPE_V" where the trace says "AIC MTE1",
    "AIV0 V")."""
    cube = pto.profile(cube_extract, grid=(1,), args=(_tensor(256, pto.float16),))
    vec = pto.profile(vector_waits_on_load, grid=(1,), args=(_tensor(1024), _tensor(1024)))
    tracks = set()
    for prof in (cube, vec):
        tracks |= {e["args"]["name"] for e in prof.trace()["traceEvents"] if e["name"] == "thread_name"}
    quoted = set()
    for doc in ("aicore.md", "profiling.md"):
        for text in DOCS.joinpath(doc).read_text().split("\n\n"):
            if "save_trace" in text or "track" in text:
                quoted |= set(re.findall(r"[\"`]((?:AIC|AIV0) (?:PIPE_)?(?:S|MTE1|MTE2|MTE3|M|FIX|V))[\"`]", text))
    assert quoted <= tracks, quoted - tracks
    assert {"AIC MTE1", "AIV0 V"} <= quoted
