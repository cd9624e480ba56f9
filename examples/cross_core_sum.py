"""A sum over every AI core of the launch in one kernel, the two phases ordered by pto.syncall
(pto-isa's SYNCALL, hard mode): each of the 48 AIVs (24 AI cores) sums the columns of its
16 x 64 block of x into a row of partial sums in GM; after the barrier AIV0 of core 0 loads the
48 rows, sums their columns and then the 64 column sums into out[0].

Without the barrier the second phase would read partial sums other cores have not written yet:
check="race" reports it (tests/test_syncall.py runs this example both ways).

Run:  python examples/cross_core_sum.py
"""
import numpy as np

import pypto_sim as pto

CORES, AIVS = 24, 48
ROWS, COLS = 16, 64


def cross_core_sum(barrier=True):
    """The kernel; barrier=False leaves the pto.syncall out (to show the race it prevents)."""

    @pto.kernel(sync="manual")
    def kernel(x, partial, out):
        with pto.vector():
            idx = pto.get_block_id() * 2 + pto.get_subblock_id()
            block = pto.alloc_tile(ROWS, COLS, pto.float32)
            colsum = pto.alloc_tile(1, COLS, pto.float32)
            pto.tload(block, x + idx * ROWS * COLS)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tcolsum(colsum, block)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(partial + idx * COLS, colsum)
            if barrier:
                pto.syncall()                     # every AIV's row is in GM after this
            if idx == 0:
                rows = pto.alloc_tile(AIVS, COLS, pto.float32)
                total = pto.alloc_tile(1, 8, pto.float32)
                pto.pipe_barrier(pto.PIPE_ALL)
                pto.tload(rows, partial)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 1)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 1)
                pto.tcolsum(colsum, rows)
                pto.pipe_barrier(pto.PIPE_V)
                pto.trowsum(total, colsum)        # into the first column of a RowMajor tile
                pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
                pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
                pto.tstore(out, total)
    return kernel


def run(barrier=True, check=()):
    """Sum a random x on the simulated NPU; returns (the device's sum, numpy's float64 sum, the profile)."""
    x = np.random.default_rng(0).random(AIVS * ROWS * COLS, dtype=np.float32)
    d_x = pto.to_device(x)
    partial = pto.to_device(np.zeros(AIVS * COLS, np.float32))
    out = pto.to_device(np.zeros(8, np.float32))
    prof = pto.profile(cross_core_sum(barrier), grid=(CORES,), args=(d_x, partial, out), check=check)
    got = np.empty(8, np.float32)
    pto.memcpy_d2h(got, out)
    return float(got[0]), float(x.astype(np.float64).sum()), prof


if __name__ == "__main__":
    total, expected, prof = run(check=("race", "sync"))
    print(f"sum over {AIVS} AIVs: {total:.3f} (numpy {expected:.3f}), {prof.total_cycles} cycles")
    waits = [b for b in prof.bubbles(unit="AIV0", pipe="MTE2", core=0) if b.kind == "syncall"]
    print(f"core 0 AIV0 waited {sum(b.end - b.start for b in waits)} cycles at the barrier: {waits[0].text}")
