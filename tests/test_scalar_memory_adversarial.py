"""The AI core's scalar unit on memory (isa/56_scalar_memory.toml) at its edges: a ColMajor tile's
storage order (pto-isa include/pto/common/pto_tile.hpp: Tile::GetValue(offset) is `*(data() +
offset)`, and a ColMajor tile stores column after column), windows with a row pitch, and the
DataCache hazards between units (Ascend C "Scalar读写数据": a scalar store changes only the
unit's cached line; DataCacheCleanAndInvalid writes it out; WriteGmByPassDCache: lines go back
whole) that racecheck must report on kernels missing a dcci, and must not report on kernels
whose stores are ordered. Expected values are derived here from the kernels' own arithmetic."""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error_at, host_copy, run_both_modes


# ---------------------------------------------------------------- tile words in storage order
@pto.kernel(sync="manual")
def col_major_words(out, src):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(8, 4, pto.float32, layout=pto.ColMajor)
            pto.tload(t, src, layout=pto.DN)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            out[0] = t[1, 2]
            out[1] = t[9]
            out[2] = t[0, 1]
            t[3, 1] = -1.0                  # storage offset 1 * 8 + 3 = 11
            pto.set_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.tstore(src, t, layout=pto.DN)


def test_a_col_major_tiles_words_are_its_column_major_storage():
    """An 8 x 4 float32 ColMajor tile loaded DN from X holds element (r, c) = X[c * 8 + r] at storage
    offset c * 8 + r (TLOAD DN2DN: GM and UB in the same column order): t[1, 2] is X[17], t[9] is
    storage offset 9, X[9], t[0, 1] is X[8]; SetValue of (3, 1) writes offset 11, which the DN store
    puts back at X[11]."""
    x = np.arange(32, dtype=np.float32) + 100

    def make():
        return pto.to_device(np.zeros(8, np.float32)), pto.to_device(x)
    got = run_both_modes(col_major_words, make, lambda a: np.concatenate([host_copy(a[0], 8, np.float32)[:3],
                                                                    host_copy(a[1], 32, np.float32)]))
    assert got[:3].tolist() == [x[17], x[9], x[8]]
    want = x.copy()
    want[11] = -1.0
    np.testing.assert_array_equal(got[3:], want)


@pto.kernel(sync="manual")
def pitched_window(out, src):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(4, 16, pto.float32)
            pto.tload(t, src)
            w = pto.tsubview(t, 1, 8, 2, 8)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            out[0] = w[0]
            out[1] = w[1, 3]
            out[2] = w[9]
            out[3] = pto.treshape(t, 8, 8)[3, 5]


def test_a_windows_words_keep_its_tiles_row_pitch():
    """The 2 x 8 window at (1, 8) of a 4 x 16 tile starts at word 1 * 16 + 8 = 24 (TSUBVIEW binds it
    there, pitch 16): w[0] is word 24, w[1, 3] word 24 + 16 + 3 = 43, GetValue(9) word 33 (the
    address plus 9, between the window's rows); the 8 x 8 reshape's (3, 5) is word 29."""
    x = np.arange(64, dtype=np.float32) * 2

    def make():
        return pto.to_device(np.zeros(8, np.float32)), pto.to_device(x)
    got = run_both_modes(pitched_window, make, lambda a: host_copy(a[0], 8, np.float32)[:4])
    assert got.tolist() == [x[24], x[43], x[33], x[29]]


@pto.kernel
def nz_word(out):
    with pto.vector():
        t = pto.alloc_tile(16, 16, pto.float16, layout=pto.NZ)
        out[0] = t[1]


@pto.kernel
def col_window_word(out):
    with pto.vector():
        t = pto.alloc_tile(16, 4, pto.float32, layout=pto.ColMajor)
        w = pto.tsubview(t, 8, 0, 8, 4)
        out[0] = w[1]


def test_storage_orders_the_simulator_does_not_hold_are_compile_errors():
    """An NZ Vec tile's words are its fractals in the device's UB, and a row window of a ColMajor
    tile has the tile's column pitch, not its own: neither order is held (values are row-major), so a
    GetValue of them is refused at its line rather than reading another element."""
    compile_error_at(nz_word, (pto.alloc_tensor(64, pto.float16),), "'t' is an NZ Vec tile", "out[0] = t[1]")
    compile_error_at(col_window_word, (pto.alloc_tensor(64),), "'w' is a view of another shape of the ColMajor "
                     "tile 't'", "out[0] = w[1]")


# ---------------------------------------------------------------- dirty lines between units
@pto.kernel(sync="manual")
def handover_by_syncall(g, out, flush):
    with pto.vector():
        sub = pto.get_subblock_id()
        if sub == 0:
            g[0] = 7
            if flush:
                pto.dcci(g)
        pto.syncall()
        if sub == 1:
            out[0] = g[0]


def handover_args(flush):
    return pto.to_device(np.zeros(16, np.int32)), pto.to_device(np.full(16, -1, np.int32)), flush


@pytest.mark.parametrize("flush", [0, 1])
def test_a_store_handed_over_by_syncall_needs_its_dcci(flush):
    """AIV0's store of 7 stays in its DataCache until a dcci writes the line back: after the SYNCALL
    AIV1's read (a miss, filled from GM) returns GM's 0 without it and 7 with it."""
    got = run_both_modes(handover_by_syncall, lambda: handover_args(flush), lambda a: host_copy(a[1], 16, np.int32)[0])
    assert got == (7 if flush else 0)


def test_racecheck_reports_a_read_of_another_units_dirty_element():
    """check="race": the SYNCALL orders AIV1's read after AIV0's store, but the store is only in AIV0's
    DataCache: the read of bytes another unit holds dirty is the missing dcci, named with the store's
    line and a hint in the kernel's own names; with the dcci the launch is clean."""
    with pytest.raises(pto.RaceError, match=r"SLD_GM at line \d+ \(AIV1 of block \(0, 0, 0\)\) reads \w+\[0\], "
                                            r"whose 64-byte line AIV0 of block \(0, 0, 0\)'s DataCache holds dirty "
                                            r"\(its scalar store at line \d+\)") as info:
        pto.profile(handover_by_syncall, grid=(1,), args=handover_args(0), check=("race",))
    assert "pto.dcci(g + 0) on AIV0" in info.value.hint
    pto.profile(handover_by_syncall, grid=(1,), args=handover_args(1), check=("race",))


@pto.kernel(sync="manual")
def cube_to_vector(g, out, flush):
    with pto.cube():
        g[3] = 11
        if flush:
            pto.dcci(g + 3)
        pto.cross_core_set_flag(0, pipe=pto.PIPE_S)
    with pto.vector():
        if pto.get_subblock_id() == 0:
            pto.cross_core_wait_flag(0)
            t = pto.alloc_tile(1, 8, pto.int32)
            pto.tload(t, g)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(out, t)


def test_racecheck_reports_a_kernel_relying_on_the_write_back_at_a_programs_end():
    """The AIC's scalar store reaches GM at its dcci, or when its program ends (isa/data_cache.py's
    assumption); nothing orders that end before the AIV's TLOAD, which its flag (set before the end)
    does not carry: without the dcci the TLOAD of g[3] is reported, with it the launch is clean and
    the TLOAD sees 11."""
    def make(flush):
        return pto.to_device(np.zeros(16, np.int32)), pto.to_device(np.zeros(8, np.int32)), flush
    with pytest.raises(pto.RaceError, match=r"TLOAD at line \d+ \(AIV0 of block \(0, 0, 0\)\) reads bytes of the "
                                            r"64-byte line of \w+\[0\.\.15\] that the scalar store at line \d+ "
                                            r"\(AIC of block \(0, 0, 0\)\) left dirty in its DataCache \(written "
                                            r"back only when that unit's program ended"):
        pto.profile(cube_to_vector, grid=(1,), args=make(0), check=("race",))
    args = make(1)
    pto.profile(cube_to_vector, grid=(1,), args=args, check=("race",))
    assert host_copy(args[1], 8, np.int32).tolist() == [0, 0, 0, 11, 0, 0, 0, 0]


@pto.kernel(sync="manual")
def ordered_overwrite(g, out):
    with pto.vector():
        sub = pto.get_subblock_id()
        if sub == 1:
            out[0] = g[5]                   # caches g[0..15]'s line
        if sub == 0:
            g[0] = 1
            pto.dcci(g)
        pto.syncall()
        if sub == 1:
            g[0] = 2


def test_a_write_back_may_replace_what_the_unit_itself_stored_over():
    """AIV1 cached g's line before AIV0 wrote g[0] = 1 back; after the SYNCALL it stores g[0] = 2 itself,
    so its whole-line write-back replaces only the byte range it stored (every other byte of its copy
    equals GM): nothing is lost, GM holds 2, and racecheck reports nothing."""
    def make():
        return pto.to_device(np.zeros(16, np.int32)), pto.to_device(np.zeros(16, np.int32))
    got = run_both_modes(ordered_overwrite, make, lambda a: host_copy(a[0], 16, np.int32))
    assert got.tolist() == [2] + [0] * 15
    pto.profile(ordered_overwrite, grid=(1,), args=make(), check=("race",))
