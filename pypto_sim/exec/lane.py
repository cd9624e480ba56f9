"""Build (once per process) and load the numba lane executor.

The executor's source is ``lane_template.py`` with ISA-derived constants prepended and the
per-opcode semantics generated from the table's ``float``/``int`` expressions appended. The
result is written to the cache directory as ``lane_exec_<hash>.py`` (the hash covers the ISA,
the template and the numba version) and imported from there, so numba's ``cache=True`` keeps
compiled machine code across processes and can never pick up a stale build.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
from pathlib import Path

import numba

try:        # numba's private table of njit options (numba_allows_nrt_off)
    from numba.core.cpu import CPUTargetOptions
except ImportError:
    CPUTargetOptions = None

from .. import dtypes
from ..ir.program import C_AUX, C_DST, C_DTYPE, C_LINE, C_OP, C_SRC, C_UNIFORM, INT_SEM_INT64
from ..isa import FAMILIES, load_isa
from . import record_why
from .tile_loops import tile_loops_source

_TEMPLATE = Path(__file__).with_name("lane_template.py")
_GM = Path(__file__).with_name("gm_template.py")
_SIMT = Path(__file__).with_name("simt_template.py")
_TILES = Path(__file__).with_name("tile_template.py")
_SORT = Path(__file__).with_name("sort_template.py")
_CONV = Path(__file__).with_name("conv_template.py")
_MATMUL = Path(__file__).with_name("matmul_template.py")
_FUNCTIONAL = Path(__file__).with_name("functional_template.py")
_ENGINE_PARTS = Path(__file__).with_name("engine_parts_template.py")
_TIMING = Path(__file__).with_name("timing_template.py")
_L2 = Path(__file__).with_name("l2_template.py")
_AICORE_STEPS = Path(__file__).with_name("aicore_steps_template.py")
_AICORE_SYNC = Path(__file__).with_name("aicore_sync_template.py")
_AICORE_ENGINE = Path(__file__).with_name("aicore_engine_template.py")
_REPLAY = Path(__file__).with_name("replay_template.py")
TILE_KINDS = ("none", "load", "store", "mma", "binary", "unary", "scalar", "reduce", "expand", "expand_op",
              "col_reduce", "col_expand_op", "fill", "col_expand", "convert")


def tile_kind(spec) -> str:
    """How the functional runner calls a tile instruction, from its ISA record."""
    if spec.family == "tile_load":
        return "load"
    if spec.family == "tile_store":
        return "store"
    if spec.family == "tile_mma":
        return "mma"
    if spec.family == "tile_reduce":
        return "reduce"
    if spec.family == "tile_expand":
        return "expand"
    if spec.family == "tile_expand_op":
        return "expand_op"
    if spec.family == "tile_col_reduce":
        return "col_reduce"
    if spec.family == "tile_col_expand":
        return "col_expand"
    if spec.family == "tile_col_expand_op":
        return "col_expand_op"
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


def _float_literal(x: float) -> str:
    if x != x:
        return "np.nan"
    if x in (float("inf"), float("-inf")):
        return "np.inf" if x > 0 else "-np.inf"
    return repr(x)


def gm_kind(dtype) -> int:
    """The executor's code for how dtype's bytes hold a value in GM: 0 an IEEE float, 1 a
    two's complement int, 2 an unsigned int (lane_template.gm_load), 3 a minifloat's codes
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


@functools.lru_cache(maxsize=1)
def numba_allows_nrt_off() -> bool:
    """Whether this numba accepts ``_nrt=False`` (compile without reference counting: the
    executor's and the timing engine's hot functions use it, docs/design.md). It is a private
    option; a numba without it gets the same functions with reference counting (slower)."""
    return CPUTargetOptions is not None and hasattr(CPUTargetOptions, "_nrt")


def generate_source(bounds_check: bool = True) -> str:
    """The complete executor module source for the current ISA table.

    bounds_check=False compiles the lane bounds checks out; it exists only so that
    benchmarks/checks.py can measure what the always-on memcheck costs."""
    isa = load_isa()
    size = max(s.opcode for s in isa.specs) + 1
    family = [0] * size
    head = ["# Generated by pypto_sim.exec.lane from isa/*.toml and lane_template.py. Do not edit.\n"]
    head.append(f"BOUNDS_CHECK = {bool(bounds_check)}\n")
    for name, value in (("C_OP", C_OP), ("C_DST", C_DST), ("C_SRC", C_SRC), ("C_DTYPE", C_DTYPE),
                        ("C_AUX", C_AUX), ("C_UNIFORM", C_UNIFORM), ("C_LINE", C_LINE)):
        head.append(f"{name} = {value}\n")
    for d in dtypes.ALL:
        head.append(f"DT_{d.name.upper().rstrip('_')} = {d.code}\n")
    for i, mode in enumerate(dtypes.CVT_MODES):             # TCVT's mode operand (dtypes.py)
        head.append(f"CVT_{mode.upper()} = {i}\n")
    head.append(f"CVT_SAT_OFF = {dtypes.CVT_SAT_OFF}\n")
    for name in ("WHY_MISSED", "WHY_SHARED", "WHY_HBM"):   # the why field's packing
        head.append(f"{name} = {getattr(record_why, name)}\n")
    for i, fam in enumerate(FAMILIES):
        head.append(f"F_{fam.upper()} = {i}\n")
    for spec in isa.specs:
        head.append(f"OP_{spec.name} = {spec.opcode}\n")
        family[spec.opcode] = family_code(spec.family)
    body = _TEMPLATE.read_text(encoding="utf-8")
    # constants that need numpy go after the template's imports
    kinds = [0] * size
    inits = [0.0] * size
    for spec in isa.specs:
        kinds[spec.opcode] = TILE_KINDS.index(tile_kind(spec))
        if spec.init:
            inits[spec.opcode] = float(eval(spec.init, {"np": __import__("numpy")}))
    for i, kind in enumerate(TILE_KINDS):
        head.append(f"TK_{kind.upper()} = {i}\n")
    init_text = ", ".join(_float_literal(x) for x in inits)
    by_code = sorted(dtypes.ALL, key=lambda d: d.code)
    arrays = (f"FAMILY = np.array({family}, dtype=np.int64)\n"
              f"TILE_KIND = np.array({kinds}, dtype=np.int64)\n"
              f"REDUCE_INIT = np.array([{init_text}], dtype=np.float64)\n"
              f"ITEMSIZE = np.array({[d.itemsize for d in by_code]}, dtype=np.int64)\n"
              # GM encodings (dtypes.DType.encoding): 0 IEEE float, 1 two's complement, 2 unsigned
              f"GM_KIND = np.array({[gm_kind(d) for d in by_code]}, dtype=np.int64)\n"
              f"GM_MBITS = np.array({[gm_mantissa(d) for d in by_code]}, dtype=np.int64)\n"
              # the integer dtypes (tile kernels compute them by the table's int expressions,
              # wrapped to the dtype by round_to)
              f"INT_SEM = np.array({[int(is_integer(d)) for d in by_code]}, dtype=np.int64)\n")
    marker = "ST_OK = 0\n"
    body = body.replace(marker, arrays + "\n" + marker, 1)
    tail = ["\n\n# ---- semantics generated from the ISA table's expressions ----\n"]
    for kind, attr, default in (("float", "float_expr", "np.nan"), ("int", "int_expr", "0")):
        tail.append("\n\n@njit(cache=True, error_model=\"numpy\")\n")
        tail.append(f"def alu_{kind}(op, a, b, c, bits=32):\n")
        tail.append(f"    \"\"\"Scalar {kind} semantics of every ALU instruction, by opcode (bits: the "
                    f"operands' width, 64 for int64 words).\"\"\"\n")
        for spec in isa.specs:
            expr = getattr(spec, attr)
            # tile_alu / tile_reduce included: tile_elementwise and tile_row_reduce call
            # alu_float with their opcodes; without them every tile op returned NaN
            if expr and spec.family in ("alu", "fma_store", "tile_alu", "tile_reduce", "tile_expand_op",
                                        "tile_col_reduce", "tile_col_expand_op", "tile_cmp", "tile_sel",
                                        "tile_row_arg", "tile_col_arg", "atomic"):
                tail.append(f"    if op == {spec.opcode}:  # {spec.name}\n        return {expr}\n")
        tail.append(f"    return {default}\n")
    tail.append(_alu_lanes_source(isa))
    tail.append(tile_loops_source(isa))
    # the appended templates' docstrings are dropped: one module docstring
    gm_bytes = _GM.read_text(encoding="utf-8").split('"""', 2)[2]
    simt = _SIMT.read_text(encoding="utf-8").split('"""', 2)[2]
    tiles = _TILES.read_text(encoding="utf-8").split('"""', 2)[2]
    sort = _SORT.read_text(encoding="utf-8").split('"""', 2)[2]
    conv = _CONV.read_text(encoding="utf-8").split('"""', 2)[2]
    matmul = _MATMUL.read_text(encoding="utf-8").split('"""', 2)[2]
    functional = _FUNCTIONAL.read_text(encoding="utf-8").split('"""', 2)[2]
    parts = _ENGINE_PARTS.read_text(encoding="utf-8").split('"""', 2)[2]
    timing = _TIMING.read_text(encoding="utf-8").split('"""', 2)[2]
    l2 = _L2.read_text(encoding="utf-8").split('"""', 2)[2]
    aicore_steps = _AICORE_STEPS.read_text(encoding="utf-8").split('"""', 2)[2]
    aicore_sync = _AICORE_SYNC.read_text(encoding="utf-8").split('"""', 2)[2]
    aicore_engine = _AICORE_ENGINE.read_text(encoding="utf-8").split('"""', 2)[2]
    replay = _REPLAY.read_text(encoding="utf-8").split('"""', 2)[2]
    source = ("".join(head) + body + "\n\n# ---- GM bytes ----" + gm_bytes
              + "\n\n# ---- SIMT families ----" + simt
              + "\n\n# ---- tile instructions ----" + tiles
              + "\n\n# ---- the tile sorts ----" + sort
              + "\n\n# ---- img2col ----" + conv
              + "\n\n# ---- the cube's matmul ----" + matmul + "".join(tail)
              + "\n\n# ---- functional-only runner ----"
              + functional + "\n\n# ---- the compiled timing engine's parts ----" + parts
              + "\n\n# ---- the L2's lines (timing/l2.py) ----" + l2
              + "\n\n# ---- the AI core's step functions (timing/aicore_pipes.py) ----" + aicore_steps
              + "\n\n# ---- the AI core's flags, barriers and cross-core signals ----" + aicore_sync
              + "\n\n# ---- the AI core's event loop (timing/aicore_fast.py) ----" + aicore_engine
              + "\n\n# ---- the AI core's values replay (timing/aicore_replay.py) ----" + replay
              + "\n\n# ---- the timing model's event loop (timing/fast.py) ----" + timing)
    return source if numba_allows_nrt_off() else source.replace(", _nrt=False", "")


_LANE_LOOP = """    if op == {opcode} and int_sem == {int_sem}:  # {name}
        bits = {bits}
        for lane in range(32):
            if every or (mask >> lane) & 1:
                a = {conv}(regs[r0, lane] if r0 >= 0 else i0)
                b = {conv}(regs[r1, lane] if r1 >= 0 else i1)
                c = {conv}(regs[r2, lane] if r2 >= 0 else i2)
                regs[d, lane] = round_to(dt, {result})
        return ST_OK
"""


_CAST_LOOP = """    if op == OP_CAST:  # the source word is an int64's bits when int_sem == INT_SEM_INT64
        for lane in range(32):
            if every or (mask >> lane) & 1:
                regs[d, lane] = cast_word(dt, regs[r0, lane] if r0 >= 0 else i0, int_sem == {int64})
        return ST_OK
"""


def _alu_lanes_source(isa) -> str:
    """alu_lanes: for every ALU opcode and semantics, its own lane loop with the table's
    expression inlined, so the opcode is decided once per instruction, not once per lane.
    CAST has one loop for every semantics (cast_word)."""
    out = ['\n\n@njit(cache=True, error_model="numpy", _nrt=False)\n',
           "def alu_lanes(op, int_sem, d, dt, every, mask, r0, r1, r2, i0, i1, i2, regs):\n",
           '    """Execute ALU opcode op for the active lanes (all 32 when every)."""\n',
           _CAST_LOOP.format(int64=INT_SEM_INT64)]
    for spec in isa.specs:
        if spec.family != "alu" or spec.name == "CAST":
            continue
        if spec.int_expr:           # int64 operands: the words' bits, numba's wrapping int64
            out.append(_LANE_LOOP.format(opcode=spec.opcode, int_sem=INT_SEM_INT64, name=spec.name,
                                         conv="f64_bits", bits=64,
                                         result=f"int64_word(dt, {spec.int_expr})"))
        if spec.float_expr:
            out.append(_LANE_LOOP.format(opcode=spec.opcode, int_sem=0, name=spec.name, conv="", bits=0,
                                         result=f"({spec.float_expr})"))
        if spec.int_expr:
            out.append(_LANE_LOOP.format(opcode=spec.opcode, int_sem=1, name=spec.name,
                                         conv="np.int64", bits=32,
                                         result=f"np.float64(wrap_i32({spec.int_expr}))"))
    out.append("    return ST_OK\n")
    return "".join(out)


def cache_dir() -> Path:
    """Where generated executor modules (and numba's cache of them) live."""
    base = os.environ.get("PYPTO_SIM_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "pypto_sim"


def _unique_suffix() -> str:
    """A name part no other process or thread uses at the same time."""
    return f"{os.getpid()}.{threading.get_ident()}"


def _writable_dir() -> Path:
    tried = []
    for candidate in (cache_dir(), Path(tempfile.gettempdir()) / f"pypto_sim-{os.getuid()}"):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            probe = candidate / f".probe.{_unique_suffix()}"     # threads must not share it
            probe.write_text("ok")
            probe.unlink()
            return candidate
        except OSError as exc:
            tried.append(f"{candidate}: {exc.strerror or exc}")
            continue
    raise OSError("no writable cache directory for the lane executor (tried "
                  + "; ".join(tried) + "); set PYPTO_SIM_CACHE_DIR to a writable directory")


_BUILD_LOCK = threading.Lock()


def executor(bounds_check: bool = True):
    """The lane executor module (compiled once per process, cached on disk across processes).
    Safe to call from several threads at once: the first builds it, the others wait."""
    module = _EXECUTORS.get(bounds_check)
    if module is None:
        with _BUILD_LOCK:
            module = _EXECUTORS.get(bounds_check)
            if module is None:
                module = _EXECUTORS[bounds_check] = _build_executor(bounds_check)
    return module


_EXECUTORS: dict = {}       # the process's compiled executor modules, one per bounds_check


def _build_executor(bounds_check):
    source = generate_source(bounds_check)
    digest = hashlib.sha256((source + numba.__version__ + sys.version).encode()).hexdigest()[:16]
    directory = _writable_dir()
    path = directory / f"lane_exec_{digest}.py"
    if not path.exists():
        tmp = directory / f".{path.name}.{_unique_suffix()}.tmp"
        tmp.write_text(source, encoding="utf-8")
        os.replace(tmp, path)
    name = f"pypto_sim_lane_exec_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
