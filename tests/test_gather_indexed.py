"""TGATHER's index-tile form, pto.tgather(dst, src, indices, tmp) (pto-isa TGATHER.md, A2/A3
include/pto/npu/a2a3/TGather.hpp lines 17-104): dst's valid (i, j) is src's element indices(i, j),
src's elements counted row-major from its first; tiny kernels with values derived by hand, the
four ways a launch computes values agreeing, an index outside src stopping the launch with the
same error on every path, A2/A3's asserts as compile errors, what the race check sees of tmp,
and the cost from the machine table's entry."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.exec import reference
from pypto_sim.exec.lane import executor

from engine_compare import both_executors, dev_array, error_outcomes

GATHER = """
@pto.kernel
def k(S, I, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({sr}, {sc}, pto.{dt}, loc=pto.Vec)
            idx = pto.alloc_tile({dr}, {dc}, pto.int32, loc=pto.Vec, valid=({vr}, {vc}))
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt}, loc=pto.Vec, valid=({vr}, {vc}))
            tmp = pto.alloc_tile({dr}, {dc}, pto.int32, loc=pto.Vec, valid=({vr}, {vc}))
            pto.tload(src, S)
            pto.tload(idx, I, stride={dc})
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tgather(dst, src, idx, tmp)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst, stride={vc})
"""


def _launch(make_kernels, dt, src, index, rows, cols, valid=None):
    """The gather kernel over a rows x cols dst (valid: its valid region, default all) from a
    whole src tile holding `src` (2-D), `index` the indices' rows (cols wide); returns (kernel,
    args, out tensor)."""
    vr, vc = valid or (rows, cols)
    mod = make_kernels(GATHER.format(sr=src.shape[0], sc=src.shape[1], dt=dt, dr=rows, dc=cols, vr=vr, vc=vc))
    out = pto.alloc_tensor(vr * vc * src.dtype.itemsize, getattr(pto, dt))
    return mod.k, (dev_array(src, getattr(pto, dt)), dev_array(index.astype(np.int32), pto.int32), out), out


def _values(image, out, n, dtype):
    return image[out.alloc.byte_addr:out.alloc.byte_addr + n * np.dtype(dtype).itemsize].view(dtype)


def test_indices_name_src_elements_counted_row_major_from_its_first(make_kernels):
    """src is 2 x 8 float32 with src[r, c] = 10 r + c, so element e is 10 (e // 8) + e % 8.
    Indices [[15, 0, 7, 8], [9, 9, 1, 14]] give [[17, 0, 7, 10], [11, 11, 1, 16]]: an index
    may repeat and may cross src's rows (dst and the indices: 2 x 8 tiles of valid (2, 4), a
    row being 32 bytes at least). The timing and functional modes, each with the numba
    and the reference executor, write the same bytes."""
    src = (10 * np.arange(2)[:, None] + np.arange(8)).astype(np.float32)
    index = np.zeros((2, 8))
    index[:, :4] = [[15, 0, 7, 8], [9, 9, 1, 14]]
    kernel, args, out = _launch(make_kernels, "float32", src, index, 2, 8, valid=(2, 4))
    images = both_executors(kernel, (1, 1, 1), args)
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    np.testing.assert_array_equal(_values(first, out, 8, np.float32), [17, 0, 7, 10, 11, 11, 1, 16])


def test_half_data_gather_over_dsts_valid_region_only(make_kernels):
    """float16 src 1 x 32 with src[j] = j / 4; dst and the indices 2 x 16 tiles with valid
    (2, 5): row 0's indices 31, 30, 29, 28, 27 and row 1's 0, 4, 8, 12, 16 (the columns past 5
    hold 99, which would name no element, and are not read) give 7.75, 7.5, 7.25, 7.0, 6.75
    and 0, 1, 2, 3, 4 (quarters are exact in float16)."""
    src = (np.arange(32) / 4).astype(np.float16)[None, :]
    index = np.full((2, 16), 99)
    index[0, :5], index[1, :5] = [31, 30, 29, 28, 27], [0, 4, 8, 12, 16]
    kernel, args, out = _launch(make_kernels, "float16", src, index, 2, 16, valid=(2, 5))
    pto.launch(kernel, grid=(1,), args=args, check="all")
    pto.sync()
    got = np.empty(10, np.float16)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got, [7.75, 7.5, 7.25, 7.0, 6.75, 0, 1, 2, 3, 4])


@pytest.mark.parametrize("bad", [16, -1])
def test_an_index_outside_src_stops_the_launch_on_every_path(make_kernels, bad):
    """src has 2 x 8 = 16 elements; index (1, 2) is 16 (one past the last) or -1. pto-isa
    leaves such an index target-defined (A2/A3's vgather reads whatever UB holds there), so
    every path stops with one OutOfBoundsError naming the index, its place, the tiles and
    the elements src has (line 15: the file make_kernels writes, an import line then GATHER)."""
    src = np.zeros((2, 8), np.float32)
    index = np.array([[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, bad, 7, 0, 0, 0, 0]])
    kernel, args, _out = _launch(make_kernels, "float32", src, index, 2, 8)
    got = error_outcomes(kernel, args)
    assert len(set(got.values())) == 1, got
    kind, text = next(iter(got.values()))
    assert kind is pto.OutOfBoundsError
    assert (f"TGATHER_IDX at line 15 on AIV0 of block (0, 0, 0): index {bad} at (1, 2) of 'idx' names no "
            "element of 'src', whose 16 elements are 0 .. 15") in text
    assert "keep every index in [0, 16)" in text


@pytest.mark.parametrize("tiles, call, message", [
    ("s = pto.alloc_tile(1, 64, pto.int8, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.int8, loc=pto.Vec)",
     "pto.tgather(d, s, i, t)", "expect b16/b32"),
    ("s = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)",
     "pto.tgather(d, s, i, t)", "expect same datatype for src and dst"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\n"
     "h = pto.alloc_tile(1, 64, pto.int16, loc=pto.Vec)", "pto.tgather(d, s, h, t)", "expect b32"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\n"
     "u = pto.alloc_tile(1, 64, pto.uint32, loc=pto.Vec)", "pto.tgather(d, s, i, u)",
     "expect same datatype for tmp buffer and indice"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\n"
     "u = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec, valid=(1, 32))", "pto.tgather(d, s, i, u)",
     "must have the indices' valid region"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)",
     "pto.tgather(d, s, i)", "the index form takes a scratch tile"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 32, pto.float32, loc=pto.Vec)",
     "pto.tgather(d, s, i, t)", "reads the indices at dst's row pitch"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)",
     "pto.tgather(d, s, i, t, axis='col')", "axis belongs to the mask-pattern form"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 32, pto.float32, loc=pto.Vec)",
     "pto.tgather(d, s, 'P0101', t)", "the mask-pattern form takes none"),
    ("s = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec)\nj = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec)\n"
     "u = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec)", "pto.tgather(s, s, j, u)", "'s' shares words with 's'"),
    ("s = pto.alloc_tile(2, 64, pto.float16, loc=pto.Vec)\nd = pto.alloc_tile(2, 64, pto.float16, loc=pto.Vec)\n"
     "j = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec)", "pto.tgather(d, s, j, j)", "'j' shares words with 'j'"),
    ("s = pto.alloc_tile(2, 64, pto.float16, loc=pto.Vec)\n"
     "d = pto.alloc_tile(2, 64, pto.float16, loc=pto.Vec, valid=(2, 8))\n"
     "j = pto.alloc_tile(2, 64, pto.int32, loc=pto.Vec, valid=(2, 8))\n"
     "u = pto.alloc_tile(2, 8, pto.int32, loc=pto.Vec)",
     "pto.tgather(d, s, j, u)", "shorter than the 2 rows of 8 byte offsets"),
])
def test_the_index_forms_operand_errors_cite_a2a3s_asserts(make_kernels, tiles, call, message):
    """TGather.hpp's static_asserts and PTO_ASSERTs (b16 / b32 data of one dtype, b32 indices,
    tmp of the indices' dtype and valid region), tmp long enough for the byte offsets A2/A3
    writes to it at dst's row pitch, dst and the offsets' tile apart from what later rows read
    (A2/A3 writes them row by row: a dst that is src, half data's tmp that is the indices), and
    the operands of the two forms kept apart: each a CompileError. (i and t: 1 x 64 int32 tiles. In the last case A2/A3 writes half data's
    offsets to tmp at dst's row pitch 64: row 1's 8 land at words 64..71 of a 2 x 8 tmp.)"""
    body = ("i = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)\nt = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)\n"
            + tiles + "\n" + call)
    source = ("\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n"
              + "\n".join(" " * 8 + line for line in body.split("\n")) + "\n")
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(source).k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))


SCRATCH = """
@pto.kernel(sync="manual")
def k(S, I, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(1, 64, pto.{dt}, loc=pto.Vec)
            idx = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)
            dst = pto.alloc_tile(1, 64, pto.{dt}, loc=pto.Vec)
            tmp = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)
            pto.tload(src, S)
            pto.tload(idx, I)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tgather(dst, src, idx, tmp)
            pto.tstore(O, tmp)
"""


@pytest.mark.parametrize("dt, races", [("float16", True), ("float32", False)])
def test_the_race_check_sees_tmp_written_where_a2a3_writes_it(make_kernels, dt, races):
    """A2/A3 puts the byte offsets in tmp for 2-byte data and in dst for 4-byte data, leaving
    tmp alone (TGather.hpp's two vmuls). In a sync="manual" kernel a TSTORE of tmp on MTE3 with
    no flag from V after the gather races with it for float16 and does not for float32."""
    kernel = make_kernels(SCRATCH.format(dt=dt)).k
    src = dev_array(np.zeros(64, getattr(np, dt)), getattr(pto, dt))
    args = (src, dev_array(np.arange(64, dtype=np.int32), pto.int32), pto.alloc_tensor(256, pto.int32))
    if races:
        with pytest.raises(pto.RaceError, match="TGATHER_IDX"):
            pto.launch(kernel, grid=(1,), args=args, check="race")
            pto.sync()
    else:
        pto.launch(kernel, grid=(1,), args=args, check="race")
        pto.sync()


def test_the_cost_is_the_table_entrys_per_row_and_per_repeat(make_kernels):
    """latency_tables/ascend910b.toml TGATHER_IDX on an idle V pipe: head 11 + ceil(per_repeat 3 x
    repeats + per_row 43.6 x rows), tail 0. float32 4 x 64 (1024 bytes, 4 repeats of 256): 11 +
    ceil(12 + 174.4) = 198; float16 2 x 128 (512 bytes, 2 repeats): 11 + ceil(6 + 87.2) = 105."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec)
            i = pto.alloc_tile(4, 64, pto.int32, loc=pto.Vec)
            t = pto.alloc_tile(4, 64, pto.int32, loc=pto.Vec)
            d = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec)
            sh = pto.alloc_tile(2, 128, pto.float16, loc=pto.Vec)
            ih = pto.alloc_tile(2, 128, pto.int32, loc=pto.Vec)
            th = pto.alloc_tile(2, 128, pto.int32, loc=pto.Vec)
            dh = pto.alloc_tile(2, 128, pto.float16, loc=pto.Vec)
            pto.tgather(d, s, i, t)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tgather(dh, sh, ih, th)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    got = [e.end - e.start for e in prof.timeline if e.warp == 1 and e.inst == "TGATHER_IDX"]
    assert got == [198, 105]


@pytest.mark.parametrize("rows, cols, pitch, bound", [(1, 16, 16, 64), (3, 5, 8, 40), (4, 64, 64, 256),
                                                      (2, 7, 0, 9)])
def test_the_numba_kernel_matches_the_reference(rows, cols, pitch, bound):
    """tile_sort's INDEXED mode (TGATHER_IDX) of both executors on the same random words, the
    tiles at random places, dst and the indices rows `pitch` words apart (0: cols): every word
    of memory comes out identical, and both return -1; with one index made `bound` (one past
    src) or -1, both return its position and write nothing."""
    from pypto_sim.isa.sort_modes import INDEXED
    ex = executor()
    rng = np.random.default_rng(rows * 100 + cols)
    for trial in range(4):
        mem = rng.normal(size=6000).round(2)
        src, idx, dst = 100 + trial, 1000 + 3 * trial, 3000
        p = pitch or cols
        index = rng.integers(0, bound, (rows, cols))
        bad = None
        if trial >= 2:
            bad = (int(rng.integers(rows)), int(rng.integers(cols)))
            index[bad] = bound if trial == 2 else -1
        for r in range(rows):
            mem[idx + r * p:idx + r * p + cols] = index[r]
        outs = []
        for impl in (ex, reference):
            m = mem.copy()
            outs.append((int(impl.tile_sort(m, dst, src, idx, -1, -1, -1, -1, 3 | INDEXED, -1, 0, 0, rows, cols, 0,
                                                    bound, pitch)), m))
        assert outs[0][0] == outs[1][0] == (-1 if bad is None else bad[0] * cols + bad[1])
        np.testing.assert_array_equal(outs[0][1], outs[1][1])
        if bad is None:
            got = np.array([outs[0][1][dst + r * p:dst + r * p + cols] for r in range(rows)])
            np.testing.assert_array_equal(got, mem[src + index])
        else:
            np.testing.assert_array_equal(outs[0][1], mem)


def test_special_values_move_bit_for_bit(make_kernels):
    """A gather moves words: src (NaN, inf, -inf, -0.0, 0.0, 1.5, -2.5, 1e-45) gathered by
    indices (3, 0, 2, 1, 7, 4, 3, 6) gives (-0.0, NaN, -inf, inf, 1e-45, 0.0, -0.0, -2.5), the
    signs of the zeros and the subnormal kept."""
    src = np.array([[np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.5, 1e-45]], np.float32)
    kernel, args, out = _launch(make_kernels, "float32", src, np.array([[3, 0, 2, 1, 7, 4, 3, 6]]), 1, 8)
    pto.launch(kernel, grid=(1,), args=args, check="all")
    pto.sync()
    got = np.empty(8, np.float32)
    pto.memcpy_d2h(got, out)
    want = np.array([-0.0, np.nan, -np.inf, np.inf, 1e-45, 0.0, -0.0, -2.5], np.float32)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


def test_both_engines_agree_on_an_index_gather(make_kernels):
    """The compiled event loop and the SimPy model give the same cycles, records and HBM
    bytes for the half-data gather of test_half_data_gather_over_dsts_valid_region_only."""
    from engine_compare import assert_engines_agree
    src = (np.arange(32) / 4).astype(np.float16)[None, :]
    index = np.zeros((2, 16))
    index[:, :5] = [[31, 30, 29, 28, 27], [0, 4, 8, 12, 16]]
    kernel, args, _out = _launch(make_kernels, "float16", src, index, 2, 16, valid=(2, 5))
    slow = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    assert slow["error"] is None and slow["cycles"] > 0


TWO_FAULTS = """
@pto.kernel
def k(S, I, O):
    with pto.vector():
        src = pto.alloc_tile(2, 8, pto.float32, loc=pto.Vec)
        idx = pto.alloc_tile(2, 8, pto.int32, loc=pto.Vec)
        dst = pto.alloc_tile(2, 8, pto.float32, loc=pto.Vec)
        tmp = pto.alloc_tile(2, 8, pto.int32, loc=pto.Vec)
        big = pto.alloc_tile(64, 64, pto.float32, loc=pto.Vec)
        pto.tload(src, S)
        pto.tload(idx, I + 16 * pto.get_subblock_id())
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        if pto.get_subblock_id() == 0:
            pto.texp(big, big)
            pto.texp(big, big)
        pto.tgather(dst, src, idx, tmp)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.tstore(O, dst)
"""


def test_the_first_of_two_faults_is_the_one_reported(make_kernels):
    """Both AIVs gather with one index past src (16 on AIV0, 17 on AIV1); AIV0 first runs two
    TEXPs of a 64 x 64 tile, so AIV1's gather faults first in simulated time. The compiled
    engine, the SimPy model (whose flush of what was issued before the fault lets no later
    fault replace it) and SimPy with the reference executor report AIV1's index 17. (The
    functional runner has no time: it runs AIV0 first and reports its fault.)"""
    index = np.zeros(32, np.int32)
    index[5], index[16 + 5] = 16, 17
    kernel = make_kernels(TWO_FAULTS).k
    args = (dev_array(np.zeros(16, np.float32), pto.float32), dev_array(index, pto.int32),
            pto.alloc_tensor(64, pto.float32))
    got = error_outcomes(kernel, args)
    timed = {got[w] for w in ("fast", "simpy", "simpy, reference")}
    assert len(timed) == 1, got
    kind, text = timed.pop()
    assert kind is pto.OutOfBoundsError and "on AIV1 of block (0, 0, 0): index 17 at (0, 5)" in text
    assert "on AIV0 of block (0, 0, 0): index 16 at (0, 5)" in got["functional"][1]


def test_bfloat16_data_gathers_its_words(make_kernels):
    """A2/A3's CheckValid asks 2- or 4-byte data only, so bfloat16 gathers too: words 0x3F80
    (1.0), 0xC000 (-2.0), 0xFFF7 (a NaN with a payload) and 0x0001 (the smallest subnormal)
    gathered by indices (2, 0, 3, 1, ...) come back as their words."""
    import ml_dtypes
    words = np.array([0x3F80, 0xC000, 0xFFF7, 0x0001] * 4, np.uint16)
    index = np.array([2, 0, 3, 1] * 4)
    mod = make_kernels(GATHER.format(sr=1, sc=16, dt="bfloat16", dr=1, dc=16, vr=1, vc=16))
    src = pto.alloc_tensor(32, pto.bfloat16)
    pto.memcpy_h2d(src, words.view(ml_dtypes.bfloat16))
    out = pto.alloc_tensor(32, pto.bfloat16)
    pto.launch(mod.k, grid=(1,), args=(src, dev_array(index.astype(np.int32), pto.int32), out), check="all")
    pto.sync()
    got = np.empty(16, ml_dtypes.bfloat16)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got.view(np.uint16), words[index])
