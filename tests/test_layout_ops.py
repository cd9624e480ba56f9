"""Broadcast, index and layout tile instructions on the real AI core, end to end against numpy:
a tiny kernel per instruction, loaded from GM, computed on a vector core, stored back
(their kernels against the reference executor: tests/test_tile_differential.py; their costs:
tests/test_cost_model.py)."""
import re
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.errors import CompileError

from aicore_runs import compile_error, run


@pytest.mark.parametrize("dt", ["float32", "float16", "int32"])
def test_tcolexpand_copies_the_first_row_down_every_row(make_kernels, dt):
    """dst[r, c] = src[0, c]; src may be taller than one row (only row 0 is read)."""
    src = (np.arange(4 * 16) - 20).reshape(4, 16).astype(dt)
    got = run(make_kernels, f'''
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(4, 16, pto.{dt}, loc=pto.Vec)
            d = pto.alloc_tile(8, 16, pto.{dt}, loc=pto.Vec)
            pto.tload(s, X)
            pto.tcolexpand(d, s)
            pto.tstore(O, d)
''', src, (8, 16), dt)
    np.testing.assert_array_equal(got, np.broadcast_to(src[0], (8, 16)))


def test_tcolexpand_names_a_column_mismatch(make_kernels):
    compile_error(make_kernels, '''
s = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
d = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
pto.tcolexpand(d, s)
''', r"tcolexpand: 's' has 8 columns but 'd' has 16")


def test_tfillpad_expand_pads_a_partial_tile_with_minus_infinity(make_kernels):
    """The flash-attention tail block: a 5 x 10 valid region of an 8 x 16 tile, padded into
    a 16 x 32 tile with PadValue::Min (-inf), so a row max or exp over the whole tile ignores
    the padding; only the valid region of the source is read."""
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16) / 7
    got = run(make_kernels, '''
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec, valid=(5, 10))
            d = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
            pto.tload(s, X, stride=16)
            pto.tfillpad_expand(d, s, pad="min")
            pto.tstore(O, d)
''', x, (16, 32), np.float32)
    want = np.full((16, 32), -np.inf, np.float32)
    want[:5, :10] = x[:5, :10]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt, pad, fill", [("int32", "max", np.iinfo(np.int32).max),
                                           ("float16", "zero", 0.0), ("float16", "max", np.inf)])
def test_tfillpad_inplace_writes_the_pad_outside_the_valid_region(make_kernels, dt, pad, fill):
    """In place, the valid 3 x 5 corner keeps the loaded values and the rest of the 4 x 16 tile
    becomes the pad; a tadds through a full-tile view (treshape: its valid region is its
    shape, and A2/A3 wants the valid regions of dst and src to match) reads every element back."""
    x = (np.arange(4 * 16) - 9).reshape(4, 16).astype(dt)
    got = run(make_kernels, f'''
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(4, 16, pto.{dt}, loc=pto.Vec, valid=(3, 5))
            d = pto.alloc_tile(4, 16, pto.{dt}, loc=pto.Vec)
            pto.tload(t, X, stride=16)
            pto.tfillpad_inplace(t, pad="{pad}")
            pto.tadds(d, pto.treshape(t, 4, 16), 0)
            pto.tstore(O, d)
''', x, (4, 16), dt)
    want = np.full((4, 16), fill, dt)
    want[:3, :5] = x[:3, :5]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("call, message", [
    ("pto.tfillpad(d, s)", r"tfillpad: 'd' is 16 x 32 but 's' is 8 x 16"),
    ("pto.tfillpad_expand(s, d)", r"tfillpad_expand: 's' \(8 x 16\) must be at least as large as 'd'"),
    ('pto.tfillpad_expand(d, s, pad="nan")', r"pad must be one of 'zero', 'min', 'max'"),
])
def test_tfillpad_shape_and_pad_errors_name_the_tiles(make_kernels, call, message):
    compile_error(make_kernels, f'''
s = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
d = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
{call}
''', message)


# ---------------------------------------------------------------- views: treshape, tsubview
def test_views_share_their_tiles_words(make_kernels):
    """tsubview(t, 2, 0, 2, 16) is t's last two rows and treshape(t, 8, 8) all of t as 8 x 8:
    an add through the window shows in t, and a row sum through the reshape sums t's words
    eight at a time (auto sync orders them by the words they share)."""
    x = np.arange(64, dtype=np.float32)
    got = run(make_kernels, '''
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            pto.tload(t, X)
            low = pto.tsubview(t, 2, 0, 2, 16)
            pto.tadds(low, low, 100.0)
            r = pto.treshape(t, 8, 8)
            col = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
            pto.trowsum(col, r)
            pto.tstore(O, t)
            pto.tstore(O + 64, col)
''', x, (72,), np.float32)
    want = x.copy()
    want[32:] += 100
    np.testing.assert_array_equal(got[:64], want)
    np.testing.assert_array_equal(got[64:], want.reshape(8, 8).sum(axis=1))


def test_treshape_turns_a_row_into_a_column(make_kernels):
    """TCOLSUM leaves one value per column in a 1 x 16 row; seen as a 16 x 1 ColMajor column it
    feeds TROWEXPANDSUB (x - the column sums of x^T, row by row)."""
    x = np.arange(256, dtype=np.float32).reshape(16, 16) / 16
    got = run(make_kernels, '''
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
            s = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
            pto.tload(t, X)
            pto.tcolsum(s, t)
            c = pto.treshape(s, 16, 1, layout=pto.ColMajor)
            pto.trowexpandsub(t, t, c)
            pto.tstore(O, t)
''', x, (16, 16), np.float32)
    sums = np.add.accumulate(x.astype(np.float32), axis=0)[-1]
    np.testing.assert_array_equal(got, x - sums[:, None])


def test_a_narrow_window_takes_loads_fills_and_pads(make_kernels):
    """The right half of a 4 x 16 tile (tsubview(t, 0, 8, 4, 8), rows 16 words apart) takes a
    4 x 8 load; tfillpad_expand reads it with that pitch into a 8 x 16 tile padded with 0."""
    x = np.arange(32, dtype=np.float32) + 1
    got = run(make_kernels, '''
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            d = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
            pto.texpands(t, -1.0)
            w = pto.tsubview(t, 0, 8, 4, 8)
            pto.tload(w, X)
            pto.tfillpad_expand(d, w)
            pto.tstore(O, t)
            pto.tstore(O + 64, d)
''', x, (64 + 128,), np.float32)
    t = np.full((4, 16), -1.0, np.float32)
    t[:, 8:] = x.reshape(4, 8)
    d = np.zeros((8, 16), np.float32)
    d[:4, :8] = x.reshape(4, 8)
    np.testing.assert_array_equal(got[:64], t.ravel())
    np.testing.assert_array_equal(got[64:], d.ravel())


def test_a_window_with_a_valid_width_loads_and_stores_rows_of_that_width(make_kernels):
    """tsubview(t, 0, 0, 4, 16, valid=(4, n)) is t with n valid columns (a Tile whose ValidCol is
    dynamic): with n = 15 a TLOAD moves 4 rows of 15 float16 (30 bytes, not a multiple of 32)
    from a GM matrix of pitch 17 into t's rows (32 bytes apart), leaving column 15 as it was
    (-1), and a TSTORE of the window writes 4 x 15 halves back at pitch 15."""
    x = np.arange(4 * 17, dtype=np.float16)
    got = run(make_kernels, '''
@pto.kernel
def k(X, O, n):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(4, 16, pto.float16, loc=pto.Vec)
            pto.texpands(t, -1.0)
            w = pto.tsubview(t, 0, 0, 4, 16, valid=(4, n))
            pto.tload(w, X, stride=17)
            pto.tstore(O, t)
            pto.tstore(O + 64, w, stride=n)
''', x, (64 + 60,), np.float16, extra=(15,))
    t = np.full((4, 16), -1.0, np.float16)
    t[:, :15] = x.reshape(4, 17)[:, :15]
    np.testing.assert_array_equal(got[:64], t.ravel())
    np.testing.assert_array_equal(got[64:], x.reshape(4, 17)[:, :15].ravel())


def test_views_do_not_count_against_the_space_twice(make_kernels):
    """Two 96 KiB tiles fill the 192 KiB UB exactly; views of them take no memory of their own."""
    mod = make_kernels('''
@pto.kernel
def k(X, O):
    with pto.vector():
        a = pto.alloc_tile(96, 256, pto.float32, loc=pto.Vec)
        b = pto.alloc_tile(96, 256, pto.float32, loc=pto.Vec)
        a2 = pto.treshape(a, 192, 128)
        b2 = pto.tsubview(b, 0, 0, 48, 256)
        pto.texpands(a2, 1.0)
        pto.texpands(b2, 2.0)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64), pto.alloc_tensor(64)))
    assert [e.inst for e in prof.timeline if e.warp == 1].count("TEXPANDS") == 2


RACY = '''
@pto.kernel(sync="manual")
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            top = pto.tsubview(t, 0, 0, 2, 16)
            low = pto.tsubview(t, 2, 0, 2, 16)
            pto.tload(top, X)
            {sync}
            pto.tadds({target}, {target}, 1.0)
'''


@pytest.mark.parametrize("target, sync, races", [
    ("t", "", True),            # the load wrote t's first rows through the window
    ("top", "", True),
    ("low", "", False),         # other rows of the same tile: no shared element
    ("t", "pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)\n            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)",
     False),
])
def test_racecheck_compares_views_by_the_elements_they_share(make_kernels, target, sync, races):
    """In manual sync a TLOAD (MTE2) into a window and a TADDS (V) without a flag between them
    race exactly when their elements overlap, whichever view of the tile each one names."""
    mod = make_kernels(RACY.format(target=target, sync=sync))
    _launch_racing_or_not(mod.k, races, r"read-after-write")


def _launch_racing_or_not(kernel, races, message):
    """kernel under check="race": a RaceError matching message when races, else a clean run."""
    args = (pto.alloc_tensor(256), pto.alloc_tensor(256))
    if races:
        with pytest.raises(pto.RaceError, match=message):
            pto.launch(kernel, grid=(1,), args=args, check="race")
            pto.sync()
    else:
        pto.launch(kernel, grid=(1,), args=args, check="race")
        pto.sync()


VALID_RACY = '''
@pto.kernel(sync="manual")
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, valid=(2, 16))
            u = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, valid=(2, 16))
            low = pto.tsubview(t, 2, 0, 2, 16)
            pto.tload(t, X)
            pto.tadds({target}, {source}, 1.0)
'''


@pytest.mark.parametrize("target, source, races", [
    ("u", "t", True),                         # reads t's valid rows, which the load writes
    ("u", "low", False),                      # rows 2..3: the load of the valid region skips them
    ("low", "low", False),
    ("t", "t", True),                         # reads and writes t's valid rows, which the load writes
])
def test_racecheck_compares_what_each_op_covers_its_valid_region(make_kernels, target, source, races):
    """A TLOAD into a tile with valid=(2, 16) writes its first two rows only, and a TADDS covers
    its dst's valid region: without a flag, a V op on rows 2..3 does not race with the load
    (it was reported, as racecheck compared whole tiles); one on rows 0..1 does."""
    mod = make_kernels(VALID_RACY.format(target=target, source=source))
    _launch_racing_or_not(mod.k, races, r"race on tile 't'")


@pytest.mark.parametrize("call, message", [
    ("pto.treshape(t, 8, 16)", r"treshape of 't' \(4 x 16\) into 8 x 16: 128 elements, but the tile holds 64"),
    ("pto.tsubview(t, 3, 0, 2, 16)", r"the window reaches past the tile"),
    ("pto.tsubview(t, 0, 4, 4, 8)", r"starts 16 bytes into the tile, not a multiple of 32"),
    ("pto.tadds(pto.tsubview(t, 0, 8, 4, 8), t, 1.0)", r"is a 4 x 8 window whose rows are 16 elements apart"),
    ("pto.tsubview(t, 0, 0, 4, 16, valid=(4, 17))", r"valid cols 17 is outside 1..16"),
    ("pto.treshape(t, 8, 8, valid=(8, 7))", r"pto.treshape\(.*\) takes no valid="),
])
def test_view_errors_name_the_tile_and_the_rule(make_kernels, call, message):
    compile_error(make_kernels, f'''
t = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
{call}
''', message)


# ---------------------------------------------------------------- index reductions
def test_argmax_and_argmin_of_rows_and_columns_match_numpy(make_kernels):
    """Greedy decoding's step: the index of each row's largest logit, and the other three;
    small integers make ties, where the first index wins (numpy's argmax / argmin)."""
    x = np.random.default_rng(9).integers(-3, 4, (16, 64)).astype(np.float32)
    got = run(make_kernels, '''
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            rmax = pto.alloc_tile(16, 1, pto.int32, loc=pto.Vec, layout=pto.ColMajor)
            rmin = pto.alloc_tile(16, 1, pto.int32, loc=pto.Vec, layout=pto.ColMajor)
            cmax = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)
            cmin = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)
            pto.tload(t, X)
            pto.trowargmax(rmax, t)
            pto.trowargmin(rmin, t)
            pto.tcolargmax(cmax, t)
            pto.tcolargmin(cmin, t)
            pto.tstore(O, rmax)
            pto.tstore(O + 16, rmin)
            pto.tstore(O + 32, cmax)
            pto.tstore(O + 96, cmin)
''', x, (160,), np.int32)
    np.testing.assert_array_equal(got[:16], x.argmax(axis=1))
    np.testing.assert_array_equal(got[16:32], x.argmin(axis=1))
    np.testing.assert_array_equal(got[32:96], x.argmax(axis=0))
    np.testing.assert_array_equal(got[96:], x.argmin(axis=0))


def test_an_index_reduction_names_a_wrong_index_tile(make_kernels):
    compile_error(make_kernels, '''
t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
c = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
pto.trowargmax(c, t)
''', r"trowargmax: the index tile 'c' must be int32 or uint32, not float32")


def test_an_index_reduction_on_the_articles_tiles_names_the_ai_core(make_kernels):
    """pto.alloc_local tiles have no typed shape to reduce by (this was a KeyError before)."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    t = pto.alloc_local(64, pto.float32)
    i = pto.alloc_local(64, pto.int32)
    pto.trowargmax(i, t)
''')
    with pytest.raises(CompileError, match=re.escape("pto.trowargmax works on typed tiles of "
                                                     "pto.alloc_tile (an AI-core kernel)")) as info:
        mod.k.program_for((pto.alloc_tensor(256),))
    assert Path(info.value.file).read_text().splitlines()[info.value.line - 1].strip() == "pto.trowargmax(i, t)"


# ---------------------------------------------------------------- transpose
def test_ttrans_transposes_the_valid_region(make_kernels):
    """A 5 x 16 valid region of an 8 x 16 tile lands transposed in a 16 x 8 tile; what lies
    outside the transposed region keeps the fill."""
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    got = run(make_kernels, '''
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec, valid=(5, 16))
            d = pto.alloc_tile(16, 8, pto.float32, loc=pto.Vec)
            pto.texpands(d, -1.0)
            pto.tload(s, X)
            pto.ttrans(d, s)
            pto.tstore(O, d)
''', x, (16, 8), np.float32)
    want = np.full((16, 8), -1.0, np.float32)
    want[:, :5] = x[:5].T
    np.testing.assert_array_equal(got, want)


def test_ttrans_names_a_destination_too_small(make_kernels):
    compile_error(make_kernels, '''
s = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
d = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
pto.ttrans(d, s)
''', r"ttrans: 'd' is 8 x 16 but the transpose of 's''s 8 x 16 valid region needs 16 x 8")


def test_ttrans_needs_a_destination_of_the_valid_regions_transpose(make_kernels):
    """A2/A3 writes validCol rows of validRow elements in whole 32-byte blocks (TTrans.hpp): a
    3 x 8 float32 source of valid (3, 5) goes into a 5 x 8 dst (5 rows of 3 elements, one
    8-element block each), which the tile shapes' 8 x 3 refused; a 4 x 8 dst is one row short."""
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    got = run(make_kernels, '''
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(3, 8, pto.float32, loc=pto.Vec, valid=(3, 5))
            d = pto.alloc_tile(5, 8, pto.float32, loc=pto.Vec)
            pto.texpands(d, -1.0)
            pto.tload(s, X, stride=8)
            pto.ttrans(d, s)
            pto.tstore(O, d)
''', x, (5, 8), np.float32)
    want = np.full((5, 8), -1.0, np.float32)
    want[:, :3] = x[:, :5].T
    np.testing.assert_array_equal(got, want)
    compile_error(make_kernels, '''
s = pto.alloc_tile(3, 8, pto.float32, loc=pto.Vec, valid=(3, 5))
d = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)
pto.ttrans(d, s)
''', r"ttrans: 'd' is 4 x 8 but the transpose of 's''s 3 x 5 valid region needs 5 x 8")
