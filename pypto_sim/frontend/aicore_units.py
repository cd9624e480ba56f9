"""One program per unit of the AI core: ``with pto.cube():`` / ``with pto.vector():`` choose
what each unit's program holds, as the CANN compiler builds one binary for the cube core and
one for the vector cores (``__DAV_C220_CUBE__`` / ``__DAV_C220_VEC__`` in pto-isa's
kernels/manual/a2a3). Nothing routes a unit to its code at run time: no unit id is read, no
branch taken, and ``pto.get_subblock_id()`` is a constant of the AIV0 and AIV1 programs.

The kernel body is compiled once per unit that runs: the AIC's program holds the cube
sections, each AIV's the vector sections, and every unit's the statements outside sections.
The programs follow each other in the Program's instructions, each ending in EXIT;
``Program.unit_entry`` gives each unit's first pc (-1: the unit does not run, as the vector
cores of a kernel without a vector section). AIV1 shares AIV0's program when the two compile
to the same instructions (``get_subblock_id()`` unused or not changing the code).

A mixin of :class:`pypto_sim.frontend.codegen.KernelCompiler`.
"""
from __future__ import annotations

import ast
from contextlib import contextmanager

from .. import dtypes
from ..ir.program import JUMP_OPS
from .values import Const

CUBE_SPACES = ("Mat", "Left", "Right", "Acc", "Bias", "Scaling")
UNIT_KIND = ("cube", "vector", "vector")       # AIC, AIV0, AIV1: the section each one runs


def _name_of(node) -> str | None:
    """The name an expression spells: ``pto.cube`` and a bare ``cube`` (imported from
    pypto_sim) both spell "cube"."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def section_kinds(body) -> set:
    """The section kinds (``"cube"``, ``"vector"``) written in the kernel body."""
    return {_name_of(n.items[0].context_expr.func) for n in ast.walk(ast.Module(body=body, type_ignores=[]))
            if isinstance(n, ast.With) and isinstance(n.items[0].context_expr, ast.Call)
            and _name_of(n.items[0].context_expr.func) in ("cube", "vector")}


def _stream_end(body, kind):
    """The last source line of a unit's program: the end of the last statement it compiles
    (its own sections and the statements outside sections; another unit's section is not in
    its program), as EXIT's line, so a unit's stream ends where its code does."""
    for st in reversed(body):
        if not section_kinds([st]):
            return st.end_lineno              # no section: every unit's code
        call = st.items[0].context_expr if isinstance(st, ast.With) else None
        section = _name_of(call.func) if isinstance(call, ast.Call) else None
        if section in ("cube", "vector"):
            if section == kind.rstrip("0"):
                return st.end_lineno
            continue
        nested = [_stream_end(part, kind) for field in ("body", "orelse", "handlers", "finalbody")
                  for part in [getattr(st, field, None)] if part]
        if any(nested):
            return max(n for n in nested if n)
    return None


def _relative(instrs, base) -> list:
    """The instructions as comparable rows, jump targets relative to base."""
    return [(i.op, i.dst, i.srcs, i.dtype, tuple(a - base for a in i.aux) if i.op in JUMP_OPS else i.aux,
             i.line) for i in instrs]


class AICoreUnits:
    """Per-unit programs of an AI-core kernel."""

    section = None        # None, "cube", "vector" (both AIVs) or "vector0" (AIV0 only)
    unit_index = None     # the unit whose program is being compiled: 0 AIC, 1 AIV0, 2 AIV1
    fmatrix_regs = None   # the AIC's FMATRIX register once pto.setfmatrix wrote it: (fmap, pads)
    buffer_sites = None   # (file, line, column, occurrence) -> index of the tile allocated there
    site_counts = None    # (file, line, column) -> allocations there so far in this unit
    other_units_names = None  # name -> (section kind, line): assigned in another unit's section

    def unit_programs(self, fn_ast, new_scope):
        """Compile the body once per running unit (new_scope() gives a fresh top-level scope
        with the arguments bound, and the arguments); returns (the last unit's scope, the
        arguments, unit_entry). A kernel without sections is one implicit section: cube code
        if it allocates a cube-side tile, else vector code on AIV0 only."""
        body = fn_ast.body
        kinds = section_kinds(body)
        implicit = None
        if not kinds:
            cube = any(isinstance(n, ast.keyword) and n.arg == "loc" and _name_of(n.value) in CUBE_SPACES
                       for n in ast.walk(ast.Module(body=body, type_ignores=[])))
            implicit, running = ("cube", (0,)) if cube else ("vector0", (1,))
        else:
            running = tuple(u for u in range(len(UNIT_KIND)) if UNIT_KIND[u] in kinds
                            and not (u == 2 and getattr(self.kernel, "aiv_ratio", 2) == 1))
        self.buffer_sites = {}
        entry, sizes, scope, args = [-1] * len(UNIT_KIND), [], None, ()
        for unit in running:
            self.unit_index, self.site_counts, self.other_units_names = unit, {}, {}
            self.n_lane = self.n_wide_lane = self.n_scalar = 0   # each unit has its own registers
            self.group_flags = self.kernel_flags = None          # and its own flags
            self.fmatrix_regs = None                              # and FMATRIX (pto.setfmatrix)
            self.tpipes = []                                      # and TPipes (pto.tpipe)
            start = len(self.instrs)
            scope, args = new_scope()
            if implicit is not None:
                with self.unit_section(implicit, body[0]):
                    self.block(body)
            else:
                self.block(body)
            self.emit_exit(fn_ast, _stream_end(body, implicit or UNIT_KIND[unit]))
            sizes.append((self.n_lane, self.n_wide_lane, self.n_scalar))
            mate = entry[1]
            if unit == 2 and mate >= 0 and \
                    _relative(self.instrs[mate:start], mate) == _relative(self.instrs[start:], start):
                del self.instrs[start:]                          # AIV1 runs AIV0's program
                start = mate
            entry[unit] = start
        self.n_lane, self.n_wide_lane, self.n_scalar = (max(s) for s in zip(*sizes))
        self.unit_index = None
        return scope, args, tuple(entry)

    # ---------------------------------------------------------------- sections
    def stmt_With(self, node):
        call = node.items[0].context_expr if len(node.items) == 1 else None
        func = None
        if isinstance(call, ast.Call):
            try:
                func = self.expr(call.func)
            except Exception:
                func = None
        if getattr(func, "is_pto_intrinsic", False) and func.name in ("cube", "vector"):
            if call.args or call.keywords or node.items[0].optional_vars is not None:
                self.error(node, f"write `with pto.{func.name}():`, without arguments or `as`")
            if self.section is not None:
                self.error(node, f"pto.{func.name}() inside a pto.{self.section.rstrip('0')}() "
                                 "section: sections do not nest")
            if UNIT_KIND[self.unit_index] == func.name:
                with self.unit_section(func.name, node):
                    self.block(node.body)
            else:                            # another unit's code is not in this unit's program
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                        self.other_units_names.setdefault(sub.id, (func.name, sub.lineno + self.kernel.line_offset))
            return
        return super().stmt_With(node)

    @contextmanager
    def unit_section(self, kind, node):
        """The statements of a section: 'cube' (the AIC's), 'vector' (each AIV's) or
        'vector0' (AIV0's: a vector kernel without sections)."""
        self.section = kind
        try:
            yield
        finally:
            self.section = None

    def refuse_other_units_name(self, name, node):
        """A name used in this unit's program but assigned only in another unit's section."""
        if name in (self.other_units_names or {}):
            kind, line = self.other_units_names[name]
            units = "the AIC's" if kind == "cube" else "the AIVs'"
            self.error(node, f"'{name}' is assigned in `with pto.{kind}():` at line {line}, which "
                             f"is {units} program, not this unit's: each unit runs its own program",
                       "cube and vector cores share nothing but GM: hand data over through a GM "
                       "tensor and cross-core flags, or compute the value outside the sections")

    def subblock_id(self, node):
        """``pto.get_subblock_id()``: the vector core's number, a constant of its program."""
        if node.args or node.keywords:
            self.error(node, "pto.get_subblock_id() takes no arguments")
        if self.section not in ("vector", "vector0"):
            self.error(node, "pto.get_subblock_id() is the vector core's number: use it inside "
                             "`with pto.vector():`", "the cube core has no sub-block id")
        return Const(self.unit_index - 1, dtypes.int32, weak=False)

    # ---------------------------------------------------------------- tiles
    def shared_buffer(self, node, make) -> int:
        """The index of the tile this statement allocates. Each unit's spaces are its own, so
        the tile a statement allocates in one unit's program is at the same words in the
        next's (AIV1's tiles are AIV0's words of its own UB; a tile allocated outside sections
        is each unit's): the first program to reach the statement calls make() to append
        it, later ones take it (the n-th allocation at a site in each)."""
        site = (self.kernel.file, getattr(node, "lineno", 0) + self.kernel.line_offset,
                getattr(node, "col_offset", 0))
        k = self.site_counts.get(site, 0)
        self.site_counts[site] = k + 1
        key = site + (k,)
        if key not in self.buffer_sites:
            make()
            self.buffer_sites[key] = len(self.buffers) - 1
        return self.buffer_sites[key]
