"""Progress lines (pypto_sim/timing/progress.py): on a terminal only, after two seconds of
work, rate-limited, switchable by the progress setting (PYPTO_PROGRESS) or a parameter; for
launches, the first compile, microbenchmarks and sweeps."""
import io

import pytest

import pypto_sim as pto
from pypto_sim.timing.progress import DELAY, INTERVAL, Progress, Ticker, compile_progress


class Tty(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


@pytest.fixture(autouse=True)
def default_setting(monkeypatch):
    monkeypatch.delenv("PYPTO_PROGRESS", raising=False)


def test_bar_waits_two_seconds_then_redraws_at_most_every_fifth_of_a_second():
    """Nothing before DELAY (2 s) of work; then a bar (30 characters: 16/64 fills 7.5 -> 7);
    an update 0.1 s after a draw is not drawn, one 0.2 s after is; close() draws the final
    state and ends the line."""
    out, clock = Tty(), Clock()
    bar = Progress("k", 64, unit="blocks", stream=out, clock=clock)
    clock.now += DELAY - 0.1
    bar.update(8, "cycle 80")
    assert out.getvalue() == ""
    clock.now += 0.2
    bar.update(16, "cycle 160")
    assert out.getvalue() == "\rk [" + "#" * 7 + "." * 23 + "] 16/64 blocks, cycle 160, 2.1 s\x1b[K"
    clock.now += INTERVAL / 2
    bar.update(17, "cycle 170")
    assert "17/64" not in out.getvalue()
    clock.now += INTERVAL
    bar.update(18, "cycle 180")
    assert "18/64 blocks, cycle 180, 2.4 s" in out.getvalue()
    bar.update(64, "cycle 640")
    bar.close()
    assert out.getvalue().endswith("] 64/64 blocks, cycle 640, 2.4 s\x1b[K\n")


def test_short_work_and_non_terminals_print_nothing():
    """Work that ends before two seconds prints nothing, not even a newline; a stream that is
    not a terminal (a pipe, a log) never gets a bar."""
    out, clock = Tty(), Clock()
    with Progress("k", 1000, stream=out, clock=clock) as bar:
        clock.now += 1.0
        bar.update(1000)
    assert out.getvalue() == ""
    plain, clock = io.StringIO(), Clock()
    with Progress("k", 1000, stream=plain, clock=clock) as bar:
        clock.now += 60
        bar.update(5)
    assert plain.getvalue() == ""


def test_the_progress_setting_switches_it(monkeypatch):
    """setting "0" (PYPTO_PROGRESS=0): silent on a terminal, however long the work; "1": drawn
    at once, also off a terminal; enabled= wins over the setting; a launch refuses any other
    PYPTO_PROGRESS value with a LaunchError naming it."""
    clock = Clock()
    out = Tty()
    bar = Progress("k", 10, stream=out, clock=clock, setting="0")
    clock.now += 10
    bar.update(3)
    assert out.getvalue() == ""
    plain = io.StringIO()
    Progress("k", 10, stream=plain, clock=clock, setting="1").update(3)
    assert "3/10" in plain.getvalue()
    quiet = Tty()
    bar = Progress("k", 10, stream=quiet, clock=clock, setting="1", enabled=False)
    clock.now += 10
    bar.update(3)
    assert quiet.getvalue() == ""
    monkeypatch.setenv("PYPTO_PROGRESS", "sometimes")
    with pytest.raises(pto.LaunchError, match=r"PYPTO_PROGRESS='sometimes'"):
        pto.settings()


def test_a_launch_inside_an_open_progress_line_keeps_quiet():
    """A launch's bar is an inner one: while a sweep's or the microbenchmarks' line is open
    it draws nothing, so the two do not overwrite each other; after it closes, it draws."""
    out, clock = Tty(), Clock()
    with Progress("sweep", 4, unit="points", stream=out, clock=clock, enabled=True):
        inner = Progress("k", 10, stream=out, clock=clock, enabled=None, inner=True)
    clock.now += 10
    inner.update(5)
    assert "5/10" not in out.getvalue()
    later = Progress("k", 10, stream=out, clock=clock, inner=True)
    clock.now += 10
    later.update(5)
    assert "k [" in out.getvalue() and "5/10" in out.getvalue()


def test_ticker_shows_a_numba_compile_and_nothing_once_compiled():
    """compile_progress: a function numba compiles inside it shows 'compiling the
    simulator (<name>; ...' (forced on, so at once) and ends the line; calling it again (compiled
    now) draws nothing."""
    from numba import njit

    @njit
    def fresh_function_for_the_ticker(x):
        return x + 1

    out = Tty()
    with compile_progress(stream=out, enabled=True):
        assert fresh_function_for_the_ticker(1) == 2
    text = out.getvalue()
    assert "pypto-sim: compiling the simulator (fresh_function_for_the_ticker; first run" in text
    assert text.endswith("\n")
    again = Tty()
    with compile_progress(stream=again, enabled=True):
        fresh_function_for_the_ticker(2)
    assert again.getvalue() == ""
    off = Tty()
    with Ticker("x", stream=off, enabled=False):
        pass
    assert off.getvalue() == ""


def test_a_sweep_point_keeps_launches_and_the_compile_ticker_quiet():
    """quiet_launches (what a sweep point calls, in the driver or a worker process): inside
    its context a launch's bar and a compile ticker draw nothing even when forced on; outside
    it they draw."""
    import contextvars
    from numba import njit
    from pypto_sim.timing.progress import quiet_launches

    @njit
    def compiled_inside_a_point(x):
        return x * 2

    def point(out):
        quiet_launches()
        Progress("k", 10, stream=out, setting="1", inner=True).update(5)
        with compile_progress("1", stream=out):
            assert compiled_inside_a_point(2) == 4

    out = Tty()
    contextvars.copy_context().run(point, out)
    assert out.getvalue() == ""
    Progress("k", 10, stream=out, setting="1", inner=True).update(5)
    assert "5/10" in out.getvalue()


def test_forced_bar_in_a_real_launch(monkeypatch, capsys):
    """PYPTO_PROGRESS=1 shows the launch's bar (blocks done, with the cycle) even when stderr
    is not a terminal and the launch is short."""
    monkeypatch.setenv("PYPTO_PROGRESS", "1")

    @pto.kernel
    def touch(o):
        pto.store(o + pto.get_global_id(), 1.0)

    d = pto.alloc_tensor(16 * 32 * 4)
    pto.profile(touch, grid=(16, 1, 1), block=(32, 1, 1), args=(d,))
    err = capsys.readouterr().err
    assert "touch [" in err and "16/16 blocks" in err and err.endswith("\n")


def test_microbenchmarks_report_their_kernel_runs(capsys):
    """run_microbenchmarks(progress=True) draws one line over its kernel runs, naming the
    benchmark; its launches keep quiet inside it."""
    from pypto_sim.calibrate import run_microbenchmarks
    rows = run_microbenchmarks(only=["ADD"], progress=True)
    err = capsys.readouterr().err
    assert "pypto-sim microbench [" in err and f"{len(rows)}/{len(rows)} kernel runs" in err
    assert " blocks" not in err


def test_serial_sweep_reports_its_points(capsys):
    """pto.sweep(progress=True): one line over the points, none for the launches in them;
    progress=False: nothing. The points run in this process (timeout=None), so the launches'
    own stderr is captured too (a point runner process would spend a second starting)."""
    params = {"n": [64, 128]}
    pto.sweep("sweep_factories:scale_case", params=params, engine="serial", progress=True,
              timeout=None)
    err = capsys.readouterr().err
    assert "sweep [" in err and "2/2 points" in err and " blocks" not in err
    pto.sweep("sweep_factories:scale_case", params=params, engine="serial", progress=False,
              timeout=None)
    assert capsys.readouterr().err == ""
