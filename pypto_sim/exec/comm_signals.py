"""The communication signals' values (isa/58_comm_signals.toml): pto-isa's TNOTIFY, TWAIT and TTEST
as A2/A3 builds them (include/pto/comm/a2a3/TNotify.hpp, TWait.hpp, TTest.hpp at 3186c381), on the
launch's HBM bytes through the unit's DataCache (exec/scalar_memory.py; rules: isa/data_cache.py).

- TNOTIFY Set: dcci of the signal's line, a plain scalar store (which fills the line into the
  DataCache and changes the cached copy), dcci (the line written back to GM, whole). AtomicAdd:
  dcci, st_atomic (the add happens in GM, int32 wrapping, past the DataCache), dcci.
- TWAIT / TTEST read the region's elements in row order, each after a dcci of its line (so each
  read fills the line afresh from GM), up to the first that fails ``element <cmp> value``; TTEST
  answers after one pass, TWAIT passes again until one pass sees every element satisfied.

The functional executor runs each as one step (``run``); the SimPy model splits them in time
(timing/aicore_signals.py: a notify's store lands after its line fill, a wait reads each element
when the header's loop reads it) over the same pieces: ``region``, ``read``, ``notify_start`` and
``notify_land``. The enums and the comparison are isa/comm_signal_modes.py's."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import LaunchError, OutOfBoundsError, UninitializedReadError
from ..ir.program import C_AUX, C_DST
from . import gm
from .aicore_tiles import UNIT_NAMES, value_operands
from .scalar_memory import mark_written_back
from ..isa.comm_signal_modes import CMP_TEXT, OP_SET, SPIN_LIMIT, satisfied

WAIT, PAUSE = "wait", "pause"          # run()'s outcomes besides None (go on)
ITEM = 4                     # the signals are int32 (the headers' static_assert)


class Region:
    """A TWAIT / TTEST's signal region at run time: its tensor slot, the element offsets and
    byte addresses it reads in order (row by row), the comparison and the value."""

    __slots__ = ("slot", "elements", "addresses", "cmp", "target", "rows", "cols", "stride")

    def __init__(self, slot, elements, addresses, cmp, target, rows, cols, stride):
        self.slot, self.elements, self.addresses = slot, elements, addresses
        self.cmp, self.target, self.rows, self.cols, self.stride = cmp, target, rows, cols, stride


def region(ctx, pc, unit, coords, regs) -> Region:
    """Decode TWAIT / TTEST pc of unit (registers regs): the region it reads. Raises LaunchError
    for a shape that is not positive and OutOfBoundsError for an element outside the tensor."""
    offset, target, rows, cols, stride = (int(v) for v in value_operands(ctx.enc, pc, regs, 5))
    slot, cmp = (int(v) for v in ctx.enc.code[pc, C_AUX:C_AUX + 2])
    if rows < 1 or cols < 1 or stride < 0:
        ins = ctx.prog.instrs[pc]
        raise LaunchError(
            f"pto.{ins.op.lower()} at line {ins.line} on {UNIT_NAMES[unit]} of block {coords}: the signal region "
            f"is {rows} x {cols} with stride {stride}, but TWait.hpp / TTest.hpp loop over every element of a "
            "shape whose dimensions are positive", kernel=ctx.kernel_name, file=ctx.prog.file, line=ins.line,
            hint="pass rows >= 1, cols >= 1 and a stride >= 0 (the elements between rows)")
    elements = [offset + r * stride + c for r in range(rows) for c in range(cols)]
    _check_bounds(ctx, pc, unit, coords, slot, elements)
    base = int(ctx.tbase[slot])
    return Region(slot, elements, [base + e * ITEM for e in elements], cmp, target, rows, cols, stride)


def _check_bounds(ctx, pc, unit, coords, slot, elements):
    count = int(ctx.tcount[slot])
    bad = next((e for e in elements if not 0 <= e < count), None)
    if bad is None:
        return
    ins = ctx.prog.instrs[pc]
    name = ctx.tensor_names[slot]
    raise OutOfBoundsError(
        f"{ins.op} out of bounds at line {ins.line} on {UNIT_NAMES[unit]} of block {coords}: its signal "
        f"{name}[{bad}] lies outside tensor '{name}' of {count} elements (valid 0..{count - 1})",
        kernel=ctx.kernel_name, file=ctx.prog.file, line=ins.line, block=coords, warp=unit, unit=UNIT_NAMES[unit],
        lane=None, offset=bad, count=count, tensor=name,
        hint="keep the signal region (rows x cols, stride apart) inside its tensor")


def read(ctx, pc, unit, coords, cache, slot, element, address, init_check=False) -> int:
    """One element read of TWAIT / TTEST's loop: dcci of its line (a dirty line written back),
    then the read, which fills the line from GM. initcheck: a never-written element is an error."""
    if cache.clean_invalidate(address):
        mark_written_back(ctx.hbm_init, cache.written)     # (the caller takes them for its checks)
    if init_check and not gm.init_test(ctx.hbm_init, np.array([address]))[0]:
        raise _uninitialised(ctx, pc, unit, coords, slot, element, "reads")
    raw, _missed = cache.read(address, ITEM)
    return int(raw.view(np.int32)[0])


def notify_operands(ctx, pc, regs) -> tuple:
    """(tensor slot, element, byte address, op, value) of TNOTIFY pc on a unit with regs."""
    offset, value = (int(v) for v in value_operands(ctx.enc, pc, regs, 2))
    slot, op = (int(v) for v in ctx.enc.code[pc, C_AUX:C_AUX + 2])
    return slot, offset, int(ctx.tbase[slot]) + offset * ITEM, op, value


def notify_start(ctx, pc, unit, coords, regs, cache, init_check=False) -> tuple:
    """TNOTIFY pc's work up to its landing: the first dcci and, for Set, the store into the
    freshly filled line (the DataCache's copy only). Returns notify_operands'."""
    slot, element, address, op, value = operands = notify_operands(ctx, pc, regs)
    _check_bounds(ctx, pc, unit, coords, slot, [element])
    cache.clean_invalidate(address)
    if op == OP_SET:
        raw = np.zeros(ITEM, np.uint8)
        gm.store(raw, np.array([0]), dtypes.int32, [value])
        cache.write(address, raw)
    elif init_check and not gm.init_test(ctx.hbm_init, np.array([address]))[0]:
        raise _uninitialised(ctx, pc, unit, coords, slot, element, "(atomic_add) adds to")
    return operands


def notify_land(ctx, cache, address, op, value) -> None:
    """TNOTIFY's landing: Set's second dcci writes the line back to GM (whole); AtomicAdd's
    st_atomic adds value to the element in GM (int32 wrapping) and marks it written."""
    if op == OP_SET:
        cache.clean_invalidate(address)
        return
    gm.add_int32(ctx.hbm, address, value)
    if ctx.hbm_init is not None:
        gm.init_mark(ctx.hbm_init, np.array([address]))


def scan(ctx, pc, unit, coords, cache, reg: Region, init_check=False) -> tuple:
    """One pass of TWAIT's loop (TTEST's whole loop) at once: (True, -1, 0) when every element
    is satisfied, else (False, the first failing element's index in the region, its value)."""
    for i, (element, address) in enumerate(zip(reg.elements, reg.addresses)):
        value = read(ctx, pc, unit, coords, cache, reg.slot, element, address, init_check)
        if not satisfied(value, reg.cmp, reg.target):
            return False, i, value
    return True, -1, 0


def run(ctx, pc, unit, coords, regs, cache):
    """The functional executor's step for comm_signal instruction pc of unit (its registers regs
    and DataCache): TNOTIFY lands at once and returns PAUSE (the unit lets the others look at the
    signal before it goes on); TTEST writes 1 or 0 to its register (PAUSE after a 0, so that a
    polling loop lets the others run); TWAIT returns WAIT while a pass sees an element that fails
    (the unit waits; ctx.signal_waits keeps which, for the deadlock error), else None."""
    name = ctx.pc_name[pc]
    try:
        if name == "TNOTIFY":
            _slot, _element, address, op, value = notify_start(ctx, pc, unit, coords, regs, cache)
            notify_land(ctx, cache, address, op, value)
            return PAUSE
        reg = region(ctx, pc, unit, coords, regs)
        ok, index, value = scan(ctx, pc, unit, coords, cache, reg)
    finally:
        mark_written_back(ctx.hbm_init, cache.take_written())
    if name == "TTEST":
        regs[ctx.enc.code[pc, C_DST], 0] = 1.0 if ok else 0.0
        return None if ok else PAUSE
    if ok:
        waiting(ctx).pop((coords, unit), None)
        return None
    note_wait(ctx, coords, unit, reg, index, value)
    return WAIT


def waiting(ctx) -> dict:
    """ctx's (block coords, unit) -> what its TWAIT last saw fail: (region, index, value)."""
    if not hasattr(ctx, "signal_waits"):
        ctx.signal_waits = {}
    return ctx.signal_waits


def note_wait(ctx, coords, unit, reg, index, value):
    """Keep what unit's TWAIT saw fail, for the deadlock error."""
    waiting(ctx)[(coords, unit)] = (reg, index, value)


def deadlock_text(ctx, block, unit, pc) -> str:
    """The deadlock error's words for unit of block waiting at TWAIT pc."""
    ins = ctx.prog.instrs[pc]
    seen = waiting(ctx).get((block, unit))
    if seen is None:
        return f"block {block} {UNIT_NAMES[unit]} waits at line {ins.line} (pto.twait) for a signal nothing changes"
    reg, index, value = seen
    name = ctx.tensor_names[reg.slot]
    what = (f"{name}[{reg.elements[0]}]" if len(reg.elements) == 1 else
            f"the {reg.rows} x {reg.cols} region of {name} at [{reg.elements[0]}] (stride {reg.stride})")
    return (f"block {block} {UNIT_NAMES[unit]} waits at line {ins.line} (pto.twait: {what} {CMP_TEXT[reg.cmp]} "
            f"{reg.target}) for {name}[{reg.elements[index]}], which holds {value}, and nothing of the launch "
            f"will change it any more (on the device TWait.hpp's PTO_ASSERT stops the kernel after "
            f"{SPIN_LIMIT:,} spins)")


def _uninitialised(ctx, pc, unit, coords, slot, element, what) -> UninitializedReadError:
    ins = ctx.prog.instrs[pc]
    name = ctx.tensor_names[slot]
    return UninitializedReadError(
        f"initcheck: {ins.op} at line {ins.line} on {UNIT_NAMES[unit]} of block {coords} {what} the signal "
        f"{name}[{element}], which was never written", kernel=ctx.kernel_name, file=ctx.prog.file, line=ins.line,
        block=coords, warp=unit, unit=UNIT_NAMES[unit], lane=None, word=element,
        hint=f"give the signals their first value before the launch (pto.memcpy_h2d of zeros into {name})")
