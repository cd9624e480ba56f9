"""The tracks of a trace: which row of which pipe and warp track each warp-instruction is on.

Operations in flight at the same time on one pipe (pipelined loads, several warps' ALU ops)
go to extra rows of that pipe ("load (MTE2) #2"), because slices on one track must nest: each
operation, in order of issue, takes the lowest row free at its issue (a row is free once its
last operation completed). Per core (one trace process), the pipe tracks come first (by unit,
pipe, row), then the warp tracks (by block, warp, row; an AI-core kernel's are its units':
"AIC (block 3)"); a track's tid is the core's pid times TID_STRIDE plus its place in that
order (from 1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..isa import PIPES, PTO_PIPE_SHORT
from ..exec.aicore_tiles import UNIT_NAMES as AICORE_UNITS

TID_STRIDE = 1_000_000
PIPE_LABELS = {"scalar": "scalar", "vector": "vector (V)", "sfu": "sfu", "load": "load (MTE2)",
               "store": "store (MTE3)", "mma": "mma (cube)", "mte1": "MTE1",
               "fix": "FIX"}


@njit(cache=True)
def _pack_sorted(group, starts, ends, rows):  # pragma: no cover (compiled)
    """rows[k] for intervals sorted by (group, start, index): the lowest row of its group
    whose last interval ended by starts[k]."""
    row_end = np.empty(16, np.int64)
    n_rows = 0
    for k in range(len(group)):
        if k == 0 or group[k] != group[k - 1]:
            n_rows = 0
        s = starts[k]
        r = 0
        while r < n_rows and row_end[r] > s:
            r += 1
        if r == n_rows:
            if n_rows == len(row_end):
                bigger = np.empty(2 * n_rows, np.int64)
                bigger[:n_rows] = row_end
                row_end = bigger
            n_rows += 1
        row_end[r] = ends[k]
        rows[k] = r


def pack_rows(group: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each interval [starts, ends) of a group, a row of that group such that intervals
    on one row never overlap (the lowest row free at its start, in order of start)."""
    n = len(group)
    rows = np.zeros(n, np.int64)
    if n:
        order = np.lexsort((np.arange(n), starts, group))
        packed = np.empty(n, np.int64)
        # int64 whatever the record columns' dtypes: one compiled specialisation
        _pack_sorted(group[order].astype(np.int64), starts[order].astype(np.int64),
                     ends[order].astype(np.int64), packed)
        rows[order] = packed
    return rows


@dataclass
class Tracks:
    """Per record its pipe track and warp track (indices into ``pid``/``tid``/``name``), and
    per track its process id, thread id and name."""

    pipe_track: np.ndarray
    warp_track: np.ndarray | None
    pid: np.ndarray
    tid: np.ndarray
    names: list


def _groups(key: np.ndarray, issue, complete):
    """Dense group ids (in key order), each record's row in its group, and rows per group."""
    keys, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    rows = pack_rows(inv, issue, complete)
    n_rows = np.zeros(len(keys), np.int64)
    np.maximum.at(n_rows, inv, rows + 1)
    return keys, inv, rows, n_rows


def _expand(n_rows):
    """(group of each track, row of each track, first track of each group)."""
    first = np.concatenate(([0], np.cumsum(n_rows)[:-1])).astype(np.int64)
    group = np.repeat(np.arange(len(n_rows)), n_rows)
    return group, np.arange(int(n_rows.sum())) - first[group], first


def layout(prof, warps: bool = True) -> Tracks:
    """The tracks of ``prof``'s records (the warp tracks only when ``warps``)."""
    rec = prof.records
    core = rec.core.astype(np.int64)
    pipes = prof.record_pipes
    aicore = bool(getattr(prof.program, "aicore", False))
    # AI-core kernels: one track per pipe per unit (AIC, AIV0, AIV1), as Perf-Sim draws them
    unit = rec.warp.astype(np.int64) if aicore else np.zeros(len(rec), np.int64)
    n_units, n_pipes = int(unit.max(initial=0)) + 1, len(PIPES)
    keys, inv, rows, n_rows = _groups((core * n_units + unit) * n_pipes + pipes,
                                      rec.issue, rec.complete)
    group, row, first = _expand(n_rows)
    g_core, g_unit, g_pipe = keys // (n_units * n_pipes), keys // n_pipes % n_units, keys % n_pipes
    t_core = [g_core[group]]
    names = []
    for g, r in zip(group.tolist(), row.tolist()):
        p = PIPES[int(g_pipe[g])]
        label = (f"{AICORE_UNITS[int(g_unit[g])]} {PTO_PIPE_SHORT.get(p, p)}" if aicore
                 else PIPE_LABELS[p])
        names.append(label + (f" #{r + 1}" if r else ""))
    pipe_track = first[inv] + rows
    warp_track = None
    if warps:
        n_warps = int(rec.warp.max(initial=0)) + 1
        n_blocks = int(rec.block.max(initial=0)) + 1
        wkeys, winv, wrows, wn_rows = _groups((core * n_blocks + rec.block) * n_warps + rec.warp,
                                              rec.issue, rec.complete)
        wgroup, wrow, wfirst = _expand(wn_rows)
        block_of, warp_of = (wkeys // n_warps % n_blocks)[wgroup], (wkeys % n_warps)[wgroup]
        # AI-core kernels: a unit's own track (what its scalar unit dispatched), by its name
        names += [(f"{AICORE_UNITS[w]} (block {b})" if aicore else f"block {b} warp {w}")
                  + (f" #{r + 1}" if r else "")
                  for b, w, r in zip(block_of.tolist(), warp_of.tolist(), wrow.tolist())]
        t_core.append((wkeys // (n_warps * n_blocks))[wgroup])
        warp_track = len(group) + wfirst[winv] + wrows
    t_core = np.concatenate(t_core)
    # place of each track in its core: tracks are already in (core, pipe tracks, warp tracks)
    # order within each kind, so a stable sort by core keeps pipes before warps
    order = np.argsort(t_core, kind="stable")
    place = np.empty(len(t_core), np.int64)
    starts = np.searchsorted(t_core[order], t_core[order], side="left")
    place[order] = np.arange(len(order)) - starts + 1
    pid = t_core + 1
    return Tracks(pipe_track, warp_track, pid, pid * TID_STRIDE + place, names)
