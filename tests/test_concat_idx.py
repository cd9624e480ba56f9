"""TCONCAT's index forms (isa/49_concat.toml TCONCAT_IDX, TCONCAT_DSTIDX; family tile_concat_idx)
as A2/A3 runs them (include/pto/npu/a2a3/TConcat.hpp TConcatIdx, lines 108-181): per row of dst's
valid rows, byte counts from column 0 of src0_idx's and src1_idx's rows (line 136-137: / sizeof
of the index dtype), clamped to dst's valid columns W (145-147); TCONCAT_DSTIDX writes
min(a + b, W) * sizeof(idx) into dst_idx's column 0 (139-143). pto-isa's on-device st suites
tests/npu/a2a3/src/st/testcase/tconcatidx and tconcatdstidx are ported case for case, as their
kernels write them: TLOAD of the whole source tiles (valid (vRows, vCols0) / (vRows, vCols1); the
index tiles the same), of dst (valid (vRows, dstTileW)) from the output, flag MTE2 -> V, TCONCAT,
flag V -> MTE3, TSTORE of dst (and dst_idx, valid (vRows, 1), at dstTileW's stride). gen_data.py
seeds np.random once (19) and draws the cases in order: each case's inputs uniform(-1000, 1000)
on the valid region, then its counts randint(1, vCols) * sizeof(idx) over the index tiles' valid
regions. main.cpp compares with ResultCmp at eps 0.001 (the output starts as zeros here, as the
golden takes the device's fresh buffer)."""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error_at
from ptoisa_st import FLAGS_IN, FLAGS_OUT, result_cmp, run_kernel

# TCONCATTest's TEST_Fs: (T, idx T, dst H x W, src0 H x W, src1 H x W, vRows, vCols0, vCols1)
IDX_CASES = {
    "case_int16_16x32_16x16_16x16_8x16_8x16": ("int16", "int16", 16, 32, 16, 16, 16, 16, 8, 16, 16),
    "case_int32_64x128_64x64_64x64_64x64_64x64": ("int32", "int16", 64, 128, 64, 64, 64, 64, 64, 64, 64),
    "case_half_16x256_16x128_16x128_16x128_16x128": ("float16", "int32", 16, 256, 16, 128, 16, 128, 16, 128, 128),
    "case_float_16x64_16x32_16x32_16x32_16x32": ("float32", "int16", 16, 64, 16, 32, 16, 32, 16, 32, 32),
    "case_int16_32x256_32x128_32x128_32x128_32x128": ("int16", "int16", 32, 256, 32, 128, 32, 128, 32, 128, 128),
    "case_int8_16x64_16x32_16x32_16x32_16x32": ("int8", "int16", 16, 64, 16, 32, 16, 32, 16, 32, 32),
}
# tconcatdstidx: the first five
DSTIDX_CASES = dict(list(IDX_CASES.items())[:5])

KERNEL = '''
@pto.kernel
def k(A, B, I0, I1, O{dio}):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile({s0h}, {s0w}, pto.{dt}, loc=pto.Vec, valid=({vr}, {c0}))
            b = pto.alloc_tile({s1h}, {s1w}, pto.{dt}, loc=pto.Vec, valid=({vr}, {c1}))
            d = pto.alloc_tile({dh}, {dw}, pto.{dt}, loc=pto.Vec, valid=({vr}, {dw}))
            i = pto.alloc_tile({s0h}, {s0w}, pto.{it}, loc=pto.Vec, valid=({vr}, {c0}))
            j = pto.alloc_tile({s1h}, {s1w}, pto.{it}, loc=pto.Vec, valid=({vr}, {c1}))
            {dia}
            pto.tload(a, A, stride={s0w})
            pto.tload(b, B, stride={s1w})
            pto.tload(d, O)
            pto.tload(i, I0, stride={s0w})
            pto.tload(j, I1, stride={s1w})
            {dil}
            {flags_in}
            {call}
            {flags_out}
            pto.tstore(O, d)
            {dis}
'''


def _source(case, dst_idx):
    dt, it, dh, dw, s0h, s0w, s1h, s1w, vr, c0, c1 = case
    pad = "\n" + " " * 12
    return KERNEL.format(
        dt=dt, it=it, dh=dh, dw=dw, s0h=s0h, s0w=s0w, s1h=s1h, s1w=s1w, vr=vr, c0=c0, c1=c1,
        flags_in=FLAGS_IN, flags_out=FLAGS_OUT, dio=", DI" if dst_idx else "",
        dia=f"e = pto.alloc_tile({dh}, {dw}, pto.{it}, loc=pto.Vec, valid=({vr}, 1))" if dst_idx else "",
        dil=f"pto.tload(e, DI, stride={dw})" if dst_idx else "",
        dis=f"pto.tstore(DI, e, stride={dw})" if dst_idx else "",
        call="pto.tconcat_dstidx(d, a, b, e, i, j)" if dst_idx else "pto.tconcat_idx(d, a, b, i, j)").replace(
            pad + pad, pad)


def _gen(cases, dst_idx):
    """gen_data.py's cases in order from one np.random.seed(19): inputs, counts, goldens."""
    rng = np.random.RandomState(19)
    out = {}
    for name, (dt, it, dh, dw, s0h, s0w, s1h, s1w, vr, c0, c1) in cases.items():
        isz = np.dtype(it).itemsize
        x0 = rng.uniform(-1000, 1000, size=(vr, c0)).astype(dt)
        x1 = rng.uniform(-1000, 1000, size=(vr, c1)).astype(dt)
        in0, in1 = np.zeros((s0h, s0w), dt), np.zeros((s1h, s1w), dt)
        in0[:vr, :c0], in1[:vr, :c1] = x0, x1
        i0, i1 = np.zeros((s0h, s0w), it), np.zeros((s1h, s1w), it)
        i0[:vr, :c0] = rng.randint(1, c0, size=(vr, c0)).astype(it) * isz
        i1[:vr, :c1] = rng.randint(1, c1, size=(vr, c1)).astype(it) * isz
        golden, gidx = np.zeros((dh, dw), dt), np.zeros((dh, dw), it)
        for r in range(vr):
            n0, n1 = i0[r, 0] // isz, i1[r, 0] // isz
            k0 = min(n0, dw)
            k1 = min(n1, max(dw - k0, 0))
            golden[r, :k0] = in0[r, :k0]
            golden[r, k0:k0 + k1] = in1[r, :k1]
            gidx[r, 0] = min(dw, n0 + n1) * isz
        out[name] = (in0, in1, i0, i1, golden, gidx)
    return out


IDX_DATA = _gen(IDX_CASES, False)
DSTIDX_DATA = _gen(DSTIDX_CASES, True)


@pytest.mark.parametrize("case", list(IDX_CASES))
def test_tconcatidx(make_kernels, case):
    """tconcatidx's golden at ResultCmp's eps 0.001, and word for word."""
    dt, _it, dh, dw = IDX_CASES[case][:4]
    in0, in1, i0, i1, golden, _ = IDX_DATA[case]
    out, = run_kernel(make_kernels(_source(IDX_CASES[case], False)).k, [in0, in1, i0, i1], [((dh, dw), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


@pytest.mark.parametrize("case", list(DSTIDX_CASES))
def test_tconcatdstidx(make_kernels, case):
    """tconcatdstidx's goldens (values and dst_idx) at ResultCmp's eps 0.001, and word for word."""
    dt, it, dh, dw = DSTIDX_CASES[case][:4]
    in0, in1, i0, i1, golden, gidx = DSTIDX_DATA[case]
    out, idx = run_kernel(make_kernels(_source(DSTIDX_CASES[case], True)).k, [in0, in1, i0, i1],
                          [((dh, dw), dt), ((dh, dw), it)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    assert result_cmp(gidx, idx, 0.001, compared=gidx.nbytes)
    np.testing.assert_array_equal(out, golden)
    np.testing.assert_array_equal(idx, gidx)


FAULT = '''
@pto.kernel
def k(A, I, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            i = pto.alloc_tile(4, 16, pto.int16, loc=pto.Vec)
            d = pto.alloc_tile(4, 32, pto.float32, loc=pto.Vec)
            pto.tload(a, A)
            pto.tload(i, I)
            pto.tconcat_idx(d, a, a, i, i)
            pto.tstore(O, d)
'''


def test_a_zero_count_is_an_error_at_the_line_naming_unit_and_row(make_kernels):
    """Row 2's count of 0: TConcatIdx would vcopy with repeat 0 - 1 (TConcat.hpp lines 148-156),
    far past the tile, so the run stops at the call's line on AIV0 before writing anything."""
    counts = np.full((4, 16), 8, np.int16)
    counts[2, 0] = 0
    mod = make_kernels(FAULT)
    with pytest.raises(pto.OutOfBoundsError) as err:
        run_kernel(mod.k, [np.ones((4, 16), np.float32), counts], [((4, 32), np.float32)])
    msg = str(err.value)
    assert "TCONCAT_IDX at line 12 on AIV0" in msg and "row 2 of 'i' counts 0 bytes, no src0 element" in msg


def test_a_count_past_one_repeat_that_the_rows_cannot_hold_is_an_error(make_kernels):
    """An int16 count word of 130 is 65 float32 elements (the word / sizeof(int16), line 136),
    two vcopy repeats, the last under a mask of the whole count (TConcat.hpp lines 148-160:
    SetContinuousMask of ceil(65 x 4 / 4)), so 128 elements move; dst's rows of 72 cannot hold
    them, and the run stops at the line before writing anything (it overwrote the next tile, or
    crashed past the unit's memory)."""
    mod = make_kernels(FAULT.replace("pto.alloc_tile(4, 16, pto.float32", "pto.alloc_tile(4, 128, pto.float32")
                       .replace("pto.alloc_tile(4, 32, pto.float32", "pto.alloc_tile(4, 72, pto.float32"))
    counts = np.zeros((4, 16), np.int16)
    counts[:, 0] = (8, 8, 130, 8)
    with pytest.raises(pto.OutOfBoundsError) as err:
        run_kernel(mod.k, [np.ones((4, 128), np.float32), counts], [((4, 72), np.float32)])
    assert "row 2 of 'i' counts 130 bytes of src0, past one 256-byte repeat" in str(err.value)


def test_counts_clamp_as_the_header_does(make_kernels):
    """src1's count is clamped to the columns src0's leaves of dst's 32 (line 147): int16 byte
    counts 40, 20, 36, 48 (20, 10, 18, 24 elements, src0's and src1's the same tile) give rows of
    20 + 12, 10 + 10, 18 + 14 (src1 element by element) and 24 + 8 (three whole blocks of src0:
    src1 by vcopy). tests/test_tile_differential.py takes negative and larger counts."""
    mod = make_kernels(FAULT.replace("pto.alloc_tile(4, 16, pto.float32", "pto.alloc_tile(4, 32, pto.float32"))
    counts = np.zeros((4, 16), np.int16)
    counts[:, 0] = (40, 20, 36, 48)
    a = 1 + np.arange(128, dtype=np.float32).reshape(4, 32)
    out, = run_kernel(mod.k, [a, counts], [((4, 32), np.float32)])
    want = np.zeros((4, 32), np.float32)
    for r, c in enumerate(counts[:, 0] // 2):
        n0 = min(int(c), 32)
        n1 = min(int(c), 32 - n0)
        want[r, :n0] = a[r, :n0]
        want[r, n0:n0 + n1] = a[r, :n1]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("tiles, message", [
    ("i = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)",
     "'i' holds float32; the counts take int32, int16, int8, uint32, uint16, uint8 (\"TCONCAT: Invalid data type "
     "of src0Idx.\""),
])
def test_tconcat_idx_checks_are_compile_errors_at_the_line(make_kernels, tiles, message):
    """TConcatIdxCheck's static_asserts (TConcat.hpp lines 183-218)."""
    call = "pto.tconcat_idx(d, a, a, i, i)"
    body = ("a = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(4, 32, pto.float32, "
            "loc=pto.Vec)\n" + tiles + "\n" + call)
    body = "\n".join(" " * 8 + line for line in body.split("\n"))
    mod = make_kernels("\n@pto.kernel\ndef bad(A):\n    with pto.vector():\n" + body + "\n")
    compile_error_at(mod.bad, (pto.alloc_tensor(256),), message, call)


def test_the_cost_is_vcopys_repeats_and_a_rows_flags(make_kernels):
    """latency_tables/ascend910b.toml TCONCAT_IDX on an idle V pipe: head 11 + 1 a 256-byte
    repeat of dst's rows x valid columns + 5 a row; 4 x 64 float32 (one repeat a row):
    11 + 4 + 20 = 35."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec)
            i = pto.alloc_tile(4, 8, pto.int32, loc=pto.Vec)
            d = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec)
            pto.texpands(i, 64)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tconcat_idx(d, a, a, i, i)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    assert [e.end - e.start for e in prof.timeline if e.inst == "TCONCAT_IDX"] == [35]
