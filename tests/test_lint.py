"""The package is lint-clean: pyflakes reports nothing over pypto_sim/ (no undefined or unused
names, no redefinitions), so a linter or an editor can follow every module, the numba-compiled
executor included (exec/compiled/ is ordinary Python, docs/design.md)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_pyflakes_is_clean_over_the_package():
    """Every finding is printed with its file and line; fix the code (or, for a deliberate
    re-export, list the name in the module's __all__)."""
    run = subprocess.run([sys.executable, "-m", "pyflakes", str(ROOT / "pypto_sim")],
                         capture_output=True, text=True)
    assert run.returncode == 0 and not run.stdout.strip(), run.stdout + run.stderr
