"""Happens-before race detection for AI-core kernels (check="race"): vector clocks over the
(unit, pipe) queues of one AI core, moved by flags, barriers and cross-core signals; the
RaceError names both instructions, their units and pipes, their lines and the tile or tensor.

Between AI cores (blocks) of one launch only SYNCALL orders anything - cross-core flags pair
the units of one core - so ChipGMAccesses, shared by all blocks of the launch, reports every
pair of GM accesses of two cores that share an element, at least one a write, that no SYNCALL
separates: the meaning lane kernels' racecheck gives two blocks (checks.py).

GM accesses are compared by the device bytes they touch, not by the kernel argument that
reached them: two arguments naming one tensor, or a view (a slice) and its tensor, race
exactly where their bytes do, as the lane path's byte-addressed shadow sees them."""
from __future__ import annotations

import numpy as np

from ..isa import PIPES
from ..exec.aicore_tiles import GM_ADD, UNIT_NAMES
from ..errors import RaceError
from ..isa import PTO_PIPE_NAMES
from ..isa.syncall_modes import KIND_AIC, KIND_AIV, KIND_MIX, KINDS

N_UNITS = len(UNIT_NAMES)
P = len(PIPES)
Q = N_UNITS * P              # the (unit, pipe) queues; a clock's columns past them: SYNCALL rounds known
SOFT_COLUMN = len(KINDS)     # by kind, hard mode's rounds, then soft mode's (its counter's multiples)
ALL = -1


# ---------------------------------------------------------------- happens-before (check="race")
class AICoreRaces:
    """Vector clocks over the (unit, pipe) queues of one AI core. Each tile operation ticks its
    queue's clock; set_flag carries the source queue's clock to the wait_flag's queue; a
    cross-core flag carries the signalling unit's clocks to every queue of the waiting unit;
    pipe_barrier(PIPE_ALL) joins a unit's queues. Two accesses to one tile (or overlapping GM
    elements), at least one a write, race unless the later one's queue had seen the earlier.
    A clock's last columns count the SYNCALL rounds of each kind the queue knows have completed
    (a participant's on passing one, anyone's through the flags that carry its clocks): they
    order GM accesses between AI cores (ChipGMAccesses)."""

    def __init__(self, signal_columns=0):
        # past the queues: SYNCALL's rounds by kind, then one column per unit that may TNOTIFY
        # (timing/aicore_signals.py), which ChipGMAccesses reads as it reads the rounds
        self.clock = np.zeros((Q, Q + 2 * len(KINDS) + signal_columns), np.int64)
        self.tiles: dict = {}        # (array index, owning buffer) -> {region: access history}
        self.gm: dict = {}           # alias group -> {byte window (lo, hi, rows, width, pitch): history}
        # sync="auto": (array index, owning buffer) -> {region: {"w": the last write's clocks,
        # "r": the reads' since, joined}}, the orders auto sync makes by the tiles' data
        self.auto: dict = {}
        self.late: list = []         # LateGM: MGATHER / MSCATTER dispatched, elements not yet known

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

    def access(self, history, t, stamp, pc, is_write, late=None):
        """Record an access of queue t (clock stamp) to the object whose history this is;
        return the earlier (queue, pc, was_write) it races with, or None. is_write GM_ADD (an
        atomic add, tstore(atomic='add')) races with unordered reads and plain writes but not
        with other atomic adds, as CUDA's racecheck treats atomics. late: a GM access recorded
        after the instruction's dispatch (LateGM: MGATHER / MSCATTER, whose elements are known
        when they read their index tile): its queue's clocks at the dispatch and the accesses
        dispatched since that were ordered after it; those it neither races with nor hides."""
        seen = self.clock[t] if late is None else late.seen
        after = () if late is None else late.after

        def unordered(q, c):
            return q != t and seen[q] < c and (q, c) not in after
        last = history.get("w")
        if last is not None and unordered(last[0], last[1]):
            return last[0], last[2], True
        if is_write != GM_ADD:           # a read or a plain write: unordered atomic adds race
            for q, (c, apc) in history.get("a", {}).items():
                if unordered(q, c):
                    return q, apc, True
        if is_write:
            for q, (c, rpc) in history.get("r", {}).items():
                if unordered(q, c):
                    return q, rpc, False
        if late is not None:
            return _record_late(history, t, stamp, pc, is_write, after)
        if is_write == GM_ADD:
            history.setdefault("a", {})[t] = (stamp, pc)
        elif is_write:
            history["w"] = (t, stamp, pc)
            history["r"], history["a"] = {}, {}
        else:
            history.setdefault("r", {})[t] = (stamp, pc)
        return None


def _record_late(history, t, stamp, pc, is_write, after):
    """Record a late access (AICoreRaces.access) that raced with nothing. A write dispatched
    after it and ordered after it already stands for it (whatever is unordered with the late
    access is unordered with that write, or ordered after both); otherwise it goes in as if at
    its dispatch, keeping the reads and atomic adds ordered after it, and a queue's newest."""
    last = history.get("w")
    if last is not None and (last[0], last[1]) in after:
        return None
    if is_write and is_write != GM_ADD:
        history["w"] = (t, stamp, pc)
        for kind in ("r", "a"):
            history[kind] = {q: e for q, e in history.get(kind, {}).items() if (q, e[0]) in after}
        return None
    mine = history.setdefault("a" if is_write else "r", {})
    if t not in mine or mine[t][0] < stamp:
        mine[t] = (stamp, pc)
    return None


class LateGM:
    """An MGATHER / MSCATTER of one queue whose GM elements are known only when it reads its
    index tile, after its dispatch: its queue t and stamp, that queue's clocks at the dispatch
    (what it had seen), and the (queue, stamp) of each GM access dispatched since on the core
    whose queue had seen it (ordered after it), which its late check must not call a race."""

    __slots__ = ("t", "stamp", "seen", "after")

    def __init__(self, race, t, stamp):
        self.t, self.stamp, self.seen, self.after = t, stamp, race.clock[t].copy(), set()


def late_gm_dispatched(race, t, stamp):
    """A GM access of queue t (clock stamp) was dispatched: the pending late ones its queue had
    seen are ordered before it."""
    for late in race.late:
        if race.clock[t, late.t] >= late.stamp and (t, stamp) != (late.t, late.stamp):
            late.after.add((t, stamp))


def _auto_wait(race, arr_id, w, pipe, accesses):
    """sync="auto": an operation waits for the other pipes' operations on the tile elements it
    reads (their writes) or writes (their reads and writes), which orders their GM accesses
    too: join those operations' clocks into its queue's."""
    for v, is_write in accesses:
        mine = v.region()
        for key, seen in race.auto.get((arr_id, v.root), {}).items():
            if key == mine or windows_share(mine, key):
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
        late_gm_dispatched(race, t, stamp)
        slot, off, rows, cols, stride, is_write, item = gm
        key = gm_window(sim, slot, off, rows, cols, stride, item)
        group = sim.checks.gm_groups[slot]
        other = _region_access(race, race.gm.setdefault(group, {}), key, t, stamp, pc, is_write)
        if other is not None:
            raise race_error(sim, blk, pc, w, pipe, other, gm_tensors(sim, pc, other[1]), is_write)
        other = sim.checks.aicore_gm.access(group, key, (blk.id, w, pipe), pc, is_write,
                                            (t, stamp, race.clock[t, Q:], ai.syncall_clocks))
        if other is not None:
            raise core_race_error(sim, blk, pc, w, pipe, other, is_write)


def late_gm_dispatch(sim, ai, w, pipe, pc):
    """After race_check of an MGATHER / MSCATTER (its tiles) at dispatch: its GM access, known
    when it reads its index tile (late_gm_check), waits as a LateGM."""
    race = ai.race
    t = w * P + pipe
    late = LateGM(race, t, int(race.clock[t, t]))
    late_gm_dispatched(race, t, late.stamp)
    race.late.append(late)
    return late


def late_gm_check(sim, ai, blk, w, pipe, pc, late, accesses):
    """The GM accesses of an MGATHER / MSCATTER (late, from late_gm_dispatch) now that its index
    tile is read: each (tensor slot, its elements (int64, any order), element bytes, GM_READ /
    GM_WRITE / GM_ADD) it reads, writes or adds to, in runs of consecutive elements, checked as
    race_check checks a transfer's window: against the core's other queues with the clocks of its
    dispatch, and against the other AI cores."""
    race = ai.race
    race.late.remove(late)
    for slot, elements, item, is_write in accesses:
        group = sim.checks.gm_groups[slot]
        objs = race.gm.setdefault(group, {})
        for first, count in _element_runs(elements):
            key = gm_window(sim, slot, first, 1, count, count, item)
            other = _region_access(race, objs, key, late.t, late.stamp, pc, is_write, late)
            if other is not None:     # the GM -> L1 forms' indices and scratch are not the pc's own tensor
                raise race_error(sim, blk, pc, w, pipe, other, gm_tensors(sim, pc, other[1], slot), is_write)
            other = sim.checks.aicore_gm.access(group, key, (blk.id, w, pipe), pc, is_write,
                                                (late.t, late.stamp, late.seen[Q:], ai.syncall_clocks))
            if other is not None:
                raise core_race_error(sim, blk, pc, w, pipe, other, is_write, slot)


def _element_runs(elements) -> list:
    """(first, count) of each run of consecutive elements among `elements` (deduplicated)."""
    e = np.unique(np.asarray(elements, np.int64))
    if not len(e):
        return []
    cut = np.nonzero(np.diff(e) != 1)[0] + 1
    starts, ends = np.r_[0, cut], np.r_[cut, len(e)]
    return [(int(e[a]), int(b - a)) for a, b in zip(starts, ends)]


def gm_window(sim, slot, off, rows, cols, stride, item) -> tuple:
    """The device bytes of a transfer of rows runs of cols elements (item bytes each), stride
    elements apart from element off of tensor slot: (lo, hi, rows, width, pitch) in bytes."""
    lo = int(sim.tbase[slot]) + off * item
    return lo, lo + ((rows - 1) * stride + cols) * item, rows, cols * item, stride * item


def gm_alias_groups(tbase, tcount, items) -> np.ndarray:
    """Per tensor slot, the index of its alias group: slots whose device bytes [base, base +
    count * itemsize) overlap (an argument passed twice, a view and its tensor) share a group,
    chained; the race check compares the GM accesses of one group by byte."""
    spans = sorted((int(b), int(b) + int(n) * i, s) for s, (b, n, i) in enumerate(zip(tbase, tcount, items)))
    groups, end, g = np.zeros(max(len(spans), 1), np.int64), None, -1
    for lo, hi, slot in spans:
        if end is None or lo >= end:
            g, end = g + 1, hi
        end = max(end, hi)
        groups[slot] = g
    return groups


def gm_tensors(sim, pc, opc, slot=None) -> str:
    """The GM tensor of a race between instructions pc and opc, as each named it: one argument,
    or the two arguments (aliases of the same bytes) when they differ. slot is the tensor pc's
    access touched, by default its own (aux[0]); an MGATHER_L1's indices and scratch are other
    tensors than its own (its table), so opc is named by its own only when that is in slot's alias
    group (else by slot's: the race record keeps no tensor)."""
    def own(p):
        return int(sim.prog.instrs[p].aux[0])
    this = own(pc) if slot is None else slot
    that = own(opc) if sim.checks.gm_groups[own(opc)] == sim.checks.gm_groups[this] else this
    this, that = sim.tensor_names[this], sim.tensor_names[that]
    if this == that:
        return f"GM tensor '{this}'"
    return (f"GM tensors '{this}' at line {sim.prog.instrs[pc].line} and '{that}' at line "
            f"{sim.prog.instrs[opc].line} (two kernel arguments over the same bytes)")


def _region_access(race, objs, key, t, stamp, pc, is_write, late=None):
    """Record an access to the strided region key = (lo, hi, rows, cols, stride) of one object
    (the bytes of a GM alias group, or the words of one tile and its views) and return the earlier unordered
    access it races with, if any: against the same region, and against every other region of
    the object that shares an element with it."""
    for other_key, hist in objs.items():
        if other_key == key or not windows_share(key, other_key):
            continue
        probe = {"w": hist.get("w"), "r": dict(hist.get("r", {})), "a": dict(hist.get("a", {}))}
        other = race.access(probe, t, stamp, pc, is_write, late)
        if other is not None:
            return other
    return race.access(objs.setdefault(key, {}), t, stamp, pc, is_write, late)


def _runs(key):
    """(first, runs, width, pitch) of window key, one run when its runs touch end to end."""
    lo, hi, rows, width, pitch = key
    if rows == 1 or pitch <= width:
        return lo, 1, hi - lo, hi - lo
    return lo, rows, width, pitch


def windows_share(a, b) -> bool:
    """True when the strided windows a and b, each (lo, hi, rows, width, pitch) - rows runs of
    width units, pitch units apart from unit lo, ending before hi - hold a common unit. Run i
    of a, [x, x + wa) with x = a0 + i * pa, meets run j of b exactly when x - wb < b0 + j * pb
    < x + wa: j from floor((x - wb - b0) / pb) + 1 to ceil((x + wa - b0) / pb) - 1, which must
    hold an integer in [0, rows of b)."""
    if b[0] >= a[1] or a[0] >= b[1]:
        return False
    (a0, ra, wa, pa), (b0, rb, wb, pb) = sorted((_runs(a), _runs(b)), key=lambda r: r[1])
    if ra == 1:
        first, last = (a0 - wb - b0) // pb + 1, -((b0 - a0 - wa) // pb) - 1
        return max(first, 0) <= min(last, rb - 1)
    x = a0 + np.arange(ra, dtype=np.int64) * pa
    first, last = np.maximum((x - wb - b0) // pb + 1, 0), np.minimum(-((b0 - x - wa) // pb) - 1, rb - 1)
    return bool((first <= last).any())


# ---------------------------------------------------------------- between AI cores
class ChipGMAccesses:
    """The GM accesses of every AI core of one launch, by alias group and strided byte window
    (as _region_access compares them). Each region keeps its last write (block, unit, pipe, pc
    and its place in its core's clocks) and, per (block, queue), its last read since: an access
    races with an earlier one of another block to a shared element when either is a write and
    no SYNCALL orders them. Accesses of one block are left to that core's vector clocks
    (AICoreRaces).

    A SYNCALL round completes only when every participant has arrived, its pipes drained: an
    access is ordered before a round of a kind when a participant of its core arrived there
    with clocks that had seen it (the participant's own earlier accesses, or a unit's that
    signalled it), and after the round when its queue knows the round completed (a participant
    that passed it, or a unit it signalled). known: per (kind, round), the rounds known by the
    round's participants as they arrived, which every participant learns on passing it."""

    def __init__(self):
        self.groups: dict = {}       # alias group -> {byte window: {"w": .., "r": {(block, queue): ..}, "a": ..}}
        self.known: dict = {}        # (SYNCALL kind, round) -> its arrivals' rounds known, by kind

    def access(self, group, key, who, pc, is_write, order=None):
        """Record the access of who = (block id, unit, pipe) at pc; order = (its queue, its
        clock stamp, the SYNCALL rounds its queue knows have completed, its core's arrival
        clocks by (kind, round); None: no SYNCALL). Return the earlier access of another block
        it races with as (block, unit, pipe, pc, was_write), or None."""
        objs = self.groups.setdefault(group, {})
        q, stamp, known, arrivals = order or (0, 0, (), {})
        for other_key, hist in objs.items():
            clash = _other_block(hist, who[0], known, is_write)
            if clash is not None and (other_key == key or windows_share(key, other_key)):
                return clash
        hist = objs.setdefault(key, {"w": None, "r": {}, "a": {}})
        entry = (*who, pc, q, stamp, arrivals)
        if is_write == GM_ADD:
            hist["a"][(who[0], q)] = entry
        elif is_write:
            # no other block read or wrote it unordered (or that was the race above): this write
            # is all a later access of another block can race with
            hist["w"], hist["r"], hist["a"] = entry, {}, {}
        else:
            # a queue's later read is ordered after whatever its earlier one is (its clocks grow)
            hist["r"][(who[0], q)] = entry
        return None


def _unordered(entry, block, known) -> bool:
    """Whether the recorded access entry of another block is unordered with an access of block
    whose queue knows `known` rounds of each SYNCALL kind completed: no participant of the
    entry's core arrived at the last of them with clocks that had seen the entry (a
    participant's clocks only grow, so an earlier round's arrival that had is seen there too)."""
    if entry[0] == block:
        return False
    q, stamp, arrivals = entry[4:]
    for kind in np.flatnonzero(known).tolist():
        if any(a[q] >= stamp for a in arrivals.get((kind, int(known[kind]) - 1), ())):
            return False
    return True


def _other_block(hist, block, known, is_write):
    """The access in hist of a block other than `block` that an access (a write when is_write,
    an atomic add when it is GM_ADD) conflicts with, unordered by SYNCALL: the last write; for
    a write also a read; an atomic add of another block for anything but an atomic add."""
    w = hist["w"]
    if w is not None and _unordered(w, block, known):
        return (*w[:4], True)
    if is_write != GM_ADD:
        for a in hist["a"].values():
            if _unordered(a, block, known):
                return (*a[:4], True)
    if is_write:
        for r in hist["r"].values():
            if _unordered(r, block, known):
                return (*r[:4], False)
    return None


def syncall_arrive(sim, ai, w, kind, rnd):
    """check="race" at unit w's arrival at round rnd of SYNCALL kind: its pipes join (the
    header's pipe_barrier(PIPE_ALL)); its clocks are kept for its core's participants, and the
    rounds it knows for the launch's."""
    ai.race.barrier_all(w)
    vc = ai.race.carry(w, ALL)
    ai.syncall_clocks.setdefault((kind, rnd), []).append(vc)
    known = sim.checks.aicore_gm.known
    known[(kind, rnd)] = np.maximum(known.get((kind, rnd), 0), vc[Q:])


def syncall_pass(sim, ai, w, kind, rnd):
    """check="race" as unit w passes round rnd of SYNCALL kind: its clocks join those its core's
    participants arrived with, the rounds every participant knew, and this round."""
    vc = np.max(ai.syncall_clocks[(kind, rnd)], axis=0)
    vc[Q:] = np.maximum(vc[Q:], sim.checks.aicore_gm.known[(kind, rnd)])
    vc[Q + kind] = max(vc[Q + kind], rnd + 1)
    ai.race.join(w, ALL, vc)


def core_race_error(sim, blk, pc, w, pipe, other, is_write, slot=None):
    """Two AI cores (blocks) of one launch touch a GM element, at least one writing it (pc's
    access in tensor slot, by default pc's own: gm_tensors)."""
    oblock, ou, op, opc, was_write = other
    ins, oins = sim.prog.instrs[pc], sim.prog.instrs[opc]
    kind = "write-after-write" if is_write and was_write else "read-after-write" if was_write else "write-after-read"
    this = f"{ins.op} at line {ins.line} (block {blk.id} {UNIT_NAMES[w]} {PTO_PIPE_NAMES.get(PIPES[pipe], PIPES[pipe])})"
    that = f"{oins.op} at line {oins.line} (block {oblock} {UNIT_NAMES[ou]} {PTO_PIPE_NAMES.get(PIPES[op], PIPES[op])})"
    return RaceError(
        f"racecheck: {kind} race on {gm_tensors(sim, pc, opc, slot)} between AI cores: {this} "
        f"and {that} touch the same elements; no pto.syncall that both units take part in lies between them "
        + (SIGNAL_ORDER if _signals(sim) else "(nothing else orders two AI cores of one launch)"),
        kernel=sim.kernel_name, file=sim.prog.file, line=ins.line, block=blk.id, warp=w,
        unit=UNIT_NAMES[w], other_line=oins.line, other_block=oblock, other_warp=ou, other_unit=UNIT_NAMES[ou],
        hint=f"put a pto.syncall('{KINDS[syncall_kind(w, ou)]}') between the two accesses (pto-isa's SYNCALL, "
             "a barrier of the launch's units), give each AI core its own GM elements (offset by "
             "pto.get_block_id()), or split the work into two launches")


# the other order two AI cores may have: a TWAIT (a TTEST that answered 1) that read a notify's value
SIGNAL_ORDER = ("and the second's unit read no signal value of a pto.tnotify ordered after the first (a pto.twait, "
                "or a pto.ttest that answered 1, before the second; the first's pipe ordered before the notify by "
                "a pipe_barrier(PIPE_ALL) or a flag to PIPE_S)")


def _signals(sim) -> bool:
    """Whether the launch's program waits for or tests communication signals."""
    return "TWAIT" in sim.pc_name or "TTEST" in sim.pc_name


def syncall_kind(unit, other) -> int:
    """The SYNCALL kind whose participants include both units (isa/syncall_modes.py): 'aic' for
    two AICs, 'aiv' for two AIVs, else 'mix'."""
    if (unit == 0) != (other == 0):
        return KIND_MIX
    return KIND_AIC if unit == 0 else KIND_AIV


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
               "pto.cross_core_wait_flag(id2), the second before its access), a pto.syncall('aiv') between "
               "them, or give each AIV its own part of the tensor")
    if ou == w:
        missing = (f"no set_flag({first}, {second}, id) after line {oins.line} is waited for (wait_flag) before "
                   f"line {ins.line}, and no pipe_barrier between them holds both pipes")
    else:
        missing = (f"no cross_core_set_flag of {UNIT_NAMES[ou]} on {first} (or every pipe) after line {oins.line} "
                   f"is taken by a cross_core_wait_flag of {UNIT_NAMES[w]} before line {ins.line}"
                   + (f", and {UNIT_NAMES[w]} read no signal value of a pto.tnotify of {UNIT_NAMES[ou]} ordered "
                      f"after line {oins.line} before line {ins.line}" if _signals(sim) else ""))
    return RaceError(f"racecheck: {kind} race on {what} in block {blk.coords}: {this} is not ordered "
                     f"after {that}: {missing}", kernel=sim.kernel_name,
                     file=sim.prog.file, line=ins.line, block=blk.id, warp=w, unit=UNIT_NAMES[w],
                     other_line=oins.line, other_warp=ou, other_unit=UNIT_NAMES[ou], hint=fix)
