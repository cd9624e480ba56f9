"""pto.syncall against kernels that order GM through more than the barrier itself (pto-isa
include/pto/npu/a2a3/SyncAll.hpp at 3186c381, isa/syncall_modes.py): racecheck follows a
cross-core flag into and out of a round (a unit that does not take part, ordered by one that
does), keeps every unit's access apart (not only the last of its core), and a 'mix' barrier
without cube or vector code is the hang it is on the device."""
import numpy as np
import pytest

import pypto_sim as pto

LINE = 8                 # int32 elements per 32-byte line


@pto.kernel(sync="manual")
def aic_signals_then_aivs_sync(out, flags):
    """Each AIC writes 100 + block into its line and signals its AIVs (cross_core_set_flag after
    the store, every pipe); the AIVs take the signal, then pto.syncall('aiv'), then read both
    lines. The AIC takes no part in the barrier, but its store is ordered before its AIVs'
    arrival, and so before every AIV's read."""
    with pto.cube():
        mine = pto.alloc_tile(16, 16, pto.int32, loc=pto.Mat, valid=(1, LINE))
        pto.texpands(mine, 100 + pto.get_block_id())
        pto.pipe_barrier(pto.PIPE_ALL)
        pto.tstore(flags + pto.get_block_id() * LINE, mine)
        pto.cross_core_set_flag(1)
    with pto.vector():
        pto.cross_core_wait_flag(1)
        pto.syncall()
        seen = pto.alloc_tile(1, 2 * LINE, pto.int32)
        pto.tload(seen, flags)
        pto.pipe_barrier(pto.PIPE_ALL)
        pto.tstore(out + (pto.get_block_id() * 2 + pto.get_subblock_id()) * 2 * LINE, seen)


@pto.kernel(sync="manual")
def aivs_sync_then_signal_aic(out, flags):
    """Each AIV writes its index + 1 into its line, pto.syncall('aiv'), then signals its AIC; the
    AIC takes both AIVs' signals and reads all four lines: every AIV's store is before the round,
    and the AIC learns the round completed from its own AIVs."""
    with pto.cube():
        pto.cross_core_wait_flag(2)
        seen = pto.alloc_tile(16, 32, pto.int32, loc=pto.Mat, valid=(1, 4 * LINE))
        pto.tload(seen, flags)
        pto.pipe_barrier(pto.PIPE_ALL)
        pto.tstore(out + pto.get_block_id() * 4 * LINE, seen)
    with pto.vector():
        idx = pto.get_block_id() * 2 + pto.get_subblock_id()
        line = pto.alloc_tile(1, LINE, pto.int32)
        pto.texpands(line, idx + 1)
        pto.pipe_barrier(pto.PIPE_ALL)
        pto.tstore(flags + idx * LINE, line)
        pto.syncall()
        pto.cross_core_set_flag(2)


def test_a_flag_into_the_round_orders_the_aics_store_before_the_other_cores_reads():
    """Racecheck (and synccheck) clean, and every AIV reads both AICs' lines."""
    out, flags = (pto.to_device(np.zeros(n, np.int32)) for n in (8 * LINE, 2 * LINE))
    pto.profile(aic_signals_then_aivs_sync, grid=(2,), args=(out, flags), check=("race", "sync"))
    got = np.empty((4, 2, LINE), np.int32)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got[:, :, 0], np.tile([100, 101], (4, 1)))


def test_a_flag_out_of_the_round_orders_the_other_cores_stores_before_the_aics_read():
    """Racecheck (and synccheck) clean, and each AIC reads all four AIVs' lines."""
    out, flags = (pto.to_device(np.zeros(n, np.int32)) for n in (8 * LINE, 4 * LINE))
    pto.profile(aivs_sync_then_signal_aic, grid=(2,), args=(out, flags), check=("race", "sync"))
    got = np.empty((2, 4, LINE), np.int32)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got[:, :, 0], np.tile([1, 2, 3, 4], (2, 1)))


@pto.kernel(sync="manual")
def aic_read_then_aiv_read(out, x):
    """Block 0's AIC reads x (nothing orders it: it takes no part in pto.syncall('aiv') and
    signals nobody); block 0's AIV0 reads x after one round; block 1's AIV0 overwrites x after
    a second. The AIV0 read is ordered before the overwrite, the AIC's is not."""
    with pto.cube():
        if pto.get_block_id() == 0:
            mine = pto.alloc_tile(16, 16, pto.int32, loc=pto.Mat, valid=(1, LINE))
            pto.tload(mine, x)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tstore(out, mine)
    with pto.vector():
        idx = pto.get_block_id() * 2 + pto.get_subblock_id()
        line = pto.alloc_tile(1, LINE, pto.int32)
        pto.syncall()
        if idx == 0:
            pto.tload(line, x)
        pto.syncall()
        if idx == 2:
            pto.texpands(line, 5)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tstore(x, line)


def test_a_later_ordered_read_of_the_same_core_does_not_hide_an_unordered_one():
    """Racecheck reports block 1 AIV0's TSTORE against block 0 AIC's TLOAD."""
    out, x = (pto.to_device(np.zeros(LINE, np.int32)) for _ in range(2))
    with pytest.raises(pto.RaceError, match=r"write-after-read race on GM tensor 'x' between AI cores: .* \(block 1 "
                                            r"AIV0 PIPE_MTE3\) and TLOAD at line \d+ \(block 0 AIC PIPE_MTE2\) .* "
                                            r"no pto.syncall that both units take part in lies between them") as info:
        pto.profile(aic_read_then_aiv_read, grid=(2,), args=(out, x), check=("race",))
    assert (info.value.unit, info.value.other_unit, info.value.other_block) == ("AIV0", "AIC", 0)


@pto.kernel(sync="manual")
def mix_in_cube_code_only(out):
    with pto.cube():
        pto.syncall("mix")


@pto.kernel(sync="manual")
def mix_without_sections(out):
    line = pto.alloc_tile(1, LINE, pto.int32)
    pto.syncall("mix")
    pto.tstore(out + pto.get_block_id() * LINE, line)


@pytest.mark.parametrize("mode", ["timing", "functional"])
@pytest.mark.parametrize("kernel, has, waits", [(mix_in_cube_code_only, "cube", "AIVs' signal on flag 12"),
                                                (mix_without_sections, "vector", "AIC's signal on flag 13")])
def test_a_mix_barrier_without_the_other_side_is_a_deadlock(kernel, has, waits, mode):
    """SyncAll.hpp's Mix path: the AIC waits for SYNC_AIV_FLAG (12) from its AIVs, each AIV for
    SYNC_AIC_AIV_FLAG (13) from its AIC. With no vector code (or no cube code: a kernel without
    sections runs on AIV0 only) nobody sends them: refused before anything runs, out untouched."""
    out = pto.to_device(np.full(2 * LINE, 7, np.int32))
    with pytest.raises(pto.DeadlockError, match=rf"calls pto.syncall\('mix'\) at line \d+ but has only {has} code: "
                                                rf"SyncAll.hpp's Mix path waits for the {waits}"):
        pto.launch(kernel, grid=(2,), args=(out,), mode=mode)
        pto.sync()
    got = np.empty(2 * LINE, np.int32)
    pto.memcpy_d2h(got, out)
    assert (got == 7).all()


@pto.kernel(sync="manual")
def slow_aic(out, big):
    """Block 0's AIC loads 64 KiB before pto.syncall('mix'); every other unit arrives at once."""
    with pto.cube():
        load = pto.alloc_tile(128, 128, pto.float32, loc=pto.Mat)
        if pto.get_block_id() == 0:
            pto.tload(load, big)
        pto.syncall("mix")
        line = pto.alloc_tile(16, 16, pto.int32, loc=pto.Mat, valid=(1, LINE))
        pto.tstore(out + pto.get_block_id() * LINE, line)
    with pto.vector():
        pto.syncall("mix")


def test_the_last_arrival_waits_for_its_own_pipes_not_for_the_others():
    """Block 0's AIC arrives last (SyncAll.hpp's pipe_barrier(PIPE_ALL): its TLOAD completes
    first): its wait up to the round's release is its own pipes draining, not the launch's other
    units, and its bubble says so."""
    out = pto.to_device(np.zeros(2 * LINE, np.int32))
    big = pto.to_device(np.zeros(128 * 128, np.float32))
    prof = pto.profile(slow_aic, grid=(2,), args=(out, big))
    rec, names = prof.records, np.array(prof.pc_name)
    (load_done,) = rec.complete[names[rec.pc] == "TLOAD"]
    waits = [b for b in prof.bubbles(unit="AIC", pipe="MTE3", core=0) if b.kind == "syncall"]
    assert len(waits) == 1
    assert waits[0].text.endswith(f"its own pipes draining (the header's pipe_barrier(PIPE_ALL)); it arrived last, "
                                  f"at cycle {int(load_done)}")
    other = [b for b in prof.bubbles(unit="AIC", pipe="MTE3", core=1) if b.kind == "syncall"]
    assert len(other) == 1 and f"the last to arrive was block 0 AIC at cycle {int(load_done)}" in other[0].text
