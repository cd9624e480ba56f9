"""pto-isa's ON-DEVICE A2/A3 st cases of the value-and-index arg reductions (tests/npu/a2a3/src/
st/testcase/trowargmax, trowargmin, tcolargmax of hw-native-sys/pto-isa at 3186c381) in the
AI-core API as their kernels write them: TROWARGMAX / TROWARGMIN(dstVal, dstIdx, src, tmp) and
TCOLARGMAX(dstVal, dstIdx, src, tmp) as ``pto.trowargmax(idx, src, val=v)`` and so on. These
goldens are what A2/A3 hardware must produce. Their index-only TEST_Fs are ported in
tests/test_ptoisa_npu_reductions.py; tcolargmin has no value-and-index TEST_F (its main.cpp runs
twelve TCOLCMINTest cases, case01 to case73, all index only).

- TROWARGMAXTest / TROWARGMINTest: the 28 TEST_Fs (the same in both testcases) whose Launch<TIdx,
  TVal, dstValTileH, dstValTileW, dstIdxTileH, dstIdxTileW, srcTileH, srcTileW, tmpTileH,
  tmpTileW, vRows, vCols> has the value tile's shape, case_<TIdx>_<TVal>_<dstVal>_<dstIdx>_<src>_
  <tmp>_<valid>. The kernel (runTRowArgMax's value form): src a RowMajor srcTileH x srcTileW tile
  of valid (vRows, vCols) loaded ND at pitch srcTileW; the value and the index tiles ColMajor when
  their width is 1, else RowMajor, each of valid (vRows, 1) and stored as a GM column of row
  stride its tile width. (gen_data.py also lists float 1x8_1x8, 8x1_1x8 and 1x8_8x1 cases of
  1x16384 src, which main.cpp runs no TEST_F of: not ported.)
- TCOLCMAXTest case001-093: TCOLCMAXTestFramework<caseId, TVal, TIdx, srcRow, srcValidRow, 1, col,
  validCol> (runTColIdxValMax): src srcRow x col of valid (srcValidRow, validCol) loaded at pitch
  col, the value and the index tiles 1 x col RowMajor rows of valid (1, validCol) stored as such.

The tmp tile of the kernels is not an operand of pto.trowarg* / pto.tcolargmax (scratch on A2/A3):
it is left out. Each golden is its gen_data.py's formula in numpy, one ``RandomState(seed)`` a
case: trowargmax / trowargmin's gen_data.py sets no seed (19 here, as the index-only port),
tcolargmax's seeds 19 once for all its cases (here each case has its own generator, so the numbers
differ from its files, their distribution does not). Each tolerance and compared length is its
main.cpp's: the vectors are sized in bytes (``std::vector<T> golden(fileSize)``), so the byte count
of an output is its compared element count. ``ResultCmp<aclFloat16>`` compares float16 values as
the device tests hold them: aclFloat16 is CANN's ``typedef uint16_t aclFloat16`` (acl/acl_base.h),
so the comparison's ``static_cast<float>`` takes the bit patterns as integers; the float16 values
are compared here as their uint16 bit patterns, as main.cpp does.

Left out (the set OPEN, empty): no case."""
import numpy as np
import pytest

from ptoisa_st import result_cmp, run_kernel

# the cases left out (the module docstring says why)
OPEN = set()

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase at 3186c381"

F32, F16, U32, U16 = "float32", "float16", "uint32", "uint16"


def _bits(a):
    """What ResultCmp<T> takes of an output: float16 (aclFloat16, a uint16_t on the device's
    host) as its bit pattern, any other dtype as it is."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint16) if a.dtype == np.float16 else a


ROW_ARG_VAL = """
@pto.kernel
def k(S, V, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            val = pto.alloc_tile({vh}, {vw}, pto.{dt}, valid=({vr}, 1), layout=pto.{vlayout})
            idx = pto.alloc_tile({ih}, {iw}, pto.{it}, valid=({vr}, 1), layout=pto.{ilayout})
            src = pto.alloc_tile({sh}, {sw}, pto.{dt}, valid=({vr}, {vc}))
            pto.tload(src, S, stride={sw})
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.{op}(idx, src, val=val)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(V, val, stride={vw})
            pto.tstore(O, idx, stride={iw})
"""

# TEST_F(TROWARGMAXTest / TROWARGMINTest, case_...): the value-and-index Launch<TIdx, TVal,
# dstValTileH, dstValTileW, dstIdxTileH, dstIdxTileW, srcTileH, srcTileW, tmpTileH, tmpTileW,
# vRows, vCols> in main.cpp's order (the tmp shape is not an operand here)
ROW_ARG_VAL_CASES = [
    (U32, F32, 1024, 1, 1024, 1, 1023, 24, 1023, 8, 1023, 17),
    (U32, F32, 264, 1, 264, 1, 260, 64, 260, 8, 260, 64),
    (U32, F32, 8, 1, 8, 1, 3, 4096, 3, 192, 3, 4095),
    (U32, F32, 8, 1, 8, 1, 1, 16384, 1, 768, 1, 16381),
    (U16, F16, 272, 1, 272, 1, 260, 64, 260, 16, 260, 63),
    (U16, F16, 272, 1, 272, 1, 260, 128, 260, 16, 260, 127),
    (U16, F16, 16, 1, 16, 1, 3, 8192, 3, 384, 3, 8191),
    (U16, F16, 16, 1, 16, 1, 1, 16384, 1, 768, 1, 16381),
    (U16, F16, 16, 1, 16, 1, 1, 32768, 1, 768, 1, 32761),
    (U32, F32, 777, 8, 777, 8, 777, 24, 777, 8, 777, 17),
    (U32, F32, 784, 1, 777, 8, 777, 24, 777, 8, 777, 17),
    (U32, F32, 777, 8, 784, 1, 777, 24, 777, 8, 777, 17),
    (U32, F32, 3, 8, 3, 8, 3, 4096, 3, 192, 3, 4095),
    (U32, F32, 8, 1, 3, 8, 3, 4096, 3, 192, 3, 4095),
    (U32, F32, 3, 8, 8, 1, 3, 4096, 3, 192, 3, 4095),
    (U16, F16, 777, 16, 777, 16, 777, 48, 777, 16, 777, 43),
    (U16, F16, 784, 1, 777, 16, 777, 48, 777, 16, 777, 43),
    (U16, F16, 777, 16, 784, 1, 777, 48, 777, 16, 777, 43),
    (U16, F16, 3, 16, 3, 16, 3, 4096, 3, 192, 3, 4095),
    (U16, F16, 16, 1, 3, 16, 3, 4096, 3, 192, 3, 4095),
    (U16, F16, 3, 16, 16, 1, 3, 4096, 3, 192, 3, 4095),
    (U16, F16, 1, 16, 1, 16, 1, 32768, 1, 768, 1, 32761),
    (U16, F16, 16, 1, 1, 16, 1, 32768, 1, 768, 1, 32761),
    (U16, F16, 1, 16, 16, 1, 1, 32768, 1, 768, 1, 32761),
    (U32, F16, 16, 1, 16, 1, 2, 4096, 2, 1536, 2, 4096),
    (U32, F16, 16, 1, 16, 1, 1, 65552, 1, 1536, 1, 65552),
    (U32, F16, 272, 1, 272, 1, 272, 112, 272, 16, 272, 112),
    (U32, F16, 272, 16, 272, 8, 272, 112, 272, 16, 272, 112),
]
_CNAME = {F32: "float", F16: "half", U32: "uint32", U16: "uint16"}
_SUITE = {"trowargmax": "TROWARGMAXTest", "trowargmin": "TROWARGMINTest"}


def _row_id(op, case):
    it, dt, vh, vw, ih, iw, sh, sw, th, tw, vr, vc = case
    return f"{_SUITE[op]}.case_{_CNAME[it]}_{_CNAME[dt]}_{vh}x{vw}_{ih}x{iw}_{sh}x{sw}_{th}x{tw}_{vr}x{vc}"


ROW_PARAMS = [(op, case) for op in _SUITE for case in ROW_ARG_VAL_CASES
              if _row_id(op, case) not in OPEN]
ROW_IDS = [_row_id(op, case) for op, case in ROW_PARAMS]


@pytest.mark.parametrize("op, case", ROW_PARAMS, ids=ROW_IDS)
def test_trowargmax_and_trowargmin_values(make_kernels, op, case):
    """trowargmax / trowargmin gen_data.py (no seed: 19 here), TRowArgMaxValIdxParams: src
    (srcTileH x srcTileW) uniform(finfo.min, finfo.max) cast to TVal; golden (dstIdxTileH x
    dstIdxTileW, TIdx) zeros but column 0 of the vRows rows, np.argmax / np.argmin of
    src[:, :vCols]; golden_val (dstValTileH x dstValTileW, TVal) zeros but column 0 of the vRows
    rows, np.max / np.min of the same. main.cpp AfterLaunch: ResultCmp<TIdx>(golden, out, 0.0001)
    over dstIdxTileH x dstIdxTileW x sizeof(TIdx) elements and ResultCmp<TVal>(golden_val,
    out_val, 0.0001) over dstValTileH x dstValTileW x sizeof(TVal) elements (float16 as its
    aclFloat16 bit patterns); both must pass."""
    it, dt, vh, vw, ih, iw, sh, sw, _th, _tw, vr, vc = case
    rng = np.random.RandomState(19)
    info = np.finfo(dt)
    x = rng.uniform(low=info.min, high=info.max, size=[sh, sw]).astype(dt)
    arg, red = (np.argmax, np.max) if op == "trowargmax" else (np.argmin, np.min)
    golden = np.zeros([ih, iw], it)
    golden[0:vr, 0] = arg(x[:, 0:vc], axis=1)[0:vr]
    golden_val = np.zeros([vh, vw], dt)
    golden_val[0:vr, 0] = red(x[:, 0:vc], axis=1)[0:vr]
    layout = {1: "ColMajor"}
    kernel = make_kernels(ROW_ARG_VAL.format(
        op=op, it=it, dt=dt, vh=vh, vw=vw, ih=ih, iw=iw, sh=sh, sw=sw, vr=vr, vc=vc,
        vlayout=layout.get(vw, "RowMajor"), ilayout=layout.get(iw, "RowMajor"))).k
    out_val, out = run_kernel(kernel, [x], [((vh, vw), dt), ((ih, iw), it)])
    assert result_cmp(golden, out, 0.0001, compared=golden.nbytes)
    assert result_cmp(_bits(golden_val), _bits(out_val), 0.0001, compared=golden_val.nbytes)


COL_ARG_VAL = """
@pto.kernel
def k(S, V, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}))
            idx = pto.alloc_tile(1, {c}, pto.{it}, valid=(1, {vc}))
            val = pto.alloc_tile(1, {c}, pto.{dt}, valid=(1, {vc}))
            pto.tload(src, S, stride={c})
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tcolargmax(idx, src, val=val)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(V, val)
            pto.tstore(O, idx)
"""

# TEST_F(TCOLCMAXTest, case0NN): TCOLCMAXTestFramework<NN, TVal, TIdx, srcRow, srcValidRow, 1,
# col, validCol>
COL_ARG_VAL_CASES = {
    "001": (F32, U32, 1, 1, 256, 255), "002": (F32, U32, 16, 16, 128, 127),
    "003": (F32, U32, 16, 15, 256, 255), "011": (F16, U16, 1, 1, 256, 255),
    "012": (F16, U16, 16, 16, 128, 127), "013": (F16, U16, 16, 15, 256, 255),
    "051": (U16, U16, 1, 1, 256, 255), "052": (U16, U16, 16, 16, 128, 127),
    "053": (U16, U16, 16, 15, 256, 255), "071": (U32, U32, 1, 1, 256, 255),
    "072": (U32, U32, 16, 16, 128, 127), "073": (U32, U32, 16, 15, 256, 255),
    "081": (F16, U16, 16, 16, 32, 32), "082": (U16, U16, 16, 16, 32, 32),
    "083": (U32, U32, 16, 16, 32, 31), "084": (F32, U32, 16, 16, 32, 31),
    "091": (U16, U16, 16, 16, 128, 120), "092": (F16, U16, 16, 16, 96, 88),
    "093": (U16, U16, 4, 4, 48, 34),
}
COL_PARAMS = [n for n in COL_ARG_VAL_CASES if f"TCOLCMAXTest.case{n}" not in OPEN]


@pytest.mark.parametrize("name", COL_PARAMS, ids=[f"TCOLCMAXTest.case{n}" for n in COL_PARAMS])
def test_tcolargmax_values(make_kernels, name):
    """tcolargmax gen_data.py (seed 19), TColCMaxParams(..., idx=True): input uniform(-100, 100)
    (uint16 / uint32: (0, 200)) of srcRow x col cast to TVal; idx.bin = np.argmax over the valid
    rows, zero past validCol, int16 (2-byte TVal) or int32; golden.bin = np.max over the valid
    rows, zero past validCol, in TVal. (The kernel stores validCol elements of each; main.cpp
    does not clear the rest of the outputs, which the goldens take as zero: they start zeroed
    here.) main.cpp CompareGoldenValIdx<TVal, TIdx>(col x sizeof(TVal)): ResultCmp(golden,
    out_val, 0.001) (float16 as its aclFloat16 bit patterns) and ResultCmp(idx, out_idx, 0.001)
    as TIdx, each over col x sizeof(TVal) elements; both must pass."""
    dt, it, rows, vr, cols, vc = COL_ARG_VAL_CASES[name]
    rng = np.random.RandomState(19)
    lo, hi = (0, 200) if dt in (U16, U32) else (-100, 100)
    x = rng.uniform(low=lo, high=hi, size=(rows, cols)).astype(dt)
    golden_idx = np.argmax(x[0:vr], axis=0)
    golden_idx[vc:] = 0
    golden_idx = golden_idx[:cols].astype(np.int16 if x.itemsize == 2 else np.int32).astype(it)
    golden_val = np.max(x[0:vr], axis=0)
    golden_val[vc:] = 0
    kernel = make_kernels(COL_ARG_VAL.format(dt=dt, it=it, r=rows, c=cols, vr=vr, vc=vc)).k
    out_val, out_idx = run_kernel(kernel, [x], [((cols,), dt), ((cols,), it)])
    compared = cols * x.itemsize
    assert result_cmp(_bits(golden_val), _bits(out_val), 0.001, compared=compared)
    assert result_cmp(golden_idx, out_idx, 0.001, compared=compared)
