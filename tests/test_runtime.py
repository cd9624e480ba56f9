"""Host runtime: launch validation, memcpy checks, machines. Bad input gets a clear typed error."""
import numpy as np
import pytest

import pypto_sim as pto


@pto.kernel
def copy(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i))


def _tensors(n=64):
    d_a, d_o = pto.alloc_tensor(n * 4), pto.alloc_tensor(n * 4)
    pto.memcpy_h2d(d_a, np.arange(n, dtype=np.float32))
    return d_a, d_o


def test_wrong_argument_count_names_the_parameters():
    d_a, d_o = _tensors()
    with pytest.raises(pto.LaunchError, match=r"kernel 'copy' takes 3 arguments \(a, o, n\) but 2 were given"):
        pto.launch(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o))


@pytest.mark.parametrize("grid,block,what", [((0, 1, 1), (64, 1, 1), "grid"),
                                             ((1, 1, 1), (64, -1, 1), "block"),
                                             ((1, 1, 1, 1), (64, 1, 1), "grid"),
                                             ("x", (64, 1, 1), "grid")])
def test_grid_and_block_must_be_positive(grid, block, what):
    d_a, d_o = _tensors()
    with pytest.raises(pto.LaunchError, match=what):
        pto.launch(copy, grid=grid, block=block, args=(d_a, d_o, 64))


def test_host_array_as_argument_says_to_copy_it_first():
    d_a, _ = _tensors()
    with pytest.raises(pto.LaunchError, match="memcpy_h2d") as err:
        pto.launch(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, np.zeros(64, np.float32), 64))
    assert "argument 'o'" in str(err.value)


def test_memcpy_checks_size_and_dtype_and_names_both():
    d = pto.alloc_tensor(64 * 4)
    with pytest.raises(pto.LaunchError, match=r"256 bytes \(64 x float32\).*128 bytes \(32 x float32\)"):
        pto.memcpy_h2d(d, np.zeros(32, np.float32))
    with pytest.raises(pto.LaunchError, match="holds float32 but the host array is int32"):
        pto.memcpy_h2d(d, np.zeros(64, np.int32))
    host = np.zeros(32, np.float32)
    with pytest.raises(pto.LaunchError):
        pto.memcpy_d2h(host, d)
    assert np.all(host == 0)


def test_calling_a_kernel_directly_is_an_error():
    with pytest.raises(pto.LaunchError, match="pto.launch"):
        copy(1, 2, 3)


def test_alloc_tensor_rejects_bad_sizes():
    with pytest.raises(ValueError, match="multiple of float32's 4-byte"):
        pto.alloc_tensor(10)
    with pytest.raises(ValueError, match="positive"):
        pto.alloc_tensor(0)
    with pytest.raises(TypeError, match="unsupported dtype"):
        pto.alloc_tensor(16, dtype="complex64")


def test_out_of_bounds_access_is_a_typed_error_and_the_runtime_stays_usable():
    """No bounds check in the kernel: lanes past the tensor fault with the kernel, line, block,
    warp, lane and offset named; the host array is not touched and the next launch works."""
    @pto.kernel
    def unguarded(a, o):
        i = pto.get_global_id()
        pto.store(o + i, pto.load(a + i))

    d_a, d_o = _tensors(48)
    host = np.full(48, 9.0, np.float32)
    with pytest.raises(pto.OutOfBoundsError) as err:
        pto.launch(unguarded, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o))
        pto.memcpy_d2h(host, d_o)
    e = err.value
    assert (e.warp, e.lane, e.offset, e.count) == (1, 16, 48, 48)
    assert "unguarded" in str(e) and f":{e.line}" in str(e) and "if i < n" in str(e)
    assert np.all(host == 9.0)
    pto.launch(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o, 48))
    pto.memcpy_d2h(host, d_o)
    assert np.array_equal(host, np.arange(48, dtype=np.float32))


def test_use_after_free_is_reported_at_sync():
    """The article's second pitfall: del d_a while the kernel is queued. The runtime does not
    keep the tensor alive; the next sync reports it, names tensor and kernel, and the fix."""
    d_a, d_o = _tensors()
    pto.launch(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o, 64))
    del d_a
    with pytest.raises(pto.UseAfterFreeError, match=r"'d_a'.*kernel 'copy'.*pto.Tensor|sync") as err:
        pto.sync()
    assert "with pto.Tensor" in str(err.value)
    pto.sync()   # the stream is usable again


def test_machine_api_and_use_machine(simple_machine, tmp_path):
    m = pto.machine()
    assert m is simple_machine and m.cores == 2 and m.lanes_per_warp == 32
    assert m.latency("FMA") == 4 and m.issue_interval("DIV") == 2
    default = pto.use_machine("ascend910b")
    assert default.cores == 24 and default.clock_ghz == 1.85 and default.l1_bytes == 512 * 1024
    assert "VfSim" in default.source("ADD")
    with pytest.raises(pto.PtoError, match="no machine named 'nope'"):
        pto.use_machine("nope")
    bad = tmp_path / "bad.toml"
    bad.write_text(simple_machine.path.read_text().replace("FMA = {", "XFMA = {"))
    with pytest.raises(pto.PtoError, match="no entry for FMA"):
        pto.use_machine(bad)


def test_l1_overflow_is_reported_at_launch_before_any_data_moves():
    """alloc_local buffers plus lane slots beyond the core's L1: L1CapacityError at launch,
    naming the kernel, the buffer's line, what was asked and what the core has."""
    @pto.kernel
    def too_big(o):
        buf = pto.alloc_local(200_000)
        i = pto.get_local_id()
        pto.store(buf + i, 1.0)
        pto.store(o + i, pto.load(buf + i))

    d_o = pto.alloc_tensor(32 * 4)
    pto.memcpy_h2d(d_o, np.full(32, 3.0, np.float32))
    with pytest.raises(pto.L1CapacityError) as err:
        pto.launch(too_big, grid=(1, 1, 1), block=(32, 1, 1), args=(d_o,))
    e = err.value
    assert e.free == 524288 and e.requested > 800_000
    assert "buf 800000 B" in str(e) and f":{e.line}" in str(e)
    assert np.all(d_o.numpy() == 3.0)


@pytest.mark.parametrize("grid", [(2.5,), (True, 1, 1), 2.0, (4, 1.0)])
def test_a_grid_that_is_not_whole_numbers_is_refused(grid):
    """grid=(2.5,) ran 2 blocks and grid=(True,) one, silently (issue 26): a non-integer or a
    bool dimension is a LaunchError naming the value."""
    @pto.kernel
    def k(o):
        pto.store(o + pto.get_global_id(), 1.0)
    d_o = pto.alloc_tensor(4096 * 4)
    with pytest.raises(pto.LaunchError, match="is not an integer"):
        pto.launch(k, grid=grid, block=(32, 1, 1), args=(d_o,))


def test_freeing_a_tensor_twice_is_an_error():
    """A second free() of one tensor is a UseAfterFreeError naming it (it was a silent no-op);
    freeing inside `with pto.Tensor(...)` leaves the block's exit nothing to do."""
    t = pto.alloc_tensor(64)
    t.free()
    with pytest.raises(pto.UseAfterFreeError, match="already freed"):
        t.free()
    with pto.Tensor(64) as u:
        u.free()


def test_memcpy_d2h_writes_a_fortran_ordered_or_sliced_host_array():
    """A 4 x 4 host array in Fortran order, or a 4 x 4 slice of a 4 x 8 array, receives the
    tensor's 16 elements in its logical (C) order, as memcpy_h2d reads one: a copy into a
    temporary used to leave the user's array untouched."""
    d = pto.alloc_tensor(16 * 4)
    pto.memcpy_h2d(d, np.arange(16, dtype=np.float32))
    fortran = np.zeros((4, 4), np.float32, order="F")
    wide = np.zeros((4, 8), np.float32)
    for host in (fortran, wide[:, :4]):
        pto.memcpy_d2h(host, d)
        np.testing.assert_array_equal(host, np.arange(16, dtype=np.float32).reshape(4, 4))
    assert not wide[:, 4:].any()


@pytest.mark.parametrize("host, message", [
    ("read-only", r"memcpy_d2h\(host, src\): the host array is read-only .*so nothing was copied"),
    ("list", r"memcpy_d2h\(host, src\): host is a list; it must be a numpy array"),
])
def test_memcpy_d2h_into_what_it_cannot_write_is_an_argument_error(host, message):
    """A read-only array or a list cannot receive the tensor: a pto.ArgumentError (still the
    ValueError / TypeError a caller may catch) with a hint, and the array keeps its zeros."""
    d = pto.alloc_tensor(16 * 4)
    pto.memcpy_h2d(d, np.arange(16, dtype=np.float32))
    array = np.zeros(16, np.float32)
    array.flags.writeable = False
    target = array if host == "read-only" else [0.0] * 16
    with pytest.raises(pto.ArgumentError, match=message) as info:
        pto.memcpy_d2h(target, d)
    assert isinstance(info.value, (ValueError, TypeError)) and "src.numpy()" in info.value.hint
    assert not array.any() and not any(target)
