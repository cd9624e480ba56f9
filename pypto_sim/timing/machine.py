"""Machine descriptions: latency tables loaded from latency_tables/*.toml.

A table is versioned data. Every number is written ``{ value = N, source = "..." }`` so its
provenance travels with it; the loader checks that every ISA instruction has a latency and an
issue interval and that every pipe the ISA names exists.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import math
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from .._resources import data_dir
from ..errors import MachineError
from ..isa import LANE_TILE_FAMILIES, PIPES, VECTOR_FAMILIES, load_isa
from . import peaks, row_reduce_paths

DEFAULT_MACHINE = "ascend910b"

_STRUCTURE = ("cores", "warp_slots_per_core", "lanes_per_warp", "issue_width", "clock_ghz")
_CAPACITY = ("l1_bytes", "ub_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes", "hbm_bytes",
             "scalar_registers", "lane_slot_bytes")
_MEMORY = ("hbm_chip_bytes_per_cycle", "hbm_core_read_bytes_per_cycle",
           "hbm_core_write_bytes_per_cycle", "sector_bytes")
# optional sections: the real AI core (typed tiles, docs/aicore.md) and the L2 cache; a table
# that has one has every key of it
_AICORE = ("vector_units", "bias_bytes", "fb_bytes", "event_ids", "cross_core_event_ids", "cross_core_flag_limit",
           "pipe_queue_depth",
           "gm_to_l1_bytes_per_cycle", "gm_to_ub_bytes_per_cycle", "ub_to_gm_bytes_per_cycle",
           "l1_to_gm_bytes_per_cycle", "l1_to_l0a_bytes_per_cycle", "l1_to_l0b_bytes_per_cycle",
           "l1_to_bias_bytes_per_cycle", "l1_to_fb_bytes_per_cycle", "l0c_to_l1_bytes_per_cycle",
           "drain_fixed_cycles",
           "drain_row_cycles", "drain_penalty_cycles", "drain_bytes_per_cycle", "drain_c0_bytes",
           "task_overhead_cycles")
_L2 = ("l2_bytes", "l2_line_bytes", "l2_hit_latency", "l2_miss_extra_latency", "l2_chip_bytes_per_cycle")
_OPTIONAL_SECTIONS = (("aicore", _AICORE), ("l2", _L2))
_TOP_LEVEL = {"name", "isa_version", "description", "structure", "capacity", "memory", "pipes",
              "instruction", "fusion", "formulas", "row_reduce_fp32", "peaks"} | {section for section, _keys in _OPTIONAL_SECTIONS}
_WHOLE = ("cores", "warp_slots_per_core", "lanes_per_warp", "issue_width", "sector_bytes",
          "vector_units", "bias_bytes", "fb_bytes", "event_ids", "cross_core_event_ids", "cross_core_flag_limit",
          "drain_c0_bytes", "pipe_queue_depth",
          "task_overhead_cycles",
          "l2_bytes", "l2_line_bytes", "l2_hit_latency", "l2_miss_extra_latency")


_INSTR_EXTRA = ("per_repeat", "per_repeat_f32", "repeat_bytes", "k_tile", "k_tile_f32", "head", "tail",
                "unaligned_floor", "per_row", "per_element", "latency_64", "issue_interval_64")
# a lane instruction's cost on 64-bit values (float64, int64), with the source of those numbers
_WIDE_KEYS = ("latency_64", "issue_interval_64")
_MAY_BE_ZERO = ("head", "tail", "unaligned_floor", "per_row", "per_element")     # cycles that may be none at all; the rest > 0
FORMULA_DTYPES = {"fp32": "float32", "fp16": "float16", "any": "any"}
_FUSION_KEYS = ("first", "second", "latency", "saving", "source")
# families whose instructions may be fused: they compute or move data (not control or sync)
FUSABLE_FAMILIES = ("alu", "id", "load", "store", "fma_store", "tile_load", "tile_store",
                    "tile_mma") + LANE_TILE_FAMILIES


@dataclass(frozen=True)
class InstrTiming:
    """Latency, issue interval and provenance of one instruction in one machine, plus the
    size-dependent terms of tile instructions (per_repeat, repeat_bytes, k_tile, ...)."""

    latency: int
    issue_interval: int
    source: str
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class FusionRule:
    """A pair of dependent instructions the firmware executes as one (a ``[[fusion]]`` entry).

    When ``second`` reads what ``first`` wrote (docs/latency_tables.md, "Fusion rules"), the
    second instruction's fixed latency becomes ``latency`` (``saving`` cycles less than its own);
    its timeline entries and breakdown row are named ``first+second``.
    """

    first: str
    second: str
    saving: int
    latency: int | None
    source: str

    @property
    def name(self) -> str:
        """The fused instruction's name, as timelines and breakdowns show it: 'TLOAD+MMA'."""
        return f"{self.first}+{self.second}"


@dataclass
class Machine:
    """A machine: structure, capacities, memory system and per-instruction timing.

    Attributes mirror the table: ``cores``, ``warp_slots_per_core``, ``lanes_per_warp``,
    ``issue_width``, ``clock_ghz``, ``l1_bytes`` ... and ``sources[key]`` says where each number
    came from.
    """

    name: str
    path: Path
    isa_version: str
    description: str
    values: dict
    sources: dict
    pipes: dict
    instructions: dict
    fusions: tuple = ()
    # [formulas] vector: {(op, dtype name or "any", cols or "*"): (slope, bias)} and its source
    vector_formulas: dict = field(default_factory=dict)
    formula_source: str = ""
    # [row_reduce_fp32]: pto-isa's fast fp32 row reductions (timing/row_reduce_paths.py)
    row_reduce_fp32: dict = field(default_factory=dict)
    # [peaks]: the vendor's theoretical elements a cycle per vector instruction (timing/peaks.py)
    vector_peaks: dict = field(default_factory=dict)
    pipe_index: dict = field(init=False)

    def __post_init__(self):
        self.pipe_index = {p: i for i, p in enumerate(PIPES)}

    def __getattr__(self, key):
        values = self.__dict__.get("values", {})
        if key in values:
            return values[key]
        raise AttributeError(f"machine '{self.__dict__.get('name')}' has no attribute {key!r}")

    def formula_cycles(self, name: str, dtype: str, rows: int, cols: int):
        """A vector op's cycles from the [formulas] table: round(slope * rows * cols + bias)
        for (op, dtype, cols), else (op, dtype, any cols), else (op, any dtype); None when the
        table has no row for it (pto-isa formula_backend_compute.hpp TryEstimateFormulaCycles)."""
        table = self.vector_formulas
        for key in ((name, dtype, cols), (name, dtype, "*"), (name, "any", cols), (name, "any", "*")):
            if key in table:
                return self.formula_value(*table[key], rows * cols)
        return None

    @staticmethod
    def formula_value(slope: float, bias: float, elements: int) -> int:
        """A [formulas] row's cycles on ``elements`` elements: round(slope * elements + bias)."""
        value = slope * elements + bias
        return int(math.floor(value + 0.5)) if value > 0 else 0

    def fast_row_reduce(self, name: str, dtype: str, rows: int, cols: int):
        """The cost of pto-isa's fast fp32 row reduction (TryOptimizeFP32Reduce) of op name on
        a whole-valid rows x cols source into a DN column, as a row_reduce_paths.FastRowReduce;
        None when the table sends it down the generic path ([row_reduce_fp32])."""
        return row_reduce_paths.price(self.row_reduce_fp32, name, dtype, rows, cols,
                                      self.latency("PIPE_BARRIER"))

    @property
    def has_aicore(self) -> bool:
        """True when the table describes the real AI core ([aicore]: typed tiles can run)."""
        return "event_ids" in self.values

    @property
    def has_l2(self) -> bool:
        """True when the table has an L2 cache in front of HBM ([l2])."""
        return "l2_bytes" in self.values

    def latency(self, name: str) -> int:
        """Cycles from the issue of instruction ``name`` until a dependent instruction can issue.

        For memory instructions this is the fixed part; each transfer adds
        ceil(bytes / bandwidth) (docs/timing.md).
        """
        return self._timing(name).latency

    def issue_interval(self, name: str) -> int:
        """Cycles between two issues of instruction ``name`` on the same pipe by one warp."""
        return self._timing(name).issue_interval

    def cost_term(self, name: str, key: str) -> float:
        """A size-dependent cost term of a tile instruction (per_repeat, repeat_bytes, k_tile...)."""
        return self._timing(name).extra[key]

    def source(self, name: str) -> str:
        """Where the numbers of instruction or table entry ``name`` come from."""
        if name in self.instructions:
            return self.instructions[name].source
        return self.sources[name]

    def _timing(self, name: str) -> InstrTiming:
        try:
            return self.instructions[name.upper()]
        except KeyError:
            raise MachineError(f"machine '{self.name}' has no instruction {name!r}",
                               hint="see pto.instructions() for the names") from None

    @property
    def scalar_latency(self) -> int:
        """Latency of an ALU instruction whose operands are all uniform (scalar unit)."""
        return self.pipes["scalar"]["latency"]

    @property
    def scalar_issue_interval(self) -> int:
        """Issue interval of the scalar unit's uniform ALU instructions."""
        return self.pipes["scalar"]["issue_interval"]

    def with_overrides(self, overrides: dict, source: str = "sweep override") -> "Machine":
        """A copy with some entries replaced; each changed entry's source says ``source``.

        Keys: ``"instruction.NAME.latency"`` / ``.issue_interval`` / ``.per_repeat`` (or any
        cost term), ``"<structure|capacity|memory>.KEY"`` (e.g. ``"memory.hbm_chip_bytes_per_cycle"``)
        and ``"pipes.PIPE.FIELD"``. An unknown key is a MachineError naming it."""
        values, sources = dict(self.values), dict(self.sources)
        pipes = {k: dict(v) for k, v in self.pipes.items()}
        instructions = dict(self.instructions)
        for key, value in overrides.items():
            parts = str(key).split(".")

            def bad(rule):
                return MachineError(f"machine override {key!r} = {value!r} {rule}, as in a table",
                                    hint="the same rules as latency_tables/*.toml")
            number = _is_number(value) and math.isfinite(value)
            if parts[0] == "instruction" and len(parts) == 3 and parts[1].upper() in instructions:
                name, fld = parts[1].upper(), parts[2]
                t = instructions[name]
                if fld in ("latency", "issue_interval"):
                    least = 0 if fld == "latency" else 1
                    if not (number and float(value).is_integer() and value >= least):
                        raise bad(f"must be a whole number >= {least}")
                    t = dataclasses.replace(t, **{fld: int(value)}, source=source)
                elif fld in t.extra:
                    if not (number and (value >= 0 if fld in _MAY_BE_ZERO else value > 0)):
                        raise bad(f"must be a finite number > 0 ({', '.join(_MAY_BE_ZERO)}: >= 0)")
                    t = dataclasses.replace(t, extra={**t.extra, fld: value}, source=source)
                else:
                    raise MachineError(f"override {key!r}: {name} has no field {fld!r}",
                                       hint="latency, issue_interval or one of " + ", ".join(t.extra))
                instructions[name] = t
            elif parts[0] in ("structure", "capacity", "memory", "aicore", "l2") and len(parts) == 2 \
                    and parts[1] in values:
                if not (number and value > 0):
                    raise bad("must be a positive finite number")
                if parts[1] in _WHOLE and not float(value).is_integer():
                    raise bad("must be a whole number")
                if parts[1] == "lanes_per_warp" and value != 32:
                    raise bad("must be 32 (the PTO warp)")
                values[parts[1]] = type(values[parts[1]])(value)
                sources[parts[1]] = source
            elif parts[0] == "pipes" and len(parts) == 3 and parts[1] in pipes and parts[2] != "source":
                if not _is_count(value, 1):
                    raise bad("must be an integer >= 1")
                pipes[parts[1]][parts[2]] = value
                pipes[parts[1]]["source"] = source
            else:
                raise MachineError(f"machine override {key!r} names no entry of {self.name}",
                                   hint="use instruction.NAME.latency, memory.KEY, capacity.KEY, "
                                        "structure.KEY or pipes.PIPE.FIELD")
        return dataclasses.replace(self, values=values, sources=sources, pipes=pipes, instructions=instructions)

    def without_l2(self) -> "Machine":
        """A copy with no L2 ([l2] removed): tile DMA then always takes the miss path. The
        calibration microbenchmarks run on it (they re-read one buffer, which an L2 would serve)."""
        values = {k: v for k, v in self.values.items() if k not in _L2}
        sources = {k: v for k, v in self.sources.items() if k not in _L2}
        return dataclasses.replace(self, values=values, sources=sources, pipes=dict(self.pipes),
                                   instructions=dict(self.instructions))

    def lane_timing(self, name: str, wide: bool = False):
        """(latency, issue_interval) of instruction ``name``; wide: on 64-bit values (float64,
        int64), the entry's latency_64 / issue_interval_64 where it has them."""
        t = self._timing(name)
        if not wide:
            return t.latency, t.issue_interval
        return t.extra.get("latency_64", t.latency), t.extra.get("issue_interval_64", t.issue_interval)

    def describe(self) -> str:
        """A multi-line human-readable summary of the machine and its numbers."""
        lines = [f"machine {self.name} ({self.path.name}): {self.description}"]
        for key in _STRUCTURE + _CAPACITY + _MEMORY + _AICORE + _L2:
            if key not in self.values:
                continue
            lines.append(f"  {key:34s} {self.values[key]!s:>14}   {self.sources[key]}")
        for pipe, info in self.pipes.items():
            lines.append(f"  pipe {pipe:29s} {info['count']:>14}   {info['source']}")
        lines.append(f"  {'instruction':20s} {'latency':>8} {'interval':>8}")
        for name, t in self.instructions.items():
            lines.append(f"  {name:20s} {t.latency:>8} {t.issue_interval:>8}   {t.source}")
        for rule in self.fusions:
            fused = self.latency(rule.second) - rule.saving
            lines.append(f"  fusion {rule.name:13s} latency {fused} (saves {rule.saving})   {rule.source}")
        if self.vector_peaks:
            beaten = peaks.violations(self)
            lines.append(f"  peaks: {len(self.vector_peaks['ops'])} vector instructions no faster than the "
                         f"vendor's parallelism, {len(beaten)} cost(s) beating it   {self.vector_peaks['source']}")
            lines += [f"    {v}" for v in beaten]
        return "\n".join(lines)

    def __repr__(self):
        return (f"Machine({self.name!r}, cores={self.cores}, warp_slots={self.warp_slots_per_core}, "
                f"lanes_per_warp={self.lanes_per_warp}, clock_ghz={self.clock_ghz}, "
                f"l1_bytes={self.l1_bytes})")


def _number(path, section, key, entry):
    if not isinstance(entry, dict) or "value" not in entry or not str(entry.get("source", "")).strip():
        raise MachineError(f"{path}: [{section}] {key} must be {{ value = ..., source = \"...\" }}",
                           hint="every number names its source or says 'assumed'")
    value = entry["value"]
    if not _is_number(value) or not math.isfinite(value) or value <= 0:
        raise MachineError(f"{path}: [{section}] {key} = {value!r} must be a positive finite number")
    return value, str(entry["source"])


def _is_number(value) -> bool:
    """An int or float read from TOML (a bool is not a number here, though Python's is an int)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_count(value, least) -> bool:
    """An integer (not a bool) of at least ``least``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def load_machine_from(path) -> Machine:
    """Load and validate one latency table; raise MachineError naming the file and entry."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MachineError(f"no machine table at {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise MachineError(f"{path}: not valid TOML: {exc}") from None
    isa = load_isa()
    for key in ("name", "isa_version"):
        if key not in doc:
            raise MachineError(f"{path}: missing top-level '{key}'")
    unknown = sorted(set(doc) - _TOP_LEVEL)
    if unknown:
        raise MachineError(f"{path}: unknown top-level entry or section {unknown[0]!r}",
                           hint=f"a table has {', '.join(sorted(_TOP_LEVEL))}")
    if str(doc["isa_version"]) != isa.version:
        raise MachineError(f"{path}: table targets isa_version {doc['isa_version']} but the ISA is {isa.version}",
                           hint="update the table's instruction entries for the new ISA")
    values, sources = {}, {}
    for section, keys in (("structure", _STRUCTURE), ("capacity", _CAPACITY), ("memory", _MEMORY)):
        table = doc.get(section, {})
        for key in keys:
            if key not in table:
                raise MachineError(f"{path}: [{section}] is missing '{key}'", hint=_missing_hint(section, key))
            values[key], sources[key] = _number(path, section, key, table[key])
        for key in table:
            if key not in keys:
                raise MachineError(f"{path}: [{section}] has unknown entry '{key}'")
    for section, keys in _OPTIONAL_SECTIONS:
        table = doc.get(section)
        if table is None:
            continue
        for key in keys:
            if key not in table:
                raise MachineError(f"{path}: [{section}] is missing '{key}'", hint=_missing_hint(section, key))
            values[key], sources[key] = _number(path, section, key, table[key])
        for key in table:
            if key not in keys:
                raise MachineError(f"{path}: [{section}] has unknown entry '{key}'")
    for key in _WHOLE:
        if key not in values:
            continue
        if not float(values[key]).is_integer():
            raise MachineError(f"{path}: {key} = {values[key]} must be a whole number")
        values[key] = int(values[key])
    if values["lanes_per_warp"] != 32:
        raise MachineError(f"{path}: lanes_per_warp must be 32 (the PTO warp), not {values['lanes_per_warp']}")
    pipes = {}
    for pipe in PIPES:
        entry = doc.get("pipes", {}).get(pipe)
        if entry is None:
            raise MachineError(f"{path}: [pipes] is missing '{pipe}'")
        if not str(entry.get("source", "")).strip() or not _is_count(entry.get("count"), 1):
            raise MachineError(f"{path}: [pipes] {pipe} needs an integer count >= 1 and a source, "
                               f"not {entry}")
        for key, value in entry.items():
            if key != "source" and not _is_count(value, 1):
                raise MachineError(f"{path}: [pipes] {pipe}: {key} = {value!r} must be an integer >= 1")
        pipes[pipe] = dict(entry)
    for key in ("latency", "issue_interval"):
        if not _is_count(pipes["scalar"].get(key), 1):
            raise MachineError(f"{path}: [pipes] scalar needs {key} >= 1 (uniform ALU instructions)")
    instructions = {}
    table = doc.get("instruction", {})
    for spec in isa.specs:
        entry = table.get(spec.name)
        if entry is None:
            raise MachineError(f"{path}: [instruction] has no entry for {spec.name}",
                               hint=f"add {spec.name} = {{ latency = ..., issue_interval = ..., source = \"...\" }}")
        lat, ii, src = entry.get("latency"), entry.get("issue_interval"), str(entry.get("source", ""))
        if not (_is_count(lat, 0) and _is_count(ii, 1) and src.strip()):
            raise MachineError(f"{path}: [instruction] {spec.name} needs integer latency >= 0, "
                               f"issue_interval >= 1 and a source; got {entry}")
        extra = {k: v for k, v in entry.items() if k not in ("latency", "issue_interval", "source", "source_64")}
        wide = [k for k in _WIDE_KEYS if k in entry]
        if wide and (len(wide) != 2 or not str(entry.get("source_64", "")).strip()
                     or not all(_is_count(entry[k], 1) for k in wide)):
            raise MachineError(f"{path}: [instruction] {spec.name}: a 64-bit cost needs integer "
                               f"latency_64 and issue_interval_64 >= 1 and a source_64; got {entry}")
        if wide:
            extra["source_64"] = str(entry["source_64"])
        for key, value in extra.items():
            if key == "source_64":
                continue
            number = _is_number(value) and math.isfinite(value)
            # a scalar loop priced by the element (per_element) runs no vector repeat
            may_be_zero = key in _MAY_BE_ZERO or (key == "per_repeat" and spec.family != "tile_move"
                                                  and _is_number(extra.get("per_element")) and
                                                  extra["per_element"] > 0)
            positive = number and (value > 0 if not may_be_zero else value >= 0)
            if key not in _INSTR_EXTRA or not positive:
                raise MachineError(f"{path}: [instruction] {spec.name}: '{key} = {value!r}' is not one "
                                   f"of {_INSTR_EXTRA} with a positive number ({', '.join(_MAY_BE_ZERO)}, and "
                                   "per_repeat beside a per_element: >= 0)")
        needed = (("per_repeat", "repeat_bytes") if spec.family in VECTOR_FAMILIES
                  else ("per_repeat", "per_repeat_f32", "k_tile", "k_tile_f32") if spec.family == "tile_mma"
                  else ())
        for key in needed:
            if key not in extra:
                raise MachineError(f"{path}: [instruction] {spec.name} needs '{key}' (its size-dependent cost)")
        instructions[spec.name] = InstrTiming(lat, ii, src, extra)
    extra = set(table) - set(isa.by_name)
    if extra:
        raise MachineError(f"{path}: [instruction] names unknown instruction(s) {sorted(extra)}")
    fusions = _fusion_rules(path, doc.get("fusion", []), isa, instructions)
    formulas, formula_source = _vector_formulas(path, doc.get("formulas", {}), isa)
    return Machine(name=str(doc["name"]), path=path, isa_version=str(doc["isa_version"]),
                   description=str(doc.get("description", "")), values=values, sources=sources,
                   pipes=pipes, instructions=instructions, fusions=fusions,
                   vector_formulas=formulas, formula_source=formula_source,
                   row_reduce_fp32=row_reduce_paths.parse(path, doc.get("row_reduce_fp32", {}), isa),
                   vector_peaks=peaks.parse(path, doc.get("peaks", {}), isa))


def _vector_formulas(path, section, isa):
    """[formulas] vector = { file = "....csv", source = "..." }: rows op,dtype,cols,slope,bias
    (pto-isa's formula_params.csv layout; cols may be "*", dtype fp32, fp16 or any)."""
    if not section:
        return {}, ""
    unknown = set(section) - {"vector"}
    entry = section.get("vector")
    if unknown or not isinstance(entry, dict) or set(entry) != {"file", "source"} or not str(entry["source"]).strip():
        raise MachineError(f"{path}: [formulas] must be vector = {{ file = \"...csv\", source = \"...\" }}")
    # next to the table, else among the shipped tables (so a copied table keeps its formulas)
    beside = (Path(path).parent / str(entry["file"])).resolve()
    shipped = (data_dir("latency_tables") / str(entry["file"])).resolve()
    csv_path = beside if beside.exists() else shipped
    try:
        lines = csv_path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise MachineError(f"{path}: [formulas] vector file {entry['file']!r} is neither beside the "
                           f"table ({beside}) nor among the shipped tables ({shipped})",
                           hint="put the CSV beside the table, or fix the file name") from None
    table = {}
    if not lines or lines[0].strip() != "op,dtype,cols,slope,bias":
        raise MachineError(f"{csv_path}: the first line must be op,dtype,cols,slope,bias")
    for k, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = [x.strip() for x in line.split(",")]
        try:
            op, dtype, cols, slope, bias = parts
            key = (op, FORMULA_DTYPES[dtype], "*" if cols == "*" else int(cols))
            slope, bias = float(slope), float(bias)
        except (ValueError, KeyError):
            raise MachineError(f"{csv_path}:{k}: {line!r} is not op,dtype (fp32, fp16, any),cols (or *),slope,bias") from None
        # cycles = round(slope * rows * cols + bias): a NaN, an infinity or a negative term
        # would price an operation at 0 cycles or past any clock
        if key[2] != "*" and key[2] < 1:
            raise MachineError(f"{csv_path}:{k}: {line!r}: cols must be a positive integer or *")
        for what, value in (("slope", slope), ("bias", bias)):
            if not math.isfinite(value) or value < 0:
                raise MachineError(f"{csv_path}:{k}: {line!r}: {what} = {value} must be a finite number >= 0",
                                   hint="a formula row is round(slope * rows * cols + bias) cycles")
        table[key] = (slope, bias)
    # rows for instructions the ISA does not have yet are kept (and unused)
    return table, str(entry["source"])


def _fusion_rules(path, entries, isa, instructions) -> tuple:
    """Validate the [[fusion]] entries: first, second, one of latency / saving, source."""
    if not isinstance(entries, list):
        raise MachineError(f"{path}: 'fusion' must be an array of tables ([[fusion]] entries)")
    rules, seen = [], set()
    example = 'first = "TLOAD", second = "MMA", saving = 3, source = "..."'
    for k, entry in enumerate(entries):
        where = f"{path}: [[fusion]] #{k + 1}"
        if not isinstance(entry, dict):
            raise MachineError(f"{where} must be a table ({example})")
        unknown = set(entry) - set(_FUSION_KEYS)
        if unknown:
            raise MachineError(f"{where} has unknown key(s) {sorted(unknown)}; keys: {_FUSION_KEYS}")
        names = []
        for key in ("first", "second"):
            name = str(entry.get(key, "")).upper()
            spec = isa.by_name.get(name)
            if spec is None:
                raise MachineError(f"{where}: {key} = {entry.get(key)!r} is not an ISA instruction",
                                   hint=example)
            if spec.family not in FUSABLE_FAMILIES:
                raise MachineError(f"{where}: {name} ({spec.family}) cannot be fused; only instructions "
                                   f"that compute or move data can ({', '.join(FUSABLE_FAMILIES)})")
            names.append(name)
        first, second = names
        if ("latency" in entry) == ("saving" in entry):
            raise MachineError(f"{where} ({first}+{second}) needs exactly one of latency (the fused "
                               f"{second}'s latency) or saving (cycles saved per fused pair)", hint=example)
        value = entry.get("latency", entry.get("saving"))
        if not isinstance(value, int) or isinstance(value, bool):
            raise MachineError(f"{where} ({first}+{second}): latency / saving must be an integer, not {value!r}")
        own = instructions[second].latency
        saving = own - value if "latency" in entry else value
        if not 0 <= own - saving:
            raise MachineError(f"{where} ({first}+{second}): saving {saving} exceeds {second}'s latency "
                               f"{own}; the saving comes off the second instruction's fixed latency")
        source = str(entry.get("source", "")).strip()
        if not source:
            raise MachineError(f"{where} ({first}+{second}) needs a source", hint="say where the rule comes from")
        if (first, second) in seen:
            raise MachineError(f"{where}: a second rule for {first}+{second}")
        seen.add((first, second))
        rules.append(FusionRule(first, second, saving, entry.get("latency"), source))
    return tuple(rules)


def machine_names() -> list:
    """Names of the tables shipped in latency_tables/."""
    return sorted(p.stem for p in data_dir("latency_tables").glob("*.toml"))


@functools.lru_cache(maxsize=16)
def _load_cached(path: str, mtime: float) -> Machine:
    return load_machine_from(path)


def resolve_machine(name_or_path) -> Machine:
    """Load a shipped table by name ('ascend910b') or any table by path."""
    if isinstance(name_or_path, Machine):
        return name_or_path
    text = str(name_or_path)
    path = Path(text)
    if not (text.endswith(".toml") or path.exists()):
        path = data_dir("latency_tables") / f"{text}.toml"
        if not path.exists():
            raise MachineError(f"no machine named {text!r}; shipped tables: {', '.join(machine_names())}",
                               hint="pass a shipped name or the path of a .toml table")
    path = path.resolve()
    if not path.exists():
        raise MachineError(f"no machine table at {path}")
    return _load_cached(str(path), path.stat().st_mtime)


_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("pypto_sim_machine", default=None)


def machine() -> Machine:
    """The active machine (the default table unless use_machine() chose another)."""
    active = _ACTIVE.get()
    if active is None:
        active = resolve_machine(DEFAULT_MACHINE)
    return active


def use_machine(name_or_path) -> Machine:
    """Make a shipped table (by name) or a table file (by path) the active machine; return it."""
    m = resolve_machine(name_or_path)
    _ACTIVE.set(m)
    return m


@contextlib.contextmanager
def machine_in_effect(m: Machine | None):
    """Inside the ``with``, Machine ``m`` is the active machine (None: leave it as it is);
    afterwards the one active before. Yields the active machine."""
    if m is None:
        yield machine()
        return
    token = _ACTIVE.set(m)
    try:
        yield m
    finally:
        _ACTIVE.reset(token)


def _missing_hint(section: str, key: str) -> str:
    """What to do about a table made before ``key`` existed: copy the shipped table's entry."""
    return (f"add {key} = {{ value = ..., source = \"...\" }} to [{section}]; "
            f"latency_tables/{DEFAULT_MACHINE}.toml has the shipped value and its source")


def ceil_div(a: float, b: float) -> int:
    """ceil(a / b) for the bandwidth terms of transfers."""
    return int(math.ceil(a / b - 1e-12))
