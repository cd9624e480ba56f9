"""examples/pitfalls/: each program shows the article's pitfall as an error, then the fix.
The programs run as __main__ in this process (a fresh device and machine per test, from
conftest): a subprocess per program spent 1.6 s importing the package and its executors."""
import runpy
import sys
from pathlib import Path

import pytest

PITFALLS = Path(__file__).resolve().parent.parent / "examples" / "pitfalls"


@pytest.mark.parametrize("script,error,fixed", [
    ("use_after_free.py", "UseAfterFreeError: kernel 'scale': tensor 'd_a'", "right (with pto.Tensor)"),
    ("warp_barrier.py", "RaceError", "racecheck is silent"),
    ("bounds_check.py", "OutOfBoundsError", "right: `if i < n`"),
    ("data_cache.py", "RaceError: kernel 'publish'", "right: pto.dcci after the store and before the read"),
])
def test_pitfall_shows_the_error_then_the_fix(script, error, fixed, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(PITFALLS / script)])
    runpy.run_path(str(PITFALLS / script), run_name="__main__")      # raising fails the test
    stdout = capsys.readouterr().out
    assert error in stdout and fixed in stdout
    assert stdout.index("wrong") < stdout.index("right")
