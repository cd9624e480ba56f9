"""pto-isa's ON-DEVICE A2/A3 st cases of SYNCALL, hard mode (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/syncall at 3186c381: main.cpp, gen_data.py, syncall_kernel.cpp,
syncall_aic_hard_kernel.cpp, syncall_mix_1_2_kernel.cpp, syncall_mix_common.hpp,
syncall_core_config.hpp), with pto.syncall(core_type) for SYNCALL<SyncCoreType> (SyncAll.hpp).

Every participant writes its flag line (idx + 1 at flags + idx x 8 int32: one 32-byte line
each), SYNCALL, then reads every participant's line and writes out[idx] = 1 if each holds its
writer's value (allVisible), else 0. main.cpp compares ResultCmp(golden, out[i x 8], 0) with
golden all 1 (gen_data.py: np.ones of the participant count). The launch counts are
syncall_core_config.hpp's 910B1 defaults, AIC 24 / AIV 48, which are pypto_sim's ascend910b
(24 AI cores of two AIVs each). The sources' run-time totalBlocks / aicBlocks / totalParticipants
are module constants here (AIV, AIC, MIX): they size the check's tiles, which must be compile-time
(pypto_sim specialises a kernel on an argument that sizes a tile in its own body, not in an inlined
helper). Ported cases, each at the full counts both with pto.profile(check=("sync", "race")) (the
SimPy model, under synccheck and racecheck) and with pto.launch(mode="functional"); the module
runs in a few seconds once numba's cache is warm:

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
  subblock id.

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

Not ported:
- SYNCALLTest.case_mix_1_1_all_blocks (syncall_mix_1_1_kernel.cpp: a mix launch of one AIC and
  ONE AIV per core, register-ELF with __MIX_CORE_AIV_RATIO__ 1): pypto_sim cannot express a
  kernel whose cube code runs with only AIV0: a `with pto.vector():` section runs on both AIVs,
  and the AIV0-only form ('vector0') is only a kernel without sections, which has no cube code
  (frontend/aicore_units.py). An AIV1 that runs a program is one more participant of a mix
  SYNCALL, so the 1:1 participant count (48) cannot be made.
- The soft-mode cases (SyncAllMode::Soft, a GM workspace counter polled by the scalar unit:
  case_soft_aiv_only_all_blocks, case_soft_aiv_only_partial_blocks, case_soft_aic_only_all_blocks,
  case_soft_aic_only_partial_blocks, case_soft_mix_1_1_all_blocks, case_soft_mix_1_2_all_blocks;
  syncall_soft_kernel.cpp, syncall_aic_kernel.cpp, syncall_mix_1_1_soft_kernel.cpp,
  RunSoftSyncAllMix12_1202): pypto_sim builds hard mode only: pto.syncall takes core_type and no
  workspace (isa/35_aicore.toml, frontend/syncall_builtins.py), and the units have no scalar GM
  loads to poll a counter with.

That the cases can fail: test_the_reads_race_without_a_barrier_between moves the AIC kernel's
SYNCALL after its reads: racecheck reports the other AICs' flag stores as a race between AI cores,
and the functional run's comparison fails; test_the_aiv_reads_race_and_the_hint_names_syncall
does the same to the AIV kernel.
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import result_cmp

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/syncall at 3186c381"
AIC, AIV = 24, 48               # syncall_core_config.hpp CoreConfig{24, 48}: 910B1
MIX = AIC * 3                   # LaunchSyncAllMix12's totalParticipants: 1 cube + 2 vectors per cube
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


@pto.kernel(sync="manual")
def run_sync_all_mix12(out, flags, seen):
    """syncall_mix_1_2_kernel.cpp RunSyncAllMix12_1201 = RunMixSyncAllBody<false>: flag idx + 1,
    SYNCALL<Mix>, check x 1, SYNCALL<Mix>, flag (idx + 1) x 2, SYNCALL<Mix>, check x 2, out."""
    with pto.cube():
        idx = pto.get_block_id()
        store_line_mat(flags + idx * LINE, idx + 1)
        pto.syncall("mix")
        snapshot_lines_mat(seen + idx * 2 * MIX * LINE, flags, MIX)
        pto.syncall("mix")
        store_line_mat(flags + idx * LINE, (idx + 1) * 2)
        pto.syncall("mix")
        snapshot_lines_mat(seen + (idx * 2 + 1) * MIX * LINE, flags, MIX)
    with pto.vector():
        idx = AIC + pto.get_block_id() * 2 + pto.get_subblock_id()
        store_line_vec(flags + idx * LINE, idx + 1)
        pto.syncall("mix")
        first = pto.alloc_tile(1, LINE, pto.int32)
        check_lines_vec(first, flags, MIX, 1)
        pto.syncall("mix")
        store_line_vec(flags + idx * LINE, (idx + 1) * 2)
        pto.syncall("mix")
        second = pto.alloc_tile(1, LINE, pto.int32)
        check_lines_vec(second, flags, MIX, 2)
        pto.tand(first, first, second)
        pto.pipe_barrier(pto.PIPE_ALL)
        pto.tstore(out + idx * LINE, first)
        pto.pipe_barrier(pto.PIPE_ALL)


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
def test_case_mix_1_2_all_blocks(mode):
    """SYNCALLTest.case_mix_1_2_all_blocks: 24 AICs + 48 AIVs = 72 participants (aicBlocks x 3);
    golden ones(72); out[i x 8] (the AICs' from their snapshots); ResultCmp 0. The flags end as
    (i + 1) x 2."""
    out, flags, seen = zeros(MIX * LINE), zeros(MIX * LINE), zeros(AIC * 2 * MIX * LINE)
    run(run_sync_all_mix12, (AIC,), (out, flags, seen), mode)
    got = read(out, MIX * LINE)[::LINE]
    snap = read(seen, AIC * 2 * MIX * LINE).reshape(AIC, 2, MIX * LINE)
    got[:AIC] = [scalar_check(snap[i, 0], MIX, 1) & scalar_check(snap[i, 1], MIX, 2) for i in range(AIC)]
    assert result_cmp(np.ones(MIX, np.int32), got, 0.0)
    assert np.array_equal(read(flags, MIX * LINE)[::LINE], (np.arange(MIX) + 1) * 2)


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
