"""The AI core's large matmuls in the compiled values replay (exec/compiled/replay.py): numpy's
BLAS forms A @ B where A and B lie, and matmul_round rounds start + A @ B once per instruction,
at the matmul's write straight into the accumulator when nothing writes its sources meanwhile,
else at its read into a pending result. Both must give tile_matmul's bits (BLAS off), and the
SimPy model's; the float16 loads feeding them decode every bit pattern as numpy does."""
import numpy as np

import pypto_sim as pto
from pypto_sim.exec import reference
from pypto_sim.exec.lane import executor
from pypto_sim.runtime.launch import simulation_for
from pypto_sim.runtime.device import DEFAULT_BLOCK, current_device
from pypto_sim.timing import aicore_fast

T = 16                      # every tile 16 x 16: 16^3 products, the least BLAS takes


def dev(array, dtype):
    t = pto.alloc_tensor(array.nbytes, dtype)
    pto.memcpy_h2d(t, array)
    return t


@pto.kernel
def chain(A, B, C, K):
    """C = A @ B, 16 x K times K x 16, one TMATMUL then TMATMUL_ACCs, k-step by k-step."""
    a1 = pto.alloc_tile(T, T, pto.float16, loc=pto.Mat)
    b1 = pto.alloc_tile(T, T, pto.float16, loc=pto.Mat)
    a0 = pto.alloc_tile(T, T, pto.float16, loc=pto.Left)
    b0 = pto.alloc_tile(T, T, pto.float16, loc=pto.Right)
    acc = pto.alloc_tile(T, T, pto.float32, loc=pto.Acc)
    for k0 in range(0, K, T):
        pto.tload(a1, A + k0, stride=K)
        pto.tload(b1, B + k0 * T)
        pto.textract(a0, a1)
        pto.textract(b0, b1)
        if k0 == 0:
            pto.tmatmul(acc, a0, b0)
        else:
            pto.tmatmul_acc(acc, a0, b0)
    pto.tstore(C, acc)


@pto.kernel(sync="manual")
def overwritten(A, B, C):
    """A matmul whose Left tile the next TEXTRACT overwrites while the cube still runs (no
    flag orders them): the matmul must read a0 at its start."""
    with pto.cube():
        a1 = pto.alloc_tile(T, T, pto.float16, loc=pto.Mat)
        b1 = pto.alloc_tile(T, T, pto.float16, loc=pto.Mat)
        a0 = pto.alloc_tile(T, T, pto.float16, loc=pto.Left)
        b0 = pto.alloc_tile(T, T, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(T, T, pto.float32, loc=pto.Acc)
        pto.tload(a1, A)
        pto.tload(b1, B)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.textract(a0, a1)
        pto.textract(b0, b1)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(acc, a0, b0)
        pto.textract(a0, b1)                       # races the matmul's read of a0
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(C, acc)


def run(kernel, args, out, engine, blas, deferred=None):
    """One launch on a copy of HBM: out's float32 16 x 16 words. deferred: a list that gets,
    per logged matmul, whether the replay computes it at its write."""
    dev_ = current_device()
    dev_.launch(kernel, (1, 1, 1), DEFAULT_BLOCK, args)
    words = dev_.hbm.data.copy()
    sim = simulation_for(dev_.queue.pop(), words, None, engine=engine)
    sim.blas = blas
    sim.run()
    assert sim.engine_used == engine
    lo = out.alloc.byte_addr
    return words[lo:lo + T * T * 4].view(np.float32).reshape(T, T)


def test_each_accumulating_matmul_rounds_its_exact_sum_once_in_place():
    """Four k-steps of 16 into one accumulator, with numpy's BLAS and without, compiled and
    under SimPy. Row i of A has 4096 in column 0 and 1 in column 1 (odd rows also 1 in column
    2); B has 4096 in row 0, 1 in row 1, 2 in row 2; each later step s adds A[i, 16 s] = 1
    times B[16 s, :] = 1. Float32 numbers in [2^24, 2^25) are 2 apart.
    Step 0: even rows 4096 * 4096 + 1 = 2^24 + 1, exactly halfway between 2^24 (significand
    2^23, even) and 2^24 + 2 (odd): to even, 2^24. Odd rows 2^24 + 1 + 2 = 2^24 + 3, halfway
    between 2^24 + 2 (odd) and 2^24 + 4 (even): 2^24 + 4. Each later step adds 1 to what the
    accumulator holds: 2^24 + 1 again rounds to 2^24; 2^24 + 5, halfway between 2^24 + 4
    (significand 2^23 + 2, even) and 2^24 + 6, rounds to 2^24 + 4. So C is 2^24 on even rows
    and 2^24 + 4 on odd rows; one rounding of the whole sum would give 2^24 + 4 and 2^24 + 6.
    The float64 sums are exact here (matmul_round proves it and lets them round to even)."""
    K = 4 * T
    a = np.zeros((T, K), np.float16)
    b = np.zeros((K, T), np.float16)
    a[:, 0], a[:, 1], a[1::2, 2] = 4096, 1, 1
    b[0], b[1], b[2] = 4096, 1, 2
    for s in range(1, 4):
        a[:, s * T], b[s * T] = 1, 1
    want = np.where(np.arange(T)[:, None] % 2 == 0, 2.0**24, 2.0**24 + 4) * np.ones((1, T))
    C = pto.alloc_tensor(T * T * 4, pto.float32)
    args = (dev(a, pto.float16), dev(b, pto.float16), C, K)
    for engine in ("fast", "simpy"):
        for blas in (True, False):
            got = run(chain, args, C, engine, blas)
            np.testing.assert_array_equal(got, want.astype(np.float32), f"{engine}, BLAS {blas}")


def test_a_matmul_whose_source_is_overwritten_meanwhile_reads_it_at_its_start(monkeypatch):
    """overwritten: the second TEXTRACT puts B into a0 while the matmul runs. The matmul
    read A (small integers: every product and sum exact), so C = A @ B exactly, with BLAS (the
    replay's pending result, not the accumulator in place: the matmul is not deferred) and
    without, compiled and under SimPy."""
    logged = []
    original = aicore_fast.replay_values

    def spy(sim, ex, lg, vals, rp, rf, rr, *rest, **kw):
        n = len(lg)
        times = np.concatenate([lg[:, ex.LG_START], lg[:, ex.LG_COMPLETE]])
        order = np.lexsort((np.arange(2 * n), times)).astype(np.int64)
        defer = np.zeros(n, np.int8)
        ex.replay_deferrable(order, n, lg, rp, rr, sim.tbase, defer)
        mma = rp[lg[:, ex.LG_PC], ex.RP_KIND] == ex.RK_MMA
        logged.extend(defer[mma].tolist())
        return original(sim, ex, lg, vals, rp, rf, rr, *rest, **kw)
    monkeypatch.setattr(aicore_fast, "replay_values", spy)
    rng = np.random.default_rng(7)
    a = rng.integers(-8, 9, (T, T)).astype(np.float16)
    b = rng.integers(-8, 9, (T, T)).astype(np.float16)
    C = pto.alloc_tensor(T * T * 4, pto.float32)
    args = (dev(a, pto.float16), dev(b, pto.float16), C)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    for engine in ("fast", "simpy"):
        for blas in (True, False):
            np.testing.assert_array_equal(run(overwritten, args, C, engine, blas), want,
                                          f"{engine}, BLAS {blas}")
    assert logged == [0, 0]            # the compiled runs' matmul: read at its start


def test_matmul_round_in_place_gives_tile_matmuls_bits():
    """matmul_round writing over its own start (the accumulator in place) against tile_matmul
    on float16 data whose float64 sums often land on float32 midpoints (about one element in
    a hundred here) and on data with cancellations that need the exact sum."""
    ex = executor()
    rng = np.random.default_rng(12)
    m, n, k = 24, 40, 32
    for trial in range(6):
        if trial % 2:
            a = rng.choice([1.0, -1.0, 2.0**12, -2.0**12, 2.0**-15, 1 + 2.0**-10], (m, k))
            b = rng.choice([1.0, -1.0, 2.0**12, 2.0**-15, 3.0], (k, n))
        else:
            a = rng.standard_normal((m, k)).astype(np.float16).astype(np.float64)
            b = rng.standard_normal((k, n)).astype(np.float16).astype(np.float64)
        c = (rng.standard_normal((m, n)) * 8).astype(np.float32).astype(np.float64)
        l1 = np.concatenate([a.ravel(), b.ravel(), c.ravel()])
        want = np.empty(m * n)
        ex.tile_matmul(want, l1, m * k + k * n, n, 0, k, m * k, n, m, n, k, 1, 0, ex.DT_FLOAT32)
        rowabs, colmax = np.empty(m), np.empty(n)
        A, B = a.ravel().copy(), b.ravel().copy()
        assert ex.matmul_bounds(A, B, m, n, k, rowabs, colmax)
        acc = c.ravel().copy()
        ex.matmul_round(acc, (a @ b).ravel(), A, B, acc, n, m, n, k, ex.DT_FLOAT32, rowabs, colmax, True)
        np.testing.assert_array_equal(acc.view(np.int64), want.view(np.int64), f"trial {trial}")


def test_float16_loads_decode_every_bit_pattern():
    """gm_gather of all 65536 float16 bit patterns: zeros, subnormals, normals and infinities
    to the same float64 bits as the reference executor and numpy; a NaN to a NaN (its bits are
    ieee_decode's, as before the loop took the float32 route)."""
    ex = executor()
    patterns = np.arange(1 << 16, dtype=np.uint16)
    hbm = patterns.view(np.uint8).copy()
    got, ref = np.empty(1 << 16), np.empty(1 << 16)
    ex.gm_gather(got, hbm, 0, 256, 256, 256, ex.DT_FLOAT16)
    reference.gm_gather(ref, hbm, 0, 256, 256, 256, ex.DT_FLOAT16)
    want = patterns.view(np.float16).astype(np.float64)
    number = ~np.isnan(want)
    assert number.sum() == (1 << 16) - 2 * 1023
    np.testing.assert_array_equal(got.view(np.int64)[number], want.view(np.int64)[number])
    np.testing.assert_array_equal(got.view(np.int64)[number], ref.view(np.int64)[number])
    nans = np.nonzero(~number)[0]
    assert np.isnan(got[nans]).all()
    assert all(got.view(np.int64)[i] == np.float64(ex.ieee_decode(np.uint64(i), 16, 10)).view(np.int64)
               for i in nans[::97])
