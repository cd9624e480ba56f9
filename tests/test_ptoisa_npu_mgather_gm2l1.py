"""pto-isa's ON-DEVICE A2/A3 st cases of MGATHER into a Mat (L1) tile (hw-native-sys/pto-isa
tests/npu/a2a3/src/st/testcase/mgather_gm2l1 at 3186c381) in the AI-core API as
mgather_gm2l1_kernel.cpp writes them, on the cube core: MGATHER<Coalesce, Oob>(dstTile,
tableGlobal, idxGlobal[, scratchGlobal]) into an NZ Mat tile (include/pto/npu/a2a3/MGather.hpp
MGATHER_IMPL's Mat branch and its four-operand overload), set/wait MTE2 -> MTE3, then
StoreNzToGm: copy_cbuf_to_gm of ceil(validCol / c0) bursts of validRow 32-byte blocks, the
tile's NZ column blocks one after the other (here pto.tstore(O, dst, layout=pto.NZ): element
(r, c) at (c // c0) x rows x c0 + r x c0 + c % c0). main.cpp memsets the output and the scratch
to 0 and compares ResultCmp<T>(golden, output, 0.0f) over the output's R x C elements (exact;
the bfloat16 cases as the uint16_t words main.cpp launches them with).

- runRowL1 (ROW_TEST, 12 cases): MGatherGm2L1RowImpl, an R x C tile from a TR-row table of C
  columns, the R indices a GM int32 tensor the scalar unit reads; one copy_gm_to_cbuf_multi_nd2nz
  a row; GatherOOB::Zero fills the tile with 0 first (create_cbuf_matrix).
- runElemL1 (ELEM_TEST, 12 cases): MGatherGm2L1ElemImpl, tile(r, c) = table[idx(r, c)] of a
  TS-element table through the GM scratch: zeroed, each element written at its NZ offset, then
  copied whole into the tile. The scratch's words are observable in GM afterwards; the ports
  check them too (the tile's NZ image: the golden, as the header writes it).

gen_data.py, ported: make_table = (arange(1, n + 1) % mod) + 1 as the dtype (mod 251, or the
integer range when smaller; bfloat16's table is those uint16 words); make_idx_random =
rng.integers(0, cap), make_idx_with_oob for the clamp / wrap / zero cases (half, at least one,
from [cap, 2 cap), shuffled); golden_row / golden_elem remap each index as the case's Oob does;
nd_to_nz lays the R x C golden out as the output's NZ blocks. gen_data.py seeds default_rng with
hash(name) & 0xFFFFFFFF, which Python salts per process; the ports seed it with zlib.crc32 of the
case name.

All 24 cases are ported, each with the kernel's own tile shape (the four int32 cases of 8
columns in 16 x 8 Mat tiles: pto-isa's NZ box of a 4-byte type is 16 x 8, pto_tile.hpp InnerCols
= 512 / 16 / sizeof(T); frontend/layout_builtins.fractal_box) and main.cpp's R x C scratch.
"""

import ml_dtypes
import numpy as np
import pytest

import pypto_sim as pto
from mgather_data import make_indices, make_table, remap_golden
from aicore_runs import compile_error_at
from engine_compare import both_executors
from ptoisa_st import result_cmp

# the kernel's dtype -> gen_data.py's numpy dtype (the words main.cpp launches)
HOST = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16, "int32": np.int32,
        "uint32": np.uint32, "int16": np.int16, "uint16": np.uint16, "int8": np.int8, "uint8": np.uint8}

KERNEL = """
@pto.kernel(sync="manual")
def k(O, T, I, S):
    with pto.cube():
        dst = pto.alloc_tile({rows}, {tile_cols}, pto.{dt}, loc=pto.Mat, valid=({rows}, {cols}))
        pto.mgather(dst, T, I, {size}, coalesce='{co}', oob='{oob}'{scratch})
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.tstore(O, dst, layout=pto.NZ)
"""

# (name, dtype, R, C, table rows (row) or elements (elem), oob), as DEFINE_ROW_L1 / DEFINE_ELEM_L1 list them
ROW = [
    ("row_float_16x16_64rows", "float32", 16, 16, 64, "undefined"),
    ("row_half_16x32_64rows", "float16", 16, 32, 64, "undefined"),
    ("row_bfloat16_16x16_64rows", "bfloat16", 16, 16, 64, "undefined"),
    ("row_int32_16x8_32rows", "int32", 16, 8, 32, "undefined"),
    ("row_uint32_16x16_64rows", "uint32", 16, 16, 64, "undefined"),
    ("row_int16_16x16_32rows", "int16", 16, 16, 32, "undefined"),
    ("row_uint16_16x32_48rows", "uint16", 16, 32, 48, "undefined"),
    ("row_int8_16x32_64rows", "int8", 16, 32, 64, "undefined"),
    ("row_uint8_32x32_64rows", "uint8", 32, 32, 64, "undefined"),
    ("row_float_clamp_16x16_8rows", "float32", 16, 16, 8, "clamp"),
    ("row_int32_wrap_16x8_8rows", "int32", 16, 8, 8, "wrap"),
    ("row_half_zero_16x16_8rows", "float16", 16, 16, 8, "zero"),
]
ELEM = [
    ("elem_float_16x16_256size", "float32", 16, 16, 256, "undefined"),
    ("elem_half_16x16_256size", "float16", 16, 16, 256, "undefined"),
    ("elem_bfloat16_16x16_256size", "bfloat16", 16, 16, 256, "undefined"),
    ("elem_int32_16x8_128size", "int32", 16, 8, 128, "undefined"),
    ("elem_uint32_16x16_256size", "uint32", 16, 16, 256, "undefined"),
    ("elem_int16_16x16_256size", "int16", 16, 16, 256, "undefined"),
    ("elem_uint16_16x32_512size", "uint16", 16, 32, 512, "undefined"),
    ("elem_int8_16x32_512size", "int8", 16, 32, 512, "undefined"),
    ("elem_uint8_32x32_1024size", "uint8", 32, 32, 1024, "undefined"),
    ("elem_float_clamp_16x16_64size", "float32", 16, 16, 64, "clamp"),
    ("elem_int32_wrap_16x8_32size", "int32", 16, 8, 32, "wrap"),
    ("elem_half_zero_16x16_64size", "float16", 16, 16, 64, "zero"),
]


def nd_to_nz(arr, c0):
    """gen_data.py nd_to_nz: the R x C array as its C / c0 column blocks of R / 16 fractals of
    16 x c0, one after the other (StoreNzToGm's layout)."""
    r, c = arr.shape
    return arr.reshape(r // 16, 16, c // c0, c0).transpose(2, 0, 1, 3).ravel()


def tensor(a, dtype):
    t = pto.alloc_tensor(a.nbytes, dtype)
    pto.memcpy_h2d(t, a)
    return t


def kernel_for(make_kernels, co, dt, rows, cols, size, oob):
    """The case's kernel: an R x C Mat tile (16 columns for the 8-column int32 cases, valid C)."""
    return make_kernels(KERNEL.format(rows=rows, tile_cols=cols, cols=cols, dt=dt, size=size, co=co,
                                      oob=oob, scratch=", scratch=S" if co == "elem" else "")).k


def case_data(co, name, dt, rows, cols, size, oob):
    """gen_data.py case_row / case_elem: (table, indices, the golden NZ output)."""
    host = HOST[dt]
    if co == "row":
        table = make_table(host, size * cols).reshape(size, cols)
        idx = make_indices(name, (rows, 1), size, oob)
        golden = np.zeros((rows, cols), host)
        for i, raw in enumerate(idx.ravel()):
            r = remap_golden(int(raw), size, oob)
            golden[i] = 0 if r is None else table[r]
    else:
        table = make_table(host, size)
        idx = make_indices(name, (rows, cols), size, oob)
        picks = [remap_golden(int(raw), size, oob) for raw in idx.ravel()]
        golden = np.array([0 if p is None else table[p] for p in picks], host).reshape(rows, cols)
    return table, idx, nd_to_nz(golden, 32 // np.dtype(host).itemsize)


def launch_args(dt, rows, cols, table, idx):
    """main.cpp's buffers: out and scratch of R x C elements memset to 0 (the scratch of the
    16 x 16 tile's 256 elements for the 8-column int32 cases), the table and the indices."""
    kdt = ml_dtypes.bfloat16 if dt == "bfloat16" else HOST[dt]
    out = tensor(np.zeros(rows * cols, kdt), getattr(pto, dt))
    scratch = tensor(np.zeros(rows * cols, kdt), getattr(pto, dt))
    return out, tensor(np.ascontiguousarray(table).view(kdt), getattr(pto, dt)), \
        tensor(np.ascontiguousarray(idx), pto.int32), scratch


def words(t, n, dt):
    out = np.zeros(n, ml_dtypes.bfloat16 if dt == "bfloat16" else HOST[dt])
    pto.memcpy_d2h(out, t)
    return out.view(HOST[dt])


@pytest.mark.parametrize("co, case", [("row", c) for c in ROW] + [("elem", c) for c in ELEM],
                         ids=[f"MGATHERGM2L1Test.case_{c[0]}" for c in ROW + ELEM])
def test_mgather_gm2l1(make_kernels, co, case):
    """gen_data.py's case: the table, R (row) or R x C (elem) indices, the golden's NZ layout;
    MGATHER<Coalesce, Oob> into the Mat tile, StoreNzToGm; ResultCmp exact, under synccheck and
    racecheck (the kernel's own MTE2 -> MTE3 flag orders the store). The element form's scratch
    holds the tile's NZ image: the gathered elements at their NZ offsets, zeros elsewhere."""
    name, dt, rows, cols, size, oob = case
    table, idx, golden = case_data(co, name, dt, rows, cols, size, oob)
    k = kernel_for(make_kernels, co, dt, rows, cols, size, oob)
    out, t, i, scratch = launch_args(dt, rows, cols, table, idx)
    pto.launch(k, grid=(1,), args=(out, t, i, scratch), check=("sync", "race"))
    pto.sync()
    got = words(out, rows * cols, dt)
    assert result_cmp(golden, got, 0.0)
    assert np.array_equal(golden, got)
    if co == "elem" and cols % 16 == 0:
        assert np.array_equal(words(scratch, rows * cols, dt), golden)


@pytest.mark.parametrize("co, case", [("row", ROW[11]), ("elem", ELEM[7])])
def test_both_executors_and_modes_give_the_same_words(make_kernels, co, case):
    """row_half_zero (the zero fill) and elem_int8 (the scratch) in timing and functional mode,
    with the numba and the reference executor: the same device memory, holding the golden."""
    name, dt, rows, cols, size, oob = case
    table, idx, golden = case_data(co, name, dt, rows, cols, size, oob)
    args = launch_args(dt, rows, cols, table, idx)
    images = list(both_executors(kernel_for(make_kernels, co, dt, rows, cols, size, oob), (1,), args).values())
    assert all(np.array_equal(images[0], im) for im in images[1:])
    pto.launch(kernel_for(make_kernels, co, dt, rows, cols, size, oob), grid=(1,), args=args)
    pto.sync()
    assert np.array_equal(words(args[0], rows * cols, dt), golden)


@pytest.mark.parametrize("call, message", [
    ("pto.mgather(m, T, i, 8)", "indices of a Mat destination must be a pointer into a device tensor (GM)"),
    ("pto.mgather(m, T, F, 8)", "indices 'F' holds float32 (\"MGATHER A2/A3 GM->L1 indices must be a GM "
                                "int32_t/uint32_t GlobalTensor.\""),
    ("pto.mgather(m, T, I, 8, coalesce='elem')", "coalesce='elem' into a Mat tile needs scratch="),
    ("pto.mgather(m, T, I, 8, scratch=S)", "the four-operand MGATHER_IMPL runs MGatherGm2L1ElemImpl"),
    ("pto.mgather(m, T, I, 8, coalesce='elem', scratch=H)", "scratch 'H' holds float16 (\"MGATHER A2/A3 GM->L1 "
                                                            "scratch must be a GM GlobalTensor with element type"),
    ("pto.mgather(b, B, I, 8)", "'b' is 32 x 16 int8; the GM -> L1 destination's Cols must be a multiple of C0 (32)"),
    ("pto.mgather(m, H, I, 8)", "'m' holds float32 but the table 'H' holds float16"),
    ("pto.mgather(m, T, I, 8, coalesce='elem', scratch=S, stride=16)", "stride= is the table's row pitch"),
])
def test_mgather_check_gm2l1_static_asserts_are_compile_errors(make_kernels, call, message):
    """MGatherCheckGm2L1's static_asserts (and the overloads' choice of form by their operands)
    as compile errors at the call's line."""
    mod = make_kernels(f'''
@pto.kernel
def bad(T, H, I, F, S, B):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        b = pto.alloc_tile(32, 16, pto.int8, loc=pto.Mat, layout=pto.ColMajor)
        i = pto.alloc_tile(16, 16, pto.int32, loc=pto.Mat)
        {call}
''')
    args = (pto.alloc_tensor(1024, pto.float32), pto.alloc_tensor(512, pto.float16),
            pto.alloc_tensor(64, pto.int32), pto.alloc_tensor(64, pto.float32),
            pto.alloc_tensor(1024, pto.float32), pto.alloc_tensor(1024, pto.int8))
    compile_error_at(mod.bad, args, message, call)


GATHER_THEN_READ = """
@pto.kernel(sync="manual")
def k(O, T, I, S, X):
    with pto.cube():
        dst = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        pto.mgather(dst, T, I, 256, coalesce='elem', oob='clamp', scratch=S)
        {signal}
    with pto.vector():
        if pto.get_subblock_id() == 0:
            v = pto.alloc_tile(1, 16, pto.float32)
            {wait}
            pto.tload(v, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(X, v)
"""


@pytest.mark.parametrize("ordered", [False, True])
def test_racecheck_sees_the_element_forms_scratch(make_kernels, ordered):
    """The element form writes its scratch in GM (then reads it back into the tile); AIV0 loading
    the scratch with nothing ordering it after the AIC's gather races with those writes (a
    RaceError naming S); after the AIC's cross_core_set_flag the launch is clean and AIV0 reads
    the scratch's first 16 elements: the tile's first column block, rows 0 and 1."""
    k = make_kernels(GATHER_THEN_READ.format(signal="pto.cross_core_set_flag(3)" if ordered else "pass",
                                             wait="pto.cross_core_wait_flag(3)" if ordered else "pass")).k
    table = np.arange(256, dtype=np.float32) * 2
    idx = np.arange(256, dtype=np.int32)[::-1].copy()
    x = tensor(np.zeros(16, np.float32), pto.float32)
    args = (tensor(np.zeros(256, np.float32), pto.float32), tensor(table, pto.float32), tensor(idx, pto.int32),
            tensor(np.zeros(256, np.float32), pto.float32), x)
    if not ordered:
        with pytest.raises(pto.RaceError, match=r"race on GM tensor 'S\b.*MGATHER_L1_ELEM at line"):
            pto.launch(k, grid=(1,), args=args, check="race")
            pto.sync()
        return
    pto.launch(k, grid=(1,), args=args, check="race")
    pto.sync()
    tile = table[idx].reshape(16, 16)
    assert np.array_equal(words(x, 16, "float32"), tile[:2, :8].ravel())


@pytest.mark.parametrize("co", ["row", "elem"])
def test_initcheck_sees_the_gm_indices(make_kernels, co):
    """The scalar unit reads the indices from GM: indices never written are an
    UninitializedReadError naming I's first element (the table and scratch written by the host)."""
    k = kernel_for(make_kernels, co, "float32", 16, 16, 64, "clamp")
    out, t, _i, scratch = launch_args("float32", 16, 16, make_table(np.float32, 64 * 16), np.zeros(1, np.int32))
    with pytest.raises(pto.UninitializedReadError, match=r"MGATHER_L1(_ELEM)? at line \d+ .* reads I\b.*?\[0\], "
                                                         r"which was never written"):
        pto.launch(k, grid=(1,), args=(out, t, pto.alloc_tensor(256 * 4, pto.int32), scratch), check="init")
        pto.sync()


@pytest.mark.parametrize("co, op, want", [
    ("row", "MGATHER_L1", 307 + 14),                 # 307 + ceil(1024 B / 78.4) = 307 + ceil(13.06)
    ("elem", "MGATHER_L1_ELEM", 307 + 14 + 768),     # and 256 elements x 3
])
def test_the_gm2l1_forms_cost_their_dmas_and_scalar_loop(make_kernels, co, op, want):
    """latency_tables/ascend910b.toml: MGATHER_L1 on an idle MTE2 = head 307 (TLOAD's latency)
    + the rows' bytes / 78.4 (the CCE mock's GM_TO_L1 for copy_gm_to_cbuf_multi_nd2nz), 16 rows of
    16 float32 = 1024 bytes: 321; MGATHER_L1_ELEM adds 3 an element (the scalar loop, assumed as
    MGATHER_ELEM's) to the scratch's copy_gm_to_cbuf priced alike: 321 + 768."""
    k = kernel_for(make_kernels, co, "float32", 16, 16, 64, "clamp")
    args = launch_args("float32", 16, 16, make_table(np.float32, 64 * 16), np.zeros(256, np.int32))
    prof = pto.profile(k, grid=(1,), args=args)
    assert [e.end - e.start for e in prof.timeline if e.inst == op] == [want]


def test_values_off_refuses_racecheck_of_the_gm2l1_form(make_kernels):
    """values=False computes no values, so the GM indices that name MGATHER_L1's table rows are not
    known: racecheck is refused with a LaunchError at the instruction's line; without check= the
    launch is timed."""
    k = kernel_for(make_kernels, "row", "float32", 16, 16, 64, "clamp")
    args = launch_args("float32", 16, 16, make_table(np.float32, 64 * 16), np.zeros(16, np.int32))
    with pytest.raises(pto.LaunchError, match=r"values=False with check=\['racecheck'\]: MGATHER_L1 at line \d+"):
        pto.launch(k, grid=(1,), args=args, check="race", values=False)
    pto.launch(k, grid=(1,), args=args, values=False)
    pto.sync()
