"""An adversarial run of pto.textract / pto.tinsert between NZ Vec tiles (d37167d; A2/A3
TExtract.hpp TExtractVecToVecNZ*, TInsert.hpp / tinsert_common.hpp TInsertVecToVecNZ*).

The device's bytes, derived from the headers' parameters: an NZ tile of R rows holds (r, c) at
element (c / c0) R c0 + r c0 + c % c0 (c0 = 32 bytes of elements), so a row of a c0 column
stripe is one 32-byte block and a stripe R blocks. NZAligned / the full stripes of NZUnaligned
issue copy_ubuf_to_ubuf(nBurst = validCol / c0, lenBurst = validRow blocks, srcGap = srcRows -
validRow, dstGap = dstRows - validRow) from the window's first block (stripe indexCol / c0, row
indexRow): burst b moves rows 0 .. validRow - 1 of stripe b and skips to the next stripe, so
the padding rows of a fractal (validRow .. 15) are neither read nor written. The tail (validCol
% c0 columns of the next stripe) is a vcopy in count mode, mask tailCols x size / 2 uint16, one
repeat a row at a 1-block repeat stride (chunks of 255 rows): it moves those bytes of each
row. `device` below runs those parameters on NZ byte images; a TLOAD from NZ GM, the window,
a TSTORE of the whole dst to NZ GM must give its bytes, on both executors in both modes and on
both engines, for windows of valid rows not multiples of 16, widths not multiples of c0 (an even
number of bytes), int8 / float16 / float32 / bfloat16, dst larger than the window, and more
than 255 rows (two vcopy chunks). Past the d37167d record: the race check's view of a TEXTRACT,
which read all of src and wrote all of dst (now the window and dst's valid region, the bytes
the copies touch), a few asserts the d37167d tests leave out, and the cost of odd shapes."""
import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto

from engine_compare import assert_engines_agree, both_executors, dev_array

NZ = "layout=pto.NZ"
DTYPES = {"int8": np.int8, "float16": np.float16, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16}


def nz_bytes(a):
    """a (R x C, R of 16, C of c0) as its NZ image: stripes of c0 columns, each R rows of 32 bytes."""
    rows, cols = a.shape
    c0 = 32 // a.dtype.itemsize
    return a.reshape(rows // 16, 16, cols // c0, c0).transpose(2, 0, 1, 3).copy().view(np.uint8).ravel()


def ub_copy(dst, d, src, s, n_burst, len_burst, src_gap, dst_gap):
    """copy_ubuf_to_ubuf: n_burst bursts of len_burst 32-byte blocks, gaps in blocks."""
    for b in range(n_burst):
        at, to = s + b * (len_burst + src_gap) * 32, d + b * (len_burst + dst_gap) * 32
        dst[to:to + len_burst * 32] = src[at:at + len_burst * 32]


def vcopy_rows(dst, d, src, s, rows, nbytes):
    """The tail's vcopy loop: chunks of up to 255 repeats, each `nbytes` (the count mask's
    uint16s) of one row, rows a block (the 1-block repeat stride) apart."""
    while rows:
        chunk = min(255, rows)
        for i in range(chunk):
            dst[d + 32 * i:d + 32 * i + nbytes] = src[s + 32 * i:s + 32 * i + nbytes]
        rows, s, d = rows - chunk, s + 32 * chunk, d + 32 * chunk


def device(op, src, dst, item, src_rows, dst_rows, vr, vc, row, col):
    """dst's NZ image after the header's NZ dispatch (src, dst: NZ images; op textract or tinsert)."""
    c0, out = 32 // item, dst.copy()
    first = ((col // c0) * (src_rows if op == "textract" else dst_rows) * c0 + row * c0) * item
    s, d = (first, 0) if op == "textract" else (0, first)
    if (vr, vc) == (1, 1):                      # the scalar path: one element
        s, d = s + (col % c0) * item * (op == "textract"), d + (col % c0) * item * (op == "tinsert")
        out[d:d + item] = src[s:s + item]
        return out
    full, tail = divmod(vc, c0)
    if full:
        ub_copy(out, d, src, s, full, vr, src_rows - vr, dst_rows - vr)
    if tail:
        vcopy_rows(out, d + full * dst_rows * c0 * item, src, s + full * src_rows * c0 * item, vr, tail * item)
    return out


KERNEL = """
@pto.kernel
def k(S, D, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({sr}, {sc}, pto.{dt}, layout=pto.NZ)
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt}, layout=pto.NZ)
            pto.tload(src, S, layout=pto.NZ)
            pto.tload(dst, D, layout=pto.NZ)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            w = pto.tsubview({t}, 0, 0, {tr}, {tc}, valid=({vr}, {vc}))
            pto.{op}({args}, {row}, {col})
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst, layout=pto.NZ)
"""

# (op, dtype, src R x C, dst R x C, the window's valid rows x cols, (row, col))
WINDOWS = [
    ("textract", "float32", (48, 24), (32, 16), (17, 10), (16, 8)),     # a row past a fractal, a 2-column tail
    ("tinsert", "float32", (32, 16), (64, 32), (31, 4), (32, 16)),      # tail only, dst 4x the window
    ("textract", "float16", (64, 48), (32, 32), (5, 30), (48, 16)),     # 5 rows, 14-column tail
    ("tinsert", "float16", (16, 32), (48, 64), (16, 18), (16, 32)),
    ("textract", "bfloat16", (32, 32), (16, 32), (9, 2), (16, 16)),     # one uint16 of a row
    ("tinsert", "bfloat16", (32, 16), (32, 48), (20, 16), (0, 32)),     # aligned, 20 rows
    ("textract", "int8", (48, 96), (32, 64), (19, 42), (16, 32)),       # int8: c0 = 32, a 10-byte tail
    ("tinsert", "int8", (16, 64), (32, 96), (7, 2), (16, 64)),
    ("textract", "float32", (288, 16), (272, 16), (260, 10), (16, 0)),  # 260 rows: vcopy chunks 255 + 5
    ("tinsert", "int8", (16, 32), (48, 64), (1, 1), (37, 45)),          # the scalar path
]


def _case(make_kernels, op, dt, src_shape, dst_shape, valid, at):
    """(kernel, args, out tensor, the device's dst image): src and dst hold integers -100 .. 99
    (exact in every dtype here; no NaN, whose signalling forms pypto_sim quiets)."""
    np_dt = DTYPES[dt]
    rng = np.random.default_rng(sum(src_shape) * 7 + sum(dst_shape))
    src = rng.integers(-100, 100, src_shape).astype(np_dt)
    dst = rng.integers(-100, 100, dst_shape).astype(np_dt)
    t, shape = ("dst", dst_shape) if op == "textract" else ("src", src_shape)
    mod = make_kernels(KERNEL.format(sr=src_shape[0], sc=src_shape[1], dr=dst_shape[0], dc=dst_shape[1], dt=dt, t=t,
                                     tr=shape[0], tc=shape[1], vr=valid[0], vc=valid[1], op=op,
                                     args="w, src" if op == "textract" else "dst, w", row=at[0], col=at[1]))
    sb, db = nz_bytes(src), nz_bytes(dst)
    out = pto.alloc_tensor(db.nbytes, getattr(pto, dt))
    args = (dev_array(sb.view(np_dt), getattr(pto, dt)), dev_array(db.view(np_dt), getattr(pto, dt)), out)
    want = device(op, sb, db, np.dtype(np_dt).itemsize, src_shape[0], dst_shape[0], *valid, *at)
    return mod.k, args, out, want


@pytest.mark.parametrize("op, dt, src_shape, dst_shape, valid, at", WINDOWS)
def test_the_stored_bytes_are_the_headers_copies(make_kernels, op, dt, src_shape, dst_shape, valid, at):
    """TLOAD (NZ GM) -> the window -> TSTORE (NZ GM) of the whole dst gives the bytes `device`
    derives from the headers' copy parameters, on both executors in both modes. By hand for the
    first case (float32, c0 = 8, src 48 rows, dst 32, valid 17 x 10 at (16, 8)): one burst of 17
    blocks from src block 1 x 48 + 16 = 64 (stripe 1, row 16) to dst blocks 0 .. 16, then the
    vcopy's 17 rows of 2 words from src stripe 2 (block 2 x 48 + 16 = 112 on) to dst stripe 1
    (block 32 on); dst's rows 17 .. 31 of stripes 0 and 1 and columns 2 .. 7 of stripe 1 keep
    dst's bytes."""
    kernel, args, out, want = _case(make_kernels, op, dt, src_shape, dst_shape, valid, at)
    for key, image in both_executors(kernel, (1, 1, 1), args).items():
        got = image[out.alloc.byte_addr:out.alloc.byte_addr + want.size]
        bad = np.nonzero(got != want)[0]
        assert not len(bad), f"{key}: bytes {bad[:8]} differ"


@pytest.mark.parametrize("case", [WINDOWS[0], WINDOWS[6], WINDOWS[8]])
def test_both_engines_agree(make_kernels, case):
    """Three of the windows (a float32 tail, int8, 260 rows) on the compiled loop and on SimPy:
    the same cycles, records and HBM bytes, the device's."""
    kernel, args, out, want = _case(make_kernels, *case)
    slow = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    assert slow["error"] is None
    np.testing.assert_array_equal(slow["words"][out.alloc.byte_addr:out.alloc.byte_addr + want.size], want)


def _races(make_kernels, body, tiles, nbytes=2048):
    """Whether a sync="manual" kernel of these lines on AIV0 raises a RaceError under check="race"."""
    lines = "\n".join(" " * 12 + line for line in (tiles + "\n" + body).split("\n"))
    mod = make_kernels(f"\n@pto.kernel(sync=\"manual\")\ndef k(X):\n    with pto.vector():\n"
                       f"        if pto.get_subblock_id() == 0:\n{lines}\n")
    try:
        pto.launch(mod.k, grid=(1,), args=(pto.alloc_tensor(nbytes, pto.float32),), check="race")
        pto.sync()
    except pto.RaceError as err:
        assert "TEXTRACT_V2V" in str(err) or "TINSERT_V2V" in str(err)
        return True
    return False


NZ_TILES = f"s = pto.alloc_tile(32, 16, pto.float32, {NZ})\nd = pto.alloc_tile(16, 8, pto.float32, {NZ})"


@pytest.mark.parametrize("at, races", [((16, 0), False), ((0, 8), False), ((0, 0), True)])
def test_an_extract_reads_only_its_window(make_kernels, at, races):
    """A TLOAD (MTE2, no flag before the V op) into the whole-tile view of valid (16, 8) of a 32 x
    16 float32 NZ tile writes fractal (0, 0) only (TLoadGm2ubNz2nz: one burst of 16 rows x 32
    bytes of stripe 0: bytes 0 .. 511). A 16 x 8 textract at (16, 0) reads stripe 0's rows 16 ..
    31 (one burst from block 16: bytes 512 .. 1023), at (0, 8) stripe 1's rows 0 .. 15 (from block
    32: bytes 1024 .. 1535): neither races; at (0, 0) it reads the loaded bytes and races. (The
    record read all of src: every one raced.)"""
    body = (f"pto.tload(pto.tsubview(s, 0, 0, 32, 16, valid=(16, 8)), X, {NZ})\n"
            f"pto.textract(d, s, {at[0]}, {at[1]})")
    assert _races(make_kernels, body, NZ_TILES) is races


@pytest.mark.parametrize("rows, races", [(16, False), (17, True)])
def test_an_extract_writes_only_dsts_valid_region(make_kernels, rows, races):
    """ND: a textract into the view of valid (16, 16) of a 32 x 16 float32 tile d writes rows
    0 .. 15 of d (TExtractVecToVecNDAligned: validCol = the row stride, one burst of 16 x 64 bytes
    from d's start), so a TLOAD without a flag into the view of d's rows 16 .. 31 does not race
    with it; a view from row 15 (17 rows) shares row 15 and races. (The record wrote all of d.)"""
    tiles = ("s = pto.alloc_tile(32, 16, pto.float32)\nd = pto.alloc_tile(32, 16, pto.float32)\n"
             "w = pto.tsubview(d, 0, 0, 32, 16, valid=(16, 16))")
    body = (f"pto.tload(pto.tsubview(d, {32 - rows}, 0, {rows}, 16), X)\n"
            "pto.textract(w, s, 16, 0)")
    assert _races(make_kernels, body, tiles) is races


@pytest.mark.parametrize("at, valid, races", [((16, 0), (16, 16), False), ((16, 0), (32, 8), True),
                                              ((0, 8), (16, 16), True), ((0, 8), (32, 8), False)])
def test_an_insert_writes_only_its_fractal(make_kernels, at, valid, races):
    """A 16 x 8 float32 NZ tinsert into a 32 x 16 NZ tile at (16, 0) writes fractal (1, 0) (stripe
    0, rows 16 .. 31: bytes 512 .. 1023), at (0, 8) fractal (0, 1) (bytes 1024 .. 1535); a TSTORE
    (MTE3) not ordered after it of the view of valid (16, 16) reads fractals (0, 0) and (0, 1),
    of valid (32, 8) stripe 0 (fractals (0, 0), (1, 0)): a race exactly where they share one."""
    tiles = (f"s = pto.alloc_tile(16, 8, pto.float32, {NZ})\nd = pto.alloc_tile(32, 16, pto.float32, {NZ})\n"
             "pto.texpands(s, 1.0)\npto.texpands(d, 0.0)\npto.pipe_barrier(pto.PIPE_V)")
    body = (f"pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)\npto.tinsert(d, s, {at[0]}, {at[1]})\n"
            f"pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)\n"
            f"pto.tstore(X, pto.tsubview(d, 0, 0, 32, 16, valid={valid}), {NZ})")
    assert _races(make_kernels, body, tiles) is races


def _compile(make_kernels, tiles, call):
    body = "\n".join(" " * 8 + line for line in (tiles + "\n" + call).split("\n"))
    make_kernels(f"\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n{body}\n").k.program_for(
        (pto.alloc_tensor(256), pto.alloc_tensor(256)))


@pytest.mark.parametrize("tiles, call, message", [
    (f"s = pto.alloc_tile(32, 64, pto.int8, {NZ})\nd = pto.alloc_tile(16, 32, pto.int8, {NZ}, valid=(2, 1))",
     "pto.textract(d, s, 0, 0)", "TEXTRACT NZ Vec->Vec : DstTile ValidCol bytes must be at least 2-byte"),
    (f"s = pto.alloc_tile(32, 64, pto.int8, {NZ})\nd = pto.alloc_tile(16, 32, pto.int8, {NZ}, valid=(1, 1))",
     "pto.textract(d, s, 0, 64)", "\\(0, 64\\) is outside 's'"),
    (f"s = pto.alloc_tile(16, 16, pto.float32, {NZ}, valid=(1, 1))\nd = pto.alloc_tile(32, 16, pto.float32, {NZ})",
     "pto.tinsert(d, s, 32, 0)", "\\(32, 0\\) is outside 'd'"),
    (f"s = pto.alloc_tile(16, 24, pto.float32, {NZ}, valid=(2, 8))\nd = pto.alloc_tile(32, 16, pto.float32, {NZ})",
     "pto.tinsert(d, s, 0, 0)", "TINSERT NZ Vec->Vec : Source Cols must not exceed destination Cols"),
    (f"s = pto.alloc_tile(16, 64, pto.int8, {NZ}, valid=(3, 33))\nd = pto.alloc_tile(32, 64, pto.int8, {NZ})",
     "pto.tinsert(d, s, 16, 0)", "TINSERT NZ Vec->Vec : SrcTile ValidCol bytes must be at least 2-byte"),
    (f"s = pto.alloc_tile(32, 16, pto.float32, {NZ})\nd = pto.alloc_tile(32, 16, pto.float32, {NZ}, valid=(16, 9))",
     "pto.textract(d, s, 0, 8)", "the 16 x 9 window at \\(0, 8\\) reaches past 's'"),
    ("s = pto.alloc_tile(48, 16, pto.float32, valid=(1, 1))\nd = pto.alloc_tile(32, 16, pto.float32)",
     "pto.tinsert(d, s, 0, 0)", "TINSERT ND Vec->Vec : Source Rows must not exceed"),
])
def test_more_asserts_are_compile_errors(make_kernels, tiles, call, message):
    """CheckTExtractVecToVecNZ's even-bytes assert holds for any window but 1 x 1 (2 x 1 int8 is
    one byte a row); the scalar paths' PTO_ASSERTs (indexRow < Rows, indexCol < Cols of the
    whole tile); CheckTInsertVecToVecNZ's Cols and even-bytes asserts off the scalar path; the NZ
    bounds assert on columns; ND's CheckTInsertVecToVecND, which TInsertVecToVecNDDispatch calls
    before its scalar branch, still refuses a larger 1 x 1 src. Each a CompileError at the line."""
    with pytest.raises(pto.CompileError, match=message) as err:
        _compile(make_kernels, tiles, call)
    assert f":{7 + tiles.count(chr(10))}:" in str(err.value)     # the call's line: after the import, 5, the tiles


@pytest.mark.parametrize("tiles, call", [
    (f"s = pto.alloc_tile(32, 64, pto.int8, {NZ})\nd = pto.alloc_tile(16, 32, pto.int8, {NZ}, valid=(1, 1))",
     "pto.textract(d, s, 31, 63)"),
    (f"s = pto.alloc_tile(16, 16, pto.float16, {NZ}, valid=(1, 1))\nd = pto.alloc_tile(32, 32, pto.float16, {NZ})",
     "pto.tinsert(d, s, 31, 31)"),
    (f"s = pto.alloc_tile(32, 16, pto.float32, {NZ})\nd = pto.alloc_tile(16, 8, pto.float32, {NZ}, valid=(1, 2))",
     "pto.textract(d, s, 16, 8)"),
    ("s = pto.alloc_tile(32, 16, pto.float32)\nd = pto.alloc_tile(16, 16, pto.float32, valid=(1, 1))",
     "pto.textract(d, s, 31, 15)"),
    ("s = pto.alloc_tile(32, 16, pto.float32)\nd = pto.alloc_tile(16, 16, pto.float32, valid=(3, 5))",
     "pto.textract(d, s, 3, 8)"),
])
def test_what_the_headers_accept_compiles(make_kernels, tiles, call):
    """1 x 1 windows at the last element of either tile (the scalar paths: no alignment), a 1 x 2
    NZ window at a fractal corner (2 x 4 bytes: even), and ND windows at any row and a 32-byte
    column, unchanged."""
    _compile(make_kernels, tiles, call)


def test_odd_shapes_cost_the_copy_of_their_bytes(make_kernels):
    """latency_tables/ascend910b.toml TEXTRACT_V2V / TINSERT_V2V: 1 + ceil(bytes / (256 / 0.43 =
    595.3)). int8 17 x 42 (714 bytes: 1 burst of 17 blocks, then a 10-byte tail a row): 1 +
    ceil(1.20) = 3; float16 33 x 22 into 64 x 48 at (16, 16) (1452 bytes): 1 + ceil(2.44) = 4; a 1 x
    1 float32 window at (31, 15) (4 bytes, the scalar path): 1 + ceil(0.007) = 2."""
    mod = make_kernels(f'''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s8 = pto.alloc_tile(48, 64, pto.int8, {NZ})
            d8 = pto.alloc_tile(32, 64, pto.int8, {NZ}, valid=(17, 42))
            h = pto.alloc_tile(64, 48, pto.float16, {NZ})
            w = pto.alloc_tile(48, 32, pto.float16, {NZ}, valid=(33, 22))
            f = pto.alloc_tile(16, 8, pto.float32, {NZ}, valid=(1, 1))
            g = pto.alloc_tile(32, 16, pto.float32, {NZ})
            pto.textract(d8, s8, 16, 0)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tinsert(h, w, 16, 16)
            pto.pipe_barrier(pto.PIPE_V)
            pto.textract(f, g, 31, 15)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),))
    got = [(e.inst, e.end - e.start) for e in prof.timeline if e.warp == 1 and e.inst.endswith("_V2V")]
    assert got == [("TEXTRACT_V2V", 3), ("TINSERT_V2V", 4), ("TEXTRACT_V2V", 2)]
