"""The ALU dispatch generated from the ISA table's expressions (exec/alu_source.py), loaded
from the cache directory under its hash: alu_float, alu_int, alu_lanes and the vector tile loops.
GENERATED_FILE tells exec/jit_cache.py which file the modules importing these depend on."""
from ..alu_source import generate_alu_source
from ..jit_cache import load_generated

_GENERATED = load_generated("alu", generate_alu_source())
GENERATED_FILE = _GENERATED.__file__

alu_float = _GENERATED.alu_float
alu_int = _GENERATED.alu_int
alu_lanes = _GENERATED.alu_lanes
elementwise_float = _GENERATED.elementwise_float
fold_float = _GENERATED.fold_float
expand_float = _GENERATED.expand_float
