"""pto-isa's ON-DEVICE A2/A3 st cases of MGATHER into a Vec tile (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/mgather at 3186c381) in the AI-core API as mgather_kernel.cpp
writes them: TLOAD the indices into an int32 tile, set/wait MTE2 -> V, MGATHER<Coalesce, Oob>
from the GM table into the dst tile, set/wait V -> MTE3, TSTORE dst's valid region. These
goldens are what A2/A3 hardware must produce; main.cpp memsets the output to 0 and compares
ResultCmp<T>(golden, output, 0.0f) over the output's elements (exact; the bfloat16 cases as the
uint16_t words main.cpp launches them with).

- runRow / runRowPadded / runRowDyn (ROW_TEST, 19 cases): Coalesce::Row, an R x C (valid R) dst
  from a TR-row table of C columns, the indices a [1, R] tile (pad: of PIC columns); the dyn
  cases' valid shapes and table rows are run-time values (here kernel arguments).
- runElem / runElem2D / runElem2DPadded / runElemScalar / runElem2DDyn (ELEM_TEST, ELEM2D_TEST,
  SCALAR_TEST, ELEM2D_DYN_TEST, 33 cases): Coalesce::Elem, dst(r, c) = table[idx(r, c)] over a
  table of TS elements.

gen_data.py, ported: table = (arange(1, n + 1) % mod) + 1 as the dtype (mod 251, or the integer
range when smaller; the bfloat16 cases' tables are those uint16 words); indices =
rng.integers(0, table) of the index shape, or for the clamp / wrap / zero cases half of them (at
least one) drawn from [table, 2 table) before a shuffle; golden_row / golden_elem remap each
index as the case's Oob does. Its generator is np.random.default_rng(hash(name) & 0xFFFFFFFF):
Python salts str hashes per process, so gen_data.py's indices differ from run to run (each run
self-consistent); the ports seed default_rng with zlib.crc32 of the case name instead.

- runRowNz / runElem2DNz (ROW_NZ_TEST, ELEM2D_NZ_TEST, 11 cases): the NZ form, a Layout::NZ
  table ([1, BC, BR, 16, c0]: BR x 16 rows, BC x c0 columns) into an NZ Vec tile (ColMajor,
  SLayout::RowMajor, 512-byte fractals; here layout=pto.NZ), TSTOREd as Layout::NZ
  ([1, BC, R / 16, 16, c0]). gen_data.py's case_row_nz / case_elem2d_nz compute golden_row /
  golden_elem on the ND table (make_table(BR x 16 x BC x c0) as BR x 16 rows of BC x c0) and
  nd_to_nz both the table and the golden: dst's logical (r, c) is what the ND form gathers,
  as MGatherRowNzImpl / MGatherElemNzImpl walk the tile's logical (r, c) at its NZ offsets.

The kernels run as written, in sync="manual" under check="race": their own flags (MTE2 -> V
before, V -> MTE3 after) and the PtoSetWaitFlag pairs of MGatherRowImpl / MGatherElemImpl (and
their NZ twins, which set and wait the same), which pto.mgather emits around the instruction,
order the TSTORE after the gather as on the device.
"""

import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto
from mgather_data import make_indices, make_table, nd_to_nz, remap_golden
from ptoisa_st import result_cmp

# the kernel's dtype -> gen_data.py's numpy dtype (the words main.cpp launches)
HOST = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16, "int32": np.int32,
        "uint32": np.uint32, "int16": np.int16, "uint16": np.uint16, "int8": np.int8, "uint8": np.uint8}

KERNEL = """
@pto.kernel(sync="manual")
def k(O, T, I{args}):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile({ir}, {ic}, pto.int32, valid=({ivr}, {ivc}))
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt}, valid=({vr}, {vc}))
            pto.tload(idx, I)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.mgather(dst, T, idx, {size}, coalesce='{co}', oob='{oob}')
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

# (name, dtype, rows, cols, table rows, oob, dst tile, index tile columns, run-time shapes)
# ROW_TEST's DEFINE_ROW (dst R x C, indices [1, R]), DEFINE_ROW_PAD (VR, PR, PC, PIC, TR) and
# DEFINE_ROW_DYN (PR, PC, PIC, RVR, RVC, RTR), as mgather_kernel.cpp lists them
ROW = [
    ("row_float_8x32_64rows", "float32", 8, 32, 64, "undefined", None, None, False),
    ("row_half_16x64_64rows", "float16", 16, 64, 64, "undefined", None, None, False),
    ("row_bfloat16_16x16_64rows", "bfloat16", 16, 16, 64, "undefined", None, None, False),
    ("row_int32_8x16_32rows", "int32", 8, 16, 32, "undefined", None, None, False),
    ("row_uint32_8x16_32rows", "uint32", 8, 16, 32, "undefined", None, None, False),
    ("row_int16_8x16_32rows", "int16", 8, 16, 32, "undefined", None, None, False),
    ("row_uint16_8x16_32rows", "uint16", 8, 16, 32, "undefined", None, None, False),
    ("row_int8_8x32_32rows", "int8", 8, 32, 32, "undefined", None, None, False),
    ("row_uint8_8x32_32rows", "uint8", 8, 32, 32, "undefined", None, None, False),
    ("row_float_clamp_8x32_8rows", "float32", 8, 32, 8, "clamp", None, None, False),
    ("row_int32_wrap_8x16_8rows", "int32", 8, 16, 8, "wrap", None, None, False),
    ("row_half_zero_8x32_8rows", "float16", 8, 32, 8, "zero", None, None, False),
    ("row_int32_unaligned_3x8_8rows", "int32", 3, 8, 8, "undefined", (3, 8), 8, False),
    ("row_float_partial_4x16_in_8x16", "float32", 4, 16, 8, "undefined", (8, 16), 8, False),
    ("row_half_partial_5x32_in_8x32", "float16", 5, 32, 8, "undefined", (8, 32), 8, False),
    ("row_uint8_unaligned_3x32_32rows", "uint8", 3, 32, 8, "undefined", (3, 32), 8, False),
    ("row_int16_partial_3x16_in_4x16", "int16", 3, 16, 8, "clamp", (4, 16), 8, False),
    ("row_dyn_int32_3x16_8rows", "int32", 3, 16, 8, "undefined", (3, 16), 8, True),
    ("row_dyn_half_4x32_16rows", "float16", 4, 32, 16, "undefined", (4, 32), 16, True),
]
# (name, dtype, rows, cols, table size, oob, dst tile, run-time shapes): ELEM_TEST's DEFINE_ELEM
# (1 x N), ELEM2D_TEST's DEFINE_ELEM2D (R x C) and DEFINE_ELEM2D_PAD (VR, VC, PR, PC, TS),
# SCALAR_TEST's DEFINE_ELEM_SCALAR (1 x 1 of 1 x PC), DEFINE_ELEM2D_DYN (PR, PC, RVR, RVC, RTS)
ELEM = [
    ("elem_float_64_128size", "float32", 1, 64, 128, "undefined", None, False),
    ("elem_half_64_128size", "float16", 1, 64, 128, "undefined", None, False),
    ("elem_bfloat16_64_128size", "bfloat16", 1, 64, 128, "undefined", None, False),
    ("elem_int32_32_64size", "int32", 1, 32, 64, "undefined", None, False),
    ("elem_uint32_32_64size", "uint32", 1, 32, 64, "undefined", None, False),
    ("elem_int16_32_64size", "int16", 1, 32, 64, "undefined", None, False),
    ("elem_uint16_32_64size", "uint16", 1, 32, 64, "undefined", None, False),
    ("elem_int8_64_128size", "int8", 1, 64, 128, "undefined", None, False),
    ("elem_uint8_64_128size", "uint8", 1, 64, 128, "undefined", None, False),
    ("elem_float_clamp_32_16size", "float32", 1, 32, 16, "clamp", None, False),
    ("elem_int32_wrap_32_16size", "int32", 1, 32, 16, "wrap", None, False),
    ("elem_half_zero_32_16size", "float16", 1, 32, 16, "zero", None, False),
    ("elem2d_float_8x32_256size", "float32", 8, 32, 256, "undefined", None, False),
    ("elem2d_int32_8x16_256size", "int32", 8, 16, 256, "undefined", None, False),
    ("elem2d_half_4x32_256size", "float16", 4, 32, 256, "undefined", None, False),
    ("elem2d_bfloat16_4x32_256size", "bfloat16", 4, 32, 256, "undefined", None, False),
    ("elem2d_uint8_4x64_256size", "uint8", 4, 64, 256, "undefined", None, False),
    ("elem2d_int8_4x64_256size", "int8", 4, 64, 256, "undefined", None, False),
    ("elem2d_int16_4x32_256size", "int16", 4, 32, 256, "undefined", None, False),
    ("elem2d_uint16_4x32_256size", "uint16", 4, 32, 256, "undefined", None, False),
    ("elem2d_uint32_8x16_256size", "uint32", 8, 16, 256, "undefined", None, False),
    ("elem2d_float_wrap_4x16_64size", "float32", 4, 16, 64, "wrap", None, False),
    ("elem2d_int32_clamp_4x8_32size", "int32", 4, 8, 32, "clamp", None, False),
    ("elem2d_half_zero_4x32_64size", "float16", 4, 32, 64, "zero", None, False),
    ("elem2d_int32_unaligned_3x3_in_3x8_64size", "int32", 3, 3, 64, "undefined", (3, 8), False),
    ("elem2d_float_unaligned_5x5_in_5x8_64size", "float32", 5, 5, 64, "undefined", (5, 8), False),
    ("elem2d_half_unaligned_3x9_in_3x16_64size", "float16", 3, 9, 64, "undefined", (3, 16), False),
    ("elem2d_int8_unaligned_3x17_in_3x32_64size", "int8", 3, 17, 64, "undefined", (3, 32), False),
    ("elem_scalar_float_1x1_in_1x8_8size", "float32", 1, 1, 8, "undefined", (1, 8), False),
    ("elem_scalar_int32_1x1_in_1x8_8size", "int32", 1, 1, 8, "undefined", (1, 8), False),
    ("elem_scalar_half_1x1_in_1x16_16size", "float16", 1, 1, 16, "undefined", (1, 16), False),
    ("elem2d_dyn_float_4x8_64size", "float32", 4, 8, 64, "undefined", (4, 8), True),
    ("elem2d_dyn_int32_3x3_in_3x8_64size", "int32", 3, 3, 64, "undefined", (3, 8), True),
]


def launch(make_kernels, co, dt, rows, cols, size, oob, dst_tile, idx_tile, dyn, table, idx):
    """The case's kernel (KERNEL, its valid shapes and size run-time arguments when dyn) on
    one AI core; returns the output's words as main.cpp reads them."""
    shape = dict(vr="vr", vc="vc", size="size") if dyn else dict(vr=rows, vc=cols, size=size)
    ivr, ivc = (1, shape["vr"]) if co == "row" else (shape["vr"], shape["vc"])
    src = KERNEL.format(args=", vr, vc, size" if dyn else "", ir=idx_tile[0], ic=idx_tile[1], ivr=ivr, ivc=ivc,
                        dr=dst_tile[0], dc=dst_tile[1], dt=dt, co=co, oob=oob, **shape)
    kernel = make_kernels(src).k
    kdt = ml_dtypes.bfloat16 if dt == "bfloat16" else HOST[dt]

    def tensor(a, dtype):
        t = pto.alloc_tensor(a.nbytes, dtype)
        pto.memcpy_h2d(t, a)
        return t
    out = np.zeros(rows * cols, kdt)
    o = tensor(out, getattr(pto, dt))
    args = (o, tensor(np.ascontiguousarray(table).view(kdt), getattr(pto, dt)),
            tensor(np.ascontiguousarray(idx), pto.int32))
    pto.launch(kernel, grid=(1,), args=args + ((rows, cols, size) if dyn else ()), check="race")
    pto.sync()
    pto.memcpy_d2h(out, o)
    return out.view(HOST[dt])


@pytest.mark.parametrize("case", ROW, ids=[f"MGATHERTest.case_{c[0]}" for c in ROW])
def test_mgather_row(make_kernels, case):
    """gen_data.py case_row: a table of TR x C words, R indices (random, or half past the
    table for clamp / wrap / zero), golden_row: dst row i = table row remap(idx[i]) (zero: a
    zero row for an index past the table). MGATHER<Coalesce::Row, Oob>; exact."""
    name, dt, rows, cols, size, oob, dst_tile, idx_cols, dyn = case
    host = HOST[dt]
    table = make_table(host, size * cols).reshape(size, cols)
    idx = make_indices(name, (rows, 1), size, oob)
    golden = np.zeros((rows, cols), host)
    for i, raw in enumerate(idx.ravel()):
        r = remap_golden(int(raw), size, oob)
        golden[i] = 0 if r is None else table[r]
    got = launch(make_kernels, "row", dt, rows, cols, size, oob, dst_tile or (rows, cols), (1, idx_cols or rows),
                 dyn, table, idx)
    assert result_cmp(golden, got, 0.0)
    assert np.array_equal(golden.ravel(), got)


@pytest.mark.parametrize("case", ELEM, ids=[f"MGATHERTest.case_{c[0]}" for c in ELEM])
def test_mgather_elem(make_kernels, case):
    """gen_data.py case_elem / case_elem2d: a table of TS words, R x C indices (random, or
    half past the table for clamp / wrap / zero), golden_elem: dst(r, c) = table[remap(idx(r,
    c))] (zero: 0 for an index past the table). MGATHER<Coalesce::Elem, Oob>; exact."""
    name, dt, rows, cols, size, oob, dst_tile, dyn = case
    host = HOST[dt]
    table = make_table(host, size)
    idx = make_indices(name, (rows, cols), size, oob)
    golden = np.array([0 if remap_golden(int(raw), size, oob) is None else table[remap_golden(int(raw), size, oob)]
                       for raw in idx.ravel()], host)
    tile = dst_tile or (rows, cols)
    got = launch(make_kernels, "elem", dt, rows, cols, size, oob, tile, tile, dyn, table, idx)
    assert result_cmp(golden, got, 0.0)
    assert np.array_equal(golden, got)


KERNEL_NZ = """
@pto.kernel(sync="manual")
def k(O, T, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile({ir}, {ic}, pto.int32)
            dst = pto.alloc_tile({rows}, {cols}, pto.{dt}, layout=pto.NZ)
            pto.tload(idx, I)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.mgather(dst, T, idx, ({trows}, {tcols}), coalesce='{co}', oob='{oob}', layout=pto.NZ)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst, layout=pto.NZ)
"""

# (name, coalesce, dtype, rows, cols, block rows BR, block cols BC, oob): DEFINE_ROW_NZ and
# DEFINE_ELEM2D_NZ as mgather_kernel.cpp lists them (R, C, BR, BC; c0 is 32 bytes of the dtype)
NZ = [
    ("row_nz_float_16x16_2blk", "row", "float32", 16, 16, 2, 2, "undefined"),
    ("row_nz_half_32x16_2blk", "row", "float16", 32, 16, 2, 1, "undefined"),
    ("row_nz_int32_16x16_2blk", "row", "int32", 16, 16, 2, 2, "undefined"),
    ("row_nz_int16_32x16_1blk", "row", "int16", 32, 16, 2, 1, "undefined"),
    ("row_nz_int8_16x32_1blk", "row", "int8", 16, 32, 2, 1, "undefined"),
    ("row_nz_float_clamp_16x8_1blk", "row", "float32", 16, 8, 2, 1, "clamp"),
    ("row_nz_half_zero_16x16_2blk", "row", "float16", 16, 16, 2, 1, "zero"),
    ("elem2d_nz_float_16x16_2blk", "elem", "float32", 16, 16, 2, 2, "undefined"),
    ("elem2d_nz_half_16x16_1blk", "elem", "float16", 16, 16, 2, 1, "undefined"),
    ("elem2d_nz_int32_16x8_1blk", "elem", "int32", 16, 8, 2, 1, "undefined"),
    ("elem2d_nz_half_zero_16x16_1blk", "elem", "float16", 16, 16, 2, 1, "zero"),
]


@pytest.mark.parametrize("case", NZ, ids=[f"MGATHERTest.case_{c[0]}" for c in NZ])
def test_mgather_nz(make_kernels, case):
    """gen_data.py case_row_nz / case_elem2d_nz: an ND table of BR x 16 rows by BC x c0 columns
    (make_table), indices as the ND cases' (R of the rows, or R x C of the elements; half past
    the table for clamp / zero), golden_row / golden_elem on the ND table, then nd_to_nz of the
    table (the NZ GM the kernel reads) and of the golden (what its NZ TSTORE writes).
    MGATHER<Coalesce, Oob> from the Layout::NZ table into an NZ tile; exact."""
    name, co, dt, rows, cols, br, bc, oob = case
    host = HOST[dt]
    c0 = 32 // np.dtype(host).itemsize
    trows, tcols = br * 16, bc * c0
    table = make_table(host, trows * tcols).reshape(trows, tcols)
    if co == "row":
        idx = make_indices(name, (rows, 1), trows, oob)
        golden = np.zeros((rows, cols), host)
        for i, raw in enumerate(idx.ravel()):
            r = remap_golden(int(raw), trows, oob)
            golden[i] = 0 if r is None else table[r]
    else:
        idx = make_indices(name, (rows, cols), trows * tcols, oob)
        flat = table.ravel()
        golden = np.array([0 if remap_golden(int(raw), flat.size, oob) is None else
                           flat[remap_golden(int(raw), flat.size, oob)] for raw in idx.ravel()], host)
        golden = golden.reshape(rows, cols)
    ir, ic = (1, rows) if co == "row" else (rows, cols)
    kernel = make_kernels(KERNEL_NZ.format(ir=ir, ic=ic, rows=rows, cols=cols, dt=dt, trows=trows, tcols=tcols,
                                           co=co, oob=oob)).k
    kdt = getattr(pto, dt)

    def tensor(a, dtype):
        t = pto.alloc_tensor(a.nbytes, dtype)
        pto.memcpy_h2d(t, a)
        return t
    out = np.zeros(rows * cols, host)
    o = tensor(out, kdt)
    pto.launch(kernel, grid=(1,), args=(o, tensor(nd_to_nz(table, c0), kdt),
                                        tensor(np.ascontiguousarray(idx), pto.int32)), check="race")
    pto.sync()
    pto.memcpy_d2h(out, o)
    assert result_cmp(nd_to_nz(golden, c0), out, 0.0)
    assert np.array_equal(nd_to_nz(golden, c0), out)
