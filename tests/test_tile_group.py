"""pto.tile_group (docs/aicore.md, "Tile groups"): multi-buffered typed tiles whose
set_flag / wait_flag the compiler places. The honest check is that the lowering equals an
expert's flags: examples/gemm_tile_group.py compiles to examples/gemm_manual.py instruction for
instruction and runs in the same cycles with the same records; then the values, the race
check, the single-tile form's flags, and the misuse errors."""
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.frontend.aicore_builtins import PTO_TO_PIPE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import gemm_manual  # noqa: E402
import gemm_tile_group  # noqa: E402


def _records(prof):
    """The timeline without source lines (the two kernels live in different files)."""
    out = []
    for e in prof.timeline:
        row = dataclasses.asdict(e)
        row.pop("line")
        out.append(row)
    return out


def test_the_tile_group_gemm_is_gemm_manual_flag_for_flag():
    """gemm_manual hand-places per K step WAIT(MTE1->MTE2) SET(MTE2->MTE1) WAIT(MTE2->MTE1)
    WAIT(M->MTE1) SET(MTE1->MTE2) SET(MTE1->M) WAIT(MTE1->M) SET(M->MTE1) on event ping/pong,
    pre-arms MTE1->MTE2 and M->MTE1 for events 0 and 1 after allocating its tiles and drains
    them after the store. l1.next/ready/take, l0.next, l1.release, l0.ready/take/release are
    those eight in that order, the groups allocate a member's two copies one after the other
    (gemm_manual's a_l1_0, a_l1_1, b_l1_0, ...) and pre-arm before the K loop: so the two
    programs are the same instructions with the same operands, hence the same cycles and the
    same records (K = 256: two iterations of the unrolled loop)."""
    _c, _r, manual = gemm_manual.run(128, 256, 256, values=False)
    _c, _r, grouped = gemm_tile_group.run(128, 256, 256, values=False)
    assert [(i.op, i.aux) for i in grouped.program.instrs] == [(i.op, i.aux) for i in manual.program.instrs]
    assert [(b.offset, b.count, b.space) for b in grouped.program.buffers] == \
        [(b.offset, b.count, b.space) for b in manual.program.buffers]
    assert grouped.total_cycles == manual.total_cycles
    assert _records(grouped) == _records(manual)


def test_the_tile_group_gemm_matches_numpy_and_is_race_free():
    """Values as numpy's fp32 product of the fp16 inputs; check="race" raises on any tile
    access that no flag orders, so a clean run says the placed flags order every buffer reuse."""
    c, reference, _ = gemm_tile_group.run(256, 256, 256, check="race")
    np.testing.assert_allclose(c, reference, rtol=1e-4, atol=1e-4)


SINGLE = '''
@pto.kernel(sync="manual")
def single(A):
    with pto.cube():
        g = pto.tile_group(1, 16, 16, pto.float16, loc=pto.Mat, producer=pto.PIPE_MTE2,
                           consumer=pto.PIPE_MTE1)
        a_l0 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        for k in range(2):
            t = g.next()
            pto.tload(t, A, stride=16)
            g.ready(t)
            g.take(t)
            pto.textract(a_l0, t)
            g.release(t)
'''


def test_the_single_tile_form_places_the_four_flags_and_the_pre_arm_and_drain(make_kernels):
    """Depth 1, producer MTE2, consumer MTE1, event 0 (no other flags in the kernel): the
    pre-arm SET(MTE1->MTE2, 0) before the loop, in the loop next WAIT(MTE1->MTE2), ready
    SET(MTE2->MTE1), take WAIT(MTE2->MTE1), release SET(MTE1->MTE2), and the drain
    WAIT(MTE1->MTE2) at the section's end; next() gives the tile itself."""
    module = make_kernels(SINGLE)
    a = pto.to_device(np.zeros((16, 16), np.float16))
    prof = pto.profile(module.single, grid=1, args=(a,), check="race")
    mte1, mte2 = PTO_TO_PIPE["PIPE_MTE1"], PTO_TO_PIPE["PIPE_MTE2"]
    flags = [(i.op, i.aux) for i in prof.program.instrs if i.op in ("SET_FLAG", "WAIT_FLAG")]
    assert flags == [("SET_FLAG", (mte1, mte2, 0)), ("WAIT_FLAG", (mte1, mte2, 0)),
                     ("SET_FLAG", (mte2, mte1, 0)), ("WAIT_FLAG", (mte2, mte1, 0)),
                     ("SET_FLAG", (mte1, mte2, 0)), ("WAIT_FLAG", (mte1, mte2, 0))]
    assert [b.name for b in prof.program.buffers][0] == "g[0]"


def _misuse(make_kernels, body, sync='"manual"', prelude=""):
    source = f'''
@pto.kernel(sync={sync})
def misuse(A):
    with pto.cube():
{prelude}        g = pto.tile_group(2, 16, 16, pto.float16, loc=pto.Mat, producer=pto.PIPE_MTE2,
                           consumer=pto.PIPE_MTE1)
''' + "".join(f"        {line}\n" for line in body)
    module = make_kernels(source)
    with pytest.raises(pto.CompileError) as info:
        pto.launch(module.misuse, grid=1, args=(pto.to_device(np.zeros((16, 16), np.float16)),))
    return str(info.value)


def test_next_on_a_buffer_not_released_names_the_line_and_says_release(make_kernels):
    """Depth 2: the third next() is buffer 0 again, still filling since line 8 (line 1 is the
    import, the kernel starts on line 3, the group on lines 6-7)."""
    msg = _misuse(make_kernels, ["t0 = g.next()", "t1 = g.next()", "t2 = g.next()"])
    assert "kernel 'misuse'" in msg and ":10:" in msg
    assert "buffer 0 of tile group 'g' (depth 2), which is filling since line 8" in msg
    assert "call ready()" in msg


def test_a_loop_that_takes_one_buffer_of_a_depth_two_group_is_refused(make_kernels):
    """One next() per iteration of a run-time loop: buffer 0 in even iterations, 1 in odd
    ones, which no compile-time operand can say; the error says to unroll."""
    msg = _misuse(make_kernels, ["for k in range(4):", "    t = g.next()", "    g.ready(t)",
                                 "    g.take(t)", "    g.release(t)"])
    assert "an iteration of this loop changes tile group 'g'" in msg and "unroll" in msg


def test_depth_zero_auto_sync_and_a_buffer_left_in_use_are_refused(make_kernels):
    msg = _misuse(make_kernels, [], prelude="        h = pto.tile_group(0, 16, 16, pto.float16, loc=pto.Mat, "
                                            "producer=pto.PIPE_MTE2, consumer=pto.PIPE_MTE1)\n")
    assert "depth must be a constant integer >= 1" in msg
    msg = _misuse(make_kernels, [], sync='"auto"')
    assert 'sync="manual"' in msg
    msg = _misuse(make_kernels, ["t = g.next()", "g.ready(t)"])
    assert "buffer 0 is ready since line 9 at the end of the section" in msg and "take()" in msg


def test_event_ids_skip_the_kernels_own_and_a_later_clash_or_exhaustion_is_refused(make_kernels):
    """A set_flag(MTE2, MTE1, 0) before the group makes it take events 1 and 2; a later
    wait_flag on event 1 of those pipes is the group's and refused; 15 ids used before a
    depth-2 group on the same pipes leave one: out of event ids."""
    used = "        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)\n        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)\n"
    msg = _misuse(make_kernels, ["pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)"], prelude=used)
    assert "event 1 on these pipes belongs to tile group 'g'" in msg and "[1, 2]" in msg
    many = "".join(f"        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, {e})\n" for e in range(15))
    msg = _misuse(make_kernels, [], prelude=many)
    assert "needs 2 event ids on the pipe pair" in msg and "only 1 of 16 are free" in msg


def test_a_tile_of_another_group_is_refused(make_kernels):
    msg = _misuse(make_kernels, ["x = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)", "g.ready(x)"])
    assert "g.ready(x): not a tile of group 'g'" in msg


def test_a_group_used_after_its_section_is_refused(make_kernels):
    """The group belongs to the cube section, the AIC's program; the vector section is the
    AIVs' programs, which do not have it."""
    source = '''
@pto.kernel(sync="manual")
def other_section(A):
    with pto.cube():
        g = pto.tile_group(2, 16, 16, pto.float16, loc=pto.Mat, producer=pto.PIPE_MTE2,
                           consumer=pto.PIPE_MTE1)
    with pto.vector():
        t = g.next()
'''
    module = make_kernels(source)
    with pytest.raises(pto.CompileError, match=r"'g' is assigned in `with pto.cube\(\):` at line \d+, "
                                               "which is the AIC's program"):
        pto.launch(module.other_section, grid=1, args=(pto.to_device(np.zeros((16, 16), np.float16)),))


IF_BODY = ["x = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)", "for k in range(2):",
           "    if k >= 1:", "        t = g.next()", "        pto.tload(t, A, stride=16)", "        g.ready(t)",
           "        g.take(t)", "        pto.textract(x, t)", "        g.release(t)"]


def test_a_run_time_if_may_cycle_a_depth_one_group_but_not_a_depth_two_one(make_kernels):
    """A buffer's tiles and event id are compile-time constants, so a run-time branch must
    leave each group as it found it. next/ready/take/release of a depth-1 group do (buffer 0,
    free, before and after), which examples/flash_attention_tile_group.py's `if j >= 1` relies
    on; on a depth-2 group next() moves the cursor from buffer 0 to 1: refused."""
    depth_one = "\n".join(["@pto.kernel(sync=\"manual\")", "def branch(A):", "    with pto.cube():",
                           "        g = pto.tile_group(1, 16, 16, pto.float16, loc=pto.Mat, "
                           "producer=pto.PIPE_MTE2, consumer=pto.PIPE_MTE1)"]
                          + [f"        {line}" for line in IF_BODY]) + "\n"
    module = make_kernels(depth_one)
    pto.profile(module.branch, grid=1, args=(pto.to_device(np.zeros((16, 16), np.float16)),), check="race")
    msg = _misuse(make_kernels, IF_BODY)
    assert "this run-time if changes tile group 'g' (depth 2)" in msg
    assert "next() gives buffer 0 at its start but buffer 1 at its end" in msg
