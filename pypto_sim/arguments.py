"""Whole-number arguments of the host API (sizes, counts, warps, cores, cycles), checked once
here: a bool is not a count (``True`` would silently mean 1), nor is 2.5, and a position
must lie inside what the launch has."""
from __future__ import annotations

import numpy as np

from .errors import ArgumentError


def whole_number(value, what: str, least: int | None = None, below: int | None = None,
                 hint: str | None = None, error=ArgumentError) -> int:
    """``value`` as an int, or ``error`` naming ``what``, the value and the valid range: it
    must be an int (numpy ints too, never a bool) with ``least <= value < below`` (either
    bound may be None)."""
    valid = _range_text(least, below)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise error(f"{what}={value!r} is not a whole number ({valid})",
                    hint=hint or f"give an int {valid}")
    number = int(value)
    if (least is not None and number < least) or (below is not None and number >= below):
        raise error(f"{what}={number} is out of range ({valid})", hint=hint or f"give an int {valid}")
    return number


def _range_text(least, below) -> str:
    if least is not None and below is not None:
        return f"valid: {least}..{below - 1}" if below > least else "nothing is valid here"
    if least is not None:
        return f"valid: {least} or more"
    if below is not None:
        return f"valid: below {below}"
    return "valid: any int"
