"""Which shared words of a column reduction's tiles A2/A3's order of reads and writes makes
clear (TCOLSUM, TCOLMAX, TCOLMIN, TCOLPROD on typed tiles; used by frontend/aicore_builtins.py).

A2/A3 runs the sequential form as one pto_copy_ubuf_to_ubuf of src row 0 into dst in whole
32-byte blocks, then one op(dst, dst, src row i) per row i >= 1 with a pipe_barrier after each
(include/pto/npu/a2a3/TColReduceOps.hpp l.54-57 and 27-29, 40-43; TColSum.hpp l.61-67, 80-82,
147-152 and SequentialSum l.41-44). The executors model those steps in that order
(exec/compiled/reductions.py tile_col_reduce_a2a3), so a dst that is src's row k itself (at the
same columns) gets what the device computes: the partial result is row k's value at its turn.
What no header line orders is one instruction's own reads and writes where its destination and
a source overlap at different words (a copy burst or a multi-repeat vadd shifted by a block);
those forms are a CompileError here. The pairwise form (BinarySum, TColSum.hpp l.19-34, 69-78)
writes dst only by its last copy from tmp row 0, after every read of src: dst may share any
words with src; tmp may be src itself (the tree's in-place pattern, which the header runs on
tmp); other overlaps of tmp with src, whose row vadds run back to back without a pipe_barrier
(l.23-25), and a dst overlapping tmp's row 0 at other words are refused. Tiles whose place is
known only at run time (a tile group's) are not checked.
"""
from __future__ import annotations

import numpy as np

from .values import NONE, Const

_OPS = {"TCOLSUM": "vadd", "TCOLMAX": "vmax", "TCOLMIN": "vmin", "TCOLPROD": "vmul"}
_HINT = ("reduce into a tile apart from src, or into a row of src itself at the same columns "
         "(pto.tsubview(src, k, 0, 1, cols)), which is modelled")


def _place(t):
    """Typed tile t's first word, or None when it is known only at run time."""
    return t.base + int(t.offset.value) if isinstance(t.offset, Const) else None


def _known(v, default: int) -> int:
    return int(v.value) if isinstance(v, Const) else default


def _meets(a: int, n: int, b: int, m: int) -> bool:
    """Whether the runs of words [a, a + n) and [b, b + m) overlap."""
    return a < b + m and b < a + n


def _rows(start: int, rows: int, cols: int, pitch: int) -> np.ndarray:
    """The words of rows rows of cols words, pitch apart, from start."""
    return (start + np.arange(rows)[:, None] * pitch + np.arange(cols)).ravel()


def check_col_reduce_overlaps(comp, spec, node, tile, args, binary: bool):
    """A CompileError, at the call, for dst / src / tmp sharing words in a way whose result
    depends on an order the A2/A3 headers do not establish (the module's docstring)."""
    call = f"pto.{spec.builtin}"
    dst, src = tile["dst"], tile["src"]
    tmp = tile.get("tmp", dst)
    d, s = _place(dst), _place(src)
    if d is None or s is None:
        return
    rows_arg, cols_arg = args.get("rows", NONE), args.get("cols", NONE)
    rows = _known(rows_arg, _known(src.tile.valid_rows, src.tile.rows))
    cols = _known(cols_arg, _known(src.tile.valid_cols, src.tile.cols))
    one_row = not isinstance(rows_arg if rows_arg is not NONE else src.tile.valid_rows, Const) or rows == 1
    per = 32 // src.dtype.itemsize
    nb = -(-cols // per) * per                  # lenBurst blocks, in elements
    sp = src.tile.row_pitch
    header = "TColSum.hpp" if spec.name == "TCOLSUM" else "TColReduceOps.hpp"
    if (not binary or one_row) and d != s and _meets(d, nb, s, nb):
        lines = "l.63-64, 80, 149" if spec.name == "TCOLSUM" else "l.54-56"
        comp.error(node, f"{call}: dst '{dst.name}' starts {d - s:+d} words from row 0 of '{src.name}' and "
                         f"shares words with it; A2/A3 first copies that row into dst in whole 32-byte blocks "
                         f"({nb} words, pto_copy_ubuf_to_ubuf, {header} {lines}), and the order of one copy's "
                         "reads and writes over overlapping words is not established", _HINT)
    if not binary:
        lines = "l.41-44 (SequentialSum)" if spec.name == "TCOLSUM" else "l.27-29, 40-43"
        for i in range(1, rows):
            r = s + i * sp
            if d != r and _meets(d, cols, r, cols):
                comp.error(node, f"{call}: dst '{dst.name}' overlaps row {i} of '{src.name}' {d - r:+d} words "
                                 f"off; A2/A3 folds that row into dst with one {_OPS[spec.name]}(dst, dst, row {i}) "
                                 f"over {cols} columns ({header} {lines}), and the order of its reads and writes "
                                 "within it is not established", _HINT)
        return
    t = _place(tmp)
    if t is None:
        return
    tp = tmp.tile.row_pitch
    if not (t == s and tp == sp) and np.intersect1d(_rows(t, max(1, rows // 2), cols, tp),
                                                    _rows(s, rows, cols, sp)).size:
        comp.error(node, f"{call}: tmp '{tmp.name}' shares words with '{src.name}' but is not that tile itself; "
                         "BinarySum's vadds into tmp's rows run one after another without a pipe_barrier "
                         f"(TColSum.hpp l.23-25), so whether one's write lands before a later one reads "
                         f"'{src.name}' is not established", f"give tmp words of its own, or pass '{src.name}' as tmp")
    if d != t and _meets(d, nb, t, nb):
        comp.error(node, f"{call}: dst '{dst.name}' starts {d - t:+d} words from row 0 of tmp '{tmp.name}' and "
                         "shares words with it; A2/A3 copies tmp's row 0 into dst in whole 32-byte blocks "
                         f"({nb} words, pto_copy_ubuf_to_ubuf, TColSum.hpp l.77), and the order of one copy's "
                         "reads and writes over overlapping words is not established",
                   "give dst words apart from tmp's row 0, or make it tmp's row 0 itself")
