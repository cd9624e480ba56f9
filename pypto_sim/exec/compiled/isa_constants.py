"""The compiled modules' constants, each derived here from the ISA table (isa/*.toml), dtypes.py,
the program encoding (ir/program.py) and record_why.py: opcodes, families, dtype codes, TCVT's
modes, the encoding's columns, and the per-opcode and per-dtype arrays the kernels index.

numba freezes a module's globals into its compiled code, so these are compile-time constants of
every compiled module that imports them; exec/jit_cache.py keys numba's on-disk cache on their
values (``values_digest``), so a changed table recompiles what uses them. A name the kernels use
that the table no longer defines fails here, at import, naming the instruction.
"""
import numpy as np

from ... import dtypes
from ...ir.program import C_AUX, C_DST, C_DTYPE, C_LINE, C_OP, C_SRC, C_UNIFORM, INT_SEM_INT32, INT_SEM_INT64
from ...isa import PIPES, load_isa
from .. import record_why
from ..isa_codes import TILE_KINDS, family_code, gm_kind, gm_mantissa, is_integer, tile_dims, tile_kind

__all__ = ["C_AUX", "C_DST", "C_DTYPE", "C_LINE", "C_OP", "C_SRC", "C_UNIFORM", "INT_SEM_INT32", "INT_SEM_INT64"]

_ISA = load_isa()


def _opcode(name: str) -> int:
    """The opcode of instruction name; a KeyError naming it if the table has none."""
    spec = _ISA.by_name.get(name)
    if spec is None:
        raise KeyError(f"exec/compiled/isa_constants.py uses instruction {name!r}, which isa/*.toml no "
                       "longer defines: add it back or remove its use from the compiled modules")
    return spec.opcode


# The lane bounds checks (memcheck), always compiled in. Only benchmarks/checks.py's child process
# sets this False, before any compiled module is imported, to measure what the check costs (the
# cache digest covers the value, so that build is cached apart).
BOUNDS_CHECK = True

# opcodes the kernels name
OP_BALLOT = _opcode("BALLOT")
OP_BARRIER_BLOCK = _opcode("BARRIER_BLOCK")
OP_SET_FLAG = _opcode("SET_FLAG")
OP_WAIT_FLAG = _opcode("WAIT_FLAG")
OP_TSUBRELUCONV = _opcode("TSUBRELUCONV")
OP_BARRIER_BLOCK_AND = _opcode("BARRIER_BLOCK_AND")
OP_BARRIER_BLOCK_COUNT = _opcode("BARRIER_BLOCK_COUNT")
OP_BARRIER_BLOCK_OR = _opcode("BARRIER_BLOCK_OR")
OP_BLOCK_DIM = _opcode("BLOCK_DIM")
OP_BLOCK_ID = _opcode("BLOCK_ID")
OP_BREAK = _opcode("BREAK")
OP_BRK_UNLESS = _opcode("BRK_UNLESS")
OP_CAST = _opcode("CAST")
OP_CONTINUE = _opcode("CONTINUE")
OP_ELSE = _opcode("ELSE")
OP_ENDIF = _opcode("ENDIF")
OP_ENDLOOP = _opcode("ENDLOOP")
OP_GLOBAL_ID = _opcode("GLOBAL_ID")
OP_GRID_DIM = _opcode("GRID_DIM")
OP_IF = _opcode("IF")
OP_LANE_ID = _opcode("LANE_ID")
OP_LOAD = _opcode("LOAD")
OP_LOCAL_ID = _opcode("LOCAL_ID")
OP_LOCAL_LOAD = _opcode("LOCAL_LOAD")
OP_LOOP = _opcode("LOOP")
OP_LOOP_CONT = _opcode("LOOP_CONT")
OP_MATCH_ALL = _opcode("MATCH_ALL")
OP_MATCH_ANY = _opcode("MATCH_ANY")
OP_RET = _opcode("RET")
OP_SHFL_DOWN = _opcode("SHFL_DOWN")
OP_SHFL_IDX = _opcode("SHFL_IDX")
OP_SHFL_UP = _opcode("SHFL_UP")
OP_STORE_L1 = _opcode("STORE_L1")
OP_VOTE_ALL = _opcode("VOTE_ALL")
OP_VOTE_ANY = _opcode("VOTE_ANY")
OP_VOTE_EQ = _opcode("VOTE_EQ")

# instruction families (isa.FAMILIES)
F_ALLOC = family_code("alloc")
F_ALU = family_code("alu")
F_ATOMIC = family_code("atomic")
F_CHECK = family_code("check")
F_CONTROL = family_code("control")
F_FMA_STORE = family_code("fma_store")
F_ID = family_code("id")
F_LOAD = family_code("load")
F_LOCAL = family_code("local")
F_STORE = family_code("store")
F_SYNC = family_code("sync")
F_WARP = family_code("warp")

# dtype codes (dtypes.py)
DT_BFLOAT16 = dtypes.bfloat16.code
DT_BOOL = dtypes.bool_.code
DT_FLOAT16 = dtypes.float16.code
DT_FLOAT32 = dtypes.float32.code
DT_FLOAT64 = dtypes.float64.code
DT_INT16 = dtypes.int16.code
DT_INT32 = dtypes.int32.code
DT_INT64 = dtypes.int64.code
DT_INT8 = dtypes.int8.code
DT_UINT16 = dtypes.uint16.code
DT_UINT32 = dtypes.uint32.code
DT_UINT8 = dtypes.uint8.code

# TCVT's rounding modes (dtypes.CVT_MODES), its saturation-off and its integral flags
CVT_RINT = dtypes.CVT_MODES.index("rint")
CVT_ROUND = dtypes.CVT_MODES.index("round")
CVT_FLOOR = dtypes.CVT_MODES.index("floor")
CVT_CEIL = dtypes.CVT_MODES.index("ceil")
CVT_TRUNC = dtypes.CVT_MODES.index("trunc")
CVT_ODD = dtypes.CVT_MODES.index("odd")
CVT_SAT_OFF = dtypes.CVT_SAT_OFF
CVT_INTEGRAL = dtypes.CVT_INTEGRAL

# the AI-core records' why field (record_why.py)
WHY_MISSED = record_why.WHY_MISSED
WHY_SHARED = record_why.WHY_SHARED
WHY_HBM = record_why.WHY_HBM

# how the functional runner calls a tile instruction (isa_codes.tile_kind)
# PIPE_S: the scalar unit, which issues every instruction of its unit (isa/table.py's PIPES order)
PIPE_SCALAR = PIPES.index("scalar")

TK_NONE = TILE_KINDS.index("none")
TK_LOAD = TILE_KINDS.index("load")
TK_STORE = TILE_KINDS.index("store")
TK_MMA = TILE_KINDS.index("mma")
TK_BINARY = TILE_KINDS.index("binary")
TK_UNARY = TILE_KINDS.index("unary")
TK_SCALAR = TILE_KINDS.index("scalar")
TK_REDUCE = TILE_KINDS.index("reduce")
TK_EXPAND = TILE_KINDS.index("expand")
TK_EXPAND_OP = TILE_KINDS.index("expand_op")
TK_COL_REDUCE = TILE_KINDS.index("col_reduce")
TK_COL_EXPAND_OP = TILE_KINDS.index("col_expand_op")
TK_FILL = TILE_KINDS.index("fill")
TK_COL_EXPAND = TILE_KINDS.index("col_expand")
TK_CONVERT = TILE_KINDS.index("convert")


def _per_opcode(value, default, dtype) -> np.ndarray:
    out = [default] * (max(s.opcode for s in _ISA.specs) + 1)
    for spec in _ISA.specs:
        out[spec.opcode] = value(spec)
    return np.array(out, dtype=dtype)


def _reduce_init(spec) -> float:
    """A reduction's starting value (the table's ``init`` expression, e.g. -np.inf), else 0."""
    return float(eval(spec.init, {"np": np})) if spec.init else 0.0


def _per_dtype(value) -> np.ndarray:
    return np.array([value(d) for d in sorted(dtypes.ALL, key=lambda d: d.code)], dtype=np.int64)


FAMILY = _per_opcode(lambda s: family_code(s.family), 0, np.int64)
TILE_KIND = _per_opcode(lambda s: TILE_KINDS.index(tile_kind(s)), 0, np.int64)


def _dims_row(spec) -> list:
    """tile_dims(spec) as 6 x 2 positions, -1 for none (the first 6 value operands, as _run_tile reads)."""
    rows = [[-1, -1] for _ in range(6)]
    for j, dims in enumerate(tile_dims(spec)[:6]):
        rows[j][:len(dims)] = dims
    return rows


# per opcode and tile operand j < 6: the positions of the shape operands whose product is its words
TILE_DIMS = _per_opcode(_dims_row, [[-1, -1]] * 6, np.int64)
REDUCE_INIT = _per_opcode(_reduce_init, 0.0, np.float64)
ITEMSIZE = _per_dtype(lambda d: d.itemsize)
GM_KIND = _per_dtype(gm_kind)        # 0 IEEE float, 1 two's complement, 2 unsigned, 3 minifloat codes
GM_MBITS = _per_dtype(gm_mantissa)
INT_SEM = _per_dtype(lambda d: int(is_integer(d)))   # tile kernels compute these by the int expressions
