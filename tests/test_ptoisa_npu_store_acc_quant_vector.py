"""pto-isa's ON-DEVICE A2/A3 st cases of TSTORE from an Acc tile with the fixpipe's VECTOR pre-stage
quantization (hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tstore_acc2gm at 3186c381:
main.cpp, tstore_acc2gm_kernel.cpp, gen_data.py): TStoreAcc2gmTest.case26 - case34, case_relu_41,
case_relu_51, case_ndc1hwc0_vector_1 and case_ndc1hwc0_vector_relu_1 (test_tstore_acc2gm_vector_nz2nd,
_nz2nz, _nz2ndc1hwc0), in the AI-core API as the kernels write them; then the quantization's
value rules on chosen words, the engines and checks on it, and what A2/A3 refuses. The scalar
form's cases are tests/test_ptoisa_npu_store_acc_quant.py's.

The kernels (TStoreAcc2gmVectorNz2nd, Nz2nz, Nz2NDC1HWC0) are the scalar ones' matmul (tests/
ptoisa_st.py MATMUL_TO_ACC) with a uint64 quantTensor argument of alignScalingN words (validN x 8
bytes rounded up to 128), TLOADed into a one-row Mat tile beside A and B; after the M -> FIX flag,
TMOV(scalingTile, scalingMatTile) into a Scaling tile of valid validN (A2/A3 TMov.hpp TMovToFb:
copy_cbuf_to_fbuf, Op::TMOV_M2S on PIPE_FIX) and TSTORE_FP<AccTile, GlobalData, ScalingTile,
AtomicNone[, NormalRelu]>(dstGlobal, cTile, scalingTile): pto.tmov(fp, q_mat) and
pto.tstore(O, c, quant=fp[, relu=True]) (isa/35_aicore.toml TMOV_M2S, TSTORE_FP). A2/A3's
TSTORE_IMPL(dst, src, fp) (TStore.hpp; tstore_common.hpp TStoreAccFp) sets the FB address
(set_fpc) and stores in the mode GetVectorPreQuantMode<Acc, GM> picks: int32 -> half VDEQF16,
int32 -> int8 / uint8 VREQ8, float -> int8 / uint8 VQF322B8_PRE; column c by quant word c
(isa/store_modes.py decode_word: M1 = bits 31:13, offset bits 45:37, sign bit 46). pypto_sim
holds the words as int64 (TMovToFb takes uint64_t or int64_t; the words' bits are the same).

Goldens: gen_data.py's gen_golden_data with quant_mode 2 (get_quant_golden), in numpy, each case
from its own np.random.RandomState(19) (vector_golden_of). gen_data.py's uint8 words are the
float32 bits & 0xFF, 0 for the scales 1 - 4 it draws, so the uint8 cases' goldens (case28,
case30 - case34) are all 0, and so is what the fixpipe computes with an M1 of 0; the output
starts as 0x5A bytes, so those cases still fail if the store misses an element. gen_data.py's
dtypes differ from the kernels' in case31 - case34 (its x1, x2 int8 where the kernels read
half: drawn here as the kernels' half, randint(1, 4) either way) and case33 (its output uint8,
the kernel's int8: the golden and words are gen_data.py's). Comparison (main.cpp):
ResultCmp<dstDataType>(golden, out, 0.001f), dstDataType as main.cpp names it (uint16_t for
half's bits), over vectors of cFileSize elements.

The value rules (pto-isa's CPU simulation include/pto/cpu/common.hpp quantize_element and
extract_m1_from_quant<true>): float32(acc) x M1 in float32; VDEQF16 saturated to +-65504 then
half; B8 nearbyint(r + offset), saturated to [-128, 127] when bit 46 is set, else [0, 255], the
byte stored whatever the GM dtype; ReLU last. (The CPU simulation's StoreElement indexes the words
by the row for a ColMajor tile such as the Acc; the device and gen_data.py take column c's word,
which pypto_sim follows.)

Every vector case of the suite is ported.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error_at
from engine_compare import assert_engines_agree, both_executors, same_words, tensor_values
from ptoisa_st import MATMUL_TO_ACC, acc_store, arranged, as_words, quant_m1, result_cmp, round_up

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tstore_acc2gm at 3186c381"

F32, F16, I8, U8 = "float32", "float16", "int8", "uint8"
NP = {F32: np.float32, F16: np.float16, I8: np.int8, U8: np.uint8}
# gen_data.py's draws by output dtype
DRAWS = {I8: (-1, 2), U8: (1, 4)}

# TEST_F(TStoreAcc2gmTest, <case>): (out dtype, src dtype, validM, validN, validK, GM layout, the layout's shape,
# NormalRelu, ResultCmp's dstDataType) from main.cpp's test_tstore_acc2gm_vector_<layout><tilingKey, ...>() and the
# kernel's Launch<tilingKey> (dstDataType, srcDataType, the GM shape, reluMode; atomicType 0 in every case)
VECTOR_CASES = {
    "case26": (F16, I8, 55, 88, 32, "nd", None, False, np.uint16),
    "case27": (I8, I8, 34, 85, 19, "nd", None, False, np.int8),
    "case28": (U8, I8, 31, 32, 29, "nd", None, False, np.uint8),
    "case29": (I8, I8, 32, 32, 32, "nz", (1, 1, 2, 16, 32), False, np.int8),
    "case30": (U8, I8, 32, 32, 128, "nz", (1, 1, 2, 16, 32), False, np.uint8),
    "case31": (U8, F16, 33, 65, 15, "nd", None, False, np.uint8),
    "case32": (U8, F16, 19, 33, 23, "nd", None, False, np.uint8),
    "case33": (I8, F16, 48, 64, 25, "nz", (2, 1, 3, 16, 32), False, np.uint8),
    "case34": (U8, F16, 128, 96, 17, "nz", (3, 1, 8, 16, 32), False, np.uint8),
    "case_relu_41": (I8, F16, 79, 63, 33, "nd", None, True, np.uint8),
    "case_relu_51": (I8, I8, 80, 128, 90, "nz", (2, 2, 5, 16, 32), True, np.uint8),
    "case_ndc1hwc0_vector_1": (F16, I8, 55, 64, 32, "ndc1hwc0", (1, 2, 2, 11, 5), False, np.uint16),
    "case_ndc1hwc0_vector_relu_1": (I8, I8, 52, 64, 19, "ndc1hwc0", (1, 1, 2, 13, 4), True, np.int8),
}
# gen_data.py's output dtype where it is not the kernel's: case33's kernel stores int8
GEN_OUT = {"case33": U8}



def vector_golden_of(case):
    """gen_data.py's gen_golden_data with quant_mode 2 (get_quant_golden), from RandomState(19):
    (x1, x2, the quant words, golden in the GM layout's order). x1 and x2 as quant_mode 1's, in
    the kernel's source dtype; then n scales randint(1, 5) as float32, each word its float32 bits,
    bit 46 set for an int8 output, & 0xFF for uint8 (0: the scales 1 - 4 have no low byte), the
    bits as they are for half; golden: int8 qf2b8_pre (x m1, round, saturate to [-256, 255], +
    offset (0), saturate to [-128, 127]), half qf2f16_pre (x m1, round, saturate to half's range),
    else golden x word (0)."""
    out_kernel, src, m, n, k, layout, shape, relu, _cmp = VECTOR_CASES[case]
    out = GEN_OUT.get(case, out_kernel)
    rng = np.random.RandomState(19)
    lo, hi = DRAWS.get(out, (-5, 5))
    x1 = rng.randint(lo, hi, [m, k]).astype(NP[src])
    x2 = rng.randint(lo, hi, [k, n]).astype(NP[src])
    golden = np.matmul(x1.astype(NP[out]), x2.astype(NP[out])).astype(NP[out])
    words = rng.randint(1, 5, n).astype(np.float32).view(np.uint32).astype(np.uint64)
    if out == I8:
        words |= np.uint64(0x400000000000)
        tmp = np.round(np.clip(golden.astype(np.float32) * quant_m1(words), -256, 255)).astype(np.int16)
        golden = np.round(np.clip(tmp + ((words >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.int16),
                                  -128, 127)).astype(np.int8)
    elif out == F16:
        f16 = np.finfo(np.float16)
        golden = np.round(np.clip(golden.astype(np.float32) * quant_m1(words), f16.min, f16.max)).astype(np.float16)
    else:
        words &= np.uint64(0xFF)
        golden = (golden.astype(np.uint64) * words).astype(NP[out])
    return x1, x2, words, arranged(golden, out, m, n, layout, shape, relu)


# the vector kernels (TStoreAcc2gmVectorNz2nd, Nz2nz, Nz2NDC1HWC0): MATMUL_TO_ACC with the quant tensor
# TLOADed into a one-row Mat tile of alignScalingN words beside A and B, then after the M -> FIX flag
# TMOV(scalingTile, scalingMatTile) into the Scaling tile (valid validN) and TSTORE_FP
VECTOR_KERNEL = MATMUL_TO_ACC.replace("def k(A, B, O):", "def k(A, B, O, Q):").replace(
    "        pto.tload(b_mat, B)\n",
    "        pto.tload(b_mat, B)\n        q_mat = pto.alloc_tile(1, {S}, pto.int64, loc=pto.Mat)\n"
    "        pto.tload(q_mat, Q)\n") + """\
        fp = pto.alloc_tile(1, {S}, pto.int64, loc=pto.Scaling, valid=(1, {vn}))
        pto.tmov(fp, q_mat)
        pto.tstore(O, c{store})
        pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
"""


def vector_kernel_source(case):
    """The case's vector kernel: tiles as the scalar cases', alignScalingN = validN x 8 bytes
    rounded up to 128 (16 words), TSTORE_FP(dstGlobal, cTile, scalingTile) as quant=fp."""
    out, src, m, n, k, layout, shape, relu, _cmp = VECTOR_CASES[case]
    N, store = acc_store(out, src, m, n, layout, shape)
    store += (", relu=True" if relu else "") + ", quant=fp"
    acc = "int32" if src == I8 else F32
    return VECTOR_KERNEL.format(M=round_up(m), N=N, K=round_up(k), vm=m, vn=n, vk=k, src=src, acc=acc,
                                store=store, S=round_up(n))


def vector_launch_args(case):
    """(golden, the kernel's arguments: A, B, the output, the quant tensor). main.cpp allocates the
    output without clearing it: here it holds 0x5A bytes, so an element the store missed fails;
    the quant tensor holds alignScalingN words (main.cpp reads fbFileSize bytes of a file of
    validN words: the others are 0 here), as int64 (pypto_sim has no uint64; the bits are the same)."""
    x1, x2, words, golden = vector_golden_of(case)
    out = VECTOR_CASES[case][0]
    o = pto.alloc_tensor(golden.nbytes, getattr(pto, out))
    pto.memcpy_h2d(o, np.full(golden.nbytes, 0x5A, np.uint8).view(NP[out]))
    padded = np.zeros(round_up(len(words)), np.uint64)
    padded[:len(words)] = words
    return golden, (pto.to_device(x1), pto.to_device(x2), o, pto.to_device(padded.view(np.int64)))


@pytest.mark.parametrize("case", list(VECTOR_CASES), ids=[f"TStoreAcc2gmTest.{c}" for c in VECTOR_CASES])
def test_tstore_acc2gm_vector(make_kernels, case):
    """TStoreAcc2gmTest.<case>: the vector kernel above with the case's tiles and TSTORE_FP
    (VECTOR_CASES), racecheck- and synccheck-clean. Golden: vector_golden_of (gen_data.py
    quant_mode 2). Comparison (main.cpp): ResultCmp<dstDataType>(golden, out, 0.001f) over
    cFileSize elements."""
    golden, args = vector_launch_args(case)
    pto.launch(make_kernels(vector_kernel_source(case)).k, grid=(1,), args=args, check=("race", "sync"))
    pto.sync()
    got = np.empty(golden.nbytes, np.uint8)
    pto.memcpy_d2h(got.view(NP[VECTOR_CASES[case][0]]), args[2])
    cmp = VECTOR_CASES[case][-1]
    assert result_cmp(as_words(golden, cmp), as_words(got, cmp), 0.001, compared=golden.nbytes)


@pytest.mark.parametrize("case", ["case26", "case_relu_41", "case_ndc1hwc0_vector_relu_1"])
def test_every_executor_quantizes_by_the_words_alike(make_kernels, case):
    """TSTORE_FP in timing and functional mode with the numba and the reference executor: the
    same GM bytes, the golden's exactly (timing mode: the numba executor's on the compiled event
    loop, the reference executor's on SimPy)."""
    golden, args = vector_launch_args(case)
    images = both_executors(make_kernels(vector_kernel_source(case)).k, (1,), args)
    first = images[("timing", "reference")]
    for way, image in images.items():
        same_words(image, first, f"{case}: {way}")
        assert np.array_equal(tensor_values(image, args[2]).view(np.uint8), golden.view(np.uint8).ravel()), way


@pytest.mark.parametrize("case", ["case26", "case28", "case30", "case33", "case_relu_41",
                                  "case_ndc1hwc0_vector_relu_1"])
def test_the_compiled_loop_quantizes_by_the_words_as_simpy_does(make_kernels, case):
    """TSTORE_FP on the compiled event loop, whose replay reads the Scaling tile's words with the
    Acc tile when the store starts (exec/compiled/replay.py _store_quant), and on SimPy: the same
    cycles, records and GM bytes, for VDEQF16 (case26), VREQ8 into uint8 (case28) and NZ
    (case30), VQF322B8_PRE into NZ (case33), with relu (case_relu_41) and into NC1HWC0."""
    _golden, args = vector_launch_args(case)
    assert_engines_agree(make_kernels(vector_kernel_source(case)).k, args, (1, 1, 1), (32, 1, 1))


def test_the_compiled_loop_runs_the_fb_move_as_simpy_does(make_kernels):
    """Without TSTORE_FP the compiled event loop runs a launch whose TMOV_M2S fills a Scaling tile
    (priced 1 cycle + bytes / l1_to_fb_bytes_per_cycle on FIX): the same cycles, records and GM."""
    source = VECTOR_KERNEL.format(M=16, N=32, K=16, vm=16, vn=32, vk=16, src=F32, acc=F32, S=32, store="")
    x1, x2 = np.ones((16, 16), np.float32), np.ones((16, 32), np.float32)
    args = (pto.to_device(x1), pto.to_device(x2), pto.alloc_tensor(16 * 32 * 4, pto.float32),
            pto.to_device(np.arange(32, dtype=np.int64)))
    assert_engines_agree(make_kernels(source).k, args, (1, 1, 1), (32, 1, 1))


def word(scale=0.0, offset=0, signed=True, bits=None, high=0):
    """A quant word: the float32 bits of scale (or bits), the offset in bits 45:37, bit 46 for
    signed, and high in bits 63:47 (which quantize_element ignores)."""
    low = int(np.float32(scale).view(np.uint32)) if bits is None else bits
    return np.uint64(low | offset << 37 | int(signed) << 46 | high << 47)


def cpu_vector_model(acc, words, out, relu=False):
    """quantize_element's vector form (include/pto/cpu/common.hpp) in numpy, column c by words[c]:
    extract_m1_from_quant<true> (bits 31:13: sign, 8 exponent, 10 mantissa bits; 0 when both are
    0), float32(acc) x m1 in float32; VDEQF16 clamped to +-65504 (NaN stays) then half; B8
    nearbyint(r + offset) clamped to [-128, 127] with bit 46, else [0, 255], NaN 0; ReLU last; a
    B8 value stored as its byte (a [-128, 127] value into uint8 wraps, as the fixpipe writes it)."""
    m1_bits = (words >> np.uint64(13)) & np.uint64(0x7FFFF)
    e = ((m1_bits >> np.uint64(10)) & np.uint64(0xFF)).astype(np.int64)
    mant = (m1_bits & np.uint64(0x3FF)).astype(np.float32)
    sign = np.where((m1_bits >> np.uint64(18)) & np.uint64(1), np.float32(-1), np.float32(1))
    with np.errstate(all="ignore"):
        m1 = sign * (np.float32(1) + mant / np.float32(1024)) * np.power(np.float32(2), (e - 127).astype(np.float32))
        m1 = np.where((e == 0) & (mant == 0), np.float32(0), m1).astype(np.float32)
        r = (acc.astype(np.float32) * m1).astype(np.float32)
        if out == F16:
            r = np.clip(r, -65504, 65504)
            return (np.maximum(r, 0) if relu else r).astype(np.float16)
        r = np.rint((r + ((words >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.float32)).astype(np.float32))
        signed = ((words >> np.uint64(46)) & np.uint64(1)).astype(bool)
        r = np.where(np.isnan(r), 0, np.clip(r, np.where(signed, -128, 0), np.where(signed, 127, 255)))
        r = np.maximum(r, 0) if relu else r
        return r.astype(np.int16).astype(out)


FP_IDENTITY = VECTOR_KERNEL.replace("pto.tstore(O, c{store})", "pto.tstore(O, c, quant=fp{relu})")


def quantized_by_words(make_kernels, x1, x2, out, words, relu=False):
    """O (16 x 32 of out) <- TSTORE_FP of x1 @ x2 by the 32 words, on the numba and the reference
    executor in timing and functional mode: their O."""
    src, k = x1.dtype.name, x1.shape[1]
    source = FP_IDENTITY.format(M=16, N=32, K=k, vm=16, vn=32, vk=k, src=src, acc="int32" if src == I8 else F32,
                                S=32, relu=", relu=True" if relu else "")
    o = pto.alloc_tensor(16 * 32 * np.dtype(out).itemsize, getattr(pto, out))
    args = (pto.to_device(x1), pto.to_device(x2), o, pto.to_device(np.asarray(words, np.uint64).view(np.int64)))
    return {way: tensor_values(image, o).reshape(16, 32)
            for way, image in both_executors(make_kernels(source).k, (1,), args).items()}


# one word a column: truncated mantissas (0.3, -0.7), offsets with either sign bit, uint8's range
# for negative products, a zero and an infinite scale, the smallest M1 (exponent 0, mantissa 1),
# and high bits set (the word a float64 NaN, its sign bit set), which the quantization ignores
B8_WORDS = [word(1.0), word(0.3), word(-0.7), word(1.0, 5), word(1.0, 200, False), word(1.0, signed=False),
            word(0.0), word(bits=0x7F800000), word(bits=1 << 13), word(2.5, high=0x1FFFF), word(0.3, 511, False),
            word(-1.0, signed=False), word(0.5), word(bits=0x7F800000, signed=False), word(1e-3, 3),
            word(-0.3, high=0xFFF0)] * 2


@pytest.mark.parametrize("out, relu", [(I8, False), (U8, False), (I8, True)])
def test_vqf322b8_decodes_each_word(make_kernels, out, relu):
    """VQF322B8_PRE: a float32 Acc (the identity times halves, values past the B8 ranges, NaN and
    infinities: a column with an infinity is NaN in the other rows, 0 x inf) quantized column by
    column exactly as quantize_element's vector form does: the word's truncated M1, its offset
    and sign bit (not the GM dtype's) and nothing of its high bits; a Scaling tile of words whose
    float64 reading is a NaN moves bit for bit (TLOAD, TMOV_M2S)."""
    rng = np.random.RandomState(3)
    x2 = (rng.randint(-600, 600, (16, 32)) / 2).astype(np.float32)
    x2[3, 5], x2[7, 9], x2[9, 20], x2[12, 30] = np.inf, -np.inf, np.nan, 1e30
    x1 = np.eye(16, 16, dtype=np.float32)
    with np.errstate(invalid="ignore"):             # 0 x inf
        acc = x1 @ x2
    want = cpu_vector_model(acc, np.array(B8_WORDS), out, relu)
    for way, got in quantized_by_words(make_kernels, x1, x2, out, B8_WORDS, relu).items():
        assert np.array_equal(got, want), (way, np.argwhere(got != want)[:4])


def test_vdeqf16_decodes_each_word(make_kernels):
    """VDEQF16: an int32 Acc by each column's M1 only (offset and sign ignored), clamped to +-65504
    (an infinite scale saturates, and is NaN on a 0), rounded to half."""
    x1 = np.random.RandomState(4).randint(-128, 128, (16, 32)).astype(np.int8)
    x1[0, :] = 0
    words = [word(0.37), word(bits=0x7F800000), word(-3.0, 7), word(2.0 ** 20), word(0.0), word(1.0, high=0xFFFF),
             word(-0.3, 511, False), word(1e-5)] * 4
    want = cpu_vector_model(x1.astype(np.int32) @ np.eye(32, 32, dtype=np.int32), np.array(words), F16)
    for way, got in quantized_by_words(make_kernels, x1, np.eye(32, 32, dtype=np.int8), F16, words).items():
        assert np.array_equal(got, want, equal_nan=True), (way, np.argwhere(got != want)[:4])


# ---------------------------------------------------------------- what A2/A3 refuses
@pytest.mark.parametrize("changes, message, culprit", [
    ([("quant=fp", "quant=q_mat")], "tstore: quant: tile 'q_mat' is in Mat (L1) but TSTORE_FP takes fp in Scaling",
     "pto.tstore(O, c, quant=q_mat)"),
    ([("loc=pto.Scaling, valid=(1, 32)", "loc=pto.Scaling, valid=(1, 16)")], None, None),
    ([("(1, 32, pto.int64", "(1, 16, pto.int64"), ("valid=(1, 32))", "valid=(1, 16))")],
     "tstore: quant tile 'fp' holds 16 quant words but the Acc tile 'c' has 32 columns",
     "pto.tstore(O, c, quant=fp)"),
    ([("fp = pto.alloc_tile(1, 32, pto.int64", "fp = pto.alloc_tile(2, 32, pto.int64")],
     "a Scaling tile is one row (1 x n), not 2 rows (A2/A3 TMov.hpp TMovToFb: \"TMov: When TileType is "
     "Scaling, row must be 1\")", None),
    ([("fp = pto.alloc_tile(1, 32, pto.int64", "fp = pto.alloc_tile(1, 32, pto.int32")],
     "Scaling (FB) holds int64, not int32", None),
    ([("pto.tstore(O, c, quant=fp)", "pto.tstore(Q, q_mat)")], "the buffer 'q_mat' holds int64, which no tile unit",
     "pto.tstore(Q, q_mat)"),
])
def test_a2a3_refuses_what_tmovtofb_and_tstore_fp_do(make_kernels, changes, message, culprit):
    """Compile errors at the offending line: quant= a tile not in Scaling (TSTORE_FP reads the
    FB; SET_QUANT_VECTOR's static_assert "Fix: SET_QUANT_VECTOR only supports Scaling input tile
    type."), a Scaling tile with fewer words than the Acc tile's columns (pypto_sim's rule), of
    two rows or of another dtype (TMovToFb's static_asserts), and the int64 words anywhere but
    TLOAD, TMOV_M2S and TSTORE_FP (no unit computes them). A Scaling tile's valid region narrower
    than the Acc's is no error: the fixpipe reads the tile's words."""
    source = FP_IDENTITY.format(M=16, N=32, K=16, vm=16, vn=32, vk=16, src=F32, acc=F32, S=32, relu="")
    for change in changes:
        assert change[0] in source
        source = source.replace(*change)
    args = (pto.alloc_tensor(16 * 16 * 4, pto.float32), pto.alloc_tensor(16 * 32 * 4, pto.float32),
            pto.alloc_tensor(16 * 32, pto.int8), pto.alloc_tensor(32 * 8, pto.int64))
    kernel = make_kernels(source).k
    if message is None:
        kernel.program_for(args)
        return
    culprit = culprit or next(line.strip() for line in source.splitlines() if changes[0][1] in line)
    compile_error_at(kernel, args, message, culprit)


def test_the_fb_move_is_whole_128_byte_bursts(make_kernels):
    """TMovToFb: static_assert "TMov: When TileType is Scaling, col * sizeof(srcType) must be
    aligned to 128": a row of 8 words (64 bytes) is refused at the tmov."""
    source = FP_IDENTITY.format(M=16, N=32, K=16, vm=16, vn=32, vk=16, src=F32, acc=F32, S=32, relu="")
    source = source.replace("pto.alloc_tile(1, 32, pto.int64", "pto.alloc_tile(1, 8, pto.int64")
    source = source.replace("valid=(1, 32))", "valid=(1, 8))").replace("pto.tstore(O, c, quant=fp)", "")
    args = (pto.alloc_tensor(16 * 16 * 4, pto.float32), pto.alloc_tensor(16 * 32 * 4, pto.float32),
            pto.alloc_tensor(16 * 32, pto.int8), pto.alloc_tensor(8 * 8, pto.int64))
    compile_error_at(make_kernels(source).k, args, "tmov: 'fp' is a row of 64 bytes, not a multiple of 128 (A2/A3 "
                     "TMov.hpp TMovToFb: static_assert \"TMov: When TileType is Scaling, col * sizeof(srcType) "
                     "must be aligned to 128\")", "pto.tmov(fp, q_mat)")


def test_float32_into_half_is_refused_as_checkacc2gm_does(make_kernels):
    """quant=fp from a float32 Acc into a float16 tensor: CheckAcc2gm<isQuant = true>'s
    static_assert, as for the scalar form (GetVectorPreQuantMode has no float -> half mode)."""
    source = FP_IDENTITY.format(M=16, N=32, K=16, vm=16, vn=32, vk=16, src=F32, acc=F32, S=32, relu="")
    args = (pto.alloc_tensor(16 * 16 * 4, pto.float32), pto.alloc_tensor(16 * 32 * 4, pto.float32),
            pto.alloc_tensor(16 * 32 * 2, pto.float16), pto.alloc_tensor(32 * 8, pto.int64))
    compile_error_at(make_kernels(source).k, args, "\"The output data type must be restricted to int8_t/uint8_t when "
                     "the source data type is float.\"", "pto.tstore(O, c, quant=fp)")


# ---------------------------------------------------------------- the checks
def test_racecheck_and_initcheck_see_the_words_as_reads(make_kernels):
    """The quant words are ordinary data: in a sync="manual" kernel TMOV_M2S (FIX) reading the Mat
    tile MTE2 is still loading is a race on it (racecheck), and TLOAD of a quant tensor nothing
    wrote is an uninitialised read (initcheck). (The kernel as pto-isa writes it is racecheck- and
    synccheck-clean: test_tstore_acc2gm_vector.)"""
    source = vector_kernel_source("case27")
    alloc = "        fp = pto.alloc_tile(1, 96, pto.int64, loc=pto.Scaling, valid=(1, 85))\n"
    move, load = "        pto.tmov(fp, q_mat)\n", "        pto.tload(q_mat, Q)\n"
    assert alloc in source and move in source
    early = source.replace(alloc, "").replace(move, "").replace(load, load + alloc + move)
    early = early.replace("@pto.kernel\n", '@pto.kernel(sync="manual")\n')      # no flags inserted
    _golden, args = vector_launch_args("case27")
    with pytest.raises(pto.RaceError, match=r"q_mat.*TMOV_M2S|TMOV_M2S.*q_mat"):
        pto.launch(make_kernels(early).k, grid=(1,), args=args, check=("race",))
        pto.sync()
    unwritten = args[:3] + (pto.alloc_tensor(96 * 8, pto.int64),)
    with pytest.raises(pto.UninitializedReadError, match=r"TLOAD at line \d+ .*reads unwritten\[0\], which was never"):
        pto.launch(make_kernels(source).k, grid=(1,), args=unwritten, check=("initcheck",))
        pto.sync()


def test_the_fixpipe_buffer_holds_2_kib(make_kernels):
    """A2/A3's FBuffer (Scaling) is 2 KiB (buffer_limits.hpp PTO_FBUF_SIZE_BYTES; the machine
    table's fb_bytes): 256 quant words fit, 272 are an L1CapacityError at launch naming FB."""
    for words, fits in ((256, True), (272, False)):
        source = VECTOR_KERNEL.format(M=16, N=32, K=16, vm=16, vn=32, vk=16, src=F32, acc=F32, S=words, store="")
        args = (pto.alloc_tensor(16 * 16 * 4, pto.float32), pto.alloc_tensor(16 * 32 * 4, pto.float32),
                pto.alloc_tensor(16 * 32 * 4, pto.float32), pto.to_device(np.zeros(words, np.int64)))
        for t in args[:2]:
            pto.memcpy_h2d(t, np.zeros(t.nbytes // 4, np.float32))
        if fits:
            pto.launch(make_kernels(source).k, grid=(1,), args=args)
            pto.sync()
            continue
        with pytest.raises(pto.L1CapacityError, match=r"tile 'fp' \(Scaling, 1 x 272 int64\) needs 2176 bytes of "
                                                      r"Scaling \(FB\) but only 2048"):
            pto.launch(make_kernels(source).k, grid=(1,), args=args)
            pto.sync()
