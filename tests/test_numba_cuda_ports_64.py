"""numba-cuda's cudapy tests on float64 / int64 data (issue 25's eleven), ported to pypto_sim.

Sources (github.com/NVIDIA/numba-cuda, numba_cuda/numba/cuda/): tests/cudapy/test_laplace.py,
tests/cudapy/test_blackscholes.py, tests/cudapy/test_reduction.py with the library it tests
(kernels/reduction.py, ``cuda.Reduce``), tests/cudapy/test_transpose.py with
kernels/transpose.py, and tests/cudapy/test_atomics.py. The kernels and assertions are the
authors'; what changed, beyond ``cuda.X`` -> ``pto.X`` (``cuda.grid(1)`` ->
``pto.get_global_id()``, ``cuda.threadIdx.x`` -> ``pto.get_local_id()``, ``cuda.syncthreads()``
-> ``pto.barrier_block()``, ``cuda.shared.array`` -> ``pto.alloc_local``, ``cuda.atomic.add(a,
i, v)`` -> ``pto.atomic_add(a + i, v)``, ``k[grid, block](...)`` kept), is noted where it happens:
- ``x.shape`` / ``x.size`` inside a kernel are extra arguments (kernels cannot read a tensor's
  shape);
- ``math.exp`` / ``math.log`` / ``math.sqrt`` / ``math.fabs`` are ``pto.exp`` / ``pto.log`` /
  ``pto.sqrt`` / ``abs`` (the kernel language has no ``math`` module);
- 2-D shared arrays are 1-D buffers indexed ``r * width + c`` (``alloc_local`` is 1-D);
- a float64 scalar argument is passed as ``np.float64(...)``: numba types a Python float as
  float64, pypto_sim as float32 (its rule for literals and scalars);
- sizes: the CUDA-simulator sizes of each test where the authors give them, else the test's
  own (reductions: every size up to 34567, not the 1M-element ones).
"""
import math

import numpy as np
import pytest

import pypto_sim as pto


# ---------------------------------------------------------------- test_laplace.py
TPB = 4                                    # the authors' tpb under the CUDA simulator
SM_SIZE = TPB * TPB                        # numba: SM_SIZE = tpb, tpb (2-D shared array)


@pto.kernel
def get_max(a, b):
    if a > b:
        return a
    else:
        return b


@pto.kernel
def jocabi_relax_core(A, Anew, error, n, m):
    err_sm = pto.alloc_local(SM_SIZE, pto.float64)    # numba: cuda.shared.array(SM_SIZE, float64)
    ty = pto.get_local_id(0)
    tx = pto.get_local_id(1)
    bx = pto.get_block_id(0)
    by = pto.get_block_id(1)
    i = pto.get_global_id(0)                           # numba: i, j = cuda.grid(2)
    j = pto.get_global_id(1)
    err_sm[ty * TPB + tx] = 0
    if j >= 1 and j < n - 1 and i >= 1 and i < m - 1:
        Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i])
        err_sm[ty * TPB + tx] = Anew[j, i] - A[j, i]
    pto.barrier_block()
    # max-reduce err_sm vertically
    t = TPB // 2
    while t > 0:
        if ty < t:
            err_sm[ty * TPB + tx] = get_max(err_sm[ty * TPB + tx], err_sm[(ty + t) * TPB + tx])
        t //= 2
        pto.barrier_block()
    # max-reduce err_sm horizontally
    t = TPB // 2
    while t > 0:
        if tx < t and ty == 0:
            err_sm[ty * TPB + tx] = get_max(err_sm[ty * TPB + tx], err_sm[ty * TPB + tx + t])
        t //= 2
        pto.barrier_block()
    if tx == 0 and ty == 0:
        error[by, bx] = err_sm[0]


def test_laplace_small():
    """Port of test_laplace.py::TestCudaLaplace.test_laplace_small (the CUDA simulator's sizes
    are 4 x 4 with tpb 4; 16 x 16 here, so that blocks meet at edges). The authors only run the
    iteration; the port also checks each sweep against numpy's float64 Jacobi step (the same
    additions in the same order, so equal bit for bit) and each block's error against numpy's."""
    NN, NM = 16, 16
    iter_max = 20
    A = np.zeros((NN, NM), dtype=np.float64)
    Anew = np.zeros((NN, NM), dtype=np.float64)
    n = NN
    tol = 1.0e-6
    error = 1.0
    for j in range(n):
        A[j, 0] = 1.0
        Anew[j, 0] = 1.0
    iter = 0
    blockdim = (TPB, TPB)
    griddim = (NN // blockdim[0], NM // blockdim[1])
    error_grid = np.zeros(griddim)
    dA = pto.to_device(A)
    dAnew = pto.to_device(Anew)
    derror_grid = pto.to_device(error_grid)
    host, host_new = A.copy(), Anew.copy()
    while error > tol and iter < iter_max:
        assert error_grid.dtype == np.float64
        jocabi_relax_core[griddim, blockdim](dA, dAnew, derror_grid, NN, NM)
        error_grid = derror_grid.numpy()
        error = np.abs(error_grid).max()
        host_new[1:-1, 1:-1] = 0.25 * (host[1:-1, 2:] + host[1:-1, :-2] + host[:-2, 1:-1]
                                       + host[2:, 1:-1])
        np.testing.assert_array_equal(dAnew.numpy(), host_new)
        diff = np.zeros((NN, NM))
        diff[1:-1, 1:-1] = host_new[1:-1, 1:-1] - host[1:-1, 1:-1]
        # a block's error is its max over err_sm[ty, tx] = diff[j, i] with i = x, j = y
        want = diff.reshape(NM // TPB, TPB, NN // TPB, TPB).max(axis=(1, 3))
        np.testing.assert_array_equal(error_grid, want)
        dA, dAnew = dAnew, dA                          # swap dA and dAnew
        host, host_new = host_new, host.copy()
        iter += 1
    assert iter == iter_max and 0 < error < 0.1


# ---------------------------------------------------------------- test_blackscholes.py
RISKFREE = 0.02
VOLATILITY = 0.30
A1 = 0.31938153
A2 = -0.356563782
A3 = 1.781477937
A4 = -1.821255978
A5 = 1.330274429
RSQRT2PI = 0.39894228040143267793994605993438


def cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret_val = (RSQRT2PI * np.exp(-0.5 * d * d)
               * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    return np.where(d > 0, 1.0 - ret_val, ret_val)


def black_scholes(callResult, putResult, stockPrice, optionStrike, optionYears, Riskfree,
                  Volatility):
    S = stockPrice
    X = optionStrike
    T = optionYears
    R = Riskfree
    V = Volatility
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = cnd(d1)
    cndd2 = cnd(d2)
    expRT = np.exp(-R * T)
    callResult[:] = S * cndd1 - X * expRT * cndd2
    putResult[:] = X * expRT * (1.0 - cndd2) - S * (1.0 - cndd1)


def randfloat(rand_var, low, high):
    return (1.0 - rand_var) * low + rand_var * high


@pto.kernel
def cnd_cuda(d):
    K = 1.0 / (1.0 + 0.2316419 * abs(d))               # numba: math.fabs(d)
    ret_val = (RSQRT2PI * pto.exp(-0.5 * d * d)
               * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


@pto.kernel
def black_scholes_cuda(callResult, putResult, S, X, T, R, V, n):
    i = pto.get_local_id() + pto.get_block_id() * pto.get_block_dim()
    if i >= n:                                           # numba: S.shape[0]
        return
    sqrtT = pto.sqrt(T[i])
    d1 = (pto.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = cnd_cuda(d1)
    cndd2 = cnd_cuda(d2)
    expRT = pto.exp((-1.0 * R) * T[i])
    callResult[i] = S[i] * cndd1 - X[i] * expRT * cndd2
    putResult[i] = X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1)


def test_blackscholes():
    """Port of test_blackscholes.py::TestBlackScholes.test_blackscholes, its tolerance 1e-13
    (relative L1 norm and max absolute error against numpy's float64)."""
    OPT_N = 400
    iterations = 2
    rng = np.random.default_rng(25)
    stockPrice = randfloat(rng.random(OPT_N), 5.0, 30.0)
    optionStrike = randfloat(rng.random(OPT_N), 1.0, 100.0)
    optionYears = randfloat(rng.random(OPT_N), 0.25, 10.0)
    callResultNumpy = np.zeros(OPT_N)
    putResultNumpy = -np.ones(OPT_N)
    callResultNumba = np.zeros(OPT_N)
    putResultNumba = -np.ones(OPT_N)
    for i in range(iterations):
        black_scholes(callResultNumpy, putResultNumpy, stockPrice, optionStrike, optionYears,
                      RISKFREE, VOLATILITY)
    blockdim = 512, 1
    griddim = int(math.ceil(float(OPT_N) / blockdim[0])), 1
    d_callResult = pto.to_device(callResultNumba)
    d_putResult = pto.to_device(putResultNumba)
    d_stockPrice = pto.to_device(stockPrice)
    d_optionStrike = pto.to_device(optionStrike)
    d_optionYears = pto.to_device(optionYears)
    for i in range(iterations):
        black_scholes_cuda[griddim, blockdim](
            d_callResult, d_putResult, d_stockPrice, d_optionStrike, d_optionYears,
            np.float64(RISKFREE), np.float64(VOLATILITY), OPT_N)
    callResultNumba = d_callResult.numpy()
    putResultNumba = d_putResult.numpy()
    delta = np.abs(callResultNumpy - callResultNumba)
    L1norm = delta.sum() / np.abs(callResultNumpy).sum()
    max_abs_err = delta.max()
    assert L1norm < 1e-13
    assert max_abs_err < 1e-13
    assert np.abs(putResultNumpy - putResultNumba).max() < 1e-13


# ---------------------------------------------------------------- kernels/reduction.py + test_reduction.py
REDUCE_SOURCE = '''
WARPSIZE = 32
NUMWARPS = 4
INNER = WARPSIZE + 1          # numba: inner_sm_size, plus one to avoid SM collision
MAXBLOCK = NUMWARPS * WARPSIZE


@pto.kernel
def reduce_op(a, b):
    return {op}


@pto.kernel
def inner_warp_reduction(sm_partials, init):
    tid = pto.get_local_id()
    warpid = tid // WARPSIZE
    laneid = tid % WARPSIZE
    sm_this = sm_partials + warpid * INNER               # numba: sm_partials[warpid, :]
    sm_this[laneid] = init
    pto.syncwarp(0xFFFFFFFF)
    width = WARPSIZE // 2
    while width:
        if laneid < width:
            old = sm_this[laneid]
            sm_this[laneid] = reduce_op(old, sm_this[laneid + width])
        pto.syncwarp(0xFFFFFFFF)
        width //= 2


@pto.kernel
def device_reduce_full_block(arr, partials, sm_partials, n):
    tid = pto.get_local_id()
    blkid = pto.get_block_id()
    blksz = pto.get_block_dim()
    gridsz = pto.get_grid_dim()
    start = tid + blksz * blkid
    stop = n                                             # numba: arr.size
    step = blksz * gridsz
    tmp = arr[start]
    for i in range(start + step, stop, step):
        tmp = reduce_op(tmp, arr[i])
    pto.barrier_block()
    inner_warp_reduction(sm_partials, tmp)
    pto.barrier_block()
    if tid < 2:
        sm_partials[tid * INNER] = reduce_op(sm_partials[tid * INNER], sm_partials[(tid + 2) * INNER])
        pto.syncwarp(0x3)                                # numba: cuda.syncwarp() (lanes 0, 1 here)
    if tid == 0:
        partials[blkid] = reduce_op(sm_partials[0], sm_partials[INNER])


@pto.kernel
def device_reduce_partial_block(arr, partials, sm_partials, n):
    tid = pto.get_local_id()
    blkid = pto.get_block_id()
    blksz = pto.get_block_dim()
    warpid = tid // WARPSIZE
    laneid = tid % WARPSIZE
    size = n                                             # numba: arr.size
    value = arr[tid]
    sm_partials[warpid * INNER + laneid] = value
    pto.barrier_block()
    if (warpid + 1) * WARPSIZE < size:
        inner_warp_reduction(sm_partials, value)
    else:
        if laneid == 0:
            base = warpid * WARPSIZE
            for i in range(1, size - base):
                sm_partials[warpid * INNER] = reduce_op(sm_partials[warpid * INNER],
                                                        sm_partials[warpid * INNER + i])
    pto.barrier_block()
    if tid == 0:
        num_active_warps = (blksz + WARPSIZE - 1) // WARPSIZE
        result = sm_partials[0]
        for i in range(1, num_active_warps):
            result = reduce_op(result, sm_partials[i * INNER])
        partials[blkid] = result


@pto.kernel
def gpu_reduce_block_strided(arr, partials, init, use_init, n):
    tid = pto.get_local_id()
    sm_partials = pto.alloc_local(NUMWARPS * INNER, pto.{dtype})
    if pto.get_block_dim() == MAXBLOCK:
        device_reduce_full_block(arr, partials, sm_partials, n)
    else:
        device_reduce_partial_block(arr, partials, sm_partials, n)
    if use_init and tid == 0 and pto.get_block_id() == 0:
        partials[0] = reduce_op(partials[0], init)
'''


class Reduce:
    """numba-cuda's ``cuda.Reduce`` (kernels/reduction.py) over pypto_sim: the authors' host
    logic (full blocks of 128 lanes, at most 64 of them striding over the array, a partial
    block, then one block over the partials) around the kernel above."""

    def __init__(self, make_kernels, op, dtype):
        self.kernel = make_kernels(REDUCE_SOURCE.format(op=op, dtype=np.dtype(dtype).name)
                                   ).gpu_reduce_block_strided

    def __call__(self, arr, res=None, init=0):
        init = arr.dtype.type(init)                      # ensure the right type
        if arr.size < 1:
            return init
        blocksize = 4 * 32
        size_full = (arr.size // blocksize) * blocksize
        size_partial = arr.size - size_full
        full_blockct = min(size_full // blocksize, 32 * 2)
        partials_size = full_blockct + (1 if size_partial else 0)
        d_arr = pto.to_device(arr)
        partials = pto.to_device(np.zeros(partials_size, arr.dtype))
        if size_full:
            self.kernel[full_blockct, blocksize](d_arr[:size_full], partials[:full_blockct], init,
                                                 True, size_full)
        if size_partial:
            self.kernel[1, size_partial](d_arr[size_full:], partials[full_blockct:], init,
                                         not full_blockct, size_partial)
        if partials_size > 1:
            self.kernel[1, partials_size](partials, partials, init, False, partials_size)
        if res is not None:
            pto.memcpy_d2h(res[:1], partials[:1])
            return None
        return partials.numpy()[0]


SUM_SIZES = [1, 15, 16, 17, 127, 128, 129, 1023, 1024, 1025, 1536, 34567]


def test_sum_reduce(make_kernels):
    """Port of test_reduction.py::TestReduction.test_sum_reduce (every size but the three of
    about a million elements): float64 sums of 1..n, exact, so equal to numpy's."""
    sum_reduce = Reduce(make_kernels, "a + b", np.float64)
    for n in SUM_SIZES:
        A = np.arange(n, dtype=np.float64) + 1
        assert sum_reduce(A) == A.sum(), n


def test_empty_array_host(make_kernels):
    """Port of test_reduction.py::TestReduction.test_empty_array_host."""
    sum_reduce = Reduce(make_kernels, "a + b", np.float64)
    A = np.arange(0, dtype=np.float64) + 1
    assert sum_reduce(A) == A.sum()


def test_prod_reduce(make_kernels):
    """Port of test_reduction.py::TestReduction.test_prod_reduce (64! in float64)."""
    prod_reduce = Reduce(make_kernels, "a * b", np.float64)
    A = np.arange(64, dtype=np.float64) + 1
    np.testing.assert_allclose(A.prod(), prod_reduce(A, init=1))


def test_max_reduce(make_kernels):
    """Port of test_reduction.py::TestReduction.test_max_reduce."""
    max_reduce = Reduce(make_kernels, "max(a, b)", np.float64)
    A = np.arange(3717, dtype=np.float64) + 1
    assert max_reduce(A, init=0) == A.max()


def test_non_identity_init(make_kernels):
    """Port of test_reduction.py::TestReduction.test_non_identity_init."""
    sum_reduce = Reduce(make_kernels, "a + b", np.float64)
    init = 3
    A = np.arange(10, dtype=np.float64) + 1
    assert sum_reduce(A, init=init) == A.sum() + init


def test_result_on_device(make_kernels):
    """Port of test_reduction.py::TestReduction.test_result_on_device (the result lands in the
    caller's array)."""
    sum_reduce = Reduce(make_kernels, "a + b", np.float64)
    A = np.arange(10, dtype=np.float64) + 1
    got = np.zeros(1, dtype=np.float64)
    assert sum_reduce(A, res=got) is None
    assert got[0] == A.sum()


def test_int64_sum_reduce_is_exact_past_2_53(make_kernels):
    """Not in numba's suite: the same library on int64 values 2**53 + k, whose float64 sum
    would round. 1000 values (7 full blocks of 128 and a partial block of 104): the sum is
    1000 * 2**53 + 999 * 1000 / 2 = 9007199254740992000 + 499500 (below 2**63), exactly numpy's
    int64 sum; a float64 accumulator would hold only multiples of 2048 there."""
    sum_reduce = Reduce(make_kernels, "a + b", np.int64)
    A = np.int64(2**53) + np.arange(1000, dtype=np.int64)
    assert sum_reduce(A) == A.sum() == 9007199254740992000 + 499500


# ---------------------------------------------------------------- kernels/transpose.py + test_transpose.py
TILE_WIDTH = 32                            # tpb = 1024 lanes: int(2 ** (log2(1024) / 2))
TILE_HEIGHT = 32
TILE_PITCH = TILE_WIDTH + 1                # numba: tile_shape = (tile_height, tile_width + 1)


@pto.kernel
def transpose_kernel(input, output, in_rows, in_cols, out_rows, out_cols):
    tile = pto.alloc_local(TILE_HEIGHT * TILE_PITCH, pto.float64)
    tx = pto.get_local_id(0)
    ty = pto.get_local_id(1)
    bx = pto.get_block_id(0) * pto.get_block_dim(0)
    by = pto.get_block_id(1) * pto.get_block_dim(1)
    x = by + tx
    y = bx + ty
    if by + ty < in_rows and bx + tx < in_cols:
        tile[ty * TILE_PITCH + tx] = input[by + ty, bx + tx]
    pto.barrier_block()
    if y < out_rows and x < out_cols:
        output[y, x] = tile[tx * TILE_PITCH + ty]


def transpose(a, b):
    """numba's transpose(a, b) host logic: one block of tile_height x tile_width lanes per tile,
    plus one for remainders."""
    blocks = int(b.shape[0] / TILE_HEIGHT + 1), int(b.shape[1] / TILE_WIDTH + 1)
    threads = TILE_HEIGHT, TILE_WIDTH
    transpose_kernel[blocks, threads](a, b, *a.shape, *b.shape)
    return b


@pytest.mark.parametrize("rows, cols", [(5, 6), (1025, 512)])
def test_transpose(rows, cols):
    """Port of test_transpose.py::TestTranspose.test_transpose, its float64 variants (the
    complex128 one is not ported: no complex dtype)."""
    x = np.arange(rows * cols, dtype=np.float64).reshape(cols, rows)
    y = np.zeros(rows * cols, dtype=np.float64).reshape(rows, cols)
    dx = pto.to_device(x)
    dy = pto.to_device(y)
    transpose(dx, dy)
    np.testing.assert_array_equal(x.transpose(), dy.numpy())


# ---------------------------------------------------------------- test_atomics.py
def atomic_add_double(idx, ary):
    # numba: atomic_binary_1dim_shared(ary, idx, 1.0, float64, 32, cuda.atomic.add,
    #                                  atomic_cast_none, 0.0, False), inlined
    tid = pto.get_local_id()
    sm = pto.alloc_local(32, pto.float64)
    sm[tid] = 0.0
    pto.barrier_block()
    bin = idx[tid] % 32
    pto.atomic_add(sm + bin, 1.0)
    pto.barrier_block()
    ary[tid] = sm[tid]


def atomic_add_double_global(idx, ary):
    # numba: atomic_binary_1dim_global(ary, idx, 32, 1.0, cuda.atomic.add, False), inlined
    tid = pto.get_local_id()
    bin = idx[tid] % 32
    pto.atomic_add(ary + bin, 1.0)


def test_atomic_add_double():
    """Port of test_atomics.py::TestCudaAtomics.test_atomic_add_double (int64 indices, a
    float64 shared histogram)."""
    idx = np.random.randint(0, 32, size=32, dtype=np.int64)
    ary = np.zeros(32, np.float64)
    cuda_fn = pto.kernel(atomic_add_double)
    cuda_fn[1, 32](idx, ary)
    gold = np.zeros(32, dtype=np.uint32)
    for i in range(idx.size):
        gold[idx[i]] += 1.0
    np.testing.assert_equal(ary, gold)


def test_atomic_add_double_global():
    """Port of test_atomics.py::TestCudaAtomics.test_atomic_add_double_global."""
    idx = np.random.randint(0, 32, size=32, dtype=np.int64)
    ary = np.zeros(32, np.float64)
    cuda_func = pto.kernel(atomic_add_double_global)
    cuda_func[1, 32](idx, ary)
    gold = np.zeros(32, dtype=np.uint32)
    for i in range(idx.size):
        gold[idx[i]] += 1.0
    np.testing.assert_equal(ary, gold)


def atomic_max(res, ary):
    tx = pto.get_local_id()
    bx = pto.get_block_id()
    pto.atomic_max(res + 0, ary[tx, bx])


def atomic_max_double_shared(res, ary):
    tid = pto.get_local_id()
    smary = pto.alloc_local(32, pto.float64)
    smary[tid] = ary[tid]
    smres = pto.alloc_local(1, pto.float64)
    if tid == 0:
        smres[0] = res[0]
    pto.barrier_block()
    pto.atomic_max(smres + 0, smary[tid])
    pto.barrier_block()
    if tid == 0:
        res[0] = smres[0]


def test_atomic_max_double():
    """Port of test_atomics.py::TestCudaAtomics.test_atomic_max_double (check_atomic_max with
    float64 values in [-65535, 65535), 32 blocks of 32 lanes)."""
    vals = np.random.randint(-65535, 65535, size=(32, 32)).astype(np.float64)
    res = np.zeros(1, dtype=vals.dtype)
    cuda_func = pto.kernel(atomic_max)
    cuda_func[32, 32](res, vals)
    gold = np.max(vals)
    np.testing.assert_equal(res, gold)


def test_atomic_max_double_shared():
    """Port of test_atomics.py::TestCudaAtomics.test_atomic_max_double_shared."""
    vals = np.random.randint(0, 32, size=32).astype(np.float64)
    res = np.zeros(1, np.float64)
    cuda_func = pto.kernel(atomic_max_double_shared)
    cuda_func[1, 32](res, vals)
    gold = np.max(vals)
    np.testing.assert_equal(res, gold)
