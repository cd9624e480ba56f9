"""The simulation rate a profile reports is the simulation's: the time numba spends compiling
(or loading) the executor on a process's first launches is measured apart and left out."""
import time

import numba
import numpy as np

import pypto_sim as pto
from pypto_sim.exec.jit_clock import rate_text, run_clock


def test_the_run_clock_takes_numba_compiling_out_of_the_run_time():
    """A function numba has never seen compiles on its first call (tens of milliseconds or
    more) and then runs in microseconds: nearly all of the block's time is compiling, and the
    run's own time is what is left of the elapsed time."""
    @numba.njit(cache=False)
    def fresh(x):
        return x * 2 + 1

    with run_clock() as clock:
        assert fresh(20) == 41
    assert clock.compile_seconds > 0.01
    assert abs(clock.run_seconds - (clock.elapsed - clock.compile_seconds)) < 1e-12
    assert clock.run_seconds < clock.compile_seconds
    with run_clock() as again:                 # compiled now: nothing to take out
        fresh(21)
    assert again.compile_seconds == 0.0 and again.run_seconds == again.elapsed


def test_without_compiling_the_clock_is_plain_wall_time():
    with run_clock() as clock:
        time.sleep(0.02)
    assert clock.compile_seconds == 0.0 and clock.run_seconds >= 0.02


@pto.kernel
def double(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i) * 2.0)


def test_a_profiles_rate_divides_by_the_simulation_time_and_names_the_compiling_apart():
    """stats' rates are warp_instructions / wall_seconds (the simulation's own time), with
    compile_seconds beside them; the report's rate is the same number, and says how much
    compiling it left out when there was some."""
    a, o = pto.alloc_tensor(64 * 4), pto.alloc_tensor(64 * 4)
    pto.memcpy_h2d(a, np.ones(64, np.float32))
    start = time.perf_counter()
    prof = pto.profile(double, grid=(2,), block=(32,), args=(a, o, 64))
    outside = time.perf_counter() - start
    s = prof.stats
    assert s["warp_instructions"] == prof.warp_instructions > 0
    assert s["warp_instructions_per_second"] == s["warp_instructions"] / s["wall_seconds"]
    assert s["compile_seconds"] == prof.compile_seconds >= 0.0
    assert prof.wall_seconds + prof.compile_seconds <= outside
    assert f"simulated at {rate_text(s['warp_instructions_per_second'], prof.compile_seconds)}" in prof.report()
    prof.compile_seconds = 2.0          # as on a process's first launch
    assert "(not counting 2.0 s of compiling the executor)" in prof.report()
    functional = pto.launch(double, grid=(2,), block=(32,), args=(a, o, 64), mode="functional").result()
    assert functional.stats["compile_seconds"] >= 0.0
    assert functional.stats["warp_instructions_per_second"] == (
        functional.warp_instructions / max(functional.wall_seconds, 1e-9))
