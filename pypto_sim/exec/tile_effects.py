"""A tile instruction's values as a closure over the executor module's kernels: the article's
tile API (timing/tiles.py runs it at the cycle the operation completes) and the AI core's
vector families (exec/aicore_tiles.py). ``ctx`` is anything with the launch's executor module
(``ex``), HBM words (``hbm``, ``hbm_init``), tensor bases (``tbase``), encoded program
(``enc``) and per-pc ISA records (``pc_spec``): the timing model or the functional runner."""
from __future__ import annotations

import math

import numpy as np

from ..ir.program import C_DTYPE, C_OP


def effect(ctx, pc, vals, slot, blk, l1=None, values=True):
    """The closure that computes tile instruction pc's values (run at its completion), on
    the block's L1 or, for an AI core's vector unit, on ``l1`` (its UB). values=False: a
    closure that computes nothing (a store still marks initcheck's written words)."""
    spec, ex, hbm = ctx.pc_spec[pc], ctx.ex, ctx.hbm
    l1 = blk.l1 if l1 is None else l1
    fam = spec.family
    dt = int(ctx.enc.code[pc, C_DTYPE])
    op = int(ctx.enc.code[pc, C_OP])
    # word addresses and sizes as ints; a tile-scalar op's scalar (read as a float below) may
    # be inf or NaN, which have no int
    iv = [int(v) if math.isfinite(v) else 0 for v in vals]
    if fam == "tile_load" and values:
        src = int(ctx.tbase[slot]) + iv[1]
        return lambda: ex.tile_load(l1, iv[0], hbm, src, iv[2], iv[3], iv[4])
    if fam == "tile_store":
        dst = int(ctx.tbase[slot]) + iv[0]
        init = ctx.hbm_init

        def store():
            if values:                 # values=False: only initcheck's record
                ex.tile_store(hbm, dst, l1, iv[1], iv[2], iv[3], iv[4], dt)
            if init is not None:       # initcheck's record of written HBM words
                for r in range(iv[2]):
                    init[dst + r * iv[4]: dst + r * iv[4] + iv[3]] = 1
        return store
    if not values:
        return lambda: None
    if fam == "tile_mma":
        return lambda: ex.tile_mma(l1, iv[0], iv[1], iv[2], iv[3], iv[4], iv[5], dt)
    if fam == "tile_alu":
        n_tiles = sum(1 for o in spec.value_operands if o.kind == "tile")
        if any(o.name == "mode" for o in spec.value_operands):      # dst, src, mode, n (TCVT)
            return lambda: ex.tile_convert(l1, iv[0], iv[1], iv[3], dt, iv[2])
        if n_tiles == 3:      # dst, a, b, n
            return lambda: ex.tile_elementwise(op, l1, iv[0], iv[1], iv[2], 0.0, False, iv[3], dt)
        if len(vals) == 4:    # dst, src, scalar, n
            scalar = float(vals[2])
            return lambda: ex.tile_elementwise(op, l1, iv[0], iv[1], -1, scalar, True, iv[3], dt)
        if n_tiles == 1:      # dst, scalar, n (TEXPANDS)
            scalar = float(vals[1])
            return lambda: ex.tile_elementwise(op, l1, iv[0], iv[0], -1, scalar, True, iv[2], dt)
        return lambda: ex.tile_elementwise(op, l1, iv[0], iv[1], -1, 0.0, False, iv[2], dt)
    if fam == "tile_reduce":
        init = float(eval(spec.init, {"np": np}))  # the table's identity, validated at load
        return lambda: ex.tile_row_reduce(op, l1, iv[0], iv[1], iv[2], iv[3], init, dt)
    if fam == "tile_col_reduce":
        init = float(eval(spec.init, {"np": np}))
        return lambda: ex.tile_col_reduce(op, l1, iv[0], iv[1], iv[2], iv[3], init, dt)
    if fam == "tile_col_expand_op":
        return lambda: ex.tile_col_expand_op(op, l1, iv[0], iv[1], iv[2], iv[3], iv[4], dt)
    if fam in ("tile_cmp", "tile_sel"):        # the operand after the tiles: b's tile or a scalar
        j = 2 if fam == "tile_cmp" else 3
        scalar = spec.value_operands[j].name == "scalar"
        s, other = (float(vals[j]), -1) if scalar else (0.0, iv[j])
        if fam == "tile_cmp":
            return lambda: ex.tile_cmp(op, l1, iv[0], iv[1], other, s, scalar, iv[3], iv[4], iv[5], iv[6], dt)
        return lambda: ex.tile_sel(op, l1, iv[0], iv[1], iv[2], other, s, scalar, iv[4], iv[5], iv[6], dt)
    if fam == "tile_tri":
        return lambda: ex.tile_tri(l1, iv[0], iv[1], iv[2], iv[3], iv[4])
    if fam == "tile_trans":
        return lambda: ex.tile_trans(l1, iv[0], iv[1], iv[2], iv[3], iv[4], iv[5])
    if fam in ("tile_row_arg", "tile_col_arg"):
        kernel = ex.tile_col_arg if fam == "tile_col_arg" else ex.tile_row_arg
        return lambda: kernel(op, l1, iv[0], iv[1], iv[2], iv[3], dt)
    if fam == "tile_fillpad":
        pad = float(vals[2])
        return lambda: ex.tile_fillpad(l1, iv[0], iv[1], pad, iv[3], iv[4], iv[5], iv[6], iv[7])
    if fam == "tile_expand_op":
        return lambda: ex.tile_row_expand_op(op, l1, iv[0], iv[1], iv[2], iv[3], iv[4], dt)
    if fam == "tile_expand":
        return lambda: ex.tile_row_expand(l1, iv[0], iv[1], iv[2], iv[3])
    if fam == "tile_col_expand":
        return lambda: ex.tile_col_expand(l1, iv[0], iv[1], iv[2], iv[3])
    raise AssertionError(f"no tile effect for {spec.name}")
