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


REDUCTION = """
@pto.kernel
def k(X, O, r):
    with pto.vector():
        a = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
        {small}
        pto.tload(a, X)
        {op}
"""


@pytest.mark.parametrize("small, op, message", [
    ("s = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor, valid=(8, 1))",
     "pto.trowsum(s, a)", r"pto.trowsum: 's' has 8 valid rows but 'a' 16; .*TROWREDUCE input validRow"),
    ("s = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor, valid=(8, 1))",
     "pto.trowexpand(a, s)", r"pto.trowexpand: 's' has 8 valid rows but 'a' 16; .*TRowExpand.hpp"),
    ("s = pto.alloc_tile(1, 32, pto.float32, loc=pto.Vec, valid=(1, 24))",
     "pto.tcolsum(s, a)", r"pto.tcolsum: 's' has 24 valid columns but 'a' 32; .*TCOLREDUCE input valid col"),
    ("s = pto.alloc_tile(1, 32, pto.float32, loc=pto.Vec, valid=(1, 24))",
     "pto.tcolexpand(a, s)", r"pto.tcolexpand: 's' has 24 valid columns but 'a' 32; .*TColExpand.hpp"),
])
def test_a_reduction_or_expansion_whose_small_tile_misses_the_big_ones_region_is_refused(
        make_kernels, small, op, message):
    """A2/A3 asserts that a row reduction's or row expansion's column has the big tile's valid
    rows, and a column reduction's or expansion's row its valid columns: 8 of 16 rows, or 24 of
    32 columns, as constants are a CompileError at the op's line (9)."""
    mod = make_kernels(REDUCTION.format(small=small, op=op))
    with pytest.raises(pto.CompileError, match=message) as info:
        mod.k.program_for((pto.alloc_tensor(2048), pto.alloc_tensor(2048), 8))
    assert info.value.line == 9


def test_a_row_maxs_column_with_a_run_time_valid_row_count_is_checked(make_kernels):
    """s holds r valid rows from the launch, a 16: trowmax(s, a) needs r = 16 (TROWREDUCE's
    assert); r = 8 stops the kernel at the op's line, r = 16 gives each row's max."""
    mod = make_kernels(REDUCTION.format(
        small="s = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor, valid=(r, 1))",
        op="pto.trowmax(s, a)\n        pto.tstore(O, s)"))
    x = np.arange(512, dtype=np.float32)
    X, O = pto.alloc_tensor(x.nbytes, pto.float32), pto.alloc_tensor(64, pto.float32)
    pto.memcpy_h2d(X, x)
    with pytest.raises(pto.OutOfBoundsError, match=r"pto.trowmax at line 9 on AIV. of block \(0, 0, 0\): valid "
                                                   r"rows of 's' == valid rows of 'a' fails \(8 != 16\)"):
        pto.launch(mod.k, grid=(1,), args=(X, O, 8))
        pto.sync()
    pto.launch(mod.k, grid=(1,), args=(X, O, 16))
    pto.sync()
    out = np.zeros(16, np.float32)
    pto.memcpy_d2h(out, O)
    np.testing.assert_array_equal(out, x.reshape(16, 32).max(axis=1))


CUBE = """
@pto.kernel(sync="manual")
def k(A, B, C, r, c, kv):
    with pto.cube():
        am = pto.alloc_tile(64, 64, pto.{dt}, loc=pto.Mat)
        bm = pto.alloc_tile(64, 64, pto.{dt}, loc=pto.Mat)
        a = pto.alloc_tile(16, 32, pto.{dt}, loc=pto.Left, valid=(16, {ka}))
        b = pto.alloc_tile(32, 16, pto.{dt}, loc=pto.Right)
        acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tload(am, A)
        pto.tload(bm, B)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.textract(a, am, {ar}, {ac})
        pto.textract(b, bm, {br}, {bc})
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(acc, a, b)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(C, acc)
"""


def cube_tensors(dt):
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 3, (64, 64)).astype(dt)
    b = rng.integers(-3, 3, (64, 64)).astype(dt)
    A, B = pto.alloc_tensor(a.nbytes, dt), pto.alloc_tensor(b.nbytes, dt)
    pto.memcpy_h2d(A, a)
    pto.memcpy_h2d(B, b)
    return a, b, A, B, pto.alloc_tensor(16 * 16 * 4)


@pytest.mark.parametrize("dt, left, right, message", [
    ("float16", ("1", "0"), ("0", "0"), r"into Left 'a' starts at row 1, not a multiple of 16"),
    ("float16", ("0", "8"), ("0", "0"), r"into Left 'a' starts at col 8, not a multiple of 16"),
    ("float32", ("0", "8"), ("4", "0"), r"into Right 'b' starts at row 4, not a multiple of 8"),
    ("float32", ("0", "8"), ("8", "8"), r"into Right 'b' starts at col 8, not a multiple of 16"),
])
def test_a_constant_textract_window_off_the_fractal_grid_is_a_compile_error(make_kernels, dt, left, right, message):
    """A2/A3 moves whole fractals from Mat to L0 (textract_common.hpp: into Left, rows by 16 and
    columns by c0; into Right, rows by c0 and columns by 16; c0 = 32 bytes, 16 float16 or 8
    float32): a window at row 1 or col 8 of a float16 Left, or at row 4 or col 8 of a float32
    Right, is refused at the textract's line (15 or 16); (0, 8) into a float32 Left is legal."""
    source = CUBE.format(dt=dt, ka=32, ar=left[0], ac=left[1], br=right[0], bc=right[1])
    with pytest.raises(pto.CompileError, match=message) as info:
        make_kernels(source).k.program_for(cube_tensors(getattr(np, dt))[2:] + (0, 0, 32))
    assert info.value.line == (15 if "Left" in message else 16)


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_run_time_textract_window_off_the_fractal_grid_stops_the_move(make_kernels, mode):
    """The same rule at run time: (r, c) = (16, 16) extracts a[16:32, 16:48] and b[16:48, 16:32]
    (float16, both on the grid) and C is their product; (16, 8) starts the Left window at col
    8 and the TEXTRACT stops with an OutOfBoundsError naming the window and the multiples."""
    mod = make_kernels(CUBE.format(dt="float16", ka=32, ar="r", ac="c", br="c", bc="r"))
    a, b, A, B, C = cube_tensors(np.float16)
    pto.launch(mod.k, grid=(1,), args=(A, B, C, 16, 16, 32), mode=mode)
    pto.sync()
    out = np.zeros((16, 16), np.float32)
    pto.memcpy_d2h(out, C)
    np.testing.assert_array_equal(out, a[16:32, 16:48].astype(np.float32) @ b[16:48, 16:32].astype(np.float32))
    with pytest.raises(pto.OutOfBoundsError, match=r"TEXTRACT at line 15 on AIC .*: the window at \(16, 8\) into "
                                                   r"Left 'a' does not start on the fractal grid: row a multiple "
                                                   r"of 16, col of 16"):
        pto.launch(mod.k, grid=(1,), args=(A, B, C, 16, 8, 32), mode=mode)
        pto.sync()


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_run_time_k_that_left_and_right_disagree_on_stops_the_matmul(make_kernels, mode):
    """Left holds kv valid columns from the launch, right 32 rows: TMATMUL would take k from left
    and TGEMV from right (TMatmul.hpp), so kv = 16 stops the kernel at the tmatmul's line (19)
    with both counts; kv = 32 multiplies a[:16, :32] by b[:32, :16]."""
    mod = make_kernels(CUBE.format(dt="float16", ka="kv", ar=0, ac=0, br=0, bc=0))
    a, b, A, B, C = cube_tensors(np.float16)
    with pytest.raises(pto.OutOfBoundsError, match=r"pto.tmatmul at line 19 on AIC .*: valid columns of left 'a' "
                                                   r"== valid rows of right 'b' fails \(16 != 32\): TMATMUL takes"):
        pto.launch(mod.k, grid=(1,), args=(A, B, C, 0, 0, 16), mode=mode)
        pto.sync()
    pto.launch(mod.k, grid=(1,), args=(A, B, C, 0, 0, 32), mode=mode)
    pto.sync()
    out = np.zeros((16, 16), np.float32)
    pto.memcpy_d2h(out, C)
    np.testing.assert_array_equal(out, a[:16, :32].astype(np.float32) @ b[:32, :16].astype(np.float32))
