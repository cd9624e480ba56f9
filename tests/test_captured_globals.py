"""A kernel compiles module-level constants in, as numba and Triton do. Launching it after one
of them changed would run the old value silently, so it is refused, as Triton refuses it,
naming the constant, both values and the line that uses it."""
import numpy as np
import pytest

import pypto_sim as pto

SOURCE = """
SCALE = 2.0

@pto.kernel
def scale(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i) * SCALE)
"""


def _run(kernel):
    a, o = pto.alloc_tensor(32 * 4), pto.alloc_tensor(32 * 4)
    pto.memcpy_h2d(a, np.ones(32, np.float32))
    pto.launch(kernel, grid=(1,), block=(32,), args=(a, o, 32))
    pto.sync()
    return o.numpy()


def test_a_changed_module_constant_is_refused_naming_it_and_both_values(make_kernels):
    """SCALE is read at line 9 of the generated module (its import line comes first)."""
    mod = make_kernels(SOURCE)
    assert _run(mod.scale)[0] == 2.0
    mod.SCALE = 3.0
    with pytest.raises(pto.CompileError, match=r"'SCALE' has changed since this kernel was compiled, "
                                               r"from 2\.0 to 3\.0") as err:
        _run(mod.scale)
    assert err.value.line == 9 and "kernel argument" in str(err.value)
    mod.SCALE = 2                      # an int compiles to another dtype: changed too
    with pytest.raises(pto.CompileError, match=r"from 2\.0 to 2\b"):
        _run(mod.scale)
    del mod.SCALE
    with pytest.raises(pto.CompileError, match=r"from 2\.0 to deleted"):
        _run(mod.scale)
    mod.SCALE = 2.0                    # back as compiled: it runs again
    assert _run(mod.scale)[0] == 2.0
    assert _run(pto.kernel(mod.scale.fn))[0] == 2.0     # a new kernel compiles what is there now
    mod.SCALE = 5.0
    assert _run(pto.kernel(mod.scale.fn))[0] == 5.0


def test_a_rebound_helper_or_dtype_is_refused_as_a_changed_constant(make_kernels):
    """A module-level dtype and an inlined helper kernel are compiled in too: rebinding DT to
    int32 or helper to another kernel is refused at the next launch (the kernel ran the old
    float32 conversion and the old helper, silently); a fresh pto.kernel(fn) compiles the new
    ones."""
    mod = make_kernels("""
DT = pto.float32


@pto.kernel
def helper(x):
    return x * 2.0


@pto.kernel
def other_helper(x):
    return x + 100.0


@pto.kernel
def scale(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, helper(pto.cast(pto.load(a + i) * 1.75, DT)))
""")
    assert _run(mod.scale)[0] == 3.5
    old_dt, mod.DT = mod.DT, pto.int32
    with pytest.raises(pto.CompileError, match=r"'DT' has changed since this kernel was compiled, from "
                                               r"pto\.float32 to pto\.int32") as err:
        _run(mod.scale)
    assert "helpers and dtypes" in err.value.hint
    assert _run(pto.kernel(mod.scale.fn))[0] == 2.0          # int(1.75) * 2.0
    mod.DT = old_dt
    assert _run(mod.scale)[0] == 3.5
    mod.helper = mod.other_helper
    with pytest.raises(pto.CompileError, match=r"'helper' has changed since this kernel was compiled"):
        _run(mod.scale)
    assert _run(pto.kernel(mod.scale.fn))[0] == 101.75
