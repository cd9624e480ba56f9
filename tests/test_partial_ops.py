"""TPARTADD, TPARTMAX, TPARTMIN, TPARTMUL (isa/47_partial.toml; a second family walked through
docs/design.md's checklist): over dst's valid region, the operator where both sources are valid
and a copy of the one covering dst elsewhere (PTO-ISA TPARTADD.md), sequenced as A2/A3's
TPartOp.hpp does; values against numpy on the AI core, compile errors at the line, the cost."""
import re

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.errors import CompileError

from aicore_runs import compile_error_at

KERNEL = '''
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 32, pto.{dt}, loc=pto.Vec, valid=({r0}, {c0}))
            b = pto.alloc_tile(16, 32, pto.{dt}, loc=pto.Vec, valid=({r1}, {c1}))
            d = pto.alloc_tile(16, 32, pto.{dt}, loc=pto.Vec, valid=({dr}, {dc}))
            pto.tload(a, A)
            pto.tload(b, B)
            pto.tpart{op}(d, a, b)
            pto.tstore(O, d)
'''
OPS = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}
# (r0, c0, r1, c1): src1 as dst, shorter in rows, narrower, both; src0 the partial one
REGIONS = [(16, 32, 16, 32), (16, 32, 5, 32), (16, 32, 16, 8), (16, 32, 3, 8), (5, 32, 16, 32),
           (16, 8, 16, 32), (16, 32, 1, 1)]


def _run(make_kernels, op, dt, r0, c0, r1, c1, **launch):
    """The kernel on random sources (each loaded as its valid rows x cols, contiguous in GM);
    returns (src0, src1, dst's valid region)."""
    dr, dc = max(r0, r1), max(c0, c1)
    mod = make_kernels(KERNEL.format(op=op, dt=dt, r0=r0, c0=c0, r1=r1, c1=c1, dr=dr, dc=dc))
    rng = np.random.default_rng(r0 * 1000 + c1)
    a = (rng.standard_normal((r0, c0)) * 8).astype(dt)
    b = (rng.standard_normal((r1, c1)) * 8).astype(dt)
    da, db, do = (pto.alloc_tensor(x.nbytes, getattr(pto, dt)) for x in (a, b, np.empty((dr, dc), dt)))
    pto.memcpy_h2d(da, a)
    pto.memcpy_h2d(db, b)
    pto.launch(mod.k, grid=(1,), args=(da, db, do), **launch)
    got = np.empty((dr, dc), dt)
    pto.memcpy_d2h(got, do)
    return a, b, got


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("region", REGIONS)
def test_partial_ops_match_tpartaddmds_definition(make_kernels, op, region):
    """TPARTADD.md: dst = src0 op src1 where both are valid, the valid one elsewhere."""
    a, b, got = _run(make_kernels, op, "float32", *region)
    full, part = (a, b) if a.shape == got.shape else (b, a)
    want = full.copy()
    pr, pc = part.shape
    want[:pr, :pc] = OPS[op](full[:pr, :pc], part)
    np.testing.assert_array_equal(got, want)


def test_int16_partial_add_wraps_and_runs_functionally_and_under_the_checks(make_kernels):
    """int16 sums wrap as TADD's do; the functional runner and check="all" compute the same."""
    timed = _run(make_kernels, "add", "int16", 16, 32, 5, 8)
    functional = _run(make_kernels, "add", "int16", 16, 32, 5, 8, mode="functional")
    checked = _run(make_kernels, "add", "int16", 16, 32, 5, 8, check="all")
    a, b, got = timed
    want = a.copy()
    want[:5, :8] = (a[:5, :8].astype(np.int32) + b).astype(np.int16)
    np.testing.assert_array_equal(got, want)
    for _, _, other in (functional, checked):
        np.testing.assert_array_equal(other, got)


@pytest.mark.parametrize("body, message", [
    ("s = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec, valid=(8, 32))\n            pto.tpartadd(s, a, b)",
     "valid regions 16 x 32 ('a') and 16 x 32 ('b') against dst's 8 x 32"),
    ("c = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec, valid=(8, 32))\n"
     "            e = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec, valid=(16, 8))\n"
     "            pto.tpartadd(d, c, e)",
     "valid regions 8 x 32 ('c') and 16 x 8 ('e') against dst's 16 x 32: one source must cover"),
    ("h = pto.alloc_tile(16, 32, pto.float16, loc=pto.Vec)\n            pto.tpartmax(d, a, h)",
     "'h' holds float16 and 'd' float32 (the three tiles hold one dtype"),
    ("w = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec, valid=(16, 32))\n            pto.tpartmul(d, a, w)",
     "tiles of different widths (32, 64 elements a row) are not built"),
    ("u = pto.alloc_tile(16, 32, pto.uint8, loc=pto.Vec)\n            pto.tpartmin(u, u, u)",
     "pto.tpartmin: 'u' holds uint8; A2/A3 takes float32, float16, int32, int16"),
])
def test_illegal_partial_ops_are_compile_errors_at_the_line(make_kernels, body, message):
    mod = make_kernels(f'''
@pto.kernel
def bad(O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
            b = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
            d = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
            {body}
''')
    compile_error_at(mod.bad, (pto.alloc_tensor(256),), message, body.split("\n")[-1].strip())


def test_a_partial_op_on_the_articles_tiles_names_the_ai_core(make_kernels):
    mod = make_kernels('''
@pto.kernel
def k(A):
    t = pto.alloc_local(64, pto.float32)
    pto.tpartadd(t, t, t)
''')
    with pytest.raises(CompileError, match=re.escape("pto.tpartadd works on typed tiles of pto.alloc_tile")):
        mod.k.program_for((pto.alloc_tensor(256),))


def test_a_partial_op_costs_its_operator_over_dsts_valid_region(make_kernels):
    """The default table prices TPARTADD as its TADD entry over dst's valid region (the copy of
    the uncovered part is not priced apart): a 16 x 32 float32 TPARTADD takes the cycles of a
    TADD of the same tiles."""
    mod = make_kernels('''
@pto.kernel
def k(A):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
            b = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec, valid=(5, 32))
            d = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
            e = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
            pto.texpands(a, 1.0)
            pto.texpands(b, 2.0)
            pto.tpartadd(d, a, b)
            pto.tadd(e, a, a)
''')
    prof = pto.profile(mod.k, grid=(1,), args=(pto.alloc_tensor(256),))
    cycles = {e.inst: e.end - e.start for e in prof.timeline if e.inst in ("TPARTADD", "TADD")}
    assert cycles["TPARTADD"] == cycles["TADD"] > 0
