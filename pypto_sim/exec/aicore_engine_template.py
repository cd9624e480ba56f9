"""The AI core's timing rules compiled: its event loop (timing/aicore_fast.py drives it).

It replays, event for event, what the SimPy model does for an AI-core kernel
(timing/model.py LaunchSimulation._warp with timing/aicore.py): one process per core slot,
block and unit (AIC, AIV0, AIV1), each unit's scalar instructions on its own issue port, its
tile instructions handed to in-order pipe queues, flags between pipes, cross-core flags, data
ordering under sync="auto", the L2 and the GM links. Events are numbered and ordered as SimPy
orders them, so the records are the SimPy model's, row for row (tests/test_aicore_fast.py).

Values are not computed here: timing never depends on tile values (runtime/skip_values.py),
so every dispatched tile instruction is logged with its operands, start and completion, and
the driver then replays the reads (at the starts) and writes (at the completions) in SimPy's
order. A kernel fault (an operand out of bounds, a wait_flag with no set_flag) or a full flag
queue stops the loop with ENG_FALLBACK: the driver runs the launch under SimPy, which raises
the error with its full report (nothing has been written by then).

Appended to the lane executor module after the engine's parts (event heap, booking table,
links, records) and the L2's lines, which it calls.
"""
import numpy as np
from numba import njit

EV_CROSS = 9          # a block's cross-core event fired: its waiting units resume
ENG_FALLBACK = 5      # run this launch under SimPy (a fault to report, or a queue too small)
GROW_LOG = 5

# tile and sync instruction kinds (tp[pc, TP_KIND])
AK_NONE = 0
AK_LOAD = 1
AK_STORE = 2
AK_STORE_ACC = 3
AK_MOVE = 4
AK_MMA = 5
AK_VEC = 6
AK_SET_FLAG = 10
AK_WAIT_FLAG = 11
AK_PIPE_BARRIER = 12
AK_CC_SET = 13
AK_CC_WAIT = 14

# tp[pc, :]: what one instruction is, decoded once per launch (timing/aicore_fast.py)
TP_KIND = 0
TP_NJ = 1          # operand index of n (an element count) or -1: rows / cols operands instead
TP_RJ = 2
TP_CJ = 3
TP_ITEM = 4        # bytes per element that size the transfer or the op
TP_DSTCOLS = 5     # the destination's columns (an element count's shape)
TP_GMJ = 6         # GM element offset, row stride, tensor slot
TP_STRJ = 7
TP_SLOT = 8
TP_ROWJ = 9        # a move's source window
TP_COLJ = 10
TP_MJ = 11
TP_NNJ = 12
TP_KJ = 13
TP_MSJ = 14        # a mask's row stride (bytes) or -1
TP_BOUNDED = 15
TP_NVIEWS = 16
TP_VIEWS = 17      # 4 x (rows, cols, is the mask)
TP_DATA_R = 29
TP_DATA_C = 30
TP_DST_R = 31
TP_DST_C = 32
TP_SRC_R = 33
TP_SRC_C = 34
TP_A_R = 35
TP_A_C = 36
TP_B_R = 37
TP_B_C = 38
TP_ROUTE = 39      # ROUTE_* of a transfer
TP_ACC_BYTES = 40
TP_KTILE = 41
TP_NR = 42         # ranges read (ids), ranges written
TP_READS = 43      # 6
TP_NW = 49
TP_WRITES = 50     # 2
TP_FSTART = 52     # the op's rows of the formula table: fm[TP_FSTART : TP_FSTART + TP_FN]
TP_FN = 53
TP_HEAD = 54
TP_TAIL = 55
TP_UNALIGNED = 56
TP_RB = 57
TP_SRC = 58        # set/wait_flag: source pipe, destination pipe, event
TP_DST = 59
TP_EVENT = 60
TP_PIPEARG = 61    # pipe_barrier / cross_core_set_flag: the pipe (-1: every pipe)
TP_CCEVENT = 62
TP_MAXJ = 63       # operands to log (the values replay decodes them)
TP_DITEM = 64      # the data tile's bytes per element (a vector op's cost)
TP_ALU = 65        # 1 for an elementwise op (family tile_alu): priced at a row-major shape
N_TP = 66
TF_BW = 0          # the transfer's bandwidth (bytes per cycle)
TF_PER = 1         # cycles per repeat (vector op, matmul)
TF_ROW = 2         # cycles per row (vector op: per_row)
N_TF = 3

ROUTE_GM_TO_L1 = 0
ROUTE_GM_TO_UB = 1
ROUTE_L1_TO_GM = 2
ROUTE_UB_TO_GM = 3
ROUTE_FIX = 4
N_ROUTES = 5

# acfg[]: launch constants
AK_SLOTS = 0
AK_N_BLOCKS = 1
AK_GX = 2
AK_GY = 3
AK_GZ = 4
AK_WIDTH = 5
AK_RECORD = 6
AK_MAX_CYCLES = 7
AK_AUTO = 8
AK_DEPTH = 9
AK_HAS_L2 = 10
AK_L2_MISS_EXTRA = 11
AK_LINE_BYTES = 12
AK_BX = 13
AK_BY = 14
AK_BZ = 15
AK_BOOK_ROOM = 16
AK_PORTS = 17
N_ACFG = 18
# af[]: launch constants (floats)
AF_L2_BW = 0
AF_HBM_BW = 1
AF_DRAIN_C0 = 2
AF_DRAIN_ROW = 3
AF_DRAIN_BW = 4
AF_DRAIN_PEN = 5
AF_DRAIN_FIXED = 6
N_AF = 7

# st[] beyond the lane engine's S_*
S_LOG_N = N_ST
S_FALLBACK_PC = N_ST + 1
N_AST = N_ST + 2

# uv[g, :]: a unit's process
U_NEXT = 0          # ws.next_issue
U_CAUSE = 1         # ws.cause, ws.cause_pc
U_CAUSE_PC = 2
U_PHASE = 3
U_WAIT_GEN = 4      # the cross-core event it waits for (-1: none), and when it started waiting
U_WAIT_SEQ = 5
U_T = 6             # a cross-core wait's t, cause and cause pc from before the wait
U_T_CAUSE = 7
U_T_CAUSE_PC = 8
U_WAITING_AT = 9    # the pc it waits at (-1: none)
N_UV = 10
PH_CROSS = 5        # waiting for a cross-core flag

# bx[p, :]: a block's cross-core event
X_GEN = 0           # the current event's number
X_SEQ = 1           # waiters registered so far
N_BX = 2

CA_FLAG = 11        # records.py's causes the AI core adds
CA_CROSS_CORE = 12
CA_TILE_RAW = 8
CA_TILE_WAR = 9

LG_PC = 0           # the log of dispatched tile instructions (the values replay)
LG_G = 1
LG_BLOCK = 2
LG_START = 3
LG_COMPLETE = 4
LG_ROWS = 5         # the decoded shape: rows, cols, and a GM transfer's offset and stride
LG_COLS = 6
LG_OFF = 7
LG_STRIDE = 8
N_LG = 9


@njit(cache=True, error_model="numpy", _nrt=False)
def book_port(keys, vals, st, ports, port, t, width):
    """CoreState.book for a tile instruction: the first cycle c >= t with room on the unit's
    issue port (no pipe booked); returns c * 16 + the cause that moved it."""
    c = t
    why = CA_NONE
    while _get(keys, vals, (c * ports + port) << 3) >= width:
        c += 1
        why = CA_ISSUE
    _add(keys, vals, st, (c * ports + port) << 3)
    return c * 16 + why


@njit(cache=True, error_model="numpy", _nrt=False)
def unit_drained(pf, pd, tl, fl, g, pipe):
    """Unit.drained: when everything queued on pipe (every pipe for -1) is done, its pending
    vector tail paid (the tail keeps the pipe busy); the pipe counts as emptied."""
    lo = 0 if pipe < 0 else pipe
    hi = pf.shape[1] if pipe < 0 else pipe + 1
    t = np.int64(-(1 << 62))
    for p in range(lo, hi):
        if pd[g, p] + tl[g, p] > t:
            t = pd[g, p] + tl[g, p]
    for p in range(lo, hi):
        if tl[g, p] != 0:
            pd[g, p] += tl[g, p]
            if pd[g, p] > pf[g, p]:
                pf[g, p] = pd[g, p]
            tl[g, p] = 0
        fl[g, p] = 1
    return t


@njit(cache=True, error_model="numpy", _nrt=False)
def queue_slot(qb, qh, qn, g, pipe, t, depth):
    """Unit.queue_slot: the first cycle >= t with room in pipe's queue for one more op."""
    cap = qb.shape[2]
    while qn[g, pipe] > 0 and qb[g, pipe, qh[g, pipe]] <= t:
        qh[g, pipe] = (qh[g, pipe] + 1) % cap
        qn[g, pipe] -= 1
    n = qn[g, pipe]
    if n >= depth:
        t = qb[g, pipe, (qh[g, pipe] + n - depth) % cap]
        drop = n - depth + 1
        qh[g, pipe] = (qh[g, pipe] + drop) % cap
        qn[g, pipe] -= drop
    return t


@njit(cache=True, error_model="numpy", _nrt=False)
def _ceil(x):
    return np.int64(np.ceil(x - 1e-9))


@njit(cache=True, error_model="numpy", _nrt=False)
def _odd_part(n):
    n = max(n, 1)
    while n % 2 == 0:
        n //= 2
    return n


@njit(cache=True, error_model="numpy", _nrt=False)
def _shared_links(l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, af, has_l2, nbytes, start, write,
                  hit_fraction, now):
    """AICoreMemory.book: cycles the L2's chip link and (missed or written bytes) HBM's
    need for a transfer from start."""
    s = np.float64(start)
    done = s
    fnow = np.float64(now)
    if has_l2:
        d = link_book(l2_s, l2_e, l2_n, 0, s, nbytes / af[AF_L2_BW], fnow)
        if d > done:
            done = d
    hbm_bytes = nbytes if write else nbytes * (1.0 - hit_fraction)
    if hbm_bytes > 0:
        d = link_book(lk_s, lk_e, lk_n, 0, s, hbm_bytes / af[AF_HBM_BW], fnow)
        if d > done:
            done = d
    return _ceil(done - s)


@njit(cache=True, error_model="numpy", _nrt=False)
def _hazard(p, e, reads, nr, writes, nw, ov, hz_n, hz_ord, hz_wd, hz_rd, hz_wpc, hz_rpc, out):
    """TileEngine.ready_time: out = (earliest start, cause, the pc waited for)."""
    t = np.int64(0)
    kind = 0
    pc = np.int64(-1)
    n = hz_n[p, e]
    for i in range(nr):
        q = reads[i]
        for k in range(n):
            r = hz_ord[p, e, k]
            if ov[q, r] and hz_wd[p, e, r] > t:
                t = hz_wd[p, e, r]
                kind = CA_TILE_RAW
                pc = hz_wpc[p, e, r]
    for i in range(nw):
        q = writes[i]
        for k in range(n):
            r = hz_ord[p, e, k]
            if ov[q, r]:
                if hz_wd[p, e, r] > t:
                    t = hz_wd[p, e, r]
                    kind = CA_TILE_RAW
                    pc = hz_wpc[p, e, r]
                if hz_rd[p, e, r] > t:
                    t = hz_rd[p, e, r]
                    kind = CA_TILE_WAR
                    pc = hz_rpc[p, e, r]
    out[0] = t
    out[1] = kind
    out[2] = pc


@njit(cache=True, error_model="numpy", _nrt=False)
def _hazard_record(p, e, reads, nr, writes, nw, complete, pc, hz_n, hz_ord, hz_has, hz_wd,
                   hz_rd, hz_wpc, hz_rpc):
    """TileEngine.record: the ranges read and written are busy until complete."""
    for i in range(nr + nw):
        r = reads[i] if i < nr else writes[i - nr]
        if hz_has[p, e, r] == 0:
            hz_has[p, e, r] = 1
            hz_ord[p, e, hz_n[p, e]] = r
            hz_n[p, e] += 1
            hz_wd[p, e, r] = 0
            hz_rd[p, e, r] = 0
            hz_wpc[p, e, r] = -1
            hz_rpc[p, e, r] = -1
        if i < nr:
            if complete >= hz_rd[p, e, r]:
                hz_rd[p, e, r] = complete
                hz_rpc[p, e, r] = pc
        elif complete >= hz_wd[p, e, r]:
            hz_wd[p, e, r] = complete
            hz_wpc[p, e, r] = pc


@njit(cache=True, error_model="numpy", _nrt=False)
def _operand(code, imm, regs, pc, j):
    r = code[pc, C_SRC + j]
    return imm[pc, j] if r < 0 else regs[r, 0]


@njit(cache=True, error_model="numpy", _nrt=False)
def _iv(code, imm, regs, pc, j):
    """Operand j as TileOp's iv: the integer part, 0 for inf or NaN."""
    x = _operand(code, imm, regs, pc, j)
    if not np.isfinite(x):
        return np.int64(0)
    return np.int64(x)


@njit(cache=True, error_model="numpy", _nrt=False)
def _formula(fm_i, fm_f, start, count, rows, cols):
    """Machine.formula_cycles from the op's rows of the formula table (levels in lookup
    order: this dtype and cols, this dtype any cols, any dtype and cols, any): -1 for none."""
    for k in range(start, start + count):
        if fm_i[k, 1] < 0 or fm_i[k, 1] == cols:
            value = fm_f[k, 0] * rows * cols + fm_f[k, 1]
            return np.int64(np.floor(value + 0.5)) if value > 0 else np.int64(0)
    return np.int64(-1)


@njit(cache=True, error_model="numpy", _nrt=False)
def _extent_ok(rows, cols, t_rows, t_cols):
    return 1 <= rows <= t_rows and 1 <= cols <= t_cols


@njit(cache=True, error_model="numpy", _nrt=False)
def tile_shape(tp, code, imm, regs, pc, tcount, shape):
    """TileOp's decode and bounds checks of tile instruction pc: shape = (rows, cols, nbytes,
    m, n, k, GM offset, stride). Returns False when TileOp would raise (the SimPy model then
    reports it)."""
    kind = tp[pc, TP_KIND]
    if tp[pc, TP_NJ] >= 0:
        n = _iv(code, imm, regs, pc, tp[pc, TP_NJ])
        for v in range(tp[pc, TP_NVIEWS]):
            if n > tp[pc, TP_VIEWS + 3 * v] * tp[pc, TP_VIEWS + 3 * v + 1]:
                return False
        dc = tp[pc, TP_DSTCOLS]
        rows = -((-n) // dc)
        cols = dc
        nbytes = n * tp[pc, TP_ITEM]
    else:
        rows = _iv(code, imm, regs, pc, tp[pc, TP_RJ])
        cols = _iv(code, imm, regs, pc, tp[pc, TP_CJ])
        nbytes = rows * cols * tp[pc, TP_ITEM]
    shape[0] = rows
    shape[1] = cols
    shape[2] = nbytes
    if kind == AK_LOAD or kind == AK_STORE or kind == AK_STORE_ACC:
        stride = _iv(code, imm, regs, pc, tp[pc, TP_STRJ])
        if not _extent_ok(rows, cols, tp[pc, TP_DATA_R], tp[pc, TP_DATA_C]):
            return False
        off = _iv(code, imm, regs, pc, tp[pc, TP_GMJ])
        last = off + (rows - 1) * stride + cols
        if off < 0 or last > tcount[tp[pc, TP_SLOT]]:
            return False
        shape[6] = off
        shape[7] = stride
    elif kind == AK_MOVE:
        r0 = _iv(code, imm, regs, pc, tp[pc, TP_ROWJ])
        c0 = _iv(code, imm, regs, pc, tp[pc, TP_COLJ])
        if not _extent_ok(rows, cols, tp[pc, TP_DST_R], tp[pc, TP_DST_C]):
            return False
        if r0 < 0 or c0 < 0 or r0 + rows > tp[pc, TP_SRC_R] or c0 + cols > tp[pc, TP_SRC_C]:
            return False
    elif kind == AK_MMA:
        mm = _iv(code, imm, regs, pc, tp[pc, TP_MJ])
        nn = _iv(code, imm, regs, pc, tp[pc, TP_NNJ])
        kk = _iv(code, imm, regs, pc, tp[pc, TP_KJ])
        if not (1 <= mm <= 4095 and 1 <= nn <= 4095 and 1 <= kk <= 4095):
            return False
        if not (_extent_ok(mm, kk, tp[pc, TP_A_R], tp[pc, TP_A_C])
                and _extent_ok(kk, nn, tp[pc, TP_B_R], tp[pc, TP_B_C])
                and _extent_ok(mm, nn, tp[pc, TP_DST_R], tp[pc, TP_DST_C])):
            return False
        shape[2] = 0
        shape[3] = mm
        shape[4] = nn
        shape[5] = kk
    elif tp[pc, TP_BOUNDED] != 0:
        mstride = _iv(code, imm, regs, pc, tp[pc, TP_MSJ]) if tp[pc, TP_MSJ] >= 0 else 0
        for v in range(tp[pc, TP_NVIEWS]):
            width = mstride if tp[pc, TP_VIEWS + 3 * v + 2] != 0 else cols
            if rows * width > tp[pc, TP_VIEWS + 3 * v] * tp[pc, TP_VIEWS + 3 * v + 1]:
                return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def tile_dispatch(g, p, w, core, pc, now, env_now, tp, tf, fm_i, fm_f, shape, acfg, af, pc_pipe,
                  pc_lat, pf, pd, fh, tl, fl, qb, qh, qn, ov, hz_n, hz_ord, hz_has, hz_wd, hz_rd,
                  hz_wpc, hz_rpc, ak_s, ak_e, ak_n, l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, l2s,
                  l2link, l2first, tbase, routes, hz_out, out):
    """timing/aicore.py dispatch: unit g hands tile instruction pc (decoded in shape) to its
    pipe at cycle now. out = (start, complete, bytes, cause, cause pc)."""
    kind = tp[pc, TP_KIND]
    pipe = pc_pipe[pc]
    fixed = pc_lat[pc]
    e = 1 if w == 2 else 0
    nr = tp[pc, TP_NR]
    nw = tp[pc, TP_NW]
    reads = tp[pc, TP_READS:TP_READS + 6]
    writes = tp[pc, TP_WRITES:TP_WRITES + 2]
    hazard = np.int64(0)
    hkind = 0
    hpc = np.int64(-1)
    if acfg[AK_AUTO] != 0:
        _hazard(p, e, reads, nr, writes, nw, ov, hz_n, hz_ord, hz_wd, hz_rd, hz_wpc, hz_rpc, hz_out)
        hazard = hz_out[0]
        hkind = hz_out[1]
        hpc = hz_out[2]
    start = now
    if pf[g, pipe] > start:
        start = pf[g, pipe]
    if fh[g, pipe] > start:
        start = fh[g, pipe]
    if hazard > start:
        start = hazard
    cause = CA_NONE
    cause_pc = np.int64(-1)
    if start > now:
        if start == hazard:
            cause = hkind
            cause_pc = hpc
        elif start == fh[g, pipe]:
            cause = CA_FLAG
        else:
            cause = CA_PIPE
    rows = shape[0]
    cols = shape[1]
    nbytes = shape[2]
    if kind == AK_LOAD or kind == AK_STORE or kind == AK_STORE_ACC:
        read = kind == AK_LOAD
        saving = np.int64(0)
        hit_fraction = 0.0
        if acfg[AK_HAS_L2] != 0:
            hits, lines = l2_touch_window(l2s, l2link, l2first[tp[pc, TP_SLOT]], shape[6], rows,
                                          cols, shape[7], tp[pc, TP_ITEM], acfg[AK_LINE_BYTES])
            if read:
                if hits == lines:
                    saving = acfg[AK_L2_MISS_EXTRA]
                hit_fraction = hits / max(lines, 1)
        if kind == AK_STORE_ACC:
            acc = tp[pc, TP_ACC_BYTES]
            n0 = max(1, np.int64(af[AF_DRAIN_C0]) // acc)
            n1 = -((-cols) // n0)
            per_row = max(af[AF_DRAIN_ROW], acc * cols / af[AF_DRAIN_BW]) + \
                af[AF_DRAIN_PEN] * (_odd_part(n1) - 1)
            drain = _ceil(af[AF_DRAIN_FIXED] + rows * per_row)
            hbm = _shared_links(l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, af, acfg[AK_HAS_L2] != 0,
                                nbytes, start, True, 0.0, env_now)
            busy = max(drain, hbm)
            if busy - drain > 0:
                routes[ROUTE_FIX] += busy - drain
            complete = start + fixed + busy
        else:
            bw = tf[pc, TF_BW]
            link = 2 * (core * 3 + w) + (0 if read else 1)
            done = link_book(ak_s, ak_e, ak_n, link, np.float64(start), nbytes / bw,
                             np.float64(env_now))
            nominal = _ceil(nbytes / bw)
            own = _ceil(done - start)
            shared = _shared_links(l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, af,
                                   acfg[AK_HAS_L2] != 0, nbytes, start, not read, hit_fraction,
                                   env_now)
            busy = max(own, shared)
            if busy - nominal > 0:
                routes[tp[pc, TP_ROUTE]] += busy - nominal
            complete = start + fixed - saving + busy
    elif kind == AK_MOVE:
        complete = start + fixed + _ceil(nbytes / tf[pc, TF_BW])
    elif kind == AK_MMA:
        repeats = -((-shape[3]) // 16) * -((-shape[5]) // tp[pc, TP_KTILE]) * -((-shape[4]) // 16)
        complete = start + fixed + _ceil(repeats * tf[pc, TF_PER])
    else:
        idle = fl[g, pipe] != 0 or start > pf[g, pipe]
        if tp[pc, TP_ALU] != 0 and cols * tp[pc, TP_DITEM] < 32:
            # an elementwise op on a ColMajor column (rows narrower than a 32-byte block, which
            # a row-major tile's rows never are: PTO-ISA Tile.md) is priced at its row-major
            # reshape: A2/A3's elementwise ops take row-major tiles only (pto-isa
            # include/pto/npu/a2a3/TMul.hpp TMulCheck), so kernels reshape first, as pto-isa's
            # flash attention TRESHAPEs its [rows, 1] maxima and sums to [1, rows]
            # (kernels/manual/common/flash_atten/pto_macro_fa_softmax.hpp)
            rows, cols = cols, rows
        cycles = _formula(fm_i, fm_f, tp[pc, TP_FSTART], tp[pc, TP_FN], rows, cols)
        tail = np.int64(0)
        if cycles < 0:
            rb = tp[pc, TP_RB]
            row_bytes = cols * tp[pc, TP_DITEM]
            aligned = row_bytes % rb == 0
            repeats = (rows * row_bytes) // rb if aligned else rows * -((-row_bytes) // rb)
            cycles = (tp[pc, TP_HEAD] if idle else 0) + _ceil(repeats * tf[pc, TF_PER] + rows * tf[pc, TF_ROW])
            if not aligned:
                cycles += tp[pc, TP_UNALIGNED]
            tail = tp[pc, TP_TAIL]
        complete = start + cycles
        tl[g, pipe] = tail
    pf[g, pipe] = complete
    if complete > pd[g, pipe]:
        pd[g, pipe] = complete
    fl[g, pipe] = 0
    cap = qb.shape[2]
    qb[g, pipe, (qh[g, pipe] + qn[g, pipe]) % cap] = complete
    qn[g, pipe] += 1
    if acfg[AK_AUTO] != 0:
        _hazard_record(p, e, reads, nr, writes, nw, complete, pc, hz_n, hz_ord, hz_has, hz_wd,
                       hz_rd, hz_wpc, hz_rpc)
    out[0] = start
    out[1] = complete
    out[2] = nbytes
    out[3] = cause
    out[4] = cause_pc


@njit(cache=True, error_model="numpy", _nrt=False)
def cross_ready(cn, p, w, event):
    """cross_core_ready: unit w's cross_core_wait_flag(event) has a signal from each source."""
    if w == 0:
        return cn[p, 0, event, 1] > 0 and cn[p, 0, event, 2] > 0
    return cn[p, w, event, 0] > 0


@njit(cache=True, error_model="numpy", _nrt=False)
def cross_take(cb, chd, cn, p, w, event):
    """cross_core_take: consume the signals; when the last of them fired."""
    cap = cb.shape[4]
    fire = np.int64(0)
    for s in range(3):
        if (w == 0 and s != 0) or (w != 0 and s == 0):
            t = cb[p, w, event, s, chd[p, w, event, s]]
            chd[p, w, event, s] = (chd[p, w, event, s] + 1) % cap
            cn[p, w, event, s] -= 1
            if t > fire:
                fire = t
    return fire


@njit(cache=True, error_model="numpy", _nrt=False)
def set_flag_step(pf, pd, tl, fl, fh, fb, fhd, fn, g, src, dst, ev, now):
    """SET_FLAG(src, dst, ev) of unit g at issue: the flag fires when src has finished what
    was queued before it (its pending tail paid) and no earlier than a wait on src allows.
    False, changing nothing, when the flag's queue is full (the caller grows it)."""
    cap = fb.shape[4]
    if fn[g, src, dst, ev] >= cap:
        return False
    fire = now
    drained = unit_drained(pf, pd, tl, fl, g, src)
    if drained > fire:
        fire = drained
    if fh[g, src] > fire:
        fire = fh[g, src]
    fb[g, src, dst, ev, (fhd[g, src, dst, ev] + fn[g, src, dst, ev]) % cap] = fire
    fn[g, src, dst, ev] += 1
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def wait_flag_step(fh, fb, fhd, fn, g, src, dst, ev):
    """WAIT_FLAG(src, dst, ev) of unit g at issue: takes the oldest set_flag and holds dst's
    later operations until it fires. False, changing nothing, when no set_flag is pending."""
    if fn[g, src, dst, ev] == 0:
        return False
    cap = fb.shape[4]
    fire = fb[g, src, dst, ev, fhd[g, src, dst, ev]]
    fhd[g, src, dst, ev] = (fhd[g, src, dst, ev] + 1) % cap
    fn[g, src, dst, ev] -= 1
    if fire > fh[g, dst]:
        fh[g, dst] = fire
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def barrier_step(pf, pd, tl, fl, fh, g, pipe, now):
    """PIPE_BARRIER(pipe) of unit g before issue: later operations on pipe (every pipe for -1)
    start after the earlier ones on it (on every pipe) completed. Returns when the scalar
    unit may go on: now for one pipe, and for every pipe when they have all drained."""
    if pipe < 0:
        done = unit_drained(pf, pd, tl, fl, g, -1)
        for q in range(fh.shape[1]):
            if done > fh[g, q]:
                fh[g, q] = done
        if now > done:
            done = now
        return done
    drained = unit_drained(pf, pd, tl, fl, g, pipe)
    if drained > fh[g, pipe]:
        fh[g, pipe] = drained
    return now


@njit(cache=True, error_model="numpy", _nrt=False)
def cross_set_step(pf, pd, tl, fl, cb, chd, cn, g, p, w, ev, pipe, now):
    """CROSS_CORE_SET_FLAG(ev, pipe) of unit w (global unit g) of the block on slot p: fires
    when the unit's queued operations on pipe (every pipe for -1) are done; from the AIC to
    both AIVs, from an AIV to the AIC. False, changing nothing, when a target's queue is full.
    (The caller then signals the block's cross-core event.)"""
    cap = cb.shape[4]
    for to in range(3):
        if ((w == 0 and to != 0) or (w != 0 and to == 0)) and cn[p, to, ev, w] >= cap:
            return False
    fire = unit_drained(pf, pd, tl, fl, g, pipe)
    if now > fire:
        fire = now
    for to in range(3):
        if (w == 0 and to != 0) or (w != 0 and to == 0):
            cb[p, to, ev, w, (chd[p, to, ev, w] + cn[p, to, ev, w]) % cap] = fire
            cn[p, to, ev, w] += 1
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def reset_units(p, pf, pd, fh, tl, fl, qn, fn, cn, hz_n, hz_has):
    """A block starts on core slot p: its three units' pipes, queues and flags are fresh, and
    so are its cross-core signals and (auto sync) hazard ranges."""
    for e in range(2):
        hz_n[p, e] = 0
        for r in range(hz_has.shape[2]):
            hz_has[p, e, r] = 0
    for a in range(3):
        for b in range(cn.shape[2]):
            for c in range(3):
                cn[p, a, b, c] = 0
    for w in range(3):
        g = 3 * p + w
        for q in range(pf.shape[1]):
            pf[g, q] = 0
            pd[g, q] = 0
            fh[g, q] = 0
            tl[g, q] = 0
            fl[g, q] = 1
            qn[g, q] = 0
            for a in range(fn.shape[2]):
                for b in range(fn.shape[3]):
                    fn[g, q, a, b] = 0


@njit(cache=True, error_model="numpy", _nrt=False)
def _unit_end(g, now, st, ht, hk, hv, uv):
    """The unit's process ends (the block's all_of counts it when the event is processed)."""
    uv[g, U_PHASE] = PH_DONE
    st[S_UNFINISHED] -= 1
    if now > st[S_END_TIME]:
        st[S_END_TIME] = now
    schedule(st, ht, hk, hv, now, NORMAL, EV_WARP_END, g)


@njit(cache=True, error_model="numpy", _nrt=False)
def _init_units(p, now, st, ht, hk, hv, seed_regs, regs, ready, producer, wst, uv, bv, bx, pf, pd,
                fh, tl, fl, qn, fn, cn, hz_n, hz_has):
    """A block's process starts on core slot p: fresh units (each a process), pipes, flags,
    cross-core signals and hazard ranges."""
    bv[p, B_ENDED] = 0
    bv[p, B_FAILED] = 0
    bx[p, X_GEN] = 0
    bx[p, X_SEQ] = 0
    reset_units(p, pf, pd, fh, tl, fl, qn, fn, cn, hz_n, hz_has)
    for w in range(3):
        g = 3 * p + w
        for r in range(seed_regs.shape[0]):
            for lane in range(32):
                regs[g, r, lane] = seed_regs[r, lane]
            ready[g, r] = 0
            producer[g, r] = -1
        wst[g, 0] = 0
        wst[g, 1] = 1                     # one lane: the unit's scalar unit
        wst[g, 2] = 0
        wst[g, 3] = 0
        wst[g, 4] = 0
        for k in range(N_UV):
            uv[g, k] = 0
        uv[g, U_CAUSE_PC] = -1
        uv[g, U_WAIT_GEN] = -1
        uv[g, U_WAITING_AT] = -1
        uv[g, U_T_CAUSE_PC] = -1
        uv[g, U_PHASE] = PH_DECIDE
        st[S_UNFINISHED] += 1
        schedule(st, ht, hk, hv, now, URGENT, EV_WARP, g)


@njit(cache=True, error_model="numpy", _nrt=False)
def aicore_engine_run(budget, acfg, af, st, ht, hk, hv, keys, vals, keys2, vals2, code, imm, pc_fam, pc_op,
                      pc_pipe, pc_lat, pc_ii, pc_srcs, pc_dst, tp, tf, fm_i, fm_f, ov, seed_regs,
                      regs, ready, producer, wst, stacks, uv, bv, bx, pf, pd, fh, tl, fl, qb, qh,
                      qn, fb, fhd, fn, cb, chd, cn, hz_n, hz_ord, hz_has, hz_wd, hz_rd, hz_wpc,
                      hz_rpc, ak_s, ak_e, ak_n, l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, l2s, l2link,
                      l2first, hbm, tbase, tcount, tbytes, routes, rec, totals,
                      lg_i, lg_v, ctx, info, pend_idx, pend_val, l1, shape, hz_out, out, waiters):
    """Process events in SimPy's order until none is left, the cycle limit, a fallback, a
    full buffer or `budget` events. Returns an ENG_* code. (keys2, vals2: a scratch booking
    table of the same size; waiters: room for a block's three units.)"""
    limit = acfg[AK_MAX_CYCLES]
    slots = acfg[AK_SLOTS]
    record = acfg[AK_RECORD] != 0
    while budget > 0:
        n = st[S_HEAP_N]
        if n == 0:
            return ENG_DONE
        if ht[0] > limit or (ht[0] == limit and hk[0] >= st[S_LIMIT_KEY]):
            return ENG_LIMIT
        if n + 16 > ht.shape[0]:
            st[S_GROW] = GROW_HEAP
            return ENG_GROW
        if record and st[S_REC_N] + 4 > rec.shape[0]:
            st[S_GROW] = GROW_RECORDS
            return ENG_GROW
        if st[S_LOG_N] + 4 > lg_i.shape[0]:
            st[S_GROW] = GROW_LOG
            return ENG_GROW
        if 2 * (st[S_TABLE_USED] + acfg[AK_BOOK_ROOM]) > keys.shape[0]:
            # forget the past bookings here (through the scratch table); grow only when the
            # bookings still to come fill it
            for i in range(keys2.shape[0]):
                keys2[i] = -1
            used = table_rebuild(keys, vals, keys2, vals2, st[S_NOW], acfg[AK_PORTS])
            for i in range(keys.shape[0]):
                keys[i] = keys2[i]
                vals[i] = vals2[i]
            st[S_TABLE_USED] = used
            if 4 * (used + acfg[AK_BOOK_ROOM]) > keys.shape[0]:
                st[S_GROW] = GROW_TABLE
                return ENG_GROW
        budget -= 1
        st[S_EVENTS] += 1
        last = _heap_pop(ht, hk, hv, st)
        now = ht[last]
        kind = hv[last, 0]
        arg = hv[last, 1]
        st[S_NOW] = now
        if kind == EV_WARP or kind == EV_CROSS:
            count = 1
            if kind == EV_WARP:
                waiters[0] = arg
            else:
                # the block's cross-core event: its waiters resume in the order they waited
                p = arg % slots
                gen = arg // slots
                count = 0
                for q in range(3):
                    g = 3 * p + q
                    if uv[g, U_PHASE] == PH_CROSS and uv[g, U_WAIT_GEN] == gen:
                        k = count
                        while k > 0 and uv[waiters[k - 1], U_WAIT_SEQ] > uv[g, U_WAIT_SEQ]:
                            waiters[k] = waiters[k - 1]
                            k -= 1
                        waiters[k] = g
                        count += 1
                for q in range(count):
                    uv[waiters[q], U_WAIT_GEN] = -1
            for q in range(count):
                # ---- run unit g from cycle now until it waits (LaunchSimulation._warp's loop
                # for an AI-core unit), written inline: a call passing its ~80 arrays cost more
                # than the rest of an event
                g = waiters[q]
                fallback = False
                slots = acfg[AK_SLOTS]
                p = g // 3
                w = g - 3 * p
                core = p % slots
                block_id = bv[p, B_BLOCK]
                width = acfg[AK_WIDTH]
                ports = acfg[AK_PORTS]
                record = acfg[AK_RECORD] != 0
                state = wst[g]
                wregs = regs[g]
                wready = ready[g]
                wprod = producer[g]
                phase = uv[g, U_PHASE]
                if phase == PH_RETIRE:
                    _unit_end(g, now, st, ht, hk, hv, uv)
                    continue
                set_block_ctx(ctx, block_id, acfg[AK_GX], acfg[AK_GY], acfg[AK_GZ], acfg[AK_BX],
                              acfg[AK_BY], acfg[AK_BZ], w)
                while True:
                    pc = state[0]
                    fam = pc_fam[pc]
                    ikind = tp[pc, TP_KIND]
                    tile = ikind >= AK_LOAD and ikind <= AK_VEC
                    if phase == PH_DECIDE or phase == PH_CROSS:
                        if phase == PH_DECIDE:
                            # ---- when can this instruction issue?
                            t = uv[g, U_NEXT]
                            if t < now:
                                t = now
                            t, cause, cause_pc = operands_ready(pc, t, pc_srcs, pc_dst, wready, wprod)
                            if ikind == AK_CC_WAIT and not cross_ready(cn, p, w, tp[pc, TP_CCEVENT]):
                                uv[g, U_CAUSE] = CA_CROSS_CORE
                                uv[g, U_CAUSE_PC] = -1
                                uv[g, U_WAITING_AT] = pc
                                uv[g, U_T] = t
                                uv[g, U_T_CAUSE] = cause
                                uv[g, U_T_CAUSE_PC] = cause_pc
                                uv[g, U_WAIT_GEN] = bx[p, X_GEN]
                                uv[g, U_WAIT_SEQ] = bx[p, X_SEQ]
                                bx[p, X_SEQ] += 1
                                uv[g, U_PHASE] = PH_CROSS
                                break
                        else:
                            # resumed by the block's cross-core event: still nothing? wait for the next one
                            t = uv[g, U_T]
                            cause = uv[g, U_T_CAUSE]
                            cause_pc = uv[g, U_T_CAUSE_PC]
                            if not cross_ready(cn, p, w, tp[pc, TP_CCEVENT]):
                                uv[g, U_WAIT_GEN] = bx[p, X_GEN]
                                uv[g, U_WAIT_SEQ] = bx[p, X_SEQ]
                                bx[p, X_SEQ] += 1
                                break
                            uv[g, U_WAITING_AT] = -1
                            phase = PH_DECIDE
                            uv[g, U_PHASE] = PH_DECIDE
                        if ikind == AK_CC_WAIT:
                            fire = cross_take(cb, chd, cn, p, w, tp[pc, TP_CCEVENT])
                            if now > t:
                                t = now
                            if fire > t:
                                t = fire
                                cause = CA_CROSS_CORE
                        elif ikind == AK_PIPE_BARRIER:
                            done = barrier_step(pf, pd, tl, fl, fh, g, tp[pc, TP_PIPEARG], now)
                            if done > t:
                                t = done
                                cause = CA_FLAG
                        elif tile:
                            # a full pipe queue holds the scalar unit until its oldest op completes
                            slot = queue_slot(qb, qh, qn, g, pc_pipe[pc], t, acfg[AK_DEPTH])
                            if slot > t:
                                t = slot
                                cause = CA_PIPE
                                cause_pc = -1
                        if tile:
                            booked = book_port(keys, vals, st, ports, g, t, width)
                        else:
                            booked = book(keys, vals, st, ports, g, t, pc_pipe[pc], pc_ii[pc], width)
                        c = booked >> 4
                        why = booked & 15
                        if why != 0:
                            cause = why
                            cause_pc = -1
                        if c > now:
                            uv[g, U_CAUSE] = cause
                            uv[g, U_CAUSE_PC] = cause_pc
                            uv[g, U_PHASE] = PH_ISSUE
                            schedule(st, ht, hk, hv, c, NORMAL, EV_WARP, g)
                            break
                    # ---- issue at cycle now
                    phase = PH_DECIDE
                    uv[g, U_PHASE] = PH_DECIDE
                    stall = now - uv[g, U_NEXT] if now > uv[g, U_NEXT] else 0
                    lat = pc_lat[pc]
                    uv[g, U_NEXT] = now + 1
                    complete = now + lat
                    mask = state[1]
                    next_pc = pc + 1
                    st[S_WARP_INSTRS] += 1
                    if fam == F_CONTROL:
                        next_pc = control_step(pc, pc_op[pc], code, imm, wregs, state, stacks[g])
                    elif tile:
                        if not tile_shape(tp, code, imm, wregs, pc, tcount, shape):
                            st[S_FALLBACK_PC] = pc
                            fallback = True
                            break
                        tile_dispatch(g, p, w, core, pc, now, now, tp, tf, fm_i, fm_f, shape, acfg, af,
                                      pc_pipe, pc_lat, pf, pd, fh, tl, fl, qb, qh, qn, ov, hz_n, hz_ord,
                                      hz_has, hz_wd, hz_rd, hz_wpc, hz_rpc, ak_s, ak_e, ak_n, l2_s, l2_e,
                                      l2_n, lk_s, lk_e, lk_n, l2s, l2link, l2first, tbase,
                                      routes, hz_out, out)
                        _record(rec, totals, st, record, block_id, w, core, pc, out[0], out[1],
                                out[0] - now, out[3], out[4], mask, out[2])
                        k = st[S_LOG_N]
                        lg_i[k, LG_PC] = pc
                        lg_i[k, LG_G] = g
                        lg_i[k, LG_BLOCK] = block_id
                        lg_i[k, LG_START] = out[0]
                        lg_i[k, LG_COMPLETE] = out[1]
                        lg_i[k, LG_ROWS] = shape[0]
                        lg_i[k, LG_COLS] = shape[1]
                        lg_i[k, LG_OFF] = shape[6]
                        lg_i[k, LG_STRIDE] = shape[7]
                        for j in range(tp[pc, TP_MAXJ]):
                            lg_v[k, j] = _operand(code, imm, wregs, pc, j)
                        st[S_LOG_N] = k + 1
                        uv[g, U_CAUSE] = CA_NONE
                        uv[g, U_CAUSE_PC] = -1
                        state[0] = next_pc
                        continue
                    elif ikind == AK_SET_FLAG or ikind == AK_WAIT_FLAG:
                        # a full flag queue, or a wait with no set_flag (SimPy reports it)
                        if ikind == AK_SET_FLAG:
                            ok = set_flag_step(pf, pd, tl, fl, fh, fb, fhd, fn, g, tp[pc, TP_SRC],
                                               tp[pc, TP_DST], tp[pc, TP_EVENT], now)
                        else:
                            ok = wait_flag_step(fh, fb, fhd, fn, g, tp[pc, TP_SRC], tp[pc, TP_DST],
                                                tp[pc, TP_EVENT])
                        if not ok:
                            st[S_FALLBACK_PC] = pc
                            fallback = True
                            break
                    elif ikind == AK_CC_SET:
                        if not cross_set_step(pf, pd, tl, fl, cb, chd, cn, g, p, w, tp[pc, TP_CCEVENT],
                                              tp[pc, TP_PIPEARG], now):
                            st[S_FALLBACK_PC] = pc
                            fallback = True
                            break
                        # signal(): the block's cross-core event fires now; its waiters resume when it is
                        # processed (an event nobody waits for changes nothing: not scheduled)
                        gen = bx[p, X_GEN]
                        for q in range(3):
                            if uv[3 * p + q, U_PHASE] == PH_CROSS and uv[3 * p + q, U_WAIT_GEN] == gen:
                                schedule(st, ht, hk, hv, now, NORMAL, EV_CROSS, gen * slots + p)
                                break
                        bx[p, X_GEN] = gen + 1
                    elif ikind == AK_CC_WAIT or ikind == AK_PIPE_BARRIER or fam == F_ALLOC:
                        pass                                        # done before issue, or nothing to do
                    elif fam == F_ALU or fam == F_ID or fam == F_WARP:
                        if execute(pc, code, imm, wregs, mask, ctx, hbm, tbase, tcount, tbytes, l1,
                                   32, pend_idx, pend_val, info) != ST_OK:
                            st[S_FALLBACK_PC] = pc
                            fallback = True
                            break
                        d = pc_dst[pc]
                        if d >= 0:
                            wready[d] = complete
                            wprod[d] = pc
                    else:
                        st[S_FALLBACK_PC] = pc
                        fallback = True
                        break
                    _record(rec, totals, st, record, block_id, w, core, pc, now, complete, stall,
                            uv[g, U_CAUSE], uv[g, U_CAUSE_PC], mask, 0)
                    uv[g, U_CAUSE] = CA_NONE
                    uv[g, U_CAUSE_PC] = -1
                    if next_pc < 0:
                        # retire: the unit ends once everything queued on its pipes is done
                        done = unit_drained(pf, pd, tl, fl, g, -1)
                        if done < 0:
                            done = 0
                        if done > now:
                            uv[g, U_PHASE] = PH_RETIRE
                            schedule(st, ht, hk, hv, done, NORMAL, EV_WARP, g)
                        else:
                            _unit_end(g, now, st, ht, hk, hv, uv)
                        break
                    state[0] = next_pc
                if fallback:
                    return ENG_FALLBACK
        elif kind == EV_WARP_END:
            p = arg // 3
            bv[p, B_ENDED] += 1
            if bv[p, B_ENDED] == 3:
                schedule(st, ht, hk, hv, now, NORMAL, EV_COND, p)
        elif kind == EV_COND:
            schedule(st, ht, hk, hv, now, NORMAL, EV_BLOCK_END, arg)
        elif kind == EV_BLOCK_END or kind == EV_SLOT:
            if kind == EV_BLOCK_END:
                st[S_BLOCKS_DONE] += 1
            if st[S_NEXT_BLOCK] < acfg[AK_N_BLOCKS]:
                bv[arg, B_BLOCK] = st[S_NEXT_BLOCK]
                st[S_NEXT_BLOCK] += 1
                schedule(st, ht, hk, hv, now, URGENT, EV_BLOCK, arg)
        elif kind == EV_BLOCK:
            _init_units(arg, now, st, ht, hk, hv, seed_regs, regs, ready, producer, wst, uv, bv,
                        bx, pf, pd, fh, tl, fl, qn, fn, cn, hz_n, hz_has)
    return ENG_YIELD
