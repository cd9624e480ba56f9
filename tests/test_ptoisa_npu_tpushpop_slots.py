"""pto-isa's ON-DEVICE A2/A3 st cases of what a TPipe slot holds: tiles of two sizes in one ring,
and a slot filled and read through its GM address (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/tpushpop_mixed_tile_size and tpushpop_subtile at 3186c381:
main.cpp, the *_kernel.cpp, gen_data.py, tpushpop_subtile/TPUSH_TPOP_GM_FIFO.md), in the AI-core
API as the kernels write them: the same set_flag / wait_flag ledger, in sync="manual", TPipe as
pto.tpipe, TPUSH / TPOP / TALLOC / TFREE as pto.tpush / tpop / talloc / tfree.

TPushPopMixedTileSizeTest.case1_unequal_64x64x32, case2_equal_64x64x64, case3_unequal_32x32x16
(DIR_V2C) and case4 - case6 (_dir_both, the same over DIR_BOTH): runTPushPopMixedTileSize<float,
M, K, N, DIR>. TPipe<0, DIR, SLOT_SIZE, 8, 8, true> with SLOT_SIZE = max(M x K, K x N) x 4 bytes
is pto.tpipe(fifo, 0, DIR, SLOT_SIZE, 8, local_slot_num=8); its IsNoSplit = true is a template
parameter A2/A3's TPush.hpp declares and never reads, so it has no counterpart. The AIVs
(PushBothOperands) TLOAD A (M x K) and B (K x N) and TPUSH both, TILE_NO_SPLIT, into slots 0
and 1; the AIC (PopBothAndMatmul) TPOPs both into Mat tiles before using either, TMOVs them to
Left / Right, TFREEs twice (a no-op on A2/A3, TFree.hpp), TMATMULs and TSTOREs M x N. main.cpp
gives the fifo rings x 8 x max(M x K, K x N) x 4 bytes, rings 2 for DIR_BOTH, whose V2C ring
lies 8 x SLOT_SIZE in. Golden: A @ B as float32, A = uniform(-1, 1, [M, K]), B = uniform(-1, 1,
[K, N]). ResultCmp(golden, out, 0.0001f) over M x N elements.

What the suite guards (its kernel's header comment): SLOT_SIZE is fixed at the pipe but TPOP is
templated per call site, so one ring carries tiles of two shapes; the consumer's local slot i
must lie i x SLOT_SIZE into V2C_CONSUMER_BUF, not i x the popped tile's own size, else B's L1
slot overlaps A's when N < M. pypto_sim does not model the consumer's local ring (TPOP's TASSIGN
of the popped tile to V2C_CONSUMER_BUF + (index % LocalSlotNum) x SlotSize): a pop loads into
the tile the kernel names, and pto.alloc_tile never overlaps two tiles, so that defect cannot
occur here; what the cases check is the GM side, two differently sized tiles through slots 0
and 1, SLOT_SIZE apart, of one ring (and of the V2C ring of a DIR_BOTH pipe), in the AIC's L1
at once.

Not race-checked, as written: both AIVs run PushBothOperands (no get_subblockid() guard), so each
TLOADs the whole of A and B and TPUSHes it TILE_NO_SPLIT to the same bytes of slots 0 and 1.
The two AIVs' MTE3 stores of identical data to one GM range, unordered between the cores, are a
genuine write-write race of the source kernel (benign on hardware: both write the same values);
racecheck reports it, so these cases run under check=("sync",): every cross-core signal taken
(the AIC's data-ready waits each take one signal from each AIV; with SlotNum 8, SyncPeriod 4, two
tiles neither wait for nor signal a free slot, and the destructor drains none).

TPushTpopSubtileTest.case1_half_128x512: runTPushTpopSubtile<half, float, 128, 128, 128, 4>, the
GlobalData forms (TPUSH_TPOP_GM_FIFO.md). TPipe<0, DIR_C2V, 128 x 512 x 4, 2>. The AIC TLOADs A,
B (float16, 128 x 128), TMATMULs into a float32 Acc, TALLOCs a [128, 512] slot (TILE_UP_DOWN:
the producer's C2V address takes no sub-block offset, TAlloc.hpp) and TSTOREs the Acc four times
at columns 0, 128, 256, 384 (rows 512 apart), then TPUSHes the slot (record only). Each AIV
TPOPs its [64, 512] half (TILE_UP_DOWN: sub-block id x 64 x 512 elements in, TPop.hpp
getPopSubAIVOffset), and for each of 4 row slices TLOADs 16 x 512 from the popped address,
TADDS 3.14 and TSTOREs to its rows of out; then TFREEs the slot (TFree.hpp: free under
shouldNotifyFree(index - 1), which index 0 of depth 2 is not). pto.talloc / pto.tpop take rows=
and cols= for the GlobalTensor's static shape (PushGlobal [128, 512], PopGlobal [64, 512]).
Golden: tile(x1 @ x2 in float32, [1, 4]) + float32(3.14), x1, x2 = uniform(-1, 1) as float16.
ResultCmp(golden, out, 0.001f) over 128 x 512 elements. Race- and sync-checked.

Data: each case from its own np.random.RandomState(19) (gen_data.py seeds once and draws its
cases in order, so later cases' numbers differ from its files; their distribution does not).
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import result_cmp

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tpushpop_{mixed_tile_size,subtile} at 3186c381"
SLOT_NUM = 8                    # runTPushPopMixedTileSize's SLOT_NUM and LOCAL_SLOT_NUM


def round_up(v, a):
    """CeilAlign(v, a)."""
    return -(-v // a) * a


def mixed_kernel(m, k, n, direction):
    """runTPushPopMixedTileSize<float, m, k, n, DIR>: PushBothOperands on the AIVs,
    PopBothAndMatmul on the AIC (ALIGNED_M = CeilAlign(m, 16), ALIGNED_K / N = CeilAlign(., 8))."""
    slot_size = max(m * k, k * n) * 4
    am, ak, an = round_up(m, 16), round_up(k, 8), round_up(n, 8)

    @pto.kernel(sync="manual")
    def mixed(out, A, B, fifo):
        pipe = pto.tpipe(fifo, 0, direction, slot_size, SLOT_NUM, local_slot_num=SLOT_NUM)
        with pto.vector():
            vec_a = pto.alloc_tile(m, k, pto.float32)
            vec_b = pto.alloc_tile(k, n, pto.float32)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            # operand A
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.tload(vec_a, A)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tpush(pipe, vec_a, split="no_split")
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            # operand B (the smaller one when n < m)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.tload(vec_b, B)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tpush(pipe, vec_b, split="no_split")
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
        with pto.cube():
            a_mat = pto.alloc_tile(am, ak, pto.float32, loc=pto.Mat, valid=(m, k))
            b_mat = pto.alloc_tile(ak, an, pto.float32, loc=pto.Mat, valid=(k, n))
            a_tile = pto.alloc_tile(am, ak, pto.float32, loc=pto.Left, valid=(m, k))
            b_tile = pto.alloc_tile(ak, an, pto.float32, loc=pto.Right, valid=(k, n))
            acc = pto.alloc_tile(m, n, pto.float32, loc=pto.Acc)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.tpop(pipe, a_mat, split="no_split")
            pto.tpop(pipe, b_mat, split="no_split")
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.tmov(a_tile, a_mat)
            pto.tmov(b_tile, b_mat)
            pto.tfree(pipe, split="no_split")
            pto.tfree(pipe, split="no_split")
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.tmatmul(acc, a_tile, b_tile)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.tstore(out, acc)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
    return mixed


# TEST_F(TPushPopMixedTileSizeTest, <case>): (M, K, N, DIR) of main.cpp and the kernel's Launch<tilingKey>
MIXED = {
    "case1_unequal_64x64x32": (64, 64, 32, "v2c"),
    "case2_equal_64x64x64": (64, 64, 64, "v2c"),
    "case3_unequal_32x32x16": (32, 32, 16, "v2c"),
    "case4_unequal_64x64x32_dir_both": (64, 64, 32, "both"),
    "case5_equal_64x64x64_dir_both": (64, 64, 64, "both"),
    "case6_unequal_32x32x16_dir_both": (32, 32, 16, "both"),
}


@pytest.mark.parametrize("case", MIXED, ids=[f"TPushPopMixedTileSizeTest.{c}" for c in MIXED])
def test_tpushpop_mixed_tile_size(case):
    """TPushPopMixedTileSizeTest.<case>: A (M x K) and B (K x N) through slots 0 and 1 of one V2C
    ring, A @ B on the AIC. Golden (gen_data.py): matmul(x1, x2) in float32, x1 = uniform(-1, 1,
    [M, K]), x2 = uniform(-1, 1, [K, N]). main.cpp: ResultCmp(golden, out, 0.0001f) over M x N
    elements. check=("sync",): the source's two AIVs push the same bytes unordered (module
    docstring)."""
    m, k, n, direction = MIXED[case]
    rng = np.random.RandomState(19)
    x1 = rng.uniform(-1, 1, [m, k]).astype(np.float32)
    x2 = rng.uniform(-1, 1, [k, n]).astype(np.float32)
    golden = np.matmul(x1, x2).astype(np.float32)
    rings = 2 if direction == "both" else 1
    out = pto.alloc_tensor(golden.nbytes, pto.float32)
    fifo = pto.alloc_tensor(rings * SLOT_NUM * max(x1.nbytes, x2.nbytes), pto.float32)
    pto.profile(mixed_kernel(m, k, n, direction), grid=(1,), args=(out, pto.to_device(x1), pto.to_device(x2), fifo),
                check=("sync",))
    got = np.empty_like(golden)
    pto.memcpy_d2h(got, out)
    assert result_cmp(golden, got, 0.0001)


SM, SK, SN, REPEAT_N = 128, 128, 128, 4         # runTPushTpopSubtile<half, float, 128, 128, 128, 4>
FULL_N = SN * REPEAT_N
VEC_M = 16
VEC_LOAD_TIMES = SM // (2 * VEC_M)


@pto.kernel(sync="manual")
def subtile(out, A, B, fifo):
    """runTPushTpopSubtile: the AIC fills one [128, 512] C2V slot with four TSTOREs of its Acc
    through TALLOC / TPUSH; each AIV TPOPs its [64, 512] half's address, reads it 16 rows at a
    time, adds 3.14, stores, and TFREEs the slot."""
    pipe = pto.tpipe(fifo, 0, "c2v", SM * FULL_N * 4, 2)
    with pto.cube():
        a_mat = pto.alloc_tile(SM, SK, pto.float16, loc=pto.Mat)
        b_mat = pto.alloc_tile(SK, SN, pto.float16, loc=pto.Mat)
        a_tile = pto.alloc_tile(SM, SK, pto.float16, loc=pto.Left)
        b_tile = pto.alloc_tile(SK, SN, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(SM, SN, pto.float32, loc=pto.Acc)
        pto.tload(a_mat, A)
        pto.tload(b_mat, B)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.tmov(a_tile, a_mat)
        pto.tmov(b_tile, b_mat)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(acc, a_tile, b_tile)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        push_global = pto.talloc(pipe, split="up_down", rows=SM, cols=FULL_N)
        for n_tile in range(REPEAT_N):
            pto.tstore(push_global + n_tile * SN, acc, stride=FULL_N)
        pto.tpush(pipe, push_global)
        pto.pipe_barrier(pto.PIPE_ALL)
    with pto.vector():
        vec_tile = pto.alloc_tile(VEC_M, FULL_N, pto.float32)
        dst_tile = pto.alloc_tile(VEC_M, FULL_N, pto.float32)
        sub = pto.get_subblock_id()
        pop_global = pto.tpop(pipe, split="up_down", rows=SM // 2, cols=FULL_N)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 0)
        for row_slice in range(VEC_LOAD_TIMES):
            vec_base_row = (SM // 2) * sub
            out_row_offset = (vec_base_row + row_slice * VEC_M) * FULL_N
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
            pto.tload(vec_tile, pop_global + row_slice * VEC_M * FULL_N)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 0)
            pto.tadds(dst_tile, vec_tile, 3.14)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(out + out_row_offset, dst_tile)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 0)
        pto.tfree(pipe, pop_global, split="up_down")
        pto.pipe_barrier(pto.PIPE_ALL)


def test_tpushpop_subtile():
    """TPushTpopSubtileTest.case1_half_128x512: golden (gen_data.py) tile(matmul(x1, x2) in
    float32, [1, 4]) + float32(3.14), x1 = uniform(-1, 1, [128, 128]), x2 = uniform(-1, 1, [128,
    128]) as float16; fifo 2 x 128 x 512 floats (main.cpp). main.cpp: ResultCmp(golden, out,
    0.001f) over 128 x 512 elements. Race- and sync-checked."""
    rng = np.random.RandomState(19)
    x1 = rng.uniform(-1, 1, [SM, SK]).astype(np.float16)
    x2 = rng.uniform(-1, 1, [SK, SN]).astype(np.float16)
    matmul = np.matmul(x1.astype(np.float32), x2.astype(np.float32)).astype(np.float32)
    golden = (np.tile(matmul, [1, REPEAT_N]) + np.float32(3.14)).astype(np.float32)
    out = pto.alloc_tensor(golden.nbytes, pto.float32)
    fifo = pto.alloc_tensor(2 * SM * FULL_N * 4, pto.float32)
    pto.profile(subtile, grid=(1,), args=(out, pto.to_device(x1), pto.to_device(x2), fifo), check=("sync", "race"))
    got = np.empty_like(golden)
    pto.memcpy_d2h(got, out)
    assert result_cmp(golden, got, 0.001)
