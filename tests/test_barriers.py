"""The article's third pitfall: barrier() syncs one warp, barrier_block() the whole block."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.timing.records import CAUSE

from engine_compare import assert_engines_agree, tensors
from simt_kernels import share_block_barrier, share_warp_barrier


@pto.kernel
def warp1_waits(a, o):
    """Warp 0 (lanes 0-31) copies a to o; warp 1 has nothing to do but the barrier."""
    i = pto.get_global_id()
    if i < 32:
        o[i] = a[i]
    pto.barrier_block()


def _run(kernel):
    src = np.arange(1, 129, dtype=np.float32)
    d_src = pto.alloc_tensor(src.nbytes)
    d_out = pto.alloc_tensor(256 * 4)
    pto.memcpy_h2d(d_src, src)
    prof = pto.profile(kernel, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_out))
    out = np.empty(256, np.float32)
    pto.memcpy_d2h(out, d_out)
    return prof, np.concatenate([src, src]), out


def test_warp_barrier_lets_other_warps_read_stale_data():
    """Warps 4-7 (lanes 128-255) store nothing, pass their own warp barrier at once and read the
    buffer while warps 0-3 are still waiting for HBM: they see the zero-filled buffer."""
    _, expected, out = _run(share_warp_barrier)
    assert np.array_equal(out[:128], expected[:128])      # each warp reads what it wrote itself
    assert np.all(out[128:] == 0.0)                        # stale: written later by other warps


def test_block_barrier_makes_every_value_right():
    """barrier_block() waits for all 8 warps and their stores: every lane reads the right value,
    and warps 4-7 wait at the barrier for the HBM loads of warps 0-3."""
    prof, expected, out = _run(share_block_barrier)
    assert np.array_equal(out, expected)
    waits = [e for e in prof.timeline if e.inst == "BARRIER_BLOCK" and e.warp >= 4]
    last_load = max(e.end for e in prof.timeline if e.inst == "LOAD")
    # the wait is a stall before the barrier issues (once warps 0-3's stores are visible)
    assert waits and all(e.stall == "barrier_block" and e.start - e.stall_cycles < last_load < e.start
                         and e.end == e.start + 1 for e in waits)


def test_block_barrier_inside_a_branch_is_a_deadlock():
    """barrier_block() inside `if lid < 128`: warps 4-7 never arrive (they finish), so warps 0-3
    wait forever. The simulator says so instead of hanging, naming the warps and the line."""
    @pto.kernel
    def half_barrier(out):
        lid = pto.get_local_id()
        if lid < 128:
            pto.barrier_block()
        pto.store(out + lid, 1.0)

    d_out = pto.alloc_tensor(256 * 4)
    try:
        pto.profile(half_barrier, grid=(1, 1, 1), block=(256, 1, 1), args=(d_out,))
    except pto.DeadlockError as err:
        text = str(err)
        assert "half_barrier" in text and f":{err.line}" in text
        assert "block 0 warp 0" in text and "block 0 warp 3" in text and "warp 4" not in text
        assert "barrier_block()" in text
    else:
        raise AssertionError("expected DeadlockError")


def test_deadlock_when_warps_need_different_numbers_of_barriers():
    """Block barriers are counted, not matched by line (as bar.sync 0 on a GPU): warps 4-7 pass
    two barriers, warps 0-3 one; the first completes with all 8 warps, the second never can."""
    @pto.kernel
    def split_barriers(out):
        lid = pto.get_local_id()
        if lid < 128:
            pto.barrier_block()
        else:
            pto.barrier_block()
            pto.barrier_block()
        pto.store(out + lid, 1.0)

    d_out = pto.alloc_tensor(256 * 4)
    try:
        pto.profile(split_barriers, grid=(1, 1, 1), block=(256, 1, 1), args=(d_out,))
    except pto.DeadlockError as err:
        assert "warp 4" in str(err) and "warp 0 " not in str(err)
    else:
        raise AssertionError("expected DeadlockError")


# tests/machines/simple.toml, one issue port (issue_width 1): the two warps' first instructions
# take turns on it - warp 0: GLOBAL_ID 0, LT 1, IF 3, LOAD 5; warp 1: GLOBAL_ID 2, LT 4, IF 6,
# ENDIF 7 (no lane of warp 1 takes the branch), so warp 1 arrives at barrier_block at cycle 8.
# Warp 0's LOAD of 32 float32 (128 bytes at 32 bytes a cycle): 5 + 100 + 4 = 109; its STORE
# issues at 109 and is visible at 109 + 50 + 4 = 163; its ENDIF at 110, so it is ready for the
# barrier at 111 and waits for its own store until 163 (stall 52, cause barrier). The last warp
# has arrived at 163: both BARRIER_BLOCKs issue at 163 and complete at 164 (latency 1); warp
# 1's stall is 163 - 8 = 155, cause barrier_block. EXITs at 164 and 165 (one port): 166 cycles.
BARRIER_ROWS = {0: (163, 164, 52, CAUSE["barrier"]), 1: (163, 164, 155, CAUSE["barrier_block"])}


def _warp1_waits_args():
    d_a, d_o = tensors(np.arange(64, dtype=np.float32), np.zeros(64, np.float32))
    return d_a, d_o


@pytest.mark.parametrize("record", [True, False])
def test_a_warp_waiting_at_barrier_block_stalls_until_the_last_warp_arrives(simple_machine, record):
    """docs/timing.md item 4: barrier_block() issues once every warp of the block has arrived.
    Its record (both engines, every field) starts there: the wait before is a barrier_block
    stall, the barrier itself busy for its latency only (numbers: BARRIER_ROWS' comment).
    Without records the per-pc totals are the same sums: BARRIER_BLOCK busy 1 + 1, stall
    52 + 155 = 207."""
    args = _warp1_waits_args()
    run = assert_engines_agree(warp1_waits, args, (1, 1, 1), (64, 1, 1), record=record)
    assert run["cycles"] == 166
    pc = [ins.op for ins in warp1_waits.program_for(args).instrs].index("BARRIER_BLOCK")
    assert (run["totals"].count[pc], run["totals"].busy[pc], run["totals"].stall[pc]) == (2, 2, 207)
    if record:
        rec = run["records"]
        rows = {int(rec.warp[i]): (int(rec.issue[i]), int(rec.complete[i]), int(rec.stall[i]), int(rec.cause[i]))
                for i in np.nonzero(rec.pc == pc)[0]}
        assert rows == BARRIER_ROWS
        assert rec.cause_pc[(rec.pc == pc) & (rec.warp == 1)].tolist() == [-1]


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_barrier_block_wait_is_not_scalar_busy_in_the_reports(simple_machine, monkeypatch, engine):
    """The reports count warp 1's wait (cycles 8-163) as a stall, not as scalar work. Scalar
    operations in flight: GLOBAL_ID [0,1) [2,3), IF [3,4) [6,7), ENDIF [7,8) [110,111), the
    two BARRIER_BLOCKs [163,164), EXIT [164,165) [165,166): 9 of 166 cycles (with the wait
    counted as busy it was 163). The scalar gap [111,163) is a barrier bubble."""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    prof = pto.profile(warp1_waits, grid=(1, 1, 1), block=(64, 1, 1), args=_warp1_waits_args())
    assert prof.total_cycles == 166
    waits = [(e.warp, e.start, e.end, e.stall, e.stall_cycles) for e in prof.timeline if e.inst == "BARRIER_BLOCK"]
    assert waits == [(0, 163, 164, "barrier", 52), (1, 163, 164, "barrier_block", 155)]
    assert prof.busy_intervals("scalar") == [(0, 1), (2, 4), (6, 8), (110, 111), (163, 166)]
    assert prof.pipe_utilization()["scalar"] == 9 / 166
    row = prof.cycle_breakdown().as_dict()["BARRIER_BLOCK"]
    assert (row["busy_cycles"], row["stall_cycles"]) == (2, 207)
    assert [r["scalar_cycles"] for r in prof.core_balance()] == [9]
    scalar = prof.bubbles(pipe="scalar")
    assert scalar.idle_cycles == 166 - 9
    assert [(b.start, b.end, b.kind) for b in scalar if b.start == 111] == [(111, 163, "barrier")]
