"""Fusion rules: which instruction pairs of a program the firmware executes as one.

A machine table's ``[[fusion]]`` entry names a ``first`` and a ``second`` instruction. In a
program, instruction B (named ``second``) is fused with instruction A (named ``first``) when:

1. B **reads what A writes**: for lane instructions, a source register of B is A's destination
   register; for tile instructions, a tile B reads (MMA: ``c``, ``a``, ``b``; vector tile ops and
   TSTORE: their source tiles) is the tile A writes (TLOAD, MMA and vector tile ops: their
   destination), at the same L1 address: the same immediate, or registers computed by the
   same expression from the same values (the compiler recomputes a tile's address per use);
2. A is the **nearest** instruction before B in program order that writes that value or tile,
   with no control-flow instruction (IF, ELSE, LOOP, ...) between them: straight-line code,
   so the pair executes together every time B executes. Instructions between them that do not
   touch the value (a WAIT_ALL, the other operand's TLOAD) do not prevent fusion;
3. A is fused with at most one B (the first that qualifies), B with at most one A.

The pairs are found once per launch, statically; every dynamic execution of B is a fused pair.
The saving comes off B's fixed latency (the timing model's per-pc table), and B's timeline
entries and breakdown row are named ``first+second`` (``TLOAD+MMA``); A keeps its own entry,
since its data still moves.
"""
from __future__ import annotations

from ..ir.program import C_DST, C_DTYPE, C_SRC
from ..isa import LANE_TILE_FAMILIES
from ..isa.tile_roles import FAMILY_ROLES


def _reg_value(code, imm, specs, pc, reg, depth=0):
    """A key for the value register ``reg`` holds when instruction pc executes: the ALU
    expression that computed it (so two registers computed alike, such as a tile address
    recomputed for each use, get the same key), else its defining instruction."""
    for q in range(pc - 1, -1, -1):
        if specs[q].family == "control":
            return ("entry", reg, q)
        if int(code[q, C_DST]) == reg:
            if specs[q].family == "alu" and depth < 8:
                n = len(specs[q].value_operands)
                return (specs[q].name, int(code[q, C_DTYPE]),
                        tuple(_operand(code, imm, specs, q, j, depth + 1) for j in range(n)))
            return ("def", q)
    return ("arg", reg)


def _operand(code, imm, specs, pc, j, depth=0):
    r = int(code[pc, C_SRC + j])
    return ("imm", float(imm[pc, j])) if r < 0 else _reg_value(code, imm, specs, pc, r, depth)


def _lane_reads(code, pc):
    return {("val", int(r)) for r in code[pc, C_SRC:C_SRC + 6] if r >= 0}


def _tile_reads(spec, code, imm, specs, pc):
    fam = spec.family
    if fam == "tile_mma":
        slots = (0, 1, 2)
    elif fam == "tile_store":
        slots = (1,)
    elif fam in LANE_TILE_FAMILIES:
        scratch = FAMILY_ROLES[fam].scratch          # pto-isa's tmp: written, not read
        slots = tuple(j for j, o in enumerate(spec.value_operands)
                      if o.kind == "tile" and (j > 0 or spec.reads_dst) and o.name != scratch)
    else:
        slots = ()
    return {("tile", _operand(code, imm, specs, pc, j)) for j in slots}


def _writes(spec, code, imm, specs, pc):
    """Keys instruction pc produces: its destination register's value, or the tile it writes."""
    out = set()
    if spec.family in ("tile_load", "tile_mma") + LANE_TILE_FAMILIES:
        out.add(("tile", _operand(code, imm, specs, pc, 0)))
    d = int(code[pc, C_DST])
    if d >= 0:
        out.add(("val", d))
    return out


def find_fused_pairs(code, imm, specs, rules) -> dict:
    """{pc of B: (pc of A, rule)} for every fused pair of the program (module docstring)."""
    by_second: dict = {}
    for rule in rules:
        by_second.setdefault(rule.second, []).append(rule)
    pairs, used = {}, set()
    for b in range(len(specs)):
        candidates = by_second.get(specs[b].name)
        if not candidates:
            continue
        spec_b = specs[b]
        wanted = _tile_reads(spec_b, code, imm, specs, b) if spec_b.is_tile else _lane_reads(code, b)
        for a in range(b - 1, -1, -1):
            if not wanted:
                break
            spec_a = specs[a]
            if spec_a.family == "control":
                break
            produced = _writes(spec_a, code, imm, specs, a) & wanted
            if produced:
                rule = next((r for r in candidates if r.first == spec_a.name), None)
                if rule is not None and a not in used:
                    pairs[b] = (a, rule)
                    used.add(a)
                    break
                wanted -= produced      # the value comes from a non-matching instruction
    return pairs
