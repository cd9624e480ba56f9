"""pto.tbroadcast, pto.comm_tgather, pto.comm_tscatter and pto.treduce: pto-isa's collectives as
A2/A3 builds them (include/pto/comm/a2a3/TBroadCast.hpp TBROADCAST_IMPL, TGather.hpp
TGATHER_IMPL, TScatter.hpp TSCATTER_IMPL, TReduce.hpp TREDUCE_IMPL at pto-isa 3186c381;
isa/61_comm_collectives.toml's [[composite]] records), lowered to the TLOAD / TSTORE records,
flags and (TREDUCE) vector ops the header issues, in its order, through comm_transfers.py's
Stager and PingPong. The caller is the root; the ranks are a pto.parallel_group (comm_group.py).

Each rank's tensor is a rows x cols slice (GlobalTensor dims 3 and 4; the outer dims 0-2 are one
call a slice here), rows `src_stride` / `dst_stride` elements apart at the source / destination
(default cols); the staging tile's (TREDUCE: acc's) valid region is vr x vc. The forms, as the
headers write them (EVENT_ID0 unless said):

- TBROADCAST(group, src, tile): one rank: TLOAD of src, MTE2 -> MTE3, TSTORE to the root's
  tensor, MTE3 -> MTE2; a slice that fits: TLOAD, MTE2 -> MTE3, then per rank TSTORE, MTE3 ->
  MTE2; larger: per chunk (TbroadcastChunkTransfer) TLOAD, MTE2 -> MTE3, a TSTORE per rank,
  MTE3 -> MTE2. With pong= the chunks go through TbroadcastPingPongProcessChunk / Epilogue
  (ping EVENT_ID0, pong EVENT_ID1), the pending chunk's TSTOREs to every rank before the next
  TLOAD; one rank and a fitting slice as with one tile.
- TGATHER(group, dst, tile): a slice that fits (TgatherSimple): per rank TLOAD of its tensor,
  MTE2 -> MTE3, TSTORE to dst's rows r * rows.., MTE3 -> MTE2; larger: per rank, per chunk the
  same four steps (TgatherChunkedRowColLoop); with pong= one ping-pong over every rank's chunks
  (TgatherPingPongProcessChunk / Epilogue), a fitting slice as TgatherSimple.
- TSCATTER(group, src, tile): TGATHER's steps from src's rows r * rows.. to rank r's tensor.
- TREDUCE(group, dst, acc, recv, op): per chunk (the whole slice when it fits: TreduceSimple,
  else TreduceProcessChunkSingle) TLOAD of the root's chunk into acc, MTE2 -> V; per other rank
  (in rank order, the root skipped) TLOAD into recv, MTE2 -> V on EVENT_ID1, op(acc, acc, recv)
  (TADD / TMAX / TMIN), V -> MTE2; then V -> MTE3, TSTORE of acc, MTE3 -> MTE2. One rank: TLOAD,
  MTE2 -> MTE3, TSTORE, MTE3 -> MTE2. With pong= (TreduceSimplePingPong / TreducePingPongLoop)
  recv (the ping tile) and pong alternate on EVENT_ID1 / EVENT_ID2: the next rank's TLOAD is
  issued before the current rank's op, V -> MTE2 after each op but the last, V -> MTE3 after it.

A slice that fits is TLOADed whole, and TLOAD's ND assert wants the tile's valid region to be
the slice's; a larger slice's partial chunks need tiles allocated with valid= (DYNAMIC, the
header sets their valid region chunk by chunk), and a static valid region must divide the slice
(the headers' chunked PTO_ASSERTs). Registered in registry.py's LOWERINGS; codegen.py imports it.
"""
from __future__ import annotations

import ast
import dataclasses

from .. import dtypes
from .builtin_checks import aicore_only
from .comm_group import ParallelGroup, check_root, remote_ptr, root_ptr
from .comm_transfers import (PingPong, Region, Stager, check_pong, chunks_of, constant_valid, divisible, extent,
                             gm_operand, staging_tile, vector_only, whole_slice_load, with_valid)
from .registry import LOWERINGS
from .values import NONE, Const, Ptr, Text

I32 = dtypes.int32
MTE2, MTE3, V = "PIPE_MTE2", "PIPE_MTE3", "PIPE_V"
_A2A3 = "include/pto/comm/a2a3/"
# builtin -> pto-isa's name, its header, the argument naming the caller's own tensor, the static_assert
# tying the group's element type to it
COLLECTIVES = {
    "tbroadcast": ("TBROADCAST", _A2A3 + "TBroadCast.hpp", "src", "ParallelGroup element type must match source "
                                                                   "element type"),
    "comm_tgather": ("TGATHER", _A2A3 + "TGather.hpp", "dst", "GlobalData type mismatch!"),
    "comm_tscatter": ("TSCATTER", _A2A3 + "TScatter.hpp", "src", "GlobalData type mismatch!"),
    "treduce": ("TREDUCE", _A2A3 + "TReduce.hpp", "dst", "GlobalData type mismatch!"),
}
# the chunked paths' PTO_ASSERT messages ({dim}: 3 or 4, {which}: Row or Col)
_CHUNKED = {"TBROADCAST": "shape{dim} must be divisible by tile Valid{which} when Valid{which} is static",
            "TGATHER": "{per}DIM_{dim} must be divisible by tile Valid{which} when static",
            "TSCATTER": "{per}DIM_{dim} must be divisible by tile Valid{which} when static",
            "TREDUCE": "shape{dim} must be divisible by tile Valid{which} when Valid{which} is static"}
REDUCE_OPS = {"sum": "TADD", "max": "TMAX", "min": "TMIN"}        # ReduceOp -> detail::ReduceTiles' op


@dataclasses.dataclass
class _Call:
    """One collective call, its operands checked: the group, the tiles, the caller's tensor and
    the slice."""
    x: Stager
    name: str                     # pto-isa's (TBROADCAST, ...)
    header: str
    group: ParallelGroup
    tile: object                  # the staging tile (TREDUCE: acc)
    pong: object                  # the pong tile of the ping-pong form, or None
    local: Region                 # the caller's src (TBROADCAST, TSCATTER) or dst (TGATHER, TREDUCE)
    stride: object                # the rows' stride in the group's tensors
    rows: int
    cols: int

    @property
    def valid(self):
        return tuple(int(v.value) for v in (self.tile.tile.valid_rows, self.tile.tile.valid_cols))

    @property
    def fits(self) -> bool:
        vr, vc = self.valid
        return self.rows <= vr and self.cols <= vc

    def rank(self, r, r0=0, c0=0):
        """Rank r's tensor (r an int or a pointer), at its chunk (r0, c0)."""
        ptr = self.group.tensors[r] if isinstance(r, int) else r
        return Region(ptr, self.stride, r0, c0)

    def chunks(self):
        """The chunks of the slice, once the chunked path's PTO_ASSERTs pass."""
        divisible(self.x.comp, self.x.node, self.x.call, self.tile, self.rows, self.cols,
                  f"\"{self.name} chunked: {_CHUNKED[self.name]}\", {self.header}")
        return chunks_of(self.rows, self.cols, *self.valid)

    def fits_whole(self, *tiles, why=None):
        for t in tiles:
            whole_slice_load(self.x.comp, self.x.node, self.x.call, self.header, t, self.rows, self.cols, why)


def _setup(comp, node, args, builtin, tile_keys):
    """The operands of a collective call, checked as the header's static_asserts and PTO_ASSERTs
    check them; None when the slice is empty (the header returns)."""
    name, header, local_key, rule = COLLECTIVES[builtin.name]
    call = f"pto.{builtin.name}"
    vector_only(comp, node, call)
    group = args["group"]
    if not isinstance(group, ParallelGroup):
        comp.error(node, f"{call}: group must be a pto.parallel_group(tensors, root) (pto-isa's ParallelGroup), "
                         f"got {comp.value_kind(group)}", "g = pto.parallel_group((t0, t1, ...), root)")
    tiles = [staging_tile(comp, node, call, args[k], k) for k in tile_keys]
    if args["pong"] is not NONE:
        tiles.append(staging_tile(comp, node, call, args["pong"], "pong"))
    tile = tiles[0]
    local = gm_operand(comp, node, call, args[local_key], local_key, tile)
    if group.dtype != tile.dtype:
        comp.error(node, f"{call}: the group's tensors hold {group.dtype} but the staging tile '{tile.name}' holds "
                         f"{tile.dtype} (\"{name}: TileData element type must match GlobalData element type\")",
                   "allocate the staging tiles with the tensors' dtype")
    if group.dtype != local.dtype:
        comp.error(node, f"{call}: the group's tensors hold {group.dtype} but {local_key} '{local.name}' holds "
                         f"{local.dtype} (\"{name}: {rule}\")", "give every tensor of the call one dtype")
    names = tuple("staging" if k == "tile" else k for k in tile_keys) + ("pong",)
    for k in range(1, len(tiles)):                   # one TileData type, each tile its own UB words
        for j in range(k):
            check_pong(comp, node, call, tiles[j], tiles[k], "the header takes them as TileData& of one type",
                       (names[j], names[k]), f"{name} keeps different data in each at once")
    check_root(comp, node, call, group)
    vr, vc = constant_valid(comp, node, call, tile)
    rows, cols = (extent(comp, node, call, args[k], d, k) for k, d in (("rows", vr), ("cols", vc)))
    strides = {k: args[k] if args[k] is not NONE else Const(cols, I32) for k in ("dst_stride", "src_stride")}
    local_stride = strides["src_stride" if local_key == "src" else "dst_stride"]
    group_stride = strides["dst_stride" if local_key == "src" else "src_stride"]
    if rows == 0 or cols == 0:
        return None
    pong = tiles[-1] if args["pong"] is not NONE else None
    return _Call(Stager(comp, node, call), name, header, group, tile, pong, Region(local, local_stride), group_stride,
                 rows, cols)


def _bind(comp, node, builtin):
    """The call's arguments; a group written as a tuple or list of pointers is refused with the
    form it takes (the root goes with the ranks)."""
    group = next((k.value for k in node.keywords if k.arg == "group"), node.args[0] if node.args else None)
    if isinstance(group, (ast.Tuple, ast.List, ast.ListComp, ast.GeneratorExp)):
        comp.error(node, f"pto.{builtin.name}: group is a pto.parallel_group, the ranks' pointers and the calling "
                         "rank's index (pto-isa's ParallelGroup(tensors, nranks, rootIdx)), not the pointers alone",
                   f"pto.{builtin.name}(pto.parallel_group({ast.unparse(group)}, root), ...)")
    return comp.bind_call(builtin, node)


@LOWERINGS.lowering("tbroadcast", "comm_tgather", "comm_tscatter", checks=(aicore_only,), binds=False)
def lower_collective(comp, node, builtin):
    """TBROADCAST_IMPL / TGATHER_IMPL / TSCATTER_IMPL of the call, one staging tile or two."""
    c = _setup(comp, node, _bind(comp, node, builtin), builtin, ("tile",))
    if c is not None:
        {"tbroadcast": _broadcast, "comm_tgather": _gather, "comm_tscatter": _scatter}[builtin.name](c)


def _broadcast(c):
    x, tile, n = c.x, c.tile, c.group.size
    if n == 1:                                       # TLOAD of the whole src, whatever the tile
        c.fits_whole(tile, why="with one rank in the group")
        x.load(tile, c.local)
        x.set_wait(MTE2, MTE3, 0)
        x.store(c.rank(0), tile)                     # parallelGroup[rootIdx]; rootIdx is 0
        x.set_wait(MTE3, MTE2, 0)
        return
    if c.fits:
        c.fits_whole(tile)
        x.load(tile, c.local)
        x.set_wait(MTE2, MTE3, 0)
        for r in range(n):
            x.store(c.rank(r), tile)
            x.set_wait(MTE3, MTE2, 0)
        return
    chunks = c.chunks()
    if c.pong is not None:
        pp = PingPong(x, tile, c.pong, barrier=False)
        for r0, c0, nr, nc in chunks:
            pp.chunk(c.local.moved(r0, c0), [c.rank(r, r0, c0) for r in range(n)], nr, nc)
        pp.flush()
        return
    for r0, c0, nr, nc in chunks:                    # TbroadcastChunkTransfer
        view = with_valid(tile, nr, nc)
        x.load(view, c.local.moved(r0, c0))
        x.set_wait(MTE2, MTE3, 0)
        for r in range(n):
            x.store(c.rank(r, r0, c0), view)
        x.set_wait(MTE3, MTE2, 0)


def _gather(c):
    _gather_or_scatter(c, lambda r, r0, c0: (c.rank(r, r0, c0), c.local.moved(r * c.rows + r0, c0)))


def _scatter(c):
    _gather_or_scatter(c, lambda r, r0, c0: (c.local.moved(r * c.rows + r0, c0), c.rank(r, r0, c0)))


def _gather_or_scatter(c, ends):
    """TGATHER's and TSCATTER's steps; ends(r, r0, c0): the source and destination regions of
    rank r's chunk at (r0, c0)."""
    x, tile, n = c.x, c.tile, c.group.size
    if c.fits:                                       # TgatherSimple / TscatterSimple
        c.fits_whole(tile)
        for r in range(n):
            src, dst = ends(r, 0, 0)
            x.load(tile, src)
            x.set_wait(MTE2, MTE3, 0)
            x.store(dst, tile)
            x.set_wait(MTE3, MTE2, 0)
        return
    chunks = c.chunks()
    if c.pong is not None:
        pp = PingPong(x, tile, c.pong, barrier=False)
        for r in range(n):
            for r0, c0, nr, nc in chunks:
                src, dst = ends(r, r0, c0)
                pp.chunk(src, (dst,), nr, nc)
        pp.flush()
        return
    for r in range(n):                               # T*ChunkedRowColLoop
        for r0, c0, nr, nc in chunks:
            src, dst = ends(r, r0, c0)
            view = with_valid(tile, nr, nc)
            x.load(view, src)
            x.set_wait(MTE2, MTE3, 0)
            x.store(dst, view)
            x.set_wait(MTE3, MTE2, 0)


@LOWERINGS.lowering("treduce", checks=(aicore_only,), binds=False)
def lower_treduce(comp, node, builtin):
    """TREDUCE_IMPL of the call: acc and recv, or acc and the ping (recv) and pong tiles."""
    args = _bind(comp, node, builtin)
    op = args["op"]
    if not (isinstance(op, Text) and op.value in REDUCE_OPS):
        comp.error(node, "pto.treduce: op must be 'sum', 'max' or 'min' (pto-isa's ReduceOp::Sum, Max, Min)")
    spec, acc = comp.isa[REDUCE_OPS[op.value]], args["acc"]
    if isinstance(acc, Ptr) and acc.tile is not None and acc.dtype.name not in spec.dtypes:
        comp.error(node, f"pto.treduce: op '{op.value}' is {spec.name} (detail::ReduceTiles), which takes "
                         f"{', '.join(spec.dtypes)} tiles, not {acc.dtype}", "reduce a dtype the vector op takes")
    c = _setup(comp, node, args, builtin, ("acc", "recv"))
    if c is None:
        return
    group, n, x = c.group, c.group.size, c.x
    root = root_ptr(comp, node, x.call, group)
    remotes = [remote_ptr(comp, node, x.call, group, i) for i in range(n - 1)]
    acc, recv, pong = c.tile, args["recv"], c.pong
    reduce = _Reducer(c, spec, remotes)
    if c.fits:
        c.fits_whole(acc)
        if n > 1:
            c.fits_whole(recv, *([pong] if pong is not None and n > 2 else []))
        reduce.chunk(root, acc, recv, pong, 0, 0)
        return
    for r0, c0, nr, nc in c.chunks():                # TreduceProcessChunkSingle / ...PingPong
        views = [None if t is None else with_valid(t, nr, nc) for t in (acc, recv, pong)]
        reduce.chunk(root, *views, r0, c0)


@dataclasses.dataclass
class _Reducer:
    """TREDUCE's steps for one chunk (the whole slice when it fits)."""
    c: _Call
    spec: object
    remotes: list

    def chunk(self, root, acc, recv, pong, r0, c0):
        c, x = self.c, self.c.x
        x.load(acc, c.rank(root, r0, c0))
        if not self.remotes:
            x.set_wait(MTE2, MTE3, 0)
        elif pong is None:
            x.set_wait(MTE2, V, 0)
            for ptr in self.remotes:
                x.load(recv, c.rank(ptr, r0, c0))
                x.set_wait(MTE2, V, 1)
                self.op(acc, recv)
                x.set_wait(V, MTE2, 0)
            x.set_wait(V, MTE3, 0)
        else:
            self.ping_pong(acc, (recv, pong), r0, c0)
        x.store(c.local.moved(r0, c0), acc)
        x.set_wait(MTE3, MTE2, 0)

    def ping_pong(self, acc, tiles, r0, c0):
        """TreduceSimplePingPong's / TreducePingPongLoop's remote loop: rank i + 1's TLOAD before
        rank i's op, the tiles alternating on EVENT_ID1 (ping) and EVENT_ID2 (pong)."""
        c, x, remotes = self.c, self.c.x, self.remotes
        x.flag("SET_FLAG", MTE2, V, 0)               # acc's TLOAD is in flight
        x.load(tiles[0], c.rank(remotes[0], r0, c0))
        x.flag("SET_FLAG", MTE2, V, 1)
        x.flag("WAIT_FLAG", MTE2, V, 0)
        for i in range(len(remotes)):
            nxt = i + 1 < len(remotes)
            if nxt:
                x.load(tiles[(i + 1) % 2], c.rank(remotes[i + 1], r0, c0))
                x.flag("SET_FLAG", MTE2, V, 1 + (i + 1) % 2)
            x.flag("WAIT_FLAG", MTE2, V, 1 + i % 2)
            self.op(acc, tiles[i % 2])
            x.set_wait(V, MTE2 if nxt else MTE3, 0)

    def op(self, acc, recv):
        """detail::ReduceTiles: op(acc, acc, recv)."""
        x = self.c.x
        x.comp.lower_tile_op(self.spec, x.node, {"dst": acc, "a": acc, "b": recv, "n": NONE})
