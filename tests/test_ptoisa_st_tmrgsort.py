"""pto-isa's on-device st cases of TMRGSORT's multi-list form (tests/npu/a2a3/src/st/testcase/
tmrgsort at 3186c381: main.cpp's TMrgsortMulti, tmrgsort_kernel.cpp's RunTMrgsort, gen_data.py),
in the AI-core API as the kernel writes them: TLOAD of 2 to 4 one-row lists, TMRGSORT<...,
EXHAUSTED>(dst, executedNumList, tmp, src0, src1[, src2[, src3]]) into a dst of TOPK words, TSTORE
of dst. The golden is gen_data.py's, in numpy; the comparison main.cpp's (ResultCmp over the
output's bytes as floats, eps 0.001, after HandleOutputData for the exhausted cases), and then
the same words bit for bit. The one-list cases (case_single*, case_topk*) are in
test_ptoisa_st_movement.py.

Ported: case_multi1, case_multi2 (4 lists), case_multi3 (4 lists, the last shorter),
case_multi4 (3 lists, dst the top 64 of 160 structures), case_exhausted1 (2 lists) and
case_exhausted2 (3 lists, float16). Not ported: nothing; the executed-count list the kernels
declare (MrgSortExecutedNumList) is not read by them, and pypto_sim does not return it.

Beside the ports, the form's rules as small kernels with hand-derived values: tie order across
3 and 4 lists, a top-k dst, the exhausted stop and what dst then holds, the cost, the race
check's reads of every list, both timing engines, and A2/A3's static_asserts as compile errors.
"""
import numpy as np
import pytest

import pypto_sim as pto
from engine_compare import assert_engines_agree
from ptoisa_st import result_cmp, run_kernel

# gen_data.py's case_params_list up to the multi-list cases, in its order: np.random.seed(19)
# once, then one uniform(0, 1) draw of (input_num, src0_col / 2) per case, so each case's data
# follows the draws of the cases before it. (case, dtype, src0..src3 cols, input_num, topk, exhausted)
MULTI_CASES = [("case_multi1", "float32", (128, 128, 128, 128), 4, 512, False),
               ("case_multi2", "float16", (128, 128, 128, 128), 4, 512, False),
               ("case_multi3", "float32", (128, 128, 128, 64), 4, 448, False),
               ("case_multi4", "float32", (128, 128, 64, 0), 3, 128, False),
               ("case_exhausted1", "float32", (64, 64, 0, 0), 2, 128, True),
               ("case_exhausted2", "float16", (256, 256, 256, 0), 3, 768, True)]


def structures(values, indices, dt):
    """gen_data.py's write_file: 8-byte structures, float32 'fI' (value, uint32 index) or
    float16 'e2xI' (value, two zero bytes, uint32 index), as uint8."""
    n = len(values)
    out = np.zeros((n, 8), np.uint8)
    width = np.dtype(dt).itemsize
    out[:, :width] = np.asarray(values, dt).reshape(n, 1).view(np.uint8)
    out[:, 4:] = np.asarray(indices, np.uint32).reshape(n, 1).view(np.uint8)
    return out.ravel()


def gen_case(name):
    """gen_data.py's gen_golden_data for the multi-list case `name`: (the lists' structures as
    bytes, the golden's bytes). Each list i is row i of the draw sorted by value descending
    (stable; indices i * cols + column), cut to src{i}_col / 2 structures; the golden is all
    lists' structures sorted by value descending (stable: the lower list first on a tie), the
    first topk / 2 kept and the rest zero; for an exhausted case, handle_exhausted_list zeroes
    everything after the last occurrence of each list's last value in turn."""
    np.random.seed(19)
    for case, dt, cols4, num, topk, exhausted in MULTI_CASES:
        cols = cols4[0] // 2
        draw = np.random.uniform(low=0, high=1, size=(num, cols)).astype(dt)
        if case == name:
            break
    idx = np.arange(num * cols).astype(np.uint32).reshape(num, cols)
    order = np.argsort(-draw, kind="stable", axis=1)
    sv, si = np.take_along_axis(draw, order, axis=1), np.take_along_axis(idx, order, axis=1)
    lists = [(sv[i, :cols4[i] // 2], si[i, :cols4[i] // 2]) for i in range(num)]
    last = [sv[i, cols - 1] for i in range(num)]
    fv, fi = np.concatenate([v for v, _ in lists]), np.concatenate([i for _, i in lists])
    g = np.argsort(-fv, kind="stable")
    k = topk // 2
    gv = np.concatenate([fv[g][:k], np.zeros(num * cols - k, fv.dtype)])
    gi = np.concatenate([fi[g][:k], np.zeros(num * cols - k, np.uint32)])
    if exhausted:
        for tar in last:                          # find_and_zero, then zero_after_index
            hits = np.flatnonzero(gv == tar)
            if len(hits):
                gv[hits[-1] + 1:] = 0
                gi[hits[-1] + 1:] = 0
    return [structures(v, i, dt) for v, i in lists], structures(gv, gi, dt)


MULTI_KERNEL = """
@pto.kernel
def k({params}, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
{tiles}
            dst = pto.alloc_tile(1, {topk}, pto.{dt})
            tmp = pto.alloc_tile(1, {tmp}, pto.{dt})
{loads}
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tmrgsort(dst, s0, {srcs}tmp=tmp, exhausted={exhausted})
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


def multi_source(dt, cols4, num, topk, exhausted):
    """RunTMrgsort<T, ..., kTCols_, kTCols_src1..3, TOPK, LISTNUM, EXHAUSTED> (a half kernel's
    template words are twice the float's, TYPE_COEF): list tiles of 1 x kTCols_ with valid
    kTCols_srcN, dst 1 x TOPK, tmp 1 x kTCols_ x LISTNUM; TASSIGN's placement is pypto_sim's."""
    coef = 4 // np.dtype(dt).itemsize
    pad = " " * 12
    tiles = "\n".join(f"{pad}s{i} = pto.alloc_tile(1, {cols4[0] * coef}, pto.{dt}, valid=(1, {cols4[i] * coef}))"
                      for i in range(num))
    loads = "\n".join(f"{pad}pto.tload(s{i}, S{i})" for i in range(num))
    srcs = "".join(f"src{i}=s{i}, " for i in range(1, num))
    return MULTI_KERNEL.format(params=", ".join(f"S{i}" for i in range(num)), tiles=tiles, loads=loads, srcs=srcs,
                               topk=topk * coef, tmp=cols4[0] * coef * num, dt=dt, exhausted=exhausted)


def handle_output_data(golden, out):
    """main.cpp's HandleOutputData: from the golden's last float word back while it is 0.0,
    the output's word is set to 0.0 too (what the device leaves past an exhausted merge)."""
    out = out.copy()
    i = len(golden) - 1
    while i > 0 and golden[i] == 0.0:
        out[i] = 0.0
        i -= 1
    return out


@pytest.mark.parametrize("case", [c[0] for c in MULTI_CASES])
def test_tmrgsort_multi(make_kernels, case):
    """TMRGSORTTest.<case> (TMrgsortMulti): gen_data.py's lists and golden (gen_case); the
    output tensor holds LISTNUM x kGCols float words (starting at zero, where TSTORE's TOPK
    words do not reach). main.cpp: HandleOutputData for the exhausted cases, then ResultCmp
    eps 0.001 over the words as floats; here also bit for bit."""
    _, dt, cols4, num, topk, exhausted = next(c for c in MULTI_CASES if c[0] == case)
    lists, golden = gen_case(case)
    kernel = make_kernels(multi_source(dt, cols4, num, topk, exhausted)).k
    out, = run_kernel(kernel, [a.view(dt).reshape(1, -1) for a in lists],
                      [((1, num * cols4[0] * 4 // np.dtype(dt).itemsize), dt)])
    want, got = golden.view(np.float32), out.view(np.float32).ravel()
    if exhausted:
        got = handle_output_data(want, got)
        assert (want == 0).sum() > 0         # the merge stopped early: the golden has a zero tail
    assert result_cmp(want, got, 0.001)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


# ------------------------------------------------------------------ the form's rules, by hand
def run_merge(make_kernels, lists, dst_words, call, tmp_words=None, fill=None):
    """Load each float32 list (pairs as words) into its own tile, fill tmp from `fill` (a word
    value) or leave it, merge with `call` (which names s0.., d and t), store d: the words. The
    tiles' rows are whole 32-byte blocks, their valid regions the lists', dst's, tmp's words."""
    n = len(lists)
    tmp_words = tmp_words or sum(len(a) for a in lists)
    def tile(name, words):                # rows of whole 32-byte blocks, valid the words
        return f"{name} = pto.alloc_tile(1, {-(-words // 8) * 8}, pto.float32, valid=(1, {words}))"
    lines = [tile(f"s{i}", len(a)) for i, a in enumerate(lists)] + [tile("d", dst_words), tile("t", tmp_words)]
    lines += [f"pto.tload(s{i}, S{i})" for i in range(n)] + (["pto.tload(t, T)"] if fill is not None else [])
    lines += ["pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)", "pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)", call,
              "pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)", "pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)",
              "pto.tstore(O, d)"]
    params = ", ".join([f"S{i}" for i in range(n)] + ["T", "O"])
    source = (f"\n@pto.kernel\ndef k({params}):\n    with pto.vector():\n        if pto.get_subblock_id() == 0:\n"
              + "".join(f"            {line}\n" for line in lines))
    inputs = [np.asarray(a, np.float32).reshape(1, -1) for a in lists]
    inputs.append(np.full((1, tmp_words), 0.0 if fill is None else fill, np.float32))
    out, = run_kernel(make_kernels(source).k, inputs, [((1, dst_words), "float32")])
    return out.ravel()


def pairs(values, first_index):
    """A list of (value, index) float32 pairs as words: index words first_index, +1, ..."""
    return np.ravel([(v, first_index + p) for p, v in enumerate(values)])


def test_four_lists_merge_by_value_the_lower_list_first_on_a_tie(make_kernels):
    """List b holds the values 2 (L_b - 1 - p), p < L_b (L = 6, 3, 6, 4 pairs: every list has
    value 4 and 2 and 0, lists 0 and 2 also 10 .. 6), its index words 100 b + p. Merged: by
    value descending, and within one value list 0, 1, 2, 3 in turn (cpu/TMrgSort.hpp: a later
    list replaces the pick only when strictly greater). dst takes all 19 pairs."""
    lens = (6, 3, 6, 4)
    lists = [pairs([2 * (n - 1 - p) for p in range(n)], 100 * b) for b, n in enumerate(lens)]
    got = run_merge(make_kernels, lists, 38, "pto.tmrgsort(d, s0, src1=s1, src2=s2, src3=s3, tmp=t)")
    want = [(v, 100 * b + n - 1 - v // 2) for v in range(10, -1, -2) for b, n in enumerate(lens) if v < 2 * n]
    np.testing.assert_array_equal(got, np.ravel(want).astype(np.float32))


def test_three_lists_into_a_shorter_dst_keep_the_top_of_the_merge(make_kernels):
    """3 lists (9, 3), (5, 1) / (8, 12), (2, 10) / (7, 20), (6, 21), (1, 22): 7 pairs merged into
    tmp, and dst of 8 words (case_multi4's top-k) gets tmp's first 8: (9, 3) (8, 12) (7, 20)
    (6, 21)."""
    lists = [[9, 3, 5, 1], [8, 12, 2, 10], [7, 20, 6, 21, 1, 22]]
    got = run_merge(make_kernels, lists, 8, "pto.tmrgsort(d, s0, src1=s1, src2=s2, tmp=t)")
    np.testing.assert_array_equal(got, [9, 3, 8, 12, 7, 20, 6, 21])


@pytest.mark.parametrize("exhausted, tail", [(False, [1, 2]), (True, [-3, -3])])
def test_an_exhausted_merge_stops_when_a_list_runs_out_and_dst_gets_tmps_old_words(make_kernels, exhausted, tail):
    """List 0 (9, 0) (5, 1) (1, 2), list 1 (8, 10) (7, 11) (6, 12) (4, 13); tmp holds -3 in
    every word before. The merge takes 9, 8, 7, 6, 5, 4: list 1 is then empty. exhausted=False
    goes on with (1, 2); exhausted=True stops there (vmrgsort4's Xt[12]), and MovUb2Ub still
    copies dst's 14 words from tmp, so the last two are tmp's old -3, -3."""
    lists = [[9, 0, 5, 1, 1, 2], [8, 10, 7, 11, 6, 12, 4, 13]]
    got = run_merge(make_kernels, lists, 14, f"pto.tmrgsort(d, s0, src1=s1, tmp=t, exhausted={exhausted})",
                    fill=-3.0)
    np.testing.assert_array_equal(got, [9, 0, 8, 10, 7, 11, 6, 12, 5, 1, 4, 13] + tail)


def test_four_lists_cost_what_the_mock_prices_one_vmrgsort4(make_kernels):
    """latency_tables/ascend910b.toml's TMRGSORT_LISTS: head 20 + ceil(repeats x 79.72), a
    repeat 1024 bytes of the merged lists (pto-isa's CCE mock prices vmrgsort4 by its repeat
    count alone, 1 in the multi-list forms, whatever the mask of lists: the table's volume
    price is the stated assumption, the same for 2, 3 and 4 lists). 4 x 128 float32 words =
    2048 bytes: 20 + ceil(159.44) = 180; 3 x 64 words = 768 bytes: 20 + ceil(79.72) = 100."""
    source = """
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(1, 512, pto.float32)
            d = pto.alloc_tile(1, 512, pto.float32)
            t = pto.alloc_tile(1, 512, pto.float32)
            pto.tmrgsort(d, pto.tsubview(s, 0, 0, 1, 128), src1=pto.tsubview(s, 0, 128, 1, 128),
                         src2=pto.tsubview(s, 0, 256, 1, 128), src3=pto.tsubview(s, 0, 384, 1, 128), tmp=t)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tmrgsort(pto.tsubview(d, 0, 0, 1, 192), pto.tsubview(s, 0, 0, 1, 64),
                         src1=pto.tsubview(s, 0, 64, 1, 64), src2=pto.tsubview(s, 0, 128, 1, 64), tmp=t)
"""
    prof = pto.profile(make_kernels(source).k, grid=(1,), args=(pto.alloc_tensor(64),))
    assert [e.end - e.start for e in prof.timeline if e.warp == 1 and e.inst == "TMRGSORT_LISTS"] == [180, 100]


RACE = """
@pto.kernel(sync="manual")
def k(A, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s0 = pto.alloc_tile(1, 8, pto.float32)
            s1 = pto.alloc_tile(1, 8, pto.float32)
            s2 = pto.alloc_tile(1, 8, pto.float32)
            s3 = pto.alloc_tile(1, 8, pto.float32)
            d = pto.alloc_tile(1, 32, pto.float32)
            t = pto.alloc_tile(1, 32, pto.float32)
            pto.tload(s0, A)
            pto.tload(s1, A)
            pto.tload(s2, A)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tload(s3, A)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tmrgsort(d, s0, src1=s1, src2=s2, src3=s3, tmp=t)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, d)
"""


def test_racecheck_sees_the_fourth_list_read(make_kernels):
    """The flag is set before src3's TLOAD (line 17), so nothing orders the merge (line 19) on V
    after it: check="race" names tile 's3' and both lines; the first three lists are ordered."""
    with pytest.raises(pto.RaceError, match=r"(?s)(?=.*line 17)(?=.*line 19)(?=.*'s3')"):
        pto.launch(make_kernels(RACE).k, grid=(1,), args=(pto.alloc_tensor(32 * 4), pto.alloc_tensor(32 * 4)),
                   check="race")
        pto.sync()


def test_both_timing_engines_run_the_exhausted_four_list_merge(make_kernels):
    """case_exhausted-like: 4 lists of gen_data's random sorted pairs, exhausted=True, on the
    SimPy model and the compiled loop: cycles, HBM bytes and records identical."""
    source = multi_source("float32", (64, 64, 32, 64), 4, 224, True)
    A = [pto.alloc_tensor(64 * 4, pto.float32) for _ in range(4)]
    rng = np.random.default_rng(5)
    for i, a in enumerate(A):
        v = np.sort(rng.integers(0, 9, 32))[::-1]
        pto.memcpy_h2d(a, pairs(v, 100 * i).astype(np.float32))
    assert_engines_agree(make_kernels(source).k, (*A, pto.alloc_tensor(224 * 4, pto.float32)), (1, 1, 1),
                         (32, 1, 1))


TILES = ("a = pto.alloc_tile(1, 64, pto.float32)\nb = pto.alloc_tile(1, 64, pto.float32)\n"
         "c = pto.alloc_tile(1, 64, pto.float32)\nd = pto.alloc_tile(1, 192, pto.float32)\n"
         "t = pto.alloc_tile(1, 192, pto.float32)\nh = pto.alloc_tile(1, 128, pto.float16)\n"
         "e = pto.alloc_tile(1, 8, pto.float32, valid=(1, 7))\n")


@pytest.mark.parametrize("call, message", [
    ("pto.tmrgsort(d, a, src1=b, src2=h, tmp=t)", r"'h' holds float16 and 'd' float32 \(\"TMrgsort: Destination "
                                                  "and Source tile data types must be the same"),
    ("pto.tmrgsort(d, a, src1=b, src2=c)", "the multi-list form takes tmp"),
    ("pto.tmrgsort(d, a, src1=b, src2=c, tmp=pto.tsubview(t, 0, 0, 1, 128))",
     "tmp 't_subview' holds 128 words, fewer than the 192 merged words"),
    ("pto.tmrgsort(d, a, src1=b, src2=pto.tsubview(t, 0, 0, 1, 64), tmp=t)", "tmp 't' shares words with 't_subview'"),
    ("pto.tmrgsort(pto.tsubview(t, 0, 64, 1, 64), a, src1=b, src2=c, tmp=t)", "tmp 't' shares words with"),
    ("pto.tmrgsort(d, a, src1=b, src3=c, tmp=t)", "src3 without src2"),
    ("pto.tmrgsort(d, a, 64, src1=b, tmp=t)", "give block_len .* or src1 .*, not both"),
    ("pto.tmrgsort(d, a, 64, exhausted=True)", "exhausted belongs to the multi-list form"),
    ("pto.tmrgsort(d, a, src1=b, src2=e, tmp=t)", r"'e' has 7 valid words, not a whole number .* of \(value, index\) "
                                                 "structures of 2 words"),
])
def test_multi_list_operand_errors_name_the_rule(make_kernels, call, message):
    """TMrgSort.hpp's CheckStatic (one dtype, rows 1), the multi-list form's tmp (TMRGSORT.md:
    at least the lists' words; written by vmrgsort4 while it reads the lists, then copied to
    dst, so it shares no words with them, nor with dst but for tmp = dst), pto-isa's list
    orders, as CompileErrors at the line."""
    source = ("\n@pto.kernel\ndef k(X):\n    with pto.vector():\n"
              + "".join(" " * 8 + line + "\n" for line in (TILES + call).split("\n")))
    with pytest.raises(pto.CompileError, match=message) as info:
        make_kernels(source).k.program_for((pto.alloc_tensor(256),))
    assert info.value.line == 13
