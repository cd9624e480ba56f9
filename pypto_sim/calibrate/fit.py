"""Fit latency-table entries to microbenchmark rows (kernels.py says what each one runs).

Every benchmark's rows give a straight line, cycles = a + b * size; its slope b is the cycles
one more measured instruction adds. Each entry follows from the slopes by the formula of its
kernel, in terms of g(X) = max(1, issue_interval(X)) and values fitted before it (or, when the
rows do not cover them, the base table's):

- issue_interval(X) = stream slope; latency(X) = chain slope (when it exceeds g(X); a latency
  below the issue interval only bounds it); ids: id_use slope - 1
- pipes.scalar: the same two slopes on uniform (scalar-unit) ADDs
- LOAD = chase slope - ceil(32 / read bandwidth); STORE = store_barrier slope - 1 - ceil(32 /
  write bandwidth); STORE_L1 = store_barrier slope - 1; LOAD_L1, FMA_STORE: chain slopes
- TLOAD, TSTORE and the HBM bandwidths: the chain slopes at several sizes follow
  latency + ceil(bytes / bandwidth) (+ 1 for TSTORE's wait_all) exactly (fitmath.ceil_fit);
  the chip's bandwidth from one TLOAD per core on every core
- MMA and vector tile ops: latency + ceil(repeats * per_repeat), repeats from the base table's
  k_tile / repeat_bytes
- BARRIER_BLOCK: stream slope max(latency, ii), barrier_gap slope max(latency + 1, ii)
- control instructions: the pattern formulas in :func:`_control`
- a TLOAD+MMA fusion: the pair's cost predicted from the fitted parts minus the measured one

Rows the model cannot produce are a CalibrationError naming them (:meth:`_Slopes.below`,
:meth:`_Slopes.falling`): a series whose cycles fall as its size grows, or a slope more than
ROUNDING below the least the model allows it (a stream's 1, a chain's issue interval, a
control pattern's other gaps plus 1); a slope up to ROUNDING below is the rounding of the
measurement, and the entry is fitted at its least value.
"""
from __future__ import annotations

import math
from collections import defaultdict

from ..exec.functional import BLOCK_BARRIERS
from .aicore_fit import fit_aicore
from .fitmath import ROUNDING, ceil_fit, linear_fit, reciprocal_interval, simplest_in
from .kernels import CTL_FILL, LOOP_FILL
from .rows import CalibrationError, check_row
from ..timing.machine import DEFAULT_MACHINE, resolve_machine

SECTOR = 32

# the least value each fitted field may take (the machine table's rules); any other field > 0
LEAST = {"latency": 0, "head": 0, "tail": 0, "unaligned_floor": 0, "saving": 0, "slope": 0,
         "bias": 0, "issue_interval": 1}
# ROUNDING (fitmath.py): how far below its least value a derived entry may come out and still
# be taken as the least, and a measured slope below the least the model allows it
_EPS = 1e-9                 # a least-squares slope's float error: exactly ROUNDING below is within
_SHOWN = 8                  # rows an error lists of one series


class Fitted(dict):
    """``{entry: {field: value}}`` for every entry the rows determine: instruction names
    (``ADD``: latency, issue_interval; ``MMA``, ``TADD``: also per_repeat...), ``pipes.scalar``,
    ``memory.<key>`` ({"value": ...}) and ``fusion.FIRST+SECOND`` ({"saving": ...}).
    ``unused``: (benchmark, instruction) pairs of the rows that no formula reads (a typo?) or
    that give no slope (all at one size), and ``unused_why[pair]`` says which.

    ``notes[entry]``: how each was derived; ``bounded[(entry, field)] = (lo, hi, chosen)`` for
    values the rows only bound (kept from the base table when it lies within, not written by
    write_table); ``constrained[(entry, field)] = (derived, taken)`` for values derived up to
    ROUNDING below the field's least value (LEAST) and taken as that least value (the
    constrained fit); ``base``: the machine the fit started from."""

    def __init__(self, base):
        super().__init__()
        self.base = base
        self.notes = defaultdict(list)
        self.bounded = {}
        self.constrained = {}
        self.unused = []            # (benchmark, instruction) series no formula reads
        self.unused_why = {}        # each of them -> why it was not used

    def put(self, name, fld, value, how, rounding=ROUNDING):
        """Set ``name.fld`` to value, derived as ``how`` says. A value below the field's least
        value by at most ``rounding`` (the rounding the derivation can carry: ROUNDING unless
        the caller knows of more) is the least value: the least-squares value of one entry
        under its constraint is the nearest feasible one, and within the rounding of the
        derivation the rows agree with it. A value further below is kept as derived, and
        write_table refuses it with its derivation."""
        least = LEAST.get(fld)
        if (least is not None and isinstance(value, (int, float)) and math.isfinite(value)
                and least - rounding <= value < least):
            self.constrained[(name, fld)] = (value, least)
            how = (f"{how} = {value}, within the rounding ({rounding:g} cycle{'s' * (rounding != 1)}) of its "
                   f"least value {least}: constrained to {least}")
            value = least
        self.setdefault(name, {})[fld] = value
        self.notes[name].append(f"{fld} {value}: {how}")

    def derivation(self, name, fld) -> str:
        """How ``name.fld`` was derived (the last note about it), or ''."""
        found = [n.split(": ", 1)[1] for n in self.notes.get(name, ()) if n.startswith(f"{fld} ")
                 and ": " in n]
        return found[-1] if found else ""

    def bound(self, name, fld, lo, hi, how):
        """The rows only bound this value: keep the base's when it lies within, else take the
        nearest bound (then it counts as fitted: the base value was contradicted)."""
        old = _base_value(self.base, name, fld)
        if old is not None and lo <= old <= hi:
            self.bounded[(name, fld)] = (lo, hi, old)
            self.notes[name].append(f"{fld} only bounded to [{lo}, {hi}] ({how}); keeping {old}")
            return
        chosen = lo if hi == math.inf else hi
        self.bounded[(name, fld)] = (lo, hi, chosen)
        self.put(name, fld, chosen, f"only bounded to [{lo}, {hi}] ({how}); the base's {old} is "
                                    f"outside, so the nearest bound")

    def report(self) -> str:
        """One line per fitted entry, then the bounded ones."""
        lines = [f"{name:40s} " + ", ".join(f"{k} = {v}" for k, v in fields.items())
                 for name, fields in self.items()]
        for (name, fld), (lo, hi, chosen) in self.bounded.items():
            lines.append(f"{name:40s} {fld} in [{lo}, {hi}]: not determined, "
                         + (f"set to {chosen}" if fld in self.get(name, {}) else f"kept {chosen}"))
        return "\n".join(lines)


def _base_value(base, name, fld):
    if base is None:
        return None
    if name == "pipes.scalar":
        return base.pipes["scalar"].get(fld)
    if name.startswith(("memory.", "aicore.")):
        return base.values.get(name.split(".", 1)[1])
    if name in base.instructions:
        t = base.instructions[name]
        return {"latency": t.latency, "issue_interval": t.issue_interval}.get(fld, t.extra.get(fld))
    return None


class _Slopes:
    """The slope of each (benchmark, instruction) series of rows, and the series whose slope
    contradicts the model (``refused``: series -> why), which fit refuses all at once."""

    def __init__(self, rows):
        self.series = defaultdict(list)
        self.used = set()
        self.one_size = set()       # series a formula read that have rows at one size only
        self.refused = {}           # series whose slope the model cannot produce -> why
        for r in rows:
            self.series[(r.benchmark, r.instruction)].append((r.size, float(r.cycles)))

    def rows_text(self, bench, instr) -> str:
        """The series' rows as an error shows them: ``the chain ADD rows (size 2: 481, ...
        cycles)``."""
        pts = sorted(self.series[(bench, instr)])
        shown = ", ".join(f"size {s}: {c:g}" for s, c in pts[:_SHOWN])
        more = f", ... ({len(pts)} rows)" if len(pts) > _SHOWN else ""
        return f"the {bench} {instr} rows ({shown}{more} cycles)"

    def below(self, bench, instr, b, bound, entry, rule) -> bool:
        """Whether slope ``b`` of the series is more than ROUNDING below ``bound``, the least
        slope the model allows it (``rule`` says why); if so the series is refused, naming
        ``entry``, the rows, the slope and the bound. Up to ROUNDING below is the rounding of
        the measurement: the caller fits the entry at its least value."""
        if b >= bound - ROUNDING - _EPS:
            return False
        self.refused[(bench, instr)] = (
            f"{entry}: {self.rows_text(bench, instr)} give a slope of {b:g} cycles per unit of size, "
            f"more than {ROUNDING} cycle below its least value {bound:g} ({rule})")
        return True

    def falling(self):
        """Refuse every series a formula read whose cycles fall as its size grows (its line
        drops by more than ROUNDING cycles from the smallest size to the largest): a kernel that
        repeats the measured instruction more, or moves more bytes, never takes less time."""
        for pair in sorted(self.used - set(self.refused) - self.one_size):
            pts = self.series.get(pair)
            sizes = [s for s, _ in pts or ()]
            if len(set(sizes)) < 2:
                continue
            b = linear_fit(sizes, [c for _, c in pts])[1]
            drop = -b * (max(sizes) - min(sizes))
            if drop > ROUNDING + _EPS:
                self.refused[pair] = (
                    f"{pair[0]} ({pair[1]}): {self.rows_text(*pair)} fall by {drop:g} cycles from size "
                    f"{min(sizes)} to size {max(sizes)} (a slope of {b:g}, below 0: cycles must not fall as "
                    "the size grows)")

    def __call__(self, bench, instr):
        self.used.add((bench, instr))
        pts = self.series.get((bench, instr))
        if not pts:
            return None
        if len({s for s, _ in pts}) < 2:
            self.one_size.add((bench, instr))
            return None
        return linear_fit([s for s, _ in pts], [c for _, c in pts])[1]

    def family(self, prefix, instr):
        """{parameter value: slope} of the benchmarks named ``prefix<value>`` for instr."""
        out = {}
        for bench, ins in self.series:
            if bench.startswith(prefix) and ins == instr:
                s = self(bench, ins)
                if s is not None:
                    out[int(bench[len(prefix):].split(".")[0])] = s
        return dict(sorted(out.items()))


def fit(rows, base=None) -> Fitted:
    """Fit table entries to microbenchmark rows; returns a :class:`Fitted` dict
    ``{name: {"latency": ..., "issue_interval": ...}, ...}``. ``base`` (a Machine, name or
    path; default the default machine) supplies the repeat geometry (k_tile, repeat_bytes),
    the sector size, and the values of entries the rows do not cover.

    Each row is checked first (rows.check_row: cycles a finite number > 0, size a whole
    number >= 1), a bad one a CalibrationError naming it. Series of rows that give no slope
    (all at one size) or that no formula reads are listed in ``unused`` (``unused_why`` says
    which); rows that determine no entry at all are a CalibrationError listing why.

    Rows the model cannot produce are a CalibrationError listing every such series with its
    rows, slope and bound: cycles that fall as a series' size grows (by more than ROUNDING
    from its smallest size to its largest), or a slope more than ROUNDING below its least
    value (a stream's or a DMA stream's 1, a chain's issue interval, a control pattern's other
    gaps plus 1, BARRIER_BLOCK's barrier_gap its stream slope). A slope up to ROUNDING below
    is fitted at the least value (``constrained`` lists it, or ``bounded`` for a chain)."""
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
        raise CalibrationError(f"fit: rows must be a list of Row, not {type(rows).__name__}",
                               hint="read them with read_rows(path) or run_microbenchmarks()")
    rows = [check_row(r, f"fit: row {i}") for i, r in enumerate(rows)]
    if not rows:
        raise CalibrationError("no rows to fit", hint="run pypto-sim microbench first")
    base = resolve_machine(base if base is not None else DEFAULT_MACHINE)
    F, S = Fitted(base), _Slopes(rows)

    def known(name, fld):
        v = F.get(name, {}).get(fld)
        if v is None and (name, fld) in F.bounded:
            v = F.bounded[(name, fld)][2]
        return v if v is not None else _base_value(base, name, fld)

    def g(name):
        return max(1, known(name, "issue_interval"))

    names = [n for n in base.instructions] + ["pipes.scalar"]
    measured = {}       # (entry, field) -> the slope it was rounded from (the control patterns read them)
    for name in names:                                   # issue intervals: independent streams
        b = S("stream", name)
        if b is not None and not S.below("stream", name, b, 1, f"{name}.issue_interval",
                                         "stream slope = the issue interval, at least 1"):
            F.put(name, "issue_interval", round(b), f"independent stream slope {b:g}")
            measured[(name, "issue_interval")] = b
    for name in names:                                   # latencies: dependent chains
        bench, b = "chain", S("chain", name)
        if b is None and (name == "LOAD_L1" or (name.startswith("ATOM_") and name.endswith("_L1"))):
            bench, b = "chase", S("chase", name)
        gi = g(name)
        whose = "fitted from the stream rows" if "issue_interval" in F.get(name, {}) else "the base table's"
        if b is not None and not S.below(bench, name, b, gi, f"{name}.latency",
                                         f"{bench} slope = max(latency, issue interval), and {name}'s issue "
                                         f"interval is {gi}, {whose}"):
            if round(b) > gi:
                F.put(name, "latency", round(b), f"dependent {bench} slope {b:g}")
                measured[(name, "latency")] = b
            else:
                F.bound(name, "latency", 0, gi, f"{bench} slope {b:g}, not above the issue interval {gi}: "
                                                "the latency hides behind it")
        b = S("id_use", name)
        if b is not None:
            F.put(name, "latency", round(b) - 1, f"id then a dependent ADD: slope {b:g} - 1")
    _bandwidth(F, S, base, known)
    eff_read = min(known("memory.hbm_core_read_bytes_per_cycle", "value"),
                   known("memory.hbm_chip_bytes_per_cycle", "value"))
    eff_write = min(known("memory.hbm_core_write_bytes_per_cycle", "value"),
                    known("memory.hbm_chip_bytes_per_cycle", "value"))
    sector = base.sector_bytes
    b = S("chase", "LOAD")
    if b is not None:
        xfer = math.ceil(sector / eff_read - 1e-9)
        F.put("LOAD", "latency", round(b) - xfer, f"pointer chase slope {b:g} - ceil({sector} B / {eff_read:g})")
    for name in [n for n in base.instructions if n.startswith("ATOM_") and not n.endswith("_L1")]:
        b = S("chase", name)
        if b is not None:                   # an HBM atomic returns like a load
            xfer = math.ceil(sector / eff_read - 1e-9)
            F.put(name, "latency", round(b) - xfer,
                  f"atomic pointer chase slope {b:g} - ceil({sector} B / {eff_read:g})")
    b = S("store_barrier", "STORE")
    if b is not None:
        xfer = math.ceil(sector / eff_write - 1e-9)
        F.put("STORE", "latency", round(b) - 1 - xfer,
              f"store + barrier slope {b:g} - 1 - ceil({sector} B / {eff_write:g})")
    b = S("store_barrier", "STORE_L1")
    if b is not None:
        F.put("STORE_L1", "latency", round(b) - 1, f"store + barrier slope {b:g} - 1")
    _barrier_block(F, S, g)
    _tiles(F, S, base, known)
    _control(F, S, g, known, measured)
    _fusion(F, S, base, known, eff_read)
    fit_aicore(F, S, base, known)
    S.falling()
    _refuse(S)
    _unused(F, S, len(rows))
    return F


def _refuse(S):
    """A CalibrationError listing every series whose slope the model cannot produce."""
    if not S.refused:
        return
    n = len(S.refused)
    raise CalibrationError(
        f"fit: the rows of {n} benchmark series contradict the timing model: " + "; ".join(S.refused.values()),
        hint="measure those rows again: cycles must not fall as a chain or stream grows (rows in the wrong "
             f"order?), and a slope may come out at most {ROUNDING} cycle below its least value, the rounding "
             "of the measurement (docs/calibration.md, \"Fitting\")")


def _unused(F, S, n_rows):
    """Record the series no formula could use, and why; rows that determine nothing (no entry
    fitted or bounded) are a CalibrationError saying why for each series."""
    for pair in S.one_size:
        sizes = sorted({s for s, _ in S.series[pair]})
        F.unused_why[pair] = (f"all {len(S.series[pair])} row(s) at size {sizes[0]}: a slope needs "
                              "rows at two sizes or more")
    for pair in set(S.series) - S.used:
        F.unused_why[pair] = "no formula reads this benchmark and instruction (a typo in a name?)"
    F.unused = sorted(F.unused_why)
    if not F and not F.bounded:
        why = "; ".join(f"{b} ({i}): {F.unused_why.get((b, i), 'gave no entry')}" for b, i in sorted(S.series))
        raise CalibrationError(f"fit: the {n_rows} row(s) determine no table entry: {why}",
                               hint="give each benchmark's rows at two sizes or more, with the benchmark and "
                                    "instruction names pypto-sim microbench writes (docs/calibration.md)")


def _bandwidth(F, S, base, known):
    """TLOAD / TSTORE latencies and the HBM bandwidths (module docstring)."""
    reads = S.family("tload_chain.bytes=", "TLOAD")
    s_read = None
    if len(reads) >= 2:
        res = ceil_fit(list(reads), [round(v) for v in reads.values()], prefer=known("TLOAD", "latency"))
        if res is not None:
            a, lo, hi = res
            s_read = (lo, hi)
            F.put("TLOAD", "latency", a, "TLOAD chain: latency + ceil(bytes / bandwidth), exact fit")
        else:
            a, b, _ = linear_fit(list(reads), list(reads.values()))
            s_read = (b, b)
            F.put("TLOAD", "latency", round(a), "TLOAD chain: least-squares intercept")
    key = ("load_strided.bytes=1024", "memory.hbm_core_read_bytes_per_cycle")
    strided = S.series.get(key)
    if strided:                      # lane loads of 32 sectors each, back to back: a cross-check
        S.used.add(key)
        res = ceil_fit([1024 * k for k, _ in strided], [c for _, c in strided])
        if res is not None:
            lane_bw = simplest_in(*reciprocal_interval(res[1], res[2]), True, False)
            if s_read is None:
                s_read = (res[1], res[2])
            else:
                agree = res[1] < s_read[1] and s_read[0] < res[2]
                F.notes["memory.hbm_core_read_bytes_per_cycle"].append(
                    f"lane loads of 1024 bytes stream at {lane_bw} bytes per cycle: "
                    + ("consistent with the TLOADs" if agree else "NOT consistent with the TLOADs"))
    writes = S.family("tstore_chain.bytes=", "TSTORE")
    s_write = None
    if len(writes) >= 2:
        res = ceil_fit(list(writes), [round(v) for v in writes.values()],
                       prefer=known("TSTORE", "latency") + 1)
        if res is not None:
            a, lo, hi = res
            s_write = (lo, hi)
            F.put("TSTORE", "latency", a - 1, "TSTORE + wait_all chain: latency + ceil(bytes / bw) + 1")
        else:
            a, b, _ = linear_fit(list(writes), list(writes.values()))
            s_write = (b, b)
            F.put("TSTORE", "latency", round(a) - 1, "TSTORE + wait_all chain: least-squares intercept - 1")
    chip = None
    for (bench, ins), pts in S.series.items():
        if not bench.startswith("tload_cores.cores="):
            continue
        S.used.add((bench, ins))
        n = int(bench.split("=")[1])
        res = ceil_fit([s for s, _ in pts], [c for _, c in pts])
        lo, hi = (res[1], res[2]) if res else (linear_fit([s for s, _ in pts], [c for _, c in pts])[1],) * 2
        if s_read is not None and lo >= s_read[1] * 1.0001:     # all cores slower than one: chip-bound
            c_lo, c_hi = reciprocal_interval(lo / n, hi / n)
            chip = simplest_in(c_lo, c_hi, True, False)
            F.put("memory.hbm_chip_bytes_per_cycle", "value", chip,
                  f"one TLOAD on each of {n} cores: {n} x bytes / extra cycles")
        elif s_read is not None:
            r_lo, _ = reciprocal_interval(*s_read)
            F.bound("memory.hbm_chip_bytes_per_cycle", "value", float(n * r_lo), math.inf,
                    f"{n} cores loading at once are no slower than one: the chip is not the limit")
    for key, s_iv, what in (("memory.hbm_core_read_bytes_per_cycle", s_read, "TLOAD"),
                            ("memory.hbm_core_write_bytes_per_cycle", s_write, "TSTORE")):
        if s_iv is None:
            continue
        b_lo, b_hi = reciprocal_interval(*s_iv) if s_iv[0] != s_iv[1] else (1 / s_iv[0],) * 2
        eff = simplest_in(b_lo, b_hi, True, False) if b_lo != b_hi else float(b_lo)
        if chip is not None and chip <= b_hi:
            F.bound(key, "value", float(chip), math.inf, f"one core's {what}s already run at the chip's rate")
        else:
            F.put(key, "value", eff, f"{what} chain at several sizes: bytes / extra cycles")




def _barrier_block(F, S, g):
    """Block barriers: the stream slope is max(latency, issue interval), the barrier_gap slope
    (one ADD after each barrier) max(latency + 1, issue interval)."""
    for name in BLOCK_BARRIERS:
        a, b = S("stream", name), S("barrier_gap", name)
        if a is None or b is None or ("stream", name) in S.refused:    # fit's loop refused the stream
            continue
        a = max(1, round(a))    # up to ROUNDING below 1 is 1 (fit's loop put it, constrained)
        if S.below("barrier_gap", name, b, a, f"{name}.latency",
                   f"barrier_gap slope = max(latency + 1, issue interval), at least the stream slope {a}"):
            continue
        b = round(b)
        # its stream slope is max(latency, issue interval), not the interval: redo the entry
        F.pop(name, None)
        F.notes.pop(name, None)
        if b == a + 1:      # latency >= issue interval: the latency shows, the interval is <= it
            F.put(name, "latency", a, f"stream slope {a}, one more with an ADD after each")
            if a == 1:
                F.put(name, "issue_interval", 1, "at most the latency 1")
            else:
                F.bound(name, "issue_interval", 1, a, "hidden behind the latency")
        else:               # the issue interval shows, the latency is below it
            F.put(name, "issue_interval", a, f"stream slope {a} = barrier_gap slope")
            F.bound(name, "latency", 0, a - 1, "hidden behind the issue interval")


def _ceil_entry(F, name, xs, ys, prefer, per_key, what):
    res = ceil_fit(xs, [round(y) for y in ys], prefer=prefer)
    if res is not None:
        a, lo, hi = res
        return a, simplest_in(lo, hi), f"{what}: latency + ceil(repeats x {per_key}), exact fit"
    a, b, _ = linear_fit(xs, ys)
    return round(a), round(b, 3), f"{what}: least squares"


def _tiles(F, S, base, known):
    for key, fld in (("tload_stream", "TLOAD"), ("tstore_stream", "TSTORE")):
        b = S(key, fld)
        if b is not None and not S.below(key, fld, b, 1, f"{fld}.issue_interval",
                                         f"{key} slope = the DMA issue interval, at least 1"):
            F.put(fld, "issue_interval", round(b), f"{key} slope {b:g} (32-byte requests)")
    lat = {}
    for dt, per_key, kt_key in (("float16", "per_repeat", "k_tile"), ("float32", "per_repeat_f32", "k_tile_f32")):
        fam = S.family(f"mma_chain.{dt}.k=", "MMA")
        if len(fam) < 2:
            continue
        kt = base.cost_term("MMA", kt_key)
        xs = [math.ceil(k / kt) for k in fam]
        a, per, how = _ceil_entry(F, "MMA", xs, list(fam.values()), known("MMA", "latency"), per_key,
                                  f"MMA chain, {dt} inputs")
        lat[dt] = a
        F.put("MMA", per_key, per, how)
    if lat:
        F.put("MMA", "latency", lat.get("float16", lat.get("float32")),
              "MMA chain head" + ("" if len(set(lat.values())) == 1 else f" (dtypes disagree: {lat})"))
    for name, t in base.instructions.items():
        if "repeat_bytes" not in t.extra:
            continue
        fam = S.family("tile_chain.bytes=", name)
        if len(fam) < 2:
            continue
        xs = [math.ceil(nb / t.extra["repeat_bytes"]) for nb in fam]
        a, per, how = _ceil_entry(F, name, xs, list(fam.values()), known(name, "latency"), "per_repeat",
                                  f"{name} chain")
        F.put(name, "latency", a, how)
        F.put(name, "per_repeat", per, how)


def _control(F, S, g, known, measured):
    """Control instructions' issue intervals from their patterns (kernels.py). Each slope is
    a sum of gaps: g(X) where X is followed by an instruction on the same (scalar) pipe, 1 where
    the next is a filler on another pipe, a latency where the next waits for a result.

    The other gaps are summed twice: from the table's entries (the issue interval is the slope
    less that sum) and with the slopes the stream and chain entries were rounded from in place
    of those entries (``measured``; a control instruction's interval is the table's). A slope
    more than ROUNDING below the measured sum + 1 contradicts the model (_Slopes.below); an
    interval the table's rounding alone puts further below 1 (ten fillers at a measured 1.5
    cycles are 20 in the table) is fitted at 1, that rounding added to ROUNDING."""
    m, big = CTL_FILL, LOOP_FILL

    def fills(g):
        return (m - 1) * g("ADD")

    def loop_body(g, lat):              # LT->BRK_UNLESS, the counter ADD and fillers, ENDLOOP->LT
        return lat("LT") + 3 + big * g("ADD")

    formulas = [   # (instruction, benchmark, the other gaps of the slope from g(X) and latency(X))
        ("IF", "ctl_if", lambda g, lat: g("pipes.scalar") + 2 + fills(g)),
        ("ENDIF", "ctl_endif", lambda g, lat: 2 + fills(g) + g("pipes.scalar")),
        ("ELSE", "ctl_else", lambda g, lat: 4 + 2 * fills(g)),
        ("LOOP_CONT", "ctl_loop_cont", loop_body),
        ("BRK_UNLESS", "ctl_brk_unless", lambda g, lat: loop_body(g, lat) + g("LOOP_CONT")),
        ("CONTINUE", "ctl_continue", lambda g, lat: loop_body(g, lat) + g("LOOP_CONT") + g("IF") + g("ENDIF")),
        ("RET", "ctl_ret", lambda g, lat: 1 + lat("EQ") + g("IF")),
        ("BREAK", "ctl_break", lambda g, lat: 4 + 2 * fills(g) + g("LOOP_CONT")),
        ("LOOP", "ctl_loop", lambda g, lat: 2 + fills(g) + g("BREAK") + g("LOOP_CONT")),
        ("ENDLOOP", "ctl_endloop", lambda g, lat: 2 + fills(g) + g("BREAK") + g("LOOP_CONT") + g("pipes.scalar")),
    ]

    def lat(name):
        return known(name, "latency")

    def g_measured(name):
        return measured.get((name, "issue_interval"), g(name))

    def lat_measured(name):
        return measured.get((name, "latency"), lat(name))

    for name, bench, rest in formulas:
        b = S(bench, name)
        if b is None:
            continue
        known_part, part = rest(g, lat), rest(g_measured, lat_measured)
        shown = f"{known_part}" if part == known_part else f"{part:g} as measured, {known_part} in the table"
        if S.below(bench, name, b, part + 1, f"{name}.issue_interval",
                   f"{bench} slope = the pattern's other gaps ({shown}) + the issue interval, at least 1"):
            continue
        F.put(name, "issue_interval", round(b - known_part), f"{bench} slope {b:g} - {known_part} (the pattern's "
              f"other gaps{'' if part == known_part else f'; {part:g} as measured'})",
              rounding=ROUNDING + max(0, known_part - part))


def _fusion(F, S, base, known, eff_read):
    b = S("fused_pair.bytes=1024", "TLOAD+MMA")
    if b is None:
        return
    kt, per = base.cost_term("MMA", "k_tile_f32"), known("MMA", "per_repeat_f32")
    mma = known("MMA", "latency") + math.ceil(math.ceil(16 / kt) * per - 1e-9)
    tload = known("TLOAD", "latency") + math.ceil(1024 / eff_read - 1e-9)
    saving = tload + mma - round(b)
    F.put("fusion.TLOAD+MMA", "saving", saving,
          f"TLOAD {tload} + MMA {mma} predicted, pair measured {b:g} cycles")
