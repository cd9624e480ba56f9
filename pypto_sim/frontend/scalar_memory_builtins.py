"""The AI core's scalar unit on memory (isa/56_scalar_memory.toml): in an AI-core kernel a
subscript of a Vec tile is Tile::GetValue / SetValue (SLD_UB, SST_UB) and a subscript of a GM
tensor is a scalar load or store through the unit's DataCache (SLD_GM, SST_GM); pto.dcci is
DataCacheCleanAndInvalid. memory_builtins.py's load and store lowerings hand AI-core kernels'
accesses here. Registered in registry.py's LOWERINGS; codegen.py imports it.
"""
from __future__ import annotations

from .. import dtypes
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import NONE, Const, Val

# pto_tile.hpp's static_assert in Tile::GetValue / SetValue, and Ascend C's "Scalar读写数据"
VEC_ONLY = ("the scalar unit reads and writes only UB and GM (Tile::GetValue / SetValue: \"Location of "
            "tile must be Location::Vec.\")")


def _tile_extent(comp, ptr, node, what) -> tuple:
    """(the elements a scalar access of tile ptr may reach from its first in its storage order:
    rows x cols, or a RowMajor window's last word + 1; a ColMajor tile's rows, 0 for RowMajor).
    Only Vec tiles of their own dtype. The simulator holds every tile's values row-major
    (docs/aicore.md), so a ColMajor tile's storage offset c x rows + r is translated to its word
    r x cols + c when the access runs (exec/scalar_memory.py)."""
    info = ptr.tile
    if info.loc != "Vec":
        comp.error(node, f"{what}: '{ptr.name}' is a {info.loc} tile, but {VEC_ONLY}",
                   "tstore it to GM or tmov it to a Vec tile (on an AIV) and read that")
    if info.storage is not None:
        comp.error(node, f"{what}: '{ptr.name}' is a treshape view of {info.storage} words as {ptr.dtype}; "
                         "a scalar access of such a view is not built",
                   "read the tile it views, in its own dtype")
    if info.layout == "nz":
        comp.error(node, f"{what}: '{ptr.name}' is an NZ Vec tile, whose words are held in row order, not its "
                         "fractal storage order; a scalar access of it is not built",
                   "read the element from a RowMajor or ColMajor tile")
    if info.layout == "col":
        root = comp.buffers[ptr.slot]
        while root.alias_of >= 0:
            root = comp.buffers[root.alias_of]
        if (root.rows, root.cols) != (info.rows, info.cols):
            comp.error(node, f"{what}: '{ptr.name}' is a view of another shape of the ColMajor tile '{root.name}'; "
                             "a scalar access of it is not built (its storage offsets are the tile's)",
                       f"index '{root.name}' itself")
        return info.rows * info.cols, info.rows
    return (info.rows * info.cols if info.contiguous else (info.rows - 1) * info.row_pitch + info.cols), 0


def scalar_load(comp, ptr, node):
    """x = t[i] or x = g[i] in an AI-core kernel: SLD_UB or SLD_GM into a uniform register."""
    offset = comp.operand(ptr.offset, dtypes.int32, node)
    dst = comp.new_reg(comp.compute_dtype(ptr, node, "a scalar load"), True)
    if ptr.tile is not None:
        words, col_rows = _tile_extent(comp, ptr, node, "a scalar load")
        comp.emit("SLD_UB", dst, (offset,), ptr.dtype, node, aux=(ptr.base, words, col_rows))
    elif ptr.space == "hbm":
        comp.emit("SLD_GM", dst, (offset,), ptr.dtype, node, aux=(ptr.slot,))
    else:
        comp.error(node, f"a scalar load of '{ptr.name}': {VEC_ONLY}")
    comp.instrs[-1].comment = ptr.name
    return Val(dst)


def scalar_store(comp, ptr, value, node):
    """t[i] = x or g[i] = x in an AI-core kernel: SST_UB or SST_GM of x in the memory's dtype."""
    comp.require_value(value, node)
    offset = comp.operand(ptr.offset, dtypes.int32, node)
    src = comp.operand(value, comp.compute_dtype(ptr, node, "a scalar store"), node)
    if ptr.tile is not None:
        words, col_rows = _tile_extent(comp, ptr, node, "a scalar store")
        comp.emit("SST_UB", None, (offset, src), ptr.dtype, node, aux=(ptr.base, words, col_rows))
    elif ptr.space == "hbm":
        comp.emit("SST_GM", None, (offset, src), ptr.dtype, node, aux=(ptr.slot,))
    else:
        comp.error(node, f"a scalar store to '{ptr.name}': {VEC_ONLY}")
    comp.instrs[-1].comment = ptr.name


@LOWERINGS.lowering("dcci", checks=(aicore_only,))
def lower_dcci(comp, node, args):
    """pto.dcci(ptr, entire=False): DataCacheCleanAndInvalid of the line holding ptr, or with
    entire=True of the unit's whole DataCache."""
    ptr = comp.require_ptr(args["ptr"], node, "pto.dcci(ptr): ptr")
    if ptr.space != "hbm" or ptr.tile is not None:
        comp.error(node, f"pto.dcci: '{ptr.name}' is not in GM; the DataCache holds only the scalar unit's GM "
                         "lines (the CACHELINE_UB destination is reserved, Ascend C's DataCacheCleanAndInvalid)",
                   "pass a GM tensor (plus an element offset)")
    entire = args["entire"]
    if entire is NONE:
        entire = Const(0, dtypes.int32)
    if not isinstance(entire, Const):
        comp.error(node, "pto.dcci: entire= must be True or False, known when the kernel compiles "
                         "(CacheLine::SINGLE_CACHE_LINE or ENTIRE_DATA_CACHE, a template argument)")
    offset = comp.operand(ptr.offset, dtypes.int32, node)
    comp.emit("DCCI", None, (offset,), None, node, aux=(ptr.slot, int(bool(entire.value)), ptr.dtype.itemsize))
    comp.instrs[-1].comment = ptr.name
