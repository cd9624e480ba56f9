"""Lowering of the builtins whose ISA record decides it: the ids (family id), the scalar ALU
builtins (family alu), select, and the vector tile operations of the elementwise, reduce and
expand families (the compiler's ``lower_tile_op``). A builtin added to one of these families
in the ISA table needs no code here; ``pto.tdivs``, whose two records (TDIVS, TSDIVS) the
operands' order picks, has its own.

Functions of the kernel compiler ``comp``, registered in registry.py's LOWERINGS.
"""
from __future__ import annotations

from .. import dtypes
from ..ir import Reg
from ..ir.program import int_sem_of
from .builtin_checks import no_simt_id_on_aicore
from .mask_builtins import share_words
from .registry import LOWERINGS
from .values import Const, Ptr, Val

# the families whose builtins lower_tile_op lowers from their operands (isa/*.toml)
TILE_OP_FAMILIES = ("tile_alu", "tile_reduce", "tile_expand", "tile_expand_op", "tile_col_reduce",
                    "tile_col_expand", "tile_col_expand_op")


@LOWERINGS.family_lowering("id", checks=(no_simt_id_on_aicore,), binds=False)
def lower_id(comp, node, builtin):
    """pto.get_global_id(dim) and the other ids: one instruction, dim 0, 1 or 2."""
    spec = builtin.specs[0]
    dim = comp.bind_call(builtin, node).get("dim", Const(0, dtypes.int32))
    if not isinstance(dim, Const) or int(dim.value) not in (0, 1, 2):
        comp.error(node, f"pto.{builtin.name}: dim must be the constant 0, 1 or 2")
    uniform = builtin.name not in ("get_global_id", "get_local_id", "get_lane_id")
    dst = comp.new_reg(dtypes.int32, uniform)
    comp.emit(spec.name, dst, (), dtypes.int32, node, aux=(int(dim.value),))
    return Val(dst)


@LOWERINGS.family_lowering("alu", binds=False)
def lower_alu(comp, node, builtin):
    """pto.add(a, b) and the other scalar ALU builtins: the operator's instruction."""
    args = list(comp.bind_call(builtin, node).values())
    for a, arg_node in zip(args, node.args):
        comp.require_value(a, arg_node)
    return comp.alu(builtin.specs[0].name, args, node)


@LOWERINGS.family_lowering(*TILE_OP_FAMILIES, binds=False)
def lower_tile_family(comp, node, builtin):
    """pto.tadd(dst, a, b) and the other vector tile operations, from their ISA operands."""
    return comp.lower_tile_op(builtin.specs[0], node, comp.bind_call(builtin, node))


@LOWERINGS.lowering("tdivs", binds=False)
def lower_tdivs(comp, node, builtin):
    """pto.tdivs(dst, src, scalar): TDIVS, tile / scalar; pto.tdivs(dst, scalar, src), the scalar
    before the tile as pto-isa's TDIVS(dst, scalar, src): TSDIVS, scalar / tile (TDivS.hpp TSDiv)."""
    args = comp.bind_call(builtin, node)
    spec = {s.name: s for s in builtin.specs}
    if isinstance(args["scalar"], Ptr) and not isinstance(args["src"], Ptr):
        args = dict(args, src=args["scalar"], scalar=args["src"])
        _tsdivs_alias(comp, node, args["dst"], args["src"])
        return comp.lower_tile_op(spec["TSDIVS"], node, args)
    return comp.lower_tile_op(spec["TDIVS"], node, args)


def _tsdivs_alias(comp, node, dst, src):
    """A CompileError for a half or float TSDIVS whose src shares words with dst: A2/A3 fills dst
    with the scalar (vector_dup) before vdiv reads src (TDivS.hpp SDivOp, lines 72-75), so those
    elements would divide the scalar by itself. The integers' scalar loop (TSDiv_naive) reads each
    element before it writes it. Tiles placed at run time (a tile group's) are not checked."""
    if dst.tile is not None and src.tile is not None and dst.dtype.is_float and share_words(dst, src):
        comp.error(node, f"pto.tdivs(dst, scalar, src): src '{src.name}' shares words with dst '{dst.name}'; "
                         f"for {dst.dtype} A2/A3 first fills dst with the scalar (vector_dup), then divides it "
                         "by src (vdiv, TDivS.hpp SDivOp lines 72-75), so src's shared elements would already "
                         "hold the scalar", "write the quotient into a tile apart from src")


@LOWERINGS.lowering("select")
def lower_select(comp, node, args):
    cond = comp.truth(args["cond"], node)
    x, y = args["x"], args["y"]
    comp.require_value(x, node)
    comp.require_value(y, node)
    dtype = comp.result_dtype(x, y)
    if isinstance(cond, Const):
        return comp.cast(x if cond.value else y, dtype, node)
    ops = (comp.operand(cond, dtypes.bool_, node), comp.operand(x, dtype, node),
           comp.operand(y, dtype, node))
    dst = comp.new_reg(dtype, all(o.uniform for o in ops if isinstance(o, Reg)))
    comp.emit("SELECT", dst, ops, dtype, node, aux=(int_sem_of(dtype),))
    return Val(dst)

