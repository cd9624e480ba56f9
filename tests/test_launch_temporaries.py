"""A launch keeps alive the temporaries only it references (issue 25): numba's everyday
``launch(k, args=(out, to_device(x)))``. A tensor the program holds and frees or ``del``s
while the launch is pending stays the article's UseAfterFreeError."""
import numpy as np
import pytest

import pypto_sim as pto


@pto.kernel
def double(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i) * 2.0)


def _to_device(x):
    """The issue's helper: its local name 't' means nothing where the launch is made."""
    t = pto.alloc_tensor(x.nbytes)
    pto.memcpy_h2d(t, x)
    return t


def _live():
    """Ids of the allocations the device's HBM holds now."""
    return set(pto.runtime.device.current_device().hbm.live)


def test_a_temporary_from_a_helper_lives_until_the_launch_has_run_then_is_freed():
    """o[i] = 2 * a[i] with a = 0..31 read through a tensor only the launch references: the
    result is 0, 2, ..., 62; the temporary is still allocated while the launch is queued (two
    live allocations: d_o and it) and freed once sync() has run the launch (only d_o left)."""
    d_o = pto.alloc_tensor(32 * 4)
    pto.launch(double, grid=(1,), block=(32,), args=(_to_device(np.arange(32, dtype=np.float32)), d_o, 32))
    assert len(_live()) == 2
    pto.sync()
    assert _live() == {d_o.alloc.id}
    np.testing.assert_array_equal(d_o.numpy(), 2.0 * np.arange(32))


def test_to_device_temporaries_in_a_list_and_through_result():
    """pto.to_device (numba's cuda.to_device) in an argument list; result() runs the launch and
    the temporary goes with it. a = 1..8 doubled is 2..16."""
    d_o = pto.alloc_tensor(8 * 4)
    handle = pto.launch(double, grid=(1,), block=(32,), args=[pto.to_device(np.arange(1, 9, dtype=np.float32)), d_o, 8])
    handle.result()
    assert _live() == {d_o.alloc.id}
    np.testing.assert_array_equal(d_o.numpy(), np.arange(2, 17, 2))


def test_a_temporary_view_of_a_temporary_keeps_its_tensor_until_the_launch_has_run():
    """to_device(x)[4:12]: element 0 of the view is x[4] = 4, so o = 2 * (4..11) = 8, 10, .., 22."""
    d_o = pto.alloc_tensor(8 * 4)
    pto.launch(double, grid=(1,), block=(32,), args=(pto.to_device(np.arange(16, dtype=np.float32))[4:12], d_o, 8))
    pto.sync()
    assert _live() == {d_o.alloc.id}
    np.testing.assert_array_equal(d_o.numpy(), 2.0 * np.arange(4, 12))


def test_del_of_a_tensor_the_program_holds_is_still_use_after_free():
    """The article's pitfall is unchanged: d_a was held by the program when it was launched, so
    `del d_a` while the launch is pending is reported at sync and the kernel is not run."""
    d_a, d_o = pto.to_device(np.ones(32, np.float32)), pto.alloc_tensor(32 * 4)
    pto.launch(double, grid=(1,), block=(32,), args=[d_a, d_o, 32])
    del d_a
    with pytest.raises(pto.UseAfterFreeError, match=r"'d_a'.*kernel 'double'"):
        pto.sync()


def test_del_of_a_tensor_whose_temporary_view_is_launched_is_still_use_after_free():
    """args=(d_a[0:32], ...): the view is a temporary but d_a is the program's; del d_a while
    the launch is pending is the pitfall, not a tensor the launch may keep."""
    d_a, d_o = pto.to_device(np.ones(64, np.float32)), pto.alloc_tensor(32 * 4)
    pto.launch(double, grid=(1,), block=(32,), args=(d_a[0:32], d_o, 32))
    del d_a
    with pytest.raises(pto.UseAfterFreeError, match="kernel 'double'"):
        pto.sync()


def test_free_of_a_temporary_by_another_path_is_reported():
    """A launch that keeps a temporary does not hide an explicit free(): o's tensor freed by the
    program while queued is reported, although the launch's input was a temporary; afterwards
    both allocations are back with the allocator (d_o's leaked before: it was marked freed, so
    HBM.release skipped it)."""
    d_o = pto.alloc_tensor(32 * 4)
    pto.launch(double, grid=(1,), block=(32,), args=(pto.to_device(np.ones(32, np.float32)), d_o, 32))
    d_o.free()
    with pytest.raises(pto.UseAfterFreeError, match="'d_o'"):
        pto.sync()
    assert _live() == set()      # both returned to the allocator


def test_numbas_launch_form_keeps_its_temporaries_too():
    """kernel[grid, block](pto.to_device(x), d_o, n), numba's `kernel[g, b](cuda.to_device(x),
    ...)`: the temporary lives until the launch has run (2 * 0..31 = 0, 2, .., 62), then is
    freed; a tensor the program holds and dels while that form's launch is queued is still the
    UseAfterFreeError."""
    d_o = pto.alloc_tensor(32 * 4)
    double[1, 32](pto.to_device(np.arange(32, dtype=np.float32)), d_o, 32)
    assert len(_live()) == 2
    pto.sync()
    assert _live() == {d_o.alloc.id}
    np.testing.assert_array_equal(d_o.numpy(), 2.0 * np.arange(32))
    d_a = pto.to_device(np.ones(32, np.float32))
    double[1, 32](d_a, d_o, 32)
    del d_a
    with pytest.raises(pto.UseAfterFreeError, match="'d_a'"):
        pto.sync()
