"""pto.tnotify, pto.twait and pto.ttest: pto-isa's communication signals on the AI core
(isa/58_comm_signals.toml; A2/A3 include/pto/comm/a2a3/TNotify.hpp, TWait.hpp, TTest.hpp).

The signal is a pointer into an int32 device tensor (GM), `sig + i` or `sig[i]`; op and cmp are
names known when the kernel compiles (pto-isa's NotifyOp and WaitCmp), the value, the region's
rows, cols and stride may be run-time integers. pto.tnotify emits TNOTIFY and the header's closing
pipe_barrier(PIPE_ALL); pto.ttest returns 1 or 0. Registered in registry.py's LOWERINGS; codegen.py
imports it.
"""
from __future__ import annotations

from .. import dtypes
from ..isa.comm_signal_modes import CMPS, OPS
from .aicore_builtins import emit_pipe_barrier
from .registry import LOWERINGS
from .values import NONE, Const, Ptr, Text, Val

INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1


def aicore_only(comp, node, name):
    """The signals are the AI core's scalar unit on GM: AI-core kernels only."""
    if not comp.is_aicore:
        comp.error(node, f"pto.{name} is the AI core's scalar unit on a GM signal (pto-isa's communication ISA, "
                         "A2/A3): it runs in an AI-core kernel",
                   f"call pto.{name} in `with pto.vector():` or `with pto.cube():` code")


def _signal(comp, node, value, what) -> Ptr:
    """The signal operand: a pointer into an int32 GM tensor (the headers take a GlobalTensor of
    int32_t: static_assert "signal type must be int32_t")."""
    if not isinstance(value, Ptr):
        comp.error(node, f"{what}: the signal must be a pointer into an int32 device tensor (a tensor argument "
                         f"plus an element offset), got {type(value).__name__}",
                   "pass e.g. sig + i or sig[i], sig an int32 tensor argument")
    if value.tile is not None or value.space != "hbm":
        where = f"a {value.tile.loc} tile" if value.tile is not None else f"in {value.space}"
        comp.error(node, f"{what}: '{value.name}' is {where}, but a signal is an int32 in GM (the headers' "
                         "GlobalTensor, a __gm__ int32_t*): other units and AI cores read and write it there",
                   "pass an int32 device tensor (a kernel argument) plus an element offset")
    if value.dtype != dtypes.int32:
        comp.error(node, f"{what}: '{value.name}' holds {value.dtype}, but the signal type must be int32_t "
                         "(TNotify.hpp / TWait.hpp / TTest.hpp static_assert)",
                   "allocate the signals as pto.int32 (pto.to_device(np.zeros(n, np.int32)))")
    return value


def _name(comp, node, value, choices, what, meaning) -> int:
    """A name argument (op, cmp): its index in choices, case-insensitive."""
    if isinstance(value, Text) and value.value.lower() in choices:
        return choices.index(value.value.lower())
    got = repr(value.value) if isinstance(value, Text) else "a value known only when the kernel runs"
    comp.error(node, f"{what} must be one of {', '.join(map(repr, choices))} ({meaning}), known when the kernel "
                     f"compiles; got {got}")


def _int32(comp, node, value, what):
    """An int32 operand (an immediate or a uniform register)."""
    known = comp.int_constant(value, node, what) if isinstance(value, Const) else None
    if known is not None and not INT32_MIN <= known <= INT32_MAX:
        comp.error(node, f"{what}: {known} does not fit the int32 the signal holds ({INT32_MIN}..{INT32_MAX})")
    if isinstance(value, Val) and value.dtype.is_float:
        comp.error(node, f"{what} must be an integer (the signal is an int32), got {value.dtype}",
                   "convert it with pto.cast(x, pto.int32)")
    return comp._int_operand(value, node, what)


@LOWERINGS.lowering("tnotify", checks=(aicore_only,))
def lower_tnotify(comp, node, args):
    """TNOTIFY(signal, value, op), then TNotify.hpp's pipe_barrier(PIPE_ALL)."""
    sig = _signal(comp, node, args["signal"], "pto.tnotify")
    op = _name(comp, node, args["op"], OPS, "pto.tnotify: op", "pto-isa's NotifyOp AtomicAdd, Set")
    value = _int32(comp, node, args["value"], "pto.tnotify: value")
    offset = comp.operand(sig.offset, dtypes.int32, node)
    comp.emit("TNOTIFY", None, (offset, value), dtypes.int32, node, aux=(sig.slot, op, 0))
    comp.instrs[-1].comment = sig.name
    emit_pipe_barrier(comp, node)


def _region(comp, node, args, builtin) -> tuple:
    """(slot, name, operands, cmp) of a pto.twait / pto.ttest call."""
    what = f"pto.{builtin}"
    sig = _signal(comp, node, args["signal"], what)
    cmp = _name(comp, node, args["cmp"], CMPS, f"{what}: cmp", "pto-isa's WaitCmp EQ, NE, GT, GE, LT, LE")
    value = _int32(comp, node, args["value"], f"{what}: value")
    shape = []
    for key, low in (("rows", 1), ("cols", 1), ("stride", 0)):
        v = args[key]
        if key == "stride" and v is NONE:
            v = args["cols"]                        # dense rows: Signal2D's default stride is Cols
        known = comp.int_constant(v, node, f"{what}: {key}") if isinstance(v, Const) else None
        if known is not None and known < low:
            comp.error(node, f"{what}: {key} is {known}, but the region's {key} must be at least {low} (the headers "
                             "loop over every element of the signal tensor's shape)")
        shape.append(_int32(comp, node, v, f"{what}: {key}"))
    offset = comp.operand(sig.offset, dtypes.int32, node)
    return sig, (offset, value, *shape), cmp


@LOWERINGS.lowering("twait", checks=(aicore_only,))
def lower_twait(comp, node, args):
    """TWAIT over the signal region: the unit waits until a pass sees every element satisfied."""
    sig, ops, cmp = _region(comp, node, args, "twait")
    comp.emit("TWAIT", None, ops, dtypes.int32, node, aux=(sig.slot, cmp, 0))
    comp.instrs[-1].comment = sig.name


@LOWERINGS.lowering("ttest", checks=(aicore_only,))
def lower_ttest(comp, node, args):
    """TTEST over the signal region: 1 when one pass sees every element satisfied, else 0."""
    sig, ops, cmp = _region(comp, node, args, "ttest")
    dst = comp.new_reg(dtypes.int32, True)
    comp.emit("TTEST", dst, ops, dtypes.int32, node, aux=(sig.slot, cmp, 0))
    comp.instrs[-1].comment = sig.name
    return Val(dst)
