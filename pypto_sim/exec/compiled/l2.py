"""The L2's lines as arrays, compiled (timing/l2.py owns the model and its arrays).

A fully associative LRU cache of lines keyed by (tensor base word, line index). Every line a
launch's tensors can touch has a dense number, the tensor's first number plus its line index
(timing/l2.py numbers them), so a line's place in the LRU list is an array entry: link[x] =
(previous, next) line in least-to-most recently used order, previous = -2 for a line not in
the cache. Touching a tile window walks its rows' line ranges in ascending order, each line
once, as a line-by-line model touches the sorted set of them, so hits, misses and evictions
are that model's (tests/test_l2.py). Re-reading a tile finds its lines' neighbours in the list
among the lines just touched, so a touch costs few cache misses of the host. The compiled
timing engines call it (aicore_steps.py).
"""
import numpy as np
from numba import njit

from .jit_options import NO_REFCOUNT

# l2s[] scalars of one cache
L2_CAPACITY = 0     # lines the cache holds
L2_USED = 1         # lines in it
L2_HEAD = 2         # least recently used line (-1: empty)
L2_TAIL = 3         # most recently used line
L2_HITS = 4
L2_MISSES = 5
N_L2S = 6
L2_ABSENT = -2


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _l2_unlink(link, l2s, x):
    a = link[x, 0]
    b = link[x, 1]
    if a >= 0:
        link[a, 1] = b
    else:
        l2s[L2_HEAD] = b
    if b >= 0:
        link[b, 0] = a
    else:
        l2s[L2_TAIL] = a


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _l2_append(link, l2s, x):
    tail = l2s[L2_TAIL]
    link[x, 0] = tail
    link[x, 1] = -1
    if tail >= 0:
        link[tail, 1] = x
    else:
        l2s[L2_HEAD] = x
    l2s[L2_TAIL] = x


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def l2_touch_line(l2s, link, x):
    """Touch line x: 1 for a hit (it becomes the most recent), 0 for a miss (allocated,
    evicting the least recently used line when the cache is full)."""
    if link[x, 0] != L2_ABSENT:
        if x != l2s[L2_TAIL]:
            _l2_unlink(link, l2s, x)
            _l2_append(link, l2s, x)
        return 1
    if l2s[L2_USED] < l2s[L2_CAPACITY]:
        l2s[L2_USED] += 1
    else:                                  # evict the least recently used line
        h = l2s[L2_HEAD]
        _l2_unlink(link, l2s, h)
        link[h, 0] = L2_ABSENT
    _l2_append(link, l2s, x)
    return 0


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _l2_move_run(link, l2s, s, e):
    """Move the run s..e (consecutive in the list, s the least recent) to the most recent
    end, in its order: what touching its lines one by one in that order does (each hit moves
    its line behind the ones moved before it)."""
    b = link[e, 1]
    if b < 0:                              # already the most recent lines
        return
    a = link[s, 0]
    if a >= 0:
        link[a, 1] = b
    else:
        l2s[L2_HEAD] = b
    link[b, 0] = a
    tail = l2s[L2_TAIL]
    link[tail, 1] = s
    link[s, 0] = tail
    link[e, 1] = -1
    l2s[L2_TAIL] = e


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def l2_touch_window(l2s, link, first, offset, rows, cols, stride, itemsize, line_bytes):
    """Touch the lines rows x cols elements from element offset (rows stride elements apart)
    of the tensor whose lines are numbered from first cover, each once, in ascending order.
    Returns (hits, lines). Hits on lines that follow each other in the list as they are
    touched (a tile read again as it was read before) are moved as one run, the result of
    touching them line by line (l2_touch_line)."""
    hits = 0
    lines = 0
    top = np.int64(-1)                     # the highest line touched so far
    run_s = np.int64(-1)                   # the run of hits not moved yet: first, last line
    run_e = np.int64(-1)
    for q in range(rows):
        r = q if stride >= 0 else rows - 1 - q
        s = (offset + r * stride) * itemsize
        lo = s // line_bytes
        hi = (s + cols * itemsize - 1) // line_bytes
        if lo <= top:
            lo = top + 1
        for line in range(lo, hi + 1):
            x = first + line
            lines += 1
            if run_s >= 0:
                if link[run_e, 1] == x:    # next in the list after the run: it extends it
                    run_e = x
                    hits += 1
                    continue
                _l2_move_run(link, l2s, run_s, run_e)
                run_s = -1
            if link[x, 0] != L2_ABSENT:
                run_s = x
                run_e = x
                hits += 1
            else:
                l2_touch_line(l2s, link, x)
        if hi > top:
            top = hi
    if run_s >= 0:
        _l2_move_run(link, l2s, run_s, run_e)
    l2s[L2_HITS] += hits
    l2s[L2_MISSES] += lines - hits
    return hits, lines
