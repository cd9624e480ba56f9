"""pto.textract and pto.tinsert between two Vec tiles (isa/35_aicore.toml TEXTRACT_V2V,
TINSERT_V2V; A2/A3 TExtract.hpp / TInsert.hpp, their ND Vec -> Vec paths): tiny kernels with
values derived by hand, the four ways a launch computes values and both engines agreeing, the
headers' asserts as compile errors, what the race check sees of an insert, and the cost."""
import numpy as np
import pytest

import pypto_sim as pto

from engine_compare import assert_engines_agree, both_executors, dev_array

WINDOW = """
@pto.kernel
def k(S, D, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({sr}, {sc}, pto.float32, loc=pto.Vec, valid=({svr}, {svc}))
            dst = pto.alloc_tile({dr}, {dc}, pto.float32, loc=pto.Vec, valid=({dvr}, {dvc}))
            pto.tload(src, S, stride={sc})
            pto.tload(dst, D, stride={dc})
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.{op}(dst, src, {row}, {col})
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst, stride={dc})
"""


def _window(make_kernels, op, src, dst, svalid, dvalid, row, col):
    """(kernel, args, out) of WINDOW: src and dst float32 tiles holding `src` / `dst` (their
    valid regions loaded), the op's window at (row, col)."""
    mod = make_kernels(WINDOW.format(sr=src.shape[0], sc=src.shape[1], dr=dst.shape[0], dc=dst.shape[1],
                                     svr=svalid[0], svc=svalid[1], dvr=dvalid[0], dvc=dvalid[1], op=op,
                                     row=row, col=col))
    out = pto.alloc_tensor(dst.nbytes, pto.float32)
    return mod.k, (dev_array(src, pto.float32), dev_array(dst, pto.float32), out), out


def _got(image, out, shape):
    return image[out.alloc.byte_addr:out.alloc.byte_addr + 4 * shape[0] * shape[1]].view(np.float32).reshape(shape)


def test_textract_copies_the_window_of_dsts_valid_shape(make_kernels):
    """src 8 x 16, src[r, c] = 100 r + c; dst 4 x 16 with valid (3, 8), all -1; textract at
    (2, 8) (8 float32 = 32 bytes in): dst's valid rows become src[2:5, 8:16] = 208..215,
    308..315, 408..415, its other words stay -1 (only the valid region is stored: 3 rows of 8
    at dst's 16-element row stride). The four ways write the same bytes."""
    src = (100 * np.arange(8)[:, None] + np.arange(16)).astype(np.float32)
    kernel, args, out = _window(make_kernels, "textract", src, np.full((4, 16), -1, np.float32), (8, 16), (3, 8),
                                2, 8)
    images = both_executors(kernel, (1, 1, 1), args)
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    got = _got(first, out, (4, 16))
    np.testing.assert_array_equal(got[:3, :8], src[2:5, 8:16])
    np.testing.assert_array_equal(got[:3, 8:], 0)         # the output tensor's zeros: not stored
    np.testing.assert_array_equal(got[3], 0)


def test_tinsert_copies_srcs_valid_region_into_dst_at_row_col(make_kernels):
    """dst 8 x 16 all -1; src 4 x 8 with valid (2, 8), src[r, c] = 10 r + c; tinsert at (5, 8):
    dst[5:7, 8:16] = 0..7, 10..17 and everything else -1."""
    src = (10 * np.arange(4)[:, None] + np.arange(8)).astype(np.float32)
    kernel, args, out = _window(make_kernels, "tinsert", src, np.full((8, 16), -1, np.float32), (2, 8), (8, 16),
                                5, 8)
    images = both_executors(kernel, (1, 1, 1), args)
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    want = np.full((8, 16), -1, np.float32)
    want[5:7, 8:16] = src[:2]
    np.testing.assert_array_equal(_got(first, out, (8, 16)), want)


@pytest.mark.parametrize("op, svalid, dvalid, row, col, placed", [
    ("textract", (8, 16), (1, 1), 5, 3, "got[0, 0] == src[5, 3]"),
    ("tinsert", (1, 1), (8, 16), 6, 13, "got[6, 13] == src[0, 0]"),
])
def test_a_one_element_window_may_start_anywhere(make_kernels, op, svalid, dvalid, row, col, placed):
    """The scalar path (a 1 x 1 window: TExtractVecToVecNDScalar / TInsertVecToVecNDScalar)
    takes any (row, col): column 3 and 13 are 12 and 52 bytes into a row, not 32-byte
    multiples. src[r, c] = 100 r + c."""
    src = (100 * np.arange(8)[:, None] + np.arange(16)).astype(np.float32)
    kernel, args, out = _window(make_kernels, op, src, np.full((8, 16), -1, np.float32), svalid, dvalid, row, col)
    pto.launch(kernel, grid=(1,), args=args, check="all")
    pto.sync()
    got = np.empty((8, 16), np.float32)
    pto.memcpy_d2h(got, out)
    assert eval(placed, {"got": got, "src": src})


def test_both_engines_agree_on_the_windows(make_kernels):
    """The compiled event loop and the SimPy model: the same cycles, records and HBM bytes for
    test_tinsert_copies_srcs_valid_region_into_dst_at_row_col's kernel."""
    src = (10 * np.arange(4)[:, None] + np.arange(8)).astype(np.float32)
    kernel, args, _out = _window(make_kernels, "tinsert", src, np.full((8, 16), -1, np.float32), (2, 8), (8, 16),
                                 5, 8)
    slow = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    assert slow["error"] is None and slow["cycles"] > 0


@pytest.mark.parametrize("tiles, call, message", [
    ("s = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, "
     "valid=(2, 8))", "pto.textract(d, s, 0, 4)", "indexCol bytes must be 32-byte aligned"),
    ("s = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, "
     "valid=(2, 8))", "pto.textract(d, s, 7, 0)", "reaches past 's'"),
    ("s = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(4, 16, pto.int32, loc=pto.Vec)",
     "pto.textract(d, s, 0, 0)", "data types must match"),
    ("s = pto.alloc_tile(8, 64, pto.int8, loc=pto.Vec)\nd = pto.alloc_tile(4, 32, pto.int8, loc=pto.Vec, "
     "valid=(2, 3))", "pto.textract(d, s, 0, 0)", "ValidCol bytes must be at least 2-byte aligned"),
    ("s = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec, "
     "valid=(2, 8))", "pto.textract(d, s, 0, 0)", "is larger than 's'"),
    ("s = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)",
     "pto.tinsert(d, s, 1, 0)", "reaches past 'd'"),
    ("s = pto.alloc_tile(2, 16, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)\n"
     "r = pto.get_block_id()", "pto.tinsert(d, s, r, 0)", "row must be a constant"),
    ("s = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)\nd = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)",
     "pto.tinsert(d, s, 0, 0)", "built between two Vec tiles"),
])
def test_window_operand_errors_cite_the_asserts(make_kernels, tiles, call, message):
    """TExtractVecToVecNDDispatch / TInsertVecToVecNDDispatch's PTO_ASSERTs and the
    CheckT*VecToVec static_asserts (one dtype, a window start 32 bytes into a row, an even byte
    count a row, the window inside the tile, the window's tile no larger than the other), a
    window bound at compile time, and pto.tinsert's Vec -> Vec scope: each a CompileError."""
    body = tiles + "\n" + call
    source = ("\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n"
              + "\n".join(" " * 8 + line for line in body.split("\n")) + "\n")
    if "Mat" in tiles:
        source = source.replace("pto.vector()", "pto.cube()")
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(source).k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))


def test_the_race_check_sees_the_inserted_window_only(make_kernels):
    """In a sync="manual" kernel whose V -> MTE3 flag is set before a tinsert into dst's rows
    4..5 (it orders the texpands before it, not the insert), a TSTORE of dst's rows 0..3 does not
    race with the insert (which writes its window only), and one of rows 4..7 does."""
    for start, races in ((0, False), (4, True)):
        mod = make_kernels(f'''
@pto.kernel(sync="manual")
def k(O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(2, 16, pto.float32, loc=pto.Vec)
            d = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
            pto.texpands(s, 1.0)
            pto.texpands(d, 0.0)
            pto.pipe_barrier(pto.PIPE_V)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tinsert(d, s, 4, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, pto.tsubview(d, {start}, 0, 4, 16))
''')
        args = (pto.alloc_tensor(256, pto.float32),)
        if races:
            with pytest.raises(pto.RaceError, match="TINSERT_V2V"):
                pto.launch(mod.k, grid=(1,), args=args, check="race")
                pto.sync()
        else:
            pto.launch(mod.k, grid=(1,), args=args, check="race")
            pto.sync()


def test_the_cost_is_the_ub_to_ub_copy(make_kernels):
    """latency_tables/ascend910b.toml: 1 fixed cycle + bytes / (repeat_bytes / per_repeat =
    256 / 0.43 = 595.3 B/cycle). A 4 x 16 float32 window (256 bytes): 1 + ceil(0.43) = 2; a
    16 x 64 one (4096 bytes): 1 + ceil(6.88) = 8."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(32, 64, pto.float32, loc=pto.Vec)
            d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec)
            w = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
            pto.textract(d, s, 8, 16)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tinsert(s, w, 16, 0)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    got = [(e.inst, e.end - e.start) for e in prof.timeline if e.warp == 1 and e.inst.endswith("_V2V")]
    assert got == [("TEXTRACT_V2V", 2), ("TINSERT_V2V", 8)]


def test_special_values_move_bit_for_bit(make_kernels):
    """A window moves words: src row 0 (NaN, inf, -inf, -0.0, 0.0, 1.5, -2.5, 1e-45, then 8..15)
    through textract at (0, 0) of an 8-wide window and tinsert of it back at (1, 8) keeps every
    bit, the zeros' signs and the subnormal."""
    src = np.zeros((2, 16), np.float32)
    src[0, :8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.5, 1e-45]
    mod = make_kernels('''
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(2, 16, pto.float32, loc=pto.Vec)
            w = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec, valid=(1, 8))
            pto.tload(s, S)
            pto.textract(w, s, 0, 0)
            pto.tinsert(s, w, 1, 8)
            pto.tstore(O, s)
''')
    out = pto.alloc_tensor(src.nbytes, pto.float32)
    pto.launch(mod.k, grid=(1,), args=(dev_array(src, pto.float32), out), check="all")
    pto.sync()
    got = np.empty((2, 16), np.float32)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got[1, 8:].view(np.int32), src[0, :8].view(np.int32))


def test_bfloat16_nan_words_keep_their_payload(make_kernels):
    """A TLOAD then TSTORE of a bfloat16 tile, from and to ml_dtypes' bfloat16 host arrays (the
    words pto-isa's bf16 textract / tinsert cases move): quiet NaNs 0xFFF7, 0x7FC0, 0xFFFF come
    back as they went in, with infinities, 1.0 and -0.0; the signalling NaN 0x7F81 comes back
    quiet, 0x7FC1 (its payload kept), as a float32 signalling NaN through a GM load does. The
    four ways write the same bytes."""
    import ml_dtypes
    words = np.array([0xFFF7, 0x7FC0, 0xFFFF, 0x7F81, 0x7F80, 0xFF80, 0x3F80, 0x8000] * 2, np.uint16)
    mod = make_kernels('''
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(1, 16, pto.bfloat16, loc=pto.Vec)
            pto.tload(t, S)
            pto.tstore(O, t)
''')
    src = pto.alloc_tensor(32, pto.bfloat16)
    pto.memcpy_h2d(src, words.view(ml_dtypes.bfloat16))
    out = pto.alloc_tensor(32, pto.bfloat16)
    images = both_executors(mod.k, (1, 1, 1), (src, out))
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    want = words.copy()
    want[want == 0x7F81] = 0x7FC1
    np.testing.assert_array_equal(first[out.alloc.byte_addr:out.alloc.byte_addr + 32].view(np.uint16), want)
    pto.launch(mod.k, grid=(1,), args=(src, out))
    pto.sync()
    host = np.empty(16, ml_dtypes.bfloat16)
    pto.memcpy_d2h(host, out)
    np.testing.assert_array_equal(host.view(np.uint16), want)
