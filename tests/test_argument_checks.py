"""Values the API cannot use are refused with a typed error naming the value, where it was
given and what would be accepted: transfer sizes, bools and fractions given for counts,
warps, cores and step counts outside the launch."""
import numpy as np
import pytest

import pypto_sim as pto

F32 = 4          # bytes of a float32 element


def _tensor(n=64):
    t = pto.alloc_tensor(n * F32)
    pto.memcpy_h2d(t, np.arange(n, dtype=np.float32))
    return t


def _load_kernel(make_kernels, size_expr, param="nb"):
    """A kernel whose async_load moves `size_expr` bytes (line 6 of the generated file: its import line, a blank line, the decorator, def, alloc_local, async_load)."""
    return make_kernels(f"""
@pto.kernel
def k(x, o, {param}):
    t = pto.alloc_local(16)
    pto.async_load(t, x, {size_expr})
    pto.wait_all()
    pto.store(o, t, 64)
""").k


@pytest.mark.parametrize("expr, arg, message", [
    ("0", 1, r"nbytes=0: a transfer needs at least one 4-byte float32 element"),
    ("-8", 1, r"nbytes=-8: a transfer needs at least one"),
    ("nb", 0, r"nbytes=0: a transfer needs at least one"),             # a kernel argument
    ("nb * 4", -2, r"nbytes=-8: a transfer needs at least one"),
    ("6", 1, r"nbytes=6 is 1.5 float32 elements \(4 bytes each\), not a whole number"),
    ("nb", 6, r"nbytes=6 is 1.5 float32 elements"),
    ("1.5 * 4", 1, r"nbytes=6.0 is 1.5 float32 elements"),
    ("4.5", 1, r"nbytes=4.5 is not a whole number of bytes"),
    ("nb", 6.0, r"nbytes is a float32 value; a byte count is an int"),
])
def test_a_transfer_size_that_is_not_whole_positive_elements_is_a_compile_error(make_kernels, expr, arg, message):
    """async_load(t, x, nbytes): nbytes (a constant, or kernel arguments, on which the kernel
    is specialised) must be a positive whole number of elements; the error names the call's
    line (6) and the size."""
    k = _load_kernel(make_kernels, expr)
    with pytest.raises(pto.CompileError, match=message) as err:
        x, o = _tensor(), pto.alloc_tensor(64)
        pto.launch(k, grid=(1,), block=(32,), args=(x, o, arg))
        pto.sync()
    assert err.value.line == 6 and "async_load" in str(err.value)


def test_a_size_computed_while_the_kernel_runs_is_refused_with_the_strided_form_as_the_way_out(make_kernels):
    k = _load_kernel(make_kernels, "pto.get_block_id() * 4 + 64", param="unused")
    with pytest.raises(pto.CompileError, match=r"nbytes must be known when the kernel compiles.*"
                                               r"[\s\S]*rows= and cols="):
        pto.launch(k, grid=(1,), block=(32,), args=(_tensor(), pto.alloc_tensor(64), 0))


def test_the_tile_store_checks_its_size_the_same_way(make_kernels):
    k = make_kernels("""
@pto.kernel
def k(x, o):
    t = pto.alloc_local(16)
    pto.async_load(t, x, 64)
    pto.wait_all()
    pto.store(o, t, 2)
""").k
    with pytest.raises(pto.CompileError, match=r"store: nbytes=2 is 0.5 float32 elements"):
        pto.launch(k, grid=(1,), block=(32,), args=(_tensor(), pto.alloc_tensor(64)))


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_zero_rows_known_only_at_run_time_are_an_error_in_both_modes(make_kernels, mode):
    """rows= from a kernel argument is a run-time value: 0 rows is found when the TLOAD
    executes, and named with its line (6), not reported as a range [0, 1), the same error in
    both modes."""
    error, message = pto.LaunchError, (r"TLOAD: block \(0, 0, 0\): rows=0 cols=16: a tile transfer needs at "
                                       r"least one row and one column")
    k = make_kernels("""
@pto.kernel
def k(x, o, r):
    t = pto.alloc_local(16)
    pto.async_load(t, x, rows=r, cols=16)
    pto.wait_all()
    pto.store(o, t, 64)
""").k
    with pytest.raises(error, match=message) as err:
        x, o = _tensor(), pto.alloc_tensor(64)
        pto.launch(k, grid=(1,), block=(32,), args=(x, o, 0), mode=mode)
        pto.sync()
    assert err.value.line == 6


# ---------------------------------------------------------------- bools, fractions, ranges
@pto.kernel
def copy(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i))


@pytest.mark.parametrize("nbytes, dtype, message", [
    (True, pto.int8, r"alloc_tensor: nbytes=True is not a whole number \(valid: 1 or more\)"),
    (8.0, pto.float32, r"alloc_tensor: nbytes=8.0 is not a whole number"),
    (0, pto.float32, r"alloc_tensor: nbytes=0 is out of range \(valid: 1 or more\)"),
    (6, pto.float32, r"alloc_tensor\(nbytes=6\): not a multiple of float32's 4-byte element"),
])
def test_a_tensor_size_must_be_a_positive_whole_number_of_elements(nbytes, dtype, message):
    with pytest.raises(pto.ArgumentError, match=message):
        pto.alloc_tensor(nbytes, dtype)


def test_max_cycles_is_a_positive_int_not_a_bool():
    """max_cycles=True would be a limit of 1 cycle."""
    a, o = _tensor(32), pto.alloc_tensor(32 * F32)
    with pytest.raises(pto.LaunchError, match=r"max_cycles=True is not a whole number \(valid: 1 or more\)"):
        pto.launch(copy, grid=(1,), block=(32,), args=(a, o, 32), max_cycles=True)


def test_profile_reports_refuse_cores_the_machine_does_not_have():
    """The default machine (ascend910b) has 24 cores: core 99 or True is refused naming the
    valid range 0..23; a real core that ran nothing is an empty report."""
    a, o = _tensor(32), pto.alloc_tensor(32 * F32)
    prof = pto.profile(copy, grid=(1,), block=(32,), args=(a, o, 32))
    assert pto.machine().cores == 24
    for bad in (99, -1, True, 1.0):
        with pytest.raises(pto.ArgumentError, match=r"bubbles: core=.* \(valid: 0\.\.23\)"):
            prof.bubbles(core=bad)
    with pytest.raises(pto.ArgumentError, match=r"busy_intervals: core=24 is out of range"):
        prof.busy_intervals("load", core=24)
    with pytest.raises(pto.ArgumentError, match=r"busy_intervals: block=1 is out of range \(valid: 0\.\.0\)"):
        prof.busy_intervals("load", block=1)
    with pytest.raises(pto.ArgumentError, match=r"top: n=-1 is out of range"):
        prof.hotspots().top(-1)
    assert len(prof.bubbles(core=23)) == 0 and prof.bubbles(core=0).idle_cycles >= 0


def test_the_debugger_refuses_negative_steps_and_warps_the_block_lacks():
    """A block of 64 lanes has 2 warps: warp 99 (or True, or -1) cannot match anything;
    step(-1) is not a way back (step_back is)."""
    import pypto_sim.debug as dbg
    a, o = _tensor(64), pto.alloc_tensor(64 * F32)
    ctx = dbg.debug_kernel(copy, args=(a, o, 64), grid=(1,), block=(64,), echo=False)
    for bad, what in ((99, "out of range"), (True, "not a whole number"), (-1, "out of range")):
        with pytest.raises(pto.ArgumentError, match=rf"break_at: warp={bad!r} is {what} \(valid: 0\.\.1\)"):
            ctx.break_at(warp=bad)
    with pytest.raises(pto.ArgumentError, match=r"step: n=-1 is out of range \(valid: 0 or more\)"):
        ctx.step(-1)
    with pytest.raises(pto.ArgumentError, match=r"step: n=True is not a whole number"):
        ctx.step(True)
    with pytest.raises(pto.ArgumentError, match=r"step_back: n=-2 is out of range"):
        ctx.step_back(-2)
    with pytest.raises(pto.ArgumentError, match=r"inspect_l1: lane=64 is out of range \(valid: 0\.\.63\)"):
        ctx.inspect_l1(64)
    with pytest.raises(pto.ArgumentError, match=r"block x=-1 is out of range"):
        ctx.inspect_l1(0, block=(-1, 1))
    assert ctx.count == 0                     # nothing ran
    assert len(ctx.step(2)) == 2 and ctx.break_at(warp=1) >= 0
