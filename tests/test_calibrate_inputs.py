"""Calibration inputs are checked where they enter: read_rows and fit refuse a row whose cycles
are not a finite number > 0 or whose size is not a whole number >= 1, naming the file and line
(or the row's index), the row's benchmark, instruction and size, and the value; fit says which
rows it could not use and refuses rows that determine nothing; correlate refuses NaN, infinite,
zero, negative and non-numeric cycles on either side, naming the kernel."""
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
