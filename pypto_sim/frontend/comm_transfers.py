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
codegen.py imports it.
"""
from __future__ import annotations

import dataclasses
from contextlib import contextmanager

from .. import dtypes
from ..errors import CompileError
from .aicore_builtins import PIPE_ALL
from .builtin_checks import aicore_only
from .gm_transfers import lower_tload, lower_tstore, slice_offset
from .layout_builtins import window_view
from .registry import LOWERINGS
from .values import NONE, Const, Ptr, Text

_HEADERS = {"tput": "include/pto/comm/a2a3/TPut.hpp", "tget": "include/pto/comm/a2a3/TGet.hpp"}
_ND = Text("ND")
I32 = dtypes.int32
PING_PONG_CHUNKS = (8, 16)      # TputChunkedDispatch: totalChunkCount >= 8 && totalChunkCount <= 16


@dataclasses.dataclass
class _Transfer:
    """One call's operands, fixed once checked: where the chunks come from and go to."""
    comp: object
    node: object
    call: str
    dst: Ptr
    src: Ptr
    dst_stride: object            # Const or a run-time int32 value
    src_stride: object
    atomic: object                # NONE or Text('add')

    def chunk_ptr(self, which, r0, c0):
        """src's or dst's pointer at the slice's (r0, c0)."""
        base, stride = (self.src, self.src_stride) if which == "src" else (self.dst, self.dst_stride)
        known = int(stride.value) if isinstance(stride, Const) else None
        return dataclasses.replace(base, offset=slice_offset(self.comp, self.node, base.offset, stride, known,
                                                             r0, c0))

    def load(self, tile, r0, c0):
        """TLOAD of the chunk at (r0, c0), tile's valid region of it, from src."""
        with self._as_call("TLOAD", tile):
            lower_tload(self.comp, self.node, {"tile": tile, "ptr": self.chunk_ptr("src", r0, c0),
                                               "stride": self.src_stride, "layout": _ND})

    def store(self, tile, r0, c0):
        """TSTORE of tile's valid region to the chunk at (r0, c0) of dst."""
        with self._as_call("TSTORE", tile):
            lower_tstore(self.comp, self.node, {"ptr": self.chunk_ptr("dst", r0, c0), "tile": tile,
                                                "stride": self.dst_stride, "layout": _ND, "atomic": self.atomic,
                                                "relu": NONE, "quant": NONE})

    def flag(self, op, src, dst, event):
        self.comp._flag(op, self.node, {"src_pipe": Text(src), "dst_pipe": Text(dst),
                                        "event": Const(event, I32)})

    def set_wait(self, src, dst, event):
        self.flag("SET_FLAG", src, dst, event)
        self.flag("WAIT_FLAG", src, dst, event)

    def barrier(self):
        self.comp.emit("PIPE_BARRIER", None, (), None, self.node, aux=(PIPE_ALL, 0, 0))

    def once(self, tile, r0, c0):
        """TputTransferOnce / TgetTransferOnce."""
        self.load(tile, r0, c0)
        self.set_wait("PIPE_MTE2", "PIPE_MTE3", 0)
        self.barrier()
        self.store(tile, r0, c0)
        self.set_wait("PIPE_MTE3", "PIPE_MTE2", 0)

    @contextmanager
    def _as_call(self, what, tile):
        """A TLOAD's or TSTORE's refusal of a chunk, told as the call's."""
        try:
            yield
        except CompileError as exc:
            text = str(exc).split("\n")[0]
            where = f"kernel '{exc.kernel}', {exc.file}:{exc.line}: "
            self.comp.error(self.node, f"{self.call}: the {what} of a {_extent_text(tile)} chunk through "
                                       f"'{tile.name}' refuses it: "
                                       f"{text[len(where):] if text.startswith(where) else text}")


class _PingPong:
    """TputPingPongState and its two steps, ProcessChunk and Flush: a chunk's TLOAD into one tile
    is issued with the TSTORE of the chunk pending in the other, on EVENT_ID0 for the ping tile
    and EVENT_ID1 for the pong tile."""

    def __init__(self, xfer, ping, pong):
        self.xfer, self.tiles = xfer, (ping, pong)
        self.use_ping, self.pending = True, None          # pending: (tile view, r0, c0)

    def chunk(self, r0, c0, rows, cols):
        """ProcessChunk of the rows x cols chunk at (r0, c0) of the slice."""
        x = self.xfer
        here, there = (0, 1) if self.use_ping else (1, 0)
        view = with_valid(self.tiles[here], rows, cols)
        if self.pending is not None:
            stored, s0, s1 = self.pending
            x.flag("WAIT_FLAG", "PIPE_MTE2", "PIPE_MTE3", there)
            x.barrier()
            x.store(stored, s0, s1)
            x.load(view, r0, c0)
            x.flag("SET_FLAG", "PIPE_MTE3", "PIPE_MTE2", there)
            x.flag("SET_FLAG", "PIPE_MTE2", "PIPE_MTE3", here)
            x.flag("WAIT_FLAG", "PIPE_MTE3", "PIPE_MTE2", there)
        else:
            x.load(view, r0, c0)
            x.flag("SET_FLAG", "PIPE_MTE2", "PIPE_MTE3", here)
        self.pending = (view, r0, c0)
        self.use_ping = not self.use_ping

    def flush(self):
        if self.pending is None:
            return
        x, last = self.xfer, 1 if self.use_ping else 0
        stored, s0, s1 = self.pending
        x.flag("WAIT_FLAG", "PIPE_MTE2", "PIPE_MTE3", last)
        x.barrier()
        x.store(stored, s0, s1)
        x.set_wait("PIPE_MTE3", "PIPE_MTE2", last)


def with_valid(tile, rows, cols):
    """tile with valid region rows x cols: what the header's RowMaskInternal / ColMaskInternal
    (or a half tile's constructor) set before a chunk's TLOAD."""
    info = tile.tile
    if (rows, cols) == _valid_of(info):
        return tile
    return dataclasses.replace(tile, tile=dataclasses.replace(info, valid_rows=Const(rows, I32, weak=False),
                                                              valid_cols=Const(cols, I32, weak=False)))


def _valid_of(info):
    return tuple(int(v.value) if isinstance(v, Const) else None for v in (info.valid_rows, info.valid_cols))


def _extent_text(tile):
    rows, cols = _valid_of(tile.tile)
    return f"{rows} x {cols}"


@LOWERINGS.lowering("tput", "tget", checks=(aicore_only,), per_builtin=True)
def lower_comm_transfer(comp, node, args, builtin):
    """TPUT_IMPL / TGET_IMPL of args, one or two staging tiles."""
    name = builtin.name
    call, header = f"pto.{name}", _HEADERS[name]
    if comp.section not in ("vector", "vector0"):
        comp.error(node, f"{call} stages its chunks in a UB tile (MTE2 -> UB -> MTE3): it is vector-core code",
                   "call it inside `with pto.vector():`")
    tile = _staging_tile(comp, node, call, args["tile"], "tile")
    pong = None if args["pong"] is NONE else _staging_tile(comp, node, call, args["pong"], "pong")
    dst, src = (_gm(comp, node, call, args[k], k, tile) for k in ("dst", "src"))
    vr, vc = _valid_of(tile.tile)
    if vr is None or vc is None:
        comp.error(node, f"{call}: the valid region of '{tile.name}' is a value computed while the kernel runs; "
                         "its chunks are laid out when the kernel compiles",
                   "allocate the staging tile with a constant valid region")
    if pong is not None:
        _check_pong(comp, node, call, tile, pong)
    rows, cols = (_extent(comp, node, call, args[k], default, k) for k, default in (("rows", vr), ("cols", vc)))
    strides = [args[k] if args[k] is not NONE else Const(cols, I32) for k in ("dst_stride", "src_stride")]
    atomic = args.get("atomic", NONE)
    if isinstance(atomic, Const) and atomic.value is None:
        atomic = NONE
    if atomic is not NONE and not (isinstance(atomic, Text) and atomic.value == "add"):
        comp.error(node, f"{call}: atomic must be None or 'add' (pto-isa's AtomicType::AtomicNone, AtomicAdd)")
    xfer = _Transfer(comp, node, call, dst, src, strides[0], strides[1], atomic)
    if rows == 0 or cols == 0:
        return                                       # the header returns: nothing to move
    if rows <= vr and cols <= vc:
        if (rows, cols) != (vr, vc):
            comp.error(node, f"{call}: the {rows} x {cols} slice fits '{tile.name}' (valid {vr} x {vc}), so "
                             f"{header} moves it in one TLOAD of the tile, whose ND path asserts that the tile's "
                             "valid region is the slice's (\"The validRow of TileData must be equal to (Shape0 * "
                             "Shape1 * Shape2 * Shape3) of ND shape!\", tload_common.hpp)",
                       f"allocate the staging tile with valid=({rows}, {cols})")
        if pong is not None:
            xfer.once(tile, 0, 0)
            return
        xfer.load(tile, 0, 0)
        xfer.set_wait("PIPE_MTE2", "PIPE_MTE3", 0)
        xfer.store(tile, 0, 0)
        xfer.set_wait("PIPE_MTE3", "PIPE_MTE2", 0)
        return
    if not tile.tile.dynamic and (rows % vr or cols % vc):
        comp.error(node, f"{call}: the {rows} x {cols} slice does not divide into '{tile.name}''s static {vr} x "
                         f"{vc} chunks (\"{name.upper()} chunked: shape{3 if rows % vr else 4} must be divisible by "
                         f"tile Valid{'Row' if rows % vr else 'Col'} when Valid{'Row' if rows % vr else 'Col'} is "
                         f"static\", {header})",
                   "allocate the staging tile with valid= (a DYNAMIC valid region: partial chunks are then "
                   "allowed), or choose a tile that divides the slice")
    chunks = [(r0, c0, min(vr, rows - r0), min(vc, cols - c0))
              for r0 in range(0, rows, vr) for c0 in range(0, cols, vc)]
    if pong is not None:
        pp = _PingPong(xfer, tile, pong)
        for r0, c0, nr, nc in chunks:
            pp.chunk(r0, c0, nr, nc)
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
                halves = [window_view(comp, node, tile, r, 0, half, info.cols) for r in (0, half)]
            pp = _PingPong(xfer, *halves)
            pp.chunk(r0, c0, half, nc)
            pp.chunk(r0 + half, c0, half, nc)
            pp.flush()
        else:
            xfer.once(with_valid(tile, nr, nc), r0, c0)


def _staging_tile(comp, node, call, t, what):
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


def _gm(comp, node, call, p, what, tile):
    """dst or src: a pointer into a device tensor of the staging tile's dtype."""
    p = comp.require_ptr(p, node, f"{call}: {what}")
    if p.space != "hbm":
        comp.error(node, f"{call}: {what} must point into a device tensor (GM); '{p.name}' is in UB / L1",
                   "pass a tensor argument (plus an offset)")
    if p.dtype != tile.dtype:
        comp.error(node, f"{call}: '{p.name}' holds {p.dtype} but the staging tile '{tile.name}' holds "
                         f"{tile.dtype} (\"TileData element type must match GlobalData element type\")",
                   "allocate the staging tile with the tensors' dtype")
    return p


def _check_pong(comp, node, call, ping, pong):
    """pong: the same type and shape as the ping tile, at a UB offset of its own (TPUT.md)."""
    a, b = ping.tile, pong.tile
    if (pong.dtype, b.rows, b.cols, _valid_of(b), b.dynamic) != (ping.dtype, a.rows, a.cols, _valid_of(a),
                                                                 a.dynamic):
        comp.error(node, f"{call}: the ping tile '{ping.name}' and the pong tile '{pong.name}' must have the same "
                         f"type and dimensions (TPUT.md: \"pingTile and pongTile must have the same type and "
                         f"dimensions\"): {a.rows} x {a.cols} {ping.dtype} against {b.rows} x {b.cols} {pong.dtype}",
                   "allocate both with the same alloc_tile arguments")
    lo = [comp.buffers[t.slot].offset for t in (ping, pong)]
    words = a.rows * a.cols
    if abs(lo[0] - lo[1]) < words:
        comp.error(node, f"{call}: the ping tile '{ping.name}' and the pong tile '{pong.name}' overlap in UB "
                         "(TPUT.md: \"Must reside at non-overlapping UB offsets\")",
                   "allocate two tiles, not a view of one")


def _extent(comp, node, call, given, default, what):
    """rows or cols of the GM slice: a compile-time int (a kernel argument specialises the kernel
    on its value), by default the staging tile's valid one."""
    if given is NONE:
        return default
    n = comp._static_int(given, node, f"{call}: {what}")
    if n < 0:
        comp.error(node, f"{call}: {what} is {n}; a GM slice has at least 0 {what}")
    return n
