"""The replay's dispatch to the tile families' kernels, generated from their descriptors
(exec/family_source.py) and loaded from the cache directory under its hash. GENERATED_FILE
tells exec/jit_cache.py which file the modules importing it depend on."""
from ..family_source import generate_family_source
from ..jit_cache import load_generated

_GENERATED = load_generated("families", generate_family_source())
GENERATED_FILE = _GENERATED.__file__

family_kernel = _GENERATED.family_kernel
