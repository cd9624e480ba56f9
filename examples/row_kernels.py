"""Shared host side of the row-wise vector examples (softmax.py, layer_norm.py, rms_norm.py):
random data, the launch, the check against numpy and the per-pipe report.

Each example kernel runs on the vector cores of the real AI core: every AI core takes
ROWS rows per vector core (2 * ROWS per core), loads them into UB (MTE2), computes in float32
on V, and stores (MTE3). float16 data is converted with tcvt on the way in and out."""
import numpy as np

import pypto_sim as pto

ROWS = 16          # rows per vector core


def run(kernel, reference, n_rows, n_cols, dtype, extra_args=(), seed=0, check=None, mode="timing",
        values=True):
    """Launch kernel(X, Y, *extra_args) over n_rows x n_cols data of dtype (pto.float32 or
    pto.float16); return (y, want, profile). mode="functional": values only, no cycles;
    values=False: cycles only, y is not computed."""
    if n_rows % (2 * ROWS):
        raise ValueError(f"n_rows must be a multiple of {2 * ROWS}")
    rng = np.random.default_rng(seed)
    npdt = np.float16 if dtype == pto.float16 else np.float32
    x = (rng.standard_normal((n_rows, n_cols)) * 3).astype(npdt)
    X = pto.alloc_tensor(x.nbytes, dtype)
    Y = pto.alloc_tensor(x.nbytes, dtype)
    pto.memcpy_h2d(X, x)
    prof = pto.profile(kernel, grid=(n_rows // (2 * ROWS),), args=(X, Y, *extra_args), check=check,
                       mode=mode, values=values)
    y = np.empty_like(x)
    pto.memcpy_d2h(y, Y)
    return y, reference(x.astype(np.float64)).astype(npdt), prof


def report(name, y, want, prof, dtype):
    """Print the check and the per-pipe breakdown; return True when y matches."""
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == pto.float16 else dict(rtol=1e-5, atol=1e-5)
    ok = bool(np.allclose(y.astype(np.float64), want.astype(np.float64), **tol))
    err = float(np.max(np.abs(y.astype(np.float64) - want.astype(np.float64))))
    print(f"{name} {y.shape[0]}x{y.shape[1]} {dtype}: max |y - numpy| = {err:.2e} "
          f"({'ok' if ok else 'WRONG'}), {prof.total_cycles} cycles")
    shares = prof.pipe_shares("AIV")
    print("  AIV busy: " + ", ".join(f"{p} {100 * shares[p]:.1f}%" for p in ("MTE2", "V", "MTE3", "S")))
    return ok
