"""pto.Settings: the environment read once, at the launch call, and passed down."""
import ast
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def test_each_variable_sets_its_field_and_unset_ones_take_the_defaults():
    """An empty environment gives the documented defaults; each variable sets its own field
    (PYPTO_MAX_WORK takes 1e6 as the number it writes)."""
    assert Settings.from_environ({}) == Settings(check="", timing_engine="auto", max_cycles=20_000_000,
                                                 max_work=10 ** 9, progress="")
    env = {"PYPTO_CHECK": "race,init", "PYPTO_TIMING_ENGINE": "simpy", "PYPTO_MAX_CYCLES": "500",
           "PYPTO_MAX_WORK": "1e6", "PYPTO_PROGRESS": "0"}
    assert Settings.from_environ(env) == Settings("race,init", "simpy", 500, 1_000_000, "0")


@pytest.mark.parametrize("var, value", [("PYPTO_TIMING_ENGINE", "turbo"), ("PYPTO_PROGRESS", "yes"),
                                        ("PYPTO_MAX_CYCLES", "0"), ("PYPTO_MAX_CYCLES", "lots"),
                                        ("PYPTO_MAX_WORK", "inf"), ("PYPTO_MAX_WORK", "2.5")])
def test_a_value_that_cannot_be_used_is_refused_naming_the_variable(var, value):
    with pytest.raises(pto.LaunchError, match=var):
        Settings.from_environ({var: value})


def test_a_launch_reads_the_environment_when_it_is_called(monkeypatch):
    """PYPTO_MAX_CYCLES=5 set before a launch of a kernel that runs longer than 5 cycles stops
    it; unset again, the same launch runs."""
    @pto.kernel
    def touch(o):
        pto.store(o + pto.get_global_id(), 1.0)

    d = pto.alloc_tensor(32 * 4)
    monkeypatch.setenv("PYPTO_MAX_CYCLES", "5")
    with pytest.raises(pto.SimulationLimitError):
        pto.profile(touch, args=(d,))
    monkeypatch.delenv("PYPTO_MAX_CYCLES")
    assert pto.profile(touch, args=(d,)).total_cycles > 5
    host = np.zeros(32, np.float32)
    pto.memcpy_d2h(host, d)
    assert (host == 1.0).all()


def test_only_the_settings_module_reads_the_environment():
    """No module below the API boundary reads os.environ or os.getenv, except exec/jit_cache.py's
    cache folder (docs/settings.md says why); the sweep's progress line follows the progress
    setting like every other (it no longer reads CI)."""
    readers = set()
    for path in (ROOT / "pypto_sim").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv") \
                    and isinstance(node.value, ast.Name) and node.value.id == "os":
                readers.add(path.relative_to(ROOT / "pypto_sim").as_posix())
    assert readers == {"settings.py", "exec/jit_cache.py"}
