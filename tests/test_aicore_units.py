"""Each unit of an AI core runs its own program (frontend/aicore_units.py, docs/aicore.md): as
the CANN compiler builds a cube binary and a vector binary, `with pto.cube():` /
`with pto.vector():` choose what each unit's program holds, so nothing routes a unit to its
section at run time. No unit-id read, compare or branch appears in the listing, the timeline,
the trace or the debugger, and none costs a cycle.

Cycles are computed by hand from tests/machines/simple.toml (as tests/test_aicore_timing.py):
every scalar instruction takes 1 cycle on its unit's scalar unit; TLOAD 16x16 fp32 GM->Vec
(MTE2) 100 + 1024 B / 32 B a cycle (gm_to_ub) = 132; TADDS 16x16 fp32 (V) 10 (head) + 16
repeats = 26; TSTORE 16x16 fp32 Vec->GM (MTE3) 50 + 1024 / 32 = 82.
"""
import contextlib
import io
import json

import numpy as np
import pytest

import pypto_sim as pto
import pypto_sim.debug as dbg
from pypto_sim.debug.session import DebugContext

# what routing a unit to its section compiled to before: the unit id, a test on it, a branch
SCAFFOLDING = ("WARP_ID", "EQ", "GE", "SUB", "IF", "ELSE", "ENDIF")


@pto.kernel(sync="manual")
def add_one(X, Y):
    with pto.vector():
        x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        pto.tload(x, X + pto.get_subblock_id() * 256)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.tadds(x, x, 1.0)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.tstore(Y + pto.get_subblock_id() * 256, x)


@pto.kernel(sync="manual")
def cube_then_vector(X, W, Y):
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
        if pto.get_subblock_id() == 1:
            pto.tstore(Y, v)


def _tensors(*sizes):
    out = []
    for n in sizes:
        t = pto.alloc_tensor(4 * n, pto.float32)
        pto.memcpy_h2d(t, np.arange(n, dtype=np.float32))
        out.append(t)
    return out


def test_a_kernels_cycles_are_its_own_instructions_only(simple_machine):
    """Each AIV's program is ALLOC_LOCAL (cycle 0), TLOAD dispatched at 1 and running 1-133,
    set_flag/wait_flag (2, 3), TADDS dispatched at 4 and running when the flag fires, 133-159,
    set_flag/wait_flag (5, 6), TSTORE dispatched at 7, running 159-241, EXIT (8). So the kernel
    takes 1 + 132 + 26 + 82 = 241 cycles, and each AIV executes exactly its 9 instructions;
    the AIC has no section and does not run."""
    X, Y = _tensors(512, 512)
    prof = pto.profile(add_one, grid=(1,), args=(X, Y))
    assert prof.total_cycles == 1 + 132 + 26 + 82
    kernel_insts = ["ALLOC_LOCAL", "TLOAD", "SET_FLAG", "WAIT_FLAG", "TADDS", "SET_FLAG",
                    "WAIT_FLAG", "TSTORE", "EXIT"]
    for unit in ("AIV0", "AIV1"):
        mine = sorted((e for e in prof.timeline if e.lane == unit), key=lambda e: e.pc)
        assert [(e.inst, e.cycle) for e in mine] == list(zip(kernel_insts, [0, 1, 2, 3, 133, 5, 6, 159, 8]))
    assert not [e for e in prof.timeline if e.lane == "AIC"]
    out = np.empty(512, np.float32)
    pto.memcpy_d2h(out, Y)
    np.testing.assert_array_equal(out, np.arange(512, dtype=np.float32) + 1)


def test_each_unit_runs_its_own_program():
    """The AIC's program holds the cube section, AIV0's and AIV1's the vector section with
    get_subblock_id() a constant: `if pto.get_subblock_id() == 1` keeps the TSTORE in AIV1's
    program only, so the two differ; add_one's AIVs differ only in constants folded into
    their TLOAD/TSTORE offsets, so they too have programs of their own."""
    X, W, Y = _tensors(256, 256, 256)
    prog = cube_then_vector.program_for((X, W, Y))
    aic, aiv0, aiv1 = prog.unit_entry
    assert 0 == aic < aiv0 < aiv1 < len(prog.instrs)
    ops = [i.op for i in prog.instrs]
    assert ops[aic:aiv0] == ["ALLOC_LOCAL", "TLOAD", "SET_FLAG", "WAIT_FLAG", "TSTORE",
                             "CROSS_CORE_SET_FLAG", "EXIT"]
    vector = ["ALLOC_LOCAL", "CROSS_CORE_WAIT_FLAG", "TLOAD", "SET_FLAG", "WAIT_FLAG", "TADDS",
              "SET_FLAG", "WAIT_FLAG"]
    assert ops[aiv0:aiv1] == vector + ["EXIT"]
    assert ops[aiv1:] == vector + ["TSTORE", "EXIT"]
    # AIV1's tile is AIV0's words (its own UB): one buffer each for m and v
    assert [b.name for b in prog.buffers] == ["m", "v"]
    text = cube_then_vector.asm(grid=(1,), args=(X, W, Y))
    assert "; AIC:" in text and "; AIV0:" in text and "; AIV1:" in text
    assert not set(SCAFFOLDING) & {line.split()[1] for line in text.splitlines() if line[:1].isdigit()}


def test_no_scaffolding_in_the_timeline_trace_or_debugger(simple_machine):
    """The timeline, the Chrome trace and every debugger stop of a cube + vector kernel show
    the kernel's own instructions only: the AIC 7, AIV0 9 and AIV1 10 of its programs."""
    X, W, Y = _tensors(256, 256, 256)
    prof = pto.profile(cube_then_vector, grid=(1,), args=(X, W, Y))
    counts = {u: sum(e.lane == u for e in prof.timeline) for u in ("AIC", "AIV0", "AIV1")}
    assert counts == {"AIC": 7, "AIV0": 9, "AIV1": 10}
    assert not {e.inst for e in prof.timeline} & set(SCAFFOLDING)
    doc = prof.trace()
    names = {e["name"] for e in doc["traceEvents"] if e["ph"] == "X"}
    assert "TADDS" in names and not names & set(SCAFFOLDING)
    text = json.dumps(doc)
    assert "WARP_ID" not in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ctx = dbg.debug_kernel(cube_then_vector, args=(X, W, Y), grid=(1,))
        ctx.step(1000)
    steps = out.getvalue().splitlines()[1:-1]
    assert len(steps) == 7 + 9 + 10
    assert not [s for s in steps if s.split("]")[1].split()[0] in SCAFFOLDING]


def test_the_lane_debugger_refuses_an_ai_core_kernel(simple_machine):
    """DebugContext steps warps of lanes; an AI-core kernel gets an ArgumentError naming the
    kernel and pointing to debug_kernel (which gives its AICoreDebugContext)."""
    X, Y = _tensors(512, 512)
    with pytest.raises(pto.ArgumentError, match="(?s)AI-core kernel.*hint: .*debug_kernel") as info:
        DebugContext(add_one, args=(X, Y), grid=(1,), echo=False)
    assert info.value.kernel == "add_one"


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_both_modes_run_each_units_program(simple_machine, mode):
    """The AIC copies X to W and signals; each AIV adds 2 to W, and only AIV1's program holds
    the TSTORE (`get_subblock_id() == 1` is decided when its program is compiled): Y = X + 2
    in timing and in functional mode (exec/aicore_functional.py starts each unit at its own
    program's entry)."""
    X, W, Y = _tensors(256, 256, 256)
    pto.launch(cube_then_vector, grid=(1,), args=(X, W, Y), mode=mode)
    out = np.empty(256, np.float32)
    pto.memcpy_d2h(out, Y)
    np.testing.assert_array_equal(out, np.arange(256, dtype=np.float32) + 2)


from pypto_sim import Mat, Vec, cube, vector  # noqa: E402  (the names a kernel may import bare)


@pto.kernel
def _sections_by_bare_names(X, O):
    with cube():
        t = pto.alloc_tile(16, 16, pto.float16, loc=Mat)
        pto.tload(t, X)
    with vector():
        v = pto.alloc_tile(16, 16, pto.float16, loc=Vec)
        pto.tload(v, X)
        pto.tstore(O, v)


@pto.kernel
def _sections_by_pto_names(X, O):
    with pto.cube():
        t = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        pto.tload(t, X)
    with pto.vector():
        v = pto.alloc_tile(16, 16, pto.float16, loc=pto.Vec)
        pto.tload(v, X)
        pto.tstore(O, v)


def test_sections_written_with_names_imported_from_pypto_sim():
    """``from pypto_sim import cube, vector`` then ``with cube():`` is a cube section, as
    ``with pto.cube():`` is (it used to be read as vector code nesting a cube section): both
    kernels compile to the same per-unit instructions."""
    args = (pto.alloc_tensor(256 * 2, pto.float16), pto.alloc_tensor(256 * 2, pto.float16))
    bare, dotted = (k.program_for(args) for k in (_sections_by_bare_names, _sections_by_pto_names))
    assert [(i.op, i.aux) for i in bare.instrs] == [(i.op, i.aux) for i in dotted.instrs]
    assert bare.unit_entry == dotted.unit_entry and bare.unit_entry[0] >= 0
