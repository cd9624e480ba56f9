"""The indexed GM transfers as exec/aicore_tiles.TileOp decodes and runs them (isa/54_gm_index.toml
MGATHER, MGATHER_ELEM, MSCATTER, MSCATTER_ELEM; families tile_gm_gather, tile_gm_scatter): the
table's bounds in its tensor when the instruction is decoded, the index words and the source
values at its start (read), GM or the destination tile at its completion (write), through the
executor module's kernels (exec/compiled/gm_index.py or its numpy twin exec/reference_gm_index.py).

An index the oob policy leaves undefined (isa/gm_index_modes.py UNDEFINED) that names no row or
element of the table stops the launch at the read, before anything is written: the device would
read or write whatever GM holds past the table, so the OutOfBoundsError names the instruction,
its line, the unit, the index's position in the index tile and the GM element it names.

read() also leaves on the TileOp (op.touched) the tensor elements the transfer reads (MGATHER) or
writes (MSCATTER), in the order it moves them: each moved index's row of cols elements at
off + index * stride, or its element at off + index, after the oob policy (a dropped index moves
nothing). With check="race" / "initcheck" the SimPy model compares them with the other GM
accesses when the instruction reads its index tile (timing/aicore.py gm_index_checks), and
initcheck counts MSCATTER's as written at its write.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import BY_CODE
from ..ir.program import C_DTYPE
from ..isa.gm_index_modes import remap
from . import gm

GM_INDEX_FAMILIES = ("tile_gm_gather", "tile_gm_scatter")


def decode(op, iv, named, fault) -> tuple:
    """(GM offset, size, stride, oob, atomic, elem) of TileOp op (its operands' values iv by
    name index named), after checking that the index tile holds the indices the transfer reads
    and that the table (size rows of the row's columns, stride apart, or size elements) lies in
    its tensor; fault(msg, hint) makes the OutOfBoundsError."""
    rows, cols = op.shape
    data, idx = op.data, op.view["idx"]
    elem = op.spec.name.endswith("_ELEM")
    op._extent(data, rows, cols, "the transfer", fault)
    ir, ic = (rows, cols) if elem else (1, rows)
    if ir > idx.rows or ic > idx.cols:
        raise fault(f"it reads {ir} x {ic} indices of '{idx.buf.name}', a {idx.rows} x {idx.cols} tile",
                    "keep the index tile's valid shape [1, rows] (coalesce='row') or rows x cols ('elem') "
                    "within the tile")
    off, size = iv[named["table"]], iv[named["size"]]
    stride = 1 if elem else iv[named["stride"]]
    what = f"{size} elements" if elem else f"{size} rows of {cols} elements, {stride} apart"
    if size < 1 or (not elem and stride < 1):
        raise fault(f"a table of {what}: it must hold at least one {'element' if elem else 'row'}, rows at least "
                    "one element apart", "pass the GM table's shape as size= (and its row pitch as stride=)")
    last = off + size if elem else off + (size - 1) * stride + cols
    count, tensor = int(op.ctx.tcount[op.slot]), op.ctx.tensor_names[op.slot]
    if off < 0 or last > count:
        raise fault(f"the table of {what} from element {off} reaches element {last - 1} of '{tensor}', which has "
                    f"{count}", "check the table's offset, size and stride against the tensor")
    atomic = iv[named["atomic"]] if "atomic" in named else 0
    return off, size, stride, iv[named["oob"]], atomic, elem


def read(op, fault):
    """The pending result of op at its start: the gathered rows x cols (MGATHER), or (src's
    values, the index words) (MSCATTER); an undefined index past the table raises fault's
    OutOfBoundsError first."""
    ctx, ex, arr = op.ctx, op.ctx.ex, op.arr
    off, size, stride, oob, _atomic, elem = op.index
    rows, cols = op.shape
    idx = op.view["idx"]
    ir, ic = (rows, cols) if elem else (1, rows)
    words = np.empty(ir * ic, np.float64)
    ex.tile_gather(words, arr, idx.base, idx.pitch, ir, ic, -1)
    bad = int(ex.gm_index_fault(words, ir * ic, size, oob))
    if bad >= 0:
        raise _index_error(op, words, bad, fault)
    op.touched = touched(op, words)
    if op.fam == "tile_gm_gather":
        out = np.empty(rows * cols, np.float64)
        ex.gm_index_gather(out, words, ctx.hbm, _table_byte(op), rows, cols, size, stride, oob, int(elem),
                           int(ctx.enc.code[op.pc, C_DTYPE]))
        return out
    src = op.view["src"]
    vals = np.empty(rows * cols, np.float64)
    ex.tile_gather(vals, arr, src.base, src.pitch, rows, cols, -1)
    return vals, words


def write(op, result):
    """Write op's pending result at its completion: into dst's rows x cols (MGATHER), or to
    the GM table in index order (MSCATTER)."""
    ctx, ex = op.ctx, op.ctx.ex
    rows, cols = op.shape
    if op.fam == "tile_gm_gather":
        dst = op.writes[0]
        ex.tile_scatter(op.arr, dst.base, dst.pitch, result, rows, cols)
        return
    _off, size, stride, oob, atomic, elem = op.index
    vals, words = result
    ex.gm_index_scatter(ctx.hbm, _table_byte(op), vals, words, rows, cols, size, stride, oob, int(elem), atomic,
                        int(ctx.enc.code[op.pc, C_DTYPE]))
    init = getattr(ctx, "hbm_init", None)
    if init is not None:                     # initcheck: the elements the scatter wrote are written
        item = BY_CODE[int(ctx.enc.code[op.pc, C_DTYPE])].itemsize
        gm.init_mark(init, int(ctx.tbase[op.slot]) + op.touched * item)


def touched(op, words) -> np.ndarray:
    """The elements of op's tensor that the transfer at index words moves, in the order it moves
    them (int64): each index the oob policy keeps, remapped, as its row's cols elements (row form)
    or its element (element form), from the table's element 0 (op.index[0])."""
    off, size, stride, oob, _atomic, elem = op.index
    used = [u for u, moves in (remap(int(x), size, oob) for x in words) if moves]
    first = off + np.asarray(used, np.int64) * (1 if elem else stride)
    return first if elem else (first[:, None] + np.arange(op.shape[1], dtype=np.int64)).ravel()


def _table_byte(op) -> int:
    """The byte address of the table's element 0 in GM."""
    item = BY_CODE[int(op.ctx.enc.code[op.pc, C_DTYPE])].itemsize
    return int(op.ctx.tbase[op.slot]) + op.index[0] * item


def _index_error(op, words, position, fault):
    """The OutOfBoundsError of an undefined index at position (of the index words op read)."""
    off, size, stride, _oob, _atomic, elem = op.index
    rows, cols = op.shape
    idx = op.view["idx"]
    value = int(words[position]) & 0xFFFFFFFF
    r, c = divmod(position, cols) if elem else (0, position)
    element = off + (value if elem else value * stride)
    count, tensor = int(op.ctx.tcount[op.slot]), op.ctx.tensor_names[op.slot]
    unit = "element" if elem else "row"
    verb = "read" if op.fam == "tile_gm_gather" else "write"
    return fault(f"index {value} at position ({r}, {c}) of '{idx.buf.name}' names {unit} {value} of a table of "
                 f"{size} {unit}s: GM element {element} of '{tensor}' (which has {count}); oob='undefined' leaves "
                 f"it to the device, which would {verb} whatever GM holds there",
                 f"keep the indices below {size}, or pass oob= ('clamp', 'wrap', or "
                 f"'{'zero' if verb == 'read' else 'skip'}')", offset=element, count=count, tensor=tensor)
