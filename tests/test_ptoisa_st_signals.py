"""pto-isa's CPU st suites tnotify, twait and ttest (hw-native-sys/pto-isa tests/cpu/st/testcase/tnotify,
twait, ttest at 3186c381: main.cpp, tnotify_kernel.cpp, twait_kernel.cpp / .h, ttest_kernel.cpp and the
gen_data.py files) on pypto_sim's pto.tnotify / pto.twait / pto.ttest, as A2/A3 builds them
(include/pto/comm/a2a3/TNotify.hpp, TWait.hpp, TTest.hpp). Each case runs in timing mode under
check=("race", "sync") and in functional mode; both must give the C++ test's answer.

The CPU suites run the other "ranks" as std::threads over host memory; here they are the other units of
one launch: a waiter on AIV0 of block 0, notifiers on other AI cores (blocks) or on the other AIV. The
threads' sleeps (100 ms, 50 ms between phases, 100 us between adds) become a scalar loop of DELAY
iterations on the notifier before its notify (a few thousand cycles: more than a pass of the waiter's
loop, so it reads every phase), and the host's final checks become the waiter's own reads after its
wait (its DataCache holds the line its last read filled) or the host's read of GM after the launch.
The std::atomic stores are TNOTIFY Set, fetch_add TNOTIFY AtomicAdd (what pto-isa's comm ISA offers a
remote rank).

Every case is ported; what does not carry over:
- twait: the CPU simulation's own timeout (PTO_CPU_SIM_TWAIT_MAX_SPINS, 100,000 spins, after which its
  TWAIT returns as if satisfied, and its "progress-aware" variant) is the CPU build's (include/pto/cpu/
  comm/TWait.hpp): A2/A3's TWAIT spins until PTO_ASSERT at 100,000,000 spins, and here a wait nothing can
  release is a DeadlockError (tests/test_comm_signals.py). No case relies on it.
- ttest: main.cpp passes WaitCmp at run time (a kernel argument); pto.ttest's cmp is a name known when the
  kernel compiles, so each case compiles its kernel for its cmp. main.cpp launches runTTest twice (the
  true and the false threshold); one launch makes both tests here. runTTest tests `Signal(input)`, the
  first element only, though gen_data.py writes a rows x cols input; the port tests that element as the
  C++ does, and the whole rows x cols region too (TTEST's 5-D traversal of a Signal2D), whose answers
  gen_data.py's thresholds make the same.
- tnotify: gen_data.py draws both cases from one generator (np.random.seed(19), case1 then case2); the
  port draws them in that order, so its values are the files' values.
"""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import host_copy
from ptoisa_st import result_cmp

DELAY = 300                     # the notifier's delay loop (about 7 scalar cycles an iteration)
CHECK = ("race", "sync")


def run_both(kernel, grid, make, read, check=CHECK):
    """read(args) after a launch in timing mode (check) and in functional mode, which must agree."""
    got = []
    for mode in ("timing", "functional"):
        args = make()
        pto.launch(kernel, grid=grid, args=args, mode=mode, check=check if mode == "timing" else None)
        pto.sync()
        got.append(read(args))
    np.testing.assert_array_equal(got[0], got[1])
    return got[0]


def zeros(n):
    return pto.to_device(np.zeros(n, np.int32))


@pto.kernel
def delay_loop(n):
    acc = 0
    for i in range(n):
        acc = acc + 1
    return acc


# ---------------------------------------------------------------- tnotify
def tnotify_data():
    """gen_data.py: np.random.seed(19); per case (case1 "Add", case2 "Set") sharedMemory then signal,
    each randint(1, 100, [1]); golden sharedMemory + signal (Add) or signal (Set)."""
    rng = np.random.RandomState(19)
    out = {}
    for case, op in (("case1", "atomic_add"), ("case2", "set")):
        shared = rng.randint(1, 100, size=[1]).astype(np.int32)
        signal = rng.randint(1, 100, size=[1]).astype(np.int32)
        out[case] = (op, shared, signal, shared + signal if op == "atomic_add" else signal)
    return out


def tnotify_kernel(op):
    """tnotify_kernel.cpp runTNotify: TNOTIFY_IMPL(Signal(src), signal[0], op); out[0] = src[0]."""
    @pto.kernel(sync="manual")
    def run_tnotify(out, src, signal):
        with pto.vector():
            if pto.get_subblock_id() == 0:
                pto.tnotify(src, signal[0], op=op)
                out[0] = src[0]
    return run_tnotify


@pytest.mark.parametrize("case", ["case1", "case2"])
def test_TNOTIFY(case):
    """TNOTIFY.case1 (test_tnotify<1>, NotifyOp::AtomicAdd) and case2 (<2>, Set): the notify of src
    and out[0], read back after it, compared with golden.bin by ResultCmp (eps 0.001)."""
    op, shared, signal, golden = tnotify_data()[case]
    got = run_both(tnotify_kernel(op), (1,),
                   lambda: (zeros(1), pto.to_device(shared), pto.to_device(signal)),
                   lambda a: host_copy(a[0], 1, np.int32))
    assert result_cmp(golden, got, 0.001)
    assert got[0] == (94 + 99 if case == "case1" else 20)     # gen_data.py's seed-19 draws: 94, 99; 41, 20


# ---------------------------------------------------------------- twait
def waiter_and_notifier(body_wait, body_notify):
    """A kernel: AIV0 of block 0 runs body_wait(sig, out), AIV0 of block 1 body_notify(sig, delay)."""
    @pto.kernel(sync="manual")
    def k(sig, out, delay):
        with pto.vector():
            if pto.get_subblock_id() == 0:
                if pto.get_block_id() == 0:
                    body_wait(sig, out)
                else:
                    body_notify(sig, delay)
    return k


@pto.kernel
def basic_wait(sig, out):
    pto.twait(sig, 42, cmp="eq")
    out[0] = sig[0]


@pto.kernel
def basic_notify(sig, delay):
    delay_loop(delay)
    pto.tnotify(sig, 42)


def test_TWait_Basic():
    """RunTWaitBasic: a notifier sets the signal to 42 after a delay; TWAIT(sig, 42, EQ); the signal is
    then 42."""
    kernel = waiter_and_notifier(basic_wait, basic_notify)
    got = run_both(kernel, (2,), lambda: (zeros(16), zeros(1), DELAY), lambda a: host_copy(a[1], 1, np.int32))
    assert got[0] == 42


COMPARE_CASES = {               # RunTWaitCompare's runCase(initial, stored, threshold, cmp, postCheck)
    "GE": (0, 150, 100, "ge", lambda v: v >= 100),
    "NE": (0, 1, 0, "ne", lambda v: v != 0),
    "GT": (0, 51, 50, "gt", lambda v: v > 50),
    "LE": (100, 10, 20, "le", lambda v: v <= 20),
    "LT": (100, 5, 10, "lt", lambda v: v < 10),
}


@pytest.mark.parametrize("name", list(COMPARE_CASES))
def test_TWait_CompareOps(make_kernels, name):
    """RunTWaitCompare, one runCase each: the signal starts at initial, a notifier stores `stored` after
    a delay, TWAIT(sig, threshold, cmp) returns and postCheck holds for the signal it then reads (and
    the wait did wait: initial fails the comparison)."""
    initial, stored, threshold, cmp, post = COMPARE_CASES[name]
    mod = make_kernels(f'''
@pto.kernel
def spin(n):
    acc = 0
    for i in range(n):
        acc = acc + 1
    return acc

@pto.kernel(sync="manual")
def run_case(sig, out, delay):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            if pto.get_block_id() == 0:
                pto.twait(sig, {threshold}, cmp="{cmp}")
                out[0] = sig[0]
            else:
                spin(delay)
                pto.tnotify(sig, {stored})
''')
    assert not post(initial)
    got = run_both(mod.run_case, (2,), lambda: (pto.to_device(np.full(16, initial, np.int32)), zeros(1), DELAY),
                   lambda a: host_copy(a[1], 1, np.int32))
    assert post(int(got[0])) and got[0] == stored


def atomic_kernel():
    """RunTWaitAtomic: numThreads workers each fetch_add(1) 25 times (a delay between adds); the main
    thread waits for counter >= numThreads x 25. Worker i is AIV(i % 2) of block 1 + i // 2."""
    @pto.kernel(sync="manual")
    def atomic(counter, out, threads, delay):
        with pto.vector():
            worker = (pto.get_block_id() - 1) * 2 + pto.get_subblock_id()
            if pto.get_block_id() == 0:
                if pto.get_subblock_id() == 0:
                    pto.twait(counter, threads * 25, cmp="ge")
                    out[0] = counter[0]
            elif worker < threads:
                for j in range(25):
                    pto.tnotify(counter, 1, op="atomic_add")
                    delay_loop(delay)
    return atomic


@pytest.mark.parametrize("threads", [2, 4, 8], ids=lambda n: f"{n}Threads")
def test_TWait_Atomic(threads):
    """TWait.Atomic_2Threads / _4Threads / _8Threads: the wait returns with counter >= threads x 25 (it
    may read later adds' values, as the C++ test allows), and GM ends at exactly threads x 25."""
    kernel = atomic_kernel()
    blocks = 1 + (threads + 1) // 2
    for mode in ("timing", "functional"):
        counter, out = zeros(16), zeros(1)
        pto.launch(kernel, grid=(blocks,), args=(counter, out, threads, DELAY // 10), mode=mode,
                   check=CHECK if mode == "timing" else None)
        pto.sync()
        assert host_copy(out, 1, np.int32)[0] >= threads * 25
        assert host_copy(counter, 16, np.int32)[0] == threads * 25


def matrix_kernel(rows, cols, stride, first):
    """A waiter TWAITs for the rows x cols region at sig + first (rows stride apart) == 1 and then tests
    it (out[0]); a notifier on another AI core sets each of its elements to 1 after a delay."""
    @pto.kernel(sync="manual")
    def matrix(sig, out, delay):
        with pto.vector():
            if pto.get_subblock_id() == 0:
                if pto.get_block_id() == 0:
                    pto.twait(sig + first, 1, cmp="eq", rows=rows, cols=cols, stride=stride)
                    out[0] = pto.ttest(sig + first, 1, rows=rows, cols=cols, stride=stride)
                else:
                    delay_loop(delay)
                    for r in range(rows):
                        for c in range(cols):
                            pto.tnotify(sig + first + r * stride + c, 1)
    return matrix


@pytest.mark.parametrize("rows, cols", [(4, 8), (7, 13)], ids=["4x8", "7x13"])
def test_TWait_Matrix2D(rows, cols):
    """TWait.Matrix2D_4x8 / _7x13 (RunTWaitMatrix<Rows, Cols>, Signal2D<Rows, Cols>): a notifier sets
    every element of a zeroed matrix to 1; TWAIT(sig, 1, EQ) waits for all of them; they are all 1."""
    got = run_both(matrix_kernel(rows, cols, cols, 0), (2,), lambda: (zeros(rows * cols), zeros(1), DELAY),
                   lambda a: np.concatenate([host_copy(a[1], 1, np.int32), host_copy(a[0], rows * cols, np.int32)]))
    assert got[0] == 1
    np.testing.assert_array_equal(got[1:], np.ones(rows * cols))


@pto.kernel
def phases_wait(sig, out):
    pto.twait(sig, 1, cmp="eq")
    out[0] = sig[0]
    pto.twait(sig, 3, cmp="ge")
    out[1] = sig[0]
    pto.twait(sig, 5, cmp="eq")
    out[2] = sig[0]


@pto.kernel
def phases_notify(sig, delay):
    delay_loop(delay)
    pto.tnotify(sig, 1)
    delay_loop(delay)
    pto.tnotify(sig, 3)
    delay_loop(delay)
    pto.tnotify(sig, 5)


def test_TWait_MultiPhase():
    """RunTWaitMultiPhase: the notifier sets 1, 3, 5 with delays between; the waiter waits for == 1,
    >= 3, == 5 and reads 1, >= 3 and 5 after each (its delays are longer than a pass of the waiter's
    loop, so the waiter sees 1 before 3 replaces it; functional mode lets the waiter look after each
    notify)."""
    kernel = waiter_and_notifier(phases_wait, phases_notify)
    got = run_both(kernel, (2,), lambda: (zeros(16), zeros(3), DELAY), lambda a: host_copy(a[1], 3, np.int32))
    assert got[0] == 1 and got[1] >= 3 and got[2] == 5


def test_TWait_SubRegion_4x8_of_16cols():
    """RunTWaitSubRegion<16, 4, 8>: an 8 x 16 matrix; Signal2D<4, 8>(matrix + 2 x 16 + 5, 16); the
    notifier sets only the sub-region's 32 elements; the wait returns; they are 1, the rest 0."""
    full_rows, full_cols, start = 8, 16, 2 * 16 + 5
    got = run_both(matrix_kernel(4, 8, full_cols, start), (2,),
                   lambda: (zeros(full_rows * full_cols), zeros(1), DELAY),
                   lambda a: np.concatenate([host_copy(a[1], 1, np.int32),
                                             host_copy(a[0], full_rows * full_cols, np.int32)]))
    assert got[0] == 1
    want = np.zeros((full_rows, full_cols), np.int32)
    want[2:6, 5:13] = 1
    np.testing.assert_array_equal(got[1:].reshape(full_rows, full_cols), want)


# ---------------------------------------------------------------- ttest
TTEST_CASES = [(64, 64, "le"), (64, 64, "ge"), (64, 64, "eq"), (16, 256, "le"), (16, 256, "ge"), (16, 256, "eq")]


def ttest_data():
    """gen_data.py: np.random.seed(25), the cases in order: LE: input randint(1, 100), thresholds
    (max, min); GE: (min, max); EQ: ones, (1, 2). golden.bin: (true, false)."""
    rng = np.random.RandomState(25)
    out = []
    for rows, cols, cmp in TTEST_CASES:
        if cmp == "eq":
            data, true, false = np.ones([rows, cols], np.int32), 1, 2
        else:
            data = rng.randint(1, 100, size=[rows, cols]).astype(np.int32)
            true, false = (data.max(), data.min()) if cmp == "le" else (data.min(), data.max())
        out.append((data, int(true), int(false)))
    return out


@pytest.mark.parametrize("case", range(1, 7), ids=lambda i: f"case{i}")
def test_TTESTTest(make_kernels, case):
    """TTESTTest.case1..6 (test_ttest<int32_t, rows, cols, rows, cols, cmp>): TTEST of Signal(input) with
    the true and the false threshold answers (true, false); so does the rows x cols region's."""
    rows, cols, cmp = TTEST_CASES[case - 1]
    data, true, false = ttest_data()[case - 1]
    mod = make_kernels(f'''
@pto.kernel(sync="manual")
def run_ttest(inp, out, true, false):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            out[0] = pto.ttest(inp, true, cmp="{cmp}")
            out[1] = pto.ttest(inp, false, cmp="{cmp}")
            out[2] = pto.ttest(inp, true, cmp="{cmp}", rows={rows}, cols={cols})
            out[3] = pto.ttest(inp, false, cmp="{cmp}", rows={rows}, cols={cols})
''')
    got = run_both(mod.run_ttest, (1,), lambda: (pto.to_device(data.ravel()), zeros(4), true, false),
                   lambda a: host_copy(a[1], 4, np.int32))
    np.testing.assert_array_equal(got, [1, 0, 1, 0])
