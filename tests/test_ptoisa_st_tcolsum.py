"""pto-isa's st cases of TCOLSUM (tests/cpu/st/testcase/tcolsum at 3186c381), every TEST_F, in
the AI-core API as tcolsum_kernel.cpp writes them: TLOAD, TCOLSUM(dst, src, tmp, true) - the
pairwise tree through tmp, a rows x cols tile whose valid region is rows / 2 x cols - and
TSTORE. The golden is gen_data.py's (np.random.seed(19): randint(-16, 16) of rows x cols as the
dtype, the column sums in float32 cast to the dtype); the tolerance main.cpp's
(ResultCmp(golden, out, 0.001f) over dstFileSize elements).

Not ported: TCOLSUMTest.case_bf16_16x256_16x256_16x256 (built only with CPU_SIM_BFLOAT_ENABLED).

Also here: the checks of TCOLSUM's tmp operand, each a CompileError as A2/A3's TColSumCheck /
PTO_ASSERTs (include/pto/npu/a2a3/TColSum.hpp), and the pairwise order seen through a kernel.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import result_cmp, run_kernel

TCOLSUM = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile(1, {c}, pto.{dt})
            tmp = pto.alloc_tile({tr}, {tc}, pto.{tdt}{tlayout})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tcolsum(dst, src, {call})
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


def source(r, c, dt, call="tmp, True", tr=None, tc=None, tdt=None, tlayout=", valid=({half}, {c})"):
    """The st kernel for an r x c dt tile; tmp r x c with valid r / 2 x c unless changed."""
    return TCOLSUM.format(r=r, c=c, dt=dt, call=call, tr=tr or r, tc=tc or c, tdt=tdt or dt,
                          tlayout=tlayout.format(half=max(1, r // 2), c=c))


@pytest.mark.parametrize("case, dt, rows, cols", [
    ("case_float_64x64_64x64_64x64", "float32", 64, 64),
    ("case_half_16x256_16x256_16x256", "float16", 16, 256)])
def test_tcolsum_st_case(make_kernels, case, dt, rows, cols):
    """TCOLSUMTest.<case>: gen_data.py's input and golden, ResultCmp at 0.001. The inputs are
    integers in [-16, 16) and a column sums at most 64 of them (|sum| <= 1024), exact in both
    dtypes and in any order, so the port's output equals the golden exactly."""
    rng = np.random.RandomState(19)
    x = rng.randint(low=-16, high=16, size=[rows, cols]).astype(dt)
    golden = np.sum(x, axis=0, dtype=np.float32).reshape(1, cols).astype(dt)
    out, = run_kernel(make_kernels(source(rows, cols, dt)).k, [x], [((1, cols), np.dtype(dt))])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


@pytest.mark.parametrize("engine", ["simpy", "auto"])
def test_the_pairwise_order_through_a_kernel(make_kernels, monkeypatch, engine):
    """On the SimPy model and on the compiled engine's replay alike: a column of five float16 rows [2048, 1, 1, 1, 1] (float16 values 2 apart at 2048, ties
    to even). Pairwise (is_binary): 2048 + 1 = 2049 -> 2048, 1 + 1 = 2, the odd row 2048 + 1 ->
    2048, then 2048 + 2 = 2050. Sequential (no tmp): 2048 + 1 -> 2048 four times = 2048."""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    x = np.array([[2048.0], [1.0], [1.0], [1.0], [1.0]], np.float16) * np.ones((1, 16), np.float16)
    pairs, = run_kernel(make_kernels(source(5, 16, "float16", tr=2, tlayout="")).k, [x],
                        [((1, 16), np.float16)])
    seq, = run_kernel(make_kernels(source(5, 16, "float16", call="", tr=2, tlayout="").replace(
        "pto.tcolsum(dst, src, )", "pto.tcolsum(dst, src)")).k, [x], [((1, 16), np.float16)])
    assert (pairs == 2050).all() and (seq == 2048).all()


@pytest.mark.parametrize("change, message", [
    (dict(tdt="float16"), r"tmp 'tmp' holds float16, 'src' float32"),
    (dict(tc=32, tlayout=""), r"tmp 'tmp' has 32 columns, 'src' 64 .*must be less than or equal to the tmp columns"),
    (dict(tr=16, tlayout=""), r"tmp 'tmp' has 16 rows; the pairwise sum of 'src' writes 32"),
    (dict(tlayout=", layout=pto.ColMajor"), r"tmp 'tmp' is ColMajor; TColSumCheck takes an ND tile"),
    (dict(call="is_binary=True"), r"is_binary sums pairs of rows through a tmp tile, and none was given")])
def test_tmp_is_checked_as_a2a3_checks_it(make_kernels, change, message):
    """Each refusal names the header's check (TColSum.hpp) and the tiles."""
    kernel = make_kernels(source(64, 64, "float32", **change)).k
    t = [pto.alloc_tensor(64 * 64 * 4, pto.float32) for _ in range(2)]
    with pytest.raises(pto.CompileError, match=message):
        kernel.program_for(tuple(t))
