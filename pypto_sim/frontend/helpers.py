"""Inlining of helper kernels: a @pto.kernel called from a kernel is compiled in place.

A mixin of :class:`pypto_sim.frontend.codegen.KernelCompiler`. A helper whose only `return`
is its last statement is inlined straight; one with early returns runs inside a one-trip loop
frame whose `return` is a BREAK, so lanes that return wait at the end of the helper.
"""
from __future__ import annotations

import ast

from .. import dtypes
from ..ir import Imm, Reg
from ..ir.program import int_sem_of
from .block_level import BlockLevel
from .scope import Scope
from .uniformity import Uniformity, assignment_sites
from .values import Const, HomeVar, Ptr, Val


class HelperInlining:
    """Helper-call half of the kernel compiler."""

    def return_register(self, value, node) -> Reg:
        """The helper's per-lane result register, of the dtype its returns agree on.

        A literal adopts the dtype of the other returns (`return 0` then `return x` with x
        float32 returns float32, as Python would give 0 or x); two returns of different dtypes
        are an error rather than a silent conversion."""
        scope = self.scope
        home = scope.return_home
        line = getattr(node, "lineno", 0) + self.kernel.line_offset
        if home is None:
            scope.return_home = self.new_reg(value.dtype, False)
            scope.return_line = line
            return scope.return_home
        if value.dtype == home.dtype:
            return home
        weak = isinstance(value, Const) and value.weak
        if weak and self.cast(value, home.dtype, node).value == value.value:
            return home
        only_literals = len(scope.return_movs) == len([i for i in self.instrs if i.dst == home])
        if only_literals and all(self.cast(c, value.dtype, node).value == c.value
                                 for _, c in scope.return_movs):
            # the earlier returns were literals: they take this value's dtype
            new = self.new_reg(value.dtype, False)
            for pc, c in scope.return_movs:
                ins = self.instrs[pc]
                ins.dst, ins.dtype = new, new.dtype
                ins.srcs = (self.operand(c, new.dtype, node),)
                ins.aux = (int_sem_of(new.dtype),)
            scope.return_home = new
            scope.return_line = line
            return new
        self.error(node, f"this return gives a {value.dtype} value but the return at line "
                         f"{scope.return_line} gives {home.dtype}; a helper returns one dtype",
                   f"return {home.dtype} on every path (write 0.0 rather than 0 for a float), or "
                   f"convert with pto.cast(..., pto.{home.dtype})")

    # ---------------------------------------------------------------- helpers (inlined)
    def inline_helper(self, helper, node):
        if helper in self.inline_stack:
            self.error(node, f"'{helper.name}' calls itself; recursion cannot be inlined")
        if node.keywords:
            self.error(node, "helper kernels take positional arguments only")
        fn_ast = helper.fn_ast
        params = [a.arg for a in fn_ast.args.args]
        if len(node.args) != len(params):
            self.error(node, f"'{helper.name}' takes {len(params)} arguments, {len(node.args)} given")
        args = [self.expr(a) for a in node.args]
        # a pointer whose offset is per-lane is as per-lane as a lane value: `pto.load(p)` differs
        varying_params = {p for p, a in zip(params, args)
                          if (isinstance(a, Val) and not a.uniform)
                          or (isinstance(a, Ptr) and isinstance(a.offset, Val) and not a.offset.uniform)}
        # A helper's locals die when it returns, so lanes masked off at the call never read
        # them: only divergence inside the helper matters to its own analysis.
        varying = Uniformity(fn_ast.body, self._varying_call_for_analysis(helper), varying_params).run()
        outer_block = self.block_level
        if outer_block is not None:      # a lane kernel's: where the helper's tile instructions may go
            self.block_level = BlockLevel(fn_ast.body, helper, helper.line_offset,
                                          {p for p, a in zip(params, node.args) if outer_block.differs(a)},
                                          outer_block.divergent.get(id(node)))
        sites = assignment_sites(fn_ast.body)
        scope = Scope(helper.fn_globals, helper.closure, varying, sites, params, fn_ast.body)
        returns = [n for s in fn_ast.body for n in ast.walk(s) if isinstance(n, ast.Return)]
        scope.return_frame = not (len(returns) <= 1 and (not returns or fn_ast.body[-1] is returns[0]))
        self.scopes.append(scope)
        self.inline_stack.append(helper)
        # the inlined instructions carry the helper's line numbers: show the helper's text there.
        # Instructions record a line, not a file, so a helper from another file is attributed to
        # its call in the kernel's file (each instruction's line, for run-time errors, traces and
        # hotspots); compile errors inside it still name the helper's own file and line.
        outer_kernel = self.kernel
        call_line = self.call_site_line
        if helper.file == self.inline_stack[0].file:
            self.source_lines.update(helper.source_lines)
        elif call_line is None:
            self.call_site_line = getattr(node, "lineno", 0) + outer_kernel.line_offset
        self.kernel = _HelperView(outer_kernel, helper)
        depth = self.loop_depth
        try:
            for p, a in zip(params, args):
                if isinstance(a, (Val, Const)) and sites.get(p, 0) > 0:
                    # a parameter the helper assigns gets a home register, also when the caller
                    # passed a literal: `x = x + 1` in a loop must carry x between iterations
                    home = self.new_reg(a.dtype, p not in varying)
                    # (fn_ast, not the call: lines now count from the helper's file offset)
                    self.emit("MOV", home, (self.operand(a, a.dtype, fn_ast),), a.dtype, fn_ast,
                              aux=(int_sem_of(a.dtype),))
                    scope.names[p] = HomeVar(home, fn_ast.lineno)
                elif isinstance(a, Ptr) and sites.get(p, 0) > 0:
                    # a pointer parameter the helper reassigns (`p = p + 1` in a loop) needs its
                    # offset in a register, exactly like a kernel's tensor parameter
                    self.bind(p, a, fn_ast, is_param=True)
                else:
                    scope.names[p] = a
            if scope.return_frame:
                # early returns: a one-trip loop frame whose `return` is a BREAK
                if any(isinstance(n, ast.Return) for s in fn_ast.body for loop in ast.walk(s)
                       if isinstance(loop, (ast.For, ast.While)) for n in ast.walk(loop)):
                    scope.return_flag = self.new_reg(dtypes.bool_, False)
                    self.emit("MOV", scope.return_flag, (Imm(0.0, dtypes.bool_),), dtypes.bool_, fn_ast, aux=(1,))
                self.loop_depth = 0
                self.loop(fn_ast, lambda: None, lambda: None, fn_ast.body,
                          tail_fn=lambda: self.emit("BREAK", None, (), None, fn_ast.body[-1]))
            else:
                self.loop_depth = depth
                self.block(fn_ast.body)
        finally:
            self.loop_depth = depth
            self.call_site_line = call_line
            self.kernel = outer_kernel
            self.block_level = outer_block
            self.scopes.pop()
            self.inline_stack.pop()
        result = scope.return_home
        if isinstance(result, Reg):
            return Val(result)
        return result if result is not None else Const(0, dtypes.int32)


class _HelperView:
    """The compiler's view of the kernel while inlining a helper: lines point into the helper."""

    def __init__(self, outer, helper):
        self.outer = outer
        self.helper = helper
        self.name = outer.name
        self.file = helper.file
        self.line_offset = helper.line_offset
        self.first_line = outer.first_line
        self.source_lines = helper.source_lines      # a compile error's text, from the helper's own file
        self.fn_globals = helper.fn_globals
        self.closure = helper.closure
