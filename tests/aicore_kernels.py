"""AI-core kernels that more than one test file runs (kernels need a real source file)."""
import pypto_sim as pto


@pto.kernel
def cube_then_vector(A, B, W, Out):
    """The cube computes S = A @ B into GM; each vector core takes half the rows, adds 1 and
    stores them: data handed over through GM, ordered by a cross-core flag."""
    with pto.cube():
        a_l1 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Mat)
        b_l1 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Mat)
        a_l0 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Left)
        b_l0 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(32, 32, pto.float32, loc=pto.Acc)
        pto.tload(a_l1, A)
        pto.tload(b_l1, B)
        pto.tmov(a_l0, a_l1)
        pto.tmov(b_l0, b_l1)
        pto.tmatmul(acc, a_l0, b_l0)
        pto.tstore(W, acc)
        pto.cross_core_set_flag(1)
    with pto.vector():
        half = pto.get_subblock_id() * 16 * 32
        s = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
        pto.cross_core_wait_flag(1)
        pto.tload(s, W + half)
        pto.tadds(s, s, 1.0)
        pto.tstore(Out + half, s)
