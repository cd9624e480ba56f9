"""The builtins' registry: each ``pto.*`` builtin's name -> its signature and doc (from the ISA
table, builtins.py), the checks a call must pass and the function that lowers it.

A lowering is registered by a decorator next to its code, in the frontend module of its topic
(as numba's ``@lower_builtin``), never found by a method name::

    @LOWERINGS.lowering("shfl_xor")
    def lower_shfl_xor(comp, node, args):      # comp: the KernelCompiler; args: name -> value
        ...

    @LOWERINGS.family_lowering("alu", binds=False)
    def lower_alu(comp, node, builtin):        # every builtin of the family without its own
        ...

A lowering that binds (the default) receives the call's arguments bound to the builtin's
signature and lowered to values (``comp.bind_call``), after which its checks run; one with
``binds=False`` receives the :class:`~pypto_sim.frontend.builtins.Builtin` and binds the call
itself (alloc_tile reads its arguments' AST), and its checks run first. A check is a function
``check(comp, node, name)`` that raises a CompileError or returns.

The registry is filled while the frontend's modules are imported and frozen by
:meth:`Registry.freeze` (codegen.py, once all are imported), which checks it against the ISA
table: every builtin the table names has exactly one lowering (its own, or its family's), and
every registration names a builtin or family the table has. Every builtin of the package comes
from the ISA table; there are no others to register.
"""
from __future__ import annotations

import dataclasses
from typing import Callable


class RegistryError(Exception):
    """The registry and the ISA table disagree (raised when the registry is frozen)."""


@dataclasses.dataclass(frozen=True)
class Lowering:
    """One registered lowering: the function, the builtins or families it lowers, its checks."""
    fn: Callable
    names: tuple = ()
    families: tuple = ()
    checks: tuple = ()
    binds: bool = True
    per_builtin: bool = False

    @property
    def where(self) -> str:
        """module.function of the lowering, for messages."""
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    def lower(self, comp, node, builtin):
        """Lower one call ``node`` of ``builtin`` with the compiler ``comp``: checks, then the function."""
        if not self.binds:
            for check in self.checks:
                check(comp, node, builtin.name)
            return self.fn(comp, node, builtin)
        args = comp.bind_call(builtin, node)
        for check in self.checks:
            check(comp, node, builtin.name)
        if self.per_builtin:
            return self.fn(comp, node, args, builtin)
        return self.fn(comp, node, args)


@dataclasses.dataclass(frozen=True)
class BuiltinEntry:
    """What the registry knows of one builtin: the ISA's Builtin (signature, doc, instructions)
    and its lowering (checks and function)."""
    builtin: object
    lowering: Lowering

    @property
    def name(self) -> str:
        """The builtin's name, as in ``pto.<name>``."""
        return self.builtin.name

    @property
    def signature(self) -> str:
        """The builtin's signature text, from the ISA table."""
        return self.builtin.signature_text

    @property
    def doc(self) -> str:
        """The builtin's docstring, from the ISA table."""
        return self.builtin.__doc__

    @property
    def checks(self) -> tuple:
        """The checks a call passes before it is lowered."""
        return self.lowering.checks


class Registry:
    """name -> lowering of the kernel builtins, and family -> lowering for the builtins of an
    ISA family that have none of their own. Filled by decorators at import, then frozen."""

    def __init__(self):
        self._named: dict = {}      # name -> [Lowering, ...] (more than one is an error)
        self._families: dict = {}   # family -> [Lowering, ...]
        self._entries = None        # name -> BuiltinEntry, once frozen

    def lowering(self, *names, checks=(), binds=True, per_builtin=False):
        """Decorator: register the function as the lowering of the builtins ``names``.
        per_builtin: one function for several builtins that differ in their ISA record only
        (``pto.tcmp`` / ``tcmps`` / ``tsel`` / ``tsels``): it also receives the Builtin,
        ``fn(comp, node, args, builtin)``."""
        return self._register(names, (), checks, binds, per_builtin)

    def family_lowering(self, *families, checks=(), binds=True, per_builtin=False):
        """Decorator: register the function as the lowering of every builtin of the ISA
        ``families`` that has no lowering of its own (per_builtin: as for ``lowering``)."""
        return self._register((), families, checks, binds, per_builtin)

    def _register(self, names, families, checks, binds, per_builtin=False):
        if self._entries is not None:
            raise RegistryError(f"the builtin registry is frozen; register {names or families} "
                                "in a frontend module that codegen.py imports")

        def decorate(fn):
            entry = Lowering(fn, tuple(names), tuple(families), tuple(checks), binds, per_builtin)
            for name in names:
                self._named.setdefault(name, []).append(entry)
            for family in families:
                self._families.setdefault(family, []).append(entry)
            return fn
        return decorate

    def problems(self, builtins: dict) -> list:
        """Every disagreement between the registrations and ``builtins`` (name -> Builtin, the
        ISA table's), each naming the builtin and what to add or remove where."""
        out = []
        families = {spec.family for b in builtins.values() for spec in b.specs}
        for name, lowerings in sorted(self._named.items()):
            if name not in builtins:
                out.append(f"pto.{name}: {lowerings[0].where} is registered as its lowering, but "
                           f"no instruction of the ISA table has builtin = '{name}'; add the "
                           "instruction to isa/*.toml, or remove the registration")
            if len(lowerings) > 1:
                out.append(f"pto.{name} has {len(lowerings)} lowerings "
                           f"({', '.join(lw.where for lw in lowerings)}); keep one")
        for family, lowerings in sorted(self._families.items()):
            if family not in families:
                out.append(f"family '{family}': {lowerings[0].where} is registered for it, but no "
                           "builtin of the ISA table is in that family; fix the family name or "
                           "remove it from the registration")
            elif not any(b.specs[0].family == family and name not in self._named
                         and getattr(b, "composite", None) is None for name, b in builtins.items()):
                out.append(f"family '{family}': every builtin of it has its own lowering, so "
                           f"{lowerings[0].where} lowers none; remove '{family}' from its registration")
            if len(lowerings) > 1:
                out.append(f"family '{family}' has {len(lowerings)} lowerings "
                           f"({', '.join(lw.where for lw in lowerings)}); keep one")
        for name, b in sorted(builtins.items()):
            if name not in self._named and getattr(b, "composite", None) is not None:
                out.append(f"pto.{name} (the composite {b.composite.name}, {b.composite.source_file}) has no "
                           f"lowering; register one with @LOWERINGS.lowering('{name}') (a composite's "
                           "instructions are its lowering's to emit, never a family's)")
            elif name not in self._named and b.specs[0].family not in self._families:
                out.append(f"pto.{name} (ISA family '{b.specs[0].family}', instruction "
                           f"{b.specs[0].name}) has no lowering; register one with "
                           f"@LOWERINGS.lowering('{name}') in the frontend module of its topic "
                           f"(a new module goes in codegen.LOWERING_MODULES), or add "
                           f"'{b.specs[0].family}' to a @LOWERINGS.family_lowering")
        return out

    def freeze(self, builtins: dict) -> None:
        """Check the registrations against ``builtins`` and allow no more; RegistryError lists
        every problem."""
        problems = self.problems(builtins)
        if problems:
            raise RegistryError("the builtin registry disagrees with the ISA table:\n  "
                                + "\n  ".join(problems))
        self._entries = {name: BuiltinEntry(b, self._lowering_of(b)) for name, b in builtins.items()}

    def _lowering_of(self, builtin) -> Lowering:
        own = self._named.get(builtin.name)
        return own[0] if own else self._families[builtin.specs[0].family][0]

    @property
    def entries(self) -> dict:
        """name -> BuiltinEntry of every builtin (after freeze)."""
        if self._entries is None:
            raise RegistryError("the builtin registry is read before it is frozen (codegen.py freezes it)")
        return dict(self._entries)

    def lower(self, comp, node, builtin):
        """Lower one call of ``builtin`` through its registered lowering."""
        if self._entries is None:
            raise RegistryError("the builtin registry is used before it is frozen (codegen.py freezes it)")
        entry = self._entries.get(builtin.name)
        if entry is None:
            comp.error(node, f"pto.{builtin.name} has no lowering in the compiler")
        return entry.lowering.lower(comp, node, builtin)


# the registry of the package's builtins: filled by the frontend's modules at import, frozen
# by codegen.py; read-only afterwards
LOWERINGS = Registry()
