"""Where the data directories (isa/ and latency_tables/) are found.

An installed wheel carries them as ``pypto_sim/_data/<name>`` (see pyproject's force-include)
and they are read through importlib.resources. A source checkout that is imported in place,
without an install, has them at the repository's top level beside ``pypto_sim/``.
"""
from __future__ import annotations

import importlib.resources
from pathlib import Path

DATA_DIRS = ("isa", "latency_tables")


def data_dir(name: str) -> Path:
    """Return the directory holding the data set ``name`` ('isa' or 'latency_tables')."""
    if name not in DATA_DIRS:
        raise ValueError(f"unknown data directory {name!r}; expected one of {DATA_DIRS}")
    packaged = importlib.resources.files("pypto_sim") / "_data" / name
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir() and (checkout.parent / "pyproject.toml").is_file():
        return checkout
    raise FileNotFoundError(
        f"pypto_sim's {name}/ data was not found (looked in {packaged} and {checkout}); "
        "reinstall the package with 'pip install .'")
