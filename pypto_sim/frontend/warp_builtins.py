"""Lowering of the warp builtins: shuffles, votes, ballots, matches and the warp barrier, in
pto's names (``shfl_xor(x, k)``, ``vote_all(p)``, ``match_any(x)``, ``barrier()``) and in
numba-cuda's (``shfl_xor_sync(mask, x, k)``, ``all_sync(mask, p)``, ``eq_sync``,
``match_any_sync``, ``match_all_sync``, ``syncwarp(mask)``; isa/25_simt.toml).

A lane mask names the lanes an operation combines, as CUDA's ``mask`` does: a vote, ballot or
match of a lane combines the warp's active lanes that are in its mask (all active lanes when
there is none). A warp runs its active lanes in lockstep, so the warp barrier and the
shuffles need no mask: ``syncwarp(mask)`` is ``barrier()`` and a shuffle's mask is checked to
be an int and otherwise unused (CUDA leaves reading a lane outside it undefined).

Functions of the kernel compiler ``comp``; the builtins' lowerings are registered in
registry.py's LOWERINGS.
"""
from __future__ import annotations

from .. import dtypes
from ..ir import Reg
from .aicore_names import Intrinsic
from .registry import LOWERINGS
from .values import NONE, Const, Val

FULL_MASK = -1           # every lane: 0xFFFFFFFF as an int32

# numba-cuda's lane masks, lowered to instructions the ISA has (a ballot; a shift)
activemask = Intrinsic("activemask", "pto.activemask()",
                       "The int32 bit mask of the warp's active lanes (CUDA's __activemask()): "
                       "a ballot of True.")
lanemask_lt = Intrinsic("lanemask_lt", "pto.lanemask_lt()",
                        "Per lane: the int32 bit mask of the lanes below it, (1 << lane) - 1 "
                        "(CUDA's %lanemask_lt).")
WARP_INTRINSICS = frozenset({"activemask", "lanemask_lt"})


def lane_mask(comp, mask, node):
    """A lane mask as an int32 operand: None is every lane; a constant 0..0xFFFFFFFF (or a
    negative int32) is its 32 bits as an int32 (0xFFFFFFFF is -1); a run-time int value is
    used as it is."""
    if mask is NONE:
        return Const(FULL_MASK, dtypes.int32)
    comp.require_value(mask, node)
    if mask.dtype.is_float or mask.dtype == dtypes.bool_:
        comp.error(node, f"a lane mask is an int bit mask (bit k = lane k), got {mask.dtype}",
                   "pass e.g. 0xFFFFFFFF for the whole warp, or a ballot's result")
    if isinstance(mask, Const):
        value = int(mask.value)
        if not -2**31 <= value <= 0xFFFFFFFF:
            comp.error(node, f"the lane mask {value:#x} does not fit in 32 bits",
                       "a warp has 32 lanes: give a mask in 0..0xFFFFFFFF")
        value &= 0xFFFFFFFF
        return Const(value - 2**32 if value >= 2**31 else value, dtypes.int32)
    return mask


# ---------------------------------------------------------------- shuffles
def _shuffle(comp, op, node, x, k):
    comp.require_value(x, node)
    comp.require_value(k, node)
    dtype = x.dtype
    src = comp.operand(x, dtype, node)
    kk = comp.operand(k, dtypes.int32, node)
    uniform = not isinstance(src, Reg) or src.uniform
    dst = comp.new_reg(dtype, uniform)
    comp.emit(op, dst, (src, kk), dtype, node)
    return Val(dst)


@LOWERINGS.lowering("shfl_idx", "shfl_up", "shfl_down", "shfl_xor", "shfl_sync", "shfl_up_sync", "shfl_down_sync",
                   "shfl_xor_sync", per_builtin=True)
def lower_shuffle(comp, node, args, builtin):
    """pto.shfl_idx(x, lane) and the others: (value, lane or delta or xor mask) in the
    signature's order; the CUDA-style ``*_sync`` forms take the lane mask first."""
    values = list(args.values())
    if builtin.name.endswith("_sync"):
        lane_mask(comp, values.pop(0), node)
    return _shuffle(comp, builtin.specs[0].name, node, *values)


# ---------------------------------------------------------------- votes and matches
def _vote(comp, op, node, pred, mask, result):
    """A vote or ballot of a predicate over the active lanes in mask."""
    src = comp.operand(comp.truth(pred, node), dtypes.bool_, node)
    return _combine(comp, op, node, src, mask, result)


def _match(comp, op, node, x, mask):
    """A match of a value over the active lanes in mask: an int32 lane mask."""
    comp.require_value(x, node)
    if x.dtype.itemsize == 8:
        # the executors compare match words as values (NaN matches NaN), which an int64
        # word (its bits) would get wrong: 64-bit matches are not built
        comp.error(node, f"pto.{op.lower()}: matching {x.dtype} values is not supported",
                   "match a 32-bit value (e.g. the low and high halves in two matches)")
    return _combine(comp, op, node, comp.operand(x, x.dtype, node), mask, dtypes.int32)


def _combine(comp, op, node, src, mask, result):
    m = comp.operand(lane_mask(comp, mask, node), dtypes.int32, node)
    uniform = all(not isinstance(o, Reg) or o.uniform for o in (src, m))
    dst = comp.new_reg(result, uniform)
    comp.emit(op, dst, (src, m), result, node)
    return Val(dst)


@LOWERINGS.lowering("vote_all", "all_sync", "vote_any", "any_sync", "vote_eq", "eq_sync", "ballot", "ballot_sync",
                   per_builtin=True)
def lower_vote(comp, node, args, builtin):
    """pto.vote_all(pred, mask) and the other votes: the record's instruction and result dtype
    (bool, or BALLOT's int32 lane mask)."""
    spec = builtin.specs[0]
    return _vote(comp, spec.name, node, args["pred"], args["mask"], dtypes.BY_NAME[spec.dtypes[0]])


@LOWERINGS.lowering("match_any", "match_all", "match_any_sync", per_builtin=True)
def lower_match(comp, node, args, builtin):
    """pto.match_any(x, mask=None), match_all(x, mask=None), match_any_sync(mask, value)."""
    return _match(comp, builtin.specs[0].name, node, args.get("x", args.get("value")), args["mask"])


@LOWERINGS.lowering("match_all_sync")
def lower_match_all_sync(comp, node, args):
    """numba's form: (the lane mask, whether it is non-zero), to unpack as
    ``bits, pred = match_all_sync(mask, value)``."""
    bits = _match(comp, "MATCH_ALL", node, args["value"], args["mask"])
    return (bits, comp.alu("NE", [bits, Const(0, dtypes.int32)], node))


def warp_intrinsic(comp, func, node):
    """pto.activemask() and pto.lanemask_lt()."""
    if node.args or node.keywords:
        comp.error(node, f"pto.{func.name}() takes no arguments")
    if func.name == "activemask":
        return _vote(comp, "BALLOT", node, Const(True, dtypes.bool_), NONE, dtypes.int32)
    lane = comp.new_reg(dtypes.int32, False)
    comp.emit("LANE_ID", lane, (), dtypes.int32, node, aux=(0,))
    below = comp.alu("SHL", [Const(1, dtypes.int32), Val(lane)], node, dtype=dtypes.int32)
    return comp.alu("SUB", [below, Const(1, dtypes.int32)], node, dtype=dtypes.int32)


# ---------------------------------------------------------------- the warp barrier
@LOWERINGS.lowering("barrier", "syncwarp")
def lower_barrier(comp, node, args):
    lane_mask(comp, args["mask"], node)
    comp.emit("BARRIER", None, (), None, node)

