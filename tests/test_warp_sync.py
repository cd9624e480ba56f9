"""Warp votes, ballots and matches over a lane mask (CUDA's __*_sync, numba-cuda's
all_sync / any_sync / eq_sync / ballot_sync / match_any_sync / match_all_sync), syncwarp(mask),
and numba's launch forms kernel[grid, block] and kernel.forall(n). Tiny kernels, expected
values derived by hand in each docstring. numba-cuda's own tests of these forms are ported in
tests/test_numba_cuda_ports.py."""
import numpy as np
import pytest

import pypto_sim as pto


def _run(kernel, n_out, *args, block=32, mode="timing"):
    """Launch one block; return the int32 output tensor's contents (its first argument)."""
    d_o = pto.to_device(np.zeros(n_out, np.int32))
    pto.launch(kernel, grid=(1,), block=(block,), args=(d_o,) + args, mode=mode)
    return d_o.numpy()


@pto.kernel
def masked_votes(o):
    x = pto.get_lane_id()
    o[x] = pto.ballot_sync(0x000000FF, x % 2 == 1)
    o[32 + x] = pto.all_sync(0x0000000F, x < 4)
    o[64 + x] = pto.all_sync(0xFFFFFFFF, x < 4)
    o[96 + x] = pto.eq_sync(0xFFFF0000, x >= 16)
    o[128 + x] = pto.eq_sync(0x00018000, x >= 16)
    o[160 + x] = pto.any_sync(0x0000000F, x > 30)
    o[192 + x] = pto.any_sync(0x80000000, x > 30)
    o[224 + x] = pto.vote_eq(x < 40)


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_votes_combine_the_lanes_of_their_mask(mode):
    """x = lane. ballot over lanes 0..7 of x odd: lanes 1, 3, 5, 7 = 0xAA = 170. all over lanes
    0..3 of x < 4: 1; over the warp: 0. eq over lanes 16..31 of x >= 16: all true, 1; over
    lanes 15 and 16: false and true, 0. any over lanes 0..3 of x > 30: 0; over lane 31: 1.
    vote_eq without a mask, x < 40 everywhere: 1. Every lane gets its group's result."""
    out = _run(masked_votes, 256, mode=mode).reshape(8, 32)
    np.testing.assert_array_equal(out[:, 0], [170, 1, 0, 1, 0, 0, 1, 1])
    assert (out == out[:, :1]).all()


@pto.kernel
def quad_matches(o, x_in):
    lane = pto.get_lane_id()
    quad = 0xF << (lane & ~3)                 # per lane: the 4 lanes of its quad
    x = x_in[lane]
    o[lane] = pto.match_any_sync(quad, x)
    bits, pred = pto.match_all_sync(quad, x)
    o[32 + lane] = bits
    o[64 + lane] = pred


def test_matches_with_a_mask_per_lane():
    """Each lane's mask is its quad (lanes 4q..4q+3; 0xF << 28 is the int32 -0x10000000).
    x = lane // 2, except lanes 8..11 which all hold 9. match_any: a lane matches its pair,
    3 << (lane & ~1), but in quad 2 the whole quad, 0xF00. match_all: only quad 2 is equal
    throughout: its lanes get 0xF00 = 3840 and True, every other lane 0 and False."""
    lane = np.arange(32)
    x = np.where((lane >= 8) & (lane < 12), 9, lane // 2).astype(np.int32)
    out = _run(quad_matches, 96, pto.to_device(x)).reshape(3, 32).astype(np.int64)
    pair = (3 << (lane & ~1))
    quad2 = (lane >= 8) & (lane < 12)
    np.testing.assert_array_equal(out[0] & 0xFFFFFFFF, np.where(quad2, 0xF00, pair))
    np.testing.assert_array_equal(out[1], np.where(quad2, 0xF00, 0))
    np.testing.assert_array_equal(out[2], quad2.astype(int))


@pto.kernel
def divergent_match(o, x_in):
    lane = pto.get_lane_id()
    x = x_in[lane]
    if lane < 10:
        o[lane] = pto.match_all(x)
    else:
        o[lane] = pto.match_any(x, 0xFFFFFFFF)


def test_matches_see_only_the_active_lanes():
    """x = 7 in lanes 0..9 and 5 elsewhere. Inside `if lane < 10` only lanes 0..9 are active
    and all hold 7: match_all gives 0x3FF = 1023. In the else branch lanes 10..31 are active,
    all 5: match_any gives lanes 10..31, 0xFFFFFC00, the int32 -1024."""
    x = np.where(np.arange(32) < 10, 7, 5).astype(np.int32)
    out = _run(divergent_match, 32, pto.to_device(x))
    np.testing.assert_array_equal(out, np.where(np.arange(32) < 10, 1023, -1024))


@pto.kernel
def masked_shuffles(o):
    lane = pto.get_lane_id()
    pto.syncwarp(0xFFFFFFFF)
    pto.barrier(0x0000FFFF)
    o[lane] = pto.shfl_down_sync(0xFFFFFFFF, lane * 10, 1) + pto.shfl_xor_sync(0xFFFFFFFF, lane, 1)


def test_syncwarp_and_masked_shuffles_are_the_warp_barrier_and_shuffles():
    """A warp's active lanes run in lockstep: syncwarp(mask) and barrier(mask) are BARRIER,
    and the shuffles' mask changes nothing. Lane l: 10 * (l + 1) (lane 31 keeps its own 310)
    plus l ^ 1: lane 0 = 10 + 1 = 11, lane 31 = 310 + 30 = 340."""
    out = _run(masked_shuffles, 32)
    lane = np.arange(32)
    np.testing.assert_array_equal(out, 10 * np.minimum(lane + 1, 31) + (lane ^ 1))
    asm = masked_shuffles.asm(args=(pto.alloc_tensor(128, pto.int32),))
    assert asm.count("BARRIER") == 2 and "SHFL_DOWN" in asm and "SHFL_XOR" in asm


def _chain(op, k):
    start = "c = x > 3" if op == "vote_eq" else "c = x"
    body = "\n".join(["    " + f"c = pto.{op}(c)"] * k)
    return (f"@pto.kernel\ndef chain(a, o):\n    i = pto.get_lane_id()\n    x = pto.load(a + i)\n"
            f"    {start}\n{body}\n    pto.store(o + i, pto.select(c, 1, 0) if {op == 'vote_eq'} else c)\n")


@pytest.mark.parametrize("op,name", [("vote_eq", "VOTE_EQ"), ("match_any", "MATCH_ANY"),
                                     ("match_all", "MATCH_ALL")])
def test_each_vote_or_match_in_a_chain_adds_its_table_latency(make_kernels, op, name):
    """k dependent votes (or matches) each wait for the previous result: 3 of them take exactly
    2 x latency(name) more than 1, the latency of the machine table (7 on ascend910b)."""
    def cycles(k):
        kernel = make_kernels(_chain(op, k)).chain
        a, o = pto.to_device(np.arange(32, dtype=np.int32)), pto.alloc_tensor(128, pto.int32)
        return pto.profile(kernel, grid=(1,), block=(32,), args=(a, o)).total_cycles
    assert pto.machine().latency(name) == 7
    assert cycles(3) - cycles(1) == 2 * 7


@pytest.mark.parametrize("mask,message", [("0x1FFFFFFFF", "does not fit in 32 bits"),
                                          ("1.5", "int bit mask")])
def test_a_mask_that_is_not_32_bits_is_a_compile_error(make_kernels, mask, message):
    mod = make_kernels(f"@pto.kernel\ndef k(o):\n    o[0] = pto.ballot_sync({mask}, True)\n")
    with pytest.raises(pto.CompileError, match=message):
        mod.k.asm(args=(pto.alloc_tensor(4, pto.int32),))


# ---------------------------------------------------------------- numba's launch forms
@pto.kernel
def iota(o, n):
    i = pto.get_global_id()
    if i < n:
        o[i] = i


@pytest.mark.parametrize("n,tpb,grid,block", [(300, 0, 2, 256), (40, 0, 1, 64), (100, 32, 4, 32)])
def test_forall_covers_n_lanes(n, tpb, grid, block):
    """forall(n): 256 lanes per block, or n rounded up to a warp when fewer (40 -> 64), and
    ceil(n / block) blocks (300 -> 2); tpb=32 gives blocks of 32 (100 -> 4 blocks). Every
    o[i] = i for i < n."""
    config = iota.forall(n, tpb=tpb)
    assert (config.grid, config.block) == ((grid,), (block,))
    d_o = pto.alloc_tensor(n * 4, pto.int32)
    handle = config(d_o, n)
    assert not handle.done                    # device tensors only: queued, as pto.launch
    np.testing.assert_array_equal(d_o.numpy(), np.arange(n))


def test_forall_of_no_lanes_launches_nothing_and_negative_is_an_error():
    """forall(0)(...) returns None without queueing a launch; forall(-1) is numba's ValueError."""
    assert iota.forall(0)(pto.alloc_tensor(4, pto.int32), 0) is None
    assert not pto.runtime.device.current_device().queue
    with pytest.raises(ValueError, match="negative task count"):
        iota.forall(-1)


def test_brackets_launch_and_copy_host_arrays_back():
    """iota[1, 64](host, 50): the host array is copied in, the launch runs at once, and the
    array gets 0..49 back (elements 50..63 keep their -1)."""
    host = np.full(64, -1, np.int32)
    iota[1, 64](host, 50)
    np.testing.assert_array_equal(host, np.concatenate([np.arange(50), np.full(14, -1)]))


def test_a_read_only_host_array_the_kernel_writes_is_an_error_not_a_silent_loss():
    """A read-only array (writeable flag off) cannot take the kernel's results: iota[1, 64]
    writing it is an ArgumentError naming the parameter (the results were dropped without a
    word), as numba's copy back into it fails; one the kernel leaves as it was is fine."""
    host = np.full(64, -1, np.int32)
    host.flags.writeable = False
    with pytest.raises(pto.ArgumentError, match=r"the kernel wrote 'o', but the numpy array passed for it is read-only"):
        iota[1, 64](host, 50)
    iota[1, 64](host, 0)                     # n = 0: nothing written, nothing to copy back
    np.testing.assert_array_equal(host, np.full(64, -1))


def test_launch_form_mistakes_name_what_was_given():
    """forall(5.5) (was reported as grid=(1.0,)), an empty host array (was alloc_tensor's
    nbytes=0) and memcpy_h2d of a device tensor as the host array (was "0 bytes (0 x float64)")
    are ArgumentErrors naming the argument."""
    with pytest.raises(pto.ArgumentError, match=r"forall\(ntasks\): the number of lanes must be a whole number, not float 5.5"):
        iota.forall(5.5)
    with pytest.raises(pto.ArgumentError, match=r"the numpy array passed as 'o' is empty \(shape \(0,\)\)"):
        iota[1, 32](np.zeros(0, np.int32), 0)
    d = pto.alloc_tensor(16 * 4, pto.int32)
    with pytest.raises(pto.ArgumentError, match=r"memcpy_h2d\(dst, host\): host is the device tensor"):
        pto.memcpy_h2d(d, d)
