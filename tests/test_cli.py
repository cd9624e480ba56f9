"""The pypto-sim command line: list the ISA, the machines, show a table, run a script."""
import subprocess
import sys
from pathlib import Path

import pytest

from pypto_sim.cli import main
from pypto_sim.errors import MachineError

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "pypto_sim", *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)


def test_isa_and_machines(capsys):
    """`python -m pypto_sim isa` lists the ISA (as a process: the module's entry point); the
    machines and one machine's table (cli.main in this process: a process each cost 0.9 s)."""
    isa = _cli("isa")
    assert isa.returncode == 0 and "FMA" in isa.stdout and "pto.fma(dst, x, y, z)" in isa.stdout
    code, out, _ = _main(capsys, "machines")
    assert code == 0 and "ascend910b" in out
    code, out, _ = _main(capsys, "machine", "ascend910b")
    assert code == 0 and "hbm_chip_bytes_per_cycle" in out and "THEORY_BW_GM" in out


def test_run_a_script(capsys, monkeypatch):
    """`pypto-sim run examples/vector_add.py` runs it (cli.main in this process; the run sets
    the script's argv, restored after the test)."""
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    code, out, err = _main(capsys, "run", str(ROOT / "examples" / "vector_add.py"))
    assert code == 0, err
    assert "passed" in out


def test_a_script_run_imports_its_neighbours(tmp_path, capsys, monkeypatch):
    """`pypto-sim run` puts the script's folder first on the import path, as `python
    script.py` does (examples/softmax.py imports row_kernels beside it); cli.main in this
    process, which the test leaves as it found it (argv, path, no helper_mod)."""
    (tmp_path / "helper_mod.py").write_text("ANSWER = 42\n")
    (tmp_path / "main.py").write_text("import helper_mod\nprint('answer', helper_mod.ANSWER)\n")
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        code, out, err = _main(capsys, "run", str(tmp_path / "main.py"))
    finally:
        sys.modules.pop("helper_mod", None)
    assert code == 0, err
    assert "answer 42" in out


# ---------------------------------------------------------------- user errors: one line, no traceback
def _one_line_error(stderr):
    """The whole of stderr is one line `pypto-sim: error: ...` (no traceback)."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pypto-sim: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def _main(capsys, *argv):
    """cli.main in this process: (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as stop:          # argparse's refusals
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, names", [
    (("machine", "nope"), ("'nope'", "ascend910b", "hint")),
    (("run", "missing.py"), ("'missing.py'", "give the path")),
    (("sweep", "nothere.toml", "-o", "out.parquet"), ("nothere.toml", "No such file", "check the path")),
    (("calibrate", "nothere.csv", "-o", "new.toml"), ("nothere.csv", "microbench")),
])
def test_user_errors_are_one_line_with_a_nonzero_exit(args, names, capsys, monkeypatch, tmp_path):
    """Each command's usual mistake (a table, script, spec or rows file that is not there) is
    one line on stderr naming the thing and what to do, with exit code 1."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _main(capsys, *args)
    line = _one_line_error(err)
    assert code == 1 and not out
    for name in names:
        assert name in line


def test_the_command_exits_with_one_line_and_debug_shows_the_traceback():
    """As a process: `pypto-sim machine nope` writes one line and exits with 1; with --debug
    (before or after the command's name) the same error comes with its traceback."""
    plain = _cli("machine", "nope")
    assert plain.returncode == 1 and not plain.stdout
    assert "no machine named 'nope'" in _one_line_error(plain.stderr)
    debug = _cli("--debug", "machine", "nope")
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert "MachineError: no machine named 'nope'" in debug.stderr
    with pytest.raises(MachineError, match="no machine named 'nope'"):
        main(["machine", "nope", "--debug"])


@pytest.mark.parametrize("argv, code, names", [
    (("machine", "diff", "ascend910b"), 1, ("two tables", "machine diff A B")),
    (("machine", "a", "b"), 1, ("one table", "a b")),
    (("profile", "x.py", "--top", "0"), 2, ("--top", "0 must be 1 or more")),
    (("profile", "x.py", "--launch", "last"), 2, ("--launch", "'last'")),
    (("trace", "x.py", "--time-unit", "ns", "-o", "t.json"), 2, ("--time-unit", "'ns'")),
    (("sweep", "s.toml", "-o", "r.csv", "--workers", "-2"), 2, ("--workers", "-2")),
    (("microbench", "-o", "no_such_folder/rows.csv"), 1, ("no_such_folder", "does not exist")),
    (("calibrate", "rows.csv", "-o", "no_such_folder/new.toml"), 1, ("no_such_folder", "does not exist")),
    (("trace", "x.py", "-o", "no_such_folder/t.json"), 1, ("no_such_folder", "does not exist")),
    (("microbench", "-o", "a_folder"), 1, ("-o a_folder", "is a directory, not a file")),
    (("trace", "x.py", "-o", "a_folder"), 1, ("-o a_folder", "is a directory, not a file")),
    (("frobnicate",), 2, ("invalid choice", "'frobnicate'")),
])
def test_bad_arguments_are_one_line(argv, code, names, capsys, monkeypatch, tmp_path):
    """Flag values out of range, the wrong number of names, output folders that do not exist
    and an output that is a folder are refused on one line before any work is done
    (argparse's refusals exit with 2)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_folder").mkdir()
    got, out, err = _main(capsys, *argv)
    line = _one_line_error(err)
    assert got == code and not out
    for name in names:
        assert name in line


KERNEL_ERROR = '''import pypto_sim as pto

@pto.kernel
def bad(a):
    i = pto.get_global_id()
    pto.store(a + i, [1, 2])

pto.launch(bad, grid=1, args=(pto.alloc_tensor(128),))
'''


def test_a_pto_error_of_the_script_is_one_line_naming_the_scripts_line(capsys, monkeypatch, tmp_path):
    """A CompileError raised at the script's launch (line 8) is one line naming the kernel's
    line (6), its source and the script line that launched it."""
    script = tmp_path / "prog.py"
    script.write_text(KERNEL_ERROR)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    for command in (("run", str(script)), ("profile", str(script)), ("trace", str(script), "-o",
                                                                     str(tmp_path / "t.json"))):
        code, _, err = _main(capsys, *command)
        line = _one_line_error(err)
        assert code == 1
        assert f"{script}:6" in line and "list literal" in line and "[1, 2]" in line
        assert line.endswith(f"(from {script}:8)")


def test_other_exceptions_of_the_script_show_as_python_shows_them(capsys, monkeypatch, tmp_path):
    """The script's own bug keeps its traceback, from the script's frames on (no runpy or CLI
    frames); its sys.exit code is the command's."""
    script = tmp_path / "prog.py"
    script.write_text("def f():\n    return 1 / 0\n\nf()\n")
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    code, _, err = _main(capsys, "run", str(script))
    assert code == 1 and err.startswith("Traceback") and "ZeroDivisionError" in err
    assert f'"{script}", line 4' in err and "runpy" not in err and "cli.py" not in err
    script.write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(SystemExit) as stop:
        main(["run", str(script)])
    assert stop.value.code == 3
