"""What the debugger (debug/) reads of a launch simulation it drives with start() and step():
the current cycle, the next event, one step, the rest of the run, and the state of a warp,
an AI core's unit or a block. The debugger never touches the simulation's SimPy environment,
so SimPy stays the timing model's business (timing/model.py's LaunchSimulation, which these
methods belong to).
"""
from __future__ import annotations

import simpy

from ..exec.aicore_tiles import UNIT_NAMES


class SteppingQueries:
    """The stepping and query methods of LaunchSimulation (its env, max_cycles, warp_states,
    unfinished, blocks, translated_errors() and finish())."""

    @property
    def now(self) -> int:
        """The current simulated cycle: the time of the last event processed."""
        return int(self.env.now)

    def next_event_time(self):
        """The cycle of the next event step() would process, or None when none is queued."""
        at = self.env.peek()
        return None if at == simpy.core.Infinity else at

    def step(self) -> bool:
        """Process one SimPy event (the debugger's single step); False when none is left at
        or before the cycle limit."""
        at = self.next_event_time()
        if at is None or (self.max_cycles is not None and at > self.max_cycles):
            return False
        with self.translated_errors():
            self.env.step()
        return True

    def run_to_end(self) -> int:
        """Process the remaining events as run() does under SimPy (up to the cycle limit, with
        its marker; past it when step() stopped there) and return finish()'s total cycles."""
        if self.next_event_time() is not None or self.max_cycles is not None:
            until = self.max_cycles
            if until is not None and self.env.now >= until:
                until = self.env.now + 0.5     # stopped at the limit: end now, as run() would
            with self.translated_errors():
                self.env.run(until=until)
        return self.finish()

    def warp_state(self, block: int, warp: int):
        """The WarpState (pc, registers, mask, scoreboard, why it waits) of warp ``warp`` of
        block ``block``, or None before it starts (and after it retires unless the simulation
        keeps warp states, as the debugger's does). AI-core kernels: warp = unit index."""
        return self.warp_states.get((block, warp)) or self.unfinished.get((block, warp))

    def unit_state(self, block: int, unit: str):
        """The WarpState of an AI core's unit ("AIC", "AIV0", "AIV1") in block ``block`` (one AI
        core), or None (see warp_state)."""
        return self.warp_state(block, UNIT_NAMES.index(unit))

    def block_state(self, block: int):
        """The BlockState (L1, barriers, tile engine) of a block that has started, else None."""
        return next((b for b in self.blocks if b.id == block), None)
