"""Randomised differential testing: generated kernels run on the timing model twice, once with
the numba lane executor and once with the numpy reference executor (the spec). Any difference
in memory, cycles or the instruction timeline is a bug in one of them."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.exec import gm

from engine_compare import assert_executors_agree
from random_kernels import RandomKernel, float_kernel

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
    words = assert_executors_agree(kern, tuple(tensors), (2, 1, 1), (32, 1, 1), source)
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
    assert_executors_agree(mod.kern, (out, a, seed % 7 - 2), (1, 1, 1), (lanes, 1, 1), source)


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
