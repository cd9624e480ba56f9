"""The AI core's scalar unit on memory (isa/56_scalar_memory.toml): a Vec tile's words
(`x = t[i]`, `t[i] = x`: pto-isa's Tile::GetValue / SetValue, include/pto/common/pto_tile.hpp) and
GM elements through the unit's DataCache (`x = g[i]`, `g[i] = x`, pto.dcci: Ascend C's "Scalar读写
数据" and DataCacheCleanAndInvalid; the cache's rules are pypto_sim/isa/data_cache.py's). Values in
both modes, the cache's stale reads and whole-line write-backs as the documents describe them, the
costs from the machine table's rows, racecheck, and the errors."""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error_at, host_copy, run_both_modes
from pypto_sim.runtime.device import DEFAULT_BLOCK, current_device
from pypto_sim.runtime.launch import simulation_for


# ---------------------------------------------------------------- Vec tiles: GetValue / SetValue
@pto.kernel(sync="manual")
def get_set_value(out, src):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(4, 16, pto.float16)
            pto.tload(t, src)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            t[0] = t[17] + t[1, 2]          # word 17 is row 1, column 1; t[1, 2] is word 18
            t[3, 15] = 70000.0              # float16 overflows to inf when stored
            pto.set_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.tstore(out, t)


def test_a_vec_tiles_words_are_read_and_written_in_its_storage_order():
    """setgetval_kernel.cpp's pattern on a device: after the TLOAD (MTE2 -> S flag) the scalar reads
    words 17 and 18 (row 1, columns 1 and 2 of a 16-wide RowMajor tile), adds them in float16 and
    writes word 0; 70000 is stored as float16's +inf (round to nearest, past 65504)."""
    src = (np.arange(64) * 0.25).astype(np.float16)

    def make():
        return pto.to_device(np.zeros(64, np.float16)), pto.to_device(src)
    got = run_both_modes(get_set_value, make, lambda a: host_copy(a[0], 64, np.float16))
    want = src.copy()
    want[0] = np.float16(src[17] + src[18])
    want[63] = np.inf
    np.testing.assert_array_equal(got, want)


def test_a_read_before_the_load_lands_sees_the_old_word_and_racecheck_names_the_pair(make_kernels):
    """Without set_flag / wait_flag(PIPE_MTE2, PIPE_S) the scalar unit reads the word when it issues,
    before the TLOAD's data lands (the device's stale read); racecheck reports the TLOAD and the
    scalar read of the same tile as unordered."""
    mod = make_kernels('''
@pto.kernel(sync="manual")
def early(out, src):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(1, 8, pto.float32)
            pto.tload(t, src)
            out[0] = t[0]
''')
    make = lambda: (pto.to_device(np.zeros(8, np.float32)), pto.to_device(np.full(8, 5.0, np.float32)))
    args = make()
    pto.launch(mod.early, grid=(1,), args=args)
    pto.sync()
    assert host_copy(args[0], 8, np.float32)[0] == 0.0      # UB's word before the TLOAD landed
    with pytest.raises(pto.RaceError, match=r"SLD_UB at line \d+ \(AIV0 PIPE_S\) is not ordered after "
                                            r"TLOAD at line \d+ \(AIV0 PIPE_MTE2\)"):
        pto.profile(mod.early, grid=(1,), args=make(), check=("race",))


def test_with_auto_sync_a_scalar_read_waits_for_the_load_of_its_tile_only():
    """sync="auto" (PTO-Auto inserts the MTE2 -> S flag): the read of t gets the loaded value, and
    the scalar unit waits as a tile operation on t would, for t's TLOAD only: it reads at that
    TLOAD's completion, before the later TLOAD of another tile completes."""
    @pto.kernel
    def auto(out, src, big_src):
        with pto.vector():
            if pto.get_subblock_id() == 0:
                t = pto.alloc_tile(1, 8, pto.float32)
                big = pto.alloc_tile(64, 64, pto.float32)
                pto.tload(t, src)
                pto.tload(big, big_src)
                out[0] = t[3]
    args = (pto.to_device(np.zeros(8, np.float32)), pto.to_device(np.arange(8, dtype=np.float32)),
            pto.to_device(np.zeros(64 * 64, np.float32)))
    prof = pto.profile(auto, grid=(1,), args=args, check=("race",))
    assert host_copy(args[0], 8, np.float32)[0] == 3.0
    rec, names = prof.records, np.array(prof.pc_name)
    t_done, big_done = rec.complete[names[rec.pc] == "TLOAD"]
    (read_at,) = rec.issue[names[rec.pc] == "SLD_UB"]
    assert read_at == t_done < big_done


def copy_through_the_scalar(dtype, n):
    """out[i] = t[i] (UB -> register -> GM) and u[i] = g[i] (GM -> register -> UB, stored by a TSTORE to
    back) for n elements of dtype."""
    @pto.kernel(sync="manual")
    def copy(out, back, g):
        with pto.vector():
            if pto.get_subblock_id() == 0:
                t = pto.alloc_tile(1, n, dtype)
                u = pto.alloc_tile(1, n, dtype)
                pto.tload(t, g)
                pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
                pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
                for i in range(n):
                    out[i] = t[i]
                    u[i] = g[i]
                pto.set_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
                pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
                pto.tstore(back, u)
    return copy


SPECIAL = {      # dtype: (host values, their host dtype)
    "float32": np.array([0x7FC12345, 0xFFC00001, 0x80000000, 0x7F800000, 0xFF800000, 0x00000001, 0x7F7FFFFF,
                         0x3F800000], np.uint32).view(np.float32),
    "float16": np.array([0x7E01, 0xFE00, 0x8000, 0x7C00, 0xFC00, 0x0001, 0x7BFF, 0x3C00] * 2, np.uint16)
    .view(np.float16),
    # bfloat16 words as the float32 the host reads them as (their bits the top 16)
    "bfloat16": (np.array([0x7FC1, 0xFFC0, 0x8000, 0x7F80, 0xFF80, 0x0001, 0x7F7F, 0x3F80] * 2, np.uint32) << 16)
    .view(np.float32),
    "int8": np.array([-128, -1, 0, 1, 127, 44, -44, 100] * 4, np.int8),
    "uint32": np.array([0, 1, 2**31, 2**32 - 1, 7, 8, 9, 10], np.uint32),
}


@pto.kernel
def int64_words(g, o):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            o[0] = g[0] + 1
            o[1] = g[1]


def test_int64_gm_elements_keep_all_64_bits():
    """The scalar unit is 64-bit (tiling data, offsets): an int64 element past 2**53 loads, adds and
    stores exactly (a register holds an int64's bits, dtypes.WORD_BITS); no Vec tile is int64."""
    def make():
        return pto.to_device(np.array([2**60 + 1, -3], np.int64)), pto.to_device(np.zeros(2, np.int64))
    got = run_both_modes(int64_words, make, lambda a: host_copy(a[1], 2, np.int64))
    assert got.tolist() == [2**60 + 2, -3]


@pytest.mark.parametrize("dtype", sorted(SPECIAL))
def test_scalar_loads_and_stores_keep_every_special_value_bit_for_bit(dtype):
    """NaN payloads (quiet), -0.0, infinities, subnormals and the extremes of each dtype go UB ->
    register -> GM and GM -> register -> UB unchanged (a register holds any of them; the element's
    bytes are its dtype's, exec/gm.py)."""
    values = SPECIAL[dtype]
    n, dt = len(values), getattr(pto, dtype)

    def tensor(host_values):
        t = pto.alloc_tensor(n * dt.itemsize, dt)
        pto.memcpy_h2d(t, host_values)
        return t

    def make():
        return tensor(np.zeros_like(values)), tensor(np.zeros_like(values)), tensor(values)
    got = run_both_modes(copy_through_the_scalar(dt, n), make,
                   lambda a: np.stack([host_copy(a[0], n, values.dtype), host_copy(a[1], n, values.dtype)]))
    want = values.view(np.uint8).tolist()
    assert got[0].view(np.uint8).tolist() == want and got[1].view(np.uint8).tolist() == want


@pto.kernel(sync="manual")
def narrow_stores(out, b, total):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(1, 32, pto.int8)
            t[0] = 300                      # int8 wraps: 300 - 256
            t[1] = -129                     # -129 + 256
            total[0] = t[0] + t[1]          # computed in int32: 44 + 127
            b[0] = -1
            pto.set_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.tstore(out, t)


def test_a_store_converts_to_the_memorys_dtype():
    """SetValue's `*(ptr + offset) = val` converts to the element type as C does: int8 wraps (300 ->
    44, -129 -> 127), uint8 -1 is 255; a load widens to the int32 the scalar unit computes in (171)."""
    def make():
        return (pto.to_device(np.zeros(32, np.int8)), pto.to_device(np.zeros(32, np.uint8)),
                pto.to_device(np.zeros(16, np.int32)))
    got = run_both_modes(narrow_stores, make, lambda a: np.concatenate([host_copy(a[0], 32, np.int8).astype(np.int64),
                                                                  host_copy(a[1], 32, np.uint8).astype(np.int64),
                                                                  host_copy(a[2], 16, np.int32).astype(np.int64)]))
    assert got[:2].tolist() == [44, 127] and got[32] == 255 and got[64] == 171


# ---------------------------------------------------------------- GM through the DataCache
@pto.kernel(sync="manual")
def reread(g, out, new, flush):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(1, 8, pto.int32)
            first = g[0]                                # caches g[0..15]'s line
            pto.tload(t, new)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.set_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE3, 0)
            pto.tstore(g, t)                            # DMA writes g[0..7]: the cache does not see it
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_S, 0)
            if flush:
                pto.dcci(g)
            out[0] = first
            out[8] = g[0]


@pytest.mark.parametrize("flush", [0, 1])
def test_a_cached_line_is_stale_until_dcci(flush):
    """Ascend C's DataCacheCleanAndInvalid: "DMA ... has no cache consistency issue", the scalar
    unit's cache does: g[0] read again after a TSTORE into g returns the cached 1 unless pto.dcci
    dropped the line, when it returns the stored 7."""
    def make():
        return (pto.to_device(np.ones(16, np.int32)), pto.to_device(np.zeros(16, np.int32)),
                pto.to_device(np.full(8, 7, np.int32)), flush)
    got = run_both_modes(reread, make, lambda a: host_copy(a[1], 16, np.int32))
    assert (got[0], got[8]) == (1, 7 if flush else 1)


def test_racecheck_reports_the_stale_read():
    """check="race": the second read of g[0] hits a line GM has changed since it was cached."""
    args = (pto.to_device(np.ones(16, np.int32)), pto.to_device(np.zeros(16, np.int32)),
            pto.to_device(np.full(8, 7, np.int32)), 0)
    with pytest.raises(pto.RaceError, match=r"SLD_GM at line \d+ .* reads g\[0\] from its DataCache, but GM's "
                                            r"value changed since"):
        pto.profile(reread, grid=(1,), args=args, check=("race",))
    args = args[:3] + (1,)
    pto.profile(reread, grid=(1,), args=args, check=("race",))


@pto.kernel(sync="manual")
def store_then_load(g, out, flush):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(1, 8, pto.int32)
            g[2] = 42
            if flush:
                pto.dcci(g + 2)
            pto.set_flag(pto.PIPE_S, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE2, 0)
            pto.tload(t, g)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(out, t)


@pytest.mark.parametrize("flush", [0, 1])
def test_a_scalar_store_reaches_gm_at_its_write_back(flush):
    """SetValue "only modifies the cache line ... and sets it Dirty": a TLOAD after the store sees
    GM's old 0 unless pto.dcci wrote the line back first; either way GM holds 42 after the kernel
    (the unit's dirty lines are written back when its program ends, isa/data_cache.py)."""
    def make():
        return pto.to_device(np.zeros(16, np.int32)), pto.to_device(np.full(8, -1, np.int32)), flush
    got = run_both_modes(store_then_load, make, lambda a: np.concatenate([host_copy(a[0], 16, np.int32)[:8],
                                                                    host_copy(a[1], 8, np.int32)]))
    assert got[2] == 42 and got[8 + 2] == (42 if flush else 0)


def test_racecheck_reports_a_dma_read_of_a_dirty_line():
    """check="race": the TLOAD reads g[2] while AIV0's DataCache holds it dirty."""
    args = pto.to_device(np.zeros(16, np.int32)), pto.to_device(np.zeros(8, np.int32)), 0
    with pytest.raises(pto.RaceError, match=r"TLOAD at line \d+ .* reads bytes of the 64-byte line of \w+\[0\.\.15\] "
                                            r"that the scalar store at line \d+ \(AIV0 of block"):
        pto.profile(store_then_load, grid=(1,), args=args, check=("race",))
    pto.profile(store_then_load, grid=(1,), args=args[:2] + (1,), check=("race",))


@pto.kernel(sync="manual")
def two_writers(g, apart):
    with pto.vector():
        sub = pto.get_subblock_id()
        g[sub * apart] = sub + 10
        pto.dcci(g + sub * apart)


@pytest.mark.parametrize("apart", [1, 16])
def test_write_backs_are_whole_lines(apart):
    """WriteGmByPassDCache: through the DataCache GM is written by whole 64-byte lines, so two
    units storing to one line overwrite each other: with the elements 1 apart only one of 10 (AIV0)
    and 11 (AIV1) survives (the later write-back's line holds the other's old 0); 16 int32 apart
    (another line) both do. racecheck reports the lost bytes."""
    g = pto.to_device(np.zeros(32, np.int32))
    pto.launch(two_writers, grid=(1,), args=(g, apart))
    pto.sync()
    got = host_copy(g, 32, np.int32)
    kept = sorted([int(got[0]), int(got[apart])])
    assert kept == ([0, 11] if apart == 1 else [10, 11]) or kept == [0, 10] and apart == 1
    if apart == 1:
        with pytest.raises(pto.RaceError, match=r"writes back the 64-byte line of g\[0\.\.15\] \(its scalar store at "
                                                r"line \d+\), whole, over g\[[01]\], which changed in GM"):
            pto.profile(two_writers, grid=(1,), args=(pto.to_device(np.zeros(32, np.int32)), apart),
                        check=("race",))


@pto.kernel(sync="manual")
def evict(g, big, out, tot, lines):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(1, 8, pto.int32)
            g[0] = 5
            total = 0
            for i in range(lines):
                total += big[i * 16]                    # one new 64-byte line each
            pto.set_flag(pto.PIPE_S, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_S, pto.PIPE_MTE2, 0)
            pto.tload(t, g)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(out, t)
            tot[0] = total


@pytest.mark.parametrize("lines, seen", [(255, 0), (256, 5)])
def test_the_lru_line_is_evicted_and_written_back_when_the_cache_is_full(lines, seen):
    """16 KB of 64-byte lines is 256 (isa/data_cache.py): with g[0]'s dirty line and 255 other lines
    cached nothing is evicted and the TLOAD sees GM's 0; the 256th other line evicts g[0]'s line,
    the least recently used, whose write-back puts 5 in GM before the TLOAD."""
    big = np.arange(256 * 16, dtype=np.int32)

    def make():
        return (pto.to_device(np.zeros(16, np.int32)), pto.to_device(big), pto.to_device(np.zeros(8, np.int32)),
                pto.to_device(np.zeros(16, np.int32)), lines)
    got = run_both_modes(evict, make, lambda a: np.concatenate([host_copy(a[2], 8, np.int32), host_copy(a[3], 16, np.int32)]))
    assert got[0] == seen and got[8] == sum(range(0, lines * 16, 16))


# ---------------------------------------------------------------- costs
@pto.kernel(sync="manual")
def costs(g):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = g[0]
            b = g[1]
            g[2] = a + b
            pto.dcci(g)


def test_a_miss_costs_the_gm_round_trip_and_a_dcci_the_write_latency():
    """ascend910b: SLD_GM's hit is 2 cycles; the first read misses and adds the LOAD row's 307 (the
    scalar unit waits: the next read issues at its completion), the second hits (2); the dcci
    writes the dirty line back: DCCI's 1 + STORE's 153. GM holds g[0] + g[1] = 1 in g[2]."""
    g = pto.to_device(np.arange(16, dtype=np.int32))
    prof = pto.profile(costs, grid=(1,), args=(g,))
    m = prof.machine
    assert (m.latency("SLD_GM"), m.latency("LOAD"), m.latency("DCCI"), m.latency("STORE")) == (2, 307, 1, 153)
    rec, names = prof.records, np.array(prof.pc_name)
    loads = names[rec.pc] == "SLD_GM"
    assert (rec.complete[loads] - rec.issue[loads]).tolist() == [2 + 307, 2]
    assert rec.issue[loads][1] == rec.complete[loads][0]
    (dcci,) = np.flatnonzero(names[rec.pc] == "DCCI")
    assert rec.complete[dcci] - rec.issue[dcci] == 1 + 153
    assert host_copy(g, 16, np.int32)[2] == 1


@pto.kernel(sync="manual")
def load_then_read(g, out):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(1, 16, pto.int32)
            pto.tload(t, g)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_S, 0)
            out[0] = g[3]


def test_a_line_the_l2_holds_is_filled_without_the_l2_miss_extra():
    """The DataCache fills its line through the L2 as a TLOAD reads it (timing/l2.py): after the
    TLOAD of g brought g's L2 line in, the scalar read misses in the DataCache and hits in the L2,
    2 + 307 - 150 cycles on ascend910b (l2_miss_extra_latency 150)."""
    prof = pto.profile(load_then_read, grid=(1,), args=(pto.to_device(np.arange(16, dtype=np.int32)),
                                                       pto.to_device(np.zeros(16, np.int32))))
    assert prof.machine.l2_miss_extra_latency == 150
    rec, names = prof.records, np.array(prof.pc_name)
    (read,) = np.flatnonzero(names[rec.pc] == "SLD_GM")
    assert rec.complete[read] - rec.issue[read] == 2 + 307 - 150


def test_the_compiled_loop_hands_scalar_memory_to_simpy():
    """The compiled event loop does not run the DataCache: forced onto it, the launch is refused with
    the reason; by default it runs in the SimPy model."""
    dev = current_device()
    handle = dev.launch(costs, (1, 1, 1), DEFAULT_BLOCK, (pto.to_device(np.arange(16, dtype=np.int32)),))
    sim = simulation_for(dev.queue.pop(), dev.hbm.data.copy(), dev.hbm.init.copy(), engine="fast")
    with pytest.raises(pto.LaunchError, match=r"SLD_GM: the scalar unit's own UB and GM accesses, through its "
                                              r"DataCache, run in the SimPy model"):
        sim.run()
    del handle
    dev.launch(costs, (1, 1, 1), DEFAULT_BLOCK, (pto.to_device(np.arange(16, dtype=np.int32)),))
    sim = simulation_for(dev.queue.pop(), dev.hbm.data.copy(), dev.hbm.init.copy())
    sim.run()
    assert sim.engine_used == "simpy"


# ---------------------------------------------------------------- errors
@pto.kernel
def mat_read(g):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        g[0] = m[0]


def test_only_vec_tiles_are_the_scalar_units():
    """pto_tile.hpp's GetValue: static_assert(Loc == TileType::Vec, "Location of tile must be
    Location::Vec."): a Mat tile's word is a compile error at its line."""
    compile_error_at(mat_read, (pto.alloc_tensor(16, pto.float16),),
                     "'m' is a Mat tile, but the scalar unit reads and writes only UB and GM", "g[0] = m[0]")


@pto.kernel
def past_the_end(g, i):
    with pto.vector():
        g[i] = 1.0


def test_an_element_past_the_tensor_is_an_out_of_bounds_error():
    """The device would write whatever lies there: the launch stops before, naming the element."""
    with pytest.raises(pto.OutOfBoundsError, match=r"SST_GM out of bounds at line \d+ on AIV\d .* accessed g\[16\] "
                                                   r"but tensor 'g' has 16 elements"):
        pto.profile(past_the_end, grid=(1,), args=(pto.to_device(np.zeros(16, np.float32)), 16))


@pto.kernel
def reads_unwritten(g, out):
    with pto.vector():
        out[0] = g[3]


def test_initcheck_reports_a_scalar_read_of_an_unwritten_element():
    with pytest.raises(pto.UninitializedReadError, match=r"scalar read g\[3\] at line \d+ on AIV\d"):
        pto.profile(reads_unwritten, grid=(1,), args=(pto.alloc_tensor(16), pto.alloc_tensor(16)),
                    check=("initcheck",))


@pto.kernel
def dcci_of_a_tile(g):
    with pto.vector():
        t = pto.alloc_tile(1, 8, pto.float32)
        pto.dcci(t)


@pto.kernel
def dcci_entire_at_run_time(g, whole):
    with pto.vector():
        pto.dcci(g, entire=whole == 1)


def test_dcci_takes_a_gm_tensor_and_a_compile_time_mode():
    """DataCacheCleanAndInvalid's CacheLine is a template argument and its tensor a GlobalTensor (the
    CACHELINE_UB destination is reserved): a tile, or a mode known only at run time, is a compile error."""
    compile_error_at(dcci_of_a_tile, (pto.alloc_tensor(32),), "pto.dcci: 't' is not in GM", "pto.dcci(t)")
    compile_error_at(dcci_entire_at_run_time, (pto.alloc_tensor(32), 1),
                     "pto.dcci: entire= must be True or False, known when the kernel compiles",
                     "pto.dcci(g, entire=whole == 1)")


def test_values_off_refuses_a_scalar_read_of_what_a_tile_store_writes():
    """values=False skips what TSTORE writes, so a scalar read of that tensor would steer the kernel with
    a value that is not the real one (runtime/skip_values.py): a LaunchError naming the read."""
    args = (pto.to_device(np.ones(16, np.int32)), pto.to_device(np.zeros(16, np.int32)),
            pto.to_device(np.full(8, 7, np.int32)), 1)
    with pytest.raises(pto.LaunchError, match=r"values=False skips tile values, but SLD_GM at line \d+ of kernel "
                                              r"'reread' reads a tensor the TSTORE at line \d+ writes"):
        pto.profile(reread, grid=(1,), args=args, values=False)
