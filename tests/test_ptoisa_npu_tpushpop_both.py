"""pto-isa's ON-DEVICE A2/A3 st cases of a DIR_BOTH TPipe, one ring each way in one GM tensor
(hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tpushpop_dir_both and
tpushpop_dir_both_concurrent at 3186c381: main.cpp, the *_kernel.cpp, gen_data.py), in the
AI-core API as the kernels write them: the same set_flag / wait_flag ledger, in sync="manual",
TPipe<0, DIR_BOTH, TOTAL_M x N x 4, 2> as pto.tpipe(fifo, 0, "both", M x N x 4, 2), TPUSH / TPOP
as pto.tpush / pto.tpop with the case's TileSplitAxis. M, K, N = 128, 64, 128, float32.

- TPushPopDirBothTest.case1_float_dir_both (TILE_UP_DOWN), case2_float_dir_both_left_right
  (TILE_LEFT_RIGHT): each AIV loads its part of A and B (64 x 64 rows 64 apart, or 128 x 32 at
  column 32 x its sub-block id), tileC = A + B, TPUSH it V2C; the AIC TPOPs the whole 128 x 64
  into L1, TLOADs D, TMOVs both to L0, TMATMUL E = C @ D, TPUSHes E C2V; each AIV TPOPs its part
  of E (64 x 128, or 128 x 64), G = E - F, TSTOREs G. Golden G = (A + B) @ D - F.
- TPushPopDirBothConcurrentTest.case1_float_dir_both_concurrent (TILE_UP_DOWN),
  case2_float_dir_both_concurrent_left_right (TILE_LEFT_RIGHT): the AIC's first matmul takes
  both operands from GM (A @ D) and is pushed C2V BEFORE the AIC pops the V2C tile, so both
  rings hold a live tile with index 0 at once; the AIC then multiplies the popped (A + B) by D
  and stores it to outCube. Two goldens: out = A @ D - F, outCube = (A + B) @ D.

What the concurrent suite guards (its kernel's comment above runCubeHalf): both directions index
the GM buffer as (tileIndex % SlotNum) x SlotSize, so unless the V2C ring starts elsewhere, the
C2V tile (128 x 128 x 4 = 64 KiB, a whole slot) and the V2C tile (128 x 64 x 4 = 32 KiB) land in
slot 0 together and each consumer reads a mix. TPush.hpp's TPipe constructor gives DIR_BOTH's V2C
side (the AIC's consumer, the AIVs' producer) entryOffset SlotNum x SlotSize; main.cpp allocates
4 x M x N floats for the two rings. pypto_sim's lowering (frontend/tpipe_builtins.py TPipe.ring)
places the V2C ring slot_num x slot_size bytes into the fifo, on flags FlagID + 2 / + 3
(test_the_v2c_ring_lies_slot_num_x_slot_size_into_the_fifo reads both rings back). With the
rings aliased (the offset made 0), racecheck stops the concurrent cases: the AIC's C2V TSTORE
from Acc and the AIVs' V2C TSTOREs write the same fifo bytes unordered. Their values alone do
not show it in pypto_sim (without racecheck both comparisons then pass: the order the timing
gives the stores and loads leaves each consumer its own tile), the suite comment's "a single-
sided check can still come back clean", here on both sides.

Flag protocol: TPUSH signals data ready (C2V from FIX on FlagID, V2C from MTE3 on FlagID + 2), TPOP
waits for it; with SlotNum 2 (SyncPeriod 2) one tile each way neither waits for nor signals a
free slot, and the destructor drains nothing (countPendingFreeCredits(1) = 0). The kernels run
under check=("sync", "race"): every cross-core signal is taken, and no two units touch a GM or
tile byte unordered. The consumer's local ring (TPOP TASSIGNs the popped tile to c2vUBBase /
v2cL1Base + (index % LocalSlotNum) x SlotSize, i.e. UB / L1 address 0, over tileA and tileB) is
not modelled: a pop loads into the tile the kernel names (pto.alloc_tile places it apart); the
kernels' wait_flag(PIPE_V, PIPE_MTE2, EVENT_ID1) before that TPOP is kept.

Goldens: gen_data.py's formulas in numpy from np.random.RandomState(19), one generator per case
(gen_data.py draws its two cases from one np.random.seed(19)): A, B = uniform(-2, 2, [M, K]),
D = uniform(-2, 2, [K, N]), F = uniform(-2, 2, [M, N]) as float32, each result cast to float32.
Comparison (main.cpp): ResultCmp(golden, out, 0.001f) over std::vector<float>(outFileSize), a
vector of M x N x 4 elements of which the output fills M x N (result_cmp's compared).
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import result_cmp

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tpushpop_dir_both{,_concurrent} at 3186c381"
M, K, N = 128, 64, 128                  # TOTAL_M, K, N of both suites' Launch<1> and Launch<2>
SLOT_SIZE = M * N * 4                   # TOTAL_M * N * sizeof(float)
FIFO_DEPTH = 2


def parts(split):
    """(V2C_ROWS, V2C_COLS, C2V_ROWS, C2V_COLS) of the kernels' constexprs: an AIV's part."""
    if split == "up_down":
        return M // 2, K, M // 2, N
    return M, K // 2, M, N // 2


def offset_steps(split):
    """abOffset and fOutOffset per sub-block id: the AIV's part of A / B (rows K apart) and of
    F / out (rows N apart) starts sub x these elements in."""
    vr, vc, cr, cc = parts(split)
    return (vr * K, cr * N) if split == "up_down" else (vc, cc)


def vector_side(split):
    """The AIVs' code of both kernels (runVecPushV2C, then runVecPopC2V of
    tpushpop_dir_both_concurrent_kernel.cpp; tpushpop_dir_both_kernel.cpp's Phase 1 and 2 are the
    same statements): push this AIV's part of A + B into the V2C ring, pop its part of the C2V
    tile and store it minus F's part."""
    vr, vc, cr, cc = parts(split)
    ab_step, fo_step = offset_steps(split)

    @pto.kernel
    def aiv_push_then_pop(pipe, out, A, B, F):
        sub = pto.get_subblock_id()
        ab = sub * ab_step
        fo = sub * fo_step
        # runVecPushV2C
        tile_a = pto.alloc_tile(vr, vc, pto.float32)
        tile_b = pto.alloc_tile(vr, vc, pto.float32)
        tile_c = pto.alloc_tile(vr, vc, pto.float32)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        pto.tload(tile_a, A + ab, stride=K)
        pto.tload(tile_b, B + ab, stride=K)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        pto.tadd(tile_c, tile_a, tile_b)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.tpush(pipe, tile_c, split=split)
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        # runVecPopC2V
        half = pto.alloc_tile(cr, cc, pto.float32)
        tile_f = pto.alloc_tile(cr, cc, pto.float32)
        tile_g = pto.alloc_tile(cr, cc, pto.float32)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        pto.tpop(pipe, half, split=split)
        pto.tload(tile_f, F + fo, stride=N)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        pto.tsub(tile_g, half, tile_f)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.tstore(out + fo, tile_g, stride=N)
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_V, 1)
        pto.pipe_barrier(pto.PIPE_ALL)
    return aiv_push_then_pop


def dir_both_kernel(split):
    """runTPushPopDirBoth<float, 128, 64, 128, SplitAxis> of tpushpop_dir_both_kernel.cpp."""
    aiv_code = vector_side(split)

    @pto.kernel(sync="manual")
    def dir_both(out, A, B, D, F, fifo):
        pipe = pto.tpipe(fifo, 0, "both", SLOT_SIZE, FIFO_DEPTH)
        with pto.vector():
            aiv_code(pipe, out, A, B, F)
        with pto.cube():
            pop_tile = pto.alloc_tile(M, K, pto.float32, loc=pto.Mat)
            mat_d = pto.alloc_tile(K, N, pto.float32, loc=pto.Mat)
            left = pto.alloc_tile(M, K, pto.float32, loc=pto.Left)
            right = pto.alloc_tile(K, N, pto.float32, loc=pto.Right)
            acc = pto.alloc_tile(M, N, pto.float32, loc=pto.Acc)
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.tpop(pipe, pop_tile, split=split)
            pto.tload(mat_d, D)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.tmov(left, pop_tile)
            pto.tmov(right, mat_d)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.tmatmul(acc, left, right)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.tpush(pipe, acc, split=split)
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
    return dir_both


@pto.kernel
def mov_and_matmul(left, right, acc, a, b):
    """movAndMatmul of tpushpop_dir_both_concurrent_kernel.cpp: MTE2 -> MTE1, TMOV a and b to L0,
    MTE1 -> M, TMATMUL into acc, M -> FIX (events 0; 1 the pre-armed reverse flags)."""
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
    pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
    pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
    pto.tmov(left, a)
    pto.tmov(right, b)
    pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
    pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
    pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
    pto.tmatmul(acc, left, right)
    pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
    pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
    pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)


def concurrent_kernel(split):
    """runTPushPopDirBoth<float, 128, 64, 128, SplitAxis> of tpushpop_dir_both_concurrent_kernel.cpp:
    runVecPushV2C then runVecPopC2V on the AIVs (the dir_both vector code), runCubeHalf on the AIC
    with its two movAndMatmul calls."""
    aiv_code = vector_side(split)

    @pto.kernel(sync="manual")
    def concurrent(out, A, B, D, F, fifo, out_cube):
        pipe = pto.tpipe(fifo, 0, "both", SLOT_SIZE, FIFO_DEPTH)
        with pto.vector():
            aiv_code(pipe, out, A, B, F)
        with pto.cube():
            pop_tile = pto.alloc_tile(M, K, pto.float32, loc=pto.Mat)
            mat_a = pto.alloc_tile(M, K, pto.float32, loc=pto.Mat)
            mat_d = pto.alloc_tile(K, N, pto.float32, loc=pto.Mat)
            left = pto.alloc_tile(M, K, pto.float32, loc=pto.Left)
            right = pto.alloc_tile(K, N, pto.float32, loc=pto.Right)
            acc = pto.alloc_tile(M, N, pto.float32, loc=pto.Acc)
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.tload(mat_a, A)
            pto.tload(mat_d, D)
            mov_and_matmul(left, right, acc, mat_a, mat_d)
            pto.tpush(pipe, acc, split=split)               # C2V push FIRST
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.tpop(pipe, pop_tile, split=split)           # V2C pop SECOND: both rings hold tile 0
            mov_and_matmul(left, right, acc, pop_tile, mat_d)
            pto.tstore(out_cube, acc)
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 1)
            pto.pipe_barrier(pto.PIPE_ALL)
    return concurrent


def inputs():
    """gen_data.py's srcA, srcB, srcD, srcF (np.random.RandomState(19), in its order)."""
    rng = np.random.RandomState(19)
    a = rng.uniform(-2, 2, [M, K]).astype(np.float32)
    b = rng.uniform(-2, 2, [M, K]).astype(np.float32)
    d = rng.uniform(-2, 2, [K, N]).astype(np.float32)
    f = rng.uniform(-2, 2, [M, N]).astype(np.float32)
    return a, b, d, f


def launch(kernel, a, b, d, f, outputs):
    """kernel(out, A, B, D, F, fifo[, out_cube]) on one AI core, fifo 2 x SLOT_NUM x SLOT_SIZE
    bytes (main.cpp's 4 x M x N x sizeof(T)), race- and sync-checked; returns the M x N outputs
    and the fifo's words."""
    outs = [pto.alloc_tensor(M * N * 4, pto.float32) for _ in range(outputs)]
    fifo = pto.alloc_tensor(2 * FIFO_DEPTH * SLOT_SIZE, pto.float32)
    args = (outs[0], *(pto.to_device(x) for x in (a, b, d, f)), fifo, *outs[1:])
    pto.profile(kernel, grid=(1,), args=args, check=("sync", "race"))
    got = []
    for t, n in [(t, M * N) for t in outs] + [(fifo, 2 * FIFO_DEPTH * M * N)]:
        host = np.empty(n, np.float32)
        pto.memcpy_d2h(host, t)
        got.append(host)
    return [g.reshape(M, N) for g in got[:-1]] + got[-1:]


SPLITS = {"up_down": "TILE_UP_DOWN", "left_right": "TILE_LEFT_RIGHT"}


@pytest.mark.parametrize("case, split", [("case1_float_dir_both", "up_down"),
                                         ("case2_float_dir_both_left_right", "left_right")],
                         ids=lambda v: f"TPushPopDirBothTest.{v}" if v.startswith("case") else SPLITS[v])
def test_tpushpop_dir_both(case, split):
    """TPushPopDirBothTest.<case>: V2C (A + B) -> AIC matmul by D -> C2V, each AIV subtracting
    its part of F. Golden (gen_data.py): C = A + B, E = C @ D, G = E - F, each as float32.
    main.cpp: ResultCmp(golden, out, 0.001f) over M x N x 4 elements."""
    a, b, d, f = inputs()
    golden = (np.matmul((a + b).astype(np.float32), d).astype(np.float32) - f).astype(np.float32)
    out, _ = launch(dir_both_kernel(split), a, b, d, f, 1)
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)


@pytest.mark.parametrize("case, split", [("case1_float_dir_both_concurrent", "up_down"),
                                         ("case2_float_dir_both_concurrent_left_right", "left_right")],
                         ids=lambda v: f"TPushPopDirBothConcurrentTest.{v}" if v.startswith("case") else SPLITS[v])
def test_tpushpop_dir_both_concurrent(case, split):
    """TPushPopDirBothConcurrentTest.<case>: both rings hold tile 0 at once. Goldens (gen_data.py):
    out = A @ D - F (the AIVs' C2V read), outCube = (A + B) @ D (the AIC's V2C read), each as
    float32. main.cpp's VerifyOutputs: ResultCmp(golden, out, 0.001f) and ResultCmp(goldenCube,
    outCube, 0.001f), both over M x N x 4 elements. With the two rings aliased in slot 0 both
    fail on hardware (main.cpp's message); here racecheck stops the launch (module docstring)."""
    a, b, d, f = inputs()
    golden = (np.matmul(a, d).astype(np.float32) - f).astype(np.float32)
    golden_cube = np.matmul((a + b).astype(np.float32), d).astype(np.float32)
    out, out_cube, _ = launch(concurrent_kernel(split), a, b, d, f, 2)
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes), "vector side (C2V) mismatch"
    assert result_cmp(golden_cube, out_cube, 0.001, compared=golden_cube.nbytes), "cube side (V2C) mismatch"


def test_the_v2c_ring_lies_slot_num_x_slot_size_into_the_fifo():
    """TPush.hpp's TPipe constructor: a DIR_BOTH pipe's V2C side (the AIVs' producer, the AIC's
    consumer) has entryOffset SlotNum x SlotSize ("Place V2C after C2V, exactly as the ISA
    reference specifies (v2c_ring_buf = GM_SLOT_BUFFER + SLOT_NUM * SLOT_SIZE)"). After the
    concurrent kernel (TILE_UP_DOWN) the fifo holds the C2V tile A @ D in slot 0 (bytes 0 ..
    SLOT_SIZE) and the V2C tile A + B, the two AIVs' 64-row halves one after the other, 128 x 64
    dense, at byte 2 x SLOT_SIZE; slot 1 of each ring is never written."""
    a, b, d, f = inputs()
    *_, fifo = launch(concurrent_kernel("up_down"), a, b, d, f, 2)
    words = SLOT_SIZE // 4
    c2v, v2c = fifo[:FIFO_DEPTH * words], fifo[FIFO_DEPTH * words:]
    assert result_cmp(np.matmul(a, d).astype(np.float32), c2v[:words], 0.001)
    np.testing.assert_array_equal(v2c[:M * K], (a + b).astype(np.float32).ravel())
    assert not c2v[words:].any() and not v2c[M * K:].any()
