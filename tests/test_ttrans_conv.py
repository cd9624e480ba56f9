"""pto.ttrans_conv, TTRANS of ConvTiles (A2/A3 include/pto/npu/a2a3/TTrans.hpp
TTransImplConvTile): the layout pairs the header has no branch for, shapes that are not one
tensor in two layouts (CheckConvTile's "expect same size for src and dst."), tiles that are not
the ConvTiles' flat words, and dtypes the header refuses or pypto_sim does not build, each a
CompileError naming the call's line; a tiny transpose derived by hand."""
import numpy as np
import pytest

import pypto_sim as pto

from engine_compare import dev_array


def _compile(make_kernels, body):
    source = ("\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n"
              + "\n".join(" " * 8 + line for line in body.split("\n")) + "\n")
    return make_kernels(source).k.program_for((pto.alloc_tensor(4096), pto.alloc_tensor(4096)))


FLAT = ("s = pto.alloc_tile(1, 512, pto.float32)\nd = pto.alloc_tile(1, 256, pto.float32)\n"
        "t = pto.alloc_tile(16, 64, pto.float32)\n")


@pytest.mark.parametrize("call, message", [
    ('pto.ttrans_conv(d, s, t, "NCHW", (1, 8, 2, 16), "NCDHW", (1, 8, 1, 2, 16))',
     "NCDHW -> NCHW is none of A2/A3's ConvTile transposes"),
    ('pto.ttrans_conv(d, s, t, "NC1HWC0", (1, 1, 2, 16, 8), "NCHW", (1, 8, 2, 8))',
     r"dst \(1, 1, 2, 16, 8\) is not src \(1, 8, 2, 8\) with C split into ceil\(C / C0\) x C0"),
    ('pto.ttrans_conv(d, s, t, "NC1HWC0", (1, 1, 2, 16), "NCHW", (1, 8, 2, 16))',
     "dst_shape must be a tuple of 5 ints"),
    ('pto.ttrans_conv(d, s, t, "NC1HWC0", (1, 2, 2, 14, 8), "NCHW", (1, 9, 2, 14))',
     "'d' holds 256 elements but NCHW -> NC1HWC0 writes 448 of it"),
    ('pto.ttrans_conv(pto.treshape(t, 4, 256), s, t, "NC1HWC0", (1, 1, 2, 16, 8), "NCHW", (1, 8, 2, 16))',
     "must be a RowMajor tile of its own dtype, flat 1 x n"),
    ('pto.ttrans_conv(i, s, t, "NC1HWC0", (1, 1, 2, 16, 8), "NCHW", (1, 8, 2, 16))',
     "a transpose between two dtypes of one size is not built"),
    ('pto.ttrans_conv(h, s, t, "NC1HWC0", (1, 1, 2, 16, 8), "NCHW", (1, 8, 2, 16))',
     "inconsistent input and output data type"),
])
def test_operand_errors_name_the_header(make_kernels, call, message):
    """Each a CompileError: NCDHW -> NCHW has no branch; NC1HWC0 (1, 1, 2, 16, 8) is not NCHW
    (1, 8, 2, 8) with C split (W differs); a 4-tuple for a 5-dimension layout; C 9 of float32
    (C0 8) makes 2 blocks, 2 x 2 x 14 x 8 = 448 words where d holds 256 (the header reads whole
    blocks of C0 channels of s too, which holds 512); a 4 x 256 dst is not flat; an int32 dst of a float32 src (one
    size, two dtypes); a float16 dst of a float32 src (TTRANS_IMPL's static_assert)."""
    body = FLAT + ("i = pto.alloc_tile(1, 256, pto.int32)\nh = pto.alloc_tile(1, 256, pto.float16)\n" + call)
    with pytest.raises(pto.CompileError, match=message):
        _compile(make_kernels, body)


def test_nchw_to_nc1hwc0_splits_c_into_blocks_of_c0(make_kernels):
    """float32 NCHW (1, 8, 1, 8) -> NC1HWC0 (1, 1, 1, 8, 8): C0 = 32 bytes / 4 = 8 channels a
    block, so dst[0, 0, 0, w, c] = src[0, c, 0, w]: the 8 x 8 (c, w) plane transposed. With
    src[c, w] = 10 c + w, dst's word 8 w + c is 10 c + w (word 9 = (w 1, c 1) is 11, word 10 =
    (w 1, c 2) is 21)."""
    kernel = _kernel(make_kernels)
    src = (10 * np.arange(8)[:, None] + np.arange(8)).astype(np.float32)
    out = pto.alloc_tensor(64 * 4, pto.float32)
    pto.launch(kernel, grid=(1,), args=(dev_array(src, pto.float32), out))
    pto.sync()
    got = np.empty(64, np.float32)
    pto.memcpy_d2h(got, out)
    np.testing.assert_array_equal(got.reshape(8, 8), src.T)
    assert got[9] == 11 and got[10] == 21


def _kernel(make_kernels):
    return make_kernels('''
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            s = pto.alloc_tile(1, 64, pto.float32)
            d = pto.alloc_tile(1, 64, pto.float32)
            t = pto.alloc_tile(16, 64, pto.float32)
            pto.tload(s, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.ttrans_conv(d, s, t, "NC1HWC0", (1, 1, 1, 8, 8), "NCHW", (1, 8, 1, 8))
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, d)
''').k
