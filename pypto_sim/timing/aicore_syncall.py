"""SYNCALL in the SimPy model: the launch's barrier of every participating unit (rules:
isa/syncall_modes.py, after pto-isa's A2/A3 SyncAll.hpp).

A unit reaching SYNCALL first holds its scalar unit until all its pipes have drained (the
header's pipe_barrier(PIPE_ALL)); that cycle is its arrival. When the launch's last participant
of the SYNCALL's kind has arrived, the round is complete, and every participant goes on at the
latest arrival plus the header's hops, each a cross-core set and a wait (the machine's
CROSS_CORE_SET_FLAG and CROSS_CORE_WAIT_FLAG latencies): one hop for 'aiv' and 'aic', three for
'mix'. Rounds of one kind follow each other: a unit that arrives again joins the next round.

The participants are every unit of the kind with a program, in every block of the launch: all
blocks must be on AI cores at once, which the launch checks (check_fits_machine). A participant
that ends without arriving leaves the others waiting: the launch's deadlock error names them.
"""
from __future__ import annotations

from ..errors import LaunchError
from ..exec.syncall_rounds import SyncallRounds, participant_counts
from ..isa.syncall_modes import HOPS


class GridBarrier(SyncallRounds):
    """The launch's SYNCALL rounds (exec/syncall_rounds.py) with the hops' cycles, and a SimPy
    event that fires when a round completes."""

    def __init__(self, sim):
        hop = sim.m.latency("CROSS_CORE_SET_FLAG") + sim.m.latency("CROSS_CORE_WAIT_FLAG")
        super().__init__(participant_counts(sim.prog.unit_entry, sim.grid), [h * hop for h in HOPS])
        self.env = sim.env
        self.event = sim.env.event()

    def arrive(self, kind: int, cycle: int = 0, who=None) -> int:
        """A participant arrives at cycle; returns its round (the event fires if it completes it)."""
        rnd = super().arrive(kind, cycle, who)
        if self.release(kind, rnd) is not None:
            event, self.event = self.event, self.env.event()
            event.succeed()
        return rnd


def uses_syncall(program) -> bool:
    """Whether the program has a SYNCALL."""
    return any(ins.op == "SYNCALL" for ins in program.instrs)


def check_fits_machine(program, grid, machine, kernel_name):
    """A launch with a SYNCALL needs every block on an AI core at once: a block waiting for a
    core that a block at the barrier holds would wait forever (on hardware, a hang)."""
    blocks = grid[0] * grid[1] * grid[2]
    if blocks <= machine.cores or not uses_syncall(program):
        return
    line = next(ins.line for ins in program.instrs if ins.op == "SYNCALL")
    aivs = sum(pc >= 0 for pc in program.unit_entry[1:])
    per_core = (f"; a block is one AI core, here with {aivs} AIV{'s' * (aivs > 1)} running: grid=({machine.cores},) "
                f"runs {aivs * machine.cores} AIVs, as a CCE launch of {aivs * machine.cores} AIV blocks does"
                ) if aivs else ""
    raise LaunchError(
        f"kernel '{kernel_name}' synchronises every AI core of its launch (pto.syncall at line {line}) but is "
        f"launched on {blocks} blocks and machine '{machine.name}' has {machine.cores} AI cores: the blocks "
        f"past the first {machine.cores} would wait for a core that the ones at the barrier never free",
        kernel=kernel_name, file=program.file, line=line,
        hint=f"launch at most {machine.cores} blocks (grid=({machine.cores},)) and loop over the work inside "
             "the kernel, as pto-isa's SYNCALL kernels take the core count at run time" + per_core)
