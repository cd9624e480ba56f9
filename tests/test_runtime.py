"""Host runtime: launch validation, memcpy checks, machines. Bad input gets a clear typed error."""
import os
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.runtime import teardown


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


def test_a_failed_sync_empties_the_queue_and_names_the_launches_it_did_not_run():
    """unguarded faults (lanes 48..63 of 64 read past d_a's 48 elements); the two copies
    queued behind it are not run (a fault ends the queue, as a CUDA error is sticky): sync
    raises the OutOfBoundsError with a note naming both and where they were launched, the queue
    is empty, their handles raise a LaunchError saying why, and d_x keeps its zeros at the next
    memcpy_d2h. The stream then runs the next launch."""
    @pto.kernel
    def unguarded(a, o):
        i = pto.get_global_id()
        pto.store(o + i, pto.load(a + i))

    d_a, d_o = _tensors(48)
    d_x = pto.to_device(np.zeros(48, np.float32))
    pto.launch(unguarded, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o))
    first = pto.launch(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_x, 48))
    second = pto.launch(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_x, 48))
    with pytest.raises(pto.OutOfBoundsError) as err:
        pto.sync()
    assert not d_a.device.queue
    site = f"test_runtime.py:{_line_of('first')}"
    assert len(err.value.__notes__) == 1 and err.value.__notes__[0].startswith(
        "2 launch(es) queued after kernel 'unguarded' were not run")
    assert site in err.value.__notes__[0] and err.value.__notes__[0].count("'copy' (launched at") == 2
    for handle in (first, second):
        with pytest.raises(pto.LaunchError, match=r"kernel 'copy' was not run: kernel 'unguarded', queued "
                                                  r"before it, failed \(OutOfBoundsError\)"):
            handle.result()
    host = np.full(48, 9.0, np.float32)
    pto.memcpy_d2h(host, d_x)
    assert not host.any()
    pto.launch(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_x, 48))
    pto.memcpy_d2h(host, d_x)
    assert np.array_equal(host, np.arange(48, dtype=np.float32))


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


def test_a_2d_tensor_copies_only_from_and_to_an_array_of_its_shape():
    """pto.to_device of a (4, 8) array is a (4, 8) tensor: an (8, 4) array of the same 32
    float32 values is refused both ways (a LaunchError naming both shapes and the reshape),
    the host array untouched, as numba's copy_to_device / copy_to_host refuse it; (4, 8) and
    (1, 4, 8) (an axis of length 1 aside) copy. A flat tensor of 32 float32 (alloc_tensor)
    takes any array of 32 float32."""
    d = pto.to_device(np.zeros((4, 8), np.float32))
    with pytest.raises(pto.LaunchError, match=r"'d' has shape \(4, 8\) but the host array has shape "
                                              r"\(8, 4\)") as err:
        pto.memcpy_h2d(d, np.ones((8, 4), np.float32))
    assert "reshape(4, 8)" in err.value.hint
    for shape in ((8, 4), (2, 2, 8), (32,)):
        host = np.full(shape, 9.0, np.float32)
        with pytest.raises(pto.LaunchError, match=rf"host array has shape \({shape[0]},"):
            pto.memcpy_d2h(host, d)
        assert np.all(host == 9.0)
    values = np.arange(32, dtype=np.float32).reshape(4, 8)
    pto.memcpy_h2d(d, values)
    for host in (np.empty((4, 8), np.float32), np.empty((1, 4, 8), np.float32)):
        pto.memcpy_d2h(host, d)
        np.testing.assert_array_equal(host.reshape(4, 8), values)
    np.testing.assert_array_equal(d.numpy(), values)
    flat = pto.alloc_tensor(32 * 4)
    pto.memcpy_h2d(flat, values.T)
    host = np.empty((2, 16), np.float32)
    pto.memcpy_d2h(host, flat)
    np.testing.assert_array_equal(host.ravel(), values.T.ravel())


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


# ---------------------------------------------------------------- launches never synchronized
# pto.launch queues; a program that ends without pto.sync() still runs what it queued (the
# implicit synchronize of the device's teardown, runtime/teardown.py), and an error of it is
# reported with exit status 1, under `python` and `pypto-sim run` (it used to be lost, exit 0).
ROOT = Path(__file__).resolve().parent.parent
_NEVER_SYNCED = '''\
import numpy as np
import pypto_sim as pto

@pto.kernel
def bad(A, O):
    with pto.cube():
        a_mat = pto.alloc_tile(32, 32, pto.float16, loc=pto.Mat)
        pto.tload(a_mat, A + 32 * 32)          # A holds 32 x 32 halves: this reads past its end
        pto.tstore(O, a_mat)

dA = pto.alloc_tensor(32 * 32 * 2, pto.float16)
dO = pto.alloc_tensor(32 * 32 * 2, pto.float16)
pto.launch(bad, grid=(1,), args=(dA, dO))
pto.launch(bad, grid=(1,), args=(dA, dO))
print("script ends")
'''


def _script(tmp_path, text, *argv):
    """Run text as a script, under `python` (argv empty) or `python -m pypto_sim ...argv`."""
    path = tmp_path / "prog.py"
    path.write_text(text)
    env = dict(os.environ, PYPTO_PROGRESS="0",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, *(("-m", "pypto_sim", *argv) if argv else ()), str(path)]
    return path, subprocess.run(command, capture_output=True, text=True, timeout=600, env=env,
                                cwd=tmp_path)


@pytest.mark.parametrize("argv", [(), ("run",)], ids=["python", "pypto-sim run"])
def test_a_failing_launch_never_synchronized_is_reported_at_exit(tmp_path, argv):
    """The script launches an out-of-bounds TLOAD and ends: its OutOfBoundsError is on stderr
    with kernel, line, unit and elements, then why only now (queued, never synchronized; call
    pto.sync()); the launch after it is not run; exit status 1 (one line under pypto-sim)."""
    path, run = _script(tmp_path, _NEVER_SYNCED, *argv)
    assert run.returncode == 1, run.stderr
    assert "script ends" in run.stdout and "Traceback" not in run.stderr
    err = run.stderr
    assert f"OutOfBoundsError: kernel 'bad', {path}:8: TLOAD at line 8 on AIC of block (0, 0, 0)" in err
    assert "reach element 2047 of 'dA', which has 1024" in err
    assert f"launched at {path}:13, was still queued when the program ended (it was never synchronized)" in err
    assert "call pto.sync() after the launch to raise it where it happens" in err
    assert "1 launch(es) queued after it were not run" in err
    if argv:
        assert len(err.strip().splitlines()) == 1 and err.startswith("pypto-sim: error: "), err
    else:
        assert err.startswith("pypto_sim: error: "), err


def test_a_clean_script_that_never_synchronizes_runs_its_launches_and_exits_0(tmp_path):
    """Queued launches that work run at exit, before the hooks registered earlier (this one,
    registered before pypto_sim is imported, sees them done), with nothing on stderr."""
    _, run = _script(tmp_path, '''\
import atexit
atexit.register(lambda: print("done at exit:", h.done, h.profile.total_cycles > 0))
import numpy as np
import pypto_sim as pto

@pto.kernel
def copy(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i))

d_o = pto.alloc_tensor(64 * 4)
h = pto.launch(copy, grid=(1,), block=(64,), args=(pto.to_device(np.ones(64, np.float32)), d_o, 64))
print("queued:", h.done)
''')
    assert (run.returncode, run.stderr) == (0, ""), run.stderr
    assert run.stdout.split() == ["queued:", "False", "done", "at", "exit:", "True", "True"]


@pytest.mark.parametrize("argv", [(), ("run",)], ids=["python", "pypto-sim run"])
def test_a_script_that_raised_keeps_its_error_and_its_queue_is_not_run(tmp_path, argv):
    """A script that dies of its own exception after queuing a faulty launch shows that
    exception only (exit 1); the queued launch is not run at exit to add another."""
    text = _NEVER_SYNCED.replace('print("script ends")', 'raise ValueError("the script\'s own error")')
    _, run = _script(tmp_path, text, *argv)
    assert run.returncode == 1
    assert "ValueError: the script's own error" in run.stderr
    assert "OutOfBoundsError" not in run.stderr and "never synchronized" not in run.stderr


def test_run_unsynced_launches_raises_the_first_error_and_drops_the_rest(monkeypatch):
    """The drain itself (in this process): the first failure is an UnsyncedLaunchError (a
    PtoError) carrying the launch's OutOfBoundsError; the launch after it is not run and its
    handle says why; the queue is empty and the device usable."""
    monkeypatch.setattr(teardown, "_devices", weakref.WeakSet())      # this test's device only

    @pto.kernel
    def unguarded(a, o):
        i = pto.get_global_id()
        pto.store(o + i, pto.load(a + i))

    d_a, d_o = _tensors(48)
    failing = pto.launch(unguarded, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o))
    later = pto.launch(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o, 48))
    with pytest.raises(teardown.UnsyncedLaunchError) as err:
        teardown.run_unsynced_launches()
    assert isinstance(err.value, pto.PtoError) and isinstance(err.value.error, pto.OutOfBoundsError)
    assert failing.error is err.value.error and err.value.launch.endswith(f"test_runtime.py:{_line_of('failing')}")
    assert "OutOfBoundsError: kernel 'unguarded'" in str(err.value) and "never synchronized" in str(err.value)
    with pytest.raises(pto.LaunchError, match="kernel 'copy' was not run: kernel 'unguarded', queued before it"):
        later.result()
    assert not pto.sync() and not d_a.device.queue
    teardown.run_unsynced_launches()            # nothing queued: nothing to do


def _line_of(name):
    """The line of this file where `name = pto.launch(` is written."""
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.strip().startswith(f"{name} = pto.launch("))
