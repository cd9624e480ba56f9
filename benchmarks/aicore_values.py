"""Benchmark (run by hand, not a test): what the AI core's tile values cost.

    python benchmarks/aicore_values.py [--repeat 3] [--gemm 1024] [--fa 2048] [--load]

(--gemm 0 or --fa 0 leaves that kernel out.)

For examples/gemm_manual.py (M = N = K = --gemm) and examples/flash_attention.py (S = --fa):
wall time of the simulation (the profile's own, without making the data) with values on
(timing mode, the default), with values=False (the same cycles, no tile values) and in
functional mode (values, no timing), best of --repeat after a warm-up; and numpy's own time
for the same tile arithmetic: every tile instruction the functional run executes, replayed as
the numpy calls that do its work (a strided copy for a load, store or move, ``A @ B`` in
float64 for a matmul; for a vector op the ISA table's own expression over the whole tile in
float64 (exp(a - b) for TROWEXPANDEXPDIF, a * b for TMULS; ``x if c else y`` as np.where), a
reduction as that expression's ufunc reduced along the line, a TCVT as astype to its dtype),
with numpy's BLAS on one thread (threadpoolctl). The criterion of issue 21:
values-on time <= values-off time + 1.3 x numpy's time.

--load: the same, while another process keeps one of the two cores busy, with numpy's BLAS
left at its default thread count for the numpy replay. --unlimited-blas: the simulations' BLAS
(the large matmuls' float64 sums, exec/blas.py) not held to one thread, to show what the
limit buys under load. Needs threadpoolctl (pip install threadpoolctl).
"""
import argparse
import ast
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import flash_attention  # noqa: E402
import gemm_manual  # noqa: E402

from pypto_sim.exec.aicore_tiles import TileOp  # noqa: E402


def best(fn, repeat):
    """The best of repeat simulations' own wall time (the profile's, without making the data
    and the numpy reference), after a warm-up."""
    fn()
    return min(fn()[2].wall_seconds for _ in range(repeat))


class _Whole(ast.NodeTransformer):
    """An ISA expression of scalars made one of whole arrays: ``x if c else y`` becomes
    np.where(c, x, y), ``p or q`` / ``p and q`` np.logical_or / np.logical_and."""

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "where", ast.Load()),
                        [node.test, node.body, node.orelse], [])

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        name = "logical_or" if isinstance(node.op, ast.Or) else "logical_and"
        out = node.values[0]
        for v in node.values[1:]:
            out = ast.Call(ast.Attribute(ast.Name("np", ast.Load()), name, ast.Load()), [out, v], [])
        return out


def whole(expr):
    """The ISA table's float expression of a, b, c as a function of whole numpy arrays."""
    tree = _Whole().visit(ast.parse(expr, mode="eval"))
    return eval("lambda a, b, c: " + ast.unparse(tree), {"np": np})


def _reducer(expr):
    """The ufunc whose reduce folds a line as the reduction's expression does."""
    if " if " in expr:
        return np.maximum if "a > b" in expr else np.minimum
    return np.multiply if "*" in expr else np.add


def numpy_work(op):
    """A closure doing with numpy the work of tile instruction op (decoded by the executor)."""
    fam = op.fam
    rows, cols = op.shape
    rng = np.random.default_rng(0)
    if fam in ("tile_load", "tile_store", "tile_move"):
        src = rng.standard_normal((rows, cols + 7))[:, :cols]     # a strided window
        dst = np.empty((rows, cols))
        return lambda: np.copyto(dst, src)
    if fam == "tile_mma":
        m, n, k = op.mkn
        a, b, c = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))

        def mma():
            res = a @ b
            if op.spec.reads_dst:
                res += c
            return res.astype(np.float32)
        return mma
    x = rng.standard_normal((rows, cols))
    y = rng.standard_normal((rows, cols))
    expr = op.spec.float_expr
    if fam in ("tile_reduce", "tile_col_reduce", "tile_row_arg", "tile_col_arg"):
        axis = 1 if fam in ("tile_reduce", "tile_row_arg") else 0
        fold = _reducer(expr) if fam in ("tile_reduce", "tile_col_reduce") and expr else np.maximum
        return lambda: fold.reduce(x, axis=axis)
    if fam == "tile_alu" and "mode" in op.named:                 # TCVT: a conversion
        to = op.writes[0].buf.dtype.numpy
        return lambda: x.astype(to)
    if fam in ("tile_alu", "tile_expand_op", "tile_col_expand_op") and expr:
        f = whole(expr)
        if fam == "tile_expand_op":
            v = y[:, :1]
        elif fam == "tile_col_expand_op":
            v = y[:1, :]
        else:
            v = 0.5 if "scalar" in op.named else y
        return lambda: f(x, v, x)
    return lambda: np.add(x, y)


def numpy_time(run_functional_example):
    """Seconds numpy takes for the tile arithmetic of one functional run of the example."""
    works = []
    original = TileOp.run

    def record(self):
        works.append(numpy_work(self))
        return original(self)
    TileOp.run = record
    try:
        run_functional_example()
    finally:
        TileOp.run = original
    t0 = time.perf_counter()
    for w in works:
        w()
    return time.perf_counter() - t0, len(works)


def measure(name, run, repeat, blas_threads):
    from threadpoolctl import threadpool_limits
    on = best(lambda: run(), repeat)
    off = best(lambda: run(values=False), repeat)
    functional = best(lambda: run(mode="functional"), repeat)
    with threadpool_limits(blas_threads):
        numpy_s = min(numpy_time(lambda: run(mode="functional"))[0] for _ in range(repeat))
    cycles = run()[2].total_cycles
    verdict = "holds" if on <= off + 1.3 * numpy_s else "FAILS"
    print(f"| {name} | {on:.3f} s | {off:.3f} s | {functional:.3f} s | {numpy_s:.3f} s | "
          f"{off + 1.3 * numpy_s:.3f} s: {verdict} | {cycles:,} |")


def unlimit_blas():
    """The simulations' BLAS at numpy's default thread count (for the comparison only)."""
    from contextlib import contextmanager

    from pypto_sim.exec import aicore_functional
    from pypto_sim.runtime import launch as run

    @contextmanager
    def unlimited(wanted=True):
        yield wanted
    run.single_threaded_blas = aicore_functional.single_threaded_blas = unlimited


def burn(stop):
    while not stop.is_set():
        sum(i * i for i in range(10000))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--gemm", type=int, default=1024)
    parser.add_argument("--fa", type=int, default=2048)
    parser.add_argument("--load", action="store_true", help="keep one core busy meanwhile")
    parser.add_argument("--unlimited-blas", action="store_true",
                        help="let the simulations' BLAS use every thread")
    ns = parser.parse_args()
    if ns.unlimited_blas:
        unlimit_blas()
    stop = multiprocessing.Event()
    burner = None
    if ns.load:
        burner = multiprocessing.Process(target=burn, args=(stop,), daemon=True)
        burner.start()
    blas_threads = None if ns.load else 1
    print("| kernel | values on | values=False | functional | numpy's time | values-off + 1.3 x numpy "
          "| simulated cycles |")
    print("|---|---|---|---|---|---|---|")
    g = ns.gemm
    if g:                                   # --gemm 0 / --fa 0: leave that row out
        measure(f"gemm_manual {g}^3", lambda **kw: gemm_manual.run(g, g, g, **kw), ns.repeat,
                blas_threads)
    if ns.fa:
        measure(f"flash_attention S={ns.fa}", lambda **kw: flash_attention.run(ns.fa, **kw),
                ns.repeat, blas_threads)
    if burner is not None:
        stop.set()
        burner.join()


if __name__ == "__main__":
    main()
