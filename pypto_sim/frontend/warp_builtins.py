"""Lowering of the warp builtins: shuffles, votes, ballots, matches and the warp barrier, in
pto's names (``shfl_xor(x, k)``, ``vote_all(p)``, ``match_any(x)``, ``barrier()``) and in
numba-cuda's (``shfl_xor_sync(mask, x, k)``, ``all_sync(mask, p)``, ``eq_sync``,
``match_any_sync``, ``match_all_sync``, ``syncwarp(mask)``; isa/25_simt.toml).

A lane mask names the lanes an operation combines, as CUDA's ``mask`` does: a vote, ballot or
match of a lane combines the warp's active lanes that are in its mask (all active lanes when
there is none). A warp runs its active lanes in lockstep, so the warp barrier and the
shuffles need no mask: ``syncwarp(mask)`` is ``barrier()`` and a shuffle's mask is checked to
be an int and otherwise unused (CUDA leaves reading a lane outside it undefined).

A mixin of :class:`pypto_sim.frontend.codegen.KernelCompiler`.
"""
from __future__ import annotations

from .. import dtypes
from ..ir import Reg
from .aicore_names import Intrinsic
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


class WarpBuiltins:
    """Warp half of the kernel compiler."""

    def lane_mask(self, mask, node):
        """A lane mask as an int32 operand: None is every lane; a constant 0..0xFFFFFFFF (or a
        negative int32) is its 32 bits as an int32 (0xFFFFFFFF is -1); a run-time int value is
        used as it is."""
        if mask is NONE:
            return Const(FULL_MASK, dtypes.int32)
        self.require_value(mask, node)
        if mask.dtype.is_float or mask.dtype == dtypes.bool_:
            self.error(node, f"a lane mask is an int bit mask (bit k = lane k), got {mask.dtype}",
                       "pass e.g. 0xFFFFFFFF for the whole warp, or a ballot's result")
        if isinstance(mask, Const):
            value = int(mask.value)
            if not -2**31 <= value <= 0xFFFFFFFF:
                self.error(node, f"the lane mask {value:#x} does not fit in 32 bits",
                           "a warp has 32 lanes: give a mask in 0..0xFFFFFFFF")
            value &= 0xFFFFFFFF
            return Const(value - 2**32 if value >= 2**31 else value, dtypes.int32)
        return mask

    # ---------------------------------------------------------------- shuffles
    def _shuffle(self, op, node, x, k):
        self.require_value(x, node)
        self.require_value(k, node)
        dtype = x.dtype
        src = self.operand(x, dtype, node)
        kk = self.operand(k, dtypes.int32, node)
        uniform = not isinstance(src, Reg) or src.uniform
        dst = self.new_reg(dtype, uniform)
        self.emit(op, dst, (src, kk), dtype, node)
        return Val(dst)

    def builtin_shfl_idx(self, node, args):
        return self._shuffle("SHFL_IDX", node, args["x"], args["lane"])

    def builtin_shfl_up(self, node, args):
        return self._shuffle("SHFL_UP", node, args["x"], args["delta"])

    def builtin_shfl_down(self, node, args):
        return self._shuffle("SHFL_DOWN", node, args["x"], args["delta"])

    def builtin_shfl_xor(self, node, args):
        return self._shuffle("SHFL_XOR", node, args["x"], args["mask"])

    def builtin_shfl_sync(self, node, args):
        self.lane_mask(args["mask"], node)
        return self._shuffle("SHFL_IDX", node, args["value"], args["src_lane"])

    def builtin_shfl_up_sync(self, node, args):
        self.lane_mask(args["mask"], node)
        return self._shuffle("SHFL_UP", node, args["value"], args["delta"])

    def builtin_shfl_down_sync(self, node, args):
        self.lane_mask(args["mask"], node)
        return self._shuffle("SHFL_DOWN", node, args["value"], args["delta"])

    def builtin_shfl_xor_sync(self, node, args):
        self.lane_mask(args["mask"], node)
        return self._shuffle("SHFL_XOR", node, args["value"], args["lane_mask"])

    # ---------------------------------------------------------------- votes and matches
    def _vote(self, op, node, pred, mask, result):
        """A vote or ballot of a predicate over the active lanes in mask."""
        src = self.operand(self.truth(pred, node), dtypes.bool_, node)
        return self._combine(op, node, src, mask, result)

    def _match(self, op, node, x, mask):
        """A match of a value over the active lanes in mask: an int32 lane mask."""
        self.require_value(x, node)
        if x.dtype.itemsize == 8:
            # the executors compare match words as values (NaN matches NaN), which an int64
            # word (its bits) would get wrong: 64-bit matches are not built
            self.error(node, f"pto.{op.lower()}: matching {x.dtype} values is not supported",
                       "match a 32-bit value (e.g. the low and high halves in two matches)")
        return self._combine(op, node, self.operand(x, x.dtype, node), mask, dtypes.int32)

    def _combine(self, op, node, src, mask, result):
        m = self.operand(self.lane_mask(mask, node), dtypes.int32, node)
        uniform = all(not isinstance(o, Reg) or o.uniform for o in (src, m))
        dst = self.new_reg(result, uniform)
        self.emit(op, dst, (src, m), result, node)
        return Val(dst)

    def builtin_vote_all(self, node, args):
        return self._vote("VOTE_ALL", node, args["pred"], args["mask"], dtypes.bool_)

    def builtin_vote_any(self, node, args):
        return self._vote("VOTE_ANY", node, args["pred"], args["mask"], dtypes.bool_)

    def builtin_vote_eq(self, node, args):
        return self._vote("VOTE_EQ", node, args["pred"], args["mask"], dtypes.bool_)

    def builtin_ballot(self, node, args):
        return self._vote("BALLOT", node, args["pred"], args["mask"], dtypes.int32)

    builtin_all_sync = builtin_vote_all
    builtin_any_sync = builtin_vote_any
    builtin_eq_sync = builtin_vote_eq
    builtin_ballot_sync = builtin_ballot

    def builtin_match_any(self, node, args):
        return self._match("MATCH_ANY", node, args["x"], args["mask"])

    def builtin_match_all(self, node, args):
        return self._match("MATCH_ALL", node, args["x"], args["mask"])

    def builtin_match_any_sync(self, node, args):
        return self._match("MATCH_ANY", node, args["value"], args["mask"])

    def builtin_match_all_sync(self, node, args):
        """numba's form: (the lane mask, whether it is non-zero), to unpack as
        ``bits, pred = match_all_sync(mask, value)``."""
        bits = self._match("MATCH_ALL", node, args["value"], args["mask"])
        return (bits, self.alu("NE", [bits, Const(0, dtypes.int32)], node))

    def warp_intrinsic(self, func, node):
        """pto.activemask() and pto.lanemask_lt()."""
        if node.args or node.keywords:
            self.error(node, f"pto.{func.name}() takes no arguments")
        if func.name == "activemask":
            return self._vote("BALLOT", node, Const(True, dtypes.bool_), NONE, dtypes.int32)
        lane = self.new_reg(dtypes.int32, False)
        self.emit("LANE_ID", lane, (), dtypes.int32, node, aux=(0,))
        below = self.alu("SHL", [Const(1, dtypes.int32), Val(lane)], node, dtype=dtypes.int32)
        return self.alu("SUB", [below, Const(1, dtypes.int32)], node, dtype=dtypes.int32)

    # ---------------------------------------------------------------- the warp barrier
    def builtin_barrier(self, node, args):
        self.lane_mask(args["mask"], node)
        self.emit("BARRIER", None, (), None, node)

    builtin_syncwarp = builtin_barrier
