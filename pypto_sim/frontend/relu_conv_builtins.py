"""pto.taddreluconv(dst, src0, src1) and pto.tsubreluconv(dst, src0, src1): the fused add / sub,
ReLU and down-conversion (isa/52_relu_conv.toml, family tile_reluconv); pto.tadddeqrelu(dst, src0,
src1, deq_scale, tmp): the fused add, dequantization and ReLU (isa/53_add_deq_relu.toml, family
tile_deq_relu). A2/A3's checks (include/pto/npu/a2a3/TAddReluConv.hpp TAddReluConvCheck,
TSubReluConv.hpp TSubReluConvCheck, TAddDeqRelu.hpp TAddDeqReluCheck) are compile errors at the
kernel's line, and their valid-shape asserts CHECKs when the shapes are known only at run time.
Registered in registry.py's LOWERINGS; codegen.py imports it."""
from __future__ import annotations

from .. import dtypes
from .builtin_checks import aicore_only
from .mask_builtins import share_words
from .registry import LOWERINGS
from .values import Const

# the (source, destination) dtypes each header's static_assert admits
PAIRS = ((dtypes.float32, dtypes.float16), (dtypes.float16, dtypes.int8), (dtypes.int16, dtypes.int8))
_HEADERS = {"TADDRELUCONV": "include/pto/npu/a2a3/TAddReluConv.hpp",
            "TSUBRELUCONV": "include/pto/npu/a2a3/TSubReluConv.hpp"}


@LOWERINGS.lowering("taddreluconv", checks=(aicore_only,))
def lower_add_relu_conv(comp, node, args):
    """TADDRELUCONV: dst = convert(max(0, src0 + src1)) over dst's valid region."""
    _lower(comp, node, args, "TADDRELUCONV")


@LOWERINGS.lowering("tsubreluconv", checks=(aicore_only,))
def lower_sub_relu_conv(comp, node, args):
    """TSUBRELUCONV: dst = convert(max(0, src0 - src1)) over dst's valid region."""
    _lower(comp, node, args, "TSUBRELUCONV")


def _lower(comp, node, args, name):
    """Both records' lowering: src0 and src1 of one dtype, (source, dst) one of PAIRS, RowMajor
    tiles, src0's and src1's valid regions dst's, as the header's checks require."""
    spec = comp.isa[name]
    call, header = f"pto.{spec.builtin}", _HEADERS[name]
    dst, src0, src1 = comp.typed_tiles(spec, node, args, ("dst", "src0", "src1"))
    if src1.dtype != src0.dtype:
        comp.error(node, f"{call}: '{src0.name}' holds {src0.dtype} but '{src1.name}' {src1.dtype} (\"Fix: {name} "
                         f"src0 and src1 must have the same element type.\", {header})")
    if (src0.dtype, dst.dtype) not in PAIRS:
        pairs = ", ".join(f"{s} -> {d}" for s, d in PAIRS)
        comp.error(node, f"{call}: '{src0.name}' holds {src0.dtype} and '{dst.name}' {dst.dtype}; A2/A3 converts "
                         f"{pairs} (\"Fix: {name} supports float->half, half->int8 and int16->int8 only.\", "
                         f"{header})")
    for t in (dst, src0, src1):
        if t.tile.layout != "row":
            comp.error(node, f"{call}: '{t.name}' is ColMajor (\"Fix: {name} only supports row major layout.\", "
                             f"{header})")
    for src, which in ((src0, "src0"), (src1, "src1")):
        for what in ("rows", "columns"):
            comp.match_valid(node, call, src, dst, what, f"\"Fix: {name} input tile {which} valid shape mismatch "
                             f"with output tile dst shape.\", {header}")
    ops = (comp._base(dst, node, call), comp._base(src0, node, call), comp._base(src1, node, call),
           comp._int_operand(dst.tile.valid_rows, node, "rows"),
           comp._int_operand(dst.tile.valid_cols, node, "cols"),
           *(comp._int_operand(Const(t.tile.row_pitch, dtypes.int32), node, "pitch") for t in (dst, src0, src1)),
           comp._int_operand(Const(src0.dtype.code, dtypes.int32), node, "sdt"))
    comp.emit(spec.name, None, ops, dst.dtype, node, aux=comp.tile_aux())
    sign = "-" if name == "TSUBRELUCONV" else "+"
    comp.instrs[-1].comment = f"{dst.name} <- {dst.dtype}(relu({src0.name} {sign} {src1.name}))"


_DEQ = "include/pto/npu/a2a3/TAddDeqRelu.hpp"


@LOWERINGS.lowering("tadddeqrelu", checks=(aicore_only,))
def lower_add_deq_relu(comp, node, args):
    """TADDDEQRELU(dst, src0, src1, deq_scale, tmp) over dst's valid region: int32 src0, src1
    and tmp, a float16 dst, RowMajor tiles, the sources' valid regions dst's and tmp's at least
    as large (TAddDeqReluCheck); the four tiles it writes share no words."""
    spec = comp.isa["TADDDEQRELU"]
    call = f"pto.{spec.builtin}"
    names = ("dst", "src0", "src1", "tmp")
    tiles = dict(zip(names, comp.typed_tiles(spec, node, args, names)))
    for role, want in (("src0", dtypes.int32), ("src1", dtypes.int32), ("dst", dtypes.float16),
                       ("tmp", dtypes.int32)):
        t = tiles[role]
        if t.dtype != want:
            ctype = "half" if want == dtypes.float16 else "int32_t"
            comp.error(node, f"{call}: {role} '{t.name}' holds {t.dtype} (\"Fix: TADDDEQRELU {role} must be "
                             f"{ctype}.\", {_DEQ})")
    for t in tiles.values():
        if t.tile.layout != "row":
            comp.error(node, f"{call}: '{t.name}' is ColMajor (\"Fix: TADDDEQRELU only supports row major "
                             f"layout.\", {_DEQ})")
    dst, tmp = tiles["dst"], tiles["tmp"]
    for which in ("src0", "src1"):
        for what in ("rows", "columns"):
            comp.match_valid(node, call, tiles[which], dst, what, f"\"Fix: TADDDEQRELU {which} valid shape "
                             f"mismatch with dst.\", {_DEQ}")
    for what, have, need in (("rows", tmp.tile.valid_rows, dst.tile.valid_rows),
                             ("columns", tmp.tile.valid_cols, dst.tile.valid_cols)):
        if isinstance(have, Const) and isinstance(need, Const) and int(have.value) < int(need.value):
            comp.error(node, f"{call}: tmp '{tmp.name}' has {int(have.value)} valid {what} but '{dst.name}' "
                             f"{int(need.value)} (\"Fix: TADDDEQRELU tmp must be at least as large as dst.\", "
                             f"{_DEQ})", "give tmp dst's valid region or a larger one")
    for i, role in enumerate(names):
        for other in names[i + 1:]:
            if share_words(tiles[role], tiles[other]):
                comp.error(node, f"{call}: {role} '{tiles[role].name}' and {other} '{tiles[other].name}' share "
                                 f"words; TAddDeqRelu.hpp writes all four (src0 and src1 become its float32 "
                                 "buffers, tmp its sum and zeros), which pypto_sim computes element by element, "
                                 "the same only when they are apart", "give each operand a tile of its own")
    ops = (comp._base(dst, node, call), comp._base(tiles["src0"], node, call), comp._base(tiles["src1"], node, call),
           comp.operand(args["deq_scale"], dtypes.float32, node), comp._base(tmp, node, call),
           comp._int_operand(dst.tile.valid_rows, node, "rows"),
           comp._int_operand(dst.tile.valid_cols, node, "cols"),
           *(comp._int_operand(Const(tiles[n].tile.row_pitch, dtypes.int32), node, "pitch") for n in names))
    comp.emit(spec.name, None, ops, dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = (f"{dst.name} <- half(relu(({tiles['src0'].name} + {tiles['src1'].name}) * scale)), "
                               f"{tiles['src0'].name}, {tiles['src1'].name} and {tmp.name} overwritten")
