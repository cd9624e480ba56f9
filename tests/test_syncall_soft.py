"""pto.syncall(core_type, workspace=ws, used_cores=n): pto-isa's soft SYNCALL
(SYNCALL<SyncAllMode::Soft>, include/pto/common/syncall_soft.hpp at 3186c381; isa/syncall_modes.py
soft_target / soft_release): an int32 counter in GM that each participant reads (ld_dev), adds 1
to (st_atomic) and polls (ld_dev) until it reaches (what it read / n + 1) x n. Values in both
modes, the counter, the release cycle from the rule and the machine's LOAD / ATOM_ADD latencies,
a subset of the cores, racecheck, initcheck and the errors."""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error_at

LINE = 8


def exchange_kernel(lines, rounds=1, only_aiv0=False):
    """Each participating AIV (every AIV, or AIV0 of each core) writes round r's value
    (idx + 1) x (r + 1) into its line of flags, meets the others at the soft barrier (used_cores =
    the kernel's `used` argument), reads the first `lines` lines into its row of out, and meets
    them again before the next round overwrites the lines."""

    @pto.kernel(sync="manual")
    def exchange(out, flags, ws, used):
        with pto.vector():
            sub = pto.get_subblock_id()
            idx = pto.get_block_id() * (1 if only_aiv0 else 2) + sub
            if not only_aiv0 or sub == 0:
                line = pto.alloc_tile(1, LINE, pto.int32)
                seen = pto.alloc_tile(1, lines * LINE, pto.int32)
                for r in range(rounds):
                    pto.texpands(line, (idx + 1) * (r + 1))
                    pto.pipe_barrier(pto.PIPE_ALL)
                    pto.tstore(flags + idx * LINE, line)
                    pto.syncall("aiv", workspace=ws, used_cores=used)
                    pto.tload(seen, flags)
                    pto.pipe_barrier(pto.PIPE_ALL)
                    pto.tstore(out + (r * 2 * pto.get_grid_dim() + idx) * lines * LINE, seen)
                    pto.syncall("aiv", workspace=ws, used_cores=used)
    return exchange


def run(kernel, blocks, lines, rounds=1, used=0, start=0, mode="timing", check=("race", "sync")):
    out = pto.to_device(np.zeros(rounds * 2 * blocks * lines * LINE, np.int32))
    flags = pto.to_device(np.zeros(lines * LINE, np.int32))
    ws = pto.to_device(np.full(LINE, start, np.int32))
    args = (out, flags, ws, used)
    if mode == "functional":
        pto.launch(kernel, grid=(blocks,), args=args, mode="functional")
        pto.sync()
        prof = None
    else:
        prof = pto.profile(kernel, grid=(blocks,), args=args, check=check)
    got = np.empty((rounds, 2 * blocks, lines, LINE), np.int32)
    pto.memcpy_d2h(got, out)
    counter = np.empty(LINE, np.int32)
    pto.memcpy_d2h(counter, ws)
    return got[..., 0], int(counter[0]), prof


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_every_aiv_sees_every_line_and_the_counter_counts_the_arrivals(mode):
    """3 cores, 6 AIVs, 2 rounds of two barriers each: every AIV reads (i + 1) x (r + 1) in line i in
    round r, under racecheck and synccheck; the counter, never reset, holds 4 barriers x 6 = 24."""
    got, counter, _ = run(exchange_kernel(6, rounds=2), 3, 6, rounds=2, mode=mode)
    for r in range(2):
        np.testing.assert_array_equal(got[r], np.tile(np.arange(1, 7) * (r + 1), (6, 1)))
    assert counter == 24


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_subset_of_the_units_meets_with_used_cores(mode):
    """Only AIV0 of each of 4 cores calls it, with used_cores = 4 (docs/isa/SYNCALL.md: "may be
    smaller than the launched core count ... cores that do not participate must not call it")."""
    got, counter, _ = run(exchange_kernel(4, only_aiv0=True), 4, 4, used=4, mode=mode)
    np.testing.assert_array_equal(got[0][:4], np.tile(np.arange(1, 5), (4, 1)))
    assert counter == 8


def test_a_counter_left_at_a_multiple_of_the_count_still_works():
    """The counter is never reset, so a second launch on the same workspace starts where the first
    left it: 12 = 2 x 6 reads as round 2 and the targets are 18 and 24."""
    got, counter, _ = run(exchange_kernel(6), 3, 6, start=12)
    np.testing.assert_array_equal(got[0], np.tile(np.arange(1, 7), (6, 1)))
    assert counter == 24


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_count_larger_than_the_arrivals_never_lets_them_go(mode):
    """used_cores = 7 with 6 AIVs calling it: the counter stops at 6 and every unit waits for the 7th
    add forever (on the device, until its 1,000,000th poll, SYNCALL_SOFT_MAX_POLL_ITERATIONS, when it
    goes on unsynchronised): a DeadlockError naming the polling units."""
    with pytest.raises(pto.DeadlockError, match=r"polls at line \d+ \(pto.syncall\('aiv', workspace=ws\[0\]\)\) for "
                                                r"a count the counter never reaches"):
        run(exchange_kernel(6), 3, 6, used=7, mode=mode, check=())


def slow_arrival_kernel():
    """Both AIVs of one core call the soft barrier first thing, but AIV1 loads 64 KiB before it."""

    @pto.kernel(sync="manual")
    def slow(ws, big):
        with pto.vector():
            load = pto.alloc_tile(128, 128, pto.float32)
            if pto.get_subblock_id() == 1:
                pto.tload(load, big)
            pto.syncall("aiv", workspace=ws)
    return slow


def test_each_unit_goes_on_when_its_first_poll_after_the_last_add_returns():
    """syncall_soft.hpp with L = LOAD's latency, A = ATOM_ADD's (307 each on ascend910b): a unit that
    arrives at cycle a (its pipes drained) reads the counter then, its add lands at a + L + A, and
    its polls issue from then on every L cycles. AIV1 arrives last, at its TLOAD's completion C, so
    the counter reaches 2 at C + L + A, when AIV1's own first poll issues: it goes on at C + 2L + A.
    AIV0 arrived at a0 and polls from p0 = a0 + L + A: it goes on when its first poll at or after
    C + L + A returns, p0 + (ceil((C + L + A - p0) / L) + 1) x L."""
    ws = pto.to_device(np.zeros(LINE, np.int32))
    big = pto.to_device(np.zeros(128 * 128, np.float32))
    prof = pto.profile(slow_arrival_kernel(), grid=(1,), args=(ws, big))
    rec, names = prof.records, np.array(prof.pc_name)
    load, atomic = prof.machine.latency("LOAD"), prof.machine.latency("ATOM_ADD")
    assert (load, atomic) == (307, 307)
    (c,) = rec.complete[names[rec.pc] == "TLOAD"]
    soft = names[rec.pc] == "SYNCALL_SOFT"
    release = dict(zip(rec.warp[soft].tolist(), rec.issue[soft].tolist()))
    assert release[2] == c + 2 * load + atomic
    stall = dict(zip(rec.warp[soft].tolist(), rec.stall[soft].tolist()))
    a0 = release[1] - stall[1]          # when AIV0 reached the barrier (no pipe of its had work)
    p0 = a0 + load + atomic
    k = -(-(c + load + atomic - p0) // load)
    assert release[1] == p0 + (k + 1) * load


def test_a_workspace_never_written_is_an_initcheck_error():
    """syncall_soft.hpp: the workspace "must be zeroed before first use"; initcheck reports the
    barrier's read of a counter nothing wrote."""
    ws = pto.alloc_tensor(4 * LINE, pto.int32)
    big = pto.to_device(np.zeros(128 * 128, np.float32))
    with pytest.raises(pto.UninitializedReadError, match=r"pto.syncall at line \d+ .* reads its counter ws\[0\]"):
        pto.profile(slow_arrival_kernel(), grid=(1,), args=(ws, big), check=("initcheck",))


@pto.kernel
def float_workspace(ws):
    with pto.vector():
        pto.syncall(workspace=ws)


@pto.kernel
def used_without_workspace(n):
    with pto.vector():
        pto.syncall(used_cores=n)


def test_misuse_is_an_error():
    """The counter is an int32 in GM; used_cores belongs to soft mode (the hard overload has none);
    a count that is not positive would divide by zero."""
    compile_error_at(float_workspace, (pto.alloc_tensor(64, pto.float32),),
                     "workspace must point into an int32 device tensor", "pto.syncall(workspace=ws)")
    compile_error_at(used_without_workspace, (3,), "used_cores= is soft mode's", "pto.syncall(used_cores=n)")
    with pytest.raises(pto.LaunchError, match="used_cores is -1, but the soft barrier needs a positive count"):
        run(exchange_kernel(2), 1, 2, used=-1, check=())


def test_the_compiled_loop_leaves_it_to_simpy_and_says_why(monkeypatch):
    """The release depends on the counter's value in GM, which the compiled loop does not read:
    PYPTO_TIMING_ENGINE=fast refuses the launch naming the reason; auto runs it under SimPy."""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", "fast")
    with pytest.raises(pto.LaunchError, match="SYNCALL_SOFT's release depends on the GM counter's value"):
        run(exchange_kernel(2), 1, 2, check=())
