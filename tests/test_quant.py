"""TQUANT (isa/50_quant.toml, family tile_quant): dst = saturate(rint(float16(rint_int32(x)))) with
x = src[r, c] * scale[r] (+ offset[r] for INT8_ASYM), each op rounded to float32, over src's
valid region, as A2/A3 runs it (include/pto/npu/a2a3/TQuant.hpp: TROWEXPANDMUL, TROWEXPANDADD,
then TCVT float32 -> int32 into tmp, int32 -> float16 over src, float16 -> int8 / uint8 with
saturation); what it leaves in src and tmp; its checks as compile errors at the line; the
cost; and pto-isa's on-device st cases (hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/
tquant at 3186c381) as their kernel writes them.

The port: tquant_kernel.cpp TLOADs src (validRows x validCols of GM rows validCols apart) into
a RowMajor float32 tile of paddedCols_b32 columns, scale (and offset) from DN GM into ColMajor
paddedRows_cm x 1 tiles of valid (validRows, 1); flag MTE2 -> V, TQUANT<INT8_SYM>(dst, src,
scale, tmp) into int8 (or TQUANT<INT8_ASYM>(..., &offset) into uint8) with a float32 tmp of
src's shape, flag V -> MTE3, TSTORE of dst's valid region. main.cpp runs 15 cases and compares
with ResultCmp at eps 0. gen_data.py seeds numpy once (19) and draws every case of its list in
order, so the data here replay that list (its two 256 x 128 cases included: main.cpp has no
TEST_F for them, and tquant_kernel.cpp no instance) to get each case's own numbers. Its golden:
for INT8_SYM scale = max|x| / 127 a row, inv = 1 / scale, golden = clip(round(float16(round(x *
inv))), -128, 127); for INT8_ASYM scale = (max - min) / 255, zero point = clip(round(-min /
scale), 0, 255), golden = clip(round(float16(round(x * inv + zero point))), 0, 255); all in
float32 numpy, so the model matches it bit for bit.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import tiles_then_call
from ptoisa_st import FLAGS_IN, FLAGS_OUT, result_cmp, run_kernel

# gen_data.py's case_params_list, in its order (s8: INT8_SYM, u8: INT8_ASYM)
GEN_DATA_CASES = [("s8", 64, 128), ("s8", 128, 128), ("s8", 256, 128), ("u8", 64, 128), ("u8", 128, 128),
                  ("u8", 256, 128), ("u8", 32, 72), ("s8", 2, 129), ("u8", 2, 129), ("s8", 2, 122), ("u8", 2, 122),
                  ("s8", 16, 127), ("u8", 16, 127), ("s8", 8, 130), ("u8", 8, 130), ("s8", 64, 65), ("u8", 64, 65)]
# main.cpp's TEST_Fs
MAIN_CASES = [("s8", 64, 128), ("s8", 128, 128), ("u8", 64, 128), ("u8", 128, 128), ("u8", 32, 72),
              ("s8", 2, 129), ("u8", 2, 129), ("s8", 2, 122), ("u8", 2, 122), ("s8", 16, 127), ("u8", 16, 127),
              ("s8", 8, 130), ("u8", 8, 130), ("s8", 64, 65), ("u8", 64, 65)]

KERNEL = '''
@pto.kernel
def k(S, SC, {offset_param}O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile({r}, {c32}, pto.float32, loc=pto.Vec, valid=({r}, {c}))
            d = pto.alloc_tile({r}, {c8}, pto.{out}, loc=pto.Vec, valid=({r}, {c}))
            sc = pto.alloc_tile({rcm}, 1, pto.float32, loc=pto.Vec, valid=({r}, 1), layout=pto.ColMajor)
            {offset_alloc}
            t = pto.alloc_tile({r}, {c32}, pto.float32, loc=pto.Vec, valid=({r}, {c}))
            pto.tload(s, S, stride={c})
            pto.tload(sc, SC, layout=pto.DN)
            {offset_load}
            {flags_in}
            pto.tquant(d, s, sc, t{offset_arg})
            {flags_out}
            pto.tstore(O, d, stride={c})
'''


OFFSET_ALLOC = "of = pto.alloc_tile({rcm}, 1, pto.float32, loc=pto.Vec, valid=({r}, 1), layout=pto.ColMajor)"


def _ceil(x, m):
    """x rounded up to a multiple of m (the kernel's PTO_CEIL)."""
    return -(-x // m) * m


def gen_data():
    """gen_data.py's input, inv_scale, offset and golden of every case of its list, drawn in its
    order from np.random.seed(19) (a RandomState of that seed: the same numbers)."""
    rng = np.random.RandomState(19)
    out = {}
    for kind, rows, cols in GEN_DATA_CASES:
        x = rng.uniform(low=-2, high=2, size=(rows, cols)).astype(np.float32)
        if kind == "s8":
            scale = (np.max(np.abs(x), axis=1, keepdims=True) / 127.0).astype(np.float32)
            inv = np.where(scale != 0, 1.0 / scale, 0.0).astype(np.float32)
            offset = np.zeros((rows, 1), np.float32)
            rounded = np.round(x * inv).astype(np.float32)
            golden = np.clip(np.round(rounded.astype(np.float16)), -128, 127).astype(np.int8)
        else:
            lo, hi = np.min(x, axis=1, keepdims=True), np.max(x, axis=1, keepdims=True)
            scale = ((hi - lo) / 255.0).astype(np.float32)
            inv = np.where(scale != 0, 1.0 / scale, 0.0).astype(np.float32)
            offset = np.clip(np.round(-lo / scale), 0, 255).astype(np.float32)
            rounded = np.round(x * inv + offset).astype(np.float32)
            golden = np.clip(np.round(rounded.astype(np.float16)), 0, 255).astype(np.uint8)
        out[(kind, rows, cols)] = (x, inv, offset, golden)
    return out


GEN_DATA = gen_data()


@pytest.mark.parametrize("case", MAIN_CASES, ids=[f"{k}_{r}x{c}" for k, r, c in MAIN_CASES])
def test_tquant(make_kernels, case):
    """pto-isa's golden at main.cpp's ResultCmp eps 0, and bit for bit: the product (and the
    sum) rounded to float32 as gen_data.py's float32 numpy, then rint, float16 and the clamp."""
    kind, rows, cols = case
    x, inv, offset, golden = GEN_DATA[case]
    asym = kind == "u8"
    mod = make_kernels(KERNEL.format(
        r=rows, c=cols, c32=_ceil(cols, 8), c8=_ceil(cols, 32), rcm=_ceil(rows, 8), out="uint8" if asym else "int8",
        offset_param="OF, " if asym else "",
        offset_alloc=OFFSET_ALLOC.format(r=rows, rcm=_ceil(rows, 8)) if asym else "",
        offset_load="pto.tload(of, OF, layout=pto.DN)" if asym else "",
        offset_arg=", offset=of" if asym else "", flags_in=FLAGS_IN, flags_out=FLAGS_OUT))
    inputs = [x, inv.ravel()] + ([offset.ravel()] if asym else [])
    out, = run_kernel(mod.k, inputs, [((rows, cols), golden.dtype)])
    assert result_cmp(golden, out, 0.0)
    np.testing.assert_array_equal(out, golden)


def numpy_quant(x, scale, offset, dtype):
    """(x * scale (+ offset) in float32, its int32 rint saturated with NaN 0 (and no -0: -0.3 is
    the int32 0, whose float16 is +0.0), their float16, the saturated dtype rint of those):
    TQuant.hpp's passes in numpy, a row's parameter a row."""
    with np.errstate(all="ignore"):
        y = x * scale.reshape(-1, 1)
        if offset is not None:
            y = y + offset.reshape(-1, 1)
        ints = np.clip(np.rint(y.astype(np.float64)), -2.0**31, 2.0**31 - 1) + 0.0    # an int32 has no -0
        ints[np.isnan(y)] = 0.0
        halves = ints.astype(np.float16)           # to nearest even; 65520 and past: inf
        info = np.iinfo(dtype)
        out = np.clip(np.rint(halves.astype(np.float64)), info.min, info.max).astype(dtype)
    return y, ints, halves, out


@pytest.mark.parametrize("asym", [False, True])
def test_special_values_follow_numpy(make_kernels, asym):
    """NaN gives 0 (SaturationMode::ON's NaN, TCvt.hpp); +-inf and past int32 saturate to its
    ends, whose float16 is inf, so 127 / -128 (255 / 0 into uint8); 65519.5 rounds to 65520,
    whose float16 is inf (past 65504 + half an ulp); ties go to even (2.5 -> 2, -2.5 -> -2, 0.5 ->
    0, 127.5 -> 128 -> 127); -0.0 gives 0; a NaN or infinite scale or offset likewise, and an
    overflowing product is inf. dst's columns past its 13 valid ones keep the 7 loaded there."""
    out_dt = "uint8" if asym else "int8"
    mod = make_kernels(f'''
@pto.kernel
def k(S, P, O):
    with pto.vector():
        full = pto.alloc_tile(4, 32, pto.{out_dt}, loc=pto.Vec)
        d = pto.tsubview(full, 0, 0, 4, 32, valid=(4, 13))
        s = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, valid=(4, 13))
        sc = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, valid=(4, 1), layout=pto.ColMajor)
        of = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, valid=(4, 1), layout=pto.ColMajor)
        t = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
        pto.tload(full, O)
        pto.tload(s, S, stride=16)
        pto.tload(sc, P, layout=pto.DN)
        pto.tload(of, P + 8, layout=pto.DN)
        pto.tquant(d, s, sc, t{", offset=of" if asym else ""})
        pto.tstore(O, full)
''')
    row = [np.nan, np.inf, -np.inf, -0.0, 0.5, 2.5, -2.5, 127.5, 65519.5, 3e9, -3e9, 255.5, -129.0, 0, 0, 0]
    src = np.array([row, np.arange(16) * 16.0 - 100, np.arange(16) - 8.0, np.arange(16) * 7.25], np.float32)
    params = np.zeros(16, np.float32)
    params[:4] = [1.0, np.nan, np.inf, 3e38] if not asym else [1.0, 2.0, 1.0, 3e38]
    params[8:12] = [0.0, 0.0, 0.0, 0.0] if not asym else [0.0, np.nan, -np.inf, 1.0]
    out = pto.to_device(np.full((4, 32), 7, out_dt))
    pto.launch(mod.k, grid=(1,), args=(pto.to_device(src), pto.to_device(params), out))
    want = np.full((4, 32), 7, out_dt)
    want[:, :13] = numpy_quant(src[:, :13], params[:4], params[8:12] if asym else None, np.dtype(out_dt))[3]
    got = out.numpy()
    np.testing.assert_array_equal(got, want)
    hi, lo = (255, 0) if asym else (127, -128)
    assert got[0, 0] == 0 and got[0, 1] == hi and got[0, 2] == lo and got[0, 8] == hi
    if not asym:
        assert list(got[0, 3:8]) == [0, 0, 2, -2, 127] and (got[1, :13] == 0).all()


@pytest.mark.parametrize("asym", [False, True])
def test_src_and_tmp_hold_what_tquant_leaves_there(make_kernels, asym):
    """3 valid rows of 37 columns of 3 x 40 float32 tiles (PadColsSrc 48 halves: row r's float16s
    from word 24 r). src: the scaled values (+ offset), then row r's 37 float16s packed two to a
    word from word 24 r, low half first, the 19th word keeping its high half (the scaled value of
    element (0, 18), (1, 2), (1, 26)). tmp (loaded with 5.0): its first 64 words the vbrcb of the
    8 words of the ColMajor parameter column (scale's, offset's for INT8_ASYM: the last
    broadcast), then word 40 r + c the int32 of (r, c) as the float32 of its bits (the negative
    ones NaN patterns: NaN; a negative fraction is the int32 0, whose float16 is +0.0), so words
    37..39 keep the broadcast of word 4 and 117..119 the 5.0. The kernel is sync="auto": the
    stores of sf and t, before dst's, wait for TQUANT because its descriptor lists src and tmp as
    written."""
    mod = make_kernels(f'''
@pto.kernel
def k(S, P, T, O, SO, TO):
    with pto.vector():
        sf = pto.alloc_tile(3, 40, pto.float32, loc=pto.Vec)
        s = pto.tsubview(sf, 0, 0, 3, 40, valid=(3, 37))
        d = pto.alloc_tile(3, 64, pto.{"uint8" if asym else "int8"}, loc=pto.Vec, valid=(3, 37))
        scf = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        off = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        sc = pto.tsubview(scf, 0, 0, 8, 1, valid=(3, 1))
        of = pto.tsubview(off, 0, 0, 8, 1, valid=(3, 1))
        t = pto.alloc_tile(3, 40, pto.float32, loc=pto.Vec)
        pto.tload(sf, S)
        pto.tload(scf, P, layout=pto.DN)
        pto.tload(off, P + 8, layout=pto.DN)
        pto.tload(t, T)
        pto.tquant(d, s, sc, t{", offset=of" if asym else ""})
        pto.tstore(SO, sf)
        pto.tstore(TO, t)
        pto.tstore(O, d)
''')
    rng = np.random.default_rng(5)
    src = (rng.standard_normal((3, 40)) * 40).astype(np.float32)
    params = np.array([1.5, -2.25, 0.75, 11.0, 13.0, 17.0, 19.0, 23.0,
                       3.0, 100.0, -7.0, 29.0, 31.0, 37.0, 41.0, 43.0], np.float32)
    tmp0 = np.full((3, 40), 5.0, np.float32)
    dt = np.dtype("uint8" if asym else "int8")
    outs = [pto.to_device(np.zeros((3, 37), dt)), pto.to_device(np.zeros((3, 40), np.float32)),
            pto.to_device(np.zeros((3, 40), np.float32))]
    pto.launch(mod.k, grid=(1,), args=(pto.to_device(src), pto.to_device(params), pto.to_device(tmp0), *outs))
    y, ints, halves, q = numpy_quant(src[:, :37], params[:3], params[8:11] if asym else None, dt)
    want_src = src.copy()
    want_src[:, :37] = y
    packed = want_src.ravel().view(np.uint16)       # little-endian: a word's low half first
    for r in range(3):
        packed[48 * r:48 * r + 37] = halves[r].view(np.uint16)
    want_tmp = tmp0.ravel().copy()
    want_tmp[:64] = np.repeat(params[8:16] if asym else params[:8], 8)
    for r in range(3):
        want_tmp[40 * r:40 * r + 37] = ints[r].astype(np.int32).view(np.float32)
    got_q, got_src, got_tmp = (o.numpy() for o in outs)
    np.testing.assert_array_equal(got_q, q)
    np.testing.assert_array_equal(got_src.ravel(), want_src.ravel())
    np.testing.assert_array_equal(got_tmp.ravel(), want_tmp)
    negative = np.zeros(120, bool)
    for r in range(3):
        negative[40 * r:40 * r + 37] = ints[r] < 0
    assert negative.any() and np.isnan(got_tmp.ravel()[negative]).all()
    assert (got_tmp.ravel()[37:40] == params[12 if asym else 4]).all() and (got_tmp.ravel()[117:] == 5).all()


RACE = """
@pto.kernel(sync="manual")
def k(S, P, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)
            d = pto.alloc_tile(8, 32, pto.int8, loc=pto.Vec)
            p = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
            t = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)
            pto.tload(s, S)
            pto.tload(p, P, layout=pto.DN)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tquant(d, s, p, t)
            {flag}
            pto.tstore(O, {stored})
"""


@pytest.mark.parametrize("stored, flagged", [("s", False), ("t", False), ("s", True), ("t", True)])
def test_the_race_check_sees_src_and_tmp_written(make_kernels, stored, flagged):
    """TQUANT writes src and tmp as well as dst (the family's descriptor lists them): in a
    sync="manual" kernel a TSTORE of either on MTE3 with no flag from V after TQUANT races with
    it, and with the flag does not."""
    flag = FLAGS_OUT.strip() if flagged else ""
    kernel = make_kernels(RACE.format(stored=stored, flag=flag)).k
    args = (pto.to_device(np.ones((8, 32), np.float32)), pto.to_device(np.ones(8, np.float32)),
            pto.alloc_tensor(256 * 4, pto.float32))
    if flagged:
        pto.launch(kernel, grid=(1,), args=args, check="race")
        pto.sync()
    else:
        with pytest.raises(pto.RaceError, match="TQUANT"):
            pto.launch(kernel, grid=(1,), args=args, check="race")
            pto.sync()


def test_the_cost_is_three_conversions_a_row_expand_or_two_and_a_call_a_row(make_kernels):
    """latency_tables/ascend910b.toml, over src's valid rows x cols, a repeat 256 bytes of a
    float32 row: TQUANT head 112, 7 a repeat, 33 a row (a vconv_deq call) and 33 once when the
    columns are not a multiple of 64 (the masked call); TQUANT_ASYM head 156, 9 a repeat. 64 x
    128 (2 repeats a row): 112 + 128 x 7 + 64 x 33 = 3120, and 156 + 128 x 9 + 64 x 33 = 3420;
    2 x 129 (3 repeats a row, unaligned): 112 + 6 x 7 + 2 x 33 + 33 = 253, and 156 + 6 x 9 + 2
    x 33 + 33 = 309. A pipe_barrier between them leaves V idle, so each pays its head."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(64, 128, pto.float32, loc=pto.Vec)
            t = pto.alloc_tile(64, 128, pto.float32, loc=pto.Vec)
            d = pto.alloc_tile(64, 128, pto.int8, loc=pto.Vec)
            u = pto.alloc_tile(64, 128, pto.uint8, loc=pto.Vec)
            p = pto.alloc_tile(64, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
            q = pto.alloc_tile(64, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
            s2 = pto.alloc_tile(2, 136, pto.float32, loc=pto.Vec, valid=(2, 129))
            d2 = pto.alloc_tile(2, 160, pto.int8, loc=pto.Vec, valid=(2, 129))
            u2 = pto.alloc_tile(2, 160, pto.uint8, loc=pto.Vec, valid=(2, 129))
            p2 = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, valid=(2, 1), layout=pto.ColMajor)
            pto.tquant(d, s, p, t)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tquant(u, s, p, t, offset=q)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tquant(d2, s2, p2, t)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tquant(u2, s2, p2, t, offset=p2)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    assert [(e.inst, e.end - e.start) for e in prof.timeline if e.inst.startswith("TQUANT")] == \
        [("TQUANT", 3120), ("TQUANT_ASYM", 3420), ("TQUANT", 253), ("TQUANT_ASYM", 309)]


TILES = {"d": "pto.alloc_tile(8, 32, pto.int8, loc=pto.Vec)",
         "s": "pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)",
         "p": "pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)",
         "t": "pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)",
         "q": "pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)"}
SYM, ASYM = "pto.tquant(d, s, p, t)", "pto.tquant(d, s, p, t, offset=q)"
U8 = ("d", "pto.alloc_tile(8, 32, pto.uint8, loc=pto.Vec)")


@pytest.mark.parametrize("changes, call, message", [
    ([("s", "pto.alloc_tile(8, 32, pto.float16, loc=pto.Vec)")], SYM,
     "'s' holds float16 (\"Fix: Input has to be float 32\", include/pto/npu/a2a3/TQuant.hpp)"),
    ([U8], SYM, "'d' holds uint8 (\"Fix: Quant INT8 sym: Out data type has to be int8\""),
    ([], ASYM, "'d' holds int8 (\"Fix: Quant INT8 asym: Out data type has to be uint8\""),
    ([("p", "pto.alloc_tile(16, 1, pto.float16, loc=pto.Vec, layout=pto.ColMajor)")], SYM,
     "'p' holds float16 but 's' float32 (\"Fix: TROWEXPANDMUL src and dst data type is different!\", "
     "include/pto/npu/a2a3/TRowExpandMul.hpp)"),
    ([U8, ("q", "pto.alloc_tile(16, 1, pto.float16, loc=pto.Vec, layout=pto.ColMajor)")], ASYM,
     "'q' holds float16 but 's' float32 (\"Fix: TROWEXPANDADD src and dst data type is different!\", "
     "include/pto/npu/a2a3/TRowExpandAdd.hpp)"),
    ([("s", "pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec, layout=pto.ColMajor)")], SYM,
     "'s' is ColMajor (\"Fix: TROWEXPANDMUL Invalid tile shape.\""),
    ([("p", "pto.alloc_tile(8, 8, pto.float32, loc=pto.Vec, valid=(8, 1))")], SYM,
     "'p' is RowMajor (\"TROWEXPANDMUL: invalid src1 shape.\", include/pto/npu/a2a3/TRowExpandMul.hpp"),
    ([("p", "pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, valid=(4, 1), layout=pto.ColMajor)")], SYM,
     "'p' has 4 valid rows but 's' 8; A2/A3 asserts that the valid regions match (\"TROWEXPANDMUL: invalid "
     "src1 shape.\""),
    ([U8, ("q", "pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, valid=(4, 1), layout=pto.ColMajor)")], ASYM,
     "'q' has 4 valid rows but 's' 8; A2/A3 asserts that the valid regions match (\"TROWEXPANDADD: invalid "
     "src1 shape.\", include/pto/npu/a2a3/TRowExpandAdd.hpp"),
    ([("d", "pto.alloc_tile(8, 32, pto.int8, loc=pto.Vec, valid=(8, 31))")], SYM,
     "'d' has 31 valid columns but 's' 32; pypto_sim requires that the valid regions match (TQuant.hpp "
     "converts dst's valid region"),
    ([("t", "pto.alloc_tile(8, 32, pto.float16, loc=pto.Vec)")], SYM,
     "tmp 't' holds float16; pypto_sim models tmp as float32 words"),
    ([("t", "pto.alloc_tile(2, 32, pto.float32, loc=pto.Vec)")], SYM,
     "tmp 't' holds 64 words; TQuant.hpp needs 256: its int32 view over tmp is 's''s 8 x 32 (TileDataCvtS32)"),
    ([("t", "pto.tsubview(s, 0, 0, 8, 32)")], SYM, "src 's' and tmp 't' share words"),
    ([("d", "pto.alloc_tile(8, 32, pto.int8, loc=pto.Vec, valid=(8, 31))"),
      ("s", "pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec, valid=(8, 31))")], SYM, None),
    ([U8], ASYM, None),
])
def test_tquant_checks_are_compile_errors_at_the_line(make_kernels, changes, call, message):
    """TQuant.hpp's static_asserts, those of the TROWEXPANDMUL / TROWEXPANDADD it calls and their
    PTO_ASSERTs on the parameter column, and pypto_sim's rules (dst's valid region src's, a
    float32 tmp of its own words, large enough); the last two compile."""
    tiles = dict(TILES)
    tiles.update(changes)
    tiles_then_call(make_kernels, tiles, call, message)


def test_a_parameter_column_of_other_run_time_rows_stops_the_launch(make_kernels):
    """The parameter column's valid rows must be src's (TRowExpandMul.hpp's PTO_ASSERT): when
    one is known only at run time, a CHECK at the line."""
    mod = make_kernels('''
@pto.kernel
def k(A, n):
    with pto.vector():
        d = pto.alloc_tile(8, 32, pto.int8, loc=pto.Vec)
        s = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)
        p = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, valid=(n, 1), layout=pto.ColMajor)
        t = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)
        pto.tquant(d, s, p, t)
''')
    pto.launch(mod.k, grid=(1,), args=(pto.alloc_tensor(256), 8))
    pto.sync()
    with pytest.raises(pto.OutOfBoundsError, match=r"valid rows of 'p' == valid rows of 's' fails \(5 != 8\)") as info:
        pto.launch(mod.k, grid=(1,), args=(pto.alloc_tensor(256), 5))
        pto.sync()
    assert info.value.line is not None


def test_a_run_time_valid_region_past_the_tiles_stops_the_launch(make_kernels):
    """A valid region known only at run time must lie within the tiles (a constant one is
    checked by pto.alloc_tile): 9 rows of 8-row tiles, or 0 rows, stop the launch at the
    TQUANT's line before it would write past src and tmp into other tiles' words (the
    decode-time check every vector op has, isa/tile_roles.py walked_extents)."""
    mod = make_kernels('''
@pto.kernel
def k(A, n):
    with pto.vector():
        d = pto.alloc_tile(8, 32, pto.int8, loc=pto.Vec, valid=(n, 32))
        s = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec, valid=(n, 32))
        p = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, valid=(n, 1), layout=pto.ColMajor)
        t = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)
        pto.tquant(d, s, p, t)
''')
    pto.launch(mod.k, grid=(1,), args=(pto.alloc_tensor(256), 8))
    pto.sync()
    for n, message in ((9, r"TQUANT at line \d+ on AIV\d .*: the op of 9 x 32 does not fit tile 's' \(8 x 32\)"),
                       (0, r"TQUANT at line \d+ on AIV\d .*: the op of 0 x 32 on tile 's' is empty")):
        with pytest.raises(pto.OutOfBoundsError, match=message) as info:
            pto.launch(mod.k, grid=(1,), args=(pto.alloc_tensor(256), n))
            pto.sync()
        assert info.value.line is not None
