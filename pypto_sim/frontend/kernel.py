"""``@pto.kernel``: a Python function compiled to PTO IR, once per argument signature."""
from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np

from .. import dtypes
from ..errors import CompileError, LaunchError
from ..ir import ArgSpec, Program
from ..ir.verify import verify
from ..ir.printer import format_program
from .builtins import COMM_BUILTINS
from .codegen import KernelCompiler

# the module-level values a kernel compiles in that are compared by value when it launches
# again (numbers, strings, tuples of them); every other one (a dtype, an inlined helper
# kernel, a module) must still be the same object
VALUE_TYPES = (bool, int, float, complex, str, tuple, np.generic)


class Kernel:
    """A kernel: the function's source and AST, and its compiled Programs by signature.

    Launch it with ``pto.launch(kernel, grid=..., block=..., args=...)``; calling it directly
    is an error. Other kernels may call it as a helper (it is inlined).
    """

    is_pto_kernel = True

    def __init__(self, fn, sync="auto", aiv_ratio=2):
        if sync not in ("auto", "manual"):
            raise CompileError(f"@pto.kernel(sync={sync!r}): sync must be 'auto' or 'manual'",
                               kernel=getattr(fn, "__name__", None),
                               hint="'auto' orders tile operations by their data (PTO-Auto); "
                                    "'manual' orders pipes only by set_flag/wait_flag")
        if aiv_ratio not in (1, 2) or isinstance(aiv_ratio, bool):
            raise CompileError(f"@pto.kernel(aiv_ratio={aiv_ratio!r}): an AI core runs its vector code on 2 AIVs "
                               "(a 1:2 mix kernel, the default) or on AIV0 alone (1: CANN's "
                               "KERNEL_TYPE_MIX_AIC_1_1, pto-isa's __MIX_CORE_AIV_RATIO__ 1)",
                               kernel=getattr(fn, "__name__", None), hint="pass aiv_ratio=1 or aiv_ratio=2")
        self.sync = sync
        self.aiv_ratio = aiv_ratio
        self.fn = fn
        self.name = fn.__name__
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as exc:
            raise CompileError(f"cannot read the source of '{fn.__name__}': {exc}",
                               kernel=fn.__name__,
                               hint="kernels must be defined in a file (not typed at a bare prompt)") from None
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        self.first_line = first
        source = textwrap.dedent("".join(lines))
        tree = ast.parse(source)
        fn_ast = tree.body[0]
        if not isinstance(fn_ast, ast.FunctionDef):
            raise CompileError(f"@pto.kernel must decorate a plain function, not {type(fn_ast).__name__}",
                               kernel=fn.__name__, file=self.file, line=first)
        self.fn_ast = fn_ast
        self.line_offset = first - 1
        self.source_lines = {first + i: text.rstrip() for i, text in enumerate(lines)}
        self.fn_globals = fn.__globals__
        self.closure = inspect.getclosurevars(fn).nonlocals if fn.__closure__ else {}
        self.params = [a.arg for a in fn_ast.args.args]
        a = fn_ast.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
            raise CompileError("kernel parameters must be plain positional names (no defaults, "
                               "*args, **kwargs or keyword-only parameters)",
                               kernel=self.name, file=self.file, line=fn_ast.lineno + self.line_offset)
        self._programs: dict = {}
        self._captured: dict = {}    # signature -> module-level values compiled in (codegen)
        self.size_params = size_deciding_params(fn_ast, self.params)
        self.aicore = uses_aicore(fn_ast)

    def __call__(self, *args, **kwargs):
        raise LaunchError(f"kernel '{self.name}' cannot be called like a Python function",
                          kernel=self.name,
                          hint=f"launch it: pto.launch({self.name}, grid=(...), block=(...), args=(...)); "
                               "or call it from another @pto.kernel, where it is inlined")

    def __repr__(self):
        return f"<pto.kernel {self.name}({', '.join(self.params)}) at {self.file}:{self.first_line}>"

    # ---------------------------------------------------------------- specialisation
    def signature_of(self, args) -> tuple:
        """The argument signature used to specialise: per parameter, ('tensor', dtype) (with
        its row stride for a 2-D tensor or view, compiled into ``a[r, c]``),
        ('scalar', dtype), or ('const', int32, value) for an int parameter that sizes a buffer
        (``alloc_local(tile_m * tile_k)``): the kernel compiles once per distinct value."""
        if len(args) != len(self.params):
            raise LaunchError(f"kernel '{self.name}' takes {len(self.params)} arguments "
                              f"({', '.join(self.params)}) but {len(args)} were given",
                              kernel=self.name, hint="pass args=(...) with one value per parameter")
        sig = []
        for name, value in zip(self.params, args):
            if getattr(value, "is_device_tensor", False):
                stride = getattr(value, "row_stride", 0)     # 2-D: a[r, c] is r * stride + c
                sig.append(("tensor", value.dtype, stride) if stride else ("tensor", value.dtype))
            elif isinstance(value, bool):
                sig.append(("scalar", dtypes.int32))
            elif isinstance(value, (int, float, np.generic)) or (hasattr(value, "dtype") and getattr(value, "shape", None) == ()):
                sig.append(self._scalar_signature(name, value))
            else:
                hint = ("copy host arrays to the device first: d = pto.alloc_tensor(nbytes); "
                        "pto.memcpy_h2d(d, array)") if hasattr(value, "shape") else None
                raise LaunchError(f"argument '{name}' is a {type(value).__name__}; kernels take device "
                                  "tensors, ints and floats", kernel=self.name, hint=hint)
        return tuple(sig)

    def _scalar_signature(self, name, value) -> tuple:
        """The signature entry of a scalar argument: a Python int is int32 (a size-deciding
        one is compiled in), a Python float float32 (the project's rule for literals and
        scalars, docs/simt.md); a numpy scalar (or 0-d array) keeps its dtype as numba-cuda
        types it: np.int64 int64 (exact, as its bits), np.uint32 uint32, np.float64 float64,
        np.float16 float16, np.bool_ bool; np.int8 / int16 / uint8 / uint16 are int32 lane
        values, as kernels load those tensors."""
        npd = np.asarray(value).dtype if hasattr(value, "dtype") else None   # np.float64 is a float too
        if npd is None and isinstance(value, float):
            return ("scalar", dtypes.float32)
        if npd is not None and npd.kind == "b":
            return ("scalar", dtypes.bool_)
        if npd is not None and npd.kind == "f":
            by_size = {2: dtypes.float16, 4: dtypes.float32, 8: dtypes.float64}
            if npd.itemsize not in by_size:
                raise LaunchError(f"argument '{name}' is a {npd.name}, which kernels do not compute in",
                                  kernel=self.name, hint="pass np.float64(x), np.float32(x) or np.float16(x)")
            return ("scalar", by_size[npd.itemsize])
        if npd is not None and npd.kind not in "iu":
            raise LaunchError(f"argument '{name}' is a {npd.name}; kernels take device tensors, ints, "
                              "floats and numpy's int, uint, float and bool scalars", kernel=self.name)
        number = int(value)
        if npd is not None and npd == np.uint64:
            raise LaunchError(f"argument '{name}' is a uint64 ({number}); kernels have no uint64 values",
                              kernel=self.name, hint="pass np.int64(x) (values below 2**63) or np.uint32(x)")
        if npd is not None and npd == np.uint32 and name not in self.size_params:
            return ("scalar", dtypes.uint32)                # numba-cuda types it uint32 too
        if npd is not None and npd == np.int64 and name not in self.size_params:
            return ("scalar", dtypes.int64)                 # held as its bits: exact
        if not -2**31 <= number < 2**31:
            raise LaunchError(f"argument '{name}' = {number} does not fit in int32", kernel=self.name,
                              hint="a Python int argument is an int32; pass np.int64(x) for an int64 "
                                   "(a value that sizes a buffer must fit int32)")
        if name in self.size_params:
            return ("const", dtypes.int32, number)
        return ("scalar", dtypes.int32)

    def program_for(self, args) -> Program:
        """The compiled Program for these launch arguments (compiled once per signature)."""
        sig = self.signature_of(args)
        prog = self._programs.get(sig)
        if prog is not None:
            self._check_captured_globals(sig)
        if prog is None:
            specs = []
            tensor_slot = 0
            for name, (kind, dtype, *value) in zip(self.params, sig):
                if kind == "tensor":
                    specs.append(ArgSpec(name, "tensor", dtype, tensor_slot, value=value[0] if value else None))
                    tensor_slot += 1
                elif kind == "const":
                    specs.append(ArgSpec(name, "const", dtype, -1, value=value[0]))
                else:
                    specs.append(ArgSpec(name, "scalar", dtype, -1))
            compiler = KernelCompiler(self, specs)
            try:
                prog = compiler.compile()
            except CompileError as exc:
                # the message names the user's file and line and shows it: the compiler's
                # recursion (a frame pair per nested statement) would only bury it
                raise exc.with_traceback(None) from None
            verify(prog)
            self._programs[sig] = prog
            self._captured[sig] = compiler.captured_globals
        return prog

    def _check_captured_globals(self, sig):
        """Refuse to run a compiled program whose module-level values changed since it was
        compiled (as Triton does): the kernel would silently run with the old ones."""
        missing = object()
        for name, (namespace, then, file, line) in self._captured.get(sig, {}).items():
            now = namespace.get(name, missing)
            if not same_value(then, now):
                now_text = "deleted" if now is missing else repr(now)
                raise CompileError(
                    f"the module-level value '{name}' has changed since this kernel was compiled, "
                    f"from {then!r} to {now_text}; the compiled kernel still has {then!r}",
                    kernel=self.name, file=file, line=line,
                    hint=(f"a kernel compiles module-level constants in (as numba and Triton do): "
                          f"pass '{name}' as a kernel argument to vary it, set it back, or make the "
                          f"kernel again with pto.kernel(fn) after changing it") if isinstance(then, VALUE_TYPES)
                    else (f"a kernel compiles in the module-level helpers and dtypes it uses: set "
                          f"'{name}' back, or make the kernel again with pto.kernel(fn) after changing it"))

    def asm(self, grid=(1, 1, 1), block=(32, 1, 1), args=()) -> str:
        """The PTO assembly listing for these arguments: one instruction per line, each with the
        Python source line it came from. grid and block are shown in the header."""
        return format_program(self.program_for(args), grid=grid, block=block)


def same_value(then, now) -> bool:
    """True when a module-level value is still what a kernel compiled in: a number, string or
    tuple of the same type and equal (2 and 2.0 compile to different dtypes); anything else
    (a dtype, an inlined helper kernel, a module) the same object."""
    if type(then) is not type(now):
        return False
    if not isinstance(then, VALUE_TYPES):
        return then is now
    try:
        return bool(then == now)
    except Exception:            # noqa: BLE001 - a value without a plain truth of ==
        return then is now


# call -> (positional index, keyword) of the arguments that size a buffer, a pipeline, a
# contiguous tile transfer (nbytes must be checked when the kernel compiles: tile_shape) or a
# prefetch's DMAs
SIZING_CALLS = {"alloc_local": ((0, "n_elems"),), "alloc_tile": ((0, "rows"), (1, "cols")),
                "pipeline": ((0, "depth"),), "async_load": ((2, "nbytes"),),
                "store": ((2, "nbytes"),),
                # the slice's shape decides the DMAs TPrefetch.hpp issues (frontend/prefetch_builtins.py)
                "tprefetch": ((2, "rows"), (3, "cols")),
                # the slice's shape decides the chunks TPut.hpp / TGet.hpp move (frontend/comm_transfers.py)
                "tput": ((3, "rows"), (4, "cols")), "tget": ((3, "rows"), (4, "cols")),
                # ... and the chunks of the collectives (frontend/comm_collectives.py)
                "tbroadcast": ((3, "rows"), (4, "cols")), "comm_tgather": ((3, "rows"), (4, "cols")),
                "comm_tscatter": ((3, "rows"), (4, "cols")), "treduce": ((5, "rows"), (6, "cols"))}


def call_name(func) -> str | None:
    """The builtin a call's function names: pto.X's X, or for pto.comm.X (pypto_sim/comm.py,
    pto-isa's comm names) the builtin it stands for (pto.comm.tgather: comm_tgather)."""
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Attribute) and func.value.attr == "comm":
            return COMM_BUILTINS.get(func.attr, func.attr)
        return func.attr
    return getattr(func, "id", None)


def size_deciding_params(fn_ast, params) -> frozenset:
    """The parameters whose values decide a buffer's size (or a pipeline's depth): those the
    size expressions of alloc_local / alloc_tile / pipeline name, directly or through the
    variables they are computed from. Parameters the kernel reassigns are left out (their
    value is not the argument's). Found from the source, once per kernel."""
    needed = set()
    for node in ast.walk(fn_ast):
        if isinstance(node, ast.Call):
            name = call_name(node.func)
            if name in SIZING_CALLS:
                where = SIZING_CALLS[name]
                exprs = [node.args[i] for i, _ in where if i < len(node.args)]
                exprs += [k.value for k in node.keywords if k.arg in {kw for _, kw in where}]
                for expr in exprs:
                    needed |= {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    assigned = {}
    for node in ast.walk(fn_ast):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        assigned.setdefault(n.id, []).append(node.value)
    changed = True
    while changed:                       # through the variables the sizes are computed from
        changed = False
        for var in list(needed):
            for value in assigned.get(var, ()):
                names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} - needed
                if names:
                    needed |= names
                    changed = True
    return frozenset(p for p in params if p in needed and p not in assigned)


# the calls that make a kernel run on the real AI core (docs/aicore.md)
AICORE_CALLS = frozenset({"alloc_tile", "cube", "vector", "tpipe", "syncall"})


def uses_aicore(fn_ast) -> bool:
    """True when the kernel allocates typed tiles, makes a TPipe or has cube()/vector() sections: it runs on
    the real AI core (one AIC and two AIVs per block) instead of the lane model."""
    for node in ast.walk(fn_ast):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in AICORE_CALLS:
                return True
    return False


def kernel(fn=None, *, sync="auto", aiv_ratio=2):
    """Decorator: compile a Python function into a PTO kernel (see docs/quickstart.md).

    ``@pto.kernel`` or ``@pto.kernel(sync="manual")``: tile kernels on the real AI core order
    their pipes by data by default (``"auto"``, as PTO-Auto); with ``"manual"`` only
    set_flag / wait_flag (and pipe_barrier) order them, as on hardware (docs/aicore.md).
    ``aiv_ratio=1`` runs the vector sections on AIV0 alone (a 1:1 mix kernel)."""
    if fn is None:
        return lambda f: Kernel(f, sync=sync, aiv_ratio=aiv_ratio)
    return Kernel(fn, sync=sync, aiv_ratio=aiv_ratio)
