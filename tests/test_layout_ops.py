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
