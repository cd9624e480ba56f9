"""Numerics of the fits: least-squares lines and the exact "ceil" fit.

Most table entries come from the slope of a straight line (cycles = a + b * size). Rates
(bytes per cycle, cycles per repeat) enter the timing model through a ceiling:
``cycles = a + ceil(x * s)``; measured in the simulator, every observation bounds ``s`` to an
interval, and the intersection over several sizes pins it down to a narrow interval, from which
:func:`simplest_in` picks the number with the fewest decimals (so 142.7 comes back as 142.7,
not 142.6871). Noisy hardware data has no exact solution; the fit then falls back to least
squares, which is the natural estimate there.
"""
from __future__ import annotations

import math
from fractions import Fraction

# how far below its least value a derived entry may come out and still be taken as the least:
# each is a measured slope, rounded to whole cycles, less the model's cost of the pattern's
# other parts (rounded up), so a value one cycle too low is that rounding, not a contradiction;
# a measured slope may likewise come out up to ROUNDING below the least the model allows it
ROUNDING = 1


def linear_fit(xs, ys):
    """Least-squares (a, b, max |residual|) of ys = a + b * xs; one point gives b = 0."""
    n = len(xs)
    if n == 0:
        raise ValueError("no points to fit")
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    a = my - b * mx
    resid = max(abs(y - a - b * x) for x, y in zip(xs, ys))
    return a, b, resid


def ceil_fit(xs, ys, prefer=None):
    """Exact fit of ys = a + ceil(x * s) with integer a and s > 0, as the timing model computes
    transfers and repeats. Returns (a, lo, hi) with s in the half-open interval (lo, hi]
    (Fractions), or None when no (a, s) reproduces every point (noisy data).

    Several a can fit: when every x * s is a whole number (a whole per_repeat), a - 1 with
    s + 1 / max(x) reproduces the points as well. The candidate whose s interval holds the
    simplest number (fewest decimals) wins, then the one nearest ``prefer`` (else the
    least-squares intercept)."""
    pts = [(Fraction(x), Fraction(y)) for x, y in zip(xs, ys)]
    if not pts or any(x < 0 for x, _ in pts) or any(y != int(y) for _, y in pts):
        return None
    a_ls, b_ls, _ = linear_fit([float(x) for x, _ in pts], [float(y) for _, y in pts])
    guess = a_ls - 0.5 if prefer is None else prefer
    ymin = int(min(y for _, y in pts))
    found = []
    for a in range(math.floor(a_ls) - 64, min(math.ceil(a_ls) + 64, ymin) + 1):
        lo, hi, ok = Fraction(0), None, True
        for x, y in pts:
            r = y - a                     # ceil(x * s) = r
            if x == 0:
                ok = r == 0
            elif r <= 0:
                ok = False
            else:
                lo = max(lo, (r - 1) / x)
                hi = r / x if hi is None else min(hi, r / x)
            if not ok:
                break
        if ok and hi is not None and lo < hi:
            found.append((decimals(simplest_in(lo, hi)), abs(a - guess), a, lo, hi))
    if not found:
        return None
    *_, a, lo, hi = min(found)
    return a, lo, hi


def decimals(value) -> int:
    """Digits after the decimal point of a number as simplest_in returns it (0 for ints)."""
    if isinstance(value, int) or float(value).is_integer():
        return 0
    text = repr(float(value))
    return len(text.split(".")[1]) if "e" not in text else 99


def simplest_in(lo, hi, lo_closed=False, hi_closed=True, max_digits=9):
    """The number with the fewest decimal digits in the interval between lo and hi (open or
    closed ends as given); ties go to the one nearest the middle. Returns an int when it is
    a whole number, else a float."""
    lo, hi = Fraction(lo), Fraction(hi)
    mid = (lo + hi) / 2
    for digits in range(max_digits + 1):
        scale = 10 ** digits
        first = math.floor(lo * scale)
        last = math.ceil(hi * scale)
        if last - first > 10_000:          # a wide interval: the middle, rounded, will do
            first = last = round(mid * scale)
        best = None
        for k in range(first, last + 1):
            v = Fraction(k, scale)
            inside = (lo < v or (lo_closed and v == lo)) and (v < hi or (hi_closed and v == hi))
            if inside and (best is None or abs(v - mid) < abs(best - mid)):
                best = v
        if best is not None:
            return int(best) if best.denominator == 1 else float(best)
    return float(mid)


def reciprocal_interval(lo, hi):
    """s in (lo, hi] means 1 / s in [1 / hi, 1 / lo): returns (1/hi, 1/lo), lo may be 0."""
    return (1 / Fraction(hi), (1 / Fraction(lo)) if lo > 0 else Fraction(10 ** 12))
