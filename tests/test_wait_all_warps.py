"""wait_all() waits for every tile operation the block issued before it, in every warp.

Tile operations are block-level: warp 0 dispatches them. A warp that reaches its wait_all()
before warp 0 has even dispatched the async_load must still wait for that load (the bug: it
read zeros, and racecheck reported a race on a correctly synchronised kernel)."""
import numpy as np
import pytest

import pypto_sim as pto


@pto.kernel
def late_warp0_load(a, o):
    """Warp 0 first copies a row (a slow HBM round trip), so warps 1.. reach wait_all first."""
    t = pto.alloc_local(64)
    if pto.get_warp_id() == 0:
        pto.store(o + 100 + pto.get_lane_id(), pto.load(a + pto.get_lane_id()))
    pto.async_load(t, a, 256)
    pto.wait_all()
    i = pto.get_local_id()
    pto.store(o + i, pto.load(t + i))


@pto.kernel
def late_warp0_load_barrier(a, o):
    t = pto.alloc_local(64)
    if pto.get_warp_id() == 0:
        pto.store(o + 100 + pto.get_lane_id(), pto.load(a + pto.get_lane_id()))
    pto.async_load(t, a, 256)
    pto.wait_all()
    pto.barrier_block()
    i = pto.get_local_id()
    pto.store(o + i, pto.load(t + i))


@pto.kernel
def warp0_waits_then_barrier(a, o):
    """Only warp 0 waits; barrier_block() then orders the other warps after the load."""
    t = pto.alloc_local(64)
    pto.async_load(t, a, 256)
    if pto.get_warp_id() == 0:
        pto.wait_all()
    pto.barrier_block()
    i = pto.get_local_id()
    pto.store(o + i, pto.load(t + i))


@pto.kernel
def no_wait(a, o):
    t = pto.alloc_local(64)
    pto.async_load(t, a, 256)
    i = pto.get_local_id()
    pto.store(o + i, pto.load(t + i))


def _run(kernel, check=None):
    x = np.arange(64, dtype=np.float32) + 1
    d_a, d_o = pto.alloc_tensor(x.nbytes), pto.alloc_tensor(4 * 256)
    pto.memcpy_h2d(d_a, x)
    prof = pto.profile(kernel, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o), check=check)
    out = np.empty(256, np.float32)
    pto.memcpy_d2h(out, d_o)
    return prof, x, out[:64]


@pytest.mark.parametrize("kernel", [late_warp0_load, late_warp0_load_barrier, warp0_waits_then_barrier])
@pytest.mark.parametrize("check", [None, "racecheck"])
def test_every_warp_reads_the_loaded_tile(kernel, check):
    _, x, out = _run(kernel, check)
    assert np.array_equal(out, x)


def test_warp1_waits_for_the_load_warp0_dispatches_later():
    """Warp 1's LOAD_L1 of the tile starts only after the TLOAD completes."""
    prof, _, _ = _run(late_warp0_load)
    tload_end = max(e.end for e in prof.timeline if e.inst == "TLOAD")
    warp1_read = min(e.start for e in prof.timeline if e.inst == "LOAD_L1" and e.warp == 1)
    assert warp1_read >= tload_end


def test_racecheck_still_catches_a_missing_wait_all():
    with pytest.raises(pto.RaceError, match="wait_all"):
        _run(no_wait, "racecheck")
