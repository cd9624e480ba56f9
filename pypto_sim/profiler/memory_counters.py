"""Memory traffic of an AI-core launch over time: GM, L2 and HBM bytes per cycle, bucketed,
from the records (the trace's counter tracks).

A transfer (READS, GM -> L1/UB: TLOAD, TPREFETCH; WRITES, to GM: TSTORE, TSTORE_ACC, TSTORE_FP) first pays its
fixed latency (the machine table's, less the L2's miss extra when a load found every line in
the L2: records.why_fields' ``missed`` is 0) and then moves its bytes until it completes
(exec/compiled/aicore_steps.py's tile_dispatch: complete = start + fixed - saving + busy).
Its bytes are spread evenly over that moving window ``[moving_from, complete)``.

- GM: every transfer's bytes, per core, reads and writes.
- L2 (machines with an L2): every byte of every transfer crosses the L2's chip link, so the
  L2's traffic is the chip's GM traffic, reads and writes.
- HBM: a load or store crosses HBM's link with the lines it missed in the L2, each whole
  (write-allocate, write-back: docs/timing.md, "L2"; the record's ``why``:
  records.why_hbm_read_bytes), over the same window; without an L2, HBM's traffic is GM's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..isa import load_isa
from ..timing.records import why_fields, why_hbm_read_bytes

# the tile transfers that read GM, and those that write it: the ISA table's tile_load family
# (TLOAD, TPREFETCH) and tile_store family (TSTORE, TSTORE_ACC, TSTORE_FP)
READS, WRITES = (tuple(sorted(s.name for s in load_isa().specs if s.family == family))
                 for family in ("tile_load", "tile_store"))
MAX_BUCKETS = 512


def moving_start(start, latency, is_load, missed, miss_extra):
    """When a transfer starts moving its bytes: its start plus its fixed latency, less the
    L2's miss extra when it is a load that hit every line (ints or arrays alike)."""
    return start + latency - np.where(is_load & (missed == 0), miss_extra, 0)


def moving_from(prof, idx) -> np.ndarray:
    """The cycle at which each transfer record of ``idx`` starts moving its bytes: its start
    plus its fixed latency, less the L2's miss extra when a load hit every line (int64)."""
    rec = prof.records
    lat = np.array([prof.pc_latency(pc) for pc in range(len(prof.pc_name))], np.int64)
    pc = rec.pc[idx].astype(np.int64)
    m = prof.machine
    miss_extra = int(m.l2_miss_extra_latency) if m.has_l2 else 0
    is_load = np.isin(np.asarray(prof.pc_name, object)[pc], READS)
    _cause, missed, _shared = why_fields(rec.why[idx].astype(np.int64))
    return moving_start(rec.issue[idx].astype(np.int64), lat[pc], is_load, missed, miss_extra)


@dataclass
class Counter:
    """One counter track: ``name`` (e.g. "GM bytes/cycle"), the process it belongs to (a core,
    or None for the chip), and per series (``read``, ``write``) the bytes per cycle of each
    bucket of ``width`` cycles starting at ``starts``."""

    name: str
    core: int | None
    starts: np.ndarray
    width: int
    series: dict

    def bytes(self, series) -> float:
        """The bytes the counter shows for one series in all: rate times width, summed."""
        return float(np.sum(self.series[series]) * self.width)


def _bucketed(s, e, nbytes, edges) -> np.ndarray:
    """Bytes of transfers [s, e) (each spread evenly) falling in each bucket between edges:
    the cumulative bytes F(t) = t * R(t) - M(t), R the sum of the rates of the transfers
    started minus those ended by t, M the same weighted by their start / end times."""
    if not len(s):
        return np.zeros(len(edges) - 1)
    rate = nbytes / (e - s)
    times = np.concatenate([s, e]).astype(np.float64)
    slope = np.concatenate([rate, -rate])
    order = np.argsort(times, kind="stable")
    times, slope = times[order], slope[order]
    r = np.concatenate([[0.0], np.cumsum(slope)])
    mt = np.concatenate([[0.0], np.cumsum(slope * times)])
    k = np.searchsorted(times, edges, side="right")
    cumulative = edges * r[k] - mt[k]
    return np.diff(cumulative)


def memory_counters(prof, bucket_cycles=None) -> list:
    """The Counter tracks of an AI-core launch (see the module docstring): per core "GM
    bytes/cycle"; for the chip "L2 bytes/cycle" (machines with an L2) and "HBM bytes/cycle".
    ``bucket_cycles``: the bucket width (default: the kernel's cycles in at most 512 buckets).
    [] when nothing moved."""
    rec = prof.records
    if not len(rec):
        return []
    names = np.asarray(prof.pc_name, object)[rec.pc.astype(np.int64)]
    read, write = np.isin(names, READS), np.isin(names, WRITES)
    idx = np.nonzero((read | write) & (rec.bytes > 0))[0]
    if not len(idx):
        return []
    total = max(int(prof.total_cycles), int(rec.complete.max()), 1)
    width = int(bucket_cycles) if bucket_cycles else -(-total // MAX_BUCKETS)
    if width < 1:
        raise ValueError(f"bucket_cycles must be a positive number of cycles, not {bucket_cycles!r}")
    edges = np.arange(0, total + width, width, dtype=np.int64)
    e = rec.complete[idx].astype(np.int64)
    s = np.minimum(np.maximum(moving_from(prof, idx), rec.issue[idx].astype(np.int64)), e - 1)
    nbytes = rec.bytes[idx].astype(np.float64)
    core = rec.core[idx].astype(np.int64)
    is_read = read[idx]
    starts = edges[:-1]

    def rates(sel):
        return _bucketed(s[sel], e[sel], nbytes[sel], edges.astype(np.float64)) / width

    out = []
    for c in np.unique(core).tolist():
        on = core == c
        out.append(Counter("GM bytes/cycle", c, starts, width,
                           {"read": rates(on & is_read), "write": rates(on & ~is_read)}))
    chip = {"read": rates(is_read), "write": rates(~is_read)}
    if prof.machine.has_l2:
        out.append(Counter("L2 bytes/cycle", None, starts, width, dict(chip)))
        missed = why_hbm_read_bytes(rec.why[idx].astype(np.int64)).astype(np.float64)
        hbm = {side: _bucketed(s[sel], e[sel], missed[sel], edges.astype(np.float64)) / width
               for side, sel in (("read", is_read), ("write", ~is_read))}
        out.append(Counter("HBM bytes/cycle", None, starts, width, hbm))
    else:
        out.append(Counter("HBM bytes/cycle", None, starts, width, dict(chip)))
    return out
