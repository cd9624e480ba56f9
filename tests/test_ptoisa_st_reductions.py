"""pto-isa's st cases of TCOLMIN, TCOLPROD, TROWPROD, TCOLEXPAND, the column- and row-expand
binary ops (TCOLEXPANDADD / SUB / MUL / DIV / MAX / MIN / EXPDIF, TROWEXPAND...), the index
reductions (TROWARGMAX / TROWARGMIN, TCOLARGMAX / TCOLARGMIN) and the partial ops (TPARTADD,
TPARTMAX, TPARTMIN, TPARTMUL) (tests/cpu/st/testcase/tcolmin, tcolprod, trowprod, tcolexpand,
tcolexpandop, trowexpandop, trowreduceidx, tcolreduceidx, tpartadd, tpartmax, tpartmin,
tpartmul at 3186c381), every TEST_F, in the AI-core API as their kernels write them. Each
golden is its gen_data.py's, in numpy (one generator per case, seeded as gen_data.py seeds
it: ``np.random.seed(19)`` -> ``RandomState(19)``, ``default_rng(19)`` -> ``default_rng(19)``);
each tolerance its main.cpp's (ResultCmp(golden, out, eps) over the vectors main.cpp sizes).
tcolprod, trowreduceidx, tcolreduceidx and tpartmul are CPU-tile tests (SetValue / FillLinear
on tiles, no GM): here their tiles are TLOADed from GM and TSTOREd back, with the tiles,
valid regions and values of the test and its expected values computed by its formula.

Cases A2/A3 refuses, ported as the refusal (a CompileError, as the header's static_assert
fails the device build):
- TCOLMINTest.case_int8_ and case_uint8_64x64_64x64_64x64: TColReduceCheck takes half, float,
  int16, int32 (include/pto/npu/a2a3/TColReduceOps.hpp lines 87-89);
- TCOLEXPANDOPTest / TROWEXPANDOPTest .case_div_int16_16x256_..., case_div_int32_64x64_...:
  TCOLEXPANDDIV takes half / float (TColExpandDiv.hpp lines 52-55), TROWEXPANDDIV too
  (TRowExpandDiv.hpp lines 55-58);
- TCOLEXPANDOPTest / TROWEXPANDOPTest .case_*_uint16_64x64_..., case_*_uint32_64x64_...,
  case_mul_uint8_64x64_...: TCOLEXPANDOP_IMPL takes int32, int16, half, float
  (TColExpandBinOp.hpp lines 89-96), the TROWEXPAND ops the same (e.g. TRowExpandMul.hpp lines
  40-43, TRowExpandAdd.hpp lines 40-44);
- TColReduceIdxTest.ArgMaxAndArgMinReturnFirstMatchingIndex: an int32 src, and A2/A3's
  TColReduceIdxCheck takes f16 / u16 / f32 / u32 ("Fix: TColReduceIdx input data type must be
  f16/u16/f32/u32", TColReduceIdx.hpp lines 26-29, included for A2/A3 by
  include/pto/common/pto_instr_impl.hpp line 177; docs/isa/TCOLARGMAX.md "A2A3 implementation
  checks");
- TPARTMAX_Test / TPARTMIN_Test .case_int8_ and case_uint8_64x64_src1_32x32: TPARTMAX / TPARTMIN
  take int32, int16, half, float (TPartMax.hpp lines 74-80, TPartMin.hpp alike).

The pto-isa ``tmp`` of TROWARGMAX / TROWARGMIN / TCOLARGMAX / TCOLARGMIN is not passed:
pypto_sim's index reductions take (dst, src). For TROWARGMAX's index-only form with
srcValidCol <= elemPerRpt (5 <= 64 here) A2/A3 does not use tmp (docs/isa/TROWARGMAX.md,
"Case 1"; TRowReduceIdxOps.hpp OneRepeatProcIdx writes dst straight from vcmax), so leaving it
out changes nothing; the TCOLARGMAX case is a refusal, whose outcome tmp does not change.

Not ported: the bf16 cases (TCOLMINTest.case_bf16_64x64_64x64_64x64, TCOLEXPANDTest.case_bf16_
16x256_16x256_16x256), built only with CPU_SIM_BFLOAT_ENABLED / PTO_CPU_SIM_ENABLE_BF16, as
tests/test_ptoisa_st_float_elementwise.py leaves them. TROWEXPAND, TROWSUM / TROWMAX / TROWMIN,
TCOLSUM and TCOLMAX: tests/test_ptoisa_st_rows.py, test_ptoisa_st_tcolsum.py,
test_ptoisa_st_float_elementwise.py.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import PTOISA_DTYPES, result_cmp, run_kernel


def refused(kernel, n_tensors, dt, match):
    """The kernel does not compile for tensors of dt, with a CompileError matching `match`."""
    tensors = tuple(pto.alloc_tensor(64 * 256 * 4, getattr(pto, dt)) for _ in range(n_tensors))
    with pytest.raises(pto.CompileError, match=match):
        kernel.program_for(tensors)


# ---------------------------------------------------------------- TCOLMIN
TCOLMIN = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile(16, {c}, pto.{dt}, valid=(1, {c}))
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tcolmin(dst, src)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

# TEST_F(TCOLMINTest, case_<dtype>_<global>_<tile>_<valid>): test_tcolmin<T, GR, GC, TR, TC>; the
# kernel's src tile is TR x TC, its dst 16 x TC with valid (1, TC)
TCOLMIN_CASES = {"case_float_64x64_64x64_64x64": ("float", 64, 64),
                 "case_half_64x64_64x64_64x64": ("half", 64, 64),
                 "case_float_32x32_32x16_32x32": ("float", 32, 16)}


@pytest.mark.parametrize("case", TCOLMIN_CASES)
def test_tcolmin(make_kernels, case):
    """gen_data.py (seed 19): input uniform(-16, 16) of tile_row x tile_col as dtype; golden[j]
    = min of input[:h_valid, j] (h_valid = min(tile_row, valid_row), the tile's rows; w_valid
    the tile's columns). ResultCmp(golden, out, 0.001) over dstFileSize (TC x itemsize)
    elements. A minimum is exact, so out equals the golden."""
    name, r, c = TCOLMIN_CASES[case]
    dt = PTOISA_DTYPES[name]
    rng = np.random.RandomState(19)
    x = rng.uniform(low=-16, high=16, size=[r, c]).astype(dt)
    golden = np.array([np.min(x[:r, j]) for j in range(c)], dt)
    out, = run_kernel(make_kernels(TCOLMIN.format(r=r, c=c, dt=dt)).k, [x], [((c,), np.dtype(dt))])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


@pytest.mark.parametrize("name", ["int8", "uint8"])
def test_tcolmin_a2a3_refuses_8_bit_tiles(make_kernels, name):
    """TCOLMINTest.case_int8_64x64_64x64_64x64 and case_uint8_64x64_64x64_64x64 run on
    pto-isa's CPU simulation only: A2/A3's TColReduceCheck static_asserts half, float, int16,
    int32 ("Fix: TCOLREDUCE input data type is not supported by this instruction.",
    include/pto/npu/a2a3/TColReduceOps.hpp lines 87-89)."""
    kernel = make_kernels(TCOLMIN.format(r=64, c=64, dt=PTOISA_DTYPES[name])).k
    refused(kernel, 2, PTOISA_DTYPES[name], rf"among float32, float16, int32, int16, got {PTOISA_DTYPES[name]}")


# ---------------------------------------------------------------- TCOLPROD
TCOLPROD = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(3, 8, pto.int32, valid=(3, 4))
            dst = pto.alloc_tile(1, 8, pto.int32, valid=(1, 4))
            pto.tload(src, S)
            pto.tcolprod(dst, src)
            pto.tstore(O, dst)
"""


def test_tcolprod_produces_product_per_column(make_kernels):
    """TColProdTest.ProducesProductPerColumn: src an int32 3 x 8 tile with valid (3, 4) holding
    {{2, 3, 4, 5}, {1, -2, 3, -4}, {7, 1, 2, 0}}, dst 1 x 8 with valid (1, 4); dst[0, c] = the
    product of column c: {14, -6, 24, 0} (ExpectValueEquals: exact). A2/A3 takes this: int32
    (TColReduceCheck, TColReduceOps.hpp lines 87-89) and a valid width under the tile's
    (ColReduceInstr masks the last repeat to validCol, lines 66-71)."""
    values = np.array([[2, 3, 4, 5], [1, -2, 3, -4], [7, 1, 2, 0]], np.int32)
    golden = np.prod(values, axis=0).astype(np.int32)
    assert golden.tolist() == [14, -6, 24, 0]
    out, = run_kernel(make_kernels(TCOLPROD).k, [values], [((4,), np.int32)])
    np.testing.assert_array_equal(out, golden)


# ---------------------------------------------------------------- TROWPROD
TROWPROD = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            tmp = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.trowprod(dst, src, tmp)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


@pytest.mark.parametrize("name, rows, cols", [("float", 64, 64), ("half", 16, 256)],
                         ids=["case_float_64x64_64x64_64x64", "case_half_16x256_16x256_16x256"])
def test_trowprod(make_kernels, name, rows, cols):
    """gen_data.py (seed 19): input randint(1, 10) as dtype; golden zeros but column 0, the row
    products in float32 (np.prod(dtype=float32)) cast to dtype (the valid region is the whole
    tile). ResultCmp(golden, out, 0.001) over fileSize (bytes) elements. A product of 64 (256)
    factors in 1..9 is about 10^39.5 (10^158): rows past float32's (float16's) range give inf
    on both sides, which ResultCmp counts as equal (inf - inf is NaN, not > eps)."""
    dt = PTOISA_DTYPES[name]
    rng = np.random.RandomState(19)
    x = rng.randint(1, 10, size=[rows, cols]).astype(dt)
    golden = np.zeros([rows, cols], dt)
    with np.errstate(over="ignore"):
        golden[:, 0] = np.prod(x, axis=1, dtype=np.float32).astype(dt)
    out, = run_kernel(make_kernels(TROWPROD.format(r=rows, c=cols, dt=dt)).k, [x], [((rows, cols), np.dtype(dt))])
    assert result_cmp(golden, out, 0.001, compared=x.nbytes)


# ---------------------------------------------------------------- TCOLEXPAND
TCOLEXPAND = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(src, S)
            pto.tcolexpand(dst, src)
            pto.tstore(O, dst)
"""


@pytest.mark.parametrize("name, rows, cols", [("float", 64, 64), ("half", 16, 256)],
                         ids=["case_float_64x64_64x64_64x64", "case_half_16x256_16x256_16x256"])
def test_tcolexpand(make_kernels, name, rows, cols):
    """gen_data.py (seed 19): input uniform(-16, 16) of rows x cols as dtype; golden = its first
    row tiled down the rows (np.tile(input[0:1, :], (rows, 1))). ResultCmp(golden, out, 0.001)
    over fileSize (bytes) elements; a copy is exact."""
    dt = PTOISA_DTYPES[name]
    rng = np.random.RandomState(19)
    x = rng.uniform(low=-16, high=16, size=[rows, cols]).astype(dt)
    golden = np.tile(x[0:1, :], (rows, 1)).astype(dt)
    out, = run_kernel(make_kernels(TCOLEXPAND.format(r=rows, c=cols, dt=dt)).k, [x], [((rows, cols), np.dtype(dt))])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


# ---------------------------------------------------------------- TCOLEXPAND* / TROWEXPAND* binary ops
# The kernels of tcolexpandop_kernel.cpp / trowexpandop_kernel.cpp: src0 an iRow x iCol tile, src1
# a 1 x iCol row (TCOLEXPAND*) or an iRow x 1 ColMajor column (TROWEXPAND*), dst oRow x oCol, all
# with valid (kTRows, kTCols) (src1: (1, kTCols) / (kTRows, 1)); GM rows iCol (src0, src1's row)
# and oCol (dst) elements apart. The column loads as DN: the CPU kernel's GlobalTensor is ND, which
# A2/A3 does not load into a ColMajor Vec tile ("Fix: TLOAD(VecTile, GlobalTensor) only support
# ND2ND/DN2DN/NZ2NZ!", tload_common.hpp); pto-isa's NPU suite loads it Layout::DN
# (tests/npu/a2a3/src/st/testcase/trowexpandadd/trowexpandadd_kernel.cpp line 23).
COLEXPANDOP = """
@pto.kernel
def k(A, V, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({ir}, {ic}, pto.{dt}, valid=({r}, {c}))
            src1 = pto.alloc_tile(1, {ic}, pto.{dt}, valid=(1, {c}))
            dst = pto.alloc_tile({orow}, {oc}, pto.{dt}, valid=({r}, {c}))
            pto.tload(src0, A, stride={ic})
            pto.tload(src1, V, stride={ic})
            pto.{op}(dst, src0, src1)
            pto.tstore(O, dst, stride={oc})
"""

ROWEXPANDOP = """
@pto.kernel
def k(A, V, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({ir}, {ic}, pto.{dt}, valid=({r}, {c}))
            src1 = pto.alloc_tile({ir}, 1, pto.{dt}, valid=({r}, 1), layout=pto.ColMajor)
            dst = pto.alloc_tile({orow}, {oc}, pto.{dt}, valid=({r}, {c}))
            pto.tload(src0, A, stride={ic})
            pto.tload(src1, V, layout=pto.DN)
            pto.{op}(dst, src0, src1)
            pto.tstore(O, dst, stride={oc})
"""

EXPAND_GOLDEN = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "min": np.minimum, "max": np.maximum, "expdif": lambda a, b: np.exp(a - b),
    "div": lambda a, b: a // b if np.issubdtype(a.dtype, np.integer) else a / b,
}

# gen_data.py's case lists: (dtype, kTRows, kTCols, iRow, iCol, oRow, oCol) x kinds, in main.cpp's
# TEST_F names case_<kind>_<dtype>_<tile>_<src>_<dst>
_FLOAT_SHAPES = [("float", 64, 64, 64, 64, 64, 64), ("half", 16, 256, 16, 256, 16, 256),
                 ("float", 16, 16, 32, 32, 64, 64)]
_INT_SHAPES = [("int16", 16, 256, 16, 256, 16, 256), ("int32", 64, 64, 64, 64, 64, 64),
               ("uint16", 64, 64, 64, 64, 64, 64), ("uint32", 64, 64, 64, 64, 64, 64)]
EXPAND_CASES = ([(kind,) + s for s in _FLOAT_SHAPES for kind in ["div", "mul", "sub", "add", "min", "max", "expdif"]]
                + [(kind,) + s for s in _INT_SHAPES for kind in ["div", "mul", "sub", "add", "min", "max"]]
                + [("mul", "uint8", 64, 64, 64, 64, 64, 64)])


def _case_id(case):
    kind, name, r, c, ir, ic, orow, oc = case
    return f"case_{kind}_{name}_{r}x{c}_{ir}x{ic}_{orow}x{oc}"


def _a2a3_takes(kind, name):
    """A2/A3's static_asserts: the expand ops take int32, int16, half, float
    (TColExpandBinOp.hpp lines 89-96; TRowExpand{Add,Sub,Mul,Max,Min}.hpp), DIV half and float
    only (TColExpandDiv.hpp lines 52-55, TRowExpandDiv.hpp lines 55-58)."""
    return name in ("float", "half") or (name in ("int16", "int32") and kind != "div")


EXPAND_RUN = [c for c in EXPAND_CASES if _a2a3_takes(c[0], c[1])]
EXPAND_REFUSED = [c for c in EXPAND_CASES if not _a2a3_takes(c[0], c[1])]


def _expand_data(per_col, kind, name, r, c, ir, ic, orow, oc):
    """gen_data.py (seed 19): integers input1 randint(1, 8) of iRow x iCol, input2 randint(1, 8)
    of 1 x iCol (TCOLEXPAND) or iRow x 1 (TROWEXPAND); floats uniform(-2, 2) and uniform(1, 2);
    golden oRow x oCol zeros but [:kTRows, :kTCols], the op of input1's valid region and
    input2's (broadcast down the rows / across the columns) in dtype (integer div: //)."""
    dt = np.dtype(PTOISA_DTYPES[name])
    rng = np.random.RandomState(19)
    vshape = [1, ic] if per_col else [ir, 1]
    if np.issubdtype(dt, np.integer):
        a = rng.randint(1, 8, size=[ir, ic]).astype(dt)
        v = rng.randint(1, 8, size=vshape).astype(dt)
    else:
        a = rng.uniform(low=-2, high=2, size=[ir, ic]).astype(dt)
        v = rng.uniform(low=1, high=2, size=vshape).astype(dt)
    golden = np.zeros((orow, oc)).astype(dt)
    vv = v[:1, :c] if per_col else v[:r, :1]
    golden[:r, :c] = EXPAND_GOLDEN[kind](a[:r, :c], vv)
    return a, v, golden


def _expand_kernel(make_kernels, per_col, kind, name, r, c, ir, ic, orow, oc):
    op = ("tcolexpand" if per_col else "trowexpand") + kind
    source = (COLEXPANDOP if per_col else ROWEXPANDOP).format(
        op=op, dt=PTOISA_DTYPES[name], r=r, c=c, ir=ir, ic=ic, orow=orow, oc=oc)
    return make_kernels(source).k


@pytest.mark.parametrize("per_col", [True, False], ids=["TCOLEXPANDOP", "TROWEXPANDOP"])
@pytest.mark.parametrize("case", EXPAND_RUN, ids=_case_id)
def test_expand_op(make_kernels, per_col, case):
    """TCOLEXPANDOPTest / TROWEXPANDOPTest.<case>: gen_data.py's inputs and golden (above),
    ResultCmp(golden, out, 0.001) over oRow x oCol elements. The 16x16_32x32_64x64 cases act on
    a 16 x 16 valid region of a 32 x 32 src0 and a 64 x 64 dst; dst's other elements stay as
    InitDstDevice left them (0), as in the golden."""
    kind, name, r, c, ir, ic, orow, oc = case
    a, v, golden = _expand_data(per_col, *case)
    kernel = _expand_kernel(make_kernels, per_col, *case)
    out, = run_kernel(kernel, [a, v], [((orow, oc), golden.dtype)])
    assert result_cmp(golden, out, 0.001)


@pytest.mark.parametrize("per_col", [True, False], ids=["TCOLEXPANDOP", "TROWEXPANDOP"])
@pytest.mark.parametrize("case", EXPAND_REFUSED, ids=_case_id)
def test_the_expand_ops_a2a3_refuses(make_kernels, per_col, case):
    """The int16 / int32 DIV cases and every uint16, uint32 and uint8 case run on pto-isa's CPU
    simulation only: A2/A3's static_asserts (TCOLEXPANDDIV / TROWEXPANDDIV: half, float;
    TCOLEXPANDOP_IMPL and the TROWEXPAND ops: int32, int16, half, float) fail the build, and
    pypto_sim refuses the kernel naming the dtype."""
    kind, name = case[0], case[1]
    kernel = _expand_kernel(make_kernels, per_col, *case)
    op = ("tcolexpand" if per_col else "trowexpand") + kind
    refused(kernel, 3, PTOISA_DTYPES[name], rf"pto\.{op}\b.*\b(got|not) {PTOISA_DTYPES[name]}\b")


# ---------------------------------------------------------------- TROWARGMAX / TROWARGMIN, TCOLARGMAX / TCOLARGMIN
ROWARG = """
@pto.kernel
def k(S, OMAX, OMIN):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(3, 8, pto.int32, valid=(3, 5))
            argmax = pto.alloc_tile(3, 8, pto.int32, valid=(3, 1))
            argmin = pto.alloc_tile(3, 8, pto.int32, valid=(3, 1))
            pto.tload(src, S)
            pto.trowargmax(argmax, src)
            pto.trowargmin(argmin, src)
            pto.tstore(OMAX, argmax, stride=1)
            pto.tstore(OMIN, argmin, stride=1)
"""


def test_trowargmax_and_trowargmin_return_first_matching_index(make_kernels):
    """TRowReduceIdxTest.ArgMaxAndArgMinReturnFirstMatchingIndex: src an int32 3 x 8 tile with
    valid (3, 5) holding {{1, 8, 8, -3, 4}, {7, 2, 9, 9, 1}, {-5, -6, -6, 0, 0}}; argmax and
    argmin int32 3 x 8 ND tiles with valid (3, 1) (A2/A3 takes an ND dst whose valid column
    count is 1: docs/isa/TROWARGMAX.md, TRowReduceCheck in TRowReduceOps.hpp lines 190-193;
    int32 src: lines 197-200); the first index of each row's max / min: {1, 2, 3} and
    {3, 4, 1} (ExpectValueEquals: exact)."""
    values = np.array([[1, 8, 8, -3, 4], [7, 2, 9, 9, 1], [-5, -6, -6, 0, 0]], np.int32)
    gmax, gmin = np.argmax(values, axis=1).astype(np.int32), np.argmin(values, axis=1).astype(np.int32)
    assert gmax.tolist() == [1, 2, 3] and gmin.tolist() == [3, 4, 1]
    omax, omin = run_kernel(make_kernels(ROWARG).k, [values], [((3,), np.int32), ((3,), np.int32)])
    np.testing.assert_array_equal(omax, gmax)
    np.testing.assert_array_equal(omin, gmin)


COLARG = """
@pto.kernel
def k(S, OMAX, OMIN):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(4, 8, pto.int32, valid=(4, 4))
            argmax = pto.alloc_tile(1, 8, pto.int32, valid=(1, 4))
            argmin = pto.alloc_tile(1, 8, pto.int32, valid=(1, 4))
            pto.tload(src, S)
            pto.tcolargmax(argmax, src)
            pto.tcolargmin(argmin, src)
            pto.tstore(OMAX, argmax)
            pto.tstore(OMIN, argmin)
"""


def test_tcolargmax_a2a3_refuses_an_int32_src(make_kernels):
    """TColReduceIdxTest.ArgMaxAndArgMinReturnFirstMatchingIndex (int32 src 4 x 8 with valid
    (4, 4), int32 argmax / argmin 1 x 8 with valid (1, 4)) runs on pto-isa's CPU simulation
    only: A2/A3's TColReduceIdxCheck static_asserts a src of f16 / u16 / f32 / u32 ("Fix:
    TColReduceIdx input data type must be f16/u16/f32/u32", include/pto/npu/a2a3/
    TColReduceIdx.hpp lines 26-29; docs/isa/TCOLARGMAX.md, A2A3: half, float, uint16_t,
    uint32_t), so the kernel does not build, and pypto_sim should refuse it naming int32."""
    refused(make_kernels(COLARG).k, 3, "int32", r"pto\.tcolargmax\b.*\b(got|not) int32\b")


# ---------------------------------------------------------------- TPARTADD / TPARTMAX / TPARTMIN
PART = """
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile(64, 64, pto.{dt})
            src1 = pto.alloc_tile(64, 64, pto.{dt}, valid=(32, 32))
            dst = pto.alloc_tile(64, 64, pto.{dt})
            pto.tload(src0, A)
            pto.tload(src1, B, stride=64)
            pto.{op}(dst, src0, src1)
            pto.tstore(O, dst)
"""

PART_GOLDEN = {"tpartadd": np.add, "tpartmax": np.maximum, "tpartmin": np.minimum}


@pytest.mark.parametrize("op", PART_GOLDEN)
def test_tpart_case_float_64x64_src1_32x32(make_kernels, op):
    """TPARTADD_Test / TPARTMAX_Test / TPARTMIN_Test .case_float_64x64_src1_32x32: gen_data.py
    (np.random.default_rng(19)): src0, src1 uniform(-1, 1) 64 x 64 float32; src1 is loaded as
    its top-left 32 x 32 (GlobalTensor shape 32 x 32, row stride 64) into a 64 x 64 tile with
    valid (32, 32); golden = src0 but [:32, :32] = op(src0, src1) there. ResultCmp(golden, out,
    0.0): exact."""
    rng = np.random.default_rng(19)
    a = rng.uniform(-1.0, 1.0, size=(64, 64)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, size=(64, 64)).astype(np.float32)
    golden = np.zeros((64, 64), np.float32)
    golden[:, :] = a
    golden[:32, :32] = PART_GOLDEN[op](a[:32, :32], b[:32, :32])
    out, = run_kernel(make_kernels(PART.format(dt="float32", op=op)).k, [a, b], [((64, 64), np.float32)])
    assert result_cmp(golden, out, 0.0)
    np.testing.assert_array_equal(out, golden)


@pytest.mark.parametrize("name", ["int8", "uint8"])
@pytest.mark.parametrize("op", ["tpartmax", "tpartmin"])
def test_tpartmax_and_tpartmin_a2a3_refuses_8_bit_tiles(make_kernels, op, name):
    """TPARTMAX_Test / TPARTMIN_Test .case_int8_ and case_uint8_64x64_src1_32x32 run on
    pto-isa's CPU simulation only: A2/A3's TPARTMAX_IMPL / TPARTMIN_IMPL static_assert int32,
    int16, half, float ("Fix: TPARTMAX Invalid data type.", include/pto/npu/a2a3/TPartMax.hpp
    lines 74-80; TPartMin.hpp alike; docs/isa/TPARTMAX.md "A2A3 implementation checks")."""
    kernel = make_kernels(PART.format(dt=PTOISA_DTYPES[name], op=op)).k
    refused(kernel, 3, PTOISA_DTYPES[name], rf"pto\.{op}\b.*\b(got|not|holds) {PTOISA_DTYPES[name]}\b")


# ---------------------------------------------------------------- TPARTMUL
PARTMUL = """
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            dst = pto.alloc_tile(2, 8, pto.int32, valid=({dr}, {dc}))
            src0 = pto.alloc_tile(2, 8, pto.int32, valid=({ar}, {ac}))
            src1 = pto.alloc_tile(2, 8, pto.int32, valid=({br}, {bc}))
            pto.tload(src0, A)
            pto.tload(src1, B)
            pto.tpartmul(dst, src0, src1)
            pto.tstore(O, dst)
"""


def _fill_linear(rows, cols, start):
    """CpuTileTestUtils::FillLinear: the valid region's elements start, start + 1, ... row by row."""
    return (start + np.arange(rows * cols)).reshape(rows, cols).astype(np.int32)


# (dst valid, src0 valid, src0 FillLinear start, src1 valid, src1 start) of each TEST
PARTMUL_CASES = {"MultipliesOverlapAndCopiesSrc0OutsideOverlap": ((2, 8), (2, 8), 1, (1, 4), 10),
                 "UsesSrc1WhenSrc0IsOutOfRange": ((2, 6), (1, 4), 1, (2, 6), 20)}


@pytest.mark.parametrize("case", PARTMUL_CASES)
def test_tpartmul(make_kernels, case):
    """TPartMulTest.<case>: int32 2 x 8 tiles, src0 and src1 FillLinear'd over their valid
    regions; over dst's valid region dst = src0 * src1 where both are valid, else the source
    that is (src0 in the first case, src1 in the second) (ExpectValueEquals: exact). A2/A3
    takes both forms (TPartMul.hpp lines 42-64: the source whose valid region is dst's goes
    first into TPartInstr, TPartOp.hpp)."""
    (dr, dc), (ar, ac), a0, (br, bc), b0 = PARTMUL_CASES[case]
    a, b = _fill_linear(ar, ac, a0), _fill_linear(br, bc, b0)
    golden = np.zeros((dr, dc), np.int32)
    for r in range(dr):
        for c in range(dc):
            if r < ar and c < ac and r < br and c < bc:
                golden[r, c] = a[r, c] * b[r, c]
            else:
                golden[r, c] = a[r, c] if (r < ar and c < ac) else b[r, c]
    kernel = make_kernels(PARTMUL.format(dr=dr, dc=dc, ar=ar, ac=ac, br=br, bc=bc)).k
    out, = run_kernel(kernel, [a, b], [((dr, dc), np.int32)])
    np.testing.assert_array_equal(out, golden)
