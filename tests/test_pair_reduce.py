"""TPAIRREDUCESUM (isa/48_pair_reduce.toml, family tile_pair): per row, the sums of adjacent
pairs of src's valid columns into dst's first columns, as A2/A3 runs it (include/pto/npu/a2a3/
TPairReduceSum.hpp: vcpadd, floor(validCols / 2) pairs, dst's other columns kept); the checks of
TPairReduceSumCheck as compile errors at the line; the cost; and pto-isa's on-device st cases
(hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tpairreducesum at 3186c381) as their
kernel writes them.

The port: tpairreducesum_kernel.cpp's runTPairReduceSum<T, dstTileH, dstTileW, src0TileH,
src0TileW, vRows, vCols> TLOADs a vRows x vCols window of the src0TileH x src0TileW input (rows
src0TileW apart in GM) into src's tile and the output's vRows x vCols window (rows dstTileW
apart, zeros: main.cpp memsets it) into dst's tile, both tiles of valid (vRows, vCols); flag
MTE2 -> V; TPAIRREDUCESUM(dst, src); flag V -> MTE3; TSTORE of that window. gen_data.py:
input randint(1, 10) of the dtype over the whole src tile; golden zeros but golden[r, k] =
input[r, 2k] + input[r, 2k + 1] for k < vCols // 2 (its _compute_golden); main.cpp compares the
dstTileH x dstTileW output with ResultCmp at eps 0.001, std::vector<T> golden(fileSizeDst)
(bytes) as the compared length. Every case runs.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error_at
from engine_compare import assert_engines_agree, both_executors, dev_array, same_words, tensor_values
from ptoisa_st import FLAGS_IN, FLAGS_OUT, result_cmp, run_kernel

KERNEL = '''
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile({sh}, {sw}, pto.{dt}, loc=pto.Vec, valid=({vr}, {vc}))
            d = pto.alloc_tile({dh}, {dw}, pto.{dt}, loc=pto.Vec, valid=({vr}, {vc}))
            pto.tload(s, S, stride={sw})
            pto.tload(d, O, stride={dw})
            {flags_in}
            pto.tpairreducesum(d, s)
            {flags_out}
            pto.tstore(O, d, stride={dw})
'''

# TPAIRREDUCESUMTest's TEST_Fs: (T, dstTileH, dstTileW, src0TileH, src0TileW, vRows, vCols)
CASES = {
    "case_float_32x64_32x64_32x64": ("float32", 32, 64, 32, 64, 32, 64),
    "case_float_32x128_32x128_32x128": ("float32", 32, 128, 32, 128, 32, 128),
    "case_half_8x256_8x256_8x256": ("float16", 8, 256, 8, 256, 8, 256),
    "case_half_8x64_8x128_8x64": ("float16", 8, 64, 8, 128, 8, 64),
    "case_float_8x32_8x64_8x32": ("float32", 8, 32, 8, 64, 8, 32),
    "case_half_8x64_8x128_8x63": ("float16", 8, 64, 8, 128, 8, 63),
    "case_float_8x32_8x64_8x31": ("float32", 8, 32, 8, 64, 8, 31),
    "case_half_4x128_4x128_2x106": ("float16", 4, 128, 4, 128, 2, 106),
    "case_float_8x128_8x128_8x127": ("float32", 8, 128, 8, 128, 8, 127),
    "case_half_8x256_8x256_8x255": ("float16", 8, 256, 8, 256, 8, 255),
}


def _source(dt, dh, dw, sh, sw, vr, vc):
    return KERNEL.format(dt=dt, dh=dh, dw=dw, sh=sh, sw=sw, vr=vr, vc=vc, flags_in=FLAGS_IN, flags_out=FLAGS_OUT)


@pytest.mark.parametrize("case", list(CASES))
def test_tpairreducesum(make_kernels, case):
    """pto-isa's golden, at main.cpp's ResultCmp tolerance, over the whole output tile."""
    dt, dh, dw, sh, sw, vr, vc = CASES[case]
    rng = np.random.RandomState(sum(map(ord, case)))
    src = rng.randint(1, 10, size=(sh, sw)).astype(dt)
    golden = np.zeros((dh, dw), dt)
    pairs = vc // 2
    golden[:vr, :pairs] = src[:vr, 0:2 * pairs:2] + src[:vr, 1:2 * pairs:2]      # _compute_golden
    out, = run_kernel(make_kernels(_source(dt, dh, dw, sh, sw, vr, vc)).k, [src], [((dh, dw), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)          # small integers: the sums are exact


def test_pairs_of_special_values_on_both_engines_and_executors(make_kernels):
    """Adjacent pairs summed in the dtype: inf + -inf is NaN, 60000 + 60000 overflows float16
    to inf, -0.0 + -0.0 stays -0.0, an odd last column is not read; the compiled engine and the
    SimPy model agree on every word and cycle, and timing and functional mode with the numba and
    the reference executor write the same HBM bytes."""
    row = np.array([np.inf, -np.inf, 60000, 60000, -0.0, -0.0, 1.5, 2.25, 7.0], np.float16)
    src = np.zeros((2, 16), np.float16)
    src[:, :9] = row
    want = np.zeros((2, 16), np.float16)
    with np.errstate(invalid="ignore", over="ignore"):
        want[:, :4] = src[:, 0:8:2] + src[:, 1:8:2]
    kernel = make_kernels(_source("float16", 2, 16, 2, 16, 2, 9)).k
    args = (dev_array(src, pto.float16), dev_array(np.zeros_like(want), pto.float16))
    assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    images = both_executors(kernel, (1,), args)
    first = next(iter(images.values()))
    for name, image in images.items():
        same_words(image, first, name)
    got = tensor_values(first, args[1]).reshape(2, 16)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_the_cost_is_one_vcpadd_repeat_per_256_bytes_of_a_source_row(make_kernels):
    """latency_tables/ascend910b.toml TPAIRREDUCESUM on an idle V pipe: head 6 + 2 a repeat of
    a source row's 256 bytes, + the count-mode floor 16 when a row ends inside a repeat. An 8 x
    128 float32 source (512-byte rows, 2 repeats each): 6 + 2 x 16 = 38; valid (8, 127) (508
    bytes a row, still 2 repeats each): 6 + 32 + 16 = 54."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(8, 128, pto.float32, loc=pto.Vec)
            d = pto.alloc_tile(8, 128, pto.float32, loc=pto.Vec)
            u = pto.alloc_tile(8, 128, pto.float32, loc=pto.Vec, valid=(8, 127))
            e = pto.alloc_tile(8, 128, pto.float32, loc=pto.Vec, valid=(8, 127))
            pto.tpairreducesum(d, s)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tpairreducesum(e, u)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    got = [e.end - e.start for e in prof.timeline if e.inst == "TPAIRREDUCESUM"]
    assert got == [38, 54]


@pytest.mark.parametrize("tiles, call, message", [
    ("s = pto.alloc_tile(8, 64, pto.int32, loc=pto.Vec)\nd = pto.alloc_tile(8, 64, pto.int32, loc=pto.Vec)",
     "pto.tpairreducesum(d, s)", "'d' holds int32; A2/A3 takes float32, float16 (\"Fix: TPAIRREDUCESUM has invalid data type.\""),
    ("s = pto.alloc_tile(8, 64, pto.float16, loc=pto.Vec)\nd = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec)",
     "pto.tpairreducesum(d, s)", "'s' holds float16 and 'd' float32 (\"Fix: TPAIRREDUCESUM input tile src0 and dst tile data type mismatch"),
    ("s = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec, valid=(8, 63))\n"
     "d = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec)",
     "pto.tpairreducesum(d, s)", "'s' has 63 valid columns but 'd' 64; A2/A3 asserts that the valid regions match (\"Fix: TPAIRREDUCESUM input tile src0 valid shape mismatch"),
    ("s = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec, valid=(4, 64))\n"
     "d = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec)",
     "pto.tpairreducesum(d, s)", "'s' has 4 valid rows but 'd' 8; A2/A3 asserts"),
    ("s = pto.alloc_tile(64, 8, pto.float32, loc=pto.Vec, layout=pto.ColMajor)\n"
     "d = pto.alloc_tile(64, 8, pto.float32, loc=pto.Vec)",
     "pto.tpairreducesum(d, s)", "'s' is ColMajor (\"Fix: TPAIRREDUCESUM only support row major layout.\""),
])
def test_tpairreducesumchecks_are_compile_errors_at_the_line(make_kernels, tiles, call, message):
    """TPairReduceSumCheck's static_asserts and its PTO_ASSERT on the valid shapes."""
    body = "\n".join(" " * 8 + line for line in (tiles + "\n" + call).split("\n"))
    mod = make_kernels("\n@pto.kernel\ndef bad(A):\n    with pto.vector():\n" + body + "\n")
    compile_error_at(mod.bad, (pto.alloc_tensor(256),), message, call.strip())


def test_a_run_time_valid_shape_mismatch_stops_the_launch(make_kernels):
    """Valid regions known only at run time: the PTO_ASSERT is a CHECK when the kernel runs,
    which stops the launch naming the requirement (and passes when the shapes agree)."""
    mod = make_kernels('''
@pto.kernel
def k(S, O, n):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec, valid=(2, n))
            d = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec, valid=(2, 64))
            pto.tload(s, S)
            pto.tpairreducesum(d, s)
            pto.tstore(O, d)
''')
    src = np.arange(128, dtype=np.float32).reshape(2, 64)
    got, = run_kernel(mod.k, [src], [((2, 64), np.float32)], 64)
    np.testing.assert_array_equal(got[:, :32], src[:, 0::2] + src[:, 1::2])
    with pytest.raises(pto.OutOfBoundsError, match="valid columns of 's' == valid columns of 'd'"):
        run_kernel(mod.k, [src], [((2, 64), np.float32)], 62)
