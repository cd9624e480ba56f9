"""Windows between two Vec tiles: pto.textract(dst, src, row, col) and pto.tinsert(dst, src, row,
col) when both tiles are in UB (isa/35_aicore.toml TEXTRACT_V2V, TINSERT_V2V), with A2/A3's
checks (include/pto/npu/a2a3/TExtract.hpp TExtractVecToVecND/NZDispatch, TInsert.hpp
TInsertVecToVecNDDispatch, include/pto/common/arch/memory/textract_common.hpp and
tinsert_common.hpp's CheckT*VecToVecND / NZ and TInsertVecToVecNZDispatch) as compile errors at
the kernel's line. Both tiles RowMajor (ND) or both NZ (frontend/nz_windows.py: ColMajor with a
RowMajor fractal); anything else is the headers' static_assert.

ND: a window of more than one element starts at a column whose byte offset is a multiple of 32
and is at least 2 bytes wide a row. NZ: it starts at a row of a multiple of 16 and a column of
c0 (32 bytes of elements), is at least 2 bytes wide a row, and the tiles' extents are whole
fractals (the NZ tile's own rule); the headers' NZ copies (copy_ubuf_to_ubuf of the window's
rows of each whole c0 column stripe, a vcopy of the rows' tail columns of the last stripe) move
exactly the window, as the ND ones do. A 1 x 1 window (the scalar path) may start anywhere in
either layout. Tiles hold their values row-major whatever their layout (docs/aicore.md), so the
record and its cost are the same in both. The insert's record writes a view of dst bound at
(row, col), so what it writes is that window (check="race", sync="auto") and its own row and
col are 0; the race check narrows the extract's src to its window and dst to its valid region,
the insert's src to its valid region (exec/aicore_tiles.py WINDOW_COPIES).

pto.tconcat(dst, src0, src1) (TCONCAT, isa/49_concat.toml), the other Vec -> Vec copy, with
TConcat.hpp's checks, is here too.

Functions of the kernel compiler ``comp``; the lowerings are registered in registry.py's
LOWERINGS (pto.textract's other forms are aicore_builtins.py's).
"""
from __future__ import annotations

from .. import dtypes
from .builtin_checks import aicore_only
from .layout_builtins import window_offset, window_view
from .registry import LOWERINGS
from .values import Const, Ptr

_ASSERTS = {"TEXTRACT_V2V": ("TEXTRACT {} Vec->Vec", "TExtract.hpp", "textract_common.hpp"),
            "TINSERT_V2V": ("TINSERT {} Vec->Vec", "TInsert.hpp", "tinsert_common.hpp")}


def is_vec_window(dst, src) -> bool:
    """Whether a textract / tinsert of dst and src is between two Vec tiles."""
    return all(isinstance(t, Ptr) and t.tile is not None and t.tile.loc == "Vec" for t in (dst, src))


def _path(comp, node, call, op, impl, d, s) -> str:
    """"ND" when both tiles are RowMajor, "NZ" when both are NZ (the headers' dispatch); else
    their static_asserts, or (two ColMajor tiles, which both asserts pass) no path at all."""
    for t in (d, s):
        if t.tile.storage is not None:
            comp.error(node, f"{call}: '{t.name}' is a view of {t.tile.storage} words as {t.dtype}; a window "
                             "of such a view is not built", f"use the tile '{t.name}' views")
    layouts = (d.tile.layout, s.tile.layout)
    if layouts in (("row", "row"), ("nz", "nz")):
        return "ND" if layouts[0] == "row" else "NZ"
    names = {"row": "RowMajor (ND)", "col": "ColMajor (DN)", "nz": "NZ"}
    given = f"'{d.name}' is {names[layouts[0]]} and '{s.name}' {names[layouts[1]]}"
    if "row" in layouts:
        comp.error(node, f"{call}: {given} (\"{op} Vec->Vec : Source and destination layout must match (both ND "
                         f"or both NZ).\", {impl})", "allocate both tiles RowMajor or both with layout=pto.NZ")
    if "nz" in layouts:
        comp.error(node, f"{call}: {given} (\"{op} Vec->Vec : Source and destination SFractal must match.\", "
                         f"{impl})", "allocate both tiles with layout=pto.NZ")
    comp.error(node, f"{call}: {given}: {impl} has no path for two ColMajor Vec tiles (its static_asserts pass "
                     "and it issues no copy)", "allocate both tiles RowMajor or both with layout=pto.NZ")


def lower_vec_window(comp, node, name, dst, src, row, col):
    """TEXTRACT_V2V (the window of src at (row, col), dst's valid shape) or TINSERT_V2V (src's
    valid region into dst at (row, col)) with the headers' asserts."""
    spec = comp.isa[name]
    call = f"pto.{spec.builtin}"
    what, impl, common = _ASSERTS[name]
    op = what.split()[0]
    d = comp.typed_tile(dst, node, spec, "dst", f"{call}: dst")
    s = comp.typed_tile(src, node, spec, "src", f"{call}: src")
    if d.dtype != s.dtype:
        comp.error(node, f"{call}: '{d.name}' holds {d.dtype} and '{s.name}' {s.dtype} (\"{op} Vec->Vec : Source and "
                         f"destination data types must match.\", {common})")
    if d.dtype.name not in spec.dtypes:
        comp.error(node, f"{call}: '{d.name}' holds {d.dtype}; {op} Vec->Vec takes {', '.join(spec.dtypes)} "
                         f"({common})")
    path = _path(comp, node, call, op, impl, d, s)
    what = what.format(path)
    window, whole = (d, s) if name == "TEXTRACT_V2V" else (s, d)      # the window's shape; the tile it is in
    vr, vc = window.tile.valid_rows, window.tile.valid_cols
    if not (isinstance(vr, Const) and isinstance(vc, Const)):
        comp.error(node, f"{call}: '{window.name}' needs a static valid region (A2/A3 picks the copy by it)")
    vr, vc = int(vr.value), int(vc.value)
    r0, c0 = (window_offset(comp, v, node, k, call, ("dst", "src", "row", "col"), "the window is bound then")
              for k, v in (("row", row), ("col", col)))
    side = "source" if name == "TEXTRACT_V2V" else "destination"
    scalar = (vr, vc) == (1, 1)                    # the scalar path
    # TInsertVecToVecNZDispatch checks the extents (CheckTInsertVecToVecNZ) off the scalar path only
    if not (scalar and path == "NZ" and name == "TINSERT_V2V") and (
            window.tile.rows > whole.tile.rows or window.tile.cols > whole.tile.cols):
        ext = "Rows" if window.tile.rows > whole.tile.rows else "Cols"
        mine = "Destination" if name == "TEXTRACT_V2V" else "Source"
        comp.error(node, f"{call}: '{window.name}' ({window.tile.rows} x {window.tile.cols}) is larger than "
                         f"'{whole.name}' ({whole.tile.rows} x {whole.tile.cols}) (\"{what} : {mine} {ext} must not "
                         f"exceed {side} {ext}.\", {common})")
    if scalar:
        if not (r0 < whole.tile.rows and c0 < whole.tile.cols):
            comp.error(node, f"{call}: ({r0}, {c0}) is outside '{whole.name}' ({whole.tile.rows} x "
                             f"{whole.tile.cols}) (\"{what} : indexRow / indexCol exceeds ...\", {impl})")
    else:
        _window_asserts(comp, node, call, what, (impl, common), path, d.dtype, window, whole, (r0, c0, vr, vc),
                        side)
    if name == "TINSERT_V2V":                      # the record writes the window of dst
        d = window_view(comp, node, d, r0, c0, vr, vc)
        r0 = c0 = 0
    ops = (comp._base(d, node, call), comp._base(s, node, call),
           comp._int_operand(Const(vr, dtypes.int32), node, "rows"),
           comp._int_operand(Const(vc, dtypes.int32), node, "cols"),
           comp._int_operand(Const(r0, dtypes.int32), node, f"{call}: row"),
           comp._int_operand(Const(c0, dtypes.int32), node, f"{call}: col"))
    comp.emit(name, None, ops, d.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{d.name} <- {s.name}"


def _window_asserts(comp, node, call, what, sources, path, dt, window, whole, place, side):
    """The PTO_ASSERTs and static_asserts of a window of more than one element (the ND and NZ
    dispatches): where it starts, its width in bytes, that it lies in the whole tile."""
    impl, common = sources
    r0, c0, vr, vc = place
    item, n = dt.itemsize, 32 // dt.itemsize
    if path == "NZ" and r0 % 16:
        comp.error(node, f"{call}: the window starts at row {r0}, not a multiple of 16 (\"{what} : indexRow must be "
                         f"16-aligned (A3 limitation).\", {impl}): A2/A3 copies an NZ tile's rows within its "
                         "16-row fractals", "start the window at a multiple of 16 rows, or move one element")
    if path == "NZ" and c0 % n:
        comp.error(node, f"{call}: the window starts at column {c0}, not a multiple of c0 = {n} {dt} (\"{what} : "
                         f"indexCol must be c0Size-aligned (A3 limitation).\", {impl})",
                   f"start the window at a multiple of {n} columns, or move one element at a time")
    if path == "ND" and (c0 * item) % 32:
        comp.error(node, f"{call}: the window starts at column {c0}, {c0 * item} bytes into a row, not a "
                         f"multiple of 32 (\"{what} : indexCol bytes must be 32-byte aligned (A3 limitation).\", "
                         f"{impl})", "start the window at a 32-byte column, or move one element at a time")
    if (vc * item) % 2:
        tile = "DstTile" if side == "source" else "SrcTile"
        comp.error(node, f"{call}: '{window.name}' has {vc} valid {dt} columns, an odd byte count (\"{what} : "
                         f"{tile} ValidCol bytes must be at least 2-byte aligned.\", {common}): A2/A3 copies a "
                         "row's tail in 16-bit words")
    if r0 + vr > whole.tile.rows or c0 + vc > whole.tile.cols:
        comp.error(node, f"{call}: the {vr} x {vc} window at ({r0}, {c0}) reaches past '{whole.name}' "
                         f"({whole.tile.rows} x {whole.tile.cols}) (\"{what} : indexRow / indexCol + ... exceeds "
                         f"{side} rows / cols!\", {impl})")


@LOWERINGS.lowering("tinsert")
def lower_tinsert(comp, node, args):
    """TINSERT(dst, src, row, col) between Vec tiles (TINSERT_V2V)."""
    if not is_vec_window(args["dst"], args["src"]):
        comp.error(node, "pto.tinsert is built between two Vec tiles (A2/A3 TInsert.hpp's ND and NZ Vec -> Vec "
                         "paths); its Acc -> Mat form is not", "allocate both tiles in Vec")
    lower_vec_window(comp, node, "TINSERT_V2V", args["dst"], args["src"], args["row"], args["col"])


@LOWERINGS.lowering("tconcat", checks=(aicore_only,))
def lower_tconcat(comp, node, args):
    """TCONCAT(dst, src0, src1) (isa/49_concat.toml) with TCONCAT_IMPL's checks (TConcat.hpp): one
    dtype of its list, Vec tiles (RowMajor: the ND path is built), the sources' valid rows dst's
    (a CHECK when known only at run time), their valid columns constants that fit in dst's."""
    spec = comp.isa["TCONCAT"]
    call, header = "pto.tconcat", "include/pto/npu/a2a3/TConcat.hpp"
    dst, s0, s1 = comp.typed_tiles(spec, node, args, ("dst", "src0", "src1"))
    comp.one_dtype(node, spec, call, dst, (s0, s1), f"\"TCONCAT: Invalid data type.\", {header}",
                   f"\"TCONCAT: Data type of dst, src0 and src1 must be the same.\", {header}")
    for t in (dst, s0, s1):
        if t.tile.layout != "row" or t.tile.storage is not None:
            comp.error(node, f"{call}: '{t.name}' is not a RowMajor tile of its own dtype; the ND path is built")
    for t in (s0, s1):
        comp.match_valid(node, call, t, dst, "rows", f"\"TCONCAT: validRow of {'src0' if t is s0 else 'src1'} "
                         f"must match dst.\", {header}")
    widths = []
    for t in (s0, s1):
        vc = t.tile.valid_cols
        if not isinstance(vc, Const):
            comp.error(node, f"{call}: '{t.name}' has a valid column count known only at run time; a "
                             "concatenation of one is not built", "give the sources constant valid=(rows, cols)")
        widths.append(int(vc.value))
    c0, c1 = widths
    if c0 + c1 > dst.tile.cols:
        comp.error(node, f"{call}: {c0} + {c1} valid columns of '{s0.name}' and '{s1.name}' exceed the "
                         f"{dst.tile.cols} columns of '{dst.name}' (\"TCONCAT: Total columns exceed dst "
                         f"capacity.\", {header})")
    ops = (comp._base(dst, node, call), comp._base(s0, node, call), comp._base(s1, node, call),
           comp._int_operand(dst.tile.valid_rows, node, "rows"),
           comp._int_operand(Const(c0 + c1, dtypes.int32), node, "cols"),
           comp._int_operand(Const(c0, dtypes.int32), node, "c0"),
           *(comp._int_operand(Const(t.tile.row_pitch, dtypes.int32), node, "pitch") for t in (dst, s0, s1)))
    comp.emit(spec.name, None, ops, dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- {s0.name} | {s1.name}"


_IDX_DTYPES = ("int32", "int16", "int8", "uint32", "uint16", "uint8")


def _lower_tconcat_idx(comp, node, args, name, names):
    """TCONCAT_IDX / TCONCAT_DSTIDX with TConcatIdxCheck's and TCONCAT_IMPL's checks (TConcat.hpp
    lines 183-275): the data tiles one dtype of TCONCAT's list, the index tiles one integer dtype,
    RowMajor tiles (the ND path is built), the sources' valid rows dst's, dst_idx one valid column."""
    spec = comp.isa[name]
    call, header = f"pto.{spec.builtin}", "include/pto/npu/a2a3/TConcat.hpp"
    tiles = dict(zip(names, comp.typed_tiles(spec, node, args, names)))
    dst, s0, s1, i0 = tiles["dst"], tiles["src0"], tiles["src1"], tiles["src0_idx"]
    comp.one_dtype(node, spec, call, dst, (s0, s1), f"\"TCONCAT: Invalid data type.\", {header}",
                   f"\"TCONCAT: Data type of dst, src0 and src1 must be the same.\", {header}")
    for n in ("src1_idx", "dst_idx"):
        t = tiles.get(n)
        if t is not None and t.dtype != i0.dtype:
            comp.error(node, f"{call}: '{t.name}' holds {t.dtype} and '{i0.name}' {i0.dtype} (\"TCONCAT: Data "
                             f"type of src0Idx and {n[:-4]}Idx must be the same.\", {header})")
    if i0.dtype.name not in _IDX_DTYPES:
        comp.error(node, f"{call}: '{i0.name}' holds {i0.dtype}; the counts take {', '.join(_IDX_DTYPES)} "
                         f"(\"TCONCAT: Invalid data type of src0Idx.\", {header})")
    for t in tiles.values():
        if t.tile.layout != "row" or t.tile.storage is not None:
            comp.error(node, f"{call}: '{t.name}' is not a RowMajor tile of its own dtype; the ND path is built")
    for t in (s0, s1):
        comp.match_valid(node, call, t, dst, "rows", f"\"TCONCAT: validRow of {'src0' if t is s0 else 'src1'} "
                         f"must match dst.\", {header}")
    if "dst_idx" in tiles:
        vc = tiles["dst_idx"].tile.valid_cols
        if not (isinstance(vc, Const) and int(vc.value) == 1):
            comp.error(node, f"{call}: '{tiles['dst_idx'].name}' has {vc} valid columns (\"TCONCAT: validCol of "
                             f"dstIdx must match 1.\", {header})", "give dst_idx valid=(rows, 1)")
    pitches = {"dpitch": "dst", "s0pitch": "src0", "s1pitch": "src1", "dipitch": "dst_idx", "i0pitch": "src0_idx",
               "i1pitch": "src1_idx"}
    ops = [comp._base(tiles[n], node, call) for n in names]
    ops += [comp._int_operand(dst.tile.valid_rows, node, "rows"), comp._int_operand(dst.tile.valid_cols, node, "cols")]
    ops += [comp._int_operand(Const(tiles[pitches[o.name]].tile.row_pitch if pitches[o.name] in tiles else 0,
                                    dtypes.int32), node, o.name)
            for o in spec.value_operands[2:] if o.name in pitches]
    ops.append(comp._int_operand(Const(i0.dtype.code, dtypes.int32), node, "idt"))
    comp.emit(spec.name, None, tuple(ops), dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- {s0.name}[:{i0.name}] | {s1.name}[:{tiles['src1_idx'].name}]"


@LOWERINGS.lowering("tconcat_idx", checks=(aicore_only,))
def lower_tconcat_idx(comp, node, args):
    """TCONCAT(dst, src0, src1, src0Idx, src1Idx) (TCONCAT_IDX, isa/49_concat.toml)."""
    _lower_tconcat_idx(comp, node, args, "TCONCAT_IDX", ("dst", "src0", "src1", "src0_idx", "src1_idx"))


@LOWERINGS.lowering("tconcat_dstidx", checks=(aicore_only,))
def lower_tconcat_dstidx(comp, node, args):
    """TCONCAT(dst, src0, src1, dstIdx, src0Idx, src1Idx) (TCONCAT_DSTIDX, isa/49_concat.toml)."""
    _lower_tconcat_idx(comp, node, args, "TCONCAT_DSTIDX",
                       ("dst", "src0", "src1", "dst_idx", "src0_idx", "src1_idx"))
