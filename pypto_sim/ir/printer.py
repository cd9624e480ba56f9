"""The PTO assembly printer: one instruction per line with the Python source it came from."""
from __future__ import annotations

from ..isa import load_isa
from .program import UNIT_NAMES, Program, Reg
from ..isa import PIPES, PTO_PIPE_NAMES

_TARGET_LABELS = {"IF": ("else", "end"), "ELSE": ("end",), "LOOP": ("cont", "end"), "ENDLOOP": ("head",)}


def format_instr(prog: Program, pc: int) -> str:
    """One instruction as text: mnemonic, dst, operands, attributes."""
    ins = prog.instrs[pc]
    isa = load_isa()
    spec = isa[ins.op]
    parts = []
    if ins.dst is not None:
        parts.append(str(ins.dst))
    for operand, src in zip(spec.value_operands, ins.srcs):
        text = str(src)
        if spec.is_tile and operand.kind == "pointer":
            tensors = [a.name for a in prog.args if a.kind == "tensor" and a.slot == ins.aux[0]]
            text = f"{tensors[0] if tensors else 'arg' + str(ins.aux[0])}[{src}]"
        elif operand.kind == "tile":
            text = _tile_name(prog, src)
        elif operand.kind == "pointer":
            if ins.op in ("LOAD_L1", "STORE_L1"):
                text = f"{ins.comment or 'l1'}[{src}]"
            else:
                text = f"{ins.comment or 'arg' + str(ins.aux[0])}[{src}]"
        parts.append(text)
    labels = _TARGET_LABELS.get(ins.op)
    if labels:
        parts += [f"{label}=@{target}" for label, target in zip(labels, ins.aux)]
    elif spec.family == "id" and any(o.kind == "dim" for o in spec.operands):
        parts.append("xyz"[ins.aux[0]])
    elif spec.family == "alloc":            # alloc_local / alloc_tile and the tile views
        parts.append(ins.comment)
    elif ins.op in ("SET_FLAG", "WAIT_FLAG"):
        names = [PIPES[ins.aux[0]], PIPES[ins.aux[1]]]
        if getattr(prog, "aicore", False):
            names = [PTO_PIPE_NAMES[n] for n in names]
        parts.append(f"{names[0]} -> {names[1]}, event {ins.aux[2]}")
    elif ins.op == "PIPE_BARRIER":
        parts.append("PIPE_ALL" if ins.aux[0] < 0 else PTO_PIPE_NAMES[PIPES[ins.aux[0]]])
    elif ins.op in ("CROSS_CORE_SET_FLAG", "CROSS_CORE_WAIT_FLAG"):
        parts.append(f"event {ins.aux[0]}")
    elif spec.is_tile and ins.aux[1]:
        parts.append(f"stage {ins.aux[1]}" + (f" after {_stage_bits(ins.aux[2])}" if ins.aux[2] else ""))
    name = ins.op
    if ins.dtype is not None and spec.family in ("alu", "load", "store", "fma_store"):
        name = f"{ins.op}.{ins.dtype}"
    return f"{name:16s} {', '.join(parts)}"


def _tile_name(prog: Program, src) -> str:
    """A tile operand: the buffer's name for a fixed L1 word, else the register holding it."""
    if isinstance(src, Reg):
        return f"l1[{src}]"
    word = int(src.value)
    if getattr(src, "tile", -1) >= 0:        # a typed tile names itself (views share words)
        return prog.buffers[src.tile].name
    for b in prog.buffers:
        if b.offset <= word < b.offset + b.words:
            return b.name if word == b.offset else f"{b.name}+{word - b.offset}"
    return f"l1[{word}]"


def _stage_bits(mask: int) -> str:
    return ",".join(str(i + 1) for i in range(mask.bit_length()) if mask >> i & 1)


def format_program(prog: Program, grid=None, block=None) -> str:
    """The whole listing, with a header naming arguments, registers and L1 use."""
    args = ", ".join(f"{a.name}: {a.dtype}{'*' if a.kind == 'tensor' else ''}"
                     + (f" ({a.reg})" if a.reg is not None else "")
                     + (f" = {a.value}" if a.kind == "const" else "")
                     + (f" (2-D, rows {a.value} apart)" if a.kind == "tensor" and a.value else "")
                     for a in prog.args)
    head = [f"; kernel {prog.kernel}({args})",
            f"; source {prog.file}:{prog.first_line}"]
    consts = [a for a in prog.args if a.kind == "const"]
    if consts:
        head.append("; specialised on " + ", ".join(f"{a.name}={a.value}" for a in consts)
                    + " (they size buffers: one compiled program per distinct value)")
    if getattr(prog, "aicore", False):
        block = None             # a block of an AI-core kernel is one AI core: no block shape
    if grid is not None or block is not None:
        head.append(f"; grid={tuple(grid)}" + (f" block={tuple(block)}" if block is not None else ""))
    head.append(f"; registers: {prog.n_lane_slots} lane slots (v, one L1 word per lane), "
                f"{prog.n_scalar_regs} scalar (s); alloc_local: {prog.local_bytes} bytes")
    lines = list(head)
    last_line = None
    units = {}           # an AI-core kernel: each unit's program starts with its units' names
    for unit, pc in enumerate(getattr(prog, "unit_entry", ())):
        if pc >= 0:
            units.setdefault(pc, []).append(UNIT_NAMES[unit])
    for pc, ins in enumerate(prog.instrs):
        text = format_instr(prog, pc)
        src = ""
        if pc in units:
            lines.append(f"; {' and '.join(units[pc])}:")
            last_line = None
        if ins.line and ins.line != last_line:
            src = f"; {ins.line}: {prog.source_lines.get(ins.line, '').strip()}"
            last_line = ins.line
        lines.append(f"{pc:04d}  {text:48s} {src}".rstrip())
    return "\n".join(lines)
