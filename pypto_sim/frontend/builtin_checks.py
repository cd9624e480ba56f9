"""The checks of the builtin registry (registry.py): where a builtin may be called, run before
its lowering. Each is ``check(comp, node, name)`` for the compiler ``comp`` and the call
``node`` of ``pto.<name>``, and raises a CompileError or returns."""
from __future__ import annotations

from contextlib import contextmanager

from ..errors import CompileError
from .aicore_scalar import SIMT_IDS


@contextmanager
def refusals_told_as(comp, node, prefix: str):
    """A composite builtin (a [[composite]] record: TPUSH, TPUT, ...) lowers to records whose own
    lowerings may refuse an operand; the kernel wrote no such call, so re-raise the refusal at the
    builtin's call, ``prefix`` before the refusal's text (without its location)."""
    try:
        yield
    except CompileError as exc:
        text = str(exc).split("\n")[0]
        where = f"kernel '{exc.kernel}', {exc.file}:{exc.line}: "
        comp.error(node, prefix + (text[len(where):] if text.startswith(where) else text))


def aicore_only(comp, node, name):
    """The builtin works on typed tiles of pto.alloc_tile: AI-core kernels only."""
    comp._require_aicore(node, name)


def article_only(instead: str):
    """The check of one of the article's tile builtins (untyped L1 tiles of lane kernels),
    refused in an AI-core kernel with ``instead`` as what to use there."""
    def check(comp, node, name):
        if comp.is_aicore:
            comp.error(node, f"pto.{name} is the article's tile API; in an AI-core kernel use {instead}")
    check.__doc__ = f"The article's tile API, not for AI-core kernels (which use {instead})."
    return check


def lane_tiles_only(comp, node, name):
    """pto.alloc_local: the article's untyped L1 tiles, not for AI-core kernels."""
    if comp.is_aicore:
        comp.error(node, "an AI-core kernel (one with pto.alloc_tile or sections) allocates "
                         "typed tiles: pto.alloc_tile(rows, cols, dtype, loc=...)",
                   "the article's alloc_local tiles live in the untyped L1 of lane kernels")


def no_simt_id_on_aicore(comp, node, name):
    """A lane or warp id (or the block's lane count) has no meaning on an AI core's units."""
    if name in SIMT_IDS and comp.is_aicore:
        comp.refuse_simt_id(name, node)
