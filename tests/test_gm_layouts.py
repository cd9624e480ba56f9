"""GM layouts of tload / tstore (isa/gm_layouts.py): pto-isa's GlobalTensor ND, DN, NZ and
FRACTAL_Z on the two-dimensional view a tile transfer moves. Each test builds the GM tensor
element by element from the layout's address formula, so the expected values come from the
formula, not from the simulator's reorderings."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.errors import CompileError, OutOfBoundsError
from pypto_sim.isa import gm_layouts
from pypto_sim.exec.compiled import gm_layout as compiled

from engine_compare import both_executors, dev_array


def address(layout, r, c, stride, c0):
    """The docstring's formula: GM element of view element (r, c)."""
    return {"ND": r * stride + c, "DN": c * stride + r,
            "NZ": (c // c0) * stride + r * c0 + c % c0,
            "FRACTAL_Z": (r // c0) * stride + c * c0 + r % c0}[layout]


def laid_out(tile, layout, stride, c0, size):
    """A GM array of size elements holding tile in layout (the rest NaN)."""
    g = np.full(size, np.nan, tile.dtype)
    for r in range(tile.shape[0]):
        for c in range(tile.shape[1]):
            g[address(layout, r, c, stride, c0)] = tile[r, c]
    return g


def test_each_layout_is_runs_of_contiguous_elements():
    """A 32 x 48 float16 view (c0 = 16): ND is 32 runs of 48; DN 48 runs of 32; NZ 48 / 16 = 3
    column blocks of 32 x 16 = 512; FRACTAL_Z 32 / 16 = 2 row blocks of 48 x 16 = 768. The
    stride passes through; a dense tensor's stride is the run. NZ of 40 columns (not whole
    blocks) and an unknown layout hold nothing."""
    assert gm_layouts.gm_window(gm_layouts.ND, 32, 48, 100, 16) == (32, 48, 100)
    assert gm_layouts.gm_window(gm_layouts.DN, 32, 48, 100, 16) == (48, 32, 100)
    assert gm_layouts.gm_window(gm_layouts.NZ, 32, 48, 1000, 16) == (3, 512, 1000)
    assert gm_layouts.gm_window(gm_layouts.FRACTAL_Z, 32, 48, 1000, 16) == (2, 768, 1000)
    assert [gm_layouts.default_stride(k, 32, 48, 16) for k in range(4)] == [48, 32, 512, 768]
    assert gm_layouts.gm_window(gm_layouts.NZ, 32, 40, 1000, 16) == (0, 0, 0)
    assert gm_layouts.gm_window(7, 32, 48, 100, 16) == (0, 0, 0)
    assert gm_layouts.c0_of(2) == 16 and gm_layouts.c0_of(4) == 8


@pytest.mark.parametrize("layout", gm_layouts.LAYOUTS)
def test_both_reorderings_follow_the_address_formula(layout):
    """A 16 x 32 view (c0 = 8) laid out densely: the window read run after run is the GM array
    itself; numpy's to_tile / to_window and the compiled loops both map it to the tile and
    back."""
    rows, cols, c0 = 16, 32, 8
    code = gm_layouts.LAYOUTS.index(layout)
    tile = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)
    stride = gm_layouts.default_stride(code, rows, cols, c0)
    win = laid_out(tile, layout, stride, c0, rows * cols)
    np.testing.assert_array_equal(gm_layouts.to_tile(win, code, rows, cols, c0), tile.ravel())
    np.testing.assert_array_equal(gm_layouts.to_window(tile.ravel(), code, rows, cols, c0), win)
    out = np.empty(rows * cols)
    compiled.scatter_window(out, 0, cols, win, code, rows, cols, c0)       # a dense tile
    np.testing.assert_array_equal(out, tile.ravel())
    compiled.tile_to_window(out, tile.ravel(), code, rows, cols, c0)
    np.testing.assert_array_equal(out, win)


def two_tensors():
    """X and O for a compile: two 4096-element float16 tensors."""
    return pto.alloc_tensor(8192, pto.float16), pto.alloc_tensor(8192, pto.float16)


# a Vec tile moves in its own layout: ND with RowMajor, DN with ColMajor (A2/A3's TLOAD /
# TSTORE static_asserts); TILE_LAYOUT names it
LOAD_STORE = """
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 32, pto.float16, loc=pto.Vec, layout=pto.TILE_LAYOUT)
            pto.tload(t, X + 3, stride=STRIDE_IN, layout=pto.LAYOUT_IN)
            pto.tstore(O + 5, t, stride=STRIDE_OUT, layout=pto.LAYOUT_OUT)
"""
TILE_LAYOUT = {"ND": "RowMajor", "DN": "ColMajor"}


def load_store(s_in, s_out, layout="DN"):
    """LOAD_STORE moving a tile of `layout`'s Vec layout from and to GM in that layout."""
    return (LOAD_STORE.replace("STRIDE_IN", str(s_in)).replace("STRIDE_OUT", str(s_out))
            .replace("LAYOUT_IN", layout).replace("LAYOUT_OUT", layout).replace("TILE_LAYOUT", TILE_LAYOUT[layout]))


@pytest.mark.parametrize("layout", ["ND", "DN"])
def test_a_vec_tile_loads_from_its_layout_and_stores_to_it(make_kernels, layout):
    """A 16 x 32 float16 Vec tile (c0 = 16) of layout's own tile layout (RowMajor for ND,
    ColMajor for DN) loaded from X at element 3 with a padded stride (the dense one + 16),
    stored at element 5 of O with the stride + 8: the GM image is the formula's, on both
    executors, in timing and functional mode, and elements between the runs are left as they
    were."""
    rows, cols, c0 = 16, 32, 16
    code = gm_layouts.LAYOUTS.index(layout)
    stride = gm_layouts.default_stride(code, rows, cols, c0) + 16
    tile = (np.arange(rows * cols) % 251 - 125).astype(np.float16).reshape(rows, cols)
    size = 2048                   # past every window here: DN's 31 x 40 + 16, ND's 15 x 56 + 32
    for src, dst, s_in, s_out in ((layout, layout, stride, stride + 8),):
        x = np.concatenate([np.zeros(3, np.float16), laid_out(tile, src, s_in, c0, size)])
        o = np.full(size + 5, -7, np.float16)
        mod = make_kernels(load_store(s_in, s_out, layout))
        X, O = dev_array(np.nan_to_num(x, nan=-9), pto.float16), dev_array(o, pto.float16)
        want = o.copy()
        for r in range(rows):
            for c in range(cols):
                want[5 + address(dst, r, c, s_out, c0)] = tile[r, c]
        images = both_executors(mod.k, (1, 1, 1), (X, O))
        for key, image in images.items():
            got = image[O.alloc.byte_addr:O.alloc.byte_addr + want.nbytes].view(np.float16)
            np.testing.assert_array_equal(got, want, err_msg=f"{src} -> {dst} {key}")


@pytest.mark.parametrize("tile_layout, gm, call", [
    ("RowMajor", "DN", "tload"), ("RowMajor", "NZ", "tload"), ("RowMajor", "FRACTAL_Z", "tload"),
    ("ColMajor", "ND", "tload"), ("RowMajor", "DN", "tstore"), ("ColMajor", "ND", "tstore")])
def test_a_vec_tile_in_another_layout_than_its_own_is_a_compile_error(make_kernels, tile_layout, gm, call):
    """A2/A3 loads a Vec tile ND2ND / DN2DN / NZ2NZ only ("Fix: TLOAD(VecTile, GlobalTensor)
    only support ND2ND/DN2DN/NZ2NZ!", tload_common.hpp) and stores one alike, a one-row or
    one-column tile excepted (tstore_common.hpp): a 16 x 32 tile across layouts is refused,
    naming the tile, both layouts and the rule."""
    inn, out = (gm, TILE_LAYOUT_OF[tile_layout]) if call == "tload" else (TILE_LAYOUT_OF[tile_layout], gm)
    src = (LOAD_STORE.replace("STRIDE_IN", "512").replace("STRIDE_OUT", "512").replace("LAYOUT_IN", inn)
           .replace("LAYOUT_OUT", out).replace("TILE_LAYOUT", tile_layout))
    with pytest.raises(CompileError, match=rf"pto.{call}: 't' is a {tile_layout} Vec tile and the GM layout is "
                                           rf"{gm}; A2/A3 moves a Vec tile in its own layout only"):
        make_kernels(src).k.program_for(two_tensors())


TILE_LAYOUT_OF = {"RowMajor": "ND", "ColMajor": "DN"}


def test_a_one_column_vec_tile_stores_to_nd(make_kernels):
    """tstore_common.hpp's special case: a one-column ColMajor tile (a row reduction's result)
    stores to ND, its 16 values one after another."""
    mod = make_kernels("""
@pto.kernel
def k(X, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(16, 1, pto.float16, loc=pto.Vec, layout=pto.ColMajor)
            pto.tload(t, X, layout=pto.DN)
            pto.tstore(O, t)
""")
    x = np.arange(16, dtype=np.float16)
    X, O = dev_array(x, pto.float16), pto.alloc_tensor(32, pto.float16)
    pto.launch(mod.k, grid=(1,), args=(X, O))
    got = np.zeros(16, np.float16)
    pto.memcpy_d2h(got, O)
    np.testing.assert_array_equal(got, x)


MATMUL = """
@pto.kernel(sync="manual")
def k(A, B, C):
    with pto.cube():
        a1 = pto.alloc_tile(16, 32, pto.float16, loc=pto.Mat)
        b1 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Mat)
        a0 = pto.alloc_tile(16, 32, pto.float16, loc=pto.Left)
        b0 = pto.alloc_tile(32, 32, pto.float16, loc=pto.Right)
        acc = pto.alloc_tile(16, 32, pto.float32, loc=pto.Acc)
        pto.tload(a1, A)
        pto.tload(b1, B, layout=pto.LAYOUT_B)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.tmov(a0, a1)
        pto.tmov(b0, b1)
        pto.set_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.wait_flag(pto.PIPE_MTE1, pto.PIPE_M, 0)
        pto.tmatmul(acc, a0, b0)
        pto.set_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.wait_flag(pto.PIPE_M, pto.PIPE_FIX, 0)
        pto.tstore(C, acc, layout=pto.NZ)
"""


@pytest.mark.parametrize("layout_b", ["DN", "FRACTAL_Z"])
def test_a_matmul_takes_b_as_dn_or_fractal_z_and_stores_nz(make_kernels, layout_b):
    """C = A @ B for A 16 x 32, B 32 x 32 in layout_b (DN: B^T row-major, as pto-isa's
    gemm_performance; FRACTAL_Z: conv2d_forward's weights), C stored from Acc as float16 NZ
    (column blocks of 16 x 16: conv2d_forward's NC1HWC0 output): C's block j holds columns
    16j..16j+15 row after row. Small integers, so every product is exact."""
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (16, 32)).astype(np.float16)
    b = rng.integers(-3, 4, (32, 32)).astype(np.float16)
    code = gm_layouts.LAYOUTS.index(layout_b)
    bg = laid_out(b, layout_b, gm_layouts.default_stride(code, 32, 32, 16), 16, 32 * 32)
    mod = make_kernels(MATMUL.replace("LAYOUT_B", layout_b))
    A, B = dev_array(a, pto.float16), dev_array(bg, pto.float16)
    C = pto.alloc_tensor(16 * 32 * 2, pto.float16)
    c = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    want = np.concatenate([c[:, :16].ravel(), c[:, 16:].ravel()])
    for key, image in both_executors(mod.k, (1, 1, 1), (A, B, C)).items():
        np.testing.assert_array_equal(image[C.alloc.byte_addr:C.alloc.byte_addr + want.nbytes].view(np.float16), want,
                                      err_msg=str(key))


RUNTIME_REGION = """
@pto.kernel
def k(X, O, n):
    with pto.cube():
        t = pto.alloc_tile(16, 32, pto.float16, loc=pto.Mat, valid=(16, n))
        pto.tload(t, X, STRIDE layout=pto.NZ)
"""


def test_an_nz_view_of_partial_blocks_is_a_compile_error(make_kernels):
    """NZ of a 16 x 24 valid region of a float16 tile: 24 columns are not whole 16-column
    blocks."""
    src = RUNTIME_REGION.replace("valid=(16, n)", "valid=(16, 24)").replace("STRIDE ", "stride=512, ")
    with pytest.raises(CompileError, match=r"tile 't', 2-byte elements: 16 x 24 is not a NZ view: it needs cols a multiple of C0 = 16"):
        make_kernels(src).k.program_for((*two_tensors(), 24))


def test_an_unknown_layout_is_a_compile_error(make_kernels):
    """layout='NHWC' names no pto-isa GlobalTensor layout here."""
    src = load_store(32, 32, "ND").replace("layout=pto.ND)", "layout='NHWC')", 1)
    with pytest.raises(CompileError, match=r"layout must be one of pto.ND, pto.DN, pto.NZ, pto.FRACTAL_Z"):
        make_kernels(src).k.program_for(two_tensors())


def test_a_layout_window_past_the_tensor_names_its_runs(make_kernels):
    """DN 16 x 32 from element 3 with stride 16 + 16 = 32: its last run (column 31) ends at
    element 3 + 31 x 32 + 16 - 1 = 1010, past a 1000-element tensor."""
    mod = make_kernels(load_store(32, 32))
    X, O = pto.alloc_tensor(2000, pto.float16), pto.alloc_tensor(2000, pto.float16)
    pto.memcpy_h2d(X, np.zeros(1000, np.float16))
    with pytest.raises(OutOfBoundsError, match=r"rows=16 cols=32 DN \(32 runs of 16\) stride=32 from element 3 "
                                               r"reach element 1010 of 'X', which has 1000"):
        pto.launch(mod.k, grid=(1,), args=(X, O))
        pto.sync()




def test_a_run_time_region_needs_a_stride_and_whole_blocks(make_kernels):
    """A valid region of n columns, n known at launch only: NZ has no default stride for it (a
    compile error), and with stride=512 a launch with n = 24 (not whole 16-column blocks) stops
    at the tload, naming the region and what the layout needs."""
    X, O = two_tensors()
    with pytest.raises(CompileError, match=r"a NZ transfer of a run-time valid region needs stride="):
        make_kernels(RUNTIME_REGION.replace("STRIDE ", "")).k.program_for((X, O, 32))
    mod = make_kernels(RUNTIME_REGION.replace("STRIDE ", "stride=512, "))
    pto.memcpy_h2d(X, np.zeros(4096, np.float16))
    with pytest.raises(OutOfBoundsError, match=r"TLOAD at line 7 on AIC of block \(0, 0, 0\): 16 x 24 is not "
                                               r"a NZ view: it needs cols a multiple of C0 = 16"):
        pto.launch(mod.k, grid=(1,), args=(X, O, 24))
        pto.sync()


@pytest.mark.parametrize("dtype, layout, message", [
    ("float16", "pto.DN", "the fixpipe writes an Acc tile to GM as ND or NZ, not DN"),
    ("float16", "pto.FRACTAL_Z", "the fixpipe writes an Acc tile to GM as ND or NZ, not FRACTAL_Z"),
])
def test_the_fixpipe_stores_nd_or_nz_only(make_kernels, dtype, layout, message):
    """pto-isa's fixpipe stores Acc as ND or NZ (TStore.hpp): another layout is a compile error."""
    src = MATMUL.replace("pto.tstore(C, acc, layout=pto.NZ)", f"pto.tstore(C, acc, layout={layout})") \
        .replace("LAYOUT_B", "ND")
    C = pto.alloc_tensor(16 * 32 * 4, getattr(pto, dtype))
    with pytest.raises(CompileError, match=message):
        make_kernels(src).k.program_for((pto.alloc_tensor(1024, pto.float16), pto.alloc_tensor(2048, pto.float16), C))


def test_a_float32_nz_store_from_acc_is_the_fixpipes_channel_split(make_kernels):
    """A float32 Acc stored as float32 NZ: TStoreAccNz2nz turns channel split on when the NZ's
    last dimension is 8, writing 8-element (32-byte) blocks, which is this NZ for a 4-byte dtype:
    C's block j holds columns 8j..8j+7 row after row (four blocks for 32 columns)."""
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (16, 32)).astype(np.float16)
    b = rng.integers(-3, 4, (32, 32)).astype(np.float16)
    mod = make_kernels(MATMUL.replace("LAYOUT_B", "ND"))
    A, B = dev_array(a, pto.float16), dev_array(b, pto.float16)
    C = pto.alloc_tensor(16 * 32 * 4, pto.float32)
    c = a.astype(np.float32) @ b.astype(np.float32)
    want = np.concatenate([c[:, 8 * j:8 * j + 8].ravel() for j in range(4)])
    for key, image in both_executors(mod.k, (1, 1, 1), (A, B, C)).items():
        np.testing.assert_array_equal(image[C.alloc.byte_addr:C.alloc.byte_addr + want.nbytes].view(np.float32), want,
                                      err_msg=str(key))


def test_an_int32_nz_store_from_acc_is_a_compile_error(make_kernels):
    """The fixpipe writes int32 NZ in 16-element (64-byte) blocks only (TStoreAccNz2nz's
    static_assert), which this NZ's 32-byte blocks are not: a compile error, not another layout."""
    src = MATMUL.replace("LAYOUT_B", "ND").replace("pto.float16", "pto.int8").replace("pto.float32", "pto.int32")
    with pytest.raises(CompileError, match=r"an Acc tile stored as int32 NZ is written in 16-element \(64-byte\)"):
        make_kernels(src).k.program_for((pto.alloc_tensor(512, pto.int8), pto.alloc_tensor(1024, pto.int8),
                                         pto.alloc_tensor(2048, pto.int32)))


STRIDED = """
@pto.kernel
def k(X, O, s):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            t = pto.alloc_tile(4, 32, pto.float16, loc=pto.Vec)
            pto.tload(t, X + 64, stride=STRIDE)
            pto.tstore(O, t)
"""


@pytest.mark.parametrize("stride", [-32, 0, 31])
def test_a_stride_shorter_than_a_run_is_an_error_not_overlapping_rows(make_kernels, stride):
    """4 rows of 32 from element 64 with stride -32, 0 or 31: the rows would go backwards or
    overlap (a DMA's gap between bursts is unsigned). A constant stride is a compile error; the
    same stride passed at launch stops the tload, naming it; stride 32 is the dense tensor."""
    X, O = two_tensors()
    with pytest.raises(CompileError, match=rf"stride {stride} is shorter than the rows of 32 elements \(4 x 32\)"):
        make_kernels(STRIDED.replace("STRIDE", str(stride))).k.program_for((X, O, 0))
    mod = make_kernels(STRIDED.replace("STRIDE", "s"))
    pto.memcpy_h2d(X, np.arange(4096).astype(np.float16))
    with pytest.raises(OutOfBoundsError, match=rf"TLOAD at line 8 on AIV0 of block \(0, 0, 0\): stride {stride} is "
                                               r"shorter than the rows of 32 elements \(4 x 32\)"):
        pto.launch(mod.k, grid=(1,), args=(X, O, stride))
        pto.sync()
    pto.launch(mod.k, grid=(1,), args=(X, O, 32))
    pto.sync()
    got = np.empty(4096, np.float16)
    pto.memcpy_d2h(got, O)
    np.testing.assert_array_equal(got[:128], np.arange(64, 192))


ARTICLE_STRIDED = """
@pto.kernel
def k(X, O, s):
    t = pto.alloc_local(128, pto.float32)
    pto.async_load(t, X + 64, rows=4, cols=32, stride=STRIDE)
    pto.wait_all()
    pto.store(O, t, rows=4, cols=32, stride=32)
"""


@pytest.mark.parametrize("mode", ["timing", "functional"])
@pytest.mark.parametrize("stride", [-64, 8])
def test_the_article_tile_transfer_takes_a_pitch_of_at_least_a_row_too(make_kernels, mode, stride):
    """async_load of 4 rows of 32 floats with stride -64 (rows 2 and 3 before the tensor,
    which the bounds check used to miss) or 8 (overlapping rows): a compile error when the
    stride is a constant, a launch error when it comes at launch, in either mode (a pitch of at
    least a row, as cudaMemcpy2D's)."""
    X, O = pto.alloc_tensor(8192, pto.float32), pto.alloc_tensor(8192, pto.float32)
    with pytest.raises(CompileError, match=rf"stride {stride} is shorter than the rows of 32 elements"):
        make_kernels(ARTICLE_STRIDED.replace("STRIDE", str(stride))).k.program_for((X, O, 0))
    mod = make_kernels(ARTICLE_STRIDED.replace("STRIDE", "s"))
    pto.memcpy_h2d(X, np.zeros(2048, np.float32))
    with pytest.raises(OutOfBoundsError, match=f"stride {stride} is shorter than the rows of 32 elements"):
        pto.launch(mod.k, grid=(1,), block=(32,), args=(X, O, stride), mode=mode)
        pto.sync()


def test_a_fractional_stride_is_refused_as_a_float_not_read_as_its_floor(make_kernels):
    """stride=2.5 on a DN load: the error is the float's, not that of a stride of 2."""
    X, O = two_tensors()
    src = load_store(2.5, 32)
    with pytest.raises(CompileError, match=r"the float constant 2.5 cannot be used as int32"):
        make_kernels(src).k.program_for((X, O))


def test_a_listing_names_the_layout_of_a_transfer(make_kernels):
    """The instruction's comment (listings, traces, the debugger) says which GM layout it
    moves, ND saying nothing."""
    prog = make_kernels(load_store(16, 16)).k.program_for(two_tensors())
    comments = [i.comment for i in prog.instrs if i.op in ("TLOAD", "TSTORE")]
    assert comments == ["t <- X (DN)", "O <- t (DN)"]
    prog = make_kernels(load_store(32, 32, "ND")).k.program_for(two_tensors())
    assert [i.comment for i in prog.instrs if i.op in ("TLOAD", "TSTORE")] == ["t <- X", "O <- t"]


def test_initcheck_stops_a_tload_of_elements_never_written(make_kernels):
    """A DN load of 16 x 32 from element 3 of a tensor nothing wrote: check="initcheck" stops
    the TLOAD at its first element, 3 (the window's first run starts there); once the host
    has copied the tensor in, the same launch passes."""
    mod = make_kernels(load_store(16, 16))
    X, O = two_tensors()
    with pytest.raises(pto.UninitializedReadError, match=r"TLOAD at line 8 \(block \(0, 0, 0\) AIV0, cycle \d+\) "
                                                         r"reads X\[3\], which was never written"):
        pto.launch(mod.k, grid=(1,), args=(X, O), check="initcheck")
        pto.sync()
    pto.memcpy_h2d(X, np.zeros(4096, np.float16))
    pto.launch(mod.k, grid=(1,), args=(X, O), check="initcheck")
    pto.sync()
