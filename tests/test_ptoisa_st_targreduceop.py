"""pto-isa's st suite TARGREDUCEOPTest (tests/cpu/st/testcase/targreduceop at 3186c381), every
TEST_F, in the AI-core API as targreduceop_kernel.cpp's runTARGREDUCEOP writes it: TLOAD of a
kTRows x kTCols region of an iRow x iCol src tile (GM rows iCol apart), one of TROWARGMAX /
TROWARGMIN / TCOLARGMAX / TCOLARGMIN into a RowMajor oRow x oCol index tile of valid (kTRows, 1)
(rows) or (1, kTCols) (columns), and in the ``val`` cases the value-and-index form
TROWARGMAX(dstVal, dstIdx, src, tmp) with a RowMajor oValRow x oValCol value tile of the same
valid region; TSTORE of each at its tile's width. The 24 TEST_Fs are gen_data.py's three
parameter sets (TIdx, T, kTRows, kTCols[, iRow, iCol, oRow, oCol, oValRow, oValCol]) times its
eight operations (row_min, row_max, row_val_min, row_val_max, col_min, col_max, col_val_min,
col_val_max), named case_<op>_<TIdx>_<T>_<tile>_<in>_<out>[_<val out>].

Each golden is gen_data.py's (seed 19: one ``RandomState(19)`` a case): input uniform(-20, 20)
of in_row x in_col as T; golden oRow x oCol of TIdx zeros but column 0 of the kTRows rows
(row ops) or row 0 of the kTCols columns (col ops), np.argmin / np.argmax of the valid region,
and golden_val (oValRow x oValCol of T) the np.min / np.max there. main.cpp's CheckOutput:
ResultCmp<TIdx>(golden, out, 0.001) over oRow x oCol elements and, for the val ops,
ResultCmp<T>(golden_val, out_val, 0.001) over oValRow x oValCol; both outputs start as zeros
(InitDstDevice).

The kernel is written for the CPU simulation, which needs no flags: the port adds the MTE2 -> V
and V -> MTE3 flag pairs a device kernel needs and runs sync="manual" in mode="timing" under
check=("sync", "race") and in mode="functional". pto-isa's ``tmp`` tile is not an operand of
pypto_sim's index reductions (A2/A3 scratch, tests/test_ptoisa_st_reductions.py says more).

Cases A2/A3 refuses, ported as the refusal (a CompileError, as the header's static_assert fails
the device build): case_col_val_min_int32_half_16x256_16x256_16x256_16x256 and
case_col_val_max_int32_half_...: TCOLARGMAX / TCOLARGMIN's value-and-index form with a 2-byte
src takes int16 / uint16 indices only ("Fix: TColReduceOpsIdx DstIdx data type must be s16 or
u16 when input type size is 2 bytes", include/pto/npu/a2a3/TColReduceIdx.hpp lines 73-77). The
row form takes int32 indices with half data (TRowReduceIdxOps.hpp lines 29-33) and runs.

Not ported: nothing."""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import PTOISA_DTYPES, result_cmp

KERNEL = """
@pto.kernel(sync="manual")
def k(S, O, V):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({ir}, {ic}, pto.{dt}, valid=({r}, {c}))
            idx = pto.alloc_tile({orow}, {oc}, pto.{it}, valid=({dr}, {dc}))
            val = pto.alloc_tile({ovr}, {ovc}, pto.{dt}, valid=({dr}, {dc}))
            pto.tload(src, S, stride={ic})
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.{op}(idx, src{val_arg})
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, idx, stride={oc})
            {store_val}
"""

# gen_data.py's case_params_list: TRowExpandOpParams(idxtype, dtype, tile_row, tile_col, in_row, in_col,
# out_row, out_col, out_val_row, out_val_col), the defaults filled in
PARAMS = [("uint32", "float", 64, 64, 64, 64, 64, 64, 64, 64),
          ("int32", "half", 16, 256, 16, 256, 16, 256, 16, 256),
          ("uint32", "float", 16, 16, 32, 32, 64, 64, 32, 32)]
OPERATIONS = ["row_min", "row_max", "row_val_min", "row_val_max", "col_min", "col_max", "col_val_min", "col_val_max"]
# pypto_sim's instruction and numpy's index and value reductions of an operation's kind
KINDS = {"row_min": ("trowargmin", np.argmin, np.min), "row_max": ("trowargmax", np.argmax, np.max),
         "col_min": ("tcolargmin", np.argmin, np.min), "col_max": ("tcolargmax", np.argmax, np.max)}
RUNS = [("timing", ("sync", "race")), ("functional", None)]


def case_name(op, p):
    """main.cpp's TEST_F name of operation op over parameter set p (gen_data.py generate_case_name)."""
    it, name, r, c, ir, ic, orow, oc, ovr, ovc = p
    tail = f"_{ovr}x{ovc}" if "_val_" in op else ""
    return f"case_{op}_{it}_{name}_{r}x{c}_{ir}x{ic}_{orow}x{oc}{tail}"


def a2a3_takes(op, p):
    """TColReduceIdx.hpp lines 73-77: the column value-and-index form of 2-byte data takes
    int16 / uint16 indices only."""
    return not (op.startswith("col_val") and p[1] == "half" and p[0] in ("int32", "uint32"))


CASES = [(op, p) for p in PARAMS for op in OPERATIONS]
RUN = [c for c in CASES if a2a3_takes(*c)]
REFUSED = [c for c in CASES if not a2a3_takes(*c)]


def kernel_for(make_kernels, op, p):
    """runTARGREDUCEOP's kernel for operation op over parameter set p."""
    it, name, r, c, ir, ic, orow, oc, ovr, ovc = p
    with_val = "_val_" in op
    axis_rows = op.startswith("row")
    source = KERNEL.format(
        op=KINDS[op.replace("_val", "")][0], it=it, dt=PTOISA_DTYPES[name], r=r, c=c, ir=ir, ic=ic, orow=orow, oc=oc,
        ovr=ovr, ovc=ovc, dr=r if axis_rows else 1, dc=1 if axis_rows else c,
        val_arg=", val=val" if with_val else "", store_val=f"pto.tstore(V, val, stride={ovc})" if with_val else "")
    return make_kernels(source).k


def gen_data(op, p):
    """gen_golden_data_trowexpandop (seed 19): (input, golden, golden_val or None)."""
    it, name, r, c, ir, ic, orow, oc, ovr, ovc = p
    dt = np.dtype(PTOISA_DTYPES[name])
    rng = np.random.RandomState(19)
    x = rng.uniform(low=-20, high=20, size=[ir, ic]).astype(dt)
    _, arg, red = KINDS[op.replace("_val", "")]
    valid = x[:r, :c]
    golden = np.zeros((orow, oc)).astype(it)
    golden_val = np.zeros((ovr, ovc)).astype(dt) if "_val_" in op else None
    if op.startswith("row"):
        golden[:r, :1] = arg(valid, axis=1, keepdims=True)
        if golden_val is not None:
            golden_val[:r, :1] = red(valid, axis=1, keepdims=True)
    else:
        golden[:1, :c] = arg(valid, axis=0, keepdims=True)
        if golden_val is not None:
            golden_val[:1, :c] = red(valid, axis=0, keepdims=True)
    return x, golden, golden_val


def run(kernel, arrays, mode, check):
    """Launch kernel(*arrays) on one AI core, each array copied to a GM tensor of its dtype;
    returns the arrays read back after the launch."""
    tensors = []
    for a in arrays:
        t = pto.alloc_tensor(a.nbytes, getattr(pto, a.dtype.name))
        pto.memcpy_h2d(t, np.ascontiguousarray(a))
        tensors.append(t)
    pto.launch(kernel, grid=(1,), args=tuple(tensors), mode=mode, check=check)
    pto.sync()
    got = []
    for t, a in zip(tensors, arrays):
        g = np.empty_like(a)
        pto.memcpy_d2h(g, t)
        got.append(g)
    return got


@pytest.mark.parametrize("mode, check", RUNS, ids=[m for m, _ in RUNS])
@pytest.mark.parametrize("op, p", RUN, ids=[case_name(*c) for c in RUN])
def test_targreduceop(make_kernels, mode, check, op, p):
    """TARGREDUCEOPTest.<case>: the index (and value) outputs of the valid region, zeros
    elsewhere (InitDstDevice), ResultCmp(golden, out, 0.001) over the output tile's elements.
    An index or an extreme value is exact: out equals the golden."""
    x, golden, golden_val = gen_data(op, p)
    vals = golden_val if golden_val is not None else np.zeros(1, x.dtype)
    _, out, out_val = run(kernel_for(make_kernels, op, p), [x, np.zeros_like(golden), np.zeros_like(vals)],
                          mode, check)
    assert result_cmp(golden, out, 0.001)
    np.testing.assert_array_equal(out, golden)
    if golden_val is not None:
        assert result_cmp(golden_val, out_val, 0.001)
        np.testing.assert_array_equal(out_val, golden_val)


@pytest.mark.parametrize("op, p", REFUSED, ids=[case_name(*c) for c in REFUSED])
def test_targreduceop_a2a3_refuses_col_values_of_half_with_int32_indices(make_kernels, op, p):
    """TARGREDUCEOPTest.case_col_val_min / case_col_val_max _int32_half_...: on A2/A3 the
    value-and-index TCOLARGMAX / TCOLARGMIN of float16 data static_asserts int16 / uint16
    indices (TColReduceIdx.hpp lines 73-77), so the kernel does not build; pypto_sim refuses it
    at compile time."""
    kernel = kernel_for(make_kernels, op, p)
    tensors = (pto.alloc_tensor(16 * 256 * 2, pto.float16), pto.alloc_tensor(16 * 256 * 4, pto.int32),
               pto.alloc_tensor(16 * 256 * 2, pto.float16))
    with pytest.raises(pto.CompileError, match=r"of float16 data must be int16 or uint16, not int32"):
        kernel.program_for(tensors)
