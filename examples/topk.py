"""pto-isa's A2/A3 topk kernel (kernels/manual/a2a3/topk/topk_kernel.cpp), ported as its source
writes it: 48 vector cores (24 AI cores x 2 AIVs, get_block_idx = block * 2 + subblock), each
taking rows / 48 rows of [rows, 1024] float32 or float16 (GM rows 1280 apart), two rows a step
(SINGLE_LOOP_ROW), two steps an iteration on double buffers (cur 0 / 1, flag ids = cur), and per
step: TLOAD -> TSORT32 of each row (32-element runs into 8-byte (value, index) structures: two
floats or four halves, TYPE_COEF) -> TMRGSORT with blockLen 64 and 256 (128 and 512 halves),
each followed by a TMOV back -> the two-list TMRGSORT of the tail (FillMrgArray) -> TMOV of the
first topk structures -> TGATHER of the values (P0101 of floats, P0001 of halves) and P1010 of
the indices (for half through copyTile, a uint32 view of the row's halves:
pto.treshape(..., dtype=pto.int32)) -> TSTORE of each. topk is 1000 for float and 1008 for half,
as the README measured them. Flags as the source (sync="manual": nothing else orders the pipes):
V->MTE2 per buffer (pre-set twice), MTE2->V, V->MTE3 ids cur and cur + 2, and pipe_barrier(PIPE_V)
where it has them. check="race" finds no race in one iteration (4 rows a core: 192 rows); from two
on (rows >= 384, the published 4800 included) it reports the source's own: ProcessSingleRow's
TGATHERs into dTile[cur] / iTile[cur] wait for nothing after the previous iteration's TSTOREs of
them (MTE3 reads, then V writes; no MTE3 -> V flag in topk_kernel.cpp), a hazard the hardware
hides behind the sorts between them. The port keeps the source's flags.

Differences forced by the simulator, none of which changes a byte moved or an instruction run:
tiles are placed by the compiler (no TASSIGN addresses); the gathered index tiles are int32
(pto-isa's are uint32; the indices are < 1024, the same bits); the value tile's rows are 1024 apart instead of
topk, because vreducev2 writes all 1024 values the pattern selects from a row of structures
while the source's dTile rows are topk long (the extra values land in the next row, which its
own gather then rewrites, or past the tile); the TSTOREs take the topk-wide window.

Run:  python examples/topk.py [rows] [float32|float16]      (rows a multiple of 192; 4800 as published)
"""
import functools
import sys

import numpy as np

import pypto_sim as pto

BLOCK_DIM = 48            # vector cores (launchTopk's blockDim)
SINGLE_LOOP_ROW = 2
VALID_COL = 1024          # gShape4
COLS = 1280               # gWholeShape4: GM row pitch
TOPK_OF = {"float32": 1000, "float16": 1008}      # the README's topk of each type
TOPK = TOPK_OF["float32"]


def block_lens(valid_col, first=64):
    """MrgsortSingleRow's single-list merges: blockLen 64 (x TYPE_COEF), x4 while blockLen * 4
    <= valid_col, and the blockLen it ends with."""
    out, b = [], first
    while b * 4 <= valid_col:
        out.append(b)
        b *= 4
    return out, b


def fill_mrg_array(cols, block_len):
    """FillMrgArray<Cols>(blockLen): the lengths of the sorted runs left for SortTailBlock."""
    out, inner, i = [], cols, block_len
    while i >= 64:
        count = inner // i
        out += [i] * count
        inner -= count * i
        i //= 4
    return out


@functools.lru_cache(maxsize=None)
def kernel_for(dtype="float32"):
    """runTOPK<T> for T = float32 or float16 (the source's TYPE_COEF = 4 / sizeof(T): a row's
    (value, index) structures take 2 x 1024 floats or 4 x 1024 halves), compiled once per
    process; called with (OUT, IDX, SRC, IN_IDX, valid_row)."""
    dt = getattr(pto, dtype)
    coef = 4 // dt.itemsize                                  # TYPE_COEF
    topk_n = TOPK_OF[dtype]
    dst_cols = VALID_COL * 2 * coef                          # dstCols: one row of structures
    dtopk = topk_n * 2 * coef                                # MrgsortSingleRow's dtopk, in words
    merges, last_block = block_lens(dst_cols, 64 * coef)
    tail = fill_mrg_array(dst_cols, last_block)
    assert len(merges) == 2 and len(tail) == 2, "the port below unrolls two merges and one tail merge"
    (merge0, merge1), (src1_at, _) = merges, tail
    src0_len, src1_len = min(tail[0], dtopk), min(tail[1], dtopk)   # tmpMrgSortedLen, tmpMrgArray
    value_pattern = "P0101" if coef == 1 else "P0001"        # ExtractDataOrIndex's MaskPattern

    @pto.kernel
    def sort_row(sort32, src_t, idx_t, r):
        """SortEachGroup, one row: TSORT32 of src row r into sort32 row r."""
        d = pto.tsubview(sort32, r, 0, 1, dst_cols)
        s = pto.tsubview(src_t, r, 0, 1, VALID_COL)
        pto.tsort32(d, s, idx_t)
        pto.pipe_barrier(pto.PIPE_V)

    @pto.kernel
    def merge_row(mrg, sort32, tmp, r):
        """MrgsortSingleRow on sort32 row r: the two single-list merges (each TMOV'd back), the
        tail's two-list merge in place, and TMOV of the first topk structures into mrg row r."""
        row = pto.tsubview(sort32, r, 0, 1, dst_cols)
        pto.tmrgsort(tmp, row, merge0)
        pto.pipe_barrier(pto.PIPE_V)
        pto.tmov(row, tmp)
        pto.pipe_barrier(pto.PIPE_V)
        pto.tmrgsort(tmp, row, merge1)
        pto.pipe_barrier(pto.PIPE_V)
        pto.tmov(row, tmp)
        pto.pipe_barrier(pto.PIPE_V)
        src0 = pto.tsubview(sort32, r, 0, 1, src0_len)
        src1 = pto.tsubview(sort32, r, src1_at, 1, src1_len)
        cur = pto.tsubview(sort32, r, 0, 1, src0_len + src1_len)
        pto.tmrgsort(cur, src0, src1=src1, tmp=tmp)
        pto.pipe_barrier(pto.PIPE_V)
        first = pto.tsubview(sort32, r, 0, 1, dtopk)
        dst = pto.tsubview(mrg, r, 0, 1, dtopk)
        pto.pipe_barrier(pto.PIPE_V)
        pto.tmov(dst, first)

    @pto.kernel
    def gather_values(d_all, mrg, r):
        """ExtractDataOrIndex<isIndex = false>, one row: TGATHER of the values (P0101 of the
        float32 words, P0001 of the halves) of the whole row of structures."""
        pto.tgather(pto.tsubview(d_all, r, 0, 1, VALID_COL), pto.tsubview(mrg, r, 0, 1, dst_cols), value_pattern)

    if coef == 1:
        @pto.kernel
        def gather_indices(i_t, mrg, r):
            """ExtractDataOrIndex<isIndex = true>, one row: TGATHER P1010 of the first topk
            (value, index) pairs' words."""
            pto.tgather(pto.tsubview(i_t, r, 0, 1, topk_n), pto.tsubview(mrg, r, 0, 1, dtopk), "P1010")
    else:
        @pto.kernel
        def gather_indices(i_t, mrg, r):
            """ExtractDataOrIndex<isIndex = true> for half, one row: TGATHER P1010 of copyTile,
            the uint32 view of the first topk structures' halves (two 32-bit words each)."""
            halves = pto.tsubview(mrg, r, 0, 1, dtopk)
            pto.tgather(pto.tsubview(i_t, r, 0, 1, topk_n), pto.treshape(halves, 1, dtopk // 2, dtype=pto.int32),
                        "P1010")

    @pto.kernel
    def process_rows(OUT, IDX, SRC, step, cur, src_t, idx_t, sort32, mrg, tmp, d_all, i_t):
        """ProcessSingleRow(cur): rows step * 2 .. + 1 of this core, on buffer cur."""
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, cur)
        pto.tload(src_t, SRC + step * SINGLE_LOOP_ROW * COLS, stride=COLS)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_V, cur)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_V, cur)
        sort_row(sort32, src_t, idx_t, 0)
        sort_row(sort32, src_t, idx_t, 1)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, cur)
        pto.pipe_barrier(pto.PIPE_V)
        merge_row(mrg, sort32, tmp, 0)
        merge_row(mrg, sort32, tmp, 1)
        pto.pipe_barrier(pto.PIPE_V)
        gather_values(d_all, mrg, 0)
        gather_values(d_all, mrg, 1)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, cur)
        pto.pipe_barrier(pto.PIPE_V)
        gather_indices(i_t, mrg, 0)
        gather_indices(i_t, mrg, 1)
        pto.set_flag(pto.PIPE_V, pto.PIPE_MTE3, cur + 2)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, cur)
        pto.tstore(OUT + step * SINGLE_LOOP_ROW * topk_n, pto.tsubview(d_all, 0, 0, SINGLE_LOOP_ROW, topk_n),
                   stride=topk_n)
        pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE3, cur + 2)
        pto.tstore(IDX + step * SINGLE_LOOP_ROW * topk_n, i_t, stride=topk_n)

    @pto.kernel(sync="manual")
    def topk(OUT, IDX, SRC, IN_IDX, valid_row):
        """runTOPK on each of the 48 vector cores: valid_row = rows / 48 rows of SRC (pitch COLS)."""
        with pto.vector():
            core = pto.get_block_id() * 2 + pto.get_subblock_id()
            src = SRC + core * valid_row * COLS
            out = OUT + core * valid_row * topk_n
            index = IDX + core * valid_row * topk_n
            idx_t = pto.alloc_tile(1, VALID_COL, pto.uint32, loc=pto.Vec)
            sort0 = pto.alloc_tile(SINGLE_LOOP_ROW, dst_cols, dt, loc=pto.Vec)
            sort1 = pto.alloc_tile(SINGLE_LOOP_ROW, dst_cols, dt, loc=pto.Vec)
            mrg0 = pto.alloc_tile(SINGLE_LOOP_ROW, dst_cols, dt, loc=pto.Vec)
            mrg1 = pto.alloc_tile(SINGLE_LOOP_ROW, dst_cols, dt, loc=pto.Vec)
            tmp0 = pto.alloc_tile(1, dst_cols, dt, loc=pto.Vec)                # tmpAddr
            tmp1 = pto.alloc_tile(1, dst_cols, dt, loc=pto.Vec)                # nextTmpAddr
            d0 = pto.alloc_tile(SINGLE_LOOP_ROW, VALID_COL, dt, loc=pto.Vec)
            d1 = pto.alloc_tile(SINGLE_LOOP_ROW, VALID_COL, dt, loc=pto.Vec)
            i0 = pto.alloc_tile(SINGLE_LOOP_ROW, topk_n, pto.int32, loc=pto.Vec)
            i1 = pto.alloc_tile(SINGLE_LOOP_ROW, topk_n, pto.int32, loc=pto.Vec)
            s0 = pto.alloc_tile(SINGLE_LOOP_ROW, VALID_COL, dt, loc=pto.Vec)
            s1 = pto.alloc_tile(SINGLE_LOOP_ROW, VALID_COL, dt, loc=pto.Vec)
            pto.tload(idx_t, IN_IDX)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
            pto.set_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)
            for i in range(0, valid_row // SINGLE_LOOP_ROW, 2):
                process_rows(out, index, src, i, 0, s0, idx_t, sort0, mrg0, tmp0, d0, i0)
                process_rows(out, index, src, i + 1, 1, s1, idx_t, sort1, mrg1, tmp1, d1, i1)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 0)
            pto.wait_flag(pto.PIPE_V, pto.PIPE_MTE2, 1)

    return topk


topk = kernel_for("float32")


def golden(rows, seed=19, dtype="float32"):
    """pto-isa's scripts/gen_data.py logic: row i uniform in [i, i + 1024) as dtype, rows of
    COLS (zero-padded), and the top topk of each row by np.lexsort((index, -value))."""
    np_dt = np.dtype(dtype)
    k = TOPK_OF[dtype]
    rng = np.random.RandomState(seed)
    data = np.zeros((rows, COLS), np_dt)
    for i in range(rows):
        data[i, :VALID_COL] = rng.uniform(i, i + VALID_COL, size=VALID_COL).astype(np_dt)
    idx = np.arange(VALID_COL).astype(np.uint32)
    values = np.zeros((rows, k), np_dt)
    indices = np.zeros((rows, k), np.int32)
    for i in range(rows):
        row = data[i, :VALID_COL]
        order = np.lexsort((idx, -row))[:k]
        values[i], indices[i] = row[order], order
    return data, idx, values, indices


def run(rows=4800, profile=True, values=True, dtype="float32"):
    """Launch topk on rows x 1024 of dtype (gen_data's input) over 24 AI cores; returns (values,
    indices, profile or None)."""
    if rows < 1 or rows % (BLOCK_DIM * SINGLE_LOOP_ROW * 2):
        raise pto.ArgumentError(f"rows must be a multiple of {BLOCK_DIM * SINGLE_LOOP_ROW * 2} (Check<>'s "
                                f"validRow % (SINGLE_LOOP_ROW * 2) == 0 on {BLOCK_DIM} cores), got {rows}",
                                kernel="topk", hint=f"give a positive multiple of "
                                f"{BLOCK_DIM * SINGLE_LOOP_ROW * 2} rows")
    data, idx, _, _ = golden(rows, dtype=dtype)
    dt, k = getattr(pto, dtype), TOPK_OF[dtype]
    src = pto.alloc_tensor(data.nbytes, dt)
    pto.memcpy_h2d(src, data)
    in_idx = pto.alloc_tensor(idx.nbytes, pto.uint32)
    pto.memcpy_h2d(in_idx, idx)
    out = pto.alloc_tensor(rows * k * dt.itemsize, dt)
    index = pto.alloc_tensor(rows * k * 4, pto.int32)
    args = (out, index, src, in_idx, rows // BLOCK_DIM)
    kernel = kernel_for(dtype)
    prof = None
    if profile:
        prof = pto.profile(kernel, grid=(BLOCK_DIM // 2,), args=args, values=values)
    else:
        pto.launch(kernel, grid=(BLOCK_DIM // 2,), args=args)
        pto.sync()
    got_v = np.empty((rows, k), data.dtype)
    got_i = np.empty((rows, k), np.int32)
    pto.memcpy_d2h(got_v, out)
    pto.memcpy_d2h(got_i, index)
    return got_v, got_i, prof


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4800
    dtype = sys.argv[2] if len(sys.argv) > 2 else "float32"
    v, i, prof = run(n, dtype=dtype)
    _, _, gv, gi = golden(n, dtype=dtype)
    print(f"topk {n} x {VALID_COL} {dtype} -> {TOPK_OF[dtype]}: values "
          f"{'match' if np.array_equal(v, gv) else 'DIFFER'}, indices {'match' if np.array_equal(i, gi) else 'DIFFER'} "
          f"(pto-isa gen_data golden); {prof.total_cycles} cycles")
