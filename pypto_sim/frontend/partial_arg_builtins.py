"""pto.tpartargmax(dst, src0, src1, dst_idx, src0_idx, src1_idx) and pto.tpartargmin: the partial
arg-selections (isa/51_partial_arg.toml, family tile_part_arg), with A2/A3's checks
(include/pto/npu/a2a3/TPartArgOp.hpp at 3186c381, checkTiles and TPartArgInstr) as compile errors
at the kernel's line. Registered in registry.py's LOWERINGS; codegen.py imports it."""
from __future__ import annotations

from .. import dtypes
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import Const

_HEADER = "include/pto/npu/a2a3/TPartArgOp.hpp"
# checkTiles' static_assert "idx type must be integral type.": the index dtypes by value dtype
_INDEX_DTYPES = {"float32": ("int32", "uint32"), "float16": ("int16", "uint16", "int32", "uint32")}
# TPartArgOps masks a float16 repeat of 128 lanes to its low 64 for 32-bit indices
_WIDE_INDEX_COLS = 64


def _fail(comp, node, call, msg, hint=None):
    comp.error(node, f"{call}: {msg}", hint)


@LOWERINGS.family_lowering("tile_part_arg", checks=(aicore_only,), per_builtin=True)
def lower_partial_arg(comp, node, args, builtin):
    """TPARTARGMAX / TPARTARGMIN over dst's valid region, after checkTiles (TPartArgOp.hpp lines
    173-221) and TPartArgInstr's one-smaller-source rule (line 147): the operands are the six
    tiles, the compared region, the sources' valid regions and the six row pitches."""
    spec, call = builtin.specs[0], f"pto.{builtin.name}"
    names = ("dst", "dst_idx", "src0", "src0_idx", "src1", "src1_idx")
    tiles = dict(zip(names, comp.typed_tiles(spec, node, args, names)))
    dst, dsti, s0, i0, s1, i1 = (tiles[n] for n in names)
    for t in (s0, s1):
        if t.dtype != dst.dtype:
            _fail(comp, node, call, f"'{t.name}' holds {t.dtype} and '{dst.name}' {dst.dtype} (\"TPARTARGOPS: "
                                    f"dstVal srcVal0 srcVal1 type must be consistent\", {_HEADER})")
    for t in (i0, i1):
        if t.dtype != dsti.dtype:
            _fail(comp, node, call, f"'{t.name}' holds {t.dtype} and '{dsti.name}' {dsti.dtype} (\"TPARTARGOPS: "
                                    f"dstIdx srcIdx0 srcIdx1 type must be consistent\", {_HEADER})")
    if dst.dtype.name not in _INDEX_DTYPES:
        _fail(comp, node, call, f"'{dst.name}' holds {dst.dtype} (\"TPARTARGOPS: val type only support float, "
                                f"half.\", {_HEADER})", "select float32 or float16 values")
    allowed = _INDEX_DTYPES[dst.dtype.name]
    if dsti.dtype.name not in allowed:
        _fail(comp, node, call, f"'{dsti.name}' holds {dsti.dtype}; {dst.dtype} values take {', '.join(allowed)} "
                                f"indices (\"TPARTARGOPS: idx type must be integral type.\", {_HEADER})")
    for t in tiles.values():
        if t.tile.layout != "row":
            _fail(comp, node, call, f"'{t.name}' is ColMajor; pypto_sim builds {spec.name} on RowMajor tiles "
                                    f"({_HEADER} walks each tile's rows at its RowStride)")
    regions = {}
    for n, t in tiles.items():
        rows, cols = t.tile.valid_rows, t.tile.valid_cols
        if not (isinstance(rows, Const) and isinstance(cols, Const)):
            _fail(comp, node, call, f"'{t.name}' has a valid region known only at run time; a partial arg-selection "
                                    "with one is not built", "give the tiles constant valid=(rows, cols)")
        regions[n] = (int(rows.value), int(cols.value))
    for val, idx in (("dst", "dst_idx"), ("src0", "src0_idx"), ("src1", "src1_idx")):
        if regions[val] != regions[idx]:
            (vr, vc), (ir, ic) = regions[val], regions[idx]
            _fail(comp, node, call, f"'{tiles[idx].name}' has a valid region of {ir} x {ic} and '{tiles[val].name}' "
                                    f"{vr} x {vc} (\"TPARTARGOPS: idxTile validRow/validCol must be consistent with "
                                    f"of valTile.\", {_HEADER})", "give each index tile its value tile's valid=")
    (dr, dc), (r0, c0), (r1, c1) = regions["dst"], regions["src0"], regions["src1"]
    if (dr, dc) != (max(r0, r1), max(c0, c1)):
        _fail(comp, node, call, f"'{dst.name}' has a valid region of {dr} x {dc} but the larger of '{s0.name}' "
                                f"({r0} x {c0}) and '{s1.name}' ({r1} x {c1}) is {max(r0, r1)} x {max(c0, c1)} "
                                f"(\"TPARTARGOPS: dst valid size must be consistent with src of bigger size.\", "
                                f"{_HEADER})")
    if c0 != c1 and not ((r0 <= r1 and c0 < c1) or (r1 <= r0 and c1 < c0)):
        _fail(comp, node, call, f"'{s0.name}' ({r0} x {c0}) and '{s1.name}' ({r1} x {c1}) are each smaller than "
                                f"dst's {dr} x {dc} in one direction (\"TPARTARGOPS: Only one of src0 and src1 is "
                                f"smaller than dst.\", {_HEADER} TPartArgInstr)",
                   "let one source cover dst's valid region")
    rows, cols = min(r0, r1), min(c0, c1)
    if dst.dtype == dtypes.float16 and dsti.dtype.itemsize == 4 and cols > _WIDE_INDEX_COLS:
        _fail(comp, node, call, f"float16 values with {dsti.dtype} indices over {cols} compared columns are not "
                                f"built: TPartArgOps sets the mask to the low {_WIDE_INDEX_COLS} lanes of a 128-lane "
                                "float16 repeat (set_vector_mask(0, -1)) and selects the indices as 64-lane float "
                                f"repeats, so the device leaves columns past {_WIDE_INDEX_COLS} of each repeat "
                                f"unselected ({_HEADER} lines 56-61, 51)",
              f"compare at most {_WIDE_INDEX_COLS} columns of float16 with 32-bit indices, or use 16-bit indices")
    sizes = {"rows": rows, "cols": cols, "rows0": r0, "cols0": c0, "rows1": r1, "cols1": c1,
             **{p: tiles[n].tile.row_pitch for p, n in zip(("dpitch", "dipitch", "pitch0", "ipitch0", "pitch1",
                                                            "ipitch1"), names)}}
    ops = [comp._base(tiles[n], node, call) for n in names]
    ops += [comp._int_operand(Const(sizes[o.name], dtypes.int32), node, o.name) for o in spec.value_operands[6:]]
    comp.emit(spec.name, None, tuple(ops), dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = (f"{dst.name}, {dsti.name} <- {builtin.name[5:]}({s0.name}, {s1.name}) over "
                               f"{rows} x {cols} of {dr} x {dc}")
