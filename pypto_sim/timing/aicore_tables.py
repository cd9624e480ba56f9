"""The AI core's instructions decoded once per launch into the tables its step functions read
(exec/compiled/aicore_steps.py): tp (ints) and tf (floats) per pc, the vector formula rows,
and the distinct tile ranges with their overlaps (auto sync's hazards). Both drivers use them:
the compiled event loop (timing/aicore_fast.py) and the SimPy model (timing/aicore.py).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import BY_CODE
from ..exec.aicore_tiles import layout_of
from ..ir.program import C_AUX, C_DTYPE, C_SRC
from ..isa.tile_roles import extract_alignment
from . import peaks

TILE_KINDS = {"tile_load": "LOAD", "tile_store": "STORE", "tile_move": "MOVE", "tile_mma": "MMA"}
SYNC_KINDS = {"SET_FLAG": "SET_FLAG", "WAIT_FLAG": "WAIT_FLAG", "PIPE_BARRIER": "PIPE_BARRIER",
              "CROSS_CORE_SET_FLAG": "CC_SET", "CROSS_CORE_WAIT_FLAG": "CC_WAIT", "SYNCALL": "SYNCALL"}


class AICoreTables:
    """The engine's per-instruction tables of one launch: tp (ints), tf (floats), the vector
    formula rows (fm_i, fm_f), and the distinct hazard ranges with their overlaps (ov)."""

    def __init__(self, sim, ex):
        code = sim.enc.code
        self.ex = ex
        n = len(code)
        self.tp = np.zeros((n, ex.N_TP), np.int64)
        self.tf = np.zeros((n, ex.N_TF), np.float64)
        self.tp[:, ex.TP_NJ] = -1
        self.tp[:, ex.TP_COLSJ] = -1
        self.tp[:, ex.TP_MSJ] = -1
        self.ranges: dict = {}
        self.scalar_ranges: dict = {}      # pc of a scalar UB access -> its tile's range (auto sync)
        fm_i, fm_f = [], []
        self.flag_events = self.cross_events = 1
        self.formula_rows: dict = {}       # (op name, dtype) -> (first row, rows) of fm
        for pc, spec in enumerate(sim.pc_spec):
            row, frow = self.tp[pc], self.tf[pc]
            if spec.family == "tile_sync":
                if spec.name not in SYNC_KINDS:        # the SimPy model's own (timing/aicore_fast.py says why)
                    continue
                kind = SYNC_KINDS[spec.name]
                row[ex.TP_KIND] = getattr(ex, "AK_" + kind)
                aux = [int(x) for x in code[pc, C_AUX:C_AUX + 3]]
                if kind in ("SET_FLAG", "WAIT_FLAG"):
                    row[ex.TP_SRC], row[ex.TP_DST], row[ex.TP_EVENT] = aux
                    self.flag_events = max(self.flag_events, aux[2] + 1)
                elif kind == "PIPE_BARRIER":
                    row[ex.TP_PIPEARG] = aux[0]
                elif kind == "SYNCALL":
                    row[ex.TP_PIPEARG], row[ex.TP_CCEVENT] = -1, aux[0]      # every pipe; the kind
                else:
                    row[ex.TP_CCEVENT] = aux[0]
                    row[ex.TP_PIPEARG] = aux[1] if kind == "CC_SET" else 0
                    self.cross_events = max(self.cross_events, aux[0] + 1)
                continue
            if spec.name in ("SLD_UB", "SST_UB"):     # the scalar unit's access of a tile's words
                base, words = (int(x) for x in code[pc, C_AUX:C_AUX + 2])
                self.scalar_ranges[pc] = self._range((base, base + words))
                continue
            if not (spec.is_tile and spec.family != "tile_sync"):
                continue
            tiles = layout_of(sim, pc).tiles
            if tiles is None:       # the compiler gives every typed-tile operand its tile
                raise AssertionError(f"{spec.name} at pc {pc}: an operand names no typed tile")
            self._tile(sim, pc, spec, tiles, row, frow, fm_i, fm_f)
        self.fm_i = np.array(fm_i or [[0, 0]], np.int64).reshape(-1, 2)
        self.fm_f = np.array(fm_f or [[0.0, 0.0]], np.float64).reshape(-1, 2)
        lo = np.array([r[0] for r in self.ranges] or [0], np.int64)
        hi = np.array([r[1] for r in self.ranges] or [0], np.int64)
        self.ov = ((lo[None, :] < hi[:, None]) & (lo[:, None] < hi[None, :])).astype(np.int8)

    def _range(self, words):
        return self.ranges.setdefault(words, len(self.ranges))

    def _tile(self, sim, pc, spec, tiles, row, frow, fm_i, fm_f):
        ex, m, code = self.ex, sim.m, sim.enc.code
        layout = layout_of(sim, pc)
        view, reads, writes, data = tiles
        roles, named = layout.roles, layout.named
        fam = spec.family
        kind = TILE_KINDS.get(fam, "VEC")
        if fam == "tile_store" and data.buf.space == "Acc":
            kind = "STORE_ACC"
        row[ex.TP_KIND] = getattr(ex, "AK_" + kind)
        dst = view.get(roles.dst)
        width = 0
        if roles.shape == ("n",):
            row[ex.TP_NJ] = named["n"]
            row[ex.TP_ITEM] = dst.buf.dtype.itemsize
            width, row[ex.TP_COLSJ] = self._op_cols(sim, pc, named)
            row[ex.TP_DSTCOLS] = width or dst.cols
        else:
            row[ex.TP_RJ], row[ex.TP_CJ] = named[roles.shape[0]], named[roles.shape[1]]
            row[ex.TP_ITEM] = data.buf.dtype.itemsize
        row[ex.TP_DITEM] = data.buf.dtype.itemsize
        row[ex.TP_ALU] = fam == "tile_alu"
        # the tiles the shape bounds (a scratch tile, pto-isa's tmp, holds what it holds), which
        # tile_shape checks for an element count or a bounded family only
        views = [v for n, v in view.items() if n != roles.scratch] if roles.shape == ("n",) or roles.bounded else []
        if len(views) > 4:
            raise AssertionError(f"{spec.name}: more than four tiles")
        row[ex.TP_NVIEWS] = len(views)
        mask = view.get(roles.mask) if roles.mask else None
        for i, v in enumerate(views):
            row[ex.TP_VIEWS + 3 * i:ex.TP_VIEWS + 3 * i + 3] = (v.rows, v.cols, v is mask)
        if roles.mask:
            row[ex.TP_MSJ] = named["mstride"]
        row[ex.TP_BOUNDED] = roles.bounded
        # the tiles an op walks; an element count's when it runs rows of cols at the tiles'
        # pitches (a register's width decides at dispatch, an immediate's here)
        if roles.shape != ("n",) or width > 0 or row[ex.TP_COLSJ] >= 0:
            self._extents(layout, view, row, ex)
        row[ex.TP_DATA_R], row[ex.TP_DATA_C] = data.rows, data.cols
        if dst is not None:
            row[ex.TP_DST_R], row[ex.TP_DST_C] = dst.rows, dst.cols
        if fam in ("tile_load", "tile_store"):
            row[ex.TP_GMJ], row[ex.TP_STRJ], row[ex.TP_LAYJ] = named[roles.gm], named["stride"], named["layout"]
            row[ex.TP_SLOT] = int(code[pc, C_AUX])
            row[ex.TP_ITEM] = BY_CODE[int(code[pc, C_DTYPE])].itemsize
            mat = data.buf.space == "Mat"
            if fam == "tile_load":
                row[ex.TP_ROUTE] = ex.ROUTE_GM_TO_L1 if mat else ex.ROUTE_GM_TO_UB
                frow[ex.TF_BW] = m.gm_to_l1_bytes_per_cycle if mat else m.gm_to_ub_bytes_per_cycle
            else:
                row[ex.TP_ROUTE] = ex.ROUTE_L1_TO_GM if mat else ex.ROUTE_UB_TO_GM
                frow[ex.TF_BW] = m.l1_to_gm_bytes_per_cycle if mat else m.ub_to_gm_bytes_per_cycle
                row[ex.TP_ACC_BYTES] = data.buf.dtype.itemsize
        elif fam == "tile_move":
            src = view["src"]
            if "pos" in named:          # TIMG2COL: the feature map must fit src's rows (cols < 0 marks it)
                row[ex.TP_ROWJ], row[ex.TP_COLJ] = named["fmatrix"], named["conv"]
                row[ex.TP_SRC_R], row[ex.TP_SRC_C] = src.rows, -1
            else:
                row[ex.TP_ROWJ], row[ex.TP_COLJ] = named["row"], named["col"]
                row[ex.TP_SRC_R], row[ex.TP_SRC_C] = src.rows, src.cols
            row[ex.TP_ALIGN_R], row[ex.TP_ALIGN_C] = extract_alignment(spec.name, dst.buf.space,
                                                                       src.buf.dtype.itemsize)
            space = writes[0].buf.space
            if space == "Vec":          # UB -> UB: the rate the record's own row gives a repeat
                frow[ex.TF_BW] = m.cost_term(spec.name, "repeat_bytes") / m.cost_term(spec.name, "per_repeat")
            else:
                frow[ex.TF_BW] = {"Left": m.l1_to_l0a_bytes_per_cycle, "Right": m.l1_to_l0b_bytes_per_cycle,
                                  "Bias": m.l1_to_bias_bytes_per_cycle, "Mat": m.l0c_to_l1_bytes_per_cycle,
                                  "Scaling": m.l1_to_fb_bytes_per_cycle}[space]
        elif fam == "tile_mma":
            a, b = view["a"], view["b"]
            row[ex.TP_MJ], row[ex.TP_NNJ], row[ex.TP_KJ] = named["m"], named["n"], named["k"]
            row[ex.TP_A_R], row[ex.TP_A_C], row[ex.TP_B_R], row[ex.TP_B_C] = a.rows, a.cols, b.rows, b.cols
            item = data.buf.dtype.itemsize     # tile_dispatch's k0, once
            row[ex.TP_KTILE] = (m.cost_term(spec.name, "k_tile") * 2 // item if item <= 2
                                else m.cost_term(spec.name, "k_tile_f32"))
            frow[ex.TF_PER] = m.cost_term(spec.name, "per_repeat_f32" if item == 4 else "per_repeat")
        else:
            self._vector(m, spec.name, data.buf.dtype.name, row, frow, fm_i, fm_f, ex,
                         self.formula_rows)
            self._fast_row_reduce(m, spec.name, dst, data, row, ex)
        ranges_r = [self._range(v.words()) for v in reads]
        ranges_w = [self._range(v.words()) for v in writes]
        if len(ranges_r) > 6 or len(ranges_w) > 4:
            raise AssertionError(f"{spec.name}: too many tiles for the engine's tables")
        row[ex.TP_NR], row[ex.TP_NW] = len(ranges_r), len(ranges_w)
        row[ex.TP_READS:ex.TP_READS + len(ranges_r)] = ranges_r
        row[ex.TP_WRITES:ex.TP_WRITES + len(ranges_w)] = ranges_w
        row[ex.TP_MAXJ] = len(named)

    @staticmethod
    def _extents(layout, view, row, ex):
        """The tiles the op walks and how far (TP_NEXT, TP_EXT: tile_shape's check of TileOp's):
        each token of tile_roles.EXTENT_TOKENS a term, a difference a - b of two."""
        terms = {"R": ex.EXT_R, "C": ex.EXT_C, "1": ex.EXT_ONE}

        def term(token):
            return terms[token] if token in terms else layout.named[token]

        walked = [(view[n], r, c) for n, r, c in layout.extents if n in view]
        if len(walked) > 4:
            raise AssertionError(f"{layout.spec.name}: more than four walked tiles")
        row[ex.TP_NEXT] = len(walked)
        for e, (v, r, c) in enumerate(walked):
            (ra, rb), (ca, cb) = [(term(t.split("-")[0]), term(t.split("-")[1])) if "-" in t
                                  else (term(t), ex.EXT_ZERO) for t in (r, c)]
            row[ex.TP_EXT + 6 * e:ex.TP_EXT + 6 * e + 6] = (v.rows, v.cols, ra, rb, ca, cb)

    @staticmethod
    def _op_cols(sim, pc, named) -> tuple:
        """An elementwise op's row width when it walks rows at pitches: (the width when its
        cols operand is an immediate, a constant valid width, else 0; the operand's index when
        a register holds it, a run-time width that tile_shape reads at dispatch, else -1)."""
        j = named.get("cols")
        if j is None:
            return 0, -1
        if int(sim.enc.code[pc, C_SRC + j]) >= 0:
            return 0, j
        return int(sim.enc.imm[pc, j]), -1

    @staticmethod
    def _fast_row_reduce(m, name, dst, src, row, ex):
        """A row reduction's fast path when the tiles' types take it (TryOptimizeFP32Reduce,
        include/pto/npu/a2a3/TRowReduceOps.hpp): dst a DN column (ValidCol 1, one word a row)
        and src a float32 tile of a fast shape whose rows lie cols apart (its Cols, the row
        stride, is its width); tile_dispatch takes it when the op's rows x cols is that whole
        shape (Rows = ValidRow, Cols = ValidCol)."""
        if dst is None or dst.cols != 1 or dst.pitch != 1 or src.pitch != src.cols:
            return
        fast = m.fast_row_reduce(name, src.buf.dtype.name, src.rows, src.cols)
        if fast is not None:
            row[ex.TP_FAST_R], row[ex.TP_FAST_C] = src.rows, src.cols
            row[ex.TP_FAST_HEAD], row[ex.TP_FAST_BODY], row[ex.TP_FAST_TAIL] = fast.head, fast.body, fast.tail

    @staticmethod
    def _vector(m, name, dtype, row, frow, fm_i, fm_f, ex, formula_rows):
        """A vector op's costs (tile_dispatch's vector branch): its rows of the formula
        table in lookup order (once per op and dtype), and the head/slope/tail model when no
        row fits."""
        table = m.vector_formulas
        if (name, dtype) not in formula_rows:
            first = len(fm_i)
            for d in (dtype, "any"):
                for (op, dt, cols), (slope, bias) in table.items():
                    if op == name and dt == d and cols != "*":
                        fm_i.append([0, int(cols)])
                        fm_f.append([slope, bias])
                if (name, d, "*") in table:
                    fm_i.append([0, -1])
                    fm_f.append(list(table[(name, d, "*")]))
            formula_rows[(name, dtype)] = (first, len(fm_i) - first)
        row[ex.TP_FSTART], row[ex.TP_FN] = formula_rows[(name, dtype)]
        t = m.instructions[name]
        row[ex.TP_HEAD] = t.extra.get("head", t.latency)
        row[ex.TP_TAIL] = int(t.extra.get("tail", 0))
        row[ex.TP_RB] = t.extra.get("repeat_bytes", 1)
        frow[ex.TF_PER] = peaks.per_repeat(m, name, dtype)
        frow[ex.TF_ROW] = float(t.extra.get("per_row", 0.0))
        frow[ex.TF_ELEM] = float(t.extra.get("per_element", 0.0))
        row[ex.TP_UNALIGNED] = int(t.extra.get("unaligned_floor", 0))
