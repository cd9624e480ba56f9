"""What both debuggers (session.py for lane kernels, aicore_session.py for AI-core kernels) do
with breakpoints alike: checking a source line and an instruction name, and keeping the
numbered list (add, delete, clear)."""
from __future__ import annotations

from ..arguments import whole_number
from ..errors import ArgumentError
from ..isa import load_isa


def checked_line(program, line) -> int:
    """``line`` as a source line of the program that has an instruction, else an ArgumentError
    listing the lines that have code."""
    line = whole_number(line, "break_at: line", least=1)
    lines = sorted({ins.line for ins in program.instrs if ins.line})
    if line not in lines:
        raise ArgumentError(f"break_at(line={line}): no instruction comes from line {line} of "
                            f"{program.file}; lines with code: {', '.join(map(str, lines))}")
    return line


def checked_instruction(inst) -> str:
    """``inst`` as an ISA instruction name (upper case), else an ArgumentError."""
    inst = str(inst).upper()
    if inst not in {s.name for s in load_isa().specs}:
        raise ArgumentError(f"break_at(inst={inst!r}): no such instruction "
                            "(pto.instructions() lists them)")
    return inst


class BreakpointList:
    """The numbered breakpoints of a debug session (``self.breakpoints``: id -> breakpoint)."""

    def _init_breakpoints(self):
        self.breakpoints = {}
        self._next_bp = 1

    def _add_breakpoint(self, make) -> int:
        """Add ``make(id)`` under the next id; returns the id."""
        bp = make(self._next_bp)
        self.breakpoints[bp.id] = bp
        self._next_bp += 1
        return bp.id

    def delete_breakpoint(self, bp_id: int):
        """Remove one breakpoint by id (an ArgumentError naming the ids there are when none has it)."""
        if bp_id not in self.breakpoints:
            have = ", ".join(str(i) for i in sorted(self.breakpoints)) or "none"
            raise ArgumentError(f"delete_breakpoint({bp_id!r}): no breakpoint has that id (the session's: {have})",
                                hint="break_at() returns the id to delete")
        del self.breakpoints[bp_id]

    def clear_breakpoints(self):
        """Remove every breakpoint."""
        self.breakpoints.clear()
