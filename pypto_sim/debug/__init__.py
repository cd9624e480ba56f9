"""pypto_sim.debug: the instruction-level debugger (docs/debugging.md).

    import pypto_sim.debug as dbg
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, n))
    ctx.step()                      # [Lane 0-31] GLOBAL_ID L1[0] <- x (0..31)   ; cycle 0, ...
    ctx.inspect_l1(0, 16)           # lane 0's first 16 L1 words
    ctx.get_instruction_timeline()  # entries with .cycle .lane .inst .warp .pipe .stall ...

A kernel of typed tiles gets an AICoreDebugContext: stops at each unit's instructions when they
execute (``step(unit="AIV0")``, ``break_at(pipe="PIPE_V")``), ``inspect(tile)`` as it is then,
``pipe_queues()``, ``flags()``, ``where()``.
"""
from .aicore_session import AICoreBreakpoint, AICoreDebugContext
from .session import Breakpoint, DebugContext, debug_kernel

__all__ = ["debug_kernel", "DebugContext", "Breakpoint", "AICoreDebugContext", "AICoreBreakpoint"]
