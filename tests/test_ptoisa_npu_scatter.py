"""pto-isa's ON-DEVICE A2/A3 st cases of TSCATTER (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/tscatter and tcolscatter at 3186c381) in the AI-core API as their
kernels write them. These goldens are what A2/A3 hardware must produce.

- TSCATTERTest.case_<dtype>_<idxtype>_<R>x<C>_<IR>x<IC> (7 TEST_Fs, TSCATTER(dst, src, indexes)):
  runTScatter (tscatter_kernel.cpp) loads the R x C GM tensor into a whole src tile and the
  IR x IC indices into a tile of their own, scatters into an R x C dst tile and stores it.
  gen_data.py seeds once (np.random.seed(23)); each port draws from its own
  np.random.RandomState(23). src = uniform(0, 100) of R x C, cast to the dtype; indices =
  randint(0, 2) of IR x IC, then index(r, c) * C + c (recalculate_indices: row 0 or 1 of the
  same column); golden = zeros, then golden[index(r, c)] = src(r, c) in order. main.cpp:
  ResultCmp<T>(golden, out, 0.0f) over R x C elements: exact.
- TSCATTERTest.case_mask_<dtype>_<R>x<C>_<R>x<DC>_<pattern> (21 TEST_Fs,
  TSCATTER<MaskPattern>(dst, src), SCATTER_ROW): runTScatterMask loads the R x C src, scatters
  into an R x DC dst, stores it. main.cpp runs the half cases as uint16_t kernels
  (test_scatter_mask<uint16_t, ...>) over gen_data.py's np.float16 words. Golden (scatter_mask):
  zeros(R, DC) with (i, period j + offset) = src(i, j). ResultCmp<T>(golden, out, 0.0f): exact.
- TCOLSCATTERTest.case_mask_<dtype>_<R>x<C>_<DR>x<DC>_<pattern> (21 TEST_Fs,
  TSCATTER<MaskPattern, ScatterAxis::SCATTER_COL>(dst, src)): runTColScatterMask loads the
  R x C src, scatters into a DR x DC dst, stores it; the half cases are uint16_t kernels.
  Golden: zeros(DR, DC) with row period i + offset's first C columns = src row i. Exact.
  In the 2- and 4-row patterns' cases dst has twice src's columns, which TSCATTER_IMPL's
  PTO_ASSERT (validCol of src must match dst) would refuse in a debug build; PTO_ASSERT is
  compiled out otherwise (include/pto/common/debug.h), these cases are what A2/A3 runs, and
  pypto_sim takes a dst of at least src's columns, zeroed past them.
"""
import numpy as np
import pytest

from ptoisa_st import MASK_PATTERNS, SCATTER_MASK, as_words, result_cmp, run_kernel

# gen_data.py's type names -> (its numpy dtype, the kernel's dtype as main.cpp launches it)
TYPES = {"half": ("float16", "float16"), "float": ("float32", "float32"), "int32": ("int32", "int32"),
         "int16": ("int16", "int16"), "int8": ("int8", "int8"), "uint16": ("uint16", "uint16"),
         "uint32": ("uint32", "uint32")}
MASK_TYPES = dict(TYPES, half=("float16", "uint16"))

# ------------------------------------------------------------------------------ TSCATTER (indices)

TSCATTER = """
@pto.kernel
def k(S, I, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            idx = pto.alloc_tile({ir}, {ic}, pto.{it})
            pto.tload(src, S)
            pto.tload(idx, I)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tscatter(dst, src, idx)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""
# gen_data.py's TScatterParams(data_type, idx_type, row, col, idx_row, idx_col), in order
INDEX_CASES = [("int16", "uint16", 2, 32, 1, 32), ("half", "uint16", 63, 64, 63, 64),
               ("int32", "uint32", 31, 128, 31, 128), ("int16", "int16", 15, 192, 15, 192),
               ("float", "int32", 7, 448, 7, 448), ("int8", "uint16", 256, 32, 256, 32),
               ("float", "uint32", 32, 64, 32, 64)]


def index_case_id(case):
    d, i, r, c, ir, ic = case
    return f"TSCATTERTest.case_{d}_{i}_{r}x{c}_{ir}x{ic}"


@pytest.mark.parametrize("case", INDEX_CASES, ids=[index_case_id(c) for c in INDEX_CASES])
def test_tscatter(make_kernels, case):
    """gen_data.py (seed 23, one RandomState per case): src = uniform(0, 100) of R x C as the
    dtype; indices = randint(0, 2) of IR x IC as the index dtype, then index * C + column;
    golden = zeros with golden[index(r, c)] = src(r, c) in order. runTScatter as written.
    main.cpp: ResultCmp<T>(golden, out, 0.0f) over R x C elements."""
    d, i, r, c, ir, ic = case
    dt, it = TYPES[d][0], TYPES[i][0]
    rng = np.random.RandomState(23)
    src = rng.uniform(0, 100, (r, c)).astype(dt)
    index = rng.randint(0, 2, (ir, ic)).astype(it)
    index = (index.astype(np.int64) * c + np.arange(ic)).astype(it)
    golden = np.zeros(r * c, dt)
    for (row, col), at in np.ndenumerate(index):
        golden[at] = src[row, col]
    kernel = make_kernels(TSCATTER.format(r=r, c=c, ir=ir, ic=ic, dt=dt, it=it)).k
    out, = run_kernel(kernel, [src, index], [((r, c), dt)])
    assert result_cmp(golden, out, 0.0)
    np.testing.assert_array_equal(as_words(out, np.uint8), as_words(golden, np.uint8))


# ------------------------------------------------------------------------------ TSCATTER (masks)

# gen_data.py's TScatterMaskParams(data_type, row, col, dst_col, pattern), in order
ROW_CASES = [(t, 16, 64, 16, 64, "P1111") for t in ("half", "float", "int32")]
ROW_CASES += [(t, 16, 64, 16, 128, p) for t in ("half", "float", "int32") for p in ("P1010", "P0101")]
ROW_CASES += [(t, 16, 64, 16, 256, p) for t in ("half", "float", "int32") for p in ("P1000", "P0100", "P0010", "P0001")]
# tcolscatter's TColScatterMaskParams(data_type, row, col, dst_row, dst_col, pattern), in order
COL_CASES = [(t, 16, 64, 16, 64, "P1111") for t in ("half", "float", "int32")]
COL_CASES += [(t, 16, 64, 32, 128, p) for t in ("half", "float", "int32") for p in ("P1010", "P0101")]
COL_CASES += [(t, 4, 64, 16, 256, p) for t in ("half", "float", "int32") for p in ("P1000", "P0100", "P0010", "P0001")]
MASK_CASES = [("row", *case) for case in ROW_CASES] + [("col", *case) for case in COL_CASES]


def mask_case_id(case):
    axis, t, r, c, dr, dc, p = case
    return f"{'TSCATTERTest' if axis == 'row' else 'TCOLSCATTERTest'}.case_mask_{t}_{r}x{c}_{dr}x{dc}_{p}"


@pytest.mark.parametrize("case", MASK_CASES, ids=[mask_case_id(c) for c in MASK_CASES])
def test_tscatter_mask(make_kernels, case):
    """gen_data.py (seed 23, one RandomState per case): src = uniform(0, 100) of R x C as the
    dtype (np.float16 for half, run as uint16 words); golden: zeros(DR, DC) with src(i, j) at
    (i, period j + offset) along rows, or src's row i at row period i + offset (its first C
    columns) along columns (P1111: a copy). ResultCmp<T>(golden, out, 0.0f) over DR x DC."""
    axis, t, r, c, dr, dc, p = case
    gdt, kdt = MASK_TYPES[t]
    rng = np.random.RandomState(23)
    src = rng.uniform(0, 100, (r, c)).astype(gdt)
    first, period = MASK_PATTERNS[p]
    golden = np.zeros((dr, dc), gdt)
    if axis == "row":
        golden[:, first:first + period * c:period] = src
    else:
        golden[first:first + period * r:period, :c] = src
    kernel = make_kernels(SCATTER_MASK.format(r=r, c=c, dr=dr, dc=dc, dt=kdt, p=p, axis=axis)).k
    out, = run_kernel(kernel, [as_words(src, kdt).reshape(r, c)], [((dr, dc), kdt)])
    assert result_cmp(as_words(golden, kdt), out, 0.0)
    np.testing.assert_array_equal(as_words(out, np.uint8), as_words(golden, np.uint8))
