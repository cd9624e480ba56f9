"""What tests/test_ptoisa_st_*.py share: pto-isa's comparison of an output with its golden
(ResultCmp, tests/common/test_common.h of hw-native-sys/pto-isa at 3186c381) and a one-block
launch of a ported kernel. The ports compute each case's golden in numpy from its gen_data.py
(at the same commit); a case's data come from ``np.random.RandomState(seed)`` with the seed of
its gen_data.py, one generator per case (gen_data.py runs its cases from one generator in
order, so later cases' numbers differ from its files; their distribution does not).

Not ported with the instructions here: TMATMULTest.case_bias_1, case_bias_2, case_bias_5,
case_bias_gemm and case_bf16_bias_1 TLOAD straight into a Bias tile, which A2/A3's TLOAD does
not do (CheckNormalTileData's static_assert "Fix: Dst TileType must be Vec or Mat!",
include/pto/common/arch/memory/tload_common.hpp line 312); pypto_sim refuses it with that
citation (tests/test_aicore_legality.py). On A2/A3 a bias goes GM -> Mat -> Bias (TMOV)."""
import numpy as np

import pypto_sim as pto

PTO_ISA = "hw-native-sys/pto-isa tests/cpu/st/testcase at 3186c381"


def result_cmp(golden, actual, eps, compared=None) -> bool:
    """ResultCmp(golden, actual, eps): an element is wrong when it differs by more than eps
    both absolutely and relative to the golden, or one side is NaN and the other not; the
    output passes when at most int(compared * eps) elements are wrong and at most 1000 golden
    nonzeros came out zero. ``compared`` is the length of the vectors the C++ test compares:
    the st tests size them in bytes (``std::vector<T> golden(fileSize)``) and read only the
    output's bytes into them, so the elements past the output are zero in both and only
    raise the threshold; it defaults to the output's length."""
    exp = np.asarray(golden, np.float32).ravel()
    act = np.asarray(actual, np.float32).ravel()
    assert exp.shape == act.shape, (exp.shape, act.shape)
    compared = exp.size if compared is None else compared
    with np.errstate(all="ignore"):
        diff = np.abs(exp - act)
        rel = np.abs(diff / exp)
    wrong = ((diff > eps) & (rel > eps)) | (np.isnan(exp) != np.isnan(act))
    zeros = int(np.count_nonzero((np.abs(act) <= 1e-6) & (np.abs(exp) > 1e-6)))
    return int(np.count_nonzero(wrong)) <= int(compared * eps) and zeros <= 1000


def run_kernel(kernel, inputs, outputs, *scalars):
    """Launch kernel(*inputs, *outputs, *scalars) on one AI core: inputs are numpy arrays copied
    to GM, outputs (shape, dtype) start as zeros (the st tests memset them); returns the
    outputs."""
    def tensor(a):
        t = pto.alloc_tensor(a.nbytes, getattr(pto, a.dtype.name))
        pto.memcpy_h2d(t, a)
        return t
    ins = [tensor(np.ascontiguousarray(a)) for a in inputs]
    outs = [tensor(np.zeros(shape, dtype)) for shape, dtype in outputs]
    pto.launch(kernel, grid=(1,), args=(*ins, *outs, *scalars))
    pto.sync()
    got = []
    for t, (shape, dtype) in zip(outs, outputs):
        a = np.empty(shape, dtype)
        pto.memcpy_d2h(a, t)
        got.append(a)
    return got


# pto-isa's tests name dtypes by their C++ types (case_half_..., TEST_F params); here pypto's
PTOISA_DTYPES = {"float": "float32", "half": "float16", "bf16": "bfloat16", "int8": "int8", "uint8": "uint8",
                 "int16": "int16", "uint16": "uint16", "int32": "int32", "uint32": "uint32"}
# the MTE2 -> V and V -> MTE3 flag pairs of a one-op vector kernel (pto-isa's kernels write them)
FLAGS_IN = """pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)"""
FLAGS_OUT = """pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)"""


def run_arrays(kernel, arrays, *scalars, read=-1):
    """Launch kernel(*arrays, *scalars) on one AI core with each numpy array copied to a GM
    tensor of its dtype (an output as main.cpp memsets it, or with the data main.cpp copies
    there, which the kernel may first load); returns arrays[read]'s tensor after the launch."""
    tensors = []
    for a in arrays:
        a = np.ascontiguousarray(a)
        t = pto.alloc_tensor(a.nbytes, getattr(pto, a.dtype.name))
        pto.memcpy_h2d(t, a)
        tensors.append(t)
    pto.launch(kernel, grid=(1,), args=(*tensors, *scalars))
    pto.sync()
    got = np.empty_like(arrays[read])
    pto.memcpy_d2h(got, tensors[read])
    return got


def as_words(a, dtype):
    """The bytes of a as an array of dtype (pto-isa's tests read every output file into a
    std::vector of some type, whatever the kernel wrote)."""
    return np.ascontiguousarray(a).ravel().view(np.uint8).view(dtype)


# A matmul into an Acc tile as pto-isa's Acc kernels write it (runMATMUL): TLOAD A and B into Mat
# tiles of their valid regions, TMOV to Left / Right, TMATMUL into the Acc tile c, each step
# behind its flag; what follows reads c after the M -> FIX flag
MATMUL_TO_ACC = """
@pto.kernel
def k(A, B, O):
    with pto.cube():
        a_mat = pto.alloc_tile({M}, {K}, pto.{src}, loc=pto.Mat, valid=({vm}, {vk}))
        b_mat = pto.alloc_tile({K}, {N}, pto.{src}, loc=pto.Mat, valid=({vk}, {vn}))
        a = pto.alloc_tile({M}, {K}, pto.{src}, loc=pto.Left, valid=({vm}, {vk}))
        b = pto.alloc_tile({K}, {N}, pto.{src}, loc=pto.Right, valid=({vk}, {vn}))
        c = pto.alloc_tile({M}, {N}, pto.{acc}, loc=pto.Acc, valid=({vm}, {vn}))
        pto.tload(a_mat, A)
        pto.tload(b_mat, B)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.tmov(a, a_mat)
        pto.tmov(b, b_mat)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(c, a, b)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
"""

# TSTORE from Acc (pto-isa's tstore_acc2gm kernels, CPU and on-device alike): the matmul, then
# TSTORE with the case's layout, stride, AtomicType and ReluPreMode ({store}: ", layout=...,
# atomic=..."), behind its flag
STORE_ACC = MATMUL_TO_ACC + """        pto.tstore(O, c{store})
        pto.set_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_FIX, pto.PIPE_M, 0)
"""




# tstore_acc2gm's quantizing ports (tests/test_ptoisa_npu_store_acc_quant.py, _quant_vector.py): an Acc tile's
# shape and its store's layout and stride, and gen_data.py's last steps on a golden
def round_up(v, a=16):
    """v rounded up to a multiple of a (the kernels' (v + a - 1) / a * a)."""
    return -(-v // a) * a


def c0_of(dtype):
    """A 32-byte block's elements of the dtype named (GetNDC1HWC0C0Size, gen_data.py's c0 for
    int8 / uint8 NZ)."""
    return 32 // getattr(pto, dtype).itemsize


def acc_store(out, src, m, n, layout, shape):
    """(the Acc tile's Cols, the tstore's layout= and stride=) of a tstore_acc2gm case: out and
    src dtype names, validM x validN, its GM layout ('nd', 'nz', 'ndc1hwc0') and shape."""
    if layout == "nd":
        return round_up(n), ""
    if layout == "nz":          # Acc (Shape2 x Shape3) x (Shape0 x Shape1 x Shape4), runs Shape2 x 16 x C0 apart
        g0, g1, g2, g3, g4 = shape
        assert (g2 * g3, g0 * g1 * g4, g4) == (m, n, c0_of(out))
        return round_up(n), f", layout=pto.NZ, stride={g2 * g3 * g4}"
    n_dim, d_dim, c1_dim, h_dim, w_dim = shape      # N rounded to max(16, 32 / sizeof(src)), runs H x W x C0 apart
    assert n_dim == 1 and (h_dim * w_dim, d_dim * c1_dim * c0_of(out)) == (m, n)
    stride = h_dim * w_dim * c0_of(out)
    return round_up(n, max(16, 32 // getattr(pto, src).itemsize)), f", layout=pto.NZ, stride={stride}"


def quant_m1(words):
    """The m1 of each uint64 quant word as pto-isa's gen_data.py (extract_quant_params) reads it:
    bits 31:13 as a sign (bit 18 of the field), 8 exponent and 10 mantissa bits, (-1)^s x
    (1 + m / 1024) x 2^(e - 127), as float32. (tstore_acc2gm's gen_data.py masks the field with
    0xFFFFF, tpushpop_fixpipe's with 0x7FFFF: the same m1, bit 19 is never read.)"""
    bits = (words >> np.uint64(13)) & np.uint64(0x7FFFF)
    sign, exponent, mantissa = ((bits >> np.uint64(18)) & np.uint64(1), (bits >> np.uint64(10)) & np.uint64(0xFF),
                                bits & np.uint64(0x3FF))
    return ((-1.0) ** sign * (1 + mantissa / 1024) * 2.0 ** (exponent.astype(np.int64) - 127)).astype(np.float32)


def arranged(golden, out, m, n, layout, shape, relu):
    """tstore_acc2gm gen_golden_data's last steps: the GM layout's order (format 2: NZ, c0 32 for
    int8 / uint8, else 16; format 4: nz_matrix_to_ndc1hwc0), then max(golden, 0) with relu_mode 1."""
    if layout == "nz":
        c0 = c0_of(out)
        golden = golden.reshape(m // 16, 16, n // c0, c0).transpose(2, 0, 1, 3)
    elif layout == "ndc1hwc0":
        n_dim, d_dim, c1_dim, h_dim, w_dim = shape
        golden = golden.reshape(n_dim, h_dim, w_dim, d_dim, c1_dim, c0_of(out)).transpose(0, 3, 4, 1, 2, 5)
    if relu:
        golden = np.maximum(golden, 0)
    return np.ascontiguousarray(golden)


# The fused multiply-adds' one-block kernel (TMULADDDST, TFUSEDMULADD, TFUSEDMULADDRELU,
# TSUBRELU; pto-isa's CPU and on-device suites write it alike): src0, src1 and dst tiles of their
# own shapes with one valid region, dst loaded from GM first (the ops read it), rows at each
# tensor's own stride.
FUSED = """
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt}, valid=({vr}, {vc}))
            src0 = pto.alloc_tile({ar}, {ac}, pto.{dt}, valid=({vr}, {vc}))
            src1 = pto.alloc_tile({br}, {bc}, pto.{dt}, valid=({vr}, {vc}))
            pto.tload(src0, A, stride={ac})
            pto.tload(src1, B, stride={bc})
            pto.tload(dst, O, stride={dc})
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.{op}(dst, src0, src1)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst, stride={dc})
"""

# The one-block kernels of TMULS and TSEL as pto-isa's st kernels write them; the integer
# and the float ports format them with their shapes and dtypes.
TMULS = """
@pto.kernel
def k(S, O, scalar):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(dst, O)
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tmuls(dst, src, scalar)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""

TSEL = """
@pto.kernel
def k(M, A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile({r}, {c}, pto.{dt})
            b = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            mask = pto.alloc_tile({r}, {mc}, pto.uint8)
            tmp = pto.alloc_tile(1, 32, pto.uint8)
            pto.tload(a, A)
            pto.tload(b, B)
            pto.tload(mask, M)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tsel(dst, mask, a, b, tmp)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


def tsel_golden(mask, a, b, rows, cols):
    """gen_data.py's gen_golden_process_byte: element (i, j * 8 + k) is input0's where bit k of
    mask byte (i, j) is set, else input1's."""
    mask_cols = (cols + 7) // 8
    golden = np.zeros(rows * cols, a.dtype)
    for i in range(rows):
        for j in range(mask_cols):
            for k in range(8):
                idx = i * cols + j * 8 + k
                if j * 8 + k < cols:
                    golden[idx] = a[idx] if (mask[i * mask_cols + j] >> k) & 1 else b[idx]
    return golden


# A binary elementwise op of one-block st kernels (TADD, TSUB, TMUL, TMAX, TDIV, ...): TLOAD
# both sources, the op, TSTORE.
BINARY = """
@pto.kernel
def k(A, B, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            a = pto.alloc_tile({r}, {c}, pto.{dt})
            b = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({r}, {c}, pto.{dt})
            pto.tload(a, A)
            pto.tload(b, B)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.{op}(dst, a, b)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


# pto-isa's MaskPattern (include/pto/common/type.hpp): (the first column / row it picks, its period)
MASK_PATTERNS = {"P0101": (0, 2), "P1010": (1, 2), "P0001": (0, 4), "P0010": (1, 4), "P0100": (2, 4),
                 "P1000": (3, 4), "P1111": (0, 1)}

# TSCATTER<MaskPattern, ScatterAxis>(dst, src) between whole tiles, as pto-isa's CPU and on-device
# kernels both write it (runTScatterMasked / runTScatterMask / runTColScatterMask): load, flag, the
# scatter, flag, store
SCATTER_MASK = """
@pto.kernel
def k(S, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            src = pto.alloc_tile({r}, {c}, pto.{dt})
            dst = pto.alloc_tile({dr}, {dc}, pto.{dt})
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.tscatter(dst, src, "{p}", axis="{axis}")
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


def tgatherb_golden(dtype, ds1, ds0, ss1, ss0):
    """tgatherb's gen_data.py gen_golden_data_tgatherb (the CPU and on-device suites' are the same):
    (src, offset, golden). src = arange(srcS1 x srcS0) cast to the dtype (the narrow integers
    wrap), offset[i] = 32 i over the dstS1 x dstS0 / (32 / size) offsets, golden block i = the 32
    bytes of src at offset[i]."""
    size = np.dtype(dtype).itemsize
    block = 32 // size
    n_off = ds1 * (ds0 // block)
    src = np.arange(ss1 * ss0).astype(dtype)
    offset = (np.arange(n_off) * 32).astype(np.uint32)
    golden = np.concatenate([src[o // size:o // size + block] for o in offset]).astype(dtype)
    return src.reshape(ss1, ss0), offset, golden
