"""The pypto-sim command line: list the ISA, the machines, show a table, run a script."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "pypto_sim", *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)


def test_isa_and_machines():
    isa = _cli("isa")
    assert isa.returncode == 0 and "FMA" in isa.stdout and "pto.fma(dst, x, y, z)" in isa.stdout
    machines = _cli("machines")
    assert "ascend910b" in machines.stdout
    table = _cli("machine", "ascend910b")
    assert "hbm_chip_bytes_per_cycle" in table.stdout and "THEORY_BW_GM" in table.stdout


def test_run_a_script():
    result = _cli("run", str(ROOT / "examples" / "vector_add.py"))
    assert result.returncode == 0, result.stderr
    assert "passed" in result.stdout
