"""The AI core's timing rules compiled: its event loop (timing/aicore_fast.py drives it).

It replays, event for event, what the SimPy model does for an AI-core kernel
(timing/model.py LaunchSimulation._warp with timing/aicore.py): one process per core slot,
block and unit (AIC, AIV0, AIV1), each unit's scalar instructions on its own issue port, its
tile instructions handed to in-order pipe queues, flags between pipes, cross-core flags, data
ordering under sync="auto", the L2 and the GM links, SYNCALL's launch-wide rounds. Events are
numbered and ordered as SimPy orders them, so the records are the SimPy model's, row for row
(tests/test_aicore_fast.py, tests/test_aicore_fast_syncall.py).

Values are not computed here: timing never depends on tile values (runtime/skip_values.py),
so every dispatched tile instruction is logged with its operands, start and completion, and
the driver then replays the reads (at the starts) and writes (at the completions) in SimPy's
order. A kernel fault (an operand out of bounds, a wait_flag with no set_flag) or a full flag
queue stops the loop with ENG_FALLBACK: the driver runs the launch under SimPy, which raises
the error with its full report (nothing has been written by then).

It calls the engine's parts (event heap, booking table, links, records: engine_parts.py), the
L2's lines (l2.py) and the AI core's step functions (aicore_steps.py, aicore_sync.py).
"""
import numpy as np
from numba import njit

from .isa_constants import F_ALLOC, F_ALU, F_CHECK, F_CONTROL, F_ID, F_WARP, WHY_HBM, WHY_MISSED, WHY_SHARED
from .jit_options import NO_REFCOUNT
from .scalars import ST_OK
from .lane import execute
from .functional import control_step
from .engine_parts import (_heap_pop, _record, B_BLOCK, B_ENDED, B_FAILED, book, CA_BARRIER, CA_NONE, CA_PIPE,
                           ENG_DONE, ENG_GROW, ENG_LIMIT, ENG_YIELD, EV_BLOCK, EV_BLOCK_END, EV_COND, EV_SLOT, EV_WARP,
                           EV_WARP_END, GROW_HEAP, GROW_RECORDS, GROW_TABLE, heap_push, N_ST, NORMAL,
                           operands_ready, PH_DECIDE, PH_DONE, PH_ISSUE, PH_RETIRE, PRIO_SHIFT, process_ends,
                           S_EVENTS, S_GROW, S_HEAP_N, S_LIMIT_KEY, S_NOW, S_REC_N, S_SEQ, S_TABLE_USED,
                           S_UNFINISHED, S_WARP_INSTRS, schedule, set_block_ctx, slot_takes_next_block,
                           table_rebuild, URGENT)
from .aicore_steps import (_operand, AK_AIVS, AK_BOOK_ROOM, AK_BX, AK_BY, AK_BZ, AK_CC_LIMIT, AK_CC_SET,
                           AK_CC_WAIT, AK_DEPTH, AK_GX, AK_GY, AK_GZ, AK_LOAD, AK_MAX_CYCLES, AK_N_BLOCKS,
                           AK_PIPE_BARRIER, AK_PORTS, AK_RECORD, AK_SET_FLAG, AK_SLOTS, AK_SYNCALL, AK_VEC,
                           AK_WAIT_FLAG, AK_WIDTH,
                           book_port, CA_CROSS_CORE, CA_FLAG, queue_slot, reset_units, tile_dispatch,
                           tile_shape, TP_CCEVENT, TP_DST, TP_EVENT, TP_KIND, TP_MAXJ, TP_PIPEARG, TP_SRC,
                           unit_drained)
from .aicore_sync import (barrier_step, cross_full, cross_ready, cross_set_step, cross_take, flag_release,
                          SA_DONE, SA_RELEASE, set_flag_step, syncall_arrive, wait_flag_step)

EV_CROSS = 9          # a block's cross-core event fired: its waiting units resume
EV_SYNCALL = 10       # the launch's SYNCALL event fired (a round completed): its waiting units resume
CA_SYNCALL = 13       # records.py's cause: waiting for a SYNCALL's last participant
ENG_FALLBACK = 5      # run this launch under SimPy (a fault to report, or a queue too small)
GROW_LOG = 5

# st[] beyond the lane engine's S_*
S_LOG_N = N_ST
S_FALLBACK_PC = N_ST + 1
S_SA_GEN = N_ST + 2   # the launch's SYNCALL event (timing/aicore_syncall.py GridBarrier.event): its
S_SA_SEQ = N_ST + 3   # number, waiters registered so far; and the rows of the log of rounds' last arrivals
S_SA_N = N_ST + 4
N_AST = N_ST + 5

# uv[g, :]: a unit's process
U_NEXT = 0          # ws.next_issue
U_CAUSE = 1         # ws.cause, ws.cause_pc
U_CAUSE_PC = 2
U_PHASE = 3
U_WAIT_GEN = 4      # the cross-core event it waits for (-1: none), and when it started waiting
U_WAIT_SEQ = 5
U_T = 6             # a cross-core wait's t, cause and cause pc from before the wait
U_T_CAUSE = 7
U_T_CAUSE_PC = 8
U_WAITING_AT = 9    # the pc it waits at (-1: none)
U_ROUND = 10        # the SYNCALL round it waits for
N_UV = 11
PH_CROSS = 5        # waiting for a cross-core flag
PH_SYNCALL = 6      # waiting at a SYNCALL for the round's last participant

# bx[p, :]: a block's cross-core event
X_GEN = 0           # the current event's number
X_SEQ = 1           # waiters registered so far
N_BX = 2

LG_PC = 0           # the log of dispatched tile instructions (the values replay)
LG_G = 1
LG_BLOCK = 2
LG_START = 3
LG_COMPLETE = 4
LG_ROWS = 5         # the decoded shape: rows, cols, and a GM transfer's offset and window
LG_COLS = 6         # (elements between runs, runs, elements a run, layout: isa/gm_layouts.py)
LG_OFF = 7
LG_STRIDE = 8
LG_RUNS = 9
LG_RUN = 10
LG_LAYOUT = 11
N_LG = 12


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _begin_wait(uv, g, phase, why, pc, t, cause, cause_pc, gen, seq):
    """Unit g starts waiting at pc, in phase (a cross-core flag or SYNCALL) for event generation
    gen, the seq-th waiter: its stall's cause is why, and t, cause, cause_pc are where its issue
    decision stood (taken up again when the event wakes it)."""
    uv[g, U_CAUSE] = why
    uv[g, U_CAUSE_PC] = -1
    uv[g, U_WAITING_AT] = pc
    uv[g, U_T] = t
    uv[g, U_T_CAUSE] = cause
    uv[g, U_T_CAUSE_PC] = cause_pc
    uv[g, U_WAIT_GEN] = gen
    uv[g, U_WAIT_SEQ] = seq
    uv[g, U_PHASE] = phase


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _take_waiters(uv, waiters, first, last, phase, gen):
    """The units first..last - 1 waiting in phase for event generation gen, into waiters in the
    order they began to wait (as SimPy resumes an event's callbacks); they stop waiting. Returns
    how many."""
    count = 0
    for g in range(first, last):
        if uv[g, U_PHASE] == phase and uv[g, U_WAIT_GEN] == gen:
            k = count
            while k > 0 and uv[waiters[k - 1], U_WAIT_SEQ] > uv[g, U_WAIT_SEQ]:
                waiters[k] = waiters[k - 1]
                k -= 1
            waiters[k] = g
            count += 1
    for q in range(count):
        uv[waiters[q], U_WAIT_GEN] = -1
    return count


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _init_units(p, now, st, ht, hk, hv, entry, seed_regs, regs, ready, producer, wst, uv, bv, bx,
                pf, pd, fh, tl, fl, qn, fn, cn, hz_n, hz_has):
    """A block's process starts on core slot p: fresh units (each a process, at its program's
    first pc entry[w]; a unit without a program does not start), pipes, flags, cross-core
    signals and hazard ranges."""
    bv[p, B_ENDED] = 0
    bv[p, B_FAILED] = 0
    bx[p, X_GEN] = 0
    bx[p, X_SEQ] = 0
    reset_units(p, pf, pd, fh, tl, fl, qn, fn, cn, hz_n, hz_has)
    for w in range(3):
        g = 3 * p + w
        if entry[w] < 0:
            uv[g, U_PHASE] = PH_DONE
            continue
        for r in range(seed_regs.shape[0]):
            for lane in range(32):
                regs[g, r, lane] = seed_regs[r, lane]
            ready[g, r] = 0
            producer[g, r] = -1
        wst[g, 0] = entry[w]
        wst[g, 1] = 1                     # one lane: the unit's scalar unit
        wst[g, 2] = 0
        wst[g, 3] = 0
        wst[g, 4] = 0
        for k in range(N_UV):
            uv[g, k] = 0
        uv[g, U_NEXT] = now               # a later block's units start when it takes the core:
        uv[g, U_CAUSE_PC] = -1            # its wait for the core is no stall of its first instruction
        uv[g, U_WAIT_GEN] = -1
        uv[g, U_WAITING_AT] = -1
        uv[g, U_T_CAUSE_PC] = -1
        uv[g, U_PHASE] = PH_DECIDE
        st[S_UNFINISHED] += 1
        schedule(st, ht, hk, hv, now, URGENT, EV_WARP, g)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def aicore_engine_run(budget, acfg, af, st, ht, hk, hv, keys, vals, keys2, vals2, code, imm, pc_fam, pc_op,
                      pc_pipe, pc_lat, pc_ii, pc_srcs, pc_dst, tp, tf, fm_i, fm_f, ov, seed_regs,
                      regs, ready, producer, wst, stacks, uv, bv, bx, pf, pd, fh, tl, fl, qb, qh,
                      qn, fb, fhd, fn, cb, chd, cn, hz_n, hz_ord, hz_has, hz_wd, hz_rd, hz_wpc,
                      hz_rpc, ak_s, ak_e, ak_n, l2_s, l2_e, l2_n, lk_s, lk_e, lk_n, l2s, l2link,
                      l2first, hbm, tbase, tcount, tbytes, routes, rec, totals,
                      lg_i, lg_v, ctx, info, pend_idx, pend_val, l1, shape, hz_out, out, waiters, entry,
                      sa, sl):
    """Process events in SimPy's order until none is left, the cycle limit, a fallback, a
    full buffer or `budget` events. Returns an ENG_* code. (keys2, vals2: a scratch booking
    table of the same size; waiters: room for every unit of the launch; entry: each unit's
    first pc, -1 for a unit without a program; sa, sl: SYNCALL's rounds by kind and the log of
    their last arrivals, aicore_sync.py: the driver grows sl when a call ends with it past
    half full; the loop ends its call early when it fills.)"""
    running = 0
    for w in range(3):
        if entry[w] >= 0:
            running += 1
    limit = acfg[AK_MAX_CYCLES]
    slots = acfg[AK_SLOTS]
    record = acfg[AK_RECORD] != 0
    # a unit's next EV_WARP event, scheduled (its insertion number taken) but held out of the
    # heap: when it comes before the heap's first event it is the next event, processed
    # without a push and a pop; otherwise, and before any return, it goes into the heap
    held = False
    held_t = np.int64(0)
    held_k = np.int64(0)
    held_g = np.int64(0)
    while True:
        if held and (budget <= 0 or (st[S_HEAP_N] > 0 and (
                ht[0] < held_t or (ht[0] == held_t and hk[0] < held_k)))):
            heap_push(st, ht, hk, hv, held_t, held_k, EV_WARP, held_g)
            held = False
        if budget <= 0:
            break
        n = st[S_HEAP_N]
        if held:
            next_t = held_t
            next_k = held_k
        elif n == 0:
            return ENG_DONE
        else:
            next_t = ht[0]
            next_k = hk[0]
        if next_t > limit or (next_t == limit and next_k >= st[S_LIMIT_KEY]) or n + 16 > ht.shape[0] \
                or (record and st[S_REC_N] + 4 > rec.shape[0]) or st[S_LOG_N] + 4 > lg_i.shape[0]:
            if held:
                heap_push(st, ht, hk, hv, held_t, held_k, EV_WARP, held_g)
                held = False
            if next_t > limit or (next_t == limit and next_k >= st[S_LIMIT_KEY]):
                return ENG_LIMIT
            if n + 16 > ht.shape[0]:
                st[S_GROW] = GROW_HEAP
                return ENG_GROW
            if record and st[S_REC_N] + 4 > rec.shape[0]:
                st[S_GROW] = GROW_RECORDS
                return ENG_GROW
            st[S_GROW] = GROW_LOG
            return ENG_GROW
        if 2 * (st[S_TABLE_USED] + acfg[AK_BOOK_ROOM]) > keys.shape[0]:
            # forget the past bookings here (through the scratch table); grow only when the
            # bookings still to come fill it
            for i in range(keys2.shape[0]):
                keys2[i] = -1
            used = table_rebuild(keys, vals, keys2, vals2, st[S_NOW], acfg[AK_PORTS])
            for i in range(keys.shape[0]):
                keys[i] = keys2[i]
                vals[i] = vals2[i]
            st[S_TABLE_USED] = used
            if 4 * (used + acfg[AK_BOOK_ROOM]) > keys.shape[0]:
                if held:
                    heap_push(st, ht, hk, hv, held_t, held_k, EV_WARP, held_g)
                    held = False
                st[S_GROW] = GROW_TABLE
                return ENG_GROW
        budget -= 1
        st[S_EVENTS] += 1
        if held:
            held = False
            now = held_t
            kind = EV_WARP
            arg = held_g
        else:
            last = _heap_pop(ht, hk, hv, st)
            now = ht[last]
            kind = hv[last, 0]
            arg = hv[last, 1]
        st[S_NOW] = now
        if kind == EV_WARP or kind == EV_CROSS or kind == EV_SYNCALL:
            count = 1
            if kind == EV_WARP:
                waiters[0] = arg
            elif kind == EV_SYNCALL:
                # the launch's SYNCALL event: every unit waiting for it resumes
                count = _take_waiters(uv, waiters, 0, uv.shape[0], PH_SYNCALL, arg)
            else:
                # the block's cross-core event: its waiting units resume
                p = arg % slots
                count = _take_waiters(uv, waiters, 3 * p, 3 * p + 3, PH_CROSS, arg // slots)
            for q in range(count):
                # ---- run unit g from cycle now until it waits (LaunchSimulation._warp's loop
                # for an AI-core unit), written inline: a call passing its ~80 arrays cost more
                # than the rest of an event
                g = waiters[q]
                fallback = False
                slots = acfg[AK_SLOTS]
                p = g // 3
                w = g - 3 * p
                core = p % slots
                block_id = bv[p, B_BLOCK]
                width = acfg[AK_WIDTH]
                ports = acfg[AK_PORTS]
                record = acfg[AK_RECORD] != 0
                state = wst[g]
                wregs = regs[g]
                wready = ready[g]
                wprod = producer[g]
                phase = uv[g, U_PHASE]
                if phase == PH_RETIRE:
                    process_ends(g, now, st, ht, hk, hv, uv, U_PHASE)
                    continue
                set_block_ctx(ctx, block_id, acfg[AK_GX], acfg[AK_GY], acfg[AK_GZ], acfg[AK_BX],
                              acfg[AK_BY], acfg[AK_BZ], w)
                while True:
                    pc = state[0]
                    fam = pc_fam[pc]
                    ikind = tp[pc, TP_KIND]
                    tile = ikind >= AK_LOAD and ikind <= AK_VEC
                    if phase != PH_ISSUE:
                        if phase == PH_DECIDE:
                            # ---- when can this instruction issue?
                            t = uv[g, U_NEXT]
                            if t < now:
                                t = now
                            t, cause, cause_pc = operands_ready(pc, t, pc_srcs, pc_dst, wready, wprod)
                            if ikind == AK_CC_WAIT and not cross_ready(cn, p, w, tp[pc, TP_CCEVENT], acfg[AK_AIVS]):
                                _begin_wait(uv, g, PH_CROSS, CA_CROSS_CORE, pc, t, cause, cause_pc, bx[p, X_GEN],
                                            bx[p, X_SEQ])
                                bx[p, X_SEQ] += 1
                                break
                            if ikind == AK_SYNCALL:
                                # drain the unit's pipes, arrive (timing/aicore.py syncall)
                                sk = tp[pc, TP_CCEVENT]
                                arrival = barrier_step(pf, pd, tl, fl, fh, g, -1, now)
                                if t > arrival:
                                    arrival = t
                                rnd = syncall_arrive(sa, sl, st[S_SA_N], sk, arrival, block_id, w, pc)
                                if sa[sk, SA_DONE] > rnd:
                                    # the last participant: the launch's event fires, waking the waiters
                                    st[S_SA_N] += 1
                                    if st[S_SA_N] + ports >= sl.shape[0]:
                                        budget = 0                      # the driver grows sl
                                    gen = st[S_SA_GEN]
                                    for r in range(uv.shape[0]):
                                        if uv[r, U_PHASE] == PH_SYNCALL and uv[r, U_WAIT_GEN] == gen:
                                            schedule(st, ht, hk, hv, now, NORMAL, EV_SYNCALL, gen)
                                            break
                                    st[S_SA_GEN] = gen + 1
                                else:
                                    _begin_wait(uv, g, PH_SYNCALL, CA_SYNCALL, pc, t, cause, cause_pc, st[S_SA_GEN],
                                                st[S_SA_SEQ])
                                    uv[g, U_ROUND] = rnd
                                    st[S_SA_SEQ] += 1
                                    break
                        elif phase == PH_SYNCALL:
                            # resumed by the launch's SYNCALL event: its round still open? wait for the next
                            t = uv[g, U_T]
                            cause = uv[g, U_T_CAUSE]
                            cause_pc = uv[g, U_T_CAUSE_PC]
                            if sa[tp[pc, TP_CCEVENT], SA_DONE] <= uv[g, U_ROUND]:
                                uv[g, U_WAIT_GEN] = st[S_SA_GEN]
                                uv[g, U_WAIT_SEQ] = st[S_SA_SEQ]
                                st[S_SA_SEQ] += 1
                                break
                            uv[g, U_WAITING_AT] = -1
                            phase = PH_DECIDE
                            uv[g, U_PHASE] = PH_DECIDE
                        else:
                            # resumed by the block's cross-core event: still nothing? wait for the next one
                            t = uv[g, U_T]
                            cause = uv[g, U_T_CAUSE]
                            cause_pc = uv[g, U_T_CAUSE_PC]
                            if not cross_ready(cn, p, w, tp[pc, TP_CCEVENT], acfg[AK_AIVS]):
                                uv[g, U_WAIT_GEN] = bx[p, X_GEN]
                                uv[g, U_WAIT_SEQ] = bx[p, X_SEQ]
                                bx[p, X_SEQ] += 1
                                break
                            uv[g, U_WAITING_AT] = -1
                            phase = PH_DECIDE
                            uv[g, U_PHASE] = PH_DECIDE
                        if ikind == AK_CC_WAIT:
                            fire = cross_take(cb, chd, cn, p, w, tp[pc, TP_CCEVENT], acfg[AK_AIVS])
                            if now > t:
                                t = now
                            if fire > t:
                                t = fire
                                cause = CA_CROSS_CORE
                        elif ikind == AK_PIPE_BARRIER:
                            done = barrier_step(pf, pd, tl, fl, fh, g, tp[pc, TP_PIPEARG], now)
                            if done > t:
                                t = done
                                cause = CA_BARRIER
                        elif ikind == AK_WAIT_FLAG:
                            # a wait on PIPE_S holds the scalar unit until its flag fires
                            fire = flag_release(fb, fhd, fn, g, tp[pc, TP_SRC], tp[pc, TP_DST], tp[pc, TP_EVENT])
                            if fire > t:
                                t = fire
                                cause = CA_FLAG
                        elif tile:
                            # a full pipe queue holds the scalar unit until its oldest op completes
                            slot = queue_slot(qb, qh, qn, g, pc_pipe[pc], t, acfg[AK_DEPTH])
                            if slot > t:
                                t = slot
                                cause = CA_PIPE
                                cause_pc = -1
                        elif ikind == AK_SYNCALL:
                            # the round's release (its round is the kind's last completed one)
                            if now > t:
                                t = now
                            if sa[tp[pc, TP_CCEVENT], SA_RELEASE] > t:
                                t = sa[tp[pc, TP_CCEVENT], SA_RELEASE]
                                cause = CA_SYNCALL
                        if tile:
                            booked = book_port(keys, vals, st, ports, g, t, width)
                        else:
                            booked = book(keys, vals, st, ports, g, t, pc_pipe[pc], pc_ii[pc], width)
                        c = booked >> 4
                        why = booked & 15
                        if why != 0:
                            cause = why
                            cause_pc = -1
                        if c > now:
                            uv[g, U_CAUSE] = cause
                            uv[g, U_CAUSE_PC] = cause_pc
                            uv[g, U_PHASE] = PH_ISSUE
                            if q == count - 1:
                                # the event's last unit: nothing is scheduled after it (held)
                                held = True
                                held_t = c
                                held_k = NORMAL * PRIO_SHIFT + st[S_SEQ]
                                held_g = g
                                st[S_SEQ] += 1
                            else:
                                schedule(st, ht, hk, hv, c, NORMAL, EV_WARP, g)
                            break
                    # ---- issue at cycle now
                    phase = PH_DECIDE
                    uv[g, U_PHASE] = PH_DECIDE
                    stall = now - uv[g, U_NEXT] if now > uv[g, U_NEXT] else 0
                    lat = pc_lat[pc]
                    uv[g, U_NEXT] = now + 1
                    complete = now + lat
                    mask = state[1]
                    next_pc = pc + 1
                    st[S_WARP_INSTRS] += 1
                    if fam == F_CONTROL:
                        next_pc = control_step(pc, pc_op[pc], code, imm, wregs, state, stacks[g])
                    elif tile:
                        if not tile_shape(tp, code, imm, wregs, pc, tcount, shape):
                            st[S_FALLBACK_PC] = pc
                            fallback = True
                            break
                        tile_dispatch(g, p, w, core, pc, now, now, tp, tf, fm_i, fm_f, shape, acfg, af,
                                      pc_pipe, pc_lat, pf, pd, fh, tl, fl, qb, qh, qn, ov, hz_n, hz_ord,
                                      hz_has, hz_wd, hz_rd, hz_wpc, hz_rpc, ak_s, ak_e, ak_n, l2_s, l2_e,
                                      l2_n, lk_s, lk_e, lk_n, l2s, l2link, l2first, tbase,
                                      routes, hz_out, out)
                        # why (records.why_code): the scalar unit's cause, the L2 miss, the shared
                        # wait, the bytes read from HBM
                        _record(rec, totals, st, record, block_id, w, core, pc, out[0], out[1],
                                out[0] - now, out[3], out[4], mask, out[2],
                                uv[g, U_CAUSE] + WHY_MISSED * out[5] + WHY_SHARED * out[6]
                                + np.int64(WHY_HBM) * out[7])
                        k = st[S_LOG_N]
                        lg_i[k, LG_PC] = pc
                        lg_i[k, LG_G] = g
                        lg_i[k, LG_BLOCK] = block_id
                        lg_i[k, LG_START] = out[0]
                        lg_i[k, LG_COMPLETE] = out[1]
                        lg_i[k, LG_ROWS] = shape[0]
                        lg_i[k, LG_COLS] = shape[1]
                        lg_i[k, LG_OFF] = shape[6]
                        lg_i[k, LG_STRIDE] = shape[7]
                        lg_i[k, LG_RUNS] = shape[8]
                        lg_i[k, LG_RUN] = shape[9]
                        lg_i[k, LG_LAYOUT] = shape[10]
                        for j in range(tp[pc, TP_MAXJ]):
                            lg_v[k, j] = _operand(code, imm, wregs, pc, j)
                        st[S_LOG_N] = k + 1
                        uv[g, U_CAUSE] = CA_NONE
                        uv[g, U_CAUSE_PC] = -1
                        state[0] = next_pc
                        continue
                    elif ikind == AK_SET_FLAG or ikind == AK_WAIT_FLAG:
                        # a full flag queue, or a wait with no set_flag (SimPy reports it)
                        if ikind == AK_SET_FLAG:
                            ok = set_flag_step(pf, pd, tl, fl, fh, fb, fhd, fn, g, tp[pc, TP_SRC],
                                               tp[pc, TP_DST], tp[pc, TP_EVENT], now)
                        else:
                            ok = wait_flag_step(fh, fb, fhd, fn, g, tp[pc, TP_SRC], tp[pc, TP_DST],
                                                tp[pc, TP_EVENT])
                        if not ok:
                            st[S_FALLBACK_PC] = pc
                            fallback = True
                            break
                    elif ikind == AK_CC_SET:
                        if cross_full(cn, p, w, tp[pc, TP_CCEVENT], acfg[AK_CC_LIMIT], acfg[AK_AIVS]) or \
                                not cross_set_step(pf, pd, tl, fl, cb, chd, cn, g, p, w, tp[pc, TP_CCEVENT],
                                                   tp[pc, TP_PIPEARG], now, acfg[AK_AIVS]):
                            st[S_FALLBACK_PC] = pc
                            fallback = True
                            break
                        # signal(): the block's cross-core event fires now; its waiters resume when it is
                        # processed (an event nobody waits for changes nothing: not scheduled)
                        gen = bx[p, X_GEN]
                        for q in range(3):
                            if uv[3 * p + q, U_PHASE] == PH_CROSS and uv[3 * p + q, U_WAIT_GEN] == gen:
                                schedule(st, ht, hk, hv, now, NORMAL, EV_CROSS, gen * slots + p)
                                break
                        bx[p, X_GEN] = gen + 1
                    elif ikind == AK_CC_WAIT or ikind == AK_PIPE_BARRIER or ikind == AK_SYNCALL or fam == F_ALLOC:
                        pass                                        # done before issue, or nothing to do
                    elif fam == F_ALU or fam == F_ID or fam == F_WARP or fam == F_CHECK:
                        if execute(pc, code, imm, wregs, mask, ctx, hbm, tbase, tcount, tbytes, l1,
                                   32, pend_idx, pend_val, info) != ST_OK:
                            st[S_FALLBACK_PC] = pc
                            fallback = True
                            break
                        d = pc_dst[pc]
                        if d >= 0:
                            wready[d] = complete
                            wprod[d] = pc
                    else:
                        st[S_FALLBACK_PC] = pc
                        fallback = True
                        break
                    _record(rec, totals, st, record, block_id, w, core, pc, now, complete, stall,
                            uv[g, U_CAUSE], uv[g, U_CAUSE_PC], mask, 0, 0)
                    uv[g, U_CAUSE] = CA_NONE
                    uv[g, U_CAUSE_PC] = -1
                    if next_pc < 0:
                        # retire: the unit ends once everything queued on its pipes is done,
                        # every result it computed is ready and EXIT's cycle is over (as a lane warp)
                        done = max(unit_drained(pf, pd, tl, fl, g, -1), complete)
                        for r in range(wready.shape[0]):
                            if wready[r] > done:
                                done = wready[r]
                        if done < 0:
                            done = 0
                        if done > now:
                            uv[g, U_PHASE] = PH_RETIRE
                            schedule(st, ht, hk, hv, done, NORMAL, EV_WARP, g)
                        else:
                            process_ends(g, now, st, ht, hk, hv, uv, U_PHASE)
                        break
                    state[0] = next_pc
                if fallback:
                    return ENG_FALLBACK
        elif kind == EV_WARP_END:
            p = arg // 3
            bv[p, B_ENDED] += 1
            if bv[p, B_ENDED] == running:
                schedule(st, ht, hk, hv, now, NORMAL, EV_COND, p)
        elif kind == EV_COND:
            schedule(st, ht, hk, hv, now, NORMAL, EV_BLOCK_END, arg)
        elif kind == EV_BLOCK_END or kind == EV_SLOT:
            slot_takes_next_block(kind, arg, st, ht, hk, hv, now, bv, acfg[AK_N_BLOCKS])
        elif kind == EV_BLOCK:
            _init_units(arg, now, st, ht, hk, hv, entry, seed_regs, regs, ready, producer, wst, uv,
                        bv, bx, pf, pd, fh, tl, fl, qn, fn, cn, hz_n, hz_has)
    return ENG_YIELD
