"""Flash attention on the real AI core: the cube computes S = Q K^T and P V, the two vector
cores run the online softmax, and the two hand their tiles over through GM workspaces with
cross-core flags, as pto-isa's kernels/manual/common/flash_atten does on A2/A3.

O = softmax(Q K^T / sqrt(D)) V for one head; Q, V: [S, D] float16, K given transposed as
KT: [D, S] (the DN layout the cube's right operand wants), O: [S, D] float32. Each AI core
takes 128 query rows; each of its vector cores 64 of them. Per key block j of 128 keys:

    AIC:  S_j = Q K_j^T  -> GM ws_s[j % 2]          --flag 0-->  AIV0, AIV1
    AIV:  m, l, P_j = online softmax of S_j rows    --flag 1-->  AIC (from both AIVs)
    AIC:  PV_j = P_j V_j -> GM ws_o[j % 2]          --flag 2-->  AIV0, AIV1
    AIV:  O = O * exp(m_old - m_new) + PV_j

The vector side uses PTO-ISA's row-expand ops (trowexpandexpdif, trowexpandmul,
trowexpanddiv), as pto-isa's compute_p / compute_gu do, instead of broadcasting into a tile.

The cube computes S_{j+1} while the vector cores work on P_j (workspaces are double-buffered).
Run:  python examples/flash_attention.py [S]
"""
import math
import sys

import numpy as np

import pypto_sim as pto

BQ = 128          # query rows per AI core
BK = 128          # keys per block
D = 128           # head dimension
HALF = BQ // 2    # query rows per vector core


@pto.kernel
def pv_step(WS_P, WS_O, V, p_l1, v_l1, p_l0, v_l0, o_acc, ws, i):
    """Cube: PV_i = P_i @ V_i into the GM workspace, once both vector cores have written P_i."""
    pto.cross_core_wait_flag(1)
    pto.tload(p_l1, WS_P + (ws + i % 2) * BQ * BK)
    pto.tmov(p_l0, p_l1)
    pto.tload(v_l1, V + i * BK * D)
    pto.tmov(v_l0, v_l1)
    pto.tmatmul(o_acc, p_l0, v_l0)
    pto.tstore(WS_O + (ws + i % 2) * BQ * D, o_acc)
    pto.cross_core_set_flag(2)


@pto.kernel
def o_update(WS_O, pv, o, alpha_prev, ws, r0, i):
    """Vector: O = O * alpha_i + PV_i for this core's rows."""
    pto.cross_core_wait_flag(2)
    pto.tload(pv, WS_O + (ws + i % 2) * BQ * D + r0 * D)
    pto.trowexpandmul(o, o, alpha_prev)
    pto.tadd(o, o, pv)


@pto.kernel
def flash_attention(Q, KT, V, O, WS_S, WS_P, WS_O, S, scale):
    q0 = pto.get_block_id() * BQ
    ws = pto.get_block_id() * 2           # this core's two workspace slots
    n = S // BK
    with pto.cube():
        q_l1 = pto.alloc_tile(BQ, D, pto.float16, loc=pto.Mat)
        k_l1 = pto.alloc_tile(D, BK, pto.float16, loc=pto.Mat)
        p_l1 = pto.alloc_tile(BQ, BK, pto.float16, loc=pto.Mat)
        v_l1 = pto.alloc_tile(BK, D, pto.float16, loc=pto.Mat)
        q_l0 = pto.alloc_tile(BQ, D, pto.float16, loc=pto.Left)
        p_l0 = pto.alloc_tile(BQ, BK, pto.float16, loc=pto.Left)
        k_l0 = pto.alloc_tile(D, BK, pto.float16, loc=pto.Right)
        v_l0 = pto.alloc_tile(BK, D, pto.float16, loc=pto.Right)
        s_acc = pto.alloc_tile(BQ, BK, pto.float32, loc=pto.Acc)
        o_acc = pto.alloc_tile(BQ, D, pto.float32, loc=pto.Acc)
        pto.tload(q_l1, Q + q0 * D)
        pto.tmov(q_l0, q_l1)
        for j in range(n):
            pto.tload(k_l1, KT + j * BK, stride=S)
            pto.tmov(k_l0, k_l1)
            pto.tmatmul(s_acc, q_l0, k_l0)
            pto.tstore(WS_S + (ws + j % 2) * BQ * BK, s_acc)
            pto.cross_core_set_flag(0)
            if j >= 1:
                pv_step(WS_P, WS_O, V, p_l1, v_l1, p_l0, v_l0, o_acc, ws, j - 1)
        pv_step(WS_P, WS_O, V, p_l1, v_l1, p_l0, v_l0, o_acc, ws, n - 1)
    with pto.vector():
        r0 = pto.get_subblock_id() * HALF
        s = pto.alloc_tile(HALF, BK, pto.float32, loc=pto.Vec)
        p16 = pto.alloc_tile(HALF, BK, pto.float16, loc=pto.Vec)
        o = pto.alloc_tile(HALF, D, pto.float32, loc=pto.Vec)
        pv = pto.alloc_tile(HALF, D, pto.float32, loc=pto.Vec)
        m = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        m_new = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        l = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        rs = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        alpha = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        alpha_prev = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        pto.tadds(m, m, float("-inf"))     # tiles start at zero: m = -inf, l = 0, O = 0
        for j in range(n):
            pto.cross_core_wait_flag(0)
            pto.tload(s, WS_S + (ws + j % 2) * BQ * BK + r0 * BK)
            pto.tmuls(s, s, scale)
            pto.trowmax(rs, s)
            pto.tmax(m_new, m, rs)
            pto.tsub(alpha, m, m_new)
            pto.texp(alpha, alpha)            # alpha_j = exp(m_{j-1} - m_j)
            pto.tmuls(m, m_new, 1.0)
            pto.trowexpandexpdif(s, s, m)     # P_j = exp(S_j - m_j)
            pto.trowsum(rs, s)
            pto.tmul(l, l, alpha)
            pto.tadd(l, l, rs)                # l_j = l_{j-1} alpha_j + rowsum(P_j)
            pto.tcvt(p16, s)
            pto.tstore(WS_P + (ws + j % 2) * BQ * BK + r0 * BK, p16)
            pto.cross_core_set_flag(1)
            if j >= 1:
                o_update(WS_O, pv, o, alpha_prev, ws, r0, j - 1)
            pto.tmuls(alpha_prev, alpha, 1.0)
        o_update(WS_O, pv, o, alpha_prev, ws, r0, n - 1)
        pto.trowexpanddiv(o, o, l)
        pto.tstore(O + (q0 + r0) * D, o)


def reference(q, k, v):
    """softmax(Q K^T / sqrt(D)) V in float64."""
    s = q.astype(np.float64) @ k.astype(np.float64).T / math.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


def run(S=1024, seed=0, check=None, mode="timing", values=True, kernel=flash_attention):
    """Run flash attention (or `kernel`, which takes the same arguments) on random data; return
    (O, reference, profile). mode="functional": values only, no cycles; values=False: cycles
    only, O is not computed and the reference is None (numpy's S x S float64 scores would take
    8 GB at S = 32768)."""
    if S % BQ:
        raise ValueError(f"S must be a multiple of {BQ}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((S, D)).astype(np.float16)
    k = rng.standard_normal((S, D)).astype(np.float16)
    v = rng.standard_normal((S, D)).astype(np.float16)
    blocks = S // BQ
    tensors = []
    for array, dtype in ((q, pto.float16), (np.ascontiguousarray(k.T), pto.float16), (v, pto.float16)):
        t = pto.alloc_tensor(array.nbytes, dtype)
        pto.memcpy_h2d(t, array)
        tensors.append(t)
    O = pto.alloc_tensor(S * D * 4, pto.float32)
    ws_s = pto.alloc_tensor(blocks * 2 * BQ * BK * 4, pto.float32)
    ws_p = pto.alloc_tensor(blocks * 2 * BQ * BK * 2, pto.float16)
    ws_o = pto.alloc_tensor(blocks * 2 * BQ * D * 4, pto.float32)
    prof = pto.profile(kernel, grid=(blocks,),
                       args=(*tensors, O, ws_s, ws_p, ws_o, S, 1.0 / math.sqrt(D)), check=check, mode=mode,
                       values=values)
    out = np.empty((S, D), np.float32)
    pto.memcpy_d2h(out, O)
    return out, (reference(q, k, v) if values else None), prof


def main(argv):
    S = int(argv[1]) if len(argv) > 1 else 1024
    out, want, prof = run(S)
    err = float(np.max(np.abs(out - want)))
    ok = np.allclose(out, want, rtol=1e-2, atol=2e-3)
    print(f"flash attention S={S} D={D} on {S // BQ} AI cores: max |O - numpy| = {err:.2e} "
          f"({'ok' if ok else 'WRONG'}); {prof.total_cycles} cycles = "
          f"{prof.total_cycles / (prof.machine.clock_ghz * 1e3):.2f} us at {prof.machine.clock_ghz} GHz "
          f"(simulated in {prof.wall_seconds:.2f} s)")
    print(prof.pipeline_summary())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
