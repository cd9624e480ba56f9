"""A non-editable install (a built wheel) finds isa/ and latency_tables/ inside the package."""
import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

from pypto_sim.exec.lane import cache_dir

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import numpy as np, pypto_sim as pto, pypto_sim._resources as r
assert 'site' in str(r.data_dir('isa')) or '_data' in str(r.data_dir('isa')), r.data_dir('isa')
assert len(pto.instructions()) >= 50 and pto.machine().cores == 24
@pto.kernel
def k(a, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(a + i, i * 2)
d = pto.alloc_tensor(64 * 4, pto.int32)
pto.launch(k, grid=(1, 1, 1), block=(64, 1, 1), args=(d, 64))
assert np.array_equal(d.numpy(), np.arange(64) * 2)
print('ok', r.data_dir('isa'))
"""


def test_wheel_ships_the_data_and_works_outside_the_checkout(tmp_path):
    """Build the wheel, install it into a fresh directory, and run a kernel from elsewhere."""
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation,
                    "-w", str(tmp_path / "dist"), str(ROOT)], check=True, timeout=600)
    wheel = next((tmp_path / "dist").glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "pypto_sim/_data/isa/00_core.toml" in names
    assert "pypto_sim/_data/latency_tables/ascend910b.toml" in names
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, timeout=600)
    (tmp_path / "probe.py").write_text(PROBE)
    script_dir = tmp_path / "elsewhere"
    script_dir.mkdir()
    (script_dir / "probe.py").write_text(PROBE)
    # the suite's numba cache: the installed copy generates the same executor module, so it
    # loads what earlier tests compiled instead of compiling it again (about 40 s)
    result = subprocess.run([sys.executable, str(script_dir / "probe.py")], cwd=script_dir,
                            env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin",
                                 "HOME": str(tmp_path), "PYPTO_SIM_CACHE_DIR": str(cache_dir())},
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok") and str(target) in result.stdout
