"""The AI core's tile values after a compiled timing run, replayed by the executor's compiled
loop (exec/compiled/replay.py, aicore_replay) in SimPy's order.

This module decodes each pc once into the loop's table, from the TileLayout every other
reader decodes by (exec/aicore_tiles.py), in the terms tile_effects.effect and TileOp.read
use; it orders the log's reads and writes, and does what the loop hands back: a large finite
matmul's A @ B in float64 from numpy's BLAS (exec/aicore_tiles._blas_matmul's product; the loop
rounds it with the executor's matmul_round), and growing the pools of pending results and
block memories.
"""
from __future__ import annotations

import numpy as np

from ..exec.tile_effects import reduction_identity
from ..exec.aicore_tiles import (BLAS_MIN_PRODUCTS, INIT_ACC, INIT_BIAS, INIT_ZERO, MAX_MKN, index_fault_error,
                                 layout_of)
from ..ir.program import C_AUX, C_DTYPE, C_OP, block_coords
from ..isa.store_modes import QUANT
from ..isa.tile_roles import KERNEL_FAMILIES, kernel_operands


def replay_table(sim):
    """(rp, rf, rr): the replay loop's row of every tile instruction, a reduction's identity
    (rf) and the words of its unit's memory each one reads (rr: [lo, hi) ranges; a vector
    op's destination among them)."""
    ex, code = sim.ex, sim.enc.code
    rp = np.zeros((len(code), ex.N_RP), np.int64)
    rp[:, ex.RP_SCJ] = -1
    rp[:, ex.RP_J:ex.RP_J + ex.RP_NJ] = -1
    rf = np.zeros(len(code), np.float64)
    rr = np.zeros((len(code), 8, 2), np.int64)
    for pc, spec in enumerate(sim.pc_spec):
        if not spec.is_tile or spec.family == "tile_sync":
            continue
        _row(sim, pc, spec, rp[pc], rf)
        _, reads, writes, _ = layout_of(sim, pc).tiles
        ranges = [] if spec.family == "tile_load" else [v.words() for v in reads]
        if writes:
            rp[pc, ex.RP_WLO], rp[pc, ex.RP_WHI] = writes[0].words()
            if rp[pc, ex.RP_KIND] >= ex.RK_ELEM:
                ranges.append(writes[0].words())
            if len(writes) > 4:
                raise AssertionError(f"{spec.name}: the replay keeps four written tiles, not {len(writes)}")
            # a vector op's other tiles (val, a scratch tmp, TQUANT's src and tmp, TADDDEQRELU's src0,
            # src1 and tmp): pending too
            for w, (lo_j, hi_j) in zip(writes[1:], ((ex.RP_LO2, ex.RP_HI2), (ex.RP_LO3, ex.RP_HI3),
                                                    (ex.RP_LO4, ex.RP_HI4))):
                ranges.append(w.words())
                rp[pc, lo_j], rp[pc, hi_j] = w.words()
                rp[pc, ex.RP_SIZE] += w.words()[1] - w.words()[0]
        rp[pc, ex.RP_NR] = len(ranges)
        if ranges:
            rr[pc, :len(ranges)] = ranges
    rp[:, ex.RP_SIZE] = np.maximum(rp[:, ex.RP_SIZE], 1)
    return rp, rf, rr


def _row(sim, pc, spec, row, rf):
    ex, code = sim.ex, sim.enc.code
    layout = layout_of(sim, pc)
    view, _reads, writes, data = layout.tiles
    named, fam = layout.named, spec.family
    row[ex.RP_OP] = int(code[pc, C_OP])
    row[ex.RP_DT] = int(code[pc, C_DTYPE])
    row[ex.RP_CONV] = -1

    def put(names):
        for k, name in enumerate(names):
            row[ex.RP_J + k] = named[name] if name in named else -1
    if fam == "tile_load":
        t = writes[0]
        row[ex.RP_KIND] = ex.RK_LOAD
        row[ex.RP_SLOT] = int(code[pc, C_AUX])
        row[ex.RP_DBASE], row[ex.RP_DPITCH] = t.base, t.pitch
        row[ex.RP_SIZE] = t.rows * t.cols
    elif fam == "tile_store":
        to = int(code[pc, C_DTYPE])
        row[ex.RP_KIND] = ex.RK_STORE
        row[ex.RP_STMODE] = int(sim.enc.imm[pc, named["mode"]])      # a compile-time constant
        row[ex.RP_SLOT] = int(code[pc, C_AUX])
        row[ex.RP_SBASE], row[ex.RP_SPITCH] = data.base, data.pitch
        quant = row[ex.RP_STMODE] & QUANT          # a quantizing store reads the Acc's values
        row[ex.RP_CONV] = -1 if to == data.buf.dtype.code or quant else to
        row[ex.RP_SIZE] = data.rows * data.cols
        put(("scale",))                            # TSTORE_ACC's quant scale (run time), or -1
        if "fp" in view:                           # TSTORE_FP's Scaling tile: its quant words
            row[ex.RP_BBASE] = view["fp"].base
    elif fam == "tile_move" and "pos" in named:          # TIMG2COL (isa/45_conv.toml)
        d, s = writes[0], view["src"]
        row[ex.RP_KIND] = ex.RK_IMG2COL
        row[ex.RP_SBASE], row[ex.RP_SPITCH] = s.base, s.pitch
        row[ex.RP_DBASE], row[ex.RP_DPITCH] = d.base, d.pitch
        row[ex.RP_SIZE] = d.rows * d.cols
        put(("pos", "fmatrix", "pads", "conv"))
    elif fam == "tile_move":
        d, s = writes[0], view["src"]
        row[ex.RP_KIND] = ex.RK_MOVE
        row[ex.RP_SBASE], row[ex.RP_SPITCH] = s.base, s.pitch
        row[ex.RP_DBASE], row[ex.RP_DPITCH] = d.base, d.pitch
        row[ex.RP_CONV] = d.buf.dtype.code if d.buf.dtype != s.buf.dtype else -1
        row[ex.RP_SIZE] = d.rows * d.cols
        put(("row", "col"))
    elif fam == "tile_mma":
        c, a, b, bias = writes[0], view["a"], view["b"], view.get("bias")
        row[ex.RP_KIND] = ex.RK_MMA
        row[ex.RP_SBASE], row[ex.RP_SPITCH] = a.base, a.pitch
        row[ex.RP_BBASE], row[ex.RP_BPITCH] = b.base, b.pitch
        row[ex.RP_DBASE], row[ex.RP_DPITCH] = c.base, c.pitch
        row[ex.RP_BIAS] = bias.base if bias is not None else 0
        row[ex.RP_INIT] = INIT_ACC if spec.reads_dst else INIT_BIAS if bias is not None else INIT_ZERO
        row[ex.RP_CONV] = c.buf.dtype.code
        row[ex.RP_SIZE] = c.rows * c.cols
        put(("m", "n", "k"))
    else:
        lo, hi = writes[0].words()
        row[ex.RP_LO], row[ex.RP_HI] = lo, hi
        row[ex.RP_SIZE] = hi - lo
        if fam == "tile_alu" and "mode" in named:                   # TCVT
            row[ex.RP_KIND] = ex.RK_CVT
            put(("dst", "src", "n", "mode", "cols", "dpitch", "apitch", "bpitch"))
        elif fam == "tile_alu":
            first = next((n for n in ("a", "src", "base") if n in named), "dst")   # TEXPANDS: dst
            second = next((n for n in ("b", "exp") if n in named), "-")
            row[ex.RP_KIND] = ex.RK_ELEM
            # a row form's pitches (isa/30_tiles.toml): TEXPANDS' first operand is dst's
            put(("dst", first, second, "n", "cols", "dpitch", "apitch" if first != "dst" else "dpitch",
                 "bpitch"))
            if "scalar" in named:
                row[ex.RP_USE], row[ex.RP_SCJ] = 1, named["scalar"]
        else:                    # a family one kernel runs (its descriptor's args)
            operands = kernel_operands(fam)
            row[ex.RP_KIND] = ex.RK_FAMILY + KERNEL_FAMILIES.index(fam)
            put(operands.ints)
            if operands.real in named:
                row[ex.RP_SCJ] = named[operands.real]
            row[ex.RP_USE] = operands.has in named
            if "init" in layout.roles.args:
                rf[pc] = reduction_identity(spec.init)


def event_order(ex, lg, before=None) -> np.ndarray:
    """The positions of the n logged operations' events in SimPy's order (k < n: entry k's
    read at its start; k >= n: entry k - n's write at its completion): by cycle, events at one
    cycle in the order the SimPy model created them (dispatch order, a read before its write);
    ``before``: only the events before that cycle."""
    n = len(lg)
    times = np.concatenate([lg[:, ex.LG_START], lg[:, ex.LG_COMPLETE]])
    seqs = np.concatenate([2 * np.arange(n), 2 * np.arange(n) + 1])
    order = np.lexsort((seqs, times))
    if before is not None:
        order = order[times[order] < before]
    return np.ascontiguousarray(order, np.int64)


def replay_values(sim, ex, lg, vals, rp, rf, rr, local_words, n_blocks, before=None):
    """Replay the n logged operations' values on sim's HBM: reads at their starts, writes at
    their completions, in event_order; ``before``: only the events before that cycle (a launch
    stopped at its cycle limit)."""
    replay_events(sim, ex, lg, vals, (rp, rf, rr), local_words, n_blocks,
                  event_order(ex, lg, before), sim.hbm)


def replay_events(sim, ex, lg, vals, table, local_words, n_blocks, order, hbm, keep=False):
    """Replay the events at the positions ``order`` (event_order's, or a prefix of it) on the
    HBM bytes ``hbm``; returns (mem, mem_row): mem[mem_row[block], side] is a block's unit
    memory (side 0 the AIC's and AIV0's words, 1 the AIV1's; mem_row -1: none). ``keep``:
    no block's memory is freed when its last write is done (the debugger reads them after);
    otherwise finished blocks' memories are reused and only running blocks' stay readable."""
    rp, rf, rr = table
    n = len(lg)
    left = np.bincount(lg[:, ex.LG_BLOCK], minlength=n_blocks).astype(np.int64) + (1 if keep else 0)
    size = int(rp[:, ex.RP_SIZE].max())
    mma = rp[:, ex.RP_KIND] == ex.RK_MMA
    # a matmul's operands gathered from pitched rows: m x k within a, k x n within b, m x n
    # within c; its A @ B (sums), a row of zeros (no start), matmul_bounds' row and column bounds
    A, B = _operand_buffers(sim, mma)
    start = np.empty(max([1] + rp[mma, ex.RP_SIZE].tolist()))
    sums = np.empty_like(start)
    zrow, rowabs, colmax = np.zeros(MAX_MKN), np.empty(MAX_MKN), np.empty(MAX_MKN)
    pend = np.empty((8, size))
    free_p = np.arange(8, dtype=np.int64)
    rows = _rows_needed(order, n, lg[:, ex.LG_BLOCK], n_blocks)
    mem = np.zeros((rows, 2, max(local_words, 1)))          # pages untouched stay unmapped
    free_m = np.arange(rows, dtype=np.int64)
    row_used = np.zeros(rows, np.int8)
    zr = _written_words(rp, ex)
    mem_row = np.full(n_blocks, -1, np.int64)
    pend_of = np.zeros(n, np.int64)
    saved = np.empty(size)
    rs = np.zeros(ex.N_RS, np.int64)
    rs[ex.RS_FREE_P], rs[ex.RS_FREE_M] = len(free_p), len(free_m)
    defer = np.zeros(n, np.int8)
    ex.replay_deferrable(order, n, lg, rp, rr, sim.tbase, defer)
    blas_min = BLAS_MIN_PRODUCTS if getattr(sim, "blas", False) and hasattr(ex, "matmul_round") else 0
    while True:
        status = ex.aicore_replay(order, n, lg, vals, rp, rf, hbm, sim.tbase, mem, mem_row, left,
                                  pend, pend_of, free_p, free_m, row_used, zr, saved, A, B, start, zrow,
                                  sums, rowabs, colmax, blas_min, defer, rs)
        if status == ex.RS_DONE:
            return mem, mem_row
        if status == ex.RS_FAULT:                 # a kernel refused an operand (an index)
            i = int(rs[ex.RS_I])
            pc, g = int(lg[i, ex.LG_PC]), int(lg[i, ex.LG_G])
            raise index_fault_error(sim, pc, vals[i], g % 3, block_coords(int(lg[i, ex.LG_BLOCK]), sim.grid),
                                    int(rs[ex.RS_FAULT_AT]), mem[int(rs[ex.RS_ROW]), int(rs[ex.RS_SIDE])])
        if status == ex.RS_BLAS:
            _blas_product(ex, rs, mem, A, B, sums)
        elif status == ex.RS_GROW_PEND:
            extra = len(pend)
            pend = np.concatenate([pend, np.empty((extra, size))])
            free_p = np.concatenate([free_p, np.zeros(extra, np.int64)])
            free_p[:extra] = np.arange(extra, 2 * extra)
            rs[ex.RS_FREE_P] = extra
        else:                                                         # RS_GROW_MEM
            extra = len(mem)
            mem = np.concatenate([mem, np.zeros_like(mem)])
            row_used = np.concatenate([row_used, np.zeros(extra, np.int8)])
            free_m = np.concatenate([free_m, np.zeros(extra, np.int64)])
            free_m[:extra] = np.arange(extra, 2 * extra)
            rs[ex.RS_FREE_M] = extra


def _blas_product(ex, rs, mem, A, B, sums):
    """The A @ B the loop asked for (RS_BLAS) into sums, from A and B where the loop found them
    (words of the block's memory, or its gathered copies); the loop rounds it when called again."""
    state = rs.tolist()                   # Python ints at once (this runs once per matmul)
    m, n, k, a, b = (state[j] for j in (ex.RS_M, ex.RS_N, ex.RS_K, ex.RS_A, ex.RS_B))
    l1 = mem[state[ex.RS_ROW], state[ex.RS_SIDE]]
    a_words = l1[a:a + m * k] if a >= 0 else A[:m * k]
    b_words = l1[b:b + k * n] if b >= 0 else B[:k * n]
    np.matmul(a_words.reshape(m, k), b_words.reshape(k, n), out=sums[:m * n].reshape(m, n))
    rs[ex.RS_READY] = state[ex.RS_I] + 1


def _rows_needed(order, n, block_of, n_blocks):
    """The most blocks whose memories are in use at one time as the loop walks order: a
    block's from its first event to its last (the write after which aicore_replay frees it).
    The loop still grows the pool (RS_GROW_MEM) should a launch stopped early need more."""
    pos = np.arange(len(order))
    blocks = block_of[np.where(order >= n, order - n, order)]
    first = np.full(n_blocks, len(order), np.int64)
    last = np.full(n_blocks, -1, np.int64)
    np.minimum.at(first, blocks, pos)
    np.maximum.at(last, blocks, pos)
    seen = last >= 0
    delta = np.zeros(len(order) + 1, np.int64)
    np.add.at(delta, first[seen], 1)
    np.add.at(delta, last[seen] + 1, -1)
    return max(1, int(np.cumsum(delta).max(initial=0)))


def _operand_buffers(sim, mma):
    """Dense buffers for the largest a (m x k) and b (k x n) of the launch's matmuls."""
    sizes_a, sizes_b = [1], [1]
    for pc in np.nonzero(mma)[0].tolist():
        view = layout_of(sim, pc).tiles[0]
        sizes_a.append(view["a"].rows * view["a"].cols)
        sizes_b.append(view["b"].rows * view["b"].cols)
    return np.empty(max(sizes_a)), np.empty(max(sizes_b))


def _written_words(rp, ex):
    """The [lo, hi) ranges of unit memory any operation writes, merged (a reused block memory
    is zeroed there only: nothing writes elsewhere, so the rest stays zero)."""
    pairs = (rp[:, [ex.RP_WLO, ex.RP_WHI]].tolist() + rp[:, [ex.RP_LO2, ex.RP_HI2]].tolist()
             + rp[:, [ex.RP_LO3, ex.RP_HI3]].tolist() + rp[:, [ex.RP_LO4, ex.RP_HI4]].tolist())
    spans = sorted((int(lo), int(hi)) for lo, hi in pairs if hi > lo)
    merged = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return np.array(merged or [[0, 0]], np.int64).reshape(-1, 2)
