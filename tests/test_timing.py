"""Timing model, SimPy style: a tiny kernel, a hand-computed cycle count, a docstring saying why.

Most tests use tests/machines/simple.toml (round numbers): scalar-unit uniform ops 1 cycle,
LANE_ID 1, MOV 2, FMA 4, LOAD 100 + bytes/32 per core (chip 64 B/cycle), STORE 50 + bytes/32,
LOAD_L1/STORE_L1 5, control 1. A warp issues at most one instruction per cycle.
"""
import numpy as np
import pytest

import pypto_sim as pto


def _run(kernel, n_lanes=32, grid=(1, 1, 1), inputs=None):
    a = inputs if inputs is not None else np.arange(n_lanes * grid[0], dtype=np.float32)
    d_a = pto.alloc_tensor(a.nbytes)
    d_o = pto.alloc_tensor(a.nbytes)
    pto.memcpy_h2d(d_a, a)
    prof = pto.profile(kernel, grid=grid, block=(n_lanes, 1, 1), args=(d_a, d_o))
    out = np.empty_like(a)
    pto.memcpy_d2h(out, d_o)
    return prof, a, out


def _chain_source(k, dependent):
    lines = ["@pto.kernel", "def chain(a, o):", "    i = pto.get_lane_id()", "    x = pto.load(a + i)"]
    if dependent:
        lines += ["    x = pto.fma(None, x, 1.0, 1.0)"] * k
        lines += ["    pto.store(o + i, x)"]
    else:
        lines += [f"    y{j} = pto.fma(None, x, 1.0, {j}.0)" for j in range(k)]
        lines += [f"    pto.store(o + i, y{k - 1})" if k else "    pto.store(o + i, x)"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("k", [1, 2, 5])
def test_dependent_fmas_add_k_latencies(make_kernels, k):
    """Each FMA in a chain waits for the previous one: k of them add exactly k x latency(FMA).

    Checked on the default machine (latency 7), against the same kernel without the chain."""
    base, _, _ = _run(make_kernels(_chain_source(0, True)).chain)
    prof, a, out = _run(make_kernels(_chain_source(k, True)).chain)
    assert prof.total_cycles - base.total_cycles == k * pto.machine().latency("FMA")
    assert np.array_equal(out, a + k)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_independent_fmas_add_k_issue_intervals(make_kernels, k):
    """Independent FMAs of one warp issue back to back, issue_interval(FMA) apart: k+1 of them
    finish k x issue_interval later than one (the store waits only for the last)."""
    one, _, _ = _run(make_kernels(_chain_source(1, False)).chain)
    prof, a, out = _run(make_kernels(_chain_source(k + 1, False)).chain)
    assert prof.total_cycles - one.total_cycles == k * pto.machine().issue_interval("FMA")
    assert np.array_equal(out, a + k)


def test_independent_fmas_on_a_slower_pipe(make_kernels, simple_machine, tmp_path):
    """With issue_interval(FMA) = 3, k extra independent FMAs add 3k cycles, not k."""
    text = simple_machine.path.read_text().replace(
        'FMA = { latency = 4, issue_interval = 1', 'FMA = { latency = 4, issue_interval = 3')
    path = tmp_path / "slow_fma.toml"
    path.write_text(text)
    m = pto.use_machine(path)
    one, _, _ = _run(make_kernels(_chain_source(1, False)).chain)
    four, _, _ = _run(make_kernels(_chain_source(4, False)).chain)
    assert four.total_cycles - one.total_cycles == 3 * m.issue_interval("FMA") == 9


LOAD_STORE = """
@pto.kernel
def copy(a, o):
    i = pto.get_global_id()
    v = pto.load(a + i)
    pto.store(o + i, v)
"""


def test_load_costs_latency_plus_bytes_over_bandwidth(make_kernels, simple_machine):
    """GLOBAL_ID issues at 0 (ready at 1). LOAD issues at 1 and moves 32 x 4 B = 128 B = four
    32-byte sectors: ready at 1 + 100 + 128/32 = 105. STORE issues at 105 and completes at
    105 + 50 + 128/32 = 159, when the warp retires."""
    prof, a, out = _run(make_kernels(LOAD_STORE).copy)
    assert np.array_equal(out, a)
    load = next(e for e in prof.timeline if e.inst == "LOAD")
    assert (load.start, load.end) == (1, 105)
    assert prof.total_cycles == 159


def test_two_cores_contend_for_hbm(make_kernels, simple_machine):
    """Two blocks on the two cores issue their loads at cycle 1. Each core link moves 32 B/cycle
    but the chip only 64 B/cycle... per transfer the chip is the shared queue: core 0's 128 B
    take the chip until 1 + 128/64 = 3, core 1's until 5; each core link needs 4 cycles, so
    core 0's data arrives at 5 (link-bound) and core 1's at 5 as well: no slowdown yet.

    With the chip at 16 B/cycle the chip is the bottleneck: core 0's load is done at
    1 + 100 + 8 = 109 and core 1's queues behind it: 1 + 100 + 16 = 117."""
    prof, a, out = _run(make_kernels(LOAD_STORE).copy, grid=(2, 1, 1))
    loads = sorted((e.core, e.end) for e in prof.timeline if e.inst == "LOAD")
    assert loads == [(0, 105), (1, 105)]
    assert np.array_equal(out, a)

    slow = simple_machine.path.read_text().replace(
        "hbm_chip_bytes_per_cycle = { value = 64.0", "hbm_chip_bytes_per_cycle = { value = 16.0")
    path = simple_machine.path.parent / ".." / "machines"  # noqa: keep tmp files out of the repo
    import tempfile, os
    fd, name = tempfile.mkstemp(suffix=".toml")
    os.write(fd, slow.encode())
    os.close(fd)
    try:
        pto.use_machine(name)
        prof, a, out = _run(make_kernels(LOAD_STORE).copy, grid=(2, 1, 1))
    finally:
        os.unlink(name)
    loads = sorted((e.core, e.end) for e in prof.timeline if e.inst == "LOAD")
    assert loads == [(0, 109), (1, 117)]
    assert np.array_equal(out, a)


DIVERGE = """
@pto.kernel
def branch(a, o):
    i = pto.get_lane_id()
    x = pto.load(a + i)
    if i < SPLIT:
        x = pto.fma(None, x, 2.0, 0.0)
        x = pto.fma(None, x, 2.0, 0.0)
    else:
        x = pto.fma(None, x, 3.0, 0.0)
    pto.store(o + i, x)
SPLIT = {split}
"""


def test_diverged_if_costs_both_paths(make_kernels, simple_machine):
    """Cycle by cycle (simple machine): LANE_ID 0 -> 1; LOAD 1 -> 105 (100 + 128 B / 32);
    LT at 2, IF at 3. All lanes take the then-side: FMA 105 -> 109, FMA 109 -> 113 (a chain on
    x); ELSE (no lane left for it) and ENDIF issue meanwhile; STORE at 113 completes at
    113 + 50 + 4 = 167.
    Lanes 16-31 taking the else-side: its FMA also writes x, whose register the then-side chain
    still has pending, so it issues at 113 and is ready at 117; STORE at 117 -> 171.
    Divergence costs exactly the else path: 4 cycles. All lanes on the else-side skip the
    then-side (IF jumps straight to ELSE)."""
    all_then, a, out = _run(make_kernels(DIVERGE.format(split=32)).branch)
    assert np.array_equal(out, a * 4)
    split, a, out = _run(make_kernels(DIVERGE.format(split=16)).branch)
    expect = a * 4
    expect[16:] = a[16:] * 3
    assert np.array_equal(out, expect)
    all_else, a, out = _run(make_kernels(DIVERGE.format(split=0)).branch)
    assert np.array_equal(out, a * 3)
    fmas = [e.lane for e in split.timeline if e.inst == "FMA"]
    assert fmas == ["0-15", "0-15", "16-31"]
    assert (all_then.total_cycles, split.total_cycles) == (167, 171)
    assert [e.lane for e in all_else.timeline if e.inst == "FMA"] == ["0-31"]
    assert all_else.total_cycles == 105 + 4 + 54  # FMA 105 -> 109, STORE 109 -> 163


def test_same_profile_twice_gives_same_cycles_and_timeline(make_kernels):
    """The simulator is deterministic: the same inputs give the same cycles, every run."""
    k = make_kernels(DIVERGE.format(split=16)).branch
    p1, _, o1 = _run(k, n_lanes=256, grid=(3, 1, 1))
    p2, _, o2 = _run(k, n_lanes=256, grid=(3, 1, 1))
    assert p1.total_cycles == p2.total_cycles
    assert [(e.cycle, e.warp, e.block, e.inst, e.end) for e in p1.timeline] == \
           [(e.cycle, e.warp, e.block, e.inst, e.end) for e in p2.timeline]
    assert np.array_equal(o1, o2)
