"""Shared fixtures: every test gets a fresh device and the default machine, so no state leaks."""
import importlib.util
import itertools
import sys
from pathlib import Path

import pytest

from pypto_sim.runtime import device as device_mod
from pypto_sim.timing import machine as machine_mod

SIMPLE_MACHINE = Path(__file__).parent / "machines" / "simple.toml"
_counter = itertools.count()


@pytest.fixture(autouse=True)
def fresh_device():
    """A new device (empty HBM and stream) and the default machine for each test."""
    m_token = machine_mod._ACTIVE.set(None)
    d_token = device_mod._DEVICE.set(None)
    yield
    device_mod._DEVICE.reset(d_token)
    machine_mod._ACTIVE.reset(m_token)


@pytest.fixture
def simple_machine():
    """The round-number machine of tests/machines/simple.toml, made active."""
    import pypto_sim as pto
    return pto.use_machine(SIMPLE_MACHINE)


@pytest.fixture
def make_kernels(tmp_path):
    """Write kernel source to a module file and import it (kernels need a real source file)."""
    def make(source: str):
        name = f"generated_kernels_{next(_counter)}"
        path = tmp_path / f"{name}.py"
        path.write_text("import pypto_sim as pto\n" + source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    return make
