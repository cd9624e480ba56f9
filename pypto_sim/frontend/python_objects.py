"""Python objects a kernel reaches (globals, closure variables, module attributes, Python's
builtins): what each becomes in the kernel (from_python), and the Python builtins a kernel may
call (call_python: min, max, abs, len, float, int, bool).

A mixin of :class:`pypto_sim.frontend.codegen.KernelCompiler`; it relies on the compiler's
``error``, ``vexpr``, ``alu``, ``cast`` and ``truth`` (expressions.py).
"""
from __future__ import annotations

import math
import types

from .. import dtypes
from ..dtypes import DType
from .builtins import Builtin
from .expressions import const_of
from .values import NONE, Text, Const, ConstTuple, DTypeRef, ModuleRef, PyCallable

PY_CALLABLES = {min: "min", max: "max", abs: "abs", range: "range", float: "float", int: "int",
                bool: "bool", len: "len", print: "print"}


class PythonObjects:
    """The kernel compiler's view of Python objects (a mixin)."""

    def call_python(self, name: str, node):
        args = [self.vexpr(a) for a in node.args]
        if node.keywords:
            self.error(node, f"{name}() with keyword arguments is not supported in a kernel")
        if name in ("min", "max") and len(args) >= 2:
            result = args[0]
            for other in args[1:]:
                result = self.alu(name.upper(), [result, other], node)
            return result
        if name == "len" and len(args) == 1 and isinstance(args[0], ConstTuple):
            return Const(len(args[0].items), dtypes.int32, weak=True)
        if name == "abs" and len(args) == 1:
            return self.alu("ABS", args, node)
        if name in ("float", "int", "bool") and len(args) == 1:
            target = {"float": dtypes.float32, "int": dtypes.int32, "bool": dtypes.bool_}[name]
            if name == "bool":
                return self.truth(args[0], node)
            if isinstance(args[0], Text):
                # float("inf"), float("-inf"), float("nan"): a Python float, as a weak literal
                try:
                    value = float(args[0].value) if name == "float" else int(args[0].value)
                except ValueError:
                    self.error(node, f"{name}({args[0].value!r}) is not a number")
                return Const(value, target, weak=True)
            return self.cast(args[0], target, node)
        self.error(node, f"{name}() is not supported here in a kernel")

    def from_python(self, value, node, text):
        """A Python object reached from kernel code (global, closure, module attribute)."""
        if value is None:
            return NONE                 # as the literal None (numpy would read it as float64)
        if isinstance(value, Builtin):
            return value
        if isinstance(value, str):
            return Text(value)          # pto.Vec, pto.PIPE_MTE2, pto.ColMajor: names
        if getattr(value, "is_pto_intrinsic", False):
            return value
        if isinstance(value, DType):
            return DTypeRef(value)
        if isinstance(value, type(math)):
            return ModuleRef(value)
        if hasattr(value, "is_pto_kernel") or getattr(value, "is_pipeline_factory", False):
            return value
        for fn, name in PY_CALLABLES.items():
            if value is fn:
                return PyCallable(name)
        if isinstance(value, tuple) and value and all(const_of(v) is not None for v in value):
            return ConstTuple(tuple(Const(const_of(v).value, const_of(v).dtype, weak=True)
                                    for v in value))
        c = const_of(value)
        if c is None and hasattr(value, "dtype") and getattr(value, "shape", None) == ():
            c = const_of(value.item())
        if c is not None:
            return Const(c.value, c.dtype, weak=True)
        try:
            return DTypeRef(dtypes.as_dtype(value))
        except TypeError:
            pass
        if callable(value) and not isinstance(value, type):
            # a plain Python function cannot run on the lanes; it can be inlined if it is a kernel
            name = getattr(value, "__name__", "")
            same = [s.builtin for s in self.isa.specs if name and name in (s.builtin, s.alias)]
            if same:
                hint = f"use pto.{same[0]}, the kernel's own {same[0]}"
            elif isinstance(value, types.BuiltinFunctionType) or getattr(value, "__module__", "") != \
                    getattr(self.kernel.fn, "__module__", None):
                hint = ("compute it with pto builtins (docs/isa.md lists them), or on the host and pass "
                        "the result as a kernel argument")
            else:
                hint = (f"decorate '{text}' with @pto.kernel to inline it, or compute its result on "
                        "the host and pass it as a kernel argument")
            self.error(node, f"'{text}' is a Python {type(value).__name__}, and a kernel cannot call "
                             "Python code", hint)
        self.error(node, f"'{text}' is a {type(value).__name__}, which a kernel cannot use",
                   "kernels can use numbers, pto builtins, dtypes and other @pto.kernel functions")

