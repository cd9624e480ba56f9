"""TCOLSUM's binary-tree path (pto-isa's ``TCOLSUM(dst, src, tmp, isBinary=true)``, A2/A3's
include/pto/npu/a2a3/TColSum.hpp): the kernel ``tile_col_reduce_pairs`` of both executors.

BinarySum writes tmp row i = src row 2i + src row 2i+1 and, for an odd row count, adds the last
row into tmp row 0; it repeats in place on tmp while cnt = rows // 2, cnt // 2, ... exceeds 1;
dst is tmp's row 0; one row is copied. Each add is rounded to the dtype, so the order shows in
float16. pto.tcolsum(dst, src, tmp, True) reaches it (tests/test_ptoisa_st_tcolsum.py).
"""
from __future__ import annotations

import numpy as np
import pytest

from pypto_sim import dtypes
from pypto_sim.exec import reference
from pypto_sim.exec.lane import executor
from pypto_sim.isa import load_isa

OP = load_isa().by_name["TCOLSUM"].opcode
F16 = dtypes.float16.code
SENTINEL = -12345.0


@pytest.fixture(scope="module")
def ex():
    """The numba executor module (compiled once per process, cached on disk)."""
    return executor()


def run(impl, l1, dst, src, tmp, rows, cols, tpitch, dt):
    """Call impl's tile_col_reduce_pairs on a copy of l1 and return the copy."""
    out = l1.copy()
    with np.errstate(all="ignore"):
        impl.tile_col_reduce_pairs(OP, out, dst, src, tmp, rows, cols, tpitch, cols, dt)   # src dense
    return out


def test_binary_and_sequential_orders_differ_in_float16(ex):
    """One column of 5 rows [2048, 1, 1, 1, 1] in float16 (spacing 2 at 2048, ties to even).
    Binary: tmp0 = 2048 + 1 = 2049 -> 2048 (tie, even), tmp1 = 1 + 1 = 2; odd count: tmp0 =
    2048 + 1 -> 2048; cnt = 2: tmp0 = 2048 + 2 = 2050; dst = 2050, tmp row 1 stays 2.
    Sequential (tile_col_reduce): 2048 + 1 -> 2048 four times, dst = 2048."""
    l1 = np.full(64, SENTINEL)
    src, tmp, dst = 0, 16, 40                     # tmp rows 8 words apart
    l1[src:src + 5] = [2048.0, 1.0, 1.0, 1.0, 1.0]
    for impl in (ex, reference):
        out = run(impl, l1, dst, src, tmp, 5, 1, 8, F16)
        assert (out[dst], out[tmp], out[tmp + 8]) == (2050.0, 2050.0, 2.0)
        seq = l1.copy()
        impl.tile_col_reduce(OP, seq, dst, src, 5, 1, 0.0, F16)
        assert seq[dst] == 2048.0


def test_one_row_copies_and_leaves_tmp_alone(ex):
    """rows == 1: dst = src row 0 by pto_copy_ubuf_to_ubuf of lenBurst = ceil(3 * 2 / 32) = 1
    whole 32-byte block (TColSum.hpp l.61, 63-64): 16 float16 words, the 13 past the 3 valid
    columns too; tmp untouched (still the sentinel), dst's words past the block too."""
    l1 = np.full(64, SENTINEL)
    l1[0:16] = np.arange(16) + 0.5
    for impl in (ex, reference):
        out = run(impl, l1, 32, 0, 16, 1, 3, 4, F16)
        assert list(out[32:48]) == list(np.arange(16) + 0.5)
        assert out[16] == SENTINEL and out[48] == SENTINEL


def test_the_last_copy_moves_tmp_row_0_in_whole_blocks(ex):
    """Two float32 rows of 3 columns: tmp row 0 = src row 0 + row 1 over the 3 columns (a vadd
    in count mode), then dst = tmp row 0 in ceil(3 * 4 / 32) = 1 block = 8 words (TColSum.hpp
    l.77): dst's words 3..7 are tmp's, which no vadd wrote (the sentinel)."""
    f32 = dtypes.float32.code
    l1 = np.full(64, -1.0)
    l1[0:3], l1[3:6] = [1.0, 2.0, 3.0], [10.0, 20.0, 30.0]
    l1[16:24] = SENTINEL
    for impl in (ex, reference):
        out = l1.copy()
        impl.tile_col_reduce_pairs(OP, out, 40, 0, 16, 2, 3, 8, 3, f32)
        assert list(out[40:48]) == [11.0, 22.0, 33.0] + [SENTINEL] * 5 and out[48] == -1.0


@pytest.mark.parametrize("rows", [2, 3, 4, 5, 6, 7, 8, 9, 16, 64])
def test_both_executors_agree_word_for_word(ex, rows):
    """Both executors on float16 columns of 1e4-scale values among small ones (the sum's order
    matters) and on float32 / int16 / int32 random values: every L1 word identical, words
    outside dst's whole 32-byte blocks and tmp's written rows keep the sentinel."""
    rng = np.random.default_rng(rows)
    cols, tpitch = 5, 7
    src, tmp, dst = 0, 512, 1000
    for dt_name in ("float16", "float32", "int16", "int32"):
        dt = dtypes.BY_NAME[dt_name].code
        l1 = np.full(1100, SENTINEL)
        big = rng.integers(0, 2, rows * cols) * 1e4
        vals = big + rng.integers(-3, 4, rows * cols) * (0.5 if "float" in dt_name else 1)
        if dt_name == "float16":
            vals = vals.astype(np.float16).astype(np.float64)
        l1[src:src + rows * cols] = vals
        a, b = run(ex, l1, dst, src, tmp, rows, cols, tpitch, dt), run(reference, l1, dst, src, tmp, rows, cols,
                                                                        tpitch, dt)
        np.testing.assert_array_equal(a, b, err_msg=f"{dt_name} {rows} rows")
        touched = np.zeros(1100, bool)
        touched[src:src + rows * cols] = True
        per = 32 // dtypes.BY_NAME[dt_name].itemsize
        touched[dst:dst + -(-cols // per) * per] = True        # whole 32-byte blocks of tmp's words
        for i in range(max(1, rows // 2)):
            touched[tmp + i * tpitch:tmp + i * tpitch + cols] = True
        assert (a[~touched] == SENTINEL).all()
