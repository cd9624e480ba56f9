"""Benchmark (run by hand, not a test): a launch of every AI core that exchanges rows through GM
between pto.syncall rounds, timed on each engine that can run it.

    python benchmarks/syncall.py [--cores 24] [--rounds 64] [--repeat 3]

Each of the 2 x cores AIVs, in each round, loads its neighbour's 16 x 64 float32 row block (the
one the previous round's neighbour wrote), adds 1, stores it as its own and meets the others at
pto.syncall('aiv'); the AICs meet them at pto.syncall('mix') every 8 rounds. Values are checked
against numpy. Printed per engine (PYPTO_TIMING_ENGINE=simpy, then auto): the best wall time of
--repeat profiles after a warm-up, the tile instructions, the cycles, and tile instructions per
second.
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pypto_sim as pto  # noqa: E402

ROWS, COLS = 16, 64


def exchange_kernel(rounds, units):
    """rounds of: x <- the row block of AIV (idx + 1) % units, plus 1; then syncall."""

    @pto.kernel(sync="manual")
    def exchange(buf):
        with pto.cube():
            for r in range(rounds):
                if r % 8 == 7:
                    pto.syncall("mix")
        with pto.vector():
            idx = pto.get_block_id() * 2 + pto.get_subblock_id()
            x = pto.alloc_tile(ROWS, COLS, pto.float32)
            for r in range(rounds):
                src = (r % 2) * units + (idx + 1) % units
                dst = ((r + 1) % 2) * units + idx
                pto.tload(x, buf + src * ROWS * COLS)
                pto.pipe_barrier(pto.PIPE_ALL)
                pto.tadds(x, x, 1.0)
                pto.pipe_barrier(pto.PIPE_ALL)
                pto.tstore(buf + dst * ROWS * COLS, x)
                pto.syncall()
                if r % 8 == 7:
                    pto.syncall("mix")
    return exchange


def expected(start, rounds, units):
    """numpy: after each round, block idx holds the previous block (idx + 1) % units, plus 1."""
    cur = start.copy()
    for _ in range(rounds):
        cur = np.roll(cur, -1, axis=0) + 1
    return cur


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    units = 2 * a.cores
    kernel = exchange_kernel(a.rounds, units)
    start = np.random.default_rng(0).random((units, ROWS, COLS), dtype=np.float32)
    for engine in ("simpy", "auto"):
        os.environ["PYPTO_TIMING_ENGINE"] = engine
        best = None
        for rep in range(a.repeat + 1):
            host = np.zeros((2, units, ROWS, COLS), np.float32)
            host[0] = start
            buf = pto.to_device(host.reshape(-1))
            t0 = time.perf_counter()
            prof = pto.profile(kernel, grid=(a.cores,), args=(buf,))
            wall = time.perf_counter() - t0
            if rep:                        # the first is the warm-up
                best = wall if best is None else min(best, wall)
        got = np.empty_like(host)
        pto.memcpy_d2h(got, buf)
        np.testing.assert_allclose(got[a.rounds % 2], expected(start, a.rounds, units), rtol=1e-6)
        names = np.asarray(prof.pc_name)[prof.records.pc]
        tiles = int(np.isin(names, ("TLOAD", "TADDS", "TSTORE")).sum())
        print(f"{engine:>5}: {best:.3f} s, {tiles} tile instructions, {prof.total_cycles} cycles, "
              f"{tiles / best:,.0f} tile instructions/s")


if __name__ == "__main__":
    main()
