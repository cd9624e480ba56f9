"""The ports of pto-isa's published kernels (examples/gemm_ar_compute.py, conv2d_forward.py,
topk.py, flash_atten_a3.py) taken to the edges of what their sources allow, as a user who changes
an example would: shapes the source accepts that the published ones do not exercise, special
values, and shapes the ports refuse, which must be a typed error naming the kernel and what to do.

- gemm_ar (kernels/manual/a2a3/gemm_ar/gemm_compute_kernel.cpp): K needs only whole L1 panels of
  stepK x 64 = 256 (static_assert G_K_LOOP % G_STEP_KA == 0, G_K_LOOP >= G_STEP_KA), taken from
  buffers 0, 1, 0, ... as mte2DBFlag toggles; K is not padded (gemm_ar_config.h G_K = G_ORIG_K).
- conv2d_forward (conv2d_forward_kernel.cpp): the feature-map buffer is a ConvTile of
  channelSize x win x (ceil(baseM / wout) + 2) pixels, any win; the port's Mat tile of those
  pixels x 16 channels must be whole 16 x 16 fractal boxes.
- topk (topk_kernel.cpp ProcessSingleRow): gen_data.py's golden is np.lexsort((index, -value)):
  ties by the lower index.
- flash attention (fa_performance_kernel.cpp): the golden is softmax(Q K^T / sqrt(128)) V.

Not ported: NaN inputs (no gen_data.py defines a golden with NaN: TSORT32's order of a NaN is not
public); the GEMM of benchmarks/published.py at K = 256 x odd (its check_gemm_shape refuses it with
a clear error, and its m = k = n rows are multiples of 1536).
"""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import conv2d_forward  # noqa: E402
import flash_atten_a3  # noqa: E402
import gemm_ar_compute  # noqa: E402
import topk  # noqa: E402

MODES = (("timing", {"check": "race"}), ("functional", {}))


def _tensor(array, dtype):
    t = pto.alloc_tensor(array.nbytes, dtype)
    pto.memcpy_h2d(t, array)
    return t


def _gemm_ar(a, b, blocks, mode, kw):
    """C (float16) of gemm_ar_compute on padded A [MP, K] and B [K, NP] (B passed as DN)."""
    mp, np_ = a.shape[0], b.shape[1]
    C = pto.alloc_tensor(mp * np_ * 2, pto.float16)
    pto.launch(gemm_ar_compute.gemm_ar_compute, grid=(blocks,), mode=mode, **kw,
               args=(_tensor(a, pto.float16), _tensor(np.ascontiguousarray(b.T), pto.float16), C, mp, np_, a.shape[1]))
    pto.sync()
    c = np.empty((mp, np_), np.float16)
    pto.memcpy_d2h(c, C)
    return c


@pytest.mark.parametrize("mode,kw", MODES)
def test_gemm_ar_takes_an_odd_number_of_l1_panels_as_the_source_does(mode, kw):
    """K = 768 is three L1 panels of 256 (G_K_LOOP = 12, a multiple of stepK 4): the source loads
    them into buffers 0, 1, 0. M = N = 130 pad to 256 x 512 (four tiles) on three blocks (2, 1, 1
    tiles). C is numpy's float32 product rounded to float16, zero in the padding; no race; the
    host arrays are not modified."""
    rng = np.random.default_rng(5)
    a = np.zeros((256, 768), np.float16)
    b = np.zeros((768, 512), np.float16)
    a[:130] = rng.standard_normal((130, 768)).astype(np.float16)
    b[:, :130] = rng.standard_normal((768, 130)).astype(np.float16)
    a0, b0 = a.copy(), b.copy()
    c = _gemm_ar(a, b, 3, mode, kw)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float32), want.astype(np.float32), rtol=1e-2, atol=5e-2)
    assert not c[130:].any() and not c[:, 130:].any()
    assert np.array_equal(a, a0) and np.array_equal(b, b0)


def test_gemm_ar_run_refuses_k_that_is_not_whole_panels():
    """run() pads M and N (AlignUp) but not K (G_K = G_ORIG_K): K = 300 is refused before the
    launch with a typed error naming the kernel and the padding to do (it read past A's rows)."""
    with pytest.raises(pto.ArgumentError, match="K a positive multiple of 256") as info:
        gemm_ar_compute.run(128, 300, 256, cores=1)
    assert info.value.kernel == "gemm_ar_compute" and "zero-pad" in info.value.hint


@pytest.mark.parametrize("shape", [(1, 2, 5, 7), (1, 2, 3, 130), (1, 2, 1, 1)])
def test_conv2d_takes_a_width_that_is_not_a_multiple_of_16(shape):
    """W = 7, 130 and 1 (the published W are 48 to 128): the source's ConvTile holds any win; the
    port's feature-map Mat tile rounds its pixels up to whole 16-row boxes. gen_data.py's golden
    within conv2d_forward.TOLERANCE, race-free (W = 130: 390 outputs, four 128-output blocks)."""
    err, _ = conv2d_forward.run(*shape, 1536, check="race")
    assert err <= conv2d_forward.TOLERANCE


def test_conv2d_overflow_is_inf_as_the_goldens_float16_cast():
    """X = [1, 2, 3, 16, 16] and the weights all 60000: every output's float32 sum is past float16's range and is
    inf after the fixpipe's conversion, as gen_data.py's astype(float16); zeros give zeros. The
    host arrays are not modified."""
    x, fz, _ = conv2d_forward.golden(1, 2, 3, 16, 1536)
    for fill, want in ((60000, np.inf), (0, 0.0)):
        xs, ws = np.full_like(x, fill), np.full_like(fz, fill)
        Y = pto.alloc_tensor(3 * 16 * 1536 * 2, pto.float16)
        pto.launch(conv2d_forward.conv2d_forward, grid=(6,), args=(_tensor(xs, pto.float16), _tensor(ws, pto.float16),
                                                                   Y, 2, 3, 16, 1536), check="race")
        pto.sync()
        got = np.empty(3 * 16 * 1536, np.float16)
        pto.memcpy_d2h(got, Y)
        assert (got == want).all() and (xs == fill).all() and (ws == fill).all()


def test_conv2d_run_refuses_odd_c1_with_a_typed_error():
    """An odd C1 (the port's unrolled flag ids need every output tile to start on buffer 0)."""
    with pytest.raises(pto.ArgumentError, match="even C1") as info:
        conv2d_forward.run(1, 3, 4, 48, 1536)
    assert info.value.kernel == "conv2d_forward"


def _topk_golden(data, k):
    idx = np.arange(topk.VALID_COL)
    order = np.stack([np.lexsort((idx, -row.astype(np.float64)))[:k] for row in data[:, :topk.VALID_COL]])
    return np.take_along_axis(data[:, :topk.VALID_COL], order, 1), order.astype(np.int32)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_topk_ties_infinities_and_signed_zeros_follow_lexsort(dtype):
    """192 rows of values from {-3, ..., 2} (ties everywhere), then +-inf, the type's largest
    magnitudes and -0.0: values (bit for bit) and indices are gen_data's lexsort golden, ties by
    the lower index, in both modes; the host array is not modified."""
    dt, k = np.dtype(dtype), topk.TOPK_OF[dtype]
    rng = np.random.default_rng(2)
    data = np.zeros((192, topk.COLS), dt)
    data[:, :topk.VALID_COL] = rng.integers(-3, 3, (192, topk.VALID_COL))
    data[:, 5], data[:, 7], data[:, 900] = np.inf, -np.inf, np.inf
    data[:, 11], data[:, 12] = np.finfo(dt).max, -np.finfo(dt).max
    data[:, 20:40] = -0.0
    before = data.copy()
    want_v, want_i = _topk_golden(data, k)
    for mode, kw in MODES:
        out = pto.alloc_tensor(192 * k * dt.itemsize, getattr(pto, dtype))
        index = pto.alloc_tensor(192 * k * 4, pto.int32)
        args = (out, index, _tensor(data, getattr(pto, dtype)),
                _tensor(np.arange(topk.VALID_COL, dtype=np.uint32), pto.uint32), 4)
        pto.launch(topk.kernel_for(dtype), grid=(24,), args=args, mode=mode, **kw)
        pto.sync()
        got_v, got_i = np.empty((192, k), dt), np.empty((192, k), np.int32)
        pto.memcpy_d2h(got_v, out)
        pto.memcpy_d2h(got_i, index)
        assert np.array_equal(got_v.view(np.uint8), want_v.view(np.uint8)) and np.array_equal(got_i, want_i)
    assert np.array_equal(data.view(np.uint8), before.view(np.uint8))


def test_topk_two_iterations_race_is_the_sources_own():
    """384 rows: 8 rows a core, two iterations of runTOPK's loop. topk_kernel.cpp's
    ProcessSingleRow has no MTE3 -> V flag between an iteration's TSTORE of dTile[cur] and the
    next one's TGATHER into it: check="race" names that pair (the port keeps the source's flags);
    without the check the values are gen_data's golden."""
    data, idx, want_v, want_i = topk.golden(384)
    args = (pto.alloc_tensor(384 * 1000 * 4, pto.float32), pto.alloc_tensor(384 * 1000 * 4, pto.int32),
            _tensor(data, pto.float32), _tensor(idx, pto.uint32), 8)
    with pytest.raises(pto.RaceError, match=r"TGATHER at line \d+ .* TSTORE at line \d+ \(AIV\d PIPE_MTE3\)"):
        pto.launch(topk.topk, grid=(24,), args=args, check="race")
        pto.sync()
    got_v, got_i, _ = topk.run(384, profile=False)
    assert np.array_equal(got_v, want_v) and np.array_equal(got_i, want_i)


def test_topk_run_refuses_rows_with_a_typed_error():
    """Rows not a positive multiple of 192 (Check<>'s validRow % 4 on 48 cores), 0 included."""
    for rows in (100, 0):
        with pytest.raises(pto.ArgumentError, match="multiple of 192") as info:
            topk.run(rows)
        assert info.value.kernel == "topk"


def _fa(q, k, v, mode, kw):
    s0, s1 = q.shape[0], k.shape[0]
    blocks = s0 // flash_atten_a3.CUBE_S0
    O = pto.alloc_tensor(s0 * 128 * 4, pto.float32)
    ws = [pto.alloc_tensor(blocks * flash_atten_a3.CV_FIFO * n, dt) for n, dt in
          ((flash_atten_a3.QK_SLOT * 4, pto.float32), (flash_atten_a3.QK_SLOT * 2, pto.float16),
           (flash_atten_a3.PV_SLOT * 4, pto.float32))]
    scale = float(np.float32(1.0 / math.sqrt(128)))
    pto.launch(flash_atten_a3.run_tfa, grid=(blocks,), mode=mode, **kw,
               args=(*(_tensor(x, pto.float16) for x in (q, k, v)), O, *ws, s1, scale))
    pto.sync()
    out = np.empty((s0, 128), np.float32)
    pto.memcpy_d2h(out, O)
    return out


@pytest.mark.parametrize("mode,kw", MODES)
def test_flash_attention_large_scores_and_a_dominant_late_key(mode, kw):
    """S0 = 128, S1 = 512 (the smallest the port takes): Q and K scaled by 30 (scores in the
    thousands: the running max keeps exp finite), then every query peaked on key 300 (tile 1, so
    the rescale by exp(old max - new max) carries it), then Q = K = 0 (uniform P). O within
    the port's tolerance of softmax(Q K^T / sqrt(128)) V; the host arrays are not modified."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((n, 128)).astype(np.float16) for n in (128, 512, 512))
    peak_q, peak_k = np.zeros_like(q), np.zeros_like(k)
    peak_q[:, 0], peak_k[300, 0] = 10, 10
    for qq, kk in (((q * 30).astype(np.float16), (k * 30).astype(np.float16)), (peak_q, peak_k),
                   (np.zeros_like(q), np.zeros_like(k))):
        before = (qq.copy(), kk.copy(), v.copy())
        out = _fa(qq, kk, v, mode, kw)
        assert np.allclose(out, flash_atten_a3.reference(qq, kk, v), rtol=1e-2, atol=2e-3)
        assert all(np.array_equal(x, y) for x, y in zip(before, (qq, kk, v)))


def test_flash_attention_run_refuses_short_or_ragged_sequences_with_a_typed_error():
    """S1 = 256 (one tile: the non-causal compute_gu never divides), S0 = 0 or 100."""
    for s0, s1 in ((128, 256), (0, 512), (100, 512)):
        with pytest.raises(pto.ArgumentError, match="at least 512") as info:
            flash_atten_a3.run(s0, s1)
        assert info.value.kernel == "run_tfa"
