"""Every capacity and legality rule of typed tiles (PTO-ISA docs/coding/Tile.md,
docs/isa/TMATMUL.md, include/pto/common/buffer_limits.hpp) triggers its error, which names
the tile, its space, the limit and the line."""
import re

from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto

KERNEL = '''
@pto.kernel
def k(A, C):
{body}
'''


# the line of the body's second line in the file make_kernels writes: 1 imports pypto_sim, 2 is
# KERNEL's empty first line, 3 the decorator, 4 the def, 5 the body's `with pto.cube():`
ALLOC_LINE = 6


def compile_body(make_kernels, body, args=None):
    """Compile (and, with args, launch) a kernel whose body is `body` (4-space indented)."""
    mod = make_kernels(KERNEL.format(body="\n".join("    " + line for line in body.strip().splitlines())))
    a = pto.alloc_tensor(1 << 16, pto.float16)
    c = pto.alloc_tensor(1 << 16, pto.float32)
    if args is None:
        return mod.k.asm(args=(a, c))
    pto.launch(mod.k, grid=(1,), args=(a, c))
    pto.sync()


@pytest.mark.parametrize("loc, rows, cols, dtype, cap", [
    ("Vec", 256, 512, "float32", 196608), ("Mat", 512, 544, "float16", 524288),
    ("Left", 256, 144, "float16", 65536), ("Right", 128, 272, "float16", 65536),
    ("Acc", 256, 160, "float32", 131072), ("Bias", 1, 264, "float32", 1024)])
def test_each_space_has_its_capacity(make_kernels, loc, rows, cols, dtype, cap):
    body = f"t = pto.alloc_tile({rows}, {cols}, pto.{dtype}, loc=pto.{loc})"
    if loc != "Vec":
        body = "with pto.cube():\n    " + body
    else:
        body = "with pto.vector():\n    " + body
    with pytest.raises(pto.L1CapacityError) as info:
        compile_body(make_kernels, body, args=True)
    msg = str(info.value)
    assert f"tile 't' ({loc}, {rows} x {cols} {dtype})" in msg and f"of its {cap} are free" in msg
    assert info.value.line == ALLOC_LINE


def test_capacity_counts_every_tile_of_a_space(make_kernels):
    body = """
with pto.cube():
    a = pto.alloc_tile(128, 128, pto.float16, loc=pto.Left)
    b = pto.alloc_tile(128, 128, pto.float16, loc=pto.Left)
    c = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
"""
    with pytest.raises(pto.L1CapacityError, match=r"tile 'c' \(Left.*0 of its 65536 are free.*a 32768 B"):
        compile_body(make_kernels, body, args=True)


@pytest.mark.parametrize("body, message", [
    ("t = pto.alloc_tile(16, 10, pto.float16, loc=pto.Vec)",
     r"tile 't' \(Vec, 16 x 10 float16\): a row is 20 bytes, not a multiple of 32"),
    ("t = pto.alloc_tile(10, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)",
     r"tile 't' \(Vec, 10 x 1 float32\): a column is 40 bytes, not a multiple of 32"),
    ("t = pto.alloc_tile(40, 16, pto.float16, loc=pto.Mat)",
     r"tile 't' \(Mat, 40 x 16 float16\): boxed tile rows must be a multiple of 16 .* but got 40"),
    ("t = pto.alloc_tile(16, 20, pto.float32, loc=pto.Left)",
     r"tile 't' \(Left, 16 x 20 float32\): boxed tile cols must be a multiple of 8 \(the 16 x 8 fractal box"),
    ("t = pto.alloc_tile(16, 16, pto.int8, loc=pto.Left)",
     r"tile 't' \(Left, 16 x 16 int8\): boxed tile cols must be a multiple of 32 \(the 16 x 32 fractal box"),
    ("t = pto.alloc_tile(16, 16, pto.int8, loc=pto.Right)",
     r"tile 't' \(Right, 16 x 16 int8\): boxed tile rows must be a multiple of 32 \(the 32 x 16 fractal box"),
    ("t = pto.alloc_tile(8, 16, pto.float16, loc=pto.Mat, layout=pto.ColMajor)",
     r"tile 't' \(Mat, 8 x 16 float16\): boxed tile rows must be a multiple of 16 \(the 16 x 16 fractal box"),
    ("t = pto.alloc_tile(16, 8, pto.float32, loc=pto.Acc)",
     r"tile 't' \(Acc, 16 x 8 float32\): boxed tile cols must be a multiple of 16 \(the 16 x 16 fractal box"),
    ("t = pto.alloc_tile(2, 16, pto.float32, loc=pto.Bias)", r"a Bias tile is one row"),
    ("t = pto.alloc_tile(16, 16, pto.float16, loc=pto.Acc)",
     r"Acc \(L0C\) holds float32, int32, not float16"),
    ("t = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat, valid=(17, 16))", r"valid rows 17 is outside 1..16"),
    ("t = pto.alloc_tile(16, 16, pto.float16, loc=pto.Shared)", r"has no attribute 'Shared'"),
])
def test_tile_shape_alignment_and_dtype_rules(make_kernels, body, message):
    with pytest.raises(pto.CompileError, match=message) as info:
        compile_body(make_kernels, "with pto.cube():\n    " + body)
    assert info.value.line == ALLOC_LINE


@pytest.mark.parametrize("body", [
    "t = pto.alloc_tile(16, 8, pto.float32, loc=pto.Left)",
    "t = pto.alloc_tile(16, 8, pto.int32, loc=pto.Mat)",
    "t = pto.alloc_tile(8, 16, pto.float32, loc=pto.Right)",
    "t = pto.alloc_tile(32, 16, pto.int8, loc=pto.Right)",
    "t = pto.alloc_tile(1, 32, pto.float16, loc=pto.Left)",
    "t = pto.alloc_tile(32, 16, pto.int8, loc=pto.Mat, layout=pto.ColMajor)",
])
def test_tiles_of_whole_fractals_of_their_space_and_dtype_are_accepted(make_kernels, body):
    """pto_tile.hpp's fractal box (getInnerRow / getInnerCol): 16 rows x 32 bytes for Left and the
    NZ Mat tile (c0 = 8 float32 / int32 columns), 32 bytes x 16 columns for Right (8 float32 or 32
    int8 rows, whose 16-byte rows a boxed tile may have) and a ColMajor (ZN) Mat tile, whole in
    each; a tile of one row takes any whole number of box columns."""
    compile_body(make_kernels, "with pto.cube():\n    " + body)


CUBE = """
with pto.cube():
    m = pto.alloc_tile(32, 32, pto.float16, loc=pto.Mat)
    a = pto.alloc_tile(32, 32, pto.float16, loc=pto.Left)
    b = pto.alloc_tile(32, 32, pto.float16, loc=pto.Right)
    c = pto.alloc_tile(32, 32, pto.float32, loc=pto.Acc)
    b16 = pto.alloc_tile(16, 32, pto.float16, loc=pto.Right)
    {line}
"""


@pytest.mark.parametrize("line, message", [
    ("pto.tmatmul(c, m, b)", r"(?s)tmatmul: left: tile 'm' is in Mat \(L1\) but TMATMUL takes a in Left.*textract"),
    ("pto.tmatmul(c, a, m)", r"tile 'm' is in Mat \(L1\) but TMATMUL takes b in Right"),
    ("pto.tmatmul(m, a, b)", r"tile 'm' is in Mat \(L1\) but TMATMUL takes c in Acc"),
    ("pto.textract(a, c)", r"textract: src: tile 'c' is in Acc \(L0C\) but TEXTRACT takes src in Mat"),
    ("pto.textract(m, m)", r"tile 'm' is in Mat \(L1\) but TEXTRACT takes dst in Left or Right or Bias"),
    ("pto.tload(a, A)", r"tload: tile: tile 'a' is in Left \(L0A\) but TLOAD takes dst in Vec or Mat"),
    ("t = pto.alloc_tile(1, 32, pto.float32, loc=pto.Bias)\n    pto.tload(t, C)",
     r"(?s)tile 't' is in Bias \(BT\) but TLOAD takes dst in Vec or Mat.*A2/A3's TLOAD has no Bias "
     r"destination: static_assert \"Fix: Dst TileType must be Vec or Mat!\" \(pto-isa "
     r"include/pto/common/arch/memory/tload_common.hpp line 312 at 3186c381\).*textract it into the Bias"),
    ("pto.tstore(A, a)", r"tstore: tile: tile 'a' is in Left \(L0A\) but TSTORE takes src in Vec or Mat"),
    ("pto.tmatmul(c, a, b16)", r"left 'a' has k = 32 columns but right 'b16' has 16 rows"),
    ("pto.textract(a, m, 16, 0)", r"the window rows 16..47 are outside 'm', which has 32 rows"),
    ("pto.tmov(a, b)", r"tmov: src: tile 'b' is in Right \(L0B\) but TMOV takes src in Mat"),
    ("pto.tstore(C, m)", r"tile 'm' holds float16 but 'C' holds float32; MTE3 does not convert"),
])
def test_each_instruction_accepts_only_its_locations_and_shapes(make_kernels, line, message):
    with pytest.raises(pto.CompileError, match=message):
        compile_body(make_kernels, CUBE.format(line=line))


def test_the_m_k_n_limit_of_tmatmul(make_kernels):
    """m, k, n in [1, 4095]: a 16 x 4096 int8 Left tile fits L0A (64 KiB) but k = 4096."""
    body = """
with pto.cube():
    a = pto.alloc_tile(16, 4096, pto.int8, loc=pto.Left)
    b = pto.alloc_tile(4096, 32, pto.int8, loc=pto.Right)
    c = pto.alloc_tile(16, 32, pto.int32, loc=pto.Acc)
    pto.tmatmul(c, a, b)
"""
    with pytest.raises(pto.CompileError, match=r"tmatmul: k = 4096 is outside \[1, 4095\]"):
        compile_body(make_kernels, body)


@pytest.mark.parametrize("body, message", [
    ("with pto.vector():\n    v = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)\n    pto.texp(v, v)",
     r"(?s)texp: dst: tile 'v' is in Acc \(L0C\) but TEXP takes dst in Vec.*cannot read L0C"),
    ("with pto.cube():\n    v = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)\n    pto.texp(v, v)",
     r"tile 'v' is in Vec \(UB\), which only the vector cores have; this is cube code"),
    ("with pto.vector():\n    m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)\n    pto.tload(m, A)",
     r"tile 'm' is in Mat \(L1\), which only the cube core has; this is vector code"),
    ("with pto.cube():\n    c = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)\n"
     "    v = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)\n    pto.tmov(v, c)",
     r"Acc -> Vec \('c' -> 'v'\) is not a data path on A2/A3"),
    ("with pto.cube():\n    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 16)", r"event must be a constant 0..15"),
    ("with pto.cube():\n    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE2, 0)", r"order two different pipes"),
    ("with pto.cube():\n    pto.set_flag('load', pto.PIPE_MTE1, 0)", r"src_pipe must be a pipe: pto.PIPE_S"),
    ("m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)\npto.tload(m, A)\nwith pto.cube():\n    pass",
     r"tload outside a section"),
    ("x = pto.get_subblock_id()\nwith pto.cube():\n    pass", r"get_subblock_id\(\) is the vector core's number"),
    ("with pto.cube():\n    t = pto.alloc_local(64, pto.float32)", r"allocates typed tiles: pto.alloc_tile"),
    ("with pto.cube():\n    with pto.vector():\n        pass", r"sections do not nest"),
])
def test_units_sections_and_flags_rules(make_kernels, body, message):
    with pytest.raises(pto.CompileError, match=message):
        compile_body(make_kernels, body)


def test_the_machines_event_id_limit_is_checked_at_launch(make_kernels, simple_machine):
    """PTO-ISA allows ids 0..15; the machine table's [aicore] event_ids (8) is the limit."""
    body = "with pto.cube():\n    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 9)\n    pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 9)"
    with pytest.raises(pto.CompileError, match=r"set_flag uses event id 9 but machine 'simple' has 8"):
        compile_body(make_kernels, body, args=True)


def test_a_run_time_valid_region_beyond_the_tile_is_an_error_naming_the_tile(make_kernels):
    mod = make_kernels('''
@pto.kernel
def k(A, C, r):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat, valid=(r, 16))
        pto.tload(m, A)
''')
    a = pto.alloc_tensor(1 << 12, pto.float16)
    with pytest.raises(pto.OutOfBoundsError, match=r"TLOAD .* on AIC .* the load of 20 x 16 does not fit tile 'm' \(16 x 16\)"):
        pto.launch(mod.k, grid=(1,), args=(a, a, 20))
        pto.sync()
    for r in (0, -1):       # an empty region is not one that "does not fit"
        with pytest.raises(pto.OutOfBoundsError, match=rf"the load of {r} x 16 on tile 'm' is empty or negative: its "
                                                       r"rows and columns must be at least 1") as info:
            pto.launch(mod.k, grid=(1,), args=(a, a, r))
            pto.sync()
        assert "at least 1 x 1" in info.value.hint


# ---------------------------------------------------------------- lane code in an AI-core kernel
VECTOR = """
with pto.vector():
    t = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)
    pto.tload(t, C)
    {line}
    pto.tstore(C, t)
"""
SCALAR_UNITS = r"the AI core's units \(AIC, AIV0, AIV1\) are scalar units"
TILES = r"pto.tload / pto.tstore.*vector tile ops"
FLAGS = r"pto.set_flag / pto.wait_flag.*cross_core"


@pytest.mark.parametrize("line, message, hint", [
    ("i = pto.get_global_id(0)", r"pto.get_global_id\(\) numbers lanes", r"pto.get_block_id\(\)"),
    ("i = pto.get_local_id(0)", r"pto.get_local_id\(\) numbers lanes", r"pto.get_block_id\(\)"),
    ("i = pto.get_lane_id()", r"pto.get_lane_id\(\) numbers lanes", r"pto.get_block_id\(\)"),
    ("i = pto.get_warp_id()", r"pto.get_warp_id\(\) numbers warps", r"pto.get_subblock_id\(\)"),
    ("i = pto.get_block_dim()", r"pto.get_block_dim\(\) counts a block's lanes", r"pto.get_grid_dim\(\)"),
    ("pto.fma(C, 1.0, 2.0, 3.0)", r"FMA_STORE is a lane store", TILES),
    ("x = pto.atomic_add(C, 1.0)", r"ATOM_ADD is a lane atomic", TILES),
    ("x = pto.shfl_xor(1.0, 1)", r"SHFL_XOR is a warp shuffle or vote", TILES),
    ("x = pto.ballot(True)", r"BALLOT is a warp shuffle or vote", TILES),
    ("pto.barrier()", r"BARRIER is a barrier of lanes", FLAGS),
    ("pto.barrier_block()", r"BARRIER_BLOCK is a barrier of lanes", FLAGS),
    ("pto.fence()", r"FENCE is a barrier of lanes", FLAGS),
])
def test_lane_code_in_an_ai_core_kernel_is_an_error_at_its_line(make_kernels, line, message, hint):
    """A unit of an AI core is a scalar unit that runs the program once, not a warp of 32 lanes:
    before this was an error, `pto.store(y + pto.get_global_id(0), x)` in an AI-core kernel ran
    one "lane" per unit and stored one element (at y[32], AIV0 being warp 1). Each per-lane
    instruction is a CompileError at its statement (line 4 of the body, 8 of the file: the
    module starts with an import and a blank line, then the decorator and the def)."""
    with pytest.raises(pto.CompileError, match=f"(?s){message}.*{SCALAR_UNITS}.*hint: .*{hint}") as info:
        compile_body(make_kernels, VECTOR.format(line=line))
    assert info.value.line == 8


@pytest.mark.parametrize("line, op", [("pto.store(C + 1, 1.0)", "SST_GM"), ("C[3] = 1.0", "SST_GM"),
                                       ("x = C[3]", "SLD_GM"), ("x = pto.load(C + 3)", "SLD_GM"),
                                       ("t[3] = 1.0", "SST_UB"), ("x = t[1, 3]", "SLD_UB")])
def test_an_element_of_gm_or_a_vec_tile_is_the_scalar_units_own_access(make_kernels, line, op):
    """A GM element or a Vec tile's word indexed in an AI-core kernel is not a lane access but the
    scalar unit's own load or store (isa/56_scalar_memory.toml: through the DataCache, or
    Tile::GetValue / SetValue), one instruction at the statement's line."""
    asm = compile_body(make_kernels, VECTOR.format(line=line))
    assert [ln.split()[1] for ln in asm.splitlines() if f"; 8: {line}" in ln][-1] == op


def test_scalar_code_of_an_ai_core_kernel_still_compiles(make_kernels):
    """Uniform values are the scalar unit's: ids of the core and the vector core, the grid,
    arithmetic (pto.fma of three scalars is an FMA on the scalar pipe, not a lane store),
    loops and ifs."""
    body = """
n = pto.get_grid_dim() + pto.get_block_id()
with pto.vector():
    t = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)
    for j in range(n):
        if pto.get_subblock_id() == 1:
            pto.tadds(t, t, pto.fma(None, 2.0, 3.0, 1.0))
    pto.tstore(C + pto.get_subblock_id() * 256, t)
"""
    asm = compile_body(make_kernels, body)
    assert "FMA" in asm and "STORE " not in asm.replace("TSTORE", "")


def test_a_block_shape_for_an_ai_core_kernel_is_a_launch_error(make_kernels):
    """A block of an AI-core kernel is one AI core (its AIC and two AIVs); block= counts lanes
    of lane kernels, so any other value than launch()'s default is refused."""
    mod = make_kernels(KERNEL.format(body="    t = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)\n"
                                           "    pto.tstore(C, t)"))
    a, c = pto.alloc_tensor(1 << 12, pto.float16), pto.alloc_tensor(1 << 12, pto.float32)
    with pytest.raises(pto.LaunchError, match=r"(?s)block=\(64, 1, 1\).*one AI core.*grid=\(n,\) counts AI cores"):
        pto.launch(mod.k, grid=(1,), block=64, args=(a, c))
    pto.launch(mod.k, grid=(2,), args=(a, c))
    pto.sync()


def test_a_typed_tile_is_named_not_computed(make_kernels):
    """`c = a` then `c = a + 64 * i` in a loop made c's operand an address computed at run
    time; the executor resolved it to the whole of tile `a` and dropped the offset, silently.
    A typed tile's operand is the tile itself: a variable assigned more than once cannot hold
    one. The error names it, the tile, and the line of its first assignment: line 7 of the
    generated file (make_kernels' import line, KERNEL's blank line, the decorator and the
    def, then the body's `with`, `a = ...` and `c = a`)."""
    body = """
with pto.vector():
    a = pto.alloc_tile(8, 64, pto.float32)
    c = a
    for i in range(2):
        c = a + i * 64
        pto.tload(c, A, stride=64)
"""
    with pytest.raises(pto.CompileError) as info:
        compile_body(make_kernels, body)
    assert "'c' is assigned more than once and holds typed tile 'a'" in str(info.value)
    assert "pto.tsubview" in info.value.hint
    assert info.value.line == 7


@pytest.mark.parametrize("section, line, message", [
    ("vector", "pto.set_flag(pto.PIPE_M, pto.PIPE_V, 0)", "pto.PIPE_M is not a pipe of the vector cores"),
    ("vector", "pto.pipe_barrier(pto.PIPE_FIX)", "pto.PIPE_FIX is not a pipe of the vector cores"),
    ("cube", "pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)", "pto.PIPE_V is not a pipe of the cube core"),
    ("cube", "pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)", "pto.PIPE_V is not a pipe of the cube core"),
])
def test_a_flag_or_barrier_names_only_its_own_cores_pipes(make_kernels, section, line, message):
    """The AIVs have no M, MTE1 or FIX pipe and the AIC no V (docs/aicore.md; the AIC's MTE3
    stores Mat tiles): naming one is a compile error, not a flag that orders nothing."""
    source = f"\n@pto.kernel\ndef k(X):\n    with pto.{section}():\n        {line}\n"
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(source).k.program_for((pto.alloc_tensor(64),))


RUNTIME_VALID = """
@pto.kernel
def k(X, O, n):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
            pto.tload(a, X)
            w = pto.tsubview(a, 0, 0, 8, 16, valid=(n, 16))
            pto.tadds(w, w, 1000.0)
            pto.tstore(O, a)
"""


@pytest.mark.parametrize("mode", ["timing", "functional"])
@pytest.mark.parametrize("n, elements", [(0, 0), (-1, -16)])
def test_an_empty_or_negative_run_time_valid_region_stops_the_op(make_kernels, mode, n, elements):
    """A view's valid rows n known only at launch: n = 0 (0 x 16 = 0 elements) or -1 (-16) stop
    the TADDS with the count named, as a constant 0 is a compile error; the op used to do
    nothing at 0 and crash inside numpy at -1."""
    mod = make_kernels(RUNTIME_VALID)
    X, O = pto.alloc_tensor(1024), pto.alloc_tensor(1024)
    pto.memcpy_h2d(X, np.zeros(256, np.float32))
    with pytest.raises(pto.OutOfBoundsError, match=rf"TADDS at line 10 .*: {elements} elements: the valid "
                                                   "region is empty or negative"):
        pto.launch(mod.k, grid=(1,), args=(X, O, n), mode=mode)
        pto.sync()


def test_synccheck_reports_a_set_flag_no_wait_took(make_kernels):
    """AIV0 sets MTE2 -> V event 0 and nothing waits for it: at the block's end synccheck names
    the flag, the unit and the count (on hardware the event stays set into the next kernel),
    at the set_flag's line; the same kernel with the wait passes."""
    body = ("\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n        if pto.get_subblock_id() == 0:\n"
            "            t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)\n"
            "            pto.tload(t, X)\n            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)\n"
            "            WAIT\n            pto.tstore(O, t)\n")
    X, O = pto.alloc_tensor(1024), pto.alloc_tensor(1024)
    pto.memcpy_h2d(X, np.ones(256, np.float32))
    with pytest.raises(pto.SyncCheckError, match=r"set_flag\(pto.PIPE_MTE2, pto.PIPE_V, 0\) of AIV0 in block "
                                                 r"\(0, 0, 0\) was never waited for \(1 unmatched\)") as info:
        pto.launch(make_kernels(body.replace("WAIT", "pass")).k, grid=(1,), args=(X, O), check="synccheck")
        pto.sync()
    assert info.value.unit == "AIV0"                                  # the unit by name, at the set_flag's line
    assert Path(info.value.file).read_text().splitlines()[info.value.line - 1].strip() == \
        "pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)"
    pto.launch(make_kernels(body.replace("WAIT", "pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)")).k, grid=(1,),
               args=(X, O), check="synccheck")
    pto.sync()


def test_a_two_list_merge_needs_a_tmp_that_holds_the_merged_words(make_kernels):
    """tmrgsort of two 128-word lists with an 8-word tmp: A2/A3 merges the 256 words into tmp
    before copying them to dst (TMrgSort.hpp), so the tmp is a compile error naming both sizes."""
    source = ("\n@pto.kernel\ndef k(X):\n    with pto.vector():\n"
              "        a = pto.alloc_tile(1, 128, pto.float32, loc=pto.Vec)\n"
              "        b = pto.alloc_tile(1, 128, pto.float32, loc=pto.Vec)\n"
              "        tmp = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)\n"
              "        d = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)\n"
              "        pto.tmrgsort(d, a, src1=b, tmp=tmp)\n")
    with pytest.raises(pto.CompileError, match="tmp 'tmp' holds 8 words, fewer than the 256 merged words"):
        make_kernels(source).k.program_for((pto.alloc_tensor(64),))


# ---------------------------------------------------------------- compile-time operands
RUN_TIME = '''
@pto.kernel(sync="manual")
def k(A, C, r):
    with pto.{section}():
        {line}
'''
RUN_TIME_LINE = 6        # 1 imports pypto_sim, 2 is empty, 3 the decorator, 4 the def, 5 the section
TILE = "t = pto.alloc_tile(32, 32, pto.float32, loc=pto.Vec); "


def compile_line(make_kernels, line, section="vector"):
    """Compile k(A, C, r) whose section holds `line` (r a run-time int32); the CompileError."""
    mod = make_kernels(RUN_TIME.format(section=section, line=line))
    with pytest.raises(pto.CompileError) as info:
        mod.k.program_for((pto.alloc_tensor(1 << 12, pto.float16), pto.alloc_tensor(1 << 12), 8))
    assert info.value.kernel == "k" and info.value.line == RUN_TIME_LINE
    return info.value


@pytest.mark.parametrize("line, name, given", [
    ("w = pto.tsubview(t, r, 0, 16, 32)", "row", r"'r' \(a kernel argument\)"),
    ("w = pto.tsubview(t, 0, r * 8, 16, 8, valid=(16, 8))", "col", r"'r \* 8'"),
    ("w = pto.tsubview(t, 0, col=r + 0, rows=16, cols=8)", "col", r"'r \+ 0'"),
])
def test_a_subview_at_a_run_time_offset_says_the_offset_must_be_a_constant(make_kernels, line, name, given):
    """TSUBVIEW has no operands (isa/42_layout.toml): the view is bound when the kernel compiles,
    so a run-time row or col is refused as that, naming the argument and what its value is."""
    error = compile_line(make_kernels, TILE + line)
    assert re.search(rf"pto.tsubview: {name} must be a constant known when the kernel compiles \(the view is "
                     rf"bound then: TSUBVIEW has no operands\), but {given} is a value computed while the "
                     r"kernel runs \(int32\)", str(error)), str(error)
    assert f"give {name} as a literal or a module constant" in error.hint and "pto.tload" in error.hint


@pytest.mark.parametrize("n", ["8", "n"])
def test_reductions_cover_the_sources_valid_columns_only(make_kernels, n):
    """A2/A3 masks each row of a reduction's source to its valid columns, stepping rows by the
    tile's row stride (TRowReduceOps.hpp, TColReduceOps.hpp, TRowReduceIdxOps.hpp). A 16 x 32
    tile holds x (16 x 8, standard normal) in its first 8 columns and 1e30 past them; through a
    view of valid (16, 8), constant or the run-time n = 8: trowmax gives each row's maximum of
    its 8 values, trowsum their sum (in column order, each partial sum rounded to float32),
    trowargmax the column of the maximum, and tcolmax into a 1 x 32 row of valid (1, 8) each
    column's maximum over the 16 rows. No 1e30 reaches a result."""
    mod = make_kernels(f'''
@pto.kernel
def k(X, MX, SM, AM, CM, n):
    with pto.vector():
        t = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
        d = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        s = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        i = pto.alloc_tile(16, 1, pto.int32, loc=pto.Vec, layout=pto.ColMajor)
        c = pto.alloc_tile(1, 32, pto.float32, loc=pto.Vec, valid=(1, {n}))
        pto.tload(t, X)
        v = pto.tsubview(t, 0, 0, 16, 32, valid=(16, {n}))
        pto.trowmax(d, v)
        pto.trowsum(s, v)
        pto.trowargmax(i, v)
        pto.tcolmax(c, v)
        pto.tstore(MX, d)
        pto.tstore(SM, s)
        pto.tstore(AM, i)
        pto.tstore(CM, c)
''')
    x = np.random.default_rng(7).standard_normal((16, 8)).astype(np.float32)
    full = np.full((16, 32), 1e30, np.float32)
    full[:, :8] = x
    X = pto.alloc_tensor(full.nbytes)
    pto.memcpy_h2d(X, full)
    outs = [pto.alloc_tensor(64), pto.alloc_tensor(64), pto.alloc_tensor(64, pto.int32), pto.alloc_tensor(32)]
    pto.launch(mod.k, grid=(1,), args=(X, *outs, 8))
    got = [np.zeros(16, np.float32), np.zeros(16, np.float32), np.zeros(16, np.int32), np.zeros(8, np.float32)]
    for host, dev in zip(got, outs):
        pto.memcpy_d2h(host, dev)
    sums = np.zeros(16, np.float32)
    for col in range(8):
        sums = (sums + x[:, col]).astype(np.float32) if col else x[:, 0].copy()
    np.testing.assert_array_equal(got[0], x.max(axis=1))
    np.testing.assert_array_equal(got[1], sums)
    np.testing.assert_array_equal(got[2], x.argmax(axis=1))
    np.testing.assert_array_equal(got[3], x.max(axis=0))


def test_the_padding_the_row_reduction_hint_gives_reduces_the_valid_columns(make_kernels):
    """The hint's way round: pad the columns past the run-time valid ones with the identity
    ("min" for trowmax), then reduce the full-width view: the maxima of the valid columns."""
    mod = make_kernels('''
@pto.kernel
def k(X, O, n):
    with pto.vector():
        t = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec, valid=(16, n))
        d = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        pto.tload(t, X)
        pto.tfillpad_inplace(t, "min")
        pto.trowmax(d, pto.tsubview(t, 0, 0, 16, 32))
        pto.tstore(O, d)
''')
    x = np.random.default_rng(0).standard_normal(16 * 8).astype(np.float32)
    X, O = pto.alloc_tensor(x.nbytes), pto.alloc_tensor(64)
    pto.memcpy_h2d(X, x)
    pto.launch(mod.k, grid=(1,), args=(X, O, 8))
    out = np.zeros(16, np.float32)
    pto.memcpy_d2h(out, O)
    np.testing.assert_array_equal(out, x.reshape(16, 8).max(axis=1))


@pytest.mark.parametrize("section, line, operand, value", [
    ("vector", "t = pto.alloc_tile(16.0, 16, pto.float32, loc=pto.Vec)", "pto.alloc_tile: rows", "16.0"),
    ("vector", "t = pto.alloc_tile(16, 16.0, pto.float32, loc=pto.Vec)", "pto.alloc_tile: cols", "16.0"),
    ("vector", "t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec, valid=(8.0, 16))", "valid rows", "8.0"),
    ("vector", "t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec); pto.tload(t, C, stride=16.0)",
     "tload: stride", "16.0"),
    ("vector", "t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec); pto.tstore(C, t, stride=32.0)",
     "tstore: stride", "32.0"),
    ("vector", TILE + "w = pto.tsubview(t, 16.0, 0, 16, 32)", "pto.tsubview: row", "16.0"),
    ("vector", TILE + "w = pto.tsubview(t, 0, 0, 16, 32.0)", "pto.tsubview: cols", "32.0"),
    ("vector", TILE + "w = pto.treshape(t, 64.0, 16)", "pto.treshape: rows", "64.0"),
    ("cube", "m = pto.alloc_tile(32, 32, pto.float16, loc=pto.Mat); "
             "a = pto.alloc_tile(16, 32, pto.float16, loc=pto.Left); pto.textract(a, m, 16.0, 0)",
     "textract: row", "16.0"),
    ("cube", "g = pto.tile_group(2.0, 16, 16, pto.float16, loc=pto.Mat, producer=pto.PIPE_MTE2, "
             "consumer=pto.PIPE_MTE1)", "pto.tile_group: depth", "2.0"),
    ("vector", "t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec); pto.tload(t, C, stride=16.5)",
     "tload: stride", "16.5"),
])
def test_a_float_where_an_int_is_meant_names_the_operand_and_its_value(make_kernels, section, line, operand,
                                                                       value):
    """An integer operand takes an int: a float constant, whole (16.0) or not (16.5), is a
    CompileError naming the operand and the value, never read as its int."""
    error = compile_line(make_kernels, line, section)
    assert f"{operand}: the float constant {value} cannot be used as int32 (an integer operand takes an int" \
        in str(error), str(error)
    whole = float(value).is_integer()
    assert error.hint.startswith(f"pass {int(float(value))}, not {value}" if whole else "pass an int")


OFFSET_KERNEL = """
@pto.kernel
def k(X, O, off):
    with pto.vector():
        t = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
        pto.tload(t, X + OFFSET)
        pto.tstore(O, t)
"""


def test_scalar_offsets_are_int32_and_wrap_unless_cast_to_int64(make_kernels):
    """docs/aicore.md: off * 4 with off = 2**30 is 2**32, which wraps to 0 in int32 (the
    device's C++ int arithmetic), so the load reads X[0..7]; cast to int64 the offset is 2**32,
    past the 256-element X: an OutOfBoundsError at the tload's line (7)."""
    X, O = pto.alloc_tensor(1024), pto.alloc_tensor(32)
    pto.memcpy_h2d(X, np.arange(256, dtype=np.float32))
    wraps = make_kernels(OFFSET_KERNEL.replace("OFFSET", "off * 4")).k
    pto.launch(wraps, grid=(1,), args=(X, O, 1 << 30))
    pto.sync()
    out = np.zeros(8, np.float32)
    pto.memcpy_d2h(out, O)
    np.testing.assert_array_equal(out, np.arange(8))
    wide = make_kernels(OFFSET_KERNEL.replace("OFFSET", "pto.cast(off, pto.int64) * 4")).k
    with pytest.raises(pto.OutOfBoundsError, match=r"TLOAD at line 7 .* of 'X', which has 256") as info:
        pto.launch(wide, grid=(1,), args=(X, O, 1 << 30))
        pto.sync()
    assert info.value.line == 7


CROSS_SIGNALS = """
@pto.kernel
def k(X, n):
    with pto.cube():
        for i in range(n):
            pto.cross_core_set_flag(0)
        pto.cross_core_set_flag(1)
    with pto.vector():
        pto.cross_core_wait_flag(1)
        for i in range(n):
            pto.cross_core_wait_flag(0)
"""


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_sixteenth_pending_cross_core_signal_is_the_hang_it_is_on_the_device(make_kernels, mode):
    """The AIC sets flag 0 n times before either AIV waits for it (they first wait for flag 1,
    set after the loop). A2/A3's counter of a flag id holds 15 and a 16th set hangs the core
    (CANN's CrossCoreSetFlag constraint; the machine table's cross_core_flag_limit): n = 15
    runs, n = 16 is a DeadlockError at the set's line (7 of the file make_kernels writes) naming
    the flag, the count and AIV0."""
    k = make_kernels(CROSS_SIGNALS).k
    X = pto.alloc_tensor(64)
    pto.launch(k, grid=(1,), args=(X, 15), mode=mode)
    pto.sync()
    with pytest.raises(pto.DeadlockError, match=r"cross_core_set_flag\(0\) at line 7 on AIC of block \(0, 0, 0\) "
                                                r"would be signal 16 of flag 0 to AIV0 .*counter holds 15") as info:
        pto.launch(k, grid=(1,), args=(X, 16), mode=mode)
        pto.sync()
    assert info.value.line == 7


def test_synccheck_reports_a_cross_core_signal_no_unit_took(make_kernels):
    """The AIC signals cross-core event 2, which goes to both AIVs, and only AIV0 waits for it:
    at the block's end AIV1's counter for the event is still set (into the next kernel on
    hardware), a SyncCheckError naming both units, the event and the cross_core_set_flag's line;
    with both AIVs waiting the launch passes."""
    body = ("\n@pto.kernel\ndef k(X, O):\n    with pto.cube():\n        pto.cross_core_set_flag(2)\n"
            "    with pto.vector():\n        if pto.get_subblock_id() == 0:\n"
            "            pto.cross_core_wait_flag(2)\n        ALSO\n")
    X, O = pto.alloc_tensor(1024), pto.alloc_tensor(1024)
    with pytest.raises(pto.SyncCheckError, match=r"cross_core_set_flag\(2\) of AIC to AIV1 in block \(0, 0, 0\) was "
                                                 r"never waited for \(1 unmatched\)") as info:
        pto.launch(make_kernels(body.replace("ALSO", "pass")).k, grid=(1,), args=(X, O), check="synccheck")
        pto.sync()
    assert Path(info.value.file).read_text().splitlines()[info.value.line - 1].strip() == \
        "pto.cross_core_set_flag(2)"
    both = body.replace("ALSO", "else:\n            pto.cross_core_wait_flag(2)")
    pto.launch(make_kernels(both).k, grid=(1,), args=(X, O), check="synccheck")
    pto.sync()


def test_a_size_assigned_twice_is_a_run_time_value_and_the_hint_says_why(make_kernels):
    """`rows = 5; rows = (rows + 7) // 8 * 8`: a variable assigned more than once is a scalar
    register (its value is the last assignment's when the kernel runs), so alloc_tile's rows is
    not a compile-time size although each value is a constant; the hint names that cause and
    the mend (a name of its own), beside the usual ways of giving a size."""
    mod = make_kernels('''
@pto.kernel
def k(X):
    with pto.vector():
        rows = 5
        rows = (rows + 7) // 8 * 8
        t = pto.alloc_tile(rows, 64, pto.float32)
        pto.tload(t, X)
''')
    x = pto.alloc_tensor(8 * 64 * 4, pto.float32)
    with pytest.raises(pto.CompileError, match="rows must be a positive integer known at compile time, not a "
                                               r"value computed while the kernel runs \(int32\)") as info:
        pto.launch(mod.k, grid=(1,), args=(x,))
        pto.sync()
    assert "assigned more than once holds a run-time value" in info.value.hint
    assert "give the final one its own name" in info.value.hint
