"""Many lines of JSON text at once, from numpy columns: the trace writer's formatter.

A chunk of rows is one ``(rows, width)`` uint8 array: every row is built from the same
fields, each field a fixed column range, so a field is filled for all rows by one numpy
operation per column or one row gather (no Python per row, no dict per event). Fields whose
text differs in length between rows are padded with spaces *outside* JSON strings (before a
number, after a closing quote), which JSON allows between tokens, so every row stays one
valid JSON value of the same width and ``json.load`` reads exactly the numbers and strings
given. Each row ends with a newline.
"""
from __future__ import annotations

from json.encoder import encode_basestring_ascii

import numpy as np

_SPACE = ord(" ")
_ZERO = ord("0")
_POW10 = 10 ** np.arange(19, dtype=np.int64)


def _quads(blank_zero: str) -> np.ndarray:
    """The 10,000 four-character groups "0000".."9999" (``blank_zero=""``), or with leading
    zeros as spaces ("   7"; 0 as ``blank_zero`` right-aligned), each one uint32 in memory
    order, so a group of four characters is one gather."""
    texts = [f"{k:04d}" for k in range(10_000)] if blank_zero == "" else \
        [f"{k:>4d}" if k else f"{blank_zero:>4s}" for k in range(10_000)]
    return np.frombuffer("".join(texts).encode("ascii"), np.uint32)


_ZEROS, _LEADING, _BLANK = _quads(""), _quads("0"), _quads(" ")
_SPACES = np.frombuffer(b"    ", np.uint32)[0]


def _digits_needed(values: np.ndarray) -> int:
    """Decimal digits of the largest of some non-negative integers (1 for none or 0)."""
    top = int(values.max()) if len(values) else 0
    return len(str(top))


def _write_int(view: np.ndarray, values: np.ndarray, show: np.ndarray | None):
    """``values`` right-aligned in the columns of ``view`` (rows where ``show`` is False stay
    blank): four digits at a time, from the left, each group a table lookup; a group before
    the number's first digit is blank."""
    width = view.shape[1]
    groups = -(-width // 4)
    quads = np.empty((len(values), groups), np.uint32)
    started = np.zeros(len(values), bool)
    for g in range(groups):
        part = values // 10 ** (4 * (groups - 1 - g)) % 10_000 if groups > 1 else values
        if g == groups - 1:
            quads[:, g] = np.where(started, _ZEROS[part], _LEADING[part])
        else:
            quads[:, g] = np.where(started, _ZEROS[part], _BLANK[part])
            started |= part > 0
    if show is not None:
        quads[~show] = _SPACES
    view[:] = quads.view(np.uint8)[:, 4 * groups - width:]


class Rows:
    """The fields of one chunk of rows, in order; ``array()`` renders them.

    ``text(s)``: the same text in every row; ``number(values)``: non-negative integers;
    ``dyadic(numerators, shift)``: the exact decimals of numerators / 2**shift;
    ``string(texts, index)``: the JSON string ``texts[index]`` per row; ``raw(fragments,
    index)``: ready JSON text per row; each with an optional
    ``show`` mask (rows where it is False get spaces, so a field can be left out)."""

    def __init__(self, n: int):
        self.n = n
        self.fields = []            # (width, fill(view))

    def text(self, s: str, show=None):
        raw = np.frombuffer(s.encode("ascii"), np.uint8)

        def fill(view):
            view[:] = raw
            if show is not None:
                view[~show] = _SPACE
        self.fields.append((len(raw), fill))
        return self

    def number(self, values: np.ndarray, show=None):
        values = np.asarray(values, np.int64)
        if len(values) and int(values.min()) < 0:
            raise ValueError("rowtext.number writes non-negative integers only")
        self.fields.append((_digits_needed(values),
                            lambda view: _write_int(view, values, show)))
        return self

    def dyadic(self, numerators: np.ndarray, shift: int, show=None):
        """numerators / 2**shift as an exact decimal: the integer part, then (for shift > 0,
        so that such a field always reads as a float) a point and as many fraction digits as
        the longest fraction needs, at least one."""
        numerators = np.asarray(numerators, np.int64)
        self.number(numerators >> shift, show)
        if shift == 0:
            return self
        frac = (numerators & ((1 << shift) - 1)) * 5 ** shift      # fraction * 10**shift
        nonzero = frac[frac != 0]
        trailing = shift - 1
        for d in range(shift - 1):                  # the fewest trailing zeros of any fraction
            if np.any(nonzero // _POW10[d] % 10 != 0):
                trailing = d
                break
        width = shift - trailing
        scaled = frac // _POW10[trailing]

        def fill(view):
            view[:, 0] = ord(".")
            view[:, 1:] = (scaled[:, None] // _POW10[width - 1::-1][None, :]) % 10 + _ZERO
            if show is not None:
                view[~show] = _SPACE
        self.fields.append((1 + width, fill))
        return self

    def string(self, texts, index: np.ndarray, show=None):
        """JSON strings from a table: row r holds texts[index[r]] as a JSON string."""
        return self.raw(list(map(encode_basestring_ascii, texts)), index, show)

    def raw(self, fragments, index: np.ndarray, show=None):
        """JSON text from a table of ready fragments (ASCII): row r holds
        fragments[index[r]], padded with spaces after it to the longest fragment."""
        encoded = [f.encode("ascii") for f in fragments] + [b""]
        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
        width = int(lengths.max())
        table = np.full((len(encoded), width), _SPACE, np.uint8)
        owner = np.repeat(np.arange(len(encoded)), lengths)
        starts = np.cumsum(lengths) - lengths
        table[owner, np.arange(len(owner)) - starts[owner]] = np.frombuffer(b"".join(encoded), np.uint8)
        index = np.asarray(index, np.int64)
        if show is not None:
            index = np.where(show, index, len(encoded) - 1)

        def fill(view):
            view[:] = table[index]
        self.fields.append((width, fill))
        return self

    def array(self) -> np.ndarray:
        """The rows as an (n, width) uint8 array, each ending with a newline."""
        width = sum(w for w, _ in self.fields) + 1
        out = np.empty((self.n, width), np.uint8)
        col = 0
        for w, fill in self.fields:
            if w:
                fill(out[:, col:col + w])
            col += w
        out[:, -1] = ord("\n")
        return out
