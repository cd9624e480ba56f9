# examples/calibration_loop.py -- closing the loop with hardware, on a stand-in NPU.
#
# Without a board at hand, a copy of the default table with different numbers plays the NPU:
# its "measurements" are the simulator's cycles on that copy. The loop is the one a user with
# hardware runs (docs/calibration.md):
#   1. correlate the simulator (default table) with the NPU over a set of kernels;
#   2. run the microbenchmarks on the NPU and fit a table to their rows;
#   3. correlate again with the fitted table.
# Usage: python examples/calibration_loop.py [OUT_DIR]   (writes two scatter plots there)
import sys
import tempfile
from pathlib import Path

import numpy as np

import pypto_sim as pto
from pypto_sim.calibrate import correlate, fit, run_microbenchmarks, write_table

out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="calibration_"))
out_dir.mkdir(parents=True, exist_ok=True)

# the stand-in NPU: slower HBM, a slower vector unit and cube, a faster scalar unit, and the
# article's fusion (an MMA fused with the TLOAD before it saves 3 cycles)
NPU_TRUTH = {
    "ADD": {"latency": 9}, "FMA": {"latency": 9}, "MUL": {"latency": 8}, "EXP": {"latency": 20, "issue_interval": 4},
    "LOAD": {"latency": 420}, "STORE": {"latency": 180}, "FMA_STORE": {"latency": 9},
    "TLOAD": {"latency": 360}, "TSTORE": {"latency": 200}, "MMA": {"latency": 9, "per_repeat_f32": 3},
    "pipes.scalar": {"latency": 1},
    "memory.hbm_core_read_bytes_per_cycle": {"value": 110.0},
    "memory.hbm_core_write_bytes_per_cycle": {"value": 80.0},
    "memory.hbm_chip_bytes_per_cycle": {"value": 630.0},
    "fusion.TLOAD+MMA": {"saving": 3},
}
npu_table = write_table(NPU_TRUTH, "ascend910b", out_dir / "stand_in_npu.toml", label="stand-in NPU")


@pto.kernel
def vector_add(a, b, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.fma(o + i, pto.load(a + i), 1.0, pto.load(b + i))


@pto.kernel
def poly_exp(a, b, o, n):
    i = pto.get_global_id()
    if i < n:
        x = pto.load(a + i)
        y = x * x * 0.5 + x * 0.25 + 1.0
        pto.store(o + i, pto.exp(y) * pto.load(b + i))


def make_matmul(depth, tm=32, tn=32, tk=32):
    @pto.kernel
    def matmul(A, B, C, M, N, K):
        row0 = pto.get_block_id(1) * tm
        col0 = pto.get_block_id(0) * tn
        acc = pto.alloc_local(tm * tn)
        with pto.pipeline(depth=depth) as pl:
            for k0 in pl.range(0, K, tk):
                with pl.stage("load_a"):
                    at = pto.alloc_local(tm * tk)
                    pto.async_load(at, A + row0 * K + k0, rows=tm, cols=tk, stride=K)
                with pl.stage("load_b"):
                    bt = pto.alloc_local(tk * tn)
                    pto.async_load(bt, B + k0 * N + col0, rows=tk, cols=tn, stride=N)
                with pl.stage("compute", after=("load_a", "load_b")):
                    pto.wait_all()
                    pto.mma(acc, at, bt, tm, tn, tk)
        pl.run()
        pto.store(C + row0 * N + col0, acc, rows=tm, cols=tn, stride=N)
    return matmul


def run_suite(table) -> dict:
    """{kernel: total cycles} of the suite on a machine table."""
    pto.use_machine(table)
    rng = np.random.default_rng(0)
    cycles = {}
    for n in (1024, 8192, 65536):
        a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
        d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
        pto.memcpy_h2d(d_a, a)
        pto.memcpy_h2d(d_b, b)
        grid = (-(-n // 256), 1, 1)
        for k in (vector_add, poly_exp):
            cycles[f"{k.name} n={n}"] = pto.profile(k, grid=grid, block=(256, 1, 1), args=(d_a, d_b, d_o, n)).total_cycles
    for (M, N, K) in ((64, 64, 256), (128, 64, 512), (64, 128, 1024)):
        A = rng.standard_normal((M, K)).astype(np.float32)
        B = rng.standard_normal((K, N)).astype(np.float32)
        d_A, d_B, d_C = pto.alloc_tensor(A.nbytes), pto.alloc_tensor(B.nbytes), pto.alloc_tensor(M * N * 4)
        pto.memcpy_h2d(d_A, A)
        pto.memcpy_h2d(d_B, B)
        for depth in (1, 2):
            prof = pto.profile(make_matmul(depth), grid=(N // 32, M // 32, 1), block=(32, 1, 1),
                               args=(d_A, d_B, d_C, M, N, K))
            cycles[f"matmul {M}x{N}x{K} depth={depth}"] = prof.total_cycles
    return cycles


measured = run_suite(npu_table)                  # on a real NPU: pto.profile_on_npu(...)
before = correlate(run_suite("ascend910b"), measured)
print("default table against the NPU:\n" + str(before) + "\n")
before.save_plot(out_dir / "correlation_before.png", title="default table vs NPU")

rows = run_microbenchmarks(npu_table)            # on a real NPU: the same kernels, timed there
fitted = fit(rows, base="ascend910b")
calibrated = write_table(fitted, "ascend910b", out_dir / "calibrated.toml", label="stand-in NPU rows")
after = correlate(run_suite(calibrated), measured)
print(f"calibrated from {len(rows)} microbenchmark runs:\n" + str(after))
after.save_plot(out_dir / "correlation_after.png", title="calibrated table vs NPU")
print(f"\nwrote {calibrated} and the plots in {out_dir}")
