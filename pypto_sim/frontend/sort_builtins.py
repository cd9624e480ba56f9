"""Lowering of the sort family on typed Vec tiles (isa/44_sort.toml): pto.tsort32,
pto.tmrgsort (PTO-ISA's two forms: blocks of one list, or two lists) and the mask-pattern
pto.tgather, with the checks of pto-isa's A2/A3 and CPU implementations
(include/pto/npu/a2a3/TSort32.hpp, TMrgSort.hpp, TGather.hpp) as compile errors at the kernel's
line. Every shape is static: the kernels that use them (pto-isa's topk) bind one-row views.

A mixin of :class:`pypto_sim.frontend.codegen.KernelCompiler`.
"""
from __future__ import annotations

from .. import dtypes
from ..isa.tile_roles import GATHER_PATTERNS, gather_selects
from .values import NONE, Const, Text

SORT_MODES = {"TSORT32": 0, "TMRGSORT": 1, "TMRGSORT_LISTS": 2, "TGATHER": 3}
PAIR_WORDS = 2          # a (value, index) pair of float32 is two words (STRUCT_BYTES 8)


class SortBuiltins:
    """pto.tsort32, pto.tmrgsort and pto.tgather on typed Vec tiles."""

    def _sort_tiles(self, spec, node, named):
        return {k: self.typed_tile(v, node, spec, k, f"pto.{spec.builtin or 'tmrgsort'}: {k}")
                for k, v in named.items()}

    def _sort_valid(self, t, node, call):
        """(valid rows, valid cols) of t, which must be static and t's rows contiguous."""
        vr, vc = t.tile.valid_rows, t.tile.valid_cols
        if not (isinstance(vr, Const) and isinstance(vc, Const)):
            self.error(node, f"{call}: '{t.name}' needs a static valid region (sorts are built for "
                             "static shapes)", "allocate the tile or view with constant valid=(rows, cols)")
        return int(vr.value), int(vc.value)

    def _sort_emit(self, name, node, tiles, k, rows, cols, dtype, comment):
        spec = self.isa[name]
        ops = []
        for o in spec.value_operands:
            if o.kind == "tile":
                ops.append(self._base(tiles[o.name], node, name.lower()))
            else:
                value = {"mode": SORT_MODES[name], "k": k, "rows": rows, "cols": cols}[o.name]
                ops.append(self._int_operand(Const(value, dtypes.int32), node, o.name))
        self.emit(name, None, tuple(ops), dtype, node, aux=self.tile_aux())
        self.instrs[-1].comment = comment

    def _float32_only(self, node, call, *tiles):
        for t in tiles:
            if t.dtype != dtypes.float32:
                self.error(node, f"{call}: '{t.name}' holds {t.dtype}; the sorts are built for float32 "
                                 "(float16 pairs take four halves and are not built)")

    def builtin_tsort32(self, node, args):
        """TSORT32(dst, src, idx[, tmp]): A2/A3 TSort32.hpp / CPU TSort32.hpp."""
        spec, call = self.isa["TSORT32"], "pto.tsort32"
        t = self._sort_tiles(spec, node, {"dst": args["dst"], "src": args["src"], "idx": args["idx"]})
        dst, src, idx = t["dst"], t["src"], t["idx"]
        self._float32_only(node, call, dst, src)
        if idx.dtype != dtypes.int32:
            self.error(node, f"{call}: the index tile '{idx.name}' holds {idx.dtype}; pto-isa's is uint32, "
                             "int32 here (uint32 is not a tile dtype of this simulator)")
        rows, cols = self._sort_valid(src, node, call)
        irows, icols = self._sort_valid(idx, node, call)
        if icols < cols or irows not in (1, rows):
            self.error(node, f"{call}: '{idx.name}' ({irows} x {icols} valid) must give an index for each of "
                             f"the {cols} columns, in one row or in each of {rows}")
        if dst.tile.rows * dst.tile.cols < rows * PAIR_WORDS * cols or \
                (rows > 1 and dst.tile.cols != PAIR_WORDS * cols):
            self.error(node, f"{call}: '{dst.name}' ({dst.tile.rows} x {dst.tile.cols}) must hold {rows} rows "
                             f"of {PAIR_WORDS * cols} words ((value, index) pairs)")
        if rows > 1 and src.tile.cols != cols:
            self.error(node, f"{call}: '{src.name}' rows must be whole ({cols} of {src.tile.cols} valid)")
        ipitch = 0 if irows == 1 else idx.tile.cols
        self._sort_emit("TSORT32", node, t, ipitch, rows, cols, dtypes.float32,
                        f"{dst.name} <- sort32({src.name}, {idx.name})")

    def builtin_tmrgsort(self, node, args):
        """TMRGSORT(dst, src, block_len) or TMRGSORT(dst, src0, src1=, tmp=): TMrgSort.hpp."""
        call = "pto.tmrgsort"
        if args["src1"] is not NONE:
            if args["block_len"] is not NONE:
                self.error(node, f"{call}: give block_len (one list of blocks) or src1 (two lists), not both")
            spec = self.isa["TMRGSORT_LISTS"]
            t = self._sort_tiles(spec, node, {"dst": args["dst"], "src": args["src"], "src1": args["src1"]})
            if args["tmp"] is not NONE:
                self.typed_tile(args["tmp"], node, spec, "dst", f"{call}: tmp")
            dst, s0, s1 = t["dst"], t["src"], t["src1"]
            self._float32_only(node, call, dst, s0, s1)
            n = []
            for v in (dst, s0, s1):
                r, c = self._sort_valid(v, node, call)
                if r != 1 or c % PAIR_WORDS:
                    self.error(node, f"{call}: '{v.name}' must be one row of (value, index) pairs "
                                     f"(TMRGSORT: tile rows must be 1), not {r} x {c} valid")
                n.append(c)
            if n[0] < n[1] + n[2]:
                self.error(node, f"{call}: '{dst.name}' has {n[0]} valid words, fewer than the {n[1] + n[2]} "
                                 "of the two lists")
            self._sort_emit("TMRGSORT_LISTS", node, t, n[1], 1, n[1] + n[2], dtypes.float32,
                            f"{dst.name} <- merge({s0.name}, {s1.name})")
            return
        spec = self.isa["TMRGSORT"]
        t = self._sort_tiles(spec, node, {"dst": args["dst"], "src": args["src"]})
        dst, src = t["dst"], t["src"]
        self._float32_only(node, call, dst, src)
        block = args["block_len"]
        if not isinstance(block, Const) or int(block.value) <= 0 or int(block.value) % 64:
            self.error(node, f"{call}: block_len must be a constant multiple of 64 words (TMrgSort.hpp: "
                             "blockLen % 64 == 0; 64 words = 32 (value, index) pairs)")
        block = int(block.value)
        r, cols = self._sort_valid(src, node, call)
        if r != 1 or cols % (4 * block) or not 1 <= cols // (4 * block) <= 255:
            self.error(node, f"{call}: '{src.name}' must be one row whose valid words ({r} x {cols}) are 1 to "
                             f"255 groups of 4 blocks of {block} (TMrgSort.hpp's asserts)")
        if self._sort_valid(dst, node, call)[1] < cols:
            self.error(node, f"{call}: '{dst.name}' must hold the {cols} words of '{src.name}'")
        self._sort_emit("TMRGSORT", node, t, block, 1, cols, dtypes.float32,
                        f"{dst.name} <- mrgsort({src.name}, {block})")

    def builtin_tgather(self, node, args):
        """TGATHER<MaskPattern>(dst, src): A2/A3 TGather.hpp (vreducev2), CPU TGather.hpp."""
        spec, call = self.isa["TGATHER"], "pto.tgather"
        t = self._sort_tiles(spec, node, {"dst": args["dst"], "src": args["src"]})
        dst, src = t["dst"], t["src"]
        pattern = args["pattern"]
        if not (isinstance(pattern, Text) and pattern.value in GATHER_PATTERNS):
            self.error(node, f"{call}: pattern must be one of {', '.join(map(repr, GATHER_PATTERNS))}")
        code = GATHER_PATTERNS[pattern.value]
        for v in (dst, src):
            if v.dtype.name not in spec.dtypes:
                self.error(node, f"{call}: '{v.name}' holds {v.dtype}; TGATHER takes 32-bit float32 / int32 here")
        rows, cols = self._sort_valid(src, node, call)
        if rows > 1 and src.tile.cols != cols:
            self.error(node, f"{call}: '{src.name}' rows must be whole ({cols} of {src.tile.cols} valid)")
        picked = rows * sum(gather_selects(code, c) for c in range(cols))
        if dst.tile.rows * dst.tile.cols < picked:
            self.error(node, f"{call}: '{dst.name}' ({dst.tile.rows} x {dst.tile.cols}) cannot hold the {picked} "
                             f"words {pattern.value} selects from '{src.name}' ({rows} x {cols} valid)",
                       "vreducev2 writes every selected word: make dst (or its row view) that long")
        self._sort_emit("TGATHER", node, t, code, rows, cols, dst.dtype,
                        f"{dst.name} <- gather({src.name}, {pattern.value})")
