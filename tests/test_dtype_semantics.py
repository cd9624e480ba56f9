"""Kernel values are numpy's: literals, uniform scalars and results rounded to their dtype.

Each case is one the issue tracker found wrong: a float literal kept in float64 inside a
float32 or float16 operation, a float32 scalar argument computed in float64 on the scalar
unit, and a name bound only in some lanes showing up in all of them."""
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
