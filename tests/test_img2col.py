"""TIMG2COL (isa/45_conv.toml): hand-derived values of a tiny feature map, the numba kernel
against the reference's, a conv kernel on both executors in both modes against numpy, and
its cost from the table's entry."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.exec import reference
from pypto_sim.exec.lane import executor

from engine_compare import both_executors, tensor_values
from img2col_reference import numpy_img2col

C0 = 16


def pack(pos_m, pos_k, h, w, pads, filt=(3, 3), stride=(1, 1), dil=(1, 1), c1=1):
    """The four packed operands as isa/45_conv.toml lays them out (pads: left, right, top, bottom)."""
    pl, pr, pt, pb = pads
    conv = (filt[1] | filt[0] << 4 | stride[1] << 8 | stride[0] << 12 | dil[1] << 16 | dil[0] << 20
            | c1 << 24)
    return pos_m | pos_k << 16, w | h << 16, pl | pr << 8 | pt << 16 | pb << 24, conv


def test_a_2x2_map_padded_by_one_gives_each_pixels_taps():
    """Pixel p = (y, x) of a 2 x 2 map holds p * 16 + c in channel c; pads of 1 and a 3 x 3
    filter give 2 x 2 outputs. Output 0 = (0, 0): tap (1, 1) (columns 64..79) is pixel 0
    (values 0..15), tap (0, 0) (columns 0..15) reads the top padding: 0; tap (2, 2) (columns
    128..143) is pixel 3: 48..63. Output 3 = (1, 1): tap (0, 0) is pixel 0 again: 0..15."""
    mem = np.zeros(1000)
    mem[100:164] = np.arange(64)
    out = np.zeros(4 * 144)
    for impl in (executor(), reference):
        impl.tile_img2col(out, mem, 100, C0, 4, 144, *pack(0, 0, 2, 2, (1, 1, 1, 1)))
        got = out.reshape(4, 144)
        np.testing.assert_array_equal(got[0, 64:80], np.arange(16))
        np.testing.assert_array_equal(got[0, 0:16], np.zeros(16))
        np.testing.assert_array_equal(got[0, 128:144], np.arange(48, 64))
        np.testing.assert_array_equal(got[3, 0:16], np.arange(16))


@pytest.mark.parametrize("h, w, pads, filt, stride, dil, c1, pos_m, pos_k, rows, cols", [
    (4, 12, (1, 1, 1, 1), (3, 3), (1, 1), (1, 1), 1, 0, 0, 48, 144),
    (4, 12, (1, 1, 0, 2), (3, 3), (1, 1), (1, 1), 1, 5, 48, 32, 48),
    (5, 7, (2, 1, 1, 0), (3, 2), (2, 1), (1, 2), 2, 3, 16, 9, 100),
    (3, 3, (0, 0, 0, 0), (1, 1), (1, 1), (1, 1), 3, 4, 0, 8, 48)])
def test_the_numba_kernel_matches_the_reference_and_numpy(h, w, pads, filt, stride, dil, c1, pos_m, pos_k,
                                                          rows, cols):
    """Random words at an offset: both executors give the window (pos_m, pos_k) of numpy's
    img2col matrix, zero past its last row or column."""
    rng = np.random.default_rng(h * w + c1)
    fmap = rng.integers(-9, 9, (c1, h, w, C0)).astype(np.float64)
    mem = rng.standard_normal(40000)
    mem[300:300 + fmap.size] = fmap.reshape(-1)
    full = numpy_img2col(fmap, pads, filt, stride, dil)
    want = np.zeros((rows, cols))
    part = full[pos_m:pos_m + rows, pos_k:pos_k + cols]
    want[:part.shape[0], :part.shape[1]] = part
    for impl in (executor(), reference):
        out = np.full(rows * cols, np.nan)
        impl.tile_img2col(out, mem, 300, C0, rows, cols, *pack(pos_m, pos_k, h, w, pads, filt, stride, dil, c1))
        np.testing.assert_array_equal(out.reshape(rows, cols), want)


def test_special_values_move_bit_for_bit_and_the_padding_is_positive_zero():
    """A 1 x 1 map of NaN, inf, -inf, -0.0 and 12 ones, a 3 x 3 filter with pads of 1: the
    single output's centre tap (columns 64..79) is the pixel word for word (-0.0 keeps its
    sign), every other tap is padding, +0.0."""
    mem = np.zeros(64)
    mem[16:32] = [np.nan, np.inf, -np.inf, -0.0] + [1.0] * 12
    for impl in (executor(), reference):
        out = np.full(144, 7.0)
        impl.tile_img2col(out, mem, 16, C0, 1, 144, *pack(0, 0, 1, 1, (1, 1, 1, 1)))
        np.testing.assert_array_equal(out[64:80], mem[16:32])
        assert np.signbit(out[67]) and not np.signbit(out[:64]).any()
        np.testing.assert_array_equal(np.delete(out, np.arange(64, 80)), np.zeros(128))


H, W = 4, 12


@pto.kernel(sync="manual")
def conv_step(X, B, Y):
    """One implicit-GEMM step: X (H x W pixels of 16 channels, NC1HWC0) -> img2col columns
    48..95 (taps 3..5) of all 48 outputs, times B [48, 16]."""
    with pto.cube():
        f = pto.alloc_tile(H * W, C0, pto.float16, loc=pto.Mat)
        bm = pto.alloc_tile(48, 16, pto.float16, loc=pto.Mat)
        a = pto.alloc_tile(48, 48, pto.float16, loc=pto.Left)
        b = pto.alloc_tile(48, 16, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(48, 16, pto.float32, loc=pto.Acc)
        pto.tload(f, X, stride=C0)
        pto.tload(bm, B, stride=16)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.timg2col(a, f, 0, 48, H, W, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1)
        pto.textract(b, bm)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(acc, a, b)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(Y, acc, stride=16)


def test_both_executors_in_both_modes_give_numpys_convolution_step():
    """conv_step four ways (timing / functional x numba / reference): identical HBM images,
    and Y = numpy's img2col columns 48..95 @ B (small integers: exact in float16 and float32)."""
    rng = np.random.default_rng(7)
    x = rng.integers(-4, 4, (1, H, W, C0)).astype(np.float16)
    bw = rng.integers(-4, 4, (48, 16)).astype(np.float16)
    X, B = pto.alloc_tensor(x.nbytes, pto.float16), pto.alloc_tensor(bw.nbytes, pto.float16)
    pto.memcpy_h2d(X, x)
    pto.memcpy_h2d(B, bw)
    Y = pto.alloc_tensor(48 * 16 * 4, pto.float32)
    images = both_executors(conv_step, (1, 1, 1), (X, B, Y))
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    want = numpy_img2col(x.astype(np.float64), (1, 1, 1, 1))[:, 48:96] @ bw.astype(np.float64)
    np.testing.assert_array_equal(tensor_values(first, Y).reshape(48, 16), want)


def test_timg2col_costs_its_bytes_on_the_l1_to_l0a_path():
    """latency_tables/ascend910b.toml: TIMG2COL = 1 + dst bytes / l1_to_l0a_bytes_per_cycle,
    as pto-isa's mock prices img2colv2_cbuf_to_ca (stepK x stepM x 2 bytes on L1_TO_L0A):
    48 x 48 float16 = 4608 B / 236.5 B a cycle = 19.48, + 1 = 20.48 -> 21 cycles on MTE1; the
    kernel's TEXTRACT of 48 x 16 to Right: 1 + 1536 B / 113.8 (l1_to_l0b) = 14.50 -> 15."""
    x = np.zeros((1, H, W, C0), np.float16)
    X, B = pto.alloc_tensor(x.nbytes, pto.float16), pto.alloc_tensor(48 * 16 * 2, pto.float16)
    Y = pto.alloc_tensor(48 * 16 * 4, pto.float32)
    prof = pto.profile(conv_step, grid=(1,), args=(X, B, Y))
    got = {e.inst: e.end - e.start for e in prof.timeline if e.inst in ("TIMG2COL", "TEXTRACT")}
    assert got == {"TIMG2COL": 21, "TEXTRACT": 15}


@pytest.mark.parametrize("body, message", [
    ("pto.timg2col(a, pto.alloc_tile(48, 32, pto.float16, loc=pto.Mat), 0, 0, 4, 12)", "rows of c0 = 16"),
    ("pto.timg2col(a, f, 0, 0, 4, 12, stride_h=16)", r"stride_h = 16 is outside \[0, 15\]"),
    ("pto.timg2col(a, f, 0, 0, 5, 12)", "exceed the 48 rows"),
    ("pto.timg2col(a, f, 0, 0, 4, 12, channel_size=24)", "multiple of c0 = 16")])
def test_operand_errors_name_the_rule(make_kernels, body, message):
    """TImg2col.hpp's and the packing's rules as CompileErrors at the call."""
    source = ("\n@pto.kernel\ndef k(X):\n    with pto.cube():\n"
              "        f = pto.alloc_tile(48, 16, pto.float16, loc=pto.Mat)\n"
              "        a = pto.alloc_tile(48, 48, pto.float16, loc=pto.Left)\n        " + body + "\n")
    mod = make_kernels(source)
    with pytest.raises(pto.CompileError, match=message):
        pto.launch(mod.k, grid=(1,), args=(pto.alloc_tensor(64),), mode="functional")


def _port():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import conv2d_forward
    return conv2d_forward


def test_the_conv2d_forward_port_matches_gen_datas_golden_and_its_flags_order_every_hazard():
    """examples/conv2d_forward.py at X = [1, 2, 4, 48, 16], N = 1536 (6 blocks, two 128-output
    blocks of which the second is a 64-row tail, 6 K steps over 2 L1 panels, both buffers),
    under check="race": gen_data.py's golden within one float16 ulp (2^-10 relative, see
    conv2d_forward.TOLERANCE), and no RaceError: its flags order every hazard."""
    conv = _port()
    err, prof = conv.run(1, 2, 4, 48, 1536, check="race")
    assert err <= conv.TOLERANCE
    assert prof.total_cycles > 0


def test_the_port_refuses_an_odd_c1():
    """The unrolled flag ids rely on an even C1 (every output tile then starts on buffer 0)."""
    with pytest.raises(ValueError, match="even C1"):
        _port().run(1, 3, 4, 48, 1536)


@pto.kernel(sync="manual")
def too_tall(X, h):
    """A run-time fmap height whose map (h x 12 pixels) is larger than the 48-row tile."""
    with pto.cube():
        f = pto.alloc_tile(H * W, C0, pto.float16, loc=pto.Mat)
        a = pto.alloc_tile(48, 48, pto.float16, loc=pto.Left)
        pto.tload(f, X, stride=C0)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.timg2col(a, f, 0, 0, h, W, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_a_feature_map_larger_than_its_tile_is_an_error_on_both_engines(engine):
    """fmap_h = 5 at run time: 5 x 12 = 60 pixels, the tile holds 48 rows: OutOfBoundsError
    naming the tile, from the SimPy model and from the compiled engine (its fault sends the
    launch back to SimPy, which reports it)."""
    from pypto_sim.runtime.launch import simulation_for
    from pypto_sim.runtime.device import DEFAULT_BLOCK, current_device
    X = pto.alloc_tensor(H * W * C0 * 2, pto.float16)
    dev = current_device()
    dev.launch(too_tall, (1, 1, 1), DEFAULT_BLOCK, (X, 5))
    pending = dev.queue.pop()
    sim = simulation_for(pending, dev.hbm.data.copy(), dev.hbm.init.copy(), engine=engine)
    with pytest.raises(pto.OutOfBoundsError, match="60 pixels .* exceeds the 48 rows of 'f'"):
        sim.run()
