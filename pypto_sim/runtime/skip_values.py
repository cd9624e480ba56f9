"""``values=False``: timing without tile values, and the check that makes it safe.

With values off the tile instructions are timed as usual but compute nothing: a tile load
reads no GM, a matmul multiplies nothing, a store writes nothing (initcheck still records
what it would have written). Timing never depends on tile values, so the cycles and records
are those of the same launch with values on, as long as nothing the kernel decides depends on
a value a tile instruction would have produced. Only a lane (or scalar) memory read brings
memory into registers, where control flow and addresses come from, so the check refuses a
launch in which such a read may see what a tile instruction writes: the block's L1 / UB words
(tile instructions write them all), or a GM tensor that a tile store writes.
"""
from __future__ import annotations

from ..errors import LaunchError
from ..ir.program import C_AUX, C_OP
from ..isa import load_isa


def check_values_off(program, tensor_ranges, kernel_name):
    """Raise LaunchError when a memory read of ``program`` may see a value that values=False
    skips. tensor_ranges: per tensor slot, the (first byte, last byte + 1) of its argument."""
    isa = load_isa()
    code = program.encode().code
    specs = [isa.by_opcode[int(code[pc, C_OP])] for pc in range(len(code))]
    tiled = [pc for pc, s in enumerate(specs) if s.is_tile and s.family != "tile_sync"]
    if not tiled:
        return
    stores = [pc for pc in tiled if specs[pc].family in ("tile_store", "tile_gm_scatter")]
    for pc, spec in enumerate(specs):
        if spec.family not in ("load", "atomic") and spec.name not in ("SLD_UB", "SLD_GM", "TPRINT", "TPRINT_GM",
                                                                       "TWAIT", "TTEST"):
            continue
        line = program.instrs[pc].line
        if spec.name.endswith("_L1") or spec.name in ("SLD_UB", "TPRINT"):
            writer = tiled[0]
            what = "the block's L1 words, which tile instructions write"
        else:
            lo, hi = tensor_ranges[int(code[pc, C_AUX])]
            writer = next((s for s in stores
                           if _overlap(tensor_ranges[int(code[s, C_AUX])], (lo, hi))), None)
            if writer is None:
                continue
            what = f"a tensor the {specs[writer].name} at line {program.instrs[writer].line} writes"
        raise LaunchError(
            f"values=False skips tile values, but {spec.name} at line {line} of kernel "
            f"'{kernel_name}' reads {what}: the value it reads (and what the kernel then does) "
            f"would not be the real one", kernel=kernel_name, file=program.file, line=line,
            hint="launch with values=True (the default), or use mode='functional' for values "
                 "without timing")


def check_indexed_checks(program, checks, kernel_name):
    """Raise LaunchError when values=False would leave racecheck or initcheck (checks: the
    parsed names) blind to the GM elements of an MGATHER / MSCATTER of ``program``: they are
    the rows or elements its index tile names, and with values off no index tile holds its values
    (the indices, loaded or computed by tile instructions, are not computed)."""
    blind = sorted(checks & {"racecheck", "initcheck"})
    if not blind:
        return
    isa = load_isa()
    for pc, row in enumerate(program.encode().code):
        spec = isa.by_opcode[int(row[C_OP])]
        if spec.family in ("tile_gm_gather", "tile_gm_scatter"):
            line = program.instrs[pc].line
            raise LaunchError(
                f"values=False with check={blind}: {spec.name} at line {line} of kernel '{kernel_name}' reads or "
                f"writes the GM elements its index tile names, and values=False computes no index values, so "
                f"{' and '.join(blind)} could not see them", kernel=kernel_name, file=program.file, line=line,
                hint="launch with values=True (the default) to check this kernel, or without check= to time it "
                     "with values=False")


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]
