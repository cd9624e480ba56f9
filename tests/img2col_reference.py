"""numpy's img2col of an NC1HWC0 image, as pto-isa's conv2d_forward gen_data.py computes it: the
reference the TIMG2COL and SETFMATRIX tests (test_img2col, test_setfmatrix) hold the simulator to."""
import numpy as np


def numpy_img2col(fmap, pads, filt=(3, 3), stride=(1, 1), dil=(1, 1)):
    """gen_data.py's img2col_nhwc on one image of c1 planes (c1, h, w, c0): rows are output
    pixels, columns (c1, kh, kw, c0) as the FRACTAL_Z weight's K axis."""
    pl, pr, pt, pb = pads
    c1, h, w, c0 = fmap.shape
    p = np.pad(fmap, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    oh = (h + pt + pb - dil[0] * (filt[0] - 1) - 1) // stride[0] + 1
    ow = (w + pl + pr - dil[1] * (filt[1] - 1) - 1) // stride[1] + 1
    rows = []
    for i in range(oh):
        for j in range(ow):
            taps = [p[:, i * stride[0] + a * dil[0], j * stride[1] + b * dil[1], :]
                    for a in range(filt[0]) for b in range(filt[1])]
            rows.append(np.stack(taps, axis=1).reshape(-1))
    return np.array(rows)
