"""``pypto_sim.__all__`` is the package's public surface (API.md): every public name
``import pypto_sim as pto`` offers, and nothing it does not."""
import types

import pypto_sim as pto


def test_all_lists_every_public_name_and_only_those():
    """A name added to pypto_sim/__init__.py (or a builtin added to the ISA table) without a
    place in __all__, or an __all__ entry the package lacks, fails here by name. The one public
    submodule is pto.comm (pto-isa's communication instructions under pto-isa's names)."""
    offered = {name for name in dir(pto) if not name.startswith("_")
               and not isinstance(getattr(pto, name), types.ModuleType)}
    modules = {name for name in pto.__all__ if isinstance(getattr(pto, name, None), types.ModuleType)}
    assert modules == {"comm"}
    listed = set(pto.__all__) - {"__version__"} - modules
    assert sorted(offered - listed) == [] and sorted(listed - offered) == []
    assert len(pto.__all__) == len(set(pto.__all__))


def test_the_builtins_of_the_isa_table_are_exported():
    """Every instruction's builtin name (pto.tload, pto.fma, ...) is in __all__."""
    builtins = {spec.builtin for spec in pto.instructions() if getattr(spec, "builtin", None)}
    assert builtins <= set(pto.__all__), sorted(builtins - set(pto.__all__))
