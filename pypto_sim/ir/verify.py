"""The IR verifier: every instruction checked against its ISA record."""
from __future__ import annotations

from ..errors import CompileError
from ..isa import load_isa
from .program import Program, Reg

_TARGET_OPS = {"IF": ("ELSE", "ENDIF"), "ELSE": ("ENDIF",), "LOOP": ("LOOP_CONT", None),
               "ENDLOOP": (None,)}


def verify(prog: Program) -> None:
    """Raise CompileError (naming the instruction and line) if prog breaks an ISA rule."""
    isa = load_isa()
    n = len(prog.instrs)
    for pc, ins in enumerate(prog.instrs):
        def bad(msg):
            raise CompileError(f"internal compiler error at instruction {pc} ({ins.op}): {msg}",
                               kernel=prog.kernel, file=prog.file, line=ins.line,
                               hint="please report this kernel; it is a pypto_sim bug")
        spec = isa.by_name.get(ins.op)
        if spec is None:
            bad("unknown instruction")
        n_vals = len(spec.value_operands)
        if len(ins.srcs) != n_vals:
            bad(f"expects {n_vals} value operands, got {len(ins.srcs)}")
        if (spec.result != "none") != (ins.dst is not None) and spec.family != "fma_store":
            bad(f"result is '{spec.result}' but dst is {ins.dst}")
        if spec.dtypes and spec.result != "none" and ins.dtype is not None and spec.family == "alu":
            if ins.dtype.name not in spec.dtypes:
                bad(f"dtype {ins.dtype} not in {spec.dtypes}")
        for reg in [s for s in ins.srcs if isinstance(s, Reg)] + ([ins.dst] if ins.dst else []):
            limit = prog.n_scalar_regs if reg.uniform else prog.n_lane_slots
            if not 0 <= reg.index < limit:
                bad(f"register {reg} out of range")
        if spec.family == "alu" and ins.aux and ins.aux[0] == 1 and not spec.int_expr:
            bad("integer semantics requested but the ISA has no 'int' expression")
        if spec.family == "alu" and (not ins.aux or ins.aux[0] == 0) and not spec.float_expr:
            bad("float semantics requested but the ISA has no 'float' expression")
        for target, expected in zip(ins.aux, _TARGET_OPS.get(ins.op, ())):
            if not 0 <= target <= n:
                bad(f"jump target {target} out of range")
            if expected and prog.instrs[target].op != expected and not (ins.op == "IF" and prog.instrs[target].op == "ENDIF"):
                bad(f"target {target} is {prog.instrs[target].op}, expected {expected}")
    if not prog.instrs or prog.instrs[-1].op != "EXIT":
        raise CompileError("internal compiler error: program does not end with EXIT", kernel=prog.kernel)
