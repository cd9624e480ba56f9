"""pto.sweep: the same table serially and on a Dask LocalCluster; failing points are rows;
a killed driver resumes from its table; the README's and docs' examples run as written.
(Hanging and dying points: test_sweep_failures.py; resuming: test_sweep_identity.py.)"""
import re
import subprocess
import sys
import textwrap
from pathlib import Path


import pytest

import pypto_sim as pto
from pypto_sim.cli import main

PARAMS = {"n": [256, 1024], "reps": [1, 4]}
COMPARED = ["key", "total_cycles", "warp_instructions", "check", "error"]


def _table(frame):
    return frame[COMPARED].sort_values("key").reset_index(drop=True)


@pytest.fixture(scope="module")
def serial():
    """The PARAMS sweep run serially, once for the tests that compare other engines with it."""
    return pto.sweep("sweep_factories:scale_case", params=PARAMS, engine="serial")


def test_serial_sweep_rows(serial):
    frame = serial
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
    """block=2048 lanes cannot launch; block=64 runs. (On Dask: test_sweep_failures.py.)"""
    frame = pto.sweep("sweep_factories:failing_case", params={"block": [64, 2048]}, engine="serial")
    bad = frame[frame["param.block"] == 2048].iloc[0]
    good = frame[frame["param.block"] == 64].iloc[0]
    assert "LaunchError" in bad["error"] and "1024 lanes" in bad["error"]
    assert not isinstance(good["error"], str) and good["check"] and good["total_cycles"] > 0


def test_dask_local_cluster_gives_the_serial_table(serial):
    dask = pto.sweep("sweep_factories:scale_case", params=PARAMS, workers=2)
    assert _table(dask).equals(_table(serial))


def test_a_killed_driver_resumes_to_the_same_table(tmp_path, serial):
    """The driver is killed after two of four rows are written (its lock file stays behind,
    its OS lock does not); resuming runs only the rest."""
    out = tmp_path / "rows.parquet"
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r})
        import pypto_sim as pto
        from pypto_sim.sweep.results import ResultsFile
        real = ResultsFile.write
        def write_then_die(self, pd, rows):
            real(self, pd, rows)
            if len(rows) == 2:
                os._exit(9)
        ResultsFile.write = write_then_die
        pto.sweep("sweep_factories:scale_case", params={PARAMS!r}, engine="serial", out={str(out)!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 9, proc.stderr
    import pandas as pd
    assert len(pd.read_parquet(out)) == 2
    resumed = pto.sweep("sweep_factories:scale_case", params=PARAMS, engine="serial", out=out,
                        resume=True)
    assert _table(resumed).equals(_table(serial))
    assert len(pd.read_parquet(out)) == 4


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_scheduler_and_two_workers_by_address(tmp_path, serial):
    """A dask scheduler and two workers started on 127.0.0.1 (as a cluster would be) run the
    same sweep by address and give the serial table."""
    import os
    import time
    from pathlib import Path
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent),
                                                       str(Path(__file__).parents[1]),
                                                       os.environ.get("PYTHONPATH", "")]))
    address = f"tcp://127.0.0.1:{port}"
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                               "127.0.0.1", "--port", str(port), "--no-dashboard"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                                           address, "--nthreads", "1", "--no-dashboard"], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from dask.distributed import Client
        deadline = time.time() + 60
        with Client(address, timeout=60) as client:
            while len(client.scheduler_info()["workers"]) < 2 and time.time() < deadline:
                time.sleep(0.2)
            assert len(client.scheduler_info()["workers"]) == 2
        remote = pto.sweep("sweep_factories:scale_case", params=PARAMS, engine=address)
        assert _table(remote).equals(_table(serial))
    finally:
        # workers first, then the scheduler: a worker whose scheduler is gone spends seconds
        # trying to reach it before it exits
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=30)


def test_cli_sweep_from_a_spec_and_a_plot(tmp_path, capsys, monkeypatch):
    """`pypto-sim sweep SPEC` (cli.main in this process; a spec's path joins sys.path, restored
    after the test) writes the 2 x 3 = 6 rows and prints the top ones; plot_sweep draws them."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = tmp_path / "spec.toml"
    spec.write_text(textwrap.dedent(f"""
        factory = "sweep_factories:scale_case"
        path = [{str(__file__.rsplit('/', 1)[0])!r}]
        [params]
        n = [256, 512]
        reps = [1, 2, 3]
    """))
    out = tmp_path / "rows.parquet"
    capsys.readouterr()
    code = main(["sweep", str(spec), "-o", str(out), "--engine", "serial", "--top", "2"])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert "6 points, 0 failed" in stdout and "param.reps" in stdout
    import pandas as pd
    frame = pd.read_parquet(out)
    assert len(frame) == 6
    from pypto_sim.sweep import plot_sweep
    png = tmp_path / "sweep.png"
    plot_sweep(frame, x="param.reps", hue="param.n", path=png)
    assert png.stat().st_size > 1000


def test_the_sweep_example_runs(tmp_path):
    from pathlib import Path
    example = Path(__file__).resolve().parents[1] / "examples" / "sweep_gemm_tiles.py"
    proc = subprocess.run([sys.executable, str(example), "--serial", "--plot", str(tmp_path / "p.png")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "24 points, every C matches numpy" in proc.stdout
    assert (tmp_path / "p.png").stat().st_size > 1000


ROOT = Path(__file__).resolve().parents[1]


def _blocks(path, lang):
    """The ```lang code blocks of a markdown file."""
    return re.findall(rf"```{lang}\n(.*?)```", (ROOT / path).read_text(), flags=re.S)


def test_the_docs_sweep_snippet_runs_as_written(tmp_path):
    """README's and docs/sweeps.md's snippet (the same text) pasted into a script, no main
    guard, run from the repository root on the default engine: 2 tiles x 2 bandwidths = 4
    rows, none failed."""
    readme = [b for b in _blocks("README.md", "python") if "pto.sweep(" in b]
    docs = [b for b in _blocks("docs/sweeps.md", "python") if "pto.sweep(" in b]
    assert readme == docs[:1] and len(readme) == 1
    script = tmp_path / "paste.py"
    script.write_text(readme[0] + 'assert len(rows) == 4 and rows["error"].isna().all()\n'
                      'print("rows", len(rows))\n')
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "rows 4" in proc.stdout


def test_the_docs_spec_is_the_example_spec_and_runs(tmp_path):
    """docs/sweeps.md shows examples/sweep_gemm_tiles.toml as it is; the CLI runs it from
    another directory (its factory path is relative to the spec): 2 x 2 x 2 = 8 points."""
    assert _blocks("docs/sweeps.md", "toml") == [(ROOT / "examples/sweep_gemm_tiles.toml").read_text()]
    proc = subprocess.run([sys.executable, "-m", "pypto_sim", "sweep",
                           str(ROOT / "examples/sweep_gemm_tiles.toml"), "-o", "r.parquet",
                           "--engine", "serial"], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "8 points, 0 failed" in proc.stdout
