"""The L2's line model (timing/l2.py, compiled in exec/compiled/l2.py) against its
specification: a fully associative LRU of lines keyed by (tensor base word, line), where a
window touches the lines its rows cover once each, in ascending order."""
from collections import OrderedDict

import numpy as np
import pytest

from pypto_sim.timing.l2 import L2Cache


class SpecL2:
    """The specification, line by line: an OrderedDict as the LRU."""

    def __init__(self, capacity_bytes, line_bytes):
        self.line_bytes = line_bytes
        self.capacity = capacity_bytes // line_bytes
        self.lines = OrderedDict()

    def access_window(self, base, offset, rows, cols, stride, itemsize):
        starts = (offset + np.arange(rows) * stride) * itemsize
        covered = set()
        for s in starts.tolist():
            covered.update(range(s // self.line_bytes, (s + cols * itemsize - 1) // self.line_bytes + 1))
        hits = 0
        for line in sorted(covered):
            key = (base, line)
            if key in self.lines:
                self.lines.move_to_end(key)
                hits += 1
            else:
                self.lines[key] = None
                if len(self.lines) > self.capacity:
                    self.lines.popitem(last=False)
        return hits, len(covered) - hits


def test_a_window_counts_each_line_once():
    """Rows of 64 float32 (256 bytes) 96 elements apart (384 bytes) in 512-byte lines: rows
    0..3 start at bytes 0, 384, 768, 1152 and end at 255, 639, 1023, 1407, so they cover
    lines 0, 0-1, 1, 2-2: lines 0, 1 and 2, three misses; the same window again hits all three."""
    l2 = L2Cache(1 << 20, 512, [(1000, 4 * 96)])
    assert l2.access_window(1000, 0, 4, 64, 96, 4) == (0, 3)
    assert l2.access_window(1000, 0, 4, 64, 96, 4) == (3, 0)
    assert (l2.hits, l2.misses) == (3, 3)


def test_the_least_recently_used_line_is_evicted():
    """Two lines of capacity: touch lines 0, 1, then 0 again (0 is now the most recent), then
    2 evicts line 1; line 0 still hits, line 1 misses."""
    l2 = L2Cache(2 * 128, 128, [(0, 1000)])
    touch = lambda line: l2.access_window(0, line * 32, 1, 32, 32, 4)     # noqa: E731
    assert [touch(0), touch(1), touch(0), touch(2)] == [(0, 1), (0, 1), (1, 0), (0, 1)]
    assert touch(0) == (1, 0)
    assert touch(1) == (0, 1)


@pytest.mark.parametrize("seed", range(4))
def test_random_windows_match_the_specification(seed):
    """Random windows of three tensors on a small cache (evictions, overlapping rows, strides
    below and above a line) give the specification's hits and misses, access by access."""
    rng = np.random.default_rng(seed)
    capacity, line = int(rng.choice([64, 300, 5000])) * 128, 128
    tensors = [(0, 4096 * 64), (4096, 8192 * 64), (1 << 30, 8192 * 64)]
    fast, spec = L2Cache(capacity, line, tensors), SpecL2(capacity, line)
    for _ in range(400):
        base = int(rng.choice([0, 4096, 1 << 30]))
        rows, cols = int(rng.integers(1, 40)), int(rng.integers(1, 300))
        stride = cols + int(rng.integers(0, 200))
        args = (base, int(rng.integers(0, 5000)), rows, cols, stride, int(rng.choice([1, 2, 4])))
        assert fast.access_window(*args) == spec.access_window(*args)
    assert fast.hits + fast.misses > 0


@pytest.mark.parametrize("seed", range(3))
def test_tiles_read_again_match_the_specification(seed):
    """A GEMM's pattern: a few tile windows read again and again (their lines follow each
    other in the LRU list, so they move as runs), some shifted by a part of a row or a row,
    some windows written between them, on caches that hold all, some or few of the tiles:
    the specification's hits and misses, access by access."""
    rng = np.random.default_rng(100 + seed)
    line = 128
    tensors = [(0, 4096 * 64), (4096, 8192 * 64)]
    tiles = [(0, 0, 16, 64, 256, 2), (0, 64, 16, 64, 256, 2), (4096, 0, 8, 128, 128, 4),
             (4096, 4096, 32, 32, 64, 4), (0, 8192, 4, 256, 256, 2)]
    for capacity in (40, 120, 4000):
        fast, spec = L2Cache(capacity * line, line, tensors), SpecL2(capacity * line, line)
        for _ in range(300):
            base, off, rows, cols, stride, item = tiles[int(rng.integers(0, len(tiles)))]
            off += int(rng.choice([0, 0, 0, 32, stride]))
            args = (base, off, rows, cols, stride, item)
            assert fast.access_window(*args) == spec.access_window(*args)
        assert fast.hits > fast.misses > 0 or capacity == 40
