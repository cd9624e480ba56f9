"""pto.mgather(dst, table, indices, size, ...) and pto.mscatter(table, src, indices, size, ...):
the indexed GM transfers (isa/54_gm_index.toml, families tile_gm_gather / tile_gm_scatter) with
A2/A3's checks (include/pto/npu/a2a3/MGather.hpp MGatherCheck, MScatter.hpp MScatterCheck) as
compile errors at the kernel's line. coalesce='row' emits MGATHER / MSCATTER, 'elem'
MGATHER_ELEM / MSCATTER_ELEM; size is the GM table's rows (row) or elements (elem), the shape
pto-isa's GlobalTensor carries; stride the elements between the table's rows (row only, by
default the valid columns: a dense table). layout=pto.NZ is the NZ form (a Layout::NZ table with
an NZ Vec tile, _nz_table): size is then the table's logical (rows, cols) and stride= the elements
between its column blocks. Into a Mat tile, the GM -> L1 forms MGATHER_L1 / MGATHER_L1_ELEM
(lower_mgather_l1: the indices a GM tensor, scratch= for the element form) after
MGatherCheckGm2L1. Registered in registry.py's LOWERINGS; codegen.py imports it."""
from __future__ import annotations

from .. import dtypes
from ..isa import gm_index_modes as modes
from ..isa.table import PTO_PIPE_NAMES
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import NONE, Const, ConstTuple, Ptr, Text

_GATHER_H = "include/pto/npu/a2a3/MGather.hpp"
# the vector core's pipes the headers' loops synchronise with (PtoSetWaitFlag, EVENT_ID0)
_UNIT_PIPES = ("PIPE_V", "PIPE_MTE2", "PIPE_MTE3")
_SCATTER_H = "include/pto/npu/a2a3/MScatter.hpp"


def _choice(comp, node, call, args, name, choices):
    """The text argument `name`, one of choices, known when the kernel compiles."""
    v = args[name]
    if not (isinstance(v, Text) and v.value in choices):
        comp.error(node, f"{call}: {name} must be one of {', '.join(repr(c) for c in choices)}")
    return v.value


def _header_flags(comp, node, spec, before):
    """The flag pairs the header's loop sets and waits on EVENT_ID0 before (after) it: its scalar
    waits for the other pipes to drain before the loop (PtoSetWaitFlag<PIPE_V, PIPE_S>, ...) and
    they wait for it after (PtoSetWaitFlag<PIPE_MTE2, PIPE_V>, <PIPE_S, PIPE_MTE3>, ...). The loop
    runs here on the record's pipe (MTE2 or MTE3 for the DMAs of a row form, V for an element
    form's scalar loop), so PIPE_S reads as that pipe: each other vector-core pipe -> it before,
    it -> each other pipe after, as set_flag / wait_flag pairs (a tile group owning event 0 on
    one of those pipe pairs is a compile error, as the header's flags would disturb it)."""
    own = PTO_PIPE_NAMES[spec.pipe]
    for other in _UNIT_PIPES:
        if other == own:
            continue
        src, dst = (other, own) if before else (own, other)
        for op in ("SET_FLAG", "WAIT_FLAG"):
            comp._flag(op, node, {"src_pipe": Text(src), "dst_pipe": Text(dst), "event": Const(0, dtypes.int32)})


def _const(v):
    return int(v.value) if isinstance(v, Const) else None


_TILE_NAMES = {"row": "RowMajor", "col": "ColMajor", "nz": "NZ"}


def _table_layout(comp, node, call, data, idx, args, header) -> bool:
    """Whether the table is NZ (layout=pto.NZ), after the header's layout rules: the index tile
    RowMajor ND, and GM Layout::ND with a RowMajor tile or Layout::NZ with an NZ tile."""
    given = args["layout"]
    if not (isinstance(given, Text) and given.value in ("ND", "NZ")):
        comp.error(node, f"{call}: layout must be pto.ND or pto.NZ (\"table must use Layout::ND or Layout::NZ\", "
                         f"{header})")
    if idx.tile.layout != "row":
        comp.error(node, f"{call}: the indices '{idx.name}' are a {_TILE_NAMES[idx.tile.layout]} tile (\"index tile "
                         f"must be BLayout::RowMajor\", \"must be ND (SLayout::NoneBox)\", {header})",
                   "allocate the index tile RowMajor (the default layout)")
    own = {"row": "ND", "nz": "NZ"}.get(data.tile.layout)
    if own != given.value:
        comp.error(node, f"{call}: '{data.name}' is a {_TILE_NAMES[data.tile.layout]} Vec tile and the table's layout "
                         f"is {given.value}; A2/A3 pairs GM Layout::ND with a RowMajor tile and Layout::NZ with an NZ "
                         f"tile (BLayout::ColMajor + SLayout::RowMajor, 512-byte fractals: \"layout pairing must be "
                         f"either ...\", {header})",
                   "pass layout=pto.NZ with an NZ tile (alloc_tile(..., layout=pto.NZ)), or a RowMajor tile with "
                   "an ND table")
    return given.value == "NZ"


def _nz_table(comp, node, call, data, args, header, row_form):
    """(trows, tcols, tpitch operand) of an NZ table: size is its logical (rows, cols), as
    pto-isa's NZ GlobalTensor carries them (gShape2 x 16 rows, gShape0 x gShape1 x C0 columns:
    staticShape[3] == 16 and staticShape[4] == C0, so whole fractals); stride= the elements
    between its column blocks (gStride1), by default rows x c0 (a dense table). The row form
    moves the table's whole width into the tile's column blocks (MGatherRowNzImpl /
    MScatterRowNzImpl: gShape1 bursts of c0 a row, whatever the valid columns), so the table is
    at most as wide as the tile."""
    size, c0 = args["size"], 32 // data.dtype.itemsize
    shape = size.items if isinstance(size, ConstTuple) else ()
    dims = [comp.int_constant(v, node, f"{call}: size") for v in shape]
    if len(dims) != 2 or None in dims:
        comp.error(node, f"{call}: an NZ table's size is its logical (rows, cols), two constants (pto-isa's NZ "
                         f"GlobalTensor shape: gShape2 x 16 rows, gShape0 x gShape1 x C0 columns)",
                   "pass size=(rows, cols)")
    trows, tcols = dims
    if trows < 16 or tcols < c0 or trows % 16 or tcols % c0:
        comp.error(node, f"{call}: an NZ table of {trows} x {tcols} {data.dtype}: it is whole 16 x {c0} fractals "
                         f"(\"NZ table requires staticShape[3] == FRACTAL_NZ_ROW (16)\", \"staticShape[4] == 32 / "
                         f"sizeof(T)\", {header})")
    if row_form and tcols > data.tile.cols:
        comp.error(node, f"{call}: the NZ row form moves the table's whole width, {tcols} columns, into the column "
                         f"blocks of '{data.name}', which has {data.tile.cols} (its gShape1 bursts of c0 a row, "
                         f"{header}): they would reach past the tile", "give the tile the table's columns")
    stride = args["stride"]
    if stride is NONE:
        stride = Const(trows * c0, dtypes.int32)
    pitch = comp.int_constant(stride, node, f"{call}: stride")
    if pitch is not None and pitch < trows * c0:
        comp.error(node, f"{call}: stride {pitch}: an NZ table's column blocks are its {trows} rows x c0 = "
                         f"{trows * c0} elements, so they lie at least that far apart",
                   "pass stride= the elements between the table's column blocks (gStride1)")
    return trows, tcols, stride


def _operands(comp, node, call, spec, data, idx, table, args, header, what):
    """The shared checks of both directions and the operands after the three tiles / pointer:
    (rows, cols, size, [stride]), then (tcols, tpitch), which follow oob [and atomic]. data: dst
    (gather) or src (scatter)."""
    if table.space != "hbm":
        comp.error(node, f"{call}: table must point into a device tensor (GM)")
    if table.dtype != data.dtype:
        comp.error(node, f"{call}: '{data.name}' holds {data.dtype} but the table '{table.name}' holds "
                         f"{table.dtype} (\"the {what} table must be a GM GlobalTensor with element type "
                         f"matching\", {header})")
    if data.dtype.name not in modes.DATA_DTYPES:
        comp.error(node, f"{call}: '{data.name}' holds {data.dtype}; A2/A3 moves {', '.join(modes.DATA_DTYPES)} "
                         f"({header})")
    if idx.dtype.name not in modes.INDEX_DTYPES:
        comp.error(node, f"{call}: the indices '{idx.name}' hold {idx.dtype} (\"index type must be int32_t or "
                         f"uint32_t\", {header})")
    nz = _table_layout(comp, node, call, data, idx, args, header)
    row_form = spec.name in ("MGATHER", "MSCATTER")
    stride = args["stride"]
    if not row_form and stride is not NONE and not nz:
        comp.error(node, f"{call}: stride= is the table's row pitch of coalesce='row'; coalesce='elem' indexes "
                         "the table's elements")
    rows, cols = comp._extent(data)
    irows, icols = comp._extent(idx)
    r, c, ir, ic = _const(rows), _const(cols), _const(irows), _const(icols)
    if row_form and None not in (r, ir, ic) and not (ir == 1 and ic == r):
        comp.error(node, f"{call}: coalesce='row' over {r} rows of '{data.name}' needs indices of valid shape "
                         f"[1, {r}], and '{idx.name}' has {ir} x {ic} (\"Coalesce::Row requires index tile valid "
                         f"shape [1, R]\", {header})")
    if not row_form and None not in (r, ir) and ir != r or not row_form and None not in (c, ic) and ic != c:
        comp.error(node, f"{call}: coalesce='elem' over {r} x {c} of '{data.name}' needs indices of the same valid "
                         f"shape, and '{idx.name}' has {ir} x {ic} (\"Coalesce::Elem requires index tile ValidRow "
                         f"/ ValidCol == ...\", {header})")
    size = args["size"]
    if nz:
        trows, tcols, pitch = _nz_table(comp, node, call, data, args, header, row_form)
        c0 = Const(32 // data.dtype.itemsize, dtypes.int32)
        if row_form:            # the table's whole width; a row c0 elements after the last in its block
            cols, size, stride = Const(tcols, dtypes.int32), Const(trows, dtypes.int32), c0
        else:
            size = Const(trows * tcols, dtypes.int32)
        tail = [comp._int_operand(Const(tcols, dtypes.int32), node, "tcols"),
                comp._int_operand(pitch, node, f"{call}: stride")]
    else:
        if isinstance(size, ConstTuple):
            comp.error(node, f"{call}: size {tuple(v.value for v in size.items)}: an ND table's size is its rows "
                             "(coalesce='row') or elements ('elem'); a (rows, cols) shape is an NZ table's "
                             "(layout=pto.NZ)")
        tail = [comp._int_operand(Const(0, dtypes.int32), node, "tcols"),
                comp._int_operand(Const(0, dtypes.int32), node, "tpitch")]
    if _const(size) is not None and _const(size) < 1:
        comp.error(node, f"{call}: size {_const(size)}: the table must hold at least one "
                         f"{'row' if row_form else 'element'}")
    ops = [comp._int_operand(rows, node, "rows"), comp._int_operand(cols, node, "cols"),
           comp._int_operand(size, node, f"{call}: size")]
    if row_form:
        ops.append(comp._int_operand(cols if stride is NONE else stride, node, f"{call}: stride"))
    return ops, tail


def _common(comp, node, call, args, name, tile, policies):
    """(coalesce, the record, the Vec tile, the index tile, the GM table, the oob code) of an
    MGATHER (name "MGATHER", tile "dst") or MSCATTER call, checked."""
    coalesce = _choice(comp, node, call, args, "coalesce", ("row", "elem"))
    spec = comp.isa[name if coalesce == "row" else f"{name}_ELEM"]
    vec = comp.typed_tile(args[tile], node, spec, tile, f"{call}: {tile}")
    idx = comp.typed_tile(args["indices"], node, spec, "idx", f"{call}: indices")
    table = comp.require_ptr(args["table"], node, f"{call}: table")
    oob = policies[_choice(comp, node, call, args, "oob", tuple(policies))]
    return coalesce, spec, vec, idx, table, oob


def _nz_note(args) -> str:
    """', NZ' in a listing's comment of an NZ form."""
    return ", NZ" if args["layout"].value == "NZ" else ""


def _is_mat(v) -> bool:
    return isinstance(v, Ptr) and v.space == "l1" and v.tile is not None and v.tile.loc == "Mat"


def _gm_pointer(comp, node, v, what, dtype_names, rule):
    """A GM tensor operand of the GM -> L1 form (indices, scratch): a pointer into a device
    tensor whose dtype is among dtype_names (rule: MGatherCheckGm2L1's words)."""
    if not (isinstance(v, Ptr) and v.space == "hbm"):
        comp.error(node, f"pto.mgather: {what} of a Mat destination must be a pointer into a device tensor (GM), got "
                         f"{getattr(v, 'name', type(v).__name__)} (\"{rule}\", {_GATHER_H} MGatherCheckGm2L1)",
                   "the GM -> L1 form reads its indices (and writes its scratch) in GM: pass a tensor argument")
    if v.dtype.name not in dtype_names:
        comp.error(node, f"pto.mgather: {what} '{v.name}' holds {v.dtype} (\"{rule}\", {_GATHER_H})")
    return v


def lower_mgather_l1(comp, node, args):
    """MGATHER_L1 (coalesce='row') or MGATHER_L1_ELEM (scratch=) into a Mat tile (A2/A3 MGATHER_IMPL's
    Mat branch and its four-operand overload), after MGatherCheckGm2L1: the indices a GM int32 /
    uint32 tensor, the table ND, the tile's Cols a multiple of c0 and Rows of 16. The overloads
    decide the form by their operands, not by Coalesce: three operands run MGatherGm2L1RowImpl
    whatever Mode says, four (a scratch) MGatherGm2L1ElemImpl, so a coalesce= that disagrees with
    scratch= is a compile error here. The headers' only flags (PtoSetWaitFlag<PIPE_S, PIPE_MTE2>
    after the Row loop and before the Elem form's copy) are inside the instruction, which runs on
    MTE2. A Mat tile's fractal order is not modelled (docs/aicore.md): any Mat tile is the NZ
    destination, holding its values row-major; the NZ order shows where the tile meets GM (a
    tstore with layout=pto.NZ) and in the scratch, which the Elem form writes in NZ order."""
    call = "pto.mgather"
    coalesce = _choice(comp, node, call, args, "coalesce", ("row", "elem"))
    scratch = args["scratch"]
    elem = scratch is not NONE
    if coalesce == "elem" and not elem:
        comp.error(node, f"{call}: coalesce='elem' into a Mat tile needs scratch= (a GM tensor of the tile's Rows x "
                         f"Cols elements): the three-operand MGATHER_IMPL's Mat branch runs MGatherGm2L1RowImpl "
                         f"whatever Coalesce says ({_GATHER_H})")
    if coalesce == "row" and elem:
        comp.error(node, f"{call}: scratch= is the GM buffer of the element gather into a Mat tile; the "
                         f"four-operand MGATHER_IMPL runs MGatherGm2L1ElemImpl whatever Coalesce says ({_GATHER_H})",
                   "pass coalesce='elem' with scratch=, or drop scratch= for the row gather")
    spec = comp.isa["MGATHER_L1_ELEM" if elem else "MGATHER_L1"]
    if not (isinstance(args["layout"], Text) and args["layout"].value == "ND"):
        comp.error(node, f"{call}: the GM -> L1 forms read an ND table (\"MGATHER A2/A3 GM->L1 table must use "
                         f"Layout::ND.\", {_GATHER_H} MGatherCheckGm2L1)", "drop layout= (pto.ND)")
    dst = comp.typed_tile(args["dst"], node, spec, "dst", f"{call}: dst")
    table = comp.require_ptr(args["table"], node, f"{call}: table")
    if table.space != "hbm":
        comp.error(node, f"{call}: table must point into a device tensor (GM)")
    if dst.dtype.name not in modes.DATA_DTYPES:
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype}; A2/A3 gathers {', '.join(modes.DATA_DTYPES)} "
                         f"into L1 ({_GATHER_H} MGatherCheckGm2L1)")
    if table.dtype != dst.dtype:
        comp.error(node, f"{call}: '{dst.name}' holds {dst.dtype} but the table '{table.name}' holds {table.dtype} "
                         f"(\"GM->L1 table must be a GM GlobalTensor with element type matching the destination\", "
                         f"{_GATHER_H})")
    idx = _gm_pointer(comp, node, args["indices"], "indices", modes.INDEX_DTYPES,
                      "MGATHER A2/A3 GM->L1 indices must be a GM int32_t/uint32_t GlobalTensor.")
    c0 = 32 // dst.dtype.itemsize
    if dst.tile.cols % c0 or dst.tile.rows % 16:
        comp.error(node, f"{call}: '{dst.name}' is {dst.tile.rows} x {dst.tile.cols} {dst.dtype}; the GM -> L1 "
                         f"destination's Cols must be a multiple of C0 ({c0}) and Rows of FRACTAL_NZ_ROW (16) "
                         f"({_GATHER_H} MGatherCheckGm2L1)")
    if dst.tile.layout != "row":
        comp.error(node, f"{call}: '{dst.name}' is a ColMajor (ZN) Mat tile; \"MGATHER A2/A3 GM->L1 destination must "
                         f"be NZ (BLayout::ColMajor + SLayout::RowMajor + SFractalSize=512).\" ({_GATHER_H} "
                         f"MGatherCheckGm2L1)", "gather into a Mat tile of the default layout (pto-isa's NZ tile)")
    if elem:
        scratch = _gm_pointer(comp, node, scratch, "scratch", (dst.dtype.name,),
                              "MGATHER A2/A3 GM->L1 scratch must be a GM GlobalTensor with element type matching "
                              "the destination.")
        if args["stride"] is not NONE:
            comp.error(node, f"{call}: stride= is the table's row pitch of the row gather; the element gather "
                             "indexes the table's elements (its indices are rows x cols, dense)")
    rows, cols = comp._extent(dst)
    size = args["size"]
    if _const(size) is not None and _const(size) < 1:
        comp.error(node, f"{call}: size {_const(size)}: the table must hold at least one "
                         f"{'element' if elem else 'row'}")
    ops = [comp._base(dst, node, call), comp.uniform_int(table.offset, node, f"{call}: the GM offset"),
           comp.uniform_int(idx.offset, node, f"{call}: the indices' GM offset"),
           comp._int_operand(Const(idx.slot, dtypes.int32), node, "islot")]
    if elem:
        ops += [comp.uniform_int(scratch.offset, node, f"{call}: the scratch's GM offset"),
                comp._int_operand(Const(scratch.slot, dtypes.int32), node, "sslot")]
    ops += [comp._int_operand(rows, node, "rows"), comp._int_operand(cols, node, "cols"),
            comp._int_operand(size, node, f"{call}: size")]
    if not elem:
        stride = args["stride"]
        ops.append(comp._int_operand(cols if stride is NONE else stride, node, f"{call}: stride"))
    oob = modes.GATHER_OOB[_choice(comp, node, call, args, "oob", tuple(modes.GATHER_OOB))]
    ops.append(comp._int_operand(Const(oob, dtypes.int32), node, "oob"))
    comp.emit(spec.name, None, tuple(ops), dst.dtype, node, aux=comp.tile_aux(table.slot))
    comp.instrs[-1].comment = (f"{dst.name} <- {table.name}[{idx.name}] ({coalesce}, oob={args['oob'].value}"
                               + (f", scratch {scratch.name})" if elem else ")"))


@LOWERINGS.lowering("mgather", checks=(aicore_only,))
def lower_mgather(comp, node, args):
    """MGATHER (coalesce='row') or MGATHER_ELEM into a Vec tile, after MGatherCheck; into a Mat
    tile the GM -> L1 forms (lower_mgather_l1)."""
    call = "pto.mgather"
    if _is_mat(args["dst"]):
        return lower_mgather_l1(comp, node, args)
    if args["scratch"] is not NONE:
        comp.error(node, f"{call}: scratch= belongs to the GM -> L1 element gather (a Mat destination; "
                         f"MGatherCheckGm2L1: \"destination must be a Mat tile (L1)\", {_GATHER_H})")
    coalesce, spec, dst, idx, table, oob = _common(comp, node, call, args, "MGATHER", "dst", modes.GATHER_OOB)
    ops = [comp._base(dst, node, call), comp.uniform_int(table.offset, node, f"{call}: the GM offset"),
           comp._base(idx, node, call)]
    head, tail = _operands(comp, node, call, spec, dst, idx, table, args, _GATHER_H, "source")
    ops += head + [comp._int_operand(Const(oob, dtypes.int32), node, "oob")] + tail
    _header_flags(comp, node, spec, before=True)
    comp.emit(spec.name, None, tuple(ops), dst.dtype, node, aux=comp.tile_aux(table.slot))
    comp.instrs[-1].comment = (f"{dst.name} <- {table.name}[{idx.name}] ({coalesce}{_nz_note(args)}, "
                               f"oob={args['oob'].value})")
    _header_flags(comp, node, spec, before=False)


@LOWERINGS.lowering("mscatter", checks=(aicore_only,))
def lower_mscatter(comp, node, args):
    """MSCATTER (coalesce='row') or MSCATTER_ELEM from a Vec tile, after MScatterCheck."""
    call = "pto.mscatter"
    coalesce, spec, src, idx, table, oob = _common(comp, node, call, args, "MSCATTER", "src", modes.SCATTER_OOB)
    atomic = args["atomic"]
    add = atomic is not NONE and not (isinstance(atomic, Const) and atomic.value is None)
    if add and not (isinstance(atomic, Text) and atomic.value == "add"):
        comp.error(node, f"{call}: atomic must be None or 'add' (ScatterAtomicOp::None, Add; A2/A3 has no Max / Min)")
    if add and src.dtype.name not in modes.ATOMIC_DTYPES:
        comp.error(node, f"{call}: atomic='add' on {src.dtype}; A2/A3 adds {', '.join(modes.ATOMIC_DTYPES)} "
                         f"(IsValidMScatterAtomic, {_SCATTER_H})")
    ops = [comp.uniform_int(table.offset, node, f"{call}: the GM offset"), comp._base(src, node, call),
           comp._base(idx, node, call)]
    head, tail = _operands(comp, node, call, spec, src, idx, table, args, _SCATTER_H, "destination")
    ops += head + [comp._int_operand(Const(oob, dtypes.int32), node, "oob"),
                   comp._int_operand(Const(modes.ATOMIC_ADD if add else 0, dtypes.int32), node, "atomic")] + tail
    _header_flags(comp, node, spec, before=True)
    comp.emit(spec.name, None, tuple(ops), src.dtype, node, aux=comp.tile_aux(table.slot))
    comp.instrs[-1].comment = (f"{table.name}[{idx.name}] {'+' if add else ''}<- {src.name} "
                               f"({coalesce}{_nz_note(args)}, "
                               f"oob={args['oob'].value})")
    _header_flags(comp, node, spec, before=False)
