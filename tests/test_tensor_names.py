"""Errors name a kernel's tensors the way the user knows them where they launch: the variable
assigned in the launching function, or, for a tensor made in a helper (whose local name means
nothing at the launch), the kernel's parameter name with the helper's name added."""
import numpy as np
import pytest

import pypto_sim as pto


@pto.kernel
def read_past_the_end(src, dst, n):
    i = pto.get_global_id()
    pto.store(dst + i, pto.load(src + i + n))


def make_input(count):
    buf = pto.alloc_tensor(count * 4)
    pto.memcpy_h2d(buf, np.zeros(count, np.float32))
    return buf


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_tensor_made_in_a_helper_is_named_by_the_kernel_parameter(mode):
    """src was allocated as 'buf' inside make_input: the error says src, and where 'buf' came
    from; dst, assigned here, keeps its own name when named."""
    data = make_input(32)
    out = pto.alloc_tensor(32 * 4)
    with pytest.raises(pto.OutOfBoundsError) as err:
        pto.launch(read_past_the_end, grid=(1,), block=(32,), args=(data, out, 32), mode=mode)
        pto.sync()
    text = str(err.value)
    assert "src (allocated as 'buf' in make_input)" in text
    assert "'buf'" not in text.replace("allocated as 'buf'", "")


def test_a_tensor_assigned_where_it_is_launched_keeps_its_variable_name():
    """d_in is assigned in this function, which launches: its name is what the user knows."""
    d_in = pto.alloc_tensor(32 * 4)
    pto.memcpy_h2d(d_in, np.zeros(32, np.float32))
    d_out = pto.alloc_tensor(32 * 4)
    with pytest.raises(pto.OutOfBoundsError, match=r"d_in\b") as err:
        pto.launch(read_past_the_end, grid=(1,), block=(32,), args=(d_in, d_out, 32))
        pto.sync()
    assert "allocated as" not in str(err.value)


def test_the_debugger_names_tensors_the_same_way():
    import pypto_sim.debug as dbg
    data = make_input(32)
    out = pto.alloc_tensor(32 * 4)
    ctx = dbg.debug_kernel(read_past_the_end, args=(data, out, 32), grid=(1,), block=(32,), echo=False)
    with pytest.raises(pto.OutOfBoundsError, match=r"src \(allocated as 'buf' in make_input\)"):
        ctx.continue_()
