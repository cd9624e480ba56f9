"""The numba lane executor: executes one instruction for one warp's lanes.

Its constants come from isa_constants (derived from the ISA table) and its ALU semantics from
alu (generated from the table's expressions); numba caches it under the hash of its source and
of everything it imports (exec/jit_cache.py), so an edit to the ISA or to any of them can never
run against stale compiled code.

State it works on (all numpy arrays, owned by the caller):
  regs   float64[n_regs, 32]  this warp's registers (lane slots, then uniform registers)
  hbm    uint8[bytes]         simulated HBM: each element in its dtype's little-endian bytes
                              (gm_load / gm_store; exec/gm.py is the numpy twin)
  l1     float64[words]       this block's alloc_local area
  tbase, tcount, tbytes       per tensor slot: byte address, element count, byte address
                              (GM is addressed by byte: element i at tbase + i * itemsize)
  ctx    int64[10]            block id xyz, block dim xyz, grid dim xyz, warp index in block
  pend_idx, pend_val          an access's (address, value) pairs, a store's committed later:
                              HBM byte address of the element's first byte, or L1 word index
  info   int64[8]             out: fault lane, offset, count; bytes moved; lanes touched
"""
import numpy as np
from numba import njit

from .isa_constants import (BOUNDS_CHECK, C_AUX, C_DST, C_DTYPE, C_OP, C_UNIFORM, F_ALU, F_ATOMIC, F_CHECK,
                            F_FMA_STORE, F_ID, F_LOAD, F_LOCAL, F_STORE, F_WARP, FAMILY, ITEMSIZE, OP_LOAD,
                            OP_STORE_L1)
from .jit_options import NO_REFCOUNT
from .scalars import round_to, ST_OK, wrap_i32
from .alu import alu_float, alu_int
from .gm_bytes import gm_load, gm_store
from .lane_ops import exec_alu, exec_id, fault, lane_active, operand, region, traffic
from .simt import exec_atomic, exec_check, exec_local, exec_warp

@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def exec_load(pc, code, imm, regs, mask, hbm, tbase, tcount, tbytes, l1, sector, pend_idx, info):
    """Load family; pend_idx[k] receives the address read by the k-th active lane (for checks):
    the element's first byte in HBM, its word in L1."""
    op = code[pc, C_OP]
    d = code[pc, C_DST]
    dt = code[pc, C_DTYPE]
    every = code[pc, C_UNIFORM] == 1
    to_hbm = op == OP_LOAD
    base, count = region(pc, code, tbase, tcount, to_hbm)
    item = ITEMSIZE[dt]
    n = 0
    for lane in range(32):
        if not every and not lane_active(mask, lane):
            continue
        off = np.int64(operand(code, imm, regs, pc, 0, lane))
        if BOUNDS_CHECK and (off < 0 or off >= count):
            if lane_active(mask, lane):
                return fault(info, lane, off, count)
            continue
        addr = base + off * item if to_hbm else base + off
        if lane_active(mask, lane):
            pend_idx[n] = addr
            n += 1
        if to_hbm:
            regs[d, lane] = gm_load(hbm, addr, dt)
        else:
            regs[d, lane] = l1[addr]
    return traffic(info, pend_idx, n, to_hbm, item, sector)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def forward_store(pc, code, regs, mask, read_idx, n_read, s_idx, s_val, slot, n):
    """A load sees its own warp's earlier store that is still in flight.

    read_idx[:n_read] are the addresses the load pc read, one per active lane of mask
    (exec_load's pend_idx); a lane whose address is among the store's n (address, value) pairs
    s_idx/s_val[slot] takes the stored value (the last pair for an address wins, as at commit).
    A uniform load read one address for every lane. Program order within a warp, as on hardware; other warps see the
    store only when it lands."""
    d = code[pc, C_DST]
    every = code[pc, C_UNIFORM] == 1
    if n_read == 0:
        return ST_OK
    k = 0
    for lane in range(32):
        active = lane_active(mask, lane)
        if not every and not active:
            continue
        if every:
            word = read_idx[0]
        else:
            if k >= n_read:
                break
            word = read_idx[k]
            k += 1
        for q in range(n - 1, -1, -1):
            if s_idx[slot, q] == word:
                regs[d, lane] = s_val[slot, q]
                break
    return ST_OK


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def gather_store(pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx, pend_val,
                 value_src, info):
    """Compute a store's (address, value) pairs now; the caller commits them at completion
    (HBM: commit_gm with the store's dtype; L1: commit_store)."""
    op = code[pc, C_OP]
    dt = code[pc, C_DTYPE]
    to_hbm = op != OP_STORE_L1
    base, count = region(pc, code, tbase, tcount, to_hbm)
    item = ITEMSIZE[dt]
    n = 0
    for lane in range(32):
        if not lane_active(mask, lane):
            continue
        off = np.int64(operand(code, imm, regs, pc, 0, lane))
        if BOUNDS_CHECK and (off < 0 or off >= count):
            info[4] = n
            return fault(info, lane, off, count)
        if value_src < 0:
            v = operand(code, imm, regs, pc, 1, lane)
        else:
            v = regs[value_src, lane]
        pend_idx[n] = base + off * item if to_hbm else base + off
        pend_val[n] = round_to(dt, v)
        n += 1
    return traffic(info, pend_idx, n, to_hbm, item, sector)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def commit_store(mem, pend_idx, pend_val, n):
    """Make a gathered store to L1 words visible."""
    for k in range(n):
        mem[pend_idx[k]] = pend_val[k]


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def commit_gm(hbm, pend_idx, pend_val, n, dt):
    """Make a gathered store to HBM visible: n values of dtype dt at byte addresses pend_idx."""
    for k in range(n):
        gm_store(hbm, pend_idx[k], dt, pend_val[k])


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def exec_fma_store(pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx, pend_val,
                   info):
    """The fused family (FMA_STORE): each active lane computes its ALU result into dst, then the
    store of it is gathered as gather_store does."""
    op = code[pc, C_OP]
    d = code[pc, C_DST]
    dt = code[pc, C_DTYPE]
    every = code[pc, C_UNIFORM] == 1
    for lane in range(32):
        if not every and not lane_active(mask, lane):
            continue
        a = operand(code, imm, regs, pc, 1, lane)
        b = operand(code, imm, regs, pc, 2, lane)
        c = operand(code, imm, regs, pc, 3, lane)
        if code[pc, C_AUX + 1] == 1:
            r = wrap_i32(alu_int(op, np.int64(a), np.int64(b), np.int64(c)))
            regs[d, lane] = round_to(dt, np.float64(r))
        else:
            regs[d, lane] = round_to(dt, alu_float(op, a, b, c, dt))
    return gather_store(pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx,
                        pend_val, d, info)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def execute(pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector, pend_idx,
            pend_val, info):
    """Execute instruction pc for the warp's active lanes (mask). Returns a status code.
    (GM bytes are read and written by gm_bytes.py's gm_load / gm_store; the atomic,
    warp and local families live in simt.py, the tile kernels in tiles.py.)

    Stores only gather: the caller commits pend_idx/pend_val (info[4] pairs) at completion.
    Control and sync instructions are the timing model's business and do nothing here.
    """
    fam = FAMILY[code[pc, C_OP]]
    if fam == F_ALU:
        return exec_alu(pc, code, imm, regs, mask)
    if fam == F_ID:
        return exec_id(pc, code, regs, mask, ctx)
    if fam == F_LOAD:
        return exec_load(pc, code, imm, regs, mask, hbm, tbase, tcount, tbytes, l1, sector, pend_idx,
                         info)
    if fam == F_STORE:
        return gather_store(pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx,
                            pend_val, -1, info)
    if fam == F_FMA_STORE:
        return exec_fma_store(pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx,
                              pend_val, info)
    if fam == F_WARP:
        return exec_warp(pc, code, imm, regs, mask, pend_val)
    if fam == F_LOCAL:
        return exec_local(pc, code, imm, regs, mask, info)
    if fam == F_CHECK:
        return exec_check(pc, code, imm, regs, mask, info)
    if fam == F_ATOMIC:
        return exec_atomic(pc, code, imm, regs, mask, hbm, tbase, tcount, tbytes, l1, sector,
                           pend_idx, info)
    return ST_OK


# ---------------------------------------------------------------- racecheck shadow memory
# shadow[word] = (writer, writer epoch, writer pc, writer cycle, writer lane,
#                 reader, reader epoch, reader pc, reader cycle, reader lane,
#                 other reader, its epoch, pc, cycle, lane); -1 = none.
# An accessor ("who") is block * 4096 + warp; block * 4096 + 4095 is the block's tile engine,
# whose epoch field holds the tile operation's sequence number instead. The readers: the last
# accessor that read the word, and before it another. A new reader N takes the first slot; the
# reader it displaces moves to the second unless a barrier_block() (or a wait_all()) ordered it
# before N, in which case the second keeps what it had: a write W that the displaced reader races
# with races with N too (W of another block than N's meets N across blocks; W of N's block comes
# after the barrier). So a write is checked against an unordered read by another accessor even
# when the writer read the word itself in between (one slot lost warp 1's read), or a read of
# another block came before a barrier of the writer's block (a most-recent-two rule lost that).
SHADOW_COLS = 15
WRITER, READER, OTHER_READER = 0, 5, 10

@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _unordered(prev, prev_epoch, who, block, epoch, seen_tiles):
    if prev < 0 or prev == who:
        return False
    if prev // 4096 != block:
        return True                      # different blocks: nothing orders them in a kernel
    if prev % 4096 == 4095:
        return prev_epoch >= seen_tiles  # a tile op this warp has not waited for (wait_all)
    return prev_epoch == epoch           # other warp of the block, no barrier_block between


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def race_check(shadow, idx, n, mask, is_write, who, block, epoch, seen_tiles, pc, cycle, report,
               shift):
    """Check and record n lane accesses (addresses idx[k] by the k-th active lane of mask; the
    shadow row of an address is idx[k] >> shift). Returns 1 at the first access that conflicts
    with an unordered earlier one (report = address, earlier was a write, earlier who, epoch,
    pc, cycle, lane, this lane): the writer, or for a write either of the two readers."""
    k = 0
    for lane in range(32):
        if not lane_active(mask, lane):
            continue
        if k >= n:
            break
        addr = idx[k]
        w = addr >> shift
        k += 1
        if _unordered(shadow[w, 0], shadow[w, 1], who, block, epoch, seen_tiles):
            report[0] = addr
            report[1] = 1
            for j in range(5):
                report[2 + j] = shadow[w, j]
            report[7] = lane
            return 1
        if is_write:
            for col in (READER, OTHER_READER):
                if _unordered(shadow[w, col], shadow[w, col + 1], who, block, epoch, seen_tiles):
                    report[0] = addr
                    report[1] = 0
                    for j in range(5):
                        report[2 + j] = shadow[w, col + j]
                    report[7] = lane
                    return 1
            _record(shadow, w, WRITER, who, epoch, pc, cycle, lane)
        else:
            last = shadow[w, READER]
            if last >= 0 and last != who and _unordered(last, shadow[w, READER + 1], who, block, epoch, seen_tiles):
                for j in range(5):
                    shadow[w, OTHER_READER + j] = shadow[w, READER + j]
            _record(shadow, w, READER, who, epoch, pc, cycle, lane)
    return 0


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _record(shadow, w, col, who, epoch, pc, cycle, lane):
    """Write one access (who, epoch, pc, cycle, lane) into shadow row w at column col."""
    shadow[w, col] = who
    shadow[w, col + 1] = epoch
    shadow[w, col + 2] = pc
    shadow[w, col + 3] = cycle
    shadow[w, col + 4] = lane
