"""pto.syncall: pto-isa's SYNCALL, a barrier of every AI core of the launch (hard mode; the
rules and flag ids are isa/syncall_modes.py's, the instruction isa/35_aicore.toml's SYNCALL).

The AIV-only form is vector code and the AIC-only form cube code: pto-isa compiles the other
core's call to a bare pipe_barrier(PIPE_ALL), which here is an error rather than a barrier that
silently holds nobody. Soft mode (SYNCALL<SyncAllMode::Soft>(workspace, usedCores), a GM
counter polled by the scalar unit) is not built: its workspace and used_cores are refused.
Registered in registry.py's LOWERINGS; codegen.py imports it.
"""
from __future__ import annotations

from ..isa.syncall_modes import KIND_AIC, KIND_AIV, KINDS
from .builtin_checks import aicore_only
from .registry import LOWERINGS
from .values import NONE, Text

_SECTION_KINDS = {"cube": (KIND_AIC,), "vector": (KIND_AIV,), "vector0": (KIND_AIV,)}


@LOWERINGS.lowering("syncall", checks=(aicore_only,))
def lower_syncall(comp, node, args):
    """SYNCALL of args['core_type'] ('aiv' by default), checked against the section it is in."""
    given = args["core_type"]
    kind = NONE if given is NONE else given
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
    comp.emit("SYNCALL", None, (), None, node, aux=(kind, 0, 0))
