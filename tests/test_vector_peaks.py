"""The vendor's theoretical parallelism of A2/A3 vector instructions (latency_tables/ascend910b.toml
[peaks], timing/peaks.py): no cost the table gives beats it, and a repeat's cost is raised to
the repeat's elements / peak where the table's per_repeat (measured on one dtype) would."""
import pytest

import pypto_sim as pto
from pypto_sim.errors import MachineError
from pypto_sim.timing import peaks
from pypto_sim.timing.machine import load_machine_from


def test_no_cost_of_the_default_table_beats_the_vendors_parallelism():
    """Every (instruction, dtype) of [peaks] priced on 64 KiB by its head + repeats x per_repeat
    and by each of its [formulas] rows takes at least elements / peak cycles."""
    assert peaks.violations(pto.machine()) == []


def test_a_repeat_is_raised_to_its_elements_over_the_peak():
    """TEXP's per_repeat 2 (vexp, measured on float32: 64 elements a 256-byte repeat, 32 a
    cycle) stays 2 for float32; a float16 repeat holds 128 elements, and Exp does 32 a cycle
    on float16 too, so it takes 128 / 32 = 4. TSORT32's repeat is 32 float32 (128 bytes):
    32 / Sort32's 2 a cycle = 16, where the mock's default says 2. TADD (2.11, Add 64 a cycle:
    floor 1) keeps its own."""
    m = pto.machine()
    assert peaks.per_repeat(m, "TEXP", "float32") == 2.0
    assert peaks.per_repeat(m, "TEXP", "float16") == 4.0
    assert peaks.per_repeat(m, "TSORT32", "float32") == 16.0
    assert peaks.per_repeat(m, "TADD", "float32") == 2.11


def test_the_raised_repeat_prices_the_kernel(make_kernels):
    """TLOG (no [formulas] row; per_repeat 2, vln measured on float32) of a 1 x 256 tile on an
    idle V pipe: float16 is 512 bytes, 2 repeats of 256 bytes at 128 / 32 = 4 cycles each: head
    + 8; float32 is 1024 bytes, 4 repeats at the table's 2: head + 8 as well (Ln does 32
    elements a cycle in both). The head is the table's (13)."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            h = pto.alloc_tile(1, 256, pto.float16, loc=pto.Vec)
            f = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
            pto.texpands(h, 0.5)
            pto.texpands(f, 0.5)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tlog(h, h)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tlog(f, f)
''')
    m = pto.machine()
    assert not [k for k in m.vector_formulas if k[0] == "TLOG"]
    a = pto.alloc_tensor(64)
    prof = pto.profile(mod.k, grid=(1,), args=(a,))
    logs = [e.end - e.start for e in prof.timeline if e.warp == 1 and e.inst == "TLOG"]
    head = m.cost_term("TLOG", "head")         # the tail is paid at the next barrier
    assert logs == [head + 2 * 4, head + 4 * 2]


def test_a_peaks_section_is_checked_at_load(tmp_path):
    """A [peaks] entry naming no instruction, or giving no positive rate, is refused naming it."""
    base = (pto.machine().path).read_text(encoding="utf-8")
    for bad, message in (('TNOPE = { float32 = 2 }', "TNOPE: no such instruction"),
                         ('TADD = { float32 = 0 }', "TADD: float32 = 0 must be a positive number"),
                         ('TADD = { float33 = 2 }', "'float33' is not a dtype")):
        table = tmp_path / "t.toml"
        table.write_text(base.replace('TADD = { float32 = 64, float16 = 128, int32 = 64, int16 = 128, api = "Add" }',
                                      bad), encoding="utf-8")
        with pytest.raises(MachineError, match=message):
            load_machine_from(table)


def test_a_formula_row_that_beats_a_peak_is_named(tmp_path):
    """A [formulas] row cannot be raised (it is a fit over whole tiles): TADD float32 at 0.001
    cycles an element (1,000 elements a cycle, Add's peak 64) on 64 KiB = 16,384 elements is
    round(16.384) = 16 cycles, fewer than the 256 the peak allows; violations names it and
    describe() counts the one beating cost beside the table's [peaks] rows and lists it under that line."""
    table = (pto.machine().path).read_text(encoding="utf-8")
    (tmp_path / "rows.csv").write_text("op,dtype,cols,slope,bias\nTADD,fp32,64,0.001,0\n", encoding="utf-8")
    start = table.index("vector = { file = ")
    end = table.index("\n", start)
    path = tmp_path / "t.toml"
    path.write_text(table[:start] + 'vector = { file = "rows.csv", source = "test" }' + table[end:], encoding="utf-8")
    m = load_machine_from(path)
    found = peaks.violations(m)
    assert found == ["TADD float32 ([formulas] row cols=64): 16 cycles for 65536 bytes, fewer than the 256 "
                     "that Add's 64 elements a cycle allow"]
    n_peaks = len(m.vector_peaks["ops"])              # the table's [peaks] rows
    assert f"{n_peaks} vector instructions no faster than the vendor's parallelism, 1 cost(s) beating it" \
        in m.describe()
    assert "    " + found[0] in m.describe().splitlines()
