"""The executor: the compiled modules of exec/compiled/, gathered into one namespace.

``executor()`` imports them (numba compiles each function on first use, or loads it from the
on-disk cache keyed by its module's closure digest, exec/jit_cache.py) and returns a namespace
holding every public name of every compiled module: ``executor().execute``,
``executor().tile_load``, ``executor().OP_LOAD``. exec/reference.py offers the same names in
plain Python; a simulation takes either as its executor module.
"""
from __future__ import annotations

import importlib
import threading
import types

from .isa_codes import family_code
from .jit_cache import cache_dir, compiled_modules

__all__ = ["COMPILED_MODULES", "cache_dir", "executor", "family_code"]

# every compiled module, in import order (a module after those it imports)
COMPILED_MODULES = compiled_modules()

# a generated module's loader names its file (exec/jit_cache.py): each module's own, not the executor's
_PER_MODULE = ("GENERATED_FILE",)
_BUILD_LOCK = threading.Lock()
_EXECUTOR: list = []        # the process's executor namespace, once built


def executor() -> types.SimpleNamespace:
    """The executor namespace (built once per process; safe to call from several threads at
    once: the first builds it, the others wait). Two compiled modules defining one public name
    is refused (a ValueError naming both): the namespace must not depend on import order."""
    if not _EXECUTOR:
        with _BUILD_LOCK:
            if not _EXECUTOR:
                _EXECUTOR.append(_gather())
    return _EXECUTOR[0]


def _gather() -> types.SimpleNamespace:
    names: dict = {}
    owner: dict = {}
    for module_name in COMPILED_MODULES:
        module = importlib.import_module(f"{__package__}.compiled.{module_name}")
        for name, value in vars(module).items():
            if name.startswith("_") or name in _PER_MODULE or isinstance(value, types.ModuleType):
                continue
            if name in names and names[name] is not value:
                raise ValueError(f"exec/compiled/{module_name}.py and exec/compiled/{owner[name]}.py both "
                                 f"define {name!r}: rename one (the executor namespace holds both modules)")
            names[name] = value
            owner.setdefault(name, module_name)
    return types.SimpleNamespace(**names)
