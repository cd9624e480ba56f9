"""The partial elementwise family's kernel (TPARTADD, TPARTMAX, TPARTMIN, TPARTMUL;
isa/47_partial.toml): A2/A3's TPartOp.hpp TPartInstr, the operator by its opcode through
tile_elementwise (the ALU dispatch generated from the ISA table), a row at a time. Imports
tiles.py; the replay's generated family dispatch calls it (exec/family_source.py)."""
from numba import njit

from .tiles import tile_elementwise


@njit(cache=True, error_model="numpy")
def _copy_rows(l1, dst, src, first, last, pitch):
    """Rows first..last - 1 of src into dst, whole rows of pitch words (TPartCopyInstr's one
    copy_ubuf_to_ubuf when the tiles are as wide, padding columns included), as they are."""
    l1[dst + first * pitch:dst + last * pitch] = l1[src + first * pitch:src + last * pitch].copy()


@njit(cache=True, error_model="numpy")
def tile_part(op, l1, dst, full, part, rows, cols, prows, pcols, pitch, dt):
    """dst's valid rows x cols from full (the source whose valid region is dst's) and part
    (prows x pcols within it), as TPartInstr orders it, copies of whole rows (padding columns
    included): part shorter in rows, the operator on its rows (a full, b part), then full's
    remaining rows copied; narrower in columns, full copied, then the operator on part's
    region (a part, b dst); neither, the operator everywhere (a full, b part)."""
    if prows < rows and pcols == cols:
        for r in range(prows):
            tile_elementwise(op, l1, dst + r * pitch, full + r * pitch, part + r * pitch, 0.0, False, cols, dt)
        _copy_rows(l1, dst, full, prows, rows, pitch)
    elif pcols < cols:
        _copy_rows(l1, dst, full, 0, rows, pitch)
        for r in range(prows):
            tile_elementwise(op, l1, dst + r * pitch, part + r * pitch, dst + r * pitch, 0.0, False, pcols, dt)
    else:
        for r in range(rows):
            tile_elementwise(op, l1, dst + r * pitch, full + r * pitch, part + r * pitch, 0.0, False, cols, dt)
