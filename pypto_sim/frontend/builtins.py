"""The ``pto.*`` builtins, derived from the ISA table.

Each builtin named by an instruction's ``builtin`` field, or by a ``[[composite]]`` record (a
builtin that lowers to several instructions, such as ``pto.tpush``), becomes a :class:`Builtin`
object whose signature and docstring come from the table. Builtins only have meaning inside a kernel: the
compiler recognises them when it resolves a call; calling one from ordinary Python raises a
CompileError that says so.
"""
from __future__ import annotations

import inspect

from .. import dtypes
from ..errors import CompileError
from ..isa import load_isa


class Builtin:
    """A kernel builtin such as ``pto.fma``: a name, the instructions it may emit, a signature."""

    def __init__(self, name: str, specs: tuple, composite=None):
        self.name = name
        self.specs = specs
        self.composite = composite      # the CompositeSpec of a builtin that expands to several
        self.signature_text = composite.signature if composite else load_isa().signature_of(specs[0], name)
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = "pypto_sim"
        self.__signature__ = _parse_signature(self.signature_text)
        if composite:
            lines = [composite.doc, "", f"{composite.name} (pto-isa {composite.source}) expands to "
                     f"{', '.join(composite.expands_to)}; it has no cost of its own."]
        else:
            lines = [specs[0].doc, ""]
            for spec in specs:
                lines.append(f"Emits {spec.name} ({spec.category}, {spec.pipe} pipe): {spec.doc}")
        self.__doc__ = "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise CompileError(
            f"pto.{self.name}{self.signature_text} was called outside a @pto.kernel",
            hint="builtins describe PTO instructions; call them inside a function decorated with "
                 "@pto.kernel and run it with pto.launch(...) or pto.profile(...)")

    def __repr__(self):
        return f"<pto builtin {self.name}{self.signature_text}>"


def _parse_signature(text: str) -> inspect.Signature:
    namespace = {"float32": dtypes.float32}
    exec(f"def _f{text}: pass", namespace)  # the table's signature text is validated Python
    return inspect.signature(namespace["_f"])


def make_builtins() -> dict:
    """name -> Builtin for every builtin the ISA table names."""
    isa = load_isa()
    out = {name: Builtin(name, specs) for name, specs in isa.builtins().items()}
    for name, c in isa.composite_builtins().items():
        out[name] = Builtin(name, tuple(isa[n] for n in c.expands_to), composite=c)
    return out


def comm_names() -> dict:
    """pto-isa's names of its communication instructions (``pto::comm::TGATHER``) -> the builtin
    of each: every builtin whose ISA record is in an ``isa/*_comm_*.toml`` file, under its
    record's name in lower case less a ``comm_`` prefix (the collective COMM_TGATHER, pto.comm_tgather
    because pto.tgather is the tile instruction, is ``tgather``). pypto_sim/comm.py's namespace."""
    isa = load_isa()
    records = [(c.name, c.builtin, c.source_file) for c in isa.composites]
    records += [(s.name, s.builtin, s.source_file) for s in isa.specs if s.builtin]
    return {name.lower().removeprefix("comm_"): builtin for name, builtin, file in records if "_comm_" in file}


BUILTINS = make_builtins()
COMM_BUILTINS = comm_names()
