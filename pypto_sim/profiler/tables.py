"""Profile results as data: plain rows that JSON serialises, and ``to_pandas()`` when pandas
is installed (an optional extra: ``pip install "pypto-sim[pandas]"``)."""
from __future__ import annotations


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
    frame = pd.DataFrame([plain_row(r) for r in rows])
    return frame.set_index(index) if index is not None and len(frame) else frame
