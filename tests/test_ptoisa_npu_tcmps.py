"""pto-isa's ON-DEVICE A2/A3 st cases of TCMPS (hw-native-sys/pto-isa tests/npu/a2a3/src/st/
testcase/tcmps at 3186c381), every TEST_F of main.cpp (26: each of tcmps_kernel.cpp's 24 template
instantiations, two of them also with gen_data.py's NaN data), in the AI-core API as
tcmps_kernel.cpp's runTCmps writes them: TLOAD the src0 tile (kTRows x kTCols) and the scalar's
tile (1 x BLOCK_BYTE_SIZE / sizeof(T), valid 1 x 1) from a 1-element GM tensor, set_flag /
wait_flag MTE2 -> V and MTE2 -> S, `T src1Value = src1Tile.GetValue(0)` (here `v = s[0]`, the
scalar unit's read of UB, SLD_UB), TCMPS into a uint8 tile (kTRows x kTCols, valid kTRows x
kTCols / 8), V -> MTE3, TSTORE. The template's cmpMode is CmpMode's value (include/pto/common/
type.hpp: EQ 0, NE 1, LT 2, LE 3, GT 4, GE 5), as main.cpp's case names spell it. The TASSIGN
addresses (src0 at 0x0, the scalar's tile after it, dst 32 bytes on) are left to pypto_sim's
allocator: the tiles share no byte either way.

gen_data.py, ported (seed 19, one RandomState per case): input1 of the TILE's shape (tile_row x
tile_col), uniform(-max, max) of the float dtype or randint(min, max) of int32, input2 one more
such value, input1's even columns set to input2, all NaN for the _nan cases; golden the bits of
np.isclose(input1, input2, rtol=0, atol=1e-9) (EQ; NE its negation) or of np.less / greater /
greater_equal / less_equal, packed 8 a byte (bit k = column 8i + k), the rows' W / 8 bytes back
to back. main.cpp reads kTRows * kTCols / 8 bytes of the output into vectors of kGRows * kGCols
and compares ResultCmp<uint8_t>(golden, out, 0.001f) (tests/ptoisa_st.py result_cmp with that
compared length).

The int32 cases are all EQ, which A2/A3 compares with vcmpvs_eq (include/pto/npu/a2a3/TCmps.hpp
GenCmpCall: int32 takes vcmpvs_eq whatever the mode, NE inverted by vnot), and pypto_sim builds.

Where the kernel's GlobalTensor shapes are not its tiles' (every dst; src0 of the 128x128 / 64x64,
64x64 / 32x32 and 77x81 / 32x32 cases), A2/A3's TLOAD / TSTORE PTO_ASSERTs (validCol == Shape4,
validRow == Shape3: include/pto/common/arch/memory/tload_common.hpp TLoadGm2ubNd2nd,
tstore_common.hpp TStoreUb2gmNd2nd) trap only in a _DEBUG build (include/pto/common/debug.h);
otherwise the DMA moves Shape3 (kGRows) bursts of the tile's validCol elements with GM gap
Stride3 - Shape4 = 0, so GM rows lie validCol elements apart: the first kTRows rows of src0 are
input1 as gen_data.py writes it, and dst's rows land kTCols / 8 bytes apart, the golden's layout.
src0's bursts past kTRows write UB past src0, over the scalar's and dst's tiles, which TLOAD(src1)
(after it on MTE2) and TCMPS write again before they are read; dst's bursts past kTRows store UB
past dst to GM bytes main.cpp does not read back. The port moves
the tiles' valid regions at those strides (GM rows validCol apart, tload's and tstore's default
stride), in GM tensors of main.cpp's sizes (kGRows x kGCols elements; the output memset to 0).

Each case runs as written, sync="manual", in mode="timing" under check=("sync", "race") and in
mode="functional". Not ported: nothing.

Also here, pto-isa's CPU-simulation st case SETGETVALTest.case1 (tests/cpu/st/testcase/setgetval
at 3186c381; it has no gen_data.py): setgetval_kernel.cpp's runSetGetVal<float, 32, 32, 32, 32>
(a 32 x 32 float Vec tile at 0: SetValue(4, 12.34); val = GetValue(4); SetValue(5, val); TSTORE
to a 32 x 32 GM tensor). It is written for the CPU simulation, which needs no flags; on an AIV the
scalar unit's writes to UB reach MTE3's TSTORE only behind a flag, so the port adds the
set_flag / wait_flag(PIPE_S, PIPE_MTE3) a device kernel needs. Not ported:
SETGETVALTest.k_aligned_default_false, a host-side check of the C++ Tile object's storage (where
SetKAligned puts its flag and that a fresh tile holds 0 there), which the AI-core API has no
object for.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import PTOISA_DTYPES, result_cmp

BLOCK_BYTE_SIZE = 32

KERNEL = """
@pto.kernel(sync="manual")
def k(O, S0, S1):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({tr}, {tc}, pto.{dt})
            src1 = pto.alloc_tile(1, {sc}, pto.{dt}, valid=(1, 1))
            dst = pto.alloc_tile({tr}, {tc}, pto.uint8, valid=({tr}, {mc}))
            pto.tload(src0, S0)
            pto.tload(src1, S1)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            v = src1[0]
            pto.tcmps(dst, src0, v, mode="{mode}")
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

CMP_MODES = ("eq", "ne", "lt", "le", "gt", "ge")   # CmpMode's values 0 .. 5 (type.hpp)

# TEST_F(TCMPSTest, case_<mode>_<dtype>_...): (main.cpp's name, T, kGRows, kGCols, kTRows, kTCols,
# cmpMode, gen_data.py's is_nan)
CASES = [
    ("case_ge_half_32x32_32x32_32x32", "half", 32, 32, 32, 32, 5, False),
    ("case_eq_float_1x64_1x64_1x64", "float", 1, 64, 1, 64, 0, False),
    ("case_gt_float_8x64_8x64_8x64", "float", 8, 64, 8, 64, 4, False),
    ("case_ne_float_4x64_4x64_4x64", "float", 4, 64, 4, 64, 1, False),
    ("case_lt_float_128x128_64x64_128x128", "float", 128, 128, 64, 64, 2, False),
    ("case_eq_int32_64x64_32x32_64x64", "int32", 64, 64, 32, 32, 0, False),
    ("case_eq_int32_16x32_16x32_16x32", "int32", 16, 32, 16, 32, 0, False),
    ("case_le_float_128x128_128x128_128x128", "float", 128, 128, 128, 128, 3, False),
    ("case_eq_int32_77x81_32x32_77x81", "int32", 77, 81, 32, 32, 0, False),
    ("case_eq_int32_32x32_32x32_32x32", "int32", 32, 32, 32, 32, 0, False),
    ("case_ne_float_32x32_32x32_32x32_nan", "float", 32, 32, 32, 32, 1, True),
    ("case_ne_float_32x32_32x32_32x32", "float", 32, 32, 32, 32, 1, False),
    ("case_lt_float_2x4096_2x4096_2x4096", "float", 2, 4096, 2, 4096, 2, False),
    ("case_ne_float_2x4096_2x4096_2x4096", "float", 2, 4096, 2, 4096, 1, False),
    ("case_ne_float_2x4096_2x4096_2x4096_nan", "float", 2, 4096, 2, 4096, 1, True),
    ("case_ne_float_1x64_1x64_1x64", "float", 1, 64, 1, 64, 1, False),
    ("case_ne_float_64x64_32x32_64x64", "float", 64, 64, 32, 32, 1, False),
    ("case_eq_half_1x64_1x64_1x64", "half", 1, 64, 1, 64, 0, False),
    ("case_ne_half_8x64_8x64_8x64", "half", 8, 64, 8, 64, 1, False),
    ("case_lt_half_32x32_32x32_32x32", "half", 32, 32, 32, 32, 2, False),
    ("case_gt_half_32x32_32x32_32x32", "half", 32, 32, 32, 32, 4, False),
    ("case_ge_half_16x32_16x32_16x32", "half", 16, 32, 16, 32, 5, False),
    ("case_le_half_128x128_64x64_128x128", "half", 128, 128, 64, 64, 3, False),
    ("case_ne_half_32x32_32x32_32x32_nan", "half", 32, 32, 32, 32, 1, True),
    ("case_ne_half_2x4096_2x4096_2x4096", "half", 2, 4096, 2, 4096, 1, False),
    ("case_ne_half_128x128_64x64_128x128", "half", 128, 128, 64, 64, 1, False),
]
RUNS = [("timing", ("sync", "race")), ("functional", None)]


def gen_data(dt, rows, cols, mode, is_nan):
    """gen_golden_data_tcmps for one case: input1 (rows x cols, the tile's shape), input2 (1) and
    golden.bin's bytes."""
    rng = np.random.RandomState(19)
    if np.issubdtype(dt, np.floating):
        info = np.finfo(dt)
        input1 = rng.uniform(low=-info.max, high=info.max, size=[rows, cols]).astype(dt)
        input2 = rng.uniform(low=-info.max, high=info.max, size=[1]).astype(dt)
    else:
        info = np.iinfo(dt)
        input1 = rng.randint(info.min, info.max, size=[rows, cols]).astype(dt)
        input2 = rng.randint(info.min, info.max, size=[1]).astype(dt)
    input1[:, 0::2] = input2[0]
    if is_nan:
        input1[:] = np.nan
        input2[:] = np.nan
    with np.errstate(all="ignore"):
        golden = {"eq": lambda: np.isclose(input1, input2[0], rtol=0, atol=1e-9),
                  "ne": lambda: ~np.isclose(input1, input2[0], rtol=0, atol=1e-9),
                  "lt": lambda: np.less(input1, input2[0]), "gt": lambda: np.greater(input1, input2[0]),
                  "ge": lambda: np.greater_equal(input1, input2[0]),
                  "le": lambda: np.less_equal(input1, input2[0])}[mode]()
    if is_nan:
        assert golden[0, 0], "Nan != Nan is not True"    # gen_data.py's own check
    return input1, input2, np.packbits(golden.astype(np.uint8), axis=1, bitorder="little").ravel()


def run(kernel, out, *inputs, mode, check):
    """Launch kernel(O, *inputs) on one AI core with each array copied to a GM tensor of its
    dtype (out as main.cpp memsets it); returns O after the launch."""
    tensors = []
    for a in (out, *inputs):
        t = pto.alloc_tensor(a.nbytes, getattr(pto, a.dtype.name))
        pto.memcpy_h2d(t, a)
        tensors.append(t)
    pto.launch(kernel, grid=(1,), args=tuple(tensors), mode=mode, check=check)
    pto.sync()
    got = np.empty_like(out)
    pto.memcpy_d2h(got, tensors[0])
    return got


@pytest.mark.parametrize("run_mode, check", RUNS, ids=[m for m, _ in RUNS])
@pytest.mark.parametrize("name, t, gr, gc, tr, tc, cmp_mode, is_nan", CASES, ids=[c[0] for c in CASES])
def test_tcmps(make_kernels, run_mode, check, name, t, gr, gc, tr, tc, cmp_mode, is_nan):
    """TCMPSTest.<name>: the scalar read by the scalar unit from the tile TLOADed from GM."""
    dt = np.dtype(PTOISA_DTYPES[t])
    mode = CMP_MODES[cmp_mode]
    input1, input2, golden = gen_data(dt, tr, tc, mode, is_nan)
    kernel = make_kernels(KERNEL.format(tr=tr, tc=tc, dt=dt.name, sc=BLOCK_BYTE_SIZE // dt.itemsize, mc=tc // 8,
                                        mode=mode)).k
    src0 = np.zeros(gr * gc, dt)          # main.cpp's device buffer of kGRows x kGCols, input1 at its start
    src0[:input1.size] = input1.ravel()
    out = run(kernel, np.zeros(gr * gc * dt.itemsize, np.uint8), src0, input2, mode=run_mode, check=check)
    n = tr * tc // 8                    # file_size_dst: the bytes main.cpp reads back
    assert golden.size == n
    assert result_cmp(golden, out[:n], 0.001, compared=gr * gc)


def test_tcmps_scalar_is_read_only_after_the_mte2_to_s_flag(make_kernels):
    """runTCmps's MTE2 -> S flag pair is what makes GetValue(0) see the TLOADed scalar: without it
    the scalar unit reads src1's word when it issues, before the TLOAD lands (isa/
    56_scalar_memory.toml SLD_UB), and reads the tile as pypto_sim starts it, zero-filled (the
    device: whatever UB held), so TCMPS compares with 0 (case_gt_float_8x64_8x64_8x64's data: the
    mask of input1 > 0, not of input1 > input2)."""
    flag_s = ("            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)\n",
              "            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)\n")
    source = KERNEL.replace(flag_s[0], "").replace(flag_s[1], "")
    assert source != KERNEL and "PIPE_S" not in source
    input1, input2, golden = gen_data(np.dtype(np.float32), 8, 64, "gt", False)
    kernel = make_kernels(source.format(tr=8, tc=64, dt="float32", sc=8, mc=8, mode="gt")).k
    out = run(kernel, np.zeros(8 * 64 * 4, np.uint8), input1.ravel(), input2, mode="timing", check=())
    stale = np.packbits(input1 > 0, axis=1, bitorder="little").ravel()
    assert not np.array_equal(stale, golden)
    np.testing.assert_array_equal(out[:64], stale)
    with pytest.raises(pto.RaceError, match=r"SLD_UB at line \d+ \(AIV0 PIPE_S\) is not ordered after TLOAD"):
        run(kernel, np.zeros(8 * 64 * 4, np.uint8), input1.ravel(), input2, mode="timing", check=("race",))


SETGETVAL = """
@pto.kernel(sync="manual")
def k(S0):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile(32, 32, pto.float32)
            src0[4] = 12.34
            val = src0[4]
            src0[5] = val
            pto.set_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.tstore(S0, src0)
"""


@pytest.mark.parametrize("run_mode, check", RUNS, ids=[m for m, _ in RUNS])
def test_setgetval(make_kernels, run_mode, check):
    """SETGETVALTest.case1: GM elements 4 and 5 are 12.34 as float (SetValue converts the double
    to T). main.cpp checks value_4 - 12.34 < 0.00001 and value_5 - 12.34 < 0.00001, one-sided (0
    passes, and the tile starts zero-filled here), so the port also checks both are
    float(12.34) exactly: a float stored and read back unchanged."""
    kernel = make_kernels(SETGETVAL).k
    out = run(kernel, np.zeros(32 * 32, np.float32), mode=run_mode, check=check)
    value_4, value_5 = float(out[4]), float(out[5])
    assert value_4 - 12.34 < 0.00001 and value_5 - 12.34 < 0.00001
    assert out[4] == np.float32(12.34) and out[5] == np.float32(12.34)


def test_setgetval_without_the_s_to_mte3_flag_is_a_race(make_kernels):
    """A device kernel orders the scalar's SetValue before the TSTORE that reads the tile with a
    PIPE_S -> PIPE_MTE3 flag (the CPU-sim suite needs none): without it racecheck reports the
    TSTORE's read as unordered with the SST_UB."""
    source = SETGETVAL.replace("            pto.set_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)\n", "").replace(
        "            pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)\n", "")
    assert "PIPE_MTE3" not in source
    with pytest.raises(pto.RaceError, match=r"TSTORE at line \d+ \(AIV0 PIPE_MTE3\) is not ordered after SST_UB"):
        run(make_kernels(source).k, np.zeros(32 * 32, np.float32), mode="timing", check=("race",))
