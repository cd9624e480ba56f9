"""The `oob` and `atomic` operands of the indexed GM transfers (isa/54_gm_index.toml MGATHER,
MGATHER_ELEM, MSCATTER, MSCATTER_ELEM) as data, for the frontend and both executors
(exec/compiled/gm_index.py compiles with these, so this module imports nothing).

pto-isa's template arguments (include/pto/common/type.hpp): GatherOOB {Undefined, Clamp, Wrap,
Zero} and ScatterOOB {Undefined, Skip, Clamp, Wrap}, applied by A2/A3's mgather_remap
(include/pto/npu/a2a3/MGather.hpp) and mscatter_remap (MScatter.hpp) to the index read as
uint32 against the table's cap (its rows, or its elements for Coalesce::Elem):

- UNDEFINED: the index is used as it is; one past the cap reads or writes whatever GM holds
  there on the device, so the simulator stops the launch with an OutOfBoundsError instead;
- CLAMP: cap - 1 for an index at or past the cap;
- WRAP: index % cap;
- DROP: GatherOOB::Zero (the element or row becomes 0) / ScatterOOB::Skip (nothing is written).
"""
UNDEFINED = 0
CLAMP = 1
WRAP = 2
DROP = 3
# the names a kernel passes as oob=, by instruction direction
GATHER_OOB = {"undefined": UNDEFINED, "clamp": CLAMP, "wrap": WRAP, "zero": DROP}
SCATTER_OOB = {"undefined": UNDEFINED, "skip": DROP, "clamp": CLAMP, "wrap": WRAP}
# ScatterAtomicOp::Add, the atomic operand's 1; the dtypes IsValidMScatterAtomic takes (MScatter.hpp)
ATOMIC_ADD = 1
ATOMIC_DTYPES = ("float32", "int32", "float16", "bfloat16", "int16", "int8")
# the element dtypes IsValidMGatherDType / IsValidMScatterDType take, and the index dtypes
DATA_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16", "float32")
INDEX_DTYPES = ("int32", "uint32")


def remap(index: int, cap: int, oob: int) -> tuple:
    """(the index the transfer uses, whether it moves the element or row) for a raw index
    word (any integer: read as uint32, as the device's static_cast<uint32_t>) under policy
    oob against cap, as mgather_remap / mscatter_remap compute it. UNDEFINED returns the index
    as it is; the caller decides what an index at or past the cap does."""
    u = int(index) & 0xFFFFFFFF
    if oob == CLAMP:
        return (cap - 1 if u >= cap else u), True
    if oob == WRAP:
        return u % cap, True
    if oob == DROP:
        return u, u < cap
    return u, True
