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
