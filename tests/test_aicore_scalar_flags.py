"""The scalar pipe at either end of a flag: wait_flag(X, PIPE_S) and set_flag(PIPE_S, X).

On the device wait_flag(X, PIPE_S) blocks the scalar pipe until X's set_flag fires, and the
scalar unit issues every later instruction of its unit, so nothing the unit issues after the
wait starts before the flag fires: pto-isa relies on it before a scalar access to UB
(include/pto/common/arch/memory/textract_common.hpp, TExtractVecToVecNDScalar's
set_flag(PIPE_V, PIPE_S) / wait_flag(PIPE_V, PIPE_S); tinsert_common.hpp; docs/isa/MGATHER.md's
MTE3 -> S pre-amble, "flush any pending MTE3 writes"). set_flag(PIPE_S, X) fires when it issues:
the in-order scalar unit has done its earlier work by then, whatever the unit's other pipes
still run.

Cycles by hand from tests/machines/simple.toml (the costs of tests/test_aicore_timing.py's
docstring), on both AIVs (each its own pipes and GM link; HBM's 64 B/cycle carries both
units' 32):

    TSTORE 16x16 fp32 Vec->GM (MTE3): 50 + 1024 / 32 (ub_to_gm)                     =  82
    TLOAD 16x16 fp32 GM->Vec (MTE2), lines never touched: 100 + 1024 / 32 (gm_to_ub) = 132
    a scalar instruction (SET_FLAG, WAIT_FLAG): one cycle
"""
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from engine_compare import assert_engines_agree
from pypto_sim.runtime.device import DEFAULT_BLOCK

HERE = Path(__file__).read_text().splitlines()
ENGINES = ("simpy", "fast")       # PYPTO_TIMING_ENGINE=fast refuses a launch it cannot run


def line_of(marker):
    """The line of this file whose comment is ``# marker``."""
    return next(i + 1 for i, text in enumerate(HERE) if text.rstrip().endswith("# " + marker))


@pto.kernel(sync="manual")
def store_wait_scalar_load(X, Y):
    with pto.vector():
        x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        half = pto.get_subblock_id() * 256
        pto.tstore(Y + half, x)  # S-STORE
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)  # S-SET
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)  # S-WAIT
        pto.tload(t, X + half)


@pto.kernel(sync="manual")
def scalar_set_at_issue(X, Y):
    with pto.vector():
        x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        half = pto.get_subblock_id() * 256
        pto.tload(t, X + half)
        pto.set_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
        pto.tstore(Y + half, x)


def store_then_load(wait_dst):
    """The adversarial tester's kernel: a TSTORE of 3.0s to X, a wait on a flag of MTE3 to
    wait_dst, a TLOAD of X and a TSTORE of what it read to Y (each AIV its own half)."""
    @pto.kernel(sync="manual")
    def k(X, Y):
        with pto.vector():
            s = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
            t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
            half = pto.get_subblock_id() * 256
            pto.texpands(s, 3.0)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(X + half, s)
            pto.set_flag(pto.PIPE_MTE3, wait_dst, 0)
            pto.wait_flag(pto.PIPE_MTE3, wait_dst, 0)
            pto.tload(t, X + half)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(Y + half, t)
    return k


store_wait_s = store_then_load(pto.PIPE_S)
store_wait_v = store_then_load(pto.PIPE_V)


def _zeros():
    d = pto.alloc_tensor(512 * 4, pto.float32)
    pto.memcpy_h2d(d, np.zeros(512, np.float32))
    return d


def _events(prof, unit):
    """name -> the unit's timeline entries of that instruction, in order."""
    out = {}
    for e in prof.timeline:
        if e.warp == unit:
            out.setdefault(e.inst.split()[0], []).append(e)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_a_wait_on_pipe_s_holds_everything_the_unit_issues_after_it(engine, monkeypatch, simple_machine):
    """The TSTORE takes 82 cycles from its issue; the WAIT_FLAG(MTE3, S) issues when its
    set_flag fires, at the store's completion (its stall, cause "flag"), and takes its cycle;
    the TLOAD, the next instruction, issues one cycle later and starts then on the idle MTE2,
    132 cycles, and is the unit's last work: the kernel ends with it. (Before the fix the TLOAD
    started two cycles after the store's issue.)"""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    prof = pto.profile(store_wait_scalar_load, grid=(1,), args=(_zeros(), _zeros()))
    for unit in (1, 2):
        ev = _events(prof, unit)
        (store,), (wait,), (load,) = ev["TSTORE"], ev["WAIT_FLAG"], ev["TLOAD"]
        assert store.end - store.start == 82
        assert (wait.start, wait.end, wait.stall) == (store.end, store.end + 1, "flag")
        assert wait.stall_cycles == store.end - (ev["SET_FLAG"][0].start + 1)
        assert (load.start, load.end) == (store.end + 1, store.end + 1 + 132)
    assert prof.total_cycles == max(e.end for e in prof.timeline if e.inst.startswith("TLOAD"))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_set_flag_from_pipe_s_fires_when_it_issues(engine, monkeypatch, simple_machine):
    """set_flag(PIPE_S, PIPE_MTE3) issues the cycle after the TLOAD and fires then, though the
    TLOAD runs 132 cycles more: the scalar unit has nothing outstanding. So the WAIT_FLAG
    issues the next cycle without a stall and the TSTORE after it starts at its own issue,
    one cycle later, long before the TLOAD completes. (Its length is not 82 here: the two
    AIVs' stores and loads, 4 x 32 B/cycle, share HBM's 64.)"""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    prof = pto.profile(scalar_set_at_issue, grid=(1,), args=(_zeros(), _zeros()))
    for unit in (1, 2):
        ev = _events(prof, unit)
        (load,), (sf,), (wait,), (store,) = ev["TLOAD"], ev["SET_FLAG"], ev["WAIT_FLAG"], ev["TSTORE"]
        assert load.end - load.start == 132 and sf.start == load.start + 1
        assert (wait.start, wait.stall_cycles) == (sf.start + 1, 0)
        assert (store.start, store.stall_cycles) == (wait.start + 1, 0)
        assert store.start < load.end


@pytest.mark.parametrize("kernel", [store_wait_scalar_load, scalar_set_at_issue, store_wait_s])
def test_both_engines_give_the_same_records(kernel, simple_machine):
    """The compiled loop replays the SimPy model's flag rule: identical cycles, records and HBM."""
    assert_engines_agree(kernel, (_zeros(), _zeros()), (1, 1, 1), DEFAULT_BLOCK)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_load_after_a_wait_on_pipe_s_reads_what_the_store_wrote(engine, monkeypatch, simple_machine):
    """The TLOAD starts after the TSTORE of 3.0s completed, so Y holds 3.0 on both halves."""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    X, Y = _zeros(), _zeros()
    pto.launch(store_wait_s, grid=(1,), args=(X, Y))
    np.testing.assert_array_equal(Y.numpy(), np.full(512, 3.0, np.float32))


def test_racecheck_orders_what_the_unit_issues_after_a_wait_on_pipe_s(simple_machine):
    """check="race": the wait on PIPE_S orders the TLOAD (MTE2) after the TSTORE (MTE3), as a
    cross-core wait orders every queue of its unit: no RaceError. A wait of the same flag to
    PIPE_V orders only V's later operations, so the same TLOAD races with the TSTORE."""
    X, Y = _zeros(), _zeros()
    pto.launch(store_wait_s, grid=(1,), args=(X, Y), check="race")
    pto.sync()
    np.testing.assert_array_equal(Y.numpy(), np.full(512, 3.0, np.float32))
    with pytest.raises(pto.RaceError, match=r"read-after-write race on GM tensor .* TLOAD at line \d+ "
                                            r"\(AIV\d PIPE_MTE2\) is not ordered after TSTORE"):
        pto.launch(store_wait_v, grid=(1,), args=(_zeros(), _zeros()), check="race")
        pto.sync()


@pytest.mark.parametrize("engine", ENGINES)
def test_the_bubble_before_the_load_names_the_wait_on_pipe_s(engine, monkeypatch, simple_machine):
    """MTE2 of AIV0 idles until the TLOAD's dispatch; the scalar unit waited from the cycle
    after its SET_FLAG to the WAIT_FLAG's issue at the TSTORE's completion, so that stretch of
    MTE2's bubble is a flag stretch naming the wait_flag's line, its set_flag's and the TSTORE
    the set_flag waited for."""
    monkeypatch.setenv("PYPTO_TIMING_ENGINE", engine)
    prof = pto.profile(store_wait_scalar_load, grid=(1,), args=(_zeros(), _zeros()))
    ev = _events(prof, 1)
    (store,), (sf,) = ev["TSTORE"], ev["SET_FLAG"]
    flag, = [b for b in prof.bubbles(unit="AIV0", pipe="MTE2") if b.kind == "flag"]
    assert (flag.start, flag.end) == (sf.start + 1, store.end)
    assert (flag.inst, flag.line) == ("WAIT_FLAG", line_of("S-WAIT"))
    assert flag.text == (f"flag wait: wait_flag(PIPE_MTE3, PIPE_S, 0) at line {line_of('S-WAIT')}, released by "
                         f"set_flag at line {line_of('S-SET')} after TSTORE at line {line_of('S-STORE')}")
