"""pto-isa's A2/A3 on-device suite texpands_mat (tests/npu/a2a3/src/st/testcase/texpands_mat of
hw-native-sys/pto-isa at the mirror's HEAD, 3186c381), its 9 TEST_F cases as their kernel
(texpands_mat_kernel.cpp) writes them: TEXPANDS onto a Mat (L1) tile, then the tile to GM.
There is no input; gen_data.py's golden is np.full of the case's value in its dtype, and
main.cpp compares the output with it by ResultCmp(golden, out, 0) over vectors of fileSize
elements (the output's bytes: the elements past the output are zero in both), bit for bit.

- case1..case5 (runTExpandS_Tile): a Rows x Cols RowMajor Mat Tile filled by TEXPANDS
  (TExpandsMatTile: one create_cbuf_matrix of Rows x Cols x sizeof / 32 blocks), then
  TSTORE(dstGlobal, MatTile) ND behind Event<Op::TEXPANDS_MAT, Op::TSTORE_MAT>, the MTE2 ->
  MTE3 flag pair (event.hpp: TEXPANDS_MAT on PIPE_MTE2, TSTORE_MAT on PIPE_MTE3). case5's
  TEXPANDS_KERNEL<uint16_t> runs the kernel as bfloat16_t with the value 7; main.cpp compares
  the words as uint16_t.
- case6..case9 (runTSetValue_ConvTile): a ConvTile<Mat, T, N C1 H W C0, NC1HWC0> filled by
  TEXPANDS (TExpandsMat5HD: N C1 H W C0 x sizeof / 32 blocks), stored by the kernel's own
  TSTORE_MAT2GM_CONVTILE: one copy_cbuf_to_gm of nBurst = ceil(C1 H W C0 / (32 / sizeof))
  bursts of lenBurst = N blocks, gaps 0: nBurst x N x 32 contiguous bytes of L1 from the
  tile's first word. pypto_sim has no ConvTile: its words are the first N C1 H W C0 words of a
  Mat tile of 16 columns (pto.texpands(..., n=N C1 H W C0) is TExpandsMat5HD's fill), and the
  store is that tile's valid region of nBurst x N x 32 bytes, one run of GM. case9's kernel
  is TEXPANDS_KERNEL<int32_t> with uint32_t(11); main.cpp compares uint32_t words.

Two things the suite's sources disagree on, each tested as written:
- The ConvTile cases' only flag pair is set_flag / wait_flag(PIPE_MTE1, PIPE_MTE3) under
  #ifndef __PTO_AUTO__, while the fill runs on MTE2 (event.hpp line 197). The cases are
  ported as the __PTO_AUTO__ build (sync="auto" orders the store after the fill);
  test_the_conv_kernels_manual_flags_do_not_order_the_fill runs the manual build's pair and
  racecheck reports the store racing with the fill.
- case6: main.cpp allocates and compares 1 x 16 x 7 x 7 x 16 = 12,544 halves (gen_data.py's
  shape), the kernel launches TEXPANDS_KERNEL<half, 1, 2, 32, 14, 14, 8>: a ConvTile of
  2 x 32 x 14 x 14 x 8 = 100,352 halves, whose store writes 3,136 x 2 x 32 = 200,704 bytes
  into main.cpp's 25,088-byte buffer. Into a GM tensor of main.cpp's size the store is an
  OutOfBoundsError here (test_case6_stores_past_main_cpps_buffer); the case is compared on a
  tensor of the kernel's size, its first 12,544 halves as main.cpp reads them.
"""
import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto
from engine_compare import assert_engines_agree, assert_executors_agree
from ptoisa_st import result_cmp

BLOCK_BYTES = 32

TILE_KERNEL = """
@pto.kernel(sync="manual")
def k(Out):
    with pto.cube():
        mat = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Mat)
        pto.texpands(mat, {value})
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.tstore(Out, mat)
"""

CONV_KERNEL = """
@pto.kernel(sync="{sync}")
def k(Out):
    with pto.cube():
        conv = pto.alloc_tile({rows}, 16, pto.{dt}, loc=pto.Mat, valid=({valid}, 16))
        pto.texpands(conv, {value}, n={n})
        {flags}
        pto.tstore(Out, conv)
"""
MANUAL_FLAGS = """pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE3, 0)"""

# TEST_F(TEXPANDSTest, caseK): the kernel's (dtype, value, Rows, Cols), main.cpp's compared type
TILE_CASES = {
    "case1": ("float16", 2, 128, 128, np.float16),
    "case2": ("int16", 5, 32, 64, np.int16),
    "case3": ("float32", 3, 32, 32, np.float32),
    "case4": ("int8", 1, 32, 32, np.int8),
    "case5": ("bfloat16", 7, 256, 256, np.uint16),
}
# the kernel's (dtype, value, N, C1, H, W, C0), main.cpp's compared type and elements (dims)
CONV_CASES = {
    "case6": ("float16", 3, (2, 32, 14, 14, 8), np.float16, 1 * 16 * 7 * 7 * 16),
    "case7": ("int16", 8, (2, 5, 2, 3, 8), np.int16, 2 * 5 * 2 * 3 * 8),
    "case8": ("int32", 5, (2, 5, 5, 1, 8), np.int32, 2 * 5 * 5 * 1 * 8),
    "case9": ("int32", 11, (3, 4, 5, 1, 8), np.uint32, 3 * 4 * 5 * 1 * 8),
}


def _launch(kernel, nbytes, dtype, check=None):
    """Run kernel(Out) on one AI core with Out a zeroed GM tensor of nbytes (main.cpp's buffer);
    returns Out's bytes and the profile."""
    out = pto.alloc_tensor(nbytes, getattr(pto, dtype))
    pto.memcpy_h2d(out, np.zeros(nbytes, np.uint8).view(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype))
    prof = pto.profile(kernel, grid=(1,), args=(out,), check=check)
    host = np.empty(nbytes, np.uint8)
    pto.memcpy_d2h(host.view(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype), out)
    return host, prof


def _golden(value, dtype, elements):
    """gen_data.py: np.full(shape, value, dtype) (bfloat16: ml_dtypes.bfloat16)."""
    return np.full(elements, value, ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)


def _conv_store_bytes(dt, shape):
    """TSTORE_MAT2GM_CONVTILE's bytes: nBurst = ceil(C1 H W C0 / blockSizeElem) bursts of
    lenBurst = N 32-byte blocks (reshapeRow N, reshapeCol C1 H W C0)."""
    n, rest = shape[0], int(np.prod(shape[1:]))
    elem = BLOCK_BYTES // np.dtype(dt).itemsize
    return -(-rest // elem) * n * BLOCK_BYTES


def _conv_source(dt, value, shape, sync, flags=""):
    """runTSetValue_ConvTile's kernel: the ConvTile's words in a Mat tile of 16 columns whose valid
    rows are the store's bytes, filled by TEXPANDS (n = N C1 H W C0), then stored."""
    n = int(np.prod(shape))
    item = np.dtype(dt).itemsize
    valid = _conv_store_bytes(dt, shape) // item // 16
    return CONV_KERNEL.format(sync=sync, rows=-(-valid // 16) * 16, dt=dt, valid=valid, value=value, n=n,
                              flags=flags)


@pytest.mark.parametrize("case", sorted(TILE_CASES))
def test_texpands_mat_tile_cases(make_kernels, case):
    """caseK of runTExpandS_Tile: every word of the Rows x Cols tile is the value in its dtype
    (float16 2, int16 5, float32 3, int8 1, bfloat16 7 = 0x40E0), compared as main.cpp's T."""
    dt, value, rows, cols, cmp = TILE_CASES[case]
    item = np.dtype(ml_dtypes.bfloat16 if dt == "bfloat16" else dt).itemsize
    nbytes = rows * cols * item
    host, _ = _launch(make_kernels(TILE_KERNEL.format(rows=rows, cols=cols, dt=dt, value=value)).k, nbytes, dt)
    golden = _golden(value, dt, rows * cols).view(np.uint8).view(cmp)
    assert result_cmp(golden, host.view(cmp), 0, compared=nbytes)
    assert np.array_equal(host, golden.view(np.uint8))


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_texpands_mat_conv_tile_cases(make_kernels, case):
    """caseK of runTSetValue_ConvTile (the __PTO_AUTO__ build): the kernel's ConvTile filled and
    stored (case7: 2 x 5 x 2 x 3 x 8 = 480 int16, 15 bursts of 2 blocks = 960 bytes), the first
    main.cpp-sized elements compared with gen_data.py's np.full."""
    dt, value, shape, cmp, elements = CONV_CASES[case]
    stored = _conv_store_bytes(dt, shape)
    assert stored == int(np.prod(shape)) * np.dtype(dt).itemsize     # the bursts cover the ConvTile
    host, _ = _launch(make_kernels(_conv_source(dt, value, shape, "auto")).k, stored, dt)
    nbytes = elements * np.dtype(cmp).itemsize                          # main.cpp's fileSize
    golden = _golden(value, cmp, elements)
    assert result_cmp(golden, host[:nbytes].view(cmp), 0, compared=nbytes)
    assert np.array_equal(host, np.full(stored // np.dtype(dt).itemsize, value, dt).view(np.uint8))


def test_case6_stores_past_main_cpps_buffer(make_kernels):
    """case6 into a tensor of main.cpp's fileSize, 12,544 halves = 25,088 bytes: the kernel's
    ConvTile store is 3,136 bursts of 2 blocks = 200,704 bytes, past the tensor's end."""
    dt, value, shape, _cmp, elements = CONV_CASES["case6"]
    assert _conv_store_bytes(dt, shape) == 200_704
    with pytest.raises(pto.OutOfBoundsError):
        _launch(make_kernels(_conv_source(dt, value, shape, "auto")).k, elements * 2, dt)


def test_the_conv_kernels_manual_flags_do_not_order_the_fill(make_kernels):
    """case7 as the manual build writes it: set_flag / wait_flag(PIPE_MTE1, PIPE_MTE3) orders
    nothing before the store (the fill is on MTE2), so the store starts while the fill runs and
    racecheck reports the two."""
    dt, value, shape, _cmp, _elements = CONV_CASES["case7"]
    src = _conv_source(dt, value, shape, "manual", MANUAL_FLAGS)
    with pytest.raises(pto.RaceError, match="TEXPANDS_MAT|TSTORE"):
        _launch(make_kernels(src).k, _conv_store_bytes(dt, shape), dt, check="race")


def test_a_mat_fill_costs_its_blocks_at_the_mocks_l1_fill_rate(make_kernels):
    """case2's fill: 32 x 64 int16 = 4,096 bytes = 128 blocks of 32 bytes at pto-isa's L1_FILL
    32 GiB/s at 1.85 GHz (18.57 B/cycle: 1.7229 cycles a block), ceil(128 x 1.7229) = 221
    cycles on the AIC's MTE2, with no head or tail (the CCE mock prices create_cbuf_matrix by
    bandwidth only)."""
    dt, value, rows, cols, _cmp = TILE_CASES["case2"]
    _, prof = _launch(make_kernels(TILE_KERNEL.format(rows=rows, cols=cols, dt=dt, value=value)).k, rows * cols * 2, dt)
    fill = [e for e in prof.timeline if e.inst == "TEXPANDS_MAT"]
    assert len(fill) == 1 and (fill[0].pipe, fill[0].end - fill[0].start) == ("MTE2", 221)


def test_texpands_mat_compile_errors(make_kernels):
    """TExpandS.hpp's PTO_ASSERT on the block count (a ConvTile of 8 int8 elements is 0 blocks
    of 32 bytes) and a ConvTile larger than the tile hosting it are compile errors."""
    for n, match in ((8, r"\[1, 32767\]"), (4096, "do not fit")):
        src = ("@pto.kernel\ndef k(Out):\n    with pto.cube():\n"
               "        m = pto.alloc_tile(32, 32, pto.int8, loc=pto.Mat)\n"
               f"        pto.texpands(m, 1, n={n})\n        pto.tstore(Out, m)\n")
        with pytest.raises(pto.CompileError, match=match):
            _launch(make_kernels(src).k, 1024, "int8")


@pytest.mark.parametrize("case", ["case2", "case5", "case7"])
def test_both_engines_and_both_executors_agree(make_kernels, case):
    """case2 and case5 (tile) and case7 (ConvTile, sync="auto"): the compiled event loop and the
    SimPy model, and the numba and numpy executors, leave the same GM bytes at the same cycles."""
    if case in TILE_CASES:
        dt, value, rows, cols, _ = TILE_CASES[case]
        src = TILE_KERNEL.format(rows=rows, cols=cols, dt=dt, value=value)
        nbytes = rows * cols * (2 if dt == "bfloat16" else np.dtype(dt).itemsize)
    else:
        dt, value, shape, _, _ = CONV_CASES[case]
        src, nbytes = _conv_source(dt, value, shape, "auto"), _conv_store_bytes(dt, shape)
    kernel = make_kernels(src).k
    out = pto.alloc_tensor(nbytes, getattr(pto, dt))
    assert_engines_agree(kernel, (out,), (1, 1, 1), (32, 1, 1))
    assert_executors_agree(kernel, (out,), (1, 1, 1), (32, 1, 1), src)


FILL_KERNEL = """
@pto.kernel(sync="auto")
def k(Out):
    with pto.cube():
        m = pto.alloc_tile(32, 32, pto.int8, loc=pto.Mat, valid=({valid}, 32))
        pto.texpands(m, 7{n})
        pto.tstore(Out, pto.tsubview(m, 0, 0, 32, 32))
"""


@pytest.mark.parametrize("valid, n, filled", [(16, "", 1024), (32, ", n=40", 32), (32, ", n=64", 64)])
def test_a_mat_fill_covers_the_whole_tile_or_the_conv_tiles_whole_blocks(make_kernels, valid, n, filled):
    """A 32 x 32 int8 Mat tile of valid 16 x 32 is filled whole: TExpandsMatTile's repeat is Rows x
    Cols x 1 / 32 = 32 blocks, all 1,024 bytes. A ConvTile of n = 40 int8 elements fills 40 / 32 = 1
    block (TExpandsMat5HD's repeat truncates), 32 bytes; n = 64 fills 2 blocks. The rest keep their
    zeros."""
    host, _ = _launch(make_kernels(FILL_KERNEL.format(valid=valid, n=n)).k, 1024, "int8")
    assert np.array_equal(host, np.r_[np.full(filled, 7, np.uint8), np.zeros(1024 - filled, np.uint8)])
