"""Differential tests: the numba lane executor against the reference executor (the spec).

Every instruction the executors implement is run by both on the same random state (registers
with special values, masks, immediates, uniform flags, memory layouts), and everything they touch
must come out identical: status, registers, HBM (its bytes, bit for bit), L1, the gathered store
pairs and info. Floats are compared with NaN == NaN but +0.0 != -0.0.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from pypto_sim import dtypes
from pypto_sim.exec import gm, reference
from pypto_sim.exec.lane import executor
from pypto_sim.ir.program import C_AUX, C_DST, C_DTYPE, C_SRC, C_UNIFORM

from lane_harness import (BOOL, F16, F32, FULL, I8, I16, I32, I32_MAX, I32_MIN, ISA, L1_WORDS, N_REGS, PC,
                          SLOTS, U8, assert_same, blank_code, float_values, int_values, make_state,
                          random_mask, run_both)

EXECUTED_FAMILIES = ("alu", "id", "load", "store", "fma_store", "atomic", "warp", "local")
ALU_OPS = [s.name for s in ISA.specs if s.family == "alu"]
ID_OPS = [s.name for s in ISA.specs if s.family == "id"]
# lane-memory instructions: where they point (HBM tensor slot or L1 word range)
MEMORY_OPS = {"LOAD": "hbm", "LOAD_L1": "l1", "STORE": "hbm", "STORE_L1": "l1", "FMA_STORE": "hbm"}
MEMORY_OPS.update({s.name: "l1" if s.name.endswith("_L1") else "hbm"
                   for s in ISA.specs if s.family == "atomic"})
WARP_OPS = [s.name for s in ISA.specs if s.family == "warp"]
LOCAL_OPS = [s.name for s in ISA.specs if s.family == "local"]


@pytest.fixture(scope="module")
def ex():
    """The numba executor module (compiled once per process)."""
    return executor()


# ---------------------------------------------------------------- ALU

def alu_cases(spec):
    """(dtype code, int semantics) pairs: every dtype of the instruction, with each semantic
    expression the table defines (int semantics on a float dtype rounds the int32 result)."""
    out = []
    for name in spec.dtypes:
        code = dtypes.BY_NAME[name].code
        if spec.float_expr:
            out.append((code, False))
        if spec.int_expr:
            out.append((code, True))
    return out


@pytest.mark.parametrize("name", ALU_OPS)
def test_alu_matches_reference(ex, name):
    """Each ALU instruction, for each dtype and semantics, on random and special operands:
    registers and immediates, full, partial and empty masks, uniform (all 32 lanes) or not,
    with the destination sometimes aliasing a source."""
    spec = ISA.by_name[name]
    n_src = len(spec.value_operands)
    assert n_src <= 3, f"{name}: ALU sources a, b, c only"
    rng = np.random.default_rng(spec.opcode)
    for dt, int_sem in alu_cases(spec):
        values = int_values if int_sem else float_values
        for trial in range(16):
            regs = values(rng, N_REGS * 32).reshape(N_REGS, 32)
            code, imm = blank_code(name)
            code[PC, C_DTYPE] = dt
            code[PC, C_AUX] = 1 if int_sem else 0
            code[PC, C_DST] = rng.integers(0, N_REGS)
            use_imm = trial >= 4 and rng.random() < 0.5
            for j in range(n_src):
                if use_imm and rng.random() < 0.6:
                    imm[PC, j] = values(rng, 1)[0]
                else:
                    code[PC, C_SRC + j] = rng.integers(0, N_REGS)
            mask = (FULL, random_mask(rng), random_mask(rng), 0)[trial % 4]
            code[PC, C_UNIFORM] = 1 if trial % 4 == 2 or (trial >= 4 and rng.random() < 0.3) else 0
            what = f"{name} dtype={dt} int={int_sem} trial={trial}"
            run_both(ex, code, imm, mask, make_state(rng, regs), what)


# ---------------------------------------------------------------- ID

CTXS = [
    [0, 0, 0, 32, 1, 1, 1, 1, 1, 0],
    [3, 1, 0, 8, 4, 2, 5, 2, 1, 1],        # 64-lane block, second warp
    [2, 5, 1, 5, 3, 7, 4, 6, 2, 2],        # odd 3-D block: dims wrap inside a warp
    [7, 0, 0, 256, 1, 1, 100, 1, 1, 7],
    [1, 2, 3, 16, 16, 1, 2, 3, 4, 5],
]


@pytest.mark.parametrize("name", ID_OPS)
def test_id_matches_reference(ex, name):
    """Each ID instruction along each dim for several block/grid shapes and warps, with full,
    partial and empty masks, uniform or not (inactive lanes of a per-lane register keep their
    values)."""
    spec = ISA.by_name[name]
    dims = (0, 1, 2) if any(o.kind == "dim" for o in spec.operands) else (0,)
    rng = np.random.default_rng(spec.opcode)
    for ctx in CTXS:
        for dim in dims:
            for trial, mask in enumerate((FULL, random_mask(rng), 0, random_mask(rng))):
                code, imm = blank_code(name)
                code[PC, C_DTYPE] = I32
                code[PC, C_DST] = rng.integers(0, N_REGS)
                code[PC, C_AUX] = dim
                code[PC, C_UNIFORM] = trial == 3
                state = make_state(rng, int_values(rng, N_REGS * 32).reshape(N_REGS, 32))
                state["ctx"] = np.array(ctx, np.int64)
                run_both(ex, code, imm, mask, state, f"{name} ctx={ctx} dim={dim} mask={mask:#x}")


# ---------------------------------------------------------------- lane memory

def offsets(rng, count, pattern):
    """32 per-lane element offsets following pattern, within [0, count) unless pattern says."""
    lane = np.arange(32)
    start = int(rng.integers(0, count))
    if pattern == "contiguous":
        out = (start + lane) % count
    elif pattern == "strided":
        out = (start + lane * int(rng.integers(2, 9))) % count
    elif pattern == "broadcast":
        out = np.full(32, start)
    elif pattern == "random":
        out = rng.integers(0, count, 32)
    else:                                   # "oob": a few lanes past either end
        out = rng.integers(0, count, 32)
        bad = rng.choice(32, int(rng.integers(1, 4)), replace=False)
        out[bad] = rng.choice([-1, -1000, count, count + 17, 2**31 - 1], bad.size)
    return out.astype(np.float64)


PATTERNS = ("contiguous", "strided", "broadcast", "random", "oob")


def memory_trial(rng, name, trial):
    """One lane-memory instruction with its state: (code, imm, mask, state, sector, what)."""
    spec = ISA.by_name[name]
    code, imm = blank_code(name)
    if MEMORY_OPS[name] == "hbm":
        slot = int(rng.integers(0, 3 if spec.family in ("atomic", "fma_store") else len(SLOTS)))
        dt, count = SLOTS[slot][0], SLOTS[slot][1]
        code[PC, C_AUX] = slot
        if spec.family == "atomic":
            code[PC, C_AUX + 2] = 1             # atomics: aux2 says HBM
    else:
        dt = dtypes.BY_NAME[spec.dtypes[int(rng.integers(0, len(spec.dtypes)))]].code
        count = int(rng.integers(1, 60))
        code[PC, C_AUX] = rng.integers(0, L1_WORDS - count)
        code[PC, C_AUX + 1] = count
    code[PC, C_DTYPE] = dt
    int_flag = spec.family == "fma_store" and (dt == I32 or rng.random() < 0.3)
    # an int32 atomic's operands are int32 (the compiler converts them)
    values = int_values if int_flag or dt in (I8, U8, I16) or \
        (dt == I32 and (rng.random() < 0.5 or spec.family == "atomic")) else float_values
    if dt == dtypes.uint32.code:                # uint32 operands are uint32 values, likewise
        values = lambda rng, n: int_values(rng, n) % 2.0**32  # noqa: E731
    regs = values(rng, N_REGS * 32).reshape(N_REGS, 32)
    pattern = PATTERNS[trial % len(PATTERNS)]
    off_reg = int(rng.integers(0, N_REGS))
    regs[off_reg] = offsets(rng, count, pattern)
    if pattern == "broadcast" and rng.random() < 0.5:
        imm[PC, 0] = regs[off_reg, 0]       # the same offset as an immediate
    else:
        code[PC, C_SRC] = off_reg
    n_values = len(spec.value_operands) - 1
    for j in range(1, 1 + n_values):
        if rng.random() < 0.25:
            imm[PC, j] = values(rng, 1)[0]
        else:
            code[PC, C_SRC + j] = rng.choice([r for r in range(N_REGS) if r != off_reg])
    if spec.result != "none":
        code[PC, C_DST] = rng.choice([r for r in range(N_REGS) if r != off_reg])
    if spec.family == "fma_store":
        code[PC, C_AUX + 1] = 1 if int_flag else 0
    mask = (FULL, random_mask(rng), random_mask(rng), 1 << int(rng.integers(0, 32)), 0)[
        (trial // len(PATTERNS)) % 5]
    code[PC, C_UNIFORM] = 1 if rng.random() < 0.3 and spec.family != "atomic" else 0
    sector = int(rng.choice([32, 64, 128]))
    what = f"{name} dtype={dt} pattern={pattern} mask={mask:#x} sector={sector} trial={trial}"
    state = make_state(rng, regs)
    if spec.family == "atomic" and dt == I32:     # an int32 buffer holds int32 values
        state["l1"] = int_values(rng, L1_WORDS)
    if spec.family == "atomic" and dt == dtypes.uint32.code:      # and a uint32 one uint32s
        state["l1"] = int_values(rng, L1_WORDS) % 2.0**32
    return code, imm, mask, state, sector, what


@pytest.mark.parametrize("name", sorted(MEMORY_OPS))
def test_memory_matches_reference(ex, name):
    """Loads, stores and FMA_STORE on HBM slots and L1 ranges: contiguous, strided, broadcast,
    random and out-of-bounds offsets (status and info[0..4] must match: faulting lane, offset,
    count, bytes moved from sector counting, lanes), partial masks and the uniform flag. After
    a store, both executors' commits (commit_gm to HBM, commit_store to L1) must leave memory
    identical. The HBM slots hold every dtype a lane loads or stores, int8 to bfloat16."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(1000 + spec.opcode)
    statuses = set()
    for trial in range(140):
        code, imm, mask, state, sector, what = memory_trial(rng, name, trial)
        status, ref_state, numba_state = run_both(ex, code, imm, mask, state, what, sector)
        statuses.add(status)
        if spec.family in ("store", "fma_store") and status == reference.ST_OK:
            n = int(ref_state["info"][4])
            for impl, s in ((ex, numba_state), (reference, ref_state)):
                if MEMORY_OPS[name] == "hbm":
                    impl.commit_gm(s["hbm"], s["pend_idx"], s["pend_val"], n, int(code[PC, C_DTYPE]))
                else:
                    impl.commit_store(s["l1"], s["pend_idx"], s["pend_val"], n)
            for target in ("hbm", "l1"):
                assert_same(numba_state[target], ref_state[target], f"{what}: {target} after commit")
    assert statuses == {reference.ST_OK, reference.ST_OOB}, "both in-bounds and faults exercised"


@pytest.mark.parametrize("name", WARP_OPS)
def test_warp_exchange_matches_reference(ex, name):
    """Shuffles and votes: random registers, lane / delta / mask operands in and out of
    0..31 (registers or immediates), partial masks, the uniform flag, dst equal to the
    shuffled source (every result is read before any is written)."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(3000 + spec.opcode)
    for trial in range(60):
        code, imm = blank_code(name)
        regs = (int_values if rng.random() < 0.5 else float_values)(rng, N_REGS * 32).reshape(N_REGS, 32)
        src = int(rng.integers(0, N_REGS))
        code[PC, C_SRC] = src
        if len(spec.value_operands) > 1:
            k = int(rng.integers(0, N_REGS))
            regs[k] = rng.choice([0, 1, 2, 5, 16, 31, 32, 40, -1, -33], 32)
            if rng.random() < 0.3:
                imm[PC, 1] = float(rng.choice([1, 3, 16, 31, 32]))
            else:
                code[PC, C_SRC + 1] = k
        code[PC, C_DST] = src if rng.random() < 0.3 else int(rng.integers(0, N_REGS))
        code[PC, C_DTYPE] = dtypes.BY_NAME[spec.dtypes[0]].code
        code[PC, C_UNIFORM] = 1 if rng.random() < 0.2 else 0
        mask = (FULL, random_mask(rng), 1 << int(rng.integers(0, 32)))[trial % 3]
        status, _, _ = run_both(ex, code, imm, mask, make_state(rng, regs), f"{name} trial={trial}")
        assert status == reference.ST_OK


GROUP_OPS = ["VOTE_ALL", "VOTE_ANY", "VOTE_EQ", "BALLOT", "MATCH_ANY", "MATCH_ALL"]


@pytest.mark.parametrize("name", GROUP_OPS)
def test_votes_and_matches_with_lane_masks_match_reference(ex, name):
    """Votes, ballots and matches over each lane's group (the active lanes in its mask operand):
    one immediate mask for all lanes (-1, random, a single lane) or per-lane masks in a register
    (all equal, or each lane its own), values from a few words (0.0, -0.0, 1.0, NaN, -1) so
    that lanes match, and dst equal to a source."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(5000 + spec.opcode)
    for trial in range(80):
        code, imm = blank_code(name)
        regs = rng.choice([0.0, -0.0, 1.0, math.nan, -1.0], (N_REGS, 32))
        src, k = (int(v) for v in rng.choice(N_REGS, 2, replace=False))
        code[PC, C_SRC] = src
        masks = [wrap(random_mask(rng)) for _ in range(3)]
        if trial % 3 == 0:
            imm[PC, 1] = float(rng.choice([-1, masks[0], wrap(1 << int(rng.integers(0, 32)))]))
            code[PC, C_SRC + 1] = -1
        else:
            regs[k] = masks[0] if trial % 3 == 1 else rng.choice(masks + [-1], 32)
            code[PC, C_SRC + 1] = k
        code[PC, C_DST] = (src, k, int(rng.integers(0, N_REGS)))[trial % 3]
        code[PC, C_DTYPE] = dtypes.BY_NAME[spec.dtypes[0]].code
        code[PC, C_UNIFORM] = 1 if rng.random() < 0.2 else 0
        mask = (FULL, random_mask(rng), 1 << int(rng.integers(0, 32)))[trial % 3]
        status, _, _ = run_both(ex, code, imm, mask, make_state(rng, regs), f"{name} trial={trial}")
        assert status == reference.ST_OK


def wrap(m):
    """A 32-bit lane mask as the int32 word a register holds."""
    return m - (1 << 32) if m >= 1 << 31 else m


@pytest.mark.parametrize("name", LOCAL_OPS)
def test_local_arrays_match_reference(ex, name):
    """Local-array loads and stores: arrays of 1..5 slots anywhere in the register file,
    indices in range, past either end (a fault, nothing written), registers or immediates."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(4000 + spec.opcode)
    statuses = set()
    for trial in range(80):
        code, imm = blank_code(name)
        n = int(rng.integers(1, 6))
        base = int(rng.integers(0, N_REGS - n + 1))
        code[PC, C_AUX], code[PC, C_AUX + 1] = base, n
        dt = dtypes.BY_NAME[("float32", "float16", "int32")[trial % 3]].code
        code[PC, C_DTYPE] = dt
        regs = (int_values if dt == I32 else float_values)(rng, N_REGS * 32).reshape(N_REGS, 32)
        k = int(rng.integers(0, N_REGS))
        regs[k] = rng.integers(-1 if trial % 4 == 0 else 0, n + (1 if trial % 4 == 1 else 0), 32)
        if rng.random() < 0.2:
            imm[PC, 0] = float(rng.integers(0, n))
        else:
            code[PC, C_SRC] = k
        if name == "LOCAL_STORE":
            code[PC, C_SRC + 1] = int(rng.integers(0, N_REGS))
        else:
            code[PC, C_DST] = int(rng.integers(0, N_REGS))
        mask = (FULL, random_mask(rng), 1 << int(rng.integers(0, 32)))[trial % 3]
        status, _, _ = run_both(ex, code, imm, mask, make_state(rng, regs), f"{name} trial={trial}")
        statuses.add(status)
    assert statuses == {reference.ST_OK, reference.ST_OOB}


def test_store_duplicate_addresses_commit_in_lane_order(ex):
    """Two lanes storing to one element: pairs are gathered in lane order and the higher lane
    wins at commit, in both executors; one sector is counted once."""
    rng = np.random.default_rng(7)
    code, imm = blank_code("STORE")
    code[PC, C_AUX], code[PC, C_DTYPE] = 0, F32
    code[PC, C_SRC], code[PC, C_SRC + 1] = 0, 1
    regs = np.zeros((N_REGS, 32))
    regs[0] = 5.0
    regs[1] = np.arange(32) + 0.25
    status, ref_state, numba_state = run_both(ex, code, imm, FULL, make_state(rng, regs), "dup")
    assert status == reference.ST_OK and ref_state["info"][3] == 32 and ref_state["info"][4] == 32
    for impl, s in ((ex, numba_state), (reference, ref_state)):
        impl.commit_gm(s["hbm"], s["pend_idx"], s["pend_val"], 32, F32)
        assert gm.load(s["hbm"], [0x1000 + 5 * 4], dtypes.float32)[0] == 31.25


# ---------------------------------------------------------------- the rest and coverage

def test_other_families_do_nothing(ex):
    """alloc, sync and control instructions change no state in either executor."""
    rng = np.random.default_rng(3)
    for spec in ISA.specs:
        if spec.family in EXECUTED_FAMILIES:
            continue
        code, imm = blank_code(spec.name)
        code[PC, C_DST] = 0
        state = make_state(rng, float_values(rng, N_REGS * 32).reshape(N_REGS, 32))
        status, _, _ = run_both(ex, code, imm, FULL, state, spec.name)
        assert status == reference.ST_OK


def test_reference_known_answers():
    """Anchor the spec itself on hand-checked values, so that both executors cannot drift
    together: rounding ties, f16 overflow, saturating casts, int wrap, Python floor division."""
    r = reference
    assert r.to_dtype(F16, 1 + 2.0**-11 + 2.0**-40) == 1 + 2.0**-10    # no double rounding
    assert r.to_dtype(F16, 1 + 2.0**-11) == 1.0                        # tie to even
    assert r.to_dtype(F16, 65519.99) == 65504.0 and r.to_dtype(F16, 65520.0) == math.inf
    assert r.to_dtype(F32, 16777217.0) == 16777216.0
    assert r.to_dtype(I32, 3e9) == I32_MAX and r.to_dtype(I32, -math.inf) == I32_MIN
    assert r.to_dtype(I32, math.nan) == 0 and r.to_dtype(I32, -2.9) == -2.0
    assert r.to_dtype(BOOL, math.nan) == 1.0 and r.to_dtype(BOOL, -0.0) == 0.0
    ev = r.evaluate
    assert ev(ISA["ADD"], I32_MAX, 1, 0, True, I32) == I32_MIN
    assert ev(ISA["FLOORDIV"], -7, 2, 0, True, I32) == -4 and ev(ISA["FLOORDIV"], 3, 0, 0, True, I32) == 0
    assert ev(ISA["MOD"], -7, 2, 0, True, I32) == 1 and ev(ISA["MOD"], -7.0, 2.0, 0, False, F32) == 1.0
    # shifts by 32 or more (or negative) give 0, or -1 for a negative x >> n, as numpy
    assert ev(ISA["SHR"], -8, 33, 0, True, I32) == -1 and ev(ISA["SHL"], 1, 32, 0, True, I32) == 0
    assert ev(ISA["SHR"], -8, 2, 0, True, I32) == -2 and ev(ISA["INV"], 0, 0, 0, True, I32) == -1
    assert math.isnan(ev(ISA["MIN"], math.nan, 1.0, 0, False, F32))
    # the tile multiply-adds round the product to the dtype first: (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20
    # is 1 + 2^-9 in float16 (2^-20 is below half its ulp there, 2^-11), so adding -(1 + 2^-9) gives 0;
    # float32 holds the product exactly, and one rounding in float16 would give 2^-20 (subnormal)
    x = 1 + 2.0**-10
    assert ev(ISA["TMULADDDST"], x, x, -(1 + 2.0**-9), False, F16) == 0.0
    assert ev(ISA["TMULADDDST"], x, x, -(1 + 2.0**-9), False, F32) == 2.0**-20
    # integer TPOW is A2/A3's TPowICore: 0 ** 0 = 1, (-1) ** 7 = -1, 2 ** -1 = 0 (a negative
    # exponent), 3 ** 21 = 10460353203 wraps to 10460353203 - 2 x 2^32 = 1870418611
    assert [ev(ISA["TPOW"], b, e, 0, True, I32) for b, e in ((0, 0), (-1, 7), (2, -1), (3, 21))] == \
        [1, -1, 0, 1870418611]


def test_every_executed_instruction_is_covered():
    """Fails when the ISA gains an instruction of an executed family that no differential test
    above exercises (lane-memory instructions are listed by hand in MEMORY_OPS)."""
    covered = set(ALU_OPS) | set(ID_OPS) | set(MEMORY_OPS) | set(WARP_OPS) | set(LOCAL_OPS)
    needed = {s.name for s in ISA.specs if s.family in EXECUTED_FAMILIES}
    assert needed - covered == set(), f"no differential test for {sorted(needed - covered)}"
    stale = {n for n in MEMORY_OPS if n not in ISA.by_name or
             ISA[n].family not in ("load", "store", "fma_store", "atomic")}
    assert not stale, f"MEMORY_OPS lists non-memory instructions {sorted(stale)}"
    assert set(reference.L1_OPS) == {n for n, where in MEMORY_OPS.items()
                                     if where == "l1" and ISA[n].family != "atomic"}
