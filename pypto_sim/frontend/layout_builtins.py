"""Layout and valid-region instructions on typed Vec tiles, with A2/A3's checks as compile
errors at the kernel's line: TFILLPAD, TFILLPAD_INPLACE and TFILLPAD_EXPAND copy a tile's valid
region and fill the rest of the destination with a pad value (isa/42_layout.toml, PTO-ISA
docs/isa/TFILLPAD*.md, include/pto/npu/a2a3/TFillPad.hpp); TTRANS; the index reductions
(isa/43_arg_reduce.toml); the views treshape and tsubview; the partial elementwise ops
(isa/47_partial.toml, TPartAdd.hpp & co.)."""
from __future__ import annotations

import ast
import copy

import numpy as np

from .. import dtypes
from ..ir.program import LocalBuffer
from ..isa import VECTOR_FAMILIES
from ..isa.tile_roles import FAMILY_ROLES
from .builtin_checks import aicore_only
from .mask_builtins import share_words
from .registry import LOWERINGS
from .values import NONE, Const, DTypeRef, Ptr, Text, TileInfo, Val

BOXED_SPACES = ("Mat", "Left", "Right", "Acc")     # NZ/ZN fractal tiles
BOX = 16


def fractal_box(loc: str, itemsize: int, layout: str = "row") -> tuple:
    """(rows, cols) of one fractal of a boxed tile in space loc (pto-isa 3186c381
    include/pto/common/pto_tile.hpp Tile::getInnerRow / getInnerCol, with the A2/A3 aliases'
    layouts): Acc's 1024-byte fractal is 16 x 16 (TileAcc, fractalCSize); a 512-byte fractal is
    16 rows x 32 bytes when its inner layout is row-major - Left (TileLeft: SLayout::RowMajor) and
    a Mat tile (the NZ tile, SLayout::RowMajor, that pto-isa's cube kernels load A into) - and 32
    bytes x 16 columns when it is column-major: Right (TileRight: SLayout::ColMajor) and a
    ColMajor Mat tile (the ZN tile a DN matrix is loaded into)."""
    c0 = 32 // itemsize
    if loc == "Acc":
        return BOX, BOX
    if loc == "Right" or (loc == "Mat" and layout == "col"):
        return c0, BOX
    return BOX, c0

PAD_VALUES = ("zero", "min", "max")          # PadValue::Zero / Min / Max (PadValue::Null pads nothing)


def pad_value(pad: str, dtype) -> float:
    """The element TFILLPAD writes for PadValue pad in dtype: 0, or -inf / +inf for floating
    types and the type's least / greatest value for integers (TFILLPAD.md)."""
    if pad == "zero":
        return 0.0
    if dtype.is_float:
        return -np.inf if pad == "min" else np.inf
    info = np.iinfo(dtype.numpy)
    return float(info.min if pad == "min" else info.max)


def check_window(comp, v, node, spec, operand, what):
    """Vector instructions walk a tile's elements as one run of words: a window whose rows
    are not contiguous (pto.tsubview narrower than its tile) is for DMA, moves and the cube
    (and the sources of TFILLPAD and TTRANS, which take a row pitch)."""
    if v.tile.contiguous or spec.family not in VECTOR_FAMILIES:
        return
    if operand in FAMILY_ROLES[spec.family].windowed:
        return
    comp.error(node, f"{what}: tile '{v.name}' is a {v.tile.rows} x {v.tile.cols} window whose rows "
                     f"are {v.tile.pitch} elements apart; {spec.name} needs contiguous rows",
               "take full-width rows (pto.tsubview(t, row, 0, rows, <t's cols>)) or a single row; "
               "tload, tstore, the moves and the cube take any window")


def check_tile_shape(comp, node, where, loc, rows, cols, dtype, layout):
    """PTO-ISA's static checks of a tile's shape (Tile.md, pto_tile.hpp's static_asserts):
    32-byte rows (RowMajor) or columns (ColMajor) of an unboxed tile, extents of a boxed tile in
    whole fractal boxes (fractal_box; one row allowed), one-row Bias tiles."""
    item = dtype.itemsize
    if layout == "row" and loc not in BOXED_SPACES and (cols * item) % 32:
        comp.error(node, f"{where}: a row is {cols * item} bytes, not a multiple of 32 (RowMajor "
                         "tiles need Cols * sizeof(T) % 32 == 0, PTO-ISA Tile.md)",
                   f"use cols a multiple of {32 // item}, or layout=pto.ColMajor for a column "
                   "vector")
    if layout == "nz" and (rows % BOX or (cols * item) % 32):
        comp.error(node, f"{where}: an NZ tile is fractals of {BOX} rows x 32 bytes (c0 = {32 // item} "
                         f"{dtype}), so its rows are a multiple of {BOX} and its cols of {32 // item} "
                         "(TExtract.hpp CheckTExtractNdToNz: \"Destination cols must be c0-aligned.\")")
    if layout == "col" and loc not in BOXED_SPACES and (rows * item) % 32:
        comp.error(node, f"{where}: a column is {rows * item} bytes, not a multiple of 32 "
                         "(ColMajor tiles need Rows * sizeof(T) % 32 == 0, PTO-ISA Tile.md)",
                   f"use rows a multiple of {32 // item}")
    box_rows, box_cols = fractal_box(loc, item, layout)
    if loc in BOXED_SPACES and (rows % box_rows and rows != 1 or cols % box_cols):
        bad, size, need = ("cols", cols, box_cols) if not cols % box_cols == 0 else ("rows", rows, box_rows)
        comp.error(node, f"{where}: boxed tile {bad} must be a multiple of {need} (the {box_rows} x {box_cols} "
                         f"fractal box of {loc} {dtype} tiles; a tile of one row is allowed, pto-isa pto_tile.hpp "
                         f"\"Layout {bad} must be divisible by inner box {bad}\"), but got {size}",
                   f"pad the tile to a multiple of {need} and give the real extent as valid=(rows, cols)")
    if loc in ("Bias", "Scaling") and rows != 1:
        comp.error(node, f"{where}: a {loc} tile is one row (1 x n), not {rows} rows"
                         + (" (A2/A3 TMov.hpp TMovToFb: \"TMov: When TileType is Scaling, row must be 1\")"
                            if loc == "Scaling" else ""))


@LOWERINGS.lowering("tfillpad", "tfillpad_expand", "tfillpad_inplace", checks=(aicore_only,), per_builtin=True)
def lower_fillpad(comp, node, args, builtin):
    """pto.tfillpad(dst, src, pad), tfillpad_expand(dst, src, pad), tfillpad_inplace(dst, pad)
    (src is dst): TFillPad.hpp's checks, then the record's operands."""
    spec, call = builtin.specs[0], builtin.name
    dst, src = comp.typed_tiles(spec, node, {"src": args["dst"], **args}, ("dst", "src"))
    pad = args["pad"]
    if dst.dtype.itemsize != src.dtype.itemsize or dst.dtype != src.dtype:
        comp.error(node, f"pto.{call}: '{src.name}' holds {src.dtype} but '{dst.name}' {dst.dtype}; "
                         "TFILLPAD copies elements of one dtype")
    if dst.dtype.name not in spec.dtypes:
        comp.error(node, f"pto.{call} takes {', '.join(spec.dtypes)} tiles, not {dst.dtype}")
    if dst.tile.layout != "row" or src.tile.layout != "row":
        comp.error(node, f"pto.{call}: both tiles must be RowMajor (TFillPad.hpp copies row by row)")
    expand = call == "tfillpad_expand"
    if expand and (dst.tile.rows < src.tile.rows or dst.tile.cols < src.tile.cols):
        comp.error(node, f"pto.{call}: '{dst.name}' ({dst.tile.rows} x {dst.tile.cols}) must be at "
                         f"least as large as '{src.name}' ({src.tile.rows} x {src.tile.cols})")
    if not expand and (dst.tile.rows, dst.tile.cols) != (src.tile.rows, src.tile.cols):
        comp.error(node, f"pto.{call}: '{dst.name}' is {dst.tile.rows} x {dst.tile.cols} but "
                         f"'{src.name}' is {src.tile.rows} x {src.tile.cols}",
                   "use pto.tfillpad_expand to pad into a larger tile")
    custom = isinstance(pad, Const) and not isinstance(pad.value, bool)
    if not (custom or (isinstance(pad, Text) and pad.value in PAD_VALUES)):
        comp.error(node, f"pto.{call}: pad must be one of {', '.join(map(repr, PAD_VALUES))} "
                         "(PadValue::Zero, Min, Max) or a number known at compile time "
                         "(PadValueCustom)")
    # PadValueCustom(v): v in dst's dtype (include/pto/common/constants.hpp carries its bits)
    fill = Const(dtypes.round_scalar(pad.value, dst.dtype) if custom else pad_value(pad.value, dst.dtype),
                 dst.dtype)
    sizes = [src.tile.valid_rows, src.tile.valid_cols, Const(src.tile.row_pitch, dtypes.int32),
             Const(dst.tile.rows, dtypes.int32), Const(dst.tile.cols, dtypes.int32)]
    ops = [comp._base(dst, node, call), comp._base(src, node, call), comp.operand(fill, dst.dtype, node)]
    ops += [comp._int_operand(v, node, name)
            for v, name in zip(sizes, ("rows", "cols", "spitch", "drows", "dcols"))]
    comp.emit(spec.name, None, tuple(ops), dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- {src.name} padded with {pad.value}"


# ---------------------------------------------------------------- transpose
@LOWERINGS.lowering("ttrans", checks=(aicore_only,))
def lower_ttrans(comp, node, args):
    """dst = src transposed over src's valid region (TTrans.hpp: one dtype size, a
    RowMajor source; dst at least cols x rows of the valid region, its rows whole 32-byte
    blocks). tmp: A2/A3's scratch (a Vec tile of the
    dtype, written; its values are not modelled), dst when left out."""
    spec = comp.isa["TTRANS"]
    dst, src = comp.typed_tiles(spec, node, args, ("dst", "src"))
    if dst.dtype != src.dtype or dst.dtype.name not in spec.dtypes:
        comp.error(node, f"pto.ttrans: '{src.name}' holds {src.dtype} and '{dst.name}' {dst.dtype}; "
                         f"TTRANS moves elements of one dtype among {', '.join(spec.dtypes)}")
    if src.tile.layout != "row" or dst.tile.layout != "row":
        comp.error(node, "pto.ttrans: both tiles must be RowMajor (TTrans.hpp)")
    tmp = dst if args.get("tmp", NONE) is NONE else \
        comp.typed_tile(args["tmp"], node, spec, "tmp", "pto.ttrans: tmp")
    if tmp.dtype != dst.dtype:
        comp.error(node, f"pto.ttrans: tmp '{tmp.name}' holds {tmp.dtype}, '{dst.name}' {dst.dtype}; "
                         "A2/A3 transposes through tmp in the tiles' dtype (TTrans.hpp)")
    # A2/A3 writes validCol rows of validRow elements rounded up to whole 32-byte blocks
    # (TTrans.hpp's last copy_ubuf_to_ubuf); a valid region known only at run time: the tile's
    vr, vc = src.tile.valid_rows, src.tile.valid_cols
    rows, cols = ((int(vr.value), int(vc.value)) if isinstance(vr, Const) and isinstance(vc, Const)
                  else (src.tile.rows, src.tile.cols))
    per_block = 32 // dst.dtype.itemsize
    need = (cols, -(-rows // per_block) * per_block)
    if dst.tile.rows < need[0] or dst.tile.cols < need[1]:
        comp.error(node, f"pto.ttrans: '{dst.name}' is {dst.tile.rows} x {dst.tile.cols} but the "
                         f"transpose of '{src.name}''s {rows} x {cols} valid region needs {need[0]} x {need[1]} "
                         f"({rows} elements a row, whole 32-byte blocks)")
    ops = (comp._base(dst, node, "ttrans"), comp._base(src, node, "ttrans"),
           comp._int_operand(src.tile.valid_rows, node, "rows"),
           comp._int_operand(src.tile.valid_cols, node, "cols"),
           comp._int_operand(Const(src.tile.row_pitch, dtypes.int32), node, "spitch"),
           comp._int_operand(Const(dst.tile.cols, dtypes.int32), node, "dpitch"),
           comp._base(tmp, node, "ttrans"))
    comp.emit("TTRANS", None, ops, dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- {src.name}^T"


# ---------------------------------------------------------------- index reductions
# the index dtypes of the value-and-index forms, by the data's element size (TRowReduceIdxCheck,
# TRowReduceIdxOps.hpp: 4-byte data int32 / uint32, 2-byte data also int16 / uint16; TColReduceIdxCheck,
# TColReduceIdx.hpp: 4-byte int32 / uint32, 2-byte int16 / uint16 only)
_VAL_FORM_INDICES = {("tile_row_arg", 4): (dtypes.int32, dtypes.uint32),
                     ("tile_row_arg", 2): (dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32),
                     ("tile_col_arg", 4): (dtypes.int32, dtypes.uint32),
                     ("tile_col_arg", 2): (dtypes.int16, dtypes.uint16)}


@LOWERINGS.family_lowering("tile_row_arg", "tile_col_arg", checks=(aicore_only,), per_builtin=True)
def lower_arg_reduce(comp, node, args, builtin):
    """TROWARGMAX / TROWARGMIN into an int32 rows x 1 column, TCOLARGMAX / TCOLARGMIN into an
    int32 1 x cols row (TReduceIdx.hpp's checks: a Vec int32 index tile, one index a row or
    a column of src); with val=, the value-and-index form, the kept elements into val too."""
    spec, call = builtin.specs[0], builtin.name
    dst, src = comp.typed_tiles(spec, node, args, ("dst", "src"))
    per_col = spec.family == "tile_col_arg"
    if src.dtype.name not in spec.dtypes:
        comp.error(node, f"pto.{call} takes {', '.join(spec.dtypes)} tiles, not {src.dtype}")
    val = None
    if args.get("val", NONE) is not NONE:
        (val,) = comp.typed_tiles(spec, node, args, ("val",))
        _check_value_tile(comp, node, call, spec, val, dst, src, per_col)
    elif dst.dtype not in (dtypes.int32, dtypes.uint32):      # TRowReduceIdxOps.hpp, TColReduceIdx.hpp
        comp.error(node, f"pto.{call}: the index tile '{dst.name}' must be int32 or uint32, not {dst.dtype}")
    # the index tile: a RowMajor row (TCOLARG*: its first row, an index a column) or an R x 1
    # DN column or a RowMajor tile's first column (TROWARG*: an index a row), as A2/A3's
    # TRowReduceCheck and TColReduceIdxCheck accept; the valid counts must agree
    vc = src.tile.valid_cols
    width = int(vc.value) if isinstance(vc, Const) else src.tile.cols
    if per_col and (dst.tile.layout != "row" or dst.tile.cols < width):
        comp.error(node, f"pto.{call}: '{dst.name}' must be a RowMajor tile of at least {width} "
                         f"columns (its first row takes an index a valid column of '{src.name}'), not "
                         f"{dst.tile.rows} x {dst.tile.cols} {dst.tile.layout}")
    if not per_col and ((dst.tile.layout == "col" and dst.tile.cols != 1) or dst.tile.rows < src.tile.rows):
        comp.error(node, f"pto.{call}: '{dst.name}' must be a column of {src.tile.rows} (an index a "
                         f"row of '{src.name}': rows x 1 with layout=pto.ColMajor, or a RowMajor tile's "
                         f"first column), not {dst.tile.rows} x {dst.tile.cols}")
    if per_col:
        _one_valid_row(comp, node, call, dst, "indices", "TColReduceIdx output idx validRow must be 1")
        comp.match_valid(node, f"pto.{call}", dst, src, "columns", "\"Fix: TColReduceIdx input validCol "
                         "must equal idx output validCol\", include/pto/npu/a2a3/TColReduceIdx.hpp")
    else:
        comp.match_valid(node, f"pto.{call}", dst, src, "rows", "\"Fix: TROWREDUCE input validRow must be "
                         "consistent with the output validRow.\", include/pto/npu/a2a3/TRowReduceOps.hpp")
    dpitch = 1 if dst.tile.layout == "col" else dst.tile.row_pitch
    vpitch = 0 if val is None else 1 if val.tile.layout == "col" else val.tile.row_pitch
    ops = (comp._base(dst, node, call), comp._base(src, node, call),
           comp._int_operand(src.tile.valid_rows, node, "rows"),
           comp._int_operand(src.tile.valid_cols, node, "cols"),
           comp._int_operand(Const(dpitch, dtypes.int32), node, "dpitch"),
           comp._int_operand(Const(src.tile.row_pitch, dtypes.int32), node, "spitch"),
           comp._base(val, node, call) if val is not None else comp._int_operand(Const(-1, dtypes.int32), node, "val"),
           comp._int_operand(Const(vpitch, dtypes.int32), node, "vpitch"))
    comp.emit(spec.name, None, ops, src.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name}{f', {val.name}' if val is not None else ''} <- {call[1:]}({src.name})"


def _one_valid_row(comp, node, call, t, what, assertion):
    """A column reduction's output t takes one row: TColReduceIdxCheck's assertion, a compile error."""
    vr = t.tile.valid_rows
    if not (isinstance(vr, Const) and int(vr.value) == 1):
        comp.error(node, f"pto.{call}: '{t.name}' has {getattr(vr, 'value', 'run-time')} valid rows; the {what} take "
                         f"one row (\"Fix: {assertion}\", include/pto/npu/a2a3/TColReduceIdx.hpp)",
                   "give it valid=(1, cols)")


def _check_value_tile(comp, node, call, spec, val, dst, src, per_col):
    """The value-and-index form's checks (TRowReduceIdxCheck / TColReduceIdxCheck with a value
    output): val holds src's dtype, one value where dst holds an index (a row's in an R x 1
    column or a RowMajor tile's first column; a column's along a RowMajor row), and dst's index
    dtype is one the data's element size allows (_VAL_FORM_INDICES)."""
    where = "TRowReduceIdxOps.hpp" if not per_col else "TColReduceIdx.hpp"
    allowed = _VAL_FORM_INDICES[(spec.family, src.dtype.itemsize)]
    if dst.dtype not in allowed:
        comp.error(node, f"pto.{call}: with val=, the index tile '{dst.name}' of {src.dtype} data must be "
                         f"{' or '.join(d.name for d in allowed)}, not {dst.dtype} "
                         f"(include/pto/npu/a2a3/{where})")
    if val.dtype != src.dtype:
        comp.error(node, f"pto.{call}: the value tile '{val.name}' holds {val.dtype} but '{src.name}' holds "
                         f"{src.dtype}; it takes the kept elements themselves (\"DstVal data type must match "
                         f"input type\", include/pto/npu/a2a3/{where})")
    if share_words(val, dst):
        comp.error(node, f"pto.{call}: val '{val.name}' and dst '{dst.name}' share words (one tile, or views of "
                         "one); the values would overwrite the indices",
                   "allocate a tile of the data's dtype for the values")
    vc = src.tile.valid_cols
    width = int(vc.value) if isinstance(vc, Const) else src.tile.cols
    if per_col:
        _one_valid_row(comp, node, call, val, "values", "TColReduceOpsIdx output value validRow must be 1")
        if val.tile.layout != "row" or val.tile.cols < width:
            comp.error(node, f"pto.{call}: '{val.name}' must be a RowMajor tile of at least {width} columns "
                             f"(its first row takes a value a valid column of '{src.name}'), not "
                             f"{val.tile.rows} x {val.tile.cols} {val.tile.layout}")
        comp.match_valid(node, f"pto.{call}", val, src, "columns", "\"Fix: TColReduceOpsIdx input validCol "
                         "must equal value output validCol\", include/pto/npu/a2a3/TColReduceIdx.hpp")
    else:
        if (val.tile.layout == "col" and val.tile.cols != 1) or val.tile.rows < src.tile.rows:
            comp.error(node, f"pto.{call}: '{val.name}' must be a column of {src.tile.rows} (a value a row "
                             f"of '{src.name}': rows x 1 with layout=pto.ColMajor, or a RowMajor tile's first "
                             f"column), not {val.tile.rows} x {val.tile.cols}")
        comp.match_valid(node, f"pto.{call}", val, src, "rows", "\"Fix: TROWREDUCE input validRow must be "
                         "consistent with the output validRow.\", include/pto/npu/a2a3/TRowReduceOps.hpp")


# ---------------------------------------------------------------- views: treshape, tsubview
@LOWERINGS.lowering("treshape", "tsubview", binds=False)
def lower_view(comp, node, builtin):
    """A new typed tile over words of an existing one, as A2/A3 binds it (TASSIGN to the
    source's address, TReshape.hpp / TSubView.hpp); the instruction moves no data."""
    call = builtin.name
    valid_ast = next((k.value for k in node.keywords if k.arg == "valid"), None)
    if valid_ast is not None and call != "tsubview":
        comp.error(node, f"pto.{call}{builtin.signature_text} takes no valid=: the view keeps its tile's extent")
    args = comp.bind_call(builtin, _without_keyword(node, "valid"))
    spec = comp.isa[call.upper()]
    src = args["src"]
    if not comp.is_aicore or not (isinstance(src, Ptr) and src.tile is not None):
        comp.error(node, f"pto.{call} takes a typed tile of pto.alloc_tile (an AI-core kernel)")
    info = src.tile
    rows, cols = (comp._static_int(args[k], node, f"pto.{call}: {k}") for k in ("rows", "cols"))
    name = comp._target_name(node) or f"{src.name}_{call[1:]}"
    if info.storage is not None:
        comp.error(node, f"pto.{call}: '{src.name}' views {info.storage} words as {src.dtype}; a view "
                         "of it is not built", f"take the view of the tile '{src.name}' views")
    new_dtype = args.get("dtype", NONE)
    if call == "treshape" and new_dtype is not NONE:
        if not isinstance(new_dtype, DTypeRef):
            comp.error(node, "pto.treshape: dtype must be a pto dtype (pto.int32)")
        if new_dtype.dtype != src.dtype:
            return _reinterpreted_view(comp, node, spec, src, rows, cols, new_dtype.dtype, name)
    if info.layout == "nz" and (call == "treshape" or (rows, cols) != (info.rows, info.cols)):
        comp.error(node, f"pto.{call} of the NZ tile '{src.name}': views of NZ tiles are built for the whole "
                         "tile only (a window's words are not its rows in NZ order)",
                   "take pto.tsubview(t, 0, 0, rows, cols, valid=...) of the whole tile")
    if call == "treshape":
        layout = _view_layout(comp, args["layout"], info.layout, node)
        where = f"pto.treshape of '{src.name}' ({info.rows} x {info.cols}) into {rows} x {cols}"
        if not info.contiguous:
            comp.error(node, f"{where}: '{src.name}' is a window whose rows are not contiguous",
                       "reshape the tile the window is cut from")
        if rows * cols != info.rows * info.cols:
            comp.error(node, f"{where}: {rows * cols} elements, but the tile holds "
                             f"{info.rows * info.cols} (TRESHAPE keeps the byte size)")
        offset, pitch = 0, 0
    else:
        layout = info.layout
        row, col = (window_offset(comp, args[k], node, k) for k in ("row", "col"))
        where = f"pto.tsubview of '{src.name}' ({info.rows} x {info.cols}) at ({row}, {col}), {rows} x {cols}"
        if row + rows > info.rows or col + cols > info.cols:
            comp.error(node, f"{where}: the window reaches past the tile",
                       "keep row + rows and col + cols within the tile's shape")
        if layout == "col" and cols != info.cols and rows != info.rows:
            comp.error(node, f"{where}: windows of ColMajor tiles are built for whole columns only")
        pitch = info.row_pitch
        offset = row * pitch + col
        if (offset * src.dtype.itemsize) % 32:
            comp.error(node, f"{where}: the window starts {offset * src.dtype.itemsize} bytes into "
                             "the tile, not a multiple of 32 (tile addresses are 32-byte aligned)")
        box_rows, box_cols = fractal_box(info.loc, src.dtype.itemsize, info.layout)
        if info.loc in BOXED_SPACES and (row % box_rows or col % box_cols):
            comp.error(node, f"{where}: a window of a boxed {info.loc} tile starts on a {box_rows} x "
                             f"{box_cols} fractal box")
        if pitch == cols or rows == 1:
            pitch = 0                  # the window's rows follow each other
    check_tile_shape(comp, node, where, info.loc, rows, cols, src.dtype, layout)
    view = TileInfo(info.loc, rows, cols, layout, *comp._valid(valid_ast, rows, cols, node, where), pitch=pitch,
                    dynamic=valid_ast is not None)
    return _bind_view(comp, node, spec, src, name, offset, (rows, cols), src.dtype, view, pitch)


def window_view(comp, node, src, row, col, rows, cols, suffix="window"):
    """A rows x cols view of typed tile src at (row, col), all of it valid, as pto.tsubview binds
    one (its TSUBVIEW record, no data moved), for a lowering that writes that window; its start
    need not be 32-byte aligned (a one-element window). It is named src's name + '_' + suffix."""
    info = src.tile
    pitch = 0 if (info.row_pitch == cols or rows == 1) else info.row_pitch
    view = TileInfo(info.loc, rows, cols, info.layout, Const(rows, dtypes.int32, weak=False),
                    Const(cols, dtypes.int32, weak=False), pitch=pitch)
    return _bind_view(comp, node, comp.isa["TSUBVIEW"], src, f"{src.name}_{suffix}", row * info.row_pitch + col,
                      (rows, cols), src.dtype, view, pitch)


def _bind_view(comp, node, spec, src, name, offset, words_shape, dtype, view, pitch=0):
    """A view's buffer over src's words from `offset` on (words_shape of src's dtype, rows
    `pitch` words apart when not 0), its TRESHAPE / TSUBVIEW record (no data moves) and its
    typed pointer: a tile of `dtype` shaped as `view` says."""
    info, at = src.tile, comp.buffers[src.slot].offset + offset
    words = words_shape[0] * words_shape[1]
    line = getattr(node, "lineno", 0) + comp.kernel.line_offset
    slot = comp.shared_buffer(node, lambda: comp.buffers.append(LocalBuffer(
        name, at, words, src.dtype, line, 1, info.loc, *words_shape, alias_of=src.slot, pitch=pitch)))
    name = comp.buffers[slot].name
    comp.emit(spec.name, None, (), src.dtype, node, aux=(at, words))
    comp.instrs[-1].comment = (f"{name}: {info.loc} {view.rows} x {view.cols} x {dtype} view of "
                               f"{src.name} at word {at}")
    return Ptr("l1", slot, dtype, name, Const(0, dtypes.int32), words, at, tile=view)


def _reinterpreted_view(comp, node, spec, src, rows, cols, dtype, name):
    """pto.treshape(src, rows, cols, dtype=): a rows x cols tile of dtype over src's bytes
    (TRESHAPE's bitwise reinterpretation; A2/A3 TASSIGNs the new type to src's address). Built
    for an int32 view of float16 words, which pto.tgather reads (each element two halves' bits,
    low first: the uint32 view pto-isa's topk gathers its indices through); the view's buffer
    covers the float16 words, so bounds, hazards and costs see the bytes it reads."""
    info = src.tile
    where = f"pto.treshape of '{src.name}' ({info.rows} x {info.cols} {src.dtype}) into {rows} x {cols} {dtype}"
    if (src.dtype, dtype) != (dtypes.float16, dtypes.int32):
        comp.error(node, f"{where}: a view of another dtype is built for int32 over float16 only",
                   "an int32 view of a float16 row is what pto.tgather reads indices through")
    if not info.contiguous or info.layout != "row":
        comp.error(node, f"{where}: '{src.name}' must be a RowMajor tile or window whose rows are contiguous")
    if rows * cols * dtype.itemsize != info.rows * info.cols * src.dtype.itemsize:
        comp.error(node, f"{where}: {rows * cols * dtype.itemsize} bytes, but the tile holds "
                         f"{info.rows * info.cols * src.dtype.itemsize} (TRESHAPE keeps the byte size)")
    check_tile_shape(comp, node, where, info.loc, rows, cols, dtype, "row")
    view = TileInfo(info.loc, rows, cols, "row", Const(rows, dtypes.int32), Const(cols, dtypes.int32),
                    storage=src.dtype)
    return _bind_view(comp, node, spec, src, name, 0, (rows, info.rows * info.cols // rows), dtype, view)


def _without_keyword(node, name):
    """A copy of call ``node`` without keyword ``name`` (bound apart: valid=(rows, cols) is read
    as the pair alloc_tile reads, not as one value)."""
    out = copy.copy(node)
    out.keywords = [k for k in node.keywords if k.arg != name]
    return out


def _view_layout(comp, value, default, node):
    if value is NONE:
        return default
    if not (isinstance(value, Text) and value.value in ("row", "col")):
        comp.error(node, "pto.treshape: layout must be pto.RowMajor or pto.ColMajor")
    return value.value


def window_offset(comp, v, node, name, call="pto.tsubview", params=("src", "row", "col"),
                  why="the view is bound then: TSUBVIEW has no operands"):
    """A window's row or col (argument `name` of call, whose parameters are params): an int >= 0
    known when the kernel compiles, since the window is bound then (tsubview's: TSUBVIEW has no
    operands, isa/42_layout.toml, its words are fixed; the Vec -> Vec textract / tinsert's)."""
    what = f"{call}: {name}"
    if isinstance(v, Const) and isinstance(v.value, bool):
        comp.error(node, f"{what} must be an int, not the bool {v.value}")
    if isinstance(v, Const):
        offset = comp.int_constant(v, node, what)
        if offset < 0:
            comp.error(node, f"{what} is {offset}; a window starts inside its tile", f"give {name} >= 0")
        return offset
    given = _argument_text(node, params.index(name), name)
    top = len(comp.inline_stack) == 1            # in the kernel itself, not an inlined helper
    param = " (a kernel argument)" if top and isinstance(v, Val) and given in comp.kernel.params else ""
    comp.error(node, f"{what} must be a constant known when the kernel compiles ({why}), but "
                     f"'{given}'{param} is {comp.value_kind(v)}",
               f"give {name} as a literal or a module constant; for a window at a run-time place, "
               "pto.tload the tile from GM at that offset (pto.tload(t, A + offset))")


def _argument_text(node, index, name) -> str:
    """The source text of call node's argument `name` (position index or keyword)."""
    given = next((k.value for k in node.keywords if k.arg == name), None)
    if given is None and index < len(node.args):
        given = node.args[index]
    return ast.unparse(given) if given is not None else name


# ---------------------------------------------------------------- partial elementwise
@LOWERINGS.family_lowering("tile_part", checks=(aicore_only,), per_builtin=True)
def lower_partial(comp, node, args, builtin):
    """pto.tpartadd(dst, src0, src1) and TPARTMAX / TPARTMIN / TPARTMUL (isa/47_partial.toml):
    the source covering dst's valid region first, the other's valid region as operands, after
    PTO-ISA's checks (TPARTADD.md, TPartAdd.hpp: one dtype, RowMajor tiles, one source's valid
    region dst's and the other's within it)."""
    spec, call = builtin.specs[0], builtin.name
    dst, s0, s1 = comp.typed_tiles(spec, node, args, ("dst", "src0", "src1"))
    header = f"include/pto/npu/a2a3/TPart{spec.name[5:].capitalize()}.hpp"
    comp.one_dtype(node, spec, f"pto.{call}", dst, (s0, s1), f"\"Fix: {spec.name} Invalid data type.\", {header}",
                   f"the three tiles hold one dtype, {header}")
    for t in (dst, s0, s1):
        if t.tile.layout != "row":
            comp.error(node, f"pto.{call}: '{t.name}' is ColMajor; A2/A3's TPartOp.hpp takes RowMajor tiles")
    pitches = {t.tile.row_pitch for t in (dst, s0, s1)}
    if len(pitches) > 1:
        comp.error(node, f"pto.{call}: tiles of different widths ({', '.join(str(p) for p in sorted(pitches))} "
                         "elements a row) are not built", "allocate dst, src0 and src1 with one number of columns")
    regions = []
    for t in (dst, s0, s1):
        rows, cols = t.tile.valid_rows, t.tile.valid_cols
        if not (isinstance(rows, Const) and isinstance(cols, Const)):
            comp.error(node, f"pto.{call}: '{t.name}' has a valid region known only at run time; a partial "
                             "operation with one is not built", "give the tiles constant valid=(rows, cols)")
        regions.append((int(rows.value), int(cols.value)))
    (dr, dc), (r0, c0), (r1, c1) = regions
    if (r0, c0) != (dr, dc) and (r1, c1) != (dr, dc) or max(r0, r1) > dr or max(c0, c1) > dc:
        comp.error(node, f"pto.{call}: valid regions {r0} x {c0} ('{s0.name}') and {r1} x {c1} ('{s1.name}') "
                         f"against dst's {dr} x {dc}: one source must cover dst's valid region and the other lie "
                         f"within it (\"Fix: {spec.name} At most one entry in the valid-rows and valid-cols of "
                         "src0 and src1 is smaller than dst.\", TPartAdd.hpp)")
    # TPartAdd.hpp & co.: the source whose valid region is dst's first (src0 when both are)
    (full, part), (pr, pc) = ((s0, s1), (r1, c1)) if (r0, c0) == (dr, dc) else ((s1, s0), (r0, c0))
    sizes = {"rows": dr, "cols": dc, "prows": pr, "pcols": pc, "pitch": pitches.pop()}
    ops = [comp._base(t, node, call) for t in (dst, full, part)]
    ops += [comp._int_operand(Const(sizes[o.name], dtypes.int32), node, o.name) for o in spec.value_operands[3:]]
    comp.emit(spec.name, None, tuple(ops), dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- {call[5:]}({s0.name}, {s1.name}) over {dr} x {dc}"
