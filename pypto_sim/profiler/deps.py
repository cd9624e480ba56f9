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

# instructions whose completion includes an HBM transfer (bandwidth and link contention)
HBM_INSTRUCTIONS = frozenset({"LOAD", "STORE", "FMA_STORE", "TLOAD", "TSTORE"})
_SCAN = 8          # how many earlier records with the same pc to try for the exact completion


def find_producers(prof) -> np.ndarray:
    """For each record, the index of the record it waited for (-1: none or unknown)."""
    rec = prof.records
    n = len(rec)
    out = np.full(n, -1, np.int64)
    if not n:
        return out
    block, warp, pc = rec.block.tolist(), rec.warp.tolist(), rec.pc.tolist()
    issue, complete = rec.issue.tolist(), rec.complete.tolist()
    cause, cause_pc = rec.cause.tolist(), rec.cause_pc.tolist()
    is_tile = prof.pc_is_tile
    wait_all = CAUSE["wait_all"]
    earlier: dict = {}       # (block, warp, pc) -> record indices, in order
    tile_done: dict = {}     # (block, completion cycle) -> latest tile record completing then
    for i in range(n):
        cp = cause_pc[i]
        if cp >= 0:
            seen = earlier.get((block[i], warp[i], cp))
            if seen:
                t, j = issue[i], seen[-1]
                for k in range(len(seen) - 1, max(-1, len(seen) - 1 - _SCAN), -1):
                    if complete[seen[k]] == t:
                        j = seen[k]
                        break
                out[i] = j
        elif cause[i] == wait_all:
            out[i] = tile_done.get((block[i], issue[i]), -1)
        key = (block[i], warp[i], pc[i])
        seen = earlier.get(key)
        if seen is None:
            earlier[key] = [i]
        else:
            seen.append(i)
        if is_tile[pc[i]]:
            tile_done[(block[i], complete[i])] = i
    return out


def previous_in_warp(prof) -> np.ndarray:
    """For each record, the index of the same warp's previous record (-1 for its first)."""
    rec = prof.records
    n = len(rec)
    prev = np.full(n, -1, np.int64)
    if n < 2:
        return prev
    key = rec.block * (int(rec.warp.max()) + 1) + rec.warp
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
