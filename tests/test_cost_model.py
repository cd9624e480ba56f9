"""The default machine's AI-core costs against the public models they come from: the rows of
shared/reference/pto-isa-real.md section 5.4, each a tiny kernel whose op's cycles must be
within 2% of the cited formula, computed here from that formula:

- vector ops: pto-isa formula_params.csv, cycles = round(slope * rows * cols + bias);
- TMATMUL: hw-native-sys/pypto L0CostModel, 21 + ceil(m/16) ceil(k/16) ceil(n/16) (fp16);
- TLOAD 32 KiB GM -> UB: inside the spread of the public models (Hill fit 442, flat table 559
  + latency, pypto COPY_IN 1748);
and the CCE mock's head/tail rules for ops without a formula row."""
import pytest

import pypto_sim as pto

FORMULA = {   # (op, rows, cols): (slope, bias), float32, from formula_params.csv
    ("TROWSUM", 64, 64): (0.1094, 44), ("TROWEXPAND", 64, 64): (0.2187, 37),
    ("TROWSUM", 128, 8): (0.875, 58), ("TMUL", 128, 32): (0.0625, 43),
    ("TMUL", 64, 64): (0.0313, 26), ("TEXP", 64, 64): (0.0314, 30.1), ("TMULS", 64, 64): (0.0156, 26),
    ("TCOLSUM", 64, 64): (0.3047, 15),                   # beyond section 5.4: a column reduction
}

KERNEL = '''
@pto.kernel(sync="manual")
def k(A, C):
    with pto.vector():
        big = pto.alloc_tile({rows}, {cols}, pto.float32, loc=pto.Vec)
        other = pto.alloc_tile({rows}, {cols}, pto.float32, loc=pto.Vec)
        col = pto.alloc_tile({col_rows}, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        row = pto.alloc_tile(1, {cols}, pto.float32, loc=pto.Vec)
        mask = pto.alloc_tile({rows}, 32, pto.uint8, loc=pto.Vec)
        irow = pto.alloc_tile(1, {cols}, pto.int32, loc=pto.Vec)
        {op}
'''
CALLS = {"TROWSUM": "pto.trowsum(col, big)", "TROWMAX": "pto.trowmax(col, big)", "TROWEXPAND": "pto.trowexpand(big, col)",
         "TMUL": "pto.tmul(big, big, other)", "TEXP": "pto.texp(big, big)",
         "TMULS": "pto.tmuls(big, big, 2.0)", "TCOLSUM": "pto.tcolsum(row, big)",
         "TAXPY": "pto.taxpy(big, other, 2.0)", "TEXPANDS": "pto.texpands(big, 1.0)",
         "TREM": "pto.trem(big, big, other)", "TMULADDDST": "pto.tmuladddst(big, big, other)",
         "TCMP": 'pto.tcmp(mask, big, other, mode="ge")', "TSEL": "pto.tsel(big, mask, big, other)",
         "TTRI": "pto.ttri(big, 0)", "TCOLEXPAND": "pto.tcolexpand(big, row)",
         "TFILLPAD": 'pto.tfillpad(big, other, pad="min")', "TCOLARGMAX": "pto.tcolargmax(irow, big)"}


def cycles_of(make_kernels, source, name, unit):
    """Cycles of the first `name` on unit (0 the AIC, 1 the first AIV) in kernel k(A, C)."""
    mod = make_kernels(source)
    a = pto.alloc_tensor(4096)
    prof = pto.profile(mod.k, grid=(1,), args=(a, a))
    return next(e.end - e.start for e in prof.timeline if e.inst == name and e.warp == unit)


def op_cycles(make_kernels, name, rows, cols):
    source = KERNEL.format(rows=rows, cols=cols, col_rows=max(rows, 8), op=CALLS[name])
    return cycles_of(make_kernels, source, name, 1)


@pytest.mark.parametrize("name, rows, cols", list(FORMULA))
def test_vector_ops_follow_pto_isas_formula_table(make_kernels, name, rows, cols):
    slope, bias = FORMULA[(name, rows, cols)]
    want = round(slope * rows * cols + bias)
    got = op_cycles(make_kernels, name, rows, cols)
    assert abs(got - want) <= 0.02 * want, (got, want)


def test_the_cube_head_is_the_device_calibrated_21(make_kernels):
    source = '''
@pto.kernel
def k(A, C):
    with pto.cube():
        a = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        b = pto.alloc_tile(16, 16, pto.float16, loc=pto.Right)
        c = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tmatmul(c, a, b)
'''
    assert cycles_of(make_kernels, source, "TMATMUL", 0) == 21 + 1
    assert pto.machine().latency("MMA") == 21


def test_tgemv_pays_one_m_tile_as_the_mad_it_issues(make_kernels):
    """TGEMV is TMatmul.hpp's mad with m = 1: 21 + ceil(1/16) ceil(64/16) ceil(32/16) = 29 (fp16)."""
    source = '''
@pto.kernel
def k(A, C):
    with pto.cube():
        a = pto.alloc_tile(16, 64, pto.float16, loc=pto.Left, valid=(1, 64))
        b = pto.alloc_tile(64, 32, pto.float16, loc=pto.Right)
        c = pto.alloc_tile(16, 32, pto.float32, loc=pto.Acc, valid=(1, 32))
        pto.tgemv(c, a, b)
'''
    assert cycles_of(make_kernels, source, "TGEMV", 0) == 21 + 1 * 4 * 2


def test_a_32_kib_load_into_ub_lies_within_the_public_models_spread(make_kernels):
    mod = make_kernels('''
@pto.kernel
def k(A, C):
    with pto.vector():
        t = pto.alloc_tile(64, 128, pto.float32, loc=pto.Vec)
        pto.tload(t, A + pto.get_subblock_id() * 8192)
''')
    a = pto.alloc_tensor(65536)
    prof = pto.profile(mod.k, grid=(1,), args=(a, a))
    loads = [e.end - e.start for e in prof.timeline if e.inst == "TLOAD"]
    assert all(442 <= c <= 1748 for c in loads), loads


@pytest.mark.parametrize("name, head, slope", [
    ("TAXPY", 6, 2),          # vaxpy: EstimateLinearCycles' defaults (6, 2, 0)
    ("TEXPANDS", 11, 1),      # vector_dup (11, 1, 13)
    ("TREM", 11, 20),         # TRem.hpp's sequence (vdiv, conversions, vmul, vsub, cmp, sel): slopes added
    ("TMULADDDST", 10, 2),    # vmla, priced as vmul (10, 2, 15)
    ("TCMP", 14, 2),          # vcmpv_ge (14, 2, 22)
    ("TSEL", 13, 2),          # vsel (13, 2, 14)
    ("TTRI", 11, 2),          # vector_dup (11, 1, 13), twice over each row
    ("TFILLPAD", 11, 1),      # vcopy of the valid rows + vector_dup of the pad, each (11, 1, 13)
    ("TCOLARGMAX", 11, 69),   # TColArgMax.hpp's vadds, vcmp_ge, vsel, vmax between barriers, a row
])
def test_ops_without_a_formula_row_pay_the_cce_mocks_head_and_slope(make_kernels, name, head, slope):
    """16 x 64 float32 = 16 repeats of 256 bytes: the head (the V pipe is idle) + slope x 16;
    the tail waits for a sync, and none comes."""
    assert op_cycles(make_kernels, name, 16, 64) == head + slope * 16


@pytest.mark.parametrize("name", ["TROWSUM", "TROWMAX"])
def test_a_row_reduction_without_a_formula_row_pays_its_passes_and_one_reducing_repeat_a_row(
        make_kernels, name):
    """A2/A3 TRowReduceOps.hpp reduces a row of n 256-byte repeats with n - 1 binary passes
    (vadd / vmax, one repeat a row each) and then one vcadd / vcmax repeat a row. 16 x 256
    float32 (no formula row at 256 columns): 4 repeats a row, 64 in all. Default table:
    head 14 (V idle) + per_repeat 2 x 64 + per_row 5 x 16 = 14 + 128 + 80 = 222 (the tail
    waits for a sync). The passes cost 2 x (64 - 16) = 96 and the reducing repeats 7 x 16 =
    112, the same 208 cycles after the head."""
    assert op_cycles(make_kernels, name, 16, 256) == 14 + 2 * 64 + 5 * 16


@pytest.mark.parametrize("name, cycles, tail", [
    # vcgadd (14, 1, 24), vadd (10, 2, 14):
    # 14 + 128 + (24 + 1 + 10) + 2 x 8 + (14 + 1 + 10) + 2 x 4 + (14 + 1 + 14) + 4 = 259
    ("TROWSUM", 259, 24),
    # vcgmax (14, 1, 17), vmax (10, 2, 14):
    # 14 + 128 + (17 + 1 + 10) + 2 x 8 + (14 + 1 + 10) + 2 x 4 + (14 + 1 + 14) + 4 = 252
    ("TROWMAX", 252, 17),
])
def test_a_32x256_float32_row_reduction_into_a_dn_column_runs_pto_isas_fast_tree(
        make_kernels, name, cycles, tail):
    """A2/A3 TryOptimizeFP32Reduce (TRowReduceOps.hpp) sends a whole-valid 32 x 256 float32
    source into a DN column through ReduceOptFP32_32x256: a group reduction of 32 x 4 = 128
    repeats ([32, 256] -> [32, 32]), binary passes of 8 and 4 repeats ([32, 16], [32, 8]) and
    a group reduction of 4 repeats ([32, 1]), a pipe_barrier(PIPE_V) after each. pto-isa's CCE
    mock charges a step head (V empty: the first step, and every step after a barrier) +
    slope x repeats; a barrier 1 cycle plus the tail of the step before it. The op's cycles:
    the first head, the repeats and the three inner barriers; the last tail waits for the
    next sync on V (here the pipe_barrier before the TADD, which then starts tail cycles
    after the reduction ends). The generic path would cost 14 + 2 x 128 + 5 x 32 = 430."""
    mod = make_kernels(f'''
@pto.kernel
def k(A, C):
    with pto.vector():
        big = pto.alloc_tile(32, 256, pto.float32, loc=pto.Vec)
        col = pto.alloc_tile(32, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        {CALLS[name]}
        pto.pipe_barrier(pto.PIPE_V)
        pto.tadd(x, x, x)
''')
    a = pto.alloc_tensor(4096)
    prof = pto.profile(mod.k, grid=(1,), args=(a, a))
    red = next(e for e in prof.timeline if e.inst == name and e.warp == 1)
    add = next(e for e in prof.timeline if e.inst == "TADD" and e.warp == 1)
    assert red.end - red.start == cycles
    assert add.start == red.end + tail


@pytest.mark.parametrize("dst, rows, cycles", [
    # an ND (RowMajor) dst: TryOptimizeFP32Reduce asks for a DN column; 128 repeats, 32 rows
    ("pto.alloc_tile(32, 8, pto.float32, loc=pto.Vec)", None, 14 + 2 * 128 + 5 * 32),
    # 16 valid rows of the 32 x 256 tile (ValidRow != Rows): 64 repeats, 16 rows
    ("pto.alloc_tile(32, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)", 16, 14 + 2 * 64 + 5 * 16),
])
def test_a_32x256_row_sum_that_is_not_whole_valid_into_a_dn_column_takes_the_generic_path(
        make_kernels, dst, rows, cycles):
    """TryOptimizeFP32Reduce's shape test is on the tile types: dst DN with ValidCol 1, src
    Rows = ValidRow = 32 and Cols = ValidCol = 256. Otherwise TRowReduceInstr runs: head 14 +
    per_repeat 2 a 256-byte repeat + per_row 5 a row (as the 16 x 256 test above)."""
    call = "pto.trowsum(col, big)" if rows is None else f"pto.trowsum(col, big, {rows}, 256)"
    source = f'''
@pto.kernel
def k(A, C):
    with pto.vector():
        big = pto.alloc_tile(32, 256, pto.float32, loc=pto.Vec)
        col = {dst}
        {call}
'''
    assert cycles_of(make_kernels, source, "TROWSUM", 1) == cycles


def test_tcolexpand_is_one_ub_to_ub_copy_a_row(make_kernels):
    """A2/A3 TCOLEXPAND copies src's row into each of dst's rows with copy_ubuf_to_ubuf
    (TColExpand.hpp), which the CCE mock prices at UB_TO_UB 1024 GiB/s = 594 B/cycle, no head
    or tail: 16 rows x 256 B at 0.43 cycles per 256 B = ceil(6.9) = 7 cycles."""
    assert op_cycles(make_kernels, "TCOLEXPAND", 16, 64) == 7


def test_ttrans_pays_the_vnchwconv_head_and_slope_over_the_source(make_kernels):
    """TTRANS of a 16 x 64 float32 tile: 16 repeats of 256 bytes at scatter_vnchwconv's
    defaults in the CCE mock, head 6 + 2 x 16 = 38 cycles."""
    source = '''
@pto.kernel
def k(A, C):
    with pto.vector():
        s = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        d = pto.alloc_tile(64, 16, pto.float32, loc=pto.Vec)
        pto.ttrans(d, s)
'''
    assert cycles_of(make_kernels, source, "TTRANS", 1) == 6 + 2 * 16


def test_without_a_formula_row_the_head_is_paid_when_v_is_idle_and_the_tail_at_a_sync(make_kernels):
    """TADD has no formula row: 64 x 64 float32 is 64 repeats of 256 B at 2.11 cycles = 136;
    the first op pays the head 10 (V idle), the second, queued behind it, does not; the
    set_flag after them fires after the tail 14 (CCE mock vadd (10, 2, 14))."""
    mod = make_kernels('''
@pto.kernel(sync="manual")
def k(A, C):
    with pto.vector():
        x = pto.alloc_tile(64, 64, pto.float32, loc=pto.Vec)
        pto.tadd(x, x, x)
        pto.tadd(x, x, x)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, 0)
        pto.tstore(C, x)
''')
    a = pto.alloc_tensor(65536)
    prof = pto.profile(mod.k, grid=(1,), args=(a, a))
    adds = [e for e in prof.timeline if e.inst == "TADD" and e.warp == 1]
    store = next(e for e in prof.timeline if e.inst == "TSTORE" and e.warp == 1)
    assert [e.end - e.start for e in adds] == [10 + 136, 136]
    assert store.start == adds[1].end + 14


def test_a_sync_on_v_pays_the_tail_and_the_next_op_pays_the_head_again(make_kernels):
    """pto-isa's FlushPendingTail charges the tail and empties the V queue, so the op after a
    pipe_barrier(PIPE_V) starts a new stream: 16 x 64 float32 TADDs (16 repeats x 2.11 = 34
    cycles) each cost head 10 + 34, start 14 (the tail) after the last one ended, and the
    kernel ends with the last tail paid."""
    mod = make_kernels('''
@pto.kernel
def k(A, C):
    with pto.vector():
        x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.tadd(x, x, x)
        pto.pipe_barrier(pto.PIPE_V)
        pto.tadd(x, x, x)
        pto.pipe_barrier(pto.PIPE_V)
''')
    a = pto.alloc_tensor(65536)
    prof = pto.profile(mod.k, grid=(1,), args=(a, a))
    adds = [e for e in prof.timeline if e.inst == "TADD" and e.warp == 1]
    assert [e.end - e.start for e in adds] == [10 + 34, 10 + 34]
    assert adds[1].start == adds[0].end + 14
    assert prof.total_cycles >= adds[1].end + 14


def test_an_op_that_waits_for_data_finds_v_empty_and_pays_the_head(make_kernels):
    """The second TADD reads a tile a TLOAD writes after the first TADD: it starts when the
    load completes, long after V drained, so it pays the head 10 again (no sync between)."""
    mod = make_kernels('''
@pto.kernel
def k(A, C):
    with pto.vector():
        x = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        y = pto.alloc_tile(16, 64, pto.float32, loc=pto.Vec)
        pto.tadd(x, x, x)
        pto.tload(y, A)
        pto.tadd(x, y, y)
''')
    a = pto.alloc_tensor(65536)
    prof = pto.profile(mod.k, grid=(1,), args=(a, a))
    adds = [e for e in prof.timeline if e.inst == "TADD" and e.warp == 1]
    load = next(e for e in prof.timeline if e.inst == "TLOAD" and e.warp == 1)
    assert adds[1].start == load.end > adds[0].end
    assert [e.end - e.start for e in adds] == [10 + 34, 10 + 34]


def test_the_mock_table_prices_the_same_ops_by_pto_isas_cce_mock(make_kernels):
    """latency_tables/ascend910b-mock.toml: no formula rows, so TROWSUM 64 x 64 float32 (one
    repeat a row: only the vcadd) is head 14 + 64 repeats x vadd's 2 + 64 rows x (vcadd's 7 -
    2) = 462 (vcadd (14, 7, 32)) where the default's formula gives 492; 16 x 256 (4 repeats a
    row: 3 vadd passes, then the vcadd) is 14 + 64 x 2 + 16 x 5 = 222 and TROWMAX there 10
    (vmax's head) + 64 x 2 (vmax passes and vcmax, both 2 a repeat) = 138; 32 x 256 runs the
    fast tree, 259 as on the default table; TMATMUL 16x16x16 fp16 is 6 + 1."""
    pto.use_machine("ascend910b-mock")
    assert op_cycles(make_kernels, "TROWSUM", 64, 64) == 14 + 64 * 2 + 64 * 5
    assert op_cycles(make_kernels, "TROWSUM", 16, 256) == 14 + 64 * 2 + 16 * 5
    assert op_cycles(make_kernels, "TROWMAX", 16, 256) == 10 + 64 * 2
    assert op_cycles(make_kernels, "TROWSUM", 32, 256) == 259
    assert pto.machine().latency("TMATMUL") == 6
    from pypto_sim.cli import machine_diff
    from pypto_sim.timing.machine import resolve_machine
    text = machine_diff(resolve_machine("ascend910b"), resolve_machine("ascend910b-mock"))
    assert "MMA.latency" in text and "formula TROWSUM float32 cols=64" in text
