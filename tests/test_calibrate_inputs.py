"""Calibration inputs are checked where they enter: read_rows and fit refuse a row whose cycles
are not a finite number > 0 or whose size is not a whole number >= 1, naming the file and line
(or the row's index), the row's benchmark, instruction and size, and the value; fit says which
rows it could not use and refuses rows that determine nothing, and rows the timing model cannot
produce (cycles that fall as a chain grows, a slope more than a cycle below its least value),
naming the rows; correlate refuses NaN, infinite, zero, negative and non-numeric cycles on either
side, naming the kernel."""
import math

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.calibrate import CalibrationError, Row, correlate, fit, read_rows

HEADER = "benchmark,instruction,size,cycles\n"
CHAIN = [Row("chain", "ADD", 2, 481), Row("chain", "ADD", 6, 509), Row("chain", "ADD", 10, 537)]


def _csv(tmp_path, body, name="rows.csv"):
    path = tmp_path / name
    path.write_text(HEADER + body)
    return path


@pytest.mark.parametrize("cycles, shown", [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"),
                                           ("-509", "-509.0"), ("0", "0.0")])
def test_read_rows_refuses_cycles_that_are_not_finite_and_positive(tmp_path, cycles, shown):
    """The second data row (line 4: a comment line comes first) has the bad cycles."""
    path = _csv(tmp_path, f"# board 1\nchain,ADD,2,481\nchain,ADD,6,{cycles}\nchain,ADD,10,537\n")
    with pytest.raises(CalibrationError) as info:
        read_rows(path)
    text = str(info.value)
    assert isinstance(info.value, pto.PtoError)
    assert f"rows.csv: line 4 (data row 2), chain ADD at size 6: cycles = {shown}: not a finite number > 0" in text
    assert "measure that row again or remove it" in text


@pytest.mark.parametrize("size, why", [("0", "size 0 must be a whole number >= 1"),
                                       ("-2", "size -2 must be a whole number >= 1"),
                                       ("2.5", "size 2.5 is not a whole number"),
                                       ("nan", "size nan is not a whole number"),
                                       ("inf", "size inf is not a whole number"),
                                       ("two", "size 'two' is not a number")])
def test_read_rows_refuses_a_size_that_is_not_a_whole_number_of_at_least_one(tmp_path, size, why):
    path = _csv(tmp_path, f"chain,ADD,{size},481\n")
    with pytest.raises(CalibrationError, match="whole number >= 1") as info:
        read_rows(path)
    assert f"rows.csv: line 2 (data row 1), chain ADD at size {size}: {why}" in str(info.value)


def test_read_rows_refuses_non_numeric_cycles_and_a_row_without_a_name(tmp_path):
    with pytest.raises(CalibrationError, match=r"line 2 \(data row 1\), chain ADD at size 2: cycles 'lots' "
                                               "is not a number"):
        read_rows(_csv(tmp_path, "chain,ADD,2,lots\n"))
    with pytest.raises(CalibrationError, match=r"line 2 \(data row 1\) has no benchmark or instruction"):
        read_rows(_csv(tmp_path, "  ,ADD,2,481\n"))


def test_the_adversarial_rows_files_are_refused_before_fitting(tmp_path):
    """nan, inf and negative cycles in a rows file: read_rows names the first bad row."""
    for name, vals in (("nan", ("nan", 509, 537)), ("inf", ("inf", 509, 537)), ("neg", (-481, -509, -537))):
        path = _csv(tmp_path, "".join(f"chain,ADD,{s},{c}\n" for s, c in zip((2, 6, 10), vals)), f"{name}.csv")
        with pytest.raises(CalibrationError, match=rf"{name}.csv: line 2 \(data row 1\), chain ADD at size 2: "
                                                   r"cycles = \S+: not a finite number > 0"):
            read_rows(path)


@pytest.mark.parametrize("row, why", [
    (Row("chain", "ADD", 6, math.nan), "chain ADD at size 6: cycles = nan: not a finite number > 0"),
    (Row("chain", "ADD", 6, math.inf), "chain ADD at size 6: cycles = inf: not a finite number > 0"),
    (Row("chain", "ADD", 6, -509), "chain ADD at size 6: cycles = -509: not a finite number > 0"),
    (Row("chain", "ADD", 6, np.float64(0)), "chain ADD at size 6: cycles = 0.0: not a finite number > 0"),
    (Row("chain", "ADD", 6, "509"), "chain ADD at size 6: cycles = '509' (str): not a number"),
    (Row("chain", "ADD", 0, 509), "chain ADD at size 0: size 0 must be a whole number >= 1"),
    (Row("chain", "ADD", 2.5, 509), "chain ADD at size 2.5: size 2.5 must be a whole number >= 1"),
    (Row("chain", "ADD", True, 509), "chain ADD at size True: size True must be a whole number >= 1"),
    (Row("", "ADD", 6, 509), "benchmark '' and instruction 'ADD' must be non-empty text"),
    (("chain", "ADD", 6, 509), "is a tuple, not a Row"),
])
def test_fit_refuses_a_row_it_is_given_directly_naming_it(row, why):
    """Rows built in Python (not read from a file) are checked by fit: the error names the
    row's index (1: the second), its benchmark, instruction and size, and the bad value."""
    with pytest.raises(CalibrationError) as info:
        fit([CHAIN[0], row, CHAIN[2]], base="ascend910b")
    assert str(info.value).startswith("fit: row 1") and why in str(info.value)


def test_fit_on_rows_that_determine_nothing_says_why():
    """One row, or rows all at one size, give no slope; an unknown benchmark no formula
    reads: a fit that determines no entry is a CalibrationError listing each series and why."""
    with pytest.raises(CalibrationError, match=r"(?s)fit: the 1 row\(s\) determine no table entry: chain \(ADD\): "
                                               r"all 1 row\(s\) at size 2: a slope needs rows at two sizes or more"
                                               r".*hint: give each benchmark's rows at two sizes or more"):
        fit([Row("chain", "ADD", 2, 481)], base="ascend910b")
    with pytest.raises(CalibrationError, match=r"the 2 row\(s\) determine no table entry: chian \(ADD\): "
                                               r"no formula reads this benchmark and instruction"):
        fit([Row("chian", "ADD", 2, 481), Row("chian", "ADD", 6, 509)], base="ascend910b")


def test_fit_lists_the_series_it_could_not_use_with_the_reason():
    """A good chain fits ADD's latency; a stream at one size and a misspelt benchmark are in
    unused, and unused_why says why for each."""
    rows = CHAIN + [Row("stream", "ADD", 2, 400), Row("stream", "ADD", 2, 401),
                    Row("chian", "ADD", 2, 481), Row("chian", "ADD", 6, 509)]
    fitted = fit(rows, base="ascend910b")
    assert fitted["ADD"] == {"latency": 7}
    assert fitted.unused == [("chian", "ADD"), ("stream", "ADD")]
    assert fitted.unused_why[("stream", "ADD")] == ("all 2 row(s) at size 2: a slope needs rows at two sizes "
                                                    "or more")
    assert "no formula reads" in fitted.unused_why[("chian", "ADD")]


def test_fit_still_fits_good_rows_and_accepts_numpy_numbers():
    fitted = fit([Row("chain", "ADD", np.int64(s), np.float64(c)) for s, c in ((2, 481), (6, 509), (10, 537))],
                 base="ascend910b")
    assert fitted["ADD"] == {"latency": 7} and not fitted.unused


@pytest.mark.parametrize("simulated, measured, why", [
    ({"a": math.nan, "b": 2}, {"a": 1, "b": 2}, "simulated cycles of kernel 'a' = nan: not a finite"),
    ({"a": -5, "b": 2}, {"a": 1, "b": 2}, "simulated cycles of kernel 'a' = -5: not a finite"),
    ({"a": 0, "b": 2}, {"a": 1, "b": 2}, "simulated cycles of kernel 'a' = 0: not a finite"),
    ([("a", 1), ("b", 2)], [("a", 1), ("b", math.inf)], "measured cycles of kernel 'b' = inf"),
    ({"a": 1, "b": 2}, {"a": 1, "b": -2}, "measured cycles of kernel 'b' = -2"),
    ([1, 2], [1, "x"], "measured cycles of kernel 'kernel1' = 'x' (str): not a number"),
    ([1, None], [1, 2], "simulated cycles of kernel 'kernel1' = None (NoneType): not a number"),
])
def test_correlate_refuses_cycles_that_are_not_finite_and_positive(simulated, measured, why):
    with pytest.raises(CalibrationError) as info:
        correlate(simulated, measured)
    assert why in str(info.value) and "finite number > 0" in str(info.value)


def test_correlate_still_takes_numpy_numbers_and_names_a_wrong_argument_type():
    c = correlate([("a", np.int64(100)), ("b", np.float32(250))], {"a": 120, "b": 240}.items())
    assert c.n == 2 and c.mae == 15
    with pytest.raises(CalibrationError, match="correlate: simulated must be a dict or a list, not int"):
        correlate(3, [1])


# ---------------------------------------------------------------- slopes the model cannot produce
def _series(bench, instr, *cycles, sizes=(2, 6, 10)):
    return [Row(bench, instr, s, c) for s, c in zip(sizes, cycles)]


FALLING = _series("chain", "ADD", 481, 400, 300) + _series("stream", "ADD", 475, 300, 100)
REMEDY = "measure those rows again: cycles must not fall as a chain or stream grows"


def test_fit_refuses_a_chain_and_a_stream_whose_cycles_fall_naming_rows_slope_and_bound():
    """Cycles falling as ADDs are added (481 -> 400 -> 300 for 4 and 8 more dependent ADDs) no
    latency can give: the chain slope is max(latency, issue interval) >= 1 and the stream's the
    issue interval >= 1. Both series are named with their rows, slope and bound; where ADD
    latency 1 was fitted with a note calling -22.625 "the issue interval"."""
    with pytest.raises(CalibrationError) as info:
        fit(FALLING, base="ascend910b")
    text = str(info.value)
    assert text.startswith("fit: the rows of 2 benchmark series contradict the timing model: ")
    assert ("ADD.issue_interval: the stream ADD rows (size 2: 475, size 6: 300, size 10: 100 cycles) give a "
            "slope of -46.875 cycles per unit of size, more than 1 cycle below its least value 1 (stream slope "
            "= the issue interval, at least 1)") in text
    assert ("ADD.latency: the chain ADD rows (size 2: 481, size 6: 400, size 10: 300 cycles) give a slope of "
            "-22.625 cycles per unit of size, more than 1 cycle below its least value 1 (chain slope = "
            "max(latency, issue interval), and ADD's issue interval is 1, the base table's)") in text
    assert REMEDY in text


def test_calibrate_refuses_falling_rows_in_one_line_and_writes_nothing(tmp_path, capsys):
    from pypto_sim.cli import main
    path = tmp_path / "rows.csv"
    path.write_text(HEADER + "".join(f"{r.benchmark},{r.instruction},{r.size},{r.cycles}\n" for r in FALLING))
    assert main(["calibrate", str(path), "--base", "ascend910b", "-o", str(tmp_path / "new.toml")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("pypto-sim: error: fit: the rows of 2 benchmark series")
    assert "slope of -22.625" in err and REMEDY in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]


def test_a_stream_slope_one_cycle_below_1_is_the_issue_interval_1_and_further_below_is_refused():
    """The documented rounding: a stream whose cycles stay put (slope 0, one cycle below the
    least issue interval 1) fits issue_interval 1, listed as constrained; a quarter cycle
    further (slope -0.25) is refused."""
    fitted = fit(_series("stream", "ADD", 400, 400, 400), base="ascend910b")
    assert fitted["ADD"] == {"issue_interval": 1} and fitted.constrained == {("ADD", "issue_interval"): (0, 1)}
    with pytest.raises(CalibrationError, match=r"ADD.issue_interval: the stream ADD rows \(size 2: 400, size 6: "
                                               r"399, size 10: 398 cycles\) give a slope of -0.25 "):
        fit(_series("stream", "ADD", 400, 399, 398), base="ascend910b")


def test_a_chain_slope_a_cycle_below_the_issue_interval_bounds_the_latency_and_further_below_is_refused():
    """With the stream fitting ADD's issue interval 3, a chain slope of 2 (a cycle below it) only
    bounds the latency to [0, 3]; a slope of 1.75 is below max(latency, 3) by more than the
    rounding, and the error says where the 3 came from."""
    stream = _series("stream", "ADD", 400, 412, 424)
    fitted = fit(stream + _series("chain", "ADD", 481, 489, 497), base="ascend910b")
    assert fitted["ADD"] == {"issue_interval": 3, "latency": 3}
    assert fitted.bounded == {("ADD", "latency"): (0, 3, 3)}
    assert "latency 3: only bounded to [0, 3] (chain slope 2, not above the issue interval 3" in fitted.notes["ADD"][1]
    with pytest.raises(CalibrationError) as info:
        fit(stream + _series("chain", "ADD", 481, 488, 495), base="ascend910b")
    assert ("ADD.latency: the chain ADD rows (size 2: 481, size 6: 488, size 10: 495 cycles) give a slope of "
            "1.75 cycles per unit of size, more than 1 cycle below its least value 3 (chain slope = "
            "max(latency, issue interval), and ADD's issue interval is 3, fitted from the stream rows)"
            ) in str(info.value)


@pytest.mark.parametrize("rows, accepted, refused", [
    # a DMA stream: the issue interval, at least 1
    (lambda c: _series("tload_stream", "TLOAD", 400, 400 + 4 * c, 400 + 8 * c), ("TLOAD", "issue_interval", 1),
     "TLOAD.issue_interval: the tload_stream TLOAD rows"),
    # if c: then a probe and 3 fillers: g(scalar) 1 + 2 + 3 x g(ADD) 1 = 6 besides IF's own interval
    (lambda c: _series("ctl_if", "IF", 400, 400 + 4 * (6 + c), 400 + 8 * (6 + c)), ("IF", "issue_interval", 1),
     "IF.issue_interval: the ctl_if IF rows (size 2: 400, size 6: 422, size 10: 444 cycles) give a slope of 5.5 "
     "cycles per unit of size, more than 1 cycle below its least value 7 (ctl_if slope = the pattern's other "
     "gaps (6) + the issue interval, at least 1)"),
    # BARRIER_BLOCK's stream slope 3, its barrier_gap slope max(latency + 1, ii) at least that
    (lambda c: _series("stream", "BARRIER_BLOCK", 400, 412, 424)
     + _series("barrier_gap", "BARRIER_BLOCK", 400, 400 + 4 * (2 + c), 400 + 8 * (2 + c)),
     ("BARRIER_BLOCK", "issue_interval", 3), "BARRIER_BLOCK.latency: the barrier_gap BARRIER_BLOCK rows"),
], ids=["tload_stream", "ctl_if", "barrier_gap"])
def test_every_slope_with_a_least_value_takes_a_cycle_below_it_and_refuses_more(rows, accepted, refused):
    """The same rule wherever a slope has a least value: a slope one cycle below it is
    accepted (the entry fitted at its least value), a slope 1.5 cycles below is refused."""
    name, fld, value = accepted
    assert fit(rows(0), base="ascend910b")[name][fld] == value
    with pytest.raises(CalibrationError) as info:
        fit(rows(-0.5), base="ascend910b")
    assert refused in str(info.value) and REMEDY in str(info.value)


def test_any_series_whose_cycles_fall_by_more_than_a_cycle_is_refused():
    """A LOAD pointer chase (slope latency + the sector transfer) whose cycles fall: refused
    naming the rows and how far they fall. Falling by one cycle over the sizes is rounding: the
    rounded slope 0 less the transfer's cycle gives latency -1, fitted at 0 (constrained)."""
    with pytest.raises(CalibrationError) as info:
        fit(_series("chase", "LOAD", 1000, 990, 980), base="ascend910b")
    assert ("chase (LOAD): the chase LOAD rows (size 2: 1000, size 6: 990, size 10: 980 cycles) fall by 20 "
            "cycles from size 2 to size 10 (a slope of -2.5, below 0: cycles must not fall as the size grows)"
            ) in str(info.value)
    fitted = fit(_series("chase", "LOAD", 1000, 1000, 999), base="ascend910b")
    assert fitted["LOAD"] == {"latency": 0} and fitted.constrained == {("LOAD", "latency"): (-1, 0)}


LOOP = _series("stream", "ADD", 400, 406, 412) + _series("chain", "LT", 400, 442, 484)


def test_a_control_interval_is_judged_on_the_measured_gaps_the_tables_rounding_is_no_contradiction():
    """Fillers measured at 1.5 cycles each are issue interval 2 in the table, the LT chain's
    10.5 cycles latency 10: a loop's other gaps (LT + 3 + 10 fillers) measure 28.5 and are 33 in
    the table. A ctl_loop_cont slope of 31.5 gives 31.5 - 33 = -2, below 1 only by the table's
    4.5 cycles of rounding (plus the one of the slope): LOOP_CONT is fitted at 1 and listed as
    constrained. The slope may be a cycle below the measured 28.5 + 1 (28.5 is taken), not more."""
    for slope, derived in ((31.5, -2), (28.5, -4)):
        fitted = fit(LOOP + _series("ctl_loop_cont", "LOOP_CONT", 400, 400 + 4 * slope, 400 + 8 * slope),
                     base="ascend910b")
        assert fitted["LOOP_CONT"] == {"issue_interval": 1}
        assert fitted.constrained == {("LOOP_CONT", "issue_interval"): (derived, 1)}
        assert (f"ctl_loop_cont slope {slope:g} - 33 (the pattern's other gaps; 28.5 as measured) = {derived}, "
                "within the rounding (5.5 cycles) of its least value 1") in fitted.notes["LOOP_CONT"][0]
    with pytest.raises(CalibrationError) as info:
        fit(LOOP + _series("ctl_loop_cont", "LOOP_CONT", 400, 513, 626), base="ascend910b")
    assert ("slope of 28.25 cycles per unit of size, more than 1 cycle below its least value 29.5 (ctl_loop_cont "
            "slope = the pattern's other gaps (28.5 as measured, 33 in the table) + the issue interval, at least "
            "1)") in str(info.value)


def _formula_rows(cycles):
    """aiv_formula rows of the ascend910b's first [formulas] row (TADDS float32, 32 columns):
    ``cycles[rows]`` a repeat, at 8 and 16 rows (256 elements apart)."""
    return [Row(f"aiv_formula.TADDS.float32.cols=32.rows={r}", "TADDS", size, 1000 + size * c)
            for r, c in cycles.items() for size in (1, 2)]


def test_a_formula_slope_below_0_is_judged_over_the_rows_elements_not_per_element(tmp_path):
    """A [formulas] slope is cycles an element: rows that fall by one cycle over 256 elements
    (slope -0.004) are the rounding, fitted at 0; rows that fall by 10 (-0.04 an element, far
    under the one cycle an element it was once allowed) are refused by write_table."""
    from pypto_sim.calibrate import write_table
    fitted = fit(_formula_rows({8: 30, 16: 29}), base="ascend910b")
    assert fitted["formula.TADDS.float32.32"]["slope"] == 0
    assert fitted.constrained == {("formula.TADDS.float32.32", "slope"): (-0.004, 0)}
    fitted = fit(_formula_rows({8: 30, 16: 20}), base="ascend910b")
    assert fitted["formula.TADDS.float32.32"]["slope"] == -0.04 and not fitted.constrained
    with pytest.raises(CalibrationError, match=r"formula.TADDS.float32.32.slope = -0.04 \(rows \[8, 16\] at 32 "
                                               r"columns: round\(slope x elements \+ bias\) \(the rows fall by 10 "
                                               r"cycles over 256 elements\)\)"):
        write_table(fitted, "ascend910b", tmp_path / "new.toml")
    assert not list(tmp_path.iterdir())
