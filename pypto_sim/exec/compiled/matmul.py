"""The cube's matmul values: tile_matmul, and
matmul_bounds and matmul_round (matmul_finish: both), which round any float64 sums of a matmul
(the kernel's own, or numpy's BLAS product: exec/aicore_tiles.py, timing/aicore_replay.py) as
the exact sums would round.
"""
import math

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from .isa_constants import DT_INT32
from .scalars import wrap_i32

UNKNOWN_BIT = 3000          # matmul_round: a column's lowest bit not found yet (_lowest_bit <= 2000)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def tile_matmul(out, l1, c, cpitch, a, apitch, b, bpitch, m, n, k, init, bias, dt):
    """TMATMUL* / TGEMV* (and the article's MMA): out[i * n + j] = the exact value of
    init[i, j] + sum over p of a[i, p] * b[p, j], rounded once to dt (float32: to nearest,
    ties to even; int32 wraps). init is 0 (init == 0), the accumulator's old c[i, j] (init ==
    1, the _ACC forms) or bias[j] (init == 2, the _BIAS forms). A NaN or an infinity among the
    terms gives what IEEE arithmetic gives in any order (NaN for inf * 0 or inf - inf); which
    NaN, nan_in_order says.

    An exact sum does not depend on the order it is taken in, so this kernel (a float64 sum
    over p in order, then matmul_finish) and the BLAS product that exec/aicore_tiles.py uses
    for large finite tiles give the same bits. Every product of the cube's input dtypes
    (float16, bfloat16, float32, int8) is exact in float64, so a fused multiply-add changes
    nothing and the compiler may use one ("contract"). A and B are first packed into dense
    arrays (windows of pitched tiles), then four rows at a time share each row of B."""
    A = np.empty(m * k)
    B = np.empty(k * n)
    for r in range(m):
        for p in range(k):
            A[r * k + p] = l1[a + r * apitch + p]
    for p in range(k):
        for j in range(n):
            B[p * n + j] = l1[b + p * bpitch + j]
    start = np.empty(m * n)
    for r in range(m):
        for j in range(n):
            start[r * n + j] = l1[c + r * cpitch + j] if init == 1 else l1[bias + j] if init == 2 else 0.0
    acc = np.empty((4, n))
    sums = np.empty(m * n)
    for i in range(0, m, 4):
        rows = min(4, m - i)
        for r in range(4):
            for j in range(n):
                acc[r, j] = start[(i + r) * n + j] if r < rows else 0.0
        # rows past m repeat row i's products (a valid row) and are not kept
        a0 = i * k
        a1 = (i + 1 if rows > 1 else i) * k
        a2 = (i + 2 if rows > 2 else i) * k
        a3 = (i + 3 if rows > 3 else i) * k
        _matmul_rows(acc, A, a0, a1, a2, a3, B, n, k)
        for r in range(rows):
            for j in range(n):
                sums[(i + r) * n + j] = acc[r, j]
    matmul_finish(out, sums, A, B, start, m, n, k, dt)


@njit(cache=True, error_model="numpy")
def matmul_finish(out, sums, A, B, start, m, n, k, dt):
    """out = the float64 sums of a matmul (start + A @ B, A m x k and B k x n dense, summed in
    any order) rounded to dt as the exact sums would round: matmul_bounds, then matmul_round
    with start already in the sums."""
    rowabs = np.empty(m)
    colmax = np.empty(n)
    matmul_bounds(A, B, m, n, k, rowabs, colmax)
    matmul_round(out, sums, A, B, start, n, m, n, k, dt, rowabs, colmax, False)


@njit(cache=True, error_model="numpy")
def matmul_bounds(A, B, m, n, k, rowabs, colmax):
    """rowabs[r] = the sum of |A[r, :]|, colmax[j] = the largest |B[:, j]| (A m x k and B k x n
    dense): what bounds the error of a matmul's float64 sums (matmul_round). True when every
    element of A and B is finite (a NaN or an infinity fails the comparison with inf)."""
    bad = 0                                  # counted, not or-ed: the loops vectorise
    for r in range(m):
        s0 = s1 = s2 = s3 = 0.0              # four partial sums: any order bounds alike
        p = 0
        while p + 4 <= k:
            s0 += abs(A[r * k + p])
            s1 += abs(A[r * k + p + 1])
            s2 += abs(A[r * k + p + 2])
            s3 += abs(A[r * k + p + 3])
            p += 4
        while p < k:
            s0 += abs(A[r * k + p])
            p += 1
        rowabs[r] = (s0 + s1) + (s2 + s3)
        bad += not (rowabs[r] < np.inf)      # a sum of finite |a| (< 2^128 each) stays finite
    colmax[:n] = 0.0
    for p in range(k):
        for j in range(n):
            v = abs(B[p * n + j])
            colmax[j] = max(colmax[j], v)
            bad += not (v < np.inf)
    return bad == 0


@njit(cache=True, error_model="numpy")
def matmul_round(out, sums, A, B, start, sstride, m, n, k, dt, rowabs, colmax, add_start):
    """out[r * n + j] = element (r, j) of a matmul, start(r, j) + (A @ B)[r, j], rounded to dt
    as its exact value would round, from float64 sums taken in any order: sums[r * n + j]
    (plus start(r, j) when add_start, else the sums hold it already). start(r, j) is
    start[r * sstride + j] (sstride n: a dense m x n start; 0: one row for every r, a bias or
    zeros). out may be start itself (the accumulator rounded in place): a row of out is
    written when that row is done. rowabs, colmax: matmul_bounds' of A and B.

    A float64 sum of k + 1 terms is within (k + 2) 2^-53 of the sum of their magnitudes,
    bounded here by |start| + (the row's sum of |A|) x (the column's largest |B|); where the
    whole interval rounds to one float32 that is the result, else the exact sum decides
    (_exact_float32), unless every partial sum was exact already (_matmul_exact). int32
    results are exact already (int8 products, far below 2^53) and wrap. The cube accumulates
    into float32 or int32 only (dt is one of them)."""
    if dt == DT_INT32:
        for r in range(m):
            for j in range(n):
                s = sums[r * n + j] + start[r * sstride + j] if add_start else sums[r * n + j]
                out[r * n + j] = np.float64(wrap_i32(np.int64(s))) if math.isfinite(s) else 0.0
        return
    gamma = (k + 2) * 2.0**-53 * 1.01
    nears = np.empty(n)
    flag = np.empty(n, np.int8)
    colbit = np.full(n, np.int64(UNKNOWN_BIT))   # column j's lowest bit, found when first needed
    terms = np.empty(k + 1)
    partials = np.empty(k + 1)
    for r in range(m):
        ra = rowabs[r]
        # the row's starts through a slice (its indices are known not to be negative, so the
        # loop vectorises); the row's results go to nears and into out only when the row is
        # done, as out may be start
        starts = start[r * sstride:r * sstride + n]
        unsettled = 0
        for j in range(n):
            st = starts[j]
            s = sums[r * n + j] + st if add_start else sums[r * n + j]
            near = np.float32(s)
            nears[j] = np.float64(near)
            # s is within bound of the exact sum: settled when both ends round alike (then
            # so does every number between them, s among them)
            bound = (abs(st) + ra * colmax[j]) * gamma + abs(s) * 2.0**-52
            f = np.float32(s - bound) != np.float32(s + bound)
            flag[j] = f
            unsettled += f
        if unsettled:
            rowbit = np.int64(2000)          # the lowest set bit among row r of A, as an exponent
            for p in range(k):
                rowbit = min(rowbit, _lowest_bit(np.float64(A[r * k + p]).view(np.int64)))
            for j in range(n):
                if flag[j] == 0:
                    continue
                if colbit[j] == UNKNOWN_BIT:
                    colbit[j] = _column_bit(B, k, n, j)
                st = starts[j]
                s = sums[r * n + j] + st if add_start else sums[r * n + j]
                if s != s:                       # which NaN: the in-order rule's, not the sums'
                    nears[j] = np.float64(np.float32(nan_in_order(st, A, B, r, j, n, k)))
                    continue
                if _matmul_exact(s, st, ra * colmax[j], rowbit, colbit[j]):
                    continue
                terms[0] = st
                for p in range(k):
                    terms[p + 1] = A[r * k + p] * B[p * n + j]
                nears[j] = _exact_float32(terms, k + 1, partials)
        for j in range(n):
            out[r * n + j] = nears[j]


@njit(cache=True, error_model="numpy")
def nan_in_order(start, A, B, r, j, n, k):
    """The NaN of element (r, j) of start + A @ B (A m x k, B k x n dense) whose terms give one:
    the terms taken in k order after the start, where a product of two NaNs is its first
    factor's and a sum whose partial result is NaN keeps it (a NaN term replaces a number;
    inf - inf and inf * 0 make the machine's default NaN). Which of two NaNs an add keeps is
    the hardware's and the compiler's choice, so both executors state it (exec/reference_tiles
    .py's tile_matmul follows the same rule) instead of inheriting their sums' order."""
    acc = start
    for p in range(k):
        if acc != acc:
            break
        x = A[r * k + p]
        y = B[p * n + j]
        t = x if x != x else y if y != y else x * y
        acc = t if t != t else acc + t
    return acc


@njit(cache=True, error_model="numpy")
def _column_bit(B, k, n, j):
    """The lowest set bit among column j of B (k x n dense), as an exponent."""
    bit = np.int64(2000)
    for p in range(k):
        bit = min(bit, _lowest_bit(np.float64(B[p * n + j]).view(np.int64)))
    return bit


@njit(cache=True, error_model="numpy")
def _matmul_exact(s, st, products, rowbit, colbit):
    """True when the float64 sum s of an element (its start st, its products' magnitudes
    bounded by ``products``) is its exact value: every product is a multiple of
    2^(rowbit + colbit), the start of 2^(its own lowest bit); while the sum of their
    magnitudes stays below 2^53 times the smaller, every partial sum is exact in float64, in
    any order. A NaN or an infinity keeps what IEEE arithmetic gave (True)."""
    if not math.isfinite(s):
        return True
    lim = _power_of_two(rowbit + 26) * _power_of_two(colbit + 27)
    start_lim = _power_of_two(_lowest_bit(np.float64(st).view(np.int64)) + 53)
    return abs(st) + products < min(lim, start_lim)


@njit(cache=True, error_model="numpy", inline="always")
def _power_of_two(e):
    """2^e for e clamped to [-1000, 1000], built in float64's exponent bits (no libm call)."""
    return np.int64((max(-1000, min(1000, e)) + 1023) << 52).view(np.float64)


@njit(cache=True, error_model="numpy")
def _exact_float32(terms, count, partials):
    """The exact sum of terms[:count] (Shewchuk's non-overlapping partials, as Python's
    math.fsum) rounded to the nearest float32, ties to even: the float64 hi nearest the sum
    rounds as the sum does unless hi is a float32 midpoint, where the sign of the rest decides."""
    used = 0
    for i in range(count):
        x = terms[i]
        j = 0
        for q in range(used):
            y = partials[q]
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                partials[j] = lo
                j += 1
            x = hi
        partials[j] = x
        used = j + 1
    hi = partials[used - 1] if used else 0.0
    rest = 0.0
    q = used - 1
    while q > 0:
        q -= 1
        x, y = hi, partials[q]
        hi = x + y
        rest = y - (hi - x)
        if rest != 0.0:
            break                      # the smaller partials cannot change rest's sign
    f = np.float32(hi)
    fv = _float32_value(f, hi)
    if fv == hi or rest == 0.0:
        return np.float64(f)
    other = np.nextafter(f, np.float32(np.inf) if hi > fv else np.float32(-np.inf))
    ov = _float32_value(other, hi)
    if fv + ov != 2.0 * hi:
        return np.float64(f)           # hi is not halfway between two float32 values
    return np.float64(other) if (rest > 0.0) == (ov > fv) else np.float64(f)


@njit(cache=True, error_model="numpy")
def _float32_value(f, near):
    """float32 f as a number; an infinity counts as 2^128 (with near's sign), where the float32
    after the largest would be, so overflow rounds as IEEE says (ties at 2^128 - 2^103)."""
    if math.isinf(f):
        return math.copysign(2.0**128, near)
    return np.float64(f)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _matmul_rows(acc, A, a0, a1, a2, a3, B, n, k):
    """Four rows of a matmul: acc[r, j] += A[a_r + p] * B[p * n + j] for p in order (one
    accumulator array, so the vectorised loop needs few run-time overlap checks)."""
    for p in range(k):
        x0, x1, x2, x3 = A[a0 + p], A[a1 + p], A[a2 + p], A[a3 + p]
        row = p * n
        for j in range(n):
            y = B[row + j]
            acc[0, j] += x0 * y
            acc[1, j] += x1 * y
            acc[2, j] += x2 * y
            acc[3, j] += x3 * y


@njit(cache=True, error_model="numpy", inline="always")
def _lowest_bit(bits):
    """The exponent of the lowest set bit of the float64 whose IEEE bits are ``bits`` (x = odd *
    2^that); 2000 for zero, 1000 for NaN and infinities (never exact). Without branches (the
    loops over a row or column vectorise); bit 62 set keeps trailing_zeros' argument nonzero."""
    field = (bits >> 52) & 0x7FF
    frac = bits & 0xFFFFFFFFFFFFF
    mant = frac | 0x10000000000000 if field != 0 else frac
    base = field - 1075 if field != 0 else np.int64(-1074)
    low = base + trailing_zeros(mant | np.int64(1) << 62)
    return np.int64(1000) if field == 0x7FF else np.int64(2000) if (field | frac) == 0 else low
