"""The compiled timing engine's parts: its state layout and the structures its event loop
(timing.py) works on, each the array form of something in timing/model.py.

- the event heap: SimPy's queue, ordered by (time, priority, insertion number);
- the booking table: CoreState.book's issue-port and pipe reservations;
- the HBM links: LaunchSimulation._transfer's arithmetic;
- records and per-pc totals (timing/records.py's FIELDS and PcTotals).

"""
import numpy as np
from numba import njit

from .jit_options import NO_REFCOUNT

# event kinds (one SimPy event each)
EV_SLOT = 0        # a core slot's process starts: it takes the next block
EV_BLOCK = 1       # a block's process starts: it starts its warps
EV_WARP = 2        # a warp's process resumes (start, after a timeout)
EV_COMMIT = 3      # a store's values land
EV_RELEASE = 4     # a block barrier releases its waiting warps
EV_WARP_END = 5    # a warp's process ended (the block's all_of counts it)
EV_COND = 6        # the block's all_of fired: the block's process ends
EV_BLOCK_END = 7   # the block's process ended: its core slot takes the next block
EV_FAIL = 8        # a warp faulted: its failure travels warp -> all_of -> block -> slot

URGENT = 0
NORMAL = 1
PRIO_SHIFT = np.int64(1) << np.int64(60)

# warp phases: where a warp's process is suspended
PH_DECIDE = 0      # about to decide when pc can issue
PH_ISSUE = 1       # its booked issue cycle has come
PH_BARRIER = 2     # waiting at a block barrier
PH_RETIRE = 3      # waiting for its stores before it ends
PH_DONE = 4

# engine_run results
ENG_DONE = 0       # no events left
ENG_LIMIT = 1      # the next event lies past the cycle limit
ENG_FAULT = 2      # a warp faulted (st[S_FAULT_G] says which; info holds the lane and address)
ENG_GROW = 3       # a buffer is full (st[S_GROW] says which): grow it and call again
ENG_YIELD = 4      # the event budget is spent (progress): call again

GROW_HEAP = 1
GROW_RECORDS = 2
GROW_COMMITS = 3
GROW_TABLE = 4

# st[] scalar state
S_NOW = 0
S_SEQ = 1
S_HEAP_N = 2
S_NEXT_BLOCK = 3
S_BLOCKS_DONE = 4
S_END_TIME = 5
S_REC_N = 6
S_TABLE_USED = 7
S_COMMIT_FREE = 8
S_UNFINISHED = 9
S_FAULT_G = 10
S_GROW = 11
S_EVENTS = 12
S_LIMIT_KEY = 13
S_WARP_INSTRS = 14
N_ST = 15

# wv[g, :] per resident warp (g = core slot * warps per block + warp)
W_NEXT = 0          # the first cycle its next instruction may issue (ws.next_issue)
W_STORE_DONE = 1    # when its last store completes
W_CAUSE = 2         # why it waits (a CA_* code) and the pc it waits for
W_CAUSE_PC = 3
W_PHASE = 4         # PH_*
W_ARRIVED = 5       # the cycle it reached the block barrier it waits at
W_STALL = 6         # its stall before it arrived (the wait after it is added at release)
W_ALIVE = 7         # the lanes the warp has (a block's last warp may be partial)
W_PEND_HEAD = 8     # its oldest and newest store still in flight (commit slots, -1: none),
W_PEND_TAIL = 9     # linked through cm_tgt[slot, L_PREV / L_NEXT] (ws.pending_stores)
N_WV = 10

# cm_tgt[slot, :] per pending store commit
L_TGT = 0           # -1: HBM; else the core slot p whose L1 it writes
L_PREV = 1          # the owner warp's previous / next store in flight (-1: none)
L_NEXT = 2
L_OWNER = 3         # the warp g that issued it
L_DTYPE = 4         # the store's dtype code (an HBM commit writes its bytes)
N_CM = 5

# wfault[g, :]: why warp g's process failed (FK_*) and what the error message needs
FK_OOB = 1          # out of bounds (memcheck): lane, offset, count
FK_RACE = 2         # racecheck: lane, word, write?, space; report (race_check's) in F_REPORT..
FK_UNINIT = 3       # initcheck: lane, HBM byte address
FK_SYNC_BARRIER = 4  # synccheck: barrier_block by some lanes only: mask, alive
FK_SYNC_EXIT = 5    # synccheck: warp ended while others wait: waiting warps (bits), their pc
F_KIND = 0
F_PC = 1
F_CYCLE = 2
F_LANE = 3
F_WORD = 4          # the offset (FK_OOB) or the HBM / L1 word
F_COUNT = 5
F_WRITE = 6
F_HI = 6            # a CHECK's upper bound (FK_OOB: F_WORD its value, F_COUNT its lower bound)
F_SPACE = 7         # MEM_HBM or MEM_L1
F_MASK = 8
F_ALIVE = 9
F_WAITING = 10
F_WAIT_PC = 11
F_REPORT = 12       # 8 values
N_WFAULT = 20

# bv[p, :] per core slot (p = slot * cores + core)
B_BLOCK = 0         # the block it runs
B_ARRIVED = 1       # warps at the block barrier
B_ENDED = 2         # warps ended (the block's all_of)
B_FAILED = 3        # a warp of the block faulted
B_RELEASED = 4      # warps a pending release will resume (their order: bs_rel)
B_EPOCH = 5         # block barriers released so far (racecheck's ordering)
B_VOTE_COUNT = 6    # voting block barriers: lanes whose predicate held, lanes that voted
B_VOTE_LANES = 7
B_VOTE_RES_COUNT = 8  # ... as of the last release (what the released warps receive)
B_VOTE_RES_LANES = 9
N_BV = 10

# cfg[] launch constants
K_CORES = 0
K_WPB = 1
K_LANES = 2
K_GX = 3
K_GY = 4
K_GZ = 5
K_BX = 6
K_BY = 7
K_BZ = 8
K_WIDTH = 9
K_STORE_LAT = 10
K_N_BLOCKS = 11
K_SECTOR = 12
K_RECORD = 13
K_MAX_CYCLES = 14
K_SLOTS = 15       # core slots (p = slot * cores + core)
K_BOOK_ROOM = 16   # table entries one event may add at most
K_RACE = 17        # racecheck, initcheck, synccheck on (timing/checks.py)
K_INIT = 18
K_SYNC = 19
K_HBM_SHIFT = 20   # racecheck: an HBM byte address >> this is its shadow row (timing/checks.py)
N_CFG = 21

# cause codes, as timing/records.py numbers them (checked by the driver)
CA_NONE = 0
CA_OPERAND = 1
CA_PIPE = 2
CA_ISSUE = 3
CA_BARRIER = 4
CA_BARRIER_BLOCK = 5

MEM_NONE = 0
MEM_HBM = 1
MEM_L1 = 2

HASH_MUL = np.uint64(11400714819323198485)


# ---------------------------------------------------------------- the event heap
@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _before(ht, hk, i, j):
    return ht[i] < ht[j] or (ht[i] == ht[j] and hk[i] < hk[j])


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _swap(ht, hk, hv, i, j):
    t = ht[i]
    ht[i] = ht[j]
    ht[j] = t
    k = hk[i]
    hk[i] = hk[j]
    hk[j] = k
    a = hv[i, 0]
    b = hv[i, 1]
    hv[i, 0] = hv[j, 0]
    hv[i, 1] = hv[j, 1]
    hv[j, 0] = a
    hv[j, 1] = b


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def schedule(st, ht, hk, hv, time, prio, kind, arg):
    """SimPy's env.schedule: queue (time, priority, next insertion number)."""
    st[S_SEQ] += 1
    heap_push(st, ht, hk, hv, time, prio * PRIO_SHIFT + st[S_SEQ] - 1, kind, arg)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def process_ends(g, now, st, ht, hk, hv, rows, phase):
    """Process g ends - a warp (timing.py: rows wv, phase W_PHASE) or an AI-core unit
    (aicore_engine.py: uv, U_PHASE): it is done, the launch's end time is at least now, and
    its block's all_of counts it when the EV_WARP_END event is processed."""
    rows[g, phase] = PH_DONE
    st[S_UNFINISHED] -= 1
    if now > st[S_END_TIME]:
        st[S_END_TIME] = now
    schedule(st, ht, hk, hv, now, NORMAL, EV_WARP_END, g)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def slot_takes_next_block(kind, slot, st, ht, hk, hv, now, bv, n_blocks):
    """A core slot's process, at its start (EV_SLOT) or when its block's process ended
    (EV_BLOCK_END, counted done): it takes the next block, if any is left, and starts that
    block's process now (both engines: timing.py for lane kernels, aicore_engine.py)."""
    if kind == EV_BLOCK_END:
        st[S_BLOCKS_DONE] += 1
    if st[S_NEXT_BLOCK] < n_blocks:
        bv[slot, B_BLOCK] = st[S_NEXT_BLOCK]
        st[S_NEXT_BLOCK] += 1
        schedule(st, ht, hk, hv, now, URGENT, EV_BLOCK, slot)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def heap_push(st, ht, hk, hv, time, key, kind, arg):
    """Queue an event whose key (priority and insertion number) was taken before."""
    n = st[S_HEAP_N]
    ht[n] = time
    hk[n] = key
    hv[n, 0] = kind
    hv[n, 1] = arg
    st[S_HEAP_N] = n + 1
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        if _before(ht, hk, i, parent):
            _swap(ht, hk, hv, i, parent)
            i = parent
        else:
            break


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _heap_pop(ht, hk, hv, st):
    n = st[S_HEAP_N] - 1
    st[S_HEAP_N] = n
    _swap(ht, hk, hv, 0, n)
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        best = left
        if left + 1 < n and _before(ht, hk, left + 1, left):
            best = left + 1
        if _before(ht, hk, best, i):
            _swap(ht, hk, hv, best, i)
            i = best
        else:
            break
    return n


# ---------------------------------------------------------------- issue-port / pipe booking
# One open-addressing table per launch: key (cycle * cores + core) * 8 + kind, kind 0 = the
# core's issue port (value: warp-instructions issued that cycle), 1 + pipe = that pipe booked.
# Entries for past cycles are never asked about again; table_rebuild drops them.

@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _slot_of(keys, key):
    """Where key is, or the empty slot where it goes (Fibonacci hashing: bits from the 32nd
    up of key * 2^64 / phi, which spread the arithmetic runs of cycle keys and depend on the
    key's low 32 + log2(size) bits; linear probing). Where an entry sits changes nothing a
    lookup or table_rebuild returns."""
    mask = keys.shape[0] - 1
    h = np.int64((np.uint64(key) * HASH_MUL) >> np.uint64(32)) & mask
    while keys[h] != key and keys[h] != -1:
        h = (h + 1) & mask
    return h


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _get(keys, vals, key):
    h = _slot_of(keys, key)
    return vals[h] if keys[h] == key else 0


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _add(keys, vals, st, key):
    h = _slot_of(keys, key)
    if keys[h] != key:
        keys[h] = key
        vals[h] = 0
        st[S_TABLE_USED] += 1
    vals[h] += 1


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def table_rebuild(keys, vals, new_keys, new_vals, now, cores):
    """Copy the entries for cycles >= now into an empty table; return how many."""
    used = 0
    for i in range(keys.shape[0]):
        k = keys[i]
        if k >= 0 and (k >> 3) // cores >= now:
            h = _slot_of(new_keys, k)
            new_keys[h] = k
            new_vals[h] = vals[i]
            used += 1
    return used


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def book(keys, vals, st, cores, core, t, pipe, interval, width):
    """CoreState.book: the first cycle c >= t with room on the issue port and the pipe free
    for [c, c + interval); books both. Returns c * 16 + the cause that moved it (0: none)."""
    c = t
    why = CA_NONE
    base_pipe = 1 + pipe
    while True:
        if _get(keys, vals, ((c * cores + core) << 3)) >= width:
            c += 1
            why = CA_ISSUE
            continue
        clash = False
        for k in range(interval):
            if _get(keys, vals, (((c + k) * cores + core) << 3) + base_pipe) > 0:
                clash = True
                break
        if clash:
            c += 1
            why = CA_PIPE
            continue
        break
    _add(keys, vals, st, (c * cores + core) << 3)
    for k in range(interval):
        _add(keys, vals, st, (((c + k) * cores + core) << 3) + base_pipe)
    return c * 16 + why


# ---------------------------------------------------------------- HBM links
# A link (the chip's HBM, and each core's read and write link) is a set of busy intervals,
# lk_s/lk_e[j, :lk_n[j]], sorted and disjoint. A transfer that may start at t takes the link's
# free time from t on, gaps before later bookings included, until its bytes are through; the
# link is then busy over [t, done). A booking made early for a late start (a tile load that
# waits for its buffer) therefore no longer holds up transfers that start before it, which a
# single busy-until cursor did. Links keep at most LINK_INTERVALS intervals: past that the
# two closest merge (the gap between them counts as busy: pessimistic, and rare).
LINK_INTERVALS = 256


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def link_book(lk_s, lk_e, lk_n, j, t, d, now):
    """Book d cycles of link j from cycle t (>= now); returns when the transfer is done."""
    n = lk_n[j]
    k = 0
    while k < n and lk_e[j, k] <= now:           # past intervals: no booking starts before now
        k += 1
    if k > 0:
        for q in range(n - k):
            lk_s[j, q] = lk_s[j, q + k]
            lk_e[j, q] = lk_e[j, q + k]
        n -= k
    cur = t
    rem = d
    done = -1.0
    for q in range(n):
        if lk_e[j, q] <= cur:
            continue
        if lk_s[j, q] > cur:
            gap = lk_s[j, q] - cur
            if gap >= rem:
                done = cur + rem
                break
            rem -= gap
        cur = lk_e[j, q]
    if done < 0.0:
        done = cur + rem
    # the link is busy over [t, done): insert it, merging what it touches
    lo = t
    hi = done
    first = 0
    while first < n and lk_e[j, first] < lo:
        first += 1
    last = first
    while last < n and lk_s[j, last] <= hi:
        if lk_s[j, last] < lo:
            lo = lk_s[j, last]
        if lk_e[j, last] > hi:
            hi = lk_e[j, last]
        last += 1
    removed = last - first
    shift = 1 - removed
    if shift > 0:
        for q in range(n - 1, last - 1, -1):
            lk_s[j, q + shift] = lk_s[j, q]
            lk_e[j, q + shift] = lk_e[j, q]
    elif shift < 0:
        for q in range(last, n):
            lk_s[j, q + shift] = lk_s[j, q]
            lk_e[j, q + shift] = lk_e[j, q]
    lk_s[j, first] = lo
    lk_e[j, first] = hi
    n += shift
    if n >= lk_s.shape[1]:                       # full: merge the two closest intervals
        best = 0
        for q in range(1, n - 1):
            if lk_s[j, q + 1] - lk_e[j, q] < lk_s[j, best + 1] - lk_e[j, best]:
                best = q
        lk_e[j, best] = lk_e[j, best + 1]
        for q in range(best + 1, n - 1):
            lk_s[j, q] = lk_s[j, q + 1]
            lk_e[j, q] = lk_e[j, q + 1]
        n -= 1
    lk_n[j] = n
    return done


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def transfer(lk_s, lk_e, lk_n, core, nbytes, start, read, bw_read, bw_write, bw_chip, now):
    """Cycles of bandwidth a transfer of nbytes starting at cycle start adds, on the core's
    link (j = 1 + 2 * core to read, 2 + 2 * core to write) and the chip's HBM (j = 0)."""
    if nbytes <= 0:
        return 0
    j = 1 + 2 * core if read else 2 + 2 * core
    bw = bw_read if read else bw_write
    s = np.float64(start)
    link_done = link_book(lk_s, lk_e, lk_n, j, s, nbytes / bw, np.float64(now))
    chip_done = link_book(lk_s, lk_e, lk_n, 0, s, nbytes / bw_chip, np.float64(now))
    return np.int64(np.ceil(max(link_done, chip_done) - s - 1e-9))


# ---------------------------------------------------------------- one warp's (or unit's) step
@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def set_block_ctx(ctx, block_id, gx, gy, gz, bx, by, bz, w):
    """The executor's ctx for warp w of block block_id: block coordinates, block and grid
    dimensions, the warp."""
    ctx[0] = block_id % gx
    ctx[1] = (block_id // gx) % gy
    ctx[2] = block_id // (gx * gy)
    ctx[3] = bx
    ctx[4] = by
    ctx[5] = bz
    ctx[6] = gx
    ctx[7] = gy
    ctx[8] = gz
    ctx[9] = w


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def operands_ready(pc, t, pc_srcs, pc_dst, ready, producer):
    """The scoreboard: the first cycle >= t at which pc's source registers (and its
    destination's earlier write) are ready: (cycle, cause, the pc waited for)."""
    cause = CA_NONE
    cause_pc = np.int64(-1)
    for j in range(pc_srcs.shape[1]):
        r = pc_srcs[pc, j]
        if r >= 0 and ready[r] > t:
            t = ready[r]
            cause = CA_OPERAND
            cause_pc = producer[r]
    d = pc_dst[pc]
    if d >= 0 and ready[d] > t:
        t = ready[d]
        cause = CA_OPERAND
        cause_pc = producer[d]
    return t, cause, cause_pc


# ---------------------------------------------------------------- records
@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _record(rec, totals, st, record, block, w, core, pc, issue, complete, stall, cause,
            cause_pc, mask, moved, why):
    """One issued warp-instruction: a row of rec (FIELDS of timing/records.py) when the
    records are kept, else its share of totals[pc] (count, lanes, busy, stall: PcTotals).
    ``why`` is records.why_code's (0 but for an AI-core tile instruction)."""
    if not record:
        m = mask & 0xFFFFFFFF
        m = m - ((m >> 1) & 0x55555555)
        m = (m & 0x33333333) + ((m >> 2) & 0x33333333)
        m = (m + (m >> 4)) & 0x0F0F0F0F
        totals[pc, 0] += 1
        totals[pc, 1] += ((m * 0x01010101) & 0xFFFFFFFF) >> 24
        totals[pc, 2] += complete - issue
        totals[pc, 3] += stall
        return
    n = st[S_REC_N]
    rec[n, 0] = block
    rec[n, 1] = w
    rec[n, 2] = core
    rec[n, 3] = pc
    rec[n, 4] = issue
    rec[n, 5] = complete
    rec[n, 6] = stall
    rec[n, 7] = cause
    rec[n, 8] = cause_pc
    rec[n, 9] = mask
    rec[n, 10] = moved
    rec[n, 11] = why
    st[S_REC_N] = n + 1
