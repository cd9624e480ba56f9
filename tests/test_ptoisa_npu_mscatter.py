"""pto-isa's ON-DEVICE A2/A3 st cases of MSCATTER from a Vec tile (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/mscatter at 3186c381) in the AI-core API as mscatter_kernel.cpp
writes them: TLOAD the int32 indices and the source tile, pipe_barrier(PIPE_ALL),
MSCATTER<Coalesce, ScatterAtomicOp, ScatterOOB> into the GM table, then FlushScatterOutput
(pipe_barrier(PIPE_ALL), set/wait V -> MTE3 and MTE3 -> S, dcci of the data cache, dsb,
pipe_barrier(PIPE_ALL); the dcci and dsb are not modelled: pypto_sim's scalar has no data cache).
main.cpp memsets the table to 0 and compares ResultCmp<T>(golden, table, 0.0f) over the whole
table (exact; the bfloat16 cases as the uint16_t words main.cpp launches them with).

- runRow / runRowPadded / runRowDyn (ROW_TEST, 26 cases): Coalesce::Row, src row i to table row
  idx[i] of a TR-row table of C columns; atomic-add cases add the rows.
- runElem / runElem2D / runElem2DPadded / runElemScalar / runElem2DDyn (ELEM_TEST, ELEM2D_TEST,
  SCALAR_TEST, ELEM2D_DYN_TEST, 40 cases): Coalesce::Elem, src(r, c) to table[idx(r, c)] of a
  TS-element table; atomic-add cases add each element (MScatterScalarStore's read-modify-write).

gen_data.py, ported: src = (arange(1, n + 1) % mod) + 1 as the dtype (mod 251 or the integer
range; the non-atomic bfloat16 cases those uint16 words, the atomic ones bfloat16 words of
((arange(1, n + 1) % 31) + 1) / 8, BF16_MARK); indices: distinct (rng.permutation(table)[:n],
no_dup) for plain scatters, rng.integers(0, table) for atomic adds, and for skip / clamp / wrap
n // 2 (at least one) positions (rng.choice, no repeats) set past the table; golden: a zero
table written (or added to: bfloat16 sums as float32 rounded to nearest even, the others in the
dtype) in index order. gen_data.py seeds default_rng(hash(name) & 0xFFFFFFFF), which Python
salts per process; the ports seed it with zlib.crc32 of the case name.

- runRowNz / runElem2DNz (ROW_NZ_TEST, ELEM2D_NZ_TEST, 10 cases): the NZ form, an NZ source
  tile (ColMajor, SLayout::RowMajor, 512-byte fractals; here layout=pto.NZ) TLOADed from NZ GM
  ([1, BC, R / 16, 16, c0]) into a Layout::NZ table ([1, BC, BR, 16, c0]: BR x 16 rows, BC x c0
  columns). gen_data.py's case_row_nz / case_elem2d_nz compute golden_row / golden_elem from
  the ND source and nd_to_nz the source and the golden table: the logical (r, c) of the tile
  goes where the ND form sends it, as MScatterRowNzImpl / MScatterElemNzImpl walk the tile's
  logical (r, c) at its NZ offsets (the element form column block by column block: the same
  table here, the plain cases' indices being distinct).

The kernels run as written, in sync="manual" under check="race" (pto.mscatter emits
MScatterRowImpl's / MScatterElemImpl's PtoSetWaitFlag pairs around the instruction; their NZ
twins set and wait the same).
"""
import zlib

import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto
from mgather_data import nd_to_nz
from ptoisa_st import result_cmp

HOST = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16, "int32": np.int32,
        "uint32": np.uint32, "int16": np.int16, "uint16": np.uint16, "int8": np.int8, "uint8": np.uint8}

KERNEL = """
@pto.kernel(sync="manual")
def k(O, S, I{args}):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile({ir}, {ic}, pto.int32, valid=({ivr}, {ivc}))
            src = pto.alloc_tile({sr}, {sc}, pto.{dt}, valid=({vr}, {vc}))
            pto.tload(idx, I)
            pto.tload(src, S)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.mscatter(O, src, idx, {size}, coalesce='{co}', oob='{oob}', atomic={atomic})
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
"""

# (name, dtype, rows, cols, table rows, atomic, oob, bf16 values, src tile, index tile columns,
# run-time shapes): DEFINE_ROW (src R x C, indices [1, R]), DEFINE_ROW_PAD (VR, VC, PR, PC, PIC,
# TR) and DEFINE_ROW_DYN (PR, PC, PIC, RVR, RVC, RTR) as mscatter_kernel.cpp lists them
ROW = [
    ("row_float_8x32_64rows", "float32", 8, 32, 64, None, "undefined", False, None, None, False),
    ("row_half_16x64_64rows", "float16", 16, 64, 64, None, "undefined", False, None, None, False),
    ("row_bfloat16_16x16_64rows", "bfloat16", 16, 16, 64, None, "undefined", False, None, None, False),
    ("row_int32_8x16_32rows", "int32", 8, 16, 32, None, "undefined", False, None, None, False),
    ("row_uint32_8x16_32rows", "uint32", 8, 16, 32, None, "undefined", False, None, None, False),
    ("row_int16_8x16_32rows", "int16", 8, 16, 32, None, "undefined", False, None, None, False),
    ("row_uint16_8x16_32rows", "uint16", 8, 16, 32, None, "undefined", False, None, None, False),
    ("row_int8_8x32_32rows", "int8", 8, 32, 32, None, "undefined", False, None, None, False),
    ("row_uint8_8x32_32rows", "uint8", 8, 32, 32, None, "undefined", False, None, None, False),
    ("row_float_clamp_8x32_8rows", "float32", 8, 32, 8, None, "clamp", False, None, None, False),
    ("row_int32_wrap_8x16_8rows", "int32", 8, 16, 8, None, "wrap", False, None, None, False),
    ("row_half_skip_8x32_8rows", "float16", 8, 32, 8, None, "skip", False, None, None, False),
    ("row_float_atomic_add_8x32_8rows", "float32", 8, 32, 8, "add", "undefined", False, None, None, False),
    ("row_int32_atomic_add_8x16_8rows", "int32", 8, 16, 8, "add", "undefined", False, None, None, False),
    ("row_half_atomic_add_8x32_8rows", "float16", 8, 32, 8, "add", "undefined", False, None, None, False),
    ("row_int16_atomic_add_8x16_8rows", "int16", 8, 16, 8, "add", "undefined", False, None, None, False),
    ("row_bfloat16_atomic_add_8x32_8rows", "bfloat16", 8, 32, 8, "add", "undefined", True, None, None, False),
    ("row_bfloat16_atomic_add_16x16_16rows", "bfloat16", 16, 16, 16, "add", "undefined", True, None, None, False),
    ("row_bfloat16_atomic_add_8x64_16rows", "bfloat16", 8, 64, 16, "add", "undefined", True, None, None, False),
    ("row_int32_unaligned_3x8_8rows", "int32", 3, 8, 8, None, "undefined", False, (3, 8), 8, False),
    ("row_float_partial_4x16_in_8x16", "float32", 4, 16, 8, None, "undefined", False, (8, 16), 8, False),
    ("row_half_partial_5x32_in_8x32", "float16", 5, 32, 8, None, "undefined", False, (8, 32), 8, False),
    ("row_uint8_unaligned_3x32_32rows", "uint8", 3, 32, 8, None, "undefined", False, (3, 32), 8, False),
    ("row_int16_partial_3x16_in_4x16", "int16", 3, 16, 8, None, "clamp", False, (4, 16), 8, False),
    ("row_dyn_int32_3x16_8rows", "int32", 3, 16, 8, None, "undefined", False, (3, 16), 8, True),
    ("row_dyn_half_4x32_16rows", "float16", 4, 32, 16, None, "undefined", False, (4, 32), 8, True),
]
# (name, dtype, rows, cols, table size, atomic, oob, bf16 values, src tile, run-time shapes):
# DEFINE_ELEM / DEFINE_ELEM_ATOMIC (1 x N), DEFINE_ELEM2D / DEFINE_ELEM2D_ATOMIC (R x C),
# DEFINE_ELEM2D_PAD (VR, VC, PR, PC, TS), DEFINE_ELEM_SCALAR (1 x 1 of 1 x PC), DEFINE_ELEM2D_DYN
ELEM = [
    ("elem_float_64_128size", "float32", 1, 64, 128, None, "undefined", False, None, False),
    ("elem_half_64_128size", "float16", 1, 64, 128, None, "undefined", False, None, False),
    ("elem_bfloat16_64_128size", "bfloat16", 1, 64, 128, None, "undefined", False, None, False),
    ("elem_int32_32_64size", "int32", 1, 32, 64, None, "undefined", False, None, False),
    ("elem_uint32_32_64size", "uint32", 1, 32, 64, None, "undefined", False, None, False),
    ("elem_int16_32_64size", "int16", 1, 32, 64, None, "undefined", False, None, False),
    ("elem_uint16_32_64size", "uint16", 1, 32, 64, None, "undefined", False, None, False),
    ("elem_int8_64_128size", "int8", 1, 64, 128, None, "undefined", False, None, False),
    ("elem_uint8_64_128size", "uint8", 1, 64, 128, None, "undefined", False, None, False),
    ("elem_float_clamp_32_16size", "float32", 1, 32, 16, None, "clamp", False, None, False),
    ("elem_int32_wrap_32_16size", "int32", 1, 32, 16, None, "wrap", False, None, False),
    ("elem_half_skip_32_16size", "float16", 1, 32, 16, None, "skip", False, None, False),
    ("elem_int32_atomic_add_16_8size", "int32", 1, 16, 8, "add", "undefined", False, None, False),
    ("elem_bfloat16_atomic_add_32_16size", "bfloat16", 1, 32, 16, "add", "undefined", True, None, False),
    ("elem2d_float_8x32_256size", "float32", 8, 32, 256, None, "undefined", False, None, False),
    ("elem2d_int32_8x16_256size", "int32", 8, 16, 256, None, "undefined", False, None, False),
    ("elem2d_half_4x32_256size", "float16", 4, 32, 256, None, "undefined", False, None, False),
    ("elem2d_bfloat16_4x32_256size", "bfloat16", 4, 32, 256, None, "undefined", False, None, False),
    ("elem2d_uint8_4x64_256size", "uint8", 4, 64, 256, None, "undefined", False, None, False),
    ("elem2d_int8_4x64_256size", "int8", 4, 64, 256, None, "undefined", False, None, False),
    ("elem2d_int16_4x32_256size", "int16", 4, 32, 256, None, "undefined", False, None, False),
    ("elem2d_uint16_4x32_256size", "uint16", 4, 32, 256, None, "undefined", False, None, False),
    ("elem2d_uint32_8x16_256size", "uint32", 8, 16, 256, None, "undefined", False, None, False),
    ("elem2d_float_wrap_4x16_64size", "float32", 4, 16, 64, None, "wrap", False, None, False),
    ("elem2d_int32_clamp_4x8_32size", "int32", 4, 8, 32, None, "clamp", False, None, False),
    ("elem2d_half_skip_4x32_64size", "float16", 4, 32, 64, None, "skip", False, None, False),
    ("elem2d_int32_unaligned_3x3_in_3x8_64size", "int32", 3, 3, 64, None, "undefined", False, (3, 8), False),
    ("elem2d_float_unaligned_5x5_in_5x8_64size", "float32", 5, 5, 64, None, "undefined", False, (5, 8), False),
    ("elem2d_half_unaligned_3x9_in_3x16_64size", "float16", 3, 9, 64, None, "undefined", False, (3, 16), False),
    ("elem2d_int8_unaligned_3x17_in_3x32_64size", "int8", 3, 17, 64, None, "undefined", False, (3, 32), False),
    ("elem2d_float_atomic_add_4x16_8size", "float32", 4, 16, 8, "add", "undefined", False, None, False),
    ("elem2d_int32_atomic_add_4x8_8size", "int32", 4, 8, 8, "add", "undefined", False, None, False),
    ("elem2d_half_atomic_add_4x16_8size", "float16", 4, 16, 8, "add", "undefined", False, None, False),
    ("elem2d_bfloat16_atomic_add_4x16_8size", "bfloat16", 4, 16, 8, "add", "undefined", True, None, False),
    ("elem2d_bfloat16_atomic_add_8x16_64size", "bfloat16", 8, 16, 64, "add", "undefined", True, None, False),
    ("elem_scalar_float_1x1_in_1x8_8size", "float32", 1, 1, 8, None, "undefined", False, (1, 8), False),
    ("elem_scalar_int32_1x1_in_1x8_8size", "int32", 1, 1, 8, None, "undefined", False, (1, 8), False),
    ("elem_scalar_half_1x1_in_1x16_16size", "float16", 1, 1, 16, None, "undefined", False, (1, 16), False),
    ("elem2d_dyn_float_4x8_64size", "float32", 4, 8, 64, None, "undefined", False, (4, 8), True),
    ("elem2d_dyn_int32_3x3_in_3x8_64size", "int32", 3, 3, 64, None, "undefined", False, (3, 8), True),
]


def f32_to_bf16_bits(x):
    """gen_data.py f32_to_bf16_bits: float32 to bfloat16 words, rounded to nearest even."""
    u32 = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((u32 + np.uint32(0x7FFF) + ((u32 >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)


def bf16_bits_to_f32(bits):
    """gen_data.py bf16_bits_to_f32."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def make_src(host, count, bf16):
    """gen_data.py make_src: (arange(1, count + 1) % mod) + 1 as the dtype, or BF16_MARK's
    ((arange % 31) + 1) * 0.125 as bfloat16 words."""
    if bf16:
        return f32_to_bf16_bits(((np.arange(1, count + 1) % 31) + 1).astype(np.float32) * np.float32(0.125))
    mod = min(np.iinfo(host).max - np.iinfo(host).min + 1, 251) if np.issubdtype(host, np.integer) else 251
    return ((np.arange(1, count + 1) % mod) + 1).astype(host)


def make_indices(name, shape, size, atomic, oob):
    """gen_data.py's index kinds from default_rng(crc32(name)): random (atomic adds), oob (the
    skip / clamp / wrap cases: n // 2 positions past the table) or no_dup (the rest)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    n = int(np.prod(shape))
    if atomic:
        return rng.integers(low=0, high=size, size=shape, dtype=np.int32)
    if oob != "undefined":
        arr = rng.integers(low=0, high=size, size=n, dtype=np.int32)
        count = max(1, n // 2)
        pos = rng.choice(n, size=count, replace=False)
        arr[pos] = rng.integers(low=size, high=size * 2, size=count, dtype=np.int32)
        return arr.reshape(shape)
    return rng.permutation(size)[:n].astype(np.int32).reshape(shape)


def golden_of(src, idx, table_shape, atomic, oob, bf16):
    """gen_data.py golden_row / golden_elem: a zero table, each source row (element) written or
    added at resolve(index) in order; skip drops an index past the table."""
    table = np.zeros(table_shape, src.dtype)
    cap = table_shape[0]
    for i, raw in enumerate(idx.ravel().tolist()):
        if oob == "skip" and not 0 <= raw < cap:
            continue
        safe = (min(raw, cap - 1) if raw >= 0 else 0) if oob == "clamp" else raw % cap if oob == "wrap" else raw
        if not atomic:
            table[safe] = src[i]
        elif bf16:
            total = np.atleast_1d(bf16_bits_to_f32(table[safe]) + bf16_bits_to_f32(src[i]))
            table[safe] = f32_to_bf16_bits(total).reshape(np.shape(table[safe]))
        else:
            table[safe] = (table[safe] + src[i]).astype(src.dtype)
    return table


def launch(make_kernels, co, dt, rows, cols, size, atomic, oob, src_tile, idx_tile, dyn, src, idx, table_len):
    """The case's kernel on one AI core; returns the table's words as main.cpp reads them."""
    shape = dict(vr="vr", vc="vc", size="size") if dyn else dict(vr=rows, vc=cols, size=size)
    ivr, ivc = (1, shape["vr"]) if co == "row" else (shape["vr"], shape["vc"])
    text = KERNEL.format(args=", vr, vc, size" if dyn else "", ir=idx_tile[0], ic=idx_tile[1], ivr=ivr, ivc=ivc,
                         sr=src_tile[0], sc=src_tile[1], dt=dt, co=co, oob=oob,
                         atomic="'add'" if atomic else None, **shape)
    kernel = make_kernels(text).k
    kdt = ml_dtypes.bfloat16 if dt == "bfloat16" else HOST[dt]

    def tensor(a, dtype):
        t = pto.alloc_tensor(a.nbytes, dtype)
        pto.memcpy_h2d(t, a)
        return t
    out = np.zeros(table_len, kdt)
    o = tensor(out, getattr(pto, dt))
    args = (o, tensor(np.ascontiguousarray(src).ravel().view(kdt), getattr(pto, dt)),
            tensor(np.ascontiguousarray(idx), pto.int32))
    pto.launch(kernel, grid=(1,), args=args + ((rows, cols, size) if dyn else ()), check="race")
    pto.sync()
    pto.memcpy_d2h(out, o)
    return out.view(HOST[dt])


@pytest.mark.parametrize("case", ROW, ids=[f"MSCATTERTest.case_{c[0]}" for c in ROW])
def test_mscatter_row(make_kernels, case):
    """gen_data.py case_row: src R x C, R indices of its kind, golden_row over a zero TR x C
    table. MSCATTER<Coalesce::Row, Atomic, Oob>; ResultCmp over the table, exact."""
    name, dt, rows, cols, size, atomic, oob, bf16, src_tile, idx_cols, dyn = case
    src = make_src(HOST[dt], rows * cols, bf16).reshape(rows, cols)
    idx = make_indices(name, (rows, 1), size, atomic, oob)
    golden = golden_of(src, idx, (size, cols), atomic, oob, bf16)
    got = launch(make_kernels, "row", dt, rows, cols, size, atomic, oob, src_tile or (rows, cols),
                 (1, idx_cols or rows), dyn, src, idx, size * cols)
    assert result_cmp(golden, got, 0.0)
    assert np.array_equal(golden.ravel(), got)


@pytest.mark.parametrize("case", ELEM, ids=[f"MSCATTERTest.case_{c[0]}" for c in ELEM])
def test_mscatter_elem(make_kernels, case):
    """gen_data.py case_elem / case_elem2d: src R x C, R x C indices of its kind, golden_elem
    over a zero table of TS. MSCATTER<Coalesce::Elem, Atomic, Oob>; ResultCmp over the table,
    exact."""
    name, dt, rows, cols, size, atomic, oob, bf16, src_tile, dyn = case
    src = make_src(HOST[dt], rows * cols, bf16)
    idx = make_indices(name, (rows, cols), size, atomic, oob)
    golden = golden_of(src, idx, (size,), atomic, oob, bf16)
    tile = src_tile or (rows, cols)
    got = launch(make_kernels, "elem", dt, rows, cols, size, atomic, oob, tile, tile, dyn, src.reshape(rows, cols),
                 idx, size)
    assert result_cmp(golden, got, 0.0)
    assert np.array_equal(golden, got)


KERNEL_NZ = """
@pto.kernel(sync="manual")
def k(O, S, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile({ir}, {ic}, pto.int32)
            src = pto.alloc_tile({rows}, {cols}, pto.{dt}, layout=pto.NZ)
            pto.tload(idx, I)
            pto.tload(src, S, layout=pto.NZ)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.mscatter(O, src, idx, ({trows}, {tcols}), coalesce='{co}', oob='{oob}', atomic={atomic},
                         layout=pto.NZ)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
"""

# (name, coalesce, dtype, rows, cols, block rows BR, block cols BC, atomic, oob): DEFINE_ROW_NZ and
# DEFINE_ELEM2D_NZ as mscatter_kernel.cpp lists them (R, C, BR, BC; c0 is 32 bytes of the dtype)
NZ = [
    ("row_nz_float_16x16_2blk", "row", "float32", 16, 16, 2, 2, None, "undefined"),
    ("row_nz_half_32x16_2blk", "row", "float16", 32, 16, 2, 1, None, "undefined"),
    ("row_nz_int32_16x16_2blk", "row", "int32", 16, 16, 2, 2, None, "undefined"),
    ("row_nz_int16_32x16_1blk", "row", "int16", 32, 16, 2, 1, None, "undefined"),
    ("row_nz_int8_16x32_1blk", "row", "int8", 16, 32, 2, 1, None, "undefined"),
    ("row_nz_float_clamp_16x8_1blk", "row", "float32", 16, 8, 2, 1, None, "clamp"),
    ("row_nz_float_atomic_add_16x8_1blk", "row", "float32", 16, 8, 2, 1, "add", "undefined"),
    ("elem2d_nz_float_16x16_2blk", "elem", "float32", 16, 16, 2, 2, None, "undefined"),
    ("elem2d_nz_half_16x16_1blk", "elem", "float16", 16, 16, 2, 1, None, "undefined"),
    ("elem2d_nz_int32_16x8_1blk", "elem", "int32", 16, 8, 2, 1, None, "undefined"),
]


@pytest.mark.parametrize("case", NZ, ids=[f"MSCATTERTest.case_{c[0]}" for c in NZ])
def test_mscatter_nz(make_kernels, case):
    """gen_data.py case_row_nz / case_elem2d_nz: an R x C source (make_src), indices of the
    case's kind over a table of BR x 16 rows by BC x c0 columns (R of the rows, or R x C of its
    elements), golden_row / golden_elem over a zero ND table, then nd_to_nz of the source (the
    NZ GM the kernel TLOADs) and of the golden (the NZ table main.cpp reads back, all of it).
    MSCATTER<Coalesce, Atomic, Oob> from an NZ tile into the Layout::NZ table; exact."""
    name, co, dt, rows, cols, br, bc, atomic, oob = case
    host = HOST[dt]
    c0 = 32 // np.dtype(host).itemsize
    trows, tcols = br * 16, bc * c0
    src = make_src(host, rows * cols, False).reshape(rows, cols)
    if co == "row":
        idx = make_indices(name, (rows, 1), trows, atomic, oob)
        golden = golden_of(src, idx, (trows, tcols), atomic, oob, False)
    else:
        idx = make_indices(name, (rows, cols), trows * tcols, atomic, oob)
        golden = golden_of(src.ravel(), idx, (trows * tcols,), atomic, oob, False).reshape(trows, tcols)
    ir, ic = (1, rows) if co == "row" else (rows, cols)
    kernel = make_kernels(KERNEL_NZ.format(ir=ir, ic=ic, rows=rows, cols=cols, dt=dt, trows=trows, tcols=tcols,
                                           co=co, oob=oob, atomic="'add'" if atomic else None)).k
    kdt = getattr(pto, dt)

    def tensor(a, dtype):
        t = pto.alloc_tensor(a.nbytes, dtype)
        pto.memcpy_h2d(t, a)
        return t
    out = np.zeros(trows * tcols, host)
    o = tensor(out, kdt)
    pto.launch(kernel, grid=(1,), args=(o, tensor(nd_to_nz(src, c0), kdt),
                                        tensor(np.ascontiguousarray(idx), pto.int32)), check="race")
    pto.sync()
    pto.memcpy_d2h(out, o)
    assert result_cmp(nd_to_nz(golden, c0), out, 0.0)
    assert np.array_equal(nd_to_nz(golden, c0), out)
