"""pto.tnotify, pto.twait and pto.ttest: pto-isa's communication signals as A2/A3 builds them
(include/pto/comm/a2a3/TNotify.hpp, TWait.hpp, TTest.hpp at 3186c381; isa/58_comm_signals.toml;
values exec/comm_signals.py, timing timing/aicore_signals.py). The "ranks" are the AI cores and units
of one launch. Values in both modes, the cycles from the machine table's rows, every comparison, a
strided region, the whole-line write-back of a Set, racecheck's order through a notify, the deadlock
of a wait nothing releases, and the errors.

ascend910b's rows: d = DCCI 1, s = SLD_GM 2, st = SST_GM 1, L = LOAD 307, W = STORE 153,
A = ATOM_ADD 307, b = PIPE_BARRIER 1 and k = 1 (TNOTIFY / TWAIT / TTEST): one element read of a
wait is e = d + s + L = 310 cycles, its value sampled d = 1 cycle in."""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error_at, host_copy
from engine_compare import simulate_engine
from pypto_sim.runtime.device import DEFAULT_BLOCK, current_device
from pypto_sim.runtime.launch import simulation_for

E = 1 + 2 + 307                 # one element read: dcci, SLD_GM's issue, the line's GM round trip


def names_of(prof):
    return np.array(prof.pc_name)[prof.records.pc]


def one(prof, name, block=None):
    """(issue, complete, stall) of the only record of instruction name (in block)."""
    rec = prof.records
    rows = np.flatnonzero((names_of(prof) == name) & ((rec.block == block) if block is not None else True))
    assert len(rows) == 1, (name, rows)
    i = rows[0]
    return int(rec.issue[i]), int(rec.complete[i]), int(rec.stall[i])


def both_modes(kernel, grid, make, read, check=None):
    """read(args) after a launch of kernel in timing mode (with check) and in functional mode; the
    two must agree. Returns the timing run's."""
    got = []
    for mode in ("timing", "functional"):
        args = make()
        pto.launch(kernel, grid=grid, args=args, mode=mode, check=check if mode == "timing" else None)
        pto.sync()
        got.append(read(args))
    np.testing.assert_array_equal(got[0], got[1])
    return got[0]


# ---------------------------------------------------------------- TNOTIFY
@pto.kernel(sync="manual")
def notifies(sig):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            pto.tnotify(sig, 7)
            pto.tnotify(sig + 16, 5, op="atomic_add")
            pto.tnotify(sig + 32, 1, op="ATOMIC_ADD")


def test_tnotify_set_stores_and_atomic_add_adds_with_int32_wrapping():
    """NotifyOp::Set writes 7 over 3; AtomicAdd adds 5 to 10 and 1 to INT32_MAX, which wraps to
    INT32_MIN (st_atomic's ATOMIC_S32 sum); the names are case-insensitive."""
    start = np.zeros(48, np.int32)
    start[[0, 16, 32]] = 3, 10, 2 ** 31 - 1
    got = both_modes(notifies, (1,), lambda: (pto.to_device(start),), lambda a: host_copy(a[0], 48, np.int32))
    want = start.copy()
    want[[0, 16, 32]] = 7, 15, -2 ** 31
    np.testing.assert_array_equal(got, want)


def test_a_set_costs_its_fill_and_write_back_and_an_atomic_add_its_round_trip():
    """TNotify.hpp Set from issue t: dcci (d), the store's line fill (st + L), the second dcci (d) and
    its write-back (W), dsb (k): 1 + 1 + 307 + 1 + 153 + 1 = 464 cycles. AtomicAdd: set_st_atomic_cfg
    (k), dcci (d), st_atomic landing A later, dsb (k): 1 + 1 + 307 + 1 = 310. Each is followed by the
    header's pipe_barrier(PIPE_ALL), issued when the notify completes (the unit's pipes are empty)."""
    prof = pto.profile(notifies, grid=(1,), args=(pto.to_device(np.zeros(48, np.int32)),))
    rec, names = prof.records, names_of(prof)
    notify = np.flatnonzero(names == "TNOTIFY")
    assert (rec.complete[notify] - rec.issue[notify]).tolist() == [464, 310, 310]
    barriers = np.flatnonzero(names == "PIPE_BARRIER")
    assert rec.issue[barriers].tolist() == rec.complete[notify].tolist()


# ---------------------------------------------------------------- TWAIT released by another core
@pto.kernel(sync="manual")
def handover(sig, data, out, delay):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            if pto.get_block_id() == 0:              # the consumer
                pto.twait(sig, 42)
                got = pto.alloc_tile(1, 8, pto.int32)
                pto.tload(got, data)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
                pto.tstore(out, got)
            else:                                    # the producer, on another AI core
                t = pto.alloc_tile(1, 8, pto.int32)
                pto.texpands(t, 9)
                pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.tstore(data, t)
                acc = 0
                for i in range(delay):
                    acc = acc + 1
                pto.pipe_barrier(pto.PIPE_ALL)
                pto.tnotify(sig, 42 + acc - delay)


def handover_args(delay=0):
    return (pto.to_device(np.zeros(16, np.int32)), pto.to_device(np.zeros(8, np.int32)),
            pto.to_device(np.zeros(8, np.int32)), delay)


def release(t0, land, barrier_every=64, b=1):
    """The cycle a TWAIT of one element starting at t0 goes on when the notify lands at `land`:
    pass j starts at t0 + E j + b floor(j / 64) (a pipe_barrier after every 64th failed pass, the
    unit's pipes empty) and reads at its start + d; the first pass reading at or after the landing
    returns E later."""
    j = 0
    while t0 + E * j + b * (j // barrier_every) + 1 < land:
        j += 1
    return t0 + E * j + b * (j // barrier_every) + E


@pytest.mark.parametrize("delay", [0, 40])
def test_a_twait_goes_on_at_the_first_read_after_another_cores_notify_lands(delay):
    """Block 1 stores 9s into data, drains its pipes and notifies 42 (a Set issued at N lands at N + d
    + st + L = N + 309); block 0's TWAIT, ready at t0 (its issue less its stall), reads sig[0] at t0 + 1,
    t0 + 1 + E, ... and goes on when the first read at or after the landing returns: release(t0, N + 309),
    < 64 passes here. It then loads the 9s (racecheck: ordered after the store by the notify it read)."""
    prof = pto.profile(handover, grid=(2,), args=handover_args(delay), check=("race",))
    n, _, _ = one(prof, "TNOTIFY")
    issue, _, stall = one(prof, "TWAIT")
    assert issue == release(issue - stall, n + 1 + 1 + 307)
    assert issue - stall < n + 309 < issue                    # it did wait for the notify


def test_the_bubbles_name_the_wait():
    """prof.bubbles(): while block 0's AIV0 polls, its MTE2 pipe idles for the TWAIT's whole wait (its
    record's stall, from t0 to the release), attributed to the TWAIT's reads of its signal."""
    prof = pto.profile(handover, grid=(2,), args=handover_args(40))
    _, _, stall = one(prof, "TWAIT")
    rows = [r for r in prof.bubbles(unit="AIV0", core=0).by_cause() if r[0] == "AIV0 MTE2"]
    waits = [r for r in rows if r[1].startswith("pto.twait at line")]
    assert len(waits) == 1 and waits[0][2] == "scalar" and waits[0][3] == stall
    assert "reading its GM signals (a dcci and a GM round trip each) until a pass saw them satisfied" in waits[0][1]


def test_the_handed_over_data_are_the_same_in_both_modes():
    got = both_modes(handover, (2,), lambda: handover_args(25), lambda a: host_copy(a[2], 8, np.int32),
                     check=("race", "sync"))
    np.testing.assert_array_equal(got, np.full(8, 9))


def test_every_64th_failed_pass_adds_a_pipe_barrier():
    """TWait.hpp: `if ((++spin % kFenceInterval) == 0) pipe_barrier(PIPE_ALL)`: a wait of more than 64
    passes is b = 1 cycle later per 64 failed passes than E per pass (the unit's pipes are empty)."""
    prof = pto.profile(handover, grid=(2,), args=handover_args(3000))
    n, _, _ = one(prof, "TNOTIFY")
    issue, _, stall = one(prof, "TWAIT")
    t0 = issue - stall
    assert (n + 309 - t0) // E > 64
    assert issue == release(t0, n + 309)
    assert issue != release(t0, n + 309, b=0)


# ---------------------------------------------------------------- TTEST, every cmp, a strided region
@pto.kernel(sync="manual")
def region_tests(sig, out):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            out[0] = pto.ttest(sig + 1, 1, rows=2, cols=3, stride=4)
            out[1] = pto.ttest(sig + 1, 1, cmp="ne", rows=2, cols=3, stride=4)
            out[2] = pto.ttest(sig + 1, 1, rows=2, cols=4, stride=4)


REGION = np.array([0, 1, 1, 1, 9, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0], np.int32)


def test_ttest_answers_for_its_strided_region_only():
    """The 2 x 3 region at sig[1], rows 4 apart, is sig[1..3] and sig[5..7], all 1: eq 1 answers 1
    (sig[0] = 0 and sig[4] = 9 lie outside it), ne 1 answers 0; 4 columns take in sig[4] = 9: 0."""
    got = both_modes(region_tests, (1,), lambda: (pto.to_device(REGION), pto.to_device(np.zeros(4, np.int32))),
                     lambda a: host_copy(a[1], 4, np.int32))
    np.testing.assert_array_equal(got[:3], [1, 0, 0])


def test_ttest_reads_up_to_the_first_failing_element():
    """TTest.hpp returns false at the first element that fails: the first TTEST reads all 6 elements
    (6 E from its start), the second fails at the first (E), the third at the 4th of row 0 (4 E); each
    then issues (k = 1) and its SST_GM follows."""
    prof = pto.profile(region_tests, grid=(1,), args=(pto.to_device(REGION), pto.to_device(np.zeros(4, np.int32))))
    rec = prof.records
    rows = np.flatnonzero(names_of(prof) == "TTEST")
    assert rec.stall[rows].tolist() == [6 * E, E, 4 * E]


CMPS = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
        "le": np.less_equal}


@pytest.mark.parametrize("cmp", sorted(CMPS))
def test_every_cmp_compares_the_signal_with_the_value(make_kernels, cmp):
    """WaitCmp's six comparisons, signal <cmp> value, for a signal of 4 against 3, 4 and 5 (and -7
    against INT32_MIN): TTEST's answers, and a TWAIT that passes exactly when they are 1."""
    mod = make_kernels(f'''
@pto.kernel(sync="manual")
def k(sig, out):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            out[0] = pto.ttest(sig, 3, cmp="{cmp}")
            out[1] = pto.ttest(sig, 4, cmp="{cmp}")
            out[2] = pto.ttest(sig, 5, cmp="{cmp}")
            out[3] = pto.ttest(sig + 1, -2147483648, cmp="{cmp}")
''')
    got = both_modes(mod.k, (1,), lambda: (pto.to_device(np.array([4, -7], np.int32)),
                                           pto.to_device(np.zeros(4, np.int32))),
                     lambda a: host_copy(a[1], 4, np.int32))
    want = CMPS[cmp](np.array([4, 4, 4, -7]), np.array([3, 4, 5, -2 ** 31])).astype(np.int32)
    np.testing.assert_array_equal(got, want)


@pto.kernel(sync="manual")
def region_wait(sig, out):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            if pto.get_block_id() == 0:
                pto.twait(sig + 9, 1, rows=2, cols=3, stride=8)
                out[0] = pto.ttest(sig + 9, 1, rows=2, cols=3, stride=8)
                out[1] = pto.ttest(sig + 8, 1, rows=2, cols=4, stride=8)
            else:
                for r in range(2):
                    for c in range(3):
                        pto.tnotify(sig + 9 + r * 8 + c, 1)


def release_region(t0, landings, b=1):
    """The rule for a region: a pass starting at x reads its j-th element at x + E j + 1, which passes
    when that element's notify has landed by then; a failing read ends the pass (a pipe_barrier, b,
    after every 64th); the pass that passes all of them returns E after its last read's start."""
    x, j, fails = t0, 0, 0
    while True:
        passed = x + 1 >= landings[j]
        x += E
        j = j + 1 if passed else 0
        if j == len(landings):
            return x
        if not passed:
            fails += 1
            x += b if fails % 64 == 0 else 0


def test_a_twait_of_a_strided_region_waits_for_each_of_its_elements():
    """Signal2D<2, 3>(sig + 9, 8): block 1 sets the six elements one after the other (a Set issued at
    N lands at N + 309); block 0's TWAIT, ready at t0, goes on at release_region(t0, landings): its
    passes get further as the elements land. The region's neighbours (sig[8], sig[12], sig[16]) stay
    0, and a TTEST that takes in sig[8] answers 0."""
    def make():
        return pto.to_device(np.zeros(32, np.int32)), pto.to_device(np.zeros(2, np.int32))
    got = both_modes(region_wait, (2,), make, lambda a: np.concatenate([host_copy(a[1], 2, np.int32),
                                                                       host_copy(a[0], 32, np.int32)]))
    np.testing.assert_array_equal(got[:2], [1, 0])
    sig = got[2:]
    assert sig[[9, 10, 11, 17, 18, 19]].tolist() == [1] * 6 and sig.sum() == 6
    prof = pto.profile(region_wait, grid=(2,), args=make())
    rec, names = prof.records, names_of(prof)
    landings = (rec.issue[names == "TNOTIFY"] + 1 + 1 + 307).tolist()
    issue, _, stall = one(prof, "TWAIT")
    assert issue == release_region(issue - stall, landings)
    assert issue - stall < landings[0]


# ---------------------------------------------------------------- many notifiers, racecheck
def adders(barrier=True):
    @pto.kernel(sync="manual")
    def adds(sig, data, out, n):
        with pto.vector():
            b = pto.get_block_id()
            if b == 0:
                if pto.get_subblock_id() == 0:
                    pto.twait(sig, 2 * (pto.get_grid_dim() - 1) * n, cmp="ge")
                    got = pto.alloc_tile(1, 8, pto.int32)
                    pto.tload(got, data)
                    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
                    pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
                    pto.tstore(out, got)
            else:
                if b == 1 and pto.get_subblock_id() == 1:
                    t = pto.alloc_tile(1, 8, pto.int32)
                    pto.texpands(t, 7)
                    pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                    pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                    pto.tstore(data, t)
                    if barrier:
                        pto.pipe_barrier(pto.PIPE_ALL)
                for i in range(n):
                    pto.tnotify(sig, 1, op="atomic_add")
    return adds


def adder_args(n=5):
    return (pto.to_device(np.zeros(16, np.int32)), pto.to_device(np.zeros(8, np.int32)),
            pto.to_device(np.zeros(8, np.int32)), n)


def test_a_ge_wait_counts_the_atomic_adds_of_every_core_and_orders_after_all_of_them():
    """Both AIVs of blocks 1..3 add 1 five times; block 0 waits for the count >= 30 and then reads what
    block 1's AIV1 stored before its adds. Racecheck: the waiter read the value of the adds' release
    sequence, so it is ordered after every add and what each add's unit had done before it."""
    got = both_modes(adders(), (4,), adder_args, lambda a: np.concatenate([host_copy(a[2], 8, np.int32),
                                                                           host_copy(a[0], 16, np.int32)[:1]]),
                     check=("race", "sync"))
    np.testing.assert_array_equal(got, [7] * 8 + [30])


def test_racecheck_reports_a_store_the_notify_does_not_order():
    """Without the pipe_barrier(PIPE_ALL) the TSTORE on MTE3 is not ordered before the scalar unit's
    notify (TNotify.hpp's own pipe_barrier comes after its store): with one add a unit, block 0's TLOAD
    races with it. (With five, the later adds follow the first one's pipe_barrier and order it.)"""
    with pytest.raises(pto.RaceError, match=r"read-after-write race on GM tensor 'data' between AI cores: TLOAD at "
                                            r"line \d+ \(block 0 AIV0 PIPE_MTE2\) and TSTORE .*read no signal value "
                                            r"of a pto.tnotify ordered after the first"):
        pto.profile(adders(barrier=False), grid=(4,), args=adder_args(1), check=("race",))
    pto.profile(adders(barrier=False), grid=(4,), args=adder_args(5), check=("race",))


@pto.kernel(sync="manual")
def same_core(sig, data, out):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            pto.twait(sig, 1)
            got = pto.alloc_tile(1, 8, pto.int32)
            pto.tload(got, data)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(out, got)
        else:
            t = pto.alloc_tile(1, 8, pto.int32)
            pto.texpands(t, 5)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(data, t)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)
            pto.tnotify(sig, 1)


def test_a_notify_orders_the_units_of_one_core_as_a_cross_core_flag_would():
    """AIV1 stores, waits for MTE3 on PIPE_S and notifies; AIV0 waits and loads: ordered (racecheck
    joins AIV1's clocks at the notify into AIV0's, as a cross_core_set_flag / wait pair does)."""
    got = both_modes(same_core, (1,), lambda: tuple(pto.to_device(np.zeros(n, np.int32)) for n in (16, 8, 8)),
                     lambda a: host_copy(a[2], 8, np.int32), check=("race", "sync"))
    np.testing.assert_array_equal(got, np.full(8, 5))


@pto.kernel(sync="manual")
def neighbours(sig, apart):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            pto.tnotify(sig + pto.get_block_id() * apart, 1)


@pytest.mark.parametrize("apart", [1, 16])
def test_a_set_writes_its_whole_line_back(apart):
    """A Set's store fills the signal's 64-byte line at its issue and its dcci writes the line back,
    whole, 309 cycles later (isa/data_cache.py, WriteGmByPassDCache): two cores setting neighbours in
    one line at the same cycle each write back the other's old 0, so one notify is lost (racecheck
    reports the write-back); 16 int32 apart, in lines of their own, both land. Functional mode runs
    each notify at once and loses nothing."""
    sig = pto.to_device(np.zeros(32, np.int32))
    pto.launch(neighbours, grid=(2,), args=(sig, apart))
    pto.sync()
    got = host_copy(sig, 32, np.int32)[[0, apart]]
    assert sorted(got.tolist()) == ([0, 1] if apart == 1 else [1, 1])
    if apart == 1:
        with pytest.raises(pto.RaceError, match=r"TNOTIFY at line \d+ \(AIV0 of block \(1, 0, 0\)\) the DataCache "
                                                r"writes back the 64-byte line of sig\[0..15\], whole, over sig\[0\]"):
            pto.profile(neighbours, grid=(2,), args=(pto.to_device(np.zeros(32, np.int32)), 1), check=("race",))


# ---------------------------------------------------------------- polling with TTEST, deadlock
@pto.kernel(sync="manual")
def poll_loop(sig, out):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            if pto.get_block_id() == 0:
                polls = 1
                while pto.ttest(sig, 1) == 0:
                    polls = polls + 1
                out[0] = polls
            else:
                pto.tnotify(sig, 1)


def test_a_ttest_polling_loop_sees_the_notify():
    """TTEST.md's "Polling with Timeout" pattern without the timeout: the loop ends once the notify has
    landed, in both modes (functional mode lets the other units run after a TTEST that answers 0)."""
    for mode in ("timing", "functional"):
        out = pto.to_device(np.zeros(1, np.int32))
        pto.launch(poll_loop, grid=(2,), args=(pto.to_device(np.zeros(16, np.int32)), out), mode=mode)
        pto.sync()
        assert host_copy(out, 1, np.int32)[0] >= 1


@pto.kernel(sync="manual")
def wrong_element(sig):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            if pto.get_block_id() == 0:
                pto.twait(sig + 3, 1)
            else:
                pto.tnotify(sig + 2, 1)


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_twait_nothing_releases_is_a_deadlock_error(mode):
    """The notify sets sig[2]; the wait reads sig[3]: once the notifier has finished nothing of the launch
    can change sig[3], so instead of spinning (on the device, until TWait.hpp's PTO_ASSERT at 100,000,000
    spins) the launch stops with a DeadlockError naming the kernel, line, block, unit and element."""
    with pytest.raises(pto.DeadlockError, match=r"block \(0, 0, 0\) AIV0 waits at line \d+ \(pto.twait: sig\[3\] == "
                                                r"1\) for sig\[3\], which holds 0, and nothing of the launch will "
                                                r"change it any more") as info:
        pto.launch(wrong_element, grid=(2,), args=(pto.to_device(np.zeros(16, np.int32)),), mode=mode)
        pto.sync()
    assert info.value.kernel == "wrong_element" and info.value.unit == "AIV0"
    assert "check the signal's offset, value and cmp" in info.value.hint


# ---------------------------------------------------------------- errors
@pto.kernel
def float_signal(sig):
    with pto.vector():
        pto.tnotify(sig, 1)


@pto.kernel
def tile_signal(sig):
    with pto.vector():
        t = pto.alloc_tile(1, 8, pto.int32)
        pto.twait(t, 1)


@pto.kernel
def bad_op(sig):
    with pto.vector():
        pto.tnotify(sig, 1, op="add")


@pto.kernel
def bad_cmp(sig):
    with pto.vector():
        ok = pto.ttest(sig, 1, cmp="==")


@pto.kernel
def zero_rows(sig):
    with pto.vector():
        pto.twait(sig, 1, rows=0)


@pto.kernel
def float_value(sig):
    with pto.vector():
        pto.tnotify(sig, 1.5)


@pto.kernel
def lane_kernel(sig):
    pto.tnotify(sig, 1)


def test_bad_input_is_a_compile_error_at_its_line():
    """The headers' static_assert (int32_t signals in GM: a GlobalTensor, not a tile), NotifyOp's and
    WaitCmp's names, a region's positive shape, an int32 value, and AI-core kernels only."""
    i32, f32 = pto.alloc_tensor(64, pto.int32), pto.alloc_tensor(64, pto.float32)
    compile_error_at(float_signal, (f32,), "pto.tnotify: 'sig' holds float32, but the signal type must be int32_t",
                     "pto.tnotify(sig, 1)")
    compile_error_at(tile_signal, (i32,), "pto.twait: 't' is a Vec tile, but a signal is an int32 in GM",
                     "pto.twait(t, 1)")
    compile_error_at(bad_op, (i32,), "pto.tnotify: op must be one of 'atomic_add', 'set' (pto-isa's NotifyOp "
                                     "AtomicAdd, Set), known when the kernel compiles; got 'add'",
                     'pto.tnotify(sig, 1, op="add")')
    compile_error_at(bad_cmp, (i32,), "pto.ttest: cmp must be one of 'eq', 'ne', 'gt', 'ge', 'lt', 'le'",
                     'ok = pto.ttest(sig, 1, cmp="==")')
    compile_error_at(zero_rows, (i32,), "pto.twait: rows is 0, but the region's rows must be at least 1",
                     "pto.twait(sig, 1, rows=0)")
    compile_error_at(float_value, (i32,), "pto.tnotify: value: the float constant 1.5 cannot be used as int32",
                     "pto.tnotify(sig, 1.5)")
    compile_error_at(lane_kernel, (i32,), "pto.tnotify is the AI core's scalar unit on a GM signal",
                     "pto.tnotify(sig, 1)")


@pto.kernel
def run_time_shape(sig, rows, cols):
    with pto.vector():
        pto.twait(sig, 0, rows=rows, cols=cols)


def test_a_run_time_region_is_checked_when_it_runs():
    """rows x cols known only at run time: 0 rows is a LaunchError; a region past the tensor's end an
    OutOfBoundsError naming the element (16 x 2 from sig[0] reaches sig[31] of 16)."""
    with pytest.raises(pto.LaunchError, match=r"the signal region is 0 x 4 with stride 4"):
        pto.profile(run_time_shape, grid=(1,), args=(pto.to_device(np.zeros(16, np.int32)), 0, 4))
    with pytest.raises(pto.OutOfBoundsError, match=r"TWAIT out of bounds .* its signal sig\[16\] lies outside "
                                                   r"tensor 'sig' of 16 elements"):
        pto.profile(run_time_shape, grid=(1,), args=(pto.to_device(np.zeros(16, np.int32)), 16, 2))


@pto.kernel
def wait_unwritten(sig):
    with pto.vector():
        pto.twait(sig, 0)


@pto.kernel
def add_unwritten(sig):
    with pto.vector():
        pto.tnotify(sig, 1, op="atomic_add")


def test_initcheck_reports_a_signal_never_written():
    """A wait reads, and an atomic add adds to, what GM held before anything wrote it."""
    with pytest.raises(pto.UninitializedReadError, match=r"TWAIT at line \d+ on AIV\d of block \(0, 0, 0\) reads the "
                                                         r"signal sig\[0\], which was never written"):
        pto.profile(wait_unwritten, grid=(1,), args=(pto.alloc_tensor(64, pto.int32),), check=("initcheck",))
    with pytest.raises(pto.UninitializedReadError, match=r"TNOTIFY .* \(atomic_add\) adds to the signal sig\[0\]"):
        pto.profile(add_unwritten, grid=(1,), args=(pto.alloc_tensor(64, pto.int32),), check=("initcheck",))


def test_values_off_refuses_a_wait_on_what_a_tile_store_writes():
    """values=False skips what TSTORE writes: a TWAIT of that tensor would wait for values that never
    come (runtime/skip_values.py)."""
    @pto.kernel(sync="manual")
    def stored(sig):
        with pto.vector():
            t = pto.alloc_tile(1, 8, pto.int32)
            pto.texpands(t, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tstore(sig, t)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.twait(sig, 1)
    with pytest.raises(pto.LaunchError, match=r"values=False skips tile values, but TWAIT at line \d+"):
        pto.profile(stored, grid=(1,), args=(pto.to_device(np.zeros(8, np.int32)),), values=False)


def test_the_compiled_loop_hands_the_signals_to_simpy_and_says_why():
    """The compiled event loop does not read GM values, which decide when a TWAIT goes on: forced onto
    it, the launch is refused with the reason; by default SimPy runs it."""
    dev = current_device()
    handle = dev.launch(handover, (2, 1, 1), DEFAULT_BLOCK, handover_args())
    sim = simulation_for(dev.queue.pop(), dev.hbm.data.copy(), dev.hbm.init.copy(), engine="fast")
    with pytest.raises(pto.LaunchError, match=r"TWAIT: the communication signals' GM values decide when a TWAIT "
                                              r"goes on .* the SimPy model runs it"):
        sim.run()
    del handle
    slow = simulate_engine(handover, handover_args(), (2, 1, 1), DEFAULT_BLOCK, "simpy")
    assert slow["error"] is None and slow["cycles"] > 0
