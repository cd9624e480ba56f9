"""pto.tdequant(dst, src, scale, offset): dequantization (isa/50_quant.toml, family tile_dequant),
with A2/A3's checks (include/pto/npu/a2a3/TDequant.hpp TDequantCheck) as compile errors at the
kernel's line and its valid-shape assert as a CHECK when the shapes are known only at run
time. Registered in registry.py's LOWERINGS; codegen.py imports it."""
from __future__ import annotations

from .. import dtypes
from ..isa.run_time_checks import PARAMETER_ROWS
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import Const

_HEADER = "include/pto/npu/a2a3/TDequant.hpp"
# the record by source dtype: int16 converts once (vconv_s162f32), int8 twice (through float16)
_RECORD = {"int16": "TDEQUANT", "int8": "TDEQUANT_S8"}


@LOWERINGS.lowering("tdequant", checks=(aicore_only,))
def lower_dequant(comp, node, args):
    """TDEQUANT over dst's valid region: a float32 dst and an int8 or int16 src, both RowMajor
    with one valid region; scale and offset float32 tiles of one type (TDequant.hpp's
    TileDataPara), row r's values their element (r, 0)."""
    call = "pto.tdequant"
    dst, src, scale, offset = comp.typed_tiles(comp.isa["TDEQUANT"], node, args, ("dst", "src", "scale", "offset"))
    if dst.dtype != dtypes.float32:
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} (\"Fix: TDEQUANT dst tile currently supports "
                         f"float data type.\", {_HEADER})", "dequantize into a float32 tile")
    if src.dtype.name not in _RECORD:
        comp.error(node, f"{call}: '{src.name}' holds {src.dtype} (\"Fix: TDEQUANT source tile currently supports "
                         f"int8_t and int16_t data types.\", {_HEADER})")
    for t in (scale, offset):
        if t.dtype != dtypes.float32:
            comp.error(node, f"{call}: '{t.name}' holds {t.dtype} (\"Fix: TDEQUANT parameter tile scale and offset "
                             f"currently support float data type.\", {_HEADER})")
    for t in (dst, src):
        if t.tile.layout != "row":
            comp.error(node, f"{call}: '{t.name}' is ColMajor (\"Fix: TDEQUANT src and dst tile only support row "
                             f"major layout.\", {_HEADER})")
    if (scale.tile.rows, scale.tile.cols, scale.tile.layout, scale.tile.row_pitch) != \
            (offset.tile.rows, offset.tile.cols, offset.tile.layout, offset.tile.row_pitch):
        comp.error(node, f"{call}: '{scale.name}' is {scale.tile.rows} x {scale.tile.cols} and '{offset.name}' "
                         f"{offset.tile.rows} x {offset.tile.cols}; TDEQUANT takes them as one tile type "
                         f"(TileDataPara, {_HEADER})", "allocate scale and offset alike")
    for what in ("rows", "columns"):
        comp.match_valid(node, call, src, dst, what, f"\"Fix: TDEQUANT source tile valid shape mismatch with dst "
                         f"tile valid shape.\", {_HEADER}")
    rows = dst.tile.valid_rows
    if isinstance(rows, Const) and int(rows.value) > scale.tile.rows:
        comp.error(node, f"{call}: '{dst.name}' has {int(rows.value)} valid rows but '{scale.name}' and "
                         f"'{offset.name}' hold {scale.tile.rows}: row r's scale and offset are their element "
                         f"(r, 0) ({_HEADER} ApplyScaleAndOffset)", "give the parameter tiles a row per row of dst")
    elif not isinstance(rows, Const) and dst.tile.rows > scale.tile.rows:
        comp.run_time_check(node, rows, Const(0, dtypes.int32), Const(scale.tile.rows, dtypes.int32),
                            PARAMETER_ROWS, f"{call}: valid rows of '{dst.name}' <= rows of '{scale.name}'")
    spec = comp.isa[_RECORD[src.dtype.name]]
    ops = (comp._base(dst, node, call), comp._base(src, node, call), comp._base(scale, node, call),
           comp._base(offset, node, call),
           comp._int_operand(rows, node, "rows"), comp._int_operand(dst.tile.valid_cols, node, "cols"),
           *(comp._int_operand(Const(t.tile.row_pitch, dtypes.int32), node, "pitch") for t in (dst, src, scale)))
    comp.emit(spec.name, None, ops, dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- ({src.name} - {offset.name}) * {scale.name}"
