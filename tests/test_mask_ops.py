"""Compare, select and triangle tiles on the AI core's vector cores (isa/41_mask.toml): TCMP and
TCMPS pack one predicate bit per element into a uint8 tile (bit c % 8 of byte c // 8 of the row,
pto-isa's CPU simulation layout, numpy's packbits(bitorder='little')); TSEL and TSELS pick by
those bits; TTRI writes numpy's tril / triu of ones. Values against numpy on special inputs,
the A2/A3 restrictions as compile errors (their costs: tests/test_cost_model.py)."""
import re
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from engine_compare import assert_engines_agree, tensors
from pypto_sim.errors import CompileError

ROWS, COLS = 16, 64
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 0.5, 3.0, -2.5, 1e-8, 65504.0],
                   np.float64)
MODES = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "gt": np.greater, "le": np.less_equal,
         "ge": np.greater_equal}

COMPARE = '''
@pto.kernel
def cmp(A, B, M):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Vec)
            b = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Vec)
            m = pto.alloc_tile({rows}, 32, pto.uint8, loc=pto.Vec)
            pto.tload(a, A)
            pto.tload(b, B)
            pto.texpands(m, 0)
            {call}
            pto.tstore(M, m)
'''


def _special_pairs(dt):
    """Every special value against every other, rows of COLS elements, rounded to dt."""
    a = np.repeat(SPECIAL, SPECIAL.size)
    b = np.tile(SPECIAL, SPECIAL.size)
    n = ROWS * COLS
    a = np.resize(a, n).reshape(ROWS, COLS)
    b = np.resize(b, n).reshape(ROWS, COLS)
    with np.errstate(over="ignore"):
        return a.astype(dt), b.astype(dt)


def _run_compare(make_kernels, dt, call, a, b):
    mod = make_kernels(COMPARE.format(rows=ROWS, cols=COLS, dt=dt, call=call))
    da, db = (pto.alloc_tensor(x.nbytes, getattr(pto, dt)) for x in (a, b))
    dm = pto.alloc_tensor(ROWS * 32, pto.uint8)
    pto.memcpy_h2d(da, a)
    pto.memcpy_h2d(db, b)
    pto.launch(mod.cmp, grid=(1,), args=(da, db, dm))
    got = np.empty((ROWS, 32), np.uint8)
    pto.memcpy_d2h(got, dm)
    return got


@pytest.mark.parametrize("dt", ["float32", "float16"])
@pytest.mark.parametrize("mode", list(MODES))
def test_tcmp_packs_ieee_comparisons_of_special_values(make_kernels, dt, mode):
    """NaN compares false in every mode but ne; -0.0 == +0.0; the 8 mask bytes of a 64-wide
    row are numpy's packbits in little bit order, the rest of the 32-byte row untouched."""
    a, b = _special_pairs(np.dtype(dt))
    got = _run_compare(make_kernels, dt, f'pto.tcmp(m, a, b, mode="{mode}")', a, b)
    with np.errstate(invalid="ignore"):
        want = np.packbits(MODES[mode](a, b), axis=1, bitorder="little")
    np.testing.assert_array_equal(got[:, :8], want)
    assert (got[:, 8:] == 0).all()


@pytest.mark.parametrize("mode", list(MODES))
def test_tcmps_compares_with_a_scalar(make_kernels, mode):
    a, b = _special_pairs(np.float32)
    got = _run_compare(make_kernels, "float32", f'pto.tcmps(m, a, 0.5, mode="{mode}")', a, b)
    with np.errstate(invalid="ignore"):
        want = np.packbits(MODES[mode](a, np.float32(0.5)), axis=1, bitorder="little")
    np.testing.assert_array_equal(got[:, :8], want)


def test_int32_tiles_compare_for_equality(make_kernels):
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 3, (ROWS, COLS)).astype(np.int32)
    b = rng.integers(-3, 3, (ROWS, COLS)).astype(np.int32)
    got = _run_compare(make_kernels, "int32", 'pto.tcmp(m, a, b, mode="eq")', a, b)
    np.testing.assert_array_equal(got[:, :8], np.packbits(a == b, axis=1, bitorder="little"))


SELECT = '''
@pto.kernel
def sel(A, B, Mask, O):
    with pto.vector():
        if pto.get_subblock_id() == 1:
            a = pto.alloc_tile({rows}, {cols}, pto.float32, loc=pto.Vec)
            b = pto.alloc_tile({rows}, {cols}, pto.float32, loc=pto.Vec)
            m = pto.alloc_tile({rows}, 32, pto.uint8, loc=pto.Vec)
            d = pto.alloc_tile({rows}, {cols}, pto.float32, loc=pto.Vec)
            pto.tload(a, A)
            pto.tload(b, B)
            pto.tload(m, Mask)
            {call}
            pto.tstore(O, d)
'''


@pytest.mark.parametrize("scalar", [False, True])
def test_tsel_and_tsels_pick_by_the_mask_bits(make_kernels, scalar):
    """Random mask bytes (bits past the row's 64 elements are ignored); NaN and -0.0 pass
    through a select unchanged."""
    rng = np.random.default_rng(2)
    a, b = (x.astype(np.float32) for x in _special_pairs(np.float32))
    mask = rng.integers(0, 256, (ROWS, 32)).astype(np.uint8)
    call = "pto.tsels(d, m, a, -float('inf'))" if scalar else "pto.tsel(d, m, a, b)"
    mod = make_kernels(SELECT.format(rows=ROWS, cols=COLS, call=call))
    da, db, do = (pto.alloc_tensor(a.nbytes, pto.float32) for _ in range(3))
    dm = pto.alloc_tensor(mask.nbytes, pto.uint8)
    for d, x in ((da, a), (db, b), (dm, mask)):
        pto.memcpy_h2d(d, x)
    pto.launch(mod.sel, grid=(1,), args=(da, db, dm, do))
    got = np.empty_like(a)
    pto.memcpy_d2h(got, do)
    bits = np.unpackbits(mask[:, :8], axis=1, bitorder="little").astype(bool)
    want = np.where(bits, a, np.float32(-np.inf) if scalar else b)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("diagonal, upper", [(0, False), (1, False), (-3, False), (0, True), (5, True)])
def test_ttri_is_numpys_tril_and_triu_of_ones(make_kernels, diagonal, upper):
    mod = make_kernels(f'''
@pto.kernel
def tri(O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile({ROWS}, {COLS}, pto.float16, loc=pto.Vec)
            pto.ttri(t, {diagonal}, upper={upper})
            pto.tstore(O, t)
''')
    out = pto.alloc_tensor(ROWS * COLS * 2, pto.float16)
    pto.launch(mod.tri, grid=(1,), args=(out,))
    got = np.empty((ROWS, COLS), np.float16)
    pto.memcpy_d2h(got, out)
    want = (np.triu if upper else np.tril)(np.ones((ROWS, COLS)), diagonal)
    np.testing.assert_array_equal(got, want)


def test_a_causal_mask_from_ttri_tcmps_and_tsels(make_kernels):
    """The masking step of causal attention: scores above the diagonal become -inf."""
    mod = make_kernels(f'''
@pto.kernel
def causal(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile({ROWS}, {COLS}, pto.float32, loc=pto.Vec)
            keep = pto.alloc_tile({ROWS}, {COLS}, pto.float32, loc=pto.Vec)
            m = pto.alloc_tile({ROWS}, 32, pto.uint8, loc=pto.Vec)
            pto.tload(s, S)
            pto.ttri(keep, 0)
            pto.tcmps(m, keep, 0.5, mode="gt")
            pto.tsels(s, m, s, -float("inf"))
            pto.tstore(O, s)
''')
    rng = np.random.default_rng(4)
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    ds, do = (pto.alloc_tensor(x.nbytes, pto.float32) for _ in range(2))
    pto.memcpy_h2d(ds, x)
    pto.launch(mod.causal, grid=(1,), args=(ds, do), check="race")
    got = np.empty_like(x)
    pto.memcpy_d2h(got, do)
    np.testing.assert_array_equal(got, np.where(np.tril(np.ones_like(x)) > 0, x, -np.inf))


@pytest.mark.parametrize("body, message", [
    ('i = pto.alloc_tile(16, 64, pto.int32, loc=pto.Vec)\n            pto.tcmp(m, i, i, mode="lt")',
     "int32 tiles compare only for 'eq' and 'ne'"),
    ('i = pto.alloc_tile(16, 64, pto.int32, loc=pto.Vec)\n            pto.tcmps(m, i, 3, mode="ge")',
     "int32 tiles compare only for 'eq' and 'ne'"),
    ('pto.tcmp(m, a, a, mode="less")', "mode must be one of"),
    ('w = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)\n            pto.tcmp(w, a, a)',
     "must be a uint8 tile"),
    ('n = pto.alloc_tile(4, 32, pto.uint8, loc=pto.Vec)\n            pto.tcmp(n, a, a)',
     "need 16 x 8 (one bit each)"),
    ('h = pto.alloc_tile(16, 64, pto.float16, loc=pto.Vec)\n            pto.tsel(a, m, a, h)',
     "holds float16"),
    ('u = pto.alloc_tile(16, 32, pto.uint8, loc=pto.Vec)\n            pto.ttri(u, 0)',
     "pto.ttri fills"),
    ('v = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec, valid=(16, 31))\n            pto.tsels(v, m, a, 1.0)',
     "TSels.hpp lines 64-65"),
    ('w = pto.alloc_tile(16, 128, pto.float32, loc=pto.Vec)\n            pto.tsel(w, m, a, a)',
     "'w' has 128 valid columns but 'a' has 64"),
])
def test_illegal_masks_are_compile_errors_at_the_line(make_kernels, body, message):
    src = f'''
@pto.kernel
def bad(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            m = pto.alloc_tile(16, 32, pto.uint8, loc=pto.Vec)
            {body}
'''
    mod = make_kernels(src)
    with pytest.raises(CompileError, match=re.escape(message)) as info:
        mod.bad.program_for((pto.alloc_tensor(4096),))
    culprit = body.split("\n")[-1].strip()            # the error names the offending statement's line
    assert Path(info.value.file).read_text().splitlines()[info.value.line - 1].strip() == culprit


def test_article_tiles_get_a_clear_error(make_kernels):
    mod = make_kernels('''
@pto.kernel
def old(A):
    t = pto.alloc_local(64)
    pto.tcmp(t, t, t)
''')
    with pytest.raises(CompileError, match="typed tiles of pto.alloc_tile"):
        mod.old.program_for((pto.alloc_tensor(4096),))


def test_int32_tiles_compare_for_equality_and_inequality(make_kernels):
    """A2/A3 compares int32 tiles with vcmpv_eq and inverts the result with vnot for NE
    (pto-isa include/pto/npu/a2a3/TCmp.hpp): a = [0, 1, ..., 63] per row against b = a with
    every third element changed gives eq bits where c % 3 != 0 and ne bits where c % 3 == 0;
    tcmps(a, 5) in ne mode is set everywhere but column 5."""
    mod = make_kernels('''
@pto.kernel
def cmp(A, B, EQ, NE, NES):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec)
            b = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec)
            eq = pto.alloc_tile(2, 32, pto.uint8, loc=pto.Vec)
            ne = pto.alloc_tile(2, 32, pto.uint8, loc=pto.Vec)
            nes = pto.alloc_tile(2, 32, pto.uint8, loc=pto.Vec)
            pto.tload(a, A)
            pto.tload(b, B)
            pto.tcmp(eq, a, b, mode="eq")
            pto.tcmp(ne, a, b, mode="ne")
            pto.tcmps(nes, a, 5, mode="ne")
            pto.tstore(EQ, eq)
            pto.tstore(NE, ne)
            pto.tstore(NES, nes)
''')
    a = np.tile(np.arange(64, dtype=np.int32), (2, 1))
    b = np.where(np.arange(64) % 3 == 0, a + 7, a).astype(np.int32)
    da, db = pto.alloc_tensor(a.nbytes, pto.int32), pto.alloc_tensor(b.nbytes, pto.int32)
    outs = [pto.alloc_tensor(2 * 32, pto.uint8) for _ in range(3)]
    pto.memcpy_h2d(da, a)
    pto.memcpy_h2d(db, b)
    pto.launch(mod.cmp, grid=(1,), args=(da, db, *outs))
    got = []
    for t in outs:
        host = np.empty((2, 32), np.uint8)
        pto.memcpy_d2h(host, t)
        got.append(np.unpackbits(host[:, :8], axis=1, bitorder="little").astype(bool))
    cols = np.arange(64)
    np.testing.assert_array_equal(got[0], np.tile(cols % 3 != 0, (2, 1)))
    np.testing.assert_array_equal(got[1], np.tile(cols % 3 == 0, (2, 1)))
    np.testing.assert_array_equal(got[2], np.tile(cols != 5, (2, 1)))


NARROW_SELECT = """
@pto.kernel
def narrow(Mask, X, O0, O1):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            m = pto.alloc_tile(2, 32, pto.uint8, loc=pto.Vec)
            x = pto.alloc_tile(2, 128, pto.float32, loc=pto.Vec, valid=(2, 31))
            y = pto.alloc_tile(3, 64, pto.float32, loc=pto.Vec, valid=(2, 31))
            d = pto.alloc_tile(2, 32, pto.float32, loc=pto.Vec, valid=(2, 31))
            e = pto.alloc_tile(2, 40, pto.float32, loc=pto.Vec, valid=(2, 31))
            pto.tload(m, Mask)
            pto.tload(x, X, stride=128)
            pto.texpands(y, -1.0)
            pto.tsels(d, m, x, 7.0)
            pto.tsel(e, m, x, y)
            pto.tstore(O0, d, stride=32)
            pto.tstore(O1, e, stride=40)
"""


def test_select_over_a_narrow_valid_region_reads_each_tile_at_its_row_stride(make_kernels):
    """TSEL / TSELS cover dst's valid region (2 x 31), each tile at its own RowStride (TSel.hpp
    lines 48-59, TSels.hpp lines 36-45): x is 2 x 128 (row 1 starts 128 words on), y 3 x 64, d
    2 x 32, e 2 x 40. Mask bytes 0x55 set the even columns: d[r, c] = x[r, c] for even c < 31,
    else 7; e[r, c] = x[r, c] for even c, else y's -1. Both engines give the same run."""
    mod = make_kernels(NARROW_SELECT)
    x = np.arange(256, dtype=np.float32).reshape(2, 128)
    args = tensors(np.full((2, 32), 0x55, np.uint8), x, np.zeros((2, 32), np.float32), np.zeros((2, 40), np.float32))
    assert_engines_agree(mod.narrow, tuple(args), (1, 1, 1), (32, 1, 1))
    pto.launch(mod.narrow, grid=(1,), args=tuple(args), check=("sync", "race"))
    got_d, got_e = np.empty((2, 32), np.float32), np.empty((2, 40), np.float32)
    pto.memcpy_d2h(got_d, args[2])
    pto.memcpy_d2h(got_e, args[3])
    even = np.arange(31) % 2 == 0
    np.testing.assert_array_equal(got_d[:, :31], np.where(even, x[:, :31], 7.0))
    np.testing.assert_array_equal(got_e[:, :31], np.where(even, x[:, :31], -1.0))
    assert not got_d[:, 31:].any() and not got_e[:, 31:].any()      # past the valid region: GM untouched
