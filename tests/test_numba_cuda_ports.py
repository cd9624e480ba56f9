"""numba-cuda's own cudapy tests for the forms issue 25 found refused, ported to pypto_sim.

Sources (github.com/NVIDIA/numba-cuda): numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py,
numba_cuda/numba/cuda/tests/cudapy/test_forall.py,
numba_cuda/numba/cuda/tests/cudapy/test_boolean.py and (uint32 atomic_add)
numba_cuda/numba/cuda/tests/cudapy/test_atomics.py. The kernels and assertions are the
authors'; what changed, beyond ``cuda.X`` -> ``pto.X`` (``cuda.grid(1)`` ->
``pto.get_global_id()``, ``cuda.threadIdx.x`` -> ``pto.get_local_id()``,
``cuda.jit(sig)(fn)`` -> ``pto.kernel(fn)``, unittest -> pytest asserts), is noted where it
happens:
- ``x.size`` inside a kernel is an extra argument ``n`` (kernels cannot read a tensor's size);
- int64 / float64 arrays are int32 / float32 here (these tests predate float64 / int64 lane
  values; tests/test_numba_cuda_ports_64.py ports the 64-bit ones);
- test_shfl_sync_types' int64 case is not ported (an np.int64 launch argument is an int32
  scalar here); its float64 case is.
"""
import numpy as np
import pytest

import pypto_sim as pto


# ---------------------------------------------------------------- test_warp_ops.py
def useful_syncwarp(ary):
    i = pto.get_global_id()
    if i == 0:
        ary[0] = 42
    pto.syncwarp(0xFFFFFFFF)
    ary[i] = ary[0]


def use_shfl_sync_idx(ary, idx):
    i = pto.get_global_id()
    val = pto.shfl_sync(0xFFFFFFFF, i, idx)
    ary[i] = val


def use_shfl_sync_up(ary, delta):
    i = pto.get_global_id()
    val = pto.shfl_up_sync(0xFFFFFFFF, i, delta)
    ary[i] = val


def use_shfl_sync_down(ary, delta):
    i = pto.get_global_id()
    val = pto.shfl_down_sync(0xFFFFFFFF, i, delta)
    ary[i] = val


def use_shfl_sync_xor(ary, xor):
    i = pto.get_global_id()
    val = pto.shfl_xor_sync(0xFFFFFFFF, i, xor)
    ary[i] = val


def use_shfl_sync_with_val(ary, into):
    i = pto.get_global_id()
    val = pto.shfl_sync(0xFFFFFFFF, into, 0)
    ary[i] = val


def use_vote_sync_all(ary_in, ary_out):
    i = pto.get_global_id()
    pred = pto.all_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = pred


def use_vote_sync_any(ary_in, ary_out):
    i = pto.get_global_id()
    pred = pto.any_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = pred


def use_vote_sync_eq(ary_in, ary_out):
    i = pto.get_global_id()
    pred = pto.eq_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = pred


def use_vote_sync_ballot(ary):
    i = pto.get_local_id()
    ballot = pto.ballot_sync(0xFFFFFFFF, True)
    ary[i] = ballot


def use_match_any_sync(ary_in, ary_out):
    i = pto.get_global_id()
    ballot = pto.match_any_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = ballot


def use_match_all_sync(ary_in, ary_out):
    i = pto.get_global_id()
    ballot, pred = pto.match_all_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = ballot if pred else 0


def use_independent_scheduling(arr):
    i = pto.get_local_id()
    ballot = 0      # added: a name assigned only in per-lane branches needs a value first
    if i % 4 == 0:
        ballot = pto.ballot_sync(0x11111111, True)
    elif i % 4 == 1:
        ballot = pto.ballot_sync(0x22222222, True)
    elif i % 4 == 2:
        ballot = pto.ballot_sync(0x44444444, True)
    elif i % 4 == 3:
        ballot = pto.ballot_sync(0x88888888, True)
    arr[i] = ballot


def test_useful_syncwarp():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_useful_syncwarp."""
    compiled = pto.kernel(useful_syncwarp)
    nelem = 32
    ary = np.empty(nelem, dtype=np.int32)
    compiled[1, nelem](ary)
    assert np.all(ary == 42)


def test_shfl_sync_idx():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_shfl_sync_idx."""
    compiled = pto.kernel(use_shfl_sync_idx)
    nelem = 32
    idx = 4
    ary = np.empty(nelem, dtype=np.int32)
    compiled[1, nelem](ary, idx)
    assert np.all(ary == idx)


def test_shfl_sync_up():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_shfl_sync_up."""
    compiled = pto.kernel(use_shfl_sync_up)
    nelem = 32
    delta = 4
    ary = np.empty(nelem, dtype=np.int32)
    exp = np.arange(nelem, dtype=np.int32)
    exp[delta:] -= delta
    compiled[1, nelem](ary, delta)
    assert np.all(ary == exp)


def test_shfl_sync_down():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_shfl_sync_down."""
    compiled = pto.kernel(use_shfl_sync_down)
    nelem = 32
    delta = 4
    ary = np.empty(nelem, dtype=np.int32)
    exp = np.arange(nelem, dtype=np.int32)
    exp[:-delta] += delta
    compiled[1, nelem](ary, delta)
    assert np.all(ary == exp)


def test_shfl_sync_xor():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_shfl_sync_xor."""
    compiled = pto.kernel(use_shfl_sync_xor)
    nelem = 32
    xor = 16
    ary = np.empty(nelem, dtype=np.int32)
    exp = np.arange(nelem, dtype=np.int32) ^ xor
    compiled[1, nelem](ary, xor)
    assert np.all(ary == exp)


def test_shfl_sync_types():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_shfl_sync_types."""
    values = (np.int32(-1), np.float32(np.pi), np.float64(np.pi))    # int64: not ported
    for val in values:
        compiled = pto.kernel(use_shfl_sync_with_val)
        nelem = 32
        ary = np.empty(nelem, dtype=val.dtype)
        compiled[1, nelem](ary, val)
        assert np.all(ary == val)


def test_vote_sync_all():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_vote_sync_all."""
    compiled = pto.kernel(use_vote_sync_all)
    nelem = 32
    ary_in = np.ones(nelem, dtype=np.int32)
    ary_out = np.empty(nelem, dtype=np.int32)
    compiled[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 1)
    ary_in[-1] = 0
    compiled[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 0)


def test_vote_sync_any():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_vote_sync_any."""
    compiled = pto.kernel(use_vote_sync_any)
    nelem = 32
    ary_in = np.zeros(nelem, dtype=np.int32)
    ary_out = np.empty(nelem, dtype=np.int32)
    compiled[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 0)
    ary_in[2] = 1
    ary_in[5] = 1
    compiled[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 1)


def test_vote_sync_eq():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_vote_sync_eq."""
    compiled = pto.kernel(use_vote_sync_eq)
    nelem = 32
    ary_in = np.zeros(nelem, dtype=np.int32)
    ary_out = np.empty(nelem, dtype=np.int32)
    compiled[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 1)
    ary_in[1] = 1
    compiled[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 0)
    ary_in[:] = 1
    compiled[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 1)


def test_vote_sync_ballot():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_vote_sync_ballot."""
    compiled = pto.kernel(use_vote_sync_ballot)
    nelem = 32
    ary = np.empty(nelem, dtype=np.uint32)
    compiled[1, nelem](ary)
    assert np.all(ary == np.uint32(0xFFFFFFFF))


def test_match_any_sync():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_match_any_sync."""
    compiled = pto.kernel(use_match_any_sync)
    nelem = 10
    ary_in = np.arange(nelem, dtype=np.int32) % 2
    ary_out = np.empty(nelem, dtype=np.int32)
    exp = np.tile((0b0101010101, 0b1010101010), 5)
    compiled[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == exp)


def test_match_all_sync():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_match_all_sync."""
    compiled = pto.kernel(use_match_all_sync)
    nelem = 10
    ary_in = np.zeros(nelem, dtype=np.int32)
    ary_out = np.empty(nelem, dtype=np.int32)
    compiled[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 0b1111111111)
    ary_in[1] = 4
    compiled[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 0)


def test_independent_scheduling():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_independent_scheduling."""
    compiled = pto.kernel(use_independent_scheduling)
    arr = np.empty(32, dtype=np.uint32)
    exp = np.tile((0x11111111, 0x22222222, 0x44444444, 0x88888888), 8)
    compiled[1, 32](arr)
    assert np.all(arr == exp)


def test_activemask():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_activemask."""
    @pto.kernel
    def use_activemask(x):
        i = pto.get_global_id()
        if (i % 2) == 0:
            # Even numbered threads fill in even numbered array entries
            # with binary "...01010101"
            x[i] = pto.activemask()
        else:
            # Odd numbered threads fill in odd numbered array entries
            # with binary "...10101010"
            x[i] = pto.activemask()

    out = np.zeros(32, dtype=np.uint32)
    use_activemask[1, 32](out)

    # 0x5 = 0101: The pattern from even-numbered threads
    # 0xA = 1010: The pattern from odd-numbered threads
    expected = np.tile((0x55555555, 0xAAAAAAAA), 16)
    np.testing.assert_equal(expected, out)


def test_lanemask_lt():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_warp_ops.py::TestCudaWarpOperations.test_lanemask_lt."""
    @pto.kernel
    def use_lanemask_lt(x):
        i = pto.get_global_id()
        x[i] = pto.lanemask_lt()

    out = np.zeros(32, dtype=np.uint32)
    use_lanemask_lt[1, 32](out)

    # A string of 1s that grows from the LSB for each entry:
    # 0, 1, 3, 7, F, 1F, 3F, 7F, FF, 1FF, etc.
    # or in binary:
    # ...0001, ....0011, ...0111, etc.
    expected = np.asarray([(2**i) - 1 for i in range(32)], dtype=np.uint32)
    np.testing.assert_equal(expected, out)


# ---------------------------------------------------------------- test_forall.py
@pto.kernel
def foo(x, n):                  # numba: foo(x) with `i < x.size`
    i = pto.get_global_id()
    if i < n:
        x[i] += 1


def test_forall_1():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_forall.py::TestForAll.test_forall_1."""
    arr = np.arange(11, dtype=np.int32)            # int64 in numba
    orig = arr.copy()
    foo.forall(arr.size)(arr, arr.size)
    np.testing.assert_array_almost_equal(arr, orig + 1)


def test_forall_2():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_forall.py::TestForAll.test_forall_2."""
    @pto.kernel
    def bar(a, x, y, n):
        i = pto.get_global_id()
        if i < n:
            y[i] = a * x[i] + y[i]

    x = np.arange(13, dtype=np.float32)
    y = np.arange(13, dtype=np.float32)
    oldy = y.copy()
    a = 1.234
    bar.forall(y.size)(a, x, y, y.size)
    np.testing.assert_array_almost_equal(y, a * x + oldy, decimal=3)


def test_forall_no_work():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_forall.py::TestForAll.test_forall_no_work."""
    # Ensure that forall doesn't launch a kernel with no blocks when called
    # with 0 elements. See Issue #5017.
    arr = np.arange(11, dtype=np.int32)
    foo.forall(0)(arr, 0)


def test_forall_negative_work():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_forall.py::TestForAll.test_forall_negative_work."""
    # Ensure that forall doesn't allow the creation of a forall with a
    # negative element count.
    with pytest.raises(ValueError) as raises:
        foo.forall(-1)
    assert "Can't create ForAll with negative task count" in str(raises.value)


# ---------------------------------------------------------------- test_boolean.py
def boolean_func(A, vertial):
    if vertial:
        A[0] = 123
    else:
        A[0] = 321


def test_boolean():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_boolean.py::test_boolean."""
    func = pto.kernel(boolean_func)
    A = np.array([0], dtype="float32")             # float64 in numba
    func[1, 1](A, True)
    assert A[0] == 123
    func[1, 1](A, False)
    assert A[0] == 321


# ---------------------------------------------------------------- test_atomics.py
def atomic_add(ary):
    tid = pto.get_local_id()
    sm = pto.alloc_local(32, pto.uint32)            # numba: cuda.shared.array(32, uint32)
    sm[tid] = 0
    pto.barrier_block()                             # numba: cuda.syncthreads()
    bin = ary[tid] % 32
    pto.atomic_add(sm + bin, 1)                     # numba: cuda.atomic.add(sm, bin, 1)
    pto.barrier_block()
    ary[tid] = sm[tid]


def test_atomic_add():
    """Port of numba-cuda numba_cuda/numba/cuda/tests/cudapy/test_atomics.py::TestCudaAtomics.test_atomic_add
    (a uint32 array and a uint32 shared histogram, as the author's signature 'void(uint32[:])')."""
    ary = np.random.randint(0, 32, size=32).astype(np.uint32)
    orig = ary.copy()
    cuda_atomic_add = pto.kernel(atomic_add)
    cuda_atomic_add[1, 32](ary)

    gold = np.zeros(32, dtype=np.uint32)
    for i in range(orig.size):
        gold[orig[i]] += 1

    assert np.all(ary == gold)
