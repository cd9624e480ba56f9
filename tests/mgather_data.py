"""What pto-isa's two MGATHER st suites' gen_data.py share (tests/npu/a2a3/src/st/testcase/mgather
and mgather_gm2l1 at 3186c381), for their ports (tests/test_ptoisa_npu_mgather.py,
tests/test_ptoisa_npu_mgather_gm2l1.py): the table, the indices (gen_data.py seeds its generator
with hash(name) & 0xFFFFFFFF, which Python salts per process; the ports seed it with
zlib.crc32 of the case name), the golden's index remap and nd_to_nz, which the mgather and
mscatter suites' NZ cases use alike (tests/test_ptoisa_npu_mscatter.py too)."""
import zlib

import numpy as np


def make_table(dtype, count):
    """gen_data.py make_table: (arange(1, count + 1) % mod) + 1, mod 251 or the integer range."""
    mod = min(np.iinfo(dtype).max - np.iinfo(dtype).min + 1, 251) if np.issubdtype(dtype, np.integer) else 251
    return ((np.arange(1, count + 1) % mod) + 1).astype(dtype)


def make_indices(name, shape, size, oob):
    """gen_data.py make_idx_random, or make_idx_with_oob (half, at least one, past the table)
    for the clamp / wrap / zero cases, from default_rng(crc32(name))."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if oob == "undefined":
        return rng.integers(0, size, size=shape, dtype=np.int32)
    n = int(np.prod(shape))
    flat = rng.integers(0, size, size=n, dtype=np.int32)
    count = max(1, n // 2)
    flat[:count] = rng.integers(size, size * 2, size=count, dtype=np.int32)
    rng.shuffle(flat)
    return flat.reshape(shape)


def remap_golden(raw, cap, oob):
    """golden_row / golden_elem's index (None: the zero case's out-of-range, a 0)."""
    if oob == "clamp":
        return min(max(raw, 0), cap - 1)
    if oob == "wrap":
        return raw % cap
    if oob == "zero" and not 0 <= raw < cap:
        return None
    return raw


def nd_to_nz(arr, c0):
    """gen_data.py nd_to_nz (mgather's and mscatter's): the R x C array as its C / c0 column
    blocks of R / 16 fractals of 16 x c0, one after the other ([1, C / c0, R / 16, 16, c0])."""
    r, c = arr.shape
    return arr.reshape(r // 16, 16, c // c0, c0).transpose(2, 0, 1, 3).ravel()
