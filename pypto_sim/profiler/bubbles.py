"""Pipeline bubbles: every idle gap of every pipe of every core, and why it was idle.

A core's active window runs from the first issue of an instruction on it to the last
completion. Inside it, a pipe that did some work on that core is idle wherever none of its
operations is in flight (issue to completion). Each gap is attributed to the operation that
ended it, through what the timing model recorded about that operation's wait (its ``cause``
and ``cause_pc``):

- waiting on an operand or a tile being written (``operand``, ``tile_raw``):
  "waiting on TLOAD at line 144"; when the instruction waited for moved data over HBM, the part
  of the gap after its fixed latency is "HBM bandwidth: waiting on TLOAD at line 144";
- a tile it overwrites still being read (``tile_war``): "pipeline depth (no free buffer)";
- a pipeline stage it comes after, ``wait_all()``, ``barrier()``/``barrier_block()``, an event
  flag, the pipe's issue interval or the core's issue port;
- an operation that did not wait at all started when its warp reached it: the gap is charged
  to the warp's own latest wait that overlaps the gap ("waiting on ... " via that instruction),
  else to "instruction order" (the warp was issuing earlier instructions);
- after a pipe's last operation: "idle at end".

Pipes a core never used have no bubbles (``pipe_utilization`` shows them as 0).
"""
from __future__ import annotations

import numpy as np

from ..isa import PIPES
from ..timing.records import CAUSE, STALL_CAUSES
from .deps import HBM_INSTRUCTIONS, fixed_cycles
from .tables import read_only
from .tables import to_dataframe

KINDS = ("operand", "hbm", "depth", "stage", "wait_all", "barrier", "flag", "pipe", "issue",
         "order", "end")
_LOOKBACK = 32


class Bubble(dict):
    """One idle stretch [start, end) of one pipe on one core, and its cause: a read-only dict
    of plain values (``json.dumps`` takes it) whose keys also read as attributes.

    ``core``, ``pipe``, ``start``, ``end``, ``cycles`` (end - start); ``kind`` is one of KINDS;
    ``text`` the readable cause; ``inst``/``line``/``pc`` the instruction waited for (None/-1
    when the cause names none); ``ended_by`` the record index of the operation that ended the
    gap (-1 for idle at end)."""

    __slots__ = ()

    def __init__(self, core, pipe, start, end, kind, text, inst=None, line=None, pc=-1, ended_by=-1):
        super().__init__(core=int(core), pipe=pipe, start=int(start), end=int(end),
                         cycles=int(end) - int(start), kind=kind, text=text, inst=inst,
                         line=None if line is None else int(line), pc=int(pc),
                         ended_by=int(ended_by))

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"a Bubble has no field {name!r}; it has {', '.join(self)}") from None

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = read_only

    def __reduce__(self):
        return (_bubble, (dict(self),))


def _bubble(fields):
    """A Bubble with exactly these fields (an AI-core bubble's ``unit`` included)."""
    b = dict.__new__(Bubble)
    dict.__init__(b, fields)
    return b


_ORDER_TEXT = "instruction order: the warp was issuing earlier instructions"


def _gaps(prof):
    """(core, pipe, gap start, gap end, record that ended it or -1) of every idle gap, the
    gaps at the end of each core's window included. Vectorised over all (core, pipe)."""
    rec = prof.records
    pipes = prof.record_pipes
    group = rec.core.astype(np.int64) * len(PIPES) + pipes
    # by group, start; among equal starts an operation that waited first, then record order
    order = np.lexsort((np.arange(len(rec)), rec.cause == 0, rec.issue, group))
    g, starts, ends = group[order], rec.issue[order], rec.complete[order]
    # the furthest completion so far within each group: a running max that cannot carry over
    # from an earlier group, because each group's offset exceeds every earlier value
    big = int(ends.max()) + 1
    covered = np.maximum.accumulate(ends + g * big) - g * big
    first = np.ones(len(g), bool)
    first[1:] = g[1:] != g[:-1]
    windows = prof.active_windows()
    w_cores = np.array(sorted(windows), np.int64)
    w0 = np.array([windows[c][0] for c in w_cores.tolist()], np.int64)
    w1 = np.array([windows[c][1] for c in w_cores.tolist()], np.int64)
    core_of = g // len(PIPES)
    slot = np.searchsorted(w_cores, core_of)
    before = np.empty_like(covered)
    before[1:] = covered[:-1]
    before[first] = w0[slot[first]]
    inside = np.nonzero(starts > before)[0]
    last = np.nonzero(np.append(first[1:], True))[0]
    at_end = last[covered[last] < w1[slot[last]]]
    core = np.concatenate([core_of[inside], core_of[at_end]])
    pipe = np.concatenate([g[inside] % len(PIPES), g[at_end] % len(PIPES)])
    g0 = np.concatenate([before[inside], covered[at_end]])
    g1 = np.concatenate([starts[inside], w1[slot[at_end]]])
    ended_by = np.concatenate([order[inside], np.full(len(at_end), -1, np.int64)])
    return core, pipe, g0, g1, ended_by


def _explaining(prof, i, g0):
    """For gaps ending at record i's start: the wait that covers most of the gap among i's own
    and the warp's earlier waits (of non-tile instructions) still going on after g0, i on a
    tie; -1 when none waited (looking back at most _LOOKBACK records of the warp). An ENDIF's
    one-cycle stall for the issue port at the end of a 300-cycle gap behind a store that
    waited for its load does not explain the gap, the store's wait does; an MMA that waited
    most of its gap for its TLOAD explains it, though the warp dispatched it into the gap."""
    rec = prof.records
    prev = prof.previous_in_warp()
    is_tile = np.asarray(prof.pc_is_tile, bool)
    end = rec.issue[i]                              # the gap ends where i starts
    best = np.where(rec.cause[i] != 0, i, -1)
    best_cover = np.where(best >= 0, np.minimum(rec.stall[i], end - g0), 0)
    todo = np.arange(len(i))
    j = prev[i]
    for _ in range(_LOOKBACK):
        live = j >= 0
        todo, j = todo[live], j[live]
        if not len(todo):
            break
        lane_op = ~is_tile[rec.pc[j]]
        gone = lane_op & (rec.issue[j] <= g0[todo])
        waits = lane_op & ~gone & (rec.stall[j] > 0) & (rec.cause[j] != 0)
        cover = np.minimum(rec.issue[j], end[todo]) - np.maximum(rec.issue[j] - rec.stall[j], g0[todo])
        better = waits & (cover > best_cover[todo])
        best[todo[better]] = j[better]
        best_cover[todo[better]] = cover[better]
        todo, j = todo[~gone], prev[j[~gone]]
    return best


def _cause_text(prof, cause, cpc, own_pc, hbm_part):
    """(kind, text, inst, line, pc) of a bubble explained by a wait of ``cause`` for the
    instruction at ``cpc`` (-1: none) by the instruction at ``own_pc``."""
    names, lines = prof.pc_name, prof.pc_line
    inst = names[cpc] if cpc >= 0 else None
    line = lines[cpc] if cpc >= 0 else None
    at = f"{inst} at line {line}" if cpc >= 0 else "an earlier instruction"
    own = f"line {lines[own_pc]}"
    if cause in ("operand", "tile_raw"):
        text = f"waiting on {at}"
        if hbm_part:
            return "hbm", f"HBM bandwidth: {text}", inst, line, cpc
        return "operand", text, inst, line, cpc
    kind, text = {
        "tile_war": ("depth", f"pipeline depth (no free buffer): {at} still reads it"),
        "after": ("stage", f"stage order: after {at}"),
        "wait_all": ("wait_all", f"wait_all() at {own}"),
        "barrier": ("barrier", f"barrier() at {own}"),
        "barrier_block": ("barrier", f"barrier_block() at {own}"),
        "flag": ("flag", f"wait_flag at {own}"),
        "memory": ("hbm", "HBM bandwidth"),
        "pipe": ("pipe", f"{PIPES[prof.pc_pipe_index(own_pc)]} pipe issue interval"),
        "issue": ("issue", "the core's issue port (issue width)"),
    }.get(cause, ("order", _ORDER_TEXT))
    return kind, text, inst, line, cpc


def compute_bubbles(prof) -> list:
    """Every bubble of the launch, ordered by core, pipe and time (vectorised: the gaps of
    all pipes and cores at once, a Python step per distinct cause, one per bubble only to
    make its Bubble)."""
    rec = prof.records
    if not len(rec):
        return []
    core, pipe, g0, g1, ended = _gaps(prof)
    inside = ended >= 0
    j = np.full(len(g0), -1, np.int64)
    j[inside] = _explaining(prof, ended[inside], g0[inside])
    explained = j >= 0
    jj = np.where(explained, j, 0)
    cause = np.where(explained, rec.cause[jj], -1)
    cpc = np.where(explained, rec.cause_pc[jj], -1)
    own = np.where(explained, rec.pc[jj], -1)
    # a wait for an HBM instruction's data: after its fixed latency, the gap is bandwidth
    producer = prof.producers()
    p = np.where(explained, producer[jj], -1)
    pp = np.maximum(p, 0)
    hbm_pc = np.array([n in HBM_INSTRUCTIONS for n in prof.pc_name] + [False], bool)
    waits_data = np.isin(cause, [CAUSE["operand"], CAUSE["tile_raw"]])
    split_gap = waits_data & hbm_pc[cpc] & (p >= 0) & (rec.bytes[pp] > 0)
    fixed = np.array([fixed_cycles(prof, k) if hbm_pc[k] else 0
                      for k in range(len(prof.pc_name))] + [0], np.int64)
    split = np.clip(rec.issue[pp] + fixed[rec.pc[pp]], g0, g1)
    head = ~split_gap | (split > g0)             # the whole gap, or its part before the split
    tail = split_gap & (split < g1)              # the HBM part
    rows_core = np.concatenate([core[head], core[tail]])
    rows_pipe = np.concatenate([pipe[head], pipe[tail]])
    rows_start = np.concatenate([g0[head], split[tail]])
    rows_end = np.concatenate([np.where(split_gap, split, g1)[head], g1[tail]])
    rows_by = np.concatenate([ended[head], ended[tail]])
    # distinct causes: (end gap / unexplained / cause, cause_pc, own pc, HBM part)
    n_pc = len(prof.pc_name) + 1
    variant = np.where(inside, np.where(explained, 2, 1), 0)
    key = ((variant * (len(STALL_CAUSES) + 1) + cause + 1) * n_pc + cpc + 1) * n_pc + own + 1
    key = np.concatenate([key[head] * 2, key[tail] * 2 + 1])
    keys, index = np.unique(key, return_inverse=True)
    causes = []
    for k in keys.tolist():
        k, part = divmod(k, 2)
        k, own_pc = divmod(k, n_pc)
        k, cause_pc = divmod(k, n_pc)
        var, c = divmod(k, len(STALL_CAUSES) + 1)
        if var == 0:
            causes.append(("end", "idle at end: no more work for this pipe", None, None, -1))
        elif var == 1:
            causes.append(("order", _ORDER_TEXT, None, None, -1))
        else:
            causes.append(_cause_text(prof, STALL_CAUSES[c - 1], cause_pc - 1, own_pc - 1, part))
    order = np.lexsort((rows_start, rows_pipe, rows_core))
    cause_of = index.reshape(-1)[order]
    # the fields of each cause once; each Bubble made from them directly (as Bubble() makes
    # it, with plain ints: what the columns' tolist() gives), a third of Bubble()'s time
    shared = [dict(zip(("kind", "text", "inst", "line", "pc"), c)) for c in causes]
    made = []
    for c, p, s, e, k, by in zip(rows_core[order].tolist(), rows_pipe[order].tolist(),
                                 rows_start[order].tolist(), rows_end[order].tolist(),
                                 cause_of.tolist(), rows_by[order].tolist()):
        b = dict.__new__(Bubble)
        dict.__init__(b, core=c, pipe=PIPES[p], start=s, end=e, cycles=e - s, **shared[k],
                      ended_by=by)
        made.append(b)
    return made


class BubbleReport(list):
    """The bubbles of a launch (optionally of one pipe or core), summed per cause: a read-only
    list of Bubble (plain dicts, so ``json.dumps(report)`` works).

    ``bubbles`` (list of Bubble); ``idle_cycles``; ``by_cause()`` and ``summary()`` (per pipe
    and cause, plain data); ``cycles(kind=, inst=, pipe=)``; ``waiting_on(inst)``; printing
    shows one table per pipe."""

    def __init__(self, bubbles, active_cycles, pipe=None, core=None):
        super().__init__(b for b in bubbles if (pipe is None or b.pipe == pipe)
                         and (core is None or b.core == core))
        self.active_cycles = {p: int(c) for p, c in active_cycles.items()}
        # pipe -> cycles of the active windows of the cores (of ``core``) that used the pipe
        self.pipe = pipe
        self.core = core

    @property
    def bubbles(self) -> list:
        """The bubbles as a plain list."""
        return list(self)

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = read_only
    sort = reverse = __iadd__ = __imul__ = read_only

    def __reduce__(self):
        return (BubbleReport, (list(self), self.active_cycles, self.pipe, self.core))

    @property
    def idle_cycles(self) -> int:
        return sum(b.cycles for b in self)

    def cycles(self, kind=None, inst=None, pipe=None) -> int:
        """Idle cycles of the bubbles matching a kind, an instruction waited for and a pipe."""
        return sum(b.cycles for b in self if (kind is None or b.kind == kind)
                   and (inst is None or b.inst == inst.upper()) and (pipe is None or b.pipe == pipe))

    def waiting_on(self, inst, pipe=None) -> int:
        """Idle cycles spent waiting for instruction ``inst`` (its result, its HBM transfer)."""
        return sum(self.cycles(kind, inst, pipe) for kind in ("operand", "hbm"))

    def by_cause(self, pipe=None) -> list:
        """[(pipe, cause text, kind, idle cycles, gaps)], per pipe, largest first."""
        sums: dict = {}
        for b in self:
            if pipe is None or b.pipe == pipe:
                key = (b.pipe, b.text, b.kind)
                cyc, gaps = sums.get(key, (0, 0))
                sums[key] = (cyc + b.cycles, gaps + 1)
        rows = [(p, text, kind, cyc, gaps) for (p, text, kind), (cyc, gaps) in sums.items()]
        return sorted(rows, key=lambda r: (PIPES.index(r[0]), -r[3], r[1]))

    def summary(self) -> dict:
        """{pipe: {"idle_cycles", "active_cycles", "causes": [{"cause", "kind", "cycles",
        "gaps"}, ...] largest first}}: the printed table as plain data."""
        out: dict = {}
        for p, text, kind, cyc, gaps in self.by_cause():
            entry = out.setdefault(p, {"idle_cycles": 0, "active_cycles": self.active_cycles.get(p, 0),
                                       "causes": []})
            entry["idle_cycles"] += cyc
            entry["causes"].append({"cause": text, "kind": kind, "cycles": cyc, "gaps": gaps})
        return out

    def rows(self) -> list:
        """One dict per bubble (for CSV export)."""
        return [{"core_id": b.core, "pipe": b.pipe, "start_cycle": b.start, "end_cycle": b.end,
                 "cycles": b.cycles, "kind": b.kind, "cause": b.text, "waited_for": b.inst or "",
                 "line": b.line if b.line is not None else "", "pc": b.pc} for b in self]

    def to_pandas(self):
        """A DataFrame with one row per bubble, the columns of ``rows()`` (needs pandas)."""
        return to_dataframe(self.rows())

    def __str__(self):
        where = f" on core {self.core}" if self.core is not None else ""
        lines = [f"bubbles{where}: idle cycles of each pipe inside each core's active window, by cause"]
        rows = self.by_cause()
        if not rows:
            return lines[0] + "\n  (none)"
        for p in PIPES:
            mine = [r for r in rows if r[0] == p]
            if mine:
                lines += cause_lines(f"{p} pipe", mine, self.active_cycles.get(p, 0), "gaps")
        return "\n".join(lines)

    __repr__ = __str__


def cause_lines(heading: str, rows: list, active: int, stretch_word: str) -> list:
    """The report lines of one pipe's idle time: ``heading`` with its idle cycles (and their
    share of ``active`` cycles when known), then one line per (label, text, kind, cycles,
    gaps) row of ``rows``: cycles, share of the idle time, how many stretches, the cause."""
    idle = sum(r[3] for r in rows)
    share = f" of {active} active ({100 * idle / active:.0f}%)" if active else ""
    lines = [f"{heading}: {idle} idle cycles{share}"]
    for _, text, _kind, cyc, gaps in rows:
        lines.append(f"  {cyc:>9d} {100 * cyc / max(idle, 1):>5.1f}% {gaps:>6d} {stretch_word}  {text}")
    return lines
