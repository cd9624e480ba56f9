"""pto.tprint: pto-isa's TPRINT as A2/A3 builds it (include/pto/npu/a2a3/TPrint.hpp TPRINT_IMPL at
pto-isa 3186c381; isa/60_print.toml): pipe_barrier(PIPE_ALL), then TPRINT (a Vec tile) or
TPRINT_GM (an ND slice of a GM tensor), whose text exec/tile_print.py writes when the unit runs it.

Not built: the Acc and Mat tile forms, which copy the tile to a GM scratch first (TPRINT(src,
tmp): TPrintCopyAcc2GM / TPrintCopyMat2GM), the DN and NZ GM layouts and the 5-D GM shape's
outer dimensions (one call a 2-D slice). Registered in registry.py's LOWERINGS; codegen.py
imports it.
"""
from __future__ import annotations

from .. import dtypes
from ..isa.print_modes import DTYPE_NAMES, FORMATS, LAYOUT_CODES
from .aicore_builtins import emit_pipe_barrier
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import NONE, Const, Ptr, Text

_H = "include/pto/npu/a2a3/TPrint.hpp"
I32 = dtypes.int32


@LOWERINGS.lowering("tprint", checks=(aicore_only,))
def lower_tprint(comp, node, args):
    """TPRINT_IMPL(src) of a Vec tile or a GM pointer."""
    src, call = args["src"], "pto.tprint"
    if not isinstance(src, Ptr):
        comp.error(node, f"{call}: src must be a Vec tile (pto.alloc_tile) or a pointer into a GM tensor")
    fmt = _format(comp, node, args["format"])
    if src.dtype.name not in DTYPE_NAMES:
        comp.error(node, f"{call}: '{src.name}' holds {src.dtype}, which TPRINT does not print (TPrint.hpp "
                         f"PrintValue: static_assert \"Unsupported data type for Print.\"; it prints "
                         f"{', '.join(DTYPE_NAMES)})", "convert to float32 (pto.tcvt) and print that")
    if src.tile is not None:
        _tile_form(comp, node, call, src, args, fmt)
        return
    if src.space != "hbm":
        comp.error(node, f"{call}: src must be a Vec tile (pto.alloc_tile) or a pointer into a GM tensor")
    if args["rows"] is NONE or args["cols"] is NONE:
        comp.error(node, f"{call}: printing GM needs the slice's shape: rows= and cols= (the GlobalTensor's "
                         "Shape3 and Shape4)", "pass rows= and cols= (and stride=, the elements between rows)")
    rows, cols = args["rows"], args["cols"]
    stride = cols if args["stride"] is NONE else args["stride"]
    for what, v in (("rows", rows), ("cols", cols)):
        known = comp.int_constant(v, node, f"{call}: {what}")
        if known is not None and known < 1:
            comp.error(node, f"{call}: {what} is {known}; print at least one row and column")
    ops = (comp.uniform_int(src.offset, node, f"{call}: the GM offset"),
           comp._int_operand(rows, node, f"{call}: rows"), comp._int_operand(cols, node, f"{call}: cols"),
           comp._int_operand(stride, node, f"{call}: stride"), comp._int_operand(Const(fmt, I32), node, "format"))
    _barrier(comp, node)
    comp.emit("TPRINT_GM", None, ops, src.dtype, node, aux=(src.slot,))
    comp.instrs[-1].comment = src.name


def _tile_form(comp, node, call, t, args, fmt):
    info = t.tile
    if info.loc != "Vec":
        comp.error(node, f"{call}: '{t.name}' is a {info.loc} tile; TPRINT prints Vec tiles (TPRINT_IMPL: "
                         f"static_assert \"TileType of source tile must be Vec.\"); the Acc / Mat form through a GM "
                         "scratch is not built", "tstore the tile to GM and print that: pto.tprint(gm, rows=, cols=)")
    given = [k for k in ("rows", "cols", "stride") if args[k] is not NONE]
    if given:
        comp.error(node, f"{call}: {', '.join(given)} describe a GM slice; a tile prints its own Rows x Cols")
    if info.storage is not None or not info.contiguous:
        comp.error(node, f"{call}: '{t.name}' is a view ({'of another dtype' if info.storage else 'a window'}) "
                         "of another tile; printing it is not built", "print the tile it views")
    ops = (comp._int_operand(info.valid_rows, node, f"{call}: valid rows"),
           comp._int_operand(info.valid_cols, node, f"{call}: valid cols"),
           comp._int_operand(Const(fmt, I32), node, "format"),
           comp._int_operand(Const(LAYOUT_CODES.index(info.layout), I32), node, "layout"))
    _barrier(comp, node)
    comp.emit("TPRINT", None, ops, t.dtype, node, aux=(t.base, info.rows, info.cols))
    comp.instrs[-1].comment = t.name


def _barrier(comp, node):
    """TPRINT_IMPL's pipe_barrier(PIPE_ALL): the pipes' writes land before the scalar reads."""
    emit_pipe_barrier(comp, node)


def _format(comp, node, v) -> int:
    if v is NONE:
        return 0
    if not (isinstance(v, Text) and v.value in FORMATS):
        comp.error(node, f"pto.tprint: format must be one of {', '.join(map(repr, FORMATS))} (pto-isa's "
                         "PrintFormat)")
    return FORMATS.index(v.value)
