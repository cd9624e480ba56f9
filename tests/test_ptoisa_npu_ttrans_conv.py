"""pto-isa's A2/A3 on-device suites ttrans_conv (35 TEST_F) and ttrans_3d (10 TEST_F)
(tests/npu/a2a3/src/st/testcase/ttrans_conv, ttrans_3d of hw-native-sys/pto-isa at the mirror's
HEAD), case for case: each case's template parameters of main.cpp, its input made as gen_data.py
makes it (randint(1, 5) in the dtype, the C or N padding it adds; one RandomState(19) per case),
its golden gen_data.py's numpy transpose, compared with ResultCmp(golden, out, 0.001) over the
output's length, as main.cpp compares (every output is small integers, so the comparison is
bit for bit in effect).

The kernels as their authors wrote them: the flat 1 x n tiles the ConvTiles are TASSIGNed onto
(pto.ttrans_conv takes the flat tiles and the ConvTiles' layouts and shapes), TLOAD of the flat
source, TTRANS with its tmp tile, TSTORE of the flat destination, behind the kernels' flag pairs.
One deviation: the FRACTAL_Z and FRACTAL_Z_3D kernels zero dst with TSUB(dst1, dst1, dst1) over
an int32 Tile TASSIGNed to dst (x - x = 0 whatever the bits); pypto_sim builds an int32 view of
another dtype for pto.tgather only, so the port zeroes the same bytes with pto.texpands(dst, 0).
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import PTOISA_DTYPES, result_cmp, run_kernel

KERNEL = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(1, {scols}, pto.{dt}, valid=(1, {swords}))
            dst = pto.alloc_tile(1, {dwords}, pto.{dt})
            tmp = pto.alloc_tile({trows}, {tcols}, pto.{dt})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            {zero}
            pto.ttrans_conv(dst, src, tmp, "{dl}", {ds}, "{sl}", {ss})
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""
ZERO = "pto.texpands(dst, 0)"

# TEST_F(TTRANSConvTest, name): (T, format, gShape..., gWholeShape...) of main.cpp's test_ttrans
CONV = {
    "float32_1_32_6_56": ("float", 0, 1, 4, 6, 56, 8, 1, 1, 1, 32, 6, 56),
    "int32_1_8_1_8": ("int32", 0, 1, 1, 1, 8, 8, 1, 1, 1, 8, 1, 8),
    "float32_5_57_4_16": ("float", 0, 5, 4, 4, 16, 16, 1, 1, 5, 57, 4, 16),
    "half_1_30_2_16": ("half", 0, 1, 2, 2, 16, 16, 1, 1, 1, 30, 2, 16),
    "int16_7_53_6_16": ("int16", 0, 7, 4, 6, 16, 16, 1, 1, 7, 53, 6, 16),
    "int8_3_64_2_64": ("int8", 0, 3, 2, 2, 64, 32, 1, 1, 3, 64, 2, 64),
    "int8_1_63_2_128": ("int8", 0, 1, 2, 2, 128, 32, 1, 1, 1, 63, 2, 128),
    "int8_5_58_2_16": ("int8", 0, 5, 2, 2, 16, 32, 1, 1, 5, 58, 2, 16),
    "uint8_9_87_6_16": ("uint8", 0, 9, 3, 6, 16, 32, 1, 1, 9, 87, 6, 16),
    "float32_1_32_6_48": ("float", 0, 1, 8, 6, 48, 4, 1, 1, 1, 32, 6, 48),
    "uint16_1_26_2_16": ("uint16", 0, 1, 7, 2, 16, 4, 1, 1, 1, 26, 2, 16),
    "int8_5_18_2_16": ("int8", 0, 5, 5, 2, 16, 4, 1, 1, 5, 18, 2, 16),
    "float32_3_2_2_16_4": ("float", 1, 2, 2, 16, 2, 2, 4, 3, 2, 2, 16, 4),
    "int32_37_2_3_10_8": ("int32", 1, 2, 3, 10, 3, 16, 8, 37, 2, 3, 10, 8),
    "float16_7_2_1_8_16": ("half", 1, 2, 1, 8, 1, 16, 16, 7, 2, 1, 8, 16),
    "float16_7_2_1_8_4": ("half", 1, 2, 1, 8, 1, 16, 4, 7, 2, 1, 8, 4),
    "uint16_45_3_2_7_16": ("uint16", 1, 3, 2, 7, 3, 16, 16, 45, 3, 2, 7, 16),
    "int8_25_5_1_6_32": ("int8", 1, 5, 1, 6, 2, 16, 32, 25, 5, 1, 6, 32),
    "uint8_11_2_7_7_32": ("uint8", 1, 2, 7, 7, 1, 16, 32, 11, 2, 7, 7, 32),
    "float32_NC1HWC02NC1C0HW_0": ("float", 2, 1, 1, 2, 4, 8, 1, 1, 1, 2, 4, 8),
    "float32_NC1HWC02NC1C0HW_1": ("float", 2, 2, 2, 2, 4, 8, 1, 2, 2, 2, 4, 8),
    "float32_NC1HWC02NC1C0HW_2": ("float", 2, 2, 2, 3, 4, 8, 1, 2, 2, 3, 4, 8),
}
# TEST_F(TTRANSConvTest, name): (T, format, gShape0..6, gWholeShape0..5) of main.cpp's test_ttrans_group
GROUP = {
    "float32_1_1_32_6_56": ("float", 0, 1, 1, 4, 6, 56, 8, 1, 1, 1, 1, 32, 6, 56),
    "int32_4_1_8_1_8": ("int32", 0, 4, 1, 1, 1, 8, 8, 1, 1, 4, 1, 8, 1, 8),
    "float32_2_5_30_4_16": ("float", 0, 2, 5, 2, 4, 16, 16, 1, 1, 2, 5, 30, 4, 16),
    "half_1_1_30_2_16": ("half", 0, 1, 1, 2, 2, 16, 16, 1, 1, 1, 1, 30, 2, 16),
    "float32_2_1_32_6_12": ("float", 0, 2, 1, 8, 6, 12, 4, 1, 1, 2, 1, 32, 6, 12),
    "float32_1_3_2_2_16_4": ("float", 1, 1, 2, 2, 16, 2, 2, 4, 1, 3, 2, 2, 16, 4),
    "float32_2_3_2_2_16_4": ("float", 1, 2, 2, 2, 16, 2, 2, 4, 2, 3, 2, 2, 16, 4),
    "float32_2_4_2_2_16_4": ("float", 1, 2, 2, 2, 16, 2, 2, 4, 2, 4, 2, 2, 16, 4),
    "float16_1_7_2_1_8_16": ("half", 1, 1, 2, 1, 8, 1, 16, 16, 1, 7, 2, 1, 8, 16),
    "float16_4_7_2_1_8_4": ("half", 1, 4, 2, 1, 8, 1, 16, 4, 4, 7, 2, 1, 8, 4),
    "float32_GNC1HWC02GNC1C0HW_0": ("float", 2, 1, 1, 1, 2, 4, 8, 1, 1, 1, 1, 2, 4, 8),
    "float32_GNC1HWC02GNC1C0HW_1": ("float", 2, 2, 2, 2, 2, 4, 8, 1, 2, 2, 2, 2, 4, 8),
    "float32_GNC1HWC02GNC1C0HW_2": ("float", 2, 2, 2, 2, 3, 4, 8, 1, 2, 2, 2, 3, 4, 8),
}
# TEST_F(TTRANS3DTest, name): (T, dstDC1HW, dstN1, dstN0, dstC0, srcN, srcC, srcD, srcH, srcW)
THREE_D = {
    "case1_float32_2_4_2_2_2": ("float", 8, 1, 16, 8, 2, 4, 2, 2, 2),
    "case2_float32_4_5_2_2_4": ("float", 16, 1, 16, 8, 4, 5, 2, 2, 4),
    "case3_int32_17_3_3_2_2": ("int32", 12, 2, 16, 8, 17, 3, 3, 2, 2),
    "case4_half_5_6_2_2_4": ("half", 16, 1, 16, 16, 5, 6, 2, 2, 4),
    "case5_half_19_14_2_4_2": ("half", 16, 2, 16, 16, 19, 14, 2, 4, 2),
    "case6_int16_8_13_2_3_4": ("int16", 24, 1, 16, 16, 8, 13, 2, 3, 4),
    "case7_uint16_4_8_2_2_3": ("uint16", 12, 1, 16, 16, 4, 8, 2, 2, 3),
    "case8_int8_7_28_2_3_4": ("int8", 24, 1, 16, 32, 7, 28, 2, 3, 4),
    "case9_int8_16_26_3_3_4": ("int8", 36, 1, 16, 32, 16, 26, 3, 3, 4),
    "case10_uint8_9_18_2_2_4": ("uint8", 16, 1, 16, 32, 9, 18, 2, 2, 4),
}


def _rand(shape, dt):
    """gen_data.py's np.random.randint(1, 5, size=shape).astype(dtype), from RandomState(19)."""
    return np.random.RandomState(19).randint(1, 5, size=shape).astype(dt)


def _case(g, fmt, shape, whole, dt):
    """(input, golden, dst layout and shape, src layout and shape, tmp rows x cols, zeroes dst) of
    a conv case of G groups (g None: the test_ttrans kernels), as its kernel and gen_data.py make
    them."""
    b = 32 // np.dtype(dt).itemsize
    pre = "" if g is None else "G"
    lead = () if g is None else (g,)
    if fmt == 0:                                   # (G)NCHW -> (G)NC1HWC0; the input padded to C1 x C0
        n, c1, h, w, c0 = shape[:5]
        x = _rand(lead + (n, whole[-3], h, w), dt)
        pad = [(0, 0)] * x.ndim
        pad[-3] = (0, c1 * c0 - whole[-3])
        x = np.pad(x, pad)
        axes = (*range(len(lead)), *(a + len(lead) for a in (0, 1, 3, 4, 2)))
        want = x.reshape(lead + (n, c1, c0, h, w)).transpose(axes)
        y = 32 if b == 32 else 16                  # yTileSizeElem
        tmp = (h * w, -(-c0 // y) * y)
        return x, want, (pre + "NC1HWC0", lead + (n, c1, h, w, c0)), (pre + "NCHW", lead + (n, c1 * c0, h, w)), \
            tmp, False
    if fmt == 1:                                   # (G)NC1HWC0 -> FRACTAL_Z; the input padded to N1 x N0
        gg = 1 if g is None else g
        c1, h, w, n1, n0, c0 = shape[:6]
        n = whole[0]
        x = np.pad(_rand(lead + (n, c1, h, w, c0), dt), [(0, 0)] * len(lead) + [(0, n1 * n0 - n)] + [(0, 0)] * 4)
        want = x.transpose(*range(len(lead)), *(a + len(lead) for a in (1, 2, 3, 0, 4)))
        return x, want, ("FRACTAL_Z", (gg * c1 * h * w, n1, n0, c0)), (pre + "NC1HWC0", lead + (n, c1, h, w, c0)), \
            (16, 32), True
    n, c1, h, w, c0 = whole[-5:]                   # (G)NC1HWC0 -> (G)NCHW (gen_data: NC1C0HW)
    x = _rand(lead + (n, c1, h, w, c0), dt)
    want = x.transpose(*range(len(lead)), *(a + len(lead) for a in (0, 1, 4, 2, 3)))
    return x, want, (pre + "NCHW", lead + (n, c1 * c0, h, w)), (pre + "NC1HWC0", lead + (n, c1, h, w, c0)), \
        (h * w, -(-c0 // (32 if b == 32 else 16)) * (32 if b == 32 else 16)), False


def _run(make_kernels, dt, x, want, dst, src, tmp, zero):
    """Launch the case's kernel; the output as main.cpp reads it back."""
    words = x.size
    source = KERNEL.format(scols=-(-words * x.itemsize // 32) * 32 // x.itemsize, swords=words, dwords=want.size,
                           dt=dt, trows=tmp[0], tcols=tmp[1], zero=ZERO if zero else "", dl=dst[0], ds=dst[1],
                           sl=src[0], ss=src[1])
    out, = run_kernel(make_kernels(source).k, [x.ravel()], [((want.size,), dt)])
    return out


@pytest.mark.parametrize("case", list(CONV) + list(GROUP))
def test_ttrans_conv(make_kernels, case):
    """TTRANSConvTest: format 0 (G)NCHW -> (G)NC1HWC0 (gen_data pads the input's C to C1 x C0,
    the golden its reshape (n, c1, c0, h, w) transposed to (n, c1, h, w, c0)); format 1
    (G)NC1HWC0 -> FRACTAL_Z (the input's N padded with zeros to N1 x N0, the golden its transpose
    to (g, c1, h, w, n, c0)); format 2 (G)NC1HWC0 -> (G)NCHW (the golden (n, c1, c0, h, w)).
    ResultCmp(golden, out, 0.001) over the output's elements."""
    group = case in GROUP
    spec = GROUP[case] if group else CONV[case]
    dt, fmt = PTOISA_DTYPES[spec[0]], spec[1]
    shape, whole = (spec[2:9], spec[9:]) if group else (spec[2:8], spec[8:])
    g = shape[0] if group else None
    if group:                    # the group kernels' gWholeShape0 is 1 but for format 2 (G there)
        shape, whole = shape[1:], (whole[1:] if fmt != 2 else whole)
    x, want, dst, src, tmp, zero = _case(g, fmt, shape, whole, dt)
    out = _run(make_kernels, dt, x, want, dst, src, tmp, zero)
    assert result_cmp(want.ravel(), out, 0.001)


@pytest.mark.parametrize("case", THREE_D)
def test_ttrans_3d(make_kernels, case):
    """TTRANS3DTest: NCDHW -> FRACTAL_Z_3D; gen_data.py pads C to C1 x C0 and N to N1 x N0 with
    zeros, reshapes to (n1 n0, c1, c0, d, h, w) and transposes to (d, c1, h, w, n, c0). tmp is
    the kernel's: the NC plane and the larger of it and h w x C0 rounded to 16 (32 for 1-byte).
    ResultCmp(golden, out, 0.001) over the output's elements."""
    t, dc1hw, n1, n0, c0, n, c, d, h, w = THREE_D[case]
    dt = PTOISA_DTYPES[t]
    x = _rand((n, c, d, h, w), dt)
    c1 = -(-c // c0)
    padded = np.pad(x, ((0, n1 * n0 - n), (0, c1 * c0 - c), (0, 0), (0, 0), (0, 0)))
    want = padded.reshape(n1 * n0, c1, c0, d, h, w).transpose(3, 1, 4, 5, 0, 2)
    plane = n * c1 * c0 * h * w
    y = 32 if np.dtype(dt).itemsize == 1 else 16
    total = plane + max(plane, h * w * -(-c0 // y) * y)
    per = 32 // np.dtype(dt).itemsize
    tmp = (1, -(-total // per) * per)
    out = _run(make_kernels, dt, x, want, ("FRACTAL_Z_3D", (dc1hw, n1, n0, c0)), ("NCDHW", (n, c, d, h, w)), tmp,
               True)
    assert result_cmp(want.ravel(), out, 0.001)
