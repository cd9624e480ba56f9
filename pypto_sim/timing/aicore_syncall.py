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
that ends without arriving leaves the others waiting: the launch's deadlock error names them;
a 'mix' barrier in a kernel with no cube code, or no vector code, is refused at launch
(check_mix_sides).
"""
from __future__ import annotations

import numpy as np

from ..errors import DeadlockError, LaunchError
from ..exec import gm
from ..exec.syncall_rounds import SoftCounters, SyncallRounds, participant_counts
from ..isa.syncall_modes import HOPS, KIND_MIX


class GridBarrier(SyncallRounds):
    """The launch's SYNCALL rounds (exec/syncall_rounds.py) with the hops' cycles, and a SimPy
    event that fires when a round completes."""

    def __init__(self, sim):
        hop = sim.m.latency("CROSS_CORE_SET_FLAG") + sim.m.latency("CROSS_CORE_WAIT_FLAG")
        super().__init__(participant_counts(sim.prog.unit_entry, sim.grid), [h * hop for h in HOPS])
        self.env = sim.env
        self.event = sim.env.event()
        # soft mode: the counters in GM, and an event that fires as each add lands
        self.soft = SoftCounters(sim.hbm, sim.tbase, self.participants)
        self.soft_event = sim.env.event()

    def arrive(self, kind: int, cycle: int = 0, who=(-1, -1, -1)) -> int:
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


def check_mix_sides(program, kernel_name):
    """pto.syncall('mix') is SyncAll.hpp's Mix path: each AIV signals its AIC (flag 12) and
    waits for the AIC's signal (13), and the AIC waits for its AIVs' (12). A kernel whose AIC,
    or whose every AIV, has no program leaves the other side waiting forever (on the device, a
    hang), so it is refused before anything runs."""
    mix = next((ins for ins in program.instrs if ins.op == "SYNCALL" and ins.aux[0] == KIND_MIX), None)
    if mix is None:
        return
    entry = program.unit_entry
    if entry[0] >= 0 and any(pc >= 0 for pc in entry[1:]):
        return
    has, lacks, waits = (("vector", "cube", "AIC's signal on flag 13") if entry[0] < 0
                         else ("cube", "vector", "AIVs' signal on flag 12"))
    raise DeadlockError(
        f"kernel '{kernel_name}' calls pto.syncall('mix') at line {mix.line} but has only {has} code: "
        f"SyncAll.hpp's Mix path waits for the {waits}, which no {lacks} code sends (on the device, a hang)",
        kernel=kernel_name, file=program.file, line=mix.line,
        hint=f"call pto.syncall('mix') in both cube and vector code, or use core_type="
             f"'{'aiv' if has == 'vector' else 'aic'}' for a barrier of the {has} units only")


def land_soft_add(sim, address):
    """A soft SYNCALL's st_atomic lands: the counter grows (initcheck: written) and its pollers
    look again."""
    grid = sim.grid_barrier
    grid.soft.add(address)
    if sim.hbm_init is not None:
        gm.init_mark(sim.hbm_init, np.arange(address, address + 4))
    event, grid.soft_event = grid.soft_event, sim.env.event()
    event.succeed()
