"""Per-warp state and the structured control flow of a SIMT warp (the mask stack).

IF/ELSE/ENDIF and LOOP/BRK_UNLESS/BREAK/CONTINUE/LOOP_CONT/ENDLOOP/RET, as the compiler emits
them (docs/timing.md, "Divergence"). Lanes that leave a region (by a false condition, break,
continue or return) are parked in the frame that will bring them back; when no lane is active
the warp jumps straight to the next point where some may become active again.
"""
from __future__ import annotations

import numpy as np

from ..ir.program import C_AUX

FULL_MASK = (1 << 32) - 1


class WarpState:
    """Registers, scoreboard and masks of one warp."""

    def __init__(self, n_regs: int, mask: int):
        self.regs = np.zeros((max(n_regs, 1), 32), np.float64)
        self.ready = [0] * max(n_regs, 1)
        self.producer = [-1] * max(n_regs, 1)
        self.mask = mask
        self.alive = mask           # the lanes this warp has (a block's last warp may be partial)
        self.seen_tiles = 0         # tile ops dispatched before this warp's last wait_all
        self.wait_alls = 0          # blocking wait_alls passed (warp 0's k-th sets the k-th mark)
        self.exited = 0
        self.stack = []
        self.next_issue = 0
        self.store_done = 0
        # this warp's stores still in flight, oldest first: commit seq -> (space, words, values);
        # its own loads see them (program order), other warps only once they land
        self.pending_stores = {}
        self.cause = 0
        self.cause_pc = -1
        self.waiting_at = None
        self.pc = 0                 # the instruction it issues next (or waits at, or EXIT)

    def note_stall(self, cause: int, cause_pc: int):
        """Remember why the warp is waiting (the last binding constraint wins)."""
        self.cause, self.cause_pc = cause, cause_pc

    def reset_stall(self):
        self.cause, self.cause_pc = 0, -1


class _If:
    __slots__ = ("saved", "other", "else_pc", "end_pc", "in_else")

    def __init__(self, saved, other, else_pc, end_pc):
        self.saved, self.other, self.else_pc, self.end_pc, self.in_else = saved, other, else_pc, end_pc, False


class _Loop:
    __slots__ = ("saved", "broken", "continued", "cont_pc", "end_pc")

    def __init__(self, saved, cont_pc, end_pc):
        self.saved, self.broken, self.continued, self.cont_pc, self.end_pc = saved, 0, 0, cont_pc, end_pc


class ControlFlow:
    """Executes control instructions for one warp; ``step(pc)`` returns the next pc (-1: done)."""

    def __init__(self, code, imm, ws: WarpState, ex):
        self.code, self.imm, self.ws, self.ex = code, imm, ws, ex

    def step(self, pc: int, name: str) -> int:
        return _HANDLERS[name](self, pc)

    # -- helpers
    def _pred(self, pc):
        return self.ex.pred_bits(self.code, self.imm, self.ws.regs, pc, 0, self.ws.mask)

    def _innermost_loop(self):
        for frame in reversed(self.ws.stack):
            if isinstance(frame, _Loop):
                return frame
        return None

    def _escape(self, pc):
        """No lane is active: go to the next instruction that may reactivate some."""
        if not self.ws.stack:
            return -1
        top = self.ws.stack[-1]
        if isinstance(top, _If):
            return top.end_pc if top.in_else else top.else_pc
        return top.cont_pc

    # -- instructions
    def _if(self, pc):
        ws = self.ws
        taken = self._pred(pc)
        else_pc, end_pc = int(self.code[pc, C_AUX]), int(self.code[pc, C_AUX + 1])
        ws.stack.append(_If(ws.mask, ws.mask & ~taken, else_pc, end_pc))
        ws.mask = taken
        return pc + 1 if taken else else_pc

    def _else(self, pc):
        ws = self.ws
        top = ws.stack[-1]
        top.in_else = True
        ws.mask = top.other
        return pc + 1 if ws.mask else top.end_pc

    def _endif(self, pc):
        ws = self.ws
        top = ws.stack.pop()
        mask = top.saved & ~ws.exited
        loop = self._innermost_loop()
        if loop is not None:
            mask &= ~(loop.broken | loop.continued)
        ws.mask = mask
        return pc + 1 if mask else self._escape(pc)

    def _loop(self, pc):
        ws = self.ws
        ws.stack.append(_Loop(ws.mask, int(self.code[pc, C_AUX]), int(self.code[pc, C_AUX + 1])))
        return pc + 1

    def _leave(self, pc, lanes, how):
        ws = self.ws
        loop = self._innermost_loop()
        if how == "break":
            loop.broken |= lanes
        elif how == "continue":
            loop.continued |= lanes
        else:
            ws.exited |= lanes
        ws.mask &= ~lanes
        return pc + 1 if ws.mask else self._escape(pc)

    def _brk_unless(self, pc):
        return self._leave(pc, self.ws.mask & ~self._pred(pc), "break")

    def _break(self, pc):
        return self._leave(pc, self.ws.mask, "break")

    def _continue(self, pc):
        return self._leave(pc, self.ws.mask, "continue")

    def _ret(self, pc):
        return self._leave(pc, self.ws.mask, "return")

    def _loop_cont(self, pc):
        ws = self.ws
        loop = ws.stack[-1]
        ws.mask = (ws.mask | loop.continued) & ~ws.exited & ~loop.broken
        loop.continued = 0
        if ws.mask:
            return pc + 1
        return self._endloop_pc(loop)

    def _endloop_pc(self, loop):
        return loop.end_pc - 1

    def _endloop(self, pc):
        ws = self.ws
        loop = ws.stack[-1]
        remaining = loop.saved & ~loop.broken & ~ws.exited
        if remaining:
            ws.mask = remaining
            return int(self.code[pc, C_AUX])
        ws.stack.pop()
        ws.mask = loop.saved & ~ws.exited
        outer = self._innermost_loop()
        if outer is not None:
            ws.mask &= ~(outer.broken | outer.continued)
        return pc + 1 if ws.mask else self._escape(pc)

    def _exit(self, pc):
        return -1


_HANDLERS = {"IF": ControlFlow._if, "ELSE": ControlFlow._else, "ENDIF": ControlFlow._endif,
             "LOOP": ControlFlow._loop, "BRK_UNLESS": ControlFlow._brk_unless,
             "BREAK": ControlFlow._break, "CONTINUE": ControlFlow._continue,
             "LOOP_CONT": ControlFlow._loop_cont, "ENDLOOP": ControlFlow._endloop,
             "RET": ControlFlow._ret, "EXIT": ControlFlow._exit}
