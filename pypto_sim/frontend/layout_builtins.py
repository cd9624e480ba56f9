"""Layout instructions on typed Vec tiles (isa/42_layout.toml): TFILLPAD, TFILLPAD_INPLACE and
TFILLPAD_EXPAND copy a tile's valid region and fill the rest of the destination with a pad value
(PTO-ISA docs/isa/TFILLPAD*.md), with A2/A3's checks (include/pto/npu/a2a3/TFillPad.hpp) as
compile errors at the kernel's line."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .values import Const, Text

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


class LayoutBuiltins:
    """Lowering of pto.tfillpad / tfillpad_expand / tfillpad_inplace (mixed into the compiler)."""

    def _fillpad(self, node, dst, src, pad, call):
        spec = self.isa[call.upper()]
        if not self.is_aicore:
            self.error(node, f"pto.{call} works on typed tiles of pto.alloc_tile (an AI-core kernel)",
                       "allocate the tiles with pto.alloc_tile(rows, cols, dtype, loc=pto.Vec)")
        dst = self.typed_tile(dst, node, spec, "dst", f"pto.{call}: dst")
        src = self.typed_tile(src, node, spec, "src", f"pto.{call}: src")
        if dst.dtype.itemsize != src.dtype.itemsize or dst.dtype != src.dtype:
            self.error(node, f"pto.{call}: '{src.name}' holds {src.dtype} but '{dst.name}' {dst.dtype}; "
                             "TFILLPAD copies elements of one dtype")
        if dst.dtype.name not in spec.dtypes:
            self.error(node, f"pto.{call} takes {', '.join(spec.dtypes)} tiles, not {dst.dtype}")
        if dst.tile.layout != "row" or src.tile.layout != "row":
            self.error(node, f"pto.{call}: both tiles must be RowMajor (TFillPad.hpp copies row by row)")
        expand = call == "tfillpad_expand"
        if expand and (dst.tile.rows < src.tile.rows or dst.tile.cols < src.tile.cols):
            self.error(node, f"pto.{call}: '{dst.name}' ({dst.tile.rows} x {dst.tile.cols}) must be at "
                             f"least as large as '{src.name}' ({src.tile.rows} x {src.tile.cols})")
        if not expand and (dst.tile.rows, dst.tile.cols) != (src.tile.rows, src.tile.cols):
            self.error(node, f"pto.{call}: '{dst.name}' is {dst.tile.rows} x {dst.tile.cols} but "
                             f"'{src.name}' is {src.tile.rows} x {src.tile.cols}",
                       "use pto.tfillpad_expand to pad into a larger tile")
        if not (isinstance(pad, Text) and pad.value in PAD_VALUES):
            self.error(node, f"pto.{call}: pad must be one of {', '.join(map(repr, PAD_VALUES))} "
                             "(PadValue::Zero, Min, Max)")
        fill = Const(pad_value(pad.value, dst.dtype), dst.dtype)
        sizes = [src.tile.valid_rows, src.tile.valid_cols, Const(src.tile.cols, dtypes.int32),
                 Const(dst.tile.rows, dtypes.int32), Const(dst.tile.cols, dtypes.int32)]
        ops = [self._base(dst, node, call), self._base(src, node, call), self.operand(fill, dst.dtype, node)]
        ops += [self._int_operand(v, node, name)
                for v, name in zip(sizes, ("rows", "cols", "spitch", "drows", "dcols"))]
        self.emit(spec.name, None, tuple(ops), dst.dtype, node, aux=self.tile_aux())
        self.instrs[-1].comment = f"{dst.name} <- {src.name} padded with {pad.value}"

    def builtin_tfillpad(self, node, args):
        self._fillpad(node, args["dst"], args["src"], args["pad"], "tfillpad")

    def builtin_tfillpad_expand(self, node, args):
        self._fillpad(node, args["dst"], args["src"], args["pad"], "tfillpad_expand")

    def builtin_tfillpad_inplace(self, node, args):
        self._fillpad(node, args["dst"], args["dst"], args["pad"], "tfillpad_inplace")
