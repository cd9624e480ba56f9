"""``pto.parallel_group(tensors, root)``: pto-isa's ``comm::ParallelGroup`` (include/pto/comm/
comm_types.hpp at 3186c381), the ranks a collective (TBROADCAST, TGATHER, TSCATTER, TREDUCE;
frontend/comm_collectives.py) reads or writes, as kernel code writes it:

    group = pto.parallel_group((win + 0 * W, win + 1 * W, win + 2 * W), rank)
    group = pto.parallel_group([win + r * W for r in range(4)], root=rank)

``tensors`` is one GM pointer per rank, in rank order (``ParallelGroup::tensors[k]``, rank k's
buffer as the caller addresses it: an HCCL window on the board, any device tensor here, each at
an address of its own), written in the call as a tuple or list of pointers or as a comprehension
over ``range`` of constants; all of one dtype (``ParallelGroup<GlobalData>`` holds one
GlobalTensor type). ``root`` is the calling rank's index (``rootIdx``: on A2/A3 the rank that
calls a collective is its root), a constant or a value the kernel computes (``pto.get_block_id()``
when ranks are blocks of one launch). The group is a compile-time object, as pto-isa's is a
view on the stack: it has no record of its own, and a collective checks its root as the header
does (``PTO_ASSERT(rootIdx >= 0 && rootIdx < nranks, ...)``: a compile error for a constant, a
CHECK for a run-time one).

A rank a collective picks by the run-time root (TREDUCE's root and remote ranks) is a select
among the group's pointers' offsets, so the group's tensors must then be views of one tensor;
with a constant root, or a rank picked by its place in the group, any tensors do.
"""
from __future__ import annotations

import ast
import dataclasses

from .. import dtypes
from ..isa.run_time_checks import ROOT_INDEX
from ..ir import Reg
from ..ir.program import int_sem_of
from .values import Const, Ptr, Val

I32 = dtypes.int32
USAGE = "g = pto.parallel_group((t0, t1, ...), root)"
MISSING = object()


@dataclasses.dataclass(frozen=True)
class ParallelGroup:
    """A pto.parallel_group: the ranks' GM pointers (rank order) and the root (Const or a uniform
    int32 Val)."""
    tensors: tuple
    root: object

    @property
    def size(self) -> int:
        """nranks (ParallelGroup::GetSize)."""
        return len(self.tensors)

    @property
    def dtype(self):
        return self.tensors[0].dtype


def make_parallel_group(comp, node):
    """Lower ``pto.parallel_group(tensors, root)``: evaluate the pointers and the root."""
    names = ("tensors", "root")
    given = dict(zip(names, node.args))
    if len(node.args) > 2:
        comp.error(node, f"pto.parallel_group takes the tensors and the root, {len(node.args)} arguments given",
                   USAGE)
    for kw in node.keywords:
        if kw.arg not in names or kw.arg in given:
            comp.error(node, f"pto.parallel_group: unexpected argument {kw.arg!r}", USAGE)
        given[kw.arg] = kw.value
    if set(given) != set(names):
        comp.error(node, f"pto.parallel_group needs {' and '.join(n for n in names if n not in given)}", USAGE)
    tensors = [_rank_pointer(comp, node, v, k) for k, v in enumerate(_pointer_exprs(comp, node, given["tensors"]))]
    if not tensors:
        comp.error(node, "pto.parallel_group: the group has no rank (the collectives' PTO_ASSERT: \"ParallelGroup "
                         "size must be greater than 0!\")", "give one pointer per rank")
    dts = {p.dtype for p in tensors}
    if len(dts) > 1:
        comp.error(node, f"pto.parallel_group: the ranks' tensors hold {', '.join(sorted(str(d) for d in dts))}; a "
                         "ParallelGroup<GlobalData> holds one GlobalTensor type, so one dtype",
                   "point every rank's entry at a tensor of the collective's dtype")
    root = comp.vexpr(given["root"])
    comp.require_value(root, node)
    if root.dtype.is_float or root.dtype == dtypes.bool_:
        comp.error(node, f"pto.parallel_group: root must be an integer (the calling rank's index), got {root.dtype}")
    if isinstance(root, Const):
        root = Const(int(root.value), I32, weak=False)
    else:
        if not root.uniform:
            comp.error(node, "pto.parallel_group: root must be the same in every lane (a uniform value)",
                       "compute it from block ids or arguments")
        root = comp.snapshot(comp.cast(root, I32, node), node)
    return ParallelGroup(tuple(comp.snapshot(p, node) for p in tensors), root)


def _pointer_exprs(comp, node, tensors):
    """The tensors argument's pointers: a tuple or list literal, or a comprehension
    `[expr for name in range(...)]` over constant bounds, evaluated for each name."""
    if isinstance(tensors, (ast.Tuple, ast.List)):
        return [comp.expr(e) for e in tensors.elts]
    if isinstance(tensors, (ast.ListComp, ast.GeneratorExp)):
        gens = tensors.generators
        g = gens[0] if len(gens) == 1 else None
        it = g.iter if g is not None else None
        if (g is None or g.ifs or g.is_async or not isinstance(g.target, ast.Name) or not isinstance(it, ast.Call)
                or not isinstance(it.func, ast.Name) or it.func.id != "range" or it.keywords
                or not 1 <= len(it.args) <= 3):
            comp.error(node, "pto.parallel_group: a comprehension of the tensors is one `for name in range(...)` "
                             "without a condition", USAGE)
        bounds = []
        for a in it.args:
            n = comp.int_constant(comp.vexpr(a), a, "pto.parallel_group: range()")
            if n is None:
                comp.error(node, "pto.parallel_group: the ranks are laid out when the kernel compiles, so the "
                                 "comprehension's range() takes constants", "use literals or module constants")
            bounds.append(n)
        name, out = g.target.id, []
        saved = comp.scope.names.get(name, MISSING)
        try:
            for k in range(*bounds):
                comp.scope.names[name] = Const(k, I32)
                out.append(comp.expr(tensors.elt))
        finally:
            if saved is MISSING:
                comp.scope.names.pop(name, None)
            else:
                comp.scope.names[name] = saved
        return out
    comp.error(node, f"pto.parallel_group: the tensors are written in the call, one pointer per rank, not "
                     f"'{ast.unparse(tensors)}'", USAGE + ", or [t + r * W for r in range(n)]")


def _rank_pointer(comp, node, p, k):
    if not isinstance(p, Ptr) or p.space != "hbm" or p.tile is not None:
        comp.error(node, f"pto.parallel_group: rank {k}'s entry must point into a device tensor (GM), got "
                         f"{comp.value_kind(p)}", "pass a tensor argument plus the rank's offset")
    return dataclasses.replace(p, indexed=False)      # `win[k]` names the address here, as `win + k`


def check_root(comp, node, call, group):
    """The header's PTO_ASSERT(rootIdx >= 0 && rootIdx < nranks, "rootIdx must be in range
    [0, nranks)!"): a compile error for a constant root, a CHECK for a run-time one."""
    n, root = group.size, group.root
    if isinstance(root, Const):
        if not 0 <= int(root.value) < n:
            comp.error(node, f"{call}: the group's root is {int(root.value)} but it has {n} rank"
                             f"{'s' if n > 1 else ''} (the header's PTO_ASSERT: \"rootIdx must be in range "
                             "[0, nranks)!\")", f"give pto.parallel_group a root in 0 .. {n - 1}")
        return
    comp.run_time_check(node, root, Const(0, I32), Const(n - 1, I32), ROOT_INDEX,
                        f"{call}: 0 <= the group's root <= {n - 1}")


def rank_at(comp, node, call, group, rank):
    """The group's pointer of rank `rank`: an int, or a uniform int32 value known at run time
    (then a select among the offsets, the group's tensors views of one tensor)."""
    if isinstance(rank, Const):
        rank = int(rank.value)
    if isinstance(rank, int):
        return group.tensors[rank]
    return _select(comp, node, call, group, rank, range(group.size))


def root_ptr(comp, node, call, group):
    """parallelGroup[rootIdx]."""
    return rank_at(comp, node, call, group, group.root)


def remote_ptr(comp, node, call, group, i):
    """parallelGroup[detail::GetRemoteRank(rootIdx, i)]: the i-th rank that is not the root,
    i if i < rootIdx else i + 1 (TReduce.hpp)."""
    root = group.root
    if isinstance(root, Const):
        r = int(root.value)
        return group.tensors[i if i < r else i + 1]
    return _select(comp, node, call, group, comp.alu("LT", [Const(i, I32), root], node), (i, i + 1), pick=True)


def _select(comp, node, call, group, key, ranks, pick=False):
    """The pointer of rank key among ranks (pick: key is the condition choosing ranks[0] over
    ranks[1]), by SELECTs of the offsets; every rank in one tensor."""
    ptrs = [group.tensors[r] for r in ranks]
    if len({(p.space, p.slot) for p in group.tensors}) > 1:
        names = ", ".join(sorted({p.name for p in group.tensors}))
        comp.error(node, f"{call}: the group's root is a value computed while the kernel runs, so the rank it "
                         f"picks is a select among the group's pointers, which must then point into one tensor; "
                         f"they point into {names}",
                   "make the root a constant (e.g. inside `if rank == 0:` write root=0), or lay the ranks' "
                   "buffers out in one tensor")
    if pick:
        offset = _pick(comp, node, key, ptrs[0].offset, ptrs[1].offset)
    else:
        offset = ptrs[-1].offset
        for j in range(len(ptrs) - 2, -1, -1):
            offset = _pick(comp, node, comp.alu("EQ", [key, Const(ranks[j], I32)], node), ptrs[j].offset, offset)
    return dataclasses.replace(ptrs[0], offset=offset)


def _pick(comp, node, cond, a, b):
    """SELECT(cond, a, b) of two int32 offsets (cond a bool value), as pto.select lowers it."""
    if isinstance(cond, Const):
        return a if cond.value else b
    ops = (comp.operand(cond, dtypes.bool_, node), comp.operand(a, I32, node), comp.operand(b, I32, node))
    dst = comp.new_reg(I32, all(o.uniform for o in ops if isinstance(o, Reg)))
    comp.emit("SELECT", dst, ops, I32, node, aux=(int_sem_of(I32),))
    return Val(dst)
