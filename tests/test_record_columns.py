"""Records kept compactly (timing/records.py): each column in the narrowest signed dtype that
holds twice its extremes, from a per-field floor up (the stall cause in 8 bits, pcs, warps and
cores in 16, everything else in 32), built chunk by chunk without one int64 copy of all rows."""
import numpy as np

from pypto_sim.timing.records import FIELDS, LaunchRecords, RecordColumns, narrow


def rows(*tuples):
    return np.array(tuples, np.int64).reshape(-1, len(FIELDS))


def test_each_field_takes_its_narrowest_dtype():
    """Two rows (block, warp, core, pc, issue, complete, stall, cause, cause_pc, mask, bytes,
    why): every value is small, so each column takes its floor: cause int8; warp, core, pc,
    cause_pc int16 (cause_pc -1 included); block, cycles, mask, bytes and why (which packs a
    shared-bandwidth wait in cycles, records.why_code: 16 + 32 x 3 = 112 here) int32."""
    rec = LaunchRecords.from_array(rows((0, 0, 0, 3, 10, 14, 2, 1, -1, 1, 512, 0),
                                        (5, 2, 1, 4, 12, 20, 0, 0, 3, 1, 0, 112)))
    want = dict(block=np.int32, warp=np.int16, core=np.int16, pc=np.int16, issue=np.int32,
                complete=np.int32, stall=np.int32, cause=np.int8, cause_pc=np.int16,
                mask=np.int32, bytes=np.int32, why=np.int32)
    assert {f: getattr(rec, f).dtype for f in FIELDS} == {f: np.dtype(d) for f, d in want.items()}
    assert rec.complete.tolist() == [14, 20] and rec.cause_pc.tolist() == [-1, 3]


def test_twice_the_extremes_decide_the_width():
    """2^30 - 1 doubled is 2^31 - 2, within int32; 2^30 doubled is 2^31, beyond it: int64.
    A pc of 16383 doubles to 32766 (int16), 16384 to 32768 (int32). A full lane mask
    0xFFFFFFFF needs int64."""
    assert narrow(np.array([0, 2 ** 30 - 1]), "issue").dtype == np.int32
    assert narrow(np.array([0, 2 ** 30]), "issue").dtype == np.int64
    assert narrow(np.array([16383]), "pc").dtype == np.int16
    assert narrow(np.array([16384]), "pc").dtype == np.int32
    assert narrow(np.array([-16384]), "cause_pc").dtype == np.int16
    assert narrow(np.array([-16385]), "cause_pc").dtype == np.int32
    assert narrow(np.array([0xFFFFFFFF]), "mask").dtype == np.int64


def test_chunks_join_in_order_at_the_widest_chunks_dtype():
    """Three chunks of one row each, issue 1, 2 and 2^40: joined in order, the issue column
    takes the third chunk's int64 (as from_array of all three rows does); the others keep
    their floors. The builder is empty afterwards."""
    cols = RecordColumns()
    for issue in (1, 2, 2 ** 40):
        cols.add(rows((0, 0, 0, 0, issue, issue + 1, 0, 0, -1, 1, 0, 0)))
    cols.add(rows())                                   # an empty chunk adds nothing
    rec = cols.records()
    assert rec.issue.tolist() == [1, 2, 2 ** 40] and rec.issue.dtype == np.int64
    assert rec.pc.dtype == np.int16 and len(rec) == 3
    whole = LaunchRecords.from_array(rows(*[(0, 0, 0, 0, i, i + 1, 0, 0, -1, 1, 0, 0) for i in (1, 2, 2 ** 40)]))
    assert all(getattr(whole, f).dtype == getattr(rec, f).dtype for f in FIELDS)
    assert len(cols.records()) == 0


def test_no_rows_give_empty_columns_of_the_floor_dtypes():
    """A launch that recorded nothing: twelve empty columns, cause int8, pc int16, issue int32."""
    rec = RecordColumns().records()
    assert len(rec) == 0
    assert (rec.cause.dtype, rec.pc.dtype, rec.issue.dtype) == (np.int8, np.int16, np.int32)
