"""Rules the compiler checks when their operands are constants, checked at run time when they
are not (the CHECK instruction, pto-isa's PTO_ASSERT): an op's tiles have matching valid
regions, and a value packed into a register's bit field fits it. A failed check stops the
kernel with an OutOfBoundsError naming the call, its line, the unit, the requirement and the
values, the same in both modes and with both executors (the compiled timing engine hands a
fault to SimPy, which reports it); a check that holds changes no value."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.errors import PtoError
from pypto_sim.exec import reference
from pypto_sim.exec.aicore_functional import run_aicore_functional
from pypto_sim.exec.lane import executor
from pypto_sim.runtime.device import current_device
from pypto_sim.runtime.launch import launch_arguments, simulation_for

from engine_compare import assert_engines_agree, tensor_values


@pto.kernel
def shifted(X, O, r, c):
    """d = a + 1 over d's valid region (r, c), a loaded whole (valid 8 x 16)."""
    with pto.vector():
        a = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
        d = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec, valid=(r, c))
        pto.tload(a, X)
        pto.tadds(d, a, 1.0)
        pto.tstore(O, d, stride=16)


@pto.kernel
def one_region(X, O, r):
    """a and d share the run-time valid region (r, 16): nothing to check at run time."""
    with pto.vector():
        a = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec, valid=(r, 16))
        d = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec, valid=(r, 16))
        pto.tload(a, X)
        pto.tadds(d, a, 1.0)
        pto.tstore(O, d)


@pto.kernel
def img2col_at(X, Y, pos_m, fmap_w):
    """One TIMG2COL of a 1 x 4 map at a run-time position, under a run-time SETFMATRIX width."""
    with pto.cube():
        f = pto.alloc_tile(64, 16, pto.float16, loc=pto.Mat)
        a = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        pto.tload(f, X, stride=16)
        pto.setfmatrix(1, fmap_w)
        pto.timg2col(a, f, pos_m, 0, filter_h=1, filter_w=1)


def outcomes(kernel, args):
    """The launch run four ways (timing and functional mode, numba and reference executor) on
    copies of device memory: each way's (error or None, HBM image)."""
    dev = current_device()
    dev.launch(kernel, (1, 1, 1), (32, 1, 1), args)
    pending = dev.queue.pop()
    out = {}
    for name, ex in (("numba", executor()), ("reference", reference)):
        for mode in ("timing", "functional"):
            words, error = dev.hbm.data.copy(), None
            try:
                if mode == "timing":
                    simulation_for(pending, words, None, executor_module=ex).run()
                else:
                    tensors, scalars, names = launch_arguments(pending)
                    run_aicore_functional(pending.program, pending.program.encode(), pending.grid,
                                          pending.block, tensors, scalars, words, None, pending.kernel.name,
                                          names, 10**6, executor_module=ex)
            except PtoError as err:
                error = err
            out[(mode, name)] = error, words
    return out


def vector_tensors():
    x = np.arange(128, dtype=np.float32)
    X, O = pto.alloc_tensor(x.nbytes, pto.float32), pto.alloc_tensor(x.nbytes, pto.float32)
    pto.memcpy_h2d(X, x)
    pto.memcpy_h2d(O, np.zeros(128, np.float32))
    return x, X, O


@pytest.mark.parametrize("r, c, what, found", [
    (4, 16, "rows", "8 != 4"), (8, 15, "columns", "16 != 15")])
def test_a_source_whose_valid_region_differs_from_dsts_at_run_time_stops_the_op(r, c, what, found):
    """a is valid 8 x 16, d (r, c) from the launch: with (4, 16) or (8, 15) TADDS would read a
    past d's region (A2/A3's TADDS_IMPL asserts they match); the check names a's count first,
    then d's, on every engine and executor, and O is left as it was (zeros)."""
    _x, X, O = vector_tensors()
    for (mode, ex), (error, image) in outcomes(shifted, (X, O, r, c)).items():
        assert isinstance(error, pto.OutOfBoundsError), (mode, ex)
        assert "pto.tadds at line 28 on AIV" in str(error) and error.line == 28
        assert f"valid {what} of 'a' == valid {what} of 'd' fails ({found})" in str(error)
        assert "give the tiles the same valid region" in error.hint
        assert not tensor_values(image, O).any(), (mode, ex)


def test_a_check_that_holds_changes_nothing():
    """d's valid region (8, 16) from the launch equals a's: O = x + 1 every way, and the
    compiled event loop runs the CHECK as SimPy does, cycle for cycle and record for record."""
    x, X, O = vector_tensors()
    for key, (error, image) in outcomes(shifted, (X, O, 8, 16)).items():
        assert error is None, key
        np.testing.assert_array_equal(tensor_values(image, O), x + 1, err_msg=str(key))
    assert assert_engines_agree(shifted, (X, O, 8, 16), (1, 1, 1), (32, 1, 1))["error"] is None


def test_tiles_sharing_one_run_time_region_need_no_check():
    """The same register gives both valid row counts: equal whatever it holds, so no CHECK."""
    _x, X, O = vector_tensors()
    assert "CHECK" not in one_region.asm(args=(X, O, 8))
    assert "CHECK" in shifted.asm(args=(X, O, 8, 16))


@pytest.mark.parametrize("pos_m, fmap_w, field, found", [
    (1 << 16, 4, "pos_m fits the 16-bit field of pos", "65536 is outside [0, 65535]"),
    (-1, 4, "pos_m fits the 16-bit field of pos", "-1 is outside [0, 65535]"),
    (0, 1 << 16, "fmap_w fits the 16-bit field of SETFMATRIX's fmap size", "65536 is outside [0, 65535]"),
])
def test_a_run_time_value_too_wide_for_its_register_field_stops_the_kernel(pos_m, fmap_w, field, found):
    """pos_m and fmap_w are packed into 16-bit fields (pos_m | pos_k << 16; W | H << 16): 2^16
    or -1 would spill into the next field, so each stops the kernel at its call's line (50 for
    pto.setfmatrix, 51 for pto.timg2col), as a constant one is a compile error."""
    X = pto.alloc_tensor(64 * 16 * 2, pto.float16)
    pto.memcpy_h2d(X, np.ones(64 * 16, np.float16))
    Y = pto.alloc_tensor(64)
    call, line = ("pto.setfmatrix", 50) if field.startswith("fmap_w") else ("pto.timg2col", 51)
    for key, (error, _image) in outcomes(img2col_at, (X, Y, pos_m, fmap_w)).items():
        assert isinstance(error, pto.OutOfBoundsError), key
        assert f"{call} at line {line} on AIC of block (0, 0, 0): {field} fails ({found})" in str(error), key
        assert error.line == line
