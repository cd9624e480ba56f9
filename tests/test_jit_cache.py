"""numba's cache of the compiled executor is keyed on each module's closure digest
(exec/jit_cache.py): a module's source, the digests of the compiled modules it imports and the
values of isa_constants. These tests state the rules on small stand-in modules."""
import ast
import importlib
import re
from pathlib import Path

import numba
import pytest

from pypto_sim.exec import jit_cache
from pypto_sim.exec.lane import COMPILED_MODULES, executor

COMPILED = Path(jit_cache.__file__).with_name("compiled")
# what a compiled module may import besides its siblings: the digest sees sibling imports only
ALLOWED_OUTSIDE = {"math", "numpy", "numba", "llvmlite"}


@pytest.fixture
def stand_ins(tmp_path, monkeypatch):
    """A compiled directory of three modules: a imports b; c imports nothing."""
    (tmp_path / "a.py").write_text("from .b import f\n\ndef g():\n    return f()\n")
    (tmp_path / "b.py").write_text("def f():\n    return 1\n")
    (tmp_path / "c.py").write_text("def h():\n    return 2\n")
    monkeypatch.setattr(jit_cache, "COMPILED_DIR", tmp_path)
    monkeypatch.setattr(jit_cache, "_DIGESTS", {})
    return tmp_path


def _digests(directory):
    jit_cache._DIGESTS.clear()
    return {name: jit_cache.closure_digest(directory / f"{name}.py") for name in "abc"}


def test_an_edit_recompiles_the_module_and_its_importers_only(stand_ins):
    """Editing b changes b's digest and a's (a's compiled g carries f's code), not c's."""
    before = _digests(stand_ins)
    (stand_ins / "b.py").write_text("def f():\n    return 3\n")
    after = _digests(stand_ins)
    assert after["b"] != before["b"] and after["a"] != before["a"] and after["c"] == before["c"]


def test_an_edit_to_an_importer_leaves_what_it_imports_alone(stand_ins):
    """Editing a changes a's digest only."""
    before = _digests(stand_ins)
    (stand_ins / "a.py").write_text("from .b import f\n\ndef g():\n    return f() + 1\n")
    after = _digests(stand_ins)
    assert after["a"] != before["a"] and (after["b"], after["c"]) == (before["b"], before["c"])


def test_compiled_modules_import_only_siblings_and_numeric_libraries():
    """The digest follows imports between compiled modules; anything else a compiled module
    read from the package would change its code unseen. isa_constants (plain Python, hashed by
    its values) and the loaders of generated modules (alu, family_dispatch: a GENERATED_FILE,
    hashed by that module, which imports its siblings by absolute name) are those that reach
    outside; a plain-Python module of isa/ whose functions a compiled module compiles
    (isa/gm_layouts.py, imported as ``from ...isa.<name> import``) is hashed with it."""
    for name in COMPILED_MODULES:
        if name == "isa_constants" or hasattr(importlib.import_module(f"pypto_sim.exec.compiled.{name}"),
                                              "GENERATED_FILE"):
            continue
        source = (COMPILED / f"{name}.py").read_text()
        siblings = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.level == 3 and node.module.startswith("isa."):
                siblings.add(jit_cache.ISA_DIR / f"{node.module[4:]}.py")
            elif isinstance(node, ast.ImportFrom) and node.level:
                assert node.level == 1 and node.module in COMPILED_MODULES, f"{name}.py:{node.lineno}"
                siblings.add(COMPILED / f"{node.module}.py")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                top = (node.names[0].name if isinstance(node, ast.Import) else node.module).split(".")[0]
                assert top in ALLOWED_OUTSIDE, f"{name}.py:{node.lineno} imports {top}"
        # the digest finds the same siblings (it reads the imports by a pattern, not a parse)
        assert set(jit_cache._imported_files(COMPILED / f"{name}.py", source)) == siblings, name


def test_every_compiled_module_is_in_the_executor_after_what_it_imports():
    """exec/lane.py's COMPILED_MODULES (jit_cache.compiled_modules, read from the files) holds
    exactly the modules of exec/compiled/, each after the siblings it imports."""
    assert set(COMPILED_MODULES) == {p.stem for p in COMPILED.glob("*.py")} - {"__init__"}
    for i, name in enumerate(COMPILED_MODULES):
        imported = set(jit_cache._SIBLING_IMPORT.findall((COMPILED / f"{name}.py").read_text()))
        assert imported <= set(COMPILED_MODULES[:i]), (name, imported - set(COMPILED_MODULES[:i]))


def test_a_cycle_between_compiled_modules_is_named(tmp_path, monkeypatch):
    """Two stand-in modules importing each other: an ImportError naming both."""
    (tmp_path / "a.py").write_text("from .b import f\n")
    (tmp_path / "b.py").write_text("from .a import g\n")
    monkeypatch.setattr(jit_cache, "COMPILED_DIR", tmp_path)
    with pytest.raises(ImportError, match=re.escape("the modules ['a', 'b'] import each other in a cycle")):
        jit_cache.compiled_modules()


def test_compiled_functions_cache_under_their_closure_digest():
    """A compiled function's cache directory is named by its module and closure digest; a
    function outside exec/compiled/ is left to numba's own locators."""
    ex = executor()
    locator = ex.round_to._cache._impl.locator
    digest = jit_cache.closure_digest(COMPILED / "scalars.py")
    assert isinstance(locator, jit_cache.ExecutorCacheLocator)
    assert Path(locator.get_cache_path()).name == f"scalars-{digest}" and locator.get_source_stamp() == digest

    @numba.njit(cache=True)
    def outside(x):
        return x

    assert not isinstance(outside._cache._impl.locator, jit_cache.ExecutorCacheLocator)


def test_lane_digest_depends_on_the_isa_constants_and_the_generated_alu():
    """lane.py imports isa_constants and alu: its digest covers their values and the generated
    ALU source, through the closure."""
    executor()
    deps = jit_cache._imported_files(COMPILED / "lane.py", (COMPILED / "lane.py").read_text())
    names = {p.name for p in deps}
    assert {"isa_constants.py", "alu.py", "scalars.py", "simt.py"} <= names
    alu_deps = {p.name for p in jit_cache._imported_files(COMPILED / "alu.py", (COMPILED / "alu.py").read_text())}
    assert any(n.startswith(jit_cache.GENERATED_PREFIX + "alu_") for n in alu_deps)


def test_an_edit_to_an_isa_module_a_compiled_module_compiles_changes_its_digest(tmp_path, monkeypatch):
    """A compiled module that compiles a function of isa/<name>.py (``from ...isa.<name>
    import``) is keyed on that file's source too: editing it changes the importer's digest."""
    compiled, isa = tmp_path / "compiled", tmp_path / "isa"
    compiled.mkdir()
    isa.mkdir()
    (isa / "rules.py").write_text("def f():\n    return 1\n")
    (compiled / "k.py").write_text("from ...isa.rules import f\n")
    monkeypatch.setattr(jit_cache, "ISA_DIR", isa)
    monkeypatch.setattr(jit_cache, "_DIGESTS", {})
    before = jit_cache.closure_digest(compiled / "k.py")
    (isa / "rules.py").write_text("def f():\n    return 2\n")
    monkeypatch.setattr(jit_cache, "_DIGESTS", {})
    assert jit_cache.closure_digest(compiled / "k.py") != before


def test_an_isa_module_a_compiled_module_compiles_imports_nothing_of_the_package():
    """The digest takes such a module's source as its whole closure, so it may import only
    numeric libraries (an import of a package module would change its code unseen)."""
    for path in sorted({p for name in COMPILED_MODULES
                        for p in jit_cache._imported_files(COMPILED / f"{name}.py",
                                                           (COMPILED / f"{name}.py").read_text())
                        if p.parent == jit_cache.ISA_DIR}):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                top = (node.names[0].name if isinstance(node, ast.Import) else node.module or "").split(".")[0]
                assert not getattr(node, "level", 0) and top in ALLOWED_OUTSIDE | {"__future__"}, \
                    f"{path.name}:{node.lineno}"
