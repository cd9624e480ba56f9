"""How a tile's elements lie in GM: pto-isa's GlobalTensor layouts for TLOAD / TSTORE, on the
two-dimensional view a tile transfer moves (tile element (r, c), r < rows, c < cols).

A layout places the view's elements in GM as runs of contiguous elements, the runs ``stride``
elements apart (the *window*: what the transfer reads or writes, so L2 lines, bounds, initcheck
and racecheck all see these runs; its cost is its bytes), in an order the layout fixes.
c0 is a 32-byte block's elements (16 for a 2-byte dtype, 8 for a 4-byte one: pto-isa's C0):

- ND (row-major): element (r, c) at r x stride + c; rows runs of cols (stride: elements
  between rows, default cols).
- DN (column-major, the transposed ND: pto-isa's B^T in gemm_performance): element (r, c) at
  c x stride + r; cols runs of rows (stride: elements between columns, default rows).
- NZ (fractal, column blocks of c0): element (r, c) at (c // c0) x stride + r x c0 + c % c0;
  cols / c0 runs of rows x c0 (stride: elements between column blocks, default rows x c0).
  An NC1HWC0 tensor viewed as (H x W pixels) x (C1 x C0 channels) of one image is NZ with
  stride H x W x C0.
- FRACTAL_Z (conv weights [C1 x Kh x Kw, N / 16, 16, C0] viewed as K x N, K = C1 x Kh x Kw x
  C0): element (r, c) at (r // c0) x stride + c x c0 + r % c0, i.e. NZ of the transposed view;
  rows / c0 runs of cols x c0 (stride: elements between row blocks, default cols x c0).

This module states the layouts once: the frontend (default strides, compile-time checks), both
executors and the timing model read their geometry from ``gm_window``, which
exec/compiled/gm_layout.py compiles as it is (numba's cache of it is keyed on this file);
``to_tile`` / ``to_window`` reorder the values with numpy for the reference executor, and the
compiled executor has its own loops (tests/test_gm_layouts.py holds the two to each other and
to the address formulas above).
"""
from __future__ import annotations

import numpy as np

LAYOUTS = ("ND", "DN", "NZ", "FRACTAL_Z")
ND, DN, NZ, FRACTAL_Z = 0, 1, 2, 3
C0_BYTES = 32                  # a C0 block: 16 elements of a 2-byte dtype, 8 of a 4-byte one
ANY_STRIDE = 1 << 62           # a stride no run is longer than: gm_window's runs alone


def c0_of(itemsize: int) -> int:
    """Elements in a 32-byte block of a dtype of itemsize bytes (pto-isa's C0)."""
    return C0_BYTES // itemsize


def gm_window(layout, rows, cols, stride, c0):
    """(runs, elements a run, elements between runs) of a rows x cols view in this layout;
    (0, 0, 0) when there is none (window_problem says why): an unknown layout, NZ with cols or
    FRACTAL_Z with rows not a multiple of c0, or runs that would overlap or go backwards (a
    stride shorter than a run: a DMA's gap between bursts is unsigned). Plain integer code:
    numba compiles it unchanged."""
    runs, run = 0, 0
    if layout == ND:
        runs, run = rows, cols
    elif layout == DN:
        runs, run = cols, rows
    elif layout == NZ:
        if cols % c0 == 0:
            runs, run = cols // c0, rows * c0
    elif layout == FRACTAL_Z:
        if rows % c0 == 0:
            runs, run = rows // c0, cols * c0
    if runs == 0 or (runs > 1 and stride < run):
        return 0, 0, 0
    return runs, run, stride


def window_problem(layout, rows, cols, stride, c0) -> str:
    """Why a rows x cols view has no window in this layout ('' when it has one)."""
    if not 0 <= layout < len(LAYOUTS):
        return f"layout {layout} is none of " + ", ".join(LAYOUTS)
    name = LAYOUTS[layout]
    if layout == NZ and cols % c0:
        return f"{rows} x {cols} is not a {name} view: it needs cols a multiple of C0 = {c0}"
    if layout == FRACTAL_Z and rows % c0:
        return f"{rows} x {cols} is not a {name} view: it needs rows a multiple of C0 = {c0}"
    runs, run, _ = gm_window(layout, rows, cols, ANY_STRIDE, c0)
    if runs > 1 and stride < run:
        what = f"rows of {run} elements ({rows} x {cols})" if layout == ND else \
            f"{run}-element runs of {rows} x {cols} {name} ({runs} runs)"
        return f"stride {stride} is shorter than the {what}: they would overlap or go backwards"
    return ""


def default_stride(layout, rows, cols, c0):
    """The stride of a dense tensor of exactly this view (runs back to back)."""
    return gm_window(layout, rows, cols, ANY_STRIDE, c0)[1]


def to_tile(win, layout, rows, cols, c0):
    """The view's values in tile order (row-major rows x cols) from the window's (run after
    run), as numpy reshapes."""
    win = np.asarray(win)[:rows * cols]
    if layout == DN:
        return win.reshape(cols, rows).T.ravel()
    if layout == NZ:
        return win.reshape(cols // c0, rows, c0).transpose(1, 0, 2).ravel()
    if layout == FRACTAL_Z:
        return win.reshape(rows // c0, cols, c0).transpose(0, 2, 1).ravel()
    return win


def to_window(tile, layout, rows, cols, c0):
    """The window's values (run after run) from the view's in tile order: to_tile's inverse."""
    tile = np.asarray(tile)[:rows * cols]
    if layout == DN:
        return tile.reshape(rows, cols).T.ravel()
    if layout == NZ:
        return tile.reshape(rows, cols // c0, c0).transpose(1, 0, 2).ravel()
    if layout == FRACTAL_Z:
        return tile.reshape(rows // c0, c0, cols).transpose(0, 2, 1).ravel()
    return tile
