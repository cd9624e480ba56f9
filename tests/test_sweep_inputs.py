"""What a sweep accepts: parameter values, overrides, factories and TOML specs are checked
before any point runs, and each mistake is a typed error naming it (one line on the CLI)."""
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.cli import main
from pypto_sim.errors import MachineError, SweepError
from pypto_sim.sweep import expand_points
from pypto_sim.sweep.spec import load_spec


def test_parameter_values_expand_or_are_refused_by_name():
    """A 1-D array, a range and a tuple expand to one point per value (numpy scalars become
    Python ones); a 2-D array, a dict value, an empty list or a repeated value is refused."""
    points = expand_points({"n": np.array([64, 128]), "r": range(2), "s": ("a",)})
    assert [p["params"] for p in points] == [{"n": 64, "r": 0, "s": "a"}, {"n": 64, "r": 1, "s": "a"},
                                             {"n": 128, "r": 0, "s": "a"}, {"n": 128, "r": 1, "s": "a"}]
    assert type(points[0]["params"]["n"]) is int
    with pytest.raises(SweepError, match=r"parameter 'grid': a 2-D array of shape \(2, 2\)"):
        expand_points({"grid": np.zeros((2, 2))})
    with pytest.raises(SweepError, match=r"parameter 'opts': value \{'a': 1\} \(dict\) is not a bool"):
        expand_points({"opts": [{"a": 1}]})
    with pytest.raises(SweepError, match="parameter 'n' has no values"):
        expand_points({"n": []})
    with pytest.raises(SweepError, match="given twice"):
        expand_points({"n": [64, 64]})


def test_bad_overrides_are_refused_before_any_point(tmp_path):
    """A bandwidth of 0 breaks the table loader's rule (a positive finite number): the sweep
    raises the MachineError up front and writes no results file."""
    out = tmp_path / "rows.parquet"
    with pytest.raises(MachineError, match="override 'memory.hbm_chip_bytes_per_cycle' = 0 .*positive"):
        pto.sweep("sweep_factories:scale_case", engine="serial",
                  machine_overrides={"memory.hbm_chip_bytes_per_cycle": [973, 0]}, out=out)
    assert not out.exists()


def test_a_factory_that_cannot_be_imported_fails_up_front():
    """Not N failed rows: one SweepError naming the factory and why."""
    with pytest.raises(SweepError, match="factory 'no_such_module:case' cannot be loaded: "
                                         "ModuleNotFoundError"):
        pto.sweep("no_such_module:case", params={"n": [1, 2, 3]}, engine="serial")
    with pytest.raises(SweepError, match="must be 'module:function'"):
        pto.sweep("just_a_name", engine="serial")


def _script(tmp_path, body):
    path = tmp_path / "my_sweep.py"
    path.write_text(textwrap.dedent(body))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)


def test_a_factory_defined_in_the_script_runs_in_the_point_runner(tmp_path):
    """A function object from the running script (guarded) reaches the point runner by its
    file; the unguarded version is refused with the fix, not run again in every worker."""
    body = """
        import numpy as np
        import pypto_sim as pto
        from sweep_factories import scale_case
        def case(n):
            return scale_case(n)
        {guard}
            frame = pto.sweep(case, params={{"n": [64, 128]}}, engine="serial")
            print("rows", len(frame), frame["error"].isna().all())
    """
    from pathlib import Path
    tests = str(Path(__file__).parent)
    body = body.replace("import numpy as np", f"import sys; sys.path.insert(0, {tests!r})")
    good = _script(tmp_path, body.format(guard='if __name__ == "__main__":'))
    assert good.returncode == 0, good.stderr
    assert "rows 2 True" in good.stdout
    bad = _script(tmp_path, body.format(guard="if True:"))
    assert bad.returncode != 0
    assert "starts a sweep when it is imported" in bad.stderr and "__main__" in bad.stderr


def test_a_spec_with_an_unknown_key_is_refused_naming_it(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('factory = "m:f"\n[parms]\nn = [1]\n')
    with pytest.raises(SweepError, match=r"unknown key 'parms'(?s:.*)params, machine_overrides"):
        load_spec(spec)
    spec.write_text('factory = "m:f"\ntimeout = "soon"\n')
    with pytest.raises(SweepError, match="timeout = 'soon' must be a number of seconds"):
        load_spec(spec)


@pytest.fixture
def sweep_cli(capsys, monkeypatch):
    """`pypto-sim sweep ARGS` through cli.main in this process (a process per command spent a
    second on imports): its exit code, stdout and stderr as ``returncode``, ``stdout``,
    ``stderr``. A spec's ``path`` entries join sys.path; the test's sys.path is restored."""
    monkeypatch.setattr(sys, "path", list(sys.path))

    def run(*args):
        capsys.readouterr()
        code = main(["sweep", *args])
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)
    return run


def test_cli_spec_mistakes_are_one_line_and_exit_1(tmp_path, sweep_cli):
    """A missing spec, a typo'd key, invalid TOML, an unimportable factory: one line on
    stderr starting 'pypto-sim: error:' (every user error of the command), exit code 1, no
    traceback."""
    spec = tmp_path / "s.toml"
    cases = {"nothere.toml": "cannot be read",
             "typo": "unknown key 'parms'", "toml": "not valid TOML", "factory": "cannot be loaded"}
    texts = {"typo": 'factory = "m:f"\n[parms]\n', "toml": "factory = \n",
             "factory": 'factory = "no_such_module:f"\n'}
    for name, message in cases.items():
        path = tmp_path / name if name == "nothere.toml" else spec
        if name in texts:
            spec.write_text(texts[name])
        proc = sweep_cli(str(path), "-o", str(tmp_path / "r.parquet"), "--engine", "serial")
        assert proc.returncode == 1, (name, proc.stderr)
        assert proc.stderr.startswith("pypto-sim: error: ") and message in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "Traceback" not in proc.stderr


def test_cli_every_point_failing_says_why_and_exits_1(tmp_path, sweep_cli):
    """failing_case with block=2048 cannot launch: the CLI names the first error, exits 1."""
    from pathlib import Path
    spec = tmp_path / "s.toml"
    spec.write_text(f'factory = "sweep_factories:failing_case"\npath = [{str(Path(__file__).parent)!r}]\n'
                    '[params]\nblock = [2048]\n')
    proc = sweep_cli(str(spec), "-o", str(tmp_path / "r.parquet"), "--engine", "serial")
    assert proc.returncode == 1, proc.stderr
    assert "every point failed (1 of 1); the first: LaunchError" in proc.stderr
    assert "Traceback" not in proc.stderr
