"""check="race" and check="initcheck" on the GM elements of MGATHER / MSCATTER (isa/54_gm_index.toml;
A2/A3 include/pto/npu/a2a3/MGather.hpp, MScatter.hpp): the rows (coalesce='row': cols elements at
table + index * stride) or elements ('elem') the index tile names, after the oob policy, known when
the instruction reads its index tile (exec/gm_index_ops.touched), compared with the other GM accesses
with the clocks of the instruction's dispatch (timing/aicore_races.LateGM). An MSCATTER racing with a
TSTORE / TLOAD of another unit or AI core is reported; one ordered (a cross-core flag, the headers'
own PtoSetWaitFlag pairs) is not; atomic='add' scatters do not race with each other (as TSTORE's
atomic adds), but do with plain accesses. initcheck reports an MGATHER read of a GM element never
written, as a TLOAD's. values=False computes no index values: those checks are refused then."""
import numpy as np
import pytest

import pypto_sim as pto

CUBE_THEN_GATHER = """
@pto.kernel(sync="manual")
def k(T, X, I, O):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat, valid=(1, 16))
        pto.tload(m, X)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 0)
        pto.tstore(T + {row} * 16, m)
        {signal}
    with pto.vector():
        idx = pto.alloc_tile(1, 8, pto.int32, valid=(1, 2))
        dst = pto.alloc_tile(2, 16, pto.float32)
        {wait}
        if pto.get_subblock_id() == 0:
            pto.tload(idx, I)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.mgather(dst, T, idx, 4)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
            pto.tstore(O, dst)
"""


def tensor(a):
    """A GM tensor holding numpy array a."""
    t = pto.alloc_tensor(a.nbytes, getattr(pto, a.dtype.name))
    pto.memcpy_h2d(t, a)
    return t


def values(t, n, dtype=np.float32):
    out = np.empty(n, dtype)
    pto.memcpy_d2h(out, t)
    return out


def cube_then_gather(make_kernels, row, ordered):
    """The AIC stores X's first row as row `row` of a 4 x 16 table T; AIV0 gathers T's rows 3 and 0
    (indices [3, 0]) into O, after the AIC's cross_core_set_flag(3) when ordered."""
    k = make_kernels(CUBE_THEN_GATHER.format(row=row, signal="pto.cross_core_set_flag(3)" if ordered else "pass",
                                             wait="pto.cross_core_wait_flag(3)" if ordered else "pass")).k
    x = (np.arange(256, dtype=np.float32) + 100).reshape(16, 16)
    table = np.arange(64, dtype=np.float32).reshape(4, 16)
    o = tensor(np.zeros(32, np.float32))
    pto.launch(k, grid=(1,), args=(tensor(table), tensor(x), tensor(np.array([3, 0], np.int32)), o), check="race")
    pto.sync()
    want = table.copy()
    want[row] = x[0]
    return values(o, 32).reshape(2, 16), want[[3, 0]]


def test_a_gather_of_rows_the_aic_stores_unordered_is_a_race_and_ordered_is_not(make_kernels):
    """Row 3 stored by the AIC (MTE3) while AIV0 gathers rows [3, 0] with nothing ordering the two
    units: a read-after-write (or write-after-read) race on T between the TSTORE and the MGATHER.
    Row 1 stored unordered is not gathered (no shared element: no race), and row 3 stored before
    the AIC's cross_core_set_flag(3), which AIV0 waits for before the gather, is ordered: the
    gather then reads the stored row."""
    with pytest.raises(pto.RaceError, match=r"race on GM tensor '[Tt]\b.*? in block .*(MGATHER|TSTORE) at line \d+ "
                                            r"\((AIV0 PIPE_MTE2|AIC PIPE_MTE3)\)"):
        cube_then_gather(make_kernels, 3, ordered=False)
    got, want = cube_then_gather(make_kernels, 1, ordered=False)
    np.testing.assert_array_equal(got, want)
    got, want = cube_then_gather(make_kernels, 3, ordered=True)
    np.testing.assert_array_equal(got, want)


SCATTER_THEN_RELOAD = """
@pto.kernel(sync="manual")
def k(T, S, I, Y):
    with pto.vector():
        idx = pto.alloc_tile(1, 8, pto.int32, valid=(1, 2))
        src = pto.alloc_tile(2, 8, pto.float32)
        back = pto.alloc_tile(1, 8, pto.float32)
        if pto.get_subblock_id() == 0:
            pto.tload(idx, I)
            pto.tload(src, S)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, 0)
            pto.mscatter(T, src, idx, 4)
        if pto.get_subblock_id() == {who}:
            pto.tload(back, T + 3 * 8)
            pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 1)
            pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE3, 1)
            pto.tstore(Y, back)
"""


def test_a_reload_ordered_by_the_scatters_own_flags_is_clean_and_the_other_aivs_races(make_kernels):
    """AIV0 scatters S's rows to T rows [3, 0], then reloads row 3 (who = 0): MScatterRowImpl's
    PtoSetWaitFlag<PIPE_MTE3, PIPE_MTE2> after its loop (emitted by pto.mscatter) orders the
    TLOAD after the DMAs, though the TLOAD is dispatched before the scatter starts (the scatter's
    elements are known only then): no race, and the reload reads S's row 0. AIV1 reloading row 3
    (who = 1) is ordered by nothing: a race between AIV1's TLOAD and AIV0's MSCATTER."""
    s = np.arange(16, dtype=np.float32).reshape(2, 8) + 1
    for who in (0, 1):
        k = make_kernels(SCATTER_THEN_RELOAD.format(who=who)).k
        t, y = tensor(np.zeros(32, np.float32)), tensor(np.zeros(8, np.float32))
        args = (t, tensor(s), tensor(np.array([3, 0], np.int32)), y)
        if who == 0:
            pto.launch(k, grid=(1,), args=args, check="race")
            pto.sync()
            np.testing.assert_array_equal(values(y, 8), s[0])
            continue
        with pytest.raises(pto.RaceError, match=r"race on GM tensor '[Tt]\b.*? in block .*(MSCATTER at line \d+ "
                                                r"\(AIV0 PIPE_MTE3\)|TLOAD at line \d+ \(AIV1 PIPE_MTE2\))"):
            pto.launch(k, grid=(1,), args=args, check="race")
            pto.sync()


CORES = """
@pto.kernel
def k(T, S, I, X):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            idx = pto.alloc_tile(1, 8, pto.int32, valid=(1, 2))
            src = pto.alloc_tile(2, 8, pto.float32, valid=({rows}, {cols}))
            one = pto.alloc_tile(1, 8, pto.float32)
            if pto.get_block_id() == 0:
                pto.tload(idx, I)
                pto.tload(src, S)
                pto.mscatter(T, src, idx, {size}, coalesce='{co}', oob='skip')
            else:
                pto.tload(one, X)
                pto.{other}
"""
STORE, LOAD = "tstore(T + {row} * 8, one)", "tload(one, T + {row} * 8)"


@pytest.mark.parametrize("co, indices, other, racing, clean, race", [
    ("row", [3, 0], STORE, 3, 1, "write-after-write"),
    ("row", [9, 2], LOAD, 2, 1, "(read-after-write|write-after-read)"),
    ("elem", [13, 40], STORE, 1, 0, "write-after-write"),
])
def test_a_scatter_on_one_core_races_with_a_store_or_load_of_its_elements_on_another(make_kernels, co, indices,
                                                                                     other, racing, clean, race):
    """Block 0's AIV0 scatters into T (4 rows of 8, 32 elements): coalesce='row' S's two rows to the
    rows `indices` name (size 4), coalesce='elem' S's two first elements to the elements they name
    (size 32); oob='skip' drops an index past the table (9 of 4 rows, 40 of 32 elements). Block 1's
    AIV0 stores to or loads from one row of T (elements 8 row .. 8 row + 7). Nothing orders two
    AI cores of a launch: the row `racing` shares an element with the scatter, a race whichever
    core reaches it first; the row `clean` does not (the rows or elements the indices name after
    the oob policy are all the scatter touches), and that launch runs."""
    shape = dict(rows=2, cols=8, size=4) if co == "row" else dict(rows=1, cols=2, size=32)
    for row in (clean, racing):
        k = make_kernels(CORES.format(co=co, other=other.format(row=row), **shape)).k
        args = (tensor(np.zeros(32, np.float32)), tensor(np.ones(16, np.float32)),
                tensor(np.array(indices, np.int32)), tensor(np.full(8, 2, np.float32)))
        if row == clean:
            pto.launch(k, grid=(2,), args=args, check="race")
            pto.sync()
            continue
        with pytest.raises(pto.RaceError, match=rf"{race} race on GM tensor '[Tt]\b.*? between AI cores"):
            pto.launch(k, grid=(2,), args=args, check="race")
            pto.sync()


ADDS = """
@pto.kernel
def k(T, S, I):
    with pto.vector():
        idx = pto.alloc_tile(1, 8, pto.int32, valid=(1, 2))
        src = pto.alloc_tile(2, 8, pto.float32)
        pto.tload(idx, I)
        pto.tload(src, S)
        pto.mscatter(T, src, idx, 4, atomic={atomic})
"""


def test_scatter_adds_of_both_aivs_and_two_cores_do_not_race_and_plain_scatters_do(make_kernels):
    """Both AIVs of two AI cores scatter S's rows to T rows [3, 0], nothing ordering them. With
    atomic='add' (ScatterAtomicOp::Add: the DMA's atomic add) the four adds do not race with each
    other, as TSTORE's atomic adds do not, and each T row holds four times its S row; plain
    scatters of the same rows by the two AIVs of one AI core are a write-after-write race."""
    s = np.arange(16, dtype=np.float32).reshape(2, 8) + 1
    idx = np.array([3, 0], np.int32)
    k = make_kernels(ADDS.format(atomic="'add'")).k
    t = tensor(np.zeros(32, np.float32))
    pto.launch(k, grid=(2,), args=(t, tensor(s), tensor(idx)), check="race")
    pto.sync()
    want = np.zeros((4, 8), np.float32)
    want[idx] = 4 * s
    np.testing.assert_array_equal(values(t, 32).reshape(4, 8), want)
    k = make_kernels(ADDS.format(atomic=None)).k
    with pytest.raises(pto.RaceError, match=r"write-after-write race on GM tensor '[Tt]\b.*? in block \(0, 0, 0\): "
                                            r"MSCATTER at line \d+ \(AIV\d PIPE_MTE3\) is not ordered after MSCATTER"):
        pto.launch(k, grid=(1,), args=(tensor(np.zeros(32, np.float32)), tensor(s), tensor(idx)), check="race")
        pto.sync()


def test_an_add_scatter_races_with_a_plain_store_of_its_rows_on_another_core(make_kernels):
    """Block 0 adds S's rows into T rows [3, 0] (atomic='add'), block 1 stores row 0 with a plain
    TSTORE: an atomic add races with a plain access (docs/aicore.md tstore)."""
    k = make_kernels(CORES.format(co="row", other=STORE.format(row=0), rows=2, cols=8, size=4)
                     .replace("oob='skip')", "oob='skip', atomic='add')")).k
    args = (tensor(np.zeros(32, np.float32)), tensor(np.ones(16, np.float32)),
            tensor(np.array([3, 0], np.int32)), tensor(np.full(8, 2, np.float32)))
    with pytest.raises(pto.RaceError, match=r"write-after-write race on GM tensor '[Tt]\b.*? between AI cores"):
        pto.launch(k, grid=(2,), args=args, check="race")
        pto.sync()


def test_initcheck_reports_an_add_scatter_into_elements_never_written(make_kernels):
    """An atomic='add' scatter reads what it adds to, as tstore(atomic='add') does: into a table
    the host never wrote, initcheck reports its first row's first element (row 3: element 24);
    after a memcpy of zeros the same launch is clean."""
    k = make_kernels(ADDS.format(atomic="'add'")).k
    s, idx = np.ones((2, 8), np.float32), np.array([3, 0], np.int32)
    with pytest.raises(pto.UninitializedReadError, match=r"MSCATTER at line \d+ .* \(atomic='add'\) adds to "
                                                         r"T\b.*?\[24\], which was never written"):
        pto.launch(k, grid=(1,), args=(pto.alloc_tensor(32 * 4, pto.float32), tensor(s), tensor(idx)), check="init")
        pto.sync()
    pto.launch(k, grid=(1,), args=(tensor(np.zeros(32, np.float32)), tensor(s), tensor(idx)), check="init")
    pto.sync()


INIT = """
@pto.kernel
def k(T, X, I, O):
    with pto.vector():
        if pto.get_subblock_id() == 0:
            one = pto.alloc_tile(1, 8, pto.float32)
            idx = pto.alloc_tile(1, 8, pto.int32, valid=(1, 2))
            dst = pto.alloc_tile(2, 8, pto.float32)
            pto.tload(one, X)
            pto.tstore(T + 3 * 8, one)
            pto.tload(idx, I)
            pto.mgather(dst, T, idx, 4, coalesce='{co}', oob='{oob}')
            pto.tstore(O, dst)
"""


@pytest.mark.parametrize("co, oob, clean, indices, unwritten", [
    ("row", "undefined", [3, 3], [2, 3], 16),
    ("row", "zero", [3, 9], [1, 9], 8),          # 9 is past the 4 rows: dropped, nothing read
    ("row", "clamp", [3, 9], [2, 9], 16),        # 9 reads row 3
    ("row", "wrap", [3, 7], [3, 9], 8),          # 7 reads row 7 % 4 = 3, 9 row 1: element 8 first
    ("elem", "wrap", [31, 56], [31, 40], 8),     # 56 reads element 56 % 32 = 24, 40 element 8
])
def test_initcheck_reports_a_gather_of_elements_never_written(make_kernels, co, oob, clean, indices, unwritten):
    """T (4 rows of 8, 32 elements) is never written by the host; the kernel stores row 3
    (elements 24..31), then MGATHER reads the rows (coalesce='row', size 4, into 2 x 8) or the
    elements (coalesce='elem', size 32, into 1 x 2) the indices name after the oob policy. With
    the indices `clean` it reads only row 3 (or nothing: a dropped index), and the launch is
    clean, of races too (MGatherRowImpl's PtoSetWaitFlag<PIPE_MTE3, PIPE_MTE2> orders the TSTORE
    before it); with `indices` it reads an element never written, an UninitializedReadError
    naming T's first such element in the order the gather reads them, as a TLOAD's read is."""
    kernel = INIT.format(co=co, oob=oob)
    if co == "elem":
        kernel = kernel.replace("dst = pto.alloc_tile(2, 8, pto.float32)",
                                "dst = pto.alloc_tile(1, 8, pto.float32, valid=(1, 2))").replace(
            "pto.mgather(dst, T, idx, 4", "pto.mgather(dst, T, idx, 32")
    k = make_kernels(kernel).k
    for idx in (clean, indices):
        args = (pto.alloc_tensor(32 * 4, pto.float32), tensor(np.ones(8, np.float32)),
                tensor(np.array(idx, np.int32)), tensor(np.zeros(16, np.float32)))
        if idx is clean:
            pto.launch(k, grid=(1,), args=args, check=("init", "race"))
            pto.sync()
            continue
        with pytest.raises(pto.UninitializedReadError, match=rf"MGATHER(_ELEM)? at line \d+ .* reads "
                                                             rf"T\b.*?\[{unwritten}\], which was never written"):
            pto.launch(k, grid=(1,), args=args, check="init")
            pto.sync()


@pytest.mark.parametrize("check", ["race", "init"])
def test_values_off_refuses_racecheck_and_initcheck_of_an_indexed_transfer(make_kernels, check):
    """values=False computes no tile values, so no index tile holds the indices that name
    MGATHER's and MSCATTER's GM elements: racecheck and initcheck could not see them, and the
    launch is refused with a LaunchError at the instruction's line; without check= it is timed."""
    k = make_kernels(INIT.format(co="row", oob="clamp")).k
    args = (tensor(np.zeros(32, np.float32)), tensor(np.ones(8, np.float32)),
            tensor(np.array([3, 0], np.int32)), tensor(np.zeros(16, np.float32)))
    with pytest.raises(pto.LaunchError, match=rf"values=False with check=\['{check}check'\]: MGATHER at line "
                                              r"\d+ of kernel 'k' reads or writes the GM elements its index tile"):
        pto.launch(k, grid=(1,), args=args, check=check, values=False)
    pto.launch(k, grid=(1,), args=args, values=False)
    pto.sync()
