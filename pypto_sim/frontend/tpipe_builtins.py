"""pto.tpipe, pto.tpush, pto.tpop, pto.talloc and pto.tfree: pto-isa's cube <-> vector FIFO
(TPipe) as A2/A3 builds it (include/pto/npu/a2a3/TPush.hpp, TPop.hpp, TAlloc.hpp, TFree.hpp at
pto-isa 3186c381; isa/55_tpipe.toml's [[composite]] records).

A TPipe is a ring of ``slot_num`` slots of ``slot_size`` bytes in a GM tensor and two counters of
cross-core signals: FlagID (data ready) and FlagID + 1 (slot free); a 'both' pipe adds a V2C
ring ``slot_num x slot_size`` bytes on, on FlagID + 2 / + 3. The operations are header code over
instructions the table has, and lower to exactly those:

- TPUSH (Producer): when ``shouldWaitFree(index)`` (index >= SlotNum and index % SyncPeriod ==
  0), wait for a free signal; TSTORE the tile's valid region into slot ``index % SlotNum`` (FIX
  from the AIC's Acc tile, MTE3 from an AIV's Vec tile at its split offset); index += 1; signal
  data ready from that pipe (ffts_cross_core_sync(PIPE_FIX / PIPE_MTE3)). With ``quant=`` (an Acc
  tile only: Producer::push's static_assert) the store is the fixpipe's pre-stage quantization:
  a scale is SET_QUANT_SCALAR (set_quant_pre) then TPUSH<FixpipeParams<NZ2ND, DEQF16 / REQ8 /
  QF322B8_PRE>>, TSTORE_ACC with quant=; a Scaling tile is SET_QUANT_VECTOR (set_fpc of its FB
  address) then TPUSH<FixpipeParams<NZ2ND, VDEQF16 / VREQ8 / VQF322B8_PRE>>, which pushAcc2GMFiFo
  issues as TStoreAcc in that mode: the set_fpc and copy_matrix_cc_to_gm that TSTORE_FP
  (tstore_common.hpp TStoreAccFp) issues, so TSTORE_FP with quant=fp. The fifo's dtype picks the
  mode, as tstore's quant= does (FixpipeConsDType's half / int8 fifo of each mode).
- TPOP (Consumer): wait for data ready; TLOAD the slot into the tile (MTE2; an AIV's part by its
  split); when ``shouldNotifyFree(index)`` ((index + 1) % SyncPeriod == 0), signal free from
  MTE2; index += 1.
- TALLOC / TPOP without a tile hand the kernel the slot's GM address (the GlobalData forms);
  TPUSH of such a slot only signals, TFREE of it signals free as TPOP would have. As TAlloc.hpp
  and TPop.hpp compute that address, it has no ring offset: on a 'both' pipe these V2C slots lie
  in the C2V ring's bytes (the tile forms add the offset TPipe's constructor sets), which
  racecheck reports when both rings are in use.
- At the end of a unit's program the producer waits for the free signals its pushes left
  unconsumed (TPipe::~TPipe, countPendingFreeCredits), so no signal outlives the kernel.

Two pipes of a unit may not signal one core on one flag id (each core counts its own flags;
the kernel's own cross_core_set_flag ids are not checked against the pipes').
SyncPeriod is SlotNum for SlotNum <= 2, else SlotNum / 2. Each unit keeps its own producer and
consumer index in two scalar registers, from 0 where the pipe is made. The consumer's local ring
(LocalSlotNum tiles at C2V_CONSUMER_BUF / V2C_CONSUMER_BUF, TASSIGNed in turn) is not modelled:
a pop loads into the tile the kernel names, where pto.alloc_tile placed it.
Registered in registry.py's LOWERINGS; codegen.py imports it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from .. import dtypes
from ..ir import Imm
from ..ir.program import int_sem_of
from .aicore_builtins import PIPE_ALL, PTO_TO_PIPE
from .builtin_checks import aicore_only, refusals_told_as
from .gm_transfers import lower_tload, lower_tstore
from .registry import LOWERINGS
from .values import NONE, Const, Ptr, Text, Val

_H = "include/pto/npu/a2a3/TPush.hpp"
DIRECTIONS = ("c2v", "v2c", "both")
PUSH_SPLITS = ("no_split", "up_down", "left_right")
POP_SPLITS = PUSH_SPLITS + ("up_down_odd", "left_right_odd")
FLAG_LIMIT = 16          # TPush.hpp: "FlagID + 1 must be less than 16 due to hardware limit."
I32 = dtypes.int32
_ND = Text("ND")             # the slots are row-major (GlobalTensor Layout::ND), rows valid-columns apart


@dataclass(frozen=True)
class TPipe:
    """A TPipe of the kernel: its GM ring, flags and shape, and the unit's two tile indices."""
    name: str
    fifo: Ptr
    flag_id: int
    direction: str
    slot_size: int           # bytes
    slot_num: int
    local_slot_num: int
    prod: object             # Reg: the producer's tile index
    cons: object             # Reg: the consumer's tile index
    node: object             # the pto.tpipe call (its line is the drain's)

    @property
    def sync_period(self) -> int:
        """TPipe::SyncPeriod: SlotNum for SlotNum <= 2, else SlotNum / 2."""
        return self.slot_num if self.slot_num <= 2 else self.slot_num // 2

    def received(self) -> set:
        """(receiving core, flag) of every signal of the pipe: a ring's ready flag the consumer's
        counter, its free flag the producer's (a flag's counter is its receiver's, cube or vector)."""
        rings = ("c2v", "v2c") if self.direction == "both" else (self.direction,)
        into = {"c2v": ("vector", "cube"), "v2c": ("cube", "vector")}
        return {(core, flag) for r in rings for core, flag in zip(into[r], self.ring(r)[:2])}

    def ring(self, ring: str) -> tuple:
        """(data-ready flag, slot-free flag, byte offset of the ring in fifo) of ring 'c2v' or 'v2c'."""
        if ring == "v2c" and self.direction == "both":
            return self.flag_id + 2, self.flag_id + 3, self.slot_num * self.slot_size
        return self.flag_id, self.flag_id + 1, 0


def _unit(comp, node, call) -> str:
    """'cube' or 'vector': the core whose section the call is in."""
    if comp.section is None:
        comp.error(node, f"{call} outside a section: a TPipe hands tiles between the cube core and the vector "
                         "cores, so push and pop inside `with pto.cube():` or `with pto.vector():`")
    return "cube" if comp.section == "cube" else "vector"


def _pipe(comp, node, call, v) -> TPipe:
    if not isinstance(v, TPipe):
        comp.error(node, f"{call}: pipe must be a TPipe of pto.tpipe(...)")
    return v


def _role(comp, node, call, pipe, producer) -> str:
    """The ring this unit pushes into (producer) or pops from, checked against the pipe's direction."""
    unit = _unit(comp, node, call)
    ring = ("c2v" if unit == "cube" else "v2c") if producer else ("v2c" if unit == "cube" else "c2v")
    if pipe.direction not in (ring, "both"):
        core, verb = ("AIC", ("pops", "pushes")) if unit == "cube" else ("AIVs", ("pop", "push"))
        comp.error(node, f"{call} on the {core}: '{pipe.name}' is a '{pipe.direction}' pipe, which the {core} "
                         f"{verb[0] if producer else verb[1]} (A2/A3 compiles the {'push' if producer else 'pop'} "
                         f"out of this core's program, {_H})",
                   "use a 'both' pipe, or a second pipe for the other direction")
    return ring


def _choice(comp, node, call, v, what, choices, default):
    if v is NONE or isinstance(v, Const) and v.value is None:
        return default
    if not (isinstance(v, Text) and v.value in choices):
        comp.error(node, f"{call}: {what} must be one of {', '.join(repr(c) for c in choices)}")
    return v.value


def _wait(comp, node, flag):
    comp.emit("CROSS_CORE_WAIT_FLAG", None, (), None, node, aux=(flag, PIPE_ALL, 0))


def _signal(comp, node, flag, pipe_name):
    comp.emit("CROSS_CORE_SET_FLAG", None, (), None, node, aux=(flag, PTO_TO_PIPE[pipe_name], 0))


def _increment(comp, node, reg):
    comp.emit("ADD", reg, (reg, Imm(1.0, I32)), I32, node, aux=(int_sem_of(I32),))


def _wait_free_if_due(comp, node, pipe, free_flag):
    """Producer::allocate under shouldWaitFree(index): index >= SlotNum and index % SyncPeriod == 0."""
    idx = Val(pipe.prod)
    due = comp.alu("GE", [idx, Const(pipe.slot_num, I32)], node, dtype=I32, result=dtypes.bool_)
    if pipe.sync_period > 1:
        on_period = comp.alu("EQ", [comp.alu("MOD", [idx, Const(pipe.sync_period, I32)], node, dtype=I32),
                                    Const(0, I32)], node, dtype=I32, result=dtypes.bool_)
        due = comp.alu("AND", [due, on_period], node, dtype=dtypes.bool_)
    with comp.masked_if(due, node):
        _wait(comp, node, free_flag)


def _slot(comp, node, pipe, reg, ring_offset, dtype, extra=Const(0, I32)) -> Ptr:
    """The GM pointer to slot index % SlotNum of a ring (ring_offset bytes into fifo), plus
    `extra` elements, typed as the fifo."""
    isz = pipe.fifo.dtype.itemsize
    slot = Const(0, I32) if pipe.slot_num == 1 else comp.alu("MOD", [Val(reg), Const(pipe.slot_num, I32)], node,
                                                               dtype=I32)
    at = comp.alu("MUL", [slot, Const(pipe.slot_size // isz, I32)], node, dtype=I32)
    at = comp.alu("ADD", [at, Const(ring_offset // isz, I32)], node, dtype=I32)
    at = comp.alu("ADD", [at, extra], node, dtype=I32)
    ptr = comp.ptr_add(pipe.fifo, at, node, 1)
    return Ptr(ptr.space, ptr.slot, ptr.dtype, f"{pipe.name}_slot", ptr.offset, ptr.count, ptr.base)


def _mul(comp, node, a, b):
    return comp.alu("MUL", [a, b], node, dtype=I32)


def _add(comp, node, a, b):
    return comp.alu("ADD", [a, b], node, dtype=I32)


def _split_place(comp, node, split, rows, cols):
    """(element offset of this AIV's part in the slot, GM row stride or NONE for dense) of a
    rows x cols part by split (TPush.hpp pushVec2GMFiFo, popVecTileFromGMFiFo; TAlloc.hpp
    getSubAIVOffset, TPop.hpp getPopSubAIVOffset)."""
    s = comp.unit_index - 1                     # pto.get_subblock_id(): a constant of the AIV's program
    if split == "no_split":
        return Const(0, I32), NONE
    if split == "up_down":
        return _mul(comp, node, Const(s, I32), _mul(comp, node, rows, cols)), NONE
    if split == "left_right":
        return _mul(comp, node, Const(s, I32), cols), _mul(comp, node, Const(2, I32), cols)
    if split == "up_down_odd":            # AIV0 holds the odd row: AIV1 starts (its rows + 1) rows in
        return _mul(comp, node, Const(s, I32), _mul(comp, node, _add(comp, node, rows, Const(s, I32)), cols)), NONE
    # left_right_odd: AIV0 holds the odd column
    return (_mul(comp, node, Const(s, I32), _add(comp, node, cols, Const(s, I32))),
            _add(comp, node, _mul(comp, node, Const(2, I32), cols), Const(2 * s - 1, I32)))


def _static(v):
    return int(v.value) if isinstance(v, Const) else None


def _check_fits(comp, node, call, pipe, what, offset, stride, rows, cols):
    """A part known when the kernel compiles must lie in its slot ("SlotSize must be large enough
    for one logical FIFO entry", TPUSH.md)."""
    off, r, c = _static(offset), _static(rows), _static(cols)
    st = c if stride is NONE else _static(stride)
    if None in (off, r, c, st) or r == 0 or c == 0:
        return
    end = (off + (r - 1) * st + c) * pipe.fifo.dtype.itemsize
    if end > pipe.slot_size:
        comp.error(node, f"{call}: {what} ({r} x {c} of {pipe.fifo.dtype}, at byte {off * pipe.fifo.dtype.itemsize}"
                         f" of its slot) reaches byte {end}, past the {pipe.slot_size}-byte slots of '{pipe.name}'",
                   "make slot_size hold the whole tile (pto-isa sizes it as rows x cols x the element size)")


def _tile(comp, node, call, t, loc):
    if not (isinstance(t, Ptr) and t.tile is not None):
        comp.error(node, f"{call}: the tile must be a tile of pto.alloc_tile")
    if t.tile.loc != loc:
        comp.error(node, f"{call}: '{t.name}' is a {t.tile.loc} tile; here the TPipe moves {loc} tiles "
                         f"({_H}: TPUSH takes Acc on the AIC and Vec on an AIV, TPOP Vec on an AIV and Mat on "
                         "the AIC)")
    return t


def _same_dtype(comp, node, call, pipe, t, converts=False, quantized=False):
    """The fifo holds the tile's dtype; a push from Acc (converts) may also go float32 -> float16 /
    bfloat16, which the fixpipe converts, or with quant= to what its pre-stage quantization writes
    (TSTORE from Acc checks that pair)."""
    if t.dtype == pipe.fifo.dtype or converts and (quantized or t.dtype == dtypes.float32 and pipe.fifo.dtype in (
            dtypes.float16, dtypes.bfloat16)):
        return
    comp.error(node, f"{call}: '{t.name}' holds {t.dtype} but the pipe's fifo '{pipe.fifo.name}' holds "
                     f"{pipe.fifo.dtype}; pto-isa reinterprets its GM ring as each tile's dtype, and a GM tensor "
                     "here keeps one dtype" + ("; the fixpipe converts float32 Acc to float16 or bfloat16 only"
                                               if converts else ""),
               f"allocate the fifo tensor as {t.dtype}, or one pipe (and tensor) per dtype")


def _issued_by(comp, node, call, what, tile, pipe):
    """A TSTORE's or TLOAD's refusal of the tile, told as the push's or pop's: the kernel wrote no
    tstore or tload, and its hints (layout=, stride=) are arguments tpush and tpop do not take."""
    return refusals_told_as(comp, node, f"{call}: the {what} of '{tile.name}' "
                                        f"{'into' if what == 'TSTORE' else 'from'} a slot of '{pipe.name}' (an ND "
                                        "GM tensor, rows valid columns apart) refuses it: ")


def _gm_part(comp, node, call, pipe, split, rows, cols):
    """The element offset of this AIV's rows x cols part of a GM slot by split, which must lie in
    the slot (the tile forms' check, _check_fits)."""
    offset, stride = _split_place(comp, node, split, rows, cols)
    _check_fits(comp, node, call, pipe, f"this AIV's part by split={split!r}", offset, stride, rows, cols)
    return offset


def _gm_shape(comp, node, call, split, rows, cols):
    if split == "no_split":
        return Const(0, I32), Const(0, I32)
    if rows is NONE or cols is NONE:
        comp.error(node, f"{call}: split={split!r} of a GM slot needs rows= and cols=, the shape of this AIV's "
                         "part (the GlobalTensor's static shape in pto-isa)")
    return (Const(comp._static_int(rows, node, f"{call}: rows"), I32),
            Const(comp._static_int(cols, node, f"{call}: cols"), I32))


# ---------------------------------------------------------------- lowerings
@LOWERINGS.lowering("tpipe", checks=(aicore_only,))
def lower_tpipe(comp, node, args):
    """A TPipe: its checks (TPush.hpp's static_asserts) and the unit's two tile indices, set to 0."""
    call = "pto.tpipe"
    fifo = comp.require_ptr(args["fifo"], node, f"{call}: fifo")
    if fifo.space != "hbm":
        comp.error(node, f"{call}: fifo must point into a device tensor (GM): A2/A3's ring is in GM")
    body = comp.kernel.fn_ast.body
    top_level = list(body) + [st for w in body if isinstance(w, ast.With) for st in w.body]
    if len(comp.inline_stack) > 1 or not any(st is comp.current_statement for st in top_level):
        comp.error(node, f"{call} inside a loop, an if or a helper: a TPipe is made once, in the kernel's body or "
                         "a section's, and lives to the end of the unit's program (its destructor drains its free "
                         "signals there)")
    direction = _choice(comp, node, call, args["direction"], "direction", DIRECTIONS, None)
    if direction is None:
        comp.error(node, f"{call}: direction must be one of {', '.join(map(repr, DIRECTIONS))}")
    flag = comp.int_constant(args["flag_id"], node, f"{call}: flag_id")
    if flag is None:
        comp.error(node, f"{call}: flag_id must be an integer known at compile time (pto-isa's TPipe<FlagID, ...>)")
    size, num, local = (comp._static_int(args[k], node, f"{call}: {k}")
                        for k in ("slot_size", "slot_num", "local_slot_num"))
    top = flag + (3 if direction == "both" else 1)
    if flag < 0 or top >= FLAG_LIMIT:
        comp.error(node, f"{call}: flag_id {flag} uses cross-core flags {flag}..{top}; they must be below "
                         f"{FLAG_LIMIT} (\"FlagID + {top - flag} must be less than 16 due to hardware limit.\", {_H})")
    if num < 1:
        comp.error(node, f"{call}: slot_num {num}: \"Fix: TPipe requires SlotNum >= 1.\" ({_H})")
    if local < 1:
        comp.error(node, f"{call}: local_slot_num {local} must be at least 1")
    if size < 1 or size % fifo.dtype.itemsize:
        comp.error(node, f"{call}: slot_size {size} bytes is not a positive multiple of the fifo's "
                         f"{fifo.dtype.itemsize}-byte {fifo.dtype} elements")
    name = comp._target_name(node) or "tpipe"
    pipe = TPipe(name, fifo, flag, direction, size, num, local, None, None, node)
    for other in getattr(comp, "tpipes", None) or []:
        shared = sorted(flag for _core, flag in pipe.received() & other.received())
        if shared:
            comp.error(node, f"{call}: '{name}' signals on cross-core flag {shared[0]}, as '{other.name}' (line "
                             f"{other.node.lineno + comp.kernel.line_offset}) does to the same core: the two pipes "
                             f"would take each other's signals ({flag}..{top} here)",
                       "give each TPipe its own flag ids (two apart, four for 'both')")
    prod, cons = comp.new_reg(I32, True), comp.new_reg(I32, True)
    for reg in (prod, cons):
        comp.emit("MOV", reg, (Imm(0.0, I32),), I32, node, aux=(int_sem_of(I32),))
    pipe = TPipe(name, fifo, flag, direction, size, num, local, prod, cons, node)
    comp.instrs[-1].comment = (f"{name}: {direction} TPipe of {num} x {size} B slots in {fifo.name}, flags "
                               f"{flag}..{top}")
    comp.tpipes = (getattr(comp, "tpipes", None) or []) + [pipe]
    return pipe


@LOWERINGS.lowering("tpush", checks=(aicore_only,))
def lower_tpush(comp, node, args):
    """TPUSH_IMPL: allocate (when due), push (TSTORE), index += 1, record; of a talloc slot: record."""
    call = "pto.tpush"
    pipe = _pipe(comp, node, call, args["pipe"])
    ring = _role(comp, node, call, pipe, producer=True)
    ready, free, ring_offset = pipe.ring(ring)
    from_pipe = "PIPE_FIX" if ring == "c2v" else "PIPE_MTE3"
    src = args["src"]
    quant = args.get("quant", NONE)             # a scale (SET_QUANT_SCALAR) or a Scaling tile (SET_QUANT_VECTOR)
    quant = NONE if isinstance(quant, Const) and quant.value is None else quant
    if isinstance(src, Ptr) and src.tile is None:             # TPUSH(Pipe&, GlobalData&): commit only
        if src.space != "hbm" or src.slot != pipe.fifo.slot:
            comp.error(node, f"{call}: '{src.name}' is not a slot of '{pipe.name}' (pto.talloc gives one)")
        if quant is not NONE:
            comp.error(node, f"{call}: quant= with a slot: this form only commits what the kernel stored",
                       "pass quant= to the pto.tstore into the slot")
        _signal(comp, node, ready, from_pipe)
        return NONE
    # the AIC's push stores its whole Acc tile whatever the split (TPush.hpp pushAcc2GMFiFo), the odd splits too
    split = _choice(comp, node, call, args["split"], "split", POP_SPLITS if ring == "c2v" else PUSH_SPLITS, "no_split")
    tile = _tile(comp, node, call, src, "Acc" if ring == "c2v" else "Vec")
    if quant is not NONE and ring != "c2v":
        comp.error(node, f"{call}: quant= on the push of the Vec tile '{tile.name}': the fixpipe quantizes a push "
                         f"from Acc only ({_H} Producer::push: static_assert \"Fix: the push interface with cast "
                         "quant mode only support Acc tile type!\")", "quantize in UB first (pto.tquant, pto.tcvt)")
    if isinstance(quant, Ptr) and quant.tile is not None and quant.tile.loc != "Scaling":
        comp.error(node, f"{call}: quant= tile '{quant.name}' is a {quant.tile.loc} tile; SET_QUANT_VECTOR takes a "
                         "Scaling tile (A2/A3 SetQuantVector.hpp: static_assert \"Fix: SET_QUANT_VECTOR only supports "
                         "Scaling input tile type.\")", "pto.tmov the quant words into a pto.Scaling tile first")
    _same_dtype(comp, node, call, pipe, tile, converts=ring == "c2v", quantized=quant is not NONE)
    rows, cols = comp._extent(tile)
    offset, stride = (Const(0, I32), NONE) if ring == "c2v" else _split_place(comp, node, split, rows, cols)
    _check_fits(comp, node, call, pipe, f"'{tile.name}'", offset, stride, rows, cols)
    _wait_free_if_due(comp, node, pipe, free)
    ptr = _slot(comp, node, pipe, pipe.prod, ring_offset, tile.dtype, offset)
    with _issued_by(comp, node, call, "TSTORE", tile, pipe):
        lower_tstore(comp, node, {"ptr": ptr, "tile": tile, "stride": stride, "layout": _ND, "atomic": NONE,
                                  "relu": NONE, "quant": quant})   # TSTORE_ACC / TSTORE_FP to the fifo's dtype
    comp.instrs[-1].comment = f"TPUSH {pipe.name}: " + (comp.instrs[-1].comment or "")
    _increment(comp, node, pipe.prod)
    _signal(comp, node, ready, from_pipe)
    return NONE


@LOWERINGS.lowering("tpop", checks=(aicore_only,))
def lower_tpop(comp, node, args):
    """TPOP_IMPL: wait, pop (TLOAD), free (when due), index += 1; without dst: wait, the slot, index += 1."""
    call = "pto.tpop"
    pipe = _pipe(comp, node, call, args["pipe"])
    ring = _role(comp, node, call, pipe, producer=False)
    ready, free, ring_offset = pipe.ring(ring)
    split = _choice(comp, node, call, args["split"], "split", POP_SPLITS, "no_split")
    dst = args["dst"]
    if dst is NONE or isinstance(dst, Const) and dst.value is None:     # TPOP(Pipe&, GlobalData&)
        if split not in PUSH_SPLITS:
            comp.error(node, f"{call}: split={split!r} of a GM slot; A2/A3's TPOP of a GlobalTensor takes "
                             "'no_split', 'up_down' or 'left_right' (TPop.hpp getPopSubAIVOffset)")
        rows, cols = _gm_shape(comp, node, call, split, args["rows"], args["cols"])
        offset = Const(0, I32) if ring == "v2c" else _gm_part(comp, node, call, pipe, split, rows, cols)
        _wait(comp, node, ready)
        # TPop.hpp's GlobalTensor TPOP adds no ring offset (cons.entryOffset): a 'both' pipe's V2C
        # slot here is in the C2V ring's bytes, as on A2/A3 (racecheck sees the overlap)
        ptr = _slot(comp, node, pipe, pipe.cons, 0, pipe.fifo.dtype, offset)
        _increment(comp, node, pipe.cons)
        return ptr
    if args["rows"] is not NONE or args["cols"] is not NONE:
        comp.error(node, f"{call}: rows= and cols= shape a GM slot (no dst); a tile pop reads dst's valid region")
    tile = _tile(comp, node, call, dst, "Mat" if ring == "v2c" else "Vec")
    _same_dtype(comp, node, call, pipe, tile)
    rows, cols = comp._extent(tile)
    # the AIC's pop of a Mat tile reads the whole slot whatever the split (TPush.hpp popMatTileFromGMFiFo)
    offset, stride = (Const(0, I32), NONE) if ring == "v2c" else _split_place(comp, node, split, rows, cols)
    _check_fits(comp, node, call, pipe, f"'{tile.name}'", offset, stride, rows, cols)
    _wait(comp, node, ready)
    ptr = _slot(comp, node, pipe, pipe.cons, ring_offset, tile.dtype, offset)
    with _issued_by(comp, node, call, "TLOAD", tile, pipe):
        lower_tload(comp, node, {"ptr": ptr, "tile": tile, "stride": stride, "layout": _ND})
    comp.instrs[-1].comment = f"TPOP {pipe.name}: " + (comp.instrs[-1].comment or "")
    _free_if_due(comp, node, pipe, free, Val(pipe.cons))
    _increment(comp, node, pipe.cons)
    return NONE


def _free_if_due(comp, node, pipe, free_flag, index):
    """Consumer::free under shouldNotifyFree(index): (index + 1) % SyncPeriod == 0."""
    if pipe.sync_period == 1:
        _signal(comp, node, free_flag, "PIPE_MTE2")
        return
    nxt = comp.alu("ADD", [index, Const(1, I32)], node, dtype=I32)
    due = comp.alu("EQ", [comp.alu("MOD", [nxt, Const(pipe.sync_period, I32)], node, dtype=I32), Const(0, I32)],
                   node, dtype=I32, result=dtypes.bool_)
    with comp.masked_if(due, node):
        _signal(comp, node, free_flag, "PIPE_MTE2")


@LOWERINGS.lowering("talloc", checks=(aicore_only,))
def lower_talloc(comp, node, args):
    """TALLOC_IMPL: allocate (when due), the slot's GM address (an AIV's part by split), index += 1."""
    call = "pto.talloc"
    pipe = _pipe(comp, node, call, args["pipe"])
    ring = _role(comp, node, call, pipe, producer=True)
    free = pipe.ring(ring)[1]
    split = _choice(comp, node, call, args["split"], "split", PUSH_SPLITS, "no_split")
    rows, cols = _gm_shape(comp, node, call, split, args["rows"], args["cols"])
    offset = Const(0, I32) if ring == "c2v" else _gm_part(comp, node, call, pipe, split, rows, cols)
    _wait_free_if_due(comp, node, pipe, free)
    # TAlloc.hpp adds no ring offset (prod.entryOffset): a 'both' pipe's V2C slot here is in the
    # C2V ring's bytes, as on A2/A3 (racecheck sees the overlap)
    ptr = _slot(comp, node, pipe, pipe.prod, 0, pipe.fifo.dtype, offset)
    _increment(comp, node, pipe.prod)
    return ptr


@LOWERINGS.lowering("tfree", checks=(aicore_only,))
def lower_tfree(comp, node, args):
    """TFREE_IMPL: of a GM slot, free when shouldNotifyFree(index - 1); of a tile pop, nothing."""
    call = "pto.tfree"
    pipe = _pipe(comp, node, call, args["pipe"])
    ring = _role(comp, node, call, pipe, producer=False)
    _choice(comp, node, call, args["split"], "split", PUSH_SPLITS, "no_split")
    slot = args["slot"]
    if slot is NONE or isinstance(slot, Const) and slot.value is None:
        return NONE                      # A2/A3's TFREE(pipe) returns: TPOP freed the slot
    if not (isinstance(slot, Ptr) and slot.space == "hbm" and slot.slot == pipe.fifo.slot):
        comp.error(node, f"{call}: slot must be a slot of '{pipe.name}' (pto.tpop(pipe) without dst gives one)")
    _ready, free, _offset = pipe.ring(ring)
    index = comp.alu("SUB", [Val(pipe.cons), Const(1, I32)], node, dtype=I32)
    _free_if_due(comp, node, pipe, free, index)
    return NONE


# ---------------------------------------------------------------- the destructor
def pending_free_credits(slot_num: int, pushes: int) -> int:
    """countPendingFreeCredits(tileCount) of TPush.hpp in closed form: the free signals a
    producer that pushed `pushes` tiles has not waited for (SyncPeriod sp, ceil(SlotNum / sp)
    = f): pushes // sp while pushes <= SlotNum, else f - 1, plus one when pushes % sp == 0.
    drain_tpipes emits this as the unit's scalar code."""
    sp = slot_num if slot_num <= 2 else slot_num // 2
    if pushes <= slot_num:
        return pushes // sp
    return -(-slot_num // sp) - 1 + (pushes % sp == 0)


def drain_tpipes(comp, at=None):
    """TPipe::~TPipe where a unit's program ends (its EXIT, or a `return` at ``at``): the
    producer waits for the free signals its pushes left unconsumed, countPendingFreeCredits(index)
    of them: index // SyncPeriod while index <= SlotNum, then ceil(SlotNum / SyncPeriod) - 1, plus
    one when index % SyncPeriod == 0 (the closed form of TPush.hpp's notified - waited count).
    The pipes made so far in the unit's program drain, each at its own line or the return's."""
    for pipe in getattr(comp, "tpipes", None) or []:
        node = at or pipe.node
        unit = "cube" if comp.unit_index == 0 else "vector"
        ring = "c2v" if unit == "cube" else "v2c"
        if pipe.direction not in (ring, "both"):
            continue                       # this unit only consumes the pipe
        free = pipe.ring(ring)[1]
        sp, sn = pipe.sync_period, pipe.slot_num
        idx = Val(pipe.prod)
        first = -(-sn // sp)               # ceil(SlotNum / SyncPeriod)
        past = comp.alu("GT", [idx, Const(sn, I32)], node, dtype=I32, result=dtypes.bool_)
        with comp.masked_if(past, node, has_else=True) as branch:
            for _ in range(first - 1):
                _wait(comp, node, free)
            if sp == 1:
                _wait(comp, node, free)
            else:
                on_period = comp.alu("EQ", [comp.alu("MOD", [idx, Const(sp, I32)], node, dtype=I32), Const(0, I32)],
                                     node, dtype=I32, result=dtypes.bool_)
                with comp.masked_if(on_period, node):
                    _wait(comp, node, free)
            branch.else_()
            notified = idx if sp == 1 else comp.alu("FLOORDIV", [idx, Const(sp, I32)], node, dtype=I32)
            for k in range(sn // sp):
                more = comp.alu("GT", [notified, Const(k, I32)], node, dtype=I32, result=dtypes.bool_)
                with comp.masked_if(more, node):
                    _wait(comp, node, free)
