"""PTO IR: instructions, registers, programs, the verifier, the printer and the encoder."""
from .program import Reg, Imm, Instr, ArgSpec, LocalBuffer, Program, EncodedProgram

__all__ = ["Reg", "Imm", "Instr", "ArgSpec", "LocalBuffer", "Program", "EncodedProgram"]
