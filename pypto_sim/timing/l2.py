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
