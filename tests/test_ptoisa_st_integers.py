"""pto-isa's st cases of TADD, TSUB, TMUL, TMAX, TMIN and TSEL on integer tiles other than
int32, TMULS's refused unsigned cases (its int16 case4 runs with the others in
tests/test_ptoisa_st_float_elementwise.py), and every TCMP case (tests/cpu/st/testcase/tadd, tsub, tmul, tmax, tmin, tmuls,
tsel, tcmp at 3186c381), in
the AI-core API as their kernels write them. Each golden is its gen_data.py's, in numpy; each
tolerance its main.cpp's (ResultCmp(golden, out, 0.001f) over the byte-sized vectors).

Cases A2/A3 refuses, ported as the refusal (pypto_sim refuses them as the A2/A3 headers'
static_asserts do): TMULTest.case_uint8_, case_uint16_ and case_uint32_64x64_64x64_64x64
("Fix: TMUL has invalid data type.": int32, int16, half and float only,
include/pto/npu/a2a3/TMul.hpp), TMULSTest.case7, case8 and case9 (uint8, uint16, uint32:
"TMULS: Invalid data type", the same four types, TMulS.hpp), TSELTest.case7, case8 and case9
(int8: "Fix: TSEL only support 16B and 32B data type.", TSel.hpp), and TCMPTest's eight
cases with a uint32 dst (A5's TCMP; A2/A3's writes uint8 and compares int32, half and float,
TCMP.md). These run on pto-isa's CPU simulation only. Not ported: TCMPTest.case_bf16_uint32
(built only with PTO_CPU_SIM_ENABLE_BF16; an A5 form as the others).

TSEL's kernel passes a 1 x 32 uint8 tmp tile (A2/A3's cmpmask buffer), and so does the port.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import BINARY, TMULS, TSEL, result_cmp, run_kernel, tsel_golden


GOLDEN = {"tadd": lambda a, b: a + b, "tsub": lambda a, b: a - b, "tmul": lambda a, b: a * b,
          "tmax": np.maximum, "tmin": np.minimum}


@pytest.mark.parametrize("op", list(GOLDEN))
def test_int16_binary(make_kernels, op):
    """T{ADD,SUB,MUL,MAX,MIN}Test.case_int16_64x64_64x64_64x64. gen_data.py (seed 19):
    input1, input2 randint(1, 10) of 64 x 64 as int16; golden input1 op input2 in int16 (the
    valid region is the tile). ResultCmp(golden, out, 0.001) over fileSize elements."""
    rng = np.random.RandomState(19)
    a = rng.randint(1, 10, size=[64, 64]).astype(np.int16)
    b = rng.randint(1, 10, size=[64, 64]).astype(np.int16)
    golden = GOLDEN[op](a, b).astype(np.int16)
    out, = run_kernel(make_kernels(BINARY.format(r=64, c=64, dt="int16", op=op)).k, [a, b],
                      [((64, 64), np.int16)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)


@pytest.mark.parametrize("dt", ["uint8", "uint16", "uint32"])
def test_a2a3_tmul_refuses_unsigned_tiles(make_kernels, dt):
    """TMULTest.case_uint8_, case_uint16_, case_uint32_64x64_64x64_64x64: A2/A3's TMUL takes
    int32, int16, half and float (TMul.hpp's static_assert), so the kernel does not compile."""
    kernel = make_kernels(BINARY.format(r=64, c=64, dt=dt, op="tmul")).k
    t = [pto.alloc_tensor(64 * 64 * 4, getattr(pto, dt)) for _ in range(3)]
    with pytest.raises(pto.CompileError, match=rf"pto.tmul needs tiles of one dtype among float32, "
                                               rf"float16, int32, int16, got {dt}"):
        kernel.program_for(tuple(t))


@pytest.mark.parametrize("case, dt", [("case7", "uint8"), ("case8", "uint16"), ("case9", "uint32")])
def test_a2a3_tmuls_refuses_unsigned_tiles(make_kernels, case, dt):
    """TMULSTest.case7 / case8 / case9 (32 x 64 uint8, uint16, uint32): A2/A3's TMULS takes
    int32, int16, half and float (TMulS.hpp's static_assert), so the kernel does not compile."""
    kernel = make_kernels(TMULS.format(r=32, c=64, dt=dt)).k
    t = [pto.alloc_tensor(32 * 64 * 4, getattr(pto, dt)) for _ in range(2)]
    with pytest.raises(pto.CompileError, match=rf"pto.tmuls needs tiles of one dtype among float32, "
                                               rf"float16, int32, int16, got {dt}"):
        kernel.program_for((*t, 3))


TSEL_CASES = {"case10": ("uint16", 128), "case11": ("uint16", 32), "case12": ("uint16", 160),
              "case13": ("uint32", 128), "case14": ("uint32", 32), "case15": ("uint32", 160)}


@pytest.mark.parametrize("case", TSEL_CASES)
def test_tsel_unsigned(make_kernels, case):
    """TSELTest.case10 - case15 (2 x 32, 128, 160 uint16 and uint32). gen_data.py (seed 19):
    input0, input1 rand(rows * cols) cast to the dtype, the mask randint(0, 255) bytes, ceil(cols
    / 8) a row, loaded into a rows x ceil(ceil(cols / 8), 32) uint8 tile; golden as
    tsel_golden. ResultCmp(golden, out, 0.001) over fileSize elements. (rand's [0, 1) cast to an
    unsigned type is 0 everywhere, as in the author's files: the case checks that TSEL of
    uint16 / uint32 tiles runs and writes the whole tile.)"""
    dt, cols = TSEL_CASES[case]
    rows = 2
    rng = np.random.RandomState(19)
    a = rng.rand(rows * cols).astype(dt)
    b = rng.rand(rows * cols).astype(dt)
    mask_cols = (cols + 7) // 8
    mask = rng.randint(0, 255, size=rows * mask_cols, dtype=np.uint8)
    golden = tsel_golden(mask, a, b, rows, cols)
    mc = -(-mask_cols // 32) * 32
    mask_gm = np.zeros((rows, mc), np.uint8)
    mask_gm[:, :mask_cols] = mask.reshape(rows, mask_cols)
    kernel = make_kernels(TSEL.format(r=rows, c=cols, mc=mc, dt=dt)).k
    out, = run_kernel(kernel, [mask_gm, a.reshape(rows, cols), b.reshape(rows, cols)], [((rows, cols), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)


@pytest.mark.parametrize("case, cols", [("case7", 128), ("case8", 32), ("case9", 160)])
def test_a2a3_tsel_refuses_int8(make_kernels, case, cols):
    """TSELTest.case7 / case8 / case9 (2 x 128, 32, 160 int8): A2/A3's TSEL takes 2- and 4-byte
    elements only (TSel.hpp: "Fix: TSEL only support 16B and 32B data type."), so the kernel
    does not compile."""
    mc = -(-((cols + 7) // 8) // 32) * 32
    kernel = make_kernels(TSEL.format(r=2, c=cols, mc=mc, dt="int8")).k
    t = [pto.alloc_tensor(2 * cols, pto.uint8)] + [pto.alloc_tensor(2 * cols, pto.int8) for _ in range(3)]
    with pytest.raises(pto.CompileError, match=r"pto.tsel takes .*int16, uint16, uint32 tiles, not int8"):
        kernel.program_for(tuple(t))


# TCMP's kernel is the binary-op kernel with dst in its own dtype and the compare's mode
TCMP = (BINARY.replace("dst = pto.alloc_tile({r}, {c}, pto.{dt})", "dst = pto.alloc_tile({r}, {c}, pto.{dst})")
        .replace("pto.{op}(dst, a, b)", 'pto.tcmp(dst, a, b, mode="{mode}")'))
assert "pto.{dst}" in TCMP and "pto.tcmp(" in TCMP

NP_CMP = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "lt": np.less, "ge": np.greater_equal,
          "le": np.less_equal}


@pytest.mark.parametrize("dt, rows, cols, mode", [("float32", 64, 64, "eq"), ("int32", 64, 64, "ne"),
                                                  ("float16", 16, 256, "gt")],
                         ids=["case_float_uint8_64x64_64x64_64x64_EQ", "case_int32_uint8_64x64_64x64_64x64_NE",
                              "case_half_uint8_16x256_16x256_16x256_GT"])
def test_tcmp_into_a_uint8_mask(make_kernels, dt, rows, cols, mode):
    """TCMPTest's A2/A3 cases (a uint8 dst of the sources' shape). gen_data.py (seed 19):
    input1, input2 randint(1, 10) in dtype; golden rows x cols uint8 zeros with bit w % 8 of
    byte [h, w // 8] set where input1 mode input2 holds. ResultCmp(golden, out, 0.001) over the
    dst's elements."""
    rng = np.random.RandomState(19)
    a = rng.randint(1, 10, size=[rows, cols]).astype(dt)
    b = rng.randint(1, 10, size=[rows, cols]).astype(dt)
    hits = NP_CMP[mode](a, b)
    golden = np.zeros([rows, cols], np.uint8)
    for h in range(rows):
        for w in range(cols):
            if hits[h, w]:
                golden[h, w // 8] |= 1 << (w % 8)
    kernel = make_kernels(TCMP.format(r=rows, c=cols, dt=dt, dst="uint8", mode=mode)).k
    out, = run_kernel(kernel, [a, b], [((rows, cols), np.uint8)])
    assert result_cmp(golden, out, 0.001)


TCMP_A5 = [("uint32", "ge", r"pto.tcmp takes float32, float16, int32 tiles, not uint32"),
           ("int32", "lt", r"the mask 'dst' must be a uint8 tile .*, not uint32"),
           ("uint16", "le", r"pto.tcmp takes float32, float16, int32 tiles, not uint16"),
           ("int16", "eq", r"pto.tcmp takes float32, float16, int32 tiles, not int16"),
           ("uint8", "lt", r"pto.tcmp takes float32, float16, int32 tiles, not uint8"),
           ("int8", "gt", r"pto.tcmp takes float32, float16, int32 tiles, not int8"),
           ("float32", "ne", r"the mask 'dst' must be a uint8 tile .*, not uint32"),
           ("float16", "le", r"the mask 'dst' must be a uint8 tile .*, not uint32")]


@pytest.mark.parametrize("dt, mode, message", TCMP_A5, ids=[f"{d}_uint32_{m.upper()}" for d, m, _ in TCMP_A5])
def test_a2a3_tcmp_refuses_the_a5_forms(make_kernels, dt, mode, message):
    """TCMPTest.case_uint32_uint32_, int32_uint32_, uint16_uint32_, int16_uint32_, uint8_uint32_,
    int8_uint32_, float_uint32_64x64_64x64_64x64 and half_uint32_16x256_16x256_16x256: a uint32
    dst and sources A2/A3 does not compare are A5's TCMP (TCMP.md: A2A3 inputs int32, half,
    float, output uint8; A5 output uint32), so the kernel does not compile on A2/A3."""
    rows, cols = (16, 256) if dt == "float16" else (64, 64)
    kernel = make_kernels(TCMP.format(r=rows, c=cols, dt=dt, dst="uint32", mode=mode)).k
    t = [pto.alloc_tensor(rows * cols * 4, getattr(pto, dt)) for _ in range(2)] + \
        [pto.alloc_tensor(rows * cols * 4, pto.uint32)]
    with pytest.raises(pto.CompileError, match=message):
        kernel.program_for(tuple(t))

