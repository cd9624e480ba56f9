"""pto-isa's operand forms on the AI core (issue 25, item 2), each against a hand-derived answer:
row reductions into a RowMajor (ND) dst and TROWEXPAND from an ND src (A2/A3's TRowReduceCheck
and TRowExpand.hpp), the optional tmp operand (A2/A3's scratch: written), elementwise ops on
tiles of different shapes whose valid regions match (A2/A3's PTO_ASSERTs), int32 TRECIP
(C's truncating 1 / x) and int32 TDIV (not an A2/A3 instruction). TLOAD into Bias:
tests/test_aicore_legality.py. pto-isa's own st cases: tests/test_ptoisa_st_*.py."""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import compile_error, run


def vector_kernel(body):
    """A kernel k(X, O) whose AIV0 runs body (already indented by 12)."""
    return "@pto.kernel\ndef k(X, O):\n    with pto.vector():\n        if pto.get_subblock_id() == 0:\n" + body


# ---------------------------------------------------------------- row reductions and expansion
def test_trowsum_into_a_rowmajor_dst_writes_its_first_column_only(make_kernels):
    """src[r, c] = r + c (8 x 16): row r sums to 16 r + (0 + ... + 15) = 16 r + 120, written to
    dst[r, 0]; dst's other columns keep the 7 they were loaded with (A2/A3 writes dst + r *
    Cols, TRowReduceOps.hpp). tmp is pto-isa's positional third operand."""
    x = np.full((16, 16), 7, np.int32)
    x[:8] = np.arange(8)[:, None] + np.arange(16)
    got = run(make_kernels, vector_kernel("""\
            s = pto.alloc_tile(8, 16, pto.int32)
            tmp = pto.alloc_tile(8, 16, pto.int32)
            d = pto.alloc_tile(8, 16, pto.int32)
            pto.tload(s, X)
            pto.tload(d, X + 128)
            pto.trowsum(d, s, tmp)
            pto.tstore(O, d)
"""), x, (8, 16), np.int32)
    want = np.full((8, 16), 7, np.int32)
    want[:, 0] = 16 * np.arange(8) + 120
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op, want", [("trowmax", 15), ("trowmin", 0)])
def test_a_row_reduction_into_an_nd_tile_with_one_valid_column(make_kernels, op, want):
    """pto-isa's st kernels reduce into a rows x 32 RowMajor tile with valid (rows, 1) and store
    that column with a GM row stride of 1. src[r, c] = r c: max over c < 16 is 15 r, min 0."""
    x = (np.arange(8)[:, None] * np.arange(16)).astype(np.float32)
    got = run(make_kernels, vector_kernel(f"""\
            s = pto.alloc_tile(8, 16, pto.float32)
            d = pto.alloc_tile(8, 32, pto.float32, valid=(8, 1))
            pto.tload(s, X)
            pto.{op}(d, s, s)
            pto.tstore(O, d, stride=1)
"""), x, (8,), np.float32)
    np.testing.assert_array_equal(got, want * np.arange(8))


def test_trowexpand_broadcasts_the_first_column_of_an_nd_src(make_kernels):
    """src[r, c] = 10 r + c: TRowExpand.hpp reads src + r * RowStride, element (r, 0) = 10 r."""
    x = (10 * np.arange(8)[:, None] + np.arange(16)).astype(np.float32)
    got = run(make_kernels, vector_kernel("""\
            s = pto.alloc_tile(8, 16, pto.float32)
            d = pto.alloc_tile(8, 16, pto.float32)
            pto.tload(s, X)
            pto.trowexpand(d, s)
            pto.tstore(O, d)
"""), x, (8, 16), np.float32)
    np.testing.assert_array_equal(got, np.repeat(10.0 * np.arange(8)[:, None], 16, 1))


@pytest.mark.parametrize("body, message", [
    ("s = pto.alloc_tile(8, 16, pto.float32)\nd = pto.alloc_tile(8, 8, pto.float32, layout=pto.ColMajor)\n"
     "pto.trowsum(d, s)", r"'d' is a 8 x 8 ColMajor \(DN\) tile; a row reduction writes an R x 1 DN column or a "
                          r"RowMajor \(ND\) tile's first column \(TRowReduceCheck"),
    ("s = pto.alloc_tile(8, 1, pto.float32, layout=pto.ColMajor)\n"
     "d = pto.alloc_tile(8, 8, pto.float32, layout=pto.ColMajor)\npto.trowexpand(d, s)",
     r"'d' is ColMajor; TROWEXPAND writes a RowMajor \(ND\) tile .*TRowExpand.hpp"),
    ("s = pto.alloc_tile(8, 16, pto.float32)\nd = pto.alloc_tile(8, 8, pto.float32)\n"
     "t = pto.alloc_tile(8, 16, pto.int32)\npto.trowmax(d, s, t)", r"tmp 't' holds int32, 's' float32"),
    ("s = pto.alloc_tile(8, 8, pto.float32)\nd = pto.alloc_tile(8, 8, pto.float32)\n"
     "t = pto.alloc_tile(8, 8, pto.int32)\npto.ttrans(d, s, t)", r"ttrans: tmp 't' holds int32, 'd' float32"),
])
def test_the_layouts_and_tmp_a2a3_refuses(make_kernels, body, message):
    compile_error(make_kernels, body, message)


RACY_TMP = """\
            s = pto.alloc_tile(8, 16, pto.float32)
            tmp = pto.alloc_tile(8, 16, pto.float32)
            d = pto.alloc_tile(8, 1, pto.float32, layout=pto.ColMajor)
            pto.tload(s, X)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tload(tmp, X)
            pto.trowsum(d, s{tmp})
"""


@pytest.mark.parametrize("tmp", ["", ", tmp"])
def test_tmp_counts_as_written_for_the_race_check(make_kernels, tmp):
    """A2/A3 writes tmp (TRowSum.hpp's vcadd tree), so a tload into it that no flag orders
    before the trowsum races it; without tmp the same kernel is race-free (the flag orders the
    load of s)."""
    mod = make_kernels("@pto.kernel(sync='manual')\n" + vector_kernel(RACY_TMP.format(tmp=tmp))[len("@pto.kernel\n"):])
    x = pto.alloc_tensor(8 * 16 * 4, pto.float32)
    pto.memcpy_h2d(x, np.ones((8, 16), np.float32))
    args = (x, pto.alloc_tensor(256))
    if tmp:
        with pytest.raises(pto.RaceError, match=r"write-after-write race on tile 'tmp'.*TROWSUM.*TLOAD"):
            pto.profile(mod.k, grid=(1,), args=args, check="race")
    else:
        pto.profile(mod.k, grid=(1,), args=args, check="race")


# ---------------------------------------------------------------- elementwise shapes
def test_tadds_on_tiles_of_different_shapes_covers_their_common_valid_region(make_kernels):
    """s: 8 x 16 with valid (4, 8); d: 8 x 32 with valid (4, 8) (pto-isa's TADDS case7 in small).
    d[r, c] = s[r, c] + 0.5 = 16 r + c + 0.5 inside the valid region; d's other elements stay
    the zeros a tile starts with (A2/A3 walks validRow x validCol at each tile's RowStride,
    TBinSOp.hpp), though s's padding holds zeros that + 0.5 would have made 0.5. The whole of d
    is stored through a full-tile view."""
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    got = run(make_kernels, vector_kernel("""\
            s = pto.alloc_tile(8, 16, pto.float32, valid=(4, 8))
            d = pto.alloc_tile(8, 32, pto.float32, valid=(4, 8))
            pto.tload(s, X, stride=16)
            pto.tadds(d, s, 0.5)
            pto.tstore(O, pto.treshape(d, 8, 32))
"""), x, (8, 32), np.float32)
    want = np.zeros((8, 32), np.float32)
    want[:4, :8] = x[:4, :8] + 0.5
    np.testing.assert_array_equal(got, want)


def test_tadd_and_tcvt_follow_the_same_rule(make_kernels):
    """A binary op with its three tiles at three pitches, then a conversion between tiles of
    different shapes: a = 16 r + c, b = 100 (4 x 8 valid of 4 x 16, 8 x 8 and 4 x 32 tiles);
    a + b converted to int32 is 16 r + c + 100."""
    x = np.arange(4 * 16, dtype=np.float32).reshape(4, 16)
    got = run(make_kernels, vector_kernel("""\
            a = pto.alloc_tile(4, 16, pto.float32, valid=(4, 8))
            b = pto.alloc_tile(8, 8, pto.float32, valid=(4, 8))
            d = pto.alloc_tile(4, 32, pto.float32, valid=(4, 8))
            i = pto.alloc_tile(4, 8, pto.int32)
            pto.tload(a, X, stride=16)
            pto.texpands(b, 100.0)
            pto.tadd(d, a, b)
            pto.tcvt(i, d)
            pto.tstore(O, i)
"""), x, (4, 8), np.int32)
    np.testing.assert_array_equal(got, x[:, :8].astype(np.int32) + 100)


@pytest.mark.parametrize("body, message", [
    ("s = pto.alloc_tile(8, 16, pto.float32, valid=(4, 8))\nd = pto.alloc_tile(8, 16, pto.float32, valid=(4, 16))\n"
     "pto.tadds(d, s, 1.0)", r"tadds: 's' has 8 valid columns but 'd' 16; A2/A3 asserts that the valid regions "
                             r"match \(e.g. TADDS_IMPL in include/pto/npu/a2a3/TAddS.hpp"),
    ("a = pto.alloc_tile(8, 16, pto.float32)\nb = pto.alloc_tile(4, 16, pto.float32)\npto.tadd(a, a, b)",
     r"tadd: 'b' has 4 valid rows but 'a' 8"),
    ("a = pto.alloc_tile(8, 16, pto.float32)\nb = pto.alloc_tile(8, 32, pto.float32)\npto.tadd(a, a, b, n=64)",
     r"'b' is 8 x 32 but 'a' is 8 x 16; n= counts the words of tiles of one shape"),
])
def test_elementwise_shape_refusals(make_kernels, body, message):
    compile_error(make_kernels, body, message)


# ---------------------------------------------------------------- int32 division
def test_int32_trecip_is_cs_truncating_division_of_one(make_kernels):
    """TRECIP is TDIVS(dst, 1, src) (pto_instr.hpp), which A2/A3 runs for int32 as C's
    `1 / src[i]` (TSDiv_naive, TDivS.hpp): truncation toward zero, so 1 -> 1, -1 -> -1 and
    every other nonzero value -> 0; a zero (C's undefined behaviour) gives 0 here."""
    x = np.array([[1, -1, 2, -2, 3, 7, -9, 0]], np.int32)
    got = run(make_kernels, vector_kernel("""\
            s = pto.alloc_tile(1, 8, pto.int32)
            d = pto.alloc_tile(1, 8, pto.int32)
            pto.tload(s, X)
            pto.trecip(d, s)
            pto.tstore(O, d)
"""), x, (1, 8), np.int32)
    np.testing.assert_array_equal(got, [[1, -1, 0, 0, 0, 0, 0, 0]])


def test_int32_tdiv_is_refused_as_a2a3_refuses_it(make_kernels):
    """TDivCheck's static_assert takes half and float only (include/pto/npu/a2a3/TDiv.hpp;
    docs/isa/TDIV.md lists int32 for A5)."""
    compile_error(make_kernels, "a = pto.alloc_tile(8, 8, pto.int32)\npto.tdiv(a, a, a)",
                  r"pto.tdiv needs tiles of one dtype among float32, float16, got int32")


RACY_SEL_TMP = """\
            a = pto.alloc_tile(2, 32, pto.float32)
            m = pto.alloc_tile(2, 32, pto.uint8)
            d = pto.alloc_tile(2, 32, pto.float32)
            tmp = pto.alloc_tile(1, 32, pto.uint8)
            pto.tload(a, X)
            pto.tload(m, M)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tload(tmp, M)
            pto.tsel(d, m, a, a{tmp})
"""


@pytest.mark.parametrize("tmp", ["", ", tmp"])
def test_tsel_tmp_counts_as_written_for_the_race_check(make_kernels, tmp):
    """A2/A3's TSel.hpp writes each mask row's address into tmp (vector_dup, then set_cmpmask
    reads it), so a tload into tmp that no flag orders before the tsel races it; without tmp
    the kernel is race-free (the flag orders the loads of a and m). tmp is pto-isa's st
    kernel's 1 x 32 uint8 tile (32 bytes; float32 data needs 2 uint32 = 8)."""
    src = vector_kernel(RACY_SEL_TMP.format(tmp=tmp))[len("@pto.kernel\n"):].replace("def k(X, O)", "def k(X, M, O)")
    mod = make_kernels("@pto.kernel(sync='manual')\n" + src)
    x = pto.alloc_tensor(2 * 32 * 4, pto.float32)
    pto.memcpy_h2d(x, np.ones((2, 32), np.float32))
    m = pto.alloc_tensor(2 * 32, pto.uint8)
    pto.memcpy_h2d(m, np.full((2, 32), 0xFF, np.uint8))
    args = (x, m, pto.alloc_tensor(256))
    if tmp:
        with pytest.raises(pto.RaceError, match=r"write-after-write race on tile 'tmp'.*TSEL.*TLOAD"):
            pto.profile(mod.k, grid=(1,), args=args, check="race")
    else:
        pto.profile(mod.k, grid=(1,), args=args, check="race")



def test_tsels_tmp_computes_alike_in_any_dtype(make_kernels):
    """TSels.hpp writes the scalar to tmp[0] through a pointer of the data's type, whatever tmp's
    dtype (pto-isa's st kernel passes a 1 x 32 uint8 tile): tsels(..., tmp=t) with the causal
    mask's values (a[r, c] where the mask bit is set, else -inf: mask 0x0F keeps columns 0-3 of
    every 8) computes as without tmp, with t float32 or uint8."""
    x = np.arange(2 * 32, dtype=np.float32).reshape(2, 32)
    want = np.where((np.arange(32) % 8) < 4, x, -np.inf)
    for tmp in ("pto.alloc_tile(1, 8, pto.float32)", "pto.alloc_tile(1, 32, pto.uint8)"):
        got = run(make_kernels, vector_kernel(f"""\
            a = pto.alloc_tile(2, 32, pto.float32)
            m = pto.alloc_tile(2, 32, pto.uint8)
            t = {tmp}
            pto.tload(a, X)
            pto.texpands(m, 15)
            pto.tsels(a, m, a, -float("inf"), tmp=t)
            pto.tstore(O, a)
"""), x, (2, 32), np.float32)
        np.testing.assert_array_equal(got, want)
