"""What an AI-core program needs of a machine, checked at launch before anything runs: each
memory space's capacity ([capacity] and [aicore] bias_bytes, fb_bytes), the event-id limits ([aicore]
event_ids, cross_core_event_ids) and SYNCALL's own cross-core flags. A program is compiled once
per signature and may run on several machines, so these are checked per launch; the errors
name the tile or the instruction, its line and the limit."""
from __future__ import annotations

from ..errors import CompileError, L1CapacityError, LaunchError
from ..isa.syncall_modes import FLAG_IDS, KINDS

SPACE_KEYS = {"Vec": "ub_bytes", "Mat": "l1_bytes", "Left": "l0a_bytes", "Right": "l0b_bytes",
              "Acc": "l0c_bytes", "Bias": "bias_bytes", "Scaling": "fb_bytes"}
SPACE_NAMES = {"Vec": "UB", "Mat": "L1", "Left": "L0A", "Right": "L0B", "Acc": "L0C", "Bias": "BT", "Scaling": "FB"}
UNIT_OF_SPACE = {"Vec": "vector core (each AIV has its own UB)", "Mat": "cube core",
                 "Left": "cube core", "Right": "cube core", "Acc": "cube core", "Bias": "cube core",
                 "Scaling": "cube core"}


def space_capacity(machine, space: str) -> int:
    """Bytes of memory space ``space`` per unit, from the machine table."""
    return int(getattr(machine, SPACE_KEYS[space]))


def check_aicore_program(program, machine, kernel_name):
    """Raise if program's typed tiles or event ids do not fit machine."""
    if not machine.has_aicore:
        raise LaunchError(f"kernel '{kernel_name}' uses typed tiles but machine '{machine.name}' has "
                          "no [aicore] section", kernel=kernel_name,
                          hint="use a machine table with [aicore] (latency_tables/ascend910b.toml)")
    used: dict = {}
    for b in program.buffers:
        if b.space not in SPACE_KEYS or not b.owns_memory:      # a view's words are its tile's
            continue
        cap = space_capacity(machine, b.space)
        before = used.get(b.space, 0)
        used[b.space] = before + b.nbytes
        if used[b.space] > cap:
            earlier = ", ".join(f"{o.name} {o.nbytes} B (line {o.line})" for o in program.buffers
                                if o.space == b.space and o is not b and o.owns_memory
                                and o.offset < b.offset) or "none"
            raise L1CapacityError(
                f"tile '{b.name}' ({b.space}, {b.rows} x {b.cols} {b.dtype}) needs {b.nbytes} bytes of "
                f"{b.space} ({SPACE_NAMES[b.space]}) but only {max(cap - before, 0)} of its {cap} are "
                f"free on machine '{machine.name}' (already: {earlier})", kernel=kernel_name,
                file=program.file, line=b.line, requested=b.nbytes, free=max(cap - before, 0),
                hint=f"use smaller tiles; {b.space} holds {cap} bytes per {UNIT_OF_SPACE[b.space]}")
    limits = {"SET_FLAG": ("event_ids", 2), "WAIT_FLAG": ("event_ids", 2),
              "CROSS_CORE_SET_FLAG": ("cross_core_event_ids", 0),
              "CROSS_CORE_WAIT_FLAG": ("cross_core_event_ids", 0)}
    for ins in program.instrs:
        if ins.op in limits:
            key, j = limits[ins.op]
            limit = int(getattr(machine, key))
            if ins.aux[j] >= limit:
                raise CompileError(f"{ins.op.lower()} uses event id {ins.aux[j]} but machine "
                                   f"'{machine.name}' has {limit} ([aicore] {key})",
                                   kernel=kernel_name, file=program.file, line=ins.line,
                                   hint=f"use event ids 0..{limit - 1}")
    check_syncall_flags(program, machine, kernel_name)


def check_syncall_flags(program, machine, kernel_name):
    """SYNCALL signals on FFTS cross-core flags of its own (isa/syncall_modes.py FLAG_IDS, as
    pto-isa's SyncAll.hpp): the machine must have them, and the kernel's own cross-core flags
    (and its TPipes') must not use them, or the barrier and the kernel would take each other's
    signals."""
    used = {}
    for ins in program.instrs:
        if ins.op == "SYNCALL":
            for flag in FLAG_IDS[ins.aux[0]]:
                used.setdefault(flag, ins)
    if not used:
        return
    limit = int(machine.cross_core_event_ids)
    top = max(used)
    if top >= limit:
        ins = used[top]
        raise CompileError(f"pto.syncall('{KINDS[ins.aux[0]]}') signals on cross-core flag {top} but machine "
                           f"'{machine.name}' has {limit} ([aicore] cross_core_event_ids)", kernel=kernel_name,
                           file=program.file, line=ins.line, hint="use a machine table with 16 cross-core flags")
    for ins in program.instrs:
        if ins.op in ("CROSS_CORE_SET_FLAG", "CROSS_CORE_WAIT_FLAG") and ins.aux[0] in used:
            other = used[ins.aux[0]]
            raise CompileError(
                f"{ins.op.lower()}({ins.aux[0]}) at line {ins.line}: cross-core flag {ins.aux[0]} is the one "
                f"pto.syncall('{KINDS[other.aux[0]]}') at line {other.line} signals on (pto-isa SyncAll.hpp), so "
                "the barrier and this flag would take each other's signals", kernel=kernel_name,
                file=program.file, line=ins.line,
                hint=f"use other flag ids for the kernel's own signals (and TPipes): not {sorted(used)}")
