"""Wall time of a run with the time numba spent compiling (or loading from its disk cache)
taken out, so that a simulation rate measures the simulation: the first launch of a process
otherwise reports tens of warp-instructions per second because it compiled the executor."""
from __future__ import annotations

import time
from contextlib import contextmanager

from numba.core import event as numba_event

# numba holds this lock while it compiles a function or loads it from its cache
_COMPILING = "numba:compiler_lock"


class RunClock:
    """``elapsed`` seconds of the block, ``compile_seconds`` of them numba spent compiling
    (or loading compiled code), ``run_seconds`` the rest: the run's own time."""

    elapsed = 0.0
    compile_seconds = 0.0

    @property
    def run_seconds(self) -> float:
        return max(self.elapsed - self.compile_seconds, 0.0)


@contextmanager
def run_clock():
    """``with run_clock() as clock: ...``: time the block, and numba's compiling inside it
    (on any thread of the process while the block runs)."""
    clock = RunClock()
    listener = numba_event.TimingListener()
    start = time.perf_counter()
    try:
        with numba_event.install_listener(_COMPILING, listener):
            yield clock
    finally:
        clock.elapsed = time.perf_counter() - start
        clock.compile_seconds = min(listener.duration if listener.done else 0.0, clock.elapsed)


def rate_text(per_second: float, compile_seconds: float) -> str:
    """'1,234 warp-instr/s', plus the compiling that was left out of it when there was some."""
    text = f"{per_second:,.0f} warp-instr/s"
    if compile_seconds >= 0.05:
        text += f" (not counting {compile_seconds:.1f} s of compiling the executor)"
    return text
