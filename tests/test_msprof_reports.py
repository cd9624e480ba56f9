"""msprof-shaped reports of AI-core kernels (docs/profiling.md "msprof-shaped reports"):
op_summary with msprof's column names and ratios, Perf-Sim's pipeline_summary with active
start / end, the roofline with its bound named, and to_pandas() on every table.

The expected numbers are derived from the machine table (``ascend910b``) in each docstring and
computed from the table's entries in the test, so that a changed entry changes both sides."""
import csv
import math
import sys

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.profiler.msprof import OP_SUMMARY_COLUMNS
from pypto_sim.profiler.roofline import name_bound
from pypto_sim.timing.machine import machine_in_effect

from aicore_kernels import cube_then_vector

# msprof's op_summary header with --aic-metrics=PipeUtilization (Ascend/msprof
# analysis/csrc/application/summary/op_summary_assembler.cpp, as its unit test checks it)
MSPROF_OP_SUMMARY = (
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
    "Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,"
    "Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,"
    "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),"
    "aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
    "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,"
    "aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),"
    "aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)"
).split(",")


def dev(array, dtype):
    t = pto.alloc_tensor(array.nbytes, dtype)
    pto.memcpy_h2d(t, array)
    return t


@pto.kernel
def one_matmul(A, B, C):
    """C = A @ B on one AI core: two TLOADs, two TEXTRACTs, one TMATMUL, one TSTORE_ACC, each
    waiting for the one before it (auto sync)."""
    with pto.cube():
        a1 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        b1 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        a0 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        b0 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tload(a1, A)
        pto.tload(b1, B)
        pto.textract(a0, a1)
        pto.textract(b0, b1)
        pto.tmatmul(acc, a0, b0)
        pto.tstore(C, acc)


@pto.kernel
def add_one(X, Y):
    """Y = X + 1 on the first vector unit (a kernel without sections): TLOAD, TADDS, TSTORE."""
    t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
    pto.tload(t, X)
    pto.tadds(t, t, 1.0)
    pto.tstore(Y, t)


@pytest.fixture
def mm():
    ones = np.ones((16, 16), np.float16)
    c = pto.alloc_tensor(16 * 16 * 4, pto.float32)
    return pto.profile(one_matmul, grid=(1,), args=(dev(ones, pto.float16), dev(ones, pto.float16), c))


@pytest.fixture
def vec():
    x = np.arange(16 * 64, dtype=np.float32)
    y = pto.alloc_tensor(x.nbytes, pto.float32)
    return pto.profile(add_one, grid=(1,), args=(dev(x, pto.float32), y))


@pytest.fixture
def mix():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    w, out = pto.alloc_tensor(32 * 32 * 4, pto.float32), pto.alloc_tensor(32 * 32 * 4, pto.float32)
    return pto.profile(cube_then_vector, grid=(2,), args=(dev(a, pto.float16), dev(b, pto.float16), w, out))


def matmul_chain(m):
    """The pipes' busy cycles of one_matmul on ``m``, from its table (ascend910b):

    - TLOAD of 16 x 16 float16 (512 B) into L1: latency 307 + ceil(512 / gm_to_l1 78.4) = 314
      cycles; MTE2 takes the second once the first's ceil(512 / 78.4) = 7 cycles of bytes are
      issued, so it completes 7 + 314 = 321 cycles after the first starts: MTE2 busy 321;
    - TEXTRACT 512 B to L0A: 1 + ceil(512 / 236.5) = 4 (from 314, before B has landed); to
      L0B: 1 + ceil(512 / 113.8) = 6 (from 321): MTE1 busy 10;
    - TMATMUL 16 x 16 x 16 float16: latency 21 + one 16 x 16 x 16 repeat x per_repeat 1 = 22;
    - TSTORE_ACC of 16 x 16 float32 through the fixpipe: ceil(drain_fixed 164 + 16 rows x
      max(drain_row 4.45, 64 B / 118 B/cycle)) = 236 (two 8-column parts: no odd-part
      penalty).
    The chain from the first TLOAD's start to the end: 321 + 6 (TEXTRACT B) + 22 + 236 = 585
    cycles."""
    transfer = math.ceil(512 / m.gm_to_l1_bytes_per_cycle)
    tload = m.latency("TLOAD") + transfer
    ext_a = m.latency("TEXTRACT") + math.ceil(512 / m.l1_to_l0a_bytes_per_cycle)
    ext_b = m.latency("TEXTRACT") + math.ceil(512 / m.l1_to_l0b_bytes_per_cycle)
    mma = m.latency("TMATMUL") + math.ceil(1 * m.cost_term("TMATMUL", "per_repeat"))
    drain = math.ceil(m.drain_fixed_cycles + 16 * max(m.drain_row_cycles, 64 / m.drain_bytes_per_cycle))
    return {"mte2": transfer + tload, "mte1": ext_a + ext_b, "mac": mma, "fixpipe": drain,
            "chain": transfer + tload + ext_b + mma + drain}


# ---------------------------------------------------------------- op_summary
def test_op_summary_columns_are_msprofs_in_msprofs_order():
    """Every column but core_id and unit (which name a row) is one of msprof's op_summary
    fields, and they come in msprof's order."""
    ours = [c for c in OP_SUMMARY_COLUMNS if c not in ("core_id", "unit")]
    assert set(ours) <= set(MSPROF_OP_SUMMARY)
    assert ours == sorted(ours, key=MSPROF_OP_SUMMARY.index)
    for side, pipes in (("aic", ("mac", "scalar", "mte1", "mte2", "fixpipe")),
                        ("aiv", ("vec", "scalar", "mte2", "mte3"))):
        for p in pipes:
            assert f"{side}_{p}_ratio" in ours and f"{side}_{p}_time(us)" in ours


def test_op_summary_of_one_matmul_gives_each_pipes_busy_cycles_over_the_units_cycles(mm):
    """One row for the AIC (the vector units have no program and do not run) and the total row.
    aic_total_cycles is the AIC's window: from cycle 0 (its first issue) to the TSTORE_ACC's
    completion, the kernel's end: the first TLOAD's start + 585 (matmul_chain). Each ratio is
    busy / 585 + start: mte2 321, mte1 10, mac 22, fixpipe 236; times at 1850 MHz. Task Duration
    adds the table's task_overhead_cycles (920: the task's dispatch and response end) to the
    kernel's cycles: (cycles + 920) / 1850 us."""
    m = mm.machine
    chain = matmul_chain(m)
    first_load = min(e.start for e in mm.timeline if e.inst == "TLOAD")
    table = mm.op_summary()
    assert [(r["core_id"], r["unit"]) for r in table] == [(0, "AIC"), (None, "total")]
    row = table[0]
    cycles = first_load + chain["chain"]
    assert row["aic_total_cycles"] == cycles == mm.total_cycles
    assert row["Task Type"] == "AI_CORE" and row["Block Dim"] == 1
    mhz = m.clock_ghz * 1e3
    assert m.task_overhead_cycles == 920
    assert row["Task Duration(us)"] == pytest.approx((cycles + 920) / mhz) == mm.task_duration_us()
    assert row["aicore_time(us)"] == pytest.approx(cycles / mhz)
    for pipe in ("mte2", "mte1", "mac", "fixpipe"):
        assert row[f"aic_{pipe}_ratio"] == pytest.approx(chain[pipe] / cycles), pipe
        assert row[f"aic_{pipe}_time(us)"] == pytest.approx(chain[pipe] / mhz), pipe
    scalar = mm.pipeline_summary()[0]["scalar_cycles"]
    assert row["aic_scalar_ratio"] == pytest.approx(scalar / cycles)
    assert all(row[c] is None for c in OP_SUMMARY_COLUMNS if c.startswith("aiv_"))
    assert {k: v for k, v in table.total.items() if k not in ("core_id", "unit")} == \
        {k: v for k, v in row.items() if k not in ("core_id", "unit")}


def test_every_report_counts_the_scalar_units_busy_cycles_alike(mix):
    """PIPE_S busy of a unit on a core is the union of its instructions' issue-to-completion
    intervals (two instructions of latency 2 issued on consecutive cycles are busy 3 cycles,
    not 2 or 4) in the timeline, busy_intervals, pipe_utilization (the mean over the 2 cores),
    pipeline_summary (per unit and per pipe), core_balance and op_summary alike; an
    adversarial run found op_summary counting issue slots where the timeline counted
    intervals."""
    def union(core, unit):                       # by hand, from the timeline
        total, reach = 0, 0
        for a, b in sorted((e.start, e.end) for e in mix.timeline
                           if (e.core, e.lane, e.pipe) == (core, unit, "S")):
            total += max(0, b - max(a, reach))
            reach = max(reach, b)
        return total

    for unit in ("AIC", "AIV0"):
        busy = {core: union(core, unit) for core in (0, 1)}
        assert all(busy.values())
        util = mix.pipe_utilization()[f"{unit} S"]
        assert util * 2 * mix.total_cycles == pytest.approx(busy[0] + busy[1])
        side = "aic" if unit == "AIC" else "aiv"
        for core, cycles in busy.items():
            assert sum(b - a for a, b in mix.busy_intervals("S", core=core, unit=unit)) == cycles
            assert next(r["scalar_cycles"] for r in mix.pipeline_summary()
                        if (r["core_id"], r["unit"]) == (core, unit)) == cycles
            assert next(r["busy_cycles"] for r in mix.pipeline_summary(per="pipe")
                        if (r["core_id"], r["unit"], r["pipe"]) == (core, unit, "S")) == cycles
            assert next(r for r in mix.core_balance() if r["core_id"] == core)[f"{unit.lower()}_s_cycles"] == cycles
            row = next(r for r in mix.op_summary() if (r["core_id"], r["unit"]) == (core, unit))
            assert row[f"{side}_scalar_ratio"] * row[f"{side}_total_cycles"] == pytest.approx(cycles)


def test_task_duration_is_the_kernels_cycles_plus_the_tasks_dispatch_and_response(vec):
    """msprof's Task Duration holds the task's scheduling and response end beside the cores'
    time. The table's task_overhead_cycles is that gap measured on single-core A2 runs: Task
    Duration - aicore_time = 0.47, 0.46, 0.52, 0.54 us (asc-devkit add / matmul samples), mean
    0.4975 us = 920 cycles at 1850 MHz. So Task Duration = (cycles + 920) / 1850 us, while
    aiv_time stays the unit's own cycles; a table with 1850 cycles there adds 1 us instead."""
    m = vec.machine
    cycles = vec.total_cycles
    row = vec.op_summary()[0]
    assert vec.task_duration_us() == pytest.approx((cycles + 920) / 1850) == row["Task Duration(us)"]
    assert row["aiv_time(us)"] == pytest.approx(cycles / 1850)
    x = np.arange(16 * 64, dtype=np.float32)
    y = pto.alloc_tensor(x.nbytes, pto.float32)
    longer = m.with_overrides({"aicore.task_overhead_cycles": 1850}, source="test: a 1 us task overhead")
    with machine_in_effect(longer):
        other = pto.profile(add_one, grid=(1,), args=(dev(x, pto.float32), y))
    assert other.total_cycles == cycles
    assert other.task_duration_us() == pytest.approx(cycles / 1850 + 1.0)


def test_op_summary_of_a_vector_kernel_fills_the_aiv_side(vec):
    """add_one runs on AIV0 only: Task Type AI_VECTOR_CORE, the aic fields are N/A. The TADDS on
    16 x 64 float32 costs round(0.0156 x 16 x 64 + 25) = 41 cycles (the [formulas] row of
    TADDS float32 64 columns), so aiv_vec_ratio = 41 / the unit's cycles; the TLOAD (MTE2) and
    TSTORE (MTE3) move 4096 B each."""
    m = vec.machine
    table = vec.op_summary()
    assert [(r["core_id"], r["unit"]) for r in table] == [(0, "AIV0"), (None, "total")]
    row = table[0]
    assert row["Task Type"] == "AI_VECTOR_CORE" and row["aicore_time(us)"] is None
    tadds = m.formula_cycles("TADDS", "float32", 16, 64)
    (unit,) = vec.pipeline_summary()           # AIV0 alone runs (the AIC and AIV1 have no program)
    assert unit["unit"] == "AIV0"
    assert row["aiv_total_cycles"] == unit["active_cycles"]
    assert row["aiv_vec_ratio"] == pytest.approx(tadds / unit["active_cycles"])
    load = next(e for e in vec.timeline if e.inst == "TLOAD")
    store = next(e for e in vec.timeline if e.inst == "TSTORE")
    assert row["aiv_mte2_ratio"] == pytest.approx((load.end - load.start) / unit["active_cycles"])
    assert row["aiv_mte3_ratio"] == pytest.approx((store.end - store.start) / unit["active_cycles"])


def test_the_total_row_sums_cycles_averages_times_and_takes_ratios_of_sums(mix):
    """Two AI cores, each with its AIC and both AIVs: MIX_AIC, six unit rows. The total row is
    msprof's per-operator row: aic_total_cycles is the sum over the AIC rows, aicore_time(us)
    that sum / 2 AICs / clock, each ratio the summed busy cycles over the summed cycles (the
    AIV side likewise over 4 units)."""
    table = mix.op_summary()
    units = [r for r in table if r["unit"] != "total"]
    assert sorted((r["core_id"], r["unit"]) for r in units) == \
        [(c, u) for c in (0, 1) for u in ("AIC", "AIV0", "AIV1")]
    total = table.total
    assert total["Task Type"] == "MIX_AIC" and total["Block Dim"] == 2
    mhz = mix.machine.clock_ghz * 1e3
    for side, time_col, pipes, n in (("aic", "aicore_time(us)", ("mac", "mte2", "fixpipe"), 2),
                                     ("aiv", "aiv_time(us)", ("vec", "mte2", "mte3"), 4)):
        mine = [r for r in units if (r["unit"] == "AIC") == (side == "aic")]
        assert len(mine) == n
        cycles = sum(r[f"{side}_total_cycles"] for r in mine)
        assert total[f"{side}_total_cycles"] == cycles
        assert total[time_col] == pytest.approx(cycles / n / mhz)
        for p in pipes:
            busy = sum(r[f"{side}_{p}_ratio"] * r[f"{side}_total_cycles"] for r in mine)
            assert total[f"{side}_{p}_ratio"] == pytest.approx(busy / cycles)
            assert 0 < total[f"{side}_{p}_ratio"] < 1


def test_op_summary_csv_round_trips_with_na_for_the_other_side(mm, tmp_path):
    table = mm.op_summary()
    path = table.to_csv(tmp_path / "op_summary.csv")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == OP_SUMMARY_COLUMNS
        back = list(reader)
    assert len(back) == len(table)
    for got, want in zip(back, table):
        for col in OP_SUMMARY_COLUMNS:
            if want[col] is None:
                assert got[col] == "N/A"
            elif isinstance(want[col], str):
                assert got[col] == want[col]
            else:
                assert float(got[col]) == want[col], col


def test_export_csv_of_an_ai_core_kernel_adds_op_summary(mm, tmp_path):
    paths = mm.export_csv(tmp_path)
    head = paths["op_summary"].read_text().splitlines()[0].split(",")
    assert head[:6] == ["Op Name", "Task Type", "Task Duration(us)", "Block Dim", "core_id", "unit"]


def test_op_summary_prints_the_ratios_per_unit(mm):
    text = str(mm.op_summary()).splitlines()
    assert text[0].startswith("op_summary of one_matmul: AI_CORE, block dim 1")
    assert text[1].split() == ["core", "unit", "time(us)", "cycles", "mac", "scalar", "mte1", "mte2",
                               "fixpipe", "vec", "mte3"]
    assert text[2].split()[:2] == ["0", "AIC"] and text[3].split()[:2] == ["all", "AIC"]


def test_lane_kernels_have_no_op_summary_or_roofline():
    @pto.kernel
    def copy(a, o):
        i = pto.get_global_id()
        pto.store(o + i, pto.load(a + i))
    x = pto.alloc_tensor(32 * 4)
    prof = pto.profile(copy, grid=(1, 1, 1), block=(32, 1, 1), args=(x, x))
    for call in (prof.op_summary, prof.roofline, prof.task_duration_us):
        with pytest.raises(pto.ProfileError, match="AI-core kernels"):
            call()


# ---------------------------------------------------------------- pipeline_summary
def test_pipeline_summary_has_perf_sims_active_start_and_end(mm):
    """Perf-Sim's columns (pto-isa docs/costmodel/perf-sim-user-guide.md): the AIC is active
    from cycle 0 (its first scalar issue) to the TSTORE_ACC's completion; active_cycles is
    end - start on every row."""
    rows = mm.pipeline_summary()
    assert list(rows[0])[:8] == ["op_name", "core_id", "unit", "total_cycles", "active_start_cycle",
                                 "active_end_cycle", "active_cycles", "busy_cycles"]
    store = next(e for e in mm.timeline if e.inst == "TSTORE_ACC")
    aic = rows[0]
    assert (aic["active_start_cycle"], aic["active_end_cycle"]) == (0, store.end)
    assert all(r["active_cycles"] == r["active_end_cycle"] - r["active_start_cycle"] for r in rows)


def test_pipeline_summary_per_pipe_gives_each_pipes_first_start_and_last_completion(mm):
    """The AIC's MTE2 runs the two TLOADs, the second issued behind the first's bytes: from the
    first one's start, 321 busy cycles (matmul_chain), ending at start + 321; PIPE_M runs the
    one TMATMUL (22 cycles)
    right after the TEXTRACT to L0B. A cube-only kernel's AIVs do not run and have no rows."""
    chain = matmul_chain(mm.machine)
    pipes = {(r["unit"], r["pipe"]): r for r in mm.pipeline_summary(per="pipe")}
    mte2 = pipes[("AIC", "MTE2")]
    first = min(e.start for e in mm.timeline if e.inst == "TLOAD")
    assert (mte2["operations"], mte2["active_start_cycle"], mte2["busy_cycles"]) == (2, first, chain["mte2"])
    assert mte2["active_end_cycle"] == first + chain["mte2"]
    m_pipe = pipes[("AIC", "M")]
    ext_b = max(e.end for e in mm.timeline if e.inst == "TEXTRACT")
    assert (m_pipe["active_start_cycle"], m_pipe["active_end_cycle"]) == (ext_b, ext_b + chain["mac"])
    assert {unit for unit, _pipe in pipes} == {"AIC"}        # the AIVs have no program: no rows
    with pytest.raises(pto.ArgumentError, match="'unit' or 'pipe'"):
        mm.pipeline_summary(per="core")


# ---------------------------------------------------------------- roofline
def test_roofline_of_one_matmul_is_latency_bound(mm):
    """Work: one 16 x 16 x 16 matmul = 2 x 16^3 = 8192 FLOPs; GM bytes: two 16 x 16 float16
    loads (2 x 512) + one 16 x 16 float32 store (1024) = 2048: intensity 4 FLOP/B. Roofs on
    the one AI core: cube 2 x 16 x 16 x k_tile 16 / per_repeat 1 = 8192 FLOP/cycle; GM
    bandwidth min(gm_to_l1 78.4 + 2 x (gm_to_ub 58.6 + ub_to_gm 109.4) + l1_to_gm 18.6 +
    drain 118 = 551 B/cycle, L2 link 4324) = 551. Times at the roofs, on the busiest resource:
    cube 8192 / 8192 = 1 cycle; GM: the AIC's GM->L1 path carries the 1024 B of the loads at
    78.4 B/cycle = 13.1 cycles (longer than the fixpipe's 1024 B at 118, or all 2048 B at the
    L2 link). Of the kernel's ~900 cycles: far below every roof, so latency/sync."""
    m = mm.machine
    r = mm.roofline()
    assert (r.row["cube_flops"], r.row["vector_flops"], r.row["gm_bytes"]) == (2 * 16 ** 3, 0, 2048)
    assert r.row["cube_flops_exact"] and r.row["arithmetic_intensity"] == 4.0
    cube = 2 * 16 * 16 * m.cost_term("TMATMUL", "k_tile") / m.cost_term("TMATMUL", "per_repeat")
    bw = min(m.gm_to_l1_bytes_per_cycle + 2 * (m.gm_to_ub_bytes_per_cycle + m.ub_to_gm_bytes_per_cycle)
             + m.l1_to_gm_bytes_per_cycle + m.drain_bytes_per_cycle, m.l2_chip_bytes_per_cycle)
    assert r.roofs["cube"]["per_cycle"] == cube
    assert r.roofs["GM bandwidth"]["per_cycle"] == pytest.approx(bw)
    assert r.row["cube_cycles_at_roof"] == pytest.approx(2 * 16 ** 3 / cube)
    assert r.row["gm_cycles_at_roof"] == pytest.approx(1024 / m.gm_to_l1_bytes_per_cycle)
    assert r.roofs["GM bandwidth"]["binding"].startswith("core 0 AIC GM->L1: 1024 B")
    hz = m.clock_ghz * 1e9
    assert r.row["attained_gflops"] == pytest.approx(2 * 16 ** 3 / mm.total_cycles * hz / 1e9)
    assert r.bound == "latency/sync"
    assert "TMATMUL" in r.roofs["cube"]["derivation"] and "latency/sync" in str(r)


def test_roofline_counts_one_vector_flop_per_element(vec):
    """add_one: TADDS on 16 x 64 float32 = 1024 element operations; GM: 4096 B in + 4096 out.
    The vector roof is the fastest [formulas] rate: 1 / slope 0.0078 (TADDS float16) = 128.2
    elements per cycle per AIV, x 2 AIV; the 1024 FLOPs all ran on AIV0, so they need 1024 /
    128.2 = 8 cycles at the roof."""
    r = vec.roofline()
    assert (r.row["cube_flops"], r.row["vector_flops"], r.row["gm_bytes"]) == (0, 16 * 64, 2 * 4096)
    tadds = max(1 / s for (op, _d, _c), (s, _b) in vec.machine.vector_formulas.items() if op == "TADDS")
    assert r.roofs["vector"]["per_cycle"] == pytest.approx(2 * tadds)
    assert "TADDS" in r.roofs["vector"]["derivation"]
    assert r.row["vector_cycles_at_roof"] == pytest.approx(1024 / tadds)     # AIV0's, at one AIV's rate


@pto.kernel
def rows_matmul(A, B, C, M):
    """one_matmul with M (a run-time value) valid rows of A and C."""
    with pto.cube():
        a1 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat, valid=(M, 16))
        b1 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        a0 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left, valid=(M, 16))
        b0 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc, valid=(M, 16))
        pto.tload(a1, A)
        pto.tload(b1, B)
        pto.textract(a0, a1)
        pto.textract(b0, b1)
        pto.tmatmul(acc, a0, b0)
        pto.tstore(C, acc)


def test_a_matmul_of_run_time_shape_counts_the_fractals_the_cube_ran():
    """M = 8 rows at run time: the cube still runs one 16 x 16 x 16 fractal (TMATMUL's cycles:
    latency + 1 repeat), so the count is 2 x 16^3 = 8192 FLOPs, an upper bound of the 2 x 8 x
    16 x 16 = 4096 done (cube_flops_exact False). GM bytes: 8 x 16 float16 (256) + 16 x 16
    float16 (512) in, 8 x 16 float32 (512) out = 1280."""
    ones = np.ones((16, 16), np.float16)
    c = pto.alloc_tensor(16 * 16 * 4, pto.float32)
    prof = pto.profile(rows_matmul, grid=(1,), args=(dev(ones, pto.float16), dev(ones, pto.float16), c, 8))
    row = prof.roofline().row
    assert (row["cube_flops"], row["cube_flops_exact"], row["gm_bytes"]) == (2 * 16 ** 3, False, 1280)
    assert "(at most)" in str(prof.roofline())


def test_the_bound_is_the_longest_roof_time_unless_it_explains_under_the_threshold():
    """600 of 1000 cycles at the cube roof: cube-bound; the same work in 2000 cycles is 30%:
    latency/sync; a threshold of 0.25 makes it cube-bound again."""
    times = {"cube": 600.0, "vector": 10.0, "GM bandwidth": 300.0}
    assert name_bound(times, 1000, 0.5) == "cube"
    assert name_bound(times, 2000, 0.5) == "latency/sync"
    assert name_bound(times, 2000, 0.25) == "cube"
    assert name_bound({"cube": 0.0, "vector": 5.0, "GM bandwidth": 900.0}, 1000, 0.5) == "GM bandwidth"


def test_a_table_without_vector_formulas_takes_the_vector_roof_from_its_entries():
    """ascend910b-mock has no [formulas]: the vector roof is the fastest head/slope/tail entry
    of an arithmetic op, 256 B of float16 (128 elements) per per_repeat cycles."""
    m = pto.use_machine("ascend910b-mock")
    ones = np.ones((16, 16), np.float16)
    c = pto.alloc_tensor(16 * 16 * 4, pto.float32)
    r = pto.profile(one_matmul, grid=(1,), args=(dev(ones, pto.float16), dev(ones, pto.float16), c)).roofline()
    assert not m.vector_formulas
    name = r.roofs["vector"]["derivation"].split()[0]
    rate = m.cost_term(name, "repeat_bytes") / 2 / m.cost_term(name, "per_repeat")
    assert r.roofs["vector"]["per_unit"] == pytest.approx(rate)
    assert r.row["cube_flops"] == 2 * 16 ** 3 and r.bound == "latency/sync"


def test_roofline_threshold_is_checked(mm):
    with pytest.raises(pto.ArgumentError, match="threshold"):
        mm.roofline(threshold=2)


# ---------------------------------------------------------------- to_pandas on every table
def test_every_table_converts_to_pandas_with_the_same_numbers(mm):
    summary = mm.op_summary()
    frame = summary.to_pandas()
    assert list(frame.columns) == list(OP_SUMMARY_COLUMNS)
    assert frame["aic_mte2_ratio"].tolist() == [r["aic_mte2_ratio"] for r in summary]
    assert frame["aiv_vec_ratio"].isna().all()          # N/A: pandas' missing value
    ps = mm.pipeline_summary().to_pandas()
    assert ps["active_end_cycle"].tolist() == [r["active_end_cycle"] for r in mm.pipeline_summary()]
    pipes = mm.pipeline_summary(per="pipe").to_pandas()
    assert pipes["busy_cycles"].sum() == sum(r["busy_cycles"] for r in mm.pipeline_summary(per="pipe"))
    roof = mm.roofline().to_pandas()
    assert roof.loc[0, "bound"] == "latency/sync" and roof.loc[0, "cube_flops"] == 2 * 16 ** 3
    tl = mm.timeline.to_pandas()
    assert len(tl) == len(mm.timeline)
    assert (tl["end"] - tl["start"]).sum() == sum(e.end - e.start for e in mm.timeline)
    bubbles = mm.bubbles()
    assert bubbles.to_pandas()["cycles"].sum() == bubbles.idle_cycles
    bd = mm.cycle_breakdown().to_pandas()
    assert bd.loc["TMATMUL", "count"] == 1
    hot = mm.hotspots().to_pandas()
    assert hot["executions"].sum() == sum(r["executions"] for r in mm.hotspots())


def test_to_pandas_without_pandas_names_the_extra(mm, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)     # import pandas raises ImportError
    for table in (mm.op_summary(), mm.roofline(), mm.timeline, mm.bubbles()):
        with pytest.raises(ImportError, match=r'pip install "pypto-sim\[pandas\]"'):
            table.to_pandas()


def test_the_new_reports_are_plain_data_that_json_and_pickle_take(mm):
    import json
    import pickle
    for table in (mm.op_summary(), mm.roofline(), mm.pipeline_summary(per="pipe")):
        assert json.loads(json.dumps(table)) == list(table)
        again = pickle.loads(pickle.dumps(table))
        assert list(again) == list(table) and str(again) == str(table)
        with pytest.raises(TypeError, match="read-only"):
            table.append({})


@pto.kernel
def cube_section_only(X):
    with pto.cube():
        pass


def test_a_kernel_without_pipe_work_takes_its_task_type_from_its_code():
    """No unit runs a pipe operation: the Task Type follows the units the kernel has code
    for, AI_CORE for a cube section alone (it was labelled AI_VECTOR_CORE)."""
    prof = pto.profile(cube_section_only, grid=(1,), args=(pto.alloc_tensor(1024),))
    assert {row["Task Type"] for row in prof.op_summary()} == {"AI_CORE"}
