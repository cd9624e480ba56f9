"""pto-isa's CPU st cases of TGATHERB, of TLOAD and TSTORE on NZ Vec tiles and of the quantizing
TSTORE from Acc (tests/cpu/st/testcase/tgatherb, tload, tstore, tstore_acc2gm at 3186c381), in the
AI-core API as their kernels write them: the cases tests/test_ptoisa_st_movement.py's list left
as not ported until pypto_sim had pto.tgatherb, NZ Vec tiles and tstore(quant=). Each golden is
its gen_data.py's (or the kernel's get_input_golden), in numpy; each comparison its main.cpp's
ResultCmp; the goldens are exact, so the ports also compare the bytes.

- TGATHERBTest (8): runTGATHERB loads the srcS1 x srcS0 tensor and the offsetS1 x offsetS0 uint32
  offsets into whole tiles, TGATHERB into a dstS1 x dstS0 tile, TSTORE of it whole.
- TLOADTest.case_NZ_* (3): runTLOADNZ, an NZ Vec tile (ColMajor with a RowMajor fractal) of
  shape2 x 16 rows and shape0 x shape1 x c0 columns TLOADed from a dense Layout::NZ tensor
  (shape0, shape1, shape2, 16, c0) (TLoadGm2ubNz2nz); the kernel then copies the tile's words
  out in memory order, which is the NZ image pto.tstore(O, t, layout=pto.NZ) writes at the
  default stride (rows x c0 between column blocks: the tile's own).
- TStoreTest.NZ_* (3): RunTStoreNZ, the (gShape) box at the origin of a gWholeShape Layout::NZ
  tensor, TLOAD into an NZ tile and TSTORE to the same box of a zeroed tensor.
- TStoreAcc2gmTest.case16, 17, 18, 24, 25, case_relu_21 (TStoreAcc2gmScalarNz2nd): the matmul
  into Acc, then TSTORE<..., AtomicType[, NormalRelu]>(dst, acc, preQuantScalar), pto.tstore(O,
  c, quant=q) with q the kernel's float argument; case26 (float32 Acc to half with a scalar)
  is A2/A3's CheckAcc2gm refusal, ported as the CompileError.
- TMOVTest's Vec cases with an NZ tile (ColMajor with a RowMajor fractal; 12): the GlobalTensors
  are ND, which A2/A3 does not move an NZ (or a ColMajor) Vec tile to or from, so the kernels do
  not compile; ported as the refusal.
"""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error_at
from ptoisa_st import (FLAGS_IN, FLAGS_OUT, MATMUL_TO_ACC, PTOISA_DTYPES, as_words, c0_of, result_cmp, run_kernel,
                       tgatherb_golden)

# --------------------------------------------------------------------------------- TGATHERB
TGATHERB = f"""
@pto.kernel
def k(S, F, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({{ss1}}, {{ss0}}, pto.{{dt}})
            off = pto.alloc_tile({{os1}}, {{os0}}, pto.uint32)
            dst = pto.alloc_tile({{ds1}}, {{ds0}}, pto.{{dt}})
            pto.tload(src, S)
            pto.tload(off, F)
            {FLAGS_IN}
            pto.tgatherb(dst, src, off)
            {FLAGS_OUT}
            pto.tstore(O, dst)
"""

# TEST_F(TGATHERBTest, case_<dtype>_<dstS1>x<dstS0>_<offsetS1>x<offsetS0>_<srcS1>x<srcS0>)
TGATHERB_CASES = [("float", 2, 128, 2, 16, 2, 128), ("int32", 2, 128, 2, 16, 2, 128),
                  ("uint32", 2, 128, 2, 16, 2, 128), ("int16", 1, 32768, 1, 2048, 1, 32768),
                  ("uint16", 257, 128, 257, 8, 257, 128), ("int8", 2, 256, 2, 8, 2, 256),
                  ("int8", 2, 32768, 2, 1024, 2, 32768), ("uint8", 2, 32768, 2, 1024, 2, 32768)]


@pytest.mark.parametrize("case", TGATHERB_CASES, ids=["TGATHERBTest.case_{}_{}x{}_{}x{}_{}x{}".format(*c)
                                                      for c in TGATHERB_CASES])
def test_tgatherb(make_kernels, case):
    """gen_data.py (no random numbers): src = arange(srcS1 x srcS0) as the dtype (int8 / uint8 /
    int16 wrapping), offset[i] = 32 i, golden block i = the 32 bytes of src at byte 32 i: block by
    block, src itself (dst has src's shape in every case), so a gather that mixed up blocks,
    rows or the offsets' units would fail. main.cpp: ResultCmp<T>(golden, out, 0.001f) over
    std::vector<T>(dstFileSize), a byte count of elements (zeros past the output in both)."""
    dt, ds1, ds0, os1, os0, ss1, ss0 = case
    dtype = np.dtype(PTOISA_DTYPES[dt])
    src, offset, golden = tgatherb_golden(dtype, ds1, ds0, ss1, ss0)
    kernel = make_kernels(TGATHERB.format(ss1=ss1, ss0=ss0, os1=os1, os0=os0, ds1=ds1, ds0=ds0, dt=dtype.name)).k
    out, = run_kernel(kernel, [src, offset.reshape(os1, os0)], [((ds1, ds0), dtype)])
    assert result_cmp(golden, out, 0.001, compared=ds1 * ds0 * dtype.itemsize)
    np.testing.assert_array_equal(out.ravel(), golden)
    np.testing.assert_array_equal(out, src)


# ------------------------------------------------------------------------------- TLOAD (NZ)
TLOAD_NZ = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile({r}, {c}, pto.{dt}, layout=pto.NZ)
            pto.tload(t, S, layout=pto.NZ)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(O, t, layout=pto.NZ)
"""

# TLOADTest.case_NZ_<name>: (dtype of runTLOADNZ's T, shape0, shape1, shape2, c0 = shape4); main.cpp's
# case_NZ_int8_t_* runs tload_test<13, uint8_t> (launchTLOAD_13: runTLOADNZ<uint8_t, ...>)
TLOAD_NZ_CASES = {"case_NZ_float_1_1_1_16_8_1_1_2_16_8": ("float32", 1, 1, 1, 8),
                  "case_NZ_int16_t_2_2_2_16_16_5_3_3_16_16": ("int16", 2, 2, 2, 16),
                  "case_NZ_int8_t_1_2_1_16_32_2_4_2_16_32": ("uint8", 1, 2, 1, 32)}


@pytest.mark.parametrize("case", TLOAD_NZ_CASES)
def test_tload_nz(make_kernels, case):
    """TLOADTest.<case>: the tile is shape2 x 16 rows by shape0 x shape1 x c0 columns, the tensor
    its NZ image (column blocks shape2 x 16 x c0 apart). get_input_golden_case<T, shape0, shape1,
    shape2, 16, c0>: sh3 = 16 / (shape0 shape1 shape2), input element e = e (as T: uint8 wraps) and
    golden = the input over the first n = shape0 shape1 shape2 sh3 c0 elements (128 float, 256
    int16, 512 uint8), the bytes main.cpp compares: ResultCmp(golden, out, 0), exact. The rest of
    the input is zero here (host memory the golden does not cover); the NZ load and the tile's
    memory-order copy move every element, so the whole output is the whole input too."""
    dt, s0, s1, s2, c0 = TLOAD_NZ_CASES[case]
    rows, cols = s2 * 16, s0 * s1 * c0
    n = s0 * s1 * s2 * (16 // (s0 * s1 * s2)) * c0
    x = np.zeros(rows * cols, dt)
    x[:n] = np.arange(n).astype(dt)
    kernel = make_kernels(TLOAD_NZ.format(r=rows, c=cols, dt=dt)).k
    out, = run_kernel(kernel, [x], [((rows * cols,), dt)])
    assert result_cmp(x[:n], out[:n], 0)
    np.testing.assert_array_equal(out, x)


# ------------------------------------------------------------------------------ TSTORE (NZ)
def tstore_nz_source(dt, shape, whole):
    """RunTStoreNZ: an NZ tile of shape2 x 16 rows and shape0 x shape1 x c0 columns, loaded from
    and stored to the box at the origin of the whole Layout::NZ tensor (strides of its whole
    shape). pto.tload / tstore's NZ takes one stride between column blocks; the box's column
    blocks (x0, x1) lie at x0 W1 W2 16 c0 + x1 W2 16 c0, evenly spaced only within one x0, so the
    port moves one x0 slab at a time, each into its own NZ tile of shape2 x 16 by shape1 x c0:
    the slab's column blocks, which in the kernel's tile are its columns x0 shape1 c0 on, the
    same NZ memory (a column block of an NZ tile is contiguous)."""
    s0, s1, s2, _s3, c0 = shape
    _w0, w1, w2, _w3, _w4 = whole
    lines = []
    for x0 in range(s0):
        off = x0 * w1 * w2 * 16 * c0
        lines.append(f"t{x0} = pto.alloc_tile({s2 * 16}, {s1 * c0}, pto.{dt}, layout=pto.NZ)")
        lines.append(f"pto.tload(t{x0}, S + {off}, layout=pto.NZ, stride={w2 * 16 * c0})")
    lines += ["pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)", "pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)"]
    lines += [f"pto.tstore(O + {x0 * w1 * w2 * 16 * c0}, t{x0}, layout=pto.NZ, stride={w2 * 16 * c0})"
              for x0 in range(s0)]
    return ("\n@pto.kernel\ndef k(S, O):\n    with pto.vector():\n        if pto.get_subblock_id() == 0:\n"
            + "".join(f"            {line}\n" for line in lines))


# TEST_F(TStoreTest, NZ_<T>_<gShape0..4>_<gWholeShape0..4>)
TSTORE_NZ_CASES = {"NZ_float_1_1_1_16_8_1_1_2_16_8": ("float32", (1, 1, 1, 16, 8), (1, 1, 2, 16, 8)),
                   "NZ_int16_t_2_2_2_16_16_5_3_3_16_16": ("int16", (2, 2, 2, 16, 16), (5, 3, 3, 16, 16)),
                   "NZ_int8_t_1_2_1_16_32_2_4_2_16_32": ("int8", (1, 2, 1, 16, 32), (2, 4, 2, 16, 32))}


@pytest.mark.parametrize("case", TSTORE_NZ_CASES)
def test_tstore_nz(make_kernels, case):
    """TStoreTest.<case>. gen_data.py (seed 19): input randint(-5, 5) of the whole shape as the
    dtype; golden zeros but the box [:g0, :g1, :g2, :16, :c0], the input's: the NZ tensor's
    logical (r, c) = (x2 16 + i, (x0 g1 + x1) c0 + j) of the tile. main.cpp: ResultCmp<T>(golden,
    out, 0): exact."""
    dt, shape, whole = TSTORE_NZ_CASES[case]
    assert shape[3] == 16 and shape[4] == c0_of(dt)
    x = np.random.RandomState(19).randint(-5, 5, size=whole).astype(dt)
    golden = np.zeros(whole, dt)
    box = tuple(slice(0, s) for s in shape)
    golden[box] = x[box]
    out, = run_kernel(make_kernels(tstore_nz_source(dt, shape, whole)).k, [x], [(whole, dt)])
    assert result_cmp(golden, out, 0)
    np.testing.assert_array_equal(out, golden)
    assert np.count_nonzero(x) > np.count_nonzero(golden) > 0      # the box only: outside it x is not 0


# ------------------------------------------------------------------ TSTORE from Acc, quantized
SCALAR_STORE = MATMUL_TO_ACC.replace("def k(A, B, O):", "def k(A, B, O, q):") + """        pto.tstore(O, c{store})
        pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
"""
# TEST_F(TStoreAcc2gmTest, <case>) { test_tstore_acc2gm_scalar_nz2nd<tilingKey, ...>(scalarQuant) }: (out dtype,
# src dtype, validM, validN, validK, scalarQuant, main.cpp's ResultCmp type, the TSTORE's AtomicType / ReluPreMode)
# as LaunchTStoreAcc2gmScalarNz2nd<tilingKey> instantiates TStoreAcc2gmScalarNz2nd (acc int32 for int8 sources,
# else float); main.cpp's dstDataType is the ResultCmp type (uint16_t: half's bits; uint8_t for case24's and
# case_relu_21's int8 output: the same bytes)
QUANT_CASES = {"case16": ("float16", "int8", 64, 64, 64, 5.0, np.uint16, ""),
               "case17": ("int8", "int8", 31, 32, 26, 2.0, np.int8, ""),
               "case18": ("uint8", "int8", 16, 32, 17, 2.0, np.uint8, ""),
               "case24": ("int8", "float16", 25, 35, 32, 2.0, np.uint8, ', atomic="add"'),
               "case25": ("uint8", "float32", 16, 20, 25, 1.0, np.uint8, ""),
               "case_relu_21": ("int8", "float16", 77, 34, 81, 2.0, np.uint8, ", relu=True")}
DRAWS = {"int8": (-1, 2), "uint8": (1, 4)}     # gen_x1_x2_golden's randint bounds by output dtype


@pytest.mark.parametrize("case", QUANT_CASES, ids=[f"TStoreAcc2gmTest.{c}" for c in QUANT_CASES])
def test_tstore_acc_to_gm_scalar_quant(make_kernels, case):
    """gen_data.py (seed 19; quant_mode 1): x1, x2 = randint(-1, 2) for an int8 output, randint(1,
    4) for uint8, randint(-5, 5) otherwise, in the source dtype; golden = x1 @ x2 in the output
    dtype, times the scalar, cast to the output dtype, saturated for int8 / uint8 (np.round of
    np.clip), max(golden, 0) with relu_mode 1. For int8 / uint8 the exact products times the
    scalar lie in the output's range (asserted: the draws keep them small), so gen_data.py's casts
    neither wrap nor saturate; float16's (|x1 @ x2| <= 1600, times 5) get one float16 rounding, as
    DEQF16's float32 product rounded to nearest even does: the golden is exact, bit for bit. Case24's
    AtomicAdd adds into the output main.cpp zeroes. main.cpp: ResultCmp<dstDataType>(golden, out,
    0.001f) over cFileSize elements."""
    out_dt, src_dt, vm, vn, vk, scalar, cmp, mode = QUANT_CASES[case]
    rng = np.random.RandomState(19)
    lo, hi = DRAWS.get(out_dt, (-5, 5))
    x1 = rng.randint(lo, hi, [vm, vk]).astype(src_dt)
    x2 = rng.randint(lo, hi, [vk, vn]).astype(src_dt)
    exact = np.matmul(x1.astype(np.int64), x2.astype(np.int64)) * scalar
    golden = (np.matmul(x1.astype(out_dt), x2.astype(out_dt)).astype(out_dt) * scalar).astype(out_dt)
    if out_dt in DRAWS:
        assert exact.min() >= np.iinfo(out_dt).min and exact.max() <= np.iinfo(out_dt).max
        golden = np.round(np.clip(golden, np.iinfo(out_dt).min, np.iinfo(out_dt).max)).astype(out_dt)
    if "relu" in mode:
        golden = np.maximum(golden, 0)
    acc = "int32" if src_dt == "int8" else "float32"
    source = SCALAR_STORE.format(M=-(-vm // 16) * 16, N=-(-vn // 16) * 16, K=-(-vk // 16) * 16, vm=vm, vn=vn, vk=vk,
                                 src=src_dt, acc=acc, store=f", quant=q{mode}")
    out, = run_kernel(make_kernels(source).k, [x1, x2], [((vm, vn), out_dt)], scalar)
    assert result_cmp(as_words(golden, cmp), as_words(out, cmp), 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)
    if "relu" in mode:
        assert (exact < 0).any() and (golden == 0).any()


def test_tstore_acc_to_gm_case26_a2a3_refuses(make_kernels):
    """TStoreAcc2gmTest.case26 (tilingKey 7: TStoreAcc2gmScalarNz2nd<0, float, half, half, ...,
    49, 65, 37>(3)): a float Acc stored to half with preQuantScalar. A2/A3's TSTORE_IMPL(dst, src,
    preQuantScalar) checks CheckAcc2gm<isQuant = true>: a float source quantizes to int8_t /
    uint8_t only (TStore.hpp's static_assert "The output data type must be restricted to
    int8_t/uint8_t when the source data type is float."), so the kernel does not compile."""
    vm, vn, vk = 49, 65, 37
    source = SCALAR_STORE.format(M=64, N=80, K=48, vm=vm, vn=vn, vk=vk, src="float16", acc="float32",
                                 store=", quant=q")
    args = (pto.alloc_tensor(vm * vk * 2, pto.float16), pto.alloc_tensor(vk * vn * 2, pto.float16),
            pto.alloc_tensor(vm * vn * 2, pto.float16), 3.0)
    compile_error_at(make_kernels(source).k, args,
                     "\"The output data type must be restricted to int8_t/uint8_t when the source data type is "
                     "float.\"", "pto.tstore(O, c, quant=q)")


# ------------------------------------------------------------------------------ TMOV with NZ
TMOV_NZ = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(64, 128, pto.{dt}, valid=({vr}, {vc}), layout=pto.{sl})
            dst = pto.alloc_tile(64, 128, pto.{dt}, valid=({vr}, {vc}), layout=pto.{dl})
            pto.tload(src, S)
            pto.tmov(dst, src)
            pto.tstore(O, dst)
"""
CPP_NAMES = {"float32": "float", "float16": "half"}
# TMOV_TEST(T, 64, 128, validRow, validCol, Vec, <src BLayout, SLayout>, Vec, <dst BLayout, SLayout>) with an NZ
# tile (ColMajor, RowMajor) on one side: (T, validRow, validCol, src, dst), pypto_sim's layout names
TMOV_NZ_CASES = [(dt, vr, vc, s, d) for dt, vr, vc in (("float32", 64, 128), ("float32", 63, 125),
                                                       ("float16", 63, 125))
                 for s, d in (("RowMajor", "NZ"), ("NZ", "RowMajor"), ("ColMajor", "NZ"), ("NZ", "ColMajor"))]
SL = {"RowMajor": "RowMajor_NoneBox", "ColMajor": "ColMajor_NoneBox", "NZ": "ColMajor_RowMajor"}
TLOAD_REFUSAL = "A2/A3 moves a Vec tile in its own layout only (\"Fix: TLOAD(VecTile, GlobalTensor) only support "


@pytest.mark.parametrize("case", TMOV_NZ_CASES, ids=[f"{CPP_NAMES[dt]}_64_128_{vr}_{vc}_Vec_{SL[s]}_Vec_{SL[d]}"
                                                     for dt, vr, vc, s, d in TMOV_NZ_CASES])
def test_tmov_with_an_nz_vec_tile_a2a3_refuses(make_kernels, case):
    """TMOVTest's Vec cases with an NZ tile: testMov loads src from, and stores dst to, ND
    GlobalTensors. An NZ or ColMajor src fails A2/A3's TLOAD ("Fix: TLOAD(VecTile, GlobalTensor)
    only support ND2ND/DN2DN/NZ2NZ!", tload_common.hpp line 340), the refusal pypto_sim makes at
    the tload. With a RowMajor src and an NZ dst A2/A3 compiles the TMOV (TMovToVecImpl copies
    the words whatever the layouts) and refuses the TSTORE of the NZ tile to ND GM
    (tstore_common.hpp lines 339-346); pypto_sim refuses one line earlier, at the tmov (TMOV_V2V
    walks rows, which an NZ tile's words are not: not built), and refuses that TSTORE too,
    checked on its own."""
    dt, vr, vc, s, d = case
    kernel = make_kernels(TMOV_NZ.format(dt=dt, vr=vr, vc=vc, sl=s, dl=d)).k
    tensors = tuple(pto.alloc_tensor(64 * 128 * 4, getattr(pto, dt)) for _ in range(2))
    if s != "RowMajor":
        compile_error_at(kernel, tensors, TLOAD_REFUSAL, "pto.tload(src, S)")
        return
    compile_error_at(kernel, tensors, "pto.tmov: dst: 'dst' is an NZ Vec tile, whose words are not its rows",
                     "pto.tmov(dst, src)")
    store_only = ("\n@pto.kernel\ndef k(S, O):\n    with pto.vector():\n"
                  f"        dst = pto.alloc_tile(64, 128, pto.{dt}, valid=({vr}, {vc}), layout=pto.NZ)\n"
                  "        pto.tstore(O, dst)\n")
    compile_error_at(make_kernels(store_only).k, tensors, "only support ND/DN/NZ", "pto.tstore(O, dst)")
