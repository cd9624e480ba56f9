"""pto-isa's operand forms of the row reductions, row expansion and elementwise ops on typed
tiles (a mixin of the kernel compiler, used by frontend/aicore_builtins.py).

- TROWSUM / TROWMAX / TROWMIN / TROWPROD write element (r, 0) of dst: an R x 1 column
  (ColMajor, "DN") or a RowMajor ("ND") tile of any width, as A2/A3's TRowReduceCheck
  accepts ("Fix: TROWREDUCE only support Nd fractal Tile or DN Tile with Col is 1",
  include/pto/npu/a2a3/TRowReduceOps.hpp; docs/isa/TROWSUM.md: "it is not limited to DN
  output"); the results land dst's row pitch (``dpitch``) apart. TROWEXPAND reads element
  (r, 0) of src, an ND or DN tile (TRowExpand.hpp reads ``src + i * RowStride``), ``spitch``
  apart, into a RowMajor dst ("Fix: TROWEXPAND dst layout must be ND!").
- pto-isa's ``tmp`` operand (``TROWSUM(dst, src, tmp)``, include/pto/common/pto_instr.hpp) is
  A2/A3's scratch tile: a Vec tile that the instruction writes (counted so by ordering and
  racecheck through isa/tile_roles.py's ``scratch``) and whose values are not modelled. Left
  out, it is dst. In the article's tile API the third and fourth arguments stay rows and
  cols; a typed tile as the third argument is pto-isa's tmp.
- TCOLSUM's ``tmp`` and ``is_binary`` (``TCOLSUM(dst, src, tmp, isBinary)``, TColSum.hpp): with
  is_binary the sum runs BinarySum's pairwise tree through tmp, whose rows it overwrites (values
  modelled: the tree's partial sums stay in them, as on the device).
- Elementwise ops (TADDS, TDIV, TRECIP, ...) take tiles of any shapes whose valid regions
  match, as A2/A3 asserts, and cover that region at each tile's row pitch.
"""
from __future__ import annotations

from .. import dtypes
from ..isa.run_time_checks import VALID_REGIONS_MATCH
from .values import NONE, Const, Ptr


# where A2/A3 asserts that the one-value-a-row tile has the big tile's valid rows
ROW_ASSERTS = {
    "tile_reduce": "\"Fix: TROWREDUCE input validRow must be consistent with the output validRow.\", "
                   "include/pto/npu/a2a3/TRowReduceOps.hpp",
    "tile_expand": "srcValidRow == dstValidRow, include/pto/npu/a2a3/TRowExpand.hpp",
    "tile_expand_op": "\"TROWEXPANSUB: invalid src1 shape.\", src1ValidRow == validRow, "
                      "include/pto/npu/a2a3/TRowExpandSub.hpp",
}


def _typed(v) -> bool:
    return isinstance(v, Ptr) and v.tile is not None


def flag_given(v) -> bool:
    """Whether a flag operand was set: anything but NONE or a constant false."""
    return v is not NONE and v is not None and not (isinstance(v, Const) and not v.value)


class OperandForms:
    """Operands of row reductions, row expansion and elementwise ops as pto-isa writes them."""

    def one_dtype(self, node, spec, call, dst, sources, invalid, mismatch):
        """dst's dtype one of spec's and each source's dst's, as A2/A3's static_asserts ask:
        a CompileError naming the tile, with ``invalid`` / ``mismatch`` (the header's words)
        after it."""
        if dst.dtype.name not in spec.dtypes:
            self.error(node, f"{call}: '{dst.name}' holds {dst.dtype}; A2/A3 takes {', '.join(spec.dtypes)} "
                             f"({invalid})")
        for t in sources:
            if t.dtype != dst.dtype:
                self.error(node, f"{call}: '{t.name}' holds {t.dtype} and '{dst.name}' {dst.dtype} ({mismatch})")

    def match_valid(self, node, call, t, ref, what, source, asserted=True):
        """t's valid `what` ("rows" or "columns") must be ref's, as A2/A3's PTO_ASSERT in
        `source` requires (asserted; else the rule is pypto_sim's, `source` saying why): a
        CompileError when both are constants that differ, a CHECK when either is known only at
        run time (unless both are one register)."""
        x, y = ((t.tile.valid_rows, ref.tile.valid_rows) if what == "rows" else
                (t.tile.valid_cols, ref.tile.valid_cols))
        if isinstance(x, Const) and isinstance(y, Const):
            if int(x.value) != int(y.value):
                who = "A2/A3 asserts" if asserted else "pypto_sim requires"
                self.error(node, f"{call}: '{t.name}' has {int(x.value)} valid {what} but '{ref.name}' "
                                 f"{int(y.value)}; {who} that the valid regions match ({source})",
                           "give the tiles the same valid=(rows, cols)")
        elif x != y:
            self.run_time_check(node, x, y, y, VALID_REGIONS_MATCH,
                                f"{call}: valid {what} of '{t.name}' == valid {what} of '{ref.name}'")

    def run_time_check(self, node, value, lo, hi, rule, requirement, lanes=False):
        """Emit CHECK: lo <= value <= hi when the kernel runs, else an OutOfBoundsError naming
        the requirement and the rule (isa/run_time_checks.py): a compile-time rule whose
        operands are known only at run time. lanes: the value may differ from lane to lane
        (each active lane is checked); else it is a uniform one (a tile's shape)."""
        ops = tuple(self.operand(v, dtypes.int32, node) if lanes else self._int_operand(v, node, "a checked value")
                    for v in (value, lo, hi))
        self.emit("CHECK", None, ops, None, node, aux=(rule,))
        self.instrs[-1].comment = requirement

    @staticmethod
    def operand_defaults(spec, args) -> dict:
        """args with the operands a caller need not give: tmp (pto-isa's positional third
        operand, or dst), dpitch / spitch (1: a column; the AI core sets the tile's pitch)."""
        names = {o.name for o in spec.value_operands}
        args = dict(args)
        if "tmp" in names:
            if args.get("tmp", NONE) is NONE and _typed(args.get("rows")):
                if args.get("cols", NONE) is NONE:
                    args["tmp"], args["rows"] = args["rows"], NONE       # trowsum(dst, src, tmp)
                elif "is_binary" in names and not flag_given(args.get("is_binary")):
                    # tcolsum(dst, src, tmp, is_binary), pto-isa's TCOLSUM(dst, src, tmp, isBinary)
                    args["tmp"], args["is_binary"] = args["rows"], args["cols"]
                    args["rows"] = args["cols"] = NONE
            if args.get("tmp", NONE) is NONE:
                args["tmp"] = args["dst"]
        if "tpitch" in names:               # check_pairwise_sum sets it from a tmp of its own
            args["tpitch"] = Const(0, dtypes.int32)
        if spec.family in ("tile_expand_op", "tile_col_expand_op"):   # dense, unless set by
            for pitch in ("dpitch", "apitch"):                           # expand_op_operands
                args[pitch] = Const(0, dtypes.int32)
        for pitch in ("dpitch", "spitch"):
            if pitch in names and args.get(pitch, NONE) is NONE:
                # a reduction's source is read by rows (0: dense); one value a row is a column (1)
                rows_read = pitch == "spitch" and spec.family != "tile_expand"
                args[pitch] = Const(0 if rows_read else 1, dtypes.int32)
        if spec.family == "tile_alu":                       # elementwise: one run of words
            for name in ("cols", "dpitch", "apitch", "bpitch"):
                args[name] = Const(0, dtypes.int32)
        return args

    def check_row_operands(self, spec, node, tile, args):
        """The one-value-a-row tile of a row reduction (dst) or TROWEXPAND (src) and its big
        tile, by A2/A3's checks; sets the small tile's row pitch operand."""
        call = f"pto.{spec.builtin}"
        if spec.family == "tile_expand_op":
            big, small = tile["dst"], tile["v"]
            if small.tile.cols != 1:
                self.error(node, f"{call}: '{small.name}' must be a column of one value per row (rows x 1, "
                                 f"layout=pto.ColMajor), not {small.tile.rows} x {small.tile.cols}")
        else:
            reduce = spec.family == "tile_reduce"
            big, small = (tile["src"], tile["dst"]) if reduce else (tile["dst"], tile["src"])
            if reduce and small.tile.layout == "col" and small.tile.cols != 1:
                self.error(node, f"{call}: '{small.name}' is a {small.tile.rows} x {small.tile.cols} "
                                 "ColMajor (DN) tile; a row reduction writes an R x 1 DN column or a "
                                 "RowMajor (ND) tile's first column (TRowReduceCheck, "
                                 "include/pto/npu/a2a3/TRowReduceOps.hpp)",
                           "allocate dst as rows x 1 with layout=pto.ColMajor, or RowMajor")
            if not reduce and big.tile.layout != "row":
                self.error(node, f"{call}: '{big.name}' is ColMajor; TROWEXPAND writes a RowMajor (ND) "
                                 "tile (\"Fix: TROWEXPAND dst layout must be ND!\", "
                                 "include/pto/npu/a2a3/TRowExpand.hpp)")
            args["dpitch" if reduce else "spitch"] = Const(small.tile.row_pitch, dtypes.int32)
            if "tmp" in tile:
                self._scratch(call, node, tile["tmp"], tile["src"])
        if spec.family == "tile_expand_op":
            self.match_valid(node, call, small, big, "rows", ROW_ASSERTS[spec.family])
            self.expand_op_operands(spec, node, tile, args, "\"TROWEXPANSUB: the validShape of src0 or src1 "
                                    "should be equal to those of dst.\", include/pto/npu/a2a3/TRowExpandSub.hpp")
            return
        if small.tile.rows < big.tile.rows:
            self.error(node, f"{call}: '{small.name}' has {small.tile.rows} rows, '{big.name}' {big.tile.rows}")
        if reduce:                  # over src's valid region, its rows at its pitch
            self.reduce_source(node, big, args)
        else:
            self._whole_rows(spec, node, big, "row expansions")
        self.match_valid(node, call, small, big, "rows", ROW_ASSERTS[spec.family])

    @staticmethod
    def reduce_source(node, src, args):
        """A row or column reduction covers src's valid region, its rows at src's row pitch, as
        A2/A3 steps a reduction's source by its RowStride and masks each row to the valid
        columns (TRowReduceOps.hpp, TColReduceOps.hpp): sets cols (when not given) to src's
        valid columns and spitch to its pitch."""
        if args.get("cols", NONE) is NONE:
            args["cols"] = src.tile.valid_cols
        args["spitch"] = Const(src.tile.row_pitch, dtypes.int32)

    def expand_op_operands(self, spec, node, tile, args, source, asserted=True):
        """A row or column expand op (dst, a, v) covers dst's valid region, which a's must equal
        (A2/A3's assert in `source`), each tile at its own row pitch: A2/A3 steps each tile by its
        RowStride and masks every row to the valid columns (TRowExpandBinOp.hpp,
        TColExpandBinOp.hpp), so the tiles' shapes may differ. Sets rows and cols (when not
        given) to dst's valid region and dpitch / apitch to the tiles' pitches."""
        call = f"pto.{spec.builtin}"
        dst, a = tile["dst"], tile["a"]
        for what in ("rows", "columns"):
            self.match_valid(node, call, a, dst, what, source, asserted)
        if args.get("rows", NONE) is NONE:
            args["rows"] = dst.tile.valid_rows
        if args.get("cols", NONE) is NONE:
            args["cols"] = dst.tile.valid_cols
        args["dpitch"] = Const(dst.tile.row_pitch, dtypes.int32)
        args["apitch"] = Const(a.tile.row_pitch, dtypes.int32)

    def _whole_rows(self, spec, node, t, what):
        """The rule of `what` (TROWEXPAND): it writes whole rows of dst t (its cols operand is
        t's width, lower_tile_op), so t's valid column count must be a constant equal to its
        columns; fewer, or one known only at run time, is not built. The message names the
        operand and the count, the hint the way round."""
        vc, rows, cols = t.tile.valid_cols, t.tile.rows, t.tile.cols
        if isinstance(vc, Const) and int(vc.value) == cols:
            return
        has = (f"has {int(vc.value)} valid columns of its {cols}" if isinstance(vc, Const) else
               "has a valid column count known only at run time (a run-time valid=)")
        view = f"pto.tsubview({t.name}, 0, 0, {rows}, {cols})"
        hint = f"expand into the full-width view {view} (its columns past the valid ones are written too)"
        if isinstance(vc, Const):
            hint += f"; or allocate '{t.name}' {int(vc.value)} columns wide"
        self.error(node, f"pto.{spec.builtin}: dst '{t.name}' ({rows} x {cols}) {has}; pypto_sim builds "
                         f"{what} over whole rows only, so the valid column count of dst must be a "
                         f"constant equal to its {cols} columns", hint)

    def check_pairwise_sum(self, spec, node, tile, args):
        """TCOLSUM's tmp and is_binary by A2/A3's checks (TColSum.hpp): tmp a RowMajor Vec tile
        of src's dtype at least as wide as src ("Fix: TCOLSUM input valid columns must be less
        than or equal to the tmp columns."), and with is_binary the rows BinarySum writes
        (src's rows // 2; the device does not check them). is_binary needs a tmp of its own.
        Sets tpitch, the words between tmp's rows."""
        call = f"pto.{spec.builtin}"
        dst, src, tmp = tile["dst"], tile["src"], tile["tmp"]
        binary = flag_given(args.get("is_binary", NONE))
        if tmp is dst:
            if binary:
                self.error(node, f"{call}: is_binary sums pairs of rows through a tmp tile, and none "
                                 "was given (TCOLSUM(dst, src, tmp, isBinary), TColSum.hpp)",
                           f"pass a Vec tile of {max(1, src.tile.rows // 2)} x {src.tile.cols} "
                           f"{src.dtype} as tmp")
            return
        self._scratch(call, node, tmp, src)
        if tmp.tile.layout != "row":
            self.error(node, f"{call}: tmp '{tmp.name}' is ColMajor; TColSumCheck takes an ND tile "
                             "(\"Fix: TCOLSUM only support Nd fractal Tile\", TColSum.hpp)")
        if tmp.tile.cols < src.tile.cols:
            self.error(node, f"{call}: tmp '{tmp.name}' has {tmp.tile.cols} columns, '{src.name}' "
                             f"{src.tile.cols} (\"Fix: TCOLSUM input valid columns must be less than "
                             "or equal to the tmp columns.\", TColSum.hpp)")
        if binary and tmp.tile.rows < src.tile.rows // 2:
            self.error(node, f"{call}: tmp '{tmp.name}' has {tmp.tile.rows} rows; the pairwise sum of "
                             f"'{src.name}' writes {src.tile.rows // 2} (one per pair of rows)",
                       f"allocate tmp with {src.tile.rows // 2} rows")
        args["tpitch"] = Const(tmp.tile.row_pitch, dtypes.int32)

    def _scratch(self, call, node, tmp, src):
        """pto-isa's tmp: a Vec tile of the instruction's dtype (typed_tile checked its space)."""
        if tmp.dtype != src.dtype:
            self.error(node, f"{call}: tmp '{tmp.name}' holds {tmp.dtype}, '{src.name}' {src.dtype}; "
                             "A2/A3 uses tmp as scratch of the source's dtype (TRowSum.hpp)")

    def elementwise_operands(self, spec, node, tile, args):
        """n, cols and the row pitches (isa/30_tiles.toml) of an elementwise op on typed tiles
        by A2/A3's rule: the valid regions of dst and its sources match (PTO_ASSERT of
        TADDS_IMPL, TAddS.hpp; TDivCheck, TDiv.hpp; ...), the tiles' shapes need not, and the op
        covers the valid region, each tile at its own row pitch. Whole valid rows of one width
        are one run of words (cols 0); an explicit n keeps the article's flat run."""
        call = f"pto.{spec.builtin}"
        dst = tile["dst"]
        first = next((tile[n] for n in ("a", "src", "base") if n in tile), None)
        second = next((tile[n] for n in ("b", "exp") if n in tile), None)
        srcs = [t for t in (first, second) if t is not None]
        shapes_differ = any((t.tile.rows, t.tile.cols) != (dst.tile.rows, dst.tile.cols) for t in srcs)
        if args.get("n", NONE) is not NONE:
            if shapes_differ:
                t = next(t for t in srcs if (t.tile.rows, t.tile.cols) != (dst.tile.rows, dst.tile.cols))
                self.error(node, f"{call}: '{t.name}' is {t.tile.rows} x {t.tile.cols} but '{dst.name}' is "
                                 f"{dst.tile.rows} x {dst.tile.cols}; n= counts the words of tiles of one shape",
                           "leave n out: the op then covers the valid region of each tile")
            return
        for t in srcs:
            for what in ("rows", "columns"):
                self.match_valid(node, call, t, dst, what, "e.g. TADDS_IMPL in include/pto/npu/a2a3/TAddS.hpp, "
                                                           "TDivCheck in TDiv.hpp")
        rows, vc = dst.tile.valid_rows, dst.tile.valid_cols
        whole = all(isinstance(t.tile.valid_cols, Const) and int(t.tile.valid_cols.value) == t.tile.cols
                    for t in (dst, *srcs))
        if whole:
            width = Const(dst.tile.cols, dtypes.int32)     # whole valid rows: one run of words
        else:
            # rows of the valid width at each tile's pitch: A2/A3 masks each row to validCol
            # (TBinSOp.hpp BinS2LCountMode / BinS2LNormModeTail), so the words past it stay as they are
            width = Const(int(vc.value), dtypes.int32) if isinstance(vc, Const) else vc
            args["cols"] = width
            for name, t in (("dpitch", dst), ("apitch", first), ("bpitch", second)):
                if t is not None:
                    args[name] = Const(t.tile.row_pitch, dtypes.int32)
        args["n"] = (Const(int(rows.value) * int(width.value), dtypes.int32)
                     if isinstance(rows, Const) and isinstance(width, Const)
                     else self.alu("MUL", [rows, width], node, dtype=dtypes.int32))
