"""The kernel compiler: a kernel's Python AST -> PTO IR (a Program).

Statements and control flow live here; expressions in ``expressions.py``; memory and sync
builtins in ``memory_builtins.py``. Control flow is structured: IF/ELSE/ENDIF and
LOOP/BRK_UNLESS/LOOP_CONT/ENDLOOP with a per-warp mask stack (see docs/timing.md), so a warp
whose lanes disagree runs both sides under masks, as SIMT hardware does.
"""
from __future__ import annotations

import ast
import builtins as py_builtins
import contextlib

from .. import dtypes
from ..errors import CompileError
from ..ir import ArgSpec, Instr, Program, Reg
from ..isa import load_isa
from .expressions import ExprLowering, const_of
from .memory_builtins import MemoryBuiltins
from .uniformity import VARYING_BUILTINS, Uniformity, assignment_sites
from .values import Const, HomeVar, Ptr, PtrVar, Val


class _Branch:
    def __init__(self, compiler, if_pc, node):
        self.compiler, self.if_pc, self.node, self.else_pc = compiler, if_pc, node, None

    def else_(self):
        self.else_pc = self.compiler.emit("ELSE", None, (), None, self.node, aux=(0,))


class Scope:
    """Names bound in one function body (the kernel or an inlined helper)."""

    def __init__(self, fn_globals, closure, varying, sites, param_names=()):
        self.names = {}
        self.fn_globals = fn_globals
        self.closure = closure
        self.varying = varying
        self.sites = sites
        self.params = set(param_names)
        self.return_home = None
        self.return_frame = False


class KernelCompiler(ExprLowering, MemoryBuiltins):
    """Compiles one kernel for one argument signature into a Program."""

    def __init__(self, kernel, arg_specs):
        self.kernel = kernel
        self.isa = load_isa()
        self.instrs: list = []
        self.n_lane = 0
        self.n_scalar = 0
        self.buffers: list = []
        self.arg_specs = arg_specs
        self.scopes: list = []
        self.loop_depth = 0
        self.inline_stack = [kernel]

    # ---------------------------------------------------------------- infrastructure
    def error(self, node, message, hint=None, kernel=None):
        line = getattr(node, "lineno", 0) + self.kernel.line_offset if node is not None else None
        construct = ""
        if node is not None:
            try:
                construct = ast.unparse(node).splitlines()[0][:80]
            except Exception:
                construct = type(node).__name__
        raise CompileError(message, kernel=self.kernel.name, file=self.kernel.file, line=line,
                           hint=hint, construct=construct)

    def new_reg(self, dtype, uniform: bool) -> Reg:
        if uniform:
            self.n_scalar += 1
            return Reg(self.n_scalar - 1, dtype, True)
        self.n_lane += 1
        return Reg(self.n_lane - 1, dtype, False)

    def emit(self, op, dst, srcs, dtype, node, aux=()) -> int:
        line = getattr(node, "lineno", 0) + self.kernel.line_offset if node is not None else 0
        self.instrs.append(Instr(op, dst, tuple(srcs), dtype, tuple(aux), line))
        return len(self.instrs) - 1

    def patch(self, pc, *aux):
        self.instrs[pc].aux = tuple(aux)

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    def is_uniform_expr(self, node) -> bool:
        return not self.uniformity_of(self.scope).expr(node)

    def uniformity_of(self, scope):
        u = Uniformity([], self.is_varying_call)
        u.varying = scope.varying
        return u

    def is_varying_call(self, call, args_varying) -> bool:
        try:
            func = self.resolve_static(call.func)
        except CompileError:
            return True
        name = getattr(func, "name", None)
        if name in VARYING_BUILTINS:
            return True
        if hasattr(func, "is_pto_kernel"):
            return True
        return args_varying

    def resolve_static(self, node):
        """Resolve a call's function expression without emitting code (for the analysis)."""
        if isinstance(node, ast.Name):
            if node.id in self.scope.names:
                return None
            return self.lookup(node.id, node)
        if isinstance(node, ast.Attribute):
            return self.expr_Attribute(node)
        return None

    def lookup(self, name, node):
        scope = self.scope
        if name in scope.names:
            bound = scope.names[name]
            if isinstance(bound, HomeVar):
                return Val(bound.reg)
            if isinstance(bound, PtrVar):
                return Ptr(bound.proto.space, bound.proto.slot, bound.proto.dtype, bound.proto.name,
                           Val(bound.reg), bound.proto.count, bound.proto.base)
            return bound
        if name in scope.sites:
            self.error(node, f"'{name}' is used before it is assigned")
        if name in scope.closure:
            return self.from_python(scope.closure[name], node, name)
        if name in scope.fn_globals:
            return self.from_python(scope.fn_globals[name], node, name)
        if hasattr(py_builtins, name):
            return self.from_python(getattr(py_builtins, name), node, name)
        self.error(node, f"name '{name}' is not defined")

    # ---------------------------------------------------------------- program
    def compile(self) -> Program:
        fn_ast = self.kernel.fn_ast
        params = [a.arg for a in fn_ast.args.args]
        sites = assignment_sites(fn_ast.body)
        varying = Uniformity(fn_ast.body, self._varying_call_for_analysis(self.kernel)).run()
        scope = Scope(self.kernel.fn_globals, self.kernel.closure, varying, sites, params)
        self.scopes.append(scope)
        args = []
        for spec in self.arg_specs:
            if spec.kind == "tensor":
                ptr = Ptr("hbm", spec.slot, spec.dtype, spec.name, Const(0, dtypes.int32))
                self.bind(spec.name, ptr, fn_ast, is_param=True)
                args.append(spec)
            else:
                reg = self.new_reg(spec.dtype, True)
                scope.names[spec.name] = HomeVar(reg, fn_ast.lineno)
                args.append(ArgSpec(spec.name, "scalar", spec.dtype, spec.slot, reg))
                if spec.name in varying:
                    # assigned under varying control: give it a per-lane home seeded from the arg
                    home = self.new_reg(spec.dtype, False)
                    self.emit("MOV", home, (reg,), spec.dtype, fn_ast, aux=(0 if spec.dtype.is_float else 1,))
                    scope.names[spec.name] = HomeVar(home, fn_ast.lineno)
        self.block(fn_ast.body)
        self.emit("EXIT", None, (), None, None)
        self.instrs[-1].line = fn_ast.body[-1].end_lineno + self.kernel.line_offset
        return Program(kernel=self.kernel.name, file=self.kernel.file,
                       first_line=self.kernel.first_line, args=tuple(args), instrs=self.instrs,
                       n_lane_slots=self.n_lane, n_scalar_regs=self.n_scalar,
                       buffers=tuple(self.buffers), source_lines=self.kernel.source_lines)

    def _varying_call_for_analysis(self, kernel):
        def check(call, args_varying):
            func = None
            node = call.func
            try:
                if isinstance(node, ast.Name):
                    value = kernel.closure.get(node.id, kernel.fn_globals.get(node.id))
                    func = value
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    mod = kernel.closure.get(node.value.id, kernel.fn_globals.get(node.value.id))
                    func = getattr(mod, node.attr, None)
            except Exception:
                return True
            name = getattr(func, "name", None)
            if name in VARYING_BUILTINS or hasattr(func, "is_pto_kernel"):
                return True
            return args_varying
        return check

    # ---------------------------------------------------------------- binding
    def bind(self, name, value, node, is_param=False):
        scope = self.scope
        multi = scope.sites.get(name, 0) > 1 or (is_param and scope.sites.get(name, 0) > 0)
        existing = scope.names.get(name)
        if isinstance(value, Ptr):
            value = self.rename_buffer(value, name)
            if isinstance(existing, PtrVar):
                if (existing.proto.space, existing.proto.slot) != (value.space, value.slot):
                    self.error(node, f"pointer '{name}' pointed into '{existing.proto.name}' "
                                     f"(line {existing.line}) and now into '{value.name}'",
                               "use a separate variable for each tensor")
                self.emit("MOV", existing.reg, (self.operand(value.offset, dtypes.int32, node),),
                          dtypes.int32, node, aux=(1,))
                return
            if existing is not None and not isinstance(existing, Ptr):
                self.error(node, f"'{name}' held a value and is now assigned a pointer")
            if multi:
                reg = self.new_reg(dtypes.int32, name not in scope.varying)
                self.emit("MOV", reg, (self.operand(value.offset, dtypes.int32, node),),
                          dtypes.int32, node, aux=(1,))
                scope.names[name] = PtrVar(value, reg, getattr(node, "lineno", 0))
            else:
                scope.names[name] = value
            return
        if not isinstance(value, (Const, Val)):
            scope.names[name] = value    # compile-time objects: modules, dtypes, helpers
            return
        if isinstance(existing, (PtrVar, Ptr)):
            self.error(node, f"'{name}' held a pointer and is now assigned a value")
        if isinstance(existing, HomeVar):
            home = existing.reg
            if isinstance(value, Val) and value.dtype != home.dtype:
                first = existing.line + self.kernel.line_offset
                self.error(node, f"'{name}' is {home.dtype} (first assigned at line {first}) "
                                 f"but is assigned a {value.dtype} value here",
                           f"initialise it with a {value.dtype} value, or convert with pto.cast(..., pto.{home.dtype})")
            if self.retarget_last(value, home):
                return
            src = self.operand(value, home.dtype, node)
            self.emit("MOV", home, (src,), home.dtype, node, aux=(0 if home.dtype.is_float else 1,))
            return
        if not multi:
            scope.names[name] = value
            return
        uniform = name not in scope.varying
        if isinstance(value, Val) and value.reg.uniform is False and uniform:
            uniform = False
        if (isinstance(value, Val) and value.reg.uniform == uniform and self.instrs
                and self.instrs[-1].dst == value.reg and not self._named(value.reg)):
            # the expression's fresh result register becomes the variable's home: no MOV
            scope.names[name] = HomeVar(value.reg, getattr(node, "lineno", 0))
            return
        home = self.new_reg(value.dtype, uniform)
        self.emit("MOV", home, (self.operand(value, value.dtype, node),), value.dtype, node,
                  aux=(0 if value.dtype.is_float else 1,))
        scope.names[name] = HomeVar(home, getattr(node, "lineno", 0))

    def retarget_last(self, value, home: Reg) -> bool:
        """Peephole: `x = <expr>` writes the expression's last instruction straight into x's
        home register instead of a temporary plus MOV (so a chain x = fma(x, ..) is one
        instruction per step). Only when no name refers to the temporary."""
        if not (isinstance(value, Val) and self.instrs and self.instrs[-1].dst == value.reg):
            return False
        if value.reg == home or value.dtype != home.dtype:
            return False
        if self._named(value.reg):
            return False
        self.instrs[-1].dst = home
        if value.reg.uniform and self.n_scalar - 1 == value.reg.index:
            self.n_scalar -= 1
        elif not value.reg.uniform and self.n_lane - 1 == value.reg.index:
            self.n_lane -= 1
        return True

    def _named(self, reg: Reg) -> bool:
        """True when some variable refers to this register."""
        for scope in self.scopes:
            for bound in scope.names.values():
                if getattr(bound, "reg", None) == reg:
                    return True
        return False

    # ---------------------------------------------------------------- statements
    def block(self, stmts):
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, node):
        method = getattr(self, f"stmt_{type(node).__name__}", None)
        if method is None:
            self.error(node, f"the statement '{type(node).__name__}' is not supported in a kernel",
                       "kernels support assignments, if/elif/else, for-range, while, break, "
                       "continue, return and calls")
        method(node)

    def stmt_Pass(self, node):
        pass

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return   # docstring
        self.expr(node.value)

    def stmt_Assign(self, node):
        if len(node.targets) != 1:
            self.error(node, "chained assignment (a = b = ...) is not supported in a kernel")
        self.assign(node.targets[0], self.expr(node.value), node)

    def stmt_AnnAssign(self, node):
        if node.value is None:
            self.error(node, "a declaration without a value is not supported in a kernel")
        self.assign(node.target, self.expr(node.value), node)

    def stmt_AugAssign(self, node):
        current = self.expr(node.target) if not isinstance(node.target, ast.Subscript) else None
        if current is None:
            self.error(node, "augmented assignment to memory is not supported",
                       "load, compute and store explicitly")
        value = self.expr(ast.copy_location(ast.BinOp(node.target, node.op, node.value), node))
        self.assign(node.target, value, node)

    def assign(self, target, value, node):
        if isinstance(target, ast.Name):
            self.bind(target.id, value, node)
            return
        if isinstance(target, ast.Subscript):
            ptr = self.expr(target)
            self.require_value(value, node)
            self.store_to(ptr, value, node)
            return
        self.error(node, f"assignment to '{ast.unparse(target)}' is not supported in a kernel")

    # ---------------------------------------------------------------- control flow
    @contextlib.contextmanager
    def masked_if(self, cond, node, has_else=False):
        """IF cond ... [ELSE ...] ENDIF: lanes where cond is false skip the body."""
        if_pc = self.emit("IF", None, (self.operand(cond, dtypes.bool_, node),), None, node, aux=(0, 0))
        branch = _Branch(self, if_pc, node)
        yield branch
        end_pc = self.emit("ENDIF", None, (), None, node)
        else_pc = branch.else_pc if branch.else_pc is not None else end_pc
        self.patch(if_pc, else_pc, end_pc)
        if branch.else_pc is not None:
            self.patch(branch.else_pc, end_pc)

    def stmt_If(self, node):
        cond = self.truth(self.expr(node.test), node.test)
        if isinstance(cond, Const):
            self.block(node.body if cond.value else node.orelse)
            return
        with self.masked_if(cond, node) as branch:
            self.block(node.body)
            if node.orelse:
                branch.else_()
                self.block(node.orelse)

    def loop(self, node, head_fn, step_fn, body, tail_fn=None):
        """LOOP head: [cond; BRK_UNLESS] body [tail] LOOP_CONT [step] ENDLOOP."""
        loop_pc = self.emit("LOOP", None, (), None, node, aux=(0, 0))
        head = len(self.instrs)
        cond = head_fn()
        if cond is not None:
            if isinstance(cond, Const):
                if not cond.value:
                    self.emit("BREAK", None, (), None, node)
            else:
                self.emit("BRK_UNLESS", None, (self.operand(cond, dtypes.bool_, node),), None, node)
        self.loop_depth += 1
        self.block(body)
        if tail_fn is not None:
            tail_fn()
        self.loop_depth -= 1
        cont = self.emit("LOOP_CONT", None, (), None, node)
        step_fn()
        self.emit("ENDLOOP", None, (), None, node, aux=(head,))
        self.patch(loop_pc, cont, len(self.instrs))

    def stmt_While(self, node):
        if node.orelse:
            self.error(node, "while ... else is not supported in a kernel")
        self.loop(node, lambda: self.truth(self.expr(node.test), node.test), lambda: None, node.body)

    def stmt_For(self, node):
        if node.orelse:
            self.error(node, "for ... else is not supported in a kernel")
        if not isinstance(node.target, ast.Name):
            self.error(node, "the loop variable must be a single name")
        it = node.iter
        func = self.expr(it.func) if isinstance(it, ast.Call) else None
        if getattr(func, "name", None) != "range":
            self.error(node, f"kernels loop over range(...) only, not '{ast.unparse(it)}'")
        if it.keywords or not 1 <= len(it.args) <= 3:
            self.error(node, "range() takes 1 to 3 positional arguments")
        args = [self.expr(a) for a in it.args]
        for a, a_node in zip(args, it.args):
            self.require_value(a, a_node)
            if a.dtype.is_float:
                self.error(a_node, f"range() bounds must be integers, got {a.dtype}")
        start, stop, step = (Const(0, dtypes.int32), args[0], Const(1, dtypes.int32)) if len(args) == 1 else \
            (args[0], args[1], args[2] if len(args) == 3 else Const(1, dtypes.int32))
        if isinstance(step, Const) and step.value == 0:
            self.error(node, "range() step must not be zero")
        name = node.target.id
        self.bind(name, self.cast(start, dtypes.int32, node), node)
        # loop-invariant bounds are evaluated once, before the loop, as Python does
        stop = self.freeze(stop, node)
        step = self.freeze(step, node)

        def head():
            i = self.lookup(name, node)
            if isinstance(step, Const):
                return self.alu("LT" if step.value > 0 else "GT", [i, stop], node, dtype=dtypes.int32)
            up = self.alu("AND", [self.alu("GT", [step, Const(0, dtypes.int32)], node),
                                  self.alu("LT", [i, stop], node)], node, dtype=dtypes.bool_)
            down = self.alu("AND", [self.alu("LT", [step, Const(0, dtypes.int32)], node),
                                    self.alu("GT", [i, stop], node)], node, dtype=dtypes.bool_)
            return self.alu("OR", [up, down], node, dtype=dtypes.bool_)

        def step_fn():
            self.bind(name, self.alu("ADD", [self.lookup(name, node), step], node, dtype=dtypes.int32), node)

        self.loop(node, head, step_fn, node.body)

    def freeze(self, v, node):
        """Copy a loop bound into its own register so the body cannot change it."""
        if isinstance(v, Const):
            return v
        reg = self.new_reg(dtypes.int32, v.uniform)
        self.emit("MOV", reg, (self.operand(v, dtypes.int32, node),), dtypes.int32, node, aux=(1,))
        return Val(reg)

    def stmt_Break(self, node):
        if self.loop_depth == 0:
            self.error(node, "'break' outside a loop")
        self.emit("BREAK", None, (), None, node)

    def stmt_Continue(self, node):
        if self.loop_depth == 0:
            self.error(node, "'continue' outside a loop")
        self.emit("CONTINUE", None, (), None, node)

    def stmt_Return(self, node):
        scope = self.scope
        if len(self.scopes) == 1:
            if node.value is not None:
                self.error(node, "a kernel cannot return a value", "store results with pto.store")
            self.emit("RET", None, (), None, node)
            return
        if node.value is not None:
            value = self.expr(node.value)
            if scope.return_frame:
                self.require_value(value, node.value)
                if scope.return_home is None:
                    scope.return_home = self.new_reg(value.dtype, False)
                self.emit("MOV", scope.return_home, (self.operand(value, scope.return_home.dtype, node),),
                          scope.return_home.dtype, node, aux=(0 if scope.return_home.dtype.is_float else 1,))
            else:
                scope.return_home = value
        if scope.return_frame:
            self.emit("BREAK", None, (), None, node)

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
        varying_params = {p for p, a, an in zip(params, args, node.args)
                          if isinstance(a, Val) and not a.uniform}
        # A helper's locals die when it returns, so lanes masked off at the call never read
        # them: only divergence inside the helper matters to its own analysis.
        varying = Uniformity(fn_ast.body, self._varying_call_for_analysis(helper), varying_params).run()
        sites = assignment_sites(fn_ast.body)
        scope = Scope(helper.fn_globals, helper.closure, varying, sites, params)
        returns = [n for s in fn_ast.body for n in ast.walk(s) if isinstance(n, ast.Return)]
        scope.return_frame = not (len(returns) <= 1 and (not returns or fn_ast.body[-1] is returns[0]))
        self.scopes.append(scope)
        self.inline_stack.append(helper)
        outer_kernel = self.kernel
        self.kernel = _HelperView(outer_kernel, helper)
        depth = self.loop_depth
        try:
            for p, a in zip(params, args):
                if isinstance(a, Val) and sites.get(p, 0) > 0:
                    home = self.new_reg(a.dtype, p not in varying)
                    self.emit("MOV", home, (a.reg,), a.dtype, node, aux=(0 if a.dtype.is_float else 1,))
                    scope.names[p] = HomeVar(home, fn_ast.lineno)
                else:
                    scope.names[p] = a
            if scope.return_frame:
                # early returns: a one-trip loop frame whose `return` is a BREAK
                self.loop_depth = 0
                self.loop(fn_ast, lambda: None, lambda: None, fn_ast.body,
                          tail_fn=lambda: self.emit("BREAK", None, (), None, fn_ast.body[-1]))
            else:
                self.loop_depth = depth
                self.block(fn_ast.body)
        finally:
            self.loop_depth = depth
            self.kernel = outer_kernel
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
        self.source_lines = outer.source_lines
        self.fn_globals = helper.fn_globals
        self.closure = helper.closure
