"""A point runner: a child process that runs sweep points one after another, so that a point
that hangs (past its timeout) or kills its process becomes an error row and the sweep goes on.
The serial engine owns one; each Dask worker owns one per thread (engines.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from multiprocessing.connection import Connection

from ..errors import SweepError
from .worker import DIED, TIMEOUT, error_row

# the child starts by importing pypto_sim and loading the numba executor from its cache
STARTUP_TIMEOUT_S = 300.0

_BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
         "from pypto_sim.sweep.child import main; main(int(sys.argv[2]), int(sys.argv[3]), "
         "int(sys.argv[4]))")


class PointRunner:
    """Runs points in a child process (started on first use, replaced when a point kills it
    or runs past its timeout). Use as a context manager, or call close()."""

    def __init__(self):
        self._proc = None
        self._requests = self._replies = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def run(self, ref, point: dict, machine, timeout) -> dict:
        """The point's row. ``timeout`` (seconds, or None) bounds the point's own run (not the
        child's start-up); past it the child is killed and the row says so. A child that dies
        is replaced and the point run once more; dying twice makes it an error row. A factory
        the child cannot load is a SweepError (every point would fail the same way)."""
        for attempt in (1, 2):
            self._start()
            start = time.perf_counter()
            try:
                self._requests.send((ref, point, machine))
                ready = self._replies.poll(timeout)
            except OSError:
                ready = True                      # the child is gone: recv() says so below
            if not ready:
                self._stop()
                return error_row(point, TIMEOUT, f"TimeoutError: the point ran longer than the "
                                 f"sweep's timeout={timeout:g} s and its process was stopped",
                                 time.perf_counter() - start)
            try:
                kind, payload = self._replies.recv()
            except (EOFError, OSError):
                code = self._stop()
                if attempt == 1:
                    continue
                return error_row(point, DIED, f"WorkerDied: the point's process {_how(code)}, "
                                 "twice (it was run again in a fresh process)",
                                 time.perf_counter() - start)
            if kind == "factory_error":
                raise SweepError(f"factory {ref.label} cannot be loaded in the point's process: "
                                 f"{payload}", hint="the factory's file must import cleanly "
                                 "on its own (with the same sys.path)")
            return payload
        raise AssertionError("unreachable")

    def _start(self):
        if self._proc is not None and self._proc.poll() is None:
            return
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT, json.dumps(sys.path), str(req_r), str(rep_w),
                 str(os.getpid())], pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL)
        finally:
            os.close(req_r)
            os.close(rep_w)
        self._requests = Connection(req_w, readable=False)
        self._replies = Connection(rep_r, writable=False)
        try:
            ok = self._replies.poll(STARTUP_TIMEOUT_S) and self._replies.recv()[0] == "ready"
        except (EOFError, OSError):
            ok = False
        if not ok:
            code = self._stop()
            raise SweepError(f"the sweep's point runner process did not start ({_how(code)})",
                             hint="its traceback is above; check that `python -c 'import "
                                  "pypto_sim'` works with this sys.path")

    def _stop(self):
        """Kill the child (if alive) and close the pipes; its exit code."""
        code = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            code = self._proc.wait()
        for conn in (self._requests, self._replies):
            if conn is not None:
                conn.close()
        self._proc = self._requests = self._replies = None
        return code

    def close(self):
        """Stop the child process (closing its request pipe ends it; killed if it hangs)."""
        if self._proc is not None and self._requests is not None:
            self._requests.close()
            self._requests = None
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self._stop()


def _how(code) -> str:
    if code is None:
        return "did not answer"
    if code < 0:
        return f"was killed by signal {-code}"
    return f"exited with code {code}"
