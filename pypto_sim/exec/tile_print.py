"""TPRINT's text, as A2/A3's TPrint.hpp prints it (pto-isa 3186c381, include/pto/npu/a2a3/TPrint.hpp;
isa/60_print.toml): a Vec tile's Rows x Cols words with its valid region fenced ('|' after the last
valid column, a dashed line after the last valid row), or a GM tensor's rows x cols elements read
through the unit's DataCache, each value in the PrintFormat's printf conversion. The device emits it
with cce::printf; pypto_sim writes it to the host's standard output when the unit executes it.

One function for the SimPy model and the functional executor (exec/scalar_memory.py hands TPRINT
and TPRINT_GM here)."""
from __future__ import annotations

import sys

import numpy as np

from .. import dtypes
from ..ir.program import C_AUX, C_DTYPE
from ..isa.print_modes import DTYPE_NAMES, LAYOUT_CODES, LAYOUT_NAMES
from . import gm

_FLOAT, _INT = ("%8.4f", "%8.2f", "%10.6f"), ("%8d", "%8d", "%10d")     # by format; %d and %u print alike here
_WIDTH = (8, 8, 10)


def value_text(value, dtype, fmt: int) -> str:
    """One element as PrintValue prints it (float32 for half: static_cast<float>)."""
    if dtype.is_float:
        return _FLOAT[fmt] % float(np.float32(value))
    return _INT[fmt] % int(value)


def tile_text(words, rows, cols, valid_rows, valid_cols, dtype, layout, fmt) -> str:
    """TPrintTileImpl's text of a rows x cols Vec tile whose words (row-major) are given."""
    out = [f"=== [TPRINT Tile] Data Type: {DTYPE_NAMES[dtype.name]}, Layout: {layout}, TileType: Vec ===\n",
           f"  Shape: [{rows}, {cols}], Valid Shape: [{valid_rows}, {valid_cols}]\n"]
    fence = 0 < valid_cols < cols
    for i in range(rows):
        cells = [value_text(words[i * cols + j], dtype, fmt) + ("|" if fence and j == valid_cols - 1 else "")
                 for j in range(cols)]
        out.append(" ".join(cells) + "\n")
        if 0 < valid_rows < rows and i == valid_rows - 1:       # PrintHorizontalSeparator
            out.append(" ".join("-" * _WIDTH[fmt] + ("|" if fence and j == valid_cols - 1 else "")
                                for j in range(cols)) + "\n")
    return "".join(out)


def tensor_text(values, rows, cols, dtype, fmt) -> str:
    """TPrintGlobalTensorImpl's text of an ND rows x cols GM slice (shape [1, 1, 1, rows, cols])."""
    out = [f"=== [TPRINT GlobalTensor] Data Type: {DTYPE_NAMES[dtype.name]}, Layout: ND ===\n",
           f"  Shape: [1, 1, 1, {rows}, {cols}]\n", "  Batch [0, 0, 0]:\n"]
    for r in range(rows):
        out.append(" ".join(value_text(values[r * cols + c], dtype, fmt) for c in range(cols)) + "\n")
    return "".join(out)


def run(ctx, pc, ub, cache, operands) -> tuple:
    """Execute TPRINT / TPRINT_GM pc (its value operands given); write the text to standard
    output. Returns (elements read, GM lines the DataCache filled)."""
    code = ctx.enc.code
    dtype = dtypes.BY_CODE[int(code[pc, C_DTYPE])]
    if ctx.prog.instrs[pc].op == "TPRINT":
        base, rows, cols = (int(v) for v in code[pc, C_AUX:C_AUX + 3])
        valid_rows, valid_cols, fmt, layout = (int(v) for v in operands[:4])
        text = tile_text(ub[base:base + rows * cols], rows, cols, valid_rows, valid_cols, dtype,
                         LAYOUT_NAMES[LAYOUT_CODES[layout]], fmt)
        fills = 0
    else:
        slot = int(code[pc, C_AUX])
        offset, rows, cols, stride, fmt = (int(v) for v in operands[:5])
        item = dtype.itemsize
        values, fills = [], 0
        for r in range(rows):
            for c in range(cols):
                raw, missed = cache.read(int(ctx.tbase[slot]) + (offset + r * stride + c) * item, item)
                values.append(gm.load(raw, np.array([0]), dtype)[0])
                fills += bool(missed)
        text = tensor_text(values, rows, cols, dtype, fmt)
    sys.stdout.write(text)
    return rows * cols, fills
