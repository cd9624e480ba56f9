"""pto.tput and pto.tget: pto-isa's remote transfers as A2/A3 builds them (include/pto/comm/a2a3/
TPut.hpp TPUT_IMPL, TGet.hpp TGET_IMPL at pto-isa 3186c381; isa/59_comm_transfers.toml's
[[composite]] records), lowered to the TLOAD / TSTORE records, flags and barriers the header
issues, in its order.

The GM slice is rows x cols elements (GlobalTensor dims 3 and 4; the header's outer dims 0-2 are
one call a slice here), rows src_stride elements apart at src and dst_stride apart at dst (ND).
With one staging tile of valid region vr x vc (GetValidRow / GetValidCol):

- the slice fits (rows <= vr, cols <= vc): TLOAD, MTE2 -> MTE3 flag, TSTORE, MTE3 -> MTE2 flag
  on EVENT_ID0, no barrier; TLOAD's ND assert wants the tile's valid region to be the slice's
  ("The validRow of TileData must be equal to (Shape0 * ... * Shape3) of ND shape!");
- otherwise chunks of vr x vc, row chunks outer (TputChunkedLoop / TputProcessSlice), each
  TputTransferOnce: TLOAD, MTE2 -> MTE3 flag, pipe_barrier(PIPE_ALL), TSTORE, MTE3 -> MTE2 flag.
  A last chunk narrower than the tile needs a DYNAMIC valid region (a tile allocated with
  valid=), whose valid region the header sets chunk by chunk; a static tile's is its shape, and
  the header asserts that the slice divides into it (TputChunkedDispatch's PTO_ASSERT);
- when the tile's valid region is its whole shape, its rows are even and the slice is 8 to 16
  chunks (canUseIntraTilePingPong), each whole-tile chunk goes as two halves of the tile whose
  TLOAD and TSTORE overlap (TputIntraPingPongOneChunk: half 1's TLOAD is issued with half 0's
  TSTORE, on EVENT_ID1 / EVENT_ID0); a partial chunk as TputTransferOnce.

With a second tile (pong=, the ping-pong form) the chunks alternate between the two
(TputChunkedPingPong): each chunk's TLOAD is issued with the previous chunk's TSTORE, and the last
is flushed; a slice that fits one tile is TputTransferOnce. atomic='add' (TPUT only) makes every
TSTORE an atomic add (AtomicType::AtomicAdd, TSTORE_IMPL<..., atomicType>).

The staging tiles are Vec tiles in UB (TPUT.md: "must be pre-allocated in Unified Buffer"), so
the transfers are vector-core code. Each record is an ordinary TLOAD / TSTORE: priced, ordered,
race-checked and seen by the L2 as the kernel's own. Registered in registry.py's LOWERINGS;
codegen.py imports it. Its Stager, Region and PingPong and the checks at its end are the
collectives' too (frontend/comm_collectives.py: TBROADCAST, TGATHER, TSCATTER, TREDUCE).
"""
from __future__ import annotations

import dataclasses

from .. import dtypes
from .aicore_builtins import emit_pipe_barrier
from .builtin_checks import aicore_only, refusals_told_as
from .gm_transfers import lower_tload, lower_tstore, slice_offset
from .layout_builtins import window_view
from .registry import LOWERINGS
from .values import NONE, Const, Ptr, Text

_HEADERS = {"tput": "include/pto/comm/a2a3/TPut.hpp", "tget": "include/pto/comm/a2a3/TGet.hpp"}
_ND = Text("ND")
I32 = dtypes.int32
PING_PONG_CHUNKS = (8, 16)      # TputChunkedDispatch: totalChunkCount >= 8 && totalChunkCount <= 16


@dataclasses.dataclass(frozen=True)
class Region:
    """Where a chunk is in GM: the chunk at (r0, c0) of the slice at base, rows stride elements
    apart (stride: a Const or a run-time int32 value)."""
    base: Ptr
    stride: object
    r0: int = 0
    c0: int = 0

    def moved(self, rows, cols=0):
        """The region rows rows and cols columns further on (a rank's block of a gather's dst)."""
        return dataclasses.replace(self, r0=self.r0 + rows, c0=self.c0 + cols)


@dataclasses.dataclass
class Stager:
    """One call of a header that stages GM data through UB tiles (TPut.hpp, TGet.hpp and the
    collectives of frontend/comm_collectives.py): its TLOADs and TSTOREs of chunks, flags and
    barriers, each an ordinary record, a refusal of one told as the call's."""
    comp: object
    node: object
    call: str
    atomic: object = NONE         # NONE or Text('add'): every TSTORE an atomic add (TPUT only)

    def ptr(self, region):
        """The pointer to region's chunk (a header's basePtr + r * st3 + c * st4, st4 = 1)."""
        stride = region.stride
        known = int(stride.value) if isinstance(stride, Const) else None
        return dataclasses.replace(region.base, offset=slice_offset(self.comp, self.node, region.base.offset, stride,
                                                                    known, region.r0, region.c0))

    def load(self, tile, region):
        """TLOAD of the chunk at region, tile's valid region of it."""
        with self._as_call("TLOAD", tile):
            lower_tload(self.comp, self.node, {"tile": tile, "ptr": self.ptr(region), "stride": region.stride,
                                               "layout": _ND})

    def store(self, region, tile):
        """TSTORE of tile's valid region to the chunk at region."""
        with self._as_call("TSTORE", tile):
            lower_tstore(self.comp, self.node, {"ptr": self.ptr(region), "tile": tile, "stride": region.stride,
                                                "layout": _ND, "atomic": self.atomic, "relu": NONE, "quant": NONE})

    def flag(self, op, src, dst, event):
        self.comp._flag(op, self.node, {"src_pipe": Text(src), "dst_pipe": Text(dst),
                                        "event": Const(event, I32)})

    def set_wait(self, src, dst, event):
        self.flag("SET_FLAG", src, dst, event)
        self.flag("WAIT_FLAG", src, dst, event)

    def barrier(self):
        emit_pipe_barrier(self.comp, self.node)

    def once(self, tile, src, dst):
        """TputTransferOnce / TgetTransferOnce: the chunk at src to dst through tile."""
        self.load(tile, src)
        self.set_wait("PIPE_MTE2", "PIPE_MTE3", 0)
        self.barrier()
        self.store(dst, tile)
        self.set_wait("PIPE_MTE3", "PIPE_MTE2", 0)

    def _as_call(self, what, tile):
        """A TLOAD's or TSTORE's refusal of a chunk, told as the call's."""
        return refusals_told_as(self.comp, self.node, f"{self.call}: the {what} of a {_extent_text(tile)} chunk "
                                                      f"through '{tile.name}' refuses it: ")


class PingPong:
    """The ping-pong state of the headers' two-tile forms (TputPingPongState,
    TbroadcastPingPongState, TgatherPingPongState, TscatterPingPongState) and its two steps,
    ProcessChunk and Flush / Epilogue: a chunk's TLOAD into one tile is issued with the TSTOREs
    of the chunk pending in the other, on EVENT_ID0 for the ping tile and EVENT_ID1 for the pong
    tile. barrier: TPut.hpp / TGet.hpp put a pipe_barrier(PIPE_ALL) before each pending TSTORE,
    the collectives do not. A chunk has one destination, or one per rank (TBROADCAST)."""

    def __init__(self, stager, ping, pong, barrier=True):
        self.x, self.tiles, self.barrier = stager, (ping, pong), barrier
        self.use_ping, self.pending = True, None          # pending: (tile view, destinations)

    def chunk(self, src, dests, rows, cols):
        """ProcessChunk of the rows x cols chunk at src, bound for the regions dests."""
        x = self.x
        here, there = (0, 1) if self.use_ping else (1, 0)
        view = with_valid(self.tiles[here], rows, cols)
        if self.pending is not None:
            stored, to = self.pending
            x.flag("WAIT_FLAG", "PIPE_MTE2", "PIPE_MTE3", there)
            self._stores(stored, to)
            x.load(view, src)
            x.flag("SET_FLAG", "PIPE_MTE3", "PIPE_MTE2", there)
            x.flag("SET_FLAG", "PIPE_MTE2", "PIPE_MTE3", here)
            x.flag("WAIT_FLAG", "PIPE_MTE3", "PIPE_MTE2", there)
        else:
            x.load(view, src)
            x.flag("SET_FLAG", "PIPE_MTE2", "PIPE_MTE3", here)
        self.pending = (view, tuple(dests))
        self.use_ping = not self.use_ping

    def flush(self):
        if self.pending is None:
            return
        x, last = self.x, 1 if self.use_ping else 0
        stored, to = self.pending
        x.flag("WAIT_FLAG", "PIPE_MTE2", "PIPE_MTE3", last)
        self._stores(stored, to)
        x.set_wait("PIPE_MTE3", "PIPE_MTE2", last)

    def _stores(self, tile, dests):
        if self.barrier:
            self.x.barrier()
        for region in dests:
            self.x.store(region, tile)


def with_valid(tile, rows, cols):
    """tile with valid region rows x cols: what the header's RowMaskInternal / ColMaskInternal
    (or a half tile's constructor) set before a chunk's TLOAD."""
    info = tile.tile
    if (rows, cols) == valid_of(tile):
        return tile
    return dataclasses.replace(tile, tile=dataclasses.replace(info, valid_rows=Const(rows, I32, weak=False),
                                                              valid_cols=Const(cols, I32, weak=False)))


def valid_of(tile):
    """A tile's valid (rows, cols), each None when a run-time value."""
    info = tile.tile
    return tuple(int(v.value) if isinstance(v, Const) else None for v in (info.valid_rows, info.valid_cols))


def _extent_text(tile):
    rows, cols = valid_of(tile)
    return f"{rows} x {cols}"


def chunks_of(rows, cols, vr, vc):
    """The header's 2-D sliding: (r0, c0, rows, cols) of each vr x vc chunk of a rows x cols
    slice, row chunks outer, the last of a row or column partial."""
    return [(r0, c0, min(vr, rows - r0), min(vc, cols - c0)) for r0 in range(0, rows, vr) for c0 in range(0, cols, vc)]


@LOWERINGS.lowering("tput", "tget", checks=(aicore_only,), per_builtin=True)
def lower_comm_transfer(comp, node, args, builtin):
    """TPUT_IMPL / TGET_IMPL of args, one or two staging tiles."""
    name = builtin.name
    call, header = f"pto.{name}", _HEADERS[name]
    vector_only(comp, node, call)
    tile = staging_tile(comp, node, call, args["tile"], "tile")
    pong = None if args["pong"] is NONE else staging_tile(comp, node, call, args["pong"], "pong")
    dst, src = (gm_operand(comp, node, call, args[k], k, tile) for k in ("dst", "src"))
    vr, vc = constant_valid(comp, node, call, tile)
    if pong is not None:
        check_pong(comp, node, call, tile, pong)
    rows, cols = (extent(comp, node, call, args[k], default, k) for k, default in (("rows", vr), ("cols", vc)))
    dst_stride, src_stride = (args[k] if args[k] is not NONE else Const(cols, I32)
                              for k in ("dst_stride", "src_stride"))
    atomic = args.get("atomic", NONE)
    if isinstance(atomic, Const) and atomic.value is None:
        atomic = NONE
    if atomic is not NONE and not (isinstance(atomic, Text) and atomic.value == "add"):
        comp.error(node, f"{call}: atomic must be None or 'add' (pto-isa's AtomicType::AtomicNone, AtomicAdd)")
    x = Stager(comp, node, call, atomic)
    if rows == 0 or cols == 0:
        return                                       # the header returns: nothing to move
    at_src, at_dst = Region(src, src_stride), Region(dst, dst_stride)
    if rows <= vr and cols <= vc:
        whole_slice_load(comp, node, call, header, tile, rows, cols)
        if pong is not None:
            x.once(tile, at_src, at_dst)
            return
        x.load(tile, at_src)
        x.set_wait("PIPE_MTE2", "PIPE_MTE3", 0)
        x.store(at_dst, tile)
        x.set_wait("PIPE_MTE3", "PIPE_MTE2", 0)
        return
    divisible(comp, node, call, tile, rows, cols, f"\"{name.upper()} chunked: shape{{dim}} must be divisible by "
              "tile Valid{which} when Valid{which} is static\", " + header)
    chunks = chunks_of(rows, cols, vr, vc)
    if pong is not None:
        pp = PingPong(x, tile, pong)
        for r0, c0, nr, nc in chunks:
            pp.chunk(at_src.moved(r0, c0), (at_dst.moved(r0, c0),), nr, nc)
        pp.flush()
        return
    info = tile.tile
    split = ((vr, vc) == (info.rows, info.cols) and info.rows >= 2 and info.rows % 2 == 0
             and PING_PONG_CHUNKS[0] <= len(chunks) <= PING_PONG_CHUNKS[1])
    halves = None
    for r0, c0, nr, nc in chunks:
        if split and (nr, nc) == (info.rows, info.cols):
            half = info.rows // 2
            if halves is None:           # TASSIGN of the two halves (TputIntraPingPongOneChunk)
                halves = [window_view(comp, node, tile, r, 0, half, info.cols, suffix)
                          for r, suffix in ((0, "ping_half"), (half, "pong_half"))]
            pp = PingPong(x, *halves)
            pp.chunk(at_src.moved(r0, c0), (at_dst.moved(r0, c0),), half, nc)
            pp.chunk(at_src.moved(r0 + half, c0), (at_dst.moved(r0 + half, c0),), half, nc)
            pp.flush()
        else:
            x.once(with_valid(tile, nr, nc), at_src.moved(r0, c0), at_dst.moved(r0, c0))


def vector_only(comp, node, call):
    """The staging tiles are in UB: the call is vector-core code."""
    if comp.section not in ("vector", "vector0"):
        comp.error(node, f"{call} stages its chunks in a UB tile (MTE2 -> UB -> MTE3): it is vector-core code",
                   "call it inside `with pto.vector():`")


def staging_tile(comp, node, call, t, what):
    """A RowMajor Vec tile of its own dtype with contiguous rows (the staging tile in UB)."""
    if not (isinstance(t, Ptr) and t.tile is not None):
        comp.error(node, f"{call}: {what} must be a Vec tile from pto.alloc_tile(..., loc=pto.Vec), the staging "
                         "buffer in UB")
    info = t.tile
    if info.loc != "Vec" or info.layout != "row" or info.storage is not None or not info.contiguous:
        comp.error(node, f"{call}: {what} '{t.name}' must be a RowMajor Vec tile of its own dtype with contiguous "
                         f"rows (the staging buffer in UB); it is a {info.loc} tile"
                         f"{'' if info.layout == 'row' else ' of layout ' + info.layout}",
                   "allocate it with pto.alloc_tile(rows, cols, dtype, loc=pto.Vec)")
    return t


def constant_valid(comp, node, call, tile):
    """The staging tile's valid (rows, cols), compile-time constants, each at least 1 (the
    headers' PTO_ASSERT(tileValidRow > 0, ...))."""
    vr, vc = valid_of(tile)
    if vr is None or vc is None:
        comp.error(node, f"{call}: the valid region of '{tile.name}' is a value computed while the kernel runs; "
                         "its chunks are laid out when the kernel compiles",
                   "allocate the staging tile with a constant valid region")
    if vr < 1 or vc < 1:
        comp.error(node, f"{call}: the staging tile '{tile.name}' has a {vr} x {vc} valid region (the header's "
                         f"PTO_ASSERT: \"tileValid{'Row' if vr < 1 else 'Col'} must be greater than 0\")",
                   "give the staging tile at least one valid row and column")
    return vr, vc


def gm_operand(comp, node, call, p, what, tile, rule="TileData element type must match GlobalData element type"):
    """dst or src: a pointer into a device tensor of the staging tile's dtype."""
    p = comp.require_ptr(p, node, f"{call}: {what}")
    if p.space != "hbm":
        comp.error(node, f"{call}: {what} must point into a device tensor (GM); '{p.name}' is in UB / L1",
                   "pass a tensor argument (plus an offset)")
    if p.dtype != tile.dtype:
        comp.error(node, f"{call}: '{p.name}' holds {p.dtype} but the staging tile '{tile.name}' holds "
                         f"{tile.dtype} (\"{rule}\")", "allocate the staging tile with the tensors' dtype")
    return p


def check_pong(comp, node, call, ping, pong, rule="TPUT.md: \"pingTile and pongTile must have the same type and "
               "dimensions\"", names=("ping", "pong"), apart="TPUT.md: \"Must reside at non-overlapping UB offsets\""):
    """pong: the same type and shape as the ping tile (one TileData type), at UB words of its own
    (apart: why)."""
    a, b = ping.tile, pong.tile
    if (pong.dtype, b.rows, b.cols, valid_of(pong), b.dynamic) != (ping.dtype, a.rows, a.cols, valid_of(ping),
                                                                   a.dynamic):
        comp.error(node, f"{call}: the {names[0]} tile '{ping.name}' and the {names[1]} tile '{pong.name}' must have "
                         f"the same type and dimensions ({rule}): {a.rows} x {a.cols} {ping.dtype} against "
                         f"{b.rows} x {b.cols} {pong.dtype}", "allocate both with the same alloc_tile arguments")
    lo = [comp.buffers[t.slot].offset for t in (ping, pong)]
    if abs(lo[0] - lo[1]) < a.rows * a.cols:
        comp.error(node, f"{call}: the {names[0]} tile '{ping.name}' and the {names[1]} tile '{pong.name}' overlap "
                         f"in UB ({apart})", "allocate two tiles, not a view of one")


def extent(comp, node, call, given, default, what):
    """rows or cols of the GM slice: a compile-time int (a kernel argument specialises the kernel
    on its value), by default the staging tile's valid one."""
    if given is NONE:
        return default
    n = comp.int_constant(given, node, f"{call}: {what}")
    if n is None:
        comp._static_int(given, node, f"{call}: {what}")
    if n < 0:
        comp.error(node, f"{call}: {what} is {n}; a GM slice has at least 0 {what}")
    return n


def whole_slice_load(comp, node, call, header, tile, rows, cols, why=None):
    """A header's TLOAD of a whole rows x cols tensor into tile (the slice fits it, or why says
    what else led there): TLOAD's ND path asserts that the tile's valid region is the tensor's
    (include/pto/npu/a2a3/TLoad.hpp)."""
    vr, vc = valid_of(tile)
    if (rows, cols) == (vr, vc):
        return
    what = (f"the {rows} x {cols} slice fits '{tile.name}' (valid {vr} x {vc}), so {header} moves it in one TLOAD "
            "of the tile" if why is None else f"{why}, so {header} moves the {rows} x {cols} slice in one TLOAD of "
            f"'{tile.name}' (valid {vr} x {vc})")
    comp.error(node, f"{call}: {what}, whose ND path asserts that the tile's valid region is the slice's (\"The "
                     "validRow of TileData must be equal to (Shape0 * Shape1 * Shape2 * Shape3) of ND shape!\", "
                     "include/pto/npu/a2a3/TLoad.hpp)", f"allocate the tile with valid=({rows}, {cols})")


def divisible(comp, node, call, tile, rows, cols, assertion):
    """A static valid region must divide the slice into whole chunks (the headers' chunked
    PTO_ASSERTs; a DYNAMIC one, a tile allocated with valid=, may end in partial chunks).
    assertion: the header's message with {dim} (3 or 4), {which} (Row or Col) and {per} ("per-rank "
    for dim 3) to fill."""
    vr, vc = valid_of(tile)
    if tile.tile.dynamic or not (rows % vr or cols % vc):
        return
    dim, which = (3, "Row") if rows % vr else (4, "Col")
    comp.error(node, f"{call}: the {rows} x {cols} slice does not divide into '{tile.name}''s static {vr} x {vc} "
                     f"chunks ({assertion.format(dim=dim, which=which, per='per-rank ' if dim == 3 else '')})",
               "allocate the staging tile with valid= (a DYNAMIC valid region: partial chunks are then allowed), "
               "or choose a tile that divides the slice")
