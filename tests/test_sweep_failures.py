"""A point that raises, hangs or kills its process is an error row and the sweep goes on, on
the serial engine and on Dask; one writer per results file; a killed driver's lock does not
block the resume."""
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
