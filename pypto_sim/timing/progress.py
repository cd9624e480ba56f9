"""A progress bar for long simulations: blocks finished out of the grid, on stderr.

Shown only when stderr is a terminal (never in pipes, logs or CI) and the launch has at
least 64 blocks; PYPTO_PROGRESS=0 turns it off, PYPTO_PROGRESS=1 forces it on (the launch's
pto.Settings.progress, passed in as ``setting``). Redrawn at
most five times a second, so it costs nothing measurable.
"""
from __future__ import annotations

import sys
import time


class Progress:
    """Counts finished blocks and redraws a one-line bar."""

    def __init__(self, kernel_name: str, total_blocks: int, stream=None, setting: str = ""):
        self.stream = stream or sys.stderr
        self.name = kernel_name
        self.total = total_blocks
        self.done = 0
        self.last_draw = 0.0
        self.start = time.perf_counter()
        interactive = getattr(self.stream, "isatty", lambda: False)()
        self.enabled = setting == "1" or (setting != "0" and interactive and total_blocks >= 64)

    def block_done(self, cycle: int):
        """One more block finished, at simulated cycle ``cycle``."""
        self.advance(self.done + 1, cycle)

    def advance(self, done: int, cycle: int):
        """``done`` blocks have finished by simulated cycle ``cycle``."""
        if not self.enabled:
            return
        self.done = done
        now = time.perf_counter()
        if now - self.last_draw < 0.2 and self.done < self.total:
            return
        self.last_draw = now
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        self.stream.write(f"\r{self.name} [{'#' * filled}{'.' * (width - filled)}] "
                          f"{self.done}/{self.total} blocks, cycle {cycle}, {now - self.start:.1f} s")
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()
