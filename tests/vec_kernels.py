"""Running a few lines of vector-core code on one tile row for the sort tests (test_sort_ops,
test_sort_half): the body goes into AIV0 of one block, X and O are the launch's tensors."""
import numpy as np

import pypto_sim as pto


def run_vec(make_kernels, body, x, out_words, out_dtype=np.float32, x_dtype=np.float32):
    """Run body on AIV0 of one block with tiles loaded from X (x) and return O (out_words)."""
    source = "\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n        if pto.get_subblock_id() == 0:\n" + \
        "\n".join(" " * 12 + line for line in body.strip("\n").split("\n")) + "\n"
    mod = make_kernels(source)
    x = np.asarray(x).astype(x_dtype)
    xt = pto.alloc_tensor(x.nbytes, getattr(pto, np.dtype(x_dtype).name))
    pto.memcpy_h2d(xt, x)
    o = pto.alloc_tensor(out_words * np.dtype(out_dtype).itemsize, getattr(pto, np.dtype(out_dtype).name))
    pto.launch(mod.k, grid=(1,), args=(xt, o), check="all")
    pto.sync()
    got = np.empty(out_words, out_dtype)
    pto.memcpy_d2h(got, o)
    return got
