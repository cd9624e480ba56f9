"""tstore's modes (isa/store_modes.py): atomic='add', pto-isa's AtomicType::AtomicAdd, adds the
stored values to GM's in GM's dtype; relu=True, the fixpipe's ReluPreMode::NormalRelu, zeroes
what is not positive in a store from Acc. A2/A3: include/pto/npu/a2a3/TStore.hpp
(SetAtomicAdd in include/pto/common/arch/memory/tstore_common.hpp); pto-isa's CPU simulation:
include/pto/cpu/TStore.hpp, common.hpp."""
import textwrap

import numpy as np
import pytest

import pypto_sim as pto
from aicore_runs import compile_error
from engine_compare import both_executors, dev_array, tensor_values

ADD = '''
@pto.kernel
def k(X, O):
    with pto.vector():
        {guard}
            t = pto.alloc_tile({rows}, {cols}, pto.{dt}, loc=pto.Vec)
            pto.tload(t, X)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(O, t, atomic="add")
'''
EVERY_AIV = "if True:"
ONE_AIV = "if pto.get_subblock_id() == 0:"


def _run(make_kernels, source, x, start, grid):
    mod = make_kernels(source)
    args = (dev_array(x, getattr(pto, x.dtype.name)), dev_array(start, getattr(pto, start.dtype.name)))
    return mod, args, both_executors(mod.k, grid, args)


def test_atomic_adds_of_six_vector_cores(make_kernels):
    """Three AI cores, two vector cores each, add X (0 .. 127) to O, which starts at 0.5: O =
    0.5 + 6 X, exact in float32 (at most 0.5 + 6 x 127 = 762.5), in every executor and mode;
    check="all" finds nothing: atomic adds of different cores do not race (CUDA's racecheck
    treats atomics so too)."""
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    mod, args, images = _run(make_kernels, ADD.format(guard=EVERY_AIV, rows=8, cols=16, dt="float32"), x,
                             np.full((8, 16), 0.5, np.float32), (3,))
    for key, image in images.items():
        np.testing.assert_array_equal(tensor_values(image, args[1]).reshape(8, 16), 0.5 + 6 * x, err_msg=str(key))
    pto.launch(mod.k, grid=(3,), args=args, check="all")
    pto.sync()


def test_a_float16_atomic_add_rounds_each_sum_to_float16(make_kernels):
    """GM holds float16 2048, whose neighbours are 2046 and 2050: 2048 + 1 is a tie, which
    rounds to the even 2048, so the six adds of 1 leave 2048 (a float32 sum would reach 2054)."""
    x = np.ones((16, 16), np.float16)
    _mod, args, images = _run(make_kernels, ADD.format(guard=EVERY_AIV, rows=16, cols=16, dt="float16"), x,
                              np.full((16, 16), 2048, np.float16), (3,))
    for key, image in images.items():
        np.testing.assert_array_equal(tensor_values(image, args[1]), np.full(256, 2048, np.float16),
                                      err_msg=str(key))


def test_an_int8_atomic_add_wraps(make_kernels):
    """int8: 120 + 10 = 130 wraps to 130 - 256 = -126, as the CPU simulation's `data[offset] +=
    summand` on an int8_t; -100 + -100 = -200 wraps to 56."""
    x = np.array([[10] * 16 + [-100] * 16], np.int8)
    start = np.array([[120] * 16 + [-100] * 16], np.int8)
    _mod, args, images = _run(make_kernels, ADD.format(guard=ONE_AIV, rows=1, cols=32, dt="int8"), x, start,
                              (1,))
    want = np.array([-126] * 16 + [56] * 16, np.int8)
    for key, image in images.items():
        np.testing.assert_array_equal(tensor_values(image, args[1]), want, err_msg=str(key))


def test_an_atomic_add_races_with_a_plain_store_of_another_core(make_kernels):
    """Block 0 stores O plainly, the others add to it: nothing orders two AI cores, so the plain
    store and an atomic add of another core to the same elements race (check="race")."""
    mod = make_kernels(ADD.format(guard=ONE_AIV, rows=8, cols=16, dt="float32").replace(
        'pto.tstore(O, t, atomic="add")',
        'if pto.get_block_id() == 0:\n                pto.tstore(O, t)\n            else:\n'
        '                pto.tstore(O, t, atomic="add")'))
    x = np.ones((8, 16), np.float32)
    args = (dev_array(x, pto.float32), dev_array(x, pto.float32))
    with pytest.raises(pto.RaceError, match=r"race on GM tensor .* between AI cores"):
        pto.launch(mod.k, grid=(2,), args=args, check="race")
        pto.sync()


def test_initcheck_names_an_atomic_add_to_elements_never_written(make_kernels):
    """An atomic add reads what it adds to: into a tensor never written, initcheck names the
    tstore, its line and the first element."""
    mod = make_kernels(ADD.format(guard=ONE_AIV, rows=8, cols=16, dt="float32"))
    args = (dev_array(np.ones((8, 16), np.float32), pto.float32), pto.alloc_tensor(512, pto.float32))
    with pytest.raises(pto.UninitializedReadError, match=r"TSTORE at line \d+ .* \(atomic='add'\) adds to "
                                                          r"\w+\[0\], which was never written"):
        pto.launch(mod.k, grid=(1,), args=args, check="init")
        pto.sync()


RELU = '''
@pto.kernel
def k(A, B, O):
    with pto.cube():
        a_l1 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        b_l1 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        a_l0 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        b_l0 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tload(a_l1, A)
        pto.tload(b_l1, B)
        pto.tmov(a_l0, a_l1)
        pto.tmov(b_l0, b_l1)
        pto.tmatmul(acc, a_l0, b_l0)
        pto.tstore(O, acc, relu=True{atomic})
'''


@pytest.mark.parametrize("atomic, start", [("", 0.0), (', atomic="add"', 0.25)])
def test_relu_zeroes_what_the_fixpipe_stores_below_zero(make_kernels, atomic, start):
    """A @ I with A's element (r, c) = c - r (-15 .. 15, exact in float16): relu keeps c - r where
    it is positive and stores 0 elsewhere (the diagonal's 0 too); with atomic='add' into
    GM's 0.25 the relu comes first, then the add: max(c - r, 0) + 0.25."""
    r, c = np.indices((16, 16))
    a = (c - r).astype(np.float16)
    mod = make_kernels(RELU.format(atomic=atomic))
    args = (dev_array(a, pto.float16), dev_array(np.eye(16, dtype=np.float16), pto.float16),
            dev_array(np.full((16, 16), start, np.float32), pto.float32))
    want = (np.maximum(c - r, 0) + start).astype(np.float32).ravel()
    for key, image in both_executors(mod.k, (1,), args).items():
        np.testing.assert_array_equal(tensor_values(image, args[2]), want, err_msg=str(key))


@pytest.mark.parametrize("body, message", [
    ("""t = pto.alloc_tile(1, 32, pto.uint8, loc=pto.Vec)
pto.tstore(O, t, atomic="add")""", r"atomic='add' into 'O' of uint8; A2/A3 adds float32, float16, bfloat16, int32, "
                                    r"int16, int8 \(SetAtomicAdd"),
    ("""t = pto.alloc_tile(8, 8, pto.float32, loc=pto.Vec)
pto.tstore(O, t, atomic="max")""", r"atomic must be None or 'add'"),
    ("""t = pto.alloc_tile(8, 8, pto.float32, loc=pto.Vec)
pto.tstore(O, t, relu=True)""", r"relu=True is the fixpipe's \(ReluPreMode\), for a store from Acc; 't' is in Vec"),
])
def test_a_store_mode_the_device_refuses_is_a_compile_error(make_kernels, body, message):
    """SetAtomicAdd's dtypes, AtomicType's two values, and relu only from Acc (TSTORE_IMPL with a
    ReluPreMode: static_assert "Source TileType only support Acc!")."""
    if "uint8" in body:                 # O must be a uint8 tensor
        source = "\n@pto.kernel\ndef k(X, O):\n    with pto.vector():\n" + textwrap.indent(body, " " * 8)
        with pytest.raises(pto.CompileError, match=message):
            make_kernels(source).k.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256, pto.uint8)))
        return
    compile_error(make_kernels, body, message)


def test_an_nz_store_from_acc_takes_columns_of_16(make_kernels):
    """TStoreAccNz2nz asserts "validCol must be an integer multiple of 16" for an NZ store, channel
    split or not: a float32 Acc of 8 valid columns stored NZ is a compile error, though this NZ's
    float32 blocks are 8 wide."""
    src = RELU.format(atomic="").replace("relu=True", "layout=pto.NZ").replace(
        "acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)",
        "acc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc, valid=(16, 8))")
    with pytest.raises(pto.CompileError, match=r"'acc' has 8 valid columns .*integer multiple of 16"):
        make_kernels(src).k.program_for((pto.alloc_tensor(512, pto.float16), pto.alloc_tensor(512, pto.float16),
                                         pto.alloc_tensor(1024, pto.float32)))
