"""pto-isa's st cases of TADDS, TDIV, TRECIP and TTRANS (tests/cpu/st/testcase/tadds, tdiv,
trecip, ttrans at 3186c381), every TEST_F, in the AI-core API as their kernels write them:
TADDS on src and dst tiles of their own shapes with one valid region (case7: 32 x 32 and
64 x 64 tiles, valid 16 x 16), int32 and int16 TRECIP, int16 TADDS, TTRANS with its tmp
tile. Each golden is its gen_data.py's, in numpy; each tolerance its main.cpp's.

Cases A2/A3 refuses, ported as the refusal: TDIVTest.case_int32_64x64_64x64_64x64 and
.case_int16_64x64_64x64_64x64 and .case_bf16_16x256_16x256_16x256 (TDivCheck: "Fix: TDIV has
invalid data type.", half and float only, include/pto/npu/a2a3/TDiv.hpp),
TRECIPTest.case_bf16_16x256_16x256_16x256 (TRECIP is TDIVS, whose static_assert takes int32,
int16, half and float, TDivS.hpp).
TTRANSTest.case_hifloat8 (A5's type: A2/A3 refuses it) is in tests/test_ptoisa_st_minifloats.py.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import BINARY, result_cmp, run_kernel

TADDS = """
@pto.kernel
def k(S, O, scalar):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({ir}, {ic}, pto.{dt}, valid=({vr}, {vc}))
            dst = pto.alloc_tile({orow}, {oc}, pto.{dt}, valid=({vr}, {vc}))
            pto.tload(dst, O, stride={oc})
            pto.tload(src, S, stride={ic})
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tadds(dst, src, scalar)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst, stride={oc})
"""

# TAddsParams(name, dtype, valid_row, valid_col, in_row, in_col, out_row, out_col) of gen_data.py
TADDS_CASES = {"case1": ("float32", 32, 64), "case2": ("float16", 63, 64), "case3": ("int32", 31, 128),
               "case4": ("int16", 15, 192), "case5": ("float32", 7, 448), "case6": ("float32", 256, 16),
               "case7": ("float32", 16, 16, 32, 32, 64, 64)}


@pytest.mark.parametrize("case", TADDS_CASES)
def test_tadds(make_kernels, case):
    """gen_data.py (seed 23): input uniform(-8, 8) of in_row x in_col in dtype, the scalar
    uniform(-8, 8) in dtype (passed as a float, cast to the tile's dtype by the kernel's
    launcher); golden out_row x out_col zeros with input + scalar (in dtype) over the valid
    region. ResultCmp(golden, out, 0.001) over dstByteSize elements."""
    dt, vr, vc, *rest = TADDS_CASES[case]
    ir, ic, orow, oc = rest or (vr, vc, vr, vc)
    rng = np.random.RandomState(23)
    x = rng.uniform(low=-8, high=8, size=(ir, ic)).astype(dt)
    scalar = rng.uniform(low=-8, high=8, size=(1, 1)).astype(dt)
    golden = np.zeros((orow, oc), dt)
    golden[:vr, :vc] = x[:vr, :vc] + scalar[0, 0]
    kernel = make_kernels(TADDS.format(ir=ir, ic=ic, orow=orow, oc=oc, vr=vr, vc=vc, dt=dt)).k
    arg = int(scalar[0, 0]) if dt in ("int32", "int16") else float(scalar[0, 0])
    out, = run_kernel(kernel, [x], [((orow, oc), dt)], arg)
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)


TDIV = BINARY.replace("pto.{op}(", "pto.tdiv(")


@pytest.mark.parametrize("dt, rows, cols", [("float32", 64, 64), ("float16", 16, 256)],
                         ids=["case_float_64x64_64x64_64x64", "case_half_16x256_16x256_16x256"])
def test_tdiv(make_kernels, dt, rows, cols):
    """gen_data.py (seed 19): input1, input2 randint(1, 10) in dtype; golden input1 / input2
    cast to dtype (the valid region is the tile). ResultCmp(golden, out, 0.001) over fileSize
    elements."""
    rng = np.random.RandomState(19)
    a = rng.randint(1, 10, size=[rows, cols]).astype(dt)
    b = rng.randint(1, 10, size=[rows, cols]).astype(dt)
    golden = (a / b).astype(dt)
    out, = run_kernel(make_kernels(TDIV.format(r=rows, c=cols, dt=dt)).k, [a, b], [((rows, cols), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)


TRECIP = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(src, S)
            pto.trecip(dst, src)
            pto.tstore(O, dst)
"""


@pytest.mark.parametrize("dt, rows, cols", [("float32", 64, 64), ("int32", 64, 64), ("int16", 64, 64),
                                             ("float16", 16, 256)],
                         ids=["case_float_64x64_64x64_64x64", "case_int32_64x64_64x64_64x64",
                              "case_int16_64x64_64x64_64x64", "case_half_16x256_16x256_16x256"])
def test_trecip(make_kernels, dt, rows, cols):
    """gen_data.py (seed 19): input randint(1, 10) in dtype; golden the float32 reciprocal cast
    to dtype (int32 and int16: 1 for 1, else 0 - numpy's cast truncates, as A2/A3's C division
    does; TRECIP.md lists int16 for A2A3, through TDIVS).
    ResultCmp(golden, out, 0.001) over fileSize elements."""
    rng = np.random.RandomState(19)
    x = rng.randint(1, 10, size=[rows, cols]).astype(dt)
    golden = np.reciprocal(x.astype(np.float32)).astype(dt)
    out, = run_kernel(make_kernels(TRECIP.format(r=rows, c=cols, dt=dt)).k, [x], [((rows, cols), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)


@pytest.mark.parametrize("source, op, dt, shape", [
    (TDIV, "tdiv", "int32", (64, 64)), (TDIV, "tdiv", "int16", (64, 64)), (TDIV, "tdiv", "bfloat16", (16, 256)),
    (TRECIP, "trecip", "bfloat16", (16, 256))],
    ids=["TDIVTest.case_int32", "TDIVTest.case_int16", "TDIVTest.case_bf16", "TRECIPTest.case_bf16"])
def test_the_dtypes_a2a3_refuses(make_kernels, source, op, dt, shape):
    """int32, int16 and bfloat16 TDIV (TDivCheck takes half and float) and bfloat16 TRECIP
    (TDIVS takes int32, int16, half and float) do not compile."""
    kernel = make_kernels(source.format(r=shape[0], c=shape[1], dt=dt)).k
    t = [pto.alloc_tensor(shape[0] * shape[1] * 4, getattr(pto, dt)) for _ in range(3 if op == "tdiv" else 2)]
    with pytest.raises(pto.CompileError, match=rf"pto.{op} needs tiles of one dtype among .*got {dt}"):
        kernel.program_for(tuple(t))


TTRANS = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(128, 128, pto.float32)
            dst = pto.alloc_tile(128, 128, pto.float32)
            tmp = pto.alloc_tile(128, 128, pto.float32)
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.ttrans(dst, src, tmp)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


def test_ttrans_case_float32(make_kernels):
    """gen_data.py (seed 19): x randint(1, 5) float32 128 x 128, golden its transpose; the three
    64 KiB tiles (src, dst, tmp) fill the 192 KiB UB. ResultCmp(golden, out, 0.001) over
    dstFileSize elements."""
    rng = np.random.RandomState(19)
    x = rng.randint(1, 5, [128, 128]).astype(np.float32)
    out, = run_kernel(make_kernels(TTRANS).k, [x], [((128, 128), np.float32)])
    assert result_cmp(x.transpose(), out, 0.001, compared=x.nbytes)
