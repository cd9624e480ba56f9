"""examples/pitfalls/: each program shows the article's pitfall as an error, then the fix."""
import subprocess
import sys
from pathlib import Path

import pytest

PITFALLS = Path(__file__).resolve().parent.parent / "examples" / "pitfalls"


@pytest.mark.parametrize("script,error,fixed", [
    ("use_after_free.py", "UseAfterFreeError: kernel 'scale': tensor 'd_a'", "right (with pto.Tensor)"),
    ("warp_barrier.py", "RaceError", "racecheck is silent"),
    ("bounds_check.py", "OutOfBoundsError", "right: `if i < n`"),
])
def test_pitfall_shows_the_error_then_the_fix(script, error, fixed):
    result = subprocess.run([sys.executable, str(PITFALLS / script)], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert error in result.stdout and fixed in result.stdout
    assert result.stdout.index("wrong") < result.stdout.index("right")
