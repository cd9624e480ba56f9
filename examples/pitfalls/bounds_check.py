# The bounds check that `if i < n` provides: without it, the lanes past n read and write
# outside the tensors. pypto_sim checks every lane access (always on) and names the lane.
import numpy as np

import pypto_sim as pto


@pto.kernel
def wrong(a, o, n):
    i = pto.get_global_id()
    pto.store(o + i, pto.load(a + i) + 1.0)        # lanes with i >= n run off the end


@pto.kernel
def right(a, o, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(o + i, pto.load(a + i) + 1.0)


n = 1000                                            # not a multiple of the 256-lane block
a = np.arange(n, dtype=np.float32)
host = np.zeros(n, np.float32)
d_a, d_o = pto.alloc_tensor(n * 4), pto.alloc_tensor(n * 4)
pto.memcpy_h2d(d_a, a)
try:
    pto.launch(wrong, grid=(4, 1, 1), block=(256, 1, 1), args=(d_a, d_o, n))
    pto.memcpy_d2h(host, d_o)
except pto.OutOfBoundsError as err:
    print(f"wrong: {type(err).__name__}: {err}")
    print(f"       the host array was not touched: {np.all(host == 0)}\n")

pto.launch(right, grid=(4, 1, 1), block=(256, 1, 1), args=(d_a, d_o, n))
pto.memcpy_d2h(host, d_o)
assert np.array_equal(host, a + 1)
print("right: `if i < n` masks the tail lanes; o == a + 1")
