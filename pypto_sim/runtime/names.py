"""How errors name a kernel's tensor arguments: the way the user knows them where they
launch. A tensor is named from the variable its allocation was assigned to
(``d_a = pto.alloc_tensor(...)``), which is the right name when that assignment is in the
function that launches; a tensor made in a helper (``t = pto.alloc_tensor(n); return t``)
carries the helper's local name, which means nothing at the launch (unless the launching
function uses a variable of that name too), so there the kernel's parameter name comes first
and the allocation's name is added for reference."""
from __future__ import annotations

import inspect
import sys


def user_frame():
    """The innermost frame outside pypto_sim (the user's call), or None. The caller must
    ``del`` it when done (frames hold references)."""
    frame = inspect.currentframe()
    while frame is not None and frame.f_globals.get("__name__", "").startswith("pypto_sim"):
        frame = frame.f_back
    return frame


def scope_of(frame) -> tuple | None:
    """(file, function) of a frame: where a name given in it is known."""
    if frame is None:
        return None
    code = frame.f_code
    return code.co_filename, getattr(code, "co_qualname", code.co_name)


class LaunchSite:
    """Where a launch is made: its (file, function) scope and the variable names that
    function's code uses (a tensor assigned elsewhere under one of them, say by a helper
    whose result the launcher unpacks into the same name, is known by it here too)."""

    def __init__(self, scope, names):
        self.scope = scope
        self.names = names

    def knows(self, name, scope) -> bool:
        return scope is None or scope == self.scope or name in self.names


def launch_scope() -> LaunchSite | None:
    """The launch site calling into pypto_sim now."""
    frame = user_frame()
    try:
        if frame is None:
            return None
        code = frame.f_code
        names = frozenset(code.co_varnames + code.co_names + code.co_cellvars + code.co_freevars)
        return LaunchSite(scope_of(frame), names)
    finally:
        del frame


def tensor_label(param: str, tensor, site) -> str:
    """The name of ``tensor`` passed as kernel parameter ``param`` by a launch from ``site``
    (a LaunchSite; module docstring): its allocation's name when the launching function
    knows it (named there, or a variable of that name is used there), else ``param``
    followed by where the allocation got its name."""
    alloc = getattr(tensor, "alloc", None)
    root = getattr(alloc, "root", alloc)
    named, scope = getattr(root, "name", None), getattr(root, "scope", None)
    if not named:
        return param
    if site is None or site.knows(named, scope) or named == param:
        return tensor.name
    where = scope[1] if scope[1] != "<module>" else "the module"
    return f"{param} (allocated as '{tensor.name}' in {where})"


def launch_labels(kernel, args, site) -> tuple:
    """Per launch argument: its tensor label (tensor_label) or None for a scalar."""
    params = list(getattr(kernel, "params", ()))
    params += [f"argument {i}" for i in range(len(params), len(args))]
    return tuple(tensor_label(p, a, site) if getattr(a, "is_device_tensor", False) else None
                 for p, a in zip(params, args))


def launch_owned(args, held: int = 0) -> tuple:
    """The device tensors of a launch's argument list that nothing but that list references:
    temporaries such as ``pto.launch(k, args=(d_o, pto.to_device(x)))``. The launch keeps them
    alive until it has run, as a CUDA stream keeps the arguments of a queued kernel; a tensor
    the program holds (a variable, a list...) is not kept, so that freeing or ``del``-ing it
    while the launch is pending stays the article's UseAfterFreeError.

    Reference counts are compared with a probe held the same way (by one container, read by
    the same loop), so the count of the interpreter's own references cancels out. A view
    (``d[a:b]``) counts as a temporary only when the tensor it views is one too (held by
    nothing but the views of this list), so ``del d`` after ``args=(d[0:8],)`` is still
    reported. ``held``: references each argument has beyond the list's own (a call through
    ``*args`` keeps its caller's; runtime/launcher.py measures them)."""
    if not isinstance(args, (tuple, list)):
        return ()
    probe = (object(),)
    alone = [sys.getrefcount(v) for v in probe][0]
    counts = [sys.getrefcount(v) for v in args]
    temps = [v for v, n in zip(args, counts)
             if getattr(v, "is_device_tensor", False) and n <= alone + held]
    views_of: dict = {}
    for v in temps:
        base = getattr(v, "base", None)
        if base is not None:
            views_of.setdefault(id(base), []).append(v)
    owned = []
    for v in temps:
        unheld = object()          # a local nothing else references: the count to compare with
        base = getattr(v, "base", None)
        if base is None or sys.getrefcount(base) - len(views_of[id(base)]) <= sys.getrefcount(unheld):
            owned.append(v)
    return tuple(owned)
