"""Which kernel variables are per-lane ("varying") and which are uniform across a warp.

A variable is varying when any assignment to it has a varying right-hand side or happens under
varying control (inside an ``if``/``while`` whose condition is varying, a ``for`` with varying
bounds, or after a ``break``/``continue``/``return`` taken by only some lanes). Everything else is
uniform and lives in the scalar unit's registers. The analysis iterates to a fixed point because
loops carry values around their back edge.
"""
from __future__ import annotations

import ast

# builtins whose result differs between lanes whatever their arguments (atomics hand each
# lane its own old value; a local array holds each lane's own elements; HELPER_CALL stands for
# a helper kernel's call or one the analysis cannot resolve, whose value may be anything)
HELPER_CALL = "<a helper kernel>"
VARYING_BUILTINS = {"get_global_id", "get_local_id", "get_lane_id", "atomic_add", "atomic_max",
                    "atomic_min", "atomic_exchange", "atomic_cas", "local_array", "lanemask_lt", HELPER_CALL}

UNRESOLVED = object()        # callee(): the call's function could not be looked up


def callee(kernel, call):
    """The function `call` in kernel's body calls (a builtin, a helper kernel, anything its
    module or closure binds), None for a call of an expression, UNRESOLVED when the lookup
    failed: what the analyses see before any code is emitted."""
    node = call.func
    try:
        if isinstance(node, ast.Name):
            return kernel.closure.get(node.id, kernel.fn_globals.get(node.id))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            mod = kernel.closure.get(node.value.id, kernel.fn_globals.get(node.value.id))
            return getattr(mod, node.attr, None)
    except Exception:
        return UNRESOLVED
    return None


class Uniformity:
    """Fixed-point varying/uniform classification of the names in one function body."""

    def __init__(self, body, is_varying_call, varying_params=(), ctrl=False):
        self.body = body
        self.is_varying_call = is_varying_call   # (ast.Call, args_varying: bool) -> bool
        self.varying = set(varying_params)
        self.ctrl = ctrl

    def run(self) -> set:
        """Return the set of varying names."""
        while True:
            before = set(self.varying)
            self._block(self.body, self.ctrl)
            if self.varying == before:
                return self.varying

    # ---------------------------------------------------------------- expressions
    def expr(self, node) -> bool:
        """True when the expression's value may differ between lanes of a warp."""
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return node.id in self.varying
        if isinstance(node, ast.Call):
            args = any(self.expr(a) for a in node.args) or any(self.expr(k.value) for k in node.keywords)
            return self.is_varying_call(node, args)
        return any(self.expr(child) for child in ast.iter_child_nodes(node)
                   if isinstance(child, ast.expr))

    # ---------------------------------------------------------------- statements
    def _assign_names(self, target, varying: bool):
        if isinstance(target, ast.Name):
            if varying:
                self.varying.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._assign_names(elt, varying)

    def _block(self, stmts, ctrl: bool) -> bool:
        """Visit statements; return whether control is varying after them."""
        for stmt in stmts:
            ctrl = self._stmt(stmt, ctrl)
        return ctrl

    def _stmt(self, s, ctrl: bool) -> bool:
        if isinstance(s, ast.Assign):
            v = ctrl or self.expr(s.value)
            for t in s.targets:
                self._assign_names(t, v)
            return ctrl
        if isinstance(s, ast.AnnAssign) and s.value is not None:
            self._assign_names(s.target, ctrl or self.expr(s.value))
            return ctrl
        if isinstance(s, ast.AugAssign):
            name_v = isinstance(s.target, ast.Name) and s.target.id in self.varying
            self._assign_names(s.target, ctrl or self.expr(s.value) or name_v)
            return ctrl
        if isinstance(s, ast.If):
            c = ctrl or self.expr(s.test)
            after_body = self._block(s.body, c)
            after_else = self._block(s.orelse, c)
            # lanes that left by break/continue come back later and must keep their values;
            # lanes that returned never read anything again, so a return taints nothing
            return ctrl or after_body or after_else or (c and (_has_loop_jump(s.body) or _has_loop_jump(s.orelse)))
        if isinstance(s, (ast.For, ast.While)):
            bounds = self.expr(s.iter) if isinstance(s, ast.For) else self.expr(s.test)
            c = ctrl or bounds
            # a break or continue taken by only some lanes makes the whole loop per-lane
            if not c:
                c = self._loop_has_varying_jump(s.body)
            if isinstance(s, ast.For):
                self._assign_names(s.target, c)
            self._block(s.body, c)
            return ctrl
        if isinstance(s, ast.With):
            return self._block(s.body, ctrl)
        return ctrl

    def _loop_has_varying_jump(self, body) -> bool:
        """True when a break/continue of this loop (not of a nested loop) sits under a varying
        condition. (This used to stop searching at the first nested varying `while`, so a
        per-lane `break` after such a loop left the loop variable uniform: lanes that broke out
        then saw it keep counting.)"""
        for s in body:
            if isinstance(s, ast.If):
                if self.expr(s.test) and (_has_loop_jump(s.body) or _has_loop_jump(s.orelse)):
                    return True
                if self._loop_has_varying_jump(s.body) or self._loop_has_varying_jump(s.orelse):
                    return True
            elif isinstance(s, ast.With) and self._loop_has_varying_jump(s.body):
                return True
        return False


def _has_jump(stmts) -> bool:
    """True when the statements contain break, continue or return outside nested loops."""
    for s in stmts:
        if isinstance(s, (ast.Break, ast.Continue, ast.Return)):
            return True
        if isinstance(s, ast.If) and (_has_jump(s.body) or _has_jump(s.orelse)):
            return True
        if isinstance(s, (ast.For, ast.While)) and _has_return(s.body):
            return True
        if isinstance(s, ast.With) and _has_jump(s.body):
            return True
    return False


def _has_return(stmts) -> bool:
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def assignment_sites(body) -> dict:
    """name -> number of places that assign it (Assign, AugAssign, for-targets)."""
    counts: dict = {}

    def add(target):
        if isinstance(target, ast.Name):
            counts[target.id] = counts.get(target.id, 0) + 1
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                add(elt)

    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    add(t)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                add(node.target)
                if isinstance(node, ast.AugAssign):
                    add(node.target)   # reads and writes: never an alias
            elif isinstance(node, ast.For):
                add(node.target)
                add(node.target)       # the loop steps it: needs a home register
    return counts


def _has_loop_jump(stmts, jumps=(ast.Break, ast.Continue)) -> bool:
    """True when the statements contain a break or continue (of `jumps`) for the enclosing loop."""
    for s in stmts:
        if isinstance(s, jumps):
            return True
        if isinstance(s, ast.If) and (_has_loop_jump(s.body, jumps) or _has_loop_jump(s.orelse, jumps)):
            return True
        if isinstance(s, ast.With) and _has_loop_jump(s.body, jumps):
            return True
    return False
