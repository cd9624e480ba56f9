"""A point that raises, hangs or kills its process is an error row and the sweep goes on, on
the serial engine and on Dask; one writer per results file; a killed driver's lock does not
block the resume."""
import csv
import os

import pytest

import pypto_sim as pto
from pypto_sim.errors import SweepError
from pypto_sim.sweep.results import ResultsFile

FINE = [{"what": "fine", "n": 32 * k} for k in range(1, 11)]      # ten points that complete


def _kinds(frame):
    """{what: [error_kind, ...]} of a misbehaving_case sweep (None where the point completed)."""
    out = {}
    for _, r in frame.iterrows():
        out.setdefault(r["param.what"], []).append(r["error_kind"] if isinstance(r["error_kind"], str) else None)
    return out


def test_dask_twelve_points_one_dies_one_hangs():
    """12 points on a LocalCluster of 2 worker processes: one point calls os._exit(7), one
    sleeps for an hour. With timeout=10 s (a point's first launch in a fresh process loads its
    kernel from the cache: 0.6 s measured on an idle machine, several seconds on a loaded CI
    machine) the sweep returns: 10 result rows (check True), the dying point an error row of
    kind "died" (it died in a fresh process too), the hanging one of kind "timeout"."""
    points = FINE + [{"what": "exit", "n": 64}, {"what": "hang", "n": 64}]
    frame = pto.sweep("sweep_factories:misbehaving_case", params=points, workers=2, timeout=10)
    assert len(frame) == 12
    ok = frame[frame["error"].isna()]
    assert len(ok) == 10 and ok["check"].all() and (ok["total_cycles"] > 0).all()
    assert _kinds(frame) == {"fine": [None] * 10, "exit": ["died"], "hang": ["timeout"]}
    died = frame[frame["param.what"] == "exit"]["error"].iloc[0]
    hung = frame[frame["param.what"] == "hang"]["error"].iloc[0]
    assert "exited with code 7" in died and "timeout=10 s" in hung


def test_serial_point_that_raises_hangs_or_exits_is_a_row():
    """Serially (one point runner process): a raising point is a "raised" row with its
    message, a hanging one a "timeout" row after timeout=5 s, an exiting one a "died" row;
    the fine point after them still completes (the runner was replaced; its first launch in
    the fresh process takes 0.6 s on an idle machine, more on a loaded one)."""
    frame = pto.sweep("sweep_factories:misbehaving_case", engine="serial", timeout=5,
                      params={"what": ["raise", "hang", "exit", "fine"]})
    assert _kinds(frame) == {"raise": ["raised"], "hang": ["timeout"], "exit": ["died"],
                             "fine": [None]}
    assert frame["error"].iloc[0] == "RuntimeError: this point raises"
    assert frame["check"].iloc[3] and frame["total_cycles"].iloc[3] > 0


def test_a_point_dying_once_is_run_again(tmp_path):
    """dies_once_case kills its process on the first call only (it leaves a marker file): the
    point runs again in a fresh process and its row is a result."""
    frame = pto.sweep("sweep_factories:dies_once_case", engine="serial",
                      params={"marker": [str(tmp_path / "died")], "reps": [1, 2]})
    assert frame["error"].isna().all() and frame["check"].all()
    assert (tmp_path / "died").read_text() == "died"


def test_timeout_and_died_rows_rerun_on_resume(tmp_path):
    """A row that timed out says nothing about the point: resuming runs it again (here it no
    longer hangs, its marker file exists) and its result replaces the timeout row in the file.
    (The first sweep's only point fails, so it raises, naming the first error.)"""
    import pandas as pd
    out = tmp_path / "rows.parquet"
    params = {"marker": [str(tmp_path / "hung")], "n": [64]}
    with pytest.raises(SweepError, match=r"every point failed \(1 of 1\); the first: TimeoutError"):
        pto.sweep("sweep_factories:hangs_once_case", params=params, engine="serial", timeout=1,
                  out=out)
    assert pd.read_parquet(out)["error_kind"].tolist() == ["timeout"]
    frame = pto.sweep("sweep_factories:hangs_once_case", params=params, engine="serial",
                      timeout=None, out=out, resume=True)
    assert frame["error"].isna().all() and frame["check"].all()
    assert pd.read_parquet(out)["error"].isna().tolist() == [True]


def test_a_second_writer_is_refused_naming_the_file_and_holder(tmp_path):
    """While one sweep holds rows.parquet, another sweep writing it is a SweepError naming
    the file and the holder (this process's pid); nothing is written by the refused one."""
    out = tmp_path / "rows.parquet"
    with ResultsFile(out, resume=True):
        with pytest.raises(SweepError, match=rf"rows.parquet is being written by another sweep "
                                             rf"\(pid {os.getpid()} on "):
            pto.sweep("sweep_factories:scale_case", engine="serial", timeout=None, out=out,
                      resume=True)
    assert not out.exists()
    frame = pto.sweep("sweep_factories:scale_case", engine="serial", timeout=None, out=out)
    assert len(frame) == 1 and not (tmp_path / "rows.parquet.lock").exists()


def test_an_existing_results_file_is_never_overwritten(tmp_path):
    """Without resume an existing table is refused (its rows are the user's), with the fix."""
    out = tmp_path / "rows.csv"
    out.write_text("key\nmine\n")
    with pytest.raises(SweepError, match="(?s)rows.csv already exists.*resume=True"):
        pto.sweep("sweep_factories:scale_case", engine="serial", timeout=None, out=out)
    assert out.read_text() == "key\nmine\n"


def test_an_unwritable_results_folder_is_a_sweep_error(tmp_path, monkeypatch):
    """A folder the sweep cannot create files in (read-only: simulated, the tests may run as
    root) is a SweepError naming the results file before any point runs; so is a missing one
    or a suffix that is neither .parquet nor .csv."""
    from pypto_sim.sweep import results

    def refuse(path, *a, **k):
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(results.os, "open", refuse)
    with pytest.raises(SweepError, match=r"rows.parquet: cannot create its lock file .*Permission denied"):
        pto.sweep("sweep_factories:scale_case", engine="serial", timeout=None, out=tmp_path / "rows.parquet")
    monkeypatch.undo()
    with pytest.raises(SweepError, match="the folder .*nope does not exist"):
        pto.sweep("sweep_factories:scale_case", engine="serial", out=tmp_path / "nope" / "r.csv")
    with pytest.raises(SweepError, match="must end in .parquet or .csv"):
        pto.sweep("sweep_factories:scale_case", engine="serial", out=tmp_path / "r.txt")


@pytest.mark.parametrize("name, content", [
    ("one.csv", b"precious\n"),
    ("scores.csv", b"name,score\nalice,1\nbob,2\n"),
    ("extra.csv", b'key,identity,name\n"{""params"": {}, ""overrides"": {}}",' + b"a" * 64 + b",alice\n"),
    ("badkey.csv", b"key,identity,total_cycles,error\nmine," + b"a" * 64 + b",5,\n"),
    ("badid.csv", b'key,identity\n"{""params"": {""n"": 1}, ""overrides"": {}}",not-a-hash\n'),
    ("listkey.csv", b'key,identity\n"{""params"": {""n"": [1]}, ""overrides"": {}}",' + b"a" * 64 + b"\n"),
])
def test_resume_refuses_a_table_no_sweep_wrote_and_leaves_it_as_it_was(tmp_path, name, content):
    """resume=True on a CSV a sweep did not write (no key and identity columns, a column a sweep
    never writes, a key that is not a point's JSON, an identity that is not a sha256) is a
    SweepError naming the file and why; the file's bytes are unchanged and no point runs."""
    out = tmp_path / name
    out.write_bytes(content)
    with pytest.raises(SweepError, match=rf"(?s){name} is not a table a sweep wrote: .*"
                                         r"resume=True continues only a table pto.sweep wrote.*left as it was"):
        pto.sweep("sweep_factories:scale_case", params={"n": [64]}, engine="serial", timeout=None,
                  out=out, resume=True)
    assert out.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]          # no lock or temp file left


def test_resume_says_which_columns_and_values_are_not_a_sweeps(tmp_path):
    """The refusal names the missing key columns, the foreign column, the bad key or identity."""
    cases = {"a.csv": ("name,score\nalice,1\n", "no key and identity columns (its columns: 'name', 'score')"),
             "b.csv": ('key,identity,score\n"{""params"": {}, ""overrides"": {}}",' + "0" * 64 + ",1\n",
                       "a sweep writes no column 'score'"),
             "c.csv": ("key,identity\nmine," + "0" * 64 + "\n", "row 1: key 'mine' is not a point's key"),
             "d.csv": ('key,identity\n"{""params"": {}, ""overrides"": {}}",xyz\n',
                       "row 1: identity 'xyz' is not a point's identity")}
    for name, (text, why) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(SweepError) as info:
            pto.sweep("sweep_factories:scale_case", engine="serial", timeout=None, out=tmp_path / name,
                      resume=True)
        assert why in str(info.value), (name, str(info.value))
        assert (tmp_path / name).read_text() == text


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_genuine_sweep_table_still_resumes(tmp_path, suffix):
    """A table a sweep wrote (with its error rows and busy.* columns) passes the check: the
    resumed sweep reuses its row, adds the new point's, and keeps every column."""
    out = tmp_path / f"rows{suffix}"
    first = pto.sweep("sweep_factories:scale_case", params={"n": [64]}, engine="serial", timeout=None,
                      out=out)
    again = pto.sweep("sweep_factories:scale_case", params={"n": [64, 128]}, engine="serial", timeout=None,
                      out=out, resume=True)
    assert again["identity"].iloc[0] == first["identity"].iloc[0]
    assert again["total_cycles"].iloc[0] == first["total_cycles"].iloc[0]
    assert again["error"].isna().all() and len(again) == 2
    assert set(first.columns) <= set(again.columns)


class _Interrupted(Exception):
    """Stands for a driver stopped (Ctrl-C, a killed job) after some rows were written."""


@pytest.mark.parametrize("failing", ["NA", None])
def test_a_resumed_csv_keeps_every_parameter_value(tmp_path, monkeypatch, failing):
    """A CSV holds only text, yet resuming an interrupted sweep from one gives the table the
    uninterrupted sweep gives, and the file keeps the values it had: the str parameters "1",
    "NA" and "" stay those strings (not 1.0, NaN and NaN), and the int, float and bool
    parameters and the override keep their values and types. With ``failing="NA"`` that
    point raises: its row keeps its error and its missing metrics."""
    import pandas as pd
    factory = tmp_path / "tagged.py"
    factory.write_text("import sweep_factories\n\n"
                       "def case(tag, n, scale, flag):\n"
                       f"    if tag == {failing!r}:\n"
                       "        raise ValueError('no such tag')\n"
                       "    return sweep_factories.scale_case(n)\n")
    spec = dict(factory=f"{factory}:case", engine="serial", timeout=None,
                params={"tag": ["1", "NA", ""], "n": [64], "scale": [0.1], "flag": [True]},
                machine_overrides={"instruction.MUL.latency": [9]})
    out = tmp_path / "rows.csv"
    real = ResultsFile.write

    def write_then_stop(self, pd, rows):
        real(self, pd, rows)
        if len(rows) == 2:
            raise _Interrupted
    monkeypatch.setattr(ResultsFile, "write", write_then_stop)
    with pytest.raises(_Interrupted):
        pto.sweep(out=out, **spec)
    monkeypatch.undo()
    point = ["64", "0.1", "True", "9"]                  # n, scale, flag, the MUL latency
    assert _csv_cells(out) == [["param.tag", "param.n", "param.scale", "param.flag",
                                "override.instruction.MUL.latency"], ["1"] + point, ["NA"] + point]

    resumed = pto.sweep(out=out, resume=True, **spec)
    whole = pto.sweep(**spec)
    assert resumed["param.tag"].tolist() == ["1", "NA", ""]
    raised = [False, failing == "NA", False]
    assert resumed["error"].notna().tolist() == resumed["total_cycles"].isna().tolist() == raised
    pd.testing.assert_frame_equal(resumed.drop(columns="wall_s"), whole.drop(columns="wall_s"))
    assert _csv_cells(out)[1:] == [["1"] + point, ["NA"] + point, [""] + point]


def _csv_cells(path, columns=5):
    """The first ``columns`` cells of each line of a CSV file, as the text it holds."""
    with open(path, newline="") as f:
        return [line[:columns] for line in csv.reader(f)]


def test_a_factory_that_returns_no_sweep_case_is_an_error_row_naming_it(tmp_path):
    """A factory returning 42 (not a pto.SweepCase) gives its point an error row (kind
    "raised") saying the factory, its parameters, what it returned and what to return, in a
    point runner and in this process; the other point completes."""
    factory = tmp_path / "facs.py"
    factory.write_text("import sweep_factories\n\n"
                       "def case(n=64, bad=0):\n"
                       "    return 42 if bad else sweep_factories.scale_case(n)\n")
    for timeout in (None, 60):
        frame = pto.sweep(f"{factory}:case", params={"bad": [0, 1]}, engine="serial", timeout=timeout)
        assert frame["error"].isna().tolist() == [True, False]
        error = frame["error"].iloc[1]
        assert error.startswith(f"SweepError: the factory {factory}:case, called with {{'bad': 1}}, "
                                "returned 42 (int), not a pto.SweepCase")
        assert "return pto.SweepCase(kernel, grid, block, args" in error
        assert frame["error_kind"].iloc[1] == "raised" and frame["check"].iloc[0]
    with pytest.raises(SweepError, match=r"every point failed .* returned 42 \(int\), not a pto.SweepCase"):
        pto.sweep(f"{factory}:case", params={"bad": [1]}, engine="serial", timeout=None)


def test_a_sweep_case_with_unusable_outputs_or_check_is_an_error_row(tmp_path):
    """outputs that is not a dict, or a check that is not callable, is named in the row's error."""
    factory = tmp_path / "facs2.py"
    factory.write_text("import dataclasses, sweep_factories\n\n"
                       "def case(what):\n"
                       "    c = sweep_factories.scale_case(64)\n"
                       "    return dataclasses.replace(c, outputs=[1]) if what == 'outputs' else "
                       "dataclasses.replace(c, check=3)\n")
    with pytest.raises(SweepError) as info:
        pto.sweep(f"{factory}:case", params={"what": ["outputs", "check"]}, engine="serial", timeout=None)
    frame = info.value.frame
    assert "returned a SweepCase whose outputs is a list, not a dict" in frame["error"].iloc[0]
    assert "returned a SweepCase whose check 3 is not callable" in frame["error"].iloc[1]
