"""An adversarial differential run of TSTORE_FP, the fixpipe's vector pre-stage quantization
(pto.tstore(gm, acc, quant=fp), fp a Scaling tile the kernel fills with pto.tmov(fp, mat) =
TMOV_M2S; pto.tpush(pipe, acc, quant=fp)), on the compiled event loop (timing/aicore_fast.py,
exec/compiled/aicore_engine.py; the values replayed afterwards in timing order by
exec/compiled/replay.py, whose _store_quant reads the Scaling tile's words when the store
starts) against the SimPy model (timing/model.py with exec/aicore_tiles.py), the
specification: engine_compare.assert_engines_agree holds the two to the same cycles, records
and GM bytes. The cases are the ones where a replay could read the words at the wrong time:
the Scaling tile refilled between two stores (TLOAD into the Mat tile, TMOV into fp) with and
without the flags a device needs (FIX runs in order, but MTE2 refilling the Mat tile races the
previous TMOV_M2S), several quantizing stores in flight (TSTORE_FP, TSTORE_ACC with a scalar
quant=, relu=True, atomic='add', NZ), the Acc rewritten by the next matmul while they are
pending, more blocks than the 24 AI cores (a block memory reused by the replay), TPUSH with
quant=fp through a TPipe (docs/aicore.md), values=False and launches cut by max_cycles.

Value rules (goldens): hw-native-sys/pto-isa at 3186c381, include/pto/cpu/common.hpp
extract_m1_from_quant<true> (M1 from bits 31:13: 0.0f when its exponent and mantissa are 0,
returned before the sign is read; else sign x (1 + m / 1024) x 2^(e - 127) in float) and
quantize_element (float32(acc) x M1; VDEQF16 clamped to +-65504 then half; VREQ8 /
VQF322B8_PRE nearbyint(r + offset bits 45:37) clamped to [-128, 127] when bit 46 is set, else
[0, 255]); TStore.hpp TSTORE_IMPL(dst, src, fp) / tstore_common.hpp TStoreAccFp (column c by
word c); TMov.hpp TMovToFb (the whole Mat row into the FB); TPush.hpp pushAcc2GMFiFo.

Defects this run found, each test failing without its fix:
- isa/store_modes.py decode_word (as 766092b rewrote it for numba) gave a word of exponent and
  mantissa 0 with its sign bit set (the float32 bits of -0.0) the scale -0.0, so VDEQF16 stored
  -0.0 for a positive Acc value (test_a_zero_m1_is_plus_zero_whatever_its_sign_bit);
- the AI-core debugger (debug/aicore_session.py inspect), which replays the compiled loop's log
  and since 766092b steps TSTORE_FP kernels, converted an int64 tile's words (the quant words
  in Mat and Scaling: float64 slots holding the int64's bits) to integers, 0 for every word
  (test_the_debugger_shows_the_quant_words).

Not covered: check='race' / 'initcheck' / 'sync' (the compiled loop leaves checked launches to
the SimPy model: timing/aicore_fast.py why_not_aicore_fast), nor a fault (the compiled loop hands
the launch to SimPy, which reports it).
"""
import numpy as np
import pytest

import pypto_sim as pto
import pypto_sim.debug as dbg
from pypto_sim.runtime.device import current_device
from pypto_sim.runtime.launch import simulation_for
from pypto_sim.timing.records import FIELDS

from engine_compare import assert_engines_agree, both_executors, same_words, simulate_engine, tensor_values

I8, U8, F16 = "int8", "uint8", "float16"

# the cube section: A (16 x K) @ B (K x 32) into the Acc c, the 32 quant words of Q into q_mat; {src}: float32 (K 16,
# a float32 Acc: VQF322B8_PRE) or int8 (K 32, an int32 Acc: VREQ8 / VDEQF16); {body} after the M -> FIX flag
CUBE = """
@pto.kernel(sync="manual")
def k({args}):
    with pto.cube():
        a_mat = pto.alloc_tile(16, {K}, pto.{src}, loc=pto.Mat)
        b_mat = pto.alloc_tile({K}, 32, pto.{src}, loc=pto.Mat)
        a = pto.alloc_tile(16, {K}, pto.{src}, loc=pto.Left)
        b = pto.alloc_tile({K}, 32, pto.{src}, loc=pto.Right)
        c = pto.alloc_tile(16, 32, pto.{acc}, loc=pto.Acc)
        q_mat = pto.alloc_tile(1, 32, pto.int64, loc=pto.Mat)
        fp = pto.alloc_tile(1, 32, pto.int64, loc=pto.Scaling)
        pto.tload(a_mat, A)
        pto.tload(b_mat, B)
        pto.tload(q_mat, Q)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.tmov(a, a_mat)
        pto.tmov(b, b_mat)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(c, a, b)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
"""
FLAG = "        pto.set_flag(pto.PIPE_{0}, pto.PIPE_{1}, {2})\n        pto.wait_flag(pto.PIPE_{0}, pto.PIPE_{1}, {2})\n"


def cube_source(body, args="A, B, O, Q", src="float32"):
    """CUBE with its matmul's dtypes (float32: K 16, a float32 Acc; int8: K 32, an int32 Acc),
    then body (lines of the cube section, indented 8)."""
    k, acc = (16, "float32") if src == "float32" else (32, "int32")
    return CUBE.format(args=args, K=k, src=src, acc=acc) + body


def word(scale=0.0, offset=0, signed=True, bits=None, high=0):
    """A quant word: the float32 bits of scale (or bits), the offset in bits 45:37, bit 46 for
    signed, high in bits 63:47."""
    low = int(np.float32(scale).view(np.uint32)) if bits is None else bits
    return (low | offset << 37 | int(signed) << 46 | high << 47) & (1 << 64) - 1


def words_tensor(words):
    """The quant words as a device int64 tensor (pto-isa's uint64 words, the same bits)."""
    return pto.to_device(np.array(words, np.uint64).view(np.int64))


def quantize_element(acc, words, out):
    """quantize_element's vector form in numpy, column c by words[c]: extract_m1_from_quant<true>
    (bits 31:13; 0.0f when exponent and mantissa are 0, before the sign), float32(acc) x M1 in
    float32; VDEQF16 clamped to +-65504 then half; B8 nearbyint(r + offset), clamped to
    [-128, 127] with bit 46, else [0, 255], NaN 0, stored as its byte."""
    words = np.asarray(words, np.uint64)
    m1 = (words >> np.uint64(13)) & np.uint64(0x7FFFF)
    e = ((m1 >> np.uint64(10)) & np.uint64(0xFF)).astype(np.int64)
    mant = (m1 & np.uint64(0x3FF)).astype(np.float32)
    sign = np.where((m1 >> np.uint64(18)) & np.uint64(1), np.float32(-1), np.float32(1))
    with np.errstate(all="ignore"):
        scale = sign * (np.float32(1) + mant / np.float32(1024)) * np.power(np.float32(2), (e - 127).astype(np.float32))
        scale = np.where((e == 0) & (mant == 0), np.float32(0.0), scale).astype(np.float32)
        r = (acc.astype(np.float32) * scale).astype(np.float32)
        if out == F16:
            return np.clip(r, -65504, 65504).astype(np.float16)
        r = np.rint((r + ((words >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.float32)).astype(np.float32))
        signed = ((words >> np.uint64(46)) & np.uint64(1)).astype(bool)
        r = np.where(np.isnan(r), 0, np.clip(r, np.where(signed, -128, 0), np.where(signed, 127, 255)))
        return r.astype(np.int16).astype(out)


def out_of(run, tensor, shape=(16, 32)):
    """A tensor's elements in a run's HBM image (assert_engines_agree's SimPy run)."""
    return tensor_values(run["words"], tensor).reshape(shape)


# ---------------------------------------------------------------- the Scaling tile refilled
# two TSTORE_FPs of one Acc, the Scaling tile refilled from Q2 between them; {mte2_fix}: the MTE2 -> FIX flag before the
# first TMOV, {busy}: three scalar-quantized stores before it (FIX busy, the TMOV late), {fix_mte2}: FIX -> MTE2 before
# the refill's TLOAD (the first TMOV has read q_mat), {mte2_fix2}: MTE2 -> FIX before the second TMOV
REFILL = "{mte2_fix}{busy}" + """\
        pto.tmov(fp, q_mat)
        pto.tstore(O, c, quant=fp)
{fix_mte2}        pto.tload(q_mat, Q2)
{mte2_fix2}        pto.tmov(fp, q_mat)
        pto.tstore(O2, c, quant=fp)
""" + FLAG.format("FIX", "M", 0)
BUSY = "        pto.tstore(O3, c, quant=2.0)\n" * 3
REFILLS = {   # name: (MTE2 -> FIX first, FIX busy, FIX -> MTE2, MTE2 -> FIX second)
    "every flag": (True, False, True, True),
    "every flag, FIX busy": (True, True, True, True),
    "no FIX -> MTE2": (True, False, False, True),
    "no FIX -> MTE2, FIX busy": (True, True, False, True),
    "no MTE2 -> FIX after the refill": (True, False, True, False),
    "no flag": (False, False, False, False),
    "no flag, FIX busy": (False, True, False, False),
}


def refill_run(make_kernels, name):
    """REFILL with the flags of REFILLS[name] on both engines: (the SimPy run, O, O2, the Acc
    (eye(16) @ B: B's rows) by Q's words, by Q2's) (quantize_element)."""
    mte2_fix, busy, fix_mte2, mte2_fix2 = REFILLS[name]
    body = REFILL.format(mte2_fix=FLAG.format("MTE2", "FIX", 0) if mte2_fix else "", busy=BUSY if busy else "",
                         fix_mte2=FLAG.format("FIX", "MTE2", 0) if fix_mte2 else "",
                         mte2_fix2=FLAG.format("MTE2", "FIX", 1) if mte2_fix2 else "")
    source = cube_source(body, "A, B, O, Q, O2, Q2, O3")
    x2 = np.random.RandomState(7).randint(-150, 150, (16, 32)).astype(np.float32)
    q1 = [word(1.0 + (c % 3) / 4, c % 4) for c in range(32)]
    q2 = [word(-0.5, 3, signed=c % 2 == 0) for c in range(32)]
    args = (pto.to_device(np.eye(16, dtype=np.float32)), pto.to_device(x2), pto.alloc_tensor(512, pto.int8),
            words_tensor(q1), pto.alloc_tensor(512, pto.int8), words_tensor(q2), pto.alloc_tensor(512, pto.int8))
    run = assert_engines_agree(make_kernels(source).k, args, (1, 1, 1), (32, 1, 1))
    return run, out_of(run, args[2]), out_of(run, args[4]), quantize_element(x2, q1, I8), quantize_element(x2, q2, I8)


@pytest.mark.parametrize("name", ["every flag", "every flag, FIX busy"])
def test_a_refilled_scaling_tile_quantizes_each_store_by_its_own_words(make_kernels, name):
    """With FIX -> MTE2 before the refill's TLOAD and MTE2 -> FIX before each TMOV_M2S (and with
    FIX busy before the first TMOV), both engines store O by Q's words and O2 by Q2's."""
    _run, o, o2, by_q, by_q2 = refill_run(make_kernels, name)
    assert np.array_equal(o, by_q) and np.array_equal(o2, by_q2)


def test_a_refill_without_its_flags_reads_the_words_the_timing_gives_alike(make_kernels):
    """Without the flags the refill races: each store quantizes by whichever words the Scaling
    tile holds when it starts (the TLOAD writes q_mat whole at its completion, the TMOV_M2S fp
    at its). Both engines agree in every form, each output is all Q's or all Q2's words, and
    in at least one form the first store already reads Q2's (the race happens)."""
    outcomes = set()
    for name in REFILLS:
        _run, o, o2, by_q, by_q2 = refill_run(make_kernels, name)
        for got in (o, o2):
            assert np.array_equal(got, by_q) or np.array_equal(got, by_q2), name
        outcomes.add(np.array_equal(o, by_q2))
    assert outcomes == {False, True}


# ---------------------------------------------------------------- stores in flight, the Acc rewritten
# five quantizing stores of one Acc back to back on FIX, then TMATMUL_ACC rewriting it ({rewrite}: behind FIX -> M, or
# without it; then a sixth TSTORE_FP of the doubled Acc behind M -> FIX)
IN_FLIGHT = FLAG.format("MTE2", "FIX", 0) + """\
        pto.tmov(fp, q_mat)
        pto.tstore(O, c, quant=fp)
        pto.tstore(O2, c, quant=0.25)
        pto.tstore(O3, c, relu=True, quant=fp)
        pto.tstore(O4, c, {atomic}quant=fp)
        pto.tstore(O5, c, layout=pto.NZ, stride=512, quant=fp)
{rewrite}        pto.tmatmul_acc(c, a, b)
""" + FLAG.format("M", "FIX", 1) + "        pto.tstore(O6, c, quant=fp)\n" + FLAG.format("FIX", "M", 0)


@pytest.mark.parametrize("out", [I8, U8])
@pytest.mark.parametrize("flagged", [True, False])
def test_stores_in_flight_while_the_next_matmul_rewrites_the_acc(make_kernels, out, flagged):
    """TSTORE_FP, TSTORE_ACC with quant=0.25, TSTORE_FP with relu=True, with atomic='add' (int8:
    SetAtomicAdd has no uint8) and into NZ, then TMATMUL_ACC doubling the Acc, with FIX -> M
    (the stores read the Acc first) or without (the matmul may complete while they are
    pending), and a sixth TSTORE_FP of the result: the same cycles, records and bytes. Flagged,
    O is the first Acc by the words and O6 the doubled one (quantize_element)."""
    body = IN_FLIGHT.format(atomic="atomic='add', " if out == I8 else "",
                            rewrite=FLAG.format("FIX", "M", 1) if flagged else "")
    rng = np.random.RandomState(11)
    x1, x2 = rng.randint(-3, 4, (16, 16)).astype(np.float32), rng.randint(-20, 20, (16, 32)).astype(np.float32)
    words = [word(0.3 * (c % 5) - 0.5, c % 3, signed=out == I8 or c % 4 == 0) for c in range(32)]
    outs = [pto.to_device(np.full(512, 3, out)) for _ in range(6)]
    args = (pto.to_device(x1), pto.to_device(x2), outs[0], words_tensor(words), *outs[1:])
    run = assert_engines_agree(make_kernels(cube_source(body, "A, B, O, Q, O2, O3, O4, O5, O6")).k, args,
                               (1, 1, 1), (32, 1, 1))
    if flagged:
        acc = x1 @ x2
        assert np.array_equal(out_of(run, outs[0]), quantize_element(acc, words, out))
        assert np.array_equal(out_of(run, outs[5]), quantize_element(2 * acc, words, out))


# ---------------------------------------------------------------- blocks
# each block's A rows, words and output by its id; {cond}: which blocks move their words into the Scaling tile (whose
# valid region is {fv} of its 32 words: TMovToFb moves them all, the store reads 32)
BLOCKS = """
@pto.kernel
def k(A, B, O, Q):
    with pto.cube():
        blk = pto.get_block_id()
        a_mat = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        b_mat = pto.alloc_tile(16, 32, pto.float32, loc=pto.Mat)
        a = pto.alloc_tile(16, 16, pto.float32, loc=pto.Left)
        b = pto.alloc_tile(16, 32, pto.float32, loc=pto.Right)
        c = pto.alloc_tile(16, 32, pto.float32, loc=pto.Acc)
        q_mat = pto.alloc_tile(1, 32, pto.int64, loc=pto.Mat)
        fp = pto.alloc_tile(1, 32, pto.int64, loc=pto.Scaling, valid=(1, {fv}))
        pto.tload(a_mat, A + blk * 256)
        pto.tload(b_mat, B)
        pto.tload(q_mat, Q + blk * 32)
        pto.tmov(a, a_mat)
        pto.tmov(b, b_mat)
        pto.tmatmul(c, a, b)
        if {cond}:
            pto.tmov(fp, q_mat)
        pto.tstore(O + blk * 512, c, quant=fp)
"""


# the blocks that move their words (the kernel's condition, and as a Python test of the block id)
MOVERS = {"blk >= 0": lambda n: True, "blk < 24": lambda n: n < 24, "blk % 3 == 0": lambda n: n % 3 == 0}


@pytest.mark.parametrize("fv, cond", [(32, "blk >= 0"), (16, "blk < 24"), (32, "blk % 3 == 0")])
def test_more_blocks_than_cores_each_by_its_own_words(make_kernels, fv, cond):
    """30 blocks on the 24 AI cores (the last 6 on the first cores to finish; the replay reuses a
    finished block's memory), each TSTORE_FP by its own 32 words: the same cycles, records and
    bytes; a block that moved its words stores its Acc (diag(d) @ B) by them."""
    grid = 30
    rng = np.random.RandomState(13)
    d = rng.randint(1, 3, (grid, 16, 1)).astype(np.float32)
    x1 = (np.eye(16, dtype=np.float32) * d).reshape(grid * 16, 16)
    x2 = rng.randint(-60, 60, (16, 32)).astype(np.float32)
    words = np.array([word(s) for s in rng.choice([0.5, 1.0, -1.0, 2.0], grid * 32)], np.uint64)
    o = pto.alloc_tensor(512 * grid, pto.int8)
    run = assert_engines_agree(make_kernels(BLOCKS.format(fv=fv, cond=cond)).k,
                               (pto.to_device(x1), pto.to_device(x2), o, words_tensor(words)), (grid, 1, 1), (32, 1, 1))
    got = out_of(run, o, (grid, 16, 32))
    for blk in filter(MOVERS[cond], range(grid)):
        assert np.array_equal(got[blk], quantize_element(d[blk] * x2, words[blk * 32:(blk + 1) * 32], I8)), blk


# ---------------------------------------------------------------- TPUSH with quant=fp
TPUSH = """
@pto.kernel
def k(A, B, O, Q, F):
    pipe = pto.tpipe(F, 0, "c2v", 16 * 32, {slots})
    with pto.cube():
        a_mat = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        b_mat = pto.alloc_tile(16, 32, pto.float32, loc=pto.Mat)
        a = pto.alloc_tile(16, 16, pto.float32, loc=pto.Left)
        b = pto.alloc_tile(16, 32, pto.float32, loc=pto.Right)
        c = pto.alloc_tile(16, 32, pto.float32, loc=pto.Acc)
        q_mat = pto.alloc_tile(1, 32, pto.int64, loc=pto.Mat)
        fp = pto.alloc_tile(1, 32, pto.int64, loc=pto.Scaling)
        pto.tload(a_mat, A)
        pto.tload(b_mat, B)
        pto.tmov(a, a_mat)
        pto.tmov(b, b_mat)
        for i in range({n}):
            if i == 0:
                pto.tmatmul(c, a, b)
            else:
                pto.tmatmul_acc(c, a, b)
            pto.tload(q_mat, Q + i * 32)
            pto.tmov(fp, q_mat)
            pto.tpush(pipe, c, quant=fp)
    with pto.vector():
        v = pto.alloc_tile(8, 32, pto.{out})
        for i in range({n}):
            pto.tpop(pipe, v, split="up_down")
            pto.tfree(pipe, split="up_down")
            pto.tstore(O + i * 512 + pto.get_subblock_id() * 256, v)
"""


@pytest.mark.parametrize("out", [I8, U8])
@pytest.mark.parametrize("slots", [2, 5])
def test_tpush_quantizes_each_push_by_the_words_moved_before_it(make_kernels, out, slots):
    """Six pushes of the Acc ((i + 1) x A @ B) through a C2V TPipe of 2 and of 5 slots, each
    TSTORE_FP into its slot by the words TLOADed and TMOVed for it (sync='auto' orders the refill
    after the previous push), each AIV popping its 8 rows: the same cycles, records and bytes,
    push i quantized by word row i (quantize_element)."""
    n = 6
    rng = np.random.RandomState(17)
    x1, x2 = rng.randint(-2, 3, (16, 16)).astype(np.float32), rng.randint(-9, 9, (16, 32)).astype(np.float32)
    words = np.array([word(s, int(off), signed=out == I8 or j % 2 == 0) for j, (s, off) in
                      enumerate(zip(rng.choice([0.5, 1.0, -1.0, 2.0, 0.3], n * 32), rng.randint(0, 6, n * 32)))],
                     np.uint64)
    o = pto.alloc_tensor(512 * n, getattr(pto, out))
    fifo = pto.alloc_tensor(512 * slots, getattr(pto, out))
    args = (pto.to_device(x1), pto.to_device(x2), o, words_tensor(words), fifo)
    run = assert_engines_agree(make_kernels(TPUSH.format(slots=slots, n=n, out=out)).k, args, (1, 1, 1), (32, 1, 1))
    got = out_of(run, o, (n, 16, 32))
    for i in range(n):
        assert np.array_equal(got[i], quantize_element((i + 1) * (x1 @ x2), words[i * 32:(i + 1) * 32], out)), i


# ---------------------------------------------------------------- special words
ONE_STORE = FLAG.format("MTE2", "FIX", 0) + "        pto.tmov(fp, q_mat)\n        pto.tstore(O, c, quant=fp{extra})\n" \
    + FLAG.format("FIX", "M", 0)
# a word a column: scale exponent 0 (the smallest M1, and the float32 bits of -0.0 and of 0x80001FFF: M1 0) and 255
# (+-infinity, and a NaN's bits), negative scales, offsets up to 511 with either sign bit, high bits set
SPECIAL = [word(1.0), word(0.3), word(-0.7), word(1.0, 5), word(1.0, 200, False), word(1.0, signed=False),
           word(0.0), word(bits=0x7F800000), word(bits=1 << 13), word(2.5, high=0x1FFFF), word(0.3, 511, False),
           word(-1.0, signed=False), word(bits=0x80000000), word(bits=0x7FFFE000), word(1e-3, 3),
           word(-0.3, high=0xFFF0), word(bits=0xFF800000), word(bits=0x80001FFF, offset=7), word(bits=0x80002000),
           word(bits=0x007FE000), word(-2.0, 511), word(bits=0xFFFFE000, high=0x1FFFF), word(6e4), word(-6e4),
           word(1.0, 128), word(1.0, 127, False), word(bits=0x00002000), word(bits=0x3F801FFF),
           word(0.25, high=1 << 16), word(7.0), word(-1e-3, 511, False),
           word(bits=0x80000000, offset=511, signed=False)]
assert len(SPECIAL) == 32
SPECIAL_CASES = [(out, src, extra) for out, src in ((I8, "float32"), (U8, "float32"), (F16, "int8"), (I8, "int8"))
                 for extra in ("", ", relu=True", ", atomic='add'", ", layout=pto.NZ, stride={nz}")
                 if not (out == U8 and "atomic" in extra)]


def special_args(src, out):
    """A, B, O (3s to start with) and the SPECIAL words: float32 eye(16) @ halves with +-inf, NaN
    and 1e30 among them; int8 A (-128..127, row 0 zeros) @ 3 x eye(32)."""
    rng = np.random.RandomState(19)
    if src == "float32":
        x1 = np.eye(16, dtype=np.float32)
        x2 = (rng.randint(-600, 600, (16, 32)) / 2).astype(np.float32)
        x2[3, 5], x2[7, 9], x2[9, 20], x2[12, 30] = np.inf, -np.inf, np.nan, 1e30
    else:
        x1 = rng.randint(-128, 128, (16, 32)).astype(np.int8)
        x1[0] = 0
        x2 = np.eye(32, dtype=np.int8) * 3
    return x1, x2, (pto.to_device(x1), pto.to_device(x2), pto.to_device(np.full(512, 3, out)), words_tensor(SPECIAL))


@pytest.mark.parametrize("out, src, extra", SPECIAL_CASES)
def test_special_words_alike_on_every_engine_and_executor(make_kernels, out, src, extra):
    """One TSTORE_FP by the SPECIAL words into int8 / uint8 (VQF322B8_PRE, VREQ8) and float16
    (VDEQF16), plain, with relu=True, atomic='add' and into NZ: the same cycles, records and
    bytes on both engines, and the same bytes on the numba and reference executors in timing
    and functional mode; plain ND, the bytes are quantize_element's."""
    source = cube_source(ONE_STORE.format(extra=extra.format(nz=16 * 32 // np.dtype(out).itemsize)), src=src)
    x1, x2, args = special_args(src, out)
    kernel = make_kernels(source).k
    run = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    for way, image in both_executors(kernel, (1,), args).items():
        same_words(tensor_values(image, args[2]).view(np.uint8), tensor_values(run["words"], args[2]).view(np.uint8),
                   f"{way} vs the engines")
    if not extra:
        with np.errstate(invalid="ignore"):
            acc = x1.astype(np.float32) @ x2.astype(np.float32)
        want = quantize_element(acc, SPECIAL, out)
        assert np.array_equal(out_of(run, args[2]).view(np.uint8), want.view(np.uint8))


def test_a_zero_m1_is_plus_zero_whatever_its_sign_bit(make_kernels):
    """extract_m1_from_quant<true> returns 0.0f when M1's exponent and mantissa are 0, before it
    reads the sign: a word of the float32 bits of -0.0 (or 0x80001FFF, its low 13 bits dropped)
    scales by +0.0, so VDEQF16 stores float32(acc) x +0.0: +0.0 (0x0000) for acc >= 0, -0.0
    (0x8000) for acc < 0, on both engines and both executors. (decode_word made it -0.0, the
    signs the other way round.)"""
    source = cube_source(ONE_STORE.format(extra=""), src="int8")
    x1 = np.random.RandomState(23).randint(-128, 128, (16, 32)).astype(np.int8)
    x1[0] = 0
    words = [word(bits=0x80000000), word(bits=0x80001FFF, offset=9), word(bits=0x80000000, signed=False), word(1.0)] * 8
    args = (pto.to_device(x1), pto.to_device(np.eye(32, dtype=np.int8)), pto.alloc_tensor(1024, pto.float16),
            words_tensor(words))
    want = np.where(np.arange(32) % 4 == 3, x1.astype(np.float16), np.where(x1 < 0, np.float16(-0.0), np.float16(0.0)))
    kernel = make_kernels(source).k
    run = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    assert np.array_equal(out_of(run, args[2]).view(np.uint16), want.view(np.uint16))
    for way, image in both_executors(kernel, (1,), args).items():
        assert np.array_equal(tensor_values(image, args[2]).reshape(16, 32).view(np.uint16), want.view(np.uint16)), way


# ---------------------------------------------------------------- values=False, cycle limits, the debugger
def test_values_off_and_cut_launches_agree(make_kernels):
    """The TPUSH kernel (2 slots, int8): values=False gives SimPy's cycles and records on both
    engines; cut by max_cycles at every 5th cycle a record starts or completes (a store read and
    not yet written, a TMOV_M2S pending), both engines raise the same SimulationLimitError with
    the same bytes written."""
    kernel = make_kernels(TPUSH.format(slots=2, n=6, out=I8)).k
    words = [word(0.5, j % 7) for j in range(192)]
    rng = np.random.RandomState(29)
    args = (pto.to_device(rng.randint(-2, 3, (16, 16)).astype(np.float32)),
            pto.to_device(rng.randint(-9, 9, (16, 32)).astype(np.float32)), pto.alloc_tensor(512 * 6, pto.int8),
            words_tensor(words), pto.alloc_tensor(1024, pto.int8))
    full = simulate_engine(kernel, args, (1, 1, 1), (32, 1, 1), "simpy")
    dev = current_device()
    for engine in ("simpy", "fast"):
        dev.launch(kernel, (1, 1, 1), (32, 1, 1), args)
        sim = simulation_for(dev.queue.pop(), dev.hbm.data.copy(), None, engine=engine, values=False)
        assert sim.run() == full["cycles"] and sim.engine_used == engine
        records = sim.records()
        for name in FIELDS:
            assert np.array_equal(getattr(records, name), getattr(full["records"], name)), (engine, name)
    times = np.unique(np.concatenate([full["records"].issue, full["records"].complete]))
    for cut in times[times > 0][::5]:
        run = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1), max_cycles=int(cut))
        assert isinstance(run["error"], pto.SimulationLimitError) or cut >= full["cycles"]


def test_the_debugger_shows_the_quant_words(make_kernels):
    """Stopped at the TSTORE_FP (its inputs as it reads them), the debugger's Scaling tile fp and
    Mat tile q_mat hold the quant words, int64 with their bits (a word with high bits set, a
    float64 NaN's bits, too); stepped to the end, O is what SimPy stores."""
    words = [word(1.0 + c / 8, c % 5, signed=c % 2 == 0, high=c * 977) for c in range(32)]
    x2 = np.random.RandomState(31).randint(-40, 40, (16, 32)).astype(np.float32)
    args = (pto.to_device(np.eye(16, dtype=np.float32)), pto.to_device(x2), pto.alloc_tensor(512, pto.int8),
            words_tensor(words))
    kernel = make_kernels(cube_source(ONE_STORE.format(extra=""))).k
    run = assert_engines_agree(kernel, args, (1, 1, 1), (32, 1, 1))
    ctx = dbg.debug_kernel(kernel, args=args, grid=(1,), echo=False)
    ctx.break_at(inst="TSTORE_FP")
    assert ctx.continue_().inst == "TSTORE_FP"
    want = np.array(words, np.uint64).view(np.int64).reshape(1, 32)
    for tile in ("fp", "q_mat"):
        got = ctx.inspect(tile)
        assert got.dtype == np.int64 and np.array_equal(got, want), tile
    ctx.continue_()
    assert ctx.finished
    assert np.array_equal(ctx.tensor(args[2]).reshape(16, 32), out_of(run, args[2]))
