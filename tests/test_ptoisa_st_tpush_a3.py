"""pto-isa's CPU st case TPUSH_A3Test.case_1 (hw-native-sys/pto-isa tests/cpu/st/testcase/tpush_a3 at
3186c381: main.cpp, gen_data.py), in the AI-core API as main.cpp's two kernels write it: the same
set_flag / wait_flag ledger (sync="manual"), the same loop of 8, TPipe<0, Direction::DIR_BOTH, 8192, 4, 4,
false> as pto.tpipe(v4, 0, "both", 8192, 4, local_slot_num=4), TPUSH / TPOP / TFREE with
TileSplitAxis::TILE_LEFT_RIGHT as pto.tpush / pto.tpop / pto.tfree(split="left_right").

The launch (LaunchTPush): one cube core and its two AIVs (ScopedExecutionContext(0, id, 2)), each
running main_incore_0_aic / main_incore_0_aiv(v1 = C, v2 = A, v3 = B, v4 = pipe_mem, v5 = 0); here one
kernel with a cube and a vector section, launched on one AI core. A is 32 x 64, B 64 x 512, C 32 x 512,
all float32; C is read and written in place (main.cpp writes srcCDevice to output.bin).

- Each AIV (get_subblockid() = sub) TLOADs its 32 x 32 half of A (columns 32 x sub, rows 64 apart) once;
  then for i in 0..7: TLOADs its 32 x 32 part of C's column block i (C + i x 64 + 32 x sub, rows 512
  apart), TADDS 1.0 to its A half and TPUSHes it V2C (TILE_LEFT_RIGHT: at column 32 x sub of the slot,
  rows 64 apart); TPOPs its 32 x 32 half of the C2V tile, TADDs it to the C part, TFREEs and TSTOREs.
- The AIC, for i in 0..7: TLOADs B's column block i (64 x 64, rows 512 apart) into L1, TPOPs the V2C
  tile (32 x 64 = A + 1) into a Mat tile, TMOVs it to Left and TFREEs, TMOVs B's block to Right,
  TMATMULs into a 32 x 64 Acc tile and TPUSHes it C2V.

Golden (gen_data.py): c = c_prev + matmul(a + 1.0, b), a = randn(32, 64), b = randn(64, 512), c_prev =
randn(32, 512) as float32; gen_data.py draws them unseeded, here from np.random.RandomState(0).
Comparison (main.cpp): ResultCmp<float>(golden, output, 0.001f) over 32 x 512 elements.

The TPipe's template arguments as A2/A3 reads them (include/pto/npu/a2a3/TPush.hpp): SlotSize 8192 (a
32 x 64 float32 tile), SlotNum 4, so SyncPeriod 2: each producer waits for a free signal before its
pushes 4 and 6 and its destructor drains the other two (countPendingFreeCredits(8) = 2); each consumer
signals free after its pops 1, 3, 5 and 7. DIR_BOTH: the C2V ring (AIC -> AIVs, flags 0 / 1) at byte 0
of pipe_mem, the V2C ring (AIVs -> AIC, flags 2 / 3) SlotNum x SlotSize = 32 KiB in; main.cpp
allocates 2 x 65536 bytes. LocalSlotNum 4 is pto.tpipe's local_slot_num; IsNoSplit false is A2/A3's
default (TPush.hpp declares it and reads it nowhere, only include/pto/npu/a5/TPush.hpp does), so it has
no pto.tpipe argument. The kernels run under check=("sync", "race"): every cross-core signal is taken,
and no two units touch a GM or tile byte unordered; then in functional mode, which must agree.

What the port does not model: the consumer's local ring. TPipe(v4, 0, 0) sets C2V_CONSUMER_BUF and
V2C_CONSUMER_BUF to 0, and TPOP TASSIGNs the popped tile (v24 on the AIC, v40 on an AIV, which the
kernels never TASSIGN) to 0 + (index % 4) x 8192 of L1 / UB (TPush.hpp popMatTileFromGMFiFo,
popVecTileFromGMFiFo); a pto.tpop loads into the tile the kernel names, where pto.alloc_tile placed it.
Here that changes no value and no order: the ring's 32 KiB lie below every tile the kernels TASSIGN
(L1 32768 for B; UB 32768 - 49151 for the AIVs' four tiles), and each kernel's flags order the next
pop after the last read of the previous one (AIC: TMOV, MTE1 -> MTE2 EVENT_ID0, TLOAD, TPOP; AIV:
TADD, V -> MTE3 EVENT_ID1, TSTORE, MTE3 -> MTE2 EVENT_ID0, TLOAD, TPOP). The AIV's set_mask_norm() and
set_vector_mask(-1, -1) have no counterpart: pypto_sim's vector instructions set their own masks (all
lanes, normal mode, is what the kernel's TADDS / TADD need).
"""
import numpy as np

import pypto_sim as pto
from aicore_runs import host_copy, run_both_modes
from ptoisa_st import result_cmp

CPU_ST = "hw-native-sys/pto-isa tests/cpu/st/testcase/tpush_a3 at 3186c381"
LOOPS = 8                                # v7 / v8 = 8: the loop count of both kernels
SLOT_SIZE, SLOT_NUM, LOCAL_SLOT_NUM = 8192, 4, 4
FIFO_BYTES = 2 * 65536                   # aclrtMalloc(&pipe_mem, 2 * 65536, ...)
A_SHAPE, B_SHAPE, C_SHAPE = (32, 64), (64, 512), (32, 512)


@pto.kernel(sync="manual")
def main_incore_0(v1, v2, v3, v4, v5):
    """main_incore_0_aic and main_incore_0_aiv of main.cpp: v1 = C (in place), v2 = A, v3 = B,
    v4 = the pipe's GM ring, v5 = the block offset (0). The AIC's TPipe v15 and the AIV's v19 are
    `pipe`; the AIC's tiles are named by role (its v18, v24, v30 are also AIV names)."""
    pipe = pto.tpipe(v4, 0, "both", SLOT_SIZE, SLOT_NUM, local_slot_num=LOCAL_SLOT_NUM)
    with pto.cube():
        b_mat = pto.alloc_tile(64, 64, pto.float32, loc=pto.Mat)       # v18: TASSIGN(v17, 32768)
        pop_mat = pto.alloc_tile(32, 64, pto.float32, loc=pto.Mat)     # v24: placed by TPOP
        left = pto.alloc_tile(32, 64, pto.float32, loc=pto.Left)       # v26: TASSIGN(v25, 0)
        right = pto.alloc_tile(64, 64, pto.float32, loc=pto.Right)     # v30: TASSIGN(v29, 0)
        acc = pto.alloc_tile(32, 64, pto.float32, loc=pto.Acc)         # v34: TASSIGN(v33, 0)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
        for v16 in range(LOOPS):
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
            pto.tload(b_mat, v3 + (v5 * LOOPS + v16) * 64, stride=512)   # B's 64 x 64 block v16
            pto.tpop(pipe, pop_mat, split="left_right")
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
            pto.tmov(left, pop_mat)
            pto.tfree(pipe, split="left_right")
            pto.tmov(right, b_mat)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
            pto.tmatmul(acc, left, right)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
            pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.tpush(pipe, acc, split="left_right")
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
    with pto.vector():
        v18 = pto.get_subblock_id()
        v21 = pto.alloc_tile(32, 32, pto.float32)                      # TASSIGN(v20, 32768)
        v30 = pto.alloc_tile(32, 32, pto.float32)                      # TASSIGN(v29, 36864)
        v37 = pto.alloc_tile(32, 32, pto.float32)                      # TASSIGN(v36, 40960)
        v40 = pto.alloc_tile(32, 32, pto.float32)                      # placed by TPOP (local ring)
        v42 = pto.alloc_tile(32, 32, pto.float32)                      # TASSIGN(v41, 45056)
        v24 = v18 * 32
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 0)
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        pto.tload(v21, v2 + v24, stride=64)                            # this AIV's 32 columns of A
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        for v28 in range(LOOPS):
            v35 = v1 + (v5 * LOOPS + v28) * 64 + v24                   # its 32 x 32 of C's block v28
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
            pto.tload(v30, v35, stride=512)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 0)
            pto.tadds(v37, v21, 1.0)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tpush(pipe, v37, split="left_right")
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 0)
            pto.tpop(pipe, v40, split="left_right")
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 1)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 1)
            pto.tadd(v42, v30, v40)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
            pto.tfree(pipe, split="left_right")
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
            pto.tstore(v35, v42, stride=512)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)


def inputs():
    """gen_data.py's a, b, c_prev (randn as float32, in its order), from RandomState(0)."""
    rng = np.random.RandomState(0)
    a = rng.randn(*A_SHAPE).astype(np.float32)
    b = rng.randn(*B_SHAPE).astype(np.float32)
    c_prev = rng.randn(*C_SHAPE).astype(np.float32)
    return a, b, c_prev


def run_case(a, b, c_prev):
    """LaunchTPush: the kernel on one AI core with C in place and a zeroed 2 x 65536-byte pipe_mem,
    in timing mode under check=("sync", "race") and in functional mode (which must agree); returns
    C and pipe_mem's words after the run."""
    def make_args():
        return (pto.to_device(c_prev), pto.to_device(a), pto.to_device(b),
                pto.alloc_tensor(FIFO_BYTES, pto.float32), 0)
    got = run_both_modes(main_incore_0, make_args,
                         lambda args: np.concatenate([host_copy(args[0], C_SHAPE, np.float32).ravel(),
                                                      host_copy(args[3], FIFO_BYTES // 4, np.float32)]),
                         check=("sync", "race"))
    n = int(np.prod(C_SHAPE))
    return got[:n].reshape(C_SHAPE), got[n:]


def test_tpush_a3_case_1():
    """TPUSH_A3Test.case_1: c = c_prev + matmul(a + 1.0, b) (gen_data.py), each AIV adding its 32
    columns of each 32 x 64 block; ResultCmp<float>(golden, output, 0.001f) over 32 x 512 elements."""
    a, b, c_prev = inputs()
    golden = (c_prev + np.matmul(a + np.float32(1.0), b)).astype(np.float32)
    out, _ = run_case(a, b, c_prev)
    assert result_cmp(golden, out, 0.001)


def test_tpush_a3_rings_hold_the_last_tiles_where_tpush_hpp_puts_them():
    """What pipe_mem holds after the kernel, by TPush.hpp: the C2V ring at byte 0, slot i (i x 8192
    bytes) last written by the AIC's push i + 4, the 32 x 64 Acc tile (a + 1) @ B's block i + 4, ND
    rows 64 apart (pushAcc2GMFiFo); the V2C ring SlotNum x SlotSize = 32 KiB in (the constructor's
    entryOffset), each slot holding a + 1 whole: AIV sub's 32 x 32 at column 32 x sub, rows 2 x 32
    apart (pushVec2GMFiFo, TILE_LEFT_RIGHT); the second 64 KiB of pipe_mem is never written."""
    a, b, c_prev = inputs()
    _, fifo = run_case(a, b, c_prev)
    words = SLOT_SIZE // 4
    a1 = a + np.float32(1.0)
    for i in range(SLOT_NUM):
        c2v = fifo[i * words:(i + 1) * words].reshape(32, 64)
        block = i + LOOPS - SLOT_NUM
        assert result_cmp(np.matmul(a1, b[:, block * 64:(block + 1) * 64]), c2v, 0.001), f"C2V slot {i}"
        v2c = fifo[(SLOT_NUM + i) * words:(SLOT_NUM + i + 1) * words].reshape(32, 64)
        np.testing.assert_array_equal(v2c, a1, err_msg=f"V2C slot {i}")
    assert not fifo[2 * SLOT_NUM * words:].any()
