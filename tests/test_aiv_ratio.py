"""@pto.kernel(aiv_ratio=1): a 1:1 mix kernel (CANN's KERNEL_TYPE_MIX_AIC_1_1, pto-isa's
__MIX_CORE_AIV_RATIO__ 1), whose vector sections run on AIV0 alone: the AIC's cross-core flags
pair with AIV0 only (FFTS mode 2 syncs the AIC with the AIVs the launch runs; ir/program.py
cross_partners, exec/compiled/aicore_sync.py cross_pairs), and a 'mix' SYNCALL's participants
are the AIC and AIV0 of each core. Values, both engines' records, and the errors."""
import numpy as np
import pytest

import pypto_sim as pto
from engine_compare import assert_engines_agree
from pypto_sim.runtime.device import DEFAULT_BLOCK

ROWS, COLS = 16, 64


def handoff_kernel(ratio):
    """The AIC loads x into L1 and stores it to a GM workspace, signals its AIVs (flag 0); each AIV
    adds 1 to the block and stores it to out (its sub-block's half), then signals back (flag 1),
    which the AIC waits for before its own end."""

    @pto.kernel(sync="manual", aiv_ratio=ratio)
    def handoff(x, work, out):
        with pto.cube():
            m = pto.alloc_tile(ROWS, COLS, pto.float32, loc=pto.Mat)
            pto.tload(m, x + pto.get_block_id() * ROWS * COLS)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tstore(work + pto.get_block_id() * ROWS * COLS, m)
            pto.cross_core_set_flag(0)
            pto.cross_core_wait_flag(1)
        with pto.vector():
            v = pto.alloc_tile(ROWS, COLS, pto.float32)
            pto.cross_core_wait_flag(0)
            pto.tload(v, work + pto.get_block_id() * ROWS * COLS)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tadds(v, v, 1.0 + pto.get_subblock_id())
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tstore(out + (pto.get_block_id() * 2 + pto.get_subblock_id()) * ROWS * COLS, v)
            pto.cross_core_set_flag(1)
    return handoff


def tensors(blocks):
    x = np.random.default_rng(1).random(blocks * ROWS * COLS, dtype=np.float32)
    return x, pto.to_device(x), pto.to_device(np.zeros_like(x)), pto.to_device(np.zeros(2 * x.size, np.float32))


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_one_to_one_kernel_pairs_the_aic_with_aiv0_alone(mode):
    """aiv_ratio=1: only AIV0 runs, so the AIC's flag 0 goes to it alone and its wait for flag 1
    takes AIV0's signal only: out holds x + 1 in AIV0's rows, AIV1's stay 0; synccheck and racecheck
    find every signal taken and nothing unordered. The same kernel with the default ratio, 2, adds
    2 in AIV1's rows too."""
    for ratio in (1, 2):
        x, d_x, work, out = tensors(3)
        kernel = handoff_kernel(ratio)
        if mode == "functional":
            pto.launch(kernel, grid=(3,), args=(d_x, work, out), mode="functional")
            pto.sync()
        else:
            pto.profile(kernel, grid=(3,), args=(d_x, work, out), check=("sync", "race"))
        got = np.empty(2 * x.size, np.float32)
        pto.memcpy_d2h(got, out)
        got = got.reshape(3, 2, ROWS * COLS)
        np.testing.assert_array_equal(got[:, 0], x.reshape(3, -1) + 1)
        np.testing.assert_array_equal(got[:, 1], x.reshape(3, -1) + 2 if ratio == 2 else 0)


@pytest.mark.parametrize("ratio", [1, 2])
def test_both_engines_agree_on_a_one_to_one_kernel(ratio):
    """The compiled loop pairs the flags as the SimPy model does (acfg AK_AIVS): same records,
    cycles and values."""
    _, d_x, work, out = tensors(3)
    assert_engines_agree(handoff_kernel(ratio), (d_x, work, out), (3, 1, 1), DEFAULT_BLOCK)


def mix_barrier_kernel():
    """A 1:1 kernel whose AIC and AIV0 meet at pto.syncall('mix'): the AIC's value in its line is
    read by AIV0 of the next core after the barrier."""

    @pto.kernel(sync="manual", aiv_ratio=1)
    def mix(lines, out):
        with pto.cube():
            mine = pto.alloc_tile(16, 8, pto.int32, loc=pto.Mat, valid=(1, 8))
            pto.texpands(mine, 100 + pto.get_block_id())
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tstore(lines + pto.get_block_id() * 8, mine)
            pto.syncall("mix")
        with pto.vector():
            seen = pto.alloc_tile(1, 8, pto.int32)
            pto.syncall("mix")
            nxt = (pto.get_block_id() + 1) % pto.get_grid_dim()
            pto.tload(seen, lines + nxt * 8)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tstore(out + pto.get_block_id() * 8, seen)
    return mix


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_mix_barrier_of_a_one_to_one_kernel_holds_the_aic_and_aiv0(mode):
    """Participants of 'mix' in a 1:1 launch of 4 cores: 4 AICs + 4 AIV0s = 8 (pto-isa's
    SYNCALL_GET_MIX_PARTICIPANT_COUNT: aicBlocks x (1 + ratio)); every AIV0 reads 100 + the next
    block, race-free."""
    lines, out = pto.to_device(np.zeros(32, np.int32)), pto.to_device(np.zeros(32, np.int32))
    if mode == "functional":
        pto.launch(mix_barrier_kernel(), grid=(4,), args=(lines, out), mode="functional")
        pto.sync()
    else:
        prof = pto.profile(mix_barrier_kernel(), grid=(4,), args=(lines, out), check=("sync", "race"))
        names = np.asarray(prof.pc_name)[prof.records.pc]
        assert (names == "SYNCALL").sum() == 8
    got = np.empty(32, np.int32)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got.reshape(4, 8)[:, 0], 100 + (np.arange(4) + 1) % 4)


def test_an_aiv_ratio_other_than_one_or_two_is_refused():
    """A2/A3 pairs an AIC with one or two AIVs."""
    with pytest.raises(pto.CompileError, match=r"aiv_ratio=3\): an AI core runs its vector code on 2 AIVs"):
        pto.kernel(aiv_ratio=3)(lambda x: None)
