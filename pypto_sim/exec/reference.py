"""The reference lane executor: the living specification of what one PTO instruction does.

Plain Python and numpy, written to be obviously correct rather than fast. The numba executor
(``pypto_sim.exec.lane``) is an optimisation of this module and must agree with it bit for bit:
``tests/test_executor_differential.py`` runs both, instruction by instruction, on random inputs.
When they disagree, this file says what is right (or it is this file that gets fixed, on purpose).

``execute`` has exactly the numba executor's signature and effects:

* registers are float64[n_regs, 32]; every word holds a value of its dtype exactly;
* source j of instruction pc is register ``code[pc, C_SRC + j]``, or ``imm[pc, j]`` when that is -1;
* an instruction acts on the lanes set in ``mask``, in lane order; a uniform instruction
  (``C_UNIFORM == 1``) computes its register result in all 32 lanes (memory is still read and
  written for the active lanes only);
* every result is rounded to the instruction's dtype (``C_DTYPE``) with numpy's own conversions:
  float32 and float16 round to nearest even, float to int32 truncates toward zero and saturates
  (NaN gives 0), bool is ``x != 0``;
* ALU semantics are the ISA table's ``float`` expression (operands as float64, result rounded)
  or, when ``code[pc, C_AUX] == 1``, its ``int`` expression (operands as Python ints, result
  wrapped to int32, then converted to the dtype);
* status is ST_OK, or ST_OOB with info[0..2] = faulting lane, offset, element count.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import dtypes
from ..ir.program import C_AUX, C_DST, C_DTYPE, C_OP, C_SRC, C_UNIFORM
from ..isa import load_isa

ST_OK = 0
ST_OOB = 1
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
ITEMSIZE = {d.code: d.itemsize for d in dtypes.ALL}
L1_OPS = ("LOAD_L1", "STORE_L1")        # lane memory on the block's L1; the rest go to HBM
def py_mod(a, b):
    """a % b for floats, exactly numpy's (npy_remainder): Python's sign convention."""
    with np.errstate(all="ignore"):
        return float(np.remainder(np.float64(a), np.float64(b)))


def py_floordiv(a, b):
    """a // b for floats, exactly numpy's (npy_floor_divide)."""
    with np.errstate(all="ignore"):
        return float(np.floor_divide(np.float64(a), np.float64(b)))


_EVAL_GLOBALS = {"__builtins__": {}, "np": np, "math": math, "abs": abs, "py_mod": py_mod,
                 "py_floordiv": py_floordiv}


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


def wrap_int32(v):
    """Wrap a Python int to int32 two's complement."""
    return (int(v) - INT32_MIN) % 2**32 + INT32_MIN


def to_dtype(dt, x):
    """Round the number x to a value of dtype code dt, returned as the float64 register word."""
    x = float(x)
    with np.errstate(all="ignore"):
        if dt == dtypes.float32.code:
            return float(np.float32(x))
        if dt == dtypes.float16.code:
            return float(np.float16(x))
        if dt == dtypes.bfloat16.code:
            return dtypes.round_bfloat16(x)
        if dt in (dtypes.int8.code, dtypes.uint8.code, dtypes.int16.code):
            d = dtypes.BY_CODE[dt]
            return 0.0 if math.isnan(x) else float(np.array(int(x)).astype(np.int64).astype(d.numpy))
        if dt in (dtypes.int64.code, dtypes.float64.code):
            return x
    if dt == dtypes.int32.code:
        if math.isnan(x):
            return 0.0
        return float(math.trunc(min(max(x, INT32_MIN), INT32_MAX)))   # saturate, truncate
    return 1.0 if x != 0 else 0.0


CVT_MODES = dtypes.CVT_MODES


def _neighbour(dt, v, up):
    """The next value of float dtype dt after v (a value of dt) toward +inf (up) or -inf."""
    if dt == dtypes.bfloat16.code:              # bfloat16 = the high half of a float32
        bits = int(np.float32(v).view(np.uint32)) >> 16
        bits += 1 if (up == (v >= 0)) and not (v == 0 and not up) else -1
        if v == 0:
            bits = 0x0001 if up else 0x8001
        return float(np.uint32(bits << 16).view(np.float32))
    t = np.float16 if dt == dtypes.float16.code else np.float32
    return float(np.nextafter(t(v), t(np.inf if up else -np.inf)))


def _last_bit(dt, v):
    """The last mantissa bit of v's encoding in float dtype dt."""
    if dt == dtypes.float16.code:
        return int(np.float16(v).view(np.uint16)) & 1
    bits = int(np.float32(v).view(np.uint32))
    return (bits >> 16) & 1 if dt == dtypes.bfloat16.code else bits & 1


def round_mode(dt, x, mode):
    """TCVT: x rounded to dtype code dt by mode (CVT_MODES), from dt's two neighbours of x."""
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return to_dtype(dt, x)
    name = CVT_MODES[int(mode)]
    if dt == dtypes.int32.code:
        lo, hi = math.floor(x), math.ceil(x)
        if lo == hi:
            return to_dtype(dt, x)
        pick = {"rint": hi if (x - lo > 0.5 or (x - lo == 0.5 and lo % 2)) else lo,
                "round": (hi if x > 0 else lo) if x - lo == 0.5 else (lo if x - lo < 0.5 else hi),
                "floor": lo, "ceil": hi, "trunc": lo if x > 0 else hi,
                "odd": lo if lo % 2 else hi}[name]
        return to_dtype(dt, pick)
    if name == "rint" or dt not in (dtypes.float32.code, dtypes.float16.code, dtypes.bfloat16.code):
        return to_dtype(dt, x)
    n = to_dtype(dt, x)                         # the nearest (even), maybe inf
    if n == x:
        return n
    lo, hi = (_neighbour(dt, n, False), n) if n > x else (n, _neighbour(dt, n, True))
    top = {dtypes.float16.code: 65504.0, dtypes.bfloat16.code: 3.3895313892515355e38}.get(
        dt, 3.4028234663852886e38)
    if name == "round":
        if math.isinf(lo) or math.isinf(hi):    # past the largest finite: inf from half an ulp on
            half = (top - _neighbour(dt, top, False)) / 2
            return math.copysign(math.inf if abs(x) >= top + half else top, x)
        d_lo, d_hi = x - lo, hi - x
        return (hi if x > 0 else lo) if d_lo == d_hi else (lo if d_lo < d_hi else hi)
    if name == "floor":
        return lo
    if name == "ceil":
        return hi
    if name == "trunc":
        return lo if x > 0 else hi
    if math.isinf(lo) or math.isinf(hi):        # odd: the largest finite (its last bit is 1)
        return math.copysign(top, x)
    return lo if _last_bit(dt, lo) else hi


def tile_convert(l1, dst, src, count, dt, mode):
    """TCVT: dst[e] = round_mode(dt, src[e], mode)."""
    l1[dst:dst + count] = [round_mode(dt, v, mode) for v in l1[src:src + count]]


@functools.lru_cache(maxsize=None)
def _compiled(text):
    return compile(text, "<isa expression>", "eval")


def evaluate(spec, a, b, c, int_sem):
    """One lane of spec's scalar semantics, unrounded: the table's int or float expression.

    An instruction without the requested expression has no defined result; like the numba
    executor it gives 0 (int) or NaN (float). The compiler never emits that.
    """
    if int_sem:
        if spec.int_expr is None:
            return 0
        env = {"a": int(a), "b": int(b), "c": int(c)}
        return wrap_int32(eval(_compiled(spec.int_expr), _EVAL_GLOBALS, env))
    if spec.float_expr is None:
        return math.nan
    env = {"a": np.float64(a), "b": np.float64(b), "c": np.float64(c)}
    with np.errstate(all="ignore"):
        return float(eval(_compiled(spec.float_expr), _EVAL_GLOBALS, env))


def exec_alu(spec, pc, code, imm, regs, mask):
    """ALU family: dst = spec's semantics of sources 0..2, for the active (or, uniform, all) lanes."""
    d, dt = int(code[pc, C_DST]), int(code[pc, C_DTYPE])
    int_sem = code[pc, C_AUX] == 1
    for lane in lanes(mask, code[pc, C_UNIFORM] == 1):
        a, b, c = (source(code, imm, regs, pc, j, lane) for j in range(3))
        regs[d, lane] = to_dtype(dt, evaluate(spec, a, b, c, int_sem))
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
    """Where a lane-memory instruction's pointer points: (to_hbm, first word, count, byte address).

    HBM: aux0 is the tensor slot. L1: aux0 is the first word in l1 and aux1 the element count.
    """
    if spec.name in L1_OPS:
        return False, int(code[pc, C_AUX]), int(code[pc, C_AUX + 1]), 0
    slot = int(code[pc, C_AUX])
    return True, int(tbase[slot]), int(tcount[slot]), int(tbytes[slot])


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
    pend_idx[k] = the word the k-th active lane read (the sanitizers use it).

    The first active lane out of bounds faults. A uniform load fills all 32 lanes but only
    the active lanes count as traffic, and inactive lanes out of bounds are skipped.
    """
    d, item = int(code[pc, C_DST]), ITEMSIZE[int(code[pc, C_DTYPE])]
    to_hbm, base, count, byte0 = region(spec, pc, code, tbase, tcount, tbytes)
    mem = hbm if to_hbm else l1
    touched = []
    for lane in lanes(mask, code[pc, C_UNIFORM] == 1):
        off = int(source(code, imm, regs, pc, 0, lane))
        if not 0 <= off < count:
            if is_active(mask, lane):
                return fault(info, lane, off, count)
            continue
        regs[d, lane] = mem[base + off]
        if is_active(mask, lane):
            if pend_idx is not None:
                pend_idx[len(touched)] = base + off
            touched.append(byte0 + off * item)
    info[4] = len(touched)
    info[3] = bytes_moved(to_hbm, touched, item, sector)
    return ST_OK


def gather_store(spec, pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx,
                 pend_val, info, value_reg=None):
    """Store family: gather (word, value rounded to dtype) pairs for the active lanes, in order.

    The value is source 1, or register value_reg (FMA_STORE). Nothing is written to memory:
    the caller commits info[4] pairs with ``commit_store``. A fault leaves info[4] = pairs so far.
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
        pend_idx[len(touched)] = base + off
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
        regs[d, lane] = to_dtype(dt, evaluate(spec, a, b, c, int_sem))
    return gather_store(spec, pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx,
                        pend_val, info, value_reg=d)


def exec_atomic(spec, pc, code, imm, regs, mask, hbm, tbase, tcount, tbytes, l1, sector,
                pend_idx, info):
    """Atomic family: for each active lane in order, old = mem[word]; mem[word] = the table's
    expression of (old, source 1, source 2) rounded to dtype (int32: integer semantics);
    dst = old. aux2 = 1 for HBM (aux0 the tensor slot), 0 for L1 (aux0 base, aux1 count)."""
    d, dt = int(code[pc, C_DST]), int(code[pc, C_DTYPE])
    item = ITEMSIZE[dt]
    if int(code[pc, C_AUX + 2]) == 1:
        slot = int(code[pc, C_AUX])
        mem, base, count, byte0, to_hbm = hbm, int(tbase[slot]), int(tcount[slot]), int(tbytes[slot]), True
    else:
        mem, base, count, byte0, to_hbm = l1, int(code[pc, C_AUX]), int(code[pc, C_AUX + 1]), 0, False
    is_int = dt == dtypes.int32.code
    touched = []
    for lane in lanes(mask):
        off = int(source(code, imm, regs, pc, 0, lane))
        if not 0 <= off < count:
            return fault(info, lane, off, count)
        old = mem[base + off]
        b, c = source(code, imm, regs, pc, 1, lane), source(code, imm, regs, pc, 2, lane)
        mem[base + off] = to_dtype(dt, evaluate(spec, old, b, c, is_int))
        regs[d, lane] = old
        pend_idx[len(touched)] = base + off
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


def exec_warp(spec, pc, code, imm, regs, mask, scratch=None):
    """Warp family: shuffles (source lane from operand 1; outside 0..31: the lane's own) and
    votes over the active lanes' predicates; active lanes receive the result."""
    d = int(code[pc, C_DST])
    active = lanes(mask, code[pc, C_UNIFORM] == 1)      # a uniform result fills all lanes
    if spec.name in ("VOTE_ALL", "VOTE_ANY", "BALLOT"):
        bits = pred_bits(code, imm, regs, pc, 0, mask)
        value = {"VOTE_ALL": float(bits == mask), "VOTE_ANY": float(bits != 0),
                 "BALLOT": float(wrap_int32(bits))}[spec.name]
        for lane in active:
            regs[d, lane] = value
        return ST_OK
    out = {}
    for lane in range(32):
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
    "warp": lambda spec, pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector,
    pend_idx, pend_val, info: exec_warp(spec, pc, code, imm, regs, mask, pend_val),
}


def commit_store(mem, pend_idx, pend_val, n):
    """Make a gathered store visible: write its first n (word, value) pairs in order."""
    for k in range(int(n)):
        mem[pend_idx[k]] = pend_val[k]


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


# ---------------------------------------------------------------- tile instructions
# The same signatures and effects as the numba executor's tile kernels; tiles are row-major
# runs of words in the block's L1 area.

def tile_load(l1, dst, hbm, src, rows, cols, stride):
    """async_load: rows x cols elements from HBM (row stride ``stride``) into a dense tile."""
    for r in range(rows):
        l1[dst + r * cols: dst + (r + 1) * cols] = hbm[src + r * stride: src + r * stride + cols]


def tile_store(hbm, dst, l1, src, rows, cols, stride, dt):
    """A dense rows x cols tile into HBM rows ``stride`` apart, each value rounded to dt."""
    for r in range(rows):
        for c in range(cols):
            hbm[dst + r * stride + c] = to_dtype(dt, l1[src + r * cols + c])


def tile_mma(l1, c_base, a_base, b_base, m, n, k, dt):
    """C[m,n] += A[m,k] @ B[k,n], accumulated in float64 in k order, each result rounded to dt."""
    a = l1[a_base:a_base + m * k].reshape(m, k)
    b = l1[b_base:b_base + k * n].reshape(k, n)
    c = l1[c_base:c_base + m * n].reshape(m, n).copy()
    for p in range(k):                       # the numba kernel's summation order, exactly
        c = c + np.outer(a[:, p], b[p, :])
    l1[c_base:c_base + m * n] = [to_dtype(dt, x) for x in c.reshape(-1)]


def tile_elementwise(op, l1, dst, a, b, scalar, use_scalar, count, dt):
    """dst[e] = the table's expression of (a[e], b[e] or scalar, dst[e]'s old value)."""
    spec = load_isa().by_opcode[int(op)]
    is_int = dt == dtypes.int32.code
    out = []
    for e in range(count):
        y = scalar if use_scalar else (l1[b + e] if b >= 0 else 0.0)
        old = float(l1[dst + e])
        c = old if not is_int else (old if math.isfinite(old) else 0.0)
        out.append(to_dtype(dt, evaluate(spec, l1[a + e], y, c, is_int)))
    l1[dst:dst + count] = out


def tile_row_reduce(op, l1, dst, src, rows, cols, init, dt):
    """dst[r] = fold of the table's expression over src[r, :] in column order, each partial
    result rounded to dt (int32: integer semantics); init only for an empty row."""
    spec = load_isa().by_opcode[int(op)]
    is_int = dt == dtypes.int32.code
    for r in range(rows):
        row = l1[src + r * cols: src + (r + 1) * cols]
        acc = init if cols == 0 else row[0]
        for x in row[1:]:
            acc = to_dtype(dt, evaluate(spec, acc, x, 0.0, is_int))
        l1[dst + r] = to_dtype(dt, acc)


def tile_col_reduce(op, l1, dst, src, rows, cols, init, dt):
    """dst[c] = fold of the table's expression over src[:, c] in row order, each partial
    result rounded to dt; init only for an empty column."""
    spec = load_isa().by_opcode[int(op)]
    is_int = dt == dtypes.int32.code
    out = np.empty(cols)
    for c in range(cols):
        col = [l1[src + r * cols + c] for r in range(rows)]
        acc = init if rows == 0 else col[0]
        for x in col[1:]:
            acc = to_dtype(dt, evaluate(spec, acc, x, 0.0, is_int))
        out[c] = to_dtype(dt, acc)
    l1[dst:dst + cols] = out


def tile_cmp(op, l1, dst, a, b, scalar, use_scalar, mode, rows, cols, mstride, dt):
    """TCMP / TCMPS: the packed predicate mask, one bit per element, LSB first in each byte."""
    spec = load_isa().by_opcode[int(op)]
    is_int = dt == dtypes.int32.code
    nbytes = (cols + 7) // 8
    for r in range(rows):
        bits = [evaluate(spec, l1[a + r * cols + c], scalar if use_scalar else l1[b + r * cols + c],
                         mode, is_int) != 0 for c in range(cols)]
        for w in range(nbytes):
            l1[dst + r * mstride + w] = float(sum(1 << k for k, on in enumerate(bits[8 * w:8 * w + 8]) if on))


def tile_sel(op, l1, dst, mask, a, b, scalar, use_scalar, rows, cols, mstride, dt):
    """TSEL / TSELS: the table's select by each element's mask bit, rounded to dt."""
    spec = load_isa().by_opcode[int(op)]
    is_int = dt == dtypes.int32.code
    out = np.empty(rows * cols)
    for r in range(rows):
        for c in range(cols):
            bit = (int(l1[mask + r * mstride + c // 8]) >> (c % 8)) & 1
            y = scalar if use_scalar else l1[b + r * cols + c]
            out[r * cols + c] = to_dtype(dt, evaluate(spec, l1[a + r * cols + c], y, bit, is_int))
    l1[dst:dst + rows * cols] = out


def tile_tri(l1, dst, diagonal, upper, rows, cols):
    """TTRI: numpy's tril / triu of a rows x cols tile of ones, k = diagonal."""
    ones = np.ones((rows, cols))
    tri = np.triu(ones, diagonal) if upper else np.tril(ones, diagonal)
    l1[dst:dst + rows * cols] = tri.ravel()


def tile_fillpad(l1, dst, src, pad, rows, cols, spitch, drows, dcols):
    """TFILLPAD*: a drows x dcols grid of pad with src's rows x cols valid region (row pitch
    spitch) copied into its top-left corner."""
    grid = np.full((drows, dcols), pad)
    grid[:rows, :cols] = l1[src:src + rows * spitch].reshape(rows, spitch)[:, :cols] if rows else 0
    l1[dst:dst + drows * dcols] = grid.ravel()


def tile_arg_reduce(op, l1, dst, src, rows, cols, dt, per_col):
    """TROWARG* / TCOLARG*: the index along each row (column) of the first element that the
    table's compare prefers to every element before it."""
    spec = load_isa().by_opcode[int(op)]
    grid = l1[src:src + rows * cols].reshape(rows, cols)
    lines = grid.T if per_col else grid
    out = []
    for line in lines:
        best, at = line[0], 0
        for j, x in enumerate(line[1:], start=1):
            if evaluate(spec, x, best, 0.0, dt == dtypes.int32.code):
                best, at = x, j
        out.append(float(at))
    l1[dst:dst + len(out)] = out


def tile_trans(l1, dst, src, rows, cols, spitch, dpitch):
    """TTRANS: numpy's transpose of src's rows x cols (row pitch spitch) into dst (pitch dpitch)."""
    grid = l1[src:src + rows * spitch].reshape(rows, spitch)[:, :cols].T.copy() if rows else None
    for c in range(cols):
        l1[dst + c * dpitch:dst + c * dpitch + rows] = grid[c]


def tile_row_arg(op, l1, dst, src, rows, cols, dt):
    """TROWARGMAX / TROWARGMIN: the column index of each row's kept element."""
    tile_arg_reduce(op, l1, dst, src, rows, cols, dt, False)


def tile_col_arg(op, l1, dst, src, rows, cols, dt):
    """TCOLARGMAX / TCOLARGMIN: the row index of each column's kept element."""
    tile_arg_reduce(op, l1, dst, src, rows, cols, dt, True)


def _expand_op(op, l1, dst, a, v, rows, cols, dt, per_col):
    """dst[r, c] = the table's expression of (a[r, c], v[c] if per_col else v[r]), rounded to dt."""
    spec = load_isa().by_opcode[int(op)]
    is_int = dt == dtypes.int32.code
    out = np.empty(rows * cols)
    for r in range(rows):
        for c in range(cols):
            y = l1[v + c] if per_col else l1[v + r]
            out[r * cols + c] = to_dtype(dt, evaluate(spec, l1[a + r * cols + c], y, 0.0, is_int))
    l1[dst:dst + rows * cols] = out


def tile_col_expand_op(op, l1, dst, a, v, rows, cols, dt):
    """dst[r, c] = the table's expression of (a[r, c], v[c]), rounded to dt."""
    _expand_op(op, l1, dst, a, v, rows, cols, dt, True)


def tile_row_expand_op(op, l1, dst, a, v, rows, cols, dt):
    """dst[r, c] = the table's expression of (a[r, c], v[r]), rounded to dt."""
    _expand_op(op, l1, dst, a, v, rows, cols, dt, False)


def tile_col_expand(l1, dst, src, rows, cols):
    """dst[r, c] = src[c]: numpy's broadcast of src's first row over rows rows."""
    l1[dst:dst + rows * cols] = np.broadcast_to(l1[src:src + cols].copy(), (rows, cols)).ravel()


def tile_row_expand(l1, dst, src, rows, cols):
    """dst[r, c] = src[r]."""
    for r in range(rows):
        l1[dst + r * cols: dst + (r + 1) * cols] = l1[src + r]


# tile_move (TEXTRACT / TMOV on the AI core) is the strided copy of tile_load, applied with
# the source tile's row pitch (timing/aicore.py)
TILE_FAMILY_KERNELS = {"tile_load": tile_load, "tile_store": tile_store, "tile_mma": tile_mma,
                       "tile_alu": tile_elementwise, "tile_reduce": tile_row_reduce,
                       "tile_expand": tile_row_expand, "tile_expand_op": tile_row_expand_op,
                       "tile_col_reduce": tile_col_reduce, "tile_col_expand": tile_col_expand,
                       "tile_col_expand_op": tile_col_expand_op,
                       "tile_cmp": tile_cmp, "tile_sel": tile_sel, "tile_tri": tile_tri,
                       "tile_fillpad": tile_fillpad,
                       "tile_row_arg": tile_row_arg, "tile_col_arg": tile_col_arg,
                       "tile_trans": tile_trans,
                       "tile_move": tile_load}


def pred_bits(code, imm, regs, pc, j, mask):
    """Bitmask of the lanes in mask whose source j is true (non-zero): IF, BRK_UNLESS."""
    out = 0
    for lane in lanes(int(mask)):
        if source(code, imm, regs, pc, j, lane) != 0.0:
            out |= 1 << lane
    return out
