"""The simulated device: its HBM, its stream of queued launches, memcpy and sync.

``launch`` compiles and checks at once (so mistakes surface at the call) and queues the work;
it runs, in order, at ``sync()``, at a ``memcpy_d2h`` of a tensor it writes, at ``memcpy_h2d``
into a tensor it uses, when a ``pto.Tensor`` it uses leaves its ``with`` block, or, never
synchronized, when the program ends (runtime/teardown.py: an error then is reported, exit
status 1). The queue holds allocations, not tensors: the runtime never keeps a tensor the
user holds alive for the user, and a tensor freed while a queued kernel uses it is reported
as UseAfterFreeError. The one exception is a temporary only the launch references
(``args=(pto.to_device(x),)``): the launch keeps it until it has run, as a CUDA stream does
(runtime/names.py).
"""
from __future__ import annotations

import contextvars
import warnings
import weakref
from dataclasses import dataclass, field

import numpy as np

from .. import dtypes
from ..arguments import launch_dims, whole_number
from ..errors import ArgumentError, CheckSkippedWarning, LaunchError, UseAfterFreeError
from ..settings import DEFAULT_MAX_CYCLES, DEFAULT_MAX_WORK, Settings
from ..timing.machine import machine as active_machine
from ..timing.checks import parse_checks
from ..timing.block_fit import check_block_fits
from ..exec import gm
from ..timing.progress import compile_progress
from ..timing.aicore_limits import check_aicore_program
from ..timing.aicore_syncall import check_fits_machine, check_mix_sides
from ..profiler.collect import collecting, report as collected
from .skip_values import check_indexed_checks, check_values_off
from .memory import HBM, DeviceTensor, root_of
from .launch import run_launch
from .names import user_frame
from .teardown import watch

# launch()'s and profile()'s block: 32 lanes, one warp. The only block an AI-core kernel
# takes, whose block is one AI core (its AIC and two AIVs), not a number of lanes.
DEFAULT_BLOCK = (32, 1, 1)


@dataclass
class PendingLaunch:
    """A launch waiting in the stream."""

    kernel: object
    program: object
    grid: tuple
    block: tuple
    args: tuple           # allocations for tensors, register words for scalars
    names: tuple
    machine: object
    handle: "LaunchHandle"
    checks: frozenset = frozenset()
    max_cycles: int | None = None
    mode: str = "timing"
    timeline: bool = False      # keep the per-instruction records (else per-pc totals only)
    values: bool = True         # False: tile instructions are timed but compute nothing
    settings: Settings = Settings()     # what the environment asked for at the launch call
    owned: tuple = ()           # temporaries only this launch references: freed once it has run
    site: str | None = None     # file:line of the launch call (an error at exit names it)


@dataclass
class LaunchHandle:
    """Returned by pto.launch: ``result()`` waits and gives the run's Profile."""

    device: "Device"
    kernel_name: str
    profile: object = None
    error: Exception | None = field(default=None)

    @property
    def done(self) -> bool:
        return self.profile is not None or self.error is not None

    def result(self):
        """Wait for this launch (and everything queued before it); return its Profile."""
        if not self.done:
            self.device.sync()
        if self.error is not None:
            raise self.error
        return self.profile


class Device:
    """One simulated NPU: HBM and a single in-order stream."""

    def __init__(self, machine=None):
        self.machine = machine or active_machine()
        self.hbm = HBM(self.machine.hbm_bytes)
        self.queue: list = []
        # launches the lane debugger holds paused (pto.debug): taken off the queue, their
        # tensors still in use until the session finishes (DebugContext registers itself)
        self.debug_sessions = weakref.WeakSet()

    # ---------------------------------------------------------------- tensors
    def alloc_tensor(self, nbytes, dtype=dtypes.float32, name=None) -> DeviceTensor:
        return DeviceTensor(self, nbytes, dtype, name)

    def users_of(self, alloc):
        """Queued launches that use alloc's memory (through it, its root or any view of it)."""
        return [p for p in self.queue if _uses(p.args, alloc)]

    def debugged_users_of(self, alloc):
        """Debug sessions whose paused launch (not finished, not stopped by an error) uses
        alloc's memory."""
        return [d for d in list(self.debug_sessions) if not d.done and _uses(d.launch_args, alloc)]

    def release_allocation(self, alloc):
        users = self.users_of(alloc)
        if users:
            alloc.freed_while_used_by = users[0].kernel.name
            alloc.freed = True        # the kernel will not run on it; reported at sync
            return
        self.hbm.release(alloc)

    # ---------------------------------------------------------------- memcpy
    def memcpy_h2d(self, dst, host):
        _check_tensor(dst, "memcpy_h2d(dst, host)")
        if getattr(host, "is_device_tensor", False):
            raise ArgumentError(f"memcpy_h2d(dst, host): host is the device tensor '{host.name}'; it copies "
                                "a numpy array in", hint=f"copy between tensors through the host: "
                                f"pto.memcpy_h2d(dst, {host.name}.numpy())")
        host = np.asarray(host)
        _check_copy("memcpy_h2d", dst, host)
        if self.users_of(dst.alloc):
            self.sync()
        self.hbm.view(dst.alloc)[:] = gm.encode(host, dst.dtype)
        gm.init_mark_range(self.hbm.init, dst.alloc.byte_addr, dst.alloc.byte_addr + dst.alloc.nbytes)

    def memcpy_d2h(self, host, src):
        _check_tensor(src, "memcpy_d2h(host, src)")
        if not isinstance(host, np.ndarray):
            raise ArgumentError(f"memcpy_d2h(host, src): host is a {type(host).__name__}; it must be a numpy "
                                "array to copy into", hint="allocate one, host = np.empty(n, dtype), "
                                "or take a new array with src.numpy()")
        _check_copy("memcpy_d2h", src, host)
        if not host.flags.writeable:
            raise ArgumentError("memcpy_d2h(host, src): the host array is read-only (its writeable flag is "
                                "off), so nothing was copied", hint="copy into a writeable array, such as "
                                "host.copy(), or take a new one with src.numpy()")
        if self.users_of(src.alloc):
            self.sync()
        # element by element in the array's logical (C) order, as memcpy_h2d reads it: a
        # Fortran-ordered or sliced host array is written too (reshape(-1) of one is a copy)
        host[...] = gm.decode(self.hbm.view(src.alloc), src.dtype, host.dtype).reshape(host.shape)

    # ---------------------------------------------------------------- launch and sync
    def launch(self, kernel, grid, block, args, names=None, check=None, max_cycles=None,
               mode="timing", timeline=False, max_work=None, values=True, owned=()):
        if mode not in ("timing", "functional"):
            raise LaunchError(f"mode={mode!r}: choose 'timing' (cycles) or 'functional' (values only, fast)")
        if values not in (True, False):
            raise LaunchError(f"values={values!r}: pass True (compute tile values) or False (time "
                              "the tile instructions without their values)")
        if not values and mode == "functional":
            raise LaunchError("values=False with mode='functional' would compute nothing",
                              hint="values=False is for timing without tile values; "
                                   "mode='functional' is for values without timing")
        settings = Settings.from_environ()         # read once, here; passed down from here on
        checks = parse_checks(settings.check if check is None else check)
        if checks and mode == "functional":
            if check is not None:
                raise LaunchError(f"check={sorted(checks)} needs mode='timing' (the checks follow the "
                                  "timing model's order of events); bounds are checked in both modes")
            # PYPTO_CHECK checks a whole program: its timing launches; a functional launch in
            # it runs with bounds checks only, and says so
            warnings.warn(f"PYPTO_CHECK={settings.check}: kernel '{kernel.name}' runs in "
                          "mode='functional', which has bounds checks only (racecheck, initcheck and "
                          "synccheck follow the timing model); its timing launches are checked",
                          CheckSkippedWarning, stacklevel=3)
            checks = frozenset()
        max_cycles = _max_cycles(max_cycles, settings.max_cycles)
        if not getattr(kernel, "is_pto_kernel", False):
            raise LaunchError(f"launch() needs a @pto.kernel function, got {type(kernel).__name__}",
                              hint="decorate the function with @pto.kernel")
        grid = launch_dims(grid, "grid", kernel.name, LaunchError)
        block = launch_dims(block, "block", kernel.name, LaunchError)
        args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
        for name, value in zip(kernel.params, args):
            if getattr(value, "is_device_tensor", False):
                if value.device is not self:
                    raise LaunchError(f"argument '{name}' lives on another device", kernel=kernel.name)
                if value.freed:
                    raise UseAfterFreeError(f"argument '{name}' ({value.name}) was already freed",
                                            kernel=kernel.name, tensor=value.name,
                                            hint="keep the tensor alive until the kernel has run")
        program = kernel.program_for(args)
        if program.aicore:
            if block != DEFAULT_BLOCK:
                raise LaunchError(f"block={block}: a block of an AI-core kernel is one AI core (its AIC "
                                  "and two AIVs, scalar units that each run the program once), so "
                                  "block= has no meaning for it", kernel=kernel.name,
                                  hint="leave block= out; grid=(n,) counts AI cores")
            check_aicore_program(program, active_machine(), kernel.name)
            check_fits_machine(program, grid, active_machine(), kernel.name)
            check_mix_sides(program, kernel.name)
        else:
            check_block_fits(program, block, active_machine(), kernel.name)   # before any data moves
        _check_work(program, grid, block, _max_work(max_work, settings.max_work), kernel.name)
        names = names or tuple(None for _ in args)
        # a scalar as its register word (dtypes.word_of: an int64 is its bits, exact)
        stored = tuple(v.alloc if getattr(v, "is_device_tensor", False) else
                       dtypes.word_of(dtypes.round_scalar(v, spec.dtype), spec.dtype)
                       for v, spec in zip(args, program.args))
        if not values:
            check_values_off(program, [(v.byte_addr, v.byte_addr + v.nbytes) for v, a in
                                       zip(stored, program.args) if a.kind == "tensor"], kernel.name)
            check_indexed_checks(program, checks, kernel.name)
        kernel.last_launch = (grid, block)     # the debugger's default grid and block
        handle = LaunchHandle(self, kernel.name)
        self.queue.append(PendingLaunch(kernel, program, grid, block, stored, tuple(names),
                                        active_machine(), handle, checks, max_cycles, mode,
                                        bool(timeline) or collecting(), values, settings, owned,
                                        _call_site()))
        watch(self)           # what is still queued when the program ends runs then (teardown.py)
        return handle

    def sync(self):
        """Run every queued launch, in order. Raises the first error; the queue is then empty:
        the launches queued after the failing one are not run (a fault is sticky, as in a CUDA
        context), their handles say so and a note on the error names them."""
        while self.queue:
            pending = self.queue.pop(0)
            freed = [a for a in pending.args if getattr(a, "freed", False)]
            if freed:
                alloc = freed[0]
                self._release_freed(freed)
                name = alloc.name or f"tensor{alloc.id}"
                err = UseAfterFreeError(
                    f"tensor '{name}' ({alloc.nbytes} bytes at 0x{alloc.byte_addr:x}) was freed while "
                    f"kernel '{pending.kernel.name}' was still queued to use it; the kernel was not run",
                    kernel=pending.kernel.name, tensor=name,
                    hint="wrap the tensor in `with pto.Tensor(...) as t:` or call pto.sync() before "
                         "`del`/free()")
                pending.handle.error = err
                pending.owned = ()
                self._drop_queue(pending, err)
                raise err
            try:
                # numba's first compile of the simulator shows a ticker (timing/progress.py)
                with compile_progress(pending.settings.progress):
                    pending.handle.profile = run_launch(self, pending)
            except Exception as exc:
                pending.handle.error = exc
                self._drop_queue(pending, exc)
                raise
            finally:
                pending.owned = ()     # it has run (or failed): its temporaries are freed now
            collected(pending.handle.profile)       # pypto-sim profile: collect every launch

    def _drop_queue(self, failed, exc):
        """After ``failed`` raised ``exc``: empty the queue without running it. Each dropped
        launch's handle raises a LaunchError saying why; a note on exc names them (none: no note)."""
        dropped, self.queue[:] = list(self.queue), []
        for p in dropped:
            p.handle.error = LaunchError(
                f"kernel '{p.kernel.name}' was not run: kernel '{failed.kernel.name}', queued before it, "
                f"failed ({type(exc).__name__}), and a failed launch ends the stream's queue",
                kernel=p.kernel.name, hint="fix the failing kernel, or call pto.sync() after it to "
                                           "catch its error before queuing more")
            p.owned = ()
        self._release_freed([a for p in dropped for a in p.args if getattr(a, "freed", False)])
        if dropped:
            names = ", ".join(f"'{p.kernel.name}'" + (f" (launched at {p.site})" if p.site else "")
                              for p in dropped)
            exc.add_note(f"{len(dropped)} launch(es) queued after kernel '{failed.kernel.name}' were not "
                         f"run (a failed launch ends the queue): {names}")

    def _release_freed(self, allocs):
        """Release the allocations the program freed while a queued launch held them, once no
        queued launch uses them any more."""
        for a in map(root_of, allocs):
            if not self.users_of(a) and a.id in self.hbm.live:
                a.freed = False     # marked by release_allocation, still held: release it
                self.hbm.release(a)

    def pending_for(self, tensor) -> bool:
        return bool(self.users_of(tensor.alloc))


def _call_site():
    """file:line of the user's call that is launching (None when there is none)."""
    frame = user_frame()
    try:
        return None if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"
    finally:
        del frame


def _max_cycles(value, default=DEFAULT_MAX_CYCLES):
    """The cycle limit of a launch: max_cycles=, else the settings' (PYPTO_MAX_CYCLES, 20
    million when unset)."""
    if value is None:
        value = default
    return whole_number(value, "max_cycles", least=1, error=LaunchError,
                        hint="give a positive int number of cycles, for example max_cycles=10**8")


def _max_work(value, default=DEFAULT_MAX_WORK):
    """The work limit of a launch: max_work=, else the settings' (PYPTO_MAX_WORK, 10**9 when
    unset)."""
    if value is None:
        value = default
    try:
        value = int(float(value))
    except (TypeError, ValueError):
        raise LaunchError(f"max_work={value!r} must be a positive number of warp-instructions") from None
    if value <= 0:
        raise LaunchError(f"max_work={value} must be a positive number of warp-instructions")
    return value


def _check_work(program, grid, block, limit, kernel_name):
    """Refuse a launch whose estimated warp-instructions exceed limit, before it runs: every
    warp of the grid runs the kernel's instructions once (loops make it more, branches less)."""
    blocks = grid[0] * grid[1] * grid[2]
    warps = blocks * -(-(block[0] * block[1] * block[2]) // 32)
    estimate = warps * len(program.instrs)
    if estimate > limit:
        raise LaunchError(
            f"grid={tuple(grid)} block={tuple(block)} is {blocks:,} blocks of "
            f"{warps // max(blocks, 1)} warps: at {len(program.instrs)} instructions per warp "
            f"that is about {estimate:.2e} warp-instructions, more than the work limit of "
            f"{limit:.2e} (about 1.5M warp-instructions a second in timing mode, so roughly "
            f"{estimate / 1.5e6 / 3600:,.1f} hours)", kernel=kernel_name, file=program.file,
            line=program.first_line,
            hint="check the grid; to run it anyway pass max_work=... to launch/profile or set "
                 "PYPTO_MAX_WORK")


def _check_tensor(t, call):
    if not getattr(t, "is_device_tensor", False):
        raise ArgumentError(f"{call}: expected a device tensor from pto.alloc_tensor, got {type(t).__name__}")
    if t.freed:
        raise UseAfterFreeError(f"{call}: tensor '{t.name}' was already freed", tensor=t.name)


def _uses(args, alloc) -> bool:
    """Whether a launch's arguments reach alloc's memory (through it, its root or any view)."""
    root = root_of(alloc)
    return any(root_of(a) is root for a in args)


def _check_copy(call, tensor, host):
    """Same element count, and the host dtype the tensor's (float32, or ml_dtypes' bfloat16,
    for a bfloat16 tensor; for a minifloat tensor float32 values or ml_dtypes' type of it,
    values_per_element an element, or uint8 bytes, one an element)."""
    if getattr(tensor, "strided", False):
        raise LaunchError(f"{call}: '{tensor.name}' is a strided 2-D view, whose elements are not "
                          "contiguous", hint="copy the whole tensor, or read the view with .numpy()")
    count = tensor.size
    if tensor.dtype in dtypes.MINIFLOATS:
        named = dtypes.ALIASES.get(host.dtype.name, dtypes.BY_NAME.get(host.dtype.name))
        host_ok = host.dtype in (np.float32, np.uint8) or named == tensor.dtype
        if host.dtype != np.uint8:
            count *= tensor.dtype.values_per_element
    elif tensor.dtype == dtypes.bfloat16:
        host_ok = host.dtype == np.float32 or host.dtype.name == "bfloat16"
    else:
        host_ok = host.dtype == tensor.dtype.numpy
    if host.size != count:
        raise LaunchError(f"{call}: the device tensor '{tensor.name}' is {tensor.nbytes} bytes "
                          f"({tensor.size} x {tensor.dtype}) but the host array is "
                          f"{host.size * host.dtype.itemsize} bytes ({host.size} x {host.dtype})",
                          hint=f"a {tensor.dtype} tensor of n bytes takes n * "
                               f"{tensor.dtype.values_per_element} float32 values or n uint8 bytes"
                          if tensor.dtype in dtypes.MINIFLOATS else
                          "allocate the tensor with nbytes = array.nbytes and the array's dtype")
    _check_shape(call, tensor, host, count // tensor.size)
    if not host_ok:
        want = ("float32 (or ml_dtypes.bfloat16)" if tensor.dtype == dtypes.bfloat16 else
                "float32 values (or uint8 bytes)" if tensor.dtype in dtypes.MINIFLOATS else f"{tensor.dtype}")
        raise LaunchError(f"{call}: the device tensor '{tensor.name}' holds {tensor.dtype} but the "
                          f"host array is {host.dtype}",
                          hint=f"convert the host array with .astype(...) to {want}")


def _check_shape(call, tensor, host, per):
    """A 2-D tensor (pto.to_device of a 2-D array, a 2-D view) copies to and from an array of its
    shape, as numba's copy_to_device / copy_to_host do (axes of length 1 aside); ``per`` host
    values an element (a minifloat tensor's float32 values). A flat tensor (alloc_tensor)
    takes any array of its size."""
    if len(tensor.shape) != 2:
        return
    want = tensor.shape[:-1] + (tensor.shape[-1] * per,)
    if tuple(n for n in host.shape if n != 1) != tuple(n for n in want if n != 1):
        values = f" ({per} host values an element: {want})" if per > 1 else ""
        raise LaunchError(f"{call}: the device tensor '{tensor.name}' has shape {tensor.shape}{values} but "
                          f"the host array has shape {host.shape} (as many elements, in other rows)",
                          hint=f"pass an array of shape {want} (host.reshape{want} if its elements are "
                               "already in the tensor's row-major order), or use a flat tensor "
                               "(pto.alloc_tensor), which takes any array of its size")


_DEVICE: contextvars.ContextVar = contextvars.ContextVar("pypto_sim_device", default=None)


def current_device() -> Device:
    """The device of this context (created on first use)."""
    dev = _DEVICE.get()
    if dev is None:
        dev = Device()
        _DEVICE.set(dev)
    return dev


def reset_device(machine=None) -> Device:
    """Start a fresh device (empty HBM and stream) in this context; return it."""
    dev = Device(machine)
    _DEVICE.set(dev)
    return dev
