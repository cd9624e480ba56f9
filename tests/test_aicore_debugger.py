"""The debugger on AI-core kernels (docs/debugging.md, "AI-core kernels"): stops at an
instruction's execution cycle, per unit, with the state as it is then.

Cycles are computed by hand from tests/machines/simple.toml (as tests/test_aicore_timing.py):
every scalar instruction takes 1 cycle on the scalar unit (scalar latency 1, issue interval 1);
TLOAD 16x16 fp32 GM->Vec (MTE2) 100 + 1024 B / 32 B a cycle (gm_to_ub) = 132; TADDS 16x16 fp32
(V) 10 (head) + 16 repeats = 26; TSTORE 16x16 fp32 Vec->GM (MTE3) 50 + 1024 / 32 = 82.
"""
import contextlib
import io

import numpy as np
import pytest

import pypto_sim as pto
import pypto_sim.debug as dbg


@pto.kernel(sync="manual")
def add_one(X, Y):
    x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
    pto.tload(x, X)
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
    pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
    pto.tadds(x, x, 1.0)
    pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
    pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
    pto.tstore(Y, x)


@pto.kernel(sync="manual")
def cube_to_vector(X, W, Y):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        pto.tload(m, X)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.tstore(W, m)
        pto.cross_core_set_flag(3)
    with pto.vector():
        v = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        pto.cross_core_wait_flag(3)
        pto.tload(v, W)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 1)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 1)
        pto.tadds(v, v, 2.0)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
        pto.tstore(Y + pto.get_subblock_id() * 256, v)


def _tensors(*sizes):
    out = []
    for n in sizes:
        t = pto.alloc_tensor(4 * n, pto.float32)
        out.append(t)
    return out


@pytest.fixture
def add_one_session(simple_machine):
    X, Y = _tensors(256, 256)
    x = np.arange(256, dtype=np.float32)
    pto.memcpy_h2d(X, x)
    return dbg.debug_kernel(add_one, args=(X, Y), grid=(1,), echo=False), x, Y


def test_a_breakpoint_stops_at_the_execution_cycle_with_the_inputs_as_they_are_then(add_one_session):
    """AIV0's program (the kernel has no section: vector code on AIV0 only) issues ALLOC_LOCAL
    at cycle 0 and dispatches the TLOAD at 1; MTE2 is empty, so it runs 1-133 (132 cycles).
    The set_flag(MTE2, V) issued at 2 fires when MTE2 has done the TLOAD (133), and the
    wait_flag at 3 holds V until then, so the TADDS dispatched at 4 executes at cycle 133 =
    1 + 100 + 1024 / 32, and completes at 159. Stopped there, its input tile x holds X (the
    TLOAD wrote it at its completion, 133); at the set_flag (cycle 2) the TLOAD had not
    completed and x still read zeros; at the TSTORE (159) x holds X + 1 and Y is still zero
    until the store completes (241)."""
    ctx, x, Y = add_one_session
    ctx.break_at(inst="SET_FLAG", pipe="PIPE_S", line=23)
    first = ctx.continue_()
    assert (first.inst, first.cycle, ctx.unit) == ("SET_FLAG", 2, "AIV0")
    np.testing.assert_array_equal(ctx.inspect("x"), np.zeros((16, 16), np.float32))
    ctx.clear_breakpoints()
    ctx.break_at(inst="TADDS")
    hit = ctx.continue_()
    assert (hit.inst, hit.unit, hit.pipe) == ("TADDS", "AIV0", "V")
    assert (hit.cycle, hit.end, ctx.cycle, ctx.line) == (133, 159, 133, 25)
    np.testing.assert_array_equal(ctx.inspect("x"), x.reshape(16, 16))
    (store,) = ctx.step()
    assert (store.inst, store.cycle, ctx.pc is not None) == ("TSTORE", 159, True)
    np.testing.assert_array_equal(ctx.inspect("x"), x.reshape(16, 16) + 1)
    np.testing.assert_array_equal(ctx.tensor(Y), np.zeros(256, np.float32))
    ctx.step(10)
    assert ctx.finished and ctx.total_cycles == 241
    np.testing.assert_array_equal(ctx.tensor(Y), x + 1)


def test_pipe_queues_and_flags_at_a_stop(add_one_session):
    """At the TADDS (cycle 133) AIV0's V pipe runs it (133-159) and MTE3 holds the TSTORE
    dispatched at 7, waiting for the set_flag(V, MTE3) (runs 159-241). The scalar unit issued
    both flags' set and wait (cycles 2-3 and 5-6); set_flag(MTE2, V) fired when MTE2 completed
    the TLOAD (133, so by this cycle), set_flag(V, MTE3) fires only when V completes the TADDS
    (159): its wait holds PIPE_MTE3."""
    ctx, _x, _Y = add_one_session
    ctx.break_at(inst="TADDS")
    ctx.continue_()
    queues = ctx.pipe_queues()
    assert sorted(queues) == ["MTE3", "V"]
    (v,), (mte3,) = queues["V"], queues["MTE3"]
    assert (v.inst, v.state, v.dispatched, v.start, v.end) == ("TADDS", "running", 4, 133, 159)
    assert (mte3.inst, mte3.state, mte3.dispatched, mte3.start, mte3.end) == ("TSTORE", "waiting", 7, 159, 241)
    flags = {(f.kind, f.src, f.dst, f.event): (f.set, f.fired, f.waited, f.pending) for f in ctx.flags()}
    assert flags == {("flag", "MTE2", "V", 0): (1, 1, 1, 0), ("flag", "V", "MTE3", 0): (1, 0, 1, 1)}
    text = ctx.where()
    assert "PIPE_V queue:" in text and "TSTORE (line 28) waiting" in text
    assert "flag (PIPE_V, PIPE_MTE3, 0): set 1 (fired 0), waited 1: PIPE_MTE3 held until it fires" in text


def test_steps_go_in_execution_order_and_back(add_one_session):
    """Steps stop at each instruction in the order the units execute them (the TADDS at 133
    comes after the scalar unit's flags at 5-6 and EXIT at 8, though it was dispatched at 4);
    AIV0 alone runs (a kernel without sections is vector code on AIV0); step_back
    returns to the stop before, and the state there is replayed again. A cycle breakpoint
    stops once, at the first instruction executing at or after its cycle."""
    ctx, x, _Y = add_one_session
    entries = ctx.step(20)
    assert {e.lane for e in entries} == {"AIV0"}
    assert [(e.inst, e.cycle) for e in entries] == [
        ("ALLOC_LOCAL", 0), ("TLOAD", 1), ("SET_FLAG", 2), ("WAIT_FLAG", 3), ("SET_FLAG", 5),
        ("WAIT_FLAG", 6), ("EXIT", 8), ("TADDS", 133), ("TSTORE", 159)]
    assert ctx.finished
    back = ctx.step_back(2)
    assert [e.inst for e in back] == ["TADDS", "TSTORE"] and ctx.entry.inst == "TADDS"
    np.testing.assert_array_equal(ctx.inspect("x"), x.reshape(16, 16))
    ctx.restart()
    ctx.break_at(cycle=100)                 # the first instruction executing at or after 100
    assert (ctx.continue_().inst, ctx.cycle) == ("TADDS", 133)
    assert ctx.continue_() is None and ctx.finished


def test_step_per_unit_and_break_on_pipe_flag_and_cross_core_flag(simple_machine):
    """The AIC loads X, stores it to W and signals cross-core flag 3; both AIVs wait for it,
    load W, add 2 and store their halves of Y. step(unit="AIC") stops only at the AIC's
    instructions; a breakpoint on flag 3 stops at the AIC's set (issued at 5), then at each
    AIV's wait (at 231: the AIC's TLOAD, dispatched at 1 after its ALLOC_LOCAL, runs 100 +
    1024 / 64 (gm_to_l1) = 116 cycles to 117, its TSTORE from Mat then 50 + 1024 / 16
    (l1_to_gm) = 114 to 231, when the signal fires); a breakpoint on PIPE_V with unit AIV1 stops at
    AIV1's TADDS, whose input v (in AIV1's own UB) holds X."""
    X, W, Y = _tensors(256, 256, 512)
    x = np.arange(256, dtype=np.float32) * 0.5
    pto.memcpy_h2d(X, x)
    ctx = dbg.debug_kernel(cube_to_vector, args=(X, W, Y), grid=(1,), echo=False)
    steps = ctx.step(4, unit="AIC")
    assert {e.lane for e in steps} == {"AIC"}
    assert [e.inst for e in steps] == ["ALLOC_LOCAL", "TLOAD", "SET_FLAG", "WAIT_FLAG"]
    ctx.restart()
    ctx.break_at(flag=3)
    assert (ctx.continue_().inst, ctx.unit) == ("CROSS_CORE_SET_FLAG", "AIC")
    wait = ctx.continue_()
    assert wait.inst == "CROSS_CORE_WAIT_FLAG" and ctx.unit in ("AIV0", "AIV1")
    (cross,) = [f for f in ctx.flags() if f.kind == "cross_core"]
    assert wait.cycle == 231
    assert (cross.src, cross.dst, cross.event, cross.set, cross.fired, cross.waited) == ("AIC", ctx.unit, 3, 1, 1, 0)
    ctx.clear_breakpoints()
    ctx.break_at(pipe=pto.PIPE_V, unit="AIV1")
    hit = ctx.continue_()
    assert (hit.inst, hit.lane) == ("TADDS", "AIV1")
    np.testing.assert_array_equal(ctx.inspect("v"), x.reshape(16, 16))
    np.testing.assert_array_equal(ctx.inspect("m"), x.reshape(16, 16))     # the AIC's Mat tile
    ctx.restart()
    ctx.clear_breakpoints()
    ctx.break_at(flag=(pto.PIPE_V, pto.PIPE_MTE3, 1), unit="AIV0")
    assert [(ctx.continue_().inst, ctx.unit) for _ in range(2)] == [("SET_FLAG", "AIV0"), ("WAIT_FLAG", "AIV0")]
    ctx.clear_breakpoints()
    ctx.continue_()
    y = np.empty(512, np.float32)
    pto.memcpy_d2h(y, Y)
    np.testing.assert_array_equal(y, np.concatenate([x, x]) + 2)


def test_no_simt_words_in_what_a_session_prints(simple_machine):
    """AI-core steps name the core, unit and PTO pipe: no lanes, warps, unit ids or branches
    (each unit runs its own program; get_subblock_id() is a constant of each AIV's)."""
    X, W, Y = _tensors(256, 256, 512)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ctx = dbg.debug_kernel(cube_to_vector, args=(X, W, Y), grid=(1,))
        ctx.step(100)
        print(ctx.where())
    text = out.getvalue()
    for word in ("Lane", "lane", "warp", "Warp", "WARP_ID", "UNIT_ID", " EQ ", " IF ", "ENDIF"):
        assert word not in text, word
    assert "[core 0 AIC MTE2] TLOAD m, " in text and "[core 0 AIV1 V] TADDS v, v, 2.0" in text


def test_wrong_names_are_refused(add_one_session):
    """Units, pipes and tiles are checked, with the valid names in the message."""
    ctx, _x, _Y = add_one_session
    with pytest.raises(pto.ArgumentError, match="AIC, AIV0, AIV1"):
        ctx.step(unit="AIV2")
    with pytest.raises(pto.ArgumentError, match="PIPE_MTE2"):
        ctx.break_at(pipe="PIPE_X")
    with pytest.raises(pto.ArgumentError, match=r"tiles: x \(Vec\)") as info:
        ctx.inspect("y")
    assert isinstance(info.value, KeyError)      # what code that caught KeyError still catches
    with pytest.raises(pto.ArgumentError, match="unit='AIV0' or 'AIV1'"):
        ctx.inspect("x", unit="AIC")
    with pytest.raises(pto.ArgumentError, match=r"not a tensor argument .*tensors: X, Y"):
        ctx.tensor("Z")


def test_a_step_or_breakpoint_that_could_never_stop_is_refused(add_one_session):
    """add_one has no section: only AIV0 runs. Stepping the AIC or AIV1, or breaking on them
    or on an instruction the kernel has not (TMATMUL), on a core or block of no instruction
    or a pipe none uses, could never stop: each is an ArgumentError naming what runs, where
    the step ran to the end and the breakpoint was accepted, and the session has not moved.
    Deleting a breakpoint id the session has not is one too (it was a bare KeyError)."""
    ctx, _x, _Y = add_one_session
    for call in (lambda: ctx.step(unit="AIC"), lambda: ctx.break_at(unit="AIV1")):
        with pytest.raises(pto.ArgumentError, match=r"runs no instruction of 'add_one'.*\n.*the units that run: AIV0"):
            call()
    with pytest.raises(pto.ArgumentError, match=r"'add_one' runs no TMATMUL.*\n.*its instructions: .*TADDS"):
        ctx.break_at(inst="TMATMUL")
    # grid=(1,) on the two-core machine: only core 0 and block 0 run, and no instruction uses the cube's M pipe
    for call, what in ((lambda: ctx.step(core=1), r"step\(core=1\).*on core 1\n.*the cores that run: 0"),
                       (lambda: ctx.break_at(block=7), r"break_at\(block=7\).*\n.*the blocks that run: 0"),
                       (lambda: ctx.break_at(pipe=pto.PIPE_M), r"break_at\(pipe='M'\)")):
        with pytest.raises(pto.ArgumentError, match=what):
            call()
    assert not ctx.done and not ctx.breakpoints
    with pytest.raises(pto.ArgumentError, match=r"delete_breakpoint\(3\): no breakpoint has that id"):
        ctx.delete_breakpoint(3)


@pto.kernel(sync="manual")
def forgot_flag_then_faults(X, Y):
    x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
    pto.tload(x, X)
    pto.tadds(x, x, 1.0)                 # no flag orders it after the TLOAD
    pto.tload(x, X + 200)                # elements 200 .. 455 of a 256-element tensor
    pto.tstore(Y, x)


def test_a_stale_read_and_a_fault_stay_inspectable(simple_machine):
    """Without a flag, the TADDS dispatched at 2 starts at once on the empty V pipe (cycle 2),
    while the TLOAD dispatched at 1 (after the ALLOC_LOCAL at 0) writes x only at 1 + 132 =
    133: stopped at the TADDS, its input x reads zeros, the stale value the hardware would
    read. The second TLOAD (dispatched at 3) reaches past X: stepping to it raises
    OutOfBoundsError, after which the tiles still read as they were at the start of the
    fault's cycle (nothing completed by cycle 3), and
    ``check="race"`` reports the missing flag instead."""
    X = pto.alloc_tensor(1024, pto.float32)
    Y = pto.alloc_tensor(1024, pto.float32)
    pto.memcpy_h2d(X, np.arange(256, dtype=np.float32))
    ctx = dbg.debug_kernel(forgot_flag_then_faults, args=(X, Y), grid=(1,), echo=False)
    ctx.break_at(inst="TADDS")
    assert ctx.continue_().cycle == 2
    np.testing.assert_array_equal(ctx.inspect("x"), np.zeros((16, 16), np.float32))
    with pytest.raises(pto.OutOfBoundsError, match="element 200 reach element 455"):
        ctx.step(10)
    assert ctx.done and isinstance(ctx.error, pto.OutOfBoundsError) and ctx.cycle == 3
    np.testing.assert_array_equal(ctx.inspect("x"), np.zeros((16, 16), np.float32))
    with pytest.raises(pto.ProfileError, match=r"stopped at cycle 3 with OutOfBoundsError, so it has no profile"):
        ctx.profile()           # its TLOAD in flight ends at 133: no total would agree with it
    raced = dbg.debug_kernel(forgot_flag_then_faults, args=(X, Y), grid=(1,), echo=False, check="race")
    with pytest.raises(pto.RaceError, match="TADDS at line"):
        raced.continue_()


def test_a_session_stopped_by_an_error_stays_where_the_error_is(simple_machine):
    """Stopped by the RaceError of forgot_flag_then_faults' TADDS (AIV0, its line), the session
    is done but not finished, as the lane debugger has it: unit and line are the error's,
    where() names the error and shows AIV0's queue (its TLOAD still running, 1 - 133), not the
    AIC's; stepping again raises the same error."""
    X = pto.alloc_tensor(1024, pto.float32)
    ctx = dbg.debug_kernel(forgot_flag_then_faults, args=(X, X), grid=(1,), echo=False, check="race")
    with pytest.raises(pto.RaceError) as info:
        ctx.continue_()
    assert ctx.done and not ctx.finished and ctx.error is info.value
    assert (ctx.unit, ctx.line) == ("AIV0", info.value.line) and ctx.total_cycles is None
    text = ctx.where()
    assert text.startswith(f"stopped by RaceError at line {info.value.line} on AIV0")
    assert "AIV0 of block 0" in text and "TLOAD (line" in text
    with pytest.raises(pto.RaceError):
        ctx.step()
    assert "stopped by RaceError" in repr(ctx)


def test_a_flag_breakpoint_prints_its_pipes_by_name(simple_machine):
    """break_at(flag=(src, dst, event)) prints as the kernel writes the flag."""
    X = pto.alloc_tensor(1024, pto.float32)
    ctx = dbg.debug_kernel(add_one, args=(X, X), grid=(1,), echo=False)
    bp = ctx.break_at(flag=(pto.PIPE_MTE2, pto.PIPE_V, 0))
    assert "flag=(PIPE_MTE2, PIPE_V, 0)" in str(ctx.breakpoints[bp])


def test_flash_attention_trowmax_stops_when_it_runs_with_its_scores_loaded():
    """examples/flash_attention.py at S = 256 on ascend910b: the breakpoint on TROWMAX of
    AIV0, core 0 stops at the cycle the TROWMAX starts on PIPE_V (its timeline entry's start,
    thousands of cycles after its dispatch), and its input s then holds the first key block's
    scores of AIV0's 64 query rows, scaled: Q[:64] K[:128]^T / sqrt(128) (float16 inputs,
    float32 products)."""
    import math
    ctx, q, k = _flash_attention_session()
    ctx.break_at(inst="TROWMAX", unit="AIV0", core=0)
    hit = ctx.continue_()
    (op,) = [o for o in ctx.pipe_queues()["V"] if o.inst == "TROWMAX"]
    assert hit.cycle == hit.start == op.start == ctx.cycle and op.state == "running"
    assert op.dispatched < hit.cycle
    want = q[:64].astype(np.float64) @ k[:128].astype(np.float64).T / math.sqrt(128)
    np.testing.assert_allclose(ctx.inspect("s"), want, rtol=1e-5, atol=1e-5)


def test_the_state_at_a_stop_is_the_simpy_models_at_that_cycle():
    """The specification: the SimPy model (timing/model.py, PYPTO_TIMING_ENGINE=simpy) run to
    a cycle T holds every event before T. At each scalar-unit stop at cycle T of flash
    attention (S = 256, two cores), the debugger's tiles of every unit and its HBM equal the
    SimPy model's once every event before T is processed (stepped through the simulation's
    query API, next_event_time and step), word for word."""
    from pypto_sim.runtime.launch import simulation_for
    ctx, _q, _k = _flash_attention_session()
    run = ctx.run
    sim = simulation_for(run.pending, run.snapshot.copy(), None, record=True, checks=frozenset(),
                         engine="simpy")
    sim.start()
    tiles = [b for b in ctx.program.buffers if b.rows and b.owns_memory]
    scalar = [p for p in range(len(run.order)) if not run.tile[run.order[p]]]
    checked, reached = 0, 0
    for pos in scalar[::max(1, len(scalar) // 12)]:
        cycle = int(run.start[run.order[pos]])
        if cycle <= reached:
            continue
        while sim.next_event_time() is not None and sim.next_event_time() < cycle:
            sim.step()                       # every event before the cycle, as env.run(until=)
        reached = cycle
        ctx.pos = pos
        assert ctx.cycle == cycle
        hbm, _mem, _row = run.memories(pos)
        np.testing.assert_array_equal(hbm, sim.hbm)
        for blk in sim.blocks:
            for unit, arr in enumerate(blk.aicore.arrays):
                for b in tiles:
                    if (b.space == "Vec") == (unit == 0):
                        continue
                    want = arr[b.offset + b.element_words()].astype(b.dtype.numpy).reshape(b.rows, b.cols)
                    got = ctx.inspect(b.name, unit=("AIC", "AIV0", "AIV1")[unit], block=blk.id)
                    np.testing.assert_array_equal(got, want, err_msg=f"{b.name} unit {unit} cycle {cycle}")
        checked += 1
    assert checked >= 8


def _flash_attention_session():
    """A debugger session on examples/flash_attention.py at S = 256 (two AI cores)."""
    import math
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    try:
        import flash_attention as fa
    finally:
        sys.path.pop(0)
    S = 256
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((S, fa.D)).astype(np.float16) for _ in range(3))
    ts = []
    for array in (q, np.ascontiguousarray(k.T), v):
        d = pto.alloc_tensor(array.nbytes, pto.float16)
        pto.memcpy_h2d(d, array)
        ts.append(d)
    blocks = S // fa.BQ
    args = (*ts, pto.alloc_tensor(S * fa.D * 4, pto.float32),
            pto.alloc_tensor(blocks * 2 * fa.BQ * fa.BK * 4, pto.float32),
            pto.alloc_tensor(blocks * 2 * fa.BQ * fa.BK * 2, pto.float16),
            pto.alloc_tensor(blocks * 2 * fa.BQ * fa.D * 4, pto.float32), S, 1.0 / math.sqrt(fa.D))
    return dbg.debug_kernel(fa.flash_attention, args=args, grid=(blocks,), echo=False), q, k


@pto.kernel
def store_then_fault(A, O):
    t = pto.alloc_tile(8, 8, pto.float32, loc=pto.Vec)
    pto.tload(t, A)
    pto.tadds(t, t, 1.0)
    pto.tstore(O, t)                     # lands
    pto.tstore(O + 1, t)                 # elements 1..64 of a 64-element tensor: out of bounds


@pytest.mark.parametrize("check", [None, "racecheck"])
def test_a_fault_leaves_hbm_as_the_launch_does(simple_machine, check):
    """docs/checking.md: the stores a kernel issued before its fault land. The debugger's run
    raises pto.launch's OutOfBoundsError and leaves O as the launch does, arange(64) + 1 (it
    restored the snapshot, leaving zeros), with and without a check (whose SimPy run it keeps)."""
    outs = []
    for debug in (False, True):
        a = pto.to_device(np.arange(64, dtype=np.float32))
        o = pto.to_device(np.zeros(64, np.float32))
        with pytest.raises(pto.OutOfBoundsError) as info:
            if debug:
                dbg.debug_kernel(store_then_fault, args=(a, o), grid=(1,), echo=False, check=check).continue_()
            else:
                pto.launch(store_then_fault, grid=(1,), args=(a, o), check=check)
                pto.sync()
        assert info.value.line == store_then_fault.fn.__code__.co_firstlineno + 6
        outs.append(o.numpy())
    np.testing.assert_array_equal(outs[0], np.arange(64) + 1.0)
    np.testing.assert_array_equal(outs[1], outs[0])
