"""pto-isa's st cases of TFILLPAD (tests/cpu/st/testcase/tfillpad at 3186c381: every TEST_F,
cases 1 - 16), in the AI-core API as tfillpad_kernel.cpp's runTFILLPAD writes them: TLOAD of
the global rows x cols into a tile whose valid region they are, then TFILLPAD (same shape),
TFILLPAD<InPlace> (case 5) or TFILLPAD<Expand> (cases 8, 9: from a tile of the global
columns aligned to 32 bytes) into the output tile, TSTORE of the whole of it.

The golden is the kernel file's get_input_golden_case (the case has no gen_data.py: its
gen_data.py is empty): input element (i, j) is i * cols + j converted to the dtype (C++'s
conversion: integers wrap, 1819 -> 27 as uint8 / int8); golden (i, j) of the output tile that
value inside the global rows x cols, else the pad: PadValue::Max is +inf for the floats and
the integer's numeric_limits max (cases 1 - 9), Zero 0 (13 - 16), and PadValueCustom(-1.0f) /
PadValueCustom16(0xBC00) -1 (10 - 12). The comparison is ResultCmp(golden, out, 0): exact.
The load's own PadValue (Min for cases 3 - 9) pads the loaded tile, which TFILLPAD then pads
again: it changes no output, and pypto_sim's tload has none.

Written differently: case 7's TEST_F compares as int8 the bytes its uint8 kernel writes (the
same bytes; the port compares uint8); case 11 (bfloat16) is built by pto-isa only with
CPU_SIM_BFLOAT_ENABLED, and runs here.
"""
import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import result_cmp, run_kernel

TFILLPAD = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({trows}, {scols}, pto.{dt}, valid=({grows}, {gcols}))
            dst = pto.alloc_tile({trows}, {tcols}, pto.{dt})
            pto.tload(src, S, stride={gcols})
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            {fill}
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, {out})
"""

# testKey: (the kernel's dtype, global rows, cols, tile rows, cols, mode, pad) of
# tfillpad_kernel.cpp's launchTFILLPAD_1 .. 16 and main.cpp's TEST_F names
CASES = {
    1: ("float32", 128, 127, 128, 128, "", "max"), 2: ("float32", 128, 127, 128, 160, "", "max"),
    3: ("float32", 128, 127, 128, 160, "", "max"), 4: ("float32", 260, 7, 260, 16, "", "max"),
    5: ("float32", 260, 7, 260, 16, "inplace", "max"), 6: ("uint16", 260, 7, 260, 32, "", "max"),
    7: ("uint8", 260, 7, 260, 64, "", "max"), 8: ("uint16", 259, 7, 260, 32, "expand", "max"),
    9: ("int8", 259, 7, 260, 64, "expand", "max"), 10: ("float32", 128, 64, 128, 128, "", -1.0),
    11: ("bfloat16", 128, 64, 128, 128, "", -1.0), 12: ("float16", 128, 64, 128, 128, "", -1.0),
    13: ("int8", 1, 15, 1, 32, "", "zero"), 14: ("int8", 1, 16, 1, 32, "", "zero"),
    15: ("uint8", 1, 15, 1, 32, "", "zero"), 16: ("uint8", 1, 16, 1, 32, "", "zero")}
NAMES = ["case_float_GT_128_127_VT_128_128_BLK1_PADMAX_PADMAX", "case_float_GT_128_127_VT_128_160_BLK1_PADMAX_PADMAX",
         "case_float_GT_128_127_VT_128_160_BLK1_PADMIN_PADMAX", "case_float_GT_260_7_VT_260_16_BLK1_PADMIN_PADMAX",
         "case_float_GT_260_7_VT_260_16_BLK1_PADMIN_PADMAX_INPLACE", "case_u16_GT_260_7_VT_260_32_BLK1_PADMIN_PADMAX",
         "case_s8_GT_260_7_VT_260_64_BLK1_PADMIN_PADMAX", "case_u16_GT_259_7_VT_260_32_BLK1_PADMIN_PADMAX_EXPAND",
         "case_s8_GT_259_7_VT_260_64_BLK1_PADMIN_PADMAX_EXPAND", "case_float_GT_128_64_VT_128_128_PADCUSTOM_NEG1",
         "case_bf16_GT_128_64_VT_128_128_PADCUSTOM_NEG1", "case_half_GT_128_64_VT_128_128_PADCUSTOM_NEG1",
         "case_s8_GT_1_15_VT_1_32_BLK1_PADZERO", "case_s8_GT_1_16_VT_1_32_BLK1_PADZERO",
         "case_u8_GT_1_15_VT_1_32_BLK1_PADZERO", "case_u8_GT_1_16_VT_1_32_BLK1_PADZERO"]


def golden_of(host_dt, grows, gcols, trows, tcols, pad, bf16=False):
    """(input, golden) of get_input_golden_case in numpy (host_dt: float32 holds bfloat16, its
    values rounded to bfloat16 as C++'s conversion and ml_dtypes round them: 8129 -> 8128)."""
    x = np.arange(grows * gcols, dtype=np.int64).reshape(grows, gcols)
    x = x.astype(ml_dtypes.bfloat16).astype(np.float32) if bf16 else x.astype(host_dt)
    if pad == "zero":
        fill = 0
    elif pad == "max":
        fill = np.inf if np.issubdtype(host_dt, np.floating) else np.iinfo(host_dt).max
    else:
        fill = pad
    golden = np.full((trows, tcols), fill, host_dt)
    golden[:grows, :gcols] = x
    return x, golden


@pytest.mark.parametrize("key", CASES, ids=NAMES)
def test_tfillpad(make_kernels, key):
    """TFILLPADTest's case `key` (the module docstring says how each is built and checked)."""
    dt, grows, gcols, trows, tcols, mode, pad = CASES[key]
    host_dt = np.dtype(np.float32 if dt == "bfloat16" else dt)
    item = 2 if dt == "bfloat16" else host_dt.itemsize
    scols = -(-gcols * item // 32) * 32 // item if mode == "expand" else tcols
    pad_arg = f'"{pad}"' if isinstance(pad, str) else repr(pad)
    fill, out = {"": (f"pto.tfillpad(dst, src, pad={pad_arg})", "dst"),
                 "expand": (f"pto.tfillpad_expand(dst, src, pad={pad_arg})", "dst"),
                 "inplace": (f"pto.tfillpad_inplace(src, pad={pad_arg})",
                             f"pto.treshape(src, {trows}, {tcols})")}[mode]
    kernel = make_kernels(TFILLPAD.format(trows=trows, scols=scols, dt=dt, grows=grows, gcols=gcols,
                                          tcols=tcols, fill=fill, out=out)).k
    x, golden = golden_of(host_dt, grows, gcols, trows, tcols, pad, dt == "bfloat16")
    if dt == "bfloat16":
        t = pto.alloc_tensor(x.size * 2, pto.bfloat16)
        pto.memcpy_h2d(t, x)
        o = pto.alloc_tensor(golden.size * 2, pto.bfloat16)
        pto.launch(kernel, grid=(1,), args=(t, o))
        got = o.numpy().reshape(golden.shape)
    else:
        got, = run_kernel(kernel, [x], [(golden.shape, host_dt)])
    assert result_cmp(golden, got, 0)
    np.testing.assert_array_equal(got, golden)
