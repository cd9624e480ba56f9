"""pto-isa's on-device A2/A3 suites of the collectives TBROADCAST, TGATHER, TSCATTER and TREDUCE
(tests/npu/a2a3/comm/st/testcase/tbroadcast, tgather, tscatter, treduce at 3186c381: main.cpp's
TEST cases, *_kernel.cpp), ported to one simulated device; each test is named after its C++
case (Suite.Case).

On the board each rank is a process with its own NPU and its HCCL window (windowsIn: memory
every rank can address) holds 64 int32 of sync words (HCCL_WIN_SYNC_PREFIX), then the case's
buffers (WindowAlloc in the order the case allocates them); a rank reaches another's window
through CommRemotePtr and builds the ParallelGroup from those pointers. Here the ranks are the
blocks of one launch (rank = pto.get_block_id()) and their windows lie one after another in one
GM tensor, so rank r's entry of the group is that tensor plus r's window offset, and the root's
call is the suite's own (the same shapes, staging tiles - all of DYNAMIC valid region,
`Tile<..., -1, -1>` - forms and roots: the group's root is the kernel's `root` argument where
the C++ kernel passes it, a constant here, and `my_rank` where it passes that, pto.get_block_id()
here). What the suites do around the kernel is host-side here: the WindowMemCopyIn launches are
the host's writes of the windows, the WindowMemCopyOut / aclrtMemcpy reads the host's reads
(the HcclHostBarrier between phases is the launch's end). TREDUCE's output is a device buffer
of each rank's own (aclrtMalloc), here after the windows.

- TBROADCAST: the root's input is static_cast<T>(i + root * 100), the others' 0; every rank's
  output must hold the root's input.
- TGATHER: rank r's input is i + r * 10000 (the LargeShape and PingPong cases: i + r * 100); the
  root's dst, filled with -1, must hold rank r's input at rows r * H... EmptyRows (0 rows) leaves
  it -1.
- TSCATTER: the root's src holds rank r's part at rows r * H..; every rank's dst (filled with -1)
  must hold its part; EmptyRows leaves it -1.
- TREDUCE: rank r's input is i + r * 100; the root's output must be ReduceExpected (Sum, Max or
  Min of the ranks' elements, in T); EmptyRows leaves it -1.

The CPU simulation's suites tests/cpu/comm/st/testcase/tgather and tscatter have these TGATHER
and TSCATTER cases word for word (their kernels differ from these in the launch syntax only), so
the tests below stand for them too; tests/test_ptoisa_cpu_comm_collectives.py ports the CPU
suites of TBROADCAST and TREDUCE. Every case is portable. The link between NPUs is not
modelled: a remote window is priced as local GM.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import host_copy

PREFIX_BYTES = 64 * 4           # the windows' sync words: 64 int32

# (Suite.Case, dtype, rows, cols, tile rows, ranks, root, group root, form, input base):
# rows x cols is each rank's slice (rows 0: EmptyRows), the tile tile_rows x cols; group root
# "root": the kernel's root argument, "rank": my_rank; form "" one staging tile, "pp" two
_BASIC = [("FloatSmall_4Ranks", "float32", 1, 256, 1, 4, 0), ("Int32Large", "int32", 1, 4096, 1, 2, 0),
          ("Uint8Small", "uint8", 1, 512, 1, 2, 0), ("Root1_FloatSmall", "float32", 1, 256, 1, 2, 1),
          ("EmptyRows_FloatSmall", "float32", 0, 256, 1, 2, 0)]
_LARGE = [("Int32_128x32_tile16_2ranks", "int32", 128, 32, 16, 2), ("Int32_128x32_tile16_4ranks", "int32", 128, 32,
                                                                     16, 4),
          ("Float_256x64_tile32_2ranks", "float32", 256, 64, 32, 2), ("Int32_512x32_tile64_2ranks", "int32", 512,
                                                                       32, 64, 2)]
_PING_PONG = [c for c in _LARGE if c[0] != "Int32_512x32_tile64_2ranks"]


def _gather_like(suite):
    """TGATHER's and TSCATTER's cases (main.cpp): the basic ones with the root argument, the
    LargeShape and PingPong ones with my_rank and root 0."""
    return ([(f"{suite}.{n}", dt, r, c, tr, k, root, "root", "", 10000) for n, dt, r, c, tr, k, root in _BASIC]
            + [(f"{suite}LargeShape.{n}", dt, r, c, tr, k, 0, "rank", "", 100) for n, dt, r, c, tr, k in _LARGE]
            + [(f"{suite}PingPong.{n}", dt, r, c, tr, k, 0, "rank", "pp", 100) for n, dt, r, c, tr, k in _PING_PONG])


BROADCAST_CASES = [
    ("TBroadCast.FloatSmallRoot0_4Ranks", "float32", 1, 256, 1, 4, 0, "rank", "", 100),
    ("TBroadCast.Int32LargeRoot1", "int32", 1, 4096, 1, 2, 1, "rank", "", 100)] + [
    (f"TBroadCast.{form}_{name}", dt, r, c, tr, k, root, "rank", "pp" if form == "PingPong" else "", 100)
    for form, name, dt, r, c, tr, k, root in [
        ("LargeShape", "Int32_128x32_tile16_Root0", "int32", 128, 32, 16, 2, 0),
        ("LargeShape", "Int32_128x32_tile16_Root0_4Ranks", "int32", 128, 32, 16, 4, 0),
        ("LargeShape", "Float_256x64_tile32_Root0", "float32", 256, 64, 32, 2, 0),
        ("LargeShape", "Int32_512x32_tile64_Root0", "int32", 512, 32, 64, 2, 0),
        ("LargeShape", "Int32_512x32_tile64_Root0_8Ranks", "int32", 512, 32, 64, 8, 0),
        ("LargeShape", "Int32_128x32_tile16_Root1", "int32", 128, 32, 16, 2, 1),
        ("PingPong", "Int32_128x32_tile16_Root0", "int32", 128, 32, 16, 2, 0),
        ("PingPong", "Int32_128x32_tile16_Root0_4Ranks", "int32", 128, 32, 16, 4, 0),
        ("PingPong", "Float_256x64_tile32_Root0", "float32", 256, 64, 32, 2, 0),
        ("PingPong", "Int32_128x32_tile16_Root1", "int32", 128, 32, 16, 2, 1),
        ("PingPong", "Float_256x64_tile32_Root0_8Ranks", "float32", 256, 64, 32, 8, 0)]]
GATHER_CASES = _gather_like("TGather")
SCATTER_CASES = _gather_like("TScatter")
# TREDUCE: (Suite.Case, dtype, rows, cols, tile rows, ranks, root, group root, form, op)
REDUCE_CASES = [(f"TReduce.{n}", dt, r, c, 1, k, root, "root", "", op) for n, dt, r, c, k, root, op in [
    ("FloatSmall_Sum_4Ranks", "float32", 1, 256, 4, 0, "sum"), ("FloatSmall_Sum_8Ranks", "float32", 1, 256, 8, 0,
                                                                 "sum"),
    ("Int32Large_Sum", "int32", 1, 4096, 2, 0, "sum"), ("Int32Large_Sum_8Ranks", "int32", 1, 4096, 8, 0, "sum"),
    ("Int32Small_Sum", "int32", 1, 512, 2, 0, "sum"), ("Int32Small_Sum_8Ranks", "int32", 1, 512, 8, 0, "sum"),
    ("Int32Small_Max", "int32", 1, 256, 2, 0, "max"), ("Int32Small_Max_8Ranks", "int32", 1, 256, 8, 0, "max"),
    ("Int32Small_Min", "int32", 1, 256, 2, 0, "min"), ("Int32Small_Min_8Ranks", "int32", 1, 256, 8, 0, "min"),
    ("Root1_FloatSmall_Sum", "float32", 1, 256, 2, 1, "sum"), ("EmptyRows_FloatSmall_Sum", "float32", 0, 256, 2, 0,
                                                               "sum")]] + [
    (f"TReduce.{form}_{n}", dt, r, c, tr, k, 0, "rank", "pp" if form == "PingPong" else "", op)
    for form, n, dt, r, c, tr, k, op in [
        ("LargeShape", "Int32_128x32_tile16_Sum", "int32", 128, 32, 16, 2, "sum"),
        ("LargeShape", "Int32_128x32_tile16_Sum_4Ranks", "int32", 128, 32, 16, 4, "sum"),
        ("LargeShape", "Float_256x64_tile32_Sum", "float32", 256, 64, 32, 2, "sum"),
        ("LargeShape", "Int32_128x32_tile16_Max", "int32", 128, 32, 16, 2, "max"),
        ("LargeShape", "Int32_512x32_tile64_Sum", "int32", 512, 32, 64, 2, "sum"),
        ("LargeShape", "Int32_512x32_tile64_Sum_8Ranks", "int32", 512, 32, 64, 8, "sum"),
        ("PingPong", "Int32_128x32_tile16_Sum", "int32", 128, 32, 16, 2, "sum"),
        ("PingPong", "Int32_128x32_tile16_Sum_4Ranks", "int32", 128, 32, 16, 4, "sum"),
        ("PingPong", "Float_256x64_tile32_Sum", "float32", 256, 64, 32, 2, "sum"),
        ("PingPong", "Int32_128x32_tile16_Max", "int32", 128, 32, 16, 2, "max"),
        ("PingPong", "Float_256x64_tile32_Sum_8Ranks", "float32", 256, 64, 32, 8, "sum")]]

KERNEL = '''
@pto.kernel(sync="manual")
def k(shmem):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            rank = pto.get_block_id()
{tiles}            group = pto.parallel_group([shmem + r * {win} + {at} for r in range({ranks})], {group_root})
            if rank == {root}:
                pto.comm.{op}(group, shmem + {local}, {operands}, rows={rows}, cols={cols}{pong})
            pto.pipe_barrier(pto.PIPE_ALL)
'''

# per collective: the buffers of a window in WindowAlloc's order, by their sizes in slices
# (n: one per rank), the buffer the group's entries point at, the caller's own buffer
LAYOUT = {"tbroadcast": ((("in", 1), ("out", 1)), "out", "in"),
          "tgather": ((("src", 1), ("dst", "n")), "src", "dst"),
          "tscatter": ((("src", "n"), ("dst", 1)), "dst", "src"),
          "treduce": ((("in", 1),), "in", "output")}


def windows(op, dtype, total, ranks):
    """(window size, buffer -> offset in a window) in elements: the sync words, then the buffers."""
    at, off = {}, PREFIX_BYTES // np.dtype(dtype).itemsize
    for name, size in LAYOUT[op][0]:
        at[name], off = off, off + total * (ranks if size == "n" else 1)
    return off, at


def build(make_kernels, op, case):
    """The suite's kernel for one case: the root's call on the group of the ranks' windows."""
    _name, dtype, rows, cols, tr, ranks, root, group_root, form, extra = case
    total = max(rows, 1) * cols
    win, at = windows(op, dtype, total, ranks)
    names = ("acc", "recv", "pong")[:3 if form == "pp" else 2] if op == "treduce" else ("a", "b")[:2 if form else 1]
    tiles = "".join(f"            {n} = pto.alloc_tile({tr}, {cols}, pto.{dtype}, loc=pto.Vec, valid=({tr}, {cols}))\n"
                    for n in names)
    local = (f"{ranks * win} + rank * {total}" if op == "treduce" else f"rank * {win} + {at[LAYOUT[op][2]]}")
    operands = "acc, recv, " + repr(extra) if op == "treduce" else "a"
    pong = (", pong=pong" if op == "treduce" else ", pong=b") if form == "pp" else ""
    source = KERNEL.format(tiles=tiles, win=win, at=at[LAYOUT[op][1]], ranks=ranks,
                           group_root=root if group_root == "root" else "rank", root=root, op=op, local=local,
                           operands=operands, rows=rows, cols=cols, pong=pong)
    return make_kernels(source).k


def cast(values, dtype):
    """static_cast<T> of int64 values: integers wrap as C++'s conversion does."""
    return values.astype(np.float64 if np.dtype(dtype).kind == "f" else np.int64).astype(dtype)


def run(make_kernels, op, case, fill):
    """Lay the windows out as the suite's host code leaves them (fill(shmem, win, at, total)),
    launch the ranks with check="all", return the GM tensor read back, the window size and the
    buffers' offsets."""
    dtype, rows, cols, ranks = case[1], case[2], case[3], case[5]
    total = max(rows, 1) * cols
    win, at = windows(op, dtype, total, ranks)
    shmem = np.zeros(ranks * win + (ranks * total if op == "treduce" else 0), dtype)
    fill(shmem, win, at, total)
    t = pto.alloc_tensor(shmem.nbytes, getattr(pto, dtype))
    pto.memcpy_h2d(t, shmem)
    pto.launch(build(make_kernels, op, case), grid=(ranks,), args=(t,), check="all")
    return host_copy(t, shmem.shape, dtype), win, at, total


@pytest.mark.parametrize("case", BROADCAST_CASES, ids=[c[0] for c in BROADCAST_CASES])
def test_tbroadcast_suite(make_kernels, case):
    """RunBroadCast*: every rank's output holds the root's input, i + root * 100."""
    dtype, ranks, root = case[1], case[5], case[6]

    def fill(shmem, win, at, total):
        shmem[root * win + at["in"]:][:total] = cast(np.arange(total) + root * 100, dtype)
    out, win, at, total = run(make_kernels, "tbroadcast", case, fill)
    want = cast(np.arange(total) + root * 100, dtype)
    for r in range(ranks):
        np.testing.assert_array_equal(out[r * win + at["out"]:][:total], want, err_msg=f"rank {r}")


@pytest.mark.parametrize("case", GATHER_CASES, ids=[c[0] for c in GATHER_CASES])
def test_tgather_suite(make_kernels, case):
    """RunGather*: the root's dst holds rank r's input, i + r * base, at rows r * H..; with no
    rows it keeps its -1s."""
    dtype, rows, ranks, root, base = case[1], case[2], case[5], case[6], case[9]

    def fill(shmem, win, at, total):
        for r in range(ranks):
            shmem[r * win + at["src"]:][:total] = cast(np.arange(total) + r * base, dtype)
        shmem[root * win + at["dst"]:][:ranks * total] = cast(np.full(ranks * total, -1), dtype)
    out, win, at, total = run(make_kernels, "tgather", case, fill)
    got = out[root * win + at["dst"]:][:ranks * total]
    want = [cast(np.arange(total) + r * base, dtype) for r in range(ranks)] if rows else \
        [cast(np.full(total, -1), dtype)] * ranks
    np.testing.assert_array_equal(got.reshape(ranks, total), want)


@pytest.mark.parametrize("case", SCATTER_CASES, ids=[c[0] for c in SCATTER_CASES])
def test_tscatter_suite(make_kernels, case):
    """RunScatter*: every rank's dst holds its part of the root's src, i + rank * base; with no
    rows the -1s it was filled with."""
    dtype, rows, ranks, root, base = case[1], case[2], case[5], case[6], case[9]

    def fill(shmem, win, at, total):
        shmem[root * win + at["src"]:][:ranks * total] = cast(np.arange(ranks * total) % total
                                                              + np.arange(ranks * total) // total * base, dtype)
        for r in range(ranks):
            shmem[r * win + at["dst"]:][:total] = cast(np.full(total, -1), dtype)
    out, win, at, total = run(make_kernels, "tscatter", case, fill)
    for r in range(ranks):
        want = cast(np.arange(total) + r * base, dtype) if rows else cast(np.full(total, -1), dtype)
        np.testing.assert_array_equal(out[r * win + at["dst"]:][:total], want, err_msg=f"rank {r}")


@pytest.mark.parametrize("case", REDUCE_CASES, ids=[c[0] for c in REDUCE_CASES])
def test_treduce_suite(make_kernels, case):
    """RunReduce*: the root's output is ReduceExpected(i, n, op): i, then each rank r's i + r * 100
    summed (in T), or the largest or smallest; with no rows it keeps its -1s."""
    dtype, rows, ranks, root, op = case[1], case[2], case[5], case[6], case[9]

    def fill(shmem, win, at, total):
        for r in range(ranks):
            shmem[r * win + at["in"]:][:total] = cast(np.arange(total) + r * 100, dtype)
        shmem[ranks * win + root * total:][:total] = cast(np.full(total, -1), dtype)
    out, win, at, total = run(make_kernels, "treduce", case, fill)
    want = cast(np.arange(total), dtype)
    for r in range(1, ranks):
        val = cast(np.arange(total) + r * 100, dtype)
        want = {"sum": want + val, "max": np.maximum(want, val), "min": np.minimum(want, val)}[op].astype(dtype)
    if not rows:
        want = cast(np.full(total, -1), dtype)
    np.testing.assert_array_equal(out[ranks * win + root * total:][:total], want)
