"""The indexed GM transfers as exec/aicore_tiles.TileOp decodes and runs them (isa/54_gm_index.toml
MGATHER, MGATHER_ELEM, MSCATTER, MSCATTER_ELEM; families tile_gm_gather, tile_gm_scatter): the
table's bounds in its tensor when the instruction is decoded, the index words and the source
values at its start (read), GM or the destination tile at its completion (write), through the
executor module's kernels (exec/compiled/gm_index.py or its numpy twin exec/reference_gm_index.py).
The GM -> L1 forms (MGATHER_L1, MGATHER_L1_ELEM) read their index words from a GM tensor (the
executor's gm_gather), gather through the same kernels and write the Mat tile (and the element
form's GM scratch, in NZ order) at completion (_l1_result, write).

An index the oob policy leaves undefined (isa/gm_index_modes.py UNDEFINED) that names no row or
element of the table stops the launch at the read, before anything is written: the device would
read or write whatever GM holds past the table, so the OutOfBoundsError names the instruction,
its line, the unit, the index's position in the index tile and the GM element it names.

read() also leaves on the TileOp (op.touched) the tensor elements the transfer reads (MGATHER) or
writes (MSCATTER), in the order it moves them: each moved index's row of cols elements at
off + index * stride, or its element at off + index, after the oob policy (a dropped index moves
nothing). With check="race" / "initcheck" the SimPy model compares them with the other GM
accesses when the instruction reads its index tile (timing/aicore.py gm_index_checks, through
gm_accesses: with the GM -> L1 forms' indices and scratch), and initcheck counts MSCATTER's, and
the scratch's, as written at its write.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dtypes import BY_CODE
from ..ir.program import C_DTYPE
from ..isa import gm_layouts
from ..isa.gm_index_modes import DROP, remap
from . import gm

GM_INDEX_FAMILIES = ("tile_gm_gather", "tile_gm_scatter")
INDEX_ITEM = 4                      # an int32 / uint32 index's bytes


def decode(op, iv, named, fault) -> tuple:
    """(GM offset, size, stride, oob, atomic, elem, the GM -> L1 forms' (islot, ioff, sslot,
    soff) or None, tcols, tpitch) of TileOp op (its operands' values iv by name index named),
    after checking that the index tile holds the indices the transfer reads and that the table
    (size rows of the row's columns, stride apart, or size elements; an NZ table, tcols > 0,
    its tcols / c0 column blocks of its rows x c0, tpitch apart) lies in its tensor;
    fault(msg, hint) makes the OutOfBoundsError."""
    rows, cols = op.shape
    data = op.data
    elem = op.spec.name.endswith("_ELEM")
    op._extent(data, rows, cols, "the transfer", fault)
    ir, ic = (rows, cols) if elem else (1, rows)
    l1 = None
    if "islot" in named:                          # the GM -> L1 forms: indices (and scratch) in GM
        l1 = (iv[named["islot"]], iv[named["ioff"]], iv[named["sslot"]] if elem else -1,
              iv[named["soff"]] if elem else 0)
        _in_tensor(op, l1[0], l1[1], ir * ic, "the indices", fault)
        if elem:                                  # the header zeroes and copies the tile's Rows x Cols
            _in_tensor(op, l1[2], l1[3], data.rows * data.cols, f"the scratch of {data.rows} x {data.cols}", fault)
    else:
        idx = op.view["idx"]
        if ir > idx.rows or ic > idx.cols:
            raise fault(f"it reads {ir} x {ic} indices of '{idx.buf.name}', a {idx.rows} x {idx.cols} tile",
                        "keep the index tile's valid shape [1, rows] (coalesce='row') or rows x cols ('elem') "
                        "within the tile")
    off, size = iv[named["table"]], iv[named["size"]]
    stride = 1 if elem else iv[named["stride"]]
    tcols, tpitch = (iv[named["tcols"]], iv[named["tpitch"]]) if "tcols" in named else (0, 0)
    what = f"{size} elements" if elem else f"{size} rows of {cols} elements, {stride} apart"
    if size < 1 or (not elem and stride < 1):
        raise fault(f"a table of {what}: it must hold at least one {'element' if elem else 'row'}, rows at least "
                    "one element apart", "pass the GM table's shape as size= (and its row pitch as stride=)")
    last = off + size if elem else off + (size - 1) * stride + cols
    if tcols > 0:                                 # NZ: tcols / c0 column blocks of trows x c0, tpitch apart
        c0 = gm_layouts.c0_of(data.buf.dtype.itemsize)
        trows = size // tcols if elem else size
        what = f"NZ {trows} x {tcols}, column blocks {tpitch} apart"
        if tpitch < trows * c0:
            raise fault(f"a table of {what}: its column blocks of {trows} x {c0} overlap",
                        "pass stride= at least the table's rows x c0 (the elements between its column blocks)")
        last = off + (tcols // c0 - 1) * tpitch + trows * c0
    count, tensor = int(op.ctx.tcount[op.slot]), op.ctx.tensor_names[op.slot]
    if off < 0 or last > count:
        raise fault(f"the table of {what} from element {off} reaches element {last - 1} of '{tensor}', which has "
                    f"{count}", "check the table's offset, size and stride against the tensor")
    if elem and l1 is not None:
        _scratch_apart(op, l1, off, last, ir * ic, fault)
    atomic = iv[named["atomic"]] if "atomic" in named else 0
    return off, size, stride, iv[named["oob"]], atomic, elem, l1, tcols, tpitch


def _scratch_apart(op, l1, first, last, n_idx, fault):
    """Check that MGATHER_L1_ELEM's scratch shares no byte with its table (elements first ..
    last - 1) or its n_idx indices: MGatherGm2L1ElemImpl zeroes the scratch before its loop reads
    them and writes it while the loop runs, which this model (indices and table read at the
    start, the scratch written at the completion) does not follow."""
    item, base, names = op.data.buf.dtype.itemsize, op.ctx.tbase, op.ctx.tensor_names
    s0 = int(base[l1[2]]) + l1[3] * item
    s1 = s0 + op.data.rows * op.data.cols * item
    for what, slot, lo, hi, size in (("table", op.slot, first, last, item), ("indices", l1[0], l1[1], l1[1] + n_idx,
                                                                              INDEX_ITEM)):
        b0, b1 = int(base[slot]) + lo * size, int(base[slot]) + hi * size
        if b0 < s1 and s0 < b1:
            raise fault(f"the scratch ({op.data.rows * op.data.cols} elements from element {l1[3]} of "
                        f"'{names[l1[2]]}') shares bytes with the {what} (elements {lo} .. {hi - 1} of "
                        f"'{names[slot]}'): MGatherGm2L1ElemImpl zeroes the scratch before it reads them and writes "
                        "it as it goes, so the device would gather those zeros and its own writes",
                        "pass a scratch of its own (another tensor)")


def _in_tensor(op, slot, off, n, what, fault):
    """Check that n elements from element off of tensor slot lie in it (the GM -> L1 forms'
    indices and scratch)."""
    count, tensor = int(op.ctx.tcount[slot]), op.ctx.tensor_names[slot]
    if off < 0 or off + n > count:
        raise fault(f"{what} ({n} elements from element {off}) reach element {off + n - 1} of '{tensor}', which has "
                    f"{count}", "pass a GM tensor that holds them")


def read(op, fault):
    """The pending result of op at its start: the gathered rows x cols (MGATHER), or (src's
    values, the index words) (MSCATTER); an undefined index past the table raises fault's
    OutOfBoundsError first."""
    ctx, ex, arr = op.ctx, op.ctx.ex, op.arr
    off, size, stride, oob, _atomic, elem, l1, tcols, tpitch = op.index
    rows, cols = op.shape
    ir, ic = (rows, cols) if elem else (1, rows)
    words = np.empty(ir * ic, np.float64)
    if l1 is None:
        idx = op.view["idx"]
        ex.tile_gather(words, arr, idx.base, idx.pitch, ir, ic, -1)
    else:                                   # the scalar unit's reads of the GM indices (bits as int32)
        ex.gm_gather(words, ctx.hbm, int(ctx.tbase[l1[0]]) + l1[1] * INDEX_ITEM, ir * ic, 1, ir * ic,
                     dtypes.int32.code)
    bad = int(ex.gm_index_fault(words, ir * ic, size, oob))
    if bad >= 0:
        raise _index_error(op, words, bad, fault)
    op.touched = touched(op, words)
    if op.fam == "tile_gm_gather":
        out = np.empty(rows * cols, np.float64)
        ex.gm_index_gather(out, words, ctx.hbm, _table_byte(op), rows, cols, size, stride, oob, int(elem), tcols,
                           tpitch, int(ctx.enc.code[op.pc, C_DTYPE]))
        if _zeroes_tile(op):                # MGatherRowNzImpl zeroes the whole tile before its loop
            dst = op.writes[0]
            full = np.zeros((dst.rows, dst.cols))
            full[:rows, :cols] = out.reshape(rows, cols)
            return full.ravel()
        return out if l1 is None else _l1_result(op, out)
    src = op.view["src"]
    vals = np.empty(rows * cols, np.float64)
    ex.tile_gather(vals, arr, src.base, src.pitch, rows, cols, -1)
    return vals, words


def _zeroes_tile(op) -> bool:
    """Whether op is MGATHER's NZ row form under oob='zero', which writes the whole tile:
    MGatherRowNzImpl zeroes dst's Rows x Cols before it gathers (MGatherRowImpl zeroes only the
    rows of dropped indices)."""
    return op.fam == "tile_gm_gather" and op.index[7] > 0 and not op.index[5] and op.index[3] == DROP


def nz_walk(rows, cols, c0) -> np.ndarray:
    """The positions (r * cols + c) of a rows x cols region in the order MScatterElemNzImpl /
    MGatherElemNzImpl walk it: column block, then row, then column in the block."""
    pos = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    return np.concatenate([pos[:, b:b + c0].ravel() for b in range(0, cols, c0)])


def _l1_result(op, out):
    """The GM -> L1 forms' pending result from the gathered rows x cols (out): (the values, their
    rows and cols, the scratch's values in GM order or None). MGatherGm2L1RowImpl writes the
    valid rows, after create_cbuf_matrix's zeros over the whole tile under oob='zero';
    MGatherGm2L1ElemImpl zeroes the scratch's Rows x Cols, writes each gathered element at its NZ
    offset (column block c / c0 of Rows x c0, row r of c0) and copies the whole scratch into the
    tile: the whole tile, 0 outside the valid region, and the scratch holds it in NZ order."""
    rows, cols = op.shape
    dst = op.writes[0]
    if not op.index[5] and op.index[3] != DROP:
        return out, rows, cols, None
    full = np.zeros((dst.rows, dst.cols))
    full[:rows, :cols] = out.reshape(rows, cols)
    scratch = None
    if op.index[5]:
        scratch = gm_layouts.to_window(full.ravel(), gm_layouts.NZ, dst.rows, dst.cols,
                                       gm_layouts.c0_of(dst.buf.dtype.itemsize))
    return full.ravel(), dst.rows, dst.cols, scratch


def write(op, result):
    """Write op's pending result at its completion: into dst's rows x cols (MGATHER; the GM -> L1
    element form writes its scratch too), or to the GM table in index order (MSCATTER)."""
    ctx, ex = op.ctx, op.ctx.ex
    rows, cols = op.shape
    if op.fam == "tile_gm_gather":
        dst = op.writes[0]
        if op.index[6] is None:
            if _zeroes_tile(op):
                rows, cols = dst.rows, dst.cols
            ex.tile_scatter(op.arr, dst.base, dst.pitch, result, rows, cols)
            return
        vals, rows, cols, scratch = result
        ex.tile_scatter(op.arr, dst.base, dst.pitch, vals, rows, cols)
        if scratch is not None:
            sslot, soff = op.index[6][2:]
            item = dst.buf.dtype.itemsize
            byte = int(ctx.tbase[sslot]) + soff * item
            ex.gm_scatter_mode(ctx.hbm, byte, len(scratch), np.ascontiguousarray(scratch), 1, len(scratch),
                               dst.buf.dtype.code, 0)
            init = getattr(ctx, "hbm_init", None)
            if init is not None:             # initcheck: the scratch's elements are written
                gm.init_mark(init, byte + np.arange(len(scratch), dtype=np.int64) * item)
        return
    _off, size, stride, oob, atomic, elem, _l1, tcols, tpitch = op.index
    vals, words = result
    if tcols > 0 and elem:                   # MScatterElemNzImpl's order: a repeated index keeps its last
        order = nz_walk(rows, cols, gm_layouts.c0_of(op.data.buf.dtype.itemsize))
        vals, words = np.ascontiguousarray(vals[order]), np.ascontiguousarray(words[order])
    ex.gm_index_scatter(ctx.hbm, _table_byte(op), vals, words, rows, cols, size, stride, oob, int(elem), atomic,
                        tcols, tpitch, int(ctx.enc.code[op.pc, C_DTYPE]))
    init = getattr(ctx, "hbm_init", None)
    if init is not None:                     # initcheck: the elements the scatter wrote are written
        item = BY_CODE[int(ctx.enc.code[op.pc, C_DTYPE])].itemsize
        gm.init_mark(init, int(ctx.tbase[op.slot]) + op.touched * item)


def gm_accesses(op) -> list:
    """The GM accesses of op once it has read its indices, as (tensor slot, elements (int64),
    element bytes, kind: "read", "write" or "add"): the table's elements (op.touched); for the
    GM -> L1 forms first the indices the scalar unit reads and, for the element form, the
    scratch's Rows x Cols it writes (and then reads back: the same elements, after its own
    write)."""
    item = op.data.buf.dtype.itemsize
    kind = "read" if op.fam == "tile_gm_gather" else "add" if op.index[4] else "write"
    l1 = op.index[6]
    if l1 is None:
        return [(op.slot, op.touched, item, kind)]
    rows, cols = op.shape
    n = rows * cols if op.index[5] else rows
    out = [(l1[0], l1[1] + np.arange(n, dtype=np.int64), INDEX_ITEM, "read"), (op.slot, op.touched, item, kind)]
    if op.index[5]:
        out.append((l1[2], l1[3] + np.arange(op.data.rows * op.data.cols, dtype=np.int64), item, "write"))
    return out


def touched(op, words) -> np.ndarray:
    """The elements of op's tensor that the transfer at index words moves, in the order it moves
    them (int64): each index the oob policy keeps, remapped, as its row's cols elements (row form)
    or its element (element form), from the table's element 0 (op.index[0])."""
    off, size, stride, oob, _atomic, elem, _l1, tcols, tpitch = op.index
    used = np.asarray([u for u, moves in (remap(int(x), size, oob) for x in words) if moves], np.int64)
    if tcols > 0:                           # NZ: logical (r, c) at (c // c0) * tpitch + r * c0 + c % c0
        c0 = gm_layouts.c0_of(op.data.buf.dtype.itemsize)
        r, c = (used // tcols, used % tcols) if elem else (used[:, None], np.arange(op.shape[1], dtype=np.int64))
        return (off + (c // c0) * tpitch + r * c0 + c % c0).ravel()
    first = off + used * (1 if elem else stride)
    return first if elem else (first[:, None] + np.arange(op.shape[1], dtype=np.int64)).ravel()


def _table_byte(op) -> int:
    """The byte address of the table's element 0 in GM."""
    item = BY_CODE[int(op.ctx.enc.code[op.pc, C_DTYPE])].itemsize
    return int(op.ctx.tbase[op.slot]) + op.index[0] * item


def _index_error(op, words, position, fault):
    """The OutOfBoundsError of an undefined index at position (of the index words op read)."""
    off, size, stride, _oob, _atomic, elem, l1, tcols, tpitch = op.index
    rows, cols = op.shape
    value = int(words[position]) & 0xFFFFFFFF
    r, c = divmod(position, cols) if elem else (0, position)
    where = (f"position ({r}, {c}) of '{op.view['idx'].buf.name}'" if l1 is None else
             f"element {l1[1] + position} of '{op.ctx.tensor_names[l1[0]]}' (position ({r}, {c}))")
    element = off + (value if elem else value * stride)
    if tcols > 0:                            # NZ: the logical element's (its row's first) GM element
        c0 = gm_layouts.c0_of(op.data.buf.dtype.itemsize)
        tr, tc = divmod(value, tcols) if elem else (value, 0)
        element = off + (tc // c0) * tpitch + tr * c0 + tc % c0
    count, tensor = int(op.ctx.tcount[op.slot]), op.ctx.tensor_names[op.slot]
    unit = "element" if elem else "row"
    verb = "read" if op.fam == "tile_gm_gather" else "write"
    return fault(f"index {value} at {where} names {unit} {value} of a table of "
                 f"{size} {unit}s: GM element {element} of '{tensor}' (which has {count}); oob='undefined' leaves "
                 f"it to the device, which would {verb} whatever GM holds there",
                 f"keep the indices below {size}, or pass oob= ('clamp', 'wrap', or "
                 f"'{'zero' if verb == 'read' else 'skip'}')", offset=element, count=count, tensor=tensor)
