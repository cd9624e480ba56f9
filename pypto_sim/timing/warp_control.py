"""Per-warp state of the timing model: registers, scoreboard, masks, stall causes. The
structured control flow that moves a warp's masks is value semantics and lives with the
executor (exec/control_flow.py)."""
from __future__ import annotations

import numpy as np


class WarpState:
    """Registers, scoreboard and masks of one warp."""

    def __init__(self, n_regs: int, mask: int):
        self.regs = np.zeros((max(n_regs, 1), 32), np.float64)
        self.ready = [0] * max(n_regs, 1)
        self.producer = [-1] * max(n_regs, 1)
        self.mask = mask
        self.alive = mask           # the lanes this warp has (a block's last warp may be partial)
        self.seen_tiles = 0         # tile ops dispatched before this warp's last wait_all
        self.wait_alls = 0          # blocking wait_alls passed (warp 0's k-th sets the k-th mark)
        self.exited = 0
        self.stack = []
        self.next_issue = 0
        self.store_done = 0
        # this warp's stores still in flight, oldest first: commit seq -> (space, words, values);
        # its own loads see them (program order), other warps only once they land
        self.pending_stores = {}
        self.cause = 0
        self.cause_pc = -1
        self.waiting_at = None
        self.pc = 0                 # the instruction it issues next (or waits at, or EXIT)

    def note_stall(self, cause: int, cause_pc: int):
        """Remember why the warp is waiting (the last binding constraint wins)."""
        self.cause, self.cause_pc = cause, cause_pc

    def reset_stall(self):
        self.cause, self.cause_pc = 0, -1
