"""The real AI core (docs/aicore.md): values of the cube path and of cube/vector handover, manual
sync (a missing flag gives stale data; check="race" names both instructions), auto sync, and
deadlocks of flags nothing sets."""
import csv
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from aicore_kernels import cube_then_vector

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import gemm_manual  # noqa: E402


def dev(array, dtype):
    t = pto.alloc_tensor(array.nbytes, dtype)
    pto.memcpy_h2d(t, array)
    return t


def host(t, shape, dtype):
    out = np.empty(shape, dtype)
    pto.memcpy_d2h(out, t)
    return out


# ---------------------------------------------------------------- the cube path
@pto.kernel
def window_matmul(A, B, Bias, C):
    """C[32, 32] = A[16:48, 32:64] @ B + bias, through a textract window and tmatmul_bias."""
    a_l1 = pto.alloc_tile(64, 64, pto.float16, loc=pto.Mat)
    b_l1 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Mat)
    bias_l1 = pto.alloc_tile(16, 32, pto.float32, loc=pto.Mat)
    a_l0 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Left)
    b_l0 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Right)
    bias = pto.alloc_tile(1, 32, pto.float32, loc=pto.Bias)
    acc = pto.alloc_tile(32, 32, pto.float32, loc=pto.Acc)
    pto.tload(a_l1, A)
    pto.tload(b_l1, B)
    pto.tload(bias_l1, Bias)
    pto.textract(a_l0, a_l1, 16, 32)
    pto.tmov(b_l0, b_l1)
    pto.textract(bias, bias_l1)
    pto.tmatmul_bias(acc, a_l0, b_l0, bias)
    pto.tstore(C, acc)


def test_textract_window_tmov_and_tmatmul_bias_compute_what_numpy_does():
    """textract copies the dst-sized window at (row, col); tmatmul_bias adds one bias per
    column; the fixpipe rounds the float32 accumulator into a float16 tensor."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    bias = np.zeros((16, 32), np.float32)
    bias[0] = rng.standard_normal(32)
    C = pto.alloc_tensor(32 * 32 * 2, pto.float16)
    args = (dev(a, pto.float16), dev(b, pto.float16), dev(bias, pto.float32), C)
    pto.launch(window_matmul, grid=(1,), args=args)
    want = (a[16:48, 32:64].astype(np.float64) @ b.astype(np.float64) + bias[0]).astype(np.float32)
    np.testing.assert_array_equal(host(C, (32, 32), np.float16), want.astype(np.float16))


@pto.kernel
def int8_matmul(A, B, C):
    a_l1 = pto.alloc_tile(16, 32, pto.int8, loc=pto.Mat)
    b_l1 = pto.alloc_tile(32, 32, pto.int8, loc=pto.Mat)
    a_l0 = pto.alloc_tile(16, 32, pto.int8, loc=pto.Left)
    b_l0 = pto.alloc_tile(32, 32, pto.int8, loc=pto.Right)
    acc = pto.alloc_tile(16, 32, pto.int32, loc=pto.Acc)
    pto.tload(a_l1, A)
    pto.tload(b_l1, B)
    pto.tmov(a_l0, a_l1)
    pto.tmov(b_l0, b_l1)
    pto.tmatmul(acc, a_l0, b_l0)
    pto.tstore(C, acc)


def test_int8_inputs_accumulate_exactly_in_int32():
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (32, 32)).astype(np.int8)
    C = pto.alloc_tensor(16 * 32 * 4, pto.int32)
    args = (dev(a, pto.int8), dev(b, pto.int8), C)
    pto.launch(int8_matmul, grid=(1,), args=args)
    np.testing.assert_array_equal(host(C, (16, 32), np.int32), a.astype(np.int32) @ b.astype(np.int32))


@pto.kernel
def acc_to_mat(A, B, C):
    """Acc -> Mat through the fixpipe (float32 -> float16), then Mat -> GM on MTE3."""
    a_l1 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
    a_l0 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
    b_l0 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Right)
    acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
    out_l1 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
    pto.tload(a_l1, A)
    pto.tmov(a_l0, a_l1)
    pto.tload(a_l1, B)
    pto.tmov(b_l0, a_l1)
    pto.tmatmul(acc, a_l0, b_l0)
    pto.tmov(out_l1, acc)
    pto.tstore(C, out_l1)


def test_tmov_from_acc_converts_and_overflows_to_inf_like_float16():
    """Auto sync orders the reuse of a_l1 (load A, extract, load B): the data-ordered default."""
    a = np.full((16, 16), 64.0, np.float16)
    b = np.full((16, 16), 64.0, np.float16)      # 16 * 64 * 64 = 65536 > float16's max
    b[:, 0] = 1.0
    C = pto.alloc_tensor(16 * 16 * 2, pto.float16)
    args = (dev(a, pto.float16), dev(b, pto.float16), C)
    pto.launch(acc_to_mat, grid=(1,), args=args)
    got = host(C, (16, 16), np.float16)
    assert np.all(got[:, 0] == 1024.0) and np.all(np.isinf(got[:, 1:]))


def test_gemm_manual_example_matches_numpy_at_512_cubed():
    """The double-buffered manual-sync GEMM of examples/gemm_manual.py (fp16 in, fp32
    accumulate) on 512 x 512 x 512."""
    c, reference, prof = gemm_manual.run(512, 512, 512)
    np.testing.assert_allclose(c, reference, rtol=1e-4, atol=1e-4)
    shares = prof.pipe_shares("AIC")
    assert all(0 < shares[p] < 1 for p in ("MTE2", "MTE1", "M", "FIX"))


# ---------------------------------------------------------------- manual sync and races
@pto.kernel(sync="manual")
def gemm_missing_flag(A, B, C, M, N, K):
    """examples/gemm_manual.py with the MTE2 -> MTE1 handshake of the K loop removed: TEXTRACT
    may read an L1 buffer that TLOAD has not filled yet."""
    with pto.cube():
        m0 = pto.get_block_id() * 128
        a_l1 = pto.alloc_tile(128, 64, pto.float16, loc=pto.Mat)
        b_l1 = pto.alloc_tile(64, 256, pto.float16, loc=pto.Mat)
        a_l0 = pto.alloc_tile(128, 64, pto.float16, loc=pto.Left)
        b_l0 = pto.alloc_tile(64, 256, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(128, 256, pto.float32, loc=pto.Acc)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        for k0 in range(0, K, 64):
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
            pto.tload(a_l1, A + m0 * K + k0, stride=K)
            pto.tload(b_l1, B + k0 * N, stride=N)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
            pto.textract(a_l0, a_l1)
            pto.textract(b_l0, b_l1)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            if k0 == 0:
                pto.tmatmul(acc, a_l0, b_l0)
            else:
                pto.tmatmul_acc(acc, a_l0, b_l0)
            pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(C + m0 * N, acc, stride=N)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)


@pto.kernel
def gemm_without_flags(A, B, C, M, N, K):
    """The same GEMM with no flags at all, in the default sync="auto": ordered by its data."""
    with pto.cube():
        m0 = pto.get_block_id() * 128
        a_l1 = pto.alloc_tile(128, 64, pto.float16, loc=pto.Mat)
        b_l1 = pto.alloc_tile(64, 256, pto.float16, loc=pto.Mat)
        a_l0 = pto.alloc_tile(128, 64, pto.float16, loc=pto.Left)
        b_l0 = pto.alloc_tile(64, 256, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(128, 256, pto.float32, loc=pto.Acc)
        for k0 in range(0, K, 64):
            pto.tload(a_l1, A + m0 * K + k0, stride=K)
            pto.tload(b_l1, B + k0 * N, stride=N)
            pto.textract(a_l0, a_l1)
            pto.textract(b_l0, b_l1)
            if k0 == 0:
                pto.tmatmul(acc, a_l0, b_l0)
            else:
                pto.tmatmul_acc(acc, a_l0, b_l0)
        pto.tstore(C + m0 * N, acc, stride=N)


def _gemm_inputs(M=256, N=256, K=256):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    return a, b, a.astype(np.float32) @ b.astype(np.float32)


def _run_gemm(kernel, a, b, check=None):
    M, K = a.shape
    N = b.shape[1]
    C = pto.alloc_tensor(M * N * 4, pto.float32)
    pto.memcpy_h2d(C, np.zeros((M, N), np.float32))
    args = (dev(a, pto.float16), dev(b, pto.float16), C, M, N, K)
    pto.launch(kernel, grid=(M // 128,), args=args, check=check)
    pto.sync()
    return host(C, (M, N), np.float32)


def test_a_missing_flag_in_manual_mode_gives_the_stale_values_the_hardware_would():
    """Without MTE2 -> MTE1, TEXTRACT starts while TLOAD is still moving the data, reads the
    L1 buffer as it was, and C comes out wrong."""
    a, b, want = _gemm_inputs(N=256)
    got = _run_gemm(gemm_missing_flag, a, b)
    assert not np.allclose(got, want, rtol=1e-3, atol=1e-3)


def test_racecheck_names_both_instructions_pipes_lines_and_the_tile():
    a, b, _ = _gemm_inputs(N=256)
    with pytest.raises(pto.RaceError) as info:
        _run_gemm(gemm_missing_flag, a, b, check="race")
    msg = str(info.value)
    assert "TEXTRACT" in msg and "TLOAD" in msg and "PIPE_MTE1" in msg and "PIPE_MTE2" in msg
    assert "tile 'a_l1' (Mat)" in msg
    src = Path(__file__).read_text().splitlines()
    textract_line = next(i + 1 for i, t in enumerate(src) if "pto.textract(a_l0, a_l1)" in t)
    tload_line = next(i + 1 for i, t in enumerate(src) if "pto.tload(a_l1, A + m0 * K + k0" in t)
    assert f"line {textract_line}" in msg and f"line {tload_line}" in msg
    assert info.value.line == textract_line


def test_the_flagged_gemm_is_race_free_and_the_auto_mode_gemm_without_flags_is_correct():
    a, b, want = _gemm_inputs(N=256)
    np.testing.assert_allclose(_run_gemm(gemm_without_flags, a, b, check="race"), want, rtol=1e-4, atol=1e-4)
    c, reference, _ = gemm_manual.run(256, 256, 256, check="race")
    np.testing.assert_allclose(c, reference, rtol=1e-4, atol=1e-4)


@pto.kernel(sync="manual")
def wait_never_set(A):
    with pto.cube():
        t = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 3)
        pto.tload(t, A)


@pto.kernel
def cross_wait_never_set(A):
    with pto.vector():
        pto.cross_core_wait_flag(5)


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_a_wait_nothing_sets_is_a_deadlock_error(mode):
    """The same two errors, from the same builders, in timing and in functional mode."""
    a = dev(np.zeros((16, 16), np.float16), pto.float16)
    with pytest.raises(pto.DeadlockError, match=r"wait_flag\(PIPE_MTE2, PIPE_MTE1, 3\).*no set_flag"):
        pto.launch(wait_never_set, grid=(1,), args=(a,), mode=mode)
        pto.sync()
    with pytest.raises(pto.DeadlockError, match=r"block \(0, 0, 0\) AIV0 waits at line \d+ "
                                                r"\(cross_core_wait_flag\(5\)\)") as info:
        pto.launch(cross_wait_never_set, grid=(1,), args=(a,), mode=mode)
        pto.sync()
    # where, as attributes too, as every AI-core error gives it (the cross-core one had none)
    assert (info.value.unit, info.value.warp, info.value.block) == ("AIV0", 1, (0, 0, 0))


@pto.kernel(sync="manual")
def both_aivs_store(X, O):
    with pto.vector():
        t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.tload(t, X)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.tstore(O, t)


@pto.kernel(sync="manual")
def both_aivs_store_relayed(X, O):
    with pto.vector():
        t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.tload(t, X)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        if pto.get_subblock_id() == 0:
            pto.tstore(O, t)
        pto.cross_core_set_flag(0)
        pto.cross_core_wait_flag(1)
        if pto.get_subblock_id() == 1:
            pto.tstore(O, t)
    with pto.cube():
        pto.cross_core_wait_flag(0)
        pto.cross_core_set_flag(1)


@pto.kernel(sync="manual")
def flag_on_the_wrong_pipes(X, O):
    with pto.vector():
        t = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.tload(t, X)  # WRONG-PIPES-LOAD
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.tadds(t, t, 1.0)  # WRONG-PIPES-ADD
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 1)
        pto.tstore(O, t)


def test_a_flag_between_other_pipes_is_named_for_what_is_missing():
    """The kernel has a flag, but from MTE2 to MTE3, so nothing orders the TADDS on V after the
    TLOAD on MTE2: the report says which flag is missing between which lines (it said "nothing
    (no flag) orders the two pipes", which misleads a reader who sees a flag there)."""
    src = Path(__file__).read_text().splitlines()
    load, add = (next(i + 1 for i, t in enumerate(src) if t.endswith("# " + m))
                 for m in ("WRONG-PIPES-LOAD", "WRONG-PIPES-ADD"))
    x = dev(np.ones((16, 64), np.float32), pto.float32)
    with pytest.raises(pto.RaceError, match=rf"no set_flag\(PIPE_MTE2, PIPE_V, id\) after line {load} is waited "
                                            rf"for \(wait_flag\) before line {add}"):
        pto.launch(flag_on_the_wrong_pipes, grid=(1,), args=(x, pto.alloc_tensor(16 * 64 * 4)), check="race")
        pto.sync()


def test_a_race_between_the_two_aivs_is_told_to_relay_through_the_aic():
    """Both AIVs store the same GM rows: racecheck reports it, and its hint is the relay that
    works (cross-core signals go AIC -> AIVs and AIV -> AIC only; the hint told the user to pair
    a cross-core set and wait between the two AIVs, which deadlocks); the relayed kernel, as the
    hint says, runs race-free."""
    x = dev(np.ones((16, 64), np.float32), pto.float32)
    o = pto.alloc_tensor(16 * 64 * 4)
    with pytest.raises(pto.RaceError, match=r"TSTORE at line \d+ \(AIV1 PIPE_MTE3\) is not ordered after TSTORE "
                                            r"at line \d+ \(AIV0 PIPE_MTE3\)") as info:
        pto.launch(both_aivs_store, grid=(1,), args=(x, o), check="race")
        pto.sync()
    assert info.value.hint.startswith("two vector units cannot signal each other: relay through the AIC")
    pto.launch(both_aivs_store_relayed, grid=(1,), args=(x, o), check="race")
    pto.sync()
    np.testing.assert_array_equal(o.numpy(), 1.0)


# ---------------------------------------------------------------- cube and vector together
def test_the_vector_cores_see_the_cubes_result_through_gm_after_the_cross_core_flag():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    W = pto.alloc_tensor(32 * 32 * 4, pto.float32)
    out = pto.alloc_tensor(32 * 32 * 4, pto.float32)
    args = (dev(a, pto.float16), dev(b, pto.float16), W, out)
    prof = pto.profile(cube_then_vector, grid=(1,), args=args, check="race")
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32) + np.float32(1.0)
    np.testing.assert_array_equal(host(out, (32, 32), np.float32), want)
    units = {r["unit"]: r for r in prof.pipeline_summary().rows}
    assert units["AIC"]["cube_cycles"] > 0 and units["AIC"]["vec_cycles"] == 0
    assert units["AIV0"]["vec_cycles"] > 0 and units["AIV1"]["mte3_cycles"] > 0
    # the vector cores' loads start after the cube's store completed
    tl = prof.timeline
    store_end = max(e.end for e in tl if e.inst == "TSTORE_ACC")
    assert min(e.start for e in tl if e.inst == "TLOAD" and e.warp > 0) >= store_end


def test_the_trace_has_one_track_per_pipe_per_unit_and_the_csv_perf_sims_columns(tmp_path):
    _c, _r, prof = gemm_manual.run(256, 256, 128)
    trace = prof.trace()
    names = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    assert {"AIC MTE2", "AIC MTE1", "AIC M", "AIC FIX"} <= names
    path = prof.pipeline_summary().to_csv(tmp_path / "gemm_pipeline_summary.csv")
    head = path.read_text().splitlines()[0].split(",")
    assert head == ["op_name", "core_id", "unit", "total_cycles", "active_start_cycle",
                    "active_end_cycle", "active_cycles", "busy_cycles",
                    "scalar_cycles", "mte2_aic_cycles", "mte2_aiv_cycles", "mte1_cycles", "cube_cycles",
                    "fixp_cycles", "vec_cycles", "mte3_cycles"]
    rows = prof.pipeline_summary().rows
    # gemm_manual has a cube section only: its AIVs have no program and do not run
    assert {r["unit"] for r in rows} == {"AIC"} and len(rows) == len({r["core_id"] for r in rows})
    aic = rows[0]
    busy = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"}
    assert {"TLOAD", "TEXTRACT", "TMATMUL", "TSTORE_ACC"} <= busy
    assert 0 < aic["cube_cycles"] <= aic["active_cycles"] <= aic["total_cycles"]
    prof.export_csv(tmp_path / "csv")            # instr_exe.csv names the PTO pipes too
    with open(tmp_path / "csv" / "instr_exe.csv") as f:
        pipes = {r["instr"]: r["pipe"] for r in csv.DictReader(f)}
    assert {k: pipes[k] for k in ("TLOAD", "TEXTRACT", "TMATMUL", "TSTORE_ACC", "SET_FLAG")} == \
        {"TLOAD": "MTE2", "TEXTRACT": "MTE1", "TMATMUL": "M", "TSTORE_ACC": "FIX", "SET_FLAG": "S"}


@pto.kernel
def sized(A, C, T):
    """A tile whose size is a kernel argument: the kernel is specialised on T."""
    with pto.cube():
        m = pto.alloc_tile(T, T, pto.bfloat16, loc=pto.Mat)
        a = pto.alloc_tile(T, T, pto.bfloat16, loc=pto.Left)
        b = pto.alloc_tile(T, T, pto.bfloat16, loc=pto.Right)
        c = pto.alloc_tile(T, T, pto.float32, loc=pto.Acc)
        pto.tload(m, A)
        pto.tmov(a, m)
        pto.tmov(b, m)
        pto.tmatmul(c, a, b)
        pto.tstore(C, c)


def test_tile_sizes_from_kernel_arguments_and_bfloat16_inputs():
    rng = np.random.default_rng(6)
    for t in (16, 32):
        a = rng.standard_normal((t, t)).astype(np.float32)
        A = pto.alloc_tensor(t * t * 2, pto.bfloat16)
        pto.memcpy_h2d(A, a)                         # rounded to bfloat16 on the way in
        held = np.empty((t, t), np.float32)
        pto.memcpy_d2h(held, A)
        C = pto.alloc_tensor(t * t * 4, pto.float32)
        pto.launch(sized, grid=(1,), args=(A, C, t))
        want = (held.astype(np.float64) @ held.astype(np.float64)).astype(np.float32)
        np.testing.assert_array_equal(host(C, (t, t), np.float32), want)
    assert len(sized._programs) == 2


@pto.kernel
def handover_without_flag(A, B, W, Out):
    """cube_then_vector without the cross-core flag: the vector cores read W before the
    cube's store has landed."""
    with pto.cube():
        a_l1 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Mat)
        a_l0 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Left)
        b_l0 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(32, 32, pto.float32, loc=pto.Acc)
        pto.tload(a_l1, A)
        pto.tmov(a_l0, a_l1)
        pto.tmov(b_l0, a_l1)
        pto.tmatmul(acc, a_l0, b_l0)
        pto.tstore(W, acc)
    with pto.vector():
        half = pto.get_subblock_id() * 16 * 32
        s = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
        pto.tload(s, W + half)
        pto.tstore(Out + half, s)


def test_a_missing_cross_core_flag_is_a_race_on_the_gm_tensor():
    a = np.ones((32, 32), np.float16)
    W = pto.alloc_tensor(32 * 32 * 4, pto.float32)
    out = pto.alloc_tensor(32 * 32 * 4, pto.float32)
    args = (dev(a, pto.float16), dev(a, pto.float16), W, out)
    pto.launch(handover_without_flag, grid=(1,), args=args)
    pto.sync()
    assert not np.all(host(out, (32, 32), np.float32) == 32.0)      # stale: W was still zero
    with pytest.raises(pto.RaceError, match=r"race on GM tensor 'W'.*TSTORE_ACC at line \d+ \(AIC PIPE_FIX\)"
                                            r"|race on GM tensor 'W'.*TLOAD at line \d+ \(AIV\d PIPE_MTE2\)"):
        pto.launch(handover_without_flag, grid=(1,), args=args, check="race")
        pto.sync()


@pto.kernel
def update_in_place(O):
    """tload(d, O); tadds; tstore(O, d) with no flag: sync="auto" starts the TSTORE after the
    TADDS, which starts after the TLOAD (each reads the tile the one before wrote)."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)
            pto.tload(d, O)
            pto.tadds(d, d, 1.0)
            pto.tstore(O, d)


@pto.kernel
def store_then_reload(O, P):
    """tstore(O, d) then tload(e, O) into another tile: nothing orders the two GM accesses."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            d = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)
            e = pto.alloc_tile(4, 8, pto.float32, loc=pto.Vec)
            pto.texpands(d, 2.0)
            pto.tstore(O, d)
            pto.tload(e, O)
            pto.tstore(P, e)


def test_racecheck_counts_the_order_auto_sync_makes_through_tiles():
    """Under sync="auto" an operation waits for the other pipes' operations on its tiles, so
    the TLOAD and TSTORE of one GM tensor around an update of the tile in between are ordered
    (it was reported as a write-after-read race); a TLOAD of what a TSTORE wrote, into
    another tile, is not, and still races."""
    O = dev(np.zeros(32, np.float32), pto.float32)
    pto.launch(update_in_place, grid=(1,), args=(O,), check="race")
    pto.sync()
    np.testing.assert_array_equal(host(O, (32,), np.float32), np.ones(32))
    P = pto.alloc_tensor(32 * 4, pto.float32)
    with pytest.raises(pto.RaceError, match=r"read-after-write race on GM tensor 'O .*TLOAD at line \d+ .*after TSTORE"):
        pto.launch(store_then_reload, grid=(1,), args=(O, P), check="race")
        pto.sync()


# ---------------------------------------------------------------- races between AI cores
@pto.kernel
def cores_store(X, Y, shift, stride):
    """Each AI core (block b) loads its own 8 x 16 tile of X and stores it to Y at element
    b * shift, GM rows `stride` apart."""
    t = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
    b = pto.get_block_id()
    pto.tload(t, X + b * 128)
    pto.tstore(Y + b * shift, t, stride=stride)


@pto.kernel
def core_reads_what_another_writes(Y, Out):
    """Block 0 stores rows 0..7 of Y (32 columns); block 1 loads rows 4..11 and copies them out."""
    t = pto.alloc_tile(8, 32, pto.float32, loc=pto.Vec)
    if pto.get_block_id() == 0:
        pto.tstore(Y, t)
    else:
        pto.tload(t, Y + 4 * 32)
        pto.tstore(Out, t)


def _line_of(text):
    src = Path(__file__).read_text().splitlines()
    return next(i + 1 for i, t in enumerate(src) if text in t)


def _cores_store(shift, stride):
    X = dev(np.arange(256, dtype=np.float32), pto.float32)
    Y = pto.alloc_tensor(512 * 4, pto.float32)
    pto.memcpy_h2d(Y, np.zeros(512, np.float32))
    pto.launch(cores_store, grid=(2,), args=(X, Y, shift, stride), check="race")
    pto.sync()
    return host(Y, (512,), np.float32)


def test_two_ai_cores_storing_the_same_gm_words_is_a_race():
    """shift = 0: both cores store their 8 x 16 tile to Y[0:128] (stride 16). Nothing orders two
    AI cores of a launch (cross-core flags pair the units of one core), so - as for the blocks
    of a lane kernel - the second TSTORE is a write-after-write race with the first: block 1's
    AIV0 against block 0's AIV0, both at the tstore line."""
    with pytest.raises(pto.RaceError, match=r"write-after-write race on GM tensor 'Y' between AI cores") as info:
        _cores_store(0, 16)
    err = info.value
    line = _line_of("pto.tstore(Y + b * shift, t, stride=stride)")
    assert (err.line, err.other_line) == (line, line)
    assert (err.block, err.other_block) == (1, 0) and (err.warp, err.other_warp) == (1, 1)
    assert f"TSTORE at line {line} (block 1 AIV0 PIPE_MTE3)" in str(err)
    assert f"TSTORE at line {line} (block 0 AIV0 PIPE_MTE3)" in str(err)


def test_ai_cores_storing_disjoint_or_interleaved_gm_elements_do_not_race():
    """shift = 128: block 1 stores to Y[128:256], after block 0's Y[0:128]. shift = 16 with
    stride 32: block 0 stores columns 0..15 of eight 32-element rows (elements 0..239), block 1
    columns 16..31 (16..255); the spans overlap but no element is shared, so neither is a race
    (the check compares elements, as within a core)."""
    x = np.arange(256, dtype=np.float32)
    np.testing.assert_array_equal(_cores_store(128, 16)[:256], x)
    y = _cores_store(16, 32)[:256].reshape(8, 32)
    np.testing.assert_array_equal(y[:, :16], x[:128].reshape(8, 16))
    np.testing.assert_array_equal(y[:, 16:], x[128:].reshape(8, 16))


def test_an_ai_core_reading_gm_words_another_core_writes_is_a_race():
    """Block 0 stores Y rows 0..7, block 1 loads rows 4..11: rows 4..7 (128 elements) are
    shared. Both are the first tile instruction of their core at cycle 0; block 0 dispatches
    first, so block 1's TLOAD is the read-after-write race with block 0's TSTORE."""
    Y = pto.alloc_tensor(12 * 32 * 4, pto.float32)
    pto.memcpy_h2d(Y, np.zeros((12, 32), np.float32))
    Out = pto.alloc_tensor(8 * 32 * 4, pto.float32)
    with pytest.raises(pto.RaceError, match=r"read-after-write race on GM tensor 'Y' between AI cores") as info:
        pto.launch(core_reads_what_another_writes, grid=(2,), args=(Y, Out), check="race")
        pto.sync()
    err = info.value
    assert err.line == _line_of("pto.tload(t, Y + 4 * 32)") and err.other_line == _line_of("pto.tstore(Y, t)")
    assert (err.block, err.other_block) == (1, 0)


def test_the_examples_are_race_free_across_ai_cores():
    """Flash attention on 2 AI cores: both read all of KT and V, each writes its own workspace
    slots and rows of O, so check="race" finds nothing (gemm_manual: test above)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import flash_attention
    out, want, _prof = flash_attention.run(256, check="race")
    np.testing.assert_allclose(out, want, rtol=1e-2, atol=2e-3)


# ---------------------------------------------------------------- races through aliased arguments
@pto.kernel
def swap_halves(Src, Dst):
    """AIV k loads 16 x 32 float32 from Src + (1 - k) * 512 and stores it to Dst + k * 512."""
    with pto.vector():
        k = pto.get_subblock_id()
        s = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
        pto.tload(s, Src + (1 - k) * 512)
        pto.tstore(Dst + k * 512, s)


@pto.kernel
def swap_halves_in_place(X):
    """swap_halves with Src = Dst = X, one argument."""
    with pto.vector():
        k = pto.get_subblock_id()
        s = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
        pto.tload(s, X + (1 - k) * 512)
        pto.tstore(X + k * 512, s)


@pto.kernel
def swap_blocks(Src, Dst):
    """AI core b (its AIV0) loads 16 x 32 float32 from Src + (1 - b) * 512, stores it to Dst + b * 512."""
    b = pto.get_block_id()
    s = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
    pto.tload(s, Src + (1 - b) * 512)
    pto.tstore(Dst + b * 512, s)


@pto.kernel
def swap_blocks_in_place(X):
    """swap_blocks with Src = Dst = X, one argument."""
    b = pto.get_block_id()
    s = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
    pto.tload(s, X + (1 - b) * 512)
    pto.tstore(X + b * 512, s)


ALIASES = {"one argument": lambda X: (X,), "the same tensor twice": lambda X: (X, X),
           "a view and its tensor": lambda X: (X[256:1280], X)}


def _alias_race(kernel_pair, grid, how):
    """Launch kernel_pair's in-place kernel (one argument) or its two-argument one on X (1280
    float32 = 40 rows of 32) passed as ALIASES[how] says; return the RaceError."""
    X = pto.alloc_tensor(1280 * 4, pto.float32)
    pto.memcpy_h2d(X, np.arange(1280, dtype=np.float32))
    kernel = kernel_pair[0] if how == "one argument" else kernel_pair[1]
    with pytest.raises(pto.RaceError) as info:
        pto.launch(kernel, grid=grid, args=ALIASES[how](X), check="race")
        pto.sync()
    return info.value


@pytest.mark.parametrize("how", list(ALIASES))
def test_vector_units_racing_through_aliased_arguments_race_as_through_one(how):
    """AIV0 loads elements 512..1023 of Src and stores 0..511 of Dst; AIV1 loads 0..511 and
    stores 512..1023; no flag orders the two units. Src = Dst = X (one argument, or X passed
    twice): each store writes what the other unit reads. Src = X[256:1280] (a view 256 elements
    in), Dst = X: AIV0 reads X[768:1280] and writes X[0:512], AIV1 reads X[256:768] and writes
    X[512:1024], so X[256:512] and X[768:1024] are each read by one unit and written by the
    other. GM is compared by device bytes, not by argument, so all three are the same
    write-after-read race: a TSTORE of one AIV after a TLOAD of the other."""
    in_place = how == "one argument"
    err = _alias_race((swap_halves_in_place, swap_halves), (1,), how)
    load, store = (_line_of("pto.tload(s, X + (1 - k) * 512)"), _line_of("pto.tstore(X + k * 512, s)")) \
        if in_place else (_line_of("pto.tload(s, Src + (1 - k) * 512)"), _line_of("pto.tstore(Dst + k * 512, s)"))
    assert (err.line, err.other_line) == (store, load)
    assert {err.unit, err.other_unit} == {"AIV0", "AIV1"}
    text = str(err)
    assert "write-after-read race on GM tensor" in text and "in block (0, 0, 0)" in text
    assert f"TSTORE at line {store} ({err.unit} PIPE_MTE3) is not ordered after TLOAD at line {load} " \
           f"({err.other_unit} PIPE_MTE2)" in text
    if how == "a view and its tensor":     # each side's argument: the store's X, the load's view
        assert f"GM tensors 'X' at line {store} and 'X[256:1280]' at line {load}" in text
    else:
        assert "GM tensor 'X' in block" in text


@pytest.mark.parametrize("how", list(ALIASES))
def test_ai_cores_racing_through_aliased_arguments_race_as_through_one(how):
    """swap_halves between two AI cores: block 0 loads Src[512:1024] and stores Dst[0:512],
    block 1 loads Src[0:512] and stores Dst[512:1024] (the same bytes as on the vector units
    above for each aliasing). Nothing orders two AI cores, so every one is a write-after-read
    race between a TSTORE of one block and a TLOAD of the other."""
    err = _alias_race((swap_blocks_in_place, swap_blocks), (2,), how)
    names = ("X", "X") if how == "one argument" else ("Src", "Dst")
    load = _line_of(f"pto.tload(s, {names[0]} + (1 - b) * 512)")
    store = _line_of(f"pto.tstore({names[1]} + b * 512, s)")
    assert (err.line, err.other_line) == (store, load)
    assert {err.block, err.other_block} == {0, 1} and err.unit == err.other_unit == "AIV0"
    text = str(err)
    assert "write-after-read race on GM tensor" in text and "between AI cores" in text
    assert f"TSTORE at line {store} (block {err.block} AIV0 PIPE_MTE3)" in text
    assert f"TLOAD at line {load} (block {err.other_block} AIV0 PIPE_MTE2)" in text
    if how == "a view and its tensor":
        assert f"GM tensors 'X' at line {store} and 'X[256:1280]' at line {load}" in text


def test_disjoint_views_of_one_tensor_do_not_race():
    """Src = X[0:1024], Dst = X[1024:2048]: the two arguments share no byte, so neither the
    vector units' swap nor the AI cores' does races; Dst's first half is Src's second, and its
    second half Src's first."""
    for kernel, grid in ((swap_halves, (1,)), (swap_blocks, (2,))):
        x = np.arange(2048, dtype=np.float32)
        X = dev(x, pto.float32)
        pto.launch(kernel, grid=grid, args=(X[0:1024], X[1024:2048]), check="race")
        pto.sync()
        np.testing.assert_array_equal(host(X, (2048,), np.float32), np.concatenate([x[:1024], x[512:1024], x[:512]]))


@pto.kernel
def cores_store_columns(X, Y0, Y1):
    """AI core b loads its 8 x 16 tile of X and stores it to Yb, GM rows 32 elements apart."""
    t = pto.alloc_tile(8, 16, pto.float32, loc=pto.Vec)
    b = pto.get_block_id()
    pto.tload(t, X + b * 128)
    if b == 0:
        pto.tstore(Y0, t, stride=32)
    else:
        pto.tstore(Y1, t, stride=32)


def test_interleaved_windows_through_two_views_race_only_where_they_share_bytes():
    """Y is 8 rows of 32 float32. Y0 = Y, Y1 = Y[16:256]: block 0 stores columns 0..15 of
    the rows, block 1 columns 16..31 - the windows' spans overlap (elements 16..239) but no
    byte is shared, so no race, and Y holds X's two tiles side by side. Y1 = Y[8:256]: block
    1's columns 8..23 share columns 8..15 of every row with block 0's: a write-after-write
    race between the AI cores, naming each store's argument."""
    x = np.arange(256, dtype=np.float32)
    Y = pto.alloc_tensor(256 * 4, pto.float32)
    pto.memcpy_h2d(Y, np.zeros(256, np.float32))
    pto.launch(cores_store_columns, grid=(2,), args=(dev(x, pto.float32), Y, Y[16:256]), check="race")
    pto.sync()
    np.testing.assert_array_equal(host(Y, (8, 32), np.float32), np.hstack([x[:128].reshape(8, 16),
                                                                           x[128:].reshape(8, 16)]))
    with pytest.raises(pto.RaceError, match=r"write-after-write race on GM tensors '(Y|Y\[8:256\])' at line \d+ "
                                            r"and '(Y\[8:256\]|Y)' at line \d+ .* between AI cores") as info:
        pto.launch(cores_store_columns, grid=(2,), args=(dev(x, pto.float32), Y, Y[8:256]), check="race")
        pto.sync()
    lines = {_line_of("pto.tstore(Y0, t, stride=32)"), _line_of("pto.tstore(Y1, t, stride=32)")}
    assert {info.value.line, info.value.other_line} == lines and {info.value.block, info.value.other_block} == {0, 1}


def test_export_csv_of_an_ai_core_kernel_writes_perf_sims_pipeline_summary(tmp_path):
    _c, _r, prof = gemm_manual.run(256, 256, 128)
    paths = prof.export_csv(tmp_path)
    head = paths["pipeline_summary"].read_text().splitlines()[0]
    assert head.startswith("op_name,core_id,unit,total_cycles,active_start_cycle,active_end_cycle,"
                           "active_cycles,busy_cycles,scalar_cycles")


# ---------------------------------------------------------------- TGEMV: the m = 1 matmuls
@pto.kernel
def gemv(X, W, Bias, Y, Z):
    """Y = x @ W + x @ W (tgemv, then tgemv_acc); Z = x @ W + bias (tgemv_bias); x is one row."""
    x_l1 = pto.alloc_tile(16, 64, pto.float16, loc=pto.Mat, valid=(1, 64))
    w_l1 = pto.alloc_tile(64, 32, pto.float16, loc=pto.Mat)
    bias_l1 = pto.alloc_tile(16, 32, pto.float32, loc=pto.Mat)
    x = pto.alloc_tile(16, 64, pto.float16, loc=pto.Left, valid=(1, 64))
    w = pto.alloc_tile(64, 32, pto.float16, loc=pto.Right)
    bias = pto.alloc_tile(1, 32, pto.float32, loc=pto.Bias)
    y = pto.alloc_tile(16, 32, pto.float32, loc=pto.Acc, valid=(1, 32))
    z = pto.alloc_tile(16, 32, pto.float32, loc=pto.Acc, valid=(1, 32))
    pto.tload(x_l1, X)
    pto.tload(w_l1, W)
    pto.tload(bias_l1, Bias)
    pto.tmov(x, x_l1)
    pto.tmov(w, w_l1)
    pto.textract(bias, bias_l1)
    pto.tgemv(y, x, w)
    pto.tgemv_acc(y, x, w)
    pto.tgemv_bias(z, x, w, bias)
    pto.tstore(Y, y)
    pto.tstore(Z, z)


def test_tgemv_acc_and_bias_multiply_one_row_as_numpy_does():
    """Each TGEMV rounds its float32 result once: y = f32(f32(xW) + xW), z = f32(xW + bias)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 64)).astype(np.float16)
    w = rng.standard_normal((64, 32)).astype(np.float16)
    bias = np.zeros((16, 32), np.float32)
    bias[0] = rng.standard_normal(32)
    Y, Z = pto.alloc_tensor(32 * 4, pto.float32), pto.alloc_tensor(32 * 4, pto.float32)
    args = (dev(x, pto.float16), dev(w, pto.float16), dev(bias, pto.float32), Y, Z)
    pto.launch(gemv, grid=(1,), args=args, check="all")
    pto.sync()
    xw = x.astype(np.float64) @ w.astype(np.float64)
    once = xw.astype(np.float32)
    np.testing.assert_array_equal(host(Y, (1, 32), np.float32), (once.astype(np.float64) + xw).astype(np.float32))
    np.testing.assert_array_equal(host(Z, (1, 32), np.float32), (xw + bias[0]).astype(np.float32))


def test_tgemv_names_a_left_tile_of_more_than_one_row():
    @pto.kernel
    def wide(X):
        a = pto.alloc_tile(16, 64, pto.float16, loc=pto.Left)
        b = pto.alloc_tile(64, 32, pto.float16, loc=pto.Right)
        c = pto.alloc_tile(16, 32, pto.float32, loc=pto.Acc)
        pto.tgemv(c, a, b)
    with pytest.raises(pto.CompileError, match=r"tgemv: left 'a' has 16 valid rows; TGEMV multiplies one row"):
        wide.program_for((pto.alloc_tensor(256),))
