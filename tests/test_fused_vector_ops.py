"""The fused and scalar-broadcast vector instructions on the real AI core (isa/40_fused_scalar.toml):
TMULADDDST, TFUSEDMULADD(RELU) and TAXPY read their destination, so the simulator must read dst
when the op starts, after whatever wrote it (their costs: tests/test_cost_model.py)."""
import numpy as np
import pytest

import pypto_sim as pto

ROWS, COLS = 16, 64

CHAIN = '''
@pto.kernel
def chain(A, B, O):
    with pto.vector():
        r0 = pto.get_subblock_id() * {n}
        a = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Vec)
        b = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Vec)
        d = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Vec)
        pto.tload(a, A + r0)
        pto.tload(b, B + r0)
        pto.tload(d, A + r0)          # dst's old value comes from a load: read after it lands
        pto.taxpy(d, b, 0.5)          # d = 0.5 b + a
        pto.tmuladddst(d, a, b)       # d = a b + d
        pto.tfusedmuladd(d, a, b)     # d = a d + b
        pto.tfusedmuladdrelu(d, b, a) # d = relu(b d + a)
        pto.tsubrelu(d, d, b)         # d = relu(d - b)
        pto.tstore(O + r0, d)
'''


def _round(x, dt):
    return np.asarray(x, np.float64).astype(dt).astype(np.float64)


@pytest.mark.parametrize("dt", ["float32", "float16"])
def test_fused_ops_read_their_destination_after_its_load(make_kernels, dt):
    """Each multiply-add rounds its product to the dtype, then the sum (pto-isa's CPU simulator
    and on-device goldens), both vector cores at once; the TAXPY's dst is the TLOAD's, so in
    auto mode it starts after the load completes."""
    npdt = np.dtype(dt)
    mod = make_kernels(CHAIN.format(rows=ROWS, cols=COLS, n=ROWS * COLS, dt=dt))
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2 * ROWS, COLS)).astype(npdt)
    b = rng.standard_normal((2 * ROWS, COLS)).astype(npdt)
    dA, dB, dO = (pto.alloc_tensor(a.nbytes, getattr(pto, dt)) for _ in range(3))
    pto.memcpy_h2d(dA, a)
    pto.memcpy_h2d(dB, b)
    prof = pto.profile(mod.chain, grid=(1,), args=(dA, dB, dO), check="race")
    got = np.empty_like(a)
    pto.memcpy_d2h(got, dO)
    x, y = a.astype(np.float64), b.astype(np.float64)
    d = _round(_round(0.5 * y, npdt) + x, npdt)
    d = _round(_round(x * y, npdt) + d, npdt)
    d = _round(_round(x * d, npdt) + y, npdt)
    d = _round(np.maximum(_round(y * d, npdt) + x, 0.0), npdt)
    d = _round(np.maximum(d - y, 0.0), npdt)
    np.testing.assert_array_equal(got.astype(np.float64), d)
    for unit in (1, 2):
        load = [e for e in prof.timeline if e.inst == "TLOAD" and e.warp == unit][-1]
        axpy = next(e for e in prof.timeline if e.inst == "TAXPY" and e.warp == unit)
        assert axpy.start >= load.end


def test_texpands_fills_every_dtype_and_rounds_the_scalar(make_kernels):
    """TEXPANDS writes the scalar rounded to the tile's dtype (1/3 in float16 is 0.33325...)."""
    mod = make_kernels('''
@pto.kernel
def fill(O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            h = pto.alloc_tile(16, 16, pto.float16, loc=pto.Vec)
            pto.texpands(h, 1.0 / 3.0)
            pto.tstore(O, h)
''')
    out = pto.alloc_tensor(512, pto.float16)
    pto.launch(mod.fill, grid=(1,), args=(out,))
    got = np.empty(256, np.float16)
    pto.memcpy_d2h(got, out)
    assert (got == np.float16(1 / 3)).all()
