"""Who waited for whom: the producer record of every recorded dependency.

The timing model records, for each warp-instruction that waited, the cause and ``cause_pc``:
the pc of the instruction it waited for. A pc is not an event, so this module finds the record
that was waited for: the latest earlier record with that pc in the same block and warp (tile
operations are all issued by warp 0 of their block) whose completion is the cycle the waiter
started, else simply the latest earlier one. A ``wait_all`` names no pc: its producer is the
tile operation of the block that completed at the cycle the wait ended.

It also knows the fixed part of a memory instruction's time (its latency in the machine
table): what a transfer took beyond it was the HBM link and the chip's bandwidth.
"""
from __future__ import annotations

import numpy as np

from ..timing.records import CAUSE
from .memory_counters import READS as TILE_READS

# instructions whose completion includes an HBM transfer (bandwidth and link contention)
HBM_INSTRUCTIONS = frozenset({"LOAD", "STORE", "FMA_STORE", "TSTORE", *TILE_READS})
_SCAN = 8          # how many earlier records with the same pc to try for the exact completion


def _latest_before(group: np.ndarray, queries: np.ndarray, before: np.ndarray):
    """For each query (a group id, or -1 for none) the positions, in ``order``, of the
    latest record of that group with an index below ``before``: (order, position or -1).
    ``order`` lists the record indices sorted by (group, index)."""
    n = len(group)
    order = np.lexsort((np.arange(n), group))
    key = group[order] * n + order                       # sorted: group, then record index
    pos = np.searchsorted(key, np.maximum(queries, 0) * n + before, side="left") - 1
    found = (queries >= 0) & (pos >= 0)
    found[found] &= group[order[pos[found]]] == queries[found]
    return order, np.where(found, pos, -1)


def find_producers(prof) -> np.ndarray:
    """For each record, the index of the record it waited for (-1: none or unknown).

    Vectorised: records are sorted by (block, warp, pc) and each waiter finds the latest
    earlier record of its (block, warp, cause_pc) by binary search, then looks back up to
    _SCAN records of that key for one completing exactly when the waiter issued."""
    rec = prof.records
    n = len(rec)
    out = np.full(n, -1, np.int64)
    if not n:
        return out
    n_pc = len(prof.pc_name)
    n_warps = int(rec.warp.max()) + 1
    # dense ids of (block, warp, pc) keys; a waiter asks for (its block, its warp, cause_pc)
    block = rec.block.astype(np.int64)           # keys in int64 (the columns are narrow)
    key = (block * n_warps + rec.warp) * n_pc + rec.pc
    keys, group = np.unique(key, return_inverse=True)
    group = group.reshape(-1)
    waiting = np.nonzero(rec.cause_pc >= 0)[0]
    wanted = (block[waiting] * n_warps + rec.warp[waiting]) * n_pc + rec.cause_pc[waiting]
    slot = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    query = np.where(keys[slot] == wanted, slot, -1)
    order, pos = _latest_before(group, query, waiting)
    latest = np.where(pos >= 0, order[np.maximum(pos, 0)], -1)
    chosen = latest.copy()
    settled = pos < 0
    issue_w = rec.issue[waiting]
    for back in range(_SCAN):         # the latest of the last _SCAN completing at the issue
        p = pos - back
        ok = ~settled & (p >= 0)
        ok[ok] &= group[order[p[ok]]] == query[ok]
        hit = ok.copy()
        hit[ok] = rec.complete[order[p[ok]]] == issue_w[ok]
        chosen[hit] = order[p[hit]]
        settled |= hit | ~ok
    out[waiting] = chosen
    # wait_all: the block's latest earlier tile operation completing when the wait ended
    waits = np.nonzero((rec.cause_pc < 0) & (rec.cause == CAUSE["wait_all"]))[0]
    tiles = np.nonzero(np.asarray(prof.pc_is_tile, bool)[rec.pc])[0]
    if len(waits) and len(tiles):
        tkey = block[tiles] * (int(rec.complete.max()) + 1) + rec.complete[tiles]
        tkeys, tgroup = np.unique(tkey, return_inverse=True)
        wanted = block[waits] * (int(rec.complete.max()) + 1) + rec.issue[waits]
        slot = np.minimum(np.searchsorted(tkeys, wanted), len(tkeys) - 1)
        query = np.where(tkeys[slot] == wanted, slot, -1)
        # positions among the tile records: those with a record index below the waiter's
        before = np.searchsorted(tiles, waits, side="left")
        order, pos = _latest_before(tgroup.reshape(-1), query, before)
        out[waits] = np.where(pos >= 0, tiles[order[np.maximum(pos, 0)]], -1)
    return out


def previous_in_warp(prof) -> np.ndarray:
    """For each record, the index of the same warp's previous record (-1 for its first)."""
    rec = prof.records
    n = len(rec)
    prev = np.full(n, -1, np.int64)
    if n < 2:
        return prev
    key = rec.block.astype(np.int64) * (int(rec.warp.max()) + 1) + rec.warp
    order = np.argsort(key, kind="stable")
    same = key[order[1:]] == key[order[:-1]]
    prev[order[1:][same]] = order[:-1][same]
    return prev


def fixed_cycles(prof, pc: int) -> int:
    """The part of instruction pc's time that does not depend on bandwidth: its latency (plus
    the store's latency for FMA_STORE, which computes and then stores)."""
    name = prof.pc_name[pc]
    lat = prof.pc_latency(pc)
    if name.rsplit("+", 1)[-1] == "FMA_STORE":          # also a fused "X+FMA_STORE"
        lat += prof.machine.latency("STORE")
    return lat
