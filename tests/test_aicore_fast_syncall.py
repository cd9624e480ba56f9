"""pto.syncall on the AI core's compiled event loop (timing/aicore_fast.py) against the SimPy model,
its specification (timing/aicore.py syncall, timing/aicore_syncall.py; the rule: pto-isa 3186c381
include/pto/npu/a2a3/SyncAll.hpp, isa/syncall_modes.py): the same records (every field of every
row), cycles, HBM words, initcheck map and SYNCALL rounds (each round's release and last arrival,
which the bubbles report names), and the same error when a participant never arrives. The
kernels: every kind ('aiv', 'aic', 'mix', and an 'aic' and an 'aiv' barrier side by side, whose
units wait on the launch's one SYNCALL event), on 3 and on 24 cores (the whole ascend910b), over
several rounds in a loop whose slow unit (a 64 KiB TLOAD before the barrier) moves from block to
block, with the kernel's own cross-core flags between the rounds."""
import numpy as np
import pytest

import pypto_sim as pto
from engine_compare import assert_engines_agree, simulate_engine
from pypto_sim.runtime.device import DEFAULT_BLOCK

LINE = 8                 # int32 elements per 32-byte line


def rounds_kernel(core_type):
    """n rounds of: block slow + i's slow unit loads a tile first (its AIV0 a 64 KiB float32 one,
    which it waits for at the barrier's pipe_barrier; with an 'aic' barrier its AIC too, a 32 KiB
    float16 one, which holds its scalar unit by a wait_flag on PIPE_S, so that it reaches the
    barrier late), every participant calls pto.syncall, then the AIC and the AIVs hand a
    cross-core flag back and forth (flag 1 AIC -> AIVs, flag 2 AIVs -> AIC: none of the barrier's
    11 ... 14) and each AIV stores its line of round i. core_type 'aic+aiv': pto.syncall('aic') in
    the cube code and pto.syncall('aiv') in the vector code, two barriers in flight at once: the
    AIVs' round completes while AICs wait for theirs (the launch's one SYNCALL event wakes them,
    and they wait on)."""
    cube_kind = {"aic": "aic", "mix": "mix", "aic+aiv": "aic"}.get(core_type, "")
    vector_kind = {"aiv": "aiv", "mix": "mix", "aic+aiv": "aiv"}.get(core_type, "")
    cube_barrier, cube_slow, vector_barrier = cube_kind != "", cube_kind == "aic", vector_kind != ""

    @pto.kernel(sync="manual")
    def rounds(out, big, halves, n, slow):
        with pto.cube():
            mat = pto.alloc_tile(128, 128, pto.float16, loc=pto.Mat)
            for i in range(n):
                if cube_barrier:
                    if cube_slow:
                        if pto.get_block_id() == slow + i:
                            pto.tload(mat, halves)
                            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
                            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
                    pto.syncall(cube_kind)
                pto.cross_core_set_flag(1)
                pto.cross_core_wait_flag(2)
        with pto.vector():
            idx = pto.get_block_id() * 2 + pto.get_subblock_id()
            load = pto.alloc_tile(128, 128, pto.float32)
            line = pto.alloc_tile(1, LINE, pto.int32)
            for i in range(n):
                if vector_barrier:
                    if idx == 2 * (slow + i):
                        pto.tload(load, big)
                    pto.syncall(vector_kind)
                pto.cross_core_wait_flag(1)
                pto.texpands(line, idx + 100 * i)
                pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
                pto.tstore(out + (i * pto.get_grid_dim() * 2 + idx) * LINE, line)
                pto.cross_core_set_flag(2, pto.PIPE_MTE3)
    return rounds


def run_both(core_type, blocks, n, slow):
    """Both engines on the rounds kernel (they must agree); the SimPy run's results."""
    out = pto.to_device(np.zeros(n * 2 * blocks * LINE, np.int32))
    big = pto.to_device(np.zeros(128 * 128, np.float32))
    halves = pto.to_device(np.zeros(128 * 128, np.float16))
    return assert_engines_agree(rounds_kernel(core_type), (out, big, halves, n, slow), (blocks, 1, 1),
                                DEFAULT_BLOCK)


@pytest.mark.parametrize("core_type", ["aiv", "aic", "mix", "aic+aiv"])
@pytest.mark.parametrize("blocks", [3, 24])
def test_rounds_of_every_kind_give_the_simpy_models_records(core_type, blocks):
    """Three rounds, the slow units in blocks 0, 1, 2: identical records, cycles, words and rounds.
    Each kind completes a round per iteration; its last arrival is the slow unit of the kind
    (AIV0 for 'aiv' and 'mix', the AIC for 'aic') once its pipes drained (everything it issued
    before completed), and its release that arrival plus the kind's hops x (CROSS_CORE_SET_FLAG +
    CROSS_CORE_WAIT_FLAG latency) = 1 x 2 ('aiv', 'aic') or 3 x 2 ('mix') on ascend910b."""
    slow = run_both(core_type, blocks, 3, 0)
    releases, last = slow["syncall"]
    kinds = {"aiv": [0], "aic": [1], "mix": [2], "aic+aiv": [0, 1]}[core_type]
    rec = slow["records"]
    for kind in range(3):
        assert len(last[kind]) == (3 if kind in kinds else 0)
        unit = 0 if kind == 1 else 1
        for i, ((block, who, _pc), cycle) in enumerate(last[kind]):
            assert (block, who) == (i, unit)
            assert releases[kind][i] == cycle + (3 if kind == 2 else 1) * 2
            # its arrival: its pipes drained, everything it issued before the SYNCALL completed
            before = (rec.block == i) & (rec.warp == unit) & (rec.issue < releases[kind][i])
            assert cycle == rec.complete[before].max()


def test_more_rounds_than_the_log_first_holds():
    """60 rounds on 3 cores: the compiled loop's log of the rounds' last arrivals starts at
    4 x 9 + 8 = 44 rows (timing/aicore_fast.py) and grows between calls; all 60 rounds agree."""
    slow = run_both("aiv", 3, 60, -1)
    assert len(slow["syncall"][1][0]) == 60


def vector_rounds_kernel(skipper_rounds, kind):
    """Each AIV calls pto.syncall(kind) twice, but AIV1 of block 1 only skipper_rounds times; for
    'mix' each AIC calls it twice too (for 'aiv' the AIC has no program and takes no part)."""
    mix = kind == "mix"

    @pto.kernel(sync="manual")
    def vector_rounds(out):
        with pto.cube():
            if mix:
                for _ in range(2):
                    pto.syncall("mix")
        with pto.vector():
            line = pto.alloc_tile(1, LINE, pto.int32)
            idx = pto.get_block_id() * 2 + pto.get_subblock_id()
            calls = 2
            if idx == 3:
                calls = skipper_rounds
            for i in range(calls):
                pto.syncall(kind)
                pto.tstore(out + (i * 2 * pto.get_grid_dim() + idx) * LINE, line)
    return vector_rounds


@pytest.mark.parametrize("skipper_rounds", [2, 1, 0])
@pytest.mark.parametrize("kind", ["aiv", "mix"])
def test_a_participant_that_never_arrives_is_the_same_deadlock(skipper_rounds, kind):
    """Block 1's AIV1 arrives at the second round (skipper_rounds 2), not at it (1: the other AIVs
    wait at their second pto.syncall) or at neither (0: at their first): no deadlock, or the same
    DeadlockError, word for word, from the compiled loop as from the SimPy model (which names every
    unit left waiting at its SYNCALL)."""
    out = pto.to_device(np.zeros(4 * 2 * LINE, np.int32))
    slow = assert_engines_agree(vector_rounds_kernel(skipper_rounds, kind), (out,), (2, 1, 1), DEFAULT_BLOCK)
    if skipper_rounds == 2:
        assert slow["error"] is None and len(slow["syncall"][1][0 if kind == "aiv" else 2]) == 2
    else:
        assert isinstance(slow["error"], pto.DeadlockError) and "pto.syncall" in str(slow["error"])


def test_the_fast_engine_runs_syncall_kernels():
    """PYPTO_TIMING_ENGINE=fast takes a SYNCALL kernel (it used to refuse it for the SimPy model)."""
    out = pto.to_device(np.zeros(4 * 2 * LINE, np.int32))
    fast = simulate_engine(vector_rounds_kernel(2, "aiv"), (out,), (2, 1, 1), DEFAULT_BLOCK, "fast")
    assert fast["error"] is None
