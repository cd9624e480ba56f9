"""float64 and int64 lane values (issue 25): C / numba-cuda semantics, exact for every value.

A float64 register word is the double itself; an int64 word is the int64's own 64 bits read as
a double (``dtypes.word_of``), so int64 values past 2**53 stay exact. These tests check the
values against numpy and hand-derived numbers, the numba executor against the reference
executor (instruction by instruction, and whole kernels), and the 64-bit costs of the default
machine table (latency_64 / issue_interval_64).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim import dtypes
from pypto_sim.ir.program import C_AUX, C_DST, C_DTYPE, C_SRC, C_UNIFORM, INT_SEM_INT64
from pypto_sim.isa import load_isa

from engine_compare import assert_executors_agree
from lane_harness import FULL, N_REGS, PC, blank_code, make_state, random_mask, run_both

ISA = load_isa()
I64_MIN, I64_MAX = -2**63, 2**63 - 1
F64, I64, BOOL = dtypes.float64.code, dtypes.int64.code, dtypes.bool_.code
I64_SPECIAL = [0, 1, -1, 2, -2, 3, 7, -7, 31, 32, 63, 64, 65, 2**31 - 1, -2**31, 2**31, 2**32,
               -2**32, 2**53, 2**53 + 1, -(2**53 + 1), 2**62, 3037000499, 3037000500,
               I64_MIN, I64_MAX, I64_MIN + 1, I64_MAX - 1]
F64_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, math.nan, -math.nan, math.inf, -math.inf, 5e-324,
               -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
               1 + 2.0**-52, 1 - 2.0**-53, 2.0**53, 2.0**53 + 2, 2.0**63, -2.0**63,
               2.0**63 - 1024, 9.3e18, -9.3e18, 2.0**31, -2.0**31 - 1, 0.1, -0.3, 1e300,
               3.4028235677973366e38, 65520.0, 700.0, -745.2, 1e-310]


def i64_words(values) -> np.ndarray:
    """int64 values as their register words (their bits read as float64)."""
    return np.asarray(values, np.int64).view(np.float64)


def int64_words(rng, n):
    """n int64 register words: specials, small and full-range values."""
    kind = rng.integers(0, 3, n)
    special = rng.choice(np.array(I64_SPECIAL, dtype=object), n)
    small = rng.integers(-100, 101, n)
    full = rng.integers(I64_MIN, I64_MAX, n, endpoint=True)
    out = np.where(kind == 0, special, np.where(kind == 1, small, full))
    return i64_words([int(v) for v in out])


def float64_words(rng, n):
    """n float64 register words: specials and random doubles over a wide range."""
    special = rng.choice(F64_SPECIAL, n)
    wide = rng.standard_normal(n) * 10.0 ** rng.uniform(-300, 300, n)
    ints = rng.integers(-2**62, 2**62, n).astype(np.float64)
    kind = rng.integers(0, 3, n)
    return np.where(kind == 0, special, np.where(kind == 1, wide, ints))


# ---------------------------------------------------------------- executor differential

INT64_ALU = [s.name for s in ISA.specs if s.family == "alu" and s.int_expr and s.name != "CAST"
             and ("int64" in s.dtypes or s.result == "pred")]
FLOAT64_ALU = [s.name for s in ISA.specs if s.family == "alu" and s.float_expr and s.name != "CAST"
               and ("float64" in s.dtypes or s.result == "pred")]


def _alu_trials(ex, name, dt, int_sem, words, seed):
    """16 random trials of ALU instruction name: registers and immediates from words, full,
    partial and empty masks, uniform or not; both executors must agree on every bit."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(seed)
    for trial in range(16):
        code, imm = blank_code(name)
        code[PC, C_DTYPE] = dt
        code[PC, C_AUX] = int_sem
        code[PC, C_DST] = rng.integers(0, N_REGS)
        for j in range(len(spec.value_operands)):
            if trial >= 4 and rng.random() < 0.4:
                imm[PC, j] = words(rng, 1)[0]
            else:
                code[PC, C_SRC + j] = rng.integers(0, N_REGS)
        mask = (FULL, random_mask(rng), random_mask(rng), 0)[trial % 4]
        code[PC, C_UNIFORM] = 1 if trial % 4 == 2 else 0
        state = make_state(rng, words(rng, N_REGS * 32).reshape(N_REGS, 32))
        run_both(ex, code, imm, mask, state, f"{name} dtype={dt} int_sem={int_sem} trial={trial}")


@pytest.fixture(scope="module")
def ex():
    """The numba executor module."""
    from pypto_sim.exec.lane import executor
    return executor()


@pytest.mark.parametrize("name", INT64_ALU)
def test_int64_alu_matches_reference(ex, name):
    """Every ALU instruction with an int expression on int64 words (int_sem 2): wrapping at
    64 bits, int64 min / max, 2**53 + 1, division by 0 and -1."""
    spec = ISA.by_name[name]
    dt = BOOL if spec.result == "pred" else I64
    _alu_trials(ex, name, dt, INT_SEM_INT64, int64_words, spec.opcode)


@pytest.mark.parametrize("name", FLOAT64_ALU)
def test_float64_alu_matches_reference(ex, name):
    """Every ALU instruction with a float expression on float64 words: NaN, +-inf, -0.0,
    subnormals, the largest double, values float32 cannot hold."""
    spec = ISA.by_name[name]
    dt = BOOL if spec.result == "pred" else F64
    _alu_trials(ex, name, dt, 0, float64_words, 7000 + spec.opcode)


@pytest.mark.parametrize("target", ISA.by_name["CAST"].dtypes)
def test_cast_from_int64_and_to_int64_matches_reference(ex, target):
    """CAST of an int64 word (int_sem 2) to every dtype, and of float64 / float32 / int32
    values to int64 (float to int64: truncated, saturated, NaN 0)."""
    dt = dtypes.BY_NAME[target].code
    _alu_trials(ex, "CAST", dt, INT_SEM_INT64, int64_words, 100 + dt)
    if dt == I64:
        _alu_trials(ex, "CAST", dt, 0, float64_words, 200)


# ---------------------------------------------------------------- kernels: values against numpy

@pto.kernel
def int64_ops(a, b, add, sub, mul, fdiv, mod, mn, mx, band, bor, bxor, inv, neg, absv, lt, eq,
              n):
    i = pto.get_global_id()
    if i < n:
        x = a[i]
        y = b[i]
        add[i] = x + y
        sub[i] = x - y
        mul[i] = x * y
        fdiv[i] = x // y
        mod[i] = x % y
        mn[i] = pto.min(x, y)
        mx[i] = pto.max(x, y)
        band[i] = x & y
        bor[i] = x | y
        bxor[i] = x ^ y
        inv[i] = ~x
        neg[i] = -x
        absv[i] = abs(x)
        lt[i] = pto.select(x < y, 1, 0)
        eq[i] = pto.select(x == y, 1, 0)


def _int64_pairs():
    """Operand pairs: every special against every special, as two int64 arrays."""
    a, b = np.meshgrid(np.array(I64_SPECIAL, np.int64), np.array(I64_SPECIAL, np.int64))
    return a.ravel(), b.ravel()


def test_int64_kernel_wraps_at_64_bits_as_numpy():
    """int64 arithmetic wraps modulo 2**64 as numpy's (and C's) int64: int64 max + 1 is int64
    min, int64 min * -1 and int64 min // -1 are int64 min, int64 min % -1 is 0, 2**53 + 1 + 1
    is 2**53 + 2 (a float64 would hold 2**53); x // 0 and x % 0 are 0 (the ISA table's rule,
    numpy's too); // and % round toward minus infinity (Python's, numba's)."""
    a, b = _int64_pairs()
    n = a.size
    outs = [pto.to_device(np.zeros(n, np.int64)) for _ in range(13)]
    conds = [pto.to_device(np.zeros(n, np.int32)) for _ in range(2)]
    pto.launch(int64_ops, grid=(-(-n // 128),), block=(128,),
               args=(pto.to_device(a), pto.to_device(b), *outs, *conds, n))
    with np.errstate(all="ignore"):
        want = [a + b, a - b, a * b, np.floor_divide(a, b), np.remainder(a, b), np.minimum(a, b),
                np.maximum(a, b), a & b, a | b, a ^ b, ~a, -a, np.abs(a)]
    for got, expect, what in zip(outs, want, ("+", "-", "*", "//", "%", "min", "max", "&", "|",
                                              "^", "~", "neg", "abs")):
        np.testing.assert_array_equal(got.numpy(), expect, err_msg=what)
    np.testing.assert_array_equal(conds[0].numpy(), (a < b).astype(np.int32))
    np.testing.assert_array_equal(conds[1].numpy(), (a == b).astype(np.int32))
    k = np.flatnonzero((a == I64_MAX) & (b == 1))[0]
    assert outs[0].numpy()[k] == I64_MIN                              # int64 max + 1
    k = np.flatnonzero((a == I64_MIN) & (b == -1))[0]
    assert (outs[2].numpy()[k], outs[3].numpy()[k], outs[4].numpy()[k]) == (I64_MIN, I64_MIN, 0)
    k = np.flatnonzero((a == 2**53 + 1) & (b == 1))[0]
    assert outs[0].numpy()[k] == 2**53 + 2


@pto.kernel
def conversions(i64, f64, to_f64, to_f32, to_i32, to_i64, n):
    i = pto.get_global_id()
    if i < n:
        v = i64[i]
        to_f64[i] = pto.cast(v, pto.float64)
        to_f32[i] = pto.cast(v, pto.float32)
        to_i32[i] = pto.cast(v, pto.int32)
        to_i64[i] = pto.cast(f64[i], pto.int64)


def test_conversions_round_once_and_wrap_as_c():
    """int64 -> float64 rounds to nearest even: 2**53 + 1 (halfway) gives 2**53. int64 ->
    float32 rounds once, as C's (float)v: v = 2**53 + 2**29 + 1 is above the midpoint 2**53 +
    2**29 of float32's neighbours 2**53 and 2**53 + 2**30, so 2**53 + 2**30 (through float64 it
    would tie at 2**53 + 2**29 and round to even, 2**53). int64 -> int32 keeps the low 32 bits:
    2**32 + 5 gives 5, 2**31 gives -2**31. float64 -> int64 truncates and saturates, NaN 0
    (the GPU's cvt.rzi.s64.f64): -1.9 gives -1, 2**63 and +inf int64 max, -inf and -1e300
    int64 min."""
    ints = np.array([2**53 + 1, 2**53 + 2**29 + 1, 2**32 + 5, 2**31, -1, I64_MIN, I64_MAX],
                    np.int64)
    floats = np.array([-1.9, 2.0**63, math.inf, -math.inf, -1e300, math.nan, 2.0**62 + 2048])
    n = ints.size
    dev = [pto.to_device(np.zeros(n, t)) for t in (np.float64, np.float32, np.int32, np.int64)]
    pto.launch(conversions, grid=(1,), block=(32,),
               args=(pto.to_device(ints), pto.to_device(floats), *dev, n))
    to_f64, to_f32, to_i32, to_i64 = (d.numpy() for d in dev)
    assert to_f64[0] == 2.0**53
    assert to_f32[1] == np.float32(2.0**53 + 2.0**30)
    np.testing.assert_array_equal(to_f32, ints.astype(np.float32))      # numpy's cast: once too
    assert (to_i32[2], to_i32[3], to_i32[4]) == (5, -2**31, -1)
    np.testing.assert_array_equal(to_i32, ints.astype(np.int32))
    assert to_i64.tolist() == [-1, I64_MAX, I64_MAX, I64_MIN, I64_MIN, 0, 2**62 + 2048]


@pto.kernel
def float64_ops(a, b, c, fused, unfused, sq, ex, lg, q, n):
    i = pto.get_global_id()
    if i < n:
        x = a[i]
        y = b[i]
        z = c[i]
        fused[i] = pto.fma(None, x, y, z)
        unfused[i] = x * y + z
        sq[i] = pto.sqrt(x)
        ex[i] = pto.exp(x)
        lg[i] = pto.log(x)
        q[i] = x / y


def test_float64_kernel_computes_in_double():
    """x * y + z rounds twice and pto.fma once (CUDA's fma(double)): with x = y = 1 + 2**-30
    and z = -(1 + 2**-29), x * y = 1 + 2**-29 + 2**-60 exactly; float64 rounds the product to
    1 + 2**-29 (2**-60 is below half of its ulp 2**-52), so x * y + z is 0.0 and the fused
    result 2**-60. sqrt, exp, log and / agree with numpy's float64 (sqrt and / exactly, IEEE's
    correctly rounded operations; exp and log within 1 ulp, as libraries differ)."""
    x = np.array([1 + 2.0**-30, 2.0, 1e-300, 0.0, -1.0, math.inf, math.nan, 1e300, 709.0])
    y = np.array([1 + 2.0**-30, 3.0, 1e-300, -0.0, 0.0, 2.0, 1.0, 1e300, 0.1])
    z = np.array([-(1 + 2.0**-29), 1.0, 0.0, 0.0, 1.0, -math.inf, 1.0, -math.inf, 0.0])
    n = x.size
    outs = [pto.to_device(np.zeros(n)) for _ in range(6)]
    pto.launch(float64_ops, grid=(1,), block=(32,),
               args=(pto.to_device(x), pto.to_device(y), pto.to_device(z), *outs, n))
    fused, unfused, sq, ex, lg, q = (o.numpy() for o in outs)
    assert (fused[0], unfused[0]) == (2.0**-60, 0.0)
    assert fused[1] == unfused[1] == 7.0
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(unfused, x * y + z)
        np.testing.assert_array_equal(sq, np.sqrt(x))
        np.testing.assert_array_equal(q, x / y)
        np.testing.assert_array_max_ulp(ex, np.exp(x), maxulp=1)
        np.testing.assert_array_max_ulp(lg, np.log(x), maxulp=1)


@pto.kernel
def special_words(f, g, i64, j64, o_f, o_i, o_c):
    i = pto.get_global_id()
    x = f[i]
    y = g[i]
    v = i64[i]
    w = j64[i]
    o_f[i] = pto.select(x != x, x, pto.max(x, y) * 1.0 - 0.0)
    o_i[i] = (v + w) * 3 - (v ^ w)
    if v > w:
        o_c[i] = pto.cast(v, pto.float64) + x
    else:
        o_c[i] = pto.cast(w // 7, pto.float64) - y


def test_special_values_agree_between_executors(rng=np.random.default_rng(64)):
    """A kernel on NaN (with payloads and sign), +-inf, -0.0, subnormals, int64 min / max and
    2**53 + 1 runs identically (HBM bit for bit, cycles, timeline) with the numba executor and
    the reference executor."""
    f = np.array(F64_SPECIAL[:32])
    g = rng.permutation(f)
    i64 = np.array(I64_SPECIAL + [5, -5, 9, -9], np.int64)[:32]
    j64 = rng.permutation(i64)
    args = [pto.to_device(v) for v in (f, g, i64, j64)] + [
        pto.to_device(np.zeros(32)), pto.to_device(np.zeros(32, np.int64)),
        pto.to_device(np.zeros(32))]
    assert_executors_agree(special_words, tuple(args), (1, 1, 1), (32, 1, 1), "special_words")


# ---------------------------------------------------------------- atomics and shared memory

@pto.kernel
def atomics64(acc, mx, iacc, vals, ivals, n):
    i = pto.get_global_id()
    sm = pto.alloc_local(4, pto.int64)
    if pto.get_local_id() < 4:
        sm[pto.get_local_id()] = 0
    pto.barrier_block()
    if i < n:
        pto.atomic_add(acc + (i % 4), vals[i])
        pto.atomic_max(mx + 0, vals[i])
        pto.atomic_add(sm + (i % 4), ivals[i])
    pto.barrier_block()
    if pto.get_local_id() < 4:
        pto.atomic_add(iacc + pto.get_local_id(), sm[pto.get_local_id()])


def test_float64_and_int64_atomics():
    """atomic_add / atomic_max on float64 HBM words and atomic_add on an int64 shared (L1)
    buffer: the sums of the multiples of 0.25 are exact in float64 in any order; the int64
    partial sums of 2**60 + k wrap past 2**63 exactly as numpy's int64 sum does."""
    n = 64
    vals = (np.arange(n) - 20) * 0.25
    ivals = np.int64(2**60) + np.arange(n, dtype=np.int64)
    acc, mx = pto.to_device(np.zeros(4)), pto.to_device(np.full(1, -math.inf))
    iacc = pto.to_device(np.zeros(4, np.int64))
    pto.launch(atomics64, grid=(1,), block=(n,),
               args=(acc, mx, iacc, pto.to_device(vals), pto.to_device(ivals), n))
    np.testing.assert_array_equal(acc.numpy(), vals.reshape(-1, 4).sum(axis=0))
    assert mx.numpy()[0] == vals.max()
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(iacc.numpy(), ivals.reshape(-1, 4).sum(axis=0))


def test_int64_index_past_int32_is_out_of_bounds_not_wrapped():
    """An int64 index converts to the int32 an address takes by clamping: 2**32 + 1 (which
    wrapping would make 1, a valid element) stays out of bounds and memcheck names it."""
    @pto.kernel
    def far(a, idx, o):
        o[0] = a[idx[0]]

    a = pto.to_device(np.arange(4.0))
    with pytest.raises(pto.OutOfBoundsError, match=r"accessed a\[2147483647\]"):
        pto.launch(far, grid=(1,), block=(1,),
                   args=(a, pto.to_device(np.array([2**32 + 1], np.int64)),
                         pto.to_device(np.zeros(1))))
        pto.sync()


def test_tiles_still_refuse_float64():
    """Tile (AI-core) float64 is not built: A2/A3's vector units list no 64-bit type, and a
    tile instruction on float64 is refused at compile time naming the dtype."""
    @pto.kernel
    def tile64(a):
        t = pto.alloc_local(64, pto.float64)
        pto.async_load(t, a, 64 * 8)
        pto.wait_all()

    with pytest.raises(pto.CompileError, match="holds float64, which no tile unit of the AI core computes"):
        pto.launch(tile64, grid=(1,), block=(32,), args=(pto.to_device(np.zeros(64)),))


# ---------------------------------------------------------------- costs

def _chain(make_kernels, k, dtype):
    source = ("@pto.kernel\ndef chain(a, o):\n    i = pto.get_lane_id()\n    x = a[i]\n"
              + "    x = pto.fma(None, x, 1.0, 1.0)\n" * k + "    o[i] = x\n")
    kernel = make_kernels(source).chain
    host = np.arange(32, dtype=dtype)
    out = pto.to_device(np.zeros(32, dtype))
    prof = pto.profile(kernel, grid=(1, 1, 1), block=(32, 1, 1), args=(pto.to_device(host), out))
    np.testing.assert_array_equal(out.numpy(), host + k)
    return prof.total_cycles


def test_dependent_float64_fmas_cost_latency_64(make_kernels):
    """On the default machine (latency_tables/ascend910b.toml) FMA has latency 7 and, on 64-bit
    values, latency_64 = 2 x 7 = 14 (assumed: two dependent 32-bit halves). Three dependent
    FMAs add 3 x 7 = 21 cycles to a float32 kernel and 3 x 14 = 42 to a float64 one."""
    assert pto.machine().lane_timing("FMA", wide=True) == (14, 2)
    assert _chain(make_kernels, 3, np.float32) - _chain(make_kernels, 0, np.float32) == 21
    assert _chain(make_kernels, 3, np.float64) - _chain(make_kernels, 0, np.float64) == 42


@pto.kernel
def doubled(a, o):
    i = pto.get_global_id()
    o[i] = a[i] * 2.0


def test_a_64_bit_lane_register_takes_two_l1_words():
    """A lane register holds 8 bytes of a float64 (lane_slot_bytes is 4 on the default
    machine): doubled's registers are i (int32), a[i] and the product (float64), so one warp
    needs (1 + 2 x 2) slots x 4 bytes x 32 lanes = 640 bytes of L1."""
    from pypto_sim.timing.block_fit import check_block_fits
    args = (pto.to_device(np.zeros(32)), pto.to_device(np.zeros(32)))
    prog = doubled.program_for(args)
    assert (prog.n_lane_slots, prog.n_wide_lane_slots) == (3, 2)
    assert check_block_fits(prog, (32, 1, 1), pto.machine(), "doubled") == 640


@pto.kernel
def big_ints(a, o):
    i = pto.get_local_id()
    v = a[i] + 1
    o[i] = v


def test_debugger_shows_int64_variables_as_their_values():
    """lane_values reads an int64 register as the int64 it holds (its word is its bits):
    2**53 + 1 + 1 is 2**53 + 2, and int64 max + 1 wraps to int64 min."""
    from pypto_sim import debug as dbg
    a = np.array([2**53 + 1, I64_MAX] * 16, np.int64)
    ctx = dbg.debug_kernel(big_ints, args=(pto.to_device(a), pto.to_device(np.zeros(32, np.int64))),
                           grid=1, block=32, echo=False)
    ctx.continue_()
    v = ctx.lane_values("v")
    assert v.dtype == np.int64 and v[:2].tolist() == [2**53 + 2, I64_MIN]


def test_a_match_on_64_bit_values_is_refused():
    """match_any / match_all compare 32-bit words here; a 64-bit operand is a CompileError
    naming the dtype rather than a match on the wrong bits."""
    @pto.kernel
    def match64(a, o):
        i = pto.get_lane_id()
        o[i] = pto.match_any_sync(0xFFFFFFFF, a[i])

    with pytest.raises(pto.CompileError, match="matching int64 values is not supported"):
        pto.launch(match64, grid=(1,), block=(32,),
                   args=(pto.to_device(np.zeros(32, np.int64)), pto.to_device(np.zeros(32, np.int32))))
