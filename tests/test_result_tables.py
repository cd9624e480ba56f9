"""Profile results are data: the cycle breakdown is a real Mapping (dict(), len, iteration,
json), and the tables convert to pandas."""
import collections.abc
import json
import math
import pickle

import numpy as np
import pytest

import pypto_sim as pto


@pto.kernel
def axpy(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i) * 2.0 + 1.0)


def _profile():
    x = np.arange(64, dtype=np.float32)
    d_a, d_o = pto.alloc_tensor(x.nbytes), pto.alloc_tensor(x.nbytes)
    pto.memcpy_h2d(d_a, x)
    return pto.profile(axpy, grid=(2, 1, 1), block=(32, 1, 1), args=(d_a, d_o, 64))


def test_cycle_breakdown_is_a_mapping():
    bd = _profile().cycle_breakdown()
    assert isinstance(bd, collections.abc.Mapping)
    as_dict = dict(bd)
    assert set(as_dict) == set(bd) and len(bd) == len(as_dict) > 0
    assert "LOAD" in bd and "load" in bd and bd["load"] is bd["LOAD"]
    assert as_dict["LOAD"]["count"] == 2                   # one LOAD per warp, two warps
    assert sorted(k for k in bd) == sorted(bd.keys())
    text = json.dumps(dict(bd))
    assert json.loads(text)["STORE"]["pipe"] == "store"


def test_tables_to_pandas():
    prof = _profile()
    frame = prof.cycle_breakdown().to_pandas()
    assert frame.loc["LOAD", "count"] == 2
    assert set(frame.columns) >= {"pipe", "count", "busy_cycles", "stall_cycles"}
    hot = prof.hotspots().to_pandas()
    assert hot.index.name == "line" and len(hot) == len(prof.hotspots())
    cores = prof.core_balance().to_pandas()
    assert cores["blocks"].sum() == 2


# ---------------------------------------------------------------- the article's names
@pto.kernel
def vector_add(a, b, o, n):
    i = pto.get_global_id()
    if i < n:
        a_val = pto.load(a + i)
        b_val = pto.load(b + i)
        pto.fma(o + i, a_val, 1.0, b_val)


def _vector_add_args(n=32):
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    pto.memcpy_h2d(d_a, np.arange(n, dtype=np.float32))
    pto.memcpy_h2d(d_b, np.ones(n, np.float32))
    return d_a, d_b, d_o, n


def test_an_fma_that_stores_counts_under_fma_and_store():
    """One warp of the article's vector_add. Its `pto.fma(o + i, ...)` is one FMA_STORE: the
    value is ready latency(FMA_STORE) cycles after issue (the FMA row), then the 32 x 4 = 128
    bytes are visible latency(STORE) + ceil(128 / the core's write bandwidth) later (the STORE
    row; nothing else uses the write link). Both rows count the one instruction; their busy
    cycles add up to its issue-to-completion time, so the rows' busy cycles still sum to the
    timeline's, and warp_instructions counts it once."""
    m = pto.machine()
    prof = pto.profile(vector_add, grid=(1,), block=(32,), args=_vector_add_args())
    cb = prof.cycle_breakdown()
    assert "FMA_STORE" not in cb and {"LOAD", "FMA", "STORE"} <= set(cb)
    assert cb["FMA"]["count"] == cb["STORE"]["count"] == 1
    assert cb["FMA"]["busy_cycles"] == m.latency("FMA_STORE")
    assert cb["STORE"]["busy_cycles"] == m.latency("STORE") + math.ceil(128 / m.hbm_core_write_bytes_per_cycle)
    assert cb["FMA"]["pipe"] == "vector" and cb["STORE"]["pipe"] == "store"
    [entry] = [e for e in prof.timeline if e.inst == "FMA_STORE"]      # the timeline keeps the instruction
    assert cb["FMA"]["stall_cycles"] == entry.stall_cycles and cb["STORE"]["stall_cycles"] == 0
    assert entry.end - entry.start == cb["FMA"]["busy_cycles"] + cb["STORE"]["busy_cycles"]
    assert sum(r["busy_cycles"] for r in cb.values()) == sum(e.end - e.start for e in prof.timeline)
    assert cb.warp_instructions == len(prof.timeline) < sum(r["count"] for r in cb.values())


@pto.kernel
def fma_then_store(a, o, n):
    i = pto.get_global_id()
    if i < n:
        x = pto.load(a + i)
        y = pto.fma(None, x, 2.0, 1.0)          # a plain FMA
        pto.store(o + i, y)                     # a plain STORE
        pto.fma(o + i, y, 1.0, 0.0)             # and an FMA_STORE: counted under both


def test_fused_fma_rows_join_the_plain_fma_and_store_rows_of_a_launch():
    """The same rule in a launch that keeps totals only (no timeline): one warp issues one
    FMA, one STORE and one FMA_STORE, so FMA and STORE each count 2."""
    d_a, _b, d_o, n = _vector_add_args()
    prof = pto.launch(fma_then_store, grid=(1,), block=(32,), args=(d_a, d_o, n)).result()
    cb = prof.cycle_breakdown()
    assert not prof.has_timeline
    assert cb["FMA"]["count"] == 2 and cb["STORE"]["count"] == 2 and "FMA_STORE" not in cb
    np.testing.assert_array_equal(d_o.numpy(), np.arange(n, dtype=np.float32) * 2 + 1)


def test_a_breakdown_is_read_only_and_names_what_it_has():
    """A missing name is a KeyError listing the names there are; changing a row set is refused."""
    cb = _profile().cycle_breakdown()
    with pytest.raises(KeyError, match="'FMA'.*LOAD"):
        cb["FMA"]
    with pytest.raises(TypeError, match="read-only"):
        cb["LOAD"] = {}
    assert cb.get("nope") is None and cb.get("load") is cb["LOAD"]
    assert pickle.loads(pickle.dumps(cb)) == cb


# ---------------------------------------------------------------- every report is JSON
def _json_round_trip(value):
    """json.dumps(value) works, and what it reads back is the value itself (no number was
    turned into a string on the way)."""
    return json.loads(json.dumps(value))


def test_every_report_of_a_lane_profile_is_plain_json():
    """Every public report of a Profile dumps as JSON as it is returned."""
    prof = pto.profile(vector_add, grid=(2,), block=(32,), args=_vector_add_args(64))
    bubbles = prof.bubbles()
    reports = {
        "cycle_breakdown": prof.cycle_breakdown(), "stats": prof.stats,
        "pipe_utilization": prof.pipe_utilization(),
        "pipe_utilization_active": prof.pipe_utilization(window="active"),
        "busy_intervals": prof.busy_intervals("load"), "busy_by_core": prof.busy_by_core(),
        "active_windows": prof.active_windows(), "bubbles": bubbles,
        "bubbles_summary": bubbles.summary(), "by_cause": bubbles.by_cause(), "rows": bubbles.rows(),
        "hotspots": prof.hotspots(), "top": prof.hotspots().top(2), "core_balance": prof.core_balance(),
        "trace": prof.trace()}
    for name, report in reports.items():
        _json_round_trip(report)
    back = _json_round_trip(reports["cycle_breakdown"])
    assert back == prof.cycle_breakdown().as_dict()
    assert _json_round_trip(bubbles)[0]["cycles"] == bubbles[0].cycles
    store = bubbles.summary()["store"]
    assert store["idle_cycles"] == sum(c["cycles"] for c in store["causes"]) == bubbles.cycles(pipe="store")
    hot = _json_round_trip(reports["hotspots"])
    assert [r["line"] for r in hot] == prof.hotspots().lines


@pto.kernel
def add_one(X, Y):
    with pto.vector():
        t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        pto.tload(t, X)
        pto.tadds(t, t, 1.0)
        pto.tstore(Y, t)


def test_the_ai_core_reports_are_plain_json():
    """pipeline_summary() and pipe_shares() of an AI-core kernel dump as JSON too."""
    x = pto.alloc_tensor(16 * 16 * 4)
    y = pto.alloc_tensor(16 * 16 * 4)
    pto.memcpy_h2d(x, np.zeros(256, np.float32))
    prof = pto.profile(add_one, grid=(1,), args=(x, y))
    summary = _json_round_trip(prof.pipeline_summary())
    assert [r["unit"] for r in summary] == [r["unit"] for r in prof.pipeline_summary()]
    shares = _json_round_trip(prof.pipe_shares("AIV"))
    assert shares == prof.pipe_shares("AIV") and shares["V"] > 0
    _json_round_trip(prof.bubbles().summary())
    _json_round_trip(prof.cycle_breakdown())
