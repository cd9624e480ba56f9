"""The roofline of an AI-core kernel: its work (cube FLOPs, vector FLOPs, GM bytes) against the
machine's cube, vector and GM bandwidth roofs, and the roof that bounds it.

Work, from the profile's records and the kernel's instructions:

- cube FLOPs: 2 * m * n * k per matmul (TMATMUL*, TGEMV*), m, n and k its operands. When a
  shape is a run-time value the FLOPs are those of the 16 x k0 x 16 fractals the cube ran,
  recovered from the operation's cycles (latency + repeats * per_repeat): an upper bound
  (``cube_flops_exact`` is then False);
- vector FLOPs: one per element of every arithmetic tile operation on PIPE_V (the families
  of ``FLOP_FAMILIES``: elementwise ops and conversions, row / column reductions (per input
  element), broadcast ops, compares); data movement (expand, select, transpose, fill, a Vec to
  Vec TMOV) counts none;
- GM bytes: the bytes of every TLOAD, TSTORE and TSTORE_ACC (the elements moved, not the L2
  lines touched).

Roofs, for the AI cores the launch ran on, each derived from the machine table:

- cube: 2 * 16 * 16 * k0 FLOPs per ``per_repeat`` cycles per AI core, from TMATMUL's
  ``k_tile`` / ``per_repeat`` (float16/bfloat16; ``k_tile_f32`` / ``per_repeat_f32`` for
  float32; int8 doubles k0), for the narrowest matmul input dtype the kernel uses (float16 if
  it has no matmul);
- vector: the fastest rate the table gives an arithmetic op (the largest 1 / slope of the
  ``[formulas]`` rows, or 256-byte repeats of float16 per ``per_repeat`` cycles of an
  instruction entry, of the ``FLOP_FAMILIES`` ops) times ``vector_units`` (2 AIV) per AI core;
- GM bandwidth: the AI core's GM paths added up (``gm_to_l1`` + ``vector_units`` x
  (``gm_to_ub`` + ``ub_to_gm``) + ``l1_to_gm`` + the fixpipe's ``drain_bytes_per_cycle``)
  times the cores, capped by the chip's link (the L2's when the machine has one, since every
  transfer passes it; HBM's otherwise).

Each roof's time (``*_cycles_at_roof``) is the cycles the work needs at that roof on its
busiest resource, since work the kernel put on one unit cannot use another unit's share of a
roof: cube, the busiest AIC's FLOPs at one AI core's peak; vector, the busiest AIV's FLOPs at
one AIV's rate; GM, the bytes of the busiest (core, unit, path) at that path's bandwidth
(TLOAD on the AIC: ``gm_to_l1``, on an AIV: ``gm_to_ub``; TSTORE: ``l1_to_gm`` / ``ub_to_gm``;
TSTORE_ACC: ``drain_bytes_per_cycle``), or all bytes at the chip's link if that is longer.
The bound is the roof with the longest time, unless even that explains less than
``threshold`` (default half) of the kernel's cycles: then the kernel is far below every roof
and the bound is "latency/sync" (fixed latencies, flags and waits, not throughput, set its
time). ``roof_share`` is that longest time over the kernel's cycles.
"""
from __future__ import annotations

import numpy as np

from ..isa import PIPES, load_isa
from ..isa.tile_roles import FLOP_FAMILIES, FAMILY_ROLES, data_operand
from ..errors import ArgumentError
from .aicore_summary import UNITS as UNIT_NAMES
from ..timing import peaks
from .tables import RowTable

ROOFS = ("cube", "vector", "GM bandwidth")
LATENCY = "latency/sync"
FRACTAL = 16          # the cube's m and n granule (TMATMUL's repeats: ceil(m/16) * ceil(n/16))


def _tile_item(prog, ins, spec, operand) -> int:
    """Bytes per element of the typed tile named by operand ``operand`` of an instruction."""
    names = [o.name for o in spec.value_operands]
    src = ins.srcs[names.index(operand)] if operand in names else None
    slot = getattr(src, "tile", -1)
    if slot is not None and slot >= 0:
        return prog.buffers[slot].dtype.itemsize
    return ins.dtype.itemsize


def cube_granule(machine, name, item) -> tuple:
    """(k0, cycles per 16 x k0 x 16 repeat) of matmul ``name`` with ``item``-byte inputs."""
    if item == 4:
        return machine.cost_term(name, "k_tile_f32"), machine.cost_term(name, "per_repeat_f32")
    return machine.cost_term(name, "k_tile") * 2 // item, machine.cost_term(name, "per_repeat")


# the GM path of each transfer: (tile family, on the AIC, TSTORE_ACC) -> (name, machine entry)
GM_PATHS = {("tile_load", True, False): ("GM->L1", "gm_to_l1_bytes_per_cycle"),
            ("tile_load", False, False): ("GM->UB", "gm_to_ub_bytes_per_cycle"),
            ("tile_store", True, False): ("L1->GM", "l1_to_gm_bytes_per_cycle"),
            ("tile_store", False, False): ("UB->GM", "ub_to_gm_bytes_per_cycle"),
            ("tile_store", True, True): ("L0C->GM", "drain_bytes_per_cycle")}


def _add_by_unit(into: dict, rec, sel, weights, extra=()):
    """into[(core, unit, *extra)] += the weights of the records ``sel`` (a boolean mask)."""
    keys = rec.core[sel].astype(np.int64) * 4 + rec.warp[sel]
    uniq, inv = np.unique(keys, return_inverse=True)
    sums = np.bincount(inv, weights=np.broadcast_to(weights, keys.shape).astype(np.float64),
                       minlength=len(uniq))
    for key, total in zip(uniq.tolist(), sums.tolist()):
        k = (key // 4, key % 4, *extra)
        into[k] = into.get(k, 0) + int(round(total))


def kernel_work(prof) -> dict:
    """The kernel's work (module docstring): {"cube_flops", "cube_flops_exact",
    "vector_flops", "gm_bytes", "cube_item" (the narrowest matmul input's bytes; None: no
    matmul), "cube" and "vector" ({(core, unit): FLOPs}), "gm" ({(core, unit, path): bytes})}."""
    rec, prog, isa = prof.records, prof.program, load_isa()
    calls = np.bincount(rec.pc, minlength=len(prof.pc_name))
    work = {"cube_flops_exact": True, "cube_item": None, "cube": {}, "vector": {}, "gm": {}}
    vector = PIPES.index("vector")
    for pc in np.nonzero(calls)[0].tolist():
        name = prof.pc_name[pc].rsplit("+", 1)[-1]
        spec, ins = isa[name], prog.instrs[pc]
        on = rec.pc == pc
        if spec.family in ("tile_load", "tile_store"):
            for aic in (True, False):
                sel = on & ((rec.warp == 0) == aic)
                if sel.any():
                    path = GM_PATHS[(spec.family, aic, name == "TSTORE_ACC")][0]
                    _add_by_unit(work["gm"], rec, sel, rec.bytes[sel], (path,))
        elif spec.family == "tile_mma":
            item = _tile_item(prog, ins, spec, "a")
            work["cube_item"] = min(item, work["cube_item"] or item)
            shape = _static_shape(spec, ins)
            if shape is None:
                work["cube_flops_exact"] = False
            _add_by_unit(work["cube"], rec, on, _matmul_flops(prof, pc, spec, on, item, shape))
        elif computes(spec) and prof.pc_pipe_index(pc) == vector:
            roles = FAMILY_ROLES[spec.family]
            which = roles.dst if roles.shape == ("n",) else data_operand(spec)
            _add_by_unit(work["vector"], rec, on, rec.bytes[on] // _tile_item(prog, ins, spec, which))
    work["cube_flops"] = sum(work["cube"].values())
    work["vector_flops"] = sum(work["vector"].values())
    work["gm_bytes"] = sum(work["gm"].values())
    return work


def _static_shape(spec, ins):
    """(m, n, k) of a matmul when all three are immediates, else None."""
    names = [o.name for o in spec.value_operands]
    vals = [ins.srcs[names.index(k)] for k in ("m", "n", "k")]
    if all(type(v).__name__ == "Imm" for v in vals):
        return tuple(int(v.value) for v in vals)
    return None


def _matmul_flops(prof, pc, spec, on, item, shape):
    """FLOPs of each execution (records ``on``) of matmul pc: 2mnk, or (run-time shapes) those
    of the fractals its cycles show: (cycles - latency) / per_repeat repeats of 16 x k0 x 16."""
    if shape is not None:
        mm, nn, kk = shape
        return 2 * mm * nn * kk
    rec = prof.records
    k0, per = cube_granule(prof.machine, spec.name, item)
    cycles = rec.complete[on] - rec.issue[on] - prof.pc_latency(pc)
    repeats = np.floor(cycles / per + 1e-9).astype(np.int64)
    return 2 * FRACTAL * FRACTAL * k0 * repeats


def cycles_at_roofs(work, machine, roofs) -> dict:
    """{roof: (cycles, what binds)}: the cycles the work needs at each roof, on its busiest
    resource (work spread unevenly over the units cannot use the idle units' share of a roof):
    cube, the busiest AIC's FLOPs at one AI core's peak; vector, the busiest AIV's at one AIV's
    rate; GM, the busiest path's bytes at its bandwidth, or all bytes at the chip's link."""
    out = {}
    for roof, per_unit in (("cube", roofs["cube"]["per_unit"]), ("vector", roofs["vector"]["per_unit"])):
        if work[roof]:
            (core, unit), flops = max(work[roof].items(), key=lambda kv: kv[1])
            out[roof] = (flops / per_unit, f"core {core} {UNIT_NAMES[unit]}: {flops} FLOP at "
                                           f"{per_unit:.1f} FLOP/cycle")
        else:
            out[roof] = (0.0, "no work")
    paths = dict(GM_PATHS.values())
    best = (0.0, "no transfers")
    for (core, unit, path), nbytes in work["gm"].items():
        bw = getattr(machine, paths[path])
        if nbytes / bw > best[0]:
            best = (nbytes / bw, f"core {core} {UNIT_NAMES[unit]} {path}: {nbytes} B at {bw:g} B/cycle")
    link = roofs["GM bandwidth"]["link"]
    if work["gm_bytes"] / link > best[0]:
        best = (work["gm_bytes"] / link, f"the chip's link: {work['gm_bytes']} B at {link:g} B/cycle")
    out["GM bandwidth"] = best
    return out


def machine_roofs(machine, cores, cube_item=2) -> dict:
    """{roof: {"per_cycle" (FLOP or bytes per cycle, all ``cores``), "unit", "derivation"}}
    from the machine table (module docstring)."""
    k0, per = cube_granule(machine, "TMATMUL", cube_item)
    cube = 2 * FRACTAL * FRACTAL * k0 / per
    vec_rate, vec_from = _vector_rate(machine)
    units = machine.vector_units
    # every GM path of an AI core at once: the AIC's, and each AIV's
    per_core_bw = sum(getattr(machine, entry) * (1 if aic else units)
                      for (_fam, aic, _acc), (_path, entry) in GM_PATHS.items())
    link, link_name = ((machine.l2_chip_bytes_per_cycle, "l2_chip_bytes_per_cycle") if machine.has_l2
                       else (machine.hbm_chip_bytes_per_cycle, "hbm_chip_bytes_per_cycle"))
    bw = min(per_core_bw * cores, link)
    return {
        "cube": {"per_cycle": cube * cores, "per_unit": cube, "unit": "FLOP",
                 "derivation": f"TMATMUL: 2 x 16 x 16 x {k0} FLOPs per {per:g} cycle(s) per AI "
                               f"core ({cube_item}-byte inputs) x {cores} core(s)"},
        "vector": {"per_cycle": vec_rate * units * cores, "per_unit": vec_rate, "unit": "FLOP",
                   "derivation": f"{vec_from}: {vec_rate:.1f} elements per cycle per AIV x "
                                 f"{units} AIV x {cores} core(s)"},
        "GM bandwidth": {"per_cycle": bw, "link": link, "unit": "B",
                         "derivation": f"min({per_core_bw:.1f} B/cycle of GM paths per AI core x "
                                       f"{cores} core(s), {link_name} {link:g})"},
    }


def computes(spec) -> bool:
    """Whether a tile instruction does arithmetic (a FLOP per element): a FLOP_FAMILIES member
    that is not a bare copy - its value the source itself (float expression "a") with no
    rounding ``mode`` operand (TMOV_V2V; TCVT, whose value is also "a", converts by its mode)."""
    copy = (spec.float_expr or "").strip() == "a" and not any(
        op.name == "mode" for op in spec.operands)
    return spec.family in FLOP_FAMILIES and not copy


def _vector_rate(machine) -> tuple:
    """(elements per cycle, where it comes from) of the fastest vector op in the table."""
    specs = load_isa().by_name

    def arithmetic(name):
        spec = specs.get(name)
        return spec is not None and spec.pipe == "vector" and computes(spec)

    best, where = 0.0, "none"
    for (op, dtype, cols), (slope, _bias) in machine.vector_formulas.items():
        if arithmetic(op) and slope > 0 and 1 / slope > best:
            best, where = 1 / slope, f"[formulas] {op} {dtype} slope {slope:g} cycles/element"
    for name, t in machine.instructions.items():
        rb = t.extra.get("repeat_bytes")
        if not arithmetic(name) or not t.extra.get("per_repeat") or not rb:
            continue
        per = peaks.per_repeat(machine, name, "float16")
        rate = rb / 2 / per            # float16: the narrowest float the vector ops take
        if rate > best:
            best, where = rate, f"{name} {rb:g} B (float16) per {per:g} cycles"
    return best, where


def name_bound(cycles_at_roof: dict, total_cycles, threshold) -> str:
    """The roof whose time is longest, or "latency/sync" when it is under ``threshold`` of
    the kernel's cycles."""
    nearest = max(cycles_at_roof, key=lambda r: cycles_at_roof[r])
    if cycles_at_roof[nearest] < threshold * total_cycles:
        return LATENCY
    return nearest


class Roofline(RowTable):
    """The roofline of one launch (module docstring): a one-row read-only table (``to_pandas()``,
    ``json.dumps``); ``row`` is the row, ``roofs`` the roofs with their derivations; printing
    shows both and the bound."""

    WHAT = "roofline row"

    @classmethod
    def of(cls, prof, threshold=0.5) -> "Roofline":
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) \
                or not 0 < threshold <= 1:
            raise ArgumentError(f"roofline: threshold must be a number in (0, 1], not {threshold!r}",
                                hint="the share of the kernel's cycles the nearest roof must "
                                     "explain for the kernel to count as bound by it (default 0.5)")
        work = kernel_work(prof)
        cores = len(np.unique(prof.records.core))
        roofs = machine_roofs(prof.machine, max(cores, 1), work["cube_item"] or 2)
        total = max(int(prof.total_cycles), 1)
        hz = prof.machine.clock_ghz * 1e9
        flops = work["cube_flops"] + work["vector_flops"]
        binding = cycles_at_roofs(work, prof.machine, roofs)
        at_roof = {roof: binding[roof][0] for roof in ROOFS}
        for roof in ROOFS:
            roofs[roof]["binding"] = binding[roof][1]
        bound = name_bound(at_roof, total, threshold)
        nearest = max(at_roof, key=lambda r: at_roof[r])
        row = {"kernel": prof.kernel_name, "cores": cores, "total_cycles": total,
               "cube_flops": work["cube_flops"], "cube_flops_exact": work["cube_flops_exact"],
               "vector_flops": work["vector_flops"], "gm_bytes": work["gm_bytes"],
               "arithmetic_intensity": flops / work["gm_bytes"] if work["gm_bytes"] else None,
               "attained_gflops": flops / total * hz / 1e9,
               "cube_roof_gflops": roofs["cube"]["per_cycle"] * hz / 1e9,
               "vector_roof_gflops": roofs["vector"]["per_cycle"] * hz / 1e9,
               "gm_roof_gbps": roofs["GM bandwidth"]["per_cycle"] * hz / 1e9,
               "cube_cycles_at_roof": at_roof["cube"], "vector_cycles_at_roof": at_roof["vector"],
               "gm_cycles_at_roof": at_roof["GM bandwidth"],
               "roof_share": at_roof[nearest] / total, "bound": bound}
        table = cls([row])
        table.roofs = roofs
        table.threshold = threshold
        return table

    @property
    def row(self) -> dict:
        """The kernel's row."""
        return list.__getitem__(self, 0)

    @property
    def bound(self) -> str:
        """"cube", "vector", "GM bandwidth" or "latency/sync"."""
        return self.row["bound"]

    def __str__(self):
        r = self.row
        ai = "n/a" if r["arithmetic_intensity"] is None else f"{r['arithmetic_intensity']:.2f}"
        lines = [f"roofline of {r['kernel']} on {r['cores']} AI core(s): {r['total_cycles']} cycles",
                 f"  work: cube {r['cube_flops']} FLOP{'' if r['cube_flops_exact'] else ' (at most)'}, "
                 f"vector {r['vector_flops']} FLOP, GM {r['gm_bytes']} B; intensity {ai} FLOP/B",
                 f"  attained: {r['attained_gflops']:.1f} GFLOP/s",
                 f"  {'roof':12s} {'peak':>16s} {'cycles at roof':>15s} {'share':>7s}  busiest resource"]
        peaks = {"cube": f"{r['cube_roof_gflops']:.1f} GFLOP/s",
                 "vector": f"{r['vector_roof_gflops']:.1f} GFLOP/s",
                 "GM bandwidth": f"{r['gm_roof_gbps']:.1f} GB/s"}
        cycles = {"cube": r["cube_cycles_at_roof"], "vector": r["vector_cycles_at_roof"],
                  "GM bandwidth": r["gm_cycles_at_roof"]}
        for roof in ROOFS:
            lines.append(f"  {roof:12s} {peaks[roof]:>16s} {cycles[roof]:>15.1f} "
                         f"{100 * cycles[roof] / r['total_cycles']:>6.1f}%  "
                         f"{self.roofs[roof]['binding']}")
        lines.append("  roofs (machine table):")
        lines += [f"    {roof}: {self.roofs[roof]['derivation']}" for roof in ROOFS]
        lines.append(f"  bound: {r['bound']} (the nearest roof explains {100 * r['roof_share']:.1f}% "
                     f"of the cycles; under {100 * self.threshold:.0f}% is latency/sync)")
        return "\n".join(lines)

    __repr__ = __str__
