"""Profile results are data: the cycle breakdown is a real Mapping (dict(), len, iteration,
json), and the tables convert to pandas."""
import collections.abc
import json

import numpy as np

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
