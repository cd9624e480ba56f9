"""The numba lane executor: executes one instruction for one warp's lanes.

This file is a template: ``pypto_sim.exec.lane`` prepends the constants derived from the ISA
table (opcodes, families, encoding columns) and appends the generated per-opcode semantics
(``alu_float`` and ``alu_int``, built from the table's expressions), writes the result to the
cache directory under a name that hashes all of it, and imports that with numba's on-disk cache.
So an edit to the ISA or to this file can never run against stale compiled code.

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
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

ST_OK = 0
ST_OOB = 1


@intrinsic
def f64_bits(typingctx, x):
    """The IEEE bits of float64 x as an int64 (a bit cast, no conversion)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))
    return types.int64(types.float64), codegen


@intrinsic
def bits_f64(typingctx, x):
    """The float64 whose IEEE bits are int64 x (a bit cast, no conversion)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.int64), codegen


@intrinsic
def fused_fma(typingctx, a, b, c):
    """a * b + c with one rounding (LLVM's llvm.fma.f64: the FMA instruction, or libm's exact
    fma where the host has none), as CUDA's fma(double) and a contracted a * b + c compute it."""
    def codegen(context, builder, signature, args):
        f64 = context.get_value_type(types.float64)
        fn = builder.module.declare_intrinsic("llvm.fma", [f64], ir.FunctionType(f64, [f64] * 3))
        operands = [context.cast(builder, v, t, types.float64) for v, t in zip(args, signature.args)]
        return builder.call(fn, operands)
    return types.float64(a, b, c), codegen


@njit(cache=True, error_model="numpy")
def f64_to_i64(x):
    """A float64 converted to int64 as the GPU's cvt.rzi.s64.f64 does: truncated toward zero,
    saturated to int64's range, NaN 0."""
    if x != x:
        return np.int64(0)
    if x >= 9.223372036854775807e18:                 # 2**63: past int64's largest value
        return np.int64(9223372036854775807)
    if x <= -9.223372036854775807e18:                # -2**63 is int64's smallest value
        return np.int64(-9223372036854775807 - 1)
    return np.int64(x)


@njit(cache=True, error_model="numpy")
def cast_word(dt, w, from_int64):
    """CAST: the register word w (an int64's bits when from_int64, else a value held as
    itself) converted to dtype code dt, as C converts: an int64 to float32 rounds once (not
    through float64), to a narrower integer keeps the low bits; a float to int64 is
    f64_to_i64; an int32 / uint32 / bool to int64 keeps its value."""
    if from_int64:
        v = f64_bits(w)
        if dt == DT_INT64:
            return w
        if dt == DT_FLOAT32:
            return np.float64(np.float32(v))
        if dt == DT_FLOAT64:
            return np.float64(v)
        if dt == DT_BOOL:
            return 1.0 if v != 0 else 0.0
        if dt == DT_FLOAT16:
            return round_f16(np.float64(v))            # past 65520 either way: inf
        return round_to(dt, np.float64(wrap_i32(v)))   # low 32 bits, then narrower wraps
    if dt == DT_INT64:
        return bits_f64(f64_to_i64(w))
    return round_to(dt, w)


@njit(cache=True, error_model="numpy")
def int64_word(dt, v):
    """The register word of an int64-semantics result v: its bits for an int64 result, the
    0 / 1 itself for a condition (a compare of int64 operands)."""
    if dt == DT_INT64:
        return bits_f64(np.int64(v))
    return np.float64(v)


@njit(cache=True, error_model="numpy")
def round_f16(x):
    """Round a float64 to the nearest float16 value (ties to even), returned as float64."""
    if x != x or x == 0.0 or math.isinf(x):
        return x
    ax = abs(x)
    if ax >= 65520.0:
        return math.copysign(math.inf, x)
    # ax = m 2^e with 0.5 <= m < 1 (frexp; a subnormal double gives e = -1022 here, which
    # changes nothing below): float16's spacing there is q = 2^max(e - 11, -24), and ax / q
    # is exact, so ax * (1 / q) is the same number (no frexp, ldexp or division)
    qe = max(((f64_bits(ax) >> 52) & 0x7FF) - 1033, -24)
    return math.copysign(np.rint(ax * bits_f64((1023 - qe) << 52)) * bits_f64((1023 + qe) << 52), x)


@njit(cache=True, error_model="numpy")
def wrap_i32(v):
    """Wrap an int64 to int32 two's complement."""
    v = v & 0xFFFFFFFF
    if v >= 0x80000000:
        v -= 0x100000000
    return v


@njit(cache=True, error_model="numpy")
def round_bf16(x):
    """Round to the nearest bfloat16 value (through float32, ties to even), as float64."""
    f = np.float64(np.float32(x))
    if f != f or f == 0.0 or math.isinf(f):
        return f
    af = abs(f)
    m, e = math.frexp(af)
    q = math.ldexp(1.0, max(e - 8, -133))
    r = np.rint(af / q) * q
    if r >= 3.4028236692093846e38:             # 2**128: past bfloat16's largest finite value
        return math.copysign(math.inf, f)
    return math.copysign(r, f)


@njit(cache=True, error_model="numpy")
def wrap_bits(x, bits, signed):
    """An integer-valued float64 wrapped to a bits-wide two's complement (or unsigned) int."""
    if x != x:
        return 0.0
    v = np.int64(max(min(x, 9.2e18), -9.2e18)) & ((np.int64(1) << bits) - 1)
    if signed and v >= (np.int64(1) << (bits - 1)):
        v -= np.int64(1) << bits
    return np.float64(v)


@njit(cache=True, error_model="numpy")
def round_to(dt, x):
    """Round a float64 result to dtype code dt: the stored word is a value of that dtype.

    Float to int32 truncates toward zero and saturates; NaN gives 0. Stores to int8, uint8,
    int16 and uint16 wrap (as numpy's astype), and so does every uint32 result (C's unsigned
    arithmetic: an int32 result, or -1, becomes its value modulo 2**32); to bfloat16 round to
    nearest even.
    """
    if dt == DT_FLOAT32:
        return np.float64(np.float32(x))
    if dt == DT_FLOAT16:
        return round_f16(x)
    if dt == DT_INT8:
        return wrap_bits(x, 8, True)
    if dt == DT_UINT8:
        return wrap_bits(x, 8, False)
    if dt == DT_INT16:
        return wrap_bits(x, 16, True)
    if dt == DT_UINT16:
        return wrap_bits(x, 16, False)
    if dt == DT_UINT32:
        return wrap_bits(x, 32, False)
    if dt == DT_BFLOAT16:
        return round_bf16(x)
    if dt == DT_INT64 or dt == DT_FLOAT64:
        return x                                    # a float64, or an int64 word (its bits)
    if dt == DT_INT32:
        if x != x:
            return 0.0
        if x >= 2147483647.0:
            return 2147483647.0
        if x <= -2147483648.0:
            return -2147483648.0
        return np.float64(math.trunc(x))
    return 1.0 if x != 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def py_mod(a, b):
    """a % b for floats as numpy computes it (npy_divmod): fmod, moved to the sign of b; a
    zero remainder takes b's sign."""
    mod = np.fmod(a, b)
    if b == 0.0:
        return mod
    if mod != 0.0:
        if (b < 0.0) != (mod < 0.0):
            mod += b
    else:
        mod = math.copysign(0.0, b)
    return mod


@njit(cache=True, error_model="numpy")
def py_floordiv(a, b):
    """a // b for floats as numpy computes it (npy_divmod): (a - fmod(a, b)) / b, moved down
    when the remainder's sign differs from b's, snapped to the nearest integer; a zero
    quotient takes the sign of a / b."""
    if b == 0.0:
        return a / b
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0.0 and (b < 0.0) != (mod < 0.0):
        div -= 1.0
    if div != 0.0:
        floordiv = np.floor(div)
        if div - floordiv > 0.5:
            floordiv += 1.0
        return floordiv
    return math.copysign(0.0, a / b)


@njit(cache=True, error_model="numpy", _nrt=False)
def operand(code, imm, regs, pc, j, lane):
    r = code[pc, C_SRC + j]
    if r < 0:
        return imm[pc, j]
    return regs[r, lane]


@njit(cache=True, error_model="numpy", _nrt=False)
def lane_active(mask, lane):
    return (mask >> lane) & 1


@njit(cache=True, error_model="numpy", _nrt=False)
def pred_bits(code, imm, regs, pc, j, mask):
    """Bitmask of the lanes in mask whose operand j is true (non-zero)."""
    out = 0
    for lane in range(32):
        if lane_active(mask, lane) and operand(code, imm, regs, pc, j, lane) != 0.0:
            out |= 1 << lane
    return out


@njit(cache=True, error_model="numpy", _nrt=False)
def exec_alu(pc, code, imm, regs, mask):
    """ALU family: the generated alu_lanes has one lane loop per opcode (no per-lane switch)."""
    return alu_lanes(code[pc, C_OP], code[pc, C_AUX], code[pc, C_DST], code[pc, C_DTYPE],
                     code[pc, C_UNIFORM] == 1, mask, code[pc, C_SRC], code[pc, C_SRC + 1],
                     code[pc, C_SRC + 2], imm[pc, 0], imm[pc, 1], imm[pc, 2], regs)


@njit(cache=True, error_model="numpy", _nrt=False)
def exec_id(pc, code, regs, mask, ctx):
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


@njit(cache=True, error_model="numpy", _nrt=False)
def fault(info, lane, off, count):
    info[0] = lane
    info[1] = off
    info[2] = count
    return ST_OOB


@njit(cache=True, error_model="numpy", _nrt=False)
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


@njit(cache=True, error_model="numpy", _nrt=False)
def traffic(info, addrs, n, to_hbm, item, sector):
    """Record a lane access's lanes (info[4]) and bytes moved (info[3]): whole sectors for HBM
    (addrs: byte addresses), elements for L1. Returns ST_OK."""
    info[4] = n
    if to_hbm:
        info[3] = count_sectors(addrs, n, sector) * sector
    else:
        info[3] = n * item
    return ST_OK


@njit(cache=True, error_model="numpy", _nrt=False)
def region(pc, code, tbase, tcount, to_hbm):
    """(base, element count) of the memory a lane access of pc may touch: the tensor in its
    slot (HBM; base is its byte address), or the alloc_local buffer named by aux (L1; base is
    its first word)."""
    if to_hbm:
        slot = code[pc, C_AUX]
        return tbase[slot], tcount[slot]
    return code[pc, C_AUX], code[pc, C_AUX + 1]


@njit(cache=True, error_model="numpy", _nrt=False)
def exec_load(pc, code, imm, regs, mask, hbm, tbase, tcount, tbytes, l1, sector, pend_idx, info):
    """Load family; pend_idx[k] receives the address read by the k-th active lane (for checks):
    the element's first byte in HBM, its word in L1."""
    op = code[pc, C_OP]
    d = code[pc, C_DST]
    dt = code[pc, C_DTYPE]
    every = code[pc, C_UNIFORM] == 1
    slot = code[pc, C_AUX]
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


@njit(cache=True, error_model="numpy", _nrt=False)
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


@njit(cache=True, error_model="numpy", _nrt=False)
def gather_store(pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx, pend_val,
                 value_src, info):
    """Compute a store's (address, value) pairs now; the caller commits them at completion
    (HBM: commit_gm with the store's dtype; L1: commit_store)."""
    op = code[pc, C_OP]
    dt = code[pc, C_DTYPE]
    slot = code[pc, C_AUX]
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


@njit(cache=True, error_model="numpy", _nrt=False)
def commit_store(mem, pend_idx, pend_val, n):
    """Make a gathered store to L1 words visible."""
    for k in range(n):
        mem[pend_idx[k]] = pend_val[k]


@njit(cache=True, error_model="numpy", _nrt=False)
def commit_gm(hbm, pend_idx, pend_val, n, dt):
    """Make a gathered store to HBM visible: n values of dtype dt at byte addresses pend_idx."""
    for k in range(n):
        gm_store(hbm, pend_idx[k], dt, pend_val[k])


@njit(cache=True, error_model="numpy", _nrt=False)
def exec_fma_store(pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx, pend_val,
                   info):
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
            regs[d, lane] = round_to(dt, alu_float(op, a, b, c))
    return gather_store(pc, code, imm, regs, mask, tbase, tcount, tbytes, sector, pend_idx,
                        pend_val, d, info)


@njit(cache=True, error_model="numpy", _nrt=False)
def execute(pc, code, imm, regs, mask, ctx, hbm, tbase, tcount, tbytes, l1, sector, pend_idx,
            pend_val, info):
    """Execute instruction pc for the warp's active lanes (mask). Returns a status code.
    (GM bytes are read and written by gm_template.py's gm_load / gm_store; the atomic,
    warp and local families live in simt_template.py, the tile kernels in
    tile_template.py.)

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
    if fam == F_ATOMIC:
        return exec_atomic(pc, code, imm, regs, mask, hbm, tbase, tcount, tbytes, l1, sector,
                           pend_idx, info)
    return ST_OK


# ---------------------------------------------------------------- racecheck shadow memory
# shadow[word] = (writer, writer epoch, writer pc, writer cycle, writer lane,
#                 reader, reader epoch, reader pc, reader cycle, reader lane); -1 = none.
# An accessor ("who") is block * 4096 + warp; block * 4096 + 4095 is the block's tile engine,
# whose epoch field holds the tile operation's sequence number instead.

@njit(cache=True, error_model="numpy", _nrt=False)
def _unordered(prev, prev_epoch, who, block, epoch, seen_tiles):
    if prev < 0 or prev == who:
        return False
    if prev // 4096 != block:
        return True                      # different blocks: nothing orders them in a kernel
    if prev % 4096 == 4095:
        return prev_epoch >= seen_tiles  # a tile op this warp has not waited for (wait_all)
    return prev_epoch == epoch           # other warp of the block, no barrier_block between


@njit(cache=True, error_model="numpy", _nrt=False)
def race_check(shadow, idx, n, mask, is_write, who, block, epoch, seen_tiles, pc, cycle, report,
               shift):
    """Check and record n lane accesses (addresses idx[k] by the k-th active lane of mask; the
    shadow row of an address is idx[k] >> shift). Returns 1 at the first access that conflicts
    with an unordered earlier one (report = address, earlier was a write, earlier who, epoch,
    pc, cycle, lane, this lane)."""
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
            if _unordered(shadow[w, 5], shadow[w, 6], who, block, epoch, seen_tiles):
                report[0] = addr
                report[1] = 0
                for j in range(5):
                    report[2 + j] = shadow[w, 5 + j]
                report[7] = lane
                return 1
            shadow[w, 0] = who
            shadow[w, 1] = epoch
            shadow[w, 2] = pc
            shadow[w, 3] = cycle
            shadow[w, 4] = lane
        else:
            shadow[w, 5] = who
            shadow[w, 6] = epoch
            shadow[w, 7] = pc
            shadow[w, 8] = cycle
            shadow[w, 9] = lane
    return 0
