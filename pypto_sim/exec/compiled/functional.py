"""Functional-only execution (no timing): a whole warp runs inside numba until it reaches a
block barrier or exits, by lane.py's execute and the tile kernels (tiles.py); run by
pypto_sim.exec.functional.

state = [pc, active mask, exited mask, stack depth, warp-instructions executed]
stack[k] = [kind (0 if, 1 loop), saved mask, other/broken, continued, else/cont pc, end pc,
            in else]
Returns RUN_EXIT, RUN_BARRIER, RUN_FAULT (info as the lane executor sets it), RUN_TILE_FAULT
(info[0] = pc), RUN_BUDGET (instruction budget spent: a kernel that does not end) or RUN_FLAG
(a warp's wait_flag with no set_flag of its pipes and event before it in the block: the timing
model's deadlock). flags counts each (src pipe, dst pipe, event)'s set_flags not yet waited for.
"""
import numpy as np
from numba import njit

from .isa_constants import (C_AUX, C_DTYPE, C_OP, C_SRC, F_ATOMIC, F_CONTROL, F_FMA_STORE, F_STORE, F_SYNC,
                            FAMILY, ITEMSIZE, OP_BARRIER_BLOCK, OP_BARRIER_BLOCK_AND, OP_BARRIER_BLOCK_COUNT,
                            OP_BARRIER_BLOCK_OR, OP_BREAK, OP_BRK_UNLESS, OP_CONTINUE, OP_ELSE, OP_ENDIF,
                            OP_ENDLOOP, OP_IF, OP_LOOP, OP_LOOP_CONT, OP_RET, OP_SET_FLAG, OP_STORE_L1,
                            OP_WAIT_FLAG, REDUCE_INIT, TILE_DIMS, TILE_KIND, TK_BINARY, TK_COL_EXPAND,
                            TK_COL_EXPAND_OP, TK_COL_REDUCE, TK_CONVERT, TK_EXPAND, TK_EXPAND_OP, TK_FILL, TK_LOAD,
                            TK_MMA, TK_NONE, TK_REDUCE, TK_SCALAR, TK_STORE, TK_UNARY)
from .jit_options import NO_REFCOUNT
from .scalars import ST_OK
from .gm_bytes import init_set
from .gm_layout import ND, gm_window
from .lane_ops import pred_bits
from .simt import vote_count, write_vote
from .reductions import tile_col_reduce, tile_row_reduce
from .tiles import (tile_col_expand, tile_col_expand_op, tile_convert, tile_elementwise, tile_load, tile_mma,
                    tile_row_expand, tile_row_expand_op, tile_store)
from .lane import commit_gm, commit_store, execute

RUN_EXIT = 0
RUN_BARRIER = 1
RUN_FAULT = 2
RUN_TILE_FAULT = 3
RUN_BUDGET = 4
RUN_FLAG = 5
FLAG_IDS = 8          # pipes and event ids a flag names (isa PIPES; events 0..7)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _innermost_loop(stack, sp):
    for k in range(sp - 1, -1, -1):
        if stack[k, 0] == 1:
            return k
    return -1


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _push(stack, state, kind, saved, other, target, end):
    """Open an IF (kind 0: other = lanes waiting for ELSE) or a LOOP (kind 1) frame."""
    sp = state[3]
    stack[sp, 0] = kind
    stack[sp, 1] = saved
    stack[sp, 2] = other
    stack[sp, 3] = 0
    stack[sp, 4] = target
    stack[sp, 5] = end
    stack[sp, 6] = 0
    state[3] = sp + 1


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _pop(stack, state, pc):
    """Close the top frame (ENDIF, or ENDLOOP with no lane left): restore its mask less the
    lanes that returned or left the enclosing loop; return the next pc."""
    sp = state[3] - 1
    state[3] = sp
    m = stack[sp, 1] & ~state[2]
    k = _innermost_loop(stack, sp)
    if k >= 0:
        m &= ~(stack[k, 2] | stack[k, 3])
    state[1] = m
    return pc + 1 if m else _escape(stack, sp)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _escape(stack, sp):
    """Where a warp with no active lane goes: the next point that may reactivate some."""
    if sp == 0:
        return -1
    k = sp - 1
    if stack[k, 0] == 0:
        return stack[k, 5] if stack[k, 6] == 1 else stack[k, 4]
    return stack[k, 4]


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _leave(stack, sp, state, lanes, how, pc):
    mask = state[1]
    if how == 0 or how == 1:
        k = _innermost_loop(stack, sp)
        if how == 0:
            stack[k, 2] |= lanes
        else:
            stack[k, 3] |= lanes
    else:
        state[2] |= lanes
    mask &= ~lanes
    state[1] = mask
    return pc + 1 if mask else _escape(stack, sp)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def start_warp(state, lanes, w):
    """A warp's state before its first instruction: pc 0, its lanes active (a block's last
    warp may be partial), none exited, an empty mask stack, nothing executed."""
    here = min(32, lanes - w * 32)
    state[0] = 0
    state[1] = 0xFFFFFFFF if here == 32 else (1 << here) - 1
    state[2] = 0
    state[3] = 0
    state[4] = 0


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def control_step(pc, op, code, imm, regs, state, stack):
    """Execute control instruction pc (opcode op) for a warp: update its active mask and mask
    stack (state, stack as above); return the next pc, -1 when the warp is done. Shared by
    the functional runner and the compiled timing loop (timing/warp_control.py is the same
    for the SimPy model)."""
    mask = state[1]
    sp = state[3]
    if op == OP_IF:
        taken = pred_bits(code, imm, regs, pc, 0, mask)
        _push(stack, state, 0, mask, mask & ~taken, code[pc, C_AUX], code[pc, C_AUX + 1])
        state[1] = taken
        return pc + 1 if taken else code[pc, C_AUX]
    if op == OP_ELSE:
        stack[sp - 1, 6] = 1
        state[1] = stack[sp - 1, 2]
        return pc + 1 if state[1] else stack[sp - 1, 5]
    if op == OP_ENDIF:
        return _pop(stack, state, pc)
    if op == OP_LOOP:
        _push(stack, state, 1, mask, 0, code[pc, C_AUX], code[pc, C_AUX + 1])
        return pc + 1
    if op == OP_BRK_UNLESS:
        return _leave(stack, sp, state, mask & ~pred_bits(code, imm, regs, pc, 0, mask), 0, pc)
    if op == OP_BREAK:
        return _leave(stack, sp, state, mask, 0, pc)
    if op == OP_CONTINUE:
        return _leave(stack, sp, state, mask, 1, pc)
    if op == OP_RET:
        return _leave(stack, sp, state, mask, 2, pc)
    if op == OP_LOOP_CONT:
        k = sp - 1
        m = (mask | stack[k, 3]) & ~state[2] & ~stack[k, 2]
        stack[k, 3] = 0
        state[1] = m
        return pc + 1 if m else stack[k, 5] - 1
    if op == OP_ENDLOOP:
        k = sp - 1
        remaining = stack[k, 1] & ~stack[k, 2] & ~state[2]
        if remaining:
            state[1] = remaining
            return code[pc, C_AUX]
        return _pop(stack, state, pc)
    return -1                                       # EXIT


@njit(cache=True, error_model="numpy")
def _tile_value(code, imm, regs, pc, j):
    r = code[pc, C_SRC + j]
    return imm[pc, j] if r < 0 else regs[r, 0]


# a tile transfer's fault (info[1] < 0; >= 0: the tile operand outside its buffer): no rows or
# columns (info[2:4] = rows, cols), a stride shorter than a row (rows, cols, stride), past its tensor
# (info[2:7] = rows, cols, stride, first element, tensor slot)
TF_EMPTY, TF_STRIDE, TF_TENSOR = -1, -2, -3


@njit(cache=True, error_model="numpy")
def _in_buffer(spans, base, extent):
    """Whether the extent words from L1 word base lie in one copy of one alloc_local buffer:
    spans[i] = (first word, last word + 1, words a copy), as exec/aicore_tiles.buffer_spans."""
    if extent <= 0:
        return False
    for i in range(spans.shape[0]):
        lo, hi, count = spans[i, 0], spans[i, 1], spans[i, 2]
        if lo <= base < hi:
            return base + extent <= lo + ((base - lo) // count + 1) * count
    return False


@njit(cache=True, error_model="numpy")
def _tile_size(op, v, j, size):
    """Whether value operand j of lane tile instruction op is a tile operand (isa_codes.tile_dims); if
    so, size = its shape operands' values (1 for an absent second) and the words it covers: their
    product, or 0 when one is zero or negative (two negative sizes multiply to a positive count)."""
    p0, p1 = TILE_DIMS[op, j, 0], TILE_DIMS[op, j, 1]
    if p0 < 0:
        return False
    size[0] = np.int64(v[p0])
    size[1] = np.int64(v[p1]) if p1 >= 0 else 1
    size[2] = size[0] * size[1] if size[0] > 0 and size[1] > 0 else 0
    return True


@njit(cache=True, error_model="numpy")
def _run_tile(pc, code, imm, regs, hbm, hbm_init, tbase, tcount, l1, spans, info):
    """Execute a tile instruction at once (program order is a valid order without timing),
    after checking each tile operand lies in its alloc_local buffer (a fault: info = pc, the
    operand, its first word, its extent and its shape operands' values; a transfer's other faults: pc,
    TF_*, two values)."""
    op = code[pc, C_OP]
    kind = TILE_KIND[op]
    dt = code[pc, C_DTYPE]
    v = np.empty(6, np.float64)
    for j in range(6):
        v[j] = _tile_value(code, imm, regs, pc, j)
    info[0] = pc
    if kind == TK_LOAD or kind == TK_STORE:      # the timing model's order of checks
        rows, cols, stride = np.int64(v[2]), np.int64(v[3]), np.int64(v[4])
        if rows <= 0 or cols <= 0:
            info[1], info[2], info[3] = TF_EMPTY, rows, cols
            return 1
        if gm_window(ND, rows, cols, stride, 1)[0] == 0:
            info[1], info[2], info[3], info[4] = TF_STRIDE, rows, cols, stride
            return 1
    size = np.empty(3, np.int64)
    for j in range(6):          # a fault: info[1:6] = the operand, its first word, its words, its sizes
        if _tile_size(op, v, j, size) and not _in_buffer(spans, np.int64(v[j]), size[2]):
            info[1] = j
            info[2] = np.int64(v[j])
            info[3] = size[2]
            info[4] = size[0]
            info[5] = size[1]
            return 1
    if kind == TK_LOAD or kind == TK_STORE:
        slot = code[pc, C_AUX]
        t_j = 0 if kind == TK_LOAD else 1
        h_j = 1 - t_j
        rows, cols, stride = np.int64(v[2]), np.int64(v[3]), np.int64(v[4])
        off = np.int64(v[h_j])
        tile = np.int64(v[t_j])
        last = off + (rows - 1) * stride + cols
        if off < 0 or last > tcount[slot]:
            info[1], info[2], info[3], info[4], info[5], info[6] = TF_TENSOR, rows, cols, stride, off, slot
            return 1
        item = ITEMSIZE[dt]
        if kind == TK_LOAD:
            tile_load(l1, tile, hbm, tbase[slot] + off * item, rows, cols, stride, dt)
        else:
            tile_store(hbm, tbase[slot] + off * item, l1, tile, rows, cols, stride, dt)
            for r in range(rows):
                for c in range(cols):
                    init_set(hbm_init, tbase[slot] + (off + r * stride + c) * item)
        return 0
    if kind == TK_MMA:
        m, n, k = np.int64(v[3]), np.int64(v[4]), np.int64(v[5])
        tile_mma(l1, np.int64(v[0]), np.int64(v[1]), np.int64(v[2]), m, n, k, dt)
        return 0
    if kind == TK_BINARY:
        tile_elementwise(op, l1, np.int64(v[0]), np.int64(v[1]), np.int64(v[2]), 0.0, False, np.int64(v[3]), dt)
    elif kind == TK_UNARY:
        tile_elementwise(op, l1, np.int64(v[0]), np.int64(v[1]), -1, 0.0, False, np.int64(v[2]), dt)
    elif kind == TK_SCALAR:
        tile_elementwise(op, l1, np.int64(v[0]), np.int64(v[1]), -1, v[2], True, np.int64(v[3]), dt)
    elif kind == TK_FILL:
        tile_elementwise(op, l1, np.int64(v[0]), np.int64(v[0]), -1, v[1], True, np.int64(v[2]), dt)
    elif kind == TK_REDUCE:
        tile_row_reduce(op, l1, np.int64(v[0]), np.int64(v[1]), np.int64(v[2]), np.int64(v[3]),
                        REDUCE_INIT[op], dt)
    elif kind == TK_EXPAND:
        tile_row_expand(l1, np.int64(v[0]), np.int64(v[1]), np.int64(v[2]), np.int64(v[3]))
    elif kind == TK_COL_EXPAND:
        tile_col_expand(l1, np.int64(v[0]), np.int64(v[1]), np.int64(v[2]), np.int64(v[3]))
    elif kind == TK_COL_REDUCE:
        tile_col_reduce(op, l1, np.int64(v[0]), np.int64(v[1]), np.int64(v[2]), np.int64(v[3]),
                        REDUCE_INIT[op], dt)
    elif kind == TK_COL_EXPAND_OP:
        tile_col_expand_op(op, l1, np.int64(v[0]), np.int64(v[1]), np.int64(v[2]), np.int64(v[3]),
                           np.int64(v[4]), 0, 0, dt)          # the article's tiles are dense
    elif kind == TK_CONVERT:
        tile_convert(l1, np.int64(v[0]), np.int64(v[1]), np.int64(v[3]), dt, np.int64(v[2]))
    elif kind == TK_EXPAND_OP:
        tile_row_expand_op(op, l1, np.int64(v[0]), np.int64(v[1]), np.int64(v[2]), np.int64(v[3]),
                           np.int64(v[4]), 0, 0, dt)          # the article's tiles are dense
    return 0


@njit(cache=True, error_model="numpy")
def run_warp(code, imm, regs, state, stack, ctx, hbm, hbm_init, tbase, tcount, tbytes, l1,
             sector, pend_idx, pend_val, info, leader, budget, vote, spans, flags):
    """Run one warp functionally from state until a block barrier, the end, a fault or the
    budget. Stores land at once; tile instructions run at once, on the leader warp only."""
    pc = state[0]
    while True:
        if budget <= 0:
            state[0] = pc
            return RUN_BUDGET
        budget -= 1
        state[4] += 1
        op = code[pc, C_OP]
        fam = FAMILY[op]
        mask = state[1]
        if fam == F_CONTROL:
            pc = control_step(pc, op, code, imm, regs, state, stack)
            if pc < 0:
                state[0] = pc
                return RUN_EXIT
            continue
        if fam == F_SYNC:
            if op == OP_BARRIER_BLOCK or op == OP_BARRIER_BLOCK_COUNT or op == OP_BARRIER_BLOCK_AND \
                    or op == OP_BARRIER_BLOCK_OR:
                if op != OP_BARRIER_BLOCK:      # a voting barrier: this warp's contribution
                    vc, vl = vote_count(pc, code, imm, regs, mask)
                    vote[0] += vc
                    vote[1] += vl
                state[0] = pc + 1
                return RUN_BARRIER
            pc += 1
            continue
        if op == OP_SET_FLAG or op == OP_WAIT_FLAG:    # every warp's, as the timing model counts
            key = (code[pc, C_AUX] * FLAG_IDS + code[pc, C_AUX + 1]) * FLAG_IDS + code[pc, C_AUX + 2]
            if op == OP_SET_FLAG:
                flags[key] += 1
            elif flags[key] == 0:
                state[0] = pc
                return RUN_FLAG
            else:
                flags[key] -= 1
        if TILE_KIND[op] != TK_NONE:
            if leader and _run_tile(pc, code, imm, regs, hbm, hbm_init, tbase, tcount, l1, spans, info):
                state[0] = pc
                return RUN_TILE_FAULT
            pc += 1
            continue
        status = execute(pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector,
                         pend_idx, pend_val, info)
        if status != ST_OK:
            state[0] = pc
            return RUN_FAULT
        if fam == F_ATOMIC and code[pc, C_AUX + 2] == 1:
            for q in range(info[4]):
                init_set(hbm_init, pend_idx[q])
        if fam == F_STORE or fam == F_FMA_STORE:
            n = info[4]
            if op == OP_STORE_L1:
                commit_store(l1, pend_idx, pend_val, n)
            else:
                commit_gm(hbm, pend_idx, pend_val, n, code[pc, C_DTYPE])
                for q in range(n):
                    init_set(hbm_init, pend_idx[q])
        pc += 1


@njit(cache=True, error_model="numpy")
def run_grid(code, imm, seed_regs, grid, block, hbm, hbm_init, tbase, tcount, tbytes,
             local_words, depth, budget, b_first, b_end, out, spans):
    """Run blocks b_first..b_end-1 of the grid functionally, warps round-robin between block
    barriers (the caller runs the grid in slices, so Ctrl-C and progress get a word in).

    out = [status, block id, warp, pc, warp-instructions executed, info[0..6]] where status
    is RUN_EXIT (all done), RUN_FAULT / RUN_TILE_FAULT / RUN_BUDGET, or RUN_BARRIER for a
    block barrier some warps never reach (a deadlock)."""
    lanes = block[0] * block[1] * block[2]
    n_warps = (lanes + 31) // 32
    n_blocks = grid[0] * grid[1] * grid[2]
    n_regs = seed_regs.shape[0]
    regs = np.empty((n_warps, n_regs, 32), np.float64)
    states = np.zeros((n_warps, 5), np.int64)
    stacks = np.zeros((n_warps, depth, 7), np.int64)
    at_barrier = np.zeros(n_warps, np.int64)
    ctx = np.zeros(10, np.int64)
    info = np.zeros(8, np.int64)
    pend_idx = np.zeros(32, np.int64)
    pend_val = np.zeros(32, np.float64)
    l1 = np.zeros(max(local_words, 1), np.float64)
    vote = np.zeros(2, np.int64)              # voting barriers: lanes with pred, lanes
    flags = np.zeros(FLAG_IDS ** 3, np.int64)
    executed = 0
    for b in range(b_first, min(b_end, n_blocks)):
        l1[:] = 0.0
        flags[:] = 0
        for w in range(n_warps):
            regs[w, :, :] = seed_regs
            start_warp(states[w], lanes, w)
            at_barrier[w] = 1
        ctx[0] = b % grid[0]
        ctx[1] = (b // grid[0]) % grid[1]
        ctx[2] = b // (grid[0] * grid[1])
        for k in range(3):
            ctx[3 + k] = block[k]
            ctx[6 + k] = grid[k]
        waiting = n_warps
        while waiting > 0:
            waiting = 0
            finished = 0
            for w in range(n_warps):
                if at_barrier[w] == 0:
                    continue
                ctx[9] = w
                before = states[w, 4]
                status = run_warp(code, imm, regs[w], states[w], stacks[w], ctx, hbm, hbm_init,
                                  tbase, tcount, tbytes, l1, 0, pend_idx, pend_val, info, w == 0,
                                  budget - before, vote, spans, flags)
                executed += states[w, 4] - before
                if status == RUN_BARRIER:
                    waiting += 1
                elif status == RUN_EXIT:
                    at_barrier[w] = 0
                    finished += 1
                else:
                    out[0] = status
                    out[1] = b
                    out[2] = w
                    out[3] = states[w, 0]
                    out[4] = executed
                    for q in range(7):             # a fault's details (exec/functional.py reads them)
                        out[5 + q] = info[q]
                    return
            if waiting == n_warps and (vote[0] != 0 or vote[1] != 0):
                # every warp is at the barrier: hand out a voting barrier's block totals
                for w in range(n_warps):
                    bpc = states[w, 0] - 1
                    if code[bpc, C_OP] != OP_BARRIER_BLOCK:
                        write_vote(bpc, code, regs[w], states[w, 1], vote[0], vote[1])
                vote[0] = 0
                vote[1] = 0
            if waiting > 0 and waiting != n_warps:
                for w in range(n_warps):
                    if at_barrier[w] == 1:
                        out[0] = RUN_BARRIER
                        out[1] = b
                        out[2] = w
                        out[3] = states[w, 0] - 1
                        out[4] = executed
                        return
    out[0] = RUN_EXIT
    out[4] = executed
