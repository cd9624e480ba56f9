"""pto.sweep: the same table serially and on a Dask LocalCluster; failing points are rows;
a worker that dies is retried; a killed driver resumes from its table."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pypto_sim as pto

PARAMS = {"n": [256, 1024], "reps": [1, 4]}
COMPARED = ["key", "total_cycles", "warp_instructions", "check", "error"]


def _table(frame):
    return frame[COMPARED].sort_values("key").reset_index(drop=True)


def test_serial_sweep_rows():
    frame = pto.sweep("sweep_factories:scale_case", params=PARAMS, engine="serial")
    assert len(frame) == 4 and frame["error"].isna().all() and frame["check"].all()
    by = {(r["param.n"], r["param.reps"]): r["total_cycles"] for _, r in frame.iterrows()}
    assert by[(256, 4)] > by[(256, 1)] and by[(1024, 1)] >= by[(256, 1)]
    assert {"pipe_busy.vector", "busy.LOAD", "simulated_us", "wall_s"} <= set(frame.columns)


def test_machine_overrides_change_cycles_and_say_so():
    frame = pto.sweep("sweep_factories:scale_case", params={"reps": [4]},
                      machine_overrides={"instruction.MUL.latency": [7, 70]}, engine="serial")
    slow, fast = (frame[frame["override.instruction.MUL.latency"] == v]["total_cycles"].iloc[0]
                  for v in (70, 7))
    assert slow - fast == 4 * 63                     # four dependent MULs, 63 cycles more each
    m = pto.machine().with_overrides({"instruction.MUL.latency": 70})
    assert m.latency("MUL") == 70 and m.source("MUL") == "sweep override"


def test_a_failing_point_is_a_row_and_the_others_run():
    frame = pto.sweep("sweep_factories:failing_case", params={"block": [64, 2048]}, engine="serial")
    bad = frame[frame["param.block"] == 2048].iloc[0]
    good = frame[frame["param.block"] == 64].iloc[0]
    assert "LaunchError" in bad["error"] and "1024 lanes" in bad["error"]
    assert not isinstance(good["error"], str) and good["check"] and good["total_cycles"] > 0


def test_dask_local_cluster_gives_the_serial_table():
    serial = pto.sweep("sweep_factories:scale_case", params=PARAMS, engine="serial")
    dask = pto.sweep("sweep_factories:scale_case", params=PARAMS, workers=2)
    assert _table(dask).equals(_table(serial))


def test_a_dead_worker_is_retried(tmp_path):
    frame = pto.sweep("sweep_factories:dies_once_case",
                      params={"marker": [str(tmp_path / "died")], "reps": [1, 2, 3]}, workers=2)
    assert len(frame) == 3 and frame["error"].isna().all() and frame["check"].all()
    assert (tmp_path / "died").read_text() == "died"


def test_a_killed_driver_resumes_to_the_same_table(tmp_path):
    """The driver is killed after two of four rows are written; resuming runs only the rest."""
    out = tmp_path / "rows.parquet"
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r})
        import pypto_sim as pto
        from pypto_sim.sweep import run as run_mod
        real = run_mod._write
        def write_then_die(pd, rows, path):
            real(pd, rows, path)
            if len(rows) == 2:
                os._exit(9)
        run_mod._write = write_then_die
        pto.sweep("sweep_factories:scale_case", params={PARAMS!r}, engine="serial", out={str(out)!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 9, proc.stderr
    import pandas as pd
    assert len(pd.read_parquet(out)) == 2
    resumed = pto.sweep("sweep_factories:scale_case", params=PARAMS, engine="serial", out=out,
                        resume=True)
    whole = pto.sweep("sweep_factories:scale_case", params=PARAMS, engine="serial")
    assert _table(resumed).equals(_table(whole))
    assert len(pd.read_parquet(out)) == 4
