"""What the units of an AI core cannot run: per-lane (SIMT) code.

Each unit of an AI core (AIC, AIV0, AIV1) is a scalar unit that runs the program once; its
data work is tile instructions on its pipes (docs/aicore.md). The lane model's instructions
that act per lane of a 32-lane warp - lane loads and stores, atomics, shuffles and votes,
lane barriers, per-lane local arrays, and the lane and warp ids - have no meaning there: run
on a unit they would quietly act for one "lane" (``pto.store(y + pto.get_global_id(0), x)``
stored one element, at y[32]). So each is a CompileError at its statement in an AI-core
kernel. Uniform (scalar) values - loop counters, offsets from pto.get_block_id() and
pto.get_subblock_id(), arithmetic on them - stay the units' own.

The instructions come from the ISA table: the categories lane_memory (but ALLOC_LOCAL, which
places typed tiles too; pto.alloc_local has its own error), atomic and warp, and the family
sync (the tile_sync family - flags, pipe_barrier, cross-core flags - is the AI core's own).
"""
from __future__ import annotations

from ..isa import load_isa

SCALAR_UNITS = ("the AI core's units (AIC, AIV0, AIV1) are scalar units that each run their "
                "program once, not warps of 32 lanes")
USE_TILES = ("move data with typed tiles - pto.tload / pto.tstore - and compute on them with "
             "vector tile ops (pto.tadd, pto.tmuls, pto.trowmax, ...); scalar arithmetic on "
             "uniform values (loop counters, offsets from pto.get_block_id()) is fine")
USE_FLAGS = ("order a unit's pipes with pto.set_flag / pto.wait_flag / pto.pipe_barrier and the "
             "cube and vector cores with pto.cross_core_set_flag / pto.cross_core_wait_flag")

# family of a per-lane instruction -> what it is, for the message
_KINDS = {"load": "a lane load", "store": "a lane store", "fma_store": "a lane store",
          "local": "a per-lane local array", "alloc": "a per-lane local array",
          "atomic": "a lane atomic", "warp": "a warp shuffle or vote", "sync": "a barrier of lanes"}

# the SIMT ids (their builtins emit instructions the compiler also uses for sections)
SIMT_IDS = {
    "get_global_id": ("numbers lanes across the grid",
                      "index the work by AI core with pto.get_block_id() and by vector core with "
                      "pto.get_subblock_id(), and cover a core's elements with a tile"),
    "get_local_id": ("numbers lanes within a block",
                     "index the work by AI core with pto.get_block_id() and by vector core with "
                     "pto.get_subblock_id(), and cover a core's elements with a tile"),
    "get_lane_id": ("numbers lanes within a warp",
                    "index the work by AI core with pto.get_block_id() and by vector core with "
                    "pto.get_subblock_id(), and cover a core's elements with a tile"),
    "get_warp_id": ("numbers warps within a block",
                    "`with pto.cube():` / `with pto.vector():` choose the unit, and "
                    "pto.get_subblock_id() numbers the vector cores"),
    "get_block_dim": ("counts a block's lanes, and a block of an AI-core kernel is one AI core",
                      "pto.get_grid_dim() counts the AI cores, pto.get_block_id() numbers them"),
}


def _lane_instructions() -> dict:
    """name -> (what it is, hint) of every per-lane instruction of the ISA table."""
    out = {}
    for spec in load_isa().specs:
        if spec.name == "ALLOC_LOCAL":      # alloc_tile places typed tiles with it
            continue
        if spec.category in ("lane_memory", "atomic", "warp") or spec.family == "sync":
            out[spec.name] = (_KINDS[spec.family], USE_FLAGS if spec.family == "sync" else USE_TILES)
    return out


LANE_INSTRUCTIONS = _lane_instructions()


class AICoreScalarRules:
    """Mixin of the kernel compiler: refuse per-lane code in an AI-core kernel."""

    def refuse_simt_id(self, name, node):
        """pto.<name>, a lane or warp id (or the block's lane count), called in an AI-core kernel."""
        what, hint = SIMT_IDS[name]
        self.error(node, f"pto.{name}() {what}, but {SCALAR_UNITS}", hint)

    def refuse_lane_instruction(self, op, node):
        """Per-lane instruction op emitted for node in an AI-core kernel."""
        what, hint = LANE_INSTRUCTIONS[op]
        self.error(node, f"{op} is {what}, but {SCALAR_UNITS}", hint)
