"""pto-isa's st cases of TMATMUL and TGEMV without bias (tests/cpu/st/testcase/tmatmul at
3186c381: case1, case2, case4, case_gemm_1, case_gemm_2), in the AI-core API as
tmatmul_kernel.cpp's RunTMATMUL writes them: TLOAD of A (M x K) and B (K x N) into Mat tiles
whose sizes are validM / validK / validN rounded up to the block (32 elements for 1-byte
types, else 16), TMOV to Left and Right, TMATMUL (TGEMV when validM is 1) into an Acc tile,
TSTORE of its valid region. Each golden is gen_data.py's (seed 19): randint(1, 5) inputs,
matmul_reference in the output dtype (exact: every sum is an integer below 2**24); the
tolerance main.cpp's ResultCmp(golden, out, 0.001f).

case3 is RunTMATMUL_SPLIT_K: five 128 x 128 x 64 half products, the first TMATMUL, the rest
TMATMUL_ACC(cTile, cTile, aTile, bTile) (pto-isa's four-operand form), one TSTORE.

Not ported here: the bias cases (tests/ptoisa_st.py says why) and case_bf16_1 (built only with
PTO_CPU_SIM_ENABLE_BF16).
"""
import numpy as np
import pytest

import pypto_sim as pto
from ptoisa_st import result_cmp, run_kernel

TMATMUL = """
@pto.kernel
def k(A, B, O):
    with pto.cube():
        a_mat = pto.alloc_tile({M}, {K}, pto.{src}, loc=pto.Mat, valid=({vm}, {vk}))
        b_mat = pto.alloc_tile({K}, {N}, pto.{src}, loc=pto.Mat, valid=({vk}, {vn}))
        a = pto.alloc_tile({M}, {K}, pto.{src}, loc=pto.Left, valid=({vm}, {vk}))
        b = pto.alloc_tile({K}, {N}, pto.{src}, loc=pto.Right, valid=({vk}, {vn}))
        c = pto.alloc_tile({M}, {N}, pto.{dst}, loc=pto.Acc, valid=({vm}, {vn}))
        pto.tload(a_mat, A, stride={vk})
        pto.tload(b_mat, B, stride={vn})
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.tmov(a, a_mat)
        pto.tmov(b, b_mat)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.{op}(c, a, b)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(O, c, stride={vn})
"""

# case: (A / B dtype, output dtype, validM, validK, validN) of gen_data.py's tmatmulParams
CASES = {"case1": ("float16", "float32", 40, 50, 60), "case2": ("int8", "int32", 6, 7, 8),
         "case4": ("float32", "float32", 120, 110, 50), "case_gemm_1": ("float16", "float32", 1, 110, 50),
         "case_gemm_2": ("float32", "float32", 1, 128, 64)}


def _ceil_align(x, block):
    return (x + block - 1) // block * block


@pytest.mark.parametrize("case", CASES)
def test_tmatmul(make_kernels, case):
    """gen_data.py: x1 = randint(1, 5) of validM x validK, x2 of validK x validN, both in the
    source dtype; golden = sum over k of x1[m, k] * x2[k, n] in the output dtype."""
    src, dst, vm, vk, vn = CASES[case]
    block = 32 if np.dtype(src).itemsize == 1 else 16
    M, K, N = (_ceil_align(v, block) for v in (vm, vk, vn))
    rng = np.random.RandomState(19)
    a = rng.randint(1, 5, [1, vm, vk]).astype(src)[0]
    b = rng.randint(1, 5, [1, vk, vn]).astype(src)[0]
    golden = (a.astype(dst)[:, :, None] * b.astype(dst)[None, :, :]).sum(axis=1, dtype=dst)
    op = "tgemv" if vm == 1 else "tmatmul"
    kernel = make_kernels(TMATMUL.format(M=M, K=K, N=N, vm=vm, vk=vk, vn=vn, src=src, dst=dst, op=op)).k
    out, = run_kernel(kernel, [a, b], [((vm, vn), np.dtype(dst))])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


SPLIT_K = """
@pto.kernel
def k(A, B, O):
    with pto.cube():
        a_mat = pto.alloc_tile(128, 128, pto.float16, loc=pto.Mat)
        b_mat = pto.alloc_tile(128, 64, pto.float16, loc=pto.Mat)
        a = pto.alloc_tile(128, 128, pto.float16, loc=pto.Left)
        b = pto.alloc_tile(128, 64, pto.float16, loc=pto.Right)
        c = pto.alloc_tile(128, 64, pto.float32, loc=pto.Acc)
        for i in range(5):
            pto.tload(a_mat, A + i * 128 * 128)
            pto.tload(b_mat, B + i * 128 * 64)
            pto.tmov(a, a_mat)
            pto.tmov(b, b_mat)
            if i == 0:
                pto.tmatmul(c, a, b)
            else:
                pto.tmatmul_acc(c, c, a, b)
        pto.tstore(O, c)
"""


def test_tmatmul_case3_split_k(make_kernels):
    """TMATMULTest.case3 (gen_data.py's tmatmulParams(float16, float16, float32, 128, 128, 64,
    repeats=5)): golden = sum over the 5 repeats of x1[i] @ x2[i] in float32, randint(1, 5)
    inputs (exact: each entry at most 5 * 128 * 16 = 10240)."""
    rng = np.random.RandomState(19)
    a = rng.randint(1, 5, [5, 128, 128]).astype(np.float16)
    b = rng.randint(1, 5, [5, 128, 64]).astype(np.float16)
    golden = np.zeros([128, 64], np.float32)
    for i in range(5):
        golden += (a[i].astype(np.float32)[:, :, None] * b[i].astype(np.float32)[None, :, :]).sum(axis=1)
    kernel = make_kernels(SPLIT_K).k
    out, = run_kernel(kernel, [a, b], [((128, 64), np.dtype(np.float32))])
    assert result_cmp(golden, out, 0.001, compared=golden.nbytes)
    np.testing.assert_array_equal(out, golden)


def test_tmatmul_acc_four_operand_form_needs_acc_in_to_be_acc(make_kernels):
    """pto-isa's TMATMUL_ACC(cOut, cIn, a, b) with another Acc tile as cIn is refused: A2/A3
    accumulates into cOut and never reads cIn (TMATMUL_ACC_IMPL, include/pto/npu/a2a3/
    TMatmul.hpp), so a different cIn would silently be ignored."""
    kernel = make_kernels("""
@pto.kernel
def k(O):
    with pto.cube():
        a = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        b = pto.alloc_tile(16, 16, pto.float16, loc=pto.Right)
        c = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        d = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tmatmul_acc(c, d, a, b)
""").k
    with pytest.raises(pto.CompileError, match="acc_in must be acc itself"):
        kernel.program_for((pto.alloc_tensor(16 * 16 * 4),))
