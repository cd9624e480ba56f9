"""The point runner's child process (started by runner.PointRunner, never imported by users):
loads the numba executor once, then runs the points it is sent, one at a time, replying with
each row. It exits when its parent closes the request pipe or dies."""
from __future__ import annotations

import os
import threading
import time
from multiprocessing.connection import Connection
from ..exec.lane import executor
from .worker import run_point


def _exit_with_parent(parent: int):
    """Stop this process when the process that started it is gone (even mid-point)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(3)


def main(request_fd: int, reply_fd: int, parent: int):
    """Serve points: each request (FactoryRef, point, Machine) gets ("row", row) or
    ("factory_error", text) when the factory cannot be loaded here."""
    requests = Connection(request_fd, writable=False)
    replies = Connection(reply_fd, readable=False)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    executor()                                    # from the on-disk cache the driver filled
    replies.send(("ready", os.getpid()))
    loaded = {}                                   # factory files executed in this process
    while True:
        try:
            ref, point, machine = requests.recv()
        except EOFError:
            return
        try:
            fn = ref.load(loaded)
        except BaseException as exc:              # SystemExit from a script's top level too
            replies.send(("factory_error", f"{type(exc).__name__}: {exc}"))
            continue
        replies.send(("row", run_point(fn, point, machine, ref.label)))
