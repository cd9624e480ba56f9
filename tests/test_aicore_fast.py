"""The AI core's compiled event loop (timing/aicore_fast.py) against the SimPy model, its
specification: the same records (every field of every row), cycles, values (HBM words and
initcheck's record), L2 and route figures, and the same errors, on the AI-core examples and on
randomly generated programs of flags, cross-core flags, pipe barriers, cube and vector work,
correctly synchronised or not (a missing flag races the same way in both)."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.errors import PtoError
from pypto_sim.isa import VECTOR_FAMILIES, load_isa
from pypto_sim.runtime.launch import simulation_for
from pypto_sim.runtime.device import DEFAULT_BLOCK, current_device
from pypto_sim.timing.records import FIELDS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
sys.path.append(str(Path(__file__).resolve().parents[1] / "benchmarks"))   # after examples/: both have a layer_norm
import conv2d_forward  # noqa: E402
import flash_atten_a3  # noqa: E402
import flash_attention  # noqa: E402
import gemm_ar_compute  # noqa: E402
import gemm_manual  # noqa: E402
import layer_norm  # noqa: E402
import published  # noqa: E402
import rms_norm  # noqa: E402
import softmax  # noqa: E402
import topk  # noqa: E402


def simulate(kernel, grid, args, engine, max_cycles=None, values=True):
    """One launch on the given engine, on copies of HBM: what it produced."""
    dev = current_device()
    dev.launch(kernel, grid, DEFAULT_BLOCK, args)
    words, init = dev.hbm.data.copy(), dev.hbm.init.copy()
    pending = dev.queue.pop()
    sim = simulation_for(pending, words, init, engine=engine, max_cycles=max_cycles, values=values)
    try:
        cycles, error = sim.run(), None
    except PtoError as err:
        cycles, error = None, err
    records = sim.records() if error is None else None
    rows = np.stack([getattr(records, f) for f in FIELDS], 1) if records is not None else None
    stats = sim.aicore_stats
    return dict(cycles=cycles, error=error, rows=rows, words=words, init=init,
                l2=(sim.l2.hits, sim.l2.misses) if sim.l2 is not None else None,
                routes=dict(stats.route_wait), engine=sim.engine_used)


def assert_engines_agree(kernel, grid, args, fallback=False, **kw):
    """SimPy and the compiled loop give identical results; returns the compiled loop's.
    fallback: the compiled loop met a fault and the launch ran under SimPy."""
    spec, fast = (simulate(kernel, grid, args, engine, **kw) for engine in ("simpy", "fast"))
    assert spec["engine"] == "simpy" and fast["engine"] == ("simpy" if fallback else "fast")
    assert type(fast["error"]) is type(spec["error"]) and str(fast["error"]) == str(spec["error"])
    assert fast["cycles"] == spec["cycles"]
    if spec["rows"] is not None:
        assert fast["rows"].shape == spec["rows"].shape
        bad = np.nonzero((fast["rows"] != spec["rows"]).any(1))[0]
        assert len(bad) == 0, f"row {bad[0]}: simpy {spec['rows'][bad[0]]} fast {fast['rows'][bad[0]]}"
    np.testing.assert_array_equal(fast["words"], spec["words"])
    np.testing.assert_array_equal(fast["init"], spec["init"])
    assert fast["l2"] == spec["l2"] and fast["routes"] == spec["routes"]
    return fast


def dev_array(x, dtype):
    t = pto.alloc_tensor(x.nbytes, dtype)
    pto.memcpy_h2d(t, x)
    return t


# ---------------------------------------------------------------- the examples
def test_the_gemm_example_on_four_cores():
    """examples/gemm_manual.py at 256 x 512 x 256 (four output tiles), manual flags."""
    rng = np.random.default_rng(0)
    M, N, K = 256, 512, 256
    A = dev_array(rng.standard_normal((M, K)).astype(np.float16), pto.float16)
    B = dev_array(rng.standard_normal((K, N)).astype(np.float16), pto.float16)
    C = pto.alloc_tensor(M * N * 4, pto.float32)
    fast = assert_engines_agree(gemm_manual.gemm, (4, 1, 1), (A, B, C, M, N, K))
    assert fast["l2"][0] > 0


@pytest.mark.parametrize("values", [True, False])
def test_the_flash_attention_example(values):
    """examples/flash_attention.py at S = 256: cube and vector units, cross-core flags."""
    S, D, BQ, BK = 256, flash_attention.D, flash_attention.BQ, flash_attention.BK
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((S, D)).astype(np.float16) for _ in range(3))
    blocks = S // BQ
    args = (dev_array(q, pto.float16), dev_array(np.ascontiguousarray(k.T), pto.float16),
            dev_array(v, pto.float16), pto.alloc_tensor(S * D * 4, pto.float32),
            pto.alloc_tensor(blocks * 2 * BQ * BK * 4, pto.float32),
            pto.alloc_tensor(blocks * 2 * BQ * BK * 2, pto.float16),
            pto.alloc_tensor(blocks * 2 * BQ * D * 4, pto.float32), S, 1.0 / math.sqrt(D))
    assert_engines_agree(flash_attention.flash_attention, (blocks, 1, 1), args, values=values)


def test_the_ported_flash_attention():
    """examples/flash_atten_a3.py (pto-isa's kernel) at S0 = 128, S1 = 2560: one block, ten
    256-key tiles, so the 8-slot cube-vector FIFOs wrap and the producers wait for free signals."""
    fa = flash_atten_a3
    S0, S1 = 128, 2560
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((s, fa.HEAD)).astype(np.float16) for s in (S0, S1, S1))
    args = (dev_array(q, pto.float16), dev_array(k, pto.float16),
            dev_array(v, pto.float16), pto.alloc_tensor(S0 * fa.HEAD * 4, pto.float32),
            pto.alloc_tensor(fa.CV_FIFO * fa.QK_SLOT * 4, pto.float32),
            pto.alloc_tensor(fa.CV_FIFO * fa.QK_SLOT * 2, pto.float16),
            pto.alloc_tensor(fa.CV_FIFO * fa.PV_SLOT * 4, pto.float32), S1,
            float(np.float32(1 / math.sqrt(fa.HEAD))))
    assert_engines_agree(fa.run_tfa, (1, 1, 1), args)


def test_the_conv2d_forward_port():
    """examples/conv2d_forward.py at X = [1, 2, 4, 48, 16], N = 1536 on six cores: TIMG2COL
    with a 64-row tail block and moving pads, the same records, cycles and values."""
    x, fz, _ = conv2d_forward.golden(1, 2, 4, 48, 1536)
    wk = np.ascontiguousarray(fz.transpose(0, 3, 1, 2).reshape(2 * 144, 1536))
    args = (dev_array(x, pto.float16), dev_array(wk, pto.float16), pto.alloc_tensor(4 * 48 * 1536 * 2, pto.float16),
            2, 4, 48, 1536)
    assert_engines_agree(conv2d_forward.conv2d_forward, (6, 1, 1), args)


def test_the_published_gemm_benchmark():
    """benchmarks/published.py's A3 GEMM (stepK 4, L1 and L0 ping-pong, manual flags) at
    512^3 on four cores: eight output tiles, two per core."""
    rng = np.random.default_rng(4)
    n = 512
    A = dev_array(rng.standard_normal((n, n)).astype(np.float16), pto.float16)
    B = dev_array(rng.standard_normal((n, n)).astype(np.float16), pto.float16)
    C = pto.alloc_tensor(n * n * 4, pto.float32)
    assert_engines_agree(published.gemm_performance, (4, 1, 1), (A, B, C, n, n, n))


def test_the_gemm_ar_compute_example():
    """examples/gemm_ar_compute.py at 256 x 1024 x 512 on three cores: 2 x 2 = 4 output tiles,
    so block 0 takes two (4 // 3 = 1, one more for the first 4 % 3 = 1 blocks), odd tile rows
    swizzled, two K iterations of two L1 panels each, float16 output."""
    rng = np.random.default_rng(5)
    m, k, n = 256, 1024, 512
    A = dev_array(rng.standard_normal((m, k)).astype(np.float16), pto.float16)
    B = dev_array(rng.standard_normal((k, n)).astype(np.float16), pto.float16)
    C = pto.alloc_tensor(m * n * 2, pto.float16)
    assert_engines_agree(gemm_ar_compute.gemm_ar_compute, (3, 1, 1), (A, B, C, m, n, k))


@pytest.mark.parametrize("values, dtype", [(True, "float32"), (False, "float32"), (True, "float16")])
def test_the_topk_example(values, dtype):
    """examples/topk.py at 192 rows: 48 vector blocks (24 AI cores x AIV0/AIV1) of four rows,
    one double-buffered iteration each; sort, merge and gather on V, flags as pto-isa's; the
    half kernel gathers its indices through an int32 view of its rows."""
    rows, k, dt = 192, topk.TOPK_OF[dtype], getattr(pto, dtype)
    data, idx, _, _ = topk.golden(rows, dtype=dtype)
    args = (pto.alloc_tensor(rows * k * dt.itemsize, dt), pto.alloc_tensor(rows * k * 4, pto.int32),
            dev_array(data, dt), dev_array(idx, pto.uint32), rows // topk.BLOCK_DIM)
    assert_engines_agree(topk.kernel_for(dtype), (topk.BLOCK_DIM // 2, 1, 1), args, values=values)


@pytest.mark.parametrize("make, extra", [(softmax.make_softmax, (64,)),
                                         (layer_norm.make_layer_norm, (64, 1 / 64)),
                                         (rms_norm.make_rms_norm, (64, 1 / 64))])
def test_the_row_kernels(make, extra):
    """The row softmax, layer norm and RMS norm on the vector cores, float16 data,
    sync='auto'."""
    X = dev_array(np.random.default_rng(2).standard_normal((64, 64)).astype(np.float16), pto.float16)
    assert_engines_agree(make(True), (2, 1, 1), (X, pto.alloc_tensor(64 * 64 * 2, pto.float16), *extra))


OPERAND_FORMS = """
@pto.kernel
def k(X, O, P):
    with pto.vector():
        s = pto.alloc_tile(16, 32, pto.float32, valid=(8, 16))
        d = pto.alloc_tile(8, 64, pto.float32, valid=(8, 16))
        tmp = pto.alloc_tile(8, 64, pto.float32)
        e = pto.alloc_tile(8, 64, pto.float32)
        i = pto.alloc_tile(8, 16, pto.int32)
        pto.tload(s, X, stride=32)
        pto.tadds(d, s, 0.5)
        pto.trowmax(tmp, pto.treshape(d, 8, 64), e)
        pto.trowexpand(e, tmp)
        pto.tcvt(i, d, mode="floor")
        pto.trecip(i, i)
        pto.tstore(O + pto.get_subblock_id() * 128, i)
        pto.tstore(P + pto.get_subblock_id() * 512, e)
"""


def test_pto_isa_operand_forms(make_kernels):
    """Elementwise ops at three row pitches (a valid region narrower than its tiles), a row
    reduction into an ND tile with a tmp, TROWEXPAND from an ND tile and int32 TRECIP
    (tests/test_aicore_operands.py): their costs, orderings and values in both engines."""
    mod = make_kernels(OPERAND_FORMS)
    X = dev_array(np.random.default_rng(3).uniform(-4, 4, (16, 32)).astype(np.float32), pto.float32)
    assert_engines_agree(mod.k, (2, 1, 1), (X, pto.alloc_tensor(256 * 4, pto.int32),
                                            pto.alloc_tensor(1024 * 4, pto.float32)))


# ---------------------------------------------------------------- generated programs
class FlagProgram:
    """A random AI-core kernel: the AIC loads, extracts, multiplies and stores tiles through
    MTE2 -> MTE1 -> M -> FIX with set/wait flags between the pipes (some pairs left out, so
    some runs race), pipe barriers and cross-core signals to the AIVs; the AIVs load, compute
    and store rows with their own flags and signal back. Every wait has a set before it
    unless ``broken`` asks for a fault."""

    def __init__(self, seed, broken=None):
        self.rng = np.random.default_rng(seed)
        self.broken = broken
        self.sync = "manual" if self.rng.random() < 0.7 else "auto"
        self.iters = int(self.rng.integers(1, 4))
        self.lines = []

    def flag(self, src, dst, indent):
        rng = self.rng
        if self.sync == "manual" and rng.random() < 0.15:
            return                                      # left out: the pipes race
        ev = int(rng.integers(0, 3))
        gap = "\n" + " " * indent if rng.random() < 0.8 else "\n" + " " * indent + "i2 = i2 + 1\n" + " " * indent
        self.lines.append(" " * indent + f"pto.set_flag(pto.PIPE_{src}, pto.PIPE_{dst}, {ev}){gap}"
                          f"pto.wait_flag(pto.PIPE_{src}, pto.PIPE_{dst}, {ev})")

    def maybe_barrier(self, indent, pipes):
        r = self.rng.random()
        if r < 0.15:
            self.lines.append(" " * indent + "pto.pipe_barrier(pto.PIPE_ALL)")
        elif r < 0.3:
            self.lines.append(" " * indent + f"pto.pipe_barrier(pto.PIPE_{self.rng.choice(pipes)})")

    def source(self) -> str:
        rng, n = self.rng, self.iters
        signals = int(rng.integers(0, n + 1))
        back = int(rng.integers(0, 2))
        add = self.lines.append
        add(f'@pto.kernel(sync="{self.sync}")')
        add("def k(A, B, C, W, O):")
        add("    i2 = 0")
        add("    with pto.cube():")
        add("        a1 = pto.alloc_tile(16, 32, pto.float16, loc=pto.Mat)")
        add("        b1 = pto.alloc_tile(32, 16, pto.float16, loc=pto.Mat)")
        add("        l0a = pto.alloc_tile(16, 32, pto.float16, loc=pto.Left)")
        add("        l0b = pto.alloc_tile(32, 16, pto.float16, loc=pto.Right)")
        add("        acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)")
        if self.broken == "unset":
            add("        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 7)")
        for i in range(n):
            base = pto_offset = 512 * i
            add(f"        pto.tload(a1, A + {base})")
            if rng.random() < 0.8:
                add(f"        pto.tload(b1, B + {pto_offset})")
            self.flag("MTE2", "MTE1", 8)
            add("        pto.textract(l0a, a1, 0, 0)")
            add("        pto.textract(l0b, b1, 0, 0)")
            self.flag("MTE1", "M", 8)
            add(f"        pto.{'tmatmul' if i == 0 or rng.random() < 0.3 else 'tmatmul_acc'}(acc, l0a, l0b)")
            self.flag("M", "FIX", 8)
            if i == n - 1 or rng.random() < 0.5:
                add(f"        pto.tstore(C + {256 * i}, acc)")
                self.flag("FIX", "M", 8)
            self.maybe_barrier(8, ["MTE2", "MTE1", "M", "FIX"])
            if i < signals:
                pipe = rng.choice(["", ", pto.PIPE_FIX", ", pto.PIPE_M"])
                add(f"        pto.cross_core_set_flag(1{pipe})")
        for _ in range(back):
            add("        pto.cross_core_wait_flag(2)")
        if self.broken == "deadlock":
            add("        pto.cross_core_wait_flag(3)")
        add("    with pto.vector():")
        add("        r = pto.get_subblock_id() * 16")
        add("        v = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)")
        add("        w = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)")
        add("        red = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)")
        for _ in range(signals):
            add("        pto.cross_core_wait_flag(1)")
        rows = "r * 16" if self.broken != "oob" else "r * 16 + 100000"
        for j in range(int(rng.integers(1, 4))):
            add(f"        pto.tload(v, W + {rows} + {256 * j})")
            self.flag("MTE2", "V", 8)
            for op in rng.choice(["tadds(v, v, 1.5)", "tmuls(w, v, 0.5)", "texp(w, v)",
                                  "tadd(v, v, w)", "trowsum(red, v)", "trowexpand(w, red)",
                                  "tmax(v, v, w)"], size=int(rng.integers(1, 4))):
                add(f"        pto.{op}")
            self.flag("V", "MTE3", 8)
            add(f"        pto.tstore(O + r * 16 + {256 * j}, v)")
            self.flag("MTE3", "MTE2", 8)
            self.maybe_barrier(8, ["MTE2", "V", "MTE3"])
        if back:
            add("        pto.cross_core_set_flag(2, pto.PIPE_MTE3)")
        return "\n".join(self.lines) + "\n"


def flag_program_args():
    rng = np.random.default_rng(7)
    A = dev_array(rng.standard_normal((3 * 16, 32)).astype(np.float16), pto.float16)
    B = dev_array(rng.standard_normal((3 * 32, 16)).astype(np.float16), pto.float16)
    C = pto.alloc_tensor(3 * 256 * 4, pto.float32)
    W = dev_array(rng.standard_normal((3 * 512,)).astype(np.float32), pto.float32)
    O = pto.alloc_tensor(3 * 512 * 4, pto.float32)
    return A, B, C, W, O


@pytest.mark.parametrize("seed", range(24))
def test_generated_flag_programs(make_kernels, seed):
    """24 random programs on two AI cores: identical results on both engines."""
    mod = make_kernels(FlagProgram(seed).source())
    assert_engines_agree(mod.k, (2, 1, 1), flag_program_args())


@pytest.mark.parametrize("broken, error, fallback", [("unset", pto.DeadlockError, True),
                                                     ("deadlock", pto.DeadlockError, False),
                                                     ("oob", pto.OutOfBoundsError, True)])
def test_faults_are_reported_as_the_simpy_model_reports_them(make_kernels, broken, error, fallback):
    """A wait_flag with no set_flag, a cross-core wait nobody signals, a vector load past its
    tensor: the same error, word for word, from both engines (the compiled loop stops and
    the launch runs under SimPy, or reports the deadlock itself)."""
    mod = make_kernels(FlagProgram(3, broken=broken).source())
    fast = assert_engines_agree(mod.k, (2, 1, 1), flag_program_args(), fallback=fallback)
    assert isinstance(fast["error"], error)


def test_the_cycle_limit_stops_both_engines_at_the_same_place(make_kernels):
    """A launch stopped by max_cycles: the same SimulationLimitError (the units and lines)
    and the same words written before the limit."""
    mod = make_kernels(FlagProgram(5).source())
    fast = assert_engines_agree(mod.k, (2, 1, 1), flag_program_args(), max_cycles=700)
    assert isinstance(fast["error"], pto.SimulationLimitError)


@pytest.mark.parametrize("seed", [1, 4])
def test_more_blocks_than_cores_queue_for_them(simple_machine, make_kernels, seed):
    """Five blocks on the two AI cores of tests/machines/simple.toml: blocks wait for a free
    core and reuse its slot; every block writes the same words (cores race through L2 and
    HBM links too)."""
    mod = make_kernels(FlagProgram(seed).source())
    fast = assert_engines_agree(mod.k, (5, 1, 1), flag_program_args())
    assert sorted(set(fast["rows"][:, 0].tolist())) == [0, 1, 2, 3, 4]



@pytest.mark.parametrize("seed", [41, 46])
def test_a_core_taking_its_next_block_keeps_its_units_issue_ports(make_kernels, seed):
    """26 blocks on the default machine's 24 AI cores: two cores take a second block, whose
    units issue from the cycle after the last instruction the core's first block issued on
    them (a unit's issue port is the core's, in both engines); SimPy and the compiled loop
    agree record for record (they differed by a cycle a wave of blocks)."""
    mod = make_kernels(FlagProgram(seed).source())
    fast = assert_engines_agree(mod.k, (26, 1, 1), flag_program_args())
    assert sorted(set(fast["rows"][:, 0].tolist())) == list(range(26))


def test_a_unit_retires_once_its_last_scalar_result_is_ready(make_kernels):
    """A vector section that ends on scalar arithmetic, j = n + 1 then j * 3 (ADD at cycle 0,
    MUL at 2 once j is ready, each 2 cycles on the scalar unit, [pipes] scalar latency 2):
    the MUL's result is ready at 4, so the kernel ends at 4, not at the EXIT's issue (3), and
    the scalar pipe is busy 4 of 4 cycles, not 133%."""
    mod = make_kernels('''
@pto.kernel
def k(O, n):
    with pto.vector():
        j = n + 1
        j2 = j * 3
''')
    fast = assert_engines_agree(mod.k, (1, 1, 1), (pto.alloc_tensor(64), 5))
    assert fast["cycles"] == 4
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(64), 5))
    assert prof.total_cycles == 4 and max(prof.pipe_utilization().values()) == 1.0

EVERY_VECTOR_FAMILY = '''
@pto.kernel(sync="auto")
def k(X, Y, O, H, I, Q, U):
    with pto.vector():
        r = pto.get_subblock_id() * 256
        x = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        y = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        d = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        h = pto.alloc_tile(16, 16, pto.float16, loc=pto.Vec)
        col = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        row = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
        ci = pto.alloc_tile(16, 1, pto.int32, loc=pto.Vec, layout=pto.ColMajor)
        ri = pto.alloc_tile(1, 16, pto.int32, loc=pto.Vec)
        m = pto.alloc_tile(16, 32, pto.uint8, loc=pto.Vec)
        pto.tload(x, X + r)
        pto.tload(y, Y + r)
        pto.tcmp(m, x, y, mode="gt")
        pto.tsel(d, m, x, y)
        pto.tstore(O + 8 * r, d)
        pto.tcmps(m, x, 0.5, mode="lt")
        pto.tsels(d, m, x, -1.5)
        pto.tstore(O + 8 * r + 256, d)
        pto.ttri(d, 1)
        pto.tstore(O + 8 * r + 512, d)
        pto.ttrans(d, x)
        pto.tstore(O + 8 * r + 768, d)
        pto.ttrans_conv(pto.treshape(d, 1, 256), pto.treshape(x, 1, 256), pto.treshape(y, 1, 256), "NC1HWC0",
                        (1, 1, 2, 16, 8), "NCHW", (1, 8, 2, 16))
        pto.tstore(O + 8 * r + 4864, d)
        pto.tcolsum(row, x)
        pto.tcolexpandsub(d, x, row)
        pto.tstore(O + 8 * r + 1024, d)
        pto.trowmax(col, y)
        pto.trowexpandexpdif(d, y, col)
        pto.tstore(O + 8 * r + 1280, d)
        pto.texpands(d, 2.5)
        pto.tmuls(d, d, -0.75)
        pto.tmax(d, d, x)
        pto.trowexpand(y, col)
        pto.tadd(d, d, y)
        pto.tcolexpand(y, row)
        pto.tsub(d, d, y)
        pto.tstore(O + 8 * r + 1536, d)
        pto.tcvt(h, x)
        pto.tstore(H + r, h)
        pto.trowargmax(ci, x)
        pto.tcolargmin(ri, x)
        pto.tstore(I + r // 8, ci)
        pto.tstore(I + r // 8 + 16, ri)
        scratch = pto.alloc_tile(1, 512, pto.float32, loc=pto.Vec)
        pto.tci(ri, r + 5, scratch, descending=True)
        pto.tstore(I + r // 8 + 64, ri)
        pto.tfillpad(d, x, pad="max")
        pto.tstore(O + 8 * r + 1792, d)
        xs = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec, valid=(5, 16))
        pto.tload(xs, Y + r)
        pto.tpartmax(d, xs, x)
        pto.tstore(O + 8 * r + 2048, d)
        xi = pto.alloc_tile(16, 16, pto.int32, loc=pto.Vec)
        xsi = pto.alloc_tile(16, 16, pto.int32, loc=pto.Vec, valid=(5, 16))
        pto.tcvt(xi, y)
        pto.tcvt(xsi, xs)
        pto.tpartargmin(d, xs, x, xi, xsi, xi)
        pto.tstore(O + 8 * r + 3840, d)
        pto.tcvt(d, xi)
        pto.tstore(O + 8 * r + 4096, d)
        pto.tpairreducesum(d, x)
        pto.tstore(O + 8 * r + 2304, d)
        half = pto.alloc_tile(16, 8, pto.float32, loc=pto.Vec, valid=(16, 7))
        pto.tload(half, X + r, stride=16)
        pto.tconcat(d, half, half)
        pto.tstore(O + 8 * r + 2560, d)
        cn = pto.alloc_tile(16, 8, pto.int32, loc=pto.Vec)
        cd = pto.alloc_tile(16, 8, pto.int32, loc=pto.Vec, valid=(16, 1))
        pto.texpands(cn, 20)
        pto.tconcat_dstidx(d, half, x, cd, cn, cn)
        pto.tstore(O + 8 * r + 4352, d)
        pto.tconcat_idx(d, x, half, cn, cn)
        pto.tstore(O + 8 * r + 4608, d)
        i16 = pto.alloc_tile(16, 16, pto.int16, loc=pto.Vec)
        pto.tcvt(i16, x)
        pto.tdequant(d, i16, col, col)
        pto.tstore(O + 8 * r + 2816, d)
        q8 = pto.alloc_tile(16, 32, pto.int8, loc=pto.Vec, valid=(16, 16))
        u8 = pto.alloc_tile(16, 32, pto.uint8, loc=pto.Vec, valid=(16, 16))
        pto.tquant(q8, y, col, d)
        pto.tstore(Q + r, q8)
        pto.tstore(O + 8 * r + 3072, y)
        pto.tquant(u8, x, col, d, offset=col)
        pto.tstore(U + r, u8)
        pto.tstore(O + 8 * r + 3328, x)
        pto.tstore(O + 8 * r + 3584, d)
        pto.taddreluconv(h, x, y)
        pto.tstore(H + 512 + r, h)
        x16 = pto.alloc_tile(16, 16, pto.int16, loc=pto.Vec)
        y16 = pto.alloc_tile(16, 16, pto.int16, loc=pto.Vec)
        pto.tcvt(x16, x, sat="off")
        pto.tcvt(y16, y, sat="off")
        pto.tsubreluconv(q8, x16, y16)
        pto.tstore(Q + 512 + r, q8)
        e0 = pto.alloc_tile(16, 16, pto.int32, loc=pto.Vec)
        e1 = pto.alloc_tile(16, 16, pto.int32, loc=pto.Vec)
        e2 = pto.alloc_tile(16, 16, pto.int32, loc=pto.Vec)
        pto.tcvt(e0, x)
        pto.tcvt(e1, y)
        pto.tadddeqrelu(h, e0, e1, 0.25, e2)
        pto.tstore(H + 1024 + r, h)
        pto.tstore(I + 128 + r, e0)
        pto.tstore(I + 640 + r, e1)
'''
# the families other tests hold the two engines to: tile_sort in the topk example (test_the_topk_example)
ENGINES_ELSEWHERE = ("tile_sort",)


def test_every_vector_family_replays_as_the_simpy_model_computes(make_kernels):
    """One op of each vector family (compares and selects, triangles, transposes, column
    and row reductions and expansions, fills, conversions, index reductions, partial arg-selections, pair sums,
    concatenations, dequantizations,
    quantizations: their int8 / uint8, and the src and tmp they write too; fused add / sub, ReLU and
    down-conversions; the dequantizing ReLU and the sources it overwrites) on data with
    NaN, infinities, -0.0 and float16 overflow: the compiled replay (timing/aicore_replay.py)
    decodes each as TileOp does, so HBM comes out word for word the same."""
    rng = np.random.default_rng(11)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 70000.0, 1 + 2.0**-11, -3.5])
    x, y = rng.standard_normal((2, 512)) * 4
    x[rng.integers(0, 512, 40)] = rng.choice(special, 40)
    y[rng.integers(0, 512, 40)] = rng.choice(special, 40)
    for family in set(VECTOR_FAMILIES) - set(ENGINES_ELSEWHERE):        # the kernel calls each family
        assert any(f"pto.{s.builtin}(" in EVERY_VECTOR_FAMILY for s in load_isa().specs if s.family == family), family
    mod = make_kernels(EVERY_VECTOR_FAMILY)
    args = (dev_array(x.astype(np.float32), pto.float32), dev_array(y.astype(np.float32), pto.float32),
            pto.alloc_tensor(8192 * 4, pto.float32), pto.alloc_tensor(1536 * 2, pto.float16),
            pto.alloc_tensor(1152 * 4, pto.int32), pto.alloc_tensor(1024, pto.int8), pto.alloc_tensor(512, pto.uint8))
    fast = assert_engines_agree(mod.k, (1, 1, 1), args)
    assert fast["engine"] == "fast"


def test_an_operation_is_deferred_only_when_nothing_writes_its_sources_meanwhile():
    """replay_deferrable on a hand-made log of one block's AIV0: a vector op reading words
    [0, 16) from cycle 0 to 5, overlapped by a load into [8, 24) completing at 3, must be
    computed at its start (not deferred); the same op reading [32, 48) may wait for its
    completion; a load whose GM words [100, 116) a store writes at 2 may not wait, one
    reading [200, 216) may; a matmul reading [64, 80) from 0 to 6 may wait (nothing writes
    there), one reading [16, 32) from 1 to 4 may not (the load writes [8, 24) at 3)."""
    from pypto_sim.exec.lane import executor
    ex = executor()
    rp = np.zeros((7, ex.N_RP), np.int64)
    rr = np.zeros((7, 8, 2), np.int64)
    rp[0, ex.RP_KIND], rp[0, ex.RP_NR], rr[0, 0] = ex.RK_ELEM, 1, (0, 16)       # vector op
    rp[1, ex.RP_KIND], rp[1, ex.RP_WLO], rp[1, ex.RP_WHI] = ex.RK_LOAD, 8, 24    # load, UB words
    rp[2, ex.RP_KIND], rp[2, ex.RP_NR], rr[2, 0] = ex.RK_ELEM, 1, (32, 48)
    rp[3, ex.RP_KIND] = ex.RK_STORE
    rp[4, ex.RP_KIND], rp[4, ex.RP_WLO], rp[4, ex.RP_WHI] = ex.RK_LOAD, 400, 416
    rp[5, ex.RP_KIND], rp[5, ex.RP_NR], rr[5, 0] = ex.RK_MMA, 1, (64, 80)
    rp[6, ex.RP_KIND], rp[6, ex.RP_NR], rr[6, 0] = ex.RK_MMA, 1, (16, 32)
    # (pc, GM offset, start, complete); rows 1 x cols 16 (ND: one run of 16), GM tensor base 0,
    # unit AIV0 (g = 1)
    ops = [(0, 0, 0, 5), (1, 500, 1, 3), (2, 0, 0, 5), (3, 100, 1, 2), (4, 100, 0, 4),
           (4, 200, 0, 4), (5, 0, 0, 6), (6, 0, 1, 4)]
    lg = np.zeros((len(ops), ex.N_LG), np.int64)
    for i, (pc, off, t0, t1) in enumerate(ops):
        lg[i, [ex.LG_PC, ex.LG_G, ex.LG_START, ex.LG_COMPLETE]] = pc, 1, t0, t1
        lg[i, [ex.LG_ROWS, ex.LG_COLS, ex.LG_OFF, ex.LG_STRIDE, ex.LG_RUNS, ex.LG_RUN]] = 1, 16, off, 16, 1, 16
    n = len(ops)
    times = np.concatenate([lg[:, ex.LG_START], lg[:, ex.LG_COMPLETE]])
    order = np.lexsort((np.arange(2 * n), times)).astype(np.int64)
    defer = np.zeros(n, np.int8)
    ex.replay_deferrable(order, n, lg, rp, rr, np.zeros(1, np.int64), defer)
    assert defer.tolist() == [0, 1, 1, 1, 0, 1, 1, 0]


@pytest.mark.parametrize("values", [True, False])
def test_records_and_log_kept_in_small_pieces(monkeypatch, values):
    """The compiled loop's record buffer flushed into narrow columns every 16 rows and its log
    of tile instructions starting at 8 rows give the SimPy model's records, values and
    initcheck map: benchmarks/published.py's GEMM at 512^3 on four cores. Each of the
    (512 / 128) x (512 / 256) = 8 output tiles takes one pass of k0 (K = 512 = 2 x 256): two
    l1_steps of 2 tloads and 4 k_subs of 2 textracts and a tmatmul (2 x 14 = 28), then a
    tstore, so 8 x 29 = 232 tile instructions are logged with values on. With values off the
    log keeps only what initcheck reads back (the 8 tstores) and so never grows past 32 rows
    (it doubles only when what it keeps fills half of it: 2 x (8 + 4) > 16)."""
    from pypto_sim.timing import aicore_fast, fast
    monkeypatch.setattr(fast, "ROWS_PER_CHUNK", 16)
    monkeypatch.setattr(aicore_fast, "ROWS_PER_CHUNK", 16)
    monkeypatch.setattr(aicore_fast, "LOG_ROWS", 8)
    engines, grown = [], []
    original = aicore_fast.AICoreFastEngine._grow
    monkeypatch.setattr(aicore_fast.AICoreFastEngine, "_grow",
                        lambda self, what: (engines.append(self), grown.append(what), original(self, what)))
    rng = np.random.default_rng(4)
    n = 512
    A = dev_array(rng.standard_normal((n, n)).astype(np.float16), pto.float16)
    B = dev_array(rng.standard_normal((n, n)).astype(np.float16), pto.float16)
    C = pto.alloc_tensor(n * n * 4, pto.float32)
    assert_engines_agree(published.gemm_performance, (4, 1, 1), (A, B, C, n, n, n), values=values)
    ex = engines[0].ex
    assert {ex.GROW_RECORDS, ex.GROW_LOG} <= set(grown)
    engine = engines[-1]
    logged = engine.lg_i[:engine.st[ex.S_LOG_N], ex.LG_PC]
    assert engine.store_pcs()[logged].sum() == 8
    if values:
        assert len(logged) == 232
    else:
        assert len(engine.lg_i) <= 32
