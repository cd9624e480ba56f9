"""The article's tile instructions are block-level: warp 0 of each block issues them and the
other warps skip them (docs/tiles.md). One that only some warps reach, or whose operands differ
between warps, would silently not do what the kernel says (a copy "by warp 1" that copied
nothing), so it is a CompileError at its line naming the statement that makes the warps
differ (frontend/block_level.py). Where every warp goes with operands they agree on, tile
instructions compile and run as before."""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error_at

REFUSED = {
    "under_a_warp_condition": ('''
@pto.kernel
def k(A, O):
    tl = pto.alloc_local(64)
    if pto.get_warp_id() == 1:  # DECIDES
        pto.async_load(tl, A, 256)
''', "pto.async_load(tl, A, 256)"),
    "under_a_lane_condition": ('''
@pto.kernel
def k(A, O):
    tl = pto.alloc_local(64)
    if pto.get_local_id() >= 32:  # DECIDES
        pto.store(O, tl, 256)
''', "pto.store(O, tl, 256)"),
    "after_an_early_return": ('''
@pto.kernel
def k(A, O, n):
    tl = pto.alloc_local(64)
    if pto.get_global_id() >= n:  # DECIDES
        return
    pto.async_load(tl, A, 256)
''', "pto.async_load(tl, A, 256)"),
    "in_a_loop_of_lane_trips": ('''
@pto.kernel
def k(A, O):
    tl = pto.alloc_local(64)
    for j in range(pto.get_lane_id()):  # DECIDES
        pto.texp(tl, tl, 64)
''', "pto.texp(tl, tl, 64)"),
    "after_a_lane_continue": ('''
@pto.kernel
def k(A, O, n):
    tl = pto.alloc_local(64)
    for j in range(n):
        if pto.get_local_id() == j:  # DECIDES
            continue
        pto.texp(tl, tl, 64)
''', "pto.texp(tl, tl, 64)"),
    "a_warp_varying_operand": ('''
@pto.kernel
def k(A, O):
    tl = pto.alloc_local(16)
    pto.async_load(tl, A + pto.get_warp_id() * 16, 64)
''', "pto.async_load(tl, A + pto.get_warp_id() * 16, 64)"),
    "a_helper_inlined_under_a_warp_condition": ('''
@pto.kernel
def load_it(tl, A):
    pto.async_load(tl, A, 256)


@pto.kernel
def k(A, O):
    tl = pto.alloc_local(64)
    if pto.get_warp_id() == 1:  # DECIDES
        load_it(tl, A)
''', "pto.async_load(tl, A, 256)"),
    "on_the_side_warp_0_never_takes": ('''
@pto.kernel
def k(A, O):
    tl = pto.alloc_local(64)
    if pto.get_warp_id() != 0:  # DECIDES
        pto.async_load(tl, A, 256)
''', "pto.async_load(tl, A, 256)"),
    "a_helper_result_that_differs_between_warps": ('''
@pto.kernel
def warp_offset():
    return pto.get_warp_id() * 16


@pto.kernel
def k(A, O):
    tl = pto.alloc_local(16)
    pto.async_load(tl, A + warp_offset(), 64)
''', "pto.async_load(tl, A + warp_offset(), 64)"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_tile_instruction_only_some_warps_reach_is_refused(make_kernels, case):
    """Each case's tile instruction is a CompileError at its own line: the message names the
    if / for marked DECIDES, whose condition or trip count may differ between warps, or, for
    an operand that differs, the operand."""
    source, culprit = REFUSED[case]
    mod = make_kernels(source)
    text = open(mod.__file__).read().splitlines()
    decides = [i + 1 for i, t in enumerate(text) if t.endswith("# DECIDES")]
    message = (f"only some warps of a block may reach it: line {decides[0]} decides per warp or per lane"
               if decides else "may differ between the warps of a block, but warp 0 alone issues the instruction")
    args = (pto.alloc_tensor(256, pto.float32), pto.alloc_tensor(256, pto.float32)) + \
        ((4,) if mod.k.fn_ast.args.args[-1].arg == "n" else ())
    compile_error_at(mod.k, args, message, culprit)


def test_where_every_warp_goes_tile_instructions_run(make_kernels):
    """Conditions every warp of a block agrees on (a scalar argument, the block id) and
    wait_all() under a warp condition (each warp waits at its own) compile and run: 2 blocks of
    64 lanes copy A's 64 elements into O and add 1, block 0 only when flag is 1."""
    mod = make_kernels('''
@pto.kernel
def k(A, O, flag):
    tl = pto.alloc_local(64)
    if flag == 1 and pto.get_block_id() == 0:
        pto.async_load(tl, A, 256)
        pto.tadds(tl, tl, 1.0, 64)
        pto.store(O, tl, 256)
    if pto.get_warp_id() == 0:
        pto.wait_all()
    pto.barrier_block()
''')
    a = np.arange(64, dtype=np.float32)
    A, O = pto.alloc_tensor(256, pto.float32), pto.alloc_tensor(256, pto.float32)
    pto.memcpy_h2d(A, a)
    pto.memcpy_h2d(O, np.zeros(64, np.float32))
    pto.launch(mod.k, grid=(2, 1, 1), block=(64, 1, 1), args=(A, O, 1))
    pto.sync()
    out = np.empty(64, np.float32)
    pto.memcpy_d2h(out, O)
    np.testing.assert_array_equal(out, a + 1)


def test_what_warp_0_takes_and_helper_results_every_warp_agrees_on_run(make_kernels):
    """`if pto.get_local_id() == 0:` holds in the block's first lane, warp 0's, so warp 0 issues
    the tile instructions under it (the usual "one thread does the block's work"); a helper
    returning a block-id offset, or a tile it allocates, gives every warp the same value. Two
    blocks of 64 lanes each copy their 16 elements of A (offset 16 x block id) into O, plus 1."""
    mod = make_kernels('''
@pto.kernel
def offset_of(b):
    return b * 16


@pto.kernel
def new_tile():
    return pto.alloc_local(16)


@pto.kernel
def k(A, O):
    tl = new_tile()
    o = offset_of(pto.get_block_id())
    if pto.get_local_id() == 0:
        pto.async_load(tl, A + o, 64)
        pto.tadds(tl, tl, 1.0, 16)
        pto.store(O + o, tl, 64)
    pto.wait_all()
''')
    a = np.arange(32, dtype=np.float32)
    A, O = pto.alloc_tensor(128, pto.float32), pto.alloc_tensor(128, pto.float32)
    pto.memcpy_h2d(A, a)
    pto.launch(mod.k, grid=(2, 1, 1), block=(64, 1, 1), args=(A, O))
    pto.sync()
    out = np.empty(32, np.float32)
    pto.memcpy_d2h(out, O)
    np.testing.assert_array_equal(out, a + 1)


def test_an_id_bound_to_a_name_once_decides_as_the_id_does(make_kernels):
    """`tid = pto.get_local_id()` then `if tid == 0:` is the inline condition's (CUDA's usual
    spelling): warp 0 takes it, so the kernel compiles; bound to the warp id and tested for 1,
    warp 0 never takes it, a CompileError as inline."""
    ok = make_kernels('''
@pto.kernel
def k(A, O):
    tl = pto.alloc_local(64)
    tid = pto.get_local_id()
    if tid == 0:
        pto.async_load(tl, A, 256)
    pto.wait_all()
''')
    ok.k.program_for((pto.alloc_tensor(256, pto.float32), pto.alloc_tensor(256, pto.float32)))
    bad = make_kernels('''
@pto.kernel
def k(A, O):
    tl = pto.alloc_local(64)
    wid = pto.get_warp_id()
    if wid == 1:  # DECIDES
        pto.async_load(tl, A, 256)
''')
    line = next(i + 1 for i, t in enumerate(open(bad.__file__).read().splitlines()) if t.endswith("# DECIDES"))
    compile_error_at(bad.k, (pto.alloc_tensor(256, pto.float32), pto.alloc_tensor(256, pto.float32)),
                     f"line {line} decides per warp or per lane", "pto.async_load(tl, A, 256)")
