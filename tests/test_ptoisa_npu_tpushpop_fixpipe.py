"""pto-isa's ON-DEVICE A2/A3 st suite of TPUSH with a fixpipe TConfig (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/tpushpop_fixpipe at 3186c381: main.cpp, tpushpop_fixpipe_kernel.cpp,
gen_data.py): TPushPopFixpipeA2A3Test.case1_matmul_64x64_f322f16_tadds, case2_matmul_64x64_f322bf16
and case3_matmul_128x128_deqf16_tadds, in the AI-core API as the kernels write them (the same
tiles, flags and order; TPUSH / TPOP / TFREE through pto.tpipe, pypto_sim/frontend/tpipe_builtins.py).

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
saturated to +-65504, rounded to float16).

Goldens: gen_data.py's formulas in numpy from np.random.RandomState(2027), one a case: x1, x2 =
randint(-2, 3) as float16 (case3: int8); case1 float16(x1 @ x2 in float32) + float16(1.0), case2
bfloat16(x1 @ x2 in float32), case3 float16(float32(x1 @ x2 in int32) x 2.0) + float16(1.0).
main.cpp: ResultCmp over std::vector<aclFloat16> (uint16_t: the outputs' bits as integers) of
m x n elements, eps 0.001.

Checks: synccheck (every cross-core signal taken). Not racecheck: the kernels have a genuine race
by design - both AIVs pop the whole tile (TILE_NO_SPLIT) and TSTORE the same m x n output, the
same bytes from each, which racecheck reports as a write-write race between the AIVs on 'out'
(test_the_aivs_store_the_same_output).

Not ported (the cube's vector pre-stage quantization, which pypto_sim does not build; docs/aicore.md's
tstore row):
- case4_matmul_128x128_vdeqf16_tadds (RunTPushPopFixpipeVDEQF16A2A3): case3 with a per-column
  uint64 quant vector, TLOADed into a Mat tile, TMOVed into a Scaling (fixpipe buffer) tile and
  SET_QUANT_VECTOR before the VDEQF16 TPUSH; pypto_sim has no Scaling tile, no SET_QUANT_VECTOR
  and no VDEQF16 store: without quant= the TPUSH of the int32 Acc into the float16 fifo is a
  CompileError (test_an_unquantized_int32_push_into_float16_is_refused).
"""
import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error_at
from ptoisa_st import result_cmp

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tpushpop_fixpipe at 3186c381"
M = K = N = 64

# TEST_F(TPushPopFixpipeA2A3Test, <case>): (OutT, the vector cores' TADDS(+1.0), InT, AccT, M = K = N, the quant
# scalar) from main.cpp and the kernel's LaunchTPushPopFixpipeA2A3<key>
CASES = {
    "case1_matmul_64x64_f322f16_tadds": ("float16", True, "float16", "float32", 64, None),
    "case2_matmul_64x64_f322bf16": ("bfloat16", False, "float16", "float32", 64, None),
    "case3_matmul_128x128_deqf16_tadds": ("float16", True, "int8", "int32", 128, 2.0),
}
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def fixpipe_kernel(out_dtype, tadds, in_dtype="float16", acc_dtype="float32", m=M, k=K, n=N, quant=None):
    """RunTPushPopFixpipeA2A3<half, float, half, 64, 64, 64> (tadds),
    RunTPushPopFixpipeF322BF16A2A3<half, float, bfloat16_t, 64, 64, 64> or, with quant,
    RunTPushPopFixpipeDEQF16A2A3<int8_t, int32_t, half, 128, 128, 128> (SET_QUANT_SCALAR(quant))."""
    out_t, in_t, acc_t = getattr(pto, out_dtype), getattr(pto, in_dtype), getattr(pto, acc_dtype)
    slot_size = np.dtype(NP[out_dtype]).itemsize * m * n          # sizeof(OutT) * M * N
    quantized = quant is not None

    @pto.kernel(sync="manual")
    def kernel(out, srcA, srcB, fifoMem):
        pipe = pto.tpipe(fifoMem, 0, "c2v", slot_size, 2)
        with pto.cube():
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
            if quantized:
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
    """gen_case1_golden_data / gen_case2_golden_data / gen_case3_golden_data from
    RandomState(2027): (x1, x2, golden)."""
    out_dtype, tadds, in_dtype, _acc, size, quant = CASES[case]
    rng = np.random.RandomState(2027)
    x1 = rng.randint(-2, 3, [size, size]).astype(in_dtype)
    x2 = rng.randint(-2, 3, [size, size]).astype(in_dtype)
    if quant is not None:       # the int32 matmul, float32 x quant_scalar, float16, + 1.0
        matmul = np.matmul(x1.astype(np.int32), x2.astype(np.int32))
        dequant = (matmul.astype(np.float32) * quant).astype(np.float16)
        return x1, x2, (dequant + np.float16(1.0)).astype(np.float16)
    matmul = np.matmul(x1.astype(np.float32), x2.astype(np.float32))
    if tadds:
        golden = (matmul.astype(np.float16) + np.float16(1.0)).astype(np.float16)
    else:
        golden = matmul.astype(ml_dtypes.bfloat16)
    return x1, x2, golden


def run_case(case, check):
    out_dtype, tadds, in_dtype, acc_dtype, size, quant = CASES[case]
    x1, x2, golden = golden_of(case)
    out = pto.alloc_tensor(golden.nbytes, getattr(pto, out_dtype))
    fifo = pto.alloc_tensor(2 * golden.nbytes, getattr(pto, out_dtype))
    kernel = fixpipe_kernel(out_dtype, tadds, in_dtype, acc_dtype, size, size, size, quant)
    pto.launch(kernel, grid=(1,), args=(out, pto.to_device(x1), pto.to_device(x2), fifo), check=check)
    pto.sync()
    got = np.empty_like(golden)
    pto.memcpy_d2h(got, out)
    return golden, got


@pytest.mark.parametrize("case", list(CASES))
def test_tpushpop_fixpipe(case):
    """The AIC's float32 Acc through the fixpipe into the float16 / bfloat16 C2V fifo (case3: the
    int32 Acc, DEQF16 by 2.0 into float16), each AIV's TPOP of the whole tile (then + 1.0 in float16
    for case1 and case3), every signal taken."""
    golden, got = run_case(case, ("sync",))
    # main.cpp: ResultCmp over std::vector<aclFloat16> (uint16_t), m x n elements, eps 0.001
    assert result_cmp(golden.view(np.uint16), got.view(np.uint16), 0.001)


def test_the_aivs_store_the_same_output():
    """Why the cases run without racecheck: both AIVs TSTORE the whole output, unordered."""
    with pytest.raises(pto.RaceError, match=r"write-after-write race on GM tensor 'out'.*AIV1 PIPE_MTE3.*"
                                            r"AIV0 PIPE_MTE3"):
        run_case("case1_matmul_64x64_f322f16_tadds", ("race",))


def test_an_unquantized_int32_push_into_float16_is_refused():
    """case4's VDEQF16 push (a per-column quant vector) is not built: without quant= the TPUSH of
    the int32 Acc of an int8 matmul into the float16 fifo is a CompileError at the push, the
    fixpipe converting an int32 Acc to int32 only unless it quantizes."""
    kernel = fixpipe_kernel("float16", True, in_dtype="int8", acc_dtype="int32", m=128, k=128, n=128)
    args = (pto.alloc_tensor(128 * 128 * 2, pto.float16), pto.alloc_tensor(128 * 128, pto.int8),
            pto.alloc_tensor(128 * 128, pto.int8), pto.alloc_tensor(2 * 128 * 128 * 2, pto.float16))
    compile_error_at(kernel, args, "pto.tpush: 'acc' holds int32 but the pipe's fifo 'fifoMem' holds float16",
                     "pto.tpush(pipe, acc)")
