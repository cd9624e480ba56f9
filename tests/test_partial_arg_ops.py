"""TPARTARGMAX and TPARTARGMIN (isa/51_partial_arg.toml, family tile_part_arg): over dst's valid
region, src0's value and index where both sources are valid and src0 >= src1 (<= for the min),
src1's where the compare fails, and a copy of the valid source's pair where only one is, as
A2/A3 runs it (include/pto/npu/a2a3/TPartArgOp.hpp at 3186c381); its checks as compile errors at
the line; the cost; and pto-isa's on-device st cases (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/tpartargmax and tpartargmin at 3186c381) as their kernels write
them.

The port: tpartargmax_kernel.cpp allocates six RowMajor Vec tiles of their own shapes (dstVal,
dstIdx, src0Val, src0Idx, src1Val, src1Idx), src0's two of valid region vRows0 x vCols0, src1's
vRows1 x vCols1, dst's the larger of each; TLOADs the four sources' valid regions from GM tensors
of the tiles' whole shapes (row stride the tile's width), flag MTE2 -> V, TPARTARGMAX(dstVal,
src0Val, src1Val, dstIdx, src0Idx, src1Idx), flag V -> MTE3, TSTOREs dst's valid regions at
their tiles' widths into zeroed outputs. gen_data.py: values uniform over the dtype's finite
range (case_..._same_tile: one np.random.rand() everywhere), indices randint over the index
dtype; the golden is the larger source's region, then np.where(src0 >= src1) (<= for min) over
the smaller one's, zeros past dst's valid region. main.cpp compares both outputs with ResultCmp
at eps 0.0001. gen_data.py seeds nothing, so each case here draws from RandomState(its position
in the case list). Every case of both suites runs, bit for bit.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import tiles_then_call
from ptoisa_st import FLAGS_IN, FLAGS_OUT, result_cmp, run_kernel

KERNEL = '''
@pto.kernel
def k(AV, AI, BV, BI, DV, DI):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            dv = pto.alloc_tile({dvh}, {dvw}, pto.{val}, loc=pto.Vec, valid=({dr}, {dc}))
            di = pto.alloc_tile({dih}, {diw}, pto.{idx}, loc=pto.Vec, valid=({dr}, {dc}))
            av = pto.alloc_tile({avh}, {avw}, pto.{val}, loc=pto.Vec, valid=({r0}, {c0}))
            ai = pto.alloc_tile({aih}, {aiw}, pto.{idx}, loc=pto.Vec, valid=({r0}, {c0}))
            bv = pto.alloc_tile({bvh}, {bvw}, pto.{val}, loc=pto.Vec, valid=({r1}, {c1}))
            bi = pto.alloc_tile({bih}, {biw}, pto.{idx}, loc=pto.Vec, valid=({r1}, {c1}))
            pto.tload(av, AV, stride={avw})
            pto.tload(ai, AI, stride={aiw})
            pto.tload(bv, BV, stride={bvw})
            pto.tload(bi, BI, stride={biw})
            {flags_in}
            pto.tpartarg{op}(dv, av, bv, di, ai, bi)
            {flags_out}
            pto.tstore(DV, dv, stride={dvw})
            pto.tstore(DI, di, stride={diw})
'''

_S, _R, _K = (4, 8), (128, 64), (128, 128)
# gen_data.py's case_list, in order: (name, value dtype, index dtype, the six tile shapes dstVal,
# dstIdx, src0Val, src0Idx, src1Val, src1Idx, src0's valid region, src1's, equal)
CASES = [
    ("float_uint32_same_size", "float32", "uint32", (_S,) * 6, (4, 8), (4, 8)),
    ("float_uint32_row_diff_0", "float32", "uint32", (_S,) * 6, (3, 8), (4, 8)),
    ("float_uint32_row_diff_1", "float32", "uint32", (_S,) * 6, (4, 8), (3, 8)),
    ("float_uint32_col_diff_0", "float32", "uint32", (_S,) * 6, (4, 7), (4, 8)),
    ("float_uint32_col_diff_1", "float32", "uint32", (_S,) * 6, (4, 8), (4, 7)),
    ("float_uint32_small_0", "float32", "uint32", (_S,) * 6, (3, 7), (4, 8)),
    ("float_uint32_small_1", "float32", "uint32", (_S,) * 6, (4, 8), (3, 7)),
    ("float_uint32_same_size_unaligned", "float32", "uint32", (_S,) * 6, (4, 7), (4, 7)),
    ("float_uint32_row_diff_unaligned_0", "float32", "uint32", (_S,) * 6, (3, 7), (4, 7)),
    ("float_uint32_row_diff_unaligned_1", "float32", "uint32", (_S,) * 6, (4, 7), (3, 7)),
    ("float_uint32_col_diff_unaligned_0", "float32", "uint32", (_S,) * 6, (4, 5), (4, 7)),
    ("float_uint32_col_diff_unaligned_1", "float32", "uint32", (_S,) * 6, (4, 7), (4, 5)),
    ("float_uint32_same_size_32k", "float32", "uint32", (_R,) * 6, (128, 64), (128, 64)),
    ("float_uint32_row_diff_32k_0", "float32", "uint32", (_R,) * 6, (111, 64), (128, 64)),
    ("float_uint32_row_diff_32k_1", "float32", "uint32", (_R,) * 6, (128, 64), (111, 64)),
    ("float_uint32_col_diff_32k_0", "float32", "uint32", (_R,) * 6, (128, 57), (128, 64)),
    ("float_uint32_col_diff_32k_1", "float32", "uint32", (_R,) * 6, (128, 64), (128, 57)),
    ("float_uint32_small_32k_0", "float32", "uint32", (_R,) * 6, (111, 57), (128, 64)),
    ("float_uint32_small_32k_1", "float32", "uint32", (_R,) * 6, (128, 64), (111, 57)),
    ("half_uint16_same_size_32k", "float16", "uint16", (_K,) * 6, (128, 128), (128, 128)),
    ("half_uint16_row_diff_32k_0", "float16", "uint16", (_K,) * 6, (111, 128), (128, 128)),
    ("half_uint16_row_diff_32k_1", "float16", "uint16", (_K,) * 6, (128, 128), (111, 128)),
    ("half_uint16_col_diff_32k_0", "float16", "uint16", (_K,) * 6, (128, 111), (128, 128)),
    ("half_uint16_col_diff_32k_1", "float16", "uint16", (_K,) * 6, (128, 128), (128, 111)),
    ("float_uint32_tile_diff", "float32", "uint32", ((4, 8), (4, 16), (4, 24), (4, 32), (4, 40), (4, 48)),
     (4, 7), (4, 7)),
    ("float_uint32_tile_diff_32k", "float32", "uint32",
     ((57, 128), (57, 120), (57, 112), (57, 104), (57, 144), (57, 136)), (57, 97), (57, 97)),
    ("float_uint32_tile_diff_32k_row_diff_0", "float32", "uint32",
     ((57, 128), (57, 120), (51, 112), (51, 104), (57, 144), (57, 136)), (51, 97), (57, 97)),
    ("float_uint32_tile_diff_32k_row_diff_1", "float32", "uint32",
     ((57, 128), (57, 120), (57, 112), (57, 104), (51, 144), (51, 136)), (57, 97), (51, 97)),
    ("float_uint32_tile_diff_32k_col_diff_0", "float32", "uint32",
     ((57, 128), (57, 120), (57, 112), (57, 104), (57, 144), (57, 136)), (57, 97), (57, 101)),
    ("float_uint32_tile_diff_32k_col_diff_1", "float32", "uint32",
     ((57, 128), (57, 120), (57, 112), (57, 104), (57, 144), (57, 136)), (57, 101), (57, 97)),
    ("float_uint32_tile_diff_32k_small_0", "float32", "uint32",
     ((57, 128), (57, 120), (57, 112), (57, 104), (57, 144), (57, 136)), (51, 97), (57, 101)),
    ("float_uint32_tile_diff_32k_small_1", "float32", "uint32",
     ((57, 128), (57, 120), (57, 112), (57, 104), (57, 144), (57, 136)), (57, 101), (51, 97)),
    ("float_uint32_same_tile", "float32", "uint32", (_S,) * 6, (4, 8), (4, 8), True),
    ("half_uint32_same_size_32k", "float16", "uint32", (_R,) * 6, (128, 64), (128, 64)),
    ("half_uint32_row_diff_32k_0", "float16", "uint32", (_R,) * 6, (111, 64), (128, 64)),
    ("half_uint32_row_diff_32k_1", "float16", "uint32", (_R,) * 6, (128, 64), (111, 64)),
    ("half_uint32_col_diff_32k_0", "float16", "uint32", (_R,) * 6, (128, 57), (128, 64)),
    ("half_uint32_col_diff_32k_1", "float16", "uint32", (_R,) * 6, (128, 64), (128, 57)),
    ("half_uint32_small_32k_0", "float16", "uint32", (_R,) * 6, (111, 57), (128, 64)),
    ("half_uint32_small_32k_1", "float16", "uint32", (_R,) * 6, (128, 64), (111, 57)),
]
COMPARE = {"max": np.greater_equal, "min": np.less_equal}


def _tile(rng, dtype, shape, val=None):
    """gen_data.py's gen_tile: val everywhere, else randint over an integer dtype's range or
    uniform over a float dtype's finite range."""
    if val is not None:
        return np.full(shape, val).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.randint(info.min, info.max, size=shape).astype(dtype)
    info = np.finfo(dtype)
    return rng.uniform(low=info.min, high=info.max, size=shape).astype(dtype)


def _golden(op, srcs, dst_shapes, v0, v1):
    """gen_data.py's gen_golden_data: the larger source's pair over dst's valid region, then the
    compare's choice over the smaller region, zeros elsewhere."""
    (av, ai, bv, bi), (dv_shape, di_shape) = srcs, dst_shapes
    (h0, w0), (h1, w1) = v0, v1
    hb, wb, hs, ws = max(h0, h1), max(w0, w1), min(h0, h1), min(w0, w1)
    big = (bv, bi) if h0 < h1 or w0 < w1 else (av, ai)
    dv, di = np.zeros(dv_shape, av.dtype), np.zeros(di_shape, ai.dtype)
    dv[:hb, :wb], di[:hb, :wb] = big[0][:hb, :wb], big[1][:hb, :wb]
    mask = COMPARE[op](av[:hs, :ws], bv[:hs, :ws])
    dv[:hs, :ws] = np.where(mask, av[:hs, :ws], bv[:hs, :ws])
    di[:hs, :ws] = np.where(mask, ai[:hs, :ws], bi[:hs, :ws])
    return dv, di


def _port(make_kernels, op, case, **launch):
    """The case's kernel on gen_data.py's inputs: (golden values, golden indices, the outputs)."""
    position = [c[0] for c in CASES].index(case)
    _name, val, idx, shapes, v0, v1, *equal = CASES[position]
    rng = np.random.RandomState(position)
    fill = rng.rand() if equal else None
    srcs = [_tile(rng, np.dtype(val), shapes[2], fill), _tile(rng, np.dtype(idx), shapes[3]),
            _tile(rng, np.dtype(val), shapes[4], fill), _tile(rng, np.dtype(idx), shapes[5])]
    dv, di = _golden(op, srcs, shapes[:2], v0, v1)
    (r0, c0), (r1, c1) = v0, v1
    names = ("dv", "di", "av", "ai", "bv", "bi")
    dims = {f"{n}{a}": x for n, shape in zip(names, shapes) for a, x in zip("hw", shape)}
    mod = make_kernels(KERNEL.format(op=op, val=val, idx=idx, dr=max(r0, r1), dc=max(c0, c1), r0=r0, c0=c0, r1=r1,
                                     c1=c1, flags_in=FLAGS_IN, flags_out=FLAGS_OUT, **dims))
    ins = [pto.to_device(a) for a in srcs]
    outs = [pto.to_device(np.zeros(shape, dtype)) for shape, dtype in ((shapes[0], val), (shapes[1], idx))]
    pto.launch(mod.k, grid=(1,), args=(*ins, *outs), **launch)
    return dv, di, [t.numpy() for t in outs]


@pytest.mark.parametrize("op", list(COMPARE))
@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_ptoisa_on_device_case(make_kernels, op, case):
    """TPARTARG{MAX,MIN}Test.case_<case>: pto-isa's golden at main.cpp's ResultCmp tolerance,
    and bit for bit (values and indices)."""
    dv, di, (got_v, got_i) = _port(make_kernels, op, case)
    assert result_cmp(dv, got_v, 0.0001) and result_cmp(di, got_i, 0.0001)
    np.testing.assert_array_equal(got_v.view(f"u{dv.itemsize}"), dv.view(f"u{dv.itemsize}"))
    np.testing.assert_array_equal(got_i, di)


@pytest.mark.parametrize("case", ["float_uint32_tile_diff_32k_small_0", "half_uint16_col_diff_32k_1",
                                  "float_uint32_row_diff_unaligned_1"])
@pytest.mark.parametrize("launch", [dict(mode="functional"), dict(check="all")])
def test_ports_run_functionally_and_under_the_checks(make_kernels, case, launch):
    """The functional runner (TileOp.run on the executor's kernel) and the checked SimPy model
    (check="all": racecheck, initcheck, synccheck) give the golden too."""
    for op in COMPARE:
        dv, di, (got_v, got_i) = _port(make_kernels, op, case, **launch)
        np.testing.assert_array_equal(got_v.view(f"u{dv.itemsize}"), dv.view(f"u{dv.itemsize}"))
        np.testing.assert_array_equal(got_i, di)


SPECIAL = '''
@pto.kernel
def k(A, AI, B, BI, O, OI):
    with pto.vector():
        d = pto.alloc_tile(2, 16, pto.{val}, loc=pto.Vec)
        di = pto.alloc_tile(2, 16, pto.{idx}, loc=pto.Vec)
        a = pto.alloc_tile(2, 16, pto.{val}, loc=pto.Vec)
        ai = pto.alloc_tile(2, 16, pto.{idx}, loc=pto.Vec)
        b = pto.alloc_tile(2, 16, pto.{val}, loc=pto.Vec)
        bi = pto.alloc_tile(2, 16, pto.{idx}, loc=pto.Vec)
        pto.tload(a, A)
        pto.tload(ai, AI)
        pto.tload(b, B)
        pto.tload(bi, BI)
        pto.tpartarg{op}(d, a, b, di, ai, bi)
        pto.tstore(O, d)
        pto.tstore(OI, di)
'''


@pytest.mark.parametrize("op", list(COMPARE))
@pytest.mark.parametrize("val, idx", [("float32", "int32"), ("float16", "int16")])
def test_special_values_take_src1_unless_the_compare_holds(make_kernels, op, val, idx):
    """vcmp_ge / vcmp_le then vsel: a NaN on either side fails the compare, so src1's value and
    index are taken; -0.0 and 0.0 compare equal, so src0's; infinities order as numbers."""
    a = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, np.inf, -np.inf, 2.0] * 4, val).reshape(2, 16)
    b = np.array([1.0, np.nan, np.nan, 0.0, -0.0, 3.0, -3.0, 2.0] * 4, val).reshape(2, 16)
    ai = np.arange(32, dtype=idx).reshape(2, 16)
    bi = ai + 100
    mod = make_kernels(SPECIAL.format(op=op, val=val, idx=idx))
    got_v, got_i = run_kernel(mod.k, [a, ai, b, bi], [((2, 16), np.dtype(val)), ((2, 16), np.dtype(idx))])
    with np.errstate(invalid="ignore"):
        first = COMPARE[op](a, b)
    np.testing.assert_array_equal(got_i, np.where(first, ai, bi))
    np.testing.assert_array_equal(got_v.view(f"u{a.itemsize}"), np.where(first, a, b).view(f"u{a.itemsize}"))
    assert list(first[0, :8]) == [False, False, False, True, True, op == "max", op == "min", True]


def test_the_cost_is_71_or_41_cycles_a_row_and_repeat_of_the_compared_region(make_kernels):
    """latency_tables/ascend910b.toml, per row and 256-byte repeat of the region both sources
    cover, no head or tail: TPARTARGMAX 71 (vcmp_ge as vcmpv_ge 14 + 2, barrier 22 + 1, two vsel
    13 + 2 + 2, barrier 14 + 1), TPARTARGMIN 41 (vcmp_le as vcmpv_le 6 + 2, barrier 0 + 1, the
    same vsels and barrier). 4 x 8 float32: 4 x 71 = 284, 4 x 41 = 164; src0 3 x 8 against 4 x 8:
    3 x 71 = 213 (the copied row is not priced); 4 x 100 float32 (400-byte rows, 2 repeats each):
    8 x 71 = 568; 4 x 128 float16 with int16 indices (one repeat a row): 4 x 71 = 284."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)
            di = pto.alloc_tile(4, 8, pto.int32, loc=pto.Vec)
            s = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec, valid=(3, 8))
            si = pto.alloc_tile(4, 8, pto.int32, loc=pto.Vec, valid=(3, 8))
            w = pto.alloc_tile(4, 104, pto.float32, loc=pto.Vec, valid=(4, 100))
            wi = pto.alloc_tile(4, 104, pto.int32, loc=pto.Vec, valid=(4, 100))
            h = pto.alloc_tile(4, 128, pto.float16, loc=pto.Vec)
            hi = pto.alloc_tile(4, 128, pto.int16, loc=pto.Vec)
            pto.tpartargmax(d, d, d, di, di, di)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tpartargmin(d, d, d, di, di, di)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tpartargmax(d, s, d, di, si, di)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tpartargmax(w, w, w, wi, wi, wi)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tpartargmax(h, h, h, hi, hi, hi)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    assert [(e.inst, e.end - e.start) for e in prof.timeline if e.inst.startswith("TPARTARG")] == \
        [("TPARTARGMAX", 284), ("TPARTARGMIN", 164), ("TPARTARGMAX", 213), ("TPARTARGMAX", 568),
         ("TPARTARGMAX", 284)]


TILES = {"d": "pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)",
         "di": "pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec)",
         "a": "pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)",
         "ai": "pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec)",
         "b": "pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)",
         "bi": "pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec)"}
HALF = "pto.alloc_tile(4, 128, pto.float16, loc=pto.Vec)"
WIDE = "pto.alloc_tile(4, 128, pto.int32, loc=pto.Vec)"


@pytest.mark.parametrize("changes, message", [
    ({"a": "pto.alloc_tile(4, 16, pto.float16, loc=pto.Vec)"},
     "'a' holds float16 and 'd' float32 (\"TPARTARGOPS: dstVal srcVal0 srcVal1 type must be consistent\""),
    ({"bi": "pto.alloc_tile(4, 16, pto.uint32, loc=pto.Vec)"},
     "'bi' holds uint32 and 'di' int32 (\"TPARTARGOPS: dstIdx srcIdx0 srcIdx1 type must be consistent\""),
    ({k: "pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec)" for k in ("d", "a", "b")},
     "'d' holds int32 (\"TPARTARGOPS: val type only support float, half.\""),
    ({k: "pto.alloc_tile(4, 16, pto.int16, loc=pto.Vec)" for k in ("di", "ai", "bi")},
     "'di' holds int16; float32 values take int32, uint32 indices (\"TPARTARGOPS: idx type must be integral type.\""),
    ({"ai": "pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec, valid=(3, 16))"},
     "'ai' has a valid region of 3 x 16 and 'a' 4 x 16 (\"TPARTARGOPS: idxTile validRow/validCol must be "
     "consistent with of valTile.\""),
    ({"d": "pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, valid=(4, 8))",
      "di": "pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec, valid=(4, 8))"},
     "'d' has a valid region of 4 x 8 but the larger of 'a' (4 x 16) and 'b' (4 x 16) is 4 x 16 (\"TPARTARGOPS: "
     "dst valid size must be consistent with src of bigger size.\""),
    ({"a": "pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, valid=(4, 8))",
      "ai": "pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec, valid=(4, 8))",
      "b": "pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, valid=(3, 16))",
      "bi": "pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec, valid=(3, 16))"},
     "'a' (4 x 8) and 'b' (3 x 16) are each smaller than dst's 4 x 16 in one direction (\"TPARTARGOPS: Only "
     "one of src0 and src1 is smaller than dst.\""),
    ({"a": "pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec, layout=pto.ColMajor, valid=(4, 16))"},
     "'a' is ColMajor; pypto_sim builds TPARTARGMAX on RowMajor tiles"),
    ({"d": HALF, "a": HALF, "b": HALF, "di": WIDE, "ai": WIDE, "bi": WIDE},
     "float16 values with int32 indices over 128 compared columns are not built"),
    ({"d": HALF, "a": HALF, "b": HALF, **{k: "pto.alloc_tile(4, 128, pto.uint16, loc=pto.Vec)"
                                        for k in ("di", "ai", "bi")}}, None),
    ({"a": "pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, valid=(2, 5))",
      "ai": "pto.alloc_tile(8, 8, pto.int32, loc=pto.Vec, valid=(2, 5))"}, None),
])
def test_checks_are_compile_errors_at_the_line(make_kernels, changes, message):
    """checkTiles' static_asserts and PTO_ASSERTs and TPartArgInstr's last branch; float16 with
    32-bit indices past 64 compared columns; the last two cases compile (16-bit indices over 128
    float16 columns; a source smaller in both directions, its index tile of another shape)."""
    tiles = {**TILES, **changes}
    tiles_then_call(make_kernels, tiles, "pto.tpartargmax(d, a, b, di, ai, bi)", message)


def test_a_valid_region_known_at_run_time_is_refused(make_kernels):
    """TPartArgInstr picks its branch from the valid regions; pypto_sim builds constant ones."""
    mod = make_kernels('''
@pto.kernel
def bad(A, n):
    with pto.vector():
        d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
        di = pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec)
        a = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, valid=(n, 16))
        ai = pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec, valid=(n, 16))
        pto.tpartargmin(d, a, d, di, ai, di)
''')
    from aicore_runs import compile_error_at
    compile_error_at(mod.bad, (pto.alloc_tensor(256), 3), "'a' has a valid region known only at run time",
                     "pto.tpartargmin(d, a, d, di, ai, di)")
