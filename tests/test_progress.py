"""The progress bar of long simulations: on a terminal only, or when forced."""
import io

import pypto_sim as pto
from pypto_sim.timing.progress import Progress


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_bar_draws_on_a_terminal_and_finishes_with_a_newline(monkeypatch):
    monkeypatch.delenv("PYPTO_PROGRESS", raising=False)
    out = Tty()
    bar = Progress("k", 64, stream=out)
    for i in range(64):
        bar.block_done(i * 10)
    text = out.getvalue()
    assert "k [" in text and "64/64 blocks, cycle 630" in text and text.endswith("\n")


def test_bar_is_silent_off_a_terminal_or_for_small_grids(monkeypatch):
    monkeypatch.delenv("PYPTO_PROGRESS", raising=False)
    plain = io.StringIO()
    Progress("k", 1000, stream=plain).block_done(1)
    small = Tty()
    Progress("k", 8, stream=small).block_done(1)
    assert plain.getvalue() == "" and small.getvalue() == ""
    off = Tty()                     # PYPTO_PROGRESS=0, as pto.Settings passes it down
    Progress("k", 1000, stream=off, setting="0").block_done(1)
    assert off.getvalue() == ""


def test_forced_bar_in_a_real_launch(monkeypatch, capsys):
    """PYPTO_PROGRESS=1 shows the bar even when stderr is not a terminal."""
    monkeypatch.setenv("PYPTO_PROGRESS", "1")

    @pto.kernel
    def touch(o):
        pto.store(o + pto.get_global_id(), 1.0)

    d = pto.alloc_tensor(16 * 32 * 4)
    pto.profile(touch, grid=(16, 1, 1), block=(32, 1, 1), args=(d,))
    assert "16/16 blocks" in capsys.readouterr().err
