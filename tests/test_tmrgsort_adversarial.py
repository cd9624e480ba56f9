"""TMRGSORT's multi-list form (pto.tmrgsort(dst, src0, src1=, src2=, src3=, tmp=, exhausted=)) as
a pto-isa kernel author would try to break it, against pto-isa's headers at 3186c381:
cpu/TMrgSort.hpp's merge (each step the head of list 0, replaced by a later list's head only when
strictly greater; with exhausted, a stop once any list is empty) and A2/A3 TMrgSort.hpp's path
(vmrgsort4 into tmp, then tmp's first dst-valid words copied to dst; CheckStatic's asserts).

Hand-derived: NaN, infinities and signed zeros across 3 lists, each of 4 lists the first to run
out of an exhausted merge, a dst over all 3 lists (the topk kernel's in-place merge), tmp = dst,
tiles of two rows refused, the price of 3 float16 lists of unequal lengths. Then a small random
differential run: both executors in both modes against the CPU simulation's merge re-written in
numpy here, and both timing engines.
"""
import numpy as np
import pytest

import pypto_sim as pto
from engine_compare import assert_engines_agree, both_executors, tensor_values
from ptoisa_st import run_kernel

NAN, INF = float("nan"), float("inf")


def merge_kernel(make_kernels, lists, dst_words, call, tmp_words, dt="float32", fill=-3.0):
    """A kernel loading each list (words) into its own one-row tile (s0, s1, ...), tmp `t` of
    tmp_words filled with `fill`, then `call` (naming s0.., d and t) and a store of d; returns
    d's words after a launch."""
    blk = 32 // np.dtype(dt).itemsize
    def tile(name, words):
        return f"{name} = pto.alloc_tile(1, {-(-words // blk) * blk}, pto.{dt}, valid=(1, {words}))"
    n = len(lists)
    lines = [tile(f"s{i}", len(a)) for i, a in enumerate(lists)] + [tile("d", dst_words), tile("t", tmp_words)]
    lines += [f"pto.tload(s{i}, S{i})" for i in range(n)] + ["pto.tload(t, T)"]
    lines += ["pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)", "pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)", call,
              "pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)", "pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)",
              "pto.tstore(O, d)"]
    params = ", ".join([f"S{i}" for i in range(n)] + ["T", "O"])
    source = (f"\n@pto.kernel\ndef k({params}):\n    with pto.vector():\n        if pto.get_subblock_id() == 0:\n"
              + "".join(f"            {line}\n" for line in lines))
    inputs = [np.asarray(a, dt).reshape(1, -1) for a in lists] + [np.full((1, tmp_words), fill, dt)]
    out, = run_kernel(make_kernels(source).k, inputs, [((1, dst_words), dt)])
    return out.ravel()


def bits(words):
    return np.asarray(words, np.float32).view(np.uint32)


@pytest.mark.parametrize("lists, want", [
    # list 0's NaN head is picked first: nothing compares greater than it; then inf, 1; -0.0 of
    # list 1 before 0.0 of list 2 (neither is greater: the lower list wins), then -inf
    ([[NAN, 0, 1, 1], [INF, 10, -0.0, 11], [0.0, 20, -INF, 21]],
     [NAN, 0, INF, 10, 1, 1, -0.0, 11, 0.0, 20, -INF, 21]),
    # a NaN at list 1's head is never greater, so list 0 and 2 go first: 2 (list 2), 1 (list 0);
    # then list 1 is the first live list and its NaN is picked, then its 5
    ([[1, 0], [NAN, 10, 5, 11], [2, 20]], [2, 20, 1, 0, NAN, 10, 5, 11]),
])
def test_nan_infinities_and_signed_zeros_merge_by_the_cpu_simulations_compare(make_kernels, lists, want):
    """cpu/TMrgSort.hpp TMrgsort: pick = list 0's head if it has one, then each later live list's
    head replaces it only when v[0] > vPick[0] (so a NaN pick is never replaced, a NaN head
    never replaces, and -0.0 / 0.0 tie to the lower list). The words bit for bit (the zeros'
    signs, NaN as the loaded quiet NaN)."""
    total = sum(len(a) for a in lists)
    srcs = "".join(f"src{i}=s{i}, " for i in range(1, len(lists)))
    got = merge_kernel(make_kernels, lists, total, f"pto.tmrgsort(d, s0, {srcs}tmp=t)", total)
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("first", range(4))
def test_each_of_four_lists_can_be_the_one_whose_end_stops_an_exhausted_merge(make_kernels, first):
    """List `first` holds (7, 10 first) (6, 10 first + 1), every other list b (9, 10 b) (1, 10 b + 1).
    Merged: the three 9s, lower list first, then 7 and 6 of list `first`, which is then empty:
    exhausted=True stops there (cpu/TMrgSort.hpp ReachExhausted, vmrgsort4's Xt[12]) after 5
    pairs, and dst's other 3 pairs (6 words) are tmp's old -3 (MovUb2Ub copies dst's 16 words)."""
    lists = [[7, 10 * b, 6, 10 * b + 1] if b == first else [9, 10 * b, 1, 10 * b + 1] for b in range(4)]
    got = merge_kernel(make_kernels, lists, 16, "pto.tmrgsort(d, s0, src1=s1, src2=s2, src3=s3, tmp=t, "
                       "exhausted=True)", 16)
    nines = [w for b in range(4) if b != first for w in (9, 10 * b)]
    np.testing.assert_array_equal(got, nines + [7, 10 * first, 6, 10 * first + 1] + [-3] * 6)


IN_PLACE = """
@pto.kernel
def k(A, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(1, 32, pto.float32)
            t = pto.alloc_tile(1, 24, pto.float32)
            pto.tload(s, A)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tmrgsort(pto.tsubview(s, 0, 0, 1, 24), pto.tsubview(s, 0, 0, 1, 8), src1=pto.tsubview(s, 0, 8, 1, 8),
                         src2=pto.tsubview(s, 0, 16, 1, 8), tmp=t)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, s)
"""


def test_three_lists_merged_over_themselves(make_kernels):
    """The topk kernel's in-place merge with 3 lists of one tile: words 0-7 (5, 0) (4, 1) (2, 2)
    (0, 3), 8-15 (6, 10) (4, 11) (1, 12) (0, 13), 16-23 (7, 20) (3, 21) (2, 22) (-1, 23); dst is
    words 0-23. vmrgsort4 reads every list before MovUb2Ub writes dst: 7 6 5, the 4s of lists 0
    and 1, 3, the 2s of lists 0 and 2, 1, the 0s of lists 0 and 1, -1; words 24-31 (8, 9, ...)
    are not dst's and keep their values."""
    a = np.array([5, 0, 4, 1, 2, 2, 0, 3, 6, 10, 4, 11, 1, 12, 0, 13, 7, 20, 3, 21, 2, 22, -1, 23] + [8, 9] * 4,
                 np.float32)
    out, = run_kernel(make_kernels(IN_PLACE).k, [a], [((32,), "float32")])
    np.testing.assert_array_equal(out, [7, 20, 6, 10, 5, 0, 4, 1, 4, 11, 3, 21, 2, 2, 2, 22, 1, 12, 0, 3, 0, 13,
                                        -1, 23] + [8, 9] * 4)


def test_tmp_may_be_dst_itself(make_kernels):
    """TMRGSORT(d, list, d, s0, s1, s2): A2/A3 merges into d (vmrgsort4), then MovUb2Ub copies d's
    words onto themselves; the header has no rule against it. Lists (4, 0) / (9, 10) (1, 11) /
    (4, 20): (9, 10) (4, 0) (4, 20) (1, 11)."""
    lists = [[4, 0], [9, 10, 1, 11], [4, 20]]
    source = """
@pto.kernel
def k(S0, S1, S2, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s0 = pto.alloc_tile(1, 8, pto.float32, valid=(1, 2))
            s1 = pto.alloc_tile(1, 8, pto.float32, valid=(1, 4))
            s2 = pto.alloc_tile(1, 8, pto.float32, valid=(1, 2))
            d = pto.alloc_tile(1, 8, pto.float32)
            pto.tload(s0, S0)
            pto.tload(s1, S1)
            pto.tload(s2, S2)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tmrgsort(d, s0, src1=s1, src2=s2, tmp=d)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, d)
"""
    out, = run_kernel(make_kernels(source).k, [np.array(a, np.float32).reshape(1, -1) for a in lists],
                      [((1, 8), "float32")])
    np.testing.assert_array_equal(out.ravel(), [9, 10, 4, 0, 4, 20, 1, 11])


TILES = ("a = pto.alloc_tile(1, 64, pto.float32)\nb = pto.alloc_tile(1, 64, pto.float32)\n"
         "d = pto.alloc_tile(1, 256, pto.float32)\nt = pto.alloc_tile(1, 256, pto.float32)\n"
         "r = pto.alloc_tile(2, 64, pto.float32, valid=(1, 64))\n"
         "w = pto.alloc_tile(2, 256, pto.float32, valid=(1, 256))\n"
         "e = pto.alloc_tile(1, 8, pto.float32, valid=(1, 3))\n")


@pytest.mark.parametrize("call, message", [
    ("pto.tmrgsort(d, a, src1=r, tmp=t)", "'r' is a tile of 2 rows"),
    ("pto.tmrgsort(d, a, src1=b, src2=r, tmp=t)", "'r' is a tile of 2 rows"),
    ("pto.tmrgsort(d, a, src1=b, src2=b, src3=r, tmp=t)", "'r' is a tile of 2 rows"),
    ("pto.tmrgsort(w, a, src1=b, tmp=t)", "'w' is a tile of 2 rows"),
    ("pto.tmrgsort(d, a, src1=b, tmp=w)", "'w' is a tile of 2 rows"),
    ("pto.tmrgsort(w, d, 64)", "'w' is a tile of 2 rows"),
    ("pto.tmrgsort(d, a, src1=e, tmp=t)", "'e' has 3 valid words, not a whole number .* pypto_sim takes whole"),
])
def test_tiles_of_more_than_one_row_are_refused_as_checkstatic_does(make_kernels, call, message):
    """A2/A3 TMrgSort.hpp CheckStatic: static_assert(DstTileData::Rows == 1 && TmpTileData::Rows == 1 &&
    Src0..2::Rows == 1, "TMrgsort: the row of Destination and Source tile must be 1.") on the
    tile types (cpu/TMrgSort.hpp also src3's): a 2-row tile with one valid row is refused like
    a 2-row one. A list of 3 float32 words is no rows rule: pypto_sim's own (whole structures)."""
    source = ("\n@pto.kernel\ndef k(X):\n    with pto.vector():\n"
              + "".join(" " * 8 + line + "\n" for line in (TILES + call).split("\n")))
    with pytest.raises(pto.CompileError, match=message) as info:
        make_kernels(source).k.program_for((pto.alloc_tensor(256),))
    assert info.value.line == 13              # the call's line in the module written
    if "rows" in message:
        assert "must be 1" in str(info.value)
    else:
        assert "row of Destination" not in str(info.value)


def test_three_half_lists_of_unequal_lengths_cost_one_vmrgsort4_by_their_bytes(make_kernels):
    """latency_tables/ascend910b.toml's TMRGSORT_LISTS: head 20 + ceil(ceil(bytes / 1024) x 79.72)
    over the lists' bytes (tiles.py's vector rule). 3 float16 lists of 256, 36 and 512 halves
    (64, 9 and 128 structures of 4 halves): 804 halves = 1608 bytes = 2 repeats of 1024:
    20 + ceil(159.44) = 180 (priced by float32 bytes, 3216, it would be 4 repeats: 339)."""
    source = """
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s0 = pto.alloc_tile(1, 256, pto.float16)
            s1 = pto.alloc_tile(1, 48, pto.float16, valid=(1, 36))
            s2 = pto.alloc_tile(1, 512, pto.float16)
            d = pto.alloc_tile(1, 64, pto.float16)
            t = pto.alloc_tile(1, 816, pto.float16)
            pto.tmrgsort(d, s0, src1=s1, src2=s2, tmp=t)
"""
    prof = pto.profile(make_kernels(source).k, grid=(1,), args=(pto.alloc_tensor(64),))
    assert [e.end - e.start for e in prof.timeline if e.warp == 1 and e.inst == "TMRGSORT_LISTS"] == [180]


# ---------------------------------------------------------------- a small random differential run
POOL = [3.0, 1.0, 1.0, 0.0, -0.0, -1.0, INF, -INF, NAN, 2.5]


def cpu_merge(lists, width, exhausted):
    """cpu/TMrgSort.hpp's TMrgsort (multi-list) re-written: all structures of the lists (float64
    words, `width` a structure), or up to the one that empties a list when exhausted."""
    at, out = [0] * len(lists), []
    sizes = [len(a) // width for a in lists]
    while True:
        pick, best = -1, None
        for b, a in enumerate(lists):
            if at[b] < sizes[b] and (pick < 0 or a[at[b] * width] > best):
                pick, best = b, a[at[b] * width]
        if pick < 0:
            return np.array(out)
        out.extend(lists[pick][at[pick] * width:(at[pick] + 1) * width])
        at[pick] += 1
        if exhausted and at[pick] == sizes[pick]:
            return np.array(out)


def random_case(rng, make_kernels):
    """A random merge: 2-4 lists of 1-9 structures (float32 or float16; values from POOL, mostly
    sorted, index bits including float16 NaN patterns), dst up to tmp's words, tmp up to two
    structures longer than the lists, exhausted or not; returns (kernel, args, lists, dst, tmp,
    fill, exhausted)."""
    dt = str(rng.choice(["float32", "float16"]))
    width, blk = 8 // np.dtype(dt).itemsize, 32 // np.dtype(dt).itemsize
    lists = []
    for _ in range(int(rng.integers(2, 5))):
        n = int(rng.integers(1, 10))
        vals = np.array(rng.choice(POOL, n), dt)
        if rng.random() < 0.8:
            vals = np.concatenate([np.sort(vals[~np.isnan(vals)])[::-1], vals[np.isnan(vals)]])
        s = np.zeros((n, width), dt)
        s[:, 0] = vals
        idx = rng.choice([0, 7, 31745, 64513, 70000], n).astype(np.uint32)
        s[:, width // 2:] = idx.view(dt).reshape(n, -1)
        lists.append(s.ravel())
    total = sum(len(a) for a in lists)
    tmp_words = total + int(rng.integers(0, 3)) * width
    dst_words = int(rng.integers(1, tmp_words // width + 1)) * width
    exhausted = bool(rng.random() < 0.5)
    def tile(name, words):
        return f"{name} = pto.alloc_tile(1, {-(-words // blk) * blk}, pto.{dt}, valid=(1, {words}))"
    lines = [tile(f"s{i}", len(a)) for i, a in enumerate(lists)] + [tile("d", dst_words), tile("t", tmp_words)]
    lines += [f"pto.tload(s{i}, S{i})" for i in range(len(lists))] + ["pto.tload(t, T)"]
    srcs = "".join(f"src{i}=s{i}, " for i in range(1, len(lists)))
    lines += ["pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)", "pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)",
              f"pto.tmrgsort(d, s0, {srcs}tmp=t, exhausted={exhausted})",
              "pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)", "pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)",
              "pto.tstore(O, d)", "pto.tstore(P, t)"]
    params = ", ".join([f"S{i}" for i in range(len(lists))] + ["T", "O", "P"])
    source = (f"\n@pto.kernel\ndef k({params}):\n    with pto.vector():\n        if pto.get_subblock_id() == 0:\n"
              + "".join(f"            {line}\n" for line in lines))
    fill = np.array(rng.choice([-7.0, 5.5]), dt)
    def tensor(a):
        t = pto.alloc_tensor(a.nbytes, getattr(pto, a.dtype.name))
        pto.memcpy_h2d(t, a)
        return t
    args = tuple(tensor(a) for a in lists + [np.full(tmp_words, fill, dt), np.zeros(dst_words, dt),
                                             np.zeros(tmp_words, dt)])
    return make_kernels(source).k, args, lists, dst_words, tmp_words, fill, exhausted


def test_random_merges_agree_with_the_cpu_simulation_everywhere(make_kernels):
    """24 random merges (random_case), each run by the numba and the reference executor in timing
    and functional mode: tmp's words are the CPU simulation's merge (cpu_merge) then tmp's old
    words, dst's are tmp's first dst-valid words, bit for bit; every 6th also on both timing
    engines (cycles, bytes, records identical)."""
    rng = np.random.default_rng(54)
    for case in range(24):
        kernel, args, lists, dst_words, tmp_words, fill, exhausted = random_case(rng, make_kernels)
        dt = lists[0].dtype
        merged = cpu_merge([a.astype(np.float64) for a in lists], 8 // dt.itemsize, exhausted).astype(dt)
        tmp = np.full(tmp_words, fill, dt)
        tmp[:len(merged)] = merged
        for way, image in both_executors(kernel, (1, 1, 1), args).items():
            got_t, got_d = tensor_values(image, args[-1]).ravel(), tensor_values(image, args[-2]).ravel()
            assert got_t.tobytes() == tmp.tobytes(), (case, way)
            assert got_d.tobytes() == tmp[:dst_words].tobytes(), (case, way)
        if case % 6 == 0:
            assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
