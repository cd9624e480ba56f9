"""Broadcast, index and layout tile instructions on the real AI core, end to end against numpy:
a tiny kernel per instruction, loaded from GM, computed on a vector core, stored back
(their kernels against the reference executor: tests/test_tile_differential.py; their costs:
tests/test_cost_model.py)."""
import numpy as np
import pytest

import pypto_sim as pto


def run(make_kernels, source, inputs, out_shape, out_dtype):
    """Compile `source` (a kernel k(X, O)), copy `inputs` in, launch one block, return O."""
    mod = make_kernels(source)
    x = pto.alloc_tensor(inputs.nbytes, getattr(pto, inputs.dtype.name))
    pto.memcpy_h2d(x, inputs)
    o = pto.alloc_tensor(int(np.prod(out_shape)) * np.dtype(out_dtype).itemsize, getattr(pto, np.dtype(out_dtype).name))
    pto.launch(mod.k, grid=(1,), args=(x, o), check="all")
    pto.sync()
    got = np.empty(out_shape, out_dtype)
    pto.memcpy_d2h(got, o)
    return got


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
    with pytest.raises(pto.CompileError, match=r"tcolexpand: 's' has 8 columns but 'd' has 16"):
        make_kernels('''
@pto.kernel
def k(X, O):
    with pto.vector():
        s = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
        d = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
        pto.tcolexpand(d, s)
''').k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))


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
    becomes the pad; a full-tile tadds then reads every element back out."""
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
            pto.tadds(d, t, 0)
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
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(f'''
@pto.kernel
def k(X, O):
    with pto.vector():
        s = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
        d = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
        {call}
''').k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))
