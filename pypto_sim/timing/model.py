"""The SimPy model of the NPU: execution-driven, cycle-level, deterministic.

Blocks are dispatched to cores as warp slots and L1 allow; each warp is one SimPy process that
issues in order. An instruction issues when its operands are ready (scoreboard), its pipe
accepts it (issue interval), the core's issue port is free (issue width per cycle) and, for
barriers, when the barrier condition holds. At issue the lane executor computes its values
(so values and time always agree); its result is ready ``latency`` cycles later, plus the
bandwidth term for memory transfers. Stores become visible to other warps at completion.
Pipes and HBM links are arithmetic (booked cycles and busy intervals), never SimPy resources: SimPy's event order
(time, priority, id) makes arbitration deterministic anyway.
"""
from __future__ import annotations

import contextlib
from types import SimpleNamespace

import numpy as np
import simpy

from ..errors import DeadlockError, LaunchError, OutOfBoundsError, PtoError, SimulationLimitError
from ..exec.aicore_tiles import buffer_at
from ..exec.functional import BLOCK_BARRIERS
from ..exec.tile_effects import effect as tile_effect
from ..exec import gm
from ..exec.lane import executor
from ..ir.program import C_AUX, C_DTYPE, block_coords
from ..isa import load_isa
from .block_fit import check_block_fits
from .checks import KernelChecks
from .aicore_fast import run_aicore_fast, why_not_aicore_fast
from .fast import FastEngine, engine_setting, link_arrays, why_not_fast
from .progress import Progress
from .records import CAUSE, FoldedRecords, LaunchRecords, PcTotals, RecordBuffer
from .aicore_pipes import AICorePipes, AICoreStats
from .aicore_scalar_memory import scalar_memory_access, scalar_memory_wait, write_back_at_end
from .aicore_syncall import GridBarrier
from .l2 import L2Cache, l2_touch, l2_transfer
from .pc_tables import precompute_pc_tables
from . import aicore as aicore_ops, aicore_signals as signal_ops, launch_errors, tiles as tile_ops
from .state import BlockState, CoreState
from .stepping import SteppingQueries
from ..exec.control_flow import ControlFlow
from .warp_control import WarpState

FULL_MASK = (1 << 32) - 1
# block barriers; all but the first also combine a per-lane predicate over the block


class LaunchSimulation(SteppingQueries):
    """Simulate one kernel launch on one machine; results land in device memory."""

    def __init__(self, program, encoded, grid, block, tensors, scalars, hbm, machine, kernel_name,
                 tensor_names, record=True, max_cycles=None, checks=frozenset(), hbm_init=None,
                 executor_module=None, keep_warp_states=False, engine=None, values=True, progress=""):
        self.prog = program
        # values=False: the AI core's tile instructions are timed but compute nothing
        # (runtime's launch(values=False) checks that no control flow reads what they skip)
        self.values = values
        self.blas = False        # True while run_launch lets matmuls use BLAS (exec/blas.py)
        self.enc = encoded
        self.grid = grid
        self.block = block
        self.hbm = hbm
        self.m = machine
        self.kernel_name = kernel_name
        self.tensor_names = tensor_names
        self.record = record
        self.max_cycles = max_cycles
        self.ex = executor_module or executor()
        self.hbm_init = hbm_init
        isa = load_isa()
        self.env = simpy.Environment()
        self.cores = [CoreState(i) for i in range(machine.cores)]
        # HBM links: the compiled link_book even when the values come from the reference
        # executor (timing is not the executor's business; one implementation for both engines)
        self.links = executor()
        self.lk_s, self.lk_e, self.lk_n = link_arrays(self.links, machine.cores)
        # without records (and outside the debugger, which reads them) the rows are folded
        # into per-pc totals as they come, so a long launch's memory stays flat
        self.rows = RecordBuffer() if record or keep_warp_states else FoldedRecords(len(encoded.code))
        self.pending_commits = {}
        self.commit_seq = 0
        self.warps_done = 0
        self.unfinished = {}
        # (block id, warp) -> WarpState: every warp, kept after it retires, when the debugger
        # asks (keep_warp_states); otherwise none (self.unfinished holds the running ones), so
        # memory does not grow with the grid
        self.warp_states = {}
        self.keep_warp_states = keep_warp_states
        self.end_time = 0            # when the last warp retired: the kernel's total cycles
        self.tbase, self.tcount, self.tbytes = (np.array([t[j] for t in tensors] or [0], np.int64)
                                                for j in range(3))
        self.scalars = scalars
        self.block_lanes = block[0] * block[1] * block[2]
        self.warps_per_block = -(-self.block_lanes // 32)
        # the real AI core: a block is one AI core, its three units (AIC, AIV0, AIV1) are
        # one-lane warps that each run their own program (timing/aicore.py)
        self.aicore = bool(getattr(program, "aicore", False))
        # the L2 in front of HBM, for tile DMA (timing/l2.py); lane accesses bypass it
        self.l2 = L2Cache(machine.l2_bytes, machine.l2_line_bytes, zip(self.tbase, self.tcount)) \
            if machine.has_l2 else None
        self.l2_s, self.l2_e, self.l2_n = link_arrays(self.links, 0)   # the L2's chip link
        if self.aicore:
            if not machine.has_aicore:
                raise LaunchError(f"kernel '{kernel_name}' uses typed tiles but machine "
                                  f"'{machine.name}' has no [aicore] section", kernel=kernel_name,
                                  hint="use a machine table with [aicore] (latency_tables/ascend910b.toml)")
            self.block_lanes = self.warps_per_block = aicore_ops.N_UNITS
            self.aicore_stats = AICoreStats()
        precompute_pc_tables(self, isa)
        self.blocks = []             # the resident blocks (every block, for the debugger)
        self.blocks_with_flags = []  # finished blocks with set_flags never waited for (synccheck)
        self.checks = KernelChecks(self, checks, hbm_init) if checks else None
        self.engine = engine_setting(engine)
        self.progress_setting = progress      # pto.Settings.progress: "", "0" or "1"
        self.progress = self.launch_progress(enabled=False)     # run() makes a visible one
        self.record_columns = None   # the compiled engine's LaunchRecords (SimPy's go to self.rows)
        self.pc_totals = None        # the compiled engine's PcTotals when records are not kept
        self.engine_used = None

    def buffer_at(self, word):
        """(lo, hi, buffer) of the alloc_local copy holding L1 word ``word``."""
        return buffer_at(self.buffer_spans, word)

    # ---------------------------------------------------------------- dispatch
    def start(self):
        """Dispatch the grid: create the SimPy processes, without running any of them."""
        m = self.m
        gx, gy, gz = self.grid
        if self.aicore:
            per_core = 1          # a block of an AI-core kernel is the whole AI core
            self.aicore_pipes = AICorePipes(self, min(m.cores, gx * gy * gz))
            self.grid_barrier = GridBarrier(self)
        else:
            block_l1 = check_block_fits(self.prog, self.block, m, self.kernel_name)
            per_core = min(m.warp_slots_per_core // self.warps_per_block, m.l1_bytes // max(block_l1, 1))
        self.block_queue = iter(range(gx * gy * gz))
        for _slot in range(per_core):
            for core in self.cores:
                self.env.process(self._slot(core))

    def run(self) -> int:
        """Run the launch to completion; return total cycles. Raises the kernel's errors.

        Kernels of lane instructions run on the compiled event loop (timing/fast.py), which
        gives the same events in the same order as SimPy, 15-20x faster, and AI-core kernels
        on theirs (timing/aicore_fast.py); the rest (checks, the debugger), and every launch
        when PYPTO_TIMING_ENGINE=simpy, run under SimPy."""
        why = why_not_aicore_fast(self) if self.aicore else why_not_fast(self)
        if self.engine == "fast" and why:
            raise LaunchError(f"PYPTO_TIMING_ENGINE=fast cannot run this launch: {why}",
                              kernel=self.kernel_name, hint="use PYPTO_TIMING_ENGINE=auto")
        if self.engine != "simpy" and not why and self.aicore:
            if run_aicore_fast(self):
                return self.end_time
        elif self.engine != "simpy" and not why:
            self.engine_used = "fast"
            self.block_l1 = check_block_fits(self.prog, self.block, self.m, self.kernel_name)
            self.progress = self.launch_progress()
            with self.progress:
                return FastEngine(self).run()
        self.engine_used = "simpy"
        self.progress = self.launch_progress()
        self.start()
        with self.progress, self.translated_errors():
            self.env.run(until=self.max_cycles)
        return self.finish()

    def launch_progress(self, enabled=None) -> Progress:
        """The launch's progress line: blocks finished, shown after two seconds on a terminal
        (timing/progress.py). A launch stepped by the debugger keeps a silent one."""
        gx, gy, gz = self.grid
        return Progress(self.kernel_name, gx * gy * gz, unit="blocks", setting=self.progress_setting,
                        enabled=enabled, inner=True)

    def finish(self) -> int:
        """After the events ran out: report a hang or a cycle limit; return total cycles."""
        if self.aicore:
            self.aicore_pipes.finish(self)
        if self.checks and not self.unfinished:
            self.checks.finished(sorted(self.blocks + self.blocks_with_flags, key=lambda b: b.id))
        if self.unfinished:
            # run(until=limit) leaves its own marker event queued: anything more is real work
            if self.max_cycles is not None and len(self.env._queue) > 1:
                raise self.limit_error(len(self.unfinished))
            raise self.deadlock_error([(block_id, w, ws.waiting_at) for (block_id, w), ws
                                       in sorted(self.unfinished.items())])
        return int(self.end_time)

    def limit_error(self, unfinished: int, where=None) -> SimulationLimitError:
        """The error of a launch still running at its cycle limit; where: (block id, warp, pc)
        of each unfinished warp, from the warp states unless the compiled engine gives them."""
        if where is None:
            where = [(block_id, w, ws.pc) for (block_id, w), ws in sorted(self.unfinished.items())]
        return launch_errors.cycle_limit(self, unfinished, where)

    @contextlib.contextmanager
    def translated_errors(self):
        """Kernel faults out of SimPy: flush what landed, re-raise the original error."""
        try:
            yield
        except PtoError as err:
            # what was issued before the fault lands; nothing after it does
            self._flush_commits(after_fault=True)
            # SimPy re-raises a process's exception as a new instance (args only) chained to
            # the original: raise the original, which carries the structured fields
            original = err
            while isinstance(original.__cause__, PtoError):
                original = original.__cause__
            raise original.with_traceback(None) from None

    def _slot(self, core):
        for block_id in self.block_queue:
            yield self.env.process(self._block(core, block_id, block_coords(block_id, self.grid)))
            self.progress.update(self.progress.done + 1, f"cycle {int(self.env.now)}")

    def _block(self, core, block_id, coords):
        blk = BlockState(self.env, block_id, coords, core, self.warps_per_block, self.prog.local_words)
        if self.aicore:
            blk.aicore = aicore_ops.AICoreState(self, blk, bool(self.checks and self.checks.race))
            # a unit's issue port is the core's: a block that takes the core after another
            # issues after the last instruction that block issued (the compiled loop's books)
            if core.unit_ports is None:
                core.unit_ports = [CoreState(core.index) for _ in range(self.warps_per_block)]
            blk.unit_ports = core.unit_ports
        self.blocks.append(blk)
        if self.checks:
            self.checks.block_started(blk)
        # an AI core's units each run their own program; a unit without one does not start
        procs = [self.env.process(self._warp(core, blk, w)) for w in range(self.warps_per_block)
                 if not self.aicore or self.prog.unit_entry[w] >= 0]
        yield self.env.all_of(procs)
        if self.aicore and self.checks and self.checks.sync:
            aicore_ops.unmatched_aicore_flags(self, blk)
        if not self.keep_warp_states:
            # a finished block's memory goes (the debugger shows every block's, so it keeps
            # them); synccheck's end-of-launch look at unmatched flags keeps just those
            self.blocks.remove(blk)
            if self.checks and self.checks.sync and any(blk.tiles.flags.values()):
                self.blocks_with_flags.append(SimpleNamespace(id=blk.id, tiles=blk.tiles))

    # ---------------------------------------------------------------- one warp
    def _warp(self, core, blk, w):
        env, ex, enc = self.env, self.ex, self.enc
        code, imm = enc.code, enc.imm
        aicore = self.aicore
        lanes_here = 1 if aicore else min(32, self.block_lanes - w * 32)
        ws = WarpState(enc.n_regs, FULL_MASK if lanes_here == 32 else (1 << lanes_here) - 1)
        ws.next_issue = env.now          # as aicore_engine's _init_units: a later block's wait
                                         # for its core is no stall of its first instruction
        for arg in self.prog.args:
            if arg.reg is not None:
                ws.regs[self.prog.n_lane_slots + arg.reg.index, :] = self.scalars[arg.name]
        bx, by, bz = blk.coords
        ctx = np.array([bx, by, bz, *self.block, *self.grid, w], np.int64)
        info = np.zeros(8, np.int64)
        pend_idx = np.zeros(32, np.int64)
        pend_val = np.zeros(32, np.float64)
        control = ControlFlow(code, imm, ws, ex)
        sector = self.m.sector_bytes
        width = self.m.issue_width
        key = (blk.id, w)
        self.unfinished[key] = ws
        if self.keep_warp_states:
            self.warp_states[key] = ws
        pc = self.prog.unit_entry[w] if aicore else 0
        record = True        # SimPy always writes rows: without them there are no totals
        while True:
            ws.pc = pc                   # where a cycle limit finds the warp
            fam = self.pc_family[pc]
            # ---- when can this instruction issue?
            now = env.now
            t, cause, cause_pc = ws.next_issue, CAUSE["none"], -1
            if t < now:
                t = now
            for r in self.pc_srcs[pc]:
                if ws.ready[r] > t:
                    t, cause, cause_pc = ws.ready[r], CAUSE["operand"], ws.producer[r]
            d = self.pc_dst[pc]
            if d >= 0 and ws.ready[d] > t:
                t, cause, cause_pc = ws.ready[d], CAUSE["operand"], ws.producer[d]
            p = self.pc_pipe[pc]
            tile = self.pc_tile[pc]
            if tile and w != 0 and not aicore:   # tile instructions: warp 0 of the block issues them
                pc += 1
                continue
            if (fam == "sync" or fam == "atomic") and ws.store_done > t:
                # barriers, fences and atomics wait until the warp's own stores have landed
                t, cause = ws.store_done, CAUSE["barrier"]
            if fam == "tile_sync" and self.pc_name[pc] == "WAIT_ALL" and code[pc, C_AUX]:
                if w != 0 and not blk.has_wait_mark(ws.wait_alls):
                    # warp 0 has not dispatched the tile ops before this wait_all yet
                    ws.note_stall(CAUSE["wait_all"], -1)
                    ws.waiting_at = pc
                    while not blk.has_wait_mark(ws.wait_alls):
                        yield blk.mark_event
                    ws.waiting_at = None
                    now = env.now
                    t = max(t, now)
                done, seen = self._wait_all_mark(pc, blk, w, ws)
                if done > t:
                    t, cause = done, CAUSE["wait_all"]
            # Book the first cycle >= t with room on the core's issue port and (lane
            # instructions) a free pipe for issue_interval cycles: arbitration as arithmetic,
            # first come first served in simulated time, and one wakeup per instruction.
            if aicore and fam == "tile_sync":
                t, cause = yield from aicore_ops.wait_before_issue(self, pc, blk, w, ws, t, cause)
                now = env.now            # the wait may have slept
            elif aicore and tile:
                # the pipe's instruction queue holds pipe_queue_depth operations; when it is
                # full the scalar unit waits for the oldest to complete
                slot = self.aicore_pipes.queue_slot(blk.aicore.p, w, p, t)
                if slot > t:
                    t, cause, cause_pc = slot, CAUSE["pipe"], -1
            elif aicore and fam == "scalar_mem":
                t, cause, cause_pc = scalar_memory_wait(self, pc, blk, w, t, cause, cause_pc)
            elif fam == "comm_signal":              # a TWAIT / TTEST reads its signals first
                t, cause = yield from signal_ops.wait_before_issue(self, pc, blk, w, ws, t, cause)
                now = env.now
            port = blk.unit_ports[w] if aicore else core
            c, why = port.book(t, -1 if tile else p, self.pc_ii[pc], width, now)
            if why:
                cause, cause_pc = why, -1
            if c > now:
                ws.note_stall(cause, cause_pc)
                yield env.timeout(c - now)
                now = env.now
            # ---- issue
            stall = now - ws.next_issue if now > ws.next_issue else 0
            lat = self.pc_lat[pc]
            ws.next_issue = now + 1
            complete = now + lat
            moved = 0
            mask = ws.mask
            next_pc = pc + 1
            if fam == "control":
                next_pc = control.step(pc, self.pc_name[pc])
            elif self.pc_tile[pc]:
                if aicore:
                    start, complete, moved, why, why_pc, more = aicore_ops.dispatch(self, pc, blk, w, ws, now)
                else:                                   # (records' why: 0 for lane tiles)
                    (start, complete, moved, why, why_pc), more = tile_ops.dispatch(self, pc, core, blk, w, ws, now), 0
                if record:
                    self.rows.extend((blk.id, w, core.index, pc, start, complete, start - now,
                                      CAUSE[why], why_pc, mask, moved, more))
                ws.reset_stall()
                pc = next_pc
                continue
            elif fam == "tile_sync" and aicore:
                aicore_ops.sync_at_issue(self, pc, blk, w, now)
            elif fam == "tile_sync" and self.pc_name[pc] != "WAIT_ALL":
                tile_ops.flag(self, pc, blk, now)
            elif fam == "tile_sync":
                if code[pc, C_AUX]:              # the warp has waited for these tile ops
                    ws.seen_tiles = max(ws.seen_tiles, seen)
                    ws.wait_alls += 1
                else:
                    ws.seen_tiles = max(ws.seen_tiles, blk.tile_seq)
            elif fam in ("alu", "id", "warp", "local", "check"):
                if ex.execute(pc, code, imm, ws.regs, mask, ctx, self.hbm, self.tbase, self.tcount,
                              self.tbytes, blk.l1, sector, pend_idx, pend_val, info):
                    raise self._oob(pc, blk, w, info)           # a local-array index
                if d >= 0:                                      # a LOCAL_STORE has no result
                    ws.ready[d], ws.producer[d] = complete, pc
            elif fam in ("load", "atomic"):
                # an atomic's read-modify-write happens here, at issue, after the warp's own
                # stores landed; its old value returns like a load's
                if ex.execute(pc, code, imm, ws.regs, mask, ctx, self.hbm, self.tbase, self.tcount,
                              self.tbytes, blk.l1, sector, pend_idx, pend_val, info):
                    raise self._oob(pc, blk, w, info)
                moved = int(info[3])
                if ws.pending_stores and fam == "load":
                    self._forward_own_stores(pc, ws, mask, int(info[4]), pend_idx)
                if self.pc_mem[pc] == "hbm":
                    complete = now + lat + self._transfer(core, moved, now, read=True)
                    if fam == "atomic" and self.hbm_init is not None:
                        gm.init_mark(self.hbm_init, pend_idx[:int(info[4])])
                ws.ready[d], ws.producer[d] = complete, pc
                if self.checks and fam == "load":        # racecheck does not track atomics
                    self.checks.lane_access(pc, blk, w, ws, mask, int(info[4]), pend_idx, False,
                                            self.pc_mem[pc], now)
            elif fam in ("store", "fma_store"):
                status = ex.execute(pc, code, imm, ws.regs, mask, ctx, self.hbm, self.tbase,
                                    self.tcount, self.tbytes, blk.l1, sector, pend_idx, pend_val, info)
                if status:
                    raise self._oob(pc, blk, w, info)
                n_pairs = int(info[4])
                if self.checks:
                    self.checks.lane_access(pc, blk, w, ws, mask, n_pairs, pend_idx, True,
                                            self.pc_mem[pc], now)
                if fam == "fma_store":
                    ws.ready[d], ws.producer[d] = complete, pc
                    complete = complete + self.store_latency
                moved = int(info[3])
                if self.pc_mem[pc] == "hbm":
                    complete += self._transfer(core, moved, complete - lat if fam == "store" else complete - self.store_latency, read=False)
                to_hbm = self.pc_mem[pc] == "hbm"
                words, values = pend_idx[:n_pairs].copy(), pend_val[:n_pairs].copy()
                if to_hbm and self.hbm_init is not None:
                    gm.init_mark(self.hbm_init, words)     # initcheck: written once the store issues
                seq = self._schedule_commit(self.hbm if to_hbm else blk.l1, words, values,
                                            complete - now, ws, int(code[pc, C_DTYPE]) if to_hbm else -1)
                ws.pending_stores[seq] = (self.pc_mem[pc], words.reshape(1, -1), values.reshape(1, -1))
                if complete > ws.store_done:
                    ws.store_done = complete
            elif fam == "scalar_mem":               # the AI core's scalar unit on UB and GM
                complete = scalar_memory_access(self, pc, blk, w, ws, now, complete)
                if d >= 0:
                    ws.ready[d], ws.producer[d] = complete, pc
            elif fam == "comm_signal":              # pto.tnotify / twait / ttest (timing/aicore_signals.py)
                complete = signal_ops.at_issue(self, pc, blk, w, ws, now, complete)
                if d >= 0:
                    ws.ready[d], ws.producer[d] = complete, pc
            elif fam == "sync" and self.pc_name[pc] in BLOCK_BARRIERS:
                issued = now
                if self.checks:
                    self.checks.barrier_block(pc, blk, w, ws, ws.alive & ~ws.exited)
                voting = self.pc_name[pc] != "BARRIER_BLOCK"
                if voting:
                    count, lanes = ex.vote_count(pc, code, imm, ws.regs, mask)
                    blk.vote_count += count
                    blk.vote_lanes += lanes
                blk.arrived += 1
                blk.barrier_seen = max(blk.barrier_seen, ws.seen_tiles)
                if blk.arrived >= blk.live:
                    self._release(blk)
                else:
                    ws.waiting_at = pc
                    yield blk.release
                    ws.waiting_at = None
                # a tile op any warp waited for before the barrier is ordered before this warp
                ws.seen_tiles = max(ws.seen_tiles, blk.released_seen)
                complete = env.now + lat
                ws.next_issue = complete
                if voting:
                    ex.write_vote(pc, code, ws.regs, mask, *blk.vote_result)
                    ws.ready[d], ws.producer[d] = complete, pc
                if record:
                    # it issues when the last warp arrives (docs/timing.md, item 4): the wait from
                    # its arrival is a barrier_block stall, its pipe busy for its latency only
                    waited = env.now - issued
                    self.rows.extend((blk.id, w, core.index, pc, env.now, complete, stall + waited,
                                      CAUSE["barrier_block"] if waited else ws.cause,
                                      -1 if waited else ws.cause_pc, mask, 0, 0))
                ws.reset_stall()
                pc = next_pc
                continue
            if record:
                self.rows.extend((blk.id, w, core.index, pc, now, complete, stall, ws.cause,
                                  ws.cause_pc, mask, moved, 0))
            ws.reset_stall()
            if next_pc < 0:
                break
            pc = next_pc
        # retire: the warp finishes once its stores (and, for warp 0, its tile ops) are done,
        # every result it computed (an unused one still occupies its pipe until then) and its
        # last instruction (EXIT's cycle)
        if aicore:
            done = max(ws.store_done, self.aicore_pipes.drained(blk.aicore.p, w, aicore_ops.ALL), max(ws.ready),
                       complete)
        else:
            done = max(ws.store_done, blk.tiles.done if w == 0 else 0, max(ws.ready), complete)
        if done > env.now:
            yield env.timeout(done - env.now)
        if aicore:                       # its pipes drained: the DataCache's dirty lines reach GM
            write_back_at_end(self, blk, w)
        if w == 0:
            blk.warp0_retired()          # later wait_alls of other warps wait for what it issued
        del self.unfinished[key]
        if env.now > self.end_time:
            self.end_time = env.now
        if self.checks:
            self.checks.warp_exit(blk, w)
        # A block barrier needs every warp of the block: a warp that exits while others wait
        # leaves them waiting forever, which run() reports as a DeadlockError.

    # ---------------------------------------------------------------- shared resources
    def _transfer(self, core, nbytes, start, read, hbm_bytes=None):
        """Cycles of bandwidth a transfer of nbytes from cycle start adds, on the core's link
        and the chip's HBM (busy intervals: the executor's link_book, shared with the
        compiled engine). hbm_bytes: for a tile transfer through the L2, the bytes of its
        missed lines, which HBM moves (all of nbytes cross the L2's chip link); None: every
        byte crosses HBM's."""
        if hbm_bytes is None:
            return int(self.links.transfer(self.lk_s, self.lk_e, self.lk_n, core.index, nbytes, start,
                                           read, self.read_bw, self.write_bw, self.chip_bw,
                                           int(self.env.now)))
        return l2_transfer(self, core, nbytes, start, hbm_bytes, read)

    def l2_touch(self, gm, read):
        """A tile transfer touches its L2 lines: (latency saved, bytes HBM moves for it)."""
        return l2_touch(self, gm, read)

    def _schedule_commit(self, mem, idx, val, delay, ws, dt):
        """Warp ws's lane store lands delay cycles from now (dt: HBM dtype, -1: L1); returns its seq."""
        seq = self.commit_seq

        def commit():
            gm.commit(self.ex, mem, idx, val, dt)
            ws.pending_stores.pop(seq, None)
        return self._schedule_effect(delay, commit)

    def _forward_own_stores(self, pc, ws, mask, n_read, read_idx):
        """Load pc of warp ws read the words read_idx[:n_read]: its own stores to the same
        space that have not landed yet override what memory held (oldest first)."""
        space = self.pc_mem[pc]
        for s_space, words, values in ws.pending_stores.values():
            if s_space == space:
                self.ex.forward_store(pc, self.enc.code, ws.regs, mask, read_idx, n_read,
                                      words, values, 0, words.shape[1])

    def _schedule_effect(self, delay, effect):
        """Apply effect() (a store's commit, a tile op's values) delay cycles from now; returns
        the effect's sequence number."""
        seq = self.commit_seq
        self.commit_seq += 1
        self.pending_commits[seq] = effect

        def apply(_event, seq=seq):
            fn = self.pending_commits.pop(seq, None)
            if fn is not None:
                fn()

        self.env.timeout(delay).callbacks.append(apply)
        return seq

    def schedule_tile_effect(self, pc, vals, slot, delay, blk):
        """Compute tile instruction pc's values when it completes."""
        self._schedule_effect(delay, tile_effect(self, pc, vals, slot, blk, values=self.values))

    def _flush_commits(self, after_fault=False):
        """Run the pending value effects in order. after_fault: the launch stopped at a fault; an
        effect that faults too (a later operation's read: TGATHER_IDX's index) is dropped, so
        the first fault is the one reported, as the compiled engine reports it."""
        for seq in sorted(self.pending_commits):
            try:
                self.pending_commits[seq]()
            except PtoError:
                if not after_fault:
                    raise
        self.pending_commits.clear()

    def _wait_all_mark(self, pc, blk, w, ws):
        """(when the tile ops a blocking wait_all waits for are done, how many tile ops that
        covers). Tile ops are block-level and warp 0 dispatches them, so warp 0's k-th
        wait_all sets the mark that every warp's k-th wait_all waits for."""
        if w == 0:
            return blk.add_wait_mark(int(self.enc.code[pc, C_AUX + 2]))
        return blk.wait_mark(ws.wait_alls)

    def _release(self, blk):
        blk.epoch += 1
        blk.released_seen = blk.barrier_seen
        blk.vote_result = (blk.vote_count, blk.vote_lanes)    # voting barriers' block totals
        blk.vote_count = blk.vote_lanes = 0
        event = blk.release
        blk.release = self.env.event()
        blk.arrived = 0
        event.succeed()

    # ---------------------------------------------------------------- errors
    def _oob(self, pc, blk, w, info) -> OutOfBoundsError:
        return launch_errors.lane_out_of_bounds(self, pc, blk, w, info)

    def deadlock_error(self, stuck) -> DeadlockError:
        """The error of a launch whose events ran out with warps unfinished; stuck lists
        (block id, warp, pc it waits at or None), in order."""
        if self.aicore:
            return aicore_ops.deadlock_error(self, stuck)
        return launch_errors.barrier_deadlock(self, stuck)

    def records(self) -> LaunchRecords | None:
        """The per warp-instruction records of the run (None when record=False)."""
        if not self.record:
            return None
        if self.record_columns is not None:
            return self.record_columns
        return LaunchRecords.from_rows(self.rows)

    def totals(self, records=None) -> PcTotals:
        """Per-pc totals of the run: the compiled engine's, SimPy's folded rows, or summed from
        the records."""
        if self.pc_totals is not None:
            return self.pc_totals
        if isinstance(self.rows, FoldedRecords) and self.record_columns is None:
            return self.rows.totals()
        if records is None:
            records = self.record_columns if self.record_columns is not None \
                else LaunchRecords.from_rows(self.rows)
        return PcTotals.from_records(records, len(self.enc.code))
