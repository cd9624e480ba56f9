"""Compile-time values the kernel compiler manipulates while lowering Python to PTO IR."""
from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import DType
from ..ir import Reg


@dataclass(frozen=True)
class Const:
    """A Python constant known at compile time. ``weak``: a literal that adopts the other
    operand's dtype (``x * 2.0`` stays float16 when x is float16), as in Triton."""

    value: object
    dtype: DType
    weak: bool = True


@dataclass(frozen=True)
class Val:
    """A value held in a register."""

    reg: Reg

    @property
    def dtype(self) -> DType:
        return self.reg.dtype

    @property
    def uniform(self) -> bool:
        return self.reg.uniform


@dataclass(frozen=True)
class Ptr:
    """A pointer: a device tensor (space 'hbm', slot = tensor argument index) or an alloc_local
    buffer (space 'l1', slot = buffer index), plus an element offset (Const or int32 Val)."""

    space: str
    slot: int
    dtype: DType
    name: str
    offset: object
    count: int = 0       # l1 buffers: element count (known at compile time)
    base: int = 0        # l1 buffers: word offset in the block's L1 area
    # written `a[i]`: an address where a pointer is expected (pto.load(a[i]), a[i] = v), the
    # element's value everywhere else (x = a[i], a[i] * 2), as CUDA and Triton users read it
    indexed: bool = False
    tile: object = None  # a typed tile of pto.alloc_tile: its TileInfo (space, shape, valid region)
    row_stride: int = 0  # a 2-D tensor argument: elements between rows (a[r, c]); 0: 1-D


@dataclass(frozen=True)
class TileInfo:
    """What pto.alloc_tile knows of a typed tile: memory space, static shape, layout, and the
    valid region (Const or uniform Val operands) that instructions act on."""

    loc: str
    rows: int
    cols: int
    layout: str            # "row" (RowMajor) or "col" (ColMajor)
    valid_rows: object
    valid_cols: object
    pitch: int = 0         # words from row to row when not cols (a tsubview narrower than its tile)
    # a view of another dtype's words (pto.treshape(..., dtype=)): the dtype the words hold;
    # each element is itemsize / storage.itemsize of them (None: the tile's own dtype)
    storage: object = None
    # allocated with valid= (pto-isa's Tile<..., DYNAMIC, DYNAMIC>, whose valid region the header
    # code may set chunk by chunk), not a tile whose valid region is its static shape
    dynamic: bool = False

    @property
    def row_pitch(self) -> int:
        """Words from one row of the tile to the next (ir.program.LocalBuffer.row_pitch's rule)."""
        return self.pitch or self.cols

    @property
    def contiguous(self) -> bool:
        """True when the rows follow each other in memory (every tile but a narrow window)."""
        return self.pitch in (0, self.cols)

    @property
    def full(self) -> bool:
        """True when the valid region is the whole tile (known at compile time)."""
        return (isinstance(self.valid_rows, Const) and int(self.valid_rows.value) == self.rows
                and isinstance(self.valid_cols, Const) and int(self.valid_cols.value) == self.cols)


@dataclass(frozen=True)
class DTypeRef:
    """A dtype used as a value in kernel code (``pto.float16``)."""

    dtype: DType


@dataclass(frozen=True)
class ModuleRef:
    """A Python module referenced from kernel code (``pto``, ``math``, ``np``)."""

    module: object


@dataclass(frozen=True)
class PyCallable:
    """A Python builtin the compiler understands (min, max, abs, range, float, int, len)."""

    name: str


@dataclass
class HomeVar:
    """A variable assigned in more than one place: every assignment writes its home register."""

    reg: Reg
    line: int


@dataclass
class PtrVar:
    """A pointer variable assigned in more than one place: fixed base, offset in a register."""

    proto: Ptr
    reg: Reg
    line: int


class _NoneValue:
    """Python's None inside kernel code (``pto.fma(None, x, y, z)``)."""

    def __repr__(self):
        return "None"


NONE = _NoneValue()


@dataclass(frozen=True)
class Text:
    """A string literal: only meaningful where a builtin takes a name (a pipe, a stage)."""

    value: str


@dataclass(frozen=True)
class ConstTuple:
    """A tuple of compile-time constants (a literal or a module-level tuple of numbers):
    indexable (a runtime index becomes a select chain), iterable by an unrolled for, len()."""

    items: tuple


@dataclass(frozen=True)
class LocalArray:
    """``pto.local_array(n, dtype)``: n consecutive lane slots (first), one array per lane."""

    first: Reg
    n: int
    dtype: DType
    name: str
