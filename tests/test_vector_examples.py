"""examples/softmax.py, layer_norm.py and rms_norm.py: row kernels in PTO-ISA's vocabulary on
the vector cores, float32 and float16 (computed in float32), match numpy and print their
per-pipe breakdown."""
import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script, name", [("softmax.py", "softmax"), ("layer_norm.py", "layer norm"),
                                          ("rms_norm.py", "rms norm")])
def test_the_example_matches_numpy_in_both_dtypes_and_reports_its_pipes(script, name, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.setattr(sys, "argv", [script])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    assert out.count("(ok)") == 2 and "WRONG" not in out
    assert f"{name} " in out and "float16" in out and "float32" in out
    assert out.count("AIV busy: MTE2") == 2 and " V " in out
