"""TGATHERB, pto.tgatherb(dst, src, offsets) (pto-isa TGATHERB.md, A2/A3
include/pto/npu/a2a3/TGatherB.hpp): dst's valid region gathered in 32-byte blocks, block j of
row i the 32 bytes of src at byte offset offsets(i, j) from src's start. Tiny kernels with values
derived by hand, the executors agreeing, an offset naming no block of src stopping the launch
with one error on every path, the header's static_asserts and the unbuilt tail path as compile
errors, and the cost from the machine table's entry."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.exec import reference
from pypto_sim.exec.lane import executor
from pypto_sim.isa.sort_modes import GATHER_BLOCKS, ITEM_SHIFT

from engine_compare import assert_engines_agree, both_executors, dev_array, error_outcomes

GATHERB = """
@pto.kernel
def k(S, F, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({sr}, {sc}, pto.{dt}, loc=pto.Vec)
            off = pto.alloc_tile({dr}, {oc}, pto.uint32, loc=pto.Vec)
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt}, loc=pto.Vec)
            pto.tload(src, S)
            pto.tload(off, F)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tgatherb(dst, src, off)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


def _launch(make_kernels, src, offsets, dst_cols):
    """The gather kernel over a dst of offsets' rows x dst_cols from a whole src tile holding
    `src` (2-D, its dtype the data's), `offsets` the byte offsets (rows x blocks); returns
    (kernel, args, out tensor)."""
    dt = src.dtype.name
    rows, blocks = offsets.shape
    oc = max(blocks, 8)                    # a uint32 row of at least 32 bytes
    grid = np.zeros((rows, oc), np.uint32)
    grid[:, :blocks] = offsets
    mod = make_kernels(GATHERB.format(sr=src.shape[0], sc=src.shape[1], dt=dt, dr=rows, dc=dst_cols, oc=oc))
    out = pto.alloc_tensor(rows * dst_cols * src.dtype.itemsize, getattr(pto, dt))
    return mod.k, (dev_array(src, getattr(pto, dt)), dev_array(grid, pto.uint32), out), out


def _read(out, shape, dtype):
    got = np.empty(shape, dtype)
    pto.memcpy_d2h(got, out)
    return got


def test_float32_blocks_are_eight_elements_taken_at_their_byte_offsets(make_kernels):
    """src 1 x 64 float32 with src[e] = e holds 8 blocks of 8 floats (block b: 8b .. 8b + 7). A
    1 x 64 dst is one 256-byte repeat of 8 blocks; byte offsets 32 x (7, 0, 3, 3, 1, 6, 2, 5) give
    dst block j = src block o_j: 56..63, 0..7, 24..31, 24..31, 8..15, 48..55, 16..23, 40..47 (a
    block may be taken twice). The timing and functional modes, each with the numba and the
    reference executor, write the same bytes."""
    order = [7, 0, 3, 3, 1, 6, 2, 5]
    src = np.arange(64, dtype=np.float32)[None, :]
    kernel, args, out = _launch(make_kernels, src, 32 * np.array([order]), 64)
    images = both_executors(kernel, (1, 1, 1), args)
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    pto.launch(kernel, grid=(1,), args=args, check="all")
    pto.sync()
    want = np.concatenate([np.arange(8 * b, 8 * b + 8) for b in order])
    np.testing.assert_array_equal(_read(out, 64, np.float32), want)


def test_int8_blocks_are_32_bytes_and_each_row_reads_its_own_offsets(make_kernels):
    """int8 blocks are 32 elements. src 1 x 512 int8 with src[e] = e % 128 (16 blocks: block b
    is 32b .. 32b + 31 mod 128); dst 2 x 256 (one repeat a row), row 0's offsets the blocks 15 ..
    8 (byte 32 x (15 - j)), row 1's the blocks 0 .. 7 (32 j): row 0 is blocks 15, 14, ..., 8 of
    src and row 1 its first 256 bytes."""
    src = (np.arange(512) % 128).astype(np.int8)[None, :]
    offsets = 32 * np.array([[15 - j for j in range(8)], list(range(8))])
    kernel, args, out = _launch(make_kernels, src, offsets, 256)
    pto.launch(kernel, grid=(1,), args=args, check="all")
    pto.sync()
    flat = src.ravel()
    want = np.stack([np.concatenate([flat[32 * b:32 * b + 32] for b in range(15, 7, -1)]), flat[:256]])
    np.testing.assert_array_equal(_read(out, (2, 256), np.int8), want)


def test_special_values_move_bit_for_bit(make_kernels):
    """A block gather moves words: src 1 x 64 float32 whose block 3 is (NaN, inf, -inf, -0.0, 0.0,
    1e-45, -2.5, a NaN of payload 1) and the rest 0..; dst's blocks 0 and 7 both take block 3
    (offset 96): their bits are block 3's, the zeros' signs, the subnormal and the NaN's payload
    kept."""
    src = np.arange(64, dtype=np.float32)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -2.5, 0.0], np.float32)
    special[7] = np.uint32(0x7FC00001).view(np.float32)
    src[24:32] = special
    offsets = 32 * np.array([[3, 1, 2, 0, 4, 5, 6, 3]])
    kernel, args, out = _launch(make_kernels, src[None, :], offsets, 64)
    pto.launch(kernel, grid=(1,), args=args, check="all")
    pto.sync()
    got = _read(out, 64, np.float32).view(np.uint32)
    np.testing.assert_array_equal(got[:8], special.view(np.uint32))
    np.testing.assert_array_equal(got[56:], special.view(np.uint32))


@pytest.mark.parametrize("bad, what", [(33, "is not a multiple of 32"), (256, "reaches past the 256 bytes of 'src'"),
                                       (4294967264, "reaches past the 256 bytes of 'src'")])
def test_an_offset_naming_no_block_of_src_stops_the_launch_on_every_path(make_kernels, bad, what):
    """src is 1 x 64 float32, 256 bytes: blocks at 0, 32, ..., 224. Offset (0, 5) is 33 (not a
    block boundary: vgatherb.md asks 32-byte-aligned blocks), 256 (one block past src) or 2^32 -
    32 (past any UB). pto-isa leaves such offsets target-defined, so every path stops with one
    OutOfBoundsError naming the offset and its place (line 14: the file make_kernels writes, an
    import line then GATHERB), before anything is written."""
    offsets = 32 * np.arange(8, dtype=np.int64)[None, :]
    offsets[0, 5] = bad
    kernel, args, _out = _launch(make_kernels, np.zeros((1, 64), np.float32), offsets, 64)
    got = error_outcomes(kernel, args)
    assert len(set(got.values())) == 1, got
    kind, text = next(iter(got.values()))
    assert kind is pto.OutOfBoundsError
    assert f"TGATHERB at line 14 on AIV0 of block (0, 0, 0): byte offset {bad} at (0, 5) of 'off' {what}" in text
    assert "keep every offset a multiple of 32 in [0, 224]" in text


@pytest.mark.parametrize("tiles, call, message", [
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 32, pto.float32, loc=pto.Vec)",
     "pto.tgatherb(d, s, f)", "not whole 256-byte repeats of 64"),
    ("s = pto.alloc_tile(1, 64, pto.int32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)",
     "pto.tgatherb(d, s, f)", "a block gather across dtypes is not built"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\n"
     "i = pto.alloc_tile(1, 8, pto.int32, loc=pto.Vec)", "pto.tgatherb(d, s, i)", "reads them as uint32"),
    ("s = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec)",
     "pto.tgatherb(d, s, f)", "must hold one for each of the 8 blocks of 'd''s 2 valid rows"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)",
     "pto.tgatherb(s, s, f)", "'s' shares words with 's'"),
    ("s = pto.alloc_tile(1, 64, pto.float32, loc=pto.Vec)\nd = pto.alloc_tile(16, 64, pto.float16, loc=pto.Mat)",
     "pto.tgatherb(d, s, f)", "dst.*Vec|Vec.*dst"),
])
def test_operand_errors_cite_the_header(make_kernels, tiles, call, message):
    """TGatherB.hpp's asserts and what pypto_sim does not build, each a CompileError: valid
    columns past whole 256-byte repeats (A2/A3's GatherBlockTail), data of two dtypes (the
    simulator's tiles hold elements), offsets not uint32, an offset tile without one offset per
    block of each valid row, dst sharing words with a tile A2/A3 still reads, a tile outside Vec.
    (f: a 1 x 8 uint32 tile, the eight offsets of one 256-byte repeat.)"""
    body = "f = pto.alloc_tile(1, 8, pto.uint32, loc=pto.Vec)\n" + tiles + "\n" + call
    source = ("\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n"
              + "\n".join(" " * 8 + line for line in body.split("\n")) + "\n")
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(source).k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256)))


def test_the_cost_is_vgatherbs_slope_a_repeat_after_its_head(make_kernels):
    """latency_tables/ascend910b.toml TGATHERB (the CCE mock's vgatherb, EstimateLinearCycles'
    defaults) on an idle V pipe: head 6 + per_repeat 2 x 256-byte repeats, tail 0. float32 2 x 128
    (1024 bytes, 4 repeats): 6 + 8 = 14; int8 2 x 512 (1024 bytes, 4 repeats) after a
    pipe_barrier (V idle again): 14; uint16 4 x 128 (1024 bytes): 14 too -- the block gather's cost
    is its bytes."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            f = pto.alloc_tile(4, 16, pto.uint32, loc=pto.Vec)
            s = pto.alloc_tile(2, 128, pto.float32, loc=pto.Vec)
            d = pto.alloc_tile(2, 128, pto.float32, loc=pto.Vec)
            s8 = pto.alloc_tile(2, 512, pto.int8, loc=pto.Vec)
            d8 = pto.alloc_tile(2, 512, pto.int8, loc=pto.Vec)
            s16 = pto.alloc_tile(4, 128, pto.uint16, loc=pto.Vec)
            d16 = pto.alloc_tile(4, 128, pto.uint16, loc=pto.Vec)
            pto.tgatherb(d, s, f)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tgatherb(d8, s8, f)
            pto.pipe_barrier(pto.PIPE_V)
            pto.tgatherb(d16, s16, f)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64),), values=False)
    got = [e.end - e.start for e in prof.timeline if e.warp == 1 and e.inst == "TGATHERB"]
    assert got == [14, 14, 14]


@pytest.mark.parametrize("rows, blocks, item, pitch", [(1, 8, 4, 8), (3, 16, 2, 24), (2, 8, 1, 8)])
def test_the_numba_kernel_matches_the_reference(rows, blocks, item, pitch):
    """tile_sort's GATHER_BLOCKS mode (TGATHERB) of both executors on the same random words, the
    tiles at random places, the offsets' rows `pitch` words apart and dst's rows 300 apart: every
    word of memory comes out identical and both return -1; with one offset made misaligned or one
    block past src, both return its position (row * cols + its column) and write nothing."""
    ex = executor()
    b = 32 // item
    cols, bound = blocks * b, 40 * b
    mode = 3 | GATHER_BLOCKS | ((item.bit_length() - 1) << ITEM_SHIFT)
    rng = np.random.default_rng(rows * 100 + blocks + item)
    for trial in range(4):
        mem = rng.normal(size=9000).round(2)
        src, idx, dst = 100 + trial, 5000 + 3 * trial, 6000
        offsets = 32 * rng.integers(0, 40, (rows, blocks))
        bad = None
        if trial >= 2:
            bad = (int(rng.integers(rows)), int(rng.integers(blocks)))
            offsets[bad] = 40 * 32 if trial == 2 else 17
        for r in range(rows):
            mem[idx + r * pitch:idx + r * pitch + blocks] = offsets[r]
        outs = []
        for impl in (ex, reference):
            m = mem.copy()
            outs.append((int(impl.tile_sort(m, dst, src, idx, -1, -1, -1, -1, mode, pitch, 0, 0, rows, cols, 0, bound,
                                                    300)), m))
        assert outs[0][0] == outs[1][0] == (-1 if bad is None else bad[0] * cols + bad[1])
        np.testing.assert_array_equal(outs[0][1], outs[1][1])
        if bad is None:
            for r in range(rows):
                want = np.concatenate([mem[src + o // item:src + o // item + b] for o in offsets[r]])
                np.testing.assert_array_equal(outs[0][1][dst + r * 300:dst + r * 300 + cols], want)
        else:
            np.testing.assert_array_equal(outs[0][1], mem)


def test_both_engines_agree_on_a_block_gather(make_kernels):
    """The compiled event loop and the SimPy model give the same cycles, records and HBM bytes
    for the float32 gather of test_float32_blocks_are_eight_elements_taken_at_their_byte_offsets."""
    src = np.arange(64, dtype=np.float32)[None, :]
    kernel, args, _out = _launch(make_kernels, src, 32 * np.array([[7, 0, 3, 3, 1, 6, 2, 5]]), 64)
    assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
