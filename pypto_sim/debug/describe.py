"""What one executed warp-instruction did, as the debugger prints it.

One line per active lane range, in the article's shape::

    [Lane 0] LOAD d_a[0] -> L1[2] (4 bytes)
    [Lane 0-31] LOAD d_a[0..31] -> L1[2] (128 bytes)
    [Lane 0-31] FMA_STORE d_o[0..31] <- L1[2] * 1.0 + L1[3] (128 bytes)
    [Lane 0-31] ADD L1[4] <- L1[2], L1[3]
    [Lane 0-31] ADD s1 <- s0, 1

``L1[k]`` is a lane's k-th L1 slot (per-lane register ``vk`` of the listing); ``sk`` is a
uniform (scalar-unit) register. Tensors are named by the variable they were allocated to at the
call site (``d_a = pto.alloc_tensor(...)``), else by the kernel parameter. Element indices are
read from the warp's registers right after the instruction issued, so they are what the lanes
actually accessed.
"""
from __future__ import annotations

from ..ir.printer import format_instr
from ..ir.program import Imm, Reg
from ..profiler.intervals import lane_runs

MAX_LISTED = 4          # irregular index lists longer than this are abbreviated




def reg_text(reg: Reg) -> str:
    """A register as the debugger names it: L1[k] for a lane slot, sk for a scalar register."""
    return f"s{reg.index}" if reg.uniform else f"L1[{reg.index}]"


def operand_text(src) -> str:
    """A source operand: a register name or the immediate's value."""
    return reg_text(src) if isinstance(src, Reg) else str(src)


def index_text(values: list) -> str:
    """Element indices as compact text: '5', '0..31', '0..62 step 2', '3, 9, 1, 4, ...'."""
    if not values:
        return ""
    if len(set(values)) == 1:
        return str(values[0])
    step = values[1] - values[0]
    if step != 0 and all(b - a == step for a, b in zip(values, values[1:])):
        text = f"{values[0]}..{values[-1]}"
        return text if step == 1 else f"{text} step {step}"
    shown = ", ".join(str(v) for v in values[:MAX_LISTED])
    return shown + (", ..." if len(values) > MAX_LISTED else "")


class Describer:
    """Formats the executed warp-instructions of one LaunchSimulation."""

    def __init__(self, sim):
        self.sim = sim
        self.prog = sim.prog
        self.names = list(sim.tensor_names)

    def _offsets(self, ins, regs, first: int, last: int) -> list:
        """Per-lane element offsets (source 0) of lanes first..last of a memory instruction."""
        src = ins.srcs[0]
        if isinstance(src, Imm):
            return [int(src.value)] * (last - first + 1)
        row = src.index + (self.prog.n_lane_slots if src.uniform else 0)
        return [int(regs[row, lane]) for lane in range(first, last + 1)]

    def _target(self, ins) -> str:
        """The name of the memory a lane-memory instruction addresses."""
        if ins.op in ("LOAD_L1", "STORE_L1"):
            return ins.comment or "l1"
        slot = ins.aux[0]
        if 0 <= slot < len(self.names) and self.names[slot]:
            return self.names[slot]
        return ins.comment or f"arg{slot}"

    def body(self, pc: int, regs, first: int, last: int) -> str:
        """The text after ``[Lane ...]`` for instruction pc over warp lanes first..last."""
        ins = self.prog.instrs[pc]
        op = ins.op
        if op in ("LOAD", "LOAD_L1", "STORE", "STORE_L1", "FMA_STORE"):
            offsets = self._offsets(ins, regs, first, last)
            item = ins.dtype.itemsize if ins.dtype is not None else 4
            nbytes = len(set(offsets)) * item
            where = f"{self._target(ins)}[{index_text(offsets)}]"
            if op.startswith("LOAD"):
                return f"{op} {where} -> {reg_text(ins.dst)} ({nbytes} bytes)"
            if op == "FMA_STORE":
                x, y, z = (operand_text(s) for s in ins.srcs[1:4])
                return f"{op} {where} <- {x} * {y} + {z} ({nbytes} bytes)"
            return f"{op} {where} <- {operand_text(ins.srcs[1])} ({nbytes} bytes)"
        spec = self.sim.pc_spec[pc]
        if spec.family == "id":
            values = [int(regs[self._flat(ins.dst), lane]) for lane in range(first, last + 1)]
            dim = "xyz"[ins.aux[0]] + " " if any(o.kind == "dim" for o in spec.operands) else ""
            return f"{op} {reg_text(ins.dst)} <- {dim}({index_text(values)})"
        if spec.family == "alu":
            srcs = ", ".join(operand_text(s) for s in ins.srcs)
            return f"{op} {reg_text(ins.dst)} <- {srcs}"
        if spec.family == "alloc":
            return f"{op} {ins.comment}".rstrip()
        if spec.family in ("control", "sync"):
            return " ".join([op] + [operand_text(s) for s in ins.srcs])
        return self.listing_text(pc)       # tile instructions and anything else

    def listing_text(self, pc: int) -> str:
        """Instruction pc as the listing shows it (``kernel.asm``), its tensor named by the
        launch's argument (``TLOAD s, d_x[s9], 64, 128, 128``)."""
        ins = self.prog.instrs[pc]
        text = format_instr(self.prog, pc).split(None, 1)
        rest = text[1] if len(text) > 1 else ""
        if self.sim.pc_spec[pc].is_tile and ins.aux:
            for arg in self.prog.args:
                if arg.kind == "tensor" and arg.slot == ins.aux[0]:
                    rest = rest.replace(f"{arg.name}[", f"{self._target(ins)}[", 1)
        return f"{ins.op} {rest}".rstrip()

    def _flat(self, reg: Reg) -> int:
        return reg.index + (self.prog.n_lane_slots if reg.uniform else 0)

    def lines(self, row, regs) -> list:
        """One line per active lane range of a record row (fields of timing.records.FIELDS)."""
        block, warp, _core, pc, issue = (int(v) for v in row[:5])
        mask = int(row[9])
        line = self.prog.instrs[pc].line
        where = f"; cycle {issue}, block {block}, warp {warp}, line {line}"
        out = []
        for first, last in lane_runs(mask) or [(0, -1)]:
            a, b = warp * 32 + first, warp * 32 + last
            lanes = "-" if last < first else (str(a) if a == b else f"{a}-{b}")
            text = f"[Lane {lanes}] {self.body(pc, regs, first, max(first, last))}"
            out.append(f"{text:<52s} {where}")
        return out
