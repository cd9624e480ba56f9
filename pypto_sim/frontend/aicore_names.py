"""The names kernel code uses for the real AI core (docs/aicore.md): memory spaces, pipes,
layouts, and the intrinsics that are Python constructs rather than instructions
(``with pto.cube():``, ``with pto.vector():``, ``pto.get_subblock_id()``).

Spaces, pipes and layouts are plain strings, so they print as what they name; the compiler
reads them as names (``Text``) and checks them where they are used.
"""
from __future__ import annotations

from ..errors import CompileError

# memory spaces of typed tiles (PTO-ISA TileType)
Vec, Mat, Left, Right, Acc, Bias, Scaling = "Vec", "Mat", "Left", "Right", "Acc", "Bias", "Scaling"
# base layouts (PTO-ISA BLayout)
RowMajor, ColMajor = "row", "col"
# GM layouts of a tload / tstore (PTO-ISA GlobalTensor Layout; isa/gm_layouts.py)
ND, DN, NZ, FRACTAL_Z = "ND", "DN", "NZ", "FRACTAL_Z"
# pipes (PTO-ISA include/pto/common/cpu_stub.hpp); PIPE_ALL only for pipe_barrier
PIPE_S, PIPE_V, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_M, PIPE_FIX, PIPE_ALL = (
    "PIPE_S", "PIPE_V", "PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3", "PIPE_M", "PIPE_FIX", "PIPE_ALL")


class Intrinsic:
    """A kernel construct the compiler lowers itself (no instruction of its own)."""

    is_pto_intrinsic = True

    def __init__(self, name: str, usage: str, doc: str):
        self.name = name
        self.usage = usage
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = "pypto_sim"
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        raise CompileError(f"pto.{self.name}() was used outside a @pto.kernel",
                           hint=f"inside a kernel write `{self.usage}`")

    def __repr__(self):
        return f"<pto intrinsic {self.name}>"


cube = Intrinsic("cube", "with pto.cube():",
                 "``with pto.cube():`` - the statements run on the AI core's cube core (AIC: L1, "
                 "L0A/L0B/L0C; pipes MTE2, MTE1, M, FIX).")
vector = Intrinsic("vector", "with pto.vector():",
                   "``with pto.vector():`` - the statements run on both vector cores (AIV0, AIV1: "
                   "UB; pipes MTE2, V, MTE3); pto.get_subblock_id() tells them apart.")
get_subblock_id = Intrinsic("get_subblock_id", "pto.get_subblock_id()",
                            "The vector core running this code: 0 (AIV0) or 1 (AIV1); only in "
                            "vector code.")
setfmatrix = Intrinsic("setfmatrix", "pto.setfmatrix(fmap_h, fmap_w, pad_top=0, pad_bottom=0, pad_left=0, "
                       "pad_right=0)",
                       "SETFMATRIX: set the cube core's FMATRIX register (the feature map's size and "
                       "pads) that a pto.timg2col without fmap_h / fmap_w reads; cube code only.")
tile_group = Intrinsic("tile_group",
                       "g = pto.tile_group(depth, rows, cols, dtype, loc=..., producer=..., consumer=...)",
                       "Multi-buffered typed tiles whose set_flag/wait_flag the compiler places: "
                       "g.next(), g.ready(t), g.take(t), g.release(t) (docs/aicore.md, 'Tile groups').")

parallel_group = Intrinsic("parallel_group", "g = pto.parallel_group((t0, t1, ...), root)",
                           "pto-isa's comm::ParallelGroup: one GM pointer per rank (a tuple or list of "
                           "pointers, or [t + r * W for r in range(n)]) and the calling rank's index, the root; "
                           "the group of pto.tbroadcast, pto.comm_tgather, pto.comm_tscatter and pto.treduce "
                           "(docs/aicore.md, 'TPUT, TGET and the collectives').")

__all__ = ["Vec", "Mat", "Left", "Right", "Acc", "Bias", "Scaling", "RowMajor", "ColMajor", "ND", "DN", "NZ",
           "FRACTAL_Z", "PIPE_S", "PIPE_V", "PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3", "PIPE_M", "PIPE_FIX", "PIPE_ALL",
           "cube", "vector", "get_subblock_id", "setfmatrix", "tile_group", "parallel_group"]
