"""The executor: numba-compiled modules, ordinary Python that linters and editors read.

scalars -> gm_bytes, lane_ops -> simt -> lane (one warp instruction), tiles / matmul / sort /
conv (the tile instructions' values), functional (the functional runner), engine_parts ->
timing (the lane timing engine), l2, aicore_steps -> aicore_sync -> aicore_engine (the AI core's
event loop) and replay (its values). Their constants come from isa_constants (derived from the
ISA table); the ALU dispatch is the one generated module (alu, from the table's expressions).
numba caches each module under its closure digest (exec/jit_cache.py), installed here before any
of them is compiled. exec/lane.py's ``executor()`` gathers them into one namespace.
"""
from ..jit_cache import install_locator

install_locator()
