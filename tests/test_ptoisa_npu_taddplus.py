"""pto-isa's ON-DEVICE A2/A3 st cases of TADD over tiles of three widths with a run-time valid
region (hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/taddplus at 3186c381), in the
AI-core API as its kernel writes them. These goldens are what A2/A3 hardware must produce.

TADDPLUSTest.case_<T>_<dst>_<src0>_<src1>_<valid> (8 TEST_Fs, test_tadd<T, dstTileH, dstTileW,
src0TileH, src0TileW, src1TileH, src1TileW, vRows, vCols>): runTAdd (taddplus_kernel.cpp) takes
vRows and vCols as kernel arguments; its three Vec tiles (dst, src0, src1, each of its own
width) have the dynamic valid region (vRows, vCols); it TLOADs the vRows x vCols box of each
source (GM row stride the source tile's width), TADDs, and TSTOREs dst's valid region to GM at
dst's width, behind the MTE2 -> V and V -> MTE3 flags it writes. gen_data.py (np.random.seed(19)
once; each port draws from its own np.random.RandomState(19)): input1, input2 randint(1, 10) of
the source tiles' shapes; golden input1 + input2 over dst's shape, zero outside the valid region.
main.cpp does not memset the output; the port's output tensor starts zeroed (a fresh device
allocation, which the golden's zeros stand for: the kernel never writes there). Comparison:
ResultCmp<T>(golden, out, 0.001f) over std::vector<T>(dstFileSize) -- a byte count, so the
compared element count.
"""
import numpy as np
import pytest

from ptoisa_st import FLAGS_IN, FLAGS_OUT, PTOISA_DTYPES, result_cmp, run_kernel

KERNEL = f"""
@pto.kernel
def k(A, B, O, vr, vc):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({{s0h}}, {{s0w}}, pto.{{dt}}, valid=(vr, vc))
            src1 = pto.alloc_tile({{s1h}}, {{s1w}}, pto.{{dt}}, valid=(vr, vc))
            dst = pto.alloc_tile({{dh}}, {{dw}}, pto.{{dt}}, valid=(vr, vc))
            pto.tload(src0, A, stride={{s0w}})
            pto.tload(src1, B, stride={{s1w}})
            {FLAGS_IN}
            pto.tadd(dst, src0, src1)
            {FLAGS_OUT}
            pto.tstore(O, dst, stride={{dw}})
"""

# main.cpp's TEST_Fs: (T, dstTileH, dstTileW, src0TileH, src0TileW, src1TileH, src1TileW, vRows, vCols)
CASES = [("half", 16, 64, 16, 128, 16, 128, 16, 64), ("float", 16, 32, 16, 64, 16, 32, 16, 32),
         ("int16", 32, 128, 32, 128, 32, 256, 32, 128), ("int32", 16, 32, 16, 64, 16, 32, 16, 32),
         ("half", 16, 64, 16, 128, 16, 128, 16, 63), ("float", 16, 32, 16, 64, 16, 32, 16, 31),
         ("int16", 32, 128, 32, 128, 32, 256, 32, 127), ("int32", 16, 32, 16, 64, 16, 32, 16, 31)]


def _name(case):
    t, dh, dw, s0h, s0w, s1h, s1w, vr, vc = case
    return f"case_{t}_{dh}x{dw}_{s0h}x{s0w}_{s1h}x{s1w}_{vr}x{vc}"


@pytest.mark.parametrize("case", CASES, ids=_name)
def test_taddplus_on_device_case(make_kernels, case):
    """One TEST_F of main.cpp, its tile shapes, valid region and dtype as written; the output
    compared as ResultCmp<T>(golden, out, 0.001f) does, and bit for bit."""
    t, dh, dw, s0h, s0w, s1h, s1w, vr, vc = case
    dt = np.dtype(PTOISA_DTYPES[t])
    rng = np.random.RandomState(19)
    input1 = rng.randint(1, 10, size=[s0h, s0w]).astype(dt)
    input2 = rng.randint(1, 10, size=[s1h, s1w]).astype(dt)
    golden = np.zeros((dh, dw), dt)
    golden[:vr, :vc] = input1[:vr, :vc] + input2[:vr, :vc]
    kernel = make_kernels(KERNEL.format(dt=dt.name, dh=dh, dw=dw, s0h=s0h, s0w=s0w, s1h=s1h, s1w=s1w)).k
    out, = run_kernel(kernel, [input1, input2], [((dh, dw), dt)], vr, vc)
    assert result_cmp(golden, out, 0.001, compared=dh * dw * dt.itemsize)
    np.testing.assert_array_equal(out, golden)
