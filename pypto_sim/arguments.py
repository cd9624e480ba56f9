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


def launch_dims(value, what: str, kernel: str | None = None, error=ArgumentError) -> tuple:
    """A grid= or block= value (an int or 1 to 3 of them) as three positive ints, or ``error``
    naming ``what`` (a launch's is a LaunchError; profile_on_npu's an ArgumentError)."""
    items = tuple(value) if isinstance(value, (tuple, list, np.ndarray)) else (value,)
    for v in items:          # 2.5 blocks or True blocks is a mistake, not a count to round
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise error(f"{what}={value!r}: {v!r} is not an integer", kernel=kernel,
                        hint=f"give whole numbers, for example {what}=(4, 1, 1)")
    dims = tuple(int(v) for v in items)
    if not 1 <= len(dims) <= 3 or any(d <= 0 for d in dims):
        raise error(f"{what}={value!r}: every dimension must be a positive integer (1 to 3 of them)",
                    kernel=kernel, hint=f"for example {what}=(4, 1, 1)")
    return dims + (1,) * (3 - len(dims))
