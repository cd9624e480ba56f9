"""GM layouts (isa/gm_layouts.py states them) in the compiled executor: their geometry
``gm_window``, compiled from isa/gm_layouts.py's very function (exec/jit_cache.py keys the
cache of every module that calls it on that file too), and the reorderings between a
transfer's window and its tile as index loops (the reference executor reorders with numpy; tests/test_gm_layouts.py holds the
two to each other)."""
from numba import njit

from ...isa.gm_layouts import C0_BYTES, DN, FRACTAL_Z, ND, NZ, gm_window as _gm_window
from .jit_options import NO_REFCOUNT

__all__ = ["C0_BYTES", "ND", "DN", "NZ", "FRACTAL_Z", "gm_window", "window_index", "tile_to_window",
           "scatter_window"]

# not cached itself (its source file is isa/gm_layouts.py, outside this cache's directory): the
# compiled modules that call it carry its code in their own cached machine code
gm_window = njit(error_model="numpy", **NO_REFCOUNT)(_gm_window)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def window_index(layout, r, c, rows, cols, c0):
    """The position of tile element (r, c) in the window (run after run)."""
    if layout == DN:
        return c * rows + r
    if layout == NZ:
        return (c // c0) * (rows * c0) + r * c0 + c % c0
    if layout == FRACTAL_Z:
        return (r // c0) * (cols * c0) + c * c0 + r % c0
    return r * cols + c


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def tile_to_window(out, tile, layout, rows, cols, c0):
    """out[window_index(r, c)] = tile[r * cols + c]: a tile's values in the order a store
    writes its window."""
    for r in range(rows):
        for c in range(cols):
            out[window_index(layout, r, c, rows, cols, c0)] = tile[r * cols + c]


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def scatter_window(l1, d, dp, win, layout, rows, cols, c0):
    """l1[d + r * dp + c] = win[window_index(r, c)]: a loaded window into a tile of pitch dp
    (a dense tile in order: d = 0, dp = cols)."""
    for r in range(rows):
        for c in range(cols):
            l1[d + r * dp + c] = win[window_index(layout, r, c, rows, cols, c0)]
