"""The PTO instruction set, loaded from isa/*.toml: the single source of truth.

``load_isa()`` parses and validates the table once per process and returns an :class:`Isa`
holding one :class:`InstrSpec` per instruction and the ``Opcode`` enum built from it.
"""
from .table import (CATEGORIES, FAMILIES, PIPES, PTO_PIPE_NAMES, PTO_PIPE_SHORT, SPACES, InstrSpec, Isa, Operand,
                    load_isa, load_isa_from)
from .tile_roles import AICORE_ONLY_FAMILIES, LANE_TILE_FAMILIES, TILE_FAMILIES, VECTOR_FAMILIES

__all__ = ["Isa", "InstrSpec", "Operand", "load_isa", "load_isa_from", "PIPES", "CATEGORIES",
           "FAMILIES", "TILE_FAMILIES", "VECTOR_FAMILIES", "AICORE_ONLY_FAMILIES", "LANE_TILE_FAMILIES", "SPACES",
           "PTO_PIPE_NAMES", "PTO_PIPE_SHORT"]
