"""Differential tests of the tile kernels: the numba executor's against the reference's (the spec).

The timing model computes every tile instruction's values with the numba kernels
(``executor().tile_load`` ... ``tile_row_expand``) at the cycle the instruction completes.
``pypto_sim.exec.reference`` has kernels with the same signatures written to be obviously
right. Here both run on identical random L1 / HBM state (values of the instruction's dtype,
with NaN, infinities, signed zeros, float16 overflow and rounding ties mixed in) and every word
of both arrays must come out identical: NaN equals NaN, +0.0 and -0.0 differ, and words the
instruction must not touch have to keep their values.

The tile_alu and tile_reduce cases are derived from the ISA table, so a new instruction of
those families is tested without editing this file; ``test_every_tile_instruction_is_covered``
fails when a tile instruction of any other family has no case here.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pypto_sim import dtypes
from pypto_sim.exec import gm, reference
from pypto_sim.exec.aicore_tiles import _blas_matmul
from pypto_sim.exec.lane import executor
from pypto_sim.isa import TILE_FAMILIES, load_isa

ISA = load_isa()
F32, F16, I32 = dtypes.float32.code, dtypes.float16.code, dtypes.int32.code
NUMPY = {F32: np.float32, F16: np.float16, I32: np.int32, dtypes.int16.code: np.int16}

TILE_CONVERT = [s for s in ISA.specs if s.family == "tile_alu" and any(o.name == "mode" for o in s.value_operands)]
TILE_ALU = [s for s in ISA.specs if s.family == "tile_alu" and s not in TILE_CONVERT]
TILE_REDUCE = [s for s in ISA.specs if s.family == "tile_reduce"]
TILE_EXPAND_OP = [s for s in ISA.specs if s.family == "tile_expand_op"]
TILE_COL_REDUCE = [s for s in ISA.specs if s.family == "tile_col_reduce"]
TILE_COL_EXPAND_OP = [s for s in ISA.specs if s.family == "tile_col_expand_op"]
TILE_MASK = [s for s in ISA.specs if s.family in ("tile_cmp", "tile_sel")]
# the instructions of the other value-computing tile families, each tested by hand below
HAND_TESTED = {"tile_load": {"TLOAD",
                             # TLOAD-shaped DMAs through tile_load's kernels: both executors against
                             # hand-derived values in tests/test_tprefetch.py
                             "TPREFETCH"},
               "tile_store": {"TSTORE"}, "tile_mma": {"MMA"},
               "tile_expand": {"TROWEXPAND"}, "tile_col_expand": {"TCOLEXPAND"},
               "tile_fillpad": {"TFILLPAD", "TFILLPAD_INPLACE", "TFILLPAD_EXPAND"},
               "tile_row_arg": {"TROWARGMAX", "TROWARGMIN"}, "tile_col_arg": {"TCOLARGMAX", "TCOLARGMIN"},
               "tile_trans": {"TTRANS"}, "tile_trans_conv": {"TTRANS_CONV"},
               # tests/test_gm_index.py: numba against reference (NaN bit for bit) and numpy; the GM -> L1
               # forms (the same kernels) in both executors in tests/test_ptoisa_npu_mgather_gm2l1.py
               "tile_gm_gather": {"MGATHER", "MGATHER_ELEM", "MGATHER_L1", "MGATHER_L1_ELEM"},
               "tile_gm_scatter": {"MSCATTER", "MSCATTER_ELEM"},
               # tests/test_sort_ops.py: numba against reference, and against hand-derived values
               "tile_sort": {"TSORT32", "TMRGSORT", "TMRGSORT_LISTS", "TGATHER",
                             # tests/test_gather_indexed.py and tests/test_scatter_ops.py likewise
                             "TGATHER_IDX", "TSCATTER_IDX", "TSCATTER", "TSCATTER_COL",
                             # tests/test_gather_blocks.py
                             "TGATHERB"},
               # the AI core's instructions: their kernels (tile_gather, tile_scatter,
               # tile_matmul) above; whole kernels between executors in
               # tests/test_aicore_executors.py, against numpy in tests/test_aicore_values.py
               "aicore": {"TEXTRACT", "TMOV", "TMOV_ACC", "TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS",
                          "TGEMV", "TGEMV_ACC", "TGEMV_BIAS",
                          "TSTORE_ACC",
                          # the vector quantization: tile_store_quant_words and the quant words' moves in
                          # both executors, timing and functional, against quantize_element on special
                          # values and words in tests/test_ptoisa_npu_store_acc_quant_vector.py
                          "TSTORE_FP", "TMOV_M2S",
                          # tests/test_img2col.py: tile_img2col numba against reference and numpy
                          "TIMG2COL",
                          # tile_gather's windows between Vec tiles: tests/test_vec_windows.py
                          "TEXTRACT_V2V", "TINSERT_V2V",
                          # tile_gather's windows into NZ Vec tiles (values held row-major):
                          # tests/test_ptoisa_npu_textract_nz.py
                          "TEXTRACT_ND2NZ"}}
NO_VALUES = ("tile_sync",)          # wait_all / flags: timing only, no kernel computes values

L1_WORDS = 2048
HBM_WORDS = 2048
SENTINEL = -12345.0                 # L1 words no instruction under test may write
SENTINEL_BYTE = 0xA5                # HBM bytes no tile store under test may write

F_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, math.nan, math.inf, -math.inf,
             65504.0, 65519.0, 65520.0, -65536.0, 1e-8, -6e-8, 2.0**-24, 3 * 2.0**-26,
             1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-11 + 2.0**-23, 2049.0,
             3.4028234663852886e38, -3.4028234663852886e38, 1e30, 3e9, -3e9, 2147483520.0,
             16777217.0, 1.401298464324817e-45, 0.1, -0.3, 88.7, 89.0, -104.0, 11.1, -17.4]


@pytest.fixture(scope="module")
def ex():
    """The numba executor module (compiled once per process, cached on disk)."""
    return executor()


# ---------------------------------------------------------------- values and comparison

def values(rng, n, dt):
    """n float64 words holding values of dtype code dt: specials, normals over many magnitudes,
    small integers and (int32) full-range integers, each rounded to dt the way memory holds it."""
    kind = rng.integers(0, 5, n)
    normal = rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 6, n)
    out = np.where(kind == 0, rng.choice(F_SPECIAL, n), normal)
    out = np.where(kind == 1, rng.standard_normal(n), out)
    out = np.where(kind == 2, rng.integers(-40, 41, n).astype(np.float64), out)
    if dt == I32:
        out = np.where(kind == 3, rng.integers(-2**31, 2**31, n) * 1.0, out)
        out = np.nan_to_num(out, nan=7.0, posinf=2**31 - 1, neginf=-2**31)
        return np.clip(np.trunc(out), -2**31, 2**31 - 1) + 0.0     # an int32 word has no -0
    narrow = {dtypes.int16.code: np.int16, dtypes.int8.code: np.int8, dtypes.uint8.code: np.uint8,
              dtypes.uint16.code: np.uint16, dtypes.uint32.code: np.uint32}
    if dt in narrow:                                    # the other integer tiles, wrapped
        out = np.where(kind == 3, rng.integers(-2**31, 2**32, n) * 1.0, out)
        out = np.trunc(np.nan_to_num(out, nan=7.0, posinf=300.0, neginf=-300.0))
        return np.clip(out, -2**31, 2**32 - 1).astype(np.int64).astype(narrow[dt]).astype(np.float64)
    if dt == dtypes.bfloat16.code:                      # TCVT's bfloat16 results
        return dtypes.host_words(out.astype(np.float32), dtypes.bfloat16)
    with np.errstate(over="ignore"):
        return out.astype(NUMPY[dt]).astype(np.float64)


def assert_same(got, want, what):
    """Arrays equal word by word, NaN equal to NaN, and signed zeros told apart."""
    np.testing.assert_array_equal(got, want, err_msg=what)
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got) & keep, np.signbit(want) & keep,
                                  err_msg=f"{what}: sign of zero differs")


def run_both(ex, name, state, args, what):
    """Call kernel ``name`` of both executors on copies of state (a dict of arrays, passed in
    place of the arg names given as strings in args); every array must come out identical."""
    results = []
    for impl in (ex, reference):
        s = {k: v.copy() for k, v in state.items()}
        call = [s[a] if isinstance(a, str) else a for a in args]
        with np.errstate(all="ignore"):
            getattr(impl, name)(*call)
        results.append(s)
    for key in state:
        assert_same(results[0][key], results[1][key], f"{what}: {key}")
    return results[1]


def regions(rng, sizes, limit=L1_WORDS):
    """Disjoint [base, base + size) word ranges in an array of limit words, in random order
    with random gaps between them."""
    order = rng.permutation(len(sizes))
    slack = limit - sum(sizes)
    assert slack >= 0, f"regions {sizes} do not fit in {limit} words"
    gaps = np.sort(rng.integers(0, slack + 1, len(sizes)))
    bases, pos, used = [0] * len(sizes), 0, 0
    for i, j in enumerate(order):
        pos = used + int(gaps[i])
        bases[j] = pos
        used += int(sizes[j])
    return bases


# ---------------------------------------------------------------- DMA: tile_load / tile_store

# rows, cols, stride: one element, one row, one column, dense (stride == cols), padded rows,
# odd sizes, stride 0 (every row reads the same source row) and overlapping rows
DMA_SHAPES = [(1, 1, 1), (1, 37, 37), (23, 1, 5), (4, 16, 16), (7, 13, 29), (16, 32, 40),
              (3, 5, 0), (5, 9, 4), (32, 31, 33), (2, 100, 100)]


GM_DTYPES = [F32, F16, I32, dtypes.int8.code, dtypes.uint8.code, dtypes.int16.code,
             dtypes.uint16.code, dtypes.uint32.code, dtypes.bfloat16.code]


def gm_image(rng, dt):
    """(HBM bytes holding HBM_WORDS random dt elements, those elements as float64)."""
    d = dtypes.BY_CODE[dt]
    elements = values(rng, HBM_WORDS, dt if d in dtypes.TILE_DTYPES or d == dtypes.uint32 else
                      (I32 if not d.is_float else F32))
    raw = gm.encode(elements.astype(np.int64) if not d.is_float else elements, d)
    return raw.copy(), gm.decode(raw, d).astype(np.float64)


@pytest.mark.parametrize("dt", GM_DTYPES)
def test_tile_load_matches_reference(ex, dt):
    """async_load copies rows x cols HBM elements (rows ``stride`` apart, element 0 at a byte
    address) into a dense tile: each element decoded from its dtype's bytes, no rounding (the
    tile has the tensor's dtype), nothing else in L1 changes."""
    rng = np.random.default_rng(100 + dt)
    item = dtypes.BY_CODE[dt].itemsize
    for rows, cols, stride in DMA_SHAPES:
        span = (rows - 1) * stride + cols
        src, = regions(rng, [span], HBM_WORDS)
        dst, = regions(rng, [rows * cols])
        hbm, elements = gm_image(rng, dt)
        state = dict(l1=values(rng, L1_WORDS, F32), hbm=hbm)
        out = run_both(ex, "tile_load", state, ["l1", dst, "hbm", src * item, rows, cols, stride, dt],
                       f"TLOAD dt={dt} rows={rows} cols={cols} stride={stride}")
        want = np.stack([elements[src + r * stride: src + r * stride + cols]
                         for r in range(rows)]).reshape(-1)
        assert_same(out["l1"][dst:dst + rows * cols], want, "TLOAD against numpy")


@pytest.mark.parametrize("dt", GM_DTYPES)
def test_tile_store_matches_reference(ex, dt):
    """The tile store writes a dense tile into HBM rows ``stride`` elements apart, each value
    rounded to the tensor's dtype (float32 tile values into float16 overflow to inf or round to
    even, into int32 truncate and saturate, NaN -> 0) and held in its bytes; HBM bytes outside
    the rows keep their values."""
    rng = np.random.default_rng(200 + dt)
    d = dtypes.BY_CODE[dt]
    item = d.itemsize
    # an int8 / uint8 / int16 tensor takes int32 values (they wrap)
    for tile_dt in (F32, F16, I32) if d.is_float or dt == I32 else (I32,):
        for rows, cols, stride in DMA_SHAPES:
            if stride == 0:
                continue            # every row onto the same words: only the last would count
            span = (rows - 1) * stride + cols
            dst, = regions(rng, [span], HBM_WORDS)
            src, = regions(rng, [rows * cols])
            state = dict(hbm=np.full(HBM_WORDS * item, SENTINEL_BYTE, np.uint8),
                         l1=values(rng, L1_WORDS, tile_dt))
            what = f"TSTORE dt={dt} tile dt={tile_dt} rows={rows} cols={cols} stride={stride}"
            out = run_both(ex, "tile_store", state,
                           ["hbm", dst * item, "l1", src, rows, cols, stride, dt], what)
            written = np.zeros(HBM_WORDS * item, bool)
            for r in range(rows):
                written[(dst + r * stride) * item:(dst + r * stride + cols) * item] = True
            assert (out["hbm"][~written] == SENTINEL_BYTE).all(), f"{what}: wrote outside the rows"


def test_tile_store_rounds_like_numpy(ex):
    """Anchor the rounding on numpy's own conversions, so both kernels cannot drift together;
    the bytes written are numpy's bytes of those values."""
    tile = np.array([1 + 2.0**-11, 65519.99, 65520.0, -3e9, math.nan, -2.9, 1e-8, 2.0**-25])
    l1 = tile.copy()
    with np.errstate(over="ignore"):
        as_f16 = np.array([np.float16(v) for v in tile], np.float16)
    for dt, expect in ((F16, as_f16), (I32, np.array([1, 65519, 65520, -2**31, 0, -2, 0, 0], np.int32))):
        for impl in (ex, reference):
            hbm = np.zeros(8 * expect.itemsize, np.uint8)
            with np.errstate(all="ignore"):
                impl.tile_store(hbm, 0, l1, 0, 1, 8, 8, dt)
            assert hbm.tobytes() == expect.tobytes(), f"{impl.__name__} dt={dt}"


# ---------------------------------------------------------------- MMA

MMA_SHAPES = [(1, 1, 1), (1, 8, 1), (5, 1, 3), (1, 1, 17), (4, 4, 4), (3, 5, 7), (7, 3, 5),
              (16, 16, 16), (17, 9, 33), (2, 31, 1), (32, 16, 8), (9, 40, 23)]


@pytest.mark.parametrize("in_dt", [F32, F16])
def test_tile_mma_matches_reference(ex, in_dt):
    """C[m,n] += A[m,k] @ B[k,n] with float32 accumulation (dt float32): unit, odd, non-square
    and k = 1 shapes; float32- or float16-valued inputs; C starting at zero or holding values;
    a few cases with NaN / inf among the inputs. Also checked against numpy in float64."""
    rng = np.random.default_rng(300 + in_dt)
    for trial, (m, n, k) in enumerate(MMA_SHAPES * 2):
        c, a, b = regions(rng, [m * n, m * k, k * n])
        l1 = values(rng, L1_WORDS, F32)
        scale = 1.0 if in_dt == F32 else 0.25
        l1[a:a + m * k] = (rng.standard_normal(m * k) * scale).astype(NUMPY[in_dt])
        l1[b:b + k * n] = (rng.standard_normal(k * n) * scale).astype(NUMPY[in_dt])
        if trial < len(MMA_SHAPES):
            l1[c:c + m * n] = 0.0               # a fresh accumulator
        else:
            l1[c:c + m * n] = rng.standard_normal(m * n).astype(np.float32)
        finite = trial % 5 != 4
        if not finite:                          # specials: NaN and inf reach C
            l1[a + int(rng.integers(0, m * k))] = rng.choice([math.nan, math.inf, -math.inf])
        state = dict(l1=l1)
        out = run_both(ex, "tile_mma", state, ["l1", c, a, b, m, n, k, F32],
                       f"MMA in={in_dt} m={m} n={n} k={k} trial={trial}")
        if finite:
            want = (l1[c:c + m * n].reshape(m, n)
                    + l1[a:a + m * k].reshape(m, k) @ l1[b:b + k * n].reshape(k, n))
            np.testing.assert_allclose(out["l1"][c:c + m * n], want.reshape(-1),
                                       rtol=1e-5, atol=1e-5)


def test_tile_mma_accumulates_in_order_and_rounds_once(ex):
    """One rounding to float32 of the exact sum (tile_matmul): 1 + 2^-30 + 2^-30 - 1 = 2^-29
    (per-step float32 rounding would lose both 2^-30 and give 0)."""
    for impl in (ex, reference):
        l1 = np.zeros(8)
        l1[0] = 1.0                              # C (1x1)
        l1[1:4] = [2.0**-30, 1.0, -1.0]          # A (1x3)
        l1[4:7] = [1.0, 2.0**-30, 1.0]           # B (3x1): C += 2^-30 + 2^-30 - 1
        impl.tile_mma(l1, 0, 1, 4, 1, 1, 3, F32)
        assert l1[0] == np.float32(2.0**-29), impl.__name__


# ---------------------------------------------------------------- typed tiles: gather, scatter, matmul

# rows, cols, source pitch, destination pitch: one element, a row, a column, dense, windows of
# wider tiles (pitch > cols), GM row strides and a zero stride (every row the same source)
WINDOW_SHAPES = [(1, 1, 1, 1), (1, 37, 37, 40), (23, 1, 5, 1), (4, 16, 16, 16), (7, 13, 29, 13),
                 (16, 32, 40, 64), (3, 5, 0, 5), (9, 40, 41, 48)]


@pytest.mark.parametrize("dt", [-1, F32, F16, dtypes.bfloat16.code, I32])
def test_tile_gather_and_scatter_match_reference(ex, dt):
    """tile_gather reads a rows x cols window (rows spitch apart) into a dense block, rounding
    each value to dt (dt -1: as it is: TLOAD, TEXTRACT, TMOV); tile_scatter writes a dense block
    into a window (rows dpitch apart) and touches no other word. Specials included."""
    rng = np.random.default_rng(700 + dt)
    for rows, cols, spitch, dpitch in WINDOW_SHAPES:
        src, dst = regions(rng, [max(rows - 1, 0) * spitch + cols, (rows - 1) * dpitch + cols])
        mem = values(rng, L1_WORDS, F32)
        state = dict(mem=mem, out=np.full(rows * cols, SENTINEL))
        out = run_both(ex, "tile_gather", state, ["out", "mem", src, spitch, rows, cols, dt],
                       f"gather dt={dt} {rows}x{cols} pitch {spitch}")["out"]
        window = np.array([mem[src + r * spitch: src + r * spitch + cols] for r in range(rows)]).ravel()
        if dt < 0:
            assert_same(out, window, "a gather without dt copies exactly")
        state = dict(mem=np.full(L1_WORDS, SENTINEL), buf=out)
        got = run_both(ex, "tile_scatter", state, ["mem", dst, dpitch, "buf", rows, cols],
                       f"scatter {rows}x{cols} pitch {dpitch}")["mem"]
        mask = np.zeros(L1_WORDS, bool)
        for r in range(rows):
            mask[dst + r * dpitch: dst + r * dpitch + cols] = True
        assert_same(got[mask], out, "the window holds the block")
        assert (got[~mask] == SENTINEL).all(), "a scatter writes its window only"


# m, n, k, and the pitches of c, a and b beyond their widths: unit, odd, m not a multiple of
# the kernel's four-row step, k = 1, GEMV (m = 1) and windows of wider tiles
MATMUL_SHAPES = [(1, 1, 1, 0, 0, 0), (5, 3, 7, 0, 0, 0), (16, 16, 16, 0, 0, 0), (17, 9, 33, 3, 1, 2),
                 (1, 32, 24, 0, 0, 16), (6, 31, 1, 1, 4, 0), (32, 16, 8, 16, 8, 0), (3, 40, 23, 0, 9, 24)]


@pytest.mark.parametrize("init", [0, 1, 2])
@pytest.mark.parametrize("in_dt", [F32, F16, dtypes.bfloat16.code, dtypes.int8.code])
def test_tile_matmul_matches_reference(ex, in_dt, init):
    """TMATMUL (init 0), TMATMUL_ACC / TGEMV_ACC (init 1: C's old values) and TMATMUL_BIAS /
    TGEMV_BIAS (init 2: the bias row) on windows of pitched tiles, for every A2/A3 input
    dtype (int8 in, int32 out; the rest float32 out), some with NaN / inf among the inputs;
    the float results also against numpy in float64, rounded once to float32."""
    rng = np.random.default_rng(800 + 10 * in_dt + init)
    out_dt = I32 if in_dt == dtypes.int8.code else F32
    for trial, (m, n, k, cx, ax, bx) in enumerate(MATMUL_SHAPES * 2):
        cp, ap, bp = n + cx, k + ax, n + bx
        c, a, b, bias = regions(rng, [(m - 1) * cp + n, (m - 1) * ap + k, (k - 1) * bp + n, n])
        l1 = values(rng, L1_WORDS, out_dt)
        if in_dt == dtypes.int8.code:
            l1[a:a + (m - 1) * ap + k] = rng.integers(-128, 128, (m - 1) * ap + k)
            l1[b:b + (k - 1) * bp + n] = rng.integers(-128, 128, (k - 1) * bp + n)
        else:
            for base, count in ((a, (m - 1) * ap + k), (b, (k - 1) * bp + n)):
                normal = dtypes.host_words(rng.standard_normal(count).astype(np.float32),
                                           dtypes.BY_CODE[in_dt])
                l1[base:base + count] = values(rng, count, in_dt) if trial % 4 == 3 else normal
        state = dict(l1=l1, out=np.full(m * n, SENTINEL))
        got = run_both(ex, "tile_matmul", state,
                       ["out", "l1", c, cp, a, ap, b, bp, m, n, k, init, bias, out_dt],
                       f"matmul in={in_dt} init={init} {m}x{n}x{k} trial={trial}")["out"]
        A = np.array([l1[a + r * ap: a + r * ap + k] for r in range(m)])
        B = np.array([l1[b + r * bp: b + r * bp + n] for r in range(k)])
        C = np.array([l1[c + r * cp: c + r * cp + n] for r in range(m)])
        start = C if init == 1 else np.tile(l1[bias:bias + n], (m, 1)) if init == 2 else 0.0
        with np.errstate(all="ignore"):
            want = start + A @ B
        if in_dt == dtypes.int8.code:
            want = ((want.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.float64)
            assert_same(got, want.ravel(), "int8 products sum exactly")
        elif np.isfinite(A).all() and np.isfinite(B).all() and np.isfinite(start).all():
            np.testing.assert_allclose(got, want.astype(np.float32).ravel(), rtol=1e-6, atol=1e-30)


def test_tile_matmul_rounds_the_exact_sum_once(ex):
    """C = 1 * 1 + 2^-24 * 1 + 2^-30 * 2^-30 = 1 + 2^-24 + 2^-60 exactly, just above the float32
    midpoint 1 + 2^-24 between 1 and 1 + 2^-23, so it rounds up to 1 + 2^-23. A float64 sum
    in any order loses the 2^-60 (53 bits from 1 reach down to 2^-52), lands on the midpoint
    and would round to even, 1.0: the exact sum decides, in both executors and in the BLAS
    path, which sums in BLAS's own order."""
    want = 1 + 2.0**-23
    l1 = np.zeros(16)
    l1[0:3] = [1.0, 2.0**-24, 2.0**-30]         # A (1 x 3)
    l1[3:6] = [1.0, 1.0, 2.0**-30]              # B (3 x 1)
    for impl in (ex, reference):
        out = np.zeros(1)
        impl.tile_matmul(out, l1, 8, 1, 0, 3, 3, 1, 1, 1, 3, 0, 0, F32)
        assert out[0] == want, impl.__name__
    big = np.zeros(3 * 64 + 64 * 64 + 3 * 64)        # the same sum in a matmul BLAS takes
    A = np.zeros((3, 64))
    A[:, :3] = [1.0, 2.0**-24, 2.0**-30]
    B = np.zeros((64, 64))
    B[:3, :] = np.array([1.0, 1.0, 2.0**-30])[:, None]
    big[:192], big[192:192 + 4096] = A.ravel(), B.ravel()
    out = np.zeros(3 * 64)
    assert _blas_matmul(ex, out, big, *tile_views(c=(4288, 64), a=(0, 64), b=(192, 64)),
                        None, 3, 64, 64, 0)
    assert (out == want).all()


def tile_views(**where):
    """Stand-ins for TileView (word base, row pitch; float32 dtype) named c, a, b."""
    class View:
        def __init__(self, base, pitch):
            self.base, self.pitch = base, pitch
            self.buf = type("Buf", (), {"dtype": dtypes.float32})()
    return [View(*where[name]) for name in ("c", "a", "b")]


@pytest.mark.parametrize("init", [0, 1, 2])
def test_blas_matmul_gives_the_executors_bits(ex, init):
    """The AI core's BLAS path (numpy's float64 product, then matmul_finish) against
    tile_matmul and the reference on pitched windows, float16 / float32 inputs and
    cancellations (terms of 2^24 that cancel beside terms of 2^-30), where the order of a
    float64 sum would show."""
    rng = np.random.default_rng(900 + init)
    for trial in range(12):
        m, n, k = (int(x) for x in rng.integers(1, 40, 3))
        cp, ap, bp = n + int(rng.integers(0, 5)), k + int(rng.integers(0, 5)), n + int(rng.integers(0, 5))
        c, a, b, bias = regions(rng, [(m - 1) * cp + n, (m - 1) * ap + k, (k - 1) * bp + n, n],
                                limit=8192)
        l1 = np.zeros(8192)
        pick = [1.0, -1.0, 2.0**12, -2.0**12, 2.0**-15, 1 + 2.0**-10, 0.5, 3.0]
        l1[a:a + (m - 1) * ap + k] = rng.choice(pick, (m - 1) * ap + k) if trial % 2 else \
            rng.standard_normal((m - 1) * ap + k).astype(np.float16)
        l1[b:b + (k - 1) * bp + n] = rng.choice(pick, (k - 1) * bp + n)
        l1[c:c + (m - 1) * cp + n] = rng.choice([0.0, 2.0**24, -1.0, 2.0**-25], (m - 1) * cp + n)
        l1[bias:bias + n] = rng.standard_normal(n).astype(np.float32)
        outs = []
        for impl in (ex, reference):
            out = np.zeros(m * n)
            impl.tile_matmul(out, l1, c, cp, a, ap, b, bp, m, n, k, init, bias, F32)
            outs.append(out)
        out = np.zeros(m * n)
        bias_view = tile_views(c=(bias, n), a=(0, 1), b=(0, 1))[0]
        assert _blas_matmul(ex, out, l1, *tile_views(c=(c, cp), a=(a, ap), b=(b, bp)),
                            bias_view, m, n, k, init)
        assert_same(outs[0], outs[1], f"numba vs reference, trial {trial}")
        assert_same(out, outs[0], f"BLAS vs numba, trial {trial}")


def nan_word(bits):
    """The float64 register word of the float32 NaN with these IEEE bits (payload kept)."""
    return float(np.uint32(bits).view(np.float32))


@pytest.mark.parametrize("init", [0, 1])
def test_a_matmul_keeps_the_first_nan_in_k_order_in_both_executors(ex, init):
    """Which NaN a matmul element gives is stated, not left to the sums' order: the terms are
    taken after the start in k order; the first NaN among them stays. A (1 x 4) = [1, N1, 2,
    N2] with N1 = -NaN (0xFFC00001) and N2 = +NaN (0x7FC00002), B (4 x 2) = ones but B[3, 1]
    = N3 (0x7FC00003): column 0's terms are 1, N1, 2, N2, so N1; column 1's are 1, N1, 2,
    N2 * N3, so N1 too (a product of two NaNs is its first factor's). With the accumulator
    start C = [N4 (0xFFC00004), 5] (init 1), column 0 is N4 (the start comes first) and
    column 1 is N1. Float32 results: the bits compared word for word (quiet NaNs, so the
    conversion changes no bit)."""
    n1, n2, n3, n4 = (nan_word(b) for b in (0xFFC00001, 0x7FC00002, 0x7FC00003, 0xFFC00004))
    l1 = np.zeros(32)
    l1[0:4] = [1.0, n1, 2.0, n2]                                    # A at 0, pitch 4
    l1[8:16] = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, n3]              # B at 8, pitch 2
    l1[16:18] = [n4, 5.0]                                           # C at 16
    want = [0xFFC00004, 0xFFC00001] if init == 1 else [0xFFC00001, 0xFFC00001]
    for impl in (ex, reference):
        out = np.zeros(2)
        impl.tile_matmul(out, l1, 16, 2, 0, 4, 8, 2, 1, 2, 4, init, 0, F32)
        got = [int(np.float32(v).view(np.uint32)) for v in out]
        assert got == want, (impl.__name__, [hex(g) for g in got])


# ---------------------------------------------------------------- tile_alu

def alu_form(spec):
    """'binary' (dst, a, b, n), 'scalar' (dst, src, scalar, n), 'unary' (dst, src, n) or 'fill'
    (dst, scalar, n), from the table's operands: the layouts the timing model knows how to call
    (every record also has the row form's cols and pitches after n, isa/30_tiles.toml)."""
    pitches = ("cols", "dpitch", "apitch", "bpitch")
    names = [o.name for o in spec.value_operands]
    assert names[-4:] == list(pitches), f"{spec.name}: {names}"
    kinds = [o.kind for o in spec.value_operands if o.name not in pitches]
    names = [n for n in names if n not in pitches]
    if kinds == ["tile", "tile", "tile", "value"]:
        return "binary"
    if kinds == ["tile", "tile", "value", "value"] and names[2] == "scalar":
        return "scalar"
    if kinds == ["tile", "tile", "value"]:
        return "unary"
    if kinds == ["tile", "value", "value"] and names[1] == "scalar":
        return "fill"
    raise AssertionError(f"{spec.name}: tile_alu operand layout {names} is none of the known forms")


ALU_COUNTS = [1, 2, 7, 33, 64, 255]


@pytest.mark.parametrize("name", [s.name for s in TILE_ALU])
def test_tile_alu_matches_reference(ex, name):
    """Every tile_alu instruction of the ISA, for each of its dtypes: random and special operands
    (NaN, +-inf, +-0, overflow), odd counts, dst disjoint from or equal to a source (in place),
    a == b, and for the scalar form special scalars too. Unary forms pass b = -1."""
    spec = ISA.by_name[name]
    form = alu_form(spec)
    rng = np.random.default_rng(spec.opcode)
    for dt_name in spec.dtypes:
        dt = dtypes.BY_NAME[dt_name].code
        for trial in range(24):
            count = ALU_COUNTS[trial % len(ALU_COUNTS)]
            dst, a, b = regions(rng, [count] * 3)
            layout = trial % 4
            if layout == 1:
                dst = a                                  # in place on the first operand
            elif layout == 2 and form == "binary":
                dst = b                                  # in place on the second
            elif layout == 3 and form == "binary":
                b = a                                    # both operands one tile
            l1 = values(rng, L1_WORDS, dt)
            if form == "unary" and trial % 2:
                l1[a:a + count] = np.abs(l1[a:a + count])  # mostly in the domain (log, sqrt)
            scalar = float(values(rng, 1, dt)[0])
            args = {"binary": ["l1", dst, a, b, 0.0, False, count, dt],
                    "scalar": ["l1", dst, a, -1, scalar, True, count, dt],
                    "unary": ["l1", dst, a, -1, 0.0, False, count, dt],
                    "fill": ["l1", dst, dst, -1, scalar, True, count, dt]}[form]
            run_both(ex, "tile_elementwise", dict(l1=l1), [spec.opcode] + args,
                     f"{name} dt={dt_name} count={count} layout={layout} scalar={scalar}")


def ties(rng, n, dst):
    """Values of float32 exactly halfway between two neighbours of dst (float16 p = 10,
    bfloat16 p = 7 mantissa bits; int32: k + 0.5), at many magnitudes and both signs."""
    sign = rng.choice([-1.0, 1.0], n)
    if dst == I32:
        return sign * (rng.integers(0, 1 << 20, n) + 0.5)
    p = 10 if dst == F16 else 7
    mant = (1 << p) + rng.integers(0, 1 << p, n) + 0.5
    return sign * mant * 2.0 ** (rng.integers(-20, 14, n) - p)


def test_float16_rounding_is_numpys_on_every_float16_value_and_midpoint(ex):
    """round_f16 (float16's spacing from the exponent bits, no frexp) against numpy's float64
    -> float16 conversion, which rounds to nearest even: every finite float16 value, every
    midpoint between neighbours (ties go to the even one), the doubles just either side of
    each midpoint, the top (65504 and the 65520 overflow tie) and float64 subnormals."""
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64)
    h = np.unique(h[np.isfinite(h)])
    mid = (h[1:] + h[:-1]) / 2
    xs = np.concatenate([h, mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf),
                         [65519.99, 65520.0, -65520.0, 1e300, 5e-324, -5e-324, 2.0**-1022, 0.0,
                          -0.0, math.inf, -math.inf, math.nan]])
    got = np.empty_like(xs)
    ex.tile_gather(got, xs, 0, len(xs), 1, len(xs), F16)
    with np.errstate(over="ignore"):
        want = xs.astype(np.float16).astype(np.float64)
    assert_same(got, want, "round_f16 against numpy")


def test_blas_matmul_on_a_float32_tie_rounds_to_even(ex):
    """A 16 x 16 x 16 matmul (BLAS's size) whose every sum is 2^24 + 1 exactly: a float32
    midpoint between 2^24 and 2^24 + 2, which rounds to the even 2^24. The float64 sums are
    exact here (integers far below 2^53), so matmul_finish decides without summing exactly
    and must still give the tie's even neighbour; one more 1 per row (2^24 + 2) is float32."""
    A = np.zeros((16, 16))
    A[:, 0], A[:, 1] = 2.0**24, 1.0
    B = np.ones((16, 16))
    l1 = np.concatenate([A.ravel(), B.ravel(), np.zeros(256)])
    out = np.zeros(256)
    assert _blas_matmul(ex, out, l1, *tile_views(c=(512, 16), a=(0, 16), b=(256, 16)), None,
                        16, 16, 16, 0)
    assert (out == 2.0**24).all()
    A[:, 2] = 1.0
    l1[:256] = A.ravel()
    assert _blas_matmul(ex, out, l1, *tile_views(c=(512, 16), a=(0, 16), b=(256, 16)), None,
                        16, 16, 16, 0)
    assert (out == 2.0**24 + 2).all()


@pytest.mark.parametrize("name", [s.name for s in TILE_CONVERT])
def test_tile_convert_matches_reference_in_every_rounding_mode(ex, name):
    """TCVT from float32, float16, bfloat16, int32, int16, int8 and uint8 to each destination
    dtype in each mode (and, to int32 / int16 / int8 / uint8, with SaturationMode OFF): random and
    special values, exact ties of the destination's spacing, overflow past its largest finite
    value (or a narrow integer's range, and int32's), subnormal results, in place and not; to
    float32 also with CVT_INTEGRAL (float32 -> float32's rounding to an integral value)."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(spec.opcode)
    narrow = (dtypes.int16.code, dtypes.int8.code, dtypes.uint8.code)
    for dt_name in spec.dtypes:
        dt = dtypes.BY_NAME[dt_name].code
        modes = list(range(len(dtypes.CVT_MODES)))
        if dt in narrow + (I32,):
            modes += [m + dtypes.CVT_SAT_OFF for m in modes]
        if dt == F32:        # float32 -> float32: rounded to an integral value (isa/cvt_modes.py)
            modes += [m + dtypes.CVT_INTEGRAL for m in modes]
        for src_dt in (F32, F16, dtypes.bfloat16.code, I32) + narrow:
            for mode in modes:
                count = 255
                dst, src = regions(rng, [count, count])
                if mode % 2:
                    dst = src
                l1 = values(rng, L1_WORDS, src_dt)
                if src_dt == F32 and dt in (F16, dtypes.bfloat16.code, I32):
                    l1[src:src + 64] = ties(rng, 64, dt)
                    l1[src + 64:src + 72] = [65504.0, 65519.0, 65520.0, 70000.0, -65520.0, -70000.0,
                                             1e-8, -3e-8]
                if src_dt in (F32, I32) and dt in narrow + (I32,):   # past the range, int32's too
                    l1[src:src + 10] = [127.5, 128.0, -128.5, 255.5, 256.0, 32767.5, -32769.0,
                                        65537.0, 3e9 if src_dt == F32 else 2**31 - 1, -2.0**31]
                run_both(ex, "tile_convert", dict(l1=l1), ["l1", dst, src, count, dt, mode],
                         f"{name} {src_dt} -> {dt_name} mode={mode}")


@pytest.mark.parametrize("name", [s.name for s in TILE_EXPAND_OP])
def test_row_expand_ops_match_reference(ex, name):
    """dst[r, c] = op(a[r, c], v[r]) for every row-expand op and dtype: random and special
    values, narrow and wide rows, dst disjoint from a or equal to it (in place), dense or at
    row pitches wider than the rows (pitch 0: dense)."""
    _expand_ops_match_reference(ex, ISA.by_name[name], "tile_row_expand_op", lambda rows, cols: rows)


def _expand_ops_match_reference(ex, spec, kernel, v_len):
    """Both executors' `kernel` on spec's dtypes and shapes, dst and a at their own pitches
    (the same when in place), v of v_len(rows, cols) words; run_both compares every word."""
    rng = np.random.default_rng(spec.opcode)
    for dt_name in spec.dtypes:
        dt = dtypes.BY_NAME[dt_name].code
        for trial, (rows, cols) in enumerate(((1, 1), (3, 7), (4, 64), (5, 33), (2, 130), (8, 8))):
            dp, ap = (0, 0) if trial % 3 == 0 else (cols + 3 * (trial % 3), cols + 5)
            in_place = trial % 2 == 1
            if in_place:
                dp = ap
            span = [(rows - 1) * (p or cols) + cols for p in (dp, ap)]
            dst, a, v = regions(rng, [span[0], span[1], v_len(rows, cols)])
            if in_place:
                dst = a
            l1 = values(rng, L1_WORDS, dt)
            run_both(ex, kernel, dict(l1=l1), [spec.opcode, "l1", dst, a, v, rows, cols, dp, ap, dt],
                     f"{spec.name} dt={dt_name} {rows}x{cols} pitches={dp},{ap} in_place={in_place}")


def test_row_expand_exp_on_float32_rounding_points_is_libms_exp_rounded(ex):
    """TROWEXPANDEXPDIF in float32 gives float32(exp(a - v)) with libm's exp (math.exp, the
    expression's own exp) also where e^(a - v) sits on a float32 rounding point, where the
    kernel's quick exp cannot decide and must hand over to libm's. Row 0: a = ln(1 + 2^-24 j)
    for j = 1, 3, ..., 63 and v = 0: e^a is 1 + 2^-24 j to within 2^-52, each the midpoint
    between the float32 neighbours 1 + 2^-24 (j - 1) and 1 + 2^-24 (j + 1) (float32's
    spacing above 1 is 2^-23), so only exp's last bits decide the rounding. Row 1: the same
    a minus 0.75, v = -0.75: a - v is the same differences, computed. Row 2: a = 0.1 j, v = 0,
    far from any rounding point, and -inf, NaN and 710 (beyond the quick exp's range)."""
    op = ISA.by_name["TROWEXPANDEXPDIF"].opcode
    cols = 35
    near = [math.log1p(j * 2.0**-24) for j in range(1, 64, 2)]          # 32 values
    a = np.zeros((3, cols))
    a[0, :32] = near
    a[1, :32] = [x - 0.75 for x in near]
    a[2, :32] = [0.1 * j for j in range(32)]
    a[:, 32:] = [-math.inf, math.nan, 710.0]
    v = np.array([0.0, -0.75, 0.0])
    l1 = np.concatenate([a.ravel(), v, np.zeros(3 * cols)])
    ex.tile_row_expand_op(op, l1, 3 * cols + 3, 0, 3 * cols, 3, cols, 0, 0, F32)
    got = l1[3 * cols + 3:].reshape(3, cols)
    want = [[float(np.float32(math.exp(a[r, c] - v[r]))) if a[r, c] < 709.0 else
             math.nan if math.isnan(a[r, c]) else math.inf for c in range(cols)] for r in range(3)]
    assert_same(got.ravel(), np.array(want).ravel(), "exp on float32 rounding points")
    assert got[0, 0] in (1.0, 1.0 + 2.0**-23)           # a midpoint's neighbour, either one


@pytest.mark.parametrize("name", [s.name for s in TILE_COL_EXPAND_OP])
def test_column_expand_ops_match_reference(ex, name):
    """dst[r, c] = op(a[r, c], v[c]) for every column-expand op and dtype, narrow and wide
    tiles, dst disjoint from a or equal to it, dense or at row pitches wider than the rows."""
    _expand_ops_match_reference(ex, ISA.by_name[name], "tile_col_expand_op", lambda rows, cols: cols)


MASK_SHAPES = ((1, 1), (3, 7), (4, 64), (5, 33), (2, 130), (8, 8))


@pytest.mark.parametrize("name", [s.name for s in TILE_MASK])
def test_compares_and_selects_match_reference(ex, name):
    """TCMP/TCMPS pack one bit per element (every mode, special values, widths that are not
    whole bytes, a mask row longer than needed); TSEL/TSELS pick by random mask words of 8, 16
    or 32 bits (bit c % bits of word c // bits), the destination disjoint from or equal to a
    source, each tile at its own row pitch."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(spec.opcode)
    scalar_form = any(o.name == "scalar" for o in spec.value_operands)
    for dt_name in spec.dtypes:
        dt = dtypes.BY_NAME[dt_name].code
        for trial, (rows, cols) in enumerate(MASK_SHAPES):
            mstride = -(-cols // 8) + trial % 3                    # bytes per mask row
            dst, a, b, mask = regions(rng, [rows * max(cols, mstride), rows * cols, rows * cols,
                                            rows * mstride])
            l1 = values(rng, L1_WORDS, dt)
            l1[b:b + rows * cols] = np.where(rng.random(rows * cols) < 0.3, l1[a:a + rows * cols],
                                             l1[b:b + rows * cols])   # some equal pairs
            scalar = float(values(rng, 1, dt)[0])
            other = -1 if scalar_form else b
            if spec.family == "tile_cmp":
                for mode in range(6):
                    run_both(ex, "tile_cmp", dict(l1=l1),
                             [spec.opcode, "l1", dst, a, other, scalar, scalar_form, mode, rows, cols,
                              mstride, dt], f"{name} dt={dt_name} {rows}x{cols} mode={mode}")
            else:
                # each tile at its own row pitch (TSel.hpp's RowStrides; 0: cols), in regions that hold it
                pitches = [0 if trial == 0 else cols + (trial + k) % 3 for k in range(3)]
                dst, a, b, mask = regions(rng, [rows * max(cols, p) for p in pitches] + [rows * 4 * mstride])
                if trial % 2:
                    dst, pitches[0] = a, pitches[1]
                for mbits in (8, 16, 32):                  # a uint8, uint16 or uint32 mask's words
                    stride = -(-cols // mbits) + trial % 3
                    m = l1.copy()
                    m[mask:mask + rows * stride] = rng.integers(0, 2**mbits, rows * stride)
                    run_both(ex, "tile_sel", dict(l1=m),
                             [spec.opcode, "l1", dst, mask, a, other, scalar, scalar_form, rows, cols, stride,
                              mbits, *pitches, dt], f"{name} dt={dt_name} {rows}x{cols} mbits={mbits} {pitches}")


def test_triangles_match_reference_and_numpy(ex):
    """TTRI is numpy's tril / triu of ones with k = diagonal, for narrow, wide and square tiles
    and diagonals outside the tile; also as the valid region of a wider tile (rows 3 words
    further apart than cols), whose words past the region keep their -5."""
    for rows, cols in ((1, 1), (4, 4), (3, 9), (9, 3), (16, 64)):
        for diagonal in (-20, -2, -1, 0, 1, 3, 70):
            for upper, pitch in ((0, 0), (1, 0), (0, cols + 3), (1, cols + 3)):
                span = (rows - 1) * (pitch or cols) + cols
                l1 = np.full(span + 4, -5.0)
                out = run_both(ex, "tile_tri", dict(l1=l1), ["l1", 2, diagonal, upper, rows, cols, pitch],
                               f"TTRI {rows}x{cols} k={diagonal} upper={upper} pitch={pitch}")
                want = (np.triu if upper else np.tril)(np.ones((rows, cols)), diagonal)
                got = np.array([out["l1"][2 + r * (pitch or cols):2 + r * (pitch or cols) + cols]
                                for r in range(rows)])
                assert_same(got.ravel(), want.ravel(), "TTRI against numpy")
                gaps = [w for r in range(rows - 1) for w in out["l1"][2 + r * pitch + cols:2 + (r + 1) * pitch]] \
                    if pitch else []
                assert (out["l1"][:2] == -5.0).all() and (out["l1"][-2:] == -5.0).all() and all(g == -5.0 for g in gaps)


@pytest.mark.parametrize("name", ["TPARTADD", "TPARTMAX", "TPARTMIN", "TPARTMUL"])
def test_partial_ops_match_reference(ex, name):
    """Each region case of A2/A3's TPartInstr (src1 shorter in rows, narrower, both, as dst)
    on data with NaN, infinities and -0.0, in each dtype: the numba kernel and the reference
    agree word for word, padding columns of dst included (whole rows are copied)."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(spec.opcode)
    rows, cols, pitch = 6, 8, 16
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 3.5, -1.25, 70000.0])
    for dt_name in spec.dtypes:
        dt = getattr(dtypes, dt_name)
        for prows, pcols in ((rows, cols), (2, cols), (rows, 3), (2, 3), (0, cols)):
            l1 = rng.standard_normal(3 * rows * pitch + 8) * 50
            if dt.is_float:
                l1[rng.integers(0, l1.size, 20)] = rng.choice(special, 20)
            l1 = np.array([reference.to_dtype(dt.code, x) for x in l1])
            dst, full, part = 4, 4 + rows * pitch, 4 + 2 * rows * pitch
            run_both(ex, "tile_part", dict(l1=l1), [spec.opcode, "l1", dst, full, part, rows, cols, prows, pcols,
                                                   pitch, dt.code],
                     f"{name} {dt_name} part {prows}x{pcols}")


@pytest.mark.parametrize("name", ["TPARTARGMAX", "TPARTARGMIN"])
def test_partial_arg_selections_match_reference(ex, name):
    """Each region case of A2/A3's TPartArgInstr (one region; one column count, either source
    shorter; either source narrower and no taller) on values with NaN, infinities and -0.0 and
    random index words, six tiles at six pitches and at one pitch: the numba kernel and the
    reference agree word for word, padding columns included (a copy between tiles of one pitch
    moves whole rows), and dst's values and indices are numpy's where over the compared region."""
    spec = ISA.by_name[name]
    cmp = np.greater_equal if name == "TPARTARGMAX" else np.less_equal
    rng = np.random.default_rng(spec.opcode)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 3.5, -1.25, 70000.0])
    for dt_name in spec.dtypes:
        dt = getattr(dtypes, dt_name)
        for r0, c0, r1, c1 in ((6, 8, 6, 8), (4, 8, 6, 8), (6, 8, 4, 8), (6, 3, 6, 8), (2, 3, 6, 8),
                               (6, 8, 6, 3), (6, 8, 1, 1)):
            for pitches in ((16, 16, 16, 16, 16, 16), (8, 16, 24, 32, 40, 48)):
                base = [8 + sum(6 * p for p in pitches[:k]) for k in range(6)]
                l1 = rng.standard_normal(base[-1] + 6 * pitches[-1] + 8) * 50
                l1[rng.integers(0, l1.size, 40)] = rng.choice(special, 40)
                l1 = np.array([reference.to_dtype(dt.code, x) for x in l1])
                for k in (1, 3, 5):           # index tiles: uint32 words
                    l1[base[k]:base[k] + 6 * pitches[k]] = rng.integers(0, 2**32, 6 * pitches[k])
                out = run_both(ex, "tile_part_arg", dict(l1=l1),
                               [spec.opcode, "l1", *base, r0, c0, r1, c1, *pitches, dt.code],
                               f"{name} {dt_name} {r0}x{c0} {r1}x{c1} pitches {pitches}")["l1"]

                def grid(k, rows, cols, words=out):
                    return np.array([words[base[k] + r * pitches[k]:base[k] + r * pitches[k] + cols]
                                     for r in range(rows)])
                rows, cols = min(r0, r1), min(c0, c1)
                with np.errstate(invalid="ignore"):
                    first = cmp(grid(2, rows, cols, l1), grid(4, rows, cols, l1))
                assert_same(grid(0, rows, cols).ravel(),
                            np.where(first, grid(2, rows, cols, l1), grid(4, rows, cols, l1)).ravel(), name)
                assert_same(grid(1, rows, cols).ravel(),
                            np.where(first, grid(3, rows, cols, l1), grid(5, rows, cols, l1)).ravel(), name)


def test_pair_sums_match_reference_and_numpy(ex):
    """TPAIRREDUCESUM: dst[r, k] = src[r, 2k] + src[r, 2k + 1] for k < cols // 2 (an odd last
    column unread), rounded to the dtype, two NaNs keeping the first; on data with NaN,
    infinities and -0.0, even and odd widths, tiles of two pitches: the numba kernel and the
    reference agree word for word, and dst's words past the pairs and between rows are kept."""
    spec = ISA.by_name["TPAIRREDUCESUM"]
    rng = np.random.default_rng(spec.opcode)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 3.5, -1.25, 70000.0])
    rows, dpitch, spitch = 5, 40, 72
    for dt_name in spec.dtypes:
        dt = getattr(dtypes, dt_name)
        for cols in (1, 2, 7, 64, 65, 72):
            l1 = rng.standard_normal(2 + rows * dpitch + rows * spitch) * 50
            l1[rng.integers(0, l1.size, 30)] = rng.choice(special, 30)
            l1 = np.array([reference.to_dtype(dt.code, x) for x in l1])
            dst, src = 2, 2 + rows * dpitch
            out = run_both(ex, "tile_pair_reduce", dict(l1=l1),
                           [spec.opcode, "l1", dst, src, rows, cols, dpitch, spitch, dt.code],
                           f"TPAIRREDUCESUM {dt_name} cols={cols}")
            grid = l1[src:src + rows * spitch].reshape(rows, spitch)
            pairs = cols // 2
            with np.errstate(invalid="ignore", over="ignore"):
                want = (grid[:, 0:2 * pairs:2] + grid[:, 1:2 * pairs:2]).astype(dt.numpy)
            got = out["l1"][dst:dst + rows * dpitch].reshape(rows, dpitch)
            np.testing.assert_array_equal(got[:, :pairs], want.astype(np.float64))
            kept = l1[dst:dst + rows * dpitch].reshape(rows, dpitch)
            assert_same(got[:, pairs:].ravel(), kept[:, pairs:].ravel(), "TPAIRREDUCESUM keeps dst's other words")


def test_relu_conversions_match_reference_and_numpy(ex):
    """TADDRELUCONV, TSUBRELUCONV: dst = convert(max(0, src0 +/- src1)), the sum or difference
    rounded to the sources' dtype (float32, float16; int16 wraps: 30000 + 30000 is -5536, so 0),
    a NaN or non-positive one +0, then to nearest even into float16 (70000 is inf) or int8
    (saturated at 127, 2.5 is 2, 3.5 is 4); tiles of three pitches: the numba kernel and the
    reference agree word for word with numpy, and dst's words past the valid columns are kept."""
    rows, dpitch, pitch0, pitch1 = 3, 72, 80, 66
    special = {"float32": [np.nan, np.inf, -np.inf, -0.0, 70000.0, 1.25, 2.5, 3.5],
               "float16": [np.nan, np.inf, -np.inf, -0.0, 200.0, 1.25, 2.5, 3.5],
               "int16": [30000.0, -30000.0, 127.0, 128.0, 0.0, 1.0, -1.0, 2.0]}
    for name in ("TADDRELUCONV", "TSUBRELUCONV"):
        spec = ISA.by_name[name]
        rng = np.random.default_rng(spec.opcode)
        for sname, dname in (("float32", "float16"), ("float16", "int8"), ("int16", "int8")):
            sdt, dt = getattr(dtypes, sname), getattr(dtypes, dname)
            for cols in (1, 7, 64, 65):
                l1 = np.zeros(rows * (dpitch + pitch0 + pitch1))
                dst, src0, src1 = 0, rows * dpitch, rows * (dpitch + pitch0)
                l1[:src0] = [reference.to_dtype(dt.code, x) for x in rng.standard_normal(src0) * 20]
                words = rng.standard_normal(l1.size - src0) * 90
                words[rng.integers(0, words.size, 40)] = rng.choice(special[sname], 40)
                l1[src0:] = [reference.to_dtype(sdt.code, x) for x in words]
                out = run_both(ex, "tile_relu_conv", dict(l1=l1),
                               [spec.opcode, "l1", dst, src0, src1, rows, cols, dpitch, pitch0, pitch1, sdt.code,
                                dt.code], f"{name} {sname} -> {dname} cols={cols}")
                a = l1[src0:src0 + rows * pitch0].reshape(rows, pitch0)[:, :cols].astype(sdt.numpy)
                b = l1[src1:src1 + rows * pitch1].reshape(rows, pitch1)[:, :cols].astype(sdt.numpy)
                with np.errstate(all="ignore"):
                    s = (a - b if name == "TSUBRELUCONV" else a + b).astype(np.float64)
                    s = np.where(s > 0, s, 0.0)
                    want = np.clip(np.rint(s), 0, 127) if dname == "int8" else s.astype(np.float16)
                got = out["l1"][dst:dst + rows * dpitch].reshape(rows, dpitch)
                np.testing.assert_array_equal(got[:, :cols], want.astype(np.float64))
                kept = l1[dst:dst + rows * dpitch].reshape(rows, dpitch)
                assert_same(got[:, cols:].ravel(), kept[:, cols:].ravel(), f"{name} keeps dst's other words")


def test_dequantizing_relus_match_reference_and_numpy(ex):
    """TADDDEQRELU: y = ((float32(src0 + src1) * 2^-17) * scale) * 2^17 in float32 (the int32
    sum wraps: 2^30 + 2^30 is -2^31), src0 its bits, tmp 0, src1 the bits of max(y, 0) (a NaN
    kept with its bits: here numpy's quiet NaN with its sign), dst its float16 (70000 and more: inf); at scales 0.5,
    1e-5, 3e38 (products overflow to inf), inf (0 x inf is NaN) and NaN, tiles of four pitches:
    the numba kernel and the reference agree word for word with numpy, and the four tiles' words
    past the valid columns are kept."""
    spec = ISA.by_name["TADDDEQRELU"]
    rng = np.random.default_rng(spec.opcode)
    rows, dp, p0, p1, tp = 3, 72, 80, 66, 70
    special = np.array([2.0**30, -2.0**31, 2**31 - 1, 0.0, 1.0, -1.0, 140000.0 * 2])
    for scale in (0.5, 1e-5, 3e38, np.inf, np.nan):
        for cols in (1, 7, 64, 65):
            dst, s0, s1, tmp = 0, rows * dp, rows * (dp + p0), rows * (dp + p0 + p1)
            l1 = np.round(rng.standard_normal(rows * (dp + p0 + p1 + tp)) * 3e5)
            l1[s0:tmp][rng.integers(0, tmp - s0, 30)] = rng.choice(special, 30)
            l1[:s0] = [reference.to_dtype(dtypes.float16.code, x / 1000) for x in l1[:s0]]
            out = run_both(ex, "tile_add_deq_relu", dict(l1=l1),
                           ["l1", dst, s0, s1, tmp, scale, rows, cols, dp, p0, p1, tp],
                           f"TADDDEQRELU scale={scale} cols={cols}")["l1"]

            def grid(base, pitch, src=l1, n=cols):
                return src[base:base + rows * pitch].reshape(rows, pitch)[:, :n]
            t = (grid(s0, p0).astype(np.int64) + grid(s1, p1).astype(np.int64) + 2**31) % 2**32 - 2**31
            with np.errstate(all="ignore"):
                y = (t.astype(np.float32) * np.float32(2.0**-17)) * np.float32(scale) * np.float32(2.0**17)
            z = np.where((y > 0) | np.isnan(y), y, np.float32(0))
            bits = {k: np.where(np.isnan(v), np.where(np.signbit(v), -4194304, 2143289344), v.view(np.int32))
                    for k, v in (("y", y), ("z", z))}
            np.testing.assert_array_equal(grid(s0, p0, out), bits["y"])
            np.testing.assert_array_equal(grid(s1, p1, out), bits["z"])
            np.testing.assert_array_equal(grid(tmp, tp, out), 0)
            with np.errstate(over="ignore"):
                np.testing.assert_array_equal(grid(dst, dp, out), z.astype(np.float16).astype(np.float64))
            for base, pitch in ((dst, dp), (s0, p0), (s1, p1), (tmp, tp)):
                kept = l1[base:base + rows * pitch].reshape(rows, pitch)[:, cols:]
                assert_same(out[base:base + rows * pitch].reshape(rows, pitch)[:, cols:].ravel(), kept.ravel(),
                            "TADDDEQRELU keeps the words past the valid columns")


def test_concatenations_match_reference_and_numpy(ex):
    """TCONCAT: src0's first c0 columns then src1's at column c0, moved in whole 32-byte blocks
    (c1 too when c0 is a whole number of blocks, else exactly c1), for 4-, 2- and 1-byte dtypes
    and aligned and unaligned c0, on NaN-laden words: the numba kernel and the reference agree
    word for word, and the words past what moves keep theirs."""
    spec = ISA.by_name["TCONCAT"]
    rng = np.random.default_rng(spec.opcode)
    rows, dpitch, s0pitch, s1pitch = 3, 128, 64, 96
    for dt_name in ("float32", "float16", "int8"):
        dt = getattr(dtypes, dt_name)
        per_block = 32 // dt.itemsize
        for c0, c1 in ((per_block, 5), (per_block - 1, per_block + 3), (1, 1), (0, 7), (2 * per_block, 0)):
            l1 = rng.standard_normal(4 + rows * (dpitch + s0pitch + s1pitch)) * 50
            l1[rng.integers(0, l1.size, 20)] = np.nan
            dst, src0 = 4, 4 + rows * dpitch
            src1 = src0 + rows * s0pitch
            out = run_both(ex, "tile_concat", dict(l1=l1), ["l1", dst, src0, src1, rows, c0 + c1, c0, dpitch,
                                                           s0pitch, s1pitch, dt.code],
                           f"TCONCAT {dt_name} c0={c0} c1={c1}")
            n0 = -(-c0 // per_block) * per_block
            n1 = -(-c1 // per_block) * per_block if c0 % per_block == 0 else c1
            want = l1[dst:dst + rows * dpitch].reshape(rows, dpitch).copy()
            want[:, :n0] = l1[src0:src0 + rows * s0pitch].reshape(rows, s0pitch)[:, :n0]
            want[:, c0:c0 + n1] = l1[src1:src1 + rows * s1pitch].reshape(rows, s1pitch)[:, :n1]
            assert_same(out["l1"][dst:dst + rows * dpitch], want.ravel(), "TCONCAT against numpy")


def test_index_concatenations_match_reference_and_numpy(ex):
    """TCONCAT_IDX / TCONCAT_DSTIDX (TConcat.hpp TConcatIdx): per row counts from the index words
    (bytes / sizeof(idx); a negative one huge), clamped to W; src0 by vcopy (a count past a
    repeat moves whole repeats, an odd int8 count an even number of bytes), src1 by vcopy when n0
    is a whole number of blocks else exactly n1; dst_idx = min(a + b, W) * sizeof(idx) in the
    index dtype. The numba kernel and the reference agree word for word, and with numpy. (Repeats
    reaching past a row are an error: tests/test_concat_idx.py.)"""
    rng = np.random.default_rng(ISA.by_name["TCONCAT_IDX"].opcode)
    rows, dpitch, s0pitch, s1pitch, ipitch, w = 4, 320, 320, 320, 8, 150     # rows hold every repeat moved
    for dt_name, it_name in (("float32", "int16"), ("float16", "int32"), ("int8", "int8"), ("int16", "uint16")):
        dt, it = getattr(dtypes, dt_name), getattr(dtypes, it_name)
        per_block, per_repeat, isz = 32 // dt.itemsize, 256 // dt.itemsize, it.itemsize
        for counts in (((8, 5), (3, 9), (100, 1), (-1, 4)), ((1, 1), (per_block, 200), (7, 3), (2, -3))):
            l1 = rng.standard_normal(8 + rows * (dpitch * 2 + s0pitch + s1pitch + 2 * ipitch)) * 50
            l1[rng.integers(0, l1.size, 20)] = np.nan
            dst, src0 = 8, 8 + rows * dpitch
            src1, i0 = src0 + rows * s0pitch, src0 + rows * (s0pitch + s1pitch)
            i1, di = i0 + rows * ipitch, i0 + 2 * rows * ipitch
            if it.encoding == "uint":
                counts = tuple((abs(a), abs(b)) for a, b in counts)
            for r, (a, b) in enumerate(counts):
                l1[i0 + r * ipitch], l1[i1 + r * ipitch] = a * isz, b * isz
            out = run_both(ex, "tile_concat_idx", dict(l1=l1),
                           ["l1", dst, src0, src1, di, i0, i1, rows, w, dpitch, s0pitch, s1pitch, ipitch, ipitch,
                            ipitch, it.code, dt.code], f"TCONCAT_DSTIDX {dt_name} {it_name} {counts}")
            want = l1.copy()
            for r, (a, b) in enumerate(counts):
                ua, ub = a % 2**32, b % 2**32
                n0 = min(ua, w)
                n1 = min(ub, w - n0)
                t, wv = np.array([(ua + ub) % 2**32, w], np.uint64).astype(it.numpy)
                want[di + r * ipitch] = np.array([min(int(t), int(wv)) * isz]).astype(it.numpy)[0]
                ce = 4 if dt.itemsize == 4 else 2
                moved = lambda n: (-(-n // per_repeat) - 1) * per_repeat + min(-(-(n * dt.itemsize) // ce) * ce,
                                                                                 256) // dt.itemsize
                k0 = moved(n0)
                want[dst + r * dpitch:dst + r * dpitch + k0] = want[src0 + r * s0pitch:src0 + r * s0pitch + k0]
                k1 = moved(n1) if n0 % per_block == 0 else n1
                want[dst + r * dpitch + n0:dst + r * dpitch + n0 + k1] = \
                    want[src1 + r * s1pitch:src1 + r * s1pitch + k1]
            assert_same(out["l1"], want, f"TCONCAT_DSTIDX {dt_name} against numpy")


def test_dequantizations_match_reference_and_numpy(ex):
    """TDEQUANT / TDEQUANT_S8: dst[r, c] = (src[r, c] - offset[r]) * scale[r] in float32, the
    parameters one a row at their pitch, with NaN and infinite parameters and every integer of
    the source's type range at its ends: the numba kernel and the reference agree word for word
    with float32 numpy, and dst's words between rows keep theirs."""
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 3e38, 1e-40, -2.5])
    rows, cols, dpitch, spitch, ppitch = 6, 37, 40, 48, 8
    for name, src_dt in (("TDEQUANT", np.int16), ("TDEQUANT_S8", np.int8)):
        rng = np.random.default_rng(ISA.by_name[name].opcode)
        info = np.iinfo(src_dt)
        dst, src = 2, 2 + rows * dpitch
        scale, offset = src + rows * spitch, src + rows * spitch + rows * ppitch
        l1 = rng.standard_normal(offset + rows * ppitch) * 50
        l1[src:scale] = rng.integers(info.min, info.max + 1, rows * spitch)
        l1[src:src + 4] = [info.min, info.max, 0, -1]
        l1[scale:] = rng.uniform(-2, 2, rows * 2 * ppitch)
        l1[scale + ppitch * np.arange(rows)[rng.random(rows) < 0.5]] = rng.choice(special, 1)
        l1[offset + ppitch * np.arange(rows)[rng.random(rows) < 0.5]] = rng.choice(special, 1)
        l1[scale:] = l1[scale:].astype(np.float32)
        out = run_both(ex, "tile_dequant", dict(l1=l1), ["l1", dst, src, scale, offset, rows, cols, dpitch, spitch,
                                                       ppitch], name)
        x = l1[src:src + rows * spitch].reshape(rows, spitch)[:, :cols].astype(np.float32)
        o = l1[offset:offset + rows * ppitch:ppitch].astype(np.float32).reshape(rows, 1)
        sc = l1[scale:scale + rows * ppitch:ppitch].astype(np.float32).reshape(rows, 1)
        want = l1[dst:dst + rows * dpitch].reshape(rows, dpitch).copy()
        with np.errstate(all="ignore"):
            want[:, :cols] = (x - o) * sc
        assert_same(out["l1"][dst:dst + rows * dpitch], want.ravel(), f"{name} against numpy")


def test_quantizations_match_reference_and_numpy(ex):
    """TQUANT / TQUANT_ASYM: the numba kernel (row by row) and the reference (pass by pass, as
    TQuant.hpp) agree on every word: src scaled then overwritten by its rows' float16 halves
    (an odd row keeping a word's high half), tmp's broadcasts and int32 bits, dst, and the words
    between rows; dst is float32 numpy's product (and sum) through rint to int32 (saturated, NaN
    0), float16 and the saturated int8 / uint8, over sources with NaN, infinities, -0.0, ties
    and float16 overflow and NaN or infinite parameters. 300 rows broadcast the parameter 240
    rows at a time (TRowExpandBinOp.hpp's norm mode)."""
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 3e38, 1e-40, -2.5, 0.5, 65520.0, 1e10])
    for name in ("TQUANT", "TQUANT_ASYM"):
        asym = name == "TQUANT_ASYM"
        out_dt = np.uint8 if asym else np.int8
        for rows, cols, spitch in ((6, 37, 40), (300, 5, 8)):
            rng = np.random.default_rng(ISA.by_name[name].opcode + rows)
            prows, dpitch = -(-rows // 8) * 8, 64
            dst, src = 2, 2 + rows * dpitch
            scale, offset = src + rows * spitch, src + rows * spitch + prows
            tmp = offset + prows
            l1 = values(rng, tmp + max(rows * spitch, 64 * -(-min(rows, 256) // 8)) + 3, F32)
            l1[src:scale] = rng.standard_normal(rows * spitch) * 10.0 ** rng.uniform(-1, 3, rows * spitch)
            l1[src + rng.integers(0, rows * spitch, 20)] = rng.choice(special, 20)
            l1[scale:tmp] = rng.uniform(-3, 3, 2 * prows)
            l1[scale + rng.integers(0, 2 * prows, 4)] = rng.choice(special, 4)
            l1[:] = l1.astype(np.float32)
            out = run_both(ex, "tile_quant", dict(l1=l1), ["l1", dst, src, scale, offset if asym else -1, tmp,
                                                           rows, cols, dpitch, spitch], name)
            x = l1[src:scale].reshape(rows, spitch)[:, :cols].astype(np.float32)
            with np.errstate(all="ignore"):
                y = x * l1[scale:scale + rows].astype(np.float32).reshape(rows, 1)
                if asym:
                    y = y + l1[offset:offset + rows].astype(np.float32).reshape(rows, 1)
                ints = np.where(np.isnan(y), 0.0, np.clip(np.rint(y.astype(np.float64)), -2.0**31, 2.0**31 - 1))
                info = np.iinfo(out_dt)
                q = np.clip(np.rint(ints.astype(np.float16).astype(np.float64)), info.min, info.max)
            want = l1[dst:src].reshape(rows, dpitch).copy()
            want[:, :cols] = q + 0.0                          # an integer has no -0
            assert_same(out["l1"][dst:src], want.ravel(), f"{name} {rows} x {cols} against numpy")


def test_integer_sequences_match_reference_and_numpy(ex):
    """TCI is start + arange(cols), negated when descending (1), start - arange(cols) for the
    scalar loop's descending (2, TCI_S), wrapped to the tile's integer type,
    for each of its dtypes, starts at and past the type's ends, and one column or many."""
    for dt_name in ISA.by_name["TCI"].dtypes:
        dt = getattr(dtypes, dt_name)
        for cols in (1, 7, 64, 300):
            for start in (0, 5, -3, 32767, 2**31 - 2):
                for descending in (0, 1, 2):
                    l1 = np.full(cols + 4, -5.0)
                    out = run_both(ex, "tile_ci", dict(l1=l1), ["l1", 2, float(start), descending, cols, dt.code],
                                   f"TCI {dt_name} cols={cols} start={start} descending={descending}")
                    seq = start + np.arange(cols, dtype=np.int64)
                    want = (start - np.arange(cols, dtype=np.int64) if descending == 2 else -seq if descending
                            else seq).astype(dt.numpy)
                    assert_same(out["l1"][2:2 + cols], want.astype(np.float64), "TCI against numpy")
                    assert (out["l1"][:2] == -5.0).all() and (out["l1"][-2:] == -5.0).all()


@pytest.mark.parametrize("name", [s.name for s in TILE_COL_REDUCE])
def test_column_reductions_match_reference(ex, name):
    """dst[c] = fold over src[:, c] for every column reduction and dtype: random and special
    values, one row, narrow and wide tiles, dst overlapping the source's first row."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(spec.opcode)
    init = float(eval(spec.init, {"np": np, "math": math}))
    for dt_name in spec.dtypes:
        dt = dtypes.BY_NAME[dt_name].code
        for trial, (rows, cols) in enumerate(((1, 1), (3, 7), (4, 64), (5, 33), (9, 16), (2, 130))):
            dst, src = regions(rng, [cols, rows * cols])
            if trial == 4:
                dst = src                                # the result overwrites the first row
            l1 = values(rng, L1_WORDS, dt)
            run_both(ex, "tile_col_reduce", dict(l1=l1), [spec.opcode, "l1", dst, src, rows, cols, init, dt],
                     f"{name} dt={dt_name} {rows}x{cols}")


@pytest.mark.parametrize("name", [s.name for s in TILE_ALU if alu_form(s) != "unary"])
def test_tile_alu_special_pairs(ex, name):
    """Every pair of special values (both operand orders) through the binary and scalar forms,
    so NaN propagation, inf - inf, 0 / 0, signed zeros and max/min with NaN are all exercised."""
    spec = ISA.by_name[name]
    form = alu_form(spec)
    special = np.array(F_SPECIAL)
    for dt in (F32, F16):
        with np.errstate(over="ignore"):
            sv = special.astype(NUMPY[dt]).astype(np.float64)
        if form == "binary":
            n = sv.size
            # dst's old values are specials too: the reads_dst ops (TMULADDDST...) use them
            old = np.roll(np.tile(sv, n), 1) if spec.reads_dst else np.zeros(n * n)
            l1 = np.concatenate([np.repeat(sv, n), np.tile(sv, n), old])
            run_both(ex, "tile_elementwise", dict(l1=l1),
                     [spec.opcode, "l1", 2 * n * n, 0, n * n, 0.0, False, n * n, dt],
                     f"{name} dt={dt} special pairs")
        else:
            for scalar in sv:
                l1 = np.concatenate([sv, np.roll(sv, 1) if spec.reads_dst else np.zeros(sv.size)])
                src = sv.size if form == "fill" else 0
                run_both(ex, "tile_elementwise", dict(l1=l1),
                         [spec.opcode, "l1", sv.size, src, -1, float(scalar), True, sv.size, dt],
                         f"{name} dt={dt} scalar={scalar}")


def test_tile_alu_overlapping_tiles_read_the_old_values(ex):
    """dst one word past a: the reference reads every source before writing (vector semantics,
    ``dst[e] = f(a[e])`` of the values before the instruction); the numba kernel must too."""
    spec = ISA.by_name["TADDS"]
    l1 = np.arange(20, dtype=np.float64)
    out = run_both(ex, "tile_elementwise", dict(l1=l1),
                   [spec.opcode, "l1", 1, 0, -1, 100.0, True, 10, F32], "TADDS dst = a + 1")
    assert list(out["l1"][1:11]) == [100.0 + i for i in range(10)]


def test_tile_alu_known_answers():
    """Anchor the spec on hand-checked values: float16 overflow, NaN-propagating max/min,
    rounding of the float64 result once to the dtype."""
    r, f = reference, ISA.by_name
    def one(name, a, b=0.0, dt=F32, scalar=None):
        l1 = np.array([a, b, 0.0])
        with np.errstate(all="ignore"):
            r.tile_elementwise(f[name].opcode, l1, 2, 0, -1 if scalar is not None else 1,
                               0.0 if scalar is None else scalar, scalar is not None, 1, dt)
        return l1[2]
    assert one("TADD", 65504.0, 16.0, F16) == math.inf
    assert one("TADD", 65504.0, 15.0, F16) == 65504.0
    assert math.isnan(one("TMAX", math.nan, 1.0)) and math.isnan(one("TMIN", math.nan, 1.0))
    assert math.isnan(one("TMAXS", math.nan, scalar=1.0)) and one("TMAXS", -3.0, scalar=2.0) == 2.0
    assert one("TDIV", 1.0, 3.0) == float(np.float32(1 / 3))
    assert one("TSQRT", 2.0, dt=F16) == float(np.float16(math.sqrt(2)))
    assert one("TEXP", 0.0) == 1.0 and one("TLOG", 0.0) == -math.inf
    # TDIVS is src / scalar, TSDIVS scalar / src (pto.tdivs(dst, scalar, src), TDivS.hpp TSDiv)
    assert one("TDIVS", 3.0, scalar=1.0) == 3.0 and one("TSDIVS", 3.0, scalar=1.0) == float(np.float32(1 / 3))
    assert one("TSDIVS", -2.0, scalar=7.0, dt=I32) == -3.0 and one("TSDIVS", 0.0, scalar=7.0, dt=I32) == 0.0


def test_fused_remainder_and_fill_known_answers():
    """The instructions that read dst (c in their expression is dst's old value), the two
    remainders' signs (TREM follows the divisor, TFMOD the dividend) and TEXPANDS' rounding."""
    r, f = reference, ISA.by_name

    def run(name, a, b=0.0, old=0.0, dt=F32, scalar=None):
        l1 = np.array([a, b, old])
        with np.errstate(all="ignore"):
            r.tile_elementwise(f[name].opcode, l1, 2, 0, -1 if scalar is not None else 1,
                               0.0 if scalar is None else scalar, scalar is not None, 1, dt)
        return l1[2]
    assert run("TMULADDDST", 3.0, 4.0, old=5.0) == 17.0          # a * b + dst
    assert run("TFUSEDMULADD", 3.0, 4.0, old=5.0) == 19.0        # a * dst + b
    assert run("TFUSEDMULADDRELU", 3.0, 4.0, old=-5.0) == 0.0    # relu(-15 + 4)
    assert run("TAXPY", 3.0, old=5.0, scalar=2.0) == 11.0        # scalar * src + dst
    assert run("TREM", -7.0, 3.0) == 2.0 and run("TREM", 7.0, -3.0) == -2.0
    assert run("TFMOD", -7.0, 3.0) == -1.0 and run("TFMOD", 7.0, -3.0) == 1.0
    assert run("TREM", -7.0, 3.0, dt=dtypes.int32.code) == 2.0
    assert run("TREM", 7.0, 0.0, dt=dtypes.int32.code) == 0.0
    assert run("TPOW", -2.0, 3.0) == -8.0 and math.isnan(run("TPOW", -2.0, 0.5))
    assert run("TSUBRELU", 1.0, 3.0) == 0.0 and run("TSUBRELU", 3.0, 1.0) == 2.0
    assert run("TSUBRELU", math.nan, 1.0) == 0.0
    assert run("TEXPANDS", 9.0, old=1.0, dt=F16, scalar=1 / 3) == float(np.float16(1 / 3))


# ---------------------------------------------------------------- row reduce / expand

REDUCE_SHAPES = [(1, 1), (1, 33), (9, 1), (8, 128), (7, 13), (16, 16), (3, 257)]


@pytest.mark.parametrize("name", [s.name for s in TILE_REDUCE])
def test_tile_row_reduce_matches_reference(ex, name):
    """Every tile_reduce instruction, folding in column order and rounding every partial
    result to dt (np.add.accumulate's order; int32 wraps): random rows, rows with NaN, +-inf
    (inf - inf), all -inf, and float16 sums that overflow (for int32: its ends)."""
    spec = ISA.by_name[name]
    init = float(eval(spec.init, {"np": np, "math": math}))
    rng = np.random.default_rng(500 + spec.opcode)
    for dt_name in spec.dtypes:
        dt = dtypes.BY_NAME[dt_name].code
        for trial, (rows, cols) in enumerate(REDUCE_SHAPES * 3):
            dst, src = regions(rng, [rows, rows * cols])
            l1 = values(rng, L1_WORDS, dt)
            block = l1[src:src + rows * cols].reshape(rows, cols)
            if trial >= len(REDUCE_SHAPES):
                block[:] = rng.standard_normal((rows, cols)).astype(NUMPY[dt])
            if trial >= 2 * len(REDUCE_SHAPES) and dt in (I32, dtypes.int16.code):   # special rows
                info = np.iinfo(NUMPY[dt])
                block[0, :] = float(info.min)
                block[-1, :] = float(info.max)
            elif trial >= 2 * len(REDUCE_SHAPES):
                block[0, :] = -math.inf
                block[-1, int(rng.integers(0, cols))] = math.nan
                block[rows // 2, :] = 60000.0 if dt == F16 else block[rows // 2, :]
            out = run_both(ex, "tile_row_reduce", dict(l1=l1),
                           [spec.opcode, "l1", dst, src, rows, cols, init, dt],
                           f"{name} dt={dt_name} rows={rows} cols={cols} trial={trial}")
            if len(REDUCE_SHAPES) <= trial < 2 * len(REDUCE_SHAPES):   # finite: numpy agrees
                typed = block.astype(NUMPY[dt])
                np_fn = {"TROWSUM": lambda x: np.add.accumulate(x, axis=1)[:, -1],
                         "TROWMAX": lambda x: np.maximum.reduce(x, axis=1)}.get(name)
                if np_fn is not None:
                    np.testing.assert_array_equal(out["l1"][dst:dst + rows], np_fn(typed))


@pytest.mark.parametrize("name", [s.name for s in TILE_REDUCE + TILE_COL_REDUCE] +
                         ["TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN"])
def test_reductions_of_a_window_match_the_dense_reduction_of_its_words(ex, name):
    """A reduction over the valid rows x cols of a wider tile (src rows spitch words apart, the
    AI core's typed tiles) gives, in both executors, what the dense kernel gives on those
    words gathered: the row reductions and TROWARG* write their results dpitch apart (1: a
    column). The words between the source's rows hold what would change any result that read
    them: the dtype's largest value for a max, its smallest for a min, 3 for a sum or product.
    A column reduction's dst is given whole 32-byte blocks apart from src (A2/A3's copy of row 0
    fills them, TColReduceOps.hpp l.54-56)."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(700 + spec.opcode)
    init = float(eval(spec.init, {"np": np, "math": math})) if spec.init else 0.0
    fam = spec.family
    for dt_name in spec.dtypes:
        dt = dtypes.BY_NAME[dt_name].code
        for rows, cols, extra, dp in ((1, 1, 3, 1), (3, 7, 9, 1), (5, 33, 31, 4), (9, 16, 16, 1), (2, 130, 6, 2)):
            sp = cols + extra
            per_row = fam in ("tile_reduce", "tile_row_arg")
            outs = rows if per_row else cols
            dp = dp if per_row else 1
            per = 32 // dtypes.BY_CODE[dt].itemsize          # A2/A3 copies row 0 in whole 32-byte blocks
            out_words = -(-cols // per) * per if fam == "tile_col_reduce" else (outs - 1) * dp + 1
            dst, src = regions(rng, [out_words, (rows - 1) * sp + cols])
            l1 = values(rng, L1_WORDS, dt)
            big = {"float32": 3e38, "float16": 65504.0}.get(dt_name) or float(np.iinfo(getattr(np, dt_name)).max)
            l1[src:src + (rows - 1) * sp + cols] = big if "MAX" in name else -big if "MIN" in name else 3.0
            dense = values(rng, rows * cols, dt)
            for r in range(rows):
                l1[src + r * sp:src + r * sp + cols] = dense[r * cols:(r + 1) * cols]
            if fam == "tile_reduce":
                args = [spec.opcode, "l1", dst, src, rows, cols, dp, sp, init, dt]
                kernel, ref_kernel = "tile_row_reduce_pitched", "tile_row_reduce"
            elif fam == "tile_col_reduce":
                args = [spec.opcode, "l1", dst, src, rows, cols, -1, -1, -1, sp, init, dt]
                kernel, ref_kernel = "tile_col_reduce_tmp", "tile_col_reduce"
            else:
                args = [spec.opcode, "l1", dst, src, rows, cols, dp, sp, -1, 0, dt]
                kernel = "tile_row_arg" if per_row else "tile_col_arg"
            got = run_both(ex, kernel, dict(l1=l1), args, f"{name} dt={dt_name} {rows}x{cols} pitch {sp}")["l1"]
            flat = np.concatenate([dense, np.zeros(outs)])
            with np.errstate(all="ignore"):
                if fam in ("tile_reduce", "tile_col_reduce"):
                    getattr(reference, ref_kernel)(spec.opcode, flat, rows * cols, 0, rows, cols, init, dt)
                else:
                    reference.tile_arg_reduce(spec.opcode, flat, rows * cols, 0, rows, cols, 1, 0, -1, 0, dt,
                                              fam == "tile_col_arg")
            assert_same(got[dst:dst + (outs - 1) * dp + 1:dp], flat[rows * cols:], f"{name} {rows}x{cols}")


def test_tile_row_reduce_identity():
    """Each tile_reduce instruction's table identity really is one: folding a single value from
    init gives that value back (so a 1-column reduce is a copy)."""
    for spec in TILE_REDUCE:
        init = float(eval(spec.init, {"np": np, "math": math}))
        for v in (0.0, 1.5, -2.0, 1e30, -1e30):
            assert reference.evaluate(spec, init, v, 0.0, False, dtypes.float32.code) == v, (spec.name, v)


@pytest.mark.parametrize("dt", [F32, F16])
def test_tile_row_expand_matches_reference(ex, dt):
    """trowexpand broadcasts src[r] over the r-th row of cols words, any value including NaN
    and -0.0, for single rows and columns and odd shapes; nothing else changes."""
    rng = np.random.default_rng(600 + dt)
    for rows, cols in REDUCE_SHAPES + [(64, 2), (2, 64)]:
        dst, src = regions(rng, [rows * cols, rows])
        l1 = values(rng, L1_WORDS, dt)
        out = run_both(ex, "tile_row_expand", dict(l1=l1), ["l1", dst, src, rows, cols],
                       f"TROWEXPAND dt={dt} rows={rows} cols={cols}")
        want = np.repeat(l1[src:src + rows], cols)
        assert_same(out["l1"][dst:dst + rows * cols], want, "TROWEXPAND against numpy")


@pytest.mark.parametrize("dt", [F32, F16, I32])
def test_tile_col_expand_matches_reference(ex, dt):
    """tcolexpand copies src's first row (cols words, NaN and -0.0 included) into every row of
    dst, for single rows and columns and odd shapes, in place too (dst == src keeps row 0)."""
    rng = np.random.default_rng(700 + dt)
    for trial, (rows, cols) in enumerate(REDUCE_SHAPES + [(64, 2), (2, 64)]):
        dst, src = regions(rng, [rows * cols, rows * cols])     # room for dst at src too
        if trial % 3 == 2:
            dst = src                                   # in place: the first row is the source
        l1 = values(rng, L1_WORDS, dt)
        want = np.tile(l1[src:src + cols], rows)
        out = run_both(ex, "tile_col_expand", dict(l1=l1), ["l1", dst, src, rows, cols],
                       f"TCOLEXPAND dt={dt} rows={rows} cols={cols}")
        assert_same(out["l1"][dst:dst + rows * cols], want, "TCOLEXPAND against numpy")


@pytest.mark.parametrize("name", ["TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN"])
def test_index_reductions_match_reference(ex, name):
    """The index of each row's (column's) kept element, for every dtype: random and special
    values (NaN first or later, infinities, signed zeros), ties of small integers, one row or
    column and odd shapes; the int32 index tile is disjoint from the source."""
    spec = ISA.by_name[name]
    rng = np.random.default_rng(spec.opcode)
    per_col = spec.family == "tile_col_arg"
    for dt_name in spec.dtypes:
        dt = dtypes.BY_NAME[dt_name].code
        for trial, (rows, cols) in enumerate(REDUCE_SHAPES + [(64, 2), (2, 64), (1, 1)]):
            dst, src = regions(rng, [cols if per_col else rows, rows * cols])
            l1 = values(rng, L1_WORDS, dt)
            if trial % 2:                                  # many ties
                l1[src:src + rows * cols] = rng.integers(-2, 3, rows * cols)
            out = run_both(ex, "tile_arg_reduce", dict(l1=l1), [spec.opcode, "l1", dst, src, rows, cols, 1, 0, -1, 0,
                                                                 dt, per_col], f"{name} dt={dt_name} {rows}x{cols}")
            if trial % 2:                                  # no NaN: numpy's first arg-extreme
                grid = l1[src:src + rows * cols].reshape(rows, cols)
                pick = np.argmax if name.endswith("MAX") else np.argmin
                want = pick(grid, axis=0 if per_col else 1).astype(np.float64)
                assert_same(out["l1"][dst:dst + want.size], want, f"{name} against numpy")


NAN, INF = math.nan, math.inf
# (a row of TROWARG* / a column of TCOLARG*, index argmax keeps, index argmin keeps)
NAN_LINES = [([NAN, 1.0, 5.0, 2.0], 0, 0),        # a NaN first: nothing is > or < it, so 0 stays
             ([1.0, NAN, 5.0, 2.0], 2, 0),        # a NaN later is skipped: 5 > 1, nothing < 1
             ([3.0, 5.0, NAN, -1.0], 1, 3),
             ([NAN, NAN, NAN, NAN], 0, 0),        # all NaN: 0
             ([2.0, NAN, NAN, -INF], 0, 3),       # -inf > 2 fails; -inf < 2 holds
             ([-0.0, 0.0, NAN, -0.0], 0, 0)]      # signed zeros are equal: the first stays


@pytest.mark.parametrize("name", ["TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN"])
@pytest.mark.parametrize("dt", [F32, F16])
def test_index_reductions_over_nan_follow_pto_isas_cpu_simulation(ex, name, dt):
    """pto-isa's CPU simulation (include/pto/cpu/TReduceIdx.hpp at 3186c381, lines 112-119 by
    column and 160-168 by row) starts with the first element as the best and replaces it only
    when `current > best` (argmax) or `current < best` (argmin) holds (ElementCmpCal, lines
    33-40). Every compare with a NaN is false, so a NaN after the first element never wins,
    a NaN first keeps index 0 whatever follows, and an all-NaN line gives 0. The six lines of
    NAN_LINES are the rows of a 6 x 4 tile (TROWARG*) or the columns of a 4 x 6 tile
    (TCOLARG*); the indices are worked by hand there. The value-and-index form (val >= 0)
    writes the element at each index beside it: the NaN of a line that starts with one."""
    spec = ISA.by_name[name]
    per_col = spec.family == "tile_col_arg"
    grid = np.array([line for line, _max, _min in NAN_LINES], np.float64)
    if per_col:
        grid = grid.T.copy()
    rows, cols = grid.shape
    want = np.array([imax if name.endswith("MAX") else imin for _line, imax, imin in NAN_LINES], np.float64)
    l1 = np.full(64, SENTINEL)
    l1[:rows * cols] = grid.ravel()
    out = run_both(ex, "tile_arg_reduce", dict(l1=l1), [spec.opcode, "l1", 40, 0, rows, cols, 1, 0, 50, 1, dt,
                                                        per_col], f"{name} over NaN")
    assert_same(out["l1"][40:46], want, f"{name} dt={dt} over NaN")
    kept = [line[int(k)] for (line, _max, _min), k in zip(NAN_LINES, want)]
    assert_same(out["l1"][50:56], np.array(kept), f"{name} dt={dt}: the kept elements")
    assert_same(out["l1"][46:50], np.full(4, SENTINEL), f"{name}: words between the indices and values")
    assert_same(out["l1"][56:], np.full(8, SENTINEL), f"{name}: words after the values")


def test_the_docs_give_the_nan_rule_the_executors_follow():
    """docs/aicore.md and the ISA records (hence pto.trowargmax's docstring and docs/isa.md)
    said a NaN never wins, but a NaN first keeps index 0 (the test above, as pto-isa's CPU
    simulation): each now says so, and where the rule comes from."""
    for name in ("TROWARGMAX", "TROWARGMIN", "TCOLARGMAX", "TCOLARGMIN"):
        doc = ISA.by_name[name].doc
        assert "; NaN never wins)" not in doc and "a NaN first keeps 0" in doc, doc
    aicore = (Path(__file__).resolve().parents[1] / "docs" / "aicore.md").read_text()
    row = next(line for line in aicore.splitlines() if line.startswith("| `trowargmax("))
    assert "a NaN never does" not in row
    assert "a NaN first keeps index 0" in row and "include/pto/cpu/TReduceIdx.hpp" in row


@pytest.mark.parametrize("dt", [F32, F16, I32])
def test_tile_trans_matches_reference(ex, dt):
    """TTRANS moves every word of src's rows x cols region (row pitch spitch, NaN and -0.0
    included) to its transposed place in dst (row pitch dpitch) and nothing else."""
    rng = np.random.default_rng(900 + dt)
    for rows, cols, spitch, dpitch in [(1, 1, 8, 8), (4, 8, 8, 8), (3, 5, 8, 16), (16, 16, 16, 16),
                                       (8, 64, 64, 8), (7, 2, 16, 9)]:
        dst, src = regions(rng, [cols * dpitch, rows * spitch])
        l1 = values(rng, L1_WORDS, dt)
        want = l1[src:src + rows * spitch].reshape(rows, spitch)[:, :cols].T.copy()
        out = run_both(ex, "tile_trans", dict(l1=l1), ["l1", dst, src, rows, cols, spitch, dpitch],
                       f"TTRANS dt={dt} {rows}x{cols} pitches {spitch}/{dpitch}")
        got = out["l1"][dst:dst + cols * dpitch].reshape(cols, dpitch)[:, :rows]
        assert_same(got.ravel(), want.ravel(), "TTRANS against numpy")


def test_conv_transposes_match_reference_and_numpy(ex):
    """TTRANS_CONV's five forms move words (NaN and -0.0 kept): 0 transposes blocks of c0 x hw to
    hw x c0, 1 hw x c0 to c0 x hw; 2 puts source n's c1hw x c0 words at run n of dn x c0 rows,
    leaving runs n..dn as they were, 3 the same per group with runs n..dn zeroed; 4 NCDHW into
    (d, c1, hw, dn, c0), zero past c and n. The numba kernel and the reference agree word for
    word, and with numpy's reshapes."""
    rng = np.random.default_rng(ISA.by_name["TTRANS_CONV"].opcode)
    l1 = values(rng, 4096, F32)
    src, dst = 100, 2000
    g, n, c1, hw, c0, dn = 2, 3, 2, 4, 8, 16
    for form in (0, 1):
        out = run_both(ex, "tile_trans_conv", dict(l1=l1), ["l1", dst, src, g * n * c1, c0 * hw, form, n, c1 * c0,
                                                            hw, c0, 0], f"TTRANS_CONV form {form}")
        blocks = l1[src:src + g * n * c1 * c0 * hw].reshape(-1, *((c0, hw) if form == 0 else (hw, c0)))
        assert_same(out["l1"][dst:dst + blocks.size], blocks.transpose(0, 2, 1).ravel(), f"form {form}")
    for form, groups in ((2, 1), (3, g)):
        m = c1 * hw
        out = run_both(ex, "tile_trans_conv", dict(l1=l1), ["l1", dst, src, groups * n, m * c0, form, n, c1 * c0, hw,
                                                            c0, dn], f"TTRANS_CONV form {form}")
        want = l1[dst:dst + groups * dn * m * c0].copy().reshape(groups, m, dn, c0)
        for k in range(groups):
            at = src + k * dn * m * c0
            want[k, :, :n] = l1[at:at + n * m * c0].reshape(n, m, c0).transpose(1, 0, 2)
            if form == 3:
                want[k, :, n:] = 0.0
        assert_same(out["l1"][dst:dst + want.size], want.ravel(), f"form {form}")
    c, d = 5, 2
    out = run_both(ex, "tile_trans_conv", dict(l1=l1), ["l1", dst, src, d * n * 1, c0 * hw, 4, n, c, hw, c0, dn],
                   "TTRANS_CONV form 4")
    grid = np.zeros((dn, c0, d, hw))
    grid[:n, :c] = l1[src:src + n * c * d * hw].reshape(n, c, d, hw)
    want = grid.reshape(dn, 1, c0, d, hw).transpose(3, 1, 4, 0, 2)
    assert_same(out["l1"][dst:dst + want.size], want.ravel(), "form 4")


@pytest.mark.parametrize("dt", [F32, F16, I32])
def test_tile_fillpad_matches_reference(ex, dt):
    """TFILLPAD*: the rows x cols valid region of src (row pitch spitch) lands in the top-left of
    a drows x dcols dst and the rest is the pad (inf, -inf, 0 or an integer limit), for empty,
    partial and full regions, into a larger tile and in place (dst == src, spitch == dcols)."""
    rng = np.random.default_rng(800 + dt)
    cases = [(0, 0, 4, 4, 8), (3, 5, 8, 4, 8), (4, 8, 8, 4, 8), (1, 1, 1, 1, 1), (5, 10, 16, 16, 32),
             (7, 3, 3, 9, 3), (2, 64, 64, 2, 64)]
    for trial, (rows, cols, spitch, drows, dcols) in enumerate(cases):
        in_place = spitch == dcols and trial % 2
        dst, src = regions(rng, [drows * dcols, max(rows, drows) * spitch])
        if in_place:
            dst = src
        pad = [math.inf, -math.inf, 0.0, -2147483648.0][trial % 4]
        l1 = values(rng, L1_WORDS, dt)
        want = np.full((drows, dcols), pad)
        want[:rows, :cols] = l1[src:src + rows * spitch].reshape(rows, spitch)[:, :cols]
        out = run_both(ex, "tile_fillpad", dict(l1=l1), ["l1", dst, src, pad, rows, cols, spitch, drows, dcols],
                       f"TFILLPAD dt={dt} {rows}x{cols} pitch {spitch} into {drows}x{dcols}")
        assert_same(out["l1"][dst:dst + drows * dcols], want.ravel(), "TFILLPAD against numpy")


# ---------------------------------------------------------------- through a kernel

KROWS, KCOLS = 4, 10                 # the kernel-path tiles: 4 x 10, n = 40
OLD_DST = 0.75                       # what a reads_dst instruction finds in its dst


def for_dtype(dt_name):
    """The tile_alu and tile_reduce records that take dt_name (int32-only bit ops do not) and
    that the article's alloc_local tiles reach (not the AI core's Vec -> Vec TMOV_V2V, which
    pto.tmov emits for typed tiles only: tests/test_sort_ops.py)."""
    return ([s for s in TILE_ALU if dt_name in s.dtypes and s.name != "TMOV_V2V"],
            [s for s in TILE_REDUCE if dt_name in s.dtypes])


def kernel_source(dt_name):
    """One kernel that applies every tile_alu / tile_reduce instruction of the table (and
    trowexpand) to loaded tiles and stores each result into its own row block of ``o``."""
    n = KROWS * KCOLS
    TILE_ALU, TILE_REDUCE = for_dtype(dt_name)
    lines = [f"N = {n}", "", "@pto.kernel", "def every_tile_op(a, b, o, s):",
             f"    ta = pto.alloc_local(N, dtype=pto.{dt_name})",
             f"    tb = pto.alloc_local(N, dtype=pto.{dt_name})",
             f"    red = pto.alloc_local({KROWS}, dtype=pto.{dt_name})",
             f"    pto.async_load(ta, a, N * {dtypes.BY_NAME[dt_name].itemsize})",
             f"    pto.async_load(tb, b, rows={KROWS}, cols={KCOLS}, stride={KCOLS})"]
    for i, spec in enumerate(TILE_ALU):
        form = alu_form(spec)
        call = {"binary": "t, ta, tb, N", "scalar": "t, ta, s, N", "unary": "t, ta, N", "fill": "t, s, N"}[form]
        if spec.name == "TSDIVS":    # pto.tdivs with the scalar first: scalar / tile
            call = "t, s, ta, N"
        call = call.replace("t,", f"t{i},", 1)
        lines += [f"    t{i} = pto.alloc_local(N, dtype=pto.{dt_name})"]
        if spec.reads_dst:           # dst is an input too (TMULADDDST, TAXPY): give it values
            lines.append(f"    pto.texpands(t{i}, {OLD_DST}, N)")
        lines += [f"    pto.{spec.builtin}({call})",
                  f"    pto.store(o + {i * n}, t{i}, N * {dtypes.BY_NAME[dt_name].itemsize})"]
    base = len(TILE_ALU) * n
    for j, spec in enumerate(TILE_REDUCE):
        lines += [f"    pto.{spec.builtin}(red, ta, {KROWS}, {KCOLS})",
                  f"    e{j} = pto.alloc_local(N, dtype=pto.{dt_name})",
                  f"    pto.trowexpand(e{j}, red, {KROWS}, {KCOLS})",
                  f"    pto.store(o + {base}, e{j}, rows={KROWS}, cols={KCOLS}, stride={KCOLS})"]
        base += n
    lines.append("    pto.wait_all()")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("dt_name", ["float32", "float16"])
def test_kernel_path_matches_reference_kernels(make_kernels, dt_name):
    """The same instructions written as builtins in a kernel: the compiler's operand order, the
    timing model's call of the kernels (binary / scalar / unary forms, reduce identities,
    completion order on the pipes) must give what the reference kernels give on the host."""
    import pypto_sim as pto
    dt = dtypes.BY_NAME[dt_name].code
    n = KROWS * KCOLS
    rng = np.random.default_rng(700 + dt)
    host_a = values(rng, n, dt).astype(NUMPY[dt])
    host_a[::7] = np.abs(host_a[::7])
    host_b = values(rng, n, dt).astype(NUMPY[dt])
    scalar = -1.75
    TILE_ALU, TILE_REDUCE = for_dtype(dt_name)
    outputs = len(TILE_ALU) + len(TILE_REDUCE)
    kernel = make_kernels(kernel_source(dt_name)).every_tile_op
    npdt = dtypes.BY_NAME[dt_name]
    d_a, d_b, d_o = (pto.alloc_tensor(k * n * npdt.itemsize, dtype=npdt) for k in (1, 1, outputs))
    pto.memcpy_h2d(d_a, host_a)
    pto.memcpy_h2d(d_b, host_b)
    pto.launch(kernel, grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_b, d_o, scalar))
    got = np.zeros(outputs * n, NUMPY[dt])
    pto.memcpy_d2h(got, d_o)

    want = np.zeros(outputs * n)
    a64, b64 = host_a.astype(np.float64), host_b.astype(np.float64)
    with np.errstate(all="ignore"):
        for i, spec in enumerate(TILE_ALU):
            l1 = np.concatenate([a64, b64, np.full(n, OLD_DST) if spec.reads_dst else np.zeros(n)])
            form = alu_form(spec)
            reference.tile_elementwise(spec.opcode, l1, 2 * n, 2 * n if form == "fill" else 0,
                                       n if form == "binary" else -1, scalar, form in ("scalar", "fill"), n, dt)
            want[i * n:(i + 1) * n] = l1[2 * n:]
        for j, spec in enumerate(TILE_REDUCE):
            l1 = np.concatenate([a64, np.zeros(KROWS + n)])
            init = float(eval(spec.init, {"np": np, "math": math}))
            reference.tile_row_reduce(spec.opcode, l1, n, 0, KROWS, KCOLS, init, dt)
            reference.tile_row_expand(l1, n + KROWS, n, KROWS, KCOLS)
            k = len(TILE_ALU) + j
            want[k * n:(k + 1) * n] = l1[n + KROWS:]
    names = [s.name for s in TILE_ALU + TILE_REDUCE]
    for k, name in enumerate(names):
        assert_same(got[k * n:(k + 1) * n].astype(np.float64), want[k * n:(k + 1) * n],
                    f"{name} {dt_name} through a kernel")


# ---------------------------------------------------------------- coverage

def test_every_tile_instruction_is_covered():
    """Fails when the ISA gains a tile instruction that no differential case above exercises:
    tile_alu and tile_reduce cases come from the table, the other families are listed by hand
    in HAND_TESTED, and the reference must have a kernel for every family that computes values."""
    covered = ({s.name for s in TILE_ALU} | {s.name for s in TILE_CONVERT} | {s.name for s in TILE_REDUCE} | {s.name for s in TILE_EXPAND_OP}
               | {s.name for s in TILE_COL_REDUCE} | {s.name for s in TILE_COL_EXPAND_OP}
               | {s.name for s in TILE_MASK} | {"TTRI", "TCI", "TPARTADD", "TPARTMAX", "TPARTMIN", "TPARTMUL", "TPAIRREDUCESUM",
                  "TPARTARGMAX", "TPARTARGMIN",
                  "TCONCAT", "TCONCAT_IDX", "TCONCAT_DSTIDX", "TCI_S", "TDEQUANT", "TDEQUANT_S8",
                  "TQUANT", "TQUANT_ASYM", "TADDRELUCONV", "TSUBRELUCONV", "TADDDEQRELU"})
    for names in HAND_TESTED.values():
        covered |= names
    needed = {s.name for s in ISA.specs if s.family in TILE_FAMILIES and s.family not in NO_VALUES}
    assert needed - covered == set(), f"no tile differential test for {sorted(needed - covered)}"
    stale = {n for fam, names in HAND_TESTED.items() for n in names
             if n not in ISA.by_name or (fam != "aicore" and ISA.by_name[n].family != fam)}
    assert not stale, f"HAND_TESTED lists {sorted(stale)} under the wrong family"
    value_families = set(TILE_FAMILIES) - set(NO_VALUES)
    assert set(reference.TILE_FAMILY_KERNELS) == value_families
    for spec in TILE_ALU:
        alu_form(spec)                  # every layout is one the timing model can call
    for spec in TILE_REDUCE:
        assert spec.init is not None and spec.float_expr is not None, spec.name
