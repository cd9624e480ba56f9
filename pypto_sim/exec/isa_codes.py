"""The executor's codes for ISA records and dtypes, derived from the table (isa/*.toml) and
dtypes.py: which runner a tile instruction takes, how a dtype's bytes hold a value in GM, which
dtypes compute by integer semantics, a family's number. Plain Python: exec/compiled/isa_constants.py
turns them into the compiled modules' constants."""
from __future__ import annotations

from .. import dtypes
from ..isa import FAMILIES
from ..isa.tile_roles import FAMILY_ROLES

TILE_KINDS = ("none", "load", "store", "mma", "binary", "unary", "scalar", "reduce", "expand", "expand_op",
              "col_reduce", "col_expand_op", "fill", "col_expand", "convert")


# the families whose runner is the family itself ("tile_col_reduce" -> "col_reduce"): those the
# article's tile API runs (their descriptors' lane flag) but the ALU's, whose runner its operands pick
_SAME_KIND_FAMILIES = tuple(f for f, roles in FAMILY_ROLES.items() if roles.lane and f != "tile_alu")


def tile_kind(spec) -> str:
    """How the functional runner calls a tile instruction, from its ISA record."""
    if spec.family in _SAME_KIND_FAMILIES:
        return spec.family.removeprefix("tile_")
    if spec.family == "tile_alu":
        if any(o.name == "mode" for o in spec.value_operands):
            return "convert"       # TCVT (AI-core kernels have their own functional runner)
        n_tiles = sum(1 for o in spec.value_operands if o.kind == "tile")
        if n_tiles == 3:
            return "binary"
        if n_tiles == 1:
            return "fill"
        return "scalar" if any(o.name == "scalar" for o in spec.value_operands) else "unary"
    return "none"


# the shape operands whose product is the words each tile operand of a lane tile instruction covers,
# per runner kind: {tile operand's name or position: (shape operand names)}. The timing model's
# dispatch and the functional runner bound each tile operand by these, and each shape operand must
# be positive on its own (two negative sizes multiply to a positive count)
_N = ("n",)
_RC = ("rows", "cols")
_TILE_DIMS = {
    "load": {0: _RC}, "store": {1: _RC},
    "mma": {0: ("m", "n"), 1: ("m", "k"), 2: ("k", "n")},
    "binary": {0: _N, 1: _N, 2: _N}, "unary": {0: _N, 1: _N}, "scalar": {0: _N, 1: _N},
    "convert": {0: _N, 1: _N}, "fill": {0: _N},
    "reduce": {0: ("rows",), 1: _RC}, "expand": {0: _RC, 1: ("rows",)},
    "col_reduce": {0: ("cols",), 1: _RC}, "col_expand": {0: _RC, 1: ("cols",)},
    "expand_op": {0: _RC, 1: _RC, 2: ("rows",)}, "col_expand_op": {0: _RC, 1: _RC, 2: ("cols",)},
}


def tile_dims(spec) -> tuple:
    """Per value operand of a lane tile instruction: the positions of the shape operands whose
    product is the words it covers (one or two), or () when it is not a bounded tile operand."""
    key = (spec.name, spec.opcode)
    if key not in _TILE_DIMS_OF:
        table = _TILE_DIMS.get(tile_kind(spec), {})
        names = [o.name for o in spec.value_operands]
        _TILE_DIMS_OF[key] = tuple(tuple(names.index(d) for d in table[j]) if j in table else ()
                                   for j in range(len(names)))
    return _TILE_DIMS_OF[key]


_TILE_DIMS_OF: dict = {}


def gm_kind(dtype) -> int:
    """The executor's code for how dtype's bytes hold a value in GM: 0 an IEEE float, 1 a
    two's complement int, 2 an unsigned int (compiled/gm_bytes.py's gm_load), 3 a minifloat's codes
    (no kernel reads or writes them on A2/A3: the frontend refuses them; exec/gm.py decodes
    them for the host)."""
    return ("float", "int", "uint", "mini").index(dtype.encoding.split(":")[0])


def gm_mantissa(dtype) -> int:
    """Mantissa bits of a float dtype's GM encoding (0 for ints)."""
    kind, _, bits = dtype.encoding.partition(":")
    return int(bits) if kind == "float" else 0


def is_integer(dtype) -> bool:
    """Whether tile instructions compute dtype by integer semantics (the ISA table's ``int``
    expressions): every integer dtype but bool."""
    return not dtype.is_float and dtype != dtypes.bool_


def family_code(name: str) -> int:
    """Executor family number of a family name (F_ALU = 0, ...)."""
    return FAMILIES.index(name)
