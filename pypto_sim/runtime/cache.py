"""The compiled executor's on-disk cache (exec/jit_cache.py): what it holds, and removing what
the code in this process no longer loads (``pypto-sim cache`` and ``--prune``).

numba's cache of each compiled module lives in ``numba/<module>-<closure digest>/`` and each
generated module in ``generated/<name>_<hash>.py``; an edit, an upgrade of pypto_sim, numba or
Python, or a change of the ISA table makes new ones and leaves the old ones behind, so a
cache shared by many versions only grows. An entry is *current* when this process's code
would load it: a compiled module at its closure digest now, a generated module this process
imported and the numba folder of its functions. Everything else is stale. Pruning removes only
stale entries; another process running other code on the same cache recompiles what it
loses, so prune when no other pypto_sim process uses the cache.
"""
from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..exec.jit_cache import COMPILED_DIR, GENERATED_PREFIX, closure_digest, writable_dir
from ..exec.lane import COMPILED_MODULES, executor


@dataclass
class CacheReport:
    """The cache folder, its current entries and its stale ones (paths), with their sizes in bytes."""

    folder: Path
    current: list = field(default_factory=list)
    stale: list = field(default_factory=list)
    current_bytes: int = 0
    stale_bytes: int = 0

    def describe(self) -> str:
        """A few lines for the command line."""
        mb = 1 << 20
        return (f"cache: {self.folder}\n"
                f"  current: {len(self.current)} entries, {self.current_bytes / mb:.1f} MiB\n"
                f"  stale:   {len(self.stale)} entries, {self.stale_bytes / mb:.1f} MiB "
                f"(left by other versions of the code; `pypto-sim cache --prune` removes them)")


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _current_names() -> set:
    """The entry names this process's code loads: compiled modules' and generated modules'
    numba folders, and the generated modules' files (and their byte-code)."""
    executor()                      # imports every compiled module, so the generated ones load
    names = {f"{m}-{closure_digest(COMPILED_DIR / f'{m}.py')}" for m in COMPILED_MODULES}
    for name, module in list(sys.modules.items()):
        if name.startswith(GENERATED_PREFIX) and getattr(module, "__file__", None):
            path = Path(module.__file__)
            names |= {f"{path.stem}-{closure_digest(path)}", path.stem}
    return names


def _entries(folder: Path):
    """(entry path, the name that says whose it is) of every entry of the cache folder."""
    for path in sorted((folder / "numba").glob("*")):
        yield path, path.name
    for path in sorted((folder / "generated").glob(f"{GENERATED_PREFIX}*.py")):
        yield path, path.stem
    for path in sorted((folder / "generated" / "__pycache__").glob(f"{GENERATED_PREFIX}*.pyc")):
        yield path, path.name.split(".")[0]


def cache_report() -> CacheReport:
    """What the cache folder (writable_dir()) holds, current and stale."""
    folder = writable_dir()
    current = _current_names()
    report = CacheReport(folder)
    for path, name in _entries(folder):
        size = _size(path)
        if name in current:
            report.current.append(path)
            report.current_bytes += size
        else:
            report.stale.append(path)
            report.stale_bytes += size
    return report


def prune_cache() -> CacheReport:
    """Remove the stale entries of the cache folder; returns the report of what was there
    (its stale entries are the removed ones)."""
    report = cache_report()
    for path in report.stale:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return report
