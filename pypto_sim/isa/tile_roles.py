"""Each tile family's operand roles, by the operand names of its ISA records: which operand is
written, which tiles are read, which operands give the shape the operation covers, which
tile's dtype and shape price it. One descriptor per family, so that nothing else need know
operands by position: the compiler fills a missing shape from it (frontend/aicore_builtins.py),
the executor decodes instructions by it (exec/aicore_tiles.py), and through that decode the
timing model, its cost formulas, the race check and the functional runner read it.
tests/test_isa.py checks every name against the records of its family.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FamilyRoles:
    """What the operands of one tile family are, by their ISA names.

    dst: the tile written (None: a store, which writes GM). sources: the tiles read, in the
    order the family names them (a record need not have all: TMATMUL has no bias); a
    ``reads_dst`` record reads dst too. gm: the pointer operand of a GM transfer. shape: the
    operands giving (rows, cols) of the elements the operation covers, or ("n",) for a count
    of elements. data: the tile whose dtype and shape price the operation (the first of
    these names the record has). mask: the packed predicate tile, whose rows hold ``mstride``
    bytes. bounded: every tile must hold the shape (checked at dispatch; the mask rows x
    mstride bytes). scratch: pto-isa's tmp tile, written, in the records that have one (TCOLSUM
    but not TCOLMAX)."""

    dst: str | None
    sources: tuple
    shape: tuple
    data: tuple
    gm: str | None = None
    mask: str | None = None
    bounded: bool = False
    scratch: str | None = None


FAMILY_ROLES = {
    "tile_load": FamilyRoles("dst", (), ("rows", "cols"), ("dst",), gm="src"),
    "tile_store": FamilyRoles(None, ("src",), ("rows", "cols"), ("src",), gm="dst"),
    "tile_move": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",)),
    "tile_mma": FamilyRoles("c", ("a", "b", "bias"), ("m", "n"), ("a",)),
    "tile_alu": FamilyRoles("dst", ("a", "b", "src", "base", "exp"), ("n",),
                         ("a", "src", "base", "dst")),
    "tile_reduce": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",), scratch="tmp"),
    "tile_expand": FamilyRoles("dst", ("src",), ("rows", "cols"), ("dst",)),
    "tile_expand_op": FamilyRoles("dst", ("a", "v"), ("rows", "cols"), ("dst",)),
    "tile_col_reduce": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",), scratch="tmp"),
    "tile_col_expand": FamilyRoles("dst", ("src",), ("rows", "cols"), ("dst",)),
    "tile_col_expand_op": FamilyRoles("dst", ("a", "v"), ("rows", "cols"), ("dst",)),
    "tile_cmp": FamilyRoles("dst", ("a", "b"), ("rows", "cols"), ("a",), mask="dst", bounded=True),
    "tile_sel": FamilyRoles("dst", ("mask", "a", "b"), ("rows", "cols"), ("a",), mask="mask", bounded=True,
                         scratch="tmp"),
    "tile_tri": FamilyRoles("dst", (), ("rows", "cols"), ("dst",), bounded=True),
    "tile_fillpad": FamilyRoles("dst", ("src",), ("drows", "dcols"), ("dst",)),
    "tile_row_arg": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",)),
    "tile_col_arg": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",)),
    "tile_trans": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",), scratch="tmp"),
    # TSORT32, TMRGSORT, TMRGSORT_LISTS, TGATHER (isa/44_sort.toml): rows x cols of src's words
    "tile_sort": FamilyRoles("dst", ("src", "idx", "src1"), ("rows", "cols"), ("src",)),
}


def roles_of(spec) -> FamilyRoles | None:
    """The roles of spec's family (None for a family that moves no tile data)."""
    return FAMILY_ROLES.get(spec.family)


def data_operand(spec) -> str:
    """The name of spec's operand whose dtype and shape price it (the first of its family's
    data candidates that the record has)."""
    names = {o.name for o in spec.value_operands}
    return next(n for n in FAMILY_ROLES[spec.family].data if n in names)



# TGATHER's mask patterns (pto-isa include/pto/common/type.hpp MaskPattern, VREDUCEv2's pattern
# modes 1..7) and the columns each selects (cpu/TGather.hpp MaskSelect)
GATHER_PATTERNS = {"P0101": 1, "P1010": 2, "P0001": 3, "P0010": 4, "P0100": 5, "P1000": 6, "P1111": 7}


def gather_selects(pattern: int, c: int) -> bool:
    """Whether mask pattern code `pattern` selects column c."""
    if pattern in (1, 2):
        return c % 2 == pattern - 1
    if 3 <= pattern <= 6:
        return c % 4 == pattern - 3
    return True
