"""pto.mgather(dst, table, indices, size, ...) and pto.mscatter(table, src, indices, size, ...):
the indexed GM transfers (isa/54_gm_index.toml, families tile_gm_gather / tile_gm_scatter) with
A2/A3's checks (include/pto/npu/a2a3/MGather.hpp MGatherCheck, MScatter.hpp MScatterCheck) as
compile errors at the kernel's line. coalesce='row' emits MGATHER / MSCATTER, 'elem'
MGATHER_ELEM / MSCATTER_ELEM; size is the GM table's rows (row) or elements (elem), the shape
pto-isa's GlobalTensor carries; stride the elements between the table's rows (row only, by
default the valid columns: a dense table). Registered in registry.py's LOWERINGS; codegen.py
imports it."""
from __future__ import annotations

from .. import dtypes
from ..isa import gm_index_modes as modes
from ..isa.table import PTO_PIPE_NAMES
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import NONE, Const, Text

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


def _operands(comp, node, call, spec, data, idx, table, args, header, what):
    """The shared checks of both directions and the operands after the three tiles / pointer:
    rows, cols, size, [stride,] oob. data: dst (gather) or src (scatter)."""
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
    for t in (data, idx):
        if t.tile.layout != "row":
            comp.error(node, f"{call}: '{t.name}' is ColMajor; pypto_sim builds the ND form (a RowMajor tile, "
                             f"{header}'s layout pairing (a)); the NZ form (GM Layout::NZ with an NZ tile) is "
                             "not built")
    row_form = spec.name in ("MGATHER", "MSCATTER")
    stride = args["stride"]
    if not row_form and stride is not NONE:
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
    if _const(size) is not None and _const(size) < 1:
        comp.error(node, f"{call}: size {_const(size)}: the table must hold at least one "
                         f"{'row' if row_form else 'element'}")
    ops = [comp._int_operand(rows, node, "rows"), comp._int_operand(cols, node, "cols"),
           comp._int_operand(size, node, f"{call}: size")]
    if row_form:
        ops.append(comp._int_operand(cols if stride is NONE else stride, node, f"{call}: stride"))
    return ops


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


@LOWERINGS.lowering("mgather", checks=(aicore_only,))
def lower_mgather(comp, node, args):
    """MGATHER (coalesce='row') or MGATHER_ELEM into a Vec tile, after MGatherCheck."""
    call = "pto.mgather"
    coalesce, spec, dst, idx, table, oob = _common(comp, node, call, args, "MGATHER", "dst", modes.GATHER_OOB)
    ops = [comp._base(dst, node, call), comp.uniform_int(table.offset, node, f"{call}: the GM offset"),
           comp._base(idx, node, call)]
    ops += _operands(comp, node, call, spec, dst, idx, table, args, _GATHER_H, "source")
    ops.append(comp._int_operand(Const(oob, dtypes.int32), node, "oob"))
    _header_flags(comp, node, spec, before=True)
    comp.emit(spec.name, None, tuple(ops), dst.dtype, node, aux=comp.tile_aux(table.slot))
    comp.instrs[-1].comment = f"{dst.name} <- {table.name}[{idx.name}] ({coalesce}, oob={args['oob'].value})"
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
    ops += _operands(comp, node, call, spec, src, idx, table, args, _SCATTER_H, "destination")
    ops += [comp._int_operand(Const(oob, dtypes.int32), node, "oob"),
            comp._int_operand(Const(modes.ATOMIC_ADD if add else 0, dtypes.int32), node, "atomic")]
    _header_flags(comp, node, spec, before=True)
    comp.emit(spec.name, None, tuple(ops), src.dtype, node, aux=comp.tile_aux(table.slot))
    comp.instrs[-1].comment = (f"{table.name}[{idx.name}] {'+' if add else ''}<- {src.name} ({coalesce}, "
                               f"oob={args['oob'].value})")
    _header_flags(comp, node, spec, before=False)
