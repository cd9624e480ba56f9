"""Which tile instructions of a lane kernel every warp of a block reaches, with the same operands.

The article's tile instructions that move or compute tile data (the families of
isa/tile_roles.py; not wait_all, which each warp waits at) are block-level: warp 0 of each
block issues them and the other warps skip them (docs/tiles.md). One that warp 0 does not reach, or reaches with other
operands than another warp, would silently not run as the kernel says (a copy "by warp 1" that
copies nothing). So a tile instruction of a lane kernel must sit where every warp of the block
goes and take operands every warp agrees on; where that may not hold the compiler says so at
the instruction's line (a CompileError naming the statement that makes the warps differ).

"May differ between the warps of a block" is Uniformity's analysis with the builtins whose
value differs from warp to warp as well as from lane to lane (get_warp_id, the warp votes; a
helper kernel's result when its arguments or its return values may). A statement may be
reached by only some warps when it is under an if / while / for whose condition may differ,
after a return such a condition takes (until the kernel's end), after a continue one takes
(until the loop's end), or anywhere in a loop a break under one ends; but an if whose condition
is decided for the block's first lane (`pto.get_local_id() == 0`, `pto.get_warp_id() < 2`:
constants and ids that are 0 there) is one warp 0 takes one way, so it issues the tile
instructions on that side, and never reaches those on the other.
"""
from __future__ import annotations

import ast

from .uniformity import (UNRESOLVED, VARYING_BUILTINS, Uniformity, _has_loop_jump, _has_return, assignment_sites,
                         callee)

# warp-uniform builtins whose value differs from warp to warp of a block
WARP_VARYING_BUILTINS = {"get_warp_id", "vote_all", "all_sync", "vote_any", "any_sync", "vote_eq", "eq_sync",
                         "ballot", "ballot_sync", "match_any", "match_all", "match_any_sync", "match_all_sync",
                         "activemask", "shfl_idx", "shfl_up", "shfl_down", "shfl_xor", "shfl_sync",
                         "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"}
BLOCK_VARYING_BUILTINS = VARYING_BUILTINS | WARP_VARYING_BUILTINS
# ids that are 0 in the block's first lane, which is warp 0's: a condition true there is one warp 0
# takes (`if pto.get_local_id() == 0:`, `if pto.get_warp_id() == 0:`), so it issues what is under it
FIRST_LANE_IDS = {"get_warp_id", "get_local_id", "get_lane_id"}
_COMPARE = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
            ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}


class BlockLevel:
    """The analysis of one function body (a kernel's, or a helper's inlined): ``varying`` (names
    whose value may differ between warps of a block) and ``divergent`` (id of each AST node that
    only some warps may reach, or that warp 0 may not -> the file line of the statement that
    makes them differ; cause: such a line for the whole body, a helper's inlined where only
    some warps go)."""

    def __init__(self, body, kernel, line_offset=0, varying_params=(), cause=None, _helpers=None):
        self.kernel = kernel                      # whose module and closure name the calls
        self.line_offset = line_offset            # the AST's line 1 is the file's line_offset + 1
        self._helpers = {} if _helpers is None else _helpers     # helper -> whether its result differs
        self.uniformity = Uniformity(body, self._varying_call, varying_params, ctrl=cause is not None)
        self.varying = self.uniformity.run()
        self.divergent: dict = {}
        # names bound once, to an id-decided value (`tid = pto.get_local_id()`): their first-lane value
        sites = assignment_sites(body)
        self._bound = {}
        for n in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                    and sites.get(n.targets[0].id) == 1 and n.targets[0].id not in varying_params:
                self._bound[n.targets[0].id] = n.value
        self._walk(body, cause)

    def _varying_call(self, call, args_varying) -> bool:
        func = callee(self.kernel, call)
        if func is UNRESOLVED:
            return True
        if hasattr(func, "is_pto_kernel"):
            return args_varying or self._helper_differs(func)
        return getattr(func, "name", None) in BLOCK_VARYING_BUILTINS or args_varying

    def _helper_differs(self, helper) -> bool:
        """Whether a helper kernel called with arguments every warp agrees on may return values
        that differ between warps: a return value that may, or a return only some warps take."""
        if helper not in self._helpers:
            self._helpers[helper] = True          # while it is analysed (recursion is refused later)
            inner = BlockLevel(helper.fn_ast.body, helper, helper.line_offset, _helpers=self._helpers)
            returns = [n for n in ast.walk(ast.Module(body=helper.fn_ast.body, type_ignores=[]))
                       if isinstance(n, ast.Return)]
            self._helpers[helper] = any(id(r) in inner.divergent or inner.differs(r.value) for r in returns)
        return self._helpers[helper]

    def differs(self, node) -> bool:
        """Whether the expression's value may differ between the warps of a block."""
        return self.uniformity.expr(node)

    def _mark(self, stmt, cause):
        for n in ast.walk(stmt):
            self.divergent.setdefault(id(n), cause)

    def _walk(self, stmts, cause):
        """Visit statements reached by only some warps from `cause` (a line) on, or by all
        (None); returns (the cause after them, whether it comes from a return)."""
        returned = False
        for s in stmts:
            after, ret = self._stmt(s, cause)
            if after is not None and cause is None:
                cause, returned = after, ret
        return cause, returned

    def _stmt(self, s, cause):
        if isinstance(s, ast.If):
            c = cause if cause is not None else (s.lineno + self.line_offset if self.differs(s.test) else None)
            first = self._at_first_lane(s.test) if cause is None and c is not None else None
            if first is not None:       # warp 0 (its first lane) takes one side: it issues what is there
                taken, other = (s.body, s.orelse) if first else (s.orelse, s.body)
                self._mark(s.test, c)
                self._walk(other, c)
                inner, returned = self._walk(taken, None)
                if _has_return(taken) or _has_loop_jump(taken):
                    return c, _has_return(taken)
                return inner, returned
            if c is not None:
                self._mark(s.test, c)
                self._walk(s.body, c)
                self._walk(s.orelse, c)
                if cause is None and (_has_return(s.body + s.orelse) or _has_loop_jump(s.body + s.orelse)):
                    return c, _has_return(s.body + s.orelse)
                return None, False
            a, ra = self._walk(s.body, None)
            b, rb = self._walk(s.orelse, None)
            return (a if a is not None else b), (ra if a is not None else rb)
        if isinstance(s, (ast.For, ast.While)):
            bounds = s.iter if isinstance(s, ast.For) else s.test
            c = cause
            if c is None and (self.differs(bounds) or (self._varying_break(s.body))):
                c = s.lineno + self.line_offset
            if c is not None:
                self._mark(s, c)
                return None, False
            inner, returned = self._walk(s.body, None)
            self._walk(s.orelse, None)
            return (inner, True) if returned else (None, False)     # a continue's ends with the loop
        if isinstance(s, ast.With):
            return self._walk(s.body, cause)
        if cause is not None:
            self._mark(s, cause)
        return None, False

    def _at_first_lane(self, node):
        """The value the expression has in the block's first lane (warp 0, lane 0: every lane,
        warp and local id 0) when it follows from constants and those ids alone, else None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int)):
            return node.value
        if isinstance(node, ast.Name) and node.id in self._bound:
            value, self._bound[node.id] = self._bound[node.id], None  # None while evaluated: no cycles
            if value is None:
                return None
            try:
                return self._at_first_lane(value)
            finally:
                self._bound[node.id] = value
        if isinstance(node, ast.Call):
            if getattr(callee(self.kernel, node), "name", None) in FIRST_LANE_IDS and not node.keywords \
                    and all(isinstance(a, ast.Constant) for a in node.args):
                return 0
            return None
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            a, b = self._at_first_lane(node.left), self._at_first_lane(node.comparators[0])
            return None if a is None or b is None else _COMPARE[type(node.ops[0])](a, b)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            v = self._at_first_lane(node.operand)
            return None if v is None else not v
        if isinstance(node, ast.BoolOp):
            values = [self._at_first_lane(v) for v in node.values]
            decided = [bool(v) for v in values if v is not None]
            if isinstance(node.op, ast.And):
                return False if False in decided else (True if len(decided) == len(values) else None)
            return True if True in decided else (False if len(decided) == len(values) else None)
        return None

    def _varying_break(self, body) -> bool:
        """Whether a break of this loop sits under a condition that may differ between warps."""
        for s in body:
            if isinstance(s, ast.If):
                if self.differs(s.test) and _has_loop_jump(s.body + s.orelse, ast.Break):
                    return True
                if self._varying_break(s.body) or self._varying_break(s.orelse):
                    return True
            elif isinstance(s, ast.With) and self._varying_break(s.body):
                return True
        return False


def check_tile_instruction(comp, analysis, op, node):
    """A CompileError when tile instruction op at node (a lane kernel's) may be reached by only
    some warps of a block, or given operands that differ between them (the module's docstring)."""
    call = f"pto.{comp.isa[op].builtin or op.lower()}"
    line = analysis.divergent.get(id(node))
    if line is not None:
        comp.error(node, f"{call} is a block-level tile instruction (warp 0 issues it, the other warps "
                         f"skip it), but only some warps of a block may reach it: line {line} decides per "
                         "warp or per lane", "keep tile instructions where every warp goes (outside "
                         "ifs and loops on lane or warp ids, before any early return), and put the lane "
                         "code under the if instead")
    if isinstance(node, ast.Call):
        for arg in list(node.args) + [k.value for k in node.keywords]:
            if analysis.differs(arg):
                comp.error(node, f"{call}: operand '{ast.unparse(arg)}' may differ between the warps of "
                                 "a block, but warp 0 alone issues the instruction, with its own value",
                           "give tile instructions operands every warp agrees on (arguments, constants, "
                           "block ids), not warp or lane ids")
