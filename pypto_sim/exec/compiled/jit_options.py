"""numba options the compiled modules share.

NO_REFCOUNT compiles a hot function without reference counting (numba's private ``_nrt=False``
option, docs/design.md); a numba that refuses the option gets the same functions with reference
counting (slower), nothing else changed.
"""
try:
    from numba.core.cpu import CPUTargetOptions
except ImportError:         # a numba without the table of options
    CPUTargetOptions = None

NO_REFCOUNT = {"_nrt": False} if CPUTargetOptions is not None and hasattr(CPUTargetOptions, "_nrt") else {}
