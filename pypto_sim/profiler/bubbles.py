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
from ..timing.records import STALL_CAUSES
from .deps import HBM_INSTRUCTIONS, fixed_cycles
from .tables import read_only

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
    fields = dict(fields)
    fields.pop("cycles")
    return Bubble(**fields)


def compute_bubbles(prof) -> list:
    """Every bubble of the launch, ordered by core, pipe and time."""
    rec = prof.records
    if not len(rec):
        return []
    ctx = _Context(prof)
    pipes = prof.record_pipes
    out = []
    windows = prof.active_windows()
    for core in sorted(windows):
        w0, w1 = windows[core]
        on_core = np.nonzero(rec.core == core)[0]
        for p, pipe in enumerate(PIPES):
            idx = on_core[pipes[on_core] == p]
            if not len(idx):
                continue
            starts, ends = rec.issue[idx], rec.complete[idx]
            # by start; among equal starts an operation that waited first, then record order
            order = np.lexsort((idx, rec.cause[idx] == 0, starts))
            idx, starts, ends = idx[order], starts[order], ends[order]
            covered = np.maximum.accumulate(ends)
            before = np.concatenate(([w0], covered[:-1]))
            for k in np.nonzero(starts > before)[0].tolist():
                out += ctx.attribute(core, pipe, int(before[k]), int(starts[k]), int(idx[k]))
            if covered[-1] < w1:
                out.append(Bubble(core, pipe, int(covered[-1]), int(w1), "end",
                                  "idle at end: no more work for this pipe"))
    return out


class _Context:
    """Columns as Python lists (fast scalar access) and the lazily computed relations."""

    def __init__(self, prof):
        rec = prof.records
        self.prof = prof
        self.pc = rec.pc.tolist()
        self.issue = rec.issue.tolist()
        self.stall = rec.stall.tolist()
        self.cause = rec.cause.tolist()
        self.cause_pc = rec.cause_pc.tolist()
        self.bytes = rec.bytes.tolist()
        self.producer = prof.producers().tolist()
        self.prev = prof.previous_in_warp().tolist()
        self.is_tile = prof.pc_is_tile
        self.names = prof.pc_name
        self.lines = prof.pc_line

    def _explaining(self, i, g0):
        """The record whose wait explains a gap ending at record i's start: i itself if it
        waited, else the warp's latest earlier wait still going on after g0 (or -1)."""
        if self.cause[i]:
            return i
        j, steps = self.prev[i], 0
        while j >= 0 and steps < _LOOKBACK:
            if not self.is_tile[self.pc[j]]:
                if self.issue[j] <= g0:
                    return -1
                if self.stall[j] > 0 and self.cause[j]:
                    return j
            j, steps = self.prev[j], steps + 1
        return -1

    def attribute(self, core, pipe, g0, g1, i) -> list:
        j = self._explaining(i, g0)
        if j < 0:
            return [Bubble(core, pipe, g0, g1, "order",
                           "instruction order: the warp was issuing earlier instructions",
                           ended_by=i)]
        cause = STALL_CAUSES[self.cause[j]]
        cpc = self.cause_pc[j]
        inst = self.names[cpc] if cpc >= 0 else None
        line = self.lines[cpc] if cpc >= 0 else None
        at = f"{inst} at line {line}" if cpc >= 0 else "an earlier instruction"
        own = f"line {self.lines[self.pc[j]]}"
        if cause in ("operand", "tile_raw"):
            text = f"waiting on {at}"
            p = self.producer[j]
            if inst in HBM_INSTRUCTIONS and p >= 0 and self.bytes[p] > 0:
                split = min(max(self.issue[p] + fixed_cycles(self.prof, self.pc[p]), g0), g1)
                parts = []
                if split > g0:
                    parts.append(Bubble(core, pipe, g0, split, "operand", text, inst, line, cpc, i))
                if split < g1:
                    parts.append(Bubble(core, pipe, split, g1, "hbm", f"HBM bandwidth: {text}",
                                        inst, line, cpc, i))
                return parts
            return [Bubble(core, pipe, g0, g1, "operand", text, inst, line, cpc, i)]
        kind, text = {
            "tile_war": ("depth", f"pipeline depth (no free buffer): {at} still reads it"),
            "after": ("stage", f"stage order: after {at}"),
            "wait_all": ("wait_all", f"wait_all() at {own}"),
            "barrier": ("barrier", f"barrier() at {own}"),
            "barrier_block": ("barrier", f"barrier_block() at {own}"),
            "flag": ("flag", f"wait_flag at {own}"),
            "memory": ("hbm", "HBM bandwidth"),
            "pipe": ("pipe", f"{PIPES[self.prof.pc_pipe_index(self.pc[j])]} pipe issue interval"),
            "issue": ("issue", "the core's issue port (issue width)"),
        }.get(cause, ("order", "instruction order: the warp was issuing earlier instructions"))
        return [Bubble(core, pipe, g0, g1, kind, text, inst, line, cpc, i)]


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

    def __str__(self):
        where = f" on core {self.core}" if self.core is not None else ""
        lines = [f"bubbles{where}: idle cycles of each pipe inside each core's active window, by cause"]
        rows = self.by_cause()
        if not rows:
            return lines[0] + "\n  (none)"
        for p in PIPES:
            mine = [r for r in rows if r[0] == p]
            if not mine:
                continue
            idle = sum(r[3] for r in mine)
            active = self.active_cycles.get(p, 0)
            share = f" of {active} active ({100 * idle / active:.0f}%)" if active else ""
            lines.append(f"{p} pipe: {idle} idle cycles{share}")
            for _, text, _kind, cyc, gaps in mine:
                lines.append(f"  {cyc:>9d} {100 * cyc / max(idle, 1):>5.1f}% {gaps:>6d} gaps  {text}")
        return "\n".join(lines)

    __repr__ = __str__
