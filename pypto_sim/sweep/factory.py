"""A sweep's factory as something a worker process can load: ``"module:function"``,
``"path/to/file.py:function"`` or a function object, each turned into a :class:`FactoryRef`
(picklable, names the function and the file it lives in, with the hash of the code that decides
its result: that file and the user modules it reaches, which hold the kernels it launches)."""
from __future__ import annotations

import ast
import contextvars
import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from ..errors import SweepError

# the factory file being loaded in this context: pto.sweep() called while it runs means the
# file starts a sweep when imported (no `if __name__ == "__main__":` guard)
LOADING: contextvars.ContextVar = contextvars.ContextVar("pypto_sweep_loading", default=None)

_HINT = ('pass "module:function" (importable), "path/to/file.py:function", or a function '
         'defined at the top level of a .py file')


@dataclass(frozen=True)
class FactoryRef:
    """Where a factory lives: ``module`` (an importable name) or ``path`` (a .py file), and
    ``function`` (its qualified name there); ``sha256`` is the hash of its source file and of
    the user modules it reaches (code_sha256; part of every point's identity, so an edited
    factory, or an edited kernel it imports, recomputes on resume)."""

    function: str
    module: str | None = None
    path: str | None = None
    sha256: str = ""

    @property
    def label(self) -> str:
        """The text users write for it: 'module:function' or '/abs/file.py:function'."""
        return f"{self.module or self.path}:{self.function}"

    def load(self, cache=None):
        """The function (importing its module, or executing its file as a private module
        once per process when ``cache``, a dict, is given)."""
        if self.module is not None:
            obj = importlib.import_module(self.module)
        else:
            obj = cache.get(self.path) if cache is not None else None
            if obj is None:
                obj = _load_file(self.path)
                if cache is not None:
                    cache[self.path] = obj
        for part in self.function.split("."):
            obj = getattr(obj, part)
        return obj


def factory_ref(factory, base_dir=None) -> tuple:
    """(FactoryRef, the function) for a factory given as text or as a function; loads it here
    first so a factory that cannot be imported fails before any point runs (SweepError).
    Relative .py paths are taken from ``base_dir`` (default: the current directory)."""
    if callable(factory) and not isinstance(factory, str):
        return _ref_of_function(factory), factory
    text = str(factory)
    target, sep, function = text.rpartition(":")
    if not sep or not target or not function:
        raise SweepError(f"factory {text!r} must be 'module:function' or 'path/to/file.py:function'",
                         hint=_HINT)
    try:
        if target.endswith(".py"):
            path = (Path(base_dir or ".") / target).resolve()
            if not path.is_file():
                raise SweepError(f"factory {text!r}: no file {path}", hint=_HINT)
            ref = FactoryRef(function=function, path=str(path))
        else:
            spec = importlib.util.find_spec(target)
            if spec is None:
                raise ModuleNotFoundError(f"No module named {target!r}")
            origin = spec.origin if spec.origin and Path(spec.origin).is_file() else None
            ref = FactoryRef(function=function, module=target)
        fn = ref.load()
        ref = dataclasses.replace(ref, sha256=code_sha256(fn, ref.path or origin))
    except SweepError:
        raise
    except Exception as exc:
        raise SweepError(f"factory {text!r} cannot be loaded: {type(exc).__name__}: {exc}",
                         hint=f"{_HINT}; a module must be on sys.path (PYTHONPATH)") from exc
    if not callable(fn):
        raise SweepError(f"factory {text!r} is a {type(fn).__name__}, not a function", hint=_HINT)
    return ref, fn


def _ref_of_function(fn) -> FactoryRef:
    """A function object -> its module (if importable by name) or its source file."""
    qual = getattr(fn, "__qualname__", "")
    if not qual or "<" in qual:
        raise SweepError(f"the factory {fn!r} is a lambda or a nested function: a worker process "
                         "cannot load it", hint=f"{_HINT} (or run engine='serial', timeout=None)")
    try:
        source = Path(inspect.getsourcefile(fn)).resolve()
    except (TypeError, OSError):
        raise SweepError(f"the factory {fn!r} has no source file (defined interactively?): a "
                         "worker process cannot load it",
                         hint=f"{_HINT} (or run engine='serial', timeout=None)") from None
    module = getattr(fn, "__module__", None)
    if module and module != "__main__" and not module.startswith(_PRIVATE):
        try:
            importable = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            importable = False
        if importable:
            return FactoryRef(function=qual, module=module, sha256=code_sha256(fn, source))
    return FactoryRef(function=qual, path=str(source), sha256=code_sha256(fn, source))


_PRIVATE = "pypto_sweep_factory_"


def _load_file(path):
    """Execute a .py file as a private module (its `if __name__ == "__main__":` part does not
    run); a pto.sweep() it calls while loading is refused (see LOADING)."""
    name = _PRIVATE + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module                   # dataclasses and pickle look modules up here
    token = LOADING.set(str(path))
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    finally:
        LOADING.reset(token)
    return module


def refuse_nested_sweep():
    """Raise if a factory file is being loaded here: it calls pto.sweep at import time."""
    path = LOADING.get()
    if path is not None:
        raise SweepError(f"{path} starts a sweep when it is imported: each worker imports this "
                         "file to find the factory, so the sweep would start again in every "
                         "worker", hint='put the pto.sweep(...) call under `if __name__ == "__main__":`')


def code_sha256(fn, source=None) -> str:
    """sha256 over the source files of the code that decides what factory ``fn`` builds: its
    file ``source`` (always), and every file of the program it reaches through the names its
    module defines or imports - the module of each kernel, function, class or module named
    there or held in a dict, list, tuple or set there, transitively - and every module an
    import statement of those files names, at any depth (an import inside the factory's body
    has not run yet), so a kernel imported from another file is hashed with its file. Python's
    own, installed packages' and pypto_sim's files are left out (the package version is part of
    the identity). Reads a few files, once per sweep."""
    files, seen = ({str(Path(source).resolve())} if source else set()), set()
    spaces = [_namespace(fn) or _namespace(type(fn)),
              *(_namespace(c.cell_contents) for c in getattr(fn, "__closure__", None) or ())]
    while spaces:
        space = spaces.pop()
        if space is None or id(space) in seen or not _is_user_file(space.get("__file__")):
            continue
        seen.add(id(space))
        files.add(str(Path(space["__file__"]).resolve()))
        spaces.extend(_namespace(v) for value in list(space.values()) for v in _contents(value))
    todo = sorted(files)
    while todo:                                 # the files their import statements name
        for found in _imported_files(todo.pop()):
            if found not in files:
                files.add(found)
                todo.append(found)
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(hashlib.sha256(Path(path).read_bytes()).digest())
    return digest.hexdigest()


def _contents(value, depth=0) -> list:
    """value, or the values a dict, list, tuple or set holds (nested up to three deep)."""
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
    else:
        return [value]
    return [v for item in items for v in _contents(item, depth + 1)] if depth < 3 else []


def _imported_files(path) -> list:
    """The program's files that the import statements of file path name (anywhere in it, a
    function's body too), found without importing them: absolute names by importlib's finder
    once their parent packages are imported, else beside path; relative ones beside path."""
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return []
    here, out = Path(path).parent, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [(0, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = [(node.level, f"{base}.{a.name}" if base else a.name) for a in node.names] + \
                    ([(node.level, base)] if base else [])
        else:
            continue
        for level, name in names:
            found = _module_file(name, here, level)
            if found is not None and _is_user_file(found):
                out.append(str(Path(found).resolve()))
    return out


def _module_file(name, here, level):
    """The .py file of module `name` imported from a file in directory here (level: how many
    packages up a relative import starts), or None."""
    root = here
    for _ in range(max(level - 1, 0)):
        root = root.parent
    parts = name.split(".")
    for candidate in (root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return str(candidate)
    if level == 0:
        try:
            spec = importlib.util.find_spec(name) if "." not in name or name.rsplit(".", 1)[0] in sys.modules \
                else None
        except (ImportError, ValueError, AttributeError):
            spec = None
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            return spec.origin
    return None


def _namespace(value):
    """The module namespace (a dict) whose code a value comes from, or None."""
    try:
        if getattr(value, "is_pto_kernel", False):
            return value.fn_globals
        if inspect.ismodule(value):
            return vars(value)
        if inspect.isfunction(value):
            return value.__globals__
        if inspect.isclass(value):
            module = sys.modules.get(value.__module__)
            return vars(module) if module is not None else None
    except Exception:                  # an object whose attributes raise: no code of the program
        return None
    return None


_NOT_USER = tuple(Path(p).resolve() for p in {
    *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
    str(Path(__file__).resolve().parent.parent)})


def _is_user_file(path) -> bool:
    """Whether path is a .py file of the program (not of Python, an installed package or pypto_sim)."""
    if not isinstance(path, str) or not path.endswith(".py") or not Path(path).is_file():
        return False
    path = Path(path).resolve()
    return not any(path.is_relative_to(root) for root in _NOT_USER)
