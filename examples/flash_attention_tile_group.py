"""examples/flash_attention.py in sync="manual", its on-chip handoffs written as tile groups.

O = softmax(Q K^T / sqrt(D)) V for one head, the same algorithm, tiles and schedule as
examples/flash_attention.py (read its docstring first): the cube computes S_j = Q K_j^T and
PV_j = P_j V_j, the two vector cores the online softmax, and the two hand their tiles over
through double-buffered GM workspaces with cross-core flags 0, 1 and 2, written by hand as
there (a cross-core flag already says "this workspace slot is ready" and, by the schedule,
"the other one is free").

flash_attention.py is sync="auto": the simulator orders each unit's pipes by the tiles they
touch. Here nothing does but flags, as on hardware, and every tile that one pipe fills and
another reads is a tile group (pto.tile_group, docs/aicore.md "Tile groups") that places the
set_flag / wait_flag pairs itself:

    AIC  GM --MTE2--> q1, k1, p1, v1 (Mat) --MTE1--> q0, p0 (Left) / k0, v0 (Right)
            --M--> s_acc, o_acc (Acc) --FIX--> GM
    AIV  GM --MTE2--> s, pv (Vec) --V--> p16, o (Vec) --MTE3--> GM

Each group has depth 1 (TQue with BUFFER_NUM 1): flash_attention.py single-buffers its tiles
and double-buffers only the GM workspaces, so depth 1 keeps its schedule; a group of depth 1
may be cycled inside the run-time `if j >= 1` because next/ready/take/release leave it as
they found it. tests/test_flash_attention_tile_group.py checks the values against numpy and
flash_attention.py, the race check, and the cycles against flash_attention.py.

Run:  python examples/flash_attention_tile_group.py [S]
"""
import math
import sys

import numpy as np

import pypto_sim as pto
import flash_attention
from flash_attention import BK, BQ, D, HALF


@pto.kernel
def pv_step(WS_P, WS_O, V, p1, v1, p0, v0, o_acc, ws, i):
    """Cube: PV_i = P_i @ V_i into the GM workspace, once both vector cores have written P_i."""
    pto.cross_core_wait_flag(1)
    p_l1 = p1.next()
    pto.tload(p_l1, WS_P + (ws + i % 2) * BQ * BK)
    p1.ready(p_l1)
    p_l0 = p0.next()
    p1.take(p_l1)
    pto.tmov(p_l0, p_l1)
    p1.release(p_l1)
    p0.ready(p_l0)
    v_l1 = v1.next()
    pto.tload(v_l1, V + i * BK * D)
    v1.ready(v_l1)
    v_l0 = v0.next()
    v1.take(v_l1)
    pto.tmov(v_l0, v_l1)
    v1.release(v_l1)
    v0.ready(v_l0)
    o = o_acc.next()
    p0.take(p_l0)
    v0.take(v_l0)
    pto.tmatmul(o, p_l0, v_l0)
    p0.release(p_l0)
    v0.release(v_l0)
    o_acc.ready(o)
    o_acc.take(o)
    pto.tstore(WS_O + (ws + i % 2) * BQ * D, o)
    o_acc.release(o)
    pto.cross_core_set_flag(2)


@pto.kernel
def o_update(WS_O, pvg, o, alpha_prev, ws, r0, i):
    """Vector: O = O * alpha_i + PV_i for this core's rows."""
    pto.cross_core_wait_flag(2)
    pv = pvg.next()
    pto.tload(pv, WS_O + (ws + i % 2) * BQ * D + r0 * D)
    pvg.ready(pv)
    pto.trowexpandmul(o, o, alpha_prev)
    pvg.take(pv)
    pto.tadd(o, o, pv)
    pvg.release(pv)


@pto.kernel(sync="manual")
def flash_attention_tg(Q, KT, V, O, WS_S, WS_P, WS_O, S, scale):
    """flash_attention.flash_attention with its on-chip handoffs ordered by tile groups."""
    q0 = pto.get_block_id() * BQ
    ws = pto.get_block_id() * 2           # this core's two workspace slots
    n = S // BK
    with pto.cube():
        q1 = pto.tile_group(1, BQ, D, pto.float16, loc=pto.Mat, producer=pto.PIPE_MTE2, consumer=pto.PIPE_MTE1)
        k1 = pto.tile_group(1, D, BK, pto.float16, loc=pto.Mat, producer=pto.PIPE_MTE2, consumer=pto.PIPE_MTE1)
        p1 = pto.tile_group(1, BQ, BK, pto.float16, loc=pto.Mat, producer=pto.PIPE_MTE2, consumer=pto.PIPE_MTE1)
        v1 = pto.tile_group(1, BK, D, pto.float16, loc=pto.Mat, producer=pto.PIPE_MTE2, consumer=pto.PIPE_MTE1)
        q0g = pto.tile_group(1, BQ, D, pto.float16, loc=pto.Left, producer=pto.PIPE_MTE1, consumer=pto.PIPE_M)
        p0 = pto.tile_group(1, BQ, BK, pto.float16, loc=pto.Left, producer=pto.PIPE_MTE1, consumer=pto.PIPE_M)
        k0 = pto.tile_group(1, D, BK, pto.float16, loc=pto.Right, producer=pto.PIPE_MTE1, consumer=pto.PIPE_M)
        v0 = pto.tile_group(1, BK, D, pto.float16, loc=pto.Right, producer=pto.PIPE_MTE1, consumer=pto.PIPE_M)
        s_acc = pto.tile_group(1, BQ, BK, pto.float32, loc=pto.Acc, producer=pto.PIPE_M, consumer=pto.PIPE_FIX)
        o_acc = pto.tile_group(1, BQ, D, pto.float32, loc=pto.Acc, producer=pto.PIPE_M, consumer=pto.PIPE_FIX)
        q_l1 = q1.next()
        pto.tload(q_l1, Q + q0 * D)
        q1.ready(q_l1)
        q_l0 = q0g.next()
        q1.take(q_l1)
        pto.tmov(q_l0, q_l1)
        q1.release(q_l1)
        q0g.ready(q_l0)
        q0g.take(q_l0)                    # M reads q_l0 in every QK^T: released after the loop
        for j in range(n):
            k_l1 = k1.next()
            pto.tload(k_l1, KT + j * BK, stride=S)
            k1.ready(k_l1)
            k_l0 = k0.next()
            k1.take(k_l1)
            pto.tmov(k_l0, k_l1)
            k1.release(k_l1)
            k0.ready(k_l0)
            s_j = s_acc.next()
            k0.take(k_l0)
            pto.tmatmul(s_j, q_l0, k_l0)
            k0.release(k_l0)
            s_acc.ready(s_j)
            s_acc.take(s_j)
            pto.tstore(WS_S + (ws + j % 2) * BQ * BK, s_j)
            s_acc.release(s_j)
            pto.cross_core_set_flag(0)
            if j >= 1:
                pv_step(WS_P, WS_O, V, p1, v1, p0, v0, o_acc, ws, j - 1)
        pv_step(WS_P, WS_O, V, p1, v1, p0, v0, o_acc, ws, n - 1)
        q0g.release(q_l0)
    with pto.vector():
        r0 = pto.get_subblock_id() * HALF
        sg = pto.tile_group(1, HALF, BK, pto.float32, loc=pto.Vec, producer=pto.PIPE_MTE2, consumer=pto.PIPE_V)
        pvg = pto.tile_group(1, HALF, D, pto.float32, loc=pto.Vec, producer=pto.PIPE_MTE2, consumer=pto.PIPE_V)
        p16g = pto.tile_group(1, HALF, BK, pto.float16, loc=pto.Vec, producer=pto.PIPE_V, consumer=pto.PIPE_MTE3)
        og = pto.tile_group(1, HALF, D, pto.float32, loc=pto.Vec, producer=pto.PIPE_V, consumer=pto.PIPE_MTE3)
        m = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        m_new = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        l = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        rs = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        alpha = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        alpha_prev = pto.alloc_tile(HALF, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        o = og.next()                     # V accumulates O over the loop, MTE3 stores it at the end
        pto.tadds(m, m, float("-inf"))     # tiles start at zero: m = -inf, l = 0, O = 0
        for j in range(n):
            pto.cross_core_wait_flag(0)
            s = sg.next()
            pto.tload(s, WS_S + (ws + j % 2) * BQ * BK + r0 * BK)
            sg.ready(s)
            sg.take(s)
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
            p16 = p16g.next()
            pto.tcvt(p16, s)
            sg.release(s)
            p16g.ready(p16)
            p16g.take(p16)
            pto.tstore(WS_P + (ws + j % 2) * BQ * BK + r0 * BK, p16)
            p16g.release(p16)
            pto.cross_core_set_flag(1)
            if j >= 1:
                o_update(WS_O, pvg, o, alpha_prev, ws, r0, j - 1)
            pto.tmuls(alpha_prev, alpha, 1.0)
        o_update(WS_O, pvg, o, alpha_prev, ws, r0, n - 1)
        pto.trowexpanddiv(o, o, l)
        og.ready(o)
        og.take(o)
        pto.tstore(O + (q0 + r0) * D, o)
        og.release(o)


def run(S=1024, seed=0, check=None, mode="timing", values=True):
    """Run this flash attention on flash_attention.py's data and driver; return (O, reference,
    profile)."""
    return flash_attention.run(S, seed=seed, check=check, mode=mode, values=values, kernel=flash_attention_tg)


def main(argv):
    """Run at S (default 1024), print the error against numpy, the cycles and the pipes."""
    S = int(argv[1]) if len(argv) > 1 else 1024
    out, want, prof = run(S)
    err = float(np.max(np.abs(out - want)))
    ok = np.allclose(out, want, rtol=1e-2, atol=2e-3)
    print(f"flash attention with tile groups S={S} D={D} on {S // BQ} AI cores: max |O - numpy| = "
          f"{err:.2e} ({'ok' if ok else 'WRONG'}); {prof.total_cycles} cycles")
    print(prof.pipeline_summary())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
