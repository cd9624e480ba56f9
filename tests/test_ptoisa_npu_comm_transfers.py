"""pto-isa's on-device A2/A3 suites of TPUT and TGET (tests/npu/a2a3/comm/st/testcase/tput and
tget at 3186c381: main.cpp's TEST cases, tput_kernel.cpp / tget_kernel.cpp), ported to one
simulated device.

On the board each rank is a process with its own NPU, and its window (HCCL's windowsIn, shared
memory every rank can address) holds 64 int32 of sync words, then the send buffer, then the
receive buffer (`shmem_data = shmem + 64 * sizeof(int32_t)`, send at + 0, recv at + count); a
rank reaches another's window through CommRemotePtr. Here the ranks are the blocks of one launch
(rank = pto.get_block_id()) and their windows lie one after another in one GM tensor, so a remote
pointer is that tensor plus the peer's window offset: the TPUT / TGET the kernels issue are the
suites' own (the same GlobalTensor shapes, staging tiles and forms). What the suites do around
them is host-side here: phase 0's copy of each rank's input into its send buffer is the host's
write of the window, and phase 1's copy of the receive buffer to the output is the host's read of
it (each phase is its own launch on the board, separated by HcclHostBarrier; here the launch
completes before the host reads). Input element i of rank r is static_cast<T>(i + r * 10000), as
the suites fill it.

- TPUT ring: rank r puts its send buffer into rank r - 1's receive buffer; rank r then holds rank
  r + 1's input. AtomicAdd: every rank puts its input with AtomicType::AtomicAdd into rank 0's
  receive buffer (at the window's data start), which then holds n * i + 10000 * n (n - 1) / 2.
- TGET ring: rank r gets rank r + 1's send buffer into its own receive buffer.

The MultiDim cases' GlobalTensor is 5-D (d0 x d1 x d2 x d3 x cols, dense strides); pto.tput takes
one 2-D slice a call, and a dense 5-D tensor whose d3 is a multiple of the tile's rows is the
(d0 d1 d2 d3) x cols slice: TPUT_IMPL issues the same chunks in the same order (its outer loops
start each d3 slice where the previous one ended, and each slice's row chunks are whole). The
link between NPUs is not modelled: a remote window is priced as local GM.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import host_copy

HEADER_BYTES = 64 * 4           # the windows' sync words: 64 int32

# (name, dtype, rows, cols, tile rows, tile cols, ranks, form): form "" one staging tile, "pp"
# two (TPUT(dst, src, pingTile, pongTile)), "atomic" AtomicType::AtomicAdd
TPUT_CASES = [
    ("Vec_FloatSmall_4Ranks", "float32", 1, 256, 1, 256, 4, ""),
    ("Vec_Int32Large", "int32", 1, 4096, 1, 4096, 2, ""),
    ("Vec_Uint8Small_8Ranks", "uint8", 1, 512, 1, 512, 8, ""),
    ("Shape2D_Float16x16", "float32", 16, 16, 16, 16, 2, ""),
    ("Shape2D_Float8x32", "float32", 8, 32, 8, 32, 2, ""),
    ("Shape2D_Int32_4x64", "int32", 4, 64, 4, 64, 2, ""),
    ("AtomicAdd_Int32_4Ranks", "int32", 1, 256, 1, 256, 4, "atomic"),
    ("LargeShape_Float_128x64_tile16", "float32", 128, 64, 16, 64, 2, ""),
    ("LargeShape_Int32_256x32_tile32", "int32", 256, 32, 32, 32, 2, ""),
    ("LargeShape_Float_512x32_tile64", "float32", 512, 32, 64, 32, 2, ""),
    ("LargeShape_Float_2048x32_tile64", "float32", 2048, 32, 64, 32, 2, ""),
    ("LargeShape_Float_4096x32_tile64", "float32", 4096, 32, 64, 32, 2, ""),
    ("LargeShape_Float_2048x64_tile128", "float32", 2048, 64, 128, 64, 2, ""),
    ("LargeShape_Int32_4096x64_tile128", "int32", 4096, 64, 128, 64, 2, ""),
    ("MultiDim_Float_2x2x1x32x32_tile16", "float32", 2 * 2 * 1 * 32, 32, 16, 32, 2, ""),
    ("MultiDim_Int32_4x1x1x32x64_tile16", "int32", 4 * 1 * 1 * 32, 64, 16, 64, 2, ""),
    ("Irregular_Float_2047x32_tile64", "float32", 2047, 32, 64, 32, 2, ""),
    ("Irregular_Int32_1025x32_tile64", "int32", 1025, 32, 64, 32, 2, ""),
    ("Irregular_Float_4095x32_tile128", "float32", 4095, 32, 128, 32, 2, ""),
    ("Sliding2D_Float_64x128_tile16x32", "float32", 64, 128, 16, 32, 2, ""),
    ("Sliding2D_Int32_128x256_tile32x64", "int32", 128, 256, 32, 64, 2, ""),
    ("Sliding2D_Float_256x512_tile64x128", "float32", 256, 512, 64, 128, 2, ""),
    ("Sliding2D_IrregRow_Float_65x64_tile16x32", "float32", 65, 64, 16, 32, 2, ""),
    ("Sliding2D_IrregCol_Float_64x104_tile16x32", "float32", 64, 104, 16, 32, 2, ""),
    ("Sliding2D_IrregBoth_Float_65x104_tile16x32", "float32", 65, 104, 16, 32, 2, ""),
    ("PingPong_Float_128x128_tile16x32", "float32", 128, 128, 16, 32, 2, "pp"),
    ("PingPong_Int32_256x256_tile32x64", "int32", 256, 256, 32, 64, 2, "pp"),
    ("PingPong_Irregular_Float_65x104_tile16x32", "float32", 65, 104, 16, 32, 2, "pp"),
    ("PingPong_Float_7x10_tile5x7_PyptoAllReduceShape", "float32", 7, 10, 5, 7, 2, "pp"),
]

# tget's main.cpp: the same shapes but for the ranks (2) and no AtomicAdd case
TGET_CASES = [(name.replace("_4Ranks", "").replace("_8Ranks", ""), dt, r, c, tr, tc, 2, form)
              for name, dt, r, c, tr, tc, _n, form in TPUT_CASES if form != "atomic"]

KERNEL = '''
@pto.kernel
def k(shmem):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            rank = pto.get_block_id()
            peer = {peer}
            a = pto.alloc_tile({tr}, {phys}, pto.{dtype}, loc=pto.Vec, valid=({tr}, {tc}))
{pong}            pto.{op}(shmem + {dst}, shmem + {src}, a, rows={rows}, cols={cols}{extra})
            pto.pipe_barrier(pto.PIPE_ALL)
'''


def window(dtype, total):
    """Elements of one rank's window: the sync words, then room for four buffers of the
    tensor (WindowAlloc(64 * sizeof(int32_t) + 4 * count * sizeof(T)))."""
    return HEADER_BYTES // np.dtype(dtype).itemsize + 4 * total


def build(make_kernels, op, dtype, rows, cols, tr, tc, ranks, form):
    """The suite's kernel for one case: each rank's TPUT / TGET between its window and its peer's."""
    item = np.dtype(dtype).itemsize
    total, win, data = rows * cols, window(dtype, rows * cols), HEADER_BYTES // item
    phys = -(-tc * item // 32) * 32 // item          # tile_cols_phys: the row rounded up to 32 bytes
    if form == "atomic":                             # every rank's input (after the windows) -> rank 0
        peer, dst, src = "0", f"{data}", f"{ranks * win} + rank * {total}"
    elif op == "tput":                               # own send -> the previous rank's recv
        peer = f"(rank + {ranks - 1}) % {ranks}"
        dst, src = f"peer * {win} + {data + total}", f"rank * {win} + {data}"
    else:                                            # the next rank's send -> own recv
        peer = f"(rank + 1) % {ranks}"
        dst, src = f"rank * {win} + {data + total}", f"peer * {win} + {data}"
    pong = (f"            b = pto.alloc_tile({tr}, {phys}, pto.{dtype}, loc=pto.Vec, valid=({tr}, {tc}))\n"
            if form == "pp" else "")
    extra = ", pong=b" if form == "pp" else ", atomic='add'" if form == "atomic" else ""
    source = KERNEL.format(peer=peer, tr=tr, tc=tc, phys=phys, dtype=dtype, pong=pong, op=op, dst=dst, src=src,
                           rows=rows, cols=cols, extra=extra)
    return make_kernels(source).k


def inputs(dtype, total, ranks):
    """Rank r's input: static_cast<T>(i + r * 10000), integers wrapping as C++'s conversion does."""
    i = np.arange(total, dtype=np.int64)
    return [(i + r * 10000).astype(np.float64 if np.dtype(dtype).kind == "f" else np.int64).astype(dtype)
            for r in range(ranks)]


def run_case(make_kernels, op, case):
    """Lay the windows out as phase 0 leaves them, launch the ranks, return each rank's receive
    buffer and the inputs."""
    _name, dtype, rows, cols, tr, tc, ranks, form = case
    total, win = rows * cols, window(dtype, rows * cols)
    data = HEADER_BYTES // np.dtype(dtype).itemsize
    ins = inputs(dtype, total, ranks)
    shmem = np.zeros(ranks * win + ranks * total, dtype)
    for r, x in enumerate(ins):
        if form != "atomic":                     # phase 0: input -> send (the AtomicAdd case has none)
            shmem[r * win + data:r * win + data + total] = x
        shmem[ranks * win + r * total:ranks * win + (r + 1) * total] = x
    t = pto.alloc_tensor(shmem.nbytes, getattr(pto, dtype))
    pto.memcpy_h2d(t, shmem)
    pto.launch(build(make_kernels, op, dtype, rows, cols, tr, tc, ranks, form), grid=(ranks,), args=(t,),
               check="all")
    out = host_copy(t, shmem.shape, dtype)
    recv_at = data if form == "atomic" else data + total
    return [out[r * win + recv_at:r * win + recv_at + total] for r in range(ranks)], ins


@pytest.mark.parametrize("case", TPUT_CASES, ids=[c[0] for c in TPUT_CASES])
def test_tput_suite(make_kernels, case):
    """TPUTTest's cases: ring (rank r's receive buffer is rank r + 1's input) or AtomicAdd (rank
    0's holds n * i + 10000 * n (n - 1) / 2, as RunPutAtomicAddKernel checks it)."""
    recv, ins = run_case(make_kernels, "tput", case)
    ranks, form = case[6], case[7]
    if form == "atomic":
        i = np.arange(len(ins[0]), dtype=np.int64)
        want = (ranks * i + 10000 * ranks * (ranks - 1) // 2).astype(case[1])
        np.testing.assert_array_equal(recv[0], want)
        return
    for r in range(ranks):
        np.testing.assert_array_equal(recv[r], ins[(r + 1) % ranks], err_msg=f"rank {r}")


@pytest.mark.parametrize("case", TGET_CASES, ids=[c[0] for c in TGET_CASES])
def test_tget_suite(make_kernels, case):
    """TGETTest's cases: rank r's receive buffer is rank r + 1's input (RunGetRing*'s check)."""
    recv, ins = run_case(make_kernels, "tget", case)
    for r in range(case[6]):
        np.testing.assert_array_equal(recv[r], ins[(r + 1) % case[6]], err_msg=f"rank {r}")
