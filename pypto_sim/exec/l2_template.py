"""The L2's lines as arrays, compiled (timing/l2.py owns the model and its arrays).

A fully associative LRU cache of lines keyed by (tensor base word, line index): an
open-addressing hash table (linear probing, backward-shift deletion) from key to node, and
the nodes in a doubly linked list from least to most recently used. Touching a tile window
walks its rows' line ranges in ascending order, each line once, as the Python model touched
np.unique of them, so hits, misses and evictions are the same, without a Python loop over
lines. Appended to the lane executor module by pypto_sim.exec.lane, so the compiled timing
engine can call it too.
"""
import numpy as np
from numba import njit

# l2s[] scalars of one cache
L2_CAPACITY = 0     # lines the cache holds
L2_USED = 1         # nodes in use
L2_HEAD = 2         # least recently used node (-1: empty)
L2_TAIL = 3         # most recently used node
L2_BITS = 4         # log2 of the hash table's size
L2_HITS = 5
L2_MISSES = 6
N_L2S = 7
L2_KEY_SHIFT = 32   # key = base word << 32 | line


@njit(cache=True, error_model="numpy", _nrt=False)
def _l2_home(key, bits):
    return np.int64((np.uint64(key) * HASH_MUL) >> np.uint64(64 - bits))


@njit(cache=True, error_model="numpy", _nrt=False)
def _l2_find(tkeys, key, bits):
    """The table slot holding key, or the empty slot where it would go."""
    mask = (np.int64(1) << bits) - 1
    i = _l2_home(key, bits)
    while tkeys[i] != -1 and tkeys[i] != key:
        i = (i + 1) & mask
    return i


@njit(cache=True, error_model="numpy", _nrt=False)
def _l2_delete(tkeys, tnode, i, bits):
    """Remove the entry at table slot i, shifting later entries of its probe run back."""
    mask = (np.int64(1) << bits) - 1
    j = i
    while True:
        j = (j + 1) & mask
        if tkeys[j] == -1:
            break
        k = _l2_home(tkeys[j], bits)
        if (i <= j and i < k <= j) or (i > j and (k > i or k <= j)):
            continue                       # its home lies between: it stays
        tkeys[i] = tkeys[j]
        tnode[i] = tnode[j]
        i = j
    tkeys[i] = -1


@njit(cache=True, error_model="numpy", _nrt=False)
def _l2_unlink(nprev, nnext, l2s, node):
    a = nprev[node]
    b = nnext[node]
    if a >= 0:
        nnext[a] = b
    else:
        l2s[L2_HEAD] = b
    if b >= 0:
        nprev[b] = a
    else:
        l2s[L2_TAIL] = a


@njit(cache=True, error_model="numpy", _nrt=False)
def _l2_append(nprev, nnext, l2s, node):
    tail = l2s[L2_TAIL]
    nprev[node] = tail
    nnext[node] = -1
    if tail >= 0:
        nnext[tail] = node
    else:
        l2s[L2_HEAD] = node
    l2s[L2_TAIL] = node


@njit(cache=True, error_model="numpy", _nrt=False)
def l2_touch_line(l2s, tkeys, tnode, nkey, nprev, nnext, key):
    """Touch one line: 1 for a hit (it becomes the most recent), 0 for a miss (allocated,
    evicting the least recently used line when the cache is full)."""
    bits = l2s[L2_BITS]
    i = _l2_find(tkeys, key, bits)
    if tkeys[i] == key:
        node = tnode[i]
        if node != l2s[L2_TAIL]:
            _l2_unlink(nprev, nnext, l2s, node)
            _l2_append(nprev, nnext, l2s, node)
        return 1
    if l2s[L2_USED] < l2s[L2_CAPACITY]:
        node = l2s[L2_USED]
        l2s[L2_USED] = node + 1
    else:                                  # evict the least recently used line
        node = l2s[L2_HEAD]
        _l2_unlink(nprev, nnext, l2s, node)
        _l2_delete(tkeys, tnode, _l2_find(tkeys, nkey[node], bits), bits)
        i = _l2_find(tkeys, key, bits)
    tkeys[i] = key
    tnode[i] = node
    nkey[node] = key
    _l2_append(nprev, nnext, l2s, node)
    return 0


@njit(cache=True, error_model="numpy", _nrt=False)
def l2_touch_window(l2s, tkeys, tnode, nkey, nprev, nnext, base, offset, rows, cols, stride,
                    itemsize, line_bytes):
    """Touch the lines rows x cols elements from element offset (rows stride elements apart)
    of the tensor at base word cover, each once, in ascending order. Returns (hits, lines)."""
    hits = 0
    lines = 0
    top = np.int64(-1)                     # the highest line touched so far
    for q in range(rows):
        r = q if stride >= 0 else rows - 1 - q
        s = (offset + r * stride) * itemsize
        first = s // line_bytes
        last = (s + cols * itemsize - 1) // line_bytes
        if first <= top:
            first = top + 1
        for line in range(first, last + 1):
            hits += l2_touch_line(l2s, tkeys, tnode, nkey, nprev, nnext,
                                  (base << L2_KEY_SHIFT) | line)
            lines += 1
        if last > top:
            top = last
    l2s[L2_HITS] += hits
    l2s[L2_MISSES] += lines - hits
    return hits, lines


@njit(cache=True, error_model="numpy", _nrt=False)
def l2_rehash(old_keys, old_nodes, tkeys, tnode, bits):
    """Move every entry of the old table into the new (empty) one of 2**bits slots."""
    for i in range(old_keys.shape[0]):
        if old_keys[i] != -1:
            j = _l2_find(tkeys, old_keys[i], bits)
            tkeys[j] = old_keys[i]
            tnode[j] = old_nodes[i]
