"""Functional-only mode for AI-core kernels: the values, without timing.

Each block is one AI core, whose three units (AIC, AIV0, AIV1) run their programs in turn: a
unit runs until it finishes or reaches a ``cross_core_wait_flag`` (or block barrier) that
nothing has released yet, then the next unit runs. Blocks run one after another, except in a
kernel with ``pto.syncall`` or the communication signals (pto.tnotify / twait / ttest), whose
blocks all run in turn together (a unit waits at SYNCALL until every participant of the launch
has arrived, at a TWAIT until a pass sees its signals satisfied; it lets the others run after
each TNOTIFY and each TTEST that fails, exec/comm_signals.py). Within a unit every instruction completes
before the next starts, in program order, with the executor's kernels (exec/aicore_tiles.py),
so flags within a unit need not order anything; they are still counted, and a wait_flag with
no set_flag before it is the DeadlockError the timing model raises. For a race-free kernel
this computes exactly what the timing model computes (tests/test_aicore_functional.py runs
every AI-core example in both modes); a racy kernel may differ, as it may on hardware from
run to run. Bounds are checked as in timing mode.
"""
from __future__ import annotations


import numpy as np

from ..errors import OutOfBoundsError, SimulationLimitError
from ..ir.program import C_AUX, C_DTYPE, C_OP, block_coords
from ..isa import load_isa
from ..isa.run_time_checks import check_error
from .aicore_flag_errors import cross_core_deadlock, cross_flag_overflow, unset_flag_error
from .aicore_tiles import UNIT_NAMES, TileOp, buffer_at, buffer_spans, operands
from . import gm
from .blas import single_threaded_blas, uses_matmul
from .control_flow import ControlFlow
from .functional import BLOCK_BARRIERS, FunctionalProfile, memory_space
from .jit_clock import run_clock
from . import comm_signals, scalar_memory
from .scalar_memory import DataCache, mark_written_back
from .lane import executor
from .syncall_rounds import SoftCounters, SyncallRounds, check_soft_count, participant_counts
from ..isa.syncall_modes import soft_target

N_UNITS = len(UNIT_NAMES)
SECTOR_BYTES = 32         # the lane executor counts sectors; functional mode reports none


class _Unit:
    """One unit's registers, control state and place in the program."""

    __slots__ = ("index", "regs", "mask", "stack", "exited", "pc", "done", "flags", "control",
                 "barrier_epoch", "syncall", "cache")

    def __init__(self, index, n_regs, code, imm, ex, hbm):
        self.index = index
        self.regs = np.zeros((max(n_regs, 1), 32), np.float64)
        self.mask, self.stack, self.exited = 1, [], 0       # one lane: the scalar unit
        self.pc, self.done = 0, False
        self.flags: dict = {}            # (src pipe, dst pipe, event) -> set_flags not yet waited
        self.control = ControlFlow(code, imm, self, ex)
        self.barrier_epoch = 0
        self.syncall = None              # the SYNCALL round it arrived at and waits for (soft: its target)
        self.cache = DataCache(hbm)      # its scalar unit's DataCache (exec/scalar_memory.py)


class AICoreFunctional:
    """The functional run of one AI-core launch: the context exec/aicore_tiles.py decodes
    instructions in (the same attributes the timing model offers it)."""

    def __init__(self, prog, enc, grid, block, tensors, scalars, hbm, hbm_init, kernel_name,
                 tensor_names, max_instructions, executor_module=None, cross_core_flag_limit=None):
        self.prog, self.enc, self.grid, self.block = prog, enc, grid, block
        self.cross_core_flag_limit = cross_core_flag_limit     # the machine's; None: not checked
        self.hbm, self.hbm_init = hbm, hbm_init
        self.kernel_name, self.tensor_names = kernel_name, tensor_names
        self.max_instructions = max_instructions
        self.ex = executor_module or executor()
        self.tbase = np.array([t[0] for t in tensors] or [0], np.int64)
        self.tcount = np.array([t[1] for t in tensors] or [0], np.int64)
        self.tbytes = np.array([t[2] for t in tensors] or [0], np.int64)
        self.scalars = scalars
        isa = load_isa()
        code = enc.code
        self.pc_spec = [isa.by_opcode[int(code[pc, C_OP])] for pc in range(len(code))]
        self.pc_name = [s.name for s in self.pc_spec]
        self.pc_family = [s.family for s in self.pc_spec]
        self.pc_tile = [s.is_tile and s.family != "tile_sync" for s in self.pc_spec]
        self.pc_mem = [memory_space(s) for s in self.pc_spec]
        self.pc_tiles = [[getattr(s, "tile", -1) for s in ins.srcs] for ins in prog.instrs]
        self.buffer_spans = buffer_spans(prog)
        self.executed = 0
        self.blas = False          # True while a run may use numpy's BLAS (exec/blas.py)

    def buffer_at(self, word):
        """(lo, hi, buffer) of the tile holding word ``word`` (as the timing model's)."""
        return buffer_at(self.buffer_spans, word)

    # ---------------------------------------------------------------- the grid
    def run(self) -> FunctionalProfile:
        gx, gy, gz = self.grid
        blocks = range(gx * gy * gz)
        with single_threaded_blas(uses_matmul(self.prog)) as self.blas, run_clock() as clock:
            if any(name in ("SYNCALL", "SYNCALL_SOFT") for name in self.pc_name) or "comm_signal" in self.pc_family:
                self.run_together([self.new_block(b) for b in blocks])
            else:
                for block_id in blocks:
                    self.run_together([self.new_block(block_id)])
        return FunctionalProfile(self.kernel_name, self.grid, self.block, self.executed,
                                 clock.run_seconds, compile_seconds=clock.compile_seconds)

    def new_block(self, block_id):
        """One AI core's units, memories and flags, ready to run: (coords, units, arrays, state)."""
        enc, prog = self.enc, self.prog
        l1 = np.zeros(max(prog.local_words, 1), np.float64)
        arrays = (l1, l1, np.zeros_like(l1))     # AIC and AIV0 at different words of l1
        units = [_Unit(w, enc.n_regs, enc.code, enc.imm, self.ex, self.hbm) for w in range(N_UNITS)]
        for u in units:                  # each unit runs its own program, if it has one
            u.pc = prog.unit_entry[u.index]
            u.done = u.pc < 0
        for u in units:
            for arg in prog.args:
                if arg.reg is not None:
                    u.regs[prog.n_lane_slots + arg.reg.index, :] = self.scalars[arg.name]
        return block_coords(block_id, self.grid), units, arrays, {"cross": {}, "arrived": 0, "epoch": 0}

    def run_together(self, cores):
        """Run the units of these AI cores in turn, each until it finishes or waits, to their
        ends (a launch with SYNCALL runs all its cores together; others one core at a time)."""
        counts = participant_counts(self.prog.unit_entry, self.grid)
        self.rounds = SyncallRounds(counts)
        self.soft = SoftCounters(self.hbm, self.tbase, counts)
        while any(not u.done for _, units, _, _ in cores for u in units):
            moved = False
            for coords, units, arrays, state in cores:
                for u in units:
                    if not u.done:
                        moved |= self.run_unit(u, units, arrays, coords, state)
            if not moved:
                raise cross_core_deadlock(self, [(coords, u.index, u.pc) for coords, units, _, _ in cores
                                                 for u in units if not u.done])

    def run_unit(self, u, units, arrays, coords, state) -> bool:
        """Run unit u until it finishes or waits for another unit; True if it executed anything."""
        ex, code, imm = self.ex, self.enc.code, self.enc.imm
        ctx = np.array([*coords, *self.block, *self.grid, u.index], np.int64)
        info = np.zeros(8, np.int64)
        pend_idx = np.zeros(32, np.int64)
        pend_val = np.zeros(32, np.float64)
        l1 = arrays[0]
        start_pc, start_count = u.pc, self.executed
        pc = u.pc
        pause = False
        while pc >= 0 and not pause:
            if self.executed >= self.max_instructions:
                raise self.limit(pc, u, coords)
            fam, name = self.pc_family[pc], self.pc_name[pc]
            next_pc = pc + 1
            if fam == "control":
                next_pc = u.control.step(pc, name)
            elif self.pc_tile[pc]:
                op = TileOp(self, pc, operands(self, pc, u.regs), arrays[u.index], u.index, coords)
                op.run()
                op.mark_written(self.hbm_init)
            elif fam == "tile_sync":
                if not self.sync(pc, name, u, state, coords):
                    break                                    # waits for another unit
            elif fam == "scalar_mem":
                scalar_memory.run(self, pc, u.index, coords, u.regs, arrays[u.index], u.cache)
                mark_written_back(self.hbm_init, u.cache.take_written())
            elif fam == "comm_signal":
                outcome = comm_signals.run(self, pc, u.index, coords, u.regs, u.cache)
                if outcome == comm_signals.WAIT:
                    break                                    # its signals are not there yet
                pause = outcome == comm_signals.PAUSE
            elif fam in ("alu", "id", "warp", "local", "check", "load", "atomic", "store", "fma_store"):
                if ex.execute(pc, code, imm, u.regs, u.mask, ctx, self.hbm, self.tbase, self.tcount,
                              self.tbytes, l1, SECTOR_BYTES, pend_idx, pend_val, info):
                    raise self.lane_fault(pc, u, coords, info)
                if fam in ("store", "fma_store"):            # a store lands at once
                    n = int(info[4])
                    to_hbm = self.pc_mem[pc] == "hbm"
                    gm.commit(ex, self.hbm if to_hbm else l1, pend_idx[:n], pend_val[:n],
                              int(code[pc, C_DTYPE]) if to_hbm else -1)
                    if to_hbm and self.hbm_init is not None:
                        gm.init_mark(self.hbm_init, pend_idx[:n])
                elif fam == "atomic" and self.pc_mem[pc] == "hbm" and self.hbm_init is not None:
                    gm.init_mark(self.hbm_init, pend_idx[:int(info[4])])
            elif fam == "sync" and name in BLOCK_BARRIERS:
                if u.barrier_epoch == state["epoch"]:        # arrive once
                    u.barrier_epoch += 1
                    state["arrived"] += 1
                    if state["arrived"] == sum(not v.done for v in units):
                        state["arrived"], state["epoch"] = 0, state["epoch"] + 1
                if u.barrier_epoch > state["epoch"]:
                    break                                    # the others have not arrived
            self.executed += 1
            pc = next_pc
        u.pc = pc
        if pc < 0:
            u.done = True
            u.cache.write_back_all()                         # its dirty lines reach GM (isa/data_cache.py)
            mark_written_back(self.hbm_init, u.cache.take_written())
        return u.done or pc != start_pc or self.executed != start_count

    # ---------------------------------------------------------------- flags
    def sync(self, pc, name, u, state, coords) -> bool:
        """A flag instruction of unit u; False when u must wait for another unit."""
        aux = self.enc.code[pc, C_AUX:C_AUX + 3]
        if name == "SET_FLAG":
            key = tuple(int(x) for x in aux)
            u.flags[key] = u.flags.get(key, 0) + 1
        elif name == "WAIT_FLAG":
            key = tuple(int(x) for x in aux)
            if not u.flags.get(key):
                raise unset_flag_error(self, pc, u.index, coords, key)
            u.flags[key] -= 1
        elif name == "CROSS_CORE_SET_FLAG":
            event = int(aux[0])
            limit = self.cross_core_flag_limit
            for to in self.prog.cross_partners(u.index):
                key = (to, event, u.index)
                if limit is not None and state["cross"].get(key, 0) >= limit:
                    raise cross_flag_overflow(self, pc, u.index, coords, to, limit)
                state["cross"][key] = state["cross"].get(key, 0) + 1
        elif name == "SYNCALL":
            kind = int(aux[0])
            if u.syncall is None:                   # arrive once, then wait for the round
                u.syncall = self.rounds.arrive(kind)
            if self.rounds.release(kind, u.syncall) is None:
                return False
            u.syncall = None
        elif name == "SYNCALL_SOFT":
            _kind, address, total = self.soft.operands(self.enc, pc, u.regs)
            if u.syncall is None:                   # read the counter, add 1, then poll it
                check_soft_count(self, pc, u.index, coords, total)
                u.syncall = soft_target(self.soft.value(address), total)
                self.soft.add(address)
            if self.soft.value(address) < u.syncall:
                return False
            u.syncall = None
        elif name == "CROSS_CORE_WAIT_FLAG":
            event = int(aux[0])
            keys = [(u.index, event, s) for s in self.prog.cross_partners(u.index)]
            if not all(state["cross"].get(k) for k in keys):
                return False
            for k in keys:
                state["cross"][k] -= 1
        return True             # PIPE_BARRIER: program order already orders everything

    # ---------------------------------------------------------------- errors
    def limit(self, pc, u, coords) -> SimulationLimitError:
        ins = self.prog.instrs[pc]
        return SimulationLimitError(
            f"{UNIT_NAMES[u.index]} of block {coords} was still running at line {ins.line} "
            f"({ins.op}) after the launch's budget of {self.max_instructions} instructions",
            kernel=self.kernel_name, file=self.prog.file, line=ins.line, limit=self.max_instructions,
            hint="raise the limit (max_cycles=..., also the functional mode's instruction budget) "
                 "or look for a loop that never ends")

    def lane_fault(self, pc, u, coords, info) -> OutOfBoundsError:
        ins = self.prog.instrs[pc]
        if self.pc_family[pc] == "check":
            return check_error(ins, info, f"{UNIT_NAMES[u.index]} of block {coords}", kernel=self.kernel_name,
                               file=self.prog.file, block=coords, warp=u.index, unit=UNIT_NAMES[u.index], lane=None)
        offset, count = int(info[1]), int(info[2])
        target = ins.comment or "memory"
        return OutOfBoundsError(
            f"{ins.op} out of bounds on {UNIT_NAMES[u.index]} of block {coords}: accessed "
            f"{target}[{offset}] but '{target}' has {count} elements (valid 0..{count - 1})",
            kernel=self.kernel_name, file=self.prog.file, line=ins.line, block=coords,
            warp=u.index, unit=UNIT_NAMES[u.index], lane=0, offset=offset, count=count, tensor=target,
            hint="guard the index with a bounds check, or allocate more")


def run_aicore_functional(prog, encoded, grid, block, tensors, scalars, hbm, hbm_init,
                          kernel_name, tensor_names, max_instructions,
                          executor_module=None, cross_core_flag_limit=None) -> FunctionalProfile:
    """Run an AI-core launch functionally; results land in hbm. Raises the kernel's errors;
    cross_core_flag_limit is the machine's (None: the signals a flag id holds are not checked)."""
    return AICoreFunctional(prog, encoded, grid, block, tensors, scalars, hbm, hbm_init,
                            kernel_name, tensor_names, max_instructions, executor_module,
                            cross_core_flag_limit).run()
