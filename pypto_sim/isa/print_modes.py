"""TPRINT's operand codes and names (pto-isa 3186c381: PrintFormat in include/pto/common/type.hpp,
GetDTypeName in include/pto/npu/a2a3/TPrint.hpp, GetLayoutName in include/pto/common/memory.hpp),
shared by the lowering (frontend/print_builtins.py) and the printer (exec/tile_print.py).

Plain tuples and dicts."""
# PrintFormat: Width8_Precision4 = 0, Width8_Precision2 = 1, Width10_Precision6 = 2
FORMATS = ("Width8_Precision4", "Width8_Precision2", "Width10_Precision6")
# GetDTypeName: the dtypes TPRINT prints (PrintValue's static_assert refuses the others)
DTYPE_NAMES = {"uint32": "uint32", "int32": "int32", "uint16": "uint16", "int16": "int16", "uint8": "uint8",
               "int8": "int8", "float32": "float32", "float16": "float16"}
# GetLayoutName(BFractal, SFractal) of each Vec tile layout (RowMajor ND, ColMajor DN, the NZ Vec
# tile: BLayout::ColMajor + SLayout::RowMajor)
LAYOUT_NAMES = {"row": "ND", "col": "DN", "nz": "Nz"}
LAYOUT_CODES = tuple(LAYOUT_NAMES)
