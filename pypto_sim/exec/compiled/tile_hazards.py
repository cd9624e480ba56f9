"""sync="auto"'s data ordering on the AI core (PTO-Auto's, as Perf-Sim's TileDepTracker): each
block's units keep, per memory array and tile range, when the last write and the reads in
flight on it complete (hz_* arrays of timing/aicore_pipes.py; the ranges and their overlaps ov
from timing/aicore_tables.py). A tile operation starts after the writes of the ranges it reads
and the reads and writes of the ranges it writes (tile_dispatch in aicore_steps.py), and so
does the scalar unit's access of a tile's word (scalar_hazard)."""
import numpy as np
from numba import njit

from .jit_options import NO_REFCOUNT

CA_TILE_RAW = 8     # records.py's causes of a hazard's wait
CA_TILE_WAR = 9


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _hazard(p, e, reads, nr, writes, nw, ov, hz_n, hz_ord, hz_wd, hz_rd, hz_wpc, hz_rpc, out):
    """TileEngine.ready_time: out = (earliest start, cause, the pc waited for)."""
    t = np.int64(0)
    kind = 0
    pc = np.int64(-1)
    n = hz_n[p, e]
    for i in range(nr):
        q = reads[i]
        for k in range(n):
            r = hz_ord[p, e, k]
            if ov[q, r] and hz_wd[p, e, r] > t:
                t = hz_wd[p, e, r]
                kind = CA_TILE_RAW
                pc = hz_wpc[p, e, r]
    for i in range(nw):
        q = writes[i]
        for k in range(n):
            r = hz_ord[p, e, k]
            if ov[q, r]:
                if hz_wd[p, e, r] > t:
                    t = hz_wd[p, e, r]
                    kind = CA_TILE_RAW
                    pc = hz_wpc[p, e, r]
                if hz_rd[p, e, r] > t:
                    t = hz_rd[p, e, r]
                    kind = CA_TILE_WAR
                    pc = hz_rpc[p, e, r]
    out[0] = t
    out[1] = kind
    out[2] = pc


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def scalar_hazard(p, w, one, is_write, ov, hz_n, hz_ord, hz_wd, hz_rd, hz_wpc, hz_rpc, out):
    """sync="auto": unit w's scalar access (SLD_UB / SST_UB) of the tile range one[0] waits as a
    tile operation would: a read for the writes in flight, a write for the reads and writes. out =
    (earliest cycle, cause, the pc waited for), as _hazard's."""
    _hazard(p, 1 if w == 2 else 0, one, 0 if is_write else 1, one, 1 if is_write else 0, ov, hz_n, hz_ord,
            hz_wd, hz_rd, hz_wpc, hz_rpc, out)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _hazard_record(p, e, reads, nr, writes, nw, complete, pc, hz_n, hz_ord, hz_has, hz_wd,
                   hz_rd, hz_wpc, hz_rpc):
    """TileEngine.record: the ranges read and written are busy until complete."""
    for i in range(nr + nw):
        r = reads[i] if i < nr else writes[i - nr]
        if hz_has[p, e, r] == 0:
            hz_has[p, e, r] = 1
            hz_ord[p, e, hz_n[p, e]] = r
            hz_n[p, e] += 1
            hz_wd[p, e, r] = 0
            hz_rd[p, e, r] = 0
            hz_wpc[p, e, r] = -1
            hz_rpc[p, e, r] = -1
        if i < nr:
            if complete >= hz_rd[p, e, r]:
                hz_rd[p, e, r] = complete
                hz_rpc[p, e, r] = pc
        elif complete >= hz_wd[p, e, r]:
            hz_wd[p, e, r] = complete
            hz_wpc[p, e, r] = pc
