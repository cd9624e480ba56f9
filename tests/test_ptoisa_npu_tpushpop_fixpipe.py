"""pto-isa's ON-DEVICE A2/A3 st suite of TPUSH with a fixpipe TConfig (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/tpushpop_fixpipe at 3186c381: main.cpp, tpushpop_fixpipe_kernel.cpp,
gen_data.py): TPushPopFixpipeA2A3Test.case1_matmul_64x64_f322f16_tadds, case2_matmul_64x64_f322bf16,
case3_matmul_128x128_deqf16_tadds and case4_matmul_128x128_vdeqf16_tadds, in the AI-core API as the
kernels write them (the same tiles, flags and order; TPUSH / TPOP / TFREE through pto.tpipe,
pypto_sim/frontend/tpipe_builtins.py). Every case of the suite is ported.

The kernels (RunTPushPopFixpipeA2A3, RunTPushPopFixpipeF322BF16A2A3): one TPipe<0, DIR_C2V,
sizeof(OutT) x M x N, 2 slots> in fifoMem (main.cpp's 2 x m x n halves). The AIC: set_flag FIX ->
M, M -> MTE1, MTE1 -> MTE2 (event 1); wait MTE1 -> MTE2; TLOAD A and B (float16, 64 x 64) into L1;
flag MTE2 -> MTE1; wait M -> MTE1; TMOV both to L0A / L0B; set MTE1 -> MTE2; flag MTE1 -> M; wait
FIX -> M; TMATMUL into a float32 Acc; set M -> MTE1; flag M -> FIX; TPUSH<MatPipe, AccTile,
FixpipeParams<NZ2ND, F322F16 | F322BF16>> (TPush.hpp pushAcc2GMFiFo: TStoreAcc of the valid
region, ND, rows N apart, converting float32 to the fifo's float16 / bfloat16: pto.tpush of the
float32 Acc tile into a float16 / bfloat16 fifo, the fixpipe converting); set FIX -> M; the three
waits; pipe_barrier(PIPE_ALL). Each AIV: set MTE3 -> V and V -> MTE2; wait V -> MTE2; TPOP<...,
TILE_NO_SPLIT> the whole 64 x 64 tile; flag MTE2 -> V; wait MTE3 -> V; case1 TADDS(outTile,
vecTile, 1.0); TFREE<..., TILE_NO_SPLIT> (A2/A3: returns, pto.tfree(pipe)); flag V -> MTE3;
TSTORE out (outTile, case2 vecTile); set / wait MTE3 -> V; pipe_barrier(PIPE_ALL). case3
(RunTPushPopFixpipeDEQF16A2A3<int8_t, int32_t, half, 128, 128, 128>) is case1 at 128 x 128 with
int8 A and B and an int32 Acc, its push SET_QUANT_SCALAR<half>(2.0f) then TPUSH<MatPipe, AccTile,
FixpipeParams<NZ2ND, DEQF16>>: pto.tpush(pipe, acc, quant=2.0), the fixpipe's scalar pre-stage
quantization into the float16 fifo (isa/store_modes.py quantize: the int32 as float32 times 2.0,
saturated to +-65504, rounded to float16). case4 (RunTPushPopFixpipeVDEQF16A2A3, the same sizes and
dtypes) quantizes per column: after the M -> FIX wait the AIC TLOADs the N uint64 quant words
(srcQuant) into a 1 x N Mat tile, flags MTE2 -> FIX (event 2), TMOVs them into a Scaling tile
(TMOV_M2S on FIX), SET_QUANT_VECTOR(fbTile) and TPUSH<MatPipe, AccTile, FixpipeParams<NZ2ND,
VDEQF16>>: pto.tmov(fb_tile, fb_mat), pto.tpush(pipe, acc, quant=fb_tile), the set_fpc and the
VDEQF16 store A2/A3 issues for it, TSTORE_FP (column c of the int32 Acc times word c's scale M1,
isa/store_modes.py decode_word). pypto_sim holds the words as int64 (the same bits). Cases 1 - 3
get a nullptr srcQuant from main.cpp; here they get one word they never read.

Goldens: gen_data.py's formulas in numpy, its inputs drawn as it draws them: np.random.seed(2027)
once, then case1 to case4 in order from the one stream (golden_of replays the earlier cases' draws): x1, x2 =
randint(-2, 3) as float16 (case3: int8); case1 float16(x1 @ x2 in float32) + float16(1.0), case2
bfloat16(x1 @ x2 in float32), case3 float16(float32(x1 @ x2 in int32) x 2.0) + float16(1.0), case4
get_vector_quant's: N scales randint(1, 5) as float32, each word its float32 bits (quant_gm.bin),
golden float16(round(saturate(float32(x1 @ x2 in int32) x m1 of column c's word))) + float16(1.0).
main.cpp: ResultCmp over std::vector<aclFloat16> (uint16_t: the outputs' bits as integers) of
m x n elements, eps 0.001.

Checks: synccheck (every cross-core signal taken). Not racecheck: the kernels have a genuine race
by design - both AIVs pop the whole tile (TILE_NO_SPLIT) and TSTORE the same m x n output, the
same bytes from each, which racecheck reports as a write-write race between the AIVs on 'out'
(test_the_aivs_store_the_same_output).

What A2/A3 refuses, CompileErrors at the push: without quant= the int32 Acc into the float16 fifo
(the fixpipe converts int32 to int32 only unless it quantizes), quant= a Mat tile (SET_QUANT_VECTOR's
static_assert: Scaling only) and quant= on an AIV's push of a Vec tile (Producer::push's
static_assert: Acc only).
"""
import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error_at
from ptoisa_st import quant_m1, result_cmp

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tpushpop_fixpipe at 3186c381"
M = K = N = 64

# TEST_F(TPushPopFixpipeA2A3Test, <case>): (OutT, the vector cores' TADDS(+1.0), InT, AccT, M = K = N, the quant
# scalar or VECTOR: the quant words) from main.cpp and the kernel's LaunchTPushPopFixpipeA2A3<key>
VECTOR = "vector"
CASES = {
    "case1_matmul_64x64_f322f16_tadds": ("float16", True, "float16", "float32", 64, None),
    "case2_matmul_64x64_f322bf16": ("bfloat16", False, "float16", "float32", 64, None),
    "case3_matmul_128x128_deqf16_tadds": ("float16", True, "int8", "int32", 128, 2.0),
    "case4_matmul_128x128_vdeqf16_tadds": ("float16", True, "int8", "int32", 128, VECTOR),
}
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def fixpipe_kernel(out_dtype, tadds, in_dtype="float16", acc_dtype="float32", m=M, k=K, n=N, quant=None):
    """RunTPushPopFixpipeA2A3<half, float, half, 64, 64, 64> (tadds),
    RunTPushPopFixpipeF322BF16A2A3<half, float, bfloat16_t, 64, 64, 64>, with a quant scalar
    RunTPushPopFixpipeDEQF16A2A3<int8_t, int32_t, half, 128, 128, 128> (SET_QUANT_SCALAR(quant)), with
    VECTOR RunTPushPopFixpipeVDEQF16A2A3<int8_t, int32_t, half, 128, 128, 128> (SET_QUANT_VECTOR(fbTile))."""
    out_t, in_t, acc_t = getattr(pto, out_dtype), getattr(pto, in_dtype), getattr(pto, acc_dtype)
    slot_size = np.dtype(NP[out_dtype]).itemsize * m * n          # sizeof(OutT) * M * N
    vector_quant = quant == VECTOR
    quantized = quant is not None and not vector_quant

    @pto.kernel(sync="manual")
    def kernel(out, srcA, srcB, srcQuant, fifoMem):
        pipe = pto.tpipe(fifoMem, 0, "c2v", slot_size, 2)
        with pto.cube():
            if vector_quant:        # TileMatFbData and FbTile: 1 x N uint64 words in L1 and in the fixpipe buffer
                fb_mat = pto.alloc_tile(1, n, pto.int64, loc=pto.Mat)
                fb_tile = pto.alloc_tile(1, n, pto.int64, loc=pto.Scaling)
            a_mat = pto.alloc_tile(m, k, in_t, loc=pto.Mat)
            b_mat = pto.alloc_tile(k, n, in_t, loc=pto.Mat)
            a_tile = pto.alloc_tile(m, k, in_t, loc=pto.Left)
            b_tile = pto.alloc_tile(k, n, in_t, loc=pto.Right)
            acc = pto.alloc_tile(m, n, acc_t, loc=pto.Acc)
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.tload(a_mat, srcA)
            pto.tload(b_mat, srcB)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.tmov(a_tile, a_mat)
            pto.tmov(b_tile, b_mat)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.tmatmul(acc, a_tile, b_tile)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            if vector_quant:
                pto.tload(fb_mat, srcQuant)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_FIX, 2)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_FIX, 2)
                pto.tmov(fb_tile, fb_mat)                   # TMOV_M2S
                pto.tpush(pipe, acc, quant=fb_tile)         # SET_QUANT_VECTOR(fbTile); TPUSH<..., VDEQF16>
            elif quantized:
                pto.tpush(pipe, acc, quant=quant)
            else:
                pto.tpush(pipe, acc)
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
        with pto.vector():
            vec_tile = pto.alloc_tile(m, n, out_t)
            out_tile = pto.alloc_tile(m, n, out_t)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            pto.tpop(pipe, vec_tile, split="no_split")
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            if tadds:
                pto.tadds(out_tile, vec_tile, 1.0)
            pto.tfree(pipe, split="no_split")
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            if tadds:
                pto.tstore(out, out_tile)
            else:
                pto.tstore(out, vec_tile)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
    return kernel



def golden_of(case):
    """gen_case1_golden_data .. gen_case4_golden_data as gen_data.py runs them, in order from one
    RandomState(2027) stream: (x1, x2, the quant words (case4; else None), golden)."""
    out_dtype, tadds, in_dtype, _acc, size, quant = CASES[case]
    rng = np.random.RandomState(2027)
    for earlier in list(CASES)[:list(CASES).index(case)]:      # their x1 and x2 (only case4 draws scales)
        n = CASES[earlier][4]
        rng.randint(-2, 3, [n, n])
        rng.randint(-2, 3, [n, n])
    x1 = rng.randint(-2, 3, [size, size]).astype(in_dtype)
    x2 = rng.randint(-2, 3, [size, size]).astype(in_dtype)
    if quant == VECTOR:         # get_vector_quant: a word a column, float32 x its m1, saturate, round, float16; + 1.0
        matmul = np.matmul(x1.astype(np.int32), x2.astype(np.int32))
        words = rng.randint(1, 5, size).astype(np.float32).view(np.uint32).astype(np.uint64)
        f16 = np.finfo(np.float16)
        dequant = np.round(np.clip(matmul.astype(np.float32) * quant_m1(words), f16.min, f16.max)).astype(np.float16)
        return x1, x2, words, (dequant + np.float16(1.0)).astype(np.float16)
    if quant is not None:       # the int32 matmul, float32 x quant_scalar, float16, + 1.0
        matmul = np.matmul(x1.astype(np.int32), x2.astype(np.int32))
        dequant = (matmul.astype(np.float32) * quant).astype(np.float16)
        return x1, x2, None, (dequant + np.float16(1.0)).astype(np.float16)
    matmul = np.matmul(x1.astype(np.float32), x2.astype(np.float32))
    if tadds:
        golden = (matmul.astype(np.float16) + np.float16(1.0)).astype(np.float16)
    else:
        golden = matmul.astype(ml_dtypes.bfloat16)
    return x1, x2, None, golden


def run_case(case, check):
    out_dtype, tadds, in_dtype, acc_dtype, size, quant = CASES[case]
    x1, x2, words, golden = golden_of(case)
    out = pto.alloc_tensor(golden.nbytes, getattr(pto, out_dtype))
    fifo = pto.alloc_tensor(2 * golden.nbytes, getattr(pto, out_dtype))
    # quant_gm.bin's uint64 words as int64 (case4); main.cpp's nullptr srcQuant of the others: one unread word
    src_quant = pto.to_device(words.view(np.int64)) if words is not None else pto.alloc_tensor(8, pto.int64)
    kernel = fixpipe_kernel(out_dtype, tadds, in_dtype, acc_dtype, size, size, size, quant)
    pto.launch(kernel, grid=(1,), args=(out, pto.to_device(x1), pto.to_device(x2), src_quant, fifo), check=check)
    pto.sync()
    got = np.empty_like(golden)
    pto.memcpy_d2h(got, out)
    return golden, got


@pytest.mark.parametrize("case", list(CASES))
def test_tpushpop_fixpipe(case):
    """The AIC's float32 Acc through the fixpipe into the float16 / bfloat16 C2V fifo (case3: the
    int32 Acc, DEQF16 by 2.0 into float16; case4: VDEQF16, column c by quant word c), each AIV's
    TPOP of the whole tile (then + 1.0 in float16 for case1, case3 and case4), every signal taken."""
    golden, got = run_case(case, ("sync",))
    # main.cpp: ResultCmp over std::vector<aclFloat16> (uint16_t), m x n elements, eps 0.001
    assert result_cmp(golden.view(np.uint16), got.view(np.uint16), 0.001)


def test_the_aivs_store_the_same_output():
    """Why the cases run without racecheck: both AIVs TSTORE the whole output, unordered."""
    with pytest.raises(pto.RaceError, match=r"write-after-write race on GM tensor 'out'.*AIV1 PIPE_MTE3.*"
                                            r"AIV0 PIPE_MTE3"):
        run_case("case1_matmul_64x64_f322f16_tadds", ("race",))


def int8_args():
    """out, srcA, srcB, srcQuant and fifoMem of the 128 x 128 int8 cases (case3, case4)."""
    return (pto.alloc_tensor(128 * 128 * 2, pto.float16), pto.alloc_tensor(128 * 128, pto.int8),
            pto.alloc_tensor(128 * 128, pto.int8), pto.alloc_tensor(128 * 8, pto.int64),
            pto.alloc_tensor(2 * 128 * 128 * 2, pto.float16))


def test_an_unquantized_int32_push_into_float16_is_refused():
    """Without quant= (neither SET_QUANT_SCALAR's DEQF16 nor SET_QUANT_VECTOR's VDEQF16) the TPUSH of
    the int32 Acc of an int8 matmul into the float16 fifo is a CompileError at the push, the
    fixpipe converting an int32 Acc to int32 only unless it quantizes."""
    kernel = fixpipe_kernel("float16", True, in_dtype="int8", acc_dtype="int32", m=128, k=128, n=128)
    compile_error_at(kernel, int8_args(), "pto.tpush: 'acc' holds int32 but the pipe's fifo 'fifoMem' holds float16",
                     "pto.tpush(pipe, acc)")


def test_a_push_quantized_by_a_mat_tile_is_refused():
    """SET_QUANT_VECTOR takes a Scaling tile only (A2/A3 SetQuantVector.hpp: static_assert "Fix:
    SET_QUANT_VECTOR only supports Scaling input tile type."): case4's push by the Mat tile of the
    words, before their TMOV, is a CompileError at the push."""
    @pto.kernel(sync="auto")
    def kernel(out, srcA, srcB, srcQuant, fifoMem):
        pipe = pto.tpipe(fifoMem, 0, "c2v", 2 * 128 * 128, 2)
        with pto.cube():
            fb_mat = pto.alloc_tile(1, 128, pto.int64, loc=pto.Mat)
            acc = pto.alloc_tile(128, 128, pto.int32, loc=pto.Acc)
            pto.tload(fb_mat, srcQuant)
            pto.tpush(pipe, acc, quant=fb_mat)
        with pto.vector():
            pto.tpop(pipe, pto.alloc_tile(128, 128, pto.float16), split="no_split")
    compile_error_at(kernel, int8_args(), "pto.tpush: quant= tile 'fb_mat' is a Mat tile; SET_QUANT_VECTOR takes a "
                                          "Scaling tile", "pto.tpush(pipe, acc, quant=fb_mat)")


def test_a_quantized_push_of_a_vec_tile_is_refused():
    """The fixpipe quantizes a push from Acc only (A2/A3 TPush.hpp Producer::push: static_assert "Fix:
    the push interface with cast quant mode only support Acc tile type!"): an AIV's V2C push of a
    Vec tile with quant= is a CompileError at the push (a Scaling tile is the AIC's: an AIV has
    none to name)."""
    @pto.kernel(sync="auto")
    def kernel(fifoMem):
        pipe = pto.tpipe(fifoMem, 0, "v2c", 2 * 16 * 16, 2)
        with pto.cube():
            pto.tpop(pipe, pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat))
        with pto.vector():
            v = pto.alloc_tile(8, 16, pto.float16)
            pto.tpush(pipe, v, split="up_down", quant=2.0)
    compile_error_at(kernel, (pto.alloc_tensor(4 * 16 * 16 * 2, pto.float16),),
                     "pto.tpush: quant= on the push of the Vec tile 'v': the fixpipe quantizes a push from Acc only",
                     'pto.tpush(pipe, v, split="up_down", quant=2.0)')
