"""Typed errors. Every error the simulator raises derives from :class:`PtoError`.

Messages name the kernel, the source location, the lane/warp/block and the address or size
involved, and end with what to do about it. The structured fields are kept as attributes so
tools (the debugger, tests, IDEs) can read them without parsing text.
"""
from __future__ import annotations


class PtoError(Exception):
    """Base class of every pypto_sim error."""

    def __init__(self, message: str, *, kernel: str | None = None, file: str | None = None,
                 line: int | None = None, hint: str | None = None, source: str | None = None,
                 **fields):
        self.kernel = kernel
        self.file = file
        self.line = line
        self.hint = hint
        self.source = source          # the text of the source line, shown under the message
        self.fields = fields
        for key, value in fields.items():
            setattr(self, key, value)
        where = []
        if kernel:
            where.append(f"kernel '{kernel}'")
        if file and line:
            where.append(f"{file}:{line}")
        elif line:
            where.append(f"line {line}")
        text = message
        if where:
            text = f"{', '.join(where)}: {message}"
        if source and source.strip():
            text = f"{text}\n    {source.strip()}"
        if hint:
            text = f"{text}\n  hint: {hint}"
        super().__init__(text)

    def __str__(self):
        # the message itself, also for a subclass that is a KeyError (whose str() is a repr)
        return Exception.__str__(self)


class IsaError(PtoError):
    """The ISA table in isa/*.toml is malformed (names the file and the instruction)."""


class MachineError(PtoError):
    """A latency table (machine description) is malformed or does not cover the ISA."""


class CompileError(PtoError):
    """The kernel's Python source uses a construct pypto_sim cannot compile. The message starts
    with the kernel, file and line, then shows that source line."""


class LaunchError(PtoError):
    """A launch or a memcpy was given arguments that do not fit the kernel or the tensor."""


class OutOfBoundsError(PtoError):
    """A lane or tile accessed memory outside the allocation it points into."""


class KernelValueError(PtoError, ValueError):
    """A kernel's run-time value that Python itself refuses with a ValueError: a range() whose
    step, known only when the kernel runs, is 0. A ValueError too, as Python's range() raises."""


class UseAfterFreeError(PtoError):
    """A tensor was freed while a queued kernel still used it."""


class L1CapacityError(PtoError):
    """A block needs more L1 than the core has."""


class DeadlockError(PtoError):
    """Warps wait for something that can never happen (a block barrier not all warps reach)."""


class RaceError(PtoError):
    """Two unordered accesses to the same word, at least one a write."""


class UninitializedReadError(PtoError):
    """A read of a memory word that was never written."""


class SyncCheckError(PtoError):
    """synccheck: a barrier or an event flag used in a way that breaks on hardware."""


class NPUUnavailableError(PtoError):
    """No hardware backend is installed for profile_on_npu."""


class SimulationLimitError(PtoError):
    """A kernel ran past the configured cycle limit."""


class ProfileError(PtoError):
    """A profile was asked for something it did not keep (the per-instruction timeline of a
    pto.launch run without timeline=True)."""


class CommandLineError(PtoError):
    """A ``pypto-sim`` command was given something it cannot use: a script or file that is not
    there, a flag value out of range, the wrong number of names."""


class SweepError(PtoError):
    """A sweep cannot run as asked: a spec, parameter, override or factory is wrong, or its
    results file is held by another sweep or cannot be written (names which and what to do)."""


class ArgumentError(PtoError, ValueError, IndexError, KeyError, TypeError):
    """A host-side call got a value it cannot use: a bool or a fraction where a count is
    meant, a warp, core, lane or step count outside the launch, a name the kernel does not
    have (a debugger's tile or variable), or an object of the wrong kind (a list where a numpy
    array is copied into, a dtype tensors cannot hold). A ValueError, an IndexError (positions
    out of range), a KeyError (names) and a TypeError too, so code that caught those still
    does."""


class CheckSkippedWarning(UserWarning):
    """PYPTO_CHECK asked for checks that a launch cannot run (a mode="functional" launch has
    bounds checks only): the launch ran without them."""
