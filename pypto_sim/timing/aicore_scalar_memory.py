"""The AI core's scalar loads and stores of UB and GM in the SimPy model (isa/56_scalar_memory.toml;
values and the DataCache: exec/scalar_memory.py). An access happens when the scalar unit issues
it: a UB word as the vector and MTE pipes have left it by that cycle, a GM element through the
unit's DataCache. Priced by the machine table's rows (a hit, a UB access) plus, for a line filled,
the LOAD row's GM round trip (less the L2's miss extra when the L2 holds the line, as a TLOAD's)
and, for a dcci that writes lines back, the STORE row's latency once;
the scalar unit waits for both (a blocking cache, assumed: latency_tables/ascend910b.toml).
A dirty line evicted by a fill is written back at once and not priced; the lines still dirty when
the unit's program ends are written back then (isa/data_cache.py), also not priced.

With sync="auto" a scalar UB access waits for the tile operations in flight on its tile, as a
tile operation does (PTO-Auto inserts the flags to and from PIPE_S). check="race": a UB access is a scalar-queue access of its
word, a GM access one of its element (at issue: the cache's delays are checked apart), both
ordered by flags as any pipe's; and the DataCache's own hazards are RaceErrors: a read of a
cached element GM has changed since (a missing dcci), a DMA reading bytes a cache holds dirty
or writing into a line a cache holds dirty, and a write-back overwriting GM bytes changed since
the line was cached (whole lines: Ascend C's WriteGmByPassDCache warning)."""
from __future__ import annotations

import numpy as np

from ..errors import RaceError
from ..exec import scalar_memory
from ..exec.aicore_tiles import GM_READ, GM_WRITE, UNIT_NAMES, TileView
from ..isa import PIPES
from ..ir.program import C_AUX
from ..isa.data_cache import LINE_BYTES, line_of
from .aicore_races import gm_window, race_check, windows_share
from .records import CAUSE

SCALAR = PIPES.index("scalar")


def scalar_memory_wait(sim, pc, blk, w, t, cause, cause_pc) -> tuple:
    """(issue cycle, cause, cause pc) of scalar memory instruction pc of unit w, not before t:
    with sync="auto" a UB access waits for the tile operations in flight on its tile, as a tile
    operation would (a read for their writes, a write for their reads and writes)."""
    if sim.pc_name[pc] not in ("SLD_UB", "SST_UB") or sim.prog.sync == "manual":
        return t, cause, cause_pc
    ready, why, why_pc = sim.aicore_pipes.scalar_hazard(pc, blk.aicore.p, w)
    return (ready, CAUSE[why], why_pc) if ready > t else (t, cause, cause_pc)


def scalar_memory_access(sim, pc, blk, w, ws, now, complete) -> int:
    """Unit w issues scalar memory instruction pc at cycle now (its table latency ends at
    complete): run it on the unit's UB and DataCache; return its completion, which the scalar
    unit waits for when it filled a line or wrote lines back."""
    ai = blk.aicore
    cache = ai.caches[w]
    access = scalar_memory.run(sim, pc, w, blk.coords, ws.regs, ai.array(w), cache,
                               init_check=bool(sim.checks and sim.checks.init))
    written = cache.take_written()
    scalar_memory.mark_written_back(sim.hbm_init, written)
    if ai.race is not None:
        _race(sim, ai, blk, w, pc, access, written)
    if access.missed:
        complete += sim.m.latency("LOAD") - _l2_saving(sim, pc, access)
    if access.written_back and sim.pc_name[pc] == "DCCI":
        complete += sim.m.latency("STORE")
    # a TPRINT's reads, one an issue slot after its first, and each GM line it fills a round trip
    if access.reads > 1 or access.fills:
        complete += (access.reads - 1) * sim.m.issue_interval("SLD_UB") + access.fills * sim.m.latency("LOAD")
    if complete > now + sim.pc_lat[pc]:
        ws.next_issue = max(ws.next_issue, complete)
    return complete


def _l2_saving(sim, pc, access) -> int:
    """A line fill through the launch's L2 (timing/l2.py, the AI cores' copy in AICorePipes, as a
    TLOAD's): the L2's miss extra saved when it holds the line, which it then holds (LRU)."""
    if sim.l2 is None:
        return 0
    slot, item = int(sim.enc.code[pc, C_AUX]), access.nbytes
    first = (line_of(access.address) - int(sim.tbase[slot])) // item
    _hits, misses = sim.aicore_pipes.l2.access_window(int(sim.tbase[slot]), first, 1, LINE_BYTES // item,
                                                       LINE_BYTES // item, item)
    return sim.m.l2_miss_extra_latency if misses == 0 else 0


def write_back_at_end(sim, blk, w):
    """The unit's program ended: its DataCache's dirty lines reach GM (isa/data_cache.py)."""
    cache = blk.aicore.caches[w]
    cache.write_back_all()
    written = cache.take_written()
    scalar_memory.mark_written_back(sim.hbm_init, written)
    if blk.aicore.race is not None:
        stores = {line: sim.checks.dirty_lines[line][(blk.id, w)][0] for line, _m, _c in written}
        written_back(sim, blk, w, -1, written)
        # nothing of the launch is ordered after a program's end (a flag or syncall before it does not
        # carry this write-back): for the other units these bytes stay as if dirty
        for line, mask, _changed in written:
            sim.checks.dirty_lines.setdefault(line, {})[(blk.id, w)] = (stores[line], mask, blk.coords, True)


# ---------------------------------------------------------------- check="race"
def _race(sim, ai, blk, w, pc, access, written):
    name = sim.pc_name[pc]
    if access.word >= 0:                                   # SLD_UB / SST_UB: the word, as a 1 x 1 tile
        view = _word_view(sim, access.word)
        reads, writes = ([view], []) if name == "SLD_UB" else ([], [view])
        race_check(sim, ai, blk, w, SCALAR, pc, reads, writes, None)
    elif access.address >= 0:                               # SLD_GM / SST_GM: the element
        slot = int(sim.enc.code[pc, C_AUX])
        item = access.nbytes
        element = (access.address - int(sim.tbase[slot])) // item
        is_write = GM_WRITE if name == "SST_GM" else GM_READ
        race_check(sim, ai, blk, w, SCALAR, pc, [], [], (slot, element, 1, 1, 1, is_write, item))
        if access.stale:
            raise _stale_read(sim, blk, w, pc, slot, element)
        _other_dirty(sim, blk, w, pc, access, slot, element)
        if name == "SST_GM":
            line = line_of(access.address)
            sim.checks.dirty_lines.setdefault(line, {})[(blk.id, w)] = (pc, ai.caches[w].lines[line][1],
                                                                        blk.coords, False)
    written_back(sim, blk, w, pc, written)


def _other_dirty(sim, blk, w, pc, access, slot, element):
    """A scalar GM access of bytes another unit's DataCache holds dirty: a read gets GM (or this
    unit's copy) without that store, and of two stores to one element the later write-back wins,
    whatever order the units' stores have (two stores to different bytes of a line: the clobber
    check at the second write-back, or here when the first was the end of its unit's program)."""
    line = line_of(access.address)
    lo = access.address - line
    store = sim.pc_name[pc] == "SST_GM"
    for (block_id, unit), (store_pc, mask, coords, at_end) in sim.checks.dirty_lines.get(line, {}).items():
        # a store into a line flushed at a program's end: either whole-line write-back may come last
        if (block_id, unit) != (blk.id, w) and (mask.any() if store and at_end else mask[lo:lo + access.nbytes].any()):
            raise _scalar_on_dirty(sim, blk, w, pc, slot, element, f"{UNIT_NAMES[unit]} of block {coords}",
                                   store_pc, at_end)


def _word_view(sim, word) -> TileView:
    lo, hi, buf = sim.buffer_at(word)
    view = TileView(sim.prog, sim.prog.buffers.index(buf))
    view.base, view.rows, view.cols, view.pitch = word, 1, 1, 1
    return view


def written_back(sim, blk, w, pc, written):
    """Lines unit w's DataCache wrote back (by pc; -1: at its end): no longer dirty, and none may
    have overwritten GM bytes that changed since the line was cached."""
    dirty = sim.checks.dirty_lines
    for line, mask, changed in written:
        owners = dirty.get(line, {})
        store_pc = owners.pop((blk.id, w), (None,))[0]
        if not owners:
            dirty.pop(line, None)
        lost = changed & ~mask           # bytes this unit stored itself replace what changed there
        if lost.any():
            raise _clobber(sim, blk, w, pc, line, lost, store_pc)


def check_dma(sim, blk, w, pc, gm_access):
    """check="race": a tile instruction's GM window (TileOp.gm) against the lines the units'
    DataCaches hold dirty: a read of dirty bytes sees GM without the scalar store, a write into a
    dirty line is overwritten by the line's write-back."""
    dirty = sim.checks.dirty_lines
    if not dirty or gm_access is None:
        return
    slot, off, rows, cols, stride, is_write, item = gm_access
    window = gm_window(sim, slot, off, rows, cols, stride, item)
    for line, owners in dirty.items():
        if line >= window[1] or line + LINE_BYTES <= window[0]:
            continue
        for (_block_id, unit), (store_pc, mask, coords, at_end) in owners.items():
            hit = [(line + a, line + b) for a, b in _runs(mask)] if is_write == GM_READ else [(line, line + LINE_BYTES)]
            if any(windows_share(window, (a, b, 1, b - a, b - a)) for a, b in hit):
                raise _dma_on_dirty(sim, blk, w, pc, line, f"{UNIT_NAMES[unit]} of block {coords}", store_pc,
                                    is_write == GM_READ, at_end)


def _runs(mask) -> list:
    """[start, end) of each run of True in mask."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.astype(np.int8), [0]))))
    return list(zip(edges[::2], edges[1::2]))


def _tensor_slots(sim, lo, hi):
    """(name, first element, last element) of each tensor with bytes in [lo, hi)."""
    for slot, (base, item) in enumerate(zip(sim.tbase, sim.checks.tensor_items)):
        base, end = int(base), int(base) + int(sim.tcount[slot]) * item
        if base < hi and lo < end:
            yield sim.tensor_names[slot], (max(lo, base) - base) // item, (min(hi, end) - 1 - base) // item


def _line_text(sim, line) -> str:
    """The 64-byte line at GM byte line as the user's elements: "the 64-byte line of out[0..15]"."""
    for name, lo, hi in _tensor_slots(sim, line, line + LINE_BYTES):
        return f"the 64-byte line of {name}[{lo}..{hi}]"
    return f"the 64-byte line at GM byte {line}"


def _elements_text(sim, line, changed) -> str:
    """The elements whose bytes changed, as "g[1]" or "g[1..3]"."""
    at = line + np.flatnonzero(changed)
    for name, lo, hi in _tensor_slots(sim, int(at[0]), int(at[-1]) + 1):
        return f"{name}[{lo}]" if lo == hi else f"{name}[{lo}..{hi}]"
    return f"GM bytes {int(at[0])}..{int(at[-1])}"


def _param(sim, slot) -> str:
    """The kernel's name for tensor argument slot (what a hint's kernel code writes)."""
    return [a.name for a in sim.prog.args if a.kind == "tensor"][slot]


def _where(sim, blk, w, pc) -> str:
    if pc < 0:
        return f"the end of {UNIT_NAMES[w]}'s program (block {blk.coords})"
    return f"{sim.prog.instrs[pc].op} at line {sim.prog.instrs[pc].line} ({UNIT_NAMES[w]} of block {blk.coords})"


def _race_error(sim, blk, w, pc, message, hint) -> RaceError:
    line = sim.prog.instrs[pc].line if pc >= 0 else None
    return RaceError(f"racecheck: {message}", kernel=sim.kernel_name, file=sim.prog.file, line=line,
                     block=blk.coords, warp=w, unit=UNIT_NAMES[w], lane=None, hint=hint)


def _stale_read(sim, blk, w, pc, slot, element) -> RaceError:
    name = sim.tensor_names[slot]
    return _race_error(
        sim, blk, w, pc, f"{_where(sim, blk, w, pc)} reads {name}[{element}] from its DataCache, but GM's value "
        "changed since the unit cached that line: the scalar unit reads the stale copy (DMA and the other "
        "units do not update a DataCache)",
        f"pto.dcci({_param(sim, slot)} + {element}) before the read (after the flag or syncall that orders it "
        "after the write)")


def _clobber(sim, blk, w, pc, line, changed, store_pc) -> RaceError:
    store = f" (its scalar store at line {sim.prog.instrs[store_pc].line})" if store_pc is not None else ""
    return _race_error(
        sim, blk, w, pc if pc >= 0 else store_pc if store_pc is not None else -1,
        f"at {_where(sim, blk, w, pc)} the DataCache writes back {_line_text(sim, line)}{store}, whole, over "
        f"{_elements_text(sim, line, changed)}, which changed in GM since the unit cached the line (another unit's "
        "write-back or a DMA): the new values are lost",
        "keep data that different units or DMA write in different 64-byte lines, or pto.dcci the line before "
        "the others write it and after this unit's stores")


# the line was written back when its unit's program ended: nothing of the launch is ordered after that
AT_END = (" (written back only when that unit's program ended, which no flag or syncall orders before "
          "anything: the device's flush at the program's end may come after this access)")


def _scalar_on_dirty(sim, blk, w, pc, slot, element, owner, store_pc, at_end) -> RaceError:
    name, sins = sim.tensor_names[slot], sim.prog.instrs[store_pc]
    reads = sim.pc_name[pc] == "SLD_GM"
    what = ("GM does not hold that store yet, and this unit's DataCache never sees it" if reads else
            "both lines are written back whole, and the later write-back wins, whatever order the stores had")
    end = AT_END if at_end else ""
    return _race_error(
        sim, blk, w, pc, f"{_where(sim, blk, w, pc)} {'reads' if reads else 'writes'} {name}[{element}], whose "
        f"64-byte line {owner}'s DataCache holds dirty (its scalar store at line {sins.line}){end}: {what}",
        f"pto.dcci({_param(sim, slot)} + {element}) on {owner} after line {sins.line}, before what orders line "
        f"{sim.prog.instrs[pc].line} after it")


def _dma_on_dirty(sim, blk, w, pc, line, owner, store_pc, reads, at_end) -> RaceError:
    ins, sins = sim.prog.instrs[pc], sim.prog.instrs[store_pc]
    end = AT_END if at_end else ""
    what = (f"reads bytes of {_line_text(sim, line)} that the scalar store at line {sins.line} ({owner}) "
            f"left dirty in its DataCache{end}: GM does not hold them yet" if reads else
            f"writes into {_line_text(sim, line)}, which {owner}'s DataCache holds dirty (its scalar store "
            f"at line {sins.line}){end}: the line's write-back, whole, will overwrite what it writes")
    return _race_error(sim, blk, w, pc, f"{ins.op} at line {ins.line} ({UNIT_NAMES[w]} of block {blk.coords}) {what}",
                       f"pto.dcci(...) of the stored element after line {sins.line}, before what orders "
                       f"line {ins.line} after it")
