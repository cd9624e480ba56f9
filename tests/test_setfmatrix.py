"""pto.setfmatrix (SETFMATRIX, FMATRIX_A_MANUAL): the cube core's FMATRIX register that a
pto.timg2col without fmap_h / fmap_w reads, as pto-isa's conv2d_forward sets it once per output
block. Values against numpy's img2col on both executors in both modes."""
import numpy as np
import pytest

import pypto_sim as pto

from engine_compare import both_executors, tensor_values
from img2col_reference import numpy_img2col

C0, H, W = 16, 4, 12


@pto.kernel(sync="manual")
def two_fmatrices(X, B, Y1, Y2):
    """Two TIMG2COLs of one map under two SETFMATRIXes: pads of 1 all round, then pads of 0
    (top / bottom) and 1 (left / right). The second SETFMATRIX runs on the scalar unit while
    the first TIMG2COL still waits on MTE1 for the map's load: it took the register's value
    when it issued."""
    with pto.cube():
        f = pto.alloc_tile(H * W, C0, pto.float16, loc=pto.Mat)
        bm = pto.alloc_tile(48, 16, pto.float16, loc=pto.Mat)
        a1 = pto.alloc_tile(48, 48, pto.float16, loc=pto.Left)
        a2 = pto.alloc_tile(16, 48, pto.float16, loc=pto.Left)
        b = pto.alloc_tile(48, 16, pto.float16, loc=pto.Right)
        acc1 = pto.alloc_tile(48, 16, pto.float32, loc=pto.Acc)
        acc2 = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tload(f, X, stride=C0)
        pto.tload(bm, B, stride=16)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.setfmatrix(H, W, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.timg2col(a1, f, 0, 48)
        pto.setfmatrix(H, W, pad_left=1, pad_right=1)
        pto.timg2col(a2, f, 0, 48)
        pto.textract(b, bm)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(acc1, a1, b)
        pto.tmatmul(acc2, a2, b)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(Y1, acc1, stride=16)
        pto.tstore(Y2, acc2, stride=16)


def test_each_timg2col_reads_the_fmatrix_set_before_it_issued():
    """Y1 = img2col with pads (1, 1, 1, 1): 4 x 12 outputs, columns 48..95 (taps 3..5) @ B;
    Y2 = img2col with pads (1, 1, 0, 0): 2 x 12 outputs, of which the first 16 rows; small
    integers, so every product is exact. The same four ways (timing / functional, numba /
    reference)."""
    rng = np.random.default_rng(3)
    x = rng.integers(-4, 4, (1, H, W, C0)).astype(np.float16)
    bw = rng.integers(-4, 4, (48, 16)).astype(np.float16)
    X, B = pto.alloc_tensor(x.nbytes, pto.float16), pto.alloc_tensor(bw.nbytes, pto.float16)
    pto.memcpy_h2d(X, x)
    pto.memcpy_h2d(B, bw)
    Y1, Y2 = pto.alloc_tensor(48 * 16 * 4, pto.float32), pto.alloc_tensor(16 * 16 * 4, pto.float32)
    images = both_executors(two_fmatrices, (1, 1, 1), (X, B, Y1, Y2))
    first = images[("timing", "numba")]
    for key, image in images.items():
        np.testing.assert_array_equal(image, first, err_msg=str(key))
    xs, b64 = x.astype(np.float64), bw.astype(np.float64)
    np.testing.assert_array_equal(tensor_values(first, Y1).reshape(48, 16),
                                  numpy_img2col(xs, (1, 1, 1, 1))[:, 48:96] @ b64)
    np.testing.assert_array_equal(tensor_values(first, Y2).reshape(16, 16),
                                  numpy_img2col(xs, (1, 1, 0, 0))[:16, 48:96] @ b64)


@pytest.mark.parametrize("body, message", [
    ("pto.timg2col(a, f, 0, 0)", "reads the FMATRIX register, which no pto.setfmatrix"),
    ("pto.setfmatrix(4, 12)\n        pto.timg2col(a, f, 0, 0, 4)", "give fmap_h and fmap_w .and the pads. together"),
    ("pto.setfmatrix(4, 12)\n        pto.timg2col(a, f, 0, 0, pad_top=1)", "give fmap_h and fmap_w"),
    ("pto.setfmatrix(4)", "missing a required argument: 'fmap_w'"),
    ("pto.setfmatrix(4, 12, pad_top=300)", r"pad_top = 300 is outside \[0, 255\]"),
])
def test_setfmatrix_and_a_timg2col_that_reads_it_are_checked(make_kernels, body, message):
    """A TIMG2COL without fmap_h / fmap_w needs a SETFMATRIX before it, takes the pads from
    the register too, and SETFMATRIX's fields are checked as TIMG2COL's are."""
    source = ("\n@pto.kernel\ndef k(X):\n    with pto.cube():\n"
              "        f = pto.alloc_tile(48, 16, pto.float16, loc=pto.Mat)\n"
              "        a = pto.alloc_tile(48, 48, pto.float16, loc=pto.Left)\n"
              f"        {body}\n")
    with pytest.raises(pto.CompileError, match=message):
        make_kernels(source).k.program_for((pto.alloc_tensor(64),))


def test_setfmatrix_is_cube_code(make_kernels):
    """FMATRIX is the cube core's register: a pto.setfmatrix in vector code is refused."""
    source = "\n@pto.kernel\ndef k(X):\n    with pto.vector():\n        pto.setfmatrix(4, 12)\n"
    with pytest.raises(pto.CompileError, match=r"call it inside `with pto.cube\(\):`"):
        make_kernels(source).k.program_for((pto.alloc_tensor(64),))
