"""pto.texpands: the scalar broadcast onto a Vec tile (TEXPANDS, vector_dup on V; an NZ Vec tile
whole, frontend/nz_windows.py) or onto a Mat (L1) tile (TEXPANDS_MAT, isa/40_fused_scalar.toml:
create_cbuf_matrix on MTE2).

A2/A3's TEXPANDS_IMPL (include/pto/npu/a2a3/TExpandS.hpp) branches on the tile's location. A Mat
tile is filled by one create_cbuf_matrix of 32-byte blocks from its first word: a plain Tile's
``Rows * Cols * sizeof / 32`` blocks (TExpandsMatTile: the whole tile, whatever its valid region)
or a ConvTile's ``N * C1 * H * W * C0 * sizeof / 32`` (TExpandsMat5HD), given here as ``n``, the
ConvTile's elements, over a Mat tile that holds its words. Both PTO_ASSERT the block count in
[1, 32767] (EXPANDS_MAX_SUPPORT_REPEAT_TIMES); the shapes are compile-time, so a count outside
it is a compile error at the call.
"""
from __future__ import annotations

from .. import dtypes
from .nz_windows import is_nz
from .registry import LOWERINGS
from .values import NONE, Const, Ptr

BLOCK_BYTES = 32                 # create_cbuf_matrix's block (TExpandS.hpp: "block uint is 32B")
MAX_REPEAT = 32767               # TExpandsInternal::EXPANDS_MAX_SUPPORT_REPEAT_TIMES ([14:0])
HEADER = "include/pto/npu/a2a3/TExpandS.hpp"


def _is_mat(t) -> bool:
    return isinstance(t, Ptr) and t.tile is not None and t.tile.loc == "Mat"


@LOWERINGS.lowering("texpands")
def lower_texpands(comp, node, args):
    """TEXPANDS on a Vec tile (or the article's tiles); TEXPANDS_MAT on a Mat tile, n its words
    filled: the whole tile, or the ConvTile's elements n rounded down to whole 32-byte blocks."""
    dst = args["dst"]
    if is_nz(dst):                   # an NZ Vec tile: all of it (a constant is one in any order)
        whole = dst.tile.rows * dst.tile.cols
        n = args.get("n", NONE)
        if not (isinstance(n, Const) and int(n.value) == whole or n is NONE and dst.tile.full):
            comp.error(node, f"pto.texpands: '{dst.name}' is an NZ Vec tile; it is filled whole (n={whole}), "
                             "its valid region's words not being its first rows")
        return comp.lower_tile_op(comp.isa["TEXPANDS"], node, dict(args, n=Const(whole, dtypes.int32)))
    if not _is_mat(dst):
        return comp.lower_tile_op(comp.isa["TEXPANDS"], node, args)
    call = "pto.texpands"
    t = dst.tile
    where = f"{call}: '{dst.name}' (Mat, {t.rows} x {t.cols} {dst.dtype})"
    if not t.contiguous:
        comp.error(node, f"{where} is a window whose rows are {t.row_pitch} elements apart; "
                         f"create_cbuf_matrix fills one run of 32-byte blocks from its first word ({HEADER})",
                   "fill the whole Mat tile, or a view of whole rows")
    size = dst.dtype.itemsize
    n = args.get("n", NONE)
    if n is NONE:
        elements, what = t.rows * t.cols, "dstRow * dstCol * sizeof(U) / 32"
    else:
        if not (isinstance(n, Const) and int(n.value) >= 1):
            comp.error(node, f"{where}: n (a ConvTile's N * C1 * H * W * C0 elements) must be a constant "
                             "of at least 1: TExpandsMat5HD takes it from the ConvTileShape")
        elements, what = int(n.value), "convtile's (shape0 * ... * shape4) * sizeof(U) / 32"
        if elements > t.rows * t.cols:
            comp.error(node, f"{where}: the ConvTile's {elements} elements do not fit the tile's "
                             f"{t.rows * t.cols}")
    repeat = elements * size // BLOCK_BYTES
    if not 1 <= repeat <= MAX_REPEAT:
        comp.error(node, f"{where}: {elements} elements of {size} bytes are {repeat} blocks of 32 bytes; "
                         f"create_cbuf_matrix's repeat is in [1, {MAX_REPEAT}] (PTO_ASSERT \"ERROR: The range "
                         f"of {what} is [1, 32767].\", {HEADER})")
    args = dict(args, n=Const(repeat * BLOCK_BYTES // size, dtypes.int32))
    return comp.lower_tile_op(comp.isa["TEXPANDS_MAT"], node, args)
