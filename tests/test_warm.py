"""``pypto-sim warm`` (runtime/warm.py) compiles the executor: numba compiles a function at its
first call, so importing the executor compiled nothing and the first launch after a "warm"
still paid the whole compile. warm() makes the first calls with small launches on each path."""
import numpy as np

import pypto_sim as pto
from pypto_sim.exec.lane import executor
from pypto_sim.runtime.device import current_device
from pypto_sim.runtime.warm import warm


def test_warm_reaches_every_compiled_engine():
    """After warm(), the compiled lane timing loop (engine_run), the functional runner
    (run_grid), the AI core's event loop (aicore_engine_run) and its values replay
    (aicore_replay) each have a compiled signature: the warm-up's launches took those paths
    (not SimPy's), so a later launch of either kind loads them from the cache."""
    seconds = warm()
    assert set(seconds) == {"lane kernel, timing", "lane kernel, functional", "AI-core kernel, timing",
                            "AI-core kernel, timing, values=False", "AI-core kernel, functional"}
    ex = executor()
    for name in ("engine_run", "run_grid", "aicore_engine_run", "aicore_replay"):
        assert getattr(ex, name).signatures, f"warm() did not run {name}"


def test_warm_leaves_the_callers_device_alone():
    """warm() runs on a private device in a copied context: a tensor allocated before it keeps
    its values and the caller's device is the same object afterwards."""
    host = np.arange(64, dtype=np.float32)
    d = pto.alloc_tensor(64 * 4)
    pto.memcpy_h2d(d, host)
    before = current_device()
    warm()
    assert current_device() is before
    out = np.zeros(64, np.float32)
    pto.memcpy_d2h(out, d)
    assert (out == host).all()
