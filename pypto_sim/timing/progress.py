"""Progress on a terminal for whatever takes long: launches, the first compile of the
simulator, microbenchmarks and sweeps.

One line on stderr, redrawn in place at most every INTERVAL seconds and ended with a newline.
It is drawn only when stderr is a terminal (never in pipes, logs or CI) and only once the
work has run for DELAY seconds, so short work prints nothing. The ``progress`` setting
(pto.Settings.progress, from PYPTO_PROGRESS; docs/settings.md) switches it: "0" never, "1"
always, also off a terminal and from the start (for logs); "" (unset) the default above.
Functions that show progress also take ``progress=True/False``, which wins over the setting.
"""
from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time
from numba.core import event

DELAY = 2.0          # seconds of work before anything is drawn
INTERVAL = 0.2       # seconds between redraws
# what the current work is part of: None (nothing), "line" (an outer progress line of this
# process is open: a sweep, the microbenchmarks) or "point" (a sweep point, perhaps in a worker
# process whose stderr the driver's line shares). Launches keep quiet in both; the compile
# ticker in a point only, since there it would draw from several processes at once
_OUTER = contextvars.ContextVar("pypto_progress_outer", default=None)


class Progress:
    """A one-line progress report of ``label``: ``update(done, detail)`` as work goes on
    (``total``: the count ``done`` goes to, or None), ``close()`` at the end.

    ``enabled``: True/False decides; None (default) follows ``setting`` (pto.Settings.progress:
    "", "0" or "1") and whether ``stream`` (default stderr) is a terminal. ``inner``: part of
    larger work (a launch): quiet while an outer progress line is open (``with`` an enabled
    Progress). ``clock`` is for tests."""

    def __init__(self, label: str, total: int | None = None, unit: str = "", stream=None,
                 setting: str = "", enabled: bool | None = None, clock=time.monotonic,
                 inner: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        self.label, self.total, self.unit = label, total, unit
        self.clock = clock
        self.start = clock()
        self.last_draw = None
        self.done, self.detail = 0, ""
        if enabled is None:
            mode = {"0": "off", "1": "on"}.get(setting, "auto")
        else:
            mode = "on" if enabled else "off"
        interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = (mode == "on" or (mode == "auto" and interactive)) and \
            not (inner and _OUTER.get() is not None)
        self.delay = 0.0 if mode == "on" else DELAY
        self._token = None

    @property
    def drawn(self) -> bool:
        """Whether anything has been drawn."""
        return self.last_draw is not None

    def update(self, done: int, detail: str = ""):
        """``done`` units of work are finished; redraw if it is time to."""
        self.done, self.detail = done, detail
        if not self.enabled:
            return
        now = self.clock()
        if now - self.start < self.delay:
            return
        if self.drawn and now - self.last_draw < INTERVAL:
            return
        self._draw(now)

    def _draw(self, now):
        self.last_draw = now
        if self.total:
            width = 30
            filled = int(width * min(self.done, self.total) / self.total)
            bar = f" [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}"
        else:
            bar = f" {self.done}" if self.done else ""
        unit = f" {self.unit}" if self.unit and bar else ""
        detail = f", {self.detail}" if self.detail else ""
        self.stream.write(f"\r{self.label}{bar}{unit}{detail}, {now - self.start:.1f} s\x1b[K")
        self.stream.flush()

    def close(self):
        """The work is over: if anything was drawn, draw the final state and end the line."""
        if self.drawn:
            self._draw(self.clock())
            self.stream.write("\n")
            self.stream.flush()
            self.last_draw = None

    def __enter__(self):
        if self.enabled:
            self._token = _OUTER.set("line")
        return self

    def __exit__(self, *exc):
        if self._token is not None:
            _OUTER.reset(self._token)
            self._token = None
        self.close()


def quiet_launches():
    """From here on in the current context, launches and the compile ticker keep quiet (a
    sweep point, in the driver or a worker process: the sweep reports). Call it in a copied
    context (``contextvars.copy_context().run``), which it then affects alone."""
    _OUTER.set("point")


class Ticker:
    """Progress of one long call that cannot report (a compile): a thread redraws the
    elapsed time every second while it runs. ``with Ticker(label): call()``."""

    def __init__(self, label: str, stream=None, setting: str = "", enabled: bool | None = None):
        self.progress = Progress(label, stream=stream, setting=setting, enabled=enabled)
        self._stop = threading.Event()
        self._thread = None

    def _run(self):
        while not self._stop.wait(min(1.0, max(self.progress.delay, INTERVAL))):
            self.progress.update(0)

    def __enter__(self):
        if self.progress.enabled:
            self.progress.update(0)          # forced on (no delay): drawn at once
            self._thread = threading.Thread(target=self._run, name="pypto-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        self.progress.close()


@contextlib.contextmanager
def compile_progress(setting: str = "", stream=None, enabled: bool | None = None):
    """While inside, numba compiling any function (the executor's kernels on their first
    use; cached on disk afterwards) shows a ticker: 'pypto-sim: compiling the simulator
    (engine_run; first run only, cached on disk afterwards), 14.0 s'. Nothing is drawn when
    numba finds its cache."""

    class Listener(event.Listener):
        def __init__(self):
            self.depth = 0
            self.ticker = None

        def on_start(self, ev):
            self.depth += 1
            if self.depth == 1:
                name = getattr(getattr(ev.data.get("dispatcher"), "py_func", None), "__name__", "?")
                self.ticker = Ticker(f"pypto-sim: compiling the simulator ({name}; first run "
                                     "only, cached on disk afterwards)", stream=stream,
                                     setting=setting, enabled=enabled)
                self.ticker.__enter__()

        def on_end(self, ev):
            self.depth -= 1
            if self.depth == 0 and self.ticker is not None:
                self.ticker.__exit__(None, None, None)
                self.ticker = None

    if _OUTER.get() == "point":            # a sweep point: the sweep's line reports
        yield
        return
    listener = Listener()
    with event.install_listener("numba:compile", listener):
        try:
            yield
        finally:
            if listener.ticker is not None:
                listener.ticker.__exit__(None, None, None)
