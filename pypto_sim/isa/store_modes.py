"""The tile_store family's `mode` operand as data (isa/30_tiles.toml TSTORE, isa/35_aicore.toml
TSTORE_ACC), and the fixpipe's scalar pre-stage quantization of one value (``quantize``), for the
frontend, both executors and the race check (exec/compiled/tiles.py compiles with these, so this
module imports numpy only).

pto-isa's TSTORE template arguments (include/pto/common/pto_instr.hpp; A2/A3:
include/pto/npu/a2a3/TStore.hpp; its CPU simulation: include/pto/cpu/TStore.hpp and common.hpp):

- ATOMIC_ADD, AtomicType::AtomicAdd: each value, converted to GM's dtype, is added to the
  element GM holds, in that dtype (SetAtomicAdd: float32, float16, bfloat16, int32, int16,
  int8; the CPU simulation's AddToElement, `data[offset] += summand`), integers wrapping.
- RELU, ReluPreMode::NormalRelu (an Acc source only, the fixpipe's pre-stage): a value that is
  not positive becomes 0 before the conversion (common.hpp ConvertStoreValue: ReLU(value)).
- QUANT_F16, QUANT_S8, QUANT_U8: TSTORE(dst, acc, preQuantScalar) (an Acc source only; A2/A3's
  TSTORE_IMPL: set_quant_pre(preQuantScalar), then the mode GetScalarPreQuantMode<Acc dtype,
  GM dtype> picks, include/pto/npu/a2a3/common.hpp): QUANT_F16 is QuantMode_t::DEQF16 (int32 ->
  float16), QUANT_S8 / QUANT_U8 are QF322B8_PRE (float32 -> int8 / uint8) and REQ8 (int32 ->
  int8 / uint8), the sign bit (preQuantScalar bit 46) 1 for int8 and 0 for uint8 as the kernels
  and SET_QUANT_SCALAR set it. The store's `scale` operand is the scalar's float32 (bits 31:0).
  RELU, with a quantization, applies to the quantized value (quantize_element: ReLU last).
- QUANT_VECTOR, with one of those: TSTORE_FP(dst, acc, fp) (isa/35_aicore.toml TSTORE_FP), the
  vector pre-stage quantization (A2/A3 TStore.hpp TSTORE_IMPL(dst, src, fp): set_fpc of the
  Scaling tile's FB address, then the mode GetVectorPreQuantMode picks: VDEQF16, VREQ8,
  VQF322B8_PRE): each column's scale, offset and sign come from its own quant word, the
  Scaling tile's word at that column (``decode_word``).
"""
import numpy as np

ATOMIC_ADD = 1
RELU = 2
QUANT_F16 = 4                  # DEQF16
QUANT_S8 = 8                   # QF322B8_PRE / REQ8 into int8 (sign 1)
QUANT_U8 = 16                  # QF322B8_PRE / REQ8 into uint8 (sign 0)
QUANT = QUANT_F16 | QUANT_S8 | QUANT_U8
QUANT_VECTOR = 32              # TSTORE_FP: a quant word a column, from the Scaling tile
# the GM dtypes SetAtomicAdd takes (tstore_common.hpp)
ATOMIC_DTYPES = ("float32", "float16", "bfloat16", "int32", "int16", "int8")
# (Acc dtype, GM dtype) -> (mode bit, QuantMode_t) of a scalar-quantized store on A2/A3
# (GetScalarPreQuantMode, restricted by CheckAcc2gm<isQuant = true>'s static_asserts, TStore.hpp)
QUANT_MODES = {("int32", "float16"): (QUANT_F16, "DEQF16"), ("int32", "int8"): (QUANT_S8, "REQ8"),
               ("int32", "uint8"): (QUANT_U8, "REQ8"), ("float32", "int8"): (QUANT_S8, "QF322B8_PRE"),
               ("float32", "uint8"): (QUANT_U8, "QF322B8_PRE")}
# the vector form's QuantMode_t names (GetVectorPreQuantMode, include/pto/npu/a2a3/common.hpp)
VECTOR_MODE_NAMES = {"DEQF16": "VDEQF16", "REQ8": "VREQ8", "QF322B8_PRE": "VQF322B8_PRE"}
F16_MAX = 65504.0


def decode_word(bits):
    """(scale, offset, mode bit) of one quant word of the vector form (a uint64: the Scaling
    tile's word of a column; an int64 of the same bits, or a Python int, reads the same), as
    pto-isa's CPU simulation reads it (include/pto/cpu/common.hpp extract_m1_from_quant<true>
    and quantize_element) and gen_data.py's extract_quant_params: M1, bits 31:13, is a float of
    1 sign, 8 exponent and 10 mantissa bits (a float32's bits with the low 13 mantissa bits
    dropped), (-1)^s x (1 + m / 1024) x 2^(e - 127), +0.0 when e and m are 0 whatever s (the CPU
    simulation returns 0.0f before it reads the sign), as a float32 (exact for every e below
    255, subnormal at e = 0; infinity at e = 255, 2^128 and above); the offset,
    bits 45:37 (unsigned, 0..511), is added before a B8 result is rounded; the sign, bit 46,
    picks B8's saturation: QUANT_S8 ([-128, 127]) when set, else QUANT_U8 ([0, 255]).
    Every field lies below bit 63, so an arithmetic shift reads it as a logical one: numba
    compiles this as written (exec/compiled/tiles.py)."""
    m1 = (bits >> 13) & 0x7FFFF
    sign, exponent, mantissa = (m1 >> 18) & 1, (m1 >> 10) & 0xFF, m1 & 0x3FF
    if exponent == 0 and mantissa == 0:
        scale = 0.0                       # +0.0: a set sign bit does not make it -0.0
    elif exponent == 0xFF:
        scale = -np.inf if sign else np.inf
    else:
        scale = (-1.0 if sign else 1.0) * (1.0 + mantissa / 1024.0) * 2.0 ** (int(exponent) - 127)
    return scale, float((bits >> 37) & 0x1FF), QUANT_S8 if (bits >> 46) & 1 else QUANT_U8


def quantize(value, scale, mode, offset=0.0):
    """The fixpipe's scalar pre-stage quantization of one Acc value by mode's QUANT bit, as
    pto-isa's CPU simulation computes it (include/pto/cpu/common.hpp quantize_element, scalar
    form: extract_m1_from_quant's scale is the float32 of bits 31:0): the value read as float32
    (static_cast<float>: an int32 rounds to nearest even) times the float32 scale, rounded once
    to float32; then
    - QUANT_S8 / QUANT_U8: rounded to the nearest integer, ties to even (std::nearbyint in the
      default rounding mode; the offset field, bits 45:37, is 0, as the kernels and SET_QUANT_SCALAR
      leave it for a scale of positive sign: for a negative one their static_cast<uint64_t> of the
      int32 bits sign-extends it to 0x1FF, which the CPU simulation adds, and this does not),
      saturated to [-128, 127] / [0, 255] (std::clamp; clamping first is the same for integer
      bounds, and an infinity saturates). NaN, whose static_cast to an integer the CPU simulation leaves undefined,
      becomes 0;
    - QUANT_F16: saturated to [-65504, 65504] (std::clamp: an infinity saturates, NaN stays),
      then rounded to float16, nearest even (quantize_element's static_cast<half>), which each
      executor's tile_store_quant does with its own float16 rounding (the compiled
      scalars.round_f16, numpy's float16): the stores write GM with values already of its dtype,
      and an atomic add adds the float16 value.
    Returns the float64 value (before that rounding and RELU).
    offset: the vector form's (decode_word), added in float32 to a B8 product before it is
    rounded (quantize_element: nearbyint(result_f + offset)); the scalar form's is 0.
    The scale keeps all 24 bits of its float32 mantissa, as the CPU simulation's scalar form does;
    its vector form and gen_data.py's extract_quant_params read a quant word's M1 as bits 31:13
    (10 mantissa bits), which pypto_sim does not apply to the scalar (the st cases' scales, 5, 2,
    1.5 and 2.5, are the same either way)."""
    r = float(np.float32(float(np.float32(value)) * float(np.float32(scale))))
    if mode & QUANT_F16:
        if r < -F16_MAX:
            return -F16_MAX
        if r > F16_MAX:
            return F16_MAX
        return r
    lo, hi = (-128.0, 127.0) if mode & QUANT_S8 else (0.0, 255.0)
    if offset != 0.0:
        r = float(np.float32(r + offset))
    if r != r:
        return 0.0
    if r < lo:
        return lo
    if r > hi:
        return hi
    f = float(np.floor(r))
    d = r - f
    if d > 0.5 or (d == 0.5 and f - 2.0 * np.floor(f / 2.0) != 0.0):
        f += 1.0
    return f
