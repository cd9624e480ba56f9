"""pto.tprint: pto-isa's TPRINT as A2/A3 builds it (include/pto/npu/a2a3/TPrint.hpp at pto-isa
3186c381; isa/60_print.toml; frontend/print_builtins.py, exec/tile_print.py).

TPRINT_IMPL is pipe_barrier(PIPE_ALL), then the scalar unit reads the words and cce::printf's
them: a Vec tile's every Rows x Cols word, "|" after the last valid column and a row of dashes
(8 or 10 a column) after the last valid row, each value "%8.4f" / "%8d" (Width8_Precision4, the
default), "%8.2f" (Width8_Precision2) or "%10.6f" / "%10d" (Width10_Precision6), separated by one
space; a GM slice's elements through the unit's DataCache. pto-isa's CPU suite
(tests/cpu/st/testcase/tprint/main.cpp) runs its CPU simulation's printer; its cases are ported
below where A2/A3's text holds what they look for: TileShapeHeaderIsPrinted looks for the CPU
printer's banner "TPRINT 2x8", which A2/A3 prints as "Shape: [2, 8], Valid Shape: [2, 8]";
OverloadWithTempBuf passes a Vec tile as the scratch, which A2/A3 refuses ("Fix: TPRINT Second
parameter must be GlobalTensor type.") and is not built.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import tiles_then_call


@pto.kernel
def fenced(X, O):
    """A 3 x 8 float32 tile of 9.0, then a view of it with valid region 2 x 5 loaded from X = 0.5,
    1.5, ... (rows 5 apart)."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(3, 8, pto.float32, loc=pto.Vec)
            pto.texpands(t, 9.0)
            v = pto.tsubview(t, 0, 0, 3, 8, valid=(2, 5))
            pto.tload(v, X)
            pto.tprint(v)


@pto.kernel
def formats(O):
    """CPU suite FloatFormats / SignedIntFormats / UnsignedIntFormats / Int8AndUint8PrintedAsNumbers:
    words set by the scalar unit (tile.data()[i] = v), printed in each format."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            f = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
            pto.texpands(f, 0.0)
            pto.pipe_barrier(pto.PIPE_ALL)
            f[0] = 1.234567
            f[1] = -3.456789
            pto.tprint(f)
            pto.tprint(f, format="Width8_Precision2")
            pto.tprint(f, format="Width10_Precision6")
            i = pto.alloc_tile(1, 8, pto.int32, loc=pto.Vec)
            pto.texpands(i, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
            i[0] = 42
            i[1] = -17
            i[2] = 1024
            i[3] = -9999
            pto.tprint(i)
            pto.tprint(i, format="Width10_Precision6")
            u = pto.alloc_tile(1, 8, pto.uint32, loc=pto.Vec)
            pto.texpands(u, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
            u[1] = 17
            u[2] = 65535
            u[3] = 123456
            pto.tprint(u)
            b = pto.alloc_tile(1, 32, pto.int8, loc=pto.Vec)
            pto.texpands(b, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
            b[0] = -12
            b[1] = 65
            pto.tprint(b)
            c = pto.alloc_tile(1, 32, pto.uint8, loc=pto.Vec)
            pto.texpands(c, 0)
            pto.pipe_barrier(pto.PIPE_ALL)
            c[0] = 255
            c[1] = 127
            pto.tprint(c)


@pto.kernel
def stale_then_fresh(X, O):
    """The scalar unit caches X's first line (x = X[0]); a TSTORE then rewrites X in GM; a print
    of X reads the cached line (as the device's scalar loads do without a dcci); after pto.dcci
    it reads GM."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            x = X[0]
            t = pto.alloc_tile(1, 8, pto.int32, loc=pto.Vec)
            pto.texpands(t, 5)
            pto.tstore(X, t)
            pto.tprint(X, rows=2, cols=3, stride=4)
            pto.dcci(X)
            pto.tprint(X, rows=2, cols=3, stride=4)
            O[0] = x
            pto.dcci(O)


@pto.kernel
def two_by_eight(O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(2, 8, pto.float32, loc=pto.Vec)
            pto.tprint(t)


def test_a_tile_prints_every_word_with_its_valid_region_fenced(capsys):
    """Rows 0-1 columns 0-4 are X's (0.5 .. 4.5, 5.5 .. 9.5); the rest keep texpands' 9.0; "|"
    after column 4, dashes after row 1; the same text in timing and functional mode."""
    x = pto.to_device(np.arange(10, dtype=np.float32) + 0.5)
    o = pto.alloc_tensor(64, pto.float32)
    row = "  {:.4f}   {:.4f}   {:.4f}   {:.4f}   {:.4f}|   9.0000   9.0000   9.0000\n"
    want = ("=== [TPRINT Tile] Data Type: float32, Layout: ND, TileType: Vec ===\n"
            "  Shape: [3, 8], Valid Shape: [2, 5]\n"
            + row.format(0.5, 1.5, 2.5, 3.5, 4.5) + row.format(5.5, 6.5, 7.5, 8.5, 9.5)
            + "-------- -------- -------- -------- --------| -------- -------- --------\n"
            + "  9.0000   9.0000   9.0000   9.0000   9.0000|   9.0000   9.0000   9.0000\n")
    capsys.readouterr()
    pto.launch(fenced, grid=(1,), args=(x, o), check="all")
    pto.sync()
    assert capsys.readouterr().out == want
    pto.launch(fenced, grid=(1,), args=(x, o), mode="functional")
    pto.sync()
    assert capsys.readouterr().out == want


def test_cpu_suite_formats_as_a2a3_prints_them(capsys):
    """FloatFormats: 1.2346 / -3.4568, 1.23 / -3.46, 1.234567 / -3.456789 (1.234567f is
    1.2345670461654663, "%10.6f" rounds it to 1.234567); SignedIntFormats: 42, -17, 1024, -9999 in
    "%8d" and "%10d"; UnsignedIntFormats: 0, 17, 65535, 123456; Int8AndUint8PrintedAsNumbers: -12,
    65, 255, 127 as numbers."""
    capsys.readouterr()
    pto.launch(formats, grid=(1,), args=(pto.alloc_tensor(64),))
    pto.sync()
    blocks = capsys.readouterr().out.split("=== [TPRINT Tile]")[1:]
    rows = [b.splitlines()[2] for b in blocks]
    assert rows[0].split()[:2] == ["1.2346", "-3.4568"] and rows[0].startswith("  1.2346  -3.4568")
    assert rows[1].startswith("    1.23    -3.46")
    assert rows[2].startswith("  1.234567  -3.456789")
    assert rows[3].startswith("      42      -17     1024    -9999")
    assert rows[4].startswith("        42        -17       1024      -9999")
    assert rows[5].startswith("       0       17    65535   123456")
    assert rows[6].startswith("     -12       65        0")
    assert rows[7].startswith("     255      127        0")
    assert [b.split(",")[0].split(": ")[1] for b in blocks] == ["float32"] * 3 + ["int32"] * 2 + ["uint32",
                                                                                                 "int8", "uint8"]


def test_tile_shape_header_is_printed(capsys):
    """The CPU suite's TileShapeHeaderIsPrinted, in A2/A3's words: a 2 x 8 tile, all valid."""
    capsys.readouterr()
    pto.launch(two_by_eight, grid=(1,), args=(pto.alloc_tensor(64),))
    pto.sync()
    assert "  Shape: [2, 8], Valid Shape: [2, 8]\n" in capsys.readouterr().out


def test_gm_prints_through_the_scalar_units_data_cache(capsys):
    """X = 0 .. 15 int32 as rows of 4; x = X[0] fills X's first 64-byte line (elements 0-15) into
    the unit's DataCache; the TSTORE writes 5 into X[0:8] in GM; the first print of the 2 x 3 slice
    (rows 4 apart) reads the cached line: 0 1 2 / 4 5 6; after pto.dcci(X) it reads GM: 5 5 5 /
    5 5 5."""
    x = pto.to_device(np.arange(16, dtype=np.int32))
    o = pto.to_device(np.zeros(16, np.int32))
    capsys.readouterr()
    pto.launch(stale_then_fresh, grid=(1,), args=(x, o))
    pto.sync()
    head = ("=== [TPRINT GlobalTensor] Data Type: int32, Layout: ND ===\n"
            "  Shape: [1, 1, 1, 2, 3]\n  Batch [0, 0, 0]:\n")
    assert capsys.readouterr().out == (head + "       0        1        2\n       4        5        6\n"
                                       + head + "       5        5        5\n       5        5        5\n")


def test_a_print_costs_the_barrier_and_a_scalar_read_a_word():
    """two_by_eight: ALLOC_LOCAL (1), PIPE_BARRIER (1), then TPRINT's 16 reads: the first SLD_UB's
    2 cycles, each further one SLD_UB's issue interval (1), then the unit's EXIT (1): 1 + 1 + 2 +
    15 + 1 = 20 cycles."""
    assert pto.profile(two_by_eight, grid=(1,), args=(pto.alloc_tensor(64),)).total_cycles == 1 + 1 + 2 + 15 + 1


@pytest.mark.parametrize("tiles, call, message", [
    ({"t": "pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)"}, "pto.tprint(t)",
     "TileType of source tile must be Vec."),
    ({"t": "pto.alloc_tile(16, 16, pto.bfloat16, loc=pto.Vec)"}, "pto.tprint(t)",
     "Unsupported data type for Print."),
    ({"t": "pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)"}, "pto.tprint(t, rows=4)",
     "rows describe a GM slice"),
    ({"t": "pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)"}, "pto.tprint(t, format='%8.3f')",
     "format must be one of 'Width8_Precision4'"),
    ({}, "pto.tprint(A)", "printing GM needs the slice's shape"),
])
def test_bad_calls_are_compile_errors(make_kernels, tiles, call, message):
    """Each names the rule (TPrint.hpp's static_asserts) and what to do."""
    tiles_then_call(make_kernels, tiles, call, message)


def test_values_off_refuses_a_print():
    """values=False computes no tile words, so a print would show numbers that are not the
    kernel's: the launch is refused naming the TPRINT."""
    with pytest.raises(pto.LaunchError, match="TPRINT at line"):
        pto.profile(formats, grid=(1,), args=(pto.alloc_tensor(64),), values=False)


@pto.kernel
def specials(X):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(1, 16, pto.float16, loc=pto.Vec)
            pto.tload(t, X)
            pto.tprint(t)


def test_special_values_print_as_printf_prints_them(capsys):
    """float16 inf, -inf, NaN, -0.0, 65504 (the largest), 2^-24 (the smallest subnormal, 0.0000
    at 4 decimals) and 1/3 (0.33325 in float16, printed from its float32 value: 0.3333), as C's
    "%8.4f" prints them (TPrint.hpp casts half to float); a NaN prints as "nan" whatever its sign
    bit (cce::printf's NaN text is not documented; C's glibc would print "-nan" for a negative one)."""
    x = np.array([np.inf, -np.inf, np.nan, -0.0, 65504, 2.0 ** -24, 1 / 3] + [0] * 9, np.float16)
    capsys.readouterr()
    pto.launch(specials, grid=(1,), args=(pto.to_device(x),))
    pto.sync()
    row = capsys.readouterr().out.splitlines()[2]
    assert row.split()[:7] == ["inf", "-inf", "nan", "-0.0000", "65504.0000", "0.0000", "0.3333"]
    assert row.startswith("     inf     -inf      nan  -0.0000 65504.0000   0.0000   0.3333")
