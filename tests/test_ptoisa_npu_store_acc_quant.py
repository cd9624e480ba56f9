"""pto-isa's ON-DEVICE A2/A3 st cases of TSTORE from an Acc tile with the fixpipe's SCALAR pre-stage
quantization (hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tstore_acc2gm at 3186c381:
main.cpp, tstore_acc2gm_kernel.cpp, gen_data.py): TStoreAcc2gmTest.case16 - case25, case_relu_21,
case_relu_31, case_ndc1hwc0_scalar_1 and case_ndc1hwc0_scalar_2 (test_tstore_acc2gm_scalar_nz2nd,
_nz2nz, _nz2ndc1hwc0), in the AI-core API as the kernels write them; then the quantization's
value rules on chosen values, and its compile-time refusals. The cases without quantization are
tests/test_ptoisa_npu_store_acc.py's.

The kernels (TStoreAcc2gmScalarNz2nd, Nz2nz, Nz2NDC1HWC0) are the unquantized ones (TLOAD A and B
into Mat tiles, TMOV to Left / Right, TMATMUL into the Acc tile, int32 for int8 inputs, else
float32, each step behind its flag; tests/ptoisa_st.py MATMUL_TO_ACC) with a float scalarQuant
launch argument and preQuantScalar = its bits, bit 46 set for an int8 output and cleared for
uint8 (sizeof(dstDataType) == 1), then TSTORE<AccTile, GlobalData, AtomicType[, ReluPreMode::
NormalRelu]>(dstGlobal, cTile, preQuantScalar): pto.tstore(O, c, quant=q, ...) with q the kernel's
float argument (the sign bit follows the output's dtype in pypto_sim, as the kernels set it).
A2/A3's TSTORE_IMPL(dst, src, preQuantScalar) sets it (set_quant_pre) and stores in the mode
GetScalarPreQuantMode<Acc, GM> picks: int32 -> half DEQF16, int32 -> int8 / uint8 REQ8, float ->
int8 / uint8 QF322B8_PRE. Shapes, GM layouts and tiles as in the unquantized port: ND dense; NZ
(Shape0, Shape1, Shape2, 16, C0) with C0 = 32 bytes (32 for int8 / uint8, 16 for half),
pto.NZ at stride Shape2 x 16 x C0; NDC1HWC0 (N = 1) pto.NZ at stride H x W x C0.
AtomicType::AtomicAdd (case22: Nz2nd tilingKey 4, atomicType 1) is atomic="add" into the output
main.cpp memsets to zeros; reluMode 1 (case_relu_21, case_relu_31, case_ndc1hwc0_scalar_1) is
relu=True.

Goldens: gen_data.py's gen_golden_data with quant_mode 1, in numpy, each case from its own
np.random.RandomState(19) (gen_data.py draws the cases in order from one seed; the distribution is
the same): x1, x2 = randint(-1, 2) for an int8 output, randint(1, 4) for uint8, randint(-5, 5)
otherwise, in the source dtype; golden = matmul in the output dtype, times scalar; int8 / uint8
saturation(golden, -128, 127 / 0, 255): np.round(np.clip(...)) (ties to even); then the layout's
rearrangement (NZ reshape(m / 16, 16, n / c0, c0).transpose(2, 0, 1, 3), c0 32 for int8 / uint8;
NDC1HWC0 nz_matrix_to_ndc1hwc0) and max(golden, 0) with relu_mode 1. Comparison (main.cpp):
ResultCmp<dstDataType>(golden, out, 0.001f), dstDataType int8_t, uint8_t or uint16_t (half's
bits), over vectors of cFileSize elements.

The value rules (isa/store_modes.py quantize, pto-isa's CPU simulation include/pto/cpu/common.hpp
quantize_element): the Acc value as float32 times the float32 scale, rounded to float32; B8:
nearest integer, ties to even (std::nearbyint), saturated; DEQF16: saturated to +-65504, then
float16; ReLU applies to the quantized value (last in quantize_element).

The vector-quantization cases (case26 - case34, case_relu_41, case_relu_51, case_ndc1hwc0_vector_1,
case_ndc1hwc0_vector_relu_1: TStoreAcc2gmVector*, TSTORE_FP with a Scaling tile) are
tests/test_ptoisa_npu_store_acc_quant_vector.py's.
"""
import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error_at
from engine_compare import assert_engines_agree, both_executors, same_words, tensor_values
from ptoisa_st import MATMUL_TO_ACC, acc_store, arranged, as_words, result_cmp, round_up

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tstore_acc2gm at 3186c381"

F32, F16, BF16, I8, U8 = "float32", "float16", "bfloat16", "int8", "uint8"
NP = {F32: np.float32, F16: np.float16, BF16: ml_dtypes.bfloat16, I8: np.int8, U8: np.uint8}
# main.cpp's ResultCmp<dstDataType>: uint16_t for the half outputs (their bits)
CMP = {F16: np.uint16, I8: np.int8, U8: np.uint8}

# TEST_F(TStoreAcc2gmTest, <case>): (out dtype, src dtype, validM, validN, validK, GM layout, the layout's shape,
# AtomicAdd, NormalRelu, scalarQuant) from main.cpp's test_tstore_acc2gm_scalar_<layout><tilingKey, dst, src, M,
# N, K[, N, D, C1, H, W]>(scalarQuant) and the kernel's Launch<tilingKey> (atomicType, the GM shape, reluMode)
CASES = {
    "case16": (F16, I8, 64, 64, 64, "nd", None, False, False, 5.0),
    "case17": (I8, I8, 31, 32, 26, "nd", None, False, False, 2.0),
    "case18": (U8, I8, 16, 32, 17, "nd", None, False, False, 2.0),
    "case19": (F16, I8, 64, 32, 64, "nz", (1, 2, 4, 16, 16), False, False, 5.0),
    "case20": (I8, I8, 32, 32, 32, "nz", (1, 1, 2, 16, 32), False, False, 2.0),
    "case21": (U8, I8, 32, 32, 17, "nz", (1, 1, 2, 16, 32), False, False, 2.0),
    "case22": (I8, F16, 25, 35, 32, "nd", None, True, False, 2.0),
    "case23": (U8, F32, 16, 20, 25, "nd", None, False, False, 1.5),
    "case24": (I8, F32, 16, 64, 32, "nz", (1, 2, 1, 16, 32), False, False, 2.5),
    "case25": (U8, BF16, 32, 64, 16, "nz", (1, 2, 2, 16, 32), False, False, 2.0),
    "case_relu_21": (I8, F16, 55, 27, 33, "nd", None, False, True, 2.0),
    "case_relu_31": (I8, I8, 80, 96, 114, "nz", (3, 1, 5, 16, 32), False, True, 2.0),
    "case_ndc1hwc0_scalar_1": (I8, F16, 100, 64, 33, "ndc1hwc0", (1, 2, 1, 20, 5), False, True, 2.0),
    "case_ndc1hwc0_scalar_2": (U8, F32, 70, 64, 25, "ndc1hwc0", (1, 1, 2, 7, 10), False, False, 1.5),
}
# gen_data.py's draws by output dtype
DRAWS = {I8: (-1, 2), U8: (1, 4)}
# gen_data.py's saturation bounds by output dtype
BOUNDS = {I8: (-128, 127), U8: (0, 255)}


def golden_of(case):
    """gen_data.py's gen_golden_data with quant_mode 1, from np.random.RandomState(19):
    (x1, x2, golden in the GM layout's order)."""
    out, src, m, n, k, layout, shape, _atomic, relu, scalar = CASES[case]
    rng = np.random.RandomState(19)
    lo, hi = DRAWS.get(out, (-5, 5))
    x1 = rng.randint(lo, hi, [m, k]).astype(NP[src])
    x2 = rng.randint(lo, hi, [k, n]).astype(NP[src])
    golden = np.matmul(x1.astype(NP[out]), x2.astype(NP[out])).astype(NP[out])
    golden = golden * NP[out](scalar) if out == F16 else golden * scalar
    if out in BOUNDS:                   # saturation(): np.round(np.clip(...)).astype
        golden = np.round(np.clip(golden, *BOUNDS[out])).astype(NP[out])
    return x1, x2, arranged(golden, out, m, n, layout, shape, relu)


# the scalar kernels: MATMUL_TO_ACC with the launch's float scalarQuant, then the quantizing TSTORE
QUANT_KERNEL = MATMUL_TO_ACC.replace("def k(A, B, O):", "def k(A, B, O, q):") + """        pto.tstore(O, c{store})
        pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
"""


def kernel_source(case, quant="q"):
    """The case's kernel: its tiles' shapes and valid regions and its TSTORE's layout, stride,
    AtomicType, ReluPreMode and quant scalar (the launch argument q, or a constant)."""
    out, src, m, n, k, layout, shape, atomic, relu, _scalar = CASES[case]
    N, store = acc_store(out, src, m, n, layout, shape)
    store += ', atomic="add"' if atomic else ""
    store += ", relu=True" if relu else ""
    store += f", quant={quant}"
    acc = "int32" if src == I8 else F32
    return QUANT_KERNEL.format(M=round_up(m), N=N, K=round_up(k), vm=m, vn=n, vk=k, src=src, acc=acc, store=store)


def launch_args(case):
    """(golden, the kernel's arguments: A, B, the zeroed output, scalarQuant)."""
    x1, x2, golden = golden_of(case)
    out = pto.alloc_tensor(golden.nbytes, getattr(pto, golden.dtype.name))
    pto.memcpy_h2d(out, np.zeros_like(golden))
    return golden, (pto.to_device(x1), pto.to_device(x2), out, CASES[case][-1])


@pytest.mark.parametrize("case", list(CASES), ids=[f"TStoreAcc2gmTest.{c}" for c in CASES])
def test_tstore_acc2gm_scalar(make_kernels, case):
    """TStoreAcc2gmTest.<case>: the kernel above with the case's tiles, TSTORE and scalarQuant
    (CASES), racecheck- and synccheck-clean. Golden (gen_data.py quant_mode 1, RandomState(19)):
    x1 @ x2 in the output dtype, times the scalar, int8 / uint8 rounded (ties to even) and
    saturated, in the GM layout's order, max(golden, 0) for the relu cases. Comparison (main.cpp):
    ResultCmp<dstDataType>(golden, out, 0.001f) over cFileSize elements."""
    golden, args = launch_args(case)
    kernel = make_kernels(kernel_source(case)).k
    pto.launch(kernel, grid=(1,), args=args, check=("race", "sync"))
    pto.sync()
    got = np.empty_like(golden)
    pto.memcpy_d2h(got, args[2])
    cmp = CMP[golden.dtype.name]
    assert result_cmp(as_words(golden, cmp), as_words(got, cmp), 0.001, compared=golden.nbytes)


@pytest.mark.parametrize("case", ["case22", "case24", "case_relu_31"])
def test_every_engine_and_executor_quantizes_alike(make_kernels, case):
    """The quantizing store on the compiled event loop and SimPy, and in timing and functional
    mode with the numba and the numpy reference executor: the same GM bytes (the value rules are
    written once, isa/store_modes.py quantize), and a constant quant= stores what the run-time
    scalar does."""
    _golden, args = launch_args(case)
    kernel = make_kernels(kernel_source(case)).k
    slow = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    images = both_executors(kernel, (1,), args)
    for way, image in images.items():
        same_words(image, slow["words"], f"{case}: {way}")
    constant = make_kernels(kernel_source(case, quant=repr(CASES[case][-1]))).k
    same_words(both_executors(constant, (1,), args)[("timing", "reference")], slow["words"], f"{case}: constant")


# ---------------------------------------------------------------- the value rules on chosen values
IDENTITY = MATMUL_TO_ACC.replace("def k(A, B, O):", "def k(A, B, O, q):") + """        pto.tstore(O, c, quant=q{relu})
        pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
"""


def quantized(make_kernels, x1, x2, out, scale, relu=False):
    """O = pto.tstore(O, x1 @ x2 in the Acc, quant=scale[, relu=True]), run once (one 16 x 32 tile)."""
    src = x1.dtype.name
    acc = "int32" if src == I8 else F32
    k = x1.shape[1]
    source = IDENTITY.format(M=16, N=32, K=k, vm=16, vn=32, vk=k, src=src, acc=acc,
                             relu=", relu=True" if relu else "")
    o = pto.alloc_tensor(16 * 32 * np.dtype(out).itemsize, getattr(pto, out))
    pto.launch(make_kernels(source).k, grid=(1,), args=(pto.to_device(x1), pto.to_device(x2), o, scale))
    pto.sync()
    got = np.empty((16, 32), out)
    pto.memcpy_d2h(got, o)
    return got


def cpu_model(acc, scale, out, relu=False):
    """quantize_element (include/pto/cpu/common.hpp) in numpy: float32(acc) x float32(scale) in
    float32; int8 / uint8 nearbyint (ties to even) then clamp, half clamp to +-65504; ReLU last."""
    with np.errstate(over="ignore"):           # 1e30 x 1e10: inf in float32, as in C++
        r = acc.astype(np.float32) * np.float32(scale)
    r = np.clip(np.rint(r), *BOUNDS[out]) if out in BOUNDS else np.clip(r, -65504, 65504)
    return (np.maximum(r, 0) if relu else r).astype(out)


@pytest.mark.parametrize("out, scale, relu", [(I8, 1.0, False), (U8, 1.0, False), (I8, 0.5, False),
                                              (I8, -2.0, True), (U8, -0.5, False), (I8, 1e30, False)])
def test_qf322b8_rounds_to_even_and_saturates(make_kernels, out, scale, relu):
    """QF322B8_PRE: a float32 Acc (the identity times chosen values: halves, values past the int8 /
    uint8 range, huge ones) scaled, rounded to nearest even and saturated to the output's range,
    exactly as quantize_element computes it with the offset field 0; with a negative scale and
    relu the ReLU zeroes what the scale made negative, not the Acc's negative values (it applies
    last). (A kernel building the quant word as pto-isa's do sign-extends a negative scale into
    the offset field, 0x1FF, which the CPU simulation would add: pypto_sim keeps it 0.)"""
    values = np.array([-300.5, -128.5, -127.5, -2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.5, 126.5, 127.5, 200.0,
                       255.5, 256.5, -3.0, 1e10, -1e10, 0.25, 0.75, 1.25, -1.75, 17.0, 64.5, -64.5, 100.0,
                       -100.0, 254.5, 253.5, 7.49, -7.51], np.float32)
    x1 = np.eye(16, 16, dtype=np.float32)
    x2 = np.tile(values, (16, 1))
    got = quantized(make_kernels, x1, x2.astype(np.float32), out, scale, relu)
    want = cpu_model(x1 @ x2, scale, out, relu)
    assert np.array_equal(got, want), (got[0], want[0])


def test_deqf16_saturates_to_the_float16_range(make_kernels):
    """DEQF16: an int32 Acc of 127 x 127 x 32 = 516128 (and its negative) times 1.0 is past
    float16's range: saturated to +-65504 (std::clamp), not inf; smaller values round to float16."""
    x1 = np.full((16, 32), 127, np.int8)
    x1[1::2] = -127
    x1[2:, 4:] = 1
    x2 = np.full((32, 32), 127, np.int8)
    x2[:, 16:] = np.arange(16, dtype=np.int8) - 8
    got = quantized(make_kernels, x1, x2, F16, 1.0)
    acc = x1.astype(np.int32) @ x2.astype(np.int32)
    assert np.array_equal(got.view(np.uint16), cpu_model(acc, 1.0, F16).view(np.uint16))
    assert got[0, 0] == 65504 and got[1, 0] == -65504


def test_req8_scales_the_int32_acc(make_kernels):
    """REQ8: an int32 Acc scaled by a non-integer scale, rounded to even, saturated to int8."""
    rng = np.random.RandomState(5)
    x1 = rng.randint(-8, 8, (16, 32)).astype(np.int8)
    x2 = rng.randint(-8, 8, (32, 32)).astype(np.int8)
    acc = x1.astype(np.int32) @ x2.astype(np.int32)
    got = quantized(make_kernels, x1, x2, I8, 0.25)
    assert np.array_equal(got, cpu_model(acc, 0.25, I8))


def deqf16_everywhere(make_kernels, acc, scale, atomic=False, init=0.0):
    """O (float16, holding init) <- pto.tstore(O, c, quant=scale[, atomic="add"]) of the int32 Acc
    acc (16 x 32, eye(16, 32) @ the int8 rows of acc), on the numba and the reference executor in
    timing and functional mode: their O."""
    source = IDENTITY.format(M=16, N=32, K=32, vm=16, vn=32, vk=32, src=I8, acc="int32",
                             relu=', atomic="add"' if atomic else "")
    x2 = np.zeros((32, 32), np.int8)
    x2[:16] = acc
    o = pto.alloc_tensor(16 * 32 * 2, pto.float16)
    pto.memcpy_h2d(o, np.full((16, 32), init, np.float16))
    args = (pto.to_device(np.eye(16, 32, dtype=np.int8)), pto.to_device(x2), o, scale)
    return {way: tensor_values(image, o).reshape(16, 32)
            for way, image in both_executors(make_kernels(source).k, (1,), args).items()}


def test_deqf16_rounds_to_the_nearest_float16(make_kernels):
    """DEQF16's value is quantize_element's static_cast<half> of the clamped float32 product:
    rounded to the nearest float16, ties to even, on every executor (int8 values times 0.37, few
    of them float16 values). With atomic="add" the float16 value is what GM adds (dst +=
    converted): 1 x 0.5001 is 0.5 in float16, and 1024 + 0.5 ties to 1024, where the float32
    product's 1024.5001 would give 1025."""
    acc = np.random.RandomState(7).randint(-128, 128, (16, 32)).astype(np.int8)
    want = cpu_model(acc.astype(np.int32), 0.37, F16)
    for way, got in deqf16_everywhere(make_kernels, acc, 0.37).items():
        assert np.array_equal(got.view(np.uint16), want.view(np.uint16)), way
    ones = np.ones((16, 32), np.int8)
    added = (np.float32(1024) + cpu_model(ones.astype(np.int32), 0.5001, F16).astype(np.float32)).astype(np.float16)
    assert added[0, 0] == 1024
    for way, got in deqf16_everywhere(make_kernels, ones, 0.5001, atomic=True, init=1024.0).items():
        assert np.array_equal(got, added), way


# ---------------------------------------------------------------- what A2/A3 refuses
def refused(make_kernels, src, acc, out, store, message, loc="Acc"):
    """A kernel storing an Acc (or a Vec tile, loc="Vec") into out with `store` fails to compile
    with message at the store's line."""
    if loc == "Acc":
        source = IDENTITY.format(M=16, N=32, K=32, vm=16, vn=32, vk=32, src=src, acc=acc, relu="")
        source = source.replace("pto.tstore(O, c, quant=q)", store)
    else:
        source = ("\n@pto.kernel\ndef k(A, B, O, q):\n    with pto.vector():\n"
                  f"        c = pto.alloc_tile(16, 32, pto.{acc})\n        {store}\n")
    src = getattr(pto, src or "float32")
    args = (pto.alloc_tensor(16 * 32 * 4, src), pto.alloc_tensor(32 * 32 * 4, src),
            pto.alloc_tensor(16 * 32 * np.dtype(out).itemsize, getattr(pto, out)), 2.0)
    compile_error_at(make_kernels(source).k, args, message, store)


@pytest.mark.parametrize("src, acc, out, store, message", [
    ("float16", F32, F16, "pto.tstore(O, c, quant=q)",
     "tstore: quant= from a float32 Acc into 'O' of float16; A2/A3 quantizes float32 to int8 / uint8 "
     "(QF322B8_PRE) and int32 to float16 (DEQF16), int8 / uint8 (REQ8) (TStore.hpp CheckAcc2gm<isQuant = true>: "
     "\"The output data type must be restricted to int8_t/uint8_t when the source data type is float.\")"),
    ("int8", "int32", "int16", "pto.tstore(O, c, quant=q)",
     "\"The output data type must be restricted to half/int8_t/uint8_t when the source data type is int32_t.\""),
    ("int8", "int32", "int32", "pto.tstore(O, c, quant=2.0)", "tstore: quant= from a int32 Acc into 'O' of int32"),
    ("int8", "int32", I8, "pto.tstore(O, c)", "tstore: the fixpipe converts int32 to int32, not to int8 ('O')"),
    ("float16", F32, U8, "pto.tstore(O, c, quant=True)", "tstore: quant must be a number (the scale), not a bool"),
    ("float16", F32, U8, "pto.tstore(O, c, quant=q > 1.0)", "tstore: quant must be a number (the scale), not a bool"),
])
def test_a2a3_refuses_what_checkacc2gm_does(make_kernels, src, acc, out, store, message):
    """The (Acc, GM) dtype pairs CheckAcc2gm<isQuant = true> rejects (float32 to float16: the
    QF322F16_PRE of GetScalarPreQuantMode is refused on A2/A3; int32 to int16 or int32), an int8
    GM without quant= (the fixpipe converts int32 to int32 only), a bool scale (a constant or a
    run-time comparison): CompileErrors at the store."""
    refused(make_kernels, src, acc, out, store, message)


def test_quant_is_the_fixpipes(make_kernels):
    """quant= on a Vec tile's store: TSTORE_IMPL(dst, src, preQuantScalar)'s static_assert
    "Source TileType only support Acc!"."""
    refused(make_kernels, None, F32, I8, "pto.tstore(O, c, quant=q)",
            "tstore: quant= is the fixpipe's scalar pre-stage quantization, for a store from Acc; 'c' is in Vec "
            "(A2/A3 TStore.hpp TSTORE_IMPL(dst, src, preQuantScalar): static_assert \"Source TileType only "
            "support Acc!\")", loc="Vec")
