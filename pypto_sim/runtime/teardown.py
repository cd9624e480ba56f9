"""The end of a program: launches still queued run then, as a device synchronize at context
teardown does, and an error of one is reported, never lost.

``pto.launch`` queues a kernel; it runs when something synchronizes (runtime/device.py). A
program that ends without synchronizing leaves launches queued. At interpreter exit (an
``atexit`` hook, armed by the first launch) and at the end of the script of ``pypto-sim run``,
``profile`` or ``trace`` (cli.py calls ``run_unsynced_launches``), every device that can still
be synchronized - the current one, and any a live tensor or launch handle belongs to - runs its
queue, in order, exactly as ``pto.sync()`` would: a launch whose tensor the program freed (a
``del``, a function's local gone) is a UseAfterFreeError and is not run, so nothing freed is
touched, and exit itself frees nothing first (tensors' finalizers skip exit, memory.py). A
paused debug session is left as it is (its launch is not queued). The first error is reported with
its full message and what happened (the launch was queued and never synchronized;
``pto.sync()`` raises it where it happens), the launches queued after it are not run, and the
exit status is 1.

A program that already failed does not run its queue: an uncaught exception (Python printed
it and the status is 1), or under ``pypto-sim`` a script's exception or nonzero ``sys.exit``
(cli.py calls ``discard_unsynced_launches``). Its own error is the one to see. A program with
nothing queued pays one check of each device's queue at exit.

Why the exit status is set with ``os._exit``: when atexit hooks run, Python has fixed the
status already (the script's ``sys.exit`` code, 0 at its end); an exception raised by a hook is
printed as "Exception ignored" and changes nothing, ``sys.excepthook`` is not called, and a
``SystemExit`` raised by a hook is ignored too. The only way to exit with 1 is to end the
process, which skips the rest of a normal exit (a documented alternative, "call pto.sync()",
is what lost the errors). So the work is split over two hooks. The
drain hook is registered at the first launch: atexit runs hooks last-registered-first, so the
queued kernels run early, while every hook registered before them (numba's, logging's, the
program's) has still to come. The status hook is registered when pypto_sim is imported, so it
runs late, after every hook registered since; only then, if a launch failed, it does what
the rest of the exit would have done that matters - runs the weakref finalizers that were to
run at exit (temporary directories), flushes every file the program left open (a normal exit
flushes them as it frees them) and stdout/stderr - and calls ``os._exit``. Lost on that path
are only the hooks registered before pypto_sim was imported and other objects' ``__del__``,
on a process that is failing anyway; a clean exit is untouched.
"""
from __future__ import annotations

import atexit
import gc
import os
import sys
import traceback
import weakref

from ..errors import LaunchError, PtoError

try:                                   # the C base class of every io object (a fast isinstance)
    from _io import _IOBase as _IO_BASE
except ImportError:                    # pragma: no cover - another Python
    from io import IOBase as _IO_BASE

_devices = weakref.WeakSet()           # devices that queued a launch (runtime/device.py: watch)
_armed = False                         # the drain hook is registered
_exit_status = None                    # set when a launch failed at exit: the status hook ends with it


class UnsyncedLaunchError(PtoError):
    """A launch that was queued and never synchronized failed when the program ended;
    ``error`` is its own error (an OutOfBoundsError, ...), ``launch`` where it was made."""


def watch(device) -> None:
    """Note that ``device`` queued a launch (Device.launch calls it): at exit its queue runs.
    The first call registers the drain hook (module docstring); later ones cost a set add."""
    global _armed
    _devices.add(device)
    if not _armed:
        _armed = True
        atexit.register(_drain_at_exit)


def run_unsynced_launches() -> None:
    """Run every launch still queued on a device that can be synchronized (the module
    docstring), as ``pto.sync()`` does. The first that fails raises UnsyncedLaunchError (a
    PtoError whose message is the launch's own, typed, plus what happened); the launches after
    it are not run (their handles say so). An error that is not a PtoError (a bug of
    pypto_sim) propagates as it is, with a note saying the same."""
    for device in _queued_devices():
        queued = list(device.queue)
        try:
            device.sync()
        except KeyboardInterrupt:
            discard_unsynced_launches(reason="the run of the launches queued at the program's end was "
                                             "interrupted")
            raise
        except Exception as exc:
            failed = next((p for p in queued if p.handle.error is exc), None)
            dropped = len(queued) - queued.index(failed) - 1 if failed is not None else 0   # by sync
            not_run = dropped + discard_unsynced_launches(reason=f"kernel '{_kernel_of(failed)}', queued "
                                                                 "before it, failed when the program ended")
            text = _what_happened(failed, not_run)
            if isinstance(exc, PtoError):
                raise UnsyncedLaunchError(f"{type(exc).__name__}: {exc}\n  {text}", error=exc,
                                          launch=getattr(failed, "site", None)) from exc
            exc.add_note(text)
            raise


def discard_unsynced_launches(reason="the program stopped with an error first") -> int:
    """Drop every queued launch without running it (the program failed, or an earlier launch
    did); their handles' ``result()`` raises a LaunchError giving ``reason``. Returns how many
    were dropped."""
    dropped = 0
    for device in list(_devices):
        pending, device.queue[:] = list(device.queue), []
        for p in pending:
            p.handle.error = LaunchError(f"kernel '{p.kernel.name}' was not run: {reason}",
                                         kernel=p.kernel.name)
            p.owned = ()
        dropped += len(pending)
    return dropped


def _queued_devices() -> list:
    """The devices with queued launches that can still be synchronized. A device nothing
    references (replaced by reset_device, or a finished thread's) cannot be: a garbage
    collection, only when something is queued, drops it from the weak set first."""
    if not any(d.queue for d in list(_devices)):
        return []
    gc.collect()
    return [d for d in list(_devices) if d.queue]


def _kernel_of(pending) -> str:
    return pending.kernel.name if pending is not None else "?"


def _what_happened(pending, not_run) -> str:
    """The sentence added to the error of a launch that failed when the program ended."""
    site = f", launched at {pending.site}," if getattr(pending, "site", None) else ""
    text = (f"kernel '{_kernel_of(pending)}'{site} was still queued when the program ended (it was never "
            "synchronized), so this error shows only now, from the implicit pto.sync() at its end; call "
            "pto.sync() after the launch to raise it where it happens")
    if not_run:
        text += f"; {not_run} launch(es) queued after it were not run"
    return text


def _failed_already() -> bool:
    """Whether the program ended with an uncaught exception (Python printed it and set
    sys.last_value; sys.last_exc from 3.12)."""
    return getattr(sys, "last_value", None) is not None or getattr(sys, "last_exc", None) is not None


def _drain_at_exit() -> None:
    """The drain hook: run what is still queued; on a failure report it and leave the exit
    status to the status hook."""
    global _exit_status
    if not any(d.queue for d in list(_devices)):
        return
    if _failed_already():
        return
    try:
        run_unsynced_launches()
        return
    except PtoError as err:
        print(f"pypto_sim: error: {err}", file=sys.stderr)
        _exit_status = 1
    except KeyboardInterrupt:
        print("pypto_sim: interrupted while running the launches still queued at exit", file=sys.stderr)
        _exit_status = 130
    except Exception:                  # a bug of pypto_sim: its traceback, with the note
        traceback.print_exc()
        _exit_status = 1
    _flush(sys.stderr)


def _status_at_exit() -> None:
    """The status hook (registered at import, so it runs late): after a launch failed at
    exit, finish what a normal exit does that matters and end with that status."""
    if _exit_status is None:
        return
    try:
        weakref.finalize._exitfunc()   # the finalizers meant for exit; a no-op if they ran
    except Exception:                  # pragma: no cover - a finalizer's own error was printed
        pass
    for obj in gc.get_objects():       # files left open: written out, as their freeing would
        if isinstance(obj, _IO_BASE):
            _flush(obj)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        _flush(stream)
    os._exit(_exit_status)


def _flush(stream) -> None:
    try:
        if stream is not None and not stream.closed and stream.writable():
            stream.flush()
    except Exception:                  # a closed pipe, a detached buffer: nothing to write to
        pass


atexit.register(_status_at_exit)
