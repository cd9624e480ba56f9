# The article's third pitfall: pto.barrier() synchronises one warp (32 lanes), not the block.
# Lanes below 128 stage data in a shared L1 buffer; every lane then reads it.
import numpy as np

import pypto_sim as pto


@pto.kernel
def wrong(src, out):
    lid = pto.get_local_id()
    shared = pto.alloc_local(128)
    if lid < 128:
        pto.store(shared + lid, pto.load(src + lid))
    pto.barrier()              # only this warp: lanes 128-255 do not wait for lanes 0-127
    pto.store(out + lid, pto.load(shared + lid % 128))


@pto.kernel
def right(src, out):
    lid = pto.get_local_id()
    shared = pto.alloc_local(128)
    if lid < 128:
        pto.store(shared + lid, pto.load(src + lid))
    pto.barrier_block()        # every warp of the block, and their stores
    pto.store(out + lid, pto.load(shared + lid % 128))


src = np.arange(1, 129, dtype=np.float32)
expected = np.concatenate([src, src])
d_src, d_out = pto.alloc_tensor(src.nbytes), pto.alloc_tensor(expected.nbytes)
pto.memcpy_h2d(d_src, src)

pto.launch(wrong, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_out))
stale = int(np.sum(d_out.numpy() != expected))
print(f"wrong: {stale} of 256 lanes read stale data (lanes 128-255 read before lanes 0-127 stored)")
try:
    pto.launch(wrong, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_out), check="racecheck")
    pto.sync()
except pto.RaceError as err:
    print(f"wrong, with racecheck: {type(err).__name__}: {err}\n")

pto.launch(right, grid=(1, 1, 1), block=(256, 1, 1), args=(d_src, d_out), check="racecheck")
assert np.array_equal(d_out.numpy(), expected)
print("right: barrier_block() -> every lane reads the right value, racecheck is silent")
