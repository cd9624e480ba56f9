"""Fit the real AI core's entries to the rows of its microbenchmarks (aicore_kernels.py says
what each runs). Every benchmark gives a slope (the cost of its repeated pattern); the entries
follow from the slopes by the timing model's formulas (timing/aicore.py):

- the [aicore] bandwidths and the latencies of TEXTRACT, TMOV, TMOV_ACC: per family of sizes,
  slope = latency + ceil(bytes / bandwidth), fitted exactly (fitmath.ceil_fit); the TLOAD /
  TSTORE intercepts are checked against those instructions' latencies (a note, not a refit:
  the lane benchmarks own those entries)
- TMATMUL*: latency + ceil(per_repeat x ceil(K / k0)) over K, per input dtype
- the fixpipe drain (TSTORE_ACC): at 16 columns (one row costs drain_row) the rows give
  drain_fixed and drain_row, at 256 columns (4 C / drain_bw > drain_row) the bandwidth, at 48
  columns (odd(ceil(48 / 8)) = 3 fractal blocks) the penalty
- each vector op without a formula row: per_repeat from the chain over rows (less the table's
  per_row a row: a row reduction's reducing repeat, which one width cannot tell apart), the unaligned
  floor from rows of 3/4 of a repeat, the head from the refill pattern (slope - cost - the
  TLOAD, whose cost the TLOAD rows fitted) and the tail from the sync pattern (slope - head -
  cost)
- each [formulas] row: (slope, bias) such that round(slope x rows x cols + bias) gives the
  measured cycles at both row counts (the slope with the fewest decimals that does)
"""
from __future__ import annotations

import math
from fractions import Fraction

from .aicore_kernels import (FIX_SHAPES, chain_rows, unaligned_cols, ITEMSIZE, MATMUL_K, SYNC_ROWS, chain_cols,
                             op_dtype, vector_specs)
from .fitmath import ROUNDING, ceil_fit, linear_fit, reciprocal_interval, simplest_in

TRANSFERS = (   # benchmark prefix, [aicore] key, the instruction whose latency the intercept is
    ("aic_tload.to=Mat.bytes=", "gm_to_l1_bytes_per_cycle", "TLOAD", False),
    ("aiv_tload.to=Vec.bytes=", "gm_to_ub_bytes_per_cycle", "TLOAD", False),
    ("aic_tstore.from=Mat.bytes=", "l1_to_gm_bytes_per_cycle", "TSTORE", False),
    ("aiv_tstore.from=Vec.bytes=", "ub_to_gm_bytes_per_cycle", "TSTORE", False),
    ("aic_textract.to=Left.bytes=", "l1_to_l0a_bytes_per_cycle", "TEXTRACT", True),
    ("aic_textract.to=Right.bytes=", "l1_to_l0b_bytes_per_cycle", "TEXTRACT", True),
    ("aic_textract.to=Bias.bytes=", "l1_to_bias_bytes_per_cycle", "TEXTRACT", True),
    ("aic_tmov.to=Left.bytes=", "l1_to_l0a_bytes_per_cycle", "TMOV", True),
    ("aic_tmov_acc.bytes=", "l0c_to_l1_bytes_per_cycle", "TMOV_ACC", True),
)


def _family(S, prefix):
    """{parameter: slope} of the benchmarks named prefix<int>, whatever they measure."""
    out = {}
    for bench, ins in list(S.series):
        if bench.startswith(prefix):
            rest = bench[len(prefix):]
            if rest.isdigit():
                s = S(bench, ins)
                if s is not None:
                    out[int(rest)] = s
    return dict(sorted(out.items()))


def fit_aicore(F, S, base, known):
    """Add the AI core's entries to the Fitted F from the slopes S (fit.py's _Slopes)."""
    if not base.has_aicore:
        return
    _transfers(F, S, known)
    _matmul(F, S, base, known)
    _drain(F, S, known)
    _vector(F, S, base, known)
    _formulas(F, S, base)


def _transfers(F, S, known):
    for prefix, key, instr, owns_latency in TRANSFERS:
        fam = _family(S, prefix)
        if len(fam) < 2:
            continue
        res = ceil_fit(list(fam), [round(v) for v in fam.values()], prefer=known(instr, "latency"))
        entry = f"aicore.{key}"
        if res is None:
            a, b, _ = linear_fit(list(fam), list(fam.values()))
            bw, how = round(1 / b, 3), f"{prefix}*: least squares (the rows are not exact)"
        else:
            a, lo, hi = res
            bw = simplest_in(*reciprocal_interval(lo, hi), True, False)
            how = f"{prefix}*: latency + ceil(bytes / bandwidth), exact fit"
        a = round(a)
        if entry in F:                 # TMOV Mat -> Left cross-checks TEXTRACT's bandwidth
            F.notes[entry].append(f"{prefix}* streams at {bw} bytes per cycle: " + (
                "consistent" if F[entry]["value"] == bw else f"NOT consistent with {F[entry]['value']}"))
        else:
            F.put(entry, "value", float(bw), how)
        if owns_latency:
            if instr in F and F[instr].get("latency") not in (None, a):
                F.notes[instr].append(f"{prefix}* gives latency {a}, not {F[instr]['latency']}")
            else:
                F.put(instr, "latency", a, how)
        else:
            lat = known(instr, "latency")
            F.notes[entry].append(f"{prefix}* intercept {a}: " + (
                f"consistent with {instr} latency {lat}" if a == lat else
                f"NOT consistent with {instr} latency {lat} (the lane benchmarks fit that entry)"))


def _matmul(F, S, base, known):
    for (name, dt), ks in MATMUL_K.items():
        fam = {k: S(f"aic_matmul.{name}.{dt}.k={k}", name) for k in ks}
        fam = {k: v for k, v in fam.items() if v is not None}
        if len(fam) < 2:
            continue
        item = ITEMSIZE[dt]
        k0 = base.cost_term(name, "k_tile") * 2 // item if item <= 2 else base.cost_term(name, "k_tile_f32")
        per_key = "per_repeat_f32" if item == 4 else "per_repeat"
        xs = [math.ceil(k / k0) for k in fam]
        res = ceil_fit(xs, [round(v) for v in fam.values()], prefer=known(name, "latency"))
        if res is None:
            a, b, _ = linear_fit(xs, list(fam.values()))
            a, per, how = round(a), round(b, 3), f"{name} {dt} chain over K: least squares"
        else:
            a, lo, hi = res
            per, how = simplest_in(lo, hi), f"{name} {dt} chain over K: head + ceil(repeats x {per_key}), exact fit"
        F.put(name, per_key, per, how)
        if dt == "float16" or "latency" not in F.get(name, {}):
            F.put(name, "latency", a, how)


def _interval(S, cols, rows_set):
    """(intercept, (lo, hi]) of the per-row cost at ``cols`` from the aic_fix rows."""
    fam = {r: S(f"aic_fix.cols={cols}.rows={r}", "TSTORE_ACC") for r in rows_set}
    fam = {r: v for r, v in fam.items() if v is not None}
    if len(fam) < 2:
        return None
    res = ceil_fit(list(fam), [round(v) for v in fam.values()])
    if res is None:
        a, b, _ = linear_fit(list(fam), list(fam.values()))
        return a, (Fraction(b), Fraction(b)), False
    a, lo, hi = res
    return a, (lo, hi), True


def _drain(F, S, known):
    """FIXPIPE drain = drain_fixed + rows x per_row (exec/compiled/aicore_steps.py tile_dispatch)."""
    narrow = _interval(S, 16, FIX_SHAPES[16])
    if narrow is None:
        return
    a, (lo, hi), exact = narrow
    lat = known("TSTORE_ACC", "latency")
    row = simplest_in(lo, hi) if exact else round(float(lo), 3)
    how = "TSTORE_ACC rows at 16 columns: latency + drain_fixed + ceil(rows x drain_row)"
    F.put("aicore.drain_fixed_cycles", "value", float(a - lat), how + f" (less the latency {lat})")
    F.put("aicore.drain_row_cycles", "value", float(row), how)
    wide = _interval(S, 256, FIX_SHAPES[256])
    bw = known("aicore.drain_bytes_per_cycle", "value")
    if wide is not None:
        _, (wlo, whi), _ = wide
        if wlo > Fraction(row):          # bandwidth-bound rows: 1024 bytes a row
            b_lo, b_hi = reciprocal_interval(wlo / 1024, whi / 1024)
            bw = simplest_in(b_lo, b_hi, True, False)
            F.put("aicore.drain_bytes_per_cycle", "value", float(bw),
                  "TSTORE_ACC rows at 256 float32 columns: 1024 bytes a row / drain_bytes_per_cycle")
        else:
            F.bound("aicore.drain_bytes_per_cycle", "value", 1024 / float(row), math.inf,
                    "rows of 1024 bytes cost no more than drain_row")
    odd = _interval(S, 48, FIX_SHAPES[48])
    if odd is not None:
        _, (olo, ohi), exact = odd
        base_row = max(Fraction(row), Fraction(192) / Fraction(str(bw)))
        pen = simplest_in((olo - base_row) / 2, (ohi - base_row) / 2) if exact else round(float(olo - base_row) / 2, 3)
        F.put("aicore.drain_penalty_cycles", "value", float(pen),
              "TSTORE_ACC rows at 48 columns (3 odd fractal blocks): (per row - drain_row) / 2")


def _vector(F, S, base, known):
    bw_ub = known("aicore.gm_to_ub_bytes_per_cycle", "value")
    tload = known("TLOAD", "latency")
    for spec in vector_specs():
        name, dt = spec.name, op_dtype(spec)
        cols = chain_cols(base, spec, dt)
        t = base.instructions.get(name)
        if cols is None or t is None or "repeat_bytes" not in t.extra:
            continue
        rb = t.extra["repeat_bytes"]
        reps_a_row = cols * ITEMSIZE[dt] // rb
        # per_row (a row reduction's reducing repeat) comes from the base table: chains at one
        # width measure per_repeat x repeats + per_row x rows as one slope a repeat
        pr = Fraction(str(t.extra.get("per_row", 0)))
        shift = pr / reps_a_row
        fam = {r: S(f"aiv_chain.{name}.rows={r}", name) for r in chain_rows(cols, dt)}
        fam = {r * reps_a_row: v for r, v in fam.items() if v is not None}
        if len(fam) < 2:
            continue
        res = ceil_fit(list(fam), [round(v) for v in fam.values()], prefer=0)
        if res is None:
            a, b, _ = linear_fit(list(fam), list(fam.values()))
            per = round(b - float(shift), 3)
            F.put(name, "per_repeat", per, "AI-core chain over rows: least squares")
        else:
            a, lo, hi = res
            per = simplest_in(lo - shift, hi - shift)
            F.put(name, "per_repeat", per, "AI-core chain over rows: ceil(repeats x per_repeat + rows x "
                                           "per_row), exact fit")

        def cost_of(reps, rows):
            return int(math.ceil(reps * per + rows * float(pr) - 1e-9))

        cost = cost_of(SYNC_ROWS * reps_a_row, SYNC_ROWS)
        ucols = unaligned_cols(base, spec, dt, cols)
        un = S(f"aiv_unaligned.{name}.cols={ucols}", name) if ucols else None
        if un is not None:
            ureps = SYNC_ROWS * -(-ucols * ITEMSIZE[dt] // rb)
            floor = round(un) - cost_of(ureps, SYNC_ROWS)
            if floor or "unaligned_floor" in t.extra:
                F.put(name, "unaligned_floor", floor, f"rows of 3/4 of a repeat: slope {un:g} - the repeats' cost")
        refill, sync = S(f"aiv_refill.{name}", name), S(f"aiv_sync.{name}", name)
        if refill is not None:
            load = tload + int(math.ceil(SYNC_ROWS * cols * ITEMSIZE[dt] / bw_ub - 1e-9))
            F.put(name, "head", round(refill) - cost - load, f"refill slope {refill:g} - cost {cost} - TLOAD {load}")
            head = F[name]["head"]      # the tail follows from the head as fitted (constrained)
            if sync is not None:
                F.put(name, "tail", round(sync) - head - cost,
                      f"sync slope {sync:g} - head {head} - cost {cost}")
            if min(F[name]["head"], F[name].get("tail", 0)) < 0:
                F.notes[name].append("NEGATIVE head or tail: the rows contradict the model (a head "
                                     "paid when V is empty, the tail at a sync); check the kernels")


def round_fit(ns, ys, max_digits=6):
    """(slope, bias) such that round(slope * n + bias) = y at every point (pto-isa's formula
    rounding): the slope with the fewest decimals for which a bias exists (nearest the
    least-squares slope among those), and the simplest such bias; least squares when no
    slope of up to max_digits decimals reproduces every point (noisy rows)."""
    pts = sorted((Fraction(n), Fraction(round(y))) for n, y in zip(ns, ys))
    a_ls, b_ls, _ = linear_fit([float(n) for n, _ in pts], [float(y) for _, y in pts])
    lo, hi = Fraction(-10 ** 9), Fraction(10 ** 9)
    for (n1, y1), (n2, y2) in zip(pts, pts[1:]):
        if n2 != n1:                     # necessary: |slope x (n2 - n1) - (y2 - y1)| < 1
            lo, hi = max(lo, (y2 - y1 - 1) / (n2 - n1)), min(hi, (y2 - y1 + 1) / (n2 - n1))

    def bias_range(s):
        return (max(y - Fraction(1, 2) - s * n for n, y in pts),
                min(y + Fraction(1, 2) - s * n for n, y in pts))

    if lo < hi:
        for digits in range(max_digits + 1):
            scale = 10 ** digits
            found = []
            for k in range(math.floor(lo * scale), math.ceil(hi * scale) + 1):
                s = Fraction(k, scale)
                b_lo, b_hi = bias_range(s)
                if lo < s < hi and b_lo < b_hi:
                    found.append((abs(s - Fraction(b_ls)), s, b_lo, b_hi))
            if found:
                _, s, b_lo, b_hi = min(found)
                return float(s), float(simplest_in(b_lo, b_hi, True, False))
    return round(b_ls, 6), round(a_ls, 4)


def _formulas(F, S, base):
    """Each [formulas] row the aiv_formula rows cover: (slope, bias) by round_fit. A slope below 0
    is fitted at 0 when the rows fall by at most ROUNDING cycles over their elements; rows that
    fall further leave it as derived, and write_table refuses it."""
    for key in base.vector_formulas:
        name, dtype, cols = key
        instr = f"formula.{name}.{dtype}.{cols}"
        prefix = f"aiv_formula.{name}.{dtype}.cols={cols}.rows="
        fam = _family(S, prefix)
        if len(fam) < 2:
            continue
        c = 64 if cols == "*" else int(cols)
        ns, ys = [r * c for r in fam], list(fam.values())
        slope, bias = round_fit(ns, ys)
        # the slope is cycles an element: below 0 it is the rounding when the rows fall by at most
        # ROUNDING cycles over their elements (not when it is at most ROUNDING cycles an element)
        drop = -linear_fit(ns, ys)[1] * (max(ns) - min(ns))
        how = f"rows {list(fam)} at {c} columns: round(slope x elements + bias)"
        if slope < 0:
            how += f" (the rows fall by {drop:g} cycles over {max(ns) - min(ns)} elements)"
        F.put(instr, "slope", slope, how, rounding=-slope if slope < 0 and drop <= ROUNDING + 1e-9 else 0)
        F.put(instr, "bias", bias, "idem")
