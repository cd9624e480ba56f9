"""pto.tdequant(dst, src, scale, offset): dequantization (isa/50_quant.toml, family tile_dequant),
with A2/A3's checks (include/pto/npu/a2a3/TDequant.hpp TDequantCheck) as compile errors at the
kernel's line and its valid-shape assert as a CHECK when the shapes are known only at run
time; pto.tquant(dst, src, scale, tmp, offset=None): quantization (family tile_quant), with
TQuant.hpp's static_asserts and those of the TROWEXPANDMUL / TROWEXPANDADD it calls as compile
errors, their PTO_ASSERTs as compile errors or CHECKs. Registered in registry.py's LOWERINGS;
codegen.py imports it."""
from __future__ import annotations

from .. import dtypes
from ..isa.run_time_checks import PARAMETER_ROWS, VALID_REGIONS_MATCH
from .builtin_checks import aicore_only
from .mask_builtins import share_words
from .registry import LOWERINGS
from .values import NONE, Const

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


_QUANT = "include/pto/npu/a2a3/TQuant.hpp"
# the row-expand op each parameter goes through, and its header (TQuant.hpp calls the tmp forms)
_EXPANDS = {"scale": ("TROWEXPANDMUL", "include/pto/npu/a2a3/TRowExpandMul.hpp"),
            "offset": ("TROWEXPANDADD", "include/pto/npu/a2a3/TRowExpandAdd.hpp")}


@LOWERINGS.lowering("tquant", checks=(aicore_only,))
def lower_quant(comp, node, args):
    """TQUANT<INT8_SYM> into an int8 dst, or with offset TQUANT<INT8_ASYM> into uint8, over
    src's valid region: a float32 RowMajor src; scale (and offset) float32 ColMajor rows x 1
    columns of src's valid rows; dst's valid region src's; a float32 tmp of its own words
    large enough for the int32 view and the broadcasts TQuant.hpp writes into it."""
    call = "pto.tquant"
    asym = args.get("offset", NONE) is not NONE
    spec = comp.isa["TQUANT_ASYM" if asym else "TQUANT"]
    names = ("dst", "src", "scale", "tmp") + (("offset",) if asym else ())
    tiles = dict(zip(names, comp.typed_tiles(spec, node, args, names)))
    dst, src, tmp = tiles["dst"], tiles["src"], tiles["tmp"]
    params = [tiles[n] for n in ("scale", "offset") if n in tiles]
    if src.dtype != dtypes.float32:
        comp.error(node, f"{call}: '{src.name}' holds {src.dtype} (\"Fix: Input has to be float 32\", {_QUANT})",
                   "quantize a float32 tile (pto.tcvt it first)")
    want = dtypes.uint8 if asym else dtypes.int8
    if dst.dtype != want:
        kind = "INT8 asym: Out data type has to be uint8" if asym else "INT8 sym: Out data type has to be int8"
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} (\"Fix: Quant {kind}\", {_QUANT})",
                   "without offset= TQUANT is INT8_SYM into int8" if asym else
                   "offset= selects INT8_ASYM, into uint8")
    for which, par in zip(("scale", "offset"), params):
        name, header = _EXPANDS[which]
        if par.dtype != src.dtype:
            comp.error(node, f"{call}: '{par.name}' holds {par.dtype} but '{src.name}' {src.dtype} (\"Fix: {name} "
                             f"src and dst data type is different!\", {header})")
        if which == "scale" and src.tile.layout != "row":
            comp.error(node, f"{call}: '{src.name}' is ColMajor (\"Fix: {name} Invalid tile shape.\", {header})")
        _check_parameter(comp, node, call, par, src, name, header)
    if dst.tile.layout != "row":
        comp.error(node, f"{call}: '{dst.name}' is ColMajor; pypto_sim converts into a RowMajor dst (TQuant.hpp's "
                         "last TCVT walks dst's rows)")
    for what in ("rows", "columns"):
        comp.match_valid(node, call, dst, src, what, "TQuant.hpp converts dst's valid region out of the float16 "
                         "halves it wrote over src's", asserted=False)
    _check_words(comp, node, call, dst, src, tmp, params)
    values = {"rows": src.tile.valid_rows, "cols": src.tile.valid_cols,
              "dpitch": Const(dst.tile.row_pitch, dtypes.int32), "spitch": Const(src.tile.row_pitch, dtypes.int32)}
    ops = tuple(comp._base(tiles[o.name], node, call) if o.kind == "tile" else
                comp._int_operand(values[o.name], node, o.name) for o in spec.value_operands)
    comp.emit(spec.name, None, ops, dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- quant({src.name} * {params[0].name}" + \
        (f" + {params[1].name})" if asym else ")") + f", {src.name} and {tmp.name} overwritten"


def _check_parameter(comp, node, call, par, src, name, header):
    """TRowExpandBin's parameter with tmp: a ColMajor column of src's valid rows (the
    PTO_ASSERT "invalid src1 shape."), which pypto_sim reads a word a row (rows x 1)."""
    shape = f"\"{name}: invalid src1 shape.\", {header}"
    if par.tile.layout != "col":
        comp.error(node, f"{call}: '{par.name}' is RowMajor ({shape}: the tmp form takes a ColMajor column)",
                   "allocate it pto.alloc_tile(rows, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)")
    if par.tile.cols != 1:
        comp.error(node, f"{call}: '{par.name}' is {par.tile.rows} x {par.tile.cols}; pypto_sim reads row r's "
                         "value at word r of a ColMajor rows x 1 column (pto-isa's tquant kernel's ParaTile)")
    cols = par.tile.valid_cols
    if not isinstance(cols, Const):
        one = Const(1, dtypes.int32)
        comp.run_time_check(node, cols, one, one, VALID_REGIONS_MATCH, f"{call}: valid columns of '{par.name}' == 1")
    comp.match_valid(node, call, par, src, "rows", shape)


def _check_words(comp, node, call, dst, src, tmp, params):
    """Where TQuant.hpp writes: src's words from its first (the float16 rows) and tmp's first
    words (the int32 view over tmp, src's Rows x Cols, and the vbrcb broadcasts: 8 words a row
    of at most 256 rows) are the tiles' own; the tiles written share no words with any other."""
    for t, what in ((src, "lays its float16 rows over src's words from its first"),
                    (tmp, "writes tmp's words from its first")):
        if not t.tile.contiguous:
            comp.error(node, f"{call}: '{t.name}' is a window whose rows are not contiguous; TQuant.hpp {what}",
                       f"pass the tile '{t.name}' is cut from, or a window of whole rows")
    if tmp.dtype != dtypes.float32:
        comp.error(node, f"{call}: tmp '{tmp.name}' holds {tmp.dtype}; pypto_sim models tmp as float32 words, as "
                         "pto-isa's tquant kernel's TmpTile (TQuant.hpp writes float32 broadcasts and int32 results "
                         "into it)", "allocate tmp as a float32 Vec tile")
    rows, cols = src.tile.rows, src.tile.cols
    need = max(rows * cols, 64 * -(-min(rows, 256) // 8))
    if tmp.tile.rows * tmp.tile.cols < need:
        comp.error(node, f"{call}: tmp '{tmp.name}' holds {tmp.tile.rows * tmp.tile.cols} words; TQuant.hpp needs "
                         f"{need}: its int32 view over tmp is '{src.name}''s {rows} x {cols} (TileDataCvtS32), and "
                         "vbrcb broadcasts 8 words a row into it (TRowExpandBinOp.hpp)",
                   f"allocate tmp as {rows} x {cols} float32, as src")
    written = (("dst", dst), ("src", src), ("tmp", tmp))
    for i, (role, t) in enumerate(written):
        for other_role, other in written[i + 1:] + tuple(zip(("scale", "offset"), params)):
            if share_words(t, other):
                comp.error(node, f"{call}: {role} '{t.name}' and {other_role} '{other.name}' share words; pypto_sim "
                                 "requires the tiles TQUANT writes apart from each other and from those it reads "
                                 "(it computes TQuant.hpp's passes row by row, which is the same only then)",
                           "give each operand a tile of its own")
