"""The DataCopy streams of CANN's Ascend C sample data_copy (asc-devkit, mirror-cann/asc-devkit@82b89a15
examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy: data_copy_ub.h,
data_copy_l1.h, data_copy.asc and README.md), ported as its sources write them: a half matrix
[M, N] in GM read into one on-chip buffer, tile after tile, with no computation and no flags
(the copies follow each other on MTE2), rows split evenly over the cores.

    path  scenario  cores  tile        what it shows (README)
    UB    1         48     [1, 64]     a DataCopy of one 128-byte burst
    UB    2         48     [64, 64]    64 bursts of 128 bytes
    UB    3         48     [64, 1024]  64 bursts of 2 KiB (the machine table's HBM rate is read here)
    UB    5         48     [64, 1024]  the whole matrix read 4 times (302 MB: more than the L2 holds)
    UB    6         48     [64, 1024]  N split in 4, each quarter (75.5 MB) read 4 times: L2 reuse
    L1    1         24     [64, 64]    ND -> NZ into L1, 128-byte bursts
    L1    2         24     [64, 256]   512-byte bursts
    L1    4         24     [64, 1024]  the whole matrix 4 times
    L1    5         24     [64, 1024]  N split in 4, each quarter 4 times

The README measured each on Atlas A2/A3 (Task Duration; the MTE2 time and ratio for the
streams, the L2's read hits and miss-allocates for the repeats); benchmarks/published_copy.py
compares them. Not run:
- UB 4 and L1 3 (N = 12287): the last tile of each row is 1023 or 255 halves wide, a row of
  2046 or 510 bytes, and a view of the buffer with a valid width that is not a multiple of
  32 bytes is not built (the device pays 21.6% and 47.5% for the unaligned bursts, which the
  simulator has no cost for either);
- UB 7 and 8, L1 6 and 7 (every core reading the same [6144, 512] matrix): they switch the L2
  off for their reads (SetL2CacheHint(CACHE_MODE_DISABLE)), which the simulator does not model.

The buffer is placed by the compiler (the sources pin it at address 0); that changes no byte
moved and no instruction run.

Run:  python examples/data_copy.py [UB|L1] [scenario]      (default UB 3)
"""
import sys

import pypto_sim as pto

AIV_CORES, AIC_CORES = 48, 24
M = 12288
# (path, scenario) -> (N, tile rows, tile columns, how the rows are walked: once, whole4, split4)
SCENARIOS = {("UB", 1): (12288, 1, 64, "once"), ("UB", 2): (12288, 64, 64, "once"),
             ("UB", 3): (12288, 64, 1024, "once"),
             ("UB", 5): (12288, 64, 1024, "whole4"), ("UB", 6): (12288, 64, 1024, "split4"),
             ("L1", 1): (12288, 64, 64, "once"), ("L1", 2): (12288, 64, 256, "once"),
             ("L1", 4): (12288, 64, 1024, "whole4"),
             ("L1", 5): (12288, 64, 1024, "split4")}
WALKS = {"once": (1, 1), "whole4": (4, 1), "split4": (4, 4)}     # (repeats, parts of N)


@pto.kernel
def copy_rows(X, buf, row0, rows, tile_m, n_start, n_count, n, tile_n):
    """Process / RepeatCopy's inner loops: the tile_m-row tiles of rows [row0, row0 + rows),
    columns [n_start, n_start + n_count) in tile_n steps, each into the one buffer."""
    for m in range(row0, row0 + rows, tile_m):
        for c in range(0, n_count, tile_n):
            pto.tload(buf, X + m * n + n_start + c, stride=n)


@pto.kernel
def walk(X, buf, core, cores, m, n, tile_m, tile_n, repeats, parts):
    """Process (repeats = parts = 1), ProcessRepeatWhole4Times (4, 1) or
    ProcessSplitFourAndRepeat4Times (4, 4) on the core's M / cores rows, then PipeBarrier<PIPE_ALL>."""
    single_m = m // cores
    part_n = n // parts
    for p in range(parts):
        for r in range(repeats):
            copy_rows(X, buf, core * single_m, single_m, tile_m, p * part_n, part_n, n, tile_n)
    pto.pipe_barrier(pto.PIPE_ALL)


def make_kernel(path, scenario):
    """The kernel of one scenario: the AIV kernel_data_copy_pad_gm2ub (UB) or the AIC
    kernel_data_copy_gm2l1 (L1), with its tile and walk fixed as data_copy.asc fixes them;
    called with (X, M, N)."""
    _n, tile_m, tile_n, how = SCENARIOS[(path, scenario)]
    repeats, parts = WALKS[how]

    if path == "UB":
        @pto.kernel(sync="manual")
        def kernel_data_copy_pad_gm2ub(X, m, n):
            with pto.vector():
                buf = pto.alloc_tile(tile_m, tile_n, pto.float16, loc=pto.Vec)
                walk(X, buf, pto.get_block_id() * 2 + pto.get_subblock_id(), AIV_CORES, m, n, tile_m,
                     tile_n, repeats, parts)
        return kernel_data_copy_pad_gm2ub

    @pto.kernel(sync="manual")
    def kernel_data_copy_gm2l1(X, m, n):
        with pto.cube():
            buf = pto.alloc_tile(tile_m, tile_n, pto.float16, loc=pto.Mat)
            walk(X, buf, pto.get_block_id(), AIC_CORES, m, n, tile_m, tile_n, repeats, parts)
    return kernel_data_copy_gm2l1


def run(path, scenario, m=M, n=None, check=None):
    """Run one scenario on an [m, n] half matrix (n: the scenario's N; smaller shapes keep its
    tile, walk and core count; check: pto.profile's sanitizers); returns the profile. The
    copies leave GM as it was and the buffer's last contents are nobody's output, so there are
    no values to check: the simulation runs with values=False."""
    n = SCENARIOS[(path, scenario)][0] if n is None else n
    X = pto.alloc_tensor(m * n * 2, pto.float16)
    try:
        return pto.profile(make_kernel(path, scenario), grid=(AIC_CORES,), args=(X, m, n), values=False,
                           check=check)
    finally:
        X.free()


if __name__ == "__main__":
    where = sys.argv[1] if len(sys.argv) > 1 else "UB"
    which = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    prof = run(where, which)
    print(f"data_copy {where} scenario {which}: {prof.total_cycles} cycles "
          f"({prof.total_cycles / (pto.machine().clock_ghz * 1e3):.1f} us)")
