"""What the ports of pto-isa's A2/A3 on-device textract_vec and tinsert_vec suites share
(hw-native-sys/pto-isa tests/npu/a2a3/src/st/testcase/textract_vec and tinsert_vec at 3186c381):
their dtypes, gen_data.py's rand_data and nd_to_nz, the kernels' ``if constexpr (isFullValid)``
branches, a launch of a ported kernel and main.cpp's comparison. tests/test_ptoisa_npu_vec_windows.py
ports the ND cases, tests/test_ptoisa_npu_vec_windows_nz.py the NZ ones."""
import ml_dtypes
import numpy as np

from ptoisa_st import as_words, result_cmp, run_kernel

# the kernel's T (PTOISA_DTYPES' name) -> (gen_data.py's numpy dtype, the tensors' numpy dtype, main.cpp's dType)
TYPES = {"float": (np.float32, np.float32, np.float32), "half": (np.float16, np.float16, np.uint16),
         "bf16": (np.uint16, ml_dtypes.bfloat16, np.uint16), "int32": (np.int32, np.int32, np.int32),
         "uint32": (np.uint32, np.uint32, np.uint32), "int16": (np.int16, np.int16, np.int16),
         "uint16": (np.uint16, np.uint16, np.uint16), "int8": (np.int8, np.int8, np.int8),
         "uint8": (np.uint8, np.uint8, np.uint8)}


def constexpr(kernel, full):
    """The kernel's text with its ``if constexpr (isFullValid)`` branches resolved: lines marked
    ``# full`` kept when the valid region is the whole tile, ``# partial`` when it is not."""
    drop = "# partial" if full else "# full"
    return "\n".join(line.split("  # ")[0] for line in kernel.splitlines() if not line.endswith(drop))


def rand_data(rng, dtype, shape):
    """gen_data.py's rand_data from the case's own generator."""
    if dtype == np.int8:
        return rng.randint(-128, 127, size=shape).astype(dtype)
    if dtype == np.uint8:
        return rng.randint(0, 256, size=shape).astype(dtype)
    if dtype == np.int32:
        return rng.randint(-1000, 1000, size=shape).astype(dtype)
    return rng.uniform(-10, 10, size=shape).astype(dtype)


def nd_to_nz(a):
    """gen_data.py's nd_to_nz: a rows x cols array as its (cols / c0, rows / 16, 16, c0) fractals,
    c0 = 32 bytes of elements (get_c0: 8, 16 or 32)."""
    rows, cols = a.shape
    c0 = 32 // a.dtype.itemsize
    return a.reshape(rows // 16, 16, cols // c0, c0).transpose(2, 0, 1, 3)


def run_case(kernel, src, dst_init, t):
    """Launch kernel(S, D, O) with src and dst_init (gen_data.py's words as the kernel's T) and an output
    tensor of dst_init's shape that starts as zeros; returns the output."""
    _, np_dt, _ = TYPES[t]
    out, = run_kernel(kernel, [as_words(a, np_dt).reshape(a.shape) for a in (src, dst_init)],
                      [(dst_init.shape, np_dt)])
    return out


def check(golden, out, t):
    """main.cpp's ResultCmp<dType>(golden, out, 0.0f) over the output's elements, then its bytes."""
    _, _, cmp_dt = TYPES[t]
    assert result_cmp(as_words(golden, cmp_dt), as_words(out, cmp_dt), 0.0)
    np.testing.assert_array_equal(as_words(out, np.uint8), as_words(golden, np.uint8))
