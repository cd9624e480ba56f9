"""How long a big launch's trace export and bubble report take, and the memory they need.

    python benchmarks/trace_scale.py [--blocks 100000] [--format json|perfetto] [--skip-bubbles]

Profiles the article's vector_add over BLOCKS blocks of 32 lanes (the compiled event loop,
the default for lane kernels), then times ``save_trace`` and ``bubbles()`` in this process and
reports the file size and the process's peak RSS (``resource.getrusage``: the maximum resident
set of this process over its whole life, so the simulation's own peak is printed first, before
the export, to tell the two apart). Run each format in its own process for a clean peak.
"""
import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import pypto_sim as pto

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import vector_add  # noqa: E402


def peak_mb() -> float:
    """This process's peak resident set so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=100_000)
    ap.add_argument("--format", default="json", choices=("json", "perfetto"))
    ap.add_argument("--skip-bubbles", action="store_true")
    ns = ap.parse_args()
    n = ns.blocks * 32
    a = pto.alloc_tensor(n * 4)
    b = pto.alloc_tensor(n * 4)
    o = pto.alloc_tensor(n * 4)
    pto.memcpy_h2d(a, np.ones(n, np.float32))
    pto.memcpy_h2d(b, np.ones(n, np.float32))
    t0 = time.perf_counter()
    prof = pto.profile(vector_add, grid=(ns.blocks, 1, 1), block=(32, 1, 1), args=(a, b, o, n))
    t1 = time.perf_counter()
    print(f"profile: {ns.blocks} blocks, {len(prof.records)} warp-instructions, "
          f"{prof.total_cycles} cycles, {t1 - t0:.1f} s, peak RSS so far {peak_mb():.0f} MB")
    suffix = ".json" if ns.format == "json" else ".perfetto-trace"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"trace{suffix}"
        t0 = time.perf_counter()
        kwargs = {} if ns.format == "json" else {"format": "perfetto"}
        prof.save_trace(path, **kwargs)
        t1 = time.perf_counter()
        size = os.path.getsize(path)
        print(f"save_trace ({ns.format}): {t1 - t0:.2f} s, {size / 1e6:.0f} MB, "
              f"peak RSS {peak_mb():.0f} MB")
    if not ns.skip_bubbles:
        t0 = time.perf_counter()
        report = prof.bubbles()
        t1 = time.perf_counter()
        print(f"bubbles(): {t1 - t0:.2f} s, {len(report)} bubbles, {report.idle_cycles} idle cycles, "
              f"peak RSS {peak_mb():.0f} MB")


if __name__ == "__main__":
    main()
