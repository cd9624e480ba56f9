"""The sort family (isa/44_sort.toml) and Vec -> Vec TMOV, which pto-isa's topk kernel runs:
a tiny kernel per instruction against values derived by hand from pto-isa's CPU simulation
(include/pto/cpu/TSort32.hpp, TMrgSort.hpp, TGather.hpp), their cycles from the machine table's
entries, the numba kernel against the reference's, and the port of the whole kernel
(examples/topk.py) against pto-isa's gen_data golden."""
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.exec import reference
from pypto_sim.exec.lane import executor

from engine_compare import both_executors, tensor_values
from vec_kernels import run_vec

ROOT = Path(__file__).resolve().parents[1]


def test_tsort32_sorts_each_run_of_32_by_value_then_index(make_kernels):
    """src[j] = 5j mod 8 over 64 columns, idx[j] = j + 100. In each run of 32 every value 0..7
    appears four times; TSORT32 writes the run's (value, index) pairs by value descending and
    equal values in index order: run 0 starts (7, 103), (7, 111), (7, 119), (7, 127), (6, 106).
    The index word is the float32 whose bits are the index (vbitsort's uint32 word): read as
    int32 it is the index."""
    j = np.arange(64)
    x = np.concatenate([(5 * j) % 8, j + 100]).astype(np.float32)
    got = run_vec(make_kernels, """
s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)
i = pto.alloc_tile(1, 64, pto.uint32, loc=pto.Vec)
ti = pto.alloc_tile(1, 512, pto.uint32, loc=pto.Vec)
d = pto.alloc_tile(1, 128, pto.float32, loc=pto.Vec)
pto.tload(s, X)
pto.tci(i, 100, ti)
pto.tsort32(d, s, i)
pto.tstore(O, d)
""", x, 128)
    want = [(val, 100 + c) for r in (0, 32) for val in range(7, -1, -1) for c in range(r, r + 32)
            if (5 * c) % 8 == val]
    assert want[:5] == [(7, 103), (7, 111), (7, 119), (7, 127), (6, 106)]
    np.testing.assert_array_equal(got[::2], [v for v, _ in want])
    np.testing.assert_array_equal(got[1::2].view(np.int32), [i for _, i in want])


def test_tmrgsort_merges_four_blocks_the_first_block_winning_ties(make_kernels):
    """Four blocks of 64 words (32 pairs); in each, pair p is (4 (31 - p), 100 b + p): the same
    values in every block. Merged: value 124, 120, ..., 0, each from blocks 0, 1, 2, 3 in turn
    (a later block replaces the pick only when strictly greater)."""
    p = np.arange(32)
    x = np.stack([np.stack([4 * (31 - p), 100 * b + p], 1).ravel() for b in range(4)]).ravel()
    got = run_vec(make_kernels, """
s = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
d = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
pto.tload(s, X)
pto.tmrgsort(d, s, 64)
pto.tstore(O, d)
""", x, 256)
    want = [(4 * (31 - q), 100 * b + q) for q in range(32) for b in range(4)]
    np.testing.assert_array_equal(got, np.array(want, np.float32).ravel())


def test_tmrgsort_of_two_lists_may_write_over_its_first_list(make_kernels):
    """List 0 is pairs (2 (15 - p), p), list 1 (2 (15 - p), 50 + p) right after it, and dst is
    the 64 words over both, as topk's SortTailBlock has it: A2/A3 merges into tmp and copies
    back, so the result is the merge of the old lists, list 0 first on each tie."""
    p = np.arange(16)
    x = np.concatenate([np.stack([2 * (15 - p), p], 1).ravel(), np.stack([2 * (15 - p), 50 + p], 1).ravel()])
    got = run_vec(make_kernels, """
d = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)
t = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)
pto.tload(d, X)
pto.tmrgsort(d, pto.tsubview(d, 0, 0, 1, 32), src1=pto.tsubview(d, 0, 32, 1, 32), tmp=t)
pto.tstore(O, d)
""", x, 64)
    want = [pair for q in range(16) for pair in ((2 * (15 - q), q), (2 * (15 - q), 50 + q))]
    np.testing.assert_array_equal(got, np.array(want, np.float32).ravel())


@pytest.mark.parametrize("pattern, cols", [("P0101", range(0, 16, 2)), ("P1010", range(1, 16, 2)),
                                           ("P0001", range(0, 16, 4)), ("P1000", range(3, 16, 4)),
                                           ("P1111", range(16))])
def test_tgather_packs_the_columns_its_pattern_selects(make_kernels, pattern, cols):
    """src[c] = 10 c over 16 columns: P0101 keeps the even columns, P1010 the odd, P0001 / P1000
    every fourth from 0 / 3, P1111 all (cpu/TGather.hpp MaskSelect), packed from dst's start."""
    x = 10 * np.arange(16, dtype=np.float32)
    got = run_vec(make_kernels, f"""
s = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
d = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
pto.tload(s, X)
pto.tgather(d, s, "{pattern}")
pto.tstore(O, d)
""", x, 16)
    np.testing.assert_array_equal(got[:len(cols)], 10 * np.array(cols, np.float32))


def test_tgather_moves_index_words_into_an_int32_tile(make_kernels):
    """TSORT32 of 8 values 8 - j (already descending) with idx j, then P1010 into int32: the
    index words 0..7 (topk's ExtractDataOrIndex<isIndex = true>)."""
    x = np.concatenate([8 - np.arange(8), np.zeros(8), np.arange(8), np.zeros(8)]).astype(np.float32)
    got = run_vec(make_kernels, """
s = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
i = pto.alloc_tile(1, 8, pto.uint32, loc=pto.Vec)
ti = pto.alloc_tile(1, 512, pto.uint32, loc=pto.Vec)
d = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
o = pto.alloc_tile(1, 8, pto.int32, loc=pto.Vec)
pad = pto.alloc_tile(1, 32, pto.float32, loc=pto.Vec)
pto.tload(s, X)
pto.tci(i, 0, ti)
pto.tsort32(d, s, i, pad)
pto.tgather(o, d, "P1010")
pto.tstore(O, o)
""", x, 8, np.int32)
    np.testing.assert_array_equal(got, np.arange(8))


@pytest.mark.parametrize("src, dst, x, want_bits", [
    ("float32", "int32", [0.5, 9, 2.5, 9, -0.0, 9, -np.inf, 9], [1056964608, 1075838976, -2147483648, -8388608]),
    ("int32", "float32", [1065353216, 9, -1073741824, 9, 1, 9, 2143289345, 9],
     [1065353216, -1073741824, 1, 2143289345]),
])
@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_tgather_between_float32_and_int32_moves_the_words_bits(make_kernels, mode, src, dst, x, want_bits):
    """vreducev2 moves bits (TGather.hpp asks only sizeof(dst) == sizeof(src)): P0101 of 8
    words picks columns 0, 2, 4, 6 and dst holds their 32 bits read as dst's dtype.
    float32 -> int32: 0.5f = 1.0 x 2^-1 = 0x3F000000 = 1056964608; 2.5f = 1.25 x 2^1 =
    0x40200000 = 1075838976; -0.0f = 0x80000000 = -2147483648; -inf = 0xFF800000 = -8388608.
    int32 -> float32: 1065353216 = 0x3F800000 = 1.0f; -1073741824 = 0xC0000000 = -2.0f; 1 =
    2^-149 (the least subnormal); 2143289345 = 0x7FC00001, a quiet NaN whose payload 1 is kept.
    Both read back through the stored bytes as int32."""
    mod = make_kernels(f"""
@pto.kernel
def k(X, O):
    with pto.vector():
        s = pto.alloc_tile(1, 8, pto.{src}, loc=pto.Vec)
        d = pto.alloc_tile(1, 8, pto.{dst}, loc=pto.Vec)
        pto.tload(s, X)
        pto.tgather(d, s, "P0101")
        pto.tstore(O, d)
""")
    X, O = pto.alloc_tensor(32, getattr(pto, src)), pto.alloc_tensor(32, getattr(pto, dst))
    pto.memcpy_h2d(X, np.array(x, src))
    pto.launch(mod.k, grid=(1,), args=(X, O), mode=mode)
    pto.sync()
    got = np.zeros(8, dst)
    pto.memcpy_d2h(got, O)
    np.testing.assert_array_equal(got[:4].view(np.int32), want_bits)
    if dst == "float32":
        assert got[0] == 1.0 and got[1] == -2.0 and got[2] == 2.0 ** -149 and np.isnan(got[3])


def test_both_executors_agree_on_tgathers_bits_from_float32_int32_and_half_pairs(make_kernels):
    """The numba and the reference executor, in timing and functional mode, on the three
    reinterpreting gathers (P0101: elements 0, 2, 4, 6): float32 (0.5, 2.5, -0.0, -inf) into
    int32, as in test_tgather_between_float32_and_int32_moves_the_words_bits; int32
    (1065353216, -1073741824, 1, 2143289345) into float32, likewise; and the int32 view of 16
    halves into float32: element j is halves 2j (low) and 2j + 1 (high), so (0, 1.875 =
    0x3F80) is 0x3F800000 = 1.0f, (0, -2.0 = 0xC000) is 0xC0000000 = -2.0f, (0, 1.75 = 0x3F00)
    is 0x3F000000 = 0.5f and (2^-24 = 0x0001, 0) is 1, the float32 2^-149."""
    mod = make_kernels("""
@pto.kernel
def k(X, XI, XH, O, OF, OH):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
            si = pto.alloc_tile(1, 8, pto.int32, loc=pto.Vec)
            sh = pto.alloc_tile(1, 16, pto.float16, loc=pto.Vec)
            d = pto.alloc_tile(1, 8, pto.int32, loc=pto.Vec)
            df = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
            dh = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
            pto.tload(s, X)
            pto.tload(si, XI)
            pto.tload(sh, XH)
            pto.tgather(d, s, "P0101")
            pto.tgather(df, si, "P0101")
            pto.tgather(dh, pto.treshape(sh, 1, 8, dtype=pto.int32), "P0101")
            pto.tstore(O, d)
            pto.tstore(OF, df)
            pto.tstore(OH, dh)
""")
    halves = [0, 1.875, 9, 9, 0, -2.0, 9, 9, 0, 1.75, 9, 9, 2.0 ** -24, 0, 9, 9]
    ins = [(np.array([0.5, 9, 2.5, 9, -0.0, 9, -np.inf, 9], np.float32), pto.float32),
           (np.array([1065353216, 9, -1073741824, 9, 1, 9, 2143289345, 9], np.int32), pto.int32),
           (np.array(halves, np.float16), pto.float16)]
    args = []
    for a, dt in ins:
        args.append(pto.alloc_tensor(a.nbytes, dt))
        pto.memcpy_h2d(args[-1], a)
    outs = [pto.alloc_tensor(32, dt) for dt in (pto.int32, pto.float32, pto.float32)]
    images = both_executors(mod.k, (1, 1, 1), (*args, *outs))
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    bits = [first[o.alloc.byte_addr:o.alloc.byte_addr + 16].view(np.int32) for o in outs]
    np.testing.assert_array_equal(bits[0], [1056964608, 1075838976, -2147483648, -8388608])
    np.testing.assert_array_equal(bits[1], [1065353216, -1073741824, 1, 2143289345])
    np.testing.assert_array_equal(bits[2].view(np.float32), [1.0, -2.0, 0.5, 2.0 ** -149])


def test_a_float32_to_int32_gathers_record_says_it_moves_bits(make_kernels):
    """The record's mode operand (isa/sort_modes.py): TGATHER (3) | TO_I32_BITS (8) = 11 for a
    gather of float32 words into an int32 tile."""
    from pypto_sim.isa import load_isa
    mod = make_kernels("""
@pto.kernel
def k(X, O):
    with pto.vector():
        s = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
        d = pto.alloc_tile(1, 8, pto.int32, loc=pto.Vec)
        pto.tgather(d, s, "P0101")
""")
    (ins,) = [i for i in mod.k.program_for((pto.alloc_tensor(32), pto.alloc_tensor(32))).instrs
              if i.op == "TGATHER"]
    at = [o.name for o in load_isa().by_name["TGATHER"].value_operands].index("mode")
    assert ins.srcs[at].value == 3 | 8 == 11


def test_tmov_between_vec_tiles_copies(make_kernels):
    """pto.tmov(dst, src) on two Vec tiles copies the valid region (TMovToVec)."""
    x = np.arange(64, dtype=np.float32) - 7.5
    got = run_vec(make_kernels, """
s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)
d = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)
pto.tload(s, X)
pto.tmov(d, s)
pto.tstore(O, d)
""", x, 64)
    np.testing.assert_array_equal(got, x)


def test_costs_follow_the_table_entries(make_kernels):
    """Cycles on an idle V pipe, from latency_tables/ascend910b.toml (head + per_repeat x
    ceil(bytes / repeat_bytes); the tail is paid at the next barrier):
    TSORT32 of 64 float32 (256 B, 128 B a vbitsort repeat): 6 + 16 x 2 = 38, the table's 2 a
    repeat raised by [peaks] to 32 elements / Sort32's 2 elements a cycle = 16;
    TMRGSORT of 256 words (1024 B): 20 + 78 x 1 = 98;
    TMRGSORT_LISTS of 2 x 64 words (512 B): 20 + 79.72 x 1 = 99.72 -> 100;
    TGATHER of 128 words (512 B): 14 + 14 x 2 = 42; TMOV_V2V of 128 words: 0.43 x 2 -> 1."""
    mod = make_kernels('''
@pto.kernel
def k(A, C):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)
            idx = pto.alloc_tile(1, 64, pto.uint32, loc=pto.Vec)
            d = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
            t = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
            g = pto.alloc_tile(1, 128, pto.float32, loc=pto.Vec)
            pto.tsort32(pto.tsubview(d, 0, 0, 1, 128), s, idx)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tmrgsort(t, d, 64)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tmrgsort(pto.tsubview(d, 0, 0, 1, 128), pto.tsubview(t, 0, 0, 1, 64),
                         src1=pto.tsubview(t, 0, 64, 1, 64), tmp=g)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tgather(s, pto.tsubview(d, 0, 0, 1, 128), "P0101")
            pto.pipe_barrier(pto.PIPE_V)
            pto.tmov(g, pto.tsubview(d, 0, 0, 1, 128))
''')
    a = pto.alloc_tensor(4096)
    prof = pto.profile(mod.k, grid=(1,), args=(a, a))
    got = {e.inst: e.end - e.start for e in prof.timeline if e.warp == 1}
    assert {n: got[n] for n in ("TSORT32", "TMRGSORT", "TMRGSORT_LISTS", "TGATHER", "TMOV_V2V")} == \
        {"TSORT32": 38, "TMRGSORT": 98, "TMRGSORT_LISTS": 100, "TGATHER": 42, "TMOV_V2V": 1}


def test_special_values_through_sort_merge_gather_and_tmov(make_kernels):
    """NaN, infinities and signed zeros. TSORT32 of (1, -inf, 0, NaN, -0, inf, 2, 0) with idx
    0..7: nothing compares before or after a NaN, so the run is sorted on each side of it:
    (1, 0) (0, 2) (-inf, 1) | (NaN, 3) | (inf, 5) (2, 6) (-0, 4) (0, 7), -0 == 0 keeping index
    order (pto-isa's std::stable_sort leaves NaN's place undefined; this is the simulator's).
    The two-list merge of [(inf, 0) (1, 1) (-0, 2) (-inf, 3)] and [(NaN, 4) (2, 5) (0, 6)
    (-1, 7)] takes list 0 while list 1's head is not greater (NaN never is), then list 1.
    TGATHER and TMOV copy the words: -0.0 keeps its sign. (TSORT32's index words are the
    float32s whose bits are the indices.)"""
    inf, nan = np.inf, np.nan
    x = np.array([1, -inf, 0, nan, -0.0, inf, 2, 0] + list(range(8))
                 + [inf, 0, 1, 1, -0.0, 2, -inf, 3, nan, 4, 2, 5, 0, 6, -1, 7], np.float32)
    got = run_vec(make_kernels, """
s = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
i = pto.alloc_tile(1, 8, pto.uint32, loc=pto.Vec)
ti = pto.alloc_tile(1, 512, pto.uint32, loc=pto.Vec)
d = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
m = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
g = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
t = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
o = pto.alloc_tile(1, 48, pto.float32, loc=pto.Vec)
pad = pto.alloc_tile(1, 32, pto.float32, loc=pto.Vec)
pto.tload(s, X)
pto.tci(i, 0, ti)
pto.tsort32(d, s, i, pad)
pto.tload(m, X + 16)
pto.tmrgsort(g, pto.tsubview(m, 0, 0, 1, 8), src1=pto.tsubview(m, 0, 8, 1, 8), tmp=t)
pto.tmov(pto.tsubview(o, 0, 0, 1, 16), d)
pto.tmov(pto.tsubview(o, 0, 16, 1, 16), g)
pto.tgather(pto.tsubview(o, 0, 32, 1, 8), d, "P0101")
pto.tstore(O, o)
""", x, 48)
    sort32 = [1, 0, 0, 2, -inf, 1, nan, 3, inf, 5, 2, 6, -0.0, 4, 0, 7]
    merged = [inf, 0, 1, 1, -0.0, 2, -inf, 3, nan, 4, 2, 5, 0, 6, -1, 7]
    want = np.array(sort32 + merged + sort32[::2], np.float32)
    want[1:16:2] = np.array(sort32[1::2], np.int32).view(np.float32)
    np.testing.assert_array_equal(got[:40], want)
    assert np.array_equal(np.signbit(got[:40]), np.signbit(want)), "a signed zero lost its sign"


@pytest.mark.parametrize("mode, k, rows, cols", [(0, 0, 1, 64), (0, 40, 3, 40), (0, 0, 2, 7),
                                                 (1, 64, 1, 256), (1, 128, 1, 1024), (1, 64, 1, 300),
                                                 (2, 64, 1, 128), (2, 24, 1, 64), (2, 0, 1, 32),
                                                 (3, 1, 2, 16), (3, 2, 1, 30), (3, 4, 3, 12), (3, 7, 1, 9),
                                                 (3 | 8, 1, 2, 16), (3 | 16, 7, 1, 9), (3 | 4, 2, 2, 16),
                                                 (3 | 4 | 16, 7, 1, 12), (3 | 32, 1, 3, 16), (3 | 32, 6, 2, 9),
                                                 (3 | 32 | 8, 4, 2, 12), (3 | 32, 7, 3, 5)])
def test_the_numba_sort_kernel_matches_the_reference(mode, k, rows, cols):
    """tile_sort of both executors on the same random words (small integers: many ties; NaN
    order is left out, pto-isa's std::stable_sort does not define it), with the operands' tiles
    at random places: every word of memory comes out identical. TGATHER also with its mode bits
    (4 the int32 view of half pairs, 8 float32 -> int32 bits, 16 int32 -> float32 bits: a
    negative integer's bits are a NaN pattern; TSORT32's float32 index words are such too), and
    TGATHER of plain words from rows 5 words wider than cols apart in odd trials; with 32
    (GATHER_COL) the picked rows into dst rows 3 words wider than cols apart in odd trials."""
    ex = executor()
    rng = np.random.default_rng(1000 * mode + cols)
    for trial in range(4):
        mem = rng.integers(-6, 6, 6000).astype(np.float64)
        if mode in (1, 2):                            # sorted lists of pairs, as the merges need
            for lo, n in ((1000, k if mode == 2 else cols), (2000, cols - k if mode == 2 else 0)):
                step = k if mode == 1 else max(n, 1)
                for b in range(lo, lo + n, max(step, 2)):
                    m = min(step, lo + n - b) // 2
                    mem[b:b + 2 * m:2] = np.sort(mem[b:b + 2 * m:2])[::-1]
        dst, src, idx, src1 = 3000, 1000, 100 + trial, 2000
        outs = []
        for impl in (ex, reference):
            m = mem.copy()
            # TGATHER (mode & 3 == 3) of plain words reads src's rows at a pitch wider than cols
            spitch = cols + 5 if mode & 3 == 3 and not mode & 4 and trial % 2 else 0
            dpitch = cols + 3 if mode & 32 and trial % 2 else 0
            k1 = cols - k if mode == 2 else 0          # two lists: src1 holds the rest, tmp at 4000
            impl.tile_sort(m, dst, src, idx, src1, src1, src1, 4000, mode, k, k1, 0, rows, cols, cols, spitch,
                           dpitch)
            outs.append(m)
        np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("sizes, dcols, exhausted", [((64, 64, 64, 64), 256, False), ((64, 32, 16, 0), 112, False),
                                                     ((40, 64, 8, 0), 48, False), ((16, 32, 48, 64), 200, False),
                                                     ((64, 64, 0, 0), 128, True), ((24, 64, 40, 0), 128, True),
                                                     ((32, 8, 64, 16), 64, True)])
def test_the_numba_merge_of_lists_matches_the_reference(sizes, dcols, exhausted):
    """TMRGSORT_LISTS (mode 2) of both executors on 2 to 4 sorted lists of random pairs (small
    integer values: many ties) at random places, into tmp, then dcols words of tmp into dst (more
    than the merge wrote in some: tmp's old words): every word of memory identical. Exhausted
    (mode bit 2048) stops the merge when one list runs out."""
    ex = executor()
    rng = np.random.default_rng(sum(sizes) + dcols)
    for trial in range(4):
        mem = rng.integers(-6, 6, 6000).astype(np.float64)
        at = [1000 + 500 * b + int(rng.integers(0, 100)) for b in range(4)]
        for lo, n in zip(at, sizes):
            mem[lo:lo + n:2] = np.sort(mem[lo:lo + n:2])[::-1]
        outs = []
        for impl in (ex, reference):
            m = mem.copy()
            impl.tile_sort(m, 3000, at[0], -1, at[1], at[2], at[3], 4000, 2 | (2048 if exhausted else 0),
                           sizes[0], sizes[1], sizes[2], 1, sum(sizes), dcols, 0, 0)
            outs.append(m)
        np.testing.assert_array_equal(outs[0], outs[1])


@pto.kernel
def sort_corpus(X, I, O, OI):
    """Every sort-family instruction and TMOV_V2V on AIV0, X's 64 values through TSORT32, the
    two merges, TMOV back and both gathers."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)
            idx = pto.alloc_tile(1, 64, pto.uint32, loc=pto.Vec)
            d = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
            t = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
            v = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)
            iv = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)
            m = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)       # the merge's tmp: its 256 words
            pto.tload(s, X)
            pto.tload(idx, I)
            pto.tsort32(pto.tsubview(d, 0, 0, 1, 128), s, idx)
            pto.tload(s, X + 64)
            pto.tsort32(pto.tsubview(d, 0, 128, 1, 128), s, idx)
            pto.tmrgsort(t, d, 64)
            pto.tmov(d, t)
            pto.tmrgsort(t, pto.tsubview(d, 0, 0, 1, 128), src1=pto.tsubview(d, 0, 128, 1, 128), tmp=m)
            pto.tgather(v, pto.tsubview(t, 0, 0, 1, 128), "P0101")
            pto.tgather(iv, pto.tsubview(t, 0, 0, 1, 128), "P1010")
            pto.tstore(O, v)
            pto.tstore(OI, iv)


def test_both_executors_agree_on_a_kernel_of_every_sort_instruction():
    """sort_corpus in timing and functional mode with the numba and the reference executor:
    the four HBM images are identical, and the top 64 of X's 128 values (ties: X holds each of
    0..31 four times) are numpy's lexsort order over (index mod 64, -value)."""
    x = (np.arange(128) * 7 % 32).astype(np.float32)
    X, I = pto.alloc_tensor(512, pto.float32), pto.alloc_tensor(256, pto.uint32)
    pto.memcpy_h2d(X, x)
    pto.memcpy_h2d(I, np.arange(64, dtype=np.uint32))
    O, OI = pto.alloc_tensor(256, pto.float32), pto.alloc_tensor(256, pto.int32)
    images = both_executors(sort_corpus, (1, 1, 1), (X, I, O, OI))
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    got_v, got_i = tensor_values(first, O), tensor_values(first, OI)
    # TSORT32 gives each pair the index of its column in its 64-value half; the merges keep
    # the first half first on ties (block 0 / list 0), so order is by -value, then half, then index
    order = np.lexsort((np.arange(128) % 64, np.arange(128) // 64, -x))[:64]
    np.testing.assert_array_equal(got_v, x[order])
    np.testing.assert_array_equal(got_i, order % 64)


def test_the_port_of_pto_isas_topk_matches_its_golden():
    """examples/topk.py on 192 rows (4 a vector core: one iteration of both buffers) gives
    gen_data.py's golden top 1000 values and indices of every row."""
    sys.path.insert(0, str(ROOT / "examples"))
    import topk
    _, _, want_v, want_i = topk.golden(192)
    got_v, got_i, prof = topk.run(192)
    np.testing.assert_array_equal(got_v, want_v)
    np.testing.assert_array_equal(got_i, want_i)
    shares = prof.pipe_shares("AIV")
    assert shares["V"] > 0.5        # the sorts dominate (pto-isa's README: aiv_vec_ratio 88.7-94%)


def test_the_topk_ports_flags_order_every_hazard():
    """sync="manual" as pto-isa's kernel: with check="race" (vector clocks per unit and pipe,
    moved only by its flags and barriers) the 192-row launch reports no race."""
    sys.path.insert(0, str(ROOT / "examples"))
    import topk
    data, idx, want_v, _ = topk.golden(192)
    src = pto.alloc_tensor(data.nbytes, pto.float32)
    pto.memcpy_h2d(src, data)
    in_idx = pto.alloc_tensor(idx.nbytes, pto.uint32)
    pto.memcpy_h2d(in_idx, idx)
    out, index = pto.alloc_tensor(192 * 4000, pto.float32), pto.alloc_tensor(192 * 4000, pto.int32)
    pto.launch(topk.topk, grid=(24,), args=(out, index, src, in_idx, 4), check="race")
    pto.sync()
    got = np.empty((192, 1000), np.float32)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got, want_v)


@pytest.mark.parametrize("body, message", [
    ("s = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)\npto.tmrgsort(s, s, 48)",
     "block_len must be a constant multiple of 64"),
    ("s = pto.alloc_tile(1, 192, pto.float32, loc=pto.Vec)\npto.tmrgsort(s, s, 64)",
     "groups of 4 blocks of 64"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)\n"
     "pto.tgather(d, s, 'P0101')", "cannot hold the 32 words P0101 selects"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\npto.tgather(s, s, 'P0110')", "must be a mask pattern, one of"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\ni = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\n"
     "d = pto.alloc_tile(1, 128, pto.float32, loc=pto.Vec)\npto.tsort32(d, s, i)", "the index tile 'i' holds float32"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\ni = pto.alloc_tile(1, 64, pto.uint32, loc=pto.Vec)\n"
     "pto.tsort32(s, s, i)", "must hold 1 rows of 128 words"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec, valid=(1, 40))\ni = pto.alloc_tile(1, 64, pto.uint32, "
     "loc=pto.Vec)\nd = pto.alloc_tile(1, 128, pto.float32, loc=pto.Vec)\npto.tsort32(d, s, i)",
     "3-argument TSORT32 sorts whole blocks only and leaves the last 8 unsorted and unwritten"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec, valid=(1, 40))\ni = pto.alloc_tile(1, 64, pto.uint32, "
     "loc=pto.Vec)\nd = pto.alloc_tile(1, 128, pto.float32, loc=pto.Vec)\nt = pto.alloc_tile(1, 8, pto.float32, "
     "loc=pto.Vec)\npto.tsort32(d, s, i, t)", r"tmp 't' \(1 x 8 float32\) must hold 64 float32 elements"),
])
def test_sort_operand_errors_name_the_tile_and_the_rule(make_kernels, body, message):
    """A2/A3's asserts (TMrgSort.hpp: blockLen % 64, whole groups of 4 blocks; TGather.hpp: dst
    holds what vreducev2 writes; TSort32.hpp: uint32 indices, 2 x cols words of pairs) as
    CompileErrors at the kernel's line; and TSORT32.md's constraints: the 3-argument form takes
    whole 32-element blocks (A2/A3 leaves a tail unsorted), the 4-argument form's tmp holds the
    row padded to whole blocks."""
    source = ("\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n"
              + "\n".join(" " * 8 + line for line in body.split("\n")) + "\n")
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(source).k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))


def test_tsort32_takes_each_rows_indices_from_its_own_row_of_idx(make_kernels):
    """TSORT32 of a 3 x 32 src with a 3 x 32 uint32 idx (idx[r, c] = 100 r + c): row r's
    structures carry row r's indices (TSort32.hpp steps idx by its row stride), so the index
    words of row r, read as uint32, are 100 r + the columns in descending order of the values.
    Before the record had its k operand, rows after the first read idx at r x -1."""
    mod = make_kernels('''
@pto.kernel
def k(S, I, O):
    with pto.vector():
        s = pto.alloc_tile(3, 32, pto.float32, loc=pto.Vec)
        i = pto.alloc_tile(3, 32, pto.uint32, loc=pto.Vec)
        d = pto.alloc_tile(3, 64, pto.float32, loc=pto.Vec)
        pto.tload(s, S)
        pto.tload(i, I)
        pto.tsort32(d, s, i)
        pto.tstore(O, d)
''')
    x = np.random.default_rng(3).permutation(96).reshape(3, 32).astype(np.float32)
    idx = (100 * np.arange(3)[:, None] + np.arange(32)).astype(np.uint32)
    S, I, O = pto.alloc_tensor(x.nbytes), pto.alloc_tensor(idx.nbytes, pto.uint32), pto.alloc_tensor(3 * 64 * 4)
    pto.memcpy_h2d(S, x)
    pto.memcpy_h2d(I, idx)
    pto.launch(mod.k, grid=(1,), args=(S, I, O))
    got = np.zeros((3, 64), np.float32)
    pto.memcpy_d2h(got, O)
    for r in range(3):
        order = np.argsort(-x[r], kind="stable")
        np.testing.assert_array_equal(got[r, 0::2], x[r, order])
        np.testing.assert_array_equal(got[r, 1::2].view(np.uint32), 100 * r + order)


GATHER_ROWS = '''
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(8, 16, pto.float32, valid=(8, 8))
            dst = pto.alloc_tile(DST_ROWS, 16, pto.float32, valid=(DST_ROWS, 8))
            pto.tload(src, X, stride=8)
            pto.tgather(dst, src, "P0010", axis="col")
            pto.tstore(O, dst, stride=8)
'''


def test_tgather_along_columns_copies_the_rows_the_pattern_picks(make_kernels):
    """GatherAxis::GATHER_COL (A2/A3 TGather.hpp: vcopy of src row GetStrideByMask(i) into dst
    row i): P0010 takes one row of four, the second, so from src's 8 valid rows (row r holding
    10 r .. 10 r + 7) dst's 2 rows are src's rows 1 and 5: 10 .. 17 and 50 .. 57. Both tiles
    are 16 wide with 8 valid columns: each copy is the 8 valid words at each tile's pitch. In
    every executor and mode."""
    x = (10 * np.arange(8)[:, None] + np.arange(8)).astype(np.float32)
    mod = make_kernels(GATHER_ROWS.replace("DST_ROWS", "2"))
    X = pto.alloc_tensor(x.nbytes, pto.float32)
    pto.memcpy_h2d(X, x)
    O = pto.alloc_tensor(64, pto.float32)
    pto.memcpy_h2d(O, np.zeros(16, np.float32))
    for key, image in both_executors(mod.k, (1,), (X, O)).items():
        np.testing.assert_array_equal(tensor_values(image, O), np.concatenate([x[1], x[5]]), err_msg=str(key))


def test_tgather_along_columns_needs_the_patterns_share_of_rows(make_kernels):
    """TGATHER_IMPL's assert "validRow of dst must be 2 or 4 times that of src": P0010 of 8 rows
    fills 2, so a dst of 3 valid rows is a compile error naming both counts."""
    mod = make_kernels(GATHER_ROWS.replace("DST_ROWS", "3"))
    with pytest.raises(pto.CompileError, match=r"'src' has 8 valid rows and 'dst' 3; P0010 takes one row of 4, "
                                               r"so src needs 12"):
        mod.k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))


def test_tgather_by_columns_needs_a_destination_of_whole_rows(make_kernels):
    """A2/A3's TGATHER_IMPL asserts "Fix: TGATHER expect continuous memory for dst." for the
    GATHER_ROW form (dst.GetValidCol() == Cols): the picks are packed from dst's start across its
    rows, so a dst whose valid columns are fewer than its columns is a compile error."""
    mod = make_kernels(GATHER_ROWS.replace('"P0010", axis="col"', '"P0101"').replace("DST_ROWS, 16", "4, 16")
                       .replace("valid=(DST_ROWS, 8)", "valid=(4, 8)"))
    with pytest.raises(pto.CompileError, match=r"'dst' has valid columns 8 of 16.*continuous memory for dst"):
        mod.k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))
