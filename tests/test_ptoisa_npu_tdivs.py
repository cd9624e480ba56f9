"""pto-isa's ON-DEVICE A2/A3 st cases of TDIVS (hw-native-sys/pto-isa tests/npu/a2a3/src/st/
testcase/tdivs at 3186c381), every TEST_F of main.cpp (18), in the AI-core API as tdivs_kernel.cpp's
runTDivS writes them: src and dst Vec tiles of row x col (valid row x col), dst TLOADed first from
the output global (shape row x col, row stride dstTileCol, zeroed by main.cpp's aclrtMemset), then
src (row stride col), MTE2 -> V, TDIVS(dst, src, scalar) (case1 - case9, isSrcDivScalar) or
TDIVS(dst, scalar, src) (case10 - case18, scalar / tile: pto.tdivs(dst, scalar, src), TSDIVS),
V -> MTE3, TSTORE at row stride dstTileCol. The TASSIGN addresses (src at 0x0, dst at 0x28000) are
left to pypto_sim's allocator: the tiles share no byte either way.

gen_data.py, ported (seed 23, one RandomState per case): input uniform(1, 16383) of row x col,
divider uniform(1, 10) of 1 x 1, as dtype; golden dstTileRow x dstTileCol zeros with input /
divider (case < 10) or divider / input (case >= 10) over row x col, integers by numpy's `//`
(the operands are positive: C's truncating division gives the same). divider.bin holds
float32(divider), which the launcher converts to T (a float32 argument for int32 and half, an
int16_t one for int16); the port passes divider's value. main.cpp compares
ResultCmp(golden, out, integers 0, else 0.001) over dstTileRow x dstTileCol elements.

A2/A3 (include/pto/npu/a2a3/TDivS.hpp): half and float tile / scalar is vector_dup of the scalar
into dst then vdiv(dst, src, dst) (DivSOp, lines 129-131), scalar / tile vector_dup then
vdiv(dst, dst, src) (SDivOp, lines 73-75); int32 and int16 run the scalar loops TDivs_naive
(line 175) and TSDiv_naive (line 189), C's division.

Each case runs as written, sync="manual", in mode="timing" under check=("sync", "race") and in
mode="functional". Not ported: nothing.
"""
import numpy as np
import pytest

import pypto_sim as pto
from engine_compare import assert_engines_agree, tensors
from ptoisa_st import FLAGS_IN, FLAGS_OUT, result_cmp

KERNEL = """
@pto.kernel(sync="manual")
def k(O, S, scalar):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(dst, O, stride={dc})
            pto.tload(src, S, stride={c})
            """ + FLAGS_IN + """
            pto.tdivs(dst, {operands})
            """ + FLAGS_OUT + """
            pto.tstore(O, dst, stride={dc})
"""

# TDivsParams(name, data_type, dst_tile_row, dst_tile_col, row, col); the kernels' validRow,
# validCol are row, col
CASES = {"case1": ("float32", 32, 64, 32, 64), "case2": ("float16", 63, 64, 63, 64),
         "case3": ("int32", 31, 128, 31, 128), "case4": ("int16", 15, 192, 15, 192),
         "case5": ("float32", 32, 128, 32, 64), "case6": ("float16", 63, 128, 63, 64),
         "case7": ("int16", 15, 192, 15, 192), "case8": ("float32", 7, 512, 7, 448),
         "case9": ("float32", 256, 32, 256, 16), "case10": ("float32", 32, 64, 32, 64),
         "case11": ("float16", 63, 64, 63, 64), "case12": ("int32", 31, 128, 31, 128),
         "case13": ("int16", 15, 192, 15, 192), "case14": ("float32", 32, 128, 32, 64),
         "case15": ("float16", 63, 128, 63, 64), "case16": ("int16", 15, 192, 15, 192),
         "case17": ("float32", 7, 512, 7, 448), "case18": ("float32", 256, 32, 256, 16)}
RUNS = [("timing", ("sync", "race")), ("functional", None)]


def gen_data(case):
    """gen_golden_data for one case: input, divider and golden.bin's values."""
    dt, dr, dc, r, c = CASES[case]
    rng = np.random.RandomState(23)
    x = rng.uniform(low=1, high=16383, size=(r, c)).astype(dt)
    divider = rng.uniform(low=1, high=10, size=(1, 1)).astype(dt)[0, 0]
    integer = np.issubdtype(np.dtype(dt), np.integer)
    golden = np.zeros((dr, dc), dt)
    if int(case[4:]) < 10:
        golden[:r, :c] = x // divider if integer else x / divider
    else:
        golden[:r, :c] = divider // x if integer else divider / x
    return x, divider, golden


def run(kernel, out, src, scalar, mode, check):
    """Launch kernel(O, S, scalar) (kernel(O, S) for scalar None) on one AI core, O holding out
    (main.cpp's memset) and S src; returns O after the launch."""
    o, s = tensors(out, src)
    scalars = () if scalar is None else (scalar,)
    pto.launch(kernel, grid=(1,), args=(o, s, *scalars), mode=mode, check=check)
    pto.sync()
    got = np.empty_like(out)
    pto.memcpy_d2h(got, o)
    return got


@pytest.mark.parametrize("run_mode, check", RUNS, ids=[m for m, _ in RUNS])
@pytest.mark.parametrize("case", CASES, ids=[f"TDIVSTest.{c}" for c in CASES])
def test_tdivs(make_kernels, run_mode, check, case):
    """TDIVSTest.<case>: tile / scalar for case1 - case9, scalar / tile for case10 - case18."""
    dt, dr, dc, r, c = CASES[case]
    x, divider, golden = gen_data(case)
    operands = "src, scalar" if int(case[4:]) < 10 else "scalar, src"
    kernel = make_kernels(KERNEL.format(r=r, c=c, dc=dc, dt=dt, operands=operands)).k
    out = run(kernel, np.zeros((dr, dc), dt), x, divider.item(), run_mode, check)
    assert result_cmp(golden, out, 0 if np.issubdtype(np.dtype(dt), np.integer) else 0.001)


def test_scalar_over_tile_costs_vector_dup_and_vdiv_on_both_engines(make_kernels):
    """TDIVSTest.case10 (32 x 64 float32 = 8192 bytes = 32 repeats of 256 bytes): TSDIVS is
    vector_dup (slope 1) then vdiv (head 11, slope 4, tail 19) in pto-isa's CCE mock
    (cce_costmodel_vector_compute.hpp; latency_tables/ascend910b.toml), so it holds V for
    11 + (1 + 4) x 32 = 171 cycles, and the TSTORE behind the V -> MTE3 flag starts vdiv's tail
    19 cycles after it completes. Both timing engines give the same records."""
    dt, dr, dc, r, c = CASES["case10"]
    x, divider, _ = gen_data("case10")
    kernel = make_kernels(KERNEL.format(r=r, c=c, dc=dc, dt=dt, operands="scalar, src")).k
    args = (*tensors(np.zeros((dr, dc), dt), x), divider.item())
    ops = [ins.op for ins in kernel.program_for(args).instrs]
    records = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))["records"]
    at = {ops[pc]: (int(i), int(e)) for pc, i, e in zip(records.pc, records.issue, records.complete)}
    issue, complete = at["TSDIVS"]
    assert complete - issue == 11 + (1 + 4) * 32
    assert at["TSTORE"][0] == complete + 19


SCALAR_FIRST_IN_PLACE = """
@pto.kernel
def k(O, S):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(4, 64, pto.{dt})
            pto.tload(t, S)
            pto.tdivs(t, 7, t)
            pto.tstore(O, t)
"""


@pytest.mark.parametrize("dt", ["float32", "float16"])
def test_scalar_over_tile_in_place_is_refused_for_floats(make_kernels, dt):
    """For half and float A2/A3 fills dst with the scalar (vector_dup) before vdiv reads src
    (TDivS.hpp SDivOp lines 73-75): in place, every element would be 7 / 7. Refused."""
    kernel = make_kernels(SCALAR_FIRST_IN_PLACE.format(dt=dt)).k
    with pytest.raises(pto.CompileError, match=r"src 't' shares words with dst 't'.*vector_dup"):
        kernel.program_for(tensors(np.ones((4, 64), dt), np.zeros((4, 64), dt)))


def test_scalar_over_tile_in_place_on_int16_is_cs_division(make_kernels):
    """int16 runs TSDiv_naive (TDivS.hpp line 189), which reads each element before writing it:
    in place is 7 / x, C's division truncated toward zero: 7 / -2 = -3, 7 / 3 = 2, 7 / 8 = 0."""
    x = np.tile(np.array([-2, 3, 8, -7], np.int16), (4, 16))
    out = run(make_kernels(SCALAR_FIRST_IN_PLACE.format(dt="int16")).k, np.zeros((4, 64), np.int16), x, None,
              "functional", None)
    np.testing.assert_array_equal(out[:, :4], np.tile(np.array([-3, 2, 0, -1], np.int16), (4, 1)))
