"""Bad input and hostile conditions end in a clear error or a normal result, never in an
internal exception, a poisoned device, a hung process or a silent multi-hour run."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.runtime.device import current_device
from pypto_sim.runtime.memory import HBM

ROOT = Path(__file__).resolve().parents[1]


def _subprocess_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYPTO_PROGRESS", None)
    return env


@pto.kernel
def scale(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i) * 2.0)


def test_a_failed_allocation_leaves_the_device_usable(monkeypatch):
    """The host could not grow simulated HBM: that allocation raises MemoryError saying so,
    and the next (smaller) ones succeed (they all failed once the first one had leaked the
    free range)."""
    pto.alloc_tensor(4 * 1024)
    real = HBM._new_words

    def refuse(n):
        if n > 10_000_000:
            raise MemoryError
        return real(n)
    monkeypatch.setattr(HBM, "_new_words", staticmethod(refuse))
    with pytest.raises(MemoryError, match="device is unchanged"):
        pto.alloc_tensor(4 * 20_000_000)
    small = [pto.alloc_tensor(4 * 100_000) for _ in range(3)]
    x = np.arange(100_000, dtype=np.float32)
    pto.memcpy_h2d(small[0], x)
    pto.launch(scale, grid=(400, 1, 1), block=(256, 1, 1), args=(small[0], small[1], 100_000),
               mode="functional")
    np.testing.assert_array_equal(small[1].numpy(), 2 * x)


def test_simulated_hbm_grows_by_a_quarter_not_by_doubling():
    """Ten 1M-element float32 tensors hold 40 MB; the byte array stays within 1.25x of that
    (it doubled before, so host RAM reached twice what the tensors needed)."""
    tensors = [pto.alloc_tensor(4 * 1_000_000) for _ in range(10)]
    nbytes = len(current_device().hbm.data)
    assert 40_000_000 <= nbytes <= 1.25 * 40_000_000 + (1 << 19)
    del tensors


def test_tile_scalar_infinity():
    """tadds(t, t, -inf, n) used to raise OverflowError inside the tile timing model."""
    x = np.arange(8, dtype=np.float32)
    d = pto.alloc_tensor(x.nbytes)
    pto.memcpy_h2d(d, x)
    pto.launch(_tadds_minus_inf, grid=(1, 1, 1), block=(32, 1, 1), args=(d,))
    assert np.isneginf(d.numpy()).all()


@pto.kernel
def _tadds_minus_inf(a):
    t = pto.alloc_local(8)
    pto.async_load(t, a, 32)
    pto.wait_all()
    pto.tadds(t, t, float("-inf"), 8)
    pto.wait_all()
    pto.store(a, t, 32)


def test_an_absurd_grid_is_refused_at_once_with_its_size():
    d = pto.alloc_tensor(4 * 32)
    start = time.process_time()
    with pytest.raises(pto.LaunchError) as info:
        pto.launch(scale, grid=(2**31 - 1, 1, 1), block=(32, 1, 1), args=(d, d, 32))
    assert time.process_time() - start < 5          # refused, not simulated
    text = str(info.value)
    assert "2,147,483,647 blocks" in text and "warp-instructions" in text
    assert "max_work" in text and "PYPTO_MAX_WORK" in text


def test_the_work_limit_can_be_raised():
    d = pto.alloc_tensor(4 * 32)
    with pytest.raises(pto.LaunchError):
        pto.launch(scale, grid=(1000, 1, 1), block=(32, 1, 1), args=(d, d, 32), max_work=100)
    pto.launch(scale, grid=(4, 1, 1), block=(32, 1, 1), args=(d, d, 32), max_work=1000)
    pto.sync()


def _script(tmp_path, text):
    path = tmp_path / "program.py"
    path.write_text(textwrap.dedent(text))
    return [sys.executable, str(path)]


def test_several_threads_can_start_at_once(tmp_path):
    """Eight threads each make their first launch at the same moment (each thread has its own
    device): none may fail with a false "no writable cache directory"."""
    script = ("""
        import threading, numpy as np
        import pypto_sim as pto

        @pto.kernel
        def add_one(a, n):
            i = pto.get_global_id()
            if i < n:
                pto.store(a + i, pto.load(a + i) + 1.0)

        errors, go = [], threading.Barrier(8)
        def work(k):
            try:
                go.wait()
                d = pto.alloc_tensor(4 * 64)
                pto.memcpy_h2d(d, np.full(64, k, np.float32))
                pto.launch(add_one, grid=(2, 1, 1), block=(32, 1, 1), args=(d, 64))
                assert (d.numpy() == k + 1).all()
            except Exception as exc:
                errors.append(repr(exc))
        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print("errors", errors)
    """)
    out = subprocess.run(_script(tmp_path, script), capture_output=True, text=True,
                         env=_subprocess_env(), timeout=300)
    assert out.returncode == 0, out.stderr
    assert "errors []" in out.stdout, out.stdout + out.stderr


def test_ctrl_c_stops_a_long_functional_launch(tmp_path):
    """SIGINT reaches Python while a long functional launch runs (the grid runs in slices of
    about 0.2 s): KeyboardInterrupt, long before the launch would have finished."""
    script = ("""
        import faulthandler, signal, sys, numpy as np
        import pypto_sim as pto
        faulthandler.register(signal.SIGUSR1, all_threads=True)   # where it is, if it hangs
        # Ctrl-C as a terminal delivers it: in cold-cache runs of the whole suite the child
        # inherited SIGINT ignored or blocked from the test process (never seen alone)
        print("inherited:", signal.getsignal(signal.SIGINT),
              sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])), file=sys.stderr)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

        @pto.kernel
        def spin(a, n, reps):
            i = pto.get_global_id()
            if i < n:
                x = pto.load(a + i)
                for r in range(reps):
                    x = x * 1.0000001 + 1.0
                pto.store(a + i, x)

        n = 1 << 16
        d = pto.alloc_tensor(4 * n)
        pto.memcpy_h2d(d, np.zeros(n, np.float32))
        # the long launch's own configuration with one repetition: everything it runs is
        # compiled (or loaded from numba's cache) before the clock starts
        pto.launch(spin, grid=(n // 256, 1, 1), block=(256, 1, 1), args=(d, n, 1),
                   mode="functional", max_work=10**12)
        pto.sync()                                  # compiled and warm
        print("started", flush=True)
        try:
            pto.launch(spin, grid=(n // 256, 1, 1), block=(256, 1, 1), args=(d, n, 200000),
                       mode="functional", max_work=10**12)
            pto.sync()
            print("finished")
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    proc = subprocess.Popen(_script(tmp_path, script), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_subprocess_env())
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(1.0)
        # Ctrl-C, and again every 20 s as a user would (the whole launch runs about 400 s; a
        # launch that ignored Ctrl-C still fails here after 120 s, with the child's stacks)
        for _ in range(6):
            proc.send_signal(signal.SIGINT)
            try:
                out, err = proc.communicate(timeout=20)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            proc.send_signal(signal.SIGUSR1)
            time.sleep(1.0)
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError("the launch ignored Ctrl-C for 120 s; the child's stacks:\n" + err)
    finally:
        proc.kill()
    assert "interrupted" in out, out + err


def test_errors_name_each_tensor_of_a_line():
    """`d_a = ...; d_o = ...` on one line: a size error names d_o, not d_a."""
    d_a = pto.alloc_tensor(256); d_o = pto.alloc_tensor(1024)  # noqa: E702
    with pytest.raises(pto.LaunchError, match="'d_o'"):
        pto.memcpy_d2h(np.empty(64, np.float32), d_o)
    assert (d_a.name, d_o.name) == ("d_a", "d_o")


@pto.kernel
def _tile_overrun(a):
    acc_tile = pto.alloc_local(16)
    pto.async_load(acc_tile, a, 64)
    pto.wait_all()
    pto.tadd(acc_tile, acc_tile, acc_tile, 32)


def test_tile_bounds_errors_name_the_variable():
    d = pto.alloc_tensor(4 * 64)
    pto.memcpy_h2d(d, np.zeros(64, np.float32))
    with pytest.raises(pto.OutOfBoundsError, match="acc_tile"):
        pto.launch(_tile_overrun, grid=(1, 1, 1), block=(32, 1, 1), args=(d,))
        pto.sync()
