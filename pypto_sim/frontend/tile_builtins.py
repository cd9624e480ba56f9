"""Lowering of the tile builtins: async_load, tile store, mma, wait_all, event flags and the
elementwise / reduction tile operations. Tiles are alloc_local buffers (pointers into L1).

The builtins' lowerings are functions of the compiler ``comp`` registered in registry.py's
LOWERINGS; the operand helpers they share (tile_base, uniform_int, tile_shape, ...) and
``lower_tile_op`` are a mixin of :class:`pypto_sim.frontend.codegen.KernelCompiler`. Every
tile instruction carries aux = (tensor slot, pipeline stage tag, mask of the stages it comes
after) for the timing model (docs/tiles.md).
"""
from __future__ import annotations

import math

from .. import dtypes
from ..ir import Imm
from ..isa import cvt_modes, gm_layouts
from .builtin_checks import article_only
from .memory_builtins import lower_lane_store
from .registry import LOWERINGS
from .values import NONE, Const, Ptr, Text, Val


class TileOperands:
    """The article's alloc_local tiles in the kernel compiler (a mixin): their operands, shapes,
    lower_tile_op and flags, shared by the registered tile lowerings."""

    stage_tag = 0
    stage_after = 0

    # ---------------------------------------------------------------- operands
    def tile_base(self, v, node, what, reinterpreted=False, quant_words=False):
        """(operand holding the tile's first L1 word, the tile pointer). A view of another
        dtype's words (pto.treshape(..., dtype=)) is taken only where `reinterpreted` says the
        instruction reads it (TGATHER). quant_words: the instruction moves the fixpipe's int64
        quant words (TLOAD into Mat, TMOV_M2S, TSTORE_FP's Scaling tile), which no unit computes."""
        if not (isinstance(v, Ptr) and v.space == "l1"):
            self.error(node, f"{what} must be a tile from pto.alloc_local(...), got "
                             f"{getattr(v, 'name', type(v).__name__)}",
                       "allocate tiles with t = pto.alloc_local(rows * cols, dtype)")
        if v.tile is not None and v.tile.storage is not None and not reinterpreted:
            self.error(node, f"{what}: '{v.name}' views {v.tile.storage} words as {v.dtype} "
                             "(pto.treshape(..., dtype=)); only pto.tgather reads such a view here "
                             "(other instructions on it are not built)",
                       "gather from the view, or work on the tile it views")
        if v.dtype.itemsize == 8 and not (quant_words and v.tile is not None and v.tile.loc in ("Mat", "Scaling")):
            # 64-bit buffers are lane (shared) memory only: A2/A3's vector units list no 64-bit type
            self.error(node, f"{what}: the buffer '{v.name}' holds {v.dtype}, which no tile unit of "
                             "the AI core computes (its vector and cube units work on float32, float16, "
                             "bfloat16 and 8 to 32-bit integers)",
                       "lane loads, stores and atomics can use it; tile it as float32 or int32")
        if isinstance(v.offset, Const):
            tile = v.slot if v.tile is not None and int(v.offset.value) == 0 else -1
            return Imm(float(v.base + int(v.offset.value)), dtypes.int32, tile=tile), v
        if not v.offset.uniform:
            self.error(node, f"{what}: a tile's offset must be the same in every lane",
                       "tile instructions act for the whole block; index tiles with uniform values")
        return self.alu("ADD", [v.offset, Const(v.base, dtypes.int32)], node, dtype=dtypes.int32).reg, v

    def uniform_int(self, v, node, what):
        self.require_value(v, node)
        self.int_constant(v, node, what)
        if v.dtype.is_float:
            self.error(node, f"{what} must be an integer, got {v.dtype}")
        if isinstance(v, Val) and not v.uniform:
            self.error(node, f"{what} must be the same in every lane (a uniform value)",
                       "tile shapes come from arguments, constants or block ids, not lane ids")
        return self.operand(v, dtypes.int32, node)

    def int_constant(self, v, node, what):
        """The int of a constant integer operand (a tile's rows, a stride, an offset, a count);
        None for anything else (a run-time value, a bool), which its caller judges. A float
        is a CompileError naming the operand and its value, 16.0 as well as 16.5: no float is
        taken silently where an int is meant (a `/` written for `//`, say), as Python's
        range() and numpy's shapes take none."""
        if not isinstance(v, Const) or isinstance(v.value, bool):
            return None
        value = v.value
        if not (v.dtype.is_float or isinstance(value, float)):
            return int(value)
        number = float(value)
        whole = math.isfinite(number) and number.is_integer()
        self.error(node, f"{what}: the float constant {number!r} cannot be used as int32 (an integer operand "
                         f"takes an int{', not a float, even a whole one' if whole else ''})",
                   f"pass {int(number)}, not {number!r}; compute it with // rather than /" if whole else
                   "pass an int; compute it with // rather than /")

    @staticmethod
    def value_kind(v) -> str:
        """What a value is, for a message: a value computed while the kernel runs, the tile 't', ..."""
        if isinstance(v, Val):
            return f"a value computed while the kernel runs ({v.dtype})"
        if isinstance(v, Ptr):
            return f"the {'tile' if v.space == 'l1' else 'pointer'} '{v.name}'"
        if isinstance(v, Const):
            return f"the {type(v.value).__name__} {v.value!r}"
        return f"a {type(v).__name__}"

    def tile_aux(self, slot=0):
        return (slot, self.stage_tag, self.stage_after)

    def tile_shape(self, args, tile: Ptr, node, call):
        """rows, cols, stride and layout (ND) operands from nbytes= (contiguous) or
        rows=/cols=[/stride=]."""
        return self._article_shape(args, tile, node, call) + (Imm(0.0, dtypes.int32),)

    def _article_shape(self, args, tile: Ptr, node, call):
        nbytes, rows, cols, stride = (args.get(k, NONE) for k in ("nbytes", "rows", "cols", "stride"))
        if nbytes is not NONE:
            if rows is not NONE or cols is not NONE or stride is not NONE:
                self.error(node, f"{call}: give nbytes (contiguous) or rows/cols/stride, not both")
            c = Imm(float(self.transfer_elements(nbytes, tile, node, call)), dtypes.int32)
            return Imm(1.0, dtypes.int32), c, c
        if rows is NONE and cols is NONE:
            c = Imm(float(tile.count), dtypes.int32)
            return Imm(1.0, dtypes.int32), c, c
        if rows is NONE or cols is NONE:
            self.error(node, f"{call}: the strided form needs both rows= and cols=")
        for name, v in (("rows", rows), ("cols", cols)):
            if isinstance(v, Const) and not v.value > 0:
                self.error(node, f"{call}: {name}={v.value!r}: a transfer needs at least one row "
                                 f"and one column", f"give {name} >= 1")
        if all(isinstance(v, Const) and float(v.value).is_integer() for v in (rows, cols, stride)):
            problem = gm_layouts.window_problem(gm_layouts.ND, int(rows.value), int(cols.value),
                                                int(stride.value), 1)
            if problem:
                self.error(node, f"{call}: {problem}",
                           "pass a stride of at least cols (as cudaMemcpy2D's pitch >= width)")
        r = self.uniform_int(rows, node, f"{call}: rows")
        c = self.uniform_int(cols, node, f"{call}: cols")
        s = c if stride is NONE else self.uniform_int(stride, node, f"{call}: stride")
        return r, c, s

    def transfer_elements(self, nbytes, tile: Ptr, node, call) -> int:
        """The element count of a contiguous transfer of ``nbytes`` bytes into or out of
        ``tile``: nbytes must be known at compile time (a constant, or kernel arguments, on
        which the kernel is specialised), positive and a whole number of the tile's elements."""
        item, dt = tile.dtype.itemsize, tile.dtype
        if not isinstance(nbytes, Const) and getattr(nbytes, "dtype", None) is not None \
                and nbytes.dtype.is_float:
            self.error(node, f"{call}: nbytes is a {nbytes.dtype} value; a byte count is an int",
                       f"pass an int number of bytes (a multiple of the {item}-byte {dt} element)")
        if not isinstance(nbytes, Const):
            self.error(node, f"{call}: nbytes must be known when the kernel compiles (a constant or "
                             f"int kernel arguments, on which the kernel is specialised); this one "
                             f"is computed while it runs",
                       "for a run-time extent give rows= and cols= (elements) instead of nbytes")
        value = nbytes.value
        if isinstance(value, bool) or not float(value).is_integer():
            self.error(node, f"{call}: nbytes={value!r} is not a whole number of bytes",
                       f"give a byte count that is a multiple of the {item}-byte {dt} element")
        if int(value) <= 0:
            self.error(node, f"{call}: nbytes={value!r}: a transfer needs at least one {item}-byte "
                             f"{dt} element", f"give nbytes >= {item} (a multiple of {item})")
        if int(value) % item:
            self.error(node, f"{call}: nbytes={value!r} is {int(value) / item:g} {dt} elements "
                             f"({item} bytes each), not a whole number",
                       f"give a multiple of {item} bytes, for example {int(value) // item * item or item}")
        return int(value) // item

    # ---------------------------------------------------------------- memory


    # ---------------------------------------------------------------- compute

    def lower_tile_op(self, spec, node, args):
        """Elementwise, tile-scalar, row-reduce and row-expand instructions, from their operands
        (an elementwise op's n, when not given, is dst's element count)."""
        if spec.name == "TCVT":
            return self._convert_local(node, args)
        ops, tiles = [], []
        for operand in spec.value_operands:
            v = args[operand.name]
            if operand.kind == "tile":
                op, t = self.tile_base(v, node, f"pto.{spec.builtin}: {operand.name}")
                ops.append(op)
                tiles.append(t)
            elif operand.name == "scalar":
                self.require_value(v, node)
                if isinstance(v, Val) and not v.uniform:
                    self.error(node, f"pto.{spec.builtin}: scalar must be uniform")
                # the scalar has the source's dtype (TAXPY_IMPL: TileDataSrc::DType scalar)
                ops.append(self.operand(v, tiles[-1].dtype, node))
            else:
                if v is NONE and operand.name == "n":      # n=None: all of dst's elements, as tcvt's
                    v = Const(tiles[0].count, dtypes.int32)
                ops.append(self.uniform_int(v, node, f"pto.{spec.builtin}: {operand.name}"))
        dtype = tiles[0].dtype
        sources = spec.source_dtypes_of(dtype.name)
        if any(t.dtype.name not in sources for t in tiles[1:]) or dtype.name not in spec.dtypes:
            mixed = "; ".join(f"{r} over {', '.join(s)}" for r, s in spec.source_dtypes)
            self.error(node, f"pto.{spec.builtin} needs tiles of one dtype among {', '.join(spec.dtypes)}"
                             f"{f' (or a {mixed} source)' if mixed else ''}, "
                             f"got {', '.join(str(t.dtype) for t in tiles)} (tiles {', '.join(t.name for t in tiles)})")
        self.emit(spec.name, None, tuple(ops), dtype, node, aux=self.tile_aux())
        self.instrs[-1].comment = ", ".join(t.name for t in tiles)

    def _convert_local(self, node, args):
        """pto.tcvt(dst, src, mode='rint', n=None) on alloc_local tiles: n elements (default:
        all of dst's) of src converted to dst's dtype by the rounding mode (TCVT.md)."""
        (dst_op, dst), (src_op, src) = (self.tile_base(args[k], node, f"pto.tcvt: {k}") for k in ("dst", "src"))
        mode = self.cvt_mode(node, src.dtype, dst.dtype, args["mode"], args.get("sat", NONE))
        n = args.get("n", NONE)
        if n is NONE:
            n = Const(dst.count, dtypes.int32)
        if isinstance(n, Const) and not 0 < int(n.value) <= min(dst.count, src.count):
            self.error(node, f"pto.tcvt: n = {int(n.value)} elements, but '{dst.name}' holds {dst.count} "
                             f"and '{src.name}' {src.count}", "convert at most the smaller tile's elements")
        zero = self.uniform_int(Const(0, dtypes.int32), node, "pto.tcvt")    # cols, pitches: one run
        ops = (dst_op, src_op, self.uniform_int(Const(mode, dtypes.int32), node, "pto.tcvt: mode"),
               self.uniform_int(n, node, "pto.tcvt: n"), zero, zero, zero, zero)
        self.emit("TCVT", None, ops, dst.dtype, node, aux=self.tile_aux())
        self.instrs[-1].comment = self.cvt_comment(dst, src, args["mode"].value)

    @staticmethod
    def cvt_comment(dst, src, mode: str) -> str:
        """A TCVT's listing comment: the mode asked for and, if A2/A3 has none, what it runs."""
        got = cvt_modes.rounding(src.dtype.name, dst.dtype.name, mode)
        note = "" if got in (mode, "exact") else f", runs {got}"
        return f"{dst.name} <- {src.name}" + (f" ({mode}{note})" if mode != "rint" else "")

    def cvt_mode(self, node, src_dtype, dst_dtype, mode, sat=NONE) -> int:
        """TCVT's mode operand, after checking that A2/A3 converts src_dtype to dst_dtype
        (TCVT.md) and that mode names one of its RoundModes: the rounding A2/A3 runs for that
        mode on that pair (isa/cvt_modes.py: a mode the pair lacks runs TCvt.hpp's default), plus
        dtypes.CVT_SAT_OFF for SaturationMode::OFF (sat='off'; sat None: TCVT(dst, src, mode)'s
        default, OFF for cvt_modes.DEFAULT_SAT_OFF's narrowing pairs and ON for the others) and
        dtypes.CVT_INTEGRAL for float32 -> float32 (rounded to an integral value)."""
        allowed = cvt_modes.CVT_PAIRS.get(src_dtype.name, ())
        if dst_dtype.name not in allowed:
            self.error(node, f"pto.tcvt: {src_dtype} -> {dst_dtype} is not a conversion of A2/A3; "
                             f"{src_dtype} converts to {', '.join(allowed) or 'nothing here'} (TCVT.md)")
        if not (isinstance(mode, Text) and mode.value in dtypes.CVT_MODES):
            self.error(node, f"pto.tcvt: mode must be one of {', '.join(map(repr, dtypes.CVT_MODES))} "
                             "(PTO-ISA RoundMode CAST_RINT, CAST_ROUND, CAST_FLOOR, CAST_CEIL, CAST_TRUNC, CAST_ODD)")
        if sat is not NONE and not (isinstance(sat, Text) and sat.value in dtypes.CVT_SAT_MODES):
            self.error(node, "pto.tcvt: sat must be 'on' or 'off' (PTO-ISA SaturationMode::ON, OFF)")
        off = (sat.value == "off" if sat is not NONE
               else (src_dtype.name, dst_dtype.name) in cvt_modes.DEFAULT_SAT_OFF)
        return cvt_modes.encode(src_dtype.name, dst_dtype.name, mode.value, off)

    # ---------------------------------------------------------------- synchronisation

    def _flag(self, op, node, args):
        src = self._pipe_arg(args["src_pipe"], node, "src_pipe")
        dst = self._pipe_arg(args["dst_pipe"], node, "dst_pipe")
        event = args["event"]
        if not isinstance(event, Const) or not 0 <= int(event.value) < 8:
            self.error(node, "event must be a constant 0..7 (8 event ids per pipe pair, as on A2/A3)")
        if src == dst:
            self.error(node, "set_flag/wait_flag order two different pipes; one pipe is in order already")
        self.emit(op, None, (), None, node, aux=(src, dst, int(event.value)))


@LOWERINGS.lowering("async_load", checks=(article_only("pto.tload(tile, ptr, stride=...)"),))
def lower_async_load(comp, node, args):
    dst_op, dst = comp.tile_base(args["dst"], node, "async_load: dst")
    src = comp.require_ptr(args["src"], node, "async_load: src")
    if src.space != "hbm":
        comp.error(node, "async_load: src must point into a device tensor (HBM)")
    if src.dtype != dst.dtype:
        comp.error(node, f"async_load: the tile '{dst.name}' holds {dst.dtype} but '{src.name}' "
                         f"holds {src.dtype}", "allocate the tile with the tensor's dtype")
    shape = comp.tile_shape(args, dst, node, "async_load")
    off = comp.uniform_int(src.offset, node, "async_load: the source offset")
    comp.emit("TLOAD", None, (dst_op, off) + shape, dst.dtype, node, aux=comp.tile_aux(src.slot))
    comp.instrs[-1].comment = f"{dst.name} <- {src.name}"


@LOWERINGS.lowering("store")
def lower_store(comp, node, args):
    value = args["value"]
    if isinstance(value, Ptr) and value.space == "l1":
        ptr = comp.require_ptr(args["ptr"], node, "store(ptr, tile, ...): ptr")
        if ptr.space != "hbm":
            comp.error(node, "the tile form of store writes to a device tensor (HBM)")
        src_op, tile = comp.tile_base(value, node, "store: tile")
        if ptr.dtype != tile.dtype:             # MTE3 copies bytes, as async_load's MTE2 does
            comp.error(node, f"store: the tile '{tile.name}' holds {tile.dtype} but '{ptr.name}' holds {ptr.dtype}; "
                             "the store pipe (MTE3) copies bytes and does not convert",
                       "store into a tensor of the tile's dtype, or convert on the lanes first")
        shape = comp.tile_shape(args, tile, node, "store")
        off = comp.uniform_int(ptr.offset, node, "store: the destination offset")
        plain = Imm(0.0, dtypes.int32)                    # mode: no atomic add (isa/store_modes.py)
        comp.emit("TSTORE", None, (off, src_op) + shape + (plain,), ptr.dtype, node, aux=comp.tile_aux(ptr.slot))
        comp.instrs[-1].comment = f"{ptr.name} <- {tile.name}"
        return
    if any(args.get(k, NONE) is not NONE for k in ("nbytes", "rows", "cols", "stride")):
        comp.error(node, "nbytes/rows/cols/stride belong to the tile form pto.store(ptr, tile, nbytes)",
                   "store one lane value with pto.store(ptr, value)")
    return lower_lane_store(comp, node, args)


@LOWERINGS.lowering("mma", checks=(article_only("pto.tmatmul / pto.tmatmul_acc on Left, Right and "
                                                "Acc tiles"),))
def lower_mma(comp, node, args):
    c_op, c = comp.tile_base(args["c"], node, "mma: c")
    a_op, a = comp.tile_base(args["a"], node, "mma: a")
    b_op, b = comp.tile_base(args["b"], node, "mma: b")
    if c.dtype != dtypes.float32:
        comp.error(node, f"mma accumulates in float32; the tile '{c.name}' is {c.dtype}")
    if a.dtype != b.dtype or a.dtype not in (dtypes.float16, dtypes.float32):
        comp.error(node, f"mma inputs must both be float16 or both float32, got {a.dtype} and {b.dtype}")
    shape = tuple(comp.uniform_int(args[k], node, f"mma: {k}") for k in ("m", "n", "k"))
    comp.emit("MMA", None, (c_op, a_op, b_op) + shape, dtypes.float32, node, aux=comp.tile_aux())
    comp.instrs[-1].comment = f"{c.name} += {a.name} @ {b.name}"


@LOWERINGS.lowering("wait_all", checks=(article_only("pto.pipe_barrier(pto.PIPE_ALL)"),))
def lower_wait_all(comp, node, args):
    # aux = (blocking, 0, after mask). Outside a pipeline stage the warp waits for every
    # tile operation of the block. Inside a stage it orders the stage's tile operations
    # after the stages it comes after, on the pipes, without stopping the warp (so warp 0
    # runs ahead and issues the next iterations' loads); the pipeline makes it blocking
    # when lane code in the stage reads L1 after it (see PipelineLowering._stage).
    blocking = 0 if comp.stage_tag else 1
    comp.emit("WAIT_ALL", None, (), None, node, aux=(blocking, 0, comp.stage_after))


@LOWERINGS.lowering("set_flag")
def lower_set_flag(comp, node, args):
    comp._flag("SET_FLAG", node, args)


@LOWERINGS.lowering("wait_flag")
def lower_wait_flag(comp, node, args):
    comp._flag("WAIT_FLAG", node, args)
