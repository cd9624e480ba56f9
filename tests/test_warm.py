"""``pypto-sim warm`` (runtime/warm.py) compiles the executor: numba compiles a function at its
first call, so importing the executor compiled nothing and the first launch after a "warm"
still paid the whole compile. warm() makes the first calls with small launches on each path."""
import numpy as np

import pypto_sim as pto
from pypto_sim.exec.lane import executor
from pypto_sim.runtime.device import current_device
from pypto_sim.runtime.warm import ENGINES, compiled_in_this_process, warm


def test_warm_reaches_every_compiled_engine_and_leaves_the_callers_device_alone():
    """warm() runs each launch (module docstring) on a private device in a copied context:
    afterwards the compiled lane timing loop (engine_run), the functional runner (run_grid), the
    AI core's event loop (aicore_engine_run) and its values replay (aicore_replay) each have a
    compiled signature - the launches took those paths, not SimPy's - while a tensor allocated
    before keeps its values and the caller's device is the same object."""
    host = np.arange(64, dtype=np.float32)
    d = pto.alloc_tensor(64 * 4)
    pto.memcpy_h2d(d, host)
    before = current_device()
    seconds = warm()
    assert set(seconds) == {"lane kernel, timing", "lane kernel, functional", "AI-core kernel, timing",
                            "AI-core kernel, timing, values=False", "AI-core kernel, functional"}
    ex = executor()
    for name in ENGINES:
        assert getattr(ex, name).signatures, f"warm() did not run {name}"
    assert compiled_in_this_process()
    assert current_device() is before
    out = np.zeros(64, np.float32)
    pto.memcpy_d2h(out, d)
    assert (out == host).all()
