"""TSCATTER (pto-isa TSCATTER.md, A2/A3 include/pto/npu/a2a3/TScatter.hpp): pto.tscatter(dst,
src, indices) and the mask forms pto.tscatter(dst, src, pattern, axis='row' / 'col'). dst is
zeroed first; tiny kernels with values derived by hand, the four ways a launch computes values
agreeing, an index outside dst stopping the launch with one error on every path, the asserts as
compile errors, and the costs from the machine table's entries."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.exec import reference
from pypto_sim.exec.lane import executor
from pypto_sim.isa.sort_modes import AXIS_COL, INDEXED, SCATTER

from engine_compare import assert_engines_agree, both_executors, dev_array, error_outcomes
from ptoisa_st import SCATTER_MASK

INDEXED_KERNEL = """
@pto.kernel
def k(S, I, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt}, loc=pto.Vec)
            dst = pto.alloc_tile({r}, {c}, pto.{dt}, loc=pto.Vec)
            idx = pto.alloc_tile({ir}, {c}, pto.{it}, loc=pto.Vec)
            pto.tload(src, S)
            pto.tload(idx, I)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tscatter(dst, src, idx)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


def _indexed(make_kernels, src, index, dt="float32", it="int32"):
    """(kernel, args, out) of INDEXED_KERNEL: src r x c, index ir x c."""
    (r, c), ir = src.shape, index.shape[0]
    mod = make_kernels(INDEXED_KERNEL.format(r=r, c=c, ir=ir, dt=dt, it=it))
    out = pto.alloc_tensor(src.nbytes, getattr(pto, dt))
    return mod.k, (dev_array(src, getattr(pto, dt)), dev_array(index.astype(it), getattr(pto, it)), out), out


def test_indices_name_dst_elements_and_the_last_write_wins(make_kernels):
    """src 2 x 8 float32, src[r, c] = 10 r + c + 1; one row of indices (the index tile's valid
    region is what is scattered: row 0 only) [9, 0, 15, 9, 1, 2, 3, 4]: dst is zeroed, then
    element 9 takes 1 and then 4 (the last write wins), 0 takes 2, 15 takes 3, 1..4 take 5..8;
    every other element stays 0. The four ways (timing and functional, numba and reference)
    write the same bytes."""
    src = (10 * np.arange(2)[:, None] + np.arange(8) + 1).astype(np.float32)
    kernel, args, out = _indexed(make_kernels, src, np.array([[9, 0, 15, 9, 1, 2, 3, 4]]))
    images = both_executors(kernel, (1, 1, 1), args)
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    got = first[out.alloc.byte_addr:out.alloc.byte_addr + 64].view(np.float32)
    want = np.zeros(16, np.float32)
    want[[0, 15, 9, 1, 2, 3, 4]] = [2, 3, 4, 5, 6, 7, 8]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("bad", [16, -1])
def test_an_index_outside_dst_stops_the_launch_on_every_path(make_kernels, bad):
    """dst has 2 x 8 = 16 elements; index (0, 5) is 16 or -1 (int32 indices): every path stops
    with one OutOfBoundsError naming it, and dst (line 14 of the file make_kernels writes)."""
    kernel, args, _out = _indexed(make_kernels, np.zeros((2, 8), np.float32),
                                  np.array([[0, 1, 2, 3, 4, bad, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]))
    got = error_outcomes(kernel, args)
    assert len(set(got.values())) == 1, got
    kind, text = next(iter(got.values()))
    assert kind is pto.OutOfBoundsError
    assert (f"TSCATTER_IDX at line 14 on AIV0 of block (0, 0, 0): index {bad} at (0, 5) of 'idx' names no "
            "element of 'dst', whose 16 elements are 0 .. 15") in text


@pytest.mark.parametrize("p, axis, dshape, placed", [
    ("P1010", "row", (2, 16), (slice(None), slice(1, None, 2))),
    ("P0100", "row", (2, 32), (slice(None), slice(2, None, 4))),
    ("P0101", "col", (4, 8), (slice(0, None, 2), slice(None))),
    ("P1000", "col", (8, 8), (slice(3, None, 4), slice(None))),
    ("P1111", "row", (2, 8), (slice(None), slice(None))),
])
def test_mask_patterns_spread_src_with_zeros_between(make_kernels, p, axis, dshape, placed):
    """src 2 x 8, src[r, c] = 8 r + c + 1. Along rows, element (i, j) goes to (i, period j +
    offset): P1010 columns 1, 3, .., P0100 columns 2, 6, ..; along columns, row i to row
    period i + offset: P0101 rows 0, 2, P1000 rows 3, 7; everything else is 0. P1111 is a copy
    (TSCATTER_IMPL's TMOV_IMPL)."""
    src = (8 * np.arange(2)[:, None] + np.arange(8) + 1).astype(np.float32)
    kernel = make_kernels(SCATTER_MASK.format(r=2, c=8, dr=dshape[0], dc=dshape[1], dt="float32", p=p, axis=axis)).k
    o = pto.alloc_tensor(4 * dshape[0] * dshape[1], pto.float32)
    pto.launch(kernel, grid=(1,), args=(dev_array(src, pto.float32), o), check="all")
    pto.sync()
    got = np.empty(dshape, np.float32)
    pto.memcpy_d2h(got, o)
    want = np.zeros(dshape, np.float32)
    want[placed] = src
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("tiles, call, message", [
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)\n"
     "i = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)", "pto.tscatter(d, s, i)", "must be the same"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\n"
     "i = pto.alloc_tile(1, 64, pto.int16, loc=pto.Vec)", "pto.tscatter(d, s, i)", "4-byte int or uint indices"),
    ("s = pto.alloc_tile(1, 64, pto.int8, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.int8, loc=pto.Vec)\n"
     "i = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)", "pto.tscatter(d, s, i)", "2-byte int or uint indices"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\n"
     "i = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)", "pto.tscatter(s, s, i)", "shares words with 's'"),
    ("s = pto.alloc_tile(1, 32, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\n"
     "i = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)", "pto.tscatter(d, s, i)", "reach past 's'"),
    ("s = pto.alloc_tile(2, 32, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(2, 32, pto.float32, loc=pto.Vec)",
     "pto.tscatter(d, s, 'P0101')", "validCol of dst must be 2 or 4 times"),
    ("s = pto.alloc_tile(2, 32, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(2, 32, pto.float32, loc=pto.Vec)",
     "pto.tscatter(d, s, 'P0101', axis='col')", "validRow of dst must be 2 or 4 times"),
    ("s = pto.alloc_tile(2, 8, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(2, 32, pto.float32, loc=pto.Vec, "
     "valid=(2, 16))", "pto.tscatter(d, s, 'P0101')", "must be a whole tile"),
    ("s = pto.alloc_tile(2, 8, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(2, 16, pto.float32, loc=pto.Vec)",
     "pto.tscatter(d, s, 'P0110')", "must be a mask pattern"),
    ("d = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)", "pto.tscatter(d, pto.tsubview(d, 0, 0, 1, 8), 'P1010')",
     "shares words with 'd', which A2/A3 zeroes"),
    ("s = pto.alloc_tile(2, 32, pto.int8, loc=pto.Vec)\nd = pto.alloc_tile(4, 32, pto.int8, loc=pto.Vec)",
     "pto.tscatter(d, s, 'P0101', axis='col')", "int8 along columns"),
])
def test_scatter_operand_errors_cite_the_asserts(make_kernels, tiles, call, message):
    """TSCATTER_IMPL's static_asserts (one data dtype; 4-byte indices for 4-byte data, 2-byte for
    2- and 1-byte data) and PTO_ASSERTs (the mask forms' valid regions), dst apart from what it
    reads (A2/A3 zeroes it first), src covering the indices' region, a whole dst for the mask
    forms, and no 1-byte data along columns (A2/A3's vcopy moves int16 words there): each a
    CompileError."""
    body = tiles + "\n" + call
    source = ("\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n"
              + "\n".join(" " * 8 + line for line in body.split("\n")) + "\n")
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(source).k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))


def test_the_costs_are_the_table_entries(make_kernels):
    """latency_tables/ascend910b.toml on an idle V pipe: head 11 + ceil(per_repeat x repeats of
    src's bytes + per_element x elements). TSCATTER_IDX of 2 x 64 float32 (2 repeats, 128
    elements): 11 + ceil(2 + 3 x 128) = 397; TSCATTER P0101 the same region: 397; TSCATTER_COL
    P0101 of it: 11 + ceil(3 x 2) = 17."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec)
            d = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec)
            i = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec)
            w = pto.alloc_tile(2, 128, pto.float32, loc=pto.Vec)
            t = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec)
            pto.tscatter(d, s, i)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tscatter(w, s, "P0101")
            pto.pipe_barrier(pto.PIPE_V)
            pto.tscatter(t, s, "P0101", axis="col")
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    got = [(e.inst, e.end - e.start) for e in prof.timeline if e.warp == 1 and e.inst.startswith("TSCATTER")]
    assert got == [("TSCATTER_IDX", 397), ("TSCATTER", 397), ("TSCATTER_COL", 17)]


def test_both_engines_agree_on_the_scatters(make_kernels):
    """The compiled event loop and the SimPy model: the same cycles, records and HBM bytes for
    test_indices_name_dst_elements_and_the_last_write_wins's kernel."""
    src = (10 * np.arange(2)[:, None] + np.arange(8) + 1).astype(np.float32)
    kernel, args, _out = _indexed(make_kernels, src, np.array([[9, 0, 15, 9, 1, 2, 3, 4]]))
    slow = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    assert slow["error"] is None and slow["cycles"] > 0


@pytest.mark.parametrize("mode, k, rows, cols, sp, dp", [
    (SCATTER | INDEXED, 9, 3, 7, 10, 64), (SCATTER | INDEXED, 0, 1, 16, 0, 40),
    (SCATTER, 1, 3, 5, 8, 12), (SCATTER, 6, 2, 4, 4, 16), (SCATTER | AXIS_COL, 2, 3, 5, 7, 9),
    (SCATTER | AXIS_COL, 3, 2, 8, 8, 8)])
def test_the_numba_kernel_matches_the_reference(mode, k, rows, cols, sp, dp):
    """tile_sort's SCATTER modes of both executors on the same random words and, for the index
    form, random indices (repeats among them: the last write wins in both), one made -1 or past
    dst in later trials (both return its position and write nothing): every word identical."""
    ex = executor()
    rng = np.random.default_rng(mode * 100 + cols)
    for trial in range(4):
        mem = rng.normal(size=4000).round(2)
        src, idx, dst = 100 + trial, 600, 1500
        want = -1
        if mode & INDEXED:
            ip = k or cols
            index = rng.integers(0, dp, (rows, cols))
            if trial >= 2:
                i, j = int(rng.integers(rows)), int(rng.integers(cols))
                index[i, j], want = (dp if trial == 2 else -1), i * cols + j
            for r in range(rows):
                mem[idx + r * ip:idx + r * ip + cols] = index[r]
        outs = []
        for impl in (ex, reference):
            m = mem.copy()
            outs.append((int(impl.tile_sort(m, dst, src, idx, -1, -1, -1, -1, 3 | mode, k, 0, 0, rows, cols, 0,
                                                    sp, dp)), m))
        assert outs[0][0] == outs[1][0] == want
        np.testing.assert_array_equal(outs[0][1], outs[1][1])


def test_special_values_move_bit_for_bit(make_kernels):
    """A scatter moves words: src (NaN, inf, -inf, -0.0, 0.0, 1.5, -2.5, 1e-45) to elements
    (7, 6, 5, 4, 3, 2, 1, 0) of an 8-element dst reverses it, the zeros' signs and the subnormal
    kept."""
    src = np.array([[np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.5, 1e-45]], np.float32)
    kernel, args, out = _indexed(make_kernels, src, np.arange(8)[::-1][None, :])
    pto.launch(kernel, grid=(1,), args=args, check="all")
    pto.sync()
    got = np.empty(8, np.float32)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got.view(np.int32), src[0, ::-1].view(np.int32))
