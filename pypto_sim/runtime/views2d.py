"""2-D tensors and their strided views, as numba users pass them: ``d = pto.to_device(a)`` of a
2-D array is a (rows, cols) tensor, ``d[i:j, k:l]`` a view of rows i..j-1 and columns
k..l-1 that shares d's memory, and a kernel indexes either ``a[r, c]`` (element r * row
stride + c of its first element; the row stride is compiled in, so a kernel compiles once per
distinct stride). Bounds are checked over the view's span, from its first element to its last
((j - i - 1) * stride + (l - k) elements): a column past the view's width inside that span
reads the tensor's next element, as on a device. A strided view is a kernel argument; on the
host read it with ``.numpy()`` (a copy, in its shape); memcpy into or out of it is refused
(its elements are not contiguous)."""
from __future__ import annotations

import numpy as np

from .memory import AllocationView, DeviceTensorView


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
        self.alloc = AllocationView2D(root.alloc, first, (rows - 1) * stride + cols,
                                      f"{r0}:{r1}, {c0}:{c1}")

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
        raise TypeError(f"{tensor.name}[{', '.join(map(str, index))}]: a 2-D index needs a 2-D "
                        f"tensor (pto.to_device of a 2-D array); '{tensor.name}' has shape {tensor.shape}")
    if len(index) != 2 or not all(isinstance(k, slice) for k in index):
        raise TypeError(f"index a 2-D tensor with two slices such as {tensor.name}[0:4, 2:8]")
    (r0, r1, rs), (c0, c1, cs) = (k.indices(n) for k, n in zip(index, tensor.shape))
    if rs != 1 or cs != 1:
        raise ValueError(f"{tensor.name}[{index[0]}, {index[1]}]: a view's rows and columns are "
                         "contiguous ranges (step 1)")
    if r1 <= r0 or c1 <= c0:
        raise ValueError(f"{tensor.name}[{r0}:{r1}, {c0}:{c1}] would be empty")
    return DeviceTensorView2D(tensor, r0, r1, c0, c1)
