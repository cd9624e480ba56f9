"""Profile results as data: plain rows that JSON serialises, and ``to_pandas()`` when pandas
is installed (an optional extra: ``pip install "pypto-sim[pandas]"``)."""
from __future__ import annotations

import csv

from ..output_files import output_path, write_file


def plain(value):
    """A row value as a JSON-ready Python number or string (numpy scalars become int/float)."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value


def plain_row(row: dict) -> dict:
    return {k: plain(v) for k, v in row.items()}


def to_dataframe(rows: list, index=None):
    """A pandas DataFrame of rows (dicts), indexed by the column ``index`` if given."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_pandas() needs pandas: pip install \"pypto-sim[pandas]\" "
                          "(or pip install pandas); the rows themselves are plain dicts") from None
    # a field with no value (None: msprof's N/A) is pandas' missing value, so that numeric
    # columns stay numeric
    frame = pd.DataFrame([{k: (float("nan") if v is None else v) for k, v in plain_row(r).items()}
                          for r in rows])
    return frame.set_index(index) if index is not None and len(frame) else frame


def csv_writer(columns, rows, missing="N/A"):
    """write(f) of rows (dicts) as CSV with ``columns`` in order, a None value written as
    ``missing`` (msprof writes N/A for a field it has no value for)."""
    def write(f):
        writer = csv.writer(f)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([missing if row[c] is None else row[c] for c in columns])
    return write


def write_csv(path, columns, rows, missing="N/A"):
    """Write rows (dicts) as CSV with ``columns`` in order; a None value is written as
    ``missing``. Returns the path. The path is checked first (a directory is a ProfileError);
    a file already there is replaced atomically, never left half-written (pypto_sim/output_files.py)."""
    write_file(output_path(path, "to_csv", example="table.csv"), csv_writer(columns, rows, missing),
               "to_csv")
    return path


def read_only(*_args, **_kwargs):
    """The mutators of the report containers: reports are results, not workspaces."""
    raise TypeError("profile reports are read-only; copy the rows (list(report) or "
                    "dict(row)) to change them")


class RowTable(list):
    """A read-only list of plain row dicts (``json.dumps(table)`` works) whose ``[key]`` looks a
    row up by its ``KEY`` column (a source line, a core) when the class names one, and whose
    iteration, ``len`` and ``rows`` give the rows in report order."""

    KEY: str | None = None
    WHAT = "row"

    def __init__(self, rows):
        super().__init__(plain_row(r) for r in rows)

    @property
    def rows(self) -> list:
        """The rows as a plain list of dicts."""
        return list(self)

    def __getitem__(self, key):
        if self.KEY is None or isinstance(key, slice):
            return list.__getitem__(self, key)
        for r in list.__iter__(self):
            if r[self.KEY] == key:
                return r
        raise KeyError(self._missing(key))

    def _missing(self, key) -> str:
        return f"no {self.WHAT} {key!r} in this report"

    def __contains__(self, key):
        if self.KEY is None:
            return list.__contains__(self, key)
        return any(r[self.KEY] == key for r in list.__iter__(self))

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = read_only
    sort = reverse = __iadd__ = __imul__ = read_only

    def to_pandas(self):
        """A DataFrame of the rows, indexed by the key column if there is one (needs pandas)."""
        return to_dataframe(self.rows, self.KEY)

    def __reduce__(self):
        return (_restore, (type(self), list(self), dict(self.__dict__)))


def _restore(cls, rows, state):
    table = list.__new__(cls)
    list.extend(table, rows)
    table.__dict__.update(state)
    return table
