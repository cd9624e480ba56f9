"""examples/data_copy.py, the port of CANN's Ascend C data_copy sample: each scenario's walk
reads what data_copy_ub.h / data_copy_l1.h read, and the L2 keeps a quarter of the matrix
between its passes where it cannot keep the whole."""
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.timing.machine import machine_in_effect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import data_copy  # noqa: E402

LINE = 512


def loads(prof):
    """(count, bytes) of the launch's TLOADs."""
    rec = prof.records
    names = np.asarray(prof.pc_name, object)[rec.pc.astype(np.int64)]
    sel = names == "TLOAD"
    return int(sel.sum()), int(rec.bytes[sel].sum())


@pytest.mark.parametrize("key", list(data_copy.SCENARIOS))
def test_each_scenario_reads_the_matrix_as_its_source_walks_it(key):
    """On an [m, n] matrix with two row tiles a core (m = cores x 2 tile_m) and n = 8 tile_n
    (two column tiles in each quarter of N): Process reads each core's 2 x 8 tiles once,
    ProcessRepeatWhole4Times and ProcessSplitFourAndRepeat4Times 4 times, so the cores issue
    cores x 16 (x 4) TLOADs of tile_m x tile_n halves and read the matrix once (4 times). The
    unaligned scenarios (UB 4, L1 3: N not whole tiles) run on n = 8 tile_n - 1: each row band's
    last TLOAD moves tile_n - 1 columns (a view with that valid width), still 16 a core and
    the matrix's bytes once."""
    _n, tile_m, tile_n, how = data_copy.SCENARIOS[key]
    cores = data_copy.AIV_CORES if key[0] == "UB" else data_copy.AIC_CORES
    repeats = data_copy.WALKS[how][0]
    m, n = cores * 2 * tile_m, 8 * tile_n - (1 if _n % tile_n else 0)
    count, moved = loads(data_copy.run(*key, m=m, n=n))
    assert count == cores * 16 * repeats
    assert moved == m * n * 2 * repeats


@pytest.mark.parametrize("scenario, hits", [(4, 0), (5, 3)])
def test_the_l2_keeps_a_quarter_between_passes_but_not_the_whole(scenario, hits):
    """L1 scenarios 4 and 5 on a [24 x 128, 4096] half matrix (24 MiB, 49,152 lines of 512 B)
    with the L2 cut to 12 MiB (24,576 lines): read whole 4 times, each pass finds the lines it
    needs evicted by the pass before (LRU), so all 4 x 49,152 accesses miss; read a quarter
    (6 MiB) at a time, each quarter's first pass misses and its 3 repeats hit: 3 x 49,152 hits,
    49,152 misses."""
    m, n = 24 * 128, 4096
    lines = m * n * 2 // LINE
    small = pto.machine().with_overrides({"l2.l2_bytes": 12 * 2 ** 20}, source="test: a 12 MiB L2")
    with machine_in_effect(small):
        prof = data_copy.run("L1", scenario, m=m, n=n)
    assert (prof.aicore_stats.l2_hits, prof.aicore_stats.l2_misses) == (hits * lines, (4 - hits) * lines)
