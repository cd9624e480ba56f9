"""pto-isa's ON-DEVICE A2/A3 st suite tfa (hw-native-sys/pto-isa at 3186c381, tests/npu/a2a3/src/st/testcase/tfa:
main.cpp, tfa_kernel.cpp, pto_macro_matmul.hpp, pto_macro_fa_softmax.hpp, pto_macro_fa_gu.hpp, gen_data.py,
TFA_kernel.md): the suite's own flash attention, O = softmax(Q K^T / sqrt(128)) V for one block of S0 query rows,
ported in examples/tfa_st.py (its docstring: tiling, the six FFTS flags, the statistics layout, the loops) and
run for all twelve TFATest cases: run_tfa<float, S0, 128, S1[, true]> with (S0, S1) in (64, 128), (64, 256),
(64, 512), (128, 512), (128, 2048), (128, 8192), without and with INTERMEDIATE_CHECK (the _precision_debug cases).

Goldens: gen_data.py's gen_case in numpy, each case from its own np.random.RandomState(7) (gen_data.py draws its
cases in order from one np.random.seed(7), so later cases' numbers differ from its files, their distribution does
not): q = randn(S0, 128) and k = randn(128, S1) in float16 times 1.5, v = randn(S1, 128) float16 times 1.2, the
kernel reading kt.bin = k^T; qk = q k in float32 (golden.bin), the per-tile recurrence (local max, max with the
running max, exp((x - max) x scale), exp_max = exp((old max - max) x scale), sum = exp_max x sum + row sum) giving
p_fp32.bin, p.bin (float16), global_sum_part<t>.bin, exp_max_part<t>.bin, pv_part<t>.bin = float32(p16 tile) v
tile, pv.bin (their sum), o_part<t>.bin (o = pv_0, then exp_max x o + pv_t, divided by the sum at the last tile;
one tile: pv_0 undivided, as the kernel's compute_gu) and o.bin. gen_data.py's case list comments out S1 = 8192
(main.cpp's case_float_H_128_S0_128_S1_8192 has no golden files); its golden here is the same gen_case. Comparison:
main.cpp's ResultCmp(golden, out, 0.001f) over each output's own elements (tests/ptoisa_st.py result_cmp): O always;
with INTERMEDIATE_CHECK also p (EXPECT_TRUE), every PV part and their sum, every global sum part, every exp_max part
from tile 1 ("ti=0 no meaning"), every O part (all EXPECT_TRUE), and qk and p_fp32, which main.cpp compares and
prints in its summary without an EXPECT (asserted here too: they pass).

What the source kernel gets wrong, found by pypto_sim's checks (each a test below), and what the ports run:
1. Three buffer-release flags are set before the buffer's last reader, not after it: compute_qk and compute_pv
   set_flag(PIPE_MTE1, PIPE_MTE2, ev) right after their TLOADs into kMatTile / pMatTile / vMatTile, before the
   TEXTRACTs of pto_macro_matmul read them (tfa_kernel.cpp lines 212, 284), and compute_p sets
   set_flag(PIPE_V, PIPE_MTE2, ev) right after its TLOAD into qkVecTile, before the softmax reads and rewrites it
   (line 356). A load two tiles later into the same buffer (or compute_gu's PV load into pvVecTile, which
   allocate_vec_tile_buffers puts at qkVecTile's UB) may then overwrite it while it is read: racecheck reports
   both (test_source_release_flags_race). In pypto_sim's timing the vectors' one changes values: from S1 = 512 on
   a PV load into pvVecTile[1] (= qkVecTile[1]) lands while a later odd tile's softmax still reads it (with
   S1 = 512: compute_gu of tile 1 during compute_p of tile 3, nothing ordering them), and O comes out wrong; the
   cube's does not change a value there (its TEXTRACTs run before the next load lands). The published
   kernel (kernels/manual/common/flash_atten/fa_performance_kernel.cpp, examples/flash_atten_a3.py) sets these
   flags after the consumer; the cases with S1 >= 512 run the kernel with them moved there (tfa_st.make_kernel
   ordered=True); with one or two tiles the cross-core flags order every reuse and the source's flags suffice.
   All six O-only cases are race-free under check="race".
2. INTERMEDIATE_CHECK offsets: compute_gu reads PV part t at pv_out + (t % 6 + t) S0 x 128 (lines 436-443: the
   FIFO slot offset is added to the per-tile offset compute_pv stores at), so from tile 1 on it reads another
   part, or past pv_out's num_tiles parts: pypto_sim stops at the TLOAD with an OutOfBoundsError
   (test_source_debug_pv_read_leaves_pv_out; on the device it reads whatever lies there). AIV1 stores p_out_fp32
   from element Vec_S0 x Cube_S1 (line 399), which is row Vec_S0 only when S1 = 128; from S1 = 256 on its rows
   overlap AIV0's, a write-after-write race between the AIVs (test_source_debug_p_fp32_rows_overlap). The
   S1 = 128 precision_debug case needs neither fix and runs as the source writes it (race-free); the other five
   run with both offsets corrected (fix_offsets=True) and the flags of (1).
3. INTERMEDIATE_CHECK also stores l2_global_sum after each tile's softmax (MTE3, line 408) and the next tile's
   softmax TMULs it (V) behind a wait on the other event id (wait_flag(PIPE_MTE3, PIPE_V, pTileEventId), line 361, is
   on tile % 2): a write-after-read race (test_source_debug_global_sum_store_races), so those five cases run without
   racecheck; their stored sums match the golden in pypto_sim's order of events.
4. Signals nothing takes: the cube pre-sets BUF1_SV_CONSUMED six times (st_dev, line 584) and the vectors
   UPDATE_CONSUMED once (line 594), and no drain takes them at the end (the cube drains only BUF0_SM_CONSUMED):
   each AIV ends with six SV_CONSUMED signals, the cube with one UPDATE_CONSUMED from each AIV. synccheck reports
   them (test_source_leaves_signals), so no case runs under check="sync".
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import result_cmp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import tfa_st  # noqa: E402

NPU = "hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/tfa at 3186c381"
EPS = 0.001                     # every ResultCmp(..., 0.001f) of main.cpp
HEAD = 128
# TEST_F(TFATest, case_float_H_128_S0_<S0>_S1_<S1>) of main.cpp: run_tfa<float, S0, 128, S1>
SHAPES = [(64, 256), (64, 128), (64, 512), (128, 512), (128, 2048), (128, 8192)]
DEBUG_SHAPES = [(64, 128), (64, 256), (64, 512), (128, 512), (128, 2048), (128, 8192)]


def gen_case(s0, s1):
    """gen_data.py's gen_case(path, s0, s1) from np.random.RandomState(7): the inputs (q, kt, v) and every golden
    file's array."""
    rng = np.random.RandomState(7)
    q = (rng.randn(s0, HEAD).astype(np.float16) * 1.5).astype(np.float32).astype(np.float16)
    k = (rng.randn(HEAD, s1).astype(np.float16) * 1.5).astype(np.float32).astype(np.float16)
    golden = q.astype(np.float32).dot(k.astype(np.float32)).astype(np.float32)
    scale = 1 / np.sqrt(HEAD)
    n = s1 // 128
    full_exp = np.zeros((s0, s1), dtype=np.float32)
    global_sums, exp_max_parts = [], []
    global_max = global_sum = None
    for ti in range(n):
        tile = golden[:, ti * 128:(ti + 1) * 128]
        local_max = np.max(tile, axis=1, keepdims=True).astype(np.float32)
        if global_max is not None:
            local_max = np.maximum(local_max, global_max).astype(np.float32)
        tmp_float_exp = np.exp((tile - local_max) * scale).astype(np.float32)
        if ti == 0:
            new_global_sum = np.sum(tmp_float_exp, axis=1, keepdims=True).astype(np.float32)
            exp_max_tile = np.ones_like(local_max).astype(np.float32)
        else:
            exp_max_tile = np.exp((global_max - local_max).astype(np.float32) * scale).astype(np.float32)
            new_global_sum = exp_max_tile * global_sum + np.sum(tmp_float_exp, axis=1, keepdims=True).astype(np.float32)
        full_exp[:, ti * 128:(ti + 1) * 128] = tmp_float_exp
        global_sums.append(new_global_sum.reshape(-1))
        exp_max_parts.append(exp_max_tile.reshape(-1))
        global_max, global_sum = local_max, new_global_sum
    soft = full_exp.astype(np.float16)
    v = (rng.randn(s1, HEAD).astype(np.float16) * 1.2).astype(np.float32).astype(np.float16)
    soft_f32 = soft.astype(np.float32)
    pv_parts = [soft_f32[:, ti * 128:(ti + 1) * 128].dot(v[ti * 128:(ti + 1) * 128, :].astype(np.float32))
                .astype(np.float32) for ti in range(n)]
    o_parts = []
    for ti, part in enumerate(pv_parts):
        if ti == 0:
            o_running = part.copy()
        else:
            o_running = exp_max_parts[ti].reshape((s0, 1)) * o_running + part
            if ti == n - 1:
                o_running = o_running / global_sums[ti].reshape((s0, 1))
        o_parts.append(o_running.astype(np.float32))
    gold = {"qk": golden, "p": soft, "p_fp32": full_exp, "pv_parts": pv_parts, "pv": np.sum(pv_parts, axis=0),
            "global_sum": global_sums, "exp_max": exp_max_parts, "o_parts": o_parts, "o": o_parts[-1]}
    return (q, np.ascontiguousarray(k.T), v), gold


@pytest.mark.parametrize("s0,s1", SHAPES, ids=[f"TFATest.case_float_H_128_S0_{a}_S1_{b}" for a, b in SHAPES])
def test_tfa(s0, s1):
    """run_tfa<float, S0, 128, S1>: O within ResultCmp(o.bin, o_out.bin, 0.001f), racecheck finding no unordered
    access. S1 = 128 and 256 run as the source writes them (one or two tiles: the cross-core flags order each
    buffer's reuse, the early release flags of the module docstring's item 1 do not matter); from S1 = 512 on
    with those flags after their buffers' readers. The S1 = 8192 case (64 tiles, 59 in the steady loop)
    simulates in a few seconds."""
    inputs, gold = gen_case(s0, s1)
    got, _ = tfa_st.run(*inputs, ordered=s1 >= 512, check=("race",))
    assert result_cmp(gold["o"], got["o"], EPS)


def check_intermediates(got, gold, n):
    """main.cpp's INTERMEDIATE_CHECK comparisons, each ResultCmp(..., 0.001f)."""
    assert result_cmp(gold["qk"], got["qk"], EPS)                              # [CHECK] QK compare (printed)
    assert result_cmp(gold["p"], got["p_out"], EPS)                            # softmax ok (EXPECT_TRUE(ok2))
    assert result_cmp(gold["p_fp32"], got["p_out_fp32"], EPS)                  # [CHECK] P_fp32 compare (printed)
    for t in range(n):
        assert result_cmp(gold["pv_parts"][t], got["pv"][t], EPS), t           # [CHECK] PV part t
    assert result_cmp(gold["pv"], got["pv"].sum(axis=0), EPS)                  # [CHECK] PV sum compare
    for t in range(n):
        assert result_cmp(gold["global_sum"][t], got["global_sum"][t], EPS), t   # [CHECK] Global sum t
    for t in range(1, n):                                                      # ti = 0 no meaning for exp_max
        assert result_cmp(gold["exp_max"][t], got["exp_max"][t], EPS), t
    for t in range(n):
        assert result_cmp(gold["o_parts"][t], got["o_parts"][t], EPS), t       # [CHECK] O part t
    assert result_cmp(gold["o"], got["o"], EPS)                                # O running output compare


def test_tfa_precision_debug_s1_128():
    """case_float_H_128_S0_64_S1_128_precision_debug, as the source writes it: one tile, so compute_gu reads
    PV part 0 where compute_pv stored it, AIV1's p_out_fp32 rows start at row Vec_S0 = 32, no tile follows
    whose loads could overwrite a buffer still read, and racecheck finds no unordered access. Every
    intermediate output within ResultCmp, O being pv_part0 (one tile: never divided by the sums)."""
    inputs, gold = gen_case(64, 128)
    got, _ = tfa_st.run(*inputs, intermediate=True, check=("race",))
    check_intermediates(got, gold, 1)


@pytest.mark.parametrize("s0,s1", DEBUG_SHAPES[1:],
                         ids=[f"TFATest.case_float_H_128_S0_{a}_S1_{b}_precision_debug" for a, b in DEBUG_SHAPES[1:]])
def test_tfa_precision_debug(s0, s1):
    """run_tfa<float, S0, 128, S1, true> with compute_gu's PV offset and AIV1's p_out_fp32 offset corrected and,
    from S1 = 512 on, the release flags after their readers (module docstring, 1 - 3): every intermediate output
    within ResultCmp. Not under racecheck: the source's global-sum store races the next tile's softmax (3)."""
    inputs, gold = gen_case(s0, s1)
    got, _ = tfa_st.run(*inputs, intermediate=True, fix_offsets=True, ordered=s1 >= 512)
    check_intermediates(got, gold, s1 // 128)


@pytest.mark.parametrize("ordered,where", [("vector", "tile 'k0'"), ("cube", "tile 'qk0'")])
def test_source_release_flags_race(ordered, where):
    """Module docstring, 1: with the cube's set_flag(PIPE_MTE1, PIPE_MTE2, ev) where the source puts it (the
    vectors' moved), racecheck reports the next TLOAD into kMatTile[0] unordered after the TEXTRACT reading it;
    with the vectors' set_flag(PIPE_V, PIPE_MTE2, ev) where the source puts it (the cube's moved), a TLOAD into
    qkVecTile[0] unordered after the softmax reading it (TCVT of x_exp from it). S0 = 64, S1 = 512."""
    inputs, _ = gen_case(64, 512)
    with pytest.raises(pto.RaceError, match=rf"write-after-read race on {where}.*TLOAD"):
        tfa_st.run(*inputs, ordered=ordered, check=("race",))


def test_source_debug_pv_read_leaves_pv_out():
    """Module docstring, 2: case_float_H_128_S0_64_S1_256_precision_debug as the source writes it: compute_gu
    of tile 1 reads PV at pv_out + (1 % 6 + 1) x 64 x 128 (+ 32 x 128 on AIV1), past pv_out's two parts of
    64 x 128 float32 (main.cpp's out2TotalSize): an OutOfBoundsError at that TLOAD."""
    inputs, _ = gen_case(64, 256)
    with pytest.raises(pto.OutOfBoundsError, match=r"TLOAD .* of 'dev', which has 16384"):
        tfa_st.run(*inputs, intermediate=True, ordered=True)


def test_source_debug_p_fp32_rows_overlap():
    """Module docstring, 2: with S1 = 256 AIV1 stores its 32 rows of p_out_fp32 from element 32 x 128 = row 16
    (stride S1), over AIV0's rows 16 - 31: racecheck reports the write-after-write between the AIVs' TSTOREs
    (nothing orders two vector cores)."""
    inputs, _ = gen_case(64, 256)
    with pytest.raises(pto.RaceError, match=r"write-after-write race on GM .*AIV. PIPE_MTE3.*AIV. PIPE_MTE3"):
        tfa_st.run(*inputs, intermediate=True, ordered=True, check=("race",))


def test_source_debug_global_sum_store_races():
    """Module docstring, 3: with both offsets corrected and the release flags after their readers, the
    INTERMEDIATE_CHECK store of l2_global_sum (MTE3) is unordered before the next tile's TMUL rewriting it (V)."""
    inputs, _ = gen_case(64, 256)
    with pytest.raises(pto.RaceError, match=r"write-after-read race on tile 'gs'.*TMUL.*TSTORE"):
        tfa_st.run(*inputs, intermediate=True, fix_offsets=True, ordered=True, check=("race",))


def test_source_leaves_signals():
    """Module docstring, 4: the st_dev pre-sets of BUF1_SV_CONSUMED (3, cube -> both AIVs, six) and
    UPDATE_CONSUMED (5, each AIV -> cube, one) are never all taken: synccheck names one of them. S0 = 64,
    S1 = 128 (one tile: each AIV takes one SV_CONSUMED, the cube one UPDATE_CONSUMED of each)."""
    inputs, _ = gen_case(64, 128)
    with pytest.raises(pto.SyncCheckError, match=r"cross_core_set_flag\(([35])\) .* never waited for"):
        tfa_st.run(*inputs, ordered=True, check=("sync",))
