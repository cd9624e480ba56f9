"""The SIMT features CUDA-style kernels reach for: atomics, warp shuffles and votes, a
memory fence, tuples of constants and `a[i]` reads, checked the way their CUDA samples are
(a histogram against np.bincount, reductions against numpy's sums), in every mode and engine."""
import numpy as np
import pytest

import pypto_sim as pto

from engine_compare import assert_engines_agree

MODES = [("timing", "simpy"), ("timing", "fast"), ("functional", "auto")]
OFFSETS = (16, 8, 4, 2, 1)


@pto.kernel
def histogram(x, hist, n):
    i = pto.get_global_id()
    if i < n:
        pto.atomic_add(hist + x[i], 1)


@pto.kernel
def histogram_shared(x, hist, n, bins):
    """Per-block counts in L1 (atomics on the block's buffer), then one HBM atomic per bin."""
    t = pto.get_local_id()
    local = pto.alloc_local(bins, dtype=pto.int32)
    if t < bins:
        local[t] = 0
    pto.barrier_block()
    i = pto.get_global_id()
    if i < n:
        pto.atomic_add(local + x[i], 1)
    pto.barrier_block()
    if t < bins:
        pto.atomic_add(hist + t, local[t])


@pto.kernel
def warp_sum(x, out, n):
    """A butterfly over the warp with shfl_xor; lane 0 of each warp adds its sum to out."""
    i = pto.get_global_id()
    v = 0.0
    if i < n:
        v = x[i]
    for k in OFFSETS:
        v = v + pto.shfl_xor(v, k)
    if pto.get_lane_id() == 0:
        pto.atomic_add(out, v)


@pto.kernel
def block_sum(x, out, n, threads):
    """The classic shared-memory tree: each step halves the active threads, barrier_block()
    between steps; thread 0 writes the block's sum."""
    t = pto.get_local_id()
    i = pto.get_global_id()
    s = pto.alloc_local(threads)
    v = 0.0
    if i < n:
        v = x[i]
    s[t] = v
    pto.barrier_block()
    stride = threads // 2
    while stride > 0:
        if t < stride:
            s[t] = s[t] + s[t + stride]
        pto.barrier_block()
        stride = stride // 2
    if t == 0:
        out[pto.get_block_id()] = s[0]


def _int_tensor(host):
    d = pto.alloc_tensor(host.nbytes, dtype=pto.int32)
    pto.memcpy_h2d(d, host)
    return d


def _float_tensor(host):
    d = pto.alloc_tensor(host.nbytes)
    pto.memcpy_h2d(d, host)
    return d


@pytest.mark.parametrize("mode,engine", MODES)
def test_histogram_with_atomic_add_equals_bincount(mode, engine, monkeypatch):
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    data = np.random.default_rng(1).integers(0, 20, 3000).astype(np.int32)
    for kernel, args in ((histogram, ()), (histogram_shared, (20,))):
        x, hist = _int_tensor(data), _int_tensor(np.zeros(20, np.int32))
        pto.launch(kernel, grid=(12, 1, 1), block=(256, 1, 1), args=(x, hist, 3000) + args, mode=mode)
        np.testing.assert_array_equal(hist.numpy(), np.bincount(data, minlength=20))


@pytest.mark.parametrize("mode,engine", MODES)
def test_warp_reduction_with_shuffles_gives_numpys_sum(mode, engine, monkeypatch):
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    data = np.arange(1, 1001, dtype=np.float32)            # integers: every order sums exactly
    x, out = _float_tensor(data), _float_tensor(np.zeros(1, np.float32))
    pto.launch(warp_sum, grid=(4, 1, 1), block=(256, 1, 1), args=(x, out, 1000), mode=mode)
    assert out.numpy()[0] == data.sum() == 500500


@pytest.mark.parametrize("mode,engine", MODES)
def test_block_reduction_in_shared_l1_gives_numpys_sums(mode, engine, monkeypatch):
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    data = np.random.default_rng(2).integers(-50, 50, 1000).astype(np.float32)
    x, out = _float_tensor(data), _float_tensor(np.zeros(4, np.float32))
    pto.launch(block_sum, grid=(4, 1, 1), block=(256, 1, 1), args=(x, out, 1000, 256), mode=mode)
    padded = np.concatenate([data, np.zeros(24, np.float32)]).reshape(4, 256)
    np.testing.assert_array_equal(out.numpy(), padded.sum(axis=1))


@pto.kernel
def cas_lock_counter(counter, lock, n_rounds):
    """Lane 0 of every warp takes a spin lock with atomic_cas, bumps a plain counter, fences
    and releases: the count is exact only if the CAS and the fence order the critical
    sections."""
    if pto.get_lane_id() == 0:
        for r in range(n_rounds):
            got = pto.atomic_cas(lock, 0, 1)
            while got != 0:
                got = pto.atomic_cas(lock, 0, 1)
            counter[0] = counter[0] + 1
            pto.fence()
            pto.atomic_exchange(lock, 0)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_a_cas_spin_lock_serialises_a_read_modify_write(engine, monkeypatch):
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    counter, lock = _int_tensor(np.zeros(1, np.int32)), _int_tensor(np.zeros(1, np.int32))
    pto.launch(cas_lock_counter, grid=(4, 1, 1), block=(64, 1, 1), args=(counter, lock, 3))
    assert counter.numpy()[0] == 4 * 2 * 3


@pto.kernel
def atomics_return_old(x, out):
    i = pto.get_global_id()
    out[i] = pto.atomic_add(x, 1)


def test_atomics_return_distinct_old_values():
    """32 lanes adding 1 to one word get 0..31 back (each sees the word before its own add),
    and the word ends at 32."""
    x, out = _int_tensor(np.zeros(1, np.int32)), _int_tensor(np.zeros(32, np.int32))
    pto.launch(atomics_return_old, grid=(1, 1, 1), block=(32, 1, 1), args=(x, out))
    assert sorted(out.numpy()) == list(range(32)) and x.numpy()[0] == 32


@pto.kernel
def votes(x, o):
    i = pto.get_global_id()
    v = x[i]
    o[i] = pto.ballot(v > 0)
    o[32 + i] = pto.select(pto.vote_any(v > 30), 1, 0) + 2 * pto.select(pto.vote_all(v >= 0), 1, 0)


def test_votes_and_ballot():
    data = np.arange(32, dtype=np.int32) - 1                 # -1, 0, 1, ..., 30
    x, o = _int_tensor(data), _int_tensor(np.zeros(64, np.int32))
    pto.launch(votes, grid=(1, 1, 1), block=(32, 1, 1), args=(x, o))
    got = o.numpy()
    mask = sum(1 << k for k in range(32) if data[k] > 0)
    assert (got[:32] == np.int32(np.uint32(mask).view(np.int32))).all()
    assert (got[32:] == 0).all()                                # none > 30, not all >= 0


WEIGHTS = (0.25, 0.5, 0.25)


@pto.kernel
def smooth(x, o, n):
    """A 3-tap stencil with its weights in a module-level tuple, unrolled over the tuple."""
    i = pto.get_global_id()
    if i >= 1 and i < n - 1:
        acc = 0.0
        for k in range(len(WEIGHTS)):
            acc = acc + WEIGHTS[k] * x[i + k - 1]
        o[i] = acc


@pto.kernel
def pick(o):
    i = pto.get_lane_id()
    o[i] = (10, 20, 30, 40)[i % 4] + WEIGHTS[1]


def test_tuples_of_constants():
    data = np.arange(16, dtype=np.float32) ** 2
    x, o = _float_tensor(data), _float_tensor(np.zeros(16, np.float32))
    pto.launch(smooth, grid=(1, 1, 1), block=(32, 1, 1), args=(x, o, 16))
    want = np.zeros(16, np.float32)
    want[1:-1] = 0.25 * data[:-2] + 0.5 * data[1:-1] + 0.25 * data[2:]
    np.testing.assert_allclose(o.numpy(), want, rtol=1e-6)
    p = _float_tensor(np.zeros(32, np.float32))
    pto.launch(pick, grid=(1, 1, 1), block=(32, 1, 1), args=(p,))
    np.testing.assert_array_equal(p.numpy(), np.tile([10.5, 20.5, 30.5, 40.5], 8))


def test_a_run_time_tuple_index_means_what_python_means(make_kernels):
    """T = (10, 20, 30) indexed by each lane's k: -3 .. -1 count from the end as a constant
    index does (T[-2] is 20, where the select chain gave the last element, 30); 3 or -4 stop
    the launch at the line, as Python's IndexError (they gave 30, silently); a float index is a
    CompileError (Python's TypeError; T[1.9] was T[1])."""
    mod = make_kernels('''
T = (10, 20, 30)


@pto.kernel
def k(o, idx):
    i = pto.get_global_id()
    o[i] = T[idx[i]]


@pto.kernel
def by_float(o):
    o[0] = T[1.9]
''')
    good = np.array([0, 1, 2, -1, -2, -3] * 5 + [0, 1], np.int32)
    o = _int_tensor(np.zeros(32, np.int32))
    pto.launch(mod.k, grid=(1, 1, 1), block=(32, 1, 1), args=(o, _int_tensor(good)))
    np.testing.assert_array_equal(o.numpy(), np.array((10, 20, 30))[good])
    for bad, lane in ((3, 5), (-4, 31)):
        idx = good.copy()
        idx[lane] = bad
        with pytest.raises(pto.OutOfBoundsError, match=rf"tuple index at line 9 on warp 0, lane {lane} of block \(0, 0, 0\): -3 <= "
                                                       rf"index < 3 fails \({bad} is outside \[-3, 2\]\)"):
            pto.launch(mod.k, grid=(1, 1, 1), block=(32, 1, 1), args=(o, _int_tensor(idx)))
            pto.sync()
    with pytest.raises(pto.CompileError, match="tuple indices must be integers, got float32"):
        mod.by_float.program_for((o,))


def test_run_time_checks_in_lane_kernels_run_alike_on_both_engines(make_kernels):
    """A lane kernel with a run-time range() step and a run-time tuple index runs CHECKs on
    the scalar unit and per lane: the compiled loop and SimPy give the same cycles, records and
    memory, when the checks hold and when one stops the launch (the compiled loop took a CHECK
    that held for a store, committing stale words: memory corrupted, the process aborted)."""
    mod = make_kernels('''
T = (3, 5, 7, 11)


@pto.kernel
def k(o, idx, step):
    i = pto.get_global_id()
    s = 0
    for j in range(0, 12, step):
        s += T[idx[i]] + j
    o[i] = s
''')
    good = np.arange(64, dtype=np.int32) % 4 - 2          # -2 .. 1: every index from the end too
    for idx, step, error in ((good, 5, None), (good, 0, pto.KernelValueError), (good + 3, 4, pto.OutOfBoundsError)):
        args = (_int_tensor(np.zeros(64, np.int32)), _int_tensor(idx.astype(np.int32)), step)
        run = assert_engines_agree(mod.k, args, (2, 1, 1), (32, 1, 1))
        assert type(run["error"]) is (error or type(None))
    for mode in ("timing", "functional"):
        o = _int_tensor(np.zeros(64, np.int32))
        pto.launch(mod.k, grid=(2, 1, 1), block=(32, 1, 1), args=(o, _int_tensor(good), 5), mode=mode)
        # j = 0, 5, 10: three passes of T[idx] + j
        np.testing.assert_array_equal(o.numpy(), np.array((3, 5, 7, 11))[good] * 3 + 15)
        with pytest.raises(pto.KernelValueError, match=r"step != 0 fails \(it is 0\)"):
            pto.launch(mod.k, grid=(2, 1, 1), block=(32, 1, 1), args=(o, _int_tensor(good), 0), mode=mode)
            pto.sync()


def test_an_element_read_is_a_value_in_every_value_context(make_kernels):
    """a[i] is the element's value wherever a value is used: a ternary's branches, range()'s
    bounds and a tuple's index (each was refused as "a pointer used where a value is needed");
    o[i][0] indexes an element, a CompileError at the line (the compiler crashed with an
    AttributeError)."""
    mod = make_kernels('''
T = (5, 6, 7)


@pto.kernel
def k(o, a, b, n):
    i = pto.get_global_id()
    s = 0
    for j in range(n[i]):
        s += 1
    o[i] = (a[i] if i % 2 == 0 else b[i]) * 100 + s * 10 + T[n[i]]


@pto.kernel
def twice(o):
    i = pto.get_global_id()
    o[i][0] = 1
''')
    a, b = np.arange(32, dtype=np.int32), -np.arange(32, dtype=np.int32)
    n = np.arange(32, dtype=np.int32) % 3
    o = _int_tensor(np.zeros(32, np.int32))
    pto.launch(mod.k, grid=(1, 1, 1), block=(32, 1, 1), args=(o, _int_tensor(a), _int_tensor(b), _int_tensor(n)))
    want = np.where(np.arange(32) % 2 == 0, a, b) * 100 + n * 10 + np.array((5, 6, 7))[n]
    np.testing.assert_array_equal(o.numpy(), want)
    with pytest.raises(pto.CompileError, match=r"'o\[i\]' is an element's value \(int32\), not a pointer") as info:
        mod.twice.program_for((o,))
    assert info.value.line == 18


def test_break_in_a_tuple_loop_is_a_clear_error(make_kernels):
    mod = make_kernels('''
@pto.kernel
def k(o):
    for w in (1.0, 2.0):
        if w > 1.5:
            break
        o[0] = w
''')
    with pytest.raises(pto.CompileError, match="unrolled"):
        mod.k.asm(args=(pto.alloc_tensor(4),))


@pto.kernel
def block_votes(x, o):
    i = pto.get_global_id()
    t = pto.get_local_id()
    v = x[i]
    n_pos = pto.barrier_block_count(v > 0)
    all_pos = pto.barrier_block_and(v > -100)
    any_big = pto.barrier_block_or(v > 90)
    o[i] = n_pos * 4 + pto.select(all_pos, 2, 0) + pto.select(any_big, 1, 0)


@pytest.mark.parametrize("mode,engine", MODES)
def test_voting_block_barriers(mode, engine, monkeypatch):
    """barrier_block_count/and/or combine one predicate per lane over the whole block (three
    blocks of 96 lanes, three warps each, one of them partial): every lane gets its block's
    count of positives, whether all exceed -100, whether any exceeds 90."""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    data = np.random.default_rng(5).integers(-99, 100, 3 * 80).astype(np.int32)
    x, o = _int_tensor(data), _int_tensor(np.zeros(240, np.int32))
    pto.launch(block_votes, grid=(3, 1, 1), block=(80, 1, 1), args=(x, o), mode=mode)
    want = []
    for b in data.reshape(3, 80):
        want += [int((b > 0).sum()) * 4 + 2 * int((b > -100).all()) + int((b > 90).any())] * 80
    np.testing.assert_array_equal(o.numpy(), want)


@pto.kernel
def lane_sort(x, o):
    """Each lane sorts its own 8 values in a local array (insertion sort, run-time indices)."""
    i = pto.get_global_id()
    arr = pto.local_array(8)
    for k in range(8):
        arr[k] = x[i * 8 + k]
    for k in range(1, 8):
        v = arr[k]
        j = k - 1
        while j >= 0 and arr[j] > v:
            arr[j + 1] = arr[j]
            j = j - 1
        arr[j + 1] = v
    for k in range(8):
        o[i * 8 + k] = arr[k]
    o[256 + i] = arr[0] + arr[7]            # constant indices: the slots themselves


@pytest.mark.parametrize("mode,engine", MODES)
def test_local_arrays_sort_each_lane(mode, engine, monkeypatch):
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    data = np.random.default_rng(9).standard_normal(256).astype(np.float32)
    x, o = _float_tensor(data), _float_tensor(np.zeros(288, np.float32))
    pto.launch(lane_sort, grid=(1, 1, 1), block=(32, 1, 1), args=(x, o), mode=mode)
    rows = np.sort(data.reshape(32, 8), axis=1)
    got = o.numpy()
    np.testing.assert_array_equal(got[:256].reshape(32, 8), rows)
    np.testing.assert_array_equal(got[256:], rows[:, 0] + rows[:, 7])


@pto.kernel
def local_overrun(o, k):
    arr = pto.local_array(4, pto.int32)
    idx = pto.get_lane_id() + k
    arr[idx] = 1
    o[pto.get_lane_id()] = arr[0]


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_local_array_index_past_its_end_is_out_of_bounds(mode):
    o = _int_tensor(np.zeros(32, np.int32))
    with pytest.raises(pto.OutOfBoundsError, match=r"arr\[4\]") as info:
        pto.launch(local_overrun, grid=(1, 1, 1), block=(32, 1, 1), args=(o, 0), mode=mode)
        pto.sync()
    assert info.value.lane == 4
