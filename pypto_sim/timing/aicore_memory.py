"""The memory side of AI-core kernels: per-unit GM links, the launch's L2 and its chip link,
HBM's chip link (shared with the lane model), and the launch's L2 and bandwidth statistics."""
from __future__ import annotations

import math

import numpy as np

N_UNITS = 3


class AICoreStats:
    """Per launch: L2 hits and misses, and the cycles transfers lost to shared bandwidth (L2,
    HBM) beyond their own path's, by route."""

    def __init__(self):
        self.l2_hits = self.l2_misses = 0
        self.route_wait: dict = {}

    def add_route(self, route, extra):
        if extra > 0:
            self.route_wait[route] = self.route_wait.get(route, 0) + int(extra)


class AICoreMemory:
    """The launch's memory side of the AI cores: per-unit GM links (read and write per core
    and unit), the launch's L2 and its chip link, HBM's chip link (the lane model's)."""

    def __init__(self, sim):
        m = sim.m
        self.m = m
        self.l2 = sim.l2
        n = 2 * N_UNITS * m.cores
        ex = sim.links
        sim.ak_s = np.zeros((n, ex.LINK_INTERVALS), np.float64)
        sim.ak_e = np.zeros((n, ex.LINK_INTERVALS), np.float64)
        sim.ak_n = np.zeros(n, np.int64)

    @staticmethod
    def unit_link(core, unit, read):
        return 2 * (core * N_UNITS + unit) + (0 if read else 1)

    def lookup(self, sim, gm, read):
        """(latency saved, fraction of the bytes that hit) of a GM transfer."""
        if self.l2 is None:
            return 0, 0.0
        slot, off, rows, cols, stride, _w, itemsize = gm
        hits, misses = self.l2.access_window(int(sim.tbase[slot]), off, rows, cols, stride, itemsize)
        sim.aicore_stats.l2_hits += hits
        sim.aicore_stats.l2_misses += misses
        saving = self.m.l2_miss_extra_latency if (misses == 0 and read) else 0
        return saving, (hits / max(hits + misses, 1) if read else 0.0)

    def book(self, sim, nbytes, start, write, hit_fraction=0.0):
        """Cycles the shared links (the L2's chip link; HBM's for the missed bytes and all
        written bytes) need for a transfer from cycle start."""
        now = np.float64(sim.env.now)
        s = np.float64(start)
        done = s
        book = sim.links.link_book
        if self.l2 is not None:
            done = max(done, book(sim.l2_s, sim.l2_e, sim.l2_n, 0, s,
                                  nbytes / self.m.l2_chip_bytes_per_cycle, now))
        hbm_bytes = nbytes if write else nbytes * (1.0 - hit_fraction)
        if hbm_bytes > 0:
            done = max(done, book(sim.lk_s, sim.lk_e, sim.lk_n, 0, s,
                                  hbm_bytes / self.m.hbm_chip_bytes_per_cycle, now))
        return int(math.ceil(done - s - 1e-9))
