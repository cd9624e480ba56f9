"""The column reductions' order of reads and writes on A2/A3 (pto-isa include/pto/npu/a2a3 at
the mirror's HEAD), worked by hand and run on both executors in timing and functional mode.

ColReduceInstr (TColReduceOps.hpp l.53-57): ``lenBurst = (validCol * sizeof(T) + 31) / 32;
pto_copy_ubuf_to_ubuf(dst, src, 1, lenBurst, 0, 0)`` - src row 0 into dst in whole 32-byte
blocks - then per row i >= 1 ``ReduceInstr(dst, dst, src + i * dupSrcStride, ...)`` and a
pipe_barrier (l.27-29, 40-43; TCOLMAX / TCOLMIN / TCOLPROD: vmax / vmin / vmul). TCOLSUM is the
same (TColSum.hpp l.61, 80-82; l.147-152 for TCOLSUM(dst, src); SequentialSum l.41-44, vadd);
its pairwise form copies tmp row 0 in whole blocks (l.77), or src row 0 for one row (l.63-64).
"""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error
from engine_compare import both_executors, dev_array, tensor_values

# S: a 4 x 8 float32 tile, row r = 10 r + c; columns 0..4 valid
S = np.array([[10 * r + c for c in range(8)] for r in range(4)], np.float32)
PAD = '''
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            full = pto.alloc_tile(4, 8, pto.float32)
            out = pto.alloc_tile(1, 8, pto.float32)
            tmp = pto.alloc_tile(2, 8, pto.float32)
            pto.tload(full, S)
            pto.texpands(out, -1.0)
            pto.texpands(tmp, 7.0)
            src = pto.tsubview(full, 0, 0, 4, 8, valid=(4, 5))
            dst = pto.tsubview(out, 0, 0, 1, 8, valid=(1, 5))
            pto.{call}
            pto.tstore(O, out)
'''
# columns 0..4 of S: c, 10 + c, 20 + c, 30 + c
_C = np.arange(5, dtype=np.float32)
PADDED = {
    "tcolsum(dst, src)": (4 * _C + 60, S[0, 5:]),
    "tcolmax(dst, src)": (_C + 30, S[0, 5:]),
    "tcolmin(dst, src)": (_C, S[0, 5:]),
    "tcolprod(dst, src)": (_C * (10 + _C) * (20 + _C) * (30 + _C), S[0, 5:]),
    # pairwise: tmp row 0 = (r0 + r1) + (r2 + r3) over the 5 columns; its words 5..7 keep 7
    "tcolsum(dst, src, tmp, True)": (4 * _C + 60, np.full(3, 7.0, np.float32)),
}


def _run(kernel, host, words):
    """The output row of kernel(S, O) on all four ways (both_executors), checked identical."""
    args = [dev_array(host, pto.float32), dev_array(np.zeros(words, np.float32), pto.float32)]
    images = both_executors(kernel, (1,), args)
    outs = [tensor_values(image, args[1]) for image in images.values()]
    for key, got in zip(images, outs):
        np.testing.assert_array_equal(got, outs[0], err_msg=str(key))
    return outs[0]


@pytest.mark.parametrize("call", list(PADDED))
def test_the_copy_of_row_0_fills_dsts_last_32_byte_block(make_kernels, call):
    """validCol 5 of float32: lenBurst = (5 * 4 + 31) / 32 = 1 block = 8 words, so dst's words 5,
    6, 7 (prefilled -1) get src row 0's 5, 6, 7 (TColReduceOps.hpp l.54-56; TColSum.hpp l.147-149),
    or, pairwise, tmp row 0's (TColSum.hpp l.77), which no vadd wrote (count mode over 5 words)."""
    got = _run(make_kernels(PAD.format(call=call)).k, S, 8)
    valid, padding = PADDED[call]
    np.testing.assert_array_equal(got[:5], valid)
    np.testing.assert_array_equal(got[5:], padding)


ALIAS = '''
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(4, 8, pto.float32)
            pto.tload(a, S)
            dst = pto.tsubview(a, {k}, 0, 1, 8)
            pto.{op}(dst, a{extra})
            pto.tstore(O, a)
'''
# one value a row, the same in every column: 1, 100, 10, 1000
ROWS = np.array([1, 100, 10, 1000], np.float32)[:, None] * np.ones((1, 8), np.float32)


@pytest.mark.parametrize("op, k, want", [
    # copy: dst = row 0 = 1; the fold reads row k when it comes to it, which is dst itself
    ("tcolsum", 0, 1111),          # 1 + 100 + 10 + 1000
    ("tcolsum", 1, 1012),          # 1; row 1 is dst: 1 + 1 = 2; + 10 = 12; + 1000 = 1012
    ("tcolsum", 3, 222),           # 1; + 100 = 101; + 10 = 111; row 3 is dst: 111 + 111 = 222
    ("tcolmax", 3, 100),           # 1; 100; 100; max(100, 100) = 100
    ("tcolmax", 1, 1000),          # 1; max(1, 1) = 1; 10; 1000
    ("tcolmin", 2, 1),             # 1; 1; min(1, 1) = 1; 1
    ("tcolprod", 2, 10 ** 7),      # 1; 100; row 2 is dst: 100 * 100 = 10^4; * 1000 = 10^7
])
def test_a_dst_that_is_a_later_row_of_src_reads_the_partial_result(make_kernels, op, k, want):
    """dst = pto.tsubview(a, k, 0, 1, 8) of src a: A2/A3 copies row 0 into dst (TColReduceOps.hpp
    l.56, TColSum.hpp l.149), then row by row op(dst, dst, a row i) with a pipe_barrier after
    each (TColReduceOps.hpp l.27-29, TColSum.hpp l.41-44), so at i == k the row read is dst's
    partial result. The other rows of a keep their values."""
    got = _run(make_kernels(ALIAS.format(k=k, op=op, extra="")).k, ROWS, 32).reshape(4, 8)
    expect = ROWS.copy()
    expect[k] = want
    np.testing.assert_array_equal(got, expect)


def test_the_pairwise_sum_reads_every_row_of_src_before_it_writes_dst(make_kernels):
    """TCOLSUM(dst, src, tmp, true) with dst row 1 of src: BinarySum reads rows 0..3 into tmp
    (TColSum.hpp l.23-25) and dst is written only by the copy of tmp row 0 (l.77):
    (1 + 100) + (10 + 1000) = 1111 into row 1."""
    src = ALIAS.format(k=1, op="tcolsum", extra=", tmp, True").replace(
        "pto.tload(a, S)", "tmp = pto.alloc_tile(2, 8, pto.float32)\n            pto.tload(a, S)")
    got = _run(make_kernels(src).k, ROWS, 32).reshape(4, 8)
    expect = ROWS.copy()
    expect[1] = 1111
    np.testing.assert_array_equal(got, expect)


def test_tmp_may_be_src_itself(make_kernels):
    """tmp = src: tmp row i = rows 2i + 2i + 1 never overwrites a row a later vadd reads (the
    header runs the same pattern on tmp in place, TColSum.hpp l.73): rows 0, 1 become 101 and
    1010, then row 0 = 1111, copied to dst."""
    src = '''
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(4, 8, pto.float32)
            dst = pto.alloc_tile(1, 8, pto.float32)
            pto.tload(a, S)
            pto.tcolsum(dst, a, a, True)
            pto.tstore(O, dst)
'''
    np.testing.assert_array_equal(_run(make_kernels(src).k, ROWS, 8), np.full(8, 1111, np.float32))


@pytest.mark.parametrize("body, message", [
    # dst = a's words 8..23 (row 0 from column 8), src a's 2 x 16 valid region: the copy of row 0
    # (16 words) from word 0 into word 8 overlaps itself
    ("a = pto.alloc_tile(2, 32, pto.float32)\nsrc = pto.tsubview(a, 0, 0, 2, 32, valid=(2, 16))\n"
     "dst = pto.tsubview(a, 0, 8, 1, 16)\npto.tcolsum(dst, src)",
     r"dst 'dst' starts \+8 words from row 0 of 'src' .*TColSum.hpp l.63-64, 80, 149.* not established"),
    # dst = row 1 from column 8: the vmax of row 1 (16 columns) reads words 8 before dst's own
    ("a = pto.alloc_tile(2, 32, pto.float32)\nsrc = pto.tsubview(a, 0, 0, 2, 32, valid=(2, 16))\n"
     "dst = pto.tsubview(a, 1, 8, 1, 16)\npto.tcolmax(dst, src)",
     r"dst 'dst' overlaps row 1 of 'src' \+8 words off; .*vmax\(dst, dst, row 1\) over 16 columns "
     r"\(TColReduceOps.hpp l.27-29, 40-43\)"),
    # tmp = a's rows 1..4: the first vadd writes row 1 of a (tmp row 0), the second writes row 2 while
    # rows 2i, 2i + 1 of a are still to be read, with no pipe_barrier between them
    ("a = pto.alloc_tile(8, 8, pto.float32)\nd = pto.alloc_tile(1, 8, pto.float32)\n"
     "t = pto.tsubview(a, 1, 0, 4, 8)\npto.tcolsum(d, a, t, True)",
     r"tmp 't' shares words with 'a' but is not that tile itself; .*TColSum.hpp l.23-25"),
    ("t = pto.alloc_tile(2, 32, pto.float32)\na = pto.alloc_tile(4, 16, pto.float32)\n"
     "d = pto.tsubview(t, 0, 8, 1, 16)\npto.tcolsum(d, a, t, True)",
     r"dst 'd' starts \+8 words from row 0 of tmp 't' .*TColSum.hpp l.77"),
])
def test_overlaps_no_header_line_orders_are_refused(make_kernels, body, message):
    """One instruction's own reads and writes over shifted overlapping words (a copy burst, a
    multi-block vmax) or BinarySum's unbarriered row vadds into a tmp that overlaps src: their
    order is not established, so pypto_sim refuses the form at the call."""
    compile_error(make_kernels, body, message)
