"""The cycle breakdown of a launch: cycles per instruction kind, under the names the article
and msprof use.

One rule is not a plain sum per instruction: ``pto.fma(ptr, x, y, z)`` compiles to one
``FMA_STORE`` instruction that computes ``x * y + z`` and then writes it. The article's profile
of vector_add lists ``LOAD``, ``FMA`` and ``STORE``, so the breakdown splits each FMA_STORE in
two rows: its compute, from issue until its value is ready (the instruction's latency), under
``FMA`` (on the vector pipe, as a plain FMA), and its write, from then until the store is
visible, under ``STORE``. Its wait before issue is the FMA row's stall. Both rows count the
instruction, so ``count`` summed over rows can exceed ``warp_instructions``; the busy cycles
are split, never duplicated, so they sum to the same total as the timeline's
issue-to-completion cycles. A fused FMA_STORE (``LOAD+FMA_STORE``) splits into ``LOAD+FMA``
and ``STORE``. The timeline, the listing and the debugger show the one instruction as it is.
"""
from __future__ import annotations

from .tables import plain_row, to_dataframe

COLUMNS = ("pipe", "count", "busy_cycles", "stall_cycles")


def split_name(name: str):
    """(compute row, write row) of an instruction the breakdown splits, else None:
    'FMA_STORE' -> ('FMA', 'STORE'); a fused 'LOAD+FMA_STORE' -> ('LOAD+FMA', 'STORE')."""
    head, _, last = name.rpartition("+")
    if last != "FMA_STORE":
        return None
    return (f"{head}+FMA" if head else "FMA"), "STORE"


def breakdown_rows(names, pipes, latencies, counts, busy, stall, compute_pipe="vector") -> dict:
    """{row name: {"pipe", "count", "busy_cycles", "stall_cycles"}} from per-pc facts (only pcs
    with a nonzero count are given): an instruction's row is its name, except that an
    FMA_STORE is split as the module docstring says (its compute: ``count * latency`` cycles
    on ``compute_pipe``)."""
    rows: dict = {}

    def add(name, pipe, count, busy_cycles, stall_cycles):
        row = rows.setdefault(name, {"pipe": pipe, "count": 0, "busy_cycles": 0, "stall_cycles": 0})
        row["count"] += int(count)
        row["busy_cycles"] += int(busy_cycles)
        row["stall_cycles"] += int(stall_cycles)

    for name, pipe, lat, n, b, s in zip(names, pipes, latencies, counts, busy, stall):
        parts = split_name(name)
        if parts is None:
            add(name, pipe, n, b, s)
            continue
        compute = min(int(n) * int(lat), int(b))     # issue -> value ready, per execution
        add(parts[0], compute_pipe, n, compute, s)
        add(parts[1], pipe, n, int(b) - compute, 0)
    return dict(sorted(rows.items()))


class CycleBreakdown(dict):
    """Cycles per instruction kind: a read-only dict from instruction name (case-insensitive
    lookup) to its row ``{"pipe", "count" (warp-instructions), "busy_cycles" (issue to
    completion, summed), "stall_cycles" (waited before issue, summed)}``; an FMA with a
    pointer destination is split into ``FMA`` and ``STORE`` (module docstring). It is plain
    data: ``json.dumps(bd)`` works; ``to_pandas()`` gives a DataFrame; printing shows a table
    with each kind's share of the busy cycles. ``total_cycles`` is the kernel's and
    ``warp_instructions`` the number of warp-instructions issued (each counted once)."""

    def __init__(self, rows, total_cycles, warp_instructions=None):
        plain = {name: plain_row(row) for name, row in rows.items()}
        super().__init__(plain)
        self.total_cycles = int(total_cycles)
        self.warp_instructions = (int(warp_instructions) if warp_instructions is not None
                                  else sum(r["count"] for r in plain.values()))

    @property
    def rows(self) -> dict:
        """{instruction: row} (the mapping itself, as a plain dict)."""
        return dict(self)

    def __getitem__(self, name):
        key = name.upper() if isinstance(name, str) else name
        if not dict.__contains__(self, key):
            raise KeyError(f"{name!r}: no such instruction in this breakdown; it has "
                           f"{', '.join(self) or 'none'}")
        return dict.__getitem__(self, key)

    def get(self, name, default=None):
        return self[name] if name in self else default

    def __contains__(self, name):
        return isinstance(name, str) and dict.__contains__(self, name.upper())

    def _read_only(self, *args, **kwargs):
        raise TypeError("a cycle breakdown is read-only; copy it with as_dict() to change it")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def as_dict(self) -> dict:
        """{instruction: {"count", "busy_cycles", "stall_cycles", "pipe"}} (copies)."""
        return {k: dict(v) for k, v in self.items()}

    def to_pandas(self):
        """A DataFrame indexed by instruction (needs pandas)."""
        return to_dataframe([{"instruction": k, **v} for k, v in self.items()], "instruction")

    def __str__(self):
        total_busy = sum(r["busy_cycles"] for r in self.values()) or 1
        wide = max([7] + [len(r["pipe"]) for r in self.values()])
        names = max([16] + [len(k) for k in self])
        lines = [f"{'instruction':{names}s} {'pipe':{wide}s} {'count':>8s} {'busy cycles':>12s} "
                 f"{'stall cycles':>12s} {'share':>7s}"]
        for name, r in sorted(self.items(), key=lambda kv: -kv[1]["busy_cycles"]):
            lines.append(f"{name:{names}s} {r['pipe']:{wide}s} {r['count']:>8d} {r['busy_cycles']:>12d} "
                         f"{r['stall_cycles']:>12d} {100 * r['busy_cycles'] / total_busy:>6.1f}%")
        lines.append(f"total cycles: {self.total_cycles}")
        return "\n".join(lines)

    __repr__ = __str__

    def __reduce__(self):
        return (CycleBreakdown, (self.as_dict(), self.total_cycles, self.warp_instructions))
