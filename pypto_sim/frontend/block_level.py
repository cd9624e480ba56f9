"""Which tile instructions of a lane kernel every warp of a block reaches, with the same operands.

The article's tile instructions that move or compute tile data (the families of
isa/tile_roles.py; not wait_all, which each warp waits at) are block-level: warp 0 of each
block issues them and the other warps skip them (docs/tiles.md). One that warp 0 does not reach, or reaches with other
operands than another warp, would silently not run as the kernel says (a copy "by warp 1" that
copies nothing). So a tile instruction of a lane kernel must sit where every warp of the block
goes and take operands every warp agrees on; where that may not hold the compiler says so at
the instruction's line (a CompileError naming the statement that makes the warps differ).

"May differ between the warps of a block" is Uniformity's analysis with the builtins whose
value differs from warp to warp as well as from lane to lane (get_warp_id, the warp votes). A
statement may be reached by only some warps when it is under an if / while / for whose
condition may differ, after a return such a condition takes (until the kernel's end), after a
continue one takes (until the loop's end), or anywhere in a loop a break under one ends.
"""
from __future__ import annotations

import ast

from .uniformity import VARYING_BUILTINS, Uniformity, _has_loop_jump, _has_return

# warp-uniform builtins whose value differs from warp to warp of a block
WARP_VARYING_BUILTINS = {"get_warp_id", "vote_all", "all_sync", "vote_any", "any_sync", "vote_eq", "eq_sync",
                         "ballot", "ballot_sync", "match_any", "match_all", "match_any_sync", "match_all_sync",
                         "activemask", "shfl_idx", "shfl_up", "shfl_down", "shfl_xor", "shfl_sync",
                         "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"}
BLOCK_VARYING_BUILTINS = VARYING_BUILTINS | WARP_VARYING_BUILTINS


def _has_break(stmts) -> bool:
    """A break of the enclosing loop (not of a nested one) among the statements."""
    for s in stmts:
        if isinstance(s, ast.Break):
            return True
        if isinstance(s, ast.If) and (_has_break(s.body) or _has_break(s.orelse)):
            return True
        if isinstance(s, ast.With) and _has_break(s.body):
            return True
    return False


class BlockLevel:
    """The analysis of one function body: ``varying`` (names whose value may differ between
    warps of a block) and ``divergent`` (id of each AST node that only some warps may reach ->
    the file line of the statement that makes them differ; cause: such a line for the whole
    body, a helper's inlined where only some warps go)."""

    def __init__(self, body, name_of_call, line_offset=0, varying_params=(), cause=None):
        self.name_of_call = name_of_call          # ast.Call -> the builtin's name, or None
        self.line_offset = line_offset            # the AST's line 1 is the file's line_offset + 1
        self.uniformity = Uniformity(body, self._varying_call, varying_params, ctrl=cause is not None)
        self.varying = self.uniformity.run()
        self.divergent: dict = {}
        self._walk(body, cause)

    def _varying_call(self, call, args_varying) -> bool:
        return self.name_of_call(call) in BLOCK_VARYING_BUILTINS or args_varying

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

    def _varying_break(self, body) -> bool:
        """Whether a break of this loop sits under a condition that may differ between warps."""
        for s in body:
            if isinstance(s, ast.If):
                if self.differs(s.test) and _has_break(s.body + s.orelse):
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
