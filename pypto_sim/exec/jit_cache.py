"""Where the compiled executor's modules keep numba's on-disk cache, and when it is stale.

numba's own cache (``cache=True``) checks only the timestamp of the file a function is written in,
but a compiled function carries the code of everything it calls and the values of the globals it
reads: an edit to scalars.py or to the ISA table would leave lane.py's cached machine code stale.
So every module under exec/compiled/ (and the ALU module generated from the ISA, exec/compiled/alu.py)
is cached under its *closure digest*: the hash of its source, of the closure digests of the compiled
modules it imports, of the values of isa_constants.py, and of the numba and Python versions.
Editing one module recompiles it and the modules that import it, nothing else; nothing stale can
ever be loaded. ``ExecutorCacheLocator`` gives numba these places (numba's cache-locator
extension point, which NUMBA_CACHE_LOCATOR_CLASSES also names); code outside exec/compiled/ is
left to numba's own locators.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import re
import sys
import tempfile
import threading
from pathlib import Path

import numba
import numpy as np
from numba.core import caching

COMPILED_DIR = Path(__file__).with_name("compiled")
GENERATED_PREFIX = "pypto_sim_generated_"      # generated modules' names (and their files' stems)
_LOCK = threading.RLock()
_DIGESTS: dict = {}                             # path -> closure digest, this process's memo
_WRITABLE: dict = {}                            # cache_dir() -> the directory writable_dir() found


def cache_dir() -> Path:
    """Where generated modules and numba's cache of the compiled modules live
    (PYPTO_SIM_CACHE_DIR, else $XDG_CACHE_HOME/pypto_sim, else ~/.cache/pypto_sim)."""
    base = os.environ.get("PYPTO_SIM_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "pypto_sim"


def _unique_suffix() -> str:
    """A name part no other process or thread uses at the same time."""
    return f"{os.getpid()}.{threading.get_ident()}"


def writable_dir() -> Path:
    """cache_dir(), or a per-user directory under the system's temporary directory when that is
    not writable; an OSError naming both (and PYPTO_SIM_CACHE_DIR) when neither is. Probed once
    per process and cache_dir()."""
    wanted = cache_dir()
    with _LOCK:
        found = _WRITABLE.get(wanted)
        if found is None:
            found = _WRITABLE[wanted] = _probe_writable(wanted)
        return found


def _probe_writable(wanted: Path) -> Path:
    tried = []
    for candidate in (wanted, Path(tempfile.gettempdir()) / f"pypto_sim-{os.getuid()}"):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            probe = candidate / f".probe.{_unique_suffix()}"     # threads must not share it
            probe.write_text("ok")
            probe.unlink()
            return candidate
        except OSError as exc:
            tried.append(f"{candidate}: {exc.strerror or exc}")
    raise OSError("no writable cache directory for the compiled executor (tried "
                  + "; ".join(tried) + "); set PYPTO_SIM_CACHE_DIR to a writable directory")


def _is_ours(path: Path) -> bool:
    return path.parent == COMPILED_DIR or path.stem.startswith(GENERATED_PREFIX)


# a compiled module's import of a sibling, relative or by absolute name (the generated module's);
# compiled modules import at the top level, one statement per sibling (tests/test_jit_cache.py)
_SIBLING_IMPORT = re.compile(r"^from (?:\.|pypto_sim\.exec\.compiled\.)(\w+) import", re.M)
# a plain-Python module of isa/ whose functions a compiled module compiles (isa/gm_layouts.py):
# its source is part of that module's closure too; it imports nothing of the package, so its
# source is its whole closure
_ISA_IMPORT = re.compile(r"^from \.\.\.isa\.(\w+) import", re.M)
ISA_DIR = Path(__file__).resolve().parents[1] / "isa"


def _imported_files(path: Path, source: str) -> list:
    """The compiled modules path's source imports (relative or by absolute name), and the
    generated module a loaded loader names in GENERATED_FILE."""
    if path.parent == ISA_DIR:          # compiled from isa/: self-contained (tests/test_jit_cache.py)
        return []
    found = {COMPILED_DIR / f"{name}.py" for name in _SIBLING_IMPORT.findall(source)}
    found |= {ISA_DIR / f"{name}.py" for name in _ISA_IMPORT.findall(source)}
    module = sys.modules.get(f"pypto_sim.exec.compiled.{path.stem}") if path.parent == COMPILED_DIR else None
    generated = getattr(module, "GENERATED_FILE", None)
    if generated is not None:
        found.add(Path(generated))
    return sorted(f for f in found if f.exists())


def compiled_modules() -> tuple:
    """Every module of exec/compiled/, each after the siblings it imports (ties by name): the
    executor's import order, read from the files, so a new kernel module needs no list."""
    deps = {p.stem: set(_SIBLING_IMPORT.findall(p.read_text(encoding="utf-8")))
            for p in COMPILED_DIR.glob("*.py") if p.stem != "__init__"}
    order: list = []
    while len(order) < len(deps):
        ready = sorted(m for m, d in deps.items() if m not in order and d <= set(order))
        if not ready:
            stuck = sorted(m for m in deps if m not in order)
            raise ImportError(f"exec/compiled/: the modules {stuck} import each other in a cycle")
        order.append(ready[0])
    return tuple(order)


def values_digest(module) -> str:
    """A hash of a module's public values (ints, floats, strings, numpy arrays): what numba
    freezes into code that reads them as globals."""
    h = hashlib.sha256()
    for name in sorted(vars(module)):
        value = getattr(module, name)
        if name.startswith("_"):
            continue
        if isinstance(value, np.ndarray):
            h.update(f"{name}:{value.dtype}:{value.shape}:".encode() + value.tobytes())
        elif isinstance(value, (bool, int, float, str)):
            h.update(f"{name}={value!r};".encode())
    return h.hexdigest()


def closure_digest(path: Path) -> str:
    """The hash that keys numba's cache of the compiled module at path (module docstring)."""
    path = Path(path).resolve()
    with _LOCK:
        digest = _DIGESTS.get(path)
        if digest is None:
            source = path.read_text(encoding="utf-8")
            h = hashlib.sha256((source + numba.__version__ + sys.version).encode())
            for dep in _imported_files(path, source):
                if dep.resolve() != path:
                    h.update(closure_digest(dep).encode())
            if path.name == "isa_constants.py":     # plain Python: its values, not only its code
                constants = importlib.import_module(f"{__package__}.compiled.isa_constants")
                h.update(values_digest(constants).encode())
            digest = _DIGESTS[path] = h.hexdigest()[:16]
        return digest


class ExecutorCacheLocator(caching._CacheLocator):
    """numba's cache locator for the compiled modules: a directory per module and closure digest,
    and the digest as the stamp numba compares."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._digest = closure_digest(Path(py_file))
        self._cache_path = str(writable_dir() / "numba" / f"{Path(py_file).stem}-{self._digest}")

    def get_cache_path(self):
        """The directory of this module's cache at its closure digest."""
        return self._cache_path

    def get_source_stamp(self):
        """The closure digest (numba drops an index whose stamp differs)."""
        return self._digest

    def get_disambiguator(self):
        """The function's first line (as numba's locators do)."""
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        """A locator for a function of a compiled module, None for any other function."""
        if not _is_ours(Path(py_file)):
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:
            return None
        return self


def install_locator() -> None:
    """Put ExecutorCacheLocator first among numba's locators (once; idempotent)."""
    classes = caching.CacheImpl._locator_classes
    if ExecutorCacheLocator not in classes:
        classes.insert(0, ExecutorCacheLocator)


def load_generated(name: str, source: str):
    """Import generated source as module GENERATED_PREFIX + name + its hash, written once to
    the cache directory (atomically: concurrent processes each write a temporary file and
    rename it), so numba can cache it like any module."""
    digest = hashlib.sha256((source + numba.__version__ + sys.version).encode()).hexdigest()[:16]
    module_name = f"{GENERATED_PREFIX}{name}_{digest}"
    module = sys.modules.get(module_name)
    if module is not None:
        return module
    directory = writable_dir() / "generated"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{module_name}.py"
    if not path.exists():
        tmp = directory / f".{path.name}.{_unique_suffix()}.tmp"
        tmp.write_text(source, encoding="utf-8")
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
