"""Parse and validate the ISA table. Imports nothing else of pypto_sim but errors/resources and
the tile families' descriptors (tile_roles.py)."""
from __future__ import annotations

import enum
import functools
import keyword
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from .._resources import data_dir
from ..errors import IsaError
from .tile_roles import TILE_FAMILIES, VECTOR_FAMILIES

PIPES = ("scalar", "vector", "sfu", "load", "store", "mma", "mte1", "fix")
# the AI core's names of the pipes (PTO-ISA include/pto/common/cpu_stub.hpp): PIPE_MTE2 is the
# load pipe, PIPE_MTE3 the store pipe, PIPE_M the cube; sfu has no AI-core counterpart
PTO_PIPE_NAMES = {"scalar": "PIPE_S", "vector": "PIPE_V", "load": "PIPE_MTE2", "store": "PIPE_MTE3",
                  "mma": "PIPE_M", "mte1": "PIPE_MTE1", "fix": "PIPE_FIX"}
# the pipe's name in AI-core reports, timelines, traces and the debugger (S, V, MTE2, ...)
PTO_PIPE_SHORT = {p: name[len("PIPE_"):] for p, name in PTO_PIPE_NAMES.items()}
# memory spaces of typed tiles (PTO-ISA TileType, docs/coding/Tile.md)
SPACES = ("Vec", "Mat", "Left", "Right", "Acc", "Bias", "Scaling")
CATEGORIES = ("id", "move", "lane_alu", "sfu", "compare", "convert", "lane_memory", "atomic", "warp", "sync",
              "control", "tile_memory", "tile_alu", "mma", "scalar_memory")
# the tile families and their groups derive from each family's descriptor (tile_roles.py);
# the executor looks every family up by name (exec/compiled/isa_constants.py), but the order
# of the others matters to the compiled timing loop: the families it executes itself are the
# first five and the last four (`fam <= F_FMA_STORE or fam >= F_WARP`, compiled/timing.py),
# so every tile family lies between them, and so do scalar_mem (the AI core's scalar unit reading
# and writing UB and GM, isa/56_scalar_memory.toml) and comm_signal (the communication signals
# TNOTIFY / TWAIT / TTEST, isa/58_comm_signals.toml), which the compiled loops never run
FAMILIES = ("alu", "id", "load", "store", "fma_store", "alloc", "sync", "control", "scalar_mem",
            "comm_signal") + TILE_FAMILIES + (
    "warp", "atomic", "local", "check")
OPERAND_KINDS = ("value", "pointer", "dim", "dtype", "target", "imm", "tile")
RESULTS = ("value", "pred", "none")
DTYPE_NAMES = ("float32", "float16", "int32", "bool", "int8", "uint8", "int16", "bfloat16", "uint16",
               "uint32", "float64", "int64")
_REQUIRED = ("name", "opcode", "category", "family", "pipe", "operands", "result", "dtypes", "doc")
# a [[composite]] record: a builtin that lowers to instructions of the table (pto-isa's header-level
# operations such as TPUSH: a flag wait, a TSTORE and a flag set), with no opcode, pipe or cost
_COMPOSITE_FIELDS = ("name", "builtin", "signature", "expands_to", "source", "doc")
_OPTIONAL = ("uniform_pipe", "float", "int", "builtin", "signature", "syntax", "init", "alias",
             "alias_signature", "spaces", "reads_dst", "source_dtypes")


@dataclass(frozen=True)
class Operand:
    """One operand of an instruction: its name and kind (value, pointer, dim, dtype, target, imm)."""

    name: str
    kind: str


@dataclass(frozen=True)
class InstrSpec:
    """One instruction of the ISA table, exactly as the TOML record describes it."""

    name: str
    opcode: int
    category: str
    family: str
    pipe: str
    operands: tuple
    result: str
    dtypes: tuple
    doc: str
    source_file: str
    uniform_pipe: str | None = None
    float_expr: str | None = None
    int_expr: str | None = None
    builtin: str | None = None
    signature: str | None = None
    syntax: str | None = None
    init: str | None = None
    alias: str | None = None
    alias_signature: str | None = None
    spaces: tuple = ()   # ((operand name, (space, ...)), ...): where typed tiles may live
    reads_dst: bool = False   # a tile_alu op whose expression reads dst's old value as `c`
    source_dtypes: tuple = ()  # ((result dtype, (source dtype, ...)), ...): sources of another dtype

    def source_dtypes_of(self, result: str) -> tuple:
        """The dtypes a tile_alu instruction's source tiles may hold when its result (dst)
        holds ``result``: that dtype, and any the record's source_dtypes adds."""
        return (result,) + dict(self.source_dtypes).get(result, ())

    def accepted_spaces(self, operand: str):
        """The memory spaces a typed tile operand may be in (None: any; untyped tiles of the
        article's alloc_local are not checked)."""
        for name, spaces in self.spaces:
            if name == operand:
                return spaces
        if self.family in VECTOR_FAMILIES:
            return ("Vec",)
        return None

    @functools.cached_property
    def value_operands(self) -> tuple:
        """Operands that become source slots: values, pointers' offsets and tiles' L1 bases
        (computed once per record: the engines ask for it on every tile instruction)."""
        return tuple(o for o in self.operands if o.kind in ("value", "pointer", "tile"))

    @property
    def is_tile(self) -> bool:
        """Block-level tile instruction, run asynchronously on its pipe."""
        return self.family in TILE_FAMILIES

    @property
    def pipes(self) -> tuple:
        """Every pipe the instruction may issue on."""
        return (self.pipe,) + ((self.uniform_pipe,) if self.uniform_pipe else ())


@dataclass(frozen=True)
class CompositeSpec:
    """A builtin that is not one instruction but lowers to several of the table's (a
    [[composite]] record): its name, builtin, signature, the instructions it expands to, the
    pto-isa source it follows and its doc."""

    name: str
    builtin: str
    signature: str
    expands_to: tuple
    source: str
    doc: str
    source_file: str


@dataclass
class Isa:
    """The loaded instruction set: specs in opcode order, lookups by name and opcode, the enum."""

    version: str
    specs: tuple
    files: tuple
    composites: tuple = ()
    by_name: dict = field(init=False)
    by_opcode: dict = field(init=False)
    Opcode: type = field(init=False)

    def __post_init__(self):
        self.by_name = {s.name: s for s in self.specs}
        self.by_opcode = {s.opcode: s for s in self.specs}
        self.Opcode = enum.IntEnum("Opcode", {s.name: s.opcode for s in self.specs})

    def __getitem__(self, name: str) -> InstrSpec:
        return self.by_name[name]

    def builtins(self) -> dict:
        """Builtin name -> tuple of the instructions it may emit, in opcode order."""
        out: dict = {}
        for spec in self.specs:
            if spec.builtin:
                out.setdefault(spec.builtin, []).append(spec)
        for spec in self.specs:
            if spec.alias:
                out.setdefault(spec.alias, []).append(spec)
        return {k: tuple(v) for k, v in out.items()}

    def composite_builtins(self) -> dict:
        """Builtin name -> CompositeSpec of every [[composite]] record."""
        return {c.builtin: c for c in self.composites}

    def signature_of(self, spec: InstrSpec, builtin: str) -> str:
        """The signature instruction spec has under builtin (its own or its alias's)."""
        return spec.alias_signature if builtin == spec.alias and builtin != spec.builtin else spec.signature


def _fail(path, name, msg, hint="fix the record in isa/*.toml (fields: isa/README.md)"):
    where = f"{path}: instruction {name}" if name else str(path)
    raise IsaError(f"{where}: {msg}", hint=hint)


def _check_expr(path, name, label, text):
    try:
        compile(text, f"{path}:{name}:{label}", "eval")
    except SyntaxError as exc:
        _fail(path, name, f"'{label}' is not a Python expression: {exc.msg}")


def _parse_record(path: Path, rec: dict) -> InstrSpec:
    name = rec.get("name")
    for key in _REQUIRED:
        if key not in rec:
            _fail(path, name, f"missing field '{key}'")
    unknown = set(rec) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        _fail(path, name, f"unknown field(s) {sorted(unknown)}")
    if not (isinstance(name, str) and name.isupper() and name.replace("_", "").isalnum()):
        _fail(path, name, "name must be an upper-case identifier")
    if not isinstance(rec["opcode"], int) or not 0 <= rec["opcode"] < 256:
        _fail(path, name, f"opcode {rec['opcode']!r} must be an integer in 0..255")
    if rec["category"] not in CATEGORIES:
        _fail(path, name, f"category {rec['category']!r} is not one of {CATEGORIES}")
    if rec["family"] not in FAMILIES:
        _fail(path, name, f"family {rec['family']!r} is not one of {FAMILIES}",
              "a new tile family is its descriptor in pypto_sim/isa/tile_roles.py's FAMILY_ROLES and its "
              "kernels (docs/design.md, \"Adding a tile family\")" if str(rec["family"]).startswith("tile_")
              else "fix the record in isa/*.toml (fields: isa/README.md)")
    for key in ("pipe", "uniform_pipe"):
        if key in rec and rec[key] not in PIPES:
            _fail(path, name, f"{key} {rec[key]!r} is not one of {PIPES}")
    if rec["result"] not in RESULTS:
        _fail(path, name, f"result {rec['result']!r} is not one of {RESULTS}")
    operands = []
    for text in rec["operands"]:
        oname, _, kind = str(text).partition(":")
        if kind not in OPERAND_KINDS:
            _fail(path, name, f"operand {text!r}: kind must be one of {OPERAND_KINDS}")
        operands.append(Operand(oname, kind))
    for d in rec["dtypes"]:
        if d not in DTYPE_NAMES:
            _fail(path, name, f"dtype {d!r} is not one of {DTYPE_NAMES}")
    if rec["family"] in ("alu", "fma_store", "tile_alu", "tile_reduce", "tile_expand_op", "tile_col_reduce",
                         "tile_col_expand_op", "tile_cmp", "tile_sel", "tile_row_arg", "tile_col_arg", "atomic") \
            and not (rec.get("float") or rec.get("int")):
        _fail(path, name, "an alu instruction needs a 'float' or 'int' semantic expression")
    if rec["family"] in ("tile_reduce", "tile_col_reduce") and "init" not in rec:
        _fail(path, name, "a tile_reduce instruction needs 'init', the reduction's identity")
    for label in ("float", "int", "init"):
        if label in rec:
            _check_expr(path, name, label, rec[label])
    if "builtin" in rec:
        if not rec["builtin"].isidentifier() or keyword.iskeyword(rec["builtin"]):
            _fail(path, name, f"builtin {rec['builtin']!r} is not a Python identifier")
        if "signature" not in rec:
            _fail(path, name, "a builtin needs a 'signature'")
    if "builtin" not in rec and "syntax" not in rec:
        _fail(path, name, "an instruction needs a 'builtin' or the 'syntax' that emits it")
    if not rec["doc"].strip():
        _fail(path, name, "doc must not be empty")
    if ("alias" in rec) != ("alias_signature" in rec):
        _fail(path, name, "an alias needs an alias_signature (and the other way round)")
    if "reads_dst" in rec and (rec["reads_dst"] not in (True, False) or rec["family"] not in ("tile_alu", "tile_mma")):
        _fail(path, name, "reads_dst is true or false, and only for tile_alu and tile_mma instructions")
    mixed = rec.get("source_dtypes", {})
    if not isinstance(mixed, dict) or (mixed and rec["family"] != "tile_alu"):
        _fail(path, name, "source_dtypes is a table { result dtype = [source dtype, ...] }, for tile_alu instructions")
    for result, sources in mixed.items():
        if result not in rec["dtypes"] or not sources or any(d not in DTYPE_NAMES for d in sources):
            _fail(path, name, f"source_dtypes.{result} = {sources!r}: the key must be one of its dtypes, "
                              f"each source one of {DTYPE_NAMES}")
    spaces = rec.get("spaces", {})
    operand_names = {str(t).partition(":")[0] for t in rec["operands"]}
    if not isinstance(spaces, dict):
        _fail(path, name, "spaces must be a table { operand = [\"Vec\", ...] }")
    for oname, allowed in spaces.items():
        if oname not in operand_names:
            _fail(path, name, f"spaces names {oname!r}, which is not an operand")
        if not allowed or any(sp not in SPACES for sp in allowed):
            _fail(path, name, f"spaces.{oname} = {allowed!r}: each must be one of {SPACES}")
    return InstrSpec(
        name=name, opcode=rec["opcode"], category=rec["category"], family=rec["family"],
        pipe=rec["pipe"], operands=tuple(operands), result=rec["result"],
        dtypes=tuple(rec["dtypes"]), doc=rec["doc"].strip(), source_file=path.name,
        uniform_pipe=rec.get("uniform_pipe"), float_expr=rec.get("float"),
        int_expr=rec.get("int"), builtin=rec.get("builtin"), signature=rec.get("signature"),
        syntax=rec.get("syntax"), init=rec.get("init"), alias=rec.get("alias"),
        alias_signature=rec.get("alias_signature"),
        spaces=tuple((k, tuple(v)) for k, v in spaces.items()), reads_dst=bool(rec.get("reads_dst", False)),
        source_dtypes=tuple((k, tuple(v)) for k, v in mixed.items()))


def _parse_composite(path: Path, rec: dict, seen_names: dict) -> CompositeSpec:
    name = rec.get("name")
    for key in _COMPOSITE_FIELDS:
        if key not in rec:
            _fail(path, name, f"composite: missing field '{key}'")
    unknown = set(rec) - set(_COMPOSITE_FIELDS)
    if unknown:
        _fail(path, name, f"composite: unknown field(s) {sorted(unknown)}")
    if not (isinstance(rec["expands_to"], list) and rec["expands_to"]
            and all(isinstance(n, str) for n in rec["expands_to"])):
        _fail(path, name, "composite: expands_to must list the instructions its lowering emits (at least one)")
    missing = [n for n in rec["expands_to"] if n not in seen_names]
    if missing:
        _fail(path, name, f"composite: expands_to names {missing}, which are not instructions of the table")
    if not rec["builtin"].isidentifier() or keyword.iskeyword(rec["builtin"]):
        _fail(path, name, f"builtin '{rec['builtin']}' is not a Python identifier")
    return CompositeSpec(name, rec["builtin"], rec["signature"], tuple(rec["expands_to"]), rec["source"],
                         rec["doc"], path.name)


def load_isa_from(directory: Path) -> Isa:
    """Load and validate every ``*.toml`` in ``directory``; raise IsaError naming file and record."""
    directory = Path(directory)
    files = sorted(directory.glob("*.toml"))
    if not files:
        raise IsaError(f"{directory}: no *.toml instruction files")
    specs, version, composite_records = [], None, []
    seen_names, seen_opcodes = {}, {}
    for path in files:
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise IsaError(f"{path}: not valid TOML: {exc}") from None
        if "isa_version" in doc:
            if version not in (None, doc["isa_version"]):
                _fail(path, None, f"isa_version {doc['isa_version']} differs from {version}")
            version = doc["isa_version"]
        for rec in doc.get("instruction", []):
            spec = _parse_record(path, rec)
            if spec.name in seen_names:
                _fail(path, spec.name, f"name already defined in {seen_names[spec.name]}")
            if spec.opcode in seen_opcodes:
                _fail(path, spec.name, f"opcode 0x{spec.opcode:02X} already used by {seen_opcodes[spec.opcode]}")
            seen_names[spec.name] = path.name
            seen_opcodes[spec.opcode] = spec.name
            specs.append(spec)
        composite_records += [(path, rec) for rec in doc.get("composite", [])]
    if version is None:
        raise IsaError(f"{directory}: no file declares isa_version")
    specs.sort(key=lambda s: s.opcode)
    composites = tuple(_parse_composite(path, rec, seen_names) for path, rec in composite_records)
    isa = Isa(version=str(version), specs=tuple(specs), files=tuple(p.name for p in files), composites=composites)
    taken, names = set(isa.builtins()), set(seen_names)
    for c in composites:
        if c.name in names or c.builtin in taken:
            _fail(c.source_file, c.name, f"composite: the name '{c.name}' or builtin '{c.builtin}' is already the "
                                         "table's")
        taken.add(c.builtin)
        names.add(c.name)
    for bname, group in isa.builtins().items():
        sigs = {isa.signature_of(s, bname) for s in group}
        if len(sigs) > 1:
            _fail(group[0].source_file, group[0].name,
                  f"builtin '{bname}' has different signatures {sorted(sigs)} across instructions")
    return isa


@functools.lru_cache(maxsize=1)
def load_isa() -> Isa:
    """The ISA shipped with pypto_sim, loaded and validated once per process."""
    return load_isa_from(data_dir("isa"))
