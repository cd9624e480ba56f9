"""The names bound in one function body while it is being compiled."""
from __future__ import annotations


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
        # name -> (line of its only assignment, its binding), made under a per-lane if that
        # has ended: lanes that did not take the branch have no value for it
        self.lane_conditional = {}
