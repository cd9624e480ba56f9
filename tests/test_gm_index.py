"""MGATHER, MGATHER_ELEM, MSCATTER and MSCATTER_ELEM (isa/54_gm_index.toml; A2/A3's
include/pto/npu/a2a3/MGather.hpp and MScatter.hpp): the kernels of both executors against each
other and hand-derived values, the out-of-range policies on indices read as uint32, the
OutOfBoundsError of an undefined index past the table, the compile-time checks, and the costs.
pto-isa's own on-device suites: tests/test_ptoisa_npu_mgather.py, tests/test_ptoisa_npu_mscatter.py."""
import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim import dtypes
from pypto_sim.exec import reference
from pypto_sim.exec.lane import executor
from pypto_sim.frontend.aicore_builtins import PTO_TO_PIPE
from pypto_sim.isa import gm_index_modes as modes
from aicore_runs import compile_error_at
from engine_compare import both_executors, error_outcomes, tensor_values

GATHER = """
@pto.kernel
def k(O, T, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile(1, 8, pto.int32, valid=(1, {n}))
            dst = pto.alloc_tile(8, 8, pto.float32, valid=({rows}, {cols}))
            pto.tload(idx, I)
            pto.mgather(dst, T, idx, {size}, coalesce='{co}', oob='{oob}')
            pto.tstore(O, dst)
"""
SCATTER = """
@pto.kernel
def k(O, S, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile(1, 8, pto.int32, valid=(1, {n}))
            src = pto.alloc_tile(8, 8, pto.float32, valid=({rows}, {cols}))
            pto.tload(idx, I)
            pto.tload(src, S)
            pto.mscatter(O, src, idx, {size}, coalesce='{co}', oob='{oob}', atomic={atomic})
"""


def tensor(a):
    """A GM tensor holding numpy array a."""
    t = pto.alloc_tensor(a.nbytes, getattr(pto, a.dtype.name))
    pto.memcpy_h2d(t, a)
    return t


def gather(make_kernels, table, idx, rows, cols, size, co="row", oob="undefined", mode="timing"):
    """One MGATHER of rows x cols float32 from table (a float32 array) at int32 indices idx."""
    k = make_kernels(GATHER.format(n=len(idx), rows=rows, cols=cols, size=size, co=co, oob=oob)).k
    o = tensor(np.zeros(rows * cols, np.float32))
    pto.launch(k, grid=(1,), args=(o, tensor(table), tensor(np.asarray(idx, np.int32))), mode=mode)
    out = np.empty(rows * cols, np.float32)
    pto.memcpy_d2h(out, o)
    return out


def scatter(make_kernels, src, idx, size, co="row", oob="undefined", atomic=None, table=None):
    """One MSCATTER of src (float32 rows x cols) at int32 indices idx into a table of size rows
    (elements) of src's columns (one), starting as table (zeros when None)."""
    rows, cols = src.shape
    k = make_kernels(SCATTER.format(n=len(idx), rows=rows, cols=cols, size=size, co=co, oob=oob,
                                    atomic=repr(atomic))).k
    start = np.zeros(size * (cols if co == "row" else 1), np.float32) if table is None else table
    o = tensor(start)
    pto.launch(k, grid=(1,), args=(o, tensor(src.astype(np.float32)), tensor(np.asarray(idx, np.int32))))
    out = np.empty_like(start)
    pto.memcpy_d2h(out, o)
    return out


def test_rows_are_gathered_by_index_and_repeats_read_twice(make_kernels):
    """table row i holds 10 i .. 10 i + 7; indices [5, 0, 5, 2] give rows 5, 0, 5 and 2."""
    table = (np.arange(8)[:, None] * 10 + np.arange(8)).astype(np.float32)
    out = gather(make_kernels, table, [5, 0, 5, 2], 4, 8, 8)
    np.testing.assert_array_equal(out.reshape(4, 8), table[[5, 0, 5, 2]])


@pytest.mark.parametrize("oob, want", [("clamp", [4, 4, 1]), ("wrap", [0, 2, 1]), ("zero", [None, None, 1])])
def test_an_index_is_read_as_uint32_and_remapped(make_kernels, oob, want):
    """A 5-row table, indices [-1, 7, 1]: the header reads -1 as 4294967295. clamp: both past
    the table become row 4; wrap: 4294967295 % 5 = 0 (4294967295 = 5 x 858993459), 7 % 5 = 2;
    zero: rows of 0 for both (GatherOOB::Zero)."""
    table = (np.arange(5)[:, None] * 10 + np.arange(8) + 1).astype(np.float32)
    out = gather(make_kernels, table, [-1, 7, 1], 3, 8, 5, oob=oob).reshape(3, 8)
    for r, row in enumerate(want):
        np.testing.assert_array_equal(out[r], np.zeros(8) if row is None else table[row])


def test_elements_are_gathered_from_the_flat_table(make_kernels):
    """coalesce='elem' over a 1 x 6 region: element i of the result is table[idx[i]]; table
    element e holds 100 + e."""
    table = (100 + np.arange(32)).astype(np.float32)
    out = gather(make_kernels, table, [31, 0, 7, 7, 16, 2], 1, 6, 32, co="elem")
    np.testing.assert_array_equal(out, [131, 100, 107, 107, 116, 102])


def test_scatter_writes_in_index_order_and_skips_past_the_table(make_kernels):
    """Rows [1, 2, 3, 4] of src (src row r is r + 1 in every column) to indices [2, 9, 2, 0] of
    a 4-row table under skip: row 2 is written twice and keeps the later (3), index 9 is
    dropped, row 0 gets 4; rows 1 and 3 stay 0."""
    src = np.repeat(np.arange(1, 5, dtype=np.float32)[:, None], 8, axis=1)
    out = scatter(make_kernels, src, [2, 9, 2, 0], 4, oob="skip").reshape(4, 8)
    np.testing.assert_array_equal(out[:, 0], [4, 0, 3, 0])


def test_atomic_scatter_adds_each_element_to_what_gm_holds(make_kernels):
    """coalesce='elem', atomic='add' of [1, 2, 4, 8] at indices [3, 3, 0, 3] into a table
    starting [10, 10, 10, 10]: element 3 gets 10 + 1 + 2 + 8 = 21, element 0 10 + 4 = 14."""
    src = np.array([[1, 2, 4, 8]], np.float32)
    out = scatter(make_kernels, src, [3, 3, 0, 3], 4, co="elem", atomic="add", table=np.full(4, 10, np.float32))
    np.testing.assert_array_equal(out, [14, 10, 10, 21])


@pytest.mark.parametrize("mode", ["timing", "functional"])
def test_an_undefined_index_past_the_table_stops_the_launch(make_kernels, mode):
    """oob='undefined' leaves an index past the table to the device, which would read what GM
    holds there (here the tensor's own words: the table is its first 8 of 16 rows): index 9 at
    position (0, 1) names row 9, GM element 9 x 8 = 72 of 'T'; the error names the instruction,
    its line, the unit, the position and the element, in both timing and functional mode."""
    table = np.zeros((16, 8), np.float32)
    with pytest.raises(pto.OutOfBoundsError) as info:
        gather(make_kernels, table, [1, 9, 2, 3], 4, 8, 8, mode=mode)
    msg = str(info.value)
    for part in ("MGATHER at line 10 on AIV0", "index 9 at position (0, 1) of 'idx'", "row 9 of a table of 8 rows",
                 "GM element 72 of 'T", "(which has 128)"):
        assert part in msg, msg
    assert (info.value.offset, info.value.count, info.value.tensor.split()[0]) == (72, 128, "T")


def test_an_undefined_scatter_index_past_the_table_writes_nothing(make_kernels):
    """MSCATTER_ELEM with index 6 of a 6-element table at position (0, 2): an OutOfBoundsError,
    and GM keeps its zeros (the check comes at the read, before any write)."""
    src = np.array([[1, 2, 3]], np.float32)
    k = make_kernels(SCATTER.format(n=3, rows=1, cols=3, size=6, co="elem", oob="undefined", atomic=None)).k
    o = tensor(np.zeros(6, np.float32))
    with pytest.raises(pto.OutOfBoundsError, match=r"MSCATTER_ELEM at line 11 on AIV0 .*index 6 at position "
                                                   r"\(0, 2\) of 'idx' names element 6 of a table of 6 elements"):
        pto.launch(k, grid=(1,), args=(o, tensor(src), tensor(np.array([0, 1, 6], np.int32))))
        pto.sync()
    out = np.empty(6, np.float32)
    pto.memcpy_d2h(out, o)
    np.testing.assert_array_equal(out, np.zeros(6))


def test_a_table_past_its_tensor_is_an_error(make_kernels):
    """size=9 rows of 8 float32, 8 apart, from element 0 reach element 71 of a 64-element
    tensor: an OutOfBoundsError before anything moves, whatever the indices."""
    with pytest.raises(pto.OutOfBoundsError, match=r"the table of 9 rows of 8 elements, 8 apart from element 0 "
                                                   r"reaches element 71 of 'T.*', which has 64"):
        gather(make_kernels, np.zeros((8, 8), np.float32), [0, 1], 2, 8, 9)


@pytest.mark.parametrize("call, message", [
    ("pto.mgather(d, H, i, 8)", "'d' holds float32 but the table 'H' holds float16"),
    ("pto.mgather(d, T, i, 64, stride=8, coalesce='elem')", "stride= is the table's row pitch of coalesce='row'"),
    ("pto.mgather(c, T, i, 8)", "'c' is a ColMajor Vec tile and the table's layout is ND; A2/A3 pairs GM "
                                "Layout::ND with a RowMajor tile"),
    ("pto.mgather(d, T, h, 8)", "the indices 'h' hold int16 (\"index type must be int32_t or uint32_t\""),
    ("pto.mgather(d, T, w, 8)", "coalesce='row' over 4 rows of 'd' needs indices of valid shape [1, 4], and 'w' "
                                "has 1 x 8"),
    ("pto.mgather(d, T, i, 8, oob='skip')", "oob must be one of 'undefined', 'clamp', 'wrap', 'zero'"),
    ("pto.mscatter(U, u, i, 8, atomic='add')", "atomic='add' on uint32; A2/A3 adds float32, int32"),
    ("pto.mscatter(T, d, i, 0)", "size 0: the table must hold at least one row"),
])
def test_the_headers_checks_are_compile_errors_at_the_line(make_kernels, call, message):
    """MGatherCheck / MScatterCheck's static_asserts, and the operands' own rules."""
    mod = make_kernels(f'''
@pto.kernel
def bad(T, H, U):
    with pto.vector():
        d = pto.alloc_tile(4, 8, pto.float32)
        u = pto.alloc_tile(4, 8, pto.uint32)
        c = pto.alloc_tile(8, 4, pto.float32, layout=pto.ColMajor)
        i = pto.alloc_tile(1, 8, pto.int32, valid=(1, 4))
        w = pto.alloc_tile(1, 8, pto.int32)
        h = pto.alloc_tile(1, 16, pto.int16, valid=(1, 4))
        {call}
''')
    args = (pto.alloc_tensor(256, pto.float32), pto.alloc_tensor(128, pto.float16), pto.alloc_tensor(256, pto.uint32))
    compile_error_at(mod.bad, args, message, call)


@pytest.mark.parametrize("co, op, rows, cols, want", [
    ("row", "MGATHER", 8, 8, 307 + 5),        # 307 + ceil(256 B x 1 / 58.6) = 307 + ceil(4.37)
    ("elem", "MGATHER_ELEM", 1, 8, 24),       # 8 elements x 3
])
def test_gather_costs_the_headers_dmas_or_scalar_loop(make_kernels, co, op, rows, cols, want):
    """latency_tables/ascend910b.toml: MGATHER on an idle MTE2 = head 307 (TLOAD's latency)
    + the rows' bytes / 58.6 (the CCE mock's GM_TO_UB copy_gm_to_ubuf_align), here 8 rows of
    8 float32, 256 bytes: 312; MGATHER_ELEM = 3 an element (assumed, as TSCATTER_IDX's scalar
    loop): 24."""
    k = make_kernels(GATHER.format(n=8, rows=rows, cols=cols, size=8, co=co, oob="undefined")).k
    o = tensor(np.zeros(rows * cols, np.float32))
    prof = pto.profile(k, grid=(1,), args=(o, tensor(np.zeros(64, np.float32)), tensor(np.zeros(8, np.int32))))
    assert [e.end - e.start for e in prof.timeline if e.inst == op] == [want]


@pytest.mark.parametrize("co, op, atomic, rows, want", [
    ("row", "MSCATTER", None, 4, 4 * 153 + 2),       # 4 rows x 153 + ceil(128 B / 109.4) = 612 + ceil(1.17)
    ("row", "MSCATTER", "add", 4, 4 * 153 + 2),      # the atomic form priced the same
    ("elem", "MSCATTER_ELEM", None, 1, 8 * 3),       # 8 elements x 3
])
def test_scatter_costs_a_dma_and_its_wait_a_row_or_the_scalar_loop(make_kernels, co, op, atomic, rows, want):
    """latency_tables/ascend910b.toml: MSCATTER = per row TSTORE's latency 153 (each row's DMA
    lands before the next issues: PtoSetWaitFlag<MTE3, S> after it) + the bytes / 109.4 (the
    mock's UB_TO_GM), 4 rows of 8 float32 = 128 bytes: 614; MSCATTER_ELEM 3 an element: 24."""
    n = 4 if co == "row" else 8
    src = np.zeros((rows, 8), np.float32)
    k = make_kernels(SCATTER.format(n=n, rows=rows, cols=8, size=32, co=co, oob="undefined",
                                    atomic=repr(atomic))).k
    table = np.zeros(32 * (8 if co == "row" else 1), np.float32)
    idx = np.arange(n, dtype=np.int32)
    prof = pto.profile(k, grid=(1,), args=(tensor(table), tensor(src), tensor(idx)))
    assert [e.end - e.start for e in prof.timeline if e.inst == op] == [want]


DTYPES = ("float32", "float16", "bfloat16", "int32", "uint32", "int16", "uint8", "int8")


@pytest.mark.parametrize("dt_name", DTYPES)
def test_the_numba_kernels_match_the_reference(dt_name):
    """gm_index_fault, gm_index_gather and gm_index_scatter of exec/compiled/gm_index.py and
    exec/reference_gm_index.py on the same GM bytes (random words, NaN among the floats) and
    index words (in range, past the cap, negative): each policy, both coalesce forms, plain and
    atomic scatters; the outputs and GM come out byte for byte the same, and the gather agrees
    with numpy's take of the remapped indices."""
    ex, dt = executor(), getattr(dtypes, dt_name)
    rng = np.random.default_rng(dt.code)
    size, rows, cols, stride = 6, 4, 3, 5
    hbm0 = rng.integers(0, 256, 512, dtype=np.uint8)
    if dt.is_float:        # keep the float words finite but for a few NaNs (atomic adds of NaN stay NaN)
        hbm0 = reference.gm.encode(np.where(rng.random(512 // dt.itemsize) < 0.05, np.nan,
                                            rng.standard_normal(512 // dt.itemsize)), dt).view(np.uint8).copy()
    table = 64
    words = np.array([0, 5, 7, -1, 3, 2, 11, 4, 1, 0, 5, 5], np.float64)
    for oob in (modes.CLAMP, modes.WRAP, modes.DROP):
        for elem in (0, 1):
            cap = size * (cols if elem else 1)
            n = rows * cols if elem else rows
            outs = []
            for impl in (ex, reference):
                out = np.full(rows * cols, -7.0)
                impl.gm_index_gather(out, words, hbm0.copy(), table, rows, cols, cap, stride, oob, elem, 0, 0,
                                     dt.code)
                outs.append(out)
            np.testing.assert_array_equal(outs[0].view(np.uint64), outs[1].view(np.uint64))
            flat = reference.gm.load(hbm0, table + np.arange(64) * dt.itemsize, dt)
            for k in range(n):
                u, moves = modes.remap(int(words[k]), cap, oob)
                want = [0.0] * (cols if not elem else 1) if not moves else \
                    (flat[u * stride:u * stride + cols] if not elem else [flat[u]])
                got = outs[1][k * cols:(k + 1) * cols] if not elem else outs[1][k:k + 1]
                np.testing.assert_array_equal(got, want)
            for atomic in (0, 1) if dt_name in modes.ATOMIC_DTYPES else (0,):
                vals = reference.gm.load(hbm0, 300 + np.arange(rows * cols) * dt.itemsize, dt)
                hbms = []
                for impl in (ex, reference):
                    h = hbm0.copy()
                    impl.gm_index_scatter(h, table, vals.copy(), words, rows, cols, cap, stride, oob, elem, atomic,
                                          0, 0, dt.code)
                    hbms.append(h)
                np.testing.assert_array_equal(hbms[0], hbms[1])
    assert ex.gm_index_fault(words, 12, 6, modes.UNDEFINED) == reference.gm_index_fault(words, 12, 6,
                                                                                       modes.UNDEFINED) == 2
    assert ex.gm_index_fault(words, 12, 6, modes.CLAMP) == reference.gm_index_fault(words, 12, 6, modes.CLAMP) == -1


def test_the_headers_flags_order_a_manual_kernel_as_on_the_device(make_kernels):
    """mgather_kernel.cpp's runRow in sync='manual' under check='race': its own flags are MTE2
    -> V before MGATHER and V -> MTE3 after, which alone would not order the TSTORE (MTE3)
    after the gather's DMAs (MTE2); MGatherRowImpl's PtoSetWaitFlag pairs do, and pto.mgather
    emits them (V -> MTE2 and MTE3 -> MTE2 before, MTE2 -> V and MTE2 -> MTE3 after, on event
    0): no race, and the rows come out gathered."""
    mod = make_kernels('''
@pto.kernel(sync="manual")
def k(O, T, I):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile(1, 8, pto.int32)
            dst = pto.alloc_tile(8, 8, pto.float32)
            pto.tload(idx, I)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.mgather(dst, T, idx, 8)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
''')
    table = (np.arange(64) + 1).astype(np.float32).reshape(8, 8)
    idx = np.array([7, 6, 5, 4, 3, 2, 1, 0], np.int32)
    o = tensor(np.zeros(64, np.float32))
    args = (o, tensor(table), tensor(idx))
    pto.launch(mod.k, grid=(1,), args=args, check="race")
    out = np.empty(64, np.float32)
    pto.memcpy_d2h(out, o)
    np.testing.assert_array_equal(out.reshape(8, 8), table[idx])
    pipe = PTO_TO_PIPE
    v, mte2, mte3 = pipe["PIPE_V"], pipe["PIPE_MTE2"], pipe["PIPE_MTE3"]
    got = [(i.op, tuple(i.aux[:2]) if i.op != "MGATHER" else None) for i in mod.k.program_for(args).instrs
           if i.op in ("SET_FLAG", "WAIT_FLAG", "MGATHER")]
    pairs = [(mte2, v), (v, mte2), (mte3, mte2), None, (mte2, v), (mte2, mte3), (v, mte3)]
    want = [x for p in pairs for x in ([("MGATHER", None)] if p is None else [("SET_FLAG", p), ("WAIT_FLAG", p)])]
    assert got == want


BOTH = """
@pto.kernel
def k(O, T, I, E):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile(1, 8, pto.int32)
            eix = pto.alloc_tile(2, 8, pto.int32)
            dst = pto.alloc_tile(8, 8, pto.float32)
            row = pto.alloc_tile(2, 8, pto.float32)
            pto.tload(idx, I)
            pto.tload(eix, E)
            pto.mgather(dst, T, idx, 5, oob='wrap')
            pto.mgather(row, T, eix, 64, coalesce='elem', oob='clamp')
            pto.tstore(O, dst)
            pto.mscatter(O + 64, row, eix, 16, coalesce='elem', oob='skip', atomic='add')
            pto.mscatter(O + 80, dst, idx, 3, oob='clamp')
"""


def test_both_executors_in_both_modes_compute_the_same_words(make_kernels):
    """One kernel of each instruction run four ways (timing and functional mode, numba and
    reference executors): the same HBM bytes, and numpy's. T element e is e + 0.5; indices
    [0, 9, 2, 4, 5, -1, 7, 3] (row: wrapped by 5) and 2 x 8 element indices 3 e - 5 (clamped to
    [0, 63] by elem's 64, skipped past 16 by the scatter, which adds row's values there)."""
    table = np.arange(64, dtype=np.float32) + 0.5
    idx = np.array([0, 9, 2, 4, 5, -1, 7, 3], np.int32)
    eix = (3 * np.arange(16) - 5).astype(np.int32).reshape(2, 8)
    mod = make_kernels(BOTH)
    o = tensor(np.zeros(64 + 16 + 3 * 8, np.float32))
    images = both_executors(mod.k, (1,), (o, tensor(table), tensor(idx), tensor(eix)))
    first = next(iter(images.values()))
    assert all(np.array_equal(first, img) for img in images.values())
    rows = [(int(i) & 0xFFFFFFFF) % 5 for i in idx]
    want_dst = table.reshape(8, 8)[rows]
    picked = table[[min(int(i) & 0xFFFFFFFF, 63) for i in eix.ravel()]]
    want_add = np.zeros(16, np.float32)
    for i, v in zip(eix.ravel(), picked):
        if 0 <= int(i) < 16:
            want_add[int(i)] += v
    want_rows = np.zeros((3, 8), np.float32)
    for r, i in enumerate(idx):
        want_rows[min(int(i) & 0xFFFFFFFF, 2)] = want_dst[r]
    words = tensor_values(first, o)
    np.testing.assert_array_equal(words[:64], want_dst.ravel())
    np.testing.assert_array_equal(words[64:80], want_add)
    np.testing.assert_array_equal(words[80:], want_rows.ravel())


def test_every_engine_and_executor_reports_the_same_index_error(make_kernels):
    """The undefined index 9 of an 8-row table, run four ways (SimPy with the numba and with the
    reference executor, the functional runner with each): one OutOfBoundsError, word for word.
    The compiled event loop, asked for by name, refuses the launch (a LaunchError naming
    MGATHER's run-time GM addresses); by default the launch goes to SimPy."""
    mod = make_kernels(GATHER.format(n=4, rows=4, cols=8, size=8, co="row", oob="undefined"))
    args = (tensor(np.zeros(32, np.float32)), tensor(np.zeros(128, np.float32)),
            tensor(np.array([1, 9, 2, 3], np.int32)))
    got = error_outcomes(mod.k, args)
    fast = got.pop("fast")
    assert fast[0] is pto.LaunchError and "MGATHER reads or writes GM at addresses its index tile holds" in fast[1]
    assert len(set(got.values())) == 1, got
    kind, text = next(iter(got.values()))
    assert kind is pto.OutOfBoundsError and "index 9 at position (0, 1)" in text


SCATTER_THEN_LOAD = """
@pto.kernel
def k(O, S, I, Y):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile(1, 8, pto.int32, valid=(1, 2))
            src = pto.alloc_tile(8, 8, pto.float32, valid=(2, 8))
            back = pto.alloc_tile(1, 8, pto.float32)
            pto.tload(idx, I)
            pto.tload(src, S)
            pto.mscatter(O, src, idx, 4)
            pto.pipe_barrier(pto.PIPE_ALL)
            pto.tload(back, O + {row} * 8)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
            pto.tstore(Y, back)
"""


@pytest.mark.parametrize("row, written", [(3, True), (0, True), (1, False)])
def test_initcheck_counts_the_rows_a_scatter_wrote_as_written(make_kernels, row, written):
    """A 4-row table the host never wrote; MSCATTER puts src's two rows at rows 3 and 0
    (indices [3, 0]). Loading row 3 or row 0 back reads written elements; row 1 was never
    written, and initcheck names its first element (8)."""
    k = make_kernels(SCATTER_THEN_LOAD.format(row=row)).k
    table = pto.alloc_tensor(4 * 8 * 4, pto.float32)
    args = (table, tensor(np.ones((8, 8), np.float32)), tensor(np.array([3, 0], np.int32)),
            pto.alloc_tensor(8 * 4, pto.float32))
    if written:
        pto.launch(k, grid=(1,), args=args, check="initcheck")
        pto.sync()
    else:
        with pytest.raises(pto.UninitializedReadError, match=r"\[8\], which was never written"):
            pto.launch(k, grid=(1,), args=args, check="initcheck")
            pto.sync()


def test_the_ai_core_debugger_refuses_an_indexed_transfer_with_a_launch_error(make_kernels):
    """The debugger shows state by replaying the compiled event loop's log, which does not run
    MGATHER (its GM addresses are in its index tile): debug_kernel raises a LaunchError naming
    the kernel and the reason (it raised ValueError from the replay's family table)."""
    from pypto_sim import debug
    k = make_kernels(GATHER.format(n=4, rows=4, cols=8, size=8, co="row", oob="undefined")).k
    args = (tensor(np.zeros(32, np.float32)), tensor(np.zeros((8, 8), np.float32)),
            tensor(np.zeros(4, np.int32)))
    with pytest.raises(pto.LaunchError, match="the AI-core debugger cannot step kernel 'k': MGATHER reads or "
                                             "writes GM at addresses its index tile holds"):
        debug.debug_kernel(k, args=args, grid=(1,), echo=False)
