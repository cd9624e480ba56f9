"""The L1 -> L0 copy rates of latency_tables/ascend910b.toml, held to the one device measurement
of the tile pto-isa's GEMM moves.

CANN's Ascend C sample matmul_high_performance (asc-devkit@82b89a15, README.md, Atlas A2
910B1 at 1.85 GHz) runs an 8192^3 float16 GEMM with the base tile of pto-isa's
gemm_performance, [128, 256, 64], B stored N-major as pto-isa's DN. Each K step copies one
A 128 x 64 (16 KiB) into L0A and one B 64 x 256 (32 KiB) into L0B. msprof measured:

    case 1, 1 core:   aic_mte1_time 52003.703 us x 1850 cycles/us / 262,144 K steps = 367.0
    case 3, 24 cores: aic_mte1_time  2166.824 us x 1850 / 10,922.7 K steps a core   = 367.0

The table's rates are msprof's path maxima for the 910B1 (437.5 and 210.5 GB/s over
1.85 GHz = 236.5 and 113.8 B/cycle), and a TEXTRACT costs 1 + ceil(bytes / rate):

    A to Left:  1 + ceil(16384 / 236.5 = 69.3) =  71
    B to Right: 1 + ceil(32768 / 113.8 = 287.9) = 289     MTE1 a K step: 360 (-1.9%)

hw-native-sys/pypto's small-tile sweep fit (129.7 / 85.4 B/cycle), the previous entries, gives
1 + 127 + 1 + 384 = 513 (+40%)."""
import pypto_sim as pto


@pto.kernel(sync="manual")
def one_k_step(A, B):
    with pto.cube():
        a_mat = pto.alloc_tile(128, 64, pto.float16, loc=pto.Mat)
        b_mat = pto.alloc_tile(64, 256, pto.float16, loc=pto.Mat)
        a = pto.alloc_tile(128, 64, pto.float16, loc=pto.Left)
        b = pto.alloc_tile(64, 256, pto.float16, loc=pto.Right)
        pto.tload(a_mat, A)
        pto.tload(b_mat, B)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.textract(a, a_mat)
        pto.textract(b, b_mat)


def test_one_k_step_of_the_gemm_base_tile_takes_mte1_as_the_device_measured():
    """The module docstring's derivation: 71 + 289 = 360 MTE1 cycles, back to back."""
    A = pto.alloc_tensor(128 * 64 * 2, pto.float16)
    B = pto.alloc_tensor(64 * 256 * 2, pto.float16)
    prof = pto.profile(one_k_step, grid=(1,), args=(A, B))
    extracts = [(e.start, e.end) for e in prof.timeline if e.inst == "TEXTRACT"]
    assert [end - start for start, end in extracts] == [71, 289]
    assert extracts[1][0] == extracts[0][1]
