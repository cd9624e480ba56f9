"""Sweep case factories for the sweep tests (named "sweep_factories:..."; workers import them)."""
import os
from pathlib import Path

import numpy as np

import pypto_sim as pto


@pto.kernel
def scale_add(a, o, n, reps):
    i = pto.get_global_id()
    if i < n:
        x = pto.load(a + i)
        for r in range(reps):
            x = x * 1.5 + 1.0
        pto.store(o + i, x)


def scale_case(n=256, reps=1, block=64):
    """A small bandwidth-and-ALU kernel whose cycles grow with n and reps."""
    x = np.arange(n, dtype=np.float32)
    a, o = pto.alloc_tensor(x.nbytes), pto.alloc_tensor(x.nbytes)
    pto.memcpy_h2d(a, x)
    want = x.copy()
    for _ in range(reps):
        want = want * np.float32(1.5) + np.float32(1.0)
    return pto.SweepCase(scale_add, grid=(-(-n // block), 1, 1), block=(block, 1, 1),
                         args=(a, o, n, reps), outputs={"o": o},
                         check=lambda out: np.array_equal(out["o"], want))


def failing_case(n=256, reps=1, block=64):
    """block=2048 lanes cannot fit a core: that point's row carries the error."""
    return scale_case(n, reps, block)


def dies_once_case(marker, n=256, reps=1):
    """The first attempt kills its worker process outright; the retry on another worker runs."""
    path = Path(marker)
    if not path.exists():
        path.write_text("died")
        os._exit(1)
    return scale_case(n, reps)


def misbehaving_case(what="fine", n=256):
    """what="exit" kills the point's process (os._exit, every attempt); "hang" sleeps far past
    any test's timeout; "raise" raises; anything else is scale_case(n)."""
    if what == "exit":
        os._exit(7)
    if what == "hang":
        import time
        time.sleep(3600)
    if what == "raise":
        raise RuntimeError("this point raises")
    return scale_case(n)


def counted_case(log, n=256, reps=1):
    """scale_case, appending a line to the file ``log`` each time it runs (tests count reruns)."""
    with open(log, "a") as f:
        f.write(f"{n} {reps}\n")
    return scale_case(n, reps)


def counted_case_other(log, n=256, reps=1):
    """Another factory with counted_case's parameters: its rows must not stand for counted_case's."""
    return counted_case(log, n, reps + 1)


def hangs_once_case(marker, n=256):
    """The first run (no marker file yet) hangs; later runs are scale_case(n)."""
    path = Path(marker)
    if not path.exists():
        path.write_text("hung")
        import time
        time.sleep(3600)
    return scale_case(n)
