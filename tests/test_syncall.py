"""pto.syncall: pto-isa's SYNCALL, hard mode (include/pto/npu/a2a3/SyncAll.hpp at 3186c381;
isa/syncall_modes.py): a barrier of every AIV ('aiv'), AIC ('aic') or unit ('mix') of a launch.
Values in both modes, the release cycle from the rule (the latest arrival, its pipes drained,
plus the header's hops, each a CROSS_CORE_SET_FLAG and a CROSS_CORE_WAIT_FLAG of the machine
table), racecheck between AI cores, the bubbles' cause, and the errors. pto-isa's own suite:
tests/test_ptoisa_npu_syncall.py."""
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error_at

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import cross_core_sum  # noqa: E402

LINE = 8                 # int32 elements per 32-byte line: one line per participant, as the suite's


def exchange_kernel(barrier, lines, core_type="aiv"):
    """Each AIV writes its index + 1 (index = 2 block + sub-block) into its line of flags, then
    (after pto.syncall(core_type) when barrier) reads the first `lines` lines and stores them to
    its row of out. With core_type 'mix' the AIC writes 100 + block into its line past the AIVs'."""
    mix = core_type == "mix"

    @pto.kernel(sync="manual")
    def exchange(out, flags):
        with pto.cube():
            if mix:
                mine = pto.alloc_tile(16, 16, pto.int32, loc=pto.Mat, valid=(1, LINE))
                pto.texpands(mine, 100 + pto.get_block_id())
                pto.pipe_barrier(pto.PIPE_ALL)
                pto.tstore(flags + (2 * pto.get_grid_dim() + pto.get_block_id()) * LINE, mine)
                if barrier:
                    pto.syncall("mix")
        with pto.vector():
            idx = pto.get_block_id() * 2 + pto.get_subblock_id()
            line = pto.alloc_tile(1, LINE, pto.int32)
            pto.texpands(line, idx + 1)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tstore(flags + idx * LINE, line)
            if barrier:
                pto.syncall(core_type)
            seen = pto.alloc_tile(1, lines * LINE, pto.int32)
            pto.tload(seen, flags)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tstore(out + idx * lines * LINE, seen)
    return exchange


def run_exchange(kernel, blocks, lines, mode, check=()):
    out = pto.to_device(np.zeros(2 * blocks * lines * LINE, np.int32))
    flags = pto.to_device(np.zeros(lines * LINE, np.int32))
    if mode == "functional":
        pto.launch(kernel, grid=(blocks,), args=(out, flags), mode="functional")
        prof = None
    else:
        prof = pto.profile(kernel, grid=(blocks,), args=(out, flags), check=check)
    got = np.empty((2 * blocks, lines, LINE), np.int32)
    pto.memcpy_d2h(got, out)
    return got[:, :, 0], prof


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_every_aiv_sees_every_line_written_before_the_barrier(mode):
    """3 cores, 6 AIVs: after the barrier each reads lines 1..6, whatever order the cores ran in.
    In timing mode with racecheck and synccheck on: the barrier orders the writes before the reads."""
    got, _ = run_exchange(exchange_kernel(True, 6), 3, 6, mode, check=("race", "sync"))
    np.testing.assert_array_equal(got, np.tile(np.arange(1, 7), (6, 1)))


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_mix_orders_the_aics_lines_too(mode):
    """'mix': the AICs' lines (100 + block, after the AIVs' six) are read by every AIV as well."""
    got, _ = run_exchange(exchange_kernel(True, 9, "mix"), 3, 9, mode, check=("race", "sync"))
    np.testing.assert_array_equal(got, np.tile(np.r_[np.arange(1, 7), 100, 101, 102], (6, 1)))


def test_without_the_barrier_racecheck_reports_the_lines_read_too_early():
    """The same kernel without pto.syncall: an AIV's TLOAD of flags and another AIV's TSTORE of its
    line touch the same elements, and nothing orders them (the two AIVs of one core, or two cores)."""
    with pytest.raises(pto.RaceError, match="read-after-write race on GM tensor 'flags'") as info:
        run_exchange(exchange_kernel(False, 4), 2, 4, "timing", check=("race",))
    assert (info.value.unit, info.value.other_unit) in (("AIV1", "AIV0"), ("AIV0", "AIV1"))


def test_a_barrier_of_the_aics_does_not_order_the_aivs():
    """pto.syncall('aic') in cube code holds only the AICs: the AIVs' accesses stay unordered
    (racecheck), as SyncAll.hpp's AICOnly path signals no AIV. (One AIV per core here, so the race
    is between the cores.)"""
    @pto.kernel(sync="manual")
    def aic_only(out, flags):
        with pto.cube():
            pto.syncall("aic")
        with pto.vector():
            if pto.get_subblock_id() == 0:
                idx = pto.get_block_id()
                line = pto.alloc_tile(1, LINE, pto.int32)
                pto.texpands(line, idx + 1)
                pto.pipe_barrier(pto.PIPE_ALL)
                pto.tstore(flags + idx * LINE, line)
                pto.pipe_barrier(pto.PIPE_ALL)
                seen = pto.alloc_tile(1, 2 * LINE, pto.int32)
                pto.tload(seen, flags)
                pto.pipe_barrier(pto.PIPE_ALL)
                pto.tstore(out + idx * 2 * LINE, seen)

    out, flags = (pto.to_device(np.zeros(n, np.int32)) for n in (8 * 4 * LINE, 4 * LINE))
    with pytest.raises(pto.RaceError, match="between AI cores"):
        pto.profile(aic_only, grid=(2,), args=(out, flags), check=("race",))


def slow_arrival_kernel(core_type):
    """Every participant calls pto.syncall(core_type) first thing, but block 1's AIV0 loads 64 KiB
    before it; then every AIV stores one line."""
    mix = core_type == "mix"

    @pto.kernel(sync="manual")
    def slow(out, big):
        with pto.cube():
            if mix:
                pto.syncall("mix")
        with pto.vector():
            idx = pto.get_block_id() * 2 + pto.get_subblock_id()
            load = pto.alloc_tile(128, 128, pto.float32)
            if idx == 2:
                pto.tload(load, big)
            pto.syncall(core_type)
            line = pto.alloc_tile(1, LINE, pto.int32)
            pto.tstore(out + idx * LINE, line)
    return slow


@pytest.mark.parametrize("core_type, hops", [("aiv", 1), ("mix", 3)])
def test_every_participant_goes_on_at_the_latest_arrival_plus_the_hops(core_type, hops):
    """SyncAll.hpp: pipe_barrier(PIPE_ALL), then per hop one ffts_cross_core_sync and one
    wait_flag_dev; 'aiv' is one hop (all AIVs on flag 14), 'mix' three (AIV -> AIC on 12, the AICs
    on 11, AIC -> AIV on 13). Block 1's AIV0 arrives last, when its TLOAD has completed (its pipes
    drained): every participant's SYNCALL issues at that completion + hops x (CROSS_CORE_SET_FLAG
    latency + CROSS_CORE_WAIT_FLAG latency) = hops x (1 + 1) on the ascend910b table (pto-isa
    cce_costmodel_sync.hpp, 1 cycle each)."""
    out = pto.to_device(np.zeros(4 * LINE, np.int32))
    big = pto.to_device(np.zeros(128 * 128, np.float32))
    prof = pto.profile(slow_arrival_kernel(core_type), grid=(2,), args=(out, big))
    rec, names = prof.records, np.array(prof.pc_name)
    m = prof.machine
    hop = m.latency("CROSS_CORE_SET_FLAG") + m.latency("CROSS_CORE_WAIT_FLAG")
    assert hop == 2
    (load_done,) = rec.complete[names[rec.pc] == "TLOAD"]
    issues = rec.issue[names[rec.pc] == "SYNCALL"]
    assert len(issues) == (6 if core_type == "mix" else 4)
    assert set(issues.tolist()) == {int(load_done) + hops * hop}


def test_the_bubbles_name_the_last_arrival():
    """Core 0's AIV1 waits at the barrier for block 1's AIV0 (its TLOAD): its MTE3 idles until the
    store after the barrier, the stretch before the release a 'syncall' bubble naming block 1 AIV0
    and its line."""
    out = pto.to_device(np.zeros(4 * LINE, np.int32))
    big = pto.to_device(np.zeros(128 * 128, np.float32))
    prof = pto.profile(slow_arrival_kernel("aiv"), grid=(2,), args=(out, big))
    rec, names = prof.records, np.array(prof.pc_name)
    release = int(rec.issue[names[rec.pc] == "SYNCALL"][0])
    waits = [b for b in prof.bubbles(unit="AIV1", pipe="MTE3", core=0) if b.kind == "syncall"]
    assert len(waits) == 1 and waits[0].end == release
    line = prof.program.instrs[int(rec.pc[names[rec.pc] == "SYNCALL"][0])].line
    assert waits[0].text.startswith(f"pto.syncall('aiv') at line {line}: the launch's other units; the last to "
                                    f"arrive was block 1 AIV0 at cycle {release - 2}")


@pto.kernel(sync="manual")
def one_aiv_only(out):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            pto.syncall()
        line = pto.alloc_tile(1, LINE, pto.int32)
        pto.tstore(out + pto.get_subblock_id() * LINE, line)


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_participant_that_never_arrives_is_a_deadlock(mode):
    """AIV1 skips the barrier and finishes: the AIV0s wait forever (on hardware, a hang)."""
    out = pto.to_device(np.zeros(4 * LINE, np.int32))
    with pytest.raises(pto.DeadlockError, match=r"AIV0 waits at line \d+ \(pto.syncall\('aiv'\)\) for every AIV "
                                                r"of the launch"):
        if mode == "functional":
            pto.launch(one_aiv_only, grid=(2,), args=(out,), mode="functional")
            pto.sync()
        else:
            pto.profile(one_aiv_only, grid=(2,), args=(out,))


def test_more_blocks_than_cores_is_refused_before_anything_runs():
    """ascend910b has 24 AI cores: a 25th block would wait for a core the first 24 hold at the
    barrier. The launch is refused, out untouched."""
    out = pto.to_device(np.full(50 * LINE, 7, np.int32))
    with pytest.raises(pto.LaunchError, match="launched on 25 blocks and machine 'ascend910b' has 24 AI cores"):
        pto.launch(exchange_kernel(True, 1), grid=(25,), args=(out, out))
        pto.sync()
    got = np.empty(50 * LINE, np.int32)
    pto.memcpy_d2h(got, out)
    assert (got == 7).all()


@pto.kernel
def aiv_barrier_in_cube_code(out):
    with pto.cube():
        pto.syncall()
    with pto.vector():
        pto.syncall()


@pto.kernel
def aic_barrier_in_vector_code(out):
    with pto.vector():
        pto.syncall("aic")


@pto.kernel
def unknown_kind(out):
    with pto.vector():
        pto.syncall("all")


@pto.kernel
def own_flag_on_the_barriers(out):
    with pto.cube():
        pto.cross_core_wait_flag(13)
    with pto.vector():
        pto.syncall()
        pto.cross_core_set_flag(13)
        pto.syncall("mix")


def test_misuse_is_an_error_at_the_line():
    """pto-isa compiles SYNCALL<AIVOnly> in cube code to a bare pipe_barrier(PIPE_ALL) (and AICOnly in
    vector code likewise): a barrier that holds nobody, refused here; so is a kind it does not have."""
    out = pto.alloc_tensor(256, pto.int32)
    compile_error_at(aiv_barrier_in_cube_code, (out,), "pto.syncall('aiv') in cube code", "pto.syncall()")
    compile_error_at(aic_barrier_in_vector_code, (out,), "pto.syncall('aic') in vector code",
                     "pto.syncall(\"aic\")")
    compile_error_at(unknown_kind, (out,), "core_type must be one of 'aiv', 'aic', 'mix'", "pto.syncall(\"all\")")


def test_a_kernel_flag_on_a_barrier_flag_is_refused_at_launch():
    """'mix' signals AIC -> AIV on flag 13 (SyncAll.hpp SYNC_AIC_AIV_FLAG): the kernel's own
    cross_core_set_flag(13) would be taken by the barrier's wait (or take its signal)."""
    out = pto.alloc_tensor(256, pto.int32)
    with pytest.raises(pto.CompileError, match=r"cross_core_wait_flag\(13\) at line \d+: cross-core flag 13 is "
                                               r"the one pto.syncall\('mix'\) at line \d+ signals on"):
        pto.launch(own_flag_on_the_barriers, grid=(1,), args=(out,))


def test_the_trace_draws_each_rounds_release_from_its_last_arrival():
    """Two cores, 'aiv': block 1's AIV0 arrives last (its TLOAD), so the trace has three
    "syncall" arrows, from its SYNCALL slice to those of block 0's AIV0 and AIV1 and block 1's
    AIV1, each on the units' scalar tracks."""
    out = pto.to_device(np.zeros(4 * LINE, np.int32))
    big = pto.to_device(np.zeros(128 * 128, np.float32))
    prof = pto.profile(slow_arrival_kernel("aiv"), grid=(2,), args=(out, big))
    doc = prof.trace()
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
              if e["ph"] == "M" and e["name"] == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
    ends = {e["id"]: e for e in doc["traceEvents"] if e["ph"] == "f"}
    arrows = sorted((e["name"], procs[e["pid"]], tracks[(e["pid"], e["tid"])],
                     procs[ends[e["id"]]["pid"]], tracks[(ends[e["id"]]["pid"], ends[e["id"]]["tid"])])
                    for e in doc["traceEvents"] if e["ph"] == "s" and e["cat"] == "syncall")
    assert arrows == [("pto.syncall('aiv')", "core 1", "AIV0 S", "core 0", "AIV0 S"),
                      ("pto.syncall('aiv')", "core 1", "AIV0 S", "core 0", "AIV1 S"),
                      ("pto.syncall('aiv')", "core 1", "AIV0 S", "core 1", "AIV1 S")]


def test_the_cross_core_sum_example_sums_and_needs_its_barrier():
    """examples/cross_core_sum.py: 48 AIVs' column sums, then AIV0 of core 0's sum of them, equals
    numpy's sum of x to float32's precision (each partial a float32 sum of 16, the last of 48 and of
    64: relative error well under 1e-5); under racecheck and synccheck with the barrier; without it
    the second phase's TLOAD of the partial sums races with the other cores' TSTOREs."""
    total, expected, _ = cross_core_sum.run(check=("race", "sync"))
    assert total == pytest.approx(expected, rel=1e-5)
    with pytest.raises(pto.RaceError, match="race on GM tensor 'partial'"):
        cross_core_sum.run(barrier=False, check=("race",))
