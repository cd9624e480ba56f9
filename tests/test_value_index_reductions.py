"""The value-and-index forms of the index reductions: pto-isa's TROWARGMAX(dstVal, dstIdx, src, tmp)
and TCOLARGMAX(dstVal, dstIdx, src, tmp) (A2/A3: include/pto/npu/a2a3/TRowReduceIdxOps.hpp,
TColReduceIdx.hpp), here ``pto.trowargmax(idx, src, val=v)``: the index of each row's (column's)
kept element into idx, as the index form writes it, and the element itself into v. v is written
with idx, when the operation completes (isa/43_arg_reduce.toml)."""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error
from engine_compare import assert_engines_agree, both_executors, dev_array, tensor_values

# src 8 x 4 (float32), worked by hand: row r holds r - 2, 7 - r, 5 and r % 3 (ties where they meet)
SRC = np.array([[r - 2, 7 - r, 5, r % 3] for r in range(8)], np.float32)
# row maxima: r=0 (-2, 7, 5, 0) -> 7 at 1; r=1 (-1, 6, 5, 1) -> 6 at 1; r=2 (0, 5, 5, 2) -> 5 at 1
# (the first of equals); r=3 (1, 4, 5, 0) -> 5 at 2; r=4 (2, 3, 5, 1) -> 5 at 2; r=5 (3, 2, 5, 2)
# -> 5 at 2; r=6 (4, 1, 5, 0) -> 5 at 2; r=7 (5, 0, 5, 1) -> 5 at 0 (5 first)
ROW_MAX = ([1, 1, 1, 2, 2, 2, 2, 0], [7, 6, 5, 5, 5, 5, 5, 5])
# row minima: r=0 -2 at 0; r=1 -1 at 0; r=2 0 at 0; r=3 0 at 3; r=4 1 at 3; r=5 2 at 1 (2 = 2 at 3
# later); r=6 0 at 3; r=7 0 at 1
ROW_MIN = ([0, 0, 0, 3, 3, 1, 3, 1], [-2, -1, 0, 0, 1, 2, 0, 0])
# column maxima over the 8 rows: column 0 (-2..5) 5 at 7; column 1 (7..0) 7 at 0; column 2 all 5:
# 5 at 0; column 3 (0, 1, 2, 0, 1, 2, 0, 1) 2 at 2
COL_MAX = ([7, 0, 0, 2], [5, 7, 5, 2])

ROWS = '''
@pto.kernel(sync="manual")
def k(S, I, V):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(8, 8, pto.float32, valid=(8, 4))
            idx = pto.alloc_tile(8, 1, pto.int32, layout=pto.ColMajor)
            val = pto.alloc_tile(8, 1, pto.float32, layout=pto.ColMajor)
            pto.texpands(val, -9.0)
            pto.tload(src, S, stride=4)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.{op}(idx, src, val=val)
            {flag}
            pto.tstore(I, idx)
            pto.tstore(V, val)
'''
FLAG = """pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)"""

COLS = '''
@pto.kernel
def k(S, I, V):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(8, 8, pto.float32, valid=(8, 4))
            idx = pto.alloc_tile(1, 8, pto.uint32, valid=(1, 4))
            val = pto.alloc_tile(1, 8, pto.float32, valid=(1, 4))
            pto.tload(src, S, stride=4)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tcolargmax(idx, src, val=val)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(I, idx)
            pto.tstore(V, val)
'''


def _tensors(n_out, idx_dtype):
    return (dev_array(SRC, pto.float32), pto.alloc_tensor(4 * n_out, idx_dtype),
            pto.alloc_tensor(4 * n_out, pto.float32))


@pytest.mark.parametrize("op, want", [("trowargmax", ROW_MAX), ("trowargmin", ROW_MIN)])
def test_a_row_reduction_writes_each_rows_index_and_element(make_kernels, op, want):
    """ROW_MAX / ROW_MIN (worked above) in both executors and both modes; the sanitizers find
    nothing, and the two timing engines agree bit for bit."""
    mod = make_kernels(ROWS.format(op=op, flag=FLAG))
    args = _tensors(8, pto.int32)
    for key, image in both_executors(mod.k, (1,), args).items():
        np.testing.assert_array_equal(tensor_values(image, args[1]), want[0], err_msg=str(key))
        np.testing.assert_array_equal(tensor_values(image, args[2]), want[1], err_msg=str(key))
    assert_engines_agree(mod.k, args, (1, 1, 1), (32, 1, 1))
    pto.launch(mod.k, grid=(1,), args=args, check="all")
    pto.sync()


def test_a_column_reduction_writes_each_columns_index_and_element(make_kernels):
    """COL_MAX (worked above) into a uint32 index row and a float32 value row."""
    mod = make_kernels(COLS)
    args = _tensors(4, pto.uint32)
    for key, image in both_executors(mod.k, (1,), args).items():
        np.testing.assert_array_equal(tensor_values(image, args[1]), COL_MAX[0], err_msg=str(key))
        np.testing.assert_array_equal(tensor_values(image, args[2]), COL_MAX[1], err_msg=str(key))


STALE = '''
@pto.kernel(sync="manual")
def k(S, W, V):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(8, 8, pto.float32, valid=(8, 4))
            idx = pto.alloc_tile(8, 1, pto.int32, layout=pto.ColMajor)
            val = pto.alloc_tile(8, 1, pto.float32, layout=pto.ColMajor)
            pto.tload(val, W, layout=pto.DN)
            pto.tload(src, S, stride=4)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.trowargmax(idx, src, val=val)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(V, val, layout=pto.DN)
'''


def test_the_values_are_written_when_the_operation_completes(make_kernels):
    """The store of val waits for MTE2's loads only (manual sync: nothing but flags orders two
    pipes), so it starts when the reduction does, which the same loads released, and reads what
    val held before the reduction completes: the -9s loaded into it, as the device's MTE3 would
    (a missing flag gives stale data). check="race" names the write of val and the store's read."""
    mod = make_kernels(STALE)
    args = (dev_array(SRC, pto.float32), dev_array(np.full(8, -9.0, np.float32), pto.float32),
            pto.alloc_tensor(32, pto.float32))
    pto.launch(mod.k, grid=(1,), args=args)
    pto.sync()
    got = np.empty(8, np.float32)
    pto.memcpy_d2h(got, args[2])
    np.testing.assert_array_equal(got, np.full(8, -9.0, np.float32))
    with pytest.raises(pto.RaceError, match=r"TROWARGMAX.*TSTORE|TSTORE.*TROWARGMAX"):
        pto.launch(mod.k, grid=(1,), args=args, check="race")
        pto.sync()


@pytest.mark.parametrize("body, message", [
    ("""s = pto.alloc_tile(8, 8, pto.float32)
i = pto.alloc_tile(8, 1, pto.int32, layout=pto.ColMajor)
v = pto.alloc_tile(16, 1, pto.float16, layout=pto.ColMajor)
pto.trowargmax(i, s, val=v)""", r"value tile 'v' holds float16 but 's' holds float32.*DstVal data type"),
    ("""s = pto.alloc_tile(8, 8, pto.float32)
i = pto.alloc_tile(16, 1, pto.int16, layout=pto.ColMajor)
v = pto.alloc_tile(8, 1, pto.float32, layout=pto.ColMajor)
pto.trowargmax(i, s, val=v)""", r"index tile 'i' of float32 data must be int32 or uint32, not int16"),
    ("""s = pto.alloc_tile(16, 16, pto.float16)
i = pto.alloc_tile(1, 16, pto.uint32)
v = pto.alloc_tile(1, 16, pto.float16)
pto.tcolargmax(i, s, val=v)""", r"index tile 'i' of float16 data must be int16 or uint16, not uint32"),
    ("""s = pto.alloc_tile(8, 8, pto.float32)
i = pto.alloc_tile(8, 1, pto.int32, layout=pto.ColMajor)
v = pto.alloc_tile(1, 8, pto.float32)
pto.trowargmax(i, s, val=v)""", r"'v' must be a column of 8"),
])
def test_a_value_tile_the_device_refuses_is_a_compile_error(make_kernels, body, message):
    """TRowReduceIdxCheck / TColReduceIdxCheck with a value output: val of the data's dtype, a
    value where the index goes; 4-byte data indexed by int32 / uint32, 2-byte column data by
    int16 / uint16 (2-byte row data by any of the four)."""
    compile_error(make_kernels, body, message)


@pytest.mark.parametrize("body, message", [
    ("""s = pto.alloc_tile(8, 8, pto.int32)
i = pto.alloc_tile(8, 8, pto.int32)
v = pto.treshape(i, 8, 8)
pto.trowargmax(i, s, val=v)""", r"val 'v' and dst 'i' share words"),
    ("""s = pto.alloc_tile(8, 8, pto.float32)
i = pto.alloc_tile(4, 8, pto.int32)
pto.tcolargmax(i, s)""", r"'i' has 4 valid rows; the indices take one row"),
    ("""s = pto.alloc_tile(8, 8, pto.float32)
i = pto.alloc_tile(1, 8, pto.int32)
v = pto.alloc_tile(4, 8, pto.float32)
pto.tcolargmax(i, s, val=v)""", r"'v' has 4 valid rows; the values take one row"),
])
def test_the_index_and_value_tiles_are_apart_and_one_row_for_columns(make_kernels, body, message):
    """Values written over indices lose them (a view of dst as val is refused, as dst itself is);
    TColReduceIdxCheck asserts one valid row for the index and the value outputs of a column
    reduction ("output idx validRow must be 1", "output value validRow must be 1")."""
    compile_error(make_kernels, body, message)
