"""pto-isa's ON-DEVICE A2/A3 st suites of the cube -> vector TPipe (hw-native-sys/pto-isa at 3186c381,
tests/npu/a2a3/src/st/testcase): tpushpop_cv (main.cpp, tpushpop_cv_kernel.cpp, gen_data.py), all ten
TPushPopCVTest cases, and tpushpop_cv_nosplit (main.cpp, tpushpop_cv_nosplit_kernel.cpp, gen_data.py), all four
TPushPopCVNoSplitTest cases, in the AI-core API as the kernels write them: the same set_flag / wait_flag pairs and
loops (sync="manual"), TPipe / TPUSH / TPOP as pto.tpipe / pto.tpush / pto.tpop (include/pto/npu/a2a3/TPush.hpp,
TPop.hpp; pypto_sim/frontend/tpipe_builtins.py). These goldens are what A2/A3 hardware must produce.

The kernels compute out = A @ B + bias: the AIC TLOADs an M-tile of A and all of B into Mat tiles, TMOVs them to
Left / Right, TMATMULs into a float32 Acc tile and TPUSHes it into a C2V pipe on FlagID 0 whose slots hold one Acc
tile (SlotSize = CASE_TILE_M x N x sizeof(float)); the AIVs TPOP it into a Vec tile, TLOAD the matching bias, TADD
and TSTORE into out. tpushpop_cv: a one-slot pipe (FIFO_DEPTH 1), each AIV popping its part by the case's
TileSplitAxis: runTPushPopMatmulAdd (keys 1 - 8: TILE_UP_DOWN, 8 rows each, or TILE_LEFT_RIGHT, 16 columns each, of
16 x 32 tiles), runTPushPopMatmulAddPartialValid (key 13: an Acc tile 16 x 128 of valid 5 x 128, popped
TILE_UP_DOWN_ODD: AIV0 its 3 rows, AIV1 its 2 from row 3 of the slot) and runTPushPopMatmulAddPartialValidLeftRight
(key 14: 16 x 128 of valid 5 x 127, TILE_LEFT_RIGHT_ODD: AIV0 64 columns, AIV1 63 from column 64, both at the
slot's row pitch 127). The partial-valid kernels' AIC names the odd split in its TPUSH, which its Acc push ignores
(pushAcc2GMFiFo stores the tile's valid region, rows valid-columns apart). tpushpop_cv_nosplit: TILE_NO_SPLIT,
TPipe<0, DIR_C2V, SlotSize, FifoDepth, LocalFifoDepth, IsNoSplitPipe> with FifoDepth = LocalFifoDepth = 2 (keys 1 -
3) or 8 (key 4, IsNoSplitPipe true), and its double-buffered flag pairs on EVENT_ID1.

What the port does not model: the TPipe constructor's C2V_CONSUMER_BUF (0x0) and the local ring of LocalFifoDepth
Vec tiles TPOP TASSIGNs in turn (TPush.hpp popVecTileFromGMFiFo): a pop loads into the tile the kernel names,
where pto.alloc_tile placed it (the bias and out tiles' TASSIGNs to 0x10000 / 0x20000 are pto.alloc_tile's
placement too); pto.tpipe's local_slot_num is passed as LocalFifoDepth and otherwise unused. IsNoSplitPipe has no
pto.tpipe parameter: A2/A3's TPipe takes it and uses it nowhere (only include/pto/npu/a5/TPush.hpp reads it). The
nosplit kernel's static_assert "A depth-8 TPipe with 40 transfers must drain exactly two pending free credits." is
an assert of the kernel's factory on tpipe_builtins.pending_free_credits, the closed form whose count the
destructor's drain waits for (tests/test_tpipe.py checks it against countPendingFreeCredits line by line).

Checks: every case runs with check=("sync",): every cross-core signal is taken (the AIVs' free signals by the
AIC's waits and, at its program's end, the TPipe destructor's drain; a drain one short leaves a signal, one too
many deadlocks). tpushpop_cv's kernels also run with "race" and are race-free: the two AIVs write disjoint parts of
out. tpushpop_cv_nosplit's are not: its kernel comment says "AIV1 is idle throughout the FIFO loop" and "(TILE_NO_SPLIT:
AIV0 only)", but the DAV_VEC section has no get_subblockid() test, so both AIVs run it: each waits for every
data-ready signal (the AIC's goes to both), pops the whole tile, signals it free (the AIC's wait takes one from
each) and TSTOREs the same 16 x N rows of out. Racecheck reports that write-after-write on out between AIV1's and
AIV0's TSTORE (no cross-core flag orders two AIVs); the two store equal values, so out is right whichever lands
last, and with the store on AIV0 only (what the comment describes) the kernel is race-free
(test_tpushpop_cv_nosplit_both_aivs_store_out). Case4's 80 dispatches (main.cpp's dispatchCount) are 80 launches,
each synccheck'd at its end: a credit one launch left would be a signal no wait took in that launch.

Goldens: the gen_data.py formulas in numpy, each case drawn from its own np.random.RandomState with its
gen_data.py's seed (19, 42) (gen_data.py draws its cases in order from one seed, so later cases' numbers differ
from its files, their distribution does not). tpushpop_cv: x1 = uniform(-2, 2, [m, k]), x2 = uniform(-2, 2, [k,
n]) in the input dtype, bias = uniform(-1, 1, [m, n]) float32, golden = float32(x1) @ float32(x2) + bias;
nosplit: randint(-5, 5) inputs, randint(-3, 3) float32 bias. Comparison (both main.cpp): ResultCmp(golden, out,
0.001f) over vectors of cFileSize elements (the output's byte count; the zeros past it raise the threshold only).
"""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.frontend.tpipe_builtins import pending_free_credits
from ptoisa_st import result_cmp

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase at 3186c381"
EPS = 0.001                                     # both main.cpp's ResultCmp(golden, devFinal, 0.001f)
NP = {"float16": np.float16, "float32": np.float32}
VEC_CORES = 2


def ceil_align(v, a):
    """The kernels' CeilAlign<uint32_t>(v, a)."""
    return (v + a - 1) // a * a


# TEST_F(TPushPopCVTest, <case>): (tilingKey, InT, M, K, N, TileSplitAxis) from main.cpp's
# TPushPopMatmulAddTestFunc<InT, float, key>(M, K, N) and LaunchTPushPopMatmulAdd<key>; gen_data.py's params agree
CV_CASES = {
    "case1_half_single_tile": (1, "float16", 16, 32, 32, "up_down"),
    "case2_half_split_m": (2, "float16", 32, 32, 32, "up_down"),
    "case4_half_multi_tile_wrapping": (4, "float16", 64, 32, 32, "up_down"),
    "case3_float_single_tile": (3, "float32", 16, 32, 32, "up_down"),
    "case5_half_single_tile_left_right": (5, "float16", 16, 32, 32, "left_right"),
    "case6_half_split_m_left_right": (6, "float16", 32, 32, 32, "left_right"),
    "case7_float_single_tile_left_right": (7, "float32", 16, 32, 32, "left_right"),
    "case8_half_multi_tile_wrapping_left_right": (8, "float16", 64, 32, 32, "left_right"),
    "case13_float_partial_valid_up_down": (13, "float32", 5, 32, 128, "up_down_odd"),
    "case14_float_partial_valid_left_right": (14, "float32", 5, 32, 127, "left_right_odd"),
}
CASE_TILE_M = 16                                # every instantiation's CASE_TILE_M


def cv_kernel(in_dt, total_m, k, n, split):
    """runTPushPopMatmulAdd<InT, float, TOTAL_M, 16, K, N, SplitAxis>: NUM_M_TILES = TOTAL_M / 16 Acc tiles of
    16 x N through a one-slot pipe, each AIV adding the bias to its VEC_M x VEC_N part (rows, or columns, at the
    matrix's row stride N)."""
    IN, tile_m, tiles = getattr(pto, in_dt), CASE_TILE_M, total_m // CASE_TILE_M
    UP_DOWN = split == "up_down"
    vec_m = tile_m // VEC_CORES if UP_DOWN else tile_m
    vec_n = n // VEC_CORES if not UP_DOWN else n
    block_align = 32 // np.dtype(NP[in_dt]).itemsize       # C0_SIZE_BYTE / sizeof(InT)
    al_m, al_k, al_n = ceil_align(tile_m, 16), ceil_align(k, block_align), ceil_align(n, block_align)

    @pto.kernel(sync="manual")
    def run_tpushpop_matmul_add(out, src_a, src_b, bias, fifo_mem):
        m_pipe = pto.tpipe(fifo_mem, 0, "c2v", tile_m * n * 4, 1)     # FLAG_ID 0, FIFO_DEPTH 1
        with pto.cube():
            a_mat = pto.alloc_tile(al_m, al_k, IN, loc=pto.Mat, valid=(tile_m, k))
            b_mat = pto.alloc_tile(al_k, al_n, IN, loc=pto.Mat, valid=(k, n))
            a_tile = pto.alloc_tile(al_m, al_k, IN, loc=pto.Left, valid=(tile_m, k))
            b_tile = pto.alloc_tile(al_k, al_n, IN, loc=pto.Right, valid=(k, n))
            acc_tile = pto.alloc_tile(tile_m, n, pto.float32, loc=pto.Acc)
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
            for m_tile in range(tiles):
                pto.wait_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
                pto.tload(a_mat, src_a + m_tile * tile_m * k)
                pto.tload(b_mat, src_b)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
                pto.tmov(a_tile, a_mat)
                pto.tmov(b_tile, b_mat)
                pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
                pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
                pto.tmatmul(acc_tile, a_tile, b_tile)
                pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
                pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
                pto.tpush(m_pipe, acc_tile, split=split)
                pto.set_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
        with pto.vector():
            vec_tile_half = pto.alloc_tile(vec_m, vec_n, pto.float32)
            bias_tile = pto.alloc_tile(vec_m, vec_n, pto.float32)
            out_tile = pto.alloc_tile(vec_m, vec_n, pto.float32)
            sub_block_idx = pto.get_subblock_id()
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
            for m_tile in range(tiles):
                pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
                pto.tpop(m_pipe, vec_tile_half, split=split)
                if UP_DOWN:             # each sub-block a different row range
                    offset = (m_tile * tile_m + sub_block_idx * vec_m) * n
                else:                   # each sub-block a different column range of the same rows
                    offset = m_tile * tile_m * n + sub_block_idx * vec_n
                pto.tload(bias_tile, bias + offset, stride=n)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
                pto.tadd(out_tile, vec_tile_half, bias_tile)
                pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.tstore(out + offset, out_tile, stride=n)
                pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
    return run_tpushpop_matmul_add


def partial_valid_kernel(total_m, k, total_n, split):
    """runTPushPopMatmulAddPartialValid<float, float, 5, 16, 32, 128> ('up_down_odd': Acc 16 x 128 of valid
    TOTAL_M x 128, AIV0 (TOTAL_M + 1) / 2 rows, AIV1 TOTAL_M / 2 from row VALID_M0, Vec tiles 8 x 128) and
    runTPushPopMatmulAddPartialValidLeftRight<float, float, 5, 16, 128, 32, 127> ('left_right_odd': Acc 16 x 128
    of valid 5 x TOTAL_N, AIV0 (TOTAL_N + 1) / 2 columns, AIV1 TOTAL_N / 2 from column VALID_N0, Vec tiles 5 x 64):
    one Acc tile, one pass, each AIV's tiles of its own valid rows / columns."""
    tile_m, tile_n = CASE_TILE_M, 128           # CASE_TILE_M; N = 128 (key 13), CASE_TILE_N = 128 (key 14)
    ODD_ROWS = split == "up_down_odd"
    valid_0, valid_1 = ((total_m + 1) // 2, total_m // 2) if ODD_ROWS else ((total_n + 1) // 2, total_n // 2)
    vec_rows, vec_cols = (tile_m // VEC_CORES, tile_n) if ODD_ROWS else (total_m, tile_n // VEC_CORES)
    al_m, al_k, al_n = ceil_align(tile_m, 16), ceil_align(k, 8), ceil_align(tile_n, 8)   # float: blockAlign 8

    @pto.kernel(sync="manual")
    def run_partial_valid(out, src_a, src_b, bias, fifo_mem):
        m_pipe = pto.tpipe(fifo_mem, 0, "c2v", tile_m * tile_n * 4, 1)
        with pto.cube():
            a_mat = pto.alloc_tile(al_m, al_k, pto.float32, loc=pto.Mat, valid=(total_m, k))
            b_mat = pto.alloc_tile(al_k, al_n, pto.float32, loc=pto.Mat, valid=(k, total_n))
            a_tile = pto.alloc_tile(al_m, al_k, pto.float32, loc=pto.Left, valid=(total_m, k))
            b_tile = pto.alloc_tile(al_k, al_n, pto.float32, loc=pto.Right, valid=(k, total_n))
            acc_tile = pto.alloc_tile(tile_m, tile_n, pto.float32, loc=pto.Acc, valid=(total_m, total_n))
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
            pto.tload(a_mat, src_a)
            pto.tload(b_mat, src_b)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.tmov(a_tile, a_mat)
            pto.tmov(b_tile, b_mat)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.tmatmul(acc_tile, a_tile, b_tile)
            pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.tpush(m_pipe, acc_tile, split=split)
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
        with pto.vector():
            sub_block_idx = pto.get_subblock_id()
            valid = valid_0 if sub_block_idx == 0 else valid_1
            base = 0 if sub_block_idx == 0 else valid_0         # rowBase (key 13) / colBase (key 14)
            if ODD_ROWS:                # its valid rows of full-width rows
                valid_r = valid
                valid_c = vec_cols
                offset = base * total_n
            else:                       # its valid columns of every row
                valid_r = vec_rows
                valid_c = valid
                offset = base
            vec_tile_half = pto.alloc_tile(vec_rows, vec_cols, pto.float32, valid=(valid_r, valid_c))
            bias_tile = pto.alloc_tile(vec_rows, vec_cols, pto.float32, valid=(valid_r, valid_c))
            out_tile = pto.alloc_tile(vec_rows, vec_cols, pto.float32, valid=(valid_r, valid_c))
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
            pto.tpop(m_pipe, vec_tile_half, split=split)
            pto.tload(bias_tile, bias + offset, stride=total_n)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tadd(out_tile, vec_tile_half, bias_tile)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(out + offset, out_tile, stride=total_n)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
    return run_partial_valid


def cv_golden(in_dt, m, k, n):
    """tpushpop_cv/gen_data.py's gen_golden_data, from np.random.RandomState(19): (x1, x2, bias, golden)."""
    rng = np.random.RandomState(19)
    x1 = rng.uniform(-2, 2, [m, k]).astype(NP[in_dt])
    x2 = rng.uniform(-2, 2, [k, n]).astype(NP[in_dt])
    bias = rng.uniform(-1, 1, [m, n]).astype(np.float32)
    golden = np.matmul(x1.astype(np.float32), x2.astype(np.float32)).astype(np.float32) + bias
    return x1, x2, bias, golden


def run_case(kernel, x1, x2, bias, fifo_bytes, check, dispatches=1):
    """main.cpp's TestFunc: A, B and bias copied to GM, out and the fifo allocated (not memset), the kernel
    launched `dispatches` times on one block; returns out."""
    out = pto.alloc_tensor(bias.nbytes, pto.float32)
    args = (out, pto.to_device(x1), pto.to_device(x2), pto.to_device(bias), pto.alloc_tensor(fifo_bytes, pto.float32))
    for _ in range(dispatches):
        pto.launch(kernel, grid=(1,), args=args, check=check)
    pto.sync()
    got = np.empty_like(bias)
    pto.memcpy_d2h(got, out)
    return got


@pytest.mark.parametrize("case", list(CV_CASES), ids=[f"TPushPopCVTest.{c}" for c in CV_CASES])
def test_tpushpop_cv(case):
    """TPushPopCVTest.<case>: the key's kernel (cv_kernel, or partial_valid_kernel for keys 13 and 14) with a fifo of
    main.cpp's 2 x 16 x fifoN floats (fifoN: N rounded up to 16), sync- and race-clean; out against
    float32(x1) @ float32(x2) + bias by ResultCmp(golden, out, 0.001f) over cFileSize elements."""
    key, in_dt, m, k, n, split = CV_CASES[case]
    kernel = (partial_valid_kernel(m, k, n, split) if key in (13, 14) else cv_kernel(in_dt, m, k, n, split))
    x1, x2, bias, golden = cv_golden(in_dt, m, k, n)
    got = run_case(kernel, x1, x2, bias, 2 * 16 * ceil_align(n, 16) * 4, check=("sync", "race"))
    assert result_cmp(golden, got, EPS, compared=golden.nbytes)


# TEST_F(TPushPopCVNoSplitTest, <case>): (tilingKey, InT, M, K, N, fifoDepth, dispatchCount) from main.cpp's
# TPushPopMatmulAddNoSplitTestFunc<InT, float, key>(M, K, N[, fifoDepth, dispatchCount]); the kernel's
# FifoDepth = LocalFifoDepth = fifoDepth (LaunchTPushPopMatmulAddNoSplit<key>); gen_data.py's params agree
NOSPLIT_CASES = {
    "case1_half_single_tile": (1, "float16", 16, 32, 32, 2, 1),
    "case2_half_two_tiles": (2, "float16", 32, 32, 32, 2, 1),
    "case3_float_single_tile": (3, "float32", 16, 32, 32, 2, 1),
    "case4_depth8_40_tiles_repeated_dispatch": (4, "float16", 640, 32, 64, 8, 80),
}


def nosplit_kernel(in_dt, total_m, k, n, fifo_depth=2, local_fifo_depth=2, aiv0_stores_only=False):
    """runTPushPopMatmulAddNoSplit<InT, float, TOTAL_M, 16, K, N, FifoDepth, LocalFifoDepth, IsNoSplitPipe>: the
    AIC pushes each whole 16 x N Acc tile (TILE_NO_SPLIT), the matmul's stages double-buffered on EVENT_ID1; the
    vector section (both AIVs: nothing tests the sub-block) pops it whole and stores tile + bias as out's rows.
    aiv0_stores_only (not the source): the TSTORE under get_subblock_id() == 0, what the kernel's comment says."""
    IN, tile_m, tiles = getattr(pto, in_dt), CASE_TILE_M, total_m // CASE_TILE_M
    block_align = 32 // np.dtype(NP[in_dt]).itemsize
    al_m, al_k, al_n = ceil_align(tile_m, 16), ceil_align(k, block_align), ceil_align(n, block_align)
    # the kernel's static_assert on MatPipe::countPendingFreeCredits(NUM_M_TILES)
    assert fifo_depth != 8 or tiles != 40 or pending_free_credits(fifo_depth, tiles) == 2, \
        "A depth-8 TPipe with 40 transfers must drain exactly two pending free credits."

    @pto.kernel(sync="manual")
    def run_tpushpop_matmul_add_nosplit(out, src_a, src_b, bias, fifo_mem):
        vec_fifo_tile = pto.alloc_tile(tile_m, n, pto.float32)
        m_pipe = pto.tpipe(fifo_mem, 0, "c2v", 4 * tile_m * n, fifo_depth, local_slot_num=local_fifo_depth)
        with pto.cube():
            a_mat = pto.alloc_tile(al_m, al_k, IN, loc=pto.Mat, valid=(tile_m, k))
            b_mat = pto.alloc_tile(al_k, al_n, IN, loc=pto.Mat, valid=(k, n))
            a_tile = pto.alloc_tile(al_m, al_k, IN, loc=pto.Left, valid=(tile_m, k))
            b_tile = pto.alloc_tile(al_k, al_n, IN, loc=pto.Right, valid=(k, n))
            acc_tile = pto.alloc_tile(tile_m, n, pto.float32, loc=pto.Acc)
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            for m_tile in range(tiles):
                pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
                pto.tload(a_mat, src_a + m_tile * tile_m * k)
                pto.tload(b_mat, src_b)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
                pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
                pto.tmov(a_tile, a_mat)
                pto.tmov(b_tile, b_mat)
                pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
                pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
                pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
                pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
                pto.tmatmul(acc_tile, a_tile, b_tile)
                pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
                pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
                pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
                pto.tpush(m_pipe, acc_tile, split="no_split")
                pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
        with pto.vector():
            bias_tile = pto.alloc_tile(tile_m, n, pto.float32)
            out_tile = pto.alloc_tile(tile_m, n, pto.float32)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            for m_tile in range(tiles):
                pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
                pto.tpop(m_pipe, vec_fifo_tile, split="no_split")
                pto.tload(bias_tile, bias + m_tile * tile_m * n)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
                pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
                pto.tadd(out_tile, vec_fifo_tile, bias_tile)
                pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
                pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                if not aiv0_stores_only or pto.get_subblock_id() == 0:
                    pto.tstore(out + m_tile * tile_m * n, out_tile)
                pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
    return run_tpushpop_matmul_add_nosplit


def nosplit_golden(in_dt, m, k, n):
    """tpushpop_cv_nosplit/gen_data.py's gen_golden_data, from np.random.RandomState(42): (x1, x2, bias,
    golden)."""
    rng = np.random.RandomState(42)
    x1 = rng.randint(-5, 5, [m, k]).astype(NP[in_dt])
    x2 = rng.randint(-5, 5, [k, n]).astype(NP[in_dt])
    bias = rng.randint(-3, 3, [m, n]).astype(np.float32)
    golden = (np.matmul(x1.astype(np.float32), x2.astype(np.float32)) + bias).astype(np.float32)
    return x1, x2, bias, golden


@pytest.mark.parametrize("case", list(NOSPLIT_CASES), ids=[f"TPushPopCVNoSplitTest.{c}" for c in NOSPLIT_CASES])
def test_tpushpop_cv_nosplit(case):
    """TPushPopCVNoSplitTest.<case>: the kernel with FifoDepth = LocalFifoDepth = fifoDepth, a fifo of main.cpp's
    fifoDepth x 16 x N floats, launched dispatchCount times, each launch sync-clean (case4: 40 pushes into 8
    slots, SyncPeriod 4, the destructor waiting for the last 2 free credits); out against float32(x1) @
    float32(x2) + bias by ResultCmp(golden, out, 0.001f) over cFileSize elements. Not check="race": both AIVs
    store every out tile (test_tpushpop_cv_nosplit_both_aivs_store_out)."""
    key, in_dt, m, k, n, depth, dispatches = NOSPLIT_CASES[case]
    x1, x2, bias, golden = nosplit_golden(in_dt, m, k, n)
    got = run_case(nosplit_kernel(in_dt, m, k, n, depth, depth), x1, x2, bias, depth * 16 * n * 4, ("sync",),
                   dispatches)
    assert result_cmp(golden, got, EPS, compared=golden.nbytes)


def test_tpushpop_cv_nosplit_both_aivs_store_out():
    """case2_half_two_tiles under racecheck: the source kernel's vector section runs on both AIVs, and the second
    TSTORE of each out tile (AIV1's) is a write-after-write race with AIV0's, nothing ordering the two AIVs;
    with the store on AIV0 only, as the kernel's comment describes, it runs race- and sync-clean with the same
    out."""
    _, in_dt, m, k, n, depth, _ = NOSPLIT_CASES["case2_half_two_tiles"]
    x1, x2, bias, golden = nosplit_golden(in_dt, m, k, n)
    with pytest.raises(pto.RaceError, match=r"write-after-write race on GM tensor 'out'.*TSTORE at line \d+ "
                                            r"\(AIV1 PIPE_MTE3\) is not ordered after TSTORE at line \d+ "
                                            r"\(AIV0 PIPE_MTE3\)"):
        run_case(nosplit_kernel(in_dt, m, k, n), x1, x2, bias, depth * 16 * n * 4, ("sync", "race"))
    got = run_case(nosplit_kernel(in_dt, m, k, n, aiv0_stores_only=True), x1, x2, bias, depth * 16 * n * 4,
                   ("sync", "race"))
    assert result_cmp(golden, got, EPS, compared=golden.nbytes)
