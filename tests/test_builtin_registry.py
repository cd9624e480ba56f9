"""The builtin registry (pypto_sim/frontend/registry.py) and the ISA table agree.

The rule: every builtin the ISA table names (an instruction's ``builtin`` field) has exactly one
lowering - one registered for its name with ``@LOWERINGS.lowering(name)``, or, when it has none
of its own, the one registered for its ISA family with ``@LOWERINGS.family_lowering(family)`` -
and every registration names a builtin or family the table has. Each disagreement is reported
naming the builtin (or family) and what to add or remove where. The package's registry is checked
when the compiler is imported (codegen.py freezes it); the rule itself is tested here on small
throwaway registries, never by changing the package's.
"""
import pytest

from pypto_sim.errors import CompileError
from pypto_sim.frontend import builtin_checks
from pypto_sim.frontend.builtins import BUILTINS
from pypto_sim.frontend.codegen import KernelCompiler
from pypto_sim.frontend.registry import LOWERINGS, Registry, RegistryError

# three builtins of the real table: two with their own lowering, one lowered by its family
SMALL_TABLE = {name: BUILTINS[name] for name in ("fma", "shfl_xor", "add")}


def _lower(comp, node, args):
    return None


def _small_registry(*, drop=(), extra=(), families=("alu",)):
    reg = Registry()
    for name in ("fma", "shfl_xor", *extra):
        if name not in drop:
            reg.lowering(name)(_lower)
    if families:
        reg.family_lowering(*families, binds=False)(_lower)
    return reg


def test_the_packages_registry_has_one_lowering_for_every_builtin_of_the_isa_table():
    """No problem is reported, and the entries are exactly the table's builtins, each with the
    table's signature and doc."""
    assert LOWERINGS.problems(BUILTINS) == []
    entries = LOWERINGS.entries
    assert sorted(entries) == sorted(BUILTINS)
    for name, entry in entries.items():
        assert entry.signature == BUILTINS[name].signature_text
        assert entry.doc == BUILTINS[name].__doc__


def test_the_small_registry_agrees_with_its_table():
    """fma and shfl_xor have their own lowering, add (family alu) its family's: no problem."""
    assert "alu" == SMALL_TABLE["add"].specs[0].family
    assert _small_registry().problems(SMALL_TABLE) == []


def test_a_dropped_lowering_is_reported_naming_the_builtin_and_the_decorator():
    problems = _small_registry(drop=("shfl_xor",)).problems(SMALL_TABLE)
    assert len(problems) == 1
    assert problems[0].startswith("pto.shfl_xor (ISA family 'warp'")
    assert "@LOWERINGS.lowering('shfl_xor')" in problems[0]


def test_a_builtin_whose_family_has_no_lowering_is_reported():
    """Without the alu family lowering, pto.add has no lowering."""
    problems = _small_registry(families=()).problems(SMALL_TABLE)
    assert len(problems) == 1 and problems[0].startswith("pto.add (ISA family 'alu'")


def test_a_lowering_for_a_name_the_table_lacks_is_reported():
    problems = _small_registry(extra=("fmaa",)).problems(SMALL_TABLE)
    assert len(problems) == 1
    assert problems[0].startswith("pto.fmaa: ") and "builtin = 'fmaa'" in problems[0]
    assert "isa/*.toml" in problems[0]


def test_two_lowerings_of_one_builtin_are_reported_naming_both():
    problems = _small_registry(extra=("fma",)).problems(SMALL_TABLE)
    assert problems == ["pto.fma has 2 lowerings (test_builtin_registry._lower, "
                        "test_builtin_registry._lower); keep one"]


def test_a_family_the_table_lacks_or_that_lowers_nothing_is_reported():
    """'allu' is no family of the table; 'warp' is, but its one builtin here (shfl_xor) has its
    own lowering, so the family lowering would lower nothing."""
    problems = _small_registry(families=("alu", "allu", "warp")).problems(SMALL_TABLE)
    assert len(problems) == 2
    assert problems[0].startswith("family 'allu': ")
    assert problems[1].startswith("family 'warp': every builtin of it has its own lowering")


def test_freeze_refuses_a_disagreeing_registry_and_later_registrations():
    with pytest.raises(RegistryError, match="pto.shfl_xor"):
        _small_registry(drop=("shfl_xor",)).freeze(SMALL_TABLE)
    reg = _small_registry()
    reg.freeze(SMALL_TABLE)
    assert reg.entries["add"].lowering.families == ("alu",)
    with pytest.raises(RegistryError, match="frozen"):
        reg.lowering("tadd")(_lower)


class _Recorder:
    """A stand-in compiler that records what the registry asks of it."""

    def __init__(self):
        self.calls = []

    def bind_call(self, builtin, node):
        self.calls.append(("bind", builtin.name))
        return {"x": 1}


def _check(comp, node, name):
    comp.calls.append(("check", name))


def _lowering(comp, node, arg):
    comp.calls.append(("lower", arg if isinstance(arg, dict) else arg.name))


def test_a_binding_lowering_gets_the_bound_arguments_after_its_checks():
    """Binding first, then the checks, then the lowering with the bound arguments (the order
    the compiler's own in-lowering checks had)."""
    reg = Registry()
    reg.lowering("fma", checks=(_check,))(_lowering)
    reg.freeze({"fma": BUILTINS["fma"]})
    comp = _Recorder()
    reg.lower(comp, None, BUILTINS["fma"])
    assert comp.calls == [("bind", "fma"), ("check", "fma"), ("lower", {"x": 1})]


def test_a_lowering_that_binds_itself_gets_the_builtin_after_its_checks():
    reg = Registry()
    reg.family_lowering("alu", checks=(_check,), binds=False)(_lowering)
    reg.freeze({"add": BUILTINS["add"]})
    comp = _Recorder()
    reg.lower(comp, None, BUILTINS["add"])
    assert comp.calls == [("check", "add"), ("lower", "add")]


def test_one_lowering_of_several_builtins_gets_each_builtin_with_its_arguments():
    """per_builtin: the function registered for tcmp and tsel learns which one it lowers."""
    reg = Registry()
    reg.lowering("tcmp", "tsel", per_builtin=True)(
        lambda comp, node, args, builtin: comp.calls.append(("lower", args, builtin.specs[0].name)))
    reg.freeze({"tcmp": BUILTINS["tcmp"], "tsel": BUILTINS["tsel"]})
    comp = _Recorder()
    reg.lower(comp, None, BUILTINS["tsel"])
    reg.lower(comp, None, BUILTINS["tcmp"])
    assert comp.calls == [("bind", "tsel"), ("lower", {"x": 1}, "TSEL"),
                          ("bind", "tcmp"), ("lower", {"x": 1}, "TCMP")]


def test_the_checks_of_the_packages_builtins_are_in_the_registry():
    """Where a builtin may be called is registry data: tload is AI-core only, the SIMT ids are
    refused on the AI core before their arguments are bound, the article's async_load is refused
    there."""
    entries = LOWERINGS.entries
    assert entries["tload"].checks == (builtin_checks.aicore_only,)
    assert entries["get_global_id"].checks == (builtin_checks.no_simt_id_on_aicore,)
    assert entries["get_global_id"].lowering.binds is False
    (check,) = entries["async_load"].checks
    with pytest.raises(CompileError, match=r"pto\.async_load is the article's tile API; in an "
                                           r"AI-core kernel use pto\.tload\(tile, ptr, stride=\.\.\.\)"):
        check(_AICoreComp(), None, "async_load")


class _AICoreComp:
    """A stand-in compiler of an AI-core kernel."""
    is_aicore = True

    def error(self, node, message, hint=None):
        raise CompileError(message)


def test_no_lowering_is_found_by_a_method_name():
    """The compiler has no builtin_<name> methods: a builtin's lowering is its registration."""
    assert [n for n in dir(KernelCompiler) if n.startswith("builtin_")] == []
