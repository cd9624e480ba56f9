# pypto/examples/vector_add.py -- the article's first program; only the import line changed
# (and fma's arguments: o[i] = a_val * 1.0 + b_val, see API.md).
import pypto_sim as pto
import numpy as np


# define the kernel with PTO instructions: the Python function is the PTO kernel
@pto.kernel
def vector_add(a, b, o, n):
    # PTO's parallel model: 256 lanes run at once; get_global_id() is this lane's global index
    i = pto.get_global_id()
    # bounds check, like CUDA's if (i < n)
    if i < n:
        # PTO's LOAD instruction: HBM -> L1
        a_val = pto.load(a + i)
        b_val = pto.load(b + i)
        # PTO's FMA instruction (fused multiply-add): one instruction computes and stores o[i]
        pto.fma(o + i, a_val, 1.0, b_val)


# prepare data
n = 1024
a = np.random.rand(n).astype(np.float32)
b = np.random.rand(n).astype(np.float32)
o = np.zeros(n, dtype=np.float32)

# allocate NPU memory
d_a = pto.alloc_tensor(n * 4)
d_b = pto.alloc_tensor(n * 4)
d_o = pto.alloc_tensor(n * 4)
pto.memcpy_h2d(d_a, a)
pto.memcpy_h2d(d_b, b)

# launch the kernel, like CUDA's grid and block: 256 lanes per block, 1024 elements need 4 blocks
pto.launch(vector_add, grid=(4, 1, 1), block=(256, 1, 1), args=(d_a, d_b, d_o, n))
pto.memcpy_d2h(o, d_o)

# check
assert np.allclose(o, a + b)
print(f"pypto: vector_add {n} elements passed (max |o - (a + b)| = {np.max(np.abs(o - (a + b))):.3g})")

# the cycle report: the same launch, profiled on the simulated NPU
prof = pto.profile(vector_add, grid=(4, 1, 1), block=(256, 1, 1), args=(d_a, d_b, d_o, n))
print(prof.report())
