"""Randomised differential testing: generated kernels run on the timing model twice, once with
the numba lane executor and once with the numpy reference executor (the spec). Any difference
in memory, cycles or the instruction timeline is a bug in one of them."""
import random

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.exec import gm, reference
from pypto_sim.exec.lane import executor
from pypto_sim.runtime.launch import simulation_for

from test_compiler import RandomKernel

FLOAT_UNARY = ["pto.exp({})", "pto.log(abs({}) + 1.0)", "pto.sqrt(abs({}))", "pto.rsqrt(abs({}) + 0.5)",
               "abs({})", "-({})", "pto.cast(pto.cast({}, pto.int32), pto.float32)"]
FLOAT_BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / ({} + 3.5))", "pto.min({}, {})",
                "pto.max({}, {})", "pto.fma(None, {}, {}, 0.25)", "({} // 1.5 + {})", "({} % 2.5 + {})"]


def float_kernel(seed, dtype_name="float32"):
    """A random float32 / float16 / float64 kernel: lane math, divergent ifs, loops, L1 round
    trips."""
    r = random.Random(seed)
    values = ["x", "y", "z"]

    def expr(depth=0):
        if depth > 2 or r.random() < 0.3:
            return r.choice(values + [repr(round(r.uniform(-3, 3), 3))])
        if r.random() < 0.35:
            return r.choice(FLOAT_UNARY).format(expr(depth + 1))
        return r.choice(FLOAT_BINARY).format(expr(depth + 1), expr(depth + 1))

    body = ["    i = pto.get_global_id()", "    lid = pto.get_local_id()",
            "    x = pto.load(a + i)", "    y = pto.load(b + i)", "    z = x * 0.5",
            "    buf = pto.alloc_local(64, DT)"]
    for _ in range(r.randint(3, 7)):
        kind = r.random()
        target = r.choice(values)
        if kind < 0.4:
            body.append(f"    {target} = pto.cast({expr()}, DT)")
        elif kind < 0.7:
            body.append(f"    if {r.choice(values)} > {round(r.uniform(-1, 1), 2)}:")
            body.append(f"        {target} = pto.cast({expr()}, DT)")
            body.append("    else:")
            body.append(f"        {target} = pto.select(i % 3 == 0, pto.cast({expr()}, DT), {target})")
        elif kind < 0.85:
            body.append(f"    for k in range(i % {r.randint(1, 4)}):")
            body.append(f"        {target} = pto.cast({target} * 0.5 + pto.cast(k, pto.float32), DT)")
        else:
            body.append(f"    pto.store(buf + lid, {target})")
            body.append("    pto.barrier()")
            body.append(f"    {target} = pto.load(buf + (lid ^ 1)) + {target}")
    body.append("    pto.store(o + i, x + y + z)")
    body.insert(4, "    z = pto.cast(x * 0.5, DT)")
    body.pop(5)
    return (f"DT = pto.{dtype_name}\n@pto.kernel\ndef kern(a, b, o):\n" + "\n".join(body)
            + "\n")


def simulate(kernel, args, grid, block, ex):
    """One launch on a fresh copy of device memory with the given executor module."""
    from pypto_sim.runtime.device import current_device
    dev = current_device()
    handle = dev.launch(kernel, grid, block, args)
    words = dev.hbm.data.copy()
    sim = simulation_for(dev.queue.pop(), words, None, executor_module=ex)
    cycles = sim.run()
    del handle
    return words, cycles, sim.records()


def assert_same(kernel, args, grid, block, source):
    w_fast, c_fast, r_fast = simulate(kernel, args, grid, block, executor())
    w_ref, c_ref, r_ref = simulate(kernel, args, grid, block, reference)
    bad = np.nonzero(w_fast != w_ref)[0][:5]          # HBM bytes, bit for bit
    assert not len(bad), f"bytes {bad}: numba {w_fast[bad]} reference {w_ref[bad]}\n{source}"
    assert c_fast == c_ref, source
    assert np.array_equal(r_fast.issue, r_ref.issue) and np.array_equal(r_fast.pc, r_ref.pc), source
    return w_fast


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_random_float_kernels_agree_between_executors(make_kernels, seed, dtype):
    source = float_kernel(seed, np.dtype(dtype).name)
    kern = make_kernels(source).kern
    n = 64
    rng = np.random.default_rng(seed)
    tensors = []
    for _ in range(3):
        host = rng.uniform(-4, 4, n).astype(dtype)
        d = pto.alloc_tensor(host.nbytes, dtype=host.dtype)
        pto.memcpy_h2d(d, host)
        tensors.append(d)
    words = assert_same(kern, tuple(tensors), (2, 1, 1), (32, 1, 1), source)
    t = tensors[2].alloc
    out = gm.decode(words[t.byte_addr:t.byte_addr + t.nbytes], t.dtype)
    assert np.isfinite(out).sum() >= n // 4, "the generator should compute mostly finite values"


@pytest.mark.parametrize("seed", range(20))
def test_random_control_flow_kernels_agree_between_executors(make_kernels, seed):
    """The compiler tests' random int32 kernels (every control-flow form, helpers, and/or)."""
    source = RandomKernel(1000 + seed).source()
    mod = make_kernels(source)
    lanes = 64 if seed % 2 else 32
    out = pto.alloc_tensor(lanes * mod.S * 4, dtype=pto.int32)
    a = pto.alloc_tensor(16 * 4, dtype=pto.int32)
    pto.memcpy_h2d(a, np.random.default_rng(seed).integers(-5, 6, 16).astype(np.int32))
    assert_same(mod.kern, (out, a, seed % 7 - 2), (1, 1, 1), (lanes, 1, 1), source)


@pytest.mark.parametrize("seed", range(20))
def test_random_control_flow_kernels_agree_between_modes(make_kernels, seed):
    """Functional mode runs its own (numba) mask stack: on the random control-flow kernels it
    must store exactly what timing mode stores."""
    source = RandomKernel(2000 + seed).source()
    mod = make_kernels(source)
    lanes = 64 if seed % 2 else 32
    outs = []
    for mode in ("timing", "functional"):
        out = pto.alloc_tensor(lanes * mod.S * 4, dtype=pto.int32)
        pto.memcpy_h2d(out, np.full(lanes * mod.S, -999, np.int32))
        a = pto.alloc_tensor(16 * 4, dtype=pto.int32)
        pto.memcpy_h2d(a, np.random.default_rng(seed).integers(-5, 6, 16).astype(np.int32))
        pto.profile(mod.kern, grid=(1, 1, 1), block=(lanes, 1, 1), args=(out, a, seed % 7 - 2), mode=mode)
        outs.append(out.numpy())
    assert np.array_equal(outs[0], outs[1]), source
