"""The timing model's event loop compiled with numba (the "fast engine").

It replays, event for event, what pypto_sim.timing.model.LaunchSimulation does under SimPy for
kernels of lane instructions only: the same processes (one per core slot, block and warp), the
same events in the same order (SimPy orders its queue by (time, priority, insertion number);
so does the heap here, and every event that has an effect is numbered where SimPy numbers it),
the same issue-port and pipe booking and the same HBM link arithmetic. Its records, cycles and
values are therefore the SimPy model's, bit for bit (tests/test_fast_engine.py checks that);
it only spends about 0.6 us per warp-instruction instead of about 12 us.

It uses engine_parts.py's state layout, event heap, booking table, links and records; driven by
pypto_sim.timing.fast. All state lives in arrays the driver owns, so ``engine_run`` can stop
(progress, full buffers) and be called again.
"""
import numpy as np
from numba import njit

from .isa_constants import (C_DTYPE, F_ALU, F_ATOMIC, F_CHECK, F_CONTROL, F_FMA_STORE, F_ID, F_LOAD, F_LOCAL, F_STORE,
                            F_SYNC, F_WARP, OP_BARRIER_BLOCK, OP_BARRIER_BLOCK_AND, OP_BARRIER_BLOCK_COUNT,
                            OP_BARRIER_BLOCK_OR)
from .jit_options import NO_REFCOUNT
from .scalars import ST_OK
from .gm_bytes import gm_store, init_get, init_set
from .simt import vote_count, write_vote
from .lane import execute, forward_store, race_check
from .functional import control_step, start_warp
from .engine_parts import (_heap_pop, _record, B_ARRIVED, B_BLOCK, B_ENDED, B_EPOCH, B_FAILED, B_RELEASED,
                           B_VOTE_COUNT, B_VOTE_LANES, B_VOTE_RES_COUNT, B_VOTE_RES_LANES, book, CA_BARRIER,
                           CA_BARRIER_BLOCK, CA_NONE, ENG_DONE, ENG_FAULT, ENG_GROW, ENG_LIMIT, ENG_YIELD,
                           EV_BLOCK, EV_BLOCK_END, EV_COMMIT, EV_COND, EV_FAIL, EV_RELEASE, EV_SLOT, EV_WARP,
                           EV_WARP_END, F_ALIVE, F_COUNT, F_CYCLE, F_HI, F_KIND, F_LANE, F_MASK, F_PC, F_REPORT,
                           F_SPACE, F_WAIT_PC, F_WAITING, F_WORD, F_WRITE, FK_OOB, FK_RACE, FK_SYNC_BARRIER,
                           FK_SYNC_EXIT, FK_UNINIT, GROW_COMMITS, GROW_HEAP, GROW_RECORDS, GROW_TABLE,
                           K_BOOK_ROOM, K_BX, K_BY, K_BZ, K_CORES, K_GX, K_GY, K_GZ, K_HBM_SHIFT, K_INIT,
                           K_LANES, K_MAX_CYCLES, K_N_BLOCKS, K_RACE, K_RECORD, K_SECTOR, K_STORE_LAT,
                           K_SYNC, K_WIDTH, K_WPB, L_DTYPE, L_NEXT, L_OWNER, L_PREV, L_TGT, MEM_HBM, N_WV,
                           NORMAL, operands_ready, PH_BARRIER, PH_DECIDE, PH_DONE, PH_ISSUE, PH_RETIRE,
                           process_ends, S_COMMIT_FREE, S_EVENTS, S_FAULT_G, S_GROW, S_HEAP_N, S_LIMIT_KEY,
                           S_NOW, S_REC_N, S_TABLE_USED, S_UNFINISHED, S_WARP_INSTRS, schedule,
                           set_block_ctx, slot_takes_next_block, transfer, URGENT, W_ALIVE, W_ARRIVED,
                           W_CAUSE, W_CAUSE_PC, W_NEXT, W_PEND_HEAD, W_PEND_TAIL, W_PHASE, W_STALL,
                           W_STORE_DONE)

# ---------------------------------------------------------------- one warp
# ---------------------------------------------------------------- the launch
@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _init_block(p, now, cfg, st, ht, hk, hv, seed_regs, regs, ready, producer, wst, wv, bv, bs_l1,
                l1_shadow):
    """A block's process starts on core slot p: fresh L1 and warps, each a process."""
    wpb = cfg[K_WPB]
    lanes = cfg[K_LANES]
    bv[p, B_ARRIVED] = 0
    bv[p, B_ENDED] = 0
    bv[p, B_FAILED] = 0
    bv[p, B_RELEASED] = 0
    bv[p, B_EPOCH] = 0
    bv[p, B_VOTE_COUNT] = 0
    bv[p, B_VOTE_LANES] = 0
    for k in range(bs_l1.shape[1]):
        bs_l1[p, k] = 0.0
    if cfg[K_RACE] != 0:
        for k in range(l1_shadow.shape[1]):
            for j in range(l1_shadow.shape[2]):
                l1_shadow[p, k, j] = -1
    for w in range(wpb):
        g = p * wpb + w
        for r in range(seed_regs.shape[0]):       # element loops: no temporaries (no NRT)
            for lane in range(32):
                regs[g, r, lane] = seed_regs[r, lane]
            ready[g, r] = 0
            producer[g, r] = -1
        start_warp(wst[g], lanes, w)
        for k in range(N_WV):
            wv[g, k] = 0
        wv[g, W_NEXT] = now         # a block that waited for a core: no stall of its first
        wv[g, W_CAUSE_PC] = -1
        wv[g, W_PEND_HEAD] = -1
        wv[g, W_PEND_TAIL] = -1
        wv[g, W_PHASE] = PH_DECIDE
        wv[g, W_ALIVE] = wst[g, 1]
        st[S_UNFINISHED] += 1
        schedule(st, ht, hk, hv, now, URGENT, EV_WARP, g)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _fault(g, now, st, ht, hk, hv, wv, wfault, kind, pc):
    """Warp g failed (wfault[g] says why): its process fails with an event at now, as in
    SimPy, and the failure travels to the launch (EV_FAIL)."""
    wv[g, W_PHASE] = PH_DONE
    wfault[g, F_KIND] = kind
    wfault[g, F_PC] = pc
    wfault[g, F_CYCLE] = now
    schedule(st, ht, hk, hv, now, NORMAL, EV_FAIL, g * 4)


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _lane_checks(cfg, g, w, block_id, epoch, pc, now, mask, n, idx, is_write, space, hbm_init,
                 shadow, wfault):
    """initcheck and racecheck of a lane access (KernelChecks.lane_access): addresses idx[:n]
    (HBM bytes, L1 words) by the active lanes of mask. Returns the FK_* failure, or 0."""
    if cfg[K_INIT] != 0 and space == MEM_HBM and not is_write:
        for q in range(n):
            if init_get(hbm_init, idx[q]) == 0:
                k = q
                for lane in range(32):
                    if (mask >> lane) & 1:
                        if k == 0:
                            wfault[g, F_LANE] = lane
                            break
                        k -= 1
                wfault[g, F_WORD] = idx[q]
                return FK_UNINIT
    if cfg[K_RACE] != 0:
        if race_check(shadow, idx, n, mask, is_write, block_id * 4096 + w, block_id, epoch, 0,
                      pc, now, wfault[g, F_REPORT:F_REPORT + 8],
                      cfg[K_HBM_SHIFT] if space == MEM_HBM else 0):
            wfault[g, F_WRITE] = 1 if is_write else 0
            wfault[g, F_SPACE] = space
            return FK_RACE
    return 0


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def _exit_check(cfg, g, p, bv, bs_waitq, wst, wpb, wfault):
    """synccheck at a warp's end (KernelChecks.warp_exit): may it end while others of its
    block wait at a barrier? Returns FK_SYNC_EXIT, or 0."""
    if cfg[K_SYNC] == 0 or bv[p, B_ARRIVED] == 0:
        return 0
    bits = 0
    first = wpb
    for q in range(bv[p, B_ARRIVED]):
        bits |= np.int64(1) << bs_waitq[p, q]
        first = min(first, bs_waitq[p, q])
    wfault[g, F_WAITING] = bits
    wfault[g, F_WAIT_PC] = wst[p * wpb + first, 0]
    return FK_SYNC_EXIT


@njit(cache=True, error_model="numpy", **NO_REFCOUNT)
def engine_run(budget, cfg, st, ht, hk, hv, keys, vals, lk_s, lk_e, lk_n, bw, code, imm, pc_fam, pc_op,
               pc_pipe, pc_lat, pc_ii, pc_srcs, pc_dst, pc_mem, seed_regs, regs, ready,
               producer, wst, stacks, wv, bv, bs_waitq, bs_rel, bs_l1, hbm, hbm_init, tbase,
               tcount, tbytes, cm_idx, cm_val, cm_n, cm_tgt, cm_free, rec, ctx, info, pend_idx,
               pend_val, hbm_shadow, l1_shadow, wfault, totals):
    """Process events in SimPy's order until none is left, the cycle limit, a fault, a full
    buffer or `budget` events. Returns an ENG_* code.

    One long function on purpose: the warp loop below is LaunchSimulation._warp, written
    inline because numba cannot inline it and a call passing its ~50 arrays cost more than
    the rest of an event. Each branch names the SimPy code it mirrors."""
    wpb = cfg[K_WPB]
    limit = cfg[K_MAX_CYCLES]
    checks = cfg[K_RACE] != 0 or cfg[K_INIT] != 0
    while budget > 0:
        n = st[S_HEAP_N]
        if n == 0:
            return ENG_DONE
        # SimPy's run(until=limit) stops at its own URGENT event, numbered after the slots'
        if ht[0] > limit or (ht[0] == limit and hk[0] >= st[S_LIMIT_KEY]):
            return ENG_LIMIT
        # room for what one event can add: a block's wpb warps started, or wpb warps released
        # from a barrier, each recording the barrier and (a zero-latency barrier) issuing one
        # more instruction with a store and a timeout
        if n + 3 * wpb + 8 > ht.shape[0]:
            st[S_GROW] = GROW_HEAP
            return ENG_GROW
        if cfg[K_RECORD] != 0 and st[S_REC_N] + 2 * wpb + 2 > rec.shape[0]:
            st[S_GROW] = GROW_RECORDS
            return ENG_GROW
        if st[S_COMMIT_FREE] < wpb + 2:
            st[S_GROW] = GROW_COMMITS
            return ENG_GROW
        if 2 * (st[S_TABLE_USED] + cfg[K_BOOK_ROOM]) > keys.shape[0]:
            st[S_GROW] = GROW_TABLE
            return ENG_GROW
        budget -= 1
        st[S_EVENTS] += 1
        last = _heap_pop(ht, hk, hv, st)
        now = ht[last]
        kind = hv[last, 0]
        arg = hv[last, 1]
        st[S_NOW] = now
        if kind == EV_WARP or kind == EV_RELEASE:
            # a warp resumes, or the warps a block barrier released resume one after another
            # in the order they arrived (SimPy's callbacks of the release event)
            count = 1 if kind == EV_WARP else bv[arg, B_RELEASED]
            for q in range(count):
                g = arg if kind == EV_WARP else arg * wpb + bs_rel[arg, q]
                # ---- run warp g from cycle now until it waits (LaunchSimulation._warp's loop)
                cores = cfg[K_CORES]
                wpb = cfg[K_WPB]
                p = g // wpb
                w = g - p * wpb
                core = p % cores
                block_id = bv[p, B_BLOCK]
                width = cfg[K_WIDTH]
                record = cfg[K_RECORD] != 0
                st_lat = cfg[K_STORE_LAT]
                state = wst[g]
                wregs = regs[g]
                wready = ready[g]
                wprod = producer[g]
                wstack = stacks[g]
                l1 = bs_l1[p]
                phase = wv[g, W_PHASE]
                if phase == PH_RETIRE:
                    why = _exit_check(cfg, g, p, bv, bs_waitq, wst, wpb, wfault)
                    if why:
                        _fault(g, now, st, ht, hk, hv, wv, wfault, why, state[0])
                    else:
                        process_ends(g, now, st, ht, hk, hv, wv, W_PHASE)
                    continue
                set_block_ctx(ctx, block_id, cfg[K_GX], cfg[K_GY], cfg[K_GZ], cfg[K_BX], cfg[K_BY],
                              cfg[K_BZ], w)
                while True:
                    pc = state[0]
                    fam = pc_fam[pc]
                    if phase == PH_DECIDE:
                        # ---- when can this instruction issue?
                        t = wv[g, W_NEXT]
                        if t < now:
                            t = now
                        t, cause, cause_pc = operands_ready(pc, t, pc_srcs, pc_dst, wready, wprod)
                        if (fam == F_SYNC or fam == F_ATOMIC) and wv[g, W_STORE_DONE] > t:
                            t = wv[g, W_STORE_DONE]
                            cause = CA_BARRIER
                        booked = book(keys, vals, st, cores, core, t, pc_pipe[pc], pc_ii[pc], width)
                        c = booked >> 4
                        why = booked & 15
                        if why != 0:
                            cause = why
                            cause_pc = -1
                        if c > now:
                            wv[g, W_CAUSE] = cause
                            wv[g, W_CAUSE_PC] = cause_pc
                            wv[g, W_PHASE] = PH_ISSUE
                            schedule(st, ht, hk, hv, c, NORMAL, EV_WARP, g)
                            break
                    elif phase == PH_BARRIER:
                        # released: the block barrier issues now (its wait since it arrived a
                        # barrier_block stall) and completes now + its latency
                        waited = now - wv[g, W_ARRIVED]
                        lat = pc_lat[pc]
                        complete = now + lat
                        cause = CA_BARRIER_BLOCK if waited > 0 else wv[g, W_CAUSE]
                        cause_pc = -1 if waited > 0 else wv[g, W_CAUSE_PC]
                        _record(rec, totals, st, record, block_id, w, core, pc, now, complete,
                                wv[g, W_STALL] + waited, cause, cause_pc, state[1], 0, 0)
                        wv[g, W_NEXT] = complete
                        wv[g, W_CAUSE] = CA_NONE
                        wv[g, W_CAUSE_PC] = -1
                        if pc_op[pc] != OP_BARRIER_BLOCK:         # a voting barrier's result
                            write_vote(pc, code, wregs, state[1], bv[p, B_VOTE_RES_COUNT],
                                       bv[p, B_VOTE_RES_LANES])
                            wready[pc_dst[pc]] = complete
                            wprod[pc_dst[pc]] = pc
                        state[0] = pc + 1
                        phase = PH_DECIDE
                        continue
                    # ---- issue at cycle now
                    phase = PH_DECIDE
                    stall = now - wv[g, W_NEXT] if now > wv[g, W_NEXT] else 0
                    lat = pc_lat[pc]
                    wv[g, W_NEXT] = now + 1
                    complete = now + lat
                    moved = 0
                    mask = state[1]
                    next_pc = pc + 1
                    op = pc_op[pc]
                    st[S_WARP_INSTRS] += 1
                    if fam == F_CONTROL:
                        next_pc = control_step(pc, op, code, imm, wregs, state, wstack)
                    elif fam <= F_FMA_STORE or fam >= F_WARP:     # alu, id, lane memory, warp, atomic, local
                        # one call site: the executor is inlined here once
                        if execute(pc, code, imm, wregs, mask, ctx, hbm, tbase, tcount, tbytes, l1,
                                   cfg[K_SECTOR], pend_idx, pend_val, info) != ST_OK:
                            wfault[g, F_LANE] = info[0]
                            wfault[g, F_WORD] = info[1]
                            wfault[g, F_COUNT] = info[2]
                            wfault[g, F_HI] = info[3]
                            _fault(g, now, st, ht, hk, hv, wv, wfault, FK_OOB, pc)
                            break
                        d = pc_dst[pc]
                        if fam == F_ALU or fam == F_ID or fam == F_WARP or fam == F_LOCAL:
                            if d >= 0:                            # a LOCAL_STORE has no result
                                wready[d] = complete
                                wprod[d] = pc
                        elif fam == F_LOAD or fam == F_ATOMIC:
                            moved = info[3]
                            # its own stores still in flight override memory (_forward_own_stores);
                            # an atomic runs after they landed (it waited for W_STORE_DONE)
                            s = wv[g, W_PEND_HEAD] if fam == F_LOAD else -1
                            while s >= 0:
                                if (cm_tgt[s, L_TGT] < 0) == (pc_mem[pc] == MEM_HBM):
                                    forward_store(pc, code, wregs, mask, pend_idx, info[4],
                                                  cm_idx, cm_val, s, cm_n[s])
                                s = cm_tgt[s, L_NEXT]
                            if pc_mem[pc] == MEM_HBM:
                                complete = now + lat + transfer(lk_s, lk_e, lk_n, core, moved, now, True,
                                                                        bw[0], bw[1], bw[2], now)
                                if fam == F_ATOMIC:               # an atomic writes the words too
                                    for q in range(info[4]):
                                        init_set(hbm_init, pend_idx[q])
                            wready[d] = complete
                            wprod[d] = pc
                            if checks and fam == F_LOAD:          # racecheck does not track atomics
                                why = _lane_checks(cfg, g, w, block_id, bv[p, B_EPOCH], pc, now, mask,
                                                   info[4], pend_idx, False, pc_mem[pc], hbm_init,
                                                   hbm_shadow if pc_mem[pc] == MEM_HBM else l1_shadow[p],
                                                   wfault)
                                if why:
                                    _fault(g, now, st, ht, hk, hv, wv, wfault, why, pc)
                                    break
                        elif fam == F_CHECK:
                            pass                                  # a check that held: no result, no memory
                        else:
                            n_pairs = info[4]
                            if checks:
                                why = _lane_checks(cfg, g, w, block_id, bv[p, B_EPOCH], pc, now, mask,
                                                   n_pairs, pend_idx, True, pc_mem[pc], hbm_init,
                                                   hbm_shadow if pc_mem[pc] == MEM_HBM else l1_shadow[p],
                                                   wfault)
                                if why:
                                    _fault(g, now, st, ht, hk, hv, wv, wfault, why, pc)
                                    break
                            if fam == F_FMA_STORE:
                                wready[d] = complete
                                wprod[d] = pc
                                complete = complete + st_lat
                            moved = info[3]
                            to_hbm = pc_mem[pc] == MEM_HBM
                            if to_hbm:
                                start = complete - lat if fam == F_STORE else complete - st_lat
                                complete += transfer(lk_s, lk_e, lk_n, core, moved, start, False, bw[0], bw[1],
                                                     bw[2], now)
                            # the values land at completion (in SimPy: a timeout with the commit as callback)
                            nf = st[S_COMMIT_FREE] - 1
                            st[S_COMMIT_FREE] = nf
                            slot = cm_free[nf]
                            for q in range(n_pairs):
                                cm_idx[slot, q] = pend_idx[q]
                                cm_val[slot, q] = pend_val[q]
                                if to_hbm:
                                    init_set(hbm_init, pend_idx[q])   # initcheck: written once it issues
                            cm_n[slot] = n_pairs
                            cm_tgt[slot, L_TGT] = -1 if to_hbm else p
                            cm_tgt[slot, L_DTYPE] = code[pc, C_DTYPE]
                            # append to the warp's stores in flight
                            tail = wv[g, W_PEND_TAIL]
                            cm_tgt[slot, L_OWNER] = g
                            cm_tgt[slot, L_PREV] = tail
                            cm_tgt[slot, L_NEXT] = -1
                            if tail >= 0:
                                cm_tgt[tail, L_NEXT] = slot
                            else:
                                wv[g, W_PEND_HEAD] = slot
                            wv[g, W_PEND_TAIL] = slot
                            schedule(st, ht, hk, hv, complete, NORMAL, EV_COMMIT, slot)
                            if complete > wv[g, W_STORE_DONE]:
                                wv[g, W_STORE_DONE] = complete
                    elif fam == F_SYNC and (op == OP_BARRIER_BLOCK or op == OP_BARRIER_BLOCK_COUNT
                                            or op == OP_BARRIER_BLOCK_AND or op == OP_BARRIER_BLOCK_OR):
                        alive = wv[g, W_ALIVE] & ~state[2]
                        if cfg[K_SYNC] != 0 and mask != alive:
                            wfault[g, F_MASK] = mask
                            wfault[g, F_ALIVE] = alive
                            _fault(g, now, st, ht, hk, hv, wv, wfault, FK_SYNC_BARRIER, pc)
                            break
                        voting = op != OP_BARRIER_BLOCK
                        if voting:
                            vc, vl = vote_count(pc, code, imm, wregs, mask)
                            bv[p, B_VOTE_COUNT] += vc
                            bv[p, B_VOTE_LANES] += vl
                        arrived = bv[p, B_ARRIVED] + 1
                        if arrived >= wpb:
                            # the last warp releases the others (in the order they arrived) and goes on
                            for q in range(arrived - 1):
                                bs_rel[p, q] = bs_waitq[p, q]
                            bv[p, B_RELEASED] = arrived - 1
                            bv[p, B_ARRIVED] = 0
                            bv[p, B_EPOCH] += 1
                            bv[p, B_VOTE_RES_COUNT] = bv[p, B_VOTE_COUNT]
                            bv[p, B_VOTE_RES_LANES] = bv[p, B_VOTE_LANES]
                            bv[p, B_VOTE_COUNT] = 0
                            bv[p, B_VOTE_LANES] = 0
                            schedule(st, ht, hk, hv, now, NORMAL, EV_RELEASE, p)
                            wv[g, W_NEXT] = complete
                            if voting:
                                write_vote(pc, code, wregs, mask, bv[p, B_VOTE_RES_COUNT],
                                           bv[p, B_VOTE_RES_LANES])
                                wready[pc_dst[pc]] = complete
                                wprod[pc_dst[pc]] = pc
                            _record(rec, totals, st, record, block_id, w, core, pc, now, complete,
                                    stall, wv[g, W_CAUSE], wv[g, W_CAUSE_PC], mask, 0, 0)
                            wv[g, W_CAUSE] = CA_NONE
                            wv[g, W_CAUSE_PC] = -1
                            state[0] = pc + 1
                            continue
                        bv[p, B_ARRIVED] = arrived
                        bs_waitq[p, arrived - 1] = w
                        wv[g, W_ARRIVED] = now
                        wv[g, W_STALL] = stall
                        wv[g, W_PHASE] = PH_BARRIER
                        break
                    _record(rec, totals, st, record, block_id, w, core, pc, now, complete, stall,
                            wv[g, W_CAUSE], wv[g, W_CAUSE_PC], mask, moved, 0)
                    wv[g, W_CAUSE] = CA_NONE
                    wv[g, W_CAUSE_PC] = -1
                    if next_pc < 0:
                        # retire: the warp ends once its stores are done, every result it
                        # computed is (an unused one still occupies its pipe until then) and
                        # EXIT's cycle is over
                        done = max(wv[g, W_STORE_DONE], complete)
                        for r in range(wready.shape[0]):
                            if wready[r] > done:
                                done = wready[r]
                        if done > now:
                            wv[g, W_PHASE] = PH_RETIRE
                            schedule(st, ht, hk, hv, done, NORMAL, EV_WARP, g)
                        else:
                            why = _exit_check(cfg, g, p, bv, bs_waitq, wst, wpb, wfault)
                            if why:
                                _fault(g, now, st, ht, hk, hv, wv, wfault, why, pc)
                            else:
                                process_ends(g, now, st, ht, hk, hv, wv, W_PHASE)
                        break
                    state[0] = next_pc
            if kind == EV_RELEASE:
                bv[arg, B_RELEASED] = 0
        elif kind == EV_COMMIT:
            m = cm_n[arg]
            if cm_tgt[arg, L_TGT] < 0:
                for q in range(m):
                    gm_store(hbm, cm_idx[arg, q], cm_tgt[arg, L_DTYPE], cm_val[arg, q])
            else:
                l1 = bs_l1[cm_tgt[arg, L_TGT]]
                for q in range(m):
                    l1[cm_idx[arg, q]] = cm_val[arg, q]
            # unlink it from its warp's stores in flight
            g = cm_tgt[arg, L_OWNER]
            prev = cm_tgt[arg, L_PREV]
            nxt = cm_tgt[arg, L_NEXT]
            if prev >= 0:
                cm_tgt[prev, L_NEXT] = nxt
            else:
                wv[g, W_PEND_HEAD] = nxt
            if nxt >= 0:
                cm_tgt[nxt, L_PREV] = prev
            else:
                wv[g, W_PEND_TAIL] = prev
            cm_free[st[S_COMMIT_FREE]] = arg
            st[S_COMMIT_FREE] += 1
        elif kind == EV_WARP_END:
            p = arg // wpb
            if bv[p, B_FAILED] == 0:
                bv[p, B_ENDED] += 1
                if bv[p, B_ENDED] == wpb:
                    schedule(st, ht, hk, hv, now, NORMAL, EV_COND, p)
        elif kind == EV_COND:
            schedule(st, ht, hk, hv, now, NORMAL, EV_BLOCK_END, arg)
        elif kind == EV_BLOCK_END or kind == EV_SLOT:
            slot_takes_next_block(kind, arg, st, ht, hk, hv, now, bv, cfg[K_N_BLOCKS])
        elif kind == EV_BLOCK:
            _init_block(arg, now, cfg, st, ht, hk, hv, seed_regs, regs, ready, producer, wst, wv,
                        bv, bs_l1, l1_shadow)
        else:                                              # EV_FAIL
            # arg = g * 4 + stage. A failed warp process fails its block's all_of (stage 1),
            # which fails the block's process (2), which fails the slot's (3): nobody waits
            # for that one, so SimPy raises. A second fault in a block whose all_of already
            # failed has nobody to defuse it: SimPy raises at once.
            g = arg >> 2
            stage = arg & 3
            p = g // wpb
            if stage == 0:
                if bv[p, B_FAILED] != 0:
                    st[S_FAULT_G] = g
                    return ENG_FAULT
                bv[p, B_FAILED] = 1
            if stage == 3:
                st[S_FAULT_G] = g
                return ENG_FAULT
            schedule(st, ht, hk, hv, now, NORMAL, EV_FAIL, arg + 1)
    return ENG_YIELD
