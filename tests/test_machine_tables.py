"""Machine tables and their formulas refuse bad numbers (issue 26): every value is checked for
type, finiteness and sign, and the error names the file and the entry (or the CSV row), so a
typo never prices an operation at 0 cycles or past any clock. Sweep overrides follow the same
rules as the tables."""
import shutil
from pathlib import Path

import pytest

from pypto_sim.errors import MachineError
from pypto_sim.timing.machine import load_machine_from, resolve_machine

SIMPLE = Path(__file__).parent / "machines" / "simple.toml"
SHIPPED = Path(__file__).resolve().parents[1] / "latency_tables"


def edited(tmp_path, old, new, source=SIMPLE):
    """A copy of a table with one piece of text replaced (which must be there)."""
    text = source.read_text()
    assert old in text, old
    path = tmp_path / source.name
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old, new, message", [
    ("FMA = { latency = 4,", "FMA = { latency = true,", r"FMA needs integer latency"),
    ("FMA = { latency = 4, issue_interval = 1,", "FMA = { latency = 4, issue_interval = 1.5,",
     r"FMA needs integer latency"),
    ("hbm_chip_bytes_per_cycle = { value = 64.0,", "hbm_chip_bytes_per_cycle = { value = inf,",
     r"\[memory\] hbm_chip_bytes_per_cycle = inf must be a positive finite number"),
    ("hbm_chip_bytes_per_cycle = { value = 64.0,", "hbm_chip_bytes_per_cycle = { value = nan,",
     r"hbm_chip_bytes_per_cycle = nan must be a positive finite number"),
    ("hbm_chip_bytes_per_cycle = { value = 64.0,", "hbm_chip_bytes_per_cycle = { value = true,",
     r"hbm_chip_bytes_per_cycle = True must be a positive finite number"),
    ("[structure]", "[bogus]\nx = 1\n\n[structure]", r"unknown top-level entry or section 'bogus'"),
])
def test_a_bad_number_or_section_is_refused_naming_it(tmp_path, old, new, message):
    """tests/machines/simple.toml with one entry spoiled: a bool latency (TOML's true is a
    Python int), a fractional issue interval, an infinite, a NaN or a bool bandwidth, an
    unknown section; each a MachineError naming the file and the entry."""
    path = edited(tmp_path, old, new)
    with pytest.raises(MachineError, match=message) as err:
        load_machine_from(path)
    assert str(path) in str(err.value)


def formula_table(tmp_path, row):
    """ascend910b.toml copied with its formulas CSV beside it, one row appended."""
    (tmp_path / "formulas").mkdir()
    csv = tmp_path / "formulas" / "pto_isa_a2a3_formula_params.csv"
    shutil.copy(SHIPPED / "formulas" / csv.name, csv)
    csv.write_text(csv.read_text().rstrip("\n") + "\n" + row + "\n")
    shutil.copy(SHIPPED / "ascend910b.toml", tmp_path / "ascend910b.toml")
    return tmp_path / "ascend910b.toml", csv


@pytest.mark.parametrize("row, message", [
    ("TADDS,fp32,64,nan,25", "slope = nan must be a finite number >= 0"),
    ("TADDS,fp32,64,-0.5,25", "slope = -0.5 must be a finite number >= 0"),
    ("TADDS,fp32,64,0.5,-30", "bias = -30.0 must be a finite number >= 0"),
    ("TADDS,fp32,64,inf,25", "slope = inf must be a finite number >= 0"),
    ("TADDS,fp32,0,0.5,25", "cols must be a positive integer or"),
])
def test_a_formula_row_that_would_misprice_is_refused_at_its_line(tmp_path, row, message):
    """A formulas row prices an op at round(slope * rows * cols + bias): a NaN or negative
    slope or a negative bias gave 0 cycles, an infinite one an OverflowError at launch. Now the
    CSV's path and line number name the row when the table loads."""
    table, csv = formula_table(tmp_path, row)
    last = len(csv.read_text().splitlines())
    with pytest.raises(MachineError, match=message) as err:
        load_machine_from(table)
    assert f"{csv}:{last}" in str(err.value)


@pytest.mark.parametrize("old, new, message", [
    ('[["group", 128], ["binary", 8], ["binary", 4]', '[["tree", 128], ["binary", 8], ["binary", 4]',
     r"\[row_reduce_fp32.shapes\] 32x256: steps must be a list of \[kind, repeats\]"),
    ('["binary", 8], ["binary", 4]', '["binary", 0], ["binary", 4]',
     r"\[row_reduce_fp32.shapes\] 32x256: steps must be"),
    ('TROWMAX = { group = "vcgmax"', 'TROWMAX = { group = "vcgmux"',
     r"\[row_reduce_fp32.ops\] TROWMAX: group = 'vcgmux' names no \[row_reduce_fp32.cce\] entry"),
    ("vadd = { head = 10, slope = 2,", "vadd = { head = 10, slope = 0,",
     r"\[row_reduce_fp32.cce\] vadd: head, slope and tail must be whole cycles"),
    ("vcgmin = { head = 14, slope = 1, tail = 17, source", "vcgmin = { head = 14, slope = 1, tail = 17, sauce",
     r"\[row_reduce_fp32.cce\] vcgmin must be"),
])
def test_a_spoiled_fast_row_reduce_entry_is_refused_naming_it(tmp_path, old, new, message):
    """latency_tables/ascend910b-mock.toml's [row_reduce_fp32] with one entry spoiled: an
    unknown step kind, zero repeats, an op naming no intrinsic, a zero slope, no source."""
    path = edited(tmp_path, old, new, source=SHIPPED / "ascend910b-mock.toml")
    with pytest.raises(MachineError, match=message) as err:
        load_machine_from(path)
    assert str(path) in str(err.value)


def test_a_table_made_before_an_entry_existed_says_what_to_add(tmp_path):
    """A copy of a table taken before [aicore] had task_overhead_cycles does not load: the
    error names the file, the section and the entry, and the hint says to add it with the
    shipped table's value and source (no default is taken silently)."""
    path = edited(tmp_path, 'task_overhead_cycles = { value = 1000, source = "test value" }\n', "")
    with pytest.raises(MachineError, match=r"simple.toml: \[aicore\] is missing 'task_overhead_cycles'") as info:
        load_machine_from(path)
    assert "latency_tables/ascend910b.toml has the shipped value" in str(info.value)


def test_a_missing_formulas_file_names_both_places_looked(tmp_path):
    """The CSV is looked for beside the table, then among the shipped tables: the error names
    the file as written and both places."""
    path = edited(tmp_path, '"formulas/pto_isa_a2a3_formula_params.csv"', '"formulas/nothere.csv"',
                  source=SHIPPED / "ascend910b.toml")
    with pytest.raises(MachineError, match="'formulas/nothere.csv' is neither beside the table") as err:
        load_machine_from(path)
    assert str(tmp_path / "formulas" / "nothere.csv") in str(err.value)


@pytest.mark.parametrize("key, value, message", [
    ("memory.hbm_chip_bytes_per_cycle", 0, "must be a positive finite number"),
    ("memory.hbm_chip_bytes_per_cycle", -5, "must be a positive finite number"),
    ("memory.hbm_chip_bytes_per_cycle", float("inf"), "must be a positive finite number"),
    ("structure.cores", 2.5, "must be a whole number"),
    ("structure.lanes_per_warp", 64, "must be 32"),
    ("instruction.FMA.latency", -1, "must be a whole number >= 0"),
    ("instruction.FMA.issue_interval", True, "must be a whole number >= 1"),
    ("pipes.vector.count", 0, "must be an integer >= 1"),
])
def test_sweep_overrides_follow_the_tables_rules(key, value, message):
    """A sweep's machine override is checked as the TOML loader checks the table (a bandwidth
    of 0 or -5 was accepted, and a sweep ranked bandwidth 0 best)."""
    with pytest.raises(MachineError, match=f"override '{key}' = .* {message}"):
        resolve_machine("ascend910b").with_overrides({key: value})


def test_a_good_override_still_applies():
    """A valid override changes the entry and says where the value came from."""
    m = resolve_machine("ascend910b").with_overrides({"memory.hbm_chip_bytes_per_cycle": 500.0,
                                                      "instruction.FMA.latency": 7})
    assert m.hbm_chip_bytes_per_cycle == 500.0 and m.latency("FMA") == 7
    assert m.sources["hbm_chip_bytes_per_cycle"] == "sweep override"


def test_calibrate_never_writes_a_table_that_does_not_load(tmp_path):
    """Measurements of a uniformly slower board can fit a negative entry (issue 26: the fit gave
    unaligned_floor = -1, write_table wrote that table and loading it then crashed). write_table
    now refuses before writing, naming each entry the fit could not determine, and a table
    already at the path is left as it was."""
    from pypto_sim.calibrate import write_table
    from pypto_sim.calibrate.rows import CalibrationError
    target = tmp_path / "npu.toml"
    target.write_text("# the user's earlier table\n")
    fitted = {"TADD": {"unaligned_floor": -1.0, "per_repeat": 2.0},
              "FMA": {"latency": float("nan")}}
    with pytest.raises(CalibrationError, match=r"could not determine 2 entries: "
                                               r"TADD.unaligned_floor = -1.0; FMA.latency = nan"):
        write_table(fitted, "ascend910b", target)
    assert target.read_text() == "# the user's earlier table\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["npu.toml"]
