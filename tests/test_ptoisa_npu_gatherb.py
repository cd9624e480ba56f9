"""pto-isa's ON-DEVICE A2/A3 st cases of TGATHERB (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/tgatherb at 3186c381) in the AI-core API as their kernel writes
them. These goldens are what A2/A3 hardware must produce.

TGATHERBTest.case_<dtype>_<dstS1>x<dstS0>_<offsetS1>x<offsetS0>_<srcS1>x<srcS0> (8 TEST_Fs):
runTGATHERB (tgatherb_kernel.cpp) loads the srcS1 x srcS0 GM tensor into a whole src tile and the
offsetS1 x offsetS0 uint32 offsets into a whole offset tile, gathers into a dstS1 x dstS0 dst
tile of full valid region, and stores dst whole (row strides the tensors' widths), behind the
MTE2 -> V and V -> MTE3 flags it writes. gen_data.py (no random numbers): src = arange(srcS1 x
srcS0) cast to the dtype (wrapping for the narrow integers), offset[i] = 32 i over all
dstS1 x dstS0 / (32 / size) offsets row after row, golden[block i] = the 32 bytes of src at
offset[i]: the offsets name src's blocks in order, so row r's gather reads the row's own blocks.
Comparison: ResultCmp<T>(golden, out, 0.001f) over std::vector<T>(dstFileSize) -- a byte count,
so the compared element count (the elements past the output are zero in both).

Not ported: gen_data.py also makes a half 1 x 32768 case, which main.cpp runs no TEST_F of.
"""
import numpy as np
import pytest

from ptoisa_st import FLAGS_IN, FLAGS_OUT, PTOISA_DTYPES, result_cmp, run_arrays, tgatherb_golden

KERNEL = f"""
@pto.kernel
def k(S, F, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({{ss1}}, {{ss0}}, pto.{{dt}}, loc=pto.Vec)
            off = pto.alloc_tile({{os1}}, {{os0}}, pto.uint32, loc=pto.Vec)
            dst = pto.alloc_tile({{ds1}}, {{ds0}}, pto.{{dt}}, loc=pto.Vec)
            pto.tload(src, S)
            pto.tload(off, F)
            {FLAGS_IN}
            pto.tgatherb(dst, src, off)
            {FLAGS_OUT}
            pto.tstore(O, dst)
"""

# main.cpp's TEST_Fs: (dtype, dstS1, dstS0, offsetS1, offsetS0, srcS1, srcS0)
CASES = [("float", 2, 128, 2, 16, 2, 128), ("int32", 2, 128, 2, 16, 2, 128), ("uint32", 2, 128, 2, 16, 2, 128),
         ("int16", 1, 32768, 1, 2048, 1, 32768), ("uint16", 257, 128, 257, 8, 257, 128),
         ("int8", 2, 256, 2, 8, 2, 256), ("int8", 2, 32768, 2, 1024, 2, 32768),
         ("uint8", 2, 32768, 2, 1024, 2, 32768)]


def _case_name(case):
    dt, ds1, ds0, os1, os0, ss1, ss0 = case
    return f"case_{dt}_{ds1}x{ds0}_{os1}x{os0}_{ss1}x{ss0}"


@pytest.mark.parametrize("case", CASES, ids=_case_name)
def test_tgatherb_on_device_case(make_kernels, case):
    """One TEST_F of main.cpp, its shapes and dtype as written; the output compared as
    ResultCmp<T>(golden, out, 0.001f) does."""
    dt, ds1, ds0, os1, os0, ss1, ss0 = case
    dtype = np.dtype(PTOISA_DTYPES[dt])
    kernel = make_kernels(KERNEL.format(ss1=ss1, ss0=ss0, os1=os1, os0=os0, ds1=ds1, ds0=ds0, dt=dtype.name)).k
    src, offset, golden = tgatherb_golden(dtype, ds1, ds0, ss1, ss0)
    out = run_arrays(kernel, [src, offset.reshape(os1, os0), np.zeros((ds1, ds0), dtype)])
    assert result_cmp(golden, out, 0.001, compared=ds1 * ds0 * dtype.itemsize)
    np.testing.assert_array_equal(out.ravel(), golden)
