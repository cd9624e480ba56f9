"""pto-isa's ON-DEVICE A2/A3 st cases of TLOAD into and TSTORE from Mat (L1) tiles
(hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tload_gm2mat and tstore_mat2gm at
3186c381), in the AI-core API as their kernels write them. These goldens are what A2/A3
hardware must produce. Both gen_data.py seed once (np.random.seed(19)); each port draws from its
own np.random.RandomState(19): the input is randint(-5, 5) of the whole shape as the dtype
(np.float16 for the bfloat16 cases, whose kernels main.cpp launches as uint16_t words run as
bfloat16_t: the ports move those words as bfloat16 and compare them as uint16).

- TLoadGM2L1Test.<format>_<T>_<gShape0..4>_<gWholeShape0..4> (56 TEST_Fs, TestTload): the
  kernel (tload_gm2mat_kernel.cpp) TLOADs the (gShape) box at the origin of a gWholeShape GM
  tensor into a Mat tile, flags MTE2 -> MTE3, then copies the tile's L1 words to GM with its
  own TSTORE_MAT2GM (copy_cbuf_to_gm bursts, gmGap 0): the valid region dense in the tile's
  layout. ND2ND: a RowMajor tile, rows stored row-major; NZ2NZ: a ColMajor tile with a
  RowMajor fractal, stored as NZ (validCol / c0 runs of validRow x c0); ND2NZ: the same tile
  loaded from ND (the MTE converts), stored as NZ of its valid rows and whole c0 blocks;
  DN2ZN: a RowMajor tile with a ColMajor fractal loaded from DN (column c at c x W3), stored
  as ZN (FRACTAL_Z here: validRow / c0 runs of validCol x c0). The golden (gen_data.py) is the
  box, or for ND2NZ / DN2ZN the box padded with zeros to whole c0 blocks and blocked the same
  way. main.cpp: ResultCmp<T>(golden, out, 0.001f) over vectors of dstDataSize elements (the
  file's bytes).
- TStoreMat2GMTest.case_<nd|dn|nz><n> (14 TEST_Fs, TestTStore): the kernel
  (tstore_mat2gm_kernel.cpp) TLOADs the box into a Mat tile and TSTOREs it to the same box of
  a zeroed tensor of the whole shape (Event<Op::TLOAD, Op::TSTORE_MAT>: the MTE2 -> MTE3 flag).
  The golden is zeros but the box, the input's. ResultCmp<T>(golden, out, 0.001f) over
  dataSize elements.

A Mat tile's fractal order is not modelled for values (docs/aicore.md; what reaches GM is the
same), but its fractal box is: pypto_sim's Mat `layout` is pto-isa's inner (SLayout) order
(frontend/layout_builtins.py fractal_box). The NZ tile (BLayout::ColMajor, SLayout::RowMajor,
512-byte fractal) is a default (RowMajor) Mat tile here, whose box is 16 rows x c0 columns, and
the ZN tile (BLayout::RowMajor, SLayout::ColMajor) a ColMajor one, c0 rows x 16 columns: the inner
boxes of pto_tile.hpp's Tile::getInnerRow / getInnerCol, whose static_asserts (lines 1517-1533)
ask a boxed tile for whole boxes ("Layout rows must be divisible by inner box rows" unless Rows
== 1; "Layout cols must be divisible by inner box cols", always). A box whose gShape0 > 1 (NZ's
column blocks of two x0 slabs lie W1 W2 W3 W4 apart) is one TLOAD / TSTORE per slab through a
column window of the tile, as pto.tload has one stride. The ND2NZ / DN2ZN stores write whole c0
blocks (the kernel's bursts are 32-byte blocks of the tile, whose pad the MTE zero-fills), which
here is a view of the tile whose valid region is rounded up to c0 (the tile starts zeroed). The
ND2ND store writes the valid region: ND_int8_t_1_1_1_1_201's one burst of ceil(201 / 32) blocks
runs 23 bytes past the 201-byte output on the device, which main.cpp does not read.

pto-isa's ND2ND and DN2DN Mat tiles (Tile<TileType::Mat, T, Rows, Cols, BLayout::RowMajor or
ColMajor, -1, -1>) are unboxed (SLayout::NoneBox: only a row, or a column, of whole 32 bytes,
pto_tile.hpp line 1523), but every Mat tile of pypto_sim is boxed (docs/aicore.md), so an ND or
DN case is expressible only when its tile happens to be whole boxes in a RowMajor (16 x c0) or
ColMajor (c0 x 16) Mat tile: ND_bfloat16_t_1_1_1_128_128 / case_nd5 (128 x 128) and
ND_int8_t_1_1_1_1_201 (one row of 224 = 7 x 32 int8 columns), ported; no DN case is.

Not ported (none is a refusal of A2/A3, which compiles and runs every case):
- The ND / DN cases whose NoneBox Mat tile is not whole boxes of either pypto_sim Mat layout,
  which refuses it at pto.alloc_tile ("boxed tile rows (cols) must be a multiple of ...";
  float32 box 16 x 8 or 8 x 16, int16 / bfloat16 16 x 16, int8 16 x 32 or 32 x 16; one row is allowed,
  one column is not, as pto_tile.hpp's Rows_ == 1 exemption is for rows only):
  TLoadGM2L1Test ND_float_1_1_1_3_128_* and TStoreMat2GMTest case_nd2 (3 x 128 float32: 3
  rows), ND_int8_t_1_2_1_11_32_* and case_nd4 (22 x 32 int8: 22 rows), DN_float_1_1_1_128_3_*
  and case_dn2 (128 x 3 float32: 3 columns), DN_int8_t_1_2_1_32_11_* and case_dn4 (32 x 22
  int8: 22 columns), DN_float_1_1_1_156_1_* (160 x 1 float32: 1 column),
  DN_bfloat16_t_1_2_2_128_311_* and case_dn5 (128 x 1244 bfloat16: 1244 columns); the int16 ones,
  ND_int16_t_2_2_1_2_32_* and case_nd3 (8 x 32: four slabs of 2 rows, 8 rows) and
  DN_int16_t_2_2_1_32_2_* and case_dn3 (32 x 8: 8 columns). Padding the tile to whole boxes
  would change the kernel, not port it. (Mat tiles hold int16: A2/A3's tload_common.hpp lines
  302-310, and the int16 NZ / ND2NZ / DN2ZN cases are ported.)
- The int64 / uint64 cases (TLoadGM2L1Test ND_int64_*, ND_uint64_*, DN_int64_*, DN_uint64_*;
  TStoreMat2GMTest case_nd1, case_dn1): A2/A3 moves 8-byte tiles ND2ND / DN2DN
  (tload_common.hpp lines 317-323); pypto_sim has no 64-bit tile dtype.
- TLoadGM2L1Test NC1HWC02NC1HWC0_* (7), FZ2FZ_* (6), FZ4D2FZ4D_* (5) and
  NDC1HWC02NDC1HWC0_* (7): a 4- to 6-dimensional ConvTile (Layout::NC1HWC0 / FRACTAL_Z /
  NDC1HWC0) loaded in one TLOAD; pypto_sim has no ConvTile.
Every NZ, ND2NZ and DN2ZN case is ported: their tiles are whole boxes (NZ: S2 S3 rows and
S0 S1 S4 columns, S3 = 16 and S4 = c0 in each case; ND2NZ: rows rounded up to 16, columns to
c0; DN2ZN: rows to c0, columns to 16), NZ_float_1_5_21_16_8 / case_nz1 (336 x 40 float32),
ND2NZ_float_t_1_1_1_49_35 (64 x 40) and DN2ZN_float_t_1_1_1_49_35 (56 x 48, ZN) too.
"""
import ml_dtypes
import numpy as np
import pytest

from ptoisa_st import as_words, result_cmp, run_kernel

# main.cpp's C++ types -> (gen_data.py's numpy dtype, the kernel's dtype)
# (float_t: how main.cpp names two float cases, ND2NZ_float_t_* and DN2ZN_float_t_*: TestTload<.., float, ..>)
TYPES = {"int8_t": ("int8", "int8"), "int16_t": ("int16", "int16"), "bfloat16_t": ("float16", "bfloat16"),
         "float_t": ("float32", "float32"), "float": ("float32", "float32")}
# the words main.cpp's ResultCmp<T> compares (uint16_t for the bfloat16 cases)
CMP = {"int8": np.int8, "int16": np.int16, "float16": np.uint16, "float32": np.float32}
# cases whose name says another gShape than the one main.cpp launches and gen_data.py makes:
# NZ_int16_t_2_16_11_... runs TestTload<2, int16_t, 2, 15, 11, 16, 16, ...> (GlobalTensorInfo
# np.int16, "NZ", 2, 15, 11, 16, 16, ...)
LAUNCHED_SHAPE = {"NZ_int16_t_2_16_11_16_16_3_23_13_16_16": (2, 15, 11, 16, 16)}

FLAG = ["pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)", "pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)"]


def source(lines):
    return ("\n@pto.kernel\ndef k(S, O):\n    with pto.cube():\n"
            + "".join(f"        {line}\n" for line in lines))


def c0_of(dt):
    return 32 // np.dtype(ml_dtypes.bfloat16 if dt == "bfloat16" else dt).itemsize


def up(n, m):
    return -(-n // m) * m


def strides(whole):
    _, w1, w2, w3, w4 = whole
    return w1 * w2 * w3 * w4, w2 * w3 * w4, w3 * w4


def nz_moves(dt, shape, whole, store_to=None):
    """RunTLoadNZ2NZ / RunTStoreNZ2NZ: a ColMajor (RowMajor-fractal) Mat tile, the NZ tile (a
    RowMajor Mat tile here, boxes of 16 x c0), of S2 S3 rows and S0 S1 S4 columns, loaded from
    the Layout::NZ box (x1's column blocks W2 W3 W4 apart, x0's slabs W1 W2 W3 W4 apart): one
    TLOAD per x0 slab into its S1 S4 columns."""
    s0, s1, s2, s3, s4 = shape
    st0, st1, _ = strides(whole)
    rows, cols = s2 * s3, s0 * s1 * s4
    lines = [f"t = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Mat, valid=({rows}, {cols}))"]
    if s0 == 1:
        views = [("t", 0)]
    else:
        views = [(f"w{x0}", x0 * st0) for x0 in range(s0)]
        lines += [f"w{x0} = pto.tsubview(t, 0, {x0 * s1 * s4}, {rows}, {s1 * s4})" for x0 in range(s0)]
    lines += [f"pto.tload({v}, S + {off}, layout=pto.NZ, stride={st1})" for v, off in views]
    lines += FLAG
    if store_to == "box":
        lines += [f"pto.tstore(O + {off}, {v}, layout=pto.NZ, stride={st1})" for v, off in views]
    else:
        lines.append("pto.tstore(O, t, layout=pto.NZ)")
    return source(lines)


def nd_moves(dt, shape, whole, store_to=None):
    """RunTLoadND2ND / RunTStoreND2ND: a RowMajor Mat tile of S0 S1 S2 S3 rows and S4 columns
    (rounded up to 32 bytes) loaded from the ND box, rows W4 apart (one (x0, x1, x2) slab)."""
    s0, s1, s2, s3, s4 = shape
    assert s0 * s1 * s2 == 1
    rows, cols = s3, up(s4, c0_of(dt))
    lines = [f"t = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Mat, valid=({rows}, {s4}))",
             f"pto.tload(t, S, stride={whole[4]})", *FLAG]
    lines.append(f"pto.tstore(O, t, stride={whole[4]})" if store_to == "box" else "pto.tstore(O, t)")
    return source(lines)


def nd2nz_moves(dt, shape, whole, store_to=None):
    """RunTLoadND2NZ: a ColMajor (RowMajor-fractal) Mat tile (the NZ tile: RowMajor here) of S3
    rows (rounded up to 16) and S4 columns (rounded up to c0) loaded from the ND box (rows W4
    apart); TSTORE_MAT2GM's NZ bursts: S4 / c0 (rounded up) runs of S3 x c0."""
    _, _, _, s3, s4 = shape
    c0 = c0_of(dt)
    rows, cols = up(s3, 16), up(s4, c0)
    return source([f"t = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Mat, valid=({s3}, {s4}))",
                   f"pto.tload(t, S, stride={whole[4]})", *FLAG,
                   f"v = pto.tsubview(t, 0, 0, {rows}, {cols}, valid=({s3}, {cols}))",
                   "pto.tstore(O, v, layout=pto.NZ)"])


def dn2zn_moves(dt, shape, whole, store_to=None):
    """RunTLoadDN2ZN: a RowMajor (ColMajor-fractal) Mat tile (the ZN tile: ColMajor here) of S3
    rows (rounded up to c0) and S4 columns (rounded up to 16) loaded from the Layout::DN box
    (column c at c W3); TSTORE_MAT2GM's ZN bursts: S3 / c0 (rounded up) runs of S4 x c0,
    FRACTAL_Z here."""
    _, _, _, s3, s4 = shape
    c0 = c0_of(dt)
    rows, cols = up(s3, c0), up(s4, 16)
    return source([f"t = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Mat, valid=({s3}, {s4}), "
                   "layout=pto.ColMajor)",
                   f"pto.tload(t, S, layout=pto.DN, stride={whole[3]})", *FLAG,
                   f"v = pto.tsubview(t, 0, 0, {rows}, {cols}, valid=({rows}, {s4}))",
                   "pto.tstore(O, v, layout=pto.FRACTAL_Z)"])


SOURCES = {"ND": nd_moves, "NZ": nz_moves, "ND2NZ": nd2nz_moves, "DN2ZN": dn2zn_moves}


def parse(name):
    """<format>_<T>_<gShape0..4>_<gWholeShape0..4> -> (format, T, shape, whole)."""
    fmt, rest = name.split("_", 1)
    t, dims = next((t, rest[len(t) + 1:]) for t in TYPES if rest.startswith(t + "_"))
    dims = [int(d) for d in dims.split("_")]
    return fmt, t, LAUNCHED_SHAPE.get(name, tuple(dims[:5])), tuple(dims[5:])


def words_in(x, kdt):
    """gen_data.py's input as the kernel's dtype (np.float16 bits as bfloat16 words)."""
    return x.view(ml_dtypes.bfloat16) if kdt == "bfloat16" else x


# ------------------------------------------------------------------------------------- TLOAD
TLOAD_CASES = ["NZ_int8_t_1_16_32_16_32_1_32_32_16_32",
               "ND2NZ_int8_t_1_1_1_1023_511_1_1_1_1024_1024",
               "ND2NZ_bfloat16_t_1_1_1_1023_51_1_1_1_1024_1024",
               "ND_bfloat16_t_1_1_1_128_128_1_1_1_256_256",
               "NZ_bfloat16_t_2_4_5_16_16_7_7_7_16_16",
               "ND2NZ_bfloat16_t_1_1_1_1_1_1_1_1_1_1",
               "ND2NZ_bfloat16_t_1_1_1_1_1_1_1_1_16_16",
               "ND2NZ_bfloat16_t_1_1_1_256_1024_1_1_1_256_1024",
               "DN2ZN_bfloat16_t_1_1_1_256_1024_1_1_1_256_1024",
               "DN2ZN_int8_t_1_1_1_1023_511_1_1_1_1024_1024",
               "NZ_int16_t_2_16_11_16_16_3_23_13_16_16",
               "ND2NZ_int16_t_1_1_1_155_250_1_1_1_752_1000",
               "DN2ZN_int16_t_1_1_1_155_250_1_1_1_752_1000",
               "ND_int8_t_1_1_1_1_201_1_1_1_1_201",
               "NZ_float_1_5_21_16_8_1_5_21_16_8",
               "ND2NZ_float_t_1_1_1_49_35_1_1_1_49_35",
               "DN2ZN_float_t_1_1_1_49_35_1_1_1_49_35"]


def tload_golden(fmt, x, shape, c0):
    """gen_data.py's gen_golden_data: the box; ND2NZ: padded to whole c0 columns, then
    (S4 / c0, rows, c0); DN2ZN: the DN box padded to whole c0 rows, then (S3 / c0, S4, c0)."""
    s0, s1, s2, s3, s4 = shape
    if fmt in ("ND", "NZ"):
        return x[:s0, :s1, :s2, :s3, :s4].copy()
    if fmt == "ND2NZ":
        g = np.zeros((s0, s1, s2, s3, up(s4, c0)), x.dtype)
        g[..., :s4] = x[:s0, :s1, :s2, :s3, :s4]
        return g.reshape(s0, s1, s2, s3, -1, c0).transpose(4, 0, 1, 2, 3, 5).copy()
    g = np.zeros((s0, s1, s2, s4, up(s3, c0)), x.dtype)
    g[..., :s3] = x[:s0, :s1, :s2, :s4, :s3]
    return g.reshape(s0, s1, s2, s4, -1, c0).transpose(0, 1, 2, 4, 3, 5).copy()


@pytest.mark.parametrize("case", TLOAD_CASES, ids=[f"TLoadGM2L1Test.{c}" for c in TLOAD_CASES])
def test_tload_gm2mat(make_kernels, case):
    """TLoadGM2L1Test.<case>: TLOAD of the box into a Mat tile, the tile's L1 words out as
    TSTORE_MAT2GM bursts them; golden from gen_data.py (seed 19, one RandomState per case).
    main.cpp: ResultCmp<T>(golden, out, 0.001f) over dstDataSize elements."""
    fmt, t, shape, whole = parse(case)
    gdt, kdt = TYPES[t]
    w0, w1, w2, w3, w4 = whole
    dims = (w0, w1, w2, w4, w3) if fmt == "DN2ZN" else whole
    x = np.random.RandomState(19).randint(-5, 5, size=dims).astype(gdt)
    golden = tload_golden(fmt, x, shape, c0_of(kdt))
    kernel = make_kernels(SOURCES[fmt](kdt, shape, whole)).k
    out, = run_kernel(kernel, [words_in(x, kdt)], [(golden.shape, words_in(golden, kdt).dtype)])
    cmp = CMP[gdt]
    assert result_cmp(as_words(golden, cmp), as_words(out, cmp), 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(as_words(out, np.uint8), as_words(golden, np.uint8))


# ------------------------------------------------------------------------------------ TSTORE
# TEST_F(TStoreMat2GMTest, <case>) -> gen_data.py's (format, dtype, gShape, gWholeShape)
TSTORE_CASES = {"case_nd5": ("ND", "bfloat16_t", (1, 1, 1, 128, 128), (1, 1, 1, 256, 256)),
                "case_nz3": ("NZ", "int8_t", (1, 16, 32, 16, 32), (1, 32, 32, 16, 32)),
                "case_nz4": ("NZ", "bfloat16_t", (2, 4, 5, 16, 16), (7, 7, 7, 16, 16)),
                "case_nz2": ("NZ", "int16_t", (2, 15, 11, 16, 16), (3, 23, 13, 16, 16)),
                "case_nz1": ("NZ", "float", (1, 5, 21, 16, 8), (1, 5, 21, 16, 8))}


@pytest.mark.parametrize("case", TSTORE_CASES, ids=[f"TStoreMat2GMTest.{c}" for c in TSTORE_CASES])
def test_tstore_mat2gm(make_kernels, case):
    """TStoreMat2GMTest.<case>: TLOAD of the box into a Mat tile, TSTORE of it to the same box of
    a zeroed tensor of the whole shape. gen_data.py (seed 19, one RandomState per case): input
    randint(-5, 5) of the whole shape; golden zeros but the box, the input's. main.cpp:
    ResultCmp<T>(golden, out, 0.001f) over dataSize elements."""
    fmt, t, shape, whole = TSTORE_CASES[case]
    gdt, kdt = TYPES[t]
    s0, s1, s2, s3, s4 = shape
    x = np.random.RandomState(19).randint(-5, 5, size=whole).astype(gdt)
    golden = np.zeros(whole, gdt)
    golden[:s0, :s1, :s2, :s3, :s4] = x[:s0, :s1, :s2, :s3, :s4]
    kernel = make_kernels(SOURCES[fmt](kdt, shape, whole, store_to="box")).k
    out, = run_kernel(kernel, [words_in(x, kdt)], [(whole, words_in(golden, kdt).dtype)])
    cmp = CMP[gdt]
    assert result_cmp(as_words(golden, cmp), as_words(out, cmp), 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(as_words(out, np.uint8), as_words(golden, np.uint8))
