"""pto-isa's CPU-suite st cases of TSCATTER (hw-native-sys/pto-isa tests/cpu/st/testcase/tscatter at
3186c381: gen_data.py, main.cpp, tscatter_kernel.cpp, tscatter_common.h) in the AI-core API as their
kernels write them, checked against A2/A3's TSCATTER (include/pto/npu/a2a3/TScatter.hpp).
gen_data.py seeds once (np.random.seed(19)); each port draws from its own np.random.RandomState(19).

- TSCATTERTest.case_float_uint16_2x32_1x32 (1 TEST_F, TSCATTER(dst, src, indexes)): runTScatter
  loads a 2 x 32 float src and a 1 x 32 uint16 index tile, TEXPANDS dst to 0.0f and scatters.
  A2/A3 refuses it: 4-byte data takes 4-byte indices (static_assert "TSCATTER: Invalid data type
  of idx.", TScatter.hpp lines 72-76), so the kernel does not compile; ported as that refusal
  (its MTE2 -> V and V -> MTE3 flags are the port's: the CPU kernel sets none for this case).
- TSCATTERTest.case_masked_<dtype>_<pattern> (19 TEST_Fs, TSCATTER<MaskPattern>(dst, src),
  SCATTER_ROW): runTScatterMasked loads a ROW x COL / k src (k = 2 for P0101 / P1010, 4 for
  P0001 / P0010 / P0100 / P1000, 1 for P1111) into a whole tile of that shape, scatters into a
  whole ROW x COL dst, stores it; ROW and COL are tscatter_common.h's FLOAT_* (float, uint32,
  int32) and HALF_* (half, uint16, int16) ones. Golden (gen_masked_scatter_golden): src =
  randint(1, 100) of ROW x COL / k as the dtype, zeros(ROW, COL) with src(i, j) at (i, k j + the
  pattern's offset). main.cpp: ResultCmp<T>(golden, out, 0.001f) over ROW x COL elements.
- TSCATTERTest.case_col_<dtype>_<pattern> (14 TEST_Fs, TSCATTER<MaskPattern,
  ScatterAxis::SCATTER_COL>(dst, src)): runTScatterMaskedCol loads an SR x 64 src, scatters into
  a whole DR x 64 dst (DR = SR x k), stores it. Golden (gen_masked_scatter_col_golden): src =
  randint(1, 100) of SR x 64, zeros(DR, 64) with src's row i at row k i + the pattern's offset.
  ResultCmp<T>(golden, out, 0.001f) over DR x 64 elements.
The P1111 cases are TMOV_IMPL(dst, src) on A2/A3 (TScatter.hpp line 165). Scatters are exact
moves, so the ports also compare the bytes.

Nothing is left out.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import MASK_PATTERNS, SCATTER_MASK, as_words, result_cmp, run_kernel


# ------------------------------------------------------------------------------ TSCATTER (indices)

TSCATTER = """
@pto.kernel
def k(S, I, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            idx = pto.alloc_tile({ir}, {ic}, pto.{it})
            pto.tload(src, S)
            pto.tload(idx, I)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.texpands(dst, 0.0)
            pto.tscatter(dst, src, idx)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


# main.cpp's TEST_F(TSCATTERTest, case_float_uint16_2x32_1x32): (dtype, idx dtype, R, C, IR, IC)
INDEX_CASES = {"float_uint16_2x32_1x32": ("float32", "uint16", 2, 32, 1, 32)}


@pytest.mark.parametrize("case", INDEX_CASES, ids=[f"TSCATTERTest.case_{c}" for c in INDEX_CASES])
def test_tscatter_float_uint16_a2a3_refuses(make_kernels, case):
    """TSCATTERTest.case_float_uint16_2x32_1x32: runTScatter<2, 32, 1, 32> (float src and dst
    tiles 2 x 32, a uint16 index tile 1 x 32, TEXPANDS(dst, 0.0f), TSCATTER(dst, src, idx)).
    A2/A3's TSCATTER_IMPL takes 4-byte indices for 4-byte data (static_assert "TSCATTER: Invalid
    data type of idx.", include/pto/npu/a2a3/TScatter.hpp lines 72-76), so the kernel does not
    compile."""
    dt, it, r, c, ir, ic = INDEX_CASES[case]
    kernel = make_kernels(TSCATTER.format(r=r, c=c, ir=ir, ic=ic, dt=dt, it=it)).k
    with pytest.raises(pto.CompileError, match=r"hold uint16; for float32 data .*Invalid data type of idx"):
        kernel.program_for((pto.alloc_tensor(4 * r * c, pto.float32), pto.alloc_tensor(2 * ir * ic, pto.uint16),
                            pto.alloc_tensor(4 * r * c, pto.float32)))


# ------------------------------------------------------------------------------ TSCATTER (masks)

# tscatter_common.h's (ROW, COL) per pattern: FLOAT_<p>_ROW / _COL and HALF_<p>_ROW / _COL
FLOAT_SHAPES = {"P0101": (4, 64), "P1010": (7, 1024), "P0001": (3, 1056), "P0010": (4, 128),
                "P0100": (5, 256), "P1000": (6, 288), "P1111": (7, 320)}
HALF_SHAPES = {"P0101": (5, 128), "P1010": (7, 1024), "P0001": (3, 1024), "P0010": (4, 128),
               "P0100": (5, 256), "P1000": (6, 256)}
# main.cpp's TEST_F(TSCATTERTest, case_masked_<name>) in order: name -> (dtype, pattern, ROW, COL)
ROW_CASES = {f"float_{p}": ("float32", p, *FLOAT_SHAPES[p]) for p in FLOAT_SHAPES}
ROW_CASES.update({f"half_{p}": ("float16", p, *HALF_SHAPES[p]) for p in ("P0101", "P1010", "P0001", "P0100", "P1000")})
ROW_CASES.update({"U16_P0101": ("uint16", "P0101", *HALF_SHAPES["P0101"]),
                  "U16_P1010": ("uint16", "P1010", *HALF_SHAPES["P1010"]),
                  "I16_P0001": ("int16", "P0001", *HALF_SHAPES["P0001"]),
                  "I16_P0010": ("int16", "P0010", *HALF_SHAPES["P0010"]),
                  "U32_P0100": ("uint32", "P0100", *FLOAT_SHAPES["P0100"]),
                  "I32_P1000": ("int32", "P1000", *FLOAT_SHAPES["P1000"]),
                  "I32_P1111": ("int32", "P1111", *FLOAT_SHAPES["P1111"])})


@pytest.mark.parametrize("case", ROW_CASES, ids=[f"TSCATTERTest.case_masked_{c}" for c in ROW_CASES])
def test_tscatter_masked(make_kernels, case):
    """gen_masked_scatter_golden (seed 19, one RandomState per case): src = randint(1, 100) of
    ROW x COL / k as the dtype; golden = zeros(ROW, COL), row r's picked columns (the pattern's
    offset, then every k-th) taking src's row r in order. runTScatterMasked<T, ROW, COL / k, ROW,
    COL, pattern>: whole src and dst tiles. main.cpp: ResultCmp<T>(golden, out, 0.001f) over
    ROW x COL elements."""
    dt, p, r, dc = ROW_CASES[case]
    first, period = MASK_PATTERNS[p]
    c = dc // period
    rng = np.random.RandomState(19)
    src = rng.randint(1, 100, [r, c]).astype(dt)
    golden = np.zeros((r, dc), dt)
    golden[:, first::period] = src
    kernel = make_kernels(SCATTER_MASK.format(r=r, c=c, dr=r, dc=dc, dt=dt, p=p, axis="row")).k
    out, = run_kernel(kernel, [src], [((r, dc), dt)])
    assert result_cmp(golden, out, 0.001)
    np.testing.assert_array_equal(as_words(out, np.uint8), as_words(golden, np.uint8))


# main.cpp's TEST_F(TSCATTERTest, case_col_<name>) in order: name -> (dtype, pattern, SR, SC, DR, DC), as
# test_scatter_masked_col's template arguments (tscatter_common.h's COL_FLOAT_* / COL_HALF_*)
COL_CASES = {f"float_{p}": ("float32", p, 4, 64, 8, 64) for p in ("P0101", "P1010")}
COL_CASES.update({f"float_{p}": ("float32", p, 4, 64, 16, 64) for p in ("P0001", "P0010", "P0100", "P1000")})
COL_CASES["float_P1111"] = ("float32", "P1111", 7, 64, 7, 64)
COL_CASES.update({f"half_{p}": ("float16", p, 5, 64, 10, 64) for p in ("P0101", "P1010")})
COL_CASES.update({f"half_{p}": ("float16", p, 4, 64, 16, 64) for p in ("P0001", "P0010", "P0100", "P1000")})
COL_CASES["half_P1111"] = ("float16", "P1111", 5, 64, 5, 64)


@pytest.mark.parametrize("case", COL_CASES, ids=[f"TSCATTERTest.case_col_{c}" for c in COL_CASES])
def test_tscatter_masked_col(make_kernels, case):
    """gen_masked_scatter_col_golden (seed 19, one RandomState per case): src = randint(1, 100)
    of SR x SC as the dtype; golden = zeros(DR, DC) with the picked rows (the pattern's offset,
    then every k-th) taking src's rows in order. runTScatterMaskedCol<T, SR, SC, DR, DC,
    pattern>: whole src and dst tiles. main.cpp: ResultCmp<T>(golden, out, 0.001f) over DR x DC
    elements."""
    dt, p, r, c, dr, dc = COL_CASES[case]
    first, period = MASK_PATTERNS[p]
    rng = np.random.RandomState(19)
    src = rng.randint(1, 100, [r, c]).astype(dt)
    golden = np.zeros((dr, dc), dt)
    golden[first::period, :c] = src
    kernel = make_kernels(SCATTER_MASK.format(r=r, c=c, dr=dr, dc=dc, dt=dt, p=p, axis="col")).k
    out, = run_kernel(kernel, [src], [((dr, dc), dt)])
    assert result_cmp(golden, out, 0.001)
    np.testing.assert_array_equal(as_words(out, np.uint8), as_words(golden, np.uint8))
