"""pto-isa's CPU st suite tpushpop (hw-native-sys/pto-isa tests/cpu/st/testcase/tpushpop/main.cpp at
3186c381; it has no gen_data.py: main.cpp fills its tiles itself, fillTile / fillTileSequence, and
compares against those formulas) in the AI-core API, the cases A2/A3 can run: a cube core and its two
AIVs (get_subblockid() 0 / 1) handing tiles through a TPipe in GM (include/pto/npu/a2a3/TPush.hpp,
TPop.hpp; pto.tpipe / pto.tpush / pto.tpop / pto.tfree), each kernel launched on one AI core in timing
mode under check=("sync", "race") and in functional mode, which must agree.

main.cpp runs each side as host code in a thread or a ScopedExecutionContext(block, subblock, dim)
and writes and reads tiles directly; on the device a tile is filled by a TLOAD from GM and read back
by a TSTORE, so each kernel here TLOADs what main.cpp fills (the same formulas, computed in numpy)
and TSTOREs what it compares. main.cpp has no set_flag / wait_flag (the CPU simulation runs each
call to completion), so the kernels use sync="auto"; the cross-core order is the TPipe's signals.

Ported:
- TPushPopTest.v2c_gm_fifo_preserves_updown_and_leftright_layout: testGmFifoPreservesV2CSplitLayout
  <TILE_UP_DOWN, 10> and <TILE_LEFT_RIGHT, 11>. TPipe<FlagId, DIR_V2C, 16 x 16 x 4, 2> over a GM
  vector of 2 slots; AIV lane's Vec tile (8 x 16 or 16 x 8, fillTile(lane): lane x 1000 + i + 1 at
  storage offset i) is TPUSHed by the split, the AIC TPOPs the 16 x 16 Mat tile, compared element by
  element with the lane's tile it came from. main.cpp turns the signals off (setAllocateStatus,
  setRecordStatus, setWaitStatus, setFreeStatus false), which only a caller that runs the pushes
  before the pop can do; pto.tpipe has no such switches, and on the device the AIC's pop must wait
  for both pushes' data-ready signals, so here the pipe signals as TPipe does by default.
- TPushPopTest.v2c_split_with_injected_pipe_hook_waits_for_both_lanes_before_publish: TPipe<9,
  DIR_V2C, 16 x 16 x 4, 2>, TILE_UP_DOWN: AIV0 pushes the top 8 x 16 (fillTile(0)), AIV1 the bottom
  (fillTile(1)), the AIC TPOPs and TFREEs and gets both halves. What main.cpp checks of the CPU
  simulation's shared state (occupied, producers_done, the hook's key and size) has no device
  counterpart; what it means does: the AIC's data-ready wait takes a signal from each AIV (the FFTS
  CV_CORES_SYNC mode of TPush.hpp's record), so with AIV1's push left out the pop never completes
  (test_the_aic_pop_waits_for_both_lanes: a DeadlockError).
- TPushPopTest.a5_style_dir_both_updown_waits_for_matching_direction and
  a5_style_dir_both_leftright_waits_for_matching_direction: testDirBothConsumerWaitsForMatchingDirection
  <TILE_UP_DOWN, 7> / <TILE_LEFT_RIGHT, 8>. TPipe<FlagId, DIR_BOTH, 16 x 16 x 4, 2>: the AIVs push
  their halves (fillTileSequence 1.0 and 1001.0) V2C, the AIC TPOPs the Mat tile and TFREEs, then
  TPUSHes an Acc tile (fillTileSequence 2001.0) C2V; each AIV TPOPs its half, compared with the Acc
  tile's (r, c + 8 x lane) or (r + 8 x lane, c), and TFREEs. main.cpp fills accSrc on the host; the
  device has no path into an Acc tile but the cube's, so the AIC TLOADs those values (2001 + r x 16 +
  c: a 16 x 16 float Acc tile is one 16 x 16 fractal, storage offset r x 16 + c) and multiplies them
  by the identity (exact in float32). The "waits for matching direction" is A2/A3's flag split: the
  AIVs' own V2C signals go to the AIC on FlagID + 2, their C2V pop waits on FlagID, which only the
  AIC's push signals; with that push left out the AIVs' pops never complete
  (test_the_dir_both_pops_wait_for_the_other_direction: a DeadlockError).

These run A2/A3's GM ring where main.cpp's A5-style cases pass GM_SLOT_BUFFER nullptr (the CPU
simulation then moves the tile core to core, as A5 does; on A2/A3 the ring is always in GM): the fifo
is a GM tensor of the ring's slots (two rings for DIR_BOTH, the V2C one SlotNum x SlotSize in). main.cpp's
Mat tiles are ND (Tile<Mat, float, 16, 16, BLayout::RowMajor, 16, 16>, SLayout::NoneBox), which
pypto_sim does not build; the default NZ Mat tile stands in, and its values, compared by (row,
column) as main.cpp's GetTileElementOffset does, are the same.

Not ported (each needs what A2/A3 does not do):
- TPushPopTest.float_64_128_Vec, float_128_128_Vec, float_64_128_Mat, float_128_128_Mat,
  uint32_t_64_128_Vec, uint32_t_128_128_Vec, uint32_t_64_128_Mat, uint32_t_128_128_Mat
  (testPushPopSingleThread) and multicore_float_64_128_Vec (testPushPopMultiCore): the tile-first
  TPUSH(tile, pipe) / TPOP(tile, pipe) of a TPipe<.., DIR_C2V, ..>, pushing and popping one tile type
  in one context. The CPU simulation maps it to TPUSH<Pipe, Tile, TILE_NO_SPLIT> (include/pto/cpu/
  TPush.hpp). On A2/A3 that form is TMPipe's (TPush.hpp TPUSH_IMPL(TileData&, Pipe&) calls
  pipe.prod.push(fifo, tile) and pipe.prod.tile_id, which TPipe's Producer does not have), and even
  as TPUSH<Pipe, Tile, Split> a C2V push is the cube's, from an Acc tile (Producer::push compiles the
  C2V store only under __DAV_CUBE__, pushAcc2GMFiFo; a Mat tile fails its static_assert "Fix: TPUSH
  has unsupported tile type!"). pypto_sim refuses both at the push, naming TPush.hpp: a Mat tile as
  that static_assert does, a C2V push on an AIV (which A2/A3 compiles to nothing) as a CompileError
  (test_the_cases_not_ported_are_refused).
- TPushPopTest.a5_style_c2v_local_split_push_pop (TPipe<2, DIR_C2V, 8 x 16 x 4, 2>, one sub-block)
  and a5_style_c2v_dual_subblock_split_push_pop (TPipe<4, DIR_C2V, 8 x 16 x 4, 1>): SlotSize is one
  AIV's half (512 bytes), as A5's split push sends each AIV its half; A2/A3's push stores the whole
  16 x 16 Acc tile (1 KiB, pushAcc2GMFiFo) into the slot, past its end (TPUSH.md: "SlotSize must be
  large enough for one logical FIFO entry"); pypto_sim refuses it (a CompileError naming the slot).
  (The first also runs one AIV alone, get_subblockdim() 1: pto.kernel(aiv_ratio=1) would give that.)
- TPushPopTest.cpu_stub_prefers_injected_hooks_for_subblock_and_pipe_state: the CPU simulation's hook
  registry (register_hooks, GetSharedState); nothing on the device.
"""
import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error_at, host_copy, run_both_modes

CPU_ST = "hw-native-sys/pto-isa tests/cpu/st/testcase/tpushpop at 3186c381"
MAT = 16                                  # the 16 x 16 Mat / Acc tile; SlotSize sizeof(float) x 16 x 16
SLOT_SIZE = MAT * MAT * 4
SLOT_NUM = 2


def half_shape(split):
    """DirBothVecTile / the V2C test's VecTile: (8, 16) for TILE_UP_DOWN, (16, 8) for TILE_LEFT_RIGHT."""
    return (MAT // 2, MAT) if split == "up_down" else (MAT, MAT // 2)


def fill_tile(rows, cols, it):
    """fillTile<T, rows, cols, loc>(tile, iter): iter x 1000 + i + 1 at storage offset i."""
    return (it * 1000 + np.arange(rows * cols) + 1).astype(np.float32).reshape(rows, cols)


def fill_sequence(rows, cols, start):
    """fillTileSequence(tile, start): start + i at storage offset i (RowMajor Vec, and the 16 x 16
    Acc tile, a single 16 x 16 fractal: offset r x 16 + c)."""
    return (start + np.arange(rows * cols)).astype(np.float32).reshape(rows, cols)


def lane_part(full, split, lane):
    """The part of a 16 x 16 tile lane `lane` pushes or pops by split (expectVecMatchesAccSplit)."""
    vr, vc = half_shape(split)
    return full[lane * vr:(lane + 1) * vr, :] if split == "up_down" else full[:, lane * vc:(lane + 1) * vc]


def v2c_kernel(split, flag_id, skip_lane1=False):
    """The V2C cases: each AIV TLOADs its fillTile lane (lanes stacked in src), TPUSHes it by split;
    the AIC TPOPs the 16 x 16 Mat tile, TFREEs and TSTOREs it to out. skip_lane1: AIV1 does not push."""
    vr, vc = half_shape(split)

    @pto.kernel
    def v2c(out, src, fifo):
        pipe = pto.tpipe(fifo, flag_id, "v2c", SLOT_SIZE, SLOT_NUM)
        with pto.vector():
            sub = pto.get_subblock_id()
            lane = pto.alloc_tile(vr, vc, pto.float32)
            pto.tload(lane, src + sub * vr * vc)
            if skip_lane1:
                if sub == 0:
                    pto.tpush(pipe, lane, split=split)
            else:
                pto.tpush(pipe, lane, split=split)
        with pto.cube():
            dst = pto.alloc_tile(MAT, MAT, pto.float32, loc=pto.Mat)
            pto.tpop(pipe, dst, split=split)
            pto.tfree(pipe, split=split)
            pto.tstore(out, dst)
    return v2c


def run_v2c(split, flag_id):
    """A V2C case's launch: src the two lanes' fillTile(lane) tiles, returns the AIC's popped 16 x 16."""
    vr, vc = half_shape(split)
    src = np.stack([fill_tile(vr, vc, lane) for lane in range(2)])

    def make_args():
        return pto.alloc_tensor(SLOT_SIZE, pto.float32), pto.to_device(src), pto.alloc_tensor(
            SLOT_NUM * SLOT_SIZE, pto.float32)
    return run_both_modes(v2c_kernel(split, flag_id), make_args, lambda a: host_copy(a[0], (MAT, MAT), np.float32),
                          check=("sync", "race")), src


@pytest.mark.parametrize("split, flag_id", [("up_down", 10), ("left_right", 11)])
def test_v2c_gm_fifo_preserves_updown_and_leftright_layout(split, flag_id):
    """testGmFifoPreservesV2CSplitLayout<split, flag_id>: dst(r, c) is lane l's tile at (r % 8, c) for
    l = r // 8 (TILE_UP_DOWN) or at (r, c % 8) for l = c // 8 (TILE_LEFT_RIGHT), EXPECT_FLOAT_EQ."""
    dst, src = run_v2c(split, flag_id)
    for lane in range(2):
        np.testing.assert_array_equal(lane_part(dst, split, lane), src[lane], err_msg=f"lane {lane}")


def test_v2c_split_waits_for_both_lanes_before_publish():
    """v2c_split_with_injected_pipe_hook_waits_for_both_lanes_before_publish, TPipe<9, DIR_V2C, 16 x
    16 x 4, 2>, TILE_UP_DOWN: dst's rows 0 - 7 are topHalf (fillTile(0)), rows 8 - 15 bottomHalf
    (fillTile(1)), EXPECT_EQ."""
    dst, src = run_v2c("up_down", 9)
    np.testing.assert_array_equal(dst, np.concatenate([src[0], src[1]]))


def test_the_aic_pop_waits_for_both_lanes():
    """The device meaning of main.cpp's "occupied == 0 after only producer0's push": the AIC's
    data-ready wait takes one signal from each AIV, so with AIV1's push left out the TPOP never
    completes (DeadlockError), in either mode."""
    vr, vc = half_shape("up_down")
    src = np.stack([fill_tile(vr, vc, lane) for lane in range(2)])
    for mode in ("timing", "functional"):
        with pytest.raises(pto.DeadlockError, match=r"AIC waits at line \d+ \(cross_core_wait_flag\(9\)\) for a "
                                                    "signal from both AIVs"):
            pto.launch(v2c_kernel("up_down", 9, skip_lane1=True), grid=(1,), mode=mode,
                       args=(pto.alloc_tensor(SLOT_SIZE, pto.float32), pto.to_device(src),
                             pto.alloc_tensor(SLOT_NUM * SLOT_SIZE, pto.float32)))
            pto.sync()


def dir_both_kernel(split, flag_id, cube_pushes=True):
    """testDirBothConsumerWaitsForMatchingDirection<split, flag_id>: each AIV TLOADs its source
    (src0 / src1), TPUSHes it V2C, TPOPs its half of the C2V tile, TSTOREs it and TFREEs; the AIC
    TPOPs the V2C tile into a Mat tile and TFREEs, makes the Acc tile acc_src @ I and TPUSHes it C2V
    (cube_pushes=False leaves that push out)."""
    vr, vc = half_shape(split)

    @pto.kernel
    def dir_both(out, src, acc_src, eye, fifo):
        pipe = pto.tpipe(fifo, flag_id, "both", SLOT_SIZE, SLOT_NUM)
        with pto.vector():
            sub = pto.get_subblock_id()
            vec_src = pto.alloc_tile(vr, vc, pto.float32)
            vec_dst = pto.alloc_tile(vr, vc, pto.float32)
            pto.tload(vec_src, src + sub * vr * vc)
            pto.tpush(pipe, vec_src, split=split)
            pto.tpop(pipe, vec_dst, split=split)
            pto.tstore(out + sub * vr * vc, vec_dst)
            pto.tfree(pipe, split=split)
        with pto.cube():
            popped = pto.alloc_tile(MAT, MAT, pto.float32, loc=pto.Mat)
            acc_mat = pto.alloc_tile(MAT, MAT, pto.float32, loc=pto.Mat)
            eye_mat = pto.alloc_tile(MAT, MAT, pto.float32, loc=pto.Mat)
            left = pto.alloc_tile(MAT, MAT, pto.float32, loc=pto.Left)
            right = pto.alloc_tile(MAT, MAT, pto.float32, loc=pto.Right)
            acc = pto.alloc_tile(MAT, MAT, pto.float32, loc=pto.Acc)
            pto.tpop(pipe, popped, split=split)
            pto.tfree(pipe, split=split)
            pto.tload(acc_mat, acc_src)
            pto.tload(eye_mat, eye)
            pto.tmov(left, acc_mat)
            pto.tmov(right, eye_mat)
            pto.tmatmul(acc, left, right)
            if cube_pushes:
                pto.tpush(pipe, acc, split=split)
    return dir_both


def dir_both_args(split):
    """(out, src, acc_src, eye, fifo) of a DIR_BOTH launch: src the two lanes' fillTileSequence(1.0)
    and (1001.0), acc_src fillTileSequence(2001.0), fifo two rings of SLOT_NUM slots."""
    vr, vc = half_shape(split)
    src = np.stack([fill_sequence(vr, vc, 1.0), fill_sequence(vr, vc, 1001.0)])
    return (pto.alloc_tensor(SLOT_SIZE, pto.float32), pto.to_device(src),
            pto.to_device(fill_sequence(MAT, MAT, 2001.0)), pto.to_device(np.eye(MAT, dtype=np.float32)),
            pto.alloc_tensor(2 * SLOT_NUM * SLOT_SIZE, pto.float32))


@pytest.mark.parametrize("split, flag_id", [("up_down", 7), ("left_right", 8)],
                         ids=["a5_style_dir_both_updown", "a5_style_dir_both_leftright"])
def test_dir_both_waits_for_matching_direction(split, flag_id):
    """a5_style_dir_both_<split>_waits_for_matching_direction: expectVecMatchesAccSplit(dst_lane,
    accSrc, lane) for both lanes, accSrc = fillTileSequence(2001.0), EXPECT_FLOAT_EQ."""
    vr, vc = half_shape(split)
    got = run_both_modes(dir_both_kernel(split, flag_id), lambda: dir_both_args(split),
                         lambda a: host_copy(a[0], (2, vr, vc), np.float32), check=("sync", "race"))
    acc = fill_sequence(MAT, MAT, 2001.0)
    for lane in range(2):
        np.testing.assert_array_equal(got[lane], lane_part(acc, split, lane), err_msg=f"lane {lane}")


def test_the_dir_both_pops_wait_for_the_other_direction():
    """main.cpp's EXPECT_FALSE(vec0Done) before the AIC pushes: the AIVs' C2V pops wait on FlagID,
    which their own V2C pushes (FlagID + 2, to the AIC) do not release; with the AIC's push left out
    they never complete (DeadlockError), in either mode."""
    for mode in ("timing", "functional"):
        with pytest.raises(pto.DeadlockError, match=r"AIV0 waits at line \d+ \(cross_core_wait_flag\(7\)\) for a "
                                                    "signal from the AIC"):
            pto.launch(dir_both_kernel("up_down", 7, cube_pushes=False), grid=(1,), mode=mode,
                       args=dir_both_args("up_down"))
            pto.sync()


@pto.kernel
def half_slot_acc_push(fifo):
    """a5_style_c2v_local_split_push_pop's push on A2/A3: TPipe<2, DIR_C2V, 8 x 16 x 4, 2>, the AIC's
    TPUSH<Pipe, TileAcc<float, 16, 16>, TILE_UP_DOWN>."""
    pipe = pto.tpipe(fifo, 2, "c2v", 8 * 16 * 4, 2)
    with pto.cube():
        src = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tpush(pipe, src, split="up_down")
    with pto.vector():
        dst = pto.alloc_tile(8, 16, pto.float32)
        pto.tpop(pipe, dst, split="up_down")


@pto.kernel
def vec_push_c2v(fifo):
    """testPushPopSingleThread<float, 64, 128, Vec>'s TPUSH(src, pipe) of a TPipe<0, DIR_C2V, 64 x 128
    x 4, 8, 2> as the CPU simulation runs it, TPUSH<Pipe, Tile, TILE_NO_SPLIT>, on an AIV."""
    pipe = pto.tpipe(fifo, 0, "c2v", 64 * 128 * 4, 8, local_slot_num=2)
    with pto.vector():
        src = pto.alloc_tile(64, 128, pto.float32)
        pto.tpush(pipe, src)


@pto.kernel
def mat_push_c2v(fifo):
    """testPushPopSingleThread<float, 64, 128, Mat>'s TPUSH(src, pipe), on the AIC."""
    pipe = pto.tpipe(fifo, 0, "c2v", 64 * 128 * 4, 8, local_slot_num=2)
    with pto.cube():
        src = pto.alloc_tile(64, 128, pto.float32, loc=pto.Mat)
        pto.tpush(pipe, src)


@pytest.mark.parametrize("kernel, message", [
    (half_slot_acc_push, "'src' (16 x 16 of float32, at byte 0 of its slot) reaches byte 1024, past the 512-byte "
                         "slots of 'pipe'"),
    (vec_push_c2v, "pto.tpush on the AIVs: 'pipe' is a 'c2v' pipe"),
    (mat_push_c2v, "pto.tpush: 'src' is a Mat tile; here the TPipe moves Acc tiles")],
    ids=["a5_style_half_slot", "c2v_push_of_a_vec_tile", "c2v_push_of_a_mat_tile"])
def test_the_cases_not_ported_are_refused(kernel, message):
    """The module docstring's reasons, as pypto_sim enforces them: a 16 x 16 Acc push into 512-byte
    slots, and a C2V push of a Vec tile (on an AIV) or of a Mat tile (on the AIC), are CompileErrors
    at the push (A2/A3: pushAcc2GMFiFo stores the whole tile; the C2V push is the cube's, from Acc)."""
    culprit = 'pto.tpush(pipe, src, split="up_down")' if kernel is half_slot_acc_push else "pto.tpush(pipe, src)"
    compile_error_at(kernel, (pto.alloc_tensor(8 * 64 * 128 * 4, pto.float32),), message, culprit)
