"""Writing output files without harming what is there (docs/profiling.md, "Output files").
The profiler, calibration and sweeps write through it; ``error`` is the caller's error class.

Every file pypto_sim writes for the user (traces, CSVs, plots, latency tables, microbenchmark
rows) goes through here:

- ``output_path`` checks a target before anything is computed or touched: a str or path, not
  a directory, its folders not blocked by a file, not a read-only file;
- ``write_files`` creates the missing folders, writes each file to a temporary file beside its
  target and only then ``os.replace``s it onto the target, so a target is either the earlier
  file, untouched, or the complete new one; on any failure the temporaries (and the folders it
  created) are removed and an OSError becomes the caller's typed error, naming the path the
  user gave and what to do, with the OSError as its ``__cause__``.

An existing regular file at a target is replaced (as ``numpy.save`` and matplotlib's
``savefig`` do), keeping its permission bits; a symbolic link is written through (its target
is replaced, the link stays); a device or pipe (``/dev/null``, ``/dev/stdout``) is written to
directly, as there is nothing to replace.
"""
from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from .errors import ArgumentError, ProfileError

# what to do about the errno of an OSError that stopped a write
_WHAT_TO_DO = {errno.ENOENT: "check the path", errno.EACCES: "check its permissions or choose another path",
         errno.EPERM: "check its permissions or choose another path",
         errno.EISDIR: "give a file, not a directory", errno.ENOTDIR: "check the path: a part of it is a file",
         errno.EROFS: "choose a writable place", errno.ENOSPC: "free some space or choose another place",
         getattr(errno, "EDQUOT", -1): "free some space or choose another place",
         errno.ENAMETOOLONG: "choose a shorter name"}


def output_path(path, what: str, error=ProfileError, example: str = "out.txt",
                regular: bool = False) -> Path:
    """``path`` as a Path to write a file to, or ``error`` naming it before anything is done:
    a str or os.PathLike (else ArgumentError), not a directory, no file where one of its
    folders should be, not a read-only file; with ``regular``, not a device or pipe either.
    ``what`` names the call in the message; ``example`` is a file name the hint suggests for
    a directory."""
    if isinstance(path, (bytes, bool)) or not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(f"{what}: the path must be a str or a pathlib.Path, not "
                            f"{type(path).__name__} {path!r}", hint=f"e.g. {what}({example!r})")
    target = Path(path)
    if not isinstance(os.fspath(target), str):
        raise ArgumentError(f"{what}: the path must be a str or a pathlib.Path, not {path!r}")
    if target.is_dir():
        raise error(f"{what}: {str(path) or '.'} is a directory, not a file",
                    hint=f"give the path of the file to write, e.g. {target / example}", path=str(path))
    for folder in target.parents:
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                raise error(f"{what}: cannot write {path}: {folder} is a file, not a folder",
                            hint="choose a path whose folders are folders", path=str(path))
            break
    real = Path(os.path.realpath(target))
    if regular and real.exists() and not real.is_file():
        raise error(f"{what}: {path} is not a regular file (a device, pipe or socket)",
                    hint=f"give the path of a file, e.g. {example}", path=str(path))
    if real.is_file() and not os.access(real, os.W_OK):
        raise error(f"{what}: {path} is a read-only file; it is left as it was",
                    hint="make it writable (chmod u+w) or choose another path", path=str(path))
    return target


def os_error(exc: OSError, path, what: str, error=ProfileError):
    """``error`` for an OSError met writing ``path`` (raise it ``from exc``): the path the user
    gave (not a temporary's), the system's reason and what to do."""
    reason = exc.strerror or str(exc)
    return error(f"{what}: cannot write {path}: {reason}; any file already there is left as it was",
                 hint=_WHAT_TO_DO.get(exc.errno, "check the path, its folder's permissions and free space"),
                 path=str(path))


def write_files(files, what: str, error=ProfileError, check=None) -> list:
    """Write ``files``, a list of (path, write, binary): ``write(f)`` writes the content to the
    open file ``f`` (bytes when ``binary``, else text in UTF-8 with newline=""). The paths
    should come from ``output_path``. Every file is written to its temporary first; only when
    all are written (and ``check``, given, has been called with the temporaries' paths and
    returned) are they moved onto their targets. Returns the paths."""
    made, temps = [], []
    current = files[0][0] if files else ""
    try:
        for current, _write, _binary in files:
            _make_folders(Path(current).parent, made)
        for current, write, binary in files:
            target = Path(os.path.realpath(current))
            try:
                mode = target.stat()
            except FileNotFoundError:
                mode = None
            if mode is not None and not stat.S_ISREG(mode.st_mode):
                with _open(os.open(target, os.O_WRONLY), binary) as f:    # a device or a pipe
                    write(f)
                continue
            tmp = _temporary(target)
            temps.append((tmp, target, mode, current))
            with _open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), binary) as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
        if check is not None:
            check([tmp for tmp, _target, _mode, _path in temps])
        for tmp, target, mode, current in temps:
            if mode is not None:
                os.chmod(tmp, stat.S_IMODE(mode.st_mode))
            os.replace(tmp, target)
    except BaseException as exc:
        for tmp, _target, _mode, _path in temps:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        for folder in reversed(made):
            try:
                folder.rmdir()
            except OSError:
                pass
        if isinstance(exc, OSError):
            raise os_error(exc, current, what, error) from exc
        raise
    return [Path(path) for path, _w, _b in files]


def write_file(path, write, what: str, error=ProfileError, binary=False, check=None) -> Path:
    """``write_files`` of one file: returns its path."""
    return write_files([(path, write, binary)], what, error, check)[0]


def _make_folders(folder: Path, made: list):
    """Create ``folder`` and its missing parents, appending each one created to ``made``."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for f in reversed(missing):
        f.mkdir()
        made.append(f)


def _temporary(target: Path) -> Path:
    """A new hidden file name beside ``target`` (same folder, so os.replace is atomic)."""
    return target.with_name(f".{target.name[:160]}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def _open(fd, binary):
    """The open file of descriptor ``fd`` (closed if that fails)."""
    try:
        if binary:
            return os.fdopen(fd, "wb")
        return os.fdopen(fd, "w", encoding="utf-8", newline="")
    except BaseException:
        os.close(fd)
        raise
