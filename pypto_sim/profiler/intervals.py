"""Interval arithmetic on the records' [issue, complete) spans and the text of a warp's lane
mask: the facts every profiler view (profile, summaries, traces, plots) shares."""
from __future__ import annotations

import numpy as np


def merge_intervals(starts, ends) -> list:
    """Sorted, merged [start, end) intervals."""
    order = np.argsort(starts, kind="stable")
    merged = []
    for s, e in zip(starts[order].tolist(), ends[order].tolist()):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [tuple(iv) for iv in merged]


def union_cycles(starts, ends) -> int:
    """Cycles covered by the union of [start, end) intervals (numpy)."""
    if not len(starts):
        return 0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    covered = np.maximum.accumulate(e)
    new = np.ones(len(s), bool)
    new[1:] = s[1:] > covered[:-1]
    first = np.nonzero(new)[0]
    last = np.append(first[1:] - 1, len(s) - 1)
    return int((covered[last] - s[first]).sum())


def busy_cycles(starts, ends) -> int:
    """Cycles covered by the union of [start, end) intervals."""
    return sum(e - s for s, e in merge_intervals(starts, ends))


def lane_runs(mask: int) -> list:
    """Contiguous runs of set bits of a 32-bit warp mask, as (first, last) warp-local lanes."""
    runs, lane = [], 0
    while lane < 32:
        if (mask >> lane) & 1:
            first = lane
            while lane + 1 < 32 and (mask >> (lane + 1)) & 1:
                lane += 1
            runs.append((first, lane))
        lane += 1
    return runs


def lane_ranges(mask: int, warp: int) -> str:
    """Block-local lane ids of a warp's active mask as ranges: '0-31', '0-15', '3,8-11'."""
    parts = [str(warp * 32 + a) if a == b else f"{warp * 32 + a}-{warp * 32 + b}"
             for a, b in lane_runs(mask)]
    return ",".join(parts) or "-"
