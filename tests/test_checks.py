"""Sanitizers: each check shows its error on a buggy kernel and stays silent on the fixed twin,
with the message naming what the user needs (lines, warps, lanes, cycles, the fix)."""
import os
import runpy
import subprocess
import sys

from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto


# ---------------------------------------------------------------- racecheck
from simt_kernels import share_block_barrier as share_with_block_barrier  # noqa: E402
from simt_kernels import share_warp_barrier as share_with_warp_barrier  # noqa: E402


def _share(kernel, check="racecheck"):
    d_src, d_out = pto.alloc_tensor(128 * 4), pto.alloc_tensor(256 * 4)
    pto.memcpy_h2d(d_src, np.arange(128, dtype=np.float32))
    return pto.profile(kernel, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_out), check=check), d_out


def test_racecheck_flags_the_articles_barrier_example():
    """barrier() orders one warp: warps 4-7 read shared[] while warps 0-3 have not stored yet.
    racecheck names both accesses and says which barrier orders them."""
    with pytest.raises(pto.RaceError) as err:
        _share(share_with_warp_barrier)
    e = err.value
    text = str(e)
    assert "race on shared[" in text and "(L1)" in text
    assert "STORE_L1" in text and "LOAD_L1" in text
    assert "warp 4" in text or "warp 5" in text or "warp 6" in text or "warp 7" in text
    assert "cycle" in text and "lane" in text
    assert "pto.barrier_block()" in e.hint and "barrier() orders one warp only" in e.hint
    assert e.line != e.other_line


def test_racecheck_is_silent_with_barrier_block():
    prof, d_out = _share(share_with_block_barrier)
    assert np.array_equal(d_out.numpy(), np.tile(np.arange(128, dtype=np.float32), 2))


def test_racecheck_across_blocks():
    """Block 1 reads the word block 0 writes: blocks are never ordered inside one kernel."""
    @pto.kernel
    def neighbours(buf, n):
        i = pto.get_global_id()
        if i < n:
            pto.store(buf + i, 1.0)
            if pto.get_local_id() == 0 and i > 0:
                pto.store(buf + i - 1, pto.load(buf + i - 1) + 1.0)

    @pto.kernel
    def own_words(buf, n):
        i = pto.get_global_id()
        if i < n:
            pto.store(buf + i, 1.0)

    d = pto.alloc_tensor(64 * 4)
    with pytest.raises(pto.RaceError, match="blocks are not ordered") as err:
        pto.profile(neighbours, grid=(2, 1, 1), block=(32, 1, 1), args=(d, 64), check="racecheck")
    assert "buf[31]" in str(err.value) or "d[31]" in str(err.value)
    pto.profile(own_words, grid=(2, 1, 1), block=(32, 1, 1), args=(d, 64), check="racecheck")


@pto.kernel
def read_then_update(x, out):
    """Warp 1 (lane 32) reads x[0]; warp 0 (lane 0) reads it later, then writes it; no
    barrier_block() orders warp 1's read and warp 0's write."""
    lid = pto.get_local_id()
    if lid == 32:
        out[1] = x[0]
    if lid == 0:
        acc = 0.0
        for k in range(20):
            acc = acc + 1.0
        v = x[0]
        x[0] = v + acc


@pto.kernel
def update_then_read(x, out):
    """The same accesses in the other order: warp 0 (lane 0) reads x[0] early, warp 1 (lane 32)
    reads it after its wait, then writes it."""
    lid = pto.get_local_id()
    if lid == 0:
        out[0] = x[0]
    if lid == 32:
        acc = 0.0
        for k in range(20):
            acc = acc + 1.0
        v = x[0]
        x[0] = v + acc


@pytest.mark.parametrize("kernel, reader, writer", [(read_then_update, 1, 0), (update_then_read, 0, 1)])
def test_racecheck_sees_an_earlier_readers_race_when_the_writer_read_last(kernel, reader, writer):
    """A write races with every unordered read by another warp, also when the writer's own read
    came between (the word's shadow keeps the last two distinct readers): warp `writer`'s write
    of x[0] is reported against warp `reader`'s read, whichever read first."""
    d_x, d_o = pto.alloc_tensor(16), pto.alloc_tensor(16)
    pto.memcpy_h2d(d_x, np.zeros(4, np.float32))
    with pytest.raises(pto.RaceError, match="read-write race on d_x\\[0\\]") as err:
        pto.profile(kernel, grid=(1,), block=(64,), args=(d_x, d_o), check="racecheck")
    assert (err.value.warp, err.value.other_warp) == (writer, reader)
    assert "make the read at line" in err.value.hint and "happen before the write at line" in err.value.hint


@pto.kernel
def other_block_read_before_a_barrier(x, out):
    """Block 1 reads x[0]; in block 0, warp 1 reads it, barrier_block(), then warp 0 reads it
    and writes it: the write races with block 1's read (nothing orders two blocks)."""
    lid = pto.get_local_id()
    b = pto.get_block_id()
    if b == 1:
        if lid == 0:
            out[1] = x[0]
    if b == 0:
        if lid == 32:
            acc = 0.0
            for i in range(40):
                acc = acc + 1.0
            out[2] = x[0] + acc
    if b == 0:
        pto.barrier_block()
        if lid == 0:
            v = x[0]
            x[0] = v + 1.0


def test_racecheck_keeps_another_blocks_read_past_a_barrier_of_the_writers_block():
    """The readers before block 0's write, in time: block 1, block 0 warp 1, then (after block
    0's barrier) block 0 warp 0, the writer. Warp 1's read, ordered before warp 0's by the
    barrier, does not displace block 1's from the second slot, so the write is reported against
    block 1's read."""
    d_x, d_o = pto.alloc_tensor(16), pto.alloc_tensor(16)
    pto.memcpy_h2d(d_x, np.zeros(4, np.float32))
    with pytest.raises(pto.RaceError, match="blocks are not ordered") as err:
        pto.profile(other_block_read_before_a_barrier, grid=(2,), block=(64,), args=(d_x, d_o), check="racecheck")
    assert (err.value.block, err.value.other_block) == (0, 1)


TILE_READ = """
@pto.kernel
def read_tile(a, o):
    t = pto.alloc_local(32)
    pto.async_load(t, a, 128)
    if WAIT:
        pto.wait_all()
    i = pto.get_lane_id()
    pto.store(o + i, pto.load(t + i))
WAIT = {wait}
"""


def test_racecheck_lane_code_reading_a_tile_still_being_loaded(make_kernels):
    """Lane code reads the tile while the async load is still filling it: a race (and stale
    data); after wait_all() it is ordered, and the values are right."""
    a = np.arange(32, dtype=np.float32)
    d_a, d_o = pto.alloc_tensor(128), pto.alloc_tensor(128)
    pto.memcpy_h2d(d_a, a)
    with pytest.raises(pto.RaceError, match="wait_all"):
        pto.profile(make_kernels(TILE_READ.format(wait=False)).read_tile, grid=(1, 1, 1),
                    block=(32, 1, 1), args=(d_a, d_o), check="racecheck")
    pto.profile(make_kernels(TILE_READ.format(wait=True)).read_tile, grid=(1, 1, 1),
                block=(32, 1, 1), args=(d_a, d_o), check="racecheck")
    assert np.array_equal(d_o.numpy(), a)


# ---------------------------------------------------------------- initcheck
@pto.kernel
def copy(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i))


def test_initcheck_reports_reads_of_never_written_memory():
    d_a, d_o = pto.alloc_tensor(64 * 4), pto.alloc_tensor(64 * 4)
    with pytest.raises(pto.UninitializedReadError) as err:
        pto.profile(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o, 64), check="initcheck")
    assert "read d_a[" in str(err.value) and "never written" in str(err.value)
    assert "memcpy_h2d" in err.value.hint
    pto.memcpy_h2d(d_a, np.ones(64, np.float32))
    pto.profile(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o, 64), check="initcheck")
    # what a kernel stored counts as written for the next kernel
    pto.profile(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_o, d_a, 64), check="initcheck")


def test_initcheck_partial_copy_names_the_first_unwritten_word():
    """Only the first half was written by an earlier kernel: lane 32 reads d_src[32]."""
    d_src, d_dst = pto.alloc_tensor(64 * 4), pto.alloc_tensor(64 * 4)
    d_half = pto.alloc_tensor(32 * 4)
    pto.memcpy_h2d(d_half, np.ones(32, np.float32))
    pto.profile(copy, grid=(1, 1, 1), block=(32, 1, 1), args=(d_half, d_src, 32))
    with pytest.raises(pto.UninitializedReadError, match=r"lane 32, cycle \d+\) read d_src\[32\]"):
        pto.profile(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_src, d_dst, 64), check="all")


# ---------------------------------------------------------------- synccheck
def test_synccheck_barrier_block_reached_by_part_of_a_warp(make_kernels):
    mod = make_kernels("""
@pto.kernel
def partial(o):
    lid = pto.get_local_id()
    if lid < 16:
        pto.barrier_block()
    pto.store(o + lid, 1.0)

@pto.kernel
def whole(o):
    lid = pto.get_local_id()
    pto.barrier_block()
    pto.store(o + lid, 1.0)
""")
    d = pto.alloc_tensor(32 * 4)
    with pytest.raises(pto.SyncCheckError, match=r"only some lanes of block 0 warp 0 \(active lanes 0-15 of lanes 0-31\)"):
        pto.profile(mod.partial, grid=(1, 1, 1), block=(32, 1, 1), args=(d,), check="synccheck")
    pto.profile(mod.whole, grid=(1, 1, 1), block=(32, 1, 1), args=(d,), check="synccheck")


def test_synccheck_names_the_warp_that_skipped_the_barrier(make_kernels):
    """Without synccheck this hang is a DeadlockError at the end; with it, the warp that finished
    without reaching the barrier is named the moment it does."""
    mod = make_kernels("""
@pto.kernel
def half(o):
    lid = pto.get_local_id()
    if lid < 32:
        pto.barrier_block()
    pto.store(o + lid, 1.0)
""")
    d = pto.alloc_tensor(64 * 4)
    with pytest.raises(pto.SyncCheckError, match=r"warp 1 of block 0 finished without reaching the barrier_block\(\) at line \d+ where warps 0 wait"):
        pto.profile(mod.half, grid=(1, 1, 1), block=(64, 1, 1), args=(d,), check="synccheck")
    with pytest.raises(pto.DeadlockError):
        pto.profile(mod.half, grid=(1, 1, 1), block=(64, 1, 1), args=(d,))


def test_synccheck_unmatched_set_flag(make_kernels):
    mod = make_kernels("""
@pto.kernel
def flags(a):
    t = pto.alloc_local(32)
    pto.async_load(t, a, 128)
    pto.set_flag("load", "vector", 1)
    if PAIRED:
        pto.wait_flag("load", "vector", 1)
    pto.tadds(t, t, 1.0, 32)
PAIRED = False

@pto.kernel
def paired(a):
    t = pto.alloc_local(32)
    pto.async_load(t, a, 128)
    pto.set_flag("load", "vector", 1)
    pto.wait_flag("load", "vector", 1)
    pto.tadds(t, t, 1.0, 32)
""")
    d = pto.alloc_tensor(128)
    with pytest.raises(pto.SyncCheckError, match=r"set_flag\('load', 'vector', 1\) in block 0 was never waited for") \
            as info:
        pto.profile(mod.flags, grid=(1, 1, 1), block=(32, 1, 1), args=(d,), check="synccheck")
    assert Path(info.value.file).read_text().splitlines()[info.value.line - 1].strip() == \
        'pto.set_flag("load", "vector", 1)'        # the report points at the set_flag
    pto.profile(mod.paired, grid=(1, 1, 1), block=(32, 1, 1), args=(d,), check="synccheck")


# ---------------------------------------------------------------- configuration
def test_unknown_check_is_a_launch_error():
    d_a, d_o = pto.alloc_tensor(128), pto.alloc_tensor(128)
    with pytest.raises(pto.LaunchError, match="unknown check 'racechek'"):
        pto.launch(copy, grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_o, 32), check="racechek")
    for odd in (True, 1, ("racecheck", 2)):          # not names: a LaunchError, not a TypeError
        with pytest.raises(pto.LaunchError, match=r"give a check's name, 'all', or a tuple of names"):
            pto.launch(copy, grid=(1, 1, 1), block=(32, 1, 1), args=(d_a, d_o, 32), check=odd)


def test_pypto_check_environment_variable_checks_unmodified_programs(tmp_path, monkeypatch, capsys):
    """PYPTO_CHECK=racecheck turns the check on for a program that never asks for it: run
    without it (here, in this process) it prints "no error"; run as a process with it set, it
    exits with a RaceError."""
    script = tmp_path / "prog.py"
    script.write_text(
        "import numpy as np, pypto_sim as pto\n"
        "@pto.kernel\n"
        "def k(src, out):\n"
        "    lid = pto.get_local_id()\n"
        "    shared = pto.alloc_local(128)\n"
        "    if lid < 128:\n"
        "        pto.store(shared + lid, pto.load(src + lid))\n"
        "    pto.barrier()\n"
        "    pto.store(out + lid, pto.load(shared + lid % 128))\n"
        "s, o = pto.alloc_tensor(512), pto.alloc_tensor(1024)\n"
        "pto.memcpy_h2d(s, np.zeros(128, np.float32))\n"
        "pto.launch(k, grid=(1, 1, 1), block=(256, 1, 1), args=(s, o))\n"
        "pto.sync()\n"
        "print('no error')\n")
    monkeypatch.delenv("PYPTO_CHECK", raising=False)
    runpy.run_path(str(script), run_name="__main__")
    assert "no error" in capsys.readouterr().out
    env = dict(os.environ, PYPTO_CHECK="racecheck")
    checked = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert checked.returncode != 0 and "RaceError" in checked.stderr


def test_cycle_limit_stops_a_kernel_that_never_ends(make_kernels):
    """The error names the line the warp is at, not the kernel's: after the MOV (cycle 0) and
    the LOOP (1) the warp issues the loop's ADD, LOOP_CONT and ENDLOOP one a cycle, the ADD at
    cycles 2, 5, 8, ...; at the limit 5000 = 2 + 3 x 1666 the ADD of `x = x + 1.0` (line 7 of
    the generated module) is the instruction it issues next."""
    mod = make_kernels("""
@pto.kernel
def forever(o):
    x = 0.0
    while True:
        x = x + 1.0
    pto.store(o, x)
""")
    d = pto.alloc_tensor(128)
    with pytest.raises(pto.SimulationLimitError, match="cycle limit of 5000 cycles") as err:
        pto.profile(mod.forever, grid=(1, 1, 1), block=(32, 1, 1), args=(d,), max_cycles=5000)
    assert "max_cycles" in err.value.hint
    assert err.value.line == 7
    assert "(1 warp unfinished, at line 7 (`x = x + 1.0`): block 0 warp 0)" in str(err.value)


# ---------------------------------------------------------------- memcheck and lifetime twins
def test_free_while_queued_is_use_after_free_and_sync_first_is_fine():
    """free() while a queued kernel uses the tensor: reported at the next sync, naming the
    tensor, the kernel and the fix; syncing before free() is the fixed twin."""
    d_a, d_o = pto.alloc_tensor(64 * 4), pto.alloc_tensor(64 * 4)
    pto.memcpy_h2d(d_a, np.ones(64, np.float32))
    pto.launch(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_a, d_o, 64))
    d_a.free()
    with pytest.raises(pto.UseAfterFreeError) as err:
        pto.sync()
    assert "'d_a'" in str(err.value) and "kernel 'copy'" in str(err.value)
    assert "pto.sync()" in err.value.hint and "pto.Tensor" in err.value.hint
    d_b = pto.alloc_tensor(64 * 4)
    pto.memcpy_h2d(d_b, np.ones(64, np.float32))
    pto.launch(copy, grid=(1, 1, 1), block=(64, 1, 1), args=(d_b, d_o, 64))
    pto.sync()
    d_b.free()
    assert np.all(d_o.numpy() == 1.0)


def test_memcheck_names_the_local_buffer_and_its_bounds(make_kernels):
    """A lane indexing past an alloc_local buffer: the buffer, its size and the lane are named;
    the guarded twin is clean."""
    mod = make_kernels("""
@pto.kernel
def spill(o):
    lid = pto.get_local_id()
    buf = pto.alloc_local(32)
    pto.store(buf + lid, 1.0)
    pto.store(o + lid, pto.load(buf + lid))

@pto.kernel
def guarded(o):
    lid = pto.get_local_id()
    buf = pto.alloc_local(32)
    if lid < 32:
        pto.store(buf + lid, 1.0)
    pto.barrier_block()          # warp 1 reads what warp 0 wrote (racecheck insists)
    pto.store(o + lid, pto.load(buf + lid % 32))
""")
    d = pto.alloc_tensor(64 * 4)
    with pytest.raises(pto.OutOfBoundsError) as err:
        pto.profile(mod.spill, grid=(1, 1, 1), block=(64, 1, 1), args=(d,))
    e = err.value
    assert (e.warp, e.lane, e.offset, e.count) == (1, 0, 32, 32)
    assert "buf[32]" in str(e) and "L1 buffer 'buf' has 32 elements" in str(e)
    pto.profile(mod.guarded, grid=(1, 1, 1), block=(64, 1, 1), args=(d,), check="all")
