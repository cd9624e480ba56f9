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
"""
import numpy as np

ATOMIC_ADD = 1
RELU = 2
QUANT_F16 = 4                  # DEQF16
QUANT_S8 = 8                   # QF322B8_PRE / REQ8 into int8 (sign 1)
QUANT_U8 = 16                  # QF322B8_PRE / REQ8 into uint8 (sign 0)
QUANT = QUANT_F16 | QUANT_S8 | QUANT_U8
# the GM dtypes SetAtomicAdd takes (tstore_common.hpp)
ATOMIC_DTYPES = ("float32", "float16", "bfloat16", "int32", "int16", "int8")
# (Acc dtype, GM dtype) -> (mode bit, QuantMode_t) of a scalar-quantized store on A2/A3
# (GetScalarPreQuantMode, restricted by CheckAcc2gm<isQuant = true>'s static_asserts, TStore.hpp)
QUANT_MODES = {("int32", "float16"): (QUANT_F16, "DEQF16"), ("int32", "int8"): (QUANT_S8, "REQ8"),
               ("int32", "uint8"): (QUANT_U8, "REQ8"), ("float32", "int8"): (QUANT_S8, "QF322B8_PRE"),
               ("float32", "uint8"): (QUANT_U8, "QF322B8_PRE")}
F16_MAX = 65504.0


def quantize(value, scale, mode):
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
