"""Happens-before race detection for AI-core kernels (check="race"): vector clocks over the
(unit, pipe) queues of one AI core, moved by flags, barriers and cross-core signals; the
RaceError names both instructions, their units and pipes, their lines and the tile or tensor.

Between AI cores (blocks) of one launch nothing orders anything - cross-core flags pair the
units of one core - so ChipGMAccesses, shared by all blocks of the launch, reports every pair
of GM accesses of two cores that share an element, at least one a write, whenever they
happen: the meaning lane kernels' racecheck gives two blocks (checks.py)."""
from __future__ import annotations

import numpy as np

from ..isa import PIPES
from ..exec import gm
from ..exec.aicore_tiles import GM_ADD, UNIT_NAMES
from ..errors import RaceError
from ..isa import PTO_PIPE_NAMES

N_UNITS = len(UNIT_NAMES)
P = len(PIPES)
ALL = -1


# ---------------------------------------------------------------- happens-before (check="race")
class AICoreRaces:
    """Vector clocks over the (unit, pipe) queues of one AI core. Each tile operation ticks its
    queue's clock; set_flag carries the source queue's clock to the wait_flag's queue; a
    cross-core flag carries the signalling unit's clocks to every queue of the waiting unit;
    pipe_barrier(PIPE_ALL) joins a unit's queues. Two accesses to one tile (or overlapping GM
    elements), at least one a write, race unless the later one's queue had seen the earlier."""

    def __init__(self):
        self.clock = np.zeros((N_UNITS * P, N_UNITS * P), np.int64)
        self.tiles: dict = {}        # (array index, owning buffer) -> {region: access history}
        self.gm: dict = {}           # tensor slot -> {(lo, hi, rows, cols, stride): history}
        # sync="auto": (array index, owning buffer) -> {region: {"w": the last write's clocks,
        # "r": the reads' since, joined}}, the orders auto sync makes by the tiles' data
        self.auto: dict = {}

    def tick(self, unit, pipe) -> tuple:
        t = unit * P + pipe
        self.clock[t, t] += 1
        return t, int(self.clock[t, t])

    def carry(self, unit, pipe):
        if pipe == ALL:
            return self.clock[unit * P:(unit + 1) * P].max(axis=0)
        return self.clock[unit * P + pipe].copy()

    def join(self, unit, pipe, vc):
        if pipe == ALL:
            rows = self.clock[unit * P:(unit + 1) * P]
            np.maximum(rows, vc, out=rows)
        else:
            np.maximum(self.clock[unit * P + pipe], vc, out=self.clock[unit * P + pipe])

    def barrier_all(self, unit):
        self.join(unit, ALL, self.carry(unit, ALL))

    def access(self, history, t, stamp, pc, is_write):
        """Record an access of queue t (clock stamp) to the object whose history this is;
        return the earlier (queue, pc, was_write) it races with, or None. is_write GM_ADD (an
        atomic add, tstore(atomic='add')) races with unordered reads and plain writes but not
        with other atomic adds, as CUDA's racecheck treats atomics."""
        seen = self.clock[t]
        last = history.get("w")
        if last is not None and last[0] != t and seen[last[0]] < last[1]:
            return last[0], last[2], True
        if is_write != GM_ADD:           # a read or a plain write: unordered atomic adds race
            for q, (c, apc) in history.get("a", {}).items():
                if q != t and seen[q] < c:
                    return q, apc, True
        if is_write:
            for q, (c, rpc) in history.get("r", {}).items():
                if q != t and seen[q] < c:
                    return q, rpc, False
            if is_write == GM_ADD:
                history.setdefault("a", {})[t] = (stamp, pc)
                return None
            history["w"] = (t, stamp, pc)
            history["r"], history["a"] = {}, {}
        else:
            history.setdefault("r", {})[t] = (stamp, pc)
        return None


def _auto_wait(race, arr_id, w, pipe, accesses):
    """sync="auto": an operation waits for the other pipes' operations on the tile elements it
    reads (their writes) or writes (their reads and writes), which orders their GM accesses
    too: join those operations' clocks into its queue's."""
    for v, is_write in accesses:
        mine = _Elements(v.region())
        for key, seen in race.auto.get((arr_id, v.root), {}).items():
            if key == v.region() or mine.shares(key):
                for kind in ("w", "r") if is_write else ("w",):
                    if seen.get(kind) is not None:
                        race.join(w, pipe, seen[kind])


def _auto_keep(race, arr_id, w, pipe, accesses):
    """After the operation's tick: its clocks, for the later operations that wait for it."""
    if not accesses:
        return
    vc = race.carry(w, pipe)
    for v, is_write in accesses:
        seen = race.auto.setdefault((arr_id, v.root), {}).setdefault(v.region(), {})
        if is_write:
            seen["w"], seen["r"] = vc, None
        else:
            seen["r"] = vc if seen.get("r") is None else np.maximum(seen["r"], vc)


def race_check(sim, ai, blk, w, pipe, pc, reads, writes, gm):
    race = ai.race
    arr_id = 1 if w == 2 else 0
    auto = sim.prog.sync != "manual"
    accesses = [(v, False) for v in reads] + [(v, True) for v in writes] if auto else ()
    _auto_wait(race, arr_id, w, pipe, accesses)
    t, stamp = race.tick(w, pipe)
    _auto_keep(race, arr_id, w, pipe, accesses)
    # with sync="auto" the engine orders every pair of accesses to a tile by its data, so
    # only GM (which auto sync does not order) can race
    tile_checks = ((reads, False), (writes, True)) if sim.prog.sync == "manual" else ()
    for views, is_write in tile_checks:
        for v in views:
            # a view (treshape, tsubview) shares its tile's words: compare by the owner's elements
            other = _region_access(race, race.tiles.setdefault((arr_id, v.root), {}), v.region(),
                                   t, stamp, pc, is_write)
            if other is not None:
                raise race_error(sim, blk, pc, w, pipe, other, f"tile '{v.buf.name}' ({v.buf.space})",
                                 is_write)
    if gm is not None:
        slot, off, rows, cols, stride, is_write, _item = gm
        key = (off, off + (rows - 1) * stride + cols, rows, cols, stride)
        other = _region_access(race, race.gm.setdefault(slot, {}), key, t, stamp, pc, is_write)
        if other is not None:
            raise race_error(sim, blk, pc, w, pipe, other, f"GM tensor '{sim.tensor_names[slot]}'", is_write)
        other = sim.checks.aicore_gm.access(slot, key, (blk.id, w, pipe), pc, is_write)
        if other is not None:
            raise core_race_error(sim, blk, pc, w, pipe, other, slot, is_write)


def _region_access(race, objs, key, t, stamp, pc, is_write):
    """Record an access to the strided region key = (lo, hi, rows, cols, stride) of one object
    (a GM tensor, or the words of one tile and its views) and return the earlier unordered
    access it races with, if any: against the same region, and against every other region of
    the object that shares an element with it."""
    mine = _Elements(key)
    for other_key, hist in objs.items():
        if other_key == key or not mine.shares(other_key):
            continue
        probe = {"w": hist.get("w"), "r": dict(hist.get("r", {})), "a": dict(hist.get("a", {}))}
        other = race.access(probe, t, stamp, pc, is_write)
        if other is not None:
            return other
    return race.access(objs.setdefault(key, {}), t, stamp, pc, is_write)


class _Elements:
    """The elements of one strided region (lo, hi, rows, cols, stride), built on first use."""

    def __init__(self, key):
        self.key = key
        self._elements = None

    def shares(self, other_key) -> bool:
        """True when the region other_key holds an element of this one."""
        lo, hi, rows, cols, stride = self.key
        if other_key[0] >= hi or lo >= other_key[1]:
            return False
        if self._elements is None:
            self._elements = gm.window_elements(lo, rows, cols, stride)
        theirs = gm.window_elements(other_key[0], other_key[2], other_key[3], other_key[4])
        return bool(np.intersect1d(self._elements, theirs, assume_unique=True).size)


# ---------------------------------------------------------------- between AI cores
class ChipGMAccesses:
    """The GM accesses of every AI core of one launch, by tensor slot and strided element
    region (as _region_access compares them). Each region keeps its last write (block, unit,
    pipe, pc) and, per block, its last read since: an access races with an earlier one of
    another block to a shared element when either is a write. Accesses of one block are left
    to that core's vector clocks (AICoreRaces)."""

    def __init__(self):
        self.slots: dict = {}        # slot -> {(lo, hi, rows, cols, stride): {"w": .., "r": {block: ..}}}

    def access(self, slot, key, who, pc, is_write):
        """Record the access of who = (block id, unit, pipe) at pc; return the earlier access
        of another block it races with as (block, unit, pipe, pc, was_write), or None."""
        objs = self.slots.setdefault(slot, {})
        mine = _Elements(key)
        for other_key, hist in objs.items():
            clash = _other_block(hist, who[0], is_write)
            if clash is not None and (other_key == key or mine.shares(other_key)):
                return clash
        hist = objs.setdefault(key, {"w": None, "r": {}, "a": {}})
        if is_write == GM_ADD:
            hist["a"][who[0]] = (*who, pc)
        elif is_write:
            # no other block read or wrote it (or that was the race above): this write is all
            # a later access of another block can race with
            hist["w"], hist["r"], hist["a"] = (*who, pc), {}, {}
        else:
            hist["r"][who[0]] = (*who, pc)
        return None


def _other_block(hist, block, is_write):
    """The access in hist of a block other than `block` that an access (a write when is_write,
    an atomic add when it is GM_ADD) conflicts with: the last write; for a write also a read;
    an atomic add of another block for anything but an atomic add."""
    w = hist["w"]
    if w is not None and w[0] != block:
        return (*w, True)
    if is_write != GM_ADD:
        for b, a in hist["a"].items():
            if b != block:
                return (*a, True)
    if is_write:
        for b, r in hist["r"].items():
            if b != block:
                return (*r, False)
    return None


def core_race_error(sim, blk, pc, w, pipe, other, slot, is_write):
    """Two AI cores (blocks) of one launch touch a GM element, at least one writing it."""
    oblock, ou, op, opc, was_write = other
    ins, oins = sim.prog.instrs[pc], sim.prog.instrs[opc]
    kind = "write-after-write" if is_write and was_write else "read-after-write" if was_write else "write-after-read"
    this = f"{ins.op} at line {ins.line} (block {blk.id} {UNIT_NAMES[w]} {PTO_PIPE_NAMES.get(PIPES[pipe], PIPES[pipe])})"
    that = f"{oins.op} at line {oins.line} (block {oblock} {UNIT_NAMES[ou]} {PTO_PIPE_NAMES.get(PIPES[op], PIPES[op])})"
    return RaceError(
        f"racecheck: {kind} race on GM tensor '{sim.tensor_names[slot]}' between AI cores: {this} "
        f"and {that} touch the same elements; nothing orders two AI cores of one launch",
        kernel=sim.kernel_name, file=sim.prog.file, line=ins.line, block=blk.id, warp=w,
        unit=UNIT_NAMES[w], other_line=oins.line, other_block=oblock, other_warp=ou, other_unit=UNIT_NAMES[ou],
        hint="give each AI core its own GM elements (offset by pto.get_block_id()), or split the "
             "work into two launches")


def race_error(sim, blk, pc, w, pipe, other, what, is_write):
    q, opc, was_write = other
    ou, op = divmod(q, P)
    ins, oins = sim.prog.instrs[pc], sim.prog.instrs[opc]
    kind = "write-after-write" if is_write and was_write else "read-after-write" if was_write else "write-after-read"
    first, second = (PTO_PIPE_NAMES.get(PIPES[p], PIPES[p]) for p in (op, pipe))
    this = f"{ins.op} at line {ins.line} ({UNIT_NAMES[w]} {second})"
    that = f"{oins.op} at line {oins.line} ({UNIT_NAMES[ou]} {first})"
    if ou == w:
        fix = (f"add pto.set_flag({first}, {second}, id) "
               f"after line {oins.line} and the matching wait_flag before line {ins.line}")
    elif 0 in (w, ou):
        fix = ("order the units with pto.cross_core_set_flag(id) after the first and "
               "pto.cross_core_wait_flag(id) before the second")
    else:               # cross-core signals go AIC -> AIVs and AIV -> AIC only (docs/aicore.md)
        fix = ("two vector units cannot signal each other: relay through the AIC (both AIVs "
               "pto.cross_core_set_flag(id), the first after its access; the AIC pto.cross_core_wait_flag(id), "
               "which takes one from each, then pto.cross_core_set_flag(id2); both AIVs "
               "pto.cross_core_wait_flag(id2), the second before its access), or give each AIV its own part "
               "of the tensor")
    if ou == w:
        missing = (f"no set_flag({first}, {second}, id) after line {oins.line} is waited for (wait_flag) before "
                   f"line {ins.line}, and no pipe_barrier between them holds both pipes")
    else:
        missing = (f"no cross_core_set_flag of {UNIT_NAMES[ou]} on {first} (or every pipe) after line {oins.line} "
                   f"is taken by a cross_core_wait_flag of {UNIT_NAMES[w]} before line {ins.line}")
    return RaceError(f"racecheck: {kind} race on {what} in block {blk.coords}: {this} is not ordered "
                     f"after {that}: {missing}", kernel=sim.kernel_name,
                     file=sim.prog.file, line=ins.line, block=blk.id, warp=w, unit=UNIT_NAMES[w],
                     other_line=oins.line, other_warp=ou, other_unit=UNIT_NAMES[ou], hint=fix)
