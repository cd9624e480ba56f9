"""Simulated HBM: a byte array holding each element in its dtype's bytes, a first-fit
allocator in bytes, and device tensors.

Element i of a tensor lies at byte ``byte_addr + i * itemsize`` in its dtype's little-endian
encoding, so a tensor costs its own size in host RAM (plus an eighth for initcheck's bitmap)
and every value of its dtype is held bit for bit (int64 beyond 2**53, float64 NaN payloads,
-0.0). GM is addressed by byte everywhere (exec/gm.py says how the executors, initcheck and
racecheck use the addresses). Allocations start on 512-byte boundaries: a float32 or int32
tensor is where it was when HBM held a word per element (byte address = 4 x word), and sector
and L2 line counts, which depend on addresses modulo 512 and on each tensor's own first line,
are the same for every dtype.
"""
from __future__ import annotations

import itertools
import weakref

import numpy as np

from .. import dtypes
from ..arguments import whole_number
from ..errors import ArgumentError, LaunchError, UseAfterFreeError
from ..exec import gm

ALIGN_BYTES = 512          # allocations start on 512-byte boundaries
_ids = itertools.count(1)


class Allocation:
    """One HBM allocation: where it lives, its size and dtype, and whether it was freed."""

    def __init__(self, byte_addr: int, count: int, dtype, name: str | None):
        self.id = next(_ids)
        self.byte_addr = byte_addr
        self.count = count
        self.dtype = dtype
        self.name = name
        self.scope = None            # (file, function) where the name was given (runtime/names.py)
        self.freed = False
        self.freed_while_used_by = None

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize


class AllocationView:
    """Elements [offset, offset + count) of an allocation, as a tensor view passes them to a
    kernel: its own count and byte address; freed with (and only with) its root."""

    def __init__(self, root: Allocation, offset: int, count: int):
        self.root, self.offset, self.count = root, offset, count
        self.dtype = root.dtype

    @property
    def id(self):
        return self.root.id

    @property
    def name(self):
        base = self.root.name or f"tensor{self.root.id}"
        return f"{base}[{self.offset}:{self.offset + self.count}]"

    @property
    def byte_addr(self) -> int:
        return self.root.byte_addr + self.offset * self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize

    @property
    def freed(self) -> bool:
        return self.root.freed

    @property
    def freed_while_used_by(self):
        return self.root.freed_while_used_by


def root_of(alloc):
    """The allocation that owns the memory of alloc (itself, or a view's root)."""
    return getattr(alloc, "root", alloc)


class HBM:
    """The device's memory bytes (``data``, uint8), initcheck's bitmap of written bytes
    (``init``, exec/gm.py) and the allocator."""

    def __init__(self, capacity_bytes: int):
        self.capacity_bytes = capacity_bytes
        self.data = np.zeros(1 << 19, np.uint8)
        self.init = gm.init_new(len(self.data))     # a bit per byte: written (memcpy_h2d, stores)
        self.free_ranges = [(0, 1 << 62)]
        self.live: dict = {}

    def allocate(self, count: int, dtype, name=None) -> Allocation:
        size = _span(count, dtype)
        used = sum(a.nbytes for a in self.live.values())
        if used + count * dtype.itemsize > self.capacity_bytes:
            raise LaunchError(f"out of simulated HBM: {count * dtype.itemsize} bytes requested, "
                              f"{self.capacity_bytes - used} free of {self.capacity_bytes}",
                              hint="free tensors you no longer need, or use a machine with more HBM")
        i, start = next((i, st) for i, (st, length) in enumerate(self.free_ranges) if length >= size)
        end = start + size
        if end > len(self.data):
            # grow before anything is committed: a MemoryError here leaves the device as it was
            # (the range stays free), so later, smaller allocations still work. Headroom of a
            # quarter, not a doubling; the old arrays are dropped as soon as they are copied.
            new_len = max(end, len(self.data) + len(self.data) // 4)
            try:
                grown, grown_init = self._new_words(new_len)
            except MemoryError:
                raise MemoryError(
                    f"alloc_tensor: simulating {count * dtype.itemsize:,} more bytes of HBM needs "
                    f"{new_len + -(-new_len // 8):,} bytes of host RAM (each "
                    f"byte plus a bit for initcheck), which this machine could not allocate; the "
                    f"device is unchanged") from None
            grown[:len(self.data)] = self.data
            self.data = grown
            grown_init[:len(self.init)] = self.init
            self.init = grown_init
        start_, length = self.free_ranges[i]
        self.free_ranges[i] = (start_ + size, length - size)
        self.data[start:end] = 0
        gm.init_clear_range(self.init, start, end)
        alloc = Allocation(start, count, dtype, name)
        self.live[alloc.id] = alloc
        return alloc

    @staticmethod
    def _new_words(n):
        """Fresh (data, init) arrays for n bytes of HBM (the host RAM a growth costs)."""
        return np.zeros(n, np.uint8), gm.init_new(n)

    def release(self, alloc: Allocation):
        alloc = root_of(alloc)
        if alloc.freed:
            return
        alloc.freed = True
        self.live.pop(alloc.id, None)
        self.free_ranges.append((alloc.byte_addr, _span(alloc.count, alloc.dtype)))
        self.free_ranges.sort()
        merged = []
        for start, length in self.free_ranges:
            if merged and merged[-1][0] + merged[-1][1] == start:
                merged[-1] = (merged[-1][0], merged[-1][1] + length)
            else:
                merged.append((start, length))
        self.free_ranges = merged

    def view(self, alloc: Allocation) -> np.ndarray:
        """The bytes of an allocation (a uint8 view into HBM)."""
        return self.data[alloc.byte_addr:alloc.byte_addr + alloc.nbytes]


def _span(count, dtype) -> int:
    """Bytes an allocation of count elements occupies: whole 512-byte blocks, at least one."""
    return -(-max(count, 1) * dtype.itemsize // ALIGN_BYTES) * ALIGN_BYTES


class DeviceTensor:
    """A tensor in simulated HBM. Free it with ``free()``, ``del`` or ``with pto.Tensor(...)``.

    ``nbytes``, ``dtype``, ``size`` (elements). ``numpy()`` returns a host copy (after the
    kernels that write it have finished).
    """

    is_device_tensor = True

    def __init__(self, device, nbytes: int, dtype, name=None):
        dtype = dtypes.as_dtype(dtype)
        if dtype not in dtypes.TENSOR_DTYPES:
            names = ", ".join(d.name for d in dtypes.TENSOR_DTYPES)
            raise ArgumentError(f"tensors hold {names}, not {dtype}")
        nbytes = whole_number(nbytes, "alloc_tensor: nbytes", least=1,
                              hint=f"give a positive int number of bytes, a multiple of {dtype}'s "
                                   f"{dtype.itemsize}-byte element (n * {dtype.itemsize})")
        if nbytes % dtype.itemsize:
            raise ArgumentError(f"alloc_tensor(nbytes={nbytes}): not a multiple of {dtype}'s "
                                f"{dtype.itemsize}-byte element size",
                                hint=f"give a multiple of {dtype.itemsize}, for example "
                                     f"{nbytes // dtype.itemsize * dtype.itemsize or dtype.itemsize}")
        self.device = device
        self.dtype = dtype
        self.nbytes = int(nbytes)
        self.size = self.nbytes // dtype.itemsize
        self.shape = (self.size,)     # (rows, cols) for pto.to_device of a 2-D array
        self.alloc = device.hbm.allocate(self.size, dtype, name)
        self._finalizer = weakref.finalize(self, device.release_allocation, self.alloc)
        # not at interpreter exit: weakref's exit hook would release every live tensor, marking
        # those a queued launch uses as freed before the launches still queued run (teardown.py)
        self._finalizer.atexit = False

    @property
    def name(self):
        return self.alloc.name or f"tensor{self.alloc.id}"

    def free(self):
        """Free the tensor now (an error if a queued kernel still uses it; see pto.sync()).
        Freeing it again is a UseAfterFreeError, as a double free is on a device."""
        if not self._finalizer.alive:
            raise UseAfterFreeError(f"tensor '{self.name}' ({self.nbytes} bytes) was already freed",
                                    tensor=self.name, hint="free a tensor once (or let `with "
                                    "pto.Tensor(...)` or `del` free it)")
        held = self.device.debugged_users_of(self.alloc)
        if held:
            raise UseAfterFreeError(
                f"tensor '{self.name}' is in use by kernel '{held[0].kernel.name}', paused in the debugger: "
                "freed now, its memory would go to the next tensor allocated and the kernel would write "
                "into that one", tensor=self.name, kernel=held[0].kernel.name,
                hint="run the session to its end first (ctx.continue_()), then free the tensor")
        self._finalizer()

    @property
    def freed(self) -> bool:
        return self.alloc.freed

    @property
    def row_stride(self) -> int:
        """Elements between rows of a 2-D tensor (kernels index it ``a[r, c]``); 0 if 1-D."""
        return self.shape[1] if len(self.shape) == 2 else 0

    def numpy(self) -> np.ndarray:
        """A host copy of the tensor's contents, in its shape (waits for kernels that write it);
        an fp4 pair tensor's last axis holds its two values an element."""
        per = self.dtype.values_per_element
        out = np.empty(self.shape[:-1] + (self.shape[-1] * per,), self.dtype.numpy)
        self.device.memcpy_d2h(out, self)
        return out

    def __len__(self):
        return self.size

    def __getitem__(self, index) -> "DeviceTensorView":
        """``d[off:off + n]``: a view of n elements, passed to kernels as a tensor of its own
        (element 0 is d's element off; accesses past its end are out of bounds). No copy.
        ``d[i:j, k:l]`` of a 2-D tensor: a strided 2-D view (runtime/memory.py, 2-D views);
        ``d[i:j]`` of one is rows i..j-1, as numpy's ``a[i:j]``."""
        if isinstance(index, tuple):
            return view_2d(self, index)
        if len(self.shape) == 2 and isinstance(index, slice):
            return view_2d(self, (index, slice(None)))
        if not isinstance(index, slice):
            raise ArgumentError(f"index a device tensor with a slice such as {self.name}[0:16], not "
                            f"{type(index).__name__}; read elements on the host with .numpy()")
        start, stop, step = index.indices(self.size)
        if step != 1:
            raise ArgumentError(f"{self.name}[{index.start}:{index.stop}:{index.step}]: a tensor view "
                             "is contiguous (step 1); pass a stride to the kernel instead")
        if stop <= start:
            raise ArgumentError(f"{self.name}[{start}:{stop}] would be empty")
        return DeviceTensorView(self, start, stop - start)

    def __repr__(self):
        state = "freed" if self.freed else f"at 0x{self.alloc.byte_addr:x}"
        return f"DeviceTensor({self.name}, {self.size} x {self.dtype}, {state})"


class DeviceTensorView(DeviceTensor):
    """A contiguous slice of a DeviceTensor (``d[off:off + n]``): a tensor argument, memcpy
    source or destination of its own, sharing the viewed tensor's memory. It keeps that
    tensor alive and is freed with it; free() the viewed tensor, not the view."""

    def __init__(self, base: DeviceTensor, offset: int, count: int):  # noqa: super() not called
        root = base.base if isinstance(base, DeviceTensorView) else base
        offset += base.alloc.offset if isinstance(base, DeviceTensorView) else 0
        self.base = root
        self.device = root.device
        self.dtype = root.dtype
        self.size = count
        self.shape = (count,)
        self.nbytes = count * root.dtype.itemsize
        self.alloc = AllocationView(root.alloc, offset, count)

    @property
    def name(self):
        return self.alloc.name

    def free(self):
        raise ArgumentError(f"{self.name} is a view and owns no memory: free the tensor it views "
                        f"({self.base.name})")


# ---------------------------------------------------------------- 2-D tensors and views
# 2-D tensors and their strided views, as numba users pass them: ``d = pto.to_device(a)`` of a
# 2-D array is a (rows, cols) tensor, ``d[i:j, k:l]`` a view of rows i..j-1 and columns
# k..l-1 that shares d's memory, and a kernel indexes either ``a[r, c]`` (element r * row
# stride + c of its first element; the row stride is compiled in, so a kernel compiles once per
# distinct stride). Bounds are checked over the view's span, from its first element to its last
# ((j - i - 1) * stride + (l - k) elements): a column past the view's width inside that span
# reads the tensor's next element, as on a device. A strided view is a kernel argument; on the
# host read it with ``.numpy()`` (a copy, in its shape); memcpy into or out of it is refused
# (its elements are not contiguous).


class AllocationView2D(AllocationView):
    """The memory span of a 2-D view, named by its rows and columns."""

    def __init__(self, root, offset, count, label):
        super().__init__(root, offset, count)
        self.label = label

    @property
    def name(self):
        return f"{self.root.name or f'tensor{self.root.id}'}[{self.label}]"


class DeviceTensorView2D(DeviceTensorView):
    """Rows r0..r1-1, columns c0..c1-1 of a 2-D tensor (module docstring)."""

    def __init__(self, base, r0, r1, c0, c1):   # noqa: super().__init__ not called
        root = base.base if isinstance(base, DeviceTensorView) else base
        stride = base.row_stride
        first = (base.alloc.offset if isinstance(base, DeviceTensorView) else 0) + r0 * stride + c0
        rows, cols = r1 - r0, c1 - c0
        self.base, self.device, self.dtype = root, root.device, root.dtype
        self.shape = (rows, cols)
        self.size = rows * cols
        self.nbytes = self.size * root.dtype.itemsize
        self.stride = stride
        self.strided = rows > 1 and cols != stride
        self.origin = (first // stride, first % stride)      # (row, col) in the root
        row, col = self.origin                               # named by the root's rows and columns
        self.alloc = AllocationView2D(root.alloc, first, (rows - 1) * stride + cols,
                                      f"{row}:{row + rows}, {col}:{col + cols}")

    @property
    def row_stride(self) -> int:
        return self.stride

    def numpy(self) -> np.ndarray:
        """A host copy of the view's elements, (rows, cols) (waits for kernels that write it);
        an fp4 pair tensor's columns hold two values each (rows, 2 cols)."""
        r, c = self.origin
        per = self.dtype.values_per_element
        whole = self.base.numpy().reshape(-1, self.stride * per)
        return whole[r:r + self.shape[0], c * per:(c + self.shape[1]) * per].copy()


def view_2d(tensor, index):
    """``tensor[i:j, k:l]``: a DeviceTensorView2D of a 2-D tensor or view."""
    if len(tensor.shape) != 2:
        raise ArgumentError(f"{tensor.name}[{', '.join(map(str, index))}]: a 2-D index needs a 2-D "
                        f"tensor (pto.to_device of a 2-D array); '{tensor.name}' has shape {tensor.shape}")
    if len(index) != 2 or not all(isinstance(k, slice) for k in index):
        raise ArgumentError(f"index a 2-D tensor with two slices such as {tensor.name}[0:4, 2:8]")
    (r0, r1, rs), (c0, c1, cs) = (k.indices(n) for k, n in zip(index, tensor.shape))
    if rs != 1 or cs != 1:
        raise ArgumentError(f"{tensor.name}[{index[0]}, {index[1]}]: a view's rows and columns are "
                         "contiguous ranges (step 1)")
    if r1 <= r0 or c1 <= c0:
        raise ArgumentError(f"{tensor.name}[{r0}:{r1}, {c0}:{c1}] would be empty")
    return DeviceTensorView2D(tensor, r0, r1, c0, c1)
