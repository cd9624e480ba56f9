"""pto-isa's ON-DEVICE A2/A3 st cases of TMULADDDST, TFUSEDMULADD, TFUSEDMULADDRELU, TAXPY, TPRELU,
TLRELU, TSEL, TSELS, TCMP and TCMPS (hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/
tmuladddst, tfusedmuladd, tfusedmuladdrelu, taxpy, tprelu, tlrelu, tsel, tsels, tcmp, tcmps at
3186c381), every TEST_F of their main.cpp but those below, in the AI-core API as their
*_kernel.cpp write them: the tiles' shapes and valid regions, the GM shapes and strides, the flags
(where a kernel chains Event<> objects, TAXPY and TPRELU, the port writes the set_flag / wait_flag
pairs those events are), dst loaded from GM first where the kernel loads it (the fused ops, TAXPY,
TLRELU). Each golden is its gen_data.py's formula in numpy with its seed, one RandomState per case
(gen_data.py draws all cases from one generator in order, so later cases' numbers differ from its
files; their distribution does not). The fused ops' gen_data.py seed nothing; their port uses 19.
Each tolerance and compared length is its main.cpp's (ResultCmp(golden, out, eps) over the vectors
main.cpp sizes: in elements for the fused ops, TCMP and TCMPS, in bytes for TAXPY, TPRELU, TLRELU,
TSEL and TSELS).

Where a launcher passes a scalar from a file (TAXPY, TLRELU: float32 of the dtype's value,
converted back to T by the kernel; TSELS: T) or the kernel reads it from GM through a tile
(TCMPS: src1Tile.GetValue(0)), the port passes that value as a kernel argument.

Differences from the kernels as written:
- TPRELU: pypto_sim's tprelu takes no tmp operand (pto-isa's TPRELU(dst, src0, src1, tmp), a
  uint8 tmp of (rows + 1) x 32-byte-aligned ceil(cols / 8) here); its values are scratch only, so
  the port leaves the tmp tile out.
- TCMP / TCMPS: the kernels TSTORE the r x c uint8 tile of valid (r, c / 8) to a uint8 global of
  shape (r, c) and row stride c; A2/A3's ND2ND store (include/pto/common/arch/memory/
  tstore_common.hpp, TStoreUb2gmNd2nd) moves r bursts of validCol = c / 8 bytes with gmGap =
  stride - Shape4 = 0, so the rows land c / 8 bytes apart (golden.bin's packing); the port stores
  at that pitch.

TSEL and TSELS cover dst's valid region, each row masked to validCol, every tile at its own
RowStride (TSel.hpp lines 48-59, TSels.hpp lines 36-45; TSELS asserts its source's valid region is
dst's, lines 64-65), as pypto_sim runs them: TSELTest.case7, case13 (a valid region narrower than
the tiles), TSELSTest's 32x672 (valid 666) cases and its 2x32 dst / 2x128 src cases run as written.

Not ported: the TCMP and TCMPS cases whose global shape exceeds the tile's (64x64 global / 32x32
tile, 128x128 / 64x64, 77x81 / 32x32: TCMPTest 6 cases, TCMPSTest 6). Their kernels TLOAD the
whole kGRows x kGCols global into the smaller tile, against TLOAD's PTO_ASSERT "validCol ... must
be equal to the 5th dim (Shape4) of ND shape" (include/pto/common/arch/memory/tload_common.hpp line
48); with the asserts compiled out the DMA would write past the tile. The AI-core API has no form
of a load larger than its tile.
"""
import numpy as np
import pytest

from ptoisa_st import FLAGS_IN, FLAGS_OUT, FUSED, PTOISA_DTYPES, result_cmp, run_arrays, tsel_golden


# ---------------------------------------------------------------- TMULADDDST, TFUSEDMULADD, TFUSEDMULADDRELU


FUSED_SUITES = {"tmuladddst": "TMULADDDSTTest", "tfusedmuladd": "TFUSEDMULADDTest",
                "tfusedmuladdrelu": "TFUSEDMULADDRELUTest"}
# the TEST_Fs of each main.cpp: (dtype, dstH, dstW, src0H, src0W, src1H, src1W, vRows, vCols)
S64 = (64, 64, 64, 64, 64, 64, 64, 64)
S127 = (32, 128, 32, 192, 32, 256, 32, 127)
FUSED_TESTS = {
    "tmuladddst": [("float", *S64), ("float", *S127), ("half", *S64), ("half", *S127)],
    "tfusedmuladd": [("float", 1, 8, 1, 8, 1, 8, 1, 8), ("float", *S64), ("float", *S127),
                     ("float", 1, 16384, 1, 16384, 1, 16384, 1, 16384), ("float", 2048, 8, 2048, 8, 2048, 8, 2048, 8),
                     ("half", 1, 16, 1, 16, 1, 16, 1, 16), ("half", *S64), ("half", *S127),
                     ("half", 2048, 16, 2048, 16, 2048, 16, 2048, 16),
                     ("half", 1, 32768, 1, 32768, 1, 32768, 1, 32768)],
    "tfusedmuladdrelu": [("float", *S64), ("float", *S127), ("half", *S64), ("half", *S127)],
}
FUSED_CASES = [(op, p) for op, ps in FUSED_TESTS.items() for p in ps]


def fused_id(op, p):
    name, dr, dc, ar, ac, br, bc, vr, vc = p
    return f"{FUSED_SUITES[op]}.case_{name}_{dr}x{dc}_{ar}x{ac}_{br}x{bc}_{vr}x{vc}"




@pytest.mark.parametrize("op, p", FUSED_CASES, ids=[fused_id(op, p) for op, p in FUSED_CASES])
def test_fused(make_kernels, op, p):
    """gen_data.py: input0 (src0 tile), input1 (src1 tile), dst (dst tile) uniform(-sqrt(max) / 10,
    sqrt(max) / 10) of finfo(dtype), as dtype; golden dst with, over the valid region,
    TMULADDDST input0 * input1 + dst, TFUSEDMULADD input0 * dst + input1, TFUSEDMULADDRELU
    maximum(input0 * dst + input1, 0), numpy arrays of dtype (the product rounded to dtype, then
    the sum). main.cpp copies input_dst to the out tensor, which the kernel loads, updates and
    stores over the valid region. ResultCmp(golden, out, 0.001) over dstTileH x dstTileW."""
    name, dr, dc, ar, ac, br, bc, vr, vc = p
    dt = PTOISA_DTYPES[name]
    lim = np.sqrt(np.abs(float(np.finfo(dt).max))) / 10
    rng = np.random.RandomState(19)
    a = rng.uniform(low=-lim, high=lim, size=[ar, ac]).astype(dt)
    b = rng.uniform(low=-lim, high=lim, size=[br, bc]).astype(dt)
    d = rng.uniform(low=-lim, high=lim, size=[dr, dc]).astype(dt)
    golden = d.copy()
    av, bv, dv = a[:vr, :vc], b[:vr, :vc], d[:vr, :vc]
    if op == "tmuladddst":
        golden[:vr, :vc] = av * bv + dv
    elif op == "tfusedmuladd":
        golden[:vr, :vc] = av * dv + bv
    else:
        golden[:vr, :vc] = np.maximum(av * dv + bv, 0)
    kernel = make_kernels(FUSED.format(op=op, dt=dt, dr=dr, dc=dc, ar=ar, ac=ac, br=br, bc=bc, vr=vr, vc=vc)).k
    out = run_arrays(kernel, [a, b, d])
    assert result_cmp(golden, out, 0.001)


# ---------------------------------------------------------------- TAXPY

TAXPY = """
@pto.kernel
def k(S, O, scalar):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{sdt}, valid=({vr}, {vc}))
            dst = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}))
            pto.tload(src, S)
            pto.tload(dst, O)
            """ + FLAGS_IN + """
            pto.taxpy(dst, src, scalar)
            """ + FLAGS_OUT + """
            pto.tstore(O, dst)
"""

# TAxpyParams(name, dst_dtype, src_dtype, tile_row, tile_col, valid_row, valid_col)
TAXPY_CASES = {"case1": ("float16", "float16", 64, 64, 64, 64), "case2": ("float16", "float16", 64, 64, 63, 63),
               "case3": ("float16", "float16", 1, 16384, 1, 16384),
               "case4": ("float16", "float16", 2048, 16, 2048, 16),
               "case5": ("float32", "float32", 64, 64, 64, 64), "case6": ("float32", "float32", 64, 64, 63, 63),
               "case7": ("float32", "float16", 64, 64, 63, 63), "case8": ("float32", "float16", 4, 1024, 4, 1023),
               "case9": ("float32", "float16", 256, 16, 256, 15)}




@pytest.mark.parametrize("case", TAXPY_CASES, ids=[f"TAXPYTest.{c}" for c in TAXPY_CASES])
def test_taxpy(make_kernels, case):
    """gen_data.py (seed 19): input1 uniform(-100, 100) of vRows * vCols as dst_dtype, input2 the
    same as src_dtype, scalar uniform(-8, 8) of 1 x 1 as src_dtype; golden input1 +
    input2.astype(dst_dtype) * scalar in numpy. The GM tensors are the valid region, rows vCols
    apart; main.cpp copies input1 to the out tensor, which the kernel loads, updates and stores.
    scalar.bin holds float32(scalar), the kernel converts it to the src dtype. ResultCmp(golden,
    out, 0.001) over dstFileSize (bytes) elements."""
    dt, sdt, r, c, vr, vc = TAXPY_CASES[case]
    rng = np.random.RandomState(19)
    dst = rng.uniform(-100, 100, size=vr * vc).astype(dt).reshape(vr, vc)
    src = rng.uniform(-100, 100, size=vr * vc).astype(sdt).reshape(vr, vc)
    scalar = rng.uniform(low=-8, high=8, size=(1, 1)).astype(sdt)
    golden = dst + src.astype(dt) * scalar[0, 0]
    kernel = make_kernels(TAXPY.format(r=r, c=c, vr=vr, vc=vc, dt=dt, sdt=sdt)).k
    out = run_arrays(kernel, [src, dst], float(np.float32(scalar[0, 0])))
    assert result_cmp(golden, out, 0.001, compared=r * c * np.dtype(dt).itemsize)


# ---------------------------------------------------------------- TPRELU

TPRELU = """
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}))
            src1 = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}))
            dst = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}))
            pto.tload(src0, A)
            pto.tload(src1, B)
            """ + FLAGS_IN + """
            pto.tprelu(dst, src0, src1)
            """ + FLAGS_OUT + """
            pto.tstore(O, dst)
"""

# TPreluParams(name, dtype, tile_row, tile_col, valid_row, valid_col)
TPRELU_CASES = {"case1": ("float16", 64, 64, 64, 64), "case2": ("float16", 64, 64, 63, 63),
                "case3": ("float16", 1, 16384, 1, 16384), "case4": ("float16", 1024, 16, 1024, 16),
                "case5": ("float32", 64, 64, 64, 64), "case6": ("float32", 64, 64, 63, 63),
                "case7": ("float32", 1, 8192, 1, 8192), "case8": ("float32", 1024, 8, 1024, 8)}


@pytest.mark.parametrize("case", TPRELU_CASES, ids=[f"TPRELUTest.{c}" for c in TPRELU_CASES])
def test_tprelu(make_kernels, case):
    """gen_data.py (seed 19): input1, input2 uniform(-100, 100) of vRows * vCols as dtype, their
    first 8 elements inf and -inf; golden where(input1 > 0, input1, input1 * input2) as dtype. The
    GM tensors are the valid region, rows vCols apart. ResultCmp(golden, out, 0.001) over fileSize
    (bytes) elements. (The kernel's tmp tile is left out: the module docstring says why.)"""
    dt, r, c, vr, vc = TPRELU_CASES[case]
    rng = np.random.RandomState(19)
    a = rng.uniform(-100, 100, size=vr * vc).astype(dt)
    b = rng.uniform(-100, 100, size=vr * vc).astype(dt)
    a[:8] = np.inf
    b[:8] = -np.inf
    with np.errstate(all="ignore"):
        golden = np.where(a > 0, a, a * b).astype(dt)
    kernel = make_kernels(TPRELU.format(r=r, c=c, vr=vr, vc=vc, dt=dt)).k
    out = run_arrays(kernel, [a.reshape(vr, vc), b.reshape(vr, vc), np.zeros((vr, vc), dt)])
    assert result_cmp(golden, out, 0.001, compared=r * c * np.dtype(dt).itemsize)


# ---------------------------------------------------------------- TLRELU

TLRELU = """
@pto.kernel
def k(S, O, scalar):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({r}, {c}))
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt}, valid=({r}, {c}))
            pto.tload(dst, O, stride={dc})
            pto.tload(src, S, stride={c})
            """ + FLAGS_IN + """
            pto.tlrelu(dst, src, scalar)
            """ + FLAGS_OUT + """
            pto.tstore(O, dst, stride={dc})
"""

# TLRELUParams(name, data_type, dst_tile_row, dst_tile_col, row, col); the kernels' validRow,
# validCol are row, col
TLRELU_CASES = {"case1": ("float32", 32, 64, 32, 64), "case2": ("float16", 63, 64, 63, 64),
                "case3": ("float32", 31, 128, 31, 128), "case4": ("float16", 15, 192, 15, 192),
                "case5": ("float32", 7, 448, 7, 448), "case6": ("float32", 256, 16, 256, 16),
                "case7": ("float32", 32, 128, 32, 64), "case8": ("float16", 63, 128, 63, 64),
                "case9": ("float32", 31, 256, 31, 128), "case10": ("float16", 15, 192, 15, 192),
                "case11": ("float32", 7, 512, 7, 448), "case12": ("float32", 256, 32, 256, 16)}


@pytest.mark.parametrize("case", TLRELU_CASES, ids=[f"TLRELUTest.{c}" for c in TLRELU_CASES])
def test_tlrelu(make_kernels, case):
    """gen_data.py (seed 42): input uniform(-8, 8) of row x col, scalar uniform(0.001, 0.1) of 1 x 1,
    as dtype; golden dst_tile_row x dst_tile_col zeros with input * scalar (in dtype) where input
    < 0, else input, over row x col. scalar.bin holds float32(scalar), the kernel converts it to
    T. The out tensor (zeros) is dst_tile_col wide; the kernel loads dst from it first.
    ResultCmp(golden, out, 0.001) over dstByteSize elements."""
    dt, dr, dc, r, c = TLRELU_CASES[case]
    rng = np.random.RandomState(42)
    x = rng.uniform(low=-8, high=8, size=(r, c)).astype(dt)
    scalar = rng.uniform(low=0.001, high=0.1, size=(1, 1)).astype(dt)
    golden = np.zeros((dr, dc), dt)
    golden[:r, :c] = np.where(x < 0, x * scalar[0, 0], x)
    kernel = make_kernels(TLRELU.format(r=r, c=c, dr=dr, dc=dc, dt=dt)).k
    out = run_arrays(kernel, [x, np.zeros((dr, dc), dt)], float(np.float32(scalar[0, 0])))
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)


# ---------------------------------------------------------------- TSEL

TSEL = """
@pto.kernel
def k(M, A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}))
            src1 = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}))
            dst = pto.alloc_tile({r}, {c}, pto.{dt}, valid=({vr}, {vc}))
            mask = pto.alloc_tile({r}, {mc}, pto.uint8, valid=({vr}, {mvc}))
            tmp = pto.alloc_tile(1, 32, pto.uint8)
            pto.tload(src0, A)
            pto.tload(src1, B)
            pto.tload(mask, M)
            """ + FLAGS_IN + """
            pto.tsel(dst, mask, src0, src1, tmp)
            """ + FLAGS_OUT + """
            pto.tstore(O, dst)
"""

# TSelParams(name, dtype, rows, cols, valid_rows, valid_cols)
TSEL_CASES = {"case1": ("float32", 2, 128, 2, 128), "case2": ("float32", 2, 32, 2, 32),
              "case3": ("float32", 2, 160, 2, 160), "case4": ("float16", 2, 128, 2, 128),
              "case5": ("float16", 2, 32, 2, 32), "case6": ("float16", 2, 160, 2, 160),
              "case7": ("float32", 10, 64, 10, 54), "case8": ("float32", 2, 4096, 2, 4096),
              "case9": ("float32", 1024, 8, 1024, 8), "case10": ("int32", 2, 128, 2, 128),
              "case11": ("int16", 2, 128, 2, 128), "case12": ("float32", 2, 8, 2, 8),
              "case13": ("float16", 2, 16, 2, 8)}




@pytest.mark.parametrize("case", TSEL_CASES, ids=[f"TSELTest.{c}" for c in TSEL_CASES])
def test_tsel(make_kernels, case):
    """gen_data.py (seed 19): input0, input1 rand(vRows * vCols) as dtype (all 0 for the integer
    dtypes), mask randint(0, 255) of vRows x ceil(vCols / 8) uint8; golden input0 where bit k of
    mask byte (i, j) is set for column 8 j + k, else input1 (ptoisa_st.tsel_golden). The GM
    tensors are the valid regions, packed; the mask tile is Rows x 32-byte-aligned ceil(Cols / 8)
    with valid (vRows, ceil(vCols / 8)). ResultCmp(golden, out, 0.001) over fileSize (bytes)
    elements."""
    dt, r, c, vr, vc = TSEL_CASES[case]
    mvc = (vc + 7) // 8
    mc = ((((c + 7) // 8) + 31) // 32) * 32
    rng = np.random.RandomState(19)
    a = rng.rand(vr * vc).astype(dt)
    b = rng.rand(vr * vc).astype(dt)
    mask = rng.randint(0, 255, size=vr * mvc, dtype=np.uint8)
    golden = tsel_golden(mask, a, b, vr, vc)
    kernel = make_kernels(TSEL.format(r=r, c=c, vr=vr, vc=vc, mc=mc, mvc=mvc, dt=dt)).k
    out = run_arrays(kernel, [mask.reshape(vr, mvc), a.reshape(vr, vc), b.reshape(vr, vc), np.zeros((vr, vc), dt)])
    assert result_cmp(golden, out, 0.001, compared=r * c * np.dtype(dt).itemsize)


# ---------------------------------------------------------------- TSELS

TSELS = """
@pto.kernel
def k(M, S, O, scalar):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt}, valid=({vr}, {vc}))
            src = pto.alloc_tile({sr}, {sc}, pto.{dt}, valid=({vr}, {vc}))
            mask = pto.alloc_tile({mr}, {mcol}, pto.{mdt}, valid=({vr}, {mcol}))
            tmp = pto.alloc_tile(1, 32, pto.uint8)
            pto.tload(mask, M, stride={mcol})
            pto.tload(src, S, stride={sc})
            """ + FLAGS_IN + """
            pto.tsels(dst, mask, src, scalar, tmp)
            """ + FLAGS_OUT + """
            pto.tstore(O, dst, stride={dc})
"""

# TestParams(dtype, dtype_mask, dstH, dstW, maskH, maskW, srcH, srcW, vRows, vCols)
TSELS_CASES = [("uint16", "uint8", 2, 16, 2, 32, 2, 16, 2, 16), ("uint16", "uint16", 2, 16, 2, 16, 2, 16, 2, 16),
               ("uint16", "uint32", 2, 16, 2, 8, 2, 16, 2, 16), ("uint32", "uint8", 2, 8, 2, 32, 2, 8, 2, 8),
               ("uint32", "uint16", 2, 8, 2, 16, 2, 8, 2, 8), ("uint32", "uint32", 2, 8, 2, 8, 2, 8, 2, 8),
               ("half", "uint8", 2, 16, 2, 32, 2, 16, 2, 16), ("half", "uint16", 2, 16, 2, 16, 2, 16, 2, 16),
               ("half", "uint32", 2, 16, 2, 8, 2, 16, 2, 16), ("float", "uint8", 2, 8, 2, 32, 2, 8, 2, 8),
               ("float", "uint16", 2, 8, 2, 16, 2, 8, 2, 8), ("float", "uint32", 2, 8, 2, 8, 2, 8, 2, 8),
               ("uint16", "uint8", 2, 32, 2, 64, 2, 128, 2, 31), ("float", "uint8", 2, 32, 2, 64, 2, 128, 2, 31),
               ("half", "uint8", 32, 672, 32, 96, 32, 672, 32, 666),
               ("float", "uint8", 32, 672, 32, 96, 32, 672, 32, 666),
               ("float", "uint8", 1, 8192, 1, 4096, 1, 8192, 1, 8192)]


def tsels_id(p):
    name, mname, dr, dc, mr, mcol, sr, sc, vr, vc = p
    return f"TSELSTest.case_{name}_{mname}_{dr}x{dc}_{mr}x{mcol}_{sr}x{sc}_{vr}x{vc}"




@pytest.mark.parametrize("p", TSELS_CASES, ids=[tsels_id(p) for p in TSELS_CASES])
def test_tsels(make_kernels, p):
    """gen_data.py (seed 19): input1 of the src tile's shape and input2 of 1, randint(iinfo.min,
    iinfo.max) or uniform(finfo.min, finfo.max) as dtype; mask randint(iinfo.min, iinfo.max) of
    the mask tile's shape as the mask dtype; golden dst-tile zeros with, over the valid region,
    input1[y, x] where bit x & 7 of byte x >> 3 of mask row y (its bytes) is set, else input2[0].
    The GM tensors have their tiles' shapes (mask: vRows x maskW loaded). ResultCmp(golden, out,
    0.0001) over dstFileSize (bytes) elements."""
    name, mname, dr, dc, mr, mcol, sr, sc, vr, vc = p
    dt, mdt = np.dtype(PTOISA_DTYPES[name]), np.dtype(PTOISA_DTYPES[mname])
    rng = np.random.RandomState(19)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.randint(info.min, info.max, size=[sr, sc]).astype(dt)
        scalar = rng.randint(info.min, info.max, size=[1]).astype(dt)
    else:
        info = np.finfo(dt)
        x = rng.uniform(low=info.min, high=info.max, size=[sr, sc]).astype(dt)
        scalar = rng.uniform(low=info.min, high=info.max, size=[1]).astype(dt)
    minfo = np.iinfo(mdt)
    mask = rng.randint(minfo.min, minfo.max, size=[mr, mcol]).astype(mdt)
    mbytes = mask.view(np.uint8).reshape(mr, -1)
    golden = np.zeros((dr, dc), dt)
    for y in range(vr):
        for xi in range(vc):
            golden[y, xi] = x[y, xi] if (1 << (xi & 7)) & mbytes[y, xi >> 3] else scalar[0]
    kernel = make_kernels(TSELS.format(dr=dr, dc=dc, sr=sr, sc=sc, mr=mr, mcol=mcol, vr=vr, vc=vc,
                                       dt=dt.name, mdt=mdt.name)).k
    out = run_arrays(kernel, [mask, x, np.zeros((dr, dc), dt)], scalar[0] if dt.kind == "u" else scalar[0].item())
    assert result_cmp(golden, out, 0.001 / 10, compared=golden.nbytes)


# ---------------------------------------------------------------- TCMP, TCMPS

TCMP = """
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({r}, {c}, pto.{dt})
            src1 = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.uint8, valid=({r}, {mc}))
            pto.tload(src0, A)
            pto.tload(src1, B)
            """ + FLAGS_IN + """
            pto.tcmp(dst, src0, src1, mode="{mode}")
            """ + FLAGS_OUT + """
            pto.tstore(O, dst, stride={mc})
"""

TCMPS = """
@pto.kernel
def k(A, O, scalar):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src0 = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.uint8, valid=({r}, {mc}))
            pto.tload(src0, A)
            """ + FLAGS_IN + """
            pto.tcmps(dst, src0, scalar, mode="{mode}")
            """ + FLAGS_OUT + """
            pto.tstore(O, dst, stride={mc})
"""

# the TEST_Fs whose global shape is the tile's: (mode, dtype name, rows, cols, is_nan)
TCMP_CASES = [("eq", "float", 1, 64, False), ("gt", "float", 8, 64, False), ("eq", "int32", 16, 32, False),
              ("eq", "int32", 32, 32, False), ("ne", "float", 32, 32, False), ("ne", "float", 32, 32, True),
              ("lt", "float", 2, 4096, False), ("ne", "float", 2, 4096, False), ("ne", "float", 2, 4096, True),
              ("ne", "float", 1, 64, False), ("eq", "half", 1, 64, False), ("ne", "half", 8, 64, False),
              ("lt", "half", 32, 32, False), ("gt", "half", 32, 32, False), ("ge", "half", 16, 32, False),
              ("ne", "half", 32, 32, True), ("ne", "half", 2, 4096, False)]
TCMPS_CASES = [("ge", "half", 32, 32, False), ("eq", "float", 1, 64, False), ("gt", "float", 8, 64, False),
               ("ne", "float", 4, 64, False), ("eq", "int32", 16, 32, False), ("le", "float", 128, 128, False),
               ("eq", "int32", 32, 32, False), ("ne", "float", 32, 32, True), ("ne", "float", 32, 32, False),
               ("lt", "float", 2, 4096, False), ("ne", "float", 2, 4096, False), ("ne", "float", 2, 4096, True),
               ("ne", "float", 1, 64, False), ("eq", "half", 1, 64, False), ("ne", "half", 8, 64, False),
               ("lt", "half", 32, 32, False), ("gt", "half", 32, 32, False), ("ge", "half", 16, 32, False),
               ("ne", "half", 32, 32, True), ("ne", "half", 2, 4096, False)]
NP_CMP = {"eq": lambda a, b: np.isclose(a, b, rtol=0, atol=1e-9),
          "ne": lambda a, b: ~np.isclose(a, b, rtol=0, atol=1e-9),
          "lt": np.less, "gt": np.greater, "ge": np.greater_equal, "le": np.less_equal}


def cmp_id(suite, p):
    mode, name, r, c, nan = p
    return f"{suite}Test.case_{mode}_{name}_{r}x{c}_{r}x{c}_{r}x{c}" + ("_nan" if nan else "")


def cmp_inputs(name, r, c, second):
    """gen_data.py (seed 19): input1 of r x c and input2 of `second`'s shape, uniform(-max, max) of
    finfo(dtype) or randint(iinfo.min, iinfo.max), as dtype."""
    dt = np.dtype(PTOISA_DTYPES[name])
    rng = np.random.RandomState(19)
    if dt.kind == "f":
        info = np.finfo(dt)
        draw = lambda size: rng.uniform(low=-info.max, high=info.max, size=size).astype(dt)  # noqa: E731
    else:
        info = np.iinfo(dt)
        draw = lambda size: rng.randint(info.min, info.max, size=size).astype(dt)  # noqa: E731
    return dt, draw([r, c]), draw(second)


def packed_golden(bits, r, c):
    """gen_data.py's golden.bin: row h's c / 8 bytes (bit k of byte i = column 8 i + k) back to
    back."""
    return np.packbits(bits.astype(np.uint8), axis=1, bitorder="little").reshape(r, c // 8)


@pytest.mark.parametrize("p", TCMP_CASES, ids=[cmp_id("TCMP", p) for p in TCMP_CASES])
def test_tcmp(make_kernels, p):
    """gen_data.py: cmp_inputs with input2 r x c, input2's even columns = input1's, all NaN for the
    _nan cases; golden input1 mode input2 (EQ / NE by isclose(atol=1e-9)), packed (packed_golden).
    The kernel's dst tile is r x c uint8 with valid (r, c / 8); its TSTORE to the uint8 global of
    shape (r, c), row stride c, is A2/A3's ND2ND copy (tstore_common.hpp TStoreUb2gmNd2nd): nBurst
    = r rows of lenBurst = c / 8 bytes (the tile's valid columns) with gmGap = stride - Shape4 = 0,
    so the rows land c / 8 bytes apart, as golden.bin has them; the port stores at that pitch.
    ResultCmp(golden, out, 0.001) over rows x cols (main.cpp's vectors)."""
    mode, name, r, c, nan = p
    dt, a, b = cmp_inputs(name, r, c, [r, c])
    b[:, 0::2] = a[:, 0::2]
    if nan:
        a[:] = np.nan
        b[:] = np.nan
    with np.errstate(all="ignore"):
        golden = packed_golden(NP_CMP[mode](a, b), r, c)
    kernel = make_kernels(TCMP.format(r=r, c=c, mc=c // 8, dt=dt.name, mode=mode)).k
    out = run_arrays(kernel, [a, b, np.zeros((r, c // 8), np.uint8)])
    assert result_cmp(golden, out, 0.001, compared=r * c)


@pytest.mark.parametrize("p", TCMPS_CASES, ids=[cmp_id("TCMPS", p) for p in TCMPS_CASES])
def test_tcmps(make_kernels, p):
    """gen_data.py: cmp_inputs with input2 of 1, input1's even columns = input2[0], all NaN for the
    _nan cases; golden input1 mode input2[0], packed (packed_golden). The kernel TLOADs input2 into
    a 1 x (32 / sizeof(T)) tile and reads element 0 on the scalar unit (GetValue); the port passes
    that value as the scalar. The dst tile and its store as in test_tcmp. ResultCmp(golden, out,
    0.001) over rows x cols."""
    mode, name, r, c, nan = p
    dt, a, b = cmp_inputs(name, r, c, [1])
    a[:, 0::2] = b[0]
    if nan:
        a[:] = np.nan
        b[:] = np.nan
    with np.errstate(all="ignore"):
        golden = packed_golden(NP_CMP[mode](a, b[0]), r, c)
    kernel = make_kernels(TCMPS.format(r=r, c=c, mc=c // 8, dt=dt.name, mode=mode)).k
    out = run_arrays(kernel, [a, np.zeros((r, c // 8), np.uint8)], b[0].item())
    assert result_cmp(golden, out, 0.001, compared=r * c)
