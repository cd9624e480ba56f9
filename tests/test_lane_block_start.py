"""A block that waits for a free core starts with its warps as fresh as the first blocks' were:
the wait is the launch's (the core was busy), not a stall of the block's first instruction.

The kernel copies one float32 a lane (GLOBAL_ID, LOAD, STORE) at 256 lanes a block, on tests/machines/simple.toml: 2 cores of 8 warp slots, so a block of 8 warps fills a
core and block 2 of a grid of 3 waits for a core to free.
"""
import numpy as np

import pypto_sim as pto

from engine_compare import assert_engines_agree


@pto.kernel
def copy(a, o):
    i = pto.get_global_id()
    x = pto.load(a + i)
    pto.store(o + i, x)


def _first_instructions(prof, block):
    """(warp, issue cycle, stall cycles, stall cause) of each warp's first instruction."""
    firsts = {}
    for e in prof.timeline:
        if e.block == block and (e.warp not in firsts or e.start < firsts[e.warp].start):
            firsts[e.warp] = e
    return [(w, e.start, e.stall_cycles, e.stall) for w, e in sorted(firsts.items())]


def test_a_block_that_waited_for_a_core_opens_as_the_first_blocks_did(simple_machine):
    """Blocks 0 and 1 start at cycle 0 on cores 0 and 1. Warp 0's GLOBAL_ID issues at 0 (no
    stall); its LOAD takes the core's issue slot at 1, so warp 1's GLOBAL_ID issues at 2 (2 cycles
    of "issue" stall) and warp w > 0's at w + 1 (w + 1 cycles). Block 2 starts on the first core
    to free, when the last of that block's records completes (cycle S), and its warps open the
    same way from S: warp 0 at S with no stall, warp w at S + w + 1 with w + 1 cycles of "issue"
    stall. The engines agree on every record. (An adversarial reading found the lane engines
    charging block 2's warps the whole wait since cycle 0: S + w + 1 cycles, warp 0's with
    cause "none".)"""
    n = 256
    d_a, d_o = pto.alloc_tensor(3 * n * 4), pto.alloc_tensor(3 * n * 4)
    pto.memcpy_h2d(d_a, np.arange(3 * n, dtype=np.float32))
    prof = pto.profile(copy, grid=(3, 1, 1), block=(n, 1, 1), args=(d_a, d_o))
    assert np.array_equal(d_o.numpy(), np.arange(3 * n, dtype=np.float32))

    def opening(start):
        return [(0, start, 0, "none")] + [(w, start + w + 1, w + 1, "issue") for w in range(1, 8)]
    assert _first_instructions(prof, 0) == _first_instructions(prof, 1) == opening(0)
    core = next(e.core for e in prof.timeline if e.block == 2)
    freed = max(e.end for e in prof.timeline if e.core == core and e.block != 2)
    assert freed > 0
    assert _first_instructions(prof, 2) == opening(freed)
    assert_engines_agree(copy, (d_a, d_o), (3, 1, 1), (n, 1, 1))
