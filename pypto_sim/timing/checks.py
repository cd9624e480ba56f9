"""Opt-in kernel checks (sanitizers) for one launch: racecheck, initcheck, synccheck.

Memcheck (bounds) is always on in the executor. The rest is switched on per launch with
``check=`` ("racecheck", "initcheck", "synccheck", "all", or a tuple) or the PYPTO_CHECK
environment variable (read by the runtime into pto.Settings), and costs nothing when off: the model calls these hooks only then.

- racecheck keeps a shadow entry per memory word (last writer, two readers: block, warp, lane,
  pc, cycle, barrier epoch; exec/compiled/lane.py says which two). Two accesses to a word, at least one a write, conflict unless the
  same warp made both, or a barrier_block() of their block separates them, or (for a tile
  operation and lane code) the warp waited for the tile operation with wait_all(). Accesses by
  different blocks are never ordered within a kernel.
- initcheck reports reads of HBM elements that no memcpy_h2d and no kernel store ever wrote
  (a bit per HBM byte, exec/gm.py).
  alloc_local buffers start at zero (API.md), so L1 reads are always initialised.
- synccheck reports barrier_block() reached by only some lanes of a warp or only some warps of
  a block (a warp that finishes while others wait), and set_flag with no wait_flag.
"""
from __future__ import annotations

import numpy as np

from ..errors import LaunchError, RaceError, SyncCheckError, UninitializedReadError
from ..exec import gm
from ..isa import PIPES
from .aicore_races import ChipGMAccesses, gm_alias_groups

CHECKS = ("memcheck", "racecheck", "initcheck", "synccheck")
TILE = 4095


def parse_checks(check) -> frozenset:
    """check= value (None: none, a name, 'all', or a tuple) -> set of names."""
    if check is None:
        check = ""
    if isinstance(check, str):
        check = [c.strip() for c in check.replace(";", ",").split(",") if c.strip()]
    elif not isinstance(check, (tuple, list, set, frozenset)) or not all(isinstance(c, str) for c in check):
        raise LaunchError(f"check={check!r}: give a check's name, 'all', or a tuple of names, not "
                          f"{type(check).__name__}", hint="check='all' or check=('racecheck', 'initcheck')")
    names = set()
    aliases = {"race": "racecheck", "init": "initcheck", "sync": "synccheck", "mem": "memcheck"}
    for c in check:
        c = aliases.get(c, c)
        if c == "all":
            names.update(CHECKS)
        elif c in CHECKS:
            names.add(c)
        else:
            raise LaunchError(f"unknown check {c!r}; choose from {', '.join(CHECKS)} or 'all'",
                              hint="check='racecheck' or check=('racecheck', 'initcheck')")
    names.discard("memcheck")        # always on
    return frozenset(names)


def flag_lines(prog, op, aux) -> list:
    """The source lines of the kernel's op instructions (SET_FLAG, CROSS_CORE_SET_FLAG) whose
    aux begins with aux (a flag's (src pipe, dst pipe, event), a signal's (event,)), in program
    order: where an unmatched flag or signal was set (a synccheck report's line)."""
    return sorted({ins.line for ins in prog.instrs
                   if ins.op == op and tuple(int(x) for x in ins.aux[:len(aux)]) == tuple(aux)})


def never_waited_error(sim, what, count, lines, hint, **fields) -> SyncCheckError:
    """synccheck's report of a flag or signal (``what``: the call, its unit and block) that no
    wait took by the end, ``count`` of them, at the first of the lines that set it."""
    return SyncCheckError(
        f"synccheck: {what} was never waited for ({count} unmatched)"
        + (f"; the kernel sets it at lines {', '.join(map(str, lines))}" if len(lines) > 1 else ""),
        kernel=sim.kernel_name, file=sim.prog.file, line=lines[0] if lines else None, hint=hint, **fields)


class KernelChecks:
    """The enabled checks' state for one LaunchSimulation."""

    def __init__(self, sim, enabled: frozenset, hbm_init):
        self.sim = sim
        self.race = "racecheck" in enabled
        self.init = "initcheck" in enabled
        self.sync = "synccheck" in enabled
        self.hbm_init = hbm_init
        self.report = np.zeros(8, np.int64)
        # HBM's shadow has a row per unit of the launch's smallest tensor element, up to the
        # end of its last tensor: an element's row is its first byte >> hbm_shift (exec/gm.py;
        # every element starts on a multiple of that size, tensors on 512 bytes)
        # each tensor argument's element bytes, by slot (the reports' tensor[index] and byte windows)
        items = self.tensor_items = [a.dtype.itemsize for a in sim.prog.args if a.kind == "tensor"]
        self.hbm_shift = min(items, default=1).bit_length() - 1
        used = int(max((b + n * i for b, n, i in zip(sim.tbase, sim.tcount, items)), default=1))
        self.hbm_shadow = self._shadow((used >> self.hbm_shift) + 1) if self.race else None
        # AI-core kernels: GM accesses of all cores (blocks), checked against each other
        self.aicore_gm = ChipGMAccesses() if self.race and sim.aicore else None
        # ... compared by byte within groups of tensors whose bytes overlap (aliased arguments)
        self.gm_groups = gm_alias_groups(sim.tbase, sim.tcount, items) if self.aicore_gm is not None else None
        # ... and the GM lines the units' DataCaches hold dirty: line -> {(block, unit): (the store's pc,
        # its dirty bytes, block coords, written back at the program's end)} (timing/aicore_scalar_memory.py:
        # a DMA or another unit's scalar access must not read or write them before their write-back)
        self.dirty_lines = {} if self.aicore_gm is not None else None

    def _shadow(self, words):
        return np.full((max(words, 1), self.sim.ex.SHADOW_COLS), -1, np.int64)

    def block_started(self, blk):
        blk.shadow = self._shadow(len(blk.l1)) if self.race else None

    # ---------------------------------------------------------------- lane accesses
    def lane_access(self, pc, blk, w, ws, mask, n, idx, is_write, space, cycle):
        """A lane load (after it read) or store (when it issued): words idx[:n]."""
        if self.init and space == "hbm" and not is_write:
            bad = np.nonzero(~gm.init_test(self.hbm_init, idx[:n]))[0]
            if len(bad):
                raise self._uninit(pc, blk, w, _kth_lane(mask, int(bad[0])), int(idx[bad[0]]), cycle)
        if self.race:
            shadow = self.hbm_shadow if space == "hbm" else blk.shadow
            who = blk.id * 4096 + w
            if self.sim.ex.race_check(shadow, idx, n, mask, is_write, who, blk.id, blk.epoch,
                                      ws.seen_tiles, pc, cycle, self.report,
                                      self.hbm_shift if space == "hbm" else 0):
                raise self._race(pc, blk, w, is_write, space, cycle)

    def tile_access(self, pc, blk, reads, writes, seq, cycle, hbm_reads=None):
        """A tile operation dispatched by warp 0: L1 (lo, hi) ranges, and the HBM elements it
        reads (their byte addresses)."""
        if self.init and hbm_reads is not None and len(hbm_reads):
            bad = np.nonzero(~gm.init_test(self.hbm_init, hbm_reads))[0]
            if len(bad):
                raise self._uninit(pc, blk, 0, None, int(hbm_reads[bad[0]]), cycle)
        if not self.race:
            return
        sh, ex = blk.shadow, self.sim.ex
        for (lo, hi), is_write in [(r, False) for r in reads] + [(wr, True) for wr in writes]:
            cols = (ex.WRITER, ex.READER, ex.OTHER_READER) if is_write else (ex.WRITER,)
            for col in cols:
                who, epoch = sh[lo:hi, col], sh[lo:hi, col + 1]
                lane_made = (who >= 0) & (who % 4096 != TILE) & (who % 4096 != 0)
                clash = np.nonzero(lane_made & (epoch == blk.epoch))[0]
                if len(clash):
                    word = lo + int(clash[0])
                    self.report[:] = (word, int(col == 0), *sh[word, col:col + 5], -1)
                    raise self._race(pc, blk, 0, is_write, "l1", cycle, tile=True)
            me = blk.id * 4096 + TILE
            if not is_write:      # the last reader becomes the other unless ordered before (exec/compiled/lane.py)
                last, last_epoch = sh[lo:hi, ex.READER], sh[lo:hi, ex.READER + 1]
                ordered = (last // 4096 == blk.id) & ((last % 4096 == TILE) | (last_epoch != blk.epoch))
                moved = (last >= 0) & (last != me) & ~ordered
                sh[lo:hi, ex.OTHER_READER:ex.OTHER_READER + 5][moved] = sh[lo:hi, ex.READER:ex.READER + 5][moved]
            col = ex.WRITER if is_write else ex.READER
            sh[lo:hi, col:col + 5] = (me, seq, pc, cycle, -1)

    # ---------------------------------------------------------------- synchronisation
    def barrier_block(self, pc, blk, w, ws, lanes_alive):
        if self.sync and ws.mask != lanes_alive:
            raise self.partial_barrier_error(pc, blk.id, w, ws.mask, lanes_alive)

    def partial_barrier_error(self, pc, block_id, w, mask, lanes_alive) -> SyncCheckError:
        """synccheck: barrier_block() reached by only the lanes `mask` of `lanes_alive`."""
        line = self.sim.prog.instrs[pc].line
        return SyncCheckError(
            f"synccheck: barrier_block() at line {line} was reached by only some lanes of "
            f"block {block_id} warp {w} (active {_mask_text(mask)} of {_mask_text(lanes_alive)})",
            kernel=self.sim.kernel_name, file=self.sim.prog.file, line=line, block=block_id, warp=w,
            hint="call barrier_block() where every lane of the block reaches it, outside "
                 "per-lane if/while")

    def warp_exit(self, blk, w):
        if self.sync and blk.arrived:
            waiting = sorted(k[1] for k, ws in self.sim.unfinished.items()
                             if k[0] == blk.id and ws.waiting_at is not None)
            pc = next(ws.waiting_at for k, ws in self.sim.unfinished.items()
                      if k[0] == blk.id and ws.waiting_at is not None)
            raise self.early_exit_error(blk.id, w, waiting, pc)

    def early_exit_error(self, block_id, w, waiting, pc) -> SyncCheckError:
        """synccheck: warp w ended while the warps `waiting` wait at the barrier at pc."""
        line = self.sim.prog.instrs[pc].line
        return SyncCheckError(
            f"synccheck: warp {w} of block {block_id} finished without reaching the "
            f"barrier_block() at line {line} where warps {', '.join(map(str, waiting))} wait",
            kernel=self.sim.kernel_name, file=self.sim.prog.file, line=line, block=block_id,
            warp=w, hint="every warp of the block must reach each barrier_block(); move it "
                         "out of the branch that only some warps take")

    def finished(self, blocks):
        if not self.sync:
            return
        for blk in blocks:
            for (src, dst, event), fires in blk.tiles.flags.items():
                if fires:
                    raise never_waited_error(
                        self.sim, f"set_flag({PIPES[src]!r}, {PIPES[dst]!r}, {event}) in block {blk.id}", len(fires),
                        flag_lines(self.sim.prog, "SET_FLAG", (src, dst, event)),
                        hint="pair every set_flag with a wait_flag on the same pipes and event")

    # ---------------------------------------------------------------- reports
    def _where_word(self, space, word, blk):
        """An address as the user names it: tensor[index] (HBM byte address word) or
        buffer[index] (L1 word)."""
        sim = self.sim
        if space == "hbm":
            for slot, (base, count, item) in enumerate(zip(sim.tbase, sim.tcount, self.tensor_items)):
                if base <= word < base + count * item:
                    return f"{sim.tensor_names[slot]}[{(word - base) // item}]"
            return f"HBM byte {word}"
        lo, hi, b = sim.buffer_at(word)
        return f"{b.name}[{word - b.offset}] (L1)" if b is not None else f"L1 word {word}"

    def _access_text(self, who, pc, cycle, lane, block_default):
        sim = self.sim
        line = sim.prog.instrs[pc].line if 0 <= pc < len(sim.prog.instrs) else 0
        inst = sim.pc_name[pc] if 0 <= pc < len(sim.pc_name) else "?"
        block, warp = divmod(int(who), 4096)
        actor = f"block {block} tile engine" if warp == TILE else \
            f"block {block} warp {warp}" + (f" lane {warp * 32 + lane}" if lane >= 0 else "")
        return f"{inst} at line {line} ({actor}, cycle {cycle})", block, warp, line

    def _race(self, pc, blk, w, is_write, space, cycle, tile=False):
        r = self.report
        word, prev_write = int(r[0]), bool(r[1])
        prev_who, prev_epoch, prev_pc, prev_cycle, prev_lane, lane = (int(x) for x in r[2:8])
        sim = self.sim
        this, _, _, line = self._access_text(blk.id * 4096 + (TILE if tile else w), pc, cycle, lane, blk.id)
        that, pblock, pwarp, pline = self._access_text(prev_who, prev_pc, prev_cycle, prev_lane, blk.id)
        kind = {(True, True): "write-write", (True, False): "write-read",
                (False, True): "read-write", (False, False): "read-read"}[(prev_write, is_write)]
        if pblock != blk.id:
            fix = ("blocks are not ordered within a kernel: give each block its own words, or "
                   "split the work into two launches")
        elif pwarp == TILE or tile:
            fix = "call pto.wait_all() before lane code reads or writes a tile that a tile operation uses"
        else:
            this_kind, that_kind = ("write", "read") if is_write else ("read", "write")
            # the source's order is the one the kernel means (the run may have met them the other way)
            (a, la), (b, lb) = sorted([(that_kind, pline), (this_kind, line)], key=lambda x: x[1])
            fix = (f"make the {a} at line {la} happen before the {b} at line {lb} with pto.barrier_block() "
                   "between them (barrier() orders one warp only)")
            if prev_write and is_write:
                fix = (f"two warps write the same word (lines {pline} and {line}): give each its own "
                       f"word, or order them with pto.barrier_block()")
        return RaceError(
            f"racecheck: {kind} race on {self._where_word(space, word, blk)}: {this} and earlier "
            f"{that} are not ordered", kernel=sim.kernel_name, file=sim.prog.file, line=line,
            block=blk.id, warp=w, lane=lane, word=word, other_line=pline, other_block=pblock,
            other_warp=pwarp, cycle=cycle, other_cycle=prev_cycle, hint=fix)

    def _uninit(self, pc, blk, w, lane, word, cycle):
        sim = self.sim
        line = sim.prog.instrs[pc].line
        who = f"block {blk.id} warp {w}" + (f" lane {w * 32 + lane}" if lane is not None else " (tile load)")
        return UninitializedReadError(
            f"initcheck: {sim.pc_name[pc]} at line {line} ({who}, cycle {cycle}) read "
            f"{self._where_word('hbm', word, blk)}, which was never written",
            kernel=sim.kernel_name, file=sim.prog.file, line=line, block=blk.id, warp=w,
            lane=lane, word=word, hint="copy data in with pto.memcpy_h2d first, or write the "
                                       "word in an earlier kernel before reading it")


def _kth_lane(mask, k):
    for lane in range(32):
        if mask >> lane & 1:
            if k == 0:
                return lane
            k -= 1
    return -1


def _mask_text(mask):
    lanes = [i for i in range(32) if mask >> i & 1]
    return f"lanes {lanes[0]}-{lanes[-1]}" if lanes and lanes == list(range(lanes[0], lanes[-1] + 1)) \
        else f"{len(lanes)} lanes"
