"""SYNCALL's rounds, as both the functional executor and the SimPy model count them
(isa/syncall_modes.py; timing/aicore_syncall.py adds the cycles' rule).

The participants of a kind are every unit of the kind that has a program, in every block of
the launch. Each arrival joins the kind's open round; when the last participant arrives the
round completes with its release cycle (the latest arrival plus hop_cycles of the kind), and
the next arrival opens the next round. The last arrival of each round is kept, for the
bubbles report (the cause of every other participant's wait).
"""
from __future__ import annotations

from ..isa.syncall_modes import KINDS, participates


def participant_counts(unit_entry, grid) -> list:
    """Participants of each SYNCALL kind in a launch of grid blocks whose units start at
    unit_entry (-1: the unit has no program)."""
    blocks = grid[0] * grid[1] * grid[2]
    running = [u for u, pc in enumerate(unit_entry) if pc >= 0]
    return [blocks * sum(participates(k, u) for u in running) for k in range(len(KINDS))]


class SyncallRounds:
    """The launch's SYNCALL rounds by kind: arrivals of the open round, its latest arrival, and
    the release cycle of each completed round."""

    def __init__(self, participants, hop_cycles=(0,) * len(KINDS)):
        self.participants = list(participants)
        self.hop_cycles = list(hop_cycles)
        self.arrived = [0] * len(KINDS)
        self.latest = [0] * len(KINDS)
        self.releases: list = [[] for _ in KINDS]
        self.latest_who = [None] * len(KINDS)
        self.last_arrivals: list = [[] for _ in KINDS]     # per completed round: (who, cycle)

    def arrive(self, kind: int, cycle: int = 0, who=None) -> int:
        """Participant who (the caller's name for it) arrives at cycle; returns the round it
        belongs to."""
        rnd = len(self.releases[kind])
        self.arrived[kind] += 1
        if self.latest_who[kind] is None or cycle > self.latest[kind]:
            self.latest[kind], self.latest_who[kind] = cycle, who
        if self.arrived[kind] == self.participants[kind]:
            self.releases[kind].append(self.latest[kind] + self.hop_cycles[kind])
            self.last_arrivals[kind].append((self.latest_who[kind], self.latest[kind]))
            self.arrived[kind] = self.latest[kind] = 0
            self.latest_who[kind] = None
        return rnd

    def release(self, kind: int, rnd: int):
        """The cycle round rnd of kind lets its participants go on (None: still open)."""
        done = self.releases[kind]
        return done[rnd] if rnd < len(done) else None
