"""pto-isa's CPU-simulation suites of TBROADCAST and TREDUCE (tests/cpu/st/testcase/tbroadcast,
treduce at 3186c381: main.cpp's TEST_F cases, *_kernel.cpp, gen_data.py), ported; each test is
named after its C++ case. Both run on one device: one kernel is the root and its ParallelGroup's
tensors are buffers of that device (TBROADCAST: KN slices of one output tensor, `out + i *
sizePerCopy`; TREDUCE: two tensors of their own, src0 and src1), so each is one block here, its
group those pointers, root 0 (sync="manual" kernels run with check="all").

- TBroadCastTest: a D0 x D1 x D2 x D3 x D4 tensor (dense) broadcast to KN copies through a D3 x
  D4 tile of DYNAMIC valid region; gen_data.py's input is np.random.seed(19) then randint(1, 10)
  per case in order, the golden KN copies of it. The dense 5-D tensor is the (D0 D1 D2 D3) x D4
  slice: TBROADCAST_IMPL's outer loops start each D3 block where the last ended, and each block
  is one chunk of the tile, so the header issues the same chunks in the same order.
- TREDUCETest: two 64 x 64 int32 ranks reduced (case1 Max, case2 Sum) through 64 x 64 tiles
  (the slice fits: TreduceSimple); gen_data.py's inputs are np.random.seed(25) then two
  randint(0, 6) arrays per case in order.

Not portable as the CPU simulation runs them: case_half_4 and case_bf16_5 (KN = 1, a 1 x 2 x 1
x 16 x 256 tensor through a 16 x 256 tile). pto-isa's CPU TBROADCAST is a plain copy
(include/pto/cpu/comm/TBroadcast.hpp, the tile unused), but A2/A3's header takes its one-rank
path, one TLOAD of the whole 32-row tensor into the 16-row tile, which TLOAD's ND path asserts
against ("The validRow of TileData must be equal to (Shape0 * Shape1 * Shape2 * Shape3) of ND
shape!"; built without _DEBUG it would write 16 rows past the tile): here a CompileError, which
their tests check.
"""
import numpy as np
import pytest

import pypto_sim as pto

from aicore_runs import host_copy

# (case, dtype, (D0, D1, D2, D3, D4), KN) in gen_data.py's order
BROADCAST_CASES = [("case_float_1", "float32", (1, 2, 4, 64, 64), 5), ("case_int32_2", "int32", (1, 2, 4, 64, 64), 3),
                   ("case_int16_3", "int16", (2, 2, 3, 64, 64), 2), ("case_half_4", "float16", (1, 2, 1, 16, 256), 1),
                   ("case_bf16_5", "bfloat16", (1, 2, 1, 16, 256), 1)]
REDUCE_CASES = [("case1", "max"), ("case2", "sum")]

BROADCAST = '''
@pto.kernel(sync="manual")
def k(out, src):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            tile = pto.alloc_tile({d3}, {d4}, pto.{dtype}, loc=pto.Vec, valid=({d3}, {d4}))
            group = pto.parallel_group([out + i * {size} for i in range({kn})], 0)
            pto.tbroadcast(group, src, tile, rows={rows}, cols={d4})
'''

REDUCE = '''
@pto.kernel(sync="manual")
def k(src0, src1, output):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            acc = pto.alloc_tile(64, 64, pto.int32, loc=pto.Vec, valid=(64, 64))
            recv = pto.alloc_tile(64, 64, pto.int32, loc=pto.Vec, valid=(64, 64))
            pto.treduce(pto.parallel_group((src0, src1), 0), output, acc, recv, "{op}")
'''


def broadcast_inputs():
    """gen_data.py's inputs: seed 19, one randint(1, 10) of each case's size, in order."""
    np.random.seed(19)
    return [np.random.randint(1, 10, size=[int(np.prod(shape))]) for _n, _dt, shape, _kn in BROADCAST_CASES]


def broadcast_kernel(make_kernels, case):
    _name, dtype, (d0, d1, d2, d3, d4), kn = case
    return make_kernels(BROADCAST.format(d3=d3, d4=d4, dtype=dtype, size=d0 * d1 * d2 * d3 * d4, kn=kn,
                                         rows=d0 * d1 * d2 * d3)).k


@pytest.mark.parametrize("case", BROADCAST_CASES[:3], ids=[c[0] for c in BROADCAST_CASES[:3]])
def test_tbroadcast_cpu_suite(make_kernels, case):
    """test_tbroadcast_5d: the output is KN copies of the input (golden.bin)."""
    i = [c[0] for c in BROADCAST_CASES].index(case[0])
    dtype, kn = case[1], case[3]
    x = broadcast_inputs()[i].astype(dtype)
    out, src = pto.to_device(np.zeros(kn * x.size, dtype)), pto.to_device(x)
    pto.launch(broadcast_kernel(make_kernels, case), grid=(1,), args=(out, src), check="all")
    np.testing.assert_array_equal(host_copy(out, (kn * x.size,), dtype), np.tile(x, kn))


@pytest.mark.parametrize("case", BROADCAST_CASES[3:], ids=[c[0] for c in BROADCAST_CASES[3:]])
def test_tbroadcast_cpu_suite_one_rank_is_refused_as_a2a3_tload_asserts(make_kernels, case):
    """KN = 1: A2/A3's TBROADCAST_IMPL moves the whole 32 x 256 tensor in one TLOAD of the 16 x
    256 tile (its `nranks == 1` path), which TLOAD's ND assert refuses (the module docstring)."""
    out, src = (pto.alloc_tensor(2 * 16 * 256 * 2, getattr(pto, case[1])) for _ in range(2))
    with pytest.raises(pto.CompileError, match=r"with one rank in the group, so include/pto/comm/a2a3/TBroadCast.hpp "
                                               r"moves the 32 x 256 slice in one TLOAD of 'tile' \(valid 16 x 256\)"):
        broadcast_kernel(make_kernels, case).program_for((out, src))


@pytest.mark.parametrize("case", REDUCE_CASES, ids=[c[0] for c in REDUCE_CASES])
def test_treduce_cpu_suite(make_kernels, case):
    """test_treduce<int32_t, 64, 64, 64, 64, op>: output = op(input0, input1) (golden.bin)."""
    np.random.seed(25)
    draws = [np.random.randint(0, 6, size=[64, 64]).astype(np.int32) for _ in range(2 * len(REDUCE_CASES))]
    i = [c[0] for c in REDUCE_CASES].index(case[0])
    a, b = draws[2 * i], draws[2 * i + 1]
    src0, src1, out = pto.to_device(a), pto.to_device(b), pto.to_device(np.zeros_like(a))
    pto.launch(make_kernels(REDUCE.format(op=case[1])).k, grid=(1,), args=(src0, src1, out), check="all")
    want = np.maximum(a, b) if case[1] == "max" else a + b
    np.testing.assert_array_equal(host_copy(out, (64, 64), np.int32), want)
