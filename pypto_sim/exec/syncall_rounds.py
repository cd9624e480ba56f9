"""SYNCALL's rounds, as the functional executor, the SimPy model and the compiled event loop count
them: by one step, exec/compiled/aicore_sync.py syncall_arrive, over this class's arrays
(isa/syncall_modes.py has the kinds and hops; timing/aicore_syncall.py adds the SimPy model's
event; timing/aicore_fast.py hands the compiled loop this class's arrays and reads its rounds
back for the bubbles report).

The participants of a kind are every unit of the kind that has a program, in every block of
the launch. Each arrival joins the kind's open round; when the last participant arrives the
round completes with its release cycle (the latest arrival plus hop_cycles of the kind), and
the next arrival opens the next round. The last arrival of each round is kept, for the
bubbles report (the cause of every other participant's wait).
"""
from __future__ import annotations

import numpy as np

from ..errors import LaunchError
from ..ir.program import C_AUX, UNIT_NAMES
from ..isa.syncall_modes import KINDS, participates
from . import gm
from .aicore_tiles import value_operands
from .compiled.aicore_sync import (N_SA, N_SL, SA_DONE, SA_HOP, SA_PARTS, SA_RELEASE, SA_WHO_B,
                                   syncall_arrive)


def participant_counts(unit_entry, grid) -> list:
    """Participants of each SYNCALL kind in a launch of grid blocks whose units start at
    unit_entry (-1: the unit has no program)."""
    blocks = grid[0] * grid[1] * grid[2]
    running = [u for u, pc in enumerate(unit_entry) if pc >= 0]
    return [blocks * sum(participates(k, u) for u in running) for k in range(len(KINDS))]


class SyncallRounds:
    """The launch's SYNCALL rounds by kind, in the arrays the compiled loop's step counts them in
    (sa: each kind's participants, hop cycles, open round and last release; sl: each completed
    round's last arrival, in completion order), with the release cycle of every completed round.
    arrive() runs that step (exec/compiled/aicore_sync.py syncall_arrive), so the SimPy model,
    the functional executor and the compiled loop count rounds by one rule."""

    def __init__(self, participants, hop_cycles=(0,) * len(KINDS)):
        self.participants = list(participants)
        self.hop_cycles = list(hop_cycles)
        self.sa = np.zeros((len(KINDS), N_SA), np.int64)
        self.sa[:, SA_PARTS] = self.participants
        self.sa[:, SA_HOP] = self.hop_cycles
        self.sa[:, SA_WHO_B] = -1
        self.sl = np.zeros((16, N_SL), np.int64)
        self.completed = 0                          # rows of sl
        self.releases: list = [[] for _ in KINDS]

    def arrive(self, kind: int, cycle: int = 0, who=(-1, -1, -1)) -> int:
        """Participant who ((block id, unit, pc); the functional executor's: nobody) arrives at
        cycle; returns the round it belongs to."""
        if self.completed == len(self.sl):
            self.sl = np.concatenate([self.sl, np.zeros_like(self.sl)])
        rnd = int(syncall_arrive(self.sa, self.sl, self.completed, kind, cycle, *who))
        if self.sa[kind, SA_DONE] > len(self.releases[kind]):
            self.releases[kind].append(int(self.sa[kind, SA_RELEASE]))
            self.completed += 1
        return rnd

    def logged(self, completed: int):
        """Take the rounds the compiled loop completed in sl's first `completed` rows."""
        self.completed = completed
        for kind, _block, _unit, _pc, cycle in self.sl[:completed].tolist():
            self.releases[kind].append(cycle + self.hop_cycles[kind])

    @property
    def last_arrivals(self) -> list:
        """Per kind, each completed round's last arrival: ((block id, unit, pc), cycle)."""
        out: list = [[] for _ in KINDS]
        for kind, block, unit, pc, cycle in self.sl[:self.completed].tolist():
            out[kind].append(((block, unit, pc), cycle))
        return out

    def release(self, kind: int, rnd: int):
        """The cycle round rnd of kind lets its participants go on (None: still open)."""
        done = self.releases[kind]
        return done[rnd] if rnd < len(done) else None


class SoftCounters:
    """Soft SYNCALL's counters in GM (isa/syncall_modes.py soft_target): each is the int32 at its
    workspace's first element, read and added to in the launch's HBM bytes (hbm) as the units'
    ld_dev and st_atomic do; participants is the launch's count of each kind (the default of
    used_cores = 0)."""

    def __init__(self, hbm, tbase, participants):
        self.hbm, self.tbase, self.participants = hbm, tbase, list(participants)

    def operands(self, enc, pc, regs) -> tuple:
        """(kind, counter byte address, participant count) of SYNCALL_SOFT pc on a unit with regs."""
        offset, used = (int(v) for v in value_operands(enc, pc, regs, 2))
        kind, slot = int(enc.code[pc, C_AUX]), int(enc.code[pc, C_AUX + 1])
        return kind, int(self.tbase[slot]) + 4 * offset, used if used else self.participants[kind]

    def value(self, address: int) -> int:
        """The counter's value now."""
        return gm.int32_at(self.hbm, address)

    def add(self, address: int):
        """st_atomic's add of 1, wrapping as int32."""
        gm.add_int32(self.hbm, address, 1)


def check_soft_count(ctx, pc, unit, coords, total):
    """A soft SYNCALL's participant count must be positive (syncall_soft.hpp divides by it)."""
    if total < 1:
        ins = ctx.prog.instrs[pc]
        raise LaunchError(
            f"pto.syncall at line {ins.line} on {UNIT_NAMES[unit]} of block {coords}: used_cores is {total}, "
            "but the soft barrier needs a positive count of participants (syncall_soft.hpp divides the counter "
            "by it)", kernel=ctx.kernel_name, file=ctx.prog.file, line=ins.line,
            hint="pass used_cores=0 for every unit of core_type, or the number of units that call it")
