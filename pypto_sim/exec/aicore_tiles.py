"""The AI core's tile instructions as the executor sees them: an instruction decoded, by its
family's operand roles (isa/tile_roles.py), into the tiles and GM elements it reads and
writes, the shape that sizes it, and its values.

Everything that needs to know "which operand is the destination, which tiles are read, what
sizes the operation" asks a :class:`TileOp`: the timing model (hazards, costs, races,
timing/aicore.py), the functional runner (exec/aicore_functional.py) and the values below. The values are the executor module's kernels (the numba executor's, or
the reference executor's twins): a decoded instruction ``read()``s its sources into a pending
result and ``write()``s that result to its destination, so the timing model can read at the
cycle an operation starts and write at the cycle it completes, and the functional runner can
do both at once (``run()``).
"""
from __future__ import annotations

import math
import numpy as np

from ..dtypes import BY_CODE
from ..errors import LaunchError, OutOfBoundsError
from ..ir.program import C_AUX, C_DTYPE, C_SRC, UNIT_NAMES
from ..isa import gm_layouts
from ..isa.sort_modes import BLOCK_BYTES, GATHER_BLOCKS, SCATTER, block_words
from ..isa.store_modes import ATOMIC_ADD, QUANT, QUANT_F16, QUANT_VECTOR
from ..isa.tile_roles import FAMILY_ROLES, data_operand, extract_alignment, walked_extents
from . import gm, gm_index_ops
from .tile_effects import effect as vector_effect, window

GM_READ, GM_WRITE, GM_ADD = 0, 1, 2    # what a transfer does to its GM elements (TileOp.gm[5])
MAX_MKN = 4095                   # PTO-ISA docs/isa/TMATMUL.md: m, k, n in [1, 4095]
INIT_ZERO, INIT_ACC, INIT_BIAS = 0, 1, 2     # tile_matmul's starting value
# a matmul of at least this many products takes its float64 sums from numpy's BLAS when the
# launch allows it (exec/blas.py): below it the executor's kernel is as fast
BLAS_MIN_PRODUCTS = 16 * 16 * 16


class TileView:
    """A typed tile as the executor sees it: its buffer, word base, shape and row pitch, and
    the tile that owns its words (itself, or the tile a treshape / tsubview view looks into)."""

    __slots__ = ("buf", "base", "rows", "cols", "pitch", "slot", "root")

    def __init__(self, prog, slot):
        b = prog.buffers[slot]
        self.buf, self.base, self.rows, self.cols, self.pitch = b, b.offset, b.rows, b.cols, b.row_pitch
        self.slot = slot
        root = slot
        while prog.buffers[root].alias_of >= 0:
            root = prog.buffers[root].alias_of
        self.root = root

    def words(self):
        """[lo, hi) of the words the tile's elements lie in (a window's also holds others)."""
        return self.base, self.base + (self.rows - 1) * self.pitch + self.cols

    def region(self):
        """(lo, hi, rows, cols, pitch): the elements, as the race check compares them."""
        return self.base, self.base + (self.rows - 1) * self.pitch + self.cols, self.rows, self.cols, self.pitch


# the Vec -> Vec window copies (frontend/vec_windows.py): A2/A3's copies move exactly the window
WINDOW_COPIES = ("TEXTRACT_V2V", "TINSERT_V2V")


def _window_of(v, rows, cols, row=0, col=0) -> TileView:
    """v's rows x cols elements from its (row, col) (at v's pitch) as a TileView, or v when they
    are all of it."""
    rows, cols = max(1, min(rows, v.rows - row)), max(1, min(cols, v.cols - col))
    if (rows, cols, row, col) == (v.rows, v.cols, 0, 0):
        return v
    w = object.__new__(TileView)
    w.buf, w.base, w.pitch, w.slot, w.root = v.buf, v.base + row * v.pitch + col, v.pitch, v.slot, v.root
    w.rows, w.cols = rows, cols
    return w


class TileLayout:
    """What one pc's tile instruction is, decoded once per launch: its record, the roles of
    its family, the positions of its operands by name and (for operands that name their tile,
    which every typed-tile operand does) the tiles themselves."""

    __slots__ = ("spec", "roles", "named", "slots", "data", "static", "tiles", "extents")

    def __init__(self, ctx, pc):
        self.spec = ctx.pc_spec[pc]
        self.roles = FAMILY_ROLES[self.spec.family]
        self.named = {o.name: j for j, o in enumerate(self.spec.value_operands)}
        self.data = data_operand(self.spec)
        tile_slots = ctx.pc_tiles[pc]
        slot_of = {n: (tile_slots[j] if j < len(tile_slots) else -1) for n, j in self.named.items()}
        self.slots = {n: slot for n, slot in slot_of.items()
                      if n in (self.roles.dst, self.roles.scratch, *self.roles.sources)
                      or (n in self.roles.outputs and slot >= 0)}    # an output not passed: -1
        self.static = {n: TileView(ctx.prog, slot) for n, slot in self.slots.items()
                       if slot >= 0 and ctx.prog.buffers[slot].rows}
        # every tile named by the operands (typed tiles always are): views, reads and writes
        # are the same for every execution of this pc
        self.tiles = self.tile_roles(self.static) if len(self.static) == len(self.slots) else None
        self.extents = tuple(e for e in walked_extents(self.roles) if e[0] in self.slots)

    def tile_roles(self, view) -> tuple:
        """(views by name, tiles read, tiles written, the data tile) for these views: an
        output the call passes (TROWARGMAX's val) and a scratch tile (pto-isa's tmp) other than
        dst are written too, after dst."""
        dst = view.get(self.roles.dst)
        reads = [view[n] for n in self.roles.sources if n in view]
        if self.spec.reads_dst and dst is not None:
            reads.append(dst)
        writes = [dst] if dst is not None else []
        writes += [view[n] for n in self.roles.outputs if n in view]
        tmp = view.get(self.roles.scratch)
        if tmp is not None and (tmp.slot, tmp.base) != (dst.slot, dst.base):
            writes.append(tmp)
        return view, reads, writes, view[self.data]


def layout_of(ctx, pc) -> TileLayout:
    """pc's TileLayout, made on first use and kept on ctx (one launch's context)."""
    layouts = ctx.__dict__.setdefault("tile_layouts", {})
    layout = layouts.get(pc)
    if layout is None:
        layout = layouts[pc] = TileLayout(ctx, pc)
    return layout


class TileOp:
    """One AI-core tile instruction, decoded on one unit: the tiles it reads and writes, the GM
    elements it moves, the shape and bytes that size its cost, and its values."""

    __slots__ = ("ctx", "pc", "spec", "fam", "arr", "iv", "vals", "slot", "reads", "writes",
                 "gm", "gm_layout", "shape", "data", "nbytes", "view", "named", "store_mode", "where", "index",
                 "touched")

    def __init__(self, ctx, pc, vals, arr, unit, coords):
        layout = layout_of(ctx, pc)
        spec, roles, named, walked = layout.spec, layout.roles, layout.named, layout.extents
        code = ctx.enc.code
        self.ctx, self.pc, self.spec, self.fam, self.arr, self.vals = ctx, pc, spec, spec.family, arr, vals
        self.named, self.where = named, (unit, coords)
        iv = self.iv = [int(v) if math.isfinite(v) else 0 for v in vals]
        self.slot = int(code[pc, C_AUX])

        def fault(msg, hint):
            return unit_fault(ctx, pc, unit, coords, msg, hint)

        def view(name):
            slot = layout.slots[name]
            if slot < 0:                      # an operand that does not name its tile
                _lo, _hi, b = ctx.buffer_at(iv[named[name]])
                slot = ctx.prog.buffers.index(b) if b is not None else -1
            if slot < 0 or ctx.prog.buffers[slot].rows == 0:
                raise fault(f"{name} is not a typed tile", "pass a tile made by pto.alloc_tile")
            return TileView(ctx.prog, slot)

        self.view, self.reads, self.writes, self.data = \
            layout.tiles or layout.tile_roles({n: view(n) for n in layout.slots})
        dst = self.view.get(roles.dst)
        self.gm = self.gm_layout = self.index = None
        self.store_mode = 0
        if roles.shape == ("n",):
            n = iv[named["n"]]
            if n <= 0:
                raise fault(f"{n} elements: the valid region is empty or negative", "keep a run-time "
                            "valid region at least 1 x 1, as a constant one must be")
            cols = iv[named["cols"]] if "cols" in named else 0    # rows of cols at pitches, or a run
            for v in self.view.values() if cols <= 0 else ():      # rows at pitches: walked below
                if n > v.rows * v.cols:
                    raise fault(f"{n} elements exceed tile '{v.buf.name}' ({v.rows} x {v.cols})",
                                "keep valid=(rows, cols) within the tile's shape")
            self.shape = (n // cols, cols) if cols > 0 else (-(-n // dst.cols), dst.cols)
            self.nbytes = n * dst.buf.dtype.itemsize           # dst's (TCVT converts)
        else:
            rows, cols = iv[named[roles.shape[0]]], iv[named[roles.shape[1]]]
            self.shape = (rows, cols)
            self.nbytes = rows * cols * self.data.buf.dtype.itemsize
        fam = self.fam
        if fam in ("tile_load", "tile_store"):
            t = self.data
            rows, cols = self.shape
            stride = iv[named["stride"]]
            self._extent(t, rows, cols, "the load" if fam == "tile_load" else "the store", fault)
            off = iv[named[roles.gm]]
            itemsize = BY_CODE[int(code[pc, C_DTYPE])].itemsize
            layout, c0 = iv[named["layout"]], gm_layouts.c0_of(itemsize)
            runs, run, pitch = gm_layouts.gm_window(layout, rows, cols, stride, c0)
            if runs == 0:
                raise fault(gm_layouts.window_problem(layout, rows, cols, stride, c0),
                            "keep NZ / FRACTAL_Z regions whole C0 blocks and the stride at least a run "
                            "(isa/gm_layouts.py)")
            last = off + (runs - 1) * pitch + run
            if off < 0 or last > ctx.tcount[self.slot]:
                shape = f"rows={rows} cols={cols}" + \
                    (f" {gm_layouts.LAYOUTS[layout]} ({runs} runs of {run})" if layout else "")
                raise fault(f"{shape} stride={stride} from element {off} reach element "
                            f"{last - 1} of '{ctx.tensor_names[self.slot]}', which has "
                            f"{ctx.tcount[self.slot]}",
                            "check the offsets, the stride and the tile's valid region against the tensor")
            self.nbytes = rows * cols * itemsize
            self.store_mode = iv[named["mode"]] if "mode" in named else 0      # isa/store_modes.py
            access = GM_READ if fam == "tile_load" else GM_ADD if self.store_mode & ATOMIC_ADD else GM_WRITE
            self.gm = (self.slot, off, runs, run, pitch, access, itemsize)
            self.gm_layout = (layout, c0)
        elif fam in gm_index_ops.GM_INDEX_FAMILIES:       # MGATHER, MSCATTER (isa/54_gm_index.toml)
            self.index = gm_index_ops.decode(self, iv, named, fault)
        elif fam == "tile_move" and "pos" in named:      # TIMG2COL: taps outside the map read 0
            self._extent(dst, *self.shape, "the img2col window", fault)
            s = self.view["src"]
            fmap, conv = iv[named["fmatrix"]], iv[named["conv"]]
            pixels = (conv >> 24) * (fmap >> 16) * (fmap & 0xFFFF)
            if pixels > s.rows:
                raise fault(f"the feature map of {pixels} pixels (c1 x fmap_h x fmap_w) exceeds the {s.rows} "
                            f"rows of '{s.buf.name}'", "keep fmap_h within the rows the tile was loaded with")
        elif fam == "tile_move":
            d, s = dst, self.view["src"]
            rows, cols = self.shape
            r0, c0 = iv[named["row"]], iv[named["col"]]
            self._extent(d, rows, cols, "the copy", fault)
            if r0 < 0 or c0 < 0 or r0 + rows > s.rows or c0 + cols > s.cols:
                raise fault(f"the window at ({r0}, {c0}) of {rows} x {cols} is outside '{s.buf.name}' "
                            f"({s.rows} x {s.cols})", "keep row + rows and col + cols within the source")
            ra, ca = extract_alignment(spec.name, d.buf.space, s.buf.dtype.itemsize)
            if r0 % ra or c0 % ca:
                raise fault(f"the window at ({r0}, {c0}) into {d.buf.space} '{d.buf.name}' does not start on "
                            f"the fractal grid: row a multiple of {ra}, col of {ca} (textract_common.hpp's "
                            "index asserts)", f"start {s.buf.dtype} {d.buf.space} windows at multiples of "
                            f"({ra}, {ca})")
        elif fam == "tile_mma":
            mm, nn, kk = self.mkn
            for v, what in ((mm, "m"), (nn, "n"), (kk, "k")):
                if not 1 <= v <= MAX_MKN:
                    raise fault(f"{what} = {v} is outside [1, {MAX_MKN}]",
                                f"{spec.name} takes m, k, n in [1, {MAX_MKN}]")
            self._extent(self.view["a"], mm, kk, "left", fault)
            self._extent(self.view["b"], kk, nn, "right", fault)
            self._extent(dst, mm, nn, "the result", fault)
            self.nbytes = 0
        elif roles.bounded:
            rows, cols = self.shape
            mstride = iv[named["mstride"]] if roles.mask else 0
            for name, v in self.view.items():
                if name == roles.scratch:         # pto-isa's tmp: not bounded by the shape
                    continue
                width = mstride if v is self.view.get(roles.mask) else cols
                if rows * width > v.rows * v.cols:
                    raise fault(f"{rows} x {cols} elements exceed tile '{v.buf.name}' "
                                f"({v.rows} x {v.cols})", "keep the valid rows within the tile")
        # every tile walked (an element count's too when it runs rows of cols at the tiles' pitches)
        at_pitch = roles.shape != ("n",) or ("cols" in named and iv[named["cols"]] > 0)
        if walked and not roles.bounded and at_pitch:
            self._extent(self.data, *self.shape, "the op", fault)
            for name, r, c in walked:
                rows, cols = self.extent(r), self.extent(c)
                v = self.view.get(name)
                if v is not None and not (0 <= rows <= v.rows and 0 <= cols <= v.cols):
                    raise fault(f"{spec.name} walks {rows} x {cols} elements of its {name} '{v.buf.name}', "
                                f"a {v.rows} x {v.cols} tile", "keep each tile's valid=(rows, cols) within its "
                                "shape: a run-time valid region past it would reach other tiles' words")

    def race_views(self) -> tuple:
        """(tiles read, tiles written), each narrowed to the elements this instruction covers
        where that is its shape: a transfer's tile, and the tiles a vector op walks (their
        rows x cols, tile_roles.walked_extents; an op over a run of n words covers each tile's
        first n words, in whole rows); the others whole. racecheck compares these, so an op on
        a tile's valid region does not race with one on the rows past it."""
        roles = FAMILY_ROLES[self.fam]
        rows, cols = self.shape
        if self.fam in ("tile_load", "tile_store"):
            walked = {name: (rows, cols) for name in roles.data}
        else:
            walked = {name: (self.extent(r), self.extent(c)) for name, r, c in layout_of(self.ctx, self.pc).extents}
        run = roles.shape == ("n",) and not ("cols" in self.named and self.iv[self.named["cols"]] > 0)
        narrowed = {}
        for name, v in self.view.items():
            if name in walked:
                r, c = (-(-self.iv[self.named["n"]] // v.cols), v.cols) if run else walked[name]
                narrowed[id(v)] = _window_of(v, r, c)
        if self.spec.name in WINDOW_COPIES:     # they read src's window at (row, col), write dst's first
            s, at = self.view["src"], (self.iv[self.named["row"]], self.iv[self.named["col"]])
            narrowed[id(s)], narrowed[id(self.view["dst"])] = _window_of(s, rows, cols, *at), \
                _window_of(self.view["dst"], rows, cols)
        return ([narrowed.get(id(v), v) for v in self.reads], [narrowed.get(id(v), v) for v in self.writes])

    def extent(self, token: str) -> int:
        """The value of a tile_roles.EXTENT_TOKENS token for this instruction."""
        if token in ("R", "C"):
            return self.shape[token == "C"]
        if token.isdigit():
            return int(token)
        if "-" in token:
            a, b = token.split("-")
            return self.extent(a) - self.extent(b)
        return self.iv[self.named[token]]

    @staticmethod
    def _extent(t, rows, cols, what, fault):
        if rows < 1 or cols < 1:
            raise fault(f"{what} of {rows} x {cols} on tile '{t.buf.name}' is empty or negative: its rows and "
                        "columns must be at least 1", "keep a run-time valid region at least 1 x 1, as a "
                        "constant one must be")
        if not (rows <= t.rows and cols <= t.cols):
            raise fault(f"{what} of {rows} x {cols} does not fit tile '{t.buf.name}' ({t.rows} x "
                        f"{t.cols})", "keep valid=(rows, cols) within the tile's shape")

    @property
    def mkn(self):
        """(m, n, k) of a matmul."""
        named = self.named
        return self.iv[named["m"]], self.iv[named["n"]], self.iv[named["k"]]

    # ---------------------------------------------------------------- values
    def read(self):
        """Read the sources (at the cycle the operation starts): the pending result."""
        ctx, ex, arr, fam = self.ctx, self.ctx.ex, self.arr, self.fam
        if fam in gm_index_ops.GM_INDEX_FAMILIES:
            return gm_index_ops.read(self, lambda msg, hint, **kw: unit_fault(ctx, self.pc, *self.where, msg, hint,
                                                                               **kw))
        if fam == "tile_load":
            slot, off, runs, run, pitch, _w, item = self.gm
            buf = np.empty(runs * run, np.float64)
            ex.gm_gather(buf, ctx.hbm, int(ctx.tbase[slot]) + off * item, pitch, runs, run,
                         int(ctx.enc.code[self.pc, C_DTYPE]))
            return gm_layouts.to_tile(buf, self.gm_layout[0], *self.shape, self.gm_layout[1])
        if fam == "tile_store":
            t, (rows, cols) = self.data, self.shape
            to = int(ctx.enc.code[self.pc, C_DTYPE])
            buf = np.empty(rows * cols, np.float64)
            # a tile holds values of its dtype: only a store to another dtype rounds; a quantizing
            # store (isa/store_modes.py QUANT) reads the Acc's values and quantizes them
            quant = self.store_mode & QUANT
            ex.tile_gather(buf, arr, t.base, t.pitch, rows, cols, -1 if to == t.buf.dtype.code or quant else to)
            if self.store_mode & QUANT_VECTOR:        # TSTORE_FP: column c by the Scaling tile's word c
                ex.tile_store_quant_words(buf, rows, cols, arr, self.view["fp"].base,
                                          bool(self.store_mode & QUANT_F16))   # VDEQF16: the scale only
            elif quant:
                ex.tile_store_quant(buf, rows * cols, float(self.vals[self.named["scale"]]), self.store_mode)
            return buf
        if fam == "tile_move" and "pos" in self.named:     # TIMG2COL (isa/45_conv.toml)
            s, (rows, cols), iv, named = self.view["src"], self.shape, self.iv, self.named
            buf = np.empty(rows * cols, np.float64)
            ex.tile_img2col(buf, arr, s.base, s.pitch, rows, cols, iv[named["pos"]], iv[named["fmatrix"]],
                            iv[named["pads"]], iv[named["conv"]])
            return buf
        if fam == "tile_move":
            d, s = self.writes[0], self.view["src"]
            rows, cols = self.shape
            r0, c0 = self.iv[self.named["row"]], self.iv[self.named["col"]]
            convert = d.buf.dtype.code if d.buf.dtype != s.buf.dtype else -1
            buf = np.empty(rows * cols, np.float64)
            ex.tile_gather(buf, arr, s.base + r0 * s.pitch + c0, s.pitch, rows, cols, convert)
            return buf
        if fam == "tile_mma":
            c, a, b = self.writes[0], self.view["a"], self.view["b"]
            bias = self.view.get("bias")
            m, n, k = self.mkn
            init = INIT_ACC if self.spec.reads_dst else INIT_BIAS if bias is not None else INIT_ZERO
            buf = np.empty(m * n, np.float64)
            if not (getattr(ctx, "blas", False) and m * n * k >= BLAS_MIN_PRODUCTS
                    and _blas_matmul(ex, buf, arr, c, a, b, bias, m, n, k, init)):
                ex.tile_matmul(buf, arr, c.base, c.pitch, a.base, a.pitch, b.base, b.pitch, m, n, k,
                               init, bias.base if bias is not None else 0, c.buf.dtype.code)
            return buf
        # vector families: the executor's kernel runs in place, so run it, keep what it wrote
        # and put the words of every tile it writes back until the operation completes
        spans = [w.words() for w in self.writes]
        saved = [arr[lo:hi].copy() for lo, hi in spans]
        self.run()
        result = [arr[lo:hi].copy() for lo, hi in spans]
        for (lo, hi), words in reversed(list(zip(spans, saved))):     # dst's words last
            arr[lo:hi] = words
        return result

    def write(self, result):
        """Write the pending result to the destination (at the cycle the operation completes)."""
        ctx, ex, arr, fam = self.ctx, self.ctx.ex, self.arr, self.fam
        if fam in gm_index_ops.GM_INDEX_FAMILIES:
            gm_index_ops.write(self, result)
        elif fam == "tile_store":
            slot, off, runs, run, pitch, _w, item = self.gm
            win = np.ascontiguousarray(gm_layouts.to_window(result, self.gm_layout[0], *self.shape,
                                                            self.gm_layout[1]))
            ex.gm_scatter_mode(ctx.hbm, int(ctx.tbase[slot]) + off * item, pitch, win, runs, run,
                               int(ctx.enc.code[self.pc, C_DTYPE]), self.store_mode)
        elif fam in ("tile_load", "tile_move"):
            t, (rows, cols) = self.writes[0], self.shape
            ex.tile_scatter(arr, t.base, t.pitch, result, rows, cols)
        elif fam == "tile_mma":
            c = self.writes[0]
            m, n, _k = self.mkn
            ex.tile_scatter(arr, c.base, c.pitch, result, m, n)
        else:
            for w, words in zip(self.writes, result):
                lo, hi = w.words()
                arr[lo:hi] = words

    def run(self):
        """Compute the values at once (the functional runner; the vector families' kernels)."""
        if self.fam in ("tile_load", "tile_store", "tile_move", "tile_mma") + gm_index_ops.GM_INDEX_FAMILIES:
            self.write(self.read())
            return
        fault = vector_effect(self.ctx, self.pc, self.vals, self.slot, None, l1=self.arr)()
        if fault is not None and fault >= 0:          # FamilyRoles.faults: nothing was written
            raise index_fault_error(self.ctx, self.pc, self.vals, *self.where, int(fault), self.arr)

    def first_unwritten(self, init):
        """initcheck: the element index of the first GM element a load (or an atomic add, which
        reads what it adds to) reads that was never written (its window's elements, run after
        run), or None (also for any other op). A TPREFETCH reads as a TLOAD does but is not
        reported: the device only warms its cache and its dst is temporary (docs/aicore.md)."""
        if init is None or self.gm is None or self.gm[5] == GM_WRITE or self.spec.name == "TPREFETCH":
            return None
        slot, off, runs, run, pitch, _access, item = self.gm
        elements = gm.window_elements(off, runs, run, pitch)
        bad = np.nonzero(~gm.init_test(init, elements * item + int(self.ctx.tbase[slot])))[0]
        return int(elements[bad[0]]) if len(bad) else None

    def mark_written(self, init):
        """initcheck's record: the GM elements a store writes are initialised."""
        if init is not None and self.fam == "tile_store":
            slot, off, rows, cols, stride, _w, item = self.gm
            gm.init_mark_window(init, int(self.ctx.tbase[slot]) + off * item, rows, cols * item,
                                stride * item)


def index_fault_error(ctx, pc, vals, unit, coords, position, arr) -> OutOfBoundsError:
    """The error of TGATHER_IDX or TSCATTER_IDX pc (operands vals) on unit of block coords whose
    index at position (row * cols + col of the region the indices cover) names no element of the
    tile it reads (src) or writes (dst: SCATTER, isa/sort_modes.py); arr: the unit's memory,
    which holds the index. TCONCAT_IDX / TCONCAT_DSTIDX's position is 2 * row + source."""
    layout = layout_of(ctx, pc)
    named, view = layout.named, layout.tiles[0]
    if "src0_idx" in view:                      # TCONCAT_IDX / TCONCAT_DSTIDX: a count of 0
        row, side = divmod(position, 2)
        rows = int(vals[named["rows"]])
        over, row = row >= rows, row % rows
        idx, what = view[("src0_idx", "src1_idx")[side]], ("src0", "src1")[side]
        value = int(arr[idx.base + row * idx.pitch])
        if over:                                # a vcopy of whole repeats past a row
            return unit_fault(ctx, pc, unit, coords,
                              f"row {row} of '{idx.buf.name}' counts {value} bytes of {what}, past one 256-byte "
                              "repeat: TConcatIdx (TConcat.hpp lines 148-160) vcopies whole repeats, the last "
                              "under a mask of the whole count, reaching past dst's row or the source's",
                              f"keep each row's count of {what} within one 256-byte repeat, or give dst and "
                              f"{what} rows as wide as the repeats it moves",
                              offset=value, count=int(vals[named["cols"]]), tensor=idx.buf.name)
        return unit_fault(ctx, pc, unit, coords,
                          f"row {row} of '{idx.buf.name}' counts {value} bytes, no {what} element to copy: "
                          "A2/A3's TConcatIdx (TConcat.hpp lines 148-160) then vcopies with repeat 0 - 1, "
                          "writing far past the tile",
                          f"keep each row's count of {what} at least one element (and within dst's valid columns)",
                          offset=value, count=int(vals[named["cols"]]), tensor=idx.buf.name)
    row, col = divmod(position, int(vals[named["cols"]]))
    mode = int(vals[named["mode"]])
    if mode & GATHER_BLOCKS:                    # TGATHERB: a byte offset naming no block of src
        return _block_offset_error(ctx, pc, vals, unit, coords, named, view, row, col, arr)
    scatter = mode & SCATTER
    idx, src = view["idx"], view["dst" if scatter else "src"]
    bound = int(vals[named["dpitch" if scatter else "spitch"]])
    value = int(arr[idx.base + row * idx.pitch + col])
    return unit_fault(ctx, pc, unit, coords,
                      f"index {value} at ({row}, {col}) of '{idx.buf.name}' names no element of "
                      f"'{src.buf.name}', whose {bound} elements are 0 .. {bound - 1}",
                      f"keep every index in [0, {bound}): A2/A3 reads or writes whatever UB holds past the tile "
                      "(pto-isa leaves an index outside it target-defined)",
                      offset=value, count=bound, tensor=idx.buf.name)


def _block_offset_error(ctx, pc, vals, unit, coords, named, view, row, col, arr) -> OutOfBoundsError:
    """TGATHERB's error: the byte offset at (row, col) of the offset tile is not a whole 32-byte
    block inside src (isa/44_sort.toml)."""
    idx, src = view["idx"], view["src"]
    size = int(vals[named["spitch"]]) * (BLOCK_BYTES // block_words(int(vals[named["mode"]])))
    value = int(arr[idx.base + row * idx.pitch + col])
    what = (f"is not a multiple of {BLOCK_BYTES}" if value % BLOCK_BYTES else
            f"reaches past the {size} bytes of '{src.buf.name}'")
    return unit_fault(ctx, pc, unit, coords,
                      f"byte offset {value} at ({row}, {col}) of '{idx.buf.name}' {what}: vgatherb reads one "
                      f"{BLOCK_BYTES}-byte block at each offset from '{src.buf.name}''s start",
                      f"keep every offset a multiple of {BLOCK_BYTES} in [0, {size - BLOCK_BYTES}] (pto-isa leaves "
                      "an offset outside src target-defined; vgatherb.md asks 32-byte-aligned blocks)",
                      offset=value, count=size, tensor=idx.buf.name)


def unit_fault(ctx, pc, unit, coords, msg, hint, **fields) -> OutOfBoundsError:
    """The OutOfBoundsError of AI-core tile instruction pc on unit of block coords: "<name> at
    line L on <unit> of block B: msg", with the kernel's location and any further fields."""
    line = ctx.prog.instrs[pc].line
    return OutOfBoundsError(f"{ctx.pc_spec[pc].name} at line {line} on {UNIT_NAMES[unit]} of block {coords}: {msg}",
                            kernel=ctx.kernel_name, file=ctx.prog.file, line=line, block=coords, warp=unit,
                            unit=UNIT_NAMES[unit],
                            lane=None, hint=hint, **fields)


def operands(ctx, pc, regs):
    """The value operands of tile instruction pc: immediates, or the unit's registers (lane 0)."""
    return value_operands(ctx.enc, pc, regs, len(layout_of(ctx, pc).named))


def value_operands(enc, pc, regs, n) -> list:
    """The first n value operands of instruction pc of the encoded program enc: immediates, or
    the unit's registers (lane 0)."""
    code, imm = enc.code, enc.imm
    return [imm[pc, j] if code[pc, C_SRC + j] < 0 else regs[code[pc, C_SRC + j], 0] for j in range(n)]


def buffer_spans(prog) -> list:
    """(first word, last word + 1, buffer) of every buffer that owns memory (views do not:
    they are found through their instructions' tile operands)."""
    return [(b.offset, b.offset + b.words, b) for b in prog.buffers if b.owns_memory]


def tile_bounds_error(kernel, prog, pc, operand, buf, base, extent, lo, hi, block, warp,
                      sizes=()) -> OutOfBoundsError:
    """A lane tile instruction's operand (its name; buf the alloc_local buffer at its first word
    base, or None) whose extent words do not lie in [lo, hi), its buffer copy's words, or one of
    whose shape operands (sizes: (name, value) pairs, isa_codes.tile_dims) is not positive: the
    timing model's and the functional runner's error."""
    ins = prog.instrs[pc]
    what = f"tile '{buf.name}' ({operand} of {ins.op.lower()})" if buf is not None else f"tile '{operand}'"
    bad = [name for name, value in sizes if value <= 0]
    shape = " x ".join(name for name, _ in sizes) + " = " + " x ".join(str(value) for _, value in sizes)
    if bad:            # each on its own: two negative sizes multiply to a positive count
        problem = f"{what} would cover {shape} words: {' and '.join(bad)} must be at least 1"
    elif extent <= 0:
        problem = f"{what} would cover {extent} words: a shape operand (rows, cols, n, m, k) is zero or negative"
    else:
        problem = f"{what} covers [{base}, {base + extent}) but its allocation is [{lo}, {hi})"
        problem += f" ({shape} words)" if len(sizes) > 1 else ""
    return OutOfBoundsError(f"{ins.op} out of bounds: block {block}, warp {warp}: {problem}", kernel=kernel,
                            file=prog.file, line=ins.line, block=block, warp=warp, lane=None,
                            offset=base + max(extent, 1) - 1, count=hi - lo, tensor=what, sizes=dict(sizes),
                            hint="check the tile shape (rows, cols, n, or m, n, k) against the size given "
                                 "to alloc_local")


def transfer_past_tensor_error(kernel, prog, pc, rows, cols, stride, off, tensor, count, block,
                               warp) -> OutOfBoundsError:
    """A lane tile transfer (async_load / store) whose rows x cols window, stride apart, from
    element off reaches past its tensor of count elements: the timing model's and the functional
    runner's error."""
    ins = prog.instrs[pc]
    last = off + (rows - 1) * stride + cols
    return OutOfBoundsError(
        f"{ins.op} out of bounds: block {block}: rows={rows} cols={cols} stride={stride} from element {off} "
        f"reaches element {last - 1} of '{tensor}', which has {count} elements", kernel=kernel, file=prog.file,
        line=ins.line, block=block, warp=warp, lane=None, offset=last - 1, count=count, tensor=tensor,
        hint="check the offsets and the tile shape against the tensor's size")


def transfer_size_error(kernel, prog, pc, rows, cols, block, warp):
    """A tile transfer whose run-time rows or cols is zero or negative: nothing to move."""
    return LaunchError(
        f"{prog.instrs[pc].op}: block {block}: rows={rows} cols={cols}: a tile transfer needs at "
        f"least one row and one column", kernel=kernel, file=prog.file, line=prog.instrs[pc].line,
        block=block, warp=warp, rows=rows, cols=cols,
        hint="check the values the rows= and cols= of this async_load / store are computed from")


def short_stride_error(kernel, prog, pc, rows, cols, stride, tensor, block, warp) -> OutOfBoundsError:
    """A lane tile transfer of rows whose stride is shorter than a row: its rows would overlap
    or go backwards."""
    return OutOfBoundsError(
        f"{prog.instrs[pc].op}: block {block}: {gm_layouts.window_problem(gm_layouts.ND, rows, cols, stride, 1)}",
        kernel=kernel, file=prog.file, line=prog.instrs[pc].line, block=block, warp=warp, lane=None, offset=None,
        count=None, tensor=tensor, hint="pass a stride of at least cols (as cudaMemcpy2D's pitch >= width)")


def buffer_at(spans, word):
    """(lo, hi, buffer) of the buffer copy in spans holding word ``word``, or (0, 0, None)."""
    for lo, hi, b in spans:
        if lo <= word < hi:
            copy = (word - lo) // b.count
            return lo + copy * b.count, lo + (copy + 1) * b.count, b
    return 0, 0, None


def _blas_matmul(ex, out, arr, c, a, b, bias, m, n, k, init) -> bool:
    """A matmul's float64 A @ B from numpy's BLAS, rounded with its start by the executor's
    matmul_round to the exactly rounded values tile_matmul gives (the same bits in any order of
    summation; a NaN or an infinity among the starts is IEEE's in any order as well). False
    (nothing done) for a NaN or inf in A or B (IEEE's result then depends on every product
    being formed, which a BLAS need not do) or an executor without matmul_round. A, B and an
    accumulating start are read where they lie when their rows are dense."""
    if getattr(ex, "matmul_round", None) is None:
        return False
    A = np.ascontiguousarray(window(arr, a.base, m, k, a.pitch)).reshape(-1)
    B = np.ascontiguousarray(window(arr, b.base, k, n, b.pitch)).reshape(-1)
    rowabs, colmax = np.empty(m), np.empty(n)
    if not ex.matmul_bounds(A, B, m, n, k, rowabs, colmax):
        return False
    if init == INIT_ACC:
        start, stride = np.ascontiguousarray(window(arr, c.base, m, n, c.pitch)).reshape(-1), n
    elif init == INIT_BIAS:
        start, stride = arr[bias.base:bias.base + n], 0
    else:
        start, stride = np.zeros(n), 0
    sums = A.reshape(m, k) @ B.reshape(k, n)
    ex.matmul_round(out, sums.reshape(-1), A, B, start, stride, m, n, k, c.buf.dtype.code, rowabs,
                    colmax, True)
    return True
