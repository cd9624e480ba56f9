"""pto.tprefetch(dst, src, rows=None, cols=None, stride=None): pto-isa's TPREFETCH as A2/A3
builds it (isa/57_prefetch.toml; include/pto/npu/a2a3/TPrefetch.hpp TPREFETCH_IMPL at pto-isa
3186c381), lowered to the DMAs the header issues, one TPREFETCH record each, in its order.

The GM slice is rows x cols elements at src, rows ``stride`` elements apart (the header's s3,
s4 and st3; st4 = 1: ND). When its bytes fit the tile (Rows x Cols of dst's dtype) one DMA
copies it whole (TPrefetchCopySlice's isFits); otherwise one DMA per chunk of at most Rows rows
x Cols columns (maxColsPerChunk = the tile's row bytes / sizeof), row chunks outer, each to
dst's first word. A DMA of n-element rows lands them ceil(n * sizeof / 32) * 32 bytes apart in
UB (copy_gm_to_ubuf_align with ub gap 0 fills whole 32-byte blocks a burst), so each record
writes a view of dst's first words at that pitch: what it writes is that window (values,
check="race", sync="auto"), priced and seen by the L2 as a TLOAD of its bytes (family
tile_load). A slice that fits the tile's bytes but whose DMA, at that pitch, would write past
the tile's end (narrow rows) is a CompileError: the device would overwrite the UB after dst.

Not built: the header's outer dimensions (a 5-D GlobalTensor's n0, n1, n2: one call a
slice, which is what its loops issue), a run-time slice shape (the DMA count is the compiler's
decision here: a kernel argument as rows or cols specialises the kernel on its value, as an
alloc_tile shape's does, frontend/kernel.py SIZING_CALLS), a GM dtype other than dst's, and
non-RowMajor tiles. A constant stride is checked against each DMA's columns, as the header's gm
gap (st3 - colChunk) * sizeof is: a stride shorter than the slice's rows but not than any
multi-row DMA's (overlapping GM rows, chunked) is the header's and is built.
"""
from __future__ import annotations

from .. import dtypes
from ..isa import gm_layouts
from ..ir.program import LocalBuffer
from .builtin_checks import aicore_only
from .gm_transfers import slice_offset
from .registry import LOWERINGS
from .values import NONE, Const, Ptr, TileInfo

HEADER = "include/pto/npu/a2a3/TPrefetch.hpp"
UB_BLOCK = 32                      # bytes: copy_gm_to_ubuf_align's UB block


def prefetch_dmas(rows, cols, tile_rows, tile_cols):
    """[(row, col, nrows, ncols)] of the DMAs TPREFETCH_IMPL issues for a rows x cols slice into
    a tile_rows x tile_cols tile of the same dtype, in its order (TPrefetchCopySlice)."""
    if rows * cols <= tile_rows * tile_cols:                  # sliceBytes <= tileBytes
        return [(0, 0, rows, cols)]
    return [(r, c, min(rows - r, tile_rows), min(cols - c, tile_cols))
            for r in range(0, rows, tile_rows) for c in range(0, cols, tile_cols)]


def ub_pitch(ncols, itemsize) -> int:
    """Elements from one burst's start to the next in UB: ncols elements rounded up to whole
    32-byte blocks (ub gap 0)."""
    return -(-ncols * itemsize // UB_BLOCK) * UB_BLOCK // itemsize


@LOWERINGS.lowering("tprefetch", checks=(aicore_only,))
def lower_tprefetch(comp, node, args):
    spec = comp.isa["TPREFETCH"]
    call = "pto.tprefetch"
    t = comp.typed_tile(args["dst"], node, spec, "dst", f"{call}: dst")
    src = comp.require_ptr(args["src"], node, f"{call}: src")
    if src.space != "hbm":
        comp.error(node, f"{call}: src must point into a device tensor (GM)")
    info = t.tile
    if src.dtype != t.dtype:
        comp.error(node, f"{call}: tile '{t.name}' holds {t.dtype} but '{src.name}' holds {src.dtype}; a "
                         "prefetch into a tile of another dtype is not built",
                   "allocate the tile with the tensor's dtype")
    if info.layout != "row" or info.storage is not None or not info.contiguous:
        comp.error(node, f"{call}: '{t.name}' is not a RowMajor tile of its own dtype with contiguous rows; "
                         "the prefetch is built into those", "prefetch into a RowMajor Vec tile")
    rows, cols = (_extent(comp, node, t, args[k], default, k)
                  for k, default in (("rows", info.valid_rows), ("cols", info.valid_cols)))
    stride = args["stride"] if args["stride"] is not NONE else Const(cols, dtypes.int32)
    known = comp.int_constant(stride, node, f"{call}: stride")
    item = t.dtype.itemsize
    dmas = prefetch_dmas(rows, cols, info.rows, info.cols)
    # the header's gm gap is (st3 - colChunk) * sizeof a DMA (TPrefetchDoCopy), negative only for
    # a DMA of more than one row wider than the stride
    short = [nc for _r0, _c0, nr, nc in dmas if nr > 1 and known is not None and known < nc]
    if short:
        comp.error(node, f"{call}: stride {known} is shorter than a row of {short[0]} elements of the "
                         f"{rows} x {cols} slice's DMAs (the header's gm gap (st3 - colChunk) * sizeof "
                         "would be negative)", f"pass stride >= {max(short)}")
    for k, (r0, c0, nr, nc) in enumerate(dmas):
        pitch = ub_pitch(nc, item)
        if (nr - 1) * pitch + nc > info.rows * info.cols:
            comp.error(node, f"{call}: the {rows} x {cols} slice ({rows * cols * item} bytes) fits '{t.name}' "
                             f"({info.rows} x {info.cols}, {info.rows * info.cols * item} bytes), so {HEADER} "
                             f"copies it in one DMA, whose {nr} rows of {nc * item} bytes land {pitch * item} "
                             "bytes apart in UB (copy_gm_to_ubuf_align fills whole 32-byte blocks a burst): "
                             "the DMA would write past the tile's end",
                       f"give the tile at least {(nr - 1) * pitch + nc} elements, or prefetch rows of a "
                       "multiple of 32 bytes")
        view = _dma_view(comp, node, t, nr, nc, pitch, k)
        off = slice_offset(comp, node, src.offset, stride, known, r0, c0)
        ops = (comp._base(view, node, call), comp.uniform_int(off, node, f"{call}: the GM offset"),
               comp._int_operand(Const(nr, dtypes.int32), node, "rows"),
               comp._int_operand(Const(nc, dtypes.int32), node, "cols"),
               comp._int_operand(stride, node, f"{call}: stride"),
               comp._int_operand(Const(gm_layouts.ND, dtypes.int32), node, "layout"))
        comp.emit("TPREFETCH", None, ops, t.dtype, node, aux=comp.tile_aux(src.slot))
        part = f" (DMA {k + 1} of {len(dmas)}: rows {r0}.., cols {c0}..)" if len(dmas) > 1 else ""
        comp.instrs[-1].comment = f"{t.name} <- {src.name}{part}"


def _extent(comp, node, t, given, default, what):
    """rows or cols of the slice: the argument (a compile-time int, a size-deciding kernel
    argument among them) or, when not given, dst's valid extent, which must then be known at
    compile time too."""
    call = "pto.tprefetch"
    if given is not NONE:
        return comp._static_int(given, node, f"{call}: {what}")
    if comp.int_constant(default, node, f"{call}: {what}") is None:
        comp.error(node, f"{call}: {what} not given, and the valid {what} of '{t.name}' (the default) is a value "
                         "computed while the kernel runs; the slice's shape decides the DMAs TPrefetch.hpp "
                         "issues, so it is needed when the kernel compiles",
                   f"pass {what}= (a literal, a module constant or a kernel argument: the kernel is then "
                   "specialised on its value)")
    return comp._static_int(default, node, f"{call}: {what}")


def _dma_view(comp, node, t, nr, nc, pitch, k):
    """A view of dst's first words as the nr x nc elements one DMA writes, rows `pitch` apart:
    a buffer aliasing dst (as pto.tsubview binds one) without a TSUBVIEW record, since the
    header binds no tile (TPrefetchDoCopy writes at dst.data())."""
    at = comp.buffers[t.slot].offset
    line = getattr(node, "lineno", 0) + comp.kernel.line_offset
    pitch = 0 if (pitch == nc or nr == 1) else pitch
    name = f"{t.name}_prefetch{k}"
    slot = comp.shared_buffer(node, lambda: comp.buffers.append(LocalBuffer(
        name, at, nr * nc, t.dtype, line, 1, t.tile.loc, nr, nc, alias_of=t.slot, pitch=pitch)))
    view = TileInfo(t.tile.loc, nr, nc, "row", Const(nr, dtypes.int32, weak=False),
                    Const(nc, dtypes.int32, weak=False), pitch=pitch)
    return Ptr("l1", slot, t.dtype, comp.buffers[slot].name, Const(0, dtypes.int32), nr * nc, at, tile=view)
