"""Kernel values are numpy's: literals, uniform scalars and results rounded to their dtype.

Each case is one the issue tracker found wrong: a float literal kept in float64 inside a
float32 or float16 operation, a float32 scalar argument computed in float64 on the scalar
unit, and a name bound only in some lanes showing up in all of them."""
import re

import numpy as np
import pytest

import pypto_sim as pto

KERNELS = """
@pto.kernel
def times_literal(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i) * {lit})

@pto.kernel
def mod_literal(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i) % 0.7)

@pto.kernel
def uniform_math(o, f):
    pto.store(o + pto.get_global_id(), f * 3 - f)

@pto.kernel
def lane_math(a, o):
    i = pto.get_global_id()
    x = pto.load(a + i)
    pto.store(o + i, x * 3 - x)

@pto.kernel
def square(a, o):
    i = pto.get_global_id()
    x = pto.load(a + i)
    pto.store(o + i, x * x)

@pto.kernel
def uniform_square(o, f):
    pto.store(o + pto.get_global_id(), f * f * 1e-30)

@pto.kernel
def negative_infinity(o):
    pto.store(o + pto.get_global_id(), float("-inf"))
"""


def _run(kernel, args, n=256):
    pto.launch(kernel, grid=(-(-n // 256), 1, 1), block=(min(n, 256), 1, 1), args=args)
    pto.sync()


def _host(d, dtype=np.float32, n=256):
    out = np.empty(n, dtype)
    pto.memcpy_d2h(out, d)
    return out


@pytest.mark.parametrize("dtype,lit", [(np.float32, "0.7"), (np.float16, "0.1")])
def test_a_float_literal_takes_the_operand_dtype(make_kernels, dtype, lit):
    """float32 x * 0.7 is numpy's x * np.float32(0.7) (36 of 256 values differed when the
    literal stayed float64); float16 x * 0.1 likewise (85 differed)."""
    mod = make_kernels(KERNELS.format(lit=lit))
    x = np.linspace(-3, 3, 256).astype(dtype)
    a = pto.alloc_tensor(x.nbytes, dtype=x.dtype)
    o = pto.alloc_tensor(x.nbytes, dtype=x.dtype)
    pto.memcpy_h2d(a, x)
    _run(mod.times_literal, (a, o, 256))
    np.testing.assert_array_equal(_host(o, dtype), x * float(lit))
    if dtype == np.float32:
        _run(mod.mod_literal, (a, o, 256))
        np.testing.assert_array_equal(_host(o, dtype), x % 0.7)


def test_uniform_float_math_is_float32(make_kernels):
    """f * 3 - f with f = -1.3: -2.6 in float32, on the scalar unit as in the lanes
    (the float64 argument gave -2.6000001)."""
    mod = make_kernels(KERNELS.format(lit="1.0"))
    x = np.full(32, -1.3, np.float32)
    a, o, o2 = pto.alloc_tensor(128), pto.alloc_tensor(128), pto.alloc_tensor(128)
    pto.memcpy_h2d(a, x)
    _run(mod.uniform_math, (o, -1.3), 32)
    _run(mod.lane_math, (a, o2), 32)
    want = x * np.float32(3) - x
    np.testing.assert_array_equal(_host(o, n=32), want)
    np.testing.assert_array_equal(_host(o2, n=32), want)


def test_float32_overflow_is_inf(make_kernels):
    """3e38 * 3e38 is inf in float32, in the lanes and on the scalar unit (a float64
    argument used to keep f * f * 1e-30 finite)."""
    mod = make_kernels(KERNELS.format(lit="1.0"))
    x = np.full(32, 3e38, np.float32)
    a, o = pto.alloc_tensor(128), pto.alloc_tensor(128)
    pto.memcpy_h2d(a, x)
    _run(mod.square, (a, o), 32)
    assert np.isposinf(_host(o, n=32)).all()
    _run(mod.uniform_square, (o, 3e38), 32)
    assert np.isposinf(_host(o, n=32)).all()
    _run(mod.uniform_square, (o, 1e39), 32)      # the argument itself overflows float32
    assert np.isposinf(_host(o, n=32)).all()


def test_float_of_a_string_is_a_literal(make_kernels):
    mod = make_kernels(KERNELS.format(lit="1.0"))
    o = pto.alloc_tensor(128)
    _run(mod.negative_infinity, (o,), 32)
    assert np.isneginf(_host(o, n=32)).all()


def test_a_name_bound_only_under_a_lane_condition_cannot_be_used_after_it(make_kernels):
    """Lanes that skipped the branch have no value for c (Python would raise for them):
    a CompileError naming the assignment's line, not 7.0 in every lane."""
    mod = make_kernels("""
@pto.kernel
def partial(o):
    i = pto.get_global_id()
    if i < 5:
        c = 7.0
    pto.store(o + i, c)
""")
    o = pto.alloc_tensor(128)
    with pytest.raises(pto.CompileError, match=r"'c' is assigned only under the per-lane "
                                               r"condition at line 7") as info:
        pto.launch(mod.partial, grid=(1, 1, 1), block=(32, 1, 1), args=(o,))
    assert info.value.line == 8 and "c = 0.0" in str(info.value)


@pytest.mark.parametrize("body, what", [
    ("    if n > 3:\n        q = 1234\n", "under the condition at line 7; the condition there is known only at "
                                        "run time"),
    ("    if n > 3:\n        q = n * 10\n", "under the condition at line 7"),
    ("    for k in range(n):\n        q = k + 77\n", "in the loop at line 7; the loop may run zero times"),
    ("    while n > 0:\n        q = 5\n        n -= 1\n", "in the loop at line 7"),
])
def test_a_name_bound_only_where_the_kernel_may_not_go_cannot_be_used_after(make_kernels, body, what):
    """A uniform if's untaken branch, or a loop running zero times, leaves the name unbound
    (Python's UnboundLocalError): a CompileError at the use naming the assignment's line, where
    the kernel stored the untaken branch's constant 1234, or an uninitialised register's 0."""
    source = "\n@pto.kernel\ndef k(o, n):\n    i = pto.get_global_id()\n" + body + "    o[i] = q\n"
    mod = make_kernels(source)
    with pytest.raises(pto.CompileError, match=r"'q' is assigned only " + re.escape(what)) as info:
        mod.k.program_for((pto.alloc_tensor(128, pto.int32), 2))
    # the use, the source's last line (make_kernels' file has one line before it)
    assert info.value.line == source.count("\n") + 1 and "Python's UnboundLocalError" in str(info.value)


def test_a_name_bound_in_a_loop_that_runs_is_usable_after_it(make_kernels):
    """for k in range(3): q = k + 77 runs three times (a constant trip count): q is 79 and k 2
    after it, as in Python."""
    mod = make_kernels("""
@pto.kernel
def k(o):
    i = pto.get_global_id()
    for k in range(3):
        q = k + 77
    o[i] = q + k
""")
    o = pto.alloc_tensor(128, pto.int32)
    pto.launch(mod.k, grid=(1, 1, 1), block=(32, 1, 1), args=(o,))
    assert (_host(o, n=32, dtype=np.int32) == 81).all()


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_run_time_range_step_of_zero_stops_the_launch(make_kernels, mode):
    """range(0, 10, n) with n = 0 at run time: Python raises ValueError; the launch stops at the
    loop's line (it ran zero times, silently) with a pto.KernelValueError, a PtoError that is a
    ValueError too, as Python's range() raises, and not an OutOfBoundsError: nothing is out of
    bounds (the class is the NONZERO_STEP rule's, isa/run_time_checks.RULES). n = 3 sums 0+3+6+9."""
    mod = make_kernels("""
@pto.kernel
def k(o, n):
    i = pto.get_global_id()
    s = 0
    for k in range(0, 10, n):
        s += k
    o[i] = s
""")
    o = pto.alloc_tensor(128, pto.int32)
    pto.launch(mod.k, grid=(1, 1, 1), block=(32, 1, 1), args=(o, 3), mode=mode)
    assert (_host(o, n=32, dtype=np.int32) == 18).all()
    with pytest.raises(ValueError, match=r"range\(\) at line 7 on warp 0, lane 0 of block \(0, 0, 0\): step != 0 "
                                         r"fails \(it is 0\): range\(\) raises ValueError for a zero step") as info:
        pto.launch(mod.k, grid=(1, 1, 1), block=(32, 1, 1), args=(o, 0), mode=mode)
        pto.sync()
    assert type(info.value) is pto.KernelValueError and isinstance(info.value, pto.PtoError)
    assert not isinstance(info.value, pto.OutOfBoundsError)
    assert (info.value.line, info.value.block, info.value.warp, info.value.lane) == (7, (0, 0, 0), 0, 0)


def test_names_assigned_on_every_path_stay_usable(make_kernels):
    mod = make_kernels("""
@pto.kernel
def both(o):
    i = pto.get_global_id()
    if i < 5:
        c = 7.0
    else:
        c = 1.0
    pto.store(o + i, c)
""")
    o = pto.alloc_tensor(128)
    _run(mod.both, (o,), 32)
    np.testing.assert_array_equal(_host(o, n=32), np.where(np.arange(32) < 5, 7.0, 1.0))


def test_literal_arithmetic_is_pythons_and_typed_arithmetic_is_the_dtypes(make_kernels):
    """docs/simt.md: literals alone compute as Python does, typed operands in their dtype.
    16777216.0 + 1.0 + 1.0 is Python's 16777218.0 (float32 holds it exactly); x + 1.0 + 1.0
    with float32 x = 16777216.0 rounds each sum back to 16777216.0 (2**24 + 1 is not a float32);
    (2147483647 + 1) // 2 + 5 - 1073741800 is 29 (int32 steps would wrap: -2147483619); 2147483647 + 1
    alone does not fit int32."""
    mod = make_kernels("""
@pto.kernel
def k(o, x, n):
    i = pto.get_global_id()
    if i == 0:
        o[0] = 16777216.0 + 1.0 + 1.0
        o[1] = x + 1.0 + 1.0
        o[2] = pto.cast((2147483647 + 1) // 2 + 5 - 1073741800, pto.float32)


@pto.kernel
def too_big(o):
    o[0] = 2147483647 + 1
""")
    o = pto.alloc_tensor(128)
    pto.launch(mod.k, grid=(1, 1, 1), block=(32, 1, 1), args=(o, 16777216.0, 0))
    np.testing.assert_array_equal(_host(o, n=32)[:3], [16777218.0, 16777216.0, 29.0])
    with pytest.raises(pto.CompileError, match="2147483648 does not fit in int32"):
        mod.too_big.program_for((pto.alloc_tensor(16, pto.int32),))


INT_TIMES_FLOAT = """
@pto.kernel
def k(ii, f, o, n):
    i = pto.get_global_id()
    if i < n:
        o[i] = ii[i] * f[i]
        o[n + i] = pto.cast(ii[i], pto.float64) * f[i]
"""


@pytest.mark.parametrize("int_dtype", [np.int32, np.uint32])
@pytest.mark.parametrize("float_dtype", [np.float32, np.float16])
def test_an_int32_times_a_float32_or_float16_is_float32_not_numpys_float64(make_kernels, int_dtype, float_dtype):
    """docs/simt.md: int32 or uint32 with float32 or float16 gives float32 (dtypes.promote; C's usual
    arithmetic conversions, Triton), where numpy and numba give float64. The int is rounded to float32
    first and the product rounded to float32, so stored into a float64 tensor 16777217 x 1.0 is
    16777216.0 (2**24 + 1 has no float32) and 2147483647 x 100.0 is 2**31 x 100 = 214748364800.0
    (numpy: 16777217.0 and 214748364700.0); 3 x 0.5 is 1.5 either way. Casting the int to float64
    first gives numpy's products."""
    k = make_kernels(INT_TIMES_FLOAT).k
    ii = np.array([16777217, 2147483647, 3], int_dtype)
    f = np.array([1.0, 100.0, 0.5], float_dtype)
    o = pto.alloc_tensor(6 * 8, pto.float64)
    pto.launch(k, grid=(1, 1, 1), block=(32, 1, 1), args=(pto.to_device(ii), pto.to_device(f), o, 3))
    out = o.numpy()
    assert out[:3].tolist() == [16777216.0, 214748364800.0, 1.5]
    assert out[3:].tolist() == (ii.astype(np.float64) * f.astype(np.float64)).tolist() \
        == [16777217.0, 214748364700.0, 1.5]
    assert (ii * f).dtype == np.float64            # numpy's promotion, which the kernel does not follow
