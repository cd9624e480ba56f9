"""The L2 cache between the cores and HBM, for tile DMA (docs/timing.md, "L2").

One chip-wide, fully associative LRU cache of ``l2_line_bytes`` lines, ``l2_bytes`` in all
(the machine table's [l2] section). A transfer touches the lines its rows cover; lines it finds
are hits, the others misses that are then allocated (reads and writes alike: write-allocate).
Costs, applied by the tile engines: a transfer whose lines all hit saves
``l2_miss_extra_latency`` of its fixed latency; every byte crosses the L2's chip link, and the
bytes of missed lines also cross HBM's.

Lines are keyed by (tensor base word, line index within the tensor), so two tensors never
share a line and the cache does not depend on where the allocator placed them.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np


class L2Cache:
    """LRU lines of one launch; counts hits and misses."""

    def __init__(self, capacity_bytes: int, line_bytes: int):
        self.line_bytes = int(line_bytes)
        self.capacity = max(1, int(capacity_bytes) // self.line_bytes)
        self.lines: OrderedDict = OrderedDict()
        self.hits = 0
        self.misses = 0

    def lines_of(self, base_word, offset, rows, cols, stride, itemsize) -> np.ndarray:
        """The line indices (within the tensor at base_word) that rows x cols elements from
        element offset, rows stride elements apart, cover."""
        starts = (offset + np.arange(rows, dtype=np.int64) * stride) * itemsize
        first = starts // self.line_bytes
        last = (starts + cols * itemsize - 1) // self.line_bytes
        if np.all(last == first):
            return np.unique(first)
        spans = [np.arange(a, b + 1) for a, b in zip(first, last)]
        return np.unique(np.concatenate(spans))

    def access(self, base_word, lines) -> tuple:
        """Touch these lines of the tensor at base_word: (hits, misses); misses are allocated,
        the least recently used lines evicted."""
        hits = 0
        cache = self.lines
        for line in lines.tolist():
            key = (base_word, line)
            if key in cache:
                cache.move_to_end(key)
                hits += 1
            else:
                cache[key] = None
                if len(cache) > self.capacity:
                    cache.popitem(last=False)
        misses = len(lines) - hits
        self.hits += hits
        self.misses += misses
        return hits, misses


def l2_touch(sim, gm, read):
    """A tile transfer (tensor slot, element offset, rows, cols, stride, itemsize) of launch sim
    touches its L2 lines: (latency saved, fraction of the bytes that hit); (0, 0.0) without an
    L2 or for a store."""
    if sim.l2 is None:
        return 0, 0.0
    slot, off, rows, cols, stride, itemsize = gm
    base = int(sim.tbase[slot])
    lines = sim.l2.lines_of(base, off, rows, cols, stride, max(itemsize, 1))
    hits, misses = sim.l2.access(base, lines)
    if not read:
        return 0, 0.0
    return (sim.m.l2_miss_extra_latency if misses == 0 else 0), hits / max(len(lines), 1)


def l2_load_transfer(sim, core, nbytes, start, hit_fraction):
    """Cycles a tile load of nbytes from cycle start needs when hit_fraction of its bytes hit
    in the L2: the core's read link for all of them, HBM's chip link for the rest, the L2's
    chip link for all."""
    now, s = np.float64(sim.env.now), np.float64(start)
    book = sim.links.link_book
    done = book(sim.lk_s, sim.lk_e, sim.lk_n, 1 + 2 * core.index, s, nbytes / sim.read_bw, now)
    miss = nbytes * (1.0 - hit_fraction)
    if miss > 0:
        done = max(done, book(sim.lk_s, sim.lk_e, sim.lk_n, 0, s, miss / sim.chip_bw, now))
    done = max(done, book(sim.l2_s, sim.l2_e, sim.l2_n, 0, s, nbytes / sim.m.l2_chip_bytes_per_cycle, now))
    return int(np.ceil(done - s - 1e-9))
