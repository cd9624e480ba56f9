"""TADDRELUCONV and TSUBRELUCONV (isa/52_relu_conv.toml, family tile_reluconv): dst =
convert(max(0, src0 +/- src1)) as A2/A3 runs them (include/pto/npu/a2a3/TAddReluConv.hpp,
TSubReluConv.hpp: one vaddreluconv_* / vsubreluconv_* a row over the sources' whole repeats, one
masked call for the remainder), float32 -> float16, float16 -> int8 and int16 -> int8; the
headers' static_asserts and PTO_ASSERTs as compile errors at the line; the cost; and pto-isa's
on-device st suites (hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/taddreluconv and
tsubreluconv at 3186c381, 18 cases each) case for case.

The port: taddreluconv_kernel.cpp's runTADDRELUCONV<DstT, SrcT, row, validRow, col, validCol>
TLOADs src0 and src1 (row x col tiles, valid the whole tile, rows col apart in GM); flag MTE2 ->
V; TADDRELUCONV(dst, src0, src1); flag V -> MTE3; TSTORE of dst. tsubreluconv_kernel.cpp's
runTSUBRELUCONV is the same with TSUBRELUCONV, and TLOADs dst from the output first (main.cpp
never writes the output before the launch; pypto_sim's output starts as zeros, and every word
is overwritten). gen_data.py (np.random.seed(42), here one RandomState(42) a case, drawing src0
then src1 as it does): uniform(low, high) in float64 for the float paths (src0 and src1 cast to
float32, or to float16 for f162s8), randint(low, high) cast to int16 for s162s8; golden
float32(src0) +/- float32(src1), max 0, to float16 (f322f16), np.round then clip to 0..127
(f162s8, s162s8, the latter in int32). main.cpp compares the row x col output with ResultCmp
at eps toleranceX1000 / 1000: 0.001 (f322f16), 1.0 (f162s8), 0 (s162s8). Every case runs, and
passes at that tolerance. Beyond it each output is checked word for word against what the
headers' intrinsics compute (pypto_sim's model, the A5 twin's contract: the sum or difference
rounded to the source dtype, then to nearest even): the suites' golden itself for f322f16 and
s162s8; for f162s8 the golden rounds the exact float32 sum, the device the float16 one (a sum
x.4921875 in 16..32 is x.5 in float16, and rint takes it to the even integer), which the
suites' tolerance 1 admits.

TADDDEQRELU (isa/53_add_deq_relu.toml, family tile_deq_relu): dst = float16(max(0, ((float32(src0
+ src1) * 2^-17) * deqScale) * 2^17)) as A2/A3 runs it (TAddDeqRelu.hpp: vadd, vconv_s322f32, three
vmuls, vector_dup, vmax, vconv_f322f16 a block), src0, src1 and tmp written too; and pto-isa's
on-device tadddeqrelu suite (tests/npu/a2a3/src/st/testcase/tadddeqrelu at 3186c381, 10 cases)
case for case: tadddeqrelu_kernel.cpp's runTADDDEQRELU<row, validRow, col, validCol> TLOADs the
validRow x validCol windows of src0 and src1 (rows col apart) into row x col int32 tiles of that
valid region, flag, TADDDEQRELU(dst, src0, src1, deqScale, tmp) with tmp an int32 tile of the
same shape, flag, TSTORE of dst's valid region; deqScale from its deqScaleTable. gen_data.py
(one RandomState(42) a case here): randint(low, high) int32 over the whole row x col tiles; the
golden in float64, (x * 2^-17 * deqScale) * 2^17, max 0, clipped to 65504, to float16, zeros
outside the valid region (main.cpp never writes the output before the launch; pypto_sim's starts
as zeros); ResultCmp at eps 0.002 over row x col. Every case passes at that tolerance, and word
for word against the header's float32 steps.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error_at
from ptoisa_st import FLAGS_IN, FLAGS_OUT, result_cmp, run_kernel

KERNEL = '''
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({row}, {col}, pto.{st}, loc=pto.Vec)
            src1 = pto.alloc_tile({row}, {col}, pto.{st}, loc=pto.Vec)
            dst = pto.alloc_tile({row}, {col}, pto.{dt}, loc=pto.Vec)
            {load_dst}pto.tload(src0, A, stride={col})
            pto.tload(src1, B, stride={col})
            {flags_in}
            pto.{op}(dst, src0, src1)
            {flags_out}
            pto.tstore(O, dst, stride={col})
'''

# the three type paths of gen_data.py: (src dtype, dst dtype, main.cpp's toleranceX1000 / 1000)
PATHS = {"f322f16": ("float32", "float16", 0.001), "f162s8": ("float16", "int8", 1.0),
         "s162s8": ("int16", "int8", 0.0)}
# TADDRELUCONVTest's and TSUBRELUCONVTest's TEST_Fs, one list (the suites' gen_data.py differ
# only in + / -): (type path, row, col, ("uniform" | "randint", low, high) of src0 and src1)
CASES = {
    "case1": ("f322f16", 32, 64, ("uniform", -4, 4)),
    "case2": ("f322f16", 16, 128, ("uniform", -4, 4)),
    "case3": ("f322f16", 31, 96, ("uniform", -4, 4)),
    "case4": ("f322f16", 7, 192, ("uniform", -4, 4)),
    "case5": ("f322f16", 64, 64, ("uniform", -4, 4)),
    "case6": ("f322f16", 13, 48, ("uniform", -4, 4)),
    "case7": ("f322f16", 16, 64, ("uniform", -4, -0.1)),
    "case8": ("f322f16", 8, 128, ("uniform", -2, 2)),
    "case9": ("f322f16", 4, 256, ("uniform", -4, 4)),
    "case10": ("f322f16", 16, 32, ("uniform", -4, 4)),
    "case11": ("f162s8", 16, 128, ("uniform", -10, 10)),
    "case12": ("f162s8", 8, 64, ("uniform", -10, 10)),
    "case13": ("f162s8", 8, 128, ("uniform", -5, -0.1)),
    "case14": ("f162s8", 8, 64, ("uniform", 60, 70)),
    "case15": ("s162s8", 16, 128, ("randint", -50, 50)),
    "case16": ("s162s8", 8, 64, ("randint", -50, 50)),
    "case17": ("s162s8", 8, 128, ("randint", -100, -1)),
    "case18": ("s162s8", 8, 64, ("randint", 60, 70)),
}
SUITES = {"taddreluconv": False, "tsubreluconv": True}     # builtin: subtracts


def _inputs(path, row, col, gen):
    """src0, src1 as gen_data.py makes them (its gen_src0, gen_src1, then the casts)."""
    rng = np.random.RandomState(42)
    kind, low, high = gen
    draw = (lambda: rng.uniform(low, high, size=(row, col))) if kind == "uniform" else \
        (lambda: rng.randint(low, high, size=(row, col)))
    src0, src1 = draw(), draw()
    st = PATHS[path][0]
    return src0.astype(st), src1.astype(st)


def _suite_golden(path, src0, src1, sub):
    """gen_data.py's golden: in float32 (int32 for s162s8), max 0, then to the dst dtype."""
    wide = np.int32 if path == "s162s8" else np.float32
    a, b = src0.astype(wide), src1.astype(wide)
    fused = np.maximum(a - b if sub else a + b, 0)
    if path == "f322f16":
        return fused.astype(np.float16)
    return np.clip(np.round(fused) if path == "f162s8" else fused, 0, 127).astype(np.int8)


def _device_golden(path, src0, src1, sub):
    """What the intrinsics compute: the sum or difference in the source dtype, max 0, to the
    nearest even value of the dst dtype (int8 saturated)."""
    fused = np.maximum(src0 - src1 if sub else src0 + src1, 0)
    if path == "f322f16":
        return fused.astype(np.float16)
    return np.clip(np.rint(fused.astype(np.float64)), 0, 127).astype(np.int8)


@pytest.mark.parametrize("suite", list(SUITES))
@pytest.mark.parametrize("case", list(CASES))
def test_ptoisa_reluconv_case(make_kernels, suite, case):
    """One TEST_F of the suite: the output against gen_data.py's golden at main.cpp's
    ResultCmp tolerance, and word for word against the intrinsics' values."""
    path, row, col, gen = CASES[case]
    st, dt, eps = PATHS[path]
    sub = SUITES[suite]
    src0, src1 = _inputs(path, row, col, gen)
    source = KERNEL.format(row=row, col=col, st=st, dt=dt, op=suite, flags_in=FLAGS_IN, flags_out=FLAGS_OUT,
                           load_dst=f"pto.tload(dst, O, stride={col})\n            " if sub else "")
    out, = run_kernel(make_kernels(source).k, [src0, src1], [((row, col), dt)])
    assert result_cmp(_suite_golden(path, src0, src1, sub), out, eps)
    want = _device_golden(path, src0, src1, sub)
    np.testing.assert_array_equal(out.view(np.uint8 if dt == "int8" else np.uint16),
                                  want.view(np.uint8 if dt == "int8" else np.uint16))


def test_a_float16_sum_rounds_before_the_conversion_to_int8(make_kernels):
    """TADDRELUCONV float16 -> int8 rounds twice, as vaddreluconv_f162s8 adds in float16:
    16.25 + 1.2421875 = 17.4921875 exactly, which float16 (1/64 apart in 16..32) holds as 17.5,
    and rint takes 17.5 to 18 (gen_data.py's np.round of the float32 sum gives 17); 60 + 70 =
    130 saturates to 127; 2.5 + 0 = 2.5 -> 2 and 3.5 + 0 -> 4 (ties to even); -1 + 0.5 -> 0."""
    a = np.array([[16.25, 60, 2.5, 3.5, -1]], np.float16)
    b = np.array([[1.2421875, 70, 0, 0, 0.5]], np.float16)
    a, b = np.pad(a, ((0, 0), (0, 27))), np.pad(b, ((0, 0), (0, 27)))
    source = KERNEL.format(row=1, col=32, st="float16", dt="int8", op="taddreluconv", flags_in=FLAGS_IN,
                           flags_out=FLAGS_OUT, load_dst="")
    out, = run_kernel(make_kernels(source).k, [a, b], [((1, 32), "int8")])
    assert out[0, :5].tolist() == [18, 127, 2, 4, 0]


def test_the_int16_sum_wraps_before_the_relu(make_kernels):
    """TADDRELUCONV int16 -> int8 adds in int16, as vadd of int16: 30000 + 30000 = 60000 wraps
    to -5536, which ReLU makes 0; TSUBRELUCONV 30000 - (-30000) wraps to -5536 too; 100 + 27 =
    127, 100 + 28 = 128 saturates to 127, 5 + 9 = 14 (and 100 - 27 = 73, 100 - 28 = 72, 5 - 9
    = -4 -> 0)."""
    a = np.zeros((1, 32), np.int16)
    b = np.zeros((1, 32), np.int16)
    a[0, :4], b[0, :4] = [30000, 100, 100, 5], [30000, 27, 28, 9]
    outs = []
    for op, b_row in (("taddreluconv", b), ("tsubreluconv", np.where(b == 30000, -30000, b).astype(np.int16))):
        source = KERNEL.format(row=1, col=32, st="int16", dt="int8", op=op, flags_in=FLAGS_IN,
                               flags_out=FLAGS_OUT, load_dst="")
        out, = run_kernel(make_kernels(source).k, [a, b_row], [((1, 32), "int8")])
        outs.append(out[0, :4].tolist())
    assert outs == [[0, 127, 127, 14], [0, 73, 72, 0]]


def test_the_cost_is_one_repeat_of_the_sources_per_256_bytes_of_a_row(make_kernels):
    """latency_tables/ascend910b.toml TADDRELUCONV on an idle V pipe: head 14 + 2 a 256-byte
    repeat of a source row (pto-isa's vaddreluconv.md figures). 8 x 128 float32 -> float16
    (512-byte source rows, 2 repeats each): 14 + 2 x 16 = 46; 8 x 128 float16 -> int8 (256-byte
    rows, one repeat each): 14 + 2 x 8 = 30; no count-mode floor for a remainder (the header
    masks it): 8 x 127 float16 (254 bytes a row, still a repeat each) is 30 too."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            f = pto.alloc_tile(8, 128, pto.float32, loc=pto.Vec)
            h = pto.alloc_tile(8, 128, pto.float16, loc=pto.Vec)
            u = pto.alloc_tile(8, 128, pto.float16, loc=pto.Vec, valid=(8, 127))
            q = pto.alloc_tile(8, 128, pto.int8, loc=pto.Vec)
            r = pto.alloc_tile(8, 128, pto.int8, loc=pto.Vec, valid=(8, 127))
            pto.taddreluconv(h, f, f)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tsubreluconv(q, h, h)
            pto.pipe_barrier(pto.PIPE_V)
            pto.taddreluconv(r, u, u)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    got = [e.end - e.start for e in prof.timeline if e.inst in ("TADDRELUCONV", "TSUBRELUCONV")]
    assert got == [46, 30, 30]


_HDR = "include/pto/npu/a2a3/TAddReluConv.hpp"


@pytest.mark.parametrize("tiles, call, message", [
    ("a = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec)\nb = pto.alloc_tile(8, 64, pto.float16, loc=pto.Vec)\n"
     "d = pto.alloc_tile(8, 64, pto.float16, loc=pto.Vec)",
     "pto.taddreluconv(d, a, b)", "'a' holds float32 but 'b' float16 (\"Fix: TADDRELUCONV src0 and src1 must have "
     f"the same element type.\", {_HDR})"),
    ("a = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(8, 64, pto.int8, loc=pto.Vec)",
     "pto.taddreluconv(d, a, a)", "'a' holds float32 and 'd' int8; A2/A3 converts float32 -> float16, float16 -> "
     "int8, int16 -> int8 (\"Fix: TADDRELUCONV supports float->half, half->int8 and int16->int8 only.\""),
    ("a = pto.alloc_tile(8, 64, pto.int32, loc=pto.Vec)\nd = pto.alloc_tile(8, 64, pto.float16, loc=pto.Vec)",
     "pto.tsubreluconv(d, a, a)", "'a' holds int32 and 'd' float16; A2/A3 converts float32 -> float16"),
    ("a = pto.alloc_tile(64, 16, pto.float32, loc=pto.Vec, layout=pto.ColMajor)\n"
     "d = pto.alloc_tile(64, 16, pto.float16, loc=pto.Vec)",
     "pto.taddreluconv(d, a, a)", "'a' is ColMajor (\"Fix: TADDRELUCONV only supports row major layout.\""),
    ("a = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec)\nb = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec, "
     "valid=(8, 63))\nd = pto.alloc_tile(8, 64, pto.float16, loc=pto.Vec)",
     "pto.tsubreluconv(d, a, b)", "'b' has 63 valid columns but 'd' 64; A2/A3 asserts that the valid regions match "
     "(\"Fix: TSUBRELUCONV input tile src1 valid shape mismatch with output tile dst shape.\""),
    ("a = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec, valid=(4, 64))\n"
     "d = pto.alloc_tile(8, 64, pto.float16, loc=pto.Vec)",
     "pto.taddreluconv(d, a, a)", "'a' has 4 valid rows but 'd' 8; A2/A3 asserts"),
])
def test_the_headers_checks_are_compile_errors_at_the_line(make_kernels, tiles, call, message):
    """TAddReluConvCheck's / TSubReluConvCheck's static_asserts (one source dtype, the three
    pairs, RowMajor) and their PTO_ASSERTs on the valid shapes."""
    body = "\n".join(" " * 8 + line for line in (tiles + "\n" + call).split("\n"))
    mod = make_kernels("\n@pto.kernel\ndef bad(A):\n    with pto.vector():\n" + body + "\n")
    compile_error_at(mod.bad, (pto.alloc_tensor(256),), message, call.strip())


DEQ_KERNEL = '''
@pto.kernel
def k(A, B, O, scale):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({row}, {col}, pto.int32, loc=pto.Vec, valid=({vr}, {vc}))
            src1 = pto.alloc_tile({row}, {col}, pto.int32, loc=pto.Vec, valid=({vr}, {vc}))
            tmp = pto.alloc_tile({row}, {col}, pto.int32, loc=pto.Vec, valid=({vr}, {vc}))
            dst = pto.alloc_tile({row}, {col}, pto.float16, loc=pto.Vec, valid=({vr}, {vc}))
            pto.tload(src0, A, stride={col})
            pto.tload(src1, B, stride={col})
            {flags_in}
            pto.tadddeqrelu(dst, src0, src1, scale, tmp)
            {flags_out}
            pto.tstore(O, dst, stride={col})
'''
# TADDDEQRELUTest's TEST_CASEs: (row, validRow, col, validCol, deqScaleTable's scale, src0 and
# src1's randint range)
DEQ_CASES = {
    "case1": (32, 32, 64, 64, 0.5, (-1000, 1000)),
    "case2": (64, 64, 64, 64, 0.0625, (-1000, 1000)),
    "case3": (1, 1, 2048, 2048, 0.25, (-1000, 1000)),
    "case4": (64, 64, 128, 128, 0.0625, (-1000, 1000)),
    "case5": (32, 31, 128, 128, 0.5, (-1000, 1000)),
    "case6": (32, 32, 128, 127, 0.5, (-1000, 1000)),
    "case7": (16, 16, 64, 64, 0.5, (-50000, -1)),
    "case8": (32, 32, 64, 64, 0.00001, (536000000, 536900000)),
    "case9": (16, 16, 128, 128, 0.001, (-1000, 1000)),
    "case10": (16, 16, 128, 128, 100.0, (-5, 5)),
}


def _deq_steps(src0, src1, scale):
    """The header's blocks in numpy: the int32 sum (wrapped), its float32, times 2^-17, the
    float32 scale and 2^17, each product rounded to float32; the ReLU; float16 of it."""
    t = (src0.astype(np.int64) + src1.astype(np.int64) + 2**31) % 2**32 - 2**31
    y = (t.astype(np.float32) * np.float32(2.0**-17)) * np.float32(scale) * np.float32(2.0**17)
    z = np.maximum(y, np.float32(0))
    return y, z, z.astype(np.float16)


@pytest.mark.parametrize("case", list(DEQ_CASES))
def test_ptoisa_tadddeqrelu_case(make_kernels, case):
    """One TEST_CASE: the output against gen_data.py's golden at ResultCmp eps 0.002 over the
    row x col output, and word for word against the header's float32 steps."""
    row, vr, col, vc, scale, (low, high) = DEQ_CASES[case]
    rng = np.random.RandomState(42)
    src0 = rng.randint(low, high, size=(row, col), dtype=np.int32)
    src1 = rng.randint(low, high, size=(row, col), dtype=np.int32)
    add = src0[:vr, :vc].astype(np.float64) + src1[:vr, :vc].astype(np.float64)
    deq = ((add * (1.0 / 131072.0)) * scale) * 131072.0
    golden = np.zeros((row, col), np.float16)
    golden[:vr, :vc] = np.clip(np.maximum(deq, 0.0), 0.0, 65504.0).astype(np.float16)
    source = DEQ_KERNEL.format(row=row, col=col, vr=vr, vc=vc, flags_in=FLAGS_IN, flags_out=FLAGS_OUT)
    out, = run_kernel(make_kernels(source).k, [src0, src1], [((row, col), "float16")], scale)
    assert result_cmp(golden, out, 0.002)
    want = np.zeros((row, col), np.float16)
    want[:vr, :vc] = _deq_steps(src0[:vr, :vc], src1[:vr, :vc], scale)[2]
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


def test_tadddeqrelu_leaves_its_float32_buffers_in_src0_src1_and_zeros_in_tmp(make_kernels):
    """What TAddDeqRelu.hpp leaves in its int32 operands over the valid region (2 x 48 of 2 x 64
    tiles): src0 the scaled float32 values and src1 the ReLU's, as the int32s of their bits, tmp
    zeros (its other columns keep their words). At scale 0.5: 3 + 4 = 7 -> 3.5 (bits 0x40600000),
    -10 + 2 = -8 -> -4.0 (0xC0800000; its ReLU +0.0: 0); 2^30 + 2^30 wraps to -2^31:
    -1073741824.0 (0xCE800000), whose ReLU is 0; dst 3.5, 0, 0."""
    mod = make_kernels('''
@pto.kernel
def k(A, B, O, P, Q, T):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s0 = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec, valid=(2, 48))
            s1 = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec, valid=(2, 48))
            t = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec)
            d = pto.alloc_tile(2, 64, pto.float16, loc=pto.Vec, valid=(2, 48))
            pto.tload(s0, A, stride=64)
            pto.tload(s1, B, stride=64)
            pto.tload(t, B)
            pto.tadddeqrelu(d, s0, s1, 0.5, t)
            pto.tstore(O, d, stride=64)
            pto.tstore(P, s0, stride=64)
            pto.tstore(Q, s1, stride=64)
            pto.tstore(T, t)
''')
    a = np.full((2, 64), 11, np.int32)
    b = np.full((2, 64), 22, np.int32)
    a[0, :3], b[0, :3] = [3, -10, 2**30], [4, 2, 2**30]
    d, s0, s1, t = run_kernel(mod.k, [a, b], [((2, 64), "float16"), ((2, 64), "int32"), ((2, 64), "int32"),
                                              ((2, 64), "int32")])
    assert d[0, :3].tolist() == [3.5, 0.0, 0.0]
    assert [hex(v & 0xFFFFFFFF) for v in s0[0, :3].tolist()] == ["0x40600000", "0xc0800000", "0xce800000"]
    assert s1[0, :3].tolist() == [0x40600000, 0, 0]
    y, z, _ = _deq_steps(a[:, :48], b[:, :48], 0.5)
    np.testing.assert_array_equal(s0[:, :48], y.view(np.int32))
    np.testing.assert_array_equal(s1[:, :48], z.view(np.int32))
    np.testing.assert_array_equal(t[:, :48], 0)
    np.testing.assert_array_equal(t[:, 48:], b[:, 48:])


def test_tadddeqrelu_costs_one_block_of_eight_ops_a_row(make_kernels):
    """latency_tables/ascend910b.toml TADDDEQRELU: 222 a row (the eight ops' heads and tails
    and their barriers at the CCE mock) + 12 a 256-byte int32 repeat: 4 x 128 int32 (2 repeats a
    row): 4 x 222 + 12 x 8 = 984."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s0 = pto.alloc_tile(4, 128, pto.int32, loc=pto.Vec)
            s1 = pto.alloc_tile(4, 128, pto.int32, loc=pto.Vec)
            t = pto.alloc_tile(4, 128, pto.int32, loc=pto.Vec)
            d = pto.alloc_tile(4, 128, pto.float16, loc=pto.Vec)
            pto.tadddeqrelu(d, s0, s1, 0.5, t)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    assert [e.end - e.start for e in prof.timeline if e.inst == "TADDDEQRELU"] == [984]


_DEQ_HDR = "include/pto/npu/a2a3/TAddDeqRelu.hpp"


@pytest.mark.parametrize("tiles, message", [
    ({"s": "pto.int16", "d": "pto.float16", "t": "pto.int32"},
     f"src0 's' holds int16 (\"Fix: TADDDEQRELU src0 must be int32_t.\", {_DEQ_HDR})"),
    ({"s": "pto.int32", "d": "pto.float32", "t": "pto.int32"},
     f"dst 'd' holds float32 (\"Fix: TADDDEQRELU dst must be half.\", {_DEQ_HDR})"),
    ({"s": "pto.int32", "d": "pto.float16", "t": "pto.float32"},
     f"tmp 't' holds float32 (\"Fix: TADDDEQRELU tmp must be int32_t.\", {_DEQ_HDR})"),
])
def test_tadddeqrelus_dtype_checks_are_compile_errors_at_the_line(make_kernels, tiles, message):
    """TAddDeqReluCheck's static_asserts on the four dtypes."""
    call = "pto.tadddeqrelu(d, s, s2, 0.5, t)"
    body = "\n".join(" " * 8 + line for line in (
        f"s = pto.alloc_tile(8, 64, {tiles['s']}, loc=pto.Vec)",
        "s2 = pto.alloc_tile(8, 64, pto.int32, loc=pto.Vec)",
        f"t = pto.alloc_tile(8, 64, {tiles['t']}, loc=pto.Vec)",
        f"d = pto.alloc_tile(8, 64, {tiles['d']}, loc=pto.Vec)", call))
    mod = make_kernels("\n@pto.kernel\ndef bad(A):\n    with pto.vector():\n" + body + "\n")
    compile_error_at(mod.bad, (pto.alloc_tensor(256),), message, call)


@pytest.mark.parametrize("tmp, src1, message", [
    ("pto.alloc_tile(8, 64, pto.int32, loc=pto.Vec, valid=(8, 32))", "pto.alloc_tile(8, 64, pto.int32, loc=pto.Vec)",
     "tmp 't' has 32 valid columns but 'd' 64 (\"Fix: TADDDEQRELU tmp must be at least as large as dst.\""),
    ("pto.alloc_tile(8, 64, pto.int32, loc=pto.Vec)", "pto.alloc_tile(8, 64, pto.int32, loc=pto.Vec, valid=(4, 64))",
     "'s2' has 4 valid rows but 'd' 8; A2/A3 asserts that the valid regions match (\"Fix: TADDDEQRELU src1 valid "
     "shape mismatch with dst.\""),
    ("s2", "pto.alloc_tile(8, 64, pto.int32, loc=pto.Vec)",
     "src1 's2' and tmp 's2' share words; TAddDeqRelu.hpp writes all four"),
])
def test_tadddeqrelus_shape_checks_are_compile_errors_at_the_line(make_kernels, tmp, src1, message):
    """TAddDeqReluCheck's PTO_ASSERTs (src0's and src1's valid regions dst's, tmp's at least as
    large), and pypto_sim's rule that the four tiles it writes are apart."""
    call = "pto.tadddeqrelu(d, s, s2, 0.5, t)"
    body = "\n".join(" " * 8 + line for line in (
        "s = pto.alloc_tile(8, 64, pto.int32, loc=pto.Vec)", f"s2 = {src1}", f"t = {tmp}",
        "d = pto.alloc_tile(8, 64, pto.float16, loc=pto.Vec)", call))
    mod = make_kernels("\n@pto.kernel\ndef bad(A):\n    with pto.vector():\n" + body + "\n")
    compile_error_at(mod.bad, (pto.alloc_tensor(256),), message, call)
