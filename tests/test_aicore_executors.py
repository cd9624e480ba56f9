"""The AI core's values come from the executor, once per instruction: whole AI-core kernels give
the same words with the numba executor and with the reference executor (the spec), in timing
and in functional mode; functional mode gives what timing mode gives on every AI-core example;
values=False gives the same cycles and records as values on, and refuses a kernel whose memory
reads could see a value it skips."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.errors import LaunchError

from engine_compare import both_executors, dev_array, same_words, tensor_values

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import flash_attention  # noqa: E402
import gemm_manual  # noqa: E402
import layer_norm  # noqa: E402
import rms_norm  # noqa: E402
import softmax  # noqa: E402
from row_kernels import run as run_rows  # noqa: E402


@pto.kernel
def cube_corpus(A, Bias, X, Acc, Gemv, Mov16, Y, Win):
    """TLOAD, TEXTRACT, TMOV (Mat -> Right, Acc -> Mat), TMATMUL, _ACC, _BIAS, TGEMV, _ACC,
    _BIAS, TSTORE (Acc and Mat) on 16 x 16 float16 tiles; on the vector cores vector ops, and
    the right half of a tile (a tsubview window, rows 32 words apart) loaded and stored."""
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        mb = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        a = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        a1 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left, valid=(1, 16))
        b = pto.alloc_tile(16, 16, pto.float16, loc=pto.Right)
        bias = pto.alloc_tile(1, 16, pto.float32, loc=pto.Bias)
        c = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        g = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc, valid=(1, 16))
        m16 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        pto.tload(m, A)
        pto.tload(mb, Bias)
        pto.textract(a, m)
        pto.textract(a1, m)
        pto.tmov(b, m)
        pto.textract(bias, mb)
        pto.tmatmul(c, a, b)
        pto.tmatmul_acc(c, a, b)
        pto.tmatmul_bias(c, a, b, bias)
        pto.tstore(Acc, c)
        pto.tgemv(g, a1, b)
        pto.tgemv_acc(g, a1, b)
        pto.tgemv_bias(g, a1, b, bias)
        pto.tstore(Gemv, g)
        pto.tmov(m16, c)
        pto.tstore(Mov16, m16)
    with pto.vector():
        x = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
        w = pto.tsubview(x, 0, 16, 16, 16)
        r = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        pto.tload(x, X)
        pto.trowmax(r, x)
        pto.trowexpandsub(x, x, r)
        pto.texp(x, x)
        pto.tstore(Y + pto.get_subblock_id() * 16 * 32, x)
        pto.tload(w, X + 16 * 32 + 16, stride=32)          # X[16:32, 16:32]
        pto.tstore(Win + pto.get_subblock_id() * 16 * 16, w)


def test_cube_and_vector_corpus_is_the_same_in_both_executors_and_modes():
    """Special float16 values (NaN, inf, -0, the largest, subnormals) through every cube move
    and matmul form and through vector ops: four runs, one set of words."""
    rng = np.random.default_rng(21)
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 65504.0, 6e-8, 2.0**-14,
                         0.5, -2.5, 3.0, 1e-3, 100.0, -7.0], np.float16)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    a[np.arange(16), np.arange(16)] = specials
    bias = rng.standard_normal((16, 16)).astype(np.float32)
    x = rng.standard_normal((32, 32)).astype(np.float32)
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    outs = [pto.alloc_tensor(n, dt) for n, dt in ((1024, pto.float32), (1024, pto.float32),
                                                  (512, pto.float16), (4096, pto.float32),
                                                  (2048, pto.float32))]
    args = (dev_array(a, pto.float16), dev_array(bias, pto.float32), dev_array(x, pto.float32), *outs)
    images = both_executors(cube_corpus, (1,), args)
    first = images[("timing", "numba")]
    for key, words in images.items():
        same_words(words, first, f"{key} against timing with numba")
    assert not np.isnan(tensor_values(first, outs[0])[:256]).all(), "the matmul wrote its result"
    win = tensor_values(first, outs[4])[:512].reshape(2, 16, 16)
    np.testing.assert_array_equal(win[0], x[16:, 16:])     # rows 16-31 of X, columns 16-31


@pto.kernel
def log_of(X, Y):
    with pto.vector():
        t = pto.alloc_tile(1, 8, pto.float32, loc=pto.Vec)
        pto.tload(t, X)
        pto.tlog(t, t)
        pto.tstore(Y, t)


def test_a_nan_keeps_its_sign_through_tlog_in_both_executors():
    """log of a NaN is that NaN (sign kept: -NaN 0xffc00000 stays -NaN), of a negative number
    the positive default NaN 0x7fc00000, of -0.0 -inf, of 1 0: bit for bit the same four ways
    (a fuzzing run found the reference giving +NaN for -NaN where numba kept the sign)."""
    x = np.array([0xFFC00000, 0x7FC00000, 0xBF800000, 0x80000000, 0x3F800000, 0, 0, 0], np.uint32)
    X, Y = dev_array(x.view(np.float32), pto.float32), pto.alloc_tensor(32)
    images = both_executors(log_of, (1, 1, 1), (X, Y))
    first = images[("timing", "numba")]
    for key, image in images.items():
        same_words(image, first, str(key))
    got = tensor_values(first, Y).astype(np.float32).view(np.uint32)[:5]
    assert [hex(v) for v in got] == ["0xffc00000", "0x7fc00000", "0x7fc00000", "0xff800000", "0x0"]


@pto.kernel
def nan_rows(X, S, P):
    with pto.vector():
        t = pto.alloc_tile(2, 8, pto.float32, loc=pto.Vec)
        s = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor, valid=(2, 1))
        p = pto.alloc_tile(8, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor, valid=(2, 1))
        pto.tload(t, X)
        pto.trowsum(s, t)
        pto.trowprod(p, t)
        pto.tstore(S, s)
        pto.tstore(P, p)


def test_a_row_of_two_nans_reduces_to_the_first_in_both_executors():
    """Rows (+NaN, -NaN, 1, ...) and (-NaN, +NaN, 1, ...): a sum or product of two NaNs keeps
    the partial result's, so the rows reduce to +NaN (0x7fc00000) and -NaN (0xffc00000), the
    same bits four ways (a fuzzing run found the reference keeping the later NaN's sign)."""
    row = np.ones(8, np.uint32) * 0x3F800000
    x = np.stack([row, row]).copy()
    x[0, :2] = (0x7FC00000, 0xFFC00000)
    x[1, :2] = (0xFFC00000, 0x7FC00000)
    X = dev_array(x.view(np.float32).ravel(), pto.float32)
    S, P = pto.alloc_tensor(8), pto.alloc_tensor(8)
    images = both_executors(nan_rows, (1, 1, 1), (X, S, P))
    first = images[("timing", "numba")]
    for key, image in images.items():
        same_words(image, first, str(key))
    for t in (S, P):
        got = tensor_values(first, t).astype(np.float32).view(np.uint32)
        assert [hex(v) for v in got] == ["0x7fc00000", "0xffc00000"]


def test_examples_are_the_same_in_both_executors_and_modes():
    """The GEMM (one 128 x 256 output tile, K = 128) and flash attention (S = 128) examples and
    the row softmax, layer norm and RMS norm (32 rows of 64, float16 data): four runs of each
    give one set of words."""
    rng = np.random.default_rng(3)
    M, N, K = 128, 256, 128
    A = dev_array(rng.standard_normal((M, K)).astype(np.float16), pto.float16)
    B = dev_array(rng.standard_normal((K, N)).astype(np.float16), pto.float16)
    C = pto.alloc_tensor(M * N * 4, pto.float32)
    cases = [(gemm_manual.gemm, (1,), (A, B, C, M, N, K))]
    S, D, BQ, BK = 128, flash_attention.D, flash_attention.BQ, flash_attention.BK
    q, k, v = (rng.standard_normal((S, D)).astype(np.float16) for _ in range(3))
    fa = (dev_array(q, pto.float16), dev_array(np.ascontiguousarray(k.T), pto.float16),
          dev_array(v, pto.float16), pto.alloc_tensor(S * D * 4, pto.float32),
          pto.alloc_tensor(2 * BQ * BK * 4, pto.float32), pto.alloc_tensor(2 * BQ * BK * 2, pto.float16),
          pto.alloc_tensor(2 * BQ * D * 4, pto.float32), S, 1.0 / math.sqrt(D))
    cases.append((flash_attention.flash_attention, (S // BQ,), fa))
    X = dev_array(rng.standard_normal((32, 64)).astype(np.float16), pto.float16)
    for make, extra in ((softmax.make_softmax, (64,)), (layer_norm.make_layer_norm, (64, 1 / 64)),
                        (rms_norm.make_rms_norm, (64, 1 / 64))):
        cases.append((make(True), (1,), (X, pto.alloc_tensor(32 * 64 * 2, pto.float16), *extra)))
    for kernel, grid, args in cases:
        images = both_executors(kernel, grid, args)
        first = images[("timing", "numba")]
        for key, words in images.items():
            same_words(words, first, f"{kernel.name} {key} against timing with numba")


@pto.kernel(sync="auto")
def add_one_to_valid_columns(O, valid_cols):
    """Sevens in a 2 x 64 float32 tile, then TADDS 1 over its first valid_cols columns (a
    run-time valid width, the whole tile's pitch)."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec, valid=(2, valid_cols))
            whole = pto.tsubview(t, 0, 0, 2, 64)
            pto.texpands(whole, 7.0)
            pto.tadds(t, t, 1.0)
            pto.tstore(O, whole)


@pto.kernel(sync="auto")
def add_one_to_nine_columns(O, valid_cols):
    """add_one_to_valid_columns with the valid width 9 a constant (valid_cols unused)."""
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(2, 64, pto.float32, loc=pto.Vec, valid=(2, 9))
            whole = pto.tsubview(t, 0, 0, 2, 64)
            pto.texpands(whole, 7.0)
            pto.tadds(t, t, 1.0)
            pto.tstore(O, whole)


@pytest.mark.parametrize("valid_cols", [1, 9, 63, 64])
def test_an_elementwise_op_with_a_run_time_valid_width_leaves_the_columns_past_it(valid_cols):
    """A2/A3 masks each row of an elementwise op to the tile's validCol (TBinSOp.hpp: count
    mode or a tail mask per row), so TADDS over a tile with valid=(2, w), w known only at run
    time, adds 1 to the first w columns of each row and leaves the rest as they were (7):
    8 in columns 0..w-1, 7 in w..63, in timing and functional mode with both executors."""
    out = pto.alloc_tensor(2 * 64 * 4, pto.float32)
    want = np.full((2, 64), 7.0, np.float32)
    want[:, :valid_cols] = 8.0
    images = both_executors(add_one_to_valid_columns, (1,), (out, valid_cols))
    for key, image in images.items():
        np.testing.assert_array_equal(tensor_values(image, out).reshape(2, 64), want, err_msg=str(key))


def test_a_run_time_valid_width_costs_what_the_same_constant_width_costs():
    """The op's cost is priced on the rows of its valid width whether the width is a constant
    or a register: TADDS over valid (2, 9) takes as many cycles either way, and the kernels'
    timelines end at the same cycle."""
    out = pto.alloc_tensor(2 * 64 * 4, pto.float32)
    run_time = pto.profile(add_one_to_valid_columns, grid=(1,), args=(out, 9))
    constant = pto.profile(add_one_to_nine_columns, grid=(1,), args=(out, 9))

    def tadds(prof):
        return [e.end - e.start for e in prof.timeline if e.inst == "TADDS"]
    assert tadds(run_time) == tadds(constant) and len(tadds(constant)) == 1
    assert run_time.total_cycles == constant.total_cycles


# ---------------------------------------------------------------- functional mode

@pytest.mark.parametrize("example", ["gemm", "flash_attention", "softmax", "layer_norm", "rms_norm"])
def test_functional_mode_computes_what_timing_mode_computes(example):
    """Every AI-core example, at the size its main() runs (float16 for the row kernels), in
    timing and in functional mode: the same output, word for word."""
    def run(mode):
        if example == "gemm":
            return gemm_manual.run(512, 512, 512, mode=mode)[0]
        if example == "flash_attention":
            return flash_attention.run(512, mode=mode)[0]
        module = {"softmax": softmax, "layer_norm": layer_norm, "rms_norm": rms_norm}[example]
        make = getattr(module, f"make_{example}")
        extra = (256,) if example == "softmax" else (512, 1 / 512)
        return run_rows(make(True), module.reference, 256, 256 if example == "softmax" else 512,
                        pto.float16, extra, mode=mode)[0]
    timed, functional = run("timing"), run("functional")
    assert functional.dtype == timed.dtype and functional.shape == timed.shape
    np.testing.assert_array_equal(functional, timed)


def test_functional_mode_reports_no_cycles_and_counts_instructions():
    """A functional profile has no cycles; it counts the units' instructions: the GEMM at
    128 x 256 x 128 is one AI core whose AIC runs the K loop once (two k_steps), and its
    units execute the instructions the timed run records, one for one."""
    _c, _ref, prof = gemm_manual.run(128, 256, 128, mode="functional")
    assert prof.total_cycles is None and prof.mode == "functional"
    assert prof.warp_instructions == gemm_manual.run(128, 256, 128)[2].warp_instructions
    with pytest.raises(TypeError, match="no cycles"):
        prof.cycle_breakdown()


# ---------------------------------------------------------------- values=False

@pytest.mark.parametrize("example", ["gemm", "flash_attention"])
def test_values_off_gives_the_same_cycles_and_records(example):
    """values=False times the same instructions at the same cycles (timing never reads a tile
    value): total cycles and every record equal the values-on run; the output is not computed
    (the GEMM's C keeps the zeros it was given)."""
    def run(values):
        if example == "gemm":
            return gemm_manual.run(512, 512, 512, values=values)
        return flash_attention.run(256, values=values)
    out_on, _ref, on = run(True)
    out_off, _ref, off = run(False)
    assert on.total_cycles == off.total_cycles
    for field in ("block", "warp", "pc", "issue", "complete", "stall", "cause"):
        np.testing.assert_array_equal(getattr(on.records, field), getattr(off.records, field),
                                      err_msg=field)
    if example == "gemm":
        assert (out_off == 0).all() and not (out_on == 0).all()


@pto.kernel
def tile_then_lane(X, Y, n):
    """The article's tile API writes Y with a tile store; a lane then reads Y back."""
    t = pto.alloc_local(32)
    pto.async_load(t, X, rows=1, cols=32, stride=32)
    pto.wait_all()
    pto.store(Y, t, rows=1, cols=32, stride=32)
    pto.wait_all()
    i = pto.get_global_id(0)
    v = pto.load(Y + i)
    if v > 0.0:
        pto.store(X + i, v)


def test_values_off_refuses_a_read_of_what_a_tile_store_writes():
    """With values=False the tile store of tile_then_lane computes nothing, and the lane load
    of Y then decides a branch: a LaunchError naming the load's line, before anything runs;
    values on, the launch runs."""
    X = dev_array(np.ones(32, np.float32), pto.float32)
    Y = pto.alloc_tensor(128, pto.float32)
    with pytest.raises(LaunchError, match="values=False") as err:
        pto.launch(tile_then_lane, grid=(1,), block=(32,), args=(X, Y, 32), values=False)
    load_line = next(n for n, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                     if "v = pto.load(Y + i)" in text)
    assert err.value.line == load_line and "LOAD" in str(err.value)
    pto.launch(tile_then_lane, grid=(1,), block=(32,), args=(X, Y, 32))
    pto.sync()


def test_values_off_with_functional_mode_is_refused():
    """values=False computes no values and mode='functional' no cycles: together nothing."""
    X = dev_array(np.ones(32, np.float32), pto.float32)
    Y = pto.alloc_tensor(128, pto.float32)
    with pytest.raises(LaunchError, match="would compute nothing"):
        pto.launch(tile_then_lane, grid=(1,), block=(32,), args=(X, Y, 32), mode="functional",
                   values=False)
