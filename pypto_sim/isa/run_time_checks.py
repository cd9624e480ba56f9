"""The rules a CHECK instruction (isa/20_memory_sync_control.toml) tests at run time, by its
aux[0]: what the rule is and what to do when it fails. The compiler reports the same rules as
compile errors when their operands are constants; CHECK is their run-time form (pto-isa's
PTO_ASSERT, include/pto/common/debug.h)."""
from typing import NamedTuple

from ..errors import KernelValueError, OutOfBoundsError

VALID_REGIONS_MATCH = 0
FIELD_HOLDS_VALUE = 1
MATMUL_K_AGREES = 2
PARAMETER_ROWS = 3
NONZERO_STEP = 4
TUPLE_INDEX = 5
ROOT_INDEX = 6



class Rule(NamedTuple):
    """A CHECK rule: what it is, what to do when it fails, the error class it raises (the class
    Python raises for the same mistake, where there is one) and how the failed value reads
    (a format of value, lo and hi; None: outside [lo, hi], or != lo when lo == hi)."""
    what: str
    hint: str
    error: type = OutOfBoundsError
    found: str | None = None


# by rule number (aux[0])
RULES = (
    Rule("A2/A3 asserts that the valid regions of an op's tiles match (e.g. TADD_IMPL, "
         "include/pto/npu/a2a3/TAdd.hpp)",
         "give the tiles the same valid region (valid=(rows, cols) of pto.alloc_tile / pto.tsubview)"),
    Rule("the value is packed into a bit field of a register, and a larger one would spill into the "
         "next field",
         "keep the run-time value within the field's range"),
    Rule("TMATMUL takes k from left's valid columns and TGEMV from right's valid rows "
         "(include/pto/npu/a2a3/TMatmul.hpp), so where they differ one of them is read outside its "
         "valid region",
         "give left valid=(m, k) and right valid=(k, n) with the same k"),
    Rule("an operand read one value a row (TDEQUANT's scale and offset) must hold a value for every "
         "valid row of dst; a read past it would take another tile's words",
         "give the parameter tiles at least as many rows as dst's valid region"),
    Rule("range() raises ValueError for a zero step, as Python's does",
         "give range() a step that is not zero", KernelValueError, "it is 0"),
    Rule("a tuple of n constants takes indices -n .. n - 1, as Python's tuples do (IndexError)",
         "keep the index within the tuple"),
    Rule("pto-isa's collectives assert that the group's root is one of its ranks (PTO_ASSERT(rootIdx >= 0 && "
         "rootIdx < nranks, \"rootIdx must be in range [0, nranks)!\"), include/pto/comm/a2a3/TBroadCast.hpp, "
         "TGather.hpp, TScatter.hpp, TReduce.hpp)",
         "give pto.parallel_group the calling rank's index, 0 .. nranks - 1"),
)


def check_error(ins, info, where: str, **location):
    """The error of CHECK instruction ins (an ir Instr) that failed with info = (lane, value, lo,
    hi), at `where` (the unit or warp and block): its rule's class (OutOfBoundsError, or
    KernelValueError for range()'s zero step). Its comment is "<call>: <requirement>"; location:
    the error's kernel, file, block, warp and lane fields."""
    value, lo, hi = (int(x) for x in info[1:4])
    rule = RULES[int(ins.aux[0])]
    call, _, requirement = ins.comment.rpartition(": ")
    found = (rule.found.format(value=value, lo=lo, hi=hi) if rule.found else f"{value} != {lo}" if lo == hi
             else f"{value} is outside [{lo}, {hi}]")
    return rule.error(f"{call or 'CHECK'} at line {ins.line} on {where}: {requirement} fails ({found}): "
                      f"{rule.what}", line=ins.line, offset=value, count=None, hint=rule.hint, **location)
