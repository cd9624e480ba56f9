"""The article's third pitfall: barrier() syncs one warp, barrier_block() the whole block."""
import numpy as np

import pypto_sim as pto

from simt_kernels import share_block_barrier, share_warp_barrier


def _run(kernel):
    src = np.arange(1, 129, dtype=np.float32)
    d_src = pto.alloc_tensor(src.nbytes)
    d_out = pto.alloc_tensor(256 * 4)
    pto.memcpy_h2d(d_src, src)
    prof = pto.profile(kernel, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_out))
    out = np.empty(256, np.float32)
    pto.memcpy_d2h(out, d_out)
    return prof, np.concatenate([src, src]), out


def test_warp_barrier_lets_other_warps_read_stale_data():
    """Warps 4-7 (lanes 128-255) store nothing, pass their own warp barrier at once and read the
    buffer while warps 0-3 are still waiting for HBM: they see the zero-filled buffer."""
    _, expected, out = _run(share_warp_barrier)
    assert np.array_equal(out[:128], expected[:128])      # each warp reads what it wrote itself
    assert np.all(out[128:] == 0.0)                        # stale: written later by other warps


def test_block_barrier_makes_every_value_right():
    """barrier_block() waits for all 8 warps and their stores: every lane reads the right value,
    and warps 4-7 wait at the barrier for the HBM loads of warps 0-3."""
    prof, expected, out = _run(share_block_barrier)
    assert np.array_equal(out, expected)
    waits = [e for e in prof.timeline if e.inst == "BARRIER_BLOCK" and e.warp >= 4]
    last_load = max(e.end for e in prof.timeline if e.inst == "LOAD")
    assert waits and all(e.start < last_load < e.end for e in waits)


def test_block_barrier_inside_a_branch_is_a_deadlock():
    """barrier_block() inside `if lid < 128`: warps 4-7 never arrive (they finish), so warps 0-3
    wait forever. The simulator says so instead of hanging, naming the warps and the line."""
    @pto.kernel
    def half_barrier(out):
        lid = pto.get_local_id()
        if lid < 128:
            pto.barrier_block()
        pto.store(out + lid, 1.0)

    d_out = pto.alloc_tensor(256 * 4)
    try:
        pto.profile(half_barrier, grid=(1, 1, 1), block=(256, 1, 1), args=(d_out,))
    except pto.DeadlockError as err:
        text = str(err)
        assert "half_barrier" in text and f":{err.line}" in text
        assert "block 0 warp 0" in text and "block 0 warp 3" in text and "warp 4" not in text
        assert "barrier_block()" in text
    else:
        raise AssertionError("expected DeadlockError")


def test_deadlock_when_warps_need_different_numbers_of_barriers():
    """Block barriers are counted, not matched by line (as bar.sync 0 on a GPU): warps 4-7 pass
    two barriers, warps 0-3 one; the first completes with all 8 warps, the second never can."""
    @pto.kernel
    def split_barriers(out):
        lid = pto.get_local_id()
        if lid < 128:
            pto.barrier_block()
        else:
            pto.barrier_block()
            pto.barrier_block()
        pto.store(out + lid, 1.0)

    d_out = pto.alloc_tensor(256 * 4)
    try:
        pto.profile(split_barriers, grid=(1, 1, 1), block=(256, 1, 1), args=(d_out,))
    except pto.DeadlockError as err:
        assert "warp 4" in str(err) and "warp 0 " not in str(err)
    else:
        raise AssertionError("expected DeadlockError")
