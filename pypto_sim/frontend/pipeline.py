"""The manual software pipeline: ``with pto.pipeline(depth=d) as pl:``, ``pl.range``,
``pl.stage(name, after=...)`` and ``pl.run()``.

Semantics (docs/tiles.md):
- stages are issued in program order by warp 0 of the block; their tile instructions run
  asynchronously on their pipes;
- ``after=`` names stages of the same iteration whose tile operations must complete before
  this stage's operations start (a ``wait_all()`` inside the stage waits for exactly those);
- every ``alloc_local`` inside ``for ... in pl.range(...)`` gets ``depth`` copies, and iteration
  i uses copy i % depth: up to ``depth`` iterations are in flight, each with its own buffers,
  so iteration i+1's loads run while iteration i computes, and a buffer is reused only after
  its last reader of iteration i - depth has finished (the timing model's hazard tracking);
- ``depth=1`` is the serial baseline; ``pl.run()`` marks the end (optional, inside or after
  the ``with``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .. import dtypes
from ..errors import CompileError
from .values import NONE, Const, Text

MAX_STAGES = 60
LANE_MEMORY = ("LOAD", "STORE", "FMA_STORE", "LOAD_L1", "STORE_L1")


class PipelineFactory:
    """``pto.pipeline(depth=2)``: only meaningful as ``with pto.pipeline(...) as pl:`` in a kernel."""

    is_pipeline_factory = True
    __name__ = "pipeline"

    def __call__(self, depth=2):
        raise CompileError("pto.pipeline() was used outside a @pto.kernel",
                           hint="write `with pto.pipeline(depth=2) as pl:` inside a kernel")

    def __repr__(self):
        return "<pto.pipeline(depth=2)>"


pipeline = PipelineFactory()


@dataclass
class PipelineState:
    """One `with pto.pipeline(...)` being compiled."""

    depth: int
    line: int
    stages: dict = field(default_factory=dict)     # name -> tag (1, 2, ...)
    in_loop: bool = False
    had_loop: bool = False
    slot: object = None                            # Val: iteration % depth, inside pl.range
    iter_name: str = ""


@dataclass(frozen=True)
class PipelineRef:
    """The `pl` of `with pto.pipeline(...) as pl`."""

    state: PipelineState


@dataclass(frozen=True)
class PipelineMethod:
    """`pl.range`, `pl.stage` or `pl.run`."""

    state: PipelineState
    name: str
    is_pipeline_method = True


class PipelineLowering:
    """Pipeline half of the kernel compiler."""

    pipeline_state = None

    def pipeline_attribute(self, ref: PipelineRef, node):
        if node.attr not in ("range", "stage", "run"):
            self.error(node, f"a pipeline has range(), stage() and run(), not '{node.attr}'")
        return PipelineMethod(ref.state, node.attr)

    def call_pipeline_method(self, method: PipelineMethod, node):
        if method.name == "run":
            if node.args or node.keywords:
                self.error(node, "pl.run() takes no arguments")
            return NONE
        usage = {"range": "for k in pl.range(start, stop, step):", "stage": "with pl.stage(name, after=...):"}
        self.error(node, f"pl.{method.name}(...) is used as `{usage[method.name]}`")

    def stmt_With(self, node):
        if len(node.items) != 1 or not isinstance(node.items[0].context_expr, ast.Call):
            self.error(node, "'with' in a kernel is only for `with pto.pipeline(...) as pl:` and "
                             "`with pl.stage(...):`")
        item = node.items[0]
        call = item.context_expr
        try:
            func = self.expr(call.func)
        except CompileError:
            func = None       # not ours: report the with statement itself, below
        if getattr(func, "is_pipeline_factory", False):
            return self._pipeline(node, item, call)
        if isinstance(func, PipelineMethod) and func.name == "stage":
            return self._stage(node, func.state, call)
        self.error(node, f"'with {ast.unparse(call)}' (a with statement) is not supported in a kernel",
                   "'with' in a kernel is only for pto.pipeline(...) and pl.stage(...)")

    def _pipeline(self, node, item, call):
        if self.pipeline_state is not None:
            self.error(node, "pipelines cannot be nested")
        args = [self.expr(a) for a in call.args] + [self.expr(k.value) for k in call.keywords if k.arg == "depth"]
        if any(k.arg != "depth" for k in call.keywords) or len(args) > 1:
            self.error(node, "pto.pipeline takes one argument, depth")
        depth = args[0] if args else Const(2, dtypes.int32)
        self.int_constant(depth, node, "pto.pipeline: depth")
        if not isinstance(depth, Const) or isinstance(depth.value, bool) or int(depth.value) < 1:
            self.error(node, "pto.pipeline(depth=d): d must be a constant integer >= 1")
        state = PipelineState(int(depth.value), getattr(node, "lineno", 0))
        if item.optional_vars is not None:
            if not isinstance(item.optional_vars, ast.Name):
                self.error(node, "write `with pto.pipeline(...) as pl:` with a single name")
            self.scope.names[item.optional_vars.id] = PipelineRef(state)
        self.pipeline_state = state
        try:
            self.block(node.body)
        finally:
            self.pipeline_state = None

    def _stage(self, node, state, call):
        if self.pipeline_state is not state:
            self.error(node, "pl.stage(...) belongs inside its `with pto.pipeline(...)` block")
        if self.stage_tag:
            self.error(node, "stages cannot be nested")
        def value(expr):   # after= may be a tuple of names: read it from the source, not as a value
            return NONE if isinstance(expr, (ast.Tuple, ast.List)) else self.expr(expr)
        values = [value(a) for a in call.args]
        kwargs = {k.arg: value(k.value) for k in call.keywords}
        if set(kwargs) - {"after", "name"} or len(values) > 2:
            self.error(node, "pl.stage(name, after=...) takes a name and an optional after=")
        name = values[0] if values else kwargs.get("name")
        after = values[1] if len(values) > 1 else kwargs.get("after", NONE)
        if not isinstance(name, Text):
            self.error(node, "pl.stage(name): name must be a string literal")
        after_names = self._after_names(call, after, node)
        if name.value not in state.stages:
            if len(state.stages) >= MAX_STAGES:
                self.error(node, f"a pipeline has at most {MAX_STAGES} stages")
            state.stages[name.value] = len(state.stages) + 1
        mask = 0
        for other in after_names:
            if other not in state.stages or other == name.value:
                known = ", ".join(n for n in state.stages if n != name.value) or "none"
                self.error(node, f"stage '{name.value}' comes after '{other}', which is not a stage "
                                 f"before it in this pipeline (earlier stages: {known})",
                           "a stage can only come after stages written above it")
            mask |= 1 << (state.stages[other] - 1)
        self.stage_tag, self.stage_after = state.stages[name.value], mask
        first = len(self.instrs)
        try:
            self.block(node.body)
        finally:
            self.stage_tag, self.stage_after = 0, 0
        self._block_waits_before_lane_reads(first)

    def _block_waits_before_lane_reads(self, first):
        """A wait_all in a stage stops the warp only if lane code after it reads memory."""
        waits = [pc for pc in range(first, len(self.instrs)) if self.instrs[pc].op == "WAIT_ALL"]
        for pc in waits:
            if any(self.instrs[q].op in LANE_MEMORY for q in range(pc + 1, len(self.instrs))):
                ins = self.instrs[pc]
                ins.aux = (1,) + tuple(ins.aux[1:])

    def _after_names(self, call, after, node):
        expr = next((k.value for k in call.keywords if k.arg == "after"), call.args[1] if len(call.args) > 1 else None)
        if after is NONE and not isinstance(expr, (ast.Tuple, ast.List)):
            return []
        if isinstance(after, Text):
            return [after.value]
        if isinstance(expr, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in expr.elts):
            return [e.value for e in expr.elts]
        self.error(node, "after= must be a stage name or a tuple of stage names")

    # ---------------------------------------------------------------- pl.range
    def pipeline_range_hooks(self, state, node):
        """(prefix, step) callbacks that keep iteration % depth for the buffers' copies."""
        if state.in_loop or state.had_loop:
            self.error(node, "a pipeline has one `for ... in pl.range(...)` loop")
        state.in_loop = state.had_loop = True
        if state.depth == 1:
            return None, None
        name = f"pl.iter@{node.lineno}"               # not an identifier: cannot clash
        self.scope.sites[name] = 2
        self.bind(name, Const(0, dtypes.int32, weak=False), node)
        state.iter_name = name

        def prefix():
            it = self.lookup(name, node)
            state.slot = self.alu("MOD", [it, Const(state.depth, dtypes.int32)], node, dtype=dtypes.int32)

        def step():
            self.bind(name, self.alu("ADD", [self.lookup(name, node), Const(1, dtypes.int32)], node,
                                     dtype=dtypes.int32), node)
        return prefix, step

    def pipeline_range_done(self, state):
        state.in_loop = False
        state.slot = None

    def buffer_copies(self, count, node):
        """(copies, element offset of this iteration's copy) for an alloc_local here."""
        state = self.pipeline_state
        if state is None or not state.in_loop or state.depth == 1:
            return 1, Const(0, dtypes.int32)
        offset = self.alu("MUL", [state.slot, Const(count, dtypes.int32)], node, dtype=dtypes.int32)
        return state.depth, offset
