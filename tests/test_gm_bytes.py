"""Simulated HBM holds each element in its own dtype's bytes (exec/gm.py, runtime/memory.py).

The numba executor's gm_load / gm_store and the numpy twins gm.load / gm.store must agree on
every dtype, bit for bit, and agree with numpy's own bytes of the values; a tensor of n
elements costs n * itemsize bytes of HBM storage (plus alignment) and an eighth of that for
initcheck's bitmap."""
import math

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim import dtypes
from pypto_sim.exec import gm
from pypto_sim.exec.lane import executor
from pypto_sim.runtime.device import current_device
from pypto_sim.runtime.memory import ALIGN_BYTES

F_SPECIAL = [0.0, -0.0, 1.0, -1.5, math.nan, -math.nan, math.inf, -math.inf, 65504.0, -65504.0,
             2.0**-24, -(2.0**-24), 2.0**-14, 6.0e-8, 1.401298464324817e-45, 1.1754942106924411e-38,
             3.4028234663852886e38, -3.3895313892515355e38, 9.183549615799121e-41, 0.1, 1e300,
             5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]


# what kernels read and write in GM: every tensor dtype but the minifloats, which no A2/A3 unit
# loads (tests/test_minifloats.py holds their bytes and host round trip)
GM_DTYPES = tuple(d for d in dtypes.TENSOR_DTYPES if d not in dtypes.MINIFLOATS)


def dtype_values(d):
    """Values of dtype d (as numpy gives them) covering its specials and extremes."""
    if d.is_float:
        with np.errstate(over="ignore"):
            if d == dtypes.bfloat16:
                return gm.decode(gm.encode(np.array(F_SPECIAL), d), d).astype(np.float64)
            return np.array(F_SPECIAL).astype(d.numpy).astype(np.float64)
    if d == dtypes.bool_:
        return np.array([False, True, True, False], np.bool_)
    info = np.iinfo(d.numpy)
    ints = [info.min, info.max, info.min + 1, info.max - 1, 0, 1, -1 if info.min else 2, 7]
    return np.array(ints, d.numpy)


@pytest.mark.parametrize("d", GM_DTYPES, ids=str)
def test_numba_and_numpy_codecs_write_numpys_bytes(d):
    """gm_store (numba) and gm.store (numpy) write the little-endian bytes numpy holds for
    each value (NaN as numpy's astype gives it: quiet, the sign kept), at an odd byte address;
    gm_load and gm.load read back the same register word, -0.0 and the NaNs included (an
    int64's word is its bits, dtypes.word_of: every int64 round-trips)."""
    ex = executor()
    values = dtype_values(d)
    words = (np.asarray(values, np.int64).view(np.float64) if d == dtypes.int64
             else values.astype(np.float64))
    want = gm.encode(values, d)                     # numpy's astype, then its bytes
    if d in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int16,
             dtypes.int8, dtypes.uint8, dtypes.int64, dtypes.bool_):
        assert want.tobytes() == np.asarray(values).astype(d.numpy).tobytes()
    item = d.itemsize
    for impl in ("numba", "numpy"):
        data = np.full(3 + len(values) * item, 0xA5, np.uint8)
        addrs = 3 + np.arange(len(values)) * item
        if impl == "numba":
            for a, v in zip(addrs, words):
                ex.gm_store(data, a, d.code, v)
            back = np.array([ex.gm_load(data, a, d.code) for a in addrs])
        else:
            gm.store(data, addrs, d, words)
            back = gm.load(data, addrs, d)
        assert data[:3].tolist() == [0xA5] * 3, f"{impl}: wrote before the first element"
        assert data[3:].tobytes() == want.tobytes(), f"{impl}: bytes of {d}"
        if d == dtypes.int64:
            assert back.tobytes() == words.tobytes(), impl
            continue
        same = (back == words) | (np.isnan(back) & np.isnan(words))
        assert same.all() and (np.signbit(back) == np.signbit(words)).all(), impl


@pytest.mark.parametrize("d", GM_DTYPES, ids=str)
def test_an_allocation_grows_hbm_by_its_bytes(d):
    """n elements of dtype d take n * itemsize bytes rounded up to ALIGN_BYTES (512): the next
    allocation starts there. 1000 int8 elements take 1024 bytes (2 blocks), 1000 float64 ones
    8192 (16 blocks)."""
    n = 1000
    first = pto.alloc_tensor(n * d.itemsize, d)
    second = pto.alloc_tensor(4)
    span = -(-n * d.itemsize // ALIGN_BYTES) * ALIGN_BYTES
    assert second.alloc.byte_addr - first.alloc.byte_addr == span
    assert first.alloc.byte_addr % ALIGN_BYTES == 0


def test_hbm_storage_is_the_tensors_bytes():
    """A 64 MiB int8 tensor grows the byte array to at most 1.25 x what is allocated (the
    headroom of a growth), and initcheck's bitmap is an eighth of the byte array; with float64
    words per element it was 8 + 1 bytes per element, 9 x the int8 tensor's size."""
    hbm = current_device().hbm
    t = pto.alloc_tensor(64 << 20, pto.int8)
    end = t.alloc.byte_addr + t.nbytes
    assert end <= len(hbm.data) <= 1.25 * end + (1 << 19)
    assert len(hbm.init) == -(-len(hbm.data) // 8)


@pytest.mark.parametrize("d", GM_DTYPES, ids=str)
def test_host_device_host_round_trips_bit_for_bit(d):
    """Every dtype's extremes and specials come back with their bits: int64 beyond 2**53,
    float64 NaN payloads and -0.0 (bfloat16 holds its values as float32 on the host)."""
    values = dtype_values(d)
    host = values.astype(d.numpy)
    if d == dtypes.float64:
        host = np.concatenate([host, np.array([0x7FF0000000000BAD, 0xFFF80000DEAD0000],
                                              np.uint64).view(np.float64)])
    t = pto.alloc_tensor(host.size * d.itemsize, d)
    pto.memcpy_h2d(t, host)
    assert t.numpy().tobytes() == host.tobytes()
    assert current_device().hbm.view(t.alloc).tobytes() == gm.encode(host, d).tobytes()


@pto.kernel
def widen(a, o, n):
    i = pto.get_global_id()
    if i < n:
        o[i] = a[i] * 3 - 1


@pytest.mark.parametrize("d", [dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.bfloat16,
                               dtypes.float16], ids=str)
@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_lane_kernels_load_and_store_memory_dtypes_as_numpy_does(d, mode):
    """o[i] = a[i] * 3 - 1 on a tensor of d read and written in d's bytes: what numpy computes
    in d's lane dtype (int32 for the ints, wrapped back on the store; float32 for bfloat16,
    rounded back; float16 in float16)."""
    n = 100
    if d.is_float:
        host = np.linspace(-300, 300, n).astype(np.float32)
        host = gm.decode(gm.encode(host, d), d)
    else:
        info = np.iinfo(d.numpy)
        host = np.linspace(info.min, info.max, n).astype(d.numpy)
    a, o = (pto.alloc_tensor(n * d.itemsize, d) for _ in range(2))
    pto.memcpy_h2d(a, host)
    pto.launch(widen, grid=(1, 1, 1), block=(128, 1, 1), args=(a, o, n), mode=mode)
    lane = np.dtype(d.compute_dtype.numpy)
    want = gm.decode(gm.encode(host.astype(lane) * lane.type(3) - lane.type(1), d), d)
    assert o.numpy().tobytes() == want.tobytes()


def test_initcheck_bitmap_ranges_and_elements():
    """init_mark_range sets exactly bytes [lo, hi) (partial first and last bitmap bytes),
    init_mark one element's first byte; init_test reads them; the numba twins agree."""
    ex = executor()
    init = gm.init_new(64 * 8)
    gm.init_mark_range(init, 5, 27)
    gm.init_mark(init, [100, 300])
    written = gm.init_test(init, np.arange(64 * 8))
    want = np.zeros(64 * 8, bool)
    want[5:27] = want[100] = want[300] = True
    assert (written == want).all()
    assert [ex.init_get(init, b) for b in (4, 5, 26, 27, 100, 101)] == [0, 1, 1, 0, 1, 0]
    ex.init_set(init, 101)
    assert gm.init_test(init, [101])[0]
    gm.init_mark_window(init, 400, 3, 6, 16)       # 3 rows of 6 bytes, 16 apart
    assert gm.init_test(init, np.arange(400, 440)).nonzero()[0].tolist() == \
        [0, 1, 2, 3, 4, 5, 16, 17, 18, 19, 20, 21, 32, 33, 34, 35, 36, 37]


@pytest.mark.parametrize("d", GM_DTYPES, ids=str)
def test_tload_and_tstore_windows_agree_with_the_reference(d):
    """gm_gather (TLOAD's GM read) and gm_scatter (TSTORE's write) of a 5 x 7 window, rows 9
    elements apart, from element 3 of a tensor at byte 512: the numba kernels (typed views for
    float32, the integers of 1, 2 and 4 bytes and the 2-byte floats, gm_load / gm_store
    otherwise) and the reference's read
    and write the same values and bytes, specials included; bytes outside the window keep
    their values."""
    from pypto_sim.exec import reference
    ex = executor()
    values = np.resize(dtype_values(d), 60).astype(np.float64)
    image = np.full(512 + 60 * d.itemsize + 64, 0xA5, np.uint8)
    if d == dtypes.int64:                   # an int64's register word is its bits (word_of)
        ints = np.resize(dtype_values(d), 60)
        image[512:512 + 60 * d.itemsize] = gm.encode(ints, d)
        values = ints.view(np.float64)
    else:
        image[512:512 + 60 * d.itemsize] = gm.encode(values.astype(d.numpy) if not d.is_float or
                                                     d == dtypes.bfloat16 else values, d)
    src = 512 + 3 * d.itemsize
    outs = []
    for impl in (ex, reference):
        out = np.full(35, -1.0)
        impl.gm_gather(out, image, src, 9, 5, 7, d.code)
        outs.append(out)
    want = np.array([values[3 + r * 9 + c] for r in range(5) for c in range(7)])
    for out in outs:
        if d == dtypes.int64:
            assert out.tobytes() == want.tobytes()
            continue
        assert ((out == want) | (np.isnan(out) & np.isnan(want))).all()
        assert (np.signbit(out) == np.signbit(want)).all()
    images = []
    for impl in (ex, reference):
        img = image.copy()
        impl.gm_scatter(img, src, 9, want[::-1].copy(), 5, 7, d.code)
        images.append(img)
    assert images[0].tobytes() == images[1].tobytes()
    touched = np.zeros(len(image), bool)
    for r in range(5):
        touched[src + r * 9 * d.itemsize:src + (r * 9 + 7) * d.itemsize] = True
    assert (images[0][~touched] == image[~touched]).all()


@pto.kernel
def own_element(o, wrap):
    i = pto.get_global_id()
    o[i % wrap] = 1


@pytest.mark.parametrize("d", [dtypes.int8, dtypes.int16, dtypes.float32], ids=str)
def test_racecheck_tells_neighbouring_elements_apart(d):
    """Two warps of 32 lanes: lane i writes o[i] (64 distinct elements, adjacent bytes for
    int8: no race), or o[i % 32] (lanes 0 and 32 of different warps write o[0]: a race on
    o[0]). HBM's shadow has a row per d.itemsize bytes (the launch's smallest element) up to
    the tensor's end: 64 elements at byte 0 -> 64 rows and one more."""
    from pypto_sim.runtime.launch import simulation_for
    o = pto.alloc_tensor(64 * d.itemsize, d)
    pto.launch(own_element, grid=(1, 1, 1), block=(64, 1, 1), args=(o, 64), check="racecheck")
    pto.sync()
    with pytest.raises(pto.RaceError, match=r"race on o\[0\]"):
        pto.launch(own_element, grid=(1, 1, 1), block=(64, 1, 1), args=(o, 32), check="racecheck")
        pto.sync()
    dev = current_device()
    dev.launch(own_element, (1, 1, 1), (64, 1, 1), (o, 64), check="racecheck")
    sim = simulation_for(dev.queue.pop(), dev.hbm.data.copy(), dev.hbm.init.copy())
    assert sim.checks.hbm_shadow.shape[0] == ((o.alloc.byte_addr + o.nbytes) >> (d.itemsize.bit_length() - 1)) + 1


def test_initcheck_marks_a_window_of_whole_bitmap_bytes():
    """A tile store's window whose rows are whole bitmap bytes (byte 64, 3 rows of 16 bytes,
    40 apart: 4 float32 elements per row) marks exactly bytes 64-79, 104-119 and 144-159."""
    init = gm.init_new(256)
    gm.init_mark_window(init, 64, 3, 16, 40)
    assert gm.init_test(init, np.arange(256)).nonzero()[0].tolist() == \
        list(range(64, 80)) + list(range(104, 120)) + list(range(144, 160))
