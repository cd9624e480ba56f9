"""HBM bandwidth past the first resident wave.

A link is a set of busy intervals (pypto_sim.exec.compiled.engine_parts.link_book): a tile
load booked early for a late start (it waits for its pipeline buffer) takes bandwidth from
then on and leaves the link free before it. With a single busy-until cursor every later
transfer queued behind such a booking, so blocks after the first wave ran one after another:
384 blocks of a streaming copy took 1.44x the bandwidth bound, 768 blocks 4.2x."""
import numpy as np
import pytest

import pypto_sim as pto

R, C, STEPS = 32, 256, 4          # 32 KiB tiles, double-buffered: 8 blocks fit a core's L1


@pto.kernel
def stream_copy(a, o):
    base = pto.get_block_id() * R * C * STEPS
    with pto.pipeline(depth=2) as pl:
        for s in pl.range(0, STEPS, 1):
            with pl.stage("load"):
                t = pto.alloc_local(R * C)
                pto.async_load(t, a + base + s * R * C, rows=R, cols=C, stride=C)
            with pl.stage("store", after="load"):
                pto.store(o + base + s * R * C, t, rows=R, cols=C, stride=C)
    pl.run()


def _copy_cycles(blocks):
    x = np.arange(blocks * R * C * STEPS, dtype=np.float32)
    d_a, d_o = pto.alloc_tensor(x.nbytes), pto.alloc_tensor(x.nbytes)
    pto.memcpy_h2d(d_a, x)
    result = pto.launch(stream_copy, grid=(blocks, 1, 1), block=(32, 1, 1), args=(d_a, d_o)).result()
    out = np.empty_like(x)
    pto.memcpy_d2h(out, d_o)
    assert np.array_equal(out, x)
    return result.total_cycles, 2 * x.nbytes / pto.machine().hbm_chip_bytes_per_cycle


def test_waves_of_bandwidth_bound_blocks_stay_at_the_bandwidth_bound():
    """Every byte is read once and written once on the chip's HBM (805.5 B/cycle on the
    default machine): N waves of 192 resident blocks take N times the cycles of one, each
    within 10% of bytes / bandwidth."""
    m = pto.machine()
    per_wave = m.cores * 8
    cycles = {}
    for waves in (1, 2, 4):
        cycles[waves], bound = _copy_cycles(waves * per_wave)
        assert bound <= cycles[waves] <= 1.10 * bound, (waves, cycles[waves], bound)
    assert cycles[4] / cycles[1] == pytest.approx(4, rel=0.05)
    assert cycles[2] / cycles[1] == pytest.approx(2, rel=0.05)


def test_a_late_booking_leaves_the_link_free_before_it():
    """link_book: d cycles booked at t take the link's free time from t on, gaps before later
    bookings included; the link is then busy over [t, done)."""
    from pypto_sim.exec.lane import executor
    from pypto_sim.timing.fast import link_arrays
    ex = executor()
    s, e, n = link_arrays(ex, 1)
    assert ex.link_book(s, e, n, 0, 1000.0, 100.0, 0.0) == 1100.0     # a late booking
    assert ex.link_book(s, e, n, 0, 10.0, 50.0, 0.0) == 60.0          # fits before it
    assert ex.link_book(s, e, n, 0, 900.0, 150.0, 0.0) == 1150.0      # 100 before, 50 after
    assert [(s[0, k], e[0, k]) for k in range(n[0])] == [(10.0, 60.0), (900.0, 1150.0)]
    assert ex.link_book(s, e, n, 0, 2000.0, 1.0, 1200.0) == 2001.0    # the past is dropped
    assert n[0] == 1


@pto.kernel(sync="manual")
def stream_in(X, loads):
    """Each AIV loads `loads` [64, 1024] half tiles (128 KiB) of its own lines, back to back."""
    with pto.vector():
        core = pto.get_block_id() * 2 + pto.get_subblock_id()
        t = pto.alloc_tile(64, 1024, pto.float16, loc=pto.Vec)
        for i in range(loads):
            pto.tload(t, X + (core * loads + i) * 64 * 1024)


def test_48_aivs_streaming_reads_move_at_the_measured_chip_rate():
    """CANN's data_copy sample (scenario 3) streams [64, 1024] half tiles GM -> UB on 48 AIVs at
    1.490 TB/s = 805.5 B/cycle, the table's chip link. Here 48 AIVs x 4 tiles of 131,072 B =
    25,165,824 B all miss in L2: 25,165,824 / 805.5 = 31,242.5 cycles on the chip's link (each
    AIV's own GM -> UB path would take 4 x 131,072 / 58.6 = 8,947), plus the first load's
    307-cycle latency: between 31,242.5 and (31,242.5 + 307) + 1%."""
    m = pto.machine()
    loads = 4
    x = pto.alloc_tensor(48 * loads * 64 * 1024 * 2, pto.float16)
    prof = pto.profile(stream_in, grid=(24,), args=(x, loads), values=False)
    bound = 48 * loads * 131072 / m.hbm_chip_bytes_per_cycle
    assert m.hbm_chip_bytes_per_cycle == 805.5 and round(bound, 1) == 31242.5
    assert bound <= prof.total_cycles <= 1.01 * (bound + 307), prof.total_cycles
