"""Calibration (issue #7): microbenchmarks, fitting, correlation, fusion rules, profile_on_npu.

The microbenchmarks re-derive the default table exactly; rows measured on a perturbed copy fit
back to the perturbed numbers; a fusion rule lowers a kernel's cycles by exactly its saving per
fused pair (hand-computed on tests/machines/simple.toml).
"""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.calibrate.microbench import AICORE_INSTRUCTIONS, GM_INDEX_INSTRUCTIONS, SCALAR_MEMORY_INSTRUCTIONS
from pypto_sim.calibrate.microbench import COMM_SIGNAL_INSTRUCTIONS
from pypto_sim.calibrate import (UNCOVERED, CalibrationError, aicore_coverage, Row, correlate, coverage, fit,
                                 read_rows, run_microbenchmarks, write_rows, write_table)
from pypto_sim.calibrate.fitmath import ceil_fit, simplest_in
from pypto_sim.cli import main
from pypto_sim.errors import MachineError
from pypto_sim.isa import AICORE_ONLY_FAMILIES, LANE_TILE_FAMILIES
from pypto_sim.timing.machine import load_machine_from, resolve_machine

from simt_kernels import run_matmul

ROOT = Path(__file__).resolve().parent.parent
SIMPLE = ROOT / "tests" / "machines" / "simple.toml"
RATES = ("hbm_core_read_bytes_per_cycle", "hbm_core_write_bytes_per_cycle", "hbm_chip_bytes_per_cycle")


@pytest.fixture(scope="module")
def default_rows():
    return run_microbenchmarks("ascend910b")


def _table_value(m, name, fld):
    if name == "pipes.scalar":
        return m.pipes["scalar"][fld]
    return getattr(m, fld)(name)


# ---------------------------------------------------------------- microbenchmarks on the default
def test_microbenchmarks_rederive_every_covered_entry_exactly(default_rows):
    """Every latency and issue interval the microbenchmarks cover comes back exactly, as do the
    tile ops' cycles per repeat and the three HBM bandwidths; nothing is left only bounded."""
    m = resolve_machine("ascend910b")
    fitted = fit(default_rows, base=m)
    covered = [key for key, status in coverage(m).items() if status == "covered"]
    assert len(covered) == 2 * (len(m.instructions) + 1) - len(UNCOVERED)
    wrong = {key: (fitted.get(key[0], {}).get(key[1]), _table_value(m, *key)) for key in covered
             if fitted.get(key[0], {}).get(key[1]) != _table_value(m, *key)}
    assert not wrong
    for name, t in m.instructions.items():
        for key in ("per_repeat", "per_repeat_f32"):
            if key in t.extra and name not in AICORE_INSTRUCTIONS + GM_INDEX_INSTRUCTIONS:
                assert fitted[name][key] == t.extra[key], name
    for key in RATES:
        assert fitted[f"memory.{key}"]["value"] == m.values[key]
    assert fitted["fusion.TLOAD+MMA"]["saving"] == 0
    assert not fitted.bounded


def test_every_instruction_is_covered_and_the_gaps_are_listed_with_reasons():
    """Each instruction has its latency or its issue interval (or both) measured, except EXIT,
    whose neither can influence any cycle count, and the AI core's syncs, TSTORE_ACC, TSTORE_FP,
    TMOV_M2S and its vector-only ops (priced by other fields, aicore_coverage). The uncovered entries are exactly
    these, each with its reason: control, sync and ALLOC_LOCAL latencies (no result; the next
    instruction issues a cycle later whatever the latency), EXIT's issue interval (nothing
    follows it), the issue intervals of MMA and vector tile ops (the pipe is held for the whole
    operation) and of the AI core's tile instructions (hidden behind their pipes), and both fields
    of the tile views TRESHAPE and TSUBVIEW (scalar-unit bindings the AI-core benchmarks do not
    time), of CHECK (the run-time form of a compile-time rule, emitted only in AI-core code) and of
    the indexed GM transfers MGATHER / MSCATTER (priced from their headers' loops, not timed) and of
    TPREFETCH (TLOAD's rows: each record one of its header's DMAs, priced as a TLOAD of its bytes) and of
    the communication signals TNOTIFY / TWAIT / TTEST (priced by the rows of their headers' intrinsics)."""
    no_latency = {"ALLOC_LOCAL", "LOCAL_ARRAY", "LOCAL_STORE", "BARRIER", "FENCE", "IF", "ELSE", "ENDIF", "LOOP", "BRK_UNLESS", "BREAK",
                  "CONTINUE", "LOOP_CONT", "ENDLOOP", "RET", "EXIT", "WAIT_ALL", "SET_FLAG", "WAIT_FLAG"}
    held_pipe = {"MMA"} | {s.name for s in pto.instructions()
                           if s.family in LANE_TILE_FAMILIES and s.name not in ("TCVT", "TMOV_V2V")}
    assert {"TADD", "TEXP", "TROWSUM", "TROWEXPAND", "TABS", "TROWMIN"} <= held_pipe
    aicore_v = {s.name for s in pto.instructions() if s.family in AICORE_ONLY_FAMILIES} | {"TCVT", "TMOV_V2V"}
    # tile_move on the V pipe: UB -> UB copies; the cube core's Mat fill on MTE2
    vec_windows = {"TEXTRACT_V2V", "TINSERT_V2V", "TEXTRACT_ND2NZ", "TEXPANDS_MAT"}
    aicore_sync = {"PIPE_BARRIER", "CROSS_CORE_SET_FLAG", "CROSS_CORE_WAIT_FLAG", "SYNCALL", "SYNCALL_SOFT"}
    expected = ({(n, "latency") for n in no_latency} | {(n, "issue_interval") for n in held_pipe}
                | {("EXIT", "issue_interval")}
                | {(n, "issue_interval") for n in AICORE_INSTRUCTIONS}
                | {(n, "latency") for n in aicore_v | aicore_sync | vec_windows
                   | {"TSTORE_ACC", "TIMG2COL", "TSTORE_FP", "TMOV_M2S"}}
                | {(n, f) for n in ("TRESHAPE", "TSUBVIEW", "CHECK", "TPREFETCH", *GM_INDEX_INSTRUCTIONS,
                                    *SCALAR_MEMORY_INSTRUCTIONS, *COMM_SIGNAL_INSTRUCTIONS)
                   for f in ("latency", "issue_interval")})
    assert set(UNCOVERED) == expected
    assert all(len(reason) > 40 for reason in UNCOVERED.values())
    status = coverage()
    for spec in pto.instructions():
        measured = [f for f in ("latency", "issue_interval") if status[(spec.name, f)] == "covered"]
        unmeasured = {"EXIT", "TSTORE_ACC", "TSTORE_FP", "TMOV_M2S", "TIMG2COL", "TRESHAPE", "TSUBVIEW", "CHECK",
                      "TPREFETCH",
                      *GM_INDEX_INSTRUCTIONS,
                      *SCALAR_MEMORY_INSTRUCTIONS, *COMM_SIGNAL_INSTRUCTIONS}
        assert measured or spec.name in unmeasured | aicore_v | aicore_sync | vec_windows, spec.name
    assert status[("pipes.scalar", "latency")] == status[("pipes.scalar", "issue_interval")] == "covered"


def test_aicore_microbenchmarks_rederive_the_aicore_entries(default_rows):
    """The AI-core rows of the default run give back every [aicore] bandwidth and drain entry,
    the MTE1 / FIX / cube latencies and cycles per repeat, and each vector op's head, tail,
    per_repeat and unaligned_floor exactly; each refitted [formulas] row reproduces the
    measured cycles and is within one cycle of the base row at every row count up to a 64 KiB
    tile (round(slope x n + bias) hides a bias's fraction between the rows it was measured at)."""
    from pypto_sim.calibrate.aicore_kernels import AICORE_RATES
    m = resolve_machine("ascend910b")
    fitted = fit(default_rows, base=m)
    status = aicore_coverage(m)
    for key in AICORE_RATES:
        assert status[(f"aicore.{key}", "value")] == "covered"
        assert fitted[f"aicore.{key}"]["value"] == m.values[key], key
    for name in ("TEXTRACT", "TMOV", "TMOV_ACC", "TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS", "TGEMV",
                 "TGEMV_ACC", "TGEMV_BIAS"):
        assert fitted[name]["latency"] == m.latency(name), name
    for name in ("TMATMUL", "TGEMV"):
        assert fitted[name]["per_repeat_f32"] == m.instructions[name].extra["per_repeat_f32"], name
        assert fitted[name]["per_repeat"] == m.instructions[name].extra["per_repeat"], name
    covered_v = [(n, f) for (n, f), why in status.items() if why == "covered" and f in
                 ("head", "tail", "per_repeat", "unaligned_floor")]
    assert len(covered_v) > 250
    for name, fld in covered_v:
        t = m.instructions[name]
        want = t.extra.get(fld, t.latency if fld == "head" else 0)
        # a measured floor of 0 is not written to an entry that has none
        got = fitted[name].get(fld, 0 if fld == "unaligned_floor" else None)
        assert got == want, (name, fld)
    formulas = [k for k, why in status.items() if k[0].startswith("formula.") and why == "covered"]
    assert len(formulas) == len(m.vector_formulas) == 274
    worst = 0
    for (entry, _) in formulas:
        _, op, dtype, cols = entry.split(".")
        slope0, bias0 = m.vector_formulas[(op, dtype, cols if cols == "*" else int(cols))]
        c = 64 if cols == "*" else int(cols)
        item = 2 if dtype == "float16" else 4
        f = fitted[entry]
        for rows in range(8, 65536 // (c * item) + 1, 8):
            n = rows * c
            worst = max(worst, abs(round(f["slope"] * n + f["bias"]) - round(slope0 * n + bias0)))
    assert worst <= 1
    assert not fitted.unused and not fitted.bounded


def test_rows_name_their_benchmark_and_what_a_size_step_adds(default_rows):
    """The rows of the default run: a dependent FMA chain adds latency(FMA) = 7 per FMA, an
    independent stream issue_interval = 1, a 32-byte pointer chase 307 + 1 per LOAD."""
    def series(bench, instr):
        return sorted((r.size, r.cycles) for r in default_rows if (r.benchmark, r.instruction) == (bench, instr))
    for bench, instr, step in (("chain", "FMA", 7), ("stream", "FMA", 1), ("chase", "LOAD", 308),
                               ("chain", "DIV", 17), ("stream", "EXP", 2), ("chain", "pipes.scalar", 2)):
        pts = series(bench, instr)
        assert len(pts) == 3
        assert all(c1 - c0 == step * (s1 - s0) for (s0, c0), (s1, c1) in zip(pts, pts[1:]))
    assert all(r.machine == "ascend910b" for r in default_rows)


def test_microbenchmarks_leave_the_callers_machine_and_device_alone(simple_machine):
    d = pto.alloc_tensor(16)
    pto.memcpy_h2d(d, np.arange(4, dtype=np.float32))
    rows = run_microbenchmarks("ascend910b", only=["FMA"])
    assert {r.instruction for r in rows} == {"FMA"}
    assert pto.machine().name == "simple"
    assert np.array_equal(d.numpy(), np.arange(4, dtype=np.float32))


# ---------------------------------------------------------------- calibrating a perturbed table
PERTURBED = {
    "ADD": {"latency": 9}, "EXP": {"latency": 12, "issue_interval": 3}, "DIV": {"issue_interval": 3},
    "LT": {"latency": 5}, "EQ": {"latency": 8}, "MOV": {"latency": 4}, "SELECT": {"issue_interval": 2},
    "GLOBAL_ID": {"latency": 3}, "WARP_ID": {"latency": 1},
    "LOAD": {"latency": 350, "issue_interval": 2}, "STORE": {"latency": 120}, "FMA_STORE": {"latency": 9},
    "LOAD_L1": {"latency": 6}, "STORE_L1": {"latency": 12}, "BARRIER_BLOCK": {"latency": 3},
    "IF": {"issue_interval": 2}, "ENDLOOP": {"issue_interval": 3}, "BREAK": {"issue_interval": 2},
    "LOOP_CONT": {"issue_interval": 2}, "RET": {"issue_interval": 2}, "ALLOC_LOCAL": {"issue_interval": 2},
    "TLOAD": {"latency": 280, "issue_interval": 2}, "TSTORE": {"latency": 170},
    "MMA": {"latency": 8, "per_repeat_f32": 3}, "TADD": {"latency": 30, "per_repeat": 2.5},
    # TEXP slower (a repeat of 64 float32 in 1.75 cycles would beat Exp's 32 elements a cycle,
    # the table's [peaks], which raise it back to 2)
    "TEXP": {"per_repeat": 2.25}, "TROWSUM": {"latency": 36},
    "pipes.scalar": {"latency": 3, "issue_interval": 2},
    "memory.hbm_core_read_bytes_per_cycle": {"value": 120.5},
    "memory.hbm_core_write_bytes_per_cycle": {"value": 88.0},
    "memory.hbm_chip_bytes_per_cycle": {"value": 700.0},
    # the real AI core
    "aicore.l1_to_l0a_bytes_per_cycle": {"value": 100.0}, "aicore.gm_to_ub_bytes_per_cycle": {"value": 64.0},
    "aicore.drain_row_cycles": {"value": 5.0}, "aicore.drain_penalty_cycles": {"value": 3.1},
    "aicore.drain_fixed_cycles": {"value": 150.0},
    "TMATMUL": {"latency": 25, "per_repeat": 2}, "TEXTRACT": {"latency": 4},
    "TCMP": {"head": 20, "tail": 5}, "TROWMAX": {"head": 9, "per_repeat": 3},
}


def test_calibrating_from_the_default_recovers_a_perturbed_table(tmp_path):
    """Rows measured on a copy of the default table with latencies up and down, issue
    intervals and cycles per repeat changed and every HBM bandwidth lower: fitting them
    starting from the default table and writing the result gives back the perturbed table,
    entry for entry, with the changed entries sourced "fitted from microbenchmarks". Only the
    perturbed entries' benchmarks run (``only``; TSTORE_ACC's measures the drain): every other
    entry the fit needs as a known value is the default's, which the perturbed table keeps
    (that the benchmarks give back every default entry is
    test_microbenchmarks_rederive_every_covered_entry_exactly's)."""
    truth_path = write_table(PERTURBED, "ascend910b", tmp_path / "npu.toml", label="perturbed")
    truth = load_machine_from(truth_path)
    rows = run_microbenchmarks(truth, only=[*PERTURBED, "TSTORE_ACC"])      # the drain's benchmark
    write_rows(rows, tmp_path / "rows.csv")
    fitted = fit(read_rows(tmp_path / "rows.csv"), base="ascend910b")
    new = load_machine_from(write_table(fitted, "ascend910b", tmp_path / "new.toml", label="rows.csv"))
    base = resolve_machine("ascend910b")
    for name, t in truth.instructions.items():
        got = new.instructions[name]
        assert (got.latency, got.issue_interval, got.extra) == (t.latency, t.issue_interval, t.extra), name
    assert new.pipes["scalar"]["latency"] == 3 and new.pipes["scalar"]["issue_interval"] == 2
    for key in RATES:
        assert new.values[key] == truth.values[key]
    assert new.values == truth.values                       # the [aicore] entries too
    for name in ("ADD", "LOAD", "TADD", "MMA", "IF", "TMATMUL", "TCMP"):
        assert new.source(name) == "fitted from microbenchmarks (rows.csv)"
        assert (base.latency(name), base.issue_interval(name)) != (new.latency(name), new.issue_interval(name)) \
            or base.instructions[name].extra != new.instructions[name].extra
    # BARRIER_BLOCK's issue interval hides behind its latency 3: only bounded, base kept
    assert fitted.bounded[("BARRIER_BLOCK", "issue_interval")] == (1, 3, 1)


def test_noisy_hardware_rows_fit_by_least_squares():
    """Real measurements are not integers: with +-0.4 cycles of noise on every row the exact fit
    finds no solution and least squares takes over; latencies still round to the table's and the
    bandwidths land within 1%."""
    rng = np.random.default_rng(7)
    rows = [Row(r.benchmark, r.instruction, r.size, r.cycles + rng.uniform(-0.4, 0.4))
            for r in run_microbenchmarks("ascend910b", only=["ADD", "EXP", "TLOAD", "TSTORE", "TADD",
                                                            "memory.hbm_chip_bytes_per_cycle"])]
    fitted = fit(rows)
    m = resolve_machine("ascend910b")
    assert fitted["ADD"] == {"issue_interval": 1, "latency": 7}
    assert fitted["EXP"] == {"issue_interval": 2, "latency": 16}
    assert fitted["TLOAD"]["latency"] == 307 and fitted["TADD"]["latency"] in (24, 25)
    assert abs(fitted["TADD"]["per_repeat"] - 2.11) < 0.02
    for key in ("hbm_core_read_bytes_per_cycle", "hbm_core_write_bytes_per_cycle"):
        assert abs(fitted[f"memory.{key}"]["value"] / m.values[key] - 1) < 0.01


# ---------------------------------------------------------------- fusion rules
PAIRS_HEAD = """
@pto.kernel
def pairs(a, o):
    c = pto.alloc_local(256)
    x = pto.alloc_local(256)
"""
PAIR = "    pto.async_load(x, a, 1024)\n    pto.mma(c, x, x, 16, 16, 16)\n"
PAIRS_TAIL = "    pto.wait_all()\n    pto.store(o, c, 1024)\n"


def _fused_table(tmp_path, rule='saving = 3'):
    text = SIMPLE.read_text() + f'\n[[fusion]]\nfirst = "TLOAD"\nsecond = "MMA"\n{rule}\nsource = "test"\n'
    path = tmp_path / "fused.toml"
    path.write_text(text)
    return path


def _run_pairs(make_kernels, k):
    src = PAIRS_HEAD + PAIR * k + PAIRS_TAIL
    d_a, d_o = pto.alloc_tensor(1024), pto.alloc_tensor(1024)
    pto.memcpy_h2d(d_a, np.full(256, 0.5, np.float32))
    prof = pto.profile(make_kernels(src).pairs, args=(d_a, d_o))
    return prof, d_o.numpy().reshape(16, 16)


@pytest.mark.parametrize("k", [1, 3])
def test_fusion_rule_saves_its_cycles_once_per_fused_pair(make_kernels, simple_machine, tmp_path, k):
    """simple.toml: ALLOC_LOCAL x2 at 0 and 1; each TLOAD of 1024 B takes 100 + 1024 / 32 = 132,
    each float32 16x16x16 MMA 6 + 2 x 2 = 10. The next TLOAD overwrites x, which the MMA reads,
    so everything is serial: the last MMA ends at 2 + 142k, WAIT_ALL issues then, the TSTORE at
    2 + 142k + 1 and it takes 50 + 32: total 85 + 142k (227 for k=1, 511 for k=3), less 40 for
    every TLOAD after the first: they re-read the same two 512-byte lines, which hit in the L2
    and save its miss extra (simple.toml [l2]): 227 and 431.
    With [[fusion]] TLOAD+MMA saving 3 every MMA takes 7: 3k cycles less; the
    MMAs appear as TLOAD+MMA in the timeline and the breakdown, the TLOADs as themselves."""
    plain, c_plain = _run_pairs(make_kernels, k)
    assert plain.total_cycles == 85 + 142 * k - 40 * (k - 1)
    pto.use_machine(_fused_table(tmp_path))
    fused, c_fused = _run_pairs(make_kernels, k)
    assert fused.total_cycles == plain.total_cycles - 3 * k == 85 + 139 * k - 40 * (k - 1)
    assert np.array_equal(c_plain, c_fused)                       # values do not change
    names = [e.inst for e in fused.timeline]
    assert names.count("TLOAD+MMA") == k and names.count("TLOAD") == k and "MMA" not in names
    assert all(e.end - e.start == 7 for e in fused.timeline if e.inst == "TLOAD+MMA")
    row = fused.cycle_breakdown()["TLOAD+MMA"]
    assert (row["count"], row["busy_cycles"], row["pipe"]) == (k, 7 * k, "mma")
    assert "TLOAD+MMA" in str(fused.cycle_breakdown())


def test_fusion_by_latency_and_on_lane_instructions(make_kernels, simple_machine, tmp_path):
    """`latency = 5` gives the fused MMA a head of 5 instead of 6 (saving 1). A lane rule: a LOAD
    whose value an ADD consumes. simple.toml: LANE_ID at 0, LOAD at 1 ready at 1 + 100 + 128/32
    = 105, ADD (latency 4) ready at 109, STORE issues at 109 and ends at 109 + 50 + 4 = 163. With
    LOAD+ADD saving 2 the ADD takes 2 cycles: 161. (The pairs kernel's second TLOAD hits
    in the L2: 40 cycles less.)"""
    pto.use_machine(_fused_table(tmp_path, "latency = 5"))
    assert pto.machine().fusions[0].saving == 1
    prof, _ = _run_pairs(make_kernels, 2)
    assert prof.total_cycles == 85 + 141 * 2 - 40
    k = make_kernels("@pto.kernel\ndef f(a, o):\n    i = pto.get_lane_id()\n"
                     "    x = pto.load(a + i)\n    pto.store(o + i, x + 1.0)\n").f
    d_a, d_o = pto.alloc_tensor(128), pto.alloc_tensor(128)
    pto.use_machine(SIMPLE)
    assert pto.profile(k, args=(d_a, d_o)).total_cycles == 163
    text = SIMPLE.read_text() + '\n[[fusion]]\nfirst = "LOAD"\nsecond = "ADD"\nsaving = 2\nsource = "t"\n'
    (tmp_path / "lane.toml").write_text(text)
    pto.use_machine(tmp_path / "lane.toml")
    prof = pto.profile(k, args=(d_a, d_o))
    assert prof.total_cycles == 161
    assert [e.inst for e in prof.timeline][:4] == ["LANE_ID", "LOAD", "LOAD+ADD", "STORE"]


def test_fusion_finds_the_load_before_an_mma_in_the_pipelined_matmul(tmp_path):
    """In the pipelined matmul the MMA reads A and B through addresses recomputed for each use
    and a WAIT_ALL sits between: the rule pairs each MMA with the TLOAD of B just before it.
    depth=1 serialises TLOADs and MMAs, so each of the 8 MMAs per block saves its 3 cycles."""
    p1, c1, ref = run_matmul(1, 32, 32, 256, 32, 32, 32)
    pto.use_machine(write_table({"fusion.TLOAD+MMA": {"saving": 3}}, "ascend910b", tmp_path / "f.toml"))
    p2, c2, _ = run_matmul(1, 32, 32, 256, 32, 32, 32)
    assert p1.total_cycles - p2.total_cycles == 3 * 256 // 32
    np.testing.assert_allclose(c2, ref, rtol=1e-4, atol=1e-4)
    assert p2.cycle_breakdown()["TLOAD+MMA"]["count"] == 8 and p2.cycle_breakdown()["TLOAD"]["count"] == 16


@pytest.mark.parametrize("rule,message", [
    ('first = "TLOAD"\nsecond = "MMX"\nsaving = 1', "not an ISA instruction"),
    ('first = "IF"\nsecond = "MMA"\nsaving = 1', "cannot be fused"),
    ('first = "TLOAD"\nsecond = "MMA"\nsaving = 1\nlatency = 3', "exactly one of latency"),
    ('first = "TLOAD"\nsecond = "MMA"\nsaving = 9', "exceeds MMA's latency"),
    ('first = "TLOAD"\nsecond = "MMA"\nsaving = 1\ncolour = 1', "unknown key"),
])
def test_fusion_rules_are_validated(tmp_path, rule, message):
    path = tmp_path / "bad.toml"
    path.write_text(SIMPLE.read_text() + f'\n[[fusion]]\n{rule}\nsource = "t"\n')
    with pytest.raises(MachineError, match=message):
        load_machine_from(path)


def test_calibration_measures_a_fusion_and_write_table_replaces_rules(tmp_path):
    """The fused_pair benchmark sees the saving of a TLOAD+MMA rule; write_table writes it as a
    [[fusion]] entry, and a measured saving of 0 removes the base's rule."""
    fused = write_table({"fusion.TLOAD+MMA": {"saving": 4}}, "ascend910b", tmp_path / "f.toml", label="x")
    assert resolve_machine(fused).fusions[0].saving == 4
    fitted = fit(run_microbenchmarks(fused, only=["TLOAD+MMA"]))
    assert fitted["fusion.TLOAD+MMA"] == {"saving": 4}
    plain = fit(run_microbenchmarks("ascend910b", only=["TLOAD+MMA"]), base=fused)
    back = load_machine_from(write_table(plain, fused, tmp_path / "back.toml"))
    assert back.fusions == ()


# ---------------------------------------------------------------- profile_on_npu
def _boards(monkeypatch, boards):
    """Install these entry points as the NPU backends; other groups (numba's extensions, which
    numba reads when it first compiles) keep the real ones."""
    from pypto_sim.calibrate import npu
    real = npu.metadata.entry_points
    monkeypatch.setattr(npu.metadata, "entry_points",
                        lambda group=None, **kw: boards if group == npu.GROUP else real(**kw, **(
                            {"group": group} if group else {})))


NPU_KERNEL = "@pto.kernel\ndef f(a, o):\n    i = pto.get_lane_id()\n    pto.store(o + i, pto.load(a + i) * 2.0)\n"


def test_profile_on_npu_without_a_backend_says_what_to_do(monkeypatch, make_kernels):
    _boards(monkeypatch, [])
    k = make_kernels(NPU_KERNEL).f
    with pytest.raises(pto.NPUUnavailableError) as err:
        pto.profile_on_npu(k, args=(pto.alloc_tensor(128), pto.alloc_tensor(128)))
    text = str(err.value)
    for needle in ("pto.profile(", "pypto-sim microbench", "pypto-sim calibrate", "pypto_sim.npu_backends"):
        assert needle in text


@pytest.mark.parametrize("installed", [False, True])
@pytest.mark.parametrize("call, message", [
    (lambda k, t: pto.profile_on_npu(print), r"kernel=<built-in function print> \(builtin_function_or_method\) "
                                             r"is not a @pto.kernel function"),
    (lambda k, t: pto.profile_on_npu(k, grid=(0, 1, 1), args=t), r"grid=\(0, 1, 1\): every dimension must be a "
                                                                   r"positive integer"),
    (lambda k, t: pto.profile_on_npu(k, block=2.5, args=t), r"block=2.5: 2.5 is not an integer"),
    (lambda k, t: pto.profile_on_npu(k, args=t[:1]), r"args= has 1 values but kernel 'f' takes 2 \(a, o\)"),
    (lambda k, t: pto.profile_on_npu(k, args=t, backend=3), r"backend=3 \(int\) is not the name of an installed"),
])
def test_profile_on_npu_checks_its_arguments_before_it_looks_for_a_backend(monkeypatch, make_kernels, installed,
                                                                            call, message):
    """profile_on_npu(print), grid=(0, 1, 1), block=2.5, one argument for a kernel of two, or a
    backend that is no name are the caller's mistakes whether or not a board is installed: each is a
    pto.ArgumentError (a ValueError and a TypeError too) naming the argument, never the 'no NPU
    backend is installed' of a correct call, and the backend is not called. A well-formed
    backend='x' with none installed is NPUUnavailableError, whose message repeats the name asked for."""
    calls = []
    board = [_EntryPoint("board", lambda kernel, **kw: calls.append(kernel))] if installed else []
    _boards(monkeypatch, board)
    k, t = make_kernels(NPU_KERNEL).f, (pto.alloc_tensor(128), pto.alloc_tensor(128))
    with pytest.raises(pto.ArgumentError, match=message):
        call(k, t)
    assert calls == []
    if not installed:
        with pytest.raises(pto.NPUUnavailableError, match=r"no NPU backend is installed, so profile_on_npu cannot "
                                                          r"run on hardware \(backend='x' was asked for\)"):
            pto.profile_on_npu(k, args=t, backend="x")


class _EntryPoint:
    def __init__(self, name, obj):
        self.name, self.obj = name, obj

    def load(self):
        return self.obj


def test_profile_on_npu_runs_a_registered_backend(monkeypatch, make_kernels):
    """A backend registered in the entry-point group returns a profile of the same shape as
    pto.profile (here the test backend runs the simulator on the simple table, as a stand-in)."""
    calls = []

    def board(kernel, grid, block, args):
        calls.append((kernel.name, grid, block))
        pto.use_machine(SIMPLE)
        return pto.profile(kernel, grid=grid, block=block, args=args)

    _boards(monkeypatch, [_EntryPoint("board", board)])
    k = make_kernels(NPU_KERNEL).f
    d_a, d_o = pto.alloc_tensor(128), pto.alloc_tensor(128)
    hw = pto.profile_on_npu(k, grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_o))
    sim = pto.profile(k, grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_o))
    assert calls == [("f", (1, 1, 1), (32, 1, 1))]
    assert type(hw) is type(sim) and hw.total_cycles == sim.total_cycles
    assert [e.inst for e in hw.timeline] == [e.inst for e in sim.timeline]
    assert set(hw.cycle_breakdown().as_dict()) == set(sim.cycle_breakdown().as_dict())
    _boards(monkeypatch, [_EntryPoint("bad", lambda kernel, **kw: 42)])
    with pytest.raises(pto.NPUUnavailableError, match="lacks total_cycles"):
        pto.profile_on_npu(k, args=(d_a, d_o))


# ---------------------------------------------------------------- correlation
def test_correlate_reports_accel_sim_metrics(tmp_path):
    """Errors -20, +10, -300 against 120, 240, 1300: MAE 110 cycles, MAPE (16.67 + 4.17 + 23.08)
    / 3 = 14.64%, NMSE sqrt(90500 / 3) / 553.3 = 0.3139, r as numpy's corrcoef."""
    sim, hw = {"a": 100, "b": 250, "c": 1000}, {"a": 120, "b": 240, "c": 1300}
    c = correlate(sim, hw)
    assert c.n == 3 and c.mae == 110
    assert c.mape == pytest.approx(100 * (20 / 120 + 10 / 240 + 300 / 1300) / 3)
    assert c.nmse == pytest.approx(math.sqrt(90500 / 3) / (1660 / 3))
    assert c.r == pytest.approx(np.corrcoef([100, 250, 1000], [120, 240, 1300])[0, 1])
    assert [p.kernel for p in c.rows] == ["a", "b", "c"] and c.rows[2].error == -300
    assert "MAPE=14.64%" in str(c)
    png = c.save_plot(tmp_path / "corr.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
    same = correlate([("k1", 10), ("k2", 20)], [("k1", 10), ("k2", 20)])
    assert (same.r, same.mae, same.mape, same.nmse) == (1.0, 0, 0, 0)
    with pytest.raises(CalibrationError, match="only one"):
        correlate({"a": 1}, {"b": 1})


# ---------------------------------------------------------------- CSV, numerics, command line
def test_rows_csv_round_trip_and_errors(tmp_path):
    rows = [Row("chain", "ADD", 2, 481, "ascend910b", ""), Row("stream", "ADD", 6, 479.5, "board", "median of 5")]
    path = write_rows(rows, tmp_path / "rows.csv")
    assert path.read_text().splitlines()[0] == "benchmark,instruction,size,cycles,machine,notes"
    assert read_rows(path) == rows
    (tmp_path / "min.csv").write_text("# measured on my board\ncycles,size,instruction,benchmark\n481,2,ADD,chain\n")
    assert read_rows(tmp_path / "min.csv") == [Row("chain", "ADD", 2, 481.0)]
    (tmp_path / "bad.csv").write_text("benchmark,instruction,cycles\nchain,ADD,4\n")
    with pytest.raises(CalibrationError, match="missing: size"):
        read_rows(tmp_path / "bad.csv")


def test_ceil_fit_recovers_rates_with_the_fewest_digits():
    xs = [32, 4096, 65536, 262144]
    ys = [307 + math.ceil(x / 142.7) for x in xs]
    a, lo, hi = ceil_fit(xs, ys)
    assert a == 307 and simplest_in(1 / hi, 1 / lo, True, False) == 142.7
    reps = [1, 4, 16, 32]                      # a whole per_repeat: a - 1 fits too; 1 wins
    a, lo, hi = ceil_fit(reps, [8 + r for r in reps], prefer=6)
    assert (a, simplest_in(lo, hi)) == (8, 1)
    assert ceil_fit([1, 2, 3], [5.5, 6.1, 7.9]) is None


def test_cli_microbench_and_calibrate(tmp_path, capsys, monkeypatch):
    """`pypto-sim microbench` writes the rows, `pypto-sim calibrate` fits and writes a table
    that loads, and prints what changed (both through cli.main in this process, from the
    repository root: a process per command spent a second on imports)."""
    monkeypatch.chdir(ROOT)
    rows = tmp_path / "rows.csv"
    capsys.readouterr()
    code = main(["microbench", "--machine", "ascend910b", "--only", "FMA,pipes.scalar", "-o", str(rows)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert "wrote" in stdout and rows.read_text().startswith("benchmark,instruction,size,cycles")
    out = tmp_path / "new.toml"
    code = main(["calibrate", str(rows), "--base", "ascend910b", "-o", str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert "0 entries differ" in stdout and "wrote" in stdout
    m = load_machine_from(out)
    assert m.latency("FMA") == 7 and m.source("FMA") == "fitted from microbenchmarks (rows.csv)"
    assert m.pipes["scalar"]["latency"] == 2
    assert m.source("ADD") == resolve_machine("ascend910b").source("ADD")      # not measured: kept


def test_calibrate_warns_when_a_fitted_cost_beats_the_vendors_parallelism(tmp_path, capsys, monkeypatch):
    """`pypto-sim calibrate` checks the table it wrote against its [peaks] and says which
    fitted costs beat them (here one, as peaks.violations would word it), on stderr; it still
    writes the table."""
    from pypto_sim import cli
    monkeypatch.chdir(ROOT)
    rows = tmp_path / "rows.csv"
    assert main(["microbench", "--machine", "ascend910b", "--only", "FMA", "-o", str(rows)]) == 0
    said = "TADD float32 ([formulas] row cols=64): 16 cycles for 65536 bytes, fewer than the 256 that Add's 64 elements a cycle allow"
    monkeypatch.setattr(cli.peaks, "violations", lambda machine: [said])
    capsys.readouterr()
    out = tmp_path / "new.toml"
    assert main(["calibrate", str(rows), "--base", "ascend910b", "-o", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    assert f"warning: 1 fitted cost(s) beat the vendor's parallelism ([peaks]); the rows may be too short or noisy: {said}" in stderr
    assert out.exists() and "wrote" in stdout


def test_calibration_loop_example(tmp_path, monkeypatch, capsys):
    """examples/calibration_loop.py: against the stand-in NPU the default table is about 20%
    fast on every kernel (MAPE 18.60% since the MMA head became 21 and the stand-in's HBM chip link 630, 22% under the default's 805.5); the table fitted from the NPU's microbenchmark rows matches each
    kernel to the cycle, and both scatter plots are written. docs/calibration.md shows this
    output (its block marked checked-by this test): it must be what the example prints."""
    import runpy
    from doc_blocks import matches, parse_blocks
    monkeypatch.setattr(sys, "argv", ["calibration_loop.py", str(tmp_path)])
    runpy.run_path(str(ROOT / "examples" / "calibration_loop.py"), run_name="__main__")
    out = capsys.readouterr().out
    shown = [b.output for b in parse_blocks((ROOT / "docs" / "calibration.md").read_text(), "docs/calibration.md")
             if b.kind == "checked-by" and "calibration_loop.py" in b.text]
    assert len(shown) == 1 and matches(shown[0].text, out), out
    before, after = out.split("calibrated from")
    assert "MAPE=18.60%" in before and "MAPE=0.00%" in after and "MAE=0.0 cycles" in after
    assert (tmp_path / "correlation_before.png").exists() and (tmp_path / "correlation_after.png").exists()
    new, truth = load_machine_from(tmp_path / "calibrated.toml"), load_machine_from(tmp_path / "stand_in_npu.toml")
    assert [(r.name, r.saving) for r in new.fusions] == [(r.name, r.saving) for r in truth.fusions] == [("TLOAD+MMA", 3)]


# ---------------------------------------------------------------- values the fit must keep >= a least
def test_a_value_a_cycle_below_its_least_is_the_least_and_further_below_is_refused(tmp_path):
    """Fitted.put: a head derived as -1 (within the one cycle the rounded slopes can lose) is
    fitted at its least value 0 and listed as constrained; a tail derived as -2 is a
    contradiction, kept as derived, and write_table refuses it naming the entry, its value and
    its derivation, writing nothing."""
    from pypto_sim.calibrate.fit import Fitted
    base = resolve_machine("ascend910b")
    fitted = Fitted(base)
    fitted.put("TADD", "head", -1, "refill slope 40 - cost 9 - TLOAD 32")
    fitted.put("TADD", "tail", -2, "sync slope 7 - head 0 - cost 9")
    assert fitted["TADD"] == {"head": 0, "tail": -2}
    assert fitted.constrained == {("TADD", "head"): (-1, 0)}
    with pytest.raises(CalibrationError) as info:
        write_table(fitted, base, tmp_path / "new.toml")
    assert "TADD.tail = -2 (sync slope 7 - head 0 - cost 9)" in str(info.value)
    assert "TADD.head" not in str(info.value) and not list(tmp_path.iterdir())


def _scaled_rows(rows, path, factor=1.5, extra=None):
    """The rows with every cycle count times factor (a uniformly slower board), plus
    extra[(benchmark, instruction)] cycles per size step; written to path."""
    extra = extra or {}
    write_rows([Row(r.benchmark, r.instruction, r.size,
                    r.cycles * factor + extra.get((r.benchmark, r.instruction), 0) * r.size)
                for r in rows], path)
    return path


def test_calibrate_on_a_uniformly_slower_board_writes_a_table_that_loads(default_rows, tmp_path, capsys):
    """The package's own microbenchmark rows times 1.5: the entries derived by subtraction
    whose truth is 0 (TPOW's unaligned floor, which the base does not have; the TLOAD+MMA
    saving, 0 in the base) come out 0 or, through the rounding of the 1.5x slopes, -1
    (TPOW: 8 unaligned repeats cost round(1.5 x 56) = 84 against ceil(8 x 10.503) = 85).
    The fit takes 0 for those, says so on stderr, and the table loads."""
    from pypto_sim.cli import main
    rows = _scaled_rows(default_rows, tmp_path / "slow.csv")
    out = tmp_path / "slow.toml"
    assert main(["calibrate", str(rows), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "TPOW.unaligned_floor -1 -> 0" in err and "fusion.TLOAD+MMA.saving -1 -> 0" in err
    # ten fillers at 1.5 cycles are 20 in the table: the loop's interval is below 1 by that rounding
    assert "LOOP_CONT.issue_interval -2 -> 1" in err
    assert "Traceback" not in err
    table = load_machine_from(out)
    assert table.instructions["TPOW"].extra["unaligned_floor"] == 0
    assert not table.fusions           # a saving of 0 is no rule


def test_calibrate_refuses_rows_that_contradict_a_rule_in_one_line(default_rows, tmp_path, capsys):
    """The same rows with the fused TLOAD+MMA pair 20 cycles slower per pair: its saving,
    TLOAD + MMA predicted less the pair measured: the base's pair costs TLOAD 307 +
    ceil(1024 / 142.7) = 315 plus MMA 21 + 2 x 2 = 25, 340 cycles; at 1.5x the fit predicts
    TLOAD 472 and MMA 37 (509, the rounding's cycle under 510) and the pair measures
    510 + 20 = 530, so -21, which no table may hold: one line names the entry and its
    derivation, exit code 1, nothing written."""
    from pypto_sim.cli import main
    rows = _scaled_rows(default_rows, tmp_path / "odd.csv",
                        extra={("fused_pair.bytes=1024", "TLOAD+MMA"): 20})
    out = tmp_path / "odd.toml"
    assert main(["calibrate", str(rows), "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("pypto-sim: error: write_table: the fit "
                                                         "could not determine 1 entry")
    assert "fusion.TLOAD+MMA.saving = -21 (TLOAD 472 + MMA 37 predicted, pair measured 530 cycles)" in err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["odd.csv"]


def test_microbench_only_of_no_names_is_refused(tmp_path, capsys, monkeypatch):
    """`--only ""` (or ", ,") names nothing: one line saying so, exit 1 and no rows written,
    where it ran all of the microbenchmarks."""
    monkeypatch.chdir(tmp_path)
    for only in ("", " , "):
        code = main(["microbench", "--only", only, "-o", str(tmp_path / "rows.csv")])
        _out, err = capsys.readouterr()
        assert code == 1 and "names no microbenchmark or instruction" in err
    assert not (tmp_path / "rows.csv").exists()
