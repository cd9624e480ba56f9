"""The article's vector_add, end to end: values against numpy, masked tails, the example script."""
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto

from simt_kernels import vector_add

ROOT = Path(__file__).resolve().parent.parent


def _vector_add(n, grid, block=256, sentinel=-7.0):
    rng = np.random.default_rng(n)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    total = grid * block
    d_a, d_b, d_o = (pto.alloc_tensor(total * 4) for _ in range(3))
    pad = np.full(total, sentinel, np.float32)
    for d, x in ((d_a, a), (d_b, b)):
        host = pad.copy()
        host[:n] = x
        pto.memcpy_h2d(d, host)
    pto.memcpy_h2d(d_o, pad)
    pto.launch(vector_add, grid=(grid, 1, 1), block=(block, 1, 1), args=(d_a, d_b, d_o, n))
    out = np.empty(total, np.float32)
    pto.memcpy_d2h(out, d_o)
    return a, b, out


def test_article_vector_add_1024_on_4_blocks_of_256():
    """The article's launch: n = 1024, grid (4,1,1), block (256,1,1); o == a + b exactly
    (a * 1.0 + b with one rounding is a + b)."""
    a, b, out = _vector_add(1024, 4)
    assert np.array_equal(out, a + b)


@pytest.mark.parametrize("n", [1, 255, 257, 1000])
def test_masked_tail_is_left_untouched(n):
    """For n not a multiple of 256 the lanes with i >= n are masked off: their o[i] keeps the
    sentinel that was there before the launch."""
    grid = -(-n // 256)
    a, b, out = _vector_add(n, grid)
    assert np.array_equal(out[:n], a + b)
    assert np.all(out[n:] == -7.0)


def test_launch_is_asynchronous_until_sync():
    """launch() queues; the result appears at sync() (or at the memcpy_d2h that needs it), and
    its cycles are those pto.profile gives the same launch run at once."""
    n = 64
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    pto.memcpy_h2d(d_a, np.ones(n, np.float32))
    pto.memcpy_h2d(d_b, np.ones(n, np.float32))
    handle = pto.launch(vector_add, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_b, d_o, n))
    assert not handle.done
    pto.sync()
    assert handle.done and np.all(d_o.numpy() == 2.0)
    prof = pto.profile(vector_add, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_b, d_o, n))
    assert handle.result().total_cycles == prof.total_cycles


def test_tensor_context_manager_waits_then_frees():
    """`with pto.Tensor(...)` runs the queued kernels that use the tensor before freeing it."""
    n = 32
    out = np.zeros(n, np.float32)
    with pto.Tensor(n * 4) as d_a, pto.Tensor(n * 4) as d_b, pto.Tensor(n * 4) as d_o:
        pto.memcpy_h2d(d_a, np.full(n, 2, np.float32))
        pto.memcpy_h2d(d_b, np.full(n, 3, np.float32))
        pto.launch(vector_add, grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_b, d_o, n))
        keep = d_o
    assert keep.freed
    d = pto.alloc_tensor(n * 4)
    pto.memcpy_h2d(d, np.full(n, 5, np.float32))
    pto.memcpy_d2h(out, d)
    assert np.all(out == 5)


def test_float16_and_int32_tensors():
    """Tensors of float16 and int32: values round to the tensor's dtype on store."""
    @pto.kernel
    def scale(x, y, n):
        i = pto.get_global_id()
        if i < n:
            pto.store(y + i, pto.load(x + i) * 3)

    n = 40
    for dtype, host in ((pto.float16, np.linspace(-2, 2, n).astype(np.float16)),
                        (pto.int32, np.arange(-20, 20, dtype=np.int32))):
        d_x = pto.alloc_tensor(host.nbytes, dtype=dtype)
        d_y = pto.alloc_tensor(host.nbytes, dtype=dtype)
        pto.memcpy_h2d(d_x, host)
        pto.launch(scale, grid=(1, 1, 1), block=(64, 1, 1), args=(d_x, d_y, n))
        out = np.empty_like(host)
        pto.memcpy_d2h(out, d_y)
        assert np.array_equal(out, (host * host.dtype.type(3)).astype(host.dtype))


def test_example_script_runs_and_reports_cycles(capsys, monkeypatch):
    """examples/vector_add.py prints its check against numpy and a cycle report (run as
    __main__ in this process: a process spent a second importing; raising fails the test)."""
    script = ROOT / "examples" / "vector_add.py"
    monkeypatch.setattr(sys, "argv", [str(script)])
    runpy.run_path(str(script), run_name="__main__")
    stdout = capsys.readouterr().out
    assert "vector_add 1024 elements passed" in stdout
    assert "total cycles:" in stdout and "LOAD" in stdout


def test_worked_example_in_docs_timing_md():
    """docs/timing.md walks through this launch cycle by cycle on the default machine: warp 0's
    loads issue at 18 and 26 (the block's 8 warps take turns on the issue port) and are ready
    at 326 and 334, its FMA_STORE is visible at 496, and warp 7's at 510, the kernel's total."""
    n = 1024
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    prof = pto.profile(vector_add, grid=(4, 1, 1), block=(256, 1, 1), args=(d_a, d_b, d_o, n))
    warp0 = [(e.inst, e.start, e.end) for e in prof.timeline if e.block == 0 and e.warp == 0]
    assert warp0[:6] == [("GLOBAL_ID", 0, 2), ("LT", 2, 9), ("IF", 10, 11), ("LOAD", 18, 326),
                         ("LOAD", 26, 334), ("FMA_STORE", 334, 496)]
    assert prof.total_cycles == 510
