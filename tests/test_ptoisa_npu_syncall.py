"""pto-isa's ON-DEVICE A2/A3 st cases of SYNCALL, hard and soft mode (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/syncall at 3186c381: main.cpp, gen_data.py, syncall_kernel.cpp,
syncall_aic_hard_kernel.cpp, syncall_soft_kernel.cpp, syncall_aic_kernel.cpp,
syncall_mix_1_2_kernel.cpp, syncall_mix_1_1_soft_kernel.cpp, syncall_mix_common.hpp,
syncall_core_config.hpp), with pto.syncall(core_type) for SYNCALL<SyncCoreType> (SyncAll.hpp) and
pto.syncall(core_type, workspace=ws, used_cores=n) for SYNCALL<SyncAllMode::Soft, SyncCoreType>(ws,
n) (include/pto/common/syncall_soft.hpp: an int32 counter at ws[0] in GM, zeroed by main.cpp).

Every participant writes its flag line (idx + 1 at flags + idx x 8 int32: one 32-byte line
each), SYNCALL, then reads every participant's line and writes out[idx] = 1 if each holds its
writer's value (allVisible), else 0. main.cpp compares ResultCmp(golden, out[i x 8], 0) with
golden all 1 (gen_data.py: np.ones of the participant count). The launch counts are
syncall_core_config.hpp's 910B1 defaults, AIC 24 / AIV 48, which are pypto_sim's ascend910b
(24 AI cores of two AIVs each). The sources' run-time totalBlocks / aicBlocks / totalParticipants
are module constants here (AIV, AIC, MIX, MIX11; syncBlocks AIV // 2, AIC // 2): they size the
check's tiles, which must be compile-time (pypto_sim specialises a kernel on an argument that
sizes a tile in its own body, not in an inlined helper). Ported cases, each at the full counts
both with pto.profile(check=("sync", "race")) (the SimPy model, under synccheck and racecheck)
and with pto.launch(mode="functional"); the module runs in a few seconds once numba's cache is
warm (each soft case's SimPy run well under a second):

- SYNCALLTest.case_aiv_only_all_blocks (syncall_kernel.cpp RunSyncAll_mix_aiv, SYNCALL<AIVOnly>
  over 48 AIVs): the CCE launch <<<48>>> of a vector-only kernel runs one AIV a block with
  block_idx 0..47; a pypto_sim vector section runs on both AIVs of each AI core, so grid=(24,)
  runs the 48 AIVs and block_idx is get_block_id() x 2 + get_subblock_id().
- SYNCALLTest.case_hard_aic_only_all_blocks (syncall_aic_hard_kernel.cpp RunHardSyncAllAIC_2001,
  SYNCALL<AICOnly> over 24 AICs; its AIV stub is empty, so the kernel has only a cube section).
- SYNCALLTest.case_mix_1_2_all_blocks (syncall_mix_1_2_kernel.cpp RunSyncAllMix12_1201 with
  syncall_mix_common.hpp RunMixSyncAllBody<false>: 24 AICs + 48 AIVs, three SYNCALL<Mix>; flags
  idx + 1, check, rewrite as (idx + 1) x 2, check again; out = both checks, a tand on the AIVs).
  GetMixLogicalIdx: an AIC is its block index, an AIV aicBlocks + block x subblockdim (2) +
  subblock id. SYNCALLTest.case_mix_1_1_all_blocks (syncall_mix_1_1_kernel.cpp
  RunSyncAllMix11_1101, the same body in a 1:1 mix launch, __MIX_CORE_AIV_RATIO__ 1): the
  kernel with @pto.kernel(aiv_ratio=1), 24 AICs + 24 AIVs, subblockdim 1.
- SYNCALLTest.case_soft_aiv_only_all_blocks (syncall_soft_kernel.cpp RunSoftSyncAll,
  SoftSyncAllBody: the mix body's flag / three SYNCALL<Soft>(ws, 48) / two checks on 48 AIVs).
- SYNCALLTest.case_soft_aiv_only_partial_blocks (RunSoftSyncAllPartial, main.cpp
  RunSoftPartialCase): 48 AIVs launched, AIVs 0..23 meet (usedCores 24), the others store
  kIdleCoreMark (2) to their out line and never call SYNCALL; golden 1 below 24, 2 from 24.
- SYNCALLTest.case_soft_aic_only_all_blocks and case_soft_aic_only_partial_blocks
  (syncall_aic_kernel.cpp RunSoftSyncAllAIC / RunSoftSyncAllAICPartial, SoftSyncAllAicBody: flag,
  one SYNCALL<Soft, AICOnly>, the reads): 24 AICs, of which 24 / 12 meet; the idle AICs' mark as
  the AIV partial case's.
- SYNCALLTest.case_soft_mix_1_2_all_blocks (RunSoftSyncAllMix12_1202 = RunMixSyncAllBody<true>,
  totalParticipants 72) and case_soft_mix_1_1_all_blocks (syncall_mix_1_1_soft_kernel.cpp: an AIC
  launch and an AIV launch of aicBlocks blocks on two streams, 48 participants meeting on the
  counter; an AIV's idx is aicBlocks + block, subblockdim 1): one 1:1 launch here
  (@pto.kernel(aiv_ratio=1)), its 24 AICs and 24 AIVs the two launches' participants.
main.cpp does not read the workspace; the tests also check its counter's final value, rounds x
participants (syncall_soft.hpp adds 1 an arrival and never resets it): 3 x 48, 3 x 24, 24, 12,
3 x 72, 3 x 48.

How the CCE-level code maps. StoreInt32Line (ub[0] = value, pipe_barrier(PIPE_ALL),
copy_ubuf_to_gm of one 32-byte block, pipe_barrier(PIPE_ALL)) is a 1 x 8 int32 Vec tile filled
by pto.texpands and pto.tstore between the same pipe_barrier(PIPE_ALL)s; the cube's
StoreInt32LineL1 (create_cbuf_matrix of one block, copy_cbuf_to_gm) a Mat tile filled by
pto.texpands (TEXPANDS_MAT; a Mat tile is 16 x 16 at least, and its fill writes the whole 1 KiB
where create_cbuf_matrix writes one block) stored with valid (1, 8). All 8 words of a line hold
the value (the kernels set only word 0; main.cpp reads only word 0). The kernels run in
sync="manual": their pipe_barrier(PIPE_ALL)s order them. dcci and dsb are not modelled: pypto_sim
has no scalar data cache, so there is no stale line to invalidate.

The reads. The AIV kernels copy_gm_to_ubuf the flag lines and compare word 0 of each in a scalar
loop; pypto_sim's AI-core units have no scalar GM or UB loads (pto.load / a[i] are lane code, a
CompileError in an AI-core kernel: docs/aicore.md, frontend/aicore_scalar.py), so the AIV loads
the N x 8 lines into a Vec tile (the same copy) and checks them with tile ops: the expected
lines (i + 1) x multiplier built by pto.tci, tcolexpand and ttrans; d = seen - expected;
tcolmax(d x d) over the lines; allVisible = 1 - min(that, 1), word c of the out line being the
check of word c of every line (word 0 is the source's). The cube has no vector unit and no
scalar reads either: its flag(i) reads become a TLOAD of the lines into a Mat tile and a TSTORE
of what it saw to a GM snapshot (seen, one N x 8 block per AIC and check), and the test runs the
scalar loop on the snapshot in numpy for the AICs' out lines. The GM reads SYNCALL must order are
the device's, so racecheck and the values see them; only the AICs' comparison is on the host.

Every case of the suite is ported.

That the cases can fail: test_the_reads_race_without_a_barrier_between moves the AIC kernel's
SYNCALL after its reads: racecheck reports the other AICs' flag stores as a race between AI cores,
and the functional run's comparison fails; test_the_aiv_reads_race_and_the_hint_names_syncall
does the same to the AIV kernel; test_the_soft_reads_race_without_a_barrier_between to the soft
AIC partial kernel.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import result_cmp

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/syncall at 3186c381"
AIC, AIV = 24, 48               # syncall_core_config.hpp CoreConfig{24, 48}: 910B1
MIX = AIC * 3                   # LaunchSyncAllMix12's totalParticipants: 1 cube + 2 vectors per cube
MIX11 = AIC * 2                 # case_soft_mix_1_1_all_blocks's total: 1 cube + 1 vector per cube
LINE = 8                        # kInt32PerCacheLine


@pto.kernel
def store_line_vec(dst, value):
    """StoreInt32Line / StoreMixInt32Line (__DAV_VEC__): value into one 32-byte GM line."""
    line = pto.alloc_tile(1, LINE, pto.int32)
    pto.texpands(line, value)
    pto.pipe_barrier(pto.PIPE_ALL)
    pto.tstore(dst, line)
    pto.pipe_barrier(pto.PIPE_ALL)


@pto.kernel
def store_line_mat(dst, value):
    """StoreInt32LineL1 / StoreMixInt32Line (__DAV_CUBE__): create_cbuf_matrix, copy_cbuf_to_gm."""
    line = pto.alloc_tile(16, 16, pto.int32, loc=pto.Mat, valid=(1, LINE))
    pto.texpands(line, value)
    pto.pipe_barrier(pto.PIPE_ALL)
    pto.tstore(dst, line)
    pto.pipe_barrier(pto.PIPE_ALL)


@pto.kernel
def check_lines_vec(visible, flags, total, multiplier):
    """The AIV's copy_gm_to_ubuf of total lines and its loop `readUb[i x 8] != (i + 1) x
    multiplier -> allVisible = 0`, as tile ops: visible (1 x 8) = 1 where every line matches."""
    iota = pto.alloc_tile(1, total, pto.int32)
    pto.tci(iota, 1)
    pto.tmuls(iota, iota, multiplier)
    rows = pto.alloc_tile(LINE, total, pto.int32)
    pto.tcolexpand(rows, iota)
    expected = pto.alloc_tile(total, LINE, pto.int32)
    pto.ttrans(expected, rows)
    seen = pto.alloc_tile(total, LINE, pto.int32)
    pto.tload(seen, flags)
    pto.pipe_barrier(pto.PIPE_ALL)
    pto.tsub(seen, seen, expected)
    pto.tmul(seen, seen, seen)
    pto.tcolmax(visible, seen)
    pto.tmins(visible, visible, 1)
    pto.tmuls(visible, visible, -1)
    pto.tadds(visible, visible, 1)


@pto.kernel
def snapshot_lines_mat(seen, flags, total):
    """The AIC's reads of total flag lines (the loop's flag[0]): loaded into L1 and stored to
    the snapshot seen, whose comparison the test does (the cube has no scalar reads here)."""
    lines = pto.alloc_tile((total + 15) // 16 * 16, 16, pto.int32, loc=pto.Mat, valid=(total, LINE))
    pto.tload(lines, flags)
    pto.pipe_barrier(pto.PIPE_ALL)
    pto.tstore(seen, lines)
    pto.pipe_barrier(pto.PIPE_ALL)


@pto.kernel(sync="manual")
def run_sync_all(out, flags):
    """syncall_kernel.cpp RunSyncAll_mix_aiv: flag, SYNCALL<AIVOnly>, check, out."""
    with pto.vector():
        idx = pto.get_block_id() * 2 + pto.get_subblock_id()
        store_line_vec(flags + idx * LINE, idx + 1)
        pto.syncall("aiv")
        visible = pto.alloc_tile(1, LINE, pto.int32)
        check_lines_vec(visible, flags, AIV, 1)
        pto.pipe_barrier(pto.PIPE_ALL)
        pto.tstore(out + idx * LINE, visible)
        pto.pipe_barrier(pto.PIPE_ALL)


@pto.kernel(sync="manual")
def run_sync_all_reads_first(out, flags):
    """run_sync_all with its SYNCALL moved after the reads."""
    with pto.vector():
        idx = pto.get_block_id() * 2 + pto.get_subblock_id()
        store_line_vec(flags + idx * LINE, idx + 1)
        visible = pto.alloc_tile(1, LINE, pto.int32)
        check_lines_vec(visible, flags, AIV, 1)
        pto.syncall("aiv")
        pto.tstore(out + idx * LINE, visible)
        pto.pipe_barrier(pto.PIPE_ALL)


@pto.kernel(sync="manual")
def run_hard_sync_all_aic(seen, flags):
    """syncall_aic_hard_kernel.cpp RunHardSyncAllAIC_2001 (__DAV_CUBE__): flag, SYNCALL<AICOnly>,
    the reads (snapshot to seen)."""
    with pto.cube():
        idx = pto.get_block_id()
        store_line_mat(flags + idx * LINE, idx + 1)
        pto.syncall("aic")
        snapshot_lines_mat(seen + idx * AIC * LINE, flags, AIC)


@pto.kernel(sync="manual")
def run_hard_sync_all_aic_reads_first(seen, flags):
    """run_hard_sync_all_aic with its SYNCALL moved after the reads: nothing orders them after the
    other AICs' flag stores."""
    with pto.cube():
        idx = pto.get_block_id()
        store_line_mat(flags + idx * LINE, idx + 1)
        snapshot_lines_mat(seen + idx * AIC * LINE, flags, AIC)
        pto.syncall("aic")


def sync_all_mix(ratio):
    """syncall_mix_1_2_kernel.cpp RunSyncAllMix12_1201 (ratio 2) and syncall_mix_1_1_kernel.cpp
    RunSyncAllMix11_1101 (ratio 1, __MIX_CORE_AIV_RATIO__ 1: @pto.kernel(aiv_ratio=1)), both
    RunMixSyncAllBody<false>: flag idx + 1, SYNCALL<Mix>, check x 1, SYNCALL<Mix>, flag (idx + 1)
    x 2, SYNCALL<Mix>, check x 2, out; aicBlocks x (1 + ratio) participants, an AIV's idx
    aicBlocks + block x ratio + subblock id."""
    total = AIC * (1 + ratio)

    @pto.kernel(sync="manual", aiv_ratio=ratio)
    def run_sync_all_mix(out, flags, seen):
        with pto.cube():
            idx = pto.get_block_id()
            store_line_mat(flags + idx * LINE, idx + 1)
            pto.syncall("mix")
            snapshot_lines_mat(seen + idx * 2 * total * LINE, flags, total)
            pto.syncall("mix")
            store_line_mat(flags + idx * LINE, (idx + 1) * 2)
            pto.syncall("mix")
            snapshot_lines_mat(seen + (idx * 2 + 1) * total * LINE, flags, total)
        with pto.vector():
            idx = AIC + pto.get_block_id() * ratio + pto.get_subblock_id()
            store_line_vec(flags + idx * LINE, idx + 1)
            pto.syncall("mix")
            first = pto.alloc_tile(1, LINE, pto.int32)
            check_lines_vec(first, flags, total, 1)
            pto.syncall("mix")
            store_line_vec(flags + idx * LINE, (idx + 1) * 2)
            pto.syncall("mix")
            second = pto.alloc_tile(1, LINE, pto.int32)
            check_lines_vec(second, flags, total, 2)
            pto.tand(first, first, second)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tstore(out + idx * LINE, first)
            pto.pipe_barrier(pto.PIPE_ALL)
    return run_sync_all_mix


IDLE = 2                        # kIdleCoreMark (syncall_soft_kernel.cpp, syncall_aic_kernel.cpp, main.cpp)


@pto.kernel
def soft_sync_all_body(out, flags, ws, idx, total):
    """syncall_soft_kernel.cpp SoftSyncAllBody: flag idx + 1, SYNCALL<Soft>(ws, total), check x 1,
    SYNCALL<Soft>, flag (idx + 1) x 2, SYNCALL<Soft>, check x 2, out = both checks."""
    store_line_vec(flags + idx * LINE, idx + 1)
    pto.syncall("aiv", workspace=ws, used_cores=total)
    first = pto.alloc_tile(1, LINE, pto.int32)
    check_lines_vec(first, flags, total, 1)
    pto.syncall("aiv", workspace=ws, used_cores=total)
    store_line_vec(flags + idx * LINE, (idx + 1) * 2)
    pto.syncall("aiv", workspace=ws, used_cores=total)
    second = pto.alloc_tile(1, LINE, pto.int32)
    check_lines_vec(second, flags, total, 2)
    pto.tand(first, first, second)
    pto.pipe_barrier(pto.PIPE_ALL)
    pto.tstore(out + idx * LINE, first)
    pto.pipe_barrier(pto.PIPE_ALL)


@pto.kernel(sync="manual")
def run_soft_sync_all(out, flags, ws):
    """syncall_soft_kernel.cpp RunSoftSyncAll: SoftSyncAllBody over every AIV (totalBlocks 48)."""
    with pto.vector():
        soft_sync_all_body(out, flags, ws, pto.get_block_id() * 2 + pto.get_subblock_id(), AIV)


@pto.kernel(sync="manual")
def run_soft_sync_all_partial(out, flags, ws):
    """syncall_soft_kernel.cpp RunSoftSyncAllPartial: blocks [0, 24) run SoftSyncAllBody with
    syncBlocks 24 (the used cores), the others store kIdleCoreMark and never touch the barrier."""
    with pto.vector():
        idx = pto.get_block_id() * 2 + pto.get_subblock_id()
        if idx >= AIV // 2:
            store_line_vec(out + idx * LINE, IDLE)
        else:
            soft_sync_all_body(out, flags, ws, idx, AIV // 2)


@pto.kernel
def soft_sync_all_aic_body(seen, flags, ws, idx, total):
    """syncall_aic_kernel.cpp SoftSyncAllAicBody: flag idx + 1, SYNCALL<Soft, AICOnly>(ws, total),
    the reads (snapshot to seen, compared by the test)."""
    store_line_mat(flags + idx * LINE, idx + 1)
    pto.syncall("aic", workspace=ws, used_cores=total)
    snapshot_lines_mat(seen + idx * total * LINE, flags, total)


@pto.kernel(sync="manual")
def run_soft_sync_all_aic(seen, flags, ws):
    """syncall_aic_kernel.cpp RunSoftSyncAllAIC (totalBlocks 24)."""
    with pto.cube():
        soft_sync_all_aic_body(seen, flags, ws, pto.get_block_id(), AIC)


@pto.kernel(sync="manual")
def run_soft_sync_all_aic_partial(out, seen, flags, ws):
    """syncall_aic_kernel.cpp RunSoftSyncAllAICPartial: AICs [0, 12) meet (syncBlocks 12), the
    others store kIdleCoreMark (StoreInt32LineL1) to their out line."""
    with pto.cube():
        idx = pto.get_block_id()
        if idx >= AIC // 2:
            store_line_mat(out + idx * LINE, IDLE)
        else:
            soft_sync_all_aic_body(seen, flags, ws, idx, AIC // 2)


@pto.kernel
def soft_mix_body_cube(seen, flags, ws, total):
    """RunMixSyncAllBody<true> on the AIC (idx its block): as sync_all_mix's cube section with
    SYNCALL<Soft, Mix>(ws, totalParticipants); the two reads are snapshots, two per AIC in seen."""
    idx = pto.get_block_id()
    store_line_mat(flags + idx * LINE, idx + 1)
    pto.syncall("mix", workspace=ws, used_cores=total)
    snapshot_lines_mat(seen + idx * 2 * total * LINE, flags, total)
    pto.syncall("mix", workspace=ws, used_cores=total)
    store_line_mat(flags + idx * LINE, (idx + 1) * 2)
    pto.syncall("mix", workspace=ws, used_cores=total)
    snapshot_lines_mat(seen + (idx * 2 + 1) * total * LINE, flags, total)


@pto.kernel
def soft_mix_body_vec(out, flags, ws, idx, total):
    """RunMixSyncAllBody<true> on an AIV of logical index idx: flag, SYNCALL<Soft, Mix>, check x 1,
    SYNCALL, flag x 2, SYNCALL, check x 2, out."""
    store_line_vec(flags + idx * LINE, idx + 1)
    pto.syncall("mix", workspace=ws, used_cores=total)
    first = pto.alloc_tile(1, LINE, pto.int32)
    check_lines_vec(first, flags, total, 1)
    pto.syncall("mix", workspace=ws, used_cores=total)
    store_line_vec(flags + idx * LINE, (idx + 1) * 2)
    pto.syncall("mix", workspace=ws, used_cores=total)
    second = pto.alloc_tile(1, LINE, pto.int32)
    check_lines_vec(second, flags, total, 2)
    pto.tand(first, first, second)
    pto.pipe_barrier(pto.PIPE_ALL)
    pto.tstore(out + idx * LINE, first)
    pto.pipe_barrier(pto.PIPE_ALL)


@pto.kernel(sync="manual")
def run_soft_sync_all_mix12(out, flags, seen, ws):
    """syncall_mix_1_2_kernel.cpp RunSoftSyncAllMix12_1202: RunMixSyncAllBody<true> on 24 AICs and
    48 AIVs (totalParticipants 72; an AIV's idx aicBlocks + block x 2 + subblock id)."""
    with pto.cube():
        soft_mix_body_cube(seen, flags, ws, MIX)
    with pto.vector():
        soft_mix_body_vec(out, flags, ws, AIC + pto.get_block_id() * 2 + pto.get_subblock_id(), MIX)


@pto.kernel(sync="manual", aiv_ratio=1)
def run_soft_sync_all_mix11(out, flags, seen, ws):
    """syncall_mix_1_1_soft_kernel.cpp RunSoftSyncAllMix11_1102_mix_aic / _mix_aiv: 24 AICs and 24
    AIVs (totalParticipants 48); the AIV side, a launch of 24 one-AIV blocks on a second stream
    (subblockdim 1: idx aicBlocks + block), is the AIV of each core of a 1:1 launch here."""
    with pto.cube():
        soft_mix_body_cube(seen, flags, ws, MIX11)
    with pto.vector():
        soft_mix_body_vec(out, flags, ws, AIC + pto.get_block_id(), MIX11)


@pto.kernel(sync="manual")
def run_soft_sync_all_aic_partial_reads_first(out, seen, flags, ws):
    """run_soft_sync_all_aic_partial with the participants' SYNCALL moved after their reads."""
    with pto.cube():
        idx = pto.get_block_id()
        if idx >= AIC // 2:
            store_line_mat(out + idx * LINE, IDLE)
        else:
            store_line_mat(flags + idx * LINE, idx + 1)
            snapshot_lines_mat(seen + idx * (AIC // 2) * LINE, flags, AIC // 2)
            pto.syncall("aic", workspace=ws, used_cores=AIC // 2)


def zeros(words):
    """A GM int32 tensor memset to 0, as main.cpp's aclrtMemcpy of the zeroed host buffers."""
    t = pto.alloc_tensor(words * 4, pto.int32)
    pto.memcpy_h2d(t, np.zeros(words, np.int32))
    return t


def read(t, words):
    a = np.empty(words, np.int32)
    pto.memcpy_d2h(a, t)
    return a


def run(kernel, grid, args, mode):
    """Run the case's kernel: the SimPy model under racecheck and synccheck, or functional."""
    if mode == "timing":
        profile = pto.profile(kernel, grid=grid, args=args, check=("sync", "race"))
        assert profile.total_cycles > 0
    else:
        pto.launch(kernel, grid=grid, args=args, mode="functional")
        pto.sync()


def scalar_check(seen, total, multiplier):
    """The cube's loop over its snapshot (total lines): 1 if flag(i)[0] == (i + 1) x multiplier
    for every i, else 0."""
    return int(np.array_equal(seen.reshape(total, LINE)[:, 0], (np.arange(total) + 1) * multiplier))


def test_the_counts_are_the_machines():
    """syncall_core_config.hpp's 910B1 defaults are pypto_sim's ascend910b: 24 AI cores of an
    AIC and two AIVs each (SYNCALL participants must equal the physical core count,
    gen_data.py's comment)."""
    assert pto.machine().name == "ascend910b" and pto.machine().cores == AIC == AIV // 2


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_case_aiv_only_all_blocks(mode):
    """SYNCALLTest.case_aiv_only_all_blocks: 48 AIVs; golden ones(48); out[i x 8]; ResultCmp 0."""
    out, flags = zeros(AIV * LINE), zeros(AIV * LINE)
    run(run_sync_all, (AIV // 2,), (out, flags), mode)
    golden = np.ones(AIV, np.int32)
    assert result_cmp(golden, read(out, AIV * LINE)[::LINE], 0.0)
    assert np.array_equal(read(flags, AIV * LINE)[::LINE], np.arange(1, AIV + 1))


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_case_hard_aic_only_all_blocks(mode):
    """SYNCALLTest.case_hard_aic_only_all_blocks: 24 AICs; golden ones(24); ResultCmp 0 of each
    AIC's allVisible (the scalar loop over what it read)."""
    flags, seen = zeros(AIC * LINE), zeros(AIC * AIC * LINE)
    run(run_hard_sync_all_aic, (AIC,), (seen, flags), mode)
    snap = read(seen, AIC * AIC * LINE).reshape(AIC, AIC * LINE)
    out = np.array([scalar_check(snap[i], AIC, 1) for i in range(AIC)])
    assert result_cmp(np.ones(AIC, np.int32), out, 0.0)
    assert np.array_equal(read(flags, AIC * LINE)[::LINE], np.arange(1, AIC + 1))


@pytest.mark.parametrize("mode", ["timing", "functional"])
@pytest.mark.parametrize("ratio", [2, 1])
def test_case_mix_all_blocks(mode, ratio):
    """SYNCALLTest.case_mix_1_2_all_blocks: 24 AICs + 48 AIVs = 72 participants (aicBlocks x 3), and
    case_mix_1_1_all_blocks: 24 AICs + 24 AIVs = 48 (aicBlocks x 2); golden ones(participants);
    out[i x 8] (the AICs' from their snapshots); ResultCmp 0. The flags end as (i + 1) x 2."""
    total = AIC * (1 + ratio)
    out, flags, seen = zeros(total * LINE), zeros(total * LINE), zeros(AIC * 2 * total * LINE)
    run(sync_all_mix(ratio), (AIC,), (out, flags, seen), mode)
    got = read(out, total * LINE)[::LINE]
    snap = read(seen, AIC * 2 * total * LINE).reshape(AIC, 2, total * LINE)
    got[:AIC] = [scalar_check(snap[i, 0], total, 1) & scalar_check(snap[i, 1], total, 2) for i in range(AIC)]
    assert result_cmp(np.ones(total, np.int32), got, 0.0)
    assert np.array_equal(read(flags, total * LINE)[::LINE], (np.arange(total) + 1) * 2)


def aic_checks(seen, blocks, total):
    """The scalar loop of each of blocks AICs over its snapshot of total lines."""
    snap = read(seen, blocks * total * LINE).reshape(blocks, total * LINE)
    return [scalar_check(snap[i], total, 1) for i in range(blocks)]


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_case_soft_aiv_only_all_blocks(mode):
    """SYNCALLTest.case_soft_aiv_only_all_blocks: 48 AIVs, three soft barriers; golden ones(48);
    out[i x 8]; ResultCmp 0. main.cpp does not read the workspace (zeroed, blockCount lines): its
    counter ends at 3 barriers x 48 arrivals (syncall_soft.hpp adds 1 an arrival, never resets)."""
    out, flags, ws = zeros(AIV * LINE), zeros(AIV * LINE), zeros(AIV * LINE)
    run(run_soft_sync_all, (AIV // 2,), (out, flags, ws), mode)
    assert result_cmp(np.ones(AIV, np.int32), read(out, AIV * LINE)[::LINE], 0.0)
    assert np.array_equal(read(flags, AIV * LINE)[::LINE], (np.arange(AIV) + 1) * 2)
    assert read(ws, AIV * LINE)[0] == 3 * AIV


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_case_soft_aiv_only_partial_blocks(mode):
    """SYNCALLTest.case_soft_aiv_only_partial_blocks (RunSoftPartialCase): 48 AIVs launched, the
    first 24 meet (usedCores 24); golden 1 for i < 24, kIdleCoreMark (2) for the rest; ResultCmp 0.
    Only the participants' flag lines are written; the counter ends at 3 x 24."""
    sync = AIV // 2
    out, flags, ws = zeros(AIV * LINE), zeros(AIV * LINE), zeros(AIV * LINE)
    run(run_soft_sync_all_partial, (AIV // 2,), (out, flags, ws), mode)
    golden = np.where(np.arange(AIV) < sync, 1, IDLE).astype(np.int32)
    assert result_cmp(golden, read(out, AIV * LINE)[::LINE], 0.0)
    assert np.array_equal(read(flags, AIV * LINE)[::LINE], np.r_[(np.arange(sync) + 1) * 2, np.zeros(AIV - sync)])
    assert read(ws, AIV * LINE)[0] == 3 * sync


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_case_soft_aic_only_all_blocks(mode):
    """SYNCALLTest.case_soft_aic_only_all_blocks: 24 AICs, one soft barrier; golden ones(24);
    ResultCmp 0 of each AIC's allVisible (the scalar loop over what it read); the counter ends at
    1 x 24."""
    flags, seen, ws = zeros(AIC * LINE), zeros(AIC * AIC * LINE), zeros(AIC * LINE)
    run(run_soft_sync_all_aic, (AIC,), (seen, flags, ws), mode)
    assert result_cmp(np.ones(AIC, np.int32), aic_checks(seen, AIC, AIC), 0.0)
    assert np.array_equal(read(flags, AIC * LINE)[::LINE], np.arange(1, AIC + 1))
    assert read(ws, AIC * LINE)[0] == AIC


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_case_soft_aic_only_partial_blocks(mode):
    """SYNCALLTest.case_soft_aic_only_partial_blocks (RunSoftPartialCase): 24 AICs launched, the
    first 12 meet; golden 1 for i < 12 (their out from their snapshots), kIdleCoreMark for the rest
    (the idle AICs' own stores; the participants' out lines stay as zeroed); the counter ends at 12."""
    sync = AIC // 2
    out, flags, seen, ws = zeros(AIC * LINE), zeros(AIC * LINE), zeros(sync * sync * LINE), zeros(AIC * LINE)
    run(run_soft_sync_all_aic_partial, (AIC,), (out, seen, flags, ws), mode)
    got = read(out, AIC * LINE)[::LINE]
    assert not got[:sync].any()
    got[:sync] = aic_checks(seen, sync, sync)
    golden = np.where(np.arange(AIC) < sync, 1, IDLE).astype(np.int32)
    assert result_cmp(golden, got, 0.0)
    assert np.array_equal(read(flags, AIC * LINE)[::LINE], np.r_[np.arange(1, sync + 1), np.zeros(AIC - sync)])
    assert read(ws, AIC * LINE)[0] == sync


def soft_mix_case(kernel, total, mode):
    """RunMixCase<true> of total participants (the AICs first): golden ones(total); out[i x 8], the
    AICs' from their two snapshots; ResultCmp 0; flags end as (i + 1) x 2, the counter at 3 x total
    (main.cpp does not read it: 1 an arrival, syncall_soft.hpp)."""
    out, flags, seen, ws = zeros(total * LINE), zeros(total * LINE), zeros(AIC * 2 * total * LINE), zeros(total * LINE)
    run(kernel, (AIC,), (out, flags, seen, ws), mode)
    got = read(out, total * LINE)[::LINE]
    snap = read(seen, AIC * 2 * total * LINE).reshape(AIC, 2, total * LINE)
    got[:AIC] = [scalar_check(snap[i, 0], total, 1) & scalar_check(snap[i, 1], total, 2) for i in range(AIC)]
    assert result_cmp(np.ones(total, np.int32), got, 0.0)
    assert np.array_equal(read(flags, total * LINE)[::LINE], (np.arange(total) + 1) * 2)
    assert read(ws, total * LINE)[0] == 3 * total


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_case_soft_mix_1_2_all_blocks(mode):
    """SYNCALLTest.case_soft_mix_1_2_all_blocks: 24 AICs + 48 AIVs meet three times on the counter
    (totalParticipants 72)."""
    soft_mix_case(run_soft_sync_all_mix12, MIX, mode)


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_case_soft_mix_1_1_all_blocks(mode):
    """SYNCALLTest.case_soft_mix_1_1_all_blocks: 24 AICs + 24 AIVs (totalParticipants 48)."""
    soft_mix_case(run_soft_sync_all_mix11, MIX11, mode)


def test_the_soft_reads_race_without_a_barrier_between():
    """The soft AIC partial case with the SYNCALL after the reads: racecheck reports an AIC's read
    of a flag line another AIC stores, unordered; in functional mode the participants read before
    the later ones have written and ResultCmp fails (the idle AICs' marks still right)."""
    sync = AIC // 2

    def args():
        return zeros(AIC * LINE), zeros(sync * sync * LINE), zeros(AIC * LINE), zeros(AIC * LINE)
    with pytest.raises(pto.RaceError, match="race on GM tensor 'flags.* between AI cores: TLOAD .* and TSTORE "):
        pto.profile(run_soft_sync_all_aic_partial_reads_first, grid=(AIC,), args=args(), check="race")
    out, seen, flags, ws = args()
    pto.launch(run_soft_sync_all_aic_partial_reads_first, grid=(AIC,), args=(out, seen, flags, ws), mode="functional")
    pto.sync()
    got = read(out, AIC * LINE)[::LINE]
    got[:sync] = aic_checks(seen, sync, sync)
    assert not result_cmp(np.where(np.arange(AIC) < sync, 1, IDLE).astype(np.int32), got, 0.0)
    assert np.array_equal(got[sync:], np.full(AIC - sync, IDLE))

def test_the_reads_race_without_a_barrier_between():
    """The AIC case with SYNCALL after the reads: racecheck reports a flag line's store by one AI
    core and its load by another, unordered, and its hint names the SYNCALL that would order them
    (the message said "nothing orders two AI cores" before pto.syncall did). Without racecheck the
    values show it too: in functional mode each AIC reads before the later AICs have written, and
    ResultCmp fails."""
    flags, seen = zeros(AIC * LINE), zeros(AIC * AIC * LINE)
    with pytest.raises(pto.RaceError, match="race on GM tensor 'flags.* between AI cores: TLOAD .* and TSTORE "
                                            ".*; no pto.syncall that both units take part in") as info:
        pto.profile(run_hard_sync_all_aic_reads_first, grid=(AIC,), args=(seen, flags), check="race")
    assert info.value.hint.startswith("put a pto.syncall('aic') between the two accesses")
    flags, seen = zeros(AIC * LINE), zeros(AIC * AIC * LINE)
    pto.launch(run_hard_sync_all_aic_reads_first, grid=(AIC,), args=(seen, flags), mode="functional")
    pto.sync()
    snap = read(seen, AIC * AIC * LINE).reshape(AIC, AIC * LINE)
    assert not result_cmp(np.ones(AIC, np.int32), [scalar_check(snap[i], AIC, 1) for i in range(AIC)], 0.0)


def test_the_aiv_reads_race_and_the_hint_names_syncall():
    """The AIV case with SYNCALL after the reads: the first race racecheck meets may be between
    the two AIVs of one core or between cores; either hint names pto.syncall('aiv'), which orders
    both (before the fix, the AIV pair's hint offered only a relay of cross-core flags)."""
    out, flags = zeros(AIV * LINE), zeros(AIV * LINE)
    with pytest.raises(pto.RaceError) as info:
        pto.profile(run_sync_all_reads_first, grid=(AIV // 2,), args=(out, flags), check="race")
    assert "pto.syncall('aiv')" in info.value.hint


def test_the_cce_launch_count_of_48_aiv_blocks_is_refused_with_the_aiv_count():
    """LaunchSyncAll's <<<48>>> of one AIV a block, written as grid=(48,), would hold 48 AI cores:
    a LaunchError before anything runs, whose hint says grid=(24,) runs the 48 AIVs."""
    out, flags = zeros(2 * AIV * LINE), zeros(2 * AIV * LINE)
    with pytest.raises(pto.LaunchError, match="launched on 48 blocks and machine 'ascend910b' has 24 AI cores") as info:
        pto.launch(run_sync_all, grid=(AIV,), args=(out, flags), mode="functional")
        pto.sync()
    assert info.value.hint.endswith("here with 2 AIVs running: grid=(24,) runs 48 AIVs, as a CCE launch of 48 AIV "
                                    "blocks does")

