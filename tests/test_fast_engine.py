"""The compiled event loop (timing/fast.py) is the SimPy model, only faster: for every kernel
it can run, both engines give the same records (every field of every warp-instruction, in
the same order), the same total cycles, the same memory and the same errors. Each test runs
one launch twice, on a private copy of device memory, once per engine."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.exec import gm
from pypto_sim.runtime.launch import simulation_for
from pypto_sim.exec.lane import executor
from pypto_sim.runtime.device import current_device
from pypto_sim.timing.fast import why_not_fast

from engine_compare import assert_engines_agree, simulate_engine, tensors
from random_kernels import RandomKernel, float_kernel
from simt_kernels import CORPUS


VECTOR_ADD = """
@pto.kernel
def vector_add(a, b, c, n: int):
    i = pto.get_global_id(0)
    if i < n:
        c[i] = pto.load(a + i) + pto.load(b + i)

@pto.kernel
def saxpy(x, y, n: int, alpha: float):
    i = pto.get_global_id(0)
    if i < n:
        pto.fma(y + i, alpha, pto.load(x + i), pto.load(y + i))

@pto.kernel
def grid2d(o, w: int):
    x = pto.get_global_id(0)
    y = pto.get_global_id(1)
    o[y * w + x] = pto.cast(x * 100 + y, pto.float32) + pto.cast(pto.get_local_id(1), pto.float32)
"""


@pytest.mark.parametrize("n,block", [(1, 32), (1000, 256), (5000, 96), (70000, 512)])
def test_vector_add_sizes(make_kernels, n, block):
    """A partial last warp, blocks of 3 warps, and more blocks than the chip has slots
    (blocks queue for cores; HBM links contended)."""
    k = make_kernels(VECTOR_ADD).vector_add
    a, b, c = tensors(np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32))
    slow = assert_engines_agree(k, (a, b, c, n), (-(-n // block), 1, 1), (block, 1, 1))
    base = c.alloc.byte_addr
    assert np.array_equal(gm.decode(slow["words"][base:base + 4 * n], pto.float32), np.arange(n) + 1.0)


def test_fma_store_and_scalar_arguments(make_kernels):
    k = make_kernels(VECTOR_ADD).saxpy
    x, y = tensors(np.arange(3000, dtype=np.float32), np.ones(3000, np.float32))
    assert_engines_agree(k, (x, y, 3000, 0.5), (12, 1, 1), (256, 1, 1))


def test_two_dimensional_grid_and_block(make_kernels):
    k = make_kernels(VECTOR_ADD).grid2d
    (o,) = tensors(np.zeros(64 * 24, np.float32))
    assert_engines_agree(k, (o, 64), (4, 3, 1), (16, 8, 1))


@pytest.mark.parametrize("kernel", ["staged", "divergent"])
def test_corpus_kernels(make_kernels, kernel):
    """Block barriers and L1 stores (staged); break, continue, return and while (divergent)."""
    corpus = make_kernels(CORPUS)
    src, out = tensors(np.linspace(-1, 2, 600).astype(np.float32), np.zeros(512 * 3, np.float32))
    assert_engines_agree(getattr(corpus, kernel), (src, out, 600), (6, 1, 1), (256, 1, 1))


@pytest.mark.parametrize("seed", range(8))
def test_random_float_kernels(make_kernels, seed):
    kern = make_kernels(float_kernel(seed)).kern
    rng = np.random.default_rng(seed)
    args = tensors(*(rng.uniform(-4, 4, 128).astype(np.float32) for _ in range(3)))
    assert_engines_agree(kern, tuple(args), (2, 1, 1), (64, 1, 1))


@pytest.mark.parametrize("seed", range(8))
def test_random_control_flow_kernels(make_kernels, seed):
    mod = make_kernels(RandomKernel(3000 + seed).source())
    lanes = 64 if seed % 2 else 32
    out = pto.alloc_tensor(lanes * mod.S * 4, dtype=pto.int32)
    (a,) = tensors(np.random.default_rng(seed).integers(-5, 6, 16).astype(np.int32))
    assert_engines_agree(mod.kern, (out, a, seed % 7 - 2), (2, 1, 1), (lanes, 1, 1))


def test_out_of_bounds_fault_lands_what_was_issued(make_kernels):
    """The same error, and the same stores landed before it (those already issued)."""
    mod = make_kernels("""
@pto.kernel
def overrun(a, o):
    i = pto.get_global_id()
    o[i] = 1.0
    o[i] = pto.load(a + i * 3)
""")
    a, o = tensors(np.arange(300, dtype=np.float32), np.zeros(1024, np.float32))
    slow = assert_engines_agree(mod.overrun, (a, o), (4, 1, 1), (256, 1, 1))
    assert isinstance(slow["error"], pto.OutOfBoundsError)


def test_deadlock_and_cycle_limit(make_kernels):
    mod = make_kernels("""
@pto.kernel
def half_barrier(out):
    lid = pto.get_local_id()
    if lid < 128:
        pto.barrier_block()
    out[lid] = 1.0

@pto.kernel
def forever(out):
    k = 0
    while k < 1:
        k = k * 1
    out[pto.get_global_id()] = 1.0
""")
    (out,) = tensors(np.zeros(256, np.float32))
    slow = assert_engines_agree(mod.half_barrier, (out,), (1, 1, 1), (256, 1, 1))
    assert isinstance(slow["error"], pto.DeadlockError)
    slow = assert_engines_agree(mod.forever, (out,), (2, 1, 1), (64, 1, 1), max_cycles=3000)
    assert isinstance(slow["error"], pto.SimulationLimitError)


@pytest.mark.parametrize("kernel", ["staged", "divergent"])
def test_without_records(make_kernels, kernel):
    """record=False keeps no per-instruction rows, only per-pc totals that the compiled loop
    sums as it goes: they equal the SimPy run's (summed from its rows), and nothing else
    changes."""
    corpus = make_kernels(CORPUS)
    src, out = tensors(np.linspace(-1, 2, 600).astype(np.float32), np.zeros(1536, np.float32))
    args = (src, out, 600)
    slow = assert_engines_agree(getattr(corpus, kernel), args, (6, 1, 1), (256, 1, 1), record=False)
    assert slow["records"] is None and slow["totals"].warp_instructions > 0
    on = simulate_engine(getattr(corpus, kernel), args, (6, 1, 1), (256, 1, 1), "fast")
    assert on["cycles"] == slow["cycles"] and np.array_equal(on["words"], slow["words"])
    assert np.array_equal(on["totals"].busy, slow["totals"].busy)


def test_simple_machine(make_kernels, simple_machine):
    """Another table: issue width, pipes and HBM bandwidths all differ from the default."""
    corpus = make_kernels(CORPUS)
    src, out = tensors(np.linspace(-1, 2, 600).astype(np.float32), np.zeros(1536, np.float32))
    assert_engines_agree(corpus.staged, (src, out, 600), (6, 1, 1), (256, 1, 1))


CHECKED = """
@pto.kernel
def share(src, out, ordered: int):
    lid = pto.get_local_id()
    shared = pto.alloc_local(128)
    if lid < 128:
        pto.store(shared + lid, pto.load(src + lid))
    if ordered == 1:
        pto.barrier_block()
    else:
        pto.barrier()
    pto.store(out + pto.get_global_id(), pto.load(shared + lid % 128))

@pto.kernel
def neighbours(buf, n: int):
    i = pto.get_global_id()
    if i < n:
        pto.store(buf + i, 1.0)
        if pto.get_local_id() == 0 and i > 0:
            pto.store(buf + i - 1, pto.load(buf + i - 1) + 1.0)

@pto.kernel
def copy(a, o, n: int):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i))

@pto.kernel
def partial(o):
    lid = pto.get_local_id()
    if lid < 16:
        pto.barrier_block()
    pto.store(o + lid, 1.0)

@pto.kernel
def half(o):
    lid = pto.get_local_id()
    if lid < 32:
        pto.barrier_block()
    pto.store(o + lid, 1.0)
"""


@pytest.mark.parametrize("ordered", [0, 1])
def test_racecheck_in_l1(make_kernels, ordered):
    """The article's barrier example: a RaceError with the same text (lines, warps, lanes,
    cycles) from both engines; silence and equal records for the fixed twin."""
    k = make_kernels(CHECKED).share
    src, out = tensors(np.arange(128, dtype=np.float32), np.zeros(512, np.float32))
    slow = assert_engines_agree(k, (src, out, ordered), (2, 1, 1), (256, 1, 1),
                                checks={"racecheck", "initcheck", "synccheck"})
    assert isinstance(slow["error"], pto.RaceError) != bool(ordered)


def test_racecheck_across_blocks_and_initcheck(make_kernels):
    mod = make_kernels(CHECKED)
    (buf,) = tensors(np.zeros(64, np.float32))
    slow = assert_engines_agree(mod.neighbours, (buf, 64), (2, 1, 1), (32, 1, 1), checks={"racecheck"})
    assert isinstance(slow["error"], pto.RaceError)
    a, o = pto.alloc_tensor(64 * 4), pto.alloc_tensor(64 * 4)        # a never written
    slow = assert_engines_agree(mod.copy, (a, o, 64), (2, 1, 1), (32, 1, 1), checks={"initcheck"})
    assert isinstance(slow["error"], pto.UninitializedReadError)


@pytest.mark.parametrize("kernel,lanes", [("partial", 32), ("half", 64)])
def test_synccheck(make_kernels, kernel, lanes):
    k = getattr(make_kernels(CHECKED), kernel)
    (o,) = tensors(np.zeros(lanes, np.float32))
    slow = assert_engines_agree(k, (o,), (1, 1, 1), (lanes, 1, 1), checks={"synccheck"})
    assert isinstance(slow["error"], pto.SyncCheckError)


def test_what_stays_on_simpy(make_kernels):
    """Tile kernels and the debugger run on the SimPy model."""
    corpus = make_kernels(CORPUS)
    dev = current_device()
    x, y = tensors(np.zeros(256, np.float32), np.zeros(256, np.float32))
    dev.launch(corpus.softmax_rows, (1, 1, 1), (32, 1, 1), (x, y, 64))
    pending = dev.queue.pop()
    words, init = dev.hbm.data.copy(), dev.hbm.init.copy()
    assert "tile" in why_not_fast(simulation_for(pending, words, init))
    with pytest.raises(pto.LaunchError, match="tile"):
        simulation_for(pending, words, init, engine="fast").run()


def test_blocks_of_uneven_length_queue_for_two_cores(make_kernels, simple_machine):
    """40 one-warp blocks of 0-4 loop trips on simple.toml's 2 cores: blocks start as others
    end, at cycles where the warps already resident issue too."""
    mod = make_kernels("""
@pto.kernel
def uneven(o):
    i = pto.get_global_id()
    a = 1.0
    c = 2.0
    for k in range(pto.get_block_id() % 5):
        a = a + 1.0
        c = c * 2.0
    o[i] = a + c
""")
    (o,) = tensors(np.zeros(40 * 32, np.float32))
    assert_engines_agree(mod.uneven, (o,), (40, 1, 1), (32, 1, 1))


def test_buffers_that_start_tiny_grow_without_changing_anything(make_kernels, monkeypatch):
    """Every growable buffer of the engine starts at a few entries: the heap, the pending
    commits, the record rows and the booking table all grow (doubling, the table rebuilt
    without past cycles) many times, and the run is still SimPy's."""
    from pypto_sim.timing import fast
    grown = []
    monkeypatch.setattr(fast, "initial_sizes",
                        lambda warps, room, slots: dict(heap=3 * 8 + 9, commits=10, rows=3,
                                                        table=1 << max(4, (4 * room).bit_length())))
    original = fast.FastEngine._grow
    monkeypatch.setattr(fast.FastEngine, "_grow", lambda self, what: (grown.append(what), original(self, what)))
    corpus = make_kernels(CORPUS)
    src, out = tensors(np.linspace(-1, 2, 600).astype(np.float32), np.zeros(256 * 12, np.float32))
    assert_engines_agree(corpus.staged, (src, out, 600), (12, 1, 1), (256, 1, 1))
    ex = executor()
    assert {ex.GROW_HEAP, ex.GROW_COMMITS, ex.GROW_RECORDS, ex.GROW_TABLE} <= set(grown)


def test_reference_counting_is_switched_off_in_one_place():
    """numba's private _nrt=False option is named once, exec/compiled/jit_options.py's
    NO_REFCOUNT (empty when this numba's CPUTargetOptions has no _nrt); the compiled modules
    and the generated ALU module pass it as **NO_REFCOUNT, so a numba that refuses the option
    gets the same functions with reference counting and nothing else changed."""
    from pathlib import Path

    from numba.core.cpu import CPUTargetOptions

    import pypto_sim.exec.compiled as compiled
    from pypto_sim.exec.alu_source import generate_alu_source
    from pypto_sim.exec.compiled.jit_options import NO_REFCOUNT
    assert NO_REFCOUNT == ({"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {})
    sources = {p.name: p.read_text() for p in Path(compiled.__file__).parent.glob("*.py")}
    sources["generated alu"] = generate_alu_source()
    users = [name for name, text in sources.items() if "**NO_REFCOUNT)" in text]
    assert {"lane.py", "timing.py", "aicore_engine.py", "generated alu"} <= set(users)
    assert [name for name, text in sources.items() if "_nrt" in text] == ["jit_options.py"]
