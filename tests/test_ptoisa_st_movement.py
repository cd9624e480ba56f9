"""pto-isa's st cases of TGATHER (mask-pattern form), TSORT32, TMRGSORT, TEXTRACT, TMOV,
TRESHAPE, TSUBVIEW, TSTORE from Acc, TLOAD and TSTORE (tests/cpu/st/testcase/tgather, tsort32,
tmrgsort, textract, tmov, treshape, tsubview, tstore_acc2gm, tload, tstore at 3186c381), in
the AI-core API as their kernels write them. Each golden is its gen_data.py's (or, where the
case makes its data in C++, its main.cpp's / kernel's get_input_golden), in numpy; each
tolerance its main.cpp's ResultCmp. Moves are exact, so the ports also compare the bytes.

Cases A2/A3 refuses, ported as the refusal (a CompileError):
- TGATHERTest.case1_i8_* and case1_u8_* (14): A2/A3's mask-pattern TGATHER takes 2- and
  4-byte elements ("Fix: TGATHER src element type must be 16 or 32-bit wide",
  include/pto/npu/a2a3/TGather.hpp line 144); TGATHERTest.case_1D_int8_* and case_1D_uint8_*
  (2): its index form too ("Fix: TGATHER expect b16/b32", TGather.hpp line 22).
- TEXTRACTTest's 23 cases: Mat -> Mat. A2/A3's TEXTRACT_TILE_IMPL (TExtract.hpp lines
  52-71) moves Mat into Left or Right (or Acc into Mat) only; with a dtype change
  CheckTExtract's static_assert fails ("TExtract: Destination and Source tile data types must
  be the same.", line 21); with one dtype no branch is taken and nothing moves. pypto_sim
  refuses a Mat destination. (Layout 2, NZ - ColMajor with a RowMajor fractal - is pypto_sim's
  default Mat tile, whose layout names its fractals' inner order (frontend/layout_builtins.py
  fractal_box); layout 1, an unboxed DN tile, is a ColMajor (ZN) Mat tile here: pypto_sim's Mat
  tiles are boxed, and their fractal order is not modelled for values.)
- TMOVTest's Acc -> Vec cases whose tiles have no fractal (SLayout NoneBox): A2/A3's TLOAD
  has no Acc destination ("Fix: Dst TileType must be Vec or Mat!",
  include/pto/common/arch/memory/tload_common.hpp line 312), nor is Acc -> Vec a TMOV path
  (TMov.hpp line 148).
- TMOVTest's Vec cases with a ColMajor (DN) tile, and TLOADTest's cases 1 - 6 and 8: a
  GlobalTensor whose layout is not the Vec tile's. These kernels load from or store to an ND
  GlobalTensor (TMOV), or a Layout::DN one (TLOAD's dyn = 1 path, getGlobalTensor in
  tload_kernel.cpp), with a tile of the other layout; A2/A3's TLOAD of a Vec tile takes
  ND2ND / DN2DN / NZ2NZ only (tload_common.hpp line 340), its TSTORE the same
  (tstore_common.hpp lines 339-346). Their PadValue (PADMAX / PADMIN) has no pypto_sim form
  and does not change the refusal.
- TLOADTest.case_float4_* and TStoreTest.*_float4_* (10): A5's 4-bit floats, outside A2/A3's
  TLOAD / TSTORE dtype lists (tload_common.hpp line 309, tstore_common.hpp line 335).

Ported as A2/A3 runs them:
- TGATHER's mask cases load a (rows + 5) x (cols + 32) src tile with valid (rows, cols);
  A2/A3 gathers each row's valid columns at the tile's row pitch (TGather.hpp lines 114 and
  130-132), over int16, uint16 and uint32 too (TGATHER.md, A2A3).
- TGATHERTest.case_1D_float / int32 / half / int16 (4): the index form TGATHER(dst, src0,
  indices, tmp) of runTGather1D, its tiles at their TASSIGNed shapes.
- TSORT32's cases with their uint32 index tile ("Idx must be uint32_t.", TSort32.hpp line
  154), one row of indices per row.

Ported in tests/test_ptoisa_st_gatherb_nz_quant.py (this module is past 600 lines): TGATHERBTest
(8), TLOADTest.case_NZ_* and TStoreTest.NZ_* (6), TStoreAcc2gmTest.case16, 17, 18, 24, 25 and
case_relu_21 (pre-quant scalar; case26, a float Acc quantized to half, as A2/A3's refusal), and
TMOVTest's 12 Vec cases with an NZ tile (as the refusal).

Not ported:
- TMRGSORTTest.case_multi1, case_multi2, case_exhausted1 and case_exhausted2 (the multi-list
  form): ported from pto-isa's on-device suite, which has them and two more, in
  test_ptoisa_st_tmrgsort.py.
- TEXTRACTTest.FpVariantSlicesSourceTile: TEXTRACT_FP (an extract between Vec tiles with an fp
  tile) is not built (pypto_sim's quantizing fp operand is tstore's Scaling tile only).
- TMOVTest's Acc -> Vec cases with a fractal (SLayout RowMajor / ColMajor) tile: A2/A3 refuses
  their TLOAD into Acc as the NoneBox ones above; the Vec tiles other than NZ that they name
  (RowMajor with a ColMajor fractal, ColMajor with a ColMajor one) have no pypto_sim form.
- TLOADTest.case_float_GT_32_64_128_VT_64_128_BLK32_DN and ..._255_60_..._DN: a Layout::DN
  GlobalTensor given row-major strides (stride3 = 4, stride4 = 1) into a ColMajor tile;
  pto.tload's DN takes one run pitch, its runs the columns.
- TStoreTest.ND_uint64_t_*, DN_uint64_t_*, ND_int64_* and DN_int64_*: A2/A3 loads and stores
  8-byte Vec tiles ND2ND / DN2DN (tload_common.hpp lines 317-323, tstore_common.hpp lines
  347-353); pypto_sim has no 64-bit Vec tile dtype (int64 is a Scaling / Mat dtype only, for
  the quantization words: not built).
- TStoreTest.DN_int16_t_3_1_1_1_124_5_1_1_2_128: a 5-D box, one TLOAD / TSTORE in pto-isa;
  pto.tload has one stride, so a port needs one transfer per (x0, x1, x2) slab through column
  windows of a ColMajor tile, which A2/A3 places at colIdx x ColStride (TSubView.hpp: 124 x 16
  int16, 3968 bytes in). pypto_sim holds a ColMajor tile's values row-major and places a
  window row-major (248 bytes in, refused as misaligned): windows of ColMajor tiles at the
  device's offsets are not built.
- The bf16 cases (built only with CPU_SIM_BFLOAT_ENABLED / PTO_CPU_SIM_ENABLE_BF16).
"""
import struct

import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import MASK_PATTERNS, STORE_ACC, as_words, result_cmp, run_kernel


def two_tensors(n, dt0, dt1=None):
    """Two device tensors of n elements (4 bytes each at most), for compile-only checks."""
    return tuple(pto.alloc_tensor(n * 4, getattr(pto, d)) for d in (dt0, dt1 or dt0))


# --------------------------------------------------------------------------------- TGATHER
TGATHER = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r5}, {c32}, pto.{sdt}, valid=({r}, {c}))
            dst = pto.alloc_tile({r}, {c}, pto.{ddt})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tgather(dst, src, "{p}")
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
            pto.tstore(O, dst)
"""


def tgather_source(r, c, sdt, ddt, p):
    """runTGATHER's kernel: a (rows + 5) x (cols + 32) src tile with valid (rows, cols)."""
    return TGATHER.format(r=r, c=c, r5=r + 5, c32=c + 32, sdt=sdt, ddt=ddt, p=p)


# tgather_common.h's shapes per dtype group
FLOAT_SHAPES = {"P0101": (4, 64), "P1010": (7, 1024), "P0001": (3, 1056), "P0010": (4, 128),
                "P0100": (5, 256), "P1000": (6, 288), "P1111": (7, 320)}
HALF_SHAPES = {"P0101": (5, 128), "P1010": (7, 1024), "P0001": (3, 1056), "P0010": (4, 128),
               "P0100": (5, 256), "P1000": (6, 288), "P1111": (7, 320)}
# TEST_F(TGATHERTest, case1_<name>): (dtype, pattern, rows, cols)
TGATHER_CASES = {f"float_{p}": ("float32", p, *FLOAT_SHAPES[p]) for p in FLOAT_SHAPES}
TGATHER_CASES.update({f"half_{p}": ("float16", p, *HALF_SHAPES[p])
                      for p in ("P0101", "P1010", "P0001", "P0100", "P1000")})
TGATHER_CASES.update({"U16_P0101": ("uint16", "P0101", *HALF_SHAPES["P0101"]),
                      "U16_P1010": ("uint16", "P1010", *HALF_SHAPES["P1010"]),
                      "I16_P0001": ("int16", "P0001", *HALF_SHAPES["P0001"]),
                      "I16_P0010": ("int16", "P0010", *HALF_SHAPES["P0010"]),
                      "U32_P0100": ("uint32", "P0100", *FLOAT_SHAPES["P0100"]),
                      "I32_P1000": ("int32", "P1000", *FLOAT_SHAPES["P1000"]),
                      "I32_P1111": ("int32", "P1111", *FLOAT_SHAPES["P1111"])})


@pytest.mark.parametrize("case", TGATHER_CASES)
def test_tgather_mask_pattern(make_kernels, case):
    """TGATHERTest.case1_<case>. gen_data.py (seed 19): x1 = randint(1, 100) of rows x cols as
    the dtype; golden = the columns the pattern selects of every row (x1[:, 0::2] for P0101,
    x1[:, 1::2] P1010, x1[:, k::4] P0001 / P0010 / P0100 / P1000 for k = 0..3, all for P1111),
    flattened: packed from dst's start. The kernel's src tile is (rows + 5) x (cols + 32) with
    valid (rows, cols); dst is rows x cols, stored whole to a rows x cols tensor. main.cpp reads
    the golden's bytes of the output as floats: ResultCmp(golden, out, 0.001f)."""
    dt, p, r, c = TGATHER_CASES[case]
    rng = np.random.RandomState(19)
    x = rng.randint(1, 100, [r, c]).astype(dt)
    first, step = MASK_PATTERNS[p]
    golden = x[:, first::step].flatten()
    kernel = make_kernels(tgather_source(r, c, dt, dt, p)).k
    out, = run_kernel(kernel, [x], [((r, c), dt)])
    got = out.ravel()[:golden.size]
    assert result_cmp(as_words(golden, np.float32), as_words(got, np.float32), 0.001)
    np.testing.assert_array_equal(got, golden)


def test_tgather_xtype_float_to_int32_p1010(make_kernels):
    """TGATHERTest.case_xtype_float_to_int32_P1010 (7 x 1024 float src, int32 dst, P1010):
    main.cpp's data: src word 2i is 1.0f, word 2i + 1 the float whose bits are the int32
    (i % 255) + 1; the odd words gathered into int32 are those ints, compared exactly, and
    some are nonzero."""
    r, c = FLOAT_SHAPES["P1010"]
    n = r * (c // 2)
    expected = (np.arange(n) % 255 + 1).astype(np.int32)
    src = np.empty(r * c, np.float32)
    src[0::2] = 1.0
    src[1::2] = expected.view(np.float32)
    kernel = make_kernels(tgather_source(r, c, "float32", "int32", "P1010")).k
    out, = run_kernel(kernel, [src.reshape(r, c)], [((r, c), np.int32)])
    got = out.ravel()[:n]
    assert np.count_nonzero(got != expected) == 0
    assert np.count_nonzero(got) > 0


@pytest.mark.parametrize("dt", ["int8", "uint8"])
@pytest.mark.parametrize("p", list(HALF_SHAPES))
def test_the_8_bit_tgather_a2a3_refuses(make_kernels, dt, p):
    """TGATHERTest.case1_i8_<p> and case1_u8_<p> (B8 shapes = the half ones): A2/A3's
    mask-pattern TGATHER takes 16- and 32-bit elements only (static_assert "Fix: TGATHER src
    element type must be 16 or 32-bit wide", TGather.hpp line 144), so the kernel does not
    compile."""
    r, c = HALF_SHAPES[p]
    kernel = make_kernels(tgather_source(r, c, dt, dt, p)).k
    with pytest.raises(pto.CompileError, match=rf"pto.tgather: '(dst|src)' holds {dt}"):
        kernel.program_for(two_tensors(r * c, dt))


TGATHER_1D = """
@pto.kernel
def k(S, I, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({sr}, {sc}, pto.{dt})
            src1 = pto.alloc_tile({dr}, {dc}, pto.int32)
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt})
            tmp = pto.alloc_tile({dr}, {dc}, pto.int32)
            pto.tload(src0, S)
            pto.tload(src1, I)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tgather(dst, src0, src1, tmp)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""
# TGATHERTest.case_1D_<name>: (dtype, src rows x cols, dst rows x cols), gen_data.py's TGatherParams1D
TGATHER_1D_CASES = {"float_32x1024_16x64": ("float32", 32, 1024, 16, 64),
                    "int32_32x512_16x256": ("int32", 32, 512, 16, 256),
                    "half_16x1024_16x128": ("float16", 16, 1024, 16, 128),
                    "int16_32x256_32x64": ("int16", 32, 256, 32, 64)}


@pytest.mark.parametrize("case", TGATHER_1D_CASES, ids=[f"TGATHERTest.case_1D_{c}" for c in TGATHER_1D_CASES])
def test_tgather_1d(make_kernels, case):
    """gen_data.py (seed 19): src = randint(-20, 20) of srcR * srcC as the dtype, indices =
    randint(0, srcR * srcC) of dstR * dstC as int32, golden = src[indices]. runTGather1D's tiles:
    src0 srcR x srcC, the indices, dst and tmp (int32) dstR x dstC. main.cpp: ResultCmp<T>(golden,
    out, 0.001f) over dstFileSize elements of T (the output's, then zeros in both)."""
    dt, sr, sc, dr, dc = TGATHER_1D_CASES[case]
    rng = np.random.RandomState(19)
    src = rng.randint(-20, 20, sr * sc).astype(dt)
    indices = rng.randint(0, sr * sc, dr * dc).astype(np.int32)
    golden = src[indices]
    kernel = make_kernels(TGATHER_1D.format(sr=sr, sc=sc, dr=dr, dc=dc, dt=dt)).k
    out, = run_kernel(kernel, [src.reshape(sr, sc), indices.reshape(dr, dc)], [((dr, dc), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out.ravel(), golden)


@pytest.mark.parametrize("case, dt", [("int8_16x1024_16x128", "int8"), ("uint8_32x256_32x64", "uint8")],
                         ids=["TGATHERTest.case_1D_int8_16x1024_16x128", "TGATHERTest.case_1D_uint8_32x256_32x64"])
def test_the_8_bit_index_tgather_a2a3_refuses(make_kernels, case, dt):
    """A2/A3's index TGATHER takes 2- and 4-byte data (static_assert "Fix: TGATHER expect
    b16/b32", TGather.hpp line 22), so runTGather1D<int8_t> / <uint8_t> does not compile."""
    sr, sc, dr, dc = (int(v) for part in case.split("_")[1:] for v in part.split("x"))
    kernel = make_kernels(TGATHER_1D.format(sr=sr, sc=sc, dr=dr, dc=dc, dt=dt)).k
    with pytest.raises(pto.CompileError, match="expect b16/b32"):
        kernel.program_for((pto.alloc_tensor(sr * sc, getattr(pto, dt)), pto.alloc_tensor(4 * dr * dc, pto.int32),
                            pto.alloc_tensor(dr * dc, getattr(pto, dt))))


TGATHER_COL = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r5}, {c32}, pto.{dt}, valid=({r}, {c}))
            dst = pto.alloc_tile({out}, {c}, pto.{dt})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tgather(dst, src, "{p}", axis="col")
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
            pto.tstore(O, dst)
"""
# tgather_common.h's COL_HALF_<pattern>_ROW / _COL, the shapes of every case_col_* (float and half)
COL_SHAPES = {"P0101": (8, 128), "P1010": (14, 64), "P0001": (12, 256), "P0010": (16, 128),
              "P0100": (20, 64), "P1000": (24, 96), "P1111": (7, 320)}
TGATHER_COL_CASES = [(name, dt, p) for name, dt in (("float", "float32"), ("half", "float16")) for p in COL_SHAPES]


@pytest.mark.parametrize("name, dt, p", TGATHER_COL_CASES, ids=[f"TGATHERTest.case_col_{n}_{p}"
                                                                for n, _dt, p in TGATHER_COL_CASES])
def test_tgather_col(make_kernels, name, dt, p):
    """TGATHERTest.case_col_<dtype>_<pattern> (runTGATHER_COL: TGATHER<..., GatherAxis::GATHER_COL>):
    a (rows + 5) x (cols + 32) src tile with valid (rows, cols), dst (rows / period) x cols, where
    the period is 2 for P0101 / P1010, 4 for P0001 .. P1000, 1 for P1111. gen_data.py (seed 19):
    x1 = randint(1, 100) of rows x cols as the dtype; golden = the rows the pattern selects
    (x1[0::2] P0101, x1[1::2] P1010, x1[k::4] P0001 / P0010 / P0100 / P1000 for k = 0..3, all for
    P1111), flattened. main.cpp compares dstSize bytes as floats: ResultCmp(golden, out, 0.001f)."""
    r, c = COL_SHAPES[p]
    first, period = MASK_PATTERNS[p]
    rng = np.random.RandomState(19)
    x = rng.randint(1, 100, [r, c]).astype(dt)
    golden = x[first::period].flatten()
    kernel = make_kernels(TGATHER_COL.format(r=r, c=c, r5=r + 5, c32=c + 32, dt=dt, p=p, out=r // period)).k
    out, = run_kernel(kernel, [x], [((r // period, c), dt)])
    assert result_cmp(as_words(golden, np.float32), as_words(out, np.float32), 0.001)
    np.testing.assert_array_equal(out.ravel(), golden)


# --------------------------------------------------------------------------------- TSORT32
TSORT32 = """
@pto.kernel
def k(S, I, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            idx = pto.alloc_tile({r}, {c}, pto.uint32)
            dst = pto.alloc_tile({r}, {dc}, pto.{dt})
            tmp = pto.alloc_tile(1, 32, pto.{dt})
            pto.tload(src, S)
            pto.tload(idx, I)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tsort32(dst, src, idx, tmp)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

# TEST_F(TSORT32Test, testN): (dtype, rows, cols); tile = global = valid
TSORT32_CASES = {"test0": ("float16", 16, 16), "test1": ("float32", 8, 32), "test2": ("float32", 7, 32),
                 "test3": ("float16", 32, 16)}


def sort_structures(values, indices, dt):
    """The 8-byte (value, index) structures gen_data.py's write_output_to_bin packs: float32
    'fI' (value, uint32 index); float16 'e xxI' (value, two zero bytes, uint32 index)."""
    fmt = "fI" if dt == "float32" else "exxI"
    return np.frombuffer(b"".join(struct.pack(fmt, v, int(i)) for v, i in zip(values, indices)), np.uint8)


def sort_rows_in_32_elem_blocks(x, idx):
    """gen_data.py's: each row padded with -inf to whole 32s, each run of 32 sorted by value
    descending (stable argsort of -x), the padding cut off again."""
    rows, cols = x.shape
    padded = -(-cols // 32) * 32
    px = np.full((rows, padded), -np.inf, x.dtype)
    pi = np.zeros((rows, padded), np.uint32)
    px[:, :cols] = x
    pi[:, :cols] = idx
    bx, bi = px.reshape(rows, -1, 32), pi.reshape(rows, -1, 32)
    order = np.argsort(-bx, axis=2, kind="stable")
    sx = np.take_along_axis(bx, order, axis=2).reshape(rows, padded)[:, :cols]
    si = np.take_along_axis(bi, order, axis=2).reshape(rows, padded)[:, :cols]
    return sx, si


@pytest.mark.parametrize("case", TSORT32_CASES)
def test_tsort32(make_kernels, case):
    """TSORT32Test.<case>. gen_data.py (which seeds nothing: its random cases draw from numpy's
    global generator, seeded here with 19 as the other st data): cols < 32 - every row
    arange(cols) with indices arange(cols); else uniform(-10, 10) rows x cols as the dtype with
    indices arange(rows * cols), uint32. Golden: each run of 32 of each row sorted by value descending,
    as (value, uint32 index) structures. The kernel passes a 1 x 32 tmp tile (TSORT32's
    non-32-aligned form). main.cpp: ResultCmp<T0>(golden, out, 0.001f) over vectors of
    rows * cols * 8 elements (the bytes)."""
    dt, r, c = TSORT32_CASES[case]
    width = 8 // np.dtype(dt).itemsize
    if c < 32:
        x = np.tile(np.arange(c).astype(dt), (r, 1))
        idx = np.tile(np.arange(c, dtype=np.uint32), (r, 1))
    else:
        x = np.random.RandomState(19).uniform(low=-10, high=10, size=(r, c)).astype(dt)
        idx = np.arange(r * c, dtype=np.uint32).reshape(r, c)
    sx, si = sort_rows_in_32_elem_blocks(x, idx)
    golden = sort_structures(sx.ravel(), si.ravel(), dt)
    kernel = make_kernels(TSORT32.format(r=r, c=c, dc=c * width, dt=dt)).k
    out, = run_kernel(kernel, [x, idx], [((r, c * width), dt)])
    assert result_cmp(as_words(golden, dt), as_words(out, dt), 0.001, compared=golden.size)
    np.testing.assert_array_equal(as_words(out, np.uint8), golden)


# -------------------------------------------------------------------------------- TMRGSORT
TMRGSORT_SINGLE = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(1, {c}, pto.{dt})
            dst = pto.alloc_tile(1, {c}, pto.{dt})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tmrgsort(dst, src, {block})
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
"""


def tmrgsort_topk_source(dt, cols, topk):
    """RunTMrgsortTopk as tmrgsort_kernel.cpp writes it, its loops unrolled (their bounds are
    template constants): TMRGSORT of groups of 4 blocks of 64, 256, ... words while 4 blocks
    fit, then SortTailBlock's two-list merges (FillMrgArray's block lengths), or the copy of
    tmp into dst. Its DataCopy (a scalar loop over UB words) is a UB -> UB pto.tmov here."""
    lines = [f"src = pto.alloc_tile(1, {cols}, pto.{dt})",
             f"dst = pto.alloc_tile(1, {topk}, pto.{dt})",
             f"tmp = pto.alloc_tile(1, {cols}, pto.{dt})",
             "pto.tload(src, S)"]
    block = 64
    while block * 4 <= cols:
        whole = cols // (block * 4) * (block * 4)
        lines += ["pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)",
                  "pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)",
                  f"pto.tmrgsort(tmp, src, {block})",
                  "pto.pipe_barrier(pto.PIPE_V)",
                  f"pto.tmov(pto.tsubview(src, 0, 0, 1, {whole}), pto.tsubview(tmp, 0, 0, 1, {whole}))",
                  "pto.pipe_barrier(pto.PIPE_V)",
                  "pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)",
                  "pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)"]
        block *= 4
    if block < cols:
        lines.append(f"tmp1 = pto.alloc_tile(1, {cols}, pto.{dt})")
        mrg, inner, i = [], cols, block
        while i >= 64:
            count = inner // i
            mrg += [i] * count
            inner -= count * i
            i //= 4
        sorted_len = 0
        for j in range(len(mrg) - 1):
            sorted_len += mrg[j]
            n0, n1 = min(sorted_len, topk), min(mrg[j + 1], topk)
            lines += [f"s0_{j} = pto.alloc_tile(1, {topk}, pto.{dt}, valid=(1, {n0}))",
                      f"s1_{j} = pto.alloc_tile(1, {topk}, pto.{dt}, valid=(1, {n1}))",
                      f"pto.tmov(s0_{j}, pto.tsubview(src, 0, 0, 1, {n0}))",
                      "pto.pipe_barrier(pto.PIPE_V)",
                      f"pto.tmov(s1_{j}, pto.tsubview(src, 0, {sorted_len}, 1, {n1}))",
                      "pto.pipe_barrier(pto.PIPE_V)",
                      f"pto.tmrgsort(dst, s0_{j}, src1=s1_{j}, tmp=tmp1)",
                      "pto.pipe_barrier(pto.PIPE_V)",
                      f"pto.tmov(pto.tsubview(src, 0, 0, 1, {topk}), dst)",
                      "pto.pipe_barrier(pto.PIPE_V)"]
    else:
        lines.append(f"pto.tmov(dst, pto.tsubview(tmp, 0, 0, 1, {topk}))")
    lines += ["pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)",
              "pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)",
              "pto.tstore(O, dst)"]
    body = "".join(f"            {line}\n" for line in lines)
    return ("\n@pto.kernel\ndef k(S, O):\n    with pto.vector():\n"
            "        if pto.get_subblock_id() == 0:\n" + body)


def tmrgsort_input(dt, pairs, list_pairs):
    """gen_data.py's gen_input_data for one list: uniform(0, 1) of `pairs` values as the dtype
    with indices arange(pairs), each run of list_pairs sorted by value descending (stable)."""
    x = np.random.RandomState(19).uniform(low=0, high=1, size=(1, pairs)).astype(dt)
    idx = np.arange(pairs, dtype=np.uint32)
    xr, ir = x.reshape(-1, list_pairs), idx.reshape(-1, list_pairs)
    order = np.argsort(-xr, kind="stable", axis=1)
    return np.take_along_axis(xr, order, axis=1).ravel(), np.take_along_axis(ir, order, axis=1).ravel()


def sorted_by_value(values, indices, group):
    """Each run of `group` structures sorted by value descending (stable argsort of -x)."""
    vr, ir = values.reshape(-1, group), indices.reshape(-1, group)
    order = np.argsort(-vr, kind="stable", axis=1)
    return np.take_along_axis(vr, order, axis=1).ravel(), np.take_along_axis(ir, order, axis=1).ravel()


# TEST_F(TMRGSORTTest, case_singleN): (dtype, gen_data src0_col, block_len) - a float's words;
# the half kernels take twice the words (TYPE_COEF)
TMRGSORT_SINGLE_CASES = {"case_single1": ("float32", 256, 64), "case_single3": ("float32", 512, 64),
                         "case_single5": ("float16", 256, 64), "case_single7": ("float16", 512, 64),
                         "case_single8": ("float16", 1024, 256)}


@pytest.mark.parametrize("case", TMRGSORT_SINGLE_CASES)
def test_tmrgsort_single(make_kernels, case):
    """TMRGSORTTest.<case> (TMrgsortSingle: TMRGSORT(dst, src, blockLen)). gen_data.py (seed
    19): src0_col / 2 (value, index) pairs, uniform(0, 1) as the dtype, sorted in lists of
    block_len / 2 pairs; golden: each group of 4 lists sorted by value descending (stable: the
    first list wins a tie). The GM buffers are float: a half kernel's words are twice as many
    and its blockLen twice. main.cpp: ResultCmp over the output's bytes as floats, eps 0.001."""
    dt, col, block_len = TMRGSORT_SINGLE_CASES[case]
    pairs, list_pairs = col // 2, block_len // 2
    values, indices = tmrgsort_input(dt, pairs, list_pairs)
    gv, gi = sorted_by_value(values, indices, 4 * list_pairs)
    src = sort_structures(values, indices, dt).view(dt)
    golden = sort_structures(gv, gi, dt)
    coef = 4 // np.dtype(dt).itemsize
    kernel = make_kernels(TMRGSORT_SINGLE.format(c=col * coef, dt=dt, block=block_len * coef)).k
    out, = run_kernel(kernel, [src.reshape(1, -1)], [((1, col * coef), dt)])
    assert result_cmp(as_words(golden, np.float32), as_words(out, np.float32), 0.001)
    np.testing.assert_array_equal(as_words(out, np.uint8), golden)


@pytest.mark.parametrize("case, dt", [("case_topk2", "float32"), ("case_topk5", "float16")])
def test_tmrgsort_topk(make_kernels, case, dt):
    """TMRGSORTTest.<case> (TMrgsortTopk, 2048 float words, topk 2048). gen_data.py (seed 19):
    1024 pairs, uniform(0, 1) as the dtype, sorted in lists of 32; golden: all 1024 sorted by
    value descending (stable), topk = all of them. The half kernel has 4096 words and starts
    at blockLen 64 words (16 structures, halves of the sorted lists). ResultCmp over the
    bytes as floats, eps 0.001."""
    values, indices = tmrgsort_input(dt, 1024, 32)
    gv, gi = sorted_by_value(values, indices, 1024)
    src = sort_structures(values, indices, dt).view(dt)
    golden = sort_structures(gv, gi, dt)
    words = 2048 * (4 // np.dtype(dt).itemsize)
    kernel = make_kernels(tmrgsort_topk_source(dt, words, words)).k
    out, = run_kernel(kernel, [src.reshape(1, -1)], [((1, words), dt)])
    assert result_cmp(as_words(golden, np.float32), as_words(out, np.float32), 0.001)
    np.testing.assert_array_equal(as_words(out, np.uint8), golden)


# -------------------------------------------------------------------------------- TEXTRACT
TEXTRACT = """
@pto.kernel
def k(S, O):
    with pto.cube():
        src = pto.alloc_tile({r}, {c}, pto.{st}, loc=pto.Mat, valid=({vr}, {vc}), layout=pto.{sl})
        dst = pto.alloc_tile({r}, {c}, pto.{dt}, loc=pto.Mat, valid=({dvr}, {dvc}), layout=pto.{dl})
        pto.tload(src, S)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.textract(dst, src, {ir}, {ic})
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tstore(O, dst)
"""

# main.cpp's TEST_Fs: textract_test<ST, DT, rows, cols, validRows, validCols, idxRow, idxCol,
# srcLayout, dstLayout> (layout 0 RowMajor, 1 ColMajor, 2 ColMajor with a RowMajor fractal)
TEXTRACT_PAIRS = [("float16", "float16", 32, 32), ("float16", "float32", 32, 32), ("float32", "float32", 128, 96),
                  ("int32", "float32", 128, 96), ("int8", "int32", 128, 64)]
TEXTRACT_CASES = [(st, dt, r, c, r, c, 0, 0, 0, 0) for st, dt, r, c in TEXTRACT_PAIRS] + \
                 [(st, dt, r, c, r, c, 8, 16, 0, 0) for st, dt, r, c in TEXTRACT_PAIRS] + \
                 [(st, dt, r, c, r - 1 if r == 32 else r - 3, c - 1 if c == 32 else c - 3, 8, 16, 0, 0)
                  for st, dt, r, c in TEXTRACT_PAIRS] + \
                 [("float32", "float32", 128, 96, 125, 93, 8, 16, s, d)
                  for s in range(3) for d in range(3) if (s, d) != (0, 0)]
CPP = {"float16": "half", "float32": "float", "int32": "int32_t", "int8": "int8_t"}
TEXTRACT_IDS = [f"case_{CPP[s]}_{CPP[d]}_{r}_{c}_{vr}_{vc}_IDX_{ir}_{ic}_L_{sl}_{dl}"
                for s, d, r, c, vr, vc, ir, ic, sl, dl in TEXTRACT_CASES]
LAYOUT = {0: "RowMajor", 1: "ColMajor", 2: "RowMajor"}


@pytest.mark.parametrize("case", TEXTRACT_CASES, ids=TEXTRACT_IDS)
def test_textract_mat_to_mat_a2a3_does_not_do(make_kernels, case):
    """TEXTRACTTest's cases: TLOAD of a Mat tile, TEXTRACT of the window at (idxRow, idxCol)
    into another Mat tile (of DT), TSTORE of it. A2/A3's TEXTRACT moves Mat into Left or Right
    only (TExtract.hpp lines 52-71; a dtype change fails CheckTExtract's static_assert, line
    21); pypto_sim refuses the Mat destination."""
    st, dt, r, c, vr, vc, ir, ic, sl, dl = case
    kernel = make_kernels(TEXTRACT.format(r=r, c=c, st=st, dt=dt, vr=vr, vc=vc, dvr=vr - ir, dvc=vc - ic,
                                          ir=ir, ic=ic, sl=LAYOUT[sl], dl=LAYOUT[dl])).k
    with pytest.raises(pto.CompileError, match=r"textract: dst: tile 'dst' is in Mat \(L1\) but TEXTRACT "
                                               r"takes dst in Left or Right or Bias"):
        kernel.program_for(two_tensors(r * c, st, dt))


# ------------------------------------------------------------------------------------ TMOV
def glibc_rand(n, seed=1):
    """The first n values of glibc's rand() after srand(seed) (TYPE_3: r[i] = r[i - 3] +
    r[i - 31] mod 2**32, the output r >> 1, the first 344 discarded); main.cpp's testMov calls
    std::rand() without srand, i.e. seed 1."""
    r = [seed]
    for i in range(1, 31):
        r.append((16807 * r[i - 1]) % 2147483647)
    for i in range(31, 34):
        r.append(r[i - 31])
    for i in range(34, 344 + n):
        r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
    return np.array([x >> 1 for x in r[344:]], np.int64)


TMOV = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt}, loc=pto.{sloc}, valid=({vr}, {vc}), layout=pto.{sl})
            dst = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}), layout=pto.{dl})
            pto.tload(src, S)
            pto.tmov(dst, src)
            pto.tstore(O, dst)
"""


# testMov has no sections; with an Acc tile the port's is the implicit (cube) one
TMOV_NO_SECTIONS = """
@pto.kernel
def k(S, O):
    src = pto.alloc_tile({r}, {c}, pto.{dt}, loc=pto.{sloc}, valid=({vr}, {vc}), layout=pto.{sl})
    dst = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}), layout=pto.{dl})
    pto.tload(src, S)
    pto.tmov(dst, src)
    pto.tstore(O, dst)
"""


def tmov_data(dt, vr, vc):
    """testMov's srcData: static_cast<T>(std::rand() / 1000.0), validRow x validCol (for half
    most of them overflow to inf, as the C++ conversion rounds them)."""
    with np.errstate(over="ignore"):
        return (glibc_rand(vr * vc) / 1000.0).astype(dt).reshape(vr, vc)


# TMOV_TEST(T, rows, cols, validRow, validCol, Vec, RowMajor, NoneBox, Vec, RowMajor, NoneBox)
TMOV_ROW_MAJOR = [("float32", 64, 128, 64, 128), ("float32", 16, 24, 15, 23), ("float16", 32, 48, 15, 23)]


@pytest.mark.parametrize("dt, r, c, vr, vc", TMOV_ROW_MAJOR,
                         ids=["float_64_128_64_128", "float_16_24_15_23", "half_32_48_15_23"])
def test_tmov_vec_to_vec(make_kernels, dt, r, c, vr, vc):
    """TMOVTest.<T>_<shape>_Vec_RowMajor_NoneBox_Vec_RowMajor_NoneBox: TLOAD a RowMajor Vec
    tile (valid validRow x validCol) from a dense validRow x validCol tensor, TMOV it into
    another, TSTORE that: the data come back unchanged. ResultCmp(srcData, dstData, 0)."""
    x = tmov_data(dt, vr, vc)
    kernel = make_kernels(TMOV.format(r=r, c=c, dt=dt, vr=vr, vc=vc, sloc="Vec", sl="RowMajor", dl="RowMajor")).k
    out, = run_kernel(kernel, [x], [((vr, vc), dt)])
    assert result_cmp(x, out, 0)
    np.testing.assert_array_equal(out, x)


# the Vec cases with a ColMajor (DN) tile and no fractal: (T, rows, cols, validRow, validCol, src, dst)
TMOV_COL_MAJOR = [(dt, 64, 128, vr, vc, s, d) for dt, vr, vc in (("float32", 64, 128), ("float32", 63, 125),
                                                                  ("float16", 63, 125))
                  for s, d in (("RowMajor", "ColMajor"), ("ColMajor", "ColMajor"), ("ColMajor", "RowMajor"))]


@pytest.mark.parametrize("case", TMOV_COL_MAJOR,
                         ids=[f"{CPP[dt]}_{r}_{c}_{vr}_{vc}_Vec_{s}_NoneBox_Vec_{d}_NoneBox"
                              for dt, r, c, vr, vc, s, d in TMOV_COL_MAJOR])
def test_tmov_of_a_col_major_vec_tile_a2a3_refuses(make_kernels, case):
    """TMOVTest's Vec cases with a ColMajor tile: the GlobalTensors are ND, so a ColMajor src
    fails A2/A3's TLOAD ("Fix: TLOAD(VecTile, GlobalTensor) only support ND2ND/DN2DN/NZ2NZ!",
    tload_common.hpp line 340) and a ColMajor dst its TSTORE ("Src and dst layout must be
    same, only support ND/DN/NZ ...", tstore_common.hpp lines 339-346): the kernel does not
    compile."""
    dt, r, c, vr, vc, s, d = case
    kernel = make_kernels(TMOV.format(r=r, c=c, dt=dt, vr=vr, vc=vc, sloc="Vec", sl=s, dl=d)).k
    with pytest.raises(pto.CompileError):
        kernel.program_for(two_tensors(vr * vc, dt))


# the Acc -> Vec cases whose tiles have no fractal: (T, rows, cols, validRow, validCol, src, dst)
TMOV_ACC = [("float32", 16, 24, 15, 23, "RowMajor", "RowMajor")] + \
           [(dt, 64, 128, 64, vc, s, d) for dt, vc in (("float32", 128), ("float32", 125), ("float16", 128))
            for s, d in (("RowMajor", "RowMajor"), ("RowMajor", "ColMajor"), ("ColMajor", "ColMajor"),
                         ("ColMajor", "RowMajor"))]


@pytest.mark.parametrize("case", TMOV_ACC,
                         ids=[f"{CPP[dt]}_{r}_{c}_{vr}_{vc}_Acc_{s}_NoneBox_Vec_{d}_NoneBox"
                              for dt, r, c, vr, vc, s, d in TMOV_ACC])
def test_tmov_from_acc_a2a3_refuses(make_kernels, case):
    """TMOVTest's Acc -> Vec cases: TLOAD into an Acc tile, which A2/A3's TLOAD does not do
    ("Fix: Dst TileType must be Vec or Mat!", tload_common.hpp line 312; Acc -> Vec is not a
    TMOV path either, TMov.hpp line 148). pypto_sim refuses the TLOAD, or the tile itself where
    Acc cannot hold it (16 x 24: boxed tiles are multiples of 16; half: Acc holds float32 and
    int32)."""
    dt, r, c, vr, vc, s, d = case
    kernel = make_kernels(TMOV_NO_SECTIONS.format(r=r, c=c, dt=dt, vr=vr, vc=vc, sloc="Acc", sl=s, dl=d)).k
    why = {"float16": r"Acc \(L0C\) holds", "float32": r"TLOAD takes dst in Vec or Mat" if c % 16 == 0 and r % 16 == 0
           else r"multiple"}[dt]
    with pytest.raises(pto.CompileError, match=why):
        kernel.program_for(two_tensors(r * c, dt))


# -------------------------------------------------------------------------------- TRESHAPE
TRESHAPE = """
@pto.kernel
def k(S, O1, O2, O3):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(2, 16, pto.float32)
            pto.tload(src, S)
            dst = pto.treshape(src, 1, 32)
            pto.tstore(O1, dst)
            pto.texpands(pto.tsubview(src, 1, 0, 1, 16), 123.0)
            pto.tstore(O2, dst)
            pto.texpands(pto.tsubview(dst, 0, 0, 1, 8), -5.0)
            pto.tstore(O3, src)
"""


def test_treshape_aliases_the_source_words(make_kernels):
    """TReshapeTest.AliasesBackingStorageInCpuSim: a 2 x 16 float tile holding i + 1, TRESHAPE
    to 1 x 32: the view is the source's words (dst.data() == src.data()); a write through the
    source shows in the view (src[17] = 123) and one through the view in the source (dst[3] =
    -5). AI-core kernels write tiles with tile instructions, not scalar stores, so the writes
    are pto.texpands of a 32-byte-aligned window holding the element (row 1 of src: elements
    16..31; the first 8 of dst); the checks are the test's."""
    x = np.arange(1, 33, dtype=np.float32).reshape(2, 16)
    kernel = make_kernels(TRESHAPE).k
    alias, after_src, after_dst = run_kernel(kernel, [x], [((1, 32), np.float32)] * 2 + [((2, 16), np.float32)])
    np.testing.assert_array_equal(alias.ravel(), x.ravel())
    assert after_src.ravel()[17] == 123.0
    assert after_dst.ravel()[3] == -5.0


# -------------------------------------------------------------------------------- TSUBVIEW
TSUBVIEW = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            sub = pto.tsubview(src, 0, 0, {r}, {c}, valid=({sr}, {sc}))
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, sub)
"""

TSUBVIEW_CASES = {"case_float_64x64_64x64_32x32": ("float32", 64, 64, 32, 32),
                  "case_int32_64x64_64x64_32x32": ("int32", 64, 64, 32, 32),
                  "case_int16_64x64_64x64_32x32": ("int16", 64, 64, 32, 32),
                  "case_half_16x256_16x256_8x128": ("float16", 16, 256, 8, 128)}


@pytest.mark.parametrize("case", TSUBVIEW_CASES)
def test_tsubview(make_kernels, case):
    """TSUBVIEWTest.<case>: TSUBVIEW(subTile, srcTile, 0, 0) with subTile of the source's tile
    type and valid (subRows, subCols), stored to a subRows x subCols tensor. gen_data.py (seed
    19): input randn(rows, cols) as the dtype; golden its top-left subRows x subCols.
    ResultCmp<T>(golden, out, 0.001f) over vectors of the output's bytes."""
    dt, r, c, sr, sc = TSUBVIEW_CASES[case]
    x = np.random.RandomState(19).randn(r, c).astype(dt)
    golden = x[:sr, :sc]
    kernel = make_kernels(TSUBVIEW.format(r=r, c=c, dt=dt, sr=sr, sc=sc)).k
    out, = run_kernel(kernel, [x], [((sr, sc), dt)])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


# --------------------------------------------------------------------------- TSTORE (Acc)
ATOMIC, RELU = ', atomic="add"', ", relu=True"
# TStoreAcc2gmTest's cases without quantization: (out dtype, in dtype, acc dtype, validM, validN,
# validK, main.cpp's ResultCmp type, the TSTORE's AtomicType / ReluPreMode) of TStoreAcc2gmNz2nd's
# tilingKey 0, 1 (atomicType 1), 2, 3, 4, 7 (atomicType 1) and 21 (reluMode 1)
TSTORE_ACC_CASES = {"case0": ("float32", "float32", "float32", 128, 128, 32, np.float32, ATOMIC),
                    "case1": ("float32", "float32", "float32", 128, 128, 16, np.float32, ATOMIC),
                    "case2": ("float32", "float32", "float32", 31, 32, 15, np.float32, ""),
                    "case3": ("float32", "float16", "float32", 65, 128, 96, np.float32, ""),
                    "case4": ("float16", "float16", "float32", 73, 64, 32, np.uint16, ""),
                    "case13": ("int32", "int8", "int32", 44, 128, 27, np.int32, ATOMIC),
                    "case_relu_1": ("float32", "float32", "float32", 117, 97, 71, np.float32, RELU)}


@pytest.mark.parametrize("case", TSTORE_ACC_CASES)
def test_tstore_acc_to_gm_nd(make_kernels, case):
    """TStoreAcc2gmTest.<case>: TLOAD A (validM x validK) and B (validK x validN) into Mat tiles
    of sizes rounded up to 16, TMOV to Left / Right, TMATMUL into an Acc tile (float32 acc),
    TSTORE of its valid region to an ND tensor through the fixpipe (float32 -> out dtype), with
    AtomicAdd into the output main.cpp zeroes first (aclrtMemset) for case0, case1 and case13,
    and NormalRelu for case_relu_1. gen_data.py (seed 19): x1, x2 = randint(-5, 5) in the input
    dtype; golden = x1 @ x2 in the output dtype (exact: integers below 2048), max(golden, 0)
    with relu_mode 1. main.cpp: ResultCmp<T>(golden, out, 0.001f) with T uint16_t for case4
    (the half words' bits), over vectors of the output's bytes."""
    out_dt, in_dt, acc_dt, vm, vn, vk, cmp, mode = TSTORE_ACC_CASES[case]
    M, N, K = (-(-v // 16) * 16 for v in (vm, vn, vk))
    rng = np.random.RandomState(19)
    x1 = rng.randint(-5, 5, [vm, vk]).astype(in_dt)
    x2 = rng.randint(-5, 5, [vk, vn]).astype(in_dt)
    golden = np.matmul(x1.astype(out_dt), x2.astype(out_dt)).astype(out_dt)
    if mode == RELU:
        golden = np.maximum(golden, 0)
    kernel = make_kernels(STORE_ACC.format(M=M, N=N, K=K, vm=vm, vn=vn, vk=vk, src=in_dt, acc=acc_dt,
                                           store=mode)).k
    out, = run_kernel(kernel, [x1, x2], [((vm, vn), out_dt)])
    assert result_cmp(as_words(golden, cmp), as_words(out, cmp), 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


# ----------------------------------------------------------------------------------- TLOAD
TLOAD = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({r}, {vc}))
            pto.tload(t, S{layout})
            pto.tstore(O, t)
"""


def test_tload_nd_static_bnsd_to_bsh(make_kernels):
    """TLOADTest.case_float_GT_32_64_128_VT_64_128_BLK32_STC (runTLOADND<int16_t, 1, 1, 32,
    64, 128, 64, 128, dyn = 0>): a static ND GlobalTensor of shape (1, 1, 32, 2, 128), dense,
    into a 64 x 128 int16 RowMajor tile, whose words the kernel then copies out. The golden
    (get_input_golden_case): element e of the input is e, and the tile holds them in order.
    ResultCmp(golden, out, 0): exact."""
    x = np.arange(64 * 128).astype(np.int16).reshape(64, 128)
    kernel = make_kernels(TLOAD.format(r=64, c=128, vc=128, dt="int16", layout="")).k
    out, = run_kernel(kernel, [x], [((64, 128), np.int16)])
    assert result_cmp(x, out, 0)
    np.testing.assert_array_equal(out, x)


# the dyn = 1 ND cases: getGlobalTensor makes a Layout::DN GlobalTensor (row-major strides) for
# a RowMajor tile: (case, dtype, tile rows, tile cols, valid cols)
TLOAD_DN_INTO_ND = {"case_float_GT_128_128_VT_128_128_BLK1": ("float32", 128, 128, 128),
                    "case_float_GT_2_2_2_256_64_VT_256_64_BLK8": ("float32", 256, 64, 64),
                    "case_float_GT_128_127_VT_128_128_BLK1_PADMAX": ("float32", 128, 128, 127),
                    "case_s16_GT_128_127_VT_128_128_BLK1_PADMAX": ("int16", 128, 128, 127),
                    "case_u8_GT_128_127_VT_128_128_BLK1_PADMIN": ("uint8", 128, 128, 127),
                    "case_float_GT_32_64_128_VT_64_128_BLK32_DYN": ("int16", 64, 128, 128),
                    "case_float_GT_2_2_2_256_60_VT_256_64_BLK8_PADMAX": ("float32", 256, 64, 60)}


@pytest.mark.parametrize("case", TLOAD_DN_INTO_ND)
def test_tload_of_a_dn_tensor_into_a_row_major_tile_a2a3_refuses(make_kernels, case):
    """TLOADTest.<case> (dyn = 1): tload_kernel.cpp's getGlobalTensor builds its dynamic
    GlobalTensor with Layout::DN whatever the tile, and runTLOADND's tile is RowMajor: A2/A3's
    TLOAD of a Vec tile takes ND2ND / DN2DN / NZ2NZ only ("Fix: TLOAD(VecTile, GlobalTensor)
    only support ND2ND/DN2DN/NZ2NZ!", tload_common.hpp line 340), so the kernel does not
    compile."""
    dt, r, c, vc = TLOAD_DN_INTO_ND[case]
    kernel = make_kernels(TLOAD.format(r=r, c=c, vc=vc, dt=dt, layout=f", layout=pto.DN, stride={r}")).k
    with pytest.raises(pto.CompileError):
        kernel.program_for(two_tensors(r * c, dt))


FLOAT4 = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}), layout=pto.{tl})
            pto.tload(t, S{layout})
            pto.tstore(O, t{layout})
"""

# TLOADTest.case_float4_* and TStoreTest.*_float4_*: (dtype, rows, cols, valid rows, valid cols,
# tile layout, GM layout)
F4 = ("float4_e2m1x2", "float4_e1m2x2")
FLOAT4_CASES = {f"TLOAD.case_{n}_GT_128_128_VT_128_128_BLK1": (n, 128, 128, 128, 128, "RowMajor", "") for n in F4}
FLOAT4_CASES.update({f"TLOAD.case_{n}_GT_2_2_2_256_64_VT_256_64_BLK8": (n, 256, 64, 256, 64, "RowMajor", "")
                     for n in F4})
FLOAT4_CASES.update({f"TLOAD.case_{n}_GT_128_127_VT_128_128_BLK1_PADMAX": (n, 128, 128, 128, 127, "RowMajor", "")
                     for n in F4})
FLOAT4_CASES.update({f"TSTORE.ND_{n}_1_1_1_2_128_1_1_1_2_128": (n, 2, 128, 2, 128, "RowMajor", "") for n in F4})
FLOAT4_CASES.update({f"TSTORE.DN_{n}_1_1_1_4_21_1_1_1_8_32": (n, 32, 21, 4, 21, "ColMajor", ", layout=pto.DN, stride=8")
                     for n in F4})


@pytest.mark.parametrize("case", FLOAT4_CASES)
def test_float4_tiles_a2a3_refuses(make_kernels, case):
    """A5's packed 4-bit floats: A2/A3's TLOAD and TSTORE take 1- to 8-byte integers, half,
    bfloat16 and float (tload_common.hpp lines 302-309, tstore_common.hpp lines 328-335), so
    these kernels do not compile; pypto_sim refuses the tile."""
    dt, r, c, vr, vc, tl, layout = FLOAT4_CASES[case]
    kernel = make_kernels(FLOAT4.format(r=r, c=c, vr=vr, vc=vc, dt=dt, tl=tl, layout=layout)).k
    with pytest.raises(pto.CompileError, match=rf"{dt} is an A5 type"):
        kernel.program_for(two_tensors(r * c, dt))


# ---------------------------------------------------------------------------------- TSTORE
def tstore_nd_source(dt, shape, whole):
    """RunTStoreRowMajor: a RowMajor tile of S0 S1 S2 S3 rows and S4 columns (rounded up to
    32 bytes) loaded from and stored to the (S0, S1, S2, S3, S4) box at the origin of a dense
    tensor of the whole shape; A2/A3 moves such a box one (x0, x1, x2) slab of S3 rows at a
    time, and so does the port, through a window of the tile per slab."""
    s0, s1, s2, s3, s4 = shape
    w1, w2, w3, w4 = whole[1:]
    block = 32 // np.dtype(dt).itemsize
    rows, cols = s0 * s1 * s2 * s3, -(-s4 // block) * block
    lines = [f"t = pto.alloc_tile({rows}, {cols}, pto.{dt}, valid=({rows}, {s4}))"]
    slabs = [(x0 * w1 * w2 * w3 * w4 + x1 * w2 * w3 * w4 + x2 * w3 * w4)
             for x0 in range(s0) for x1 in range(s1) for x2 in range(s2)]
    for n, off in enumerate(slabs):
        lines.append(f"w{n} = pto.tsubview(t, {n * s3}, 0, {s3}, {cols}, valid=({s3}, {s4}))")
        lines.append(f"pto.tload(w{n}, S + {off}, stride={w4})")
    lines += ["pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)", "pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)"]
    lines += [f"pto.tstore(O + {off}, w{n}, stride={w4})" for n, off in enumerate(slabs)]
    return ("\n@pto.kernel\ndef k(S, O):\n    with pto.vector():\n        if pto.get_subblock_id() == 0:\n"
            + "".join(f"            {line}\n" for line in lines))


def tstore_dn_source(dt, shape, whole):
    """RunTStoreColMajor: a ColMajor tile of S3 rows (rounded up to 32 bytes) and S0 S1 S2 S4
    columns loaded from and stored to a Layout::DN GlobalTensor (strides ..., 1, W3: element
    (i, j) of a slab at j W3 + i), one (x0, x1, x2) slab of S4 columns at a time, through a
    window of the tile per slab."""
    s0, s1, s2, s3, s4 = shape
    w1, w2, w3, w4 = whole[1:]
    block = 32 // np.dtype(dt).itemsize
    rows, cols = -(-s3 // block) * block, s0 * s1 * s2 * s4
    lines = [f"t = pto.alloc_tile({rows}, {cols}, pto.{dt}, valid=({s3}, {cols}), layout=pto.ColMajor)"]
    slabs = [(x0 * w1 * w2 * w3 * w4 + x1 * w2 * w3 * w4 + x2 * w3 * w4)
             for x0 in range(s0) for x1 in range(s1) for x2 in range(s2)]
    for n, off in enumerate(slabs):
        lines.append(f"w{n} = pto.tsubview(t, 0, {n * s4}, {rows}, {s4}, valid=({s3}, {s4}))")
        lines.append(f"pto.tload(w{n}, S + {off}, layout=pto.DN, stride={w3})")
    lines += ["pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)", "pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)"]
    lines += [f"pto.tstore(O + {off}, w{n}, layout=pto.DN, stride={w3})" for n, off in enumerate(slabs)]
    return ("\n@pto.kernel\ndef k(S, O):\n    with pto.vector():\n        if pto.get_subblock_id() == 0:\n"
            + "".join(f"            {line}\n" for line in lines))


# TEST_F(TStoreTest, <format>_<T>_<gShape0..4>_<gWholeShape0..4>)
TSTORE_CASES = {"ND_float_1_1_1_2_128_1_1_1_2_128": ("ND", "float32", (1, 1, 1, 2, 128), (1, 1, 1, 2, 128)),
                "ND_int16_t_1_2_1_23_121_3_2_2_35_125": ("ND", "int16", (1, 2, 1, 23, 121), (3, 2, 2, 35, 125)),
                "ND_int8_t_2_2_3_23_47_3_3_4_32_50": ("ND", "int8", (2, 2, 3, 23, 47), (3, 3, 4, 32, 50)),
                "DN_float_1_1_1_4_21_1_1_1_8_32": ("DN", "float32", (1, 1, 1, 4, 21), (1, 1, 1, 8, 32)),
                "DN_int8_t_2_1_2_32_32_3_4_3_64_35": ("DN", "int8", (2, 1, 2, 32, 32), (3, 4, 3, 64, 35)),
}


@pytest.mark.parametrize("case", TSTORE_CASES)
def test_tstore(make_kernels, case):
    """TStoreTest.<case>: TLOAD of the (gShape) box at the origin of a gWholeShape tensor into a
    Vec tile, TSTORE of it to the same box of a zeroed tensor. gen_data.py (seed 19): input
    randint(-5, 5) of the whole shape (ND: (W0, W1, W2, W3, W4); DN: (W0, W1, W2, W4, W3), the
    last two the DN tensor's columns and rows) as the dtype; golden zeros but the box, the
    input's. main.cpp: ResultCmp<T>(golden, out, 0): exact."""
    fmt, dt, shape, whole = TSTORE_CASES[case]
    s0, s1, s2, s3, s4 = shape
    w0, w1, w2, w3, w4 = whole
    if fmt == "ND":
        dims, box = (w0, w1, w2, w3, w4), np.s_[:s0, :s1, :s2, :s3, :s4]
        source = tstore_nd_source(dt, shape, whole)
    else:
        dims, box = (w0, w1, w2, w4, w3), np.s_[:s0, :s1, :s2, :s4, :s3]
        source = tstore_dn_source(dt, shape, whole)
    x = np.random.RandomState(19).randint(-5, 5, size=dims).astype(dt)
    golden = np.zeros(dims, dt)
    golden[box] = x[box]
    out, = run_kernel(make_kernels(source).k, [x], [(dims, dt)])
    assert result_cmp(golden, out, 0)
    np.testing.assert_array_equal(out, golden)
