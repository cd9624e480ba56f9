"""The AI core's timing rules as step functions over the arrays of timing/aicore_pipes.py:
tile_dispatch (when a tile instruction starts - after its pipe, its flag waits and, under
sync="auto", its tiles' hazards - and what it costs: DMA over the unit's link, L2 and HBM, the
fixpipe drain, the cube's repeats, the vector formula or head/repeats/tail), a pipe queue's
room and a pipe's drain at a sync; the flags, barriers and cross-core signals are in
aicore_sync.py, the tiles' hazards under sync="auto" in tile_hazards.py. Both drivers call them - the compiled loop (aicore_engine.py) and the SimPy
model (timing/aicore.py) - so each rule is written once. They call the engine's parts
(engine_parts.py) and the L2's lines (l2.py).
"""
import numpy as np
from numba import njit

from .isa_constants import C_SRC
from .jit_options import NO_REFCOUNT
from .engine_parts import _add, _get, CA_BARRIER, CA_ISSUE, CA_NONE, CA_PIPE, link_book
from .gm_layout import C0_BYTES, gm_window
from .l2 import l2_touch_window
from .tile_hazards import _hazard, _hazard_record

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
AK_SYNCALL = 15     # SYNCALL (the launch's barrier: aicore_sync.py syncall_arrive)

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
TP_WRITES = 50     # 4
TP_FSTART = 54     # the op's rows of the formula table: fm[TP_FSTART : TP_FSTART + TP_FN]
TP_FN = 55
TP_HEAD = 56
TP_TAIL = 57
TP_UNALIGNED = 58
TP_RB = 59
TP_SRC = 60        # set/wait_flag: source pipe, destination pipe, event
TP_DST = 61
TP_EVENT = 62
TP_PIPEARG = 63    # pipe_barrier / cross_core_set_flag: the pipe (-1: every pipe)
TP_CCEVENT = 64
TP_MAXJ = 65       # operands to log (the values replay decodes them)
TP_DITEM = 66      # the data tile's bytes per element (a vector op's cost)
TP_ALU = 67        # 1 for an elementwise op (family tile_alu): priced at a row-major shape
TP_FAST_R, TP_FAST_C, TP_FAST_HEAD, TP_FAST_BODY, TP_FAST_TAIL = 68, 69, 70, 71, 72  # fast tree
TP_COLSJ = 73      # operand index of an element count's row width when a register holds it, or -1
TP_LAYJ = 74       # a transfer's GM layout operand (isa/gm_layouts.py)
TP_ALIGN_R = 75    # a move's window starts at multiples of these (isa/tile_roles.py extract_alignment)
TP_ALIGN_C = 76
TP_NEXT = 77       # the tiles a vector op over rows x cols walks (isa/tile_roles.py walked_extents), then
TP_EXT = 78        # 4 x (tile rows, tile cols, rows a, rows b, cols a, cols b): it walks (a - b) x (a - b)
N_TP = 102
EXT_R, EXT_C, EXT_ONE, EXT_ZERO = -1, -2, -3, -4     # an extent's terms besides operand j >= 0
TF_BW = 0          # the transfer's bandwidth (bytes per cycle)
TF_PER = 1         # cycles per repeat (vector op, matmul)
TF_ROW = 2         # cycles per row (vector op: per_row)
TF_ELEM = 3        # cycles per element (vector op: per_element, a scalar loop's)
N_TF = 4

ROUTE_GM_TO_L1, ROUTE_GM_TO_UB, ROUTE_L1_TO_GM, ROUTE_UB_TO_GM, ROUTE_FIX, N_ROUTES = range(6)

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
AK_CC_LIMIT = 18    # a cross-core flag id's counter ([aicore] cross_core_flag_limit)
AK_AIVS = 19        # the AIVs an AIC's cross-core flags pair with (Program.aiv_ratio: 1 or 2)
N_ACFG = 20
# af[]: launch constants (floats)
AF_L2_BW = 0
AF_HBM_BW = 1
AF_DRAIN_C0 = 2
AF_DRAIN_ROW = 3
AF_DRAIN_BW = 4
AF_DRAIN_PEN = 5
AF_DRAIN_FIXED = 6
N_AF = 7

CA_FLAG = 11        # records.py's causes the AI core adds
HOLD_FLAG, HOLD_BARRIER = 0, 1     # fh[unit, kind, pipe]: until when a wait_flag / a pipe_barrier holds the pipe
CA_CROSS_CORE = 12

@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
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


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
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


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
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


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _ceil(x):
    return np.int64(np.ceil(x - 1e-9))


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _odd_part(n):
    n = max(n, 1)
    while n % 2 == 0:
        n //= 2
    return n


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _shared_links(l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, af, has_l2, nbytes, start, hbm_bytes, now):
    """AICoreMemory.book: cycles the L2's chip link (nbytes) and HBM's (hbm_bytes: the missed
    lines, whole, with an L2; every byte without) need for a transfer from start. Loads and
    stores alike: the L2 is write-back, so a store that hits a line the L2 holds does not reach
    HBM (docs/timing.md, "L2")."""
    s = np.float64(start)
    done = s
    fnow = np.float64(now)
    if has_l2:
        d = link_book(l2_s, l2_e, l2_n, 0, s, nbytes / af[AF_L2_BW], fnow)
        if d > done:
            done = d
    if hbm_bytes > 0:
        d = link_book(lk_s, lk_e, lk_n, 0, s, hbm_bytes / af[AF_HBM_BW], fnow)
        if d > done:
            done = d
    return _ceil(done - s)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _operand(code, imm, regs, pc, j):
    r = code[pc, C_SRC + j]
    return imm[pc, j] if r < 0 else regs[r, 0]


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _iv(code, imm, regs, pc, j):
    """Operand j as TileOp's iv: the integer part, 0 for inf or NaN."""
    x = _operand(code, imm, regs, pc, j)
    if not np.isfinite(x):
        return np.int64(0)
    return np.int64(x)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _formula(fm_i, fm_f, start, count, rows, cols):
    """Machine.formula_cycles from the op's rows of the formula table (levels in lookup
    order: this dtype and cols, this dtype any cols, any dtype and cols, any): -1 for none."""
    for k in range(start, start + count):
        if fm_i[k, 1] < 0 or fm_i[k, 1] == cols:
            value = fm_f[k, 0] * rows * cols + fm_f[k, 1]
            return np.int64(np.floor(value + 0.5)) if value > 0 else np.int64(0)
    return np.int64(-1)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _extent_ok(rows, cols, t_rows, t_cols):
    return 1 <= rows <= t_rows and 1 <= cols <= t_cols


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _ext_term(code, imm, regs, pc, t, rows, cols):
    if t == EXT_R:
        return rows
    if t == EXT_C:
        return cols
    if t == EXT_ONE:
        return 1
    if t == EXT_ZERO:
        return 0
    return _iv(code, imm, regs, pc, t)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def tile_shape(tp, code, imm, regs, pc, tcount, shape):
    """TileOp's decode and bounds checks of tile instruction pc: shape = (rows, cols, nbytes,
    m, n, k, GM offset, and a transfer's GM window: elements between runs, runs, elements a
    run, layout; isa/gm_layouts.py). Returns False when TileOp would raise (the SimPy model
    then reports it)."""
    kind = tp[pc, TP_KIND]
    if tp[pc, TP_NJ] >= 0:
        n = _iv(code, imm, regs, pc, tp[pc, TP_NJ])
        if n <= 0:                                 # an empty or negative run-time valid region
            return False
        dc = tp[pc, TP_DSTCOLS]
        at_pitch = tp[pc, TP_NEXT] > 0             # rows of a constant valid width (_extents)
        if tp[pc, TP_COLSJ] >= 0:                  # rows of a run-time valid width
            width = _iv(code, imm, regs, pc, tp[pc, TP_COLSJ])
            at_pitch = width > 0
            if width > 0:
                dc = width
        rows = -((-n) // dc)
        cols = dc
        if at_pitch:                               # each tile walked, at its pitch
            if not _walks_fit(tp, code, imm, regs, pc, rows, cols):
                return False
        else:                                      # a run of n words
            for v in range(tp[pc, TP_NVIEWS]):
                if n > tp[pc, TP_VIEWS + 3 * v] * tp[pc, TP_VIEWS + 3 * v + 1]:
                    return False
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
        layout = _iv(code, imm, regs, pc, tp[pc, TP_LAYJ])
        runs, run, pitch = gm_window(layout, rows, cols, stride, C0_BYTES // tp[pc, TP_ITEM])
        last = off + (runs - 1) * pitch + run
        if runs == 0 or off < 0 or last > tcount[tp[pc, TP_SLOT]]:
            return False
        shape[6] = off
        shape[7] = pitch
        shape[8] = runs
        shape[9] = run
        shape[10] = layout
    elif kind == AK_MOVE:
        r0 = _iv(code, imm, regs, pc, tp[pc, TP_ROWJ])
        c0 = _iv(code, imm, regs, pc, tp[pc, TP_COLJ])
        if not _extent_ok(rows, cols, tp[pc, TP_DST_R], tp[pc, TP_DST_C]):
            return False
        if tp[pc, TP_SRC_C] < 0:             # TIMG2COL: r0 = fmatrix, c0 = conv (isa/45_conv.toml)
            if (c0 >> 24) * (r0 >> 16) * (r0 & 0xFFFF) > tp[pc, TP_SRC_R]:
                return False
        elif r0 < 0 or c0 < 0 or r0 + rows > tp[pc, TP_SRC_R] or c0 + cols > tp[pc, TP_SRC_C]:
            return False
        elif r0 % tp[pc, TP_ALIGN_R] != 0 or c0 % tp[pc, TP_ALIGN_C] != 0:
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
    elif tp[pc, TP_NEXT] > 0 and tp[pc, TP_NJ] < 0:
        if not _walks_fit(tp, code, imm, regs, pc, rows, cols):
            return False
    return True


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _walks_fit(tp, code, imm, regs, pc, rows, cols):
    """TileOp's walked-extents check: the op's rows x cols fit its data tile, and each tile it
    walks (TP_EXT) holds the rows x cols it walks of it."""
    if not _extent_ok(rows, cols, tp[pc, TP_DATA_R], tp[pc, TP_DATA_C]):
        return False
    for e in range(tp[pc, TP_NEXT]):
        x = TP_EXT + 6 * e
        er = (_ext_term(code, imm, regs, pc, tp[pc, x + 2], rows, cols)
              - _ext_term(code, imm, regs, pc, tp[pc, x + 3], rows, cols))
        ec = (_ext_term(code, imm, regs, pc, tp[pc, x + 4], rows, cols)
              - _ext_term(code, imm, regs, pc, tp[pc, x + 5], rows, cols))
        if not (0 <= er <= tp[pc, x] and 0 <= ec <= tp[pc, x + 1]):
            return False
    return True


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def tile_dispatch(g, p, w, core, pc, now, env_now, tp, tf, fm_i, fm_f, shape, acfg, af, pc_pipe,
                  pc_lat, pf, pd, fh, tl, fl, qb, qh, qn, ov, hz_n, hz_ord, hz_has, hz_wd, hz_rd,
                  hz_wpc, hz_rpc, ak_s, ak_e, ak_n, l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, l2s,
                  l2link, l2first, tbase, routes, hz_out, out):
    """timing/aicore.py dispatch: unit g hands tile instruction pc (decoded in shape) to its
    pipe at cycle now. out = (start, complete, bytes, cause, cause pc, L2 missed, shared wait,
    bytes moved to or from HBM: a transfer's missed lines, each whole)."""
    kind = tp[pc, TP_KIND]
    pipe = pc_pipe[pc]
    fixed = pc_lat[pc]
    e = 1 if w == 2 else 0
    nr = tp[pc, TP_NR]
    nw = tp[pc, TP_NW]
    reads = tp[pc, TP_READS:TP_READS + 6]
    writes = tp[pc, TP_WRITES:TP_WRITES + 4]
    missed, shared_wait = 0, np.int64(0)      # records.why_code's: a load's L2 miss, L2/HBM wait
    hbm_read = np.int64(0)                    # ... and the bytes it moved to or from HBM
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
    for hold in range(2):
        if fh[g, hold, pipe] > start:
            start = fh[g, hold, pipe]
    if hazard > start:
        start = hazard
    cause = CA_NONE
    cause_pc = np.int64(-1)
    if start > now:
        if start == hazard:
            cause = hkind
            cause_pc = hpc
        elif start == fh[g, HOLD_FLAG, pipe]:
            cause = CA_FLAG
        elif start == fh[g, HOLD_BARRIER, pipe]:
            cause = CA_BARRIER          # a pipe_barrier: the pipe's earlier operations (their tails) first
        else:
            cause = CA_PIPE
    rows = shape[0]
    cols = shape[1]
    nbytes = shape[2]
    free = np.int64(-1)
    if kind == AK_LOAD or kind == AK_STORE or kind == AK_STORE_ACC:
        read = kind == AK_LOAD
        saving = np.int64(0)
        hbm_bytes = np.float64(nbytes)
        if acfg[AK_HAS_L2] != 0:
            hits, lines = l2_touch_window(l2s, l2link, l2first[tp[pc, TP_SLOT]], shape[6], shape[8],
                                          shape[9], shape[7], tp[pc, TP_ITEM], acfg[AK_LINE_BYTES])
            # a missed line is filled (or, written, written back) whole: a transfer that reads
            # 128 bytes of a 512-byte line brings HBM's 512, and the next three such find it
            hbm_read = np.int64(lines - hits) * acfg[AK_LINE_BYTES]
            hbm_bytes = np.float64(hbm_read)
            if read:
                if hits == lines:
                    saving = acfg[AK_L2_MISS_EXTRA]
                missed = 0 if hits == lines else 1
        if kind == AK_STORE_ACC:
            acc = tp[pc, TP_ACC_BYTES]
            n0 = max(1, np.int64(af[AF_DRAIN_C0]) // acc)
            n1 = -((-cols) // n0)
            per_row = max(af[AF_DRAIN_ROW], acc * cols / af[AF_DRAIN_BW]) + \
                af[AF_DRAIN_PEN] * (_odd_part(n1) - 1)
            drain = _ceil(af[AF_DRAIN_FIXED] + rows * per_row)
            hbm = _shared_links(l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, af, acfg[AK_HAS_L2] != 0,
                                nbytes, start, hbm_bytes, env_now)
            busy = max(drain, hbm)
            if busy - drain > 0:
                routes[ROUTE_FIX] += busy - drain
                shared_wait = busy - drain
            complete = start + fixed + busy
        else:
            bw = tf[pc, TF_BW]
            link = 2 * (core * 3 + w) + (0 if read else 1)
            done = link_book(ak_s, ak_e, ak_n, link, np.float64(start), nbytes / bw,
                             np.float64(env_now))
            nominal = _ceil(nbytes / bw)
            own = _ceil(done - start)
            shared = _shared_links(l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, af,
                                   acfg[AK_HAS_L2] != 0, nbytes, start, hbm_bytes, env_now)
            busy = max(own, shared)
            if busy - nominal > 0:
                routes[tp[pc, TP_ROUTE]] += busy - nominal
                shared_wait = busy - nominal
            # the DMA queue takes its next transfer once this one's bytes are issued (start +
            # busy); its data lands a latency later, and transfers retire in order
            complete = max(start + fixed - saving + busy, pd[g, pipe])
            free = start + busy
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
        if cycles < 0 and rows == tp[pc, TP_FAST_R] and cols == tp[pc, TP_FAST_C]:  # all valid
            cycles, tail = (tp[pc, TP_FAST_HEAD] if idle else 0) + tp[pc, TP_FAST_BODY], tp[pc, TP_FAST_TAIL]
        elif cycles < 0:
            rb = tp[pc, TP_RB]
            row_bytes = cols * tp[pc, TP_DITEM]
            aligned = row_bytes % rb == 0
            repeats = (rows * row_bytes) // rb if aligned else rows * -((-row_bytes) // rb)
            cycles = (tp[pc, TP_HEAD] if idle else 0) + _ceil(repeats * tf[pc, TF_PER] + rows * tf[pc, TF_ROW]
                                                              + rows * cols * tf[pc, TF_ELEM])
            if not aligned:
                cycles += tp[pc, TP_UNALIGNED]
            tail = tp[pc, TP_TAIL]
        complete = start + cycles
        tl[g, pipe] = tail
    pf[g, pipe] = complete if free < 0 else free
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
    out[5], out[6], out[7] = missed, shared_wait, hbm_read


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
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
            fh[g, HOLD_FLAG, q] = 0
            fh[g, HOLD_BARRIER, q] = 0
            tl[g, q] = 0
            fl[g, q] = 1
            qn[g, q] = 0
            for a in range(fn.shape[2]):
                for b in range(fn.shape[3]):
                    fn[g, q, a, b] = 0
