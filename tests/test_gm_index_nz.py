"""The NZ forms of pto.mgather / pto.mscatter (layout=pto.NZ; isa/54_gm_index.toml; A2/A3
include/pto/npu/a2a3/MGather.hpp MGatherRowNzImpl / MGatherElemNzImpl, MScatter.hpp
MScatterRowNzImpl / MScatterElemNzImpl): a Layout::NZ table of logical (rows, cols) with an NZ Vec
tile, logical element (r, c) at GM element (c // c0) x stride + r x c0 + c % c0 (MGatherNZGmOffset;
stride, the elements between column blocks, by default rows x c0). Tiny kernels with values derived
by hand: the row form moves a logical row's column blocks, the element form maps index u to
logical (u // cols, u % cols), the row gather under oob='zero' zeroes the whole tile first, the
element scatter writes column block by column block; the headers' NZ rules as compile errors; the
cost of the ND forms; initcheck at the NZ addresses; the compiled event loop refusing the launch."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim import dtypes
from pypto_sim.exec import reference
from pypto_sim.exec.lane import executor
from pypto_sim.isa import gm_index_modes as modes
from aicore_runs import compile_error_at
from engine_compare import both_executors, error_outcomes, tensor_values


def tensor(a):
    """A GM tensor holding numpy array a."""
    t = pto.alloc_tensor(a.nbytes, getattr(pto, a.dtype.name))
    pto.memcpy_h2d(t, a)
    return t


def nz(a):
    """a (rows of 16, cols of c0 = 8 float32) in NZ order: element (r, c) at (c // 8) rows 8 + r 8 + c % 8."""
    rows, cols = a.shape
    return a.reshape(rows // 16, 16, cols // 8, 8).transpose(2, 0, 1, 3).ravel()


ROW = """
@pto.kernel
def k(O, T, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile(1, 8, pto.int32, valid=(1, 2))
            full = pto.alloc_tile(16, 16, pto.float32, layout=pto.NZ)
            pto.texpands(full, 7.0)
            dst = pto.tsubview(full, 0, 0, 16, 16, valid=(2, 16))
            pto.tload(idx, I)
            pto.mgather(dst, T, idx, (16, 16), oob='{oob}', layout=pto.NZ)
            pto.tstore(O, full, layout=pto.NZ)
"""


@pytest.mark.parametrize("oob, second, rest", [
    ("clamp", 15, 7.0),      # 99 clamps to row 15; rows 2..15 keep texpands' 7
    ("zero", None, 0.0),     # 99 is past the 16 rows: a zero row; MGatherRowNzImpl zeroed the whole tile first
])
def test_an_nz_row_gather_moves_a_logical_rows_column_blocks(make_kernels, oob, second, rest):
    """T holds GM element e = e: a 16 x 16 float32 NZ table, logical (r, c) at (c // 8) 128 +
    r 8 + c % 8. Indices [5, 99] into a 16 x 16 NZ tile of valid 2 x 16 filled with 7: dst row 0
    is logical row 5, GM 40..47 then 168..175; row 1 is row 15 (clamp: 120..127, 248..255) or 0
    (zero). Under 'zero' the header zeroes all 16 x 16 before it gathers, so rows 2..15 are 0,
    under 'clamp' they stay 7. The whole tile stored NZ, run four ways (timing and functional
    mode, numba and reference executors): the same words."""
    table = np.arange(256, dtype=np.float32)
    o = tensor(np.zeros(256, np.float32))
    images = both_executors(make_kernels(ROW.format(oob=oob)).k, (1,),
                            (o, tensor(table), tensor(np.array([5, 99], np.int32))))
    first = next(iter(images.values()))
    assert all(np.array_equal(first, img) for img in images.values())
    want = np.full((16, 16), rest, np.float32)
    want[0] = list(range(40, 48)) + list(range(168, 176))
    want[1] = list(range(120, 128)) + list(range(248, 256)) if second == 15 else 0.0
    np.testing.assert_array_equal(tensor_values(first, o), nz(want))


ELEM = """
@pto.kernel
def k(O, T, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile(1, 8, pto.int32)
            dst = pto.alloc_tile(16, 8, pto.float32, layout=pto.NZ, valid=(1, 8))
            pto.tload(idx, I)
            pto.mgather(dst, T, idx, (16, 16), coalesce='elem', layout=pto.NZ)
            pto.tstore(O, dst, layout=pto.NZ)
"""


def test_an_nz_element_gather_reads_index_u_at_logical_row_u_div_cols(make_kernels):
    """T holds GM element e = e, a 16 x 16 float32 NZ table (256 elements). Index u is logical
    (u // 16, u % 16), GM (c // 8) 128 + r 8 + c % 8: 0 -> 0, 7 -> 7, 8 -> (0, 8) 128, 9 -> 129,
    16 -> (1, 0) 8, 25 -> (1, 9) 137, 255 -> (15, 15) 255, 128 -> (8, 0) 64."""
    o = tensor(np.zeros(8, np.float32))
    pto.launch(make_kernels(ELEM).k, grid=(1,), args=(o, tensor(np.arange(256, dtype=np.float32)),
                                                      tensor(np.array([0, 7, 8, 9, 16, 25, 255, 128], np.int32))),
               check="race")
    pto.sync()
    out = np.empty(8, np.float32)
    pto.memcpy_d2h(out, o)
    np.testing.assert_array_equal(out, [0, 7, 128, 129, 8, 137, 255, 64])


SCATTER = """
@pto.kernel
def k(O, S, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile(16, 16, pto.int32)
            src = pto.alloc_tile(16, 16, pto.float32, layout=pto.NZ)
            pto.tload(idx, I)
            pto.tload(src, S, layout=pto.NZ)
            pto.mscatter(O, src, idx, (32, 16), coalesce='{co}', layout=pto.NZ)
"""


def test_an_nz_element_scatter_writes_column_block_by_column_block(make_kernels):
    """src (16 x 16 float32 NZ) holds (r, c) = 16 r + c; idx(r, c) = 256 + 16 r + c, but for
    idx(1, 0) = idx(0, 8) = 3, into a 32 x 16 NZ table of zeros. MScatterElemNzImpl walks
    column block 0 (all rows) before block 1, so (1, 0) = 16 lands first and (0, 8) = 8 last:
    logical element 3 (GM 3) holds 8, where the ND order (row by row) would leave 16. Every
    other (r, c) lands at logical (16 + r, c), GM (c // 8) 256 + (16 + r) 8 + c % 8."""
    src = np.arange(256, dtype=np.float32).reshape(16, 16)
    idx = (256 + np.arange(256)).astype(np.int32).reshape(16, 16)
    idx[1, 0] = idx[0, 8] = 3
    o = tensor(np.zeros(512, np.float32))
    pto.launch(make_kernels(SCATTER.format(co="elem")).k, grid=(1,), args=(o, tensor(nz(src)), tensor(idx)),
               check="race")
    pto.sync()
    out = np.empty(512, np.float32)
    pto.memcpy_d2h(out, o)
    want = np.zeros((32, 16), np.float32)
    want[16:] = src
    want[17, 0] = want[16, 8] = 0.0            # their indices were replaced by 3
    want[0, 3] = 8.0
    np.testing.assert_array_equal(out, nz(want))


def test_an_nz_row_scatter_writes_a_rows_column_blocks(make_kernels):
    """src as above, row r to logical row 31 - r of a 32 x 16 NZ table (coalesce='row', the
    indices [1, 16]): the table is src upside down in rows 16..31, rows 0..15 untouched (0)."""
    src = np.arange(256, dtype=np.float32).reshape(16, 16)
    kernel = SCATTER.format(co="row").replace("pto.alloc_tile(16, 16, pto.int32)", "pto.alloc_tile(1, 16, pto.int32)")
    o = tensor(np.zeros(512, np.float32))
    idx = np.arange(31, 15, -1, dtype=np.int32)
    pto.launch(make_kernels(kernel).k, grid=(1,), args=(o, tensor(nz(src)), tensor(idx)), check="race")
    pto.sync()
    out = np.empty(512, np.float32)
    pto.memcpy_d2h(out, o)
    want = np.zeros((32, 16), np.float32)
    want[16:] = src[::-1]
    np.testing.assert_array_equal(out, nz(want))


@pytest.mark.parametrize("call, message", [
    ("pto.mgather(n, T, i, (16, 16))", "'n' is a NZ Vec tile and the table's layout is ND; A2/A3 pairs GM "
                                       "Layout::ND with a RowMajor tile"),
    ("pto.mgather(d, T, i, (16, 16), layout=pto.NZ)", "'d' is a RowMajor Vec tile and the table's layout is NZ"),
    ("pto.mgather(n, T, i, 256, layout=pto.NZ)", "an NZ table's size is its logical (rows, cols), two constants"),
    ("pto.mgather(n, T, i, (8, 16), layout=pto.NZ)", "an NZ table of 8 x 16 float32: it is whole 16 x 8 fractals"),
    ("pto.mgather(n, T, i, (16, 12), layout=pto.NZ)", "an NZ table of 16 x 12 float32"),
    ("pto.mgather(n, T, i, (16, 24), layout=pto.NZ)", "moves the table's whole width, 24 columns, into the column "
                                                      "blocks of 'n', which has 16"),
    ("pto.mgather(n, T, i, (16, 16), stride=64, layout=pto.NZ)", "stride 64: an NZ table's column blocks are its "
                                                                 "16 rows x c0 = 128 elements"),
    ("pto.mgather(d, T, i, (4, 8))", "an ND table's size is its rows (coalesce='row') or elements"),
    ("pto.mgather(n, T, i, (16, 16), layout=pto.DN)", "layout must be pto.ND or pto.NZ"),
    ("pto.mgather(n, T, z, (16, 16), coalesce='elem', layout=pto.NZ)", "the indices 'z' are a NZ tile (\"index tile "
                                                                      "must be BLayout::RowMajor\""),
    ("pto.mscatter(T, n, i, (16, 16), oob='skip')", "'n' is a NZ Vec tile and the table's layout is ND"),
    ("pto.tadd(n, n, n)", "'n' is an NZ Vec tile, whose words are not its rows; TADD walks rows"),
])
def test_the_headers_nz_checks_are_compile_errors_at_the_line(make_kernels, call, message):
    """MGatherCheck / MScatterCheck's layout pairing, NZ table shape and index-tile rules, and
    pypto_sim's own (the row form's width, the column-block pitch, an NZ tile elsewhere)."""
    mod = make_kernels(f'''
@pto.kernel
def bad(T):
    with pto.vector():
        d = pto.alloc_tile(4, 8, pto.float32)
        n = pto.alloc_tile(16, 16, pto.float32, layout=pto.NZ, valid=(4, 16))
        i = pto.alloc_tile(1, 8, pto.int32, valid=(1, 4))
        z = pto.alloc_tile(16, 16, pto.int32, layout=pto.NZ, valid=(4, 16))
        {call}
''')
    compile_error_at(mod.bad, (pto.alloc_tensor(1024, pto.float32),), message, call)


def test_the_gm_to_l1_forms_refuse_an_nz_table(make_kernels):
    """MGatherCheckGm2L1: "MGATHER A2/A3 GM->L1 table must use Layout::ND." """
    call = "pto.mgather(m, T, I, 16, layout=pto.NZ)"
    mod = make_kernels(f'''
@pto.kernel
def bad(T, I):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        {call}
''')
    compile_error_at(mod.bad, (pto.alloc_tensor(1024, pto.float32), pto.alloc_tensor(64, pto.int32)),
                     "the GM -> L1 forms read an ND table", call)


@pytest.mark.parametrize("layout, want", [
    ("pto.ND", 307 + 18),      # 16 rows of 16 float32 = 1024 B: 307 + ceil(1024 / 58.6 = 17.47)
    ("pto.NZ", 307 + 18),      # the same bytes: 16 x 2 bursts of 32 B (mock: EstimateBandwidthCycles(nBurst x len))
])
def test_an_nz_row_gather_costs_the_nd_ones_bytes(make_kernels, layout, want):
    """latency_tables/ascend910b.toml MGATHER: head 307 + bytes / 58.6 (GM_TO_UB). The NZ row
    form issues gShape1 bursts of 32 bytes a row, which pto-isa's CCE mock prices by nBurst x
    lenBurst, the ND row's bytes: 16 rows of 16 float32 cost 325 either way."""
    nz_tile = layout == "pto.NZ"
    kernel = f"""
@pto.kernel
def k(O, T, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile(1, 16, pto.int32)
            dst = pto.alloc_tile(16, 16, pto.float32{', layout=pto.NZ' if nz_tile else ''})
            pto.tload(idx, I)
            pto.mgather(dst, T, idx, {'(16, 16)' if nz_tile else 16}, layout={layout})
            pto.tstore(O, dst, layout={layout})
"""
    prof = pto.profile(make_kernels(kernel).k, grid=(1,), args=(tensor(np.zeros(256, np.float32)),
                                                                tensor(np.zeros(256, np.float32)),
                                                                tensor(np.arange(16, dtype=np.int32))))
    assert [e.end - e.start for e in prof.timeline if e.inst == "MGATHER"] == [want]


INIT = """
@pto.kernel
def k(O, T, X, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            one = pto.alloc_tile(1, 8, pto.float32)
            idx = pto.alloc_tile(1, 8, pto.int32, valid=(1, {n}))
            dst = pto.alloc_tile(16, {dc}, pto.float32, layout=pto.NZ, valid=(1, {dc}))
            pto.tload(one, X)
            pto.tstore(T, one)
            pto.tload(idx, I)
            pto.mgather(dst, T, idx, (16, 16), coalesce='{co}', layout=pto.NZ)
            pto.tstore(O, dst, layout=pto.NZ)
"""


@pytest.mark.parametrize("co, cols, clean, indices, unwritten", [
    ("row", 16, None, [0], 128),                # logical row 0: GM 0..7 (stored), then 128..135
    ("elem", 8, [3] * 8, [3] * 7 + [9], 129),   # element 3 is GM 3 (stored); 9 is (0, 9): GM 129
])
def test_initcheck_sees_the_nz_addresses(make_kernels, co, cols, clean, indices, unwritten):
    """T (16 x 16 float32 NZ) is never written by the host; the kernel stores GM elements 0..7
    (logical row 0, columns 0..7). A row gather of logical row 0 reads 0..7 and then column
    block 1's 128..135: initcheck names T[128] (an ND reading would have named T[8]). An element
    gather (1 x 8) of index 3 only reads GM 3 and is clean; index 9, logical (0, 9), reads GM 129."""
    k = make_kernels(INIT.format(dc=cols, co=co, n=len(indices))).k
    for idx in ([clean] if clean is not None else []) + [indices]:
        args = (tensor(np.zeros(16 * cols, np.float32)), pto.alloc_tensor(256 * 4, pto.float32),
                tensor(np.ones(8, np.float32)), tensor(np.array(idx, np.int32)))
        if idx is clean:
            pto.launch(k, grid=(1,), args=args, check=("init", "race"))
            pto.sync()
            continue
        with pytest.raises(pto.UninitializedReadError, match=rf"MGATHER(_ELEM)? at line \d+ .* reads "
                                                             rf"T\b.*?\[{unwritten}\], which was never written"):
            pto.launch(k, grid=(1,), args=args, check="init")
            pto.sync()


def test_the_compiled_event_loop_refuses_an_nz_gather_and_the_others_run_it(make_kernels):
    """why_not_aicore_fast names MGATHER (its GM addresses are in its index tile) for the NZ
    form as for ND: the compiled loop, asked for by name, raises a LaunchError; the SimPy model
    (both executors) and the functional runner (both) run the launch without error."""
    args = (tensor(np.zeros(256, np.float32)), tensor(np.arange(256, dtype=np.float32)),
            tensor(np.array([5, 99], np.int32)))
    got = error_outcomes(make_kernels(ROW.format(oob="zero")).k, args)
    fast = got.pop("fast")
    assert fast[0] is pto.LaunchError and "MGATHER reads or writes GM at addresses its index tile holds" in fast[1]
    assert set(got.values()) == {None}


@pytest.mark.parametrize("dt_name", ["float32", "float16", "bfloat16", "int32", "uint8", "int8"])
def test_the_numba_kernels_match_the_reference_on_an_nz_table(dt_name):
    """gm_index_gather and gm_index_scatter of exec/compiled/gm_index.py and
    exec/reference_gm_index.py with tcols > 0: an NZ table of 16 rows x 2 c0 columns whose two
    column blocks lie 16 c0 + 5 elements apart (a stride longer than dense), index words in
    range and past it under clamp / wrap / drop, both coalesce forms, plain and atomic
    scatters: the same bytes from both, and the gather equal to numpy's read of logical (r, c)
    at (c // c0) pitch + r c0 + c % c0."""
    ex, dt = executor(), getattr(dtypes, dt_name)
    c0 = 32 // dt.itemsize
    trows, tcols, pitch = 16, 2 * c0, 16 * c0 + 5
    n_gm = pitch + trows * c0
    rng = np.random.default_rng(dt.code)
    hbm0 = reference.gm.encode(rng.integers(0, 100, n_gm + 4 * tcols), dt).view(np.uint8).copy()
    flat = reference.gm.load(hbm0, np.arange(n_gm) * dt.itemsize, dt)
    r, c = np.divmod(np.arange(trows * tcols), tcols)
    logical = flat[(c // c0) * pitch + r * c0 + c % c0]
    words = np.array([0, 17, 3, -1, 40, 15, 9, 1000], np.float64)
    for oob in (modes.CLAMP, modes.WRAP, modes.DROP):
        for elem, rows, cols in ((0, 4, tcols), (1, 2, 4)):
            cap = trows * tcols if elem else trows
            outs = []
            for impl in (ex, reference):
                out = np.full(rows * cols, -7.0)
                impl.gm_index_gather(out, words, hbm0.copy(), 0, rows, cols, cap, c0, oob, elem, tcols, pitch,
                                     dt.code)
                outs.append(out)
            np.testing.assert_array_equal(outs[0].view(np.uint64), outs[1].view(np.uint64))
            table = logical.reshape(trows, tcols)
            for k in range(rows * cols if elem else rows):
                u, moves = modes.remap(int(words[k]), cap, oob)
                want = (logical[u] if elem else table[u]) if moves else 0.0
                got = outs[1][k] if elem else outs[1][k * cols:(k + 1) * cols]
                np.testing.assert_array_equal(got, want)
            for atomic in (0, 1) if dt_name in modes.ATOMIC_DTYPES else (0,):
                vals = reference.gm.load(hbm0, (n_gm + np.arange(rows * cols)) * dt.itemsize, dt)
                hbms = []
                for impl in (ex, reference):
                    h = hbm0.copy()
                    impl.gm_index_scatter(h, 0, vals.copy(), words, rows, cols, cap, c0, oob, elem, atomic, tcols,
                                          pitch, dt.code)
                    hbms.append(h)
                np.testing.assert_array_equal(hbms[0], hbms[1])
