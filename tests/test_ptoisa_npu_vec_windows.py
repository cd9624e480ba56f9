"""pto-isa's ON-DEVICE A2/A3 st cases of TEXTRACT and TINSERT between two Vec tiles
(hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/textract_vec and tinsert_vec at 3186c381:
gen_data.py, main.cpp, textract_vec_kernel.cpp, tinsert_vec_kernel.cpp) in the AI-core API as
their kernels write them: TEXTRACT(dst, src, row, col) as ``pto.textract(dst, src, row, col)``,
TINSERT(dst, src, row, col) as ``pto.tinsert(dst, src, row, col)``, TSUBVIEW(view, tile, 0, 0)
of a tile type with a smaller valid region as ``pto.tsubview(tile, 0, 0, rows, cols, valid=(vr,
vc))``. A2/A3 runs them as TExtractVecToVecND* / TInsertVecToVecND* (include/pto/npu/a2a3/
TExtract.hpp, TInsert.hpp, include/pto/common/arch/memory/textract_common.hpp, tinsert_common.hpp).
These goldens are what A2/A3 hardware must produce.

- TExtractVecTest.case_nd_* (32 TEST_Fs, testND<key, dType>): RunTExtractNDVec<T, SrcRows,
  SrcCols, DstStaticRows, DstStaticCols, DstValidRows, DstValidCols, IdxRow, IdxCol> TLOADs the
  SrcRows x SrcCols GM tensor into a whole src tile; when dst's valid region is not the whole
  tile (!isFullValid) it also TLOADs the dst_init tensor into the whole DstStatic dst tile,
  TSUBVIEWs a view of dst's shape with valid (DstValidRows, DstValidCols) at (0, 0) and
  TEXTRACTs into it, else TEXTRACTs into the whole dst tile (not loaded first); flag MTE2 -> V
  before the op, V -> MTE3 after; TSTORE of the whole dst tile.
- TExtractVecTest.case_nd_scalar_* (11 TEST_Fs, testNDScalar): RunTExtractNDVecScalar<T, SrcRows,
  SrcCols, IdxRow, IdxCol> is that kernel's !isFullValid path with a 1 x (32 / sizeof(T)) dst
  tile and a 1 x 1 valid view (A2/A3's scalar path, one element by the scalar unit).
- TInsertVecTest.case_nd_* (32 TEST_Fs): RunTInsertNDVec<T, SrcStaticRows, SrcStaticCols,
  DstStaticRows, DstStaticCols, SrcValidRows, SrcValidCols, IdxRow, IdxCol> TLOADs the whole src
  and the whole dst tile (dst_init), TINSERTs the whole src tile into dst (isFullValid) or a
  TSUBVIEW of src of its shape with valid (SrcValidRows, SrcValidCols), TSTOREs the whole dst.
- TInsertVecTest.case_nd_scalar_* (11 TEST_Fs): RunTInsertNDVecScalar<T, DstStaticRows,
  DstStaticCols, IdxRow, IdxCol>, the same with a 1 x (32 / sizeof(T)) src tile and a 1 x 1 valid
  view of it.

Data and goldens (gen_data.py's formulas; it seeds once, np.random.seed(0), and draws every case
in order, src first, then dst_init; each port draws from its own np.random.RandomState(0), so
later cases' numbers differ from its files, their distribution does not): rand_data is
randint(-128, 127) for int8, randint(0, 256) for uint8, randint(-1000, 1000) for int32,
uniform(-10, 10) cast to the dtype otherwise (float32, float16, int16, uint16, uint32, and the
bfloat16 cases' np.uint16 words, which the bfloat16 kernels get as their bits: uniform values cast
to uint16, the negative ones as numpy casts them on the machine that runs gen_data.py). TEXTRACT:
golden = dst_init with golden[:vr, :vc] = src[row:row + vr, col:col + vc] (scalar: golden[0, 0] =
src[row, col]). TINSERT: golden = dst_init with golden[row:row + vr, col:col + vc] = src[:vr, :vc]
(scalar: golden[row, col] = src[0, 0]). main.cpp: ResultCmp<dType>(golden, out, 0.0f) over the
output's DstStaticRows x DstStaticCols elements (exact), dType float, aclFloat16, uint16_t (the
bfloat16 cases), int32_t, uint32_t, int16_t, uint16_t, int8_t or uint8_t; aclFloat16 is CANN's
``typedef uint16_t aclFloat16`` (acl/acl_base.h), so the float16 outputs are compared as their
uint16 bit patterns, as main.cpp does. Each port also asks for the golden's bytes.

main.cpp does not initialise the output tensor; the port's starts as zeros (the kernels store the
whole dst tile over it). The kernels TASSIGN src at UB 0 and dst at the next 256-byte boundary;
pypto_sim places the tiles itself.

The NZ cases, TExtractVecTest.case_nz_* and TInsertVecTest.case_nz_* (in each suite 31 TEST_Fs
of testNZ and 12 of testNZScalar), are tests/test_ptoisa_npu_vec_windows_nz.py.

The bfloat16 cases (case_nd_aligned_4_bf16, case_nd_aligned_bf16_2, case_nd_nonpow2_partial_bf16,
case_nd_unalignedvalid_bf16, case_nd_scalar_3_bf16 in each suite) move NaN words: gen_data.py's
bfloat16 words are uniform(-10, 10) cast to np.uint16, so every negative draw is a word 0xFFF7 -
0xFFFF (numpy 2.4 on x86-64 here), a quiet bfloat16 NaN with a payload, which A2/A3's copies move
bit for bit and the golden keeps. This port found pypto_sim writing them back as 0xFFC0 (a GM load
of a bfloat16 NaN gave float64's plain quiet NaN, and memcpy between ml_dtypes' bfloat16 host
arrays and bfloat16 tensors went through float32); both keep the words now (exec/compiled/
gm_bytes.py, exec/gm.py), and the 10 cases run.
"""
import numpy as np
import pytest

from ptoisa_st import PTOISA_DTYPES
from ptoisa_vec_windows import TYPES, check, constexpr, rand_data, run_case

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase at 3186c381"

# TExtractVecTest's ND TEST_Fs: case -> (T, SrcRows, SrcCols, DstStaticRows, DstStaticCols, DstValidRows,
# DstValidCols, IdxRow, IdxCol), as gen_data.py's nd_cases and the kernel's testKeys list them
TEXTRACT_ND = {
    "case_nd_aligned_1": ("float", 16, 16, 8, 8, 8, 8, 0, 0),
    "case_nd_aligned_2": ("float", 16, 16, 8, 8, 8, 8, 4, 8),
    "case_nd_aligned_3_half": ("half", 32, 32, 16, 16, 16, 16, 8, 16),
    "case_nd_aligned_4_bf16": ("bf16", 32, 32, 16, 16, 16, 16, 0, 16),
    "case_nd_aligned_5_int32": ("int32", 16, 16, 8, 8, 8, 8, 4, 0),
    "case_nd_aligned_6_int8": ("int8", 64, 64, 32, 32, 32, 32, 0, 32),
    "case_nd_partial_validrow": ("half", 32, 32, 16, 16, 4, 16, 2, 16),
    "case_nd_unaligned_validcol_full_row": ("float", 16, 32, 8, 16, 8, 16, 0, 16),
    "case_nd_aligned_bf16_2": ("bf16", 32, 64, 16, 32, 16, 32, 8, 32),
    "case_nd_aligned_uint8": ("uint8", 64, 64, 32, 32, 32, 32, 0, 32),
    "case_nd_aligned_int16": ("int16", 32, 32, 16, 16, 16, 16, 8, 16),
    "case_nd_aligned_uint16": ("uint16", 32, 32, 16, 16, 16, 16, 0, 0),
    "case_nd_aligned_uint32": ("uint32", 16, 16, 8, 8, 8, 8, 4, 8),
    "case_nd_partial_validboth_float": ("float", 32, 64, 16, 32, 8, 16, 8, 16),
    "case_nd_aligned_int8_strided": ("int8", 32, 64, 16, 32, 16, 32, 16, 32),
    "case_nd_partial_validrowonly_half": ("half", 64, 64, 32, 32, 8, 32, 24, 16),
    "case_nd_nonpow2_float": ("float", 24, 48, 12, 32, 12, 32, 5, 8),
    "case_nd_nonpow2_half": ("half", 30, 80, 14, 48, 14, 48, 3, 16),
    "case_nd_nonpow2_int8": ("int8", 48, 96, 24, 64, 24, 64, 7, 32),
    "case_nd_nonpow2_partial_bf16": ("bf16", 24, 48, 12, 32, 6, 16, 11, 16),
    "case_nd_nonpow2_int32": ("int32", 20, 16, 10, 8, 10, 8, 9, 8),
    "case_nd_nonpow2_partial_float_unaligned_idxrow": ("float", 24, 48, 12, 32, 6, 8, 15, 24),
    "case_nd_unalignedvalid_float": ("float", 32, 32, 8, 16, 8, 10, 0, 0),
    "case_nd_unalignedvalid_half": ("half", 32, 32, 8, 16, 8, 10, 0, 0),
    "case_nd_unalignedvalid_bf16": ("bf16", 32, 32, 8, 16, 8, 14, 0, 0),
    "case_nd_unalignedvalid_int16": ("int16", 32, 32, 8, 16, 8, 11, 0, 0),
    "case_nd_unalignedvalid_int32": ("int32", 32, 32, 8, 16, 8, 14, 0, 0),
    "case_nd_unalignedvalid_uint16_strided": ("uint16", 32, 64, 16, 32, 16, 22, 0, 0),
    "case_nd_unalignedvalid_int8_even": ("int8", 32, 64, 16, 64, 16, 34, 0, 0),
    "case_nd_unalignedvalid_float_with_idx": ("float", 32, 32, 8, 16, 8, 10, 4, 8),
    "case_nd_unalignedvalid_uint16_taillarge": ("uint16", 32, 32, 8, 16, 8, 15, 0, 0),
    "case_nd_unalignedvalid_float_smallthan32B": ("float", 32, 32, 8, 16, 8, 6, 0, 0),
}
# TInsertVecTest's ND TEST_Fs: case -> (T, SrcStaticRows, SrcStaticCols, DstStaticRows, DstStaticCols,
# SrcValidRows, SrcValidCols, IdxRow, IdxCol)
TINSERT_ND = {
    "case_nd_aligned_1": ("float", 8, 8, 16, 16, 8, 8, 0, 0),
    "case_nd_aligned_2": ("float", 8, 8, 16, 16, 8, 8, 4, 8),
    "case_nd_aligned_3_half": ("half", 16, 16, 32, 32, 16, 16, 8, 16),
    "case_nd_aligned_4_bf16": ("bf16", 16, 16, 32, 32, 16, 16, 0, 16),
    "case_nd_aligned_5_int32": ("int32", 8, 8, 16, 16, 8, 8, 4, 0),
    "case_nd_aligned_6_int8": ("int8", 32, 32, 64, 64, 32, 32, 0, 32),
    "case_nd_partial_validrow": ("half", 16, 16, 32, 32, 4, 16, 2, 16),
    "case_nd_full_row_strided": ("float", 8, 16, 16, 32, 8, 16, 0, 16),
    "case_nd_aligned_bf16_2": ("bf16", 16, 32, 32, 64, 16, 32, 8, 32),
    "case_nd_aligned_uint8": ("uint8", 32, 32, 64, 64, 32, 32, 0, 32),
    "case_nd_aligned_int16": ("int16", 16, 16, 32, 32, 16, 16, 8, 16),
    "case_nd_aligned_uint16": ("uint16", 16, 16, 32, 32, 16, 16, 0, 0),
    "case_nd_aligned_uint32": ("uint32", 8, 8, 16, 16, 8, 8, 4, 8),
    "case_nd_partial_validboth_float": ("float", 16, 32, 32, 64, 8, 16, 8, 16),
    "case_nd_aligned_int8_strided": ("int8", 16, 32, 32, 64, 16, 32, 16, 32),
    "case_nd_partial_validrowonly_half": ("half", 32, 32, 64, 64, 8, 32, 24, 16),
    "case_nd_nonpow2_float": ("float", 12, 32, 24, 48, 12, 32, 5, 8),
    "case_nd_nonpow2_half": ("half", 14, 48, 30, 80, 14, 48, 3, 16),
    "case_nd_nonpow2_int8": ("int8", 24, 64, 48, 96, 24, 64, 7, 32),
    "case_nd_nonpow2_partial_bf16": ("bf16", 12, 32, 24, 48, 6, 16, 11, 16),
    "case_nd_nonpow2_int32": ("int32", 10, 8, 20, 16, 10, 8, 9, 8),
    "case_nd_nonpow2_partial_float_unaligned_idxrow": ("float", 12, 32, 24, 48, 6, 8, 15, 24),
    "case_nd_unalignedvalid_float": ("float", 8, 16, 32, 32, 8, 10, 0, 0),
    "case_nd_unalignedvalid_half": ("half", 8, 16, 32, 32, 8, 10, 0, 0),
    "case_nd_unalignedvalid_bf16": ("bf16", 8, 16, 32, 32, 8, 14, 0, 0),
    "case_nd_unalignedvalid_int16": ("int16", 8, 16, 32, 32, 8, 11, 0, 0),
    "case_nd_unalignedvalid_int32": ("int32", 8, 16, 32, 32, 8, 14, 0, 0),
    "case_nd_unalignedvalid_uint16_strided": ("uint16", 16, 32, 32, 64, 16, 22, 0, 0),
    "case_nd_unalignedvalid_int8_even": ("int8", 16, 64, 32, 64, 16, 34, 0, 0),
    "case_nd_unalignedvalid_float_with_idx": ("float", 8, 16, 32, 32, 8, 10, 4, 8),
    "case_nd_unalignedvalid_uint16_taillarge": ("uint16", 8, 16, 32, 32, 8, 15, 0, 0),
    "case_nd_unalignedvalid_float_smallthan32B": ("float", 8, 16, 32, 32, 8, 6, 0, 0),
}
# the scalar TEST_Fs, the same in both suites: case -> (T, the other tile's rows, cols, IdxRow, IdxCol) (TEXTRACT's
# src, TINSERT's dst; the window's tile is 1 x 32 / sizeof(T) of valid (1, 1))
SCALAR = {
    "case_nd_scalar_1_float": ("float", 16, 16, 5, 7),
    "case_nd_scalar_2_half": ("half", 32, 32, 10, 15),
    "case_nd_scalar_3_bf16": ("bf16", 32, 32, 3, 11),
    "case_nd_scalar_4_int8": ("int8", 64, 64, 20, 30),
    "case_nd_scalar_5_int32": ("int32", 16, 16, 7, 9),
    "case_nd_scalar_6_int16": ("int16", 32, 32, 0, 0),
    "case_nd_scalar_7_uint16": ("uint16", 32, 32, 31, 31),
    "case_nd_scalar_8_uint32": ("uint32", 16, 16, 15, 15),
    "case_nd_scalar_nonpow2_half": ("half", 30, 80, 17, 23),
    "case_nd_scalar_nonpow2_int8": ("int8", 48, 96, 41, 73),
    "case_nd_scalar_nonpow2_float": ("float", 24, 48, 11, 13),
}


def _with_scalars(nd):
    """The ND cases of a suite followed by its scalar ones, each as (T, src rows, src cols, dst rows, dst cols,
    valid rows, valid cols, IdxRow, IdxCol) of the ND kernel that the scalar kernel is the !isFullValid path of."""
    cases = dict(nd)
    for name, (t, r, c, i, j) in SCALAR.items():
        min_aligned = 32 // np.dtype(TYPES[t][0]).itemsize
        cases[name] = (t, r, c, 1, min_aligned, 1, 1, i, j) if nd is TEXTRACT_ND else (t, 1, min_aligned, r, c,
                                                                                         1, 1, i, j)
    return cases


TEXTRACT_CASES = _with_scalars(TEXTRACT_ND)
TINSERT_CASES = _with_scalars(TINSERT_ND)


# ------------------------------------------------------------------------------ TEXTRACT (Vec -> Vec)

# RunTExtractNDVec (and RunTExtractNDVecScalar, its !isFullValid path with a 1 x 32 B dst of valid (1, 1))
TEXTRACT = """
@pto.kernel
def k(S, D, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({sr}, {sc}, pto.{dt})
            dst_full = pto.alloc_tile({dr}, {dc}, pto.{dt})
            pto.tload(src, S)
            pto.tload(dst_full, D)  # partial
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.textract(dst_full, src, {row}, {col})  # full
            dst_extract = pto.tsubview(dst_full, 0, 0, {dr}, {dc}, valid=({vr}, {vc}))  # partial
            pto.textract(dst_extract, src, {row}, {col})  # partial
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst_full)
"""


@pytest.mark.parametrize("case", TEXTRACT_CASES, ids=[f"TExtractVecTest.{c}" for c in TEXTRACT_CASES])
def test_textract_vec(make_kernels, case):
    """gen_data.py (seed 0, one RandomState per case): src = rand_data(SrcRows x SrcCols), dst_init =
    rand_data(DstStaticRows x DstStaticCols) (scalar cases: 1 x 32 / sizeof(T)); golden = dst_init with its
    valid (vr, vc) corner = src[row:row + vr, col:col + vc]. The kernel as written (dst_init loaded only when
    dst's valid region is not the whole tile). main.cpp: ResultCmp<dType>(golden, out, 0.0f) over the dst
    tensor's elements."""
    t, sr, sc, dr, dc, vr, vc, row, col = TEXTRACT_CASES[case]
    gen_dt, _, _ = TYPES[t]
    rng = np.random.RandomState(0)
    src = rand_data(rng, gen_dt, (sr, sc))
    dst_init = rand_data(rng, gen_dt, (dr, dc))
    golden = dst_init.copy()
    golden[:vr, :vc] = src[row:row + vr, col:col + vc]
    full = (vr, vc) == (dr, dc)
    source = constexpr(TEXTRACT, full).format(sr=sr, sc=sc, dr=dr, dc=dc, vr=vr, vc=vc, row=row, col=col,
                                              dt=PTOISA_DTYPES[t])
    out = run_case(make_kernels(source).k, src, dst_init, t)
    check(golden, out, t)


# ------------------------------------------------------------------------------ TINSERT (Vec -> Vec)

# RunTInsertNDVec (and RunTInsertNDVecScalar, its !isFullValid path with a 1 x 32 B src of valid (1, 1))
TINSERT = """
@pto.kernel
def k(S, D, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src_full = pto.alloc_tile({sr}, {sc}, pto.{dt})
            dst_full = pto.alloc_tile({dr}, {dc}, pto.{dt})
            pto.tload(src_full, S)
            pto.tload(dst_full, D)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tinsert(dst_full, src_full, {row}, {col})  # full
            src_insert = pto.tsubview(src_full, 0, 0, {sr}, {sc}, valid=({vr}, {vc}))  # partial
            pto.tinsert(dst_full, src_insert, {row}, {col})  # partial
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst_full)
"""


@pytest.mark.parametrize("case", TINSERT_CASES, ids=[f"TInsertVecTest.{c}" for c in TINSERT_CASES])
def test_tinsert_vec(make_kernels, case):
    """gen_data.py (seed 0, one RandomState per case): src = rand_data(SrcStaticRows x SrcStaticCols) (scalar
    cases: 1 x 32 / sizeof(T)), dst_init = rand_data(DstStaticRows x DstStaticCols); golden = dst_init with
    golden[row:row + vr, col:col + vc] = src[:vr, :vc]. The kernel as written (both tiles loaded; the src
    view's valid region (vr, vc) when it is not the whole tile). main.cpp: ResultCmp<dType>(golden, out,
    0.0f) over the dst tensor's elements."""
    t, sr, sc, dr, dc, vr, vc, row, col = TINSERT_CASES[case]
    gen_dt, _, _ = TYPES[t]
    rng = np.random.RandomState(0)
    src = rand_data(rng, gen_dt, (sr, sc))
    dst_init = rand_data(rng, gen_dt, (dr, dc))
    golden = dst_init.copy()
    golden[row:row + vr, col:col + vc] = src[:vr, :vc]
    full = (vr, vc) == (sr, sc)
    source = constexpr(TINSERT, full).format(sr=sr, sc=sc, dr=dr, dc=dc, vr=vr, vc=vc, row=row, col=col,
                                             dt=PTOISA_DTYPES[t])
    out = run_case(make_kernels(source).k, src, dst_init, t)
    check(golden, out, t)
