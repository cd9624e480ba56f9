"""pto.tpairreducesum(dst, src): the pair reduction (isa/48_pair_reduce.toml, family tile_pair),
with A2/A3's checks (include/pto/npu/a2a3/TPairReduceSum.hpp TPairReduceSumCheck) as compile
errors at the kernel's line, and its valid-shape assert as a CHECK when the shapes are known
only at run time. Registered in registry.py's LOWERINGS; codegen.py imports it."""
from __future__ import annotations

from .. import dtypes
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import Const

_HEADER = "include/pto/npu/a2a3/TPairReduceSum.hpp"


@LOWERINGS.lowering("tpairreducesum", checks=(aicore_only,))
def lower_pair_reduce(comp, node, args):
    """TPAIRREDUCESUM over dst's valid region: float32 or float16 RowMajor tiles of one dtype,
    src's valid region dst's."""
    spec = comp.isa["TPAIRREDUCESUM"]
    call = f"pto.{spec.builtin}"
    dst, src = comp.typed_tiles(spec, node, args, ("dst", "src"))
    comp.one_dtype(node, spec, call, dst, (src,), f"\"Fix: TPAIRREDUCESUM has invalid data type.\", {_HEADER}",
                   f"\"Fix: TPAIRREDUCESUM input tile src0 and dst tile data type mismatch.\", {_HEADER}")
    for t in (dst, src):
        if t.tile.layout != "row":
            comp.error(node, f"{call}: '{t.name}' is ColMajor (\"Fix: TPAIRREDUCESUM only support row major "
                             f"layout.\", {_HEADER})")
    for what in ("rows", "columns"):
        comp.match_valid(node, call, src, dst, what, f"\"Fix: TPAIRREDUCESUM input tile src0 valid shape "
                         f"mismatch with output tile dst shape.\", {_HEADER}")
    ops = (comp._base(dst, node, call), comp._base(src, node, call),
           comp._int_operand(dst.tile.valid_rows, node, "rows"),
           comp._int_operand(dst.tile.valid_cols, node, "cols"),
           comp._int_operand(Const(dst.tile.row_pitch, dtypes.int32), node, "dpitch"),
           comp._int_operand(Const(src.tile.row_pitch, dtypes.int32), node, "spitch"))
    comp.emit(spec.name, None, ops, dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- pairs of {src.name}"
