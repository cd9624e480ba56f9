"""The harness that runs one encoded lane instruction on the numba executor and on the
reference executor (the spec) from the same random machine state and requires identical
effects; tests/test_executor_differential.py and tests/test_lane64.py use it."""
from __future__ import annotations

import math

import numpy as np

from pypto_sim import dtypes
from pypto_sim.exec import gm, reference
from pypto_sim.ir.program import C_OP, C_DST, C_SRC, MAX_SRCS, N_COLS
from pypto_sim.isa import load_isa

ISA = load_isa()
FULL = (1 << 32) - 1
N_REGS = 8
PC = 1                       # instruction under test sits between two decoys
I32_MIN, I32_MAX = -2**31, 2**31 - 1
F32, F16, I32, BOOL = (dtypes.float32.code, dtypes.float16.code, dtypes.int32.code,
                       dtypes.bool_.code)
I8, U8, I16, BF16 = (dtypes.int8.code, dtypes.uint8.code, dtypes.int16.code, dtypes.bfloat16.code)

# Tensor slots in HBM: (dtype code, element count, byte address). The third slot's byte
# address is deliberately not sector aligned, the uint8 one not even 2-byte aligned. Atomics
# and FMA_STORE use the first three (the compiler gives them no memory-only dtype); stores to
# the int8 / uint8 / int16 slots take int32 values (the compiler converts to the lane dtype).
SLOTS = [(F32, 100, 0x1000), (F16, 77, 0x1200), (I32, 64, 0x2004), (I8, 50, 0x2200),
         (U8, 40, 0x2301), (I16, 30, 0x2400), (BF16, 45, 0x2500)]
HBM_BYTES = 0x2600           # bytes around the slots must stay untouched
L1_WORDS = 200

F_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -7.0, math.nan, math.inf, -math.inf,
             65504.0, 65519.0, 65520.0, -65536.0, 1e-8, -6e-8, 2.0**-24, 3 * 2.0**-26,
             1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-11 + 2.0**-23, 2049.0, 3.4028234663852886e38,
             -3.4028234663852886e38, 1e30, 3e9, -3e9, 2147483520.0, 16777217.0, 2147483647.0,
             -2147483648.0, 1.401298464324817e-45, 0.1, -0.3]
I_SPECIAL = [0, 1, -1, 2, -2, 3, 7, -7, 31, 32, 33, -31, -32, 65535, 65536, 2**24 + 1,
             I32_MIN, I32_MAX, I32_MIN + 1, I32_MAX - 1, 46341, -46341]

# ---------------------------------------------------------------- value generators

def float_values(rng, n):
    """n float64 words that are values of some dtype: specials, random f32/f16, int32 values."""
    kind = rng.integers(0, 5, n)
    scale = 10.0 ** rng.uniform(-8, 9, n)
    normal = rng.standard_normal(n) * scale
    out = np.where(kind == 0, rng.choice(F_SPECIAL, n), 0.0)
    out = np.where(kind == 1, normal.astype(np.float32).astype(np.float64), out)
    with np.errstate(over="ignore"):
        out = np.where(kind == 2, (normal / 1e4).astype(np.float16).astype(np.float64), out)
    out = np.where(kind == 3, rng.integers(-40, 41, n).astype(np.float64), out)
    out = np.where(kind == 4, rng.integers(I32_MIN, I32_MAX, n, endpoint=True) * 1.0, out)
    return out


def int_values(rng, n):
    """n int32 values as float64 words: specials, small, shift-sized and full-range ints."""
    kind = rng.integers(0, 4, n)
    out = np.where(kind == 0, rng.choice(I_SPECIAL, n), 0)
    out = np.where(kind == 1, rng.integers(-100, 101, n), out)
    out = np.where(kind == 2, rng.integers(0, 2, n), out)
    out = np.where(kind == 3, rng.integers(I32_MIN, I32_MAX, n, endpoint=True), out)
    return out.astype(np.float64)


def random_mask(rng):
    """A partial mask: some random lanes, never all or none."""
    while True:
        m = int(rng.integers(1, FULL))
        if m not in (0, FULL):
            return m


# ---------------------------------------------------------------- running both executors

def blank_code(op_name):
    """Three encoded rows; the instruction under test is row PC, the others are decoys."""
    code = np.zeros((3, N_COLS), np.int64)
    code[:, C_DST] = 5
    code[:, C_SRC:C_SRC + MAX_SRCS] = 3
    code[:, C_OP] = ISA.by_name["ADD"].opcode
    code[PC, C_OP] = ISA.by_name[op_name].opcode
    code[PC, C_DST] = -1
    code[PC, C_SRC:C_SRC + MAX_SRCS] = -1
    imm = np.full((3, MAX_SRCS), 99.0)
    imm[PC] = 0.0
    return code, imm


def make_state(rng, regs):
    """Machine state around one instruction: registers, ctx, HBM bytes with its slots (each
    element in its dtype's bytes), L1, outputs."""
    hbm = np.full(HBM_BYTES, 0xA5, np.uint8)
    for dt, count, base in SLOTS:
        d = dtypes.BY_CODE[dt]
        with np.errstate(over="ignore", invalid="ignore"):
            values = (int_values(rng, count).astype(np.int64) if not d.is_float else
                      float_values(rng, count))
        hbm[base:base + count * d.itemsize] = gm.encode(values, d)
    return dict(
        regs=regs, ctx=np.array([1, 0, 0, 32, 1, 1, 4, 1, 1, 0], np.int64), hbm=hbm,
        tbase=np.array([s[2] for s in SLOTS], np.int64),
        tcount=np.array([s[1] for s in SLOTS], np.int64),
        tbytes=np.array([s[2] for s in SLOTS], np.int64),
        l1=float_values(rng, L1_WORDS).astype(np.float32).astype(np.float64),
        pend_idx=np.full(32, -7, np.int64), pend_val=np.full(32, -7.0),
        info=np.full(8, -9, np.int64))


def assert_same(got, want, what):
    """Arrays equal element by element, NaN equal to NaN, and signed zeros told apart."""
    np.testing.assert_array_equal(got, want, err_msg=what)
    if got.dtype.kind == "f":
        keep = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got) & keep, np.signbit(want) & keep,
                                      err_msg=f"{what}: sign of zero differs")


def run_both(ex, code, imm, mask, state, what, sector=32):
    """Execute row PC with both executors on copies of state; require identical effects.

    Returns (status, state after the reference) for further checks.
    """
    results = []
    for impl in (ex, reference):
        s = {k: v.copy() for k, v in state.items()}
        status = impl.execute(PC, code, imm, s["regs"], mask, s["ctx"], s["hbm"], s["tbase"],
                              s["tcount"], s["tbytes"], s["l1"], sector, s["pend_idx"],
                              s["pend_val"], s["info"])
        results.append((int(status), s))
    (st_numba, numba_state), (st_ref, ref_state) = results
    assert st_numba == st_ref, f"{what}: status numba {st_numba} reference {st_ref}"
    for key in state:
        assert_same(numba_state[key], ref_state[key], f"{what}: {key}")
    return st_ref, ref_state, numba_state
