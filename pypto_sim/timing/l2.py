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

import numpy as np

from ..exec.lane import executor


class L2Cache:
    """LRU lines of one launch; counts hits and misses. The lines live in arrays that the
    executor module's compiled L2 (exec/l2_template.py) updates; they grow with the lines in
    use, up to the capacity."""

    FIRST_NODES = 1 << 12

    def __init__(self, capacity_bytes: int, line_bytes: int):
        self.ex = executor()
        ex = self.ex
        self.line_bytes = int(line_bytes)
        self.capacity = max(1, int(capacity_bytes) // self.line_bytes)
        self.state = np.zeros(ex.N_L2S, np.int64)
        self.state[ex.L2_CAPACITY] = self.capacity
        self.state[ex.L2_HEAD] = self.state[ex.L2_TAIL] = -1
        self._allocate(min(self.capacity, self.FIRST_NODES))

    def _allocate(self, nodes):
        """Room for ``nodes`` lines: node arrays of that size, a table at most half full."""
        ex, state = self.ex, self.state
        bits = max(4, int(2 * nodes - 1).bit_length())
        keys, slots = np.full(1 << bits, -1, np.int64), np.zeros(1 << bits, np.int64)
        if hasattr(self, "tkeys"):
            ex.l2_rehash(self.tkeys, self.tnode, keys, slots, bits)
            grow = nodes - len(self.nkey)
            self.nkey = np.concatenate([self.nkey, np.zeros(grow, np.int64)])
            self.nprev = np.concatenate([self.nprev, np.zeros(grow, np.int64)])
            self.nnext = np.concatenate([self.nnext, np.zeros(grow, np.int64)])
        else:
            self.nkey, self.nprev, self.nnext = (np.zeros(nodes, np.int64) for _ in range(3))
        self.tkeys, self.tnode = keys, slots
        state[ex.L2_BITS] = bits

    @property
    def hits(self) -> int:
        return int(self.state[self.ex.L2_HITS])

    @property
    def misses(self) -> int:
        return int(self.state[self.ex.L2_MISSES])

    def access_window(self, base_word, offset, rows, cols, stride, itemsize) -> tuple:
        """Touch the lines that rows x cols elements from element offset (rows stride elements
        apart) of the tensor at base_word cover, each once, in ascending order: (hits,
        misses); misses are allocated, the least recently used lines evicted."""
        ex = self.ex
        if not 0 <= base_word < (1 << (63 - ex.L2_KEY_SHIFT)):
            raise ValueError(f"L2: tensor base word {base_word} does not fit the line key")
        row_lines = (cols * itemsize + self.line_bytes - 1) // self.line_bytes + 1
        need = min(self.capacity, int(self.state[ex.L2_USED]) + rows * row_lines)
        if need > len(self.nkey):
            self._allocate(min(self.capacity, max(need, 2 * len(self.nkey))))
        hits, lines = ex.l2_touch_window(self.state, self.tkeys, self.tnode, self.nkey, self.nprev,
                                         self.nnext, base_word, offset, rows, cols, stride,
                                         itemsize, self.line_bytes)
        return int(hits), int(lines - hits)


def l2_touch(sim, gm, read):
    """A tile transfer (tensor slot, element offset, rows, cols, stride, itemsize) of launch sim
    touches its L2 lines: (latency saved, fraction of the bytes that hit); (0, 0.0) without an
    L2 or for a store."""
    if sim.l2 is None:
        return 0, 0.0
    slot, off, rows, cols, stride, itemsize = gm
    base = int(sim.tbase[slot])
    hits, misses = sim.l2.access_window(base, off, rows, cols, stride, max(itemsize, 1))
    if not read:
        return 0, 0.0
    return (sim.m.l2_miss_extra_latency if misses == 0 else 0), hits / max(hits + misses, 1)


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
