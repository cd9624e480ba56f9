"""pto.syncall: pto-isa's SYNCALL, a barrier of every AI core of the launch (hard mode; the
rules and flag ids are isa/syncall_modes.py's, the instruction isa/35_aicore.toml's SYNCALL).

The AIV-only form is vector code and the AIC-only form cube code: pto-isa compiles the other
core's call to a bare pipe_barrier(PIPE_ALL), which here is an error rather than a barrier that
silently holds nobody. workspace= (an int32 GM tensor) makes it soft mode,
SYNCALL<SyncAllMode::Soft>(workspace, usedCores): SYNCALL_SOFT, a counter at workspace[0] the
units add to and poll (isa/syncall_modes.py soft_target, soft_release), used_cores of them (0:
every unit of core_type).
Registered in registry.py's LOWERINGS; codegen.py imports it.
"""
from __future__ import annotations

from ..isa.syncall_modes import KIND_AIC, KIND_AIV, KINDS
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .. import dtypes
from .values import NONE, Const, Text

_SECTION_KINDS = {"cube": (KIND_AIC,), "vector": (KIND_AIV,), "vector0": (KIND_AIV,)}


@LOWERINGS.lowering("syncall", checks=(aicore_only,))
def lower_syncall(comp, node, args):
    """SYNCALL of args['core_type'] ('aiv' by default), checked against the section it is in."""
    kind = args["core_type"]
    if kind is NONE:
        kind = KIND_AIV
    elif isinstance(kind, Text) and kind.value in KINDS:
        kind = KINDS.index(kind.value)
    else:
        comp.error(node, f"pto.syncall: core_type must be one of {', '.join(map(repr, KINDS))} (pto-isa's "
                         "SyncCoreType AIVOnly, AICOnly, Mix)")
    section = comp.section
    if section is None:
        comp.error(node, "pto.syncall outside a section: each unit arrives at the barrier itself, so put it in "
                         "`with pto.cube():` or `with pto.vector():`")
    if kind != 2 and kind not in _SECTION_KINDS[section]:
        core = "cube" if section == "cube" else "vector"
        comp.error(node, f"pto.syncall('{KINDS[kind]}') in {core} code: pto-isa's SYNCALL<"
                         f"{'AIVOnly' if kind == KIND_AIV else 'AICOnly'}> is only pipe_barrier(PIPE_ALL) on the "
                         f"{'AIC' if section == 'cube' else 'AIVs'}, a barrier that holds nobody",
                   f"call it in {'vector' if kind == KIND_AIV else 'cube'} code, or use core_type='mix' in both")
    workspace, used = args["workspace"], args["used_cores"]
    if workspace is NONE:
        if not (used is NONE or isinstance(used, Const) and int(used.value) == 0):
            comp.error(node, "pto.syncall: used_cores= is soft mode's (the hard barrier takes every unit of "
                             "core_type; pto-isa's hard overload ignores usedCores)",
                       "pass workspace= (an int32 GM counter, zeroed before first use) for the soft barrier")
        comp.emit("SYNCALL", None, (), None, node, aux=(kind, 0, 0))
        return
    ws = comp.require_ptr(workspace, node, "pto.syncall: workspace")
    if ws.space != "hbm" or ws.dtype != dtypes.int32:
        comp.error(node, f"pto.syncall: workspace must point into an int32 device tensor (GM); '{ws.name}' is "
                         f"{ws.dtype} in {'GM' if ws.space == 'hbm' else ws.space} (syncall_soft.hpp's counter is "
                         "the GlobalTensor<int32_t>'s first element)")
    ops = (comp.uniform_int(ws.offset, node, "pto.syncall: the workspace's GM offset"),
           comp._int_operand(Const(0, dtypes.int32) if used is NONE else used, node, "pto.syncall: used_cores"))
    comp.emit("SYNCALL_SOFT", None, ops, None, node, aux=(kind, ws.slot, 0))
    comp.instrs[-1].comment = f"{ws.name}[0]"
