"""benchmarks/accuracy.py: the statistics benchmarks/published.py prints (issue 24), on rows whose
errors are chosen so every figure can be worked out by hand."""
import math
import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[1] / "benchmarks"))
from accuracy import Row, summaries, summary  # noqa: E402

# GEMM a: 110 us against 100 (+10%), the other simulator 95 (-5%)
# GEMM b: 160 us against 200 (-20%), no figure of the other simulator
# FA c:   130 us against 100 (+30%), the other simulator 120 (+20%)
ROWS = [Row("GEMM", "a", 110, 100, {"M": (66.5, 54.5), "MTE2": (90.3, 72.2)}, other_us=95),
        Row("GEMM", "b", 160, 200, {"M": (73.6, 79.0), "MTE2": (98.6, 90.9)}),
        Row("FA", "c", 130, 100, other_us=120)]


def test_a_rows_signed_error_and_share_points():
    """+10% is 110 / 100 - 1; the points are 66.5 - 54.5 = +12.0 and 90.3 - 72.2 = +18.1."""
    a, b, c = ROWS
    assert a.error == pytest.approx(0.10) and b.error == pytest.approx(-0.20)
    assert a.other_error == pytest.approx(-0.05) and b.other_error is None
    assert a.points == pytest.approx({"M": 12.0, "MTE2": 18.1})
    assert c.points == {} and a.key == "GEMM a"


def test_mape_of_plus_10_and_minus_20_percent_is_15():
    """GEMM: |+10%| and |-20%| average to 15%, the larger is 20%; two points always lie on a
    line, here a rising one: r = 1. The worst share differences are |12.0| vs |-5.4| = 12.0
    points for M and |18.1| vs |7.7| = 18.1 for MTE2."""
    s = summary(ROWS[:2])
    assert s["n"] == 2
    assert s["mape"] == pytest.approx(15.0) and s["max_abs_error"] == pytest.approx(20.0)
    assert s["r"] == pytest.approx(1.0)
    assert s["max_abs_points"] == pytest.approx({"M": 12.0, "MTE2": 18.1})


def test_pearson_r_of_linear_data_is_one_and_of_falling_data_minus_one():
    """sim = 2 * pub + 5 is exactly linear (r = 1, whatever the errors); sim = 500 - pub falls
    as pub rises (r = -1)."""
    pub = [100, 200, 400]
    rising = summary([Row("T", str(p), 2 * p + 5, p) for p in pub])
    falling = summary([Row("T", str(p), 500 - p, p) for p in pub])
    assert rising["r"] == pytest.approx(1.0) and falling["r"] == pytest.approx(-1.0)


def test_overall_statistics_and_the_other_simulator_on_common_rows():
    """Overall: MAPE (10 + 20 + 30) / 3 = 20%, max 30%. r of (110, 160, 130) against (100, 200,
    100): deviations from the means times 3 are (-70, 80, -10) and (-100, 200, -100), so r =
    24000 / sqrt(11400 * 60000). The other simulator covers a and c: our MAPE there (10 + 30)
    / 2 = 20%, its (5 + 20) / 2 = 12.5%; within GEMM it covers a only (10% against 5%). A
    table of one row has no r."""
    s = summaries(ROWS)
    assert list(s) == ["GEMM", "FA", "overall"]
    o = s["overall"]
    assert o["n"] == 3 and o["mape"] == pytest.approx(20.0) and o["max_abs_error"] == pytest.approx(30.0)
    assert o["r"] == pytest.approx(24000 / math.sqrt(11400 * 60000))
    assert o["other_rows"] == ["GEMM a", "FA c"]
    assert o["mape_common"] == pytest.approx(20.0) and o["other_mape_common"] == pytest.approx(12.5)
    assert s["GEMM"]["mape_common"] == pytest.approx(10.0) and s["GEMM"]["other_mape_common"] == pytest.approx(5.0)
    assert s["FA"]["r"] is None and s["FA"]["max_abs_points"] == {}


def test_rows_without_the_other_simulator_have_no_common_mape():
    """Row b alone: nothing to compare with, so both common MAPEs are None."""
    s = summary(ROWS[1:2])
    assert s["other_rows"] == [] and s["mape_common"] is None and s["other_mape_common"] is None
