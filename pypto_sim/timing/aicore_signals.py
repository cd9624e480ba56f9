"""The communication signals in the SimPy model (isa/58_comm_signals.toml; values and the
DataCache's part: exec/comm_signals.py): pto.tnotify's store lands when the header's sequence
puts it in GM, and pto.twait / pto.ttest read each element when the header's loop reads it.

Costs, from the machine table's rows (latency_tables/ascend910b.toml TNOTIFY, TWAIT, TTEST):
d = DCCI, s = SLD_GM, st = SST_GM, L = LOAD (a GM round trip), W = STORE, A = ATOM_ADD,
b = PIPE_BARRIER and k = the record's own latency (a constant-cost intrinsic: dsb,
set_st_atomic_cfg, the loop's exit). A TNOTIFY issued at t:
- Set: dcci (d), the store, whose line the dcci dropped, fills it (st + L), the second dcci
  writes it back: the value lands in GM at t + d + st + L; the scalar unit goes on after that
  dcci's d + W (the write's latency) and dsb's k.
- AtomicAdd: set_st_atomic_cfg (k), dcci (d), st_atomic: the add lands A later; the dcci after
  it issues while it is in flight and dsb (k) waits for it: the unit goes on at the landing + k.
(A first dcci that writes a dirty line of the unit's own back adds W.) The header's closing
pipe_barrier(PIPE_ALL) is the next record.

A TWAIT (TTEST: one pass) starting at t0 reads element j of a pass starting at x at cycle
x + j * e + d, e = d + s + L (a dcci, then the read of the refilled line, sampled when it issues,
which returns L later); a pass ends with the read of its first failing element, and after every
64th failed pass pipe_barrier(PIPE_ALL) holds the scalar unit until the unit's pipes drained, + b.
The unit goes on when the pass that sees every element satisfied returns, t0 + e per element
read; the record issues then (k). Each read is one SimPy event, scheduled after everything else
of its cycle, so a TNOTIFY landing at the very cycle of a read is seen by it. The signal lines
are not looked up in the L2 model (each read is the LOAD row's round trip, as SYNCALL_SOFT's polls).

A TWAIT that can never be released: when every event left in the launch is a read of a waiting
TWAIT and none of them could be satisfied by GM as it is, nothing can change the signals any more
(no unit runs, no transfer or notify is in flight): the waiting units stop, and the launch ends
in the DeadlockError naming each, its line and the element it waits for (exec/comm_signals.py).

check="race": a TWAIT's release (a TTEST that answers 1) orders the unit after each TNOTIFY whose
value it read. A notify of unit u of block B is round n of the clock column 2 x len(KINDS) + 3B + u
(past SYNCALL's, timing/aicore_races.py): the notifier's scalar clocks at its issue are kept as that
round's arrival on its core, and the waiter learns the round (and the columns the notifier knew),
which ChipGMAccesses reads as it reads SYNCALL rounds; a waiter of the notifier's own core joins
its clocks whole, as a cross-core flag's. A Set's value carries its notify only, an AtomicAdd's
every add since the last Set (a release sequence). The signal accesses themselves are not data
accesses: racecheck does not compare them (as it leaves lane atomics alone)."""
from __future__ import annotations

import numpy as np

from ..errors import DeadlockError
from ..exec import comm_signals, gm
from ..exec.aicore_tiles import UNIT_NAMES
from ..exec.scalar_memory import mark_written_back
from ..isa import PIPES
from ..isa.comm_signal_modes import FENCE_INTERVAL, OP_SET, SPIN_LIMIT, satisfied
from ..isa.syncall_modes import KINDS
from .aicore_races import ALL, P, Q
from .aicore_scalar_memory import written_back
from .records import CAUSE

SCALAR = PIPES.index("scalar")
LATE = 2                     # a SimPy priority after NORMAL: a read sees what lands in its cycle
FIRST_COLUMN = 2 * len(KINDS)


def signal_columns(sim) -> int:
    """The race clock's columns for the notifies of the launch: 3 per block when the program has a
    TNOTIFY and a TWAIT or TTEST (one per unit that may notify), else 0."""
    names = set(sim.pc_name)
    if "TNOTIFY" in names and names & {"TWAIT", "TTEST"}:
        gx, gy, gz = sim.grid
        return 3 * gx * gy * gz
    return 0


class SignalState:
    """One launch's signal bookkeeping: the units polling (key (block id, unit) -> Poller), their
    pending read events, the TTEST answers between their wait and their issue, and for check="race"
    each unit's notify count and, per GM signal address, the notifies its value carries."""

    def __init__(self):
        self.pollers: dict = {}
        self.events: set = set()
        self.answers: dict = {}
        self.notifies: dict = {}
        self.carried: dict = {}

    def at(self, env, when):
        """An event at cycle when, after every other event of that cycle (SimPy's Timeout
        sets _ok and _value the same way before scheduling itself)."""
        event = env.event()
        event._ok, event._value = True, None
        env.schedule(event, LATE, when - env.now)
        self.events.add(event)
        event.callbacks.append(self.events.discard)
        return event


class Poller:
    """A unit at a TWAIT or TTEST: its region, and whether it waits (TWAIT) or answers (TTEST)."""

    __slots__ = ("region", "waits")

    def __init__(self, region, waits):
        self.region, self.waits = region, waits

    def could_pass(self, hbm) -> bool:
        """Whether GM's values now satisfy every element (a TTEST always goes on)."""
        if not self.waits:
            return True
        reg = self.region
        return all(satisfied(gm.int32_at(hbm, a), reg.cmp, reg.target)
                   for a in reg.addresses)


def state(sim) -> SignalState:
    """The launch's SignalState (made at its first signal instruction)."""
    if getattr(sim, "signals", None) is None:
        sim.signals = SignalState()
    return sim.signals


# ---------------------------------------------------------------- TWAIT / TTEST
def wait_before_issue(sim, pc, blk, w, ws, t, cause):
    """Before unit w issues comm_signal instruction pc: TWAIT / TTEST read their elements as the
    header's loop does; returns (the cycle the record issues, cause). A generator."""
    name = sim.pc_name[pc]
    if name == "TNOTIFY":
        return t, cause
    env, st, m = sim.env, state(sim), sim.m
    reg = comm_signals.region(sim, pc, w, blk.coords, ws.regs)
    d, e, b = m.latency("DCCI"), m.latency("DCCI") + m.latency("SLD_GM") + m.latency("LOAD"), m.latency("PIPE_BARRIER")
    waits, race = name == "TWAIT", blk.aicore.race
    key = (blk.id, w)
    st.pollers[key] = Poller(reg, waits)
    ws.note_stall(CAUSE["signal"], -1)
    ws.waiting_at = pc
    x, i, fails, seen, ok = max(t, int(env.now)), 0, 0, [], False
    while True:
        yield st.at(env, x + d)
        value = _read(sim, pc, blk, w, reg, i)
        if race is not None:
            seen.extend(st.carried.get(reg.addresses[i], {}).items())
        x += e
        if satisfied(value, reg.cmp, reg.target):
            i += 1
            if i == len(reg.elements):
                ok = True
                break
            continue
        if not waits:
            break
        fails += 1
        comm_signals.note_wait(sim, blk.coords, w, reg, i, value)
        if fails > SPIN_LIMIT:
            raise _spin_limit(sim, pc, blk, w, reg, i, value, x)
        if fails % FENCE_INTERVAL == 0:       # TWait.hpp: pipe_barrier(PIPE_ALL)
            x = sim.aicore_pipes.barrier(blk.aicore.p, w, ALL, x) + b
            if race is not None:
                race.barrier_all(w)
        i, seen = 0, []
        if _stuck(sim, st):
            yield env.event()                 # never fires: the launch ends in a DeadlockError
    del st.pollers[key]
    ws.waiting_at = None
    if waits:
        comm_signals.waiting(sim).pop((blk.coords, w), None)
    else:
        st.answers[key] = ok
    if ok and race is not None:
        _join(blk, w, seen)
    t = max(t, int(env.now))
    if x > t:
        t, cause = x, CAUSE["signal"]
    return t, cause


def _read(sim, pc, blk, w, reg, i) -> int:
    """Element i of reg read now through unit w's DataCache (dcci, then the read)."""
    cache = blk.aicore.caches[w]
    value = comm_signals.read(sim, pc, w, blk.coords, cache, reg.slot, reg.elements[i], reg.addresses[i],
                              init_check=bool(sim.checks and sim.checks.init))
    _written(sim, blk, w, pc, cache)
    return value


def _written(sim, blk, w, pc, cache):
    """The lines unit w's DataCache wrote back: initcheck marks them, racecheck checks them."""
    written = cache.take_written()
    if written:
        mark_written_back(sim.hbm_init, written)
        if blk.aicore.race is not None:
            written_back(sim, blk, w, pc, written)


def _stuck(sim, st) -> bool:
    """Whether nothing can change a signal any more: every event left is a waiting TWAIT's read
    (or run(until=)'s own marker) and no TWAIT could pass on GM's values now."""
    marker = sim.max_cycles is not None
    for when, priority, _eid, event in sim.env._queue:
        if event in st.events:
            continue
        if marker and priority == 0 and when == sim.max_cycles:
            marker = False
            continue
        return False
    return not any(p.could_pass(sim.hbm) for p in st.pollers.values())


def _spin_limit(sim, pc, blk, w, reg, i, value, cycle) -> DeadlockError:
    ins = sim.prog.instrs[pc]
    name = sim.tensor_names[reg.slot]
    return DeadlockError(
        f"TWAIT: possible deadlock detected, spin count exceeded maximum limit (TWait.hpp's PTO_ASSERT after "
        f"{SPIN_LIMIT:,} spins): pto.twait at line {ins.line} on {UNIT_NAMES[w]} of block {blk.coords} "
        f"still reads {name}[{reg.elements[i]}] = {value} at cycle {cycle}", kernel=sim.kernel_name,
        file=sim.prog.file, line=ins.line, block=blk.coords, warp=w, unit=UNIT_NAMES[w],
        hint="check that a pto.tnotify sets the signal to a value the comparison accepts")


def _join(blk, w, seen):
    """check="race": unit w's queues are ordered after each notify whose value it read."""
    race = blk.aicore.race
    rows = race.clock[w * P:(w + 1) * P]
    for (block_id, _unit), (column, count, vc) in seen:
        if block_id == blk.id:
            race.join(w, ALL, vc)
        else:
            np.maximum(rows[:, Q:], vc[Q:], out=rows[:, Q:])
        rows[:, Q + column] = np.maximum(rows[:, Q + column], count)


# ---------------------------------------------------------------- issue
def at_issue(sim, pc, blk, w, ws, now, complete) -> int:
    """Unit w issues comm_signal instruction pc at cycle now (its row's latency ends at complete):
    a TNOTIFY starts (its landing scheduled), a TTEST writes its answer. Returns its completion,
    which the scalar unit waits for."""
    name = sim.pc_name[pc]
    if name == "TTEST":
        ws.regs[sim.pc_dst[pc], 0] = 1.0 if sim.signals.answers.pop((blk.id, w)) else 0.0
        return complete
    if name == "TWAIT":
        return complete
    m, cache, race = sim.m, blk.aicore.caches[w], blk.aicore.race
    k, d, store = m.latency("TNOTIFY"), m.latency("DCCI"), m.latency("STORE")
    slot, element, address, op, value = comm_signals.notify_start(
        sim, pc, w, blk.coords, ws.regs, cache, init_check=bool(sim.checks and sim.checks.init))
    dirty = store if cache.written else 0       # the first dcci wrote a line of the unit's own back
    _written(sim, blk, w, pc, cache)
    if op == OP_SET:
        land = now + d + dirty + m.latency("SST_GM") + m.latency("LOAD")
        complete = land + d + store + k
    else:
        land = now + k + d + dirty + m.latency("ATOM_ADD")
        complete = land + k
    carried = _notify_clocks(sim, blk, w) if race is not None else None

    def landed():
        comm_signals.notify_land(sim, cache, address, op, value)
        _written(sim, blk, w, pc, cache)
        if carried is not None:
            now_carried = {} if op == OP_SET else sim.signals.carried.get(address, {})
            now_carried[(blk.id, w)] = carried
            sim.signals.carried[address] = now_carried
    state(sim)
    sim._schedule_effect(land - now, landed)
    ws.next_issue = max(ws.next_issue, complete)
    return complete


def _notify_clocks(sim, blk, w) -> tuple:
    """check="race" at a TNOTIFY of unit w: the next round of its column, and the scalar queue's
    clocks, kept as that round's arrival on the core (what the notify orders before it)."""
    st, ai = state(sim), blk.aicore
    key = (blk.id, w)
    count = st.notifies[key] = st.notifies.get(key, 0) + 1
    column = FIRST_COLUMN + 3 * blk.id + w
    vc = ai.race.carry(w, SCALAR)
    ai.syncall_clocks[(column, count - 1)] = [vc]
    return column, count, vc
