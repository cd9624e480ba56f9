"""Chrome / Perfetto traces of AI-core kernels (profiler/trace.py): tracks per core, unit and PTO
pipe; a flow arrow per flag handoff and per cross-core signal; GM / L2 / HBM bytes-per-cycle
counters (profiler/memory_counters.py). Each test reads the trace's JSON."""
import inspect
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.profiler.trace import validate_trace

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _tensor(n, dtype=pto.float32):
    t = pto.alloc_tensor(n * dtype.itemsize, dtype)
    pto.memcpy_h2d(t, np.ones(n, dtype.numpy))
    return t


def _thread_names(doc):
    """{(pid, tid): track name without its row suffix (" #2": a second row of one pipe)}."""
    return {(e["pid"], e["tid"]): e["args"]["name"].split(" #")[0] for e in doc["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}


@pytest.fixture(scope="module")
def gemm():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import gemm_manual
    finally:
        sys.path.remove(str(EXAMPLES))
    _c, _r, prof = gemm_manual.run()
    return prof, prof.trace()


def test_gemm_manual_has_one_flow_per_flag_handoff(gemm):
    """examples/gemm_manual.py at its default 512 x 512 x 512 runs (512 / 128) * (512 / 256) = 8
    blocks, one per AI core. Each block's AIC sets 4 reverse flags before the K loop, then runs
    K / 64 = 8 k_steps, each with 4 set_flags (MTE2->MTE1, MTE1->MTE2, MTE1->M, M->MTE1) and 4
    wait_flags, then one M->FIX set and wait, then drains the 4 reverse flags: 4 + 8*4 + 1 = 37
    set_flags and 8*4 + 1 + 4 = 37 wait_flags, each wait taking one set: 37 handoffs a core,
    8 * 37 = 296 in all, and no other arrows (sync="manual": no data waits are drawn)."""
    prof, doc = gemm
    assert validate_trace(doc) == []
    starts = [e for e in doc["traceEvents"] if e["ph"] == "s"]
    ends = [e for e in doc["traceEvents"] if e["ph"] == "f"]
    assert len(starts) == len(ends) == doc["otherData"]["flows"] == 8 * 37
    assert {e["cat"] for e in starts} == {"flag"}
    per_flag = Counter(e["name"] for e in starts)
    # per core: event 0 and 1 each carry 4 k_steps (even and odd K steps)
    assert per_flag == {
        "set_flag(PIPE_MTE2, PIPE_MTE1, 0)": 8 * 4, "set_flag(PIPE_MTE2, PIPE_MTE1, 1)": 8 * 4,
        "set_flag(PIPE_MTE1, PIPE_M, 0)": 8 * 4, "set_flag(PIPE_MTE1, PIPE_M, 1)": 8 * 4,
        # the reverse flags: one pre-armed set, then one per k_step of the buffer
        "set_flag(PIPE_MTE1, PIPE_MTE2, 0)": 8 * 5, "set_flag(PIPE_MTE1, PIPE_MTE2, 1)": 8 * 5,
        "set_flag(PIPE_M, PIPE_MTE1, 0)": 8 * 5, "set_flag(PIPE_M, PIPE_MTE1, 1)": 8 * 5,
        "set_flag(PIPE_M, PIPE_FIX, 0)": 8}


def test_gemm_manual_flows_go_from_the_set_flag_to_the_operation_its_wait_held(gemm):
    """Every arrow starts on the AIC's scalar track (the set_flag) and ends on the track of the
    flag's destination pipe, where the wait held the next operation: MTE2->MTE1 and M->MTE1
    hold a TEXTRACT, MTE1->M a TMATMUL, M->FIX the TSTORE_ACC, MTE1->MTE2 a TLOAD. The four
    drain waits after the loop hold nothing (no operation follows them on their pipe): those
    arrows end on the wait_flag itself, on the scalar track. Tracks are per core (process) and
    unit and PTO pipe; the units' own tracks are named by unit, never by warp."""
    prof, doc = gemm
    names = _thread_names(doc)
    assert all("warp" not in n for n in names.values())
    assert {"AIC S", "AIC MTE2", "AIC MTE1", "AIC M", "AIC FIX",
            "AIC (block 0)"} <= set(names.values())
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert {procs[p] for p in range(1, 9)} == {f"core {c}" for c in range(8)}
    slices = {(e["pid"], e["tid"]): [] for e in doc["traceEvents"] if e["ph"] == "X"}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            slices[(e["pid"], e["tid"])].append(e)

    def slice_at(e):
        return next(x for x in slices[(e["pid"], e["tid"])] if x["ts"] <= e["ts"] <= x["ts"] + x["dur"])

    ends = {e["id"]: e for e in doc["traceEvents"] if e["ph"] == "f"}
    into = Counter()
    for s in (e for e in doc["traceEvents"] if e["ph"] == "s"):
        assert names[(s["pid"], s["tid"])] == "AIC S" and slice_at(s)["name"] == "SET_FLAG"
        f = ends[s["id"]]
        assert f["pid"] == s["pid"] and f["ts"] >= s["ts"]
        into[(s["name"].split(",")[1].strip(), names[(f["pid"], f["tid"])], slice_at(f)["name"])] += 1
    assert into == {
        ("PIPE_MTE2", "AIC MTE2", "TLOAD"): 8 * 8,         # each k_step's first TLOAD
        ("PIPE_MTE2", "AIC S", "WAIT_FLAG"): 8 * 2,        # the two drains of L1's flags
        ("PIPE_MTE1", "AIC MTE1", "TEXTRACT"): 8 * 16,     # MTE2->MTE1 and M->MTE1 waits
        ("PIPE_MTE1", "AIC S", "WAIT_FLAG"): 8 * 2,        # the two drains of L0's flags
        ("PIPE_M", "AIC M", "TMATMUL"): 8,                 # k0 == 0
        ("PIPE_M", "AIC M", "TMATMUL_ACC"): 8 * 7,
        ("PIPE_FIX", "AIC FIX", "TSTORE_ACC"): 8}


@pto.kernel
def ping_pong(X, Y):
    with pto.cube():
        a = pto.alloc_tile(64, 64, pto.float16, loc=pto.Mat)
        pto.tload(a, X)
        pto.cross_core_set_flag(0)       # to both AIVs
        pto.cross_core_wait_flag(1)      # from both AIVs
    with pto.vector():
        y = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.cross_core_wait_flag(0)
        pto.tload(y, Y)
        pto.cross_core_set_flag(1)


def test_one_flow_per_cross_core_signal_from_the_setting_unit_to_the_waiting_one():
    """One block: the AIC's cross_core_set_flag(0) signals AIV0 and AIV1 (two handoffs), and
    each AIV's cross_core_set_flag(1) signals the AIC, whose wait takes both (two more): four
    arrows, each from the setting unit's scalar track to the waiting unit's."""
    prof = pto.profile(ping_pong, grid=(1,), args=(_tensor(4096, pto.float16), _tensor(1024)))
    doc = prof.trace()
    assert validate_trace(doc) == []
    names = _thread_names(doc)
    ends = {e["id"]: e for e in doc["traceEvents"] if e["ph"] == "f"}
    cross = [(e["name"], names[(e["pid"], e["tid"])], names[(ends[e["id"]]["pid"], ends[e["id"]]["tid"])])
             for e in doc["traceEvents"] if e["ph"] == "s" and e["cat"] == "cross_core"]
    assert sorted(cross) == [
        ("cross_core_set_flag(0) AIC -> AIV0", "AIC S", "AIV0 S"),
        ("cross_core_set_flag(0) AIC -> AIV1", "AIC S", "AIV1 S"),
        ("cross_core_set_flag(1) AIV0 -> AIC", "AIV0 S", "AIC S"),
        ("cross_core_set_flag(1) AIV1 -> AIC", "AIV1 S", "AIC S")]


def test_each_units_exit_is_at_the_end_of_its_own_code_and_the_trace_has_no_block():
    """ping_pong's AIC runs the cube section only, so its EXIT is at that section's last line
    (cross_core_wait_flag(1)), not at the vector section's last line, which the AIC never runs;
    each AIV's EXIT is at cross_core_set_flag(1), the vector section's (and the kernel's) last
    line. otherData has no block: an AI core's block is its units, not lanes."""
    prof = pto.profile(ping_pong, grid=(1,), args=(_tensor(4096, pto.float16), _tensor(1024)))
    lines, first = inspect.getsourcelines(ping_pong.fn)
    line_of = {text.split("#")[0].strip(): first + k for k, text in enumerate(lines)}
    doc = prof.trace()
    exits = {(e["args"]["unit"], e["args"]["line"]) for e in doc["traceEvents"]
             if e["ph"] == "X" and e["name"] == "EXIT"}
    vector_end = line_of["pto.cross_core_set_flag(1)"]
    assert exits == {("AIC", line_of["pto.cross_core_wait_flag(1)"]), ("AIV0", vector_end), ("AIV1", vector_end)}
    assert "block" not in doc["otherData"] and doc["otherData"]["grid"] == [1, 1, 1]


@pto.kernel(sync="manual")
def copy_through(X, Y):
    with pto.vector():
        x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.tload(x, X)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.tstore(Y, x)


def test_memory_counters_show_each_transfers_bytes_when_it_moves_them():
    """Both vector units (AIV0 and AIV1 run a `pto.vector()` section) load a 16 x 64 float32
    tile (16 * 64 * 4 = 4096 bytes) from GM and store it back (4096 bytes): 8192 bytes read and
    8192 written. Counters in buckets of 16 cycles, in bytes per cycle (rate * 16 summed):
    core 0's GM counter reads 8192 and writes 8192; every byte crosses the L2's link (the
    ascend910b table has an L2): L2 reads 8192, writes 8192. HBM takes the bytes of the lines a
    transfer misses, loads and stores alike (write-allocate, write-back: docs/timing.md, "L2"):
    X's 4096 bytes are 8 of the L2's 512-byte lines; the first AIV to load it misses all 8
    (4096 bytes from HBM), the second finds all 8 (nothing from HBM); both store the same Y:
    the first store misses its 8 lines (4096 bytes to HBM), the second finds them (nothing). A load
    moves its bytes after its fixed latency, less the L2's miss extra when it hit every line
    (both load the same X, so the second to touch the L2 hits): every read bucket with bytes
    overlaps some load's [start + latency(TLOAD) - l2_miss_extra_latency, completion)."""
    prof = pto.profile(copy_through, grid=(1,), args=(_tensor(1024), _tensor(1024)))
    doc = prof.trace(bucket_cycles=16)
    assert validate_trace(doc) == []
    counters = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "C":
            counters.setdefault((e["pid"], e["name"]), []).append(e)
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    chip = next(p for p, n in procs.items() if n.startswith("chip"))
    assert set(counters) == {(1, "GM bytes/cycle"), (chip, "L2 bytes/cycle"), (chip, "HBM bytes/cycle")}

    def total(key, series):
        return sum(e["args"][series] for e in counters[key]) * 16

    for key in ((1, "GM bytes/cycle"), (chip, "L2 bytes/cycle")):
        assert total(key, "read") == pytest.approx(8192)
        assert total(key, "write") == pytest.approx(8192)
    assert total((chip, "HBM bytes/cycle"), "read") == pytest.approx(4096)
    assert total((chip, "HBM bytes/cycle"), "write") == pytest.approx(4096)
    loads = [e for e in prof.timeline if e.inst == "TLOAD"]
    assert {e.lane for e in loads} == {"AIV0", "AIV1"}
    m = prof.machine
    windows = [(ld.start + m.latency("TLOAD") - m.l2_miss_extra_latency, ld.end) for ld in loads]
    for e in counters[(1, "GM bytes/cycle")]:
        if e["args"]["read"]:
            assert any(e["ts"] < b and a < e["ts"] + 16 for a, b in windows)


@pto.kernel(sync="manual")
def dequant_store(A, B, Q, O):
    with pto.cube():
        a_mat = pto.alloc_tile(16, 32, pto.int8, loc=pto.Mat)
        b_mat = pto.alloc_tile(32, 32, pto.int8, loc=pto.Mat)
        a = pto.alloc_tile(16, 32, pto.int8, loc=pto.Left)
        b = pto.alloc_tile(32, 32, pto.int8, loc=pto.Right)
        c = pto.alloc_tile(16, 32, pto.int32, loc=pto.Acc)
        q_mat = pto.alloc_tile(1, 32, pto.int64, loc=pto.Mat)
        fp = pto.alloc_tile(1, 32, pto.int64, loc=pto.Scaling)
        pto.tload(a_mat, A)
        pto.tload(b_mat, B)
        pto.tload(q_mat, Q)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.tmov(a, a_mat)
        pto.tmov(b, b_mat)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(c, a, b)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_FIX, 0)
        pto.tmov(fp, q_mat)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(O, c, quant=fp)


def test_memory_counters_count_a_quantizing_stores_bytes_as_a_write():
    """The GM counters take every tile transfer of the ISA table's tile_load and tile_store
    families, TSTORE_FP (a store from Acc quantized by a Scaling tile) among them: A (16 x 32
    int8, 512 bytes), B (32 x 32 int8, 1024 bytes) and Q (32 int64 words, 256 bytes) are read,
    1792 bytes; O (16 x 32 float16 by VDEQF16) is written, 16 * 32 * 2 = 1024 bytes (the counters
    had left TSTORE_FP out: 0 written)."""
    a, b = _tensor(512, pto.int8), _tensor(1024, pto.int8)
    q = pto.to_device(np.full(32, np.float32(1.0).view(np.uint32), np.int64))
    prof = pto.profile(dequant_store, grid=(1,), args=(a, b, q, _tensor(512, pto.float16)))
    assert [e.inst for e in prof.timeline if e.inst.startswith("TSTORE")] == ["TSTORE_FP"]
    doc = prof.trace(bucket_cycles=16)
    gm = [e for e in doc["traceEvents"] if e["ph"] == "C" and e["name"] == "GM bytes/cycle"]
    assert sum(e["args"]["read"] for e in gm) * 16 == pytest.approx(512 + 1024 + 256)
    assert sum(e["args"]["write"] for e in gm) * 16 == pytest.approx(1024)


def test_utilization_busy_intervals_hotspots_and_repr_of_an_ai_core_kernel_speak_units_and_pipes():
    """copy_through on one core: each AIV's TLOAD is its only MTE2 operation, so its unit's
    MTE2 utilisation is that load's cycles in flight over the kernel's cycles, and its busy
    interval is the load's [start, end); pipes are named by unit and PTO pipe, never by the
    lane model's merged names ("load"); the hotspots have no lane column; the repr speaks of
    units, not warps."""
    prof = pto.profile(copy_through, grid=(1,), args=(_tensor(1024), _tensor(1024)))
    util = prof.pipe_utilization()
    for unit in ("AIV0", "AIV1"):
        load = next(e for e in prof.timeline if e.inst == "TLOAD" and e.lane == unit)
        assert util[f"{unit} MTE2"] == (load.end - load.start) / prof.total_cycles
        assert prof.busy_intervals("MTE2", unit=unit) == [(load.start, load.end)]
        assert prof.busy_intervals("PIPE_MTE2", unit=unit, core=0) == [(load.start, load.end)]
    assert "load" not in util and "AIC MTE2" not in util
    assert {"AIV0 MTE2", "AIV0 MTE3", "AIV1 MTE2", "AIV1 MTE3"} <= set(util)
    with pytest.raises(pto.ArgumentError, match=r"PTO pipe.*'MTE2'.*not 'load'"):
        prof.busy_intervals("load")
    with pytest.raises(pto.ArgumentError, match=r"unit must be one of"):
        prof.busy_intervals("MTE2", unit="warp 1")
    assert "lanes" not in str(prof.hotspots())
    assert "warp" not in repr(prof) and "AIC, AIV0, AIV1" in repr(prof)


def test_the_why_column_keeps_a_loads_hbm_bytes_beside_its_other_fields():
    """records.why_code packs the scalar unit's cause (< 16), the L2-miss bit, the shared wait
    (< 2**32 cycles) and the HBM read bytes; each reads back unchanged, also at the edges."""
    from pypto_sim.timing.records import why_code, why_fields, why_hbm_read_bytes
    for cause, missed, shared, hbm in ((0, 0, 0, 0), (15, 1, 2**32 - 1, 512 * 1024), (3, 1, 7, 1)):
        why = why_code(cause, missed, shared, hbm)
        assert tuple(int(x) for x in why_fields(why)) == (cause, missed, shared)
        assert why_hbm_read_bytes(why) == hbm
    column = np.array([why_code(2, 1, 40, 4096), why_code(0, 0, 0)], np.int64)
    assert why_hbm_read_bytes(column).tolist() == [4096, 0]
    # the records keep a column in the narrowest dtype its values fit: a launch whose
    # transfers moved nothing over HBM has a 32-bit why column, read back the same
    narrow = np.array([why_code(2, 1, 40), why_code(0, 0, 0)], np.int32)
    assert [f.tolist() for f in why_fields(narrow)] == [[2, 0], [1, 0], [40, 0]]
    assert why_fields(narrow[0]) == (2, 1, 40) and why_hbm_read_bytes(narrow).tolist() == [0, 0]
