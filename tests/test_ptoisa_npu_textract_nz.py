"""pto-isa's A2/A3 on-device suite textract_ndto2xnz (tests/npu/a2a3/src/st/testcase/textract_ndto2xnz
of hw-native-sys/pto-isa at the mirror's HEAD, 3186c381), its 14 TEST_F cases as
textract_ndto2xnz_kernel.cpp writes them (runTExtractNd2xNz): TLOAD a 64 x 128 ND Vec tile,
the MTE2 -> V and MTE2 -> S flag pairs, TEXTRACT(dst0, dst1, src, ir0, ic0, ir1, ic1) into two
NZ Vec tiles (pto.textract_nd2xnz, the window offsets kernel arguments as the kernel takes them),
pipe_barrier(PIPE_V), the S -> MTE3 and V -> MTE3 pairs, and TSTORE of each NZ tile to an NZ
GlobalTensor. The input is gen_data.py's randint(0, 256) bytes of the 64 x 128 source (one
RandomState(42) per case: gen_data.py draws its cases from one generator in order), read as
the case's dtype; the golden is the window, zero-padded to the tile (the OddValid kernel zeroes
both tiles first), in NZ order (nd_to_nz_bytes); main.cpp compares the bytes with
ResultCmp<uint8_t>(golden, out, 0): bit for bit.

- test_ndto2xnz (11 cases): 32 x 64 windows; the tiles' valid region is the whole tile, whose
  TSTORE (TStoreUb2gmNz2nz) writes 64 / c0 bursts of 32 x 32 bytes.
- case_int8_oddvalid (test_ndto2xnz_oddvalid): valid regions 32 x 63 and 32 x 61 of the
  32 x 64 tiles, which the kernel first zeroes (vector_dup of the tiles' bytes: here
  pto.texpands of each whole tile). Window 0 (column 0, an odd width) takes the header's int8
  widening path, window 1 (column 2) its scalar path. The store still writes 2 bursts of
  32 x 32 bytes: nBurst is the GlobalTensor's shape (TStoreUb2gmNz2nz; its PTO_ASSERT
  validCol == Shape0 x Shape1 x Shape4 is compiled out of the device build, debug.h), so the
  port stores a whole-tile view of valid 32 x 64.
- test_ndto2xnz_1x1 (3 cases): 16 x c0 tiles of valid 1 x 1 (the scalar path); the store writes
  one burst of validRow x 32 bytes (the tile's first row of c0), and main.cpp compares the first
  element's bytes only.
"""
import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto
from engine_compare import assert_engines_agree, assert_executors_agree

SR, SC, N0, C0_BYTES = 64, 128, 16, 32
DT = {0: "float16", 1: "float32", 2: "bfloat16", 3: "int8", 4: "int32"}     # launchTExtractNd2xNz's keys
ESIZE = {"float16": 2, "float32": 4, "bfloat16": 2, "int8": 1, "int32": 4}

KERNEL = """
@pto.kernel(sync="manual")
def k(S, O0, O1, ir0, ic0, ir1, ic1):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({sr}, {sc}, pto.{dt})
            dst0 = pto.alloc_tile({w0r}, {w0c}, pto.{dt}, layout=pto.NZ, valid=({v0r}, {v0c}))
            dst1 = pto.alloc_tile({w1r}, {w1c}, pto.{dt}, layout=pto.NZ, valid=({v1r}, {v1c}))
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            {zero}
            pto.textract_nd2xnz(dst0, dst1, src, ir0, ic0, ir1, ic1)
            pto.pipe_barrier(pto.PIPE_V)
            pto.set_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O0, pto.tsubview(dst0, 0, 0, {w0r}, {w0c}, valid=({v0r}, {s0c})), layout=pto.NZ)
            pto.tstore(O1, pto.tsubview(dst1, 0, 0, {w1r}, {w1c}, valid=({v1r}, {s1c})), layout=pto.NZ)
"""
# the OddValid kernel's ZeroDst: vector_dup of 0 over each tile's bytes, then pipe_barrier(PIPE_V)
ZERO = """pto.texpands(dst0, 0, n={n0})
            pto.texpands(dst1, 0, n={n1})
            pto.pipe_barrier(pto.PIPE_V)"""

# TEST_F(TExtractNd2xNzTest, name): (form, key, ir0, ic0, ir1, ic1) of main.cpp
CASES = {
    "case_half": ("full", 0, 0, 0, 32, 64),
    "case_float": ("full", 1, 0, 0, 32, 64),
    "case_bf16": ("full", 2, 0, 0, 32, 64),
    "case_int8": ("full", 3, 0, 0, 32, 64),
    "case_int32": ("full", 4, 0, 0, 32, 64),
    "case_half_idx": ("full", 0, 16, 16, 0, 48),
    "case_int8_idx": ("full", 3, 16, 32, 0, 0),
    "case_half_unaligned": ("full", 0, 0, 0, 16, 8),
    "case_int8_unaligned": ("full", 3, 0, 0, 16, 8),
    "case_int8_odd": ("full", 3, 0, 1, 0, 3),
    "case_int8_oddvalid": ("oddvalid", 3, 0, 0, 0, 2),
    "case_half_1x1": ("1x1", 0, 0, 0, 5, 7),
    "case_float_1x1": ("1x1", 1, 0, 0, 10, 3),
    "case_int8_1x1": ("1x1", 3, 0, 0, 20, 17),
}


def nd_to_nz_bytes(win, rows, cols, esize):
    """gen_data.py's nd_to_nz_bytes: a rows x cols x esize byte window in NZ order."""
    c0 = C0_BYTES // esize
    return win.reshape(rows // N0, N0, cols // c0, c0, esize).transpose(2, 0, 1, 3, 4).reshape(-1)


def golden(src, win, tile):
    """gen_data.py's gen_golden for one window (rows, cols, ir, ic) of a tile (trows, tcols)."""
    rows, cols, ir, ic = win
    if (rows, cols) == (1, 1):
        return src[ir:ir + 1, ic:ic + 1, :].reshape(-1)
    padded = np.zeros((*tile, src.shape[2]), np.uint8)
    padded[:rows, :cols, :] = src[ir:ir + rows, ic:ic + cols, :]
    return nd_to_nz_bytes(padded, *tile, src.shape[2])


def _shapes(form, esize):
    """dispatchTExtractNd2xNz* 's tile shapes (W rows, W cols) and valid regions of both windows."""
    c0 = C0_BYTES // esize
    if form == "full":
        return ((32, 64), (32, 64)), ((32, 64), (32, 64))
    if form == "oddvalid":
        return ((32, 64), (32, 64)), ((32, 63), (32, 61))
    return ((N0, c0), (N0, c0)), ((1, 1), (1, 1))


def _tensor(a, dtype):
    """A GM tensor of dtype holding a's bytes."""
    t = pto.alloc_tensor(a.nbytes, getattr(pto, dtype))
    pto.memcpy_h2d(t, a.view(np.uint8).view(_np_dtype(dtype)))
    return t


def _np_dtype(dtype):
    """numpy's dtype for a pto dtype name (bfloat16: ml_dtypes')."""
    return ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)


def _run(make_kernels, case, offsets=None):
    """Launch the case's kernel (its window offsets, or `offsets`) under racecheck: (source bytes,
    both outputs' bytes, the windows, the tiles' shapes, the element size, the profile)."""
    form, key, ir0, ic0, ir1, ic1 = CASES[case]
    ir0, ic0, ir1, ic1 = offsets or (ir0, ic0, ir1, ic1)
    dt = DT[key]
    esize, c0 = ESIZE[dt], C0_BYTES // ESIZE[dt]
    tiles, valids = _shapes(form, esize)
    stored = [(v[0], -(-v[1] // c0) * c0) for v in valids]      # validRow x the GlobalTensor's column blocks
    zero = ZERO.format(n0=tiles[0][0] * tiles[0][1], n1=tiles[1][0] * tiles[1][1]) if form == "oddvalid" else ""
    src = KERNEL.format(sr=SR, sc=SC, dt=dt, w0r=tiles[0][0], w0c=tiles[0][1], w1r=tiles[1][0], w1c=tiles[1][1],
                        v0r=valids[0][0], v0c=valids[0][1], v1r=valids[1][0], v1c=valids[1][1],
                        s0c=stored[0][1], s1c=stored[1][1], zero=zero)
    kernel = make_kernels(src).k
    data = np.random.RandomState(42).randint(0, 256, size=(SR, SC, esize)).astype(np.uint8)
    outs = [np.zeros(t[0] * t[1] * esize, np.uint8) for t in tiles]
    tensors = [_tensor(data, dt)] + [_tensor(o, dt) for o in outs]
    prof = pto.profile(kernel, grid=(1,), args=(*tensors, ir0, ic0, ir1, ic1), check="race")
    got = []
    for t, o in zip(tensors[1:], outs):
        host = np.empty(o.size // esize, _np_dtype(dt))
        pto.memcpy_d2h(host, t)
        got.append(host.view(np.uint8))
    wins = [(*valids[0], ir0, ic0), (*valids[1], ir1, ic1)]
    return data, got, wins, tiles, esize, prof


def quieted(words, dtype):
    """The words with every signalling NaN of dtype made quiet (its top mantissa bit set):
    pypto_sim holds a float32 or bfloat16 value as a float64, which keeps a NaN's payload but
    not its signalling bit (docs/performance.md: "a bfloat16 signalling NaN comes back quiet
    through GM (as a float32 one does; float16's keep every bit)"). Other dtypes as they are."""
    if dtype not in ("float32", "bfloat16"):
        return words
    view = words.view(np.uint32 if dtype == "float32" else np.uint16)
    exp, quiet = (0x7F800000, 0x00400000) if dtype == "float32" else (0x7F80, 0x0040)
    snan = ((view & exp) == exp) & ((view & (quiet - 1)) != 0) & ((view & quiet) == 0)
    return np.where(snan, view | quiet, view).astype(view.dtype).view(np.uint8)


@pytest.mark.parametrize("case", sorted(CASES))
def test_textract_ndto2xnz(make_kernels, case):
    """Each TEST_F: both outputs equal gen_data.py's goldens byte for byte (1 x 1 cases: the first
    element's bytes, as main.cpp reads them), but the random bytes' signalling NaNs of float32
    (case_float: 3 words in window 0, 4 in window 1) and bfloat16 (case_bf16: 4 and 3), which come back
    quiet here, where A2/A3's vcopy moves them as 16-bit words."""
    data, got, wins, tiles, esize, _ = _run(make_kernels, case)
    dt = DT[CASES[case][1]]
    for out, win, tile in zip(got, wins, tiles):
        want = golden(data, win, tile)
        assert np.array_equal(out[:want.size], quieted(want, dt)), (case, win)



@pytest.fixture
def half_profile(make_kernels):
    """case_half's run (its profile's timeline)."""
    return _run(make_kernels, "case_half")[5]


def test_nd2nz_windows_cost_their_blocks_at_the_mocks_vcopy(half_profile):
    """case_half's windows are 32 x 64 halves = 4,096 bytes: 128 blocks of 32 bytes, a vcopy
    repeat each (one block a row of a column block) at the CCE mock's slope of 1, plus its head
    11 and tail 13: 152 cycles each, on V."""
    ops = [e for e in half_profile.timeline if e.inst == "TEXTRACT_ND2NZ"]
    assert [(e.pipe, e.end - e.start) for e in ops] == [("V", 152), ("V", 152)]


def test_nz_tile_rules(make_kernels):
    """CheckTExtractNdToNz's static_asserts and the NZ tile's own rules are compile errors: an ND
    destination, a dtype the header does not list (int16), an NZ tile of 8 rows (a fractal is 16),
    a vector op on an NZ tile, a fill of part of one (its first words are not its first row); a
    constant window past src is its PTO_ASSERT."""
    base = ("@pto.kernel\ndef k(O):\n    with pto.vector():\n        if pto.get_subblock_id() == 0:\n"
            "            src = pto.alloc_tile(64, 128, pto.{dt})\n"
            "            d = pto.alloc_tile({r}, 64, pto.{dt}, layout={lay})\n"
            "            {op}\n")
    bad = {
        "Destination must be NZ": dict(dt="float16", r=32, lay="pto.RowMajor", op="pto.textract_nd2xnz(d, d, src)"),
        "Unsupported data type": dict(dt="int16", r=32, lay="pto.NZ", op="pto.textract_nd2xnz(d, d, src)"),
        "multiple of 16": dict(dt="float16", r=8, lay="pto.NZ", op="pass"),
        "NZ Vec tile": dict(dt="float16", r=32, lay="pto.NZ", op="pto.tadds(d, d, 1.0)"),
        "filled whole": dict(dt="float16", r=32, lay="pto.NZ", op="pto.texpands(d, 0.0, n=64)"),
        "exceeds srcCols": dict(dt="float16", r=32, lay="pto.NZ", op="pto.textract_nd2xnz(d, d, src, 0, 0, 0, 80)"),
    }
    for match, fields in bad.items():
        with pytest.raises(pto.CompileError, match=match):
            make_kernels(base.format(**fields)).k.asm(args=(pto.alloc_tensor(64),))


def test_a_window_past_src_at_run_time_is_an_out_of_bounds_error(make_kernels):
    """case_half with ic1 = 80 (a kernel argument): 80 + 64 columns reach past the 128 of src,
    which the TEXTRACT finds when it runs, before it writes."""
    with pytest.raises(pto.OutOfBoundsError, match="outside"):
        _run(make_kernels, "case_half", (0, 0, 32, 80))


@pytest.mark.parametrize("case", ["case_int8_oddvalid", "case_half_1x1", "case_bf16"])
def test_both_engines_and_both_executors_agree(make_kernels, case):
    """The compiled event loop and the SimPy model, and the numba and numpy executors, leave the
    same GM bytes at the same cycles (the odd-valid windows with their fills, a 1 x 1 window, and
    bfloat16 words with NaN payloads)."""
    form, key, ir0, ic0, ir1, ic1 = CASES[case]
    dt = DT[key]
    esize, c0 = ESIZE[dt], C0_BYTES // ESIZE[dt]
    tiles, valids = _shapes(form, esize)
    zero = ZERO.format(n0=tiles[0][0] * tiles[0][1], n1=tiles[1][0] * tiles[1][1]) if form == "oddvalid" else ""
    src = KERNEL.format(sr=SR, sc=SC, dt=dt, w0r=tiles[0][0], w0c=tiles[0][1], w1r=tiles[1][0], w1c=tiles[1][1],
                        v0r=valids[0][0], v0c=valids[0][1], v1r=valids[1][0], v1c=valids[1][1],
                        s0c=-(-valids[0][1] // c0) * c0, s1c=-(-valids[1][1] // c0) * c0, zero=zero)
    kernel = make_kernels(src).k
    data = np.random.RandomState(42).randint(0, 256, size=(SR, SC, esize)).astype(np.uint8)
    args = (_tensor(data, dt), *(_tensor(np.zeros(t[0] * t[1] * esize, np.uint8), dt) for t in tiles),
            ir0, ic0, ir1, ic1)
    assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    assert_executors_agree(kernel, args, (1, 1, 1), (32, 1, 1), src)
