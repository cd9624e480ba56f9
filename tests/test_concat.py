"""TCONCAT (isa/49_concat.toml, family tile_concat): per row, src0's valid columns then src1's
into dst, as A2/A3 runs it (include/pto/npu/a2a3/TConcat.hpp TConcatImpl: copy_ubuf_to_ubuf of
whole 32-byte blocks, src1 element by element when validCol0 is not a whole number of blocks);
TCONCAT_IMPL's checks as compile errors at the line; the cost; and pto-isa's on-device st cases
(hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tconcat at 3186c381) as their kernel writes
them.

The port: tconcat_kernel.cpp TLOADs the src0TileH x src0TileW input into src0's tile and the
src1TileH x src1TileW one into src1's (whole tiles; valid (validRow, validCol0) and (validRow,
validCol1)), flag MTE2 -> V, TCONCAT(dst, src0, src1), flag V -> MTE3, and TSTOREs the whole
dstTileH x dstTileW dst tile. gen_data.py (np.random.seed(19)): each source's valid region
uniform(-1000, 1000) of the dtype, zeros elsewhere; golden zeros but golden[:vr, :c0] = input1's
and golden[:vr, c0:c0 + c1] = input2's. main.cpp compares with ResultCmp at eps 0.001 over the
output's bytes. The kernel stores the whole dst tile, whose words past c0 + c1 no copy writes
(in three cases): on the device whatever UB held, which the golden takes as zeros; a fresh UB
here holds zeros. Every case runs.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error_at
from ptoisa_st import FLAGS_IN, FLAGS_OUT, result_cmp, run_kernel

KERNEL = '''
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile({s0h}, {s0w}, pto.{dt}, loc=pto.Vec, valid=({vr}, {c0}))
            b = pto.alloc_tile({s1h}, {s1w}, pto.{dt}, loc=pto.Vec, valid=({vr}, {c1}))
            d = pto.alloc_tile({dh}, {dw}, pto.{dt}, loc=pto.Vec, valid=({vr}, {dw}))
            pto.tload(a, A, stride={s0w})
            pto.tload(b, B, stride={s1w})
            {flags_in}
            pto.tconcat(d, a, b)
            {flags_out}
            pto.tstore(O, d)
'''

# TCONCATTest's TEST_Fs: (T, dst H x W, src0 H x W, src1 H x W, validRow, validCol0, validCol1)
CASES = {
    "case_float_64x128_64x64_64x64_64x64_64x64": ("float32", 64, 128, 64, 64, 64, 64, 64, 64, 64),
    "case_int32_64x128_64x64_64x64_64x64_64x64": ("int32", 64, 128, 64, 64, 64, 64, 64, 64, 64),
    "case_half_16x256_16x128_16x128_16x128_16x128": ("float16", 16, 256, 16, 128, 16, 128, 16, 128, 128),
    "case_float_16x64_16x32_16x32_16x32_16x32": ("float32", 16, 64, 16, 32, 16, 32, 16, 32, 32),
    "case_int16_32x256_32x128_32x128_32x128_32x128": ("int16", 32, 256, 32, 128, 32, 128, 32, 128, 128),
    "case_half_16x128_16x64_16x64_16x63_16x64": ("float16", 16, 128, 16, 64, 16, 64, 16, 63, 64),
    "case_float_16x64_16x32_16x32_16x31_16x32": ("float32", 16, 64, 16, 32, 16, 32, 16, 31, 32),
    "case_int16_32x256_32x128_32x128_32x127_32x128": ("int16", 32, 256, 32, 128, 32, 128, 32, 127, 128),
    "case_int16_32x192_32x128_32x128_32x128_32x64": ("int16", 32, 192, 32, 128, 32, 128, 32, 128, 64),
}


def _source(dt, dh, dw, s0h, s0w, s1h, s1w, vr, c0, c1):
    return KERNEL.format(dt=dt, dh=dh, dw=dw, s0h=s0h, s0w=s0w, s1h=s1h, s1w=s1w, vr=vr, c0=c0, c1=c1,
                         flags_in=FLAGS_IN, flags_out=FLAGS_OUT)


@pytest.mark.parametrize("case", list(CASES))
def test_tconcat(make_kernels, case):
    """pto-isa's golden at main.cpp's ResultCmp tolerance, and word for word (a copy)."""
    dt, dh, dw, s0h, s0w, s1h, s1w, vr, c0, c1 = CASES[case]
    rng = np.random.RandomState(19)
    inputs = []
    for h, w, c in ((s0h, s0w, c0), (s1h, s1w, c1)):
        x = np.zeros((h, w), dt)
        x[:vr, :c] = rng.uniform(-1000, 1000, size=(vr, c)).astype(dt)
        inputs.append(x)
    golden = np.zeros((dh, dw), dt)
    golden[:vr, :c0] = inputs[0][:vr, :c0]
    golden[:vr, c0:c0 + c1] = inputs[1][:vr, :c1]
    out, = run_kernel(make_kernels(_source(dt, dh, dw, s0h, s0w, s1h, s1w, vr, c0, c1)).k, inputs,
                      [((dh, dw), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


def test_whole_blocks_move_as_a2a3s_copies_move_them(make_kernels):
    """validCol0 = 6 float32 (24 bytes, not a whole 32-byte block): src0's copy moves its whole
    block, columns 0..7 (its words 6 and 7, which its load left 0, come along), then src1's 3
    columns go element by element to columns 6..8, over them; with validCol0 = 8 src1's copy
    moves its whole block too, its words 3..7 (0) landing at 11..15. Words no copy reaches keep
    dst's loaded -1."""
    source = '''
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(2, 8, pto.float32, loc=pto.Vec, valid=(2, {c0}))
            b = pto.alloc_tile(2, 8, pto.float32, loc=pto.Vec, valid=(2, 3))
            d = pto.alloc_tile(2, 32, pto.float32, loc=pto.Vec)
            pto.tload(a, A, stride=8)
            pto.tload(b, B, stride=8)
            pto.tload(d, O)
            pto.tconcat(d, a, b)
            pto.tstore(O, d)
'''
    a = np.arange(16, dtype=np.float32).reshape(2, 8)
    b = 100 + np.arange(16, dtype=np.float32).reshape(2, 8)
    for c0 in (6, 8):
        mod = make_kernels(source.replace("{c0}", str(c0)))
        ta, tb = (pto.to_device(x) for x in (a, b))
        to = pto.to_device(np.full((2, 32), -1.0, np.float32))
        pto.launch(mod.k, grid=(1,), args=(ta, tb, to))
        tile_a, tile_b = np.zeros((2, 8), np.float32), np.zeros((2, 8), np.float32)
        tile_a[:, :c0], tile_b[:, :3] = a[:, :c0], b[:, :3]      # the loads fill the valid regions
        want = np.full((2, 32), -1.0, np.float32)
        want[:, :8] = tile_a                     # src0's whole block
        if c0 == 6:
            want[:, 6:9] = tile_b[:, :3]         # element by element
        else:
            want[:, 8:16] = tile_b               # src1's whole block
        np.testing.assert_array_equal(to.numpy(), want)


def test_the_cost_is_the_ub_to_ub_copy_of_dsts_columns(make_kernels):
    """latency_tables/ascend910b.toml TCONCAT on an idle V pipe: head 1 + 0.43 a 256-byte
    repeat of each of dst's rows x (c0 + c1) elements. 64 x (64 + 64) float32 (512-byte rows, 2
    repeats each): 1 + ceil(0.43 x 128) = 1 + 56 = 57; 16 x (63 + 64) float16 (254-byte rows, 1
    repeat each): 1 + ceil(0.43 x 16) = 1 + 7 = 8."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(64, 64, pto.float32, loc=pto.Vec)
            d = pto.alloc_tile(64, 128, pto.float32, loc=pto.Vec)
            h = pto.alloc_tile(16, 64, pto.float16, loc=pto.Vec, valid=(16, 63))
            i = pto.alloc_tile(16, 64, pto.float16, loc=pto.Vec)
            e = pto.alloc_tile(16, 128, pto.float16, loc=pto.Vec)
            pto.tconcat(d, a, a)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tconcat(e, h, i)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    assert [e.end - e.start for e in prof.timeline if e.inst == "TCONCAT"] == [57, 8]


@pytest.mark.parametrize("tiles, message", [
    ("a = pto.alloc_tile(4, 32, pto.float32, loc=pto.Vec)\nb = pto.alloc_tile(4, 64, pto.float16, loc=pto.Vec)\n"
     "d = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec)",
     "'b' holds float16 and 'd' float32 (\"TCONCAT: Data type of dst, src0 and src1 must be the same.\""),
    ("a = pto.alloc_tile(4, 32, pto.float32, loc=pto.Vec)\nb = pto.alloc_tile(4, 40, pto.float32, loc=pto.Vec)\n"
     "d = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec)",
     "32 + 40 valid columns of 'a' and 'b' exceed the 64 columns of 'd' (\"TCONCAT: Total columns exceed dst "
     "capacity.\""),
    ("a = pto.alloc_tile(4, 32, pto.float32, loc=pto.Vec, valid=(3, 32))\nb = pto.alloc_tile(4, 32, pto.float32, "
     "loc=pto.Vec)\nd = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec)",
     "'a' has 3 valid rows but 'd' 4; A2/A3 asserts that the valid regions match (\"TCONCAT: validRow of src0 "
     "must match dst.\""),
])
def test_tconcat_impls_checks_are_compile_errors_at_the_line(make_kernels, tiles, message):
    """TCONCAT_IMPL's static_asserts and PTO_ASSERTs."""
    call = "pto.tconcat(d, a, b)"
    body = "\n".join(" " * 8 + line for line in (tiles + "\n" + call).split("\n"))
    mod = make_kernels("\n@pto.kernel\ndef bad(A):\n    with pto.vector():\n" + body + "\n")
    compile_error_at(mod.bad, (pto.alloc_tensor(256),), message, call)


def test_a_source_sharing_dsts_words_reads_what_the_first_copy_wrote(make_kernels):
    """TConcatImpl copies src0 into every row before it reads src1: with src1 a view of dst's
    first 8 columns, src0's copy lands there first, so dst is src0's row twice (reading both
    sources first gave src0 then dst's old words)."""
    mod = make_kernels('''
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
            b = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
            pto.tload(a, A)
            pto.tload(b, B)
            pto.tconcat(b, a, pto.tsubview(b, 0, 0, 1, 8))
            pto.tstore(O, b)
''')
    a = 100 + np.arange(8, dtype=np.float32)
    b = 500 + np.arange(16, dtype=np.float32)
    out, = run_kernel(mod.k, [a, b], [((16,), np.float32)])
    np.testing.assert_array_equal(out, np.concatenate([a, a]))
