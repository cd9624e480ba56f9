"""Bubbles of an AI-core kernel: every idle stretch of every PTO pipe of every unit (AIC, AIV0,
AIV1) of every AI core, and its true cause.

A pipe P of unit U is idle from the completion of an operation to the start of the next (and
after its last operation to the end of the core's active window: the idle tail). The next
operation i started at max(its dispatch d, the pipe's previous completion, a flag's fire time,
under sync="auto" the completion of the operation it waits for on data) - the rule of
exec/compiled/aicore_steps.py's tile_dispatch, which records the winner as the operation's
``cause`` (and ``cause_pc``). So a gap [g0, s) splits in two:

- [max(g0, d), s): the operation was on its pipe and waited for what its ``cause`` names: a
  flag (the wait_flag on P that held it, matched first-in first-out with its set_flag, and the
  operation on the flag's source pipe that the set_flag waited for), or data (the operation
  that writes a tile it reads, or reads a tile it overwrites). When what it waited for was a
  transfer, the transfer's last cycles are its bandwidth: the cycles it waited for shared L2 /
  HBM bandwidth (``why``), before them its bytes over the unit's own GM path, and before those
  the L2's miss extra when it missed (``why``) - each its own cause.
- [g0, d): the scalar unit had not handed it over yet. The scalar unit's own timeline says why:
  the cycles it issued instructions (the scalar unit), waited on a cross-core flag (which unit
  of the core set it, at which line), on a wait_flag to PIPE_S (its line, its set_flag's and
  the operation that set_flag waited for), on a full pipe queue (the record's ``why``), on a
  pipe_barrier, or had nothing to run (between blocks).

Each stretch gets exactly one cause, so the causes of a pipe's bubbles add up to its idle time.
"""
from __future__ import annotations

import numpy as np

from ..isa import PIPES, PTO_PIPE_SHORT
from ..timing.records import CAUSE, why_fields
from .bubbles import BubbleReport, cause_lines
from .memory_counters import READS, WRITES, moving_start
from ..exec.aicore_tiles import UNIT_NAMES as UNITS
from .bubbles import Bubble
from ..errors import ArgumentError
from ..isa.syncall_modes import KINDS as SYNCALL_KINDS

KINDS = ("flag", "cross_core", "syncall", "queue", "scalar", "bandwidth", "l2_miss", "data", "barrier", "tail",
         "idle")
SCALAR = PIPES.index("scalar")


def pipe_name(p) -> str:
    """The PTO name of pipe index p without its PIPE_ prefix (MTE2, M, V, ...)."""
    return PTO_PIPE_SHORT[PIPES[p]]


class _Unit:
    """The records of one unit of one core (record order = dispatch order) and what follows
    from them: dispatch cycles, each pipe's drained cycle before each record."""

    def __init__(self, prof, idx):
        rec = prof.records
        self.idx = idx
        self.pc = rec.pc[idx]
        self.block = rec.block[idx]
        self.start = rec.issue[idx]
        self.complete = rec.complete[idx]
        self.pipe = prof.record_pipes[idx]
        tile = np.asarray(prof.pc_is_tile, bool)[self.pc]
        self.tile = tile
        self.dispatch = np.where(tile, rec.issue[idx] - rec.stall[idx], rec.issue[idx])
        issue_cause, self.missed, self.shared = why_fields(rec.why[idx])
        self.scalar_cause = np.where(tile, issue_cause, rec.cause[idx])
        self.cause = rec.cause[idx]
        self.cause_pc = rec.cause_pc[idx]
        self.producer = {}          # (pc, completion) -> its last record (a data wait's source)
        for k in np.nonzero(tile)[0].tolist():
            self.producer[(int(self.pc[k]), int(self.complete[k]))] = k
        self._last = {}

    def last_on(self, pipe):
        """For each record k: the record on pipe (every pipe for -1) dispatched before k in k's
        block whose completion is the latest (-1: none), as an array (made once per pipe)."""
        if pipe not in self._last:
            n = len(self.pc)
            sel = self.tile & ((self.pipe == pipe) if pipe >= 0 else True)
            out = np.full(n, -1, np.int64)
            best, best_c, block = -1, -1, None
            for k in range(n):
                if self.block[k] != block:
                    best, best_c, block = -1, -1, self.block[k]
                out[k] = best
                if sel[k] and self.complete[k] >= best_c:
                    best, best_c = k, int(self.complete[k])
            self._last[pipe] = out
        return self._last[pipe]


class _Attributor:
    """Causes of the stretches of one launch's AI-core bubbles (see the module docstring)."""

    def __init__(self, prof):
        rec = prof.records
        self.names, self.lines = prof.pc_name, prof.pc_line
        self.aux = [ins.aux for ins in prof.program.instrs]
        self.partners = prof.program.cross_partners
        self.lat = [prof.pc_latency(pc) for pc in range(len(self.names))]
        m = prof.machine
        self.miss_extra = int(m.l2_miss_extra_latency) if m.has_l2 else 0
        self.segments = {}          # (core, unit) -> its scalar unit's timeline, made when needed
        self.syncall_last = getattr(prof, "syncall_last", None)
        self.units = {}
        order = np.arange(len(rec))
        for core in np.unique(rec.core).tolist():
            for w in range(3):
                idx = order[(rec.core == core) & (rec.warp == w)]
                if len(idx):
                    self.units[(core, w)] = _Unit(prof, idx)
        self._match_flags()

    # ---------------------------------------------------------------- flags and signals
    def _drained(self, u, k, pipe):
        """(record, cycle): the operation of unit u on pipe (every pipe for -1) queued before
        its record k that completed last, and when the set at k fires (the set_flag /
        cross_core_set_flag rule, unit_drained: at k's dispatch at the earliest)."""
        j = int(u.last_on(pipe)[k])
        return j, max(int(u.complete[j]) if j >= 0 else -1, int(u.dispatch[k]))

    def _match_flags(self):
        """Each WAIT_FLAG / CROSS_CORE_WAIT_FLAG record's releasing set (first in, first out per
        flag): self.flag[(core, w, k)] = (set unit, set record k, released-by record k or -1,
        fire cycle)."""
        self.flag = {}
        self.signals = {}           # (core, w, k) of a cross-core wait -> every signal it took
        pending = {}
        cross = {}
        sync = np.array([n in ("SET_FLAG", "WAIT_FLAG", "CROSS_CORE_SET_FLAG", "CROSS_CORE_WAIT_FLAG")
                         for n in self.names] + [False], bool)
        for (core, w), u in self.units.items():
            for k in np.nonzero(sync[u.pc])[0].tolist():
                name = self.names[u.pc[k]]
                if name == "SET_FLAG":
                    src, dst, ev = self.aux[u.pc[k]][:3]
                    j, fire = self._drained(u, k, src)
                    pending.setdefault((core, int(u.block[k]), w, src, dst, ev), []).append((w, k, j, fire))
                elif name == "CROSS_CORE_SET_FLAG":
                    ev, pipe = self.aux[u.pc[k]][:2]
                    j, fire = self._drained(u, k, pipe)
                    for to in self.partners(w):
                        cross.setdefault((core, int(u.block[k]), to, ev, w), []).append((w, k, j, fire))
        self.holding = {}
        self.barriers = {}
        is_barrier = np.array([n == "PIPE_BARRIER" for n in self.names] + [False], bool)
        for (core, w), u in self.units.items():
            ks = np.nonzero(is_barrier[u.pc])[0]
            self.barriers[(core, w)] = (ks, np.array([self.aux[pc][0] for pc in u.pc[ks].tolist()], np.int64))
        for (core, w), u in self.units.items():
            best: dict = {}
            waits: dict = {}                    # dst pipe -> ([wait record], [holding wait])
            block = None
            for k in np.nonzero(sync[u.pc])[0].tolist():
                name = self.names[u.pc[k]]
                if u.block[k] != block:
                    best, block = {}, u.block[k]
                if name == "WAIT_FLAG":
                    src, dst, ev = self.aux[u.pc[k]][:3]
                    q = pending.get((core, int(u.block[k]), w, src, dst, ev))
                    if q:
                        self.flag[(core, w, k)] = q.pop(0)
                    fire = self.flag[(core, w, k)][3] if (core, w, k) in self.flag else -1
                    if dst not in best or fire >= best[dst][1]:
                        best[dst] = (k, fire)
                    ks, hs = waits.setdefault(dst, ([], []))
                    ks.append(k)
                    hs.append(best[dst][0])
                elif name == "CROSS_CORE_WAIT_FLAG":
                    ev = self.aux[u.pc[k]][0]
                    got = [cross[key].pop(0) for key in ((core, int(u.block[k]), w, ev, s)
                                                         for s in self.partners(w))
                           if cross.get(key)]
                    if got:
                        self.flag[(core, w, k)] = max(got, key=lambda g: g[3])
                        self.signals[(core, w, k)] = got
            self.holding[(core, w)] = {p: (np.array(ks), hs) for p, (ks, hs) in waits.items()}

    # ---------------------------------------------------------------- texts
    def _at(self, pc):
        return f"{self.names[pc]} at line {self.lines[pc]}"

    def _flag_cause(self, core, w, k):
        """(kind, text, inst, line, pc, releasing (unit, record) or None) of the flag wait k."""
        u = self.units[(core, w)]
        pc = int(u.pc[k])
        src, dst, ev = self.aux[pc][:3]
        text = (f"flag wait: wait_flag(PIPE_{pipe_name(src)}, PIPE_{pipe_name(dst)}, {ev}) at line "
                f"{self.lines[pc]}")
        m = self.flag.get((core, w, k))
        if m is None:
            return "flag", text, "WAIT_FLAG", self.lines[pc], pc, None
        sw, sk, j, _ = m
        s = self.units[(core, sw)]
        text += f", released by set_flag at line {self.lines[int(s.pc[sk])]}"
        text += f" after {self._at(int(s.pc[j]))}" if j >= 0 else " (armed before)"
        return "flag", text, "WAIT_FLAG", self.lines[pc], pc, (sw, j) if j >= 0 else None

    def _cross_cause(self, core, w, k):
        u = self.units[(core, w)]
        pc = int(u.pc[k])
        text = f"cross-core flag {self.aux[pc][0]} (cross_core_wait_flag at line {self.lines[pc]})"
        m = self.flag.get((core, w, k))
        if m is not None:
            sw, sk, _, _ = m
            text += (f": set by this core's {UNITS[sw]} at line "
                     f"{self.lines[int(self.units[(core, sw)].pc[sk])]}")
        return "cross_core", text, "CROSS_CORE_WAIT_FLAG", self.lines[pc], pc

    def _syncall_cause(self, core, w, k):
        """A wait at SYNCALL (record k of unit w): for the launch's last participant of the
        round, named with its line and arrival cycle when the profile has them."""
        u = self.units[(core, w)]
        pc = int(u.pc[k])
        kind = self.aux[pc][0]
        if self.names[pc] == "SYNCALL_SOFT":
            return ("syncall", f"pto.syncall('{SYNCALL_KINDS[kind]}', workspace=...) at line {self.lines[pc]}: its "
                    "counter's read and add in GM, then its polls until the other units' adds reached the target",
                    "SYNCALL_SOFT", self.lines[pc], pc)
        text = f"pto.syncall('{SYNCALL_KINDS[kind]}') at line {self.lines[pc]}: the launch's other units"
        rounds = (self.syncall_last or [[]] * len(SYNCALL_KINDS))[kind]
        rnd = sum(1 for j in range(k) if self.names[int(u.pc[j])] == "SYNCALL" and self.aux[int(u.pc[j])][0] == kind)
        if rnd < len(rounds) and rounds[rnd][0] is not None:
            (block, unit, arrival_pc), cycle = rounds[rnd]
            if (block, unit) == (int(u.block[k]), w):     # it waited for its own pipes (pipe_barrier(PIPE_ALL))
                text = (f"pto.syncall('{SYNCALL_KINDS[kind]}') at line {self.lines[pc]}: its own pipes draining "
                        f"(the header's pipe_barrier(PIPE_ALL)); it arrived last, at cycle {cycle}")
            else:
                text += (f"; the last to arrive was block {block} {UNITS[unit]} at cycle {cycle} (its pto.syncall "
                         f"at line {self.lines[arrival_pc]}, its pipes drained)")
        return "syncall", text, "SYNCALL", self.lines[pc], pc

    # ---------------------------------------------------------------- the scalar unit's timeline
    def scalar_segments(self, core, w):
        """([(start, end, cause)], their starts) of unit w's scalar unit, in time order: its
        issue cycles and its waits before each instruction, each with its cause (adjacent
        stretches of one cause joined; made once per unit, vectorised but for the waits that
        are not the scalar unit's own)."""
        if (core, w) in self.segments:
            return self.segments[(core, w)]
        u = self.units[(core, w)]
        scalar = ("scalar", f"the scalar unit of {UNITS[w]}: its instructions and their operands",
                  None, None, -1)
        causes = [scalar]
        d = u.dispatch.astype(np.int64)
        n = len(d)
        # the wait before record k (k >= 1): [d[k-1] + 1, d[k]) when not empty
        k_wait = np.nonzero(d[1:] > d[:-1] + 1)[0] + 1
        cause_of = np.zeros(len(k_wait), np.int64)
        c = u.scalar_cause[k_wait]
        new_block = u.block[k_wait] != u.block[k_wait - 1]
        other = (new_block | (c == CAUSE["cross_core"]) | (c == CAUSE["syncall"]) | (c == CAUSE["signal"])
                 | ((c == CAUSE["pipe"]) & u.tile[k_wait])
                 | (c == CAUSE["barrier"]) | ((c == CAUSE["flag"]) & ~u.tile[k_wait]))
        for i in np.nonzero(other)[0].tolist():
            k = int(k_wait[i])
            causes.append(self._scalar_wait(core, w, k, bool(new_block[i])))
            cause_of[i] = len(causes) - 1
        starts = np.concatenate([d, d[k_wait - 1] + 1])
        ends = np.concatenate([d + 1, d[k_wait]])
        ids = np.concatenate([np.zeros(n, np.int64), cause_of])
        order = np.argsort(starts, kind="stable")
        starts, ends, ids = starts[order], ends[order], ids[order]
        # join each run of contiguous stretches of one cause
        keep = np.ones(len(starts), bool)
        keep[1:] = (starts[1:] != ends[:-1]) | (ids[1:] != ids[:-1])
        run = np.cumsum(keep) - 1
        last_end = np.zeros(int(keep.sum()), np.int64)
        np.maximum.at(last_end, run, ends)
        segs = [(a, b, causes[i]) for a, b, i in zip(starts[keep].tolist(), last_end.tolist(),
                                                       ids[keep].tolist())]
        self.segments[(core, w)] = segs, starts[keep]
        return self.segments[(core, w)]

    def _scalar_wait(self, core, w, k, new_block):
        """The cause of unit w's scalar unit's wait before its record k when it is not the
        scalar unit's own: the next block, a cross-core flag, a wait_flag to PIPE_S (record k
        itself), a full queue, a pipe_barrier."""
        u = self.units[(core, w)]
        pc = int(u.pc[k])
        c = int(u.scalar_cause[k])
        if new_block:
            return ("idle", "nothing: the unit waited for its block's other units or the next block",
                    None, None, -1)
        if c == CAUSE["cross_core"]:
            return self._cross_cause(core, w, k)
        if c == CAUSE["syncall"]:
            return self._syncall_cause(core, w, k)
        if c == CAUSE["signal"]:                 # its own scalar unit, reading GM signals (TWait.hpp's loop)
            what = "until a pass saw them satisfied" if self.names[pc] == "TWAIT" else "once"
            return ("scalar", f"pto.{self.names[pc].lower()} at line {self.lines[pc]}: the scalar unit of {UNITS[w]} "
                    f"reading its GM signals (a dcci and a GM round trip each) {what}", self.names[pc],
                    self.lines[pc], pc)
        if c == CAUSE["flag"]:
            return self._flag_cause(core, w, k)[:5]
        if c == CAUSE["pipe"]:
            return ("queue", f"full pipe queue: {UNITS[w]}'s PIPE_{pipe_name(int(u.pipe[k]))} queue held "
                    f"the scalar unit ({self._at(pc)} waited to enter it)", self.names[pc], self.lines[pc], pc)
        return ("barrier", f"pipe_barrier at line {self.lines[pc]}", self.names[pc], self.lines[pc], pc)

    # ---------------------------------------------------------------- what a transfer's time was
    def transfer_segments(self, unit, j):
        """[(start, end, cause)] of the last cycles of record j of unit (a transfer): its
        shared-bandwidth wait, its bytes over its own path, its L2 miss extra; [] otherwise."""
        u = unit
        pc = int(u.pc[j])
        name = self.names[pc]
        if name not in READS and name not in WRITES:
            return []
        c, s = int(u.complete[j]), int(u.start[j])
        shared = int(u.shared[j])
        missed = int(u.missed[j])
        own = max(0, c - shared - int(moving_start(s, self.lat[pc], name in READS, missed,
                                                   self.miss_extra)))
        at = self._at(pc)
        segs = []
        if missed:
            a = c - shared - own - self.miss_extra
            segs.append((a, a + self.miss_extra, ("l2_miss", f"L2 miss: {at} paid the L2's miss latency",
                                                  name, self.lines[pc], pc)))
        if own:
            segs.append((c - shared - own, c - shared,
                         ("bandwidth", f"GM bandwidth: {at} moving its bytes over its unit's GM path",
                          name, self.lines[pc], pc)))
        if shared:
            segs.append((c - shared, c, ("bandwidth", f"L2/HBM bandwidth: {at} waited for the chip's shared "
                                                      f"L2 / HBM links", name, self.lines[pc], pc)))
        return segs

    # ---------------------------------------------------------------- one gap
    def attribute(self, core, w, i, g0, s):
        """[(start, end, cause)] covering gap [g0, s) of unit w's pipe, ended by its record i."""
        u = self.units[(core, w)]
        d = int(u.dispatch[i])
        out = []
        if d > g0:
            out += _cover(*self.scalar_segments(core, w), g0, min(d, s),
                          ("idle", "nothing: the unit had not started", None, None, -1))
        a = max(g0, d)
        if a < s:
            cause = int(u.cause[i])
            segs = []
            if cause == CAUSE["flag"]:
                k = self._holding_wait(core, w, i)
                if k is None:
                    base = ("flag", "flag wait", None, None, -1)
                else:
                    kind, text, inst, line, pc, rel = self._flag_cause(core, w, k)
                    base = (kind, text, inst, line, pc)
                    if rel is not None:
                        segs = self.transfer_segments(self.units[(core, rel[0])], rel[1])
            elif cause == CAUSE["barrier"] and self._holding_barrier(core, w, i) is not None:
                k = self._holding_barrier(core, w, i)
                pc = int(u.pc[k])
                base = ("barrier", f"pipe_barrier at line {self.lines[pc]}: the PIPE_{pipe_name(int(u.pipe[i]))} "
                                   "pipe's earlier operations finish first (their tails)", "PIPE_BARRIER",
                        self.lines[pc], pc)
            elif cause in (CAUSE["tile_raw"], CAUSE["tile_war"]):
                cpc = int(u.cause_pc[i])
                verb = ("writes a tile it reads" if cause == CAUSE["tile_raw"]
                        else "still reads a tile it overwrites")
                base = ("data", f"data (sync=\"auto\"): {self._at(cpc)} {verb}", self.names[cpc],
                        self.lines[cpc], cpc)
                if cause == CAUSE["tile_raw"]:
                    for ww in range(3):
                        v = self.units.get((core, ww))
                        if v is None:
                            continue
                        k = v.producer.get((cpc, s))
                        if k is not None and v.block[k] == u.block[i]:
                            segs = self.transfer_segments(v, k)
                            break
            else:
                base = ("tail", f"the PIPE_{pipe_name(int(u.pipe[i]))} pipe's previous operation "
                                f"(its tail)", None, None, -1)
            segs = sorted(segs)
            out += _cover(segs, np.array([x[0] for x in segs], np.int64), a, s, base)
        return out

    def _holding_barrier(self, core, w, i):
        """The last PIPE_BARRIER record of unit w before its record i, in i's block, on i's
        pipe or on every pipe (PIPE_ALL), or None."""
        u = self.units[(core, w)]
        ks, pipes = self.barriers[(core, w)]
        mine = ks[(ks < i) & ((pipes == int(u.pipe[i])) | (pipes < 0))]
        if len(mine) == 0 or u.block[mine[-1]] != u.block[i]:
            return None
        return int(mine[-1])

    def _holding_wait(self, core, w, i):
        """The WAIT_FLAG record on unit w's pipe of record i, before i in its block, whose flag
        fired last (the running maximum that held the pipe), or None."""
        u = self.units[(core, w)]
        got = self.holding[(core, w)].get(int(u.pipe[i]))
        if got is None:
            return None
        ks, hs = got
        pos = int(np.searchsorted(ks, i)) - 1
        if pos < 0 or u.block[ks[pos]] != u.block[i]:
            return None
        return hs[pos]


def flag_handoffs(prof) -> list:
    """Every flag handoff of an AI-core launch, as the bubble report pairs them (first in,
    first out per flag): (kind, set record, wait record, held record, fire cycle) with kind
    "flag" (a set_flag and the wait_flag that took it; held: the first operation on the
    flag's destination pipe queued after the wait in its block, -1 when none was or the wait
    held the scalar unit: a wait to PIPE_S) or
    "cross_core" (one cross_core_set_flag signal and the cross_core_wait_flag that took it,
    one handoff per signal; held: -1, since the wait held its scalar unit), in wait order."""
    rec = prof.records
    if not len(rec):
        return []
    att = _Attributor(prof)
    waits: dict = {}
    for core, w, k in att.flag:
        waits.setdefault((core, w), []).append(k)
    out = []
    for (core, w), u in sorted(att.units.items()):
        # the tile operations of each pipe, in dispatch order: a wait holds the next one
        on_pipe = {p: np.nonzero(u.tile & (u.pipe == p))[0] for p in np.unique(u.pipe).tolist()}
        for k in sorted(waits.get((core, w), [])):
            pc = int(u.pc[k])
            if att.names[pc] == "WAIT_FLAG":
                sw, sk, _j, fire = att.flag[(core, w, k)]
                later = on_pipe.get(att.aux[pc][1], np.zeros(0, np.int64))
                pos = int(np.searchsorted(later, k))
                held = int(later[pos]) if pos < len(later) and u.block[later[pos]] == u.block[k] else -1
                out.append(("flag", int(att.units[(core, sw)].idx[sk]), int(u.idx[k]),
                            int(u.idx[held]) if held >= 0 else -1, int(fire)))
            else:
                for sw, sk, _j, fire in att.signals[(core, w, k)]:
                    out.append(("cross_core", int(att.units[(core, sw)].idx[sk]), int(u.idx[k]), -1,
                                int(fire)))
    return out


def _cover(segs, starts, a, b, default) -> list:
    """[(start, end, cause)] partitioning [a, b): the parts of segs (time-ordered, disjoint;
    starts: their starts) inside it, the rest as default."""
    out = []
    t = a
    lo = max(0, int(np.searchsorted(starts, a, side="right")) - 1)
    for s0, s1, cause in segs[lo:]:
        if s0 >= b:
            break
        s0, s1 = max(s0, a), min(s1, b)
        if s1 <= s0 or s1 <= t:
            continue
        s0 = max(s0, t)
        if s0 > t:
            out.append((t, s0, default))
        out.append((s0, s1, cause))
        t = s1
    if t < b:
        out.append((t, b, default))
    return out


def compute_aicore_bubbles(prof) -> list:
    """Every bubble of an AI-core launch, one per stretch with one cause, ordered by core,
    unit, pipe and time: Bubble dicts with ``unit`` (AIC, AIV0, AIV1) and ``pipe`` (MTE2, MTE1,
    M, FIX, V, MTE3)."""
    rec = prof.records
    if not len(rec):
        return []
    att = _Attributor(prof)
    windows = prof.active_windows()
    made = []
    for (core, w), u in sorted(att.units.items()):
        w0, w1 = windows[core]
        for p in sorted(set(u.pipe[u.tile].tolist()), key=lambda q: PTO_ORDER.index(pipe_name(q))):
            sel = np.nonzero(u.tile & (u.pipe == p))[0]
            order = sel[np.lexsort((sel, u.start[sel]))]
            covered = w0
            pieces = []
            for i in order.tolist():
                s = int(u.start[i])
                if s > covered:
                    pieces += [(a, b, c, int(u.idx[i])) for a, b, c in att.attribute(core, w, i, covered, s)]
                covered = max(covered, int(u.complete[i]))
            if covered < w1:
                pieces.append((covered, w1, ("idle", "nothing: no more work for this pipe (idle tail)",
                                             None, None, -1), -1))
            for a, b, (kind, text, inst, line, pc), by in _merged(pieces):
                bub = dict.__new__(Bubble)
                dict.__init__(bub, core=int(core), unit=UNITS[w], pipe=pipe_name(p), start=int(a),
                              end=int(b), cycles=int(b - a), kind=kind, text=text, inst=inst,
                              line=None if line is None else int(line), pc=int(pc), ended_by=by)
                made.append(bub)
    return made


PTO_ORDER = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3", "S")


def _merged(pieces) -> list:
    """pieces with each run of adjacent stretches of one cause (and one ending operation)
    joined into one stretch."""
    out = []
    for a, b, cause, by in pieces:
        if out and out[-1][1] == a and out[-1][2] == cause and out[-1][3] == by:
            out[-1] = (out[-1][0], b, cause, by)
        else:
            out.append((a, b, cause, by))
    return out


class AICoreBubbleReport(BubbleReport):
    """The bubbles of an AI-core launch per unit and PTO pipe ("AIC MTE2", "AIV0 V", ...),
    summed over the cores, by cause; a read-only list of Bubble dicts (each with ``unit``).
    ``by_cause()`` rows are (unit and pipe, cause text, kind, idle cycles, stretches)."""

    def __init__(self, bubbles, active_cycles, pipe=None, core=None, unit=None):
        super().__init__([b for b in bubbles if unit is None or b["unit"] == unit], active_cycles,
                         pipe=pipe, core=core)
        self.unit = unit

    def __reduce__(self):
        return (AICoreBubbleReport, (list(self), self.active_cycles, self.pipe, self.core, self.unit))

    def by_cause(self, pipe=None) -> list:
        """[(unit and pipe, cause text, kind, idle cycles, stretches)], per unit and pipe in PTO
        order, largest cause first."""
        sums: dict = {}
        for b in self:
            if pipe is None or b.pipe == pipe:
                key = (f"{b.unit} {b.pipe}", b.text, b.kind)
                cyc, gaps = sums.get(key, (0, 0))
                sums[key] = (cyc + b.cycles, gaps + 1)
        rows = [(p, text, kind, cyc, gaps) for (p, text, kind), (cyc, gaps) in sums.items()]
        return sorted(rows, key=lambda r: (_label_order(r[0]), -r[3], r[1]))

    def rows(self) -> list:
        """One dict per bubble (for CSV export), with its unit."""
        return [{"core_id": b.core, "unit": b.unit, "pipe": b.pipe, "start_cycle": b.start,
                 "end_cycle": b.end, "cycles": b.cycles, "kind": b.kind, "cause": b.text,
                 "waited_for": b.inst or "", "line": b.line if b.line is not None else "",
                 "pc": b.pc} for b in self]

    def __str__(self):
        where = f" on core {self.core}" if self.core is not None else ""
        head = (f"bubbles{where}: idle cycles of each unit's pipes inside each AI core's active "
                f"window, by cause")
        rows = self.by_cause()
        if not rows:
            return head + "\n  (none)"
        lines = [head]
        for label in sorted({r[0] for r in rows}, key=_label_order):
            mine = [r for r in rows if r[0] == label]
            lines += cause_lines(label, mine, self.active_cycles.get(label, 0), "stretches")
        return "\n".join(lines)

    __repr__ = __str__


def _label_order(label):
    unit, pipe = label.split(" ")
    return UNITS.index(unit), PTO_ORDER.index(pipe)


def aicore_active_cycles(prof, core=None) -> dict:
    """{"AIC MTE2": cycles, ...}: per unit and pipe, the active windows of the cores (of
    ``core``) on which the unit used the pipe."""
    rec, pipes = prof.records, prof.record_pipes
    tile = np.asarray(prof.pc_is_tile, bool)[rec.pc] if len(rec) else np.zeros(0, bool)
    out: dict = {}
    for c, (a, b) in prof.active_windows().items():
        if core not in (None, c):
            continue
        on = tile & (rec.core == c)
        for w, p in set(zip(rec.warp[on].tolist(), pipes[on].tolist())):
            label = f"{UNITS[w]} {pipe_name(p)}"
            out[label] = out.get(label, 0) + (b - a)
    return out


def aicore_bubbles(prof, pipe=None, core=None, unit=None) -> AICoreBubbleReport:
    """Profile.bubbles of an AI-core kernel (pipe and unit checked; the bubbles computed once
    per profile)."""
    if pipe is not None and pipe not in PTO_ORDER[:-1]:
        raise ArgumentError(f"bubbles: pipe of an AI-core kernel must be one of {PTO_ORDER[:-1]}, "
                            f"not {pipe!r}", hint="give the PTO pipe without PIPE_, e.g. pipe='MTE2'")
    if unit is not None and unit not in UNITS:
        raise ArgumentError(f"bubbles: unit must be one of {UNITS}, not {unit!r}",
                            hint="AIC is the cube unit, AIV0 / AIV1 the vector units")
    cache = prof._cache
    if "aicore_bubbles" not in cache:
        cache["aicore_bubbles"] = compute_aicore_bubbles(prof)
    return AICoreBubbleReport(cache["aicore_bubbles"], aicore_active_cycles(prof, core), pipe=pipe,
                              core=core, unit=unit)
