"""Multi-buffered typed tiles whose flags the compiler places: ``pto.tile_group``.

    l1 = pto.tile_group(2, (BM, BK, pto.float16, pto.Mat), (BK, BN, pto.float16, pto.Mat),
                        producer=pto.PIPE_MTE2, consumer=pto.PIPE_MTE1)
    a, b = l1.next()    # WAIT_FLAG(consumer -> producer, ev): the buffer's last reader is done
    pto.tload(a, ...)   # the producer fills it
    l1.ready(a)         # SET_FLAG(producer -> consumer, ev)
    l1.take(a)          # WAIT_FLAG(producer -> consumer, ev): the consumer may read it
    pto.textract(..., a)
    l1.release(a)       # SET_FLAG(consumer -> producer, ev): the producer may refill it

This is Ascend C's TQue (AllocTensor / EnQue / DeQue / FreeTensor with BUFFER_NUM) and PyPTO
Pro's ``make_tile_group(...).next()`` lowered at compile time into the SET_FLAG / WAIT_FLAG
instructions an expert writes by hand (examples/gemm_manual.py); there is no instruction of its
own. The group is a compile-time object: ``next()`` takes buffers round-robin, so which buffer
(and so which tile operands and event id) a statement uses is known when it is compiled. Hence:

- creating the group allocates ``depth`` copies of each member tile (member by member); the
  reverse flag of every buffer (SET_FLAG consumer -> producer) is pre-armed just before the
  next group operation, loop or if, and the end of the section (``with pto.cube():`` /
  ``with pto.vector():``) drains them (WAIT_FLAG), as experts do;
- a run-time loop's body must leave every group as it found it (a multiple of ``depth``
  buffers per iteration, each released), else the buffer an iteration uses would depend on the
  iteration: unroll the body ``depth`` times, as examples/gemm_tile_group.py does; likewise a
  run-time ``if`` must not change a group's state;
- a buffer's event id is the same on both of its pipe pairs; ids are the lowest ones not used
  by another group or by the kernel's own set_flag/wait_flag on those pipe pairs, and a later
  set_flag/wait_flag on an id a group owns is a CompileError;
- groups belong to ``sync="manual"`` kernels (in sync="auto" the simulator orders the pipes by
  their data and the group's flags would only add waits).
"""
from __future__ import annotations

import ast
import copy
import dataclasses
from contextlib import contextmanager
from dataclasses import dataclass, field

from .. import dtypes
from .aicore_builtins import EVENT_ID_BOUND, PTO_TO_PIPE
from .values import Const, Ptr
from .aicore_builtins import lower_alloc_tile
from .builtins import BUILTINS

METHODS = ("next", "ready", "take", "release")
# a buffer's life: next() -> filling, ready() -> ready, take() -> taken, release() -> free
FREE, FILLING, READY, TAKEN = "free", "filling", "ready", "taken"
AFTER = {"next": FREE, "ready": FILLING, "take": READY, "release": TAKEN}
BECOMES = {"next": FILLING, "ready": READY, "take": TAKEN, "release": FREE}
ADVICE = {FREE: "call next() to get a buffer", FILLING: "call ready() once the producer has filled it",
          READY: "call take() before the consumer reads it",
          TAKEN: "call release() once the consumer has read it"}


@dataclass
class TileGroup:
    """One ``pto.tile_group(...)`` being compiled: its buffers, event ids and buffer states."""

    name: str
    line: int
    producer: int                  # pipe index
    consumer: int
    buffers: list                  # per buffer: tuple of member tiles (Ptr)
    events: list                   # per buffer: event id
    single: bool                   # one member: next() gives the tile, not a tuple
    states: list = field(default_factory=list)
    lines: list = field(default_factory=list)   # per buffer: line of its last operation
    cursor: int = 0

    def state(self):
        """What a loop or branch must leave unchanged."""
        return (self.cursor, tuple(self.states))

    def buffer_of(self, tile):
        """The index of the buffer holding ``tile``, or None."""
        for i, members in enumerate(self.buffers):
            if any(m.slot == tile.slot for m in members):
                return i
        return None


@dataclass(frozen=True)
class TileGroupMethod:
    """``g.next`` / ``g.ready`` / ``g.take`` / ``g.release``."""

    group: TileGroup
    name: str


class TileGroupLowering:
    """Tile-group half of the kernel compiler (a mixin placed before AICoreTiles)."""

    tile_groups = None           # the groups of the section being compiled
    unarmed = None               # (group, node) whose reverse flags are not yet pre-armed
    group_flags = None           # (src, dst, event) -> group owning it
    kernel_flags = None          # (src, dst, event) -> line of the kernel's own set/wait_flag

    # ---------------------------------------------------------------- creation
    def call_intrinsic(self, func, node):
        if func.name == "tile_group":
            return self.make_tile_group(node)
        return super().call_intrinsic(func, node)

    def make_tile_group(self, node):
        """Allocate the buffers, pick event ids, pre-arm the reverse flags."""
        usage = "g = pto.tile_group(depth, rows, cols, dtype, loc=..., producer=..., consumer=...)"
        if not self.is_aicore or self.section is None:
            self.error(node, "pto.tile_group multi-buffers typed tiles of an AI-core kernel: "
                             "create it inside `with pto.cube():` or `with pto.vector():`", usage)
        if getattr(self.inline_stack[0], "sync", "auto") != "manual":
            self.error(node, "pto.tile_group places set_flag/wait_flag, which only "
                             "@pto.kernel(sync=\"manual\") kernels use",
                       "declare the kernel with @pto.kernel(sync=\"manual\"); in sync=\"auto\" "
                       "alternate plain tiles and the simulator orders the pipes by their data")
        if self.loop_depth or getattr(self, "group_branch_depth", 0):
            self.error(node, "pto.tile_group inside a loop or a run-time if: its flags are "
                             "pre-armed where it is created and drained at the end of the section",
                       "create the group once, before the loop")
        kwargs = {k.arg: k.value for k in node.keywords}
        unknown = set(kwargs) - {"loc", "producer", "consumer"}
        if unknown or not node.args or "producer" not in kwargs or "consumer" not in kwargs:
            self.error(node, "pto.tile_group takes depth, the tile(s) and producer=/consumer= pipes"
                             + (f", not {', '.join(sorted(unknown))}" if unknown else ""), usage)
        depth = self.expr(node.args[0])
        self.int_constant(depth, node, "pto.tile_group: depth")
        if not isinstance(depth, Const) or isinstance(depth.value, bool) or int(depth.value) != depth.value \
                or int(depth.value) < 1:
            self.error(node, "pto.tile_group(depth, ...): depth must be a constant integer >= 1 "
                             "(2 is double buffering)", usage)
        depth = int(depth.value)
        producer = self._pipe_arg(self.expr(kwargs["producer"]), node, "producer")
        consumer = self._pipe_arg(self.expr(kwargs["consumer"]), node, "consumer")
        if producer == consumer:
            self.error(node, "pto.tile_group: producer and consumer are the same pipe, which is in "
                             "order already", "give the pipe that fills the buffers and the one that reads them")
        members = self._member_calls(node, kwargs)
        name = self._target_name(node) or f"group{len(self.group_list())}"
        events = self._free_events(node, name, producer, consumer, depth)
        per_member = []
        for m, call in enumerate(members):
            label = "" if len(members) == 1 else f".{m}"
            tiles = []
            for i in range(depth):
                saved, self.current_statement = getattr(self, "current_statement", None), None
                try:
                    tile = lower_alloc_tile(self, call, self.lookup_builtin("alloc_tile"))
                finally:
                    self.current_statement = saved
                tiles.append(self._name_tile(tile, f"{name}[{i}]{label}"))
            per_member.append(tiles)
        line = getattr(node, "lineno", 0) + self.kernel.line_offset
        group = TileGroup(name, line, producer, consumer,
                          [tuple(t[i] for t in per_member) for i in range(depth)], events,
                          len(members) == 1, [FREE] * depth, [line] * depth)
        for ev in events:
            self.group_flags[(consumer, producer, ev)] = group
            self.group_flags[(producer, consumer, ev)] = group
        self.tile_groups.append(group)
        self.unarmed.append((group, node))
        return group

    def arm_tile_groups(self):
        """Pre-arm the reverse flags of new groups (SET_FLAG consumer -> producer per buffer):
        just before the first statement that may use them (a group operation, a loop, an if,
        the section's end), so that, as in an expert's kernel, the tiles are all allocated first."""
        for group, node in self.unarmed or ():
            for ev in group.events:
                self._group_flag("SET_FLAG", group.consumer, group.producer, ev, node)
        self.unarmed = []

    def _member_calls(self, node, kwargs):
        """alloc_tile calls, one per member: (rows, cols, dtype, loc=) or several (r, c, dt, loc)."""
        args = node.args[1:]
        def call(items, loc):
            keywords = [] if loc is None else [ast.keyword("loc", loc)]
            return ast.copy_location(ast.Call(ast.Name("alloc_tile", ast.Load()), list(items), keywords), node)
        if args and all(isinstance(a, ast.Tuple) for a in args):
            if "loc" in kwargs:
                self.error(node, "pto.tile_group with several member tiles: give each its loc, "
                                 "(rows, cols, dtype, loc), not loc=")
            for a in args:
                if len(a.elts) != 4:
                    self.error(node, f"pto.tile_group member {ast.unparse(a)}: write (rows, cols, dtype, loc)")
            return [call(a.elts[:3], a.elts[3]) for a in args]
        if len(args) != 3:
            self.error(node, "pto.tile_group(depth, rows, cols, dtype, loc=...), or with several tiles "
                             "per buffer pto.tile_group(depth, (rows, cols, dtype, loc), ...)")
        return [call(args, kwargs.get("loc"))]

    def lookup_builtin(self, name):
        """The pto builtin ``name`` (alloc_tile for the group's buffers)."""
        return BUILTINS[name]

    def _name_tile(self, tile: Ptr, name: str) -> Ptr:
        """Name a buffer of the group after it: `l1[0].1` is buffer 0's second member."""
        buf = self.buffers[tile.slot]
        self.buffers[tile.slot] = dataclasses.replace(buf, name=name)
        self.instrs[-1].comment = self.instrs[-1].comment.replace(buf.name, name, 1)
        return dataclasses.replace(tile, name=name)

    def group_list(self):
        """Every group owning flags in this kernel so far."""
        return list({id(g): g for g in self.group_flags.values()}.values())

    def _free_events(self, node, name, producer, consumer, depth):
        taken = {ev for (s, d, ev) in list(self.group_flags) + list(self.kernel_flags)
                 if {s, d} == {producer, consumer}}
        free = [ev for ev in range(EVENT_ID_BOUND) if ev not in taken]
        if len(free) < depth:
            self.error(node, f"tile group '{name}' needs {depth} event ids on the pipe pair "
                             f"{self._pipe_names(producer, consumer)} but only {len(free)} of "
                             f"{EVENT_ID_BOUND} are free (used: {sorted(taken)})",
                       "lower the depth, or free ids used by other groups or set_flag/wait_flag "
                       "on these pipes")
        return free[:depth]

    def _pipe_names(self, a, b):
        names = {index: name for name, index in PTO_TO_PIPE.items()}
        return f"{names[a]} / {names[b]}"

    # ---------------------------------------------------------------- the four operations
    def group_method_call(self, method: TileGroupMethod, node):
        """Lower g.next() / g.ready(t) / g.take(t) / g.release(t) into its flag instruction."""
        g, op = method.group, method.name
        if not any(g is other for other in self.tile_groups or ()):
            self.error(node, f"{g.name}.{op}(): tile group '{g.name}' (line {g.line}) belongs to the "
                             "section it was created in, whose end drained its flags",
                       "create a group in each section that uses one")
        self.arm_tile_groups()
        line = getattr(node, "lineno", 0) + self.kernel.line_offset
        if node.keywords:
            self.error(node, f"{g.name}.{op}(...) takes no keyword arguments")
        if op == "next":
            if node.args:
                self.error(node, f"{g.name}.next() takes no arguments")
            i = g.cursor
        else:
            if len(node.args) != 1:
                self.error(node, f"{g.name}.{op}(t) takes one tile of the buffer (from {g.name}.next())")
            tile = self.expr(node.args[0])
            i = g.buffer_of(tile) if isinstance(tile, Ptr) and tile.tile is not None else None
            if i is None:
                self.error(node, f"{g.name}.{op}({ast.unparse(node.args[0])}): not a tile of group "
                                 f"'{g.name}' (created at line {g.line})",
                           f"pass a tile that {g.name}.next() gave")
        if g.states[i] != AFTER[op]:
            what = f"{g.name}.{op}()" if op == "next" else f"{g.name}.{op}({ast.unparse(node.args[0])})"
            self.error(node, f"{what} on buffer {i} of tile group '{g.name}' (depth {len(g.buffers)}), "
                             f"which is {g.states[i]} since line {g.lines[i]}, not {AFTER[op]}",
                       ADVICE[g.states[i]] + (f"; with depth {len(g.buffers)}, next() reuses a buffer "
                                              f"{len(g.buffers)} next() calls later" if op == "next" else ""))
        ev = g.events[i]
        src, dst, flag = {"next": (g.consumer, g.producer, "WAIT_FLAG"),
                          "ready": (g.producer, g.consumer, "SET_FLAG"),
                          "take": (g.producer, g.consumer, "WAIT_FLAG"),
                          "release": (g.consumer, g.producer, "SET_FLAG")}[op]
        self._group_flag(flag, src, dst, ev, node)
        g.states[i], g.lines[i] = BECOMES[op], line
        if op != "next":
            return Const(0, dtypes.int32)
        g.cursor = (i + 1) % len(g.buffers)
        return g.buffers[i][0] if g.single else tuple(g.buffers[i])

    def _group_flag(self, op, src, dst, ev, node):
        self.emit(op, None, (), None, node, aux=(src, dst, ev))

    def _flag(self, op, node, args):
        """The kernel's own set_flag/wait_flag: refused on an event id a group owns."""
        if self.is_aicore and self.kernel_flags is not None:
            src = self._pipe_arg(args["src_pipe"], node, "src_pipe")
            dst = self._pipe_arg(args["dst_pipe"], node, "dst_pipe")
            event = args["event"]
            if isinstance(event, Const):
                key = (src, dst, int(event.value))
                owner = self.group_flags.get(key)
                if owner is not None:
                    self.error(node, f"{op.lower()}({self._pipe_names(src, dst).replace(' / ', ', ')}, "
                                     f"{key[2]}): event {key[2]} on these pipes belongs to tile group "
                                     f"'{owner.name}' (line {owner.line})",
                               f"use an event id other than {sorted(owner.events)} here, or create the "
                               "group after this statement so it picks other ids")
                self.kernel_flags.setdefault(key, getattr(node, "lineno", 0))
        return super()._flag(op, node, args)

    # ---------------------------------------------------------------- sections, loops, branches
    @contextmanager
    def unit_section(self, kind, node):
        """A section owns its groups: their reverse flags are drained where it ends."""
        if self.group_flags is None:
            self.group_flags, self.kernel_flags = {}, {}
        with super().unit_section(kind, node):
            self.tile_groups, self.unarmed = [], []
            try:
                yield
                self.arm_tile_groups()
                end = copy.copy(node)
                end.lineno = getattr(node, "end_lineno", None) or getattr(node, "lineno", 0)
                for g in self.tile_groups:
                    for i, state in enumerate(g.states):
                        if state != FREE:
                            self.error(end, f"tile group '{g.name}' (line {g.line}): buffer {i} is "
                                            f"{state} since line {g.lines[i]} at the end of the section",
                                       ADVICE[state] + " before the section ends")
                    for ev in g.events:
                        self._group_flag("WAIT_FLAG", g.consumer, g.producer, ev, end)
            finally:
                self.tile_groups, self.unarmed = None, None

    def _group_states(self):
        return [g.state() for g in (self.tile_groups or [])]

    def _check_unchanged(self, before, node, what, hint):
        for g, old in zip(self.tile_groups or [], before):
            if g.state() == old:
                continue
            if g.cursor != old[0]:
                change = f"next() gives buffer {old[0]} at its start but buffer {g.cursor} at its end"
            else:
                i = next(i for i, s in enumerate(g.states) if s != old[1][i])
                change = f"buffer {i} is {old[1][i]} at its start but {g.states[i]} at its end"
            self.error(node, f"{what} changes tile group '{g.name}' (depth {len(g.buffers)}): "
                             f"{change}; a buffer's tiles and event id are chosen at compile time, "
                             "so each pass must leave the group as it found it", hint)

    def loop(self, node, head_fn, step_fn, body, tail_fn=None, prefix_fn=None):
        before = self._group_states()
        super().loop(node, head_fn, step_fn, body, tail_fn, prefix_fn)
        if isinstance(node, (ast.For, ast.While)):
            self._check_unchanged(before, node, "an iteration of this loop",
                                  "use a multiple of depth buffers per iteration, each released: "
                                  "unroll the body depth times (examples/gemm_tile_group.py)")

    def stmt_For(self, node):
        self.arm_tile_groups()
        return super().stmt_For(node)

    def stmt_While(self, node):
        self.arm_tile_groups()
        return super().stmt_While(node)

    def stmt_If(self, node):
        self.arm_tile_groups()
        before, first = self._group_states(), len(self.instrs)
        self.group_branch_depth = getattr(self, "group_branch_depth", 0) + 1
        try:
            super().stmt_If(node)
        finally:
            self.group_branch_depth -= 1
        if any(ins.op == "IF" for ins in self.instrs[first:]):
            self._check_unchanged(before, node, "this run-time if",
                                  "do the group's next/ready/take/release outside the if")

    def group_attribute(self, group: TileGroup, node):
        """``g.next`` and friends; a group has no other attributes."""
        if node.attr not in METHODS:
            self.error(node, f"a tile group has {', '.join(m + '()' for m in METHODS)}, not '{node.attr}'")
        return TileGroupMethod(group, node.attr)
