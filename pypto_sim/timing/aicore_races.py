"""Happens-before race detection for AI-core kernels (check="race"): vector clocks over the
(unit, pipe) queues of one AI core, moved by flags, barriers and cross-core signals; the
RaceError names both instructions, their units and pipes, their lines and the tile or tensor."""
from __future__ import annotations

import numpy as np

from ..isa import PIPES

UNIT_NAMES = ("AIC", "AIV0", "AIV1")
N_UNITS = 3
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
        return the earlier (queue, pc, was_write) it races with, or None."""
        seen = self.clock[t]
        last = history.get("w")
        if last is not None and last[0] != t and seen[last[0]] < last[1]:
            return last[0], last[2], True
        if is_write:
            for q, (c, rpc) in history.get("r", {}).items():
                if q != t and seen[q] < c:
                    return q, rpc, False
            history["w"] = (t, stamp, pc)
            history["r"] = {}
        else:
            history.setdefault("r", {})[t] = (stamp, pc)
        return None


def race_check(sim, ai, blk, w, pipe, pc, reads, writes, gm):
    race = ai.race
    t, stamp = race.tick(w, pipe)
    arr_id = 1 if w == 2 else 0
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


def _region_access(race, objs, key, t, stamp, pc, is_write):
    """Record an access to the strided region key = (lo, hi, rows, cols, stride) of one object
    (a GM tensor, or the words of one tile and its views) and return the earlier unordered
    access it races with, if any: against the same region, and against every other region of
    the object that shares an element with it."""
    lo, hi, rows, cols, stride = key
    mine = None
    for other_key, hist in objs.items():
        if other_key == key or other_key[0] >= hi or lo >= other_key[1]:
            continue
        if mine is None:
            mine = np.add.outer(np.arange(rows) * stride, np.arange(cols)).ravel() + lo
        theirs = np.add.outer(np.arange(other_key[2]) * other_key[4], np.arange(other_key[3])).ravel() + other_key[0]
        if not np.intersect1d(mine, theirs, assume_unique=True).size:
            continue
        probe = {"w": hist.get("w"), "r": dict(hist.get("r", {}))}
        other = race.access(probe, t, stamp, pc, is_write)
        if other is not None:
            return other
    return race.access(objs.setdefault(key, {}), t, stamp, pc, is_write)


def race_error(sim, blk, pc, w, pipe, other, what, is_write):
    from ..errors import RaceError
    from ..isa import PTO_PIPE_NAMES
    q, opc, was_write = other
    ou, op = divmod(q, P)
    ins, oins = sim.prog.instrs[pc], sim.prog.instrs[opc]
    kind = "write-after-write" if is_write and was_write else "read-after-write" if was_write else "write-after-read"
    this = f"{ins.op} at line {ins.line} ({UNIT_NAMES[w]} {PTO_PIPE_NAMES.get(PIPES[pipe], PIPES[pipe])})"
    that = f"{oins.op} at line {oins.line} ({UNIT_NAMES[ou]} {PTO_PIPE_NAMES.get(PIPES[op], PIPES[op])})"
    if ou == w:
        fix = (f"add pto.set_flag({PTO_PIPE_NAMES.get(PIPES[op])}, {PTO_PIPE_NAMES.get(PIPES[pipe])}, id) "
               f"after line {oins.line} and the matching wait_flag before line {ins.line}")
    else:
        fix = ("order the units with pto.cross_core_set_flag(id) after the first and "
               "pto.cross_core_wait_flag(id) before the second")
    return RaceError(f"racecheck: {kind} race on {what} in block {blk.coords}: {this} is not ordered "
                     f"after {that}; nothing (no flag) orders the two pipes", kernel=sim.kernel_name,
                     file=sim.prog.file, line=ins.line, block=blk.id, warp=w, other_line=oins.line,
                     other_warp=ou, hint=fix)
