"""Tensor views: `d[off:off + n]` passes n elements of d to a kernel as a tensor of its own."""
import numpy as np
import pytest

import pypto_sim as pto


@pto.kernel
def add_one(a, n):
    i = pto.get_global_id()
    if i < n:
        a[i] = a[i] + 1.0


@pto.kernel
def touch(a, k):
    if pto.get_global_id() == 0:
        a[k] = 7.0


def _tensor(host):
    d = pto.alloc_tensor(host.nbytes, dtype=host.dtype)
    pto.memcpy_h2d(d, host)
    return d


def test_a_view_is_a_kernel_argument_starting_at_its_offset():
    x = np.arange(100, dtype=np.float32)
    d = _tensor(x)
    pto.launch(add_one, grid=(1, 1, 1), block=(32, 1, 1), args=(d[10:30], 20))
    want = x.copy()
    want[10:30] += 1
    np.testing.assert_array_equal(d.numpy(), want)
    np.testing.assert_array_equal(d[10:30].numpy(), want[10:30])


def test_views_of_float16_keep_byte_addresses():
    """Element 0 of h[6:] sits 12 bytes into h (the timing model counts sectors by bytes)."""
    h = _tensor(np.zeros(64, np.float16))
    view = h[6:]
    assert view.alloc.byte_addr == h.alloc.byte_addr + 12 and len(view) == 58
    pto.launch(add_one, grid=(1, 1, 1), block=(64, 1, 1), args=(view, 58))
    np.testing.assert_array_equal(h.numpy(), np.r_[np.zeros(6), np.ones(58)].astype(np.float16))


def test_a_view_bounds_the_kernel():
    d = _tensor(np.zeros(64, np.float32))
    with pytest.raises(pto.OutOfBoundsError, match=r"16 elements"):
        pto.launch(touch, grid=(1, 1, 1), block=(32, 1, 1), args=(d[8:24], 16))
        pto.sync()
    assert (d.numpy() == 0).all()


def test_memcpy_into_a_view_and_views_of_views():
    d = _tensor(np.zeros(32, np.float32))
    pto.memcpy_h2d(d[4:8], np.array([1, 2, 3, 4], np.float32))
    np.testing.assert_array_equal(d[2:10][2:6].numpy(), [1, 2, 3, 4])
    with pytest.raises(pto.LaunchError):
        pto.memcpy_h2d(d[4:8], np.zeros(5, np.float32))


def test_freeing_the_viewed_tensor_while_a_kernel_uses_the_view_is_reported():
    d = _tensor(np.zeros(64, np.float32))
    view = d[0:32]
    pto.launch(add_one, grid=(1, 1, 1), block=(32, 1, 1), args=(view, 32))
    d.free()
    with pytest.raises(pto.UseAfterFreeError):
        pto.sync()


def test_bad_views_are_clear_errors():
    d = _tensor(np.zeros(8, np.float32))
    with pytest.raises(ValueError, match="step 1"):
        d[::2]
    with pytest.raises(TypeError, match="slice"):
        d[3]
    with pytest.raises(TypeError, match="owns no memory"):
        d[1:3].free()


# ---------------------------------------------------------------- 2-D tensors and strided views
@pto.kernel
def add_rc(a, rows, cols):
    i = pto.get_global_id()
    r = i // cols
    c = i % cols
    if r < rows:
        a[r, c] = a[r, c] + 100 * r + c


def test_a_2d_view_is_indexed_by_row_and_column_in_the_kernel():
    """d[1:3, 2:5] of a 4 x 6 zero tensor: the kernel adds 100 r + c to view element (r, c),
    which is d[1 + r, 2 + c]. So d[1, 2:5] = 0, 1, 2 and d[2, 2:5] = 100, 101, 102, and
    nothing else changes. The view reads back as its 2 x 3 elements."""
    d = pto.to_device(np.zeros((4, 6), np.int32))
    v = d[1:3, 2:5]
    assert (v.shape, v.row_stride, v.name) == ((2, 3), 6, "d[1:3, 2:5]")
    pto.launch(add_rc, grid=(1,), block=(32,), args=(v, 2, 3))
    want = np.zeros((4, 6), np.int32)
    want[1, 2:5], want[2, 2:5] = [0, 1, 2], [100, 101, 102]
    np.testing.assert_array_equal(d.numpy(), want)
    np.testing.assert_array_equal(v.numpy(), [[0, 1, 2], [100, 101, 102]])
    assert "a: int32* (2-D, rows 6 apart)" in add_rc.asm(args=(v, 2, 3))


def test_a_whole_2d_tensor_and_a_view_of_a_view():
    """to_device of a 3 x 4 array is a 2-D tensor: add_rc over all of it adds 100 r + c to
    arange(12) reshaped. d[1:3, 1:4][1:2, 0:2] is d[2:3, 1:3] (rows 4 apart): it adds 0 and 1
    to d[2, 1] = 9 + 201 and d[2, 2] = 10 + 202."""
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    d = pto.to_device(host)
    pto.launch(add_rc, grid=(1,), block=(32,), args=(d, 3, 4))
    rc = 100 * np.arange(3)[:, None] + np.arange(4)
    np.testing.assert_array_equal(d.numpy(), host + rc)
    inner = d[1:3, 1:4][1:2, 0:2]
    assert inner.shape == (1, 2) and inner.origin == (2, 1)
    assert inner.name.endswith("[2:3, 1:3]")         # named by d's rows and columns
    pto.launch(add_rc, grid=(1,), block=(32,), args=(inner, 1, 2))
    np.testing.assert_array_equal(d.numpy()[2, 1:3], [9 + 201 + 0, 10 + 202 + 1])


def test_a_row_slice_of_a_2d_tensor_is_its_rows_as_numpys():
    """d[1:3] of a 3 x 4 tensor is rows 1 and 2, as numpy's host[1:3] (it was elements 1 and 2
    of the flat storage): d[1:3, :]'s view, whose kernel adds 100 r + c to rows 1 and 2 only."""
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    d = pto.to_device(host)
    rows = d[1:3]
    assert rows.shape == (2, 4) and rows.origin == (1, 0)
    np.testing.assert_array_equal(rows.numpy(), host[1:3])
    pto.launch(add_rc, grid=(1,), block=(32,), args=(rows, 2, 4))
    want = host.copy()
    want[1:3] += 100 * np.arange(2)[:, None] + np.arange(4)
    np.testing.assert_array_equal(d.numpy(), want)


def test_2d_view_errors_are_clear():
    """Past the view's span is out of bounds (3 rows of a 2-row view: element (2, 0) is offset
    12 of a 9-element span); a 2-D index on a 1-D tensor is a CompileError; memcpy of a strided
    view is refused; a 2-D slice of a 1-D tensor is a TypeError."""
    d = pto.to_device(np.zeros((4, 6), np.int32))
    with pytest.raises(pto.OutOfBoundsError) as err:
        pto.launch(add_rc, grid=(1,), block=(32,), args=(d[1:3, 2:5], 3, 3))
        pto.sync()
    assert (err.value.offset, err.value.count) == (12, 9)
    with pytest.raises(pto.CompileError, match="2-D index needs a 2-D tensor"):
        add_rc.asm(args=(pto.alloc_tensor(96, pto.int32), 2, 3))
    with pytest.raises(pto.LaunchError, match="strided 2-D view"):
        pto.memcpy_h2d(d[0:2, 0:2], np.zeros(4, np.int32))
    with pytest.raises(TypeError, match="2-D index needs a 2-D"):
        pto.alloc_tensor(64)[0:2, 0:2]
