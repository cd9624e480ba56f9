# The AI core's scalar unit reads and writes GM through its own DataCache (Ascend C, "Scalar读写
# 数据"): a scalar store changes only the unit's cached 64-byte line, and a scalar read of a line
# it cached earlier returns that copy, whatever the DMA or other cores wrote since. On hardware a
# missing DataCacheCleanAndInvalid is a wrong value now and then; here check="race" names the
# read, the store it misses and the fix, pto.dcci.
#
# The kernel: AIV1 publishes a count with a scalar store, AIV0 reads it (having peeked at the
# same line before), ordered by pto.syncall('aiv') - the barrier orders the two units, but not the
# caches.
import numpy as np

import pypto_sim as pto


def kernel(flush):
    @pto.kernel(sync="manual")
    def publish(box, out):
        with pto.vector():
            sub = pto.get_subblock_id()
            before = box[1] if sub == 0 else 0       # AIV0 caches box[0..15]'s line here
            if sub == 1:
                box[0] = 42                          # only AIV1's cached line holds it ...
                if flush:
                    pto.dcci(box)                    # ... until it is written back
            pto.syncall("aiv")
            if sub == 0:
                if flush:
                    pto.dcci(box)                    # drop AIV0's old copy of the line
                out[0] = box[0] + before
    return publish


def run(flush, check=()):
    box = pto.to_device(np.zeros(16, np.int32))
    out = pto.to_device(np.zeros(16, np.int32))
    pto.profile(kernel(flush), grid=(1,), args=(box, out), check=check)
    got = np.empty(16, np.int32)
    pto.memcpy_d2h(got, out)
    return int(got[0])


print(f"wrong: without dcci AIV0 reads {run(False)} (its stale copy), not 42")
try:
    run(False, check=("race",))
except pto.RaceError as err:
    print(f"wrong: {type(err).__name__}: {err}\n")

assert run(True, check=("race",)) == 42
print("right: pto.dcci after the store and before the read: AIV0 reads 42, racecheck is silent")
