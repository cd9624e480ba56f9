"""The package's layers (docs/design.md, "Layers"): who may import whom, no import cycles,
function-local imports only for optional dependencies, the profiler never running anything and
exec never importing SimPy. Every check parses the sources; nothing is imported."""
import ast
import functools
import re
from pathlib import Path

try:
    import tomllib
except ImportError:          # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "pypto_sim"


def _layers() -> list:
    """The ```layers block of docs/design.md: one set of unit names per line, lowest first."""
    text = (ROOT / "docs" / "design.md").read_text()
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    assert block, "docs/design.md has no ```layers block"
    return [set(line.split()) for line in block.group(1).splitlines() if line.strip()]


def _modules() -> dict:
    """{dotted module name: path} of every module of the package."""
    out = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _unit(module: str) -> str:
    """The layer unit of a module: its subpackage or top-level module; (root) for __init__."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(root)"


def _targets(module: str, node) -> list:
    """The package modules an import statement of ``module`` names (a name imported from a
    package is that submodule when there is one, else the package itself)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
        if node.level:
            base = base[:len(base) - node.level + 1]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        names = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source for a in node.names]
    out = []
    for name in names:
        while name not in MODULES and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in MODULES and name != module:
            out.append(name)
    return out


@functools.lru_cache(maxsize=None)
def _imports() -> tuple:
    """(module, import node, inside a function?) of every import statement of the package
    (parsed once for all the tests: parsing the package takes seconds)."""
    return tuple(_parse_imports())


def _parse_imports():
    """Parse every module of the package and yield its import statements (see _imports)."""
    for module, path in sorted(MODULES.items()):
        tree = ast.parse(path.read_text())
        local = {id(n) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                yield module, node, id(node) in local


def _module_graph() -> dict:
    """{module: package modules it imports at module level} (what runs at import time)."""
    graph = {m: set() for m in MODULES}
    for module, node, local in _imports():
        if not local:
            graph[module].update(_targets(module, node))
    return graph


def test_every_subpackage_and_top_level_module_has_one_layer():
    """The layer table (the ```layers block of docs/design.md) names each unit of the package
    exactly once, and nothing else."""
    layers = _layers()
    named = [u for layer in layers for u in layer]
    assert len(named) == len(set(named)), f"named twice: {sorted(u for u in named if named.count(u) > 1)}"
    units = {_unit(m) for m in MODULES}
    assert units - set(named) == set(), f"give these a layer in docs/design.md: {sorted(units - set(named))}"
    assert set(named) - units == set(), f"no such part of pypto_sim: {sorted(set(named) - units)}"


def test_imports_point_down_the_layers():
    """A module imports from its own unit and from lower layers only (function-local imports
    included): a wrong-way or sideways arrow fails, naming the line."""
    rank = {u: i for i, layer in enumerate(_layers()) for u in layer}
    for module, node, _local in _imports():
        for target in _targets(module, node):
            a, b = _unit(module), _unit(target)
            assert a == b or rank[b] < rank[a], (
                f"{MODULES[module].relative_to(ROOT)}:{node.lineno} imports {target}: {b} is not "
                f"below {a} in docs/design.md's layers")


def test_no_import_cycles_between_modules():
    """No module reaches itself through module-level imports (Tarjan's strongly connected
    components of the import graph are all single modules)."""
    graph = _module_graph()
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == [], f"import cycles: {cycles}"


def _optional_dependencies() -> set:
    """The import names of pyproject.toml's optional extras (not the test tools):
    "dask[distributed]" gives dask and distributed."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = set()
    for spec in (s for key, group in extras.items() if key != "test" for s in group):
        name = re.match(r"[A-Za-z0-9_.-]+", spec).group(0)
        names.add(name.replace("-", "_"))
        names.update(re.findall(r"\[([a-z_]+)\]", spec))
    return names


def test_function_local_imports_are_of_optional_dependencies_only():
    """A function-local import hides a cycle or a slow import until the function runs; only an
    optional extra (matplotlib, pandas, dask, threadpoolctl, ...) may be imported there, so that
    `import pypto_sim` works without it."""
    optional = _optional_dependencies()
    assert {"matplotlib", "pandas", "dask", "distributed", "threadpoolctl"} <= optional
    for module, node, local in _imports():
        if local:
            top = (node.names[0].name if isinstance(node, ast.Import) else node.module or "").split(".")[0]
            assert getattr(node, "level", 0) == 0 and top in optional, (
                f"{MODULES[module].relative_to(ROOT)}:{node.lineno}: move this import to the top of "
                f"the module (function-local imports are for optional dependencies: {sorted(optional)})")


def test_the_profiler_never_runs_a_launch():
    """Profiles are built from records: no profiler module reaches, through any chain of
    module-level imports, a module that runs a simulation (the runtime does that)."""
    runners = {"pypto_sim.timing.model", "pypto_sim.timing.fast", "pypto_sim.timing.aicore_fast",
               "pypto_sim.exec.functional", "pypto_sim.exec.aicore_functional", "pypto_sim.runtime.launch"}
    assert runners <= set(MODULES)
    graph = _module_graph()
    for start in (m for m in MODULES if _unit(m) == "profiler"):
        seen, todo = set(), [start]
        while todo:
            for w in graph[todo.pop()] - seen:
                seen.add(w)
                todo.append(w)
        assert not seen & runners, f"{start} imports (through others) {sorted(seen & runners)}"


def test_exec_never_imports_simpy():
    """exec/ holds value semantics for numba: SimPy is timing/'s."""
    for module, node, _local in _imports():
        if _unit(module) == "exec":
            names = [a.name for a in node.names] + ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] == "simpy" for n in names), f"{module}:{node.lineno}"


def test_the_debugger_reads_the_simulation_through_its_query_api():
    """debug/ never reaches into SimPy (``sim.env``) nor into another object's private names
    (``x._queue``): it asks LaunchSimulation's stepping and queries (timing/stepping.py)."""
    for path in sorted((PKG / "debug").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Attribute):
                continue
            own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            private = node.attr.startswith("_") and not node.attr.startswith("__")
            assert node.attr != "env" and (own or not private), (
                f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr} of another object; ask the "
                f"simulation (LaunchSimulation.now, next_event_time(), warp_state(), ...)")
