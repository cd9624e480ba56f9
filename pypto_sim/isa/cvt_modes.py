"""TCVT's conversions and the rounding each requested RoundMode gets on A2/A3, as data.

A2/A3's TCVT (pto-isa include/pto/npu/a2a3/TCvt.hpp at 3186c381) picks one vconv intrinsic per
(source, destination) pair and RoundMode in a switch; a pair that lacks a mode's intrinsic
runs the switch's `default:` instead, and some pairs have one intrinsic that ignores the mode.
INTRINSICS is that table for the pairs pypto_sim builds (TCVT.md's A2A3 column without int64
and int4); everything else (the pairs the frontend accepts, the mode number it encodes, which
both executors run, docs/aicore.md's tcvt row) follows from it.

An intrinsic's suffix is its rounding (AscendC's Cast, asc-devkit
impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h at 82b89a15, lines 88-118: CAST_RINT
-> r, CAST_ROUND -> a, CAST_FLOOR -> f, CAST_CEIL -> c, CAST_TRUNC -> z, CAST_NONE -> the
unsuffixed intrinsic; TCvt.hpp line 108: CAST_ODD -> o; pto-isa include/pto/common/type.hpp
lines 251-259: RINT ties to even, ROUND ties away from zero, ODD von Neumann). UNSUFFIXED says
what an intrinsic without a suffix does.
"""
from __future__ import annotations

from .. import dtypes

HEADER = "include/pto/npu/a2a3/TCvt.hpp"
SUFFIX = {"r": "rint", "a": "round", "f": "floor", "c": "ceil", "z": "trunc", "o": "odd"}

# (src, dst): (TCvt.hpp function, the line of its switch or call, intrinsic stem, the suffix
# each of dtypes.CVT_MODES (rint, round, floor, ceil, trunc, odd) runs; "-": the unsuffixed
# intrinsic, the stem itself). The "z" / "r" / "-" under odd are each switch's default:.
INTRINSICS = {
    ("float32", "float16"): ("GenCastCallFp32ToFp16", 92, "vconv_f322f16", "rafczo"),
    ("float32", "float32"): ("GenCastCallFp32ToFp32", 123, "vconv_f322f32", "rafczr"),    # default 139
    ("float32", "bfloat16"): ("GenCastCallFp32ToBf16", 277, "vconv_f322bf16", "rafczr"),  # default 293
    ("float32", "int16"): ("GenCastCallFp32ToInt16", 207, "vconv_f322s16", "rafczz"),     # default 223
    ("float32", "int32"): ("GenCastCallFp32ToInt32", 179, "vconv_f322s32", "rafczz"),     # default 195
    ("float16", "float32"): ("GenCastCallSpecialCases", 760, "vconv_f162f32", "------"),
    ("float16", "int32"): ("GenCastCallFp16ToInt32ByRoundMode", 304, "vconv_f162s32", "rafczz"),  # 317
    ("float16", "int16"): ("GenCastCallFp16ToInt16", 340, "vconv_f162s16", "rafczz"),     # default 356
    ("float16", "int8"): ("GenCastCallFp16ToInt8", 431, "vconv_f162s8", "rafczz"),        # default 447
    ("float16", "uint8"): ("GenCastCallFp16ToUint8", 573, "vconv_f162u8", "rafczz"),      # default 589
    ("bfloat16", "float32"): ("GenCastCallSpecialCases", 764, "vconv_bf162f32", "------"),
    ("bfloat16", "int32"): ("GenCastCallBf16ToInt32", 644, "vconv_bf162s32", "rafczz"),   # default 660
    ("int16", "float16"): ("GenCastCallInt16ToFp16", 672, "vconv_s162f16", "rafcz-"),     # default 688
    ("int16", "float32"): ("GenCastCallSpecialCases", 776, "vconv_s162f32", "------"),
    ("int32", "float32"): ("GenCastCallInt32ToFp32", 700, "vconv_s322f32", "rafcz-"),     # default 716
    ("int32", "int16"): ("GenCastCallSpecialCases", 788, "vconv_s322s16", "------"),
    ("int32", "float16"): ("GenCastCallSpecialCases", 792, "vconv_deq", "------"),        # set_deqscale(1.0)
    ("uint8", "float16"): ("GenCastCallSpecialCases", 768, "vconv_u82f16", "------"),
    ("int8", "float16"): ("GenCastCallSpecialCases", 772, "vconv_s82f16", "------"),
}
# The SaturationMode::OFF paths of float32 -> int16, float16 -> int16 and float16 -> int8
# (GenCastCallFp32ToInt16_NonSatTorch line 238, GenCastCallFp16ToInt32ByRoundMode, the
# NonSatTorch switch of float16 -> int8 line 517) convert through int32 with the same modes and
# the same trunc default, so sat does not change the table.

# The pairs whose TCVT(dst, src, mode) without a SaturationMode runs SaturationMode::OFF
# (TCvt.hpp kIsNarrowingCvt, lines 1216-1227, and the overload at 1311-1323: "FP16->UINT8,
# FP16->INT8: defaults to OFF (PyTorch-compatible truncation) ... INT32->INT16: defaults to OFF";
# float32 -> int16 and float16 -> int16 are in kIsNarrowingCvt too; int64 -> int32 is not built);
# every other pair runs ON. pto-isa's tcvt gen_data.py makes the on-device suite's golden so.
DEFAULT_SAT_OFF = frozenset({("float16", "uint8"), ("float16", "int8"), ("float32", "int16"),
                             ("float16", "int16"), ("int32", "int16")})

# What an unsuffixed intrinsic does. "exact": every source value is a destination value (or,
# int32 -> int16, an integer narrowed by saturation alone), so no mode can matter.
# vconv_s322f32 and vconv_s162f16 are what AscendC's Cast runs for CAST_NONE (same file, lines
# 114-117 and 489-492), and CAST_NONE is "CAST_RINT where the conversion loses precision, no
# rounding where it does not" (asc-devkit docs/zh/api/SIMD-API/.../precision_conversion.md,
# table 1; Cast.md's RoundMode). vconv_deq (int32 -> float16 by
# DEQSCALE = 1.0): "the rounding mode does not take effect; output src / 2^17 x scale x 2^17"
# (precision_conversion.md, int32_t -> half) names no rounding; no public source found says
# which. pypto_sim rounds to nearest even, as CAST_NONE's conversions that lose precision do
# and as pto-isa's CPU simulation's static_cast<half> does (include/pto/cpu/TCvt.hpp).
UNSUFFIXED = {"vconv_s322f32": "rint", "vconv_s162f16": "rint", "vconv_deq": "rint",
              "vconv_f162f32": "exact", "vconv_bf162f32": "exact", "vconv_s162f32": "exact",
              "vconv_s322s16": "exact", "vconv_u82f16": "exact", "vconv_s82f16": "exact"}

# Pairs whose conversion rounds to an integral value of the same dtype: vconv_f322f32* (AscendC
# precision_conversion.md "float -> float": rounded to an integer by the mode, still a float;
# 0.5 gives 0 by RINT, 1 by CEIL and ROUND; pto-isa's a2a3 tcvt gen_data.py's fp32_fp32 golden)
INTEGRAL = frozenset({("float32", "float32")})

# the destinations of each source, in INTRINSICS' order (the frontend's check; TCVT.md)
CVT_PAIRS: dict[str, tuple[str, ...]] = {}
for _src, _dst in INTRINSICS:
    CVT_PAIRS[_src] = CVT_PAIRS.get(_src, ()) + (_dst,)


def intrinsic(src: str, dst: str, mode: str) -> str:
    """The vconv intrinsic A2/A3's TCVT issues for src -> dst in the RoundMode named mode."""
    _, _, stem, suffixes = INTRINSICS[(src, dst)]
    s = suffixes[dtypes.CVT_MODES.index(mode)]
    return stem if s == "-" else stem + s


def rounding(src: str, dst: str, mode: str) -> str:
    """The rounding src -> dst in mode requested actually gets: one of dtypes.CVT_MODES, or
    "exact" where no rounding can occur."""
    _, _, stem, suffixes = INTRINSICS[(src, dst)]
    s = suffixes[dtypes.CVT_MODES.index(mode)]
    return UNSUFFIXED[stem] if s == "-" else SUFFIX[s]


def honoured(src: str, dst: str) -> tuple[str, ...]:
    """The modes of src -> dst that run their own rounding (each gets what it names)."""
    return tuple(m for m in dtypes.CVT_MODES if rounding(src, dst, m) == m)


def encode(src: str, dst: str, mode: str, sat_off: bool = False) -> int:
    """The TCVT mode operand: the number (dtypes.CVT_MODES) of the rounding src -> dst in mode
    gets (an exact conversion: rint's, every mode's result being the same), plus
    dtypes.CVT_SAT_OFF for SaturationMode::OFF and dtypes.CVT_INTEGRAL where the pair rounds to
    an integral value of its own dtype."""
    r = rounding(src, dst, mode)
    code = dtypes.CVT_MODES.index("rint" if r == "exact" else r)
    return code + (dtypes.CVT_SAT_OFF if sat_off else 0) + (dtypes.CVT_INTEGRAL if (src, dst) in INTEGRAL else 0)
