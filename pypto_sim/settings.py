"""The settings a program takes from its environment, read in one place.

``Settings.from_environ()`` reads them, checks them and returns a frozen record; the runtime
makes one at each ``pto.launch`` / ``pto.profile`` call (so a variable set before a launch
counts for it) and hands it down: no module below reads ``os.environ``. ``pto.settings()``
shows the values a launch made now would use. docs/settings.md has the table.

One setting stays where it is read: PYPTO_SIM_CACHE_DIR (exec/jit_cache.py's ``cache_dir``), the
folder of the generated numba executor. numba's on-disk cache is keyed on the module's file,
which must be in place when the executor is first built (at the first launch, or
``pypto-sim warm``), before any launch's settings exist; it is one per process.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import LaunchError
from .timing.fast import ENGINES as TIMING_ENGINES

DEFAULT_MAX_CYCLES = 20_000_000
DEFAULT_MAX_WORK = 10 ** 9
PROGRESS = ("", "0", "1")


@dataclass(frozen=True)
class Settings:
    """What the environment asks of a launch (each field's variable in brackets):

    - ``check`` [PYPTO_CHECK]: checks for launches that pass no ``check=`` ("racecheck",
      "initcheck", "synccheck", "all" or a comma-separated list; "" none)
    - ``timing_engine`` [PYPTO_TIMING_ENGINE]: "auto" (the compiled event loop where it can
      run), "simpy" or "fast"
    - ``max_cycles`` [PYPTO_MAX_CYCLES]: the cycle limit of launches without ``max_cycles=``
    - ``max_work`` [PYPTO_MAX_WORK]: the estimated warp-instructions above which a launch
      without ``max_work=`` is refused before it runs
    - ``progress`` [PYPTO_PROGRESS]: "" (a progress line on a terminal for launches, the first
      compile, microbenchmarks and sweeps running longer than two seconds), "0" never, "1"
      always (also off a terminal, at once)
    """

    check: str = ""
    timing_engine: str = "auto"
    max_cycles: int = DEFAULT_MAX_CYCLES
    max_work: int = DEFAULT_MAX_WORK
    progress: str = ""

    def __post_init__(self):
        if self.timing_engine not in TIMING_ENGINES:
            raise LaunchError(f"timing engine {self.timing_engine!r} (PYPTO_TIMING_ENGINE): choose one "
                              f"of {', '.join(TIMING_ENGINES)}")
        if self.progress not in PROGRESS:
            raise LaunchError(f"PYPTO_PROGRESS={self.progress!r}: set 0 (no progress lines), 1 (always) "
                              "or leave it unset (on a terminal, for work longer than two seconds)")
        for name, var in (("max_cycles", "PYPTO_MAX_CYCLES"), ("max_work", "PYPTO_MAX_WORK")):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise LaunchError(f"{var}={value!r}: must be a positive whole number")

    @classmethod
    def from_environ(cls, environ=None) -> "Settings":
        """The settings the environment (``os.environ``, or the mapping given) asks for; unset
        variables take the defaults. A value that cannot be used is a LaunchError naming it."""
        env = os.environ if environ is None else environ
        fields = {}
        for name, var, number in (("check", "PYPTO_CHECK", False),
                                  ("timing_engine", "PYPTO_TIMING_ENGINE", False),
                                  ("max_cycles", "PYPTO_MAX_CYCLES", True),
                                  ("max_work", "PYPTO_MAX_WORK", True),
                                  ("progress", "PYPTO_PROGRESS", False)):
            text = env.get(var)
            if text is None or (text.strip() == "" and name != "check"):
                continue
            if number:
                try:
                    value = float(text) if name == "max_work" else int(text)
                    if value != int(value):
                        raise ValueError
                    fields[name] = int(value)
                except (ValueError, OverflowError):
                    raise LaunchError(f"{var}={text!r}: must be a positive whole number") from None
            else:
                fields[name] = text.strip()
        return cls(**fields)


def settings() -> Settings:
    """The settings a launch made now would use (from the environment)."""
    return Settings.from_environ()
