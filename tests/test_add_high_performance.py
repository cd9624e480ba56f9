"""examples/add_high_performance.py: the Add of CANN's Ascend C tuning sample as
benchmarks/published.py runs it, on shapes small enough to count by hand."""
import collections
import math
import sys
from pathlib import Path

import pytest

import pypto_sim as pto

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import add_high_performance as add  # noqa: E402


def test_rows_are_split_as_init_splits_them():
    """8192 rows over 48 AIVs: 170 a core and the first 8192 % 48 = 32 cores one more."""
    rows = add.core_rows(48)
    assert rows[:32] == [171] * 32 and rows[32:] == [170] * 16 and sum(rows) == 8192


@pytest.mark.parametrize("case", [1, 2, 3, 4])
def test_each_case_adds(case):
    """z = x + y in float16 on 100 x 8192 (case 1: 2 x 8192): over 48 AIVs the first 4 take
    3 rows (24576 halves: one and a half DataCopy's of 16384 in cases 3 and 4, so their last
    one is 8192 long), the others 2. Every core loads, adds and stores each of its elements
    once (check="race" finds no hazard the flags leave open)."""
    ok, _ = add.run(case, total_m=2 if case == 1 else 100, total_n=8192, check="race")
    assert ok is True
    assert add.tail_length(3, 100, 8192) == 8192 and add.tail_length(2, 100, 8192) == 16


def test_one_aiv_loads_as_the_table_prices_a_miss():
    """Case 1 on 1 x 8192 halves: two loops of dataCopyLen 4096 (8 KiB). Each loop's two
    TLOADs of lines no one has read miss in L2: 307 cycles (TLOAD's latency, the miss path)
    + ceil(8192 / 58.6) = 140 over the AIV's GM -> UB path, 447 each; MTE2 takes y's once x's
    140 cycles of bytes are issued, so y completes 140 + 447 = 587 cycles after x starts, and
    AIV0's MTE2 is busy 2 x 587 = 1174 cycles (the device's 701 a loop at 4096 halves: case 1's
    aiv_mte2_time 6208.762 us over 16,384 loops). The TADD and TSTORE run once a loop."""
    _, prof = add.run(1, total_m=1, total_n=8192, values=False)
    m = pto.machine()
    transfer = math.ceil(8192 / m.gm_to_ub_bytes_per_cycle)
    per_load = m.latency("TLOAD") + transfer
    assert (transfer, per_load) == (140, 447)
    busy = round(prof.pipe_shares("AIV0")["MTE2"] * prof.total_cycles)
    assert busy == 2 * (transfer + per_load) == 1174
    count = collections.Counter(e.inst for e in prof.timeline)
    assert (count["TLOAD"], count["TADD"], count["TSTORE"]) == (4, 2, 2)
