"""The L2 cache between the cores and HBM, for tile DMA (docs/timing.md, "L2").

One chip-wide, fully associative LRU cache of ``l2_line_bytes`` lines, ``l2_bytes`` in all
(the machine table's [l2] section). A transfer touches the lines its rows cover; lines it finds
are hits, the others misses that are then allocated (reads and writes alike: write-allocate).
Costs, applied by the tile engines: a transfer whose lines all hit saves
``l2_miss_extra_latency`` of its fixed latency; every byte crosses the L2's chip link, and each
missed line crosses HBM's whole (a read fills it, a written one is written back).

Lines are keyed by (tensor base word, line index within the tensor), so two tensors never
share a line and the cache does not depend on where the allocator placed them.
"""
from __future__ import annotations

import numpy as np

from ..exec.lane import executor


class L2Cache:
    """LRU lines of one launch; counts hits and misses. The lines live in arrays that the
    executor module's compiled L2 (exec/compiled/l2.py) updates: every line the launch's
    tensors can touch has a dense number, from the tensor's first number."""

    def __init__(self, capacity_bytes: int, line_bytes: int, tensors):
        """tensors: (base word, element count) of each tensor the launch can touch."""
        self.ex = executor()
        ex = self.ex
        self.line_bytes = int(line_bytes)
        self.capacity = max(1, int(capacity_bytes) // self.line_bytes)
        self.state = np.zeros(ex.N_L2S, np.int64)
        self.state[ex.L2_CAPACITY] = self.capacity
        self.state[ex.L2_HEAD] = self.state[ex.L2_TAIL] = -1
        # a tensor's lines: its elements at up to 8 bytes each (the widest dtype a transfer
        # may read them as); two arguments at one base share their lines
        self.first: dict = {}
        self.extent: dict = {}
        total = 0
        for base, count in sorted(tensors):
            base, lines = int(base), (int(count) * 8) // self.line_bytes + 2
            if base in self.first:
                self.extent[base] = max(self.extent[base], lines)
                continue
            self.first[base] = total
            self.extent[base] = lines
            total += lines
        # grow the numbering to the widest argument at each base
        total = 0
        for base in sorted(self.first):
            self.first[base] = total
            total += self.extent[base]
        self.lines = max(total, 1)
        self._link = None

    @property
    def link(self) -> np.ndarray:
        """(lines, 2) int64: each line's LRU neighbours, made at the first touch (a launch on
        the compiled engine touches its own L2, not the simulation's)."""
        if self._link is None:
            self._link = np.full((self.lines, 2), self.ex.L2_ABSENT, np.int64)
        return self._link

    @property
    def hits(self) -> int:
        return int(self.state[self.ex.L2_HITS])

    @property
    def misses(self) -> int:
        return int(self.state[self.ex.L2_MISSES])

    def first_line(self, base_word) -> int:
        """The dense number of line 0 of the tensor at base_word."""
        return self.first[int(base_word)]

    def access_window(self, base_word, offset, rows, cols, stride, itemsize) -> tuple:
        """Touch the lines that rows x cols elements from element offset (rows stride elements
        apart) of the tensor at base_word cover, each once, in ascending order: (hits,
        misses); misses are allocated, the least recently used lines evicted."""
        base = int(base_word)
        last = ((offset + (rows - 1) * max(stride, 0) + cols) * itemsize) // self.line_bytes
        if offset < 0 or last >= self.extent.get(base, 0):
            raise ValueError(f"L2: a transfer of the tensor at word {base} reaches line {last}, "
                             f"beyond its {self.extent.get(base, 0)}")
        hits, lines = self.ex.l2_touch_window(self.state, self.link, self.first[base], offset, rows,
                                              cols, stride, itemsize, self.line_bytes)
        return int(hits), int(lines - hits)


def l2_touch(sim, gm, read):
    """A tile transfer (tensor slot, element offset, rows, cols, stride, itemsize) of launch sim
    touches its L2 lines: (latency saved, bytes HBM moves: its missed lines, whole); (0, None)
    without an L2. A store saves no latency (its table latency has no miss path) but its hits
    stay in the write-back L2."""
    if sim.l2 is None:
        return 0, None
    slot, off, rows, cols, stride, itemsize = gm
    base = int(sim.tbase[slot])
    hits, misses = sim.l2.access_window(base, off, rows, cols, stride, max(itemsize, 1))
    saving = sim.m.l2_miss_extra_latency if read and misses == 0 else 0
    return saving, misses * sim.l2.line_bytes


def l2_transfer(sim, core, nbytes, start, hbm_bytes, read):
    """Cycles a tile load or store of nbytes from cycle start needs when HBM moves hbm_bytes
    for it (its missed lines): the core's read or write link for all its bytes, HBM's chip
    link for hbm_bytes (the L2 is write-back: a store's hits stay in it), the L2's chip link
    for all."""
    now, s = np.float64(sim.env.now), np.float64(start)
    book = sim.links.link_book
    link, bw = (1 + 2 * core.index, sim.read_bw) if read else (2 + 2 * core.index, sim.write_bw)
    done = book(sim.lk_s, sim.lk_e, sim.lk_n, link, s, nbytes / bw, now)
    if hbm_bytes > 0:
        done = max(done, book(sim.lk_s, sim.lk_e, sim.lk_n, 0, s, hbm_bytes / sim.chip_bw, now))
    done = max(done, book(sim.l2_s, sim.l2_e, sim.l2_n, 0, s, nbytes / sim.m.l2_chip_bytes_per_cycle, now))
    return int(np.ceil(done - s - 1e-9))
