"""The DataCopy streams of CANN's Ascend C sample data_copy (asc-devkit, mirror-cann/asc-devkit@82b89a15
examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy: data_copy_ub.h,
data_copy_l1.h, data_copy.asc and README.md), ported as its sources write them: a half matrix
[M, N] in GM read into one on-chip buffer, tile after tile, with no computation and no flags
(the copies follow each other on MTE2), rows split evenly over the cores.

    path  scenario  cores  tile        what it shows (README)
    UB    1         48     [1, 64]     a DataCopy of one 128-byte burst
    UB    2         48     [64, 64]    64 bursts of 128 bytes
    UB    3         48     [64, 1024]  64 bursts of 2 KiB (the machine table's HBM rate is read here)
    UB    4         48     [64, 1024]  N = 12287: rows of 24,574 bytes, the last tile 1023 wide
    UB    5         48     [64, 1024]  the whole matrix read 4 times (302 MB: more than the L2 holds)
    UB    6         48     [64, 1024]  N split in 4, each quarter (75.5 MB) read 4 times: L2 reuse
    L1    1         24     [64, 64]    ND -> NZ into L1, 128-byte bursts
    L1    2         24     [64, 256]   512-byte bursts
    L1    3         24     [64, 256]   N = 12287: the same, unaligned, the last tile 255 wide
    L1    4         24     [64, 1024]  the whole matrix 4 times
    L1    5         24     [64, 1024]  N split in 4, each quarter 4 times

The README measured each on Atlas A2/A3 (Task Duration; the MTE2 time and ratio for the
streams, the L2's read hits and miss-allocates for the repeats); benchmarks/published_copy.py
compares them. UB 4 and L1 3 load each row band's last tile (curCols = N % tile columns, a
row of 2046 or 510 bytes) through a view of the buffer with that valid width, as the sources
shorten blockLen / dValue. Not run:
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
             ("L1", 5): (12288, 64, 1024, "split4"),
             ("UB", 4): (12287, 64, 1024, "once"), ("L1", 3): (12287, 64, 256, "once")}
WALKS = {"once": (1, 1), "whole4": (4, 1), "split4": (4, 4)}     # (repeats, parts of N)


@pto.kernel
def copy_rows(X, buf, row0, rows, tile_m, n_start, n_count, n, tile_n):
    """Process / RepeatCopy's inner loops: the tile_m-row tiles of rows [row0, row0 + rows),
    columns [n_start, n_start + n_count) in tile_n steps, each into the one buffer."""
    for m in range(row0, row0 + rows, tile_m):
        for c in range(0, n_count, tile_n):
            pto.tload(buf, X + m * n + n_start + c, stride=n)


@pto.kernel
def copy_rows_unaligned(X, buf, tail, row0, rows, tile_m, n, tile_n):
    """Process on a matrix whose N is not whole tiles (UB 4, L1 3): the tile_m-row tiles of rows
    [row0, row0 + rows), the whole tiles into buf and the last, n % tile_n columns wide
    (curCols: DataCopyParams.blockLen / Nd2NzParams.dValue), through tail, a view of buf with
    that valid width."""
    whole = n - n % tile_n
    for m in range(row0, row0 + rows, tile_m):
        for c in range(0, whole, tile_n):
            pto.tload(buf, X + m * n + c, stride=n)
        pto.tload(tail, X + m * n + whole, stride=n)


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


@pto.kernel
def process(X, buf, core, cores, m, n, tile_m, tile_n, repeats, parts, unaligned):
    """One core's part of a scenario: the walk (walk), or for an N that is not whole tiles,
    the rows with their narrower last tile (copy_rows_unaligned) through a view of buf whose
    valid width is n % tile_n, then PipeBarrier<PIPE_ALL>."""
    if unaligned:
        tail = pto.tsubview(buf, 0, 0, tile_m, tile_n, valid=(tile_m, n % tile_n))
        copy_rows_unaligned(X, buf, tail, core * (m // cores), m // cores, tile_m, n, tile_n)
        pto.pipe_barrier(pto.PIPE_ALL)
    else:
        walk(X, buf, core, cores, m, n, tile_m, tile_n, repeats, parts)


def make_kernel(path, scenario):
    """The kernel of one scenario: the AIV kernel_data_copy_pad_gm2ub (UB) or the AIC
    kernel_data_copy_gm2l1 (L1), with its tile and walk fixed as data_copy.asc fixes them;
    called with (X, M, N)."""
    _n, tile_m, tile_n, how = SCENARIOS[(path, scenario)]
    repeats, parts = WALKS[how]
    unaligned = _n % tile_n != 0

    if path == "UB":
        @pto.kernel(sync="manual")
        def kernel_data_copy_pad_gm2ub(X, m, n):
            with pto.vector():
                buf = pto.alloc_tile(tile_m, tile_n, pto.float16, loc=pto.Vec)
                process(X, buf, pto.get_block_id() * 2 + pto.get_subblock_id(), AIV_CORES, m, n, tile_m,
                        tile_n, repeats, parts, unaligned)
        return kernel_data_copy_pad_gm2ub

    @pto.kernel(sync="manual")
    def kernel_data_copy_gm2l1(X, m, n):
        with pto.cube():
            buf = pto.alloc_tile(tile_m, tile_n, pto.float16, loc=pto.Mat)
            process(X, buf, pto.get_block_id(), AIC_CORES, m, n, tile_m, tile_n, repeats, parts, unaligned)
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
