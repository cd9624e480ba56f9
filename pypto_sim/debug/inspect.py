"""Reading the state of a paused kernel: lane L1 slots, variables, tensors, alloc_local buffers.

Everything here only reads the simulation (``DebugContext.sim``); nothing changes the run.
Registers hold every value exactly as a float64 word (see ``pypto_sim.dtypes``); these
functions convert to the value's own dtype.
"""
from __future__ import annotations

import numpy as np

from ..arguments import whole_number
from ..dtypes import words_as_values
from ..errors import ArgumentError, UseAfterFreeError
from ..exec import gm
from ..ir.program import Reg


class InspectMixin:
    """The inspection half of DebugContext (needs ``sim``, ``program``, ``block``, ``grid``)."""

    # ---------------------------------------------------------------- addressing
    @property
    def block_lanes(self) -> int:
        """Lanes per block (block[0] * block[1] * block[2])."""
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def n_blocks(self) -> int:
        """Blocks in the grid."""
        return self.grid[0] * self.grid[1] * self.grid[2]

    def _block_id(self, block) -> int:
        """A linear block id from an int or (x, y, z) coordinates; checks the range."""
        if isinstance(block, (tuple, list)):
            if not 1 <= len(block) <= 3:
                raise ArgumentError(f"block={tuple(block)!r}: give 1 to 3 coordinates (x, y, z)")
            coords = [whole_number(c, f"block {'xyz'[d]}", least=0, below=g,
                                   hint=f"the grid is {self.grid}")
                      for d, (c, g) in enumerate(zip(block, self.grid))] + [0] * (3 - len(block))
            gx, gy, _ = self.grid
            block = coords[0] + gx * (coords[1] + gy * coords[2])
        return whole_number(block, "block", least=0, below=self.n_blocks,
                            hint=f"the grid {self.grid} has blocks 0..{self.n_blocks - 1} "
                                 f"(or give (x, y, z) coordinates)")

    def _warp_regs(self, block: int, warp: int):
        """The registers of one warp, or None when that warp has not started yet."""
        ws = self.sim.warp_state(block, warp)
        return None if ws is None else ws.regs

    # ---------------------------------------------------------------- L1 and variables
    def inspect_l1(self, lane: int, count: int = 16, block=0) -> np.ndarray:
        """The first ``count`` L1 words of one lane, as a float32 numpy array.

        ``lane`` is the block-local lane id (0 .. block lanes - 1) and ``block`` the linear
        block id (or its (x, y, z) coordinates). Word k is the lane's L1 slot k (``L1[k]`` in
        the step output, register ``vk`` in the listing). Integer and bool slots are shown as
        their value converted to float32 (exact below 2**24). Words past the kernel's
        ``n_lane_slots`` slots, and every word of a warp that has not started yet, read 0.
        """
        block = self._block_id(block)
        lane = whole_number(lane, "inspect_l1: lane", least=0, below=self.block_lanes,
                            hint=f"give a block-local lane id, 0..{self.block_lanes - 1}")
        words = self.machine.l1_bytes // 4
        count = whole_number(count, "inspect_l1: count", least=0, below=words + 1,
                             hint=f"a lane's L1 holds at most the core's {words} words ({self.machine.name})")
        out = np.zeros(count, np.float32)
        regs = self._warp_regs(block, lane // 32)
        if regs is not None:
            k = min(int(count), self.program.n_lane_slots)
            out[:k] = regs[:k, lane % 32]
        return out

    def symbols(self) -> dict:
        """The kernel's variables held in registers: name -> register (``v`` lane slot or ``s``
        scalar register), from the compiler's symbol table."""
        return dict(self.program.symbols)

    def lane_values(self, name: str, block=0) -> np.ndarray:
        """Per-lane values of kernel variable ``name`` in one block, as a numpy array of the
        variable's dtype with one entry per lane of the block (index = block-local lane id).

        A uniform variable (held in a scalar register) shows the same value in every lane.
        Lanes of warps that have not started read 0; a lane that skipped the assignment (a
        false branch) shows what its register held before.
        """
        reg = self.program.symbols.get(name)
        if reg is None:
            if any(a.name == name and a.kind == "tensor" for a in self.program.args):
                raise ArgumentError(f"'{name}' is a tensor parameter; read it with ctx.tensor({name!r})")
            known = ", ".join(sorted(self.program.symbols)) or "none"
            raise ArgumentError(f"kernel '{self.program.kernel}' has no variable '{name}' held in a "
                           f"register (known: {known})")
        return self._reg_values(reg, self._block_id(block))

    def _reg_values(self, reg: Reg, block: int) -> np.ndarray:
        row = reg.index + (self.program.n_lane_slots if reg.uniform else 0)
        words = np.zeros(self.block_lanes, np.float64)
        for warp in range(-(-self.block_lanes // 32)):
            regs = self._warp_regs(block, warp)
            if regs is not None:
                lanes = min(32, self.block_lanes - warp * 32)
                words[warp * 32:warp * 32 + lanes] = regs[row, :lanes]
        return words_as_values(words, reg.dtype)

    # ---------------------------------------------------------------- memory
    def tensor(self, t) -> np.ndarray:
        """The current contents of a device tensor argument as a numpy array of its dtype.

        ``t`` is the DeviceTensor, its variable name (``'d_a'``) or the kernel parameter name
        (``'a'``). This is HBM as it is at the current cycle: stores become visible when they
        complete, so a store that has issued but not completed is not there yet.
        """
        alloc = self._find_alloc(t)
        if alloc.freed:
            raise UseAfterFreeError(f"tensor '{alloc.name}' was freed: its memory is no longer this launch's",
                                    tensor=alloc.name, hint="read it before freeing it")
        hbm = self.device.hbm.data
        return gm.decode(hbm[alloc.byte_addr:alloc.byte_addr + alloc.nbytes], alloc.dtype).copy()

    def _find_alloc(self, t):
        if getattr(t, "is_device_tensor", False):
            return t.alloc
        for param, alloc in self._tensor_args:
            if t is alloc or t == param or (isinstance(t, str) and t == alloc.name):
                return alloc
        names = ", ".join(f"{p} ({a.name})" if a.name else p for p, a in self._tensor_args)
        raise ArgumentError(f"{t!r} is not a tensor argument of this launch (tensors: {names or 'none'})")

    def inspect_alloc_local(self, name: str, block=0) -> np.ndarray:
        """The current contents of the block's ``alloc_local`` buffer ``name`` (the variable it
        was assigned to), as a numpy array of its dtype; shape (copies, count) for a pipeline
        buffer with several copies. A block that has not started reads zeros."""
        block = self._block_id(block)
        buf = next((b for b in self.program.buffers if b.name == name), None)
        if buf is None:
            known = ", ".join(b.name for b in self.program.buffers) or "none"
            raise ArgumentError(f"kernel '{self.program.kernel}' has no alloc_local buffer '{name}' "
                           f"(buffers: {known})")
        blk = self._block_state(block)
        if not buf.owns_memory:             # a view (treshape, tsubview): its elements in its tile
            words = (blk.l1[buf.offset + buf.element_words()] if blk is not None
                     else np.zeros(buf.count, np.float64))
            return words_as_values(words, buf.dtype)
        words = (blk.l1[buf.offset:buf.offset + buf.words] if blk is not None
                 else np.zeros(buf.words, np.float64))
        out = words_as_values(words, buf.dtype)
        return out.reshape(buf.copies, buf.count) if buf.copies > 1 else out

    def _block_state(self, block: int):
        """The BlockState (its L1 area) of a block that has started, else None."""
        return self.sim.block_state(block)

    def state(self) -> dict:
        """A snapshot of the whole simulated state (for comparisons): every warp's registers,
        mask and scoreboard, every block's L1, the HBM bytes and the records so far."""
        return {
            "regs": {k: ws.regs.copy() for k, ws in self.sim.warp_states.items()},
            "masks": {k: ws.mask for k, ws in self.sim.warp_states.items()},
            "ready": {k: list(ws.ready) for k, ws in self.sim.warp_states.items()},
            "l1": {blk.id: blk.l1.copy() for blk in self.sim.blocks},
            "hbm": self._hbm.copy(),
            "rows": list(self.sim.rows),
            "cycle": self.cycle,
        }
