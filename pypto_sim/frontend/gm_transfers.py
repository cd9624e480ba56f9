"""The AI core's transfers between typed tiles and GM: tload and tstore (isa/30_tiles.toml
TLOAD, TSTORE; isa/35_aicore.toml TSTORE_ACC), the GM layout and stride of each (isa/gm_layouts.py),
the layouts A2/A3 moves a Vec tile in and the fixpipe writes an Acc tile as, and a store's mode
(isa/store_modes.py: atomic add, the fixpipe's relu and scalar pre-stage quantization)."""
from __future__ import annotations

from .. import dtypes
from ..isa import gm_layouts, store_modes
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import NONE, Const, Ptr, Text


def gm_layout_and_stride(comp, node, call, t, args, itemsize):
    """(layout code, stride operand) of a tload / tstore of typed tile t: layout= names a GM
    layout (isa/gm_layouts.py); stride= defaults to that of a dense tensor of exactly the
    valid region, which needs the region known at compile time unless the layout is ND."""
    given = args["layout"]
    if not (isinstance(given, Text) and given.value in gm_layouts.LAYOUTS):
        comp.error(node, f"pto.{call}: layout must be one of "
                         f"{', '.join('pto.' + n for n in gm_layouts.LAYOUTS)} (pto-isa GlobalTensor Layout)")
    layout = gm_layouts.LAYOUTS.index(given.value)
    rows, cols = comp._extent(t)
    c0 = gm_layouts.c0_of(itemsize)
    known = isinstance(rows, Const) and isinstance(cols, Const)
    stride = args["stride"]
    if known:
        r, c = int(rows.value), int(cols.value)
        whole = isinstance(stride, Const) and float(stride.value).is_integer()
        s = int(stride.value) if whole else gm_layouts.ANY_STRIDE   # a float: the operand's own error
        problem = gm_layouts.window_problem(layout, r, c, s, c0)
        if problem:
            comp.error(node, f"pto.{call}: tile '{t.name}', {itemsize}-byte elements: {problem}",
                       "keep NZ / FRACTAL_Z regions whole C0 blocks and the stride at least a run "
                       "(isa/gm_layouts.py)")
    if stride is NONE:
        if layout == gm_layouts.ND:
            stride = cols
        elif not known:
            comp.error(node, f"pto.{call}: a {given.value} transfer of a run-time valid region needs stride=",
                       "pass stride=, the elements between the layout's runs (isa/gm_layouts.py)")
        else:
            stride = Const(gm_layouts.default_stride(layout, int(rows.value), int(cols.value), c0), dtypes.int32)
    return Const(layout, dtypes.int32), stride


def layout_note(layout) -> str:
    """' (DN)' after a transfer's comment when its GM layout is not ND (listings, traces)."""
    code = int(layout.value)
    return "" if code == gm_layouts.ND else f" ({gm_layouts.LAYOUTS[code]})"


def check_vec_transfer_layout(comp, node, call, t, layout):
    """A Vec tile moves to and from GM in its own layout: ND with a RowMajor tile, DN with a
    ColMajor one, NZ with an NZ one (frontend/nz_windows.py); a store may also write a one-row
    or one-column tile in either (A2/A3's static_asserts: "Fix: TLOAD(VecTile, GlobalTensor) only support
    ND2ND/DN2DN/NZ2NZ!", include/pto/common/arch/memory/tload_common.hpp; "Src and dst layout
    must be same, only support ND/DN/NZ or the special case of one row/one column!",
    tstore_common.hpp). Other spaces convert on the way (ND -> NZ into Mat)."""
    if t.tile.loc != "Vec":
        return
    code = int(layout.value)
    own = {"row": gm_layouts.ND, "col": gm_layouts.DN, "nz": gm_layouts.NZ}[t.tile.layout]
    if code == own or (call == "tstore" and t.tile.layout != "nz" and 1 in (t.tile.rows, t.tile.cols)):
        return
    tile_layout = {"row": "RowMajor", "col": "ColMajor", "nz": "NZ"}[t.tile.layout]
    rule = ("\"Fix: TLOAD(VecTile, GlobalTensor) only support ND2ND/DN2DN/NZ2NZ!\", "
            "include/pto/common/arch/memory/tload_common.hpp" if call == "tload" else
            "\"Src and dst layout must be same, only support ND/DN/NZ or the special case of one row/one "
            "column!\", include/pto/common/arch/memory/tstore_common.hpp")
    comp.error(node, f"pto.{call}: '{t.name}' is a {tile_layout} Vec tile and the GM layout is "
                     f"{gm_layouts.LAYOUTS[code]}; A2/A3 moves a Vec tile in its own layout only ({rule})",
               f"pass layout=pto.{gm_layouts.LAYOUTS[own]}, or allocate the tile with layout="
               f"{ {gm_layouts.ND: 'pto.RowMajor', gm_layouts.DN: 'pto.ColMajor'}.get(code, 'pto.NZ')}")


def check_acc_store_layout(comp, node, layout, dtype, acc):
    """The fixpipe writes GM as ND or NZ only (pto-isa TStore.hpp: TStoreAccNz2nd, Nz2nz,
    Nz2NC1HWC0). This NZ's blocks are 32 bytes (isa/gm_layouts.py): float32 ones of 8 elements
    are the fixpipe's channel split (TStoreAccNz2nz: channelSplitEn when a float32 Acc goes to
    a float32 NZ of last dimension 8), and int32 NZ, which the fixpipe writes in 16-element
    blocks only (its static_assert), is a compile error, not a silent other layout."""
    name = layout.value if isinstance(layout, Text) else None
    if name in ("DN", "FRACTAL_Z"):
        comp.error(node, f"tstore: the fixpipe writes an Acc tile to GM as ND or NZ, not {name} "
                         "(pto-isa TStore.hpp)", "store ND or NZ, or move the tile to UB and store it from there")
    if name == "NZ" and dtype == dtypes.int32:
        comp.error(node, "tstore: an Acc tile stored as int32 NZ is written in 16-element (64-byte) blocks "
                         "(pto-isa TStore.hpp TStoreAccNz2nz: \"if DstType is int32_t, the last dimension must "
                         "be exactly 16\"), which is not built: pypto_sim's NZ blocks are 32 bytes",
                   "store ND, or float32 NZ (8-element blocks: the fixpipe's channel split)")
    vc = acc.tile.valid_cols
    if name == "NZ" and isinstance(vc, Const) and int(vc.value) % 16:
        comp.error(node, f"tstore: the fixpipe stores NZ in columns of 16: '{acc.name}' has {int(vc.value)} valid "
                         "columns (TStoreAccNz2nz: \"validCol must be an integer multiple of 16\")",
                   "store ND, or give the Acc tile a multiple of 16 valid columns")


@LOWERINGS.lowering("tload", checks=(aicore_only,))
def lower_tload(comp, node, args):
    spec = comp.isa["TLOAD"]
    t = comp.typed_tile(args["tile"], node, spec, "dst", "tload: tile")
    src = comp.require_ptr(args["ptr"], node, "tload: ptr")
    if src.space != "hbm":
        comp.error(node, "tload: ptr must point into a device tensor (GM)")
    if src.dtype != t.dtype:
        comp.error(node, f"tload: tile '{t.name}' holds {t.dtype} but '{src.name}' holds {src.dtype}; "
                         "TLOAD does not convert", "allocate the tile with the tensor's dtype")
    rows, cols = comp._extent(t)
    layout, stride = gm_layout_and_stride(comp, node, "tload", t, args, src.dtype.itemsize)
    check_vec_transfer_layout(comp, node, "tload", t, layout)
    ops = (comp._base(t, node, "tload", quant_words=True), comp.uniform_int(src.offset, node, "tload: the GM offset"),
           comp._int_operand(rows, node, "rows"), comp._int_operand(cols, node, "cols"),
           comp._int_operand(stride, node, "tload: stride"), comp._int_operand(layout, node, "layout"))
    comp.emit("TLOAD", None, ops, t.dtype, node, aux=comp.tile_aux(src.slot))
    comp.instrs[-1].comment = f"{t.name} <- {src.name}" + layout_note(layout)


@LOWERINGS.lowering("tstore", checks=(aicore_only,))
def lower_tstore(comp, node, args):
    t = args["tile"]
    if not (isinstance(t, Ptr) and t.tile is not None):
        comp.error(node, "tstore: tile must be a tile from pto.alloc_tile(...)")
    acc = t.tile.loc == "Acc"
    fp = args.get("quant", NONE)
    fp = fp if isinstance(fp, Ptr) and fp.tile is not None else None     # quant=tile: TSTORE_FP
    spec = comp.isa["TSTORE_FP" if fp is not None and acc else "TSTORE_ACC" if acc else "TSTORE"]
    comp.typed_tile(t, node, spec, "src", "tstore: tile")
    dst = comp.require_ptr(args["ptr"], node, "tstore: ptr")
    if dst.space != "hbm":
        comp.error(node, "tstore: ptr must point into a device tensor (GM)")
    qmode, scale = store_quant(comp, node, args, t, dst, fp)
    if acc:
        ok = dst.dtype == t.dtype or (t.dtype == dtypes.float32 and dst.dtype in (dtypes.float16, dtypes.bfloat16))
        if not ok and not qmode:
            quantized = ", ".join(d for (a, d) in store_modes.QUANT_MODES if a == t.dtype.name)
            comp.error(node, f"tstore: the fixpipe converts {t.dtype} to {t.dtype}"
                             f"{', float16 or bfloat16' if t.dtype == dtypes.float32 else ''}, not to "
                             f"{dst.dtype} ('{dst.name}')",
                       f"a quantizing store (quant=scale) writes {t.dtype} as {quantized}" if quantized else None)
        check_acc_store_layout(comp, node, args["layout"], dst.dtype, t)
    elif dst.dtype != t.dtype:
        comp.error(node, f"tstore: tile '{t.name}' holds {t.dtype} but '{dst.name}' holds {dst.dtype}; "
                         "MTE3 does not convert", "convert in UB first, or store from Acc (FIX converts)")
    rows, cols = comp._extent(t)
    layout, stride = gm_layout_and_stride(comp, node, "tstore", t, args, dst.dtype.itemsize)
    check_vec_transfer_layout(comp, node, "tstore", t, layout)
    mode = store_mode(comp, node, args, t, dst) | qmode
    ops = (comp.uniform_int(dst.offset, node, "tstore: the GM offset"), comp._base(t, node, "tstore"),
           comp._int_operand(rows, node, "rows"), comp._int_operand(cols, node, "cols"),
           comp._int_operand(stride, node, "tstore: stride"), comp._int_operand(layout, node, "layout"),
           comp._int_operand(Const(mode, dtypes.int32), node, "mode"))
    if fp is not None:          # TSTORE_FP's Scaling tile
        ops += (comp._base(scale, node, "tstore", quant_words=True),)
    elif acc:                   # TSTORE_ACC's scale: the quant scalar's float32, 0.0 without one
        ops += (comp.operand(scale if qmode else Const(0.0, dtypes.float32), dtypes.float32, node),)
    comp.emit(spec.name, None, ops, dst.dtype, node, aux=comp.tile_aux(dst.slot))
    quant = store_modes.QUANT_MODES[(t.dtype.name, dst.dtype.name)][1] if qmode else ""
    quant = f"quant({store_modes.VECTOR_MODE_NAMES[quant]} by {scale.name}) " if fp is not None else \
        f"quant({quant}) " if qmode else ""
    comp.instrs[-1].comment = (f"{dst.name} {'+' if mode & store_modes.ATOMIC_ADD else ''}<- "
                               f"{'relu ' if mode & store_modes.RELU else ''}{quant}{t.name}" + layout_note(layout))


def store_quant(comp, node, args, t, dst, fp=None):
    """(mode bits, scale value) of tstore's quant= (isa/store_modes.py QUANT), (0, None) without:
    the fixpipe's scalar pre-stage quantization, TSTORE(dst, src, preQuantScalar), takes an Acc
    source only (TSTORE_IMPL's static_assert "Source TileType only support Acc!", A2/A3
    TStore.hpp) and the (Acc, GM) dtype pairs CheckAcc2gm<isQuant = true> allows. The scale is a
    number, a constant or a uniform run-time scalar (the kernels pass it as a launch argument),
    used as float32; the sign bit the kernels set (bit 46: 1 for int8) follows GM's dtype.
    fp: quant= a Scaling tile, the vector form (TSTORE_FP; QUANT_VECTOR with the mode bit of the
    pair, the scale value the tile): the same Acc and dtype rules, and a word a column of the Acc
    tile."""
    quant = args.get("quant", NONE)
    if quant is NONE or (isinstance(quant, Const) and quant.value is None):
        return 0, None
    if t.tile.loc != "Acc":
        comp.error(node, f"tstore: quant= is the fixpipe's scalar pre-stage quantization, for a store from Acc; "
                         f"'{t.name}' is in {t.tile.loc} (A2/A3 TStore.hpp TSTORE_IMPL(dst, src, preQuantScalar): "
                         "static_assert \"Source TileType only support Acc!\")",
                   "quantize in UB first (pto.tquant, pto.tcvt), or store from an Acc tile")
    pair = (t.dtype.name, dst.dtype.name)
    if pair not in store_modes.QUANT_MODES:
        rule = {"float32": "\"The output data type must be restricted to int8_t/uint8_t when the source data type "
                           "is float.\"",
                "int32": "\"The output data type must be restricted to half/int8_t/uint8_t when the source data "
                         "type is int32_t.\""}.get(t.dtype.name, "\"The input data type must be restricted to "
                                                               "int32_t/float!\"")
        comp.error(node, f"tstore: quant= from a {t.dtype} Acc into '{dst.name}' of {dst.dtype}; A2/A3 quantizes "
                         "float32 to int8 / uint8 (QF322B8_PRE) and int32 to float16 (DEQF16), int8 / uint8 (REQ8) "
                         f"(TStore.hpp CheckAcc2gm<isQuant = true>: {rule})",
                   "store into a tensor of one of those dtypes, or drop quant= (a float32 Acc converts to "
                   "float16 / bfloat16 without it)")
    if fp is not None:
        return store_quant_vector(comp, node, t, dst, fp)
    comp.require_value(quant, node)
    if getattr(quant, "dtype", None) == dtypes.bool_ or isinstance(quant, Const) and isinstance(quant.value, bool):
        comp.error(node, "tstore: quant must be a number (the scale), not a bool",
                   "a bool argument or comparison too: pass the float scale")
    if getattr(quant, "uniform", True) is False:
        comp.error(node, "tstore: quant must be the same in every lane (a uniform value)",
                   "pass a constant or a kernel argument")
    return store_modes.QUANT_MODES[pair][0], quant


def store_quant_vector(comp, node, t, dst, fp):
    """(QUANT_VECTOR | the pair's bit, the Scaling tile fp) of TSTORE_FP, after the checks the
    pair's: fp is a Scaling tile (TStoreAccFp reads it at its __fbuf__ address; SET_QUANT_VECTOR's
    static_assert "Fix: SET_QUANT_VECTOR only supports Scaling input tile type.") with a word
    for every valid column of the Acc tile (the fixpipe reads column c's word at the tile's
    address + c, nSize = validCol of them; every column when the valid region is a run-time value)."""
    comp.typed_tile(fp, node, comp.isa["TSTORE_FP"], "fp", "tstore: quant")
    # TStoreAccNz2nd & co. read nSize = validCol words: a constant valid region is what counts
    cols = int(t.tile.valid_cols.value) if isinstance(t.tile.valid_cols, Const) else t.tile.cols
    if fp.tile.cols < cols:
        comp.error(node, f"tstore: quant tile '{fp.name}' holds {fp.tile.cols} quant words but the Acc tile "
                         f"'{t.name}' has {cols} {'valid ' if cols != t.tile.cols else ''}columns; the fixpipe "
                         "reads one word a column", "allocate the Scaling tile with at least the Acc tile's cols")
    return store_modes.QUANT_MODES[(t.dtype.name, dst.dtype.name)][0] | store_modes.QUANT_VECTOR, fp


def store_mode(comp, node, args, t, dst) -> int:
    """tstore's mode operand (isa/store_modes.py) from atomic= and relu=, after A2/A3's checks:
    atomic is None or 'add' (AtomicType), into a GM dtype SetAtomicAdd takes; relu (ReluPreMode)
    is the fixpipe's, so only a store from Acc takes it (TSTORE_IMPL's static_assert "Source
    TileType only support Acc!")."""
    atomic, relu = args.get("atomic", NONE), args.get("relu", NONE)
    mode = 0
    if atomic is not NONE and not (isinstance(atomic, Const) and atomic.value is None):
        if not (isinstance(atomic, Text) and atomic.value == "add"):
            comp.error(node, "tstore: atomic must be None or 'add' (pto-isa's AtomicType::AtomicNone, AtomicAdd)")
        if dst.dtype.name not in store_modes.ATOMIC_DTYPES:
            comp.error(node, f"tstore: atomic='add' into '{dst.name}' of {dst.dtype}; A2/A3 adds "
                             f"{', '.join(store_modes.ATOMIC_DTYPES)} (SetAtomicAdd, "
                             "include/pto/common/arch/memory/tstore_common.hpp)")
        mode |= store_modes.ATOMIC_ADD
    if relu is not NONE:
        if not (isinstance(relu, Const) and isinstance(relu.value, bool)):
            comp.error(node, "tstore: relu must be True or False, known when the kernel compiles")
        if relu.value:
            if t.tile.loc != "Acc":
                comp.error(node, f"tstore: relu=True is the fixpipe's (ReluPreMode), for a store from Acc; "
                                 f"'{t.name}' is in {t.tile.loc}", "apply pto.trelu in UB before the store")
            mode |= store_modes.RELU
    return mode


def slice_offset(comp, node, offset, stride, known, r0, c0):
    """The element offset of the chunk at (r0, c0) of a GM slice at offset whose rows are stride
    elements apart (known: the stride's value when a constant, else None): offset + r0 * stride
    + c0 (a header's basePtr + r * st3 + c * st4, st4 = 1), the scalar's arithmetic when the
    stride is a run-time value."""
    if (r0, c0) == (0, 0):
        return offset
    i32 = dtypes.int32
    if known is not None:
        delta = Const(r0 * known + c0, i32)
    elif r0:
        delta = comp.alu("ADD", [comp.alu("MUL", [stride, Const(r0, i32)], node, dtype=i32), Const(c0, i32)],
                         node, dtype=i32)
    else:
        delta = Const(c0, i32)
    return comp.alu("ADD", [offset, delta], node, dtype=i32)
