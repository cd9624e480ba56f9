"""Lowering of control flow: if/elif/else, for and while loops (over range, or unrolled over
a tuple of constants), break, continue and return.

A mixin of :class:`pypto_sim.frontend.codegen.KernelCompiler`. Control flow is structured:
IF/ELSE/ENDIF and LOOP/BRK_UNLESS/LOOP_CONT/ENDLOOP with a per-warp mask stack (see
docs/timing.md), so a warp whose lanes disagree runs both sides under masks, as SIMT
hardware does.
"""
from __future__ import annotations

import ast
import contextlib

from .. import dtypes
from ..ir import Imm
from ..ir.program import int_sem_of
from ..isa.run_time_checks import NONZERO_STEP
from .pipeline import PipelineMethod
from .scope import LOOP, PER_LANE_IF, UNIFORM_IF
from .tpipe_builtins import drain_tpipes
from .values import Const, ConstTuple, Ptr, Val


class _Branch:
    def __init__(self, compiler, if_pc, node):
        self.compiler, self.if_pc, self.node, self.else_pc = compiler, if_pc, node, None

    def else_(self):
        self.else_pc = self.compiler.emit("ELSE", None, (), None, self.node, aux=(0,))



class ControlFlowLowering:
    """Control-flow half of the kernel compiler."""

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
        cond = self.condition(node.test)
        if isinstance(cond, Const):
            self.block(node.body if cond.value else node.orelse)
            return
        before = set(self.scope.names)
        with self.masked_if(cond, node) as branch:
            self.block(node.body)
            if node.orelse:
                branch.else_()
                self.block(node.orelse)
        per_lane = isinstance(cond, Val) and not cond.uniform
        self._forget_conditional(before, node, PER_LANE_IF if per_lane else UNIFORM_IF)

    def _forget_conditional(self, before, node, why):
        """Names first bound (once) inside an if whose condition is known only at run time, or
        inside a loop that may run zero times, hold a value only where the branch or the body
        ran: using them after it is an error, as it is in Python when the branch or the body
        did not run (UnboundLocalError); names with several assignments have a home register
        and stay. why: what the statement is (PER_LANE_IF, UNIFORM_IF, LOOP)."""
        scope = self.scope
        for name in set(scope.names) - before:
            if name.isidentifier() and isinstance(scope.names[name], (Const, Val, Ptr)):
                scope.conditional[name] = (self._first_assignment_line(name, node), scope.names.pop(name), why)

    def _first_assignment_line(self, name, node):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Store):
                return sub.lineno + self.kernel.line_offset
        return getattr(node, "lineno", 0) + self.kernel.line_offset

    def loop(self, node, head_fn, step_fn, body, tail_fn=None, prefix_fn=None):
        """LOOP head: [cond; BRK_UNLESS] [prefix] body [tail] LOOP_CONT [step] ENDLOOP."""
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
        if isinstance(node, (ast.For, ast.While)):
            self.scope.loops.append(node)
        if prefix_fn is not None:
            prefix_fn()
        self.block(body)
        if tail_fn is not None:
            tail_fn()
        if isinstance(node, (ast.For, ast.While)):
            self.scope.loops.pop()
        self.loop_depth -= 1
        cont = self.emit("LOOP_CONT", None, (), None, node)
        step_fn()
        self.emit("ENDLOOP", None, (), None, node, aux=(head,))
        self.patch(loop_pc, cont, len(self.instrs))

    def stmt_While(self, node):
        if node.orelse:
            self.error(node, "while ... else is not supported in a kernel")
        before = set(self.scope.names)
        first = []

        def head():
            cond = self.condition(node.test)
            first.append(cond)
            return cond
        self.loop(node, head, lambda: None, node.body)
        if not (isinstance(first[0], Const) and first[0].value):
            self._forget_conditional(before, node, LOOP)
        self.propagate_return(node)

    def _unrolled_for(self, node, items):
        """`for k in (16, 8, 4, 2, 1):` over a tuple of constants: the body once per element,
        with k bound to that constant (so it may size buffers or pick a shuffle distance)."""
        def own_jumps(stmts):
            for stmt in stmts:
                if isinstance(stmt, (ast.Break, ast.Continue)):
                    yield stmt
                elif not isinstance(stmt, (ast.For, ast.While)):   # nested loops own theirs
                    for field in ("body", "orelse"):
                        yield from own_jumps(getattr(stmt, field, []) or [])
        for jump in own_jumps(node.body):
            self.error(jump, f"'{ast.unparse(jump)}' in a loop over a tuple (which is unrolled)",
                       "loop over range(len(t)) and index the tuple to break out early")
        name = node.target.id
        # a for-target counts as two assignments (a range loop steps it); if this loop is the
        # only place that assigns it, each pass binds the constant itself (no register)
        only_here = self.scope.sites.get(name, 0) <= 2 and name not in self.scope.names
        for item in items.items:
            if only_here:
                self.scope.names[name] = item
            else:
                self.bind(name, item, node)
            self.block(node.body)

    def stmt_For(self, node):
        if node.orelse:
            self.error(node, "for ... else is not supported in a kernel")
        if not isinstance(node.target, ast.Name):
            self.error(node, "the loop variable must be a single name")
        it = node.iter
        if not isinstance(it, ast.Call):
            items = self.expr(it)
            if isinstance(items, ConstTuple):
                return self._unrolled_for(node, items)
        func = self.expr(it.func) if isinstance(it, ast.Call) else None
        pipe_prefix = pipe_step = pipe_state = None
        if isinstance(func, PipelineMethod) and func.name == "range":
            pipe_state = func.state
            if self.pipeline_state is not pipe_state:
                self.error(node, "pl.range(...) belongs inside its `with pto.pipeline(...)` block")
        elif getattr(func, "name", None) != "range":
            self.error(node, f"kernels loop over range(...) only, not '{ast.unparse(it)}'",
                       "loop over indices: `for k in range(n)`, and read element k of a tensor "
                       "with pto.load(t + k)")
        if it.keywords or not 1 <= len(it.args) <= 3:
            self.error(node, "range() takes 1 to 3 positional arguments")
        args = [self.vexpr(a) for a in it.args]
        for a, a_node in zip(args, it.args):
            self.require_value(a, a_node)
            if a.dtype.is_float:
                self.error(a_node, f"range() bounds must be integers, got {a.dtype}")
        start, stop, step = (Const(0, dtypes.int32), args[0], Const(1, dtypes.int32)) if len(args) == 1 else \
            (args[0], args[1], args[2] if len(args) == 3 else Const(1, dtypes.int32))
        if isinstance(step, Const) and step.value == 0:
            self.error(node, "range() step must not be zero")
        before = set(self.scope.names)
        runs = all(isinstance(a, Const) for a in (start, stop, step)) and \
            len(range(int(start.value), int(stop.value), int(step.value))) > 0
        if not isinstance(step, Const):
            # Python's range() raises ValueError for a zero step: a run-time one is checked
            nonzero = self.alu("NE", [self.cast(step, dtypes.int32, node), Const(0, dtypes.int32)], node,
                               dtype=dtypes.int32)
            self.run_time_check(node, self.cast(nonzero, dtypes.int32, node), Const(1, dtypes.int32),
                                Const(1, dtypes.int32), NONZERO_STEP, "range(): step != 0", lanes=True)
        name = counter = node.target.id
        prefix = None
        if self.loop_var_is_observable(node, name):
            # Python's loop variable is a copy of range's hidden counter: assigning it in the body
            # does not change the iterations, and after the loop it holds the last value given
            # (not the stop value). Step a hidden counter and copy it in at the top of the body;
            # otherwise the variable itself is the counter (no extra MOV per iteration).
            counter = f"{name}.range@{node.lineno}"      # not an identifier: cannot clash
            self.scope.sites[counter] = 2
            if name in self.scope.varying:
                self.scope.varying.add(counter)

            def copy_counter_in():
                self.bind(name, self.lookup(counter, node), node)
            prefix = copy_counter_in
        if pipe_state is not None:
            pipe_prefix, pipe_step = self.pipeline_range_hooks(pipe_state, node)
            if pipe_prefix is not None:
                user_prefix = prefix

                def prefix():
                    pipe_prefix()
                    if user_prefix is not None:
                        user_prefix()
        self.bind(counter, self.cast(start, dtypes.int32, node), node)
        # loop-invariant bounds are evaluated once, before the loop, as Python does
        stop = self.freeze(stop, node)
        step = self.freeze(step, node)

        def head():
            i = self.lookup(counter, node)
            if isinstance(step, Const):
                return self.alu("LT" if step.value > 0 else "GT", [i, stop], node, dtype=dtypes.int32)
            up = self.alu("AND", [self.alu("GT", [step, Const(0, dtypes.int32)], node),
                                  self.alu("LT", [i, stop], node)], node, dtype=dtypes.bool_)
            down = self.alu("AND", [self.alu("LT", [step, Const(0, dtypes.int32)], node),
                                    self.alu("GT", [i, stop], node)], node, dtype=dtypes.bool_)
            return self.alu("OR", [up, down], node, dtype=dtypes.bool_)

        def step_fn():
            self.bind(counter, self.alu("ADD", [self.lookup(counter, node), step], node, dtype=dtypes.int32), node)
            if pipe_step is not None:
                pipe_step()

        self.loop(node, head, step_fn, node.body, prefix_fn=prefix)
        if pipe_state is not None:
            self.pipeline_range_done(pipe_state)
        if not runs:
            self._forget_conditional(before, node, LOOP)
        self.propagate_return(node)

    def loop_var_is_observable(self, loop, name) -> bool:
        """True when a for loop's variable is assigned in the body, or may be read where the loop
        no longer sets it (after the loop, or before it in an enclosing loop). Reads inside
        another `for` over the same name see that loop's value and do not count."""
        for sub in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
            targets = []
            if isinstance(sub, ast.Assign):
                targets = sub.targets
            elif isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For)):
                targets = [sub.target]
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                return True

        def read(node, shadowed):
            if node is loop:
                return False
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.target.id == name:
                return read(node.iter, shadowed) or any(read(s, True) for s in node.body)
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                return not shadowed
            return any(read(child, shadowed) for child in ast.iter_child_nodes(node))
        return any(read(s, False) for s in self.scope.body)

    def propagate_return(self, loop):
        """After a loop inside an inlined helper that returns from within it: the lanes that
        returned left only this loop (their `return` was a BREAK); leave the enclosing loop too,
        up to the helper's frame."""
        flag = self.scope.return_flag
        if flag is not None and any(isinstance(n, ast.Return) for s in loop.body for n in ast.walk(s)):
            with self.masked_if(Val(flag), loop):
                self.emit("BREAK", None, (), None, loop)

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
            drain_tpipes(self, node)     # TPipe::~TPipe runs on a return too
            self.emit("RET", None, (), None, node)
            return
        if node.value is not None:
            value = self.vexpr(node.value)
            if scope.return_frame:
                self.require_value(value, node.value)
                home = self.return_register(value, node)
                pc = self.emit("MOV", home, (self.operand(value, home.dtype, node),), home.dtype, node,
                               aux=(int_sem_of(home.dtype),))
                if isinstance(value, Const) and value.weak:
                    scope.return_movs.append((pc, value))
            else:
                scope.return_home = value
        if scope.return_frame:
            if self.loop_depth > 1:
                # inside a loop of the helper: BREAK leaves only that loop; flag the lanes so
                # that propagate_return takes them out of the enclosing loops as well
                self.emit("MOV", scope.return_flag, (Imm(1.0, dtypes.bool_),), dtypes.bool_, node, aux=(1,))
            self.emit("BREAK", None, (), None, node)
