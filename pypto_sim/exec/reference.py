"""The reference lane executor: the living specification of what one PTO instruction does.

Plain Python and numpy, written to be obviously correct rather than fast. The numba executor
(``pypto_sim.exec.lane``) is an optimisation of this module and must agree with it bit for bit:
``tests/test_executor_differential.py`` runs both, instruction by instruction, on random inputs.
When they disagree, this file says what is right (or it is this file that gets fixed, on purpose).

``execute`` has exactly the numba executor's signature and effects:

* registers are float64[n_regs, 32]; every word holds a value of its dtype exactly;
* HBM is bytes (uint8), each element in its dtype's little-endian bytes at byte address
  tbase[slot] + offset * itemsize (read and written with exec/gm.py's load / store, the twins
  of the numba executor's gm_load / gm_store); L1 is float64 words;
* source j of instruction pc is register ``code[pc, C_SRC + j]``, or ``imm[pc, j]`` when that is -1;
* an instruction acts on the lanes set in ``mask``, in lane order; a uniform instruction
  (``C_UNIFORM == 1``) computes its register result in all 32 lanes (memory is still read and
  written for the active lanes only);
* every result is rounded to the instruction's dtype (``C_DTYPE``) with numpy's own conversions:
  float32 and float16 round to nearest even, float to int32 truncates toward zero and saturates
  (NaN gives 0), bool is ``x != 0``;
* ALU semantics are the ISA table's ``float`` expression (operands as float64, result rounded)
  or, when ``code[pc, C_AUX] == 1``, its ``int`` expression (operands as Python ints, result
  wrapped to int32, then converted to the dtype), or when it is 2, its ``int`` expression on
  int64 values: an int64's register word is its bits (``dtypes.word_of``), its result wraps
  to int64;
* status is ST_OK, or ST_OOB with info[0..2] = faulting lane, offset, element count.
"""
from __future__ import annotations

import math

from .. import dtypes
from . import gm
from ..ir.program import C_AUX, C_DST, C_DTYPE, C_OP, C_SRC, C_UNIFORM, INT_SEM_INT32, INT_SEM_INT64
from ..isa import load_isa
# the tile kernels by the numba executor's names: a simulation takes this module as its
# executor module (executor_module=), tile kernels and all
from .reference_tiles import TILE_FAMILY_KERNELS as _TILE_FAMILY_KERNELS, TILE_KERNELS as _TILE_KERNELS
from .reference_gm_index import GM_INDEX_KERNELS, gm_index_fault
from .reference_values import tile_store_quant_words

# the indexed GM transfers' kernels (reference_gm_index.py) and TSTORE_FP's quantization
# (reference_values.py) beside reference_tiles.py's
TILE_KERNELS = {**_TILE_KERNELS, **{k.__name__: k for k in GM_INDEX_KERNELS.values()},
                gm_index_fault.__name__: gm_index_fault, tile_store_quant_words.__name__: tile_store_quant_words}
TILE_FAMILY_KERNELS = {**_TILE_FAMILY_KERNELS, **GM_INDEX_KERNELS}

from .reference_values import cast_word, evaluate, to_dtype, wrap_int32

# the executor module's names (a simulation can take this module as its executor module)
__all__ = ["ST_OK", "ST_OOB", "ITEMSIZE", "L1_OPS", "lanes", "is_active", "source", "exec_alu",
           "id_value", "exec_id", "region", "address", "read", "write", "bytes_moved", "fault",
           "exec_load", "gather_store", "exec_fma_store", "exec_atomic", "exec_local", "exec_check",
           "same_word", "warp_vote", "exec_warp", "vote_count", "write_vote", "execute",
           "FAMILY_HANDLERS", "commit_store", "commit_gm", "forward_store", "pred_bits",
           "TILE_FAMILY_KERNELS", "TILE_KERNELS", *TILE_KERNELS]
# every tile kernel under its own name, as the numba executor module has it
globals().update(TILE_KERNELS)

ST_OK = 0
ST_OOB = 1
ITEMSIZE = {d.code: d.itemsize for d in dtypes.ALL}
L1_OPS = ("LOAD_L1", "STORE_L1")        # lane memory on the block's L1; the rest go to HBM


def lanes(mask, everyone=False):
    """The lanes an instruction acts on, in order: those set in mask, or all 32 if everyone."""
    return [lane for lane in range(32) if everyone or (mask >> lane) & 1]


def is_active(mask, lane):
    """True when lane is set in mask."""
    return bool((mask >> lane) & 1)


def source(code, imm, regs, pc, j, lane):
    """Source operand j of instruction pc in lane: its register, or the immediate if that is -1."""
    r = int(code[pc, C_SRC + j])
    return float(imm[pc, j]) if r < 0 else float(regs[r, lane])


def exec_alu(spec, pc, code, imm, regs, mask):
    """ALU family: dst = spec's semantics of sources 0..2, for the active (or, uniform, all) lanes.
    INT_SEM_INT64 reads each source word as an int64 (its bits) and writes an int64 result as
    its bits; CAST converts by cast_word."""
    d, dt = int(code[pc, C_DST]), int(code[pc, C_DTYPE])
    int_sem = int(code[pc, C_AUX])
    for lane in lanes(mask, code[pc, C_UNIFORM] == 1):
        a, b, c = (source(code, imm, regs, pc, j, lane) for j in range(3))
        if spec.name == "CAST":
            regs[d, lane] = cast_word(dt, a, int_sem)
        elif int_sem == INT_SEM_INT64:
            a, b, c = (dtypes.value_of(w, dtypes.int64) for w in (a, b, c))
            r = evaluate(spec, a, b, c, int_sem, dt)
            regs[d, lane] = dtypes.word_of(r, dtypes.BY_CODE[dt]) if dt == dtypes.int64.code else float(r)
        else:
            regs[d, lane] = to_dtype(dt, evaluate(spec, a, b, c, int_sem == INT_SEM_INT32, dt))
    return ST_OK


def id_value(name, dim, ctx, lane):
    """The value of ID instruction name along dim in lane, from ctx (see ``execute``)."""
    block, bdim, grid, warp = ctx[0:3], ctx[3:6], ctx[6:9], int(ctx[9])
    linear = warp * 32 + lane                       # the lane's linear index in its block
    local = (linear % bdim[0], linear // bdim[0] % bdim[1], linear // (bdim[0] * bdim[1]))
    values = {"GLOBAL_ID": lambda: block[dim] * bdim[dim] + local[dim],
              "LOCAL_ID": lambda: local[dim], "BLOCK_ID": lambda: block[dim],
              "BLOCK_DIM": lambda: bdim[dim], "GRID_DIM": lambda: grid[dim],
              "LANE_ID": lambda: lane, "WARP_ID": lambda: warp}
    return int(values[name]())


def exec_id(spec, pc, code, regs, mask, ctx):
    """ID family: dst = the lane's id value along dim = aux0, for the active (or all) lanes."""
    d, dim = int(code[pc, C_DST]), int(code[pc, C_AUX])
    ctx = [int(v) for v in ctx]
    for lane in lanes(mask, code[pc, C_UNIFORM] == 1):
        regs[d, lane] = float(id_value(spec.name, dim, ctx, lane))
    return ST_OK


def region(spec, pc, code, tbase, tcount, tbytes):
    """Where a lane-memory instruction's pointer points: (to_hbm, base, count, byte address).

    HBM: aux0 is the tensor slot, base its byte address. L1: aux0 is the first word in l1 (the
    base) and aux1 the element count.
    """
    if spec.name in L1_OPS:
        return False, int(code[pc, C_AUX]), int(code[pc, C_AUX + 1]), 0
    slot = int(code[pc, C_AUX])
    return True, int(tbase[slot]), int(tcount[slot]), int(tbytes[slot])


def address(to_hbm, base, off, item):
    """The address of element off: an HBM byte address, or an L1 word index."""
    return base + off * item if to_hbm else base + off


def read(mem, to_hbm, addr, dt):
    """The value at an address: decoded from HBM bytes, or an L1 word."""
    return float(gm.load(mem, [addr], dtypes.BY_CODE[dt])[0]) if to_hbm else float(mem[addr])


def write(mem, to_hbm, addr, dt, value):
    """Write a value of dtype dt at an address (HBM: its bytes; L1: the word)."""
    if to_hbm:
        gm.store(mem, [addr], dtypes.BY_CODE[dt], [value])
    else:
        mem[addr] = value


def bytes_moved(to_hbm, byte_addrs, item, sector):
    """HBM: distinct sector-sized blocks touched, times sector. L1: lanes times itemsize."""
    if to_hbm:
        return len({addr // sector for addr in byte_addrs}) * sector
    return len(byte_addrs) * item


def fault(info, lane, off, count):
    """Record an out-of-bounds access in info[0..2] and return ST_OOB."""
    info[0], info[1], info[2] = lane, off, count
    return ST_OOB


def exec_load(spec, pc, code, imm, regs, mask, hbm, tbase, tcount, tbytes, l1, sector, info,
              pend_idx=None):
    """Load family: dst = mem[base + offset (source 0)]; info[3] bytes moved, info[4] lanes;
    pend_idx[k] = the address the k-th active lane read (the sanitizers use it).

    The first active lane out of bounds faults. A uniform load fills all 32 lanes but only
    the active lanes count as traffic, and inactive lanes out of bounds are skipped.
    """
    d, dt = int(code[pc, C_DST]), int(code[pc, C_DTYPE])
    item = ITEMSIZE[dt]
    to_hbm, base, count, byte0 = region(spec, pc, code, tbase, tcount, tbytes)
    mem = hbm if to_hbm else l1
    touched = []
    for lane in lanes(mask, code[pc, C_UNIFORM] == 1):
        off = int(source(code, imm, regs, pc, 0, lane))
        if not 0 <= off < count:
            if is_active(mask, lane):
                return fault(info, lane, off, count)
            continue
        regs[d, lane] = read(mem, to_hbm, address(to_hbm, base, off, item), dt)
        if is_active(mask, lane):
            if pend_idx is not None:
                pend_idx[len(touched)] = address(to_hbm, base, off, item)
            touched.append(byte0 + off * item)
    info[4] = len(touched)
    info[3] = bytes_moved(to_hbm, touched, item, sector)
    return ST_OK


def gather_store(spec, pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx,
                 pend_val, info, value_reg=None):
    """Store family: gather (address, value rounded to dtype) pairs for the active lanes, in
    order.

    The value is source 1, or register value_reg (FMA_STORE). Nothing is written to memory:
    the caller commits info[4] pairs with ``commit_gm`` (HBM) or ``commit_store`` (L1). A fault
    leaves info[4] = pairs so far.
    """
    dt = int(code[pc, C_DTYPE])
    item = ITEMSIZE[dt]
    to_hbm, base, count, byte0 = region(spec, pc, code, tbase, tcount, tbytes)
    touched = []
    for lane in lanes(mask):
        off = int(source(code, imm, regs, pc, 0, lane))
        if not 0 <= off < count:
            info[4] = len(touched)
            return fault(info, lane, off, count)
        value = source(code, imm, regs, pc, 1, lane) if value_reg is None else regs[value_reg, lane]
        pend_idx[len(touched)] = address(to_hbm, base, off, item)
        pend_val[len(touched)] = to_dtype(dt, value)
        touched.append(byte0 + off * item)
    info[4] = len(touched)
    info[3] = bytes_moved(to_hbm, touched, item, sector)
    return ST_OK


def exec_fma_store(spec, pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx,
                   pend_val, info):
    """FMA_STORE: dst = x*y + z (sources 1..3; int semantics if aux1 == 1), then store dst to
    the pointer (tensor slot aux0, offset source 0) like STORE."""
    d, dt = int(code[pc, C_DST]), int(code[pc, C_DTYPE])
    int_sem = code[pc, C_AUX + 1] == 1
    for lane in lanes(mask, code[pc, C_UNIFORM] == 1):
        a, b, c = (source(code, imm, regs, pc, j, lane) for j in (1, 2, 3))
        regs[d, lane] = to_dtype(dt, evaluate(spec, a, b, c, int_sem, dt))
    return gather_store(spec, pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx,
                        pend_val, info, value_reg=d)


def exec_atomic(spec, pc, code, imm, regs, mask, hbm, tbase, tcount, tbytes, l1, sector,
                pend_idx, info):
    """Atomic family: for each active lane in order, old = mem[addr]; mem[addr] = the table's
    expression of (old, source 1, source 2) rounded to dtype (int32, uint32: integer semantics);
    dst = old. aux2 = 1 for HBM (aux0 the tensor slot), 0 for L1 (aux0 base, aux1 count)."""
    d, dt = int(code[pc, C_DST]), int(code[pc, C_DTYPE])
    item = ITEMSIZE[dt]
    if int(code[pc, C_AUX + 2]) == 1:
        slot = int(code[pc, C_AUX])
        mem, base, count, byte0, to_hbm = hbm, int(tbase[slot]), int(tcount[slot]), int(tbytes[slot]), True
    else:
        mem, base, count, byte0, to_hbm = l1, int(code[pc, C_AUX]), int(code[pc, C_AUX + 1]), 0, False
    is_int = dt in (dtypes.int32.code, dtypes.uint32.code)
    touched = []
    for lane in lanes(mask):
        off = int(source(code, imm, regs, pc, 0, lane))
        if not 0 <= off < count:
            return fault(info, lane, off, count)
        addr = address(to_hbm, base, off, item)
        old = read(mem, to_hbm, addr, dt)
        b, c = source(code, imm, regs, pc, 1, lane), source(code, imm, regs, pc, 2, lane)
        if dt == dtypes.int64.code:      # the words' int64 values; the result's bits
            values = (dtypes.value_of(w, dtypes.int64) for w in (old, b, c))
            new = dtypes.word_of(evaluate(spec, *values, INT_SEM_INT64, dt), dtypes.int64)
        else:
            new = to_dtype(dt, evaluate(spec, old, b, c, is_int, dt))
        write(mem, to_hbm, addr, dt, new)
        regs[d, lane] = old
        pend_idx[len(touched)] = addr
        touched.append(byte0 + off * item)
    info[4] = len(touched)
    info[3] = bytes_moved(to_hbm, touched, item, sector)
    return ST_OK


def exec_local(spec, pc, code, imm, regs, mask, info):
    """Local arrays: element (operand 0) of each active lane's array (aux0 first slot, aux1
    length); LOCAL_LOAD reads it to dst, LOCAL_STORE writes operand 1 rounded to the dtype.
    Any active lane's index outside the array faults before anything is written."""
    d, dt = int(code[pc, C_DST]), int(code[pc, C_DTYPE])
    base, n = int(code[pc, C_AUX]), int(code[pc, C_AUX + 1])
    active = lanes(mask)
    for lane in active:
        k = int(source(code, imm, regs, pc, 0, lane))
        if not 0 <= k < n:
            return fault(info, lane, k, n)
    for lane in active:
        k = int(source(code, imm, regs, pc, 0, lane))
        if spec.name == "LOCAL_LOAD":
            regs[d, lane] = regs[base + k, lane]
        else:
            regs[base + k, lane] = to_dtype(dt, source(code, imm, regs, pc, 1, lane))
    return ST_OK


def exec_check(spec, pc, code, imm, regs, mask, info):
    """CHECK: each active lane's operand 0 must lie in [operand 1, operand 2]; the first lane
    whose does not faults (info: lane, value, lo, hi)."""
    for lane in lanes(mask):
        v, lo, hi = (int(source(code, imm, regs, pc, j, lane)) for j in range(3))
        if not lo <= v <= hi:
            info[3] = hi
            return fault(info, lane, v, lo)
    return ST_OK


def same_word(a, b):
    """Match equality: equal values, NaN matching NaN, -0.0 not matching 0.0 (CUDA compares
    bit patterns)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def warp_vote(name, pc, code, imm, regs, mask, lane):
    """Lane's vote, ballot or match over its group: the active lanes in its mask operand
    (operand 1; -1 = every lane)."""
    group = int(mask) & (int(source(code, imm, regs, pc, 1, lane)) & 0xFFFFFFFF)
    if name in ("MATCH_ANY", "MATCH_ALL"):
        x = source(code, imm, regs, pc, 0, lane)
        bits = sum(1 << k for k in lanes(group) if same_word(source(code, imm, regs, pc, 0, k), x))
        if name == "MATCH_ALL":
            bits = group if bits == group else 0
        return float(wrap_int32(bits))
    bits = pred_bits(code, imm, regs, pc, 0, group)
    return {"VOTE_ALL": float(bits == group), "VOTE_ANY": float(bits != 0),
            "VOTE_EQ": float(bits in (0, group)), "BALLOT": float(wrap_int32(bits))}[name]


def exec_warp(spec, pc, code, imm, regs, mask, scratch=None):
    """Warp family: shuffles (source lane from operand 1; outside 0..31: the lane's own);
    votes, ballots and matches over each lane's group (warp_vote). Every lane's result is
    computed before any is written; active lanes receive theirs."""
    d = int(code[pc, C_DST])
    active = lanes(mask, code[pc, C_UNIFORM] == 1)      # a uniform result fills all lanes
    out = {}
    for lane in range(32):
        if spec.name in ("VOTE_ALL", "VOTE_ANY", "VOTE_EQ", "BALLOT", "MATCH_ANY", "MATCH_ALL"):
            out[lane] = warp_vote(spec.name, pc, code, imm, regs, mask, lane)
            continue
        k = int(source(code, imm, regs, pc, 1, lane))
        src = {"SHFL_IDX": k % 32, "SHFL_UP": lane - k, "SHFL_DOWN": lane + k,
               "SHFL_XOR": lane ^ k}[spec.name]
        if not 0 <= src < 32:
            src = lane
        out[lane] = source(code, imm, regs, pc, 0, src)
    for lane in active:
        regs[d, lane] = out[lane]
    if scratch is not None:                  # the numba executor's scratch words, mirrored
        scratch[:] = [out[lane] for lane in range(32)]
    return ST_OK


def vote_count(pc, code, imm, regs, mask):
    """A voting block barrier's contribution of one warp: (active lanes whose predicate holds,
    active lanes)."""
    return bin(pred_bits(code, imm, regs, pc, 0, mask)).count("1"), bin(int(mask)).count("1")


def write_vote(pc, code, regs, mask, count, n_lanes):
    """A voting block barrier's result in the warp's active lanes (all 32 if uniform): the
    block's count, or whether it equals the block's active lanes (AND), or is non-zero (OR)."""
    name = load_isa().by_opcode[int(code[pc, C_OP])].name
    value = {"BARRIER_BLOCK_COUNT": float(count), "BARRIER_BLOCK_AND": float(count == n_lanes),
             "BARRIER_BLOCK_OR": float(count > 0)}[name]
    for lane in lanes(mask, code[pc, C_UNIFORM] == 1):
        regs[int(code[pc, C_DST]), lane] = value
    return ST_OK


def execute(pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector, pend_idx,
            pend_val, info):
    """Execute instruction pc for the warp's active lanes (mask). Returns a status code.

    Dispatches on the ISA table's family of the opcode. Stores only gather: the caller commits
    pend_idx/pend_val (info[4] pairs) at completion. alloc, sync and control instructions are
    the timing model's business and do nothing here.
    """
    spec = load_isa().by_opcode[int(code[pc, C_OP])]
    handler = FAMILY_HANDLERS.get(spec.family)
    if handler is None:
        return ST_OK
    return handler(spec, pc, code, imm, regs, int(mask), ctx, hbm, tbase, tcount, tbytes, l1,
                   int(sector), pend_idx, pend_val, info)


# family -> handler, with one uniform calling convention; families absent here (alloc, sync,
# control) have no effect on values
FAMILY_HANDLERS = {
    "alu": lambda spec, pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector,
    pend_idx, pend_val, info: exec_alu(spec, pc, code, imm, regs, mask),
    "id": lambda spec, pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector,
    pend_idx, pend_val, info: exec_id(spec, pc, code, regs, mask, ctx),
    "load": lambda spec, pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector,
    pend_idx, pend_val, info: exec_load(spec, pc, code, imm, regs, mask, hbm, tbase, tcount,
                                        tbytes, l1, sector, info, pend_idx),
    "store": lambda spec, pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector,
    pend_idx, pend_val, info: gather_store(spec, pc, code, imm, regs, mask, tbase, tcount, tbytes,
                                           sector, pend_idx, pend_val, info),
    "fma_store": lambda spec, pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1,
    sector, pend_idx, pend_val, info: exec_fma_store(spec, pc, code, imm, regs, mask, tbase,
                                                     tcount, tbytes, sector, pend_idx, pend_val,
                                                     info),
    "atomic": lambda spec, pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector,
    pend_idx, pend_val, info: exec_atomic(spec, pc, code, imm, regs, mask, hbm, tbase, tcount,
                                          tbytes, l1, sector, pend_idx, info),
    "local": lambda spec, pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector,
    pend_idx, pend_val, info: exec_local(spec, pc, code, imm, regs, mask, info),
    "check": lambda spec, pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector,
    pend_idx, pend_val, info: exec_check(spec, pc, code, imm, regs, mask, info),
    "warp": lambda spec, pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector,
    pend_idx, pend_val, info: exec_warp(spec, pc, code, imm, regs, mask, pend_val),
}


def commit_store(mem, pend_idx, pend_val, n):
    """Make a gathered store to L1 visible: write its first n (word, value) pairs in order."""
    for k in range(int(n)):
        mem[pend_idx[k]] = pend_val[k]


def commit_gm(hbm, pend_idx, pend_val, n, dt):
    """Make a gathered store to HBM visible: its first n (byte address, value) pairs, values
    of dtype dt, in order."""
    for k in range(int(n)):
        gm.store(hbm, [int(pend_idx[k])], dtypes.BY_CODE[int(dt)], [pend_val[k]])


def forward_store(pc, code, regs, mask, read_idx, n_read, s_idx, s_val, slot, n):
    """A load sees its own warp's store still in flight: each lane whose word (read_idx, one
    per active lane; one word for all lanes of a uniform load) the store writes takes the
    value of the store's last pair for that word."""
    if n_read == 0:
        return 0
    stored = {int(w): float(v) for w, v in zip(s_idx[slot, :n], s_val[slot, :n])}  # last wins
    d = int(code[pc, C_DST])
    every = int(code[pc, C_UNIFORM]) == 1
    active = lanes(mask)
    targets = [(lane, int(read_idx[0])) for lane in range(32)] if every else \
        [(lane, int(read_idx[k])) for k, lane in enumerate(active[:int(n_read)])]
    for lane, word in targets:
        if word in stored:
            regs[d, lane] = stored[word]
    return 0


def pred_bits(code, imm, regs, pc, j, mask):
    """Bitmask of the lanes in mask whose source j is true (non-zero): IF, BRK_UNLESS."""
    out = 0
    for lane in lanes(int(mask)):
        if source(code, imm, regs, pc, j, lane) != 0.0:
            out |= 1 << lane
    return out
