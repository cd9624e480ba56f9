"""The names bound in one function body while it is being compiled."""
from __future__ import annotations

# where a name bound only conditionally was bound (Scope.conditional), as its error says it
PER_LANE_IF = "under the per-lane condition"
UNIFORM_IF = "under the condition"
LOOP = "in the loop"


class Scope:
    """Names bound in one function body (the kernel or an inlined helper)."""

    def __init__(self, fn_globals, closure, varying, sites, param_names=(), body=()):
        self.names = {}
        self.fn_globals = fn_globals
        self.closure = closure
        self.varying = varying
        self.sites = sites
        self.params = set(param_names)
        self.body = body                 # the function's statements (for look-ahead analyses)
        self.return_home = None
        self.return_frame = False
        self.return_movs = []            # (pc, Const) of `return <literal>` MOVs into return_home
        self.return_line = 0             # line of the return that fixed return_home's dtype
        self.return_flag = None          # per-lane bool: returned from inside a loop of the helper
        self.loops = []                  # the for/while statements being compiled, outermost first
        # name -> (line of its only assignment, its binding, PER_LANE_IF / UNIFORM_IF / LOOP),
        # made under an if whose condition is known only at run time, or in a loop that may run
        # zero times, that has ended: where the branch or body did not run it has no value
        self.conditional = {}
