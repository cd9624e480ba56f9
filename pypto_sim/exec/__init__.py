"""Executors: the numba lane executor (fast) and the numpy reference executor (the spec)."""
