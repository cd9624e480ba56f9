"""The sort family on float16 tiles (isa/44_sort.toml), as pto-isa's topk runs it for half: the
8-byte structures of four halves A2/A3's vbitsort writes (value, 0, index low, index high), the
merges over them, the one-in-four gather of the values and the int32 view of the row that the
indices are gathered through (pto.treshape(..., dtype=pto.int32)). Values derived by hand."""
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto

from engine_compare import both_executors
from vec_kernels import run_vec

ROOT = Path(__file__).resolve().parents[1]


def halves(words):
    """The 16 bits of each float16 word."""
    return np.asarray(words, np.float16).view(np.uint16)


def test_tsort32_of_halves_writes_four_halves_a_structure(make_kernels):
    """src[j] = 8 - j over 8 columns (already descending), idx[j] = j + 700: structure j is
    (8 - j, 0, then 700 + j's low and high 16 bits), so its halves' bits are those of the value,
    0, 700 + j and 0."""
    j = np.arange(8)
    x = np.concatenate([8 - j, j + 700]).astype(np.float16)
    got = run_vec(make_kernels, """
s = pto.alloc_tile(1, 16, pto.float16, loc=pto.Vec, valid=(1, 8))
i = pto.alloc_tile(1, 16, pto.uint32, loc=pto.Vec, valid=(1, 8))
ti = pto.alloc_tile(1, 512, pto.uint32, loc=pto.Vec)
d = pto.alloc_tile(1, 32, pto.float16, loc=pto.Vec)
pad = pto.alloc_tile(1, 32, pto.float16, loc=pto.Vec)
pto.tload(s, X)
pto.tci(i, 700, ti)
pto.tsort32(d, s, i, pad)
pto.tstore(O, d)
""", x, 32, np.float16, np.float16)
    want = np.stack([halves(8.0 - j), np.zeros(8, np.uint16), (700 + j).astype(np.uint16),
                     np.zeros(8, np.uint16)], 1).ravel()
    np.testing.assert_array_equal(halves(got), want)


def test_the_int32_view_of_a_sorted_half_row_gives_back_the_indices(make_kernels):
    """Sort 64 halves src[j] = 5j mod 8 with idx[j] = j + 3 (two runs of 32), merge the two runs
    (block_len 128 halves = 32 structures, one group of 4 needs 4 blocks, so a 64-structure row
    is merged as two lists instead), then gather: P0001 over the 256 halves gives the values,
    P1010 over the row's int32 view (128 elements) the indices. The merge takes list 0 first on
    ties, so the order is numpy's lexsort over (index, -value)."""
    j = np.arange(64)
    vals = (5 * j) % 8
    x = np.concatenate([vals, j + 3]).astype(np.float16)
    got = run_vec(make_kernels, """
s = pto.alloc_tile(1, 64, pto.float16, loc=pto.Vec)
i = pto.alloc_tile(1, 64, pto.uint32, loc=pto.Vec)
d = pto.alloc_tile(1, 256, pto.float16, loc=pto.Vec)
t = pto.alloc_tile(1, 256, pto.float16, loc=pto.Vec)
v = pto.alloc_tile(1, 64, pto.float16, loc=pto.Vec)
o = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)
vi = pto.alloc_tile(1, 64, pto.float16, loc=pto.Vec)
ti = pto.alloc_tile(1, 512, pto.uint32, loc=pto.Vec)
pto.tload(s, X)
pto.tci(i, 3, ti)
pto.tsort32(d, s, i)
pto.tmrgsort(d, pto.tsubview(d, 0, 0, 1, 128), src1=pto.tsubview(d, 0, 128, 1, 128), tmp=t)
pto.tgather(v, d, "P0001")
pto.tgather(o, pto.treshape(d, 1, 128, dtype=pto.int32), "P1010")
pto.tcvt(vi, o)
pto.tstore(O, v)
pto.tstore(O + 64, vi)
""", x, 128, np.float16, np.float16)
    order = np.lexsort((j, -vals))
    np.testing.assert_array_equal(got[:64], vals[order])
    np.testing.assert_array_equal(got[64:], order + 3)


def test_an_index_whose_halves_are_nan_patterns_survives_the_sort_and_the_view(make_kernels):
    """Index 0x7C01FC01 = 2080504833: both its 16-bit halves are float16 NaN bit patterns (0xFC01
    low, 0x7C01 high). Values (1, 2) with indices (0x7C01FC01, 5) sort to (2, 5), (1, 0x7C01FC01);
    the structure keeps the halves' bits, TMOV copies them, and the int32 view gives both
    indices back; the numba and the reference executor, in timing and functional mode, agree."""
    mod = make_kernels("""
@pto.kernel
def k(X, I, O, OH):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(1, 16, pto.float16, loc=pto.Vec, valid=(1, 2))
            i = pto.alloc_tile(1, 8, pto.uint32, loc=pto.Vec, valid=(1, 2))
            d = pto.alloc_tile(1, 16, pto.float16, loc=pto.Vec, valid=(1, 8))
            e = pto.alloc_tile(1, 16, pto.float16, loc=pto.Vec, valid=(1, 8))
            o = pto.alloc_tile(1, 8, pto.int32, loc=pto.Vec)
            pto.tload(s, X)
            pto.tload(i, I)
            pto.tsort32(d, s, i, pto.alloc_tile(1, 32, pto.float16, loc=pto.Vec))
            pto.tmov(e, d)
            pto.tgather(o, pto.treshape(e, 1, 8, dtype=pto.int32), "P1010")
            pto.tstore(O, o)
            pto.tstore(OH, e)
""")
    X, I = pto.alloc_tensor(4, pto.float16), pto.alloc_tensor(8, pto.uint32)
    pto.memcpy_h2d(X, np.array([1.0, 2.0], np.float16))
    pto.memcpy_h2d(I, np.array([0x7C01FC01, 5], np.uint32))
    O, OH = pto.alloc_tensor(32, pto.int32), pto.alloc_tensor(32, pto.float16)
    images = both_executors(mod.k, (1, 1, 1), (X, I, O, OH))
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    o = first[O.alloc.byte_addr:O.alloc.byte_addr + 32].view(np.int32)
    np.testing.assert_array_equal(o[:2], [5, 0x7C01FC01])
    oh = first[OH.alloc.byte_addr:OH.alloc.byte_addr + 16].view(np.uint16)
    np.testing.assert_array_equal(oh, [0x4000, 0, 5, 0, 0x3C00, 0, 0xFC01, 0x7C01])


@pytest.mark.parametrize("line, message", [
    ("pto.tadds(pto.treshape(d, 1, 32, dtype=pto.int32), pto.treshape(d, 1, 32, dtype=pto.int32), 1)",
     "'d_reshape' views float16 words as int32"),
    ("w = pto.treshape(d, 1, 64, dtype=pto.int32)", "256 bytes, but the tile holds 128"),
    ("w = pto.treshape(d, 1, 64, dtype=pto.float32)", "built for int32 over float16 only"),
    ("pto.tgather(pto.treshape(d, 1, 32, dtype=pto.int32), pto.treshape(d, 1, 32, dtype=pto.int32), 'P1010')",
     "pto.tgather: dst: 'd_reshape' views float16 words as int32"),
])
def test_treshape_to_another_dtype_is_read_by_tgather_only(make_kernels, line, message):
    """An int32 view of float16 words is a TGATHER source only: an elementwise op on it is a
    compile error naming the view, and so is a view that does not keep the byte size or one
    between other dtypes."""
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(f"""
@pto.kernel
def k(O):
    with pto.vector():
        d = pto.alloc_tile(1, 64, pto.float16, loc=pto.Vec)
        {line}
""").k.program_for((pto.alloc_tensor(256),))


def test_half_sorts_cost_what_the_same_structures_of_float32_cost(make_kernels):
    """The table prices a sort by its source's bytes and [peaks]' elements a cycle, so a float16
    row costs what the float32 row of the same structures costs (test_sort_ops'
    test_costs_follow_the_table_entries):
    TSORT32 of 64 halves (128 B: one 128-byte repeat): 6 + 64 / Sort32's 2 elements a cycle = 38;
    TMRGSORT of 512 halves (1024 B, 128 structures): 20 + 78 x 1 = 98;
    TMRGSORT_LISTS of 2 x 128 halves (512 B): 20 + 79.72 x 1 = 99.72 -> 100;
    TGATHER over the int32 view of 256 halves (512 B): 14 + 14 x 2 = 42, as P0001 over them."""
    mod = make_kernels('''
@pto.kernel
def k(A, C):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(1, 64, pto.float16, loc=pto.Vec)
            idx = pto.alloc_tile(1, 64, pto.uint32, loc=pto.Vec)
            d = pto.alloc_tile(1, 512, pto.float16, loc=pto.Vec)
            t = pto.alloc_tile(1, 512, pto.float16, loc=pto.Vec)
            g = pto.alloc_tile(1, 256, pto.float16, loc=pto.Vec)
            o = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)
            v = pto.alloc_tile(1, 64, pto.float16, loc=pto.Vec)
            pto.tsort32(pto.tsubview(d, 0, 0, 1, 256), s, idx)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tmrgsort(t, d, 128)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tmrgsort(pto.tsubview(d, 0, 0, 1, 256), pto.tsubview(t, 0, 0, 1, 128),
                         src1=pto.tsubview(t, 0, 128, 1, 128), tmp=g)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tgather(o, pto.treshape(pto.tsubview(d, 0, 0, 1, 256), 1, 128, dtype=pto.int32), "P1010")
            pto.pipe_barrier(pto.PIPE_V)
            pto.tgather(v, pto.tsubview(d, 0, 0, 1, 256), "P0001")
''')
    a = pto.alloc_tensor(4096)
    prof = pto.profile(mod.k, grid=(1,), args=(a, a))
    got = [(e.inst, e.end - e.start) for e in prof.timeline if e.warp == 1 and e.inst != "PIPE_BARRIER"]
    assert [c for n, c in got if n.startswith(("TSORT32", "TMRGSORT", "TGATHER"))] == [38, 98, 100, 42, 42]


def test_the_half_port_of_pto_isas_topk_matches_its_golden_without_a_race():
    """examples/topk.py for float16 on 192 rows (4 a vector core): gen_data's golden top 1008
    values and indices of every row (ties, common at float16's spacing of 0.25 to 1 in [i, i + 1024),
    in index order), with check="race" finding no race among its flags."""
    sys.path.insert(0, str(ROOT / "examples"))
    import topk
    data, idx, want_v, want_i = topk.golden(192, dtype="float16")
    src = pto.alloc_tensor(data.nbytes, pto.float16)
    pto.memcpy_h2d(src, data)
    in_idx = pto.alloc_tensor(idx.nbytes, pto.uint32)
    pto.memcpy_h2d(in_idx, idx)
    out, index = pto.alloc_tensor(192 * 1008 * 2, pto.float16), pto.alloc_tensor(192 * 1008 * 4, pto.int32)
    pto.launch(topk.kernel_for("float16"), grid=(24,), args=(out, index, src, in_idx, 4), check="race")
    pto.sync()
    got_v, got_i = np.empty((192, 1008), np.float16), np.empty((192, 1008), np.int32)
    pto.memcpy_d2h(got_v, out)
    pto.memcpy_d2h(got_i, index)
    assert len(np.unique(want_v[-1])) < 1008                     # the last row has ties
    np.testing.assert_array_equal(got_v, want_v)
    np.testing.assert_array_equal(got_i, want_i)
