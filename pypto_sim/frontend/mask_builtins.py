"""Compare, select and triangle instructions on typed Vec tiles (TCMP, TCMPS, TSEL, TSELS,
TTRI; isa/41_mask.toml): their operands, the packed uint8 mask's shape, and the A2/A3
restrictions of pto-isa's implementation checks, as compile errors at the kernel's line."""
from __future__ import annotations

from .. import dtypes
from .values import Const, Text

CMP_MODES = ("eq", "ne", "lt", "gt", "le", "ge")          # CmpMode, in the order of the table's `c`


class MaskBuiltins:
    """Lowering of pto.tcmp / tcmps / tsel / tsels / ttri (mixed into the kernel compiler)."""

    def _mask_tiles(self, spec, node, args, names):
        call = spec.builtin
        if not self.is_aicore:
            self.error(node, f"pto.{call} works on typed tiles of pto.alloc_tile (an AI-core kernel)",
                       "allocate the tiles with pto.alloc_tile(rows, cols, dtype, loc=pto.Vec)")
        return [self.typed_tile(args[n], node, spec, n, f"pto.{call}: {n}") for n in names]

    def _full_rows(self, t, node, call):
        vc = t.tile.valid_cols
        if not (isinstance(vc, Const) and int(vc.value) == t.tile.cols):
            self.error(node, f"pto.{call}: a valid column count below the tile's ({t.tile.cols}) is "
                             "not built for masks", "allocate the tile with the valid number of columns")
        return t.tile.valid_rows, Const(t.tile.cols, dtypes.int32)

    def _same_shape(self, node, call, ref, *others):
        for t in others:
            if (t.tile.rows, t.tile.cols) != (ref.tile.rows, ref.tile.cols):
                self.error(node, f"pto.{call}: '{t.name}' is {t.tile.rows} x {t.tile.cols} but "
                                 f"'{ref.name}' is {ref.tile.rows} x {ref.tile.cols}")
            if t.dtype != ref.dtype:
                self.error(node, f"pto.{call}: '{t.name}' holds {t.dtype} but '{ref.name}' {ref.dtype}")

    def _mask_shape(self, node, call, mask, data):
        """A mask holds a bit per element of data: at least ceil(cols / 8) uint8 per row."""
        if mask.dtype != dtypes.uint8:
            self.error(node, f"pto.{call}: the mask '{mask.name}' must be a uint8 tile (packed "
                             f"predicate bits, TCMP.md), not {mask.dtype}")
        need = -(-data.tile.cols // 8)
        if mask.tile.cols < need or mask.tile.rows < data.tile.rows:
            self.error(node, f"pto.{call}: the mask '{mask.name}' is {mask.tile.rows} x {mask.tile.cols} "
                             f"bytes; {data.tile.rows} rows of {data.tile.cols} elements need "
                             f"{data.tile.rows} x {need} (one bit each)",
                       f"allocate it as pto.alloc_tile({data.tile.rows}, {max(32, need)}, pto.uint8, "
                       "loc=pto.Vec)")

    def _mode(self, value, node, call, dtype):
        if not (isinstance(value, Text) and value.value in CMP_MODES):
            self.error(node, f"pto.{call}: mode must be one of {', '.join(map(repr, CMP_MODES))}")
        if dtype == dtypes.int32 and value.value != "eq":
            self.error(node, f"pto.{call}: int32 tiles compare only for 'eq' on A2/A3 (pto-isa "
                             f"{call.upper()}.md: the int32 path uses EQ whatever the mode), not "
                             f"{value.value!r}", "compare float32 tiles, or use mode='eq'")
        return Const(CMP_MODES.index(value.value), dtypes.int32)

    def _emit_mask_op(self, name, node, ops, dtype, comment):
        self.emit(name, None, tuple(ops), dtype, node, aux=self.tile_aux())
        self.instrs[-1].comment = comment

    def _scalar(self, value, dtype, node, call):
        self.require_value(value, node)
        if hasattr(value, "uniform") and not value.uniform:
            self.error(node, f"pto.{call}: scalar must be uniform")
        return self.operand(value, dtype, node)

    def _compare(self, name, node, args):
        spec = self.isa[name]
        scalar = name == "TCMPS"
        dst, a, *rest = self._mask_tiles(spec, node, args, ("dst", "a") if scalar else ("dst", "a", "b"))
        if rest:
            self._same_shape(node, spec.builtin, a, rest[0])
        if a.dtype.name not in spec.dtypes:
            self.error(node, f"pto.{spec.builtin} compares {', '.join(spec.dtypes)} tiles, not {a.dtype}")
        self._mask_shape(node, spec.builtin, dst, a)
        rows, cols = self._full_rows(a, node, spec.builtin)
        other = self._scalar(args["scalar"], a.dtype, node, spec.builtin) if scalar else \
            self._base(rest[0], node, spec.builtin)
        ops = [self._base(dst, node, spec.builtin), self._base(a, node, spec.builtin), other,
               self._mode(args["mode"], node, spec.builtin, a.dtype),
               self._int_operand(rows, node, "rows"), self._int_operand(cols, node, "cols"),
               self._int_operand(Const(dst.tile.cols, dtypes.int32), node, "mstride")]
        self._emit_mask_op(name, node, ops, a.dtype,
                           f"{dst.name} <- {a.name} {args['mode'].value} {'scalar' if scalar else rest[0].name}")

    def _select(self, name, node, args):
        spec = self.isa[name]
        scalar = name == "TSELS"
        dst, mask, a, *rest = self._mask_tiles(spec, node, args,
                                               ("dst", "mask", "a") if scalar else ("dst", "mask", "a", "b"))
        self._same_shape(node, spec.builtin, dst, a, *rest)
        if dst.dtype.name not in spec.dtypes:
            self.error(node, f"pto.{spec.builtin} selects {', '.join(spec.dtypes)} tiles, not {dst.dtype}")
        self._mask_shape(node, spec.builtin, mask, dst)
        rows, cols = self._full_rows(dst, node, spec.builtin)
        other = self._scalar(args["scalar"], dst.dtype, node, spec.builtin) if scalar else \
            self._base(rest[0], node, spec.builtin)
        ops = [self._base(dst, node, spec.builtin), self._base(mask, node, spec.builtin),
               self._base(a, node, spec.builtin), other,
               self._int_operand(rows, node, "rows"), self._int_operand(cols, node, "cols"),
               self._int_operand(Const(mask.tile.cols, dtypes.int32), node, "mstride")]
        self._emit_mask_op(name, node, ops, dst.dtype,
                           f"{dst.name} <- {mask.name} ? {a.name} : {'scalar' if scalar else rest[0].name}")

    def builtin_tcmp(self, node, args):
        self._compare("TCMP", node, args)

    def builtin_tcmps(self, node, args):
        self._compare("TCMPS", node, args)

    def builtin_tsel(self, node, args):
        self._select("TSEL", node, args)

    def builtin_tsels(self, node, args):
        self._select("TSELS", node, args)

    def builtin_ttri(self, node, args):
        spec = self.isa["TTRI"]
        (dst,) = self._mask_tiles(spec, node, args, ("dst",))
        if dst.dtype.name not in spec.dtypes:
            self.error(node, f"pto.ttri fills {', '.join(spec.dtypes)} tiles, not {dst.dtype}")
        upper = args["upper"]
        if not isinstance(upper, Const):
            self.error(node, "pto.ttri: upper must be True or False, known at compile time")
        rows, cols = self._full_rows(dst, node, "ttri")
        ops = [self._base(dst, node, "ttri"), self._int_operand(args["diagonal"], node, "pto.ttri: diagonal"),
               self._int_operand(Const(int(bool(upper.value)), dtypes.int32), node, "upper"),
               self._int_operand(rows, node, "rows"), self._int_operand(cols, node, "cols")]
        self._emit_mask_op("TTRI", node, ops, dst.dtype,
                           f"{dst.name} <- {'upper' if upper.value else 'lower'} triangle")
