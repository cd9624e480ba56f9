"""Output files (docs/profiling.md, "Output files"; docs/calibration.md, "3. Fitting"): a
failing save_trace / export_csv / save_plot / to_csv / write_table / write_rows / Correlation
.save_plot is a typed error naming what is wrong (the argument and its value, or the path) and
leaves a file the user already had byte for byte as it was, with no temporary file beside it;
a successful one replaces the file with a complete one. Found by an adversarial run: save_trace
emptied an existing file on time_unit="ns", left half a JSON on bucket_cycles=-5, write_table
on a directory left a 75 KB '.<dir>.trial' beside it, and save_plot returned a path it had not
written."""
import errno
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.calibrate import correlate, run_microbenchmarks, write_rows, write_table
from pypto_sim.calibrate import table as table_module
from pypto_sim.calibrate.rows import CalibrationError, Row
from pypto_sim.errors import MachineError
from pypto_sim.profiler import trace as trace_module
from pypto_sim.profiler.trace import validate_trace
from pypto_sim.timing.machine import load_machine_from

from aicore_kernels import cube_then_vector
from simt_kernels import vector_add

ROOT = Path(__file__).resolve().parent.parent
PRECIOUS = b'{"my": "data", "hours of work": true}\n'
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

def _lane_args(n=512):
    a = np.arange(n, dtype=np.float32)
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, a)
    return d_a, d_b, d_o, n


@pytest.fixture(scope="module")
def lane():
    """(a Profile with its timeline, a pto.launch Profile without one) of a small vector_add."""
    args = _lane_args()
    full = pto.profile(vector_add, grid=(2, 1, 1), block=(256, 1, 1), args=args)
    light = pto.launch(vector_add, grid=(2, 1, 1), block=(256, 1, 1), args=args).result()
    assert full.has_timeline and not light.has_timeline
    return full, light


@pytest.fixture(scope="module")
def aicore():
    """A Profile of an AI-core kernel, a cube matmul handed to the vector cores (op_summary,
    the AI-core export_csv)."""
    a = np.ones((32, 32), np.float16)
    A, B = pto.alloc_tensor(a.nbytes, pto.float16), pto.alloc_tensor(a.nbytes, pto.float16)
    pto.memcpy_h2d(A, a)
    pto.memcpy_h2d(B, a)
    W, out = pto.alloc_tensor(32 * 32 * 4), pto.alloc_tensor(32 * 32 * 4)
    return pto.profile(cube_then_vector, grid=(2,), args=(A, B, W, out))


def _precious(folder: Path, name="precious.json", data=PRECIOUS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return path


def _listing(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir())


def _assert_untouched(path: Path, before: list, data=PRECIOUS):
    """The file's bytes are what they were and its folder lists what it did (no temporary)."""
    assert path.read_bytes() == data
    assert _listing(path.parent) == before


# ---------------------------------------------------------------- save_trace
@pytest.mark.parametrize("kwargs, words", [
    ({"time_unit": "ns"}, ["time_unit", "'ns'", "'cycle'", "'us'"]),
    ({"time_unit": None}, ["time_unit", "None", "'cycle'"]),
    ({"bucket_cycles": -5}, ["bucket_cycles", "-5", "1 or more"]),
    ({"bucket_cycles": "x"}, ["bucket_cycles", "'x'", "whole number"]),
    ({"bucket_cycles": 0}, ["bucket_cycles", "0", "1 or more"]),
    ({"bucket_cycles": 2.5}, ["bucket_cycles", "2.5", "whole number"]),
    ({"warps": "maybe"}, ["warps", "'maybe'", "True or False"]),
    ({"flows": None}, ["flows", "None", "True or False"]),
    ({"counters": 1}, ["counters", "1", "True or False"]),
])
def test_save_trace_refuses_a_bad_argument_and_leaves_the_file(lane, tmp_path, kwargs, words):
    prof = lane[0]
    path = _precious(tmp_path)
    before = _listing(tmp_path)
    with pytest.raises(pto.ArgumentError) as err:
        prof.save_trace(path, **kwargs)
    assert isinstance(err.value, ValueError)          # code that caught the old ValueError still does
    text = str(err.value)
    assert text.startswith("save_trace: ") and all(w in text for w in words), text
    _assert_untouched(path, before)


def test_trace_dict_refuses_a_bad_argument_too(lane):
    with pytest.raises(pto.ArgumentError, match=r"bucket_cycles=0 is out of range"):
        lane[0].trace(bucket_cycles=0)
    with pytest.raises(pto.ArgumentError, match=r"warps must be True or False, not 'maybe'"):
        lane[0].trace(warps="maybe")


def test_save_trace_of_a_profile_without_a_timeline_leaves_the_file(lane, tmp_path):
    path = _precious(tmp_path)
    before = _listing(tmp_path)
    with pytest.raises(pto.ProfileError, match="per-instruction totals only") as err:
        lane[1].save_trace(path)
    assert "timeline=True" in err.value.hint
    _assert_untouched(path, before)


def test_save_trace_to_a_directory_is_a_profile_error(lane, tmp_path):
    _precious(tmp_path)
    before = _listing(tmp_path)
    with pytest.raises(pto.ProfileError, match="is a directory, not a file") as err:
        lane[0].save_trace(tmp_path)
    assert str(tmp_path) in str(err.value) and str(tmp_path / "trace.json") in err.value.hint
    _assert_untouched(tmp_path / "precious.json", before)


def test_save_trace_under_a_file_is_a_profile_error_and_creates_nothing(lane, tmp_path):
    path = _precious(tmp_path)
    before = _listing(tmp_path)
    with pytest.raises(pto.ProfileError, match=r"precious.json is a file, not a folder"):
        lane[0].save_trace(path / "sub" / "t.json")
    _assert_untouched(path, before)


def test_a_failing_save_trace_creates_no_folder(lane, tmp_path):
    with pytest.raises(pto.ArgumentError):
        lane[0].save_trace(tmp_path / "new" / "deeper" / "t.json", time_unit="ns")
    with pytest.raises(pto.ProfileError):
        lane[1].save_trace(tmp_path / "new" / "deeper" / "t.json")
    assert _listing(tmp_path) == []


def test_a_write_that_fails_half_way_leaves_the_file_and_no_temporary(lane, tmp_path, monkeypatch):
    """The disk fills up after part of the trace is written: the earlier file is whole, the
    temporary is gone, and the error names the user's path with the OSError as its cause."""
    path = _precious(tmp_path)
    before = _listing(tmp_path)

    def half_then_full(prof, out, **kwargs):
        out.write(b'{"displayTimeUnit":"ms","traceEvents":[\n')
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(trace_module, "write_trace", half_then_full)
    with pytest.raises(pto.ProfileError, match="No space left on device") as err:
        lane[0].save_trace(path)
    assert str(path) in str(err.value) and "free some space" in err.value.hint
    assert isinstance(err.value.__cause__, OSError) and err.value.__cause__.errno == errno.ENOSPC
    _assert_untouched(path, before)


def test_save_trace_to_a_full_device_is_a_profile_error(lane):
    """/dev/full: a device is written to directly (never replaced: pypto_sim may run as root)."""
    device = os.stat("/dev/full")
    with pytest.raises(pto.ProfileError, match=r"cannot write /dev/full: No space left") as err:
        lane[0].save_trace("/dev/full")
    assert isinstance(err.value.__cause__, OSError)
    after = os.stat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == device.st_rdev


def test_save_trace_replaces_a_file_with_a_complete_trace(lane, tmp_path):
    """Success: the target holds the whole trace (it parses and validates), keeps its
    permission bits, and nothing else is left in the folder."""
    path = _precious(tmp_path, "t.json")
    os.chmod(path, 0o640)
    before = _listing(tmp_path)
    written = lane[0].save_trace(str(path), time_unit="us", bucket_cycles=8)
    assert written == path
    doc = json.loads(path.read_text())
    assert validate_trace(doc) == [] and doc["otherData"]["kernel"] == "vector_add"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert _listing(tmp_path) == before


def test_save_trace_writes_through_a_symbolic_link(lane, tmp_path):
    target = _precious(tmp_path / "real")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    lane[0].save_trace(link)
    assert link.is_symlink() and json.loads(target.read_text())["traceEvents"]
    assert _listing(tmp_path / "real") == ["precious.json"]


def test_save_trace_refuses_a_read_only_file(lane, tmp_path, monkeypatch):
    path = _precious(tmp_path)
    before = _listing(tmp_path)
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == path else True)
    with pytest.raises(pto.ProfileError, match="is a read-only file; it is left as it was"):
        lane[0].save_trace(path)
    _assert_untouched(path, before)


def test_save_trace_path_of_the_wrong_type_is_an_argument_error(lane):
    with pytest.raises(pto.ArgumentError, match=r"save_trace: the path must be a str or a pathlib.Path, not int 3"):
        lane[0].save_trace(3)


# ---------------------------------------------------------------- export_csv and to_csv
def test_export_csv_into_an_existing_file_is_a_profile_error(lane, tmp_path):
    path = _precious(tmp_path, "notes.txt")
    before = _listing(tmp_path)
    with pytest.raises(pto.ProfileError, match="must be a folder, but") as err:
        lane[0].export_csv(path)
    assert str(path) in str(err.value) and "created if needed" in err.value.hint
    _assert_untouched(path, before)


def test_export_csv_of_an_empty_path_and_a_lane_bubble_report_by_unit_are_refused(lane, tmp_path, monkeypatch):
    """export_csv("") wrote the CSVs into the working directory, where save_trace("") is refused;
    bubbles(unit=...) of a lane kernel ignored unit=, where busy_intervals refuses it."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(pto.ArgumentError, match="export_csv: the directory is empty"):
        lane[0].export_csv("")
    assert _listing(tmp_path) == []
    with pytest.raises(pto.ArgumentError, match="bubbles: unit= is for AI-core kernels"):
        lane[0].bubbles(unit="AIC")


def test_export_csv_without_a_timeline_creates_no_folder(lane, tmp_path):
    with pytest.raises(pto.ProfileError, match="per-instruction totals only"):
        lane[1].export_csv(tmp_path / "out")
    with pytest.raises(pto.ArgumentError, match="prefix must be a str with no path separator"):
        lane[0].export_csv(tmp_path / "out", prefix="sub/run1_")
    assert _listing(tmp_path) == []


def test_export_csv_replaces_its_own_files_and_leaves_the_others(lane, tmp_path):
    out = tmp_path / "out"
    old = _precious(out, "instr_exe.csv", b"old,export\n")
    mine = _precious(out, "my_notes.csv", b"the user's,own file\n")
    paths = lane[0].export_csv(out)
    assert sorted(_listing(out)) == sorted(["bubbles.csv", "code_exe.csv", "instr_exe.csv", "my_notes.csv",
                                            "pipeline_summary.csv"])
    assert paths["instr_exe"] == old and old.read_text().startswith("op_name,pc,pc_addr,instr")
    assert mine.read_bytes() == b"the user's,own file\n"


def test_a_failing_export_csv_replaces_none_of_the_files(lane, tmp_path, monkeypatch):
    """The third CSV cannot be written: the first two, already written to their temporaries,
    are not moved onto the user's files either."""
    out = tmp_path / "out"
    files = {name: _precious(out, f"{name}.csv", f"earlier {name}\n".encode())
             for name in ("instr_exe", "code_exe", "pipeline_summary", "bubbles")}
    before = _listing(out)
    real_fdopen = os.fdopen
    opened = []

    def fdopen(fd, *args, **kwargs):
        opened.append(fd)
        if len(opened) == 3:
            raise OSError(errno.EACCES, "Permission denied")
        return real_fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", fdopen)
    with pytest.raises(pto.ProfileError, match="pipeline_summary.csv: Permission denied"):
        lane[0].export_csv(out)
    monkeypatch.undo()
    for name, path in files.items():
        assert path.read_bytes() == f"earlier {name}\n".encode()
    assert _listing(out) == before


def test_export_csv_of_an_ai_core_kernel_writes_op_summary(aicore, tmp_path):
    paths = aicore.export_csv(tmp_path / "csv", prefix="run1_")
    assert paths["op_summary"].name == "run1_op_summary.csv"
    assert paths["op_summary"].read_text().startswith("Op Name,Task Type,Task Duration(us)")
    assert len(_listing(tmp_path / "csv")) == 5


def test_op_summary_to_csv_of_a_directory_is_a_profile_error(aicore, tmp_path):
    _precious(tmp_path)
    before = _listing(tmp_path)
    with pytest.raises(pto.ProfileError, match="to_csv: .* is a directory, not a file") as err:
        aicore.op_summary().to_csv(tmp_path)
    assert str(tmp_path) in str(err.value)
    _assert_untouched(tmp_path / "precious.json", before)
    target = _precious(tmp_path, "op.csv")
    assert aicore.op_summary().to_csv(target) == target
    assert target.read_text().startswith("Op Name,") and _listing(tmp_path) == ["op.csv", "precious.json"]


# ---------------------------------------------------------------- save_plot
def test_save_plot_returns_the_path_it_wrote(lane, tmp_path):
    written = lane[0].save_plot(tmp_path / "plot_x")
    assert written == tmp_path / "plot_x.png" and _listing(tmp_path) == ["plot_x.png"]
    assert written.read_bytes()[:8] == PNG_SIGNATURE


def test_save_plot_refuses_a_directory_and_an_unknown_format(lane, tmp_path):
    (tmp_path / "plotdir").mkdir()
    path = _precious(tmp_path, "plot.json")
    before = _listing(tmp_path)
    with pytest.raises(pto.ProfileError, match="plotdir is a directory, not a file"):
        lane[0].save_plot(tmp_path / "plotdir")
    with pytest.raises(pto.ArgumentError, match=r"cannot write a '.json' image .* the formats are .*png"):
        lane[0].save_plot(path)
    with pytest.raises(pto.ArgumentError, match="max_cores=0 is out of range"):
        lane[0].save_plot(tmp_path / "p.png", max_cores=0)
    _assert_untouched(path, before)
    assert _listing(tmp_path / "plotdir") == []


def test_save_plot_replaces_an_image(lane, tmp_path):
    path = _precious(tmp_path, "p.png", b"an older picture")
    before = _listing(tmp_path)
    assert lane[0].save_plot(path) == path
    assert path.read_bytes()[:8] == PNG_SIGNATURE and _listing(tmp_path) == before
    with pytest.raises(pto.ProfileError, match="per-instruction totals only"):
        lane[1].save_plot(path)
    assert path.read_bytes()[:8] == PNG_SIGNATURE


def test_correlation_plot_refuses_a_directory_and_replaces_a_file(tmp_path):
    c = correlate({"a": 100, "b": 210}, {"a": 110, "b": 200})
    _precious(tmp_path)
    before = _listing(tmp_path)
    with pytest.raises(CalibrationError, match="Correlation.save_plot: .* is a directory"):
        c.save_plot(tmp_path)
    _assert_untouched(tmp_path / "precious.json", before)
    path = _precious(tmp_path, "corr.png", b"old")
    assert c.save_plot(path) == path and path.read_bytes()[:8] == PNG_SIGNATURE
    assert c.save_plot(tmp_path / "corr2") == tmp_path / "corr2.png"


# ---------------------------------------------------------------- write_table and write_rows
FITTED = {"ADD": {"latency": 9, "issue_interval": 1}}


def test_write_table_to_a_directory_is_a_calibration_error_and_leaves_no_trial(tmp_path):
    folder = tmp_path / "tables"
    keep = _precious(folder, "keep.toml", b"# mine\n")
    before_parent, before = _listing(tmp_path), _listing(folder)
    with pytest.raises(CalibrationError, match="write_table: .*tables is a directory, not a file") as err:
        write_table(FITTED, "ascend910b", folder)
    assert str(folder) in str(err.value) and str(folder / "my_npu.toml") in err.value.hint
    assert _listing(tmp_path) == before_parent
    _assert_untouched(keep, before, b"# mine\n")


def test_write_table_that_does_not_load_leaves_the_table_and_formulas(tmp_path, monkeypatch):
    """The trial table does not load: the table and its formulas CSV already there are as they
    were, and no trial or temporary file is left."""
    table = _precious(tmp_path, "npu.toml", b"# the user's table\n")
    formulas = _precious(tmp_path, "npu_formulas.csv", b"the user's formulas\n")
    before = _listing(tmp_path)

    def refuse(path):
        raise MachineError(f"{path}: refused (test)")

    monkeypatch.setattr(table_module, "load_machine_from", refuse)
    fitted = dict(FITTED, **{"formula.TADDS.float32.32": {"slope": 0.02, "bias": 20.0}})
    with pytest.raises(MachineError, match="refused"):
        write_table(fitted, "ascend910b", table)
    _assert_untouched(table, before, b"# the user's table\n")
    assert formulas.read_bytes() == b"the user's formulas\n"
    formulas.unlink()
    with pytest.raises(MachineError, match="refused"):
        write_table(fitted, "ascend910b", table)
    assert _listing(tmp_path) == ["npu.toml"]


def test_write_table_replaces_a_table(tmp_path):
    path = _precious(tmp_path, "npu.toml", b"# old\n")
    written = write_table(dict(FITTED, **{"formula.TADDS.float32.32": {"slope": 0.02, "bias": 20.0}}),
                          "ascend910b", str(path), label="test")
    assert written == path and _listing(tmp_path) == ["npu.toml", "npu_formulas.csv"]
    machine = load_machine_from(path)
    assert machine.latency("ADD") == 9 and machine.vector_formulas[("TADDS", "float32", 32)] == (0.02, 20.0)


def test_write_rows_to_a_directory_is_a_calibration_error_and_replaces_a_file(tmp_path):
    keep = _precious(tmp_path)
    before = _listing(tmp_path)
    rows = [Row("chain", "ADD", 8, 120.0, "ascend910b", ""), Row("chain", "ADD", 16, 176.5)]
    with pytest.raises(CalibrationError, match="write_rows: .* is a directory, not a file"):
        write_rows(rows, tmp_path)
    _assert_untouched(keep, before)
    path = _precious(tmp_path, "rows.csv", b"old rows\n")
    assert write_rows(rows, path) == path
    assert path.read_text().splitlines() == ["benchmark,instruction,size,cycles,machine,notes",
                                             "chain,ADD,8,120,ascend910b,", "chain,ADD,16,176.5,,"]


def test_the_cli_refuses_a_directory_as_calibrate_output(tmp_path):
    """`pypto-sim calibrate rows.csv -o DIR`: one line naming DIR, before any work is done (the
    CLI checks its outputs first), exit 1, nothing beside DIR."""
    rows = tmp_path / "rows.csv"
    write_rows(run_microbenchmarks("ascend910b", only=["ADD"]), rows)
    out = tmp_path / "out"
    out.mkdir()
    before = _listing(tmp_path)
    run = subprocess.run([sys.executable, "-m", "pypto_sim", "calibrate", str(rows), "--base", "ascend910b",
                          "-o", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 1, run.stderr
    assert run.stderr.startswith(f"pypto-sim: error: -o {out}: {out} is a directory, not a file") and \
        len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert _listing(tmp_path) == before and _listing(out) == []


def test_the_docs_state_the_overwrite_policy():
    """docs/profiling.md and docs/calibration.md say that an existing file is replaced, never
    half-written, as the tests above check."""
    profiling = (ROOT / "docs" / "profiling.md").read_text()
    calibration = (ROOT / "docs" / "calibration.md").read_text()
    assert "## Output files" in profiling and "replace a file already at their path" in profiling
    assert "`write_table` and `write_rows`" in calibration and "replace a file" in calibration
