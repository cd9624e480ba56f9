"""A sweep's results file: one writer at a time (a lock held next to it), rows written
atomically after each point, read back to resume."""
from __future__ import annotations

import json
import os
import re
import socket
import time
from pathlib import Path

from ..errors import SweepError
from ..output_files import write_file

try:
    import fcntl
except ImportError:             # Windows: the lock file alone (created exclusively)
    fcntl = None

SUFFIXES = (".parquet", ".csv")
# what a sweep writes (worker.py): every row has KEY_COLUMNS; any other column is one of
# COLUMNS or starts with one of PREFIXES. A table with anything else is not a sweep's.
KEY_COLUMNS = ("key", "identity")
COLUMNS = frozenset(KEY_COLUMNS + ("total_cycles", "simulated_us", "warp_instructions", "check",
                                   "error", "error_kind", "traceback", "wall_s"))
PREFIXES = ("param.", "override.", "busy.", "pipe_busy.")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_NOT_OURS = ("resume=True continues only a table pto.sweep wrote (columns key, identity, param.*, "
             "override.*, total_cycles, error, ...); the file is left as it was: choose another "
             "path for out=, or move that file away")


class ResultsFile:
    """The results table at ``path`` (.parquet or .csv), locked for this sweep while open.

    A second sweep opening the same file gets a SweepError naming the file and the process
    holding it, instead of both writing and one losing the other's rows. An existing file is
    continued only with ``resume``; without it, it is refused (never overwritten)."""

    def __init__(self, path, resume: bool):
        self.path = Path(path).resolve()
        self.resume = resume
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self._fd = None
        if self.path.suffix not in SUFFIXES:
            raise SweepError(f"results file {self.path}: the name must end in .parquet or .csv",
                             hint="the suffix chooses the format")
        if not self.path.parent.is_dir():
            raise SweepError(f"results file {self.path}: the folder {self.path.parent} does not "
                             "exist", hint="create it first, or choose another path")

    def __enter__(self):
        self._lock()
        try:
            if self.path.exists() and not self.resume:
                raise SweepError(f"results file {self.path} already exists",
                                 hint="pass resume=True (--resume) to continue it, or remove it "
                                      "or choose another path: a sweep never overwrites results")
            if not os.access(self.path.parent, os.W_OK):
                raise SweepError(f"results file {self.path}: the folder is not writable",
                                 hint="choose a writable folder")
        except BaseException:
            self._unlock()
            raise
        return self

    def __exit__(self, *exc):
        self._unlock()

    def _lock(self):
        holder = f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}"
        while True:
            try:
                flags = os.O_RDWR | os.O_CREAT | (0 if fcntl else os.O_EXCL)
                fd = os.open(self.lock_path, flags, 0o644)
            except FileExistsError:
                raise self._held(_read_holder(self.lock_path)) from None
            except OSError as exc:
                raise SweepError(f"results file {self.path}: cannot create its lock file "
                                 f"{self.lock_path}: {exc.strerror}",
                                 hint="choose a writable folder for the results") from None
            if fcntl is None:
                break
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise self._held(_read_holder(self.lock_path)) from None
            try:                                  # the holder may have removed it meanwhile
                same = os.path.samestat(os.fstat(fd), os.stat(self.lock_path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, holder.encode())
        self._fd = fd

    def _held(self, holder):
        return SweepError(f"results file {self.path} is being written by another sweep "
                          f"({holder or 'holder unknown'}; lock {self.lock_path})",
                          hint="wait for it to finish, or write to another file; two writers "
                               "would lose each other's rows")

    def _unlock(self):
        if self._fd is not None:
            try:
                os.unlink(self.lock_path)
            except FileNotFoundError:
                pass
            os.close(self._fd)                    # closing releases the flock
            self._fd = None

    def read(self, pd):
        """The rows already in the file (an empty frame when there is none), with the values
        the sweep wrote (param.* and override.* come from each row's key: a CSV keeps only
        their text). A file that is not a table a sweep wrote (other columns, no key and
        identity, values that are not a point's key and identity) is a SweepError, and the
        file is left as it was."""
        if not self.path.exists():
            return pd.DataFrame()
        try:
            if self.path.suffix == ".csv":
                frame = pd.read_csv(self.path, dtype={"key": str, "identity": str})
            else:
                frame = pd.read_parquet(self.path)
        except Exception as exc:
            raise SweepError(f"results file {self.path} cannot be read to resume: "
                             f"{type(exc).__name__}: {exc}",
                             hint="it is not a table a sweep wrote; choose another path") from exc
        why = _not_a_sweep_table(frame)
        if why:
            raise SweepError(f"results file {self.path} is not a table a sweep wrote: {why}",
                             hint=_NOT_OURS)
        return _as_written(pd, frame)

    def write(self, pd, rows):
        """Write all rows, atomically (pypto_sim/output_files.py: a killed driver or a failed
        write leaves the previous table whole, and no temporary file behind)."""
        frame = pd.DataFrame(rows)
        csv = self.path.suffix == ".csv"
        write_file(self.path, (lambda f: frame.to_csv(f, index=False)) if csv else
                   (lambda f: frame.to_parquet(f, index=False)), "sweep: results file", SweepError,
                   binary=not csv)


def _not_a_sweep_table(frame) -> str:
    """Why ``frame`` is not a table a sweep wrote ('' when it is one): a sweep's table has
    the key and identity columns, only columns a sweep writes, and in every row a key (the
    point's parameters and overrides as JSON) and an identity (a sha256 in hex)."""
    columns = [str(c) for c in frame.columns]
    missing = [c for c in KEY_COLUMNS if c not in columns]
    if missing:
        return (f"it has no {' and '.join(missing)} column{'s' if len(missing) > 1 else ''} "
                f"(its columns: {_listed(columns)})")
    foreign = [c for c in columns if c not in COLUMNS and not c.startswith(PREFIXES)]
    if foreign:
        return f"a sweep writes no column {_listed(foreign)}"
    for i, (key, identity) in enumerate(zip(frame["key"], frame["identity"]), start=1):
        if not _is_key(key):
            return f"row {i}: key {key!r} is not a point's key (JSON of its params and overrides)"
        if not (isinstance(identity, str) and _SHA256.fullmatch(identity)):
            return f"row {i}: identity {identity!r} is not a point's identity (a sha256 in hex)"
    return ""


def _as_written(pd, frame):
    """``frame`` with the values the sweep wrote, which a file read back does not keep: the
    param.* and override.* columns are rebuilt from each row's key (the point's values as
    JSON, exact; a CSV holds only their text, which pandas reads as other values: "1" as
    1.0, "NA" and "" as NaN), NaN where a point has no such value, as in a frame built from
    the rows; a missing error or error_kind (a point without an error) is None again."""
    points = [json.loads(key) for key in frame["key"]]
    values = pd.DataFrame([{**{f"param.{k}": v for k, v in p["params"].items()},
                            **{f"override.{k}": v for k, v in p["overrides"].items()}}
                           for p in points], index=frame.index)
    for column in [c for c in frame.columns if str(c).startswith(("param.", "override."))]:
        if column not in values.columns:
            frame[column] = float("nan")
    for column in values.columns:
        frame[column] = values[column]
    for column in ("error", "error_kind"):
        if column in frame.columns:
            frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    return frame


def _is_key(value) -> bool:
    if not isinstance(value, str):
        return False
    try:
        key = json.loads(value)
    except ValueError:
        return False
    return (isinstance(key, dict) and set(key) == {"params", "overrides"}
            and all(isinstance(v, dict) for v in key.values())
            and all(isinstance(x, (bool, int, float, str)) for v in key.values() for x in v.values()))


def _listed(names, most=8) -> str:
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _read_holder(lock_path) -> str:
    try:
        return Path(lock_path).read_text().strip()
    except OSError:
        return ""
