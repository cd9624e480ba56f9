"""The lane executor's SIMT families: atomics, warp shuffles and votes, voting block
barriers and per-lane local arrays (isa/25_simt.toml). They use lane_ops.py's helpers
(operand, region, fault, traffic), scalars.py's round_to and the generated alu_float /
alu_int; lane.py's ``execute`` dispatches to them.
"""
import numpy as np
from numba import njit

from .isa_constants import (BOUNDS_CHECK, C_AUX, C_DST, C_DTYPE, C_OP, C_SRC, C_UNIFORM, DT_INT32, DT_INT64,
                            DT_UINT32, ITEMSIZE, OP_BALLOT, OP_BARRIER_BLOCK_AND, OP_BARRIER_BLOCK_COUNT,
                            OP_LOCAL_LOAD, OP_MATCH_ALL, OP_MATCH_ANY, OP_SHFL_DOWN, OP_SHFL_IDX, OP_SHFL_UP,
                            OP_VOTE_ALL, OP_VOTE_ANY, OP_VOTE_EQ)
from .jit_options import NO_REFCOUNT
from .scalars import bits_f64, f64_bits, round_to, ST_OK, wrap_i32
from .alu import alu_float, alu_int
from .gm_bytes import gm_load, gm_store
from .lane_ops import fault, lane_active, operand, pred_bits, region, traffic

@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def exec_atomic(pc, code, imm, regs, mask, hbm, tbase, tcount, tbytes, l1, sector, pend_idx, info):
    """Atomic family: per active lane, in lane order, read the word, write op(old, operands),
    return old in dst. The effect is immediate (the caller decides when the atomic issues);
    pend_idx[k] receives the k-th active lane's address (HBM byte, L1 word). aux = (tensor
    slot, -, 1) for HBM, (buffer base, words, 0) for L1."""
    op = code[pc, C_OP]
    d = code[pc, C_DST]
    dt = code[pc, C_DTYPE]
    to_hbm = code[pc, C_AUX + 2] == 1
    base, count = region(pc, code, tbase, tcount, to_hbm)
    item = ITEMSIZE[dt]
    n = 0
    for lane in range(32):
        if not lane_active(mask, lane):
            continue
        off = np.int64(operand(code, imm, regs, pc, 0, lane))
        if BOUNDS_CHECK and (off < 0 or off >= count):
            return fault(info, lane, off, count)
        w = base + off * item if to_hbm else base + off
        b = operand(code, imm, regs, pc, 1, lane)
        c = operand(code, imm, regs, pc, 2, lane)
        old = gm_load(hbm, w, dt) if to_hbm else l1[w]
        if dt == DT_INT32 or dt == DT_UINT32:        # uint32: the int32 bits, modulo 2**32
            new = round_to(dt, np.float64(wrap_i32(alu_int(op, np.int64(old), np.int64(b), np.int64(c)))))
        elif dt == DT_INT64:                         # int64 words are their bits; int64 wraps
            new = bits_f64(np.int64(alu_int(op, f64_bits(old), f64_bits(b), f64_bits(c), 64)))
        else:
            new = round_to(dt, alu_float(op, old, b, c, dt))
        if to_hbm:
            gm_store(hbm, w, dt, new)
        else:
            l1[w] = new
        regs[d, lane] = old
        pend_idx[n] = w
        n += 1
    return traffic(info, pend_idx, n, to_hbm, item, sector)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def lane_group(code, imm, regs, pc, mask, lane):
    """The lanes a vote or match of this lane combines: the active lanes in its mask operand
    (operand 1, an int32 bit mask; -1 = every lane)."""
    return mask & (np.int64(operand(code, imm, regs, pc, 1, lane)) & 0xFFFFFFFF)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def same_word(a, b):
    """Match equality: equal values, NaN matching NaN, -0.0 not matching 0.0 (CUDA compares
    bit patterns)."""
    if a != a:
        return b != b
    return a == b and (a != 0.0 or np.copysign(1.0, a) == np.copysign(1.0, b))


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def warp_vote(op, code, imm, regs, pc, g, lane):
    """One lane's vote, match or ballot over the lanes g (lane_group)."""
    if op == OP_MATCH_ANY or op == OP_MATCH_ALL:
        x = operand(code, imm, regs, pc, 0, lane)
        bits = 0
        for k in range(32):
            if lane_active(g, k) and same_word(operand(code, imm, regs, pc, 0, k), x):
                bits |= 1 << k
        if op == OP_MATCH_ALL:
            bits = g if bits == g else 0
        return np.float64(wrap_i32(np.int64(bits)))
    bits = pred_bits(code, imm, regs, pc, 0, g)
    if op == OP_VOTE_ALL:
        return 1.0 if bits == g else 0.0
    if op == OP_VOTE_ANY:
        return 1.0 if bits != 0 else 0.0
    if op == OP_VOTE_EQ:
        return 1.0 if bits == 0 or bits == g else 0.0
    return np.float64(wrap_i32(np.int64(bits)))


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def exec_warp(pc, code, imm, regs, mask, scratch):
    """Warp family: shuffles read another lane's source register; votes, ballots and matches
    combine the lanes of each lane's group (the active lanes in its mask operand). Every result
    goes to scratch (32 words) before any is written, so dst may be a source."""
    op = code[pc, C_OP]
    d = code[pc, C_DST]
    every = code[pc, C_UNIFORM] == 1          # a uniform result fills all 32 lanes
    if op == OP_VOTE_ALL or op == OP_VOTE_ANY or op == OP_BALLOT or op == OP_VOTE_EQ \
            or op == OP_MATCH_ANY or op == OP_MATCH_ALL:
        # an immediate mask: one group, so a vote or ballot has one result (a match's depends
        # on the lane's own value)
        shared = code[pc, C_SRC + 1] < 0 and op != OP_MATCH_ANY and op != OP_MATCH_ALL
        v = 0.0
        if shared:
            v = warp_vote(op, code, imm, regs, pc, lane_group(code, imm, regs, pc, mask, 0), 0)
        for lane in range(32):
            scratch[lane] = v if shared else warp_vote(op, code, imm, regs, pc,
                                                       lane_group(code, imm, regs, pc, mask, lane), lane)
    else:
        r = code[pc, C_SRC]
        for lane in range(32):
            k = np.int64(operand(code, imm, regs, pc, 1, lane))
            if op == OP_SHFL_IDX:
                s = k & 31
            elif op == OP_SHFL_UP:
                s = lane - k
            elif op == OP_SHFL_DOWN:
                s = lane + k
            else:
                s = lane ^ k
            if s < 0 or s > 31:
                s = lane
            scratch[lane] = regs[r, s] if r >= 0 else imm[pc, 0]
    for lane in range(32):
        if every or lane_active(mask, lane):
            regs[d, lane] = scratch[lane]
    return ST_OK


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def exec_local(pc, code, imm, regs, mask, info):
    """Local-array family: element index (operand 0) of each active lane's array of aux1
    slots starting at slot aux0; LOCAL_LOAD reads it into dst, LOCAL_STORE writes operand 1
    (rounded to the dtype). An index outside the array faults (info: lane, index, length)."""
    op = code[pc, C_OP]
    d = code[pc, C_DST]
    dt = code[pc, C_DTYPE]
    base = code[pc, C_AUX]
    n = code[pc, C_AUX + 1]
    for lane in range(32):
        if not lane_active(mask, lane):
            continue
        k = np.int64(operand(code, imm, regs, pc, 0, lane))
        if k < 0 or k >= n:
            return fault(info, lane, k, n)
    for lane in range(32):
        if not lane_active(mask, lane):
            continue
        k = np.int64(operand(code, imm, regs, pc, 0, lane))
        if op == OP_LOCAL_LOAD:
            regs[d, lane] = regs[base + k, lane]
        else:
            regs[base + k, lane] = round_to(dt, operand(code, imm, regs, pc, 1, lane))
    return ST_OK


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def exec_check(pc, code, imm, regs, mask, info):
    """CHECK: each active lane's operand 0 must lie in [operand 1, operand 2]; the first lane
    whose does not faults (info: lane, value, lo, hi)."""
    for lane in range(32):
        if not lane_active(mask, lane):
            continue
        v = np.int64(operand(code, imm, regs, pc, 0, lane))
        lo = np.int64(operand(code, imm, regs, pc, 1, lane))
        hi = np.int64(operand(code, imm, regs, pc, 2, lane))
        if v < lo or v > hi:
            info[3] = hi
            return fault(info, lane, v, lo)
    return ST_OK


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def popcount(m):
    """Set bits of a 32-bit lane mask."""
    m = m & 0xFFFFFFFF
    m = m - ((m >> 1) & 0x55555555)
    m = (m & 0x33333333) + ((m >> 2) & 0x33333333)
    m = (m + (m >> 4)) & 0x0F0F0F0F
    return (m * 0x01010101 & 0xFFFFFFFF) >> 24


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def vote_count(pc, code, imm, regs, mask):
    """A voting block barrier's contribution of this warp: its active lanes whose predicate
    (operand 0) holds. Returns (count, active lanes)."""
    return popcount(pred_bits(code, imm, regs, pc, 0, mask)), popcount(mask)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def write_vote(pc, code, regs, mask, count, lanes):
    """A voting block barrier releases: dst = count (COUNT), count == lanes (AND) or
    count > 0 (OR), in the warp's active lanes (all 32 for a uniform dst)."""
    op = code[pc, C_OP]
    d = code[pc, C_DST]
    if op == OP_BARRIER_BLOCK_COUNT:
        v = np.float64(count)
    elif op == OP_BARRIER_BLOCK_AND:
        v = 1.0 if count == lanes else 0.0
    else:
        v = 1.0 if count > 0 else 0.0
    every = code[pc, C_UNIFORM] == 1
    for lane in range(32):
        if every or lane_active(mask, lane):
            regs[d, lane] = v
    return ST_OK
