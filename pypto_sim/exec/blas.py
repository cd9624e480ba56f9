"""numpy's BLAS inside a simulation: one thread, or not at all.

The AI core's large matmuls take their float64 sums from numpy's BLAS (exec/aicore_tiles.py),
which is much faster than any loop of ours; their values are exact-then-rounded, so BLAS's
order of summation changes no bit (exec/compiled/matmul.py, matmul_finish). BLAS may only run
on one thread: a simulation is one thread of work, and a multi-threaded BLAS on a busy
machine was 4.4x slower in wall time and 6x in CPU (issue 21). threadpoolctl limits it; where
threadpoolctl is not installed (it is the ``speed`` extra), the executor's own kernel computes
the same values without BLAS.
"""
from __future__ import annotations

from contextlib import contextmanager
from ..isa import load_isa


@contextmanager
def single_threaded_blas(wanted=True):
    """Within the block, numpy's BLAS runs on one thread; yields whether BLAS may be used
    (False when threadpoolctl is missing or ``wanted`` is false)."""
    if not wanted:
        yield False
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield False
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield True


def uses_matmul(program) -> bool:
    """True when the program has a matmul (the only tile instruction that calls BLAS)."""
    isa = load_isa()
    return any(isa.by_name[ins.op].family == "tile_mma" for ins in program.instrs
               if ins.op in isa.by_name)
