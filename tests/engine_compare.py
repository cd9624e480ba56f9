"""Running one launch twice and requiring the same results: on the compiled event loop and on
SimPy (assert_engines_agree), or with the numba lane executor and the numpy reference executor
(assert_executors_agree, and both_executors for an AI-core launch in both modes). Each run works on a private copy of device memory."""
import numpy as np

import pypto_sim as pto
from pypto_sim.errors import PtoError
from pypto_sim.exec import gm, reference
from pypto_sim.exec.aicore_functional import run_aicore_functional
from pypto_sim.exec.lane import executor
from pypto_sim.runtime.launch import launch_arguments, simulation_for
from pypto_sim.runtime.device import current_device
from pypto_sim.timing.records import FIELDS


def simulate_engine(kernel, args, grid, block, engine, max_cycles=None, record=True, checks=frozenset()):
    """One launch with the given engine on copies of HBM; returns what it produced."""
    dev = current_device()
    handle = dev.launch(kernel, grid, block, args)
    words, init = dev.hbm.data.copy(), dev.hbm.init.copy()
    sim = simulation_for(dev.queue.pop(), words, init, engine=engine, max_cycles=max_cycles,
                         record=record, checks=frozenset(checks))
    try:
        cycles, error = sim.run(), None
    except PtoError as err:
        cycles, error = None, err
    del handle
    assert sim.engine_used == engine
    records = sim.records() if error is None else None
    rounds = getattr(sim, "grid_barrier", None)        # an AI-core launch's SYNCALL rounds
    return dict(words=words, init=init, cycles=cycles, error=error, records=records,
                totals=sim.totals(records) if error is None else None,
                syncall=None if rounds is None else (rounds.releases, rounds.last_arrivals))


def assert_engines_agree(kernel, args, grid, block, **kw):
    """Run on both engines; every output must be identical. Returns the SimPy run's results."""
    slow = simulate_engine(kernel, args, grid, block, "simpy", **kw)
    fast = simulate_engine(kernel, args, grid, block, "fast", **kw)
    assert fast["cycles"] == slow["cycles"]
    assert type(fast["error"]) is type(slow["error"])
    assert str(fast["error"]) == str(slow["error"])
    same = fast["words"] == slow["words"]                 # HBM bytes, bit for bit
    assert same.all(), f"HBM differs at bytes {np.nonzero(~same)[0][:8]}"
    assert np.array_equal(fast["init"], slow["init"])
    assert fast["syncall"] == slow["syncall"]              # each round's release and last arrival
    if slow["totals"] is not None:
        for name in ("count", "lanes", "busy", "stall"):
            assert np.array_equal(getattr(slow["totals"], name), getattr(fast["totals"], name)), name
    if slow["records"] is not None:
        assert len(fast["records"]) == len(slow["records"])
        for name in FIELDS:
            a, b = getattr(slow["records"], name), getattr(fast["records"], name)
            assert np.array_equal(a, b), f"records.{name} differ first at row {np.argmax(a != b)}"
    return slow


def tensors(*hosts):
    """Device tensors holding copies of the host arrays, in order."""
    out = []
    for host in hosts:
        d = pto.alloc_tensor(host.nbytes, dtype=host.dtype)
        pto.memcpy_h2d(d, host)
        out.append(d)
    return out


def simulate_executor(kernel, args, grid, block, ex):
    """One launch on a fresh copy of device memory with the given executor module."""
    dev = current_device()
    handle = dev.launch(kernel, grid, block, args)
    words = dev.hbm.data.copy()
    sim = simulation_for(dev.queue.pop(), words, None, executor_module=ex)
    cycles = sim.run()
    del handle
    return words, cycles, sim.records()


def assert_executors_agree(kernel, args, grid, block, source):
    """Run on the numba lane executor and on the reference executor: HBM bytes, cycles and
    each record's issue cycle and pc must be identical. Returns the numba run's HBM bytes."""
    w_fast, c_fast, r_fast = simulate_executor(kernel, args, grid, block, executor())
    w_ref, c_ref, r_ref = simulate_executor(kernel, args, grid, block, reference)
    bad = np.nonzero(w_fast != w_ref)[0][:5]          # HBM bytes, bit for bit
    assert not len(bad), f"bytes {bad}: numba {w_fast[bad]} reference {w_ref[bad]}\n{source}"
    assert c_fast == c_ref, source
    assert np.array_equal(r_fast.issue, r_ref.issue) and np.array_equal(r_fast.pc, r_ref.pc), source
    return w_fast


# ---------------------------------------------------------------- AI-core launches

def same_words(got, want, what):
    """HBM images byte for byte (a NaN's bits included)."""
    diff = np.nonzero(got != want)[0]
    assert not len(diff), f"{what}: bytes {diff[:5]} differ: {got[diff[:5]]} vs {want[diff[:5]]}"


def tensor_values(image, t):
    """Tensor t's elements in an HBM image (bytes), as numpy values."""
    return gm.decode(image[t.alloc.byte_addr:t.alloc.byte_addr + t.nbytes], t.dtype)


def both_executors(kernel, grid, args):
    """Run one launch four ways on copies of device memory: timing and functional mode, each
    with the numba executor and the reference executor. Returns the four HBM images."""
    dev = current_device()
    dev.launch(kernel, grid, (32, 1, 1), args)
    pending = dev.queue.pop()
    images = {}
    for ex_name, ex in (("numba", executor()), ("reference", reference)):
        words = dev.hbm.data.copy()
        simulation_for(pending, words, None, executor_module=ex).run()
        images[("timing", ex_name)] = words
        words = dev.hbm.data.copy()
        tensors, scalars, names = launch_arguments(pending)
        run_aicore_functional(pending.program, pending.program.encode(), pending.grid, pending.block,
                              tensors, scalars, words, None, pending.kernel.name, names, 10**7,
                              executor_module=ex)
        images[("functional", ex_name)] = words
    return images


def dev_array(array, dtype):
    """A device tensor of the given dtype holding a copy of array."""
    t = pto.alloc_tensor(array.nbytes, dtype)
    pto.memcpy_h2d(t, array)
    return t


def error_outcomes(kernel, args):
    """The error (type, text) of one launch run five ways on copies of device memory: the
    compiled and the SimPy engine with the numba executor, the SimPy model with the reference
    executor, and the functional runner with each executor."""
    dev = current_device()
    dev.launch(kernel, (1, 1, 1), (32, 1, 1), args)
    pending = dev.queue.pop()
    got = {}
    for way, engine, ex in (("fast", "fast", executor()), ("simpy", "simpy", executor()),
                            ("simpy, reference", "simpy", reference)):
        try:
            simulation_for(pending, dev.hbm.data.copy(), None, engine=engine, executor_module=ex).run()
            got[way] = None
        except pto.PtoError as err:
            got[way] = (type(err), str(err))
    for way, ex in (("functional", executor()), ("functional, reference", reference)):
        tensors, scalars, names = launch_arguments(pending)
        try:
            run_aicore_functional(pending.program, pending.program.encode(), pending.grid, pending.block, tensors,
                                  scalars, dev.hbm.data.copy(), None, pending.kernel.name, names, 10**7,
                                  executor_module=ex)
            got[way] = None
        except pto.PtoError as err:
            got[way] = (type(err), str(err))
    return got
