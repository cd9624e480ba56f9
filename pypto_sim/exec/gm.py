"""GM (simulated HBM) bytes in numpy: element values in and out of their dtype's bytes, and
initcheck's bitmap. The numba executor's twins are ``gm_load`` / ``gm_store`` and
``init_set`` / ``init_get`` (exec/compiled/lane.py); tests/test_gm_bytes.py holds the two to
each other on every dtype and its special values.

Addresses. GM is addressed by byte everywhere: a tensor's element i lies at byte
``byte_addr + i * itemsize`` of the HBM byte array, in its dtype's little-endian encoding
(dtypes.DType.encoding). The executors' tensor bases (``tbase``), the indices a lane access
gathers (``pend_idx``: the first byte of each element), racecheck's shadow rows and
initcheck's bits all use these byte addresses. L1, UB and the L0 buffers stay float64 words
indexed by word.

initcheck's map is one bit per HBM byte (bit ``b & 7`` of byte ``b >> 3``). A write sets the
bits of the element's first byte at least (a memcpy or a tile store sets all its bytes'); a
read tests its first byte's. Elements of one tensor never share a byte and every access to a
tensor uses the tensor's dtype, so the first byte stands for the element.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes, minifloats


def _float_storage(dtype):
    """(numpy float dtype, bit shift) that holds dtype's float bits: its own size's numpy
    float when the mantissa widths agree, else float32 with the bits at the top (bfloat16)."""
    mant = int(dtype.encoding.split(":")[1])
    own = {2: (np.float16, 10), 4: (np.float32, 23), 8: (np.float64, 52)}.get(dtype.itemsize)
    if own is not None and own[1] == mant:
        return np.dtype(own[0]).newbyteorder("<"), 0
    return np.dtype("<f4"), 32 - 8 * dtype.itemsize


def _bits_dtype(itemsize):
    return np.dtype(f"<u{itemsize}")


def element_bytes(byte_idx, itemsize) -> np.ndarray:
    """The byte addresses of the elements starting at byte_idx, shape (n, itemsize)."""
    return np.asarray(byte_idx, np.int64).reshape(-1, 1) + np.arange(itemsize)


def decode(raw: np.ndarray, dtype, host=None) -> np.ndarray:
    """Elements of dtype from their little-endian bytes raw (uint8, n * itemsize), as the
    host's numpy values (bfloat16 and the minifloats as float32, values_per_element of them
    an element; exact for every dtype). A view of raw when the host's dtype has the same bytes
    (no copy: memcpy_d2h of a 1 GiB tensor). host: the host array's numpy dtype; uint8 takes
    a minifloat tensor's bytes as they are, and a bfloat16 host array (ml_dtypes') a bfloat16
    tensor's, NaN payloads included."""
    dtype = dtypes.as_dtype(dtype)
    raw = np.ascontiguousarray(raw, np.uint8)
    kind = dtype.encoding.split(":")[0]
    if kind == "mini":
        if host is not None and np.dtype(host) == np.uint8:
            return raw
        fmt = dtype.minifloat
        codes = minifloats.unpack4(raw) if fmt.bits == 4 else raw
        return fmt.values.astype(np.float32)[codes]      # exact: every code's value is a float32
    if kind == "float":
        store, shift = _float_storage(dtype)
        if not shift:
            return raw.view(store)
        if host is not None and np.dtype(host).name == dtype.name:      # ml_dtypes' bfloat16: the bytes
            return raw.view(np.dtype(host))
        bits = raw.view(_bits_dtype(dtype.itemsize)).astype(np.uint32) << np.uint32(shift)
        return bits.view(store)
    if dtype == dtypes.bool_:
        return raw.astype(np.bool_)
    return raw.view(np.dtype(("<i" if kind == "int" else "<u") + str(dtype.itemsize)))


def encode(values, dtype) -> np.ndarray:
    """The little-endian bytes (uint8, n * itemsize) of values as dtype: numpy's astype for
    every dtype (ints wrap, floats round to nearest even), bfloat16 rounded to nearest even
    through float32 (dtypes.host_words). No copy when values already are dtype's bytes."""
    dtype = dtypes.as_dtype(dtype)
    kind = dtype.encoding.split(":")[0]
    flat = np.asarray(values).reshape(-1)
    if kind == "mini":
        return _encode_minifloat(flat, dtype)
    if kind == "float":
        store, shift = _float_storage(dtype)
        if shift and flat.dtype.name == dtype.name:     # a host array of the tensor's own format (ml_dtypes'
            return np.ascontiguousarray(flat).view(np.uint8)    # bfloat16): its bytes, as a memcpy copies them
        if shift:
            rounded = dtypes.host_words(flat, dtype).astype(np.float32)
            return (rounded.view(np.uint32) >> np.uint32(shift)).astype(
                _bits_dtype(dtype.itemsize)).view(np.uint8)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.ascontiguousarray(flat, store).view(np.uint8)
    code = ("<i" if kind == "int" else "<u") + str(dtype.itemsize)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.ascontiguousarray(flat.astype(np.dtype(code), copy=False)).view(np.uint8)


_CHUNK = 1 << 20


def _encode_minifloat(flat, dtype) -> np.ndarray:
    """The bytes of a minifloat tensor from a host array: uint8 as its bytes, anything else as
    values rounded to the format by minifloats.encode (without saturation: the format's own
    overflow, as ml_dtypes' astype), two 4-bit codes a byte for the fp4 pairs."""
    if flat.dtype == np.uint8:
        return np.ascontiguousarray(flat)
    fmt = dtype.minifloat
    codes = np.empty(flat.size, np.uint8)
    for lo in range(0, flat.size, _CHUNK):             # encode's float64 temporaries, chunked
        codes[lo:lo + _CHUNK] = minifloats.encode(flat[lo:lo + _CHUNK].astype(np.float64), fmt)
    return minifloats.pack4(codes) if fmt.bits == 4 else codes


def load(data: np.ndarray, byte_idx, dtype) -> np.ndarray:
    """The register words (dtypes.word_of: float64 values; an int64's own bits) of the dtype
    elements at byte addresses byte_idx (the reference executor's twin of gm_load)."""
    dtype = dtypes.as_dtype(dtype)
    idx = element_bytes(byte_idx, dtype.itemsize)
    values = decode(data[idx].reshape(-1), dtype)
    if dtype in dtypes.WORD_BITS:
        return np.ascontiguousarray(values, np.int64).view(np.float64)
    with np.errstate(invalid="ignore"):         # a signalling NaN comes back quiet, as gm_load's
        return values.astype(np.float64)


def store(data: np.ndarray, byte_idx, dtype, values) -> None:
    """Write values (register words of dtype, as load returns them) to the elements at byte
    addresses byte_idx, in order (a later element at the same address wins; the twin of
    gm_store)."""
    dtype = dtypes.as_dtype(dtype)
    idx = element_bytes(byte_idx, dtype.itemsize)
    words = np.ascontiguousarray(values, np.float64)
    if dtype in dtypes.WORD_BITS:
        words = words.view(np.int64)
    data[idx] = encode(words, dtype).reshape(idx.shape)


def commit(ex, mem, idx, val, dt) -> None:
    """Land a gathered lane store with executor module ex: to HBM bytes (dt, the store's
    dtype code, >= 0) or to L1 words (dt < 0)."""
    if dt >= 0:
        ex.commit_gm(mem, idx, val, len(idx), dt)
    else:
        ex.commit_store(mem, idx, val, len(idx))


def init_new(nbytes: int) -> np.ndarray:
    """initcheck's bitmap for nbytes bytes of HBM, all unwritten."""
    return np.zeros(-(-nbytes // 8), np.uint8)


def init_mark(init: np.ndarray, byte_idx) -> None:
    """Mark the elements starting at byte_idx written (their first bytes' bits)."""
    idx = np.asarray(byte_idx, np.int64).reshape(-1)
    np.bitwise_or.at(init, idx >> 3, (1 << (idx & 7)).astype(np.uint8))


def init_test(init: np.ndarray, byte_idx) -> np.ndarray:
    """Whether each element starting at byte_idx was written (bool array)."""
    idx = np.asarray(byte_idx, np.int64).reshape(-1)
    return ((init[idx >> 3] >> (idx & 7).astype(np.uint8)) & 1).astype(bool)


def init_mark_range(init: np.ndarray, lo: int, hi: int) -> None:
    """Mark bytes [lo, hi) written (a memcpy_h2d, a tile store's row)."""
    if hi <= lo:
        return
    first, last = lo >> 3, (hi - 1) >> 3
    lo_mask = (0xFF << (lo & 7)) & 0xFF
    hi_mask = 0xFF >> (7 - ((hi - 1) & 7))
    if first == last:
        init[first] |= np.uint8(lo_mask & hi_mask)
        return
    init[first] |= np.uint8(lo_mask)
    init[first + 1:last] = 0xFF
    init[last] |= np.uint8(hi_mask)


def window_elements(first, runs, run, pitch) -> np.ndarray:
    """The indices of runs runs of run consecutive elements, pitch elements apart from element
    first, run after run: a tile transfer's GM window (isa/gm_layouts.py)."""
    return (np.arange(runs)[:, None] * pitch + np.arange(run)).ravel() + first


def init_mark_window(init: np.ndarray, byte0: int, rows: int, row_bytes: int, pitch: int) -> None:
    """Mark rows runs of row_bytes bytes, pitch bytes apart from byte0, written (a tile
    store's elements)."""
    if pitch == row_bytes:
        init_mark_range(init, byte0, byte0 + rows * row_bytes)
        return
    if byte0 % 8 == 0 and row_bytes % 8 == 0 and pitch % 8 == 0 and rows > 0:
        # whole bitmap bytes (a float32 tile of even width): one strided view, no row loop
        np.lib.stride_tricks.as_strided(init[byte0 >> 3:], (rows, row_bytes >> 3),
                                        ((pitch >> 3) * init.strides[0], init.strides[0]))[...] = 0xFF
        return
    for r in range(rows):
        init_mark_range(init, byte0 + r * pitch, byte0 + r * pitch + row_bytes)


def init_clear_range(init: np.ndarray, lo: int, hi: int) -> None:
    """Mark bytes [lo, hi) unwritten (a fresh allocation; lo and hi are multiples of 8)."""
    init[lo >> 3:-(-hi // 8)] = 0


def int32_at(hbm: np.ndarray, address: int) -> int:
    """The int32 at byte address of the launch's HBM bytes (a counter or signal word)."""
    return int(hbm[address:address + 4].view(np.int32)[0])


def add_int32(hbm: np.ndarray, address: int, value: int) -> None:
    """An atomic add of value to the int32 at byte address, in GM (st_atomic's ATOMIC_S32 /
    ATOMIC_SUM: two's-complement wrapping)."""
    word = hbm[address:address + 4].view(np.int32)
    word[0] = np.int32((int(word[0]) + value + 2 ** 31) % 2 ** 32 - 2 ** 31)
