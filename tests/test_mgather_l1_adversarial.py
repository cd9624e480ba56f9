"""MGATHER into a Mat (L1) tile at its edges (hw-native-sys/pto-isa 3186c381
include/pto/npu/a2a3/MGather.hpp MGATHER_IMPL's Mat branch, MGatherGm2L1RowImpl,
MGatherGm2L1ElemImpl, MGatherCheckGm2L1): uint32 indices at and past 2^31 under every oob
policy, indices read from an offset into a larger GM tensor, the NZ-only destination, a scratch
that shares bytes with the table or the indices, and the tensors racecheck names when the
indices or the scratch race (tests/test_ptoisa_npu_mgather_gm2l1.py ports the st suite)."""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error_at
from engine_compare import both_executors

GATHER = """
@pto.kernel(sync="manual")
def k(O, T, I, S):
    with pto.cube():
        dst = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        pto.mgather(dst, T, {idx}, {size}, coalesce='{co}', oob='{oob}'{scratch})
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.tstore(O, dst)
"""


def tensor(a, dtype):
    t = pto.alloc_tensor(a.nbytes, dtype)
    pto.memcpy_h2d(t, a)
    return t


def host(t, n, dtype=np.float32):
    out = np.zeros(n, dtype)
    pto.memcpy_d2h(out, t)
    return out


def remap(raw, cap, oob):
    """mgather_remap<Oob> of the index read as uint32: the index used, None for Zero's drop."""
    u = int(raw) & 0xFFFFFFFF
    return {"clamp": min(u, cap - 1), "wrap": u % cap, "zero": u if u < cap else None}[oob]


@pytest.mark.parametrize("oob", ["clamp", "wrap", "zero"])
@pytest.mark.parametrize("co", ["row", "elem"])
def test_uint32_indices_past_2_31_from_an_offset_into_their_tensor(make_kernels, co, oob):
    """The scalar unit reads each index as uint32_t (static_cast<uint32_t>(idxPtr[r]), idxPtr the
    indices tensor's data() + 3 here) and mgather_remap compares it with the table's rows
    (Row) or elements (Elem): 2^31, 2^32 - 1 and 2^31 + size + 1 are past the table, not
    negative. Golden from numpy; the same words in timing and functional mode with either
    executor."""
    size = 8 if co == "row" else 100
    k = make_kernels(GATHER.format(idx="I + 3", size=size, co=co, oob=oob,
                                   scratch=", scratch=S" if co == "elem" else "")).k
    table = (np.arange(size * 16 if co == "row" else size) + 1).astype(np.float32)
    n = 16 if co == "row" else 256
    idx = np.random.default_rng(1).integers(0, 2**32, size=n + 3, dtype=np.uint64).astype(np.uint32)
    idx[3:8] = [2**31, 2**32 - 1, size, size - 1, 2**31 + size + 1]
    args = (tensor(np.zeros(256, np.float32), pto.float32), tensor(table, pto.float32),
            tensor(idx, pto.uint32), tensor(np.full(256, 7, np.float32), pto.float32))
    images = list(both_executors(k, (1,), args).values())
    assert all(np.array_equal(images[0], im) for im in images[1:])
    pto.launch(k, grid=(1,), args=args, check=("sync", "race"))
    pto.sync()
    rows = table.reshape(size, 16) if co == "row" else table
    want = np.zeros((n, 16 if co == "row" else 1), np.float32)
    for e in range(n):
        u = remap(idx[3 + e], size, oob)
        want[e] = 0 if u is None else rows[u]
    assert np.array_equal(host(args[0], 256), want.ravel())


def test_a_zn_mat_destination_is_a_compile_error(make_kernels):
    """MGatherCheckGm2L1: IsMGatherNZTile<DstTile> (BLayout::ColMajor + SLayout::RowMajor), so a
    ZN Mat tile (layout=pto.ColMajor: SLayout::ColMajor) is refused even when its 16 x 16 float16
    shape passes the C0 and FRACTAL_NZ_ROW asserts."""
    mod = make_kernels('''
@pto.kernel
def bad(H, I):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat, layout=pto.ColMajor)
        pto.mgather(m, H, I, 8)
''')
    compile_error_at(mod.bad, (pto.alloc_tensor(512, pto.float16), pto.alloc_tensor(64, pto.int32)),
                     "'m' is a ColMajor (ZN) Mat tile; \"MGATHER A2/A3 GM->L1 destination must be NZ",
                     "pto.mgather(m, H, I, 8)")


OVERLAP = """
@pto.kernel(sync="manual")
def k(T, I):
    with pto.cube():
        dst = pto.alloc_tile(16, 16, pto.int32, loc=pto.Mat)
        pto.mgather(dst, T, I, 256, coalesce='elem', oob='clamp', scratch={scratch})
"""


@pytest.mark.parametrize("scratch, what", [("T", "table"), ("T + 200", "table"), ("I + 16", "indices")])
def test_a_scratch_sharing_bytes_with_the_table_or_the_indices_stops_the_launch(make_kernels, scratch, what):
    """MGatherGm2L1ElemImpl zeroes its scratch's Rows x Cols first and then reads each index and
    table element in a scalar loop that writes the scratch as it goes: a scratch over the table
    (or the indices) makes the device gather those zeros and its own writes, which a model that
    reads the indices and table at the start cannot give, so the launch stops before anything
    is written with an OutOfBoundsError naming both."""
    k = make_kernels(OVERLAP.format(scratch=scratch)).k
    table = np.arange(512, dtype=np.int32) + 1
    args = (tensor(table, pto.int32), tensor(np.arange(512, dtype=np.int32)[::-1] % 256, pto.int32))
    with pytest.raises(pto.OutOfBoundsError, match=rf"MGATHER_L1_ELEM at line 7 .*the scratch \(256 elements .*shares "
                                                   rf"bytes with the {what}"):
        pto.launch(k, grid=(1,), args=args)
        pto.sync()
    assert np.array_equal(host(args[0], 512, np.int32), table)


SHARED_SCRATCH = """
@pto.kernel(sync="manual")
def k(T, I, S):
    with pto.cube():
        dst = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        pto.mgather(dst, T, I, 256, coalesce='elem', oob='clamp', scratch=S)
"""

INDICES_FROM_AIV = """
@pto.kernel(sync="manual")
def k(T, I, J):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            v = pto.alloc_tile(1, 16, pto.int32)
            pto.tload(v, J)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(I, v)
    with pto.cube():
        dst = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        pto.mgather(dst, T, I, 16, oob='clamp')
"""


def test_racecheck_names_the_scratch_two_ai_cores_write(make_kernels):
    """Two AI cores' element gathers write one scratch S (MGatherGm2L1ElemImpl's scratchPtr[off]
    stores) with no SYNCALL between them: the write-after-write race is on S, not on the table T
    both only read."""
    k = make_kernels(SHARED_SCRATCH).k
    args = (tensor(np.ones(256, np.float32), pto.float32), tensor(np.zeros(256, np.int32), pto.int32),
            tensor(np.zeros(256, np.float32), pto.float32))
    with pytest.raises(pto.RaceError,
                       match=r"write-after-write race on GM tensor 'S \(allocated[^)]*\)' between AI cores"):
        pto.launch(k, grid=(2,), args=args, check="race")
        pto.sync()


def test_racecheck_names_the_indices_an_aiv_stores_unordered(make_kernels):
    """AIV0 stores the indices I (TSTORE on MTE3) that the AIC's MGATHER_L1 reads (the scalar
    unit's idxPtr[r]) with no cross-core flag between them: the race is on I alone, not on
    'I and T, two kernel arguments over the same bytes' (T is MGATHER_L1's table)."""
    k = make_kernels(INDICES_FROM_AIV).k
    args = (tensor(np.ones(256, np.float32), pto.float32), tensor(np.zeros(16, np.int32), pto.int32),
            tensor(np.arange(16, dtype=np.int32), pto.int32))
    with pytest.raises(pto.RaceError, match=r"race on GM tensor 'I \(allocated as 't' in tensor\)' in block") as info:
        pto.launch(k, grid=(1,), args=args, check="race")
        pto.sync()
    assert "same bytes" not in str(info.value)
