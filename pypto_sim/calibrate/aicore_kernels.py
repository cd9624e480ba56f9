"""The real AI core's microbenchmarks (docs/calibration.md, "The AI core"), as generated PTO
source: AI-core kernels with typed tiles, one block, ``bench(af, ai, o, n, z)`` like the lane
benchmarks (af / o float32 and ai int32 GM tensors of kernels.TENSOR_ELEMS elements; n and z
unused). ``size`` is how many times the measured pattern repeats; the slope of the kernel's
cycles against it is the pattern's cost, and aicore_fit.py turns the slopes into entries:

- ``aic_tload.to=Mat.bytes=B`` / ``aiv_tload.to=Vec.bytes=B``: TLOADs of B bytes into one
  tile (MTE2, in order): TLOAD latency + ceil(B / gm_to_l1 | gm_to_ub bandwidth)
- ``aic_tstore.from=Mat.bytes=B`` / ``aiv_tstore.from=Vec.bytes=B``: TSTOREs (MTE3): TSTORE
  latency + ceil(B / l1_to_gm | ub_to_gm bandwidth)
- ``aic_textract.to=Left|Right|Bias.bytes=B``, ``aic_tmov.to=Left.bytes=B``: MTE1 copies out
  of L1: latency + ceil(B / l1_to_l0a | l1_to_l0b | l1_to_bias bandwidth)
- ``aic_tmov_acc.bytes=B``: TMOV Acc -> Mat (FIX): latency + ceil(B / l0c_to_l1 bandwidth)
- ``aic_matmul.INSTR.DTYPE.k=K``: 16 x K x 16 matmuls into one Acc (M): latency +
  ceil(per_repeat x ceil(K / k0)), k0 = 32 bytes of the input dtype
- ``aic_fix.cols=C.rows=R``: TSTOREs of an R x C float32 Acc tile (FIX): the fixpipe drain
  drain_fixed + R x (max(drain_row, 4 C / drain_bw) + drain_penalty x (odd(ceil(C / 8)) - 1))
- vector ops on an AIV, a tile of R rows of the op's ``cols`` (chosen so that no [formulas]
  row prices it; its row is a whole number of 256-byte repeats):
  ``aiv_chain.OP.rows=R``: ops queued back to back: ceil(repeats x per_repeat + R x per_row);
  ``aiv_unaligned.OP.cols=C``: the same with rows that are not whole repeats: +
  unaligned_floor;
  ``aiv_sync.OP``: (op; pipe_barrier(PIPE_V)): head + cost + tail (the sync pays the tail and
  empties V, so the next op pays the head);
  ``aiv_refill.OP``: (op; TLOAD of a tile the op reads): the next op waits for the load and
  finds V empty: head + cost + the TLOAD
- ``aiv_formula.OP.DTYPE.cols=C.rows=R``: one [formulas] row's op queued back to back:
  round(slope x R x C + bias)

Only block 0's first AIV (or the AIC) runs the measured pattern; the other AIV does nothing.
"""
from __future__ import annotations

import ast

from .kernels import Bench
from .rows import CalibrationError
from ..isa import VECTOR_FAMILIES, load_isa
from ..isa.tile_roles import FAMILY_ROLES, data_operand
from ..timing.machine import machine as active, resolve_machine

AIC_SIZES = (1, 2, 3)
AIV_SIZES = (1, 2)
MAT_BYTES = (8192, 32768, 131072)        # float32 rows of 128: 16, 64, 256 rows (Mat boxes are 16 rows)
VEC_BYTES = (512, 8192, 32768)
# the byte counts of each copy differ in their fractional parts, so that together they pin the
# bandwidth down to its table value (each gives an interval, ceil_fit intersects them)
L0_SHAPES = tuple((16, c) for c in range(16, 2049, 128))   # float16, 512 B to 64 KiB
BIAS_BYTES = tuple(range(32, 1025, 32))                    # one float32 row (32-byte rows)
ACC_SHAPES = ((16, 16), (64, 64), (80, 96), (128, 128))               # float32, up to 64 KiB
MATMUL_K = {("TMATMUL", "float16"): (16, 64, 256, 512), ("TMATMUL", "float32"): (16, 64, 256, 512),
            ("TMATMUL_ACC", "float16"): (16, 64, 256), ("TMATMUL_BIAS", "float16"): (16, 64, 256),
            ("TGEMV", "float16"): (16, 64, 256), ("TGEMV", "float32"): (16, 64, 256),
            ("TGEMV_ACC", "float16"): (16, 64, 256), ("TGEMV_BIAS", "float16"): (16, 64, 256)}
FIX_SHAPES = {16: (16, 64, 128), 256: tuple(range(16, 129, 16)), 48: (16, 64, 128)}   # cols: rows
CHAIN_ROWS = (1, 8, 32)           # and the most rows that keep a tile within CHAIN_TILE_BYTES
CHAIN_TILE_BYTES = 49152
SYNC_ROWS = 8
ITEMSIZE = {"float32": 4, "float16": 2, "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bfloat16": 2}


def _side(unit, body) -> list:
    """``body`` (lines) on the AIC (``unit == "cube"``) or on the first AIV only."""
    if unit == "cube":
        return ["with pto.cube():"] + [f"    {s}" for s in body]
    return ["with pto.vector():", "    if pto.get_subblock_id() == 0:"] + [f"        {s}" for s in body]


def _bench(name, instruction, unit, setup, pattern, count, sizes=AIC_SIZES):
    """A benchmark that repeats ``pattern`` (lines) ``size`` times after ``setup`` (lines)."""
    return Bench(name, instruction, sizes,
                 lambda k: (["\n".join(_side(unit, list(setup) + list(pattern) * k))], None),
                 lane=False, count=count)


def _alloc(name, rows, cols, dtype, loc, col_major=False, valid=None):
    layout = ", layout=pto.ColMajor" if col_major else ""
    valid = f", valid={valid}" if valid else ""
    return f"{name} = pto.alloc_tile({rows}, {cols}, pto.{dtype}, loc=pto.{loc}{layout}{valid})"


def transfer_benches() -> list:
    """TLOAD / TSTORE on the AI core, the MTE1 and FIX copies, TMATMUL and the fixpipe drain."""
    out = []
    for loc, unit, sizes, tag in (("Mat", "cube", MAT_BYTES, "aic"), ("Vec", "vector", VEC_BYTES, "aiv")):
        key = "gm_to_l1" if loc == "Mat" else "gm_to_ub"
        for nb in sizes:
            t = _alloc("t", nb // 512, 128, "float32", loc)
            out.append(_bench(f"{tag}_tload.to={loc}.bytes={nb}", f"aicore.{key}_bytes_per_cycle", unit,
                              [t], ["pto.tload(t, af)"], "TLOAD"))
        key = "l1_to_gm" if loc == "Mat" else "ub_to_gm"
        for nb in sizes:
            t = _alloc("t", nb // 512, 128, "float32", loc)
            out.append(_bench(f"{tag}_tstore.from={loc}.bytes={nb}", f"aicore.{key}_bytes_per_cycle", unit,
                              [t], ["pto.tstore(o, t)"], "TSTORE"))
    for loc, key in (("Left", "l1_to_l0a"), ("Right", "l1_to_l0b")):
        for r, c in L0_SHAPES:
            out.append(_bench(f"aic_textract.to={loc}.bytes={2 * r * c}", f"aicore.{key}_bytes_per_cycle", "cube",
                              [_alloc("s", r, c, "float16", "Mat"), _alloc("d", r, c, "float16", loc)],
                              ["pto.textract(d, s)"], "TEXTRACT"))
    for nb in BIAS_BYTES:
        out.append(_bench(f"aic_textract.to=Bias.bytes={nb}", "aicore.l1_to_bias_bytes_per_cycle", "cube",
                          [_alloc("s", 16, 256, "float32", "Mat"), _alloc("d", 1, nb // 4, "float32", "Bias")],
                          ["pto.textract(d, s)"], "TEXTRACT"))
    for r, c in L0_SHAPES:
        out.append(_bench(f"aic_tmov.to=Left.bytes={2 * r * c}", "TMOV", "cube",
                          [_alloc("s", r, c, "float16", "Mat"), _alloc("d", r, c, "float16", "Left")],
                          ["pto.tmov(d, s)"], "TMOV"))
    for r, c in ACC_SHAPES:
        out.append(_bench(f"aic_tmov_acc.bytes={4 * r * c}", "aicore.l0c_to_l1_bytes_per_cycle", "cube",
                          [_alloc("s", r, c, "float32", "Acc"), _alloc("d", r, c, "float32", "Mat")],
                          ["pto.tmov(d, s)"], "TMOV_ACC"))
    for (name, dt), ks in MATMUL_K.items():
        for k in ks:
            gemv = name.startswith("TGEMV")                 # one row of left: m = 1
            setup = [_alloc("c", 16, 16, "float32", "Acc"),
                     _alloc("a", 16, k, dt, "Left", valid=(1, k) if gemv else None),
                     _alloc("b", k, 16, dt, "Right")]
            call = f"pto.{name.lower()}(c, a, b)"
            if name.endswith("_BIAS"):
                setup.append(_alloc("bias", 1, 16, "float32", "Bias"))
                call = f"pto.{name.lower()}(c, a, b, bias)"
            out.append(_bench(f"aic_matmul.{name}.{dt}.k={k}", name, "cube", setup, [call], name))
    for cols, rows_set in FIX_SHAPES.items():
        for rows in rows_set:
            out.append(_bench(f"aic_fix.cols={cols}.rows={rows}", "TSTORE_ACC", "cube",
                              [_alloc("c", rows, cols, "float32", "Acc")], ["pto.tstore(o, c)"], "TSTORE_ACC"))
    return out


def vector_specs():
    """The ISA records of the ops the AI core's V pipe runs (TCVT and the mask ops included),
    except those of a family whose ops cannot be chained over rows like the rest
    (FamilyRoles.unchainable: the sort family, whose merges take one row of sorted blocks):
    their entries are not measured (unchainable_specs). A vector family's record on another
    pipe (TEXPANDS_MAT: the cube core's Mat fill on MTE2) is not a V op."""
    return [s for s in load_isa().specs
            if s.family in VECTOR_FAMILIES and s.pipe == "vector" and not FAMILY_ROLES[s.family].unchainable]


def unchainable_specs():
    """The vector records vector_specs leaves out, each with its family's reason:
    [(spec, why), ...]."""
    return [(s, FAMILY_ROLES[s.family].unchainable) for s in load_isa().specs
            if s.family in VECTOR_FAMILIES and FAMILY_ROLES[s.family].unchainable]


def op_dtype(spec) -> str:
    """The dtype the benchmarks run an op in: float32 when it takes it, else int32, else its first."""
    for dt in ("float32", "int32"):
        if dt in spec.dtypes:
            return dt
    return spec.dtypes[0]


# the benchmarks' tile variables by operand shape (tile_roles.OPERAND_SHAPES), in the order a
# kernel allocates them: the op's data tile is "big" (the refill benchmark TLOADs into it)
_TILE_NAMES = {"tile": ("big", "other"), "col": ("col",), "row": ("row",), "mask": ("mask",), "trans": ("tr",)}


# records a builtin emits when the call gives its scalar before its source tile, the
# signature's order swapped: pto.tdivs(dst, scalar, src) (frontend/value_builtins.py lower_tdivs),
# whose half / float form refuses dst == src: its call writes the spare tile
SCALAR_FIRST = ("TSDIVS",)


def _parameters(spec) -> list:
    """[(name, has_default), ...] of spec's builtin signature, in order."""
    args = ast.parse(f"def _f{spec.signature}: pass").body[0].args
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(args.defaults)
    return ([(a.arg, i >= first_default) for i, a in enumerate(positional)]
            + [(a.arg, d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults)])


def _missing(spec, field, what) -> CalibrationError:
    """The error for a record whose family's descriptor lacks what its benchmark call needs."""
    return CalibrationError(
        f"no microbenchmark call for {spec.name} ({spec.family}): {what}",
        hint=f"fill FamilyRoles.{field} of {spec.family} in pypto_sim/isa/tile_roles.py "
             "(its docstring says what the microbenchmarks read)")


def _operand_tile(spec, roles, operand, dtype) -> tuple:
    """(shape, dtype) of spec's tile operand by its family's descriptor."""
    shape = dict(roles.operand_shapes).get(operand)
    if shape is None:
        raise _missing(spec, "operand_shapes", f"tile operand '{operand}' has no shape")
    if shape not in _TILE_NAMES:
        raise _missing(spec, "operand_shapes", f"'{operand}' has shape '{shape}'; the microbenchmarks "
                                               f"size {sorted(_TILE_NAMES)} (tile_roles.OPERAND_SHAPES)")
    return shape, ("uint8" if shape == "mask" else dict(roles.operand_dtypes).get(operand, dtype))


def _call_tiles(spec, roles, taken, dtype) -> tuple:
    """({variable: (shape, dtype)} in allocation order, {operand: variable}) for the tile
    operands ``taken`` (the data operand first): one variable a tile, dst sharing its source's
    under bench_in_place, named by shape (_TILE_NAMES; ``i``-prefixed when operand_dtypes makes
    it int32)."""
    tile_of = {p: _operand_tile(spec, roles, p, dtype) for p in taken}
    same = {}           # dst and the source it is written over (bench_in_place): one tile
    if roles.bench_in_place and roles.dst in tile_of:
        twin = next((s for s in roles.sources if s in tile_of and tile_of[s] == tile_of[roles.dst]), None)
        same = {roles.dst: twin, twin: roles.dst} if twin else {}
    tiles, names = {}, {}
    for p in taken:
        if same.get(p) in names:
            names[p] = names[same[p]]
            continue
        shape, dt = tile_of[p]
        prefix = dt[0] if dict(roles.operand_dtypes).get(p) else ""    # int32: icol, irow
        fresh = [f"{prefix}{n}" for n in _TILE_NAMES[shape] if f"{prefix}{n}" not in tiles]
        if not fresh:
            raise _missing(spec, "operand_shapes", f"more '{shape}' tiles than the benchmarks name "
                                                   f"({_TILE_NAMES[shape]})")
        tiles[fresh[0]] = (shape, dt)
        names[p] = fresh[0]
    if roles.bench_spare and any(p != roles.dst for p in taken):      # a second data tile: "other"
        tiles.setdefault(_TILE_NAMES["tile"][1], ("tile", dtype))
    return tiles, names


def _value(spec, value, dtype) -> str:
    """A bench_values value as call source: a float in the data dtype (1.0 is 1 in an integer
    dtype), a str quoted, an int as it is."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float) and not dtype.startswith(("float", "bfloat")):
        if not value.is_integer():
            raise _missing(spec, "bench_values", f"{value} is no {dtype} value")
        return repr(int(value))
    return repr(value)


def op_call(spec, dtype) -> tuple:
    """(tile allocations as {name: (shape, dtype)}, the call) for one op of a rows x cols data
    tile ``big`` of dtype, built from its family's descriptor (tile_roles.FamilyRoles:
    operand_shapes, operand_dtypes, bench_values, bench_in_place, bench_spare) and the record's
    operands and signature: the tiles the signature takes without a default, the data tile
    first and the rest in signature order (``other``: a second rows x cols tile; ``col``,
    ``row``, ``mask``, ``tr``: by shape, ``icol`` / ``irow`` int32), then the bench_values the
    record has (by keyword where the signature has a default). Shapes are
    tile_roles.OPERAND_SHAPES names; op_allocs gives them sizes. Only TCVT, the ALU's
    conversion, is built by name: its ``mode`` picks its dst's dtype."""
    op = spec.builtin
    if spec.name == "TCVT":      # float16 here; the descriptor knows no per-record dst dtype
        return {"big": ("tile", dtype), "half": ("tile", "float16")}, f"pto.{op}(half, big)"
    roles = FAMILY_ROLES[spec.family]
    kinds = {o.name: o.kind for o in spec.value_operands}
    params = _parameters(spec)
    data = data_operand(spec)
    taken = sorted((p for p, default in params if kinds.get(p) == "tile" and not default),
                   key=lambda p: p != data)          # the data tile is allocated first: "big"
    tiles, names = _call_tiles(spec, roles, taken, dtype)
    values = dict(roles.bench_values)
    args = []
    for p, default in params:
        if p in names and not default:
            args.append(names[p])
        elif p in values:
            args.append(f"{p}={_value(spec, values[p], dtype)}" if default else _value(spec, values[p], dtype))
        elif not default:
            raise _missing(spec, "bench_values", f"its call needs a value for '{p}'")
    if spec.name in SCALAR_FIRST:        # the builtin emits it with the scalar before the tile,
        args[:3] = ["other", args[2], args[1]]  # into the spare tile (in place is refused for floats)
    return tiles, f"pto.{op}({', '.join(args)})"


def _extent(shape, rows, cols, itemsize) -> tuple:
    """(rows, cols, col_major) of a tile of OPERAND_SHAPES' ``shape`` for an op over rows x cols."""
    block = 32 // itemsize          # elements in 32 bytes: a column's block, a transpose's row
    padded = -(-rows // block) * block
    return {"tile": (rows, cols, False), "col": (padded, 1, True), "row": (1, cols, False),
            "mask": (rows, max(32, -(-cols // 8)), False), "trans": (cols, padded, False)}[shape]


def op_allocs(spec, dtype, rows, cols) -> tuple:
    """(allocation lines, the call) of :func:`op_call` for a rows x cols tile."""
    tiles, call = op_call(spec, dtype)
    lines = []
    for name, (shape, dt) in tiles.items():
        r, c, col_major = _extent(shape, rows, cols, ITEMSIZE[dt])
        # a column padded to whole 32-byte blocks holds one value per row of the op: its valid
        # rows are the op's (A2/A3 asserts it, TRowReduceOps.hpp / TRowExpand.hpp)
        valid = (rows, c) if shape == "col" and r != rows else None
        lines.append(_alloc(name, r, c, dt, "Vec", col_major, valid))
    return lines, call


def chain_rows(cols, dtype) -> tuple:
    """CHAIN_ROWS and the most rows (a multiple of 8) of a tile within CHAIN_TILE_BYTES."""
    most = CHAIN_TILE_BYTES // (cols * ITEMSIZE[dtype]) // 8 * 8
    return tuple(sorted(set(CHAIN_ROWS) | {most}))


def unaligned_cols(m, spec, dtype, cols):
    """Columns whose rows are not whole 256-byte repeats (but whole 32-byte tile rows for every
    dtype a benchmark tile holds) and that no [formulas] row prices; None if there are none."""
    for c in (48, 80, 112, 16, 144, 176):
        if (c * ITEMSIZE[dtype]) % 256 and m.formula_cycles(spec.name, dtype, 1, c) is None:
            return c
    return None


def chain_cols(m, spec, dtype):
    """The columns the head/slope benchmarks use: the narrowest whole-repeat row (256 bytes and
    up) that no [formulas] row prices, or None when formula rows price every width."""
    item = ITEMSIZE[dtype]
    for nb in (256, 512, 1024, 2048):
        cols = nb // item
        if m.formula_cycles(spec.name, dtype, 1, cols) is None:
            return cols
    return None


def vector_benches(m) -> list:
    """Head, slope, tail and unaligned floor of every V op the formula table does not price,
    and every [formulas] row (the machine m says which)."""
    out = []
    for spec in vector_specs():
        dt = op_dtype(spec)
        cols = chain_cols(m, spec, dt)
        if cols is None:
            continue
        for rows in chain_rows(cols, dt):
            if m.fast_row_reduce(spec.name, dt, rows, cols) is not None:
                continue    # pto-isa's fast fp32 tree ([row_reduce_fp32]), not the entry fitted here
            allocs, call = op_allocs(spec, dt, rows, cols)
            out.append(_bench(f"aiv_chain.{spec.name}.rows={rows}", spec.name, "vector", allocs, [call],
                              spec.name, AIV_SIZES))
        allocs, call = op_allocs(spec, dt, SYNC_ROWS, cols)
        out.append(_bench(f"aiv_sync.{spec.name}", spec.name, "vector", allocs,
                          [call, "pto.pipe_barrier(pto.PIPE_V)"], spec.name, AIV_SIZES))
        tload = ("pto.tload(big, ai)" if dt == "int32" else "pto.tload(big, af)")
        if dt in ("float32", "int32"):
            out.append(_bench(f"aiv_refill.{spec.name}", spec.name, "vector", allocs, [call, tload],
                              spec.name, AIV_SIZES))
        ucols = unaligned_cols(m, spec, dt, cols)
        if ucols is not None:
            allocs, call = op_allocs(spec, dt, SYNC_ROWS, ucols)
            out.append(_bench(f"aiv_unaligned.{spec.name}.cols={ucols}", spec.name, "vector", allocs, [call],
                              spec.name, AIV_SIZES))
    return out + formula_benches(m)


def formula_rows_of(cols, item):
    """Three row counts for a formula benchmark: 8, the most that keeps a tile within 64 KiB
    (two or three tiles fit UB), and about a third of that."""
    most = max(24, (65536 // (cols * item)) // 8 * 8)
    return (8, max(16, most // 3 // 8 * 8), most)


def formula_benches(m) -> list:
    """One benchmark family per [formulas] row (three row counts, formula_rows_of); rows for
    any dtype or width are measured at 64 columns."""
    isa = load_isa()
    out = []
    for (name, dtype, cols) in m.vector_formulas:
        if name not in isa.by_name:
            continue
        spec = isa[name]
        dt = op_dtype(spec) if dtype == "any" else dtype
        if dt not in spec.dtypes:
            continue
        c = 64 if cols == "*" else int(cols)
        for rows in formula_rows_of(c, ITEMSIZE[dt]):
            allocs, call = op_allocs(spec, dt, rows, c)
            out.append(_bench(f"aiv_formula.{name}.{dtype}.cols={cols}.rows={rows}",
                              f"formula.{name}.{dtype}.{cols}", "vector", allocs, [call], name, AIV_SIZES))
    return out


def all_aicore_benchmarks(m) -> list:
    """Every AI-core microbenchmark for machine m (empty when m has no [aicore] section)."""
    if not m.has_aicore:
        return []
    return transfer_benches() + vector_benches(m)


AICORE_RATES = ("gm_to_l1_bytes_per_cycle", "gm_to_ub_bytes_per_cycle", "ub_to_gm_bytes_per_cycle",
                "l1_to_gm_bytes_per_cycle", "l1_to_l0a_bytes_per_cycle", "l1_to_l0b_bytes_per_cycle",
                "l1_to_bias_bytes_per_cycle", "l0c_to_l1_bytes_per_cycle", "drain_fixed_cycles",
                "drain_row_cycles", "drain_penalty_cycles", "drain_bytes_per_cycle")
AICORE_STRUCTURE = ("structural: a count, a size or a geometry of the AI core (units, bias table and "
                    "fixpipe buffer bytes, event ids, queue depth, the fixpipe's 32-byte C0 block), not a rate")
TASK_OVERHEAD = ("outside the cores: msprof's Task Duration less the cores' own time, which a device run "
                 "gives directly (Task Duration - aicore_time); the calibration times instructions on a core")


def aicore_coverage(machine=None) -> dict:
    """{(entry, field): "covered" or why not} for the AI core's cost entries beyond latency and
    issue interval (those are in coverage()): every [aicore] value, the head, per_repeat, tail
    and unaligned_floor of each V op, and each [formulas] row (``formula.OP.DTYPE.COLS``)."""
    m = resolve_machine(machine) if machine is not None else active()
    out = {}
    if not m.has_aicore:
        return out
    for key in m.values:
        if key in AICORE_RATES:
            out[(f"aicore.{key}", "value")] = "covered"
        elif key == "l1_to_fb_bytes_per_cycle":
            out[(f"aicore.{key}", "value")] = ("pto-isa's CCE mock L1_TO_FB rate (arch_config.hpp); no microbenchmark "
                                               "moves quant words Mat -> Scaling (TMOV_M2S)")
        elif key in ("vector_units", "bias_bytes", "fb_bytes", "event_ids", "pipe_queue_depth",
                     "cross_core_event_ids", "drain_c0_bytes"):
            out[(f"aicore.{key}", "value")] = AICORE_STRUCTURE
        elif key == "task_overhead_cycles":
            out[(f"aicore.{key}", "value")] = TASK_OVERHEAD
    for spec in vector_specs():
        dt = op_dtype(spec)
        cols = chain_cols(m, spec, dt)
        for fld in ("per_repeat", "head", "tail", "unaligned_floor"):
            if cols is None:
                why = "[formulas] rows price this op at every width, so head and slope are never used"
            elif fld in ("head", "tail") and dt not in ("float32", "int32"):
                why = f"the refill pattern reloads the tile from a float32 or int32 tensor, not {dt}"
            elif fld == "unaligned_floor" and unaligned_cols(m, spec, dt, cols) is None:
                why = "every width that is not whole repeats has a [formulas] row"
            else:
                why = "covered"
            out[(spec.name, fld)] = why
        t = m.instructions.get(spec.name)
        if t is not None and "per_row" in t.extra:
            out[(spec.name, "per_row")] = ("taken from the table: the chains at one width measure per_repeat "
                                           "x repeats + per_row x rows as one slope, and per_repeat is fitted "
                                           "with per_row given")
    isa = load_isa()
    for (name, dtype, cols) in m.vector_formulas:
        ok = name in isa.by_name and (dtype == "any" or dtype in isa[name].dtypes)
        out[(f"formula.{name}.{dtype}.{cols}", "slope, bias")] = (
            "covered" if ok else "the ISA has no such instruction or dtype: the row is never used")
    return out
