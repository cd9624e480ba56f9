"""The partial elementwise family's kernel (TPARTADD, TPARTMAX, TPARTMIN, TPARTMUL;
isa/47_partial.toml): A2/A3's TPartOp.hpp TPartInstr, the operator by its opcode through
tile_elementwise (the ALU dispatch generated from the ISA table), a row at a time; and the
partial arg-selections' (TPARTARGMAX, TPARTARGMIN; isa/51_partial_arg.toml), TPartArgOp.hpp's
TPartArgInstr, the compare by its opcode through alu_float. Imports tiles.py and alu.py; the
replay's generated family dispatch calls them (exec/family_source.py)."""
from numba import njit

from .alu import alu_float
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


@njit(cache=True, error_model="numpy")
def _copy_arg(l1, dst, src, first, last, cols, dpitch, spitch):
    """TPartArgCopyInstr: rows first..last - 1 of src into dst; whole rows (padding columns
    included) between tiles of one pitch, else each row's cols valid columns."""
    if dpitch == spitch:
        l1[dst + first * dpitch:dst + last * dpitch] = l1[src + first * spitch:src + last * spitch].copy()
    else:
        for r in range(first, last):
            l1[dst + r * dpitch:dst + r * dpitch + cols] = l1[src + r * spitch:src + r * spitch + cols].copy()


@njit(cache=True, error_model="numpy")
def _select_arg(op, l1, dst, dsti, s0, i0, s1, i1, rows, cols, dp, dip, p0, ip0, p1, ip1, dt):
    """TPartArgOps over rows x cols: src0's value and index where the compare (a src0, b src1)
    holds, src1's elsewhere; each element's four words read before its two are written."""
    for r in range(rows):
        for c in range(cols):
            a, b = l1[s0 + r * p0 + c], l1[s1 + r * p1 + c]
            x, y = l1[i0 + r * ip0 + c], l1[i1 + r * ip1 + c]
            first = alu_float(op, a, b, 0.0, dt) != 0.0
            l1[dst + r * dp + c] = a if first else b
            l1[dsti + r * dip + c] = x if first else y


@njit(cache=True, error_model="numpy")
def tile_part_arg(op, l1, dst, dsti, s0, i0, s1, i1, rows0, cols0, rows1, cols1, dp, dip, p0, ip0, p1, ip1,
                  dt):
    """TPARTARGMAX / TPARTARGMIN as TPartArgInstr sequences them (TPartArgOp.hpp lines 102-149):
    one valid region, the compares over it; one column count, the compares over the shorter
    source's rows, then the longer one's remaining rows copied (values, then indices); else the
    wider source's valid region copied, then the compares over the smaller of each."""
    rows, cols = min(rows0, rows1), min(cols0, cols1)
    if cols0 == cols1 and rows0 != rows1:
        _select_arg(op, l1, dst, dsti, s0, i0, s1, i1, rows, cols, dp, dip, p0, ip0, p1, ip1, dt)
        if rows0 < rows1:
            _copy_arg(l1, dst, s1, rows0, rows1, cols1, dp, p1)
            _copy_arg(l1, dsti, i1, rows0, rows1, cols1, dip, ip1)
        else:
            _copy_arg(l1, dst, s0, rows1, rows0, cols0, dp, p0)
            _copy_arg(l1, dsti, i0, rows1, rows0, cols0, dip, ip0)
        return
    if cols0 < cols1:
        _copy_arg(l1, dst, s1, 0, rows1, cols1, dp, p1)
        _copy_arg(l1, dsti, i1, 0, rows1, cols1, dip, ip1)
    elif cols1 < cols0:
        _copy_arg(l1, dst, s0, 0, rows0, cols0, dp, p0)
        _copy_arg(l1, dsti, i0, 0, rows0, cols0, dip, ip0)
    _select_arg(op, l1, dst, dsti, s0, i0, s1, i1, rows, cols, dp, dip, p0, ip0, p1, ip1, dt)
