"""Whether one block of a kernel fits on a core: the L1 its lane slots and alloc_local buffers
need, and the warp slots its lanes take (checked at launch and by each timing engine)."""
from __future__ import annotations

from ..errors import L1CapacityError, LaunchError


def check_block_fits(prog, block, machine, kernel_name) -> int:
    """L1 bytes one block needs (lane slots of all its lanes plus alloc_local buffers); raises
    L1CapacityError or LaunchError when a block cannot fit on a core."""
    lanes = block[0] * block[1] * block[2]
    warps = -(-lanes // 32)
    slots = prog.n_lane_slots + prog.n_wide_lane_slots    # a float64 / int64 slot is 8 bytes
    slot_bytes = slots * machine.lane_slot_bytes * warps * 32
    need = slot_bytes + prog.local_bytes
    if need > machine.l1_bytes:
        buffers = ", ".join(f"{b.name} {b.nbytes} B (line {b.line})" for b in prog.buffers) or "none"
        raise L1CapacityError(
            f"a block of {lanes} lanes needs {need} bytes of L1 but a core has {machine.l1_bytes} "
            f"({need - machine.l1_bytes} too many): {slots} lane slots (64-bit values take two) x "
            f"{machine.lane_slot_bytes} B x {warps * 32} lanes = {slot_bytes} B, alloc_local: {buffers}",
            kernel=kernel_name, file=prog.file, line=(prog.buffers[-1].line if prog.buffers else prog.first_line),
            requested=need, free=machine.l1_bytes,
            hint="use fewer lanes per block or smaller alloc_local buffers")
    if warps > machine.warp_slots_per_core:
        raise LaunchError(f"a block of {lanes} lanes is {warps} warps but a core holds "
                          f"{machine.warp_slots_per_core}", kernel=kernel_name,
                          hint=f"use at most {machine.warp_slots_per_core * 32} lanes per block")
    return need
