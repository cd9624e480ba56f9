"""Python operators with a pointer operand in a kernel: a pointer takes an integer offset added or
subtracted (``a + i``, ``i + a``, ``a - i``, each an address); any other operator on it is a
CompileError that says which operator and what to write instead."""
from __future__ import annotations

import ast

from .values import Ptr

_VERBS = {"ADD": "added", "SUB": "subtracted", "MUL": "multiplied", "DIV": "divided",
          "FLOORDIV": "divided", "MOD": "taken modulo", "AND": "combined bitwise", "OR": "combined bitwise",
          "XOR": "combined bitwise", "SHL": "shifted", "SHR": "shifted"}
_ALLOWED = "a pointer only takes an integer offset added or subtracted (a + i, i + a, a - i)"


def pointer_binop(compiler, node, left, right, op):
    """``left op right`` (a BinOp node) where one side or both is a pointer: the address it gives,
    or the CompileError of an operator a pointer does not take."""
    if isinstance(left, Ptr) and not isinstance(right, Ptr) and op in ("ADD", "SUB"):
        return compiler.ptr_add(left, right, node, 1 if op == "ADD" else -1)
    if isinstance(right, Ptr) and not isinstance(left, Ptr) and op == "ADD":
        return compiler.ptr_add(right, left, node, 1)
    text, verb = ast.unparse(node), _VERBS.get(op, "used with this operator")
    if isinstance(left, Ptr) and isinstance(right, Ptr):
        if op == "SUB":
            compiler.error(node, f"'{text}': two pointers cannot be subtracted (a pointer difference is not a "
                                 f"value in a kernel): {_ALLOWED}",
                           "subtract the element offsets instead (for (o + i) - (a + j) write i - j), or "
                           "pass the distance as a kernel argument")
        compiler.error(node, f"'{text}': two pointers cannot be {verb}: {_ALLOWED}",
                       "add an integer offset to one pointer")
    ptr = left if isinstance(left, Ptr) else right
    side = ast.unparse(node.left if ptr is left else node.right)
    what = "subtracted from a value" if op == "SUB" and ptr is right else verb
    compiler.error(node, f"'{text}': the pointer '{ptr.name}' cannot be {what}: {_ALLOWED}",
                   f"to compute with the element it points to, read it first: pto.load({side}) (or {ptr.name}[i]); "
                   f"to scale an offset, scale the integer before adding it (a + i * 2)")
