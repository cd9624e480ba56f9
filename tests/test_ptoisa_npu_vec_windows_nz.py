"""pto-isa's ON-DEVICE A2/A3 st cases of TEXTRACT and TINSERT between two NZ Vec tiles
(hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/textract_vec and tinsert_vec at 3186c381:
gen_data.py, main.cpp, textract_vec_kernel.cpp, tinsert_vec_kernel.cpp), the 86 NZ TEST_Fs, in
the AI-core API as their kernels write them. Their tiles are Tile<TileType::Vec, T, R, C,
BLayout::ColMajor, vr, vc, SLayout::RowMajor>, ``pto.alloc_tile(R, C, dt, layout=pto.NZ)``
(frontend/nz_windows.py), TLOADed from and TSTOREd to Layout::NZ GlobalTensors of shape
(1, C / c0, R / 16, 16, c0) (``pto.tload(t, S, layout=pto.NZ)``: TLoadGm2ubNz2nz, and
TStoreUb2gmNz2nz); A2/A3 runs the windows as TExtractVecToVecNZDispatch / TInsertVecToVecNZDispatch
(include/pto/npu/a2a3/TExtract.hpp, TInsert.hpp, include/pto/common/arch/memory/
tinsert_common.hpp): copy_ubuf_to_ubuf of the window's rows of each whole c0 column stripe, a
vcopy of the rows' tail columns when the valid width is not a multiple of c0, one element by
the scalar unit for a 1 x 1 window. These goldens are what A2/A3 hardware must produce.

- TExtractVecTest.case_nz_* (31 TEST_Fs, testNZ): RunTExtractNZVec<T, SrcRows, SrcCols, DstRows,
  DstCols, IdxRow, IdxCol = 0, DstValidRows = DstRows, DstValidCols = DstCols> TLOADs the src
  tile; when dst's valid region is not the whole tile it also TLOADs dst_init into the whole dst
  tile and TEXTRACTs into a TSUBVIEW of dst of valid (DstValidRows, DstValidCols) at (0, 0), else
  TEXTRACTs into the whole dst tile; flag MTE2 -> V before, V -> MTE3 after; TSTORE of the whole
  dst tile.
- TExtractVecTest.case_nz_scalar_* (12, testNZScalar): RunTExtractNZVecScalar<T, SrcRows, SrcCols,
  DstRows, DstCols, IdxRow, IdxCol>, that kernel's partial path with a view of valid 1 x 1.
- TInsertVecTest.case_nz_* (31, testNZ): RunTInsertNZVec<T, SrcRows, SrcCols, DstRows, DstCols,
  SrcValidRows, SrcValidCols, IdxRow, IdxCol> TLOADs both tiles, TINSERTs the whole src (full
  valid) or a TSUBVIEW of it of valid (SrcValidRows, SrcValidCols), TSTOREs the whole dst.
- TInsertVecTest.case_nz_scalar_* (12, testNZScalar): RunTInsertNZVecScalar<T, SrcRows, SrcCols,
  DstRows, DstCols, IdxRow, IdxCol>, a src view of valid 1 x 1.

Data and goldens (gen_data.py's gen_nz_case, gen_nz_case_partial, gen_nz_scalar_case; seed 0,
each port draws from its own np.random.RandomState(0), src first, then dst_init, as the ND port
does): the tensors are nd_to_nz of the rows x cols arrays, the golden nd_to_nz of dst_init with
the window replaced (TEXTRACT: golden[:vr, :vc] = src[row:row + vr, col:col + vc], which for a
full-valid case is gen_nz_case's src[row:row + DstRows, 0:DstCols]; TINSERT: golden[row:row + vr,
col:col + vc] = src[:vr, :vc]; scalar: golden[0, 0] = src[row, col], golden[row, col] = src[0,
0]). main.cpp: ResultCmp<dType>(golden, out, 0.0f) over the output's elements (exact), float16
compared as its uint16 bits (aclFloat16); each port also asks for the golden's bytes. The
bfloat16 cases move gen_data.py's NaN words bit for bit (the ND port's docstring).

The cases' parameters below are the kernels' launch lists (the template order), which gen_data.py
lists in another order (valid region before the indices) with the same values. main.cpp does not
initialise the output; the port's starts as zeros (every kernel stores the whole dst tile).
"""
import numpy as np
import pytest

from ptoisa_st import PTOISA_DTYPES
from ptoisa_vec_windows import TYPES, check, constexpr, nd_to_nz, rand_data, run_case

# launchTExtractVecNZ's RunTExtractNZVec<T, SrcRows, SrcCols, DstRows, DstCols, IdxRow, IdxCol = 0,
# DstValidRows = DstRows, DstValidCols = DstCols>, by main.cpp's TEST_F names
TEXTRACT_NZ = {
    "case_nz_1": ("float", 32, 32, 16, 32, 0),
    "case_nz_2": ("float", 32, 32, 16, 32, 16),
    "case_nz_3_half": ("half", 32, 32, 16, 32, 0),
    "case_nz_4_bf16": ("bf16", 32, 32, 16, 32, 16),
    "case_nz_5_int8": ("int8", 32, 64, 16, 64, 0),
    "case_nz_6_int8": ("int8", 32, 64, 16, 64, 16),
    "case_nz_multi_fractal_dst": ("half", 64, 32, 32, 32, 0),
    "case_nz_partial_int8": ("int8", 32, 64, 16, 32, 16, 32, 16, 32),
    "case_nz_partial_bf16": ("bf16", 32, 32, 16, 32, 0, 0, 16, 16),
    "case_nz_uint8": ("uint8", 32, 64, 16, 64, 16),
    "case_nz_int32_partial": ("int32", 32, 16, 16, 8, 16, 8, 16, 8),
    "case_nz_int16": ("int16", 32, 32, 16, 32, 16),
    "case_nz_uint16": ("uint16", 32, 32, 16, 32, 0),
    "case_nz_uint32": ("uint32", 32, 16, 16, 16, 0),
    "case_nz_half_large": ("half", 64, 64, 32, 64, 32),
    "case_nz_partial_float_unaligned_idxcol": ("float", 64, 32, 32, 16, 16, 16, 16, 8),
    "case_nz_bf16_large": ("bf16", 64, 64, 32, 32, 32, 32, 16, 16),
    "case_nz_nonpow2_half": ("half", 48, 32, 32, 32, 16),
    "case_nz_nonpow2_float": ("float", 48, 16, 16, 16, 32),
    "case_nz_nonpow2_partial_bf16": ("bf16", 48, 48, 32, 32, 16, 16, 16, 16),
    "case_nz_nonpow2_partial_int8": ("int8", 48, 96, 32, 64, 16, 32, 16, 32),
    "case_nz_unalignedvalid_float": ("float", 32, 32, 16, 32, 0, 0, 8, 10),
    "case_nz_unalignedvalid_half": ("half", 32, 64, 16, 32, 0, 0, 16, 22),
    "case_nz_unalignedvalid_bf16": ("bf16", 32, 32, 16, 32, 0, 0, 16, 10),
    "case_nz_unalignedvalid_int16": ("int16", 32, 32, 16, 32, 0, 0, 16, 15),
    "case_nz_unalignedvalid_int32": ("int32", 32, 16, 16, 16, 0, 0, 16, 14),
    "case_nz_unalignedvalid_int8_even": ("int8", 32, 64, 16, 64, 0, 0, 16, 42),
    "case_nz_unalignedvalid_validrow_half": ("half", 32, 32, 16, 32, 0, 0, 10, 16),
    "case_nz_unalignedvalid_both_float": ("float", 32, 32, 16, 32, 0, 0, 5, 10),
    "case_nz_unalignedvalid_validcol_with_idx_half": ("half", 64, 64, 16, 32, 16, 16, 16, 22),
    "case_nz_unalignedvalid_both_with_idx_bf16": ("bf16", 32, 32, 16, 32, 16, 16, 10, 10),
}
# launchTInsertVecNZ's RunTInsertNZVec<T, SrcRows, SrcCols, DstRows, DstCols, SrcValidRows, SrcValidCols, IdxRow,
# IdxCol>
TINSERT_NZ = {
    "case_nz_1": ("float", 16, 32, 32, 32, 16, 32, 0, 0),
    "case_nz_2": ("float", 16, 32, 32, 32, 16, 32, 16, 0),
    "case_nz_3_half": ("half", 16, 32, 32, 32, 16, 32, 0, 0),
    "case_nz_4_bf16": ("bf16", 16, 32, 32, 32, 16, 32, 16, 0),
    "case_nz_5_int8": ("int8", 16, 64, 32, 64, 16, 64, 0, 0),
    "case_nz_6_int8": ("int8", 16, 64, 32, 64, 16, 64, 16, 0),
    "case_nz_multi_fractal_dst": ("half", 32, 32, 64, 32, 32, 32, 0, 0),
    "case_nz_partial_int8": ("int8", 16, 32, 32, 64, 16, 32, 16, 32),
    "case_nz_partial_bf16": ("bf16", 16, 32, 32, 32, 16, 16, 0, 0),
    "case_nz_uint8": ("uint8", 16, 64, 32, 64, 16, 64, 16, 0),
    "case_nz_int32_partial": ("int32", 16, 8, 32, 16, 16, 8, 16, 8),
    "case_nz_int16": ("int16", 16, 32, 32, 32, 16, 32, 16, 0),
    "case_nz_uint16": ("uint16", 16, 32, 32, 32, 16, 32, 0, 0),
    "case_nz_uint32": ("uint32", 16, 16, 32, 16, 16, 16, 0, 0),
    "case_nz_half_large": ("half", 32, 64, 64, 64, 32, 64, 32, 0),
    "case_nz_partial_float_unaligned_idxcol": ("float", 16, 8, 32, 16, 16, 8, 16, 8),
    "case_nz_bf16_large": ("bf16", 32, 32, 64, 64, 16, 16, 32, 32),
    "case_nz_nonpow2_half": ("half", 32, 32, 48, 32, 32, 32, 16, 0),
    "case_nz_nonpow2_float": ("float", 16, 16, 48, 16, 16, 16, 32, 0),
    "case_nz_nonpow2_partial_bf16": ("bf16", 32, 32, 48, 48, 16, 16, 16, 16),
    "case_nz_nonpow2_partial_int8": ("int8", 32, 64, 48, 96, 16, 32, 16, 32),
    "case_nz_unalignedvalid_float": ("float", 16, 32, 32, 32, 8, 10, 0, 0),
    "case_nz_unalignedvalid_half": ("half", 16, 32, 32, 64, 16, 22, 0, 0),
    "case_nz_unalignedvalid_bf16": ("bf16", 16, 32, 32, 32, 16, 10, 0, 0),
    "case_nz_unalignedvalid_int16": ("int16", 16, 32, 32, 32, 16, 15, 0, 0),
    "case_nz_unalignedvalid_int32": ("int32", 16, 16, 32, 16, 16, 14, 0, 0),
    "case_nz_unalignedvalid_int8_even": ("int8", 16, 64, 32, 64, 16, 42, 0, 0),
    "case_nz_unalignedvalid_validrow_half": ("half", 16, 32, 32, 32, 10, 16, 0, 0),
    "case_nz_unalignedvalid_both_float": ("float", 16, 32, 32, 32, 5, 10, 0, 0),
    "case_nz_unalignedvalid_validcol_with_idx_half": ("half", 16, 32, 64, 64, 16, 22, 16, 16),
    "case_nz_unalignedvalid_both_with_idx_bf16": ("bf16", 16, 32, 32, 32, 10, 10, 16, 16),
}
# launchTExtractVecNZScalar / launchTInsertVecNZScalar: RunT*NZVecScalar<T, SrcRows, SrcCols, DstRows, DstCols,
# IdxRow, IdxCol>
TEXTRACT_NZ_SCALAR = {
    "case_nz_scalar_1_float": ("float", 32, 32, 16, 32, 5, 9),
    "case_nz_scalar_2_half": ("half", 32, 32, 16, 32, 7, 14),
    "case_nz_scalar_3_bf16": ("bf16", 32, 32, 16, 32, 11, 3),
    "case_nz_scalar_4_int8": ("int8", 32, 64, 16, 64, 20, 33),
    "case_nz_scalar_5_int32": ("int32", 32, 16, 16, 16, 4, 7),
    "case_nz_scalar_6_int16": ("int16", 32, 32, 16, 32, 0, 0),
    "case_nz_scalar_7_uint16": ("uint16", 32, 32, 16, 32, 31, 31),
    "case_nz_scalar_8_uint32": ("uint32", 32, 16, 16, 16, 30, 15),
    "case_nz_scalar_9_uint8_edge": ("uint8", 32, 64, 16, 64, 0, 63),
    "case_nz_scalar_nonpow2_half": ("half", 48, 32, 32, 32, 33, 17),
    "case_nz_scalar_nonpow2_float": ("float", 48, 16, 16, 16, 41, 9),
    "case_nz_scalar_nonpow2_int8": ("int8", 48, 96, 32, 64, 47, 73),
}
TINSERT_NZ_SCALAR = {
    "case_nz_scalar_1_float": ("float", 16, 8, 32, 32, 5, 9),
    "case_nz_scalar_2_half": ("half", 16, 16, 32, 32, 7, 14),
    "case_nz_scalar_3_bf16": ("bf16", 16, 16, 32, 32, 11, 3),
    "case_nz_scalar_4_int8": ("int8", 16, 32, 32, 64, 20, 33),
    "case_nz_scalar_5_int32": ("int32", 16, 8, 32, 16, 4, 7),
    "case_nz_scalar_6_int16": ("int16", 16, 16, 32, 32, 0, 0),
    "case_nz_scalar_7_uint16": ("uint16", 16, 16, 32, 32, 31, 31),
    "case_nz_scalar_8_uint32": ("uint32", 16, 8, 32, 16, 30, 15),
    "case_nz_scalar_9_uint8_edge": ("uint8", 16, 32, 32, 64, 0, 63),
    "case_nz_scalar_nonpow2_half": ("half", 32, 32, 48, 32, 33, 17),
    "case_nz_scalar_nonpow2_float": ("float", 16, 16, 48, 16, 41, 9),
    "case_nz_scalar_nonpow2_int8": ("int8", 32, 64, 48, 96, 47, 73),
}


def _textract_cases():
    """Every TExtractVecTest NZ case as (T, SrcRows, SrcCols, DstRows, DstCols, valid rows, valid cols, IdxRow,
    IdxCol): the template's defaults filled in, the scalar cases as the partial path of valid 1 x 1."""
    cases = {}
    for name, (t, sr, sc, dr, dc, row, *rest) in TEXTRACT_NZ.items():
        col, vr, vc = rest if rest else (0, dr, dc)
        cases[name] = (t, sr, sc, dr, dc, vr, vc, row, col)
    for name, (t, sr, sc, dr, dc, row, col) in TEXTRACT_NZ_SCALAR.items():
        cases[name] = (t, sr, sc, dr, dc, 1, 1, row, col)
    return cases


def _tinsert_cases():
    """Every TInsertVecTest NZ case as (T, SrcRows, SrcCols, DstRows, DstCols, valid rows, valid cols, IdxRow,
    IdxCol)."""
    cases = {name: (t, sr, sc, dr, dc, vr, vc, row, col)
             for name, (t, sr, sc, dr, dc, vr, vc, row, col) in TINSERT_NZ.items()}
    for name, (t, sr, sc, dr, dc, row, col) in TINSERT_NZ_SCALAR.items():
        cases[name] = (t, sr, sc, dr, dc, 1, 1, row, col)
    return cases


TEXTRACT_CASES = _textract_cases()
TINSERT_CASES = _tinsert_cases()


def test_the_port_runs_the_86_nz_cases():
    """31 testNZ and 12 testNZScalar TEST_Fs in each suite (main.cpp)."""
    assert (len(TEXTRACT_NZ), len(TEXTRACT_NZ_SCALAR), len(TINSERT_NZ), len(TINSERT_NZ_SCALAR)) == (31, 12, 31, 12)
    assert len(TEXTRACT_CASES) + len(TINSERT_CASES) == 86


# ------------------------------------------------------------------------------ TEXTRACT (NZ Vec -> NZ Vec)

# RunTExtractNZVec (and RunTExtractNZVecScalar, its !isFullValid path with a view of valid 1 x 1)
TEXTRACT = """
@pto.kernel
def k(S, D, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({sr}, {sc}, pto.{dt}, layout=pto.NZ)
            dst_full = pto.alloc_tile({dr}, {dc}, pto.{dt}, layout=pto.NZ)
            pto.tload(src, S, layout=pto.NZ)
            pto.tload(dst_full, D, layout=pto.NZ)  # partial
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.textract(dst_full, src, {row}, {col})  # full
            dst_extract = pto.tsubview(dst_full, 0, 0, {dr}, {dc}, valid=({vr}, {vc}))  # partial
            pto.textract(dst_extract, src, {row}, {col})  # partial
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst_full, layout=pto.NZ)
"""


@pytest.mark.parametrize("case", TEXTRACT_CASES, ids=[f"TExtractVecTest.{c}" for c in TEXTRACT_CASES])
def test_textract_vec_nz(make_kernels, case):
    """gen_data.py (seed 0, one RandomState per case): src = rand_data(SrcRows x SrcCols), dst_init =
    rand_data(DstRows x DstCols), both given to the kernel in NZ order; golden = nd_to_nz of dst_init with its
    valid (vr, vc) corner = src[row:row + vr, col:col + vc]. The kernel as written (dst_init loaded only when
    dst's valid region is not the whole tile). main.cpp: ResultCmp<dType>(golden, out, 0.0f)."""
    t, sr, sc, dr, dc, vr, vc, row, col = TEXTRACT_CASES[case]
    gen_dt, _, _ = TYPES[t]
    rng = np.random.RandomState(0)
    src = rand_data(rng, gen_dt, (sr, sc))
    dst_init = rand_data(rng, gen_dt, (dr, dc))
    golden = dst_init.copy()
    golden[:vr, :vc] = src[row:row + vr, col:col + vc]
    source = constexpr(TEXTRACT, (vr, vc) == (dr, dc)).format(sr=sr, sc=sc, dr=dr, dc=dc, vr=vr, vc=vc, row=row,
                                                              col=col, dt=PTOISA_DTYPES[t])
    out = run_case(make_kernels(source).k, nd_to_nz(src), nd_to_nz(dst_init), t)
    check(nd_to_nz(golden), out, t)


# ------------------------------------------------------------------------------ TINSERT (NZ Vec -> NZ Vec)

# RunTInsertNZVec (and RunTInsertNZVecScalar, its !isFullValid path with a src view of valid 1 x 1)
TINSERT = """
@pto.kernel
def k(S, D, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src_full = pto.alloc_tile({sr}, {sc}, pto.{dt}, layout=pto.NZ)
            dst_full = pto.alloc_tile({dr}, {dc}, pto.{dt}, layout=pto.NZ)
            pto.tload(src_full, S, layout=pto.NZ)
            pto.tload(dst_full, D, layout=pto.NZ)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tinsert(dst_full, src_full, {row}, {col})  # full
            src_insert = pto.tsubview(src_full, 0, 0, {sr}, {sc}, valid=({vr}, {vc}))  # partial
            pto.tinsert(dst_full, src_insert, {row}, {col})  # partial
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst_full, layout=pto.NZ)
"""


@pytest.mark.parametrize("case", TINSERT_CASES, ids=[f"TInsertVecTest.{c}" for c in TINSERT_CASES])
def test_tinsert_vec_nz(make_kernels, case):
    """gen_data.py (seed 0, one RandomState per case): src = rand_data(SrcRows x SrcCols), dst_init =
    rand_data(DstRows x DstCols), both in NZ order; golden = nd_to_nz of dst_init with golden[row:row + vr,
    col:col + vc] = src[:vr, :vc]. The kernel as written (both tiles loaded; the src view's valid region
    (vr, vc) when it is not the whole tile). main.cpp: ResultCmp<dType>(golden, out, 0.0f)."""
    t, sr, sc, dr, dc, vr, vc, row, col = TINSERT_CASES[case]
    gen_dt, _, _ = TYPES[t]
    rng = np.random.RandomState(0)
    src = rand_data(rng, gen_dt, (sr, sc))
    dst_init = rand_data(rng, gen_dt, (dr, dc))
    golden = dst_init.copy()
    golden[row:row + vr, col:col + vc] = src[:vr, :vc]
    source = constexpr(TINSERT, (vr, vc) == (sr, sc)).format(sr=sr, sc=sc, dr=dr, dc=dc, vr=vr, vc=vc, row=row,
                                                             col=col, dt=PTOISA_DTYPES[t])
    out = run_case(make_kernels(source).k, nd_to_nz(src), nd_to_nz(dst_init), t)
    check(nd_to_nz(golden), out, t)
