"""examples/softmax_tiles.py: a row softmax built from tile instructions (async_load, trowmax,
trowexpand, tsub, texp, trowsum, tdiv, tile store, wait_all), end to end against numpy.

It exercises the tile chain the way users write it: every op issued back to back by warp 0 and
ordered only by the timing model's hazards on L1 ranges, so a missing RAW/WAR dependency or a
tile kernel computing the wrong thing shows up as a wrong softmax.
"""
import importlib.util
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "softmax_tiles.py"


@pytest.fixture(scope="module")
def softmax_example():
    """The example as a module (its main() only runs as a script)."""
    spec = importlib.util.spec_from_file_location("softmax_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_example_script_runs_and_reports_cycles(capsys, monkeypatch):
    """examples/softmax_tiles.py, run as __main__ (in this process: a process spent a second
    importing), asserts its own correctness without raising, prints the max error and the
    profile's cycle report with the tile instructions in it."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE)])
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    stdout = capsys.readouterr().out
    assert "softmax 64x128 float32" in stdout and "passed" in stdout
    assert "max |y - numpy|" in stdout
    assert "total cycles:" in stdout
    for inst in ("TLOAD", "TROWMAX", "TROWEXPAND", "TEXP", "TDIV", "TSTORE"):
        assert inst in stdout, f"{inst} missing from the cycle report"


@pytest.mark.parametrize("m, n, tile_rows", [(16, 32, 4), (24, 200, 8), (6, 7, 6), (8, 1, 2)])
def test_softmax_kernel_matches_numpy(softmax_example, m, n, tile_rows):
    """Several shapes in process: one block (6 x 7), many blocks, odd and wide columns, and a
    single column (every output 1). Rows include large offsets, so an un-subtracted exp would
    overflow, and -inf entries, whose probability must be exactly 0."""
    rng = np.random.default_rng(m * 1000 + n)
    x = (rng.standard_normal((m, n)) * 3.0).astype(np.float32)
    x[0] += 90.0
    if n > 1:
        x[-1, 0] = -np.inf
    y = softmax_example.softmax_on_device(x, tile_rows)
    want = softmax_example.softmax_reference(x)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-5)
    if n > 1:
        assert y[-1, 0] == 0.0


def test_softmax_profile_counts_tile_instructions(softmax_example):
    """pto.profile runs the same kernel to the same values, and its cycle breakdown counts the
    tile instructions per block: one TLOAD and two TROWEXPAND in each of the 8 blocks."""
    x = np.random.default_rng(1).standard_normal((32, 64)).astype(np.float32)
    y, prof = softmax_example.softmax_on_device(x, 4, profile=True)
    np.testing.assert_allclose(y, softmax_example.softmax_reference(x), rtol=1e-5, atol=1e-6)
    assert prof.total_cycles > 0
    breakdown = prof.cycle_breakdown()
    assert breakdown["TROWEXPAND"]["count"] == 2 * 8 and breakdown["TLOAD"]["count"] == 8
