"""Lowering of pto.timg2col (isa/45_conv.toml): pto-isa's TIMG2COL on A2/A3 with the checks
of include/pto/npu/a2a3/TImg2col.hpp (Mat NC1HWC0 source, Left destination, one dtype) as
compile errors at the kernel's line, and the fmatrix / ConvTile fields packed into the
record's four value operands as isa/45_conv.toml lays them out; and of pto.ttrans_conv
(TTRANS of ConvTiles, isa/42_layout.toml TTRANS_CONV, TTrans.hpp TTransImplConvTile).

Functions of the kernel compiler ``comp``; the builtins' lowerings are registered in
registry.py's LOWERINGS.
"""
from __future__ import annotations

import ast
import copy
import inspect

from .. import dtypes
from ..ir.program import int_sem_of
from ..isa.run_time_checks import FIELD_HOLDS_VALUE
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import NONE, Const, Text, Val

C0_BYTES = 32                 # BLOCK_BYTE_SIZE: one pixel's c0 channels are 32 bytes
# (field, bits) of the `conv` operand, lowest first (isa/45_conv.toml)
CONV_FIELDS = (("filter_w", 4), ("filter_h", 4), ("stride_w", 4), ("stride_h", 4), ("dilation_w", 4),
               ("dilation_h", 4))
C1_BITS = 7


def _packed(comp, parts, node, what, call="pto.timg2col"):
    """sum(value << shift) of (value, shift, bits) parts, folded when all are constants; a
    constant outside its bits is a CompileError naming the field, a run-time value is checked
    when the kernel runs (CHECK) so that it cannot spill into the next field."""
    total = None
    for value, shift, bits, name in parts:
        if isinstance(value, Const) and not 0 <= int(value.value) < (1 << bits):
            comp.error(node, f"{call}: {name} = {int(value.value)} is outside [0, {(1 << bits) - 1}] "
                             f"(the {bits}-bit field of {what})")
        if not isinstance(value, Const):
            comp.uniform_int(value, node, f"{call}: {name}")     # refuses a lane value
            comp.run_time_check(node, value, Const(0, dtypes.int32), Const((1 << bits) - 1, dtypes.int32),
                                FIELD_HOLDS_VALUE, f"{call}: {name} fits the {bits}-bit field of {what}")
        v = value
        term = v if shift == 0 else comp.alu("MUL", [v, Const(1 << shift, dtypes.int32)], node)
        total = term if total is None else comp.alu("ADD", [total, term], node)
    return total


def _fmatrix_parts(values, call, comp, node):
    """The fmap (W | H << 16) and pads (left | right << 8 | top << 16 | bottom << 24) values of
    SETFMATRIX's register (isa/45_conv.toml) from fmap_h, fmap_w and the four pads."""
    fmatrix = _packed(comp, [(values["fmap_w"], 0, 16, "fmap_w"), (values["fmap_h"], 16, 15, "fmap_h")], node,
                      "SETFMATRIX's fmap size", call)
    pads = _packed(comp, [(values["pad_left"], 0, 8, "pad_left"), (values["pad_right"], 8, 8, "pad_right"),
                          (values["pad_top"], 16, 8, "pad_top"), (values["pad_bottom"], 24, 7, "pad_bottom")],
                   node, "SETFMATRIX's pad list", call)
    return fmatrix, pads


SETFMATRIX_SIGNATURE = inspect.Signature(
    [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("fmap_h", "fmap_w")]
    + [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=0)
       for n in ("pad_top", "pad_bottom", "pad_left", "pad_right")])


def lower_setfmatrix(comp, node):
    """pto.setfmatrix(fmap_h, fmap_w, pad_top=0, pad_bottom=0, pad_left=0, pad_right=0):
    SETFMATRIX (A2/A3 SetFmatrix.hpp, FMATRIX_A_MANUAL, as conv2d_forward calls it once per
    output block) writes the cube core's FMATRIX register: here two uniform registers of the
    AIC's program, written by scalar moves. A pto.timg2col without fmap_h / fmap_w takes their
    values when the scalar unit issues it (the register's value travels with the instruction)."""
    call = "pto.setfmatrix"
    if comp.section != "cube":
        comp.error(node, f"{call}() sets the cube core's FMATRIX register: call it inside `with pto.cube():`",
                   "TIMG2COL runs on the cube core's MTE1")
    try:
        bound = SETFMATRIX_SIGNATURE.bind(*[comp.expr(a) for a in node.args],
                                          **{k.arg: comp.expr(k.value) for k in node.keywords})
    except TypeError as exc:
        comp.error(node, f"{call}{SETFMATRIX_SIGNATURE}: {exc}")
    bound.apply_defaults()
    values = {k: Const(v, dtypes.int32) if isinstance(v, int) else v for k, v in bound.arguments.items()}
    if comp.fmatrix_regs is None:
        comp.fmatrix_regs = (comp.new_reg(dtypes.int32, True), comp.new_reg(dtypes.int32, True))
    for reg, value, what in zip(comp.fmatrix_regs, _fmatrix_parts(values, call, comp, node),
                                ("fmap W | H << 16", "pads left | right << 8 | top << 16 | bottom << 24")):
        comp.emit("MOV", reg, (comp.operand(value, dtypes.int32, node),), dtypes.int32, node,
                  aux=(int_sem_of(dtypes.int32),))
        comp.instrs[-1].comment = f"SETFMATRIX: {what}"
    return NONE


def _timg2col_fmatrix(comp, node, args, call):
    """TIMG2COL's fmap and pads operands: from its own fmap_h / fmap_w / pads (FMATRIX_A_AUTO:
    it sets the register itself) or, without them, the FMATRIX register pto.setfmatrix wrote."""
    given = [n for n in ("fmap_h", "fmap_w") if args[n] is not NONE]
    pads = ("pad_top", "pad_bottom", "pad_left", "pad_right")
    if len(given) == 2:
        values = {n: args[n] for n in ("fmap_h", "fmap_w")}
        values.update({n: Const(0, dtypes.int32) if args[n] is NONE else args[n] for n in pads})
        return _fmatrix_parts(values, call, comp, node)
    if given or any(args[n] is not NONE for n in pads):
        comp.error(node, f"{call}: give fmap_h and fmap_w (and the pads) together, or none of them to read "
                         "the FMATRIX register pto.setfmatrix wrote")
    if comp.fmatrix_regs is None:
        comp.error(node, f"{call} without fmap_h / fmap_w reads the FMATRIX register, which no "
                         "pto.setfmatrix(...) before it in the cube code wrote",
                   "call pto.setfmatrix(fmap_h, fmap_w, pad_top=..., ...) first, as pto-isa's SETFMATRIX")
    return tuple(Val(r) for r in comp.fmatrix_regs)


@LOWERINGS.lowering("timg2col", checks=(aicore_only,))
def lower_timg2col(comp, node, args):
    """TIMG2COL(dst, src, posM, posK) after SETFMATRIX (A2/A3 TImg2col.hpp, FMATRIX_A_MANUAL)."""
    spec, call = comp.isa["TIMG2COL"], "pto.timg2col"
    d = comp.typed_tile(args["dst"], node, spec, "dst", f"{call}: dst")
    s = comp.typed_tile(args["src"], node, spec, "src", f"{call}: src")
    if d.dtype != s.dtype:
        comp.error(node, f"{call}: '{d.name}' holds {d.dtype} but '{s.name}' holds {s.dtype} (TImg2col: "
                         "Destination and Source tile data types must be the same)")
    c0 = C0_BYTES // s.dtype.itemsize
    if s.tile.cols != c0:
        comp.error(node, f"{call}: the feature map '{s.name}' is {s.tile.rows} x {s.tile.cols}; an NC1HWC0 "
                         f"tile of {s.dtype} has rows of c0 = {c0} channels (32 bytes)",
                   f"allocate it as (c1 * h * w, {c0}) with loc=pto.Mat")
    consts = {}
    for name in ("filter_h", "filter_w", "stride_h", "stride_w", "dilation_h", "dilation_w"):
        v = args[name]
        if not isinstance(v, Const) or int(v.value) < 1:
            comp.error(node, f"{call}: {name} must be a constant of at least 1 (a ConvTile field)")
        consts[name] = v
    size = args["channel_size"]
    if size is NONE:
        size = Const(c0, dtypes.int32)
    if not isinstance(size, Const) or int(size.value) % c0 or int(size.value) <= 0:
        comp.error(node, f"{call}: channel_size must be a constant multiple of c0 = {c0}")
    c1 = int(size.value) // c0
    rows, cols = comp._extent(d)
    pos = _packed(comp, [(args["pos_m"], 0, 16, "pos_m"), (args["pos_k"], 16, 15, "pos_k")], node, "pos")
    fmatrix, pads = _timg2col_fmatrix(comp, node, args, call)
    parts, shift = [], 0
    for name, bits in CONV_FIELDS:
        parts.append((consts[name], shift, bits, name))
        shift += bits
    parts.append((Const(c1, dtypes.int32), shift, C1_BITS, "channel_size / c0"))
    conv = _packed(comp, parts, node, "the ConvTile's fields")
    fmap_h, fmap_w = args["fmap_h"], args["fmap_w"]
    if all(isinstance(v, Const) for v in (fmap_h, fmap_w)) and \
            c1 * int(fmap_h.value) * int(fmap_w.value) > s.tile.rows:
        comp.error(node, f"{call}: {c1} x {int(fmap_h.value)} x {int(fmap_w.value)} pixels exceed the "
                         f"{s.tile.rows} rows of '{s.name}'")
    ops = (comp._base(d, node, call), comp._base(s, node, call), comp._int_operand(rows, node, "rows"),
           comp._int_operand(cols, node, "cols"), comp._int_operand(pos, node, "pos"),
           comp._int_operand(fmatrix, node, "fmatrix"), comp._int_operand(pads, node, "pads"),
           comp._int_operand(conv, node, "conv"))
    comp.emit("TIMG2COL", None, ops, d.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{d.name} <- img2col({s.name})"


# ---------------------------------------------------------------- TTRANS of ConvTiles
# (src layout, dst layout): (form of isa/42_layout.toml's TTRANS_CONV, the shapes' dimensions), as
# TTransImplConvTile (include/pto/npu/a2a3/TTrans.hpp lines 1051-1117) branches
CONV_FORMS = {("NCHW", "NC1HWC0"): (0, "NCHW", "NC1HWC0"), ("GNCHW", "GNC1HWC0"): (0, "GNCHW", "GNC1HWC0"),
              ("NC1HWC0", "NCHW"): (1, "NC1HWC0", "NCHW"), ("GNC1HWC0", "GNCHW"): (1, "GNC1HWC0", "GNCHW"),
              ("NC1HWC0", "FRACTAL_Z"): (2, "NC1HWC0", "Kabc"), ("GNC1HWC0", "FRACTAL_Z"): (3, "GNC1HWC0", "Kabc"),
              ("NCDHW", "FRACTAL_Z_3D"): (4, "NCDHW", "Kabc")}
_HEADER = "include/pto/npu/a2a3/TTrans.hpp"
# a layout's dimensions, in its ConvTileShape's order (a FRACTAL_Z one's: (C1HW, N1, N0, C0))
_DIMS = {"NCHW": ("N", "C", "H", "W"), "GNCHW": ("G", "N", "C", "H", "W"), "NCDHW": ("N", "C", "D", "H", "W"),
         "NC1HWC0": ("N", "C1", "H", "W", "C0"), "GNC1HWC0": ("G", "N", "C1", "H", "W", "C0")}


def _shape(comp, node, ast_value, name, dims):
    """A ConvTileShape: a tuple of len(dims) ints >= 1 known when the kernel compiles."""
    call = "pto.ttrans_conv"
    if not isinstance(ast_value, ast.Tuple) or len(ast_value.elts) != len(dims):
        comp.error(node, f"{call}: {name} must be a tuple of {len(dims)} ints, one a dimension of the layout "
                         f"({', '.join(dims)}; ConvTile's totalDimCount)")
    out = []
    for e, d in zip(ast_value.elts, dims):
        k = comp._static_int(comp.expr(e), node, f"{call}: {name} {d}")
        if k < 1:
            comp.error(node, f"{call}: {name} {d} is {k}; a ConvTile's dimensions are at least 1")
        out.append(k)
    return out


def _conv_operands(comp, node, form, s, t, per_block):
    """(rows, cols, n, c, hw, c0, dn, swords, dwords) of TTRANS_CONV for source shape s and
    destination shape t, with CheckConvTile's / CheckGroupConvTile's / CheckConv3DTile's
    PTO_ASSERTs ("expect same size for src and dst.") as compile errors."""
    def need(ok, what):
        if not ok:
            comp.error(node, f"pto.ttrans_conv: {what} (\"expect same size for src and dst.\", {_HEADER} "
                             "CheckConvTile / CheckGroupConvTile / CheckConv3DTile)")
    if form == 0:
        g, (n, c, h, w) = (s[0], s[1:]) if len(s) == 5 else (1, s)
        tg, (tn, c1, th, tw, c0) = (t[0], t[1:]) if len(t) == 6 else (1, t)
        need((tg, tn, th, tw) == (g, n, h, w) and c1 == -(-c // c0),
             f"dst {tuple(t)} is not src {tuple(s)} with C split into ceil(C / C0) x C0")
        rows, cols = g * n * c1, c0 * h * w
        return rows, cols, n, c, h * w, c0, 0, rows * cols, rows * cols
    if form == 1:
        g, (n, c1, h, w, c0) = (s[0], s[1:]) if len(s) == 6 else (1, s)
        tg, (tn, c, th, tw) = (t[0], t[1:]) if len(t) == 5 else (1, t)
        need((tg, tn, th, tw, c) == (g, n, h, w, c1 * c0), f"dst {tuple(t)} is not src {tuple(s)} with C = C1 x C0")
        if len(s) == 6:
            c0 = per_block                  # line 1112: srcC0 = BLOCK_BYTE_SIZE / sizeof(T)
        rows, cols = g * n * c1, c0 * h * w
        return rows, cols, n, c1 * c0, h * w, c0, 0, rows * cols, rows * cols
    dn = t[1] * t[2]
    if form == 4:
        n, c, d, h, w = s
        c1 = -(-c // t[3])
        need(t[0] == d * c1 * h * w and t[1] == -(-n // t[2]),
             f"dst {tuple(t)} is not (D C1 H W, ceil(N / N0), N0, C0) of src {tuple(s)}")
        return d * n * c1, t[3] * h * w, n, c, h * w, t[3], dn, n * c * d * h * w, t[0] * dn * t[3]
    g, (n, c1, h, w, c0) = (s[0], s[1:]) if form == 3 else (1, s)
    need(t[0] == g * c1 * h * w and t[3] == c0 and t[1] == -(-n // t[2]),
         f"dst {tuple(t)} is not ({'G ' if form == 3 else ''}C1 H W, ceil(N / N0), N0, C0) of src {tuple(s)}")
    m = c1 * h * w
    return g * n, m * c0, n, c1 * c0, h * w, c0, dn, (g - 1) * dn * m * c0 + n * m * c0, g * dn * m * c0


@LOWERINGS.lowering("ttrans_conv", checks=(aicore_only,), binds=False)
def lower_ttrans_conv(comp, node, builtin):
    """TTRANS(dst, src, tmp) of ConvTiles (TTRANS_CONV, isa/42_layout.toml): dst, src and tmp flat
    RowMajor Vec tiles (the ConvTiles' words: the kernels TASSIGN a ConvTile and a 1 x n tile to one
    address), the layouts strings and the shapes tuples of ints as the ConvTileShapes; TTRANS_IMPL's
    static_asserts (1-, 2- or 4-byte elements, one size) and the shape checks as compile errors."""
    call, spec = "pto.ttrans_conv", comp.isa["TTRANS_CONV"]
    params = list(inspect.signature(builtin).parameters)
    given = {params[i]: a for i, a in enumerate(node.args)} | {k.arg: k.value for k in node.keywords}
    shapes = {k: given.get(k) for k in ("dst_shape", "src_shape")}
    bare = copy.copy(node)
    bare.args = [ast.Constant(0) if params[i] in shapes else a for i, a in enumerate(node.args)]
    bare.keywords = [ast.keyword(k.arg, ast.Constant(0)) if k.arg in shapes else k for k in node.keywords]
    args = comp.bind_call(builtin, bare)
    dst, src, tmp = comp.typed_tiles(spec, node, args, ("dst", "src", "tmp"))
    layouts = []
    for k in ("src_layout", "dst_layout"):
        v = args[k]
        if not isinstance(v, Text):
            comp.error(node, f"{call}: {k} must be a layout name, a string such as \"NC1HWC0\"")
        layouts.append(v.value)
    if tuple(layouts) not in CONV_FORMS:
        comp.error(node, f"{call}: {layouts[0]} -> {layouts[1]} is none of A2/A3's ConvTile transposes "
                         f"({', '.join(f'{a} -> {b}' for a, b in CONV_FORMS)}); TTransImplConvTile "
                         f"({_HEADER}) has no branch for it")
    form, sdims, ddims = CONV_FORMS[tuple(layouts)]
    sdims, ddims = (_DIMS.get(x, ("DC1HW" if form == 4 else "GC1HW" if form == 3 else "C1HW", "N1", "N0", "C0"))
                    for x in (sdims, ddims))
    s = _shape(comp, node, shapes["src_shape"], "src_shape", sdims)
    t = _shape(comp, node, shapes["dst_shape"], "dst_shape", ddims)
    for tile in (src, dst, tmp):
        if tile.dtype.itemsize not in (1, 2, 4) or tile.dtype.name not in spec.dtypes:
            comp.error(node, f"{call}: '{tile.name}' holds {tile.dtype} (\"Fix: TTRANS has unsupported data type.\", "
                             f"{_HEADER})")
        if tile.tile.layout != "row" or tile.tile.storage is not None or (tile is not tmp and tile.tile.rows != 1):
            comp.error(node, f"{call}: '{tile.name}' must be a RowMajor tile of its own dtype, flat 1 x n but tmp "
                             f"(the ConvTile's words), not {tile.tile.rows} x {tile.tile.cols}",
                       f"pass pto.treshape({tile.name}, 1, {tile.tile.rows * tile.tile.cols})")
    if dst.dtype.itemsize != src.dtype.itemsize:
        comp.error(node, f"{call}: '{src.name}' holds {src.dtype} and '{dst.name}' {dst.dtype} (\"Fix: TTRANS has "
                         f"inconsistent input and output data type.\", {_HEADER})")
    if dst.dtype != src.dtype:
        comp.error(node, f"{call}: '{src.name}' holds {src.dtype} and '{dst.name}' {dst.dtype}: A2/A3 moves their bits, "
                         "and pypto_sim's tiles hold values, so a transpose between two dtypes of one size is not "
                         "built", "transpose between tiles of one dtype")
    rows, cols, n, c, hw, c0, dn, swords, dwords = _conv_operands(comp, node, form, s, t, 32 // src.dtype.itemsize)
    for tile, words, what in ((src, swords, "reads"), (dst, dwords, "writes")):
        if tile.tile.rows * tile.tile.cols < words:
            comp.error(node, f"{call}: '{tile.name}' holds {tile.tile.rows * tile.tile.cols} elements but "
                             f"{layouts[0]} -> {layouts[1]} {what} {words} of it")
    ops = [comp._base(x, node, "ttrans_conv") for x in (dst, src, tmp)]
    ops += [comp._int_operand(Const(v, dtypes.int32), node, o.name)
            for v, o in zip((rows, cols, form, n, c, hw, c0, dn, swords, dwords, 1), spec.value_operands)]
    comp.emit(spec.name, None, tuple(ops), dst.dtype, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{dst.name} ({layouts[1]} {tuple(t)}) <- {src.name} ({layouts[0]} {tuple(s)})"
