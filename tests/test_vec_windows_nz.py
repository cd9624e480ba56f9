"""pto.textract and pto.tinsert between two NZ Vec tiles (isa/35_aicore.toml TEXTRACT_V2V,
TINSERT_V2V; A2/A3 TExtract.hpp TExtractVecToVecNZ*, TInsert.hpp / tinsert_common.hpp
TInsertVecToVecNZ*): tiny kernels with values derived by hand and GM in NZ order, the four ways
a launch computes values and both engines agreeing, the headers' NZ asserts as compile errors,
what the race check sees of an insert, and the cost (the ND record's: the copies move exactly
the window)."""
import numpy as np
import pytest

import pypto_sim as pto

from engine_compare import assert_engines_agree, both_executors, dev_array


def nz(a):
    """a (rows x cols float32, rows of 16, cols of c0 = 8) in NZ order: element (r, c) at
    (c // 8) rows 8 + r 8 + c % 8."""
    rows, cols = a.shape
    return a.reshape(rows // 16, 16, cols // 8, 8).transpose(2, 0, 1, 3).ravel()


WINDOW = """
@pto.kernel
def k(S, D, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({sr}, {sc}, pto.float32, layout=pto.NZ)
            dst = pto.alloc_tile({dr}, {dc}, pto.float32, layout=pto.NZ)
            pto.tload(src, S, layout=pto.NZ)
            pto.tload(dst, D, layout=pto.NZ)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            {view}
            pto.{op}({args}, {row}, {col})
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst, layout=pto.NZ)
"""


def _window(make_kernels, op, src, dst, valid, row, col):
    """(kernel, args, out) of WINDOW: NZ float32 tiles holding src and dst (loaded whole from NZ
    GM), the op's window at (row, col) through a whole-tile view of valid `valid` (dst's for
    textract, src's for tinsert)."""
    t = "dst" if op == "textract" else "src"
    shape = dst.shape if op == "textract" else src.shape
    view = f"w = pto.tsubview({t}, 0, 0, {shape[0]}, {shape[1]}, valid={valid})"
    args = "w, src" if op == "textract" else "dst, w"
    mod = make_kernels(WINDOW.format(sr=src.shape[0], sc=src.shape[1], dr=dst.shape[0], dc=dst.shape[1],
                                     view=view, op=op, args=args, row=row, col=col))
    out = pto.alloc_tensor(dst.nbytes, pto.float32)
    return mod.k, (dev_array(nz(src), pto.float32), dev_array(nz(dst), pto.float32), out), out


def _got(image, out, shape):
    """The output tensor's words in NZ order, back as rows x cols."""
    words = image[out.alloc.byte_addr:out.alloc.byte_addr + 4 * shape[0] * shape[1]].view(np.float32)
    return words.reshape(shape[1] // 8, shape[0] // 16, 16, 8).transpose(1, 2, 0, 3).reshape(shape)


def test_textract_copies_the_window_into_dsts_valid_region(make_kernels):
    """src 32 x 24, src[r, c] = 100 r + c; dst 16 x 16, all -1, through a view of valid (5, 10);
    textract at (16, 8) (a fractal row, a c0 column): dst[:5, :10] = src[16:21, 8:18] (1608 ..
    1617, ..., 2008 .. 2017: one whole c0 stripe and two columns of the next, the header's tail
    vcopy), every other word of dst stays -1 (the store moves the whole tile). In GM the words
    are in NZ order: word 0 is dst[0, 0] = 1608, word 8 dst[1, 0] = 1708, word 128 (stripe 1,
    row 0) dst[0, 8] = 1616. The four ways write the same bytes."""
    src = (100 * np.arange(32)[:, None] + np.arange(24)).astype(np.float32)
    dst = np.full((16, 16), -1, np.float32)
    kernel, args, out = _window(make_kernels, "textract", src, dst, (5, 10), 16, 8)
    images = both_executors(kernel, (1, 1, 1), args)
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    want = dst.copy()
    want[:5, :10] = src[16:21, 8:18]
    np.testing.assert_array_equal(_got(first, out, (16, 16)), want)
    words = first[out.alloc.byte_addr:out.alloc.byte_addr + 1024].view(np.float32)
    assert (words[0], words[8], words[128]) == (1608, 1708, 1616)


def test_tinsert_copies_srcs_valid_region_into_dst_at_row_col(make_kernels):
    """src 16 x 16, src[r, c] = 10 r + c, through a view of valid (3, 12); dst 32 x 24, all -1;
    tinsert at (16, 8): dst[16:19, 8:20] = src[:3, :12], the rest of dst -1. Both engines: the
    same cycles, records and HBM bytes."""
    src = (10 * np.arange(16)[:, None] + np.arange(16)).astype(np.float32)
    dst = np.full((32, 24), -1, np.float32)
    kernel, args, out = _window(make_kernels, "tinsert", src, dst, (3, 12), 16, 8)
    slow = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    assert slow["error"] is None and slow["cycles"] > 0
    want = dst.copy()
    want[16:19, 8:20] = src[:3, :12]
    np.testing.assert_array_equal(_got(slow["words"], out, (32, 24)), want)


@pytest.mark.parametrize("op, row, col, placed", [("textract", 13, 21, (0, 0)), ("tinsert", 21, 13, (21, 13))])
def test_a_one_element_window_may_start_anywhere(make_kernels, op, row, col, placed):
    """The scalar path (a 1 x 1 valid window) has no alignment assert: src 32 x 24 (textract) or
    16 x 16 (tinsert), src[r, c] = 100 r + c; textract at (13, 21) puts 1321 at dst (0, 0);
    tinsert at (21, 13) puts src[0, 0] = 0 at dst (21, 13); dst's other words stay -1."""
    src = (100 * np.arange(32)[:, None] + np.arange(24)).astype(np.float32)
    if op == "tinsert":
        src = src[:16, :16].copy()
    dst = np.full((16, 16) if op == "textract" else (32, 24), -1, np.float32)
    kernel, args, out = _window(make_kernels, op, src, dst, (1, 1), row, col)
    pto.launch(kernel, grid=(1,), args=args)
    pto.sync()
    words = np.empty(dst.size, np.float32)
    pto.memcpy_d2h(words, out)
    got = words.reshape(dst.shape[1] // 8, dst.shape[0] // 16, 16, 8).transpose(1, 2, 0, 3).reshape(dst.shape)
    want = dst.copy()
    want[placed] = 1321 if op == "textract" else 0
    np.testing.assert_array_equal(got, want)


NZ = "layout=pto.NZ"


@pytest.mark.parametrize("tiles, call, message", [
    (f"s = pto.alloc_tile(32, 16, pto.float32, {NZ})\nd = pto.alloc_tile(16, 16, pto.float32, {NZ}, valid=(8, 8))",
     "pto.textract(d, s, 8, 0)", "indexRow must be 16-aligned"),
    (f"s = pto.alloc_tile(32, 16, pto.float32, {NZ})\nd = pto.alloc_tile(16, 8, pto.float32, {NZ}, valid=(8, 8))",
     "pto.textract(d, s, 0, 4)", "indexCol must be c0Size-aligned"),
    (f"s = pto.alloc_tile(16, 16, pto.float16, {NZ})\nd = pto.alloc_tile(32, 32, pto.float16, {NZ})",
     "pto.tinsert(d, s, 0, 8)", "indexCol must be c0Size-aligned"),
    (f"s = pto.alloc_tile(16, 64, pto.int8, {NZ})\nd = pto.alloc_tile(16, 32, pto.int8, {NZ}, valid=(16, 3))",
     "pto.textract(d, s, 0, 0)", "TEXTRACT NZ Vec->Vec : DstTile ValidCol bytes must be at least 2-byte"),
    (f"s = pto.alloc_tile(32, 16, pto.float32, {NZ})\nd = pto.alloc_tile(32, 16, pto.float32, {NZ})",
     "pto.tinsert(d, s, 16, 0)", "reaches past 'd'"),
    (f"s = pto.alloc_tile(16, 16, pto.float32, {NZ})\nd = pto.alloc_tile(32, 16, pto.float32, {NZ}, valid=(1, 1))",
     "pto.textract(d, s, 0, 0)", "TEXTRACT NZ Vec->Vec : Destination Rows must not exceed source Rows"),
    (f"s = pto.alloc_tile(32, 16, pto.float32, {NZ})\nd = pto.alloc_tile(16, 16, pto.float32)",
     "pto.textract(d, s, 0, 0)", "layout must match \\(both ND or both NZ\\)"),
    (f"s = pto.alloc_tile(32, 16, pto.float32, {NZ})\nd = pto.alloc_tile(16, 16, pto.float32, layout=pto.ColMajor)",
     "pto.textract(d, s, 0, 0)", "SFractal must match"),
    ("s = pto.alloc_tile(32, 16, pto.float32, layout=pto.ColMajor)\n"
     "d = pto.alloc_tile(16, 16, pto.float32, layout=pto.ColMajor)", "pto.textract(d, s, 0, 0)",
     "no path for two ColMajor Vec tiles"),
    (f"s = pto.alloc_tile(32, 16, pto.float32, {NZ})\nd = pto.alloc_tile(32, 16, pto.float32, {NZ})",
     "pto.tadd(d, d, s)", "NZ Vec tile"),
])
def test_nz_window_errors_cite_the_asserts(make_kernels, tiles, call, message):
    """TExtractVecToVecNZDispatch / TInsertVecToVecNZDispatch's PTO_ASSERTs (a window of more than
    one element starts at a row of 16 and a column of c0, and lies in the whole tile), the
    CheckT*VecToVecNZ static_asserts (an even byte count a row; the window's tile no larger than
    the other, checked by TEXTRACT on its scalar path too), TEXTRACT_IMPL's layout static_asserts
    (ND with NZ; NZ with ColMajor, whose SFractal differs) and two ColMajor tiles (which pass them
    and issue nothing); an NZ tile still refuses the row-walking ops. Each a CompileError at the
    kernel's line."""
    body = tiles + "\n" + call
    source = ("\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n"
              + "\n".join(" " * 8 + line for line in body.split("\n")) + "\n")
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(source).k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))


def test_a_one_element_insert_skips_the_extent_check(make_kernels):
    """TInsertVecToVecNZDispatch calls CheckTInsertVecToVecNZ off the scalar path only: a 1 x 1
    view of a 32 x 16 NZ tile inserts into a 16 x 16 one (its (15, 15)) and compiles."""
    make_kernels(f'''
@pto.kernel
def k(X, O):
    with pto.vector():
        s = pto.alloc_tile(32, 16, pto.float32, {NZ}, valid=(1, 1))
        d = pto.alloc_tile(16, 16, pto.float32, {NZ})
        pto.tinsert(d, s, 15, 15)
''').k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))


def test_the_race_check_sees_the_inserted_window_only(make_kernels):
    """In a sync="manual" kernel whose V -> MTE3 flag is set before a tinsert of a 16 x 16 NZ tile
    into rows 16..31 of a 32 x 16 one (it orders the texpands before it, not the insert), a
    TSTORE of the whole-tile view of valid rows 0..15 (TStoreUb2gmNz2nz: those rows of each c0
    stripe) does not race with the insert, which writes its window only; a store of all 32 rows
    does."""
    for valid_rows, races in ((16, False), (32, True)):
        mod = make_kernels(f'''
@pto.kernel(sync="manual")
def k(O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(16, 16, pto.float32, {NZ})
            d = pto.alloc_tile(32, 16, pto.float32, {NZ})
            pto.texpands(s, 1.0)
            pto.texpands(d, 0.0)
            pto.pipe_barrier(pto.PIPE_V)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tinsert(d, s, 16, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, pto.tsubview(d, 0, 0, 32, 16, valid=({valid_rows}, 16)), {NZ})
''')
        args = (pto.alloc_tensor(32 * 16 * 4, pto.float32),)
        if races:
            with pytest.raises(pto.RaceError, match="TINSERT_V2V"):
                pto.launch(mod.k, grid=(1,), args=args, check="race")
                pto.sync()
        else:
            pto.launch(mod.k, grid=(1,), args=args, check="race")
            pto.sync()


def test_the_cost_is_the_ub_to_ub_copy(make_kernels):
    """latency_tables/ascend910b.toml TEXTRACT_V2V / TINSERT_V2V: 1 fixed cycle + bytes /
    (256 / 0.43 = 595.3 B/cycle), the ND rule: the NZ copy_ubuf_to_ubuf moves the window's rows of
    each c0 stripe, validCol / c0 bursts of validRow 32-byte blocks, the window's bytes. A 16 x 32
    float32 window (4 bursts of 16 blocks, 2048 bytes): 1 + ceil(3.44) = 5; a 32 x 64 one into a
    64 x 64 tile (8 bursts of 32 blocks, 8192 bytes): 1 + ceil(13.76) = 15."""
    mod = make_kernels(f'''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(64, 64, pto.float32, {NZ})
            d = pto.alloc_tile(16, 32, pto.float32, {NZ})
            w = pto.alloc_tile(32, 64, pto.float32, {NZ})
            pto.textract(d, s, 16, 32)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tinsert(s, w, 32, 0)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    got = [(e.inst, e.end - e.start) for e in prof.timeline if e.warp == 1 and e.inst.endswith("_V2V")]
    assert got == [("TEXTRACT_V2V", 5), ("TINSERT_V2V", 15)]
