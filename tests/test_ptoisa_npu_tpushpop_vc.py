"""pto-isa's ON-DEVICE A2/A3 st suites of the vector -> cube TPipe (hw-native-sys/pto-isa at
3186c381, tests/npu/a2a3/src/st/testcase/): tpushpop_vc (TPushPopVCTest.case1 - case13:
main.cpp, tpushpop_vc_kernel.cpp, gen_data.py) and tpushpop_vc_nosplit
(TPushPopVCNoSplitTest.case1 - case6: main.cpp, tpushpop_vc_nosplit_kernel.cpp, gen_data.py),
in the AI-core API as the kernels write them: the same tiles, flags and loops, TPUSH / TPOP
through pto.tpipe (pypto_sim/frontend/tpipe_builtins.py). Every case runs.

runTPushPopVCMatmul (case1 - case12) and runTPushPopVCNSMatmul (the no-split cases): one
TPipe<0, DIR_V2C, TILE_K x TILE_N x 4 bytes, 2 slots> in fifoMem (main.cpp's 2 x 64 x N floats).
Each AIV, per K tile (TILE_K = 64 rows of quantB): set_flag V -> MTE2 and MTE3 -> V before the
loop; wait V -> MTE2; TLOAD its PROD_K x PROD_N part of quantB (GM rows TILE_N apart) and PROD_K
x 1 of scale and offset into PROD_K x 8 tiles (GM rows 1 element apart); flag MTE2 -> V; wait
MTE3 -> V; TDEQUANT; set V -> MTE2; flag V -> MTE3; TPUSH<..., Split>; set MTE3 -> V; after the
loop the two waits and pipe_barrier(PIPE_ALL). TILE_UP_DOWN (case1 - case6, case13): PROD_K =
TILE_K / 2 rows at row subBlockIdx x PROD_K (quantB, scale and offset); TILE_LEFT_RIGHT (case7 -
case12): PROD_N = TILE_N / 2 columns at column subBlockIdx x PROD_N, all TILE_K rows (scale and
offset shared); TILE_NO_SPLIT: each AIV the whole TILE_K x TILE_N tile into the same slot. The
AIC, per K tile: wait MTE1 -> MTE2; TLOAD A's TOTAL_M x TILE_K columns (GM rows TOTAL_K apart)
into L1; TPOP the TILE_K x TILE_N slot into an L1 Mat tile; flag MTE2 -> MTE1; wait M -> MTE1;
TMOV both to L0A / L0B; flag MTE1 -> M; set MTE1 -> MTE2; TMATMUL (k_tile 0) or TMATMUL_ACC; set
M -> MTE1; then flag M -> FIX and TSTORE the TOTAL_M x TILE_N Acc tile to out. The local L1
ring (localFiFoBase 0x20000) is not modelled: TPOP loads into the tile the kernel names.
runTPushPopVCSubBlockId (case13): each AIV TADDs its 32 x 64 rows of src0 and src1 and TPUSHes
them TILE_UP_DOWN with its subBlockId (the explicit-id overload; pto.tpush takes the id from
pto.get_subblock_id(), which is what the kernel passes); the AIC TPOPs the 64 x 64 tile, TLOADs
src2 and stores TMATMUL's result.

pto-isa op -> pypto_sim builtin: TDEQUANT(dequantTile, quantTile, scaleTile, offsetTile) ->
pto.tdequant(dst, src, scale, offset) (A2/A3's TDequant.hpp: a row's vconv - int8 through float16
- then vadds of -offset and vmuls by scale; row r's parameters element (r, 0) of the PROD_K x 8
tiles of valid PROD_K x 1); TADD -> pto.tadd; TLOAD / TSTORE / TMOV / TMATMUL / TMATMUL_ACC ->
pto.tload / tstore / tmov / tmatmul / tmatmul_acc; TPUSH<Pipe, Tile, Split> / TPOP -> pto.tpush /
pto.tpop(pipe, tile, split=...); set_flag / wait_flag / pipe_barrier alike.

Goldens: gen_data.py's formulas in numpy, each case from its own np.random.RandomState(19) (the
file seeds once and draws the cases in order): A uniform(-2, 2) [M, K]; scale uniform(0.01, 0.1)
and offset uniform(-1, 1) [K]; B uniform(-2, 2) [K, N] quantized to clip(round(B / scale +
offset)) in int8 / int16; golden = A @ ((quantB - offset) x scale) in float32. case13: src0, src1
uniform(-2, 2) [64, 64], src2 [64, 64], golden = (src0 + src1) @ src2. main.cpp:
ResultCmp(golden, out, 0.001f) over vectors of cFileSize elements (the output's bytes: 4 x the
output's elements, the excess zero in both).

Checks: synccheck on every case (every cross-core signal taken, the destructor's drain included).
The split kernels also run under racecheck: the two AIVs write disjoint parts of a slot and the
AIC reads it after both ready signals. The no-split kernels have a genuine race by design: both
AIVs TSTORE the same whole tile into the same slot (tpushpop_vc_nosplit_kernel.cpp: "both AIVs
write to the same FIFO slot location"; identical bytes, so the result does not depend on the
order), which racecheck reports as a write-write race between the AIVs; they run under "sync".
"""
import numpy as np
import pytest

import pypto_sim as pto

from ptoisa_st import result_cmp

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tpushpop_vc{,_nosplit} at 3186c381"
TILE_K = 64                # CASE_TILE_K of every Launch
TOTAL_M = 16

# TEST_F(TPushPopVCTest, <case>): (quant dtype, TOTAL_K, N, split) from main.cpp and the kernel's
# LaunchTPushPopVCMatmul<key> (keys 1 - 6 TILE_UP_DOWN, 7 - 12 TILE_LEFT_RIGHT)
VC = {
    "case1_int8_single_k_tile": ("int8", 64, 32, "up_down"),
    "case2_int8_two_k_tiles": ("int8", 128, 32, "up_down"),
    "case3_int8_four_k_tiles": ("int8", 256, 32, "up_down"),
    "case4_int16_single_k_tile": ("int16", 64, 32, "up_down"),
    "case5_int16_two_k_tiles": ("int16", 128, 32, "up_down"),
    "case6_int16_four_k_tiles": ("int16", 256, 32, "up_down"),
    "case7_int8_single_k_tile_left_right": ("int8", 64, 64, "left_right"),
    "case8_int8_two_k_tiles_left_right": ("int8", 128, 64, "left_right"),
    "case9_int8_four_k_tiles_left_right": ("int8", 256, 64, "left_right"),
    "case10_int16_single_k_tile_left_right": ("int16", 64, 32, "left_right"),
    "case11_int16_two_k_tiles_left_right": ("int16", 128, 32, "left_right"),
    "case12_int16_four_k_tiles_left_right": ("int16", 256, 32, "left_right"),
}
# TEST_F(TPushPopVCNoSplitTest, <case>): (quant dtype, TOTAL_K, N), TILE_NO_SPLIT
NOSPLIT = {
    "case1_int8_single_k_tile": ("int8", 64, 32),
    "case2_int8_two_k_tiles": ("int8", 128, 32),
    "case3_int8_four_k_tiles": ("int8", 256, 32),
    "case4_int16_single_k_tile": ("int16", 64, 32),
    "case5_int16_two_k_tiles": ("int16", 128, 32),
    "case6_int16_four_k_tiles": ("int16", 256, 32),
}


def dequant_matmul_kernel(quant, total_k, n, split):
    """runTPushPopVCMatmul<QuantT, float, float, 16, total_k, n, 64, split> (split 'no_split':
    runTPushPopVCNSMatmul): float32 A, quantB of `quant`, float32 scale, offset and output."""
    tile_n = n
    num_k_tiles = total_k // TILE_K
    prod_k = TILE_K // 2 if split == "up_down" else TILE_K
    prod_n = tile_n // 2 if split == "left_right" else tile_n
    # each AIV's first element of quantB and of scale / offset: TILE_UP_DOWN its rows, TILE_LEFT_RIGHT
    # its columns (scale and offset shared), TILE_NO_SPLIT the whole tile
    quant_sub = {"up_down": prod_k * tile_n, "left_right": prod_n, "no_split": 0}[split]
    para_sub = prod_k if split == "up_down" else 0
    quant_dtype = getattr(pto, quant)

    @pto.kernel(sync="manual")
    def k(out, srcA, quantB, scale, offset, fifoMem):
        mpipe = pto.tpipe(fifoMem, 0, "v2c", TILE_K * tile_n * 4, 2)
        with pto.vector():
            quant_tile = pto.alloc_tile(prod_k, prod_n, quant_dtype)
            dequant_tile = pto.alloc_tile(prod_k, prod_n, pto.float32)
            scale_tile = pto.alloc_tile(prod_k, 8, pto.float32, valid=(prod_k, 1))
            offset_tile = pto.alloc_tile(prod_k, 8, pto.float32, valid=(prod_k, 1))
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            sub = pto.get_subblock_id()
            for k_tile in range(num_k_tiles):
                quant_off = k_tile * TILE_K * tile_n + sub * quant_sub
                para_off = k_tile * TILE_K + sub * para_sub
                pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
                pto.tload(quant_tile, quantB + quant_off, stride=tile_n)
                pto.tload(scale_tile, scale + para_off, stride=1)
                pto.tload(offset_tile, offset + para_off, stride=1)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
                pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
                pto.tdequant(dequant_tile, quant_tile, scale_tile, offset_tile)
                pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
                pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.tpush(mpipe, dequant_tile, split=split)
                pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
        with pto.cube():
            a_mat = pto.alloc_tile(TOTAL_M, TILE_K, pto.float32, loc=pto.Mat)
            b_mat = pto.alloc_tile(TILE_K, tile_n, pto.float32, loc=pto.Mat)
            a_tile = pto.alloc_tile(TOTAL_M, TILE_K, pto.float32, loc=pto.Left)
            b_tile = pto.alloc_tile(TILE_K, tile_n, pto.float32, loc=pto.Right)
            acc = pto.alloc_tile(TOTAL_M, tile_n, pto.float32, loc=pto.Acc)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            for k_tile in range(num_k_tiles):
                pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
                pto.tload(a_mat, srcA + k_tile * TILE_K, stride=total_k)
                pto.tpop(mpipe, b_mat, split=split)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
                pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
                pto.tmov(a_tile, a_mat)
                pto.tmov(b_tile, b_mat)
                pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
                pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
                pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
                if k_tile == 0:
                    pto.tmatmul(acc, a_tile, b_tile)
                else:
                    pto.tmatmul_acc(acc, acc, a_tile, b_tile)
                pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.tstore(out, acc)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
    return k


def dequant_golden(quant, total_k, n):
    """gen_golden_data(case_params (16, total_k, n, quant, float32, float32)) from its own
    RandomState(19): the inputs (x1, quant_b, scale, offset) and the golden."""
    rng = np.random.RandomState(19)
    x1 = rng.uniform(-2, 2, [TOTAL_M, total_k]).astype(np.float32)
    scale = rng.uniform(0.01, 0.1, [total_k]).astype(np.float32)
    offset = rng.uniform(-1, 1, [total_k]).astype(np.float32)
    b_float = rng.uniform(-2, 2, [total_k, n]).astype(np.float32)
    info = np.iinfo(quant)
    b_quant_raw = b_float / scale[:, None] + offset[:, None]
    quant_b = np.clip(np.round(b_quant_raw), info.min, info.max).astype(quant)
    b_dequant = (quant_b.astype(np.float32) - offset[:, None]) * scale[:, None]
    golden = np.matmul(x1, b_dequant).astype(np.float32)
    return (x1, quant_b, scale, offset), golden


def run(kernel, inputs, out_shape, fifo_elems, check):
    """Launch kernel(out, *inputs, fifoMem) on one core under `check`; returns out (float32)."""
    out = pto.alloc_tensor(int(np.prod(out_shape)) * 4, pto.float32)
    args = [out] + [pto.to_device(np.ascontiguousarray(a)) for a in inputs]
    args.append(pto.alloc_tensor(fifo_elems * 4, pto.float32))
    pto.launch(kernel, grid=(1,), args=tuple(args), check=check)
    pto.sync()
    got = np.empty(out_shape, np.float32)
    pto.memcpy_d2h(got, out)
    return got


def check_dequant_case(quant, total_k, n, split, check):
    inputs, golden = dequant_golden(np.dtype(quant).type, total_k, n)
    got = run(dequant_matmul_kernel(quant, total_k, n, split), inputs, golden.shape, 2 * TILE_K * n, check)
    # main.cpp: ResultCmp(golden, devFinal, 0.001f) over std::vector<float>(cFileSize)
    assert result_cmp(golden, got, 0.001, compared=golden.nbytes)
    return golden, got


@pytest.mark.parametrize("case", list(VC))
def test_tpushpop_vc_dequant_matmul(case):
    """TPushPopVCTest.case1 - case12: A @ dequant(quantB) with the AIVs' halves of each K tile
    through the V2C FIFO (2 slots; four K tiles wrap it), sync- and race-clean."""
    quant, total_k, n, split = VC[case]
    check_dequant_case(quant, total_k, n, split, ("sync", "race"))


@pytest.mark.parametrize("case", list(NOSPLIT))
def test_tpushpop_vc_nosplit_dequant_matmul(case):
    """TPushPopVCNoSplitTest.case1 - case6: each AIV pushes the whole dequantized K tile into the
    same slot, the AIC's wait takes one ready signal from each; every signal taken (the two AIVs'
    identical stores into one slot are the kernel's by design: no racecheck)."""
    quant, total_k, n = NOSPLIT[case]
    check_dequant_case(quant, total_k, n, "no_split", ("sync",))


def test_nosplit_race_is_the_kernels():
    """Why the no-split cases run without racecheck: both AIVs store the same slot, which
    racecheck reports (the split kernels above pass it)."""
    quant, total_k, n = NOSPLIT["case1_int8_single_k_tile"]
    with pytest.raises(pto.RaceError, match=r"write-after-write race on GM tensor 'fifoMem'.*AIV1 PIPE_MTE3.*"
                                            r"AIV0 PIPE_MTE3"):
        check_dequant_case(quant, total_k, n, "no_split", ("race",))


M13 = K13 = N13 = 64


@pto.kernel(sync="manual")
def subblock_id_kernel(out, src0, src1, src2, fifoMem):
    """runTPushPopVCSubBlockId<float, 64, 64, 64>: Vec TADD + TPUSH(subBlockId), Cube TPOP +
    TMATMUL + TSTORE."""
    mpipe = pto.tpipe(fifoMem, 0, "v2c", M13 * K13 * 4, 2)
    with pto.vector():
        src0_tile = pto.alloc_tile(M13 // 2, K13, pto.float32)
        src1_tile = pto.alloc_tile(M13 // 2, K13, pto.float32)
        res_tile = pto.alloc_tile(M13 // 2, K13, pto.float32)
        sub = pto.get_subblock_id()
        src_off = sub * (M13 // 2) * K13
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        pto.tload(src0_tile, src0 + src_off)
        pto.tload(src1_tile, src1 + src_off)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        pto.tadd(res_tile, src0_tile, src1_tile)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.tpush(mpipe, res_tile, split="up_down")
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        pto.pipe_barrier(pto.PIPE_ALL)
    with pto.cube():
        res_mat = pto.alloc_tile(M13, K13, pto.float32, loc=pto.Mat)
        src2_mat = pto.alloc_tile(K13, N13, pto.float32, loc=pto.Mat)
        left = pto.alloc_tile(M13, K13, pto.float32, loc=pto.Left)
        right = pto.alloc_tile(K13, N13, pto.float32, loc=pto.Right)
        acc = pto.alloc_tile(M13, N13, pto.float32, loc=pto.Acc)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.tpop(mpipe, res_mat, split="up_down")
        pto.tload(src2_mat, src2)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        pto.tmov(left, res_mat)
        pto.tmov(right, src2_mat)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(acc, left, right)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(out, acc)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        pto.pipe_barrier(pto.PIPE_ALL)


def test_tpushpop_vc_case13_subblock_id_up_down():
    """TPushPopVCTest.case13_float_subblock_id_up_down: gen_subblock_golden_data((64, 64, 64,
    float32)) from RandomState(19): (src0 + src1) @ src2, sync- and race-clean."""
    rng = np.random.RandomState(19)
    src0 = rng.uniform(-2, 2, [M13, K13]).astype(np.float32)
    src1 = rng.uniform(-2, 2, [M13, K13]).astype(np.float32)
    src2 = rng.uniform(-2, 2, [K13, N13]).astype(np.float32)
    golden = np.matmul((src0 + src1).astype(np.float32), src2).astype(np.float32)
    got = run(subblock_id_kernel, (src0, src1, src2), golden.shape, 2 * M13 * K13, ("sync", "race"))
    assert result_cmp(golden, got, 0.001, compared=golden.nbytes)
