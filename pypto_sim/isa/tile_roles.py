"""Each tile family's operand roles, by the operand names of its ISA records: which operand is
written, which tiles are read, which operands give the shape the operation covers, which
tile's dtype and shape price it. One descriptor per family, so that nothing else need know
operands by position: the compiler fills a missing shape from it (frontend/aicore_builtins.py),
the executor decodes instructions by it (exec/aicore_tiles.py), and through that decode the
timing model, its cost formulas, the race check and the functional runner read it; the AI
core's microbenchmarks build each vector op's call from it (calibrate/aicore_kernels.py).
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
    but not TCOLMAX). windowed: the sources that may be a window whose rows lie further apart
    than its columns (pto.tsubview narrower than its tile), because an operand gives their row
    pitch (TFILLPAD's and TTRANS' spitch); a vector op's other tiles are runs of words.
    outputs: tiles written besides dst when the call passes them (TROWARGMAX's val, the
    value-and-index form; TQUANT's src, a source it overwrites); a call without one passes the
    immediate -1, which names no tile.

    What runs it, for a family whose values one kernel computes (the vector families but
    tile_alu, whose elementwise ops and conversions the ALU dispatch generated from the table
    runs): kernel names the function, defined under the same name in exec/compiled/ (numba)
    and in exec/reference_tiles.py's TILE_KERNELS (numpy; the sort family's from
    exec/reference_sort.py), and args its arguments in order, as tokens
    (KERNEL_TOKENS): an operand's name gives its integer value (-1 when the record has no
    such operand). Both executors call it from these alone: tile_effects.effect (the
    functional runner, the SimPy model, the article's tile API) and the compiled replay's
    dispatch, generated from this table (exec/family_source.py).
    lane: pto.alloc_local tiles run the family too (the article's tile API; its functional
    runner and cost rules name it, exec/isa_codes.tile_kind and timing/tiles.py). alu: its
    opcodes select an ALU operation, so the generated ALU dispatch holds their expressions.
    flops: the roofline counts one operation per element it covers.

    What a microbenchmark of a vector family allocates and passes (calibrate/aicore_kernels.py
    builds each record's call from these and the record's own operands and signature): the
    operation covers rows x cols (R x C) elements; operand_shapes gives each tile operand's
    shape relative to it, as ((operand, shape), ...) with shapes from OPERAND_SHAPES (a tile
    the builtin's signature defaults, such as pto-isa's tmp, is left out of the call and needs
    none); operand_dtypes the operands whose dtype is not the data dtype ((operand, dtype), ...:
    the int32 index a TROWARGMAX writes; a mask's uint8 is its shape's). bench_values: the value
    operands a call passes when the record has them ((operand, value), ...): a float is a scalar
    of the data dtype (written 1 for an integer dtype), a str a mode, an int itself. bench_in_place:
    the call writes dst over its first source of dst's shape and dtype, so that a chain of ops
    reads what the last one wrote. bench_spare: the call allocates a second R x C tile of the data
    dtype when the record reads a tile, passed or not (the ALU's unary and tile-scalar ops
    leave it unused: its ALLOC_LOCAL costs each of their kernels a cycle of setup, which the
    measured rows hold and the fitted slopes do not see). unchainable: None, or why the family's ops cannot be measured
    by chaining them over a tile's rows (the microbenchmarks leave its records out, and
    calibration coverage gives this reason). faults: the kernel returns -1, or the position
    (row * cols + col of the shape it covers) of the first element whose run-time operand it
    refused before writing anything (TGATHER_IDX's index outside src); both executors raise
    exec/aicore_tiles.index_fault_error for it.

    What an op walks (exec/aicore_tiles.TileOp checks that it lies within each tile, and
    racecheck compares only it): each tile operand's rows x cols, from its operand_shapes
    shape (SHAPE_EXTENTS), or from extents where that is not it ((operand, rows, cols), ...,
    with EXTENT_TOKENS; the sort family's tiles have static valid regions, checked when the
    kernel compiles)."""

    dst: str | None
    sources: tuple
    shape: tuple
    data: tuple
    gm: str | None = None
    mask: str | None = None
    bounded: bool = False
    scratch: str | None = None
    windowed: tuple = ()
    outputs: tuple = ()
    kernel: str | None = None
    args: tuple = ()
    lane: bool = False
    alu: bool = False
    flops: bool = False
    operand_shapes: tuple = ()
    operand_dtypes: tuple = ()
    bench_values: tuple = ()
    bench_in_place: bool = False
    bench_spare: bool = False
    unchainable: str | None = None
    faults: bool = False
    extents: tuple = ()


# the shape of a tile operand (FamilyRoles.operand_shapes) relative to the rows x cols (R x C)
# its operation covers; calibrate/aicore_kernels.py allocates the microbenchmarks' tiles by it
OPERAND_SHAPES = {
    "tile": "R x C",
    "col": "R x 1, a column: stored column-major, its rows a whole number of 32-byte blocks",
    "row": "1 x C, a row",
    "mask": "R x M uint8, a packed predicate: a bit per element, M = max(32, ceil(C / 8)) bytes",
    "trans": "C x P, a transpose: P is R rounded up to whole 32-byte rows",
}


# the rows x cols of a tile operand an op over R x C walks, by its shape in OPERAND_SHAPES (a
# mask's are its rows of mstride bytes, the bounded families' check)
SHAPE_EXTENTS = {"tile": ("R", "C"), "col": ("R", "1"), "row": ("1", "C"), "trans": ("C", "R")}
# a token of FamilyRoles.extents
EXTENT_TOKENS = {
    "R": "the rows the op covers (its shape's first operand)",
    "C": "the columns the op covers (its shape's second operand)",
    "1": "one",
    "<operand>": "an operand's value (TPARTADD's prows)",
    "<a>-<b>": "a difference of two of these (TCONCAT's src1 has C - c0 columns)",
}


def walked_extents(roles: FamilyRoles) -> tuple:
    """((operand, rows token, cols token), ...): the tile operands roles' ops walk and how
    far (FamilyRoles.extents over SHAPE_EXTENTS of operand_shapes)."""
    out = {name: SHAPE_EXTENTS[shape] for name, shape in roles.operand_shapes if shape in SHAPE_EXTENTS}
    out.update({name: (rows, cols) for name, rows, cols in roles.extents})
    return tuple((name, rows, cols) for name, (rows, cols) in out.items())


# an argument of a family's kernel: the token, or an operand's name (its integer value)
KERNEL_TOKENS = {
    "op": "the instruction's opcode",
    "l1": "the unit's memory (words) the tiles lie in",
    "dt": "the instruction's dtype code",
    "init": "the ISA record's reduction identity (its `init` expression)",
    "real:": "real:<operand>: the operand's value as a float, 0.0 when the record has none "
             "(a scalar, a pad value); at most one per family",
    "has:": "has:<operand>: whether the record has the operand (a tile-scalar form)",
}


def _pairs(**named) -> tuple:
    """Keyword arguments as ((name, value), ...), a descriptor's table that stays hashable."""
    return tuple(named.items())


_ROW_REDUCE = ("op", "l1", "dst", "src", "rows", "cols", "dpitch", "spitch", "init", "dt")
_EXPAND_OP = ("op", "l1", "dst", "a", "v", "rows", "cols", "dpitch", "apitch", "dt")
_ARG = ("op", "l1", "dst", "src", "rows", "cols", "dpitch", "spitch", "val", "vpitch", "dt")
_ONE = _pairs(scalar=1.0)      # a tile-scalar form's scalar, in the data dtype
# TDEQUANT's and TQUANT's: the data tiles R x C, a parameter a row
_QUANT_EXTENTS = (("dst", "R", "C"), ("src", "R", "C"), ("scale", "R", "1"), ("offset", "R", "1"))

FAMILY_ROLES = {
    "tile_load": FamilyRoles("dst", (), ("rows", "cols"), ("dst",), gm="src", lane=True),
    "tile_store": FamilyRoles(None, ("src", "fp"), ("rows", "cols"), ("src",), gm="dst", lane=True),
    "tile_mma": FamilyRoles("c", ("a", "b", "bias"), ("m", "n"), ("a",), lane=True),
    "tile_alu": FamilyRoles("dst", ("a", "b", "src", "base", "exp"), ("n",),
                            ("a", "src", "base", "dst"), lane=True, alu=True, flops=True,
                            operand_shapes=_pairs(dst="tile", a="tile", b="tile", src="tile", base="tile",
                                                  exp="tile"),
                            bench_values=_ONE, bench_in_place=True, bench_spare=True),
    "tile_reduce": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",), scratch="tmp",
                               kernel="tile_row_reduce_pitched", args=_ROW_REDUCE,
                               lane=True, alu=True, flops=True, operand_shapes=_pairs(dst="col", src="tile")),
    "tile_expand": FamilyRoles("dst", ("src",), ("rows", "cols"), ("dst",),
                               kernel="tile_row_expand_pitched",
                               args=("l1", "dst", "src", "rows", "cols", "spitch"), lane=True,
                               operand_shapes=_pairs(dst="tile", src="col")),
    "tile_expand_op": FamilyRoles("dst", ("a", "v"), ("rows", "cols"), ("dst",),
                                  kernel="tile_row_expand_op", args=_EXPAND_OP, lane=True, alu=True, flops=True,
                                  operand_shapes=_pairs(dst="tile", a="tile", v="col"), bench_in_place=True),
    "tile_col_reduce": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",), scratch="tmp",
                                   kernel="tile_col_reduce_tmp",
                                   args=("op", "l1", "dst", "src", "rows", "cols", "tmp", "is_binary", "tpitch",
                                         "spitch", "init", "dt"), lane=True, alu=True, flops=True,
                                   operand_shapes=_pairs(dst="row", src="tile")),
    "tile_col_expand": FamilyRoles("dst", ("src",), ("rows", "cols"), ("dst",), kernel="tile_col_expand",
                                   args=("l1", "dst", "src", "rows", "cols"), lane=True,
                                   operand_shapes=_pairs(dst="tile", src="row")),
    "tile_col_expand_op": FamilyRoles("dst", ("a", "v"), ("rows", "cols"), ("dst",),
                                      kernel="tile_col_expand_op", args=_EXPAND_OP, lane=True, alu=True,
                                      flops=True, operand_shapes=_pairs(dst="tile", a="tile", v="row"),
                                      bench_in_place=True),
    "tile_cmp": FamilyRoles("dst", ("a", "b"), ("rows", "cols"), ("a",), mask="dst", bounded=True,
                            kernel="tile_cmp", args=("op", "l1", "dst", "a", "b", "real:scalar", "has:scalar",
                                                     "mode", "rows", "cols", "mstride", "dt"),
                            alu=True, flops=True, operand_shapes=_pairs(dst="mask", a="tile", b="tile"),
                            bench_values=_pairs(scalar=1.0, mode="eq")),
    "tile_sel": FamilyRoles("dst", ("mask", "a", "b"), ("rows", "cols"), ("a",), mask="mask", bounded=True,
                            scratch="tmp", kernel="tile_sel",
                            args=("op", "l1", "dst", "mask", "a", "b", "real:scalar", "has:scalar", "rows",
                                  "cols", "mstride", "mbits", "dpitch", "apitch", "bpitch", "dt"), alu=True,
                            operand_shapes=_pairs(dst="tile", mask="mask", a="tile", b="tile"),
                            bench_values=_ONE, bench_in_place=True),
    "tile_tri": FamilyRoles("dst", (), ("rows", "cols"), ("dst",), bounded=True, kernel="tile_tri",
                            args=("l1", "dst", "diagonal", "upper", "rows", "cols", "dpitch"),
                            operand_shapes=_pairs(dst="tile"), bench_values=_pairs(diagonal=0)),
    # dst and src are distinct tiles (TFILLPAD_INPLACE is the in-place form)
    "tile_fillpad": FamilyRoles("dst", ("src",), ("drows", "dcols"), ("dst",), windowed=("src",),
                                kernel="tile_fillpad",
                                args=("l1", "dst", "src", "real:pad", "rows", "cols", "spitch", "drows",
                                      "dcols"), operand_shapes=_pairs(dst="tile", src="tile"),
                                extents=(("src", "rows", "cols"),),
                                bench_values=_pairs(pad="min")),
    "tile_row_arg": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",), outputs=("val",),
                                kernel="tile_row_arg",
                                args=_ARG, alu=True, operand_shapes=_pairs(dst="col", src="tile"),
                                operand_dtypes=_pairs(dst="int32"), extents=(("val", "R", "1"),)),
    "tile_col_arg": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",), outputs=("val",),
                                kernel="tile_col_arg",
                                args=_ARG, alu=True, operand_shapes=_pairs(dst="row", src="tile"),
                                operand_dtypes=_pairs(dst="int32"), extents=(("val", "1", "C"),)),
    "tile_trans": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",), scratch="tmp", windowed=("src",),
                              kernel="tile_trans",
                              args=("l1", "dst", "src", "rows", "cols", "spitch", "dpitch"),
                              operand_shapes=_pairs(dst="trans", src="tile")),
    # TTRANS_CONV (isa/42_layout.toml): over 1 x swords of the flat source; src and dst covered as
    # swords / dwords say (a FRACTAL_Z dst holds the n padding too)
    "tile_trans_conv": FamilyRoles("dst", ("src",), ("unit", "swords"), ("src",), scratch="tmp",
                                   kernel="tile_trans_conv",
                                   args=("l1", "dst", "src", "rows", "cols", "form", "n", "c", "hw", "c0", "dn"),
                                   extents=(("dst", "1", "dwords"), ("src", "1", "swords")),
                                   unchainable="its layouts and shapes are the ConvTiles', which a chain over "
                                               "one tile's rows does not have"),
    # TSORT32, TMRGSORT, TMRGSORT_LISTS, TGATHER, TGATHER_IDX (isa/44_sort.toml): rows x cols of
    # src's words; tmp the scratch of TGATHER_IDX and of TMRGSORT_LISTS (which merges its 2 to 4
    # lists into it), and the kernel returns the first index TGATHER_IDX refuses
    "tile_sort": FamilyRoles("dst", ("src", "idx", "src1", "src2", "src3"), ("rows", "cols"), ("src",),
                             scratch="tmp", kernel="tile_sort", faults=True,
                             args=("l1", "dst", "src", "idx", "src1", "src2", "src3", "tmp", "mode", "k", "k1",
                                   "k2", "rows", "cols", "dcols", "spitch", "dpitch"),
                             unchainable="its merges take one row of sorted blocks"),
    # TCI (isa/46_sequence.toml): one row of cols integers, tmp its vector path's scratch
    "tile_ci": FamilyRoles("dst", (), ("rows", "cols"), ("dst",), scratch="tmp", kernel="tile_ci",
                           args=("l1", "dst", "real:start", "descending", "cols", "dt"), extents=(("dst", "R", "C"),),
                           unchainable="it fills one row of a one-row tile (TCI.hpp: TileData::Rows == 1)"),
    # TPARTADD, TPARTMAX, TPARTMIN, TPARTMUL (isa/47_partial.toml): src0 the source covering
    # dst's valid region, src1 the other (prows x pcols), the three tiles at one row pitch
    "tile_part": FamilyRoles("dst", ("src0", "src1"), ("rows", "cols"), ("dst",), kernel="tile_part",
                             args=("op", "l1", "dst", "src0", "src1", "rows", "cols", "prows", "pcols", "pitch",
                                   "dt"),
                             alu=True, flops=True, operand_shapes=_pairs(dst="tile", src0="tile", src1="tile"),
                             extents=(("src1", "prows", "pcols"),), bench_in_place=True),
    # TPARTARGMAX, TPARTARGMIN (isa/51_partial_arg.toml): values and indices of both sources into
    # dst and dst_idx; rows x cols the region both sources cover (the compares'), the six pitches
    "tile_part_arg": FamilyRoles("dst", ("src0", "src1", "src0_idx", "src1_idx"), ("rows", "cols"), ("dst",),
                                 outputs=("dst_idx",), kernel="tile_part_arg",
                                 args=("op", "l1", "dst", "dst_idx", "src0", "src0_idx", "src1", "src1_idx",
                                       "rows0", "cols0", "rows1", "cols1", "dpitch", "dipitch", "pitch0",
                                       "ipitch0", "pitch1", "ipitch1", "dt"),
                                 alu=True, flops=True,
                                 unchainable="it writes a value tile and an index tile from four sources, "
                                             "which a chain over one tile's rows cannot feed back"),
    # TPAIRREDUCESUM (isa/48_pair_reduce.toml): rows x cols of src, half as many columns of dst
    "tile_pair": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",), kernel="tile_pair_reduce",
                             args=("op", "l1", "dst", "src", "rows", "cols", "dpitch", "spitch", "dt"),
                             alu=True, flops=True, operand_shapes=_pairs(dst="tile", src="tile")),
    # TCONCAT (isa/49_concat.toml): rows x cols of dst, c0 columns from src0 and the rest from src1
    "tile_concat": FamilyRoles("dst", ("src0", "src1"), ("rows", "cols"), ("dst",), kernel="tile_concat",
                               args=("l1", "dst", "src0", "src1", "rows", "cols", "c0", "dpitch", "s0pitch",
                                     "s1pitch", "dt"),
                               extents=(("dst", "R", "C"), ("src0", "R", "c0"), ("src1", "R", "C-c0")),
                               unchainable="its sources' valid columns add up to dst's, which tiles of one "
                                           "shape cannot give"),
    # TCONCAT_IDX, TCONCAT_DSTIDX (isa/49_concat.toml): per row, counts read from the index tiles'
    # column 0; its kernel refuses a zero count that A2/A3 passes as a vcopy of repeat 0 - 1.
    # src0 and src1 are not in extents: how far a row of them is walked is a count read at run
    # time (at most C, rounded up to a 256-byte repeat past one repeat)
    "tile_concat_idx": FamilyRoles("dst", ("src0", "src1", "src0_idx", "src1_idx"), ("rows", "cols"), ("dst",),
                                   outputs=("dst_idx",), kernel="tile_concat_idx", faults=True,
                                   args=("l1", "dst", "src0", "src1", "dst_idx", "src0_idx", "src1_idx", "rows",
                                         "cols", "dpitch", "s0pitch", "s1pitch", "dipitch", "i0pitch", "i1pitch",
                                         "idt", "dt"),
                                   extents=(("dst", "R", "C"), ("dst_idx", "R", "1"), ("src0_idx", "R", "1"),
                                            ("src1_idx", "R", "1")),
                                   unchainable="its counts come from index tiles of another dtype, which a chain "
                                               "over one tile's rows cannot feed back"),
    # TDEQUANT, TDEQUANT_S8 (isa/50_quant.toml): rows x cols of dst (float32) from src (int16 or
    # int8), one scale and one offset a row at the parameter tiles' pitch
    "tile_dequant": FamilyRoles("dst", ("src", "scale", "offset"), ("rows", "cols"), ("dst",),
                                kernel="tile_dequant",
                                args=("l1", "dst", "src", "scale", "offset", "rows", "cols", "dpitch", "spitch",
                                      "ppitch"), flops=True,
                                extents=_QUANT_EXTENTS,
                                unchainable="it writes float32 from an integer source, so no chain can read "
                                            "back what the last op wrote"),
    # TQUANT, TQUANT_ASYM (isa/50_quant.toml): rows x cols of src (float32) into dst (int8 or
    # uint8), one scale (and offset) a row from ColMajor columns; src itself is written (scaled,
    # then overwritten by the float16 halves) and so is tmp (the broadcasts, then the int32s)
    "tile_quant": FamilyRoles("dst", ("src", "scale", "offset"), ("rows", "cols"), ("src",), scratch="tmp",
                              outputs=("src",), kernel="tile_quant",
                              args=("l1", "dst", "src", "scale", "offset", "tmp", "rows", "cols", "dpitch",
                                    "spitch"), flops=True,
                              extents=_QUANT_EXTENTS,
                              unchainable="it writes int8 from a float32 source it overwrites, so no chain "
                                          "can read back what the last op wrote"),
    # TADDRELUCONV, TSUBRELUCONV (isa/52_relu_conv.toml): rows x cols of src0 and src1 (float32,
    # float16 or int16: sdt) into dst (float16 or int8), priced by the sources' repeats
    "tile_reluconv": FamilyRoles("dst", ("src0", "src1"), ("rows", "cols"), ("src0",), kernel="tile_relu_conv",
                                 args=("op", "l1", "dst", "src0", "src1", "rows", "cols", "dpitch", "pitch0",
                                       "pitch1", "sdt", "dt"), flops=True,
                                 operand_shapes=_pairs(dst="tile", src0="tile", src1="tile"),
                                 unchainable="it writes a narrower dtype than it reads, so no chain can read "
                                             "back what the last op wrote"),
    # TADDDEQRELU (isa/53_add_deq_relu.toml): rows x cols of src0 and src1 (int32) into dst
    # (float16); src0 and src1 are written too (the header's float32 buffers) and so is tmp
    "tile_deq_relu": FamilyRoles("dst", ("src0", "src1"), ("rows", "cols"), ("src0",), scratch="tmp",
                                 outputs=("src0", "src1"), kernel="tile_add_deq_relu",
                                 args=("l1", "dst", "src0", "src1", "tmp", "real:scale", "rows", "cols", "dpitch",
                                       "pitch0", "pitch1", "tpitch"), flops=True,
                                 extents=(("dst", "R", "C"), ("src0", "R", "C"), ("src1", "R", "C"),
                                          ("tmp", "R", "C")),
                                 unchainable="it writes float16 from int32 sources it overwrites, so no chain "
                                             "can read back what the last op wrote"),
    "tile_move": FamilyRoles("dst", ("src",), ("rows", "cols"), ("src",)),
    # MGATHER, MGATHER_ELEM (isa/54_gm_index.toml): rows x cols of dst from a GM table at the
    # indices of idx (its first rows elements, or its rows x cols), the table's tensor the pointer
    # operand's; exec/gm_index_ops.py decodes and runs them
    "tile_gm_gather": FamilyRoles("dst", ("idx",), ("rows", "cols"), ("dst",), gm="table"),
    # MSCATTER, MSCATTER_ELEM: rows x cols of src to a GM table at the indices of idx
    "tile_gm_scatter": FamilyRoles(None, ("src", "idx"), ("rows", "cols"), ("src",), gm="table"),
}
# the families one kernel runs (the replay's dispatch numbers them in this order)
KERNEL_FAMILIES = tuple(f for f, roles in FAMILY_ROLES.items() if roles.kernel)
# the vector families: the ALU's elementwise ops and the families one kernel runs; they act on
# Vec (UB) tiles only, unless a record's `spaces` says otherwise
VECTOR_FAMILIES = ("tile_alu",) + KERNEL_FAMILIES
# the vector families only typed tiles of AI-core kernels reach (masks are uint8 tiles, pads
# need a tile's valid region, index reductions write int32 tiles of float data, transposes
# take two shapes, sorts write (value, index) pairs)
AICORE_ONLY_FAMILIES = tuple(f for f in VECTOR_FAMILIES if not FAMILY_ROLES[f].lane)
# the vector families the article's tile kernels (pto.alloc_local) run as well
LANE_TILE_FAMILIES = tuple(f for f in VECTOR_FAMILIES if FAMILY_ROLES[f].lane)
# every tile family: those moving tile data, then the flags and barriers between pipes
TILE_FAMILIES = tuple(FAMILY_ROLES) + ("tile_sync",)
ALU_TILE_FAMILIES = tuple(f for f, roles in FAMILY_ROLES.items() if roles.alu)
FLOP_FAMILIES = tuple(f for f, roles in FAMILY_ROLES.items() if roles.flops)


def roles_of(spec) -> FamilyRoles | None:
    """The roles of spec's family (None for a family that moves no tile data)."""
    return FAMILY_ROLES.get(spec.family)


def data_operand(spec) -> str:
    """The name of spec's operand whose dtype and shape price it (the first of its family's
    data candidates that the record has)."""
    names = {o.name for o in spec.value_operands}
    return next(n for n in FAMILY_ROLES[spec.family].data if n in names)


def extract_alignment(name: str, dst_space: str, itemsize: int) -> tuple:
    """(row, col): the multiples at which a move `name`'s window must start in its source;
    (1, 1) but for TEXTRACT into L0A / L0B, whose window in its Mat source A2/A3 asserts in
    include/pto/common/arch/memory/textract_common.hpp at 3186c381: into Left, "indexRow must
    be aligned to 16" and "indexCol must be aligned to C0Size" (lines 85-86); into Right, to
    C0Size and 16 (lines 202-203); c0 is 32 bytes of elements. A source whose fractal order
    differs from the destination's takes the transposing path, which asks both to the fractal
    size (16, or 32 one-byte elements: lines 93-94, 210-211). The simulator does not model a
    Mat tile's fractal order, so it asks the first paths' multiples: what both paths ask of 1-
    and 2-byte elements; of 4-byte ones the transposing path asks 16 where c0 is 8, which is not
    checked."""
    if name != "TEXTRACT":
        return 1, 1
    c0 = 32 // itemsize
    return {"Left": (16, c0), "Right": (c0, 16)}.get(dst_space, (1, 1))


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


def gather_picks(pattern: int) -> int:
    """How many rows (columns) mask pattern code `pattern` takes one of: 2, 4, or 1 for P1111
    (GetTimesByMask, include/pto/common/constants.hpp)."""
    return 2 if pattern in (1, 2) else 4 if 3 <= pattern <= 6 else 1


@dataclass(frozen=True)
class KernelOperands:
    """How a family's kernel takes its operands (FamilyRoles.args read by KERNEL_TOKENS): the
    operands passed as integers, in order; the one passed as a float (or None); the one whose
    presence is passed (or None)."""

    ints: tuple
    real: str | None
    has: str | None


def kernel_operands(family: str) -> KernelOperands:
    """The operands family's kernel takes, from its descriptor's args."""
    roles = FAMILY_ROLES[family]
    ints, real, has = [], None, None
    for token in roles.args:
        if token.startswith("real:"):
            if real is not None:
                raise ValueError(f"{family}: its kernel takes two real operands; one is the most")
            real = token.removeprefix("real:")
        elif token.startswith("has:"):
            if has is not None:
                raise ValueError(f"{family}: its kernel takes two has: flags; one is the most")
            has = token.removeprefix("has:")
        elif token not in KERNEL_TOKENS:
            ints.append(token)
    return KernelOperands(tuple(ints), real, has)
