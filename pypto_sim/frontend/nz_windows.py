"""NZ Vec tiles and A2/A3's ND -> 2 x NZ extract (isa/35_aicore.toml TEXTRACT_ND2NZ).

``pto.alloc_tile(rows, cols, dt, loc=pto.Vec, layout=pto.NZ)`` is pto-isa's NZ Vec tile
(Tile<Vec, T, Rows, Cols, BLayout::ColMajor, ..., SLayout::RowMajor, 512>): fractals of 16 rows
x 32 bytes, element (r, c) at word (c / c0) Rows c0 + r c0 + c % c0. As every tile here, it
holds its values row-major (docs/aicore.md); the NZ order shows where it meets GM: a TSTORE of
it moves NZ2NZ (layout=pto.NZ, TStore.hpp TStoreUb2gmNz2nz: one burst of validRow x 32 bytes a
column block), a TLOAD moves NZ2NZ too (tload_common.hpp TLoadGm2ubNz2nz: the same bursts
from GM). Built for what A2/A3's TEXTRACT kernels do with it: fill (pto.texpands of the whole
tile: a constant is the same in any order), be a destination of pto.textract_nd2xnz, be loaded
from and stored to GM, windows between two NZ tiles (pto.textract / pto.tinsert, TExtract.hpp /
TInsert.hpp's NZ Vec -> Vec paths, frontend/vec_windows.py: they copy exactly the window, so on
values held row-major they are the ND record), the NZ forms of pto.mgather / pto.mscatter
(layout=pto.NZ: MGather.hpp / MScatter.hpp walk the tile's logical (r, c) at its NZ offsets,
frontend/gm_index_builtins.py), and whole-tile views (pto.tsubview(t, 0, 0, R, C,
valid=...)); any other instruction reads or writes it as rows, which its words are not, and is
a compile error.

pto.textract_nd2xnz(dst0, dst1, src, row0, col0, row1, col1) is TEXTRACT_ND2XNZ_IMPL
(include/pto/npu/a2a3/TExtract.hpp lines 404-462 at 3186c381) with CheckTExtractNdToNz's
static_asserts as compile errors; its PTO_ASSERTs (each window inside src) are checked when the
kernel compiles for constant offsets and when the TEXTRACT runs for run-time ones (an
OutOfBoundsError before anything is written).
"""
from __future__ import annotations

from .. import dtypes
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import Const, Ptr

HEADER = "include/pto/npu/a2a3/TExtract.hpp"
WHAT = "TEXTRACT A2A3 ND->2xNZ"
# what may touch an NZ Vec tile (the module docstring)
NZ_OPS = ("TLOAD", "TSTORE", "TEXPANDS", "TEXTRACT_ND2NZ", "TEXTRACT_V2V", "TINSERT_V2V", "MGATHER", "MGATHER_ELEM",
          "MSCATTER", "MSCATTER_ELEM")


def nz_layout(comp, node, where, loc) -> str:
    """alloc_tile's layout=pto.NZ: "nz" for a Vec tile; a cube-side tile's fractal order is not
    modelled (its moves convert on the way), so it is refused there."""
    if loc != "Vec":
        comp.error(node, f"{where}: layout=pto.NZ is built for Vec tiles (A2/A3's TEXTRACT ND -> 2 x NZ "
                         f"destinations); a {loc} tile's fractal order is not modelled",
                   "allocate the tile RowMajor or ColMajor; tload / tstore convert to and from NZ GM")
    return "nz"


def check_nz_use(comp, t, node, spec, what):
    """An NZ Vec tile is an operand of NZ_OPS only; pto.texpands fills all of it."""
    if t.tile.layout != "nz" or spec.name in NZ_OPS:
        return
    comp.error(node, f"{what}: '{t.name}' is an NZ Vec tile, whose words are not its rows; {spec.name} walks rows "
                     f"(NZ Vec tiles are built for {', '.join(n.lower() for n in NZ_OPS)})",
               "extract into it with pto.textract_nd2xnz and store it with layout=pto.NZ")


def _window_start(comp, node, v, name):
    """row0 / col0 / row1 / col1: a constant int >= 0, or a run-time value (checked when it runs)."""
    if isinstance(v, Const):
        value = comp.int_constant(v, node, f"pto.textract_nd2xnz: {name}")
        if value < 0:
            comp.error(node, f"pto.textract_nd2xnz: {name} is {value}; a window starts inside src")
        return value
    return None


@LOWERINGS.lowering("textract_nd2xnz", checks=(aicore_only,))
def lower_textract_nd2xnz(comp, node, args):
    """Two TEXTRACT_ND2NZ records, window 0 then window 1 (DispatchNdToNz's order)."""
    spec = comp.isa["TEXTRACT_ND2NZ"]
    call = "pto.textract_nd2xnz"
    src = comp.typed_tile(args["src"], node, spec, "src", f"{call}: src")
    if src.tile.layout != "row" or src.tile.storage is not None:
        comp.error(node, f"{call}: '{src.name}' is not a RowMajor tile of its own dtype (\"{WHAT} : Source must be "
                         f"ND (RowMajor, NoneBox).\", {HEADER})")
    for k in (0, 1):
        dst = comp.typed_tile(args[f"dst{k}"], node, spec, "dst", f"{call}: dst{k}")
        if dst.tile.layout != "nz":
            comp.error(node, f"{call}: '{dst.name}' is not an NZ tile (\"{WHAT} : Destination must be NZ (ColMajor, "
                             f"RowMajor fractal).\", {HEADER})", "allocate it with layout=pto.NZ")
        if dst.dtype != src.dtype:
            comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} and '{src.name}' {src.dtype} (\"{WHAT} : Source "
                             f"and destination data types must match.\", {HEADER})")
        if dst.dtype.name not in spec.dtypes:
            comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} (\"{WHAT} : Unsupported data type.\": "
                             f"{', '.join(spec.dtypes)}, {HEADER})")
        _emit_window(comp, node, spec, call, dst, src, args[f"row{k}"], args[f"col{k}"], k)


def _emit_window(comp, node, spec, call, dst, src, row, col, k):
    vr, vc = dst.tile.valid_rows, dst.tile.valid_cols
    if not (isinstance(vr, Const) and isinstance(vc, Const)):
        comp.error(node, f"{call}: '{dst.name}' needs a static valid region (A2/A3 picks the copy by it)")
    vr, vc = int(vr.value), int(vc.value)
    for name, v, extent, size in (("row", row, vr, src.tile.rows), ("col", col, vc, src.tile.cols)):
        start = _window_start(comp, node, v, f"{name}{k}")
        if start is not None and start + extent > size:
            comp.error(node, f"{call}: window{k}'s {vr} x {vc} at {name} {start} reaches past '{src.name}' "
                             f"({src.tile.rows} x {src.tile.cols}) (\"{WHAT} : window{k} index{name.title()} + "
                             f"valid{name.title()} exceeds src{name.title()}s!\", {HEADER})")
    ops = (comp._base(dst, node, call), comp._base(src, node, call),
           comp._int_operand(Const(vr, dtypes.int32), node, "rows"),
           comp._int_operand(Const(vc, dtypes.int32), node, "cols"),
           comp._int_operand(row, node, f"{call}: row{k}"),
           comp._int_operand(col, node, f"{call}: col{k}"))
    comp.emit(spec.name, None, ops, dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} <- {src.name} (ND -> NZ, window {k})"


def is_nz(t) -> bool:
    """Whether t is an NZ Vec tile."""
    return isinstance(t, Ptr) and t.tile is not None and t.tile.layout == "nz"
