"""Lowering of kernel expressions (operators, pointers, calls) to PTO instructions; a call of
a builtin goes to its lowering in the builtin registry (registry.py).

A mixin of :class:`pypto_sim.frontend.codegen.KernelCompiler`; it relies on the compiler's
``emit``, ``new_reg``, ``error``, ``lookup`` and ``inline_helper``.
"""
from __future__ import annotations

import ast
import dataclasses
import functools

from .. import dtypes
from ..dtypes import DType, promote
from ..ir import Imm, Reg
from ..ir.program import int_sem_of
from ..isa.run_time_checks import TUPLE_INDEX
from .builtins import Builtin
from .memory_builtins import lower_load
from .pipeline import PipelineRef
from .pointer_ops import pointer_binop
from .registry import LOWERINGS
from .tile_group import TileGroup, TileGroupMethod
from .values import NONE, Text, Const, ConstTuple, LocalArray, ModuleRef, Ptr, PyCallable, Val

BINOPS = {ast.Add: "ADD", ast.Sub: "SUB", ast.Mult: "MUL", ast.Div: "DIV",
          ast.FloorDiv: "FLOORDIV", ast.Mod: "MOD", ast.BitAnd: "AND", ast.BitOr: "OR",
          ast.BitXor: "XOR", ast.LShift: "SHL", ast.RShift: "SHR"}
CMPOPS = {ast.Lt: "LT", ast.LtE: "LE", ast.Gt: "GT", ast.GtE: "GE", ast.Eq: "EQ", ast.NotEq: "NE"}
PYFOLD = {"ADD": lambda a, b: a + b, "SUB": lambda a, b: a - b, "MUL": lambda a, b: a * b,
          "DIV": lambda a, b: a / b, "FLOORDIV": lambda a, b: a // b, "MOD": lambda a, b: a % b,
          "AND": lambda a, b: a & b, "OR": lambda a, b: a | b, "XOR": lambda a, b: a ^ b,
          "SHL": lambda a, b: a << b, "SHR": lambda a, b: a >> b, "MIN": min, "MAX": max,
          "LT": lambda a, b: a < b, "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b,
          "GE": lambda a, b: a >= b, "EQ": lambda a, b: a == b, "NE": lambda a, b: a != b,
          "NEG": lambda a: -a, "ABS": abs, "NOT": lambda a: not a, "INV": lambda a: ~a}
FLOAT_ONLY = {"DIV", "EXP", "LOG", "SQRT", "RSQRT"}
INT_ONLY = {"AND", "OR", "XOR", "SHL", "SHR", "INV"}


UNSUPPORTED_EXPRS = {"List": "a list literal", "Dict": "a dict literal",
                     "Set": "a set literal", "ListComp": "a list comprehension",
                     "SetComp": "a set comprehension", "DictComp": "a dict comprehension",
                     "GeneratorExp": "a generator expression", "Lambda": "a lambda",
                     "JoinedStr": "an f-string", "NamedExpr": "an assignment expression (:=)",
                     "Starred": "a starred expression", "Await": "await", "Yield": "yield",
                     "YieldFrom": "yield from", "Slice": "a slice"}


def const_of(value, node=None):
    """The Const for a Python literal (bool -> bool, int -> int32, float -> float32)."""
    if isinstance(value, bool):
        return Const(value, dtypes.bool_)
    if isinstance(value, int):
        return Const(value, dtypes.int32)
    if isinstance(value, float):
        return Const(value, dtypes.float32)
    return None


def _folded_to_integer(v, dtype):
    """A constant converted to an integer dtype as CAST converts the value at run time: an
    integer keeps its low bits (300 -> int8 44, 2**32 - 8 -> int32 -8); a float is truncated
    toward zero, saturating to int32's (or int64's) range for those two and wrapped for the
    narrower types, a NaN giving 0."""
    if v.dtype.is_float or isinstance(v.value, float):
        return dtypes.float_to_integer(float(v.value), dtype)
    return dtypes.round_scalar(int(v.value), dtype)


class ExprLowering:
    """Expression half of the kernel compiler."""

    # ---------------------------------------------------------------- operands
    def operand(self, v, dtype: DType, node):
        """An instruction operand of dtype from a Const (immediate) or Val (register, cast if needed)."""
        if isinstance(v, Const):
            value = v.value
            if dtype.is_float:
                # a literal of a float16 operation is a float16 value (`x * 0.1` as numpy)
                return Imm(dtypes.round_scalar(value, dtype), dtype)
            if dtype == dtypes.bool_:
                return Imm(1.0 if value else 0.0, dtype)
            if isinstance(value, float) and not float(value).is_integer():
                self.error(node, f"the float constant {value} cannot be used as {dtype}",
                           "write an integer, or cast the other operand to float32")
            if dtype == dtypes.int64:
                if not -2**63 <= int(value) < 2**64:
                    self.error(node, f"the constant {int(value)} does not fit in int64")
                return Imm(dtypes.round_scalar(int(value), dtype), dtype)   # as C's (long)
            if dtype != dtypes.int32 and -2**31 <= int(value) < 2**32:
                # a uint32 (or a narrow tile's) literal converts as C's does: -1 is 4294967295
                return Imm(float(dtypes.round_scalar(int(value), dtype)), dtype)
            if not -2**31 <= int(value) < 2**31:
                # an immediate outside int32 would silently become some other number
                self.error(node, f"the constant {int(value)} does not fit in int32",
                           "kernel integers are int32 (uint32 where a uint32 value is an "
                           "operand); use a float constant or a smaller value")
            return Imm(float(int(value)), dtype)
        if isinstance(v, Val):
            if v.dtype != dtype:
                return self.cast(v, dtype, node).reg
            return v.reg
        if isinstance(v, Ptr):
            self.error(node, f"the pointer '{v.name}' is used as a value",
                       f"read through it with pto.load({v.name} + offset)")
        self.error(node, f"{type(v).__name__} cannot be used as a value here")

    def cast(self, v, dtype: DType, node):
        """Convert a value to dtype (CAST instruction, or folded for constants)."""
        if isinstance(v, Const):
            if dtype.is_float:
                return Const(dtypes.round_scalar(v.value, dtype), dtype, weak=False)
            if dtype == dtypes.bool_:
                return Const(bool(v.value), dtype, weak=False)
            return Const(_folded_to_integer(v, dtype), dtype, weak=False)
        if isinstance(v, Val) and v.dtype == dtype:
            return v
        src = self.operand(v, v.dtype, node)
        dst = self.new_reg(dtype, src.uniform)
        # CAST's int_sem says how its source word holds the value: an int64's bits, an
        # integer's value (which wraps into int32), a float's (which saturates)
        self.emit("CAST", dst, (src,), dtype, node, aux=(int_sem_of(v.dtype),))
        return Val(dst)

    def result_dtype(self, *args) -> DType:
        """Dtype of an operation: weak constants adopt the other operands' dtype (a float
        literal still makes an integer operation float32, an int64 one float64 as promote
        makes float32 with int64)."""
        strong = [a.dtype for a in args if not (isinstance(a, Const) and a.weak)]
        weak = [a.dtype for a in args if isinstance(a, Const) and a.weak]
        if not strong:
            return functools.reduce(promote, weak)
        dtype = functools.reduce(promote, strong)
        if any(w.is_float for w in weak) and not dtype.is_float:
            dtype = promote(dtype, dtypes.float32)
        return dtype

    # ---------------------------------------------------------------- the generic ALU emitter
    def alu(self, op: str, args: list, node, dtype: DType | None = None, result: DType | None = None):
        """Emit one ALU instruction over args (Const/Val), folding when all are constants.

        dtype: the operand dtype (default: promotion of the args); result: the result dtype
        (default: dtype, or bool for conditions).
        """
        spec = self.isa[op]
        if dtype is None:
            dtype = self.result_dtype(*args)
            if dtype == dtypes.bool_ and "bool" not in spec.dtypes and spec.result != "pred":
                # arithmetic on bools is integer arithmetic, as in Python: (x > 0) * 100, -flag
                dtype = dtypes.int32
        if op in FLOAT_ONLY and not dtype.is_float:
            dtype = promote(dtype, dtypes.float32)      # int64: float64
        if op in INT_ONLY and dtype.is_float:
            self.error(node, f"{op} needs integer operands, got {dtype}",
                       "cast with pto.cast(x, pto.int32) first")
        if result is None:
            result = dtypes.bool_ if spec.result == "pred" else dtype
        if all(isinstance(a, Const) for a in args) and op in PYFOLD:
            try:
                if all(a.weak for a in args):
                    # arithmetic on literals and module constants stays a Python number: `h *
                    # -2.0` and `h * (SCALE * 2)` keep a float16 h in float16, as `h * 2.0`
                    # does, and the result is rounded once, where it meets a typed operand
                    conv = float if dtype.is_float else bool if dtype == dtypes.bool_ else int
                    value = PYFOLD[op](*(conv(a.value) for a in args))
                    if not isinstance(value, bool) and result == dtypes.bool_:
                        value = bool(value)
                    return Const(value, result, weak=True)
                # typed constants (pto.cast(0.1, pto.float16) * 3) compute in their dtype
                vals = [self.cast(a, dtype, node).value for a in args]
                folded = self.cast(Const(PYFOLD[op](*vals), result), result, node)
                return Const(folded.value, folded.dtype, weak=False)
            except (ZeroDivisionError, ValueError, OverflowError):
                pass
        ops = tuple(self.operand(a, dtype, node) for a in args)
        if result.name not in spec.dtypes and op not in ("LT", "LE", "GT", "GE", "EQ", "NE"):
            self.error(node, f"{op} does not support {result} (supports {', '.join(spec.dtypes)})")
        uniform = all(o.uniform for o in ops if isinstance(o, Reg))
        dst = self.new_reg(result, uniform)
        int_sem = int_sem_of(dtype) if spec.int_expr else 0
        if not spec.float_expr and int_sem == 0:
            int_sem = int_sem_of(dtypes.int32)
        self.emit(op, dst, ops, result, node, aux=(int_sem,))
        return Val(dst)

    # ---------------------------------------------------------------- expressions
    def expr(self, node):
        """Lower an expression; returns Const, Val, Ptr or a compile-time reference."""
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            # name the construct in Python's words ("a list literal"), not the AST class name
            what = UNSUPPORTED_EXPRS.get(type(node).__name__, f"the expression ({type(node).__name__})")
            self.error(node, f"{what} '{ast.unparse(node)}' is not supported in a kernel",
                       "kernels compute on numbers: lane values, uniform scalars and pointers; "
                       "keep lists, strings and other Python objects on the host")
        return method(node)

    def expr_Constant(self, node):
        if node.value is None:
            return NONE
        if isinstance(node.value, str):
            return Text(node.value)
        c = const_of(node.value, node)
        if c is None:
            self.error(node, f"the {type(node.value).__name__} constant {node.value!r} is not supported "
                             "in a kernel", "kernel values are numbers (int, float, bool)")
        return c

    def expr_Name(self, node):
        return self.lookup(node.id, node)

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        if isinstance(base, ModuleRef):
            try:
                value = getattr(base.module, node.attr)
            except AttributeError:
                self.error(node, f"module '{base.module.__name__}' has no attribute '{node.attr}'")
            return self.from_python(value, node, ast.unparse(node))
        if isinstance(base, PipelineRef):
            return self.pipeline_attribute(base, node)
        if isinstance(base, TileGroup):
            return self.group_attribute(base, node)
        self.error(node, f"attribute access '{ast.unparse(node)}' is not supported in a kernel")

    def expr_Tuple(self, node):
        items = [self.expr(e) for e in node.elts]
        if not all(isinstance(i, Const) for i in items):
            self.error(node, f"the tuple '{ast.unparse(node)}' holds values only known at run "
                             "time; kernel tuples hold constants",
                       "keep run-time values in variables, or index a tensor")
        return ConstTuple(tuple(items))

    def tuple_item(self, tup: ConstTuple, index, node):
        """tup[index]: the constant itself for a constant index; for a run-time index a
        chain of selects (index == j), so the value is right in every lane."""
        n = len(tup.items)
        if isinstance(index, Const) and not index.dtype.is_float:
            k = int(index.value)
            if not -n <= k < n:
                self.error(node, f"tuple index {k} is out of range for a tuple of {n} elements")
            return tup.items[k]
        self.require_value(index, node)
        if index.dtype.is_float:
            self.error(node, f"tuple indices must be integers, got {index.dtype}",
                       "index with an integer (int(x) truncates a float)")
        # Python's meaning at run time too: -n <= index < n (else an error at the line), a
        # negative index counting from the end
        index = self.cast(index, dtypes.int32, node)
        self.run_time_check(node, index, Const(-n, dtypes.int32), Const(n - 1, dtypes.int32), TUPLE_INDEX,
                            f"tuple index: -{n} <= index < {n}", lanes=True)
        index = self.alu("SELECT", [self.alu("LT", [index, Const(0, dtypes.int32)], node),
                                    self.alu("ADD", [index, Const(n, dtypes.int32)], node), index], node,
                         dtype=dtypes.int32)
        result = tup.items[-1]
        for j in range(n - 2, -1, -1):
            hit = self.alu("EQ", [index, Const(j, dtypes.int32)], node)
            result = self.alu("SELECT", [hit, tup.items[j], result], node,
                              dtype=self.result_dtype(*tup.items))
        return result

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        if isinstance(base, ConstTuple):
            return self.tuple_item(base, self.vexpr(node.slice), node)
        if isinstance(base, LocalArray):
            return self.local_element(base, self.vexpr(node.slice), node)
        if not isinstance(base, Ptr):
            self.error(node, f"only pointers can be indexed; '{ast.unparse(node.value)}' is not one")
        base = self.loaded(base, node.value)
        if not isinstance(base, Ptr):       # o[i][0]: o[i] is an element's value
            self.error(node, f"'{ast.unparse(node.value)}' is an element's value ({base.dtype}), not a pointer, "
                             "so it cannot be indexed",
                       f"index the tensor once: {ast.unparse(node.value)} is the element")
        if isinstance(node.slice, ast.Tuple):
            ptr = self.ptr_add(base, self.index_2d(base, node), node, 1)
        else:
            ptr = self.ptr_add(base, self.loaded(self.expr(node.slice), node.slice), node, 1)
        # t[i] of a typed tile keeps the tile: the AI core's scalar unit reads a Vec tile's word
        return dataclasses.replace(ptr, indexed=True, tile=base.tile)

    def index_2d(self, base: Ptr, node):
        """The element offset of ``a[r, c]`` in a 2-D tensor argument: r * row stride + c (the
        stride is the launch's, compiled in: Kernel.signature_of), or of ``t[r, c]`` in a typed
        tile: its word in the tile's storage order (r * row pitch + c, ColMajor c * rows + r)."""
        if len(node.slice.elts) == 2 and base.tile is not None:
            r, c = (self.int32_index(self.vexpr(e), node) for e in node.slice.elts)
            info = base.tile
            (major, minor), stride = ((r, c), info.row_pitch) if info.layout == "row" else ((c, r), info.rows)
            row = self.alu("MUL", [major, Const(stride, dtypes.int32)], node, dtype=dtypes.int32)
            return self.alu("ADD", [row, minor], node, dtype=dtypes.int32)
        if len(node.slice.elts) != 2 or not base.row_stride:
            self.error(node, f"'{ast.unparse(node)}': a 2-D index needs a 2-D tensor argument "
                             f"('{base.name}' is 1-D here)",
                       "pass pto.to_device(a 2-D array) or a 2-D view d[i:j, k:l]; index a 1-D "
                       "tensor with one offset, a[r * width + c]")
        r, c = (self.vexpr(e) for e in node.slice.elts)
        for v, e in ((r, node.slice.elts[0]), (c, node.slice.elts[1])):
            self.require_value(v, e)
        r, c = self.int32_index(r, node), self.int32_index(c, node)
        row = self.alu("MUL", [r, Const(base.row_stride, dtypes.int32)], node, dtype=dtypes.int32)
        return self.alu("ADD", [row, c], node, dtype=dtypes.int32)

    def loaded(self, v, node):
        """v in a value context: an indexed pointer `a[i]` reads its element (a LOAD)."""
        if isinstance(v, Ptr) and v.indexed:
            return lower_load(self, node, {"ptr": v})
        return v

    def vexpr(self, node):
        """An expression whose value is used (not its address)."""
        return self.loaded(self.expr(node), node)

    def ptr_add(self, ptr: Ptr, delta, node, sign: int) -> Ptr:
        if isinstance(delta, Ptr):
            self.error(node, "two pointers cannot be added", "add an integer offset to one pointer")
        if isinstance(delta, Val) and delta.dtype.is_float or isinstance(delta, Const) and delta.dtype.is_float:
            self.error(node, f"pointer offsets must be integers, got {delta.dtype}",
                       "cast the offset with pto.cast(x, pto.int32)")
        delta = self.int32_index(delta, node)
        if isinstance(ptr.offset, Const) and ptr.offset.value == 0 and sign > 0:
            offset = delta if isinstance(delta, Const) else self.cast(delta, dtypes.int32, node)
        else:
            offset = self.alu("ADD" if sign > 0 else "SUB", [ptr.offset, delta], node, dtype=dtypes.int32)
        return Ptr(ptr.space, ptr.slot, ptr.dtype, ptr.name, offset, ptr.count, ptr.base,
                   row_stride=ptr.row_stride)

    def expr_BinOp(self, node):
        left, right = self.vexpr(node.left), self.vexpr(node.right)
        op = BINOPS.get(type(node.op))
        if op is None:
            self.error(node, f"'{ast.unparse(node)}': the operator {type(node.op).__name__} is not "
                             "supported in a kernel",
                       "write x * x for a square, pto.exp(y * pto.log(x)) for x ** y"
                       if isinstance(node.op, ast.Pow) else None)
        if isinstance(left, Ptr) or isinstance(right, Ptr):     # an address, or an operator it does not take
            return pointer_binop(self, node, left, right, op)
        self.require_value(left, node.left)
        self.require_value(right, node.right)
        return self.alu(op, [left, right], node)

    def expr_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return self.alu("NOT", [self.condition(node.operand)], node, dtype=dtypes.bool_)
        v = self.vexpr(node.operand)
        self.require_value(v, node.operand)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub):
            return self.alu("NEG", [v], node)
        return self.alu("INV", [v], node)

    def condition(self, node):
        """An expression used as a condition (if/while/ternary test, `not`): a bool. Unlike a
        value-context `and`/`or`, which yields one of its operands, only truth matters here."""
        if isinstance(node, ast.BoolOp):
            return self.short_circuit(node, truth_only=True)
        return self.truth(self.vexpr(node), node)

    def truth(self, v, node):
        """A value as a condition (bool): non-zero is true."""
        self.require_value(v, node)
        if v.dtype == dtypes.bool_:
            return v
        return self.alu("NE", [v, Const(0, v.dtype)], node)

    def expr_Compare(self, node):
        left = self.vexpr(node.left)
        left_node = node.left
        result = None
        for op_node, right_node in zip(node.ops, node.comparators):
            op = CMPOPS.get(type(op_node))
            if op is None:
                self.error(node, f"the comparison {type(op_node).__name__} is not supported in a kernel")
            right = self.vexpr(right_node)
            a, b = left, right
            if isinstance(a, Ptr) and isinstance(b, Ptr):
                # pointers into the same tensor compare by element offset (`while p < end:`)
                if (a.space, a.slot) != (b.space, b.slot):
                    self.error(node, f"the pointers '{a.name}' and '{b.name}' point into different "
                                     "tensors and cannot be compared")
                a, b = a.offset, b.offset
            self.require_value(a, left_node)
            self.require_value(b, right_node)
            dtype = self.result_dtype(a, b)
            part = self.alu(op, [a, b], node, dtype=dtype, result=dtypes.bool_)
            result = part if result is None else self.alu("AND", [result, part], node, dtype=dtypes.bool_)
            left, left_node = right, right_node
        return result

    def expr_BoolOp(self, node):
        return self.short_circuit(node, truth_only=False)

    def short_circuit(self, node, truth_only):
        """`a and b` / `a or b`, short-circuit per lane: b runs only in the lanes that need it
        (`i < n and pto.load(a + i) > 0` never loads where i >= n).

        As a condition (truth_only) the result is the bool. As a value it is, as in Python, the
        operand that decided (`x or 1.0` is x where x != 0, else 1.0); the operands then need one
        dtype, since the result lives in one register.
        """
        is_or = isinstance(node.op, ast.Or)

        def operand(v_node):
            if truth_only:
                return self.condition(v_node)
            v = self.expr(v_node)
            self.require_value(v, v_node)
            return v

        first = operand(node.values[0])
        rest = node.values[1:]
        # constant operands decide at compile time, as far as they go
        while isinstance(first, Const) and rest:
            if bool(first.value) == is_or:
                return first
            first = operand(rest[0])
            rest = rest[1:]
        if not rest:
            return first
        dtype = first.dtype
        acc = self.new_reg(dtype, self.is_uniform_expr(node))
        mov_aux = (int_sem_of(dtype),)
        self.emit("MOV", acc, (self.operand(first, dtype, node),), dtype, node, aux=mov_aux)
        for v_node in rest:
            cond = self.truth(Val(acc), node)
            if is_or:
                cond = self.alu("NOT", [cond], node, dtype=dtypes.bool_)
            with self.masked_if(cond, node):
                nxt = operand(v_node)
                if nxt.dtype != dtype:
                    exact = isinstance(nxt, Const) and nxt.weak and \
                        self.cast(nxt, dtype, v_node).value == nxt.value
                    if not exact:
                        word = "or" if is_or else "and"
                        self.error(node, f"'{word}' gives one of its operands, and here they have "
                                         f"different dtypes ({dtype} and {nxt.dtype})",
                                   "use pto.select(cond, x, y) or `x if cond else y`, or compare "
                                   "explicitly (`x != 0`) to get a bool")
                self.emit("MOV", acc, (self.operand(nxt, dtype, v_node),), dtype, node, aux=mov_aux)
        return Val(acc)

    def expr_IfExp(self, node):
        """`x if c else y`: only the chosen side is evaluated in each lane."""
        cond = self.condition(node.test)
        if isinstance(cond, Const):
            return self.expr(node.body if cond.value else node.orelse)
        out = None
        with self.masked_if(cond, node, has_else=True) as branch:
            a = self.vexpr(node.body)
            self.require_value(a, node.body)
            out = self.new_reg(a.dtype, self.is_uniform_expr(node))
            then_pc = self.emit("MOV", out, (self.operand(a, a.dtype, node),), a.dtype, node,
                                aux=(int_sem_of(a.dtype),))
            branch.else_()
            b = self.vexpr(node.orelse)
            self.require_value(b, node.orelse)
            dtype = self.result_dtype(a, b)
            if dtype != out.dtype:
                # The result has the promoted dtype of both sides (`0 if x < 0 else x` is float32,
                # not x truncated to the literal's int32): the then-side's copy, already emitted,
                # becomes a conversion into a register of that dtype, in place.
                out = self.new_reg(dtype, out.uniform)
                ins = self.instrs[then_pc]
                ins.dst, ins.dtype = out, dtype
                if isinstance(a, Const):
                    ins.srcs, ins.aux = (self.operand(a, dtype, node),), (int_sem_of(dtype),)
                else:
                    ins.op, ins.aux = "CAST", (int_sem_of(a.dtype),)
            self.emit("MOV", out, (self.operand(b, out.dtype, node),), out.dtype, node, aux=(int_sem_of(out.dtype),))
        return Val(out)

    def require_value(self, v, node):
        if not isinstance(v, (Const, Val)):
            hint = None
            if isinstance(v, Ptr):
                what = f"the pointer '{v.name}'"
                # `a[i]` is an address (as `a + i`), so `a[i] * 2` is a common slip: say how to read
                text = ast.unparse(node) if isinstance(node, (ast.Name, ast.Subscript, ast.BinOp)) \
                    else f"{v.name} + offset"
                hint = f"read the element it points to with pto.load({text})"
            elif isinstance(v, Text):
                what = f"the string {v.value!r}"
            else:
                what = type(v).__name__
            self.error(node, f"{what} is used where a value is needed in '{ast.unparse(node)}'", hint)

    # ---------------------------------------------------------------- calls
    def expr_Call(self, node):
        func = self.expr(node.func)
        if isinstance(func, Builtin):
            return self.call_builtin(func, node)
        if isinstance(func, PyCallable):
            return self.call_python(func.name, node)
        if getattr(func, "is_pipeline_method", False):
            return self.call_pipeline_method(func, node)
        if isinstance(func, TileGroupMethod):
            return self.group_method_call(func, node)
        if hasattr(func, "is_pto_kernel"):
            return self.inline_helper(func, node)
        if getattr(func, "is_pto_intrinsic", False):
            return self.call_intrinsic(func, node)
        self.error(node, f"'{ast.unparse(node.func)}' cannot be called in a kernel",
                   "kernels can call pto builtins, min/max/abs/float/int, and other @pto.kernel functions")

    def bind_call(self, builtin: Builtin, node) -> dict:
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        try:
            bound = builtin.__signature__.bind(*args, **kwargs)
        except TypeError as exc:
            self.error(node, f"pto.{builtin.name}{builtin.signature_text}: {exc}")
        given = set(bound.arguments)
        bound.apply_defaults()
        out = dict(bound.arguments)
        # `a[i]` passed where the builtin takes a value reads the element
        pointers = {o.name for spec in builtin.specs for o in spec.operands if o.kind == "pointer"}
        for key, value in out.items():
            if key not in pointers:
                out[key] = self.loaded(value, node)
        for key, value in out.items():
            if key not in given:   # defaults are Python objects from the table's signature
                out[key] = NONE if value is None else self.from_python(value, node, key)
        return out

    def call_builtin(self, builtin: Builtin, node):
        """Lower a call of a pto builtin through its registered lowering (registry.py)."""
        return LOWERINGS.lower(self, node, builtin)
