"""Rules of the test suite itself: a test module imports no other test module (what several
test files share lives in conftest.py or a helper module whose name does not start with
test_, e.g. tests/engine_compare.py), so each file can be read, run and changed alone."""
import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module name) of every import statement in path, function-local ones included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.lineno, node.module))
    return out


def test_no_test_module_imports_another():
    """Every import in tests/*.py is checked against the names of the test modules."""
    test_modules = {p.stem for p in TESTS.glob("test_*.py")}
    assert "test_fast_engine" in test_modules          # the glob sees the suite
    bad = [f"tests/{path.name}:{line} imports {name}"
           for path in sorted(TESTS.glob("*.py"))
           for line, name in imported_modules(path)
           if name.split(".")[0] in test_modules or name.startswith("tests.test_")]
    assert not bad, ("a test module imports another; move what they share into tests/conftest.py "
                     "or a helper module not named test_*:\n" + "\n".join(bad))
