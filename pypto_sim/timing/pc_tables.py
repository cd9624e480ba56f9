"""The per-pc tables of a launch's simulation: for each instruction of the encoded program its
spec, family, pipe, latency and issue interval on the machine, sources, destination, memory
space and tiles, with the machine table's fusion rules applied (timing/fusion.py). Built once
before the run; the SimPy model, the compiled engines and the debugger read them."""
from __future__ import annotations

from ..exec.aicore_tiles import buffer_spans
from ..exec.functional import memory_space
from ..ir.program import C_DST, C_OP, C_SRC, C_UNIFORM, MAX_SRCS
from ..isa import PIPES
from .fusion import find_fused_pairs


def precompute_pc_tables(sim, isa):
    """Set sim.pc_family, pc_spec, pc_tile, pc_name, pc_pipe, pc_lat, pc_ii, pc_srcs, pc_tiles,
    pc_dst, pc_mem, pc_saving, the HBM bandwidths and buffer_spans from sim's program and
    machine (sim.enc, sim.prog, sim.m)."""
    code = sim.enc.code
    n = len(code)
    scalar_pipe = PIPES.index("scalar")
    sim.pc_family, sim.pc_pipe, sim.pc_lat, sim.pc_ii = [], [], [], []
    sim.pc_srcs, sim.pc_dst, sim.pc_name, sim.pc_mem = [], [], [], []
    sim.pc_spec, sim.pc_tile = [], []
    sim.pc_tiles = []          # per operand: the typed tile (buffer index) it names, or -1
    for pc in range(n):
        spec = isa.by_opcode[int(code[pc, C_OP])]
        uniform = bool(code[pc, C_UNIFORM])
        on_scalar = uniform and spec.uniform_pipe == "scalar"
        sim.pc_family.append(spec.family)
        sim.pc_spec.append(spec)
        sim.pc_tile.append(spec.is_tile and spec.family != "tile_sync")
        sim.pc_name.append(spec.name)
        sim.pc_pipe.append(scalar_pipe if on_scalar else PIPES.index(spec.pipe))
        lat, ii = sim.m.lane_timing(spec.name, wide=sim.prog.instrs[pc].wide)
        sim.pc_lat.append(sim.m.scalar_latency if on_scalar else lat)
        sim.pc_ii.append(sim.m.scalar_issue_interval if on_scalar else ii)
        sim.pc_srcs.append([int(r) for r in code[pc, C_SRC:C_SRC + MAX_SRCS] if r >= 0])
        sim.pc_tiles.append([getattr(s, "tile", -1) for s in sim.prog.instrs[pc].srcs])
        sim.pc_dst.append(int(code[pc, C_DST]))
        sim.pc_mem.append(memory_space(spec))
    # fusion rules of the machine table (timing/fusion.py): the second instruction of each
    # fused pair loses `saving` cycles of fixed latency and is named "FIRST+SECOND" (only
    # data instructions fuse, so no name that the warp loop tests is ever renamed)
    sim.pc_saving = [0] * n
    if sim.m.fusions:
        for b, (_a, rule) in find_fused_pairs(code, sim.enc.imm, sim.pc_spec, sim.m.fusions).items():
            sim.pc_saving[b] = rule.saving
            sim.pc_lat[b] = max(0, sim.pc_lat[b] - rule.saving)
            sim.pc_name[b] = rule.name
    sim.store_latency = sim.m.latency("STORE")
    sim.read_bw = sim.m.hbm_core_read_bytes_per_cycle
    sim.write_bw = sim.m.hbm_core_write_bytes_per_cycle
    sim.chip_bw = sim.m.hbm_chip_bytes_per_cycle
    sim.buffer_spans = buffer_spans(sim.prog)
