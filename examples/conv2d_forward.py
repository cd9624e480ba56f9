"""pto-isa's A2/A3 conv2d_forward kernel, ported as its source writes it.

pto-isa kernels/manual/a2a3/conv2d_forward (conv2d_forward_kernel.cpp, main.cpp, README.md,
scripts/gen_data.py): Y = X * K, a 3 x 3 convolution, stride 1, dilation 1, padding 1, as an
implicit GEMM: M = hout x wout output pixels of one image, K = C1 x 3 x 3 x 16 taps, N output
channels. As the kernel does it:

- 24 AIC blocks in a 4 x 6 grid: block b takes image b // 6 (singleCoreM = hout x wout) and
  output channels (b % 6) x N / 6 (singleCoreN), all of K (InitGMOffsets);
- base block 128 x 256 x 48, stepKa = stepKb = 3: every third K step loads one C1 plane of the
  feature map rows the 128 outputs need (hinCount rows of win pixels, NC1HWC0, 16 channels =
  channelSize) and the 144 x 256 weight panel into one of two L1 buffers (MTE2 -> MTE1 events 0
  for the map, 1 for the weights; MTE1 -> MTE2 event = the buffer); each K step fills L0A with
  TIMG2COL (posM = woutStart, posK = 48 x (step mod 3)) and L0B with TEXTRACT into ping-pong
  buffers (M -> MTE1 / MTE1 -> M events 0, 1) and accumulates on the cube;
- per 128-output block: SETFMATRIX of the fmatrix (hinCount x win, pads left / right 1, top /
  bottom as the block's first / last output row needs them; pto.setfmatrix), which the block's
  TIMG2COLs read, then the N tiles, each stored through the fixpipe as float16 between M -> FIX
  and FIX -> M flags.

GM holds gen_data's layouts (isa/gm_layouts.py): the weights FRACTAL_Z [C1 x 9, N / 16, 16,
16] (a 144 x 256 panel: 9 runs of 8 KiB, N x 16 elements apart) and the output NC1HWC0 [B, N /
16, H, W, 16], which the fixpipe writes as NZ (16 runs of a block's pixels x 32 B, H x W x 16
elements apart).

Not ported as written:
- the two L1 feature-map buffers are allocated at the largest hinCount (128 outputs starting
  late in a row span (127 // wout) + 2 output rows, + 2 input rows), where the kernel's nominal
  bufferSizeA has ceil(128 / wout) + 2 rows and its second buffer's TASSIGN address moves with
  hinCount; as a Mat tile of pixels x 16 channels their pixels are rounded up to whole 16 x 16
  fractal boxes (the source's ConvTile is a byte size: any W).
The port needs an even C1 (the kernel's flags then start every output tile on buffer 0, which
the unrolled flag ids rely on): all five published shapes have one.

    python examples/conv2d_forward.py [B C1 H W N]       (X = [B, C1, H, W, 16], N outputs)
"""
import sys

import numpy as np

import pypto_sim as pto

BM, BK, BN, STEP = 128, 48, 256, 3
C0, HK, WK = 16, 3, 3
KL1 = BK * STEP                       # K per L1 panel: one C1 plane's 3 x 3 x 16 taps
M_CORES, N_CORES = 4, 6               # README: the 4 x 6 grouping on 24 cores
# the largest error against the golden relative to max(|golden|, 1): two float16 roundings of
# float32 sums taken in different orders may differ by one float16 ulp, 2^-10 of the value
TOLERANCE = 2.0 ** -10


@pto.kernel
def k_step(acc, fmap, wgt, a_l0, b_l0, kk, s, ev, p, wout_start):
    """K step s of the L1 panel in buffer p through L0 buffer ev (MacroMatmul)."""
    pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, ev)
    if s == 0:
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
    pto.timg2col(a_l0, fmap, wout_start, s * BK, filter_h=HK, filter_w=WK, channel_size=C0)   # FMATRIX
    if s == 0:
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 1)
    pto.textract(b_l0, wgt, s * BK, 0)
    if s == STEP - 1:
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, p)    # the L1 buffer may be refilled
    pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, ev)
    pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, ev)
    if kk == 0:
        pto.tmatmul(acc, a_l0, b_l0)
    else:
        pto.tmatmul_acc(acc, a_l0, b_l0)
    pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, ev)


@pto.kernel
def panel(X, W, acc, fmap, wgt, a0, b0, a1, b1, x_off, w_off, N, kk, p, q, wout_start):
    """ProcessKIteration's loads into L1 buffer p (feature map, then weights, each with its
    event), then its three K steps starting on L0 buffer q."""
    pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, p)
    pto.tload(fmap, X + x_off, stride=C0)
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
    pto.tload(wgt, W + w_off, stride=N * C0, layout=pto.FRACTAL_Z)
    pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 1)
    if q == 0:
        k_step(acc, fmap, wgt, a0, b0, kk, 0, 0, p, wout_start)
        k_step(acc, fmap, wgt, a1, b1, kk + 1, 1, 1, p, wout_start)
        k_step(acc, fmap, wgt, a0, b0, kk + 2, 2, 0, p, wout_start)
    else:
        k_step(acc, fmap, wgt, a1, b1, kk, 0, 1, p, wout_start)
        k_step(acc, fmap, wgt, a0, b0, kk + 1, 1, 0, p, wout_start)
        k_step(acc, fmap, wgt, a1, b1, kk + 2, 2, 1, p, wout_start)


@pto.kernel(sync="manual")
def conv2d_forward(X, W, Y, C1, H, WIN, N):
    """Y [B, N / 16, H, WIN, 16] (NC1HWC0, float16) = the 3 x 3, pad 1 convolution of X [B, C1,
    H, WIN, 16] (NC1HWC0, float16) by W [C1 x 9, N / 16, 16, 16] (FRACTAL_Z, float16), on
    M_CORES x N_CORES AIC blocks."""
    with pto.cube():
        hout = H
        wout = WIN
        core_m = hout * wout                          # singleCoreM
        core_n = N // N_CORES                         # singleCoreN
        m_core = pto.get_block_id() // N_CORES
        n_core = pto.get_block_id() % N_CORES
        x_base = m_core * C1 * H * WIN * C0
        y_base = m_core * core_m * N                 # image m_core's N / 16 planes of core_m x 16
        # the most input pixels a block reads, in whole 16 x 16 fractal boxes
        rows_a = (WIN * ((BM - 1) // WIN + 2 + HK - 1) + C0 - 1) // C0 * C0
        w0 = pto.alloc_tile(KL1, BN, pto.float16, loc=pto.Mat)
        w1 = pto.alloc_tile(KL1, BN, pto.float16, loc=pto.Mat)
        b0 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Right)
        b1 = pto.alloc_tile(BK, BN, pto.float16, loc=pto.Right)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)              # InitSyncFlags
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)
        pto.set_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        for m_start in range(0, core_m, BM):
            m_count = min(BM, core_m - m_start)
            m_end = m_start + m_count - 1
            hout_start = m_start // wout
            wout_start = m_start % wout
            hout_end = m_end // wout
            hin_start = max(0, hout_start - 1)
            hin_end = min(hout_end - 1 + HK - 1, H - 1)
            hin_count = hin_end - hin_start + 1
            pad_top = max(0, 1 - hout_start)
            pad_bottom = max(0, hout_end + HK - H - 1)
            fmap0 = pto.alloc_tile(rows_a, C0, pto.float16, loc=pto.Mat, valid=(hin_count * WIN, C0))
            fmap1 = pto.alloc_tile(rows_a, C0, pto.float16, loc=pto.Mat, valid=(hin_count * WIN, C0))
            a0 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Left, valid=(m_count, BK))
            a1 = pto.alloc_tile(BM, BK, pto.float16, loc=pto.Left, valid=(m_count, BK))
            acc = pto.alloc_tile(BM, BN, pto.float32, loc=pto.Acc, valid=(m_count, BN))
            pto.setfmatrix(hin_count, WIN, pad_top=pad_top, pad_bottom=pad_bottom, pad_left=1, pad_right=1)
            for n_start in range(0, core_n, BN):
                w_col = n_core * core_n + n_start
                for c1 in range(0, C1, 2):
                    x_off = x_base + c1 * H * WIN * C0 + hin_start * WIN * C0
                    panel(X, W, acc, fmap0, w0, a0, b0, a1, b1, x_off, c1 * KL1 * N + w_col * C0, N,
                          c1 * STEP, 0, 0, wout_start)
                    panel(X, W, acc, fmap1, w1, a0, b0, a1, b1, x_off + H * WIN * C0,
                          (c1 + 1) * KL1 * N + w_col * C0, N, (c1 + 1) * STEP, 1, 1, wout_start)
                pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)          # StoreResult
                pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
                pto.tstore(Y + y_base + w_col * core_m + m_start * C0, acc, stride=core_m * C0, layout=pto.NZ)
                pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
                pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 0)                # WaitSyncFlags
        pto.wait_flag(pto.PIPE_M, pto.PIPE_MTE1, 1)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_MTE2, 1)


def golden(batch, c1, h, w, n, seed=19):
    """gen_data.py's data and golden at this shape: X [B, C1, H, W, 16] and the FRACTAL_Z weight
    [C1 x 9, N / 16, 16, 16] uniform in [-5, 5) as float16, Y in NC1HWC0 [B, N / 16, H, W, 16]
    (gen_data's img2col + matmul in float32, rounded to float16)."""
    rng = np.random.RandomState(seed)
    x = rng.uniform(-5, 5, (batch, c1, h, w, C0)).astype(np.float16)
    weight = rng.uniform(-5, 5, (c1, HK, WK, n, C0)).astype(np.float16)   # C1HWNC0, as gen_data
    fz = weight.reshape(c1 * HK * WK, n // 16, 16, C0)
    xp = np.pad(x.astype(np.float32), ((0, 0), (0, 0), (1, 1), (1, 1), (0, 0)))
    cols = np.stack([xp[:, :, a:a + h, b:b + w, :] for a in range(HK) for b in range(WK)], axis=2)
    cols = cols.transpose(0, 3, 4, 1, 2, 5).reshape(batch * h * w, c1 * HK * WK * C0)  # (c1, tap, c0)
    wk = fz.transpose(0, 3, 1, 2).reshape(c1 * HK * WK * C0, n).astype(np.float32)    # K x N
    y = (cols @ wk).reshape(batch, h, w, n // C0, C0).transpose(0, 3, 1, 2, 4).astype(np.float16)
    return x, fz, y


def run(batch=4, c1=8, h=8, w=48, n=1536, values=True, check=None):
    """The port at X = [batch, c1, h, w, 16], N = n, on batch x 6 blocks; returns (the largest
    error against the golden relative to max(|golden|, 1), or None when values=False; profile)."""
    if c1 % 2 or n % (N_CORES * BN):
        raise pto.ArgumentError(f"the port needs an even C1 and N a multiple of {N_CORES * BN}, not {c1}, {n}",
                                kernel="conv2d_forward", hint=f"zero-pad X's C1 planes to an even count and "
                                f"the weights' N to a multiple of {N_CORES * BN} ({N_CORES} N cores x {BN})")
    x, fz, y = golden(batch, c1, h, w, n)
    X = pto.alloc_tensor(x.nbytes, pto.float16)
    Wt = pto.alloc_tensor(fz.nbytes, pto.float16)
    Y = pto.alloc_tensor(batch * h * w * n * 2, pto.float16)
    pto.memcpy_h2d(X, x)
    pto.memcpy_h2d(Wt, fz)
    kw = {} if check is None else {"check": check}
    prof = pto.profile(conv2d_forward, grid=(batch * N_CORES,), args=(X, Wt, Y, c1, h, w, n), values=values, **kw)
    if not values:
        return None, prof
    got = np.empty((batch, n // C0, h, w, C0), np.float16)                       # NC1HWC0
    pto.memcpy_d2h(got, Y)
    want = y.astype(np.float32)
    return float((np.abs(got.astype(np.float32) - want) / np.maximum(np.abs(want), 1.0)).max()), prof


def main(argv):
    b, c1, h, w, n = (int(v) for v in argv[1:6]) if len(argv) > 5 else (4, 8, 8, 48, 1536)
    err, prof = run(b, c1, h, w, n, values=len(argv) <= 5)
    us = prof.total_cycles / (prof.machine.clock_ghz * 1e3)
    print(f"conv2d_forward X=[{b},{c1},{h},{w},16] N={n}: {prof.total_cycles} cycles = {us:.1f} us; "
          f"largest relative error {err}")


if __name__ == "__main__":
    main(sys.argv)
