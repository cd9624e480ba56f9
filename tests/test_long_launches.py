"""A long launch keeps flat memory: without records its rows are folded into per-pc totals as
they come (timing/records.py FoldedRecords), and a finished block's memory is released."""
import numpy as np

import pypto_sim as pto
from pypto_sim.runtime.launch import simulation_for
from pypto_sim.runtime.device import DEFAULT_BLOCK, current_device
from pypto_sim.timing.records import FIELDS, FoldedRecords, LaunchRecords, PcTotals


def row(pc, issue, complete, stall, mask):
    values = dict(block=0, warp=0, core=0, pc=pc, issue=issue, complete=complete, stall=stall,
                  cause=0, cause_pc=-1, mask=mask, bytes=0, why=0)
    return tuple(values[f] for f in FIELDS)


def test_folded_rows_sum_to_the_records_totals():
    """Five rows folded every two: pc 0 issued three times (busy 4 + 1 + 2 = 7, stall 0 + 3 +
    1 = 4, lanes 32 + 1 + 2 = 35 from masks 0xFFFFFFFF, 0x1, 0x3), pc 2 twice (busy 5 + 5 =
    10, stall 2, lanes 4 + 4 from 0xF); pc 1 never. Never more than two rows are held."""
    rows = [row(0, 0, 4, 0, 0xFFFFFFFF), row(2, 1, 6, 2, 0xF), row(0, 5, 6, 3, 0x1),
            row(0, 6, 8, 1, 0x3), row(2, 9, 14, 0, 0xF)]
    folded = FoldedRecords(3, fold_rows=2)
    for r in rows:
        folded.extend(r)
        assert len(folded) < 2
    t = folded.totals()
    assert t.count.tolist() == [3, 0, 2]
    assert t.lanes.tolist() == [35, 0, 8]
    assert t.busy.tolist() == [7, 0, 10]
    assert t.stall.tolist() == [4, 0, 2]
    want = PcTotals.from_records(LaunchRecords.from_array(np.array(rows, np.int64)), 3)
    assert all((getattr(t, f) == getattr(want, f)).all() for f in ("count", "lanes", "busy", "stall"))


def test_an_aicore_launch_without_records_holds_no_rows_and_no_finished_blocks(make_kernels):
    """An AI-core kernel of 60 blocks on the SimPy model: with records kept it writes one row per issued
    instruction; without, the same per-pc totals come from rows folded 64 at a time, and once
    it finished no block is held."""
    mod = make_kernels('''
@pto.kernel(sync="manual")
def k(A, n):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        for i in range(n):
            pto.tload(m, A)
''')
    A = pto.alloc_tensor(16 * 16 * 2, pto.float16)
    dev = current_device()
    sims = []
    for record in (True, False):
        dev.launch(mod.k, (60, 1, 1), DEFAULT_BLOCK, (A, 40))
        sim = simulation_for(dev.queue.pop(), dev.hbm.data.copy(), dev.hbm.init.copy(), record=record,
                             engine="simpy")
        if not record:
            sim.rows.fold_rows = 64
        sim.run()
        assert sim.engine_used == "simpy" and sim.blocks == []
        sims.append(sim)
    kept, folded = sims
    assert len(kept.rows) > 60 * 40 and len(folded.rows) < 64
    t, want = folded.totals(), kept.totals()
    assert all((getattr(t, f) == getattr(want, f)).all() for f in ("count", "lanes", "busy", "stall"))
