"""pto-isa's ON-DEVICE A2/A3 st cases of TMOV from an Acc tile into a Mat tile and between two Vec
tiles (hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tmov_acc2mat and tmov_vect at
3186c381: gen_data.py, main.cpp, tmov_acc2mat_kernel.cpp, tmov_vect_kernel.cpp) in the AI-core
API as their kernels write them. These goldens are what A2/A3 hardware must produce.

- TMOVTest.case_nz2nz_1, case_nz2nz_2 (tmov_acc2mat, tmov_acc2mat_nz2nz_test<uint16_t, uint16_t,
  uint16_t, key>, launchTMOVAcc2MatNZ2NZ<1>, <2>): runTMOV_nz2nz<outType, half, half, M, K, N, M,
  K, N> runs runMATMUL: TLOAD A (M x K) and B (K x N, ND in GM) into Mat tiles, flag MTE2 ->
  MTE1, TMOV to a Left and a Right tile, flag MTE1 -> M, TMATMUL into a float32 Acc tile (M x N),
  flag M -> FIX; then TMOV(dstTileData, cTile) into an M x N Mat tile of outType (the fixpipe's
  float32 -> half for key 1, float32 -> bfloat16 for key 2), flag FIX -> MTE3, TSTORE of the Mat
  tile to a Layout::NZ GlobalTensor of Shape<1, N / C0, M / 16, 16, C0>, C0 = 512 / (16 x
  sizeof(outType)) = 16, with dense strides: element (r, c) at (c // 16) x (M x 16) + r x 16 +
  c % 16, which is pto.NZ at its default stride (rows x c0). Key 1: half out, M, K, N = 64, 128,
  128; key 2: bfloat16 out, 48, 128, 64.
  gen_data.py (np.random.seed(19) once, every case in order; each port draws from its own
  np.random.RandomState(19)): x1 = randint(-1, 3, [m, k]), x2 = randint(-1, 3, [k, n]), both as
  a_type (float16); golden = matmul(x1, x2) in float32, reshape(m / 16, 16, n / 16, 16)
  .transpose(2, 0, 1, 3), cast to the out dtype (np.float16 / ml_dtypes.bfloat16). main.cpp:
  ResultCmp(golden, out, 0.001f) with CType uint16_t (the half / bfloat16 bits as integers) over
  vectors of cFileSize elements (the output's byte count: the elements past the output are zero
  in both and only raise the error threshold). Each port also asks for the golden's bytes.
- TMOVTest.vect_copy_case1 - case15 (tmov_vect, test_tmov<T, kGRows, kGCols, kTRows, kTCols>):
  runTMOV TLOADs the kGRows x kGCols GM tensor into a kTRows x kTCols Vec tile (valid its whole
  shape), flag MTE2 -> V, TMOV<DstTileData, SrcTileData>(dstTile, srcTile) into a second Vec tile
  of that shape (A2/A3's TMovToVec, a UB -> UB copy), flag V -> MTE3, TSTORE. gen_data.py
  (np.random.seed(0) once; each port its own np.random.RandomState(0)): input =
  uniform(0, 20, (rows, cols)).astype(dtype), golden = input. main.cpp: ResultCmp<T>(golden,
  out, 0.001f) over vectors of dataSize (bytes) elements, T float, aclFloat16 (CANN's
  ``typedef uint16_t aclFloat16``: the float16 bits as integers) or uint8_t. main.cpp memsets
  the output; the port's starts as zeros. The kernel TASSIGNs the tiles at UB 0 and 0x20000;
  pypto_sim places them itself. The port runs it on subblock 0, as the other on-device ports do.

No case of these suites is one A2/A3 refuses: every TEST_F runs on the device.

Left out, as pypto_sim does not express what the kernels ask for (none is a skip or xfail):
- case_nz2nz_21, case_nz2nz_22 (keys 3, 4: TMOV<DstTileData, AccTile, ReluPreMode::NormalRelu>):
  pto.tmov takes no ReluPreMode (its signature is (dst, src); relu=True is built on tstore from
  Acc only, docs/aicore.md).
- case_nz2nz_sc_quant_3, 5, 7, 9, 11, 23, 25, 27, 29, 31 and case_nz2nz_fb_quant_4, 6, 8, 10, 12,
  24, 26, 28, 30, 32 (runScalarQuantTMOV_nz2nz / runVectorQuantTMOV_nz2nz: TMOV with a uint64
  pre-quant scalar, TMOV(fbTile, fbMatTile) into a Scaling (FB) tile and TMOV_FP): pto.tmov
  has no quant scalar or quant tensor operand and pypto_sim has no Scaling tile space; the
  fixpipe converts float32 only to float16 / bfloat16 (and moves float32 / int32 as they are),
  so int32 -> half / int8 / uint8 / int16 and float32 -> int8 are refused (CompileError "the
  fixpipe moves int32 as int32 ..." / "the fixpipe converts float32 to ...").
- case_nz2nz_extract, case_nz2nz_sc_quant_extract, case_nz2nz_fb_quant_extract (TEXTRACT /
  TEXTRACT_FP from the Acc tile at (indexRow, indexCol) into a smaller Mat tile): pto.textract
  moves Mat -> Left / Right / Bias or Vec -> Vec only (isa/35_aicore.toml TEXTRACT spaces: dst
  Left, Right, Bias, src Mat; CompileError "TEXTRACT takes dst in Left or Right or Bias"), and
  does not convert dtypes; plus the quantization above for the two quant cases.
- case_nz2nz_insert, case_nz2nz_sc_quant_insert, case_nz2nz_fb_quant_insert (TINSERT /
  TINSERT_FP of the Acc tile into a Mat tile TLOADed from GM first): pto.tinsert is built
  between two Vec tiles only ("its Acc -> Mat form is not", frontend/vec_windows.py);
  plus the quantization above for the two quant cases.
"""
import ml_dtypes
import numpy as np
import pytest

from ptoisa_st import MATMUL_TO_ACC, as_words, result_cmp, run_kernel

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase at 3186c381"

# ------------------------------------------------------------------------------ tmov_acc2mat

# runTMOV_nz2nz without relu, extract or insert: runMATMUL, then TMOV Acc -> Mat, TSTORE as NZ
ACC2MAT = MATMUL_TO_ACC + """        dst = pto.alloc_tile({M}, {N}, pto.{out}, loc=pto.Mat)
        pto.tmov(dst, c)
        pto.set_flag(pto.PIPE_FIX, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_FIX, pto.PIPE_MTE3, 0)
        pto.tstore(O, dst, layout=pto.NZ)
"""

NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}

# TEST_F(TMOVTest, <case>): (out dtype, a_type, M, K, N) from main.cpp's tmov_acc2mat_nz2nz_test and the kernel's
# launchTMOVAcc2MatNZ2NZ<key> (validM, validK, validN = M, K, N); gen_data.py's TmovParams agree
ACC2MAT_CASES = {
    "case_nz2nz_1": ("float16", "float16", 64, 128, 128),
    "case_nz2nz_2": ("bfloat16", "float16", 48, 128, 64),
}


@pytest.mark.parametrize("case", list(ACC2MAT_CASES), ids=[f"TMOVTest.{c}" for c in ACC2MAT_CASES])
def test_tmov_acc2mat(make_kernels, case):
    """TMOVTest.<case> (tmov_acc2mat): matmul into Acc, TMOV Acc -> Mat converting float32 to the
    out dtype, TSTORE as NZ. Golden (gen_data.py, RandomState(19)): x1, x2 = randint(-1, 3) as
    float16, golden = (x1 @ x2 in float32) in NZ order (reshape(m / 16, 16, n / 16, 16)
    .transpose(2, 0, 1, 3)), cast to the out dtype. main.cpp: ResultCmp<uint16_t>(golden, out,
    0.001f) over cFileSize elements (the bits of half / bfloat16)."""
    out_dt, src_dt, m, k, n = ACC2MAT_CASES[case]
    rng = np.random.RandomState(19)
    x1 = rng.randint(-1, 3, [m, k]).astype(src_dt)
    x2 = rng.randint(-1, 3, [k, n]).astype(src_dt)
    golden = np.matmul(x1.astype(np.float32), x2.astype(np.float32)).astype(np.float32)
    golden = np.ascontiguousarray(golden.reshape(m // 16, 16, n // 16, 16).transpose(2, 0, 1, 3).astype(NP[out_dt]))
    source = ACC2MAT.format(M=m, K=k, N=n, vm=m, vk=k, vn=n, src=src_dt, acc="float32", out=out_dt)
    out, = run_kernel(make_kernels(source).k, [x1, x2], [(golden.shape, NP[out_dt])])
    assert result_cmp(as_words(golden, np.uint16), as_words(out, np.uint16), 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(as_words(out, np.uint8), as_words(golden, np.uint8))


# ------------------------------------------------------------------------------ tmov_vect

# runTMOV: TLOAD, TMOV Vec -> Vec, TSTORE
VECT = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({tr}, {tc}, pto.{dt}, valid=({tr}, {tc}))
            dst = pto.alloc_tile({tr}, {tc}, pto.{dt}, valid=({tr}, {tc}))
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tmov(dst, src)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

# main.cpp's T -> (the kernel's dtype, ResultCmp's T: aclFloat16 is a uint16_t)
VECT_TYPES = {"float": ("float32", np.float32), "aclFloat16": ("float16", np.uint16), "uint8_t": ("uint8", np.uint8)}
# TEST_F(TMOVTest, vect_copy_case<i>): test_tmov<T, kGRows, kGCols, kTRows, kTCols>, in order
VECT_CASES = [(t, r, c, r, c) for t in VECT_TYPES for r, c in ((64, 64), (32, 32), (128, 128), (128, 32), (128, 64))]
VECT_IDS = [f"TMOVTest.vect_copy_case{i}" for i in range(1, len(VECT_CASES) + 1)]


@pytest.mark.parametrize("case", VECT_CASES, ids=VECT_IDS)
def test_tmov_vect(make_kernels, case):
    """TMOVTest.vect_copy_case<i> (tmov_vect): TLOAD, TMOV Vec -> Vec, TSTORE. gen_data.py
    (RandomState(0)): input = uniform(0, 20) of rows x cols as the dtype, golden = input.
    main.cpp: ResultCmp<T>(golden, out, 0.001f) over dataSize (bytes) elements, aclFloat16 as
    its uint16 bits."""
    t, gr, gc, tr, tc = case
    dt, cmp = VECT_TYPES[t]
    rng = np.random.RandomState(0)
    src = rng.uniform(0, 20, size=(tr, tc)).astype(dt)
    golden = src.copy()
    out, = run_kernel(make_kernels(VECT.format(tr=tr, tc=tc, dt=dt)).k, [src], [((gr, gc), dt)])
    assert result_cmp(as_words(golden, cmp), as_words(out, cmp), 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(as_words(out, np.uint8), as_words(golden, np.uint8))
