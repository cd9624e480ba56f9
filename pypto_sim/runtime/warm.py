"""Compile the executor into the on-disk cache before real work: ``pypto-sim warm``, and a
sweep's driver before its point runners start.

numba compiles a function at its first call, for the argument types of that call, so importing
the executor (``executor()``) compiles nothing. ``warm()`` makes those first calls with small
launches through each path a program takes:
- a lane kernel on the compiled timing loop and in functional mode;
- an AI-core kernel (cube, cross-core flag, vector unit) on the AI core's compiled event loop
  with its values replay, with values=False, and in functional mode.

Each launch runs on a private device in a copied context, so the caller's device, tensors and
queue are untouched; the machine is the caller's active one. Every result is checked against
numpy, so a warm-up that computes wrongly fails loudly instead of caching silently.
"""
from __future__ import annotations

import contextvars
import time

import numpy as np

from ..dtypes import float16, float32
from ..frontend.aicore_names import Acc, Left, Mat, Right, Vec, cube, get_subblock_id, vector
from ..frontend.builtins import BUILTINS
from ..exec.lane import executor
from .api import alloc_tensor, memcpy_d2h, memcpy_h2d, profile
from .device import reset_device
from .launcher import kernel

# the kernels' builtins by their names (the kernels below are written without the ``pto.`` prefix)
load, fma, get_global_id = BUILTINS["load"], BUILTINS["fma"], BUILTINS["get_global_id"]
alloc_tile, tload, tstore, tmov = BUILTINS["alloc_tile"], BUILTINS["tload"], BUILTINS["tstore"], BUILTINS["tmov"]
tmatmul, tadds = BUILTINS["tmatmul"], BUILTINS["tadds"]
cross_core_set_flag, cross_core_wait_flag = BUILTINS["cross_core_set_flag"], BUILTINS["cross_core_wait_flag"]

LANES = 512             # the lane kernel's elements: 2 blocks of 256 lanes
SIDE = 32               # the AI-core kernel's matrices: 32 x 32


@kernel
def _lane_axpy(a, b, o, n):
    """o[i] = a[i] * 2 + b[i]."""
    i = get_global_id()
    if i < n:
        fma(o + i, load(a + i), 2.0, load(b + i))


@kernel
def _cube_then_vector(A, B, W, Out):
    """W = A @ B on the cube; each vector core adds 1 to its half of W's rows into Out."""
    with cube():
        a_l1 = alloc_tile(32, 32, float16, loc=Mat)
        b_l1 = alloc_tile(32, 32, float16, loc=Mat)
        a_l0 = alloc_tile(32, 32, float16, loc=Left)
        b_l0 = alloc_tile(32, 32, float16, loc=Right)
        acc = alloc_tile(32, 32, float32, loc=Acc)
        tload(a_l1, A)
        tload(b_l1, B)
        tmov(a_l0, a_l1)
        tmov(b_l0, b_l1)
        tmatmul(acc, a_l0, b_l0)
        tstore(W, acc)
        cross_core_set_flag(1)
    with vector():
        half = get_subblock_id() * 16 * 32
        s = alloc_tile(16, 32, float32, loc=Vec)
        cross_core_wait_flag(1)
        tload(s, W + half)
        tadds(s, s, 1.0)
        tstore(Out + half, s)


# the compiled engines the warm-up launches reach (tests/test_warm.py checks each gets a signature)
ENGINES = ("engine_run", "run_grid", "aicore_engine_run", "aicore_replay")


def compiled_in_this_process() -> bool:
    """Whether this process has compiled (or loaded from the cache) every engine warm() reaches:
    then warm() has nothing left to do here (a sweep's driver that already ran launches)."""
    ex = executor()
    return all(getattr(ex, name).signatures for name in ENGINES)


def warm() -> dict:
    """Run the warm-up launches (module docstring); return {launch: wall seconds}. An
    AssertionError names a launch whose values differ from numpy's."""
    return contextvars.copy_context().run(_warm_all)


def _warm_all() -> dict:
    reset_device()              # this copied context's own device
    seconds = {}
    rng = np.random.default_rng(0)
    a, b = (rng.random(LANES).astype(np.float32) for _ in range(2))
    lane_args = [alloc_tensor(LANES * 4) for _ in range(3)]
    memcpy_h2d(lane_args[0], a)
    memcpy_h2d(lane_args[1], b)
    for mode in ("timing", "functional"):
        start = time.perf_counter()
        profile(_lane_axpy, grid=(LANES // 256, 1, 1), block=(256, 1, 1), args=(*lane_args, LANES), mode=mode)
        seconds[f"lane kernel, {mode}"] = time.perf_counter() - start
        _check(f"lane kernel, {mode}", lane_args[2], np.float32, a * np.float32(2) + b)
    x, y = (rng.standard_normal((SIDE, SIDE)).astype(np.float16) for _ in range(2))
    # the accumulator holds A @ B rounded once to float32 (the cube's exact sums), then + 1
    want = (x.astype(np.float64) @ y.astype(np.float64)).astype(np.float32) + np.float32(1)
    for mode, values in (("timing", True), ("timing", False), ("functional", True)):
        tensors = [alloc_tensor(SIDE * SIDE * 2, float16), alloc_tensor(SIDE * SIDE * 2, float16),
                   alloc_tensor(SIDE * SIDE * 4, float32), alloc_tensor(SIDE * SIDE * 4, float32)]
        memcpy_h2d(tensors[0], x)
        memcpy_h2d(tensors[1], y)
        name = f"AI-core kernel, {mode}" + ("" if values else ", values=False")
        start = time.perf_counter()
        profile(_cube_then_vector, grid=(1,), args=tuple(tensors), mode=mode, values=values)
        seconds[name] = time.perf_counter() - start
        if values:
            _check(name, tensors[3], np.float32, want.ravel())
    return seconds


def _check(name, tensor, dtype, want):
    got = np.zeros(want.size, dtype)
    memcpy_d2h(got, tensor)
    worst = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1.0)))
    assert worst <= 1e-6, f"warm-up {name}: values differ from numpy's (worst relative {worst:.3g})"
