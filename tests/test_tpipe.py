"""pto.tpipe / tpush / tpop / talloc / tfree: pto-isa's A2/A3 cube <-> vector FIFO
(include/pto/npu/a2a3/TPush.hpp, TPop.hpp, TAlloc.hpp, TFree.hpp at 3186c381; isa/55_tpipe.toml),
lowered to cross-core flags, TSTORE and TLOAD (frontend/tpipe_builtins.py). Values against numpy,
the flag protocol against synccheck (a signal no wait took is an error, a wait no signal serves a
deadlock) and racecheck (a slot reused before its reader is done), the destructor's drain against
the header's own count, and the compile-time checks. pto-isa's on-device suites:
tests/test_ptoisa_npu_tpushpop*.py."""
import shutil
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.errors import IsaError
from pypto_sim.frontend.builtins import BUILTINS
from pypto_sim.frontend.registry import Registry
from pypto_sim.frontend.tpipe_builtins import pending_free_credits
from pypto_sim.isa import load_isa_from
from aicore_runs import compile_error_at


def count_pending_free_credits(slot_num, tile_count):
    """TPipe::countPendingFreeCredits, transcribed line for line from TPush.hpp (3186c381)."""
    sync_period = slot_num if slot_num <= 2 else slot_num // 2
    notified = tile_count // sync_period
    waited = 0
    if slot_num == 1:
        waited = tile_count - 1 if tile_count > 0 else 0
    elif tile_count > slot_num:
        first = slot_num if slot_num % sync_period == 0 else (slot_num // sync_period + 1) * sync_period
        last = ((tile_count - 1) // sync_period) * sync_period
        if last >= first:
            waited = (last - first) // sync_period + 1
    return notified - waited if notified > waited else 0


def test_the_drain_count_is_the_headers():
    """The closed form the destructor's code computes equals the header's loop for every depth
    1..16 and up to 100 pushes; TPush.hpp's own static_assert: depth 8 after 40 pushes drains 2."""
    for slot_num in range(1, 17):
        for pushes in range(101):
            assert pending_free_credits(slot_num, pushes) == count_pending_free_credits(slot_num, pushes)
    assert pending_free_credits(8, 40) == 2


def v2c_kernel(slot_num, n, split):
    """Each AIV fills its half of a 16 x 32 float16 tile with 2 i + its sub-block id and pushes
    it (split 'up_down': rows 8 apart; 'left_right': columns 16 apart); the AIC pops the whole
    tile into L1 and stores it as tile i of out."""
    rows, cols = (8, 32) if split == "up_down" else (16, 16)

    @pto.kernel
    def v2c(out, fifo):
        p = pto.tpipe(fifo, 2, "v2c", 16 * 32 * 2, slot_num)
        with pto.vector():
            half = pto.alloc_tile(rows, cols, pto.float16)
            sub = pto.get_subblock_id()
            for i in range(n):
                pto.texpands(half, pto.cast(i * 2 + sub, pto.float16))
                pto.tpush(p, half, split=split)
        with pto.cube():
            m = pto.alloc_tile(16, 32, pto.float16, loc=pto.Mat)
            for i in range(n):
                pto.tpop(p, m)
                pto.tstore(out + i * 512, m)
    return v2c


@pytest.mark.parametrize("slot_num, n", [(1, 3), (2, 5), (3, 7), (4, 4), (4, 9), (8, 0), (8, 20)])
@pytest.mark.parametrize("split", ["up_down", "left_right"])
def test_v2c_rings_round_and_every_signal_is_taken(slot_num, n, split):
    """Tile i lands whole in the AIC's L1: rows 0..7 (or columns 0..15) from AIV0 = 2 i, the rest
    from AIV1 = 2 i + 1, through slot i % slot_num. check=('sync', 'race'): every free and ready
    signal is waited for (the producers' last free signals by the destructor's drain, which a
    count one too small leaves unmatched and one too large deadlocks), and no push overwrites a
    slot before the AIC's load of it has finished."""
    out = pto.alloc_tensor(max(n, 1) * 1024, pto.float16)
    fifo = pto.alloc_tensor(slot_num * 1024, pto.float16)
    pto.profile(v2c_kernel(slot_num, n, split), grid=(1,), args=(out, fifo), check=("sync", "race"))
    got = np.empty((max(n, 1), 16, 32), np.float16)
    pto.memcpy_d2h(got, out)
    want = np.zeros_like(got)
    for i in range(n):
        if split == "up_down":
            want[i, :8], want[i, 8:] = 2 * i, 2 * i + 1
        else:
            want[i, :, :16], want[i, :, 16:] = 2 * i, 2 * i + 1
    np.testing.assert_array_equal(got[:n], want[:n])


@pto.kernel
def early_return(out, fifo, n):
    """The AIVs push n tiles and return before their store when n > 3: TPipe's destructor runs at
    the return too, so its drain is there as well as at the program's end."""
    p = pto.tpipe(fifo, 2, "v2c", 16 * 32 * 2, 2)
    with pto.vector():
        half = pto.alloc_tile(8, 32, pto.float16)
        for i in range(n):
            pto.texpands(half, pto.cast(i, pto.float16))
            pto.tpush(p, half, split="up_down")
        if n > 3:
            return
        pto.tstore(out, half)
    with pto.cube():
        m = pto.alloc_tile(16, 32, pto.float16, loc=pto.Mat)
        for i in range(n):
            pto.tpop(p, m)
            pto.tstore(out + i * 512, m)


@pytest.mark.parametrize("n", [3, 4])
def test_a_return_drains_the_pipes_made_before_it(n):
    """Two slots, SyncPeriod 2: after 4 pushes one free signal is left (4 // 2 - 1 waited at push 2
    = 1), after 3 none; without a drain at the return, n = 4 leaves it unmatched (synccheck)."""
    out = pto.alloc_tensor(4 * 1024, pto.float16)
    pto.profile(early_return, grid=(1,), args=(out, pto.alloc_tensor(2 * 1024, pto.float16), n), check=("sync",))
    got = np.empty((4, 16, 32), np.float16)
    pto.memcpy_d2h(got, out)
    assert all((got[i] == i).all() for i in range(1, n))


M_TILES, TM, K, N = 4, 16, 32, 32


@pto.kernel(sync="manual")
def matmul_add(out, A, B, bias, fifo):
    """tpushpop_cv's kernel (tests/npu/a2a3/src/st/testcase/tpushpop_cv): the AIC's 16 x 32 Acc
    tiles of A @ B through a one-slot C2V pipe, each AIV adding the bias to its 8 rows."""
    mpipe = pto.tpipe(fifo, 0, "c2v", TM * N * 4, 1)
    with pto.cube():
        a_l1 = pto.alloc_tile(TM, K, pto.float16, loc=pto.Mat)
        b_l1 = pto.alloc_tile(K, N, pto.float16, loc=pto.Mat)
        a_l0 = pto.alloc_tile(TM, K, pto.float16, loc=pto.Left)
        b_l0 = pto.alloc_tile(K, N, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(TM, N, pto.float32, loc=pto.Acc)
        pto.set_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
        for m in range(M_TILES):
            pto.wait_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
            pto.tload(a_l1, A + m * TM * K)
            pto.tload(b_l1, B)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
            pto.tmov(a_l0, a_l1)
            pto.tmov(b_l0, b_l1)
            pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
            pto.tmatmul(acc, a_l0, b_l0)
            pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
            pto.tpush(mpipe, acc, split="up_down")
            pto.set_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_FIX, pto.PIPE_MTE2, 0)
    with pto.vector():
        half = pto.alloc_tile(TM // 2, N, pto.float32)
        bt = pto.alloc_tile(TM // 2, N, pto.float32)
        ot = pto.alloc_tile(TM // 2, N, pto.float32)
        sub = pto.get_subblock_id()
        pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
        for m in range(M_TILES):
            pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
            pto.tpop(mpipe, half, split="up_down")
            off = (m * TM + sub * (TM // 2)) * N
            pto.tload(bt, bias + off)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tadd(ot, half, bt)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(out + off, ot)
            pto.set_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)
        pto.wait_flag(pto.PIPE_MTE3, pto.PIPE_MTE2, 0)


def test_c2v_matmul_then_bias_on_the_vector_cores():
    """A @ B + bias through the FIFO, each AIV its half of every Acc tile, race- and sync-clean."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M_TILES * TM, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    bias = rng.standard_normal((M_TILES * TM, N)).astype(np.float32)
    out = pto.alloc_tensor(bias.nbytes, pto.float32)
    fifo = pto.alloc_tensor(TM * N * 4, pto.float32)
    pto.profile(matmul_add, grid=(1,), args=(out, pto.to_device(a), pto.to_device(b), pto.to_device(bias), fifo),
                check=("sync", "race"))
    got = np.empty_like(bias)
    pto.memcpy_d2h(got, out)
    np.testing.assert_allclose(got, a.astype(np.float32) @ b.astype(np.float32) + bias, rtol=1e-5, atol=1e-5)


@pto.kernel
def gm_slots(out, X, fifo):
    """The GlobalData forms, as flash attention's kernel uses them: each AIV TALLOCs its 8-row
    part of a slot, TSTOREs X's rows there and commits it; the AIC TPOPs the slot's address,
    TLOADs all 16 rows into L1, TFREEs the slot and stores the rows to out."""
    p = pto.tpipe(fifo, 0, "v2c", 16 * 16 * 4, 2)
    with pto.vector():
        t = pto.alloc_tile(8, 16, pto.float32)
        sub = pto.get_subblock_id()
        for i in range(3):
            pto.tload(t, X + (i * 16 + sub * 8) * 16)
            slot = pto.talloc(p, split="up_down", rows=8, cols=16)
            pto.tstore(slot, t)
            pto.tpush(p, slot)
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        for i in range(3):
            slot = pto.tpop(p)
            pto.tload(m, slot)
            pto.tfree(p, slot)
            pto.tstore(out + i * 256, m)


def test_the_global_data_forms_hand_over_gm_slots():
    """out = X: three 16 x 16 tiles, each written into its slot by the two AIVs' TALLOC / TSTORE
    / TPUSH and read by the AIC's TPOP / TLOAD / TFREE, sync- and race-clean."""
    x = np.arange(3 * 256, dtype=np.float32).reshape(48, 16)
    out = pto.alloc_tensor(x.nbytes, pto.float32)
    pto.profile(gm_slots, grid=(1,), args=(out, pto.to_device(x), pto.alloc_tensor(2 * 1024, pto.float32)),
                check=("sync", "race"))
    got = np.empty_like(x)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got, x)


def both_kernel(slot_num):
    """DIR_BOTH: each AIV pushes its 8 x 16 half of V (V2C ring, flags 4 + 2 / 4 + 3, slot_num x
    slot_size bytes into fifo); the AIC pops the whole tile, doubles it through L0 with an
    identity matmul and pushes it back (C2V ring, flags 4 / 5); each AIV pops its half."""
    @pto.kernel
    def both(out, V, I, fifo):
        p = pto.tpipe(fifo, 4, "both", 16 * 16 * 4, slot_num)
        with pto.vector():
            t = pto.alloc_tile(8, 16, pto.float32)
            r = pto.alloc_tile(8, 16, pto.float32)
            sub = pto.get_subblock_id()
            for i in range(3):
                pto.tload(t, V + (i * 16 + sub * 8) * 16)
                pto.tpush(p, t, split="up_down")
                pto.tpop(p, r, split="up_down")
                pto.tstore(out + (i * 16 + sub * 8) * 16, r)
        with pto.cube():
            m = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
            eye = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
            left = pto.alloc_tile(16, 16, pto.float32, loc=pto.Left)
            right = pto.alloc_tile(16, 16, pto.float32, loc=pto.Right)
            acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
            pto.tload(eye, I)
            pto.tmov(right, eye)
            for i in range(3):
                pto.tpop(p, m)
                pto.tmov(left, m)
                pto.tmatmul(acc, left, right)
                pto.tpush(p, acc)
    return both


@pytest.mark.parametrize("slot_num", [1, 4])
def test_both_directions_share_one_tensor_in_two_rings(slot_num):
    """out = V @ (2 I) = 2 V, each tile V -> AIC -> back, the two rings apart in one tensor."""
    v = np.arange(48 * 16, dtype=np.float32).reshape(48, 16) / 7
    out = pto.alloc_tensor(v.nbytes, pto.float32)
    pto.profile(both_kernel(slot_num), grid=(1,),
                args=(out, pto.to_device(v), pto.to_device(2 * np.eye(16, dtype=np.float32)),
                      pto.alloc_tensor(2 * slot_num * 1024, pto.float32)), check=("sync", "race"))
    got = np.empty_like(v)
    pto.memcpy_d2h(got, out)
    np.testing.assert_allclose(got, 2 * v, rtol=1e-6)


# ---------------------------------------------------------------- compile-time checks
@pto.kernel
def push_on_the_wrong_core(fifo):
    p = pto.tpipe(fifo, 0, "c2v", 1024, 2)
    with pto.vector():
        t = pto.alloc_tile(8, 16, pto.float32)
        pto.tpush(p, t)


@pto.kernel
def pop_into_acc(fifo):
    p = pto.tpipe(fifo, 0, "v2c", 1024, 2)
    with pto.cube():
        acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tpop(p, acc)


@pto.kernel
def slot_too_small(fifo):
    p = pto.tpipe(fifo, 0, "v2c", 256, 2)
    with pto.vector():
        t = pto.alloc_tile(8, 16, pto.float32)
        pto.tpush(p, t, split="up_down")


@pto.kernel
def gm_part_past_its_slot(fifo):
    p = pto.tpipe(fifo, 0, "v2c", 512, 2)
    with pto.vector():
        slot = pto.talloc(p, split="up_down", rows=8, cols=16)


@pto.kernel
def flags_past_15(fifo):
    p = pto.tpipe(fifo, 13, "both", 1024, 2)


@pto.kernel
def pipe_in_a_loop(fifo):
    for i in range(2):
        p = pto.tpipe(fifo, 0, "v2c", 1024, 2)


@pto.kernel
def pipe_under_an_if(fifo, n):
    with pto.vector():
        if n > 0:
            p = pto.tpipe(fifo, 0, "v2c", 1024, 2)


@pto.kernel
def other_dtype(fifo):
    p = pto.tpipe(fifo, 0, "v2c", 1024, 2)
    with pto.vector():
        t = pto.alloc_tile(16, 16, pto.float16)
        pto.tpush(p, t)


@pto.kernel
def flag_taken_twice(fifo):
    p = pto.tpipe(fifo, 0, "v2c", 1024, 2)
    q = pto.tpipe(fifo + 512, 1, "c2v", 1024, 2)


@pytest.mark.parametrize("kernel, message, culprit", [
    (push_on_the_wrong_core, "pto.tpush on the AIVs: 'p' is a 'c2v' pipe, which the AIVs pop (", "pto.tpush(p, t)"),
    (pop_into_acc, "pto.tpop: 'acc' is a Acc tile; here the TPipe moves Mat tiles", "pto.tpop(p, acc)"),
    (slot_too_small, "'t' (8 x 16 of float32, at byte 0 of its slot) reaches byte 512, past the 256-byte slots",
     'pto.tpush(p, t, split="up_down")'),
    (gm_part_past_its_slot, "this AIV's part by split='up_down' (8 x 16 of float32, at byte 512 of its slot) "
     "reaches byte 1024, past the 512-byte slots", 'slot = pto.talloc(p, split="up_down", rows=8, cols=16)'),
    (flags_past_15, "flag_id 13 uses cross-core flags 13..16; they must be below 16",
     'p = pto.tpipe(fifo, 13, "both", 1024, 2)'),
    (pipe_in_a_loop, "pto.tpipe inside a loop, an if or a helper", 'p = pto.tpipe(fifo, 0, "v2c", 1024, 2)'),
    (pipe_under_an_if, "pto.tpipe inside a loop, an if or a helper", 'p = pto.tpipe(fifo, 0, "v2c", 1024, 2)'),
    (other_dtype, "'t' holds float16 but the pipe's fifo 'fifo' holds float32", "pto.tpush(p, t)"),
    (flag_taken_twice, "'q' signals on cross-core flag 1, as 'p' (line",
     'q = pto.tpipe(fifo + 512, 1, "c2v", 1024, 2)'),
])
def test_a_tpipe_misuse_is_a_compile_error_at_its_line(kernel, message, culprit):
    """Each of TPush.hpp's static_asserts and pypto_sim's own limits, at the offending line."""
    args = (pto.alloc_tensor(4096, pto.float32),) + ((1,) if kernel is pipe_under_an_if else ())
    compile_error_at(kernel, args, message, culprit)


def both_gm_slots(with_c2v):
    """A 'both' pipe (two slots of 16 x 16 float32) whose V2C direction uses the GlobalData forms:
    each AIV TALLOCs its 8 rows, stores X's there and commits; the AIC TPOPs the slot's address,
    loads it, TFREEs it and stores it to out. with_c2v: the AIC also TPUSHes an Acc tile on the
    C2V ring at the same time, and each AIV TPOPs its half."""
    @pto.kernel
    def both_gm(out, X, fifo):
        p = pto.tpipe(fifo, 0, "both", 16 * 16 * 4, 2)
        with pto.vector():
            t = pto.alloc_tile(8, 16, pto.float32)
            r = pto.alloc_tile(8, 16, pto.float32)
            pto.tload(t, X + pto.get_subblock_id() * 128)
            slot = pto.talloc(p, split="up_down", rows=8, cols=16)
            pto.tstore(slot, t)
            pto.tpush(p, slot)
            if with_c2v:
                pto.tpop(p, r, split="up_down")
        with pto.cube():
            m = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
            acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
            if with_c2v:
                pto.tpush(p, acc)
            slot = pto.tpop(p)
            pto.tload(m, slot)
            pto.tfree(p, slot)
            pto.tstore(out, m)
    return both_gm


def test_the_global_data_forms_of_a_both_pipe_address_its_slots_as_a2a3_does():
    """TAlloc.hpp and TPop.hpp's GlobalTensor forms compute a slot's address without the ring
    offset the TPipe constructor gives a 'both' pipe's V2C side (SlotNum x SlotSize bytes): the V2C
    slot 0 they name is the fifo's first 1024 bytes, where the C2V ring's slot 0 is. Alone, the
    V2C hand-over works (out = X, the fifo's first bytes hold X); with the C2V ring in use beside
    it, racecheck reports the AIC's Acc store and the AIVs' stores into the same bytes."""
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    out, fifo = pto.alloc_tensor(1024, pto.float32), pto.alloc_tensor(4096, pto.float32)
    pto.profile(both_gm_slots(False), grid=(1,), args=(out, pto.to_device(x), fifo), check=("sync", "race"))
    got, ring = np.empty_like(x), np.empty((4, 16, 16), np.float32)
    pto.memcpy_d2h(got, out)
    pto.memcpy_d2h(ring, fifo)
    np.testing.assert_array_equal(got, x)
    np.testing.assert_array_equal(ring[0], x)
    with pytest.raises(pto.RaceError):
        pto.profile(both_gm_slots(True), grid=(1,), args=(out, pto.to_device(x), fifo), check=("race",))


@pto.kernel
def rings_on_one_flag_id_to_two_cores(fifo):
    p = pto.tpipe(fifo, 0, "v2c", 1024, 2)
    q = pto.tpipe(fifo + 512, 1, "v2c", 1024, 2)


def test_two_pipes_share_a_flag_id_only_where_different_cores_receive_it():
    """A flag's counter is its receiving core's (AIC -> both AIVs, AIV -> AIC), so two pipes
    collide where one core would take both pipes' signals: above, 'v2c' at 0 and 'c2v' at 1 both
    signal flag 1 into the AIVs ('p' frees, 'q' is ready), which let an AIV's pop of 'q' take the
    AIC's free of 'p' and read the slot before the AIC's TSTORE (a racecheck RaceError at run
    time, far from the cause). 'v2c' at 0 and 'v2c' at 1 share id 1 as q's ready (into the AIC)
    and p's free (into the AIVs): two counters, which compiles."""
    rings_on_one_flag_id_to_two_cores.program_for((pto.alloc_tensor(4096, pto.float32),))


@pto.kernel
def acc_into_int8(fifo):
    p = pto.tpipe(fifo, 0, "c2v", 1024, 2)
    with pto.cube():
        acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tpush(p, acc)


@pto.kernel
def col_major_push(fifo):
    p = pto.tpipe(fifo, 0, "v2c", 1024, 2)
    with pto.vector():
        t = pto.alloc_tile(16, 8, pto.float32, layout=pto.ColMajor)
        pto.tpush(p, t)


@pytest.mark.parametrize("kernel, dtype, culprit, message", [
    (acc_into_int8, pto.int8, "pto.tpush(p, acc)",
     "pto.tpush: 'acc' holds float32 but the pipe's fifo 'fifo' holds int8; pto-isa reinterprets its GM ring as "
     "each tile's dtype, and a GM tensor here keeps one dtype; the fixpipe converts float32 Acc to float16 or "
     "bfloat16 only"),
    (col_major_push, pto.float32, "pto.tpush(p, t)",
     "pto.tpush: the TSTORE of 't' into a slot of 'p' (an ND GM tensor, rows valid columns apart) refuses it: "
     "pto.tstore: 't' is a ColMajor Vec tile and the GM layout is ND"),
])
def test_a_tile_the_slot_cannot_take_is_the_pushs_error(kernel, dtype, culprit, message):
    """The kernel wrote pto.tpush, not a tstore into 'p_slot': an Acc push converts float32 to
    float16 / bfloat16 only (the fixpipe; pushAcc2GMFiFo's GlobalTensor is the tile's dtype), and
    the slot is an ND GlobalTensor (pushVec2GMFiFo), which A2/A3's TSTORE of a ColMajor Vec tile
    refuses; the error names the push, at its line."""
    compile_error_at(kernel, (pto.alloc_tensor(4096, dtype),), message, culprit)


COMPOSITE = """
[[composite]]
name = "{name}"
builtin = "{builtin}"
signature = "(pipe)"
expands_to = {expands}
source = "include/pto/npu/a2a3/TPush.hpp"
doc = "A test record."
"""


@pytest.mark.parametrize("name, builtin, expands, message", [
    ("TNOTHING", "tnothing", "[]", "TNOTHING: composite: expands_to must list the instructions"),
    ("TPUSH", "tpush_again", '["TSTORE"]', "composite: the name 'TPUSH' or builtin 'tpush_again' is already"),
])
def test_a_composite_record_needs_instructions_and_a_name_of_its_own(tmp_path, name, builtin, expands, message):
    """isa/*.toml's [[composite]] records (isa/README.md): a composite lowers to instructions of
    the table, at least one, and its name is its own, as an instruction's is."""
    isa = tmp_path / "isa"
    shutil.copytree(Path(__file__).resolve().parents[1] / "isa", isa)
    with open(isa / "55_tpipe.toml", "a") as f:
        f.write(COMPOSITE.format(name=name, builtin=builtin, expands=expands))
    with pytest.raises(IsaError, match=message):
        load_isa_from(isa)


def test_the_registry_refuses_a_composite_without_a_lowering():
    """A composite's instructions are its lowering's to emit: without one, pto.tpush is reported
    even though its instructions' families have lowerings."""
    reg = Registry()
    reg.lowering("tpop")(lambda comp, node, args: None)
    problems = reg.problems({"tpush": BUILTINS["tpush"], "tpop": BUILTINS["tpop"]})
    assert problems == ["pto.tpush (the composite TPUSH, 55_tpipe.toml) has no lowering; register one with "
                        "@LOWERINGS.lowering('tpush') (a composite's instructions are its lowering's to emit, "
                        "never a family's)"]
