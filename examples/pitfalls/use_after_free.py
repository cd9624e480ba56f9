# The article's second pitfall: Python frees a tensor while a kernel that uses it is queued.
# On hardware that is a segmentation fault or silent corruption; here it is an error that
# names the tensor, the kernel and the fix.
import numpy as np

import pypto_sim as pto


@pto.kernel
def scale(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i) * 2.0)


n = 256
a = np.arange(n, dtype=np.float32)
d_o = pto.alloc_tensor(n * 4)

# wrong: del d_a while the kernel is still queued
d_a = pto.alloc_tensor(n * 4)
pto.memcpy_h2d(d_a, a)
pto.launch(scale, grid=(1, 1, 1), block=(256, 1, 1), args=(d_a, d_o, n))
del d_a
try:
    pto.sync()
except pto.UseAfterFreeError as err:
    print(f"wrong: {type(err).__name__}: {err}\n")

# right (1): the Tensor context manager waits for the kernel before freeing
with pto.Tensor(n * 4) as d_a:
    pto.memcpy_h2d(d_a, a)
    pto.launch(scale, grid=(1, 1, 1), block=(256, 1, 1), args=(d_a, d_o, n))
out = d_o.numpy()
assert np.array_equal(out, a * 2)
print("right (with pto.Tensor): o == 2 * a")

# right (2): sync before del
d_a = pto.alloc_tensor(n * 4)
pto.memcpy_h2d(d_a, a)
pto.launch(scale, grid=(1, 1, 1), block=(256, 1, 1), args=(d_a, d_o, n))
pto.sync()
del d_a
assert np.array_equal(d_o.numpy(), a * 2)
print("right (pto.sync() before del): o == 2 * a")
