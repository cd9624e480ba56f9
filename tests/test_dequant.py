"""TDEQUANT (isa/50_quant.toml, family tile_dequant): dst[r, c] = (float(src[r, c]) - offset[r]) *
scale[r] over dst's valid region, as A2/A3 runs it (include/pto/npu/a2a3/TDequant.hpp: a row's
vconv into float32, then vadds of -offset and vmuls by scale, each rounded to float32); its
checks as compile errors at the line; the cost; and pto-isa's on-device st cases
(hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tdequant at 3186c381) as their kernel
writes them.

The port: tdequant_kernel.cpp TLOADs dst's valid region from the output (GM row stride dstCols),
src's from the input (stride dstCols too), and the first column of validRows rows of the scale
and offset inputs (stride paraCols) into RowMajor paraRows x paraCols tiles; flag MTE2 -> V,
TDEQUANT(dst, src, scale, offset), flag V -> MTE3, TSTORE of dst's valid region. gen_data.py:
src's valid region randint over the dtype, scale uniform(0.001, 1.0) and offset uniform over the
dtype's range, one a row; golden = (src - offset) * scale in float32, zeros past the valid
region. main.cpp compares with ResultCmp at eps 0.001. Every case runs.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error_at, tiles_then_call
from ptoisa_st import FLAGS_IN, FLAGS_OUT, result_cmp, run_kernel

KERNEL = '''
@pto.kernel
def k(S, SC, OF, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile({dr}, {dc}, pto.float32, loc=pto.Vec, valid=({vr}, {vc}))
            s = pto.alloc_tile({sr}, {sc}, pto.{src}, loc=pto.Vec, valid=({vr}, {vc}))
            sc = pto.alloc_tile({pr}, {pc}, pto.float32, loc=pto.Vec, valid=({vr}, 1))
            of = pto.alloc_tile({pr}, {pc}, pto.float32, loc=pto.Vec, valid=({vr}, 1))
            pto.tload(d, O, stride={dc})
            pto.tload(s, S, stride={dc})
            pto.tload(sc, SC, stride={pc})
            pto.tload(of, OF, stride={pc})
            {flags_in}
            pto.tdequant(d, s, sc, of)
            {flags_out}
            pto.tstore(O, d, stride={dc})
'''

# TDEQUANTTest's TEST_Fs: (src dtype, dst rows x cols, src rows x cols, valid rows x cols, para rows x cols)
CASES = {
    "case1": ("int8", 32, 32, 32, 32, 32, 32, 32, 32),
    "case2": ("int16", 32, 32, 32, 32, 32, 32, 32, 32),
    "case3": ("int8", 64, 64, 32, 64, 31, 31, 48, 32),
    "case4": ("int16", 32, 32, 16, 32, 15, 15, 24, 16),
    "case5": ("int8", 64, 128, 32, 128, 31, 62, 48, 32),
    "case6": ("int16", 4, 256, 4, 256, 4, 255, 4, 16),
    "case7": ("int8", 2, 128, 2, 128, 2, 128, 2, 128),
    "case8": ("int8", 2, 128, 2, 128, 2, 127, 2, 128),
    "case9": ("int8", 2, 512, 2, 512, 2, 511, 2, 512),
    "case10": ("int8", 1, 12288, 1, 12288, 1, 12288, 1, 12288),
    "case11": ("int16", 1, 12288, 1, 12288, 1, 12288, 1, 12288),
}


def _inputs(src, sr, sc, vr, vc, pr, pc, seed):
    """gen_data.py's arrays: the src tile, and the scale and offset parameter tiles."""
    rng = np.random.RandomState(seed)
    info = np.iinfo(src)
    s = np.zeros((sr, sc), src)
    s[:vr, :vc] = rng.randint(info.min, info.max + 1, size=(vr, vc)).astype(src)
    scale, offset = np.zeros((pr, pc), np.float32), np.zeros((pr, pc), np.float32)
    scale[:vr, 0] = rng.uniform(0.001, 1.0, size=vr).astype(np.float32)
    offset[:vr, 0] = rng.uniform(info.min, info.max, size=vr).astype(np.float32)
    return s, scale, offset


@pytest.mark.parametrize("case", list(CASES))
def test_tdequant(make_kernels, case):
    """pto-isa's golden at main.cpp's ResultCmp tolerance, and bit for bit: each result is
    float32's rounding of the difference, then of the product, as gen_data.py's float32 numpy."""
    src, dr, dc, sr, sc, vr, vc, pr, pc = CASES[case]
    s, scale, offset = _inputs(src, sr, sc, vr, vc, pr, pc, seed=int(case[4:]))
    golden = np.zeros((dr, dc), np.float32)
    golden[:vr, :vc] = (s[:vr, :vc].astype(np.float32) - offset[:vr, :1]) * scale[:vr, :1]
    mod = make_kernels(KERNEL.format(dr=dr, dc=dc, sr=sr, sc=sc, src=src, vr=vr, vc=vc, pr=pr, pc=pc,
                                     flags_in=FLAGS_IN, flags_out=FLAGS_OUT))
    out, = run_kernel(mod.k, [s, scale, offset], [((dr, dc), np.float32)])
    assert result_cmp(golden, out, 0.001)
    np.testing.assert_array_equal(out, golden)


def test_special_values_follow_float32_arithmetic(make_kernels):
    """A NaN or infinite scale or offset gives what float32 numpy gives: (x - inf) * s = -inf,
    (x - o) * NaN = NaN, (x - o) * 0 = +-0.0 by the difference's sign, and an overflowing product
    inf. dst's columns past its 9 valid ones keep the 7.0 loaded into them."""
    mod = make_kernels('''
@pto.kernel
def k(S, P, O):
    with pto.vector():
        full = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
        d = pto.tsubview(full, 0, 0, 4, 16, valid=(4, 9))
        s = pto.alloc_tile(4, 16, pto.int16, loc=pto.Vec, valid=(4, 9))
        sc = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)
        of = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)
        pto.tload(full, O)
        pto.tload(s, S, stride=16)
        pto.tload(sc, P)
        pto.tload(of, P + 32)
        pto.tdequant(d, s, sc, of)
        pto.tstore(O, full)
''')
    s = np.arange(-32, 32, dtype=np.int16).reshape(4, 16) * 1000
    params = np.zeros((8, 8), np.float32)
    params[:4, 0] = [np.inf, np.nan, 0.0, 3e38]              # scale
    params[4:, 0] = [np.inf, 5.0, 2.0, -1.0]                 # offset
    out = pto.to_device(np.full((4, 16), 7.0, np.float32))
    pto.launch(mod.k, grid=(1,), args=(pto.to_device(s), pto.to_device(params), out))
    want = np.full((4, 16), 7.0, np.float32)
    with np.errstate(all="ignore"):
        want[:, :9] = (s[:, :9].astype(np.float32) - params[4:, :1]) * params[:4, :1]
    got = out.numpy()
    np.testing.assert_array_equal(got, want)
    assert np.isneginf(got[0, 0]) and np.isnan(got[1, 0]) and np.isposinf(got[3, 8])
    assert np.signbit(got[2, 0]) and not np.signbit(got[2, 8])


def test_the_cost_is_a_rows_conversions_scalar_reads_and_two_ops(make_kernels):
    """latency_tables/ascend910b.toml, per row of dst's valid region: TDEQUANT (int16) 98 + 4 a
    256-byte repeat of float32 dst, TDEQUANT_S8 131 + 5 a repeat, no head. 4 x 128 float32 (2
    repeats a row): 4 x 98 + 8 x 4 = 424 from int16, 4 x 131 + 8 x 5 = 564 from int8; 2 x 100
    (400-byte rows: 2 repeats each, the second partial): 2 x 98 + 4 x 4 = 212."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 128, pto.float32, loc=pto.Vec)
            w = pto.alloc_tile(4, 128, pto.int16, loc=pto.Vec)
            b = pto.alloc_tile(4, 128, pto.int8, loc=pto.Vec)
            p = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)
            e = pto.alloc_tile(2, 104, pto.float32, loc=pto.Vec, valid=(2, 100))
            x = pto.alloc_tile(2, 112, pto.int16, loc=pto.Vec, valid=(2, 100))
            pto.tdequant(d, w, p, p)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tdequant(d, b, p, p)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tdequant(e, x, p, p)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    assert [(e.inst, e.end - e.start) for e in prof.timeline if e.inst.startswith("TDEQUANT")] == \
        [("TDEQUANT", 424), ("TDEQUANT_S8", 564), ("TDEQUANT", 212)]


TILES = {"d": "pto.alloc_tile(4, 32, pto.float32, loc=pto.Vec)",
         "s": "pto.alloc_tile(4, 32, pto.int8, loc=pto.Vec)",
         "p": "pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)",
         "q": "pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)"}


@pytest.mark.parametrize("change, message", [
    (("d", "pto.alloc_tile(4, 32, pto.float16, loc=pto.Vec)"),
     "'d' holds float16 (\"Fix: TDEQUANT dst tile currently supports float data type.\""),
    (("s", "pto.alloc_tile(4, 32, pto.int32, loc=pto.Vec)"),
     "'s' holds int32 (\"Fix: TDEQUANT source tile currently supports int8_t and int16_t data types.\""),
    (("q", "pto.alloc_tile(4, 16, pto.float16, loc=pto.Vec)"),
     "'q' holds float16 (\"Fix: TDEQUANT parameter tile scale and offset currently support float data type.\""),
    (("s", "pto.alloc_tile(4, 32, pto.int8, loc=pto.Vec, valid=(3, 32))"),
     "'s' has 3 valid rows but 'd' 4; A2/A3 asserts that the valid regions match (\"Fix: TDEQUANT source tile "
     "valid shape mismatch with dst tile valid shape.\""),
    (("q", "pto.alloc_tile(8, 8, pto.float32, loc=pto.Vec)"),
     "'p' is 4 x 8 and 'q' 8 x 8; TDEQUANT takes them as one tile type (TileDataPara"),
    (("p", "pto.alloc_tile(2, 8, pto.float32, loc=pto.Vec)"),
     "'p' is 2 x 8 and 'q' 4 x 8"),
    (("d", "pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec, valid=(4, 32))"), None),
])
def test_tdequant_checks_are_compile_errors_at_the_line(make_kernels, change, message):
    """TDequantCheck's static_asserts and PTO_ASSERT, and the parameter tiles' one type; the last
    case (dst's 4 valid rows of 8, parameters of 4 rows) compiles."""
    tiles = dict(TILES)
    tiles[change[0]] = change[1]
    call = "pto.tdequant(d, s, p, q)"
    tiles_then_call(make_kernels, tiles, call, message)


def test_parameters_with_fewer_rows_than_dsts_valid_region(make_kernels):
    """Row r's scale is the parameter tile's element (r, 0): 5 valid rows of dst over 4-row
    parameter tiles is a compile error when constant, and a CHECK failing at the line when the
    valid rows are a run-time value."""
    mod = make_kernels('''
@pto.kernel
def const(A):
    with pto.vector():
        d = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec, valid=(5, 32))
        s = pto.alloc_tile(8, 32, pto.int8, loc=pto.Vec, valid=(5, 32))
        p = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)
        pto.tdequant(d, s, p, p)


@pto.kernel
def run_time(A, n):
    with pto.vector():
        d = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec, valid=(n, 32))
        s = pto.alloc_tile(8, 32, pto.int8, loc=pto.Vec, valid=(n, 32))
        p = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)
        pto.tdequant(d, s, p, p)
''')
    compile_error_at(mod.const, (pto.alloc_tensor(256),), "'d' has 5 valid rows but 'p' and 'p' hold 4",
                     "pto.tdequant(d, s, p, p)")
    pto.launch(mod.run_time, grid=(1,), args=(pto.alloc_tensor(256), 4))
    pto.sync()
    with pytest.raises(pto.OutOfBoundsError, match=r"valid rows of 'd' <= rows of 'p' fails \(5 is outside "
                                                   r"\[0, 4\]\)") as info:
        pto.launch(mod.run_time, grid=(1,), args=(pto.alloc_tensor(256), 5))
        pto.sync()
    assert info.value.line is not None
