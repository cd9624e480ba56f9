"""A warp's operands and lanes: reading an operand per lane, active lanes, predicates, the ALU and
id families, faults, sectors and the traffic an access makes, a tensor's region.
"""
import numpy as np
from numba import njit

from .isa_constants import (C_AUX, C_DST, C_DTYPE, C_OP, C_SRC, C_UNIFORM, OP_BLOCK_DIM, OP_BLOCK_ID,
                            OP_GLOBAL_ID, OP_GRID_DIM, OP_LANE_ID, OP_LOCAL_ID)
from .jit_options import NO_REFCOUNT
from .scalars import ST_OK, ST_OOB
from .alu import alu_lanes

@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def operand(code, imm, regs, pc, j, lane):
    """Lane lane's value of instruction pc's operand j: its register's word, or the immediate."""
    r = code[pc, C_SRC + j]
    if r < 0:
        return imm[pc, j]
    return regs[r, lane]


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def lane_active(mask, lane):
    """1 if lane is in mask, else 0."""
    return (mask >> lane) & 1


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def pred_bits(code, imm, regs, pc, j, mask):
    """Bitmask of the lanes in mask whose operand j is true (non-zero)."""
    out = 0
    for lane in range(32):
        if lane_active(mask, lane) and operand(code, imm, regs, pc, j, lane) != 0.0:
            out |= 1 << lane
    return out


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def exec_alu(pc, code, imm, regs, mask):
    """ALU family: the generated alu_lanes has one lane loop per opcode (no per-lane switch)."""
    return alu_lanes(code[pc, C_OP], code[pc, C_AUX], code[pc, C_DST], code[pc, C_DTYPE],
                     code[pc, C_UNIFORM] == 1, mask, code[pc, C_SRC], code[pc, C_SRC + 1],
                     code[pc, C_SRC + 2], imm[pc, 0], imm[pc, 1], imm[pc, 2], regs)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def exec_id(pc, code, regs, mask, ctx):
    """The id family (global and local ids, block id and size, grid size, lane and warp id):
    each active lane's value from the block context ctx."""
    op = code[pc, C_OP]
    d = code[pc, C_DST]
    dim = code[pc, C_AUX]
    bdx = ctx[3]
    bdy = ctx[4]
    warp = ctx[9]
    every = code[pc, C_UNIFORM] == 1
    one_d = ctx[4] == 1 and ctx[5] == 1     # 1-D blocks: the local id is the linear id
    for lane in range(32):
        if not every and not lane_active(mask, lane):
            continue
        lin = warp * 32 + lane
        if dim == 0:
            local = lin if one_d else lin % bdx
        elif dim == 1:
            local = (lin // bdx) % bdy
        else:
            local = lin // (bdx * bdy)
        if op == OP_GLOBAL_ID:
            v = ctx[dim] * ctx[3 + dim] + local
        elif op == OP_LOCAL_ID:
            v = local
        elif op == OP_BLOCK_ID:
            v = ctx[dim]
        elif op == OP_BLOCK_DIM:
            v = ctx[3 + dim]
        elif op == OP_GRID_DIM:
            v = ctx[6 + dim]
        elif op == OP_LANE_ID:
            v = lane
        else:
            v = warp
        regs[d, lane] = np.float64(v)
    return ST_OK


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def fault(info, lane, off, count):
    """Record an out-of-bounds access (lane, element offset, tensor count) in info; ST_OOB."""
    info[0] = lane
    info[1] = off
    info[2] = count
    return ST_OOB


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def count_sectors(addrs, n, sector):
    """Distinct sector-sized blocks touched by the n accessed byte addresses (memory
    transactions).

    Lanes usually access ascending addresses: then the distinct sectors are the changes of
    sector along the lanes (linear); otherwise compare every pair."""
    ascending = True
    for k in range(1, n):
        if addrs[k] < addrs[k - 1]:
            ascending = False
            break
    sectors = 0
    if ascending:
        last = -1
        for k in range(n):
            s = addrs[k] // sector
            if s != last:
                sectors += 1
                last = s
        return sectors
    for k in range(n):
        s = addrs[k] // sector
        seen = False
        for j in range(k):
            if addrs[j] // sector == s:
                seen = True
                break
        if not seen:
            sectors += 1
    return sectors


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def traffic(info, addrs, n, to_hbm, item, sector):
    """Record a lane access's lanes (info[4]) and bytes moved (info[3]): whole sectors for HBM
    (addrs: byte addresses), elements for L1. Returns ST_OK."""
    info[4] = n
    if to_hbm:
        info[3] = count_sectors(addrs, n, sector) * sector
    else:
        info[3] = n * item
    return ST_OK


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def region(pc, code, tbase, tcount, to_hbm):
    """(base, element count) of the memory a lane access of pc may touch: the tensor in its
    slot (HBM; base is its byte address), or the alloc_local buffer named by aux (L1; base is
    its first word)."""
    if to_hbm:
        slot = code[pc, C_AUX]
        return tbase[slot], tcount[slot]
    return code[pc, C_AUX], code[pc, C_AUX + 1]
