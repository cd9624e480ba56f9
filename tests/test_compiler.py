"""The kernel language, as a specification: what Python a @pto.kernel may contain and what it means.

Each test is a tiny kernel, run on the simulator and compared against numpy (or plain Python),
with a docstring saying why the behaviour matters. Kernel source goes through the
``make_kernels`` fixture (kernels need a real source file, and CompileErrors name it).

Conventions: lanes are numbered by ``pto.get_global_id()``; outputs are pre-filled with a
sentinel so that a lane that wrongly stores (or wrongly does not) is visible.
"""
import re

import numpy as np
import pytest

import pypto_sim as pto

from random_kernels import FakePto, FakePtr, RandomKernel

NP_TO_PTO = {np.dtype(np.float32): pto.float32, np.dtype(np.float16): pto.float16,
             np.dtype(np.int32): pto.int32}


def run(kernel, *args, grid=(1, 1, 1), block=(32, 1, 1)):
    """Launch kernel with numpy arrays copied to device tensors (scalars passed as they are);
    return every array argument, copied back after the kernel, in order."""
    dev, host = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            d = pto.alloc_tensor(a.nbytes, dtype=NP_TO_PTO[a.dtype])
            pto.memcpy_h2d(d, a)
            dev.append(d)
            host.append((d, a))
        else:
            dev.append(a)
    pto.launch(kernel, grid=grid, block=block, args=tuple(dev))
    pto.sync()
    outs = []
    for d, a in host:
        out = np.empty_like(a)
        pto.memcpy_d2h(out, d)
        outs.append(out)
    return outs


def tensor_args(*arrays):
    """Device tensors for arrays (for kernel.asm, which only needs the signature)."""
    out = []
    for a in arrays:
        if isinstance(a, np.ndarray):
            d = pto.alloc_tensor(a.nbytes, dtype=NP_TO_PTO[a.dtype])
            pto.memcpy_h2d(d, a)
            out.append(d)
        else:
            out.append(a)
    return tuple(out)


def asm_lines(listing: str) -> dict:
    """Source text -> the instruction lines it produced (a listing tags only the first one)."""
    by_source, current = {}, None
    for line in listing.splitlines():
        if not re.match(r"^\d{4}\s", line):
            continue
        if ";" in line:
            current = line.split(";", 1)[1].split(":", 1)[1].strip()
        by_source.setdefault(current, []).append(line.split(";", 1)[0])
    return by_source


def sentinel(n, dtype=np.float32, value=-999):
    return np.full(n, value, dtype)


# =============================================================================== values

UNIFORM_VS_LANE = """
@pto.kernel
def scale(a, o, n):
    i = pto.get_global_id()
    u = n * 3 + 1
    w = u - pto.get_block_id()
    x = pto.load(a + i) * u
    o[i] = x + w
"""


def test_uniform_arithmetic_runs_on_the_scalar_unit(make_kernels):
    """Values that are the same in every lane of a warp (kernel scalars, block ids and arithmetic
    on them) live in scalar `s` registers and are computed once per warp; anything derived from
    a lane id or a per-lane load is a `v` (lane) register. The result is the same either way."""
    k = make_kernels(UNIFORM_VS_LANE).scale
    a = np.arange(64, dtype=np.float32)
    lines = asm_lines(k.asm(grid=(2, 1, 1), block=(32, 1, 1), args=tensor_args(a, a, 5)))
    assert all(re.search(r"\s+s\d+,", ins) for ins in lines["u = n * 3 + 1"]), lines
    assert all(re.search(r"\s+s\d+,", ins) for ins in lines["w = u - pto.get_block_id()"]), lines
    assert any(re.search(r"MUL\.float32\s+v\d+", ins) for ins in lines["x = pto.load(a + i) * u"])
    assert any(re.search(r"GLOBAL_ID\s+v\d+", ins) for ins in lines["i = pto.get_global_id()"])
    _, o = run(k, a, sentinel(64), 5, grid=(2, 1, 1))
    block = np.repeat([0, 1], 32)
    np.testing.assert_array_equal(o, a * 16 + 16 - block)


INT_OPS = """
@pto.kernel
def int_ops(a, b, o, n):
    i = pto.get_global_id()
    x = pto.load(a + i)
    y = pto.load(b + i)
    o[i] = x + y
    o[n + i] = x - y
    o[2 * n + i] = x * y
    o[3 * n + i] = x // y
    o[4 * n + i] = x % y
    o[5 * n + i] = x & y
    o[6 * n + i] = x | y
    o[7 * n + i] = x ^ y
    o[8 * n + i] = x << (y & 7)
    o[9 * n + i] = x >> (y & 7)
    o[10 * n + i] = -x
    o[11 * n + i] = ~x
    o[12 * n + i] = int(not x)
    o[13 * n + i] = +x
"""


def test_int_operators_follow_python(make_kernels):
    """Every Python binary and unary operator on int32 lane values, with Python's meaning:
    `//` and `%` round toward minus infinity (so -7 // 2 == -4 and -7 % 2 == 1), `>>` is an
    arithmetic shift, `~x == -x - 1`, `not x` is `x == 0`."""
    rng = np.random.default_rng(1)
    n = 32
    a = rng.integers(-50, 50, n).astype(np.int32)
    b = rng.integers(-9, 10, n).astype(np.int32)
    b[b == 0] = 3
    a[:4], b[:4] = [-7, 7, -7, 7], [2, -2, -2, 2]
    k = make_kernels(INT_OPS).int_ops
    _, _, o = run(k, a, b, sentinel(14 * n, np.int32), n)
    expect = [a + b, a - b, a * b, a // b, a % b, a & b, a | b, a ^ b, a << (b & 7),
              a >> (b & 7), -a, ~a, (a == 0).astype(np.int32), a]
    for j, e in enumerate(expect):
        np.testing.assert_array_equal(o[j * n:(j + 1) * n], e, err_msg=f"operator #{j}")


UNIFORM_INT_OPS = """
@pto.kernel
def scalar_ops(o, p, q):
    i = pto.get_global_id()
    if i == 0:
        o[0] = p + q
        o[1] = p - q
        o[2] = p * q
        o[3] = p // q
        o[4] = p % q
        o[5] = p & q
        o[6] = p | q
        o[7] = p ^ q
        o[8] = p << 3
        o[9] = p >> 2
        o[10] = -p
        o[11] = ~p
        o[12] = -7 // 2
        o[13] = -7 % 2
"""


def test_uniform_int_operators_match_lane_operators(make_kernels):
    """The scalar unit (uniform values) and constant folding at compile time give the same
    answers as the lanes and as Python: -23 // 5 == -5, -23 % 5 == 2, -23 >> 2 == -6."""
    k = make_kernels(UNIFORM_INT_OPS).scalar_ops
    p, q = -23, 5
    (o,) = run(k, sentinel(14, np.int32), p, q)
    expect = [p + q, p - q, p * q, p // q, p % q, p & q, p | q, p ^ q, p << 3, p >> 2, -p, ~p,
              -7 // 2, -7 % 2]
    assert o.tolist() == expect


FLOAT_OPS = """
@pto.kernel
def float_ops(a, b, o, n):
    i = pto.get_global_id()
    x = pto.load(a + i)
    y = pto.load(b + i)
    o[i] = x + y
    o[n + i] = x - y
    o[2 * n + i] = x * y
    o[3 * n + i] = x / y
    o[4 * n + i] = x // y
    o[5 * n + i] = x % y
    o[6 * n + i] = -x
    o[7 * n + i] = float(not x)
"""


def test_float_operators_follow_python(make_kernels):
    """Float operators round each result to float32 (as numpy float32 does); `//` is floor
    division and `%` takes the divisor's sign, as in Python."""
    rng = np.random.default_rng(2)
    n = 32
    a = (rng.standard_normal(n) * 10).astype(np.float32)
    b = (rng.standard_normal(n) * 3).astype(np.float32)
    a[0], b[0] = -7.5, 2.0
    a[1] = 0.0
    k = make_kernels(FLOAT_OPS).float_ops
    _, _, o = run(k, a, b, sentinel(8 * n), n)
    exact = [a + b, a - b, a * b, a / b]
    for j, e in enumerate(exact):
        np.testing.assert_array_equal(o[j * n:(j + 1) * n], e, err_msg=f"operator #{j}")
    np.testing.assert_allclose(o[4 * n:5 * n], np.floor_divide(a, b), rtol=1e-6)
    np.testing.assert_allclose(o[5 * n:6 * n], np.mod(a, b), rtol=1e-5, atol=1e-5)
    assert o[4 * n] == -4.0 and o[5 * n] == 0.5
    np.testing.assert_array_equal(o[6 * n:7 * n], -a)
    np.testing.assert_array_equal(o[7 * n:8 * n], (a == 0).astype(np.float32))


COMPARE = """
@pto.kernel
def compare(a, b, o, n):
    i = pto.get_global_id()
    x = pto.load(a + i)
    y = pto.load(b + i)
    o[i] = int(x < y)
    o[n + i] = int(x <= y)
    o[2 * n + i] = int(x > y)
    o[3 * n + i] = int(x >= y)
    o[4 * n + i] = int(x == y)
    o[5 * n + i] = int(x != y)
    o[6 * n + i] = int(0 <= x < y)
    o[7 * n + i] = int(y > x > -3 != i)
"""


def test_comparisons_including_chained(make_kernels):
    """All six comparisons, and chained ones: `0 <= x < y` means `0 <= x and x < y` (each
    operand evaluated once), as in Python."""
    rng = np.random.default_rng(3)
    n = 32
    a = rng.integers(-5, 5, n).astype(np.int32)
    b = rng.integers(-5, 5, n).astype(np.int32)
    k = make_kernels(COMPARE).compare
    _, _, o = run(k, a, b, sentinel(8 * n, np.int32), n)
    i = np.arange(n)
    expect = [a < b, a <= b, a > b, a >= b, a == b, a != b, (0 <= a) & (a < b),
              (b > a) & (a > -3) & (-3 != i)]
    for j, e in enumerate(expect):
        np.testing.assert_array_equal(o[j * n:(j + 1) * n], e.astype(np.int32), err_msg=f"#{j}")


SHORT_CIRCUIT = """
@pto.kernel
def guarded(a, o, n):
    i = pto.get_global_id()
    if i < n and pto.load(a + i) > 0:
        o[i] = 1
    elif i >= n or pto.load(a + i) < -5:
        o[i] = 2
    else:
        o[i] = 3
    ok = i < n and pto.load(a + i) != 0
    o[64 + i] = int(ok)

@pto.kernel
def eager(a, o, n):
    i = pto.get_global_id()
    if (i < n) & (pto.load(a + i) > 0):
        o[i] = 1
"""


def test_and_or_short_circuit_per_lane(make_kernels):
    """`i < n and pto.load(a + i) > 0` must not evaluate the load in lanes where `i < n` is
    false: `a` holds only n = 20 elements, so lanes 20..31 would fault with an out-of-bounds
    error if the right-hand side ran in every lane. Likewise `i >= n or ...`: lanes whose left
    side is true skip the right side."""
    n = 20
    a = np.array([(-1) ** j * j for j in range(n)], dtype=np.float32)
    k = make_kernels(SHORT_CIRCUIT).guarded
    _, o = run(k, a, sentinel(96, np.int32), n)
    i = np.arange(32)
    av = np.concatenate([a, np.zeros(12, np.float32)])
    expect = np.where((i < n) & (av > 0), 1, np.where((i >= n) | (av < -5), 2, 3))
    np.testing.assert_array_equal(o[:32], expect)
    np.testing.assert_array_equal(o[64:], ((i < n) & (av != 0)).astype(np.int32))
    # the same condition with `&` (no short circuit) does read a[20..31], and faults
    with pytest.raises(pto.OutOfBoundsError, match=r"lane 20"):
        run(make_kernels(SHORT_CIRCUIT).eager, a, sentinel(96, np.int32), n)


BOOL_VALUES = """
@pto.kernel
def pick(a, o):
    i = pto.get_global_id()
    x = pto.load(a + i)
    o[i] = x or 100.0
    o[32 + i] = x and 7.0
    o[64 + i] = (x > 2.0) or (x < -2.0)
"""


def test_and_or_return_an_operand_like_python(make_kernels):
    """`x or 100.0` is x where x is non-zero and 100.0 elsewhere; `x and 7.0` is 7.0 where x is
    non-zero and x (zero) elsewhere: Python returns one of the operands, not a bool. On
    comparisons the result is the bool, as in Python."""
    a = np.array([0.0, 1.5, -3.0, 0.0] * 8, dtype=np.float32)
    k = make_kernels(BOOL_VALUES).pick
    _, o = run(k, a, sentinel(96))
    np.testing.assert_array_equal(o[:32], np.where(a != 0, a, 100.0))
    np.testing.assert_array_equal(o[32:64], np.where(a != 0, 7.0, a))
    np.testing.assert_array_equal(o[64:], ((a > 2) | (a < -2)).astype(np.float32))


BOOLS = """
@pto.kernel
def bools(o, n):
    i = pto.get_global_id()
    if i % 2 == 1:
        n = n + 1
    found = False
    for j in range(n):
        if j == i % 5:
            found = True
    o[i] = n * 10 + int(found)
    cnt = 0
    flag = i > 10
    while flag:
        cnt += 1
        flag = cnt < i % 4
    o[32 + i] = cnt + (flag == 0) * 100 + (i > 20) + -(i < 3)
"""


def test_bool_variables_and_bool_arithmetic(make_kernels):
    """Bool variables set under per-lane control, a scalar parameter reassigned in some lanes
    only (it becomes per-lane), and arithmetic on bools, which is integer arithmetic as in
    Python: `(flag == 0) * 100`, `cnt + (i > 20)`, `-(i < 3)`."""
    def py(i, n=3):
        if i % 2 == 1:
            n += 1
        found = any(j == i % 5 for j in range(n))
        cnt, flag = 0, i > 10
        while flag:
            cnt += 1
            flag = cnt < i % 4
        return n * 10 + int(found), cnt + (flag == 0) * 100 + (i > 20) + -(i < 3)
    (o,) = run(make_kernels(BOOLS).bools, sentinel(64, np.int32), 3)
    assert o[:32].tolist() == [py(i)[0] for i in range(32)]
    assert o[32:].tolist() == [py(i)[1] for i in range(32)]


PROMOTION = """
@pto.kernel
def promote(a, h, o, n):
    i = pto.get_global_id()
    x = pto.load(a + i)
    hx = pto.load(h + i)
    o[i] = i / 4
    o[n + i] = i // 4
    o[2 * n + i] = i * 0.5
    o[3 * n + i] = x + i
    o[4 * n + i] = hx * 3.0
    o[5 * n + i] = hx + x
    o[6 * n + i] = float(i) / 3
    o[7 * n + i] = int(x * 0.75)
    o[8 * n + i] = (i + 1) * n
"""


def test_int_float_promotion(make_kernels):
    """Promotion as in Python and numpy: `/` on ints is true division (float32), `//` stays
    int; int with float gives float32; a float literal adopts a float16 operand's dtype
    (`hx * 3.0` is computed in float16, as in Triton), float16 with float32 gives float32;
    `int(x)` truncates toward zero."""
    n = 32
    i = np.arange(n)
    a = (np.arange(n, dtype=np.float32) - 16) * 1.3
    h = (np.arange(n, dtype=np.float16) * np.float16(0.7)).astype(np.float16)
    k = make_kernels(PROMOTION).promote
    _, _, o = run(k, a, h, sentinel(9 * n), n)
    f32 = np.float32
    expect = [(i / 4).astype(f32), i // 4, i * f32(0.5), a + i.astype(f32),
              (h * np.float16(3.0)).astype(f32), h.astype(f32) + a, i.astype(f32) / f32(3),
              np.trunc(a * f32(0.75)), (i + 1) * n]
    for j, e in enumerate(expect):
        np.testing.assert_array_equal(o[j * n:(j + 1) * n], np.asarray(e, f32), err_msg=f"#{j}")


FLOAT16 = """
@pto.kernel
def half(a, b, o):
    i = pto.get_global_id()
    x = pto.load(a + i)
    y = pto.load(b + i)
    o[i] = x * y + x / y
"""


def test_float16_tensors_compute_in_float16(make_kernels):
    """float16 tensors load float16 values; arithmetic on two float16 values rounds each
    result to float16, exactly as numpy float16 does; the store writes float16."""
    rng = np.random.default_rng(4)
    a = rng.uniform(-4, 4, 32).astype(np.float16)
    b = rng.uniform(0.5, 3, 32).astype(np.float16)
    k = make_kernels(FLOAT16).half
    _, _, o = run(k, a, b, np.zeros(32, np.float16))
    np.testing.assert_array_equal(o, a * b + a / b)


MATH = """
@pto.kernel
def maths(a, b, o, n):
    i = pto.get_global_id()
    x = pto.load(a + i)
    y = pto.load(b + i)
    o[i] = pto.min(x, y)
    o[n + i] = pto.max(x, y)
    o[2 * n + i] = pto.abs(x)
    o[3 * n + i] = pto.exp(x)
    o[4 * n + i] = pto.log(y)
    o[5 * n + i] = pto.sqrt(y)
    o[6 * n + i] = pto.rsqrt(y)
    o[7 * n + i] = pto.select(x > y, x * 2.0, y)
    o[8 * n + i] = pto.cast(pto.cast(x * 10.0, pto.int32), pto.float32)
    o[9 * n + i] = min(x, y, 0.5)
    o[10 * n + i] = max(x, y, 0.5)
    o[11 * n + i] = abs(x)
    o[12 * n + i] = float(i) + int(x)
    o[13 * n + i] = pto.cast(x, pto.float16)
"""


def test_math_builtins(make_kernels):
    """pto.min/max/abs/exp/log/sqrt/rsqrt/select/cast and Python's min/max (any number of
    arguments), abs, float and int all work on lane values."""
    rng = np.random.default_rng(5)
    n = 32
    a = rng.uniform(-3, 3, n).astype(np.float32)
    b = rng.uniform(0.1, 5, n).astype(np.float32)
    k = make_kernels(MATH).maths
    _, _, o = run(k, a, b, sentinel(14 * n), n)
    i = np.arange(n, dtype=np.float32)
    f32 = np.float32
    expect = [np.minimum(a, b), np.maximum(a, b), np.abs(a), np.exp(a), np.log(b), np.sqrt(b),
              1 / np.sqrt(b), np.where(a > b, a * 2, b), np.trunc(a * f32(10)),
              np.minimum(np.minimum(a, b), 0.5), np.maximum(np.maximum(a, b), 0.5), np.abs(a),
              i + np.trunc(a), a.astype(np.float16).astype(f32)]
    for j, e in enumerate(expect):
        np.testing.assert_allclose(o[j * n:(j + 1) * n], np.asarray(e, f32), rtol=1e-6,
                                   err_msg=f"#{j}")


INT_TENSORS = """
@pto.kernel
def hist(a, o, n):
    i = pto.get_global_id()
    if i < n:
        v = pto.load(a + i)
        o[i] = pto.max(v, 0) * 2 + pto.abs(v) % 3 + min(v, 1)
"""


def test_int32_tensors_stay_int32(make_kernels):
    """int32 tensors load and store int32 values; pto.max/abs and Python min on them stay
    integer (no float round trip: values beyond 2**24 survive)."""
    a = np.array([-5, 0, 7, 2**28 + 3, -(2**29) - 1] * 6 + [1, 2], dtype=np.int32)
    k = make_kernels(INT_TENSORS).hist
    _, o = run(k, a, sentinel(32, np.int32), 32)
    np.testing.assert_array_equal(o, np.maximum(a, 0) * 2 + np.abs(a) % 3 + np.minimum(a, 1))


ALIASING = """
@pto.kernel
def bump(x, n):
    first = x
    for k in range(n):
        x = x + 1
    return x * 100 + first

@pto.kernel
def copies(a, o, n):
    i = pto.get_global_id()
    x = i * 2
    y = x
    x = x + 1
    p = a + i
    q = p
    p = p + 1
    o[i] = y
    o[32 + i] = pto.load(q)
    o[64 + i] = bump(5, n)
    o[96 + i] = bump(i, n)
"""


def test_assignment_copies_the_value(make_kernels):
    """`y = x` gives y the value x has now: assigning x afterwards does not change y (nor does
    stepping p change q after `q = p`). A helper may assign its parameters, also when the
    caller passed a literal (`bump(5, n)` counts from 5 in a loop)."""
    a = np.arange(40, dtype=np.float32) * 10
    _, o = run(make_kernels(ALIASING).copies, a, sentinel(128, np.int32), 3)
    i = np.arange(32)
    np.testing.assert_array_equal(o[:32], 2 * i)
    np.testing.assert_array_equal(o[32:64], a[:32])
    np.testing.assert_array_equal(o[64:96], [805] * 32)
    np.testing.assert_array_equal(o[96:], (i + 3) * 100 + i)


# =============================================================================== pointers

POINTERS = """
@pto.kernel
def ptrs(a, o, n):
    i = pto.get_global_id()
    x = pto.load(a + i)
    y = pto.load(a[i])
    z = pto.load(i + a)
    w = pto.load((a + 1)[i - 1])
    o[i] = x
    o[n + i] = y
    pto.store(o + 2 * n + i, z)
    o[3 * n + i] = w
    p = o + 4 * n
    p[i] = pto.load(a + n - 1 - i)
"""


def test_pointer_forms(make_kernels):
    """`a + i`, `a[i]`, `i + a` and `(a + 1)[i - 1]` are the same address; `pto.load(ptr)`
    reads it; `o[i] = v` is `pto.store(o + i, v)`; a pointer can be kept in a variable."""
    n = 32
    a = np.arange(n, dtype=np.float32) * 3
    k = make_kernels(POINTERS).ptrs
    _, o = run(k, a, sentinel(5 * n), n)
    for j in range(4):
        np.testing.assert_array_equal(o[j * n:(j + 1) * n], a)
    np.testing.assert_array_equal(o[4 * n:], a[::-1])


POINTER_LOOP = """
@pto.kernel
def row_sums(a, o, cols):
    r = pto.get_global_id()
    p = a + r * cols
    q = o + r
    acc = 0.0
    for c in range(cols):
        acc = acc + pto.load(p)
        p = p + 1
    pto.store(q, acc)
    p = a + r * cols + cols - 1
    while p >= a + r * cols:
        pto.store(q + 32, pto.load(p))
        p = p - 2
"""


def test_pointer_variable_reassigned_in_a_loop(make_kernels):
    """A pointer variable can be stepped in a loop (`p = p + 1`) and compared with another
    pointer into the same tensor; each lane walks its own row."""
    cols = 5
    a = np.arange(32 * cols, dtype=np.float32).reshape(32, cols)
    k = make_kernels(POINTER_LOOP).row_sums
    _, o = run(k, a.ravel(), sentinel(64), cols)
    np.testing.assert_array_equal(o[:32], a.sum(axis=1))
    np.testing.assert_array_equal(o[32:], a[:, 0])


# =============================================================================== control flow

IF_CHAIN = """
@pto.kernel
def classify(a, o):
    i = pto.get_global_id()
    x = pto.load(a + i)
    if x < 0:
        if x < -10:
            r = 0
        else:
            r = 1
    elif x == 0:
        r = 2
    elif x < 10:
        if i % 2 == 0:
            r = 3
        elif i % 3 == 0:
            r = 4
        else:
            r = 5
    else:
        r = 6
    o[i] = r
"""


def test_nested_if_elif_else_per_lane(make_kernels):
    """if/elif/else on per-lane conditions, nested: every lane ends up with the value of the one
    branch Python would take for it, even though the warp runs every branch under masks."""
    a = np.array([-20, -5, 0, 3, 50, 4, 9, 10] * 4, dtype=np.float32)
    k = make_kernels(IF_CHAIN).classify
    _, o = run(k, a, sentinel(32, np.int32))

    def py(x, i):
        if x < 0:
            return 0 if x < -10 else 1
        if x == 0:
            return 2
        if x < 10:
            return 3 if i % 2 == 0 else 4 if i % 3 == 0 else 5
        return 6
    assert o.tolist() == [py(x, i) for i, x in enumerate(a)]


UNIFORM_IF = """
@pto.kernel
def mode(a, o, flag):
    i = pto.get_global_id()
    x = pto.load(a + i)
    if flag > 0:
        y = x * 2.0
    else:
        y = x - 1.0
    if FAST:
        y = y + 100.0
    o[i] = y
FAST = False
"""


def test_uniform_if(make_kernels):
    """An `if` on a uniform value takes one side for the whole warp, with the condition on the
    scalar unit; an `if` on a module constant is decided at compile time (no IF emitted)."""
    k = make_kernels(UNIFORM_IF).mode
    a = np.arange(32, dtype=np.float32)
    listing = k.asm(args=tensor_args(a, a, 1))
    ifs = [line for line in listing.splitlines() if re.search(r"\bIF\b", line)]
    assert len(ifs) == 1 and re.search(r"IF\s+s\d+", ifs[0]), listing
    _, o = run(k, a, sentinel(32), 1)
    np.testing.assert_array_equal(o, a * 2)
    _, o = run(k, a, sentinel(32), 0)
    np.testing.assert_array_equal(o, a - 1)


RANGES = """
@pto.kernel
def ranges(o, n, step):
    i = pto.get_global_id()
    s1 = 0
    for k in range(5):
        s1 += k
    s2 = 0
    for k in range(2, n):
        s2 += k
    s3 = 0
    for k in range(1, 20, 3):
        s3 += k
    s4 = 0
    for k in range(10, 0, -3):
        s4 = s4 * 10 + k
    s5 = 0
    for k in range(i):
        s5 += k
    s6 = 0
    for k in range(i, 0, -2):
        s6 += 1
    s7 = 0
    for k in range(i % 4, i % 7, step):
        s7 = s7 * 10 + k + 1
    s8 = 0
    for k in range(n, i % 5, -1):
        s8 += k
    o[i] = s1
    o[32 + i] = s2
    o[64 + i] = s3
    o[96 + i] = s4
    o[128 + i] = s5
    o[160 + i] = s6
    o[192 + i] = s7
    o[224 + i] = s8
"""


@pytest.mark.parametrize("step", [1, 2, -1])
def test_for_range_forms(make_kernels, step):
    """range with 1, 2 and 3 arguments, negative steps, a runtime (uniform) step whose sign is
    only known at launch, and per-lane bounds (each lane runs its own number of iterations)."""
    n = 6
    k = make_kernels(RANGES).ranges
    (o,) = run(k, sentinel(256, np.int32), n, step)

    def digits(it):
        s = 0
        for v in it:
            s = s * 10 + v
        return s
    for i in range(32):
        got = o[i::32].tolist()
        expect = [sum(range(5)), sum(range(2, n)), sum(range(1, 20, 3)),
                  digits(range(10, 0, -3)), sum(range(i)), len(range(i, 0, -2)),
                  digits(k + 1 for k in range(i % 4, i % 7, step)), sum(range(n, i % 5, -1))]
        assert got == expect, f"lane {i}"


RANGE_BOUNDS_FROZEN = """
@pto.kernel
def frozen(o):
    i = pto.get_global_id()
    n = i % 4
    count = 0
    k = 0
    for k in range(n):
        n = n + 1
        count += 1
    o[i] = count * 100 + k
    total = 0
    for j in range(5):
        total += j
        j = j * 10
        total += j
    o[32 + i] = total
"""


def test_range_loop_variable_behaves_as_in_python(make_kernels):
    """As in Python, range(n) evaluates n once (changing n in the body does not change the
    trip count); after the loop the variable holds the last value range gave it (n - 1, not
    n), or its old value if the loop ran zero times; assigning the variable in the body does
    not change the next iteration's value."""
    k = make_kernels(RANGE_BOUNDS_FROZEN).frozen
    (o,) = run(k, sentinel(64, np.int32))
    assert o[:32].tolist() == [(i % 4) * 100 + max(i % 4 - 1, 0) for i in range(32)]
    assert o[32:].tolist() == [sum(j + 10 * j for j in range(5))] * 32


def test_loop_variable_needs_no_copy_when_unobservable(make_kernels):
    """When the loop variable is neither assigned in the body nor read after the loop, it is
    itself the counter: the loop costs no extra instruction per iteration."""
    k = make_kernels("""
@pto.kernel
def plain(o):
    i = pto.get_global_id()
    s = 0
    for k in range(4):
        s += k
    for k in range(3):
        s += k
    o[i] = s
""").plain
    listing = k.asm(args=tensor_args(sentinel(32, np.int32)))
    assert "MOV.int32" not in listing.split("LOOP ", 1)[1].split("ENDLOOP", 1)[0], listing
    (o,) = run(k, sentinel(32, np.int32))
    assert o.tolist() == [9] * 32


WHILE = """
@pto.kernel
def collatz(o):
    i = pto.get_global_id()
    x = i + 1
    steps = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    o[i] = steps
"""


def test_while_with_per_lane_trip_counts(make_kernels):
    """`while` on a per-lane condition: each lane iterates until its own condition is false
    (Collatz step counts of 1..32 range from 0 to 111)."""
    def steps(x):
        s = 0
        while x != 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            s += 1
        return s
    (o,) = run(make_kernels(WHILE).collatz, sentinel(32, np.int32))
    assert o.tolist() == [steps(i + 1) for i in range(32)]


BREAK_CONTINUE = """
@pto.kernel
def jumps(o, limit):
    i = pto.get_global_id()
    a = 0
    for k in range(20):
        if k == i % 7 + 3:
            break
        if k % 3 == i % 3:
            continue
        a = a * 2 + k
    b = 0
    for k in range(20):
        if k == limit:
            break
        if k % 2 == 1:
            continue
        b += k
    c = 0
    k = 0
    while True:
        k += 1
        if k > i:
            break
        if k % 4 == 0:
            continue
        c += k
    d = 0
    for outer in range(4):
        for inner in range(10):
            if inner >= outer + i % 3:
                break
            d += 1
        if outer == 2 and i % 2 == 1:
            continue
        d += 100
    o[i] = a
    o[32 + i] = b
    o[64 + i] = c
    o[96 + i] = d
"""


def test_break_and_continue(make_kernels):
    """break/continue taken by some lanes only (those lanes wait for the rest of the warp and
    resume after the loop / at the next iteration), taken by the whole warp (uniform limit),
    in a `while True`, and in nested loops (break leaves only the inner loop)."""
    limit = 9
    (o,) = run(make_kernels(BREAK_CONTINUE).jumps, sentinel(128, np.int32), limit)
    for i in range(32):
        a = 0
        for k in range(20):
            if k == i % 7 + 3:
                break
            if k % 3 == i % 3:
                continue
            a = a * 2 + k
        b = sum(k for k in range(limit) if k % 2 == 0)
        c = sum(k for k in range(1, i + 1) if k % 4)
        d = 0
        for outer in range(4):
            d += min(10, outer + i % 3)
            if not (outer == 2 and i % 2 == 1):
                d += 100
        assert o[i::32].tolist() == [a, b, c, d], f"lane {i}"


BREAK_AFTER_INNER_LOOP = """
@pto.kernel
def stop(a, o):
    i = pto.get_global_id()
    last = -1
    for k in range(6):
        w = 0
        while w < i % 3:
            w += 1
        last = k * 10 + w
        if k == i % 4:
            break
    o[i] = last
    o[32 + i] = k
"""


def test_break_after_a_per_lane_inner_loop(make_kernels):
    """A per-lane `break` that follows a per-lane inner loop still makes the outer loop per-lane:
    a lane that broke out keeps the `last` and `k` it had, while the other lanes go on."""
    _, o = run(make_kernels(BREAK_AFTER_INNER_LOOP).stop, np.zeros(1, np.float32),
               sentinel(64, np.int32))
    i = np.arange(32)
    np.testing.assert_array_equal(o[:32], (i % 4) * 10 + i % 3)
    np.testing.assert_array_equal(o[32:], i % 4)


EARLY_RETURN = """
@pto.kernel
def early(a, o, n):
    i = pto.get_global_id()
    if i >= n:
        return
    x = pto.load(a + i)
    for k in range(10):
        if k * k > x:
            o[i] = k
            return
    o[i] = -1
"""


def test_early_return_per_lane(make_kernels):
    """`return` taken by some lanes retires them for the rest of the kernel (they do not load
    out of bounds, do not run later stores); a return inside a loop leaves the loop and the
    kernel. The other lanes carry on."""
    n = 24
    a = np.array([j * 4 for j in range(n)], dtype=np.float32)
    k = make_kernels(EARLY_RETURN).early
    _, o = run(k, a, sentinel(32, np.int32), n)
    expect = [next((k for k in range(10) if k * k > x), -1) for x in a] + [-999] * 8
    assert o.tolist() == expect


LOOPS_IN_IFS = """
@pto.kernel
def nested(o):
    i = pto.get_global_id()
    acc = 0
    if i % 2 == 0:
        for k in range(i):
            if k % 5 == 4:
                continue
            acc += k
    else:
        x = i
        while x > 0:
            x = x - 3
            if x == 4:
                break
            acc += 1
    if i > 20:
        for k in range(3):
            for m in range(i - 20):
                acc += 1000
    o[i] = acc
"""


def test_loops_nested_in_divergent_ifs(make_kernels):
    """Loops inside both sides of a divergent `if` (with break/continue in them) and nested
    loops under an `if` only some lanes take: the masks of the if and the loops compose."""
    def py(i):
        acc = 0
        if i % 2 == 0:
            acc += sum(k for k in range(i) if k % 5 != 4)
        else:
            x = i
            while x > 0:
                x -= 3
                if x == 4:
                    break
                acc += 1
        if i > 20:
            acc += 3 * (i - 20) * 1000
        return acc
    (o,) = run(make_kernels(LOOPS_IN_IFS).nested, sentinel(32, np.int32))
    assert o.tolist() == [py(i) for i in range(32)]


TERNARY = """
@pto.kernel
def tern(a, o, n):
    i = pto.get_global_id()
    x = pto.load(a + i) if i < n else -1.0
    y = x * 2.0 if x > 3.0 else (0.0 if x < 0.0 else x)
    o[i] = y
    o[32 + i] = i if i % 2 == 0 else n
    o[64 + i] = 0 if x < 2.0 else x
    o[96 + i] = x if i % 3 == 0 else i
"""


def test_conditional_expression(make_kernels):
    """`x if c else y` evaluates only the chosen side in each lane: the load on the left is not
    run for lanes i >= n (a holds n = 20 elements; running it would fault). The result has the
    promoted dtype of both sides: `0 if x < 2.0 else x` is float32 (x is not truncated to the
    literal's int), `x if c else i` is float32 too."""
    n = 20
    a = np.arange(n, dtype=np.float32) * 0.5
    _, o = run(make_kernels(TERNARY).tern, a, sentinel(128), n)
    x = np.concatenate([a, -np.ones(12, np.float32)])
    np.testing.assert_array_equal(o[:32], np.where(x > 3, x * 2, np.where(x < 0, 0, x)))
    i = np.arange(32)
    np.testing.assert_array_equal(o[32:64], np.where(i % 2 == 0, i, n))
    np.testing.assert_array_equal(o[64:96], np.where(x < 2, 0, x))
    np.testing.assert_array_equal(o[96:], np.where(i % 3 == 0, x, i))


TWO_WARPS = """
@pto.kernel
def warps(o):
    i = pto.get_global_id()
    w = pto.get_warp_id()
    acc = 0
    if w == 1:
        for k in range(pto.get_lane_id()):
            acc += 2
    else:
        acc = -1
    o[i] = acc
"""


def test_warps_of_a_block_diverge_independently(make_kernels):
    """A block of 64 lanes is two warps; a condition on the warp id is uniform within each warp."""
    (o,) = run(make_kernels(TWO_WARPS).warps, sentinel(64, np.int32), block=(64, 1, 1))
    assert o.tolist() == [-1] * 32 + [2 * j for j in range(32)]


# =============================================================================== helpers

HELPERS = """
LIMIT = 10.0

@pto.kernel
def square(x):
    return x * x

@pto.kernel
def clamp(x):
    if x > LIMIT:
        return LIMIT
    if x < -LIMIT:
        return -LIMIT
    return x

@pto.kernel
def sum_of_clamped_squares(x, y):
    s = clamp(square(x)) + clamp(square(y))
    return s

@pto.kernel
def first_multiple(x, m):
    for k in range(1, 20):
        if k * m >= x:
            return k * m
    return -1.0

@pto.kernel
def write_pair(p, v):
    p[0] = v
    p[32] = v + 1.0

@pto.kernel
def use_helpers(a, o):
    i = pto.get_global_id()
    x = pto.load(a + i)
    o[i] = square(x)
    o[32 + i] = clamp(x * 3.0)
    o[64 + i] = sum_of_clamped_squares(x, x - 1.0)
    if i % 2 == 0:
        o[96 + i] = first_multiple(x, 3.0)
    else:
        o[96 + i] = clamp(-x * 3.0)
    write_pair(o + 128 + i, square(square(x)))
"""


def test_helper_kernels_are_inlined(make_kernels):
    """@pto.kernel functions called from a kernel are inlined: a helper returning a value,
    one with early returns inside ifs (each lane gets the value of the return it reached), one
    returning from inside a loop, helpers calling helpers, a helper storing through a pointer
    argument, helpers using module constants, and helpers called under a divergent `if`."""
    a = np.linspace(-5, 5, 32).astype(np.float32)
    m = make_kernels(HELPERS)
    _, o = run(m.use_helpers, a, sentinel(192))
    clamp = lambda v: np.clip(v, -10, 10)  # noqa: E731
    f32 = np.float32

    def first_multiple(x, m):
        for k in range(1, 20):
            if k * m >= x:
                return k * m
        return -1.0
    np.testing.assert_array_equal(o[:32], a * a)
    np.testing.assert_array_equal(o[32:64], clamp(a * f32(3)))
    np.testing.assert_array_equal(o[64:96], clamp(a * a) + clamp((a - f32(1)) ** 2))
    expect = [first_multiple(x, 3.0) if i % 2 == 0 else clamp(-x * f32(3)) for i, x in enumerate(a)]
    np.testing.assert_array_equal(o[96:128], np.asarray(expect, f32))
    np.testing.assert_array_equal(o[128:160], (a * a) * (a * a))
    np.testing.assert_array_equal(o[160:192], (a * a) * (a * a) + 1)


HELPER_IN_LOOP = """
@pto.kernel
def sign_or_stop(x):
    if x == 0:
        return 0
    return 1 if x > 0 else -1

@pto.kernel
def count(a, o):
    i = pto.get_global_id()
    total = 0
    for k in range(8):
        v = pto.load(a + (i + k) % 32)
        s = sign_or_stop(v)
        if s == 0:
            break
        total += s
    o[i] = total
"""


def test_helper_with_early_return_inside_a_loop_with_break(make_kernels):
    """An early-returning helper called inside a loop: its `return` leaves the helper only;
    the caller's own `break` still leaves the caller's loop."""
    a = np.array([1, -2, 3, 0, 5, 6, -7, 8] * 4, dtype=np.int32)
    _, o = run(make_kernels(HELPER_IN_LOOP).count, a, sentinel(32, np.int32))
    expect = []
    for i in range(32):
        t = 0
        for k in range(8):
            v = a[(i + k) % 32]
            if v == 0:
                break
            t += 1 if v > 0 else -1
        expect.append(t)
    assert o.tolist() == expect


HELPER_DTYPES = """
@pto.kernel
def relu(x):
    if x < 0:
        return 0
    return x

@pto.kernel
def half_or_zero(x):
    if x < 0:
        return 0
    if x < 1:
        return 0.5
    return 2

@pto.kernel
def walk_sum(p, n):
    s = 0.0
    for k in range(n):
        s += pto.load(p)
        p = p + 1
    return s

@pto.kernel
def kernel(a, o, n):
    i = pto.get_global_id()
    x = pto.load(a + i)
    o[i] = relu(x)
    o[32 + i] = walk_sum(a + i, n)
    o[64 + i] = half_or_zero(x)
"""


def test_helper_returns_and_pointer_parameters(make_kernels):
    """`return 0` on one path and `return x` (float32) on another returns float32 (the literal
    adopts the dtype, no truncation of x), as do `return 0` / `return 0.5` / `return 2`; a
    helper may step a pointer parameter in a loop, and a pointer argument with a per-lane
    offset makes the helper's loads per-lane."""
    a = np.linspace(-3, 3, 40).astype(np.float32)
    m = make_kernels(HELPER_DTYPES)
    k = m.kernel
    listing = k.asm(args=tensor_args(a, a, 3))
    for text in ("return 0", "s += pto.load(p)"):
        assert f"; {line_of(m, text)}: {text}" in listing, "the listing shows the helper's lines"
    _, o = run(k, a, sentinel(96), 3)
    np.testing.assert_array_equal(o[:32], np.maximum(a[:32], 0))
    np.testing.assert_array_equal(o[32:64], a[:32] + a[1:33] + a[2:34])
    np.testing.assert_array_equal(o[64:], np.where(a[:32] < 0, 0, np.where(a[:32] < 1, 0.5, 2)))


def test_helper_returning_two_dtypes_is_an_error(make_kernels):
    """A helper returns one dtype: an int32 value on one path and a float32 value on another
    is an error at the second return, naming the first, rather than a silent conversion."""
    source = ("@pto.kernel\ndef pick(x, y):\n    if x > 0.0:\n        return pto.get_global_id()\n"
              "    return y\n\n@pto.kernel\ndef bad(n):\n    i = pto.get_global_id()\n"
              "    z = pick(i * 1.0, 2.5)\n")
    err, m = compile_error(make_kernels, source)
    assert (err.file, err.line) == (m.__file__, line_of(m, "    return y"))
    assert "int32" in str(err) and "float32" in str(err)
    assert f"line {line_of(m, 'return pto.get_global_id()')}" in str(err)


def test_and_or_values_of_different_dtypes_is_an_error(make_kernels):
    """`x and i` as a value would be a float32 in some lanes and an int32 in others; that is
    an error suggesting pto.select or a comparison (as a condition, `if x and i:` is fine)."""
    source = ("@pto.kernel\ndef bad(a, o):\n    i = pto.get_global_id()\n    x = pto.load(a + i)\n"
              "    if x and i:\n        o[i] = 1.0\n    o[i] = x and i\n")
    m = make_kernels(source)
    a = np.zeros(32, np.float32)
    with pytest.raises(pto.CompileError) as info:
        m.bad.asm(args=tensor_args(a, a))
    err = info.value
    assert (err.file, err.line) == (m.__file__, line_of(m, "o[i] = x and i"))
    assert "pto.select" in err.hint


def test_pointers_into_different_tensors_cannot_be_compared(make_kernels):
    """Pointers compare by offset only within one tensor."""
    source = ("@pto.kernel\ndef bad(a, o):\n    i = pto.get_global_id()\n    if a + i < o + 4:\n"
              "        o[i] = 1.0\n")
    m = make_kernels(source)
    a = np.zeros(32, np.float32)
    with pytest.raises(pto.CompileError) as info:
        m.bad.asm(args=tensor_args(a, a))
    assert info.value.line == line_of(m, "if a + i < o + 4")
    assert "different tensors" in str(info.value)


def test_literal_arithmetic_keeps_float16(make_kernels):
    """Arithmetic on literals and module constants is folded at compile time and stays a
    Python number: `h * -2.0` and `h * (SCALE * 2)` are float16 multiplies, like `h * 2.0`."""
    k = make_kernels("SCALE = 1.5\n" + FLOAT16.replace("x * y + x / y", "x * -2.0 + y * (SCALE * 2)")).half
    a = np.arange(32, dtype=np.float16)
    listing = k.asm(args=tensor_args(a, a, a))
    assert "MUL.float16" in listing and "float32" not in listing.split("; registers")[1], listing
    _, _, o = run(k, a, a, np.zeros(32, np.float16))
    np.testing.assert_array_equal(o, a * np.float16(-2.0) + a * np.float16(3.0))


CLOSURES = """
OFFSET = 0.25
HALF = np.float32(0.5)

def make_scaler(scale, bias):
    @pto.kernel
    def scaled(x):
        return x * scale + bias + OFFSET
    @pto.kernel
    def kernel(a, o):
        i = pto.get_global_id()
        o[i] = scaled(pto.load(a + i)) * HALF
        o[32 + i] = scale * i
    return kernel

by_three = make_scaler(3.0, 1)
by_two = make_scaler(2, 0)
"""


def test_module_constants_and_closure_variables(make_kernels):
    """Kernels and helpers read module-level constants (Python and numpy scalars) and closure
    variables of the function that created them, as compile-time constants: two kernels made
    by one factory get their own values."""
    m = make_kernels("import numpy as np\n" + CLOSURES)
    a = np.arange(32, dtype=np.float32)
    _, o3 = run(m.by_three, a, sentinel(64))
    _, o2 = run(m.by_two, a, sentinel(64))
    np.testing.assert_array_equal(o3[:32], (a * 3 + 1 + 0.25) * 0.5)
    np.testing.assert_array_equal(o2[:32], (a * 2 + 0 + 0.25) * 0.5)
    np.testing.assert_array_equal(o3[32:], a * 3)
    np.testing.assert_array_equal(o2[32:], a * 2)


NONE_GLOBAL = """
NO_ATOMIC = None


def factory(relu):
    @pto.kernel
    def store_twice(X, O):
        with pto.vector():
            t = pto.alloc_tile(1, 8, pto.float32)
            pto.tload(t, X)
            pto.tstore(O, t, atomic=NO_ATOMIC)
            pto.tstore(O + 8, t, atomic=relu)
    return store_twice


store_twice = factory(None)
"""


def test_a_module_or_closure_none_is_none(make_kernels):
    """A module-level or closure variable holding None is None in the kernel, as the literal is:
    `atomic=NO_ATOMIC` with NO_ATOMIC = None stores plainly (numpy's dtype(None) is float64, which
    the kernel once took it for, refusing the argument)."""
    k = make_kernels(NONE_GLOBAL).store_twice
    x = np.arange(8, dtype=np.float32) - 3
    d_x, d_o = pto.to_device(x), pto.alloc_tensor(64, pto.float32)
    pto.launch(k, grid=(1,), args=(d_x, d_o))
    o = np.empty(16, np.float32)
    pto.memcpy_d2h(o, d_o)
    np.testing.assert_array_equal(o, np.concatenate([x, x]))


# =============================================================================== local memory

LOCAL = """
@pto.kernel
def reverse_and_reduce(a, o, c):
    i = pto.get_lane_id()
    buf = pto.alloc_local(32)
    counts = pto.alloc_local(32, pto.int32)
    buf[i] = pto.load(a + i)
    counts[i] = i * c
    pto.barrier()
    o[i] = pto.load(buf + 31 - i)
    o[32 + i] = pto.load(counts[(i + 1) % 32])
    pto.barrier()
    s = 16
    while s > 0:
        if i < s:
            buf[i] = pto.load(buf + i) + pto.load(buf + i + s)
        pto.barrier()
        s = s // 2
    o[64 + i] = pto.load(buf + 0)
"""


def test_alloc_local_within_one_warp(make_kernels):
    """alloc_local buffers (float32 and int32) are read and written with the same pointer
    syntax as tensors (LOAD_L1/STORE_L1); after pto.barrier() every lane of the warp sees the
    others' writes: a reversal, a rotation and a tree reduction."""
    a = np.arange(32, dtype=np.float32) + 1
    k = make_kernels(LOCAL).reverse_and_reduce
    listing = k.asm(args=tensor_args(a, a, 3))
    assert "LOAD_L1" in listing and "STORE_L1" in listing
    _, o = run(k, a, sentinel(96), 3)
    np.testing.assert_array_equal(o[:32], a[::-1])
    np.testing.assert_array_equal(o[32:64], ((np.arange(32) + 1) % 32) * 3)
    np.testing.assert_array_equal(o[64:], np.full(32, a.sum()))


# =============================================================================== errors

def compile_error(make_kernels, source, name="bad", args=(1,)):
    """Compile `name` from source (a module) and return the CompileError it raises."""
    m = make_kernels(source)
    with pytest.raises(pto.CompileError) as info:
        getattr(m, name).asm(args=args)
    return info.value, m


def line_of(module, text):
    """1-based line number of the first line of module's file containing text."""
    lines = open(module.__file__).read().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


UNSUPPORTED = [
    ("try", "    try:\n        x = 1\n    except Exception:\n        x = 2\n", "try:", r"\btry\b"),
    ("with", "    with open('f') as f:\n        x = 1\n", "with open", r"with open\('f'\)"),
    ("list", "    x = [1, 2, 3]\n", "x = [1", r"list"),
    ("lambda", "    f = lambda v: v + 1\n", "lambda", r"lambda"),
    ("python function", "    x = helper_py(n)\n", "helper_py(n)", r"helper_py"),
    ("str constant", "    x = 'hello'\n", "'hello'", r"'hello'"),
    ("for over list", "    for x in SOME_LIST:\n        pass\n", "for x in", r"SOME_LIST"),
    ("undefined name", "    x = nosuchname + 1\n", "nosuchname", r"nosuchname"),
    ("dict", "    x = {1: 2}\n", "x = {1", r"dict"),
    ("import", "    import math\n", "import math", r"import"),
    ("global", "    global G\n", "global G", r"global"),
    ("power", "    x = i ** 2\n", "i ** 2", r"i \*\* 2"),
    ("int32 overflow", "    x = i + BIG\n", "i + BIG", r"1099511627776 does not fit in int32"),
    ("nested def", "    def inner():\n        pass\n", "def inner", r"inner"),
]


@pytest.mark.parametrize("what,body,marker,pattern", UNSUPPORTED, ids=[u[0] for u in UNSUPPORTED])
def test_unsupported_constructs_name_file_line_and_construct(make_kernels, what, body, marker, pattern):
    """Anything outside the kernel language is a CompileError at compile time whose message
    names the file, the line and the construct, so the user can find it."""
    source = ("SOME_LIST = [1, 2]\nBIG = 2 ** 40\n\ndef helper_py(v):\n    return v\n\n"
              "@pto.kernel\ndef bad(n):\n    i = pto.get_global_id()\n" + body)
    err, m = compile_error(make_kernels, source)
    assert err.file == m.__file__
    assert err.line == line_of(m, marker)
    text = str(err)
    assert f"{m.__file__}:{err.line}" in text
    assert re.search(pattern, text), text


def test_variable_changing_dtype_suggests_a_fix(make_kernels):
    """A variable keeps one dtype: assigning a float32 value to a variable that started as an
    int32 is an error at the second assignment, naming both lines and suggesting the fix
    (initialise it as a float, or cast)."""
    source = ("@pto.kernel\ndef bad(a, n):\n    i = pto.get_global_id()\n    acc = 0\n"
              "    for k in range(n):\n        acc = acc + pto.load(a + k)\n")
    m = make_kernels(source)
    a = np.zeros(4, np.float32)
    with pytest.raises(pto.CompileError) as info:
        m.bad.asm(args=tensor_args(a, 4))
    err = info.value
    assert err.file == m.__file__
    assert err.line == line_of(m, "acc = acc +")
    text = str(err)
    assert "acc" in text and "int32" in text and "float32" in text
    assert f"line {line_of(m, 'acc = 0')}" in text
    assert "acc = 0.0" in err.hint and "pto.cast" in err.hint, err.hint


def test_an_indexed_tensor_reads_its_element_in_a_value_context(make_kernels):
    """`a[i]` is the address `a + i` where a pointer is expected (pto.load(a[i]), a[i] = v) and
    the element everywhere else, as in CUDA and Triton: `o[i] = a[i] * 2.0` loads a[i]."""
    source = ("@pto.kernel\ndef double(a, o):\n    i = pto.get_global_id()\n"
              "    o[i] = a[i] * 2.0\n    x = a[i]\n    o[32 + i] = pto.load(a[i]) + x\n")
    m = make_kernels(source)
    a = np.arange(32, dtype=np.float32)
    o = np.zeros(64, np.float32)
    d_a, d_o = tensor_args(a, o)
    assert m.double.asm(args=(d_a, d_o)).count("LOAD.float32") == 3
    pto.launch(m.double, grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_o))
    np.testing.assert_array_equal(d_o.numpy(), np.concatenate([2 * a, 2 * a]))


def test_augmented_store_to_memory_reads_modifies_and_writes(make_kernels):
    """`o[i] += v` is o[i] = o[i] + v: a load, the operation and a store (not atomic: use
    pto.atomic_add when lanes may hit the same element)."""
    source = "@pto.kernel\ndef bump(o):\n    i = pto.get_global_id()\n    o[i] += 2.0\n    o[i] *= 3.0\n"
    m = make_kernels(source)
    (d_o,) = tensor_args(np.arange(32, dtype=np.float32))
    pto.launch(m.bump, grid=(1, 1, 1), block=(32, 1, 1), args=(d_o,))
    np.testing.assert_array_equal(d_o.numpy(), (np.arange(32, dtype=np.float32) + 2) * 3)


def test_recursion_is_an_error(make_kernels):
    """Helpers are inlined, so a helper that calls itself cannot be compiled: the error names
    the helper and the line of the recursive call."""
    source = ("@pto.kernel\ndef fact(x):\n    if x <= 1:\n        return 1\n    return x * fact(x - 1)\n\n"
              "@pto.kernel\ndef bad(n):\n    i = pto.get_global_id()\n    y = fact(i)\n")
    err, m = compile_error(make_kernels, source)
    assert (err.file, err.line) == (m.__file__, line_of(m, "x * fact(x - 1)"))
    assert "fact" in str(err) and "recursion" in str(err)


def test_error_inside_a_helper_points_into_the_helper(make_kernels):
    """An unsupported construct inside an inlined helper is reported at the helper's line."""
    source = ("@pto.kernel\ndef helper(x):\n    y = [x]\n    return x\n\n"
              "@pto.kernel\ndef bad(n):\n    i = pto.get_global_id()\n    z = helper(i)\n")
    err, m = compile_error(make_kernels, source)
    assert (err.file, err.line) == (m.__file__, line_of(m, "y = [x]"))


def test_calling_a_kernel_directly_is_an_error(make_kernels):
    """Kernels are launched, not called: calling one like a Python function says how to launch."""
    m = make_kernels(UNIFORM_VS_LANE)
    with pytest.raises(pto.PtoError) as info:
        m.scale(1, 2, 3)
    assert "pto.launch(scale" in str(info.value)


def test_builtins_outside_a_kernel_are_an_error():
    """pto.load & co describe instructions: calling them from ordinary Python is an error that
    says to use them inside a @pto.kernel."""
    with pytest.raises(pto.CompileError) as info:
        pto.load(None)
    assert "outside a @pto.kernel" in str(info.value)
    with pytest.raises(pto.CompileError):
        pto.exp(1.0)


# =============================================================================== the whole language

@pytest.mark.parametrize("seed", range(60))
def test_random_kernels_compute_what_python_computes(make_kernels, seed):
    """The kernel language is Python: any kernel in the supported subset, run on the simulator
    with lanes masked by divergent control flow, stores in each lane exactly what the same
    function stores when Python runs it for that lane alone."""
    source = RandomKernel(seed).source()
    lanes, n = (64 if seed % 3 == 0 else 32), seed % 7 - 2
    a = np.random.default_rng(seed).integers(-5, 6, 16).astype(np.int32)
    namespace = {"pto": FakePto}
    exec(compile(source, f"<random kernel {seed}>", "exec"), namespace)
    expect = np.full(lanes * namespace["S"], -999, np.int64)
    for lane in range(lanes):
        FakePto.lane = lane
        namespace["kern"](FakePtr(expect), FakePtr(a), n)
    out, _ = run(make_kernels(source).kern, sentinel(len(expect), np.int32), a, n, block=(lanes, 1, 1))
    bad = np.nonzero(out != expect)[0][:5]
    S = namespace["S"]
    assert not len(bad), (f"(lane, slot, python, simulator): "
                          f"{[(j // S, j % S, int(expect[j]), int(out[j])) for j in bad]}\n{source}")
