"""A warp sees its own stores: program order within a warp, on HBM and in L1, in every
execution mode and timing engine. Other warps see a store only when it lands (that is what
makes a missing barrier_block() observable, tests/test_barriers.py)."""
import numpy as np
import pytest

import pypto_sim as pto

ENGINES = ("simpy", "fast")


@pto.kernel
def store_then_load_hbm(o, out):
    i = pto.get_global_id()
    pto.store(o + i, 5.0 + i)
    pto.store(out + i, pto.load(o + i))


@pto.kernel
def store_then_load_l1(out):
    i = pto.get_local_id()
    buf = pto.alloc_local(32)
    pto.store(buf + i, 7.0 * i)
    pto.store(out + i, pto.load(buf + i))


@pto.kernel
def running_sum(a, acc, n):
    """One lane adds a[0..n) into acc[0] through memory, the way numba's cuda.Reduce port
    accumulates: every load reads the store the previous iteration made."""
    if pto.get_global_id() == 0:
        pto.store(acc, 0.0)
        for k in range(n):
            pto.store(acc, pto.load(acc) + pto.load(a + k))


def _zeros(n):
    d = pto.alloc_tensor(4 * n)
    pto.memcpy_h2d(d, np.zeros(n, np.float32))
    return d


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lane_loads_what_it_just_stored_to_hbm(engine, monkeypatch):
    """The load issues a cycle after the store, long before the store lands (50+ cycles):
    it must still return 5 + i, not the 0 memory held."""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    o, out = _zeros(64), _zeros(64)
    pto.launch(store_then_load_hbm, grid=(2, 1, 1), block=(32, 1, 1), args=(o, out))
    got = np.empty(64, np.float32)
    pto.memcpy_d2h(got, out)
    assert np.array_equal(got, 5.0 + np.arange(64, dtype=np.float32))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lane_loads_what_it_just_stored_to_l1(engine, monkeypatch):
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    out = _zeros(32)
    pto.launch(store_then_load_l1, grid=(1, 1, 1), block=(32, 1, 1), args=(out,))
    got = np.empty(32, np.float32)
    pto.memcpy_d2h(got, out)
    assert np.array_equal(got, 7.0 * np.arange(32, dtype=np.float32))


@pytest.mark.parametrize("mode,engine", [("timing", "simpy"), ("timing", "fast"),
                                         ("functional", "auto")])
def test_the_ported_reduction_gives_numpys_sum(mode, engine, monkeypatch):
    """n = 129: 1 + 2 + ... + 129 = 8385 (the bug returned 129, the last element)."""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    n = 129
    host = np.arange(1, n + 1, dtype=np.float32)
    a, acc = pto.alloc_tensor(host.nbytes), _zeros(1)
    pto.memcpy_h2d(a, host)
    pto.launch(running_sum, grid=(1, 1, 1), block=(32, 1, 1), args=(a, acc, n), mode=mode)
    got = np.empty(1, np.float32)
    pto.memcpy_d2h(got, acc)
    assert got[0] == host.sum() == 8385


def test_own_store_forwarding_passes_initcheck_and_racecheck():
    """Reading back one's own store is neither an uninitialised read (the word was written)
    nor a race (one warp, program order)."""
    o, out = pto.alloc_tensor(4 * 32), _zeros(32)
    pto.launch(store_then_load_hbm, grid=(1, 1, 1), block=(32, 1, 1), args=(o, out),
               check=("initcheck", "racecheck"))
    pto.sync()
    got = np.empty(32, np.float32)
    pto.memcpy_d2h(got, out)
    assert np.array_equal(got, 5.0 + np.arange(32, dtype=np.float32))


def test_forwarding_does_not_change_timing(simple_machine):
    """The forwarded load still costs a load (simple machine: CAST 1, ADD 4, LOAD 100 + B/32,
    STORE 50 + B/32). GLOBAL_ID 0, CAST 1, ADD 2 (ready 6), STORE 6, LOAD 7: ready at
    7 + 100 + 128/32 = 111, so the second STORE issues at 111 and lands at 111 + 54 = 165."""
    o, out = _zeros(32), _zeros(32)
    prof = pto.profile(store_then_load_hbm, grid=(1, 1, 1), block=(32, 1, 1), args=(o, out))
    assert [(e.inst, e.cycle) for e in prof.timeline] == [
        ("GLOBAL_ID", 0), ("CAST", 1), ("ADD", 2), ("STORE", 6), ("LOAD", 7), ("STORE", 111),
        ("EXIT", 112)]
    assert prof.total_cycles == 165
