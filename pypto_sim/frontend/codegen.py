"""The kernel compiler: a kernel's Python AST -> PTO IR (a Program).

Names, binding and plain statements live here; control flow (if, loops, break, continue,
return) in ``control.py``; expressions in ``expressions.py``. The builtins' lowerings are
registered in ``registry.py``'s LOWERINGS by the modules of LOWERING_MODULES (memory, tile,
AI-core, warp, layout, mask, sort, conv, partial arg-selection, relu-conversion and value
builtins), which are imported here, before the registry is checked against the ISA table and
frozen.
"""
from __future__ import annotations

import ast
import builtins as py_builtins
import dataclasses

from .. import dtypes
from ..errors import CompileError
from ..ir import ArgSpec, Instr, Program, Reg
from ..ir.program import int_sem_of
from ..isa import load_isa
from ..isa.tile_roles import FAMILY_ROLES
from . import (aicore_builtins, comm_collectives, comm_signal_builtins, comm_transfers, conv_builtins,
               gm_index_builtins, gm_transfers, layout_builtins, mask_builtins, mat_fill_builtins, memory_builtins,
               nz_windows, pair_builtins, partial_arg_builtins, prefetch_builtins, print_builtins, quant_builtins,
               relu_conv_builtins, scalar_memory_builtins, sort_builtins, syncall_builtins, tile_builtins,
               tpipe_builtins, value_builtins, vec_windows, warp_builtins)
from .aicore_builtins import AICoreTiles
from .aicore_scalar import LANE_INSTRUCTIONS
from .builtins import BUILTINS
from .control import ControlFlowLowering
from .expressions import ExprLowering
from .helpers import HelperInlining
from .memory_builtins import MemoryOperands
from .pipeline import PipelineLowering
from .python_objects import PythonObjects
from .registry import LOWERINGS
from .tile_builtins import TileOperands
from .tile_group import TileGroupLowering
from .tpipe_builtins import drain_tpipes
from .block_level import BlockLevel, check_tile_instruction
from .uniformity import HELPER_CALL, UNRESOLVED, VARYING_BUILTINS, Uniformity, assignment_sites, callee
from .scope import PER_LANE_IF, UNIFORM_IF, Scope
from .values import Const, HomeVar, LocalArray, Ptr, PtrVar, Text, Val


UNSUPPORTED_STMTS = {"Try": "a try statement", "TryStar": "a try statement",
                     "AsyncWith": "an async with statement", "Import": "an import",
                     "ImportFrom": "an import", "Global": "a global declaration",
                     "Nonlocal": "a nonlocal declaration", "FunctionDef": "a nested function definition",
                     "AsyncFunctionDef": "a nested function definition", "ClassDef": "a class definition",
                     "Raise": "a raise statement", "Assert": "an assert statement",
                     "Delete": "a del statement", "Match": "a match statement", "AsyncFor": "an async for loop"}




# the modules whose @LOWERINGS decorators register the builtins' lowerings (registry.py); the
# registry is checked against the ISA table and frozen once they are all imported
LOWERING_MODULES = (aicore_builtins, comm_collectives, comm_signal_builtins, comm_transfers, conv_builtins,
                    gm_index_builtins, gm_transfers, layout_builtins, mask_builtins, mat_fill_builtins,
                    memory_builtins, nz_windows, pair_builtins, partial_arg_builtins, prefetch_builtins,
                    print_builtins, quant_builtins, relu_conv_builtins, scalar_memory_builtins, sort_builtins,
                    syncall_builtins, tile_builtins, tpipe_builtins, value_builtins, vec_windows, warp_builtins)
LOWERINGS.freeze(BUILTINS)


class KernelCompiler(TileGroupLowering, AICoreTiles, TileOperands, ExprLowering, PythonObjects, MemoryOperands,
                     HelperInlining, PipelineLowering, ControlFlowLowering):
    """Compiles one kernel for one argument signature into a Program."""

    def __init__(self, kernel, arg_specs):
        self.kernel = kernel
        self.isa = load_isa()
        self.instrs: list = []
        self.n_lane = 0
        self.n_wide_lane = 0        # lane registers of float64 / int64: 8 bytes a lane
        self.n_scalar = 0
        self.buffers: list = []
        self.arg_specs = arg_specs
        self.scopes: list = []
        self.loop_depth = 0
        self.inline_stack = [kernel]
        self.block_level = None     # a lane kernel's BlockLevel analysis (of the helper being inlined)
        # module-level values compiled in: name -> (its module's globals, value, file, line);
        # a launch after one of them changed is refused (Kernel.program_for)
        self.captured_globals: dict = {}
        # line -> source text for the listing, profiler and errors; inlined helpers add theirs
        self.source_lines = dict(kernel.source_lines)
        # while inlining a helper defined in another file: the line of its outermost call here
        self.call_site_line = None

    # ---------------------------------------------------------------- infrastructure
    def error(self, node, message, hint=None, kernel=None):
        line = getattr(node, "lineno", 0) + self.kernel.line_offset if node is not None else None
        construct = ""
        if node is not None:
            try:
                construct = ast.unparse(node).splitlines()[0][:80]
            except Exception:
                construct = type(node).__name__
        raise CompileError(message, kernel=self.kernel.name, file=self.kernel.file, line=line,
                           hint=hint, construct=construct, source=self.kernel.source_lines.get(line))

    def new_reg(self, dtype, uniform: bool) -> Reg:
        if uniform:
            self.n_scalar += 1
            return Reg(self.n_scalar - 1, dtype, True)
        self.n_lane += 1
        if dtype is not None and dtype.itemsize == 8:
            self.n_wide_lane += 1
        return Reg(self.n_lane - 1, dtype, False)

    def emit(self, op, dst, srcs, dtype, node, aux=()) -> int:
        if op in LANE_INSTRUCTIONS and self.is_aicore:
            self.refuse_lane_instruction(op, node)     # a unit of an AI core has no lanes
        if self.block_level is not None and node is not None and self.isa[op].family in FAMILY_ROLES:
            check_tile_instruction(self, self.block_level, op, node)     # warp 0 alone issues it
        line = getattr(node, "lineno", 0) + self.kernel.line_offset if node is not None else 0
        if self.call_site_line is not None:     # inlined from another file: its call's line (helpers.py)
            line = self.call_site_line
        self.instrs.append(Instr(op, dst, tuple(srcs), dtype, tuple(aux), line))
        return len(self.instrs) - 1

    def patch(self, pc, *aux):
        self.instrs[pc].aux = tuple(aux)

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    def is_uniform_expr(self, node) -> bool:
        return not self.uniformity_of(self.scope).expr(node)

    def uniformity_of(self, scope):
        u = Uniformity([], self.is_varying_call)
        u.varying = scope.varying
        return u

    def is_varying_call(self, call, args_varying) -> bool:
        try:
            func = self.resolve_static(call.func)
        except CompileError:
            return True
        name = getattr(func, "name", None)
        if name in VARYING_BUILTINS:
            return True
        if hasattr(func, "is_pto_kernel"):
            return True
        return args_varying

    def resolve_static(self, node):
        """Resolve a call's function expression without emitting code (for the analysis)."""
        if isinstance(node, ast.Name):
            if node.id in self.scope.names:
                return None
            return self.lookup(node.id, node)
        if isinstance(node, ast.Attribute):
            return self.expr_Attribute(node)
        return None

    def lookup(self, name, node):
        scope = self.scope
        if name in scope.names:
            bound = scope.names[name]
            if isinstance(bound, HomeVar):
                return Val(bound.reg)
            if isinstance(bound, PtrVar):
                return Ptr(bound.proto.space, bound.proto.slot, bound.proto.dtype, bound.proto.name,
                           Val(bound.reg), bound.proto.count, bound.proto.base, tile=bound.proto.tile,
                           row_stride=bound.proto.row_stride)
            return bound
        if name in scope.conditional:
            line, _bound, why = scope.conditional[name]
            if why == PER_LANE_IF:
                self.error(node, f"'{name}' is assigned only under the per-lane condition at line "
                                 f"{line}, so the lanes that did not take that branch have no value "
                                 f"for it here",
                           f"give it a value for every lane before the if (e.g. `{name} = 0.0`), or "
                           f"assign it in an else branch too")
            what = ("the condition there is known only at run time, and when it is false" if why == UNIFORM_IF
                    else "the loop may run zero times, and when it does")
            self.error(node, f"'{name}' is assigned only {why} at line {line}; {what} '{name}' has no "
                             f"value here (Python's UnboundLocalError)",
                       f"give it a value before the {'if' if why == UNIFORM_IF else 'loop'} (e.g. `{name} = 0`)"
                       + (", or assign it in an else branch too" if why == UNIFORM_IF else ""))
        if name in scope.sites:
            self.refuse_other_units_name(name, node)
            self.error(node, f"'{name}' is used before it is assigned")
        if name in scope.closure:
            return self.from_python(scope.closure[name], node, name)
        if name in scope.fn_globals:
            value = scope.fn_globals[name]
            if name not in self.captured_globals:        # every module-level value it compiles in
                self.captured_globals[name] = (scope.fn_globals, value, self.kernel.file,
                                               getattr(node, "lineno", 0) + self.kernel.line_offset)
            return self.from_python(value, node, name)
        if hasattr(py_builtins, name):
            return self.from_python(getattr(py_builtins, name), node, name)
        self.error(node, f"name '{name}' is not defined",
                   "define it at module level, or pass it to the kernel as an argument")

    # ---------------------------------------------------------------- program
    def compile(self) -> Program:
        fn_ast = self.kernel.fn_ast
        params = [a.arg for a in fn_ast.args.args]
        sites = assignment_sites(fn_ast.body)
        varying = Uniformity(fn_ast.body, self._varying_call_for_analysis(self.kernel)).run()
        self.block_level = (None if self.kernel.aicore else
                            BlockLevel(fn_ast.body, self.kernel, self.kernel.line_offset))

        def new_scope():
            scope = Scope(self.kernel.fn_globals, self.kernel.closure, varying, sites, params, fn_ast.body)
            self.scopes = [scope]
            return scope, self.bind_args(scope, fn_ast, varying)
        unit_entry = ()
        if self.kernel.aicore:
            scope, args, unit_entry = self.unit_programs(fn_ast, new_scope)
        else:
            scope, args = new_scope()
            self.block(fn_ast.body)
            self.emit_exit(fn_ast)
        return Program(kernel=self.kernel.name, file=self.kernel.file,
                       first_line=self.kernel.first_line, args=args, instrs=self.instrs,
                       n_lane_slots=self.n_lane, n_wide_lane_slots=self.n_wide_lane,
                       n_scalar_regs=self.n_scalar,
                       buffers=tuple(self.buffers), source_lines=self.source_lines,
                       symbols=self._symbols(scope), aicore=self.kernel.aicore,
                       sync=self.kernel.sync, unit_entry=unit_entry)

    def bind_args(self, scope, fn_ast, varying) -> tuple:
        """Bind the kernel's parameters in its top-level scope; returns their ArgSpecs."""
        args = []
        for spec in self.arg_specs:
            if spec.kind == "tensor":
                ptr = Ptr("hbm", spec.slot, spec.dtype, spec.name, Const(0, dtypes.int32),
                          row_stride=spec.value or 0)
                self.bind(spec.name, ptr, fn_ast, is_param=True)
                args.append(spec)
            elif spec.kind == "const":
                # a size-deciding argument: compiled in as its value (Kernel.signature_of)
                scope.names[spec.name] = Const(spec.value, spec.dtype, weak=False)
                args.append(spec)
            else:
                reg = self.new_reg(spec.dtype, True)
                scope.names[spec.name] = HomeVar(reg, fn_ast.lineno)
                args.append(ArgSpec(spec.name, "scalar", spec.dtype, spec.slot, reg))
                if spec.name in varying:
                    # assigned under varying control: give it a per-lane home seeded from the arg
                    home = self.new_reg(spec.dtype, False)
                    self.emit("MOV", home, (reg,), spec.dtype, fn_ast, aux=(int_sem_of(spec.dtype),))
                    scope.names[spec.name] = HomeVar(home, fn_ast.lineno)
        return tuple(args)

    def emit_exit(self, fn_ast, end=None):
        """The program's last instruction, at the kernel's last line (``end``: the line, in the
        kernel's source, where an AI-core unit's program ends, aicore_units._stream_end)."""
        drain_tpipes(self)                # TPipe::~TPipe: the unit's pipes drain their free signals
        self.tpipes = []
        self.emit("EXIT", None, (), None, None)
        self.instrs[-1].line = (end or fn_ast.body[-1].end_lineno) + self.kernel.line_offset

    @staticmethod
    def _symbols(scope) -> dict:
        """name -> Reg of the kernel's variables held in registers (the debugger's symbol table)."""
        out = {}
        bindings = {name: bound for name, (_line, bound, _why) in scope.conditional.items()}
        bindings.update(scope.names)
        for name, bound in bindings.items():
            if isinstance(bound, HomeVar):
                out[name] = bound.reg
            elif isinstance(bound, Val) and isinstance(bound.reg, Reg):
                out[name] = bound.reg
        return out

    def _varying_call_for_analysis(self, kernel):
        name_of = self._call_name_for_analysis(kernel)

        def check(call, args_varying):
            return name_of(call) in VARYING_BUILTINS or args_varying
        return check

    @staticmethod
    def _call_name_for_analysis(kernel):
        """call -> the name of the builtin it calls, HELPER_CALL for a helper kernel or a call
        not resolved (its value may differ from lane to lane), None for others: what the
        lane uniformity analysis looks up."""
        def name_of(call):
            func = callee(kernel, call)
            return (HELPER_CALL if func is UNRESOLVED or hasattr(func, "is_pto_kernel")
                    else getattr(func, "name", None))
        return name_of

    # ---------------------------------------------------------------- binding
    def bind(self, name, value, node, is_param=False):
        if isinstance(value, Text):
            self.error(node, f"the str constant {value.value!r} is not supported as a kernel value",
                       "strings only name pipes and pipeline stages, directly in the call")
        scope = self.scope
        multi = scope.sites.get(name, 0) > 1 or (is_param and scope.sites.get(name, 0) > 0)
        existing = scope.names.get(name)
        if isinstance(value, Ptr):
            typed = value.tile is not None or (isinstance(existing, PtrVar) and existing.proto.tile is not None)
            if typed and (multi or isinstance(existing, PtrVar)):
                self.error(node, f"'{name}' is assigned more than once and holds typed tile "
                                 f"'{value.name}': a typed tile's operand is the tile itself, not an "
                                 "address computed at run time",
                           "name the tile where it is used (one variable per pto.alloc_tile), and "
                           "take a window with pto.tsubview")
            value = self.rename_buffer(value, name)
            if isinstance(existing, PtrVar):
                if (existing.proto.space, existing.proto.slot) != (value.space, value.slot):
                    self.error(node, f"pointer '{name}' pointed into '{existing.proto.name}' "
                                     f"(line {existing.line}) and now into '{value.name}'",
                               "use a separate variable for each tensor")
                if self.retarget_last(value.offset, existing.reg):
                    return      # `p = p + 1`: the ADD writes p's offset register directly
                self.emit("MOV", existing.reg, (self.operand(value.offset, dtypes.int32, node),),
                          dtypes.int32, node, aux=(1,))
                return
            if existing is not None and not isinstance(existing, Ptr):
                self.error(node, f"'{name}' held a value and is now assigned a pointer")
            if multi:
                reg = self.new_reg(dtypes.int32, name not in scope.varying)
                self.emit("MOV", reg, (self.operand(value.offset, dtypes.int32, node),),
                          dtypes.int32, node, aux=(1,))
                scope.names[name] = PtrVar(value, reg, getattr(node, "lineno", 0))
            else:
                scope.names[name] = self.snapshot(value, node)
            return
        if isinstance(value, LocalArray):
            if name in scope.names:
                self.error(node, f"'{name}' is assigned a second local array; a local array is "
                                 "declared once", "use another name for the second array")
            value = dataclasses.replace(value, name=name)
            for ins in self.instrs:
                if ins.op == "LOCAL_ARRAY" and ins.aux == (value.first.index, value.n):
                    ins.comment = f"{name}: {ins.comment}"
        if not isinstance(value, (Const, Val)):
            scope.names[name] = value    # compile-time objects: modules, dtypes, helpers
            return
        if isinstance(existing, (PtrVar, Ptr)):
            self.error(node, f"'{name}' held a pointer and is now assigned a value")
        if isinstance(existing, HomeVar):
            home = existing.reg
            if isinstance(value, Val) and value.dtype != home.dtype:
                first = existing.line + self.kernel.line_offset
                start = f"initialise it with a {value.dtype} value at line {first}"
                if value.dtype.is_float and not home.dtype.is_float:
                    # the classic slip: `acc = 0` then `acc = acc + x` with x a float
                    start += f" (`{name} = 0.0`, not `{name} = 0`)"
                self.error(node, f"'{name}' is {home.dtype} (first assigned at line {first}) "
                                 f"but is assigned a {value.dtype} value here; a variable keeps one dtype",
                           f"{start}, or convert here with pto.cast(..., pto.{home.dtype})")
            if self.retarget_last(value, home):
                return
            src = self.operand(value, home.dtype, node)
            self.emit("MOV", home, (src,), home.dtype, node, aux=(int_sem_of(home.dtype),))
            return
        if not multi:
            scope.names[name] = self.snapshot(value, node)
            return
        uniform = name not in scope.varying
        if isinstance(value, Val) and value.reg.uniform is False and uniform:
            uniform = False
        if (isinstance(value, Val) and value.reg.uniform == uniform and self.instrs
                and self.instrs[-1].dst == value.reg and not self._named(value.reg)):
            # the expression's fresh result register becomes the variable's home: no MOV
            scope.names[name] = HomeVar(value.reg, getattr(node, "lineno", 0))
            return
        home = self.new_reg(value.dtype, uniform)
        self.emit("MOV", home, (self.operand(value, value.dtype, node),), value.dtype, node,
                  aux=(int_sem_of(value.dtype),))
        scope.names[name] = HomeVar(home, getattr(node, "lineno", 0))

    def snapshot(self, value, node):
        """A single-assignment name is bound to its value's register, without a copy. When that
        register is another variable's home and the variable is assigned again while this name
        is live (later in the function, or anywhere in an enclosing loop), `y = x; x = x + 1`
        would make y follow x: then y gets its own copy."""
        reg = value.offset.reg if isinstance(value, Ptr) and isinstance(value.offset, Val) else \
            value.reg if isinstance(value, Val) else None
        if reg is None or not self._home_changes_later(reg, node):
            return value
        copy = self.new_reg(reg.dtype, reg.uniform)
        self.emit("MOV", copy, (reg,), reg.dtype, node, aux=(int_sem_of(reg.dtype),))
        if isinstance(value, Ptr):
            return dataclasses.replace(value, offset=Val(copy))
        return Val(copy)

    def _home_changes_later(self, reg: Reg, node) -> bool:
        scope = self.scope
        owners = {n for n, b in scope.names.items() if isinstance(b, (HomeVar, PtrVar)) and b.reg == reg}
        if not owners:
            return False
        here = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))

        def assigns(tree, after=None):
            for sub in ast.walk(tree):
                targets = sub.targets if isinstance(sub, ast.Assign) else \
                    [sub.target] if isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For)) else []
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name) and n.id in owners and \
                                (after is None or (n.lineno, n.col_offset) > after):
                            return True
            return False
        return any(assigns(loop) for loop in scope.loops) or \
            any(assigns(stmt, here) for stmt in scope.body)

    def retarget_last(self, value, home: Reg) -> bool:
        """Peephole: `x = <expr>` writes the expression's last instruction straight into x's
        home register instead of a temporary plus MOV (so a chain x = fma(x, ..) is one
        instruction per step). Only when no name refers to the temporary."""
        if not (isinstance(value, Val) and self.instrs and self.instrs[-1].dst == value.reg):
            return False
        if value.reg == home or value.dtype != home.dtype:
            return False
        if self._named(value.reg):
            return False
        self.instrs[-1].dst = home
        if value.reg.uniform and self.n_scalar - 1 == value.reg.index:
            self.n_scalar -= 1
        elif not value.reg.uniform and self.n_lane - 1 == value.reg.index:
            self.n_lane -= 1
        return True

    def _named(self, reg: Reg) -> bool:
        """True when some variable refers to this register."""
        for scope in self.scopes:
            for bound in scope.names.values():
                if getattr(bound, "reg", None) == reg:
                    return True
        return False

    # ---------------------------------------------------------------- statements
    def block(self, stmts):
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, node):
        self.current_statement = node     # for names in messages (alloc_tile's variable)
        method = getattr(self, f"stmt_{type(node).__name__}", None)
        if method is None:
            # name the construct as the user wrote it ("with open('f') as f:"), not its AST class
            kind = UNSUPPORTED_STMTS.get(type(node).__name__, type(node).__name__)
            text = ast.unparse(node).splitlines()[0]
            if isinstance(node, (ast.Try, ast.FunctionDef, ast.ClassDef, ast.With, ast.AsyncWith,
                                 ast.AsyncFunctionDef, ast.AsyncFor)) and not text.endswith(":"):
                text += ":"
            self.error(node, f"'{text}' ({kind}) is not supported in a kernel",
                       "kernels support assignments, if/elif/else, for-range, while, break, "
                       "continue, return and calls")
        method(node)

    def stmt_Pass(self, node):
        pass

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return   # docstring
        self.expr(node.value)

    def stmt_Assign(self, node):
        if len(node.targets) != 1:
            self.error(node, "chained assignment (a = b = ...) is not supported in a kernel")
        self.assign(node.targets[0], self.vexpr(node.value), node)

    def stmt_AnnAssign(self, node):
        if node.value is None:
            self.error(node, "a declaration without a value is not supported in a kernel")
        self.assign(node.target, self.expr(node.value), node)

    def stmt_AugAssign(self, node):
        # `o[i] += v` reads o[i] (a[i] in a value context is its element), then stores: a plain
        # load / compute / store, not an atomic
        value = self.vexpr(ast.copy_location(ast.BinOp(node.target, node.op, node.value), node))
        self.assign(node.target, value, node)

    def assign(self, target, value, node):
        if isinstance(target, ast.Name):
            self.bind(target.id, value, node)
            return
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, tuple):
            # `bits, pred = pto.match_all_sync(mask, x)`: a builtin that gives several values
            if len(target.elts) != len(value):
                self.error(node, f"{len(value)} values cannot be unpacked into {len(target.elts)} names")
            for elt, item in zip(target.elts, value):
                self.assign(elt, item, node)
            return
        if isinstance(target, ast.Subscript):
            base = self.expr(target.value)
            if isinstance(base, LocalArray):
                self.local_assign(base, self.vexpr(target.slice), value, node)
                return
            ptr = self.expr(target)
            self.require_value(value, node)
            self.store_to(ptr, value, node)
            return
        self.error(node, f"assignment to '{ast.unparse(target)}' is not supported in a kernel")
