"""The AI core's synchronisation steps over the arrays of timing/aicore_pipes.py: set_flag and
wait_flag between a unit's pipes, pipe_barrier, and the cross-core signals between an AI core's
units (cross_set_step, cross_ready, cross_take), and SYNCALL's rounds across the launch
(syncall_arrive: the compiled loop's; the SimPy model counts them in exec/syncall_rounds.py by
the same rule). Both drivers call the others - the compiled loop
(aicore_engine.py) and the SimPy model (timing/aicore.py) - so each rule is written once.
They call aicore_steps.py's unit_drained.
"""
import numpy as np
from numba import njit

from .isa_constants import PIPE_SCALAR
from .jit_options import NO_REFCOUNT
from .aicore_steps import HOLD_BARRIER, HOLD_FLAG, unit_drained

@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def cross_pairs(w, to, aivs):
    """Whether a cross-core flag of unit w signals unit `to` (and a wait of `to` takes one from
    w): the AIC and each of the first `aivs` AIVs (FFTS mode 2; aivs 1 in a 1:1 kernel)."""
    if w == 0:
        return 1 <= to <= aivs
    return to == 0 and w <= aivs


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def cross_ready(cn, p, w, event, aivs):
    """cross_core_ready: unit w's cross_core_wait_flag(event) has a signal from each source."""
    for s in range(aivs + 1):
        if cross_pairs(s, w, aivs) and cn[p, w, event, s] <= 0:
            return False
    return True


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def cross_take(cb, chd, cn, p, w, event, aivs):
    """cross_core_take: consume the signals; when the last of them fired."""
    cap = cb.shape[4]
    fire = np.int64(0)
    for s in range(aivs + 1):
        if cross_pairs(s, w, aivs):
            t = cb[p, w, event, s, chd[p, w, event, s]]
            chd[p, w, event, s] = (chd[p, w, event, s] + 1) % cap
            cn[p, w, event, s] -= 1
            if t > fire:
                fire = t
    return fire


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def set_flag_step(pf, pd, tl, fl, fh, fb, fhd, fn, g, src, dst, ev, now):
    """SET_FLAG(src, dst, ev) of unit g at issue: the flag fires when src has finished what
    was queued before it (its pending tail paid) and no earlier than a wait on src allows;
    for src PIPE_S at its issue (the in-order scalar unit has done its earlier work by then).
    False, changing nothing, when the flag's queue is full (the caller grows it)."""
    cap = fb.shape[4]
    if fn[g, src, dst, ev] >= cap:
        return False
    fire = now
    drained = unit_drained(pf, pd, tl, fl, g, src)
    if drained > fire:
        fire = drained
    for kind in range(2):
        if fh[g, kind, src] > fire:
            fire = fh[g, kind, src]
    fb[g, src, dst, ev, (fhd[g, src, dst, ev] + fn[g, src, dst, ev]) % cap] = fire
    fn[g, src, dst, ev] += 1
    return True


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def flag_release(fb, fhd, fn, g, src, dst, ev):
    """WAIT_FLAG(src, dst, ev) of unit g before issue: the cycle it lets the scalar unit go on,
    -1 when it does not hold it. A wait on PIPE_S blocks the scalar pipe, and so every later
    instruction of the unit (the scalar unit issues them all), until the oldest pending set_flag
    fires: pto-isa's V -> S and MTE3 -> S handshakes before scalar accesses to UB rely on it
    (textract_common.hpp TExtractVecToVecNDScalar, tinsert_common.hpp, MGATHER.md). A wait on
    another pipe holds that pipe's queue only (wait_flag_step); with no set_flag pending the
    wait's issue reports the error."""
    if dst != PIPE_SCALAR or fn[g, src, dst, ev] == 0:
        return np.int64(-1)
    return fb[g, src, dst, ev, fhd[g, src, dst, ev]]


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def wait_flag_step(fh, fb, fhd, fn, g, src, dst, ev):
    """WAIT_FLAG(src, dst, ev) of unit g at issue: takes the oldest set_flag and holds dst's
    later operations until it fires (a wait on PIPE_S has held the scalar unit until then
    before its issue: flag_release). False, changing nothing, when no set_flag is pending."""
    if fn[g, src, dst, ev] == 0:
        return False
    cap = fb.shape[4]
    fire = fb[g, src, dst, ev, fhd[g, src, dst, ev]]
    fhd[g, src, dst, ev] = (fhd[g, src, dst, ev] + 1) % cap
    fn[g, src, dst, ev] -= 1
    if fire > fh[g, HOLD_FLAG, dst]:
        fh[g, HOLD_FLAG, dst] = fire
    return True


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def barrier_step(pf, pd, tl, fl, fh, g, pipe, now):
    """PIPE_BARRIER(pipe) of unit g before issue: later operations on pipe (every pipe for -1)
    start after the earlier ones on it (on every pipe) completed. Returns when the scalar
    unit may go on: now for one pipe, and for every pipe when they have all drained."""
    if pipe < 0:
        done = unit_drained(pf, pd, tl, fl, g, -1)
        for q in range(fh.shape[2]):
            if done > fh[g, HOLD_BARRIER, q]:
                fh[g, HOLD_BARRIER, q] = done
        if now > done:
            done = now
        return done
    drained = unit_drained(pf, pd, tl, fl, g, pipe)
    if drained > fh[g, HOLD_BARRIER, pipe]:
        fh[g, HOLD_BARRIER, pipe] = drained
    return now


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def cross_full(cn, p, w, ev, limit, aivs):
    """Whether CROSS_CORE_SET_FLAG(ev) of unit w would leave more than `limit` signals of ev
    untaken at a target (the SimPy model then reports it)."""
    for to in range(aivs + 1):
        if cross_pairs(w, to, aivs) and cn[p, to, ev, w] >= limit:
            return True
    return False


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def cross_set_step(pf, pd, tl, fl, cb, chd, cn, g, p, w, ev, pipe, now, aivs):
    """CROSS_CORE_SET_FLAG(ev, pipe) of unit w (global unit g) of the block on slot p: fires
    when the unit's queued operations on pipe (every pipe for -1) are done; from the AIC to
    its AIVs (cross_pairs), from an AIV to the AIC. False, changing nothing, when a target's
    queue is full. (The caller then signals the block's cross-core event.)"""
    cap = cb.shape[4]
    for to in range(aivs + 1):
        if cross_pairs(w, to, aivs) and cn[p, to, ev, w] >= cap:
            return False
    fire = unit_drained(pf, pd, tl, fl, g, pipe)
    if now > fire:
        fire = now
    for to in range(aivs + 1):
        if cross_pairs(w, to, aivs):
            cb[p, to, ev, w, (chd[p, to, ev, w] + cn[p, to, ev, w]) % cap] = fire
            cn[p, to, ev, w] += 1
    return True


# sa[kind, :]: a SYNCALL kind's rounds in the compiled loop (exec/syncall_rounds.py SyncallRounds)
SA_PARTS = 0        # the launch's participants of the kind
SA_HOP = 1          # the release's cycles after the latest arrival (the kind's hops)
SA_ARRIVED = 2      # arrivals in the open round, the latest of them and who it was (block id, unit,
SA_LATEST = 3       # pc; block id -1: nobody yet)
SA_WHO_B = 4
SA_WHO_U = 5
SA_WHO_PC = 6
SA_DONE = 7         # rounds completed, and the release cycle of the last of them
SA_RELEASE = 8
N_SA = 9
# sl[i, :]: each completed round's last arrival, in completion order (the bubbles report's)
SL_KIND, SL_BLOCK, SL_UNIT, SL_PC, SL_CYCLE = range(5)
N_SL = 5


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def syncall_arrive(sa, sl, n, kind, cycle, block, unit, pc):
    """SyncallRounds.arrive in the compiled loop: unit `unit` of block `block`, at SYNCALL pc of
    `kind`, arrives at cycle (its pipes drained: barrier_step(PIPE_ALL) first). Returns the
    round it joins; when it is the round's last participant the round completes (its release:
    the latest arrival plus the kind's hops) and its last arrival goes to row n of sl."""
    rnd = sa[kind, SA_DONE]
    sa[kind, SA_ARRIVED] += 1
    if sa[kind, SA_WHO_B] < 0 or cycle > sa[kind, SA_LATEST]:
        sa[kind, SA_LATEST] = cycle
        sa[kind, SA_WHO_B] = block
        sa[kind, SA_WHO_U] = unit
        sa[kind, SA_WHO_PC] = pc
    if sa[kind, SA_ARRIVED] == sa[kind, SA_PARTS]:
        sa[kind, SA_RELEASE] = sa[kind, SA_LATEST] + sa[kind, SA_HOP]
        sa[kind, SA_DONE] += 1
        sl[n, SL_KIND] = kind
        sl[n, SL_BLOCK] = sa[kind, SA_WHO_B]
        sl[n, SL_UNIT] = sa[kind, SA_WHO_U]
        sl[n, SL_PC] = sa[kind, SA_WHO_PC]
        sl[n, SL_CYCLE] = sa[kind, SA_LATEST]
        sa[kind, SA_ARRIVED] = 0
        sa[kind, SA_LATEST] = 0
        sa[kind, SA_WHO_B] = -1
    return rnd
