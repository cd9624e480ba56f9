"""pto-isa's st cases of TROWSUM, TROWMAX, TROWMIN and TROWEXPAND (tests/cpu/st/testcase/
trowsum, trowmax, trowmin, trowexpand at 3186c381), every TEST_F, in the AI-core API as their
kernels write them: the row reductions write an ND (RowMajor) dst - TROWSUM a full-width
tile, TROWMAX / TROWMIN a rows x 32 tile with valid (rows, 1) stored as a GM column - with
pto-isa's tmp operand (TROWMAX / TROWMIN pass src as tmp), TROWEXPAND reads the first column
of an ND src. Each golden is its gen_data.py's, in numpy; each tolerance its main.cpp's.

Cases A2/A3 refuses, ported as the refusal (pypto_sim refuses them as A2/A3's
TRowReduceCheck does: "Supported types: half, float, int32, int16",
include/pto/npu/a2a3/TRowReduceOps.hpp): TROWSUMTest.case_bf16_16x256_16x256_16x256,
TROWMAXTest / TROWMINTest .case_bf16_64x64_64x64_64x64, .case_int8_64x64_64x64_64x64 and
.case_uint8_64x64_64x64_64x64 (these run on pto-isa's CPU simulation only).

Not ported: none.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import PTOISA_DTYPES, result_cmp, run_kernel


TROWSUM = """
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
            pto.trowsum(dst, src, tmp)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

# TEST_F(TROWSUMTest, case_<dtype>_<g>_<tile>_<valid>): test_trowsum<T, GRows, GCols, TRows, TCols>
TROWSUM_CASES = [("float", 64, 64), ("half", 16, 256)]


@pytest.mark.parametrize("name, rows, cols", TROWSUM_CASES)
def test_trowsum(make_kernels, name, rows, cols):
    """gen_data.py (seed 19): input randint(1, 10) in dtype; golden zeros but column 0, the
    row sums taken in float32 and cast to dtype. ResultCmp(golden, out, 0.001) over fileSize
    (bytes) elements."""
    dt = PTOISA_DTYPES[name]
    rng = np.random.RandomState(19)
    x = rng.randint(1, 10, size=[rows, cols]).astype(dt)
    golden = np.zeros([rows, cols], dt)
    golden[:, 0] = np.sum(x, axis=1, dtype=np.float32).astype(dt)
    kernel = make_kernels(TROWSUM.format(r=rows, c=cols, dt=dt)).k
    out, = run_kernel(kernel, [x], [((rows, cols), dt)])
    assert result_cmp(golden, out, 0.001, compared=x.nbytes)


ROW_MINMAX = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, 32, pto.{dt}, valid=({r}, 1))
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.{op}(dst, src, src)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst, stride=1)
"""

# TEST_F(TROWMAXTest / TROWMINTest, case_<dtype>_<global>_<tile>_<valid>): the kernel's tile is
# kTRows x kTCols; gen_data.py's valid region is min(tile, valid) = the tile
MINMAX_CASES = [("float", 64, 64), ("half", 64, 64), ("half", 32, 32), ("float", 32, 16), ("float", 32, 16)]
MINMAX_IDS = ["float_64x64_64x64_64x64", "half_64x64_64x64_64x64", "half_161x161_32x32_161x161",
              "float_77x81_32x16_77x81", "float_32x32_32x16_32x32"]


@pytest.mark.parametrize("op", ["trowmax", "trowmin"])
@pytest.mark.parametrize("name, rows, cols", MINMAX_CASES, ids=MINMAX_IDS)
def test_trowmax_and_trowmin(make_kernels, op, name, rows, cols):
    """gen_data.py (seed 19): input uniform(-16, 16) cast to dtype; golden[i] = max (min) of
    row i. ResultCmp(golden, out, 0.001) over kTRows (bytes: rows x itemsize) elements."""
    dt = PTOISA_DTYPES[name]
    rng = np.random.RandomState(19)
    x = rng.uniform(low=-16, high=16, size=[rows, cols]).astype(dt)
    golden = (np.max if op == "trowmax" else np.min)(x, axis=1).astype(dt)
    kernel = make_kernels(ROW_MINMAX.format(r=rows, c=cols, dt=dt, op=op)).k
    out, = run_kernel(kernel, [x], [((rows,), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)


REFUSED = [("trowsum", "bf16")] + [(op, name) for op in ("trowmax", "trowmin") for name in ("bf16", "int8", "uint8")]


@pytest.mark.parametrize("op, name", REFUSED, ids=[f"{op}-{name}" for op, name in REFUSED])
def test_the_dtypes_a2a3_row_reductions_refuse(make_kernels, op, name):
    """TROWSUMTest.case_bf16_16x256_16x256_16x256, TROWMAXTest / TROWMINTest .case_bf16_, _int8_
    and _uint8_64x64_64x64_64x64: A2/A3's TRowReduceCheck takes half, float, int32 and int16
    only, so the kernel does not compile (as TRowReduceCheck's static_assert fails)."""
    rows, cols, source = (16, 256, TROWSUM) if op == "trowsum" else (64, 64, ROW_MINMAX)
    kernel = make_kernels(source.format(r=rows, c=cols, dt=PTOISA_DTYPES[name], op=op)).k
    dtype = getattr(pto, PTOISA_DTYPES[name])
    with pytest.raises(pto.CompileError, match=rf"pto.{op} needs tiles of one dtype among float32, "
                                               rf"float16, int32, int16, got {PTOISA_DTYPES[name]}"):
        kernel.program_for((pto.alloc_tensor(64 * 64 * 4, dtype), pto.alloc_tensor(64 * 64 * 4, dtype)))


TROWEXPAND = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(64, 64, pto.float32)
            dst = pto.alloc_tile(64, 64, pto.float32)
            pto.tload(src, S)
            pto.trowexpand(dst, src)
            pto.tstore(O, dst)
"""


def test_trowexpand_case_expand_float_64x64(make_kernels):
    """TROWEXPAND_Test.case_expand_float_64x64, gen_expand (seed 19): x uniform(-2, 2) float32
    64 x 64, golden[:, :] = x[:, [0]] (the src tile is ND: its first column is expanded).
    ResultCmp(golden, out, 0.0): exact."""
    rng = np.random.RandomState(19)
    x = rng.uniform(-2.0, 2.0, size=(64, 64)).astype(np.float32)
    golden = np.zeros((64, 64), np.float32)
    golden[:, :] = x[:, [0]]
    out, = run_kernel(make_kernels(TROWEXPAND).k, [x], [((64, 64), np.float32)])
    assert result_cmp(golden, out, 0.0)
