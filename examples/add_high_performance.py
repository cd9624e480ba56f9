"""The Add of CANN's Ascend C performance-tuning sample (asc-devkit, mirror-cann/asc-devkit@82b89a15
examples/01_simd_cpp_api/05_best_practices/00_vector_compute/add_high_performance: add.asc and
README.md), ported as its source writes cases 1 to 4: z = x + y on two [8192, 8192] half tensors,
rows split evenly over the AIVs (splitM; the first totalM % splitM cores take one row more), each
core walking its contiguous elements in DataCopy's of dataCopyLen halves (the last one shorter):
TLOAD x, TLOAD y, MTE2 -> V, TADD, V -> MTE3, TSTORE z, with add.asc's flags (event 0, and
events 0 / 1 on ping / pong buffers in ProcessDoubleBuffer).

    case 1  ProcessSingle        1 AIV    dataCopyLen 4096  (8 KiB a DataCopy)
    case 2  Process             48 AIVs   dataCopyLen 4096
    case 3  Process             48 AIVs   dataCopyLen 16384 (32 KiB)
    case 4  ProcessDoubleBuffer 48 AIVs   dataCopyLen 16384, ping / pong

The README measured each on Atlas A2 training products (Task Duration, aiv_time and the vec,
scalar, mte2 and mte3 times and ratios); benchmarks/published.py compares them. Cases 5 and 6
are not run: they differ from case 4 only by an L2 cache-mode hint on x and y
(SetL2CacheHint(CACHE_MODE_DISABLE)) and by UB addresses chosen against bank conflicts, neither
of which the simulator models. Case 0 (a scalar loop of GetValue / SetValue) is not ported.

Differences forced by the simulator, none of which changes a byte moved or an instruction run:
tiles are placed by the compiler (add.asc TASSIGNs fixed UB addresses), and the shorter last
DataCopy of a core moves a tsubview of its buffer (add.asc passes curLen to the same tensors).

Run:  python examples/add_high_performance.py [case]      (default 1)
"""
import sys

import numpy as np

import pypto_sim as pto

TOTAL_M = TOTAL_N = 8192
AIV_CORES = 48
# case -> (splitM: AIVs, dataCopyLen: halves a DataCopy, double buffered)
CASES = {1: (1, 4096, False), 2: (AIV_CORES, 4096, False), 3: (AIV_CORES, 16384, False),
         4: (AIV_CORES, 16384, True)}


def core_rows(split_m, total_m=TOTAL_M):
    """Init's even split: rows of each core (the first total_m % split_m take one more)."""
    base, extra = divmod(total_m, split_m)
    return [base + (1 if c < extra else 0) for c in range(split_m)]


@pto.kernel
def step(X, Y, Z, s, x, y, z, ev, first, last, double):
    """One loop of Process / ProcessSingle (double 0) or ProcessDoubleBuffer (double 1, ev the
    buffer's event): load x and y at element s, add, store z."""
    if double or not first:
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, ev)
    pto.tload(x, X + s)
    pto.tload(y, Y + s)
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, ev)
    pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, ev)
    if double or not first:
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, ev)
    pto.tadd(z, x, y)
    if double or not last:
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, ev)
    pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, ev)
    pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, ev)
    pto.tstore(Z + s, z)
    if double or not last:
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, ev)


def make_kernel(copy_len, tail_len, double):
    """The kernel of one case: tiles of copy_len halves (two sets when double buffered), of
    which a core's last DataCopy moves the first tail_len when its elements are not whole ones."""

    @pto.kernel(sync="manual")
    def add_custom(X, Y, Z, total_m, total_n, cores):
        with pto.vector():
            core = pto.get_block_id() * 2 + pto.get_subblock_id()
            if core < cores:
                base = total_m // cores
                extra = total_m % cores
                rows = base
                start_row = extra * (base + 1) + (core - extra) * base
                if core < extra:
                    rows = base + 1
                    start_row = core * (base + 1)
                start = start_row * total_n
                n = rows * total_n // copy_len
                has_tail = 0
                if rows * total_n % copy_len != 0:
                    has_tail = 1
                total = n + has_tail
                x0 = pto.alloc_tile(1, copy_len, pto.float16, loc=pto.Vec)
                y0 = pto.alloc_tile(1, copy_len, pto.float16, loc=pto.Vec)
                z0 = pto.alloc_tile(1, copy_len, pto.float16, loc=pto.Vec)
                if double:
                    x1 = pto.alloc_tile(1, copy_len, pto.float16, loc=pto.Vec)
                    y1 = pto.alloc_tile(1, copy_len, pto.float16, loc=pto.Vec)
                    z1 = pto.alloc_tile(1, copy_len, pto.float16, loc=pto.Vec)
                    pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
                    pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
                    pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 0)
                    pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
                    for i in range(n):
                        if i % 2 == 1:
                            step(X, Y, Z, start + i * copy_len, x1, y1, z1, 1, 0, 0, 1)
                        else:
                            step(X, Y, Z, start + i * copy_len, x0, y0, z0, 0, 0, 0, 1)
                else:
                    for i in range(n):
                        step(X, Y, Z, start + i * copy_len, x0, y0, z0, 0, i == 0, i == total - 1, 0)
                if has_tail:            # the shorter last DataCopy, into the buffer's first tail_len
                    s = start + n * copy_len
                    if double and n % 2 == 1:
                        step(X, Y, Z, s, pto.tsubview(x1, 0, 0, 1, tail_len), pto.tsubview(y1, 0, 0, 1, tail_len),
                             pto.tsubview(z1, 0, 0, 1, tail_len), 1, 0, 0, 1)
                    else:
                        step(X, Y, Z, s, pto.tsubview(x0, 0, 0, 1, tail_len), pto.tsubview(y0, 0, 0, 1, tail_len),
                             pto.tsubview(z0, 0, 0, 1, tail_len), 0, n == 0, 1, double)
                if double:
                    pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
                    pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
                    pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 0)
                    pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)

    return add_custom


def tail_length(case, total_m=TOTAL_M, total_n=TOTAL_N):
    """The length of the shorter last DataCopy the cores of a case have (GetTotalBlocks'
    DivCeil; 16, unused, when every core's elements are whole DataCopy's)."""
    split_m, copy_len, _ = CASES[case]
    rests = {rows * total_n % copy_len for rows in core_rows(split_m, total_m)} - {0}
    if len(rests) > 1:
        raise ValueError(f"case {case}: the cores' last DataCopy's differ in length {sorted(rests)}")
    return rests.pop() if rests else 16


def run(case, total_m=TOTAL_M, total_n=TOTAL_N, values=True, seed=0, check=None):
    """Run a case on [total_m, total_n] halves (check: pto.profile's sanitizers); returns
    (z matches x + y or None with values off, profile)."""
    cores, copy_len, double = CASES[case]
    rng = np.random.default_rng(seed)
    n = total_m * total_n
    if values:
        x = rng.uniform(-1, 1, n).astype(np.float16)
        y = rng.uniform(-1, 1, n).astype(np.float16)
    X, Y, Z = (pto.alloc_tensor(n * 2, pto.float16) for _ in range(3))
    if values:
        pto.memcpy_h2d(X, x)
        pto.memcpy_h2d(Y, y)
    kernel = make_kernel(copy_len, tail_length(case, total_m, total_n), double)
    prof = pto.profile(kernel, grid=((cores + 1) // 2,), args=(X, Y, Z, total_m, total_n, cores),
                       values=values, check=check)
    ok = None
    if values:
        z = np.empty(n, np.float16)
        pto.memcpy_d2h(z, Z)
        ok = bool(np.array_equal(z, (x + y).astype(np.float16)))
    for t in (X, Y, Z):
        t.free()
    return ok, prof


if __name__ == "__main__":
    case = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    ok, prof = run(case, values=False)
    print(f"add_high_performance case {case}: {prof.total_cycles} cycles "
          f"({prof.total_cycles / (pto.machine().clock_ghz * 1e3):.1f} us)")
