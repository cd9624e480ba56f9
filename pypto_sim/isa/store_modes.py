"""The tile_store family's `mode` operand as data (isa/30_tiles.toml TSTORE, isa/35_aicore.toml
TSTORE_ACC), for the frontend, both executors and the race check (exec/compiled/tiles.py
compiles with these, so this module imports nothing).

pto-isa's TSTORE template arguments (include/pto/common/pto_instr.hpp; A2/A3:
include/pto/npu/a2a3/TStore.hpp; its CPU simulation: include/pto/cpu/TStore.hpp and common.hpp):

- ATOMIC_ADD, AtomicType::AtomicAdd: each value, converted to GM's dtype, is added to the
  element GM holds, in that dtype (SetAtomicAdd: float32, float16, bfloat16, int32, int16,
  int8; the CPU simulation's AddToElement, `data[offset] += summand`), integers wrapping.
- RELU, ReluPreMode::NormalRelu (an Acc source only, the fixpipe's pre-stage): a value that is
  not positive becomes 0 before the conversion (common.hpp ConvertStoreValue: ReLU(value)).
"""
ATOMIC_ADD = 1
RELU = 2
# the GM dtypes SetAtomicAdd takes (tstore_common.hpp)
ATOMIC_DTYPES = ("float32", "float16", "bfloat16", "int32", "int16", "int8")
