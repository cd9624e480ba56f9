"""Compare, select and pattern instructions on typed Vec tiles (TCMP, TCMPS, TSEL, TSELS,
TTRI; isa/41_mask.toml; TCI, isa/46_sequence.toml): their operands, the packed uint8 mask's
shape, and the A2/A3 restrictions of pto-isa's implementation checks, as compile errors at the
kernel's line."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import NONE, Const, Text

# the dtypes of a mask TSEL / TSELS read as raw bits (TSel.hpp, TSels.hpp: any; words of float
# dtypes hold numbers here, not bits, so the integer ones)
INTEGER_MASKS = ("uint8", "int8", "uint16", "int16", "uint32", "int32")
CMP_MODES = ("eq", "ne", "lt", "gt", "le", "ge")          # CmpMode, in the order of the table's `c`
INT32_CMP_MODES = ("eq", "ne")    # A2/A3 compares int32 by vcmp*_eq, and vnot's the result for NE


def _full_rows(comp, t, node, call):
    vc = t.tile.valid_cols
    if not (isinstance(vc, Const) and int(vc.value) == t.tile.cols):
        comp.error(node, f"pto.{call}: a valid column count below the tile's ({t.tile.cols}) is "
                         "not built for masks", "allocate the tile with the valid number of columns")
    return t.tile.valid_rows, Const(t.tile.cols, dtypes.int32)


def _same_shape(comp, node, call, ref, *others):
    for t in others:
        if (t.tile.rows, t.tile.cols) != (ref.tile.rows, ref.tile.cols):
            comp.error(node, f"pto.{call}: '{t.name}' is {t.tile.rows} x {t.tile.cols} but "
                             f"'{ref.name}' is {ref.tile.rows} x {ref.tile.cols}")
        if t.dtype != ref.dtype:
            comp.error(node, f"pto.{call}: '{t.name}' holds {t.dtype} but '{ref.name}' {ref.dtype}")


def _sel_region(comp, node, call, spec, dst, sources):
    """TSEL / TSELS cover dst's valid region, each row masked to validCol, every tile at its own
    RowStride (TSel.hpp lines 48-59, TSels.hpp lines 36-45): the sources may be tiles of other
    shapes whose words hold that region; TSELS asserts its source's valid region is dst's
    (TSels.hpp lines 64-65), TSEL reads its sources' rows whatever theirs. Returns (rows, cols)."""
    rows, cols = dst.tile.valid_rows, dst.tile.valid_cols
    for t in sources:
        if t.dtype != dst.dtype:
            comp.error(node, f"pto.{call}: '{t.name}' holds {t.dtype} but '{dst.name}' {dst.dtype}")
        if spec.name == "TSELS":
            for what in ("rows", "columns"):
                comp.match_valid(node, f"pto.{call}", t, dst, what, "TSELS_IMPL in include/pto/npu/a2a3/"
                                                                     "TSels.hpp lines 64-65")
        for v, lim, what in ((rows, t.tile.rows, "rows"), (cols, t.tile.cols, "columns")):
            if isinstance(v, Const) and int(v.value) > lim:
                comp.error(node, f"pto.{call}: '{dst.name}' has {int(v.value)} valid {what} but '{t.name}' "
                                 f"has {lim}; A2/A3 reads dst's valid region from each source (TSel.hpp)",
                           "allocate the sources at least as large as dst's valid region")
    return rows, cols


def _mask_shape(comp, node, call, mask, data, raw_bits=False):
    """A mask holds a bit per element of data, packed: TCMP / TCMPS write uint8, at least
    ceil(cols / 8) a row; TSEL / TSELS (raw_bits) read a row's bits from the mask tile's row
    whatever its integer dtype (TSel.hpp / TSels.hpp cast the pointer), at least ceil(cols /
    bits) elements a row. Returns the mask element's bits."""
    ok = mask.dtype.name in INTEGER_MASKS if raw_bits else mask.dtype == dtypes.uint8
    if not ok:
        what = ("an integer tile (its raw bits, TSel.hpp)" if raw_bits else
                "a uint8 tile (packed predicate bits, TCMP.md)")
        comp.error(node, f"pto.{call}: the mask '{mask.name}' must be {what}, not {mask.dtype}")
    bits = 8 * mask.dtype.itemsize
    need = -(-data.tile.cols // bits)
    if mask.tile.cols < need or mask.tile.rows < data.tile.rows:
        comp.error(node, f"pto.{call}: the mask '{mask.name}' is {mask.tile.rows} x {mask.tile.cols} "
                         f"{mask.dtype}; {data.tile.rows} rows of {data.tile.cols} elements need "
                         f"{data.tile.rows} x {need} (one bit each)",
                   f"allocate it as pto.alloc_tile({data.tile.rows}, {max(32 // mask.dtype.itemsize, need)}, "
                   f"pto.{mask.dtype.name}, loc=pto.Vec)")
    return bits


def _cmpmask_tmp(comp, spec, node, args, data):
    """TSEL's / TSELS's tmp: A2/A3 writes cmpmaskLen uint32 there for TSEL (TSel.hpp: 4 for
    2-byte data, 2 for 4-byte), whatever tmp's dtype (it casts the pointer), and the scalar
    to tmp[0] for TSELS (TSels.hpp, through a pointer of the data's type: TSELS.md asks tmp of
    the data's dtype, the header does not); every Vec tile holds either (its rows are whole
    32-byte blocks). Its values are not modelled. dst when left out."""
    if args.get("tmp", NONE) is NONE:
        return args["dst"]
    tmp = comp.typed_tile(args["tmp"], node, spec, "tmp", f"pto.{spec.builtin}: tmp")
    return tmp


def _mode(comp, value, node, call, dtype):
    if not (isinstance(value, Text) and value.value in CMP_MODES):
        comp.error(node, f"pto.{call}: mode must be one of {', '.join(map(repr, CMP_MODES))}")
    if dtype == dtypes.int32 and value.value not in INT32_CMP_MODES:
        comp.error(node, f"pto.{call}: int32 tiles compare only for 'eq' and 'ne' on A2/A3 "
                         f"(pto-isa include/pto/npu/a2a3/{'TCmps.hpp' if call == 'tcmps' else 'TCmp.hpp'}: "
                         f"the int32 path is vcmp*_eq whatever the mode, inverted by vnot for "
                         f"NE; {value.value!r} would silently compare for equality), not "
                         f"{value.value!r}", "compare float32 tiles, or use mode='eq' or 'ne'")
    return Const(CMP_MODES.index(value.value), dtypes.int32)


def _scalar(comp, value, dtype, node, call):
    comp.require_value(value, node)
    if hasattr(value, "uniform") and not value.uniform:
        comp.error(node, f"pto.{call}: scalar must be uniform")
    return comp.operand(value, dtype, node)


def _mask_op(comp, name, node, args):
    """TCMP / TCMPS (the mask is dst, the data a) and TSEL / TSELS (the mask is an input,
    the data dst): the tiles' checks, then the operands in the ISA record's order."""
    spec, call = comp.isa[name], comp.isa[name].builtin
    names = [o.name for o in spec.value_operands if o.kind == "tile" and o.name != "tmp"]
    tiles = dict(zip(names, comp.typed_tiles(spec, node, args, names)))
    mask_name, data_name = ("dst", "a") if spec.family == "tile_cmp" else ("mask", "dst")
    mask, data = tiles[mask_name], tiles[data_name]
    others = [t for n, t in tiles.items() if n not in (mask_name, data_name)]
    if data.dtype.name not in spec.dtypes:
        comp.error(node, f"pto.{call} takes {', '.join(spec.dtypes)} tiles, not {data.dtype}")
    bits = _mask_shape(comp, node, call, mask, data, raw_bits=spec.family == "tile_sel")
    if spec.family == "tile_sel":
        rows, cols = _sel_region(comp, node, call, spec, data, others)
    else:
        _same_shape(comp, node, call, data, *others)
        rows, cols = _full_rows(comp, data, node, call)
    sizes = {"rows": rows, "cols": cols, "mstride": Const(mask.tile.row_pitch, dtypes.int32),
             "mbits": Const(bits, dtypes.int32)}
    sizes.update((p, Const(tiles[t].tile.row_pitch, dtypes.int32))
                 for p, t in (("dpitch", "dst"), ("apitch", "a"), ("bpitch", "b")) if t in tiles)
    ops = []
    for o in spec.value_operands:
        if o.name == "tmp":
            ops.append(comp._base(_cmpmask_tmp(comp, spec, node, args, data), node, call))
        elif o.kind == "tile":
            ops.append(comp._base(tiles[o.name], node, call))
        elif o.name == "scalar":
            ops.append(_scalar(comp, args["scalar"], data.dtype, node, call))
        elif o.name == "mode":
            ops.append(_mode(comp, args["mode"], node, call, data.dtype))
        else:
            ops.append(comp._int_operand(sizes[o.name], node, o.name))
    comp.emit(name, None, tuple(ops), data.dtype, node, aux=comp.tile_aux())
    other = tiles["b"].name if "b" in tiles else "scalar"
    comp.instrs[-1].comment = (f"{mask.name} <- {data.name} {args['mode'].value} {other}"
                               if spec.family == "tile_cmp" else
                               f"{data.name} <- {mask.name} ? {tiles['a'].name} : {other}")


@LOWERINGS.lowering("ttri", checks=(aicore_only,))
def lower_ttri(comp, node, args):
    spec = comp.isa["TTRI"]
    (dst,) = comp.typed_tiles(spec, node, args, ("dst",))
    if dst.dtype.name not in spec.dtypes:
        comp.error(node, f"pto.ttri fills {', '.join(spec.dtypes)} tiles, not {dst.dtype}")
    upper = args["upper"]
    if not isinstance(upper, Const):
        comp.error(node, "pto.ttri: upper must be True or False, known at compile time")
    # dst's valid region at its row pitch, each row masked to validCol (TTri.hpp)
    ops = [comp._base(dst, node, "ttri"), comp._int_operand(args["diagonal"], node, "pto.ttri: diagonal"),
           comp._int_operand(Const(int(bool(upper.value)), dtypes.int32), node, "upper"),
           comp._int_operand(dst.tile.valid_rows, node, "rows"), comp._int_operand(dst.tile.valid_cols, node, "cols"),
           comp._int_operand(Const(dst.tile.row_pitch, dtypes.int32), node, "dpitch")]
    comp.emit("TTRI", None, tuple(ops), dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- {'upper' if upper.value else 'lower'} triangle"


def tile_words(t, count=None):
    """The unit-memory words of typed tile t's first count elements (all: None) in row-major
    order at its row pitch; None when its place is known only at run time (a tile group's)."""
    if not isinstance(t.offset, Const):
        return None
    info = t.tile
    k = np.arange(info.rows * info.cols if count is None else min(count, info.rows * info.cols), dtype=np.int64)
    return t.base + int(t.offset.value) + (k // info.cols) * info.row_pitch + k % info.cols


def share_words(a, b) -> bool:
    """Whether typed tiles a and b are one tile or views with words in common (known places
    only: a tile group's is known at run time)."""
    wa, wb = tile_words(a), tile_words(b)
    return a.name == b.name or (wa is not None and wb is not None and np.intersect1d(wa, wb).size > 0)


# TCI's scratch, by the element size: the highest byte its vector path touches (TCI.md,
# "Temporary tile"): two 64-float buffers 128 floats apart for 32-bit types, four buffers up
# to 384 floats and 128 halves for 16-bit ones
TCI_TMP_BYTES = {4: 768, 2: 1792}


@LOWERINGS.lowering("tci", checks=(aicore_only,))
def lower_tci(comp, node, args):
    """pto.tci(dst, start, tmp, descending=False): TCI's operands in its record's order, after
    A2/A3's checks (TCI.hpp): an integer one-row dst, a tmp of the vector path's size whose
    scratch bytes are not dst's, an integer start, a constant descending; without tmp, TCI_S,
    the scalar loop of TCI(dst, start)."""
    scalar = args.get("tmp", NONE) is NONE          # TCI(dst, start): TCI.hpp's scalar loop (TCI_S)
    spec = comp.isa["TCI_S" if scalar else "TCI"]
    dst, tmp = (comp.typed_tiles(spec, node, args, ("dst",) if scalar else ("dst", "tmp")) + [None])[:2]
    if dst.dtype.name not in spec.dtypes:
        comp.error(node, f"pto.tci fills {', '.join(spec.dtypes)} tiles, not {dst.dtype}",
                   "A2/A3's TCI adds in integer vector lanes (TCI.hpp); fill an int32 tile and "
                   "pto.tcvt it")
    if dst.tile.rows != 1:
        comp.error(node, f"pto.tci: '{dst.name}' has {dst.tile.rows} rows; TCI fills one row "
                         "(TCI.hpp: static_assert TileData::Rows == 1)", "allocate it as 1 x cols")
    if not scalar:
        _check_tci_tmp(comp, node, dst, tmp)
    start, descending = args["start"], args["descending"]
    if isinstance(start, Const) and float(start.value) != int(start.value):
        comp.error(node, f"pto.tci: start {start.value} is not an integer; TCI's start has the "
                         f"tile's type ({dst.dtype})")
    if not isinstance(descending, Const):
        comp.error(node, "pto.tci: descending must be True or False, known at compile time")
    # the record's descending: 1 the vector path's -(start + k), 2 the scalar loop's start - k
    down = int(bool(descending.value)) * (2 if scalar else 1)
    sizes = {"rows": Const(1, dtypes.int32), "cols": dst.tile.valid_cols, "descending": Const(down, dtypes.int32)}
    ops = []
    for o in spec.value_operands:
        if o.kind == "tile":
            ops.append(comp._base(dst if o.name == "dst" else tmp, node, "tci"))
        elif o.name == "start":
            ops.append(_scalar(comp, start, dst.dtype, node, "tci"))
        else:
            ops.append(comp._int_operand(sizes[o.name], node, o.name))
    comp.emit(spec.name, None, tuple(ops), dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- " + ("start - k" if down == 2 else "-(start + k)" if down else "start + k")


def _check_tci_tmp(comp, node, dst, tmp):
    """The vector path's tmp: the size TCI.md gives, its scratch bytes apart from dst's."""
    need, have = TCI_TMP_BYTES[dst.dtype.itemsize], tmp.tile.rows * tmp.tile.cols * tmp.dtype.itemsize
    if have < need:
        comp.error(node, f"pto.tci: tmp '{tmp.name}' holds {have} bytes; the vector path for "
                         f"{dst.dtype} uses {need} (TCI.md, Temporary tile)",
                   "allocate 2 KiB, e.g. pto.alloc_tile(1, 512, pto.float32, loc=pto.Vec)")
    used, written = tile_words(tmp, -(-need // tmp.dtype.itemsize)), tile_words(dst)
    shared = np.intersect1d(used, written) if used is not None and written is not None else ()
    if len(shared):
        comp.error(node, f"pto.tci: tmp '{tmp.name}' and dst '{dst.name}' share {len(shared)} words; A2/A3 "
                         f"builds 0..{63 if dst.dtype.itemsize == 4 else 127} in tmp's first {need} bytes "
                         "and adds start to it into dst (TCI.hpp), so dst would read its own results",
                   "give tmp a tile of its own")


# pto.tcmp, tcmps, tsel, tsels: one lowering, from each instruction's ISA record
@LOWERINGS.lowering("tcmp", "tcmps", "tsel", "tsels", checks=(aicore_only,), per_builtin=True)
def lower_mask_op(comp, node, args, builtin):
    return _mask_op(comp, builtin.specs[0].name, node, args)
