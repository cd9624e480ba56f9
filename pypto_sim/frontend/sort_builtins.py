"""Lowering of the sort family on typed Vec tiles (isa/44_sort.toml): pto.tsort32,
pto.tmrgsort (PTO-ISA's two forms: blocks of one list, or 2 to 4 lists) and the mask-pattern
pto.tgather, on float32 or float16 tiles (8-byte (value, index) structures; TGATHER also reads
an int32 view of float16 words, pto.treshape(..., dtype=pto.int32), and moves the bits of 32-bit
words between float32 and int32 tiles), with the checks of
pto-isa's A2/A3 and CPU implementations (include/pto/npu/a2a3/TSort32.hpp, TMrgSort.hpp,
TGather.hpp) as compile errors at the kernel's line. Every shape is static: the kernels that
use them (pto-isa's topk) bind one-row views.

Functions of the kernel compiler ``comp``; the builtins' lowerings are registered in
registry.py's LOWERINGS.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..isa.sort_modes import (AXIS_COL, BLOCK_BYTES, EXHAUSTED, GATHER_BLOCKS, INDEXED, ITEM_SHIFT, MODE_F16, SCATTER,
                              SORT_MODES, STRUCT_BYTES, TO_F32_BITS, TO_I32_BITS)
from ..isa.tile_roles import GATHER_PATTERNS, gather_picks, gather_selects
from .mask_builtins import share_words, tile_words
from .registry import LOWERINGS
from .values import NONE, Const, Ptr, Text



def _sort_tiles(comp, spec, node, named):
    return {k: comp.typed_tile(v, node, spec, k, f"pto.{spec.builtin or 'tmrgsort'}: {k}")
            for k, v in named.items()}


def _sort_valid(comp, t, node, call):
    """(valid rows, valid cols) of t, which must be static and t's rows contiguous."""
    vr, vc = t.tile.valid_rows, t.tile.valid_cols
    if not (isinstance(vr, Const) and isinstance(vc, Const)):
        comp.error(node, f"{call}: '{t.name}' needs a static valid region (sorts are built for "
                         "static shapes)", "allocate the tile or view with constant valid=(rows, cols)")
    return int(vr.value), int(vc.value)


def _sort_emit(comp, name, node, tiles, k, rows, cols, dtype, comment, half=False, bits=0, spitch=0, dpitch=0,
               extra=None):
    """Emit `name` over tiles with the kernel's mode (| MODE_F16 for float16 words, | bits:
    TGATHER's TO_I32_BITS or TO_F32_BITS, and AXIS_COL) and the k, rows, cols (and TGATHER's
    spitch and dpitch: src's and dst's row pitches, 0 dense; extra: other value operands by name,
    TMRGSORT_LISTS' k1, k2 and dcols) operands. Only TGATHER's src may be an int32 view of float16
    words."""
    spec = comp.isa[name]
    ops = []
    for o in spec.value_operands:
        if o.kind == "tile":
            reinterpreted = name == "TGATHER" and o.name == "src"
            ops.append(comp.tile_base(tiles[o.name], node, f"pto.{spec.builtin}: {o.name}", reinterpreted)[0])
        else:
            value = {"mode": SORT_MODES[name] | (MODE_F16 if half else 0) | bits, "k": k, "rows": rows,
                     "cols": cols, "spitch": spitch, "dpitch": dpitch, **(extra or {})}[o.name]
            ops.append(comp._int_operand(Const(value, dtypes.int32), node, o.name))
    comp.emit(name, None, tuple(ops), dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = comment


def _structure_words(comp, node, call, *tiles):
    """Words of one (value, index) structure of the tiles' dtype, which they must share: 2 for
    float32, 4 for float16."""
    dtype = tiles[0].dtype
    for t in tiles:
        if t.dtype not in (dtypes.float32, dtypes.float16) or t.dtype != dtype:
            comp.error(node, f"{call}: '{t.name}' holds {t.dtype}; the sorts take float32 or float16 "
                             f"tiles, all of one dtype ('{tiles[0].name}' holds {dtype})")
    return STRUCT_BYTES // dtype.itemsize


@LOWERINGS.lowering("tsort32")
def lower_tsort32(comp, node, args):
    """TSORT32(dst, src, idx[, tmp]): A2/A3 TSort32.hpp / CPU TSort32.hpp."""
    spec, call = comp.isa["TSORT32"], "pto.tsort32"
    t = _sort_tiles(comp, spec, node, {"dst": args["dst"], "src": args["src"], "idx": args["idx"]})
    dst, src, idx = t["dst"], t["src"], t["idx"]
    width = _structure_words(comp, node, call, dst, src)
    if idx.dtype != dtypes.uint32:
        comp.error(node, f"{call}: the index tile '{idx.name}' holds {idx.dtype}; A2/A3's TSORT32 takes a "
                         "uint32 one (\"Idx must be uint32_t.\", include/pto/npu/a2a3/TSort32.hpp)",
                   f"allocate '{idx.name}' with pto.uint32")
    rows, cols = _sort_valid(comp, src, node, call)
    if cols % 32 and args.get("tmp", NONE) is NONE:
        # TSort32.hpp's 3-argument form sorts validCol / 32 whole blocks a row: the last cols % 32
        # elements are neither sorted nor written (TSORT32.md: "validCol % 32 == 0 (3-arg)")
        comp.error(node, f"{call}: '{src.name}' has {cols} valid columns, not a whole number of 32-element "
                         f"blocks: A2/A3's 3-argument TSORT32 sorts whole blocks only and leaves the last "
                         f"{cols % 32} unsorted and unwritten (TSORT32.md: \"validCol % 32 == 0 (3-arg)\")",
                   "pass tmp= (the 4-argument form pads the tail), or give a multiple of 32 valid columns")
    if cols % 32:
        # the 4-argument form copies the row into tmp and pads its last block with -inf (TSORT32.md's
        # tmp size equation, A2/A3's path A: a row of at most 8160 elements)
        tmp = comp.typed_tile(args["tmp"], node, spec, "src", f"{call}: tmp")
        need = -(-cols // 32) * 32
        if tmp.dtype != src.dtype or tmp.tile.rows * tmp.tile.cols < need or cols > 8160:
            comp.error(node, f"{call}: tmp '{tmp.name}' ({tmp.tile.rows} x {tmp.tile.cols} {tmp.dtype}) must hold "
                             f"{need} {src.dtype} elements, the {cols} of a row padded to whole 32-element blocks "
                             "(TSORT32.md's tmp size equation; rows of at most 8160 elements are built)")
    irows, icols = _sort_valid(comp, idx, node, call)
    if icols < cols or irows not in (1, rows):
        comp.error(node, f"{call}: '{idx.name}' ({irows} x {icols} valid) must give an index for each of "
                         f"the {cols} columns, in one row or in each of {rows}")
    if dst.tile.rows * dst.tile.cols < rows * width * cols or \
            (rows > 1 and dst.tile.cols != width * cols):
        comp.error(node, f"{call}: '{dst.name}' ({dst.tile.rows} x {dst.tile.cols}) must hold {rows} rows "
                         f"of {width * cols} words ((value, index) structures of {width} {src.dtype} words)")
    if rows > 1 and src.tile.cols != cols:
        comp.error(node, f"{call}: '{src.name}' rows must be whole ({cols} of {src.tile.cols} valid)")
    ipitch = 0 if irows == 1 else idx.tile.cols
    _sort_emit(comp, "TSORT32", node, t, ipitch, rows, cols, src.dtype,
               f"{dst.name} <- sort32({src.name}, {idx.name})", half=width == STRUCT_BYTES // 2)


@LOWERINGS.lowering("tmrgsort")
def lower_tmrgsort(comp, node, args):
    """TMRGSORT(dst, src, block_len) or TMRGSORT(dst, executedNumList, tmp, src0, src1[, src2[,
    src3]]) as pto.tmrgsort(dst, src0, src1=, src2=, src3=, tmp=, exhausted=): TMrgSort.hpp."""
    call = "pto.tmrgsort"
    if args["src1"] is not NONE:
        return _merge_lists(comp, node, call, args)
    for name in ("src2", "src3", "tmp"):
        if args[name] is not NONE:
            comp.error(node, f"{call}: {name} belongs to the multi-list form, which takes src1 too "
                             "(pto.tmrgsort(dst, src0, src1=, src2=, src3=, tmp=))")
    exhausted = args["exhausted"]
    if exhausted is not NONE and not (isinstance(exhausted, Const) and exhausted.value is False):
        comp.error(node, f"{call}: exhausted belongs to the multi-list form; the one-list form merges its blocks "
                         "without suspension (TMRGSORT.md: \"No exhausted parameter\")")
    spec = comp.isa["TMRGSORT"]
    t = _sort_tiles(comp, spec, node, {"dst": args["dst"], "src": args["src"]})
    dst, src = t["dst"], t["src"]
    width = _structure_words(comp, node, call, dst, src)
    for v in (dst, src):
        _one_row(comp, node, call, v)
    block = args["block_len"]
    if not isinstance(block, Const) or int(block.value) <= 0 or int(block.value) % 64:
        comp.error(node, f"{call}: block_len must be a constant multiple of 64 words (TMrgSort.hpp: "
                         f"blockLen % 64 == 0; 64 words = {64 // width} (value, index) structures of {src.dtype})")
    block = int(block.value)
    r, cols = _sort_valid(comp, src, node, call)
    if r != 1 or cols % (4 * block) or not 1 <= cols // (4 * block) <= 255:
        comp.error(node, f"{call}: '{src.name}' must be one row whose valid words ({r} x {cols}) are 1 to "
                         f"255 groups of 4 blocks of {block} (TMrgSort.hpp's asserts)")
    if _sort_valid(comp, dst, node, call)[1] < cols:
        comp.error(node, f"{call}: '{dst.name}' must hold the {cols} words of '{src.name}'")
    _sort_emit(comp, "TMRGSORT", node, t, block, 1, cols, dst.dtype,
               f"{dst.name} <- mrgsort({src.name}, {block})", half=width == STRUCT_BYTES // 2)


def _one_row(comp, node, call, t):
    """A2/A3 TMrgSort.hpp's CheckStatic (and the CPU simulation's CheckMrgSortTileConstraints):
    every tile of a merge is a tile type of one row (its Rows, not only its valid rows)."""
    if t.tile.rows != 1:
        comp.error(node, f"{call}: '{t.name}' is a tile of {t.tile.rows} rows (\"TMrgsort: the row of Destination "
                         "and Source tile must be 1.\", include/pto/npu/a2a3/TMrgSort.hpp CheckStatic: the tile "
                         "type's Rows, whatever its valid rows)",
                   f"allocate '{t.name}' with 1 row, or pass pto.tsubview(tile, row, 0, 1, cols) of one row")


def _same_words(a, b) -> bool:
    """Whether typed tiles a and b are known to hold exactly the same words (one tile, or views
    of it that cover the same words; not when a place is known only at run time)."""
    wa, wb = tile_words(a), tile_words(b)
    return wa is not None and wb is not None and np.array_equal(wa, wb)


def _merge_lists(comp, node, call, args):
    """TMRGSORT's multi-list form: A2/A3 TMrgSort.hpp's CheckStatic, CheckOverMemory and
    PTO_ASSERTs (lines 164-277, cited by their messages) and TMRGSORT.md's tmp size as compile
    errors. The record names src1 for an absent src2 and src3, src2 for an absent src3, as
    TMRGSORT_IMPL passes them (their list lengths are 0); tmp is written (the merge), then dst
    (tmp's first dcols words)."""
    spec, where = comp.isa["TMRGSORT_LISTS"], "include/pto/npu/a2a3/TMrgSort.hpp"
    if args["block_len"] is not NONE:
        comp.error(node, f"{call}: give block_len (one list of blocks) or src1 (2 to 4 lists), not both")
    if args["src3"] is not NONE and args["src2"] is NONE:
        comp.error(node, f"{call}: src3 without src2; pto-isa's forms merge src0, src1[, src2[, src3]]")
    if args["tmp"] is NONE:
        comp.error(node, f"{call}: the multi-list form takes tmp, the tile vmrgsort4 merges into before the copy to "
                         f"dst (TMRGSORT(dst, executedNumList, tmp, src0, src1, ...), {where})",
                   "pass tmp= a 1-row tile of at least the lists' words (GETMRGSORTTMPSIZE)")
    exhausted = args["exhausted"]
    if exhausted is not NONE and not (isinstance(exhausted, Const) and isinstance(exhausted.value, bool)):
        comp.error(node, f"{call}: exhausted must be True or False, known when the kernel compiles (a template "
                         "parameter of TMRGSORT)")
    names = [n for n in ("src", "src1", "src2", "src3") if args[n] is not NONE]
    t = _sort_tiles(comp, spec, node, {n: args[n] for n in ["dst", "tmp"] + names})
    dst, tmp, lists = t["dst"], t["tmp"], [t[n] for n in names]
    if dst.dtype not in (dtypes.float32, dtypes.float16):
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} (\"TMrgsort: Unsupported data type! Supported "
                         f"types is half/float\", {where})")
    for v in [tmp] + lists:
        if v.dtype != dst.dtype:
            comp.error(node, f"{call}: '{v.name}' holds {v.dtype} and '{dst.name}' {dst.dtype} (\"TMrgsort: "
                             f"Destination and Source tile data types must be the same.\", {where})")
    width = STRUCT_BYTES // dst.dtype.itemsize
    n = []
    for v in [dst, tmp] + lists:
        _one_row(comp, node, call, v)
        c = _sort_valid(comp, v, node, call)[1]
        if c % width or c == 0:
            comp.error(node, f"{call}: '{v.name}' has {c} valid words, not a whole number (at least 1) of (value, "
                             f"index) structures of {width} words: A2/A3 counts a list's validCol >> "
                             f"{width // 2} structures and copies all of dst's valid words ({where}), the CPU "
                             f"simulation validCol / {width} of each; pypto_sim takes whole structures only",
                       f"give every tile of the merge a multiple of {width} valid words")
        n.append(c)
    dcols, tcols, sizes = n[0], n[1], n[2:]
    total, item = sum(sizes), dst.dtype.itemsize
    if (total + tcols) * item >= 196608:
        comp.error(node, f"{call}: the lists' {total} words and tmp's {tcols} take {(total + tcols) * item} "
                         f"bytes (\"ERROR: Total memory usage exceeds UB limit!\": under UB_SIZE 196608, {where})")
    words = tmp.tile.rows * tmp.tile.cols
    if words < total:
        comp.error(node, f"{call}: tmp '{tmp.name}' holds {words} words, fewer than the {total} merged words "
                         f"A2/A3 writes to it before copying them to '{dst.name}' ({where}; TMRGSORT.md: tmp Cols "
                         "at least the sum of the sources')", "give tmp a row of at least the lists' words")
    if words < dcols:
        comp.error(node, f"{call}: '{dst.name}' has {dcols} valid words and tmp '{tmp.name}' holds {words}; "
                         f"MovUb2Ub copies dst's valid words from tmp ({where})")
    for v in [dst] + lists:
        if share_words(tmp, v) and not (v is dst and _same_words(tmp, dst)):   # tmp = dst: a copy onto itself
            comp.error(node, f"{call}: tmp '{tmp.name}' shares words with '{v.name}'; vmrgsort4 writes the merge "
                             f"into tmp while it reads the lists, and MovUb2Ub copies tmp to dst ({where})",
                       "give tmp words of its own")
    while len(names) < 4:                 # TMRGSORT_IMPL passes the last list for the absent ones
        t[("src", "src1", "src2", "src3")[len(names)]] = t[names[-1]]
        names.append(names[-1])
    sizes += [0] * (4 - len(sizes))
    mode = EXHAUSTED if isinstance(exhausted, Const) and exhausted.value is True else 0
    _sort_emit(comp, "TMRGSORT_LISTS", node, t, sizes[0], 1, total, dst.dtype,
               f"{dst.name} <- merge({', '.join(v.name for v in lists)}){' exhausted' if mode else ''}",
               half=width == STRUCT_BYTES // 2, bits=mode, extra={"k1": sizes[1], "k2": sizes[2], "dcols": dcols})


@LOWERINGS.lowering("tgather")
def lower_tgather(comp, node, args):
    """TGATHER<MaskPattern>(dst, src): A2/A3 TGather.hpp (vreducev2), CPU TGather.hpp. vreducev2
    moves bits and asks only that dst's and src's elements have one size: float32 into int32
    (TO_I32_BITS) or int32, or the int32 view of float16 pairs, into float32 (TO_F32_BITS)
    reinterpret each picked word's 32 bits."""
    spec, call = comp.isa["TGATHER"], "pto.tgather"
    pattern = args["pattern_or_indices"]
    if isinstance(pattern, Ptr):
        return _gather_indexed(comp, node, call, args)
    if args["tmp"] is not NONE:
        comp.error(node, f"{call}: tmp is the index form's scratch (pto.tgather(dst, src, indices, tmp)); the "
                         "mask-pattern form takes none")
    t = _sort_tiles(comp, spec, node, {"dst": args["dst"], "src": args["src"]})
    dst, src = t["dst"], t["src"]
    if not (isinstance(pattern, Text) and pattern.value in GATHER_PATTERNS):
        comp.error(node, f"{call}: the third argument must be a mask pattern, one of "
                         f"{', '.join(map(repr, GATHER_PATTERNS))}, or an index tile (the index form)")
    code = GATHER_PATTERNS[pattern.value]
    for v in (dst, src):
        if v.dtype.name not in spec.dtypes:
            comp.error(node, f"{call}: '{v.name}' holds {v.dtype}; A2/A3's TGATHER takes 2- and 4-byte elements "
                             f"({', '.join(spec.dtypes)}: \"Fix: TGATHER src element type must be 16 or 32-bit "
                             "wide\", include/pto/npu/a2a3/TGather.hpp)")
    pairs = src.tile.storage is not None          # an int32 view of float16 words
    if dst.dtype.itemsize != src.dtype.itemsize:
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} and '{src.name}' {src.dtype}: vreducev2 "
                         "moves elements of one size",
                   "gather 32-bit elements of a float16 row through pto.treshape(row, 1, cols // 2, "
                   "dtype=pto.int32) into an int32 or float32 tile")
    bits = 0                                      # same size, another dtype: the words' bits
    if dst.dtype != src.dtype:
        if {dst.dtype, src.dtype} != {dtypes.int32, dtypes.float32} and not pairs:
            comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} and '{src.name}' {src.dtype}: the bits of a "
                             "gathered element are moved between float32 and int32 only here",
                       "gather into a tile of the source's dtype")
        bits = TO_I32_BITS if dst.dtype == dtypes.int32 else TO_F32_BITS
    axis = args.get("axis", NONE)
    if axis is not NONE and not (isinstance(axis, Text) and axis.value in ("row", "col")):
        comp.error(node, f"{call}: axis must be 'row' or 'col' (pto-isa's GatherAxis::GATHER_ROW, GATHER_COL)")
    if axis is not NONE and axis.value == "col":
        return _gather_rows(comp, node, call, t, code, pattern.value, bits)
    dvc = dst.tile.valid_cols
    if not (isinstance(dvc, Const) and int(dvc.value) == dst.tile.cols):
        comp.error(node, f"{call}: '{dst.name}' has valid columns {getattr(dvc, 'value', dvc)} of {dst.tile.cols}; "
                         "vreducev2 packs the picks from dst's start across its rows (\"Fix: TGATHER expect "
                         "continuous memory for dst.\", include/pto/npu/a2a3/TGather.hpp)",
                   "allocate dst with every column valid")
    rows, cols = _sort_valid(comp, src, node, call)
    if pairs and rows > 1 and src.tile.cols != cols:
        comp.error(node, f"{call}: '{src.name}' rows must be whole ({cols} of {src.tile.cols} valid) for an int32 "
                         "view of float16 words")
    # vreducev2 steps src by its row stride (srcRepeatStride, TGather.hpp) and packs the picks
    spitch = 0 if pairs else src.tile.row_pitch
    picked = rows * sum(gather_selects(code, c) for c in range(cols))
    if dst.tile.rows * dst.tile.cols < picked:
        comp.error(node, f"{call}: '{dst.name}' ({dst.tile.rows} x {dst.tile.cols}) cannot hold the {picked} "
                         f"words {pattern.value} selects from '{src.name}' ({rows} x {cols} valid)",
                   "vreducev2 writes every selected word: make dst (or its row view) that long")
    words = cols * (2 if pairs else 1)            # the record covers the float16 words
    _sort_emit(comp, "TGATHER", node, t, code, rows, words, src.tile.storage or dst.dtype,
               f"{dst.name} <- gather({src.name}, {pattern.value})", half=pairs, bits=bits, spitch=spitch)


def _gather_rows(comp, node, call, t, code, pattern, bits):
    """TGATHER<MaskPattern, GATHER_COL>(dst, src): dst's valid row i = src's row GetStrideByMask(i)
    (its validCol words: A2/A3 TGather.hpp's vcopy), after TGATHER_IMPL's assert "Fix: TGATHER
    validRow of dst must be 2 or 4 times that of src" (src's valid rows are dst's times the
    pattern's period). A2/A3's loop runs i over src's valid rows, not dst's (TGather.hpp lines
    123-128), so the device writes the pattern's period times dst's rows, past dst's valid rows
    and its tile, reading past src's; pypto_sim copies dst's valid rows only (docs/aicore.md)."""
    dst, src = t["dst"], t["src"]
    if src.tile.storage is not None:
        comp.error(node, f"{call}: axis='col' copies whole rows of elements; an int32 view of float16 words is "
                         "not built for it", "gather the float16 tile itself")
    rows, cols = _sort_valid(comp, src, node, call)
    picks, times = _sort_valid(comp, dst, node, call)[0], gather_picks(code)
    if rows != picks * times:
        comp.error(node, f"{call}: '{src.name}' has {rows} valid rows and '{dst.name}' {picks}; {pattern} takes one "
                         f"row of {times}, so src needs {picks * times} (\"Fix: TGATHER validRow of dst must be 2 or "
                         "4 times that of src.\", include/pto/npu/a2a3/TGather.hpp)")
    if dst.tile.cols < cols:
        comp.error(node, f"{call}: '{dst.name}' has {dst.tile.cols} columns, fewer than the {cols} valid columns of "
                         f"'{src.name}' each picked row copies")
    _sort_emit(comp, "TGATHER", node, t, code, picks, cols, dst.dtype,
               f"{dst.name} <- gather rows({src.name}, {pattern})", bits=bits | AXIS_COL,
               spitch=src.tile.row_pitch, dpitch=dst.tile.row_pitch)


def _gather_indexed(comp, node, call, args):
    """TGATHER(dst, src0, indices, tmp): A2/A3 TGather.hpp lines 17-104 with their asserts, as
    compile errors. Per row of dst's valid region, vmuls turns the indices into byte offsets
    (in tmp for 2-byte data, in dst for 4-byte data, whose record then names dst as tmp) and
    vgather reads src's elements at them; rows and cols are dst's valid ones, the index rows at
    the index tile's pitch. The indices themselves are checked against src's elements when the
    values are computed (isa/44_sort.toml)."""
    spec = comp.isa["TGATHER_IDX"]
    if args["tmp"] is NONE:
        comp.error(node, f"{call}: the index form takes a scratch tile: pto.tgather(dst, src, indices, tmp), tmp "
                         "of the indices' dtype and valid region (TGATHER_IMPL's asserts)")
    axis = args.get("axis", NONE)
    if axis is not NONE and not (isinstance(axis, Text) and axis.value == "row"):
        comp.error(node, f"{call}: axis belongs to the mask-pattern form; the index form gathers by its indices")
    t = _sort_tiles(comp, spec, node, {"dst": args["dst"], "src": args["src"], "idx": args["pattern_or_indices"],
                                       "tmp": args["tmp"]})
    dst, src, idx, tmp = t["dst"], t["src"], t["idx"], t["tmp"]
    where = "include/pto/npu/a2a3/TGather.hpp"
    if dst.dtype.itemsize not in (2, 4) or dst.dtype.name not in spec.dtypes:
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype}; A2/A3's index TGATHER takes 2- and 4-byte data "
                         f"({', '.join(spec.dtypes)}: \"Fix: TGATHER expect b16/b32\", {where})")
    if src.dtype != dst.dtype:
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} and '{src.name}' {src.dtype} (\"Fix: TGATHER expect "
                         f"same datatype for src and dst\", {where})")
    if idx.dtype not in (dtypes.int32, dtypes.uint32):
        comp.error(node, f"{call}: the indices '{idx.name}' hold {idx.dtype}; A2/A3 takes int32 or uint32 ones "
                         f"(\"Fix: TGATHER expect b32\", {where})", f"allocate '{idx.name}' with pto.int32")
    if tmp.dtype != idx.dtype:
        comp.error(node, f"{call}: tmp '{tmp.name}' holds {tmp.dtype} and the indices {idx.dtype} (\"Fix: TGATHER "
                         f"expect same datatype for tmp buffer and indice\", {where})")
    for v in (src, idx, tmp, dst):
        if v.tile.storage is not None or v.tile.row_pitch != v.tile.cols:
            comp.error(node, f"{call}: '{v.name}' is a view whose rows lie apart or over another dtype's words; "
                             "the index form reads and writes whole tiles", "pass the tiles themselves")
    rows, cols = _sort_valid(comp, dst, node, call)
    irows, icols = _sort_valid(comp, idx, node, call)
    if _sort_valid(comp, tmp, node, call) != (irows, icols):
        comp.error(node, f"{call}: tmp '{tmp.name}' must have the indices' valid region ({irows} x {icols}) "
                         f"(\"Fix: TGATHER expect same rows / cols for indice and tmp buffer.\", {where})")
    if irows < rows or icols < cols:
        comp.error(node, f"{call}: the indices '{idx.name}' ({irows} x {icols} valid) must give one for each of "
                         f"'{dst.name}''s {rows} x {cols} valid elements")
    if idx.tile.cols != dst.tile.cols:
        comp.error(node, f"{call}: the indices '{idx.name}' have {idx.tile.cols} columns and '{dst.name}' "
                         f"{dst.tile.cols}; pypto_sim reads the indices at dst's row pitch (an index tile of other "
                         "columns is not built)", f"allocate '{idx.name}' with {dst.tile.cols} columns")
    wide = dst.dtype.itemsize == 4
    if not wide and tmp.tile.rows * tmp.tile.cols < (rows - 1) * dst.tile.cols + cols:
        comp.error(node, f"{call}: tmp '{tmp.name}' ({tmp.tile.rows} x {tmp.tile.cols}) is shorter than the "
                         f"{rows} rows of {cols} byte offsets A2/A3 writes to it at '{dst.name}''s row pitch "
                         f"{dst.tile.cols} ({where})")
    bound = src.tile.rows * src.tile.cols
    t["tmp"] = dst if wide else tmp          # where A2/A3 puts the byte offsets
    for out in {id(dst): dst, id(t["tmp"]): t["tmp"]}.values():
        for v in (src, idx):
            if share_words(out, v):
                comp.error(node, f"{call}: '{out.name}' shares words with '{v.name}'; A2/A3 writes it row by row "
                                 f"(the byte offsets, then the gathered row) while later rows still read '{v.name}' "
                                 f"({where} lines 60-86)", "gather between separate tiles")
    _sort_emit(comp, "TGATHER_IDX", node, t, 0, rows, cols, dst.dtype,
               f"{dst.name} <- gather({src.name}, {idx.name})", bits=INDEXED, spitch=bound, dpitch=dst.tile.cols)


def _scatter_data(comp, node, call, spec, dst, src):
    """dst and src of one of TSCATTER_IMPL's data types ("TSCATTER: Invalid data type.", "Data
    type of dst and src must be the same.", include/pto/npu/a2a3/TScatter.hpp)."""
    if dst.dtype.name not in spec.dtypes:
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype}; A2/A3's TSCATTER takes {', '.join(spec.dtypes)} "
                         "(\"TSCATTER: Invalid data type.\", include/pto/npu/a2a3/TScatter.hpp)")
    if src.dtype != dst.dtype:
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} and '{src.name}' {src.dtype} (\"TSCATTER: Data type "
                         "of dst and src must be the same.\", include/pto/npu/a2a3/TScatter.hpp)")


@LOWERINGS.lowering("tscatter")
def lower_tscatter(comp, node, args):
    """TSCATTER(dst, src, indexes) and TSCATTER<MaskPattern, ScatterAxis>(dst, src): A2/A3
    TScatter.hpp, its static_asserts and PTO_ASSERTs as compile errors. dst is zeroed whole
    (InitUBBuffer's vector_dup over its Numel), so a dst of narrower valid region than its tile,
    or a view, is not built for the mask forms (the zeroing is the valid region's here)."""
    call, by = "pto.tscatter", args["pattern_or_indices"]
    if isinstance(by, Ptr):
        return _scatter_indexed(comp, node, call, args)
    if not (isinstance(by, Text) and by.value in GATHER_PATTERNS):
        comp.error(node, f"{call}: the third argument must be a mask pattern, one of "
                         f"{', '.join(map(repr, GATHER_PATTERNS))}, or an index tile (the index form)")
    axis = args.get("axis", NONE)
    if axis is not NONE and not (isinstance(axis, Text) and axis.value in ("row", "col")):
        comp.error(node, f"{call}: axis must be 'row' or 'col' (pto-isa's ScatterAxis::SCATTER_ROW, SCATTER_COL)")
    along_cols = axis is not NONE and axis.value == "col"
    spec = comp.isa["TSCATTER_COL" if along_cols else "TSCATTER"]
    t = _sort_tiles(comp, spec, node, {"dst": args["dst"], "src": args["src"]})
    dst, src = t["dst"], t["src"]
    _scatter_data(comp, node, call, spec, dst, src)
    if GATHER_PATTERNS[by.value] != GATHER_PATTERNS["P1111"] and share_words(src, dst):
        comp.error(node, f"{call}: '{src.name}' shares words with '{dst.name}', which A2/A3 zeroes before it reads "
                         f"'{src.name}' (InitUBBuffer, include/pto/npu/a2a3/TScatter.hpp)",
                   "scatter between separate tiles")
    if along_cols and dst.dtype.itemsize == 1:
        comp.error(node, f"{call}: {dst.dtype} along columns: A2/A3 copies each row with a vcopy of int16 words over "
                         "validCol of them (TScatter.hpp's copyType), 2 x validCol bytes, which is not built",
                   "scatter 1-byte data along rows, or as int16 pairs of a tile of half the columns")
    rows, cols = _sort_valid(comp, src, node, call)
    drows, dcols = _sort_valid(comp, dst, node, call)
    code, where = GATHER_PATTERNS[by.value], "include/pto/npu/a2a3/TScatter.hpp"
    times = gather_picks(code)
    if times == 1:                                # P1111: TSCATTER_IMPL returns TMOV_IMPL(dst, src)
        if (drows, dcols) != (rows, cols):
            comp.error(node, f"{call}: '{dst.name}' ({drows} x {dcols} valid) and '{src.name}' ({rows} x {cols}) "
                             f"must have one valid region for P1111 (\"TSCATTER: validRow / validCol of src must "
                             f"match dst.\", {where})")
        return comp.lower_tile_op(comp.isa["TMOV_V2V"], node, {"dst": dst, "src": src, "n": NONE})
    if along_cols and (drows != rows * times or dcols < cols):
        comp.error(node, f"{call}: '{dst.name}' has {drows} x {dcols} valid and '{src.name}' {rows} x {cols}; "
                         f"{by.value} along columns needs {rows * times} rows (\"TSCATTER: validRow of dst must be 2 "
                         f"or 4 times that of src.\", {where}) of at least {cols} columns")
    if not along_cols and (drows != rows or dcols != cols * times):
        comp.error(node, f"{call}: '{dst.name}' has {drows} x {dcols} valid and '{src.name}' {rows} x {cols}; "
                         f"{by.value} needs {rows} x {cols * times} (\"TSCATTER: validRow of src must match dst.\", "
                         f"\"validCol of dst must be 2 or 4 times that of src.\", {where})")
    if (drows, dcols) != (dst.tile.rows, dst.tile.cols) or dst.tile.storage is not None:
        comp.error(node, f"{call}: '{dst.name}' ({dst.tile.rows} x {dst.tile.cols}, {drows} x {dcols} valid) must be a "
                         f"whole tile: A2/A3 zeroes all of dst first (InitUBBuffer, {where}), and pypto_sim zeroes "
                         "its valid region (a narrower one is not built)", "scatter into a tile of its valid shape")
    _sort_emit(comp, spec.name, node, t, code, rows, cols, dst.dtype,
               f"{dst.name} <- scatter({src.name}, {by.value}{', col' if along_cols else ''})",
               bits=SCATTER | (AXIS_COL if along_cols else 0), spitch=src.tile.row_pitch, dpitch=dst.tile.row_pitch)


def _scatter_indexed(comp, node, call, args):
    """TSCATTER(dst, src, indexes): TSCATTER_IMPL's static_asserts as compile errors; the index
    tile's valid region is what is scattered, src read at its row pitch (SrcTile::Cols), dst's
    words zeroed and named by the indices, which are checked against them when the values are
    computed."""
    spec, where = comp.isa["TSCATTER_IDX"], "include/pto/npu/a2a3/TScatter.hpp"
    if args.get("axis", NONE) is not NONE and args["axis"].value != "row":
        comp.error(node, f"{call}: axis belongs to the mask-pattern form; the index form scatters by its indices")
    t = _sort_tiles(comp, spec, node, {"dst": args["dst"], "src": args["src"], "idx": args["pattern_or_indices"]})
    dst, src, idx = t["dst"], t["src"], t["idx"]
    _scatter_data(comp, node, call, spec, dst, src)
    size = {4: (4,), 2: (2,), 1: (2,)}[dst.dtype.itemsize]
    if idx.dtype not in (dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32) or idx.dtype.itemsize not in size:
        comp.error(node, f"{call}: the indices '{idx.name}' hold {idx.dtype}; for {dst.dtype} data A2/A3 takes "
                         f"{size[0]}-byte int or uint indices (\"TSCATTER: Invalid data type of idx.\", {where})")
    for v in (dst, src, idx):
        if v.tile.storage is not None:
            comp.error(node, f"{call}: '{v.name}' views another dtype's words; the index form takes tiles of their own")
    if dst.tile.row_pitch != dst.tile.cols:
        comp.error(node, f"{call}: '{dst.name}' is a window of a wider tile; the indices name a whole tile's elements",
                   "scatter into the tile itself")
    for v in (src, idx):
        if share_words(v, dst):
            comp.error(node, f"{call}: '{v.name}' shares words with '{dst.name}', which A2/A3 zeroes before it reads "
                             f"'{v.name}' ({where})", "scatter between separate tiles")
    rows, cols = _sort_valid(comp, idx, node, call)
    srows, scols = _sort_valid(comp, src, node, call)
    if srows < rows or scols < cols:
        comp.error(node, f"{call}: the indices '{idx.name}' ({rows} x {cols} valid) reach past '{src.name}''s "
                         f"{srows} x {scols} valid elements, which A2/A3 reads at the same places")
    _sort_emit(comp, "TSCATTER_IDX", node, t, idx.tile.row_pitch, rows, cols, dst.dtype,
               f"{dst.name} <- scatter({src.name}, {idx.name})", bits=SCATTER | INDEXED,
               spitch=src.tile.row_pitch, dpitch=dst.tile.rows * dst.tile.cols)


@LOWERINGS.lowering("tgatherb")
def lower_tgatherb(comp, node, args):
    """TGATHERB(dst, src, offset): A2/A3 TGatherB.hpp with its static_asserts as compile errors.
    dst's valid rows x cols are gathered by GatherBlockHead: per row, vgatherb of whole 256-byte
    repeats, block j of the row from src's start plus offset(i, j) bytes; the offsets are checked
    against src when the values are computed (isa/44_sort.toml)."""
    call, where = "pto.tgatherb", "include/pto/npu/a2a3/TGatherB.hpp"
    spec = comp.isa["TGATHERB"]
    t = _sort_tiles(comp, spec, node, {"dst": args["dst"], "src": args["src"], "idx": args["offsets"]})
    dst, src, off = t["dst"], t["src"], t["idx"]
    if dst.dtype.name not in spec.dtypes:
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype}; A2/A3 gathers 1-, 2- and 4-byte data "
                         f"({', '.join(spec.dtypes)}: \"Fix: TGATHERB has invalid data type.\", {where})")
    if src.dtype != dst.dtype:
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} and '{src.name}' {src.dtype}; pypto_sim's tiles hold "
                         "elements, so a block gather across dtypes is not built", "gather between tiles of one dtype")
    if off.dtype != dtypes.uint32:
        comp.error(node, f"{call}: the offsets '{off.name}' hold {off.dtype}; A2/A3 reads them as uint32 byte offsets "
                         f"({where}: __ubuf__ uint32_t* offsetPtr)", f"allocate '{off.name}' with pto.uint32")
    for v in (dst, src, off):
        if v.tile.storage is not None:
            comp.error(node, f"{call}: '{v.name}' views another dtype's words; TGATHERB takes tiles of their own")
    if src.tile.row_pitch != src.tile.cols:
        comp.error(node, f"{call}: '{src.name}' is a window of a wider tile; the offsets count bytes from the "
                         "start of a whole tile", "gather from the tile itself")
    rows, cols = _sort_valid(comp, dst, node, call)
    item = dst.dtype.itemsize
    repeat = 256 // item
    if cols % repeat:
        comp.error(node, f"{call}: '{dst.name}' has {cols} valid columns of {dst.dtype}, not whole 256-byte repeats "
                         f"of {repeat}: A2/A3 gathers the rest with GatherBlockTail, one vgatherb over the rows of 8 "
                         f"whole blocks a row whose offsets it reads 8 a repeat ({where}), which is not built",
                   f"give '{dst.name}' a multiple of {repeat} valid columns")
    blocks = cols * item // BLOCK_BYTES
    if off.tile.rows < rows or off.tile.cols < blocks:
        comp.error(node, f"{call}: the offsets '{off.name}' ({off.tile.rows} x {off.tile.cols}) must hold one for each "
                         f"of the {blocks} blocks of '{dst.name}''s {rows} valid rows ({cols} x {item} bytes a row)",
                   f"allocate '{off.name}' with at least {rows} rows of {blocks} columns")
    for v in (src, off):
        if share_words(dst, v):
            comp.error(node, f"{call}: '{dst.name}' shares words with '{v.name}', which A2/A3 still reads while it "
                             f"writes '{dst.name}' row by row ({where})", "gather between separate tiles")
    _sort_emit(comp, "TGATHERB", node, t, off.tile.row_pitch, rows, cols, dst.dtype,
               f"{dst.name} <- gatherb({src.name}, {off.name})",
               bits=GATHER_BLOCKS | ((item.bit_length() - 1) << ITEM_SHIFT),
               spitch=src.tile.rows * src.tile.cols, dpitch=dst.tile.row_pitch)
