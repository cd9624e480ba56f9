"""The fused and scalar-broadcast vector instructions on the real AI core (isa/40_fused_scalar.toml):
TMULADDDST, TFUSEDMULADD(RELU) and TAXPY read their destination, so the simulator must read dst
when the op starts, after whatever wrote it (their costs: tests/test_cost_model.py)."""
import numpy as np
import pytest

import pypto_sim as pto
from engine_compare import both_executors, dev_array, tensor_values

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


MIXED_AXPY = '''
@pto.kernel
def axpy(S, D, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile(16, 16, pto.float16, loc=pto.Vec)
            dst = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
            pto.tload(src, S)
            pto.tload(dst, D)
            pto.taxpy(dst, src, 3.0)
            pto.tstore(O, dst)
'''


def test_taxpy_takes_a_float16_source_into_a_float32_destination(make_kernels):
    """TAXPY_IMPL (A2/A3 TAxpy.hpp) lets a float dst take a half src and half scalar, and vaxpy then
    computes in float. src = float16(0.1) = 1638 / 16384 = 0.0999755859375, scalar 3: the product
    4914 / 16384 = 0.2999267578125 is exact in float32, and dst = 1 + it = 1.2999267578125 (its 13
    fraction bits fit float32's 23; float16 would round it to 1.2998046875). In every executor and
    mode."""
    mod = make_kernels(MIXED_AXPY)
    S = dev_array(np.full(256, 0.1, np.float16), pto.float16)
    D = dev_array(np.ones(256, np.float32), pto.float32)
    O = dev_array(np.zeros(256, np.float32), pto.float32)
    want = np.full(256, 1.2999267578125, np.float32)
    for (mode, ex), words in both_executors(mod.axpy, (1,), (S, D, O)).items():
        got = tensor_values(words, O)
        np.testing.assert_array_equal(got, want, err_msg=f"{mode}, {ex}")
    pto.launch(mod.axpy, grid=(1,), args=(S, D, O), check="all")   # the sanitizers find nothing
    pto.sync()


def test_taxpy_refuses_a_float16_destination_over_a_float32_source(make_kernels):
    """The other mix is not A2/A3's: "The data type of dst must be consistent with src or dst is
    float while src is half" (TAxpy.hpp's static_assert), so it is a compile error naming both."""
    swapped = MIXED_AXPY.replace("pto.float16", "pto.HALF").replace("pto.float32", "pto.float16") \
        .replace("pto.HALF", "pto.float32")
    kernel = make_kernels(swapped).axpy
    args = tuple(pto.alloc_tensor(n, dt) for n, dt in ((1024, pto.float32), (512, pto.float16), (512, pto.float16)))
    refusal = r"taxpy .*float32 over float16.*got float16, float32 \(tiles dst, src\)"
    with pytest.raises(pto.CompileError, match=refusal):
        kernel.program_for(args)
