"""The instruction-level debugger (pypto_sim.debug): the article's session, stepping, the
timeline, breakpoints, deterministic step_back, variables, tensors and errors."""
import re

import numpy as np
import pytest

import pypto_sim as pto
import pypto_sim.debug as dbg


@pto.kernel
def vector_add(a, b, o, n):
    i = pto.get_global_id()
    if i < n:
        a_val = pto.load(a + i)
        b_val = pto.load(b + i)
        pto.fma(o + i, a_val, 1.0, b_val)


LINE_I = vector_add.first_line + 2          # i = pto.get_global_id()
LINE_A = vector_add.first_line + 4          # a_val = pto.load(a + i)
LINE_B = vector_add.first_line + 5          # b_val = pto.load(b + i)
LINE_FMA = vector_add.first_line + 6        # pto.fma(o + i, a_val, 1.0, b_val)


def _article_setup(n=1024, launch=True):
    """The article's program up to its launch (4 blocks of 256 lanes), with its variable names."""
    rng = np.random.default_rng(7)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    o = np.zeros(n, dtype=np.float32)
    d_a = pto.alloc_tensor(n * 4)
    d_b = pto.alloc_tensor(n * 4)
    d_o = pto.alloc_tensor(n * 4)
    pto.memcpy_h2d(d_a, a)
    pto.memcpy_h2d(d_b, b)
    if launch:
        pto.launch(vector_add, grid=(-(-n // 256), 1, 1), block=(256, 1, 1), args=(d_a, d_b, d_o, n))
        pto.memcpy_d2h(o, d_o)
        assert np.allclose(o, a + b)
    return a, b, d_a, d_b, d_o


def _step_to(ctx, pred, limit=10_000):
    """Step one warp-instruction at a time until pred(entry) holds for the one just executed."""
    for _ in range(limit):
        entries = ctx.step()
        if not entries:
            raise AssertionError("the kernel ended first")
        if pred(entries[-1]):
            return entries[-1]
    raise AssertionError("not reached")


def test_the_articles_session_runs_as_written(capsys):
    """The article's debugger session, with only the import changed, against vector_add."""
    a, b, d_a, d_b, d_o = _article_setup()
    n = 1024
    capsys.readouterr()
    # --- the article's lines
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, n))
    ctx.step()
    l1_data = ctx.inspect_l1(0, 16)
    print(l1_data)
    timeline = ctx.get_instruction_timeline()
    for entry in timeline:
        print(f"Cycle {entry.cycle}: Lane {entry.lane}: {entry.inst}")
    # ---
    out = capsys.readouterr().out
    assert ctx.grid == (4, 1, 1) and ctx.block == (256, 1, 1)     # the last launch's
    assert "[Lane 0-31] GLOBAL_ID L1[0] <- x (0..31)" in out
    assert "Cycle 0: Lane 0-31: GLOBAL_ID" in out
    assert l1_data.shape == (16,) and l1_data.dtype == np.float32
    assert len(timeline) == 1


def test_lane_0_holds_a0_and_b0_after_its_two_loads(capsys):
    """Stepping warp 0 of block 0 through its two loads: lane 0's L1 slots hold a[0] and b[0]
    (the lines name the tensors by their variables, d_a and d_b)."""
    a, b, d_a, d_b, d_o = _article_setup()
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 1024))
    first = _step_to(ctx, lambda e: e.inst == "LOAD" and e.block == 0 and e.warp == 0)
    assert first.line == LINE_A
    l1 = ctx.inspect_l1(0, 16)
    assert l1[2] == a[0] and l1[3] == 0.0
    _step_to(ctx, lambda e: e.inst == "LOAD" and e.block == 0 and e.warp == 0)
    l1 = ctx.inspect_l1(0, 16)
    assert l1[2] == a[0] and l1[3] == b[0]
    assert ctx.inspect_l1(5)[2:4].tolist() == [a[5], b[5]]
    out = capsys.readouterr().out
    assert "[Lane 0-31] LOAD d_a[0..31] -> L1[2] (128 bytes)" in out
    assert "[Lane 0-31] LOAD d_b[0..31] -> L1[3] (128 bytes)" in out
    assert "[Lane 32-63] LOAD d_a[32..63] -> L1[2] (128 bytes)" in out
    assert re.search(r"\[Lane 0-31\] LOAD d_a\[0\.\.31\].*; cycle \d+, block 0, warp 0, line "
                     + str(LINE_A), out)


def test_single_lane_lines_have_the_articles_shape(capsys):
    """With n = 1 only lane 0 passes `if i < n`: its lines are the article's, lane by lane."""
    _, _, d_a, d_b, d_o = _article_setup(n=1, launch=False)
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 1), grid=1, block=32)
    ctx.step(6)
    out = capsys.readouterr().out
    assert "[Lane 0] LOAD d_a[0] -> L1[2] (4 bytes)" in out
    assert "[Lane 0] LOAD d_b[0] -> L1[3] (4 bytes)" in out
    assert "[Lane 0] FMA_STORE d_o[0] <- L1[2] * 1.0 + L1[3] (4 bytes)" in out
    assert "[Lane 0-31] LT L1[1] <- L1[0], s0" in out


def test_defaults_without_a_previous_launch():
    """A kernel never launched: grid (1,1,1) and the article's block (256,1,1)."""

    @pto.kernel
    def copy(a, o):
        i = pto.get_global_id()
        pto.store(o + i, pto.load(a + i))

    d_a = pto.alloc_tensor(256 * 4)
    d_o = pto.alloc_tensor(256 * 4)
    ctx = dbg.debug_kernel(copy, args=(d_a, d_o), echo=False)
    assert ctx.grid == (1, 1, 1) and ctx.block == (256, 1, 1)
    assert ctx.count == 0 and ctx.pc is None and ctx.cycle == 0 and not ctx.done


def test_timeline_is_ordered_and_agrees_with_the_profile():
    """Run to the end: the timeline is ordered by cycle, its last end is the Profile's
    total_cycles for the same launch, and it equals the profiler's timeline entry for entry."""
    _, _, d_a, d_b, d_o = _article_setup()
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 1024), echo=False)
    stepped = ctx.step(50)
    assert [e.cycle for e in stepped] == sorted(e.cycle for e in stepped)     # time order
    ctx.continue_()
    assert ctx.done and ctx.finished
    prof = pto.profile(vector_add, grid=(4, 1, 1), block=(256, 1, 1), args=(d_a, d_b, d_o, 1024))
    timeline = ctx.get_instruction_timeline()
    cycles = [e.cycle for e in timeline]
    assert cycles == sorted(cycles)
    assert max(e.end for e in timeline) == prof.total_cycles == ctx.total_cycles == ctx.cycle
    assert timeline == prof.timeline
    assert stepped == timeline[:50]
    e = timeline[0]
    for field in ("cycle", "lane", "inst", "warp", "block", "core", "pipe", "start", "end", "stall"):
        assert hasattr(e, field)
    assert {x.lane for x in timeline} >= {"0-31", "224-255"}


def test_step_back_then_forward_gives_identical_state():
    """step_back(n) replays from the HBM snapshot; stepping forward again reproduces registers,
    L1, HBM and the timeline exactly (also across a finished run and its stores)."""
    _, _, d_a, d_b, d_o = _article_setup()
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 1024), echo=False)
    at_start = [ctx.tensor(t) for t in (d_a, d_b, d_o)]
    ctx.step(120)
    before = ctx.state()
    timeline = ctx.get_instruction_timeline()
    undone = ctx.step_back(30)
    assert ctx.count == 90 and len(undone) == 30
    ctx.step(30)
    after = ctx.state()
    assert ctx.get_instruction_timeline() == timeline
    assert after["rows"] == before["rows"] and after["cycle"] == before["cycle"]
    assert np.array_equal(after["hbm"], before["hbm"])
    assert before["regs"].keys() == after["regs"].keys()
    for key in before["regs"]:
        assert np.array_equal(before["regs"][key], after["regs"][key])
    assert after["masks"] == before["masks"] and after["ready"] == before["ready"]
    # back to the start: HBM as it was (d_o still holds the earlier launch's result)
    ctx.restart()
    assert ctx.count == 0
    for t, words in zip((d_a, d_b, d_o), at_start):
        assert np.array_equal(ctx.tensor(t), words)


def test_a_replay_restores_the_launchs_tensors_only_and_follows_hbm_growth():
    """step_back and restart restore the memory of the launch's tensors as it was at
    debug_kernel, and leave the host's other tensors as the host last wrote them (they reset
    the whole of HBM). A tensor allocated while paused that grows HBM into a new array does
    not lose the kernel's stores: continue_ goes on there."""
    a, b, d_a, d_b, d_o = _article_setup(n=256, launch=False)
    other = pto.to_device(np.zeros(8, np.float32))
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 256), grid=1, block=256, echo=False)
    ctx.step(20)
    pto.memcpy_h2d(other, np.arange(8, dtype=np.float32))
    ctx.step_back(5)
    later = pto.to_device(np.full(4, 5.0, np.float32))
    ctx.restart()
    np.testing.assert_array_equal(other.numpy(), np.arange(8))
    np.testing.assert_array_equal(later.numpy(), np.full(4, 5.0))
    ctx.step(20)
    big = pto.to_device(np.ones(1 << 20, np.float32))      # 4 MiB: past the HBM array's size
    ctx.continue_()
    np.testing.assert_array_equal(d_o.numpy(), a + b)
    assert big.numpy().min() == 1.0


def test_freeing_a_tensor_of_a_paused_launch_is_refused():
    """A paused debug session's launch still uses its tensors: freeing one is a
    UseAfterFreeError naming the kernel (freed, its bytes went to the next tensor allocated,
    which the kernel then wrote); after the session's end it frees."""
    _, _, d_a, d_b, d_o = _article_setup(n=256, launch=False)
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 256), grid=1, block=256, echo=False)
    ctx.step(3)
    with pytest.raises(pto.UseAfterFreeError, match="in use by kernel 'vector_add', paused in the debugger"):
        d_o.free()
    ctx.continue_()
    d_o.free()
    with pytest.raises(pto.UseAfterFreeError, match="'d_o' of this launch was freed"):
        ctx.restart()


def test_a_paused_session_holds_its_tensors_against_del_and_lets_go_after_an_error(make_kernels):
    """`del` of the last name of a paused launch's tensor (its finalizer) does not free it: the
    session holds it, so a tensor allocated next gets other bytes and keeps its values; a
    session stopped by a kernel error holds nothing (free() works)."""
    import gc
    a, b, d_a, d_b, d_o = _article_setup(n=256, launch=False)
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 256), grid=1, block=256, echo=False)
    ctx.step(3)
    address = d_o.alloc.byte_addr
    del d_o
    gc.collect()
    other = pto.to_device(np.full(256, 7.0, np.float32))
    assert other.alloc.byte_addr != address
    ctx.continue_()
    np.testing.assert_array_equal(other.numpy(), np.full(256, 7.0))
    np.testing.assert_array_equal(ctx.tensor("o"), a + b)
    k = make_kernels("""
@pto.kernel
def past(o):
    o[pto.get_global_id() + 1] = 1.0
""").past
    out = pto.alloc_tensor(32 * 4)
    bad = dbg.debug_kernel(k, args=(out,), grid=1, block=32, echo=False)
    with pytest.raises(pto.OutOfBoundsError):
        bad.continue_()
    out.free()


def test_step_back_restores_hbm_written_by_stores():
    """A fresh output tensor: after the run d_o holds a + b; stepping all the way back leaves it
    zero again, and running forward again writes it again."""
    a, b, d_a, d_b, d_o = _article_setup(n=256, launch=False)
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 256), grid=1, block=256, echo=False)
    ctx.continue_()
    assert np.array_equal(ctx.tensor(d_o), a + b) and np.array_equal(ctx.tensor("o"), a + b)
    count = ctx.count
    ctx.step_back(count)
    assert ctx.count == 0 and not ctx.tensor("d_o").any()
    ctx.step(count)
    ctx.step()                                     # the stores still in flight land
    assert ctx.finished and np.array_equal(ctx.tensor(d_o), a + b)


def test_breakpoints_on_line_inst_cycle_and_warp(capsys):
    _, _, d_a, d_b, d_o = _article_setup()
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 1024))
    bp = ctx.break_at(line=LINE_B)
    hit = ctx.continue_()
    assert hit.line == LINE_B and hit.inst == "LOAD" and ctx.line == LINE_B
    assert f"breakpoint {bp} (line={LINE_B}) hit" in capsys.readouterr().out
    ctx.clear_breakpoints()

    ctx.break_at(inst="fma_store", block=2)
    hit = ctx.continue_()
    assert hit.inst == "FMA_STORE" and hit.block == 2
    ctx.clear_breakpoints()

    ctx.break_at(warp=5, block=3)
    hit = ctx.continue_()
    assert (hit.warp, hit.block) == (5, 3)
    again = ctx.continue_()
    assert (again.warp, again.block) == (5, 3) and again.cycle > hit.cycle
    ctx.clear_breakpoints()

    ctx.restart()
    ctx.break_at(cycle=101)
    hit = ctx.continue_()
    assert hit.cycle >= 101 and ctx.cycle == hit.cycle
    assert all(e.cycle < 101 for e in ctx.get_instruction_timeline() if e != hit)
    assert ctx.continue_() is None and ctx.finished        # a cycle breakpoint fires once
    ctx.step_back(ctx.count - 10)                          # before it: armed again
    assert ctx.continue_() == hit


def test_bad_breakpoints_are_refused():
    _, _, d_a, d_b, d_o = _article_setup(launch=False)
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 1024), echo=False)
    with pytest.raises(ValueError, match="no instruction comes from line"):
        ctx.break_at(line=1)
    with pytest.raises(ValueError, match="no such instruction"):
        ctx.break_at(inst="JUMP")
    with pytest.raises(ValueError):
        ctx.break_at()


def test_lane_values_of_kernel_variables():
    a, b, d_a, d_b, d_o = _article_setup()
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 1000), echo=False)
    assert set(ctx.symbols()) >= {"i", "a_val", "b_val", "n"}
    ctx.break_at(line=LINE_B, block=3, warp=7)
    ctx.continue_()
    i = ctx.lane_values("i", block=3)
    assert i.dtype == np.int32 and np.array_equal(i, 768 + np.arange(256))
    assert np.array_equal(ctx.lane_values("n", block=3), np.full(256, 1000, np.int32))
    a_val = ctx.lane_values("a_val", block=(3, 0, 0))
    assert a_val.dtype == np.float32
    assert np.array_equal(a_val[:232], a[768:1000])          # lanes with i < n loaded
    assert not a_val[232:].any()                              # masked lanes never did
    with pytest.raises(pto.ArgumentError, match="tensor parameter"):
        ctx.lane_values("a")
    with pytest.raises(pto.ArgumentError, match="no variable 'zz'") as info:
        ctx.lane_values("zz")
    assert isinstance(info.value, KeyError)      # what code that caught KeyError still catches


def test_inspect_alloc_local():
    @pto.kernel
    def reverse(a, o):
        i = pto.get_local_id()
        buf = pto.alloc_local(32)
        buf[i] = pto.load(a + i)
        pto.barrier()
        o[i] = pto.load(buf + 31 - i)

    x = np.arange(32, dtype=np.float32) + 1
    d_a = pto.alloc_tensor(32 * 4)
    d_o = pto.alloc_tensor(32 * 4)
    pto.memcpy_h2d(d_a, x)
    ctx = dbg.debug_kernel(reverse, args=(d_a, d_o), grid=1, block=32, echo=False)
    assert not ctx.inspect_alloc_local("buf").any()
    ctx.break_at(inst="BARRIER")
    ctx.continue_()
    ctx.clear_breakpoints()
    ctx.continue_()
    assert np.array_equal(ctx.inspect_alloc_local("buf"), x)
    assert np.array_equal(ctx.tensor(d_o), x[::-1])
    with pytest.raises(KeyError):
        ctx.inspect_alloc_local("nope")


def test_out_of_bounds_surfaces_and_state_stays_inspectable():
    @pto.kernel
    def unguarded(a, o):
        i = pto.get_global_id()
        pto.store(o + i, pto.load(a + i) * 2.0)

    x = np.arange(40, dtype=np.float32)
    d_a = pto.alloc_tensor(40 * 4)
    d_o = pto.alloc_tensor(64 * 4)
    pto.memcpy_h2d(d_a, x)
    ctx = dbg.debug_kernel(unguarded, args=(d_a, d_o), grid=1, block=64, echo=False)
    with pytest.raises(pto.OutOfBoundsError) as info:
        ctx.step(100)
    assert info.value.warp == 1 and info.value.offset == 40
    assert ctx.done and not ctx.finished and isinstance(ctx.error, pto.OutOfBoundsError)
    with pytest.raises(pto.OutOfBoundsError):
        ctx.step()                                   # the error stays until you step back
    assert ctx.inspect_l1(3)[0] == 3.0              # lane 3's global id
    words = ctx.machine.l1_bytes // 4               # no lane has more L1 words than the core
    assert ctx.inspect_l1(3, words).shape == (words,)
    with pytest.raises(pto.ArgumentError, match=rf"inspect_l1: count=1000000000 is out of range \(valid: 0..{words}\)"):
        ctx.inspect_l1(3, 10**9)                    # was a 4 GB array of zeros
    ctx.step_back(1)
    assert ctx.error is None and not ctx.done


def test_deadlock_surfaces():
    @pto.kernel
    def half_barrier(out):
        lid = pto.get_local_id()
        if lid < 128:
            pto.barrier_block()
        pto.store(out + lid, 1.0)

    d_out = pto.alloc_tensor(256 * 4)
    ctx = dbg.debug_kernel(half_barrier, args=(d_out,), grid=1, block=256, echo=False)
    with pytest.raises(pto.DeadlockError, match="barrier_block"):
        ctx.continue_()
    assert isinstance(ctx.error, pto.DeadlockError)
    assert "stopped by DeadlockError" in repr(ctx)


def test_finished_kernel_says_so(capsys):
    _, _, d_a, d_b, d_o = _article_setup(n=32, launch=False)
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 32), grid=1, block=32)
    ran = ctx.step(1000)
    assert ran and ctx.finished and len(ran) == ctx.count
    assert "vector_add finished at cycle" in capsys.readouterr().out
    assert ctx.step() == []
    assert "has finished" in capsys.readouterr().out


def test_the_debugger_adds_nothing_to_the_model():
    """Debugging drives the launch's simulation from outside, one warp-instruction at a time:
    a launch stepped through every one of its warp-instructions (2 blocks of 2 warps) gives
    the free-running profile's timeline entry for entry and its total cycles, and needs one
    step per entry of that timeline (and no more: the next step says the kernel finished)."""
    _, _, d_a, d_b, d_o = _article_setup(n=128, launch=False)
    prof = pto.profile(vector_add, grid=(2, 1, 1), block=(64, 1, 1), args=(d_a, d_b, d_o, 128))
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 128), grid=2, block=64, echo=False)
    steps = 0
    while ctx.step():
        steps += 1
    assert ctx.finished and steps == len(prof.timeline)
    assert ctx.get_instruction_timeline() == prof.timeline
    assert ctx.total_cycles == prof.total_cycles


def test_tile_kernel_steps_to_the_same_result_and_timeline(capsys):
    """The softmax example (tile instructions on warp 0): stepped under a breakpoint on every
    instruction of block 1, it computes the softmax, its alloc_local buffers are readable, and
    its timeline is the profiler's."""
    import importlib.util
    import sys
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "examples" / "softmax_tiles.py"
    spec = importlib.util.spec_from_file_location("softmax_for_debugger", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    kernel = module.softmax_rows
    x = np.random.default_rng(3).random((16, 64), dtype=np.float32)
    d_x = pto.alloc_tensor(x.nbytes)
    d_y = pto.alloc_tensor(x.nbytes)
    pto.memcpy_h2d(d_x, x)
    ctx = dbg.debug_kernel(kernel, args=(d_x, d_y, 4, 64), grid=4, block=32)
    ctx.break_at(block=1)
    stops = 0
    while ctx.continue_() is not None:
        stops += 1
    out = capsys.readouterr().out
    assert "TLOAD x_tile, d_x[s2], 4, 64, 64" in out and "ALLOC_LOCAL row_red" in out
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y = ctx.tensor(d_y).reshape(16, 64)
    assert np.allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert np.allclose(ctx.inspect_alloc_local("row_red", block=1), e[4:8].sum(axis=1), rtol=1e-5)
    prof = pto.profile(kernel, grid=4, block=32, args=(d_x, d_y, 4, 64))
    assert stops == sum(1 for t in prof.timeline if t.block == 1)
    assert ctx.get_instruction_timeline() == prof.timeline
    assert ctx.total_cycles == prof.total_cycles


def test_profile_of_a_debugged_run_has_the_profilers_analyses():
    """ctx.profile() is a Profile like pto.profile's: its breakdown and utilisation agree."""
    _, _, d_a, d_b, d_o = _article_setup()
    ctx = dbg.debug_kernel(vector_add, args=(d_a, d_b, d_o, 1024), echo=False)
    ctx.continue_()
    prof = pto.profile(vector_add, grid=(4, 1, 1), block=(256, 1, 1), args=(d_a, d_b, d_o, 1024))
    mine = ctx.profile()
    assert mine.total_cycles == prof.total_cycles
    assert mine.cycle_breakdown().as_dict() == prof.cycle_breakdown().as_dict()
    assert mine.pipe_utilization() == prof.pipe_utilization()


@pytest.mark.parametrize("with_breakpoint", [False, True])
def test_cycle_limit_surfaces(with_breakpoint):
    """A kernel that never ends stops at the launch's cycle limit, stepped or run freely."""
    @pto.kernel
    def spin(o, n):
        i = pto.get_global_id()
        k = 0
        while k < n:
            k = k + 0
        pto.store(o + i, 1.0)

    d_o = pto.alloc_tensor(32 * 4)
    ctx = dbg.debug_kernel(spin, args=(d_o, 5), grid=1, block=32, echo=False, max_cycles=500)
    if with_breakpoint:                       # one that never fires: the kernel has no barrier
        ctx.break_at(inst="BARRIER_BLOCK")
    with pytest.raises(pto.SimulationLimitError, match="cycle limit of 500"):
        ctx.continue_()
    assert isinstance(ctx.error, pto.SimulationLimitError)


def test_checks_apply_under_the_debugger():
    """check= works as for pto.launch: a racecheck error stops the run like a kernel error."""
    @pto.kernel
    def racy(o):
        i = pto.get_local_id()
        pto.store(o + 0, pto.cast(i, pto.float32))

    d_o = pto.alloc_tensor(64 * 4)
    ctx = dbg.debug_kernel(racy, args=(d_o,), grid=1, block=64, echo=False, check="racecheck")
    with pytest.raises(pto.RaceError, match="d_o"):
        ctx.continue_()
    assert ctx.done and isinstance(ctx.error, pto.RaceError)
