"""Kernels the benchmark scripts share (the article's vector_add)."""
import pypto_sim as pto


@pto.kernel
def vector_add(a, b, o, n):
    i = pto.get_global_id()
    if i < n:
        a_val = pto.load(a + i)
        b_val = pto.load(b + i)
        pto.fma(o + i, a_val, 1.0, b_val)
