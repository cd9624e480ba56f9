"""Lowering of the real AI core's kernel code (docs/aicore.md): typed tiles in memory spaces,
their legality rules, the cube path (textract/tmov, tmatmul*; tload and tstore are
gm_transfers.py's), vector ops on typed tiles, pipes by their PTO names, flags and cross-core flags, and the
``pto.cube()`` / ``pto.vector()`` sections.

A block of an AI-core kernel is one AI core: three scalar units, unit 0 the AIC (cube core),
units 1 and 2 the two AIVs (vector cores), each running its own program (aicore_units.py: a
section's statements are in its units' programs only; statements outside sections in all).
The legality rules come from PTO-ISA (docs/coding/Tile.md, docs/isa/TMATMUL.md) and the
capacities from the machine table (checked at launch, before anything runs, by
timing/aicore_limits.py, since a program may run on several machines); every violation is a
CompileError (L1CapacityError for a full space) naming the tile, its space, the limit and the
line.

The builtins' lowerings are functions of the compiler ``comp`` registered in registry.py's
LOWERINGS; the operand checks they share (typed_tile, _extent, ...) and ``lower_tile_op`` for
typed tiles are a mixin of :class:`pypto_sim.frontend.codegen.KernelCompiler`, placed before
the article's TileOperands so that typed tiles take these paths and alloc_local tiles keep theirs.
"""
from __future__ import annotations

import ast

from .. import dtypes
from ..isa import PIPES, PTO_PIPE_NAMES, SPACES, VECTOR_FAMILIES
from ..isa.run_time_checks import MATMUL_K_AGREES
from ..isa.tile_roles import data_operand, extract_alignment, roles_of
from .aicore_scalar import AICoreScalarRules
from .aicore_units import CUBE_SPACES, AICoreUnits
from .builtin_checks import aicore_only
from .col_reduce_order import check_col_reduce_overlaps
from .comm_group import make_parallel_group
from .conv_builtins import lower_setfmatrix
from .layout_builtins import check_tile_shape, check_window
from .nz_windows import check_nz_use, nz_layout
from .operand_forms import OperandForms, flag_given
from .registry import LOWERINGS
from .values import NONE, Const, DTypeRef, Ptr, Text, TileInfo, Val
from .vec_windows import is_vec_window, lower_vec_window
from .warp_builtins import WARP_INTRINSICS, warp_intrinsic
from ..ir.program import LocalBuffer

MAX_MKN = 4095                                       # PTO-ISA docs/isa/TMATMUL.md: m, k, n in [1, 4095]
SPACE_NAMES = {"Vec": "UB", "Mat": "L1", "Left": "L0A", "Right": "L0B", "Acc": "L0C", "Bias": "BT", "Scaling": "FB"}
SPACE_DTYPES = {
    "Vec": ("float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8", "uint16", "uint32"),
    # Mat: those of Vec; int16 and uint8 too, as A2/A3's headers take them (tload_common.hpp
    # CheckNormalTileData, tstore_common.hpp CheckStaticForVecAndMat, TExpandS.hpp TEXPANDS_IMPL)
    "Mat": ("float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8", "uint16", "uint32", "int64"),
    "Left": ("float32", "float16", "bfloat16", "int8"),
    "Right": ("float32", "float16", "bfloat16", "int8"),
    "Acc": ("float32", "int32"),
    "Bias": ("float32", "int32"),
    # the fixpipe buffer's quant words (TMovToFb: uint64_t or int64_t; pypto_sim has no uint64)
    "Scaling": ("int64",),
}
# TMATMUL (C, A, B) dtypes on A2/A3 (PTO-ISA docs/isa/TMATMUL.md)
MATMUL_TYPES = {("int32", "int8"), ("float32", "float16"), ("float32", "float32"),
                ("float32", "bfloat16")}
PTO_TO_PIPE = {v: PIPES.index(k) for k, v in PTO_PIPE_NAMES.items()}
PIPE_ALL = -1
# the pipes of each core (docs/aicore.md; timing/aicore.py): the AIC's MTE2, MTE1, M, FIX and
# MTE3 (a Mat tile's TSTORE, copy_cbuf_to_gm), the AIVs' MTE2, V, MTE3, each with its scalar unit
UNIT_PIPES = {"cube": ("PIPE_S", "PIPE_MTE2", "PIPE_MTE1", "PIPE_M", "PIPE_FIX", "PIPE_MTE3"),
              "vector": ("PIPE_S", "PIPE_MTE2", "PIPE_V", "PIPE_MTE3")}
# A2/A3's TLOAD destinations: CheckNormalTileData's static_assert, reached from TLOAD_IMPL
# (include/pto/npu/a2a3/TLoad.hpp) through TLOAD_TILE_IMPL
TLOAD_DST_ASSERT = "Fix: Dst TileType must be Vec or Mat!"
TLOAD_DST_SOURCE = "pto-isa include/pto/common/arch/memory/tload_common.hpp line 312 at 3186c381"
EVENT_ID_BOUND = 16      # PTO-ISA ordering-and-synchronization.md: "event_id 0-15 (profile-specific)"


class AICoreTiles(AICoreUnits, OperandForms, AICoreScalarRules):
    """The AI core's typed tiles in the kernel compiler (a mixin): their operand and legality
    checks, lower_tile_op on typed tiles, pipes and flags, shared by the registered lowerings."""

    @property
    def is_aicore(self) -> bool:
        """True when the kernel being compiled (not an inlined helper) runs on the AI core."""
        return bool(getattr(self.inline_stack[0], "aicore", False))

    def call_intrinsic(self, func, node):
        if func.name in WARP_INTRINSICS:
            return warp_intrinsic(self, func, node)
        if func.name == "get_subblock_id":
            return self.subblock_id(node)
        if func.name == "setfmatrix":
            return lower_setfmatrix(self, node)
        if func.name == "parallel_group":
            return make_parallel_group(self, node)
        self.error(node, f"pto.{func.name}() is written `{func.usage}`")

    def _target_name(self, node):
        parent = getattr(self, "current_statement", None)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            return parent.targets[0].id
        return None

    def _static_int(self, v, node, what):
        """A positive int known at compile time (a tile's or a view's rows and cols); a float
        is refused as int_constant refuses it, naming what and the value."""
        if (self.int_constant(v, node, what) or 0) > 0:
            return int(v.value)
        got = repr(v.value) if isinstance(v, Const) else self.value_kind(v)
        self.error(node, f"{what} must be a positive integer known at compile time, not {got}",
                   "use a literal, a module constant or a size-deciding kernel argument "
                   "(the kernel is specialised on its value); give a run-time extent as valid="
                   + ("; a variable assigned more than once holds a run-time value even when each "
                      "value is a constant: give the final one its own name" if isinstance(v, Val) else ""))

    def _name(self, ast_value, default, node, what, allowed):
        if ast_value is None:
            return default
        v = self.expr(ast_value)
        if not isinstance(v, Text) or v.value not in allowed:
            self.error(node, f"pto.alloc_tile: {what} must be one of "
                             f"{', '.join('pto.' + a if what == 'loc' else repr(a) for a in allowed)}")
        return v.value

    def _valid(self, ast_value, rows, cols, node, where):
        full = (Const(rows, dtypes.int32, weak=False), Const(cols, dtypes.int32, weak=False))
        if ast_value is None:
            return full
        if not isinstance(ast_value, ast.Tuple) or len(ast_value.elts) != 2:
            self.error(node, f"{where}: valid must be a pair (rows, cols)")
        out = []
        for e, limit, what in zip(ast_value.elts, (rows, cols), ("rows", "cols")):
            v = self.expr(e)
            if isinstance(v, Const):
                k = self.int_constant(v, node, f"{where}: valid {what}")
                if not 1 <= k <= limit:
                    self.error(node, f"{where}: valid {what} {k} is outside 1..{limit}")
                out.append(Const(k, dtypes.int32, weak=False))
            else:
                self.require_value(v, node)
                if v.dtype.is_float or not v.uniform:
                    self.error(node, f"{where}: valid {what} must be a uniform integer")
                out.append(v)
        return tuple(out)

    # ---------------------------------------------------------------- operands
    def typed_tile(self, v, node, spec, operand, what):
        """Check a typed tile operand: its space among the instruction's, its unit's section."""
        if not (isinstance(v, Ptr) and v.space == "l1" and v.tile is not None):
            self.error(node, f"{what} must be a tile from pto.alloc_tile(...), got "
                             f"{getattr(v, 'name', type(v).__name__)}")
        loc = v.tile.loc
        accepted = spec.accepted_spaces(operand)
        if accepted is not None and loc not in accepted:
            self.error(node, f"{what}: tile '{v.name}' is in {loc} ({SPACE_NAMES[loc]}) but "
                             f"{spec.name} takes {operand} in {' or '.join(accepted)}",
                       self._space_hint(spec, loc))
        if self.section == "cube" and loc == "Vec":
            self.error(node, f"{what}: tile '{v.name}' is in Vec (UB), which only the vector cores "
                             "have; this is cube code", "move it into `with pto.vector():`")
        if self.section in ("vector", "vector0") and loc in CUBE_SPACES:
            self.error(node, f"{what}: tile '{v.name}' is in {loc} ({SPACE_NAMES[loc]}), which only "
                             "the cube core has; this is vector code",
                       "move it into `with pto.cube():`; cube and vector cores exchange data through GM")
        if self.section is None:
            self.error(node, f"{spec.name.lower()} outside a section: tile instructions run on one "
                             "unit, so put them in `with pto.cube():` or `with pto.vector():`")
        check_window(self, v, node, spec, operand, what)
        check_nz_use(self, v, node, spec, what)
        return v

    @staticmethod
    def _space_hint(spec, loc):
        if loc == "Acc" and spec.family in VECTOR_FAMILIES:
            return ("on A2/A3 a vector op cannot read L0C: tstore the Acc tile to GM and tload it "
                    "into a Vec tile on a vector core")
        if spec.family == "tile_mma":
            return "textract / tmov the operands from Mat into Left and Right tiles first"
        if spec.name == "TPREFETCH":
            return ("A2/A3's TPREFETCH copies into a UB tile only (include/pto/npu/a2a3/TPrefetch.hpp "
                    "TPrefetchDoCopy: TLoadInstrGm2ub to the tile's __ubuf__ address); prefetch into a Vec tile "
                    "on a vector core, or tload the Mat tile")
        if spec.name == "TLOAD" and loc == "Bias":
            return (f"A2/A3's TLOAD has no Bias destination: static_assert \"{TLOAD_DST_ASSERT}\" "
                    f"({TLOAD_DST_SOURCE}); tload the bias row into a Mat tile (16 x n, valid=(1, n)) "
                    "and textract it into the Bias tile on MTE1")
        return None

    def _base(self, v, node, what, quant_words=False):
        return self.tile_base(v, node, what, quant_words=quant_words)[0]

    def _extent(self, v):
        """(valid rows, valid cols) operands of a typed tile."""
        return v.tile.valid_rows, v.tile.valid_cols

    def _int_operand(self, v, node, what):
        if self.int_constant(v, node, what) is not None:      # a float (16.0 too) names the operand
            return self.operand(v, dtypes.int32, node)
        return self.uniform_int(v, node, what)

    def _require_aicore(self, node, name):
        if not self.is_aicore:
            self.error(node, f"pto.{name} works on typed tiles of pto.alloc_tile (an AI-core kernel)",
                       "allocate the tiles with pto.alloc_tile(rows, cols, dtype, loc=...)")

    def typed_tiles(self, spec, node, args, names):
        """The typed tiles args[name] of spec's call, for each of names, each checked by typed_tile."""
        return [self.typed_tile(args[n], node, spec, n, f"pto.{spec.builtin}: {n}") for n in names]

    # ---------------------------------------------------------------- data movement


    def _move(self, name, node, dst, src, row, col):
        self._require_aicore(node, name.lower())
        spec = self.isa[name]
        call = spec.builtin
        d = self.typed_tile(dst, node, spec, "dst", f"{call}: dst")
        s = self.typed_tile(src, node, spec, "src", f"{call}: src")
        if name != "TMOV_ACC" and d.dtype != s.dtype:
            self.error(node, f"{call}: '{d.name}' holds {d.dtype} but '{s.name}' holds {s.dtype}; "
                             "MTE1 does not convert")
        if name == "TMOV_ACC" and not (d.dtype == s.dtype or (s.dtype == dtypes.float32 and d.dtype in (dtypes.float16, dtypes.bfloat16))):
            built = ("converts float32 to float32, float16 or bfloat16" if s.dtype == dtypes.float32
                     else f"moves {s.dtype} as {s.dtype} (its conversions are built from float32 only)")
            self.error(node, f"{call}: the fixpipe {built}, not to {d.dtype}")
        # TMOV_M2S moves the whole tile, whatever its valid region (TMovToFb: burstLen of Rows x Cols words)
        rows, cols = ((Const(d.tile.rows, dtypes.int32), Const(d.tile.cols, dtypes.int32)) if name == "TMOV_M2S"
                      else self._extent(d))
        if name != "TEXTRACT" and (d.tile.rows, d.tile.cols) != (s.tile.rows, s.tile.cols):
            self.error(node, f"{call}: '{d.name}' is {d.tile.rows} x {d.tile.cols} but '{s.name}' is "
                             f"{s.tile.rows} x {s.tile.cols}", "use textract(dst, src, row, col) for a window")
        aligns = extract_alignment(name, d.tile.loc, s.dtype.itemsize)
        for v, extent, lim, what, align in ((row, rows, s.tile.rows, "row", aligns[0]),
                                            (col, cols, s.tile.cols, "col", aligns[1])):
            if isinstance(v, Const) and isinstance(extent, Const) and int(v.value) + int(extent.value) > lim:
                self.error(node, f"{call}: the window {what}s {int(v.value)}..{int(v.value) + int(extent.value) - 1} "
                                 f"are outside '{s.name}', which has {lim} {what}s")
            if isinstance(v, Const) and int(v.value) % align:
                self.error(node, f"{call}: the window into {d.tile.loc} '{d.name}' starts at {what} {int(v.value)}, "
                                 f"not a multiple of {align}: A2/A3 moves whole fractals from Mat "
                                 "(textract_common.hpp's index asserts)", f"start the window at a {what} that is "
                                 f"a multiple of {align} ({s.dtype} {d.tile.loc} windows)")
        words = name == "TMOV_M2S"         # the fixpipe's int64 quant words
        ops = (self._base(d, node, call, words), self._base(s, node, call, words),
               self._int_operand(rows, node, "rows"), self._int_operand(cols, node, "cols"),
               self._int_operand(row, node, f"{call}: row"), self._int_operand(col, node, f"{call}: col"))
        self.emit(name, None, ops, d.dtype, node, aux=self.tile_aux())
        self.instrs[-1].comment = f"{d.name} <- {s.name}"

    # ---------------------------------------------------------------- cube


    def _matmul(self, name, node, args):
        spec = self.isa[name]
        call = spec.builtin
        if args.get("b", NONE) is not NONE:        # pto-isa's TMATMUL_ACC(cOut, cIn, a, b)
            c_out, c_in = args["acc"], args["left"]
            if not (isinstance(c_in, Ptr) and isinstance(c_out, Ptr) and (c_in.name, c_in.base) == (c_out.name, c_out.base)):
                self.error(node, f"{call}(acc, acc_in, left, right): acc_in must be acc itself; A2/A3 "
                                 "accumulates into acc and never reads acc_in (TMatmul.hpp TMATMUL_ACC_IMPL)")
            args = {**args, "left": args["right"], "right": args["b"]}
        c = self.typed_tile(args["acc"], node, spec, "c", f"{call}: acc")
        a = self.typed_tile(args["left"], node, spec, "a", f"{call}: left")
        b = self.typed_tile(args["right"], node, spec, "b", f"{call}: right")
        if a.dtype != b.dtype or (c.dtype.name, a.dtype.name) not in MATMUL_TYPES:
            self.error(node, f"{call}: ({c.dtype}, {a.dtype}, {b.dtype}) is not a TMATMUL type on A2/A3; "
                             "use (float32, float16, float16), (float32, bfloat16, bfloat16), "
                             "(float32, float32, float32) or (int32, int8, int8)")
        m, k = self._extent(a)
        kb, n = self._extent(b)
        if name.startswith("TGEMV") and not (isinstance(m, Const) and int(m.value) == 1):
            rows = int(m.value) if isinstance(m, Const) else "a run-time number of"
            self.error(node, f"{call}: left '{a.name}' has {rows} valid rows; TGEMV multiplies one row "
                             "(m = 1, TGEMV.md)", "allocate it with valid=(1, k), or use pto.tmatmul for m > 1")
        for v, what in ((m, "m"), (k, "k"), (n, "n")):
            if isinstance(v, Const) and not 1 <= int(v.value) <= MAX_MKN:
                self.error(node, f"{call}: {what} = {int(v.value)} is outside [1, {MAX_MKN}] (TMATMUL.md)")
        if isinstance(k, Const) and isinstance(kb, Const):
            if int(k.value) != int(kb.value):
                self.error(node, f"{call}: left '{a.name}' has k = {int(k.value)} columns but right '{b.name}' "
                                 f"has {int(kb.value)} rows")
        elif k != kb:                # known at run time, unless both are one register
            self.run_time_check(node, k, kb, kb, MATMUL_K_AGREES,
                                f"pto.{call}: valid columns of left '{a.name}' == valid rows of right '{b.name}'")
        for v, lim, what in ((m, c.tile.rows, "rows"), (n, c.tile.cols, "columns")):
            if isinstance(v, Const) and int(v.value) > lim:
                self.error(node, f"{call}: the result has {int(v.value)} {what} but acc '{c.name}' has {lim}")
        ops = [self._base(c, node, call), self._base(a, node, call), self._base(b, node, call),
               self._int_operand(m, node, "m"), self._int_operand(n, node, "n"), self._int_operand(k, node, "k")]
        if "bias" in args:
            bias = self.typed_tile(args["bias"], node, spec, "bias", f"{call}: bias")
            if bias.dtype != c.dtype:
                self.error(node, f"{call}: bias '{bias.name}' holds {bias.dtype}, acc '{c.name}' {c.dtype}")
            ops.append(self._base(bias, node, call))
        self.emit(name, None, tuple(ops), c.dtype, node, aux=self.tile_aux())
        self.instrs[-1].comment = f"{c.name} {'+' if spec.reads_dst else ''}= {a.name} @ {b.name}"

    # ---------------------------------------------------------------- vector ops on typed tiles
    def lower_tile_op(self, spec, node, args):
        args = self.operand_defaults(spec, args)
        tiles = [args[o.name] for o in spec.value_operands if o.kind == "tile"]
        if not any(isinstance(t, Ptr) and t.tile is not None for t in tiles):
            if self.is_aicore:
                self.error(node, f"pto.{spec.builtin} in an AI-core kernel takes tiles of pto.alloc_tile")
            if flag_given(args.get("is_binary", NONE)):
                self.error(node, f"pto.{spec.builtin}: is_binary (pto-isa's pairwise TCOLSUM through a "
                                 "tmp tile) is built for the AI core's typed tiles only",
                           "allocate the tiles with pto.alloc_tile in an AI-core kernel")
            return super().lower_tile_op(spec, node, args)
        names = [o.name for o in spec.value_operands if o.kind == "tile"]
        for name, t in zip(names, tiles):
            self.typed_tile(t, node, spec, name, f"pto.{spec.builtin}: {name}")
        if spec.name == "TCVT":
            return self._convert(spec, node, {"dst": tiles[0], "src": tiles[1]}, args)
        tile = {name: args[name] for name in names}        # the tiles by their ISA names
        if spec.family == "tile_alu":
            self.elementwise_operands(spec, node, tile, args)
            return super().lower_tile_op(spec, node, args)
        if spec.family == "tile_col_reduce":
            dst, src = tile["dst"], tile["src"]
            self.reduce_source(node, src, args)         # A2/A3 writes dst's row 0, one value a column
            self.match_valid(node, f"pto.{spec.builtin}", dst, src, "columns", "\"Fix: TCOLREDUCE input valid col "
                             "must be consistent with the output valid row.\", include/pto/npu/a2a3/TColReduceOps.hpp")
            if "tmp" in tile:
                self.check_pairwise_sum(spec, node, tile, args)
            # shared words: modelled in A2/A3's order, or refused where no header line orders them
            check_col_reduce_overlaps(self, spec, node, tile, args, "tmp" in tile and tile["tmp"] is not dst
                                      and flag_given(args.get("is_binary", NONE)))
        elif spec.family == "tile_col_expand":
            dst, src = tile["dst"], tile["src"]
            if src.tile.cols != dst.tile.cols:
                self.error(node, f"pto.{spec.builtin}: '{src.name}' has {src.tile.cols} columns but "
                                 f"'{dst.name}' has {dst.tile.cols}; its first row is copied down every row "
                                 f"of '{dst.name}'")
            self.match_valid(node, f"pto.{spec.builtin}", src, dst, "columns", "\"Fix: TCOLEXPAND input valid col "
                             "must be consistent with the output valid row.\", include/pto/npu/a2a3/TColExpand.hpp")
        elif spec.family == "tile_col_expand_op":
            dst, v = tile["dst"], tile["v"]
            vc = dst.tile.valid_cols
            if isinstance(vc, Const) and v.tile.cols < int(vc.value):
                self.error(node, f"pto.{spec.builtin}: '{v.name}' has {v.tile.cols} columns, fewer than the "
                                 f"{int(vc.value)} valid columns of '{dst.name}'; its first row holds one value "
                                 "per column")
            # A2/A3's TCOLEXPANDOP_IMPL takes whichever source's valid region is dst's as the
            # full tile; pypto_sim asks a to be it
            self.expand_op_operands(spec, node, tile, args, "TColExpandBinOp.hpp reads the source whose valid "
                                    "region is dst's as the full tile; here that is a", asserted=False)
        else:                        # row reductions, expansions and expand ops: one value a row
            self.check_row_operands(spec, node, tile, args)
        # a shape not given is the valid region of the tile that prices the operation
        data = tile[data_operand(spec)]
        rows_name, cols_name = roles_of(spec).shape
        if args.get(rows_name, NONE) is NONE:
            args[rows_name] = data.tile.valid_rows
        if args.get(cols_name, NONE) is NONE:
            args[cols_name] = Const(data.tile.cols, dtypes.int32)
        return super().lower_tile_op(spec, node, args)

    def _convert(self, spec, node, tile, args):
        dst, src = tile["dst"], tile["src"]
        mode = self.cvt_mode(node, src.dtype, dst.dtype, args["mode"], args.get("sat", NONE))
        self.elementwise_operands(spec, node, tile, args)
        ops = (self._base(dst, node, "tcvt"), self._base(src, node, "tcvt"),
               self._int_operand(Const(mode, dtypes.int32), node, "mode"),
               self._int_operand(args["n"], node, "pto.tcvt: n"),
               *(self._int_operand(args[k], node, k) for k in ("cols", "dpitch", "apitch", "bpitch")))
        self.emit("TCVT", None, ops, dst.dtype, node, aux=self.tile_aux())
        self.instrs[-1].comment = self.cvt_comment(dst, src, args["mode"].value)

    # ---------------------------------------------------------------- synchronisation
    def _pipe_arg(self, value, node, what, allow_all=False):
        if isinstance(value, Text):
            if value.value == "PIPE_ALL" and allow_all:
                return PIPE_ALL
            if value.value in PTO_TO_PIPE:
                kind = (getattr(self, "section", None) or "").rstrip("0")
                if kind and value.value not in UNIT_PIPES[kind]:
                    core = "cube core (AIC)" if kind == "cube" else "vector cores (AIVs)"
                    self.error(node, f"{what}: pto.{value.value} is not a pipe of the {core}, whose pipes are "
                                     f"{', '.join('pto.' + p for p in UNIT_PIPES[kind])}",
                               "order this core's own pipes; hand over to the other core through GM and "
                               "cross-core flags")
                return PTO_TO_PIPE[value.value]
        if isinstance(value, Text) and value.value in PIPES and not self.is_aicore:
            return PIPES.index(value.value)
        names = ", ".join("pto." + n for n in PTO_TO_PIPE) + (", pto.PIPE_ALL" if allow_all else "")
        self.error(node, f"{what} must be a pipe: {names}"
                         + ("" if self.is_aicore else f" (or one of {', '.join(map(repr, PIPES))})"))

    def _flag(self, op, node, args):
        if not self.is_aicore:
            return super()._flag(op, node, args)
        src = self._pipe_arg(args["src_pipe"], node, "src_pipe")
        dst = self._pipe_arg(args["dst_pipe"], node, "dst_pipe")
        if self.section is None:
            self.error(node, f"{op.lower()} outside a section: flags order the pipes of one unit, so "
                             "put it in `with pto.cube():` or `with pto.vector():`")
        event = args["event"]
        if not isinstance(event, Const) or not 0 <= int(event.value) < EVENT_ID_BOUND:
            self.error(node, f"event must be a constant 0..{EVENT_ID_BOUND - 1} (PTO-ISA's event ids; "
                             "the machine table's [aicore] event_ids may allow fewer)")
        if src == dst:
            self.error(node, "set_flag/wait_flag order two different pipes; one pipe is in order already")
        self.emit(op, None, (), None, node, aux=(src, dst, int(event.value)))

    def _cross_core(self, op, node, args):
        if self.section not in ("cube", "vector"):
            self.error(node, f"{op.lower()} signals between the cube core and the vector cores: use "
                             "it inside `with pto.cube():` or `with pto.vector():`")
        event = args["event_id"]
        if not isinstance(event, Const) or not 0 <= int(event.value) < EVENT_ID_BOUND:
            self.error(node, f"event_id must be a constant 0..{EVENT_ID_BOUND - 1} (the machine "
                             "table's [aicore] cross_core_event_ids may allow fewer)")
        pipe = PIPE_ALL
        if args.get("pipe", NONE) is not NONE:
            pipe = self._pipe_arg(args["pipe"], node, "pipe")
        self.emit(op, None, (), None, node, aux=(int(event.value), pipe, 0))


# ---------------------------------------------------------------- alloc_tile
@LOWERINGS.lowering("alloc_tile", binds=False)
def lower_alloc_tile(comp, node, builtin):
    try:
        bound = builtin.__signature__.bind(*node.args, **{k.arg: k.value for k in node.keywords})
    except TypeError as exc:
        comp.error(node, f"pto.alloc_tile{builtin.signature_text}: {exc}")
    given = dict(bound.arguments)
    if not comp.is_aicore:
        comp.error(node, "pto.alloc_tile is only for AI-core kernels")
    rows, cols = (comp._static_int(comp.expr(given[k]), node, f"pto.alloc_tile: {k}") for k in ("rows", "cols"))
    dtype = comp.expr(given["dtype"])
    dtype = dtype.dtype if isinstance(dtype, DTypeRef) else dtype
    if not isinstance(dtype, dtypes.DType):
        comp.error(node, "pto.alloc_tile: dtype must be a pto dtype such as pto.float16")
    loc = comp._name(given.get("loc"), "Vec", node, "loc", SPACES)
    layout = comp._name(given.get("layout"), "row", node, "layout", ("row", "col", "NZ"))
    name = comp._target_name(node) or f"tile{len(comp.buffers)}"
    where = f"tile '{name}' ({loc}, {rows} x {cols} {dtype})"
    if layout == "NZ":               # an NZ Vec tile (ColMajor, RowMajor fractal): frontend/nz_windows.py
        layout = nz_layout(comp, node, where, loc)
    if comp.pipeline_state is not None:
        comp.error(node, f"{where}: typed tiles are not multi-buffered by pto.pipeline",
                   "allocate one tile per buffer (a_ping, a_pong) and alternate them")
    if dtype in dtypes.MINIFLOATS:
        comp.error(node, f"{where}: {dtype} {dtypes.a5_only(dtype)}",
                   "keep such data in a tensor; the host reads its values (memcpy_d2h into "
                   "a float32 array)")
    if dtype.name not in SPACE_DTYPES[loc]:
        comp.error(node, f"{where}: {loc} ({SPACE_NAMES[loc]}) holds "
                         f"{', '.join(SPACE_DTYPES[loc])}, not {dtype}")
    check_tile_shape(comp, node, where, loc, rows, cols, dtype, layout)
    valid_rows, valid_cols = comp._valid(given.get("valid"), rows, cols, node, where)
    line = getattr(node, "lineno", 0) + comp.kernel.line_offset
    slot = comp.shared_buffer(node, lambda: comp.buffers.append(LocalBuffer(
        name, sum(b.words for b in comp.buffers if b.owns_memory), rows * cols, dtype, line, 1,
        loc, rows, cols)))
    name, base = comp.buffers[slot].name, comp.buffers[slot].offset
    comp.emit("ALLOC_LOCAL", None, (), dtype if dtype in dtypes.TILE_DTYPES else dtypes.float32,
              node, aux=(base, rows * cols))
    comp.instrs[-1].comment = f"{name}: {loc} {rows} x {cols} x {dtype} at word {base}"
    info = TileInfo(loc, rows, cols, layout, valid_rows, valid_cols, dynamic=given.get("valid") is not None)
    return Ptr("l1", slot, dtype, name, Const(0, dtypes.int32), rows * cols, base, tile=info)


@LOWERINGS.lowering("textract")
def lower_textract(comp, node, args):
    if is_vec_window(args["dst"], args["src"]):          # Vec -> Vec (frontend/vec_windows.py)
        return lower_vec_window(comp, node, "TEXTRACT_V2V", args["dst"], args["src"], args["row"], args["col"])
    comp._move("TEXTRACT", node, args["dst"], args["src"], args["row"], args["col"])


@LOWERINGS.lowering("tmov")
def lower_tmov(comp, node, args):
    src = args["src"]
    acc = isinstance(src, Ptr) and src.tile is not None and src.tile.loc == "Acc"
    dst = args["dst"]
    if acc and isinstance(dst, Ptr) and dst.tile is not None and dst.tile.loc == "Vec":
        comp.error(node, f"tmov: Acc -> Vec ('{src.name}' -> '{dst.name}') is not a data path on "
                         "A2/A3 (the fixpipe writes UB only on A5)",
                   "tstore the Acc tile to GM and tload it on a vector core")
    if all(isinstance(t, Ptr) and t.tile is not None and t.tile.loc == "Vec" for t in (src, dst)):
        # Vec -> Vec: A2/A3 TMovToVec, a UB -> UB copy on the V pipe (isa/44_sort.toml)
        return comp.lower_tile_op(comp.isa["TMOV_V2V"], node, {"dst": dst, "src": src, "n": NONE})
    if isinstance(dst, Ptr) and dst.tile is not None and dst.tile.loc == "Scaling":
        return lower_tmov_m2s(comp, node, dst, src)
    comp._move("TMOV_ACC" if acc else "TMOV", node, dst, src, Const(0, dtypes.int32),
               Const(0, dtypes.int32))


def lower_tmov_m2s(comp, node, dst, src):
    """TMOV Mat -> Scaling (isa/35_aicore.toml TMOV_M2S) after A2/A3 TMov.hpp TMovToFb's static_asserts
    (one row, the same dtype and shape: _move's checks; the Scaling tile's dtype is int64)."""
    if dst.tile.cols * dst.dtype.itemsize % 128:
        comp.error(node, f"tmov: '{dst.name}' is a row of {dst.tile.cols * dst.dtype.itemsize} bytes, not a multiple "
                         "of 128 (A2/A3 TMov.hpp TMovToFb: static_assert \"TMov: When TileType is Scaling, col * "
                         "sizeof(srcType) must be aligned to 128\")", "allocate the tiles with cols a multiple of 16")
    comp._move("TMOV_M2S", node, dst, src, Const(0, dtypes.int32), Const(0, dtypes.int32))


@LOWERINGS.lowering("tmatmul", "tmatmul_acc", "tmatmul_bias", "tgemv", "tgemv_acc", "tgemv_bias",
                   checks=(aicore_only,), per_builtin=True)
def lower_matmul(comp, node, args, builtin):
    comp._matmul(builtin.specs[0].name, node, args)


@LOWERINGS.lowering("pipe_barrier", checks=(aicore_only,))
def lower_pipe_barrier(comp, node, args):
    emit_pipe_barrier(comp, node, comp._pipe_arg(args["pipe"], node, "pipe_barrier: pipe", allow_all=True))


def emit_pipe_barrier(comp, node, pipe=PIPE_ALL):
    """A PIPE_BARRIER record of pipe at node: pto.pipe_barrier's, and the pipe_barrier(PIPE_ALL) a
    header's code issues inside a composite builtin (TPUT, TNOTIFY, TPRINT, ...)."""
    comp.emit("PIPE_BARRIER", None, (), None, node, aux=(pipe, 0, 0))


@LOWERINGS.lowering("cross_core_set_flag", "cross_core_wait_flag", checks=(aicore_only,), per_builtin=True)
def lower_cross_core(comp, node, args, builtin):
    comp._cross_core(builtin.specs[0].name, node, args)
