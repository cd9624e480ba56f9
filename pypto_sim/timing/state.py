"""The state the SimPy model keeps per resident block and per core: a block's L1, barrier
counters and the marks that let every warp's wait_all() wait for warp 0's tile operations;
a core's issue-port and pipe bookings. timing/model.py drives them."""
from __future__ import annotations

import numpy as np

from ..isa import PIPES
from .records import CAUSE
from .tiles import TileEngine


class BlockState:
    """A block resident on a core: its L1 area and its block-barrier counter."""

    def __init__(self, env, block_id, coords, core, n_warps, local_words):
        self.id = block_id
        self.coords = coords
        self.core = core
        self.l1 = np.zeros(max(local_words, 1), np.float64)
        self.live = n_warps
        self.arrived = 0
        self.release = env.event()
        self.waiting = []
        self.tiles = TileEngine()
        self.epoch = 0          # block barriers released so far (racecheck's ordering)
        self.tile_seq = 0       # tile operations dispatched so far
        self.shadow = None
        # wait_all across warps: warp 0's k-th blocking wait_all -> (done, tile ops covered)
        self.env = env
        self.wait_marks = []
        self.mark_event = env.event()
        self.warp0_gone = False
        self.vote_count = self.vote_lanes = 0   # voting barriers: lanes with pred, lanes
        self.vote_result = (0, 0)               # ... as of the last release
        self.barrier_seen = 0   # the most tile ops any arrived warp had waited for
        self.released_seen = 0  # ... when the last block barrier released
        self.aicore = None      # an AI-core kernel's units (timing/aicore.py AICoreState)
        self.unit_ports = None  # ... and their scalar units' issue bookings

    def add_wait_mark(self, after):
        """Warp 0 reached a blocking wait_all (of the pipeline stages in the bit mask after,
        or 0: every tile op): record what it waits for, wake the warps that got there first."""
        done = self.tiles.after_time(after)[0] if after else self.tiles.done
        self.wait_marks.append((done, self.tile_seq))
        self._wake()
        return self.wait_marks[-1]

    def has_wait_mark(self, k) -> bool:
        return k < len(self.wait_marks) or self.warp0_gone

    def wait_mark(self, k):
        if k < len(self.wait_marks):
            return self.wait_marks[k]
        return self.tiles.done, self.tile_seq       # warp 0 retired: everything it issued

    def warp0_retired(self):
        self.warp0_gone = True
        self._wake()

    def _wake(self):
        event, self.mark_event = self.mark_event, self.env.event()
        event.succeed()


class CoreState:
    """Per-core timing state: the issue port's and the pipes' booked cycles and the tile
    operations' pipe occupancy (its HBM links live in LaunchSimulation.lk_*)."""

    def __init__(self, index):
        self.index = index
        self.pipe_free = [0] * len(PIPES)          # tile ops: in-order high-water per pipe
        self.tile_spans = [[] for _ in PIPES]      # tile ops: (start, end) held per pipe
        self.port = {}                             # cycle -> warp-instructions issued then
        self.busy = [set() for _ in PIPES]         # lane instructions: booked pipe cycles
        self.unit_ports = None     # an AI core's units' issue bookings, kept from block to block

    def book(self, t, pipe, interval, width, now):
        """Reserve the first cycle c >= t with a free issue slot and, when pipe >= 0, the pipe
        free for [c, c + interval). Returns (c, the stall cause that moved it past t or 0)."""
        if len(self.port) > 4096:               # forget the past
            self.port = {c: k for c, k in self.port.items() if c >= now}
            for i, cycles in enumerate(self.busy):
                self.busy[i] = {c for c in cycles if c >= now}
            self.tile_spans = [[s for s in spans if s[1] > now] for spans in self.tile_spans]
        port, c, why = self.port, t, 0
        busy = self.busy[pipe] if pipe >= 0 else None
        spans = self.tile_spans[pipe] if pipe >= 0 else ()
        while True:
            if port.get(c, 0) >= width:
                c, why = c + 1, CAUSE["issue"]
                continue
            if busy is not None:
                if c in busy or (interval > 1 and any(c + k in busy for k in range(1, interval))):
                    c, why = c + 1, CAUSE["pipe"]
                    continue
                held = next((e for s, e in spans if s <= c < e), None)
                if held is not None:
                    c, why = held, CAUSE["pipe"]
                    continue
            break
        port[c] = port.get(c, 0) + 1
        if busy is not None:
            busy.update(range(c, c + interval))
        return c, why
