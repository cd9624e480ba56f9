"""The AI core's tile values replayed in one compiled loop (timing/aicore_replay.py drives it).

After the compiled timing run (aicore_engine.py) every dispatched tile instruction
is in the log with its operands, start and completion. The driver orders the reads (at the
starts) and the writes (at the completions) as the SimPy model creates them, and this loop
walks that order: a read computes the operation's pending result into a slot of a pool, a
write puts it in place. It calls the same kernels as exec/aicore_tiles.py's TileOp (the
functional runner's and the SimPy model's decode): gm_gather / gm_scatter for GM and tile
copies, the vector families' kernels (run in place on the unit's memory, the result kept and
the destination's old words put back until the write), tile_matmul for a small matmul. A
large finite matmul is handed back to the driver (RS_BLAS), which takes its float64 sums from
numpy's BLAS, A and B read where they lie when their rows are dense; the loop then rounds them
with matmul_round (the same bits as tile_matmul), at the write straight into the accumulator
when the matmul is deferred (replay_deferrable) and the accumulator's rows are dense.

"""
import numpy as np
from numba import njit

from .isa_constants import ITEMSIZE
from .matmul import matmul_bounds, matmul_round, tile_matmul
from .gm_copy import gm_gather, gm_scatter, gm_scatter_mode
from .tiles import tile_convert, tile_elementwise, tile_gather, tile_scatter, tile_store_quant, tile_store_quant_words
from .family_dispatch import family_kernel
from .conv import tile_img2col
from .aicore_engine import LG_BLOCK, LG_COLS, LG_G, LG_LAYOUT, LG_OFF, LG_PC, LG_ROWS, LG_RUN, LG_RUNS, LG_STRIDE
from .gm_layout import C0_BYTES, ND, scatter_window, tile_to_window
from ...isa.store_modes import QUANT as STORE_QUANT, QUANT_F16 as STORE_QUANT_F16, QUANT_VECTOR as STORE_QUANT_VECTOR

# the replay's per-pc table (rp, int64); built by timing/aicore_replay.py
RP_KIND = 0          # RK_*
RP_OP = 1            # the opcode
RP_DT = 2            # the instruction's dtype code (C_DTYPE)
RP_LO = 3            # a vector op's destination words [lo, hi) (RP_LO2, RP_LO3: other tiles it writes)
RP_HI = 4
RP_SLOT = 5          # a GM transfer's tensor slot
RP_SBASE = 6         # the tile read (store, move) / a matmul's a
RP_SPITCH = 7
RP_DBASE = 8         # the tile written (load, move) / a matmul's c
RP_DPITCH = 9
RP_CONV = 10         # a copy's rounding: the destination dtype code, or -1
RP_BBASE = 11        # a matmul's b (a TSTORE_FP's Scaling tile), bias (0 when none), starting value (INIT_*), c's dtype
RP_BPITCH = 12
RP_BIAS = 13
RP_INIT = 14
RP_SIZE = 15         # words of the pending result, at most
RP_SCJ = 16          # the operand index of a vector op's real scalar (or pad), -1: none
RP_USE = 17          # a vector op takes its second operand as a scalar
RP_J = 18            # operand indices of the kernel's integer arguments (-1: the value -1)
RP_NJ = 16
RP_WLO = RP_J + RP_NJ    # the words of its unit's memory it writes [lo, hi) (a store: none)
RP_WHI = RP_WLO + 1
RP_NR = RP_WLO + 2       # how many ranges of its unit's memory it reads (rr[pc, :RP_NR])
RP_LO2 = RP_WLO + 3      # a vector op's second tile written [lo, hi) (val, a scratch tmp; [0, 0): none)
RP_HI2 = RP_WLO + 4
RP_STMODE = RP_WLO + 5   # a store's mode operand (isa/store_modes.py: atomic add, relu, quantization)
RP_LO3 = RP_WLO + 6      # a vector op's third tile written (TQUANT's tmp, after its src; [0, 0): none)
RP_HI3 = RP_WLO + 7
RP_LO4 = RP_WLO + 8      # a vector op's fourth tile written (TADDDEQRELU's tmp, after src0 and src1)
RP_HI4 = RP_WLO + 9
N_RP = RP_WLO + 10

# replay kinds: the families the loop runs itself, then one per family one kernel runs
# (RK_FAMILY + its number in isa.tile_roles.KERNEL_FAMILIES; family_dispatch.family_kernel)
RK_NONE = 0
RK_LOAD = 1
RK_STORE = 2
RK_MOVE = 3
RK_MMA = 4
RK_ELEM = 5          # from here on the table counts an op's destination among the words it reads
RK_CVT = 6
RK_IMG2COL = 7
RK_FAMILY = 8

# the replay's state (rs) and what a call returns
RS_POS = 0           # the next position in the order
RS_I = 1             # RS_BLAS: the log entry, m, n, k, its block memory (row, side), where
RS_ROW = 2           # its A and B lie in that memory (-1: gathered into the A / B buffers)
RS_M = 3
RS_N = 4
RS_K = 5
RS_SIDE = 6
RS_FREE_P = 7        # free pending slots / memory rows on the stacks
RS_FREE_M = 8
RS_A = 9
RS_B = 10
RS_READY = 11        # 1 + the log entry whose A @ B the driver has put in sums (0: none)
RS_FAULT_AT = 12     # RS_FAULT: the position the kernel refused (FamilyRoles.faults)
N_RS = 13
RS_DONE = 0
RS_BLAS = 1          # a large finite matmul's A @ B is the driver's; then call again
RS_GROW_PEND = 2     # no free pending slot: the driver grows the pool and calls again
RS_GROW_MEM = 3      # no free memory row
RS_FAULT = 4         # log entry rs[RS_I]'s kernel refused an operand: the driver raises


@njit(cache=True, error_model="numpy")
def _rv(vrow, j):
    """Operand j of a logged operation as TileOp's iv (the integer part, 0 for inf or NaN);
    j < 0: the value -1 (an absent tile operand)."""
    if j < 0:
        return np.int64(-1)
    x = vrow[j]
    if not np.isfinite(x):
        return np.int64(0)
    return np.int64(x)


@njit(cache=True, error_model="numpy")
def replay_vector(rp, rf, pc, vrow, l1):
    """Run vector op pc with the logged operands vrow in place on l1, as tile_effects.effect;
    returns -1, or the position a faulting kernel refused (FamilyRoles.faults)."""
    kind, op, dt = rp[pc, RP_KIND], rp[pc, RP_OP], rp[pc, RP_DT]
    j0 = _rv(vrow, rp[pc, RP_J])
    j1 = _rv(vrow, rp[pc, RP_J + 1])
    j2 = _rv(vrow, rp[pc, RP_J + 2])
    j3 = _rv(vrow, rp[pc, RP_J + 3])
    j4 = _rv(vrow, rp[pc, RP_J + 4])
    j5 = _rv(vrow, rp[pc, RP_J + 5])
    j6 = _rv(vrow, rp[pc, RP_J + 6])
    j7 = _rv(vrow, rp[pc, RP_J + 7])
    j8 = _rv(vrow, rp[pc, RP_J + 8])
    j9 = _rv(vrow, rp[pc, RP_J + 9])
    j10 = _rv(vrow, rp[pc, RP_J + 10])
    j11 = _rv(vrow, rp[pc, RP_J + 11])
    j12 = _rv(vrow, rp[pc, RP_J + 12])
    j13 = _rv(vrow, rp[pc, RP_J + 13])
    j14 = _rv(vrow, rp[pc, RP_J + 14])
    j15 = _rv(vrow, rp[pc, RP_J + 15])
    scj = rp[pc, RP_SCJ]
    s = vrow[scj] if scj >= 0 else 0.0
    use = rp[pc, RP_USE] != 0
    if kind == RK_ELEM or kind == RK_CVT:
        # (dst, a, b, n) / (dst, src, n, mode), then cols, dpitch, apitch, bpitch: with cols > 0,
        # n / cols rows at each tile's own pitch, in order (tile_effects.effect)
        n = j3 if kind == RK_ELEM else j2
        rows, width = (n // j4, j4) if j4 > 0 else (1, n)
        for r in range(rows):
            d, a = j0 + r * j5 if j4 > 0 else j0, j1 + r * j6 if j4 > 0 else j1
            if kind == RK_CVT:
                tile_convert(l1, d, a, width, dt, j3)
            else:
                b = j2 + r * j7 if (j4 > 0 and j2 >= 0) else j2
                tile_elementwise(op, l1, d, a, b, s, use, width, dt)
    elif kind >= RK_FAMILY:
        return family_kernel(kind - RK_FAMILY, op, l1, j0, j1, j2, j3, j4, j5, j6, j7, j8, j9, j10, j11,
                             j12, j13, j14, j15, s, use, rf[pc], dt)
    return np.int64(-1)


@njit(cache=True, error_model="numpy")
def _mma_operands(l1, rp, pc, m, n, k, A, B, rowabs, colmax, rs):
    """Where matmul pc's A (m x k) and B (k x n) are read from: in l1 itself when their rows
    are dense (rs[RS_A] / rs[RS_B]: the first word), else gathered row by row into A / B
    (-1); with matmul_bounds' rowabs and colmax. True when every one is finite (BLAS may then
    form the sums: exec/aicore_tiles._blas_matmul)."""
    a, ap, b, bp = rp[pc, RP_SBASE], rp[pc, RP_SPITCH], rp[pc, RP_BBASE], rp[pc, RP_BPITCH]
    if ap == k:
        rs[RS_A] = a
    else:
        rs[RS_A] = -1
        for r in range(m):
            A[r * k:(r + 1) * k] = l1[a + r * ap:a + r * ap + k]
    if bp == n:
        rs[RS_B] = b
    else:
        rs[RS_B] = -1
        for p in range(k):
            B[p * n:(p + 1) * n] = l1[b + p * bp:b + p * bp + n]
    return matmul_bounds(_mma_a(l1, A, rs, m * k), _mma_b(l1, B, rs, k * n), m, n, k, rowabs, colmax)


@njit(cache=True, error_model="numpy", inline="always")
def _mma_a(l1, A, rs, count):
    """A's count words, where _mma_operands found them."""
    return l1[rs[RS_A]:rs[RS_A] + count] if rs[RS_A] >= 0 else A[:count]


@njit(cache=True, error_model="numpy", inline="always")
def _mma_b(l1, B, rs, count):
    """B's count words, where _mma_operands found them."""
    return l1[rs[RS_B]:rs[RS_B] + count] if rs[RS_B] >= 0 else B[:count]


@njit(cache=True, error_model="numpy")
def _replay_mma(i, pc, vrow, l1, out, rp, blas_min, A, B, start, zrow, sums, rowabs, colmax, rs):
    """Logged matmul i's values into out (m x n dense; it may be the accumulator's own words
    in l1: matmul_round keeps each row's starts). False when it is large and finite and its
    A @ B is not in sums yet (rs says where A and B lie: the driver's BLAS forms it, then the
    loop calls this again); else True: the sums rounded (tile_matmul's bits), or tile_matmul."""
    m, n, k = _rv(vrow, rp[pc, RP_J]), _rv(vrow, rp[pc, RP_J + 1]), _rv(vrow, rp[pc, RP_J + 2])
    c, cp, init, dt = rp[pc, RP_DBASE], rp[pc, RP_DPITCH], rp[pc, RP_INIT], rp[pc, RP_CONV]
    if rs[RS_READY] == i + 1:
        rs[RS_READY] = 0
        if init == 1:                                 # INIT_ACC: the accumulator's values
            if cp == n:
                st = l1[c:c + m * n]
            else:
                for r in range(m):
                    start[r * n:(r + 1) * n] = l1[c + r * cp:c + r * cp + n]
                st = start[:m * n]
            stride = n
        elif init == 2:                               # INIT_BIAS: the bias row, every row
            st, stride = l1[rp[pc, RP_BIAS]:rp[pc, RP_BIAS] + n], 0
        else:
            st, stride = zrow[:n], 0
        matmul_round(out, sums, _mma_a(l1, A, rs, m * k), _mma_b(l1, B, rs, k * n), st, stride,
                     m, n, k, dt, rowabs, colmax, True)
        return True
    if blas_min > 0 and m * n * k >= blas_min and _mma_operands(l1, rp, pc, m, n, k, A, B, rowabs,
                                                                 colmax, rs):
        rs[RS_I], rs[RS_M], rs[RS_N], rs[RS_K] = i, m, n, k
        return False
    tile_matmul(out, l1, c, cp, rp[pc, RP_SBASE], rp[pc, RP_SPITCH], rp[pc, RP_BBASE],
                rp[pc, RP_BPITCH], m, n, k, init, rp[pc, RP_BIAS], dt)
    return True


@njit(cache=True, error_model="numpy")
def _replay_mma_at_write(i, pc, vrow, l1, tmp, rp, blas_min, A, B, start, zrow, sums, rowabs,
                         colmax, rs):
    """Deferred matmul i computed at its write (_replay_mma): straight into the accumulator
    when its m rows are dense and no source of the matmul lies in them, else through tmp."""
    m, n, k = _rv(vrow, rp[pc, RP_J]), _rv(vrow, rp[pc, RP_J + 1]), _rv(vrow, rp[pc, RP_J + 2])
    c, cp = rp[pc, RP_DBASE], rp[pc, RP_DPITCH]
    a, ap, b, bp = rp[pc, RP_SBASE], rp[pc, RP_SPITCH], rp[pc, RP_BBASE], rp[pc, RP_BPITCH]
    bias = rp[pc, RP_BIAS]
    hi = c + m * n
    apart = (hi <= a or a + (m - 1) * ap + k <= c) and (hi <= b or b + (k - 1) * bp + n <= c) and \
        (rp[pc, RP_INIT] != 2 or hi <= bias or bias + n <= c)
    if cp == n and apart:
        return _replay_mma(i, pc, vrow, l1, l1[c:hi], rp, blas_min, A, B, start, zrow, sums, rowabs,
                           colmax, rs)
    if not _replay_mma(i, pc, vrow, l1, tmp, rp, blas_min, A, B, start, zrow, sums, rowabs, colmax, rs):
        return False
    tile_scatter(l1, c, cp, tmp, m, n)
    return True


@njit(cache=True, error_model="numpy")
def _gm_words(lg_i, rp, tbase, i):
    """[lo, hi) of the GM bytes logged transfer i touches."""
    item = ITEMSIZE[rp[lg_i[i, LG_PC], RP_DT]]
    lo = tbase[rp[lg_i[i, LG_PC], RP_SLOT]] + lg_i[i, LG_OFF] * item
    return lo, lo + ((lg_i[i, LG_RUNS] - 1) * lg_i[i, LG_STRIDE] + lg_i[i, LG_RUN]) * item


@njit(cache=True, error_model="numpy")
def replay_deferrable(order, n, lg_i, rp, rr, tbase, defer):
    """defer[i] = 1 when operation i may compute its values at its write instead of its
    read: no other write between the two touches what it reads (the words of its unit's
    memory in rr, a vector op's destination and an accumulating matmul's included, as its
    pending result holds every word of it; a load's GM words), or it has no write in order (a
    launch stopped at its cycle limit: nothing of it is seen). The values are then the same,
    without the pending copy (for a vector op, without saving and restoring its destination;
    for a matmul, rounded straight into its accumulator)."""
    written = np.zeros(n, np.int8)
    for pos in range(len(order)):
        if order[pos] >= n:
            written[order[pos] - n] = 1
    defer[:n] = 1
    live = np.empty(n, np.int64)          # operations read and not yet written
    n_live = 0
    for pos in range(len(order)):
        kk = order[pos]
        if kk < n:
            if written[kk]:
                live[n_live] = kk
                n_live += 1
            continue
        i = kk - n
        for q in range(n_live):
            if live[q] == i:
                n_live -= 1
                live[q] = live[n_live]
                break
        pc = lg_i[i, LG_PC]
        if rp[pc, RP_KIND] == RK_STORE:           # GM words: the loads reading them
            lo, hi = _gm_words(lg_i, rp, tbase, i)
            for q in range(n_live):
                j = live[q]
                if rp[lg_i[j, LG_PC], RP_KIND] == RK_LOAD:
                    jlo, jhi = _gm_words(lg_i, rp, tbase, j)
                    if jlo < hi and lo < jhi:
                        defer[j] = 0
            continue
        lo, hi = rp[pc, RP_WLO], rp[pc, RP_WHI]
        lo2, hi2 = rp[pc, RP_LO2], rp[pc, RP_HI2]
        lo3, hi3 = rp[pc, RP_LO3], rp[pc, RP_HI3]
        lo4, hi4 = rp[pc, RP_LO4], rp[pc, RP_HI4]
        block, side = lg_i[i, LG_BLOCK], lg_i[i, LG_G] % 3 >= 2
        for q in range(n_live):
            j = live[q]
            if lg_i[j, LG_BLOCK] != block or (lg_i[j, LG_G] % 3 >= 2) != side:
                continue
            pj = lg_i[j, LG_PC]
            for t in range(rp[pj, RP_NR]):
                if (rr[pj, t, 0] < hi and lo < rr[pj, t, 1]) or (rr[pj, t, 0] < hi2 and lo2 < rr[pj, t, 1]) \
                        or (rr[pj, t, 0] < hi3 and lo3 < rr[pj, t, 1]) or (rr[pj, t, 0] < hi4 and lo4 < rr[pj, t, 1]):
                    defer[j] = 0


@njit(cache=True, error_model="numpy")
def _store_quant(buf, rows, cols, l1, rp, pc, vrow, mode):
    """A quantizing store's values in buf (its Acc tile's, read at its start) quantized in place:
    TSTORE_FP by the words of its Scaling tile (at RP_BBASE in l1, read now, with the Acc),
    TSTORE_ACC by its scale (a run-time operand)."""
    if mode & STORE_QUANT_VECTOR:
        tile_store_quant_words(buf, rows, cols, l1, rp[pc, RP_BBASE], mode & STORE_QUANT_F16 != 0)
    elif mode & STORE_QUANT:
        tile_store_quant(buf, rows * cols, vrow[rp[pc, RP_J]], mode)


@njit(cache=True, error_model="numpy")
def _replay_now(kind, pc, i, lg_i, lg_v, rp, rf, hbm, tbase, l1, tmp):
    """Deferred operation i's values computed and written at once (replay_deferrable): a
    dense destination takes a copy straight from the source, else through tmp. Returns -1, or
    the position a faulting vector kernel refused."""
    rows, cols = lg_i[i, LG_ROWS], lg_i[i, LG_COLS]
    lay = lg_i[i, LG_LAYOUT]
    if kind == RK_LOAD:
        dt = rp[pc, RP_DT]
        src = tbase[rp[pc, RP_SLOT]] + lg_i[i, LG_OFF] * ITEMSIZE[dt]
        d, dp = rp[pc, RP_DBASE], rp[pc, RP_DPITCH]
        if lay != ND:
            gm_gather(tmp, hbm, src, lg_i[i, LG_STRIDE], lg_i[i, LG_RUNS], lg_i[i, LG_RUN], dt)
            scatter_window(l1, d, dp, tmp, lay, rows, cols, C0_BYTES // ITEMSIZE[dt])
        elif dp == cols:
            gm_gather(l1[d:d + rows * cols], hbm, src, lg_i[i, LG_STRIDE], rows, cols, dt)
        else:
            gm_gather(tmp, hbm, src, lg_i[i, LG_STRIDE], rows, cols, dt)
            tile_scatter(l1, d, dp, tmp, rows, cols)
    elif kind == RK_STORE:
        dt = rp[pc, RP_DT]
        dst = tbase[rp[pc, RP_SLOT]] + lg_i[i, LG_OFF] * ITEMSIZE[dt]
        sb, sp = rp[pc, RP_SBASE], rp[pc, RP_SPITCH]
        mode = rp[pc, RP_STMODE]
        if lay != ND:
            tile_gather(tmp, l1, sb, sp, rows, cols, rp[pc, RP_CONV])
            _store_quant(tmp, rows, cols, l1, rp, pc, lg_v[i], mode)
            win = np.empty(rows * cols)
            tile_to_window(win, tmp, lay, rows, cols, C0_BYTES // ITEMSIZE[dt])
            gm_scatter_mode(hbm, dst, lg_i[i, LG_STRIDE], win, lg_i[i, LG_RUNS], lg_i[i, LG_RUN], dt, mode)
        elif sp == cols and rp[pc, RP_CONV] < 0 and mode == 0:
            gm_scatter(hbm, dst, lg_i[i, LG_STRIDE], l1[sb:sb + rows * cols], rows, cols, dt)
        else:                         # through tmp: a relu or a quantization changes the values it stores
            tile_gather(tmp, l1, sb, sp, rows, cols, rp[pc, RP_CONV])
            _store_quant(tmp, rows, cols, l1, rp, pc, lg_v[i], mode)
            gm_scatter_mode(hbm, dst, lg_i[i, LG_STRIDE], tmp, rows, cols, dt, mode)
    elif kind == RK_MOVE:
        vrow = lg_v[i]
        sp = rp[pc, RP_SPITCH]
        src = rp[pc, RP_SBASE] + _rv(vrow, rp[pc, RP_J]) * sp + _rv(vrow, rp[pc, RP_J + 1])
        d, dp = rp[pc, RP_DBASE], rp[pc, RP_DPITCH]
        apart = src + (rows - 1) * sp + cols <= d or d + rows * cols <= src
        if dp == cols and apart:
            tile_gather(l1[d:d + rows * cols], l1, src, sp, rows, cols, rp[pc, RP_CONV])
        else:
            tile_gather(tmp, l1, src, sp, rows, cols, rp[pc, RP_CONV])
            tile_scatter(l1, d, dp, tmp, rows, cols)
    elif kind == RK_IMG2COL:
        vrow = lg_v[i]
        tile_img2col(tmp, l1, rp[pc, RP_SBASE], rp[pc, RP_SPITCH], rows, cols, _rv(vrow, rp[pc, RP_J]),
                     _rv(vrow, rp[pc, RP_J + 1]), _rv(vrow, rp[pc, RP_J + 2]), _rv(vrow, rp[pc, RP_J + 3]))
        tile_scatter(l1, rp[pc, RP_DBASE], rp[pc, RP_DPITCH], tmp, rows, cols)
    else:
        return replay_vector(rp, rf, pc, lg_v[i], l1)
    return np.int64(-1)


@njit(cache=True, error_model="numpy", inline="always")
def _fault(rs, i, fault, row, side, pos):
    """RS_FAULT: log entry i's kernel refused position `fault` in memory (row, side); the loop
    stops at pos for the driver to raise."""
    rs[RS_I], rs[RS_FAULT_AT], rs[RS_ROW], rs[RS_SIDE], rs[RS_POS] = i, fault, row, side, pos
    return RS_FAULT


@njit(cache=True, error_model="numpy")
def aicore_replay(order, n, lg_i, lg_v, rp, rf, hbm, tbase, mem, mem_row, left, pend, pend_of,
                  free_p, free_m, row_used, zr, saved, A, B, start, zrow, sums, rowabs, colmax,
                  blas_min, defer, rs):
    """Walk order (log entries k < n: entry k's read; k >= n: entry k - n's write) from
    rs[RS_POS]; returns RS_DONE at the end, or why the driver must act before the next call
    (rs[RS_POS] is then the position to resume at). mem[row, side]: a block's memory (side 0
    the AIC's and AIV0's, 1 AIV1's), mem_row[block] its row (-1: none yet); left[block]: its
    operations whose write is to come (its row is freed at 0); a row used before is zeroed
    where any operation writes (zr: [lo, hi) ranges) when it is taken again, as a new block's
    memory starts at zero. pend[slot]: a pending result;
    pend_of[entry]: its slot. blas_min: the products from which a finite matmul's A @ B is
    the driver's (0: never): RS_BLAS, then the call again at the same position finds it in
    sums (_replay_mma); A, B, start, zrow (zeros), rowabs, colmax: that matmul's buffers.
    defer[i]: operation i's values are computed at its write (replay_deferrable)."""
    total = len(order)
    pos = rs[RS_POS]
    while pos < total:
        kk = order[pos]
        i = kk - n if kk >= n else kk
        pc = lg_i[i, LG_PC]
        block = lg_i[i, LG_BLOCK]
        side = 0 if lg_i[i, LG_G] % 3 < 2 else 1
        kind = rp[pc, RP_KIND]
        if kk < n:                                    # ---- the read, at the start
            row = mem_row[block]
            if row < 0:
                if rs[RS_FREE_M] == 0:
                    rs[RS_POS] = pos
                    return RS_GROW_MEM
                rs[RS_FREE_M] -= 1
                row = free_m[rs[RS_FREE_M]]
                mem_row[block] = row
                if row_used[row]:                     # a fresh row is zero already
                    for z in range(len(zr)):
                        mem[row, 0, zr[z, 0]:zr[z, 1]] = 0.0
                        mem[row, 1, zr[z, 0]:zr[z, 1]] = 0.0
                row_used[row] = 1
            if defer[i]:                              # computed at its write
                pos += 1
                continue
            if rs[RS_FREE_P] == 0:
                rs[RS_POS] = pos
                return RS_GROW_PEND
            l1 = mem[row, side]
            slot = free_p[rs[RS_FREE_P] - 1]
            out = pend[slot]
            rows, cols = lg_i[i, LG_ROWS], lg_i[i, LG_COLS]
            vrow = lg_v[i]
            if kind == RK_LOAD:
                dt = rp[pc, RP_DT]
                lay = lg_i[i, LG_LAYOUT]
                win = out if lay == ND else saved
                gm_gather(win, hbm, tbase[rp[pc, RP_SLOT]] + lg_i[i, LG_OFF] * ITEMSIZE[dt],
                          lg_i[i, LG_STRIDE], lg_i[i, LG_RUNS], lg_i[i, LG_RUN], dt)
                if lay != ND:
                    scatter_window(out, 0, cols, saved, lay, rows, cols, C0_BYTES // ITEMSIZE[dt])
            elif kind == RK_STORE:
                tile_gather(out, l1, rp[pc, RP_SBASE], rp[pc, RP_SPITCH], rows, cols, rp[pc, RP_CONV])
                _store_quant(out, rows, cols, l1, rp, pc, vrow, rp[pc, RP_STMODE])
            elif kind == RK_MOVE:
                r0, c0 = _rv(vrow, rp[pc, RP_J]), _rv(vrow, rp[pc, RP_J + 1])
                sp = rp[pc, RP_SPITCH]
                tile_gather(out, l1, rp[pc, RP_SBASE] + r0 * sp + c0, sp, rows, cols, rp[pc, RP_CONV])
            elif kind == RK_IMG2COL:
                tile_img2col(out, l1, rp[pc, RP_SBASE], rp[pc, RP_SPITCH], rows, cols, _rv(vrow, rp[pc, RP_J]),
                             _rv(vrow, rp[pc, RP_J + 1]), _rv(vrow, rp[pc, RP_J + 2]),
                             _rv(vrow, rp[pc, RP_J + 3]))
            elif kind == RK_MMA:
                if not _replay_mma(i, pc, vrow, l1, out, rp, blas_min, A, B, start, zrow, sums,
                                   rowabs, colmax, rs):
                    rs[RS_ROW], rs[RS_SIDE], rs[RS_POS] = row, side, pos   # this read again
                    return RS_BLAS
            else:                                     # a vector op, run in place and undone
                lo, hi = rp[pc, RP_LO], rp[pc, RP_HI]
                lo2, hi2 = rp[pc, RP_LO2], rp[pc, RP_HI2]
                lo3, hi3 = rp[pc, RP_LO3], rp[pc, RP_HI3]
                lo4, hi4 = rp[pc, RP_LO4], rp[pc, RP_HI4]
                n1 = hi - lo
                n2 = n1 + hi2 - lo2
                n3 = n2 + hi3 - lo3
                saved[:n1] = l1[lo:hi]
                saved[n1:n2] = l1[lo2:hi2]
                saved[n2:n3] = l1[lo3:hi3]
                saved[n3:n3 + hi4 - lo4] = l1[lo4:hi4]
                fault = replay_vector(rp, rf, pc, vrow, l1)
                if fault >= 0:                        # nothing written: the driver raises
                    return _fault(rs, i, fault, row, side, pos)
                out[:n1] = l1[lo:hi]
                out[n1:n2] = l1[lo2:hi2]
                out[n2:n3] = l1[lo3:hi3]
                out[n3:n3 + hi4 - lo4] = l1[lo4:hi4]
                l1[lo4:hi4] = saved[n3:n3 + hi4 - lo4]    # the fourth tile, the third, the second, then dst:
                l1[lo3:hi3] = saved[n2:n3]                # dst's words last
                l1[lo2:hi2] = saved[n1:n2]
                l1[lo:hi] = saved[:n1]
            rs[RS_FREE_P] -= 1
            pend_of[i] = slot
        else:                                         # ---- the write, at the completion
            row = mem_row[block]
            l1 = mem[row, side]
            slot = pend_of[i]
            res = pend[slot]
            rows, cols = lg_i[i, LG_ROWS], lg_i[i, LG_COLS]
            if defer[i] and kind == RK_MMA:
                if not _replay_mma_at_write(i, pc, lg_v[i], l1, saved, rp, blas_min, A, B, start,
                                            zrow, sums, rowabs, colmax, rs):
                    rs[RS_ROW], rs[RS_SIDE], rs[RS_POS] = row, side, pos   # this write again
                    return RS_BLAS
            elif defer[i]:
                fault = _replay_now(kind, pc, i, lg_i, lg_v, rp, rf, hbm, tbase, l1, saved)
                if fault >= 0:
                    return _fault(rs, i, fault, row, side, pos)
            elif kind == RK_STORE:
                dt = rp[pc, RP_DT]
                lay = lg_i[i, LG_LAYOUT]
                if lay != ND:
                    tile_to_window(saved, res, lay, rows, cols, C0_BYTES // ITEMSIZE[dt])
                gm_scatter_mode(hbm, tbase[rp[pc, RP_SLOT]] + lg_i[i, LG_OFF] * ITEMSIZE[dt], lg_i[i, LG_STRIDE],
                                res if lay == ND else saved, lg_i[i, LG_RUNS], lg_i[i, LG_RUN], dt,
                                rp[pc, RP_STMODE])
            elif kind == RK_LOAD or kind == RK_MOVE or kind == RK_IMG2COL:
                tile_scatter(l1, rp[pc, RP_DBASE], rp[pc, RP_DPITCH], res, rows, cols)
            elif kind == RK_MMA:
                vrow = lg_v[i]
                tile_scatter(l1, rp[pc, RP_DBASE], rp[pc, RP_DPITCH], res, _rv(vrow, rp[pc, RP_J]),
                             _rv(vrow, rp[pc, RP_J + 1]))
            else:
                lo, hi = rp[pc, RP_LO], rp[pc, RP_HI]
                lo2, hi2 = rp[pc, RP_LO2], rp[pc, RP_HI2]
                lo3, hi3 = rp[pc, RP_LO3], rp[pc, RP_HI3]
                lo4, hi4 = rp[pc, RP_LO4], rp[pc, RP_HI4]
                n2 = hi - lo + hi2 - lo2
                n3 = n2 + hi3 - lo3
                l1[lo:hi] = res[:hi - lo]
                l1[lo2:hi2] = res[hi - lo:n2]
                l1[lo3:hi3] = res[n2:n3]
                l1[lo4:hi4] = res[n3:n3 + hi4 - lo4]
            if not defer[i]:
                free_p[rs[RS_FREE_P]] = slot
                rs[RS_FREE_P] += 1
            left[block] -= 1
            if left[block] == 0:                      # a finished block's memory goes
                free_m[rs[RS_FREE_M]] = row
                rs[RS_FREE_M] += 1
                mem_row[block] = -1
        pos += 1
    rs[RS_POS] = pos
    return RS_DONE
