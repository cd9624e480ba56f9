"""A tile instruction's values as a closure over the executor module's kernels: the article's
tile API (timing/tiles.py runs it at the cycle the operation completes) and the AI core's
vector families (exec/aicore_tiles.py). ``ctx`` is anything with the launch's executor module
(``ex``), HBM bytes and initcheck's bitmap (``hbm``, ``hbm_init``; exec/gm.py), tensor byte
addresses (``tbase``), encoded program
(``enc``) and per-pc ISA records (``pc_spec``): the timing model or the functional runner."""
from __future__ import annotations

import functools
import math

import numpy as np

from ..dtypes import BY_CODE
from ..ir.program import C_DTYPE, C_OP
from ..isa.tile_roles import FAMILY_ROLES
from . import gm

ITEMSIZE = {code: d.itemsize for code, d in BY_CODE.items()}


def effect(ctx, pc, vals, slot, blk, l1=None, values=True):
    """The closure that computes tile instruction pc's values (run at its completion), on
    the block's L1 or, for an AI core's vector unit, on ``l1`` (its UB). values=False: a
    closure that computes nothing (a store still marks initcheck's written elements). Operands
    are taken by their ISA names; a family one kernel runs is called as its descriptor says
    (isa/tile_roles.py: kernel, args)."""
    spec, ex, hbm = ctx.pc_spec[pc], ctx.ex, ctx.hbm
    l1 = blk.l1 if l1 is None else l1
    fam = spec.family
    dt = int(ctx.enc.code[pc, C_DTYPE])
    op = int(ctx.enc.code[pc, C_OP])
    names = [o.name for o in spec.value_operands]
    real = dict(zip(names, (float(x) for x in vals)))        # scalars and pads as numbers
    # word addresses and sizes as ints; a tile-scalar op's scalar may be inf or NaN, no int
    v = {name: int(x) if math.isfinite(x) else 0 for name, x in real.items()}
    item = ITEMSIZE[dt]
    if fam == "tile_load" and values:
        src = int(ctx.tbase[slot]) + v["src"] * item
        return lambda: ex.tile_load(l1, v["dst"], hbm, src, v["rows"], v["cols"], v["stride"], dt)
    if fam == "tile_store":
        dst = int(ctx.tbase[slot]) + v["dst"] * item
        rows, cols, stride = v["rows"], v["cols"], v["stride"]
        init = ctx.hbm_init

        def store():
            if values:                 # values=False: only initcheck's record
                ex.tile_store(hbm, dst, l1, v["src"], rows, cols, stride, dt)
            if init is not None:       # initcheck's record of written HBM elements
                gm.init_mark_window(init, dst, rows, cols * item, stride * item)
        return store
    if not values:
        return lambda: None
    if fam == "tile_mma":
        return lambda: ex.tile_mma(l1, v["c"], v["a"], v["b"], v["m"], v["n"], v["k"], dt)
    if fam == "tile_alu":
        first = next((v[n] for n in ("a", "src", "base") if n in v), v["dst"])   # TEXPANDS: dst
        second = next((v[n] for n in ("b", "exp") if n in v), -1)
        use_scalar = "scalar" in v
        scalar = real["scalar"] if use_scalar else 0.0

        def run(dst, a, b, count):
            if "mode" in v:                                        # TCVT
                ex.tile_convert(l1, dst, a, count, dt, v["mode"])
            else:
                ex.tile_elementwise(op, l1, dst, a, b, scalar, use_scalar, count, dt)
        cols = v.get("cols", 0)
        if cols > 0:               # n / cols rows at each tile's pitch (isa/30_tiles.toml), in order
            ap = v["apitch"] if any(n in v for n in ("a", "src", "base")) else v["dpitch"]
            return lambda: _rows(v["n"] // cols, lambda r: run(
                v["dst"] + r * v["dpitch"], first + r * ap, second + r * v["bpitch"] if second >= 0 else -1,
                cols))
        return lambda: run(v["dst"], first, second, v["n"])
    roles = FAMILY_ROLES[fam]
    if roles.kernel is None:
        raise AssertionError(f"no tile effect for {spec.name}")
    kernel = getattr(ex, roles.kernel)
    argv = [_argument(token, spec, v, real, l1, op, dt) for token in roles.args]
    return lambda: kernel(*argv)


def _argument(token, spec, v, real, l1, op, dt):
    """One argument of a family's kernel (isa.tile_roles.KERNEL_TOKENS): an operand's integer
    value (-1 when the record has none), its real value (0.0), its presence, or a fixed one."""
    if token == "op":
        return op
    if token == "l1":
        return l1
    if token == "dt":
        return dt
    if token == "init":
        return reduction_identity(spec.init)
    if token.startswith("real:"):
        return real.get(token.removeprefix("real:"), 0.0)
    if token.startswith("has:"):
        return token.removeprefix("has:") in v
    return v.get(token, -1)


@functools.lru_cache(maxsize=None)
def reduction_identity(expr: str) -> float:
    """A reduction's identity: its ISA record's ``init`` expression (validated when the table
    loads), evaluated once per expression rather than at every executed instruction."""
    return float(eval(expr, {"np": np}))


def _rows(rows, one_row):
    """one_row(r) for each row r in order: an elementwise op over rows at their tiles' row
    pitches (its valid region). Row r reads only its own row, so row by row equals all rows at
    once even when dst and a source share words."""
    for r in range(rows):
        one_row(r)


def window(arr, base, rows, cols, pitch):
    """The rows x cols elements of arr from word base, rows pitch apart, as a numpy view."""
    if pitch == cols:
        return arr[base:base + rows * cols].reshape(rows, cols)
    return np.lib.stride_tricks.as_strided(arr[base:], (rows, cols), (pitch * arr.strides[0], arr.strides[0]))

