"""A valid region known only at run time is checked where an instruction uses it: the rows and
columns the instruction walks of each tile (isa/tile_roles.py walked_extents: the op's rows x
cols, a row reduction's column of rows values, a column reduction's row of cols values, a
transpose's cols x rows) must lie within that tile. Past it, the instruction would read or write
other tiles' words (and a compiled kernel memory outside the unit's buffer); instead the launch
stops with an OutOfBoundsError naming the instruction, the tile and both sizes, the same on the
compiled event loop, on SimPy and in functional mode. A constant valid region is checked by
pto.alloc_tile when the kernel compiles."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.errors import PtoError
from pypto_sim.runtime.device import current_device
from pypto_sim.runtime.launch import simulation_for
from pypto_sim.runtime.api import DEFAULT_BLOCK

# (kernel body over a run-time n, an n that fits, an n that does not, the error it gives)
CASES = {
    "trowsum_rows": ('''
s = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec, valid=(n, 64))
d = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor, valid=(n, 1))
t = pto.alloc_tile(8, 64, pto.float32, loc=pto.Vec)
pto.trowsum(d, s, t)''', 8, 16, r"TROWSUM .*: the op of 16 x 64 does not fit tile 's' \(8 x 64\)"),
    "trowexpand_rows": ('''
s = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor, valid=(n, 1))
d = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec, valid=(n, 64))
pto.trowexpand(d, s)''', 2, 16, r"TROWEXPAND .*: the op of 16 x 64 does not fit tile 'd' \(2 x 64\)"),
    "trowexpandmul_column": ('''
a = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec, valid=(n, 64))
v = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor, valid=(n, 1))
pto.trowexpandmul(a, a, v)''', 8, 9, r"TROWEXPANDMUL .*: TROWEXPANDMUL walks 9 x 1 elements of its v 'v', a 8 x 1 tile"),
    "tcolmax_columns": ('''
s = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec, valid=(2, n))
d = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec, valid=(1, n))
pto.tcolmax(d, s)''', 64, 128, r"TCOLMAX .*: the op of 2 x 128 does not fit tile 's' \(2 x 64\)"),
    "tpairreducesum_columns": ('''
s = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec, valid=(2, n))
d = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec, valid=(2, n))
pto.tpairreducesum(d, s)''', 64, 72, r"TPAIRREDUCESUM .*: the op of 2 x 72 does not fit tile 's' \(2 x 64\)"),
    # an elementwise op over rows of a valid width walks them at the tile's pitch: 5 x 48 is 240
    # of a 4 x 64 tile's 256 words, but its fifth row starts at word 256, past the tile
    "tadds_rows_at_the_pitch": ('''
a = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec, valid=(n, 48))
pto.tadds(a, a, 1.0)''', 4, 5, r"TADDS .*: the op of 5 x 48 does not fit tile 'a' \(4 x 64\)"),
    "tadd_rows": ('''
a = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec, valid=(n, 32))
b = pto.alloc_tile(4, 64, pto.float32, loc=pto.Vec, valid=(n, 32))
pto.tadd(b, a, a)''', 4, 8, r"TADD .*: the op of 8 x 32 does not fit tile 'a' \(4 x 64\)"),
    "tconcat_rows": ('''
a = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec, valid=(n, 8))
b = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec, valid=(n, 8))
d = pto.alloc_tile(4, 16, pto.float32, loc=pto.Vec, valid=(n, 16))
pto.tconcat(d, a, b)''', 4, 5, r"TCONCAT .*: the op of 5 x 16 does not fit tile 'd' \(4 x 16\)"),
    "tdequant_source_rows": ('''
d = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec, valid=(n, 32))
s = pto.alloc_tile(8, 32, pto.int16, loc=pto.Vec, valid=(n, 32))
p = pto.alloc_tile(16, 8, pto.float32, loc=pto.Vec)
pto.tdequant(d, s, p, p)''', 8, 12, r"TDEQUANT .*: TDEQUANT walks 12 x 32 elements of its src 's', a 8 x 32 tile"),
}


def _run(kernel, args, engine):
    """(the error or None, the engine that finished): one launch on copies of HBM. The
    compiled loop hands a launch it finds at fault to SimPy, which reports it."""
    dev = current_device()
    dev.launch(kernel, (1,), DEFAULT_BLOCK, args)
    sim = simulation_for(dev.queue.pop(), dev.hbm.data.copy(), dev.hbm.init.copy(), engine=engine)
    try:
        sim.run()
    except PtoError as err:
        return err, sim.engine_used
    return None, sim.engine_used


def _kernel(make_kernels, body):
    lines = "\n".join(" " * 12 + line for line in body.strip().splitlines())
    return make_kernels(f'''
@pto.kernel
def k(O, n):
    with pto.vector():
        if pto.get_subblock_id() == 0:
{lines}
''').k


@pytest.mark.parametrize("case", list(CASES))
def test_a_run_time_valid_region_past_a_tile_stops_the_launch(make_kernels, case):
    """Each case's fitting n runs on every engine; the one past a tile stops it, with the same
    OutOfBoundsError (instruction, line, unit, tile, sizes) on the compiled loop, on SimPy and in
    functional mode."""
    body, fits, past, message = CASES[case]
    kernel = _kernel(make_kernels, body)
    out = pto.alloc_tensor(1024, pto.float32)
    errors = {}
    for engine in ("fast", "simpy"):
        assert _run(kernel, (out, fits), engine) == (None, engine)
        errors[engine], finished = _run(kernel, (out, past), engine)
        assert finished == "simpy"          # the compiled loop stopped at the fault, before its values
    pto.launch(kernel, grid=(1,), args=(out, fits), mode="functional")
    pto.sync()
    with pytest.raises(pto.OutOfBoundsError) as info:
        pto.launch(kernel, grid=(1,), args=(out, past), mode="functional")
        pto.sync()
    errors["functional"] = info.value
    for engine, error in errors.items():
        assert isinstance(error, pto.OutOfBoundsError), engine
        assert error.line is not None, engine
        assert __import__("re").search(message, str(error)), (engine, str(error))
    assert str(errors["fast"]) == str(errors["simpy"])


def test_an_empty_run_time_valid_region_stops_the_launch(make_kernels):
    """0 valid rows: the op covers nothing, which a constant valid region may not say either
    (pto.alloc_tile refuses 0), so a run-time one is an error too, not a silent no-op."""
    body, _fits, _past, _message = CASES["trowexpand_rows"]
    kernel = _kernel(make_kernels, body)
    error, _ = _run(kernel, (pto.alloc_tensor(1024, pto.float32), 0), "fast")
    assert isinstance(error, pto.OutOfBoundsError)
    assert "the op of 0 x 64 on tile 'd' is empty or negative" in str(error)


def test_the_check_leaves_the_tiles_past_the_region_untouched(make_kernels):
    """The stopped instruction wrote nothing: the check runs at decode, before the values. A
    TROWEXPAND of 16 rows into a 2-row tile would have written 14 rows of the tile allocated
    after it; that tile still holds its 7s when its store (before the bad op) is read back."""
    kernel = make_kernels('''
@pto.kernel
def k(O, n):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor, valid=(n, 1))
            d = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec, valid=(n, 64))
            after = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec)
            pto.texpands(after, 7.0)
            pto.tstore(O, after)
            pto.trowexpand(d, s)
''').k
    out = pto.alloc_tensor(128 * 4, pto.float32)
    with pytest.raises(pto.OutOfBoundsError, match="the op of 16 x 64 does not fit tile 'd'"):
        pto.launch(kernel, grid=(1,), args=(out, 16))
        pto.sync()
    got = np.empty(128, np.float32)
    pto.memcpy_d2h(got, out)
    assert (got == 7.0).all()
