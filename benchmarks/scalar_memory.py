"""Benchmark (run by hand, not a test): the AI core's scalar unit reading a routing table from GM
through its DataCache and gathering the rows it names, as a MoE dispatch does.

    python benchmarks/scalar_memory.py [--cores 24] [--rows 256] [--repeat 3]

Each of the 2 x cores AIVs reads --rows int32 indices from GM one at a time (g[i]: SLD_GM, a
64-byte line filled every 16 indices), TLOADs the 1 x 64 float32 row each names, adds the
index, and TSTOREs it to its own output rows; values are checked against numpy. Printed: the best
wall time of --repeat profiles after a warm-up (the SimPy model runs these launches), the scalar
loads and tile instructions, the cycles, and instructions per second.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pypto_sim as pto  # noqa: E402

COLS = 64


def gather_kernel(rows):
    """Each AIV: for its rows, idx = table[row]; out[row] = src[idx] + idx."""

    @pto.kernel(sync="manual")
    def gather(out, src, table):
        with pto.vector():
            unit = pto.get_block_id() * 2 + pto.get_subblock_id()
            x = pto.alloc_tile(1, COLS, pto.float32)
            for r in range(rows):
                row = unit * rows + r
                idx = table[row]
                pto.set_flag(pto.PIPE_S, pto.PIPE_MTE2, 0)
                pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE2, 0)
                pto.tload(x, src + idx * COLS)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
                pto.tadds(x, x, pto.cast(idx, pto.float32))
                pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.tstore(out + row * COLS, x)
                pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
                pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
    return gather


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=24)
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    a = parser.parse_args()
    units, n_src = 2 * a.cores, 1024
    rng = np.random.default_rng(0)
    table = rng.integers(0, n_src, units * a.rows).astype(np.int32)
    src = rng.standard_normal((n_src, COLS)).astype(np.float32)
    args = (pto.to_device(np.zeros((units * a.rows, COLS), np.float32)), pto.to_device(src), pto.to_device(table))
    kernel = gather_kernel(a.rows)
    prof = pto.profile(kernel, grid=(a.cores,), args=args)
    got = np.empty((units * a.rows, COLS), np.float32)
    pto.memcpy_d2h(got, args[0])
    np.testing.assert_array_equal(got, src[table] + table[:, None].astype(np.float32))
    best = float("inf")
    for _ in range(a.repeat):
        t = time.perf_counter()
        prof = pto.profile(kernel, grid=(a.cores,), args=args)
        best = min(best, time.perf_counter() - t)
    names = np.array(prof.pc_name)[prof.records.pc]
    scalar = int(np.isin(names, ["SLD_GM", "SST_GM", "SLD_UB", "SST_UB", "DCCI"]).sum())
    tiles = int(np.char.startswith(names.astype(str), "T").sum())
    print(f"{a.cores} cores, {units} AIVs x {a.rows} rows: best of {a.repeat} {best:.3f} s, {scalar} scalar loads, "
          f"{tiles} tile instructions, {prof.total_cycles} cycles, {(scalar + tiles) / best:,.0f} of them a second")


if __name__ == "__main__":
    main()
