"""The speed benchmarks, side by side in one process tree (run by hand, never in tests).

    python benchmarks/run.py [--quick]

Prints one table: vector_add of 65,536 elements on numba's CUDA simulator
(NUMBA_ENABLE_CUDASIM=1, in a child process) and on pypto_sim in timing and functional modes;
vector_add of 1M elements; a pipelined tiled matmul; the 1024^3 GEMM; and a grid-size sweep
with its fitted scaling exponent. Wall times are medians of whole calls, as a user waits for
them (``pto.profile`` from call to return, after one warm-up call; the CUDA simulator's kernel
launch likewise); every pypto_sim row also reports warp-instructions per second and simulated
cycles per second over that wall time.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import pypto_sim as pto

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemm import TM, TN, make_gemm  # noqa: E402
from kernels import vector_add  # noqa: E402  (shared with the other benchmark scripts)

HERE = Path(__file__).resolve().parent

CUDASIM = r"""
import json, sys, time
import numpy as np
from numba import cuda

@cuda.jit
def vector_add(a, b, o, n):
    i = cuda.grid(1)
    if i < n:
        o[i] = a[i] * 1.0 + b[i]

n = int(sys.argv[1])
a = np.random.rand(n).astype(np.float32)
b = np.random.rand(n).astype(np.float32)
o = np.zeros(n, np.float32)
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    vector_add[(n + 255) // 256, 256](a, b, o, n)
    times.append(time.perf_counter() - start)
assert np.allclose(o, a + b)
print(json.dumps(times))
"""


def cudasim(n, repeat):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-c", CUDASIM, str(n), str(repeat)], env=env,
                         capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1]
    return statistics.median(json.loads(out.stdout)), None


def timed(run, repeat):
    """Median wall time of run() over `repeat` calls after one warm-up call; the last result."""
    run()                                       # warm: compile the kernel, touch the memory
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        walls.append(time.perf_counter() - start)
    return statistics.median(walls), result


def vector_add_run(n, mode, repeat):
    d_a, d_b, d_o = (pto.alloc_tensor(n * 4) for _ in range(3))
    a, b = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, b)
    wall, prof = timed(lambda: pto.profile(vector_add, grid=((n + 255) // 256, 1, 1),
                                           block=(256, 1, 1), args=(d_a, d_b, d_o, n), mode=mode),
                       repeat)
    assert np.allclose(d_o.numpy(), a + b)
    return wall, prof


def tiled_matmul_run(repeat, size=256):
    """The pipelined tiled matmul (benchmarks/gemm.py's kernel, 128x128x64 tiles, depth 2)."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((size, size)).astype(np.float32) for _ in range(2))
    d_a, d_b, d_c = (pto.alloc_tensor(size * size * 4) for _ in range(3))
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, b)
    kernel = make_gemm(2)
    wall, prof = timed(lambda: pto.profile(kernel, grid=(size // TN, size // TM, 1), block=(32, 1, 1),
                                           args=(d_a, d_b, d_c, size, size, size)), repeat)
    assert np.allclose(d_c.numpy().reshape(size, size), a @ b, rtol=1e-4, atol=1e-3)
    return wall, prof


def row(name, wall, prof=None, note=""):
    rate = cycles = ""
    if prof is not None:
        rate = f"{prof.stats['warp_instructions'] / wall:,.0f}"
        if prof.total_cycles:
            cycles = f"{prof.total_cycles / wall:,.0f}"
    print(f"{name:44s} {wall:10.3f} {rate:>14s} {cycles:>14s}  {note}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one timed run of each, not three")
    ns = parser.parse_args()
    repeat = 1 if ns.quick else 3
    print(f"{'benchmark':44s} {'wall (s)':>10s} {'warp-inst/s':>14s} {'cycles/s':>14s}  note")
    n = 65536
    sim, err = cudasim(n, repeat)
    timing, tprof = vector_add_run(n, "timing", repeat)
    functional, fprof = vector_add_run(n, "functional", repeat)
    if sim is None:
        print(f"{'vector_add 64K, numba CUDA simulator':44s} {'-':>10s}  not available: {err}")
    else:
        row("vector_add 64K, numba CUDA simulator", sim)
    row("vector_add 64K, pypto_sim timing", timing, tprof,
        f"{sim / timing:.0f}x the CUDA simulator" if sim else "")
    row("vector_add 64K, pypto_sim functional", functional, fprof,
        f"{sim / functional:.0f}x the CUDA simulator" if sim else "")
    wall, prof = vector_add_run(1 << 20, "timing", repeat)
    row("vector_add 1M, timing", wall, prof)
    wall, prof = vector_add_run(1 << 20, "functional", repeat)
    row("vector_add 1M, functional", wall, prof)
    wall, prof = tiled_matmul_run(repeat)
    row("tiled matmul 256^3, depth 2, timing", wall, prof, f"{prof.total_cycles} cycles")
    # grid-size sweep: wall time against blocks, fitted exponent
    sizes, walls = [256, 512, 1024, 2048, 4096], []
    for blocks in sizes:
        w, _ = vector_add_run(blocks * 256, "timing", repeat)
        walls.append(w)
    exponent = np.polyfit(np.log(sizes), np.log(walls), 1)[0]
    points = ", ".join(f"{b}: {w * 1000:.0f} ms" for b, w in zip(sizes, walls))
    print(f"{'grid sweep 256..4096 blocks, timing':44s} {walls[-1]:10.3f} {'':>14s} {'':>14s}  "
          f"wall ~ blocks^{exponent:.2f} ({points})")
    # the tiled matmul and the GEMM (their own scripts)
    for script, args in (("gemm.py", []),):
        out = subprocess.run([sys.executable, str(HERE / script), *args], capture_output=True,
                             text=True, timeout=3600)
        wall_line = next((l for l in out.stdout.splitlines() if "wall time" in l), out.stderr[-200:])
        tf_line = next((l for l in out.stdout.splitlines() if "TFLOP/s" in l), "")
        print(f"{'GEMM 1024^3 float32 (benchmarks/gemm.py)':44s} {wall_line.split()[2]:>10s} "
              f"{'':>14s} {'':>14s}  {tf_line.strip()}")


if __name__ == "__main__":
    main()
